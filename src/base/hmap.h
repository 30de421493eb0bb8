/*
 * An open-addressing hash map from byte strings to 64-bit values, with
 * linear probing. Keys are copied into the map. Used for per-commit and
 * per-import state; it is never stored.
 */
#ifndef CAIRN_UTIL_HMAP_H
#define CAIRN_UTIL_HMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct hmap_slot {
	uint64_t hash;	/* 0: empty */
	uint8_t *key;
	size_t len;
	uint64_t val;
} hmap_slot;

typedef struct hmap {
	hmap_slot *slots;
	size_t cap;	/* a power of two, or 0 */
	size_t n;
} hmap;

#define HMAP_INIT {NULL, 0, 0}

/* Find key; returns a pointer to its value or NULL. */
uint64_t *hmap_get(const hmap *m, const void *key, size_t len);
/*
 * Find or insert key (value 0 when new, *isnew set). Returns a pointer to the
 * value, valid until the next insertion, or NULL when out of memory.
 */
uint64_t *hmap_put(hmap *m, const void *key, size_t len, int *isnew);
void hmap_release(hmap *m);
void hmap_clear(hmap *m);

#endif
