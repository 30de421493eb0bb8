/* Error codes, their names and messages, the thread-local error detail, and the version. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assert.h"
#include "err.h"

static _Thread_local struct {
	int code;
	long change;
	char msg[1024];
} last = {0, -1, ""};

const char *cairn_version(void)
{
	return CAIRN_VERSION_STRING;
}

int cairn_version_number(void)
{
	return CAIRN_VERSION_NUMBER;
}

const char *cairn_strerror(int rc)
{
	switch (rc) {
	case CAIRN_OK:
		return "success";
#define X(name, val, str, msg)                                                                     \
	case val:                                                                                  \
		return msg;
		CAIRN_ERRNO_MAP(X)
#undef X
	}
	return "unknown error";
}

const char *cairn_errname(int rc)
{
	switch (rc) {
	case CAIRN_OK:
		return "ok";
#define X(name, val, str, msg)                                                                     \
	case val:                                                                                  \
		return str;
		CAIRN_ERRNO_MAP(X)
#undef X
	}
	return "unknown_error";
}

const char *cairn_errmsg(void)
{
	return last.msg;
}

long cairn_errchange(void)
{
	return last.change;
}

static void err_vset(int code, long change, const char *fmt, va_list ap) CAIRN_PRINTF(3, 0);
static void err_vset(int code, long change, const char *fmt, va_list ap)
{
	last.code = code;
	last.change = change;
	if (fmt)
		vsnprintf(last.msg, sizeof(last.msg), fmt, ap);
	else
		snprintf(last.msg, sizeof(last.msg), "%s", cairn_strerror(code));
}

int err_set(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	err_vset(code, -1, fmt, ap);
	va_end(ap);
	return code;
}

int err_change(int code, long change, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	err_vset(code, change, fmt, ap);
	va_end(ap);
	return code;
}

void err_clear(void)
{
	last.code = 0;
	last.change = -1;
	last.msg[0] = '\0';
}

void err_set_index(long change)
{
	last.change = change;
}

int err_code(void)
{
	return last.code;
}

void err_prefix(const char *fmt, ...)
{
	char pre[512];
	size_t pn, mn = strlen(last.msg);
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(pre, sizeof(pre), fmt, ap);
	va_end(ap);
	if (n <= 0)
		return;
	pn = (size_t)n < sizeof(pre) ? (size_t)n : sizeof(pre) - 1;
	if (pn + mn >= sizeof(last.msg))
		mn = sizeof(last.msg) - 1 - pn;
	memmove(last.msg + pn, last.msg, mn);
	memcpy(last.msg, pre, pn);
	last.msg[pn + mn] = '\0';
}

int err_reserved_n(const uint64_t *r, size_t n, const char *fn, const char *what)
{
	for (size_t i = 0; i < n; i++)
		if (r[i])
			return err_set(CAIRN_EINVAL,
				       "%s: %s has options this version (%s) does not know (reserved "
				       "word %zu is not zero): zero-initialise it, or use the Cairn "
				       "the program was built for",
				       fn, what, CAIRN_VERSION_STRING, i);
	return 0;
}

#ifdef CAIRN_ASSERTS
_Noreturn void cr_assert_fail(const char *cond, const char *file, int line, const char *func)
{
	fprintf(stderr, "%s:%d: %s: assertion failed: %s\n", file, line, func, cond);
	fflush(stderr);
	abort();
}
#endif
