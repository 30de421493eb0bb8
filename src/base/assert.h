/*
 * Assertions of internal invariants: what a function's contract promises
 * its callers inside the engine, never what input may break (input gets an
 * error). They are on in the sanitizer build (make check: SAN=1 defines
 * CAIRN_ASSERTS) and compile to nothing otherwise, so they cost nothing on
 * a hot path of a release build.
 */
#ifndef CAIRN_BASE_ASSERT_H
#define CAIRN_BASE_ASSERT_H

#ifdef CAIRN_ASSERTS
/* Print where cond failed and abort. */
_Noreturn void cr_assert_fail(const char *cond, const char *file, int line, const char *func);
#define CR_ASSERT(cond) ((cond) ? (void)0 : cr_assert_fail(#cond, __FILE__, __LINE__, __func__))
#else
#define CR_ASSERT(cond) ((void)0)
#endif

#endif
