/*
 * Erasure: removing content for good, from the current state and every
 * past Version on every branch, from every index, as a recorded revision.
 *
 * An erasure first plans, in one write transaction, the Versions it erases
 * (a Record's on every branch and its Links'; or every Version a revision
 * of a source or an actor wrote, with the later Versions that still carry a
 * value or title it wrote, by their lineage, and the Links of a Record left
 * with none) and writes its revision (type erase, on main: the eraser's
 * provenance, a digest over the vids, the vids under catalog dom 'R' rev)
 * and its progress (dom 'r'). Then, in bounded write transactions, each
 * resumable where the last one stopped:
 *
 *   1. every index's compaction pass (admin/compact.c's machinery) with the
 *      planned Versions as its dead ones: postings segments rewritten
 *      without them (document counts and lengths lowered), the vector
 *      index's blocks likewise;
 *   2. each index's forget (the lexicon's words no posting has any more),
 *      while the Versions can still be read;
 *   3. each Record or Link, all its planned Versions at once: the attribute,
 *      names and vector entries dropped (version_entries_drop, as
 *      compaction does), the Version rewritten as a stub (vrec_stub: identity,
 *      lineage revisions and the SHA-256 of the erased bytes), its keys or
 *      adjacency entries rewritten as tombstones marked erased (no title), its
 *      bit cleared in every live-set cell, the count cells of its Kind
 *      corrected wherever it was counted (and a count cell added where the
 *      count now changes at a revision that did not change it), and each
 *      surviving Version that followed an erased one given the attribute
 *      and names entries it relied on the erased one for;
 *   4. the compaction passes again (what the background indexed meanwhile),
 *      then the progress is removed.
 *
 * A crash leaves a state cairn check accepts (every step is one
 * transaction; indexes only lose entries no read sees, and stubs come with
 * their entries' rewrite), and the next cairn_erase completes it first.
 * Bytes stay in LMDB's free pages until cairn_vacuum (admin/vacuum.c).
 */
#include <stdlib.h>
#include <string.h>

#include "admin/admin.h"
#include "base/alloc.h"
#include "base/arena.h"
#include "base/err.h"
#include "base/hmap.h"
#include "base/json.h"
#include "base/text.h"
#include "version/index.h"
#include "version/version.h"

#define ERASE_BUDGET 2000  /* Versions (or index entries) a write transaction looks at */

enum { PH_INDEX = 1, PH_FORGET = 2, PH_STUB = 3, PH_AGAIN = 4 };

typedef struct erun {
	cairn_store *st;
	const char *domain;
	uint32_t dom;
	uint64_t rev;		/* the erase revision */
	uint64_t *vids;		/* what it erases, ascending */
	size_t n;
	uint8_t *dead;		/* a bit per vid */
	uint64_t nbits;
	int phase;
	size_t at;		/* PH_FORGET, PH_STUB: the next index into vids */
	cairn_erase_result *res;
	cairn_compact_result cres; /* what the shared machinery counts */
	/* A compaction pass's step state. */
	int pass;
	uint8_t resume[64];
	size_t resume_n;
	void *ix_state;
	int done, discard;
} erun;

void (*erase_step_hook)(void *ctx, int phase, long step);
void *erase_step_ctx;

static int is_dead(const erun *e, uint64_t vid)
{
	return vid < e->nbits && (e->dead[vid >> 3] >> (vid & 7)) & 1;
}

static int vids_add(uint64_t **v, size_t *n, size_t *cap, uint64_t vid)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 64;
		uint64_t *p = cr_reallocarray(*v, c, sizeof(*p));

		if (!p)
			return err_set(CAIRN_ENOMEM, "out of memory");
		*v = p;
		*cap = c;
	}
	(*v)[(*n)++] = vid;
	return 0;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* ------------------------------------------------------------- progress -- */

static void key_erasing(kbuf *k, uint32_t dom)
{
	kb_init(k);
	kb_be32(k, dom);
	kb_u8(k, CAT_ERASING);
}

/* dom 'r': be64 revision, u8 phase, be64 position. */
static int progress_put(MDB_txn *txn, erun *e)
{
	uint8_t b[17];
	kbuf k;

	be64_put(b, e->rev);
	b[8] = (uint8_t)e->phase;
	be64_put(b + 9, e->at);
	key_erasing(&k, e->dom);
	return db_put(txn, e->st, DB_CATALOG, k.b, k.n, b, sizeof(b), 0);
}

/* Load the erasure in progress of the Domain into e (e->rev 0: none). */
static int progress_load(MDB_txn *txn, erun *e)
{
	const uint8_t *p;
	counters ctr;
	MDB_val v;
	kbuf k;
	size_t n;
	int rc;

	key_erasing(&k, e->dom);
	rc = db_get(txn, e->st, DB_CATALOG, k.b, k.n, &v);
	if (rc == CAIRN_ENOTFOUND)
		return 0;
	if (rc)
		return rc;
	if (v.mv_size != 17)
		return err_set(CAIRN_ECORRUPT, "catalog: an erasure in progress of %zu bytes",
			       v.mv_size);
	e->rev = be64_get(v.mv_data);
	e->phase = ((const uint8_t *)v.mv_data)[8];
	e->at = (size_t)be64_get((const uint8_t *)v.mv_data + 9);
	if ((rc = erase_list_get(txn, e->st, e->dom, e->rev, &p, &n)) ||
	    (rc = counters_get(txn, e->st, e->dom, &ctr)))
		return rc;
	cr_free(e->vids);
	cr_free(e->dead);
	e->n = n;
	e->nbits = ctr.next_vid;
	e->vids = cr_reallocarray(NULL, n ? n : 1, sizeof(uint64_t));
	e->dead = cr_calloc(e->nbits / 8 + 1, 1);
	if (!e->vids || !e->dead)
		return err_set(CAIRN_ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		uint64_t vid = be64_get(p + 8 * i);

		e->vids[i] = vid;
		if (vid < e->nbits)
			e->dead[vid >> 3] |= (uint8_t)(1u << (vid & 7));
	}
	return 0;
}

/* The bitmap of the planned vids. */
static int dead_make(erun *e)
{
	e->nbits = e->n ? e->vids[e->n - 1] + 1 : 1;
	cr_free(e->dead);
	if (!(e->dead = cr_calloc(e->nbits / 8 + 1, 1)))
		return err_set(CAIRN_ENOMEM, "out of memory");
	for (size_t i = 0; i < e->n; i++)
		e->dead[e->vids[i] >> 3] |= (uint8_t)(1u << (e->vids[i] & 7));
	return 0;
}

/* ----------------------------------------------------------- planning -- */

typedef struct plan {
	dctx *d;
	uint64_t *vids;
	size_t n, cap;
	hmap seen;		/* vids planned */
	hmap recs;		/* Records (rid) that lost a Version */
} plan;

static int plan_add(plan *p, uint64_t vid)
{
	uint8_t k[8];
	int isnew;

	be64_put(k, vid);
	if (!hmap_put(&p->seen, k, 8, &isnew))
		return err_set(CAIRN_ENOMEM, "out of memory");
	return isnew ? vids_add(&p->vids, &p->n, &p->cap, vid) : 0;
}

/* The live (not tombstone) entries of an identity in db under prefix pre, each planned. */
static int plan_identity(plan *p, int db, const uint8_t *pre, size_t pn, size_t kn,
			 uint64_t *rid)
{
	MDB_cursor *cur;
	MDB_val k, v;
	int mrc, rc = 0;

	if ((mrc = mdb_cursor_open(p->d->txn, p->d->st->dbi[db], &cur)))
		return store_err(mrc, db_names[db]);
	k.mv_data = (void *)pre;
	k.mv_size = pn;
	for (mrc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); mrc == 0 && !rc;
	     mrc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		ventry en;

		if (k.mv_size < pn || memcmp(k.mv_data, pre, pn) != 0)
			break;
		if ((kn && k.mv_size != kn) ||
		    ventry_decode(v.mv_data, v.mv_size, db == DB_KEYS ? VE_KEYS : VE_ADJ, &en))
			continue;
		if (rid && db == DB_KEYS)
			*rid = en.rid;
		if (!(en.flags & EF_TOMBSTONE))
			rc = plan_add(p, ~be64_get((const uint8_t *)k.mv_data + k.mv_size - 8));
	}
	mdb_cursor_close(cur);
	return rc ? rc : mrc && mrc != MDB_NOTFOUND ? store_err(mrc, db_names[db]) : 0;
}

/* Every Link of Record rid, both ways: all their live Versions. */
static int plan_links(plan *p, uint64_t rid)
{
	kbuf k;
	int rc;

	key_rid(&k, p->d->dom, rid);
	if ((rc = plan_identity(p, DB_ADJ, k.b, k.n, 32, NULL)))
		return rc;
	return plan_identity(p, DB_ADJR, k.b, k.n, 32, NULL);
}

static int plan_record(plan *p, const cairn_erase_options *o)
{
	const kind_def *kd = schema_kind(p->d->s, o->kind);
	uint64_t rid = 0;
	size_t before = p->n;
	kbuf k;
	int rc;

	if (!kd)
		return err_set(CAIRN_EUNKNOWNKIND, "unknown Kind \"%s\"", o->kind);
	if (!o->key || !o->key_len || o->key_len > CAIRN_MAX_KEY)
		return err_set(CAIRN_EINVAL, "cairn_erase: a Record's key is 1 to %d bytes",
			       CAIRN_MAX_KEY);
	key_keys(&k, p->d->dom, kd->id, o->key, o->key_len);
	if ((rc = plan_identity(p, DB_KEYS, k.b, k.n, k.n + 8, &rid)))
		return rc;
	if (p->n == before)
		return err_set(CAIRN_ENOTFOUND, "%s:%.*s has no Version to erase on any branch",
			       o->kind, (int)o->key_len, o->key);
	return plan_links(p, rid);
}

/* Does the text match the target (its bytes exactly)? */
static int same(const char *a, size_t an, const char *b)
{
	return an == strlen(b) && memcmp(a, b, an) == 0;
}

/*
 * Every Version (of a Record or Link with content) that a revision of the
 * source or actor wrote, then every other whose lineage names one of those
 * revisions (it still carries what they wrote), then the Links of each
 * Record left without a Version.
 */
static int plan_provenance(plan *p, const cairn_erase_options *o)
{
	dctx *d = p->d;
	counters ctr;
	uint8_t *revs;
	MDB_cursor *cur;
	MDB_val k, v;
	uint8_t pre[4];
	int rc, mrc, any = 0;

	if ((rc = counters_get(d->txn, d->st, d->dom, &ctr)))
		return rc;
	if (!(revs = cr_calloc(ctr.next_rev / 8 + 1, 1)))
		return err_set(CAIRN_ENOMEM, "out of memory");
	for (uint64_t rev = 1; rev < ctr.next_rev && !rc; rev++) {
		kbuf kk;
		MDB_val rv;
		rrec r;

		key_u64(&kk, d->dom, rev);
		if (db_get(d->txn, d->st, DB_REVS, kk.b, kk.n, &rv) ||
		    rrec_decode(rv.mv_data, rv.mv_size, &r) || r.type != CAIRN_REV_DATA)
			continue;
		if (o->source ? !same(r.source, r.source_len, o->source)
			      : !same(r.actor, r.actor_len, o->actor))
			continue;
		revs[rev >> 3] |= (uint8_t)(1u << (rev & 7));
		any = 1;
	}
	if (!any) {
		cr_free(revs);
		return err_set(CAIRN_ENOTFOUND, "no revision of the Domain has the %s \"%s\"",
			       o->source ? "source" : "actor", o->source ? o->source : o->actor);
	}
	/* Versions in vid order: those of its revisions, and those carrying their values. */
	be32_put(pre, d->dom);
	if ((mrc = mdb_cursor_open(d->txn, d->st->dbi[DB_VERSIONS], &cur))) {
		cr_free(revs);
		return store_err(mrc, "versions");
	}
	k.mv_data = pre;
	k.mv_size = 4;
	for (mrc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); mrc == 0 && !rc;
	     mrc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		vrec ver;
		int hit;

		if (k.mv_size != 12 || memcmp(k.mv_data, pre, 4) != 0)
			break;
		if (vrec_decode(v.mv_data, v.mv_size, &ver) ||
		    (ver.type != V_REC && ver.type != V_LINK))
			continue;
		hit = ver.rev < ctr.next_rev && (revs[ver.rev >> 3] >> (ver.rev & 7)) & 1;
		if (!hit) {
			rdr lr;

			rd_init(&lr, ver.lineage, ver.lineage_len);
			for (uint32_t i = 0; i < ver.n_lineage && !hit && !lr.bad; i++) {
				uint64_t rev;

				(void)rd_varint(&lr);
				rev = rd_varint(&lr);
				hit = rev < ctr.next_rev && (revs[rev >> 3] >> (rev & 7)) & 1;
			}
		}
		if (!hit)
			continue;
		rc = plan_add(p, be64_get((const uint8_t *)k.mv_data + 4));
		if (!rc && ver.type == V_REC) {
			uint8_t rk[8];
			int isnew;

			be64_put(rk, ver.rid);
			if (!hmap_put(&p->recs, rk, 8, &isnew))
				rc = err_set(CAIRN_ENOMEM, "out of memory");
			else if (isnew) /* (the Kind and key, to look for what is left) */
				*hmap_get(&p->recs, rk, 8) = be64_get((const uint8_t *)k.mv_data + 4);
		}
	}
	mdb_cursor_close(cur);
	cr_free(revs);
	if (!rc && mrc && mrc != MDB_NOTFOUND)
		rc = store_err(mrc, "versions");
	/* A Record left with no live Version on any branch takes its Links with it. */
	for (size_t i = 0; i < p->recs.cap && !rc; i++) {
		const hmap_slot *s = &p->recs.slots[i];
		MDB_cursor *kc;
		vrec ver;
		kbuf kk;
		MDB_val kv, vv;
		int left = 0;

		if (!s->hash)
			continue;
		if ((rc = version_get(d, s->val, &ver)))
			break;
		key_keys(&kk, d->dom, ver.kr, ver.key, ver.key_len);
		if ((mrc = mdb_cursor_open(d->txn, d->st->dbi[DB_KEYS], &kc))) {
			rc = store_err(mrc, "keys");
			break;
		}
		kv.mv_data = kk.b;
		kv.mv_size = kk.n;
		for (mrc = mdb_cursor_get(kc, &kv, &vv, MDB_SET_RANGE); mrc == 0 && !left;
		     mrc = mdb_cursor_get(kc, &kv, &vv, MDB_NEXT)) {
			ventry en;
			uint8_t vk[8];

			if (kv.mv_size != kk.n + 8 || memcmp(kv.mv_data, kk.b, kk.n) != 0)
				break;
			be64_put(vk, ~be64_get((const uint8_t *)kv.mv_data + kk.n));
			left = !ventry_decode(vv.mv_data, vv.mv_size, VE_KEYS, &en) &&
			       !(en.flags & EF_TOMBSTONE) && !hmap_get(&p->seen, vk, 8);
		}
		mdb_cursor_close(kc);
		if (!left)
			rc = plan_links(p, ver.rid);
	}
	if (!rc && !p->n)
		rc = err_set(CAIRN_ENOTFOUND, "the revisions of the %s \"%s\" left nothing to erase",
			     o->source ? "source" : "actor", o->source ? o->source : o->actor);
	return rc;
}

/* How many Records and Links the vids are Versions of (stubs keep identity). */
static int count_idents(MDB_txn *txn, erun *e)
{
	hmap ids = HMAP_INIT;
	dctx d;
	int rc;

	if ((rc = dctx_open(&d, e->st, txn, e->domain, NULL)))
		return rc;
	e->res->records = e->res->links = 0;
	for (size_t i = 0; i < e->n && !rc; i++) {
		uint8_t k[21];
		vrec v;
		int isnew;

		if ((rc = version_get(&d, e->vids[i], &v)) == CAIRN_ENOTFOUND) {
			rc = 0; /* (cleared with a deleted branch since) */
			continue;
		}
		if (rc)
			break;
		if (vtype_rec(v.type)) {
			k[0] = 'r';
			be64_put(k + 1, v.rid);
			memset(k + 9, 0, 12);
		} else {
			k[0] = 'l';
			be64_put(k + 1, v.from_rid);
			be64_put(k + 9, v.to_rid);
			be32_put(k + 17, v.kr);
		}
		if (!hmap_put(&ids, k, sizeof(k), &isnew))
			rc = err_set(CAIRN_ENOMEM, "out of memory");
		else if (isnew && k[0] == 'r')
			e->res->records++;
		else if (isnew)
			e->res->links++;
	}
	hmap_release(&ids);
	dctx_close(&d);
	return rc;
}

struct plan_txn {
	erun *e;
	const cairn_erase_options *o;
};

static int plan_once(MDB_txn *txn, cairn_store *st, void *arg)
{
	struct plan_txn *a = arg;
	erun *e = a->e;
	plan p;
	dctx d;
	int rc;

	memset(&p, 0, sizeof(p));
	if ((rc = dctx_open(&d, st, txn, a->o->commit.domain, NULL)))
		return rc;
	p.d = &d;
	e->dom = d.dom;
	/* A Record's entries together: what keys segments hold goes into keys first. */
	if (!(rc = kseg_fold(txn, st, d.dom, NULL)))
		rc = a->o->kind ? plan_record(&p, a->o) : plan_provenance(&p, a->o);
	if (!rc) {
		qsort(p.vids, p.n, sizeof(*p.vids), u64_cmp);
		cr_free(e->vids);
		e->vids = p.vids;
		e->n = p.n;
		p.vids = NULL;
		e->res->versions = e->n;
		rc = count_idents(txn, e);
	}
	if (!rc && !a->o->dry_run) {
		cairn_commit_options co = a->o->commit;

		co.branch = NULL;
		rc = erase_revision_write(txn, st, &co, e->vids, e->n, &e->rev);
		e->phase = PH_INDEX;
		e->at = 0;
		if (!rc)
			rc = progress_put(txn, e);
	}
	cr_free(p.vids);
	hmap_release(&p.seen);
	hmap_release(&p.recs);
	dctx_close(&d);
	return rc ? rc : a->o->dry_run ? STORE_DISCARD : 0;
}

/* ------------------------------------------------------- index passes -- */

/* The index whose compaction pass is the n-th, or NULL past the last. */
static const index_ops *pass_index(int n)
{
	for (const index_ops *const *ix = index_registry; *ix; ix++)
		if ((*ix)->compact && n-- == 0)
			return *ix;
	return NULL;
}

/* One step of the current pass (PH_INDEX, PH_AGAIN); the next pass when it is done. */
static int step_index(MDB_txn *txn, erun *e)
{
	const index_ops *ops = pass_index(e->pass);
	index_compact k = {txn,	       e->st,	     e->dom,	  e->dead,    e->nbits, 0,
			   ERASE_BUDGET, e->resume, &e->resume_n, &e->ix_state, &e->cres,
			   &e->done,   &e->discard};

	if (!ops) {
		e->done = 1;
		return 0;
	}
	return ops->compact(&k);
}

/* ------------------------------------------------------------- forget -- */

static int step_forget(MDB_txn *txn, erun *e)
{
	dctx d;
	size_t looked = 0;
	int rc;

	if ((rc = dctx_open(&d, e->st, txn, e->domain, NULL)))
		return rc;
	while (e->at < e->n && looked < ERASE_BUDGET && !rc) {
		uint64_t vid = e->vids[e->at];
		arena a = ARENA_INIT;
		const jv *vals;
		vrec v;

		looked++;
		if (!(rc = version_get(&d, vid, &v)) && v.type == V_REC) {
			const kind_def *kd = schema_kind_id(d.s, v.kr);

			vals = jv_parse(&a, v.values, v.values_len, "stored values");
			for (const index_ops *const *ix = index_registry; *ix && !rc; ix++)
				if ((*ix)->forget)
					rc = (*ix)->forget(&d, kd, &v, vals, vid,
							   &e->res->lexicon_words);
		}
		if (rc == CAIRN_ENOTFOUND) /* (cleared with a deleted branch) */
			rc = 0;
		arena_release(&a);
		if (!rc)
			e->at++;
	}
	if (e->at >= e->n)
		e->done = 1;
	dctx_close(&d);
	return rc;
}

/* -------------------------------------------------------------- stubs -- */

/* One entry of an identity, newest first: what the view decides by. */
typedef struct ient {
	uint64_t vid;
	uint32_t branch;
	uint64_t rev;
	int tomb;		/* now */
	int erase;		/* becomes a stub (so a tombstone) */
} ient;

/* Is the identity visible to view v, before (after 0) or after (1) the erasure? */
static int ident_visible(const view *v, const ient *g, size_t n, int after)
{
	for (size_t i = 0; i < n; i++)
		if (view_sees(v, g[i].branch, g[i].rev))
			return !(g[i].tomb || (after && g[i].erase));
	return 0;
}

/* What the erasure takes from the count that view v sees at revision rev (1 or 0). */
static int count_diff(const view *v, uint64_t rev, const ient *g, size_t n)
{
	view at = *v;

	for (int l = 0; l < at.n; l++)
		if (at.lv[l].limit > rev)
			at.lv[l].limit = rev;
	return ident_visible(&at, g, n, 0) - ident_visible(&at, g, n, 1);
}

/* Clear vid in every live-set cell of its chunk, on every branch. */
static int live_clear(dctx *d, const uint32_t *br, size_t nbr, uint64_t vid)
{
	MDB_cursor *cur;
	int mrc, rc = 0;
	unsigned bit = (unsigned)(vid & ((1u << LIVE_CHUNK_BITS) - 1));

	if ((mrc = mdb_cursor_open(d->txn, d->st->dbi[DB_CELLS], &cur)))
		return store_err(mrc, "cells");
	for (size_t b = 0; b < nbr && !rc; b++) {
		MDB_val k, v;
		kbuf p;

		key_cell(&p, d->dom, CELL_LIVE, br[b], vid >> LIVE_CHUNK_BITS);
		k.mv_data = p.b;
		k.mv_size = p.n;
		for (mrc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); mrc == 0 && !rc;
		     mrc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
			uint8_t chunk[LIVE_CHUNK_BYTES], kk[32];
			size_t kn = k.mv_size;

			if (kn != p.n + 8 || memcmp(k.mv_data, p.b, p.n) != 0)
				break;
			if (v.mv_size != LIVE_CHUNK_BYTES ||
			    !((((const uint8_t *)v.mv_data)[bit >> 3] >> (bit & 7)) & 1))
				continue;
			memcpy(chunk, v.mv_data, LIVE_CHUNK_BYTES);
			chunk[bit >> 3] &= (uint8_t) ~(1u << (bit & 7));
			memcpy(kk, k.mv_data, kn);
			rc = db_put(d->txn, d->st, DB_CELLS, kk, kn, chunk, LIVE_CHUNK_BYTES, 0);
			if (!rc) { /* (the put moved the cursor's page: find the cell again) */
				k.mv_data = kk;
				k.mv_size = kn;
				mrc = mdb_cursor_get(cur, &k, &v, MDB_SET_KEY);
				if (mrc)
					rc = store_err(mrc, "cells");
			}
		}
		if (!rc && mrc && mrc != MDB_NOTFOUND)
			rc = store_err(mrc, "cells");
	}
	mdb_cursor_close(cur);
	return rc;
}

typedef struct cfix {
	kbuf key;
	uint64_t value;
} cfix;

/* Room for one more correction in *fx (n held, *cap allocated): 0 when out of memory. */
static int fix_room(cfix **fx, size_t n, size_t *cap)
{
	size_t c = *cap ? *cap * 2 : 8;
	cfix *x;

	if (n < *cap)
		return 1;
	if (!(x = cr_reallocarray(*fx, c, sizeof(*x))))
		return 0;
	*fx = x;
	*cap = c;
	return 1;
}

/*
 * The count cells of Kind kind on every live branch where the Record was
 * counted and no longer is: each one seen through its branch's view at its
 * revision is lowered, and where the Record's visibility now changes at a
 * revision of its own with no cell there, a cell is added.
 */
static int counts_fix(dctx *d, const uint32_t *br, size_t nbr, uint32_t kind, const ient *g,
		      size_t n)
{
	cfix *fx = NULL;
	size_t nfx = 0, cap = 0;
	int rc = 0;

	for (size_t b = 0; b < nbr && !rc; b++) {
		MDB_cursor *cur;
		MDB_val k, v;
		dctx vb;
		kbuf p;
		int mrc;

		if ((rc = dctx_branch(d, br[b], &vb))) {
			if (rc == CAIRN_ENOBRANCH || rc == CAIRN_ENOTFOUND)
				rc = 0;
			continue;
		}
		key_cell(&p, d->dom, CELL_COUNT, br[b], kind);
		if ((mrc = mdb_cursor_open(d->txn, d->st->dbi[DB_CELLS], &cur))) {
			dctx_close(&vb);
			rc = store_err(mrc, "cells");
			break;
		}
		/* New cells first, their values read before any cell changes. */
		for (size_t i = 0; i < n && !rc; i++) {
			int diff;
			MDB_val cv;
			kbuf ck;

			if (g[i].branch != br[b] || !view_sees(&vb.v, g[i].branch, g[i].rev))
				continue;
			/* A cell only where the correction changes: below, the older cell's holds. */
			diff = count_diff(&vb.v, g[i].rev, g, n);
			if (diff == count_diff(&vb.v, g[i].rev - 1, g, n))
				continue;
			ck = p;
			kb_be64(&ck, ~g[i].rev);
			if (db_get(d->txn, d->st, DB_CELLS, ck.b, ck.n, &cv) == 0)
				continue;
			{
				dctx vr = vb;
				uint64_t cnt = 0;

				vr.lcache = NULL;
				vr.lcache_n = 0;
				vr.kcur = NULL;
				vr.sref = NULL;
				dctx_at(&vr, g[i].rev);
				rc = count_get(&vr, kind, &cnt);
				if (rc == CAIRN_ENOTFOUND)
					rc = 0;
				if (rc)
					break;
				if (!fix_room(&fx, nfx, &cap)) {
					rc = err_set(CAIRN_ENOMEM, "out of memory");
					break;
				}
				fx[nfx].key = ck;
				fx[nfx++].value = (uint64_t)((int64_t)cnt - diff);
			}
		}
		/* The cells there are, each as its revision's view saw the Record. */
		k.mv_data = p.b;
		k.mv_size = p.n;
		for (mrc = rc ? MDB_NOTFOUND : mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
		     mrc == 0 && !rc; mrc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
			uint64_t rev;
			view at = vb.v;
			int diff;

			if (k.mv_size != p.n + 8 || memcmp(k.mv_data, p.b, p.n) != 0)
				break;
			rev = ~be64_get((const uint8_t *)k.mv_data + p.n);
			if (v.mv_size != 8)
				continue;
			for (int l = 0; l < at.n; l++)
				if (at.lv[l].limit > rev)
					at.lv[l].limit = rev;
			diff = ident_visible(&at, g, n, 0) - ident_visible(&at, g, n, 1);
			if (!diff)
				continue;
			if (!fix_room(&fx, nfx, &cap)) {
				rc = err_set(CAIRN_ENOMEM, "out of memory");
				break;
			}
			kb_init(&fx[nfx].key);
			kb_bytes(&fx[nfx].key, k.mv_data, k.mv_size);
			fx[nfx++].value = (uint64_t)((int64_t)be64_get(v.mv_data) - diff);
		}
		mdb_cursor_close(cur);
		dctx_close(&vb);
	}
	for (size_t i = 0; i < nfx && !rc; i++) {
		uint8_t b8[8];

		be64_put(b8, fx[i].value);
		rc = db_put(d->txn, d->st, DB_CELLS, fx[i].key.b, fx[i].key.n, b8, 8, 0);
	}
	cr_free(fx);
	return rc;
}

/* The entries of one identity (keys, or adj for a Link) under prefix pre, newest first. */
static int ident_entries(erun *e, dctx *d, int db, const uint8_t *pre, size_t pn, ient **g,
			 size_t *n, size_t *cap)
{
	MDB_cursor *cur;
	MDB_val k, v;
	int mrc, rc = 0;

	*n = 0;
	if ((mrc = mdb_cursor_open(d->txn, d->st->dbi[db], &cur)))
		return store_err(mrc, db_names[db]);
	k.mv_data = (void *)pre;
	k.mv_size = pn;
	for (mrc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); mrc == 0 && !rc;
	     mrc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		ventry en;
		ient *x;

		if (k.mv_size != pn + 8 || memcmp(k.mv_data, pre, pn) != 0)
			break;
		if (ventry_decode(v.mv_data, v.mv_size, db == DB_KEYS ? VE_KEYS : VE_ADJ, &en))
			continue;
		if (*n == *cap) {
			size_t c = *cap ? *cap * 2 : 16;

			if (!(x = cr_reallocarray(*g, c, sizeof(*x)))) {
				rc = err_set(CAIRN_ENOMEM, "out of memory");
				break;
			}
			*g = x;
			*cap = c;
		}
		x = &(*g)[(*n)++];
		x->vid = ~be64_get((const uint8_t *)k.mv_data + pn);
		x->branch = en.branch;
		x->rev = en.rev;
		x->tomb = (en.flags & EF_TOMBSTONE) != 0;
		x->erase = !x->tomb && is_dead(e, x->vid);
	}
	mdb_cursor_close(cur);
	return rc ? rc : mrc && mrc != MDB_NOTFOUND ? store_err(mrc, db_names[db]) : 0;
}

/* Rewrite an identity entry as an erased tombstone. */
static int entry_erase(dctx *d, int db, const uint8_t *pre, size_t pn, uint64_t vid, int what)
{
	uint8_t val[VENTRY_MAX];
	kbuf k;
	MDB_val v;
	ventry en;
	int rc;

	kb_init(&k);
	kb_bytes(&k, pre, pn);
	kb_be64(&k, ~vid);
	if ((rc = db_get(d->txn, d->st, db, k.b, k.n, &v)))
		return rc == CAIRN_ENOTFOUND ? 0 : rc;
	if ((rc = ventry_decode(v.mv_data, v.mv_size, what, &en)))
		return rc;
	en.flags = EF_TOMBSTONE | EF_ERASED;
	en.title = NULL;
	en.title_len = 0;
	/* (encoded before the put: the other end's key may point into v) */
	return db_put(d->txn, d->st, db, k.b, k.n, val, ventry_encode(val, &en, what), 0);
}

/* Version vid (decoded in v, bytes b[0..n-1]) becomes its stub. */
static int stub_write(erun *e, dctx *d, uint64_t vid, const vrec *v, const void *b, size_t n)
{
	buf s = BUF_INIT;
	kbuf k;
	int rc;

	vrec_stub(v, b, n, e->rev, &s);
	if (s.oom) {
		buf_release(&s);
		return err_set(CAIRN_ENOMEM, "out of memory");
	}
	key_u64(&k, d->dom, vid);
	rc = db_put(d->txn, d->st, DB_VERSIONS, k.b, k.n, s.p, s.len, 0);
	buf_release(&s);
	return rc;
}

/* A Version's bytes copied (a put in the same transaction may move them). */
static int version_copy(dctx *d, uint64_t vid, buf *b, vrec *v)
{
	MDB_val x;
	kbuf k;
	int rc;

	key_u64(&k, d->dom, vid);
	if ((rc = db_get(d->txn, d->st, DB_VERSIONS, k.b, k.n, &x)))
		return rc;
	buf_reset(b);
	buf_put(b, x.mv_data, x.mv_size);
	if (b->oom)
		return err_set(CAIRN_ENOMEM, "out of memory");
	return vrec_decode(b->p, b->len, v);
}

/* Every planned Version of the Record or Link that Version vid (decoded) is of. */
static int erase_identity(erun *e, dctx *d, const uint32_t *br, size_t nbr, const vrec *first,
			  size_t *looked)
{
	ient *g = NULL;
	size_t n = 0, cap = 0;
	buf bytes = BUF_INIT;
	kbuf pre;
	int rc, rec = vtype_rec(first->type);

	if (rec)
		key_keys(&pre, d->dom, first->kr, first->key, first->key_len);
	else
		key_adj(&pre, d->dom, first->from_rid, first->kr, first->to_rid);
	if ((rc = ident_entries(e, d, rec ? DB_KEYS : DB_ADJ, pre.b, pre.n, &g, &n, &cap)))
		goto out;
	if (rec && (rc = counts_fix(d, br, nbr, first->kr, g, n)))
		goto out;
	for (size_t i = 0; i < n && !rc; i++) {
		vrec v;

		if (!g[i].erase)
			continue;
		++*looked;
		if ((rc = version_copy(d, g[i].vid, &bytes, &v))) {
			if (rc == CAIRN_ENOTFOUND)
				rc = 0;
			continue;
		}
		if (v.type != V_REC && v.type != V_LINK)
			continue;
		if (rec) {
			rc = version_entries_drop(d->txn, d->st, d->s, d->dom, g[i].vid, &v, NULL,
						  &e->cres);
			if (!rc)
				rc = entry_erase(d, DB_KEYS, pre.b, pre.n, g[i].vid, VE_KEYS);
		} else {
			kbuf rp;

			key_adj(&rp, d->dom, v.to_rid, v.kr, v.from_rid);
			rc = entry_erase(d, DB_ADJ, pre.b, pre.n, g[i].vid, VE_ADJ);
			if (!rc)
				rc = entry_erase(d, DB_ADJR, rp.b, rp.n, g[i].vid, VE_ADJ);
		}
		if (!rc)
			rc = live_clear(d, br, nbr, g[i].vid);
		if (!rc)
			rc = stub_write(e, d, g[i].vid, &v, bytes.p, bytes.len);
	}
	/* A surviving Version that followed an erased one relied on its entries: its own now. */
	for (size_t i = 0; i < n && !rc && rec; i++) {
		arena a = ARENA_INIT;
		const kind_def *kd;
		const jv *vals;
		vrec v;

		if (g[i].erase || g[i].tomb || (rc = version_get(d, g[i].vid, &v)))
			continue;
		if (v.type != V_REC || !is_dead(e, v.prev) ||
		    !(kd = schema_kind_id(d->s, v.kr)) ||
		    !(vals = jv_parse(&a, v.values, v.values_len, "stored values"))) {
			arena_release(&a);
			continue;
		}
		rc = attr_entries_put(d, v.kr, v.key, v.key_len, vals, g[i].vid);
		for (const index_ops *const *ix = index_registry; *ix && !rc; ix++)
			if ((*ix)->add_record)
				rc = (*ix)->add_record(d, kd, &v, vals, g[i].vid);
		arena_release(&a);
	}
out:
	buf_release(&bytes);
	cr_free(g);
	return rc;
}

static int step_stub(MDB_txn *txn, erun *e)
{
	uint32_t *br = NULL;
	size_t nbr = 0, looked = 0;
	dctx d;
	int rc;

	if ((rc = dctx_open(&d, e->st, txn, e->domain, NULL)))
		return rc;
	if ((rc = kseg_fold(txn, e->st, e->dom, NULL)))
		goto out;
	{
		/* Every branch that has cells: the live ones and those being cleared. */
		uint32_t *ids;
		size_t nids;

		if ((rc = branch_ids(txn, e->st, e->dom, &ids, &nids)))
			goto out;
		br = ids;
		nbr = nids;
	}
	while (e->at < e->n && looked < ERASE_BUDGET && !rc) {
		vrec v;

		rc = version_get(&d, e->vids[e->at], &v);
		if (rc == CAIRN_ENOTFOUND) {
			rc = 0;
			e->at++;
			continue;
		}
		looked++;
		if (!rc && (v.type == V_REC || v.type == V_LINK))
			rc = erase_identity(e, &d, br, nbr, &v, &looked);
		if (!rc)
			e->at++;
	}
	if (e->at >= e->n)
		e->done = 1;
out:
	cr_free(br);
	dctx_close(&d);
	return rc;
}

/* -------------------------------------------------------------- steps -- */

struct step_txn {
	erun *e;
	int runs;
	/* What a step starts from, for a run again after the map grew. */
	int phase, pass, done;
	size_t at, resume_n;
	uint8_t resume[64];
	cairn_compact_result cres;
	cairn_erase_result res;
};

static int step_once(MDB_txn *txn, cairn_store *st, void *arg)
{
	struct step_txn *a = arg;
	erun *e = a->e;
	int rc = 0;

	(void)st;
	if (a->runs++ == 0) {
		a->phase = e->phase;
		a->pass = e->pass;
		a->at = e->at;
		a->resume_n = e->resume_n;
		memcpy(a->resume, e->resume, sizeof(a->resume));
		a->cres = e->cres;
		a->res = *e->res;
	} else {
		e->phase = a->phase;
		e->pass = a->pass;
		e->at = a->at;
		e->resume_n = a->resume_n;
		memcpy(e->resume, a->resume, sizeof(a->resume));
		e->cres = a->cres;
		*e->res = a->res;
	}
	e->done = 0;
	e->discard = 0;
	switch (e->phase) {
	case PH_INDEX:
	case PH_AGAIN:
		rc = step_index(txn, e);
		break;
	case PH_FORGET:
		rc = step_forget(txn, e);
		break;
	case PH_STUB:
		rc = step_stub(txn, e);
		break;
	default:
		return err_set(CAIRN_ECORRUPT, "an erasure in progress is in an unknown phase");
	}
	if (rc)
		return rc;
	if (e->discard) {
		e->cres = a->cres;
		return STORE_DISCARD;
	}
	if (e->done) { /* the next pass, or the next phase */
		const index_ops *ops = pass_index(e->pass);

		if ((e->phase == PH_INDEX || e->phase == PH_AGAIN) && ops) {
			if (ops->compact_release && e->ix_state)
				ops->compact_release(e->ix_state);
			e->ix_state = NULL;
			e->resume_n = 0;
			if (pass_index(++e->pass))
				return progress_put(txn, e);
		}
		e->pass = 0;
		e->resume_n = 0;
		e->at = 0;
		if (e->phase == PH_AGAIN) {
			kbuf k;

			key_erasing(&k, e->dom);
			e->phase = 0;
			rc = db_del(txn, e->st, DB_CATALOG, k.b, k.n);
			return rc == CAIRN_ENOTFOUND ? 0 : rc;
		}
		e->phase++;
	}
	return progress_put(txn, e);
}

/* Run an erasure in progress to its end. */
static int run_steps(erun *e)
{
	long steps = 0;
	int rc = 0;

	while (e->phase && !rc) {
		struct step_txn a;

		memset(&a, 0, sizeof(a));
		a.e = e;
		rc = store_write(e->st, step_once, &a);
		e->res->transactions += !rc;
		if (!rc && erase_step_hook)
			erase_step_hook(erase_step_ctx, e->phase, ++steps);
	}
	if (e->ix_state && pass_index(e->pass) && pass_index(e->pass)->compact_release)
		pass_index(e->pass)->compact_release(e->ix_state);
	e->ix_state = NULL;
	return rc;
}

static int load_once(MDB_txn *txn, cairn_store *st, void *arg)
{
	erun *e = arg;
	dctx d;
	int rc;

	(void)st;
	if ((rc = dctx_open(&d, e->st, txn, e->domain, NULL)))
		return rc;
	e->dom = d.dom;
	dctx_close(&d);
	e->rev = 0;
	e->phase = 0;
	if ((rc = progress_load(txn, e)))
		return rc;
	if (e->rev && (rc = count_idents(txn, e)))
		return rc;
	return STORE_DISCARD;
}

static void result_finish(erun *e, uint64_t t0)
{
	cairn_erase_result *r = e->res;

	r->revision = e->rev;
	r->attr_entries = e->cres.attr_entries;
	r->postings = e->cres.postings;
	r->vectors = e->cres.vectors;
	r->vindex_entries = e->cres.vindex_entries;
	r->index_entries = r->attr_entries + r->postings + r->vectors + r->vindex_entries +
			   r->lexicon_words;
	r->seconds = (double)(time_mono_ns() - t0) / 1e9;
}

/* Complete the Domain's erasure in progress, if any: 1 when there was one. */
static int resume_pending(cairn_store *st, const char *domain, cairn_erase_result *res)
{
	erun e;
	int rc;

	memset(&e, 0, sizeof(e));
	e.st = st;
	e.domain = domain;
	e.res = res;
	if ((rc = store_write(st, load_once, &e)) || !e.rev)
		goto out;
	res->versions = e.n;
	e.pass = 0;
	rc = run_steps(&e);
	if (!rc) {
		res->resumed = 1;
		result_finish(&e, time_mono_ns());
		rc = 1;
	}
out:
	cr_free(e.vids);
	cr_free(e.dead);
	return rc;
}

int cairn_erase_resume(cairn_store *st, const char *domain, cairn_erase_result *out)
{
	uint64_t t0 = time_mono_ns();
	cairn_erase_result res;
	int rc;

	if (!st || !domain)
		return err_set(CAIRN_EINVAL, "cairn_erase_resume: NULL argument");
	if (st->flags & CAIRN_OPEN_RDONLY)
		return err_set(CAIRN_EREADONLY, "the store is open read-only");
	memset(&res, 0, sizeof(res));
	rc = resume_pending(st, domain, &res);
	res.seconds = (double)(time_mono_ns() - t0) / 1e9;
	if (out)
		*out = res;
	return rc < 0 ? rc : 0;
}

int cairn_erase(cairn_store *st, const cairn_erase_options *o, cairn_erase_result *out)
{
	uint64_t t0 = time_mono_ns();
	cairn_erase_result res, prior;
	struct plan_txn pa;
	erun e;
	int rc, targets;

	if (!st || !o)
		return err_set(CAIRN_EINVAL, "cairn_erase: NULL argument");
	if ((rc = err_reserved(o->reserved, "cairn_erase", "cairn_erase_options")) ||
	    (rc = err_reserved(o->commit.reserved, "cairn_erase", "cairn_commit_options")))
		return rc;
	if (!o->commit.domain)
		return err_set(CAIRN_EINVAL, "cairn_erase: no Domain");
	if (o->commit.branch && strcmp(o->commit.branch, "main") != 0)
		return err_set(CAIRN_EINVAL, "cairn_erase: an erasure is of every branch: give no "
					     "branch (it is recorded on main)");
	targets = !!o->kind + !!o->source + !!o->actor;
	if (targets != 1)
		return err_set(CAIRN_EINVAL, "cairn_erase: give one target: a Record (Kind and "
					     "key), a source or an actor (%d given)",
			       targets);
	if ((o->source && !*o->source) || (o->actor && !*o->actor))
		return err_set(CAIRN_EINVAL, "cairn_erase: the %s to erase is empty",
			       o->source ? "source" : "actor");
	if (!o->commit.prov.actor || !*o->commit.prov.actor)
		return err_set(CAIRN_EINVAL, "cairn_erase: who erases (the commit's actor) is "
					     "required");
	if (!o->commit.prov.message || !*o->commit.prov.message)
		return err_set(CAIRN_EINVAL, "cairn_erase: why (the commit's message) is required");
	if ((rc = commit_prov_check(&o->commit.prov)))
		return rc;
	if (st->flags & CAIRN_OPEN_RDONLY)
		return err_set(CAIRN_EREADONLY, "the store is open read-only");
	memset(&res, 0, sizeof(res));
	memset(&prior, 0, sizeof(prior));
	/* An erasure a crash interrupted is completed first. */
	if (!o->dry_run && (rc = resume_pending(st, o->commit.domain, &prior)) < 0)
		return rc;
	memset(&e, 0, sizeof(e));
	e.st = st;
	e.domain = o->commit.domain;
	e.res = &res;
	pa = (struct plan_txn){&e, o};
	rc = store_write(st, plan_once, &pa);
	if (!rc && !o->dry_run) {
		res.transactions = 1;
		if (!(rc = dead_make(&e)))
			rc = run_steps(&e);
	}
	result_finish(&e, t0);
	res.resumed = prior.resumed;
	res.transactions += prior.transactions;
	if (o->dry_run)
		res.revision = 0;
	cr_free(e.vids);
	cr_free(e.dead);
	if (out)
		*out = res;
	return rc;
}
