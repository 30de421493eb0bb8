/* JSON loading with limits, and the canonical serializer used for stored values and hashes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/json.h"
#include "util/alloc.h"
#include "util/err.h"
#include "util/text.h"

/* Set when an allocation for jansson failed, so a failed parse can say "out of memory". */
static _Thread_local int alloc_failed;

static void *json_alloc(size_t n)
{
	void *p = cr_malloc(n);

	if (!p)
		alloc_failed = 1;
	return p;
}

static void json_release(void *p)
{
	cr_free(p);
}

void json_setup(void)
{
	static int done;

	if (!done) {
		json_set_alloc_funcs(json_alloc, json_release);
		done = 1;
	}
}

/* Deepest nesting of a JSON text, scanning brackets outside strings. */
static int too_deep(const char *p, size_t n)
{
	int depth = 0, in_str = 0;

	for (size_t i = 0; i < n; i++) {
		char c = p[i];

		if (in_str) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_str = 0;
		} else if (c == '"') {
			in_str = 1;
		} else if (c == '{' || c == '[') {
			if (++depth > JSON_MAX_DEPTH)
				return 1;
		} else if (c == '}' || c == ']') {
			depth--;
		}
	}
	return 0;
}

json_t *json_parse(const char *p, size_t n, const char *what)
{
	json_error_t e;
	json_t *v;

	json_setup();
	if (too_deep(p, n)) {
		err_set(CAIRN_EJSON, "%s: JSON nested deeper than %d levels", what, JSON_MAX_DEPTH);
		return NULL;
	}
	if (!utf8_valid(p, n)) {
		err_set(CAIRN_EUTF8, "%s: not valid UTF-8", what);
		return NULL;
	}
	alloc_failed = 0;
	v = json_loadb(p, n, JSON_REJECT_DUPLICATES, &e);
	if (!v) {
		if (alloc_failed || json_error_code(&e) == json_error_out_of_memory)
			err_set(CAIRN_ENOMEM, "%s: out of memory", what);
		else
			err_set(CAIRN_EJSON, "%s: %s at line %d column %d", what, e.text, e.line,
				e.column);
	}
	return v;
}

void json_quote(buf *b, const char *s, size_t n)
{
	static const char hx[] = "0123456789abcdef";
	size_t start = 0;

	buf_put_u8(b, '"');
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		const char *esc = NULL;
		char u[6];

		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
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
			u[0] = '\\';
			u[1] = 'u';
			u[2] = '0';
			u[3] = '0';
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

static void canon_real(double d, buf *b)
{
	char t[40];

	if (!isfinite(d)) {
		buf_put(b, "null", 4);
		return;
	}
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(t, sizeof(t), "%.*g", prec, d);
		if (strtod(t, NULL) == d)
			break;
	}
	buf_put(b, t, strlen(t));
	if (!strpbrk(t, ".eEn"))
		buf_put(b, ".0", 2);
}

static int key_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void json_canon(const json_t *v, buf *b)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		size_t n = json_object_size(v), i = 0;
		const char *k;
		const char **keys;
		json_t *m;

		if (n == 0) {
			buf_put(b, "{}", 2);
			return;
		}
		keys = cr_reallocarray(NULL, n, sizeof(*keys));
		if (!keys) {
			b->oom = 1;
			return;
		}
		json_object_foreach((json_t *)v, k, m)
			keys[i++] = k;
		qsort(keys, n, sizeof(*keys), key_cmp);
		buf_put_u8(b, '{');
		for (i = 0; i < n; i++) {
			if (i)
				buf_put_u8(b, ',');
			json_quote(b, keys[i], strlen(keys[i]));
			buf_put_u8(b, ':');
			json_canon(json_object_get(v, keys[i]), b);
		}
		buf_put_u8(b, '}');
		cr_free(keys);
		return;
	}
	case JSON_ARRAY: {
		size_t i;
		json_t *m;

		buf_put_u8(b, '[');
		json_array_foreach((json_t *)v, i, m) {
			if (i)
				buf_put_u8(b, ',');
			json_canon(m, b);
		}
		buf_put_u8(b, ']');
		return;
	}
	case JSON_STRING:
		json_quote(b, json_string_value(v), json_string_length(v));
		return;
	case JSON_INTEGER:
		buf_printf(b, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		return;
	case JSON_REAL:
		canon_real(json_real_value(v), b);
		return;
	case JSON_TRUE:
		buf_put(b, "true", 4);
		return;
	case JSON_FALSE:
		buf_put(b, "false", 5);
		return;
	case JSON_NULL:
		buf_put(b, "null", 4);
		return;
	}
}

int json_only(const json_t *o, const char *const *allowed, int code, const char *what)
{
	const char *k;
	json_t *m;

	json_object_foreach((json_t *)o, k, m) {
		const char *const *a;

		for (a = allowed; *a; a++)
			if (strcmp(*a, k) == 0)
				break;
		if (!*a)
			return err_set(code, "%s: unknown field \"%s\"", what, k);
	}
	return 0;
}
