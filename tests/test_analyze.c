/* Text analysis: tokens of tricky inputs against a golden file, invariants, stemming. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <utf8proc.h>

#include "model/analyze.h"
#include "tests.h"

#define GOLDEN "tests/golden/analyze.txt"

typedef struct render {
	char out[8192];
	size_t n;
} render;

static int put_token(void *ctx, const token *t)
{
	render *r = ctx;
	int m = snprintf(r->out + r->n, sizeof(r->out) - r->n, " %.*s@%u%s", (int)t->len, t->s,
			 t->pos, t->kind == TK_WHOLE ? "w" : t->kind == TK_CJK ? "c" : "");

	if (m < 0 || (size_t)m >= sizeof(r->out) - r->n)
		return -1;
	r->n += (size_t)m;
	return 0;
}

static int render_text(const char *s, size_t n, uint32_t *pos, render *r)
{
	r->n = 0;
	r->out[0] = '\0';
	return analyze(s, n, pos, put_token, r);
}

/* The tokens of a text, copied. */
typedef struct toks {
	struct {
		char s[TOKEN_CAP];
		size_t len, start, end;
		int kind;
	} t[256];
	size_t n;
} toks;

static int take_tok(void *ctx, const token *t)
{
	toks *x = ctx;

	if (x->n < 256) {
		memcpy(x->t[x->n].s, t->s, t->len);
		x->t[x->n].len = t->len;
		x->t[x->n].start = t->start;
		x->t[x->n].end = t->end;
		x->t[x->n].kind = t->kind;
		x->n++;
	}
	return 0;
}

/*
 * Where each token is in the text: its bytes [start, end) analyzed alone
 * give the same word (an identifier kept whole: the same whole, last).
 */
static int offsets_ok(const char *text)
{
	toks *all = calloc(1, sizeof(*all)), *one = calloc(1, sizeof(*one));
	uint32_t pos = 0;
	int ok = all && one;

	if (ok)
		analyze(text, strlen(text), &pos, take_tok, all);
	for (size_t i = 0; ok && i < all->n; i++) {
		size_t s = all->t[i].start, e = all->t[i].end, j;

		one->n = 0;
		if (s >= e || e > strlen(text)) {
			ok = 0;
			break;
		}
		analyze(text + s, e - s, &pos, take_tok, one);
		j = all->t[i].kind == TK_WHOLE ? one->n - 1 : 0;
		ok = one->n && one->t[j].kind == all->t[i].kind && one->t[j].len == all->t[i].len &&
		     memcmp(one->t[j].s, all->t[i].s, all->t[i].len) == 0;
		if (!ok)
			fprintf(stderr, "    %s: token %zu at [%zu, %zu) is not \"%.*s\" alone\n", text, i,
				s, e, (int)all->t[i].len, all->t[i].s);
	}
	free(all);
	free(one);
	return ok;
}

void test_analyze_golden(void)
{
	FILE *f = fopen(GOLDEN, "r");
	char line[8192], text[8192];
	size_t cases = 0;
	int have = 0;

	CHECK(f != NULL);
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		size_t n = strlen(line);

		while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = '\0';
		if (line[0] == '>' && line[1] == ' ') {
			snprintf(text, sizeof(text), "%s", line + 2);
			have = 1;
		} else if (line[0] == '=' && have) {
			render r;
			uint32_t pos = 0;

			OK(render_text(text, strlen(text), &pos, &r));
			if (strcmp(r.out, line + 1) != 0) {
				fprintf(stderr, "    %s\n    want:%s\n    got: %s\n", text, line + 1, r.out);
				CHECK(0);
			}
			CHECK(offsets_ok(text));
			cases++;
			have = 0;
		}
	}
	fclose(f);
	CHECK(cases >= 25);
}

struct inv {
	uint32_t last_pos;
	size_t n;
	int bad;
};

static int check_token(void *ctx, const token *t)
{
	struct inv *v = ctx;
	size_t i = 0;

	if (!t->len || t->len > TOKEN_CAP)
		v->bad = 1;
	while (i < t->len) { /* valid UTF-8 */
		utf8proc_int32_t cp;
		utf8proc_ssize_t l = utf8proc_iterate((const utf8proc_uint8_t *)t->s + i,
						      (utf8proc_ssize_t)(t->len - i), &cp);

		if (l <= 0) {
			v->bad = 1;
			break;
		}
		i += (size_t)l;
	}
	for (i = 0; i < t->len; i++)
		if ((t->s[i] >= 'A' && t->s[i] <= 'Z') || t->s[i] == ' ')
			v->bad = 1;
	if (t->kind != TK_WHOLE) {
		if (v->n && t->pos != v->last_pos + 1)
			v->bad = 1;
		v->last_pos = t->pos;
	}
	if (t->kind == TK_WHOLE && t->pos > v->last_pos)
		v->bad = 1;
	v->n++;
	return 0;
}

/* Random bytes, some of them UTF-8 and connectors: tokens stay well formed. */
void test_analyze_invariants(void)
{
	static const char *const pieces[] = {"a", "Z", "9", "-", "_", ".", " ", "\xc3\xa9", "\xe6\x9d\xb1",
					     "\xff", "\xc3", "\0", "\xcc\x81", "O", "x", "\xe2\x80\x99", "@"};
	char s[300];

	srand(7);
	for (int it = 0; it < 3000; it++) {
		struct inv v = {0, 0, 0};
		size_t n = 0;
		uint32_t pos = 5;

		while (n < sizeof(s) - 8 && rand() % 40) {
			const char *p = pieces[rand() % 17];
			size_t l = p[0] ? strlen(p) : 1;

			memcpy(s + n, p, l);
			n += l;
		}
		OK(analyze(s, n, &pos, check_token, &v));
		CHECK(!v.bad);
		CHECK(pos >= 5 && (!v.n || pos == v.last_pos + 1));
		if (v.bad) {
			fprintf(stderr, "    input of %zu bytes\n", n);
			break;
		}
	}
}

static int stop_at_two(void *ctx, const token *t)
{
	(void)t;
	return ++*(int *)ctx == 2 ? 42 : 0;
}

void test_analyze_positions(void)
{
	render r;
	uint32_t pos = 10;
	int seen = 0;

	/* Positions go on from call to call: a Record's title, then its values. */
	OK(render_text("Acme Bearings", 13, &pos, &r));
	CHECK(strcmp(r.out, " acme@10 bearings@11") == 0);
	CHECK(pos == 12);
	OK(render_text("S-1", 3, &pos, &r));
	CHECK(strcmp(r.out, " s@12 1@13 s-1@12w") == 0);
	CHECK(pos == 14);
	/* Nothing to index: no token, no position. */
	OK(render_text(" -- ... \xf0\x9f\x9a\x80 ", 12, &pos, &r));
	CHECK(r.n == 0 && pos == 14);
	/* Bytes that are not UTF-8 separate words; a NUL too. */
	pos = 0;
	OK(render_text("ab\xff" "cd\0ef", 8, &pos, &r));
	CHECK(strcmp(r.out, " ab@0 cd@1 ef@2") == 0);
	/* A callback's error stops the analysis and comes back. */
	pos = 0;
	CHECK(analyze("one two three", 13, &pos, stop_at_two, &seen) == 42);
	CHECK(seen == 2);
}

void test_analyze_stem(void)
{
	stemmer *en = stemmer_new("english"), *de = stemmer_new("german");
	const char *out;
	size_t n;

	CHECK(en && de);
	if (!en || !de) {
		stemmer_free(en);
		stemmer_free(de);
		return;
	}
	n = stem(en, "running", 7, &out);
	CHECK(n == 3 && memcmp(out, "run", 3) == 0);
	n = stem(en, "suppliers", 9, &out);
	CHECK(n == 8 && memcmp(out, "supplier", 8) == 0);
	n = stem(en, "bearing", 7, &out);
	CHECK(n == 4 && memcmp(out, "bear", 4) == 0);
	n = stem(en, "1001", 4, &out);
	CHECK(n == 4 && memcmp(out, "1001", 4) == 0);
	n = stem(de, "lieferanten", 11, &out);
	CHECK(n == 9 && memcmp(out, "lieferant", 9) == 0);
	CHECK(stemmer_new("klingon") == NULL);
	CHECK(stem_language_ok("english") && stem_language_ok("french"));
	CHECK(!stem_language_ok("klingon") && !stem_language_ok(""));
	stemmer_free(en);
	stemmer_free(de);
}
