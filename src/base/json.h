/*
 * JSON: our own reader and canonical writer.
 *
 * Import lines, values and schemas are read into a tree of jv nodes
 * allocated in an arena: no allocation per node, strings decoded once and
 * NUL-terminated, numbers parsed once. It replaced jansson after measurement
 * (docs/storage.md, "JSON"): jansson's parser alone took 39% of the
 * instructions of an import, about 23,000 per line, most of them in malloc.
 *
 * The reader is strict RFC 8259: one value, UTF-8 checked (escapes included,
 * surrogate pairs joined), duplicate object keys refused, at most
 * JSON_MAX_DEPTH levels of nesting. The canonical form, used for stored
 * values and for hashes, sorts object members by key bytes, has no spaces
 * and writes each number in the shortest form that reads back the same.
 */
#ifndef CAIRN_MODEL_JSON_H
#define CAIRN_MODEL_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/buf.h"

#define JSON_MAX_DEPTH 64

enum jv_type {
	JV_NULL = 1,
	JV_FALSE,
	JV_TRUE,
	JV_INT,	   /* an integer that fits int64 */
	JV_REAL,   /* any other number */
	JV_STRING,
	JV_ARRAY,
	JV_OBJECT,
};

typedef struct jv jv;
struct jv {
	uint8_t type;	  /* enum jv_type */
	uint32_t len;	  /* bytes of a string; items of an array or object */
	const char *key;  /* member name when the node is an object member (NUL-terminated) */
	uint32_t key_len;
	union {
		int64_t i;
		double d;
		const char *s; /* decoded, NUL-terminated (may hold NUL bytes: use len) */
		jv *items;     /* array elements or object members */
	} u;
};

/*
 * Parse p[0..n-1] (one JSON value) into a tree allocated in a. On error
 * returns NULL and records CAIRN_EJSON (with the byte offset), CAIRN_EUTF8
 * or CAIRN_ENOMEM, prefixed by `what`.
 */
jv *jv_parse(arena *a, const char *p, size_t n, const char *what);

/* Type tests that accept NULL (a missing member). */
static inline int jv_is(const jv *v, int type)
{
	return v && v->type == type;
}

static inline int jv_is_bool(const jv *v)
{
	return v && (v->type == JV_TRUE || v->type == JV_FALSE);
}

static inline int jv_is_number(const jv *v)
{
	return v && (v->type == JV_INT || v->type == JV_REAL);
}

static inline double jv_number(const jv *v)
{
	return v->type == JV_INT ? (double)v->u.i : v->u.d;
}

/* The member of object o named name (NULL if none or o is not an object). */
const jv *jv_get(const jv *o, const char *name);
const jv *jv_getn(const jv *o, const char *name, size_t n);
/* Equal values: numbers by value (1 == 1.0), objects whatever their member order. */
int jv_equal(const jv *a, const jv *b);
/* Append the canonical form of v to b. */
void jv_canon(const jv *v, buf *b);
/* Append a number in its canonical form: the shortest that reads back the same. */
void json_number(buf *b, double d);
/* Append s as a JSON string literal (quoted, escaped; bytes that are not UTF-8 as U+FFFD). */
void json_quote(buf *b, const char *s, size_t n);
/* One JSON string of a[0..an-1], the character sep and c[0..cn-1] ("Kind:key"). */
void json_quote_pair(buf *b, const char *a, size_t an, char sep, const char *c, size_t cn);

/*
 * Walk the members of an object in canonical form without parsing it, for
 * comparing stored values: canonical values are equal exactly when their
 * bytes are. *pos starts at 0. Returns 1 with the member's key and value
 * bytes, 0 after the last member, -1 for text this cannot walk (not an
 * object, or a key with an escape, whose bytes would not sort as its text).
 */
typedef struct jmember {
	const char *key, *val;
	size_t key_len, val_len;
} jmember;
int json_member_next(const char *s, size_t n, size_t *pos, jmember *m);

/* Build values in an arena (NULL when out of memory). */
jv *jv_object(arena *a, size_t cap);
/* A copy of object o without the members whose value is null (o itself when it has none). */
jv *jv_drop_nulls(arena *a, const jv *o);
/* RFC 7386 merge patch: target (an object or NULL) patched by patch (an object). */
jv *jv_merge_patch(arena *a, const jv *target, const jv *patch);
/* A string node (the text is copied). */
jv *jv_string(arena *a, const char *s, size_t n);

/*
 * U+0000 in names. A JSON string may hold U+0000 (a jv has its length), but
 * a name handed on as a C string (a Kind, a key given NUL-terminated, a
 * branch, an actor) would be cut there and name something else: "a\u0000b"
 * would be "a". Every reader of such a name refuses it instead, in these
 * words after the name of what it read.
 */
#define JSON_NUL_REFUSED "may not contain U+0000"
/* Does v, a string, hold U+0000? (0 for anything else, NULL included.) */
int jv_str_nul(const jv *v);
/* Does the member name of m (an object's member) hold U+0000? */
int jv_key_nul(const jv *m);
/* Does v nest at most max levels of objects and arrays below it? (A scalar: 0 levels.) */
int jv_depth_ok(const jv *v, unsigned max);

/*
 * The raw text of the member called name of the object in s[0..n-1], found
 * without reading the other members' values beyond their ends: for text
 * jv_parse refused (nested too deep, or broken after the member), so that a
 * JSON-RPC error can still name the request's id. Whitespace is allowed; a
 * key is compared by its bytes (a key with an escape never matches). Returns
 * 1 with val[0..*val_len-1] (the value's text, to be parsed), 0 when the
 * member is not found before the text stops being an object's members.
 */
int json_peek_member(const char *s, size_t n, const char *name, const char **val,
		     size_t *val_len);

/*
 * Check that object o has only the listed member names (NULL-terminated
 * list). On failure records `code` naming the unknown member and returns it.
 */
int jv_only(const jv *o, const char *const *allowed, int code, const char *what);

#endif
