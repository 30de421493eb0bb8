/*
 * The names index (DB_NAMES): every name a Record is known by (its key, its
 * title, its unique and alias string values), normalized (model/norm.c),
 * mapped to the Version that brought the name to its Record. Resolution
 * (query/resolve.c) reads it; a later Version that keeps a name relies on
 * the earlier entry (docs/storage.md, "Names").
 */
#include <string.h>

#include "base/err.h"
#include "base/json.h"
#include "base/text.h"
#include "index/names/names.h"
#include "model/norm.h"

/* Is e the value v, or one of its items? */
static int in_value(const jv *v, const jv *e)
{
	for (size_t i = 0; jv_is(v, JV_ARRAY) && i < v->len; i++)
		if (jv_equal(&v->u.items[i], e))
			return 1;
	return v && jv_equal(v, e);
}

int record_names(const kind_def *k, const char *key, size_t key_len, const char *title,
		 size_t title_len, const jv *values, const jv *same, int all,
		 int (*fn)(void *ctx, const char *norm, size_t len, int src, uint32_t attr), void *ctx)
{
	char norm[NAME_CAP];
	size_t n;
	int rc;

	if ((n = name_norm(key, key_len, norm)) && (rc = fn(ctx, norm, n, NS_KEY, 0)))
		return rc;
	if ((n = name_norm(title, title_len, norm)) && (rc = fn(ctx, norm, n, NS_TITLE, 0)))
		return rc;
	for (size_t i = 0; values && i < k->n_attrs; i++) {
		const attr_def *a = &k->attrs[i];
		const jv *v = all || attr_names(a) ? jv_get(values, a->name) : NULL;
		size_t m = jv_is(v, JV_ARRAY) ? v->len : 1;

		const jv *was = same ? jv_get(same, a->name) : NULL;

		for (size_t j = 0; v && j < m; j++) {
			const jv *e = jv_is(v, JV_ARRAY) ? &v->u.items[j] : v;

			if (e->type != JV_STRING || in_value(was, e))
				continue;
			if ((n = name_norm(e->u.s, e->len, norm)) &&
			    (rc = fn(ctx, norm, n, NS_ATTR, a->id)))
				return rc;
		}
	}
	return 0;
}

/* Does text normalize to the name of an entry? */
static int names_as(const char *text, size_t n, const name_entry *ne)
{
	char norm[NAME_CAP];
	size_t len = name_norm(text, n, norm);

	return len == ne->norm_len && memcmp(norm, ne->norm, len) == 0;
}

int version_has_name(const kind_def *k, const vrec *v, const jv *vals, const name_entry *ne)
{
	const attr_def *a = k ? kind_attr_id(k, ne->attr) : NULL;
	arena tmp = ARENA_INIT;
	const jv *val;
	int found = 0;

	if (ne->src == NS_KEY)
		return names_as(v->key, v->key_len, ne);
	if (ne->src == NS_TITLE)
		return names_as(v->title, v->title_len, ne);
	if (!a)
		return 0;
	if (!vals)
		vals = jv_parse(&tmp, v->values, v->values_len, "stored values");
	val = vals ? jv_get(vals, a->name) : NULL;
	for (size_t i = 0; val && i < (jv_is(val, JV_ARRAY) ? val->len : 1) && !found; i++) {
		const jv *e = jv_is(val, JV_ARRAY) ? &val->u.items[i] : val;

		found = e->type == JV_STRING && names_as(e->u.s, e->len, ne);
	}
	arena_release(&tmp);
	return found;
}

void key_name(kbuf *k, uint32_t dom, const char *norm, size_t len)
{
	kb_init(k);
	kb_be32(k, dom);
	kb_bytes(k, norm, len);
	kb_u8(k, 0);
}

void key_name_entry(kbuf *k, uint32_t dom, const char *norm, size_t len, uint64_t vid, int src,
		    uint32_t attr)
{
	key_name(k, dom, norm, len);
	kb_be64(k, vid);
	kb_u8(k, (uint8_t)src);
	kb_be32(k, attr);
}

int name_entry_parse(const void *key, size_t kn, name_entry *out)
{
	const uint8_t *k = key;
	const uint8_t *z;

	if (kn < 4 + 1 + 13)
		return -1;
	z = memchr(k + 4, 0, kn - 4);
	if (!z || (size_t)(k + kn - z) != 14)
		return -1;
	out->norm = (const char *)k + 4;
	out->norm_len = (size_t)(z - k) - 4;
	out->vid = be64_get(z + 1);
	out->src = z[9];
	out->attr = be32_get(z + 10);
	return out->src >= NS_KEY && out->src <= NS_ATTR ? 0 : -1;
}

struct names_op {
	dctx *d;
	uint64_t vid;
	int del;
};

static int names_op_one(void *ctx, const char *norm, size_t len, int src, uint32_t attr)
{
	struct names_op *o = ctx;
	kbuf k;
	int rc;

	key_name_entry(&k, o->d->dom, norm, len, o->vid, src, attr);
	if (o->del)
		return (rc = db_del(o->d->txn, o->d->st, DB_NAMES, k.b, k.n)) == CAIRN_ENOTFOUND ? 0 : rc;
	return db_put(o->d->txn, o->d->st, DB_NAMES, k.b, k.n, "", 0, 0);
}

int names_entries_put(dctx *d, const kind_def *k, const vrec *v, const jv *values, uint64_t vid,
		      const vrec *pv, const jv *pvalues, int del)
{
	struct names_op o = {d, vid, del};
	int title = !pv || pv->title_len != v->title_len ||
		    memcmp(pv->title, v->title, v->title_len) != 0;

	/* Deleting, every string value: the entries may come from an earlier schema. */
	return record_names(k, pv ? NULL : v->key, pv ? 0 : v->key_len, title ? v->title : NULL,
			    title ? v->title_len : 0, values, pv ? pvalues : NULL, del, names_op_one,
			    &o);
}

/* ------------------------------------------------------------ the ops -- */

struct names_put {
	index_commit *ic;
	uint64_t vid;
};

static int name_put_one(void *ctx, const char *norm, size_t len, int src, uint32_t attr)
{
	struct names_put *p = ctx;
	kbuf k;

	key_name_entry(&k, p->ic->d->dom, norm, len, p->vid, src, attr);
	return wl_add(p->ic->wl, DB_NAMES, k.b, k.n, "", 0);
}

/*
 * The names entries of a new Record Version: only the names its
 * predecessor did not have, so an entry names the Version that brought the
 * name to its Record (storage.md, "Names"), and a commit that changes no
 * name writes none.
 */
static int names_put(index_commit *ic, const index_rec *r)
{
	struct names_put p = {ic, r->vid};
	int is_new = !r->prev_values;
	int title = is_new || r->renamed;

	return record_names(r->k, is_new ? r->v->key : NULL, is_new ? r->v->key_len : 0,
			    title ? r->v->title : NULL, title ? r->v->title_len : 0, r->values,
			    r->prev_values, 0, name_put_one, &p);
}

/* A schema change that makes an attribute name its Records (unique or alias). */
static int names_add_record(dctx *d, const kind_def *k, const vrec *v, const jv *values,
			    uint64_t vid)
{
	return names_entries_put(d, k, v, values, vid, NULL, NULL, 0);
}

/*
 * The names entries of every Record Version of the Domain, as its commits
 * would have written them (an upgrade from a store without the index).
 */
static int names_rebuild(dctx *d, const schema *s)
{
	cairn_store *st = d->st;
	MDB_txn *txn = d->txn;
	MDB_cursor *cur;
	MDB_val k, v;
	uint8_t p[4];
	int mrc, rc;

	be32_put(p, d->dom);
	if ((mrc = mdb_cursor_open(txn, st->dbi[DB_VERSIONS], &cur)))
		return store_err(mrc, "versions");
	k.mv_data = p;
	k.mv_size = 4;
	rc = 0;
	for (mrc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); mrc == 0 && !rc;
	     mrc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		const kind_def *kd;
		arena tmp = ARENA_INIT;
		const jv *vals, *pvals = NULL;
		vrec ver, pv;
		int has_prev = 0;

		if (k.mv_size != 12 || memcmp(k.mv_data, p, 4) != 0)
			break;
		if (vrec_decode(v.mv_data, v.mv_size, &ver)) {
			rc = err_set(CAIRN_ECORRUPT, "a Version does not decode");
			break;
		}
		if (ver.type != V_REC || !(kd = schema_kind_id(s, ver.kr)))
			continue;
		/* As a commit writes them: the names its predecessor lacked. */
		if (ver.prev && (rc = version_get(d, ver.prev, &pv)) == 0 && pv.type == V_REC) {
			has_prev = 1;
			pvals = jv_parse(&tmp, pv.values, pv.values_len, "stored values");
		} else if (rc && rc != CAIRN_ENOTFOUND) {
			break;
		}
		rc = 0;
		vals = jv_parse(&tmp, ver.values, ver.values_len, "stored values");
		rc = vals && (!has_prev || pvals)
			     ? names_entries_put(d, kd, &ver, vals, be64_get((uint8_t *)k.mv_data + 4),
						 has_prev ? &pv : NULL, pvals, 0)
			     : err_set(CAIRN_ECORRUPT, "stored values do not parse");
		arena_release(&tmp);
	}
	mdb_cursor_close(cur);
	if (!rc && mrc && mrc != MDB_NOTFOUND)
		rc = store_err(mrc, "versions");
	return rc;
}

static int names_check_entry(index_check *c, const uint8_t *k, size_t kn)
{
	name_entry ne;
	vrec ver;
	int rc, found = 0;

	(*c->entries)++;
	if (name_entry_parse(k, kn, &ne)) {
		c->problem(c, "names: malformed entry");
		return 0;
	}
	if ((rc = c->version(c, ne.vid, &ver, "a names entry")))
		return rc > 0 ? 0 : rc;
	if (ver.type != V_REC) {
		c->problem(c, "names entry for Version %llu, which is not a Record",
			(unsigned long long)ne.vid);
		return 0;
	}
	found = version_has_name(schema_kind_id(c->d->s, ver.kr), &ver, NULL, &ne);
	if (!found)
		c->problem(c, "names entry for Version %llu names what it does not have",
			(unsigned long long)ne.vid);
	return 0;
}

/* cairn check: every names entry of the Domain names a Record Version that has that name. */
static int names_check(index_check *c)
{
	MDB_cursor *cur;
	MDB_val k, v;
	uint8_t p[4];
	int mrc, rc = 0;

	be32_put(p, c->d->dom);
	if ((mrc = mdb_cursor_open(c->d->txn, c->d->st->dbi[DB_NAMES], &cur)))
		return store_err(mrc, "names");
	k.mv_data = p;
	k.mv_size = 4;
	for (mrc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); mrc == 0 && !rc;
	     mrc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		if (k.mv_size < 4 || memcmp(k.mv_data, p, 4) != 0)
			break;
		rc = names_check_entry(c, k.mv_data, k.mv_size);
	}
	mdb_cursor_close(cur);
	if (rc)
		return rc;
	return mrc && mrc != MDB_NOTFOUND ? store_err(mrc, "names") : 0;
}

/* Compaction: the names of a Version no read sees, but those its successor still has. */
static int names_drop(dctx *d, const kind_def *k, const vrec *v, const jv *values, uint64_t vid,
		      const vrec *succ, const jv *succ_values)
{
	return names_entries_put(d, k, v, values, vid, succ, succ_values, 1);
}

const index_ops names_index = {
	.name = "names",
	.put = names_put,
	.delta_record = DELTA_NAMES,
	.add_record = names_add_record,
	.format = 5,
	.rebuild = names_rebuild,
	.check = names_check,
	.drop = names_drop,
};
