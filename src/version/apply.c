/*
 * Applying a validated commit: the planned Versions, their keys, attribute
 * and adjacency entries in one sorted write, the secondary indexes through
 * the index interface, the live-set chunks and counts, and the Revision.
 */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/err.h"
#include "base/hmap.h"
#include "base/json.h"
#include "base/text.h"
#include "model/changeset.h"
#include "version/commit_int.h"

/* -------------------------------------------------------------- apply -- */

struct live_chunk {
	uint64_t id;
	uint8_t bits[LIVE_CHUNK_BYTES];
};

static int live_chunk(cctx *c, hmap *m, struct live_chunk **chunks, size_t *n, size_t *cap,
		      uint64_t vid, struct live_chunk **out)
{
	uint64_t id = vid >> LIVE_CHUNK_BITS, *slot;
	uint8_t mk[8];
	int isnew, rc;

	be64_put(mk, id);
	slot = hmap_put(m, mk, 8, &isnew);
	if (!slot)
		return err_set(CAIRN_ENOMEM, "out of memory");
	if (!isnew) {
		*out = &(*chunks)[*slot - 1];
		return 0;
	}
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 8;
		struct live_chunk *p = cr_reallocarray(*chunks, nc, sizeof(*p));

		if (!p)
			return err_set(CAIRN_ENOMEM, "out of memory");
		*chunks = p;
		*cap = nc;
	}
	*out = &(*chunks)[*n];
	(*out)->id = id;
	{
		const uint8_t *val;
		size_t len;

		rc = cell_get(&c->d, CELL_LIVE, id, &val, &len);
		if (rc == CAIRN_ENOTFOUND) {
			memset((*out)->bits, 0, LIVE_CHUNK_BYTES);
		} else if (rc) {
			return rc;
		} else if (len != LIVE_CHUNK_BYTES) {
			return err_set(CAIRN_ECORRUPT, "live-set chunk of %zu bytes", len);
		} else {
			memcpy((*out)->bits, val, LIVE_CHUNK_BYTES);
		}
	}
	*slot = ++*n;
	return 0;
}

static int live_set(cctx *c, hmap *m, struct live_chunk **ch, size_t *n, size_t *cap,
		    uint64_t vid, int on)
{
	struct live_chunk *k;
	unsigned bit = (unsigned)(vid & ((1u << LIVE_CHUNK_BITS) - 1));
	int rc = live_chunk(c, m, ch, n, cap, vid, &k);

	if (rc)
		return rc;
	if (on)
		k->bits[bit >> 3] |= (uint8_t)(1u << (bit & 7));
	else
		k->bits[bit >> 3] &= (uint8_t) ~(1u << (bit & 7));
	return 0;
}

static int put_entry(cctx *c, int db, const kbuf *p, uint64_t vid, const void *val, size_t n)
{
	kbuf k = *p;

	kb_be64(&k, ~vid);
	if (k.over)
		return err_set(CAIRN_ELIMIT, "index key too long");
	return wl_add(&c->wl, db, k.b, k.n, val, n);
}

/*
 * The attribute entries of a Record Version: for the values its
 * predecessor (prev; NULL: none) did not have, so that an entry names the
 * Version that brought the value and a change of other values writes none
 * (docs/storage.md, "Attribute index").
 */
static int write_attr_entries(cctx *c, uint32_t kind, const char *rkey, size_t rkey_len,
			      const jv *values, const jv *prev, uint64_t vid)
{
	const kind_def *k = schema_kind_id(c->d.s, kind);

	for (size_t i = 0; i < k->n_attrs; i++) {
		const attr_def *a = &k->attrs[i];
		const jv *v = jv_get(values, a->name);
		size_t n = 1;

		if (!(a->flags & AF_INDEXED) || !v)
			continue;
		if (a->type == AT_STRINGS)
			n = v->type == JV_ARRAY ? v->len : 0;
		for (size_t j = 0; j < n; j++) {
			kbuf key;
			attr_entry e;
			int rc = attr_key(&key, c->d.dom, kind, a, a->type == AT_STRINGS ? &v->u.items[j] : v,
					  rkey, rkey_len, vid);

			if (rc == CAIRN_ETYPE) /* validation keeps such values out */
				continue;
			if (rc)
				return rc;
			if (prev && !attr_entry_parse(a, key.b, key.n, &e) &&
			    attr_has_encoded(a, prev, e.value, e.value_len))
				continue; /* kept: the predecessor's entry (or its own) stands */
			if ((rc = wl_add(&c->wl, DB_ATTR, key.b, key.n, "", 0)))
				return rc;
		}
	}
	return 0;
}

/* ------------------------------------------------------ the indexes -- */

/*
 * The secondary indexes (version/index.h) take their part of a commit
 * through index_registry: put for each Record Version, on the writer's
 * thread while it writes the rest or, for an index that asks for it and a
 * large commit, on a thread of its own that reads only what validation
 * planned (the encoded Versions, the parsed values, the schema), which
 * nothing changes until the commit ends.
 */
struct ix_part {
	const index_ops *ops;
	index_commit ic;
	cctx *c;
	pthread_t th;
	int running;	/* th runs put and prepare */
	int rc;		/* the thread's error, and its message */
	char msg[256];
};

static size_t ix_count(void)
{
	size_t n = 0;

	while (index_registry[n])
		n++;
	return n;
}

static void ix_rec(cctx *c, const pop *o, const vrec *v, index_rec *r)
{
	r->k = schema_kind_id(c->d.s, c->rs[o->st].kind);
	r->v = v;
	r->vid = o->vid;
	r->values = o->values;
	r->prev_values = o->prev_values;
	r->renamed = o->renamed;
}

/* Every Record Version of the commit to one index, then its prepare. */
static int ix_put_all(cctx *c, struct ix_part *p)
{
	int rc = 0;

	CR_ASSERT(p->ops->put);
	for (size_t i = 0; i < c->n_ops && !rc; i++) {
		const pop *o = &c->ops[i];
		index_rec r;
		vrec v;

		if (o->type != V_REC)
			continue;
		if (vrec_decode(c->arena.p + o->enc_off, o->enc_len, &v))
			return err_set(CAIRN_ECORRUPT, "a Version being written does not decode");
		ix_rec(c, o, &v, &r);
		rc = p->ops->put(&p->ic, &r);
	}
	return rc || !p->ops->prepare ? rc : p->ops->prepare(&p->ic);
}

static void *ix_thread(void *arg)
{
	struct ix_part *p = arg;

	p->rc = ix_put_all(p->c, p);
	if (p->rc)
		snprintf(p->msg, sizeof(p->msg), "%s", cairn_errmsg());
	return NULL;
}

/* Begin every index's part of the commit, starting the threads of those that take one. */
static int ix_begin(cctx *c, size_t n_recs)
{
	size_t n = ix_count();
	int rc = 0;

	if (!(c->ix = cr_calloc(n + 1, sizeof(*c->ix))))
		return err_set(CAIRN_ENOMEM, "out of memory");
	for (size_t i = 0; i < n && !rc; i++) {
		struct ix_part *p = &c->ix[i];

		p->ops = index_registry[i];
		p->c = c;
		p->ic.d = &c->d;
		p->ic.wl = &c->wl;
		p->ic.n_recs = n_recs;
		p->ic.async = p->ops->async_min && n_recs >= p->ops->async_min;
		if (p->ops->begin)
			rc = p->ops->begin(&p->ic);
		/* Without a thread, the writer's own thread does it. */
		if (!rc && p->ic.async && p->ops->put)
			p->running = pthread_create(&p->th, NULL, ix_thread, p) == 0;
		p->ic.async = p->running;
	}
	return rc;
}

/* Record Version o (v: decoded) to the indexes that take it on the writer's thread. */
static int ix_put(cctx *c, const pop *o, const vrec *v)
{
	index_rec r;
	int rc = 0;

	ix_rec(c, o, v, &r);
	for (struct ix_part *p = c->ix; p->ops && !rc; p++)
		if (!p->ic.async && p->ops->put)
			rc = p->ops->put(&p->ic, &r);
	return rc;
}

/* Wait for the indexes' threads; with rc 0, the prepare and finish of every index. */
static int ix_end(cctx *c, int rc)
{
	if (!c->ix)
		return rc;
	for (struct ix_part *p = c->ix; p->ops; p++) {
		if (!p->running)
			continue;
		pthread_join(p->th, NULL);
		p->running = 0;
		if (!rc && p->rc)
			rc = err_set(p->rc, "%s", p->msg);
	}
	for (struct ix_part *p = c->ix; p->ops && !rc; p++)
		if (!p->ic.async && p->ops->prepare)
			rc = p->ops->prepare(&p->ic);
	for (struct ix_part *p = c->ix; p->ops && !rc; p++)
		if (p->ops->finish)
			rc = p->ops->finish(&p->ic);
	return rc;
}

void commit_ix_release(cctx *c)
{
	if (!c->ix)
		return;
	for (struct ix_part *p = c->ix; p->ops; p++)
		CR_ASSERT(!p->running); /* ix_end joined every thread */
	for (struct ix_part *p = c->ix; p->ops; p++)
		if (p->ops->release)
			p->ops->release(&p->ic);
	cr_free(c->ix);
	c->ix = NULL;
}

int attr_entries_put(dctx *d, uint32_t kind, const char *key, size_t key_len, const jv *values,
		     uint64_t vid)
{
	cctx c;
	int rc;

	memset(&c, 0, sizeof(c));
	c.d = *d;
	rc = write_attr_entries(&c, kind, key, key_len, values, NULL, vid);
	if (!rc)
		rc = wl_flush(&c.wl, d->txn, d->st);
	wl_release(&c.wl);
	buf_release(&c.tmp);
	return rc;
}

static int apply_op(cctx *c, pop *o, sha256_ctx *h)
{
	uint8_t val[VENTRY_MAX];
	ventry e = {0};
	size_t n;
	kbuf k;
	int rc;

	rrec_digest_version(h, o->vid, c->arena.p + o->enc_off, o->enc_len);
	key_u64(&k, c->d.dom, o->vid);
	rc = wl_add(&c->wl, DB_VERSIONS, k.b, k.n, c->arena.p + o->enc_off, o->enc_len);
	if (rc)
		return rc;
	if (o->type == V_REC || o->type == V_REC_DEL) {
		rstate *r = &c->rs[o->st];
		vrec v;

		if (o->type == V_REC && vrec_decode(c->arena.p + o->enc_off, o->enc_len, &v))
			return err_set(CAIRN_ECORRUPT, "a Version being written does not decode");
		e.flags = o->type == V_REC_DEL ? EF_TOMBSTONE : 0;
		e.branch = c->d.br.id;
		e.rev = c->rev;
		e.rid = r->rid;
		if (o->type == V_REC && v.title_len <= KEYS_TITLE_MAX) {
			e.flags |= EF_TITLE;
			e.title = v.title;
			e.title_len = v.title_len;
			e.dim = v.dim;
		}
		n = ventry_encode(val, &e, VE_KEYS);
		key_keys(&k, c->d.dom, r->kind, r->key, r->key_len);
		if (c->kseg && r->seen) { /* the Record's entries are in keys already */
			kbuf sk;

			kseg_bloom_add(c->kbloom, c->kblocks, kseg_hash(k.b, k.n));
			c->kentries++;
			kseg_key(&sk, c->d.dom, c->kseg, k.b, k.n);
			rc = put_entry(c, DB_KSEG, &sk, o->vid, val, n);
		} else {
			rc = put_entry(c, DB_KEYS, &k, o->vid, val, n);
		}
		if (rc)
			return rc;
		if (o->type == V_REC && o->values &&
		    (rc = write_attr_entries(c, r->kind, r->key, r->key_len, o->values,
					     o->prev_values, o->vid)))
			return rc;
		if (o->type == V_REC && (rc = ix_put(c, o, &v)))
			return rc;
		if (o->vec || o->vec_from) {
			kbuf vk;
			MDB_val src;
			const void *data = o->vec;

			if (o->vec_from) {
				key_u64(&vk, c->d.dom, o->vec_from);
				rc = db_get(c->d.txn, c->d.st, DB_VECTORS, vk.b, vk.n, &src);
				if (rc)
					return rc == CAIRN_ENOTFOUND
						       ? err_set(CAIRN_ECORRUPT, "vector missing")
						       : rc;
				data = src.mv_data;
			}
			key_u64(&vk, c->d.dom, o->vid);
			rc = wl_add(&c->wl, DB_VECTORS, vk.b, vk.n, data,
				    (size_t)o->dim * sizeof(float));
			if (rc)
				return rc;
			/* It looks once this commit is done (it waits for the writer). */
			if (!c->vec_woke) {
				c->vec_woke = 1;
				store_wake(c->d.st);
			}
		}
	} else {
		lstate *l = &c->ls[o->st];
		rstate *f = &c->rs[l->from], *t = &c->rs[l->to];

		e.flags = o->type == V_LINK_DEL ? EF_TOMBSTONE : (o->link_values ? EF_VALUES : 0);
		e.branch = c->d.br.id;
		e.rev = c->rev;
		e.kind = t->kind;
		e.key = t->key;
		e.key_len = t->key_len;
		n = ventry_encode(val, &e, VE_ADJ);
		key_adj(&k, c->d.dom, f->rid, l->rel, t->rid);
		if ((rc = put_entry(c, DB_ADJ, &k, o->vid, val, n)))
			return rc;
		e.kind = f->kind;
		e.key = f->key;
		e.key_len = f->key_len;
		n = ventry_encode(val, &e, VE_ADJ);
		key_adj(&k, c->d.dom, t->rid, l->rel, f->rid);
		if ((rc = put_entry(c, DB_ADJR, &k, o->vid, val, n)))
			return rc;
	}
	return 0;
}

int commit_write_revision(cctx *c, int type, const cairn_provenance *p, const uint8_t digest[32],
			  uint64_t first_vid, uint64_t n_versions, cairn_commit_result *out)
{
	rrec r = {0};
	buf b = BUF_INIT;
	kbuf k;
	int64_t now = time_now_ms();
	int rc;

	r.format = RREC_FORMAT;
	r.type = type;
	r.branch = c->d.br.id;
	r.parent = branch_head(&c->d.br);
	r.parent2 = c->x ? c->x->parent2 : 0;
	r.time_ms = now > c->ctr.last_time_ms ? now : c->ctr.last_time_ms;
	r.client_time_ms = p->client_time_ms;
	r.confidence = p->has_confidence ? p->confidence : 1.0;
	r.actor = p->actor ? p->actor : "";
	r.actor_len = strlen(r.actor);
	r.source = p->source ? p->source : "";
	r.source_len = strlen(r.source);
	r.message = p->message ? p->message : "";
	r.message_len = strlen(r.message);
	r.trace = p->trace_id ? p->trace_id : "";
	r.trace_len = strlen(r.trace);
	r.first_vid = first_vid;
	r.n_versions = n_versions;
	memcpy(r.digest, digest, 32);
	if (r.parent) {
		MDB_val pv;
		rrec pr;

		key_u64(&k, c->d.dom, r.parent);
		rc = db_get(c->d.txn, c->d.st, DB_REVS, k.b, k.n, &pv);
		if (rc)
			return rc == CAIRN_ENOTFOUND ? err_set(CAIRN_ECORRUPT, "parent revision missing")
						     : rc;
		if ((rc = rrec_decode(pv.mv_data, pv.mv_size, &pr)))
			return rc;
		memcpy(r.parent_hash, pr.hash, 32);
	}
	rrec_hash(c->d.dom, c->rev, &r, r.hash);
	rrec_encode(&r, &b);
	if (b.oom) {
		buf_release(&b);
		return err_set(CAIRN_ENOMEM, "out of memory");
	}
	key_u64(&k, c->d.dom, c->rev);
	rc = db_put(c->d.txn, c->d.st, DB_REVS, k.b, k.n, b.p, b.len, MDB_NOOVERWRITE);
	buf_release(&b);
	if (rc)
		return rc;
	c->d.br.head_rev = c->rev;
	memcpy(c->d.br.head_hash, r.hash, 32);
	{
		char name[CAIRN_MAX_BRANCH + 1];

		snprintf(name, sizeof(name), "%s", c->d.br.name);
		rc = branch_put(c->d.txn, c->d.st, c->d.dom, &c->d.br, name);
		if (rc)
			return rc;
	}
	c->ctr.next_rev = c->rev + 1;
	c->ctr.last_time_ms = r.time_ms;
	if ((rc = counters_put(c->d.txn, c->d.st, c->d.dom, &c->ctr)))
		return rc;
	if (out) {
		memset(out, 0, sizeof(*out));
		out->revision = c->rev;
		memcpy(out->hash, r.hash, 32);
		out->changes = n_versions;
	}
	return 0;
}

static int put_cell(cctx *c, int type, uint64_t id, const void *val, size_t n)
{
	kbuf k;

	key_cell(&k, c->d.dom, type, c->d.br.id, id);
	kb_be64(&k, ~c->rev);
	return db_put(c->d.txn, c->d.st, DB_CELLS, k.b, k.n, val, n, 0);
}

/*
 * A commit with st->kseg_min keys entries or more of Records its branch had
 * writes them as a keys segment (version/kseg.c): kseg_begin numbers it and
 * sizes its filter, apply_op fills both, kseg_end queues the descriptor.
 * The one that would bring the Domain to the fold threshold writes them to
 * keys instead, and folds the segments there are (apply).
 */
static int kseg_begin(cctx *c)
{
	uint64_t had_entries;
	unsigned had;
	size_t n = 0;
	int rc;

	for (size_t i = 0; i < c->n_ops; i++)
		if ((c->ops[i].type == V_REC || c->ops[i].type == V_REC_DEL) &&
		    c->rs[c->ops[i].st].seen)
			n++;
	if (n == 0 || n < c->d.st->kseg_min || n > KSEG_SEG_MAX)
		return 0; /* few, or so many that they share keys pages: to keys */
	if ((rc = kseg_next(&c->d, &c->kseg, &had, &had_entries)))
		return rc;
	if (had + 1 >= c->d.st->kseg_fold || had_entries + n >= c->d.st->kseg_fold_entries) {
		c->kseg = 0;
		c->kfold = 1;
		return 0;
	}
	c->kblocks = kseg_blocks(n);
	if (!(c->kbloom = cr_calloc(c->kblocks, 64)))
		return err_set(CAIRN_ENOMEM, "out of memory");
	return 0;
}

static int kseg_end(cctx *c)
{
	uint8_t *d;
	kbuf k;
	int rc;

	if (!c->kseg)
		return 0;
	if (!(d = cr_malloc(8 + (size_t)c->kblocks * 64)))
		return err_set(CAIRN_ENOMEM, "out of memory");
	be32_put(d, c->kentries);
	be32_put(d + 4, c->kblocks);
	memcpy(d + 8, c->kbloom, (size_t)c->kblocks * 64);
	kseg_desc_key(&k, c->d.dom, c->kseg);
	rc = wl_add(&c->wl, DB_KSEG, k.b, k.n, d, 8 + (size_t)c->kblocks * 64);
	cr_free(d);
	return rc;
}

int commit_apply(cctx *c, const cairn_provenance *prov, cairn_commit_result *out)
{
	hmap lm = HMAP_INIT;
	struct live_chunk *chunks = NULL;
	size_t n_chunks = 0, cap_chunks = 0;
	int64_t *deltas = NULL;
	sha256_ctx h;
	uint8_t digest[32];
	uint64_t first_vid = c->n_ops ? c->ops[0].vid : c->ctr.next_vid;
	size_t n_recs = 0;
	int rc = 0;

	deltas = cr_calloc(c->d.s->n_kinds + 1, sizeof(int64_t));
	if (!deltas)
		return err_set(CAIRN_ENOMEM, "out of memory");
	if (sha256_init(&h)) {
		cr_free(deltas);
		return err_set(CAIRN_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < c->n_ops; i++)
		n_recs += c->ops[i].type == V_REC;
	if ((rc = kseg_begin(c))) {
		cr_free(deltas);
		return rc;
	}
	rc = ix_begin(c, n_recs);
	for (size_t i = 0; i < c->n_ops && !rc; i++) {
		pop *o = &c->ops[i];

		rc = apply_op(c, o, &h);
		if (!rc && o->prev && o->prev_live)
			rc = live_set(c, &lm, &chunks, &n_chunks, &cap_chunks, o->prev, 0);
		if (!rc && (o->type == V_REC || o->type == V_LINK))
			rc = live_set(c, &lm, &chunks, &n_chunks, &cap_chunks, o->vid, 1);
		if (o->type == V_REC || o->type == V_REC_DEL)
			deltas[c->rs[o->st].kind] += o->count_delta;
	}
	if (!rc)
		rc = kseg_end(c);
	if (!rc)
		rc = wl_flush(&c->wl, c->d.txn, c->d.st);
	if (!rc && c->kfold)
		rc = kseg_fold(c->d.txn, c->d.st, c->d.dom, NULL);
	c->d.kseg_loaded = 0; /* what a later commit of the transaction reads is new */
	rc = ix_end(c, rc);
	commit_ix_release(c);
	for (size_t i = 0; i < n_chunks && !rc; i++)
		rc = put_cell(c, CELL_LIVE, chunks[i].id, chunks[i].bits, LIVE_CHUNK_BYTES);
	for (uint32_t kd = 1; kd <= c->d.s->n_kinds && !rc; kd++) {
		uint64_t n;
		uint8_t b[8];

		if (!deltas[kd])
			continue;
		rc = count_get(&c->d, kd, &n);
		if (rc)
			break;
		be64_put(b, (uint64_t)((int64_t)n + deltas[kd]));
		rc = put_cell(c, CELL_COUNT, kd, b, 8);
	}
	if (!rc && c->vec_dim_new) {
		uint8_t b[4 + VEC_MODEL_MAX];
		size_t ml = strlen(c->vec_model);
		kbuf k;

		be32_put(b, c->vec_dim);
		memcpy(b + 4, c->vec_model, ml);
		kb_init(&k);
		kb_be32(&k, c->d.dom);
		kb_u8(&k, CAT_VMODEL);
		rc = db_put(c->d.txn, c->d.st, DB_CATALOG, k.b, k.n, b, 4 + ml, 0);
	}
	sha256_final(&h, digest);
	if (!rc)
		rc = commit_write_revision(c, CAIRN_REV_DATA, prov, digest, first_vid, c->n_ops, out);
	hmap_release(&lm);
	cr_free(chunks);
	cr_free(deltas);
	return rc;
}
