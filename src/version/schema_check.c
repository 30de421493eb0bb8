/*
 * Schema changes against existing data: before a schema change commits,
 * every Record current on any branch of the Domain is checked against what
 * the change tightens (types, required, unique, enum values, ref targets,
 * cardinality), and the indexes it adds are built. The refusal names the
 * first offending Records.
 */
#include <stdio.h>
#include <string.h>

#include "base/json.h"
#include "base/alloc.h"
#include "base/err.h"
#include "base/hmap.h"
#include "version/index.h"
#include "version/version.h"

#define MAX_NAMED 10

typedef struct offenders {
	buf msg;
	size_t n;
} offenders;

static void offend(offenders *o, const char *what, const char *key, size_t key_len,
		   const char *branch, const char *why)
{
	if (o->n < MAX_NAMED)
		buf_printf(&o->msg, "%s %s:%.*s on branch %s (%s)", o->n ? ";" : "", what,
			   (int)key_len, key, branch, why);
	o->n++;
}

/* Call fn for every Record of Kind kind visible in the view of d. */
typedef int (*rec_fn)(dctx *d, uint64_t vid, const vrec *v, const jv *values, void *arg);

static int each_record(dctx *d, uint32_t kind, rec_fn fn, void *arg)
{
	MDB_cursor *cur;
	MDB_val k, v;
	kbuf p;
	uint8_t last[4 + 4 + CAIRN_MAX_KEY + 1];
	size_t last_len = 0;
	int mrc, rc = 0;

	kb_init(&p);
	kb_be32(&p, d->dom);
	kb_be32(&p, kind);
	mrc = mdb_cursor_open(d->txn, d->st->dbi[DB_KEYS], &cur);
	if (mrc)
		return store_err(mrc, "keys");
	k.mv_data = p.b;
	k.mv_size = p.n;
	for (mrc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); mrc == 0 && !rc;
	     mrc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		const uint8_t *kk = k.mv_data;
		size_t ident_len = k.mv_size - 8;
		uint64_t vid;
		arena tmp = ARENA_INIT;
		const jv *vals;
		ventry e;
		vrec ver;
		int newer;

		if (k.mv_size < p.n + 9 || memcmp(kk, p.b, p.n) != 0)
			break;
		if (ident_len > sizeof(last) || ventry_decode(v.mv_data, v.mv_size, VE_KEYS, &e)) {
			rc = err_set(CAIRN_ECORRUPT, "keys: malformed entry");
			break;
		}
		if (last_len == ident_len && memcmp(last, kk, ident_len) == 0)
			continue; /* this identity is decided */
		if (!view_sees(&d->v, e.branch, e.rev))
			continue;
		memcpy(last, kk, ident_len);
		last_len = ident_len;
		vid = ~be64_get(kk + ident_len);
		if ((rc = kseg_newer(d, kk, ident_len, vid, &e, &vid, &newer)))
			break;
		if (e.flags & EF_TOMBSTONE)
			continue;
		if ((rc = version_get(d, vid, &ver)))
			break;
		vals = jv_parse(&tmp, ver.values, ver.values_len, "stored values");
		if (!vals)
			rc = err_code() == CAIRN_ENOMEM
				     ? CAIRN_ENOMEM
				     : err_set(CAIRN_ECORRUPT, "stored values do not parse");
		else
			rc = fn(d, vid, &ver, vals, arg);
		arena_release(&tmp);
	}
	mdb_cursor_close(cur);
	if (rc)
		return rc;
	return mrc && mrc != MDB_NOTFOUND ? store_err(mrc, "keys") : 0;
}

struct attr_check {
	const kind_def *k;
	const attr_def *a;
	int what;
	offenders *off;
	hmap *seen; /* DELTA_UNIQUE: canonical values seen on this branch */
	const index_ops *ix; /* the secondary index that takes the Records with a value */
};

static int check_one(dctx *d, uint64_t vid, const vrec *v, const jv *values, void *arg)
{
	struct attr_check *ac = arg;
	const jv *val = jv_get(values, ac->a->name);
	char why[512];

	if (ac->ix)
		return val ? ac->ix->add_record(d, ac->k, v, values, vid) : 0;
	switch (ac->what) {
	case DELTA_INDEXED:
		return val ? attr_entries_put(d, ac->k->id, v->key, v->key_len, values, vid) : 0;
	case DELTA_REQUIRED:
		if (!val)
			offend(ac->off, ac->k->name, v->key, v->key_len, d->br.name,
			       "it has no value for the required attribute");
		return 0;
	case DELTA_TYPE:
	case DELTA_ENUM:
		if (!val)
			return 0;
		if (attr_value_check(ac->a, val, why, sizeof(why))) {
			offend(ac->off, ac->k->name, v->key, v->key_len, d->br.name, why);
		} else if (ac->a->type == AT_REF) {
			ident id;
			int rc = val->len && val->len <= CAIRN_MAX_KEY
					 ? rec_lookup(d, ac->a->ref_kind, val->u.s, val->len, &id)
					 : (memset(&id, 0, sizeof(id)), 0);

			if (rc)
				return rc;
			if (!id.visible) {
				snprintf(why, sizeof(why), "%s names %s:%.*s, which does not exist",
					 ac->a->name, ac->a->ref, (int)val->len, val->u.s);
				offend(ac->off, ac->k->name, v->key, v->key_len, d->br.name, why);
			}
		}
		return 0;
	case DELTA_REF:
		if (val)
			offend(ac->off, ac->k->name, v->key, v->key_len, d->br.name,
			       "it has a value for the attribute whose ref Kind changed");
		return 0;
	case DELTA_UNIQUE: {
		buf t = BUF_INIT;
		uint64_t *slot;
		int isnew;

		if (!val)
			return 0;
		attr_encode(ac->a, val, &t); /* as the index compares: 4 and 4.0 are one value */
		slot = t.oom ? NULL : hmap_put(ac->seen, t.p, t.len, &isnew);
		buf_release(&t);
		if (!slot)
			return err_set(CAIRN_ENOMEM, "out of memory");
		if (!isnew)
			offend(ac->off, ac->k->name, v->key, v->key_len, d->br.name,
			       "another Record has the same value of the attribute made unique");
		return 0;
	}
	}
	return 0;
}

/* The Kind and key of the from-Record of the Link whose adj key is kk, from its adj_rev entry. */
static int from_record(dctx *d, const uint8_t *kk, const char **kind, const char **key,
		       size_t *key_len)
{
	const kind_def *k;
	MDB_val rv;
	kbuf rk;
	ventry re;
	int rc;

	key_adj(&rk, d->dom, be64_get(kk + 16), be32_get(kk + 12), be64_get(kk + 4));
	kb_bytes(&rk, kk + 24, 8);
	if ((rc = db_get(d->txn, d->st, DB_ADJR, rk.b, rk.n, &rv)))
		return rc == CAIRN_ENOTFOUND ? err_set(CAIRN_ECORRUPT, "adj_rev entry missing") : rc;
	if ((rc = ventry_decode(rv.mv_data, rv.mv_size, VE_ADJ, &re)))
		return rc;
	k = schema_kind_id(d->s, re.kind);
	*kind = k ? k->name : "?";
	*key = re.key;
	*key_len = re.key_len;
	return 0;
}

/* Visit every Link of Relation rel visible in the view: count per from-Record, or name all. */
static int check_rel(dctx *d, const rel_def *r, int what, offenders *off)
{
	MDB_cursor *cur;
	MDB_val k, v;
	kbuf p;
	uint8_t last[32];
	int have_last = 0, mrc, rc = 0;
	hmap per_from = HMAP_INIT;

	kb_init(&p);
	kb_be32(&p, d->dom);
	mrc = mdb_cursor_open(d->txn, d->st->dbi[DB_ADJ], &cur);
	if (mrc)
		return store_err(mrc, "adj");
	k.mv_data = p.b;
	k.mv_size = p.n;
	for (mrc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); mrc == 0 && !rc;
	     mrc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		const uint8_t *kk = k.mv_data;
		const char *fk, *fkey;
		size_t fkey_len;
		uint64_t *slot;
		ventry e;
		int isnew;

		if (k.mv_size != 32 || memcmp(kk, p.b, 4) != 0)
			break;
		if (ventry_decode(v.mv_data, v.mv_size, VE_ADJ, &e)) {
			rc = CAIRN_ECORRUPT;
			break;
		}
		if (be32_get(kk + 12) != r->id)
			continue;
		if (have_last && memcmp(last, kk, 24) == 0)
			continue;
		if (!view_sees(&d->v, e.branch, e.rev))
			continue;
		memcpy(last, kk, 24);
		have_last = 1;
		if (e.flags & EF_TOMBSTONE)
			continue;
		if (what == DELTA_REL_ENDS) {
			char why[160];

			if ((rc = from_record(d, kk, &fk, &fkey, &fkey_len)))
				break;
			snprintf(why, sizeof(why), "it has a Link of %s, whose Kinds changed", r->name);
			offend(off, fk, fkey, fkey_len, d->br.name, why);
			continue;
		}
		slot = hmap_put(&per_from, kk + 4, 8, &isnew);
		if (!slot) {
			rc = err_set(CAIRN_ENOMEM, "out of memory");
			break;
		}
		if (++*slot == 2 && (rc = from_record(d, kk, &fk, &fkey, &fkey_len)) == 0)
			offend(off, fk, fkey, fkey_len, d->br.name,
			       "it has more than one Link of the Relation made one");
	}
	mdb_cursor_close(cur);
	hmap_release(&per_from);
	if (rc)
		return rc;
	return mrc && mrc != MDB_NOTFOUND ? store_err(mrc, "adj") : 0;
}

/* The secondary index whose ops take delta items of type what Record by Record, or NULL. */
static const index_ops *record_index(int what)
{
	for (const index_ops *const *ix = index_registry; *ix; ix++)
		if ((*ix)->delta_record == what && (*ix)->add_record)
			return *ix;
	return NULL;
}

/* Does a secondary index rebuild itself whole on delta items of type what? Mark it in all. */
static int whole_index(int what, unsigned *all)
{
	int found = 0;

	for (unsigned i = 0; index_registry[i]; i++) {
		CR_ASSERT(i < 8 * sizeof(*all)); /* a bit of the mask per index */
		if (index_registry[i]->delta_all == what && index_registry[i]->rebuild) {
			*all |= 1u << i;
			found = 1;
		}
	}
	return found;
}

/* Rebuild the secondary indexes marked in all, once every branch is checked. */
static int rebuild_marked(dctx *d, const schema *s, unsigned all)
{
	int rc = 0;

	for (unsigned i = 0; index_registry[i] && !rc; i++)
		if (all & (1u << i))
			rc = index_registry[i]->rebuild(d, s);
	return rc;
}

int schema_check_data(dctx *d, const schema *s, const schema_delta *delta)
{
	offenders off = {BUF_INIT, 0};
	uint32_t *ids = NULL;
	size_t n_ids = 0;
	unsigned all = 0;
	int rc;

	if (delta->n == 0)
		return 0;
	if ((rc = branch_ids(d->txn, d->st, d->dom, &ids, &n_ids)))
		return rc;
	for (size_t b = 0; b < n_ids && !rc; b++) {
		dctx bd;

		if ((rc = dctx_branch(d, ids[b], &bd)))
			break;
		bd.s = s;
		for (size_t i = 0; i < delta->n && !rc; i++) {
			const schema_delta_item *it = &delta->items[i];

			if (whole_index(it->what, &all)) {
				continue; /* the whole index, once, below */
			} else if (it->what == DELTA_CARD_ONE || it->what == DELTA_REL_ENDS) {
				rc = check_rel(&bd, schema_rel_id(s, it->rel), it->what, &off);
			} else {
				hmap seen = HMAP_INIT;
				struct attr_check ac;

				ac.k = schema_kind_id(s, it->kind);
				ac.a = kind_attr_id(ac.k, it->attr);
				ac.what = it->what;
				ac.off = &off;
				ac.seen = &seen;
				ac.ix = record_index(it->what);
				rc = each_record(&bd, it->kind, check_one, &ac);
				hmap_release(&seen);
			}
		}
	}
	cr_free(ids);
	if (!rc && off.n) {
		buf_cstr(&off.msg);
		rc = err_set(CAIRN_ESCHEMADATA, "the schema change conflicts with %zu existing "
						 "Record(s):%s%s",
			     off.n, off.msg.oom ? " (names lost: out of memory)" : (char *)off.msg.p,
			     off.n > MAX_NAMED ? "; ..." : "");
	}
	buf_release(&off.msg);
	return rc ? rc : rebuild_marked(d, s, all);
}
