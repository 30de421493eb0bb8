/*
 * Records left out of a search by the value of one Attribute
 * (cairn_exclude): checked, and matched against a Version's stored values
 * by finding the one member, without parsing the others.
 */
#include <string.h>

#include "base/err.h"
#include "base/json.h"
#include "query/read.h"

#define EXCLUDE_VALUES_MAX 16

/* Does Kind k have name as a string or enum Attribute? */
static int has_status(const kind_def *k, const char *name)
{
	const attr_def *a = k ? kind_attr(k, name) : NULL;

	return a && (a->type == AT_STRING || a->type == AT_ENUM);
}

int exclude_check(cairn_txn *t, const cairn_exclude *x, const uint32_t *kinds, size_t n_kinds,
		  const char *fn)
{
	const schema *s = t->d.s;
	int found = 0;

	if (!x)
		return 0;
	if (!x->attribute || !*x->attribute)
		return err_set(CAIRN_EINVAL, "%s: exclude needs the Attribute whose values it names",
			       fn);
	if (!x->n_values || x->n_values > EXCLUDE_VALUES_MAX || !x->values)
		return err_set(CAIRN_EINVAL, "%s: exclude names 1 to %d values", fn,
			       EXCLUDE_VALUES_MAX);
	for (size_t i = 0; i < x->n_values; i++)
		if (!x->values[i])
			return err_set(CAIRN_EINVAL, "%s: exclude value %zu is NULL", fn, i);
	if (n_kinds)
		for (size_t i = 0; i < n_kinds && !found; i++)
			found = has_status(schema_kind_id(s, kinds[i]), x->attribute);
	else
		for (uint32_t k = 1; k <= s->n_kinds && !found; k++)
			found = has_status(schema_kind_id(s, k), x->attribute);
	if (!found)
		return err_set(CAIRN_EINVAL,
			       "%s: no Kind searched has a string or enum Attribute \"%s\" to "
			       "exclude by: check its name (cairn schema show)",
			       fn, x->attribute);
	return 0;
}

int exclude_match(const cairn_exclude *x, arena *a, const char *values, size_t len, int *out)
{
	const char *val, *s;
	size_t vl, sl;
	arena_mark mark;
	const jv *v;

	*out = 0;
	if (!json_peek_member(values, len, x->attribute, &val, &vl) || vl < 2 || val[0] != '"')
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
const cairn_exclude *cairn_memory_exclude(cairn_txn *t, const char *const *kinds, size_t n_kinds)
{
	static const char *const inactive[] = {"superseded", "retracted"};
	static const cairn_exclude memory = {"status", inactive, 2};
	const schema *s = t ? t->d.s : NULL;
	int found = 0;

	if (!s || !schema_kind(s, "Memory"))
		return NULL;
	if (kinds && n_kinds)
		for (size_t i = 0; i < n_kinds && !found; i++)
			found = kinds[i] && has_status(schema_kind(s, kinds[i]), "status");
	else
		for (uint32_t k = 1; k <= s->n_kinds && !found; k++)
			found = has_status(schema_kind_id(s, k), "status");
	return found ? &memory : NULL;
}
