/*
 * The JSON reader and the canonical writer (see json.h for why our own).
 *
 * The reader is a recursive descent over the input. Children of the
 * container being read are collected on a scratch stack and copied into the
 * arena as one contiguous array when the container closes, so a tree costs
 * one arena allocation per container and per string, and none per scalar.
 * The whole input is checked for UTF-8 once, before parsing; escapes are
 * checked as they are decoded.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cairn.h"
#include "base/json.h"
#include "base/alloc.h"
#include "base/err.h"
#include "base/text.h"

typedef struct parser {
	const char *start, *p, *end;
	arena *a;
	const char *what;
	jv *stack;
	size_t n, cap;
	int depth;
	int rc;
	jv local[64];
} parser;

static int perr(parser *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int perr(parser *ps, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	if (ps->rc)
		return ps->rc;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ps->rc = err_set(CAIRN_EJSON, "%s: %s at byte %zu", ps->what, msg,
			 (size_t)(ps->p - ps->start));
	return ps->rc;
}

static int oom(parser *ps)
{
	if (!ps->rc)
		ps->rc = err_set(CAIRN_ENOMEM, "%s: out of memory", ps->what);
	return ps->rc;
}

static jv *push(parser *ps)
{
	if (ps->n == ps->cap) {
		size_t cap = ps->cap * 2;
		jv *s = cr_reallocarray(ps->stack == ps->local ? NULL : ps->stack, cap, sizeof(jv));

		if (!s) {
			oom(ps);
			return NULL;
		}
		if (ps->stack == ps->local)
			memcpy(s, ps->local, ps->n * sizeof(jv));
		ps->stack = s;
		ps->cap = cap;
	}
	memset(&ps->stack[ps->n], 0, sizeof(jv));
	return &ps->stack[ps->n++];
}

static void skip_ws(parser *ps)
{
	while (ps->p < ps->end &&
	       (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
		ps->p++;
}

static int hex4(const char *p, unsigned *v)
{
	*v = 0;
	for (int i = 0; i < 4; i++) {
		char c = p[i];

		*v <<= 4;
		if (c >= '0' && c <= '9')
			*v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			*v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			*v |= (unsigned)(c - 'A' + 10);
		else
			return -1;
	}
	return 0;
}

static size_t put_utf8(char *o, unsigned cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | (cp >> 6));
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | (cp >> 12));
		o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | (cp >> 18));
	o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* Read a string starting at the opening quote; *s and *len get the decoded copy. */
static int parse_string(parser *ps, const char **s, uint32_t *len)
{
	const char *q = ++ps->p, *run;
	char *out, *o;

	/* Find the end first: the decoded string is never longer than the raw one. */
	while (q < ps->end && *q != '"') {
		if (*q == '\\')
			q++;
		q++;
	}
	if (q >= ps->end)
		return perr(ps, "unterminated string");
	if ((size_t)(q - ps->p) > UINT32_MAX)
		return perr(ps, "string too long");
	out = o = arena_alloc(ps->a, (size_t)(q - ps->p) + 1);
	if (!out)
		return oom(ps);
	for (run = ps->p; ps->p < q;) {
		unsigned char c = (unsigned char)*ps->p;
		unsigned cp, lo;

		if (c >= 0x20 && c != '\\') {
			ps->p++;
			continue;
		}
		memcpy(o, run, (size_t)(ps->p - run));
		o += ps->p - run;
		if (c < 0x20)
			return perr(ps, "control character in a string");
		switch (ps->p[1]) {
		case '"':
		case '\\':
		case '/':
			*o++ = ps->p[1];
			break;
		case 'b':
			*o++ = '\b';
			break;
		case 'f':
			*o++ = '\f';
			break;
		case 'n':
			*o++ = '\n';
			break;
		case 'r':
			*o++ = '\r';
			break;
		case 't':
			*o++ = '\t';
			break;
		case 'u':
			if (q - ps->p < 6 || hex4(ps->p + 2, &cp))
				return perr(ps, "bad \\u escape");
			if (cp >= 0xdc00 && cp <= 0xdfff)
				return perr(ps, "lone low surrogate");
			if (cp >= 0xd800 && cp <= 0xdbff) {
				if (q - ps->p < 12 || ps->p[6] != '\\' || ps->p[7] != 'u' ||
				    hex4(ps->p + 8, &lo) || lo < 0xdc00 || lo > 0xdfff)
					return perr(ps, "lone high surrogate");
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				ps->p += 6;
			}
			o += put_utf8(o, cp);
			ps->p += 4;
			break;
		default:
			return perr(ps, "bad escape");
		}
		ps->p += 2;
		run = ps->p;
	}
	memcpy(o, run, (size_t)(ps->p - run));
	o += ps->p - run;
	*o = '\0';
	ps->p = q + 1;
	*s = out;
	*len = (uint32_t)(o - out);
	return 0;
}

static int parse_number(parser *ps, jv *v)
{
	const char *s = ps->p;
	int is_int = 1, neg = 0;
	uint64_t acc = 0;
	int overflow = 0;

	if (ps->p < ps->end && *ps->p == '-') {
		neg = 1;
		ps->p++;
	}
	if (ps->p >= ps->end || *ps->p < '0' || *ps->p > '9')
		return perr(ps, "bad number");
	if (*ps->p == '0') {
		ps->p++;
	} else {
		while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9') {
			unsigned d = (unsigned)(*ps->p - '0');

			if (acc > (UINT64_MAX - d) / 10)
				overflow = 1;
			else
				acc = acc * 10 + d;
			ps->p++;
		}
	}
	if (ps->p < ps->end && *ps->p == '.') {
		is_int = 0;
		ps->p++;
		if (ps->p >= ps->end || *ps->p < '0' || *ps->p > '9')
			return perr(ps, "bad number");
		while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9')
			ps->p++;
	}
	if (ps->p < ps->end && (*ps->p == 'e' || *ps->p == 'E')) {
		is_int = 0;
		ps->p++;
		if (ps->p < ps->end && (*ps->p == '+' || *ps->p == '-'))
			ps->p++;
		if (ps->p >= ps->end || *ps->p < '0' || *ps->p > '9')
			return perr(ps, "bad number");
		while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9')
			ps->p++;
	}
	if (is_int && !overflow && acc <= (uint64_t)INT64_MAX + (uint64_t)neg) {
		v->type = JV_INT;
		v->u.i = neg ? (int64_t)(0 - acc) : (int64_t)acc;
		return 0;
	}
	{
		size_t n = (size_t)(ps->p - s);
		char tmp[64], *t = n < sizeof(tmp) ? tmp : arena_strndup(ps->a, s, n);

		if (!t)
			return oom(ps);
		if (t == tmp) {
			memcpy(tmp, s, n);
			tmp[n] = '\0';
		}
		v->type = JV_REAL;
		v->u.d = strtod(t, NULL);
		if (!isfinite(v->u.d))
			return perr(ps, "number out of range");
	}
	return 0;
}

static int key_cmp(const jv *a, const jv *b)
{
	size_t n = a->key_len < b->key_len ? a->key_len : b->key_len;
	int c = memcmp(a->key, b->key, n);

	return c ? c : (a->key_len > b->key_len) - (a->key_len < b->key_len);
}

static int member_ptr_cmp(const void *x, const void *y)
{
	return key_cmp(*(const jv *const *)x, *(const jv *const *)y);
}

/* Sort member pointers by key bytes: insertion sort for the usual small objects. */
static void sort_by_key(const jv **m, size_t n)
{
	if (n > 32) {
		qsort(m, n, sizeof(*m), member_ptr_cmp);
		return;
	}
	for (size_t i = 1; i < n; i++) {
		const jv *x = m[i];
		size_t j = i;

		while (j > 0 && key_cmp(m[j - 1], x) > 0) {
			m[j] = m[j - 1];
			j--;
		}
		m[j] = x;
	}
}

static int dup_keys(const jv *m, size_t n)
{
	if (n <= 32) {
		for (size_t i = 1; i < n; i++)
			for (size_t j = 0; j < i; j++)
				if (m[i].key_len == m[j].key_len &&
				    memcmp(m[i].key, m[j].key, m[i].key_len) == 0)
					return 1;
		return 0;
	}
	{
		const jv **s = cr_reallocarray(NULL, n, sizeof(*s));
		int dup = 0;

		if (!s)
			return -1;
		for (size_t i = 0; i < n; i++)
			s[i] = &m[i];
		sort_by_key(s, n);
		for (size_t i = 1; i < n && !dup; i++)
			dup = key_cmp(s[i - 1], s[i]) == 0;
		cr_free(s);
		return dup;
	}
}

static int parse_value(parser *ps);

/* Close a container whose children are stack[base..n-1]: copy them to the arena. */
static int close_container(parser *ps, size_t base, int type)
{
	size_t count = ps->n - base;
	jv *items = NULL, *v;

	if (count) {
		if (type == JV_OBJECT) {
			int d = dup_keys(&ps->stack[base], count);

			if (d < 0)
				return oom(ps);
			if (d)
				return perr(ps, "duplicate key in object");
		}
		items = arena_alloc(ps->a, count * sizeof(jv));
		if (!items)
			return oom(ps);
		memcpy(items, &ps->stack[base], count * sizeof(jv));
	}
	ps->n = base;
	v = push(ps);
	if (!v)
		return ps->rc;
	v->type = (uint8_t)type;
	v->len = (uint32_t)count;
	v->u.items = items;
	return 0;
}

static int parse_container(parser *ps, int type)
{
	size_t base = ps->n;
	char close = type == JV_OBJECT ? '}' : ']';

	if (++ps->depth > JSON_MAX_DEPTH)
		return perr(ps, "nested deeper than %d levels", JSON_MAX_DEPTH);
	ps->p++;
	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == close) {
		ps->p++;
		ps->depth--;
		return close_container(ps, base, type);
	}
	for (;;) {
		const char *key = NULL;
		uint32_t key_len = 0;

		skip_ws(ps);
		if (type == JV_OBJECT) {
			if (ps->p >= ps->end || *ps->p != '"')
				return perr(ps, "expected a member name");
			if (parse_string(ps, &key, &key_len))
				return ps->rc;
			skip_ws(ps);
			if (ps->p >= ps->end || *ps->p != ':')
				return perr(ps, "expected ':'");
			ps->p++;
			skip_ws(ps);
		}
		if (parse_value(ps))
			return ps->rc;
		if (ps->n - base > UINT32_MAX - 1)
			return perr(ps, "too many items");
		ps->stack[ps->n - 1].key = key;
		ps->stack[ps->n - 1].key_len = key_len;
		skip_ws(ps);
		if (ps->p < ps->end && *ps->p == ',') {
			ps->p++;
			continue;
		}
		if (ps->p < ps->end && *ps->p == close) {
			ps->p++;
			break;
		}
		return perr(ps, "expected ',' or '%c'", close);
	}
	ps->depth--;
	return close_container(ps, base, type);
}

static int literal(parser *ps, const char *word, int type)
{
	size_t n = strlen(word);
	jv *v;

	if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0)
		return perr(ps, "unexpected character");
	ps->p += n;
	v = push(ps);
	if (!v)
		return ps->rc;
	v->type = (uint8_t)type;
	return 0;
}

static int parse_value(parser *ps)
{
	jv *v;

	skip_ws(ps);
	if (ps->p >= ps->end)
		return perr(ps, "unexpected end of input");
	switch (*ps->p) {
	case '{':
		return parse_container(ps, JV_OBJECT);
	case '[':
		return parse_container(ps, JV_ARRAY);
	case '"': {
		const char *s;
		uint32_t len;

		if (parse_string(ps, &s, &len))
			return ps->rc;
		v = push(ps);
		if (!v)
			return ps->rc;
		v->type = JV_STRING;
		v->u.s = s;
		v->len = len;
		return 0;
	}
	case 't':
		return literal(ps, "true", JV_TRUE);
	case 'f':
		return literal(ps, "false", JV_FALSE);
	case 'n':
		return literal(ps, "null", JV_NULL);
	default:
		if (*ps->p == '-' || (*ps->p >= '0' && *ps->p <= '9')) {
			jv num = {0};

			if (parse_number(ps, &num))
				return ps->rc;
			v = push(ps);
			if (!v)
				return ps->rc;
			*v = num;
			return 0;
		}
		return perr(ps, "unexpected character");
	}
}

jv *jv_parse(arena *a, const char *p, size_t n, const char *what)
{
	parser ps;
	jv *root = NULL;

	if (!p) /* an empty text may come as NULL: NULL + 0 is undefined */
		p = "";
	memset(&ps, 0, offsetof(parser, local));
	ps.start = ps.p = p;
	ps.end = p + n;
	ps.a = a;
	ps.what = what;
	ps.stack = ps.local;
	ps.cap = sizeof(ps.local) / sizeof(ps.local[0]);
	if (!utf8_valid(p, n)) {
		err_set(CAIRN_EUTF8, "%s: not valid UTF-8", what);
		return NULL;
	}
	if (parse_value(&ps) == 0) {
		skip_ws(&ps);
		if (ps.p != ps.end) {
			perr(&ps, "unexpected data after the value");
		} else {
			root = arena_alloc(a, sizeof(jv));
			if (!root)
				oom(&ps);
			else
				*root = ps.stack[0];
		}
	}
	if (ps.stack != ps.local)
		cr_free(ps.stack);
	return ps.rc ? NULL : root;
}

/* ------------------------------------------------------------ access -- */

const jv *jv_getn(const jv *o, const char *name, size_t n)
{
	if (!o || o->type != JV_OBJECT)
		return NULL;
	for (uint32_t i = 0; i < o->len; i++)
		if (o->u.items[i].key_len == n && memcmp(o->u.items[i].key, name, n) == 0)
			return &o->u.items[i];
	return NULL;
}

const jv *jv_get(const jv *o, const char *name)
{
	return jv_getn(o, name, strlen(name));
}

int jv_equal(const jv *a, const jv *b)
{
	if (!a || !b)
		return a == b;
	if (jv_is_number(a) && jv_is_number(b)) {
		if (a->type == JV_INT && b->type == JV_INT)
			return a->u.i == b->u.i;
		return jv_number(a) == jv_number(b);
	}
	if (a->type != b->type || a->len != b->len)
		return 0;
	switch (a->type) {
	case JV_STRING:
		return memcmp(a->u.s, b->u.s, a->len) == 0;
	case JV_ARRAY:
		for (uint32_t i = 0; i < a->len; i++)
			if (!jv_equal(&a->u.items[i], &b->u.items[i]))
				return 0;
		return 1;
	case JV_OBJECT:
		for (uint32_t i = 0; i < a->len; i++) {
			const jv *m = &a->u.items[i];

			if (!jv_equal(m, jv_getn(b, m->key, m->key_len)))
				return 0;
		}
		return 1;
	default:
		return 1;
	}
}

int jv_str_nul(const jv *v)
{
	return v && v->type == JV_STRING && memchr(v->u.s, 0, v->len) != NULL;
}

int jv_key_nul(const jv *m)
{
	return m->key && memchr(m->key, 0, m->key_len) != NULL;
}

int jv_depth_ok(const jv *v, unsigned max)
{
	if (v->type != JV_OBJECT && v->type != JV_ARRAY)
		return 1;
	if (max == 0)
		return 0;
	for (uint32_t i = 0; i < v->len; i++)
		if (!jv_depth_ok(&v->u.items[i], max - 1))
			return 0;
	return 1;
}

int jv_only(const jv *o, const char *const *allowed, int code, const char *what)
{
	for (uint32_t i = 0; o && o->type == JV_OBJECT && i < o->len; i++) {
		const jv *m = &o->u.items[i];
		const char *const *a;

		for (a = allowed; *a; a++)
			if (strlen(*a) == m->key_len && memcmp(*a, m->key, m->key_len) == 0)
				break;
		if (!*a)
			return err_set(code, "%s: unknown field \"%.*s\"", what, (int)m->key_len,
				       m->key);
	}
	return 0;
}

/* ------------------------------------------------------------- build -- */

jv *jv_object(arena *a, size_t cap)
{
	jv *o = arena_alloc(a, sizeof(jv));

	if (!o)
		return NULL;
	memset(o, 0, sizeof(*o));
	o->type = JV_OBJECT;
	if (cap && !(o->u.items = arena_alloc(a, cap * sizeof(jv))))
		return NULL;
	return o;
}

jv *jv_string(arena *a, const char *s, size_t n)
{
	jv *v = arena_alloc(a, sizeof(jv));

	if (!v)
		return NULL;
	memset(v, 0, sizeof(*v));
	v->type = JV_STRING;
	v->len = (uint32_t)n;
	v->u.s = arena_strndup(a, s, n);
	return v->u.s ? v : NULL;
}

jv *jv_drop_nulls(arena *a, const jv *o)
{
	uint32_t nulls = 0;
	jv *r;

	for (uint32_t i = 0; i < o->len; i++)
		nulls += o->u.items[i].type == JV_NULL;
	if (!nulls)
		return (jv *)o;
	r = jv_object(a, o->len - nulls);
	if (!r)
		return NULL;
	for (uint32_t i = 0; i < o->len; i++)
		if (o->u.items[i].type != JV_NULL)
			r->u.items[r->len++] = o->u.items[i];
	return r;
}

jv *jv_merge_patch(arena *a, const jv *target, const jv *patch)
{
	uint32_t tn = target && target->type == JV_OBJECT ? target->len : 0;
	jv *r = jv_object(a, (size_t)tn + patch->len);

	if (!r)
		return NULL;
	for (uint32_t i = 0; i < tn; i++) {
		const jv *m = &target->u.items[i];

		if (!jv_getn(patch, m->key, m->key_len))
			r->u.items[r->len++] = *m;
	}
	for (uint32_t i = 0; i < patch->len; i++) {
		const jv *m = &patch->u.items[i];

		if (m->type == JV_NULL)
			continue;
		if (m->type == JV_OBJECT) {
			jv *sub = jv_merge_patch(a, jv_getn(target, m->key, m->key_len), m);

			if (!sub)
				return NULL;
			sub->key = m->key;
			sub->key_len = m->key_len;
			r->u.items[r->len++] = *sub;
		} else {
			r->u.items[r->len++] = *m;
		}
	}
	return r;
}

/* ---------------------------------------------------------- canonical -- */

void json_quote_pair(buf *b, const char *a, size_t an, char sep, const char *c, size_t cn)
{
	buf t = BUF_INIT;

	buf_put(&t, a, an);
	buf_put_u8(&t, (uint8_t)sep);
	buf_put(&t, c, cn);
	if (t.oom)
		b->oom = 1;
	else
		json_quote(b, (const char *)t.p, t.len);
	buf_release(&t);
}

void json_quote(buf *b, const char *s, size_t n)
{
	static const char hx[] = "0123456789abcdef";
	size_t start = 0;

	buf_put_u8(b, '"');
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		const char *esc;
		char u[6];

		if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80)
			continue;
		if (c >= 0x80) {
			size_t k = utf8_seq((const unsigned char *)s + i, n - i);

			if (k) {
				i += k - 1;
				continue;
			}
			/* Not UTF-8 (stored bytes that are damaged): never on the way out. */
			buf_put(b, s + start, i - start);
			start = i + 1;
			buf_put(b, "\\ufffd", 6);
			continue;
		}
		buf_put(b, s + start, i - start);
		start = i + 1;
		switch (c) {
		case '"':
			esc = "\\\"";
			break;
		case '\\':
			esc = "\\\\";
			break;
		case '\n':
			esc = "\\n";
			break;
		case '\r':
			esc = "\\r";
			break;
		case '\t':
			esc = "\\t";
			break;
		case '\b':
			esc = "\\b";
			break;
		case '\f':
			esc = "\\f";
			break;
		default:
			memcpy(u, "\\u00", 4);
			u[4] = hx[c >> 4];
			u[5] = hx[c & 15];
			buf_put(b, u, 6);
			continue;
		}
		buf_put(b, esc, 2);
	}
	buf_put(b, s + start, n - start);
	buf_put_u8(b, '"');
}

static void canon_real(double d, buf *b);

void json_number(buf *b, double d)
{
	canon_real(d, b);
}

static void canon_real(double d, buf *b)
{
	char t[40];

	for (int prec = 15; prec <= 17; prec++) {
		snprintf(t, sizeof(t), "%.*g", prec, d);
		if (strtod(t, NULL) == d)
			break;
	}
	buf_put(b, t, strlen(t));
	if (!strpbrk(t, ".eEn"))
		buf_put(b, ".0", 2);
}

/* The end of the value that starts at s[i], or n when it does not end. */
static size_t skip_value(const char *s, size_t n, size_t i)
{
	int depth = 0;

	for (; i < n; i++) {
		char ch = s[i];

		if (ch == '"') {
			/* To the closing quote, a memchr at a time: escapes are rare. */
			for (i++;;) {
				const char *q = memchr(s + i, '"', n - i), *e;

				if (!q)
					return n;
				e = memchr(s + i, '\\', (size_t)(q - (s + i)));
				if (!e) {
					i = (size_t)(q - s);
					break;
				}
				i = (size_t)(e - s) + 2;
				if (i >= n)
					return n;
			}
			if (depth == 0)
				return i + 1;
		} else if (ch == '{' || ch == '[') {
			depth++;
		} else if (ch == '}' || ch == ']') {
			if (depth == 0)
				return i; /* the end of a scalar, at its container's close */
			if (--depth == 0)
				return i + 1;
		} else if (ch == ',' && depth == 0) {
			return i;
		}
	}
	return n;
}

int json_member_next(const char *s, size_t n, size_t *pos, jmember *m)
{
	size_t i = *pos, k;

	if (i == 0) {
		if (n < 2 || s[0] != '{')
			return -1;
		i = 1;
	}
	if (i >= n)
		return -1;
	if (s[i] == '}')
		return 0;
	if (s[i] == ',')
		i++;
	if (i >= n || s[i] != '"')
		return -1;
	{
		const char *q = memchr(s + i + 1, '"', n - i - 1);

		if (!q || memchr(s + i + 1, '\\', (size_t)(q - (s + i + 1))))
			return -1;
		k = (size_t)(q - s);
	}
	if (k + 1 >= n || s[k + 1] != ':')
		return -1;
	m->key = s + i + 1;
	m->key_len = k - i - 1;
	m->val = s + k + 2;
	i = skip_value(s, n, k + 2);
	if (i >= n || i == k + 2)
		return -1;
	m->val_len = i - (k + 2);
	*pos = i;
	return 1;
}

/* ------------------------------------------------------------- peeking -- */

static size_t peek_ws(const char *s, size_t n, size_t i)
{
	while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
		i++;
	return i;
}

/* Past the closing quote of the string that opens at s[i], or n when it does not close. */
static size_t peek_string_end(const char *s, size_t n, size_t i)
{
	for (i++; i < n; i++) {
		if (s[i] == '\\')
			i++;
		else if (s[i] == '"')
			return i + 1;
	}
	return n;
}

/*
 * The end of the value that starts at s[i], or n when it does not end: the
 * brackets are counted, not matched, and nothing is checked, so that any
 * depth costs one pass and no stack.
 */
static size_t peek_value_end(const char *s, size_t n, size_t i)
{
	size_t depth = 0;

	while (i < n) {
		char ch = s[i];

		if (ch == '"') {
			i = peek_string_end(s, n, i);
			if (depth == 0)
				return i;
			continue;
		}
		if (ch == '{' || ch == '[') {
			depth++;
		} else if (ch == '}' || ch == ']') {
			if (depth == 0)
				return i; /* a scalar's end, at its container's close */
			if (--depth == 0)
				return i + 1;
		} else if (depth == 0 && (ch == ',' || ch == ' ' || ch == '\t' || ch == '\n' ||
					  ch == '\r')) {
			return i;
		}
		i++;
	}
	return n;
}

int json_peek_member(const char *s, size_t n, const char *name, const char **val,
		     size_t *val_len)
{
	size_t name_len = strlen(name), i = peek_ws(s, n, 0);

	if (i >= n || s[i] != '{')
		return 0;
	for (i++;;) {
		size_t k, e;
		int match;

		i = peek_ws(s, n, i);
		if (i >= n || s[i] != '"')
			return 0;
		k = i + 1;
		i = peek_string_end(s, n, i);
		if (i >= n)
			return 0;
		match = i - 1 - k == name_len && memcmp(s + k, name, name_len) == 0;
		i = peek_ws(s, n, i);
		if (i >= n || s[i] != ':')
			return 0;
		i = peek_ws(s, n, i + 1);
		e = peek_value_end(s, n, i);
		if (e >= n || e == i)
			return 0;
		if (match) {
			*val = s + i;
			*val_len = e - i;
			return 1;
		}
		i = peek_ws(s, n, e);
		if (i >= n || s[i] != ',')
			return 0;
		i++;
	}
}

void jv_canon(const jv *v, buf *b)
{
	switch (v->type) {
	case JV_OBJECT: {
		const jv *local[32], **m = local;

		if (v->len > 32 && !(m = cr_reallocarray(NULL, v->len, sizeof(*m)))) {
			b->oom = 1;
			return;
		}
		for (uint32_t i = 0; i < v->len; i++)
			m[i] = &v->u.items[i];
		sort_by_key(m, v->len);
		buf_put_u8(b, '{');
		for (uint32_t i = 0; i < v->len; i++) {
			if (i)
				buf_put_u8(b, ',');
			json_quote(b, m[i]->key, m[i]->key_len);
			buf_put_u8(b, ':');
			jv_canon(m[i], b);
		}
		buf_put_u8(b, '}');
		if (m != local)
			cr_free(m);
		return;
	}
	case JV_ARRAY:
		buf_put_u8(b, '[');
		for (uint32_t i = 0; i < v->len; i++) {
			if (i)
				buf_put_u8(b, ',');
			jv_canon(&v->u.items[i], b);
		}
		buf_put_u8(b, ']');
		return;
	case JV_STRING:
		json_quote(b, v->u.s, v->len);
		return;
	case JV_INT:
		buf_printf(b, "%lld", (long long)v->u.i);
		return;
	case JV_REAL:
		canon_real(v->u.d, b);
		return;
	case JV_TRUE:
		buf_put(b, "true", 4);
		return;
	case JV_FALSE:
		buf_put(b, "false", 5);
		return;
	default:
		buf_put(b, "null", 4);
		return;
	}
}
