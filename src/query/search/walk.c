/*
 * Full-text search's walk: the live set of the view, scoring, the postings
 * lists of the query's terms, the best Records so far, the walks, and
 * cairn_search, which runs them.
 *
 * cairn_search stays beside the walks: inlined into it, they reach the
 * search's state as a local of its frame (called from another file, the
 * walks ran about 5% more instructions).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/err.h"
#include "base/knob.h"
#include "base/text.h"
#include "query/search/search_int.h"

#define SEARCH_TEXT_MAX 1024
#define END UINT64_MAX

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

static double block_bound(const sctx *s, const tlist *l, const struct tblock *b)
{
	return search_term_score(s, l->q, b->max_tf_title, b->max_tf_values, b->min_dl_title,
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

/* Keep x in p when it would be kept and its Record passes the filter and exclude, if any. */
static int keep_checked(sctx *s, heap *p, const hit *x)
{
	vrec v;
	int match, out, rc;

	if (s->filter[0] || s->exclude) {
		size_t k = 0;

		if (!p->cap || (p->n == p->cap && !worse(&p->h[0], x)))
			return 0; /* it would not be kept: no need to read it */
		if ((rc = version_get(s->d, x->vid, &v)))
			return rc;
		if (s->exclude) {
			if ((rc = exclude_match(s->exclude, &s->t->scratch, v.values, v.values_len,
						&out)))
				return rc;
			if (out)
				return 0;
		}
		if (s->filter[0]) {
			while (k < s->n_kinds && s->kinds[k] != v.kr)
				k++;
			if (k == s->n_kinds)
				return err_set(CAIRN_ECORRUPT, "a posting's Kind is not its Version's");
			if ((rc = qfilter_match(s->filter[k], &s->t->scratch, v.values,
						v.values_len, &match)))
				return rc;
			if (!match)
				return 0;
		}
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
	if (!kind_wanted(s, kind)) /* not a hit: scored for nothing */
		return 0;
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
				x->score += search_term_score(
					s, l->q, l->pay.tf_title[l->j], l->pay.tf_values[l->j],
					l->pay.dl_title[l->j], l->pay.dl_values[l->j]);
		}
	x->groups = has;
	x->words = pop64(has);
	if ((rc = is_live(s, vid, &live)))
		return rc;
	*counts = live;
	return 0;
}

/*
 * The bound of group g's Records up to vid end: per term, its lists'
 * blocks' highest; *any (when not NULL) set when a list has one there.
 */
static double group_bound(const sctx *s, const group *g, uint64_t end, int *any)
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
		if (any)
			*any = 1;
		if ((x = cur_block(l)->bound) > term)
			term = x;
	}
	return bound + term;
}

/* The highest bound of group g's Records anywhere: its terms' highest. */
static double group_top(const sctx *s, const group *g)
{
	double bound = 0;

	for (size_t qi = g->qfirst; qi < g->qfirst + g->qn; qi++)
		bound += s->q[qi].max_bound;
	return bound;
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
 * cheaper, and vid stays as it is. The number of postings a container
 * needs for masks is KNOB_SEARCH_DENSE_MIN (base/knob.h).
 */

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
		dense = s->ng > 1 && postings >= knob(KNOB_SEARCH_DENSE_MIN) * (containers ? containers : 1);
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
			bound = group_bound(s, g, end, NULL);
			for (size_t o = 0; o < s->ng; o++)
				if (o != lead)
					bound += group_top(s, &s->g[o]);
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
					bound += group_bound(s, &s->g[o], end, NULL);
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
 * Can no Record from vid on, of at most words groups and a score of at
 * most bound, beat the worst kept? The walk of partial matches is not in
 * vid order (its second pass goes back), so a tie beats the worst when its
 * vid is earlier: before the worst's vid, only a bound below its score (by
 * more than an ulp of difference in how the two were added up) is sure to
 * lose; after it, a bound no higher (the same ulp above: beaten()).
 */
static int cannot_beat(const hit *worst, uint64_t vid, size_t words, double bound)
{
	if (words != worst->words)
		return words < worst->words;
	return vid > worst->vid ? bound <= worst->score * (1 + 1e-12)
				: bound < worst->score * (1 - 1e-12);
}

/*
 * The highest bound group g's terms can reach in a Record of vids from..to,
 * from its lists' block headers (every block that overlaps the range, the
 * highest of each term's lists); *any when a block does.
 */
static double range_bound(const sctx *s, const group *g, uint64_t from, uint64_t to, int *any)
{
	double bound = 0, term = 0;

	for (size_t i = 0; i < g->n; i++) {
		const tlist *l = &s->l[g->first + i];

		if (i && l->q != s->l[g->first + i - 1].q) {
			bound += term;
			term = 0;
		}
		for (size_t c = l->positioned ? l->ci : 0; c < l->nc && l->c[c].base <= to; c++) {
			const tcont *ct = &l->c[c];
			uint32_t lo = 0, hi = ct->nb;

			while (lo < hi) { /* the first block that ends at or after from */
				uint32_t m = lo + (hi - lo) / 2;

				if (ct->base + ct->b[m].last < from)
					lo = m + 1;
				else
					hi = m;
			}
			for (uint32_t k = lo; k < ct->nb && ct->base + ct->b[k].first <= to; k++) {
				*any = 1;
				if (ct->b[k].bound > term)
					term = ct->b[k].bound;
			}
		}
	}
	return bound + term;
}

/*
 * One pass of the walk of partial matches: the lists of the groups
 * order[0..no) walked together (every other list sought to each Record
 * found), each Record counted by the groups it has and scored by its
 * terms, those with group skip left out. With prune, once the kept Records
 * are as many as wanted, the groups that cannot make a Record beat the
 * worst of them by themselves (fewer than its words; as many, and their
 * terms' highest bounds no more than its score) stop leading the walk, the
 * lowest bounds first (order is by bound): a Record that could beat it has
 * one of the other groups, so only their lists are walked.
 */
static int partial_pass(sctx *s, heap *part, const size_t *order, size_t no, const double *ub,
			int prune, size_t skip)
{
	uint8_t walked[SEARCH_GROUPS_MAX] = {0}, in_pass[SEARCH_GROUPS_MAX] = {0};
	size_t lead = 0; /* order[lead..no): the groups walked */
	double below = 0; /* order[0..lead)'s bounds */
	uint64_t vid = 0;
	int rc;

	for (size_t i = 0; i < s->nl; i++) {
		tlist *l = &s->l[i];

		l->ci = l->bi = l->j = 0;
		l->lo_ok = l->pay_ok = l->positioned = 0;
	}
	for (size_t i = 0; i < no; i++)
		walked[order[i]] = in_pass[order[i]] = 1;
	for (;;) {
		uint64_t m = END;
		unsigned words = 0;
		int skipped = 0, counts;
		hit x;

		while (prune && part->n == part->cap && lead < no) {
			const hit *worst = &part->h[0];
			size_t k = lead + 1;
			double b = below + ub[order[lead]];

			if (!cannot_beat(worst, vid, k, b))
				break;
			walked[order[lead++]] = 0;
			below = b;
		}
		if (lead == no)
			return 0; /* no Record left can beat the kept ones */
		for (size_t g = 0; g < s->ng; g++)
			for (size_t i = 0; walked[g] && i < s->g[g].n; i++) {
				tlist *l = &s->l[s->g[g].first + i];

				if (!(l->positioned && l->cur >= vid) && (rc = seek_vid(l, vid)))
					return rc;
				if (l->cur < m)
					m = l->cur;
			}
		if ((vid = m) == END)
			return 0;
		/*
		 * Up to the first end of a block the walked lists are in, a Record
		 * has at most the walked groups with a list there and the others
		 * with a block there, and scores at most those blocks' bounds:
		 * when that cannot beat the worst kept, past it (the others' lists
		 * read by their blocks' headers, not sought).
		 */
		if (prune && part->n == part->cap) {
			const hit *worst = &part->h[0];
			uint64_t end = END;
			double bound = 0;
			size_t most = 0;

			for (size_t g = 0; g < s->ng; g++)
				for (size_t i = 0; walked[g] && i < s->g[g].n; i++) {
					const tlist *l = &s->l[s->g[g].first + i];

					if (l->cur != END && block_end(l) < end)
						end = block_end(l);
				}
			for (size_t g = 0; g < s->ng; g++) {
				int there = 0;

				if (walked[g])
					bound += group_bound(s, &s->g[g], end, &there);
				else if (in_pass[g])
					bound += range_bound(s, &s->g[g], vid, end, &there);
				most += there != 0;
			}
			if (cannot_beat(worst, vid, most, bound)) {
				vid = end + 1;
				continue;
			}
		}
		for (size_t g = 0; g < s->ng; g++)
			for (size_t i = 0; !walked[g] && i < s->g[g].n; i++) {
				tlist *l = &s->l[s->g[g].first + i];

				if (!(l->positioned && l->cur >= vid) && (rc = seek_vid(l, vid)))
					return rc;
			}
		for (size_t g = 0; g < s->ng; g++)
			for (size_t i = 0; i < s->g[g].n; i++)
				if (s->l[s->g[g].first + i].cur == vid) {
					words++;
					skipped |= g == skip;
					break;
				}
		/* Those with every group were the first walk's, unless a phrase is out of place. */
		if (!skipped && (words < s->ng || s->nph)) {
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

/*
 * Records with some of the words (not all), best first by words, then
 * score. First those with the group of the highest bound (most often the
 * rarest word), every one scored: they give the kept Records a worst one
 * hard to beat. Then the others, pruned by it: a common word of the text
 * is read only where it could still make a Record beat the kept ones.
 */
static int walk_partial(sctx *s, heap *part)
{
	size_t order[SEARCH_GROUPS_MAX], no = 0;
	double ub[SEARCH_GROUPS_MAX];
	int rc;

	for (size_t g = 0; g < s->ng; g++) {
		size_t at = no;

		/* A word no live Record has is no part of any: never walked, never counted. */
		if (!s->g[g].df)
			continue;
		ub[g] = group_top(s, &s->g[g]);
		for (; at > 0 && ub[order[at - 1]] > ub[g]; at--) /* by bound, lowest first */
			order[at] = order[at - 1];
		order[at] = g;
		no++;
	}
	if (!no)
		return 0;
	if ((rc = partial_pass(s, part, &order[no - 1], 1, ub, 0, SEARCH_GROUPS_MAX)))
		return rc;
	return partial_pass(s, part, order, no - 1, ub, 1, order[no - 1]);
}

/* ---------------------------------------------------------- the search -- */

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
	if ((rc = exclude_check(t, o->exclude, s.kinds, s.n_kinds, "cairn_search")))
		return rc;
	s.exclude = o->exclude;
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
	if (!rc && s.conf.stop_len &&
	    !(rc = search_analyze_query(&q, o->text, text_len, search_count_content)))
		q.skip_stop = q.content > 0;
	if (!rc)
		rc = search_analyze_query(&q, o->text, text_len, search_on_query_token);
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
			if (o->explain &&
			    (rc = search_explain_hit(&s, q.stem, &v, schema_kind_id(t->d.s, v.kr),
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
