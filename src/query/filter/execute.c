/*
 * The query language's execution: Records read and checked, the walks of an
 * index and of a Kind, cursors, projection, cairn_query, cairn_query_count
 * and query_vids_small.
 */
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/err.h"
#include "base/hmap.h"
#include "base/text.h"
#include "query/filter/filter_int.h"

/* ------------------------------------------------------------- records -- */

static int hits_add(hits *h, const hit *x)
{
	if (h->n == h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 64;
		hit *v = cr_reallocarray(h->v, cap, sizeof(*v));

		if (!v)
			return err_set(CAIRN_ENOMEM, "out of memory");
		h->v = v;
		h->cap = cap;
	}
	h->v[h->n++] = *x;
	return 0;
}

static void need_add(qctx *c, const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; i < c->n_need; i++)
		if (c->need_len[i] == n && !memcmp(c->need[i], name, n))
			return;
	if (c->n_need == NEED_MAX) {
		c->need_all = 1;
		return;
	}
	c->need[c->n_need] = name;
	c->need_len[c->n_need++] = n;
}

static void need_tree(qctx *c, const qnode *q)
{
	if (q->op == Q_LEAF)
		need_add(c, q->a->name);
	for (size_t i = 0; i < q->n; i++)
		need_tree(c, &q->kids[i]);
}

/*
 * A Record's values as an object of only the members the call reads:
 * stored values are canonical, so the others are skipped unparsed.
 */
static const jv *pick_values(qctx *c, const char *s, size_t n)
{
	const jv *v;
	jv *o;
	jmember m;
	size_t pos = 0, found = 0;
	int r = -1;

	if (!c->need_all && (o = jv_object(c->mem, c->n_need))) {
		while (found < c->n_need && (r = json_member_next(s, n, &pos, &m)) == 1)
			for (size_t i = 0; i < c->n_need; i++) {
				if (c->need_len[i] != m.key_len || memcmp(c->need[i], m.key, m.key_len))
					continue;
				if (!(v = jv_parse(c->mem, m.val, m.val_len, "stored values")))
					goto fail;
				o->u.items[o->len] = *v;
				o->u.items[o->len].key = c->need[i];
				o->u.items[o->len].key_len = (uint32_t)m.key_len;
				o->len++;
				found++;
				break;
			}
		if (r >= 0 || found == c->n_need)
			return o;
	}
	if ((v = jv_parse(c->mem, s, n, "stored values")))
		return v;
fail:
	if (err_code() != CAIRN_ENOMEM)
		err_set(CAIRN_ECORRUPT, "stored values do not parse");
	return NULL;
}

/*
 * Load the Record of a visible vid (unless its Version is at hand: have) and
 * check the filter: 1 (a match, in *out), 0, or an error.
 */
static int check_vid(qctx *c, uint64_t vid, const vrec *have, hit *out)
{
	vrec v;
	arena_mark mark;
	int rc;

	if (have)
		v = *have;
	else if ((rc = version_get(&c->t->d, vid, &v)))
		return rc;
	if (v.type != V_REC || v.kr != c->k->id)
		return err_set(CAIRN_ECORRUPT, "an attr entry names Version %llu, not a Record of %s",
			       (unsigned long long)vid, c->k->name);
	c->candidates++;
	mark = arena_mark_get(c->mem);
	if (!(out->values = pick_values(c, v.values, v.values_len)))
		return err_code();
	if (!qf_eval(c->root, out->values)) {
		arena_rewind(c->mem, mark);
		return 0;
	}
	c->matched++;
	out->r.kind = c->k->name;
	out->r.key = v.key;
	out->r.key_len = v.key_len;
	out->r.title = v.title;
	out->r.title_len = v.title_len;
	out->r.values = v.values;
	out->r.values_len = v.values_len;
	out->r.vector_dim = txn_vector_dim(c->t, v.dim);
	out->r.vid = vid;
	out->r.revision = v.rev;
	out->sortv = c->sort ? jv_get(out->values, c->sort->name) : NULL;
	return 1;
}

/* The order of the answer: the sort attribute's value (absent last), then the key. */
static int pos_cmp(const qctx *c, const jv *xv, const char *xk, size_t xkn, const jv *yv,
		   const char *yk, size_t ykn)
{
	if (c->sort) {
		if (!xv != !yv)
			return xv ? -1 : 1;
		if (xv) {
			int r = qf_vcmp(c->sort, xv, yv);

			if (r)
				return r;
		}
	}
	return qf_bytes_cmp((const uint8_t *)xk, xkn, (const uint8_t *)yk, ykn);
}

static int hit_cmp(const void *x, const void *y, void *arg)
{
	const hit *a = x, *b = y;

	return pos_cmp(arg, a->sortv, a->r.key, a->r.key_len, b->sortv, b->r.key, b->r.key_len);
}

/* Is the hit past the cursor? */
static int after_cursor(const qctx *c, const hit *h)
{
	if (!c->has_after)
		return 1;
	return pos_cmp(c, h->sortv, h->r.key, h->r.key_len,
		       c->after_has_value ? c->after_value : NULL, c->after_key,
		       c->after_key_len) > 0;
}

/* --------------------------------------------------------------- walks -- */

/* Walk the Kind in key order from after `key`, calling fn on each Record; fn returns >0 to stop. */
int qf_kind_walk(qctx *c, const char *after, size_t after_len,
		 int (*fn)(qctx *c, const cairn_record *r, void *arg), void *arg)
{
	cairn_record page[128];
	size_t n;
	int rc = 0;

	c->scanned = 1;
	for (;;) {
		if ((rc = cairn_page(c->t, c->k->name, after, after_len, page, 128, &n)))
			return rc;
		for (size_t i = 0; i < n; i++)
			if ((rc = fn(c, &page[i], arg)))
				return rc > 0 ? 0 : rc;
		if (n < 128)
			return 0;
		after = page[n - 1].key;
		after_len = page[n - 1].key_len;
	}
}

int qf_keep_record(qctx *c, const cairn_record *r, void *arg)
{
	page_out *po = arg;
	arena_mark mark = arena_mark_get(c->mem);
	hit x;

	c->candidates++;
	memset(&x, 0, sizeof(x));
	x.r = *r;
	if (!(x.values = pick_values(c, r->values, r->values_len)))
		return err_code();
	x.sortv = c->sort ? jv_get(x.values, c->sort->name) : NULL;
	if ((po->missing_only && x.sortv) || !qf_eval(c->root, x.values)) {
		arena_rewind(c->mem, mark);
		return 0;
	}
	c->matched++;
	if (!after_cursor(c, &x)) {
		arena_rewind(c->mem, mark);
		return 0;
	}
	if (hits_add(po->h, &x))
		return CAIRN_ENOMEM;
	return po->want && po->h->n >= po->want ? 1 : 0;
}

/*
 * The ordered way: one stream per interval of `a` merged in key order
 * (bykey: equalities and in), or the intervals in value order (sorting by
 * a), until `want` hits past the cursor.
 */
int qf_walk_ordered(qctx *c, const attr_def *a, const ival *iv, size_t n_iv, int bykey,
		    size_t want, hits *h)
{
	estream *s;
	size_t ns = bykey ? n_iv : 1, trunc_len = 0;
	uint8_t trunc[ATTR_STRING_CAP * 2 + 2];
	hmap seen = HMAP_INIT;
	int rc = 0;

	s = cr_calloc(ns ? ns : 1, sizeof(*s));
	if (!s)
		return err_set(CAIRN_ENOMEM, "out of memory");
	for (size_t i = 0; i < ns && !rc; i++) {
		rc = qf_es_open(&s[i], c, a, bykey ? &iv[i] : iv, bykey ? 1 : n_iv);
		if (rc)
			break;
		if (bykey)
			rc = qf_es_start(&s[i], iv[i].lo, iv[i].lo_len,
					 c->has_after ? c->after_key : NULL, c->after_key_len);
		else if (c->has_after && c->after_has_value) {
			const uint8_t *e;
			size_t el;

			rc = qf_enc(c, a, c->after_value, &e, &el);
			if (!rc)
				rc = qf_es_start(&s[i], e, el, NULL, 0); /* then skipped up to the cursor */
		} else if (c->has_after) {
			s[i].done = 1; /* the cursor is past every Record with a value */
		} else {
			rc = qf_es_start(&s[i], NULL, 0, NULL, 0);
		}
	}
	for (;;) {
		estream *best = NULL;
		uint64_t vid;
		hit x;
		int ok;

		if (rc)
			break;
		if (h->n >= want) {
			/*
			 * Values longer than the index keeps are in order only by their
			 * prefix: the page takes every entry of a cut value it reached,
			 * and is sorted after.
			 */
			estream *t = &s[0];

			if (bykey || t->done || !trunc_len ||
			    qf_bytes_cmp(t->e.value, t->e.value_len, trunc, trunc_len) != 0)
				break;
		}

		for (size_t i = 0; i < ns; i++)
			if (!s[i].done &&
			    (!best ||
			     qf_bytes_cmp((const uint8_t *)s[i].e.key, s[i].e.key_len,
					  (const uint8_t *)best->e.key, best->e.key_len) < 0))
				best = &s[i];
		if (!best)
			break;
		memset(&x, 0, sizeof(x));
		if ((rc = qf_es_vid(best, &vid)))
			break;
		if (!vid) {
			rc = qf_es_next(best);
			continue;
		}
		/* A Record with several values in range (an array) comes once. */
		if (a->type == AT_STRINGS) {
			uint8_t vb[8];
			int isnew;

			be64_put(vb, vid);
			if (!hmap_put(&seen, vb, 8, &isnew)) {
				rc = err_set(CAIRN_ENOMEM, "out of memory");
				break;
			}
			if (!isnew) {
				rc = qf_es_next(best);
				continue;
			}
		}
		ok = check_vid(c, vid, best->have_ver ? &best->ver : NULL, &x);
		if (ok < 0) {
			rc = ok;
			break;
		}
		if (ok && after_cursor(c, &x) && (rc = hits_add(h, &x)))
			break;
		if (!bykey && best->e.truncated) {
			c->resort = 1;
			if (best->e.value_len <= sizeof(trunc)) {
				memcpy(trunc, best->e.value, best->e.value_len);
				trunc_len = best->e.value_len;
			}
		} else if (!bykey) {
			trunc_len = 0;
		}
		rc = qf_es_next(best);
	}
	for (size_t i = 0; i < ns; i++)
		qf_es_close(&s[i]);
	cr_free(s);
	hmap_release(&seen);
	return rc;
}

/* The collect way: every match the intervals of `a` hold, in any order. */
int qf_walk_collect(qctx *c, const attr_def *a, const ival *iv, size_t n_iv, hits *h)
{
	estream s;
	hmap seen = HMAP_INIT;
	int rc;

	if ((rc = qf_es_open(&s, c, a, iv, n_iv)) || (rc = qf_es_start(&s, NULL, 0, NULL, 0))) {
		qf_es_close(&s);
		return rc;
	}
	while (!rc && !s.done) {
		uint8_t vb[8];
		uint64_t vid;
		int isnew = 1, ok;
		hit x;

		if ((rc = qf_es_vid(&s, &vid)))
			break;
		be64_put(vb, vid);
		if (vid && a->type == AT_STRINGS && !hmap_put(&seen, vb, 8, &isnew)) {
			rc = err_set(CAIRN_ENOMEM, "out of memory");
			break;
		}
		if (vid && isnew) {
			memset(&x, 0, sizeof(x));
			ok = check_vid(c, vid, s.have_ver ? &s.ver : NULL, &x);
			if (ok < 0)
				rc = ok;
			else if (ok && after_cursor(c, &x))
				rc = hits_add(h, &x);
		}
		if (!rc)
			rc = qf_es_next(&s);
	}
	qf_es_close(&s);
	hmap_release(&seen);
	return rc;
}

/* ------------------------------------------------------------- cursors -- */

/*
 * A cursor is the position of the last Record of a page: ["k", key] when
 * sorting by key, ["v", value, key] or ["n", key] (no value) when sorting
 * by an attribute, as JSON in base64url so that it travels in a URL.
 */
static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static char *cursor_make(qctx *c, const hit *h)
{
	buf j = BUF_INIT;
	char *out;
	size_t o = 0;

	buf_put_u8(&j, '[');
	if (!c->sort)
		buf_put(&j, "\"k\",", 4);
	else if (h->sortv) {
		buf_put(&j, "\"v\",", 4);
		jv_canon(h->sortv, &j);
		buf_put_u8(&j, ',');
	} else {
		buf_put(&j, "\"n\",", 4);
	}
	json_quote(&j, h->r.key, h->r.key_len);
	buf_put_u8(&j, ']');
	out = j.oom ? NULL : arena_alloc(c->out, j.len * 4 / 3 + 4);
	if (out) {
		uint32_t acc = 0;
		int bits = 0;

		for (size_t i = 0; i < j.len; i++) {
			acc = acc << 8 | j.p[i];
			bits += 8;
			while (bits >= 6) {
				bits -= 6;
				out[o++] = b64[(acc >> bits) & 63];
			}
		}
		if (bits)
			out[o++] = b64[(acc << (6 - bits)) & 63];
		out[o] = '\0';
	}
	buf_release(&j);
	return out;
}

static int cursor_read(qctx *c, const char *s)
{
	size_t n = strlen(s), o = 0;
	uint8_t *raw = arena_alloc(c->mem, n + 1);
	uint32_t acc = 0;
	int bits = 0;
	const jv *v, *tag;

	if (!raw)
		return err_set(CAIRN_ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		const char *p = strchr(b64, s[i]);

		if (!p || !s[i])
			return err_set(CAIRN_EQUERY, "after: not a cursor of a query");
		acc = acc << 6 | (uint32_t)(p - b64);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			raw[o++] = (uint8_t)(acc >> bits);
		}
	}
	v = jv_parse(c->mem, (const char *)raw, o, "cursor");
	tag = v && v->type == JV_ARRAY && v->len >= 2 ? &v->u.items[0] : NULL;
	if (!tag || tag->type != JV_STRING || v->u.items[v->len - 1].type != JV_STRING)
		return err_set(CAIRN_EQUERY, "after: not a cursor of a query");
	if ((strcmp(tag->u.s, "k") == 0) != !c->sort ||
	    (strcmp(tag->u.s, "v") == 0 ? v->len != 3 : v->len != 2))
		return err_set(CAIRN_EQUERY, "after: a cursor of a query with another sort");
	c->has_after = 1;
	c->after_has_value = strcmp(tag->u.s, "v") == 0;
	c->after_value = c->after_has_value ? &v->u.items[1] : NULL;
	c->after_key = v->u.items[v->len - 1].u.s;
	c->after_key_len = v->u.items[v->len - 1].len;
	if (c->after_has_value) {
		char why[256];
		attr_def el = *c->sort;

		if (el.type == AT_STRINGS)
			el.type = AT_STRING;
		if (attr_value_check(&el, c->after_value, why, sizeof(why)))
			return err_set(CAIRN_EQUERY, "after: a cursor of a query with another sort");
	}
	return 0;
}

/* ------------------------------------------------------------ projection -- */

static int project(qctx *c, const cairn_query_options *q, hit *h)
{
	jv *o = jv_object(c->mem, q->n_fields);
	buf b = BUF_INIT;
	char *text;

	if (!o)
		return err_set(CAIRN_ENOMEM, "out of memory");
	for (size_t i = 0; i < q->n_fields; i++) {
		const jv *v = jv_get(h->values, q->fields[i]);

		if (v) {
			o->u.items[o->len] = *v;
			o->u.items[o->len].key = q->fields[i];
			o->u.items[o->len].key_len = (uint32_t)strlen(q->fields[i]);
			o->len++;
		}
	}
	jv_canon(o, &b);
	text = b.oom ? NULL : arena_strndup(c->out, (const char *)b.p, b.len);
	h->r.values_len = b.len;
	buf_release(&b);
	if (!text)
		return err_set(CAIRN_ENOMEM, "out of memory");
	h->r.values = text;
	return 0;
}

/* ----------------------------------------------------------------- API -- */

static int setup(qctx *c, cairn_txn *t, const char *kind, const char *where, size_t where_len)
{
	const jv *f;
	int rc;

	memset(c, 0, sizeof(*c));
	c->t = t;
	c->mem = &t->scratch;
	c->out = &t->mem;
	arena_reset(c->mem);
	if (!kind || !(c->k = schema_kind(t->d.s, kind)))
		return err_set(CAIRN_EUNKNOWNKIND, "unknown Kind \"%s\"", kind ? kind : "(null)");
	c->root = arena_alloc(c->mem, sizeof(qnode));
	if (!c->root)
		return err_set(CAIRN_ENOMEM, "out of memory");
	memset(c->root, 0, sizeof(qnode));
	c->root->op = Q_AND; /* no filter: everything */
	if (!where || !where_len)
		return 0;
	f = jv_parse(c->mem, where, where_len, "where");
	if (!f) {
		char why[256];

		if (err_code() == CAIRN_ENOMEM)
			return CAIRN_ENOMEM;
		snprintf(why, sizeof(why), "%s", cairn_errmsg()); /* err_set writes over it */
		return err_set(CAIRN_EQUERY, "%s", why);
	}
	if ((rc = qf_parse_node(c, f, "where", c->root)))
		return rc;
	need_tree(c, c->root);
	return 0;
}

int cairn_query(cairn_txn *t, const cairn_query_options *q, cairn_record *out, size_t cap,
		cairn_query_result *res)
{
	qctx c;
	hits h = {NULL, 0, 0};
	size_t limit;
	int rc, sorted;

	if (!t || !q || !out || !res)
		return err_set(CAIRN_EINVAL, "cairn_query: NULL argument");
	if ((rc = err_reserved(q->reserved, "cairn_query", "cairn_query_options")))
		return rc;
	memset(res, 0, sizeof(*res));
	limit = q->limit ? q->limit : 50;
	if (limit > CAIRN_MAX_PAGE || limit > cap)
		return err_set(CAIRN_EINVAL, "a page holds 1 to %d Records (and no more than out holds)",
			       CAIRN_MAX_PAGE);
	if ((rc = setup(&c, t, q->kind, q->where, q->where_len)))
		return rc;
	if (q->sort && *q->sort && strcmp(q->sort, "key") != 0) {
		if (!(c.sort = kind_attr(c.k, q->sort)))
			return err_set(CAIRN_EQUERY, "sort: %s has no attribute \"%s\"", c.k->name, q->sort);
		if (c.sort->type == AT_STRINGS)
			return err_set(CAIRN_EQUERY, "sort: %s is an array; sort by one value", q->sort);
		need_add(&c, c.sort->name);
	}
	for (size_t i = 0; i < q->n_fields; i++) {
		const attr_def *a = kind_attr(c.k, q->fields[i]);

		if (!a)
			return err_set(CAIRN_EQUERY, "fields: %s has no attribute \"%s\"", c.k->name,
				       q->fields[i]);
		need_add(&c, a->name);
	}
	if (q->after && *q->after && (rc = cursor_read(&c, q->after)))
		return rc;
	rc = qf_run(&c, limit + 1, &h, &sorted);
	if (!rc && (!sorted || c.resort) && h.n) {
		qsort_r(h.v, h.n, sizeof(hit), hit_cmp, &c);
		if (h.n > limit + 1)
			h.n = limit + 1;
	}
	for (size_t i = 0; !rc && i < h.n && i < limit; i++) {
		if (q->fields && (rc = project(&c, q, &h.v[i])))
			break;
		out[i] = h.v[i].r;
		res->n++;
	}
	if (!rc && h.n > limit && !(res->next = cursor_make(&c, &h.v[limit - 1])))
		rc = err_set(CAIRN_ENOMEM, "out of memory");
	if (!rc) {
		res->scanned = c.scanned;
		res->entries = c.entries;
		res->candidates = c.candidates;
		res->matched = c.matched;
		if (q->explain) {
			buf_printf(&c.plan, "; %llu entries read, %llu Records checked, %llu matched%s",
				   (unsigned long long)c.entries, (unsigned long long)c.candidates,
				   (unsigned long long)c.matched,
				   sorted ? "" : ", sorted after");
			res->plan = c.plan.oom ? NULL
					       : arena_strndup(&t->mem, (const char *)c.plan.p, c.plan.len);
		}
	}
	buf_release(&c.plan);
	cr_free(h.v);
	return rc;
}

/* ---------------------------------------------------------------- counts -- */

typedef struct group {
	const jv *value; /* NULL: no value */
	uint64_t n;
} group;

typedef struct counter {
	const attr_def *by;
	hmap idx;	/* canonical value -> 1 + index in g */
	group *g;
	size_t n, cap;
	uint64_t total;
	buf tmp;
} counter;

static int tally(qctx *c, counter *ct, const jv *values)
{
	const jv *v = ct->by ? jv_get(values, ct->by->name) : NULL;
	size_t n = v && ct->by->type == AT_STRINGS ? v->len : 1;

	ct->total++;
	if (!ct->by)
		return 0;
	if (v && ct->by->type == AT_STRINGS && n == 0) {
		v = NULL;
		n = 1;
	}
	for (size_t i = 0; i < n; i++) {
		const jv *e = v && ct->by->type == AT_STRINGS ? &v->u.items[i] : v;
		uint64_t *slot;
		int isnew;

		buf_reset(&ct->tmp);
		if (e)
			jv_canon(e, &ct->tmp);
		else
			buf_put(&ct->tmp, "null", 4);
		if (ct->tmp.oom || !(slot = hmap_put(&ct->idx, ct->tmp.p, ct->tmp.len, &isnew)))
			return err_set(CAIRN_ENOMEM, "out of memory");
		if (isnew) {
			if (ct->n == ct->cap) {
				size_t cap = ct->cap ? ct->cap * 2 : 32;
				group *g = cr_reallocarray(ct->g, cap, sizeof(*g));

				if (!g)
					return err_set(CAIRN_ENOMEM, "out of memory");
				ct->g = g;
				ct->cap = cap;
			}
			ct->g[ct->n].value = e;
			ct->g[ct->n].n = 0;
			*slot = ++ct->n;
		}
		ct->g[*slot - 1].n++;
	}
	(void)c;
	return 0;
}

static int count_record(qctx *c, const cairn_record *r, void *arg)
{
	counter *ct = arg;
	arena_mark mark = arena_mark_get(c->mem);
	const jv *values = pick_values(c, r->values, r->values_len);
	size_t groups = ct->n;
	int rc;

	c->candidates++;
	if (!values)
		return err_code();
	if (!qf_eval(c->root, values)) {
		arena_rewind(c->mem, mark);
		return 0;
	}
	c->matched++;
	rc = tally(c, ct, values);
	if (!rc && ct->n == groups)
		arena_rewind(c->mem, mark); /* a new group keeps its value */
	return rc;
}

static int group_cmp(const void *x, const void *y, void *arg)
{
	const group *a = x, *b = y;

	if (!a->value != !b->value)
		return a->value ? -1 : 1;
	return a->value ? qf_vcmp(arg, a->value, b->value) : 0;
}

/* Entries from which a count walks the Kind rather than the index. */
#define COUNT_WALK 100000

int cairn_query_count(cairn_txn *t, const char *kind, const char *where, size_t where_len,
		      const char *group_by, int (*cb)(void *ctx, const char *value, size_t len, uint64_t n),
		      void *ctx, uint64_t *total)
{
	counter ct;
	qctx c;
	cand *cands, best = {0};
	size_t nc;
	int rc;

	if (!t || (group_by && !cb))
		return err_set(CAIRN_EINVAL, "cairn_query_count: NULL argument");
	if ((rc = setup(&c, t, kind, where, where_len)))
		return rc;
	memset(&ct, 0, sizeof(ct));
	if (group_by && !(ct.by = kind_attr(c.k, group_by)))
		return err_set(CAIRN_EQUERY, "group_by: %s has no attribute \"%s\"", c.k->name, group_by);
	if (ct.by)
		need_add(&c, ct.by->name);
	/* The most selective conjunct an index answers, or every Record. */
	rc = qf_cands_build(&c, &cands, &nc);
	for (size_t i = 0; i < nc && !rc; i++) {
		cand *x = &cands[i];

		/* Counted no further than the best so far, or than a walk of the Kind is worth. */
		if ((rc = qf_estimate(&c, x->q->a, x->iv, x->n_iv, best.q ? best.est : COUNT_WALK,
				      &x->est)))
			break;
		if (!best.q || x->est < best.est)
			best = *x;
	}
	if (!rc && best.q && best.est < COUNT_WALK) {
		hits h = {NULL, 0, 0};

		if (!(rc = qf_walk_collect(&c, best.q->a, best.iv, best.n_iv, &h)))
			for (size_t i = 0; i < h.n && !rc; i++)
				rc = tally(&c, &ct, h.v[i].values);
		cr_free(h.v);
	} else if (!rc) {
		rc = qf_kind_walk(&c, NULL, 0, count_record, &ct);
	}
	if (!rc && ct.by && ct.n) {
		qsort_r(ct.g, ct.n, sizeof(group), group_cmp, (void *)ct.by);
		for (size_t i = 0; i < ct.n && !rc; i++) {
			buf_reset(&ct.tmp);
			if (ct.g[i].value)
				jv_canon(ct.g[i].value, &ct.tmp);
			else
				buf_put(&ct.tmp, "null", 4);
			rc = ct.tmp.oom ? err_set(CAIRN_ENOMEM, "out of memory")
					: cb(ctx, (const char *)ct.tmp.p, ct.tmp.len, ct.g[i].n);
		}
	}
	if (!rc && total)
		*total = ct.total;
	hmap_release(&ct.idx);
	cr_free(ct.g);
	buf_release(&ct.tmp);
	buf_release(&c.plan);
	return rc;
}

/*
 * Whether the index of candidate x answers the whole filter alone: one
 * equality (or in) on a string-like single-valued attribute, its operands
 * whole in the entries. Then an entry in its intervals is a Record that
 * passes, and no Version need be read to know it.
 */
static int index_answers(const qctx *c, const cand *x, size_t nc)
{
	const qnode *cj[64];
	size_t ncj;

	qf_conjuncts(c->root, cj, &ncj);
	return nc == 1 && ncj == 1 && cj[0] == x->q && !x->q2 && !x->cut &&
	       x->q->op == Q_LEAF && (x->q->cmp == C_EQ || x->q->cmp == C_IN) &&
	       qf_string_like(x->q->a) && x->q->a->type != AT_STRINGS;
}

/* The live vids of x's entries, in one walk; none (*out NULL) past cap of them. */
static int walk_live(qctx *c, const cand *x, uint64_t cap, uint64_t **out, size_t *n)
{
	estream s;
	uint64_t *v = NULL, vid;
	size_t nv = 0, vcap = 0;
	int rc;

	if ((rc = qf_es_open(&s, c, x->q->a, x->iv, x->n_iv)) ||
	    (rc = qf_es_start(&s, NULL, 0, NULL, 0)))
		goto out;
	while (!rc && !s.done) {
		if ((rc = qf_es_vid(&s, &vid)))
			break;
		if (vid) {
			if (nv == cap) { /* not that selective */
				nv = 0;
				cr_free(v);
				v = NULL;
				goto out;
			}
			if (nv == vcap) {
				uint64_t *g = cr_reallocarray(v, vcap = vcap ? 2 * vcap : 256, sizeof(*v));

				if (!g) {
					rc = err_set(CAIRN_ENOMEM, "out of memory");
					break;
				}
				v = g;
			}
			v[nv++] = vid;
			c->matched++;
		}
		rc = qf_es_next(&s);
	}
	if (!rc && !v && !(v = cr_malloc(sizeof(*v))))
		rc = err_set(CAIRN_ENOMEM, "out of memory");
out:
	qf_es_close(&s);
	if (rc) {
		cr_free(v);
		return rc;
	}
	*out = v;
	*n = nv;
	return 0;
}

int query_vids_small(cairn_txn *t, const char *kind, const char *where, size_t where_len,
		     uint64_t cap, uint64_t cap_few, uint64_t cap_direct, uint64_t **out,
		     size_t *n)
{
	qctx c;
	cand *cands, best = {0};
	size_t nc;
	int rc;

	*out = NULL;
	*n = 0;
	if ((rc = setup(&c, t, kind, where, where_len)))
		return rc;
	rc = qf_cands_build(&c, &cands, &nc);
	if (!rc && nc && index_answers(&c, &cands[0], nc)) {
		const attr_def *a = cands[0].q->a;
		uint64_t kn = 0;

		/*
		 * An enum's values share its Records, about evenly. A share over
		 * cap_few and over 1 in 16 of the Kind's Records is left to the
		 * caller's own checks, which find enough that pass among few (the
		 * workload's category of Parts, status of orders: walking their
		 * entries took twice as long).
		 */
		if (a->type == AT_ENUM && a->n_values &&
		    !(rc = count_get(&t->d, c.k->id, &kn))) {
			uint64_t share = kn / a->n_values * cands[0].n_iv;

			if (share > cap_direct || (share > cap_few && share > kn / 16))
				cap_direct = 0;
		}
		if (!rc && cap_direct)
			rc = walk_live(&c, &cands[0], cap_direct, out, n);
		buf_release(&c.plan);
		return rc;
	}
	for (size_t i = 0; i < nc && !rc; i++) {
		cand *x = &cands[i];

		if ((rc = qf_estimate(&c, x->q->a, x->iv, x->n_iv, best.q ? best.est : cap + 1,
				      &x->est)))
			break;
		if (!best.q || x->est < best.est)
			best = *x;
	}
	if (!rc && best.q && best.est <= cap) {
		hits h = {NULL, 0, 0};

		rc = qf_walk_collect(&c, best.q->a, best.iv, best.n_iv, &h);
		if (!rc && !(*out = cr_malloc((h.n ? h.n : 1) * sizeof(uint64_t))))
			rc = err_set(CAIRN_ENOMEM, "out of memory");
		for (size_t i = 0; !rc && i < h.n; i++)
			(*out)[(*n)++] = h.v[i].r.vid;
		cr_free(h.v);
	}
	buf_release(&c.plan);
	return rc;
}
