/* The engine's tunables (knob.h): their table, values, and the one way tests set them. */
#include <ctype.h>
#include <stdatomic.h>
#include <string.h>

#include "base/err.h"
#include "base/knob.h"

static const struct {
	const char *name;
	uint64_t def, min, max;
} knobs[KNOB_COUNT] = {
#define CAIRN_KNOB_ROW(name, def, min, max, what) {#name, def, min, max},
	CAIRN_KNOBS(CAIRN_KNOB_ROW)
#undef CAIRN_KNOB_ROW
};

static _Atomic uint64_t value[KNOB_COUNT] = {
#define CAIRN_KNOB_DEF(name, def, min, max, what) def,
	CAIRN_KNOBS(CAIRN_KNOB_DEF)
#undef CAIRN_KNOB_DEF
};

uint64_t knob(enum knob k)
{
	return atomic_load_explicit(&value[k], memory_order_relaxed);
}

/* Does name (lower case) name knob i (its upper-case table name)? */
static int is_named(int i, const char *name)
{
	const char *t = knobs[i].name;

	for (; *t && *name; t++, name++)
		if (tolower((unsigned char)*t) != *name)
			return 0;
	return !*t && !*name;
}

int knob_set(const char *name, uint64_t v, uint64_t *old)
{
	for (int i = 0; name && i < KNOB_COUNT; i++) {
		if (!is_named(i, name))
			continue;
		if (v < knobs[i].min || v > knobs[i].max)
			return err_set(CAIRN_EINVAL, "knob %s is %llu to %llu, not %llu", name,
				       (unsigned long long)knobs[i].min,
				       (unsigned long long)knobs[i].max, (unsigned long long)v);
		v = atomic_exchange_explicit(&value[i], v, memory_order_relaxed);
		if (old)
			*old = v;
		return 0;
	}
	return err_set(CAIRN_EINVAL, "no knob named \"%s\"", name ? name : "(null)");
}

void knob_reset(void)
{
	for (int i = 0; i < KNOB_COUNT; i++)
		atomic_store_explicit(&value[i], knobs[i].def, memory_order_relaxed);
}
