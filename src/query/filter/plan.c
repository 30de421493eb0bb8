/*
 * The query language's plan: the intervals of encoded values a condition
 * covers, the walk of an attribute's index entries through them, and the
 * planner that picks the way a query is answered.
 */
#include <string.h>

#include "base/err.h"
#include "base/knob.h"
#include "query/filter/filter_int.h"

/* ----------------------------------------------------------- intervals -- */

/* The encoded form of a value of a, in the request's arena. */
int qf_enc(qctx *c, const attr_def *a, const jv *v, const uint8_t **out, size_t *len)
{
	uint8_t tmp[ATTR_STRING_CAP * 2 + 16];
	buf b = {tmp, 0, sizeof(tmp), 0};
	attr_def el = *a;
	uint8_t *p;

	if (a->type == AT_STRINGS)
		el.type = AT_STRING;
	if (attr_encode(&el, v, &b))
		return err_set(CAIRN_EQUERY, "a value of %s cannot be encoded", a->name);
	if (!(p = arena_alloc(c->mem, b.len)))
		return err_set(CAIRN_ENOMEM, "out of memory");
	memcpy(p, tmp, b.len);
	*out = p;
	*len = b.len;
	return 0;
}

/* A string's encoding without its terminator: what every longer string with it as prefix starts with. */
static int enc_prefix(qctx *c, const attr_def *a, const jv *v, const uint8_t **out, size_t *len)
{
	int rc = qf_enc(c, a, v, out, len);

	if (!rc && *len >= 2)
		*len -= 2;
	return rc;
}

/* Is an encoded value inside the interval? -1 below it, 0 inside, 1 above. */
static int in_ival(const ival *iv, const uint8_t *v, size_t n)
{
	if (iv->prefix) {
		int r = memcmp(v, iv->lo, n < iv->lo_len ? n : iv->lo_len);

		if (r)
			return r < 0 ? -1 : 1;
		return n >= iv->lo_len ? 0 : -1;
	}
	if (iv->lo) {
		int r = qf_bytes_cmp(v, n, iv->lo, iv->lo_len);

		if (r < 0 || (r == 0 && iv->lo_open))
			return -1;
	}
	if (iv->hi) {
		int r = qf_bytes_cmp(v, n, iv->hi, iv->hi_len);

		if (r > 0 || (r == 0 && iv->hi_open))
			return 1;
	}
	return 0;
}

/*
 * The intervals of a conjunct that an index answers (0 when none): eq, in,
 * prefix, contains, ranges, exists true. A string operand as long as the
 * index keeps is matched by its prefix, so that the interval covers it.
 */
static int leaf_ivals(qctx *c, const qnode *q, ival *out, size_t cap, size_t *n, int *cut)
{
	const attr_def *a = q->a;
	int rc;

	*n = 0;
	*cut = 0;
	if (q->op != Q_LEAF || !(a->flags & AF_INDEXED))
		return 0;
	memset(out, 0, cap * sizeof(*out));
	switch (q->cmp) {
	case C_EQ:
	case C_CONTAINS:
	case C_PREFIX:
		*cut = q->cmp == C_PREFIX || (qf_string_like(a) && q->val->len >= ATTR_STRING_CAP);
		if ((rc = q->cmp == C_PREFIX || (qf_string_like(a) && q->val->len >= ATTR_STRING_CAP)
				  ? enc_prefix(c, a, q->val, &out[0].lo, &out[0].lo_len)
				  : qf_enc(c, a, q->val, &out[0].lo, &out[0].lo_len)))
			return rc;
		out[0].prefix = 1;
		*n = 1;
		return 0;
	case C_IN:
		if (q->val->len > cap)
			return 0;
		for (uint32_t i = 0; i < q->val->len; i++) {
			const jv *v = &q->val->u.items[i];

			*cut |= qf_string_like(a) && v->len >= ATTR_STRING_CAP;
			if ((rc = qf_string_like(a) && v->len >= ATTR_STRING_CAP
					  ? enc_prefix(c, a, v, &out[i].lo, &out[i].lo_len)
					  : qf_enc(c, a, v, &out[i].lo, &out[i].lo_len)))
				return rc;
			out[i].prefix = 1;
		}
		*n = q->val->len;
		/* In value order, without repeats. */
		for (size_t i = 1; i < *n; i++)
			for (size_t j = i; j > 0 && qf_bytes_cmp(out[j - 1].lo, out[j - 1].lo_len,
								 out[j].lo, out[j].lo_len) > 0;
			     j--) {
				ival t = out[j];

				out[j] = out[j - 1];
				out[j - 1] = t;
			}
		{
			size_t m = 0;

			for (size_t i = 0; i < *n; i++)
				if (!m || qf_bytes_cmp(out[m - 1].lo, out[m - 1].lo_len, out[i].lo,
						       out[i].lo_len) != 0)
					out[m++] = out[i];
			*n = m;
		}
		return 0;
	case C_GT:
	case C_GTE:
	case C_LT:
	case C_LTE: {
		const uint8_t *e;
		size_t el;
		int long_op = qf_string_like(a) && q->val->len >= ATTR_STRING_CAP;

		*cut = long_op;
		if ((rc = long_op ? enc_prefix(c, a, q->val, &e, &el)
				  : qf_enc(c, a, q->val, &e, &el)))
			return rc;
		if (q->cmp == C_GT || q->cmp == C_GTE) {
			out[0].lo = e;
			out[0].lo_len = el;
			out[0].lo_open = q->cmp == C_GT && !long_op;
		} else {
			out[0].hi = e;
			out[0].hi_len = el;
			out[0].hi_open = q->cmp == C_LT && !long_op;
			if (long_op) { /* every string longer than the cut operand sorts after its prefix */
				out[0].hi = NULL;
			}
		}
		*n = 1;
		return 0;
	}
	case C_EXISTS: /* the whole attribute (whole_attribute), with no interval */
		return 0;
	}
	return 0;
}

/*
 * exists true on an indexed attribute: every entry of the attribute, but
 * not for arrays, whose empty ones have no entry and exist all the same.
 */
static int whole_attribute(const qnode *q)
{
	return q->op == Q_LEAF && q->cmp == C_EXISTS && q->val->type == JV_TRUE &&
	       (q->a->flags & AF_INDEXED) && q->a->type != AT_STRINGS;
}

/* ------------------------------------------------------------- entries -- */

static int es_seek(estream *s, const uint8_t *v, size_t vn, const char *key, size_t key_len)
{
	kbuf k = s->prefix;
	MDB_val mk, mv;
	int mrc;

	if (v)
		kb_bytes(&k, v, vn);
	if (key && key_len) {
		kb_bytes(&k, key, key_len);
		kb_u8(&k, 1); /* past every entry of that key */
	} else if (key) {
		kb_u8(&k, 0xff); /* past every entry of that value: no key byte is 0xff in UTF-8 */
	}
	mk.mv_data = k.b;
	mk.mv_size = k.n;
	s->c->t->d.stats.seeks++;
	mrc = mdb_cursor_get(s->cur, &mk, &mv, MDB_SET_RANGE);
	if (mrc == MDB_NOTFOUND) {
		s->done = 1;
		return 0;
	}
	return mrc ? store_err(mrc, "attr") : 0;
}

/* The entry under the cursor, if it is still the attribute's; then its interval. */
static int es_settle(estream *s)
{
	MDB_val mk, mv;
	int mrc;

	for (;;) {
		int where;

		if (s->done)
			return 0;
		mrc = mdb_cursor_get(s->cur, &mk, &mv, MDB_GET_CURRENT);
		if (mrc)
			return mrc == MDB_NOTFOUND ? (s->done = 1, 0) : store_err(mrc, "attr");
		if (mk.mv_size < s->prefix.n || memcmp(mk.mv_data, s->prefix.b, s->prefix.n) != 0) {
			s->done = 1;
			return 0;
		}
		s->c->entries++;
		s->c->t->d.stats.entries++;
		if (attr_entry_parse(s->a, mk.mv_data, mk.mv_size, &s->e))
			return err_set(CAIRN_ECORRUPT, "attr: malformed entry");
		if (s->n_iv == 0)
			return 0; /* the whole attribute */
		where = in_ival(&s->iv[s->cur_iv], s->e.value, s->e.value_len);
		if (where == 0)
			return 0;
		if (where < 0) { /* below the interval: to its start, or past an open bound */
			const ival *iv = &s->iv[s->cur_iv];
			int on_bound =
				iv->lo_open && !iv->prefix &&
				qf_bytes_cmp(s->e.value, s->e.value_len, iv->lo, iv->lo_len) == 0;
			int rc = es_seek(s, iv->lo, iv->lo_len, on_bound ? "" : NULL, 0);

			if (rc)
				return rc;
			continue;
		}
		/* above it: the next interval */
		if (++s->cur_iv == s->n_iv) {
			s->done = 1;
			return 0;
		}
	}
}

int qf_es_open(estream *s, qctx *c, const attr_def *a, const ival *iv, size_t n_iv)
{
	int mrc;

	memset(s, 0, sizeof(*s));
	s->c = c;
	s->a = a;
	s->iv = iv;
	s->n_iv = n_iv;
	attr_prefix(&s->prefix, c->t->d.dom, c->k->id, a->id);
	mrc = mdb_cursor_open(c->t->txn, c->t->st->dbi[DB_ATTR], &s->cur);
	return mrc ? store_err(mrc, "attr") : 0;
}

/*
 * The Version the current entry stands for: its own when live in the view;
 * else, as an entry names the Version that brought its value and later ones
 * keep relying on it, the Record's Version the view sees if that has the
 * value; 0 for none. The entries of one value and Record (a run: adjacent,
 * in vid order) all stand for the same answer: the first decides it, the
 * others give 0, so a Record comes once and is looked up at most once.
 */
int qf_es_vid(estream *s, uint64_t *vid)
{
	size_t n = s->e.value_len + s->e.key_len; /* contiguous in the key */
	int live, rc;

	*vid = 0;
	s->have_ver = 0;
	if (s->run_len == n && memcmp(s->run, s->e.value, n) == 0)
		return 0;
	if ((rc = live_test(&s->c->t->d, s->e.vid, &live)))
		return rc;
	if (live)
		*vid = s->e.vid;
	else if ((rc = attr_entry_visible(&s->c->t->d, s->a, s->c->k->id, &s->e, vid, &s->ver)))
		return rc;
	else
		s->have_ver = *vid != 0;
	if (n <= sizeof(s->run)) {
		memcpy(s->run, s->e.value, n);
		s->run_len = n;
	}
	return 0;
}

/* Start the walk (at a value and past a key, or at the first interval). */
int qf_es_start(estream *s, const uint8_t *v, size_t vn, const char *key, size_t key_len)
{
	int rc;

	if (v)
		rc = es_seek(s, v, vn, key, key_len);
	else if (s->n_iv && s->iv[0].lo)
		rc = es_seek(s, s->iv[0].lo, s->iv[0].lo_len, NULL, 0);
	else
		rc = es_seek(s, NULL, 0, NULL, 0);
	s->started = 1;
	return rc ? rc : es_settle(s);
}

int qf_es_next(estream *s)
{
	MDB_val mk, mv;
	int mrc;

	if (s->done)
		return 0;
	mrc = mdb_cursor_get(s->cur, &mk, &mv, MDB_NEXT);
	if (mrc == MDB_NOTFOUND) {
		s->done = 1;
		return 0;
	}
	return mrc ? store_err(mrc, "attr") : es_settle(s);
}

/* Entries of the intervals, counted up to cap: how selective a conjunct is. */
int qf_estimate(qctx *c, const attr_def *a, const ival *iv, size_t n_iv, uint64_t cap,
		uint64_t *n)
{
	estream s;
	uint64_t before = c->entries;
	int rc;

	*n = 0;
	if ((rc = qf_es_open(&s, c, a, iv, n_iv)) || (rc = qf_es_start(&s, NULL, 0, NULL, 0))) {
		qf_es_close(&s);
		return rc;
	}
	while (!rc && !s.done && *n < cap) {
		(*n)++;
		rc = qf_es_next(&s);
	}
	qf_es_close(&s);
	c->entries = before; /* what planning reads is not part of the answer's counts */
	return rc;
}

/* ------------------------------------------------------------- planner -- */

/* Entries: a conjunct this selective is collected and sorted (KNOB_QUERY_SMALL; tests lower it). */
#define SMALL knob(KNOB_QUERY_SMALL)

/* The top-level conjuncts: the root's children if it is an and, else the root. */
static void conjuncts_add(const qnode *q, const qnode **out, size_t *n)
{
	if (q->op != Q_AND) {
		if (*n < 64)
			out[(*n)++] = q;
		return;
	}
	for (size_t i = 0; i < q->n; i++) /* an and inside an and, as {"a":{"gte":1,"lt":2}} is */
		conjuncts_add(&q->kids[i], out, n);
}

void qf_conjuncts(const qnode *root, const qnode **out, size_t *n)
{
	*n = 0;
	conjuncts_add(root, out, n);
}

static void plan_text(qctx *c, const char *way, const cand *x)
{
	buf_printf(&c->plan, "%s", way);
	if (x) {
		buf_printf(&c->plan, " on the index of %s.%s (", c->k->name, x->q->a->name);
		for (int i = 0; i < 2; i++) {
			const qnode *q = i ? x->q2 : x->q;

			if (!q)
				break;
			buf_printf(&c->plan, "%s%s", i ? ", " : "", qf_op_names[q->cmp]);
			if (q->cmp != C_EXISTS) {
				buf_put_u8(&c->plan, ' ');
				jv_canon(q->val, &c->plan);
			}
		}
		buf_printf(&c->plan, ")");
		if (x->est)
			buf_printf(&c->plan, ", %s%llu entries", x->est >= SMALL ? "at least " : "",
				   (unsigned long long)x->est);
	}
}

/* Is one range (one interval, not a prefix)? */
static int one_range(const cand *x)
{
	return x->n_iv == 1 && !x->iv[0].prefix && x->q->cmp >= C_GT && x->q->cmp <= C_LTE;
}

/* Narrow x's interval by y's (both one range on the same attribute). */
static void ival_and(ival *x, const ival *y)
{
	if (y->lo) {
		int r = x->lo ? qf_bytes_cmp(y->lo, y->lo_len, x->lo, x->lo_len) : 1;

		if (r > 0 || (r == 0 && y->lo_open)) {
			x->lo = y->lo;
			x->lo_len = y->lo_len;
			x->lo_open = y->lo_open;
		}
	}
	if (y->hi) {
		int r = x->hi ? qf_bytes_cmp(y->hi, y->hi_len, x->hi, x->hi_len) : -1;

		if (r < 0 || (r == 0 && y->hi_open)) {
			x->hi = y->hi;
			x->hi_len = y->hi_len;
			x->hi_open = y->hi_open;
		}
	}
}

/*
 * The conjuncts an index answers, with their intervals: two ranges on one
 * attribute ({"gte":a,"lt":b}) become one interval, walked from a to b.
 */
int qf_cands_build(qctx *c, cand **out, size_t *nc)
{
	const qnode *cj[64];
	size_t ncj;
	cand *cands;
	int rc;

	*nc = 0;
	qf_conjuncts(c->root, cj, &ncj);
	cands = arena_alloc(c->mem, (ncj ? ncj : 1) * sizeof(*cands));
	if (!cands)
		return err_set(CAIRN_ENOMEM, "out of memory");
	for (size_t i = 0; i < ncj; i++) {
		cand *x = &cands[*nc];
		size_t cap = cj[i]->op == Q_LEAF && cj[i]->cmp == C_IN ? cj[i]->val->len : 1;
		size_t j;

		memset(x, 0, sizeof(*x));
		x->q = cj[i];
		if (!(x->iv = arena_alloc(c->mem, cap * sizeof(ival))))
			return err_set(CAIRN_ENOMEM, "out of memory");
		if ((rc = leaf_ivals(c, cj[i], x->iv, cap, &x->n_iv, &x->cut)))
			return rc;
		if (!x->n_iv && !whole_attribute(cj[i]))
			continue;
		for (j = 0; j < *nc; j++)
			if (one_range(x) && one_range(&cands[j]) && !cands[j].q2 &&
			    cands[j].q->a == x->q->a)
				break;
		if (j < *nc) {
			ival_and(&cands[j].iv[0], &x->iv[0]);
			cands[j].q2 = x->q;
			cands[j].cut |= x->cut;
			continue;
		}
		(*nc)++;
	}
	*out = cands;
	return 0;
}

/* Does a conjunct's index hold its entries in key order (equality, contains, a short in)? */
static int by_key(const cand *x)
{
	return (x->q->cmp == C_EQ || x->q->cmp == C_CONTAINS ||
		(x->q->cmp == C_IN && x->n_iv <= 16)) &&
	       !x->cut;
}

int qf_run(qctx *c, size_t want, hits *h, int *sorted)
{
	cand *cands;
	size_t nc;
	cand *best = NULL, *on_sort = NULL;
	int rc, lone;

	*sorted = 1;
	if ((rc = qf_cands_build(c, &cands, &nc)))
		return rc;
	/* One conjunct that walks in the answer's order: nothing to choose between. */
	lone = nc == 1 && (c->sort ? cands[0].q->a == c->sort : by_key(&cands[0]));
	for (size_t i = 0; i < nc; i++) {
		cand *x = &cands[i];

		if (!lone && (rc = qf_estimate(c, x->q->a, x->iv, x->n_iv, SMALL, &x->est)))
			return rc;
		if (!best || x->est < best->est)
			best = x;
		if (c->sort && x->q->a == c->sort && (!on_sort || x->est < on_sort->est))
			on_sort = x;
	}
	if (!c->sort) {
		/* By key: an equality or a short in walks its entries in key order. */
		cand *eq = NULL;

		for (size_t i = 0; i < nc; i++)
			if (by_key(&cands[i]) && (!eq || cands[i].est < eq->est))
				eq = &cands[i];
		if (eq && (!best || best->est >= SMALL || eq->est <= best->est * 4)) {
			plan_text(c, "ordered", eq);
			return qf_walk_ordered(c, eq->q->a, eq->iv, eq->n_iv, 1, want, h);
		}
		if (best && best->est < SMALL) {
			plan_text(c, "collect", best);
			*sorted = 0;
			return qf_walk_collect(c, best->q->a, best->iv, best->n_iv, h);
		}
		{
			page_out po = {h, want, 0};

			plan_text(c, best ? "keyscan (no selective index)" : "keyscan (no index)", NULL);
			return qf_kind_walk(c, c->has_after ? c->after_key : NULL,
					    c->has_after ? c->after_key_len : 0, qf_keep_record,
					    &po);
		}
	}
	/* By an attribute. */
	if (best && best->est < SMALL && (!on_sort || best->est * 4 < on_sort->est)) {
		plan_text(c, "collect", best);
		*sorted = 0;
		return qf_walk_collect(c, best->q->a, best->iv, best->n_iv, h);
	}
	if (c->sort->flags & AF_INDEXED && c->sort->type != AT_STRINGS) {
		page_out po = {h, want, 1};

		if (on_sort) {
			plan_text(c, "ordered", on_sort);
			return qf_walk_ordered(c, c->sort, on_sort->iv, on_sort->n_iv, 0, want, h);
		}
		plan_text(c, "ordered on the index of the sort attribute, then the Records without it",
			  NULL);
		if ((rc = qf_walk_ordered(c, c->sort, NULL, 0, 0, want, h)) || h->n >= want)
			return rc;
		/* Then the Records without a value, in key order. */
		return qf_kind_walk(c, c->has_after && !c->after_has_value ? c->after_key : NULL,
				    c->has_after && !c->after_has_value ? c->after_key_len : 0,
				    qf_keep_record, &po);
	}
	if (best) {
		plan_text(c, "collect", best);
		*sorted = 0;
		return qf_walk_collect(c, best->q->a, best->iv, best->n_iv, h);
	}
	{
		page_out po = {h, 0, 0};

		plan_text(c, "scansort (no index)", NULL);
		*sorted = 0;
		return qf_kind_walk(c, NULL, 0, qf_keep_record, &po);
	}
}
