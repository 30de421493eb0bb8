/*
 * The built-in embedder on the committed table cut from the GloVe vectors
 * (tests/data/glove-mini.json): its vectors against a reference computed
 * here from the table's floats (SIF weights, the common direction by power
 * iteration, unit length), then the edges: unknown words, identifiers kept
 * whole, bad files, bad arguments.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/analyze.h"
#include "base/json.h"
#include "tests.h"
#include "base/arena.h"

#define MINI "tests/data/glove-mini.json"
#define PAIRS "tests/data/paraphrases.tsv"
#define DIM 100

/* The table as the reference reads it. */
typedef struct rword {
	const char *w;
	size_t n;
	double v[DIM];
	double p; /* probability by rank */
} rword;

static rword *RW;
static size_t NRW;
static double PC[DIM];

static char *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	char *s = NULL;

	if (f && !fseek(f, 0, SEEK_END)) {
		long len = ftell(f);

		rewind(f);
		s = malloc((size_t)len + 1);
		if (s && fread(s, 1, (size_t)len, f) == (size_t)len) {
			s[len] = '\0';
			*n = (size_t)len;
		} else {
			free(s);
			s = NULL;
		}
	}
	if (f)
		fclose(f);
	return s;
}

static int load_reference(arena *a)
{
	size_t n;
	char *s = slurp(MINI, &n);
	const jv *root = s ? jv_parse(a, s, n, "mini") : NULL, *vec = jv_get(root, "vectors");
	double h;

	if (!jv_is(vec, JV_OBJECT))
		return free(s), -1;
	NRW = vec->len;
	RW = calloc(NRW, sizeof(*RW));
	h = log((double)NRW + 1) + 0.5772156649;
	for (size_t i = 0; i < NRW; i++) {
		const jv *m = &vec->u.items[i];

		RW[i].w = m->key;
		RW[i].n = m->key_len;
		for (int d = 0; d < DIM; d++)
			RW[i].v[d] = jv_number(&m->u.items[d]);
		RW[i].p = 1.0 / ((jv_number(&m->u.items[DIM + 1]) + 1) * h);
	}
	/* The probability-weighted first principal component. */
	for (int d = 0; d < DIM; d++)
		PC[d] = 1 / sqrt(DIM);
	for (int it = 0; it < 50; it++) {
		double y[DIM] = {0}, norm = 0;

		for (size_t i = 0; i < NRW; i++) {
			double dot = 0;

			for (int d = 0; d < DIM; d++)
				dot += RW[i].v[d] * PC[d];
			for (int d = 0; d < DIM; d++)
				y[d] += RW[i].p * dot * RW[i].v[d];
		}
		for (int d = 0; d < DIM; d++)
			norm += y[d] * y[d];
		for (int d = 0; d < DIM; d++)
			PC[d] = y[d] / sqrt(norm);
	}
	free(s);
	return 0;
}

static const rword *rfind(const char *w, size_t n)
{
	for (size_t i = 0; i < NRW; i++)
		if (RW[i].n == n && memcmp(RW[i].w, w, n) == 0)
			return &RW[i];
	return NULL;
}

struct rtoks {
	token t[256];
	char s[256][TOKEN_CAP];
	int used[256];
	size_t n;
};

static int rtake(void *ctx, const token *t)
{
	struct rtoks *x = ctx;

	if (x->n < 256) {
		x->t[x->n] = *t;
		memcpy(x->s[x->n], t->s, t->len);
		x->t[x->n].s = x->s[x->n];
		x->used[x->n] = 0;
		x->n++;
	}
	return 0;
}

/* The reference vector of text: SIF-weighted mean, less the common direction, unit length. */
static size_t reference(const char *text, double *out)
{
	static struct rtoks x;
	double acc[DIM] = {0}, dot = 0, norm = 0;
	uint32_t pos = 0;
	size_t known = 0;

	x.n = 0;
	analyze(text, strlen(text), &pos, rtake, &x);
	for (int pass = 0; pass < 2; pass++) /* identifiers the table knows whole, then words */
		for (size_t i = 0; i < x.n; i++) {
			const rword *r;

			if ((pass == 0) != (x.t[i].kind == TK_WHOLE) || x.used[i] ||
			    !(r = rfind(x.t[i].s, x.t[i].len)))
				continue;
			for (int d = 0; d < DIM; d++)
				acc[d] += 1e-3 / (1e-3 + r->p) * r->v[d];
			known++;
			for (size_t j = 0; pass == 0 && j < x.n; j++)
				if (x.t[j].start >= x.t[i].start && x.t[j].end <= x.t[i].end)
					x.used[j] = 1;
		}
	for (int d = 0; d < DIM; d++)
		dot += acc[d] * PC[d];
	for (int d = 0; d < DIM; d++) {
		acc[d] -= dot * PC[d];
		norm += acc[d] * acc[d];
	}
	for (int d = 0; d < DIM; d++)
		out[d] = known ? acc[d] / sqrt(norm) : 0;
	return known;
}

static double cosf_d(const float *a, const double *b)
{
	double s = 0;

	for (int d = 0; d < DIM; d++)
		s += a[d] * b[d];
	return s;
}

void test_embed_reference(void)
{
	arena a = ARENA_INIT;
	cairn_embedder *e = NULL;
	FILE *f;
	char line[1024];
	size_t checked = 0;
	double worst = 1;

	OK(cairn_embedder_convert(MINI, test_path("mini.cemb"), "glove-mini/1"));
	OK(cairn_embedder_open(test_path("mini.cemb"), &e));
	CHECK(load_reference(&a) == 0 && NRW > 500);
	if (!e || !RW)
		goto out;
	CHECK(cairn_embedder_dim(e) == DIM && strcmp(cairn_embedder_model(e), "glove-mini/1") == 0);
	f = fopen(PAIRS, "r");
	CHECK(f != NULL);
	while (f && fgets(line, sizeof(line), f)) {
		char *tab = strchr(line, '\t');

		line[strcspn(line, "\r\n")] = '\0';
		if (line[0] == '#' || !tab)
			continue;
		*tab = '\0';
		for (int k = 0; k < 2; k++) {
			const char *s = k ? tab + 1 : line;
			double ref[DIM], norm = 0, c;
			float v[DIM];
			size_t known;

			OK(cairn_embed(e, s, strlen(s), v, DIM, &known));
			CHECK(known == reference(s, ref) && known > 0);
			for (int d = 0; d < DIM; d++)
				norm += (double)v[d] * v[d];
			CHECK(fabs(norm - 1) < 1e-4);
			c = fabs(cosf_d(v, ref)); /* the direction's sign is the power iteration's */
			worst = c < worst ? c : worst;
			checked++;
		}
	}
	if (f)
		fclose(f);
	CHECK(checked == 80);
	/* int8 components with a scale per word: the reference's direction, within 1e-3 */
	if (worst < 0.999)
		fprintf(stderr, "    worst cosine to the reference %.6f\n", worst);
	CHECK(worst >= 0.999);
out:
	cairn_embedder_close(e);
	free(RW);
	RW = NULL;
	arena_release(&a);
}

void test_embed_edges(void)
{
	cairn_embedder *e = NULL;
	float v[DIM], w[DIM];
	size_t known = 99;
	FILE *f;

	OK(cairn_embedder_convert(MINI, test_path("mini.cemb"), "glove-mini/1"));
	OK(cairn_embedder_open(test_path("mini.cemb"), &e));
	if (!e)
		return;
	/* The same text, the same vector; case and accents fold as in search. */
	OK(cairn_embed(e, "The Steel valves", 16, v, DIM, &known));
	OK(cairn_embed(e, "the steel VALVES", 16, w, DIM, NULL));
	CHECK(known == 3 && memcmp(v, w, sizeof(v)) == 0);
	/* Nothing known: all zeros, no word. */
	OK(cairn_embed(e, "xqzzy plorf", 11, v, DIM, &known));
	CHECK(known == 0);
	for (int d = 0; d < DIM; d++)
		CHECK(v[d] == 0);
	OK(cairn_embed(e, "", 0, v, DIM, &known));
	CHECK(known == 0);
	/* An identifier the table knows whole is one word, not its parts. */
	OK(cairn_embed(e, "e-mail", 6, v, DIM, &known));
	CHECK(known == 1);
	/* Errors. */
	CHECK_RC(cairn_embed(e, "steel", 5, v, DIM - 1, &known), CAIRN_ELIMIT);
	CHECK_RC(cairn_embed(e, "st\xff" "el", 5, v, DIM, &known), CAIRN_EUTF8);
	CHECK_RC(cairn_embed(NULL, "steel", 5, v, DIM, &known), CAIRN_EINVAL);
	cairn_embedder_close(e);
	CHECK_RC(cairn_embedder_open(test_path("none.cemb"), &e), CAIRN_ENOTFOUND);
	{
		/* the magic, then a header that does not add up (a version 1 file cut short) */
		uint8_t bad[200];
		FILE *g;

		memset(bad, 1, sizeof(bad));
		memcpy(bad, "CAIRN-EMB", 10);
		bad[10] = 1;
		f = fopen(test_path("bad.cemb"), "wb");
		fwrite(bad, 1, sizeof(bad), f);
		fclose(f);
		CHECK_RC(cairn_embedder_open(test_path("bad.cemb"), &e), CAIRN_EFORMAT);
		g = fopen(test_path("mini.cemb"), "rb");
		f = fopen(test_path("cut.cemb"), "wb");
		for (int i = 0; g && f && i < 5000; i++)
			fputc(fgetc(g), f);
		if (g)
			fclose(g);
		fclose(f);
		CHECK_RC(cairn_embedder_open(test_path("cut.cemb"), &e), CAIRN_EFORMAT);
	}
	CHECK_RC(cairn_embedder_open(MINI, &e), CAIRN_EFORMAT);
	/* Bad sources: the mistake's byte; nothing written. */
	f = fopen(test_path("bad.json"), "wb");
	fputs("{\"dimensions\":2,\"vectors\":{\"a\":[1,2,3,0],\"b\":[1,2]}}", f);
	fclose(f);
	CHECK_RC(cairn_embedder_convert(test_path("bad.json"), test_path("out.cemb"), "x"), CAIRN_EJSON);
	CHECK(strstr(cairn_errmsg(), "byte") != NULL);
	f = fopen(test_path("out.cemb"), "rb");
	CHECK(f == NULL);
	if (f)
		fclose(f);
	CHECK_RC(cairn_embedder_convert(test_path("nope.json"), test_path("out.cemb"), "x"), CAIRN_EIO);
	CHECK_RC(cairn_embedder_convert(MINI, test_path("out.cemb"),
					"an-id-longer-than-sixty-four-bytes-is-refused-because-the-file-keeps-64"),
		 CAIRN_EINVAL);
}
