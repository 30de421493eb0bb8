/*
 * Schema parsing, merging and canonical serialization.
 *
 * A Domain's schema only grows: a schema document names Kinds, Attributes
 * and Relations to add or change, and whatever it does not name is kept.
 * Ids are therefore positions (Kind 3 is the third Kind ever defined) and
 * never change, so stored Versions and index keys can carry small integers.
 */
#include <string.h>

#include "cairn.h"
#include <stdio.h>
#include "model/analyze.h"
#include "base/json.h"
#include "model/schema.h"
#include "base/alloc.h"
#include "base/assert.h"
#include "base/err.h"
#include "base/text.h"

static const char *const type_names[] = {
	[AT_STRING] = "string", [AT_INT] = "int",	   [AT_FLOAT] = "float",
	[AT_BOOL] = "bool",	[AT_DATE] = "date",	   [AT_DATETIME] = "datetime",
	[AT_ENUM] = "enum",	[AT_REF] = "ref",	   [AT_STRINGS] = "strings",
};

const char *attr_type_name(int type)
{
	if (type < AT_STRING || type > AT_STRINGS)
		return "?";
	return type_names[type];
}

static int type_from_name(const char *s)
{
	for (int t = AT_STRING; t <= AT_STRINGS; t++)
		if (strcmp(type_names[t], s) == 0)
			return t;
	return 0;
}

/*
 * The function words of English (folded, as the analyzer cuts them; the
 * pieces of contractions too: "she's" is "she" and "s"): the default stop
 * words of the english and porter languages. Articles, pronouns,
 * auxiliaries and modals, prepositions, conjunctions and question words
 * only: no negation, number or quantity, which can be what a text is about.
 * A question is mostly such words ("When did Caroline go to the support
 * group?"), and a Record with more of them would come first among partial
 * matches (docs/search.md, "Stop words", says why and what it measured).
 */
static const char *const english_stop_words[] = {
	"a", "about", "am", "an", "and", "are", "as", "at", "be", "been", "being", "but", "by",
	"can", "could", "d", "did", "do", "does", "doing", "for", "from", "had", "has", "have",
	"having", "he", "her", "hers", "herself", "him", "himself", "his", "how", "i", "if", "in",
	"into", "is", "it", "its", "itself", "ll", "m", "may", "me", "might", "must", "my", "myself",
	"of", "on", "or", "our", "ours", "ourselves", "re", "s", "shall", "she", "should", "so",
	"t", "than", "that", "the", "their", "theirs", "them", "themselves", "then", "there",
	"these", "they", "this", "those", "to", "ve", "was", "we", "were", "what", "when", "where",
	"which", "while", "who", "whom", "whose", "why", "will", "with", "would", "you", "your",
	"yours", "yourself", "yourselves", NULL};

/* The stop words a language has by default: English's for english and porter, else none. */
static void default_stop_words(search_conf *c)
{
	c->stop_len = 0;
	if (strcmp(c->language, "english") != 0 && strcmp(c->language, "porter") != 0)
		return;
	for (size_t i = 0; english_stop_words[i]; i++) {
		size_t n = strlen(english_stop_words[i]) + 1;

		CR_ASSERT(c->stop_len + n <= sizeof(c->stop));
		memcpy(c->stop + c->stop_len, english_stop_words[i], n);
		c->stop_len += n;
	}
}

static void search_defaults(search_conf *c)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->language, sizeof(c->language), "%s", SEARCH_LANGUAGE);
	c->title_weight = SEARCH_TITLE_WEIGHT;
	c->k1 = SEARCH_K1;
	c->b = SEARCH_B;
	c->typo_one = SEARCH_TYPO_ONE;
	c->typo_two = SEARCH_TYPO_TWO;
	default_stop_words(c);
}

int search_stop_word(const search_conf *c, const char *w, size_t n)
{
	for (size_t at = 0; at < c->stop_len;) {
		size_t m = strlen(c->stop + at);

		if (m == n && memcmp(c->stop + at, w, n) == 0)
			return 1;
		at += m + 1;
	}
	return 0;
}

/* A stop word, analyzed: each of its words (an identifier's parts) joins the list. */
static int stop_token(void *ctx, const token *t)
{
	search_conf *c = ctx;

	if (t->kind == TK_WHOLE || search_stop_word(c, t->s, t->len))
		return 0;
	if (c->stop_len + t->len + 1 > sizeof(c->stop))
		return err_set(CAIRN_ESCHEMA, "search: \"stop_words\" holds at most %d bytes",
			       SEARCH_STOP_BYTES);
	memcpy(c->stop + c->stop_len, t->s, t->len);
	c->stop[c->stop_len + t->len] = '\0';
	c->stop_len += t->len + 1;
	return 0;
}

static int parse_typos(const jv *v, search_conf *c)
{
	static const char *const allowed[] = {"one", "two", NULL};
	const jv *one = jv_get(v, "one"), *two = jv_get(v, "two");
	int rc;

	if (jv_is(v, JV_FALSE)) {
		c->typo_one = c->typo_two = 0;
		return 0;
	}
	if (jv_is(v, JV_TRUE))
		return 0;
	if (!jv_is(v, JV_OBJECT))
		return err_set(CAIRN_ESCHEMA, "search: \"typos\" is true, false or "
					      "{\"one\": letters, \"two\": letters}");
	if ((rc = jv_only(v, allowed, CAIRN_ESCHEMA, "search: typos")))
		return rc;
	if ((one && (!jv_is(one, JV_INT) || one->u.i < 1 || one->u.i > 64)) ||
	    (two && (!jv_is(two, JV_INT) || two->u.i < 1 || two->u.i > 64)))
		return err_set(CAIRN_ESCHEMA, "search: typos: \"one\" and \"two\" are letters, 1 to 64");
	if (one)
		c->typo_one = (unsigned)one->u.i;
	if (two)
		c->typo_two = (unsigned)two->u.i;
	if (c->typo_two < c->typo_one)
		return err_set(CAIRN_ESCHEMA, "search: typos: \"two\" is at least \"one\"");
	return 0;
}

schema *schema_new(void)
{
	schema *s = cr_calloc(1, sizeof(schema));

	if (s)
		search_defaults(&s->search);
	return s;
}

static void attr_release(attr_def *a)
{
	cr_free(a->name);
	for (size_t i = 0; i < a->n_values; i++)
		cr_free(a->values[i]);
	cr_free(a->values);
	cr_free(a->ref);
	cr_free(a->description);
}

static void kind_release(kind_def *k)
{
	for (size_t i = 0; i < k->n_attrs; i++)
		attr_release(&k->attrs[i]);
	cr_free(k->attrs);
	cr_free(k->name);
	cr_free(k->description);
}

static void rel_release(rel_def *r)
{
	cr_free(r->name);
	cr_free(r->from);
	cr_free(r->to);
	cr_free(r->inverse);
	cr_free(r->description);
}

void schema_free(schema *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n_kinds; i++)
		kind_release(&s->kinds[i]);
	for (size_t i = 0; i < s->n_rels; i++)
		rel_release(&s->rels[i]);
	cr_free(s->kinds);
	cr_free(s->rels);
	cr_free(s->json);
	cr_free(s);
}

void schema_delta_release(schema_delta *d)
{
	if (!d)
		return;
	cr_free(d->items);
	d->items = NULL;
	d->n = 0;
}

const kind_def *schema_kind_n(const schema *s, const char *name, size_t n)
{
	for (size_t i = 0; i < s->n_kinds; i++)
		if (strlen(s->kinds[i].name) == n && memcmp(s->kinds[i].name, name, n) == 0)
			return &s->kinds[i];
	return NULL;
}

#define HINT_NAMES 32 /* names a hint lists */

/* The hint of names (n, each at base + i * stride, a char * member), for what. */
static const char *hint(const char *name, size_t len, const void *base, size_t n, size_t stride,
			const char *what, char *out, size_t cap)
{
	const char *ptrs[256], *near;
	size_t m = n < 256 ? n : 256, at = 0;

	if (!cap)
		return out;
	out[0] = '\0';
	if (!n)
		return out;
	for (size_t i = 0; i < m; i++)
		ptrs[i] = *(char *const *)((const char *)base + i * stride);
	near = name ? text_closest(name, len, ptrs, m) : NULL;
	if (near)
		at = (size_t)snprintf(out, cap, " (did you mean \"%s\"?)", near);
	if (at < cap)
		at += (size_t)snprintf(out + at, cap - at, "; %s", what);
	for (size_t i = 0; i < n && i < HINT_NAMES && at < cap; i++)
		at += (size_t)snprintf(out + at, cap - at, "%s%s", i ? ", " : " ",
				       *(char *const *)((const char *)base + i * stride));
	if (n > HINT_NAMES && at < cap)
		snprintf(out + at, cap - at, " and %zu more", n - HINT_NAMES);
	return out;
}

const char *schema_hint_kind(const schema *s, const char *name, char *out, size_t cap)
{
	return hint(name, name ? strlen(name) : 0, s->kinds, s->n_kinds, sizeof(kind_def),
		    "the Kinds are", out, cap);
}

const char *schema_hint_rel(const schema *s, const char *name, char *out, size_t cap)
{
	return hint(name, name ? strlen(name) : 0, s->rels, s->n_rels, sizeof(rel_def),
		    "the Relations are", out, cap);
}

const char *schema_hint_attr(const kind_def *k, const char *name, size_t len, char *out,
			     size_t cap)
{
	char what[CAIRN_MAX_NAME + 32];

	snprintf(what, sizeof(what), "the attributes of %s are", k->name);
	return hint(name, len, k->attrs, k->n_attrs, sizeof(attr_def), what, out, cap);
}

const char *schema_hint_enum(const attr_def *a, char *out, size_t cap)
{
	size_t at = 0;

	if (!cap)
		return out;
	out[0] = '\0';
	for (size_t i = 0; i < a->n_values && at < cap; i++)
		at += (size_t)snprintf(out + at, cap - at, "%s%s", i ? ", " : ": the values are ",
				       a->values[i]);
	return out;
}

const kind_def *schema_kind(const schema *s, const char *name)
{
	return schema_kind_n(s, name, strlen(name));
}

const kind_def *schema_kind_id(const schema *s, uint32_t id)
{
	if (id == 0 || id > s->n_kinds)
		return NULL;
	return &s->kinds[id - 1];
}

const attr_def *kind_attr(const kind_def *k, const char *name)
{
	for (size_t i = 0; i < k->n_attrs; i++)
		if (strcmp(k->attrs[i].name, name) == 0)
			return &k->attrs[i];
	return NULL;
}

const attr_def *kind_attr_id(const kind_def *k, uint32_t id)
{
	if (id == 0 || id > k->n_attrs)
		return NULL;
	return &k->attrs[id - 1];
}

const rel_def *schema_rel(const schema *s, const char *name)
{
	for (size_t i = 0; i < s->n_rels; i++)
		if (strcmp(s->rels[i].name, name) == 0)
			return &s->rels[i];
	return NULL;
}

const rel_def *schema_rel_id(const schema *s, uint32_t id)
{
	if (id == 0 || id > s->n_rels)
		return NULL;
	return &s->rels[id - 1];
}

/* ------------------------------------------------------------ parsing -- */

static int dup_opt_string(const jv *o, const char *field, char **out, const char *what)
{
	const jv *v = jv_get(o, field);

	*out = NULL;
	if (!v || v->type == JV_NULL)
		return 0;
	if (v->type != JV_STRING)
		return err_set(CAIRN_ESCHEMA, "%s: \"%s\" must be a string", what, field);
	if (memchr(v->u.s, 0, v->len))
		return err_set(CAIRN_ESCHEMA, "%s: \"%s\" " JSON_NUL_REFUSED, what, field);
	*out = cr_strndup(v->u.s, v->len);
	return *out ? 0 : err_set(CAIRN_ENOMEM, "out of memory");
}

static int get_bool(const jv *o, const char *field, int *out, const char *what)
{
	const jv *v = jv_get(o, field);

	*out = 0;
	if (!v)
		return 0;
	if (!jv_is_bool(v))
		return err_set(CAIRN_ESCHEMA, "%s: \"%s\" must be true or false", what, field);
	*out = v->type == JV_TRUE;
	return 0;
}

/* "search": true (1), false (0) or a weight above 0 and at most SEARCH_WEIGHT_MAX. */
static int get_weight(const jv *o, const char *field, double *out, const char *what)
{
	const jv *v = jv_get(o, field);

	*out = 0;
	if (!v)
		return 0;
	if (v->type == JV_TRUE || v->type == JV_FALSE) {
		*out = v->type == JV_TRUE;
		return 0;
	}
	if (!jv_is_number(v) || !(jv_number(v) > 0) || jv_number(v) > SEARCH_WEIGHT_MAX)
		return err_set(CAIRN_ESCHEMA,
			       "%s: \"%s\" is true, false or a weight above 0 and at most %g", what,
			       field, SEARCH_WEIGHT_MAX);
	*out = jv_number(v);
	return 0;
}

/* A number of the "search" settings: within [lo, hi] (lo excluded when open). */
static int get_setting(const jv *o, const char *field, double lo, double hi, int open, double *out)
{
	const jv *v = jv_get(o, field);

	if (!v)
		return 0;
	if (!jv_is_number(v) || jv_number(v) < lo || (open && jv_number(v) == lo) ||
	    jv_number(v) > hi)
		return err_set(CAIRN_ESCHEMA, "search: \"%s\" is a number %s %g and at most %g", field,
			       open ? "above" : "from", lo, hi);
	*out = jv_number(v);
	return 0;
}

static int parse_search(const jv *o, search_conf *c)
{
	static const char *const allowed[] = {"language", "title_weight", "k1",	      "b",
					      "typos",	  "stop_words",	  NULL};
	const jv *stop = jv_get(o, "stop_words");
	const jv *lang = jv_get(o, "language");
	int rc;

	if (!jv_is(o, JV_OBJECT))
		return err_set(CAIRN_ESCHEMA, "schema: \"search\" must be an object");
	if ((rc = jv_only(o, allowed, CAIRN_ESCHEMA, "search")))
		return rc;
	c->set = 1;
	if (lang) {
		if (!jv_is(lang, JV_STRING) || lang->len == 0 || lang->len >= sizeof(c->language) ||
		    memchr(lang->u.s, 0, lang->len) ||
		    (strcmp(lang->u.s, "none") != 0 && !stem_language_ok(lang->u.s)))
			return err_set(CAIRN_ESCHEMA,
				       "search: \"language\" is \"none\" or a Snowball language "
				       "(english, german, french, spanish, ...)");
		memcpy(c->language, lang->u.s, lang->len + 1);
	}
	if ((rc = get_setting(o, "title_weight", 0, SEARCH_WEIGHT_MAX, 1, &c->title_weight)) ||
	    (rc = get_setting(o, "k1", 0, 10, 0, &c->k1)) ||
	    (rc = get_setting(o, "b", 0, 1, 0, &c->b)) ||
	    (jv_get(o, "typos") && (rc = parse_typos(jv_get(o, "typos"), c))))
		return rc;
	if (stop && !jv_is(stop, JV_ARRAY))
		return err_set(CAIRN_ESCHEMA, "search: \"stop_words\" is an array of strings");
	/* Without stop_words, the language's; with them, those (none for []). */
	if (stop)
		c->stop_len = 0;
	else
		default_stop_words(c);
	for (uint32_t i = 0; stop && i < stop->len; i++) {
		const jv *w = &stop->u.items[i];
		uint32_t pos = 0;

		if (!jv_is(w, JV_STRING))
			return err_set(CAIRN_ESCHEMA, "search: \"stop_words\" is an array of strings");
		if ((rc = analyze(w->u.s, w->len, &pos, stop_token, c)))
			return rc;
	}
	return 0;
}

static int get_name(const jv *o, size_t max, char **out, const char *what)
{
	const jv *v = jv_get(o, "name");

	*out = NULL;
	if (!jv_is(v, JV_STRING))
		return err_set(CAIRN_ESCHEMA, "%s: \"name\" (a string) is required", what);
	if (memchr(v->u.s, 0, v->len))
		return err_set(CAIRN_ESCHEMA, "%s: a name " JSON_NUL_REFUSED, what);
	if (!name_valid(v->u.s, max))
		return err_set(CAIRN_ESCHEMA,
			       "%s: name \"%s\" is not 1 to %zu characters of letters, digits, "
			       "'_', '.' and '-'",
			       what, v->u.s, max);
	*out = cr_strdup(v->u.s);
	return *out ? 0 : err_set(CAIRN_ENOMEM, "out of memory");
}

static int parse_attr(const jv *o, attr_def *a, const char *kind)
{
	static const char *const allowed[] = {"name",  "type",	 "required", "unique",
					      "indexed", "alias", "values",   "ref",
					      "search",	 "description", NULL};
	char what[160];
	const jv *t, *vals;
	int req, uniq, idx, alias, rc;

	memset(a, 0, sizeof(*a));
	snprintf(what, sizeof(what), "Kind %s: attribute", kind);
	if (!jv_is(o, JV_OBJECT))
		return err_set(CAIRN_ESCHEMA, "%s: must be an object", what);
	rc = get_name(o, CAIRN_MAX_NAME, &a->name, what);
	if (rc)
		return rc;
	snprintf(what, sizeof(what), "Kind %s, attribute %s", kind, a->name);
	rc = jv_only(o, allowed, CAIRN_ESCHEMA, what);
	if (rc)
		return rc;
	t = jv_get(o, "type");
	if (!jv_is(t, JV_STRING))
		return err_set(CAIRN_ESCHEMA, "%s: \"type\" (a string) is required", what);
	a->type = type_from_name(t->u.s);
	if (!a->type)
		return err_set(CAIRN_ESCHEMA,
			       "%s: unknown type \"%s\" (string, int, float, bool, date, datetime, "
			       "enum, ref, strings)",
			       what, t->u.s);
	if ((rc = get_bool(o, "required", &req, what)) || (rc = get_bool(o, "unique", &uniq, what)) ||
	    (rc = get_bool(o, "indexed", &idx, what)) || (rc = get_bool(o, "alias", &alias, what)))
		return rc;
	a->flags = (req ? AF_REQUIRED : 0) | (uniq ? AF_UNIQUE | AF_INDEXED : 0) |
		   (idx ? AF_INDEXED : 0) | (alias ? AF_ALIAS : 0);
	if (alias && a->type != AT_STRING && a->type != AT_STRINGS)
		return err_set(CAIRN_ESCHEMA, "%s: only a string or strings can be an alias", what);
	if ((rc = get_weight(o, "search", &a->search, what)))
		return rc;
	if (a->search > 0 && a->type != AT_STRING && a->type != AT_STRINGS && a->type != AT_ENUM)
		return err_set(CAIRN_ESCHEMA,
			       "%s: only a string, strings or enum can be searched (\"search\")", what);
	/* A ref is always indexed: deleting a Record must find the Records that name it. */
	if (a->type == AT_REF)
		a->flags |= AF_INDEXED;
	if (uniq && a->type == AT_STRINGS)
		return err_set(CAIRN_ESCHEMA, "%s: an array of strings cannot be unique", what);
	vals = jv_get(o, "values");
	if (a->type == AT_ENUM) {
		if (!jv_is(vals, JV_ARRAY) || vals->len == 0)
			return err_set(CAIRN_ESCHEMA, "%s: an enum needs \"values\", a non-empty "
						      "array of strings",
				       what);
		a->values = cr_calloc(vals->len, sizeof(char *));
		if (!a->values)
			return err_set(CAIRN_ENOMEM, "out of memory");
		for (uint32_t i = 0; i < vals->len; i++) {
			const jv *v = &vals->u.items[i];

			if (v->type != JV_STRING || v->len == 0 || v->len > 256 ||
			    memchr(v->u.s, 0, v->len))
				return err_set(CAIRN_ESCHEMA,
					       "%s: enum values must be strings of 1 to 256 bytes",
					       what);
			for (size_t j = 0; j < a->n_values; j++)
				if (strcmp(a->values[j], v->u.s) == 0)
					return err_set(CAIRN_ESCHEMA,
						       "%s: enum value \"%s\" is listed twice", what,
						       a->values[j]);
			a->values[a->n_values] = cr_strdup(v->u.s);
			if (!a->values[a->n_values])
				return err_set(CAIRN_ENOMEM, "out of memory");
			a->n_values++;
		}
	} else if (vals) {
		return err_set(CAIRN_ESCHEMA, "%s: \"values\" is only for enum attributes", what);
	}
	rc = dup_opt_string(o, "ref", &a->ref, what);
	if (rc)
		return rc;
	if (a->type == AT_REF && !a->ref)
		return err_set(CAIRN_ESCHEMA, "%s: a ref attribute needs \"ref\", the Kind it names",
			       what);
	if (a->type != AT_REF && a->ref)
		return err_set(CAIRN_ESCHEMA, "%s: \"ref\" is only for ref attributes", what);
	return dup_opt_string(o, "description", &a->description, what);
}

static int parse_kind(const jv *o, kind_def *k)
{
	static const char *const allowed[] = {"name", "attributes", "description", NULL};
	char what[128];
	const jv *attrs;
	int rc;

	memset(k, 0, sizeof(*k));
	if (!jv_is(o, JV_OBJECT))
		return err_set(CAIRN_ESCHEMA, "kinds: each Kind must be an object");
	rc = get_name(o, CAIRN_MAX_NAME, &k->name, "Kind");
	if (rc)
		return rc;
	snprintf(what, sizeof(what), "Kind %s", k->name);
	if ((rc = jv_only(o, allowed, CAIRN_ESCHEMA, what)))
		return rc;
	if ((rc = dup_opt_string(o, "description", &k->description, what)))
		return rc;
	attrs = jv_get(o, "attributes");
	if (!attrs)
		return 0;
	if (attrs->type != JV_ARRAY)
		return err_set(CAIRN_ESCHEMA, "%s: \"attributes\" must be an array", what);
	k->attrs = cr_calloc(attrs->len, sizeof(attr_def));
	if (!k->attrs)
		return err_set(CAIRN_ENOMEM, "out of memory");
	for (uint32_t i = 0; i < attrs->len; i++) {
		rc = parse_attr(&attrs->u.items[i], &k->attrs[k->n_attrs], k->name);
		if (rc) {
			attr_release(&k->attrs[k->n_attrs]);
			return rc;
		}
		k->n_attrs++;
		for (size_t j = 0; j + 1 < k->n_attrs; j++)
			if (strcmp(k->attrs[j].name, k->attrs[k->n_attrs - 1].name) == 0)
				return err_set(CAIRN_ESCHEMA, "%s: attribute %s is defined twice",
					       what, k->attrs[j].name);
		k->attrs[k->n_attrs - 1].id = (uint32_t)k->n_attrs;
	}
	return 0;
}

static int parse_rel(const jv *o, rel_def *r)
{
	static const char *const allowed[] = {"name",	     "from",	"to", "cardinality",
					      "inverse", "description", NULL};
	char what[128];
	const jv *c;
	int rc;

	memset(r, 0, sizeof(*r));
	if (!jv_is(o, JV_OBJECT))
		return err_set(CAIRN_ESCHEMA, "relations: each Relation must be an object");
	rc = get_name(o, CAIRN_MAX_NAME, &r->name, "Relation");
	if (rc)
		return rc;
	snprintf(what, sizeof(what), "Relation %s", r->name);
	if ((rc = jv_only(o, allowed, CAIRN_ESCHEMA, what)) ||
	    (rc = dup_opt_string(o, "from", &r->from, what)) ||
	    (rc = dup_opt_string(o, "to", &r->to, what)) ||
	    (rc = dup_opt_string(o, "inverse", &r->inverse, what)) ||
	    (rc = dup_opt_string(o, "description", &r->description, what)))
		return rc;
	if (!r->from || !r->to)
		return err_set(CAIRN_ESCHEMA, "%s: \"from\" and \"to\" Kinds are required", what);
	if (r->inverse && !name_valid(r->inverse, CAIRN_MAX_NAME))
		return err_set(CAIRN_ESCHEMA, "%s: inverse name \"%s\" is not valid", what,
			       r->inverse);
	c = jv_get(o, "cardinality");
	if (c) {
		if (c->type != JV_STRING || (strcmp(c->u.s, "one") != 0 && strcmp(c->u.s, "many") != 0))
			return err_set(CAIRN_ESCHEMA,
				       "%s: cardinality must be \"one\" or \"many\"", what);
		r->one = strcmp(c->u.s, "one") == 0;
	}
	return 0;
}

/* Parse a schema document into an unresolved schema. */
static int schema_parse(const char *json, size_t len, schema **out)
{
	static const char *const allowed[] = {"kinds", "relations", "search", NULL};
	arena a = ARENA_INIT;
	const jv *doc, *kinds, *rels, *search;
	schema *s;
	int rc;

	*out = NULL;
	doc = jv_parse(&a, json, len, "schema");
	if (!doc) {
		arena_release(&a);
		return err_code();
	}
	s = schema_new();
	if (!s) {
		arena_release(&a);
		return err_set(CAIRN_ENOMEM, "out of memory");
	}
	if (doc->type != JV_OBJECT) {
		rc = err_set(CAIRN_ESCHEMA, "schema: must be a JSON object");
		goto out;
	}
	if ((rc = jv_only(doc, allowed, CAIRN_ESCHEMA, "schema")))
		goto out;
	if ((search = jv_get(doc, "search")) && (rc = parse_search(search, &s->search)))
		goto out;
	kinds = jv_get(doc, "kinds");
	rels = jv_get(doc, "relations");
	if ((kinds && kinds->type != JV_ARRAY) || (rels && rels->type != JV_ARRAY)) {
		rc = err_set(CAIRN_ESCHEMA, "schema: \"kinds\" and \"relations\" must be arrays");
		goto out;
	}
	if (kinds && kinds->len) {
		s->kinds = cr_calloc(kinds->len, sizeof(kind_def));
		if (!s->kinds) {
			rc = err_set(CAIRN_ENOMEM, "out of memory");
			goto out;
		}
		for (uint32_t i = 0; i < kinds->len; i++) {
			rc = parse_kind(&kinds->u.items[i], &s->kinds[s->n_kinds]);
			s->n_kinds++;
			if (rc)
				goto out;
			for (size_t j = 0; j + 1 < s->n_kinds; j++)
				if (strcmp(s->kinds[j].name, s->kinds[s->n_kinds - 1].name) == 0) {
					rc = err_set(CAIRN_ESCHEMA, "Kind %s is defined twice",
						     s->kinds[j].name);
					goto out;
				}
		}
	}
	if (rels && rels->len) {
		s->rels = cr_calloc(rels->len, sizeof(rel_def));
		if (!s->rels) {
			rc = err_set(CAIRN_ENOMEM, "out of memory");
			goto out;
		}
		for (uint32_t i = 0; i < rels->len; i++) {
			rc = parse_rel(&rels->u.items[i], &s->rels[s->n_rels]);
			s->n_rels++;
			if (rc)
				goto out;
			for (size_t j = 0; j + 1 < s->n_rels; j++)
				if (strcmp(s->rels[j].name, s->rels[s->n_rels - 1].name) == 0) {
					rc = err_set(CAIRN_ESCHEMA, "Relation %s is defined twice",
						     s->rels[j].name);
					goto out;
				}
		}
	}
	rc = 0;
out:
	arena_release(&a);
	if (rc)
		schema_free(s);
	else
		*out = s;
	return rc;
}

/* ------------------------------------------------------------ merging -- */

static int copy_str(char **dst, const char *src)
{
	*dst = NULL;
	if (!src)
		return 0;
	*dst = cr_strdup(src);
	return *dst ? 0 : CAIRN_ENOMEM;
}

static int attr_copy(attr_def *d, const attr_def *s)
{
	*d = *s;
	d->name = d->ref = d->description = NULL;
	d->values = NULL;
	d->n_values = 0;
	if (copy_str(&d->name, s->name) || copy_str(&d->ref, s->ref) ||
	    copy_str(&d->description, s->description))
		return CAIRN_ENOMEM;
	if (s->n_values) {
		d->values = cr_calloc(s->n_values, sizeof(char *));
		if (!d->values)
			return CAIRN_ENOMEM;
		for (size_t i = 0; i < s->n_values; i++) {
			if (copy_str(&d->values[i], s->values[i]))
				return CAIRN_ENOMEM;
			d->n_values++;
		}
	}
	return 0;
}

static int kind_copy(kind_def *d, const kind_def *s, size_t extra)
{
	memset(d, 0, sizeof(*d));
	d->id = s->id;
	if (copy_str(&d->name, s->name) || copy_str(&d->description, s->description))
		return CAIRN_ENOMEM;
	d->attrs = cr_calloc(s->n_attrs + extra, sizeof(attr_def));
	if (!d->attrs)
		return CAIRN_ENOMEM;
	for (size_t i = 0; i < s->n_attrs; i++) {
		if (attr_copy(&d->attrs[i], &s->attrs[i]))
			return CAIRN_ENOMEM;
		d->n_attrs++;
	}
	return 0;
}

static int rel_copy(rel_def *d, const rel_def *s)
{
	*d = *s;
	d->name = d->from = d->to = d->inverse = d->description = NULL;
	if (copy_str(&d->name, s->name) || copy_str(&d->from, s->from) ||
	    copy_str(&d->to, s->to) || copy_str(&d->inverse, s->inverse) ||
	    copy_str(&d->description, s->description))
		return CAIRN_ENOMEM;
	return 0;
}

static int delta_add(schema_delta *d, int what, uint32_t kind, uint32_t attr, uint32_t rel)
{
	schema_delta_item *p;

	if (!d)
		return 0;
	p = cr_reallocarray(d->items, d->n + 1, sizeof(*p));
	if (!p)
		return CAIRN_ENOMEM;
	d->items = p;
	p[d->n].what = what;
	p[d->n].kind = kind;
	p[d->n].attr = attr;
	p[d->n].rel = rel;
	d->n++;
	return 0;
}

/* Merge attribute spec `s` into existing attribute `d` (same name). */
static int attr_merge(attr_def *d, const attr_def *s, uint32_t kind, schema_delta *delta)
{
	int rc = 0;

	if (d->type != s->type) {
		rc = delta_add(delta, DELTA_TYPE, kind, d->id, 0);
		if (!rc && (s->flags & AF_INDEXED))
			rc = delta_add(delta, DELTA_INDEXED, kind, d->id, 0);
	} else if ((s->flags & AF_INDEXED) && !(d->flags & AF_INDEXED)) {
		rc = delta_add(delta, DELTA_INDEXED, kind, d->id, 0);
	}
	if (!rc && (s->flags & AF_REQUIRED) && !(d->flags & AF_REQUIRED))
		rc = delta_add(delta, DELTA_REQUIRED, kind, d->id, 0);
	if (!rc && (s->flags & AF_UNIQUE) && !(d->flags & AF_UNIQUE))
		rc = delta_add(delta, DELTA_UNIQUE, kind, d->id, 0);
	if (!rc && attr_names(s) && (!attr_names(d) || d->type != s->type))
		rc = delta_add(delta, DELTA_NAMES, kind, d->id, 0);
	if (!rc && (s->search != d->search || (s->search > 0 && d->type != s->type)))
		rc = delta_add(delta, DELTA_SEARCH, kind, d->id, 0);
	if (!rc && d->type == AT_ENUM && s->type == AT_ENUM) {
		for (size_t i = 0; i < d->n_values && !rc; i++) {
			size_t j;

			for (j = 0; j < s->n_values; j++)
				if (strcmp(d->values[i], s->values[j]) == 0)
					break;
			if (j == s->n_values)
				rc = delta_add(delta, DELTA_ENUM, kind, d->id, 0);
			if (j == s->n_values)
				break;
		}
	}
	if (!rc && d->type == AT_REF && s->type == AT_REF && strcmp(d->ref, s->ref) != 0)
		rc = delta_add(delta, DELTA_REF, kind, d->id, 0);
	if (rc)
		return rc;
	{
		uint32_t id = d->id;

		attr_release(d);
		rc = attr_copy(d, s);
		d->id = id;
	}
	return rc;
}

static int resolve(schema *s)
{
	for (size_t i = 0; i < s->n_kinds; i++) {
		kind_def *k = &s->kinds[i];

		for (size_t j = 0; j < k->n_attrs; j++) {
			attr_def *a = &k->attrs[j];
			const kind_def *t;

			if (a->type != AT_REF)
				continue;
			t = schema_kind(s, a->ref);
			if (!t)
				return err_set(CAIRN_ESCHEMA,
					       "Kind %s, attribute %s: ref names unknown Kind %s",
					       k->name, a->name, a->ref);
			a->ref_kind = t->id;
		}
	}
	for (size_t i = 0; i < s->n_rels; i++) {
		rel_def *r = &s->rels[i];
		int fany = strcmp(r->from, REL_ANY) == 0, tany = strcmp(r->to, REL_ANY) == 0;
		const kind_def *f = fany ? NULL : schema_kind(s, r->from);
		const kind_def *t = tany ? NULL : schema_kind(s, r->to);

		if ((!f && !fany) || (!t && !tany))
			return err_set(CAIRN_ESCHEMA,
				       "Relation %s: unknown Kind %s (a Kind of the Domain, or \"*\" "
				       "for any Kind)",
				       r->name, !f && !fany ? r->from : r->to);
		r->from_kind = f ? f->id : REL_ANY_KIND;
		r->to_kind = t ? t->id : REL_ANY_KIND;
	}
	return 0;
}

static void serialize(schema *s, buf *b)
{
	buf_put_u8(b, '{');
	if (s->search.set) {
		buf_printf(b, "\"search\":{\"language\":");
		json_quote(b, s->search.language, strlen(s->search.language));
		buf_printf(b, ",\"title_weight\":%.17g,\"k1\":%.17g,\"b\":%.17g,\"typos\":",
			   s->search.title_weight, s->search.k1, s->search.b);
		if (s->search.typo_one)
			buf_printf(b, "{\"one\":%u,\"two\":%u}", s->search.typo_one,
				   s->search.typo_two);
		else
			buf_printf(b, "false");
		buf_printf(b, ",\"stop_words\":[");
		for (size_t at = 0; at < s->search.stop_len;) {
			size_t m = strlen(s->search.stop + at);

			buf_printf(b, "%s", at ? "," : "");
			json_quote(b, s->search.stop + at, m);
			at += m + 1;
		}
		buf_printf(b, "]},");
	}
	buf_put(b, "\"kinds\":[", 9);
	for (size_t i = 0; i < s->n_kinds; i++) {
		kind_def *k = &s->kinds[i];

		buf_printf(b, "%s{\"name\":", i ? "," : "");
		json_quote(b, k->name, strlen(k->name));
		if (k->description) {
			buf_put(b, ",\"description\":", 15);
			json_quote(b, k->description, strlen(k->description));
		}
		buf_put(b, ",\"attributes\":[", 15);
		for (size_t j = 0; j < k->n_attrs; j++) {
			attr_def *a = &k->attrs[j];

			buf_printf(b, "%s{\"name\":", j ? "," : "");
			json_quote(b, a->name, strlen(a->name));
			buf_printf(b, ",\"type\":\"%s\"", attr_type_name(a->type));
			if (a->flags & AF_REQUIRED)
				buf_put(b, ",\"required\":true", 16);
			if (a->flags & AF_UNIQUE)
				buf_put(b, ",\"unique\":true", 14);
			if (a->flags & AF_INDEXED)
				buf_put(b, ",\"indexed\":true", 15);
			if (a->flags & AF_ALIAS)
				buf_put(b, ",\"alias\":true", 13);
			if (a->search > 0)
				buf_printf(b, ",\"search\":%.17g", a->search);
			if (a->type == AT_ENUM) {
				buf_put(b, ",\"values\":[", 11);
				for (size_t v = 0; v < a->n_values; v++) {
					if (v)
						buf_put_u8(b, ',');
					json_quote(b, a->values[v], strlen(a->values[v]));
				}
				buf_put_u8(b, ']');
			}
			if (a->ref) {
				buf_put(b, ",\"ref\":", 7);
				json_quote(b, a->ref, strlen(a->ref));
			}
			if (a->description) {
				buf_put(b, ",\"description\":", 15);
				json_quote(b, a->description, strlen(a->description));
			}
			buf_put_u8(b, '}');
		}
		buf_put(b, "]}", 2);
	}
	buf_put(b, "],\"relations\":[", 15);
	for (size_t i = 0; i < s->n_rels; i++) {
		rel_def *r = &s->rels[i];

		buf_printf(b, "%s{\"name\":", i ? "," : "");
		json_quote(b, r->name, strlen(r->name));
		buf_put(b, ",\"from\":", 8);
		json_quote(b, r->from, strlen(r->from));
		buf_put(b, ",\"to\":", 6);
		json_quote(b, r->to, strlen(r->to));
		buf_printf(b, ",\"cardinality\":\"%s\"", r->one ? "one" : "many");
		if (r->inverse) {
			buf_put(b, ",\"inverse\":", 11);
			json_quote(b, r->inverse, strlen(r->inverse));
		}
		if (r->description) {
			buf_put(b, ",\"description\":", 15);
			json_quote(b, r->description, strlen(r->description));
		}
		buf_put_u8(b, '}');
	}
	buf_put(b, "]}", 2);
}

static int finish(schema *m)
{
	buf b = BUF_INIT;
	int rc = resolve(m);

	if (rc)
		return rc;
	serialize(m, &b);
	buf_cstr(&b);
	if (b.oom) {
		buf_release(&b);
		return err_set(CAIRN_ENOMEM, "out of memory");
	}
	cr_free(m->json);
	m->json = (char *)b.p;
	m->json_len = b.len;
	return 0;
}

int schema_apply_json(const schema *base, const char *json, size_t len, schema **out,
		      schema_delta *delta)
{
	schema *spec = NULL, *m = NULL;
	size_t nk, nr;
	int rc;

	*out = NULL;
	rc = schema_parse(json, len, &spec);
	if (rc)
		return rc;
	m = schema_new();
	nk = (base ? base->n_kinds : 0) + spec->n_kinds;
	nr = (base ? base->n_rels : 0) + spec->n_rels;
	if (!m || (nk && !(m->kinds = cr_calloc(nk, sizeof(kind_def)))) ||
	    (nr && !(m->rels = cr_calloc(nr, sizeof(rel_def))))) {
		rc = err_set(CAIRN_ENOMEM, "out of memory");
		goto out;
	}
	m->search = base ? base->search : spec->search;
	if (spec->search.set) {
		if (strcmp(m->search.language, spec->search.language) != 0 &&
		    (rc = delta_add(delta, DELTA_SEARCH, 0, 0, 0)))
			goto out;
		m->search = spec->search;
	}
	/* Start from a copy of the base, leaving room for the spec's new Attributes. */
	for (size_t i = 0; base && i < base->n_kinds; i++) {
		const kind_def *sk = schema_kind(spec, base->kinds[i].name);

		rc = kind_copy(&m->kinds[i], &base->kinds[i], sk ? sk->n_attrs : 0);
		m->n_kinds++;
		if (rc) {
			rc = err_set(CAIRN_ENOMEM, "out of memory");
			goto out;
		}
	}
	for (size_t i = 0; base && i < base->n_rels; i++) {
		rc = rel_copy(&m->rels[i], &base->rels[i]);
		m->n_rels++;
		if (rc) {
			rc = err_set(CAIRN_ENOMEM, "out of memory");
			goto out;
		}
	}
	for (size_t i = 0; i < spec->n_kinds; i++) {
		kind_def *sk = &spec->kinds[i];
		kind_def *mk = (kind_def *)schema_kind(m, sk->name);

		if (!mk) {
			mk = &m->kinds[m->n_kinds];
			rc = kind_copy(mk, sk, 0);
			m->n_kinds++;
			if (rc) {
				rc = err_set(CAIRN_ENOMEM, "out of memory");
				goto out;
			}
			mk->id = (uint32_t)m->n_kinds;
			continue;
		}
		if (sk->description) {
			cr_free(mk->description);
			if (copy_str(&mk->description, sk->description)) {
				rc = err_set(CAIRN_ENOMEM, "out of memory");
				goto out;
			}
		}
		for (size_t j = 0; j < sk->n_attrs; j++) {
			attr_def *ma = (attr_def *)kind_attr(mk, sk->attrs[j].name);

			if (ma) {
				rc = attr_merge(ma, &sk->attrs[j], mk->id, delta);
			} else {
				ma = &mk->attrs[mk->n_attrs];
				rc = attr_copy(ma, &sk->attrs[j]);
				mk->n_attrs++;
				ma->id = (uint32_t)mk->n_attrs;
				if (!rc && (ma->flags & AF_REQUIRED))
					rc = delta_add(delta, DELTA_REQUIRED, mk->id, ma->id, 0);
			}
			if (rc) {
				rc = err_set(CAIRN_ENOMEM, "out of memory");
				goto out;
			}
		}
	}
	for (size_t i = 0; i < spec->n_rels; i++) {
		rel_def *sr = &spec->rels[i];
		rel_def *mr = (rel_def *)schema_rel(m, sr->name);

		if (!mr) {
			mr = &m->rels[m->n_rels];
			rc = rel_copy(mr, sr);
			m->n_rels++;
			mr->id = (uint32_t)m->n_rels;
		} else {
			uint32_t id = mr->id;

			if (sr->one && !mr->one)
				rc = delta_add(delta, DELTA_CARD_ONE, 0, 0, id);
			/* An end that becomes "*" (any Kind) admits every Link there is. */
			if (!rc && ((strcmp(sr->from, mr->from) && strcmp(sr->from, REL_ANY)) ||
				    (strcmp(sr->to, mr->to) && strcmp(sr->to, REL_ANY))))
				rc = delta_add(delta, DELTA_REL_ENDS, 0, 0, id);
			if (!rc) {
				rel_release(mr);
				rc = rel_copy(mr, sr);
				mr->id = id;
			}
		}
		if (rc) {
			rc = err_set(CAIRN_ENOMEM, "out of memory");
			goto out;
		}
	}
	rc = finish(m);
out:
	schema_free(spec);
	if (rc) {
		schema_free(m);
		schema_delta_release(delta);
		return rc;
	}
	*out = m;
	return 0;
}

int schema_load(const char *json, size_t len, uint64_t rev, schema **out)
{
	int rc = schema_apply_json(NULL, json, len, out, NULL);

	if (rc == CAIRN_ENOMEM)
		return rc;
	if (rc)
		return err_set(CAIRN_ECORRUPT, "stored schema does not parse: %s", cairn_errmsg());
	(*out)->rev = rev;
	return 0;
}

/* ------------------------------------------------------------- values -- */

static int enum_has(const attr_def *a, const char *s, size_t n)
{
	for (size_t i = 0; i < a->n_values; i++)
		if (strlen(a->values[i]) == n && memcmp(a->values[i], s, n) == 0)
			return 1;
	return 0;
}

int attr_value_check(const attr_def *a, const jv *v, char *why, size_t whylen)
{
	int64_t t;

	switch (a->type) {
	case AT_STRING:
	case AT_REF:
		if (v->type != JV_STRING)
			goto type;
		return 0;
	case AT_INT:
		if (v->type != JV_INT)
			goto type;
		return 0;
	case AT_FLOAT:
		if (!jv_is_number(v))
			goto type;
		return 0;
	case AT_BOOL:
		if (!jv_is_bool(v))
			goto type;
		return 0;
	case AT_DATE:
		if (v->type != JV_STRING || date_parse(v->u.s, v->len, &t))
			goto type;
		return 0;
	case AT_DATETIME:
		if (v->type != JV_STRING || time_parse_rfc3339(v->u.s, v->len, &t))
			goto type;
		return 0;
	case AT_ENUM:
		if (v->type != JV_STRING)
			goto type;
		if (!enum_has(a, v->u.s, v->len)) {
			char vals[512];

			snprintf(why, whylen, "\"%.*s\" is not one of the values of enum %s%s",
				 (int)v->len, v->u.s, a->name, schema_hint_enum(a, vals, sizeof(vals)));
			return CAIRN_EENUM;
		}
		return 0;
	case AT_STRINGS:
		if (v->type != JV_ARRAY)
			goto type;
		for (uint32_t i = 0; i < v->len; i++)
			if (v->u.items[i].type != JV_STRING)
				goto type;
		return 0;
	}
type:
	snprintf(why, whylen, "attribute %s must be %s", a->name,
		 a->type == AT_DATE	    ? "a date (YYYY-MM-DD)"
		 : a->type == AT_DATETIME  ? "a datetime (RFC 3339)"
		 : a->type == AT_STRINGS   ? "an array of strings"
		 : a->type == AT_INT	    ? "an integer"
		 : a->type == AT_FLOAT	    ? "a number"
		 : a->type == AT_BOOL	    ? "true or false"
					    : "a string");
	return CAIRN_ETYPE;
}
