/* Unit tests of src/util and src/model/json: buffers, encodings, UTF-8, time, hash map, allocator. */
#include <math.h>
#include <stdlib.h>

#include "base/json.h"
#include "base/err.h"
#include "tests.h"
#include "base/knob.h"
#include "base/alloc.h"
#include "base/buf.h"
#include "base/hmap.h"
#include "base/text.h"

void test_util_buf(void)
{
	buf b = BUF_INIT;
	uint64_t vals[] = {0, 1, 127, 128, 300, 1ull << 35, UINT64_MAX};
	rdr r;
	size_t n;
	const uint8_t *s;

	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++)
		buf_put_varint(&b, vals[i]);
	buf_put_be32(&b, 0xdeadbeef);
	buf_put_be64(&b, 0x0102030405060708ull);
	buf_put_str(&b, "hello", 5);
	CHECK(!b.oom);
	rd_init(&r, b.p, b.len);
	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++)
		CHECK(rd_varint(&r) == vals[i]);
	CHECK(rd_be32(&r) == 0xdeadbeef);
	CHECK(rd_be64(&r) == 0x0102030405060708ull);
	s = rd_str(&r, &n);
	CHECK(s && n == 5 && memcmp(s, "hello", 5) == 0);
	CHECK(!r.bad && r.p == r.end);
	/* Reading past the end fails cleanly, never crashes. */
	CHECK(rd_u8(&r) == 0 && r.bad);
	rd_init(&r, b.p, 3);
	rd_be64(&r);
	CHECK(r.bad);
	/* A length prefix larger than the input. */
	buf_reset(&b);
	buf_put_varint(&b, 1000);
	buf_put(&b, "abc", 3);
	rd_init(&r, b.p, b.len);
	CHECK(rd_str(&r, &n) == NULL && r.bad);
	/* An unterminated varint. */
	rd_init(&r, "\xff\xff", 2);
	rd_varint(&r);
	CHECK(r.bad);
	/* Big-endian keys sort like numbers. */
	{
		uint8_t a[8], c[8];

		be64_put(a, 255);
		be64_put(c, 256);
		CHECK(memcmp(a, c, 8) < 0);
	}
	buf_release(&b);
}

void test_util_utf8(void)
{
	CHECK(utf8_valid("", 0));
	CHECK(utf8_valid("plain ascii", 11));
	CHECK(utf8_valid("gr\xc3\xbc\xc3\x9f", 6));		  /* grüß */
	CHECK(utf8_valid("\xe2\x82\xac", 3));		  /* € */
	CHECK(utf8_valid("\xf0\x9f\x98\x80", 4));	  /* emoji */
	CHECK(!utf8_valid("\xff", 1));
	CHECK(!utf8_valid("\xc3", 1));			  /* truncated */
	CHECK(!utf8_valid("\xc0\xaf", 2));		  /* overlong */
	CHECK(!utf8_valid("\xe0\x80\xaf", 3));		  /* overlong */
	CHECK(!utf8_valid("\xed\xa0\x80", 3));		  /* surrogate */
	CHECK(!utf8_valid("\xf4\x90\x80\x80", 4));	  /* above U+10FFFF */
	/* JSON strings out: valid UTF-8 as it is, each byte that is not as U+FFFD. */
	{
		static const struct {
			const char *in, *out;
		} q[] = {
			{"gr\xc3\xbc\xc3\x9f \xe2\x82\xac \xf0\x9f\x98\x80", "\"gr\xc3\xbc\xc3\x9f \xe2\x82\xac \xf0\x9f\x98\x80\""},
			{"a\xff" "b", "\"a\\ufffdb\""},
			{"\xc3", "\"\\ufffd\""},			/* cut short at the end */
			{"\xe2\x82x", "\"\\ufffd\\ufffdx\""},	/* cut short inside */
			{"\xed\xa0\x80\"", "\"\\ufffd\\ufffd\\ufffd\\\"\""}, /* a surrogate, then a quote */
		};

		for (size_t i = 0; i < sizeof(q) / sizeof(q[0]); i++) {
			buf b = BUF_INIT;

			json_quote(&b, q[i].in, strlen(q[i].in));
			CHECK(b.len == strlen(q[i].out) && memcmp(b.p, q[i].out, b.len) == 0);
			CHECK(utf8_valid((const char *)b.p, b.len));
			buf_release(&b);
		}
	}
	CHECK(name_valid("Part", 64));
	CHECK(name_valid("agent_7.x-y", 64));
	CHECK(!name_valid("", 64));
	CHECK(!name_valid("-x", 64));
	CHECK(!name_valid("a b", 64));
	CHECK(!name_valid("abc", 2));
}

/* Close names: one edit in a short name, two in a longer one, case ignored, never most of it. */
void test_util_closest(void)
{
	static const char *const names[] = {"default", "supply", "rating", "vat", "ab"};
	const size_t n = sizeof(names) / sizeof(names[0]);
	char lng[80];

	CHECK(strcmp(text_closest("defualt", 7, names, n), "default") == 0); /* a swap */
	CHECK(strcmp(text_closest("DEFAULT", 7, names, n), "default") == 0);
	CHECK(strcmp(text_closest("defaul", 6, names, n), "default") == 0);
	CHECK(strcmp(text_closest("dfeaultt", 8, names, n), "default") == 0); /* two */
	CHECK(text_closest("dfaulttt", 8, names, n) == NULL);		     /* three */
	CHECK(strcmp(text_closest("ratng", 5, names, n), "rating") == 0);
	CHECK(strcmp(text_closest("vta", 3, names, n), "vat") == 0);
	CHECK(text_closest("vxx", 3, names, n) == NULL); /* two in a short name */
	CHECK(text_closest("a", 1, names, n) == NULL);	 /* most of the name */
	CHECK(text_closest("", 0, names, n) == NULL);
	CHECK(text_closest("supply", 6, names, 0) == NULL);
	memset(lng, 'x', sizeof(lng));
	CHECK(text_closest(lng, 65, names, n) == NULL); /* too long to suggest for */
}

void test_util_time(void)
{
	int64_t d, ms;
	char out[48];

	CHECK(date_parse("1970-01-01", 10, &d) == 0 && d == 0);
	CHECK(date_parse("2024-02-29", 10, &d) == 0);
	CHECK(date_parse("2023-02-29", 10, &d) != 0);
	CHECK(date_parse("2024-13-01", 10, &d) != 0);
	CHECK(date_parse("2024-1-01", 9, &d) != 0);
	CHECK(date_parse("1969-12-31", 10, &d) == 0 && d == -1);
	CHECK(time_parse_rfc3339("1970-01-01T00:00:01Z", 20, &ms) == 0 && ms == 1000);
	CHECK(time_parse_rfc3339("1970-01-01T01:00:00+01:00", 25, &ms) == 0 && ms == 0);
	CHECK(time_parse_rfc3339("2026-11-30T12:00:00.250Z", 24, &ms) == 0 && ms % 1000 == 250);
	CHECK(time_parse_rfc3339("2026-11-30T12:00:00", 19, &ms) != 0); /* no zone */
	CHECK(time_parse_rfc3339("2026-11-30T25:00:00Z", 20, &ms) != 0);
	time_format_ms(1000, out);
	CHECK(strcmp(out, "1970-01-01T00:00:01.000Z") == 0);
	time_format_ms(1764504000123, out);
	CHECK(time_parse_rfc3339(out, strlen(out), &ms) == 0 && ms == 1764504000123);
}

void test_util_hmap(void)
{
	hmap m = HMAP_INIT;
	char k[32];
	int isnew;

	for (int i = 0; i < 5000; i++) {
		uint64_t *v;

		snprintf(k, sizeof(k), "key-%d", i);
		v = hmap_put(&m, k, strlen(k), &isnew);
		CHECK(v && isnew);
		*v = (uint64_t)i * 3;
	}
	CHECK(m.n == 5000);
	for (int i = 0; i < 5000; i++) {
		uint64_t *v;

		snprintf(k, sizeof(k), "key-%d", i);
		v = hmap_get(&m, k, strlen(k));
		CHECK(v && *v == (uint64_t)i * 3);
		CHECK(hmap_put(&m, k, strlen(k), &isnew) == v && !isnew);
	}
	CHECK(hmap_get(&m, "nope", 4) == NULL);
	CHECK(hmap_get(&m, "", 0) == NULL);
	hmap_clear(&m);
	CHECK(m.n == 0 && hmap_get(&m, "key-1", 5) == NULL);
	hmap_release(&m);
}

void test_util_alloc(void)
{
	void *p;

	alloc_fail_after(2, 0);
	p = cr_malloc(10);
	CHECK(p != NULL);
	cr_free(p);
	CHECK(cr_malloc(10) == NULL);
	CHECK(alloc_failures() == 1);
	p = cr_malloc(10); /* not sticky: later ones succeed */
	CHECK(p != NULL);
	cr_free(p);
	CHECK(cr_reallocarray(NULL, SIZE_MAX / 2, 4) == NULL); /* overflow */
	alloc_fail_after(0, 0);
}

static int canon_is(const char *in, const char *want)
{
	arena a = ARENA_INIT;
	const jv *v = jv_parse(&a, in, strlen(in), "test");
	buf b = BUF_INIT;
	int ok;

	if (!v) {
		fprintf(stderr, "    parse(%s): %s\n", in, cairn_errmsg());
		arena_release(&a);
		return 0;
	}
	jv_canon(v, &b);
	buf_cstr(&b);
	ok = !b.oom && strcmp((char *)b.p, want) == 0;
	if (!ok)
		fprintf(stderr, "    canon(%s) = %s, want %s\n", in, b.oom ? "(oom)" : (char *)b.p,
			want);
	arena_release(&a);
	buf_release(&b);
	return ok;
}

void test_util_arena(void)
{
	arena a = ARENA_INIT;
	arena_mark m;
	char *p1, *p2, *p3;

	p1 = arena_alloc(&a, 16);
	CHECK(p1 != NULL);
	m = arena_mark_get(&a);
	p2 = arena_alloc(&a, 16);
	CHECK(p2 == p1 + 16);
	arena_rewind(&a, m);
	CHECK(arena_alloc(&a, 16) == p2); /* the same bytes again */
	arena_rewind(&a, m);
	for (int i = 0; i < 200; i++) /* many chunks past the mark */
		memset(arena_alloc(&a, 1000), i, 1000);
	arena_rewind(&a, m);
	CHECK(arena_alloc(&a, 16) == p2); /* the newer chunks are gone */
	for (int i = 0; i < 200; i++)
		memset(arena_alloc(&a, 1000), i, 1000);
	arena_reset(&a);
	CHECK(a.head != NULL);
	p3 = arena_alloc(&a, 8);
	CHECK(p3 != NULL);
	memset(p3, 1, 8);
	CHECK(arena_alloc(&a, 8) == p3 + 8); /* bump from the start of the kept chunk */
	arena_release(&a);
	CHECK(a.head == NULL);
	arena_reset(&a); /* on an empty arena: nothing to do */
	m = arena_mark_get(&a);
	arena_rewind(&a, m);
	CHECK(a.head == NULL);
}

void test_json_canon(void)
{
	CHECK(canon_is("{ \"b\" : 1, \"a\" : [true, false, null] }", "{\"a\":[true,false,null],\"b\":1}"));
	CHECK(canon_is("{\"x\":0.1}", "{\"x\":0.1}"));
	CHECK(canon_is("{\"x\":12.0}", "{\"x\":12.0}"));
	CHECK(canon_is("{\"x\":1e300}", "{\"x\":1e+300}"));
	CHECK(canon_is("{\"x\":0.30000000000000004}", "{\"x\":0.30000000000000004}"));
	CHECK(canon_is("{\"s\":\"a\\\"b\\\\c\\n\\u0001\"}", "{\"s\":\"a\\\"b\\\\c\\n\\u0001\"}"));
	CHECK(canon_is("{\"s\":\"gr\xc3\xbc\xc3\x9f\"}", "{\"s\":\"gr\xc3\xbc\xc3\x9f\"}"));
	CHECK(canon_is("{\"s\":\"\\u00fc\\u20ac\\ud83d\\ude00\\/\"}",
		       "{\"s\":\"\xc3\xbc\xe2\x82\xac\xf0\x9f\x98\x80/\"}"));
	CHECK(canon_is("{\"n\":-9223372036854775808}", "{\"n\":-9223372036854775808}"));
	CHECK(canon_is("{\"n\":9223372036854775808}", "{\"n\":9.223372036854776e+18}"));
	CHECK(canon_is("{\"n\":-0}", "{\"n\":0}"));
	CHECK(canon_is("{\"n\":[0.5e1,1E2,-1.25e-3]}", "{\"n\":[5.0,100.0,-0.00125]}"));
	CHECK(canon_is("{}", "{}"));
	CHECK(canon_is("[ ]", "[]"));
	CHECK(canon_is("{\"a\":{\"d\":1,\"c\":2}}", "{\"a\":{\"c\":2,\"d\":1}}"));
	CHECK(canon_is("{\"ab\":1,\"a\":2,\"\":3}", "{\"\":3,\"a\":2,\"ab\":1}"));
	CHECK(canon_is("\"x\"", "\"x\""));
}

static int refused(const char *in, size_t n, int code)
{
	arena a = ARENA_INIT;
	const jv *v = jv_parse(&a, in, n, "t");

	arena_release(&a);
	if (v)
		fprintf(stderr, "    accepted: %.*s\n", (int)n, in);
	else if (err_code() != code)
		fprintf(stderr, "    %.*s: %s, not %s\n", (int)n, in, cairn_errname(err_code()),
			cairn_errname(code));
	return !v && err_code() == code;
}

void test_json_limits(void)
{
	char deep[300];
	arena a = ARENA_INIT;
	const jv *v;

	memset(deep, '[', 100);
	memset(deep + 100, ']', 100);
	CHECK(refused(deep, 200, CAIRN_EJSON));
	CHECK(strstr(cairn_errmsg(), "deeper") != NULL);
	memset(deep, '[', 60);
	memset(deep + 60, ']', 60);
	v = jv_parse(&a, deep, 120, "t");
	CHECK(v != NULL && v->type == JV_ARRAY && v->len == 1);
	CHECK(refused("{\"a\":1,\"a\":2}", 13, CAIRN_EJSON)); /* duplicate keys */
	CHECK(strstr(cairn_errmsg(), "duplicate") != NULL);
	CHECK(refused("{\"a\":\"\xff\"}", 9, CAIRN_EUTF8));
	CHECK(refused("{\"a\":1", 6, CAIRN_EJSON));
	CHECK(refused("", 0, CAIRN_EJSON));
	CHECK(refused("{} {}", 5, CAIRN_EJSON));     /* trailing data */
	CHECK(refused("{\"a\":01}", 8, CAIRN_EJSON));  /* leading zero */
	CHECK(refused("[1.]", 4, CAIRN_EJSON));
	CHECK(refused("[.5]", 4, CAIRN_EJSON));
	CHECK(refused("[1e]", 4, CAIRN_EJSON));
	CHECK(refused("[1e999]", 7, CAIRN_EJSON));   /* not finite */
	CHECK(refused("[tru]", 5, CAIRN_EJSON));
	CHECK(refused("[\"\\ud800\"]", 10, CAIRN_EJSON)); /* lone surrogate */
	CHECK(refused("[\"\\udc00\"]", 10, CAIRN_EJSON));
	CHECK(refused("[\"\\x\"]", 6, CAIRN_EJSON));
	CHECK(refused("[\"\\u12\"]", 8, CAIRN_EJSON));
	CHECK(refused("[\"a\tb\"]", 7, CAIRN_EJSON)); /* raw control character */
	CHECK(refused("[\"abc", 5, CAIRN_EJSON));
	CHECK(refused("[\"abc\\", 6, CAIRN_EJSON));
	CHECK(refused("{\"a\" 1}", 7, CAIRN_EJSON));
	CHECK(refused("{1:2}", 5, CAIRN_EJSON));
	CHECK(refused("[1,]", 4, CAIRN_EJSON));
	/* Strings decode escapes and may hold NUL; keys are found by bytes. */
	v = jv_parse(&a, "{\"k\\u0000x\":\"a\\u0000b\",\"n\":2.5}", strlen("{\"k\\u0000x\":\"a\\u0000b\",\"n\":2.5}"), "t");
	CHECK(v && v->len == 2);
	CHECK(jv_get(v, "n") && jv_get(v, "n")->type == JV_REAL && jv_get(v, "n")->u.d == 2.5);
	CHECK(jv_getn(v, "k\0x", 3) != NULL && jv_getn(v, "k\0x", 3)->len == 3);
	/* Equality ignores member order and compares numbers by value. */
	{
		const jv *x = jv_parse(&a, "{\"a\":[1,2],\"b\":1}", strlen("{\"a\":[1,2],\"b\":1}"), "t");
		const jv *y = jv_parse(&a, "{\"b\":1.0,\"a\":[1,2]}", strlen("{\"b\":1.0,\"a\":[1,2]}"), "t");
		const jv *z = jv_parse(&a, "{\"b\":1,\"a\":[2,1]}", strlen("{\"b\":1,\"a\":[2,1]}"), "t");

		CHECK(x && y && z && jv_equal(x, y) && !jv_equal(x, z));
	}
	/* A merge patch: null removes, objects merge, the rest replaces. */
	{
		const jv *t = jv_parse(&a, "{\"a\":1,\"b\":{\"c\":1,\"d\":2},\"e\":3}", strlen("{\"a\":1,\"b\":{\"c\":1,\"d\":2},\"e\":3}"), "t");
		const jv *p = jv_parse(&a, "{\"a\":null,\"b\":{\"c\":null,\"x\":9},\"f\":[1]}", strlen("{\"a\":null,\"b\":{\"c\":null,\"x\":9},\"f\":[1]}"), "t");
		const jv *m = t && p ? jv_merge_patch(&a, t, p) : NULL;
		buf b = BUF_INIT;

		CHECK(m);
		jv_canon(m, &b);
		buf_cstr(&b);
		CHECK(strcmp((char *)b.p, "{\"b\":{\"d\":2,\"x\":9},\"e\":3,\"f\":[1]}") == 0);
		buf_release(&b);
	}
	arena_release(&a);
}

/* The member walk over canonical objects: keys and value bytes in order, and what it refuses. */
void test_json_members(void)
{
	const char *s = "{\"a\":[1,{\"x\":\"}\"}],\"b\":\"q\\\"u,o}te\",\"c\":{\"d\":[]},\"e\":-1.5e+20,\"f\":null}";
	static const char *const want[][2] = {
		{"a", "[1,{\"x\":\"}\"}]"}, {"b", "\"q\\\"u,o}te\""}, {"c", "{\"d\":[]}"},
		{"e", "-1.5e+20"}, {"f", "null"},
	};
	size_t pos = 0, i = 0;
	jmember m;
	int r;

	while ((r = json_member_next(s, strlen(s), &pos, &m)) == 1) {
		CHECK(i < 5);
		CHECK(test_streq(m.key, m.key_len, want[i][0]));
		CHECK(test_streq(m.val, m.val_len, want[i][1]));
		i++;
	}
	CHECK(r == 0 && i == 5);
	pos = 0;
	CHECK(json_member_next("{}", 2, &pos, &m) == 0);
	pos = 0;
	CHECK(json_member_next("[1]", 3, &pos, &m) == -1);
	pos = 0;
	CHECK(json_member_next("{\"a\\u0062\":1}", 13, &pos, &m) == -1); /* an escaped key */
	pos = 0;
	CHECK(json_member_next("{\"a\":\"open", 10, &pos, &m) == -1); /* cut short */
	pos = 0;
	CHECK(json_member_next("{\"a\"", 4, &pos, &m) == -1);
}

/* Reading one top-level member without parsing the rest: what a JSON-RPC error's id needs. */
void test_json_peek(void)
{
	static const struct {
		const char *in, *name, *want; /* want NULL: not found */
	} cases[] = {
		{"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}", "id", "7"},
		{" { \"a\" : [1,{\"id\":2}] ,\n\t\"id\" : \"x\\\"y\" , \"b\":1}", "id", "\"x\\\"y\""},
		{"{\"a\":\"}]\\\\\",\"id\":-3}", "id", "-3"},
		{"{\"id\":{\"k\":[]},\"z\":", "id", "{\"k\":[]}"}, /* broken after it */
		{"{\"a\":1,\"id\":null}", "id", "null"},
		{"{\"a\":1}", "id", NULL},
		{"{\"a\":1,\"id\":5", "id", NULL},	  /* the object does not close after it */
		{"{\"a\" 1,\"id\":5}", "id", NULL}, /* not members before it */
		{"[{\"id\":1}]", "id", NULL},
		{"{\"i\\u0064\":1}", "id", NULL},	  /* an escaped key is not compared */
		{"{\"idx\":1,\"id\":2}", "id", "2"},
		{"", "id", NULL},
		{"{", "id", NULL},
		{"{\"id\":}", "id", NULL},
	};
	char deep[4096];
	const char *v;
	size_t n, len;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int r = json_peek_member(cases[i].in, strlen(cases[i].in), cases[i].name, &v, &len);

		if (r != (cases[i].want != NULL) || (r && !test_streq(v, len, cases[i].want)))
			fprintf(stderr, "    case %zu: %s: got %d %.*s\n", i, cases[i].in, r,
				r ? (int)len : 0, r ? v : "");
		CHECK(r == (cases[i].want != NULL));
		CHECK(!r || test_streq(v, len, cases[i].want));
	}
	/* Past the reader's depth: jv_parse refuses it, the id is still read. */
	n = (size_t)snprintf(deep, sizeof(deep), "{\"jsonrpc\":\"2.0\",\"params\":");
	for (int i = 0; i < 1000; i++)
		deep[n++] = '[';
	for (int i = 0; i < 1000; i++)
		deep[n++] = ']';
	n += (size_t)snprintf(deep + n, sizeof(deep) - n, ",\"id\":\"r-1\"}");
	{
		arena a = ARENA_INIT;

		CHECK(jv_parse(&a, deep, n, "t") == NULL);
		arena_release(&a);
	}
	CHECK(json_peek_member(deep, n, "id", &v, &len) == 1 && test_streq(v, len, "\"r-1\""));
}

/* U+0000 in strings and member names, found for the readers that refuse it; nesting depth. */
void test_json_nul(void)
{
	arena a = ARENA_INIT;
	const char *in = "{\"ok\":\"a b\",\"n\":1,\"s\":\"x\\u0000y\",\"k\\u0000\":2,\"o\":{\"t\":\"\\u0000\"}}";
	const jv *v = jv_parse(&a, in, strlen(in), "t");

	CHECK(v != NULL);
	CHECK(!jv_str_nul(jv_get(v, "ok")) && !jv_str_nul(jv_get(v, "n")) && !jv_str_nul(NULL));
	CHECK(jv_str_nul(jv_get(v, "s")));
	CHECK(jv_key_nul(jv_getn(v, "k\0", 2)) && !jv_key_nul(jv_get(v, "s")));
	v = jv_parse(&a, "{\"a\":[[1]],\"b\":2}", strlen("{\"a\":[[1]],\"b\":2}"), "t");
	CHECK(v && jv_depth_ok(v, 3) && !jv_depth_ok(v, 2));
	CHECK(jv_depth_ok(jv_get(v, "b"), 0));
	arena_release(&a);
}

/* The tunables' one entry point: names, ranges, old values, defaults. */
void test_util_knob(void)
{
	uint64_t old = 0;

	CHECK(knob(KNOB_QUERY_SMALL) == 256 && knob(KNOB_VINDEX_MIN) == 10000);
	OK(knob_set("query_small", 4, &old));
	CHECK(old == 256 && knob(KNOB_QUERY_SMALL) == 4);
	OK(knob_set("query_small", 8, NULL));
	CHECK(knob(KNOB_QUERY_SMALL) == 8);
	/* Out of range and unknown names are refused, the value unchanged. */
	CHECK_RC(knob_set("query_small", 0, &old), CAIRN_EINVAL);
	CHECK(strstr(cairn_errmsg(), "1 to") && knob(KNOB_QUERY_SMALL) == 8);
	CHECK_RC(knob_set("QUERY_SMALL", 9, &old), CAIRN_EINVAL);
	CHECK_RC(knob_set("query_smal", 9, &old), CAIRN_EINVAL);
	CHECK_RC(knob_set("query_smalll", 9, &old), CAIRN_EINVAL);
	CHECK_RC(knob_set(NULL, 9, &old), CAIRN_EINVAL);
	CHECK(knob(KNOB_QUERY_SMALL) == 8);
	/* The whole range of one knob, ends included. */
	OK(knob_set("compact_every_ms", 1, NULL));
	OK(knob_set("compact_every_ms", INT32_MAX, NULL));
	CHECK_RC(knob_set("compact_every_ms", (uint64_t)INT32_MAX + 1, NULL), CAIRN_EINVAL);
	knob_reset();
	CHECK(knob(KNOB_QUERY_SMALL) == 256 && knob(KNOB_COMPACT_EVERY_MS) == 3600000);
}
