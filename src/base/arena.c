/* Chunked bump allocator. */
#include <stdint.h>
#include <string.h>

#include "base/alloc.h"
#include "base/arena.h"

struct arena_chunk {
	arena_chunk *next;
	size_t used, cap;
	max_align_t data[];
};

void *arena_alloc(arena *a, size_t n)
{
	arena_chunk *c = a->head;
	void *p;

	n = (n + 7) & ~(size_t)7;
	if (!c || c->cap - c->used < n) {
		size_t cap = a->hint ? a->hint : 1024;

		while (cap < n)
			cap *= 2;
		c = cr_malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->next = a->head;
		c->used = 0;
		c->cap = cap;
		a->head = c;
		if (a->hint < 65536)
			a->hint = cap * 2;
	}
	p = (char *)c->data + c->used;
	c->used += n;
	return p;
}

char *arena_strndup(arena *a, const char *p, size_t n)
{
	char *d = arena_alloc(a, n + 1);

	if (!d)
		return NULL;
	memcpy(d, p, n);
	d[n] = '\0';
	return d;
}

arena_mark arena_mark_get(const arena *a)
{
	arena_mark m = {a->head, a->head ? a->head->used : 0};

	return m;
}

void arena_rewind(arena *a, arena_mark m)
{
	while (a->head && a->head != m.head) {
		arena_chunk *next = a->head->next;

		cr_free(a->head);
		a->head = next;
	}
	if (a->head)
		a->head->used = m.used;
}

void arena_reset(arena *a)
{
	arena_chunk *c = a->head;

	if (!c)
		return;
	for (arena_chunk *o = c->next; o;) {
		arena_chunk *next = o->next;

		cr_free(o);
		o = next;
	}
	c->next = NULL;
	c->used = 0;
}

void arena_release(arena *a)
{
	arena_chunk *c = a->head;

	while (c) {
		arena_chunk *next = c->next;

		cr_free(c);
		c = next;
	}
	a->head = NULL;
	a->hint = 0;
}
