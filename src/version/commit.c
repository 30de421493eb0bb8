/*
 * The commit pipeline: validate a change set completely, then apply it in
 * the same LMDB write transaction, then commit durably.
 *
 * Validation simulates the changes in order over the branch head, keeping a
 * state per Record and per Link the commit touches (rstate, lstate), and
 * turns every change into planned Versions with their vids, previous vids,
 * canonical values and lineage. Checks that depend on the final state of the
 * commit (references, Link ends, uniqueness, cardinality, Links left on a
 * deleted Record) run after the last change, so a Part may name a Plant put
 * later in the same commit. Nothing is written until every check passed;
 * apply then only writes the plan: the Versions, their index entries, the
 * live-set chunks and counts as new cells at the new revision, the Revision
 * (hash-chained to the branch's previous head) and the counters.
 *
 * Apply takes only a validated plan, which is what a replica replaying a log
 * of Revisions would need.
 */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/changeset.h"
#include "base/json.h"
#include "base/alloc.h"
#include "base/err.h"
#include "base/hmap.h"
#include "base/text.h"
#include "store/wlist.h"
#include "version/index.h"
#include "version/version.h"

typedef struct rstate {
	uint32_t kind;
	const char *key; /* points into a change or into owned storage */
	size_t key_len;
	char *key_own;
	uint64_t rid;
	int existed;	    /* visible at the branch head before the commit */
	int seen;	    /* the branch had an entry of it (a Version or a delete) before the commit */
	int exists;	    /* after the changes simulated so far */
	uint64_t cur_vid;   /* newest Version (in the view or planned), 0 if none */
	int cur_live;	    /* cur_vid is a live (non-tombstone) Version in the view */
	int loaded;	    /* values, title, lineage loaded for cur_vid */
	const jv *values;   /* in a change's or the commit's arena */
	char *title;
	size_t title_len;
	uint64_t *lin;	    /* lineage: revision per attribute id (0 = title), n_attrs + 1 */
	uint32_t dim;	    /* vector dimension of cur_vid */
	uint64_t vec_vid;   /* the Version whose vector cur_vid carries (0: none) */
	uint64_t created;   /* revision that created the Record (when it exists) */
	long last_change;
	int touched;
} rstate;

typedef struct lstate {
	uint32_t rel;
	size_t from, to;    /* rstate indexes */
	int existed, exists;
	uint64_t cur_vid;
	int cur_live;
	long last_change;
	int touched;
	int loaded;	    /* values, created, values_rev loaded for cur_vid */
	const char *values; /* canonical values of cur_vid (commit arena) */
	size_t values_len;
	uint64_t created, values_rev;
} lstate;

typedef struct pop {
	int type;	    /* enum vtype */
	long change;
	size_t st;	    /* rstate or lstate index */
	uint64_t vid, prev;
	int prev_live;	    /* prev was live in the view: clear its bit */
	int count_delta;    /* +1 / -1 on the Kind's count */
	size_t enc_off, enc_len; /* encoded Version in the arena */
	const jv *values;   /* Records: values, for attribute index entries */
	int renamed;	    /* Records: the predecessor existed with another title */
	const jv *prev_values; /* Records: the existing predecessor's values, else NULL */
	const float *vec;   /* a new vector, or NULL */
	uint64_t vec_from;  /* copy the vector of this vid (0: none) */
	uint32_t dim;
	int link_values;    /* a Link with non-empty values */
} pop;

typedef struct cctx {
	dctx d;
	const cairn_changeset *cs;
	int mode;
	counters ctr;
	uint64_t rev;
	rstate *rs;
	size_t n_rs, cap_rs;
	lstate *ls;
	size_t n_ls, cap_ls;
	hmap rmap, lmap;
	pop *ops;
	size_t n_ops, cap_ops;
	buf arena;	    /* encoded Versions */
	buf tmp;
	commit_fail *fails;
	size_t n_fails;
	const commit_extra *x; /* a merge's second parent, or NULL */
	arena mem;	    /* stored values parsed, values built by the commit */
	wlist wl;	    /* the index entries and Versions to write, sorted at the end */
	struct ix_part *ix; /* the secondary indexes' parts of the commit, while apply runs */
	uint32_t vec_dim;   /* the Domain's vector dimension (0: not set yet) */
	int vec_dim_new;
	char vec_model[VEC_MODEL_MAX + 1]; /* the model that made the Domain's vectors ("": unnamed) */
	const char *cmodel; /* ... and this commit's vectors (embedder's or vector_model) */
	const cairn_embedder *emb; /* embeds the title of a put without a vector */
	int model_checked;
	int vec_woke;	    /* the background was told of new vectors (their index) */
	uint32_t kseg;	    /* the keys segment this commit writes (0: none) */
	int kfold;	    /* ... or, reaching the threshold, it folds them all */
	uint8_t *kbloom;    /* its filter, kblocks x 64 bytes */
	uint32_t kblocks, kentries;
} cctx;

/* ------------------------------------------------------------ errors -- */

/* A validation failure was recorded (not an error code: those are negative). */
#define COLLECTED 1

static int failed(int rc)
{
	return rc ? rc : COLLECTED;
}

/* Record a validation failure of change `change`; kind/key name a missing Record, if any. */
static int failf(cctx *c, long change, int code, uint32_t kind, const char *key, size_t key_len,
		 const char *fmt, ...) __attribute__((format(printf, 7, 8)));
static int failf(cctx *c, long change, int code, uint32_t kind, const char *key, size_t key_len,
		 const char *fmt, ...)
{
	commit_fail *f = cr_reallocarray(c->fails, c->n_fails + 1, sizeof(*f));
	char msg[1024];
	va_list ap;

	if (!f)
		return err_set(CAIRN_ENOMEM, "out of memory");
	c->fails = f;
	f += c->n_fails;
	memset(f, 0, sizeof(*f));
	f->change = change;
	f->code = code;
	f->seq = c->n_fails;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	f->msg = cr_strdup(msg);
	if (!f->msg)
		return err_set(CAIRN_ENOMEM, "out of memory");
	c->n_fails++;
	if (key) {
		const kind_def *k = schema_kind_id(c->d.s, kind);
		size_t kn = strlen(k->name);

		f->missing = cr_malloc(kn + 1 + key_len + 1);
		if (!f->missing)
			return err_set(CAIRN_ENOMEM, "out of memory");
		memcpy(f->missing, k->name, kn);
		f->missing[kn] = ':';
		memcpy(f->missing + kn + 1, key, key_len);
		f->missing[kn + 1 + key_len] = '\0';
	}
	return 0;
}

void commit_fails_free(commit_fail *f, size_t n)
{
	for (size_t i = 0; f && i < n; i++) {
		cr_free(f[i].msg);
		cr_free(f[i].missing);
	}
	cr_free(f);
}

/* ------------------------------------------------------------ states -- */

static int rstate_get(cctx *c, uint32_t kind, const char *key, size_t key_len, size_t *out)
{
	uint8_t mk[4 + CAIRN_MAX_KEY];
	uint64_t *slot;
	rstate *r;
	ident id;
	int isnew, rc;

	be32_put(mk, kind);
	memcpy(mk + 4, key, key_len);
	slot = hmap_put(&c->rmap, mk, 4 + key_len, &isnew);
	if (!slot)
		return err_set(CAIRN_ENOMEM, "out of memory");
	if (!isnew) {
		*out = (size_t)*slot - 1;
		return 0;
	}
	if (c->n_rs == c->cap_rs) {
		size_t cap = c->cap_rs ? c->cap_rs * 2 : 64;
		rstate *p = cr_reallocarray(c->rs, cap, sizeof(*p));

		if (!p)
			return err_set(CAIRN_ENOMEM, "out of memory");
		c->rs = p;
		c->cap_rs = cap;
	}
	rc = rec_lookup(&c->d, kind, key, key_len, &id);
	if (rc)
		return rc;
	r = &c->rs[c->n_rs];
	memset(r, 0, sizeof(*r));
	r->kind = kind;
	r->key_own = cr_strndup(key, key_len);
	if (!r->key_own)
		return err_set(CAIRN_ENOMEM, "out of memory");
	r->key = r->key_own;
	r->key_len = key_len;
	r->rid = id.found ? id.rid : c->ctr.next_rid++;
	r->existed = r->exists = id.visible;
	r->seen = id.vid != 0;
	r->cur_vid = id.vid;
	r->cur_live = id.visible;
	r->last_change = -1;
	*slot = ++c->n_rs;
	*out = c->n_rs - 1;
	return 0;
}

/* Load the values, title, lineage and vector of a Record's current Version. */
static int rstate_load(cctx *c, rstate *r)
{
	const kind_def *k = schema_kind_id(c->d.s, r->kind);
	vrec v;
	rdr lr;
	int rc;

	if (r->loaded)
		return 0;
	r->lin = cr_calloc(k->n_attrs + 1, sizeof(uint64_t));
	if (!r->lin)
		return err_set(CAIRN_ENOMEM, "out of memory");
	r->loaded = 1;
	if (!r->exists)
		return 0;
	rc = version_get(&c->d, r->cur_vid, &v);
	if (rc)
		return rc;
	r->values = jv_parse(&c->mem, v.values, v.values_len, "stored values");
	if (!r->values)
		return err_code() == CAIRN_ENOMEM ? CAIRN_ENOMEM
						  : err_set(CAIRN_ECORRUPT, "stored values do not parse");
	r->title = cr_strndup(v.title, v.title_len);
	if (!r->title)
		return err_set(CAIRN_ENOMEM, "out of memory");
	r->title_len = v.title_len;
	r->dim = v.dim ? c->vec_dim : 0; /* a re-embedding may have changed it */
	r->vec_vid = v.dim ? r->cur_vid : 0;
	r->created = v.created;
	rd_init(&lr, v.lineage, v.lineage_len);
	for (uint32_t i = 0; i < v.n_lineage; i++) {
		uint64_t a = rd_varint(&lr), rev = rd_varint(&lr);

		if (a <= k->n_attrs)
			r->lin[a] = rev;
	}
	if (lr.bad)
		return err_set(CAIRN_ECORRUPT, "Version %llu: bad lineage",
			       (unsigned long long)r->cur_vid);
	return 0;
}

static void lkey(uint8_t out[20], uint32_t rel, uint64_t from, uint64_t to)
{
	be32_put(out, rel);
	be64_put(out + 4, from);
	be64_put(out + 12, to);
}

static int lstate_get(cctx *c, uint32_t rel, size_t from, size_t to, size_t *out)
{
	uint8_t mk[20];
	uint64_t *slot;
	lstate *l;
	ident id;
	int isnew, rc;

	lkey(mk, rel, c->rs[from].rid, c->rs[to].rid);
	slot = hmap_put(&c->lmap, mk, sizeof(mk), &isnew);
	if (!slot)
		return err_set(CAIRN_ENOMEM, "out of memory");
	if (!isnew) {
		*out = (size_t)*slot - 1;
		return 0;
	}
	if (c->n_ls == c->cap_ls) {
		size_t cap = c->cap_ls ? c->cap_ls * 2 : 64;
		lstate *p = cr_reallocarray(c->ls, cap, sizeof(*p));

		if (!p)
			return err_set(CAIRN_ENOMEM, "out of memory");
		c->ls = p;
		c->cap_ls = cap;
	}
	rc = link_lookup(&c->d, c->rs[from].rid, rel, c->rs[to].rid, &id);
	if (rc)
		return rc;
	l = &c->ls[c->n_ls];
	memset(l, 0, sizeof(*l));
	l->rel = rel;
	l->from = from;
	l->to = to;
	l->existed = l->exists = id.visible;
	l->cur_vid = id.vid;
	l->cur_live = id.visible;
	l->last_change = -1;
	*slot = ++c->n_ls;
	*out = c->n_ls - 1;
	return 0;
}

/* -------------------------------------------------------------- plan -- */

static pop *op_new(cctx *c, int type, long change, size_t st)
{
	pop *o;

	if (c->n_ops == c->cap_ops) {
		size_t cap = c->cap_ops ? c->cap_ops * 2 : 64;
		pop *p = cr_reallocarray(c->ops, cap, sizeof(*p));

		if (!p)
			return NULL;
		c->ops = p;
		c->cap_ops = cap;
	}
	o = &c->ops[c->n_ops++];
	memset(o, 0, sizeof(*o));
	o->type = type;
	o->change = change;
	o->st = st;
	o->vid = c->ctr.next_vid++;
	return o;
}

/* Encode the Version of op o into the arena. */
static int op_encode(cctx *c, pop *o, const vrec *v)
{
	o->enc_off = c->arena.len;
	vrec_encode(v, &c->arena);
	o->enc_len = c->arena.len - o->enc_off;
	return c->arena.oom ? err_set(CAIRN_ENOMEM, "out of memory") : 0;
}

/* ---------------------------------------------------------- checking -- */

/* Validate a Record's full values against its Kind; *out gets them without null members. */
static int values_validate(cctx *c, long idx, const kind_def *k, const jv *values,
			   const char *key, size_t key_len, const jv **out)
{
	char why[512];

	*out = values = jv_drop_nulls(&c->mem, values);
	if (!values)
		return err_set(CAIRN_ENOMEM, "out of memory");
	for (uint32_t i = 0; i < values->len; i++) {
		const jv *v = &values->u.items[i];
		const attr_def *a = kind_attr(k, v->key);
		int code;

		if (!a || strlen(v->key) != v->key_len)
			return failed(failf(c, idx, CAIRN_EUNKNOWNATTR, 0, NULL, 0,
					    "change %ld: Kind %s has no attribute \"%.*s\"", idx,
					    k->name, (int)v->key_len, v->key));
		code = attr_value_check(a, v, why, sizeof(why));
		if (code)
			return failed(failf(c, idx, code, 0, NULL, 0, "change %ld (%s:%.*s): %s", idx,
					    k->name, (int)key_len, key, why));
	}
	for (size_t i = 0; i < k->n_attrs; i++) {
		const attr_def *a = &k->attrs[i];

		if ((a->flags & AF_REQUIRED) && !jv_get(values, a->name))
			return failed(failf(c, idx, CAIRN_EREQUIRED, 0, NULL, 0,
					    "change %ld (%s:%.*s): required attribute %s is missing",
					    idx, k->name, (int)key_len, key, a->name));
	}
	return 0;
}

/*
 * A vector of dim dimensions in change idx: the Domain's first sets its
 * dimension and model; later ones must match both (vectors of two models
 * are never compared).
 */
static int vector_check(cctx *c, long idx, size_t dim)
{
	if (c->vec_dim == 0) {
		c->vec_dim = (uint32_t)dim;
		c->vec_dim_new = 1;
		snprintf(c->vec_model, sizeof(c->vec_model), "%s", c->cmodel);
		c->model_checked = 1;
		return 0;
	}
	if (dim != c->vec_dim)
		return failed(failf(c, idx, CAIRN_EDIM, 0, NULL, 0,
			     "change %ld: the vector has %zu dimensions; the Domain's vectors have %u",
			     idx, dim, c->vec_dim)
			       );
	/* A merge's vectors are the Domain's own, of its model. */
	if (!c->model_checked && !c->x && strcmp(c->cmodel, c->vec_model) != 0)
		return failed(failf(c, idx, CAIRN_EDIM, 0, NULL, 0,
				    "change %ld: the vector is of model \"%s\"; the Domain's vectors "
				    "are of model \"%s\"",
				    idx, c->cmodel[0] ? c->cmodel : "(unnamed)",
				    c->vec_model[0] ? c->vec_model : "(unnamed)"));
	c->model_checked = 1;
	return 0;
}

static int vector_dim_check(cctx *c, long idx, const cs_change *ch)
{
	return ch->vec ? vector_check(c, idx, ch->dim) : 0;
}

/* The merged Version a change takes values from: its values, title, lineage, creation. */
typedef struct source {
	const jv *values;
	const char *title;
	size_t title_len;
	uint64_t *lin;	/* per attribute id, 0 = title; NULL when there is no source */
	uint64_t created;
} source;

static int source_load(cctx *c, const cs_change *ch, const kind_def *k, source *s)
{
	vrec v;
	rdr lr;
	int rc;

	memset(s, 0, sizeof(*s));
	if (!ch || !ch->src_vid)
		return 0;
	if ((rc = version_get(&c->d, ch->src_vid, &v)))
		return rc;
	if (v.type != V_REC || v.kr != k->id)
		return err_set(CAIRN_ECORRUPT, "a merge source is not a Record of %s", k->name);
	s->lin = arena_alloc(&c->mem, (k->n_attrs + 1) * sizeof(uint64_t));
	s->values = jv_parse(&c->mem, v.values, v.values_len, "stored values");
	s->title = arena_strndup(&c->mem, v.title, v.title_len);
	if (!s->lin || !s->values || !s->title)
		return err_code() == CAIRN_EJSON ? err_set(CAIRN_ECORRUPT, "stored values do not parse")
						 : err_set(CAIRN_ENOMEM, "out of memory");
	memset(s->lin, 0, (k->n_attrs + 1) * sizeof(uint64_t));
	s->title_len = v.title_len;
	s->created = v.created;
	rd_init(&lr, v.lineage, v.lineage_len);
	for (uint32_t i = 0; i < v.n_lineage; i++) {
		uint64_t a = rd_varint(&lr), rev = rd_varint(&lr);

		if (a <= k->n_attrs)
			s->lin[a] = rev;
	}
	return lr.bad ? err_set(CAIRN_ECORRUPT, "bad lineage") : 0;
}

/* Plan a put of Record state r with new values (owned) and title. */
static int plan_record(cctx *c, long idx, size_t ri, const jv *values, const char *title,
		       size_t title_len, const cs_change *ch)
{
	rstate *r = &c->rs[ri];
	const kind_def *k = schema_kind_id(c->d.s, r->kind);
	uint64_t *lin;
	buf lb = BUF_INIT;
	uint32_t n_lin = 0;
	source src;
	vrec v = {0};
	pop *o;
	int rc;

	lin = cr_calloc(k->n_attrs + 1, sizeof(uint64_t));
	if (!lin)
		return err_set(CAIRN_ENOMEM, "out of memory");
	if ((rc = source_load(c, ch, k, &src)))
		goto out;
	/*
	 * Lineage: an unchanged value keeps the revision that set it; a value a
	 * merge takes from the merged Version keeps the revision that set it there.
	 */
	lin[0] = (r->exists && r->title_len == title_len && memcmp(r->title, title, title_len) == 0)
			 ? r->lin[0]
		 : (src.lin && src.title_len == title_len &&
		    memcmp(src.title, title, title_len) == 0)
			 ? src.lin[0]
			 : c->rev;
	buf_put_varint(&lb, 0);
	buf_put_varint(&lb, lin[0]);
	n_lin++;
	for (size_t i = 0; i < k->n_attrs; i++) {
		const attr_def *a = &k->attrs[i];
		const jv *nv = jv_get(values, a->name), *ov, *sv;

		if (!nv)
			continue;
		ov = r->exists && r->values ? jv_get(r->values, a->name) : NULL;
		sv = src.values ? jv_get(src.values, a->name) : NULL;
		lin[a->id] = (ov && jv_equal(ov, nv) && r->lin[a->id])	? r->lin[a->id]
			     : (sv && jv_equal(sv, nv) && src.lin[a->id]) ? src.lin[a->id]
									  : c->rev;
		buf_put_varint(&lb, a->id);
		buf_put_varint(&lb, lin[a->id]);
		n_lin++;
	}
	buf_reset(&c->tmp);
	jv_canon(values, &c->tmp);
	if (lb.oom || c->tmp.oom) {
		rc = err_set(CAIRN_ENOMEM, "out of memory");
		goto out;
	}
	if (c->tmp.len > CAIRN_MAX_VALUES) {
		rc = failed(failf(c, idx, CAIRN_ELIMIT, 0, NULL, 0,
				  "change %ld: values are larger than %u bytes", idx, CAIRN_MAX_VALUES));
		goto out;
	}
	o = op_new(c, V_REC, idx, ri);
	if (!o) {
		rc = err_set(CAIRN_ENOMEM, "out of memory");
		goto out;
	}
	o->prev = r->cur_vid;
	o->prev_live = r->cur_live;
	o->count_delta = r->exists ? 0 : 1;
	o->values = values;
	if (r->exists) {
		o->renamed = r->title_len != title_len || memcmp(r->title, title, title_len) != 0;
		o->prev_values = r->values ? r->values : jv_object(&c->mem, 0);
		if (!o->prev_values) {
			rc = err_set(CAIRN_ENOMEM, "out of memory");
			goto out;
		}
	}
	if (ch->vec) {
		o->vec = ch->vec;
		o->dim = (uint32_t)ch->dim;
	} else if (c->emb && ch->op == OP_PUT && title_len &&
		   (!r->exists || !r->vec_vid || o->renamed)) {
		/* Embedded on write: the title's meaning, by the commit's model. */
		size_t dim = cairn_embedder_dim(c->emb), words = 0;
		float *vec = arena_alloc(&c->mem, dim * sizeof(float));

		if (!vec) {
			rc = err_set(CAIRN_ENOMEM, "out of memory");
			goto out;
		}
		if ((rc = cairn_embed(c->emb, title, title_len, vec, dim, &words)))
			goto out;
		if (words) {
			if ((rc = vector_check(c, idx, dim)))
				goto out;
			o->vec = vec;
			o->dim = (uint32_t)dim;
		} else if (r->exists && r->vec_vid) { /* no word the model knows: as before */
			o->vec_from = r->vec_vid;
			o->dim = r->dim;
		}
	} else if (r->exists && r->vec_vid) {
		o->vec_from = r->vec_vid;
		o->dim = r->dim;
	}
	v.type = V_REC;
	v.kr = r->kind;
	v.branch = c->d.br.id;
	v.rev = c->rev;
	v.prev = o->prev;
	v.created = r->exists ? r->created : src.lin ? src.created : c->rev;
	v.rid = r->rid;
	v.key = r->key;
	v.key_len = r->key_len;
	v.title = title;
	v.title_len = title_len;
	v.values = (const char *)c->tmp.p;
	v.values_len = c->tmp.len;
	v.dim = o->dim;
	v.lineage = lb.p;
	v.lineage_len = lb.len;
	v.n_lineage = n_lin;
	rc = op_encode(c, o, &v);
	if (rc)
		goto out;
	/* The new state. */
	if (title != r->title) {
		char *t = cr_strndup(title, title_len);

		if (!t) {
			rc = err_set(CAIRN_ENOMEM, "out of memory");
			goto out;
		}
		cr_free(r->title);
		r->title = t;
		r->title_len = title_len;
	}
	r->values = values;
	cr_free(r->lin);
	r->lin = lin;
	lin = NULL;
	r->created = v.created;
	r->exists = 1;
	r->cur_vid = o->vid;
	r->cur_live = 1;
	r->dim = o->dim;
	r->vec_vid = o->dim ? o->vid : 0;
	r->last_change = idx;
	r->touched = 1;
out:
	cr_free(lin);
	buf_release(&lb);
	return rc;
}

/* Load the values, creation and lineage of a Link's current Version. */
static int lstate_load(cctx *c, lstate *l)
{
	vrec v;
	rdr lr;
	int rc;

	if (l->loaded || !l->exists)
		return 0;
	if ((rc = version_get(&c->d, l->cur_vid, &v)))
		return rc;
	l->values = arena_strndup(&c->mem, v.values, v.values_len);
	if (!l->values)
		return err_set(CAIRN_ENOMEM, "out of memory");
	l->values_len = v.values_len;
	l->created = v.created;
	rd_init(&lr, v.lineage, v.lineage_len);
	l->values_rev = v.n_lineage ? (rd_varint(&lr), rd_varint(&lr)) : v.rev;
	l->loaded = 1;
	return 0;
}

static int plan_link_op(cctx *c, long idx, size_t li, int type, const jv *values,
			const cs_change *ch)
{
	lstate *l = &c->ls[li];
	uint8_t lin[20];
	vrec v = {0};
	pop *o;
	int rc;

	if ((rc = lstate_load(c, l)))
		return rc;

	buf_reset(&c->tmp);
	if (type == V_LINK) {
		if (values)
			jv_canon(values, &c->tmp);
		else
			buf_put(&c->tmp, "{}", 2);
		if (c->tmp.oom)
			return err_set(CAIRN_ENOMEM, "out of memory");
	}
	o = op_new(c, type, idx, li);
	if (!o)
		return err_set(CAIRN_ENOMEM, "out of memory");
	o->prev = l->cur_vid;
	o->prev_live = l->cur_live;
	v.type = type;
	v.kr = l->rel;
	v.branch = c->d.br.id;
	v.rev = c->rev;
	v.prev = o->prev;
	v.from_rid = c->rs[l->from].rid;
	v.to_rid = c->rs[l->to].rid;
	v.values = (const char *)c->tmp.p;
	v.values_len = c->tmp.len;
	if (type == V_LINK) {
		/*
		 * Lineage: the revision that set the values; unchanged values keep
		 * theirs, and values a merge takes from the merged Version keep the
		 * revision that set them there, as does a Link the merge brings in.
		 */
		uint64_t vrev = l->exists && l->values_len == c->tmp.len &&
						memcmp(l->values, c->tmp.p, c->tmp.len) == 0
					? l->values_rev
					: c->rev;
		buf lb = {lin, 0, sizeof(lin), 0};

		v.created = l->exists ? l->created : c->rev;
		if (ch && ch->src_vid) {
			vrec sv;
			rdr lr;

			if ((rc = version_get(&c->d, ch->src_vid, &sv)))
				return rc;
			if (sv.type != V_LINK || sv.kr != l->rel)
				return err_set(CAIRN_ECORRUPT, "a merge source is not a Link of its Relation");
			rd_init(&lr, sv.lineage, sv.lineage_len);
			if (vrev == c->rev && sv.n_lineage >= 1 && rd_varint(&lr) == 0 &&
			    sv.values_len == c->tmp.len && memcmp(sv.values, c->tmp.p, c->tmp.len) == 0)
				vrev = rd_varint(&lr);
			if (!l->exists)
				v.created = sv.created;
		}
		buf_put_varint(&lb, 0);
		buf_put_varint(&lb, vrev);
		v.lineage = lin;
		v.lineage_len = lb.len;
		v.n_lineage = 1;
		l->values = arena_strndup(&c->mem, (const char *)c->tmp.p, c->tmp.len);
		if (!l->values)
			return err_set(CAIRN_ENOMEM, "out of memory");
		l->values_len = c->tmp.len;
		l->created = v.created;
		l->values_rev = vrev;
		l->loaded = 1;
	}
	rc = op_encode(c, o, &v);
	if (rc)
		return rc;
	o->link_values = type == V_LINK && values && values->len;
	l->exists = type == V_LINK;
	l->cur_vid = o->vid;
	l->cur_live = type == V_LINK;
	l->last_change = idx;
	l->touched = 1;
	return 0;
}

/* Visit the Links touching Record rid that exist in the view (before this commit). */
typedef int (*link_visit)(cctx *c, int out_dir, uint32_t rel, uint64_t other, uint32_t other_kind,
			  const char *other_key, size_t other_len, void *arg);

static int links_in_view(cctx *c, uint64_t rid, link_visit fn, void *arg)
{
	for (int dir = 0; dir < 2; dir++) {
		int db = dir == 0 ? DB_ADJ : DB_ADJR;
		MDB_cursor *cur;
		MDB_val k, v;
		kbuf p;
		uint8_t last[12];
		int have_last = 0, rc;

		key_rid(&p, c->d.dom, rid);
		rc = mdb_cursor_open(c->d.txn, c->d.st->dbi[db], &cur);
		if (rc)
			return store_err(rc, db_names[db]);
		k.mv_data = p.b;
		k.mv_size = p.n;
		for (rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); rc == 0;
		     rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
			const uint8_t *kk = k.mv_data;
			ventry e;

			if (k.mv_size != 32 || memcmp(kk, p.b, p.n) != 0)
				break;
			if (ventry_decode(v.mv_data, v.mv_size, VE_ADJ, &e)) {
				mdb_cursor_close(cur);
				return CAIRN_ECORRUPT;
			}
			/* Entries of one Link identity (rel, other) are adjacent, newest first. */
			if (have_last && memcmp(last, kk + 12, 12) == 0)
				continue;
			if (!view_sees(&c->d.v, e.branch, e.rev))
				continue;
			memcpy(last, kk + 12, 12);
			have_last = 1;
			if (e.flags & EF_TOMBSTONE)
				continue;
			rc = fn(c, dir == 0, be32_get(kk + 12), be64_get(kk + 16), e.kind, e.key,
				e.key_len, arg);
			if (rc) {
				mdb_cursor_close(cur);
				return rc;
			}
		}
		mdb_cursor_close(cur);
		if (rc && rc != MDB_NOTFOUND)
			return store_err(rc, db_names[db]);
	}
	return 0;
}

struct cascade_arg {
	size_t ri;
	long idx;
};

/* Delete with cascade: plan an unlink of each Link of the Record. */
static int cascade_one(cctx *c, int out_dir, uint32_t rel, uint64_t other, uint32_t other_kind,
		       const char *other_key, size_t other_len, void *arg)
{
	struct cascade_arg *a = arg;
	size_t oi, li;
	int rc;

	(void)other;
	rc = rstate_get(c, other_kind, other_key, other_len, &oi);
	if (rc)
		return rc;
	rc = out_dir ? lstate_get(c, rel, a->ri, oi, &li) : lstate_get(c, rel, oi, a->ri, &li);
	if (rc)
		return rc;
	if (!c->ls[li].exists)
		return 0; /* already unlinked by this commit */
	return plan_link_op(c, a->idx, li, V_LINK_DEL, NULL, NULL);
}

static int do_delete(cctx *c, long idx, size_t ri, const cs_change *ch)
{
	rstate *r = &c->rs[ri];
	vrec v = {0};
	pop *o;
	int rc;

	if (ch->flags & CAIRN_CASCADE) {
		struct cascade_arg a = {ri, idx};

		rc = links_in_view(c, r->rid, cascade_one, &a);
		if (rc)
			return rc;
		/* Links this commit created. */
		for (size_t i = 0; i < c->n_ls; i++) {
			lstate *l = &c->ls[i];

			if (l->exists && (l->from == ri || l->to == ri) &&
			    (rc = plan_link_op(c, idx, i, V_LINK_DEL, NULL, NULL)))
				return rc;
		}
		r = &c->rs[ri];
	}
	o = op_new(c, V_REC_DEL, idx, ri);
	if (!o)
		return err_set(CAIRN_ENOMEM, "out of memory");
	o->prev = r->cur_vid;
	o->prev_live = r->cur_live;
	o->count_delta = -1;
	v.type = V_REC_DEL;
	v.kr = r->kind;
	v.branch = c->d.br.id;
	v.rev = c->rev;
	v.prev = o->prev;
	v.rid = r->rid;
	v.key = r->key;
	v.key_len = r->key_len;
	rc = op_encode(c, o, &v);
	if (rc)
		return rc;
	r->values = NULL;
	r->exists = 0;
	r->cur_vid = o->vid;
	r->cur_live = 0;
	r->dim = 0;
	r->vec_vid = 0;
	r->last_change = idx;
	r->touched = 1;
	return 0;
}

/* Resolve a Kind name of change idx, or record a failure (-1). */
static int kind_of(cctx *c, long idx, const char *name, const kind_def **k)
{
	*k = schema_kind(c->d.s, name);
	if (*k)
		return 0;
	return failed(failf(c, idx, CAIRN_EUNKNOWNKIND, 0, NULL, 0, "change %ld: unknown Kind \"%s\"", idx,
		     name)
		       );
}

static int do_change(cctx *c, long idx, const cs_change *ch)
{
	const kind_def *k;
	const rel_def *rl;
	size_t ri, fi, ti, li;
	int rc;

	switch (ch->op) {
	case OP_PUT:
	case OP_PATCH: {
		const jv *vals;

		if ((rc = kind_of(c, idx, ch->kind, &k)))
			return rc;
		if ((rc = vector_dim_check(c, idx, ch)))
			return rc;
		if ((rc = rstate_get(c, k->id, ch->key, ch->key_len, &ri)))
			return rc;
		if ((rc = rstate_load(c, &c->rs[ri])))
			return rc;
		if (ch->op == OP_PATCH) {
			if (!c->rs[ri].exists)
				return failed(failf(c, idx, CAIRN_ENOTFOUND, 0, NULL, 0,
						    "change %ld: cannot patch %s:%.*s, which does not exist",
						    idx, k->name, (int)ch->key_len, ch->key));
			vals = jv_merge_patch(&c->mem, c->rs[ri].values, ch->values);
		} else {
			vals = ch->values ? ch->values : jv_object(&c->mem, 0);
		}
		if (!vals)
			return err_set(CAIRN_ENOMEM, "out of memory");
		rc = values_validate(c, idx, k, vals, ch->key, ch->key_len, &vals);
		if (rc)
			return rc;
		if (ch->op == OP_PATCH)
			return plan_record(c, idx, ri, vals, c->rs[ri].title, c->rs[ri].title_len,
					   ch);
		return plan_record(c, idx, ri, vals, ch->title ? ch->title : "", ch->title_len, ch);
	}
	case OP_DELETE:
		if ((rc = kind_of(c, idx, ch->kind, &k)))
			return rc;
		if ((rc = rstate_get(c, k->id, ch->key, ch->key_len, &ri)))
			return rc;
		if (!c->rs[ri].exists)
			return failed(failf(c, idx, CAIRN_ENOTFOUND, 0, NULL, 0,
				     "change %ld: cannot delete %s:%.*s, which does not exist", idx,
				     k->name, (int)ch->key_len, ch->key)
				       );
		return do_delete(c, idx, ri, ch);
	case OP_LINK:
	case OP_UNLINK: {
		const kind_def *fk, *tk;

		rl = schema_rel(c->d.s, ch->rel);
		if (!rl)
			return failed(failf(c, idx, CAIRN_EUNKNOWNREL, 0, NULL, 0,
				     "change %ld: unknown Relation \"%s\"", idx, ch->rel)
				       );
		fk = schema_kind(c->d.s, ch->from_kind);
		tk = schema_kind(c->d.s, ch->to_kind);
		if (!fk || !tk || fk->id != rl->from_kind || tk->id != rl->to_kind)
			return failed(failf(c, idx, CAIRN_ELINKKIND, 0, NULL, 0,
				     "change %ld: Relation %s links %s to %s, not %s to %s", idx,
				     rl->name, rl->from, rl->to, ch->from_kind, ch->to_kind)
				       );
		if ((rc = rstate_get(c, fk->id, ch->from_key, ch->from_len, &fi)) ||
		    (rc = rstate_get(c, tk->id, ch->to_key, ch->to_len, &ti)) ||
		    (rc = lstate_get(c, rl->id, fi, ti, &li)))
			return rc;
		if (ch->op == OP_UNLINK) {
			if (!c->ls[li].exists)
				return failed(failf(c, idx, CAIRN_ENOTFOUND, 0, NULL, 0,
					     "change %ld: no Link %s from %s:%.*s to %s:%.*s", idx,
					     rl->name, fk->name, (int)ch->from_len, ch->from_key,
					     tk->name, (int)ch->to_len, ch->to_key)
					       );
			return plan_link_op(c, idx, li, V_LINK_DEL, NULL, ch);
		}
		return plan_link_op(c, idx, li, V_LINK, ch->values, ch);
	}
	}
	return err_set(CAIRN_EINVAL, "change %ld: unknown operation", idx);
}

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
				rc = failf(c, c->rs[i].last_change, CAIRN_EREF, 0, NULL, 0,
					   "change %ld (%s:%.*s): %s names no %s", c->rs[i].last_change,
					   k->name, (int)c->rs[i].key_len, c->rs[i].key, a->name,
					   a->ref);
				if (rc)
					return rc;
				continue;
			}
			rc = rstate_get(c, a->ref_kind, v->u.s, v->len, &ti);
			if (rc)
				return rc;
			if (c->rs[ti].exists)
				continue;
			rc = failf(c, c->rs[i].last_change, CAIRN_EREF, a->ref_kind,
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
		rc = failf(c, l->last_change, CAIRN_ELINKEND, e->kind, e->key, e->key_len,
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
	int rc = links_in_view(c, c->rs[ri].rid, count_one, &a);

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
				if (rd->from_kind != c->rs[from].kind || rd->to_kind != c->rs[to].kind)
					continue;
				lkey(mk, rd->id, c->rs[from].rid, c->rs[to].rid);
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
		rc = failf(c, r->last_change, CAIRN_EHASLINKS, 0, NULL, 0,
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
		rc = failf(c, l->last_change, CAIRN_ECARDINALITY, 0, NULL, 0,
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
				rc = failf(c, r->last_change, CAIRN_EREF, 0, NULL, 0,
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

/* Is the value of attribute a held by a live Record other than r, outside this commit? */
static int unique_taken(cctx *c, const attr_def *a, rstate *r, const jv *val, int *taken)
{
	uint64_t vid;
	int rc = attr_holders(c, r->kind, a, val, same_value, r, &vid);

	*taken = vid != 0;
	return rc;
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
			uint64_t *slot;
			int isnew, taken;

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

				rc = failf(c, later, CAIRN_EUNIQUE, 0, NULL, 0,
					   "change %ld: %s.%s must be unique, and %s:%.*s and "
					   "%s:%.*s both have it",
					   later, k->name, a->name, k->name, (int)o->key_len, o->key,
					   k->name, (int)r->key_len, r->key);
				continue;
			}
			*slot = i + 1;
			rc = unique_taken(c, a, r, v, &taken);
			if (rc || !taken)
				continue;
			buf_reset(&c->tmp);
			jv_canon(v, &c->tmp);
			buf_cstr(&c->tmp);
			rc = failf(c, r->last_change, CAIRN_EUNIQUE, 0, NULL, 0,
				   "change %ld (%s:%.*s): %s.%s must be unique, and %s is already "
				   "used by another Record",
				   r->last_change, k->name, (int)r->key_len, r->key, k->name,
				   a->name, c->tmp.oom ? "the value" : (char *)c->tmp.p);
		}
	}
	hmap_release(&inside);
	return rc;
}

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

static void ix_release(cctx *c)
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
	uint8_t val[VENTRY_MAX], vb[8];
	ventry e = {0};
	size_t n;
	kbuf k;
	int rc;

	be64_put(vb, o->vid);
	sha256_update(h, vb, 8);
	sha256_update(h, c->arena.p + o->enc_off, o->enc_len);
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

static int write_revision(cctx *c, int type, const cairn_provenance *p, const uint8_t digest[32],
			  uint64_t first_vid, uint64_t n_versions, cairn_commit_result *out)
{
	rrec r = {0};
	buf b = BUF_INIT;
	kbuf k;
	int64_t now = time_now_ms();
	int rc;

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

static int apply(cctx *c, const cairn_provenance *prov, cairn_commit_result *out)
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
	ix_release(c);
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
		rc = write_revision(c, CAIRN_REV_DATA, prov, digest, first_vid, c->n_ops, out);
	hmap_release(&lm);
	cr_free(chunks);
	cr_free(deltas);
	return rc;
}

/* ------------------------------------------------------------ driver -- */

static void cctx_release(cctx *c)
{
	for (size_t i = 0; i < c->n_rs; i++) {
		cr_free(c->rs[i].key_own);
		cr_free(c->rs[i].title);
		cr_free(c->rs[i].lin);
	}
	cr_free(c->rs);
	cr_free(c->ls);
	cr_free(c->ops);
	cr_free(c->kbloom);
	hmap_release(&c->rmap);
	hmap_release(&c->lmap);
	buf_release(&c->arena);
	buf_release(&c->tmp);
	arena_release(&c->mem);
	wl_release(&c->wl);
	ix_release(c);
	dctx_close(&c->d);
}

/* A catalog value of a vector model: be32 dimension, then the model's id. */
static int model_decode(const MDB_val *v, uint32_t *dim, char model[VEC_MODEL_MAX + 1])
{
	if (v->mv_size < 4 || v->mv_size > 4 + VEC_MODEL_MAX)
		return err_set(CAIRN_ECORRUPT, "bad vector model record");
	*dim = be32_get(v->mv_data);
	memcpy(model, (const uint8_t *)v->mv_data + 4, v->mv_size - 4);
	model[v->mv_size - 4] = '\0';
	return 0;
}

int vec_model_get(MDB_txn *txn, cairn_store *st, uint32_t dom, uint32_t *dim,
		  char model[VEC_MODEL_MAX + 1])
{
	kbuf k;
	MDB_val v;
	int rc;

	*dim = 0;
	model[0] = '\0';
	kb_init(&k);
	kb_be32(&k, dom);
	kb_u8(&k, CAT_VMODEL);
	rc = db_get(txn, st, DB_CATALOG, k.b, k.n, &v);
	if (rc == CAIRN_ENOTFOUND)
		return 0;
	return rc ? rc : model_decode(&v, dim, model);
}

static int fail_cmp(const void *a, const void *b)
{
	const commit_fail *x = a, *y = b;

	if (x->change != y->change)
		return (x->change > y->change) - (x->change < y->change);
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Validate and plan in an open write transaction. Returns 0, a fatal error, or the first failure's code. */
static int validate(cctx *c)
{
	int rc;

	if ((rc = counters_get(c->d.txn, c->d.st, c->d.dom, &c->ctr)) || (rc = vec_model_get(c->d.txn, c->d.st, c->d.dom, &c->vec_dim, c->vec_model)))
		return rc;
	c->rev = c->ctr.next_rev;
	for (size_t i = 0; i < c->cs->n; i++) {
		size_t before = c->n_fails;

		rc = do_change(c, (long)i, &c->cs->v[i]);
		if (rc && rc != COLLECTED)
			return rc;
		if (c->n_fails > before && c->mode == COMMIT_STOP)
			break;
	}
	if (c->n_fails == 0 || c->mode == COMMIT_COLLECT) {
		if ((rc = check_refs(c)) || (rc = check_link_ends(c)) ||
		    (rc = check_deleted_links(c)) || (rc = check_referrers(c)) ||
		    (rc = check_cardinality(c)) || (rc = check_unique(c)))
			return rc;
	}
	if (c->n_fails) {
		qsort(c->fails, c->n_fails, sizeof(*c->fails), fail_cmp);
		return err_change(c->fails[0].code, c->fails[0].change, "%s", c->fails[0].msg);
	}
	return 0;
}

/* Validate and apply in txn (already open on the branch in c->d). */
static int run_in_txn(cctx *c, const cairn_commit_options *o, cairn_commit_result *out,
		      commit_fail **fails, size_t *n_fails)
{
	int rc;

	c->emb = o->embedder;
	c->cmodel = o->embedder ? cairn_embedder_model(o->embedder)
		    : o->vector_model ? o->vector_model : "";
	if (strlen(c->cmodel) > VEC_MODEL_MAX || !utf8_valid(c->cmodel, strlen(c->cmodel)))
		return err_set(CAIRN_EINVAL, "a model id is valid UTF-8 of at most %d bytes",
			       VEC_MODEL_MAX);
	if (o->has_expect && branch_head(&c->d.br) != o->expect_revision)
		rc = err_set(CAIRN_ECONFLICT, "branch %s is at revision %llu, not the expected %llu",
			     c->d.br.name, (unsigned long long)branch_head(&c->d.br),
			     (unsigned long long)o->expect_revision);
	else if (!(rc = validate(c)))
		rc = apply(c, &o->prov, out);
	if (rc && fails && c->n_fails) {
		*fails = c->fails;
		*n_fails = c->n_fails;
	} else {
		commit_fails_free(c->fails, c->n_fails);
	}
	c->fails = NULL;
	c->n_fails = 0;
	return rc;
}

int commit_in_txn(dctx *d, const cairn_commit_options *o, const cairn_changeset *cs, int mode,
		  const commit_extra *x, cairn_commit_result *out, commit_fail **fails,
		  size_t *n_fails)
{
	cctx c;
	int rc;

	memset(&c, 0, sizeof(c));
	c.d = *d;
	c.d.sref = NULL; /* the caller keeps its reference to the schema */
	c.d.kcur = NULL;
	c.d.lcache = NULL;
	c.d.lcache_n = 0;
	c.d.kseg_loaded = 0; /* an earlier commit of the transaction may have written segments */
	c.cs = cs;
	c.mode = mode;
	c.x = x;
	rc = run_in_txn(&c, o, out, fails, n_fails);
	cctx_release(&c);
	d->kseg_loaded = 0; /* the commit may have written or folded segments */
	return rc;
}

/* One run of a commit, as store_write runs it. */
struct commit_once {
	const cairn_commit_options *o;
	const cairn_changeset *cs;
	int mode;
	cairn_commit_result *out;
	commit_fail **fails;
	size_t *n_fails;
	int created;
};

static int commit_once(MDB_txn *txn, cairn_store *st, void *arg)
{
	struct commit_once *a = arg;
	cctx c;
	int rc;

	if (a->fails && *a->fails) { /* an earlier run's, when the map filled */
		commit_fails_free(*a->fails, *a->n_fails);
		*a->fails = NULL;
		*a->n_fails = 0;
	}
	memset(&c, 0, sizeof(c));
	c.cs = a->cs;
	c.mode = a->mode;
	rc = dctx_open_write(&c.d, st, txn, a->o, &a->created);
	if (!rc)
		rc = run_in_txn(&c, a->o, a->out, a->fails, a->n_fails);
	cctx_release(&c);
	return rc;
}

static int prov_check(const cairn_provenance *p)
{
	const char *f[] = {p->actor, p->source, p->message, p->trace_id};
	const char *names[] = {"actor", "source", "message", "trace id"};

	if (p->has_confidence && !(p->confidence >= 0 && p->confidence <= 1))
		return err_set(CAIRN_EINVAL, "confidence must be between 0 and 1");
	for (int i = 0; i < 4; i++) {
		if (!f[i])
			continue;
		if (strlen(f[i]) > 65536)
			return err_set(CAIRN_ELIMIT, "the %s is longer than 65536 bytes", names[i]);
		if (!utf8_valid(f[i], strlen(f[i])))
			return err_set(CAIRN_EUTF8, "the %s is not valid UTF-8", names[i]);
	}
	return 0;
}

int commit_run(cairn_store *st, const cairn_commit_options *o, const cairn_changeset *cs,
	       int mode, cairn_commit_result *out, commit_fail **fails, size_t *n_fails)
{
	struct commit_once a;
	int rc;

	if (fails) {
		*fails = NULL;
		*n_fails = 0;
	}
	if (!st || !o || !cs)
		return err_set(CAIRN_EINVAL, "cairn_commit: NULL argument");
	if (!o->domain)
		return err_set(CAIRN_EINVAL, "cairn_commit: no Domain");
	if (cs->n == 0)
		return err_set(CAIRN_EINVAL, "cairn_commit: the change set is empty");
	if ((rc = prov_check(&o->prov)) ||
	    (rc = err_reserved(o->reserved, "cairn_commit", "cairn_commit_options")))
		return rc;
	a = (struct commit_once){o, cs, mode, out, fails, n_fails, 0};
	if (!(rc = store_write(st, commit_once, &a)) && a.created)
		cache_invalidate(st);
	return rc;
}

int cairn_commit(cairn_store *st, const cairn_commit_options *opts, const cairn_changeset *cs,
		 cairn_commit_result *out)
{
	return commit_run(st, opts, cs, COMMIT_STOP, out, NULL, NULL);
}

/* ------------------------------------------------------ schema commit -- */

/* One run of a schema change, as store_write runs it. */
struct schema_once {
	const cairn_commit_options *o;
	const char *json;
	size_t len;
	cairn_commit_result *out;
};

static int schema_once(MDB_txn *txn, cairn_store *st, void *arg)
{
	struct schema_once *a = arg;
	const cairn_commit_options *o = a->o;
	cctx c;
	schema *m = NULL;
	schema_delta delta = {0};
	sha256_ctx h;
	uint8_t digest[32];
	int rc, created;

	memset(&c, 0, sizeof(c));
	rc = dctx_open_write(&c.d, st, txn, o, &created);
	if (rc)
		goto out;
	if (o->has_expect && branch_head(&c.d.br) != o->expect_revision) {
		rc = err_set(CAIRN_ECONFLICT, "branch %s is at revision %llu, not the expected %llu",
			     c.d.br.name, (unsigned long long)branch_head(&c.d.br),
			     (unsigned long long)o->expect_revision);
		goto out;
	}
	rc = schema_apply_json(c.d.s, a->json, a->len, &m, &delta);
	if (rc)
		goto out;
	if ((rc = counters_get(txn, st, c.d.dom, &c.ctr)))
		goto out;
	c.rev = c.ctr.next_rev;
	rc = schema_check_data(&c.d, m, &delta);
	if (rc)
		goto out;
	if ((rc = schema_store(txn, st, c.d.dom, c.rev, m)))
		goto out;
	if (sha256_init(&h)) {
		rc = err_set(CAIRN_ENOMEM, "out of memory");
		goto out;
	}
	sha256_update(&h, m->json, m->json_len);
	sha256_final(&h, digest);
	rc = write_revision(&c, CAIRN_REV_SCHEMA, &o->prov, digest, c.ctr.next_vid, 0, a->out);
	if (rc)
		goto out;
	rc = catalog_touch(txn, st);
out:
	schema_free(m);
	schema_delta_release(&delta);
	cctx_release(&c);
	return rc;
}

int cairn_schema_apply(cairn_store *st, const cairn_commit_options *opts, const char *json,
		       size_t len, cairn_commit_result *out)
{
	struct schema_once a;
	int rc;

	if (!st || !opts || !json)
		return err_set(CAIRN_EINVAL, "cairn_schema_apply: NULL argument");
	if (!opts->domain)
		return err_set(CAIRN_EINVAL, "cairn_schema_apply: no Domain");
	if (opts->branch && strcmp(opts->branch, "main") != 0)
		return err_set(CAIRN_EINVAL,
			       "the schema belongs to the Domain, not to a branch: apply it on main "
			       "(every branch reads with it)");
	if ((rc = prov_check(&opts->prov)) ||
	    (rc = err_reserved(opts->reserved, "cairn_schema_apply", "cairn_commit_options")))
		return rc;
	a = (struct schema_once){opts, json, len, out};
	if (!(rc = store_write(st, schema_once, &a)))
		cache_invalidate(st);
	return rc;
}

/* ---------------------------------------------------------- re-embed -- */

/* Catalog (dom 'E' rev) -> be32 dim, model id: one per re-embedding. */
static void key_reembed(kbuf *k, uint32_t dom, uint64_t rev)
{
	kb_init(k);
	kb_be32(k, dom);
	kb_u8(k, CAT_REEMBED);
	kb_be64(k, rev);
}

int vec_reembed_get(MDB_txn *txn, cairn_store *st, uint32_t dom, uint64_t rev, uint32_t *dim,
		    char model[VEC_MODEL_MAX + 1])
{
	kbuf k;
	MDB_val v;
	int rc;

	key_reembed(&k, dom, rev);
	if ((rc = db_get(txn, st, DB_CATALOG, k.b, k.n, &v)))
		return rc;
	return model_decode(&v, dim, model);
}

int vec_generation(MDB_txn *txn, cairn_store *st, uint32_t dom, uint64_t *rev)
{
	MDB_cursor *cur;
	MDB_val k, v;
	kbuf p;
	int mrc;

	*rev = 0;
	key_reembed(&p, dom, UINT64_MAX);
	if ((mrc = mdb_cursor_open(txn, st->dbi[DB_CATALOG], &cur)))
		return store_err(mrc, "catalog");
	k.mv_data = p.b;
	k.mv_size = p.n;
	/* The key before (dom 'E' UINT64_MAX), if it is one of the Domain's re-embeddings. */
	mrc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
	if (mrc == 0 || mrc == MDB_NOTFOUND)
		mrc = mdb_cursor_get(cur, &k, &v, mrc ? MDB_LAST : MDB_PREV);
	if (mrc == 0 && k.mv_size == p.n && memcmp(k.mv_data, p.b, 5) == 0)
		*rev = be64_get((const uint8_t *)k.mv_data + 5);
	mdb_cursor_close(cur);
	return mrc && mrc != MDB_NOTFOUND ? store_err(mrc, "catalog") : 0;
}

/* Every vector of the Domain anew, by the embedder, in txn. */
static int reembed_vectors(cctx *c, const cairn_embedder *e, cairn_reembed_result *out)
{
	size_t dim = cairn_embedder_dim(e), n = 0, cap = 0;
	float *vec = cr_malloc(dim * sizeof(float));
	uint64_t *vids = NULL;
	MDB_cursor *cur = NULL;
	MDB_val k, v;
	kbuf p, vk;
	int mrc, rc = 0;

	if (!vec)
		return err_set(CAIRN_ENOMEM, "out of memory");
	/*
	 * The vectors there are (a compaction removed those no read can see),
	 * listed first: the puts below move the pages a cursor walks.
	 */
	if ((mrc = mdb_cursor_open(c->d.txn, c->d.st->dbi[DB_VECTORS], &cur))) {
		cr_free(vec);
		return store_err(mrc, "vectors");
	}
	kb_init(&p);
	kb_be32(&p, c->d.dom);
	k.mv_data = p.b;
	k.mv_size = p.n;
	for (mrc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); mrc == 0 && !rc;
	     mrc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		if (k.mv_size != 12 || memcmp(k.mv_data, p.b, 4) != 0)
			break;
		if (n == cap) {
			uint64_t *nv = cr_reallocarray(vids, cap ? cap * 2 : 1024, sizeof(*nv));

			if (!nv) {
				rc = err_set(CAIRN_ENOMEM, "out of memory");
				break;
			}
			vids = nv;
			cap = cap ? cap * 2 : 1024;
		}
		vids[n++] = be64_get((const uint8_t *)k.mv_data + 4);
	}
	mdb_cursor_close(cur);
	if (!rc && mrc && mrc != MDB_NOTFOUND)
		rc = store_err(mrc, "vectors");
	for (size_t i = 0; i < n && !rc; i++) {
		vrec ver;
		size_t words = 0;

		if ((rc = version_get(&c->d, vids[i], &ver)))
			break;
		if (ver.type != V_REC || !ver.dim)
			continue;
		if ((rc = cairn_embed(e, ver.title, ver.title_len, vec, dim, &words)))
			break;
		key_u64(&vk, c->d.dom, vids[i]);
		rc = db_put(c->d.txn, c->d.st, DB_VECTORS, vk.b, vk.n, vec, dim * sizeof(float), 0);
		out->vectors++;
		out->empty += words == 0;
	}
	cr_free(vids);
	cr_free(vec);
	return rc;
}

/* One run of a re-embedding, as store_write runs it. */
struct reembed_once {
	const cairn_commit_options *o;
	cairn_reembed_result *out;
};

static int reembed_once(MDB_txn *txn, cairn_store *st, void *arg)
{
	struct reembed_once *a = arg;
	const cairn_commit_options *o = a->o;
	cairn_reembed_result *out = a->out;
	const cairn_embedder *e = o->embedder;
	const char *id = cairn_embedder_model(e);
	uint32_t dim = (uint32_t)cairn_embedder_dim(e), old_dim;
	char old[VEC_MODEL_MAX + 1];
	uint8_t b[4 + VEC_MODEL_MAX], digest[32];
	size_t idn = strlen(id);
	sha256_ctx h;
	kbuf k;
	cctx c;
	int rc, created;

	memset(out, 0, sizeof(*out));
	memset(&c, 0, sizeof(c));
	if ((rc = dctx_open_write(&c.d, st, txn, o, &created)))
		goto out;
	if (o->has_expect && branch_head(&c.d.br) != o->expect_revision) {
		rc = err_set(CAIRN_ECONFLICT, "branch %s is at revision %llu, not the expected %llu",
			     c.d.br.name, (unsigned long long)branch_head(&c.d.br),
			     (unsigned long long)o->expect_revision);
		goto out;
	}
	if ((rc = counters_get(txn, st, c.d.dom, &c.ctr)) ||
	    (rc = vec_model_get(txn, st, c.d.dom, &old_dim, old)))
		goto out;
	if (!old_dim) {
		rc = err_set(CAIRN_EINVAL, "the Domain has no vectors to re-embed");
		goto out;
	}
	c.rev = c.ctr.next_rev;
	if ((rc = reembed_vectors(&c, e, out)))
		goto out;
	/* The old index is of the old vectors: gone, and built again in the background. */
	kb_init(&k);
	kb_be32(&k, c.d.dom);
	if ((rc = db_del_prefix(txn, st, DB_VINDEX, k.b, k.n, NULL)))
		goto out;
	be32_put(b, dim);
	memcpy(b + 4, id, idn);
	kb_u8(&k, CAT_VMODEL);
	if ((rc = db_put(txn, st, DB_CATALOG, k.b, k.n, b, 4 + idn, 0)))
		goto out;
	key_reembed(&k, c.d.dom, c.rev);
	if ((rc = db_put(txn, st, DB_CATALOG, k.b, k.n, b, 4 + idn, MDB_NOOVERWRITE)))
		goto out;
	if (sha256_init(&h)) {
		rc = err_set(CAIRN_ENOMEM, "out of memory");
		goto out;
	}
	sha256_update(&h, b, 4 + idn);
	sha256_final(&h, digest);
	rc = write_revision(&c, CAIRN_REV_VECTORS, &o->prov, digest, c.ctr.next_vid, 0,
			    &out->commit);
out:
	cctx_release(&c);
	return rc;
}

int cairn_reembed(cairn_store *st, const cairn_commit_options *opts, cairn_reembed_result *out)
{
	cairn_reembed_result tmp;
	struct reembed_once a;
	int rc;

	if (!st || !opts)
		return err_set(CAIRN_EINVAL, "cairn_reembed: NULL argument");
	if (!opts->domain)
		return err_set(CAIRN_EINVAL, "cairn_reembed: no Domain");
	if (!opts->embedder)
		return err_set(CAIRN_EINVAL, "cairn_reembed: no embedder (the new model)");
	if (strlen(cairn_embedder_model(opts->embedder)) > VEC_MODEL_MAX)
		return err_set(CAIRN_EINVAL, "the model id is longer than %d bytes", VEC_MODEL_MAX);
	if (opts->branch && strcmp(opts->branch, "main") != 0)
		return err_set(CAIRN_EINVAL,
			       "the vectors belong to the Domain, not to a branch: re-embed on main "
			       "(every branch's vectors are re-embedded)");
	if ((rc = prov_check(&opts->prov)) ||
	    (rc = err_reserved(opts->reserved, "cairn_reembed", "cairn_commit_options")))
		return rc;
	a = (struct reembed_once){opts, out ? out : &tmp};
	/* The index of the old vectors is gone: built again in the background. */
	if (!(rc = store_write(st, reembed_once, &a)))
		store_wake(st);
	return rc;
}

/* ------------------------------------------------------- group commit -- */

static void req_fail(cairn_commit_req *r, int rc)
{
	const char *m = cairn_errmsg();

	r->rc = rc;
	snprintf(r->msg, sizeof(r->msg), "%s", *m ? m : cairn_strerror(rc));
	r->change = cairn_errchange();
}

/*
 * The group in one write transaction, each commit in a nested transaction
 * of its own, so that a failed one is undone alone. Returns 0, or an error
 * of the whole group (CAIRN_EMAPFULL: grow and run it again).
 */
/* One run of a group of commits, as store_write runs it. */
struct group_once {
	cairn_commit_req *reqs;
	size_t n;
	const char *skip;
	int created_any;
};

static int group_once(MDB_txn *txn, cairn_store *st, void *arg)
{
	struct group_once *a = arg;
	cairn_commit_req *reqs = a->reqs;
	const char *skip = a->skip;
	size_t ok = 0, n = a->n;
	int rc = 0;

	a->created_any = 0;
	for (size_t i = 0; i < n; i++) {
		cairn_commit_req *r = &reqs[i];
		MDB_txn *child;
		cctx c;
		int created = 0, mrc;

		if (skip[i])
			continue;
		err_clear();
		mrc = mdb_txn_begin(st->env, txn, 0, &child);
		if (mrc) {
			rc = store_err(mrc, "nested transaction");
			break;
		}
		memset(&c, 0, sizeof(c));
		c.cs = r->cs;
		c.mode = COMMIT_STOP;
		rc = dctx_open_write(&c.d, st, child, r->opts, &created);
		if (!rc)
			rc = run_in_txn(&c, r->opts, &r->res, NULL, NULL);
		cctx_release(&c);
		if (rc) {
			mdb_txn_abort(child);
			if (rc == CAIRN_EMAPFULL || rc == CAIRN_EIO || rc == CAIRN_ENOMEM)
				break; /* the whole group */
			req_fail(r, rc);
			rc = 0;
			continue;
		}
		if ((mrc = mdb_txn_commit(child))) {
			rc = store_err(mrc, "nested commit");
			break;
		}
		r->rc = 0;
		a->created_any |= created;
		ok++;
	}
	return rc || ok ? rc : STORE_DISCARD;
}

int cairn_commit_group(cairn_store *st, cairn_commit_req *reqs, size_t n)
{
	struct group_once a;
	char *skip;
	int rc = 0;

	if (!st || (!reqs && n))
		return err_set(CAIRN_EINVAL, "cairn_commit_group: NULL argument");
	skip = cr_calloc(n ? n : 1, 1);
	if (!skip)
		return err_set(CAIRN_ENOMEM, "out of memory");
	/* What fails before any transaction fails alone, and takes no part. */
	for (size_t i = 0; i < n; i++) {
		cairn_commit_req *r = &reqs[i];

		r->rc = 0;
		r->msg[0] = '\0';
		r->change = -1;
		memset(&r->res, 0, sizeof(r->res));
		err_clear();
		if (!r->opts || !r->cs || !r->opts->domain)
			rc = err_set(CAIRN_EINVAL, "cairn_commit_group: a commit without options, "
						   "change set or Domain");
		else if (r->cs->n == 0)
			rc = err_set(CAIRN_EINVAL, "cairn_commit: the change set is empty");
		else if (!(rc = prov_check(&r->opts->prov)))
			rc = err_reserved(r->opts->reserved, "cairn_commit_group",
					  "cairn_commit_options");
		if (rc) {
			req_fail(r, rc);
			skip[i] = 1;
			rc = 0;
		}
	}
	a = (struct group_once){reqs, n, skip, 0};
	rc = store_write(st, group_once, &a);
	if (rc) {
		const char *m = cairn_errmsg();
		char msg[512];

		snprintf(msg, sizeof(msg), "%s", *m ? m : cairn_strerror(rc));
		for (size_t i = 0; i < n; i++)
			if (!skip[i]) {
				reqs[i].rc = rc;
				snprintf(reqs[i].msg, sizeof(reqs[i].msg), "%s", msg);
				reqs[i].change = -1;
			}
	} else if (a.created_any) {
		cache_invalidate(st);
	}
	cr_free(skip);
	return rc;
}
