/* Thread-local error detail behind cairn_errmsg() and cairn_errchange(). */
#ifndef CAIRN_UTIL_ERR_H
#define CAIRN_UTIL_ERR_H

#include "cairn.h"

#if defined(__GNUC__)
#define CAIRN_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define CAIRN_PRINTF(a, b)
#endif

/* Record code and a formatted message for this thread; returns code. */
int err_set(int code, const char *fmt, ...) CAIRN_PRINTF(2, 3);
/* Same, naming the change (index from 0) the error concerns. */
int err_change(int code, long change, const char *fmt, ...) CAIRN_PRINTF(3, 4);
/* Forget the thread's last error. */
void err_clear(void);
/*
 * 0 when the n reserved words r of what (an options struct given to fn)
 * are all zero; else CAIRN_EINVAL, with a message saying the caller asks
 * for options of a newer version. err_reserved counts the array's words.
 */
int err_reserved_n(const uint64_t *r, size_t n, const char *fn, const char *what);
#define err_reserved(r, fn, what) err_reserved_n((r), sizeof(r) / sizeof((r)[0]), (fn), (what))
/* Set the change index of the current error (keeps code and message). */
void err_set_index(long change);
/* Prefix the current message with text (e.g. "file.jsonl:12: "). */
void err_prefix(const char *fmt, ...) CAIRN_PRINTF(1, 2);
/* The code of the thread's last error (0 if none). */
int err_code(void);

#endif
