/*
 * Vector search (cairn_vsearch, docs/vectors.md). With no index, or when
 * asked, exact: every vector of the Domain scanned in vid order, those the
 * view's live set holds scored against the query, the best kept. With the
 * Domain's index (index/vector/vindex.h): the centroids scored, the nearest
 * lists scanned in int8 (Kinds checked in the entries, the live set for
 * those that would be kept), the best candidates re-scored in float32, and
 * the vectors newer than the index scanned exactly. More lists are scanned
 * while fewer candidates than the limit were found, and, when an attribute
 * filter leaves fewer hits than the limit, the search runs again over four
 * times as many lists, until it has scanned them all.
 *
 * A Kind or attribute filter is checked for a Record only when it would be
 * kept (its Version read then).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "query/read.h"
#include "base/alloc.h"
#include "base/buf.h"
#include "base/err.h"
#include "base/knob.h"
#include "base/vec.h"
#include "index/vector/vindex.h"

/* The vector index's lists probed and candidates re-ranked when a search names none. */
static const size_t vsearch_probes = 8;
static const size_t vsearch_rerank = 64;
/* A Kind filter under 1 / VSEARCH_RARE of the vectors scans every list. */
#define VSEARCH_RARE 50
/*
 * An attribute filter an index answers alone: the Records that pass are
 * scored exactly when at most KNOB_VSEARCH_WHERE_EXACT (base/knob.h), else
 * are the only candidates the vector index looks at when at most
 * KNOB_VSEARCH_WHERE_SET.
 * One an index answers a part of: the Records it leaves are read, checked
 * and scored exactly when at most WHERE_CHECKED.
 */
#define WHERE_CHECKED 2000

typedef struct vhit {
	uint64_t vid;
	double score;
} vhit;

typedef struct vctx {
	cairn_txn *t;
	MDB_cursor *cells;
	const uint8_t **chunk;	/* live-set chunks by vid >> LIVE_CHUNK_BITS */
	uint8_t *known;		/* ... looked up (a chunk may be absent: nothing live) */
	size_t n_chunk;
	uint32_t kinds[64];
	size_t n_kinds;
	const qfilter *filter[64];
	const cairn_exclude *exclude; /* values that leave a Record out (NULL: none) */
	const float *q;		/* the query */
	size_t dim;
	double qnorm;
	int metric;
	uint64_t skip;		/* the near Record's own Version */
	float *tmp;		/* a stored vector, aligned (dim floats) */
	vhit *h;		/* the best, best first */
	size_t n, cap;
	int prefiltered;	/* the candidates are known to pass kinds and where */
	uint64_t *members;	/* or NULL: the vids that pass kinds and where, a hash set */
	size_t members_mask;
} vctx;

/* Is vid in the set of those that pass the filter (open addressing, 0 empty)? */
static int member(const vctx *v, uint64_t vid)
{
	for (size_t i = (size_t)(vid * 0x9e3779b97f4a7c15ull >> 20) & v->members_mask;;
	     i = (i + 1) & v->members_mask) {
		if (v->members[i] == vid)
			return 1;
		if (!v->members[i])
			return 0;
	}
}

static int members_build(vctx *v, const uint64_t *vids, size_t n)
{
	size_t cap = 64;

	while (cap < 2 * n)
		cap *= 2;
	if (!(v->members = cr_calloc(cap, sizeof(*v->members))))
		return err_set(CAIRN_ENOMEM, "out of memory");
	v->members_mask = cap - 1;
	for (size_t j = 0; j < n; j++) {
		size_t i = (size_t)(vids[j] * 0x9e3779b97f4a7c15ull >> 20) & v->members_mask;

		while (v->members[i] && v->members[i] != vids[j])
			i = (i + 1) & v->members_mask;
		v->members[i] = vids[j];
	}
	return 0;
}

static int vlive(vctx *v, uint64_t vid, int *live)
{
	uint64_t id = vid >> LIVE_CHUNK_BITS;
	unsigned bit = (unsigned)(vid & ((1u << LIVE_CHUNK_BITS) - 1));
	size_t len;
	int rc;

	if (id >= v->n_chunk) {
		size_t n = v->n_chunk ? v->n_chunk : 64;
		const uint8_t **c;
		uint8_t *k;

		while (n <= id)
			n *= 2;
		if (!(c = cr_reallocarray(v->chunk, n, sizeof(*c))))
			return err_set(CAIRN_ENOMEM, "out of memory");
		v->chunk = c;
		if (!(k = cr_realloc(v->known, n)))
			return err_set(CAIRN_ENOMEM, "out of memory");
		v->known = k;
		memset(k + v->n_chunk, 0, n - v->n_chunk);
		v->n_chunk = n;
	}
	if (!v->known[id]) {
		rc = cell_get_cur(&v->t->d, v->cells, CELL_LIVE, id, &v->chunk[id], &len);
		if (rc == CAIRN_ENOTFOUND)
			v->chunk[id] = NULL;
		else if (rc)
			return rc;
		else if (len != LIVE_CHUNK_BYTES)
			return err_set(CAIRN_ECORRUPT, "live-set chunk of %zu bytes", len);
		v->known[id] = 1;
	}
	*live = v->chunk[id] && (v->chunk[id][bit >> 3] >> (bit & 7) & 1);
	return 0;
}

static int kind_ok(const vctx *v, uint32_t kind)
{
	if (!v->n_kinds)
		return 1;
	for (size_t k = 0; k < v->n_kinds; k++)
		if (v->kinds[k] == kind)
			return 1;
	return 0;
}

/* Would (score, vid) be kept? Equal scores keep the Version written first. */
static int better(const vhit *a, double score, uint64_t vid)
{
	return score > a->score || (score == a->score && vid < a->vid);
}

/*
 * Keep vid when it beats the worst kept and its Record passes the Kind, the
 * filter and exclude.
 */
static int vkeep(vctx *v, uint64_t vid, double score)
{
	size_t at;
	vrec r;
	int rc, match = 1;

	if (isnan(score) || (v->n == v->cap && !better(&v->h[v->n - 1], score, vid)))
		return 0;
	if (v->members && !member(v, vid))
		return 0;
	if (v->exclude) {
		int out;

		if ((rc = version_get(&v->t->d, vid, &r)))
			return rc;
		if (r.type != V_REC)
			return 0;
		if ((rc = exclude_match(v->exclude, &v->t->scratch, r.values, r.values_len, &out)))
			return rc;
		if (out)
			return 0;
	}
	if (!v->members && !v->prefiltered && (v->n_kinds || v->filter[0])) {
		size_t k = 0;

		if ((rc = version_get(&v->t->d, vid, &r)))
			return rc;
		if (r.type != V_REC)
			return 0;
		while (k < v->n_kinds && v->kinds[k] != r.kr)
			k++;
		if (v->n_kinds && k == v->n_kinds)
			return 0;
		if (v->filter[0] &&
		    (rc = qfilter_match(v->filter[k], &v->t->scratch, r.values, r.values_len, &match)))
			return rc;
		if (!match)
			return 0;
	}
	at = v->n < v->cap ? v->n++ : v->n - 1;
	while (at > 0 && better(&v->h[at - 1], score, vid)) {
		v->h[at] = v->h[at - 1];
		at--;
	}
	v->h[at].vid = vid;
	v->h[at].score = score;
	return 0;
}

/*
 * The exact score of stored vector x (float32 kernels, so the index's
 * re-rank and the exact scan give a vector the same score). A zero vector
 * has no direction: by cosine it is NAN, found by no search.
 */
static double exact(const vctx *v, const float *x)
{
	double s, nx;

	if (v->metric == CAIRN_L2) {
		s = vec_l2sq(x, v->q, v->dim);
		return s > 0 ? -sqrt(s) : 0;
	}
	s = vec_dot(x, v->q, v->dim);
	if (v->metric == CAIRN_COSINE) {
		nx = vec_dot(x, x, v->dim);
		s = nx <= 0 ? NAN : v->qnorm > 0 ? s / (sqrt(nx) * v->qnorm) : 0;
	}
	return s;
}

/* Score exactly every vector with a vid above after. */
static int scan_exact(vctx *v, uint64_t after)
{
	MDB_cursor *cur;
	MDB_val k, val;
	kbuf p;
	int mrc, rc = 0;

	if ((mrc = mdb_cursor_open(v->t->txn, v->t->st->dbi[DB_VECTORS], &cur)))
		return store_err(mrc, "vectors");
	key_u64(&p, v->t->d.dom, after + 1);
	k.mv_data = p.b;
	k.mv_size = p.n;
	v->t->d.stats.seeks++;
	for (mrc = mdb_cursor_get(cur, &k, &val, MDB_SET_RANGE); mrc == 0 && !rc;
	     mrc = mdb_cursor_get(cur, &k, &val, MDB_NEXT)) {
		uint64_t vid;
		int live = 0;

		if (k.mv_size != 12 || memcmp(k.mv_data, p.b, 4) != 0)
			break;
		vid = be64_get((const uint8_t *)k.mv_data + 4);
		v->t->d.stats.entries++;
		if (vid == v->skip || (rc = vlive(v, vid, &live)) || !live)
			continue;
		if (val.mv_size != v->dim * sizeof(float)) {
			rc = err_set(CAIRN_EDIM, "the Domain's vectors have %zu dimensions, not %zu",
				     val.mv_size / sizeof(float), v->dim);
			break;
		}
		rc = vkeep(v, vid, exact(v, vec_aligned(val.mv_data, v->dim, v->tmp)));
	}
	if (!rc && mrc && mrc != MDB_NOTFOUND)
		rc = store_err(mrc, "vectors");
	mdb_cursor_close(cur);
	return rc;
}

/*
 * Score the stored vector of vid exactly and keep it if it is among the
 * best (vkeep): a vid without a vector (a Record without one, or purged
 * since an index named it) is passed over.
 */
static int score_stored(vctx *v, uint64_t vid)
{
	MDB_val x;
	kbuf k;
	int rc;

	key_u64(&k, v->t->d.dom, vid);
	v->t->d.stats.seeks++;
	rc = db_get(v->t->txn, v->t->st, DB_VECTORS, k.b, k.n, &x);
	if (rc == CAIRN_ENOTFOUND)
		return 0;
	if (!rc && x.mv_size != v->dim * sizeof(float))
		rc = err_set(CAIRN_EDIM, "the Domain's vectors have %zu dimensions, not %zu",
			     x.mv_size / sizeof(float), v->dim);
	return rc ? rc : vkeep(v, vid, exact(v, vec_aligned(x.mv_data, v->dim, v->tmp)));
}

/*
 * A selective attribute filter: the Records an index says pass it, when
 * they are at most vsearch_where_exact, scored exactly (*done set); when
 * more but at most vsearch_where_set, as the set of the only candidates
 * the index search looks at (v->members); else nothing done.
 */
static int search_filtered(vctx *v, const cairn_vsearch_options *o, int *done)
{
	uint64_t *all = NULL, n_exact = knob(KNOB_VSEARCH_WHERE_EXACT), n_set = knob(KNOB_VSEARCH_WHERE_SET);
	size_t n_all = 0;
	int rc = 0;

	*done = 0;
	for (size_t i = 0; i < o->n_kinds && !rc; i++) {
		uint64_t *ids, *grown;
		size_t n;

		rc = query_vids_small(v->t, o->kinds[i], o->where,
				      o->where_len ? o->where_len : strlen(o->where),
				      n_all < WHERE_CHECKED ? WHERE_CHECKED - n_all : 0,
				      n_all < n_exact ? n_exact - n_all : 0, n_all < n_set ? n_set - n_all : 0,
				      &ids, &n);
		if (rc || !ids) {
			cr_free(all);
			return rc;
		}
		if (!(grown = cr_reallocarray(all, n_all + n + 1, sizeof(*all)))) {
			cr_free(ids);
			cr_free(all);
			return err_set(CAIRN_ENOMEM, "out of memory");
		}
		all = grown;
		memcpy(all + n_all, ids, n * sizeof(*ids));
		n_all += n;
		cr_free(ids);
	}
	if (n_all > n_exact) {
		rc = members_build(v, all, n_all);
		cr_free(all);
		return rc;
	}
	v->prefiltered = 1;
	for (size_t i = 0; i < n_all && !rc; i++) {
		if (all[i] == v->skip)
			continue;
		v->t->d.stats.entries++;
		rc = score_stored(v, all[i]);
	}
	v->prefiltered = 0;
	cr_free(all);
	*done = !rc;
	return rc;
}

static int vid_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/*
 * Exact search under a Kind filter: the index's blocks say the Kind of each
 * vector they hold, so only the vectors of those Kinds are read and scored
 * (in vid order), then the tail the index has not reached. A rare Kind
 * reads a fraction of the vectors; none reads more than the search without
 * a filter.
 */
static int scan_exact_kinds(vctx *v, const vindex_meta *m)
{
	MDB_cursor *cur;
	MDB_val k, val;
	kbuf p;
	buf found = BUF_INIT; /* the vids of those Kinds, 8 bytes each */
	uint64_t *vids;
	size_t n;
	int mrc, rc = 0;

	if (m->dim != v->dim)
		return scan_exact(v, 0); /* which says the dimensions differ */
	if ((mrc = mdb_cursor_open(v->t->txn, v->t->st->dbi[DB_VINDEX], &cur)))
		return store_err(mrc, "vindex");
	kb_init(&p);
	kb_be32(&p, v->t->d.dom);
	kb_u8(&p, 'L');
	k.mv_data = p.b;
	k.mv_size = p.n;
	v->t->d.stats.seeks++;
	for (mrc = mdb_cursor_get(cur, &k, &val, MDB_SET_RANGE); mrc == 0 && !rc;
	     mrc = mdb_cursor_get(cur, &k, &val, MDB_NEXT)) {
		vblock b;

		if (k.mv_size != p.n + 8 || memcmp(k.mv_data, p.b, p.n) != 0)
			break;
		if ((rc = vblock_decode(val.mv_data, val.mv_size, (uint32_t)v->dim, &b)))
			break;
		v->t->d.stats.entries += b.n;
		for (uint32_t i = 0; i < b.n && !rc; i++) {
			uint32_t kind;

			memcpy(&kind, b.kinds + 4 * (size_t)i, 4);
			if (kind_ok(v, kind))
				buf_put(&found, b.vids + 8 * (size_t)i, 8);
		}
	}
	if (!rc && mrc && mrc != MDB_NOTFOUND)
		rc = store_err(mrc, "vindex");
	mdb_cursor_close(cur);
	if (!rc && found.oom)
		rc = err_set(CAIRN_ENOMEM, "out of memory");
	vids = (uint64_t *)found.p; /* malloc'd: aligned for them */
	n = rc ? 0 : found.len / 8;
	if (n)
		qsort(vids, n, sizeof(*vids), vid_cmp);
	v->prefiltered = 1; /* their Kinds are known; exclude still applies */
	for (size_t i = 0; i < n && !rc; i++) {
		int live;

		if ((i && vids[i] == vids[i - 1]) || vids[i] == v->skip ||
		    (rc = vlive(v, vids[i], &live)) || !live)
			continue;
		rc = score_stored(v, vids[i]);
	}
	v->prefiltered = 0;
	buf_release(&found);
	return rc ? rc : scan_exact(v, m->watermark);
}

/* ------------------------------------------------------- with the index -- */

typedef struct cand {
	double s;
	uint64_t vid;
} cand;

/* A min-heap of the best candidates by approximate score. */
static void heap_push(cand *h, size_t *n, size_t cap, double s, uint64_t vid)
{
	size_t i;

	if (*n == cap) { /* replace the root (the worst) and sift down */
		i = 0;
		for (;;) {
			size_t l = 2 * i + 1, m = i;

			if (l < *n && h[l].s < s && (l + 1 >= *n || h[l].s <= h[l + 1].s))
				m = l;
			else if (l + 1 < *n && h[l + 1].s < s)
				m = l + 1;
			if (m == i)
				break;
			h[i] = h[m];
			i = m;
		}
	} else {
		i = (*n)++;
		while (i > 0 && h[(i - 1) / 2].s > s) {
			h[i] = h[(i - 1) / 2];
			i = (i - 1) / 2;
		}
	}
	h[i].s = s;
	h[i].vid = vid;
}

typedef struct lscore {
	float s;
	uint32_t list;
} lscore;

/* Does list score a come before b (higher, then lower list number)? */
static int lfirst(const lscore *a, const lscore *b)
{
	return a->s > b->s || (a->s == b->s && a->list < b->list);
}

/* Lists are taken nearest first from a heap: most searches need only a few. */
static void lheap_down(lscore *h, size_t n, size_t i)
{
	lscore x = h[i];

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && lfirst(&h[c + 1], &h[c]))
			c++;
		if (!lfirst(&h[c], &x))
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = x;
}

static uint32_t lheap_pop(lscore *h, size_t *n)
{
	uint32_t list = h[0].list;

	h[0] = h[--*n];
	if (*n)
		lheap_down(h, *n, 0);
	return list;
}

/* Scan the lists of heap order, nearest first (at least probes, more while fewer than want were found) into h. */
static int scan_lists(vctx *v, lscore *order, size_t lists, size_t probes, size_t want,
		      const int16_t *q16, float qscale, cand *h, size_t *nh, size_t cap)
{
	MDB_cursor *cur;
	int mrc, rc = 0;
	double qn2 = v->qnorm * v->qnorm;

	if ((mrc = mdb_cursor_open(v->t->txn, v->t->st->dbi[DB_VINDEX], &cur)))
		return store_err(mrc, "vindex");
	for (size_t p = 0, left = lists; left && !rc && (p < probes || *nh < want); p++) {
		MDB_val k, val;
		kbuf pre;

		kb_init(&pre);
		kb_be32(&pre, v->t->d.dom);
		kb_u8(&pre, 'L');
		kb_be32(&pre, lheap_pop(order, &left));
		k.mv_data = pre.b;
		k.mv_size = pre.n;
		v->t->d.stats.seeks++;
		for (mrc = mdb_cursor_get(cur, &k, &val, MDB_SET_RANGE); mrc == 0 && !rc;
		     mrc = mdb_cursor_get(cur, &k, &val, MDB_NEXT)) {
			vblock b;

			if (k.mv_size != pre.n + 4 || memcmp(k.mv_data, pre.b, pre.n) != 0)
				break;
			if ((rc = vblock_decode(val.mv_data, val.mv_size, (uint32_t)v->dim, &b)))
				break;
			v->t->d.stats.entries += b.n;
			for (uint32_t i = 0; i < b.n && !rc; i++) {
				uint32_t kind;
				float sc, nx;
				uint64_t vid;
				double s;
				int live;

				if (v->n_kinds) {
					memcpy(&kind, b.kinds + 4 * (size_t)i, 4);
					if (!kind_ok(v, kind))
						continue;
				}
				memcpy(&vid, b.vids + 8 * (size_t)i, 8);
				if (v->members && !member(v, vid))
					continue;
				memcpy(&sc, b.scales + 4 * (size_t)i, 4);
				memcpy(&nx, b.norms + 4 * (size_t)i, 4);
				s = (double)sc * qscale * vec_dot_i8(b.codes + (size_t)i * v->dim, q16, v->dim);
				if (v->metric == CAIRN_COSINE && nx <= 0)
					continue; /* a zero vector: no direction */
				if (v->metric == CAIRN_COSINE)
					s = v->qnorm > 0 ? s / (nx * v->qnorm) : 0;
				else if (v->metric == CAIRN_L2)
					s = 2 * s - (double)nx * nx - qn2;
				if (*nh == cap && s <= h[0].s)
					continue;
				if (vid == v->skip || (rc = vlive(v, vid, &live)) || !live)
					continue;
				heap_push(h, nh, cap, s, vid);
			}
		}
		if (!rc && mrc && mrc != MDB_NOTFOUND)
			rc = store_err(mrc, "vindex");
	}
	mdb_cursor_close(cur);
	return rc;
}

static int cand_cmp(const void *a, const void *b)
{
	const cand *x = a, *y = b;

	return x->s < y->s ? 1 : x->s > y->s ? -1 : (x->vid > y->vid) - (x->vid < y->vid);
}

/* Search with the index m; *done = 0 when there is no usable one (search exactly). */
static int search_index(vctx *v, const vindex_meta *m, size_t probes, size_t rerank)
{
	MDB_val val;
	kbuf k;
	lscore *order = NULL;
	cand *h = NULL;
	int8_t *q8 = NULL;
	int16_t *q16 = NULL;
	float qscale;
	const float *cent;
	float *cent_copy = NULL;
	size_t nh = 0;
	int rc;

	if (m->dim != v->dim)
		return err_set(CAIRN_EDIM, "the Domain's vectors have %u dimensions, not %zu", m->dim,
			       v->dim);
	kb_init(&k);
	kb_be32(&k, v->t->d.dom);
	kb_u8(&k, 'C');
	v->t->d.stats.seeks++;
	if ((rc = db_get(v->t->txn, v->t->st, DB_VINDEX, k.b, k.n, &val)))
		return rc == CAIRN_ENOTFOUND ? err_set(CAIRN_ECORRUPT, "vector index: no centroids")
					     : rc;
	if (val.mv_size != (size_t)m->lists * m->dim * sizeof(float))
		return err_set(CAIRN_ECORRUPT, "vector index: centroids of %zu bytes", val.mv_size);
	order = cr_malloc(m->lists * sizeof(*order));
	if (((uintptr_t)val.mv_data & 3) && (cent_copy = cr_malloc(val.mv_size)))
		memcpy(cent_copy, val.mv_data, val.mv_size);
	cent = cent_copy ? cent_copy : val.mv_data;
	h = cr_malloc(rerank * sizeof(*h));
	q8 = cr_malloc(v->dim);
	q16 = cr_malloc(v->dim * sizeof(*q16));
	if (!order || !h || !q8 || !q16 || (((uintptr_t)val.mv_data & 3) && !cent_copy)) {
		rc = err_set(CAIRN_ENOMEM, "out of memory");
		goto out;
	}
	for (uint32_t j = 0; j < m->lists; j++) {
		order[j].s = vec_dot(cent + (size_t)j * m->dim, v->q, v->dim);
		order[j].list = j;
	}
	for (size_t j = m->lists / 2; j-- > 0;)
		lheap_down(order, m->lists, j);
	qscale = vec_quantize(v->q, v->dim, q8);
	for (size_t d = 0; d < v->dim; d++)
		q16[d] = q8[d];
	if ((rc = scan_lists(v, order, m->lists, probes, rerank, q16, qscale, h, &nh, rerank)))
		goto out;
	/* The candidates, best first, scored exactly. */
	qsort(h, nh, sizeof(*h), cand_cmp);
	for (size_t i = 0; i < nh && !rc; i++)
		rc = score_stored(v, h[i].vid);
out:
	cr_free(cent_copy);
	cr_free(order);
	cr_free(h);
	cr_free(q8);
	cr_free(q16);
	return rc;
}

int cairn_vsearch(cairn_txn *t, const cairn_vsearch_options *o, cairn_hit *out, size_t cap,
		  size_t *n)
{
	vctx v;
	float *q = NULL;
	size_t dim = 0, limit;
	uint64_t skip = 0;
	double qnorm = 0;
	arena_mark mark;
	vindex_meta m;
	int rc = 0, mrc, have = 0;

	if (!t || !o || !out || !n || (!o->vector == !o->near))
		return err_set(CAIRN_EINVAL, "cairn_vsearch: a vector or a Record to be near, not both");
	if ((rc = err_reserved(o->reserved, "cairn_vsearch", "cairn_vsearch_options")))
		return rc;
	*n = 0;
	limit = o->limit ? o->limit : 20;
	if (limit > 100 || limit > cap)
		return err_set(CAIRN_EINVAL, "limit is 1 to 100 (and no more than out holds)");
	if (o->metric < CAIRN_COSINE || o->metric > CAIRN_L2)
		return err_set(CAIRN_EINVAL, "metric is cosine, dot or L2");
	if (o->n_kinds > 64 || (o->n_kinds && !o->kinds))
		return err_set(CAIRN_EINVAL, "kinds: at most 64");
	if (o->where && !o->n_kinds)
		return err_set(CAIRN_EINVAL, "where needs the Kinds it is over, in kinds");
	if (o->probes > 65536 || o->rerank > 10000)
		return err_set(CAIRN_EINVAL, "probes is at most 65536, rerank at most 10000");
	memset(&v, 0, sizeof(v));
	v.t = t;
	for (size_t i = 0; i < o->n_kinds; i++) {
		const kind_def *kd = o->kinds[i] ? schema_kind(t->d.s, o->kinds[i]) : NULL;

		if (!kd)
			return err_set(CAIRN_EUNKNOWNKIND, "unknown Kind \"%s\"",
				       o->kinds[i] ? o->kinds[i] : "(null)");
		v.kinds[v.n_kinds++] = kd->id;
	}
	if ((rc = exclude_check(t, o->exclude, v.kinds, v.n_kinds, "cairn_vsearch")))
		return rc;
	v.exclude = o->exclude;
	mark = arena_mark_get(&t->scratch);
	for (size_t i = 0; o->where && i < o->n_kinds && !rc; i++)
		rc = qfilter_parse(t, &t->scratch, o->kinds[i], o->where,
				   o->where_len ? o->where_len : strlen(o->where), &v.filter[i]);
	/* The query: the vector given, or the Record's (which the answer leaves out). */
	if (!rc && o->near) {
		const kind_def *kd = o->near->kind ? schema_kind(t->d.s, o->near->kind) : NULL;
		size_t kl = o->near->key ? (o->near->key_len ? o->near->key_len : strlen(o->near->key)) : 0;
		ident id;

		if (!kd)
			rc = err_set(CAIRN_EUNKNOWNKIND, "unknown Kind \"%s\"",
				     o->near->kind ? o->near->kind : "(null)");
		else if (!kl || kl > CAIRN_MAX_KEY)
			rc = err_set(CAIRN_ENOTFOUND, "%s:%.*s does not exist", kd->name, (int)kl,
				     o->near->key ? o->near->key : "");
		else if (!(rc = rec_lookup(&t->d, kd->id, o->near->key, kl, &id)) && !id.visible)
			rc = err_set(CAIRN_ENOTFOUND, "%s:%.*s does not exist", kd->name, (int)kl,
				     o->near->key);
		if (!rc && !(q = cr_malloc(CAIRN_MAX_VECTOR_DIM * sizeof(float))))
			rc = err_set(CAIRN_ENOMEM, "out of memory");
		if (!rc && !(rc = cairn_vector_get(t, id.vid, q, CAIRN_MAX_VECTOR_DIM, &dim)) && !dim)
			rc = err_set(CAIRN_EINVAL, "%s:%.*s has no vector", kd->name, (int)kl,
				     o->near->key);
		skip = id.vid;
	} else if (!rc) {
		dim = o->dim;
		if (!dim || dim > CAIRN_MAX_VECTOR_DIM)
			rc = err_set(CAIRN_EINVAL, "a vector has 1 to %d dimensions", CAIRN_MAX_VECTOR_DIM);
		else if (!(q = cr_malloc(dim * sizeof(float))))
			rc = err_set(CAIRN_ENOMEM, "out of memory");
		else
			memcpy(q, o->vector, dim * sizeof(float));
	}
	for (size_t d = 0; d < dim; d++) {
		if (!isfinite(q[d]))
			rc = err_set(CAIRN_EINVAL, "the vector's component %zu is not a finite number", d);
		qnorm += (double)q[d] * q[d];
	}
	v.q = q;
	v.dim = dim;
	v.qnorm = sqrt(qnorm);
	v.metric = o->metric;
	v.skip = skip;
	if (!rc && (!(v.h = cr_calloc(limit, sizeof(*v.h))) ||
		    !(v.tmp = cr_malloc((dim ? dim : 1) * sizeof(float)))))
		rc = err_set(CAIRN_ENOMEM, "out of memory");
	v.cap = limit;
	if (!rc && (mrc = mdb_cursor_open(t->txn, t->st->dbi[DB_CELLS], &v.cells)))
		rc = store_err(mrc, "cells");
	if (!rc && (!o->exact || (v.n_kinds && !v.filter[0]))) {
		rc = vindex_meta_get(t->txn, t->st, t->d.dom, &m);
		have = rc == 0;
		if (rc == CAIRN_ENOTFOUND)
			rc = 0;
	}
	if (!rc && have && o->exact) {
		rc = scan_exact_kinds(&v, &m);
	} else if (!rc && have) {
		size_t probes = o->probes ? o->probes : vsearch_probes;
		size_t rerank = o->rerank ? o->rerank : vsearch_rerank;

		if (!o->rerank && rerank < 2 * limit)
			rerank = 2 * limit; /* the candidates, at least twice the hits */
		if (rerank < limit)
			rerank = limit;
		/*
		 * Kinds whose Records are too few to be found near the query: every
		 * list is scanned, in int8 for those Kinds only. Too few: under 2%
		 * of the vectors (their nearest to a query lie in lists far from
		 * it: at 100k on the clustered workload, recall@10 of 1% was 0.70
		 * with 8 or 16 lists, 0.77 with 32), or fewer than 2 x limit
		 * expected in the lists a search scans by default. Neither depends
		 * on the probes asked for, so more probes never find less.
		 */
		if (v.n_kinds) {
			uint64_t match = 0, c;

			for (size_t i = 0; i < v.n_kinds && !rc; i++)
				if (!(rc = count_get(&t->d, v.kinds[i], &c)))
					match += c;
			if (match * VSEARCH_RARE < m.entries ||
			    match * vsearch_probes < (uint64_t)limit * 2 * m.lists)
				probes = m.lists;
		}
		int done = 0;

		if (v.filter[0] && (rc = search_filtered(&v, o, &done)))
			done = 1;
		/*
		 * Only the Records that pass are candidates: the nearest lists
		 * hold fewer of them, so take twice as many (recall@20 on the
		 * hub suppliers of the workload: 0.990 with the usual number, 0.995
		 * with twice, 0.997 with four times at a fifth more time).
		 */
		if (v.members && !o->rerank)
			rerank *= 2;
		for (; !done;) {
			v.n = 0;
			if ((rc = search_index(&v, &m, probes, rerank)) ||
			    (rc = scan_exact(&v, m.watermark)))
				break;
			/* A filter the candidates did not satisfy: more lists, more candidates. */
			if ((!v.filter[0] && !v.exclude) || v.n == v.cap || probes >= m.lists)
				break;
			probes *= 4;
			rerank = rerank * 4 > 10000 ? 10000 : rerank * 4;
		}
	} else if (!rc) {
		rc = scan_exact(&v, 0);
	}
	for (size_t i = 0; !rc && i < v.n; i++) {
		memset(&out[i], 0, sizeof(out[i]));
		if ((rc = record_fill(t, NULL, v.h[i].vid, &out[i].rec, NULL)))
			break;
		out[i].score = v.h[i].score;
		*n = i + 1;
	}
	if (rc)
		*n = 0;
	if (v.cells)
		mdb_cursor_close(v.cells);
	cr_free(v.chunk);
	cr_free(v.known);
	cr_free(v.members);
	cr_free(q);
	cr_free(v.h);
	cr_free(v.tmp);
	arena_rewind(&t->scratch, mark);
	return rc;
}
