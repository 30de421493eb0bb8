/* The one allocator: every allocation of the engine goes through it, so tests can fail the Nth. */
#ifndef CAIRN_UTIL_ALLOC_H
#define CAIRN_UTIL_ALLOC_H

#include <stddef.h>

void *cr_malloc(size_t n);
void *cr_calloc(size_t count, size_t size);
void *cr_realloc(void *p, size_t n);
/* realloc for an array: fails (NULL) on count * size overflow. */
void *cr_reallocarray(void *p, size_t count, size_t size);
void cr_free(void *p);
char *cr_strndup(const char *s, size_t n);
char *cr_strdup(const char *s);

/*
 * Test hook: make the nth allocation from now fail (1 = the next one), and
 * every later one while `sticky`; 0 turns failures off. Not thread-safe.
 */
void alloc_fail_after(long n, int sticky);
/* Allocations that failed because of the hook since it was last set. */
long alloc_failures(void);

#endif
