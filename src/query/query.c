/*
 * Attribute queries: a JSON filter over the Records of a Kind, sorted by key
 * or by an attribute (key as the tie-break), paged by a cursor, on any
 * branch at any revision (docs/query.md).
 *
 * The filter is parsed into a tree of conditions. The planner looks at the
 * conjuncts of the top level that an index can answer (equality, in,
 * ranges, prefix, exists, contains on an indexed attribute) and picks one
 * of four ways:
 *
 *   ordered:  walk the index in the order of the answer and check each
 *             Record (an equality or a short `in` on any indexed attribute
 *             when sorting by key: its entries are in key order per value;
 *             the sort attribute's own conditions when sorting by it);
 *   collect:  walk a selective index, keep what matches, sort, page;
 *   keyscan:  walk the Kind in key order and check each Record (scanned);
 *   scansort: walk the Kind, keep what matches, sort by the attribute
 *             (scanned).
 *
 * An index entry counts when its vid is in the live set of the view; every
 * candidate is checked against the whole filter on its Version, so index
 * ranges only need to cover the answer (string prefixes, arrays).
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "query/read.h"
#include "base/alloc.h"
#include "base/err.h"
#include "base/hmap.h"
#include "base/text.h"

enum { Q_AND = 1, Q_OR, Q_NOT, Q_LEAF };
enum { C_EQ = 1, C_NE, C_GT, C_GTE, C_LT, C_LTE, C_IN, C_PREFIX, C_EXISTS, C_CONTAINS };

static const char *const op_names[] = {"", "eq", "ne", "gt", "gte", "lt", "lte", "in",
				       "prefix", "exists", "contains"};

typedef struct qnode {
	int op;			/* Q_* */
	int cmp;		/* leaf: C_* */
	const attr_def *a;	/* leaf */
	const jv *val;		/* leaf: the operand (an array for in) */
	struct qnode *kids;	/* and, or: n; not: 1 */
	size_t n;
} qnode;

/* An interval of encoded values of one attribute: [lo, hi], each bound open or closed or absent. */
typedef struct ival {
	const uint8_t *lo, *hi;
	size_t lo_len, hi_len;
	int lo_open, hi_open;	/* exclude the bound itself */
	int prefix;		/* lo is a prefix every value in the interval starts with (hi unused) */
} ival;

#define NEED_MAX 16

typedef struct qctx {
	cairn_txn *t;
	const kind_def *k;
	arena *mem;		/* scratch of this call (the transaction's, reset per call) */
	arena *out;		/* what outlives the call: cursors, projections, plans */
	qnode *root;
	/* the attributes a Record's values are read for (filter, sort, fields) */
	const char *need[NEED_MAX];
	size_t need_len[NEED_MAX], n_need;
	int need_all;
	const attr_def *sort;	/* NULL: by key */
	int desc;
	/* the cursor: the position after which the page starts */
	int has_after;
	int after_has_value;
	const jv *after_value;
	const char *after_key;
	size_t after_key_len;
	/* counts */
	uint64_t entries, candidates, matched;
	int scanned;
	int resort;		/* an ordered walk met values longer than the index keeps */
	buf plan;
} qctx;

/* ------------------------------------------------------------- errors -- */

static int qerr(const char *path, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int qerr(const char *path, const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return err_set(CAIRN_EQUERY, "%s: %s", path, msg);
}

/* A place in the filter: path.key or path[i], cut to fit. */
static void path_key(char out[512], const char *path, const char *key)
{
	snprintf(out, 512, "%.400s.%.80s", path, key);
}

static void path_index(char out[512], const char *path, unsigned i)
{
	snprintf(out, 512, "%.400s[%u]", path, i);
}

/* ------------------------------------------------------------- values -- */

static int string_like(const attr_def *a)
{
	return a->type == AT_STRING || a->type == AT_ENUM || a->type == AT_REF ||
	       a->type == AT_STRINGS;
}

/* Compare two values of attribute a (both of its element type): <0, 0, >0. */
static int vcmp(const attr_def *a, const jv *x, const jv *y)
{
	if (string_like(a)) {
		size_t n = x->len < y->len ? x->len : y->len;
		int c = memcmp(x->u.s, y->u.s, n);

		return c ? c : (x->len > y->len) - (x->len < y->len);
	} else {
		uint8_t bx[16], by[16];
		buf ex = {bx, 0, sizeof(bx), 0}, ey = {by, 0, sizeof(by), 0};

		attr_encode(a, x, &ex);
		attr_encode(a, y, &ey);
		return memcmp(bx, by, ex.len < ey.len ? ex.len : ey.len);
	}
}

static int leaf_value(const qnode *q, const jv *v)
{
	int c;

	switch (q->cmp) {
	case C_EQ:
	case C_CONTAINS:
		return vcmp(q->a, v, q->val) == 0;
	case C_NE:
		return vcmp(q->a, v, q->val) != 0;
	case C_GT:
		return vcmp(q->a, v, q->val) > 0;
	case C_GTE:
		return vcmp(q->a, v, q->val) >= 0;
	case C_LT:
		return vcmp(q->a, v, q->val) < 0;
	case C_LTE:
		return vcmp(q->a, v, q->val) <= 0;
	case C_IN:
		for (uint32_t i = 0; i < q->val->len; i++)
			if (vcmp(q->a, v, &q->val->u.items[i]) == 0)
				return 1;
		return 0;
	case C_PREFIX:
		return v->len >= q->val->len && memcmp(v->u.s, q->val->u.s, q->val->len) == 0;
	default:
		c = 0;
		return c;
	}
}

/* Does the Record with these values satisfy q? */
static int eval(const qnode *q, const jv *values)
{
	switch (q->op) {
	case Q_AND:
		for (size_t i = 0; i < q->n; i++)
			if (!eval(&q->kids[i], values))
				return 0;
		return 1;
	case Q_OR:
		for (size_t i = 0; i < q->n; i++)
			if (eval(&q->kids[i], values))
				return 1;
		return 0;
	case Q_NOT:
		return !eval(&q->kids[0], values);
	default: {
		const jv *v = jv_get(values, q->a->name);

		if (q->cmp == C_EXISTS)
			return (v != NULL) == (q->val->type == JV_TRUE);
		if (!v)
			return q->cmp == C_NE; /* an absent value differs from any */
		if (q->a->type == AT_STRINGS) { /* any element; ne: no element equal */
			if (q->cmp == C_NE) {
				for (uint32_t i = 0; i < v->len; i++)
					if (vcmp(q->a, &v->u.items[i], q->val) == 0)
						return 0;
				return 1;
			}
			for (uint32_t i = 0; i < v->len; i++)
				if (leaf_value(q, &v->u.items[i]))
					return 1;
			return 0;
		}
		return leaf_value(q, v);
	}
	}
}

/* ------------------------------------------------------------- parser -- */

static int is_op(const char *s)
{
	for (int i = 1; i <= C_CONTAINS; i++)
		if (strcmp(s, op_names[i]) == 0)
			return i;
	return 0;
}

/* An operand of attribute a (its element type for arrays). */
static int operand(qctx *c, const attr_def *a, const jv *v, const char *path)
{
	char why[512];
	attr_def el = *a;

	if (a->type == AT_STRINGS)
		el.type = AT_STRING;
	if (v->type == JV_NULL)
		return qerr(path, "null is no value: use {\"exists\": false}");
	if (attr_value_check(&el, v, why, sizeof(why)))
		return qerr(path, "%s", why);
	(void)c;
	return 0;
}

static int parse_node(qctx *c, const jv *f, const char *path, qnode *out);

static int parse_list(qctx *c, const jv *v, const char *path, int op, qnode *out)
{
	char p[512];

	if (v->type != JV_ARRAY || v->len == 0)
		return qerr(path, "%s takes a non-empty array of filters", op == Q_AND ? "and" : "or");
	out->op = op;
	out->n = v->len;
	out->kids = arena_alloc(c->mem, v->len * sizeof(qnode));
	if (!out->kids)
		return err_set(CAIRN_ENOMEM, "out of memory");
	for (uint32_t i = 0; i < v->len; i++) {
		int rc;

		path_index(p, path, i);
		if ((rc = parse_node(c, &v->u.items[i], p, &out->kids[i])))
			return rc;
	}
	return 0;
}

static int parse_leaf(qctx *c, const attr_def *a, int cmp, const jv *v, const char *path,
		      qnode *out)
{
	int rc;

	memset(out, 0, sizeof(*out));
	out->op = Q_LEAF;
	out->cmp = cmp;
	out->a = a;
	out->val = v;
	switch (cmp) {
	case C_EXISTS:
		if (!jv_is_bool(v))
			return qerr(path, "exists takes true or false");
		return 0;
	case C_IN:
		if (v->type != JV_ARRAY || v->len == 0)
			return qerr(path, "in takes a non-empty array of values");
		for (uint32_t i = 0; i < v->len; i++) {
			char p[512];

			path_index(p, path, i);
			if ((rc = operand(c, a, &v->u.items[i], p)))
				return rc;
		}
		return 0;
	case C_PREFIX:
		if (!string_like(a))
			return qerr(path, "prefix applies to strings, not to %s", a->name);
		if (v->type != JV_STRING)
			return qerr(path, "prefix takes a string");
		return 0; /* any string: a prefix of an enum value is no enum value */
	case C_CONTAINS:
		if (a->type != AT_STRINGS)
			return qerr(path, "contains applies to string arrays; %s is not one", a->name);
		break;
	case C_GT:
	case C_GTE:
	case C_LT:
	case C_LTE:
		if (a->type == AT_BOOL)
			return qerr(path, "a boolean has no order");
		break;
	}
	return operand(c, a, v, path);
}

/* {"attr": value} or {"attr": {"op": operand, ...}}: an and of its conditions. */
static int parse_attr(qctx *c, const attr_def *a, const jv *v, const char *path, qnode *out)
{
	char p[512];

	if (v->type != JV_OBJECT) {
		if (v->type == JV_ARRAY)
			return qerr(path, "an array is no value here: use in, or contains for an array "
					  "attribute");
		if (a->type == AT_STRINGS)
			return parse_leaf(c, a, C_CONTAINS, v, path, out);
		return parse_leaf(c, a, C_EQ, v, path, out);
	}
	if (v->len == 0)
		return qerr(path, "an empty condition");
	if (v->len == 1) {
		int op = is_op(v->u.items[0].key);

		path_key(p, path, v->u.items[0].key);
		if (!op)
			return qerr(p, "unknown operator \"%s\" (eq, ne, gt, gte, lt, lte, in, prefix, "
				       "exists, contains)",
				    v->u.items[0].key);
		return parse_leaf(c, a, op, &v->u.items[0], p, out);
	}
	out->op = Q_AND;
	out->n = v->len;
	out->kids = arena_alloc(c->mem, v->len * sizeof(qnode));
	if (!out->kids)
		return err_set(CAIRN_ENOMEM, "out of memory");
	for (uint32_t i = 0; i < v->len; i++) {
		int op = is_op(v->u.items[i].key), rc;

		path_key(p, path, v->u.items[i].key);
		if (!op)
			return qerr(p, "unknown operator \"%s\" (eq, ne, gt, gte, lt, lte, in, prefix, "
				       "exists, contains)",
				    v->u.items[i].key);
		if ((rc = parse_leaf(c, a, op, &v->u.items[i], p, &out->kids[i])))
			return rc;
	}
	return 0;
}

static int parse_node(qctx *c, const jv *f, const char *path, qnode *out)
{
	char p[512];

	memset(out, 0, sizeof(*out));
	if (f->type != JV_OBJECT)
		return qerr(path, "a filter is an object");
	if (f->len == 0) { /* matches everything */
		out->op = Q_AND;
		return 0;
	}
	if (f->len > 1) { /* several members: all of them */
		out->op = Q_AND;
		out->n = f->len;
		out->kids = arena_alloc(c->mem, f->len * sizeof(qnode));
		if (!out->kids)
			return err_set(CAIRN_ENOMEM, "out of memory");
		for (uint32_t i = 0; i < f->len; i++) {
			jv one = {JV_OBJECT, 1, NULL, 0, {.items = (jv *)&f->u.items[i]}};
			jv *copy = arena_alloc(c->mem, sizeof(jv));
			int rc;

			if (!copy)
				return err_set(CAIRN_ENOMEM, "out of memory");
			*copy = one;
			if ((rc = parse_node(c, copy, path, &out->kids[i])))
				return rc;
		}
		return 0;
	}
	{
		const jv *m = &f->u.items[0];

		path_key(p, path, m->key);
		if (strcmp(m->key, "and") == 0)
			return parse_list(c, m, p, Q_AND, out);
		if (strcmp(m->key, "or") == 0)
			return parse_list(c, m, p, Q_OR, out);
		if (strcmp(m->key, "not") == 0) {
			out->op = Q_NOT;
			out->n = 1;
			out->kids = arena_alloc(c->mem, sizeof(qnode));
			if (!out->kids)
				return err_set(CAIRN_ENOMEM, "out of memory");
			return parse_node(c, m, p, &out->kids[0]);
		}
		{
			const attr_def *a = kind_attr(c->k, m->key);

			if (!a)
				return err_set(CAIRN_EQUERY, "%s: %s has no attribute \"%s\"", p,
					       c->k->name, m->key);
			return parse_attr(c, a, m, p, out);
		}
	}
}

/* ----------------------------------------------------------- intervals -- */

/* The encoded form of a value of a, in the request's arena. */
static int enc(qctx *c, const attr_def *a, const jv *v, const uint8_t **out, size_t *len)
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
	int rc = enc(c, a, v, out, len);

	if (!rc && *len >= 2)
		*len -= 2;
	return rc;
}

static int bytes_cmp(const uint8_t *x, size_t xn, const uint8_t *y, size_t yn)
{
	int r = memcmp(x, y, xn < yn ? xn : yn);

	return r ? r : (xn > yn) - (xn < yn);
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
		int r = bytes_cmp(v, n, iv->lo, iv->lo_len);

		if (r < 0 || (r == 0 && iv->lo_open))
			return -1;
	}
	if (iv->hi) {
		int r = bytes_cmp(v, n, iv->hi, iv->hi_len);

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
		*cut = q->cmp == C_PREFIX || (string_like(a) && q->val->len >= ATTR_STRING_CAP);
		if ((rc = q->cmp == C_PREFIX || (string_like(a) && q->val->len >= ATTR_STRING_CAP)
				  ? enc_prefix(c, a, q->val, &out[0].lo, &out[0].lo_len)
				  : enc(c, a, q->val, &out[0].lo, &out[0].lo_len)))
			return rc;
		out[0].prefix = 1;
		*n = 1;
		return 0;
	case C_IN:
		if (q->val->len > cap)
			return 0;
		for (uint32_t i = 0; i < q->val->len; i++) {
			const jv *v = &q->val->u.items[i];

			*cut |= string_like(a) && v->len >= ATTR_STRING_CAP;
			if ((rc = string_like(a) && v->len >= ATTR_STRING_CAP
					  ? enc_prefix(c, a, v, &out[i].lo, &out[i].lo_len)
					  : enc(c, a, v, &out[i].lo, &out[i].lo_len)))
				return rc;
			out[i].prefix = 1;
		}
		*n = q->val->len;
		/* In value order, without repeats. */
		for (size_t i = 1; i < *n; i++)
			for (size_t j = i; j > 0 && bytes_cmp(out[j - 1].lo, out[j - 1].lo_len, out[j].lo,
							      out[j].lo_len) > 0;
			     j--) {
				ival t = out[j];

				out[j] = out[j - 1];
				out[j - 1] = t;
			}
		{
			size_t m = 0;

			for (size_t i = 0; i < *n; i++)
				if (!m || bytes_cmp(out[m - 1].lo, out[m - 1].lo_len, out[i].lo,
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
		int long_op = string_like(a) && q->val->len >= ATTR_STRING_CAP;

		*cut = long_op;
		if ((rc = long_op ? enc_prefix(c, a, q->val, &e, &el) : enc(c, a, q->val, &e, &el)))
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

/* One walk over an attribute's entries through a list of intervals, in index order. */
typedef struct estream {
	qctx *c;
	const attr_def *a;
	const ival *iv;
	size_t n_iv, cur_iv;
	kbuf prefix;
	MDB_cursor *cur;
	int started, done;
	attr_entry e;		/* the current entry */
	/* The last run of entries of one value and Record that was decided (es_vid). */
	uint8_t run[ATTR_STRING_CAP * 2 + 16 + CAIRN_MAX_KEY];
	size_t run_len;
	vrec ver;		/* the Version es_vid read to decide, if it read one */
	int have_ver;
} estream;

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
			int on_bound = iv->lo_open && !iv->prefix &&
				       bytes_cmp(s->e.value, s->e.value_len, iv->lo, iv->lo_len) == 0;
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

static int es_open(estream *s, qctx *c, const attr_def *a, const ival *iv, size_t n_iv)
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
static int es_vid(estream *s, uint64_t *vid)
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

static void es_close(estream *s)
{
	if (s->cur)
		mdb_cursor_close(s->cur);
	s->cur = NULL;
}

/* Start the walk (at a value and past a key, or at the first interval). */
static int es_start(estream *s, const uint8_t *v, size_t vn, const char *key, size_t key_len)
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

static int es_next(estream *s)
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

/* ------------------------------------------------------------- records -- */

typedef struct hit {
	cairn_record r;
	const jv *values;
	const jv *sortv;	/* the sort attribute's value (NULL: none) */
} hit;

typedef struct hits {
	hit *v;
	size_t n, cap;
} hits;

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
	if (!eval(c->root, out->values)) {
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
			int r = vcmp(c->sort, xv, yv);

			if (r)
				return r;
		}
	}
	return bytes_cmp((const uint8_t *)xk, xkn, (const uint8_t *)yk, ykn);
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
static int kind_walk(qctx *c, const char *after, size_t after_len,
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

typedef struct page_out {
	hits *h;
	size_t want;		/* stop once this many are kept (0: keep all) */
	int missing_only;	/* keep only Records without the sort attribute */
} page_out;

static int keep_record(qctx *c, const cairn_record *r, void *arg)
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
	if ((po->missing_only && x.sortv) || !eval(c->root, x.values)) {
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
static int walk_ordered(qctx *c, const attr_def *a, const ival *iv, size_t n_iv, int bykey,
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
		rc = es_open(&s[i], c, a, bykey ? &iv[i] : iv, bykey ? 1 : n_iv);
		if (rc)
			break;
		if (bykey)
			rc = es_start(&s[i], iv[i].lo, iv[i].lo_len, c->has_after ? c->after_key : NULL,
				      c->after_key_len);
		else if (c->has_after && c->after_has_value) {
			const uint8_t *e;
			size_t el;

			rc = enc(c, a, c->after_value, &e, &el);
			if (!rc)
				rc = es_start(&s[i], e, el, NULL, 0); /* then skipped up to the cursor */
		} else if (c->has_after) {
			s[i].done = 1; /* the cursor is past every Record with a value */
		} else {
			rc = es_start(&s[i], NULL, 0, NULL, 0);
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
			    bytes_cmp(t->e.value, t->e.value_len, trunc, trunc_len) != 0)
				break;
		}

		for (size_t i = 0; i < ns; i++)
			if (!s[i].done && (!best || bytes_cmp((const uint8_t *)s[i].e.key, s[i].e.key_len,
							      (const uint8_t *)best->e.key,
							      best->e.key_len) < 0))
				best = &s[i];
		if (!best)
			break;
		memset(&x, 0, sizeof(x));
		if ((rc = es_vid(best, &vid)))
			break;
		if (!vid) {
			rc = es_next(best);
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
				rc = es_next(best);
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
		rc = es_next(best);
	}
	for (size_t i = 0; i < ns; i++)
		es_close(&s[i]);
	cr_free(s);
	hmap_release(&seen);
	return rc;
}

/* The collect way: every match the intervals of `a` hold, in any order. */
static int walk_collect(qctx *c, const attr_def *a, const ival *iv, size_t n_iv, hits *h)
{
	estream s;
	hmap seen = HMAP_INIT;
	int rc;

	if ((rc = es_open(&s, c, a, iv, n_iv)) || (rc = es_start(&s, NULL, 0, NULL, 0))) {
		es_close(&s);
		return rc;
	}
	while (!rc && !s.done) {
		uint8_t vb[8];
		uint64_t vid;
		int isnew = 1, ok;
		hit x;

		if ((rc = es_vid(&s, &vid)))
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
			rc = es_next(&s);
	}
	es_close(&s);
	hmap_release(&seen);
	return rc;
}

/* Entries of the intervals, counted up to cap: how selective a conjunct is. */
static int estimate(qctx *c, const attr_def *a, const ival *iv, size_t n_iv, uint64_t cap,
		    uint64_t *n)
{
	estream s;
	uint64_t before = c->entries;
	int rc;

	*n = 0;
	if ((rc = es_open(&s, c, a, iv, n_iv)) || (rc = es_start(&s, NULL, 0, NULL, 0))) {
		es_close(&s);
		return rc;
	}
	while (!rc && !s.done && *n < cap) {
		(*n)++;
		rc = es_next(&s);
	}
	es_close(&s);
	c->entries = before; /* what planning reads is not part of the answer's counts */
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

/* ------------------------------------------------------------- planner -- */

/* Entries: a conjunct this selective is collected and sorted (tests lower it to try every way). */
uint64_t query_small = 256;
#define SMALL query_small

typedef struct cand {
	const qnode *q;
	const qnode *q2;	/* a second range on the same attribute, merged into iv */
	ival *iv;
	size_t n_iv;
	uint64_t est;
	int cut;	/* an operand longer than the index keeps: its entries are not in order */
} cand;

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

static void conjuncts(const qnode *root, const qnode **out, size_t *n)
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
			buf_printf(&c->plan, "%s%s", i ? ", " : "", op_names[q->cmp]);
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
		int r = x->lo ? bytes_cmp(y->lo, y->lo_len, x->lo, x->lo_len) : 1;

		if (r > 0 || (r == 0 && y->lo_open)) {
			x->lo = y->lo;
			x->lo_len = y->lo_len;
			x->lo_open = y->lo_open;
		}
	}
	if (y->hi) {
		int r = x->hi ? bytes_cmp(y->hi, y->hi_len, x->hi, x->hi_len) : -1;

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
static int cands_build(qctx *c, cand **out, size_t *nc)
{
	const qnode *cj[64];
	size_t ncj;
	cand *cands;
	int rc;

	*nc = 0;
	conjuncts(c->root, cj, &ncj);
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

static int run(qctx *c, size_t want, hits *h, int *sorted)
{
	cand *cands;
	size_t nc;
	cand *best = NULL, *on_sort = NULL;
	int rc, lone;

	*sorted = 1;
	if ((rc = cands_build(c, &cands, &nc)))
		return rc;
	/* One conjunct that walks in the answer's order: nothing to choose between. */
	lone = nc == 1 && (c->sort ? cands[0].q->a == c->sort : by_key(&cands[0]));
	for (size_t i = 0; i < nc; i++) {
		cand *x = &cands[i];

		if (!lone && (rc = estimate(c, x->q->a, x->iv, x->n_iv, SMALL, &x->est)))
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
			return walk_ordered(c, eq->q->a, eq->iv, eq->n_iv, 1, want, h);
		}
		if (best && best->est < SMALL) {
			plan_text(c, "collect", best);
			*sorted = 0;
			return walk_collect(c, best->q->a, best->iv, best->n_iv, h);
		}
		{
			page_out po = {h, want, 0};

			plan_text(c, best ? "keyscan (no selective index)" : "keyscan (no index)", NULL);
			return kind_walk(c, c->has_after ? c->after_key : NULL,
					 c->has_after ? c->after_key_len : 0, keep_record, &po);
		}
	}
	/* By an attribute. */
	if (best && best->est < SMALL && (!on_sort || best->est * 4 < on_sort->est)) {
		plan_text(c, "collect", best);
		*sorted = 0;
		return walk_collect(c, best->q->a, best->iv, best->n_iv, h);
	}
	if (c->sort->flags & AF_INDEXED && c->sort->type != AT_STRINGS) {
		page_out po = {h, want, 1};

		if (on_sort) {
			plan_text(c, "ordered", on_sort);
			return walk_ordered(c, c->sort, on_sort->iv, on_sort->n_iv, 0, want, h);
		}
		plan_text(c, "ordered on the index of the sort attribute, then the Records without it",
			  NULL);
		if ((rc = walk_ordered(c, c->sort, NULL, 0, 0, want, h)) || h->n >= want)
			return rc;
		/* Then the Records without a value, in key order. */
		return kind_walk(c, c->has_after && !c->after_has_value ? c->after_key : NULL,
				 c->has_after && !c->after_has_value ? c->after_key_len : 0, keep_record,
				 &po);
	}
	if (best) {
		plan_text(c, "collect", best);
		*sorted = 0;
		return walk_collect(c, best->q->a, best->iv, best->n_iv, h);
	}
	{
		page_out po = {h, 0, 0};

		plan_text(c, "scansort (no index)", NULL);
		*sorted = 0;
		return kind_walk(c, NULL, 0, keep_record, &po);
	}
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
	if ((rc = parse_node(c, f, "where", c->root)))
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
	rc = run(&c, limit + 1, &h, &sorted);
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
	if (!eval(c->root, values)) {
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
	return a->value ? vcmp(arg, a->value, b->value) : 0;
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
	rc = cands_build(&c, &cands, &nc);
	for (size_t i = 0; i < nc && !rc; i++) {
		cand *x = &cands[i];

		/* Counted no further than the best so far, or than a walk of the Kind is worth. */
		if ((rc = estimate(&c, x->q->a, x->iv, x->n_iv, best.q ? best.est : COUNT_WALK,
				   &x->est)))
			break;
		if (!best.q || x->est < best.est)
			best = *x;
	}
	if (!rc && best.q && best.est < COUNT_WALK) {
		hits h = {NULL, 0, 0};

		if (!(rc = walk_collect(&c, best.q->a, best.iv, best.n_iv, &h)))
			for (size_t i = 0; i < h.n && !rc; i++)
				rc = tally(&c, &ct, h.v[i].values);
		cr_free(h.v);
	} else if (!rc) {
		rc = kind_walk(&c, NULL, 0, count_record, &ct);
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

	conjuncts(c->root, cj, &ncj);
	return nc == 1 && ncj == 1 && cj[0] == x->q && !x->q2 && !x->cut &&
	       x->q->op == Q_LEAF && (x->q->cmp == C_EQ || x->q->cmp == C_IN) &&
	       string_like(x->q->a) && x->q->a->type != AT_STRINGS;
}

/* The live vids of x's entries, in one walk; none (*out NULL) past cap of them. */
static int walk_live(qctx *c, const cand *x, uint64_t cap, uint64_t **out, size_t *n)
{
	estream s;
	uint64_t *v = NULL, vid;
	size_t nv = 0, vcap = 0;
	int rc;

	if ((rc = es_open(&s, c, x->q->a, x->iv, x->n_iv)) || (rc = es_start(&s, NULL, 0, NULL, 0)))
		goto out;
	while (!rc && !s.done) {
		if ((rc = es_vid(&s, &vid)))
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
		rc = es_next(&s);
	}
	if (!rc && !v && !(v = cr_malloc(sizeof(*v))))
		rc = err_set(CAIRN_ENOMEM, "out of memory");
out:
	es_close(&s);
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
	rc = cands_build(&c, &cands, &nc);
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

		if ((rc = estimate(&c, x->q->a, x->iv, x->n_iv, best.q ? best.est : cap + 1, &x->est)))
			break;
		if (!best.q || x->est < best.est)
			best = *x;
	}
	if (!rc && best.q && best.est <= cap) {
		hits h = {NULL, 0, 0};

		rc = walk_collect(&c, best.q->a, best.iv, best.n_iv, &h);
		if (!rc && !(*out = cr_malloc((h.n ? h.n : 1) * sizeof(uint64_t))))
			rc = err_set(CAIRN_ENOMEM, "out of memory");
		for (size_t i = 0; !rc && i < h.n; i++)
			(*out)[(*n)++] = h.v[i].r.vid;
		cr_free(h.v);
	}
	buf_release(&c.plan);
	return rc;
}

/* ------------------------------------------------------ filters alone -- */

int qfilter_parse(cairn_txn *t, arena *a, const char *kind, const char *where, size_t len,
		  const qfilter **out)
{
	qctx c;
	const jv *f;
	qnode *root;
	int rc;

	*out = NULL;
	memset(&c, 0, sizeof(c));
	c.t = t;
	c.mem = a;
	c.out = a;
	if (!kind || !(c.k = schema_kind(t->d.s, kind)))
		return err_set(CAIRN_EUNKNOWNKIND, "unknown Kind \"%s\"", kind ? kind : "(null)");
	if (!(root = arena_alloc(a, sizeof(*root))))
		return err_set(CAIRN_ENOMEM, "out of memory");
	if (!(f = jv_parse(a, where, len, "where"))) {
		char why[256];

		if (err_code() == CAIRN_ENOMEM)
			return CAIRN_ENOMEM;
		snprintf(why, sizeof(why), "%s", cairn_errmsg());
		return err_set(CAIRN_EQUERY, "%s", why);
	}
	if ((rc = parse_node(&c, f, "where", root)))
		return rc;
	*out = (const qfilter *)root;
	return 0;
}

int qfilter_match(const qfilter *f, arena *a, const char *values, size_t len, int *match)
{
	arena_mark m = arena_mark_get(a);
	const jv *v = jv_parse(a, values, len, "stored values");

	*match = v && eval((const qnode *)f, v);
	arena_rewind(a, m);
	return v ? 0 : err_code() == CAIRN_ENOMEM ? CAIRN_ENOMEM
						  : err_set(CAIRN_ECORRUPT, "stored values do not parse");
}
