/* Building change sets: form checks, copies, and the import-line reader. */
#include <math.h>
#include <string.h>

#include "model/changeset.h"
#include "base/json.h"
#include "base/alloc.h"
#include "base/err.h"
#include "base/text.h"

int cairn_changeset_new(cairn_changeset **out)
{
	if (!out)
		return err_set(CAIRN_EINVAL, "cairn_changeset_new: out is NULL");
	*out = cr_calloc(1, sizeof(**out));
	return *out ? 0 : err_set(CAIRN_ENOMEM, "out of memory");
}

static void change_release(cs_change *c)
{
	arena_release(&c->mem);
	memset(c, 0, sizeof(*c));
}

void cairn_changeset_clear(cairn_changeset *cs)
{
	if (!cs)
		return;
	for (size_t i = 0; i < cs->n; i++)
		change_release(&cs->v[i]);
	cs->n = 0;
}

void cairn_changeset_free(cairn_changeset *cs)
{
	if (!cs)
		return;
	cairn_changeset_clear(cs);
	cr_free(cs->v);
	cr_free(cs);
}

size_t cairn_changeset_count(const cairn_changeset *cs)
{
	return cs ? cs->n : 0;
}

void changeset_remove(cairn_changeset *cs, size_t i)
{
	change_release(&cs->v[i]);
	memmove(&cs->v[i], &cs->v[i + 1], (cs->n - i - 1) * sizeof(cs_change));
	cs->n--;
}

/* A zeroed slot at the end of cs (not yet counted), or NULL. */
static cs_change *slot(cairn_changeset *cs)
{
	if (cs->n == cs->cap) {
		size_t cap = cs->cap ? cs->cap * 2 : 16;
		cs_change *v = cr_reallocarray(cs->v, cap, sizeof(*v));

		if (!v)
			return NULL;
		cs->v = v;
		cs->cap = cap;
	}
	memset(&cs->v[cs->n], 0, sizeof(cs_change));
	return &cs->v[cs->n];
}

int changeset_split(cairn_changeset *cs, cairn_changeset *dst, const uint8_t *mark)
{
	size_t moved = 0, kept = 0;

	for (size_t i = 0; i < cs->n; i++)
		moved += mark[i] == 1;
	if (dst->n + moved > dst->cap) {
		size_t cap = dst->cap ? dst->cap : 16;
		cs_change *v;

		while (cap < dst->n + moved)
			cap *= 2;
		if (!(v = cr_reallocarray(dst->v, cap, sizeof(*v))))
			return err_set(CAIRN_ENOMEM, "out of memory");
		dst->v = v;
		dst->cap = cap;
	}
	for (size_t i = 0; i < cs->n; i++) {
		if (mark[i] == 1)
			dst->v[dst->n++] = cs->v[i];
		else if (mark[i] == 2)
			change_release(&cs->v[i]);
		else
			cs->v[kept++] = cs->v[i];
	}
	cs->n = kept;
	return 0;
}

int changeset_take_all(cairn_changeset *dst, cairn_changeset *src)
{
	if (dst->n + src->n > dst->cap) {
		size_t cap = dst->n + src->n;
		cs_change *v = cr_reallocarray(dst->v, cap, sizeof(*v));

		if (!v)
			return err_set(CAIRN_ENOMEM, "out of memory");
		dst->v = v;
		dst->cap = cap;
	}
	if (src->n)
		memcpy(dst->v + dst->n, src->v, src->n * sizeof(*src->v));
	dst->n += src->n;
	src->n = 0;
	return 0;
}

int key_check(const char *key, size_t len, long idx)
{
	if (len == 0)
		return err_change(CAIRN_EKEYEMPTY, idx, "change %ld: the key is empty", idx);
	if (len > CAIRN_MAX_KEY)
		return err_change(CAIRN_EKEYLONG, idx,
				  "change %ld: the key is %zu bytes, longer than the limit of %d",
				  idx, len, CAIRN_MAX_KEY);
	if (!utf8_valid(key, len))
		return err_change(CAIRN_EUTF8, idx, "change %ld: the key is not valid UTF-8", idx);
	if (memchr(key, 0, len))
		return err_change(CAIRN_EUTF8, idx, "change %ld: the key " JSON_NUL_REFUSED, idx);
	return 0;
}

static int name_check(const char *name, size_t n, const char *what, long idx)
{
	if (!name || n == 0)
		return err_change(CAIRN_EINVAL, idx, "change %ld: %s name is missing", idx, what);
	if (memchr(name, 0, n))
		return err_change(CAIRN_EINVAL, idx, "change %ld: the %s name " JSON_NUL_REFUSED, idx,
				  what);
	if (n > CAIRN_MAX_NAME)
		return err_change(CAIRN_EINVAL, idx, "change %ld: %s name is not valid", idx, what);
	return 0;
}

/*
 * The member names of values are attribute names, which the schema and the
 * indexes read as C strings: one holding U+0000 would be another attribute.
 */
static int attr_names_check(const jv *values, long idx)
{
	for (uint32_t i = 0; values && i < values->len; i++)
		if (jv_key_nul(&values->u.items[i]))
			return err_change(CAIRN_EINVAL, idx,
					  "change %ld: an attribute name " JSON_NUL_REFUSED, idx);
	return 0;
}

static int title_check(const char *title, size_t n, long idx)
{
	if (n > CAIRN_MAX_TITLE)
		return err_change(CAIRN_ELIMIT, idx,
				  "change %ld: the title is %zu bytes, more than the limit of %d",
				  idx, n, CAIRN_MAX_TITLE);
	if (!utf8_valid(title, n))
		return err_change(CAIRN_EUTF8, idx, "change %ld: the title is not valid UTF-8",
				  idx);
	return 0;
}

/* Parse optional JSON object text into the change's arena (NULL text: NULL). */
static int values_parse(cs_change *c, const char *p, size_t n, const jv **out, long idx)
{
	const jv *v;

	*out = NULL;
	if (!p)
		return 0;
	if (n > CAIRN_MAX_VALUES)
		return err_change(CAIRN_ELIMIT, idx,
				  "change %ld: values are %zu bytes, more than the limit of %u", idx,
				  n, CAIRN_MAX_VALUES);
	v = jv_parse(&c->mem, p, n, "values");
	if (!v) {
		int rc = err_code();

		err_set_index(idx);
		err_prefix("change %ld: ", idx);
		return rc;
	}
	if (v->type != JV_OBJECT)
		return err_change(CAIRN_ETYPE, idx, "change %ld: values must be a JSON object", idx);
	*out = v;
	return attr_names_check(v, idx);
}

static const char *copy(cs_change *c, const char *p, size_t n)
{
	return arena_strndup(&c->mem, p, n);
}

/* Fill a Record change in slot c (not yet counted). */
static int fill_record(cs_change *c, int op, const char *kind, size_t kind_len, const char *key,
		       size_t key_len, const char *title, size_t title_len, unsigned flags, long idx)
{
	int rc;

	if ((rc = name_check(kind, kind_len, "Kind", idx)) || (rc = key_check(key, key_len, idx)))
		return rc;
	if (title && (rc = title_check(title, title_len, idx)))
		return rc;
	c->op = op;
	c->flags = flags;
	c->kind = copy(c, kind, kind_len);
	c->key = copy(c, key, key_len);
	c->key_len = key_len;
	if (title) {
		c->title = copy(c, title, title_len);
		c->title_len = title_len;
	}
	if (!c->kind || !c->key || (title && !c->title))
		return err_set(CAIRN_ENOMEM, "out of memory");
	return 0;
}

static int fill_link(cs_change *c, int op, const char *rel, size_t rel_len, const char *fk,
		     size_t fk_len, const char *fkey, size_t from_len, const char *tk,
		     size_t tk_len, const char *tkey, size_t to_len, long idx)
{
	int rc;

	if ((rc = name_check(rel, rel_len, "Relation", idx)) ||
	    (rc = name_check(fk, fk_len, "Kind", idx)) || (rc = name_check(tk, tk_len, "Kind", idx)) ||
	    (rc = key_check(fkey, from_len, idx)) || (rc = key_check(tkey, to_len, idx)))
		return rc;
	c->op = op;
	c->rel = copy(c, rel, rel_len);
	c->from_kind = copy(c, fk, fk_len);
	c->from_key = copy(c, fkey, from_len);
	c->to_kind = copy(c, tk, tk_len);
	c->to_key = copy(c, tkey, to_len);
	c->from_len = from_len;
	c->to_len = to_len;
	if (!c->rel || !c->from_kind || !c->from_key || !c->to_kind || !c->to_key)
		return err_set(CAIRN_ENOMEM, "out of memory");
	return 0;
}

/* Count the change in slot c, or release it on failure. */
static int commit_slot(cairn_changeset *cs, cs_change *c, int rc)
{
	if (rc) {
		change_release(c);
		return rc;
	}
	cs->n++;
	return 0;
}

static size_t opt_len(const char *s)
{
	return s ? strlen(s) : 0;
}

int cairn_changeset_put(cairn_changeset *cs, const char *kind, const char *key, size_t key_len,
			const char *title, size_t title_len, const char *values, size_t values_len)
{
	long idx;
	cs_change *c;
	int rc;

	if (!cs || !key)
		return err_set(CAIRN_EINVAL, "cairn_changeset_put: NULL argument");
	idx = (long)cs->n;
	if (!(c = slot(cs)))
		return err_set(CAIRN_ENOMEM, "out of memory");
	rc = values_parse(c, values, values_len, &c->values, idx);
	if (!rc)
		rc = fill_record(c, OP_PUT, kind, opt_len(kind), key, key_len, title ? title : "",
				 title ? title_len : 0, 0, idx);
	return commit_slot(cs, c, rc);
}

int cairn_changeset_patch(cairn_changeset *cs, const char *kind, const char *key, size_t key_len,
			  const char *patch, size_t patch_len)
{
	long idx;
	cs_change *c;
	int rc;

	if (!cs || !key || !patch)
		return err_set(CAIRN_EINVAL, "cairn_changeset_patch: NULL argument");
	idx = (long)cs->n;
	if (!(c = slot(cs)))
		return err_set(CAIRN_ENOMEM, "out of memory");
	rc = values_parse(c, patch, patch_len, &c->values, idx);
	if (!rc)
		rc = fill_record(c, OP_PATCH, kind, opt_len(kind), key, key_len, NULL, 0, 0, idx);
	return commit_slot(cs, c, rc);
}

int cairn_changeset_delete(cairn_changeset *cs, const char *kind, const char *key, size_t key_len,
			   unsigned flags)
{
	long idx;
	cs_change *c;

	if (!cs || !key)
		return err_set(CAIRN_EINVAL, "cairn_changeset_delete: NULL argument");
	idx = (long)cs->n;
	if (flags & ~(unsigned)CAIRN_CASCADE)
		return err_change(CAIRN_EINVAL, idx, "change %ld: unknown delete flags", idx);
	if (!(c = slot(cs)))
		return err_set(CAIRN_ENOMEM, "out of memory");
	return commit_slot(cs, c,
			   fill_record(c, OP_DELETE, kind, opt_len(kind), key, key_len, NULL, 0,
				       flags, idx));
}

int cairn_changeset_link(cairn_changeset *cs, const char *rel, const char *from_kind,
			 const char *from_key, size_t from_len, const char *to_kind, const char *to_key,
			 size_t to_len, const char *values, size_t values_len)
{
	long idx;
	cs_change *c;
	int rc;

	if (!cs || !from_key || !to_key)
		return err_set(CAIRN_EINVAL, "cairn_changeset_link: NULL argument");
	idx = (long)cs->n;
	if (!(c = slot(cs)))
		return err_set(CAIRN_ENOMEM, "out of memory");
	rc = values_parse(c, values, values_len, &c->values, idx);
	if (!rc)
		rc = fill_link(c, OP_LINK, rel, opt_len(rel), from_kind, opt_len(from_kind), from_key,
			       from_len, to_kind, opt_len(to_kind), to_key, to_len, idx);
	return commit_slot(cs, c, rc);
}

int cairn_changeset_unlink(cairn_changeset *cs, const char *rel, const char *from_kind,
			   const char *from_key, size_t from_len, const char *to_kind, const char *to_key,
			   size_t to_len)
{
	long idx;
	cs_change *c;

	if (!cs || !from_key || !to_key)
		return err_set(CAIRN_EINVAL, "cairn_changeset_unlink: NULL argument");
	idx = (long)cs->n;
	if (!(c = slot(cs)))
		return err_set(CAIRN_ENOMEM, "out of memory");
	return commit_slot(cs, c,
			   fill_link(c, OP_UNLINK, rel, opt_len(rel), from_kind, opt_len(from_kind),
				     from_key, from_len, to_kind, opt_len(to_kind), to_key, to_len,
				     idx));
}

/* Attach a vector (copied into the change's arena) to change c. */
static int set_vector(cs_change *c, const float *v, size_t dim, long idx)
{
	float *copy_v;

	if (dim == 0 || dim > CAIRN_MAX_VECTOR_DIM)
		return err_change(CAIRN_EDIM, idx, "change %ld: a vector has 1 to %d dimensions, not %zu",
				  idx, CAIRN_MAX_VECTOR_DIM, dim);
	for (size_t i = 0; i < dim; i++)
		if (!isfinite(v[i]))
			return err_change(CAIRN_ETYPE, idx,
					  "change %ld: vector component %zu is not finite", idx, i);
	copy_v = arena_alloc(&c->mem, dim * sizeof(float));
	if (!copy_v)
		return err_set(CAIRN_ENOMEM, "out of memory");
	memcpy(copy_v, v, dim * sizeof(float));
	c->vec = copy_v;
	c->dim = dim;
	return 0;
}

int cairn_changeset_vector(cairn_changeset *cs, const float *v, size_t dim)
{
	if (!cs || !v)
		return err_set(CAIRN_EINVAL, "cairn_changeset_vector: NULL argument");
	if (cs->n == 0 || (cs->v[cs->n - 1].op != OP_PUT && cs->v[cs->n - 1].op != OP_PATCH))
		return err_change(CAIRN_EINVAL, (long)cs->n - 1,
				  "a vector must follow a put or patch of a Record");
	return set_vector(&cs->v[cs->n - 1], v, dim, (long)cs->n - 1);
}

int endpoint_split(const char *s, size_t n, const char **kind, size_t *kind_len, const char **key,
		   size_t *key_len)
{
	const char *colon = memchr(s, ':', n);

	if (!colon || colon == s)
		return -1;
	*kind = s;
	*kind_len = (size_t)(colon - s);
	*key = colon + 1;
	*key_len = n - *kind_len - 1;
	return 0;
}

/* ------------------------------------------------------- import lines -- */

/* A string member: its text, or NULL when absent; *bad when present but not a string. */
static const char *str_member(const jv *o, const char *name, size_t *len, int *bad)
{
	const jv *v = jv_get(o, name);

	if (!v)
		return NULL;
	if (v->type != JV_STRING) {
		*bad = 1;
		return NULL;
	}
	*len = v->len;
	return v->u.s;
}

static int line_err(int code, long idx, const char *msg)
{
	return err_change(code, idx, "%s", msg);
}

static int line_vector(cs_change *c, const jv *vec, long idx)
{
	float *f;
	int rc;

	if (vec->type != JV_ARRAY)
		return line_err(CAIRN_ETYPE, idx, "\"vector\" must be an array of numbers");
	if (vec->len == 0 || vec->len > CAIRN_MAX_VECTOR_DIM)
		return err_change(CAIRN_EDIM, idx, "a vector has 1 to %d dimensions, not %u",
				  CAIRN_MAX_VECTOR_DIM, vec->len);
	f = cr_reallocarray(NULL, vec->len, sizeof(float));
	if (!f)
		return err_set(CAIRN_ENOMEM, "out of memory");
	for (uint32_t i = 0; i < vec->len; i++) {
		if (!jv_is_number(&vec->u.items[i])) {
			cr_free(f);
			return line_err(CAIRN_ETYPE, idx, "\"vector\" must be an array of numbers");
		}
		f[i] = (float)jv_number(&vec->u.items[i]);
	}
	rc = set_vector(c, f, vec->len, idx);
	cr_free(f);
	return rc;
}

static int line_record(cs_change *c, const jv *o, long idx)
{
	static const char *const allowed[] = {"kind",	"key",	  "title", "values",
					      "vector", "op", "cascade", NULL};
	const char *kind, *key, *title, *op;
	size_t kind_len = 0, key_len = 0, title_len = 0, op_len = 0;
	const jv *values, *vec, *cascade;
	int bad = 0, rc;

	if ((rc = jv_only(o, allowed, CAIRN_EJSON, "record line"))) {
		err_set_index(idx);
		return rc;
	}
	kind = str_member(o, "kind", &kind_len, &bad);
	key = str_member(o, "key", &key_len, &bad);
	title = str_member(o, "title", &title_len, &bad);
	op = str_member(o, "op", &op_len, &bad);
	if (!bad && (!kind || !key)) {
		char msg[200];

		snprintf(msg, sizeof(msg),
			 "%s missing: a Record line has \"kind\" and \"key\" (strings), a Link "
			 "line \"rel\", \"from\" and \"to\" (docs/import.md)",
			 !kind ? (!key ? "\"kind\" and \"key\" are" : "\"kind\" is") : "\"key\" is");
		return line_err(CAIRN_ETYPE, idx, msg);
	}
	if (bad || !kind || !key)
		return line_err(CAIRN_ETYPE, idx,
				"\"kind\" and \"key\" must be strings, and \"title\" and \"op\" "
				"strings when present");
	if (op && memchr(op, 0, op_len)) /* "delete\u0000x" is no op, not a delete */
		return line_err(CAIRN_EINVAL, idx, "\"op\" " JSON_NUL_REFUSED);
	values = jv_get(o, "values");
	if (jv_is(values, JV_NULL))
		values = NULL;
	if (values && values->type != JV_OBJECT)
		return line_err(CAIRN_ETYPE, idx, "\"values\" must be a JSON object");
	if ((rc = attr_names_check(values, idx)))
		return rc;
	vec = jv_get(o, "vector");
	cascade = jv_get(o, "cascade");
	if (cascade && !jv_is_bool(cascade))
		return line_err(CAIRN_ETYPE, idx, "\"cascade\" must be true or false");
	if (!op || strcmp(op, "put") == 0) {
		rc = fill_record(c, OP_PUT, kind, kind_len, key, key_len, title ? title : "", title_len,
				 0, idx);
	} else if (strcmp(op, "patch") == 0) {
		if (!values)
			return line_err(CAIRN_EINVAL, idx, "a patch needs \"values\"");
		if (title)
			return line_err(CAIRN_EINVAL, idx, "a patch changes values only, not the title");
		rc = fill_record(c, OP_PATCH, kind, kind_len, key, key_len, NULL, 0, 0, idx);
	} else if (strcmp(op, "delete") == 0) {
		if (values || title || vec)
			return line_err(CAIRN_EINVAL, idx,
					"a delete takes no \"title\", \"values\" or \"vector\"");
		rc = fill_record(c, OP_DELETE, kind, kind_len, key, key_len, NULL, 0,
				 jv_is(cascade, JV_TRUE) ? CAIRN_CASCADE : 0, idx);
	} else {
		return err_change(CAIRN_EINVAL, idx,
				  "unknown op \"%s\" for a Record (put, patch, delete)", op);
	}
	if (rc)
		return rc;
	c->values = values;
	if (vec)
		rc = line_vector(c, vec, idx);
	return rc;
}

static int line_link(cs_change *c, const jv *o, long idx)
{
	static const char *const allowed[] = {"rel", "from", "to", "values", "op", NULL};
	const char *rel, *from, *to, *op, *fk, *fkey, *tk, *tkey;
	size_t rel_len = 0, from_len = 0, to_len = 0, op_len = 0, fk_len, fkey_len, tk_len,
	       tkey_len;
	const jv *values;
	int bad = 0, rc;

	if ((rc = jv_only(o, allowed, CAIRN_EJSON, "link line"))) {
		err_set_index(idx);
		return rc;
	}
	rel = str_member(o, "rel", &rel_len, &bad);
	from = str_member(o, "from", &from_len, &bad);
	to = str_member(o, "to", &to_len, &bad);
	op = str_member(o, "op", &op_len, &bad);
	if (bad || !rel || !from || !to)
		return line_err(CAIRN_ETYPE, idx, "\"rel\", \"from\" and \"to\" must be strings");
	if (op && memchr(op, 0, op_len))
		return line_err(CAIRN_EINVAL, idx, "\"op\" " JSON_NUL_REFUSED);
	if (endpoint_split(from, from_len, &fk, &fk_len, &fkey, &fkey_len) ||
	    endpoint_split(to, to_len, &tk, &tk_len, &tkey, &tkey_len))
		return line_err(CAIRN_EINVAL, idx, "\"from\" and \"to\" must be \"Kind:key\"");
	values = jv_get(o, "values");
	if (jv_is(values, JV_NULL))
		values = NULL;
	if (values && values->type != JV_OBJECT)
		return line_err(CAIRN_ETYPE, idx, "\"values\" must be a JSON object");
	if ((rc = attr_names_check(values, idx)))
		return rc;
	if (!op || strcmp(op, "put") == 0 || strcmp(op, "link") == 0) {
		rc = fill_link(c, OP_LINK, rel, rel_len, fk, fk_len, fkey, fkey_len, tk, tk_len, tkey,
			       tkey_len, idx);
		c->values = values;
		return rc;
	}
	if (strcmp(op, "unlink") == 0 || strcmp(op, "delete") == 0) {
		if (values)
			return line_err(CAIRN_EINVAL, idx, "an unlink takes no \"values\"");
		return fill_link(c, OP_UNLINK, rel, rel_len, fk, fk_len, fkey, fkey_len, tk, tk_len,
				 tkey, tkey_len, idx);
	}
	return err_change(CAIRN_EINVAL, idx, "unknown op \"%s\" for a Link (link, unlink)", op);
}

int cairn_changeset_add_json(cairn_changeset *cs, const char *line, size_t len)
{
	const jv *o;
	cs_change *c;
	long idx;
	int rc;

	if (!cs || !line)
		return err_set(CAIRN_EINVAL, "cairn_changeset_add_json: NULL argument");
	idx = (long)cs->n;
	if (len > CAIRN_MAX_VALUES + 65536)
		return err_change(CAIRN_ELIMIT, idx, "the line is longer than %u bytes",
				  CAIRN_MAX_VALUES + 65536);
	if (!(c = slot(cs)))
		return err_set(CAIRN_ENOMEM, "out of memory");
	/* The tree stays in the change's arena: values point into it. */
	c->mem.hint = len * 2 + 256;
	o = jv_parse(&c->mem, line, len, "line");
	if (!o) {
		size_t i = 0, shown;
		char was[256];

		/* What the line looks like says what the file is: CSV, text, an object over lines. */
		while (i < len && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r'))
			i++;
		for (shown = 0; i + shown < len && shown < 24 && (unsigned char)line[i + shown] >= ' ';)
			shown++;
		snprintf(was, sizeof(was), "%s", cairn_errmsg());
		rc = err_code();
		if (rc == CAIRN_EJSON && (i == len || (line[i] != '{' && line[i] != '[')))
			err_change(rc, idx,
				   "%s: JSON Lines expected, one JSON object a line (docs/import.md), "
				   "and this line begins \"%.*s\"",
				   was, (int)shown, line + i);
		else if (rc == CAIRN_EJSON)
			err_change(rc, idx,
				   "%s: JSON Lines put each object on one line; a JSON document "
				   "spread over lines, or an array, is turned into lines with "
				   "jq -c 'if type == \"array\" then .[] else . end' FILE",
				   was);
		else
			err_set_index(idx);
	} else if (o->type != JV_OBJECT) {
		rc = line_err(CAIRN_EJSON, idx, "a line must be a JSON object");
	} else if (jv_get(o, "kind")) {
		rc = line_record(c, o, idx);
	} else if (jv_get(o, "rel")) {
		rc = line_link(c, o, idx);
	} else {
		rc = line_err(CAIRN_EJSON, idx,
			      "a line needs \"kind\" and \"key\" (a Record) or \"rel\", \"from\" "
			      "and \"to\" (a Link)");
	}
	return commit_slot(cs, c, rc);
}

/* ------------------------------------------------- the names of 0.1.0 -- */

int cairn_cs_put(cairn_changeset *cs, const char *kind, const char *key, size_t key_len,
		 const char *title, size_t title_len, const char *values, size_t values_len)
{
	return cairn_changeset_put(cs, kind, key, key_len, title, title_len, values, values_len);
}

int cairn_cs_patch(cairn_changeset *cs, const char *kind, const char *key, size_t key_len,
		   const char *patch, size_t patch_len)
{
	return cairn_changeset_patch(cs, kind, key, key_len, patch, patch_len);
}

int cairn_cs_delete(cairn_changeset *cs, const char *kind, const char *key, size_t key_len,
		    unsigned flags)
{
	return cairn_changeset_delete(cs, kind, key, key_len, flags);
}

int cairn_cs_link(cairn_changeset *cs, const char *rel, const char *from_kind, const char *from_key,
		  size_t from_len, const char *to_kind, const char *to_key, size_t to_len,
		  const char *values, size_t values_len)
{
	return cairn_changeset_link(cs, rel, from_kind, from_key, from_len, to_kind, to_key, to_len,
				    values, values_len);
}

int cairn_cs_unlink(cairn_changeset *cs, const char *rel, const char *from_kind,
		    const char *from_key, size_t from_len, const char *to_kind, const char *to_key,
		    size_t to_len)
{
	return cairn_changeset_unlink(cs, rel, from_kind, from_key, from_len, to_kind, to_key,
				      to_len);
}

int cairn_cs_vector(cairn_changeset *cs, const float *v, size_t dim)
{
	return cairn_changeset_vector(cs, v, dim);
}

int cairn_cs_add_json(cairn_changeset *cs, const char *line, size_t len)
{
	return cairn_changeset_add_json(cs, line, len);
}
