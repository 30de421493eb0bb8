/* Open-addressing hash map (linear probing, load factor at most 1/2). */
#include <string.h>

#include "base/alloc.h"
#include "base/hmap.h"
#include "base/text.h"

static uint64_t hkey(const void *key, size_t len)
{
	uint64_t h = hash64(key, len);

	return h ? h : 1;
}

uint64_t *hmap_get(const hmap *m, const void *key, size_t len)
{
	uint64_t h;
	size_t i;

	if (!m->cap)
		return NULL;
	h = hkey(key, len);
	for (i = h & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		hmap_slot *s = &m->slots[i];

		if (!s->hash)
			return NULL;
		if (s->hash == h && s->len == len && memcmp(s->key, key, len) == 0)
			return &s->val;
	}
}

static int grow(hmap *m)
{
	size_t cap = m->cap ? m->cap * 2 : 16;
	hmap_slot *ns = cr_calloc(cap, sizeof(*ns));

	if (!ns)
		return -1;
	for (size_t i = 0; i < m->cap; i++) {
		hmap_slot *s = &m->slots[i];
		size_t j;

		if (!s->hash)
			continue;
		for (j = s->hash & (cap - 1); ns[j].hash; j = (j + 1) & (cap - 1))
			;
		ns[j] = *s;
	}
	cr_free(m->slots);
	m->slots = ns;
	m->cap = cap;
	return 0;
}

uint64_t *hmap_put(hmap *m, const void *key, size_t len, int *isnew)
{
	uint64_t h;
	size_t i;
	uint8_t *k;

	if (isnew)
		*isnew = 0;
	if ((m->n + 1) * 2 > m->cap && grow(m))
		return NULL;
	h = hkey(key, len);
	for (i = h & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		hmap_slot *s = &m->slots[i];

		if (!s->hash)
			break;
		if (s->hash == h && s->len == len && memcmp(s->key, key, len) == 0)
			return &s->val;
	}
	k = cr_malloc(len);
	if (!k)
		return NULL;
	memcpy(k, key, len);
	m->slots[i].hash = h;
	m->slots[i].key = k;
	m->slots[i].len = len;
	m->slots[i].val = 0;
	m->n++;
	if (isnew)
		*isnew = 1;
	return &m->slots[i].val;
}

void hmap_clear(hmap *m)
{
	for (size_t i = 0; i < m->cap; i++) {
		if (m->slots[i].hash) {
			cr_free(m->slots[i].key);
			m->slots[i].hash = 0;
		}
	}
	m->n = 0;
}

void hmap_release(hmap *m)
{
	hmap_clear(m);
	cr_free(m->slots);
	m->slots = NULL;
	m->cap = 0;
}
