/*
 * The catalog: Domains, branches, counters and schemas, and the resolution of
 * a Domain and branch into a view at the start of every transaction. Parsed
 * schemas are cached per store and revalidated by the catalog generation, a
 * counter every catalog change bumps, so a warm read costs one extra get.
 */
#include <string.h>

#include "base/alloc.h"
#include "base/err.h"
#include "base/text.h"
#include "version/version.h"


struct cache_entry {
	char name[CAIRN_MAX_NAME + 1];
	uint32_t dom;
	uint64_t gen;
	struct schema_ref *sref;
};

struct model_cache {
	struct cache_entry *e;
	size_t n;
};

static void sref_put(struct schema_ref *r)
{
	if (r && --r->refs == 0) {
		schema_free(r->s);
		cr_free(r);
	}
}

static void cache_free(struct model_cache *mc)
{
	for (size_t i = 0; i < mc->n; i++)
		sref_put(mc->e[i].sref);
	cr_free(mc->e);
	cr_free(mc);
}

void cache_invalidate(cairn_store *st)
{
	pthread_mutex_lock(&st->cache_lock);
	if (st->cache) {
		for (size_t i = 0; i < st->cache->n; i++)
			sref_put(st->cache->e[i].sref);
		st->cache->n = 0;
	}
	pthread_mutex_unlock(&st->cache_lock);
}

int catalog_touch(MDB_txn *txn, cairn_store *st)
{
	uint64_t gen;
	int rc = meta_get_u64(txn, st, "gen", &gen);

	return rc ? rc : meta_put_u64(txn, st, "gen", gen + 1);
}

static void ckey(kbuf *k, uint32_t dom, char type)
{
	kb_init(k);
	kb_be32(k, dom);
	kb_u8(k, (uint8_t)type);
}

int counters_get(MDB_txn *txn, cairn_store *st, uint32_t dom, counters *c)
{
	kbuf k;
	MDB_val v;
	int rc;

	ckey(&k, dom, CAT_CTR);
	rc = db_get(txn, st, DB_CATALOG, k.b, k.n, &v);
	if (rc == CAIRN_ENOTFOUND)
		return err_set(CAIRN_ECORRUPT, "Domain %u has no counters", dom);
	if (rc)
		return rc;
	if (v.mv_size != 32)
		return err_set(CAIRN_ECORRUPT, "Domain %u: bad counters", dom);
	c->next_vid = be64_get(v.mv_data);
	c->next_rid = be64_get((uint8_t *)v.mv_data + 8);
	c->next_rev = be64_get((uint8_t *)v.mv_data + 16);
	c->last_time_ms = (int64_t)be64_get((uint8_t *)v.mv_data + 24);
	return 0;
}

int counters_put(MDB_txn *txn, cairn_store *st, uint32_t dom, const counters *c)
{
	uint8_t b[32];
	kbuf k;

	be64_put(b, c->next_vid);
	be64_put(b + 8, c->next_rid);
	be64_put(b + 16, c->next_rev);
	be64_put(b + 24, (uint64_t)c->last_time_ms);
	ckey(&k, dom, CAT_CTR);
	return db_put(txn, st, DB_CATALOG, k.b, k.n, b, sizeof(b), 0);
}

int branch_get(MDB_txn *txn, cairn_store *st, uint32_t dom, uint32_t id, branch_info *out)
{
	kbuf k;
	MDB_val v;
	rdr r;
	int rc;

	ckey(&k, dom, CAT_BRANCH);
	kb_be32(&k, id);
	rc = db_get(txn, st, DB_CATALOG, k.b, k.n, &v);
	if (rc)
		return rc;
	rd_init(&r, v.mv_data, v.mv_size);
	out->id = id;
	out->parent = rd_be32(&r);
	out->fork_rev = rd_be64(&r);
	out->head_rev = rd_be64(&r);
	out->created_ms = (int64_t)rd_be64(&r);
	{
		const uint8_t *h = rd_bytes(&r, 32);

		if (h)
			memcpy(out->head_hash, h, 32);
	}
	out->state = rd_u8(&r);
	out->progress = rd_be64(&r);
	out->name = (const char *)r.p;
	if (r.bad || r.p >= r.end || r.end[-1] != '\0')
		return err_set(CAIRN_ECORRUPT, "branch %u of Domain %u: bad record", id, dom);
	return 0;
}

int branch_put(MDB_txn *txn, cairn_store *st, uint32_t dom, const branch_info *b,
	       const char *name)
{
	uint8_t v[4 + 8 + 8 + 8 + 32 + 1 + 8 + CAIRN_MAX_BRANCH + 1];
	size_t nl = strlen(name);
	kbuf k;

	if (nl > CAIRN_MAX_BRANCH)
		return err_set(CAIRN_EINVAL, "branch name too long");
	be32_put(v, b->parent);
	be64_put(v + 4, b->fork_rev);
	be64_put(v + 12, b->head_rev);
	be64_put(v + 20, (uint64_t)b->created_ms);
	memcpy(v + 28, b->head_hash, 32);
	v[60] = b->state;
	be64_put(v + 61, b->progress);
	memcpy(v + 69, name, nl + 1);
	ckey(&k, dom, CAT_BRANCH);
	kb_be32(&k, b->id);
	return db_put(txn, st, DB_CATALOG, k.b, k.n, v, 69 + nl + 1, 0);
}

#define DOMAINS_NAMED 16 /* the Domains a "no Domain" message lists */

/* CAIRN_ENODOMAIN for name, with the closest name there is and the first Domains. */
static int no_domain(MDB_txn *txn, cairn_store *st, const char *name)
{
	char names[DOMAINS_NAMED][CAIRN_MAX_NAME + 1], list[DOMAINS_NAMED * 24 + 64];
	const char *ptrs[DOMAINS_NAMED], *near;
	size_t n = 0, more = 0, len = 0;
	MDB_cursor *cur;
	MDB_val k, v;
	kbuf p;
	int mrc;

	ckey(&p, 0, CAT_NAME);
	if (!mdb_cursor_open(txn, st->dbi[DB_CATALOG], &cur)) {
		k.mv_data = p.b;
		k.mv_size = p.n;
		for (mrc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
		     mrc == 0 && k.mv_size > p.n && memcmp(k.mv_data, p.b, p.n) == 0;
		     mrc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
			size_t nl = k.mv_size - p.n;

			if (nl > CAIRN_MAX_NAME)
				continue;
			if (n == DOMAINS_NAMED) {
				more++;
				continue;
			}
			memcpy(names[n], (uint8_t *)k.mv_data + p.n, nl);
			names[n][nl] = '\0';
			ptrs[n] = names[n];
			n++;
		}
		mdb_cursor_close(cur);
	}
	if (!n)
		return err_set(CAIRN_ENODOMAIN,
			       "no Domain named \"%s\": the store has no Domain yet (create one)",
			       name);
	for (size_t i = 0; i < n && len < sizeof(list); i++)
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s", i ? ", " : "",
					names[i]);
	if (more && len < sizeof(list))
		snprintf(list + len, sizeof(list) - len, " and %zu more", more);
	near = text_closest(name, strlen(name), ptrs, n);
	return err_set(CAIRN_ENODOMAIN, "no Domain named \"%s\"%s%s%s; the Domains are %s", name,
		       near ? " (did you mean \"" : "", near ? near : "", near ? "\"?)" : "", list);
}

int domain_id(MDB_txn *txn, cairn_store *st, const char *name, uint32_t *dom)
{
	kbuf k;
	MDB_val v;
	int rc;

	ckey(&k, 0, CAT_NAME);
	kb_bytes(&k, name, strlen(name));
	rc = db_get(txn, st, DB_CATALOG, k.b, k.n, &v);
	if (rc == CAIRN_ENOTFOUND)
		return no_domain(txn, st, name);
	if (rc)
		return rc;
	if (v.mv_size != 4)
		return err_set(CAIRN_ECORRUPT, "Domain %s: bad id", name);
	*dom = be32_get(v.mv_data);
	return 0;
}

/* Load the latest schema of a Domain. */
int schema_current(MDB_txn *txn, cairn_store *st, uint32_t dom, schema **out)
{
	MDB_cursor *cur;
	MDB_val k, v;
	kbuf p;
	int rc;

	ckey(&p, dom, CAT_SCHEMA);
	rc = mdb_cursor_open(txn, st->dbi[DB_CATALOG], &cur);
	if (rc)
		return store_err(rc, "catalog");
	k.mv_data = p.b;
	k.mv_size = p.n;
	rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
	if (rc == 0 && k.mv_size == p.n + 8 && memcmp(k.mv_data, p.b, p.n) == 0) {
		uint64_t rev = ~be64_get((uint8_t *)k.mv_data + p.n);

		rc = schema_load(v.mv_data, v.mv_size, rev, out);
	} else if (rc == 0 || rc == MDB_NOTFOUND) {
		*out = schema_new();
		rc = *out ? 0 : err_set(CAIRN_ENOMEM, "out of memory");
	} else {
		rc = store_err(rc, "catalog");
	}
	mdb_cursor_close(cur);
	return rc;
}

/* Find or load the schema of (name, dom) at catalog generation gen. */
static int schema_ref_get(cairn_store *st, MDB_txn *txn, const char *name, uint32_t dom,
			  uint64_t gen, struct schema_ref **out)
{
	struct model_cache *mc;
	struct cache_entry *e;
	struct schema_ref *r;
	schema *s;
	int rc;

	pthread_mutex_lock(&st->cache_lock);
	mc = st->cache;
	for (size_t i = 0; mc && i < mc->n; i++) {
		e = &mc->e[i];
		if (e->dom == dom && e->gen == gen && strcmp(e->name, name) == 0) {
			e->sref->refs++;
			*out = e->sref;
			pthread_mutex_unlock(&st->cache_lock);
			return 0;
		}
	}
	pthread_mutex_unlock(&st->cache_lock);

	rc = schema_current(txn, st, dom, &s);
	if (rc)
		return rc;
	r = cr_malloc(sizeof(*r));
	if (!r) {
		schema_free(s);
		return err_set(CAIRN_ENOMEM, "out of memory");
	}
	r->s = s;
	r->refs = 1;
	*out = r;

	/* Remember it (best effort: a cache that cannot grow is just not used). */
	pthread_mutex_lock(&st->cache_lock);
	if (!st->cache) {
		st->cache = cr_calloc(1, sizeof(*st->cache));
		st->cache_free = cache_free;
	}
	mc = st->cache;
	if (mc) {
		size_t i;

		for (i = 0; i < mc->n; i++)
			if (strcmp(mc->e[i].name, name) == 0)
				break;
		if (i == mc->n) {
			e = cr_reallocarray(mc->e, mc->n + 1, sizeof(*e));
			if (e) {
				mc->e = e;
				mc->n++;
				mc->e[i].sref = NULL;
			}
		}
		if (i < mc->n) {
			e = &mc->e[i];
			sref_put(e->sref);
			snprintf(e->name, sizeof(e->name), "%s", name);
			e->dom = dom;
			e->gen = gen;
			e->sref = r;
			r->refs++;
		}
	}
	pthread_mutex_unlock(&st->cache_lock);
	return 0;
}

static int branch_id(MDB_txn *txn, cairn_store *st, uint32_t dom, const char *name, uint32_t *id)
{
	kbuf k;
	MDB_val v;
	int rc;

	ckey(&k, dom, CAT_BNAME);
	kb_bytes(&k, name, strlen(name));
	if (k.over)
		return err_set(CAIRN_ENOBRANCH, "no branch named \"%s\"", name);
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

int dctx_open(dctx *c, cairn_store *st, MDB_txn *txn, const char *domain, const char *branch)
{
	uint64_t gen;
	uint32_t bid = 0;
	branch_info b;
	int rc;

	memset(c, 0, sizeof(*c));
	c->st = st;
	c->txn = txn;
	if (!domain || !name_valid(domain, CAIRN_MAX_NAME))
		return err_set(domain ? CAIRN_ENODOMAIN : CAIRN_EINVAL, "no Domain named \"%s\"",
			       domain ? domain : "(null)");
	if (!branch)
		branch = "main";
	if ((rc = meta_get_u64(txn, st, "gen", &gen)) || (rc = domain_id(txn, st, domain, &c->dom)))
		return rc;
	if (strcmp(branch, "main") == 0)
		bid = MAIN_BRANCH_ID;
	else if (!branch_name_valid(branch))
		return err_set(CAIRN_ENOBRANCH, "no branch named \"%s\"", branch);
	else if ((rc = branch_id(txn, st, c->dom, branch, &bid)))
		return rc;
	rc = branch_get(txn, st, c->dom, bid, &c->br);
	if (rc == CAIRN_ENOTFOUND)
		return err_set(CAIRN_ENOBRANCH, "no branch named \"%s\"", branch);
	if (rc)
		return rc;
	c->rev = branch_head(&c->br);
	c->v.n = 1;
	c->v.lv[0].branch = bid;
	c->v.lv[0].limit = UINT64_MAX;
	for (b = c->br; b.parent;) {
		uint64_t limit = b.fork_rev;

		if (c->v.n == VIEW_MAX)
			return err_set(CAIRN_ELIMIT, "branch %s descends from more than %d branches",
				       branch, VIEW_MAX - 1);
		rc = branch_get(txn, st, c->dom, b.parent, &b);
		if (rc)
			return rc == CAIRN_ENOTFOUND
				       ? err_set(CAIRN_ECORRUPT, "branch %s: parent missing", branch)
				       : rc;
		c->v.lv[c->v.n].branch = b.id;
		c->v.lv[c->v.n].limit = limit;
		c->v.n++;
	}
	rc = schema_ref_get(st, txn, domain, c->dom, gen, &c->sref);
	if (rc)
		return rc;
	c->s = c->sref->s;
	return 0;
}

int dctx_open_write(dctx *c, cairn_store *st, MDB_txn *txn, const cairn_commit_options *o,
		    int *created)
{
	int rc = dctx_open(c, st, txn, o->domain, o->branch);

	*created = 0;
	if (rc != CAIRN_ENODOMAIN || !o->create_domain)
		return rc;
	if (!name_valid(o->domain, CAIRN_MAX_NAME))
		return err_set(CAIRN_EINVAL,
			       "Domain name \"%s\" is not 1 to %d characters of letters, digits, "
			       "'_', '.' and '-'",
			       o->domain, CAIRN_MAX_NAME);
	dctx_close(c);
	if ((rc = domain_create_txn(txn, st, o->domain)))
		return rc;
	*created = 1;
	return dctx_open(c, st, txn, o->domain, o->branch);
}

/* A view of branch id (by id) at its head, sharing base's transaction and schema. */
int dctx_branch(const dctx *base, uint32_t id, dctx *out)
{
	branch_info b;
	int rc;

	*out = *base;
	out->sref = NULL; /* borrows base's schema: close base last */
	out->kcur = NULL;
	out->lcache = NULL;
	out->lcache_n = 0;
	out->readonly = 0;
	memset(&out->stats, 0, sizeof(out->stats));
	if ((rc = branch_get(base->txn, base->st, base->dom, id, &out->br)))
		return rc;
	out->v.n = 1;
	out->v.lv[0].branch = id;
	out->v.lv[0].limit = UINT64_MAX;
	for (b = out->br; b.parent;) {
		uint64_t limit = b.fork_rev;

		if (out->v.n == VIEW_MAX)
			return err_set(CAIRN_ELIMIT, "branch %s descends from more than %d branches",
				       out->br.name, VIEW_MAX - 1);
		if ((rc = branch_get(base->txn, base->st, base->dom, b.parent, &b)))
			return rc;
		out->v.lv[out->v.n].branch = b.id;
		out->v.lv[out->v.n].limit = limit;
		out->v.n++;
	}
	return 0;
}

void dctx_at(dctx *c, uint64_t rev)
{
	if (c->lcache) /* another view, other chunks */
		memset(c->lcache, 0, c->lcache_n * sizeof(*c->lcache));
	c->rev = rev;
	for (int i = 0; i < c->v.n; i++)
		if (c->v.lv[i].limit > rev)
			c->v.lv[i].limit = rev;
}

void dctx_close(dctx *c)
{
	if (c->kcur) {
		mdb_cursor_close(c->kcur);
		c->kcur = NULL;
	}
	cr_free(c->lcache);
	c->lcache = NULL;
	c->lcache_n = 0;
	if (c->sref) {
		pthread_mutex_lock(&c->st->cache_lock);
		sref_put(c->sref);
		pthread_mutex_unlock(&c->st->cache_lock);
		c->sref = NULL;
	}
}

/* ----------------------------------------------------------- Domains -- */

static int log_event(MDB_txn *txn, cairn_store *st, int type, uint32_t dom, const char *name)
{
	uint64_t seq;
	buf b = BUF_INIT;
	kbuf k;
	int rc;

	if ((rc = meta_get_u64(txn, st, "domain_log", &seq)) ||
	    (rc = meta_put_u64(txn, st, "domain_log", seq + 1)))
		return rc;
	buf_put_u8(&b, (uint8_t)type);
	buf_put_be32(&b, dom);
	buf_put_be64(&b, (uint64_t)time_now_ms());
	buf_put_str(&b, name, strlen(name));
	if (b.oom) {
		buf_release(&b);
		return err_set(CAIRN_ENOMEM, "out of memory");
	}
	ckey(&k, 0, CAT_LOG);
	kb_be64(&k, seq + 1);
	rc = db_put(txn, st, DB_CATALOG, k.b, k.n, b.p, b.len, 0);
	buf_release(&b);
	return rc;
}

int domain_create_txn(MDB_txn *txn, cairn_store *st, const char *name)
{
	uint64_t next;
	uint32_t dom;
	counters ctr = {1, 1, 1, 0};
	branch_info main_b = {0};
	buf b = BUF_INIT;
	kbuf k;
	MDB_val v;
	int rc;

	ckey(&k, 0, CAT_NAME);
	kb_bytes(&k, name, strlen(name));
	rc = db_get(txn, st, DB_CATALOG, k.b, k.n, &v);
	if (rc == 0)
		return err_set(CAIRN_EEXIST, "Domain \"%s\" already exists", name);
	if (rc != CAIRN_ENOTFOUND)
		return rc;
	if ((rc = meta_get_u64(txn, st, "next_domain", &next)))
		return rc;
	if (next == 0)
		next = 1;
	if (next > UINT32_MAX)
		return err_set(CAIRN_ELIMIT, "no Domain ids left");
	dom = (uint32_t)next;
	if ((rc = meta_put_u64(txn, st, "next_domain", next + 1)))
		return rc;
	{
		uint8_t id[4];

		be32_put(id, dom);
		if ((rc = db_put(txn, st, DB_CATALOG, k.b, k.n, id, 4, 0)))
			return rc;
	}
	buf_put_u8(&b, 0);
	buf_put_be64(&b, (uint64_t)time_now_ms());
	buf_put(&b, name, strlen(name) + 1);
	if (b.oom) {
		buf_release(&b);
		return err_set(CAIRN_ENOMEM, "out of memory");
	}
	ckey(&k, dom, CAT_INFO);
	rc = db_put(txn, st, DB_CATALOG, k.b, k.n, b.p, b.len, 0);
	buf_release(&b);
	if (rc || (rc = counters_put(txn, st, dom, &ctr)))
		return rc;
	main_b.id = MAIN_BRANCH_ID;
	main_b.created_ms = time_now_ms();
	if ((rc = branch_put(txn, st, dom, &main_b, "main")))
		return rc;
	{
		uint8_t id[4];

		be32_put(id, MAIN_BRANCH_ID);
		ckey(&k, dom, CAT_BNAME);
		kb_bytes(&k, "main", 4);
		if ((rc = db_put(txn, st, DB_CATALOG, k.b, k.n, id, 4, 0)))
			return rc;
	}
	if ((rc = log_event(txn, st, 1, dom, name)))
		return rc;
	return catalog_touch(txn, st);
}

struct in_domain {
	const char *domain;
	domain_write_fn fn;
	void *arg;
	int touch;
};

static int in_domain_txn(MDB_txn *txn, cairn_store *st, void *arg)
{
	struct in_domain *a = arg;
	dctx d;
	int rc = dctx_open(&d, st, txn, a->domain, NULL);

	if (!rc)
		rc = a->fn(txn, st, &d, a->arg);
	dctx_close(&d);
	return rc || !a->touch ? rc : catalog_touch(txn, st);
}

int domain_write(cairn_store *st, const char *domain, domain_write_fn fn, void *arg, int catalog)
{
	struct in_domain a = {domain, fn, arg, catalog};
	int rc = store_write(st, in_domain_txn, &a);

	if (!rc && catalog)
		cache_invalidate(st);
	return rc;
}

static int create_txn(MDB_txn *txn, cairn_store *st, void *name)
{
	return domain_create_txn(txn, st, name);
}

int cairn_domain_create(cairn_store *st, const char *name)
{
	int rc;

	if (!st || !name)
		return err_set(CAIRN_EINVAL, "cairn_domain_create: NULL argument");
	if (!name_valid(name, CAIRN_MAX_NAME))
		return err_set(CAIRN_EINVAL,
			       "Domain name \"%s\" is not 1 to %d characters of letters, digits, "
			       "'_', '.' and '-'",
			       name, CAIRN_MAX_NAME);
	if (!(rc = store_write(st, create_txn, (void *)name)))
		cache_invalidate(st);
	return rc;
}

static int domain_drop_txn(MDB_txn *txn, cairn_store *st, void *arg)
{
	const char *name = arg;
	uint32_t dom;
	uint8_t p[4];
	kbuf k;
	int rc;

	if ((rc = domain_id(txn, st, name, &dom)))
		return rc;
	ckey(&k, 0, CAT_NAME);
	kb_bytes(&k, name, strlen(name));
	if ((rc = db_del(txn, st, DB_CATALOG, k.b, k.n)))
		return rc;
	be32_put(p, dom);
	for (int db = DB_CATALOG; db < DB_COUNT; db++)
		if ((rc = db_del_prefix(txn, st, db, p, 4, NULL)))
			return rc;
	if ((rc = log_event(txn, st, 2, dom, name)))
		return rc;
	return catalog_touch(txn, st);
}

int cairn_domain_drop(cairn_store *st, const char *name)
{
	int rc;

	if (!st || !name)
		return err_set(CAIRN_EINVAL, "cairn_domain_drop: NULL argument");
	if (!name_valid(name, CAIRN_MAX_NAME))
		return err_set(CAIRN_ENODOMAIN, "no Domain named \"%s\"", name);
	if (!(rc = store_write(st, domain_drop_txn, (void *)name)))
		cache_invalidate(st);
	return rc;
}

int cairn_domain_list(cairn_store *st, int (*cb)(void *ctx, const cairn_domain_info *d),
		      void *ctx)
{
	MDB_txn *txn;
	MDB_cursor *cur;
	MDB_val k, v;
	kbuf p;
	int rc, mrc;

	if (!st || !cb)
		return err_set(CAIRN_EINVAL, "cairn_domain_list: NULL argument");
	rc = store_read_begin(st, &txn);
	if (rc)
		return rc;
	mrc = mdb_cursor_open(txn, st->dbi[DB_CATALOG], &cur);
	if (mrc) {
		store_read_end(st, txn);
		return store_err(mrc, "catalog");
	}
	ckey(&p, 0, CAT_NAME);
	k.mv_data = p.b;
	k.mv_size = p.n;
	for (mrc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); mrc == 0;
	     mrc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		char name[CAIRN_MAX_NAME + 1];
		cairn_domain_info d = {0};
		counters ctr;
		kbuf ik;
		MDB_val iv;

		if (k.mv_size <= p.n || memcmp(k.mv_data, p.b, p.n) != 0)
			break;
		if (v.mv_size != 4 || k.mv_size - p.n > CAIRN_MAX_NAME) {
			rc = err_set(CAIRN_ECORRUPT, "catalog: bad Domain name entry");
			break;
		}
		memcpy(name, (uint8_t *)k.mv_data + p.n, k.mv_size - p.n);
		name[k.mv_size - p.n] = '\0';
		d.name = name;
		d.id = be32_get(v.mv_data);
		ckey(&ik, (uint32_t)d.id, CAT_INFO);
		if (db_get(txn, st, DB_CATALOG, ik.b, ik.n, &iv) == 0 && iv.mv_size >= 9)
			d.created_ms = (int64_t)be64_get((uint8_t *)iv.mv_data + 1);
		if (counters_get(txn, st, (uint32_t)d.id, &ctr) == 0)
			d.revision = ctr.next_rev - 1;
		if ((rc = horizon_get(txn, st, (uint32_t)d.id, &d.horizon)))
			break;
		rc = cb(ctx, &d);
		if (rc)
			break;
	}
	if (mrc && mrc != MDB_NOTFOUND && !rc)
		rc = store_err(mrc, "catalog");
	mdb_cursor_close(cur);
	store_read_end(st, txn);
	return rc;
}

int schema_store(MDB_txn *txn, cairn_store *st, uint32_t dom, uint64_t rev, const schema *s)
{
	kbuf k;

	ckey(&k, dom, CAT_SCHEMA);
	kb_be64(&k, ~rev);
	return db_put(txn, st, DB_CATALOG, k.b, k.n, s->json, s->json_len, 0);
}

int schema_json_at(MDB_txn *txn, cairn_store *st, uint32_t dom, uint64_t rev, const char **json,
		   size_t *len)
{
	MDB_cursor *cur;
	MDB_val k, v;
	kbuf p, s;
	int rc;

	ckey(&p, dom, CAT_SCHEMA);
	s = p;
	kb_be64(&s, ~rev);
	rc = mdb_cursor_open(txn, st->dbi[DB_CATALOG], &cur);
	if (rc)
		return store_err(rc, "catalog");
	k.mv_data = s.b;
	k.mv_size = s.n;
	rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
	if (rc == 0 && k.mv_size == p.n + 8 && memcmp(k.mv_data, p.b, p.n) == 0) {
		*json = v.mv_data;
		*len = v.mv_size;
	} else if (rc == 0 || rc == MDB_NOTFOUND) {
		*json = "{\"kinds\":[],\"relations\":[]}";
		*len = strlen(*json);
		rc = 0;
	} else {
		rc = store_err(rc, "catalog");
	}
	mdb_cursor_close(cur);
	return rc;
}
