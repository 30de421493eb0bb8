/*
 * The engine's tunables that tests move: one table, one way to read a
 * value and one documented way to change it (docs/architecture.md,
 * "Tunables"), in place of globals each file exported.
 * A knob holds a count or a time, in [min, max]; its default is what a
 * store runs with. Reading one is a relaxed atomic load: cheap enough for
 * a query's plan, never needed per entry.
 */
#ifndef CAIRN_BASE_KNOB_H
#define CAIRN_BASE_KNOB_H

#include <stdint.h>

/* name, default, min, max, what it sets (and where it is read) */
#define CAIRN_KNOBS(X)                                                                             \
	X(QUERY_SMALL, 256, 1, UINT32_MAX,                                                         \
	  "index entries under which a query collects and sorts rather than walking in order "     \
	  "(query/query.c)")                                                                       \
	X(SEARCH_DENSE_MIN, 1024, 0, UINT32_MAX,                                                   \
	  "postings per container of a search's rarest word from which its walk uses masks "       \
	  "(query/search.c)")                                                                      \
	X(VSEARCH_WHERE_EXACT, 5000, 0, UINT32_MAX,                                                \
	  "Records a vector search's filter admits that are scored exactly (query/vsearch.c)")     \
	X(VSEARCH_WHERE_SET, 20000, 0, UINT32_MAX,                                                 \
	  "Records a vector search's filter admits that are the only candidates the index "        \
	  "scores (query/vsearch.c)")                                                              \
	X(VINDEX_MIN, 10000, 1, UINT32_MAX,                                                        \
	  "vectors a Domain needs before the background builds its index (index/vector)")          \
	X(VINDEX_CATCHUP, 1024, 1, UINT32_MAX,                                                     \
	  "vectors newer than the index before the background adds them (index/vector)")           \
	X(COMPACT_EVERY_MS, 3600000, 1, INT32_MAX,                                                 \
	  "milliseconds between the maintenance thread's compactions, with a retention "           \
	  "(admin/maintain.c)")

enum knob {
#define CAIRN_KNOB_ENUM(name, def, min, max, what) KNOB_##name,
	CAIRN_KNOBS(CAIRN_KNOB_ENUM)
#undef CAIRN_KNOB_ENUM
	KNOB_COUNT
};

/* The knob's value now. Thread-safe. */
uint64_t knob(enum knob k);
/*
 * The one entry point for tests: set the knob named name (lower case, as
 * "query_small") to v, its old value in *old (may be NULL). CAIRN_EINVAL
 * for an unknown name or a value out of the knob's range. Thread-safe; a
 * value takes effect at the next read of it.
 */
int knob_set(const char *name, uint64_t v, uint64_t *old);
/* Every knob back to its default. */
void knob_reset(void);

#endif
