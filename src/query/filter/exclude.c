/*
 * Records left out of a search by the value of one Attribute or by valid
 * time (cairn_exclude): checked, and matched against a Version's stored
 * values by finding the members read, without parsing the others.
 */
#include <string.h>

#include "base/err.h"
#include "base/json.h"
#include "base/text.h"
#include "query/read.h"

#define EXCLUDE_VALUES_MAX 16

/* Does Kind k have name as a string or enum Attribute? */
static int has_status(const kind_def *k, const char *name)
{
	const attr_def *a = k ? kind_attr(k, name) : NULL;

	return a && (a->type == AT_STRING || a->type == AT_ENUM);
}

/* Does Kind k have name as a date or datetime Attribute? */
static int has_time(const kind_def *k, const char *name)
{
	const attr_def *a = k ? kind_attr(k, name) : NULL;

	return a && (a->type == AT_DATE || a->type == AT_DATETIME);
}

#define VALID_FROM(x) ((x)->valid_from ? (x)->valid_from : "valid_from")
#define VALID_TO(x) ((x)->valid_to ? (x)->valid_to : "valid_to")

/* Does a Kind searched (every Kind when there are none) have what x reads? */
static int searched_have(const schema *s, const cairn_exclude *x, const uint32_t *kinds,
			 size_t n_kinds, int time)
{
	size_t n = n_kinds ? n_kinds : s->n_kinds;

	for (size_t i = 0; i < n; i++) {
		const kind_def *k = schema_kind_id(s, n_kinds ? kinds[i] : (uint32_t)(i + 1));

		if (time ? has_time(k, VALID_FROM(x)) || has_time(k, VALID_TO(x))
			 : has_status(k, x->attribute))
			return 1;
	}
	return 0;
}

int exclude_check(cairn_txn *t, const cairn_exclude *x, const uint32_t *kinds, size_t n_kinds,
		  const char *fn)
{
	const schema *s = t->d.s;

	if (!x)
		return 0;
	if (!x->attribute && !x->valid_at_ms)
		return err_set(CAIRN_EINVAL,
			       "%s: exclude needs the Attribute whose values it names, or a "
			       "valid_at_ms",
			       fn);
	if (x->attribute) {
		if (!*x->attribute)
			return err_set(CAIRN_EINVAL, "%s: exclude's Attribute is empty", fn);
		if (!x->n_values || x->n_values > EXCLUDE_VALUES_MAX || !x->values)
			return err_set(CAIRN_EINVAL, "%s: exclude names 1 to %d values", fn,
				       EXCLUDE_VALUES_MAX);
		for (size_t i = 0; i < x->n_values; i++)
			if (!x->values[i])
				return err_set(CAIRN_EINVAL, "%s: exclude value %zu is NULL", fn,
					       i);
		if (!searched_have(s, x, kinds, n_kinds, 0))
			return err_set(CAIRN_EINVAL,
				       "%s: no Kind searched has a string or enum Attribute "
				       "\"%s\" to exclude by: check its name (cairn schema show)",
				       fn, x->attribute);
	} else if (x->n_values || x->values) {
		return err_set(CAIRN_EINVAL, "%s: exclude has values but no Attribute", fn);
	}
	if (x->valid_at_ms && !searched_have(s, x, kinds, n_kinds, 1))
		return err_set(CAIRN_EINVAL,
			       "%s: no Kind searched has a date or datetime Attribute \"%s\" "
			       "or \"%s\" to read a valid time from: search Kinds that record "
			       "when they were true (cairn schema show)",
			       fn, VALID_FROM(x), VALID_TO(x));
	return 0;
}

/* 1 and *ms (since the epoch) when member name of the stored values is a date or time. */
static int member_time(const char *values, size_t len, const char *name, int64_t *ms)
{
	const char *val;
	size_t vl;
	int64_t days;

	if (!json_peek_member(values, len, name, &val, &vl) || vl < 2 || val[0] != '"' ||
	    memchr(val, '\\', vl))
		return 0; /* none, not a string, or escaped (no time is): kept */
	if (time_parse_rfc3339(val + 1, vl - 2, ms) == 0)
		return 1;
	if (date_parse(val + 1, vl - 2, &days) == 0) {
		*ms = days * 86400000;
		return 1;
	}
	return 0;
}

int exclude_match(const cairn_exclude *x, arena *a, const char *values, size_t len, int *out)
{
	const char *val, *s;
	size_t vl, sl;
	arena_mark mark;
	const jv *v;
	int64_t ms;

	*out = 0;
	if (x->valid_at_ms &&
	    ((member_time(values, len, VALID_FROM(x), &ms) && x->valid_at_ms < ms) ||
	     (member_time(values, len, VALID_TO(x), &ms) && x->valid_at_ms >= ms))) {
		*out = 1;
		return 0;
	}
	if (!x->attribute || !json_peek_member(values, len, x->attribute, &val, &vl) || vl < 2 ||
	    val[0] != '"')
		return 0; /* no such member, or not a string: kept */
	s = val + 1;
	sl = vl - 2;
	mark = arena_mark_get(a);
	if (memchr(s, '\\', sl)) { /* an escape: the value as it reads */
		if (!(v = jv_parse(a, val, vl, "values")) || v->type != JV_STRING) {
			arena_rewind(a, mark);
			return err_set(CAIRN_ECORRUPT, "stored values do not parse");
		}
		s = v->u.s;
		sl = v->len;
	}
	for (size_t i = 0; i < x->n_values && !*out; i++)
		*out = strlen(x->values[i]) == sl && memcmp(x->values[i], s, sl) == 0;
	arena_rewind(a, mark);
	return 0;
}

/*
 * The memory schema's rule (docs/memory.md), here because it reads the
 * schema: on a Domain with the Kind Memory, superseded and retracted
 * Records are left out of searches over Kinds with a status.
 */
const cairn_exclude *cairn_memory_exclude(cairn_txn *t, const char *const *kinds, size_t n_kinds,
					  int include_inactive, int64_t valid_at_ms, cairn_exclude *x)
{
	static const char *const inactive[] = {"superseded", "retracted"};
	const schema *s = t ? t->d.s : NULL;
	int found = 0;

	if (!x)
		return NULL;
	memset(x, 0, sizeof(*x));
	x->valid_at_ms = valid_at_ms;
	if (!include_inactive && s && schema_kind(s, "Memory")) {
		if (kinds && n_kinds)
			for (size_t i = 0; i < n_kinds && !found; i++)
				found = kinds[i] && has_status(schema_kind(s, kinds[i]), "status");
		else
			for (uint32_t k = 1; k <= s->n_kinds && !found; k++)
				found = has_status(schema_kind_id(s, k), "status");
	}
	if (found) {
		x->attribute = "status";
		x->values = inactive;
		x->n_values = 2;
	}
	return found || valid_at_ms ? x : NULL;
}

/* Check x for Kind kind (CAIRN_EUNKNOWNKIND when there is none). */
static int check_kind(cairn_txn *t, const cairn_exclude *x, const char *kind, const char *fn)
{
	const kind_def *k = kind ? schema_kind(t->d.s, kind) : NULL;

	if (!k)
		return kind ? err_set(CAIRN_EUNKNOWNKIND, "unknown Kind \"%s\"", kind)
			    : err_set(CAIRN_EINVAL, "no Kind given");
	return exclude_check(t, x, &k->id, 1, fn);
}

int cairn_get_excluding(cairn_txn *t, const char *kind, const char *key, size_t key_len,
			const cairn_exclude *x, cairn_record *out)
{
	cairn_exclude when;
	char at[48];
	int rc, left;

	if (!x || !t)
		return cairn_get(t, kind, key, key_len, out);
	if ((rc = check_kind(t, x, kind, "cairn_get_excluding")) ||
	    (rc = cairn_get(t, kind, key, key_len, out)) ||
	    (rc = exclude_match(x, &t->scratch, out->values, out->values_len, &left)))
		return rc;
	if (!left)
		return 0;
	memset(&when, 0, sizeof(when));
	when.valid_at_ms = x->valid_at_ms;
	when.valid_from = x->valid_from;
	when.valid_to = x->valid_to;
	if (x->valid_at_ms &&
	    (rc = exclude_match(&when, &t->scratch, out->values, out->values_len, &left)) == 0 &&
	    left) {
		time_format_ms(x->valid_at_ms, at);
		return err_set(CAIRN_ENOTFOUND,
			       "%s:%.*s was not true at %s (its %s and %s say when it was): "
			       "read it without a valid time to see it",
			       kind, (int)key_len, key, at, VALID_FROM(x), VALID_TO(x));
	}
	return rc ? rc
		  : err_set(CAIRN_ENOTFOUND,
			    "%s:%.*s is left out by its %s: read it without excluding that", kind,
			    (int)key_len, key, x->attribute);
}

int cairn_page_excluding(cairn_txn *t, const char *kind, const char *after, size_t after_len,
			 const cairn_exclude *x, cairn_record *out, size_t cap, size_t *n)
{
	size_t got, kept = 0;
	int rc, left;

	if (!x || !t || !out || !n)
		return cairn_page(t, kind, after, after_len, out, cap, n);
	*n = 0;
	if (cap == 0 || cap > CAIRN_MAX_PAGE)
		return err_set(CAIRN_EINVAL, "a page holds 1 to %d Records", CAIRN_MAX_PAGE);
	if ((rc = check_kind(t, x, kind, "cairn_page_excluding")))
		return rc;
	/* Each page is read into the room left, and what x keeps moved down. */
	do {
		size_t want = cap - kept, base = kept;

		if ((rc = cairn_page(t, kind, after, after_len, out + base, want, &got)))
			return rc;
		if (got) { /* the key stays valid: it is the transaction's */
			after = out[base + got - 1].key;
			after_len = out[base + got - 1].key_len;
		}
		for (size_t i = 0; i < got; i++) {
			if ((rc = exclude_match(x, &t->scratch, out[base + i].values,
						out[base + i].values_len, &left)))
				return rc;
			if (!left)
				out[kept++] = out[base + i];
		}
		if (got < want)
			break;
	} while (kept < cap);
	*n = kept;
	return 0;
}
