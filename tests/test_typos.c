/*
 * Typo correction against an exact reference: lexicons of random words (the
 * densest prefixes a lexicon can have), each word the title of one Record,
 * so a search's hits are the words it corrected to. Words of every length
 * and every first letter, misspelled in every way a correction counts, and
 * the schema's `typos` lengths over their range: the hits are the 4 closest
 * words by the reference's count, never fewer because of where in the
 * alphabet a word lies.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests.h"

#define WORD_MAX 16

typedef struct lexicon {
	char (*w)[WORD_MAX];
	size_t n;
} lexicon;

static int cmp_word(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* n distinct random words of 5 to 14 letters (and, with short, of 1 to 4 too), sorted. */
static int lexicon_make(lexicon *lx, size_t n, int short_too, unsigned seed)
{
	size_t have = 0;

	lx->w = calloc(n, WORD_MAX);
	lx->n = 0;
	if (!lx->w)
		return -1;
	srand(seed);
	while (have < n) {
		size_t len = short_too && rand() % 4 == 0 ? 1 + (size_t)(rand() % 4)
							   : 5 + (size_t)(rand() % 10);

		for (size_t i = 0; i < len; i++)
			lx->w[have][i] = (char)('a' + rand() % 26);
		lx->w[have][len] = '\0';
		have++;
		if (have == n) { /* drop the duplicates, then fill up again */
			qsort(lx->w, have, WORD_MAX, cmp_word);
			size_t u = 0;

			for (size_t i = 0; i < have; i++)
				if (!u || strcmp(lx->w[i], lx->w[u - 1]) != 0)
					memmove(lx->w[u++], lx->w[i], WORD_MAX);
			have = u;
		}
	}
	lx->n = n;
	return 0;
}

static int lexicon_has(const lexicon *lx, const char *w)
{
	return bsearch(w, lx->w, lx->n, WORD_MAX, cmp_word) != NULL;
}

/* A Domain whose Records Doc:i have word i as title, with these typo lengths. */
static int domain_make(cairn_store *st, const char *dom, const lexicon *lx, int one, int two)
{
	char schema[256];
	cairn_commit_options co = {0};
	cairn_changeset *cs = NULL;
	int rc;

	snprintf(schema, sizeof(schema),
		 "{\"search\":{\"language\":\"none\",\"stop_words\":[],\"typos\":{\"one\":%d,\"two\":%d}},"
		 "\"kinds\":[{\"name\":\"Doc\"}]}",
		 one, two);
	co.domain = dom;
	co.prov.actor = "test";
	if ((rc = cairn_domain_create(st, dom)) ||
	    (rc = cairn_schema_apply(st, &co, schema, strlen(schema), NULL)) ||
	    (rc = cairn_changeset_new(&cs)))
		return rc;
	for (size_t i = 0; i < lx->n && !rc; i++) {
		char key[24];
		int kn = snprintf(key, sizeof(key), "%zu", i);

		rc = cairn_changeset_put(cs, "Doc", key, (size_t)kn, lx->w[i], strlen(lx->w[i]), NULL, 0);
		if (!rc && (cairn_changeset_count(cs) == 10000 || i + 1 == lx->n)) {
			rc = cairn_commit(st, &co, cs, NULL);
			cairn_changeset_clear(cs);
		}
	}
	cairn_changeset_free(cs);
	return rc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

typedef struct near {
	const char *w;
	unsigned d;
} near;

static int near_cmp(const void *a, const void *b)
{
	const near *x = a, *y = b;

	if (x->d != y->d)
		return x->d < y->d ? -1 : 1;
	return strcmp(x->w, y->w);
}

/* What the reference finds for q: its sorted words, space-separated, in out. */
static void reference(const lexicon *lx, const char *q, int one, int two, char *out, size_t cap)
{
	size_t m = strlen(q), nn = 0, len = 0;
	unsigned k = (int)m < one ? 0 : (int)m < two ? 1 : 2;
	near best[5];
	const char *take[4];
	size_t nt = 0;

	out[0] = '\0';
	if (lexicon_has(lx, q)) {
		snprintf(out, cap, "%s", q);
		return;
	}
	for (size_t i = 0; i < lx->n && k; i++) {
		size_t n = strlen(lx->w[i]);
		unsigned d;

		if (n + 2 < m || n > m + 2)
			continue;
		d = test_typo_edits(q, m, lx->w[i]);
		if (d < 1 || d > k)
			continue;
		best[nn] = (near){lx->w[i], d};
		qsort(best, ++nn, sizeof(best[0]), near_cmp);
		if (nn == 5)
			nn = 4;
	}
	for (size_t i = 0; i < nn; i++)
		take[nt++] = best[i].w;
	qsort(take, nt, sizeof(take[0]), cmp_str);
	for (size_t i = 0; i < nt; i++)
		len += (size_t)snprintf(out + len, cap - len, "%s%s", i ? " " : "", take[i]);
}

/* What the search finds for q: the titles of its hits, sorted, space-separated. */
static int searched(cairn_store *st, const char *dom, const char *q, char *out, size_t cap)
{
	cairn_read_options ro = {0};
	cairn_search_options so = {0};
	cairn_hit hits[100];
	char words[100][WORD_MAX + 8];
	const char *p[100];
	size_t n = 0, len = 0;
	cairn_txn *t;
	int rc;

	ro.domain = dom;
	so.text = q;
	so.limit = 100;
	out[0] = '\0';
	if ((rc = cairn_txn_begin(st, &ro, &t)))
		return rc;
	rc = cairn_search(t, &so, hits, 100, &n, NULL);
	for (size_t i = 0; i < n && !rc; i++) {
		size_t tl = hits[i].rec.title_len < WORD_MAX ? hits[i].rec.title_len : WORD_MAX;

		memcpy(words[i], hits[i].rec.title, tl);
		words[i][tl] = '\0';
		p[i] = words[i];
	}
	cairn_txn_end(t);
	qsort(p, n, sizeof(p[0]), cmp_str);
	for (size_t i = 0; i < n && !rc; i++)
		len += (size_t)snprintf(out + len, cap - len, "%s%s", i ? " " : "", p[i]);
	return rc;
}

/* The misspellings of w tried: kind 0 to 6 (some do not apply to every length). */
static int misspell(const char *w, int kind, char *out)
{
	size_t n = strlen(w), mid = n / 2;

	strcpy(out, w);
	switch (kind) {
	case 0: /* two middle letters swapped */
		if (n < 3 || w[mid - 1] == w[mid])
			return 0;
		out[mid - 1] = w[mid];
		out[mid] = w[mid - 1];
		return 1;
	case 1: /* a middle letter replaced */
		out[mid] = w[mid] == 'q' ? 'x' : 'q';
		return 1;
	case 2: /* a letter left out */
		memmove(out + mid, w + mid + 1, n - mid);
		return n > 1;
	case 3: /* the first letter replaced */
		out[0] = w[0] == 'z' ? 'b' : (char)(w[0] + 1);
		return 1;
	case 4: /* the first letter left out */
		memmove(out, w + 1, n);
		return n > 1;
	case 5: /* two edits: a swap and a replacement */
		if (n < 6 || w[1] == w[2])
			return 0;
		out[1] = w[2];
		out[2] = w[1];
		out[n - 1] = w[n - 1] == 'q' ? 'x' : 'q';
		return 1;
	case 6: /* a letter put before the first */
		out[0] = w[0] == 'a' ? 'b' : 'a';
		memcpy(out + 1, w, n + 1);
		return 1;
	}
	return 0;
}

/*
 * For each first letter and each length, a word of the lexicon misspelled
 * each way: the search's corrections are the reference's.
 */
static void compare(cairn_store *st, const char *dom, const lexicon *lx, int one, int two,
		    int *tried, int *corrected)
{
	for (int c = 'a'; c <= 'z'; c++)
		for (size_t len = 1; len <= 14; len++) {
			const char *w = NULL;

			for (size_t i = 0; i < lx->n && !w; i++) /* the first of its kind */
				if (lx->w[i][0] == c && strlen(lx->w[i]) == len)
					w = lx->w[i];
			if (!w)
				continue;
			for (int kind = 0; kind <= 6; kind++) {
				char q[WORD_MAX + 2], want[512], got[512];

				if (!misspell(w, kind, q))
					continue;
				reference(lx, q, one, two, want, sizeof(want));
				OK(searched(st, dom, q, got, sizeof(got)));
				if (strcmp(got, want) != 0) {
					fprintf(stderr, "    %s (typos %d/%d, %zu words): %s from %s\n"
							"      got  [%s]\n      want [%s]\n",
						dom, one, two, lx->n, q, w, got, want);
					CHECK(0);
					return;
				}
				(*tried)++;
				*corrected += strstr(want, w) != NULL;
			}
		}
}

void test_search_typos_exact(void)
{
	cairn_open_options oo = {.flags = CAIRN_OPEN_CREATE | CAIRN_OPEN_NOSYNC | CAIRN_OPEN_NO_BACKGROUND};
	/* The defaults, then the ends of the range: every length corrected, 2 edits from 1 letter, ... */
	static const int settings[][2] = {{5, 9}, {1, 1}, {1, 64}, {3, 4}, {64, 64}};
	cairn_store *st = NULL;
	lexicon small = {0}, big = {0};
	int tried = 0, corrected = 0, corrected_default = 0, before;

	OK(cairn_open(test_path("store"), &oo, &st));
	CHECK(lexicon_make(&small, 1000, 1, 7) == 0);
	CHECK(lexicon_make(&big, 30000, 0, 11) == 0);
	if (!st || !small.w || !big.w)
		goto out;
	for (size_t i = 0; i < sizeof(settings) / sizeof(settings[0]); i++) {
		char dom[16];

		snprintf(dom, sizeof(dom), "s%zu", i);
		OK(domain_make(st, dom, &small, settings[i][0], settings[i][1]));
		compare(st, dom, &small, settings[i][0], settings[i][1], &tried, &corrected);
		if (i == 0)
			corrected_default = corrected;
	}
	/* 30,000 words: every 3-letter prefix there is, the walk's hardest case. */
	OK(domain_make(st, "big", &big, 5, 9));
	before = corrected;
	compare(st, "big", &big, 5, 9, &tried, &corrected);
	fprintf(stderr, "    %d misspellings, %d led back to their word\n", tried, corrected);
	/* The reference must not be empty: most misspellings lead back to their word. */
	CHECK(corrected_default > 100);
	CHECK(corrected - before > 500);
out:
	free(small.w);
	free(big.w);
	cairn_close(st);
}
