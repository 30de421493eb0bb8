/* JSON through jansson: strict loading, canonical compact output, field checks. */
#ifndef CAIRN_MODEL_JSON_H
#define CAIRN_MODEL_JSON_H

#include <jansson.h>

#include "util/buf.h"

/* Route jansson's allocations through the engine allocator (idempotent). */
void json_setup(void);
/*
 * Parse one JSON document (duplicate object keys rejected, at most `depth`
 * levels of nesting). On error returns NULL and records CAIRN_EJSON (or
 * CAIRN_ENOMEM) with the position.
 */
json_t *json_parse(const char *p, size_t n, const char *what);
/*
 * Canonical compact form: object keys sorted by bytes, no spaces, numbers in
 * their shortest form that reads back to the same double. Appends to b.
 */
void json_canon(const json_t *v, buf *b);
/* Append s as a JSON string literal (quoted, escaped). */
void json_quote(buf *b, const char *s, size_t n);
/*
 * Check that object o has only the listed member names (NULL-terminated).
 * On failure records CAIRN_EJSON-like code `code` naming the unknown member
 * and returns it.
 */
int json_only(const json_t *o, const char *const *allowed, int code, const char *what);
/* Maximum nesting accepted by json_parse. */
#define JSON_MAX_DEPTH 64

#endif
