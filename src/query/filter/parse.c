/*
 * The query language's filter (docs/query.md): a JSON filter parsed into a
 * tree of conditions, which a Record's values then satisfy or not.
 */
#include <stdarg.h>
#include <string.h>

#include "base/err.h"
#include "query/filter/filter_int.h"

const char *const qf_op_names[] = {"", "eq", "ne", "gt", "gte", "lt", "lte", "in",
				   "prefix", "exists", "contains"};

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

/* Compare two values of attribute a (both of its element type): <0, 0, >0. */
int qf_vcmp(const attr_def *a, const jv *x, const jv *y)
{
	if (qf_string_like(a)) {
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
		return qf_vcmp(q->a, v, q->val) == 0;
	case C_NE:
		return qf_vcmp(q->a, v, q->val) != 0;
	case C_GT:
		return qf_vcmp(q->a, v, q->val) > 0;
	case C_GTE:
		return qf_vcmp(q->a, v, q->val) >= 0;
	case C_LT:
		return qf_vcmp(q->a, v, q->val) < 0;
	case C_LTE:
		return qf_vcmp(q->a, v, q->val) <= 0;
	case C_IN:
		for (uint32_t i = 0; i < q->val->len; i++)
			if (qf_vcmp(q->a, v, &q->val->u.items[i]) == 0)
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
int qf_eval(const qnode *q, const jv *values)
{
	switch (q->op) {
	case Q_AND:
		for (size_t i = 0; i < q->n; i++)
			if (!qf_eval(&q->kids[i], values))
				return 0;
		return 1;
	case Q_OR:
		for (size_t i = 0; i < q->n; i++)
			if (qf_eval(&q->kids[i], values))
				return 1;
		return 0;
	case Q_NOT:
		return !qf_eval(&q->kids[0], values);
	default: {
		const jv *v = jv_get(values, q->a->name);

		if (q->cmp == C_EXISTS)
			return (v != NULL) == (q->val->type == JV_TRUE);
		if (!v)
			return q->cmp == C_NE; /* an absent value differs from any */
		if (q->a->type == AT_STRINGS) { /* any element; ne: no element equal */
			if (q->cmp == C_NE) {
				for (uint32_t i = 0; i < v->len; i++)
					if (qf_vcmp(q->a, &v->u.items[i], q->val) == 0)
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
		if (strcmp(s, qf_op_names[i]) == 0)
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
		if ((rc = qf_parse_node(c, &v->u.items[i], p, &out->kids[i])))
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
		if (!qf_string_like(a))
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
		int op = jv_key_nul(&v->u.items[0]) ? 0 : is_op(v->u.items[0].key);

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
		int op = jv_key_nul(&v->u.items[i]) ? 0 : is_op(v->u.items[i].key), rc;

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

int qf_parse_node(qctx *c, const jv *f, const char *path, qnode *out)
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
			if ((rc = qf_parse_node(c, copy, path, &out->kids[i])))
				return rc;
		}
		return 0;
	}
	{
		const jv *m = &f->u.items[0];

		path_key(p, path, m->key);
		if (jv_key_nul(m)) /* cut at U+0000, it would name another attribute, or "and" */
			return qerr(p, "an attribute name " JSON_NUL_REFUSED);
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
			return qf_parse_node(c, m, p, &out->kids[0]);
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
	if ((rc = qf_parse_node(&c, f, "where", root)))
		return rc;
	*out = (const qfilter *)root;
	return 0;
}

int qfilter_match(const qfilter *f, arena *a, const char *values, size_t len, int *match)
{
	arena_mark m = arena_mark_get(a);
	const jv *v = jv_parse(a, values, len, "stored values");

	*match = v && qf_eval((const qnode *)f, v);
	arena_rewind(a, m);
	return v ? 0 : err_code() == CAIRN_ENOMEM ? CAIRN_ENOMEM
						  : err_set(CAIRN_ECORRUPT, "stored values do not parse");
}
