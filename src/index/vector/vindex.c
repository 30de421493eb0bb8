/*
 * Building and catching up the vector index (vindex.h). The work is done
 * on a read snapshot, with the writer free: the vectors and their Kinds are
 * read, the centroids trained (spherical k-means on a sample), every vector
 * assigned to its nearest centroid and quantized, on several threads. Then
 * one write transaction checks that the index has not moved meanwhile and
 * writes the lists. A vid newer than the snapshot is newer than every vid
 * the snapshot holds, so the watermark stays exact.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/arena.h"
#include "base/err.h"
#include "base/knob.h"
#include "base/text.h"
#include "base/vec.h"
#include "index/vector/vindex.h"

#define KMEANS_ITER 6
#define KMEANS_SAMPLE 48 /* sample vectors per list */
#define LISTS_MAX 65536
#define META_LEN 40
#define SEQ_MAX 64 /* block numbers in a list before it is rebuilt */

static void vkey(kbuf *k, uint32_t dom, uint8_t what)
{
	kb_init(k);
	kb_be32(k, dom);
	kb_u8(k, what);
}

int vindex_meta_get(MDB_txn *txn, cairn_store *st, uint32_t dom, vindex_meta *m)
{
	kbuf k;
	MDB_val v;
	const uint8_t *p;
	int rc;

	vkey(&k, dom, 'M');
	if ((rc = db_get(txn, st, DB_VINDEX, k.b, k.n, &v)))
		return rc;
	p = v.mv_data;
	if (v.mv_size != META_LEN || be32_get(p) != 1)
		return err_set(CAIRN_ECORRUPT, "vector index: meta of %zu bytes", v.mv_size);
	m->dim = be32_get(p + 4);
	m->lists = be32_get(p + 8);
	m->watermark = be64_get(p + 16);
	m->entries = be64_get(p + 24);
	m->seq = be64_get(p + 32);
	if (!m->dim || m->dim > CAIRN_MAX_VECTOR_DIM || !m->lists || m->lists > LISTS_MAX)
		return err_set(CAIRN_ECORRUPT, "vector index: meta of %u lists of %u dimensions",
			       m->lists, m->dim);
	return 0;
}

static int meta_put(MDB_txn *txn, cairn_store *st, uint32_t dom, const vindex_meta *m)
{
	uint8_t p[META_LEN] = {0};
	kbuf k;

	be32_put(p, 1);
	be32_put(p + 4, m->dim);
	be32_put(p + 8, m->lists);
	be64_put(p + 16, m->watermark);
	be64_put(p + 24, m->entries);
	be64_put(p + 32, m->seq);
	vkey(&k, dom, 'M');
	return db_put(txn, st, DB_VINDEX, k.b, k.n, p, sizeof(p), 0);
}

int vblock_decode(const void *p, size_t len, uint32_t dim, vblock *b)
{
	const uint8_t *s = p;

	if (len < 8)
		return err_set(CAIRN_ECORRUPT, "vector index: block of %zu bytes", len);
	memcpy(&b->n, s, 4);
	memcpy(&b->dim, s + 4, 4);
	if (b->dim != dim || b->n == 0 || b->n > VINDEX_BLOCK_MAX ||
	    len != 8 + (size_t)b->n * (20 + dim))
		return err_set(CAIRN_ECORRUPT, "vector index: block of %zu bytes, %u of %u", len,
			       b->n, b->dim);
	b->vids = s + 8;
	b->kinds = b->vids + 8 * (size_t)b->n;
	b->scales = b->kinds + 4 * (size_t)b->n;
	b->norms = b->scales + 4 * (size_t)b->n;
	b->codes = (const int8_t *)(b->norms + 4 * (size_t)b->n);
	return 0;
}

/* ------------------------------------------------------------ building -- */

typedef struct vin {
	uint64_t vid;
	const float *x; /* in the snapshot's map */
	uint32_t kind;
	uint32_t list;
	float scale, norm;
} vin;

typedef struct build {
	size_t dim, lists;
	float *cent;	     /* lists x dim unit centroids */
	vin *v;
	size_t n;
	int8_t *codes;	     /* n x dim, when quantizing */
	arena copies;	     /* aligned copies of the vectors the map has at odd places */
	const volatile int *stop;
} build;

typedef struct job {
	build *b;
	vin **items;	     /* the vectors to assign (sample or all) */
	size_t lo, hi;
	int quantize;	     /* and quantize (items are b->v: codes at the same index) */
} job;

static size_t nearest(const build *b, const float *x)
{
	size_t best = 0;
	float bs = -INFINITY;

	for (size_t j = 0; j < b->lists; j++) {
		float s = vec_dot(x, b->cent + j * b->dim, b->dim);

		if (s > bs) {
			bs = s;
			best = j;
		}
	}
	return best;
}

static void *assign_run(void *arg)
{
	job *j = arg;
	build *b = j->b;

	for (size_t i = j->lo; i < j->hi; i++) {
		vin *e = j->items ? j->items[i] : &b->v[i];

		if ((i & 255) == 0 && b->stop && *b->stop)
			break;
		e->list = (uint32_t)nearest(b, e->x);
		if (j->quantize) {
			e->scale = vec_quantize(e->x, b->dim, b->codes + i * b->dim);
			e->norm = sqrtf(vec_dot(e->x, e->x, b->dim));
		}
	}
	return NULL;
}

/* Assign items[0..n-1] (NULL: every vector, quantizing too) on threads threads. */
static int assign_all(build *b, vin **items, size_t n, unsigned threads)
{
	pthread_t th[8];
	job jobs[8];
	unsigned started = 0;

	if (threads < 1)
		threads = 1;
	if (threads > 8)
		threads = 8;
	for (unsigned t = 0; t < threads; t++) {
		jobs[t].b = b;
		jobs[t].items = items;
		jobs[t].lo = n * t / threads;
		jobs[t].hi = n * (t + 1) / threads;
		jobs[t].quantize = items == NULL;
	}
	for (unsigned t = 1; t < threads; t++)
		if (pthread_create(&th[t], NULL, assign_run, &jobs[t]) == 0)
			started = t;
		else
			break;
	/* Whatever did not start runs here. */
	assign_run(&jobs[0]);
	for (unsigned t = started + 1; t < threads; t++)
		assign_run(&jobs[t]);
	for (unsigned t = 1; t <= started; t++)
		pthread_join(th[t], NULL);
	return b->stop && *b->stop ? CAIRN_ECLOSED : 0;
}

static void unit(float *x, size_t dim)
{
	float s = sqrtf(vec_dot(x, x, dim));

	if (s > 0)
		for (size_t d = 0; d < dim; d++)
			x[d] /= s;
}

/* Spherical k-means on an even sample: unit centroids in b->cent. */
static int train(build *b, unsigned threads)
{
	size_t s = b->n < b->lists * KMEANS_SAMPLE ? b->n : b->lists * KMEANS_SAMPLE;
	vin **sample = cr_malloc(s * sizeof(*sample));
	double *sum = cr_calloc(b->lists * b->dim, sizeof(double));
	size_t *count = cr_calloc(b->lists, sizeof(size_t));
	int rc = 0;

	if (!sample || !sum || !count) {
		rc = err_set(CAIRN_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < s; i++)
		sample[i] = &b->v[(size_t)((double)i * b->n / s)];
	for (size_t j = 0; j < b->lists; j++) {
		memcpy(b->cent + j * b->dim, sample[j * s / b->lists]->x, b->dim * sizeof(float));
		unit(b->cent + j * b->dim, b->dim);
	}
	for (int it = 0; it < KMEANS_ITER && !rc; it++) {
		if ((rc = assign_all(b, sample, s, threads)))
			break;
		memset(sum, 0, b->lists * b->dim * sizeof(double));
		memset(count, 0, b->lists * sizeof(size_t));
		for (size_t i = 0; i < s; i++) {
			const float *x = sample[i]->x;
			double *c = sum + (size_t)sample[i]->list * b->dim;
			double nx = sqrt((double)vec_dot(x, x, b->dim));

			count[sample[i]->list]++;
			for (size_t d = 0; nx > 0 && d < b->dim; d++)
				c[d] += x[d] / nx;
		}
		for (size_t j = 0; j < b->lists; j++) {
			float *c = b->cent + j * b->dim;

			if (count[j] == 0) { /* an empty list takes a sample vector of its own */
				memcpy(c, sample[(j * 7919 + (size_t)it * 104729) % s]->x,
				       b->dim * sizeof(float));
			} else {
				for (size_t d = 0; d < b->dim; d++)
					c[d] = (float)sum[j * b->dim + d];
			}
			unit(c, b->dim);
		}
	}
out:
	cr_free(sample);
	cr_free(sum);
	cr_free(count);
	return rc;
}

/* Read the vectors with vid > after (and their Kinds) from the snapshot. */
static int collect(MDB_txn *txn, cairn_store *st, uint32_t dom, uint64_t after, build *b,
		   uint64_t *last)
{
	MDB_cursor *cur;
	MDB_val k, v;
	kbuf p;
	dctx d;
	size_t cap = 0;
	int mrc, rc = 0;

	memset(&d, 0, sizeof(d));
	d.st = st;
	d.txn = txn;
	d.dom = dom;
	key_u64(&p, dom, after + 1);
	if ((mrc = mdb_cursor_open(txn, st->dbi[DB_VECTORS], &cur)))
		return store_err(mrc, "vectors");
	k.mv_data = p.b;
	k.mv_size = p.n;
	for (mrc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); mrc == 0 && !rc;
	     mrc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		vrec r;

		if (k.mv_size != 12 || memcmp(k.mv_data, p.b, 4) != 0)
			break;
		if (!b->dim && v.mv_size % sizeof(float) == 0)
			b->dim = v.mv_size / sizeof(float);
		if (v.mv_size != b->dim * sizeof(float) || !b->dim) {
			rc = err_set(CAIRN_ECORRUPT, "vector of %zu bytes in a Domain of %zu dimensions",
				     v.mv_size, b->dim);
			break;
		}
		if (b->n == cap) {
			vin *nv = cr_reallocarray(b->v, cap ? cap * 2 : 4096, sizeof(*nv));

			if (!nv) {
				rc = err_set(CAIRN_ENOMEM, "out of memory");
				break;
			}
			b->v = nv;
			cap = cap ? cap * 2 : 4096;
		}
		memset(&b->v[b->n], 0, sizeof(b->v[0]));
		b->v[b->n].vid = be64_get((const uint8_t *)k.mv_data + 4);
		b->v[b->n].x = v.mv_data;
		if ((uintptr_t)v.mv_data & 3) { /* LMDB aligns values to 2 bytes: a copy */
			float *x = arena_alloc(&b->copies, v.mv_size);

			if (!x) {
				rc = err_set(CAIRN_ENOMEM, "out of memory");
				break;
			}
			memcpy(x, v.mv_data, v.mv_size);
			b->v[b->n].x = x;
		}
		if ((rc = version_get(&d, b->v[b->n].vid, &r)))
			break;
		b->v[b->n].kind = r.kr;
		*last = b->v[b->n].vid;
		b->n++;
	}
	if (!rc && mrc && mrc != MDB_NOTFOUND)
		rc = store_err(mrc, "vectors");
	mdb_cursor_close(cur);
	return rc;
}

/* Write the assigned vectors as blocks, each list's from seq on. */
static int write_lists(MDB_txn *txn, cairn_store *st, uint32_t dom, const build *b,
		       uint64_t seq, uint64_t *seq_end)
{
	size_t *start = cr_calloc(b->lists + 1, sizeof(size_t)), *order = NULL;
	uint8_t *blk = NULL;
	size_t bmax = 8 + (size_t)VINDEX_BLOCK_MAX * (20 + b->dim);
	uint64_t used = 0;
	int rc = 0;

	if (!start || !(order = cr_malloc((b->n ? b->n : 1) * sizeof(size_t))) ||
	    !(blk = cr_malloc(bmax))) {
		rc = err_set(CAIRN_ENOMEM, "out of memory");
		goto out;
	}
	/* A counting sort by list, vid order kept within each. */
	for (size_t i = 0; i < b->n; i++)
		start[b->v[i].list + 1]++;
	for (size_t j = 0; j < b->lists; j++)
		start[j + 1] += start[j];
	for (size_t i = 0; i < b->n; i++)
		order[start[b->v[i].list]++] = i;
	for (size_t j = b->lists; j > 0; j--)
		start[j] = start[j - 1];
	start[0] = 0;
	for (size_t j = 0; j < b->lists && !rc; j++) {
		uint64_t s = seq;

		for (size_t at = start[j]; at < start[j + 1] && !rc; s++) {
			uint32_t n = (uint32_t)(start[j + 1] - at > VINDEX_BLOCK_MAX
							? VINDEX_BLOCK_MAX
							: start[j + 1] - at);
			uint32_t dim = (uint32_t)b->dim;
			uint8_t *p = blk + 8;
			kbuf k;

			memcpy(blk, &n, 4);
			memcpy(blk + 4, &dim, 4);
			for (uint32_t i = 0; i < n; i++, p += 8)
				memcpy(p, &b->v[order[at + i]].vid, 8);
			for (uint32_t i = 0; i < n; i++, p += 4)
				memcpy(p, &b->v[order[at + i]].kind, 4);
			for (uint32_t i = 0; i < n; i++, p += 4)
				memcpy(p, &b->v[order[at + i]].scale, 4);
			for (uint32_t i = 0; i < n; i++, p += 4)
				memcpy(p, &b->v[order[at + i]].norm, 4);
			for (uint32_t i = 0; i < n; i++, p += b->dim)
				memcpy(p, b->codes + order[at + i] * b->dim, b->dim);
			vkey(&k, dom, 'L');
			kb_be32(&k, (uint32_t)j);
			kb_be32(&k, (uint32_t)s);
			rc = db_put(txn, st, DB_VINDEX, k.b, k.n, blk, (size_t)(p - blk), 0);
			at += n;
		}
		if (s - seq > used)
			used = s - seq;
	}
	*seq_end = seq + used;
out:
	cr_free(start);
	cr_free(order);
	cr_free(blk);
	return rc;
}

/*
 * Build (rebuild) or catch up the index of Domain dom, as o asks (NULL:
 * as needed). info (may be NULL) gets what was done.
 */
/* Writing a built index, as store_write runs it: unless the index moved meanwhile. */
struct vwrite {
	uint32_t dom;
	uint64_t gen, last;
	int have, rebuild;
	const vindex_meta *m;
	vindex_meta *nm;
	build *b;
	int moved;	/* another index, or re-embedded vectors: nothing written */
};

static int vwrite_txn(MDB_txn *txn, cairn_store *st, void *arg)
{
	struct vwrite *a = arg;
	vindex_meta cur;
	uint64_t cur_gen = a->gen;
	int cur_have, rc;

	rc = vindex_meta_get(txn, st, a->dom, &cur);
	cur_have = rc == 0;
	if (rc == CAIRN_ENOTFOUND)
		rc = 0;
	if (!rc)
		rc = vec_generation(txn, st, a->dom, &cur_gen);
	/* Another index, or vectors re-embedded since they were read: leave it. */
	if (!rc && (cur_gen != a->gen || cur_have != a->have ||
		    (a->have && (cur.watermark != a->m->watermark || cur.seq != a->m->seq ||
			      cur.entries != a->m->entries)))) {
		a->moved = 1;
		return STORE_DISCARD; /* done by another: nothing to do */
	}
	a->nm->dim = (uint32_t)a->b->dim;
	a->nm->lists = (uint32_t)a->b->lists;
	a->nm->watermark = a->last;
	if (!rc && a->rebuild) {
		kbuf k;

		vkey(&k, a->dom, 'L');
		a->nm->entries = a->b->n;
		if (!(rc = db_del_prefix(txn, st, DB_VINDEX, k.b, k.n, NULL))) {
			vkey(&k, a->dom, 'C');
			rc = db_put(txn, st, DB_VINDEX, k.b, k.n, a->b->cent,
				    a->b->lists * a->b->dim * sizeof(float), 0);
		}
		if (!rc)
			rc = write_lists(txn, st, a->dom, a->b, 0, &a->nm->seq);
	} else if (!rc) {
		a->nm->entries = a->m->entries + a->b->n;
		rc = write_lists(txn, st, a->dom, a->b, a->m->seq, &a->nm->seq);
	}
	if (!rc)
		rc = meta_put(txn, st, a->dom, a->nm);
	return rc;
}

static int vindex_update(cairn_store *st, uint32_t dom, const cairn_vindex_options *o,
			 const volatile int *stop, cairn_vindex_info *info)
{
	double t0 = (double)time_mono_ns() / 1e9;
	MDB_txn *rtxn = NULL;
	struct vwrite va;
	vindex_meta m, nm;
	build b;
	uint64_t last = 0, gen;
	unsigned threads = o && o->threads ? o->threads : 2;
	int rc, have, rebuild;

	memset(&b, 0, sizeof(b));
	memset(&nm, 0, sizeof(nm));
	b.stop = stop;
	if ((rc = store_read_begin(st, &rtxn)))
		return rc;
	rc = vindex_meta_get(rtxn, st, dom, &m);
	have = rc == 0;
	if (rc == CAIRN_ENOTFOUND)
		rc = 0;
	if (rc || (rc = vec_generation(rtxn, st, dom, &gen)))
		goto out;
	/*
	 * Built anew when asked, when the lists change, and after SEQ_MAX
	 * catch-ups: each appends a small block to most lists, and a search
	 * steps through every block of the lists it scans.
	 */
	rebuild = !have || (o && o->rebuild) || (o && o->lists && o->lists != m.lists) ||
		  m.seq > SEQ_MAX;
	if (!rebuild) {
		b.dim = m.dim;
		rc = collect(rtxn, st, dom, m.watermark, &b, &last);
		/* A tail larger than the index: the centroids may no longer fit; train anew. */
		if (!rc && b.n > m.entries) {
			rebuild = 1;
			arena_release(&b.copies);
			cr_free(b.v);
			b.v = NULL;
			b.n = 0;
		}
	}
	if (!rc && rebuild) {
		b.dim = 0;
		rc = collect(rtxn, st, dom, 0, &b, &last);
	}
	if (rc || b.n == 0)
		goto out;
	if (rebuild) {
		b.lists = o && o->lists ? o->lists : (size_t)lrint(sqrt((double)b.n));
		if (b.lists < 1)
			b.lists = 1;
		if (b.lists > LISTS_MAX || b.lists > b.n)
			b.lists = b.n < LISTS_MAX ? b.n : LISTS_MAX;
		if (!(b.cent = cr_malloc(b.lists * b.dim * sizeof(float)))) {
			rc = err_set(CAIRN_ENOMEM, "out of memory");
			goto out;
		}
		if ((rc = train(&b, threads)))
			goto out;
	} else {
		kbuf k;
		MDB_val v;

		b.lists = m.lists;
		vkey(&k, dom, 'C');
		if ((rc = db_get(rtxn, st, DB_VINDEX, k.b, k.n, &v)))
			goto out;
		if (v.mv_size != b.lists * b.dim * sizeof(float)) {
			rc = err_set(CAIRN_ECORRUPT, "vector index: centroids of %zu bytes", v.mv_size);
			goto out;
		}
		if (!(b.cent = cr_malloc(v.mv_size))) {
			rc = err_set(CAIRN_ENOMEM, "out of memory");
			goto out;
		}
		memcpy(b.cent, v.mv_data, v.mv_size);
	}
	if (!(b.codes = cr_malloc(b.n * b.dim))) {
		rc = err_set(CAIRN_ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = assign_all(&b, NULL, b.n, threads)))
		goto out;
	/* Write, unless the index moved while this was computed. */
	va = (struct vwrite){dom, gen, last, have, rebuild, &m, &nm, &b, 0};
	rc = store_write(st, vwrite_txn, &va);
	if (!rc && va.moved)
		goto out;
	if (!rc && info) {
		info->built = rebuild ? 1 : 2;
		info->added = b.n;
	}
out:
	if (info) {
		info->seconds = (double)time_mono_ns() / 1e9 - t0;
		if (!info->built)
			info->added = 0;
	}
	if (rtxn)
		store_read_end(st, rtxn);
	cr_free(b.v);
	cr_free(b.cent);
	cr_free(b.codes);
	arena_release(&b.copies);
	return rc;
}

/* ---------------------------------------------------------- compaction -- */

static int dead(const uint8_t *bits, uint64_t nbits, uint64_t vid)
{
	return vid < nbits && (bits[vid >> 3] >> (vid & 7)) & 1;
}

int vindex_compact_step(MDB_txn *txn, cairn_store *st, uint32_t dom, const uint8_t *bits,
			uint64_t nbits, uint8_t resume[8], unsigned budget, uint64_t *removed,
			int *more)
{
	uint8_t (*keys)[13] = NULL, *blk = NULL;
	MDB_cursor *cur;
	MDB_val k, v;
	vindex_meta m;
	kbuf s;
	size_t n = 0;
	uint64_t gone = 0;
	int mrc, rc;

	*more = 0;
	if ((rc = vindex_meta_get(txn, st, dom, &m)))
		return rc == CAIRN_ENOTFOUND ? 0 : rc;
	if (!(keys = cr_malloc((size_t)budget * sizeof(*keys))) ||
	    !(blk = cr_malloc(8 + (size_t)VINDEX_BLOCK_MAX * (20 + m.dim)))) {
		cr_free(keys);
		return err_set(CAIRN_ENOMEM, "out of memory");
	}
	/* The keys of the next blocks first: the rewrites below move the cursor's pages. */
	vkey(&s, dom, 'L');
	kb_bytes(&s, resume, 8);
	if ((mrc = mdb_cursor_open(txn, st->dbi[DB_VINDEX], &cur))) {
		rc = store_err(mrc, "vindex");
		goto out;
	}
	k.mv_data = s.b;
	k.mv_size = s.n;
	for (mrc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); mrc == 0;
	     mrc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		if (k.mv_size != 13 || memcmp(k.mv_data, s.b, 5) != 0)
			break;
		if (n == budget) { /* where the next step starts */
			memcpy(resume, (const uint8_t *)k.mv_data + 5, 8);
			*more = 1;
			break;
		}
		memcpy(keys[n++], k.mv_data, 13);
	}
	mdb_cursor_close(cur);
	if (mrc && mrc != MDB_NOTFOUND) {
		rc = store_err(mrc, "vindex");
		goto out;
	}
	for (size_t i = 0; i < n && !rc; i++) {
		vblock b;
		uint32_t keep = 0;
		uint8_t *p;

		if ((rc = db_get(txn, st, DB_VINDEX, keys[i], 13, &v)) ||
		    (rc = vblock_decode(v.mv_data, v.mv_size, m.dim, &b)))
			break;
		for (uint32_t j = 0; j < b.n; j++) {
			uint64_t vid;

			memcpy(&vid, b.vids + 8 * (size_t)j, 8);
			keep += !dead(bits, nbits, vid);
		}
		if (keep == b.n)
			continue;
		gone += b.n - keep;
		if (!keep) {
			rc = db_del(txn, st, DB_VINDEX, keys[i], 13);
			continue;
		}
		/* The block again without them, array by array. */
		memcpy(blk, &keep, 4);
		memcpy(blk + 4, &m.dim, 4);
		p = blk + 8;
		for (int part = 0; part < 5; part++) {
			static const size_t width[4] = {8, 4, 4, 4};
			const uint8_t *from[4] = {b.vids, b.kinds, b.scales, b.norms};
			size_t w = part < 4 ? width[part] : m.dim;

			for (uint32_t j = 0; j < b.n; j++) {
				uint64_t vid;

				memcpy(&vid, b.vids + 8 * (size_t)j, 8);
				if (dead(bits, nbits, vid))
					continue;
				memcpy(p, part < 4 ? from[part] + w * j : (const uint8_t *)b.codes + w * j,
				       w);
				p += w;
			}
		}
		rc = db_put(txn, st, DB_VINDEX, keys[i], 13, blk, (size_t)(p - blk), 0);
	}
	if (!rc && gone) {
		m.entries -= gone < m.entries ? gone : m.entries;
		rc = meta_put(txn, st, dom, &m);
	}
	if (!rc)
		*removed += gone;
out:
	cr_free(keys);
	cr_free(blk);
	return rc;
}

/* What the Domain's index holds and how many vectors are newer (counting up to stop_at). */
static int vindex_state(MDB_txn *txn, cairn_store *st, uint32_t dom, vindex_meta *m, int *have,
			uint64_t *tail, uint64_t stop_at)
{
	MDB_cursor *cur;
	MDB_val k, v;
	kbuf p;
	int mrc, rc = vindex_meta_get(txn, st, dom, m);

	*have = rc == 0;
	*tail = 0;
	if (rc == CAIRN_ENOTFOUND) {
		memset(m, 0, sizeof(*m));
		rc = 0;
	}
	if (rc)
		return rc;
	key_u64(&p, dom, m->watermark + 1);
	if ((mrc = mdb_cursor_open(txn, st->dbi[DB_VECTORS], &cur)))
		return store_err(mrc, "vectors");
	k.mv_data = p.b;
	k.mv_size = p.n;
	for (mrc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); mrc == 0 && *tail < stop_at;
	     mrc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		if (k.mv_size != 12 || memcmp(k.mv_data, p.b, 4) != 0)
			break;
		(*tail)++;
	}
	mdb_cursor_close(cur);
	return mrc && mrc != MDB_NOTFOUND ? store_err(mrc, "vectors") : 0;
}

int vindex_maintain(cairn_store *st, const volatile int *stop)
{
	uint64_t next;
	MDB_txn *txn;
	int rc;

	if (st->flags & CAIRN_OPEN_RDONLY)
		return 0;
	if ((rc = store_read_begin(st, &txn)))
		return rc;
	rc = meta_get_u64(txn, st, "next_domain", &next);
	store_read_end(st, txn);
	for (uint32_t dom = 1; !rc && dom < next && !(stop && *stop); dom++) {
		vindex_meta m;
		uint64_t tail;
		int have;

		if (atomic_load(&st->importing))
			break; /* woken again when the import ends */
		if ((rc = store_read_begin(st, &txn)))
			break;
		rc = vindex_state(txn, st, dom, &m, &have, &tail, UINT64_MAX);
		store_read_end(st, txn);
		if (!rc && tail >= knob(have ? KNOB_VINDEX_CATCHUP : KNOB_VINDEX_MIN))
			rc = vindex_update(st, dom, NULL, stop, NULL);
	}
	return rc == CAIRN_ECLOSED ? 0 : rc;
}

int cairn_vindex_update(cairn_store *st, const char *domain, const cairn_vindex_options *o,
			cairn_vindex_info *info)
{
	MDB_txn *txn;
	uint32_t dom;
	int rc;

	if (!st || !domain)
		return err_set(CAIRN_EINVAL, "cairn_vindex_update: NULL argument");
	if (o && (rc = err_reserved(o->reserved, "cairn_vindex_update", "cairn_vindex_options")))
		return rc;
	if (st->flags & CAIRN_OPEN_RDONLY)
		return err_set(CAIRN_EREADONLY, "the store is open read-only");
	if (o && o->lists > LISTS_MAX)
		return err_set(CAIRN_EINVAL, "lists is 1 to %d", LISTS_MAX);
	if (info)
		memset(info, 0, sizeof(*info));
	if ((rc = store_read_begin(st, &txn)))
		return rc;
	rc = domain_id(txn, st, domain, &dom);
	store_read_end(st, txn);
	if (!rc)
		rc = vindex_update(st, dom, o, NULL, info);
	if (!rc && info)
		rc = cairn_vindex_stat(st, domain, info);
	return rc;
}

int cairn_vindex_stat(cairn_store *st, const char *domain, cairn_vindex_info *info)
{
	MDB_txn *txn;
	vindex_meta m;
	uint32_t dom;
	uint64_t tail;
	int rc, have;

	if (!st || !domain || !info)
		return err_set(CAIRN_EINVAL, "cairn_vindex_stat: NULL argument");
	if ((rc = store_read_begin(st, &txn)))
		return rc;
	if (!(rc = domain_id(txn, st, domain, &dom)))
		rc = vindex_state(txn, st, dom, &m, &have, &tail, UINT64_MAX);
	store_read_end(st, txn);
	if (rc)
		return rc;
	/* (cairn_vindex_update's built, added and seconds stay) */
	memset(info->reserved, 0, sizeof(info->reserved));
	info->vectors = m.entries;
	info->tail = tail;
	info->lists = m.lists;
	info->dim = m.dim;
	info->bytes = have ? m.entries * (20 + (uint64_t)m.dim) + (uint64_t)m.lists * m.dim * 4 : 0;
	return 0;
}

/*
 * The vector index: its meta and centroids whole, every block decodable and
 * of a list the meta has, every entry at or below the watermark and, unless
 * its Version was cleared with a deleted branch, naming a Record Version of
 * the Kind it says with a vector; the entries counted as the meta says.
 */
static int vindex_check(index_check *c)
{
	vindex_meta m;
	MDB_cursor *cur;
	MDB_val k, v;
	uint8_t p[4];
	uint64_t seen = 0;
	int mrc, rc = vindex_meta_get(c->d->txn, c->d->st, c->d->dom, &m), have = rc == 0;

	if (rc == CAIRN_ECORRUPT) {
		c->problem(c, "vector index: %s", cairn_errmsg());
		return 0;
	}
	if (rc && rc != CAIRN_ENOTFOUND)
		return rc;
	be32_put(p, c->d->dom);
	if ((mrc = mdb_cursor_open(c->d->txn, c->d->st->dbi[DB_VINDEX], &cur)))
		return store_err(mrc, "vindex");
	k.mv_data = p;
	k.mv_size = 4;
	rc = 0;
	for (mrc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); mrc == 0 && !rc;
	     mrc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		const uint8_t *kp = k.mv_data;
		vblock b;

		if (k.mv_size < 5 || memcmp(kp, p, 4) != 0)
			break;
		if (!have) {
			c->problem(c, "vector index: entries without its meta");
			break;
		}
		if (kp[4] == 'M')
			continue;
		if (kp[4] == 'C') {
			if (k.mv_size != 5 || v.mv_size != (size_t)m.lists * m.dim * sizeof(float))
				c->problem(c, "vector index: centroids of %zu bytes", v.mv_size);
			continue;
		}
		if (kp[4] != 'L' || k.mv_size != 13 || be32_get(kp + 5) >= m.lists) {
			c->problem(c, "vector index: a malformed key");
			continue;
		}
		if (vblock_decode(v.mv_data, v.mv_size, m.dim, &b)) {
			c->problem(c, "vector index: %s", cairn_errmsg());
			continue;
		}
		for (uint32_t i = 0; i < b.n && !rc; i++) {
			uint64_t vid;
			uint32_t kind;
			kbuf vk;
			MDB_val x;
			vrec ver;

			memcpy(&vid, b.vids + 8 * (size_t)i, 8);
			memcpy(&kind, b.kinds + 4 * (size_t)i, 4);
			seen++;
			(*c->entries)++;
			if (vid > m.watermark) {
				c->problem(c, "vector index: Version %llu is above its watermark",
					(unsigned long long)vid);
				continue;
			}
			key_u64(&vk, c->d->dom, vid);
			rc = db_get(c->d->txn, c->d->st, DB_VERSIONS, vk.b, vk.n, &x);
			if (rc == CAIRN_ENOTFOUND) { /* cleared with a deleted branch */
				rc = 0;
				continue;
			}
			if (rc)
				break;
			if (vrec_decode(x.mv_data, x.mv_size, &ver) || ver.type != V_REC ||
			    ver.kr != kind || !ver.dim || c->vdim != m.dim)
				c->problem(c, "vector index: the entry of Version %llu does not match it",
					(unsigned long long)vid);
		}
	}
	mdb_cursor_close(cur);
	if (rc)
		return rc;
	if (mrc && mrc != MDB_NOTFOUND)
		return store_err(mrc, "vindex");
	if (have && seen != m.entries)
		c->problem(c, "vector index: %llu entries, its meta says %llu", (unsigned long long)seen,
			(unsigned long long)m.entries);
	return 0;
}

/* Compaction: a step of the blocks that hold entries of unreachable Versions. */
static int vindex_compact(index_compact *k)
{
	int more = 0, rc;

	if (*k->resume_n != 8) {
		memset(k->resume, 0, 8);
		*k->resume_n = 8;
	}
	rc = vindex_compact_step(k->txn, k->st, k->dom, k->dead, k->nbits, k->resume,
				 (unsigned)(k->budget / VINDEX_BLOCK_MAX + 1), &k->res->vindex_entries,
				 &more);
	*k->done = !more;
	return rc;
}

/* The Versions' vectors are written by the commit; the index catches up in the background. */
const index_ops vector_index = {
	.name = "vector",
	.check = vindex_check,
	.compact = vindex_compact,
	.catch_up = vindex_maintain,
};
