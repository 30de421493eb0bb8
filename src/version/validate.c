/*
 * Validation of a commit: every change simulated in order over the branch
 * head (a state per Record and per Link it touches), turned into planned
 * Versions, each failure recorded with its change (commit_int.h).
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

/* ------------------------------------------------------------ errors -- */

static int failed(int rc)
{
	return rc ? rc : COLLECTED;
}

/* Record a validation failure of change `change`; kind/key name a missing Record, if any. */
int commit_failf(cctx *c, long change, int code, uint32_t kind, const char *key, size_t key_len,
		 const char *fmt, ...) __attribute__((format(printf, 7, 8)));
int commit_failf(cctx *c, long change, int code, uint32_t kind, const char *key, size_t key_len,
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

int commit_rstate_get(cctx *c, uint32_t kind, const char *key, size_t key_len, size_t *out)
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

void commit_lkey(uint8_t out[20], uint32_t rel, uint64_t from, uint64_t to)
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

	commit_lkey(mk, rel, c->rs[from].rid, c->rs[to].rid);
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
	char why[512], hint[1024];
	size_t missing = 0, at = 0;

	*out = values = jv_drop_nulls(&c->mem, values);
	if (!values)
		return err_set(CAIRN_ENOMEM, "out of memory");
	for (uint32_t i = 0; i < values->len; i++) {
		const jv *v = &values->u.items[i];
		const attr_def *a = kind_attr(k, v->key);
		int code;

		if (!a || strlen(v->key) != v->key_len)
			return failed(commit_failf(c, idx, CAIRN_EUNKNOWNATTR, 0, NULL, 0,
					    "change %ld: Kind %s has no attribute \"%.*s\"%s", idx,
					    k->name, (int)v->key_len, v->key,
					    schema_hint_attr(k, v->key, v->key_len, hint,
							     sizeof(hint))));
		code = attr_value_check(a, v, why, sizeof(why));
		if (code)
			return failed(commit_failf(c, idx, code, 0, NULL, 0, "change %ld (%s:%.*s): %s", idx,
					    k->name, (int)key_len, key, why));
	}
	/* Every required attribute missing, named at once. */
	for (size_t i = 0; i < k->n_attrs; i++) {
		const attr_def *a = &k->attrs[i];

		if ((a->flags & AF_REQUIRED) && !jv_get(values, a->name) && at < sizeof(hint)) {
			at += (size_t)snprintf(hint + at, sizeof(hint) - at, "%s%s", missing ? ", " : "",
					       a->name);
			missing++;
		}
	}
	if (missing)
		return failed(commit_failf(c, idx, CAIRN_EREQUIRED, 0, NULL, 0,
				    "change %ld (%s:%.*s): required attribute%s %s %s missing", idx,
				    k->name, (int)key_len, key, missing > 1 ? "s" : "", hint,
				    missing > 1 ? "are" : "is"));
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
		return failed(commit_failf(c, idx, CAIRN_EDIM, 0, NULL, 0,
			     "change %ld: the vector has %zu dimensions; the Domain's vectors have %u",
			     idx, dim, c->vec_dim)
			       );
	/* A merge's vectors are the Domain's own, of its model. */
	if (!c->model_checked && !c->x && strcmp(c->cmodel, c->vec_model) != 0)
		return failed(commit_failf(c, idx, CAIRN_EDIM, 0, NULL, 0,
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

	/*
	 * A put or patch that would write what the Record holds (its title, its
	 * values, no new vector and none to embed) writes nothing: a second
	 * import of the same file, a patch to the value there, leave no Version.
	 * A merge's puts are the merge's to write.
	 */
	if (r->exists && !ch->src_vid && !ch->vec && r->title_len == title_len &&
	    memcmp(r->title, title, title_len) == 0 &&
	    (r->values ? jv_equal(r->values, values)
		       : values->type == JV_OBJECT && values->len == 0) &&
	    !(c->emb && ch->op == OP_PUT && title_len && !r->vec_vid)) {
		c->unchanged++;
		return 0;
	}
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
		rc = failed(commit_failf(c, idx, CAIRN_ELIMIT, 0, NULL, 0,
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
		/* A Link as it is, values and all: nothing to write (as plan_record). */
		if (l->exists && l->loaded && !(ch && ch->src_vid) && l->values_len == c->tmp.len &&
		    memcmp(l->values, c->tmp.p, c->tmp.len) == 0) {
			c->unchanged++;
			return 0;
		}
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

int commit_links_in_view(cctx *c, uint64_t rid, link_visit fn, void *arg)
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
	rc = commit_rstate_get(c, other_kind, other_key, other_len, &oi);
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

		rc = commit_links_in_view(c, r->rid, cascade_one, &a);
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
	char hint[1024];

	*k = schema_kind(c->d.s, name);
	if (*k)
		return 0;
	return failed(commit_failf(c, idx, CAIRN_EUNKNOWNKIND, 0, NULL, 0,
				   "change %ld: unknown Kind \"%s\"%s", idx, name,
				   schema_hint_kind(c->d.s, name, hint, sizeof(hint))));
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
		if ((rc = commit_rstate_get(c, k->id, ch->key, ch->key_len, &ri)))
			return rc;
		if ((rc = rstate_load(c, &c->rs[ri])))
			return rc;
		if (ch->op == OP_PATCH) {
			if (!c->rs[ri].exists)
				return failed(commit_failf(c, idx, CAIRN_ENOTFOUND, 0, NULL, 0,
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
		if ((rc = commit_rstate_get(c, k->id, ch->key, ch->key_len, &ri)))
			return rc;
		if (!c->rs[ri].exists)
			return failed(commit_failf(c, idx, CAIRN_ENOTFOUND, 0, NULL, 0,
				     "change %ld: cannot delete %s:%.*s, which does not exist", idx,
				     k->name, (int)ch->key_len, ch->key)
				       );
		return do_delete(c, idx, ri, ch);
	case OP_LINK:
	case OP_UNLINK: {
		const kind_def *fk, *tk;

		rl = schema_rel(c->d.s, ch->rel);
		if (!rl) {
			char hint[1024];

			return failed(commit_failf(c, idx, CAIRN_EUNKNOWNREL, 0, NULL, 0,
					   "change %ld: unknown Relation \"%s\"%s", idx, ch->rel,
					   schema_hint_rel(c->d.s, ch->rel, hint, sizeof(hint))));
		}
		fk = schema_kind(c->d.s, ch->from_kind);
		tk = schema_kind(c->d.s, ch->to_kind);
		if (!fk || !tk || !rel_end_ok(rl->from_kind, fk->id) || !rel_end_ok(rl->to_kind, tk->id))
			return failed(commit_failf(c, idx, CAIRN_ELINKKIND, 0, NULL, 0,
				     "change %ld: Relation %s links %s to %s, not %s to %s", idx,
				     rl->name, rl->from, rl->to, ch->from_kind, ch->to_kind)
				       );
		if ((rc = commit_rstate_get(c, fk->id, ch->from_key, ch->from_len, &fi)) ||
		    (rc = commit_rstate_get(c, tk->id, ch->to_key, ch->to_len, &ti)) ||
		    (rc = lstate_get(c, rl->id, fi, ti, &li)))
			return rc;
		if (ch->op == OP_UNLINK) {
			if (!c->ls[li].exists)
				return failed(commit_failf(c, idx, CAIRN_ENOTFOUND, 0, NULL, 0,
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

static int fail_cmp(const void *a, const void *b)
{
	const commit_fail *x = a, *y = b;

	if (x->change != y->change)
		return (x->change > y->change) - (x->change < y->change);
	return (x->seq > y->seq) - (x->seq < y->seq);
}

int commit_validate(cctx *c)
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
		if ((rc = commit_constraints(c)))
			return rc;
	}
	if (c->n_fails) {
		qsort(c->fails, c->n_fails, sizeof(*c->fails), fail_cmp);
		return err_change(c->fails[0].code, c->fails[0].change, "%s", c->fails[0].msg);
	}
	return 0;
}
