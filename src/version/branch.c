/*
 * Branches.
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
 * their index entries are cleared afterwards by cairn_store_maintain
 * (admin/maintain.c).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/json.h"
#include "base/alloc.h"
#include "base/err.h"
#include "base/text.h"
#include "version/version.h"

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

void branch_cat_key(kbuf *k, uint32_t dom, char type, const char *name)
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
	branch_cat_key(&k, dom, CAT_BNAME, name);
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
	branch_cat_key(&k, d->dom, CAT_BNAME, a->name);
	rc = db_get(txn, st, DB_CATALOG, k.b, k.n, &v);
	if (rc == 0 || strcmp(a->name, "main") == 0)
		return err_set(CAIRN_EEXIST, "branch \"%s\" already exists", a->name);
	if (rc != CAIRN_ENOTFOUND)
		return rc;
	branch_cat_key(&k, d->dom, CAT_NEXTB, NULL);
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
	branch_cat_key(&k, d->dom, CAT_BNAME, a->name);
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
	return domain_write(st, domain, create_txn, &a, 1);
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
	branch_cat_key(&k, d->dom, CAT_BNAME, a->new_name);
	rc = db_get(txn, st, DB_CATALOG, k.b, k.n, &v);
	if (rc == 0)
		return err_set(CAIRN_EEXIST, "branch \"%s\" already exists", a->new_name);
	if (rc != CAIRN_ENOTFOUND)
		return rc;
	be32_put(idb, id);
	if ((rc = db_put(txn, st, DB_CATALOG, k.b, k.n, idb, 4, 0)))
		return rc;
	branch_cat_key(&k, d->dom, CAT_BNAME, a->name);
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
	return domain_write(st, domain, rename_txn, &a, 1);
}

int each_branch(MDB_txn *txn, cairn_store *st, uint32_t dom,
		int (*fn)(const branch_info *b, void *arg), void *arg)
{
	MDB_cursor *cur;
	MDB_val k, v;
	kbuf p;
	int mrc, rc = 0;

	branch_cat_key(&p, dom, CAT_BRANCH, NULL);
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
	branch_cat_key(&k, d->dom, CAT_BNAME, name);
	return db_del(txn, st, DB_CATALOG, k.b, k.n);
}

int cairn_branch_delete(cairn_store *st, const char *domain, const char *name)
{
	int rc;

	if (!st || !domain || !name)
		return err_set(CAIRN_EINVAL, "cairn_branch_delete: NULL argument");
	rc = domain_write(st, domain, delete_txn, (void *)name, 1);
	if (!rc)
		store_wake(st);
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

