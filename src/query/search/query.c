/*
 * Full-text search's query: the text analyzed into groups of terms (words,
 * stems, close spellings, prefixes, phrases).
 */
#include <stdlib.h>
#include <string.h>

#include "query/spell.h"
#include "base/alloc.h"
#include "base/err.h"
#include "query/search/search_int.h"

#define STEM_WEIGHT 0.5	     /* a match by stem counts half a match as written */
#define TYPO_TAKE 4	     /* close spellings looked for, the closest first */
#define PREFIX_TAKE 32	     /* words a prefix (supp*) stands for, in byte order */
#define TYPO_WEIGHT1 0.6     /* a match 1 edit away */
#define TYPO_WEIGHT2 0.4     /* ... 2 edits away */
#define TYPO_SEEKS 25000     /* budgets of the walk of the lexicon (exact to 1M words) */
#define TYPO_ENTRIES 200000

/* ---------------------------------------------------------- the query -- */

static int add_term(sctx *s, char tag, const char *t, size_t n, double weight, int how)
{
	qterm *q;

	if (s->nq == s->capq) {
		size_t cap = s->capq ? s->capq * 2 : 16;
		qterm *nq = cr_reallocarray(s->q, cap, sizeof(*nq));

		if (!nq)
			return err_set(CAIRN_ENOMEM, "out of memory");
		s->q = nq;
		s->capq = cap;
	}
	q = &s->q[s->nq++];
	memset(q, 0, sizeof(*q));
	q->term[0] = tag;
	memcpy(q->term + 1, t, n);
	q->len = n + 1;
	q->weight = weight;
	q->how = (uint8_t)how;
	q->group = (uint8_t)(s->ng - 1);
	return 0;
}

static int lexicon_cursor(struct qctx *q)
{
	int mrc;

	if (!q->lex && (mrc = mdb_cursor_open(q->s->t->txn, q->s->t->st->dbi[DB_LEXICON], &q->lex)))
		return store_err(mrc, "lexicon");
	return 0;
}

/* A word followed by '*': the words of the lexicon that start with it. */
static int add_prefix(struct qctx *q, const token *t)
{
	sctx *s = q->s;
	MDB_val k, v;
	kbuf p;
	size_t taken = 0;
	int mrc, rc;

	if ((rc = lexicon_cursor(q)))
		return rc;
	key_lexicon(&p, s->d->dom, NULL, 0);
	kb_bytes(&p, t->s, t->len);
	k.mv_data = p.b;
	k.mv_size = p.n;
	s->d->stats.seeks++;
	for (mrc = mdb_cursor_get(q->lex, &k, &v, MDB_SET_RANGE); mrc == 0 && !rc;
	     mrc = mdb_cursor_get(q->lex, &k, &v, MDB_NEXT)) {
		if (k.mv_size <= p.n || memcmp(k.mv_data, p.b, p.n) != 0 || taken == PREFIX_TAKE)
			break;
		s->d->stats.entries++;
		rc = add_term(s, TERM_WORD, (const char *)k.mv_data + 4, k.mv_size - 5, 1, HOW_PREFIX);
		taken++;
	}
	if (!rc && mrc && mrc != MDB_NOTFOUND)
		rc = store_err(mrc, "lexicon");
	return rc;
}

/* A close spelling of a word of the text. */
typedef struct fix {
	char w[TOKEN_CAP];
	size_t len;
	unsigned d;
} fix;

/* The TYPO_TAKE closest spellings met so far, the closest first. */
struct fixes {
	fix f[TYPO_TAKE];
	size_t n;
	int truncated;
};

static int fix_cmp(const fix *x, const fix *y)
{
	size_t n = x->len < y->len ? x->len : y->len;
	int c;

	if (x->d != y->d)
		return x->d < y->d ? -1 : 1;
	if ((c = memcmp(x->w, y->w, n)))
		return c;
	return (x->len > y->len) - (x->len < y->len);
}

static int take_fix(void *ctx, const MDB_val *key, size_t len, unsigned d)
{
	struct fixes *x = ctx;
	fix f;
	size_t i;

	if (d == 0 || len > TOKEN_CAP)
		return 0;
	memcpy(f.w, (const uint8_t *)key->mv_data + 4, len);
	f.len = len;
	f.d = d;
	for (i = x->n; i > 0 && fix_cmp(&f, &x->f[i - 1]) < 0; i--)
		;
	if (i == TYPO_TAKE || (i > 0 && fix_cmp(&f, &x->f[i - 1]) == 0))
		return 0; /* not among the closest, or met already (a word's other keys) */
	memmove(&x->f[i + 1], &x->f[i], (x->n - i - (x->n == TYPO_TAKE)) * sizeof(fix));
	x->f[i] = f;
	x->n += x->n < TYPO_TAKE;
	return 0;
}

/*
 * A word of letters no Record has (not in the lexicon): its closest
 * spellings become terms of its group, counting for less.
 */
static int add_typos(struct qctx *q, const token *t)
{
	sctx *s = q->s;
	struct fixes x;
	spell_opts o;
	kbuf k;
	MDB_val v;
	uint8_t p[4];
	int rc;

	if (q->no_typos || t->kind != TK_WORD || t->digits || !s->conf.typo_one ||
	    t->len < s->conf.typo_one)
		return 0;
	key_lexicon(&k, s->d->dom, t->s, t->len);
	s->d->stats.seeks++;
	if ((rc = db_get(s->t->txn, s->t->st, DB_LEXICON, k.b, k.n, &v)) != CAIRN_ENOTFOUND)
		return rc; /* known (0), or an error */
	if ((rc = lexicon_cursor(q)))
		return rc;
	memset(&x, 0, sizeof(x));
	memset(&o, 0, sizeof(o));
	be32_put(p, s->d->dom);
	o.prefix = p;
	o.plen = 4;
	o.q = t->s;
	o.m = t->len;
	o.k = t->len < s->conf.typo_two ? 1 : 2;
	o.first_fixed = 1; /* a change of the first letter counts two edits */
	o.max_seeks = TYPO_SEEKS;
	o.max_entries = TYPO_ENTRIES;
	o.fn = take_fix;
	o.ctx = &x;
	if ((rc = spell_walk(q->lex, s->d, &o, &x.truncated)))
		return rc;
	if (o.k == 2 && (rc = spell_first_changed(q->lex, s->d, &o, 2)))
		return rc;
	if (x.n)
		s->info.corrected++;
	for (size_t i = 0; i < x.n && !rc; i++) {
		rc = add_term(s, TERM_WORD, x.f[i].w, x.f[i].len,
			      x.f[i].d == 1 ? TYPO_WEIGHT1 : TYPO_WEIGHT2, HOW_TYPO);
		s->q[s->nq - 1].edits = (uint8_t)x.f[i].d;
	}
	return rc;
}

int search_on_query_token(void *ctx, const token *t)
{
	struct qctx *q = ctx;
	sctx *s = q->s;
	group *g;
	int rc;

	if (t->kind == TK_WHOLE)
		return 0; /* its parts are the words; the whole is one of them in the index */
	if (q->skip_stop && !q->in_phrase && search_stop_word(&s->conf, t->s, t->len)) {
		s->info.stopped++;
		return 0;
	}
	if (s->ng == SEARCH_GROUPS_MAX)
		return err_set(CAIRN_ELIMIT, "a search looks for at most %d words",
			       SEARCH_GROUPS_MAX);
	g = &s->g[s->ng++];
	g->qfirst = s->nq;
	g->pos = t->pos;
	g->word_len = t->len;
	memcpy(g->word, t->s, t->len);
	if (q->in_phrase) {
		rc = add_term(s, TERM_WORD, t->s, t->len, 1, HOW_PHRASE);
		g->qn = s->nq - g->qfirst;
		return rc;
	}
	if (t->kind == TK_WORD && !t->digits && t->end < q->text_len && q->text[t->end] == '*') {
		rc = add_prefix(q, t); /* supp*: the words it stands for, nothing else */
		g->qn = s->nq - g->qfirst;
		return rc;
	}
	if ((rc = add_term(s, TERM_WORD, t->s, t->len, 1, HOW_WORD)))
		return rc;
	if (t->kind == TK_WORD && !t->digits && q->stem) {
		const char *st;
		size_t sn = stem(q->stem, t->s, t->len, &st);

		/* Every word of the same stem, this one too: a match as written scores both. */
		if (sn && (rc = add_term(s, TERM_STEM, st, sn, STEM_WEIGHT, HOW_STEM)))
			return rc;
	}
	if ((rc = add_typos(q, t)))
		return rc;
	g->qn = s->nq - g->qfirst;
	return 0;
}

/* Count the words of the text a search would keep without its stop words. */
int search_count_content(void *ctx, const token *t)
{
	struct qctx *q = ctx;

	if (t->kind != TK_WHOLE && (q->in_phrase || !search_stop_word(&q->s->conf, t->s, t->len)))
		q->content++;
	return 0;
}

/*
 * Analyze the text part by part (outside quotes, a phrase, outside, ...: an
 * unclosed quote runs to the end), each token to fn.
 */
int search_analyze_query(struct qctx *q, const char *text, size_t len,
			 int (*fn)(void *ctx, const token *t))
{
	int rc = 0;

	q->in_phrase = 0;
	for (size_t at = 0; !rc && at <= len; q->in_phrase = !q->in_phrase) {
		const char *e = memchr(text + at, '"', len - at);
		size_t end = e ? (size_t)(e - text) : len, g0 = q->s->ng;
		uint32_t pos = 0;

		q->text = text + at;
		q->text_len = end - at;
		rc = analyze(q->text, q->text_len, &pos, fn, q);
		if (!rc && fn == search_on_query_token && q->in_phrase && q->s->ng - g0 > 1)
			q->s->ph[q->s->nph++] = (phrase){g0, q->s->ng - g0};
		at = end + 1;
	}
	return rc;
}
