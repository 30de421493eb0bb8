/*
 * Exact vector search (cairn_vsearch, docs/vectors.md): every Record vector
 * of the Domain scanned in vid order, those the view's live set holds
 * scored against the query (cosine, dot product or L2), the best kept; a
 * Kind or attribute filter is checked for a Record only when it would be
 * kept. It is the reference a vector index is measured against, and the
 * answer while there is none.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "query/read.h"
#include "util/alloc.h"
#include "util/err.h"

typedef struct vhit {
	uint64_t vid;
	double score;
} vhit;

typedef struct vctx {
	cairn_txn *t;
	MDB_cursor *cells;
	uint64_t chunk_id;	/* the live-set chunk in hand, + 1 */
	const uint8_t *chunk;
	uint32_t kinds[64];
	size_t n_kinds;
	const qfilter *filter[64];
	vhit *h;		/* the best, best first */
	size_t n, cap;
} vctx;

static int vlive(vctx *v, uint64_t vid, int *live)
{
	uint64_t id = vid >> LIVE_CHUNK_BITS;
	unsigned bit = (unsigned)(vid & ((1u << LIVE_CHUNK_BITS) - 1));
	size_t len;
	int rc;

	if (v->chunk_id != id + 1) {
		rc = cell_get_cur(&v->t->d, v->cells, CELL_LIVE, id, &v->chunk, &len);
		if (rc == CAIRN_ENOTFOUND)
			v->chunk = NULL;
		else if (rc)
			return rc;
		else if (len != LIVE_CHUNK_BYTES)
			return err_set(CAIRN_ECORRUPT, "live-set chunk of %zu bytes", len);
		v->chunk_id = id + 1;
	}
	*live = v->chunk && (v->chunk[bit >> 3] >> (bit & 7) & 1);
	return 0;
}

/* Would (score, vid) be kept? Equal scores keep the Version written first. */
static int better(const vhit *a, double score, uint64_t vid)
{
	return score > a->score || (score == a->score && vid < a->vid);
}

/* Keep vid when it beats the worst kept and its Record passes the Kind and the filter. */
static int vkeep(vctx *v, uint64_t vid, double score)
{
	size_t at;
	vrec r;
	int rc, match = 1;

	if (v->n == v->cap && !better(&v->h[v->n - 1], score, vid))
		return 0;
	if (v->n_kinds || v->filter[0]) {
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

int cairn_vsearch(cairn_txn *t, const cairn_vsearch_options *o, cairn_hit *out, size_t cap,
		  size_t *n)
{
	vctx v;
	float *q = NULL;
	size_t dim = 0, limit;
	uint64_t skip = 0;
	double qnorm = 0;
	arena_mark mark;
	MDB_cursor *cur = NULL;
	MDB_val k, val;
	uint8_t p[4];
	int rc = 0, mrc;

	if (!t || !o || !out || !n || (!o->vector == !o->near))
		return err_set(CAIRN_EINVAL, "cairn_vsearch: a vector or a Record to be near, not both");
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
	memset(&v, 0, sizeof(v));
	v.t = t;
	for (size_t i = 0; i < o->n_kinds; i++) {
		const kind_def *kd = o->kinds[i] ? schema_kind(t->d.s, o->kinds[i]) : NULL;

		if (!kd)
			return err_set(CAIRN_EUNKNOWNKIND, "unknown Kind \"%s\"",
				       o->kinds[i] ? o->kinds[i] : "(null)");
		v.kinds[v.n_kinds++] = kd->id;
	}
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
	for (size_t d = 0; !rc && d < dim; d++) {
		if (!isfinite(q[d]))
			rc = err_set(CAIRN_EINVAL, "the vector's component %zu is not a finite number", d);
		qnorm += (double)q[d] * q[d];
	}
	qnorm = sqrt(qnorm);
	if (!rc && !(v.h = cr_calloc(limit, sizeof(*v.h))))
		rc = err_set(CAIRN_ENOMEM, "out of memory");
	v.cap = limit;
	if (!rc && (mrc = mdb_cursor_open(t->txn, t->st->dbi[DB_CELLS], &v.cells)))
		rc = store_err(mrc, "cells");
	if (!rc && (mrc = mdb_cursor_open(t->txn, t->st->dbi[DB_VECTORS], &cur)))
		rc = store_err(mrc, "vectors");
	be32_put(p, t->d.dom);
	k.mv_data = p;
	k.mv_size = 4;
	for (mrc = rc ? MDB_NOTFOUND : mdb_cursor_get(cur, &k, &val, MDB_SET_RANGE); mrc == 0 && !rc;
	     mrc = mdb_cursor_get(cur, &k, &val, MDB_NEXT)) {
		uint64_t vid;
		const float *x = val.mv_data;
		double s = 0, nx = 0;
		int live = 0;

		if (k.mv_size != 12 || memcmp(k.mv_data, p, 4) != 0)
			break;
		vid = be64_get((const uint8_t *)k.mv_data + 4);
		t->d.stats.entries++;
		if (vid == skip || (rc = vlive(&v, vid, &live)) || !live)
			continue;
		if (val.mv_size != dim * sizeof(float)) {
			rc = err_set(CAIRN_EDIM, "the Domain's vectors have %zu dimensions, not %zu",
				     val.mv_size / sizeof(float), dim);
			break;
		}
		if (o->metric == CAIRN_L2) {
			for (size_t d = 0; d < dim; d++) {
				double e = (double)x[d] - q[d];

				s += e * e;
			}
			s = s > 0 ? -sqrt(s) : 0;
		} else {
			for (size_t d = 0; d < dim; d++) {
				s += (double)x[d] * q[d];
				nx += (double)x[d] * x[d];
			}
			if (o->metric == CAIRN_COSINE)
				s = nx > 0 && qnorm > 0 ? s / (sqrt(nx) * qnorm) : 0;
		}
		rc = vkeep(&v, vid, s);
	}
	if (!rc && mrc && mrc != MDB_NOTFOUND)
		rc = store_err(mrc, "vectors");
	for (size_t i = 0; !rc && i < v.n; i++) {
		memset(&out[i], 0, sizeof(out[i]));
		if ((rc = record_fill(t, NULL, v.h[i].vid, &out[i].rec, NULL)))
			break;
		out[i].score = v.h[i].score;
		*n = i + 1;
	}
	if (rc)
		*n = 0;
	if (cur)
		mdb_cursor_close(cur);
	if (v.cells)
		mdb_cursor_close(v.cells);
	cr_free(q);
	cr_free(v.h);
	arena_rewind(&t->scratch, mark);
	return rc;
}
