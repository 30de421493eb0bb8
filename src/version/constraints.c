/*
 * The checks that depend on a commit's final state, after its last change:
 * references, Link ends, Links left on deleted Records, Records that still
 * name a deleted one, cardinality and unique values (commit_int.h).
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

/* ---------------------------------------------------- final checks -- */

static int check_refs(cctx *c)
{
	size_t n = c->n_rs; /* looking up targets adds states: check only those before */

	for (size_t i = 0; i < n; i++) {
		const kind_def *k;

		if (!c->rs[i].touched || !c->rs[i].exists)
			continue;
		k = schema_kind_id(c->d.s, c->rs[i].kind);
		for (size_t j = 0; j < k->n_attrs; j++) {
			const attr_def *a = &k->attrs[j];
			const jv *v;
			size_t ti;
			int rc;

			if (a->type != AT_REF)
				continue;
			v = jv_get(c->rs[i].values, a->name);
			if (!v)
				continue;
			if (v->len == 0 || v->len > CAIRN_MAX_KEY || memchr(v->u.s, 0, v->len)) {
				rc = commit_failf(c, c->rs[i].last_change, CAIRN_EREF, 0, NULL, 0,
					   "change %ld (%s:%.*s): %s names no %s", c->rs[i].last_change,
					   k->name, (int)c->rs[i].key_len, c->rs[i].key, a->name,
					   a->ref);
				if (rc)
					return rc;
				continue;
			}
			rc = commit_rstate_get(c, a->ref_kind, v->u.s, v->len, &ti);
			if (rc)
				return rc;
			if (c->rs[ti].exists)
				continue;
			rc = commit_failf(c, c->rs[i].last_change, CAIRN_EREF, a->ref_kind,
				   v->u.s, v->len,
				   "change %ld (%s:%.*s): %s names %s:%s, which does not exist",
				   c->rs[i].last_change, k->name, (int)c->rs[i].key_len,
				   c->rs[i].key, a->name, a->ref, v->u.s);
			if (rc)
				return rc;
		}
	}
	return 0;
}

static int check_link_ends(cctx *c)
{
	for (size_t i = 0; i < c->n_ls; i++) {
		lstate *l = &c->ls[i];
		rstate *e;
		int rc;

		if (!l->touched || !l->exists)
			continue;
		e = !c->rs[l->from].exists ? &c->rs[l->from] : !c->rs[l->to].exists ? &c->rs[l->to]
										   : NULL;
		if (!e)
			continue;
		rc = commit_failf(c, l->last_change, CAIRN_ELINKEND, e->kind, e->key, e->key_len,
			   "change %ld: Link end %s:%.*s does not exist", l->last_change,
			   schema_kind_id(c->d.s, e->kind)->name, (int)e->key_len, e->key);
		if (rc)
			return rc;
	}
	return 0;
}

struct count_arg {
	uint32_t rel;
	uint64_t n;
	int out_only;
};

static int count_one(cctx *c, int out_dir, uint32_t rel, uint64_t other, uint32_t other_kind,
		     const char *other_key, size_t other_len, void *arg)
{
	struct count_arg *a = arg;
	uint8_t mk[4 + CAIRN_MAX_KEY];
	uint64_t *slot;

	(void)other;
	if ((a->out_only && !out_dir) || (a->rel && rel != a->rel))
		return 0;
	/* A Link this commit touched is counted from its state instead. */
	be32_put(mk, other_kind);
	memcpy(mk + 4, other_key, other_len);
	slot = hmap_get(&c->rmap, mk, 4 + other_len);
	if (slot)
		return 0;
	a->n++;
	return 0;
}

/* Links of Record ri that exist after the commit (optionally only outgoing Links of rel). */
static int links_after(cctx *c, size_t ri, uint32_t rel, int out_only, uint64_t *n)
{
	struct count_arg a = {rel, 0, out_only};
	int rc = commit_links_in_view(c, c->rs[ri].rid, count_one, &a);

	if (rc)
		return rc;
	/*
	 * Links whose other end is a Record this commit touched or looked up were
	 * skipped above: count them from the commit's Link states, looking each
	 * identity up when the commit did not touch it.
	 */
	for (size_t i = 0; i < c->n_rs; i++) {
		for (int dir = 0; dir < 2; dir++) {
			size_t from = dir == 0 ? ri : i, to = dir == 0 ? i : ri;

			if (out_only && dir == 1)
				continue;
			if (dir == 1 && i == ri)
				continue; /* a self-Link is counted once */
			for (size_t r = 0; r < c->d.s->n_rels; r++) {
				const rel_def *rd = &c->d.s->rels[r];
				uint8_t mk[20];
				uint64_t *slot;
				ident id;

				if (rel && rd->id != rel)
					continue;
				if (!rel_end_ok(rd->from_kind, c->rs[from].kind) ||
				    !rel_end_ok(rd->to_kind, c->rs[to].kind))
					continue;
				commit_lkey(mk, rd->id, c->rs[from].rid, c->rs[to].rid);
				slot = hmap_get(&c->lmap, mk, sizeof(mk));
				if (slot) {
					a.n += c->ls[*slot - 1].exists;
					continue;
				}
				rc = link_lookup(&c->d, c->rs[from].rid, rd->id, c->rs[to].rid, &id);
				if (rc)
					return rc;
				a.n += id.visible;
			}
		}
	}
	*n = a.n;
	return 0;
}

static int check_deleted_links(cctx *c)
{
	for (size_t i = 0; i < c->n_rs; i++) {
		rstate *r = &c->rs[i];
		uint64_t n;
		int rc;

		if (!r->touched || !r->existed || r->exists)
			continue;
		rc = links_after(c, i, 0, 0, &n);
		if (rc)
			return rc;
		if (n == 0)
			continue;
		rc = commit_failf(c, r->last_change, CAIRN_EHASLINKS, 0, NULL, 0,
			   "change %ld: %s:%.*s still has %llu Link(s); unlink them first or "
			   "delete with cascade",
			   r->last_change, schema_kind_id(c->d.s, r->kind)->name, (int)r->key_len,
			   r->key, (unsigned long long)n);
		if (rc)
			return rc;
	}
	return 0;
}

static int check_cardinality(cctx *c)
{
	hmap groups = HMAP_INIT; /* (rel, from rid) -> 1 + index of the group's latest Link state */
	int rc = 0;

	for (size_t i = 0; i < c->n_ls; i++) {
		lstate *l = &c->ls[i];
		uint8_t mk[12];
		uint64_t *slot;

		if (!l->touched || !l->exists || !schema_rel_id(c->d.s, l->rel)->one)
			continue;
		be32_put(mk, l->rel);
		be64_put(mk + 4, c->rs[l->from].rid);
		slot = hmap_put(&groups, mk, sizeof(mk), NULL);
		if (!slot) {
			rc = err_set(CAIRN_ENOMEM, "out of memory");
			goto out;
		}
		if (!*slot || c->ls[*slot - 1].last_change < l->last_change)
			*slot = i + 1;
	}
	for (size_t g = 0; g < groups.cap && !rc; g++) {
		const rel_def *rd;
		lstate *l;
		uint64_t n;

		if (!groups.slots[g].hash)
			continue;
		l = &c->ls[groups.slots[g].val - 1];
		rd = schema_rel_id(c->d.s, l->rel);
		rc = links_after(c, l->from, l->rel, 1, &n);
		if (rc || n <= 1)
			continue;
		rc = commit_failf(c, l->last_change, CAIRN_ECARDINALITY, 0, NULL, 0,
			   "change %ld: Relation %s has cardinality one, and %s:%.*s would have "
			   "%llu Links of it",
			   l->last_change, rd->name, rd->from, (int)c->rs[l->from].key_len,
			   c->rs[l->from].key, (unsigned long long)n);
	}
out:
	hmap_release(&groups);
	return rc;
}

static int ref_holder(cctx *c, const kind_def *kd, const attr_def *ad, rstate *r, uint64_t *vid);

/*
 * A deleted Record must not stay named by the ref value of a live Record
 * this commit does not touch (those it touches are checked by check_refs).
 * Refs are always indexed, so the referrers are one index scan away.
 */
static int check_referrers(cctx *c)
{
	for (size_t i = 0; i < c->n_rs; i++) {
		rstate *r = &c->rs[i];

		if (!r->touched || !r->existed || r->exists)
			continue;
		for (size_t k = 0; k < c->d.s->n_kinds; k++) {
			const kind_def *kd = &c->d.s->kinds[k];

			for (size_t a = 0; a < kd->n_attrs; a++) {
				const attr_def *ad = &kd->attrs[a];
				uint64_t vid;
				vrec ver;
				int rc;

				if (ad->type != AT_REF || ad->ref_kind != r->kind)
					continue;
				rc = ref_holder(c, kd, ad, r, &vid);
				if (rc)
					return rc;
				if (!vid)
					continue;
				if ((rc = version_get(&c->d, vid, &ver)))
					return rc;
				rc = commit_failf(c, r->last_change, CAIRN_EREF, 0, NULL, 0,
					   "change %ld: %s:%.*s is still named by %s:%.*s (attribute "
					   "%s); change that Record first",
					   r->last_change, schema_kind_id(c->d.s, r->kind)->name,
					   (int)r->key_len, r->key, kd->name, (int)ver.key_len, ver.key,
					   ad->name);
				if (rc)
					return rc;
			}
		}
	}
	return 0;
}

/*
 * Scan the attribute index for the live Records of Kind kind whose attribute
 * a has value val (as the index encodes it), skipping the Records this commit
 * touched: those are judged by their final state. Calls fn for each, until
 * fn returns non-zero; *found is the vid fn accepted, or 0.
 */
typedef int (*holder_fn)(cctx *c, const attr_def *a, const jv *val, const vrec *ver, void *arg);

static int attr_holders(cctx *c, uint32_t kind, const attr_def *a, const jv *val, holder_fn fn,
			void *arg, uint64_t *found)
{
	MDB_cursor *cur;
	MDB_val k, v;
	kbuf p;
	int mrc, rc = 0;

	*found = 0;
	buf_reset(&c->tmp);
	if (attr_encode(a, val, &c->tmp))
		return 0;
	if (c->tmp.oom)
		return err_set(CAIRN_ENOMEM, "out of memory");
	attr_prefix(&p, c->d.dom, kind, a->id);
	kb_bytes(&p, c->tmp.p, c->tmp.len); /* the value's entries, in key order */
	if (p.over)
		return 0;
	mrc = mdb_cursor_open(c->d.txn, c->d.st->dbi[DB_ATTR], &cur);
	if (mrc)
		return store_err(mrc, "attr");
	k.mv_data = p.b;
	k.mv_size = p.n;
	for (mrc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); mrc == 0 && !rc && !*found;
	     mrc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		uint8_t mk[4 + CAIRN_MAX_KEY];
		uint64_t vid, *slot;
		attr_entry ae;
		vrec ver;
		int live;

		if (k.mv_size < p.n || memcmp(k.mv_data, p.b, p.n) != 0 ||
		    attr_entry_parse(a, k.mv_data, k.mv_size, &ae) || 12 + ae.value_len != p.n)
			break;
		vid = ae.vid;
		if ((rc = live_test(&c->d, vid, &live)))
			continue;
		/* An entry a later Version relies on: that Version, if it still has the value. */
		if (!live && ((rc = attr_entry_visible(&c->d, a, kind, &ae, &vid, &ver)) || !vid))
			continue;
		if ((live && (rc = version_get(&c->d, vid, &ver))) || ver.key_len > CAIRN_MAX_KEY)
			continue;
		be32_put(mk, ver.kr);
		memcpy(mk + 4, ver.key, ver.key_len);
		slot = hmap_get(&c->rmap, mk, 4 + ver.key_len);
		if (slot && c->rs[*slot - 1].touched)
			continue;
		rc = fn(c, a, val, &ver, arg);
		if (rc > 0) {
			*found = vid;
			rc = 0;
		}
	}
	mdb_cursor_close(cur);
	if (rc)
		return rc;
	return mrc && mrc != MDB_NOTFOUND ? store_err(mrc, "attr") : 0;
}

/* Holder test for uniqueness: another Record whose value is equal (the index keeps prefixes of long strings). */
static int same_value(cctx *c, const attr_def *a, const jv *val, const vrec *ver, void *arg)
{
	const rstate *r = arg;
	arena tmp = ARENA_INIT;
	const jv *other;
	int rc;

	(void)c;
	if (ver->rid == r->rid)
		return 0;
	other = jv_parse(&tmp, ver->values, ver->values_len, "stored values");
	if (!other)
		rc = err_code() == CAIRN_ENOMEM ? CAIRN_ENOMEM
						: err_set(CAIRN_ECORRUPT, "stored values do not parse");
	else
		rc = jv_equal(jv_get(other, a->name), val);
	arena_release(&tmp);
	return rc;
}

/* Holder test for references: any live Record naming it will do. */
static int any_holder(cctx *c, const attr_def *a, const jv *val, const vrec *ver, void *arg)
{
	(void)c;
	(void)a;
	(void)val;
	(void)ver;
	(void)arg;
	return 1;
}

/* The Version of a live Record other than r, outside this commit, that holds a's value (0: none). */
static int unique_taken(cctx *c, const attr_def *a, rstate *r, const jv *val, uint64_t *vid)
{
	return attr_holders(c, r->kind, a, val, same_value, r, vid);
}

/* A live Record outside this commit whose ref attribute ad names r (*vid, 0 if none). */
static int ref_holder(cctx *c, const kind_def *kd, const attr_def *ad, rstate *r, uint64_t *vid)
{
	const jv *key = jv_string(&c->mem, r->key, r->key_len);

	*vid = 0;
	if (!key)
		return err_set(CAIRN_ENOMEM, "out of memory");
	return attr_holders(c, kd->id, ad, key, any_holder, NULL, vid);
}

static int check_unique(cctx *c)
{
	hmap inside = HMAP_INIT;
	int rc = 0;

	for (size_t i = 0; i < c->n_rs && !rc; i++) {
		rstate *r = &c->rs[i];
		const kind_def *k;

		if (!r->touched || !r->exists)
			continue;
		k = schema_kind_id(c->d.s, r->kind);
		for (size_t j = 0; j < k->n_attrs && !rc; j++) {
			const attr_def *a = &k->attrs[j];
			const jv *v = jv_get(r->values, a->name);
			uint64_t *slot, holder;
			vrec hv;
			int isnew;

			if (!(a->flags & AF_UNIQUE) || !v)
				continue;
			/* Twice in this commit? Key by Kind, attribute and value as the index encodes it. */
			buf_reset(&c->tmp);
			buf_put_be32(&c->tmp, r->kind);
			buf_put_be32(&c->tmp, a->id);
			attr_encode(a, v, &c->tmp);
			if (c->tmp.oom) {
				rc = err_set(CAIRN_ENOMEM, "out of memory");
				break;
			}
			slot = hmap_put(&inside, c->tmp.p, c->tmp.len, &isnew);
			if (!slot) {
				rc = err_set(CAIRN_ENOMEM, "out of memory");
				break;
			}
			if (!isnew) {
				rstate *o = &c->rs[*slot - 1];
				long later = r->last_change > o->last_change ? r->last_change
									      : o->last_change;

				rc = commit_failf(c, later, CAIRN_EUNIQUE, 0, NULL, 0,
					   "change %ld: %s.%s must be unique, and %s:%.*s and "
					   "%s:%.*s both have it",
					   later, k->name, a->name, k->name, (int)o->key_len, o->key,
					   k->name, (int)r->key_len, r->key);
				continue;
			}
			*slot = i + 1;
			rc = unique_taken(c, a, r, v, &holder);
			if (rc || !holder)
				continue;
			if ((rc = version_get(&c->d, holder, &hv)))
				break;
			buf_reset(&c->tmp);
			jv_canon(v, &c->tmp);
			buf_cstr(&c->tmp);
			rc = commit_failf(c, r->last_change, CAIRN_EUNIQUE, 0, NULL, 0,
				   "change %ld (%s:%.*s): %s.%s must be unique, and %s is already "
				   "the value of %s:%.*s",
				   r->last_change, k->name, (int)r->key_len, r->key, k->name,
				   a->name, c->tmp.oom ? "the value" : (char *)c->tmp.p, k->name,
				   (int)hv.key_len, hv.key);
		}
	}
	hmap_release(&inside);
	return rc;
}

int commit_constraints(cctx *c)
{
	int rc;

	if ((rc = check_refs(c)) || (rc = check_link_ends(c)) || (rc = check_deleted_links(c)) ||
	    (rc = check_referrers(c)) || (rc = check_cardinality(c)) || (rc = check_unique(c)))
		return rc;
	return 0;
}
