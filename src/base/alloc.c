/* Allocation wrappers with a fault-injection hook for out-of-memory tests. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cairn.h"
#include "alloc.h"

static long fail_countdown;	/* 0: off; else allocations left before one fails */
static int fail_sticky;
static long failures;

static int should_fail(void)
{
	if (fail_countdown == 0)
		return 0;
	if (fail_countdown > 1) {
		fail_countdown--;
		return 0;
	}
	failures++;
	if (!fail_sticky)
		fail_countdown = 0;
	return 1;
}

void alloc_fail_after(long n, int sticky)
{
	fail_countdown = n;
	fail_sticky = sticky;
	failures = 0;
}

long alloc_failures(void)
{
	return failures;
}

void *cr_malloc(size_t n)
{
	if (should_fail())
		return NULL;
	return malloc(n ? n : 1);
}

void *cr_calloc(size_t count, size_t size)
{
	if (should_fail())
		return NULL;
	return calloc(count ? count : 1, size ? size : 1);
}

void *cr_realloc(void *p, size_t n)
{
	if (should_fail())
		return NULL;
	return realloc(p, n ? n : 1);
}

void *cr_reallocarray(void *p, size_t count, size_t size)
{
	if (size && count > SIZE_MAX / size)
		return NULL;
	return cr_realloc(p, count * size);
}

void cr_free(void *p)
{
	free(p);
}

char *cr_strndup(const char *s, size_t n)
{
	char *d = cr_malloc(n + 1);

	if (!d)
		return NULL;
	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

char *cr_strdup(const char *s)
{
	return cr_strndup(s, strlen(s));
}
