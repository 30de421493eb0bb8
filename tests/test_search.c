/*
 * Full-text search against a brute-force BM25 reference: random Records and
 * queries, on main, on a branch and at past revisions; the same hits in the
 * same order with the same scores. Then the edges: Kinds, limits, errors.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lmdb.h>

#include "model/analyze.h"
#include "base/json.h"
#include "query/read.h"
#include "tests.h"
#include "base/knob.h"
#include "index/text/text.h"

static const char sschema[] =
	"{\"search\":{\"language\":\"english\",\"title_weight\":2,\"k1\":1.2,\"b\":0.75,"
	"\"stop_words\":[]},"
	"\"kinds\":["
	"{\"name\":\"Doc\",\"attributes\":["
	"{\"name\":\"body\",\"type\":\"string\",\"search\":true},"
	"{\"name\":\"tags\",\"type\":\"strings\",\"search\":0.5},"
	"{\"name\":\"code\",\"type\":\"string\"}]},"
	"{\"name\":\"Note\",\"attributes\":["
	"{\"name\":\"text\",\"type\":\"string\",\"search\":2}]}]}";

static const char *const vocab[] = {
	"run",	    "runs",	"running", "runner",  "supply",	 "supplies", "supplied", "bear",
	"bears",    "bearing",	"steel",   "Steel",   "STEEL",	 "bolt",     "bolts",	 "valve",
	"valves",   "pump",	"pumps",   "pumping", "north",	 "south",    "Zürich",	 "zurich",
	"PO-2024",  "po",	"2024",	   "alpha",   "beta",	 "gamma",    "delta",	 "ever",
	"every",    "connect",	"connected", "connection", "the", "a", "of", "and",
	"PurchaseOrders", "purchaseorders", "orders"};
#define NVOCAB (sizeof(vocab) / sizeof(vocab[0]))

static int check_clean_search(cairn_store *st);
static uint64_t postings_entries(cairn_store *st);

/* What the test wrote: every Record Version, by Kind, key and revision. */
typedef struct mver {
	int kind; /* 0 Doc, 1 Note */
	char key[16];
	uint64_t rev;
	char title[200], body[200], tags[3][40], code[40];
	int n_tags;
} mver;

static mver *M;
static size_t NM, CAPM;

static void words(char *out, size_t cap, int max)
{
	int n = rand() % (max + 1);
	size_t len = 0;

	out[0] = '\0';
	for (int i = 0; i < n && len + 20 < cap; i++)
		len += (size_t)snprintf(out + len, cap - len, "%s%s", i ? " " : "",
					vocab[rand() % NVOCAB]);
}

static void json_str(char *out, size_t cap, size_t *len, const char *s)
{
	*len += (size_t)snprintf(out + *len, cap - *len, "\"%s\"", s);
}

/* One put of a random Version of (kind, key) into cs; the model keeps it (rev set later). */
/* A put of a random Version (its title random too when title is NULL), kept in M. */
static int put_random(cairn_changeset *cs, int kind, const char *key, const char *title)
{
	mver v;
	char vals[1024];
	size_t len = 0;

	memset(&v, 0, sizeof(v));
	v.kind = kind;
	snprintf(v.key, sizeof(v.key), "%s", key);
	if (title)
		snprintf(v.title, sizeof(v.title), "%s", title);
	else
		words(v.title, sizeof(v.title), 6);
	words(v.body, sizeof(v.body), 8);
	len += (size_t)snprintf(vals + len, sizeof(vals) - len, "{");
	if (kind == 0) {
		v.n_tags = rand() % 4;
		len += (size_t)snprintf(vals + len, sizeof(vals) - len, "\"body\":");
		json_str(vals, sizeof(vals), &len, v.body);
		len += (size_t)snprintf(vals + len, sizeof(vals) - len, ",\"tags\":[");
		for (int i = 0; i < v.n_tags; i++) {
			snprintf(v.tags[i], sizeof(v.tags[i]), "%s", vocab[rand() % NVOCAB]);
			if (i)
				len += (size_t)snprintf(vals + len, sizeof(vals) - len, ",");
			json_str(vals, sizeof(vals), &len, v.tags[i]);
		}
		snprintf(v.code, sizeof(v.code), "%s", vocab[rand() % NVOCAB]);
		len += (size_t)snprintf(vals + len, sizeof(vals) - len, "],\"code\":");
		json_str(vals, sizeof(vals), &len, v.code);
	} else {
		len += (size_t)snprintf(vals + len, sizeof(vals) - len, "\"text\":");
		json_str(vals, sizeof(vals), &len, v.body);
	}
	snprintf(vals + len, sizeof(vals) - len, "}");
	if (NM == CAPM) {
		CAPM = CAPM ? CAPM * 2 : 256;
		M = realloc(M, CAPM * sizeof(*M));
	}
	M[NM++] = v;
	return cairn_changeset_put(cs, kind ? "Note" : "Doc", key, strlen(key), v.title, strlen(v.title),
				   vals, strlen(vals));
}

/* ----------------------------------------------------------- reference -- */

#define MAXT 64

typedef struct rterm {
	char t[80];
	double tf_title, tf_values;
	int pos[32]; /* of a word as written: field * 100000 + its position in the field */
	int npos;
} rterm;

typedef struct rdoc {
	rterm t[MAXT];
	int n;
	double dl_title, dl_values;
} rdoc;

struct radd {
	rdoc *d;
	stemmer *st;
	double weight; /* 0: the title */
	int words;
	int field;
};

static void rterm_add(rdoc *d, char tag, const char *s, size_t n, double weight, int pos)
{
	char key[80];
	int i;

	key[0] = tag;
	memcpy(key + 1, s, n);
	key[n + 1] = '\0';
	for (i = 0; i < d->n; i++)
		if (strcmp(d->t[i].t, key) == 0)
			break;
	if (i == d->n) {
		if (d->n == MAXT)
			return;
		memset(&d->t[i], 0, sizeof(d->t[i]));
		strcpy(d->t[i].t, key);
		d->n++;
	}
	if (weight > 0)
		d->t[i].tf_values += weight;
	else
		d->t[i].tf_title += 1;
	if (pos >= 0 && d->t[i].npos < 32)
		d->t[i].pos[d->t[i].npos++] = pos;
}

static int radd_token(void *ctx, const token *t)
{
	struct radd *a = ctx;
	const char *st;
	size_t sn;

	if (t->kind != TK_WHOLE)
		a->words++;
	rterm_add(a->d, 'w', t->s, t->len, a->weight, a->field * 100000 + (int)t->pos);
	if (t->kind == TK_WORD && !t->digits) {
		sn = stem(a->st, t->s, t->len, &st);
		rterm_add(a->d, 's', st, sn, a->weight, -1);
	}
	return 0;
}

/* Each field (the title, a value) analyzed from position 0: a phrase is within one. */
static void rdoc_build(const mver *v, stemmer *st, rdoc *d)
{
	struct radd a = {d, st, 0, 0, 0};
	uint32_t pos = 0;

	memset(d, 0, sizeof(*d));
	analyze(v->title, strlen(v->title), &pos, radd_token, &a);
	d->dl_title = a.words;
	a.words = 0;
	a.weight = v->kind ? 2 : 1;
	a.field = 1;
	pos = 0;
	analyze(v->body, strlen(v->body), &pos, radd_token, &a);
	a.weight = 0.5;
	for (int i = 0; v->kind == 0 && i < v->n_tags; i++) {
		a.field = 2 + i;
		pos = 0;
		analyze(v->tags[i], strlen(v->tags[i]), &pos, radd_token, &a);
	}
	d->dl_values = a.words;
}

static int rterm_has_pos(const rterm *t, int p)
{
	for (int i = 0; i < t->npos; i++)
		if (t->pos[i] == p)
			return 1;
	return 0;
}

static const rterm *rdoc_term(const rdoc *d, const char *key)
{
	for (int i = 0; i < d->n; i++)
		if (strcmp(d->t[i].t, key) == 0)
			return &d->t[i];
	return NULL;
}

/* A live Record of a view, as the reference sees it. */
typedef struct rlive {
	const mver *v;
	uint64_t vid;
	rdoc d;
} rlive;

typedef struct qterm {
	char t[80];
	double w;
	int group;
	double df;
} qterm;

struct qb {
	qterm q[400];
	int n, groups;
	int gpos[64];		/* each group's word position in its part of the text */
	int ph_first[32], ph_n[32], nph; /* phrases: their groups */
	int in_phrase;
	stemmer *st;
	int no_typos;
	const char *text;
};

static int str_cmp(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

/* The reference lexicon: every word of letters of every Version written. */
static char (*LEX)[80];
static size_t NLEX;

static int lex_token(void *ctx, const token *t)
{
	(void)ctx;
	if (t->kind != TK_WORD || t->digits)
		return 0;
	for (size_t i = 0; i < NLEX; i++)
		if (strlen(LEX[i]) == t->len && memcmp(LEX[i], t->s, t->len) == 0)
			return 0;
	LEX = realloc(LEX, (NLEX + 1) * sizeof(*LEX));
	memcpy(LEX[NLEX], t->s, t->len);
	LEX[NLEX++][t->len] = '\0';
	return 0;
}

static void lex_build(void)
{
	NLEX = 0;
	for (size_t i = 0; i < NM; i++) {
		uint32_t pos = 0;

		analyze(M[i].title, strlen(M[i].title), &pos, lex_token, NULL);
		analyze(M[i].body, strlen(M[i].body), &pos, lex_token, NULL);
		for (int j = 0; M[i].kind == 0 && j < M[i].n_tags; j++)
			analyze(M[i].tags[j], strlen(M[i].tags[j]), &pos, lex_token, NULL);
	}
}

typedef struct rfix {
	const char *w;
	unsigned d;
} rfix;

static int rfix_cmp(const void *x, const void *y)
{
	const rfix *a = x, *b = y;

	return a->d != b->d ? (a->d < b->d ? -1 : 1) : strcmp(a->w, b->w);
}

static void qadd(struct qb *b, char tag, const char *s, size_t n, double w)
{
	qterm *q = &b->q[b->n++];

	q->t[0] = tag;
	memcpy(q->t + 1, s, n);
	q->t[n + 1] = '\0';
	q->w = w;
	q->group = b->groups;
}

static int q_token(void *ctx, const token *t)
{
	struct qb *b = ctx;
	const char *st;
	size_t sn;

	if (t->kind == TK_WHOLE)
		return 0;
	b->gpos[b->groups] = (int)t->pos;
	if (b->in_phrase) { /* a phrase's word: as written only */
		qadd(b, 'w', t->s, t->len, 1);
		b->groups++;
		return 0;
	}
	if (t->kind == TK_WORD && !t->digits && b->text[t->end] == '*') {
		/* a prefix: the lexicon's words that start with it, the first 32 in byte order */
		char *m[4096];
		size_t nm = 0;

		for (size_t i = 0; i < NLEX && nm < 4096; i++)
			if (strlen(LEX[i]) >= t->len && memcmp(LEX[i], t->s, t->len) == 0)
				m[nm++] = LEX[i];
		qsort(m, nm, sizeof(m[0]), str_cmp);
		for (size_t i = 0; i < nm && i < 32; i++)
			qadd(b, 'w', m[i], strlen(m[i]), 1);
		b->groups++;
		return 0;
	}
	qadd(b, 'w', t->s, t->len, 1);
	if (t->kind == TK_WORD && !t->digits) {
		sn = stem(b->st, t->s, t->len, &st);
		qadd(b, 's', st, sn, 0.5);
	}
	if (!b->no_typos && t->kind == TK_WORD && !t->digits && t->len >= 5) {
		int known = 0;
		rfix f[256];
		size_t nf = 0;
		unsigned k = t->len < 9 ? 1 : 2;

		for (size_t i = 0; i < NLEX && !known; i++)
			known = strlen(LEX[i]) == t->len && memcmp(LEX[i], t->s, t->len) == 0;
		for (size_t i = 0; i < NLEX && !known && nf < 256; i++) {
			unsigned d = test_typo_edits(t->s, t->len, LEX[i]);

			if (d >= 1 && d <= k)
				f[nf++] = (rfix){LEX[i], d};
		}
		qsort(f, nf, sizeof(f[0]), rfix_cmp);
		for (size_t i = 0; i < nf && i < 4; i++)
			qadd(b, 'w', f[i].w, strlen(f[i].w), f[i].d == 1 ? 0.6 : 0.4);
	}
	b->groups++;
	return 0;
}

typedef struct rhit {
	uint64_t vid;
	double score;
	char key[16];
	int kind;
	int words;
} rhit;

static int rhit_cmp(const void *x, const void *y)
{
	const rhit *a = x, *b = y;

	if (a->words != b->words)
		return b->words - a->words;
	if (a->score != b->score)
		return a->score > b->score ? -1 : 1;
	return (a->vid > b->vid) - (a->vid < b->vid);
}

/* Every live Record of the view, with the Version the test wrote for it. */
static size_t view_records(cairn_txn *t, stemmer *st, rlive *out, size_t cap)
{
	static const char *const kinds[] = {"Doc", "Note"};
	size_t n = 0;

	for (int k = 0; k < 2; k++) {
		cairn_record r[100];
		size_t got;
		char after[64] = "";
		size_t after_len = 0;

		do {
			if (cairn_page(t, kinds[k], after, after_len, r, 100, &got))
				return SIZE_MAX;
			for (size_t i = 0; i < got && n < cap; i++) {
				const mver *v = NULL;

				for (size_t j = 0; j < NM; j++)
					if (M[j].kind == k && M[j].rev == r[i].revision &&
					    strlen(M[j].key) == r[i].key_len &&
					    memcmp(M[j].key, r[i].key, r[i].key_len) == 0)
						v = &M[j];
				if (!v)
					return SIZE_MAX;
				out[n].v = v;
				out[n].vid = r[i].vid;
				rdoc_build(v, st, &out[n].d);
				n++;
			}
			if (got) {
				after_len = r[got - 1].key_len;
				memcpy(after, r[got - 1].key, after_len);
			}
		} while (got == 100);
	}
	return n;
}

/*
 * The reference's hits for text in the view: every word, then (unless
 * all_words) when fewer than partial_below have them all, some of them.
 */
static size_t reference(const rlive *L, size_t nl, stemmer *st, const char *text, int kind_only,
			rhit *out, size_t limit, size_t partial_below, int all_words, int no_typos,
			const char *code)
{
	size_t nfull;
	struct qb b;
	double avg_t = 0, avg_v = 0, N = (double)nl;
	rhit *all = calloc(nl + 1, sizeof(*all));
	size_t na = 0;
	uint32_t pos = 0;

	memset(&b, 0, sizeof(b));
	b.st = st;
	b.no_typos = no_typos;
	/* the parts of the text: outside quotes, inside (a phrase), outside, ... */
	for (const char *at = text;; b.in_phrase = !b.in_phrase) {
		const char *e = strchr(at, '"');
		char part[256];
		int g0 = b.groups;

		snprintf(part, sizeof(part), "%.*s", (int)(e ? (size_t)(e - at) : strlen(at)), at);
		b.text = part;
		pos = 0;
		analyze(part, strlen(part), &pos, q_token, &b);
		if (b.in_phrase && b.groups - g0 > 1) {
			b.ph_first[b.nph] = g0;
			b.ph_n[b.nph++] = b.groups - g0;
		}
		if (!e)
			break;
		at = e + 1;
	}
	/* avgdl over every Version ever written (the index's corpus) */
	for (size_t i = 0; i < NM; i++) {
		rdoc d;

		rdoc_build(&M[i], st, &d);
		avg_t += d.dl_title;
		avg_v += d.dl_values;
	}
	avg_t /= (double)NM;
	avg_v /= (double)NM;
	for (int q = 0; q < b.n; q++) { /* df, in the view */
		b.q[q].df = 0;
		for (size_t j = 0; j < nl; j++)
			b.q[q].df += rdoc_term(&L[j].d, b.q[q].t) != NULL;
	}
	for (size_t i = 0; i < nl && b.groups; i++) {
		double score = 0;
		int ok = 1;

		if (kind_only >= 0 && L[i].v->kind != kind_only)
			continue;
		if (code && strcmp(L[i].v->code, code) != 0) /* the filter {"code": code} */
			continue;
		int words = 0, has[64];

		for (int g = 0; g < b.groups; g++) {
			has[g] = 0;
			for (int q = 0; q < b.n; q++)
				if (b.q[q].group == g && rdoc_term(&L[i].d, b.q[q].t))
					has[g] = 1;
		}
		for (int p = 0; p < b.nph; p++) { /* a phrase counts with its words in place */
			int f = b.ph_first[p], in = 1, placed = 0;
			const rterm *w0;

			for (int g = f; g < f + b.ph_n[p]; g++)
				in &= has[g];
			int q0 = 0;

			while (b.q[q0].group != f) /* a phrase's group: one term */
				q0++;
			w0 = in ? rdoc_term(&L[i].d, b.q[q0].t) : NULL;
			for (int a = 0; w0 && a < w0->npos && !placed; a++) {
				placed = 1;
				for (int g = f + 1; g < f + b.ph_n[p] && placed; g++) {
					int q = 0;

					while (b.q[q].group != g)
						q++;
					placed = rterm_has_pos(rdoc_term(&L[i].d, b.q[q].t),
							       w0->pos[a] + b.gpos[g] - b.gpos[f]);
				}
			}
			for (int g = f; g < f + b.ph_n[p] && !placed; g++)
				has[g] = 0;
		}
		for (int g = 0; g < b.groups; g++)
			words += has[g];
		ok = words > 0;
		if (!ok)
			continue;
		for (int q = 0; q < b.n; q++) {
			const rterm *rt = rdoc_term(&L[i].d, b.q[q].t);
			double df = b.q[q].df, idf, tf = 0;

			if (!rt || !has[b.q[q].group])
				continue;
			idf = log(1 + (N - df + 0.5) / (df + 0.5));
			if (rt->tf_title)
				tf += 2 * rt->tf_title /
				      (avg_t > 0 ? 1 - 0.75 + 0.75 * L[i].d.dl_title / avg_t : 1);
			if (rt->tf_values)
				tf += rt->tf_values /
				      (avg_v > 0 ? 1 - 0.75 + 0.75 * L[i].d.dl_values / avg_v : 1);
			score += b.q[q].w * idf * tf / (1.2 + tf);
		}
		all[na].vid = L[i].vid;
		all[na].score = score;
		all[na].words = words;
		all[na].kind = L[i].v->kind;
		snprintf(all[na].key, sizeof(all[na].key), "%s", L[i].v->key);
		na++;
	}
	qsort(all, na, sizeof(*all), rhit_cmp);
	for (nfull = 0; nfull < na && all[nfull].words == b.groups; nfull++)
		;
	if (all_words || b.groups < 2 || nfull >= partial_below)
		na = nfull;
	if (na > limit)
		na = limit;
	memcpy(out, all, na * sizeof(*out));
	free(all);
	return na;
}

static int commit_cs(cairn_store *st, const char *branch, cairn_changeset *cs, uint64_t *rev)
{
	cairn_commit_options co = {0};
	cairn_commit_result res;
	int rc;

	co.domain = "d";
	co.branch = branch;
	co.prov.actor = "test";
	rc = cairn_commit(st, &co, cs, &res);
	if (!rc && rev)
		*rev = res.revision;
	return rc;
}

/*
 * An explanation that adds up: its terms' scores sum to the hit's, each term
 * in a field, and a snippet with a match marked when there are terms.
 */
static int explain_ok(const cairn_hit *h)
{
	arena a = ARENA_INIT;
	const jv *x = h->explain ? jv_parse(&a, h->explain, h->explain_len, "explain") : NULL;
	const jv *terms = jv_get(x, "terms"), *snips = jv_get(x, "snippets");
	double sum = 0;
	int ok = jv_is(terms, JV_ARRAY) && jv_is(snips, JV_ARRAY), marked = 0;

	for (uint32_t i = 0; ok && i < terms->len; i++) {
		const jv *t = &terms->u.items[i], *f = jv_get(t, "fields");

		ok = jv_is_number(jv_get(t, "score")) && jv_is(f, JV_ARRAY) && f->len > 0 &&
		     jv_is(jv_get(t, "word"), JV_STRING) && jv_is(jv_get(t, "term"), JV_STRING);
		if (ok)
			sum += jv_number(jv_get(t, "score"));
	}
	for (uint32_t i = 0; ok && i < snips->len; i++) {
		const jv *t = jv_get(&snips->u.items[i], "text");

		marked |= jv_is(t, JV_STRING) && strstr(t->u.s, "<em>") != NULL;
	}
	ok = ok && fabs(sum - h->score) <= 1e-6 * (1 + fabs(h->score)) && marked == (terms->len > 0);
	if (!ok)
		fprintf(stderr, "    explanation of %.*s (score %.9f): %.*s\n", (int)h->rec.key_len,
			h->rec.key, h->score, (int)h->explain_len, h->explain ? h->explain : "");
	arena_release(&a);
	return ok;
}

/* The texts compare_view searches, when not random. */
static const char *const *FIXED;
static size_t NFIXED;

/* Compare the search with the reference for random texts (or FIXED's) in one view. */
static int compare_view(cairn_store *st, const char *branch, uint64_t at, stemmer *stm, int texts)
{
	cairn_read_options ro = {0};
	cairn_txn *t;
	rlive *L = calloc(4000, sizeof(*L));
	size_t nl;
	int bad = 0;

	ro.domain = "d";
	ro.branch = branch;
	ro.at_revision = at;
	if (!L || cairn_txn_begin(st, &ro, &t)) {
		free(L);
		return 0;
	}
	nl = view_records(t, stm, L, 4000);
	lex_build();
	if (nl == SIZE_MAX) {
		fprintf(stderr, "    the view has a Record the test did not write\n");
		bad = 1;
	}
	for (int it = 0; it < texts && !bad; it++) {
		char text[200], where[120];
		const char *code;
		cairn_search_options o = {0};
		cairn_hit h[40];
		rhit want[40];
		size_t n, nw;
		int kind_only = rand() % 4 == 0 ? rand() % 2 : -1;
		const char *kname = kind_only == 1 ? "Note" : "Doc";
		int rc;

		words(text, sizeof(text), 3);
		if (!text[0])
			snprintf(text, sizeof(text), "%s", vocab[rand() % NVOCAB]);
		if (FIXED)
			snprintf(text, sizeof(text), "%s", FIXED[(size_t)it % NFIXED]);
		if (!FIXED && rand() % 3 == 0) { /* a typo in the first word (of ASCII: stays UTF-8) */
			size_t wl = strcspn(text, " "), p = wl ? (size_t)rand() % wl : 0;

			for (size_t i = 0; i < wl; i++)
				if ((unsigned char)text[i] >= 0x80)
					wl = p = 0;

			switch (wl ? rand() % 3 : 3) {
			case 3:
				break;
			case 0: /* substitute */
				text[p] = "aeiouxz"[rand() % 7];
				break;
			case 1: /* delete */
				memmove(text + p, text + p + 1, strlen(text + p));
				break;
			default: /* transpose */
				if (p + 1 < wl) {
					char c = text[p];

					text[p] = text[p + 1];
					text[p + 1] = c;
				}
			}
		}
		if (!FIXED && rand() % 5 == 0) { /* the last word a prefix: its first letters and '*' */
			size_t e = strlen(text), b0 = e;

			int ascii = 1;

			while (b0 && text[b0 - 1] != ' ')
				b0--;
			for (size_t i = b0; i < e; i++)
				ascii &= (unsigned char)text[i] < 0x80;
			if (ascii && e - b0 >= 3) {
				size_t cut = b0 + 2 + (size_t)rand() % (e - b0 - 2);

				text[cut] = '*';
				text[cut + 1] = '\0';
			}
		}
		if (!FIXED && rand() % 4 == 0) { /* a phrase: words of a Version in a row, or random ones */
			const mver *v = &M[(size_t)rand() % NM];
			const char *src = rand() % 2 ? v->title : v->body;
			char tail[64];
			size_t len = strlen(src), from = len ? (size_t)rand() % len : 0;
			size_t take = 1 + (size_t)rand() % 20;

			while (from && src[from - 1] != ' ')
				from--;
			while (take < len - from && ((unsigned char)src[from + take] & 0xc0) == 0x80)
				take--; /* not inside a character */
			if (rand() % 3 == 0 || !len)
				words(tail, sizeof(tail), 3);
			else
				snprintf(tail, sizeof(tail), "%.*s", (int)take, src + from);
			for (char *c = tail; *c; c++)
				if (*c == '*')
					*c = ' ';
			len = strlen(text) < 100 ? strlen(text) : 100;
			snprintf(text + len, sizeof(text) - len, "%s\"%s%s", len ? " " : "", tail,
				 rand() % 5 ? "\"" : "");
		}
		if (!text[0])
			snprintf(text, sizeof(text), "steel");
		o.text = text;
		o.limit = 1 + (size_t)(rand() % 40);
		o.all_words = rand() % 4 == 0;
		o.no_typos = rand() % 5 == 0;
		o.explain = rand() % 3 == 0;
		o.partial_below = rand() % 2 ? 0 : 1 + (size_t)rand() % o.limit;
		if (kind_only >= 0) {
			o.kinds = &kname;
			o.n_kinds = 1;
		}
		code = NULL;
		if (kind_only == 0 && rand() % 2) { /* a filter, inside the ranking */
			code = vocab[rand() % NVOCAB];
			snprintf(where, sizeof(where), "{\"code\":\"%s\"}", code);
			o.where = where;
		}
		rc = cairn_search(t, &o, h, 40, &n, NULL);
		nw = reference(L, nl, stm, text, kind_only, want, o.limit,
			       o.partial_below ? o.partial_below : o.limit, o.all_words, o.no_typos,
			       code);
		if (rc || n != nw) {
			fprintf(stderr, "    \"%s\" (limit %zu, kind %d): %zu hits, want %zu (%s)\n",
				text, o.limit, kind_only, n, nw, rc ? cairn_errmsg() : "ok");
			bad = 1;
			break;
		}
		for (size_t i = 0; i < n && o.explain && !bad; i++)
			if ((bad = !explain_ok(&h[i])))
				fprintf(stderr, "    searching \"%s\"\n", text);
		for (size_t i = 0; i < n && !o.explain && !bad; i++)
			bad = h[i].explain != NULL;
		for (size_t i = 0; i < n && !bad; i++)
			if (h[i].rec.vid != want[i].vid || (int)h[i].words != want[i].words ||
			    fabs(h[i].score - want[i].score) > 1e-6 * (1 + fabs(want[i].score))) {
				fprintf(stderr,
					"    \"%s\" hit %zu: %.*s %.9f (vid %llu) w%u, want %s %.9f (vid %llu) w%d\n",
					text, i, (int)h[i].rec.key_len, h[i].rec.key, h[i].score,
					(unsigned long long)h[i].rec.vid, h[i].words, want[i].key,
					want[i].score, (unsigned long long)want[i].vid, want[i].words);
				bad = 1;
				break;
			}
	}
	cairn_txn_end(t);
	free(L);
	return !bad;
}

static cairn_store *sstore(void)
{
	cairn_open_options oo = {.flags = CAIRN_OPEN_CREATE | CAIRN_OPEN_NOSYNC | CAIRN_OPEN_NO_BACKGROUND};
	cairn_commit_options co = {0};
	cairn_store *st;

	if (cairn_open(test_path("store"), &oo, &st))
		return NULL;
	co.domain = "d";
	co.prov.actor = "test";
	if (cairn_domain_create(st, "d") ||
	    cairn_schema_apply(st, &co, sschema, strlen(sschema), NULL)) {
		cairn_close(st);
		return NULL;
	}
	return st;
}

/* What a test against the reference leaves: its Versions, its lexicon, the store. */
static void reference_end(cairn_store *st, stemmer *stm)
{
	stemmer_free(stm);
	free(M);
	M = NULL;
	NM = CAPM = 0;
	free(LEX);
	LEX = NULL;
	NLEX = 0;
	cairn_close(st);
}

void test_search_reference(void)
{
	cairn_store *st = sstore();
	stemmer *stm = stemmer_new("english");
	uint64_t past[4] = {0, 0, 0, 0};
	int np = 0;

	CHECK(st && stm);
	if (!st || !stm)
		goto out;
	NM = 0;
	srand(11);
	for (int round = 0; round < 40; round++) {
		const char *branch = round >= 25 && round % 2 ? "b" : NULL;
		cairn_changeset *cs;
		uint64_t rev;
		size_t first = NM;
		int n = round == 0 ? 1500 : 1 + rand() % 20;

		if (round == 25)
			OK(cairn_branch_create(st, "d", "b", NULL));
		OK(cairn_changeset_new(&cs));
		for (int i = 0; i < n; i++) {
			char key[16];
			int kind = rand() % 5 == 0;

			snprintf(key, sizeof(key), "k%d", rand() % (round == 0 ? 2000 : 300));
			if (round && rand() % 8 == 0) {
				/* a delete, if the Record is there (else a put) */
				cairn_txn *t;
				cairn_read_options ro = {0};
				cairn_record r;
				int there;

				ro.domain = "d";
				ro.branch = branch;
				OK(cairn_txn_begin(st, &ro, &t));
				there = cairn_get(t, kind ? "Note" : "Doc", key, strlen(key), &r) == 0;
				cairn_txn_end(t);
				if (there) {
					OK(cairn_changeset_delete(cs, kind ? "Note" : "Doc", key, strlen(key), 0));
					continue;
				}
			}
			OK(put_random(cs, kind, key, NULL));
		}
		if (commit_cs(st, branch, cs, &rev)) {
			/* the same Record twice in one change set, or a delete of a put: drop it */
			NM = first;
			cairn_changeset_free(cs);
			continue;
		}
		cairn_changeset_free(cs);
		for (size_t j = first; j < NM; j++)
			M[j].rev = rev;
		if (round % 10 == 5 && np < 4)
			past[np++] = rev;
	}
	CHECK(compare_view(st, NULL, 0, stm, 150));
	CHECK(compare_view(st, "b", 0, stm, 150));
	for (int i = 0; i < np; i++)
		CHECK(compare_view(st, NULL, past[i], stm, 60));
	/* The walk by masks (common words), taken for every word: the same answers. */
	OK(knob_set("search_dense_min", 0, NULL));
	CHECK(compare_view(st, NULL, 0, stm, 100));
	CHECK(compare_view(st, "b", 0, stm, 60));
	if (np)
		CHECK(compare_view(st, NULL, past[0], stm, 40));
	knob_reset();
	CHECK(check_clean_search(st));
	/* Segments merged (in the background of an open store): the same answers. */
	{
		uint64_t before = postings_entries(st);
		int pending = 1, merges = 0;

		OK(cairn_store_maintain(st, 0, &pending));
		CHECK(pending == 1); /* 40 commits, 40 segments */
		while (pending && merges < 100) {
			OK(cairn_store_maintain(st, 100, &pending));
			merges++;
		}
		CHECK(!pending && merges >= 4);
		CHECK(postings_entries(st) < before);
	}
	CHECK(compare_view(st, NULL, 0, stm, 100));
	CHECK(compare_view(st, "b", 0, stm, 100));
	for (int i = 0; i < np; i++)
		CHECK(compare_view(st, NULL, past[i], stm, 40));
	CHECK(check_clean_search(st));
out:
	reference_end(st, stm);
}

/*
 * Partial matches where a common word is in every Record and a middling
 * one in a fifteenth, as memories about people are ("person kab tea"): the
 * walk skips the blocks and the words that cannot beat the worst hit kept,
 * and finds what the reference finds, ties and all, at every limit.
 */
void test_search_partial_bounds(void)
{
	static const char *const things[] = {"tea",  "jazz",   "oslo",  "chess", "porto",
					     "golf", "kyoto",  "lisbon", "coffee", "sailing",
					     "python", "hiking", "budget", "roadmap", "launch"};
	static const char *const texts[] = {
		"person kab tea zq", "person kab tea",	  "person tea oslo",  "person kac jazz",
		"person kad",	     "tea oslo jazz person kae", "kaf person", "person chess zq zq",
		"person tea",	     "jazz kag",	  "person kah sailing coffee"};
	cairn_store *st = sstore();
	stemmer *stm = stemmer_new("english");
	cairn_changeset *cs = NULL;
	uint64_t rev;

	CHECK(st && stm);
	if (!st || !stm)
		goto out;
	NM = 0;
	srand(5);
	OK(cairn_changeset_new(&cs));
	for (int i = 0; i < 3000; i++) {
		static const char filler[] = " alpha beta gamma delta omega sigma theta kappa";
		char key[16], title[128];
		/* titles of 3 to 11 words: scores apart by a little, and equal */
		int more = (i % 7 + i % 11) % 9, cut = 0;
		char extra[64];

		for (int w = 0; w < more; w++)
			cut += (int)strcspn(filler + cut + 1, " ") + 1;
		snprintf(extra, sizeof(extra), "%.*s", cut, filler);

		snprintf(key, sizeof(key), "m%d", i);
		snprintf(title, sizeof(title), "person k%c%c %s%s", 'a' + (i % 40) / 26,
			 'a' + (i % 40) % 26, things[(i / 3) % 15], extra);
		OK(put_random(cs, 0, key, title));
	}
	OK(commit_cs(st, NULL, cs, &rev));
	for (size_t j = 0; j < NM; j++)
		M[j].rev = rev;
	FIXED = texts;
	NFIXED = sizeof(texts) / sizeof(texts[0]);
	CHECK(compare_view(st, NULL, 0, stm, 220));
	FIXED = NULL;
	CHECK(check_clean_search(st));
out:
	cairn_changeset_free(cs);
	reference_end(st, stm);
}

/* ---------------------------------------------------------------- edges -- */

static void count_problem(void *ctx, const char *problem)
{
	fprintf(stderr, "    check: %s\n", problem);
	(*(int *)ctx)++;
}

static int check_clean_search(cairn_store *st)
{
	int problems = 0;

	return cairn_check(st, "d", count_problem, &problems, NULL) == 0 && problems == 0;
}

static int put_lines(cairn_store *st, const char *branch, const char *lines)
{
	return test_commit_on(st, "d", branch, lines, NULL);
}

/* Search text on a branch (NULL: main); the keys of the hits, space-separated, into out. */
static int found(cairn_store *st, const char *branch, const char *text, char *out, size_t cap)
{
	cairn_read_options ro = {0};
	cairn_search_options o = {0};
	cairn_hit h[20];
	cairn_txn *t;
	size_t n, len = 0;
	int rc;

	ro.domain = "d";
	ro.branch = branch;
	out[0] = '\0';
	if ((rc = cairn_txn_begin(st, &ro, &t)))
		return rc;
	o.text = text;
	rc = cairn_search(t, &o, h, 20, &n, NULL);
	for (size_t i = 0; !rc && i < n; i++)
		len += (size_t)snprintf(out + len, cap - len, "%s%.*s", i ? " " : "",
					(int)h[i].rec.key_len, h[i].rec.key);
	cairn_txn_end(t);
	return rc;
}

#define FOUND(branch, text, want)                                                                  \
	do {                                                                                       \
		char got_[512];                                                                    \
		OK(found(st, branch, text, got_, sizeof(got_)));                                   \
		if (strcmp(got_, want) != 0)                                                       \
			fprintf(stderr, "    search \"%s\": [%s], want [%s]\n", text, got_, want);   \
		CHECK(strcmp(got_, want) == 0);                                                    \
	} while (0)

static uint64_t postings_entries(cairn_store *st)
{
	return test_db_entries(st, "postings");
}

void test_search_errors(void)
{
	cairn_store *st = sstore();
	cairn_read_options ro = {0};
	cairn_search_options o = {0};
	cairn_hit h[10];
	cairn_txn *t;
	char big[1100], many[400];
	const char *bad_kind = "Nope", *kinds[65];
	size_t n = 7;

	CHECK(st);
	if (!st)
		return;
	OK(put_lines(st, NULL, "{\"kind\":\"Doc\",\"key\":\"a\",\"title\":\"steel bolts\"}"));
	ro.domain = "d";
	OK(cairn_txn_begin(st, &ro, &t));
	CHECK_RC(cairn_search(t, NULL, h, 10, &n, NULL), CAIRN_EINVAL);
	CHECK_RC(cairn_search(t, &o, h, 10, &n, NULL), CAIRN_EINVAL); /* no text */
	o.text = "";
	o.limit = 10;
	CHECK_RC(cairn_search(t, &o, h, 10, &n, NULL), CAIRN_EINVAL);
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	o.text = big;
	CHECK_RC(cairn_search(t, &o, h, 10, &n, NULL), CAIRN_EINVAL);
	CHECK(strstr(cairn_errmsg(), "1024") != NULL);
	o.text = "steel";
	o.limit = 101;
	CHECK_RC(cairn_search(t, &o, h, 200, &n, NULL), CAIRN_EINVAL);
	o.limit = 0; /* 20, more than out holds */
	CHECK_RC(cairn_search(t, &o, h, 10, &n, NULL), CAIRN_EINVAL);
	o.limit = 10;
	o.partial_below = 11; /* more than the limit */
	CHECK_RC(cairn_search(t, &o, h, 10, &n, NULL), CAIRN_EINVAL);
	CHECK(strstr(cairn_errmsg(), "partial_below") != NULL);
	o.partial_below = 0;
	o.text = "st\xff" "eel";
	CHECK_RC(cairn_search(t, &o, h, 10, &n, NULL), CAIRN_EUTF8);
	o.text = "steel";
	o.kinds = &bad_kind;
	o.n_kinds = 1;
	CHECK_RC(cairn_search(t, &o, h, 10, &n, NULL), CAIRN_EUNKNOWNKIND);
	CHECK(strstr(cairn_errmsg(), "Nope") != NULL);
	for (int i = 0; i < 65; i++)
		kinds[i] = "Doc";
	o.kinds = kinds;
	o.n_kinds = 65;
	CHECK_RC(cairn_search(t, &o, h, 10, &n, NULL), CAIRN_EINVAL);
	o.kinds = NULL;
	o.n_kinds = 0;
	o.where = "{\"code\":\"x\"}"; /* a filter needs the Kinds it is over */
	CHECK_RC(cairn_search(t, &o, h, 10, &n, NULL), CAIRN_EINVAL);
	{
		const char *doc = "Doc";

		o.kinds = &doc;
		o.n_kinds = 1;
		o.where = "{\"nope\":1}";
		CHECK_RC(cairn_search(t, &o, h, 10, &n, NULL), CAIRN_EQUERY);
		CHECK(strstr(cairn_errmsg(), "nope") != NULL);
		o.where = "{\"code\":";
		CHECK_RC(cairn_search(t, &o, h, 10, &n, NULL), CAIRN_EQUERY);
		o.where = "{\"code\":\"x\"}";
		OK(cairn_search(t, &o, h, 10, &n, NULL));
		CHECK(n == 0);
	}
	o.where = NULL;
	o.kinds = NULL;
	o.n_kinds = 0;
	many[0] = '\0';
	for (int i = 0; i < 33; i++)
		strcat(many, "w ");
	o.text = many;
	CHECK_RC(cairn_search(t, &o, h, 10, &n, NULL), CAIRN_ELIMIT);
	CHECK(n == 0);
	/* Words that are not there, and text without words: nothing, no error. */
	o.text = "titanium";
	OK(cairn_search(t, &o, h, 10, &n, NULL));
	CHECK(n == 0);
	o.text = " -- ... ";
	OK(cairn_search(t, &o, h, 10, &n, NULL));
	CHECK(n == 0);
	o.text = "STEEL";
	OK(cairn_search(t, &o, h, 10, &n, NULL));
	CHECK(n == 1 && h[0].score > 0);
	cairn_txn_end(t);
	cairn_close(st);
}

void test_search_schema(void)
{
	cairn_store *st = sstore();
	cairn_commit_options co = {0};
	const char *on = "{\"kinds\":[{\"name\":\"Doc\",\"attributes\":["
			 "{\"name\":\"code\",\"type\":\"string\",\"search\":3}]}]}";
	const char *off = "{\"kinds\":[{\"name\":\"Doc\",\"attributes\":["
			  "{\"name\":\"code\",\"type\":\"string\"}]}]}";
	const char *nostem = "{\"search\":{\"language\":\"none\"}}";

	CHECK(st);
	if (!st)
		return;
	co.domain = "d";
	co.prov.actor = "test";
	OK(put_lines(st, NULL,
		     "{\"kind\":\"Doc\",\"key\":\"a\",\"title\":\"running pumps\","
		     "\"values\":{\"code\":\"XK-9 turbine\"}}\n"
		     "{\"kind\":\"Doc\",\"key\":\"b\",\"title\":\"the pump runs\"}\n"
		     "{\"kind\":\"Note\",\"key\":\"n\",\"title\":\"notes\",\"values\":{\"text\":\"turbine "
		     "pump\"}}"));
	FOUND(NULL, "turbine", "n"); /* code is not searched yet */
	FOUND(NULL, "pump", "b n a"); /* as written first; a by its stem */
	/* Made searchable: the index is built again, with it. */
	OK(cairn_schema_apply(st, &co, on, strlen(on), NULL));
	FOUND(NULL, "turbine", "a n");
	FOUND(NULL, "xk-9", "a");
	FOUND(NULL, "XK 9", "a");
	CHECK(check_clean_search(st));
	OK(cairn_schema_apply(st, &co, off, strlen(off), NULL));
	FOUND(NULL, "turbine", "n");
	/* No stemming: only the words as written. */
	OK(cairn_schema_apply(st, &co, nostem, strlen(nostem), NULL));
	FOUND(NULL, "pump", "b n");
	FOUND(NULL, "runs", "b");
	CHECK(check_clean_search(st));
	FOUND(NULL, "the turbine", "b n"); /* partial: the, or turbine */
	FOUND(NULL, "turbne", "n");	    /* 1 edit: 5 letters and more */
	/* Stop words (folded like any word) leave a text, unless nothing else is left. */
	{
		const char *stop = "{\"search\":{\"language\":\"none\",\"stop_words\":[\"The\",\"OF\"]}}";
		const char *notypos = "{\"search\":{\"language\":\"none\",\"typos\":false}}";
		const char *longer = "{\"search\":{\"language\":\"none\",\"typos\":{\"one\":7}}}";

		OK(cairn_schema_apply(st, &co, stop, strlen(stop), NULL));
		FOUND(NULL, "the turbine", "n");
		FOUND(NULL, "THE", "b");		/* nothing but stop words: looked for */
		FOUND(NULL, "\"the pump\"", "b");	/* in a phrase: kept */
		FOUND(NULL, "\"the pump\" of", "b");
		FOUND(NULL, "turbne", "n");
		OK(cairn_schema_apply(st, &co, notypos, strlen(notypos), NULL));
		FOUND(NULL, "the turbine", "b n"); /* the block replaced: no stop words */
		FOUND(NULL, "turbne", "");
		OK(cairn_schema_apply(st, &co, longer, strlen(longer), NULL));
		FOUND(NULL, "turbne", "");	    /* 6 letters: under 7 */
		FOUND(NULL, "turbinne", "n");	    /* 8 letters, 1 edit */
		CHECK(check_clean_search(st));
	}
	/*
	 * English (and porter) have English's function words by default, other
	 * languages none; [] is none; the schema shows the words in effect.
	 */
	{
		static const char *const docs[] = {
			"{\"search\":{\"language\":\"english\"}}",
			"{\"search\":{\"language\":\"porter\"}}",
			"{\"search\":{\"language\":\"german\"}}",
			"{\"search\":{\"language\":\"english\",\"stop_words\":[]}}",
			"{\"search\":{\"language\":\"none\",\"typos\":false}}"};
		static const int stops[] = {1, 1, 0, 0, 0};
		/* "pumps" is "pump" in English; German's stemmer leaves it. */
		static const char *const pump[] = {"b n a", "b n a", "b n", "b n a", "b n"};

		for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
			cairn_read_options ro = {0};
			const char *js;
			size_t jl;
			cairn_txn *t;

			OK(cairn_schema_apply(st, &co, docs[i], strlen(docs[i]), NULL));
			FOUND(NULL, "the turbine", stops[i] ? "n" : "b n");
			FOUND(NULL, "The pump", pump[i]);
			FOUND(NULL, "THE", "b"); /* nothing but stop words: looked for */
			FOUND(NULL, "what is the turbine", stops[i] ? "n" : "b n");
			ro.domain = "d";
			OK(cairn_txn_begin(st, &ro, &t));
			OK(cairn_schema_get(t, &js, &jl));
			CHECK((strstr(js, "\"stop_words\":[\"a\",\"about\",") != NULL) == stops[i]);
			CHECK((strstr(js, "\"stop_words\":[]") != NULL) == !stops[i]);
			cairn_txn_end(t);
		}
		CHECK(check_clean_search(st));
	}
	/* A bad setting is refused and changes nothing. */
	{
		static const char *const bad[] = {
			"{\"search\":{\"language\":\"klingon\"}}", "{\"search\":{\"k1\":-1}}",
			"{\"search\":{\"b\":1.5}}", "{\"search\":{\"title_weight\":0}}",
			"{\"search\":{\"stop\":1}}", "{\"search\":[]}",
			"{\"search\":{\"typos\":{\"one\":0}}}", "{\"search\":{\"typos\":{\"one\":10}}}",
			"{\"search\":{\"typos\":{\"one\":3,\"two\":2}}}",
			"{\"search\":{\"typos\":{\"one\":2.5}}}", "{\"search\":{\"typos\":\"yes\"}}",
			"{\"search\":{\"typos\":{\"three\":1}}}", "{\"search\":{\"stop_words\":\"the\"}}",
			"{\"search\":{\"stop_words\":[1]}}",
			"{\"kinds\":[{\"name\":\"Doc\",\"attributes\":[{\"name\":\"n\","
			"\"type\":\"int\",\"search\":true}]}]}",
			"{\"kinds\":[{\"name\":\"Doc\",\"attributes\":[{\"name\":\"code\","
			"\"type\":\"string\",\"search\":11}]}]}"};

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
			CHECK_RC(cairn_schema_apply(st, &co, bad[i], strlen(bad[i]), NULL),
				 CAIRN_ESCHEMA);
	}
	FOUND(NULL, "pump", "b n");
	FOUND(NULL, "turbne", "");	/* the settings are those of the last good schema */
	cairn_close(st);
}

void test_search_branches(void)
{
	cairn_store *st = sstore();
	uint64_t before;

	CHECK(st);
	if (!st)
		return;
	OK(put_lines(st, NULL, "{\"kind\":\"Doc\",\"key\":\"a\",\"title\":\"copper wire\"}"));
	before = postings_entries(st);
	OK(cairn_branch_create(st, "d", "b", NULL));
	OK(put_lines(st, "b",
		     "{\"kind\":\"Doc\",\"key\":\"a\",\"title\":\"aluminium wire\"}\n"
		     "{\"kind\":\"Doc\",\"key\":\"c\",\"title\":\"copper pipe\"}"));
	FOUND("b", "copper", "c");
	FOUND("b", "wire", "a");
	FOUND(NULL, "copper", "a");
	FOUND(NULL, "aluminium", "");
	CHECK(postings_entries(st) > before);
	OK(cairn_branch_delete(st, "d", "b"));
	{
		int pending = 1;

		for (int i = 0; i < 1000 && pending; i++)
			OK(cairn_store_maintain(st, 7, &pending));
	}
	CHECK(postings_entries(st) == before); /* its segments are gone */
	FOUND(NULL, "copper", "a");
	CHECK(check_clean_search(st));
	cairn_close(st);
}

/* Phrases: words in a row within one field, as written; the edges of the syntax. */
void test_search_phrases(void)
{
	cairn_store *st = sstore();

	CHECK(st);
	if (!st)
		return;
	OK(put_lines(st, NULL,
		     "{\"kind\":\"Doc\",\"key\":\"a\",\"title\":\"alpha beta\","
		     "\"values\":{\"body\":\"gamma delta\",\"tags\":[\"delta\",\"epsilon\"]}}\n"
		     "{\"kind\":\"Doc\",\"key\":\"b\",\"title\":\"Steel, bolts: running\"}\n"
		     "{\"kind\":\"Doc\",\"key\":\"c\",\"title\":\"Order PO-2024-0117 delayed\"}\n"
		     "{\"kind\":\"Doc\",\"key\":\"d\",\"title\":\"bolts of steel run\"}\n"
		     "{\"kind\":\"Note\",\"key\":\"e\",\"title\":\"bora bora\","
		     "\"values\":{\"text\":\"beta gamma\"}}"));
	FOUND(NULL, "\"gamma delta\"", "a");
	FOUND(NULL, "\"beta gamma\"", "e");	  /* a's title and body: not in a row */
	FOUND(NULL, "\"delta epsilon\"", "");	  /* two values of a's tags */
	FOUND(NULL, "\"steel bolts\"", "b");	  /* punctuation does not break it */
	FOUND(NULL, "\"bolts steel\"", "");
	FOUND(NULL, "steel bolts", "b d");	  /* unquoted: both, anywhere */
	FOUND(NULL, "\"po 2024 0117\"", "c");   /* an identifier's parts in a row */
	FOUND(NULL, "\"PO-2024-0117 delayed\"", "c");
	FOUND(NULL, "\"0117 order\"", "");
	FOUND(NULL, "\"run\"", "d");		  /* as written: not running by its stem */
	FOUND(NULL, "run", "d b");
	FOUND(NULL, "\"runing\"", "");	  /* nor corrected */
	FOUND(NULL, "\"bora bora\"", "e");	  /* a word twice */
	FOUND(NULL, "\"bora bora bora\"", "");
	FOUND(NULL, "\"steel bolts", "b");	  /* a quote left open runs to the end */
	FOUND(NULL, "\"\"", "");		  /* nothing to find */
	FOUND(NULL, "\"steel bolts\" running", "b d"); /* d: running's stem alone */
	FOUND(NULL, "\"steel bolts\" delayed", "b c"); /* partial: the phrase, or the word */
	{
		cairn_read_options ro = {0};
		cairn_search_options o = {0};
		cairn_hit h[5];
		cairn_txn *t;
		size_t n;

		ro.domain = "d";
		OK(cairn_txn_begin(st, &ro, &t));
		o.text = "\"steel bolts\" delayed";
		o.limit = 5;
		OK(cairn_search(t, &o, h, 5, &n, NULL));
		CHECK(n == 2 && h[0].words == 2 && h[1].words == 1); /* a phrase counts its words */
		o.text = "\"bolts steel\" delayed";
		OK(cairn_search(t, &o, h, 5, &n, NULL));
		CHECK(n == 1 && h[0].words == 1 && h[0].rec.key[0] == 'c'); /* not b or d */
		cairn_txn_end(t);
	}
	CHECK(check_clean_search(st));
	cairn_close(st);
}

/* A filter over several Kinds: parsed for each, each Record checked with its Kind's. */
void test_search_filters(void)
{
	cairn_store *st = sstore();
	cairn_commit_options co = {0};
	const char *more = "{\"kinds\":[{\"name\":\"Note\",\"attributes\":["
			   "{\"name\":\"code\",\"type\":\"int\"}]}]}";
	const char *both[] = {"Doc", "Note"};
	cairn_read_options ro = {0};
	cairn_search_options o = {0};
	cairn_hit h[10];
	cairn_txn *t;
	size_t n;

	CHECK(st);
	if (!st)
		return;
	co.domain = "d";
	co.prov.actor = "test";
	OK(put_lines(st, NULL,
		     "{\"kind\":\"Doc\",\"key\":\"d1\",\"title\":\"steel\",\"values\":{\"code\":\"A\"}}\n"
		     "{\"kind\":\"Doc\",\"key\":\"d2\",\"title\":\"steel\",\"values\":{\"code\":\"B\"}}\n"
		     "{\"kind\":\"Note\",\"key\":\"n1\",\"title\":\"steel\"}"));
	ro.domain = "d";
	o.text = "steel";
	o.limit = 10;
	o.kinds = both;
	o.n_kinds = 2;
	o.where = "{\"code\":\"A\"}";
	OK(cairn_txn_begin(st, &ro, &t));
	/* Note has no code: the filter is refused, naming it. */
	CHECK_RC(cairn_search(t, &o, h, 10, &n, NULL), CAIRN_EQUERY);
	cairn_txn_end(t);
	/* Now it has one, of another type: each Kind's filter is its own. */
	OK(cairn_schema_apply(st, &co, more, strlen(more), NULL));
	OK(put_lines(st, NULL,
		     "{\"kind\":\"Note\",\"key\":\"n2\",\"title\":\"steel\",\"values\":{\"code\":7}}"));
	OK(cairn_txn_begin(st, &ro, &t));
	CHECK_RC(cairn_search(t, &o, h, 10, &n, NULL), CAIRN_EQUERY); /* "A" is no int */
	o.where = "{\"code\":{\"exists\":true}}";
	OK(cairn_search(t, &o, h, 10, &n, NULL));
	CHECK(n == 3); /* d1, d2, n2; not n1 */
	for (size_t i = 0; i < n; i++)
		CHECK(!(h[i].rec.key_len == 2 && memcmp(h[i].rec.key, "n1", 2) == 0));
	o.where = "{\"not\":{\"code\":{\"exists\":true}}}";
	OK(cairn_search(t, &o, h, 10, &n, NULL));
	CHECK(n == 1 && memcmp(h[0].rec.key, "n1", 2) == 0);
	o.n_kinds = 1; /* Doc alone */
	o.where = "{\"code\":\"B\"}";
	OK(cairn_search(t, &o, h, 10, &n, NULL));
	CHECK(n == 1 && memcmp(h[0].rec.key, "d2", 2) == 0);
	cairn_txn_end(t);
	cairn_close(st);
}

/*
 * Exclude by a value: 30 Docs of steel, the first 25 written "old" (so they
 * win every tie): limit 5 still brings 5, none of them old, in the walk of
 * every word and in partial matches; a value with an escape is matched as
 * it reads; every kind of bad exclude is refused, naming the mistake.
 */
void test_search_exclude(void)
{
	cairn_store *st = sstore();
	static const char *const old[] = {"old", "say \"x\""}, *const nulls[] = {NULL};
	static const char *const doc[] = {"Doc"}, *const note[] = {"Note"};
	cairn_read_options ro = {0};
	cairn_search_options o = {0};
	cairn_exclude ex = {"code", old, 2, 0, NULL, NULL};
	cairn_hit h[10];
	cairn_txn *t;
	char line[200];
	size_t n;

	CHECK(st);
	if (!st)
		return;
	for (int i = 0; i < 30; i++) {
		snprintf(line, sizeof(line),
			 "{\"kind\":\"Doc\",\"key\":\"k%02d\",\"title\":\"steel\",\"values\":{\"code\":\"%s\"}}",
			 i, i < 25 ? "old" : "new");
		OK(put_lines(st, NULL, line));
	}
	OK(put_lines(st, NULL,
		     "{\"kind\":\"Doc\",\"key\":\"q\",\"title\":\"steel\",\"values\":{\"code\":\"say \\\"x\\\"\"}}\n"
		     "{\"kind\":\"Note\",\"key\":\"n\",\"title\":\"steel\"}"));
	ro.domain = "d";
	OK(cairn_txn_begin(st, &ro, &t));
	o.text = "steel";
	o.limit = 5;
	OK(cairn_search(t, &o, h, 10, &n, NULL));
	CHECK(n == 5 && memcmp(h[0].rec.key, "k00", 3) == 0); /* without: the old ones first */
	o.exclude = &ex;
	OK(cairn_search(t, &o, h, 10, &n, NULL));
	CHECK(n == 5);
	for (size_t i = 0; i < n; i++) /* k25..k29 or n: never old, never q */
		CHECK((h[i].rec.key_len == 3 && memcmp(h[i].rec.key, "k2", 2) == 0 &&
		       h[i].rec.key[2] >= '5') ||
		      (h[i].rec.key_len == 1 && h[i].rec.key[0] == 'n'));
	o.limit = 10;
	OK(cairn_search(t, &o, h, 10, &n, NULL));
	CHECK(n == 6); /* the five new and the Note (no code: kept) */
	o.text = "steel zzzz"; /* no Record has zzzz: partial matches, exclude as well */
	o.no_typos = 1;
	OK(cairn_search(t, &o, h, 10, &n, NULL));
	CHECK(n == 6 && h[0].words == 1);
	o.text = "steel";
	o.no_typos = 0;
	ex.n_values = 1; /* "old" alone: q comes back */
	OK(cairn_search(t, &o, h, 10, &n, NULL));
	CHECK(n == 7);
	/* Bad excludes: CAIRN_EINVAL, saying what is wrong. */
	ex.attribute = "cdoe";
	CHECK_RC(cairn_search(t, &o, h, 10, &n, NULL), CAIRN_EINVAL);
	CHECK(strstr(cairn_errmsg(), "\"cdoe\"") != NULL);
	ex.attribute = "code";
	o.kinds = note; /* Note has no code */
	o.n_kinds = 1;
	CHECK_RC(cairn_search(t, &o, h, 10, &n, NULL), CAIRN_EINVAL);
	o.kinds = doc;
	OK(cairn_search(t, &o, h, 10, &n, NULL));
	CHECK(n == 6);
	ex.attribute = "tags"; /* strings: not a status */
	CHECK_RC(cairn_search(t, &o, h, 10, &n, NULL), CAIRN_EINVAL);
	ex.attribute = NULL;
	CHECK_RC(cairn_search(t, &o, h, 10, &n, NULL), CAIRN_EINVAL);
	ex.attribute = "code";
	ex.n_values = 0;
	CHECK_RC(cairn_search(t, &o, h, 10, &n, NULL), CAIRN_EINVAL);
	ex.n_values = 17;
	CHECK_RC(cairn_search(t, &o, h, 10, &n, NULL), CAIRN_EINVAL);
	ex.values = nulls;
	ex.n_values = 1;
	CHECK_RC(cairn_search(t, &o, h, 10, &n, NULL), CAIRN_EINVAL);
	ex.values = NULL;
	CHECK_RC(cairn_search(t, &o, h, 10, &n, NULL), CAIRN_EINVAL);
	cairn_txn_end(t);
	cairn_close(st);
}

/*
 * Dense words: containers stored as bitsets, walked and seeked in. steel is
 * in every title, bolt in every third; the rest are fillers of their own, so
 * a score only falls with the title's length: the best are the shortest
 * titles, the first written first.
 */
void test_search_dense(void)
{
	cairn_store *st = sstore();
	size_t len = 0, cap = 5000 * 120;
	char *lines = malloc(cap), want[512], got[512];
	int k = 0;

	CHECK(st && lines);
	if (!st || !lines) {
		free(lines);
		cairn_close(st);
		return;
	}
	for (int i = 0; i < 5000; i++) {
		len += (size_t)snprintf(lines + len, cap - len,
					"%s{\"kind\":\"Doc\",\"key\":\"k%d\",\"title\":\"steel%s", i ? "\n" : "",
					i, i % 3 == 0 ? " bolt" : "");
		for (int f = 0; f < (i * 7) % 5; f++)
			len += (size_t)snprintf(lines + len, cap - len, " f%dx%d", i, f);
		len += (size_t)snprintf(lines + len, cap - len, "\"}");
	}
	OK(put_lines(st, NULL, lines));
	/* Gone: the first two that would lead; the walk must step over them. */
	OK(put_lines(st, NULL, "{\"kind\":\"Doc\",\"key\":\"k0\",\"title\":\"copper\"}"));
	{
		cairn_commit_options co = {0};
		cairn_changeset *cs;

		co.domain = "d";
		co.prov.actor = "test";
		OK(cairn_changeset_new(&cs));
		OK(cairn_changeset_delete(cs, "Doc", "k15", 3, 0));
		OK(cairn_commit(st, &co, cs, NULL));
		cairn_changeset_free(cs);
	}
	want[0] = '\0';
	for (int i = 30, n = 0; n < 20; i += 15, n++) /* i % 15 == 0: bolt, and no filler */
		k += snprintf(want + k, sizeof(want) - (size_t)k, "%sk%d", n ? " " : "", i);
	OK(found(st, NULL, "steel bolt", got, sizeof(got)));
	if (strcmp(got, want) != 0)
		fprintf(stderr, "    got  %s\n    want %s\n", got, want);
	CHECK(strcmp(got, want) == 0);
	OK(found(st, NULL, "\"steel bolt\"", got, sizeof(got)));
	CHECK(strcmp(got, want) == 0);
	/* steel alone: the shortest titles are steel and nothing else (i % 5 == 0, not % 3) */
	k = 0;
	for (int i = 5, n = 0; n < 20; i += 5)
		if (i % 3)
			k += snprintf(want + k, sizeof(want) - (size_t)k, "%sk%d", n++ ? " " : "", i);
	OK(found(st, NULL, "steel", got, sizeof(got)));
	if (strcmp(got, want) != 0)
		fprintf(stderr, "    got  %s\n    want %s\n", got, want);
	CHECK(strcmp(got, want) == 0);
	CHECK(check_clean_search(st));
	free(lines);
	cairn_close(st);
}

/* The postings of each segment of Domain d, in id order; how many segments. */
static size_t segment_sizes(cairn_store *st, uint64_t *out, size_t cap)
{
	cairn_read_options ro = {0};
	cairn_txn *t;
	tseg *segs;
	size_t n = 0;

	ro.domain = "d";
	if (cairn_txn_begin(st, &ro, &t))
		return 0;
	if (text_segments(t->txn, st, t->d.dom, &segs, &n) == 0) {
		for (size_t i = 0; i < n && i < cap; i++)
			out[i] = segs[i].postings;
		free(segs);
	}
	cairn_txn_end(t);
	return n;
}

/*
 * Merges stay short: small segments merge among themselves; a large one
 * waits until enough has gathered beside it.
 */
void test_search_merge_policy(void)
{
	cairn_store *st = sstore();
	uint64_t sz[64], big;
	size_t n;
	int pending = 1;
	char line[256];

	CHECK(st);
	if (!st)
		return;
	{
		size_t len = 0, cap = 2000 * 80;
		char *lines = malloc(cap);

		for (int i = 0; i < 2000; i++)
			len += (size_t)snprintf(lines + len, cap - len,
						"%s{\"kind\":\"Doc\",\"key\":\"big%d\",\"title\":\"steel bolt "
						"%d\"}",
						i ? "\n" : "", i, i);
		OK(put_lines(st, NULL, lines));
		free(lines);
	}
	for (int i = 0; i < 8; i++) {
		snprintf(line, sizeof(line), "{\"kind\":\"Doc\",\"key\":\"s%d\",\"title\":\"tin\"}", i);
		OK(put_lines(st, NULL, line));
		if (i != 6)
			continue;
		/* 8 segments, but the big one with 7 small: no merge */
		OK(cairn_store_maintain(st, 100, &pending));
		CHECK(!pending && segment_sizes(st, sz, 64) == 8);
	}
	n = segment_sizes(st, sz, 64);
	CHECK(n == 9);
	big = sz[0];
	CHECK(big > 2000);
	pending = 1;
	for (int i = 0; i < 20 && pending; i++)
		OK(cairn_store_maintain(st, 100, &pending));
	n = segment_sizes(st, sz, 64);
	CHECK(n == 2 && sz[0] == big && sz[1] == 16); /* the 8 small ones, each tin and its stem */
	FOUND(NULL, "tin", "s0 s1 s2 s3 s4 s5 s6 s7");
	CHECK(check_clean_search(st));
	cairn_close(st);
}

/* Overwrite the value of the first container of the postings with bytes. */
static int lmdb_spoil_postings(const void *bytes, size_t n)
{
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi dbi;
	MDB_cursor *cur;
	MDB_val k, v;
	int rc;

	if ((rc = mdb_env_create(&env)))
		return rc;
	mdb_env_set_maxdbs(env, 32);
	mdb_env_set_mapsize(env, (size_t)1 << 30);
	if ((rc = mdb_env_open(env, test_path("store"), 0, 0644)) ||
	    (rc = mdb_txn_begin(env, NULL, 0, &txn))) {
		mdb_env_close(env);
		return rc;
	}
	if (!(rc = mdb_dbi_open(txn, "postings", 0, &dbi)) && !(rc = mdb_cursor_open(txn, dbi, &cur))) {
		for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0;
		     rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT))
			if (k.mv_size > 12) /* a container, not a descriptor */
				break;
		if (!rc) {
			uint8_t key[512];
			MDB_val nk = {k.mv_size, key}, nv = {n, (void *)bytes};

			memcpy(key, k.mv_data, k.mv_size);
			rc = mdb_put(txn, dbi, &nk, &nv, 0);
		}
		mdb_cursor_close(cur);
	}
	rc = rc ? (mdb_txn_abort(txn), rc) : mdb_txn_commit(txn);
	mdb_env_close(env);
	return rc;
}

void test_search_check_detects(void)
{
	cairn_open_options oo = {.flags = CAIRN_OPEN_NOSYNC | CAIRN_OPEN_NO_BACKGROUND};
	cairn_store *st = sstore();
	cairn_read_options ro = {0};
	cairn_search_options o = {0};
	cairn_hit h[20];
	cairn_txn *t;
	size_t n;
	int problems = 0;

	CHECK(st);
	if (!st)
		return;
	OK(put_lines(st, NULL, "{\"kind\":\"Doc\",\"key\":\"a\",\"title\":\"copper wire\"}"));
	CHECK(check_clean_search(st));
	cairn_close(st);
	OK(lmdb_spoil_postings("\x05\x00\x01\x02", 4));
	OK(cairn_open(test_path("store"), &oo, &st));
	CHECK_RC(cairn_check(st, "d", count_problem, &problems, NULL), CAIRN_ECORRUPT);
	CHECK(problems >= 1);
	/* A search that reads it says so, and nothing else breaks. */
	ro.domain = "d";
	OK(cairn_txn_begin(st, &ro, &t));
	o.text = "copper wire";
	o.limit = 20;
	CHECK_RC(cairn_search(t, &o, h, 20, &n, NULL), CAIRN_ECORRUPT);
	CHECK(n == 0);
	cairn_txn_end(t);
	cairn_close(st);
}
