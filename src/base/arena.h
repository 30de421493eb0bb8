/*
 * A bump allocator in chunks: many small allocations that are freed all at
 * once (a change's parsed JSON, a commit's scratch). Allocations are 8-byte
 * aligned. Fails (NULL) only when the engine allocator fails.
 */
#ifndef CAIRN_UTIL_ARENA_H
#define CAIRN_UTIL_ARENA_H

#include <stddef.h>

typedef struct arena_chunk arena_chunk;

typedef struct arena {
	arena_chunk *head;
	size_t hint; /* size of the next chunk */
} arena;

#define ARENA_INIT {NULL, 0}

void *arena_alloc(arena *a, size_t n);
/* A copy of p[0..n-1] followed by a NUL. */
char *arena_strndup(arena *a, const char *p, size_t n);
/* A point to come back to: arena_rewind frees what was allocated after it. */
typedef struct arena_mark {
	arena_chunk *head;
	size_t used;
} arena_mark;

arena_mark arena_mark_get(const arena *a);
void arena_rewind(arena *a, arena_mark m);
/* Forget every allocation but keep the newest (largest) chunk for the next ones. */
void arena_reset(arena *a);
/* Free every chunk. The arena may be used again. */
void arena_release(arena *a);

#endif
