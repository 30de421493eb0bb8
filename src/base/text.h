/* UTF-8 checks, names, time and hashing: small helpers shared by every layer. */
#ifndef CAIRN_UTIL_TEXT_H
#define CAIRN_UTIL_TEXT_H

#include <stddef.h>
#include <stdint.h>

/* 1 if p[0..n-1] is well-formed UTF-8 (no overlongs, no surrogates). */
int utf8_valid(const char *p, size_t n);
/* The length of the valid UTF-8 sequence at p (left bytes there), or 0 when it is not one. */
size_t utf8_seq(const unsigned char *p, size_t left);
/* 1 if name is a valid identifier: 1..max bytes of [A-Za-z0-9_.-], not starting with '.' or '-'. */
int name_valid(const char *name, size_t max);
/* Milliseconds since the Unix epoch. */
int64_t time_now_ms(void);
/* Monotonic nanoseconds. */
uint64_t time_mono_ns(void);
/* Format ms since the epoch as RFC 3339 UTC with milliseconds ("2026-01-02T03:04:05.678Z"). */
void time_format_ms(int64_t ms, char out[48]);
/* Parse an RFC 3339 date-time; returns 0 and ms since the epoch, or -1. */
int time_parse_rfc3339(const char *s, size_t n, int64_t *ms);
/* Parse YYYY-MM-DD; returns 0 and days since 1970-01-01, or -1. */
int date_parse(const char *s, size_t n, int64_t *days);

/*
 * The name of names[0..n-1] closest to s[0..len-1], ignoring case: one edit
 * away in a name of up to 4 bytes, two in a longer one (a swap of
 * neighbours is one), never most of the name; NULL when none is that close
 * or s is longer than 64 bytes. For "did you mean" in messages.
 */
const char *text_closest(const char *s, size_t len, const char *const *names, size_t n);

/* SHA-256 of several byte ranges, incrementally. */
typedef struct sha256_ctx {
	void *md;
} sha256_ctx;
int sha256_init(sha256_ctx *c);
void sha256_update(sha256_ctx *c, const void *p, size_t n);
void sha256_final(sha256_ctx *c, uint8_t out[32]);
/* The SHA-256 of p[0..n-1] in one call; -1 (out zeroed) when the library fails. */
int sha256(const void *p, size_t n, uint8_t out[32]);
void hex_encode(const uint8_t *p, size_t n, char *out);

/* 64-bit hash for in-memory tables (not stored). */
uint64_t hash64(const void *p, size_t n);

#endif
