/*
 * Branches and background maintenance.
 *
 * A branch is a catalog entry: its id, its parent, the parent's head when it
 * was made (the fork revision) and its own head. Making one copies no
 * Record, Link or index entry: reads resolve through the view (the branch,
 * then its ancestors up to their fork revisions), and the live-set cells of
 * the parent as of the fork serve until the branch writes its own. Only the
 * count of each Kind is copied, one cell per Kind, so that a count on a
 * branch reads one cell, as on main.
 *
 * Deleting a branch removes its name and marks it at once; its Versions and
 * their index entries are cleared afterwards by cairn_store_maintain, a
 * bounded number of Versions per write transaction, so the writer is never
 * held long. A thread does that for a writable store; the progress is kept
 * in the branch's catalog entry, so a crash or a close resumes it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/json.h"
#include "util/alloc.h"
#include "util/err.h"
#include "util/text.h"
#include "version/text.h"
#include "version/version.h"
#include "version/vindex.h"

#define CAT_BNAME 'B'	/* (dom, 'B', name) -> branch id */
#define CAT_BRANCH 'b'	/* (dom, 'b', id) -> branch info */
#define CAT_NEXTB 'n'	/* (dom, 'n') -> next branch id */
#define CAT_GONE 'x'	/* (dom, 'x', id) -> a deleted branch, fully cleared */
#define CAT_CLEARING 'c' /* (dom, 'c', id) -> within the revision being cleared, the next vid */

int branch_name_valid(const char *name)
{
	size_t n;

	if (!name)
		return 0;
	n = strlen(name);
	if (n == 0 || n > CAIRN_MAX_BRANCH || name[0] == '/' || name[0] == '.' || name[0] == '-' ||
	    name[n - 1] == '/' || strstr(name, "//"))
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.' || c == '-' || c == '/'))
			return 0;
	}
	return 1;
}

static void bkey(kbuf *k, uint32_t dom, char type, const char *name)
{
	kb_init(k);
	kb_be32(k, dom);
	kb_u8(k, (uint8_t)type);
	if (name)
		kb_bytes(k, name, strlen(name));
}

/* The id of branch `name` in dom, CAIRN_ENOBRANCH if there is none. */
static int branch_lookup(MDB_txn *txn, cairn_store *st, uint32_t dom, const char *name,
			 uint32_t *id)
{
	kbuf k;
	MDB_val v;
	int rc;

	if (!branch_name_valid(name))
		return err_set(CAIRN_ENOBRANCH, "no branch named \"%s\"", name ? name : "(null)");
	bkey(&k, dom, CAT_BNAME, name);
	rc = db_get(txn, st, DB_CATALOG, k.b, k.n, &v);
	if (rc == CAIRN_ENOTFOUND)
		return err_set(CAIRN_ENOBRANCH, "no branch named \"%s\"", name);
	if (rc)
		return rc;
	if (v.mv_size != 4)
		return err_set(CAIRN_ECORRUPT, "branch %s: bad id", name);
	*id = be32_get(v.mv_data);
	return 0;
}

/* Run fn in a write transaction on Domain domain, growing the map when it fills. */
static int write_in_domain(cairn_store *st, const char *domain,
			   int (*fn)(MDB_txn *txn, cairn_store *st, dctx *d, void *arg), void *arg)
{
	MDB_txn *txn;
	dctx d;
	int rc;

	for (;;) {
		if ((rc = store_write_begin(st, &txn)))
			return rc;
		rc = dctx_open(&d, st, txn, domain, NULL);
		if (!rc)
			rc = fn(txn, st, &d, arg);
		dctx_close(&d);
		if (rc) {
			store_write_abort(st, txn);
		} else if (!(rc = catalog_touch(txn, st))) {
			rc = store_write_commit(st, txn);
		} else {
			store_write_abort(st, txn);
		}
		if (rc != CAIRN_EMAPFULL)
			break;
		if ((rc = store_grow(st)))
			break;
	}
	if (!rc)
		cache_invalidate(st);
	return rc;
}

struct create_arg {
	const char *name, *from;
};

static int create_txn(MDB_txn *txn, cairn_store *st, dctx *d, void *arg)
{
	struct create_arg *a = arg;
	branch_info parent, b = {0};
	uint32_t pid = MAIN_BRANCH_ID, id;
	uint8_t idb[4];
	kbuf k;
	MDB_val v;
	int rc;

	if (a->from && strcmp(a->from, "main") != 0 &&
	    (rc = branch_lookup(txn, st, d->dom, a->from, &pid)))
		return rc;
	if ((rc = branch_get(txn, st, d->dom, pid, &parent)))
		return rc;
	bkey(&k, d->dom, CAT_BNAME, a->name);
	rc = db_get(txn, st, DB_CATALOG, k.b, k.n, &v);
	if (rc == 0 || strcmp(a->name, "main") == 0)
		return err_set(CAIRN_EEXIST, "branch \"%s\" already exists", a->name);
	if (rc != CAIRN_ENOTFOUND)
		return rc;
	bkey(&k, d->dom, CAT_NEXTB, NULL);
	rc = db_get(txn, st, DB_CATALOG, k.b, k.n, &v);
	if (rc == CAIRN_ENOTFOUND)
		id = MAIN_BRANCH_ID + 1;
	else if (rc)
		return rc;
	else if (v.mv_size != 4)
		return err_set(CAIRN_ECORRUPT, "bad branch counter");
	else
		id = be32_get(v.mv_data);
	if (id == UINT32_MAX)
		return err_set(CAIRN_ELIMIT, "no branch ids left in this Domain");
	be32_put(idb, id + 1);
	if ((rc = db_put(txn, st, DB_CATALOG, k.b, k.n, idb, 4, 0)))
		return rc;
	b.id = id;
	b.parent = pid;
	b.fork_rev = branch_head(&parent);
	b.created_ms = time_now_ms();
	memcpy(b.head_hash, parent.head_hash, 32);
	if ((rc = branch_put(txn, st, d->dom, &b, a->name)))
		return rc;
	/*
	 * The counts per Kind as of the fork, one cell each: a count on the
	 * branch then reads one cell, as on main. Records and their index
	 * entries are not copied; the live set is read through to the parent.
	 */
	{
		dctx pv;

		if ((rc = dctx_branch(d, pid, &pv)))
			return rc;
		if (pv.v.n == VIEW_MAX)
			return err_set(CAIRN_ELIMIT,
				       "a branch descends from at most %d branches: %s cannot have "
				       "branches of its own",
				       VIEW_MAX - 1, parent.name);
		dctx_at(&pv, b.fork_rev);
		for (uint32_t kd = 1; kd <= d->s->n_kinds && !rc; kd++) {
			uint64_t n;
			uint8_t nb[8];

			if ((rc = count_get(&pv, kd, &n)) || n == 0)
				continue;
			be64_put(nb, n);
			key_cell(&k, d->dom, CELL_COUNT, id, kd);
			kb_be64(&k, ~b.fork_rev);
			rc = db_put(txn, st, DB_CELLS, k.b, k.n, nb, 8, 0);
		}
		dctx_close(&pv);
		if (rc)
			return rc;
	}
	be32_put(idb, id);
	bkey(&k, d->dom, CAT_BNAME, a->name);
	return db_put(txn, st, DB_CATALOG, k.b, k.n, idb, 4, 0);
}

int cairn_branch_create(cairn_store *st, const char *domain, const char *name, const char *from)
{
	struct create_arg a = {name, from};

	if (!st || !domain || !name)
		return err_set(CAIRN_EINVAL, "cairn_branch_create: NULL argument");
	if (!branch_name_valid(name))
		return err_set(CAIRN_EINVAL,
			       "branch name \"%s\" is not 1 to %d characters of letters, digits, "
			       "'_', '.', '-' and '/' (not starting with '/', '.' or '-', not "
			       "ending with '/', no \"//\")",
			       name, CAIRN_MAX_BRANCH);
	return write_in_domain(st, domain, create_txn, &a);
}

struct rename_arg {
	const char *name, *new_name;
};

static int rename_txn(MDB_txn *txn, cairn_store *st, dctx *d, void *arg)
{
	struct rename_arg *a = arg;
	branch_info b;
	uint32_t id;
	uint8_t idb[4];
	kbuf k;
	MDB_val v;
	int rc;

	if (strcmp(a->name, "main") == 0 || strcmp(a->new_name, "main") == 0)
		return err_set(CAIRN_EINVAL, "main cannot be renamed, nor another branch to main");
	if ((rc = branch_lookup(txn, st, d->dom, a->name, &id)))
		return rc;
	bkey(&k, d->dom, CAT_BNAME, a->new_name);
	rc = db_get(txn, st, DB_CATALOG, k.b, k.n, &v);
	if (rc == 0)
		return err_set(CAIRN_EEXIST, "branch \"%s\" already exists", a->new_name);
	if (rc != CAIRN_ENOTFOUND)
		return rc;
	be32_put(idb, id);
	if ((rc = db_put(txn, st, DB_CATALOG, k.b, k.n, idb, 4, 0)))
		return rc;
	bkey(&k, d->dom, CAT_BNAME, a->name);
	if ((rc = db_del(txn, st, DB_CATALOG, k.b, k.n)))
		return rc;
	if ((rc = branch_get(txn, st, d->dom, id, &b)))
		return rc;
	return branch_put(txn, st, d->dom, &b, a->new_name);
}

int cairn_branch_rename(cairn_store *st, const char *domain, const char *name,
			const char *new_name)
{
	struct rename_arg a = {name, new_name};

	if (!st || !domain || !name || !new_name)
		return err_set(CAIRN_EINVAL, "cairn_branch_rename: NULL argument");
	if (!branch_name_valid(new_name))
		return err_set(CAIRN_EINVAL, "branch name \"%s\" is not valid", new_name);
	return write_in_domain(st, domain, rename_txn, &a);
}

int each_branch(MDB_txn *txn, cairn_store *st, uint32_t dom,
		int (*fn)(const branch_info *b, void *arg), void *arg)
{
	MDB_cursor *cur;
	MDB_val k, v;
	kbuf p;
	int mrc, rc = 0;

	bkey(&p, dom, CAT_BRANCH, NULL);
	mrc = mdb_cursor_open(txn, st->dbi[DB_CATALOG], &cur);
	if (mrc)
		return store_err(mrc, "catalog");
	k.mv_data = p.b;
	k.mv_size = p.n;
	for (mrc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); mrc == 0 && !rc;
	     mrc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		branch_info b;

		if (k.mv_size != p.n + 4 || memcmp(k.mv_data, p.b, p.n) != 0)
			break;
		rc = branch_get(txn, st, dom, be32_get((uint8_t *)k.mv_data + p.n), &b);
		if (!rc)
			rc = fn(&b, arg);
	}
	mdb_cursor_close(cur);
	if (rc)
		return rc;
	return mrc && mrc != MDB_NOTFOUND ? store_err(mrc, "catalog") : 0;
}

struct ids_arg {
	uint32_t *ids;
	size_t n, cap;
};

static int add_live_id(const branch_info *b, void *arg)
{
	struct ids_arg *a = arg;

	if (b->state != BRANCH_LIVE)
		return 0;
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 16;
		uint32_t *q = cr_reallocarray(a->ids, cap, sizeof(*q));

		if (!q)
			return err_set(CAIRN_ENOMEM, "out of memory");
		a->ids = q;
		a->cap = cap;
	}
	a->ids[a->n++] = b->id;
	return 0;
}

int branch_ids(MDB_txn *txn, cairn_store *st, uint32_t dom, uint32_t **ids, size_t *n)
{
	struct ids_arg a = {NULL, 0, 0};
	int rc = each_branch(txn, st, dom, add_live_id, &a);

	if (rc) {
		cr_free(a.ids);
		a.ids = NULL;
		a.n = 0;
	}
	*ids = a.ids;
	*n = a.n;
	return rc;
}

struct child_arg {
	uint32_t id;
	const char *child;
};

static int find_child(const branch_info *b, void *arg)
{
	struct child_arg *a = arg;

	if (b->state == BRANCH_LIVE && b->parent == a->id) {
		a->child = b->name;
		return 1;
	}
	return 0;
}


static int delete_txn(MDB_txn *txn, cairn_store *st, dctx *d, void *arg)
{
	const char *name = arg;
	struct child_arg ca = {0, NULL};
	branch_info b;
	uint32_t id;
	kbuf k;
	int rc;

	if (strcmp(name, "main") == 0)
		return err_set(CAIRN_EINVAL, "main cannot be deleted");
	if ((rc = branch_lookup(txn, st, d->dom, name, &id)))
		return rc;
	ca.id = id;
	rc = each_branch(txn, st, d->dom, find_child, &ca);
	if (rc < 0)
		return rc;
	if (ca.child)
		return err_set(CAIRN_EINVAL,
			       "branch %s was made from %s: delete or merge it first", ca.child,
			       name);
	if ((rc = branch_get(txn, st, d->dom, id, &b)))
		return rc;
	b.state = BRANCH_DELETING;
	b.progress = b.fork_rev + 1;
	if ((rc = branch_put(txn, st, d->dom, &b, name)))
		return rc;
	bkey(&k, d->dom, CAT_BNAME, name);
	return db_del(txn, st, DB_CATALOG, k.b, k.n);
}

int cairn_branch_delete(cairn_store *st, const char *domain, const char *name)
{
	int rc;

	if (!st || !domain || !name)
		return err_set(CAIRN_EINVAL, "cairn_branch_delete: NULL argument");
	rc = write_in_domain(st, domain, delete_txn, (void *)name);
	if (!rc)
		maint_wake(st);
	return rc;
}

struct list_arg {
	MDB_txn *txn;
	cairn_store *st;
	uint32_t dom;
	int (*cb)(void *ctx, const cairn_branch_info *b);
	void *ctx;
	const branch_info **all;
	size_t n, cap;
	branch_info *store;
};

static int collect_branch(const branch_info *b, void *arg)
{
	struct list_arg *a = arg;

	if (b->state != BRANCH_LIVE)
		return 0;
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 16;
		branch_info *s = cr_reallocarray(a->store, cap, sizeof(*s));

		if (!s)
			return err_set(CAIRN_ENOMEM, "out of memory");
		a->store = s;
		a->cap = cap;
	}
	a->store[a->n++] = *b;
	return 0;
}

static int name_cmp(const void *x, const void *y)
{
	return strcmp(((const branch_info *)x)->name, ((const branch_info *)y)->name);
}

int cairn_branch_list(cairn_store *st, const char *domain,
		      int (*cb)(void *ctx, const cairn_branch_info *b), void *ctx)
{
	struct list_arg a;
	MDB_txn *txn;
	dctx d;
	int rc;

	if (!st || !domain || !cb)
		return err_set(CAIRN_EINVAL, "cairn_branch_list: NULL argument");
	if ((rc = store_read_begin(st, &txn)))
		return rc;
	memset(&a, 0, sizeof(a));
	rc = dctx_open(&d, st, txn, domain, NULL);
	if (!rc)
		rc = each_branch(txn, st, d.dom, collect_branch, &a);
	if (!rc)
		qsort(a.store, a.n, sizeof(*a.store), name_cmp);
	for (size_t i = 0; !rc && i < a.n; i++) {
		cairn_branch_info bi;
		const char *parent = NULL;

		for (size_t j = 0; j < a.n; j++)
			if (a.store[j].id == a.store[i].parent)
				parent = a.store[j].name;
		bi.name = a.store[i].name;
		bi.parent = a.store[i].parent ? (parent ? parent : "(deleted)") : NULL;
		bi.fork_revision = a.store[i].fork_rev;
		bi.head_revision = branch_head(&a.store[i]);
		bi.created_ms = a.store[i].created_ms;
		rc = cb(ctx, &bi);
	}
	cr_free(a.store);
	dctx_close(&d);
	store_read_end(st, txn);
	return rc;
}

/* ------------------------------------------------------------ clearing -- */

/* Remove one Version of a deleted branch and its index entries. */
static int clear_version(MDB_txn *txn, cairn_store *st, const schema *s, uint32_t dom,
			 uint64_t vid)
{
	kbuf k;
	MDB_val v;
	vrec ver;
	int rc;

	key_u64(&k, dom, vid);
	rc = db_get(txn, st, DB_VERSIONS, k.b, k.n, &v);
	if (rc == CAIRN_ENOTFOUND)
		return 0; /* already cleared */
	if (rc || (rc = vrec_decode(v.mv_data, v.mv_size, &ver)))
		return rc;
	if (ver.type == V_REC || ver.type == V_REC_DEL) {
		key_keys(&k, dom, ver.kr, ver.key, ver.key_len);
		kb_be64(&k, ~vid);
		if ((rc = db_del(txn, st, DB_KEYS, k.b, k.n)) && rc != CAIRN_ENOTFOUND)
			return rc;
	}
	if ((rc = version_entries_drop(txn, st, s, dom, vid, &ver, NULL, NULL)))
		return rc;
	key_u64(&k, dom, vid);
	rc = db_del(txn, st, DB_VERSIONS, k.b, k.n);
	return rc == CAIRN_ENOTFOUND ? 0 : rc;
}

struct pending {
	uint32_t dom;
	branch_info b;
	int found;
	char name[CAIRN_MAX_BRANCH + 1];
};

static int find_deleting(const branch_info *b, void *arg)
{
	struct pending *p = arg;

	if (b->state != BRANCH_DELETING)
		return 0;
	p->b = *b;
	snprintf(p->name, sizeof(p->name), "%s", b->name);
	p->found = 1;
	return 1;
}

/* Find a branch being deleted in any Domain. */
static int next_pending(MDB_txn *txn, cairn_store *st, struct pending *p)
{
	uint64_t next;
	int rc;

	p->found = 0;
	if ((rc = meta_get_u64(txn, st, "next_domain", &next)))
		return rc;
	for (uint32_t dom = 1; dom < next && !p->found; dom++) {
		p->dom = dom;
		rc = each_branch(txn, st, dom, find_deleting, p);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* Load the current schema of dom (to find the attribute entries of Versions). */
int schema_current(MDB_txn *txn, cairn_store *st, uint32_t dom, schema **out);

/*
 * Clear a deleted branch's Versions in revision order, one unit of the
 * budget per Version cleared and per revision looked at, stopping within a
 * revision when the budget is spent (the next vid is kept under 'c'). *done
 * is set when the branch is entirely gone.
 */
static int clear_step(MDB_txn *txn, cairn_store *st, struct pending *p, unsigned budget,
		      int *done_branch)
{
	counters ctr;
	schema *s = NULL;
	unsigned done = 0;
	uint64_t resume = 0;
	kbuf ck;
	MDB_val v;
	int rc;

	*done_branch = 0;
	/* clear_version deletes keys entries where keys has them: the segments go there first. */
	if ((rc = kseg_fold(txn, st, p->dom, NULL)) || (rc = counters_get(txn, st, p->dom, &ctr)) ||
	    (rc = schema_current(txn, st, p->dom, &s)))
		return rc;
	bkey(&ck, p->dom, CAT_CLEARING, NULL);
	kb_be32(&ck, p->b.id);
	rc = db_get(txn, st, DB_CATALOG, ck.b, ck.n, &v);
	if (rc == 0 && v.mv_size == 8)
		resume = be64_get(v.mv_data);
	else if (rc && rc != CAIRN_ENOTFOUND)
		goto out;
	rc = 0;
	while (p->b.progress < ctr.next_rev && done < budget && !rc) {
		kbuf k;
		rrec r;

		done++;
		key_u64(&k, p->dom, p->b.progress);
		rc = db_get(txn, st, DB_REVS, k.b, k.n, &v);
		if (rc == CAIRN_ENOTFOUND) {
			rc = 0;
		} else if (!rc && !(rc = rrec_decode(v.mv_data, v.mv_size, &r)) &&
			   r.branch == p->b.id) {
			uint64_t vid = resume > r.first_vid ? resume : r.first_vid;

			for (; vid < r.first_vid + r.n_versions && done < budget && !rc; vid++, done++)
				rc = clear_version(txn, st, s, p->dom, vid);
			if (!rc && vid < r.first_vid + r.n_versions) {
				/* The budget ran out within the revision: resume at vid. */
				uint8_t vb[8];

				be64_put(vb, vid);
				rc = db_put(txn, st, DB_CATALOG, ck.b, ck.n, vb, 8, 0);
				goto save;
			}
		}
		if (!rc) {
			p->b.progress++;
			resume = 0;
		}
	}
	if (!rc && (rc = db_del(txn, st, DB_CATALOG, ck.b, ck.n)) == CAIRN_ENOTFOUND)
		rc = 0;
	if (!rc && p->b.progress >= ctr.next_rev) {
		/* Everything of the branch is gone but its cells, catalog entry and revisions. */
		uint8_t pre[4 + 1 + 4];
		kbuf k;

		for (int type = CELL_LIVE; type <= CELL_COUNT && !rc; type++) {
			be32_put(pre, p->dom);
			pre[4] = (uint8_t)type;
			be32_put(pre + 5, p->b.id);
			rc = db_del_prefix(txn, st, DB_CELLS, pre, sizeof(pre), NULL);
		}
		if (!rc)
			rc = text_drop_branch(txn, st, p->dom, p->b.id);
		bkey(&k, p->dom, CAT_BRANCH, NULL);
		kb_be32(&k, p->b.id);
		if (!rc)
			rc = db_del(txn, st, DB_CATALOG, k.b, k.n);
		bkey(&k, p->dom, CAT_GONE, NULL);
		kb_be32(&k, p->b.id);
		if (!rc)
			rc = db_put(txn, st, DB_CATALOG, k.b, k.n, "", 0, 0);
		*done_branch = !rc;
		goto out;
	}
save:
	if (!rc)
		rc = branch_put(txn, st, p->dom, &p->b, p->name);
out:
	schema_free(s);
	return rc;
}

/* Merge segments of postings in the first Domain that has some to merge (dry: only look). */
static int merge_any(MDB_txn *txn, cairn_store *st, int dry, int *found)
{
	uint64_t next;
	int rc;

	*found = 0;
	if ((rc = meta_get_u64(txn, st, "next_domain", &next)))
		return rc;
	for (uint32_t dom = 1; dom < next && !rc && !*found; dom++)
		rc = text_merge_step(txn, st, dom, dry, found);
	return rc;
}

int cairn_store_maintain(cairn_store *st, unsigned budget, int *pending)
{
	struct pending p;
	MDB_txn *txn;
	int rc, done_branch = 0, merged = 0;

	if (!st || !pending)
		return err_set(CAIRN_EINVAL, "cairn_store_maintain: NULL argument");
	*pending = 0;
	if (budget == 0) { /* only ask */
		int merge = 0;

		if ((rc = store_read_begin(st, &txn)))
			return rc;
		rc = next_pending(txn, st, &p);
		if (!rc && !p.found)
			rc = merge_any(txn, st, 1, &merge);
		store_read_end(st, txn);
		*pending = !rc && (p.found || merge);
		return rc;
	}
	if (st->flags & CAIRN_OPEN_RDONLY)
		return 0;
	for (;;) {
		if ((rc = store_write_begin(st, &txn)))
			return rc;
		rc = next_pending(txn, st, &p);
		if (!rc && p.found)
			rc = clear_step(txn, st, &p, budget, &done_branch);
		/* With no branch to clear, segments of postings to merge, one merge a step. */
		else if (!rc && (rc = merge_any(txn, st, 0, &merged)) == 0 && merged)
			*pending = 1;
		/* Work remains unless that was the last of the last branch. */
		if (!rc && p.found && done_branch && (rc = next_pending(txn, st, &p)) == 0)
			*pending = p.found;
		else if (!rc && p.found)
			*pending = 1;
		if (rc || (!p.found && !done_branch && !merged)) {
			store_write_abort(st, txn);
		} else {
			rc = store_write_commit(st, txn);
		}
		if (rc != CAIRN_EMAPFULL)
			break;
		*pending = 0;
		if ((rc = store_grow(st)))
			break;
	}
	if (rc)
		*pending = 0;
	return rc;
}

/* ----------------------------------------------------- maintenance thread -- */

struct maint {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;	/* on CLOCK_MONOTONIC */
	pthread_cond_t idle;	/* broadcast when work turns 0 and when a compaction pass ends */
	int running, work;
	volatile int stop;
	int64_t retain_ms;	/* > 0: compact every Domain to it, every compact_every_ms */
	uint64_t next_compact;	/* when, in time_mono_ns */
	uint64_t wakes;		/* maint_wake calls so far */
	uint64_t compactions;	/* passes of compaction finished since the open */
};

int64_t compact_every_ms = 3600 * 1000;

static int add_domain_name(void *ctx, const cairn_domain_info *d)
{
	struct { char **names; size_t n, cap; } *l = ctx;

	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 8;
		char **nn = cr_reallocarray(l->names, cap, sizeof(*nn));

		if (!nn)
			return err_set(CAIRN_ENOMEM, "out of memory");
		l->names = nn;
		l->cap = cap;
	}
	if (!(l->names[l->n] = cr_malloc(strlen(d->name) + 1)))
		return err_set(CAIRN_ENOMEM, "out of memory");
	strcpy(l->names[l->n++], d->name);
	return 0;
}

/* Compact every Domain of the store to the retention (the thread's timed work). */
static void compact_all(cairn_store *st, struct maint *m)
{
	struct { char **names; size_t n, cap; } l = {NULL, 0, 0};
	cairn_compact_options o = {0, m->retain_ms, 0};

	/* An error leaves what it could not do to the next time: nothing is lost. */
	if (cairn_domain_list(st, add_domain_name, &l) == 0)
		for (size_t i = 0; i < l.n && !m->stop; i++)
			cairn_compact(st, l.names[i], &o, NULL);
	for (size_t i = 0; i < l.n; i++)
		cr_free(l.names[i]);
	cr_free(l.names);
}

static void *maint_main(void *arg)
{
	cairn_store *st = arg;
	struct maint *m = st->maint;

	pthread_mutex_lock(&m->lock);
	while (!m->stop) {
		uint64_t wakes;
		int pending = 0, rc;

		if (!m->work && m->retain_ms > 0 && time_mono_ns() >= m->next_compact) {
			pthread_mutex_unlock(&m->lock);
			compact_all(st, m);
			pthread_mutex_lock(&m->lock);
			m->next_compact = time_mono_ns() + (uint64_t)compact_every_ms * 1000000u;
			m->compactions++;
			pthread_cond_broadcast(&m->idle);
			continue;
		}
		if (!m->work && m->retain_ms > 0) {
			struct timespec ts = {(time_t)(m->next_compact / 1000000000u),
					      (long)(m->next_compact % 1000000000u)};

			pthread_cond_timedwait(&m->cond, &m->lock, &ts);
			continue;
		}
		if (!m->work) {
			pthread_cond_wait(&m->cond, &m->lock);
			continue;
		}
		wakes = m->wakes;
		pthread_mutex_unlock(&m->lock);
		rc = cairn_store_maintain(st, 2000, &pending);
		/* With nothing else to do, the vector indexes that have fallen behind. */
		if (!rc && !pending)
			rc = vindex_maintain(st, &m->stop);
		pthread_mutex_lock(&m->lock);
		/*
		 * Done (an error waits for the next wake-up or open), unless woken
		 * during the pass: what woke it may have come after the pass looked.
		 */
		if ((rc || !pending) && m->wakes == wakes) {
			m->work = 0;
			pthread_cond_broadcast(&m->idle);
		}
	}
	pthread_mutex_unlock(&m->lock);
	return NULL;
}

void maint_wake(cairn_store *st)
{
	struct maint *m = st->maint;

	if (!m)
		return;
	pthread_mutex_lock(&m->lock);
	m->work = 1;
	m->wakes++;
	pthread_cond_signal(&m->cond);
	pthread_mutex_unlock(&m->lock);
}

uint64_t maint_compactions(cairn_store *st)
{
	struct maint *m = st->maint;
	uint64_t n;

	if (!m)
		return 0;
	pthread_mutex_lock(&m->lock);
	n = m->compactions;
	pthread_mutex_unlock(&m->lock);
	return n;
}

int maint_wait(cairn_store *st, uint64_t compactions, int64_t timeout_ms)
{
	struct maint *m = st->maint;
	uint64_t end = time_mono_ns() + (uint64_t)timeout_ms * 1000000u;
	struct timespec ts = {(time_t)(end / 1000000000u), (long)(end % 1000000000u)};
	int rc = 0;

	if (!m || !m->running)
		return err_set(CAIRN_EINVAL, "maint_wait: the store has no maintenance thread");
	pthread_mutex_lock(&m->lock);
	while ((m->work || m->compactions < compactions) && rc == 0)
		if (pthread_cond_timedwait(&m->idle, &m->lock, &ts) == ETIMEDOUT)
			rc = err_set(CAIRN_ELIMIT, "maint_wait: still busy after %lld ms",
				     (long long)timeout_ms);
	pthread_mutex_unlock(&m->lock);
	return rc;
}

static void maint_stop(cairn_store *st)
{
	struct maint *m = st->maint;

	if (!m)
		return;
	pthread_mutex_lock(&m->lock);
	m->stop = 1;
	pthread_cond_signal(&m->cond);
	pthread_mutex_unlock(&m->lock);
	if (m->running)
		pthread_join(m->thread, NULL);
	pthread_mutex_destroy(&m->lock);
	pthread_cond_destroy(&m->cond);
	pthread_cond_destroy(&m->idle);
	cr_free(m);
	st->maint = NULL;
}

int cairn_open(const char *path, const cairn_open_options *opts, cairn_store **out)
{
	struct maint *m;
	int rc;
	unsigned flags = opts ? opts->flags : 0;

	if (opts && opts->retain_ms < 0) {
		if (out)
			*out = NULL;
		return err_set(CAIRN_EINVAL, "cairn_open: a retention of %lld ms",
			       (long long)opts->retain_ms);
	}
	rc = store_open(path, opts, out);

	if (!rc && (*out)->format < STORE_FORMAT && (rc = store_upgrade(*out))) {
		store_close(*out);
		*out = NULL;
	}
	if (rc || (flags & (CAIRN_OPEN_RDONLY | CAIRN_OPEN_NO_BACKGROUND)))
		return rc;
	m = cr_calloc(1, sizeof(*m));
	if (!m) {
		store_close(*out);
		*out = NULL;
		return err_set(CAIRN_ENOMEM, "out of memory");
	}
	pthread_mutex_init(&m->lock, NULL);
	{
		pthread_condattr_t ca;

		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&m->cond, &ca);
		pthread_cond_init(&m->idle, &ca);
		pthread_condattr_destroy(&ca);
	}
	m->work = 1; /* look for work left by an earlier process */
	m->retain_ms = opts ? opts->retain_ms : 0;
	m->next_compact = time_mono_ns(); /* the first right away */
	(*out)->maint = m;
	if (pthread_create(&m->thread, NULL, maint_main, *out) == 0)
		m->running = 1;
	return 0;
}

void cairn_close(cairn_store *st)
{
	if (!st)
		return;
	maint_stop(st);
	store_close(st);
}
