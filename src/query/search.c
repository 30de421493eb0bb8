/*
 * Full-text search (cairn_search, docs/search.md). The text's words become
 * groups of terms (the word as written; its stem, which counts for less;
 * for a word no Record has, its closest spellings in the lexicon; for
 * supp*, the lexicon's words that start so); a Record matches when it has
 * a term of every group. Each term's postings are read from every segment
 * into containers, its document frequency counted in the view's live set;
 * then the groups are walked together in vid order, the rarest leading,
 * and a Record that has them all, is live, of a wanted Kind and passes the
 * filter is scored with BM25F (title and values) and kept among the best.
 * Once limit Records are kept, a block of the leading group whose bound
 * cannot beat the worst of them is skipped whole. When too few have every
 * word, a walk of all the terms adds those with some (partial matches).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "query/read.h"
#include "query/spell.h"
#include "base/alloc.h"
#include "base/err.h"
#include "base/text.h"
#include "index/text/text.h"

#define SEARCH_GROUPS_MAX 32 /* words of a text searched for */
#define SEARCH_TEXT_MAX 1024
#define STEM_WEIGHT 0.5	     /* a match by stem counts half a match as written */
#define TYPO_TAKE 4	     /* close spellings looked for, the closest first */
#define PREFIX_TAKE 32	     /* words a prefix (supp*) stands for, in byte order */
#define TYPO_WEIGHT1 0.6     /* a match 1 edit away */
#define TYPO_WEIGHT2 0.4     /* ... 2 edits away */
#define TYPO_SEEKS 2000	     /* budgets of the walk of the lexicon */
#define TYPO_ENTRIES 20000
#define END UINT64_MAX

/* How a term of the query stands for a word of the text. */
enum how { HOW_WORD, HOW_STEM, HOW_TYPO, HOW_PREFIX, HOW_PHRASE };

/* A term of the query. */
typedef struct qterm {
	char term[TEXT_TERM_MAX];
	size_t len;
	double weight;		/* in the query */
	uint8_t how, edits;	/* enum how; a correction's edits */
	uint8_t group;
	uint64_t df;		/* live postings in the view, every segment */
	double idf;
	double max_bound;	/* the highest block bound of its lists */
} qterm;

/* One term's postings in one segment, and where a walk is in them. */
typedef struct tlist {
	const qterm *q;
	tcont *c;
	size_t nc;
	uint64_t df;		/* its live postings */
	/* the walk */
	size_t ci;		/* container */
	uint32_t bi, j;		/* block, posting in the block */
	uint16_t lo[TEXT_BLOCK];
	int lo_ok;		/* lo holds block bi's vids */
	tpay pay;
	int pay_ok;
	uint64_t cur;		/* vid, END past the last */
	int positioned;		/* cur is set */
} tlist;

typedef struct group {
	size_t first, n;	/* its lists */
	size_t qfirst, qn;	/* its terms */
	uint64_t df;
	uint64_t cur;		/* the lowest vid of its lists, after group_seek */
	uint32_t pos;		/* the word's position in the text */
	char word[TOKEN_CAP];	/* the word, as analyzed */
	size_t word_len;
} group;

/* A quoted phrase: groups first..first+n-1, each a word as written, in that order. */
typedef struct phrase {
	size_t first, n;
} phrase;

/* The positions of one word of a phrase in the Record being scored. */
typedef struct pbuf {
	uint32_t *p;
	size_t n, cap;
} pbuf;

typedef struct hit {
	uint64_t vid;
	double score;
	unsigned words;		/* groups it matches */
	uint64_t groups;	/* which: a bit per group */
} hit;

/* The best so far: a heap, the worst on top. */
typedef struct heap {
	hit *h;
	size_t n, cap;
} heap;

typedef struct sctx {
	cairn_txn *t;
	dctx *d;
	search_conf conf;
	qterm *q;
	size_t nq, capq;
	tlist *l;
	size_t nl, capl;
	group g[SEARCH_GROUPS_MAX];
	size_t ng;
	phrase ph[SEARCH_GROUPS_MAX / 2];
	size_t nph;
	pbuf pos[SEARCH_GROUPS_MAX];	/* scratch of the phrase check */
	uint32_t kinds[64];
	size_t n_kinds;
	double n_docs, avg_title, avg_values;
	/* live-set chunks of the view, fetched when first needed */
	const uint8_t **chunk;
	uint8_t *fetched;	/* 0: not yet; 1: fetched; 2: fetched, every vid live */
	size_t n_chunks;
	MDB_cursor *cells;
	heap best;		/* Records with every word */
	size_t limit;
	const qfilter *filter[64]; /* the hits' filter, parsed for each of kinds (NULL: none) */
	cairn_search_info info;
	/* walk's shortcut (dense_next): the vids where every group is, in one container range */
	uint64_t mask_range;	/* vid >> 16 of the mask + 1; 0: none */
	uint64_t mask[TEXT_BITSET_BYTES / 8];
} sctx;

/* ---------------------------------------------------------------- live -- */

/*
 * Bits set in x, inline: without -mpopcnt the compiler's builtin is a call
 * into libgcc, which showed in profiles of searches over common words.
 */
static inline unsigned pop64(uint64_t x)
{
	x -= (x >> 1) & 0x5555555555555555ull;
	x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
	return (unsigned)((x * 0x0101010101010101ull) >> 56);
}

static int live_chunk(sctx *s, uint64_t id, const uint8_t **bits)
{
	size_t len;
	int rc;

	if (id >= s->n_chunks) { /* a Version newer than the segments said */
		*bits = NULL;
		return 0;
	}
	if (!s->fetched[id]) {
		rc = cell_get_cur(s->d, s->cells, CELL_LIVE, id, &s->chunk[id], &len);
		if (rc == CAIRN_ENOTFOUND)
			s->chunk[id] = NULL;
		else if (rc)
			return rc;
		else if (len != LIVE_CHUNK_BYTES)
			return err_set(CAIRN_ECORRUPT, "live-set chunk of %zu bytes", len);
		s->fetched[id] = 1;
		if (s->chunk[id]) {
			size_t x = 0;

			while (x < LIVE_CHUNK_BYTES && s->chunk[id][x] == 0xff)
				x++;
			if (x == LIVE_CHUNK_BYTES)
				s->fetched[id] = 2;
		}
	}
	*bits = s->chunk[id];
	return 0;
}

static int is_live(sctx *s, uint64_t vid, int *live)
{
	const uint8_t *bits;
	unsigned bit = (unsigned)(vid & ((1u << LIVE_CHUNK_BITS) - 1));
	int rc = live_chunk(s, vid >> LIVE_CHUNK_BITS, &bits);

	*live = !rc && bits && ((bits[bit >> 3] >> (bit & 7)) & 1);
	return rc;
}

/* Live postings of a container. */
static int count_live(sctx *s, const tcont *c, uint64_t *df)
{
	int rc;

	if (c->bits) { /* the bitset against the live chunks it spans */
		for (uint32_t k = 0; k < (1u << (TEXT_CONTAINER_BITS - LIVE_CHUNK_BITS)); k++) {
			const uint8_t *bits, *mine = c->bits + k * LIVE_CHUNK_BYTES;

			if ((rc = live_chunk(s, (c->base >> LIVE_CHUNK_BITS) + k, &bits)))
				return rc;
			for (uint32_t x = 0; bits && x < LIVE_CHUNK_BYTES; x += 8) {
				uint64_t a, b;

				memcpy(&a, mine + x, 8);
				memcpy(&b, bits + x, 8);
				*df += pop64(a & b);
			}
		}
		return 0;
	}
	for (uint32_t bi = 0; bi < c->nb; bi++) {
		uint16_t lo[TEXT_BLOCK];
		uint64_t a = (c->base + c->b[bi].first) >> LIVE_CHUNK_BITS;
		uint64_t z = (c->base + c->b[bi].last) >> LIVE_CHUNK_BITS;
		const uint8_t *bits;

		/* A block within chunks where every vid is live: all of it, unread. */
		while (a <= z && !(rc = live_chunk(s, a, &bits)) && a < s->n_chunks &&
		       s->fetched[a] == 2)
			a++;
		if (rc)
			return rc;
		if (a > z) {
			*df += c->b[bi].n;
			continue;
		}
		if ((rc = tblock_vids(c, bi, lo)))
			return rc;
		for (uint32_t j = 0; j < c->b[bi].n; j++) {
			int live;

			if ((rc = is_live(s, c->base + lo[j], &live)))
				return rc;
			*df += (uint64_t)live;
		}
	}
	return 0;
}

/* ------------------------------------------------------------- scoring -- */

/* BM25F of one term in one Record. */
static double term_score(const sctx *s, const qterm *q, uint32_t tf_title, uint32_t tf_values,
			 uint32_t dl_title, uint32_t dl_values)
{
	double b = s->conf.b, tf = 0;

	if (tf_title)
		tf += s->conf.title_weight * tf_title /
		      (s->avg_title > 0 ? 1 - b + b * dl_title / s->avg_title : 1);
	if (tf_values)
		tf += (tf_values / 10.0) /
		      (s->avg_values > 0 ? 1 - b + b * dl_values / s->avg_values : 1);
	return q->weight * q->idf * tf / (s->conf.k1 + tf);
}

static double block_bound(const sctx *s, const tlist *l, const struct tblock *b)
{
	return term_score(s, l->q, b->max_tf_title, b->max_tf_values, b->min_dl_title,
			  b->min_dl_values);
}

/* ---------------------------------------------------------- the lists -- */

static tlist *new_list(sctx *s)
{
	tlist *l;

	if (s->nl == s->capl) {
		size_t cap = s->capl ? s->capl * 2 : 16;
		tlist *nl = cr_reallocarray(s->l, cap, sizeof(*nl));

		if (!nl)
			return NULL;
		s->l = nl;
		s->capl = cap;
	}
	l = &s->l[s->nl++];
	memset(l, 0, sizeof(*l));
	return l;
}

/* The lists of term q: one per segment that has it. */
static int load_term(sctx *s, size_t qi, const tseg *segs, size_t n_segs, MDB_cursor *cur)
{
	int rc = 0;

	for (size_t i = 0; i < n_segs && !rc; i++) {
		const qterm *q = &s->q[qi];
		tlist *l = NULL;
		size_t cap = 0;
		kbuf p;
		MDB_val k, v;
		int mrc;

		key_tterm(&p, s->d->dom, segs[i].id, q->term, q->len);
		k.mv_data = p.b;
		k.mv_size = p.n;
		s->d->stats.seeks++;
		for (mrc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); mrc == 0 && !rc;
		     mrc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
			tcont *c;

			if (k.mv_size != p.n + 4 || memcmp(k.mv_data, p.b, p.n) != 0)
				break;
			s->d->stats.entries++;
			if (!l && !(l = new_list(s)))
				return err_set(CAIRN_ENOMEM, "out of memory");
			l->q = &s->q[qi];
			if (l->nc == cap) {
				size_t nc = cap ? cap * 2 : 8;
				tcont *n = arena_alloc(&s->t->scratch, nc * sizeof(*n));

				if (!n)
					return err_set(CAIRN_ENOMEM, "out of memory");
				if (l->nc)
					memcpy(n, l->c, l->nc * sizeof(*n));
				l->c = n;
				cap = nc;
			}
			c = &l->c[l->nc];
			if ((rc = tcont_decode(v.mv_data, v.mv_size,
					       be32_get((const uint8_t *)k.mv_data + p.n),
					       &s->t->scratch, c)))
				break;
			if (l->nc) {
				const tcont *pc = &l->c[l->nc - 1];

				if (c->base + c->b[0].first <= pc->base + pc->b[pc->nb - 1].last)
					rc = err_set(CAIRN_ECORRUPT, "postings: containers out of order");
			}
			if (!rc)
				rc = count_live(s, c, &l->df);
			s->info.postings += c->n;
			l->nc++;
		}
		if (!rc && mrc && mrc != MDB_NOTFOUND)
			rc = store_err(mrc, "postings");
		if (l)
			s->q[qi].df += l->df;
	}
	return rc;
}

/* 64 bits of a container's bitset, from bit 64 w on (bit i is vid 64 w + i). */
static inline uint64_t bits64(const uint8_t *bits, uint32_t w)
{
	const uint8_t *p = bits + 8 * (size_t)w;

	return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24 |
	       (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 |
	       (uint64_t)p[7] << 56;
}

/*
 * In a bitset container's block: the first vid at or after want (within
 * first..last) in *at, and its place in the block in *j.
 */
static int bitset_seek(const tcont *c, const struct tblock *b, uint32_t want, uint32_t *at,
		       uint32_t *j)
{
	uint32_t w = want >> 6, f = b->first >> 6, n = 0;
	uint64_t x = bits64(c->bits, w) & (~0ull << (want & 63));

	while (!x && ++w <= b->last >> 6)
		x = bits64(c->bits, w);
	if (!x || (*at = 64 * w + (uint32_t)__builtin_ctzll(x)) > b->last)
		return err_set(CAIRN_ECORRUPT, "postings: a block's bitset does not hold its last vid");
	/* Its place: the bits from first up to it. */
	for (uint32_t k = f; k <= w; k++) {
		uint64_t y = bits64(c->bits, k);

		if (k == f)
			y &= ~0ull << (b->first & 63);
		if (k == w)
			y &= (*at & 63) ? ~0ull >> (64 - (*at & 63)) : 0;
		n += pop64(y);
	}
	if (n >= b->n)
		return err_set(CAIRN_ECORRUPT, "postings: a block's bitset holds more than its postings");
	*j = n;
	return 0;
}

/* Position list l on its first posting at or after vid (END when none). */
static int seek_vid(tlist *l, uint64_t vid)
{
	int rc;

	if (l->positioned && l->cur >= vid)
		return 0;
	l->positioned = 1;
	while (l->ci < l->nc) {
		const tcont *c = &l->c[l->ci];

		if (c->base + c->b[c->nb - 1].last < vid) {
			l->ci++;
			l->bi = l->j = 0;
			l->lo_ok = l->pay_ok = 0;
			continue;
		}
		while (c->base + c->b[l->bi].last < vid) {
			l->bi++;
			l->j = 0;
			l->lo_ok = l->pay_ok = 0;
		}
		if (l->j == 0 && c->base + c->b[l->bi].first >= vid) {
			/* At the start of a block: its header says where; read it later, if at all. */
			l->cur = c->base + c->b[l->bi].first;
			return 0;
		}
		if (!c->bits) { /* fixed-width vids: gallop from where the list is, then bisect */
			const struct tblock *b = &c->b[l->bi];
			uint32_t lo = l->j, hi = b->n - 1, want = (uint32_t)(vid - c->base), at, step = 1;

			while (lo + step < hi && tblock_vid(b, lo + step) < want) {
				lo += step + 1;
				step *= 2;
			}
			if (lo + step < hi)
				hi = lo + step;
			while (lo < hi) {
				uint32_t mid = lo + (hi - lo) / 2;

				if (tblock_vid(b, mid) < want)
					lo = mid + 1;
				else
					hi = mid;
			}
			at = tblock_vid(b, lo);
			if (at < want || at > b->last)
				return err_set(CAIRN_ECORRUPT, "postings: a block's vids are out of order");
			l->j = lo;
			l->cur = c->base + at;
			return 0;
		}
		{
			uint32_t at = 0, want = (uint32_t)(vid - c->base);

			if ((rc = bitset_seek(c, &c->b[l->bi], want < c->b[l->bi].first ? c->b[l->bi].first : want,
					      &at, &l->j)))
				return rc;
			l->cur = c->base + at;
			return 0;
		}
	}
	l->cur = END;
	return 0;
}

/* The last vid of the block l is in. */
static uint64_t block_end(const tlist *l)
{
	const tcont *c = &l->c[l->ci];

	return c->base + c->b[l->bi].last;
}

static const struct tblock *cur_block(const tlist *l)
{
	return &l->c[l->ci].b[l->bi];
}

/* Every list of g at or after vid; g->cur the lowest. */
static int group_seek(sctx *s, group *g, uint64_t vid)
{
	uint64_t m = END;
	int rc;

	for (size_t i = 0; i < g->n; i++) {
		tlist *l = &s->l[g->first + i];

		if (!(l->positioned && l->cur >= vid) && (rc = seek_vid(l, vid)))
			return rc;
		if (l->cur < m)
			m = l->cur;
	}
	g->cur = m;
	return 0;
}

/* ----------------------------------------------------------- the best -- */

/* Is a worse than b: fewer words, a lower score, or the same from a later Version? */
static int worse(const hit *a, const hit *b)
{
	if (a->words != b->words)
		return a->words < b->words;
	return a->score < b->score || (a->score == b->score && a->vid > b->vid);
}

static void sift_down(hit *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		hit x;

		if (l < n && worse(&h[l], &h[m]))
			m = l;
		if (r < n && worse(&h[r], &h[m]))
			m = r;
		if (m == i)
			return;
		x = h[i];
		h[i] = h[m];
		h[m] = x;
		i = m;
	}
}

static void keep(heap *p, const hit *x)
{
	if (!p->cap)
		return;
	if (p->n < p->cap) {
		size_t i = p->n++;

		p->h[i] = *x;
		while (i && worse(&p->h[i], &p->h[(i - 1) / 2])) {
			hit y = p->h[i];

			p->h[i] = p->h[(i - 1) / 2];
			p->h[(i - 1) / 2] = y;
			i = (i - 1) / 2;
		}
	} else if (worse(&p->h[0], x)) {
		p->h[0] = *x;
		sift_down(p->h, p->n, 0);
	}
}

/* Keep x in p when it would be kept and its Record passes the filter, if any. */
static int keep_checked(sctx *s, heap *p, const hit *x)
{
	vrec v;
	int match, rc;

	if (s->filter[0]) {
		size_t k = 0;

		if (!p->cap || (p->n == p->cap && !worse(&p->h[0], x)))
			return 0; /* it would not be kept: no need to read it */
		if ((rc = version_get(s->d, x->vid, &v)))
			return rc;
		while (k < s->n_kinds && s->kinds[k] != v.kr)
			k++;
		if (k == s->n_kinds)
			return err_set(CAIRN_ECORRUPT, "a posting's Kind is not its Version's");
		if ((rc = qfilter_match(s->filter[k], &s->t->scratch, v.values, v.values_len, &match)))
			return rc;
		if (!match)
			return 0;
	}
	keep(p, x);
	return 0;
}

/*
 * Can nothing under bound beat the kept Records? A bound adds the same
 * terms' scores as a Record's score but in another order, so where they are
 * equal (the kept Records hold the best score there is, as often when titles
 * are short) it may come out an ulp above: a relative 1e-12 absorbs that,
 * far below any real difference of two scores.
 */
static int beaten(const heap *p, double bound)
{
	return p->n == p->cap && bound <= p->h[0].score * (1 + 1e-12);
}

/* ------------------------------------------------------------ the walk -- */

static int kind_wanted(const sctx *s, uint32_t kind)
{
	if (!s->n_kinds)
		return 1;
	for (size_t i = 0; i < s->n_kinds; i++)
		if (s->kinds[i] == kind)
			return 1;
	return 0;
}

/* The positions of the list of group gi at the Record being scored (its payload read). */
static int word_positions(sctx *s, size_t gi, uint64_t vid, pbuf *out)
{
	const group *g = &s->g[gi];

	for (size_t i = 0; i < g->n; i++) {
		const tlist *l = &s->l[g->first + i];
		size_t n;
		int rc;

		if (l->cur != vid)
			continue;
		if (!l->pay.positions)
			return err_set(CAIRN_ECORRUPT, "postings: a word without positions");
		if ((rc = tpos_decode(l->pay.pos[l->j], l->pay.pos_len[l->j], out->p, out->cap, &n)))
			return rc;
		if (n > out->cap) {
			uint32_t *np = cr_reallocarray(out->p, n, sizeof(*np));

			if (!np)
				return err_set(CAIRN_ENOMEM, "out of memory");
			out->p = np;
			out->cap = n;
			if ((rc = tpos_decode(l->pay.pos[l->j], l->pay.pos_len[l->j], out->p,
					      out->cap, &n)))
				return rc;
		}
		out->n = n;
		return 0;
	}
	out->n = 0;
	return 0;
}

static int has_pos(const pbuf *b, uint32_t x)
{
	size_t lo = 0, hi = b->n;

	while (lo < hi) {
		size_t m = lo + (hi - lo) / 2;

		if (b->p[m] < x)
			lo = m + 1;
		else
			hi = m;
	}
	return lo < b->n && b->p[lo] == x;
}

/* Are phrase ph's words in place at the Record being scored (each group there)? */
static int phrase_at(sctx *s, const phrase *ph, uint64_t vid, int *ok)
{
	int rc;

	*ok = 0;
	for (size_t i = 0; i < ph->n; i++)
		if ((rc = word_positions(s, ph->first + i, vid, &s->pos[i])))
			return rc;
	for (size_t a = 0; a < s->pos[0].n && !*ok; a++) {
		uint32_t p0 = s->pos[0].p[a];

		*ok = 1;
		for (size_t i = 1; i < ph->n && *ok; i++)
			*ok = has_pos(&s->pos[i], p0 + (s->g[ph->first + i].pos - s->g[ph->first].pos));
	}
	return 0;
}

/*
 * Score the Record at vid: the groups it has (a phrase's only with its
 * words in place) in x->groups and x->words, their terms' BM25F in
 * x->score; *counts 0 when it is not live or not of a wanted Kind.
 */
static int score_at(sctx *s, uint64_t vid, hit *x, int *counts)
{
	uint32_t kind = 0;
	uint64_t has = 0;	/* a bit per group */
	int rc, live;

	memset(x, 0, sizeof(*x));
	x->vid = vid;
	*counts = 0;
	for (size_t gi = 0; gi < s->ng; gi++)
		for (size_t i = 0; i < s->g[gi].n; i++) {
			tlist *l = &s->l[s->g[gi].first + i];

			if (l->cur != vid)
				continue;
			if (!l->pay_ok) {
				tpay_begin(&l->c[l->ci], l->bi, &l->pay);
				l->pay_ok = 1;
			}
			if ((rc = tpay_upto(&l->pay, l->j)))
				return rc;
			kind = l->pay.kind[l->j];
			has |= 1ull << gi;
		}
	for (size_t p = 0; p < s->nph; p++) {
		const phrase *ph = &s->ph[p];
		uint64_t mask = ((1ull << ph->n) - 1) << ph->first;
		int ok;

		if ((has & mask) != mask)
			ok = 0;
		else if ((rc = phrase_at(s, ph, vid, &ok)))
			return rc;
		if (!ok)
			has &= ~mask;
	}
	if (!has)
		return 0;
	for (size_t gi = 0; gi < s->ng; gi++)
		for (size_t i = 0; (has >> gi & 1) && i < s->g[gi].n; i++) {
			const tlist *l = &s->l[s->g[gi].first + i];

			if (l->cur == vid)
				x->score += term_score(s, l->q, l->pay.tf_title[l->j],
						       l->pay.tf_values[l->j], l->pay.dl_title[l->j],
						       l->pay.dl_values[l->j]);
		}
	x->groups = has;
	x->words = pop64(has);
	if (!kind_wanted(s, kind))
		return 0;
	if ((rc = is_live(s, vid, &live)))
		return rc;
	*counts = live;
	return 0;
}

/* The bound of group g's Records up to vid end: per term, its lists' blocks' highest. */
static double group_bound(const sctx *s, const group *g, uint64_t end)
{
	double bound = 0, term = 0;

	for (size_t i = 0; i < g->n; i++) {
		const tlist *l = &s->l[g->first + i];
		double x;

		if (i && l->q != s->l[g->first + i - 1].q) {
			bound += term;
			term = 0;
		}
		if (l->cur == END || l->cur > end)
			continue;
		if ((x = cur_block(l)->bound) > term)
			term = x;
	}
	return bound + term;
}

/* The container of list l for vid range r (vid >> 16), or NULL. */
static const tcont *range_cont(const tlist *l, uint64_t r)
{
	size_t lo = l->ci, hi = l->nc;

	while (lo < hi) {
		size_t m = lo + (hi - lo) / 2;

		if (l->c[m].base >> TEXT_CONTAINER_BITS < r)
			lo = m + 1;
		else
			hi = m;
	}
	return lo < l->nc && l->c[lo].base >> TEXT_CONTAINER_BITS == r ? &l->c[lo] : NULL;
}

/*
 * Where every group may be, from vid on, when every group is common (the
 * rarest has search_dense_min postings per container or more): per container range
 * of 65,536 vids, the AND over the groups of the OR of their lists' vids as
 * bitsets says it a word at a time, so the walk goes straight to the next
 * vid where all are (or to the next range) instead of seeking list after
 * list at each vid of the rarest. Building a range's mask reads each vid of
 * it once, about what the walk would; when one group is rare, seeking it is
 * cheaper, and vid stays as it is.
 */
uint64_t search_dense_min = 1024;

static void dense_next(sctx *s, uint64_t *vid)
{
	if (*vid != END) {
		uint64_t r = *vid >> TEXT_CONTAINER_BITS, lo = *vid & 0xffff;
		uint32_t w;

		if (s->mask_range != r + 1) {
			s->mask_range = r + 1;
			for (size_t gi = 0; gi < s->ng; gi++) {
				uint64_t any[TEXT_BITSET_BYTES / 8];

				memset(any, 0, sizeof(any));
				for (size_t i = 0; i < s->g[gi].n; i++) {
					const tcont *c = range_cont(&s->l[s->g[gi].first + i], r);

					for (uint32_t k = 0; c && c->bits && k < TEXT_BITSET_BYTES / 8; k++)
						any[k] |= bits64(c->bits, k);
					for (uint32_t b = 0; c && !c->bits && b < c->nb; b++)
						for (uint32_t j = 0; j < c->b[b].n; j++) {
							uint32_t x = tblock_vid(&c->b[b], j);

							any[x >> 6] |= 1ull << (x & 63);
						}
				}
				for (uint32_t k = 0; k < TEXT_BITSET_BYTES / 8; k++)
					s->mask[k] = gi ? s->mask[k] & any[k] : any[k];
			}
		}
		w = (uint32_t)(lo >> 6);
		{
			uint64_t x = s->mask[w] & (~0ull << (lo & 63));

			while (!x && ++w < TEXT_BITSET_BYTES / 8)
				x = s->mask[w];
			if (x) {
				*vid = (r << TEXT_CONTAINER_BITS) + 64 * w + (uint64_t)__builtin_ctzll(x);
				return;
			}
		}
		*vid = (r + 1) << TEXT_CONTAINER_BITS; /* none left in the range: the seeks go on */
	}
}

static int walk(sctx *s)
{
	size_t lead = 0;
	uint64_t vid = 0;
	int rc = 0;

	int dense;

	for (size_t i = 1; i < s->ng; i++)
		if (s->g[i].df < s->g[lead].df)
			lead = i;
	{
		uint64_t postings = 0, containers = 0;

		for (size_t i = 0; i < s->g[lead].n; i++) {
			const tlist *l = &s->l[s->g[lead].first + i];

			containers += l->nc;
			for (size_t c = 0; c < l->nc; c++)
				postings += l->c[c].n;
		}
		dense = s->ng > 1 && postings >= search_dense_min * (containers ? containers : 1);
	}
	for (;;) {
		group *g = &s->g[lead];
		int all = 1;

		if (dense)
			dense_next(s, &vid);
		if ((rc = group_seek(s, g, vid)))
			return rc;
		if ((vid = g->cur) == END)
			return 0;
		/*
		 * Skip the leading group's blocks that cannot beat the kept Records:
		 * up to the end of the first block it is in, a Record has each term
		 * in one segment at most, so a term adds the highest bound of its
		 * lists' blocks there; every other group, its terms' highest bounds.
		 */
		if (s->best.n == s->best.cap) {
			double bound;
			uint64_t end = END;

			for (size_t i = 0; i < g->n; i++) {
				const tlist *l = &s->l[g->first + i];

				if (l->cur != END && block_end(l) < end)
					end = block_end(l);
			}
			bound = group_bound(s, g, end);
			for (size_t o = 0; o < s->ng; o++)
				for (size_t qi = s->g[o].qfirst; o != lead && qi < s->g[o].qfirst + s->g[o].qn;
				     qi++)
					bound += s->q[qi].max_bound;
			if (beaten(&s->best, bound)) {
				vid = end + 1;
				continue;
			}
		}
		/* Every other group at vid, or the next vid they could all be at. */
		{
			uint64_t next = vid;

			for (size_t o = 0; o < s->ng; o++) {
				if (o != lead && (rc = group_seek(s, &s->g[o], vid)))
					return rc;
				if (s->g[o].cur == END)
					return 0;
				if (s->g[o].cur != vid) {
					all = 0;
					if (s->g[o].cur > next)
						next = s->g[o].cur;
				}
			}
			/*
			 * Every group at or past vid: up to the first end of a block
			 * any of them is in, every term's bound is its lists' blocks'.
			 * When they cannot beat the kept Records, past all of them.
			 */
			if (s->best.n == s->best.cap) {
				uint64_t end = END;
				double bound = 0;

				for (size_t i = 0; i < s->nl; i++)
					if (s->l[i].cur != END && block_end(&s->l[i]) < end)
						end = block_end(&s->l[i]);
				for (size_t o = 0; o < s->ng; o++)
					bound += group_bound(s, &s->g[o], end);
				if (beaten(&s->best, bound)) {
					vid = end + 1;
					continue;
				}
			}
			if (!all) {
				vid = next;
				continue;
			}
		}
		{
			hit x;
			int counts;

			if ((rc = score_at(s, vid, &x, &counts)))
				return rc;
			s->info.scored++;
			if (counts && x.words == s->ng) {
				s->info.matches++;
				if ((rc = keep_checked(s, &s->best, &x)))
					return rc;
			}
			vid++;
		}
	}
}

/*
 * Records with some of the words (not all): every list walked together,
 * each Record counted by the groups it has and scored by its terms.
 */
static int walk_partial(sctx *s, heap *part)
{
	uint64_t vid = 0;
	int rc;

	for (size_t i = 0; i < s->nl; i++) {
		tlist *l = &s->l[i];

		l->ci = l->bi = l->j = 0;
		l->lo_ok = l->pay_ok = l->positioned = 0;
	}
	for (;;) {
		uint64_t m = END;
		unsigned words = 0;
		hit x;
		int counts;

		for (size_t i = 0; i < s->nl; i++) {
			tlist *l = &s->l[i];

			if (!(l->positioned && l->cur >= vid) && (rc = seek_vid(l, vid)))
				return rc;
			if (l->cur < m)
				m = l->cur;
		}
		if ((vid = m) == END)
			return 0;
		for (size_t g = 0; g < s->ng; g++)
			for (size_t i = 0; i < s->g[g].n; i++)
				if (s->l[s->g[g].first + i].cur == vid) {
					words++;
					break;
				}
		/* Those with every group were the first walk's, unless a phrase is out of place. */
		if (words < s->ng || s->nph) {
			if ((rc = score_at(s, vid, &x, &counts)))
				return rc;
			s->info.scored++;
			if (counts && x.words < s->ng) {
				if ((rc = keep_checked(s, part, &x)))
					return rc;
			}
		}
		vid++;
	}
}

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

struct qctx {
	sctx *s;
	stemmer *stem;
	int no_typos;
	MDB_cursor *lex;	/* the lexicon, opened when first needed */
	const char *text;	/* the part of the text being read */
	size_t text_len;
	int in_phrase;		/* it is a quoted phrase: its words as written, nothing else */
	int skip_stop;		/* leave the stop words out (the text has other words) */
	size_t content;		/* words counted by count_content */
};

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

struct fixes {
	fix f[64];
	size_t n;
	int truncated;
};

static int take_fix(void *ctx, const MDB_val *key, size_t len, unsigned d)
{
	struct fixes *x = ctx;

	if (d == 0 || len > TOKEN_CAP || x->n == 64)
		return 0;
	memcpy(x->f[x->n].w, (const uint8_t *)key->mv_data + 4, len);
	x->f[x->n].len = len;
	x->f[x->n++].d = d;
	return 0;
}

static int fix_cmp(const void *a, const void *b)
{
	const fix *x = a, *y = b;
	size_t n = x->len < y->len ? x->len : y->len;
	int c;

	if (x->d != y->d)
		return x->d < y->d ? -1 : 1;
	if ((c = memcmp(x->w, y->w, n)))
		return c;
	return (x->len > y->len) - (x->len < y->len);
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
	o.first_fixed = t->len < s->conf.typo_two;
	o.max_seeks = TYPO_SEEKS;
	o.max_entries = TYPO_ENTRIES;
	o.fn = take_fix;
	o.ctx = &x;
	if ((rc = spell_walk(q->lex, s->d, &o, &x.truncated)))
		return rc;
	if (x.n)
		s->info.corrected++;
	qsort(x.f, x.n, sizeof(x.f[0]), fix_cmp);
	for (size_t i = 0; i < x.n && i < TYPO_TAKE && !rc; i++) {
		rc = add_term(s, TERM_WORD, x.f[i].w, x.f[i].len,
			      x.f[i].d == 1 ? TYPO_WEIGHT1 : TYPO_WEIGHT2, HOW_TYPO);
		s->q[s->nq - 1].edits = (uint8_t)x.f[i].d;
	}
	return rc;
}

static int on_query_token(void *ctx, const token *t)
{
	struct qctx *q = ctx;
	sctx *s = q->s;
	group *g;
	int rc;

	if (t->kind == TK_WHOLE)
		return 0; /* its parts are the words; the whole is one of them in the index */
	if (q->skip_stop && !q->in_phrase && search_stop_word(&s->conf, t->s, t->len))
		return 0;
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

/* ------------------------------------------------------------- explain -- */

#define SNIPPET_BEFORE 4	/* words shown before a value's first match */
#define SNIPPET_WORDS 16	/* words of a value's snippet */
#define SNIPPET_TITLE 48	/* ... of the title's */
#define SNIPPETS_MAX 4		/* value snippets per hit */

/* A word of the field being explained: where it is, and whether a term matched it. */
typedef struct etok {
	size_t start, end;
	int hit;
} etok;

typedef struct ectx {
	sctx *s;
	stemmer *stem;
	uint64_t groups;	/* the hit's */
	uint32_t weight;	/* tenths, for values; 0 in the title */
	uint32_t words;
	uint32_t *tf_title, *tf_values; /* per term, as the index counts them */
	uint64_t *fields;	/* per term: bit 0 the title, bit 1 + i the searched Attribute i */
	unsigned field;
	etok *tok;
	size_t ntok, captok;
	int hits;		/* words matched in the field */
} ectx;

static int explain_token(void *ctx, const token *t)
{
	ectx *e = ctx;
	const char *st = NULL;
	size_t sn = 0;
	int matched = 0;

	if (t->kind != TK_WHOLE)
		e->words++;
	if (e->stem && t->kind == TK_WORD && !t->digits)
		sn = stem(e->stem, t->s, t->len, &st);
	for (size_t qi = 0; qi < e->s->nq; qi++) {
		const qterm *q = &e->s->q[qi];
		int is = q->term[0] == TERM_STEM ? sn && q->len == sn + 1 && !memcmp(q->term + 1, st, sn)
						  : q->len == t->len + 1 && !memcmp(q->term + 1, t->s, t->len);

		if (!is || !(e->groups >> q->group & 1))
			continue;
		if (e->weight)
			e->tf_values[qi] += e->weight;
		else
			e->tf_title[qi]++;
		e->fields[qi] |= 1ull << e->field;
		matched = 1;
	}
	if (t->kind == TK_WHOLE) { /* an identifier kept whole: its parts came before it */
		for (size_t i = e->ntok; matched && i > 0 && e->tok[i - 1].start >= t->start; i--)
			e->tok[i - 1].hit = 1;
		e->hits += matched;
		return 0;
	}
	if (e->ntok == e->captok) {
		size_t cap = e->captok ? e->captok * 2 : 64;
		etok *n = cr_reallocarray(e->tok, cap, sizeof(*n));

		if (!n)
			return err_set(CAIRN_ENOMEM, "out of memory");
		e->tok = n;
		e->captok = cap;
	}
	e->tok[e->ntok++] = (etok){t->start, t->end, matched};
	e->hits += matched;
	return 0;
}

/*
 * The snippet of a field: from a few words before its first match, some
 * words, each match between <em> and </em>, "…" where the text goes on.
 */
static void snippet(buf *b, const char *field, const char *text, size_t len, const etok *tok,
		    size_t ntok, size_t words)
{
	size_t f = 0, a, z, at;
	buf t = BUF_INIT;

	while (f < ntok && !tok[f].hit)
		f++;
	a = f > SNIPPET_BEFORE ? f - SNIPPET_BEFORE : 0;
	z = a + words < ntok ? a + words : ntok;
	at = a ? tok[a].start : 0;
	if (at)
		buf_puts(&t, "\xe2\x80\xa6");
	for (size_t i = a; i < z; i++) {
		buf_put(&t, text + at, tok[i].start - at);
		if (tok[i].hit)
			buf_puts(&t, "<em>");
		buf_put(&t, text + tok[i].start, tok[i].end - tok[i].start);
		if (tok[i].hit)
			buf_puts(&t, "</em>");
		at = tok[i].end;
	}
	if (z == ntok) {
		buf_put(&t, text + at, len - at);
	} else {
		buf_puts(&t, "\xe2\x80\xa6");
	}
	buf_puts(b, b->len && b->p[b->len - 1] != '[' ? ",{\"field\":" : "{\"field\":");
	json_quote(b, field, strlen(field));
	buf_puts(b, ",\"text\":");
	json_quote(b, (const char *)t.p, t.len);
	buf_put_u8(b, '}');
	b->oom |= t.oom;
	buf_release(&t);
}

/* Analyze one field of the hit; its snippet into snips (if not NULL) when a term matched it. */
static int explain_field(ectx *e, buf *snips, const char *name, const char *text, size_t len,
			 size_t words)
{
	uint32_t pos = 0;
	int rc;

	e->ntok = 0;
	e->hits = 0;
	if ((rc = analyze(text, len, &pos, explain_token, e)))
		return rc;
	if (e->hits && snips)
		snippet(snips, name, text, len, e->tok, e->ntok, words);
	return 0;
}

static const char *const how_name[] = {"word", "stem", "typo", "prefix", "phrase"};

/*
 * Why hit h (Version v, of Kind k) was found: the terms it has, in which
 * fields, what each adds to the score (they add up to it), and snippets.
 * The JSON goes to out->explain, in the transaction's memory.
 */
static int explain_hit(sctx *s, stemmer *stm, const vrec *v, const kind_def *k, const hit *h,
		       cairn_hit *out)
{
	ectx e;
	buf b = BUF_INIT, snips = BUF_INIT;
	arena_mark mark = arena_mark_get(&s->t->scratch);
	const jv *vals = NULL;
	uint32_t dl_title, n_snips = 0;
	int rc = 0, first = 1;
	char *copy;

	memset(&e, 0, sizeof(e));
	e.s = s;
	e.stem = stm;
	e.groups = h->groups;
	e.tf_title = cr_calloc(s->nq ? s->nq : 1, sizeof(*e.tf_title));
	e.tf_values = cr_calloc(s->nq ? s->nq : 1, sizeof(*e.tf_values));
	e.fields = cr_calloc(s->nq ? s->nq : 1, sizeof(*e.fields));
	if (!e.tf_title || !e.tf_values || !e.fields)
		rc = err_set(CAIRN_ENOMEM, "out of memory");
	buf_put_u8(&snips, '[');
	if (!rc)
		rc = explain_field(&e, &snips, "title", v->title, v->title_len, SNIPPET_TITLE);
	dl_title = e.words;
	e.words = 0;
	if (!rc && v->values_len &&
	    !(vals = jv_parse(&s->t->scratch, v->values, v->values_len, "stored values")))
		rc = err_set(CAIRN_ECORRUPT, "stored values do not parse");
	/* The searched values as the index reads them (text.c, analyze_doc). */
	for (size_t i = 0; !rc && vals && i < k->n_attrs && i < 63; i++) {
		const attr_def *a = &k->attrs[i];
		const jv *x = a->search > 0 ? jv_get(vals, a->name) : NULL;
		size_t m = jv_is(x, JV_ARRAY) ? x->len : 1;

		e.weight = (uint32_t)(a->search * 10 + 0.5);
		e.field = (unsigned)i + 1;
		for (size_t j = 0; x && j < m && !rc; j++) {
			const jv *el = jv_is(x, JV_ARRAY) ? &x->u.items[j] : x;
			size_t before = snips.len;

			if (el->type != JV_STRING)
				continue;
			rc = explain_field(&e, n_snips < SNIPPETS_MAX ? &snips : NULL, a->name,
					   el->u.s, el->len, SNIPPET_WORDS);
			n_snips += snips.len > before;
		}
	}
	buf_puts(&snips, "]");
	buf_puts(&b, "{\"terms\":[");
	for (size_t qi = 0; qi < s->nq && !rc; qi++) {
		const qterm *q = &s->q[qi];
		const group *g = &s->g[q->group];

		if (!e.fields[qi])
			continue;
		buf_puts(&b, first ? "{\"word\":" : ",{\"word\":");
		first = 0;
		json_quote(&b, g->word, g->word_len);
		buf_puts(&b, ",\"term\":");
		json_quote(&b, q->term + 1, q->len - 1);
		buf_puts(&b, ",\"match\":\"");
		buf_puts(&b, how_name[q->how]);
		buf_put_u8(&b, '"');
		if (q->how == HOW_TYPO) {
			buf_puts(&b, ",\"edits\":");
			json_number(&b, q->edits);
		}
		buf_puts(&b, ",\"fields\":[");
		for (unsigned f = 0, nf = 0; f < 64; f++) {
			if (!(e.fields[qi] >> f & 1))
				continue;
			buf_puts(&b, nf++ ? "," : "");
			json_quote(&b, f ? k->attrs[f - 1].name : "title",
				   strlen(f ? k->attrs[f - 1].name : "title"));
		}
		buf_puts(&b, "],\"score\":");
		json_number(&b, term_score(s, q, e.tf_title[qi], e.tf_values[qi], dl_title, e.words));
		buf_put_u8(&b, '}');
	}
	buf_puts(&b, "],\"snippets\":");
	buf_put(&b, snips.p, snips.len);
	buf_put_u8(&b, '}');
	if (!rc && (b.oom || snips.oom))
		rc = err_set(CAIRN_ENOMEM, "out of memory");
	if (!rc && !(copy = arena_strndup(&s->t->mem, (const char *)b.p, b.len)))
		rc = err_set(CAIRN_ENOMEM, "out of memory");
	if (!rc) {
		out->explain = copy;
		out->explain_len = b.len;
	}
	cr_free(e.tf_title);
	cr_free(e.tf_values);
	cr_free(e.fields);
	cr_free(e.tok);
	buf_release(&b);
	buf_release(&snips);
	arena_rewind(&s->t->scratch, mark);
	return rc;
}

/* Count the words of the text a search would keep without its stop words. */
static int count_content(void *ctx, const token *t)
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
static int analyze_query(struct qctx *q, const char *text, size_t len,
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
		if (!rc && fn == on_query_token && q->in_phrase && q->s->ng - g0 > 1)
			q->s->ph[q->s->nph++] = (phrase){g0, q->s->ng - g0};
		at = end + 1;
	}
	return rc;
}

static int by_score(const void *x, const void *y)
{
	const hit *a = x, *b = y;

	return worse(a, b) ? 1 : worse(b, a) ? -1 : 0;
}

int cairn_search(cairn_txn *t, const cairn_search_options *o, cairn_hit *out, size_t cap,
		 size_t *n, cairn_search_info *info)
{
	sctx s;
	struct qctx q = {&s, NULL, 0, NULL, NULL, 0, 0, 0, 0};
	heap part = {NULL, 0, 0};
	size_t partial_below;
	tseg *segs = NULL;
	size_t n_segs = 0, text_len, units = 0;
	uint64_t max_vid = 0, docs = 0, sum_t = 0, sum_v = 0;
	MDB_cursor *cur = NULL;
	arena_mark mark;
	int rc = 0, mrc;

	if (!t || !o || !out || !n || !o->text)
		return err_set(CAIRN_EINVAL, "cairn_search: NULL argument");
	if ((rc = err_reserved(o->reserved, "cairn_search", "cairn_search_options")))
		return rc;
	*n = 0;
	memset(&s, 0, sizeof(s));
	s.t = t;
	s.d = &t->d;
	s.conf = t->d.s->search;
	s.limit = o->limit ? o->limit : 20;
	if (s.limit > 100 || s.limit > cap)
		return err_set(CAIRN_EINVAL, "limit is 1 to 100 (and no more than out holds)");
	partial_below = o->partial_below ? o->partial_below : s.limit;
	if (partial_below > s.limit)
		return err_set(CAIRN_EINVAL, "partial_below is at most limit");
	text_len = o->text_len ? o->text_len : strlen(o->text);
	if (!text_len || text_len > SEARCH_TEXT_MAX)
		return err_set(CAIRN_EINVAL, "the text to search is 1 to %d bytes", SEARCH_TEXT_MAX);
	if (!utf8_valid(o->text, text_len))
		return err_set(CAIRN_EUTF8, "the text to search is not UTF-8");
	if (o->n_kinds > 64 || (o->n_kinds && !o->kinds))
		return err_set(CAIRN_EINVAL, "kinds: at most 64");
	for (size_t i = 0; i < o->n_kinds; i++) {
		const kind_def *k = o->kinds[i] ? schema_kind(t->d.s, o->kinds[i]) : NULL;

		if (!k)
			return err_set(CAIRN_EUNKNOWNKIND, "unknown Kind \"%s\"",
				       o->kinds[i] ? o->kinds[i] : "(null)");
		s.kinds[s.n_kinds++] = k->id;
	}
	q.no_typos = o->no_typos;
	if (o->where && !o->n_kinds)
		return err_set(CAIRN_EINVAL, "where needs the Kinds it is over, in kinds");
	mark = arena_mark_get(&t->scratch);
	for (size_t i = 0; o->where && i < o->n_kinds; i++) /* each Kind with its Attributes */
		if ((rc = qfilter_parse(t, &t->scratch, o->kinds[i], o->where,
					o->where_len ? o->where_len : strlen(o->where), &s.filter[i]))) {
			arena_rewind(&t->scratch, mark);
			return rc;
		}
	if (strcmp(s.conf.language, "none") != 0 && !(q.stem = stemmer_new(s.conf.language)))
		rc = err_set(CAIRN_ENOMEM, "no stemmer for \"%s\"", s.conf.language);
	/* Stop words are left out, unless the text has nothing else. */
	if (!rc && s.conf.stop_len && !(rc = analyze_query(&q, o->text, text_len, count_content)))
		q.skip_stop = q.content > 0;
	if (!rc)
		rc = analyze_query(&q, o->text, text_len, on_query_token);
	if (q.lex)
		mdb_cursor_close(q.lex);
	if (!rc && s.ng && !(rc = text_segments(t->txn, t->st, t->d.dom, &segs, &n_segs)) && n_segs) {
		for (size_t i = 0; i < n_segs; i++) {
			docs += segs[i].docs;
			sum_t += segs[i].sum_title;
			sum_v += segs[i].sum_values;
			if (segs[i].max_vid > max_vid)
				max_vid = segs[i].max_vid;
		}
		s.avg_title = docs ? (double)sum_t / (double)docs : 0;
		s.avg_values = docs ? (double)sum_v / (double)docs : 0;
		for (uint32_t k = 1; k <= t->d.s->n_kinds && !rc; k++) {
			uint64_t c;

			if (!(rc = count_get(&t->d, k, &c)))
				s.n_docs += (double)c;
		}
		s.n_chunks = (size_t)(max_vid >> LIVE_CHUNK_BITS) + 1;
		s.chunk = cr_calloc(s.n_chunks, sizeof(*s.chunk));
		s.fetched = cr_calloc(s.n_chunks, 1);
		s.best.h = cr_calloc(s.limit, sizeof(*s.best.h));
		s.best.cap = s.limit;
		if (!rc && (!s.chunk || !s.fetched || !s.best.h))
			rc = err_set(CAIRN_ENOMEM, "out of memory");
		if (!rc && (mrc = mdb_cursor_open(t->txn, t->st->dbi[DB_CELLS], &s.cells)))
			rc = store_err(mrc, "cells");
		if (!rc && (mrc = mdb_cursor_open(t->txn, t->st->dbi[DB_POSTINGS], &cur)))
			rc = store_err(mrc, "postings");
		for (size_t gi = 0; gi < s.ng && !rc; gi++) {
			group *g = &s.g[gi];

			g->first = s.nl;
			for (size_t qi = g->qfirst; qi < g->qfirst + g->qn && !rc; qi++)
				rc = load_term(&s, qi, segs, n_segs, cur);
			g->n = s.nl - g->first;
		}
		for (size_t qi = 0; qi < s.nq; qi++)
			s.q[qi].idf = log(1 + (s.n_docs - (double)s.q[qi].df + 0.5) /
						  ((double)s.q[qi].df + 0.5));
		for (size_t i = 0; i < s.nl; i++) {
			tlist *l = &s.l[i];

			qterm *term = &s.q[l->q - s.q];

			for (size_t c = 0; c < l->nc; c++)
				for (uint32_t b = 0; b < l->c[c].nb; b++) {
					double x = block_bound(&s, l, &l->c[c].b[b]);

					l->c[c].b[b].bound = x;
					if (x > term->max_bound)
						term->max_bound = x;
				}
		}
		for (size_t i = 0; i < s.ng; i++)
			for (size_t j = 0; j < s.g[i].n; j++)
				s.g[i].df += s.l[s.g[i].first + j].df;
		units = s.ng;
		if (!rc)
			rc = walk(&s);
		/*
		 * Too few with every word: those with some follow, when the text
		 * has two parts or more that can be had alone (a phrase is one).
		 */
		for (size_t i = 0; i < s.nph; i++)
			units -= s.ph[i].n - 1;
		if (!rc && !o->all_words && units > 1 && s.best.n < partial_below) {
			part.cap = s.limit - s.best.n;
			if (!(part.h = cr_calloc(part.cap, sizeof(*part.h))))
				rc = err_set(CAIRN_ENOMEM, "out of memory");
			else
				rc = walk_partial(&s, &part);
		}
	}
	if (cur)
		mdb_cursor_close(cur);
	if (s.cells)
		mdb_cursor_close(s.cells);
	if (!rc && s.best.n + part.n) {
		hit *all = s.best.h;

		qsort(s.best.h, s.best.n, sizeof(*s.best.h), by_score);
		if (part.n) { /* after the Records with every word */
			qsort(part.h, part.n, sizeof(*part.h), by_score);
			memmove(s.best.h + s.best.n, part.h, part.n * sizeof(*part.h));
			s.info.partial = part.n;
		}
		for (size_t i = 0; i < s.best.n + part.n && !rc; i++) {
			vrec v;

			memset(&out[i], 0, sizeof(out[i]));
			if ((rc = record_fill(t, NULL, all[i].vid, &out[i].rec, &v)))
				break;
			out[i].score = all[i].score;
			out[i].words = all[i].words;
			if (o->explain && (rc = explain_hit(&s, q.stem, &v, schema_kind_id(t->d.s, v.kr),
							    &all[i], &out[i])))
				break;
			*n = i + 1;
		}
	}
	if (rc)
		*n = 0;
	s.info.words = s.ng;
	if (info)
		*info = s.info;
	stemmer_free(q.stem);
	cr_free(segs);
	cr_free(s.q);
	cr_free(s.l);
	cr_free(s.chunk);
	cr_free(s.fetched);
	cr_free(s.best.h);
	cr_free(part.h);
	for (size_t i = 0; i < SEARCH_GROUPS_MAX; i++)
		cr_free(s.pos[i].p);
	arena_rewind(&t->scratch, mark);
	return rc;
}
