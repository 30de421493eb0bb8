/*
 * Compaction: dropping the index entries no read can see any more.
 *
 * Indexes only ever gain entries, so every Version a commit replaces keeps
 * its attribute, names, vector, postings and adjacency entries, and every
 * live-set chunk a commit rewrites keeps its old cells: time travel reads
 * them. Compaction bounds time travel at a horizon revision H of the
 * Domain: afterwards a read sees any branch at any revision from H on, and
 * at its head whenever that is (catalog dom 'K' holds H; cairn_txn_begin
 * refuses older revisions with CAIRN_ECOMPACTED).
 *
 * A Version (or a cell) serves the reads of its branch from the revision
 * that wrote it up to the one that wrote the next Version of the same
 * Record or Link (the next cell of the same chunk) on that branch: a window
 * [lo, hi). Reads of that branch happen at revisions from H on, and at the
 * limits other branches' views have of it: a branch's fork (its parent as of
 * then, and so on up) and the heads a merge between two branches recorded,
 * which the next merge reads as its base. So a Version or cell is needed
 * when hi > H, or when one of those limits falls in [lo, hi); the others
 * lose their index entries (Records: vector, postings, vector index, and
 * the attribute and names entries of the values and names their successor
 * no longer has, as the successor relies on the others; Links: adjacency
 * both ways) and the cells go. Versions, revisions and keys entries stay:
 * history, lineage, provenance and the hash chain are whole.
 *
 * The work is done in bounded write transactions (COMPACT_BUDGET entries
 * looked at each), the horizon first: a crash leaves some entries of
 * unreachable Versions, harmless, which the next run removes.
 */
#include <stdlib.h>
#include <string.h>

#include "admin/admin.h"
#include "base/alloc.h"
#include "base/arena.h"
#include "base/err.h"
#include "base/json.h"
#include "base/text.h"
#include "version/index.h"
#include "version/version.h"

#define COMPACT_BUDGET 20000 /* entries looked at per write transaction */
#define INDEX_PASSES 4	     /* secondary indexes with a compaction pass of their own, at most */

/* A revision of a branch some view reads below the horizon. */
typedef struct plimit {
	uint32_t branch;
	uint64_t limit;
} plimit;

typedef struct cpt {
	cairn_store *st;
	uint32_t dom;
	uint64_t horizon;
	uint32_t *live;		/* live branches */
	size_t n_live;
	plimit *pl;
	size_t n_pl, cap_pl;
	uint8_t *dead;		/* bitmap by vid: Versions no read can see */
	uint64_t nbits;
	schema *s;
	cairn_compact_result *res;
	struct gent *g;		/* the group being walked */
	size_t *next;
	size_t cap_g;
	/* The walk of one sub-database: where the next transaction starts. */
	uint8_t resume[CAIRN_MAX_KEY + 64];
	size_t resume_n;
	int done;
	int discard;		/* the step's writes are to be thrown away (nothing was dropped) */
	void *ix_state[INDEX_PASSES]; /* each index's own across its pass (compact_release) */
	int dry;		/* count only: every transaction is thrown away */
} cpt;

/* ------------------------------------------------------- what is needed -- */

static int is_live(const cpt *c, uint32_t branch)
{
	for (size_t i = 0; i < c->n_live; i++)
		if (c->live[i] == branch)
			return 1;
	return 0;
}

/* Does a read see branch's state during [lo, hi) (hi 0: up to now)? */
static int needed(const cpt *c, uint32_t branch, uint64_t lo, uint64_t hi)
{
	if (!hi || hi > c->horizon || !is_live(c, branch))
		return 1;
	for (size_t i = 0; i < c->n_pl; i++)
		if (c->pl[i].branch == branch && c->pl[i].limit >= lo && c->pl[i].limit < hi)
			return 1;
	return 0;
}

static int add_limit(cpt *c, uint32_t branch, uint64_t limit)
{
	if (limit >= c->horizon)
		return 0; /* read anyway */
	for (size_t i = 0; i < c->n_pl; i++)
		if (c->pl[i].branch == branch && c->pl[i].limit == limit)
			return 0;
	if (c->n_pl == c->cap_pl) {
		size_t cap = c->cap_pl ? c->cap_pl * 2 : 16;
		plimit *p = cr_reallocarray(c->pl, cap, sizeof(*p));

		if (!p)
			return err_set(CAIRN_ENOMEM, "out of memory");
		c->pl = p;
		c->cap_pl = cap;
	}
	c->pl[c->n_pl].branch = branch;
	c->pl[c->n_pl++].limit = limit;
	return 0;
}

/* The limits of the view of branch id at rev (0: its head), from level `from` on. */
static int add_view(cpt *c, const dctx *base, uint32_t id, uint64_t rev, int from)
{
	dctx v;
	int rc = dctx_branch(base, id, &v);

	if (rc)
		return rc == CAIRN_ENOBRANCH || rc == CAIRN_ENOTFOUND ? 0 : rc;
	if (rev)
		dctx_at(&v, rev);
	for (int i = from; i < v.v.n && !rc; i++)
		rc = add_limit(c, v.v.lv[i].branch, v.v.lv[i].limit);
	dctx_close(&v);
	return rc;
}

/* Every limit below the horizon that a branch's view or a merge's base reads. */
static int protect(cpt *c, dctx *d)
{
	MDB_cursor *cur;
	MDB_val k, v;
	kbuf p;
	int mrc, rc = 0;

	for (size_t i = 0; i < c->n_live && !rc; i++)
		rc = add_view(c, d, c->live[i], 0, 1);
	if (rc)
		return rc;
	kb_init(&p);
	kb_be32(&p, c->dom);
	kb_u8(&p, CAT_MERGED);
	if ((mrc = mdb_cursor_open(d->txn, d->st->dbi[DB_CATALOG], &cur)))
		return store_err(mrc, "catalog");
	k.mv_data = p.b;
	k.mv_size = p.n;
	for (mrc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); mrc == 0 && !rc;
	     mrc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		const uint8_t *kk = k.mv_data;
		uint32_t source;

		if (k.mv_size != p.n + 8 || memcmp(kk, p.b, p.n) != 0)
			break;
		source = be32_get(kk + p.n + 4);
		if (v.mv_size == 8 && is_live(c, source) && be64_get(v.mv_data))
			rc = add_view(c, d, source, be64_get(v.mv_data), 0);
	}
	mdb_cursor_close(cur);
	return rc ? rc : mrc && mrc != MDB_NOTFOUND ? store_err(mrc, "catalog") : 0;
}

/* ------------------------------------------------------------- entries -- */

static int del_counted(MDB_txn *txn, cairn_store *st, int db, const void *k, size_t kn,
		       uint64_t *n)
{
	int rc = db_del(txn, st, db, k, kn);

	if (rc == CAIRN_ENOTFOUND)
		return 0;
	if (!rc && n)
		++*n;
	return rc;
}

int version_entries_drop(MDB_txn *txn, cairn_store *st, const schema *s, uint32_t dom,
			 uint64_t vid, const vrec *ver, const vrec *succ, cairn_compact_result *res)
{
	kbuf k;
	int rc = 0;

	if (ver->type == V_REC) {
		const kind_def *kd = schema_kind_id(s, ver->kr);
		arena a = ARENA_INIT;
		const jv *vals, *svals = NULL;

		if (succ && !(svals = jv_parse(&a, succ->values, succ->values_len, "stored values")))
			succ = NULL; /* (stored values parse) all go, as without one */
		if (kd && (vals = jv_parse(&a, ver->values, ver->values_len, "stored values"))) {
			dctx nd;

			for (size_t i = 0; i < kd->n_attrs && !rc; i++) {
				const attr_def *ad = &kd->attrs[i];
				const jv *val = jv_get(vals, ad->name);
				size_t n = val && ad->type == AT_STRINGS ? val->len : 1;

				/* Indexed or not now: it may have been when the Version was written. */
				if (!val || (ad->type == AT_STRINGS && val->type != JV_ARRAY))
					continue;
				for (size_t j = 0; j < n && !rc; j++) {
					attr_entry e;

					if (attr_key(&k, dom, kd->id, ad,
						     ad->type == AT_STRINGS ? &val->u.items[j] : val,
						     ver->key, ver->key_len, vid))
						continue;
					/* A value its successor kept: the successor relies on this entry. */
					if (succ && !attr_entry_parse(ad, k.b, k.n, &e) &&
					    attr_has_encoded(ad, svals, e.value, e.value_len))
						continue;
					rc = del_counted(txn, st, DB_ATTR, k.b, k.n,
							 res ? &res->attr_entries : NULL);
				}
			}
			memset(&nd, 0, sizeof(nd));
			nd.st = st;
			nd.txn = txn;
			nd.dom = dom;
			/* What its successor has stays: the successor has no entries of its own for it. */
			for (const index_ops *const *ix = index_registry; *ix && !rc; ix++)
				if ((*ix)->drop)
					rc = (*ix)->drop(&nd, kd, ver, vals, vid, succ, svals);
		}
		arena_release(&a);
		key_u64(&k, dom, vid);
		if (!rc)
			rc = del_counted(txn, st, DB_VECTORS, k.b, k.n, res ? &res->vectors : NULL);
	} else if (vtype_link(ver->type)) {
		key_adj(&k, dom, ver->from_rid, ver->kr, ver->to_rid);
		kb_be64(&k, ~vid);
		rc = del_counted(txn, st, DB_ADJ, k.b, k.n, res ? &res->link_entries : NULL);
		key_adj(&k, dom, ver->to_rid, ver->kr, ver->from_rid);
		kb_be64(&k, ~vid);
		if (!rc)
			rc = del_counted(txn, st, DB_ADJR, k.b, k.n, res ? &res->link_entries : NULL);
	}
	return rc;
}

/* ---------------------------------------------------------------- walks -- */

/* One entry of an identity (or a chunk's cells), newest first. */
typedef struct gent {
	uint64_t id;		/* vid, or revision of a cell */
	uint32_t branch;
	uint64_t rev;
	int tomb;
} gent;

/* Decide and drop for one group; n entries, prefix key p[0..pn-1]. */
typedef int (*group_fn)(cpt *c, MDB_txn *txn, const uint8_t *p, size_t pn, const gent *g,
			size_t n);

static void mark_dead(cpt *c, uint64_t vid)
{
	if (vid < c->nbits)
		c->dead[vid >> 3] |= (uint8_t)(1u << (vid & 7));
}

/*
 * For each entry of an identity (newest first): the next Version on its
 * branch, its index in g (n: none), into next[]. One pass, with the latest
 * entry of each branch seen so far (an identity has Versions on a few).
 */
static void next_on_branch(const gent *g, size_t n, size_t *next)
{
	struct {
		uint32_t branch;
		size_t at;
	} seen[VIEW_MAX * 2];
	size_t ns = 0;

	for (size_t i = 0; i < n; i++) {
		size_t j;

		for (j = 0; j < ns && seen[j].branch != g[i].branch; j++)
			;
		next[i] = j < ns ? seen[j].at : n;
		if (j == ns && ns < sizeof(seen) / sizeof(seen[0]))
			seen[ns++].branch = g[i].branch;
		else if (j == ns) { /* (more branches than that: the slow way) */
			for (size_t m = i; m-- > 0;)
				if (g[m].branch == g[i].branch) {
					next[i] = m;
					break;
				}
			continue;
		}
		seen[j].at = i;
	}
}

/* Fetch and decode Version vid; 1 when it is not there (cleared). */
static int get_ver(cpt *c, MDB_txn *txn, uint64_t vid, vrec *out)
{
	kbuf k;
	MDB_val v;
	int rc;

	key_u64(&k, c->dom, vid);
	rc = db_get(txn, c->st, DB_VERSIONS, k.b, k.n, &v);
	if (rc == CAIRN_ENOTFOUND)
		return 1;
	return rc ? rc : vrec_decode(v.mv_data, v.mv_size, out);
}

static int record_group(cpt *c, MDB_txn *txn, const uint8_t *p, size_t pn, const gent *g,
			size_t n)
{
	size_t *next = c->next;
	int rc = 0;

	(void)p;
	(void)pn;
	next_on_branch(g, n, next);
	for (size_t i = 0; i < n && !rc; i++) {
		vrec ver, succ;
		int have_succ = 0;

		if (g[i].tomb || needed(c, g[i].branch, g[i].rev, next[i] < n ? g[next[i]].rev : 0))
			continue;
		mark_dead(c, g[i].id);
		if ((rc = get_ver(c, txn, g[i].id, &ver)) > 0) {
			rc = 0;
			continue;
		}
		/* Its successor (needed to be unreachable), unless a delete. */
		if (!rc && !g[next[i]].tomb && (rc = get_ver(c, txn, g[next[i]].id, &succ)) <= 0)
			have_succ = rc == 0 && succ.type == V_REC;
		if (rc > 0)
			rc = 0;
		if (!rc)
			rc = version_entries_drop(txn, c->st, c->s, c->dom, g[i].id, &ver,
						  have_succ ? &succ : NULL, c->res);
	}
	return rc;
}

static int link_group(cpt *c, MDB_txn *txn, const uint8_t *p, size_t pn, const gent *g, size_t n)
{
	size_t *next = c->next;
	int rc = 0;

	next_on_branch(g, n, next);
	for (size_t i = 0; i < n && !rc; i++) {
		vrec ver;

		if (g[i].tomb || needed(c, g[i].branch, g[i].rev, next[i] < n ? g[next[i]].rev : 0))
			continue;
		mark_dead(c, g[i].id);
		memset(&ver, 0, sizeof(ver));
		ver.type = V_LINK;
		ver.from_rid = be64_get(p + 4);
		ver.kr = be32_get(p + 12);
		ver.to_rid = be64_get(p + 16);
		(void)pn;
		rc = version_entries_drop(txn, c->st, c->s, c->dom, g[i].id, &ver, NULL, c->res);
	}
	return rc;
}

static int cell_group(cpt *c, MDB_txn *txn, const uint8_t *p, size_t pn, const gent *g, size_t n)
{
	uint8_t k[64];
	int rc = 0;

	if (pn + 8 > sizeof(k))
		return 0;
	memcpy(k, p, pn);
	for (size_t i = 0; i < n && !rc; i++) {
		/* A cell serves from its revision up to the next cell's. */
		if (needed(c, g[i].branch, g[i].rev, i ? g[i - 1].rev : 0))
			continue;
		be64_put(k + pn, ~g[i].rev);
		rc = del_counted(txn, c->st, DB_CELLS, k, pn + 8, &c->res->cells);
	}
	return rc;
}

/* Decode one entry of db into g. 0, or 1 to skip a malformed one. */
static int entry_of(int db, const MDB_val *k, const MDB_val *v, gent *g)
{
	const uint8_t *kk = k->mv_data;
	ventry e;

	g->id = ~be64_get(kk + k->mv_size - 8);
	if (db == DB_CELLS) {
		if (k->mv_size != 25)
			return 1;
		g->rev = g->id;
		g->branch = be32_get(kk + 5);
		g->tomb = 0;
		return 0;
	}
	if (ventry_decode(v->mv_data, v->mv_size, db == DB_KEYS ? VE_KEYS : VE_ADJ, &e))
		return 1;
	g->branch = e.branch;
	g->rev = e.rev;
	g->tomb = (e.flags & EF_TOMBSTONE) != 0;
	return 0;
}

/*
 * One transaction's share of a walk of db (keys, adj or cells): its entries
 * grouped by everything but the last 8 bytes of the key (a vid or a
 * revision, newest first), from c->resume on.
 */
static int walk_step(cpt *c, MDB_txn *txn, int db, group_fn fn)
{
	MDB_cursor *cur = NULL;
	MDB_val k, v;
	uint8_t prefix[sizeof(c->resume)];
	size_t looked = 0;
	int mrc, rc = 0;

	if (!c->resume_n) {
		be32_put(c->resume, c->dom);
		c->resume_n = 4;
	}
	if ((mrc = mdb_cursor_open(txn, c->st->dbi[db], &cur)))
		return store_err(mrc, db_names[db]);
	while (!rc && looked < COMPACT_BUDGET) {
		size_t pn, n = 0;

		k.mv_data = c->resume;
		k.mv_size = c->resume_n;
		mrc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
		if (mrc || k.mv_size < 4 + 8 || be32_get(k.mv_data) != c->dom ||
		    k.mv_size > sizeof(prefix)) {
			c->done = 1;
			break;
		}
		pn = k.mv_size - 8;
		memcpy(prefix, k.mv_data, pn);
		/* The group, then where the next one starts. */
		do {
			if (n == c->cap_g) {
				size_t cap = c->cap_g ? c->cap_g * 2 : 64;
				gent *g = cr_reallocarray(c->g, cap, sizeof(*g));
				size_t *next = g ? cr_reallocarray(c->next, cap, sizeof(*next)) : NULL;

				if (g)
					c->g = g;
				if (!next) {
					rc = err_set(CAIRN_ENOMEM, "out of memory");
					break;
				}
				c->next = next;
				c->cap_g = cap;
			}
			if (!entry_of(db, &k, &v, &c->g[n]))
				n++;
			looked++;
			mrc = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
		} while (mrc == 0 && k.mv_size == pn + 8 && memcmp(k.mv_data, prefix, pn) == 0);
		if (rc)
			break;
		if (mrc && mrc != MDB_NOTFOUND) {
			rc = store_err(mrc, db_names[db]);
			break;
		}
		if (mrc == 0 && k.mv_size <= sizeof(c->resume)) {
			memcpy(c->resume, k.mv_data, k.mv_size);
			c->resume_n = k.mv_size;
		} else {
			c->done = 1;
		}
		rc = fn(c, txn, prefix, pn, c->g, n);
		if (c->done)
			break;
	}
	mdb_cursor_close(cur);
	return rc;
}

/* ---------------------------------------------------------------- steps -- */

/* The version layer's passes, then one for each index with a compaction of its own. */
enum { PASS_KEYS, PASS_ADJ, PASS_CELLS, PASS_INDEX };

/* The index whose compaction pass is pass (after PASS_INDEX), or NULL past the last. */
static const index_ops *pass_index(int pass)
{
	int n = pass - PASS_INDEX;

	for (const index_ops *const *ix = index_registry; *ix; ix++)
		if ((*ix)->compact && n-- == 0)
			return *ix;
	return NULL;
}

static int step(cpt *c, MDB_txn *txn, int pass)
{
	switch (pass) {
	case PASS_KEYS: {
		/* A Record's entries together: the keys segments go into keys first. */
		int rc = kseg_fold(txn, c->st, c->dom, NULL);

		return rc ? rc : walk_step(c, txn, DB_KEYS, record_group);
	}
	case PASS_ADJ:
		return walk_step(c, txn, DB_ADJ, link_group);
	case PASS_CELLS:
		return walk_step(c, txn, DB_CELLS, cell_group);
	default: {
		const index_ops *ops = pass_index(pass);
		index_compact k = {txn,		c->st,	       c->dom,	     c->dead,
				   c->nbits,	c->dry,	       COMPACT_BUDGET, c->resume,
				   &c->resume_n, &c->ix_state[pass - PASS_INDEX], c->res,
				   &c->done,	&c->discard};

		CR_ASSERT(ops && pass - PASS_INDEX < INDEX_PASSES);
		return ops->compact(&k);
	}
	}
}

/* ------------------------------------------------------------------ API -- */

/* The first transaction: the horizon, the live branches and the limits below it. */
static int begin(cpt *c, MDB_txn *txn, const char *domain, const cairn_compact_options *o)
{
	dctx d;
	counters ctr;
	uint64_t h = o->horizon, old;
	int rc;

	if ((rc = dctx_open(&d, c->st, txn, domain, NULL)))
		return rc;
	c->dom = d.dom;
	if ((rc = counters_get(txn, c->st, d.dom, &ctr)) ||
	    (rc = horizon_get(txn, c->st, d.dom, &old)))
		goto out;
	if (h >= ctr.next_rev) {
		rc = err_set(CAIRN_EINVAL, "revision %llu does not exist (the latest is %llu)",
			     (unsigned long long)h, (unsigned long long)ctr.next_rev - 1);
		goto out;
	}
	if (!h && ctr.next_rev > 1 &&
	    (rc = rev_at_time(txn, c->st, d.dom, time_now_ms() - o->retain_ms, ctr.next_rev - 1,
			      &h)))
		goto out;
	c->horizon = h > old ? h : old;
	c->res->horizon = c->horizon;
	c->nbits = ctr.next_vid;
	if (!(c->dead = cr_calloc(c->nbits / 8 + 1, 1))) {
		rc = err_set(CAIRN_ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = schema_current(txn, c->st, d.dom, &c->s)) ||
	    (rc = branch_ids(txn, c->st, d.dom, &c->live, &c->n_live)) || (rc = protect(c, &d)))
		goto out;
	if (c->horizon > old)
		rc = horizon_put(txn, c->st, d.dom, c->horizon);
out:
	dctx_close(&d);
	return rc;
}

static void cpt_release(cpt *c)
{
	cr_free(c->live);
	cr_free(c->pl);
	cr_free(c->dead);
	cr_free(c->g);
	cr_free(c->next);
	schema_free(c->s);
	memset(c, 0, sizeof(*c));
}

/* One transaction of a compaction, as store_write runs it: the first (begin) or a step. */
struct compact_txn {
	cpt *c;
	cairn_compact_result *res;
	const char *domain;
	const cairn_compact_options *o;
	int first, pass;
	int runs;	/* of fn in this transaction: more than one when the map filled */
	int wrote;	/* the transaction is to be committed */
	uint8_t resume[sizeof(((cpt *)0)->resume)]; /* where the step began */
	size_t resume_n;
	cairn_compact_result saved;
};

static int compact_txn(MDB_txn *txn, cairn_store *st, void *arg)
{
	struct compact_txn *a = arg;
	cpt *c = a->c;
	int rc;

	if (a->runs++ == 0) {
		memcpy(a->resume, c->resume, sizeof(a->resume));
		a->resume_n = c->resume_n;
		a->saved = *a->res;
	} else { /* again after the map grew: from where the step began */
		if (a->first) {
			cpt_release(c);
			c->st = st;
			c->res = a->res;
		}
		memcpy(c->resume, a->resume, sizeof(a->resume));
		c->resume_n = a->resume_n;
		c->done = 0;
		*a->res = a->saved;
	}
	a->wrote = 0;
	c->discard = 0;
	c->dry = a->o->dry_run;
	rc = a->first ? begin(c, txn, a->domain, a->o) : step(c, txn, a->pass);
	if (rc || c->discard || c->dry) {
		if (c->discard) /* (what it counted goes with it) */
			*a->res = a->saved;
		a->res->transactions += !rc && !c->discard && c->dry;
		return rc ? rc : STORE_DISCARD;
	}
	a->wrote = 1;
	return 0;
}

int cairn_compact(cairn_store *st, const char *domain, const cairn_compact_options *o,
		  cairn_compact_result *out)
{
	uint64_t t0 = time_mono_ns();
	cairn_compact_result res;
	cpt c;
	int rc, pass = PASS_KEYS;

	if (!st || !domain || !o)
		return err_set(CAIRN_EINVAL, "cairn_compact: NULL argument");
	if ((rc = err_reserved(o->reserved, "cairn_compact", "cairn_compact_options")))
		return rc;
	if (o->retain_ms < 0)
		return err_set(CAIRN_EINVAL, "cairn_compact: a retention of %lld ms",
			       (long long)o->retain_ms);
	if (st->flags & CAIRN_OPEN_RDONLY)
		return err_set(CAIRN_EREADONLY, "the store is open read-only");
	memset(&res, 0, sizeof(res));
	memset(&c, 0, sizeof(c));
	c.st = st;
	c.res = &res;
	for (;;) {
		struct compact_txn a = {&c, &res, domain, o, !c.dead, pass, 0, 0, {0}, 0, {0}};

		rc = store_write(st, compact_txn, &a);
		res.transactions += !rc && a.wrote;
		if (rc || !res.horizon) /* nothing to compact */
			break;
		if (c.done) {
			c.done = 0;
			c.resume_n = 0;
			if (!pass_index(++pass) && pass > PASS_CELLS)
				break;
		}
	}
	for (uint64_t i = 0; c.dead && i < c.nbits / 8 + 1; i++)
		res.versions += (uint64_t)__builtin_popcount(c.dead[i]);
	for (int i = 0; i < INDEX_PASSES; i++)
		if (c.ix_state[i] && pass_index(PASS_INDEX + i)->compact_release)
			pass_index(PASS_INDEX + i)->compact_release(c.ix_state[i]);
	cpt_release(&c);
	res.seconds = (double)(time_mono_ns() - t0) / 1e9;
	if (out)
		*out = res;
	return rc;
}
