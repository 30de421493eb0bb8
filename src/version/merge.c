/*
 * Diffs and merges.
 *
 * Both compare the states of Records and Links in views: a revision diff
 * compares one branch at two revisions; a branch diff or a merge compares
 * three views, the target (ours), the source (theirs) and their common
 * ancestor (the base). Only identities some revision touched in between
 * are compared: for each level of a side's view, the revisions of that
 * branch above what the base sees of it name them.
 *
 * The base of a merge is the most recent of: the fork (the lowest branch
 * both views share, at the lower of their two limits), the source's head
 * when it was last merged into the target, and the target's head when it
 * was last merged into the source. Each merge records its source head for
 * the next one.
 *
 * A Record merges attribute by attribute (the title counts as one): equal
 * on both sides, or changed on one side only, is clean; changed differently
 * on both is a conflict, as is a delete on one side against a change on the
 * other. A Link merges as a whole: its existence and values. Conflicts are
 * settled by explicit resolutions, then by the default (ours or theirs), or
 * block the merge. The merge commits on the target with the source head as
 * second parent, and values taken from the source keep their lineage there.
 */
#include <stdlib.h>
#include <string.h>

#include "model/changeset.h"
#include "base/json.h"
#include "version/txn.h"
#include "base/alloc.h"
#include "base/err.h"
#include "base/hmap.h"
#include "base/text.h"
#include "version/version.h"


typedef struct mitem {
	int is_link;
	uint32_t kr;		/* Kind or Relation id */
	const char *key;	/* Records */
	size_t key_len;
	uint64_t from_rid, to_rid; /* Links */
	uint32_t from_kind, to_kind;
	const char *from_key, *to_key;
	size_t from_len, to_len;
} mitem;

typedef struct mstate {
	int exists;
	uint64_t vid;	     /* the Version seen (0: none) */
	const char *title;
	size_t title_len;
	const jv *values;    /* an object (empty when absent) */
	const uint8_t *vec;  /* a Record's vector, its stored bytes (NULL: none) */
	size_t vec_len;
	uint32_t dim;
} mstate;

typedef struct mctx {
	dctx *ours, *theirs, *base;
	arena mem;
	hmap ids;
	mitem *items;
	size_t n_items, cap_items;
	uint64_t last_rev;
	buf tmp;
} mctx;

/* ------------------------------------------------------------ identities -- */

static int ident_key(const mitem *it, buf *b)
{
	buf_reset(b);
	buf_put_u8(b, it->is_link ? 'L' : 'R');
	buf_put_be32(b, it->kr);
	if (it->is_link) {
		buf_put_be64(b, it->from_rid);
		buf_put_be64(b, it->to_rid);
	} else {
		buf_put(b, it->key, it->key_len);
	}
	return b->oom ? err_set(CAIRN_ENOMEM, "out of memory") : 0;
}

/*
 * The Kind and key of one end of the Link of Version vid, from its index
 * entry, or from another Version's of the same Link when a compaction
 * removed that one (the ends of a Link are the same in all).
 */
static int link_end(mctx *m, dctx *d, int db, uint64_t a, uint32_t rel, uint64_t b, uint64_t vid,
		    uint32_t *kind, const char **key, size_t *key_len)
{
	kbuf k, p;
	MDB_val v;
	ventry e;
	int rc;

	key_adj(&p, d->dom, a, rel, b);
	k = p;
	kb_be64(&k, ~vid);
	rc = db_get(d->txn, d->st, db, k.b, k.n, &v);
	if (rc == CAIRN_ENOTFOUND) {
		MDB_cursor *cur;
		MDB_val kk;
		int mrc = mdb_cursor_open(d->txn, d->st->dbi[db], &cur);

		if (mrc)
			return store_err(mrc, db_names[db]);
		kk.mv_data = p.b;
		kk.mv_size = p.n;
		mrc = mdb_cursor_get(cur, &kk, &v, MDB_SET_RANGE);
		rc = mrc == 0 && kk.mv_size == p.n + 8 && memcmp(kk.mv_data, p.b, p.n) == 0
			     ? 0
		     : mrc && mrc != MDB_NOTFOUND ? store_err(mrc, db_names[db])
						  : CAIRN_ENOTFOUND;
		mdb_cursor_close(cur);
	}
	if (rc)
		return rc == CAIRN_ENOTFOUND ? err_set(CAIRN_ECORRUPT, "a Link entry is missing") : rc;
	if ((rc = ventry_decode(v.mv_data, v.mv_size, VE_ADJ, &e)))
		return rc;
	*kind = e.kind;
	*key = arena_strndup(&m->mem, e.key, e.key_len);
	*key_len = e.key_len;
	return *key ? 0 : err_set(CAIRN_ENOMEM, "out of memory");
}

static int add_ident(mctx *m, dctx *d, uint64_t vid)
{
	mitem it = {0};
	uint64_t *slot;
	vrec v;
	int isnew, rc;

	if ((rc = version_get(d, vid, &v)))
		return rc;
	it.is_link = vtype_link(v.type);
	it.kr = v.kr;
	if (it.is_link) {
		it.from_rid = v.from_rid;
		it.to_rid = v.to_rid;
	} else {
		it.key = v.key;
		it.key_len = v.key_len;
	}
	if ((rc = ident_key(&it, &m->tmp)))
		return rc;
	slot = hmap_put(&m->ids, m->tmp.p, m->tmp.len, &isnew);
	if (!slot)
		return err_set(CAIRN_ENOMEM, "out of memory");
	if (!isnew)
		return 0;
	if (it.is_link) {
		if ((rc = link_end(m, d, DB_ADJ, v.from_rid, v.kr, v.to_rid, vid, &it.to_kind, &it.to_key,
				   &it.to_len)) ||
		    (rc = link_end(m, d, DB_ADJR, v.to_rid, v.kr, v.from_rid, vid, &it.from_kind,
				   &it.from_key, &it.from_len)))
			return rc;
	} else if (!(it.key = arena_strndup(&m->mem, v.key, v.key_len))) {
		return err_set(CAIRN_ENOMEM, "out of memory");
	}
	if (m->n_items == m->cap_items) {
		size_t cap = m->cap_items ? m->cap_items * 2 : 64;
		mitem *p = cr_reallocarray(m->items, cap, sizeof(*p));

		if (!p)
			return err_set(CAIRN_ENOMEM, "out of memory");
		m->items = p;
		m->cap_items = cap;
	}
	m->items[m->n_items++] = it;
	*slot = m->n_items;
	return 0;
}

/* Every identity a revision of side's view touched above what base sees of that branch. */
static int collect(mctx *m, dctx *side, const dctx *base)
{
	for (int i = 0; i < side->v.n; i++) {
		uint32_t b = side->v.lv[i].branch;
		uint64_t hi = side->v.lv[i].limit, lo = view_limit(&base->v, b);

		if (hi > m->last_rev)
			hi = m->last_rev;
		for (uint64_t r = lo + 1; r <= hi && lo < hi; r++) {
			kbuf k;
			MDB_val v;
			rrec rr;
			int rc;

			key_u64(&k, side->dom, r);
			rc = db_get(side->txn, side->st, DB_REVS, k.b, k.n, &v);
			if (rc == CAIRN_ENOTFOUND)
				continue;
			if (rc || (rc = rrec_decode(v.mv_data, v.mv_size, &rr)))
				return rc;
			if (rr.branch != b)
				continue;
			for (uint64_t vid = rr.first_vid; vid < rr.first_vid + rr.n_versions; vid++)
				if ((rc = add_ident(m, side, vid)))
					return rc;
		}
	}
	return 0;
}

/* The state of an identity in a view. */
static int state_of(mctx *m, dctx *d, const mitem *it, mstate *s)
{
	ident id;
	vrec v;
	int rc;

	memset(s, 0, sizeof(*s));
	if (!d)
		goto absent;
	rc = it->is_link ? link_lookup(d, it->from_rid, it->kr, it->to_rid, &id)
			 : rec_lookup(d, it->kr, it->key, it->key_len, &id);
	if (rc)
		return rc;
	s->vid = id.vid;
	if (!id.visible)
		goto absent;
	if ((rc = version_get(d, id.vid, &v)))
		return rc;
	s->exists = 1;
	s->title = v.title;
	s->title_len = v.title_len;
	s->values = jv_parse(&m->mem, v.values, v.values_len, "stored values");
	if (!s->values)
		return err_code() == CAIRN_ENOMEM ? CAIRN_ENOMEM
						  : err_set(CAIRN_ECORRUPT, "stored values do not parse");
	if (v.dim) {
		MDB_val vv;
		kbuf k;

		key_u64(&k, d->dom, id.vid);
		if ((rc = db_get(d->txn, d->st, DB_VECTORS, k.b, k.n, &vv)))
			return rc == CAIRN_ENOTFOUND ? err_set(CAIRN_ECORRUPT, "vector missing") : rc;
		/* Of the Domain's dimension, which a re-embedding may have changed. */
		if (!vv.mv_size || vv.mv_size % sizeof(float))
			return err_set(CAIRN_ECORRUPT, "vector of the wrong size");
		s->vec = vv.mv_data;
		s->vec_len = vv.mv_size;
		s->dim = (uint32_t)(vv.mv_size / sizeof(float));
	}
	return 0;
absent:
	s->values = jv_object(&m->mem, 0);
	s->title = "";
	return s->values ? 0 : err_set(CAIRN_ENOMEM, "out of memory");
}

static int vec_eq(const mstate *a, const mstate *b)
{
	return a->vec_len == b->vec_len && (a->vec_len == 0 || memcmp(a->vec, b->vec, a->vec_len) == 0);
}

/* A vector in a diff: its dimension and a fingerprint of its bytes (NULL when none). */
static const jv *vec_value(mctx *m, const mstate *s)
{
	char fp[64];
	int n;

	if (!s->exists || !s->vec)
		return NULL;
	n = snprintf(fp, sizeof(fp), "%u dimension%s, xxh3 %016llx", s->dim, s->dim == 1 ? "" : "s",
		     (unsigned long long)hash64(s->vec, s->vec_len));
	return jv_string(&m->mem, fp, (size_t)n);
}

static int change_of(const mstate *before, const mstate *after)
{
	if (before->vid == after->vid || (!before->exists && !after->exists))
		return 0;
	/* A merge copies Versions: the same content under another vid is no change. */
	if (before->exists && after->exists && before->title_len == after->title_len &&
	    memcmp(before->title, after->title, before->title_len) == 0 &&
	    jv_equal(before->values, after->values) && vec_eq(before, after))
		return 0;
	if (!before->exists)
		return CAIRN_CREATED;
	if (!after->exists)
		return CAIRN_DELETED;
	return CAIRN_UPDATED;
}

static void fill_item(mctx *m, const mitem *it, const schema *s, cairn_change_item *ci)
{
	memset(ci, 0, sizeof(*ci));
	ci->is_link = it->is_link;
	if (it->is_link) {
		const rel_def *r = schema_rel_id(s, it->kr);
		const kind_def *f = schema_kind_id(s, it->from_kind), *t = schema_kind_id(s, it->to_kind);

		ci->rel = r ? r->name : "?";
		ci->from_kind = f ? f->name : "?";
		ci->from_key = it->from_key;
		ci->from_len = it->from_len;
		ci->to_kind = t ? t->name : "?";
		ci->to_key = it->to_key;
		ci->to_len = it->to_len;
	} else {
		const kind_def *k = schema_kind_id(s, it->kr);

		ci->kind = k ? k->name : "?";
		ci->key = it->key;
		ci->key_len = it->key_len;
	}
	(void)m;
}

/* Append `"name":` to b, then value v (null when NULL). */
static void put_member(buf *b, int *first, const char *name, const jv *v)
{
	if (!*first)
		buf_put_u8(b, ',');
	*first = 0;
	json_quote(b, name, strlen(name));
	buf_put_u8(b, ':');
	if (v)
		jv_canon(v, b);
	else
		buf_put(b, "null", 4);
}

/* The title of a state as a value (NULL when absent). */
static const jv *title_value(mctx *m, const mstate *s)
{
	return s->exists ? jv_string(&m->mem, s->title, s->title_len) : NULL;
}

/* The names of the attributes that differ between any two of the states, in byte order. */
static size_t differing(const mstate **st, int n_st, const char **names, size_t cap)
{
	size_t n = 0;

	for (int a = 0; a < n_st; a++)
		for (uint32_t i = 0; i < st[a]->values->len && n < cap; i++) {
			const jv *mv = &st[a]->values->u.items[i];
			int same = 1;
			size_t j;

			for (int b = 0; b < n_st && same; b++)
				same = jv_equal(mv, jv_getn(st[b]->values, mv->key, mv->key_len)) &&
				       st[b]->exists == st[a]->exists;
			if (same)
				continue;
			for (j = 0; j < n && strcmp(names[j], mv->key) != 0; j++)
				;
			if (j == n)
				names[n++] = mv->key;
		}
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
			const char *x = names[j];

			names[j] = names[j - 1];
			names[j - 1] = x;
		}
	return n;
}

/* ------------------------------------------------------- revision diffs -- */

static int before_after(mctx *m, const mitem *it, const mstate *b, const mstate *a,
			cairn_change_item *ci)
{
	const mstate *both[2] = {b, a};
	const char *names[256];
	size_t n = differing(both, 2, names, 256);
	buf *o = &m->tmp;
	int first = 1;

	buf_reset(o);
	buf_put_u8(o, '{');
	if (!it->is_link && (b->title_len != a->title_len ||
			     memcmp(b->title, a->title, a->title_len) != 0 || b->exists != a->exists)) {
		if (!first)
			buf_put_u8(o, ',');
		first = 0;
		buf_put(o, "\"(title)\":{", 11);
		{
			int f2 = 1;

			put_member(o, &f2, "before", title_value(m, b));
			put_member(o, &f2, "after", title_value(m, a));
		}
		buf_put_u8(o, '}');
	}
	for (size_t i = 0; i < n; i++) {
		int f2 = 1;

		if (!first)
			buf_put_u8(o, ',');
		first = 0;
		json_quote(o, names[i], strlen(names[i]));
		buf_put(o, ":{", 2);
		put_member(o, &f2, "before", b->exists ? jv_get(b->values, names[i]) : NULL);
		put_member(o, &f2, "after", a->exists ? jv_get(a->values, names[i]) : NULL);
		buf_put_u8(o, '}');
	}
	if (!it->is_link && !vec_eq(b, a)) {
		int f2 = 1;

		if (!first)
			buf_put_u8(o, ',');
		buf_put(o, "\"(vector)\":{", 12);
		put_member(o, &f2, "before", vec_value(m, b));
		put_member(o, &f2, "after", vec_value(m, a));
		buf_put_u8(o, '}');
	}
	buf_put_u8(o, '}');
	if (o->oom)
		return err_set(CAIRN_ENOMEM, "out of memory");
	ci->diff = (const char *)o->p;
	ci->diff_len = o->len;
	return 0;
}

/* Compare the identities collected between two views of one branch. */
static int report_changes(mctx *m, dctx *before, dctx *after, cairn_item_cb cb, void *ctx)
{
	int rc = 0;

	for (size_t i = 0; i < m->n_items && !rc; i++) {
		mstate b, a;
		cairn_change_item ci;

		if ((rc = state_of(m, before, &m->items[i], &b)) ||
		    (rc = state_of(m, after, &m->items[i], &a)))
			break;
		fill_item(m, &m->items[i], after->s, &ci);
		ci.ours = change_of(&b, &a);
		if (!ci.ours)
			continue;
		if ((rc = before_after(m, &m->items[i], &b, &a, &ci)))
			break;
		rc = cb(ctx, &ci);
	}
	return rc;
}

static void mctx_release(mctx *m)
{
	arena_release(&m->mem);
	hmap_release(&m->ids);
	cr_free(m->items);
	buf_release(&m->tmp);
}

/*
 * A view of the same branch as from, at rev: it shares from's transaction
 * and schema (from must outlive it) and caches cursors of its own, closed by
 * dctx_close.
 */
static void view_copy(dctx *out, const dctx *from, uint64_t rev)
{
	*out = *from;
	out->sref = NULL;
	out->kcur = NULL;
	out->lcache = NULL; /* its own, for its own view */
	out->lcache_n = 0;
	dctx_at(out, rev);
}

int cairn_diff_revisions(cairn_txn *t, uint64_t from, uint64_t to, cairn_item_cb cb, void *ctx)
{
	dctx before, after;
	mctx m;
	int rc;

	if (!t || !cb)
		return err_set(CAIRN_EINVAL, "cairn_diff_revisions: NULL argument");
	if (from >= to || to > t->d.rev)
		return err_set(CAIRN_EINVAL,
			       "a diff runs from an earlier to a later revision, at most %llu",
			       (unsigned long long)t->d.rev);
	if ((rc = horizon_check(t->txn, t->st, t->d.dom, from, branch_head(&t->d.br))))
		return rc;
	memset(&m, 0, sizeof(m));
	m.last_rev = to;
	view_copy(&before, &t->d, from);
	view_copy(&after, &t->d, to);
	rc = collect(&m, &after, &before);
	if (!rc)
		rc = report_changes(&m, &before, &after, cb, ctx);
	mctx_release(&m);
	dctx_close(&before);
	dctx_close(&after);
	return rc;
}

int cairn_revision_changes(cairn_txn *t, uint64_t rev, cairn_item_cb cb, void *ctx)
{
	cairn_revision r;
	dctx before, after;
	mctx m;
	kbuf k;
	MDB_val v;
	rrec rr;
	int rc;

	if (!t || !cb)
		return err_set(CAIRN_EINVAL, "cairn_revision_changes: NULL argument");
	if ((rc = revision_fill(t, rev, &r)))
		return rc;
	key_u64(&k, t->d.dom, rev);
	if ((rc = db_get(t->txn, t->st, DB_REVS, k.b, k.n, &v)) ||
	    (rc = rrec_decode(v.mv_data, v.mv_size, &rr)))
		return rc;
	/* Compare the revision's own branch at its parent and at the revision. */
	if ((rc = horizon_check(t->txn, t->st, t->d.dom, rev - 1, rev)))
		return rc;
	memset(&m, 0, sizeof(m));
	m.last_rev = rev;
	if (rr.branch == t->d.br.id) {
		view_copy(&after, &t->d, rev);
	} else if ((rc = dctx_branch(&t->d, rr.branch, &after)) ||
		   after.br.state != BRANCH_LIVE) {
		return !rc || rc == CAIRN_ENOTFOUND ? err_set(CAIRN_ENOTFOUND,
							      "revision %llu is on a deleted branch",
							      (unsigned long long)rev)
						    : rc;
	} else {
		dctx_at(&after, rev);
	}
	view_copy(&before, &after, rev - 1);
	for (uint64_t vid = rr.first_vid; vid < rr.first_vid + rr.n_versions && !rc; vid++)
		rc = add_ident(&m, &after, vid);
	if (!rc)
		rc = report_changes(&m, &before, &after, cb, ctx);
	mctx_release(&m);
	dctx_close(&before);
	dctx_close(&after);
	return rc;
}

/* ---------------------------------------------------------------- merge -- */

enum { TAKE_NONE = 0, TAKE_OURS, TAKE_THEIRS, TAKE_VALUE };

typedef struct resolution {
	int take;
	const jv *value;
} resolution;

typedef struct resolutions {
	hmap map; /* identity key + 0 + attribute -> 1 + index */
	resolution *r;
	size_t n, cap;
} resolutions;

static int res_key(mctx *m, const mitem *it, const char *attr)
{
	int rc = ident_key(it, &m->tmp);

	if (rc)
		return rc;
	buf_put_u8(&m->tmp, 0);
	buf_put(&m->tmp, attr, strlen(attr));
	return m->tmp.oom ? err_set(CAIRN_ENOMEM, "out of memory") : 0;
}

static int endpoint_rid(dctx *d, const char *s, size_t n, uint32_t *kind, uint64_t *rid)
{
	const char *k, *key;
	size_t kl, keyl;
	const kind_def *kd;
	ident id;
	int rc;

	if (endpoint_split(s, n, &k, &kl, &key, &keyl) || !(kd = schema_kind_n(d->s, k, kl)) ||
	    keyl == 0 || keyl > CAIRN_MAX_KEY)
		return err_set(CAIRN_EINVAL, "resolution: bad Link end \"%.*s\"", (int)n, s);
	if ((rc = rec_lookup(d, kd->id, key, keyl, &id)))
		return rc;
	*kind = kd->id;
	*rid = id.found ? id.rid : 0;
	return 0;
}

/* What a resolution may name and give: a known attribute, and a value of the right shape. */
static int res_check(dctx *d, const mitem *it, const char *attr, const jv *val, long line)
{
	if (it->is_link) {
		if (strcmp(attr, "(values)") != 0)
			return err_set(CAIRN_EINVAL,
				       "resolution line %ld: a Link's resolution is for \"(values)\", "
				       "not \"%s\"",
				       line, attr);
		if (val && val->type != JV_OBJECT && val->type != JV_NULL)
			return err_set(CAIRN_ETYPE,
				       "resolution line %ld: a Link's values are an object, or null "
				       "for no Link",
				       line);
		return 0;
	}
	if (strcmp(attr, "(exists)") == 0 || strcmp(attr, "(vector)") == 0) {
		if (val)
			return err_set(CAIRN_EINVAL,
				       "resolution line %ld: \"%s\" is resolved with \"take\", not a "
				       "value",
				       line, attr);
		return 0;
	}
	if (strcmp(attr, "(title)") == 0) {
		if (val && val->type != JV_STRING)
			return err_set(CAIRN_ETYPE, "resolution line %ld: a title is a string", line);
		return 0;
	}
	if (!kind_attr(schema_kind_id(d->s, it->kr), attr))
		return err_set(CAIRN_EUNKNOWNATTR, "resolution line %ld: %s has no Attribute \"%s\"",
			       line, schema_kind_id(d->s, it->kr)->name, attr);
	return 0;
}

/* Parse the resolutions, JSON lines, in the target's view (so Link ends resolve to rids). */
static int res_parse(mctx *m, dctx *d, const char *text, size_t len, resolutions *rs)
{
	static const char *const allowed[] = {"kind", "key",  "rel",  "from",
					      "to",   "attribute", "take", "value", NULL};
	const char *p = text, *end = text + len;
	long line = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		const jv *o, *take, *attr, *val;
		mitem it = {0};
		resolution r = {0};
		uint64_t *slot;
		int rc;

		line++;
		while (n && (p[n - 1] == '\r' || p[n - 1] == ' '))
			n--;
		if (n == 0) {
			p += (nl ? 1 : 0) + (size_t)(nl ? nl - p : end - p);
			continue;
		}
		o = jv_parse(&m->mem, p, n, "resolution");
		if (!o)
			return err_prefix("line %ld: ", line), err_code();
		if (o->type != JV_OBJECT || jv_only(o, allowed, CAIRN_EINVAL, "resolution"))
			return err_set(CAIRN_EINVAL, "resolution line %ld: an object with kind and key "
						     "(or rel, from and to), attribute and take",
				       line);
		/* The names are read as C strings: U+0000 would make them other names. */
		for (size_t i = 0; allowed[i]; i++)
			if (strcmp(allowed[i], "value") != 0 && jv_str_nul(jv_get(o, allowed[i])))
				return err_set(CAIRN_EINVAL,
					       "resolution line %ld: \"%s\" " JSON_NUL_REFUSED, line,
					       allowed[i]);
		take = jv_get(o, "take");
		attr = jv_get(o, "attribute");
		val = jv_get(o, "value");
		if (val) {
			r.take = TAKE_VALUE;
			r.value = val;
		} else if (jv_is(take, JV_STRING) && strcmp(take->u.s, "ours") == 0) {
			r.take = TAKE_OURS;
		} else if (jv_is(take, JV_STRING) && strcmp(take->u.s, "theirs") == 0) {
			r.take = TAKE_THEIRS;
		} else {
			return err_set(CAIRN_EINVAL,
				       "resolution line %ld: \"take\" is \"ours\" or \"theirs\", or give a "
				       "\"value\"",
				       line);
		}
		if (jv_get(o, "rel")) {
			const jv *rel = jv_get(o, "rel"), *f = jv_get(o, "from"), *t = jv_get(o, "to");
			const rel_def *rd = jv_is(rel, JV_STRING) ? schema_rel(d->s, rel->u.s) : NULL;

			if (!rd || !jv_is(f, JV_STRING) || !jv_is(t, JV_STRING))
				return err_set(CAIRN_EINVAL,
					       "resolution line %ld: a known Relation, and \"from\" and "
					       "\"to\" as \"Kind:key\"",
					       line);
			it.is_link = 1;
			it.kr = rd->id;
			if ((rc = endpoint_rid(d, f->u.s, f->len, &it.from_kind, &it.from_rid)) ||
			    (rc = endpoint_rid(d, t->u.s, t->len, &it.to_kind, &it.to_rid)))
				return rc;
			if (!attr)
				attr = jv_string(&m->mem, "(values)", 8);
		} else {
			const jv *kind = jv_get(o, "kind"), *key = jv_get(o, "key");
			const kind_def *kd = jv_is(kind, JV_STRING) ? schema_kind(d->s, kind->u.s) : NULL;

			if (!kd || !jv_is(key, JV_STRING) || !jv_is(attr, JV_STRING))
				return err_set(CAIRN_EINVAL,
					       "resolution line %ld: a known Kind, a key and an "
					       "\"attribute\" (or \"(title)\", \"(exists)\")",
					       line);
			it.kr = kd->id;
			it.key = key->u.s;
			it.key_len = key->len;
		}
		if (!jv_is(attr, JV_STRING))
			return err_set(CAIRN_EINVAL, "resolution line %ld: \"attribute\" is a string",
				       line);
		if ((rc = res_check(d, &it, attr->u.s, val, line)))
			return rc;
		if ((rc = res_key(m, &it, attr->u.s)))
			return rc;
		slot = hmap_put(&rs->map, m->tmp.p, m->tmp.len, NULL);
		if (!slot)
			return err_set(CAIRN_ENOMEM, "out of memory");
		if (!*slot) {
			if (rs->n == rs->cap) {
				size_t cap = rs->cap ? rs->cap * 2 : 16;
				resolution *q = cr_reallocarray(rs->r, cap, sizeof(*q));

				if (!q)
					return err_set(CAIRN_ENOMEM, "out of memory");
				rs->r = q;
				rs->cap = cap;
			}
			*slot = ++rs->n;
		}
		rs->r[*slot - 1] = r;
		p += n;
		while (p < end && *p != '\n')
			p++;
		if (p < end)
			p++;
	}
	return 0;
}

typedef struct merger {
	mctx m;
	const cairn_merge_options *o;
	int diff_only;		/* a branch diff: a dry run that needs no validation */
	merge_post post;
	void *post_arg;
	resolutions rs;
	cairn_changeset *cs;
	cairn_merge_result res;
	buf diff;
} merger;

/* Settle one conflicting attribute: 1 with *out set (NULL = absent), or 0 when unresolved. */
static int settle(merger *g, const mitem *it, const char *attr, const jv *ours, const jv *theirs,
		  const jv **out)
{
	uint64_t *slot;
	int take = g->o->resolve == CAIRN_RESOLVE_OURS	   ? TAKE_OURS
		   : g->o->resolve == CAIRN_RESOLVE_THEIRS ? TAKE_THEIRS
							   : TAKE_NONE;

	if (!res_key(&g->m, it, attr) && (slot = hmap_get(&g->rs.map, g->m.tmp.p, g->m.tmp.len))) {
		resolution *r = &g->rs.r[*slot - 1];

		take = r->take;
		if (take == TAKE_VALUE) {
			*out = r->value->type == JV_NULL ? NULL : r->value;
			return 1;
		}
	}
	if (take == TAKE_OURS)
		*out = ours;
	else if (take == TAKE_THEIRS)
		*out = theirs;
	return take != TAKE_NONE;
}

/*
 * One attribute's three-way entry in the item's diff; returns the merged
 * value. force makes it a conflict whatever the values (a delete against a
 * change).
 */
static const jv *merge_attr(merger *g, const mitem *it, const char *name, const jv *b,
			    const jv *o, const jv *t, int force, int *first, int *conflicts,
			    int *unresolved)
{
	const jv *res;
	int conflict = 0, settled = 1;
	buf *d = &g->diff;

	if (force) {
		conflict = 1;
		res = o;
		settled = settle(g, it, name, o, t, &res);
	} else if (jv_equal(o, t))
		res = o;
	else if (jv_equal(o, b))
		res = t;
	else if (jv_equal(t, b))
		res = o;
	else {
		conflict = 1;
		res = o;
		settled = settle(g, it, name, o, t, &res);
	}
	if (!force && jv_equal(b, o) && jv_equal(b, t))
		return res; /* nobody changed it: not part of the diff */
	if (!*first)
		buf_put_u8(d, ',');
	*first = 0;
	json_quote(d, name, strlen(name));
	buf_put(d, ":{", 2);
	{
		int f = 1;

		put_member(d, &f, "base", b);
		put_member(d, &f, "ours", o);
		put_member(d, &f, "theirs", t);
		if (conflict) {
			buf_put(d, ",\"conflict\":true", 16);
			if (settled)
				put_member(d, &f, "resolved", res);
		}
	}
	buf_put_u8(d, '}');
	*conflicts += conflict;
	*unresolved += conflict && !settled;
	return res;
}

/*
 * Queue the change that turns ours into the merged state of a Record; vs is
 * the side whose vector the merge keeps. A put keeps ours' vector unless it
 * gives one, so only another vector is given.
 */
static int put_record(merger *g, const mitem *it, const mstate *ours, const mstate *theirs,
		      int exists, const jv *title, const jv *values, const mstate *vs)
{
	const char *kind = schema_kind_id(g->m.ours->s, it->kr)->name;
	int new_vec = vs->vec && !(ours->exists && vec_eq(vs, ours));
	int rc;

	if (!exists) {
		return ours->exists ? cairn_changeset_delete(g->cs, kind, it->key, it->key_len, 0) : 0;
	}
	buf_reset(&g->m.tmp);
	jv_canon(values, &g->m.tmp);
	if (g->m.tmp.oom)
		return err_set(CAIRN_ENOMEM, "out of memory");
	if (ours->exists && jv_equal(values, ours->values) && title && !new_vec &&
	    title->len == ours->title_len && memcmp(title->u.s, ours->title, title->len) == 0)
		return 0; /* nothing to change on ours */
	rc = cairn_changeset_put(g->cs, kind, it->key, it->key_len, title ? title->u.s : "",
				 title ? title->len : 0, (const char *)g->m.tmp.p, g->m.tmp.len);
	if (!rc && theirs->exists)
		g->cs->v[g->cs->n - 1].src_vid = theirs->vid;
	if (!rc && new_vec) {
		float *f = arena_alloc(&g->m.mem, vs->vec_len);

		if (!f)
			return err_set(CAIRN_ENOMEM, "out of memory");
		memcpy(f, vs->vec, vs->vec_len); /* stored bytes need not be aligned */
		rc = cairn_changeset_vector(g->cs, f, vs->dim);
	}
	return rc;
}

/* The vector's three-way merge, compared by bytes: the side whose vector the merge keeps. */
static const mstate *merge_vector(merger *g, const mitem *it, const mstate *b, const mstate *o,
				  const mstate *t, int *first, int *conflicts, int *unresolved)
{
	const mstate *res = o;
	int conflict = 0, settled = 1;
	buf *d = &g->diff;
	int f = 1;

	if (vec_eq(b, o) && vec_eq(b, t))
		return o;
	if (vec_eq(o, t) || vec_eq(t, b))
		res = o;
	else if (vec_eq(o, b))
		res = t;
	else {
		const jv *ov = vec_value(&g->m, o), *tv = vec_value(&g->m, t), *r = ov;

		conflict = 1;
		settled = settle(g, it, "(vector)", ov, tv, &r);
		res = settled && r == tv ? t : o;
	}
	if (!*first)
		buf_put_u8(d, ',');
	*first = 0;
	buf_put(d, "\"(vector)\":{", 12);
	put_member(d, &f, "base", vec_value(&g->m, b));
	put_member(d, &f, "ours", vec_value(&g->m, o));
	put_member(d, &f, "theirs", vec_value(&g->m, t));
	if (conflict) {
		buf_put(d, ",\"conflict\":true", 16);
		if (settled)
			put_member(d, &f, "resolved", vec_value(&g->m, res));
	}
	buf_put_u8(d, '}');
	*conflicts += conflict;
	*unresolved += conflict && !settled;
	return res;
}

static int merge_record(merger *g, const mitem *it, const mstate *b, const mstate *o,
			const mstate *t, cairn_change_item *ci)
{
	const mstate *all[3] = {b, o, t};
	const char *names[256];
	size_t n;
	int first = 1, conflicts = 0, unresolved = 0, exists = o->exists;
	jv *merged;
	const jv *title;
	const mstate *vs;

	buf_put_u8(&g->diff, '{');
	/* Existence first: a delete on one side against a change on the other is a conflict. */
	if (b->exists != o->exists || b->exists != t->exists) {
		int force = ci->ours && ci->theirs && o->exists != t->exists;
		jv *yes = jv_object(&g->m.mem, 0);
		const jv *ev;

		if (!yes)
			return err_set(CAIRN_ENOMEM, "out of memory");
		ev = merge_attr(g, it, "(exists)", b->exists ? yes : NULL, o->exists ? yes : NULL,
				t->exists ? yes : NULL, force, &first, &conflicts, &unresolved);
		exists = ev != NULL;
		if (unresolved || !exists || (force && o->exists)) {
			/* Deleted, or kept as ours is, or blocked. */
			buf_put_u8(&g->diff, '}');
			ci->conflicts = conflicts;
			ci->unresolved = unresolved;
			return unresolved || exists ? 0 : put_record(g, it, o, t, 0, NULL, NULL, o);
		}
		if (force) {
			/* Ours deleted it, and the Record wins: the source's whole Record. */
			buf_put_u8(&g->diff, '}');
			ci->conflicts = conflicts;
			ci->unresolved = unresolved;
			return put_record(g, it, o, t, 1, title_value(&g->m, t), t->values, t);
		}
	}
	/* Attribute by attribute, the title first. */
	title = merge_attr(g, it, "(title)", title_value(&g->m, b), title_value(&g->m, o),
			   title_value(&g->m, t), 0, &first, &conflicts, &unresolved);
	n = differing(all, 3, names, 256);
	merged = jv_object(&g->m.mem, o->values->len + n);
	if (!merged)
		return err_set(CAIRN_ENOMEM, "out of memory");
	for (uint32_t i = 0; i < o->values->len; i++) {
		const jv *mv = &o->values->u.items[i];
		size_t j;

		for (j = 0; j < n && strcmp(names[j], mv->key) != 0; j++)
			;
		if (j == n)
			merged->u.items[merged->len++] = *mv; /* not in the diff: ours stands */
	}
	for (size_t i = 0; i < n; i++) {
		const jv *v = merge_attr(g, it, names[i], jv_get(b->values, names[i]),
					 jv_get(o->values, names[i]), jv_get(t->values, names[i]), 0,
					 &first, &conflicts, &unresolved);

		if (v) {
			merged->u.items[merged->len] = *v;
			merged->u.items[merged->len].key = names[i];
			merged->u.items[merged->len].key_len = (uint32_t)strlen(names[i]);
			merged->len++;
		}
	}
	vs = merge_vector(g, it, b, o, t, &first, &conflicts, &unresolved);
	buf_put_u8(&g->diff, '}');
	ci->conflicts = conflicts;
	ci->unresolved = unresolved;
	if (unresolved)
		return 0;
	return put_record(g, it, o, t, exists, title, merged, vs);
}

static int merge_link(merger *g, const mitem *it, const mstate *b, const mstate *o,
		      const mstate *t, cairn_change_item *ci)
{
	const schema *s = g->m.ours->s;
	const jv *bv = b->exists ? b->values : NULL, *ov = o->exists ? o->values : NULL,
		 *tv = t->exists ? t->values : NULL, *res;
	int first = 1, conflicts = 0, unresolved = 0, rc;

	buf_put_u8(&g->diff, '{');
	res = merge_attr(g, it, "(values)", bv, ov, tv, 0, &first, &conflicts, &unresolved);
	buf_put_u8(&g->diff, '}');
	ci->conflicts = conflicts;
	ci->unresolved = unresolved;
	if (unresolved || jv_equal(res, ov))
		return 0;
	if (!res)
		return cairn_changeset_unlink(g->cs, schema_rel_id(s, it->kr)->name,
					      schema_kind_id(s, it->from_kind)->name, it->from_key, it->from_len,
					      schema_kind_id(s, it->to_kind)->name, it->to_key, it->to_len);
	buf_reset(&g->m.tmp);
	jv_canon(res, &g->m.tmp);
	if (g->m.tmp.oom || res->type != JV_OBJECT)
		return err_set(g->m.tmp.oom ? CAIRN_ENOMEM : CAIRN_ETYPE,
			       "a Link's values resolve to an object");
	rc = cairn_changeset_link(g->cs, schema_rel_id(s, it->kr)->name,
				  schema_kind_id(s, it->from_kind)->name, it->from_key, it->from_len,
				  schema_kind_id(s, it->to_kind)->name, it->to_key, it->to_len,
				  (const char *)g->m.tmp.p, g->m.tmp.len);
	if (!rc && t->exists) /* values taken from the source keep their lineage */
		g->cs->v[g->cs->n - 1].src_vid = t->vid;
	return rc;
}

/* The base of a merge of theirs into ours (see the top of the file). */
static int merge_base(dctx *ours, dctx *theirs, dctx *base)
{
	uint64_t best = 0;
	int found = 0, rc;

	for (int i = 0; i < theirs->v.n && !found; i++)
		for (int j = 0; j < ours->v.n && !found; j++)
			if (theirs->v.lv[i].branch == ours->v.lv[j].branch) {
				uint64_t a = theirs->v.lv[i].limit, b = ours->v.lv[j].limit;

				best = a < b ? a : b;
				if ((rc = dctx_branch(ours, ours->v.lv[j].branch, base)))
					return rc;
				dctx_at(base, best);
				found = 1;
			}
	if (!found)
		return err_set(CAIRN_ECORRUPT, "the branches share no ancestor");
	/* A later merge between the two is a later common ancestor. */
	for (int dir = 0; dir < 2; dir++) {
		dctx *to = dir ? theirs : ours, *from = dir ? ours : theirs;
		kbuf k;
		MDB_val v;

		kb_init(&k);
		kb_be32(&k, ours->dom);
		kb_u8(&k, CAT_MERGED);
		kb_be32(&k, to->br.id);
		kb_be32(&k, from->br.id);
		rc = db_get(ours->txn, ours->st, DB_CATALOG, k.b, k.n, &v);
		if (rc == CAIRN_ENOTFOUND)
			continue;
		if (rc)
			return rc;
		if (v.mv_size == 8 && be64_get(v.mv_data) > best) {
			best = be64_get(v.mv_data);
			if ((rc = dctx_branch(ours, from->br.id, base)))
				return rc;
			dctx_at(base, best);
		}
	}
	return 0;
}

static int merge_txn(merger *g, MDB_txn *txn, cairn_store *st, cairn_item_cb cb, void *ctx)
{
	const cairn_merge_options *o = g->o;
	dctx ours, theirs, base;
	counters ctr;
	int rc, created;

	memset(&ours, 0, sizeof(ours));
	memset(&theirs, 0, sizeof(theirs));
	if ((rc = dctx_open_write(&ours, st, txn, &o->commit, &created)))
		return rc;
	if ((rc = dctx_open(&theirs, st, txn, o->commit.domain, o->source ? o->source : "main")))
		goto out;
	if (theirs.br.id == ours.br.id) {
		rc = err_set(CAIRN_EINVAL, "a branch cannot be merged into itself");
		goto out;
	}
	/* An expectation holds whether or not the merge has anything to write. */
	if (o->commit.has_expect && branch_head(&ours.br) != o->commit.expect_revision) {
		rc = err_set(CAIRN_ECONFLICT, "branch %s is at revision %llu, not the expected %llu",
			     ours.br.name, (unsigned long long)branch_head(&ours.br),
			     (unsigned long long)o->commit.expect_revision);
		goto out;
	}
	if ((rc = merge_base(&ours, &theirs, &base)) || (rc = counters_get(txn, st, ours.dom, &ctr)))
		goto out;
	g->m.ours = &ours;
	g->m.theirs = &theirs;
	g->m.base = &base;
	g->m.last_rev = ctr.next_rev - 1;
	if (o->resolutions && (rc = res_parse(&g->m, &ours, o->resolutions, o->resolutions_len,
					       &g->rs)))
		goto out;
	if ((rc = collect(&g->m, &theirs, &base)) || (rc = collect(&g->m, &ours, &base)))
		goto out;
	for (size_t i = 0; i < g->m.n_items && !rc; i++) {
		const mitem *it = &g->m.items[i];
		mstate b, ob, tb;
		cairn_change_item ci;

		if ((rc = state_of(&g->m, &base, it, &b)) || (rc = state_of(&g->m, &ours, it, &ob)) ||
		    (rc = state_of(&g->m, &theirs, it, &tb)))
			break;
		fill_item(&g->m, it, ours.s, &ci);
		ci.ours = change_of(&b, &ob);
		ci.theirs = change_of(&b, &tb);
		if (!ci.ours && !ci.theirs)
			continue;
		buf_reset(&g->diff);
		/* An item only ours changed merges to ours: it is reported, nothing is written. */
		rc = it->is_link ? merge_link(g, it, &b, &ob, &tb, &ci)
				 : merge_record(g, it, &b, &ob, &tb, &ci);
		if (rc)
			break;
		if (g->diff.oom) {
			rc = err_set(CAIRN_ENOMEM, "out of memory");
			break;
		}
		ci.diff = (const char *)g->diff.p;
		ci.diff_len = g->diff.len;
		g->res.items++;
		g->res.conflicts += (uint64_t)ci.conflicts;
		g->res.unresolved += (uint64_t)ci.unresolved;
		if (cb)
			rc = cb(ctx, &ci);
	}
	if (!rc && o->dry_run)
		g->res.changes = g->cs->n;
	/* A dry run reports conflicts, and is validated like the merge unless it is a diff. */
	if (rc || (o->dry_run && (g->diff_only || g->res.unresolved)))
		goto out;
	if (g->res.unresolved) {
		rc = err_set(CAIRN_EMERGE,
			     "merging %s into %s: %llu conflict(s) without a resolution (give "
			     "resolutions, or resolve with ours or theirs)",
			     theirs.br.name, ours.br.name, (unsigned long long)g->res.unresolved);
		goto out;
	}
	if (g->cs->n) {
		commit_extra x = {branch_head(&theirs.br)};
		cairn_commit_result cr;

		rc = commit_in_txn(&ours, &o->commit, g->cs, COMMIT_STOP, &x, &cr, NULL, NULL);
		if (rc || o->dry_run)
			goto out; /* a dry run's transaction is aborted */
		g->res.revision = cr.revision;
		memcpy(g->res.hash, cr.hash, 32);
		g->res.changes = cr.changes;
	}
	if (o->dry_run)
		goto out;
	/* The source's head is now an ancestor of the target's. */
	{
		uint8_t hv[8];
		kbuf k;

		kb_init(&k);
		kb_be32(&k, ours.dom);
		kb_u8(&k, CAT_MERGED);
		kb_be32(&k, ours.br.id);
		kb_be32(&k, theirs.br.id);
		be64_put(hv, branch_head(&theirs.br));
		rc = db_put(txn, st, DB_CATALOG, k.b, k.n, hv, 8, 0);
	}
	if (!rc && g->post)
		rc = g->post(&ours, &g->res, g->post_arg);
out:
	dctx_close(&theirs);
	dctx_close(&ours);
	return rc;
}

int cairn_merge(cairn_store *st, const cairn_merge_options *o, cairn_item_cb cb, void *ctx,
		cairn_merge_result *out)
{
	return merge_run(st, o, cb, ctx, out, NULL, NULL);
}

static int merge_go(cairn_store *st, const cairn_merge_options *o, int diff_only, cairn_item_cb cb,
		    void *ctx, cairn_merge_result *out, merge_post post, void *post_arg);

int merge_run(cairn_store *st, const cairn_merge_options *o, cairn_item_cb cb, void *ctx,
	      cairn_merge_result *out, merge_post post, void *post_arg)
{
	return merge_go(st, o, 0, cb, ctx, out, post, post_arg);
}

/*
 * A merge runs in a write transaction, a dry run too (its commit is
 * validated, then the transaction aborted), except a branch diff, which
 * only reads.
 */
/* One run of a merge (or of a diff, in a read transaction), as store_write runs it. */
struct merge_once {
	const cairn_merge_options *o;
	int diff_only;
	cairn_item_cb cb;
	void *ctx;
	merge_post post;
	void *post_arg;
	cairn_merge_result res;
};

static int merge_once(MDB_txn *txn, cairn_store *st, void *arg)
{
	struct merge_once *a = arg;
	merger g;
	int rc;

	memset(&g, 0, sizeof(g));
	g.o = a->o;
	g.diff_only = a->diff_only;
	g.post = a->post;
	g.post_arg = a->post_arg;
	if ((rc = cairn_changeset_new(&g.cs)))
		return rc;
	rc = merge_txn(&g, txn, st, a->cb, a->ctx);
	a->res = g.res;
	mctx_release(&g.m);
	hmap_release(&g.rs.map);
	cr_free(g.rs.r);
	buf_release(&g.diff);
	cairn_changeset_free(g.cs);
	return rc || !a->o->dry_run ? rc : STORE_DISCARD;
}

static int merge_go(cairn_store *st, const cairn_merge_options *o, int diff_only, cairn_item_cb cb,
		    void *ctx, cairn_merge_result *out, merge_post post, void *post_arg)
{
	struct merge_once a = {o, diff_only, cb, ctx, post, post_arg, {0}};
	MDB_txn *txn;
	int rc;

	if (!st || !o || !o->commit.domain)
		return err_set(CAIRN_EINVAL, "cairn_merge: a store and a Domain are required");
	if (o->resolve < CAIRN_RESOLVE_NONE || o->resolve > CAIRN_RESOLVE_THEIRS)
		return err_set(CAIRN_EINVAL, "cairn_merge: resolve is none, ours or theirs");
	if ((rc = err_reserved(o->reserved, "cairn_merge", "cairn_merge_options")) ||
	    (rc = err_reserved(o->commit.reserved, "cairn_merge", "cairn_merge_options.commit")))
		return rc;
	if (!diff_only) {
		rc = store_write(st, merge_once, &a);
	} else if (!(rc = store_read_begin(st, &txn))) {
		rc = merge_once(txn, st, &a);
		store_read_end(st, txn);
		rc = rc == STORE_DISCARD ? 0 : rc;
	}
	if (out)
		*out = a.res;
	return rc;
}

int cairn_branch_diff(cairn_store *st, const char *domain, const char *ours, const char *theirs,
		      cairn_item_cb cb, void *ctx)
{
	cairn_merge_options o;

	memset(&o, 0, sizeof(o));
	o.commit.domain = domain;
	o.commit.branch = ours;
	o.source = theirs;
	o.dry_run = 1;
	return merge_go(st, &o, 1, cb, ctx, NULL, NULL, NULL);
}
