/* Building change sets: form checks, copies, and the import-line reader. */
#include <math.h>
#include <string.h>

#include "model/changeset.h"
#include "model/json.h"
#include "util/alloc.h"
#include "util/err.h"
#include "util/text.h"

int cairn_changeset_new(cairn_changeset **out)
{
	if (!out)
		return err_set(CAIRN_EINVAL, "cairn_changeset_new: out is NULL");
	json_setup();
	*out = cr_calloc(1, sizeof(**out));
	return *out ? 0 : err_set(CAIRN_ENOMEM, "out of memory");
}

static void change_release(cs_change *c)
{
	cr_free(c->kind);
	cr_free(c->key);
	cr_free(c->title);
	json_decref(c->values);
	cr_free(c->rel);
	cr_free(c->from_kind);
	cr_free(c->from_key);
	cr_free(c->to_kind);
	cr_free(c->to_key);
	cr_free(c->vec);
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

int changeset_move(cairn_changeset *dst, cairn_changeset *src, size_t i)
{
	cs_change *c = slot(dst);

	if (!c)
		return err_set(CAIRN_ENOMEM, "out of memory");
	*c = src->v[i];
	dst->n++;
	memmove(&src->v[i], &src->v[i + 1], (src->n - i - 1) * sizeof(cs_change));
	src->n--;
	return 0;
}

int key_check(const char *key, size_t len, long idx)
{
	if (len == 0)
		return err_change(CAIRN_EKEYEMPTY, idx, "idx %ld: the key is empty", idx);
	if (len > CAIRN_MAX_KEY)
		return err_change(CAIRN_EKEYLONG, idx,
				  "idx %ld: the key is %zu bytes, longer than the limit of %d",
				  idx, len, CAIRN_MAX_KEY);
	if (!utf8_valid(key, len))
		return err_change(CAIRN_EUTF8, idx, "idx %ld: the key is not valid UTF-8",
				  idx);
	if (memchr(key, 0, len))
		return err_change(CAIRN_EUTF8, idx,
				  "idx %ld: the key contains U+0000, which keys may not", idx);
	return 0;
}

static int name_check(const char *name, const char *what, long idx)
{
	if (!name || !*name)
		return err_change(CAIRN_EINVAL, idx, "idx %ld: %s name is missing", idx,
				  what);
	if (strlen(name) > CAIRN_MAX_NAME)
		return err_change(CAIRN_EINVAL, idx, "idx %ld: %s name is too long", idx,
				  what);
	return 0;
}

/* Parse optional JSON object text into *out (NULL text: NULL). */
static int values_parse(const char *p, size_t n, json_t **out, long idx)
{
	*out = NULL;
	if (!p)
		return 0;
	if (n > CAIRN_MAX_VALUES)
		return err_change(CAIRN_ELIMIT, idx,
				  "idx %ld: values are %zu bytes, more than the limit of %u",
				  idx, n, CAIRN_MAX_VALUES);
	*out = json_parse(p, n, "values");
	if (!*out) {
		int rc = err_code();

		err_set_index(idx);
		err_prefix("idx %ld: ", idx);
		return rc;
	}
	if (!json_is_object(*out)) {
		json_decref(*out);
		*out = NULL;
		return err_change(CAIRN_ETYPE, idx, "idx %ld: values must be a JSON object",
				  idx);
	}
	return 0;
}

static int dup_into(char **dst, const char *src, size_t n)
{
	*dst = cr_strndup(src, n);
	return *dst ? 0 : CAIRN_ENOMEM;
}

static int add_record(cairn_changeset *cs, int op, const char *kind, const char *key,
		      size_t key_len, const char *title, size_t title_len, json_t *values,
		      unsigned flags)
{
	long idx = (long)cs->n;
	cs_change *c;
	int rc;

	if ((rc = name_check(kind, "Kind", idx)) || (rc = key_check(key, key_len, idx)))
		goto out_values;
	if (title) {
		if (title_len > CAIRN_MAX_TITLE) {
			rc = err_change(CAIRN_ELIMIT, idx,
					"change %ld: the title is %zu bytes, more than the limit of %d",
					idx, title_len, CAIRN_MAX_TITLE);
			goto out_values;
		}
		if (!utf8_valid(title, title_len)) {
			rc = err_change(CAIRN_EUTF8, idx, "change %ld: the title is not valid UTF-8",
					idx);
			goto out_values;
		}
	}
	c = slot(cs);
	if (!c) {
		rc = err_set(CAIRN_ENOMEM, "out of memory");
		goto out_values;
	}
	c->op = op;
	c->flags = flags;
	c->values = values;
	if (dup_into(&c->kind, kind, strlen(kind)) || dup_into(&c->key, key, key_len) ||
	    (title && dup_into(&c->title, title, title_len))) {
		change_release(c);
		return err_set(CAIRN_ENOMEM, "out of memory");
	}
	c->key_len = key_len;
	c->title_len = title ? title_len : 0;
	cs->n++;
	return 0;
out_values:
	json_decref(values);
	return rc;
}

int cairn_cs_put(cairn_changeset *cs, const char *kind, const char *key, size_t key_len,
		 const char *title, size_t title_len, const char *values, size_t values_len)
{
	json_t *v;
	int rc;

	if (!cs || !key)
		return err_set(CAIRN_EINVAL, "cairn_cs_put: NULL argument");
	rc = values_parse(values, values_len, &v, (long)cs->n);
	if (rc)
		return rc;
	if (!v && !(v = json_object()))
		return err_set(CAIRN_ENOMEM, "out of memory");
	return add_record(cs, OP_PUT, kind, key, key_len, title ? title : "", title ? title_len : 0,
			  v, 0);
}

int cairn_cs_patch(cairn_changeset *cs, const char *kind, const char *key, size_t key_len,
		   const char *patch, size_t patch_len)
{
	json_t *v;
	int rc;

	if (!cs || !key || !patch)
		return err_set(CAIRN_EINVAL, "cairn_cs_patch: NULL argument");
	rc = values_parse(patch, patch_len, &v, (long)cs->n);
	if (rc)
		return rc;
	return add_record(cs, OP_PATCH, kind, key, key_len, NULL, 0, v, 0);
}

int cairn_cs_delete(cairn_changeset *cs, const char *kind, const char *key, size_t key_len,
		    unsigned flags)
{
	if (!cs || !key)
		return err_set(CAIRN_EINVAL, "cairn_cs_delete: NULL argument");
	if (flags & ~(unsigned)CAIRN_CASCADE)
		return err_change(CAIRN_EINVAL, (long)cs->n, "change %zu: unknown delete flags",
				  cs->n);
	return add_record(cs, OP_DELETE, kind, key, key_len, NULL, 0, NULL, flags);
}

static int add_link(cairn_changeset *cs, int op, const char *rel, const char *from_kind,
		    const char *from_key, size_t from_len, const char *to_kind, const char *to_key,
		    size_t to_len, json_t *values)
{
	long idx = (long)cs->n;
	cs_change *c;
	int rc;

	if ((rc = name_check(rel, "Relation", idx)) || (rc = name_check(from_kind, "Kind", idx)) ||
	    (rc = name_check(to_kind, "Kind", idx)) || (rc = key_check(from_key, from_len, idx)) ||
	    (rc = key_check(to_key, to_len, idx))) {
		json_decref(values);
		return rc;
	}
	c = slot(cs);
	if (!c) {
		json_decref(values);
		return err_set(CAIRN_ENOMEM, "out of memory");
	}
	c->op = op;
	c->values = values;
	if (dup_into(&c->rel, rel, strlen(rel)) ||
	    dup_into(&c->from_kind, from_kind, strlen(from_kind)) ||
	    dup_into(&c->from_key, from_key, from_len) ||
	    dup_into(&c->to_kind, to_kind, strlen(to_kind)) || dup_into(&c->to_key, to_key, to_len)) {
		change_release(c);
		return err_set(CAIRN_ENOMEM, "out of memory");
	}
	c->from_len = from_len;
	c->to_len = to_len;
	cs->n++;
	return 0;
}

int cairn_cs_link(cairn_changeset *cs, const char *rel, const char *from_kind,
		  const char *from_key, size_t from_len, const char *to_kind, const char *to_key,
		  size_t to_len, const char *values, size_t values_len)
{
	json_t *v;
	int rc;

	if (!cs || !from_key || !to_key)
		return err_set(CAIRN_EINVAL, "cairn_cs_link: NULL argument");
	rc = values_parse(values, values_len, &v, (long)cs->n);
	if (rc)
		return rc;
	return add_link(cs, OP_LINK, rel, from_kind, from_key, from_len, to_kind, to_key, to_len, v);
}

int cairn_cs_unlink(cairn_changeset *cs, const char *rel, const char *from_kind,
		    const char *from_key, size_t from_len, const char *to_kind, const char *to_key,
		    size_t to_len)
{
	if (!cs || !from_key || !to_key)
		return err_set(CAIRN_EINVAL, "cairn_cs_unlink: NULL argument");
	return add_link(cs, OP_UNLINK, rel, from_kind, from_key, from_len, to_kind, to_key, to_len,
			NULL);
}

int cairn_cs_vector(cairn_changeset *cs, const float *v, size_t dim)
{
	cs_change *c;
	float *copy;

	if (!cs || !v)
		return err_set(CAIRN_EINVAL, "cairn_cs_vector: NULL argument");
	if (cs->n == 0 || (cs->v[cs->n - 1].op != OP_PUT && cs->v[cs->n - 1].op != OP_PATCH))
		return err_change(CAIRN_EINVAL, (long)cs->n - 1,
				  "a vector must follow a put or patch of a Record");
	if (dim == 0 || dim > CAIRN_MAX_VECTOR_DIM)
		return err_change(CAIRN_EDIM, (long)cs->n - 1,
				  "change %zu: a vector has 1 to %d dimensions, not %zu", cs->n - 1,
				  CAIRN_MAX_VECTOR_DIM, dim);
	for (size_t i = 0; i < dim; i++)
		if (!isfinite(v[i]))
			return err_change(CAIRN_ETYPE, (long)cs->n - 1,
					  "change %zu: vector component %zu is not finite",
					  cs->n - 1, i);
	copy = cr_reallocarray(NULL, dim, sizeof(float));
	if (!copy)
		return err_set(CAIRN_ENOMEM, "out of memory");
	memcpy(copy, v, dim * sizeof(float));
	c = &cs->v[cs->n - 1];
	cr_free(c->vec);
	c->vec = copy;
	c->dim = dim;
	return 0;
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

static const char *str_member(json_t *o, const char *name, size_t *len, int *bad)
{
	json_t *v = json_object_get(o, name);

	if (!v)
		return NULL;
	if (!json_is_string(v)) {
		*bad = 1;
		return NULL;
	}
	*len = json_string_length(v);
	return json_string_value(v);
}

static int line_err(int code, long idx, const char *msg)
{
	return err_change(code, idx, "%s", msg);
}

static int add_vector(cairn_changeset *cs, json_t *vec)
{
	size_t dim, i;
	float *f;
	json_t *x;
	int rc;

	if (!json_is_array(vec))
		return line_err(CAIRN_ETYPE, (long)cs->n - 1, "\"vector\" must be an array of numbers");
	dim = json_array_size(vec);
	if (dim == 0 || dim > CAIRN_MAX_VECTOR_DIM)
		return err_change(CAIRN_EDIM, (long)cs->n - 1,
				  "a vector has 1 to %d dimensions, not %zu", CAIRN_MAX_VECTOR_DIM,
				  dim);
	f = cr_reallocarray(NULL, dim, sizeof(float));
	if (!f)
		return err_set(CAIRN_ENOMEM, "out of memory");
	json_array_foreach(vec, i, x) {
		if (!json_is_number(x)) {
			cr_free(f);
			return line_err(CAIRN_ETYPE, (long)cs->n - 1,
					"\"vector\" must be an array of numbers");
		}
		f[i] = (float)json_number_value(x);
	}
	rc = cairn_cs_vector(cs, f, dim);
	cr_free(f);
	return rc;
}

static int add_json_record(cairn_changeset *cs, json_t *o, long idx)
{
	static const char *const allowed[] = {"kind",	"key",	  "title", "values",
					      "vector", "op", "cascade", NULL};
	const char *kind, *key, *title, *op;
	size_t kind_len = 0, key_len = 0, title_len = 0, op_len = 0;
	json_t *values, *vec, *cascade;
	int bad = 0, rc;

	if ((rc = json_only(o, allowed, CAIRN_EJSON, "record line"))) {
		err_set_index(idx);
		return rc;
	}
	kind = str_member(o, "kind", &kind_len, &bad);
	key = str_member(o, "key", &key_len, &bad);
	title = str_member(o, "title", &title_len, &bad);
	op = str_member(o, "op", &op_len, &bad);
	if (bad || !kind || !key)
		return line_err(CAIRN_ETYPE, idx,
				"\"kind\" and \"key\" must be strings, and \"title\" and \"op\" "
				"strings when present");
	if (memchr(kind, 0, kind_len))
		return line_err(CAIRN_EINVAL, idx, "the Kind name contains U+0000");
	values = json_object_get(o, "values");
	if (values && !json_is_object(values) && !json_is_null(values))
		return line_err(CAIRN_ETYPE, idx, "\"values\" must be a JSON object");
	if (values && json_is_null(values))
		values = NULL;
	vec = json_object_get(o, "vector");
	cascade = json_object_get(o, "cascade");
	if (cascade && !json_is_boolean(cascade))
		return line_err(CAIRN_ETYPE, idx, "\"cascade\" must be true or false");
	if (!op || strcmp(op, "put") == 0) {
		json_t *v = values ? json_incref(values) : json_object();

		if (!v)
			return err_set(CAIRN_ENOMEM, "out of memory");
		rc = add_record(cs, OP_PUT, kind, key, key_len, title ? title : "", title_len, v, 0);
	} else if (strcmp(op, "patch") == 0) {
		if (!values)
			return line_err(CAIRN_EINVAL, idx, "a patch needs \"values\"");
		if (title)
			return line_err(CAIRN_EINVAL, idx, "a patch changes values only, not the title");
		rc = add_record(cs, OP_PATCH, kind, key, key_len, NULL, 0, json_incref(values), 0);
	} else if (strcmp(op, "delete") == 0) {
		if (values || title || vec)
			return line_err(CAIRN_EINVAL, idx,
					"a delete takes no \"title\", \"values\" or \"vector\"");
		rc = add_record(cs, OP_DELETE, kind, key, key_len, NULL, 0, NULL,
				json_is_true(cascade) ? CAIRN_CASCADE : 0);
	} else {
		return err_change(CAIRN_EINVAL, idx,
				  "unknown op \"%s\" for a Record (put, patch, delete)", op);
	}
	if (rc)
		return rc;
	if (vec && (rc = add_vector(cs, vec))) {
		cs->n--;
		change_release(&cs->v[cs->n]);
	}
	return rc;
}

static int add_json_link(cairn_changeset *cs, json_t *o, long idx)
{
	static const char *const allowed[] = {"rel", "from", "to", "values", "op", NULL};
	const char *rel, *from, *to, *op, *fk, *fkey, *tk, *tkey;
	size_t rel_len = 0, from_len = 0, to_len = 0, op_len = 0, fk_len, fkey_len, tk_len,
	       tkey_len;
	char fkind[CAIRN_MAX_NAME + 1], tkind[CAIRN_MAX_NAME + 1];
	json_t *values;
	int bad = 0;

	if (json_only(o, allowed, CAIRN_EJSON, "link line")) {
		err_set_index(idx);
		return CAIRN_EJSON;
	}
	rel = str_member(o, "rel", &rel_len, &bad);
	from = str_member(o, "from", &from_len, &bad);
	to = str_member(o, "to", &to_len, &bad);
	op = str_member(o, "op", &op_len, &bad);
	if (bad || !rel || !from || !to)
		return line_err(CAIRN_ETYPE, idx, "\"rel\", \"from\" and \"to\" must be strings");
	if (memchr(rel, 0, rel_len))
		return line_err(CAIRN_EINVAL, idx, "the Relation name contains U+0000");
	if (endpoint_split(from, from_len, &fk, &fk_len, &fkey, &fkey_len) ||
	    endpoint_split(to, to_len, &tk, &tk_len, &tkey, &tkey_len))
		return line_err(CAIRN_EINVAL, idx, "\"from\" and \"to\" must be \"Kind:key\"");
	if (fk_len > CAIRN_MAX_NAME || tk_len > CAIRN_MAX_NAME || memchr(fk, 0, fk_len) ||
	    memchr(tk, 0, tk_len))
		return line_err(CAIRN_EINVAL, idx, "the Kind of a Link end is not a valid name");
	memcpy(fkind, fk, fk_len);
	fkind[fk_len] = '\0';
	memcpy(tkind, tk, tk_len);
	tkind[tk_len] = '\0';
	values = json_object_get(o, "values");
	if (values && json_is_null(values))
		values = NULL;
	if (values && !json_is_object(values))
		return line_err(CAIRN_ETYPE, idx, "\"values\" must be a JSON object");
	if (!op || strcmp(op, "put") == 0 || strcmp(op, "link") == 0)
		return add_link(cs, OP_LINK, rel, fkind, fkey, fkey_len, tkind, tkey, tkey_len,
				values ? json_incref(values) : NULL);
	if (strcmp(op, "unlink") == 0 || strcmp(op, "delete") == 0) {
		if (values)
			return line_err(CAIRN_EINVAL, idx, "an unlink takes no \"values\"");
		return add_link(cs, OP_UNLINK, rel, fkind, fkey, fkey_len, tkind, tkey, tkey_len,
				NULL);
	}
	return err_change(CAIRN_EINVAL, idx, "unknown op \"%s\" for a Link (link, unlink)", op);
}

int cairn_cs_add_json(cairn_changeset *cs, const char *line, size_t len)
{
	long idx;
	json_t *o;
	int rc;

	if (!cs || !line)
		return err_set(CAIRN_EINVAL, "cairn_cs_add_json: NULL argument");
	idx = (long)cs->n;
	if (len > CAIRN_MAX_VALUES + 65536)
		return err_change(CAIRN_ELIMIT, idx, "the line is longer than %u bytes",
				  CAIRN_MAX_VALUES + 65536);
	o = json_parse(line, len, "line");
	if (!o) {
		err_set_index(idx);
		return err_code();
	}
	if (!json_is_object(o))
		rc = line_err(CAIRN_EJSON, idx, "a line must be a JSON object");
	else if (json_object_get(o, "kind"))
		rc = add_json_record(cs, o, idx);
	else if (json_object_get(o, "rel"))
		rc = add_json_link(cs, o, idx);
	else
		rc = line_err(CAIRN_EJSON, idx,
			      "a line needs \"kind\" and \"key\" (a Record) or \"rel\", \"from\" "
			      "and \"to\" (a Link)");
	json_decref(o);
	return rc;
}
