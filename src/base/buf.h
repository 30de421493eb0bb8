/* Growable byte buffers and the fixed-width, big-endian and varint encodings of stored bytes. */
#ifndef CAIRN_UTIL_BUF_H
#define CAIRN_UTIL_BUF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct buf {
	uint8_t *p;
	size_t len;
	size_t cap;
	int oom;	/* set when an append failed: later appends are no-ops */
} buf;

#define BUF_INIT {NULL, 0, 0, 0}

/* Make room for n more bytes. Returns 0 or CAIRN_ENOMEM (and sets oom). */
int buf_reserve(buf *b, size_t n);
void buf_put(buf *b, const void *p, size_t n);
/*
 * Append a string literal (its length known at compile time). "" lit makes
 * anything but a literal fail to compile, where sizeof would give a pointer's.
 */
#define PUTS(b, lit) buf_put((b), "" lit, sizeof(lit) - 1)
void buf_put_u8(buf *b, uint8_t v);
void buf_put_be32(buf *b, uint32_t v);
void buf_put_be64(buf *b, uint64_t v);
void buf_put_varint(buf *b, uint64_t v);
/* A varint length followed by the bytes. */
void buf_put_str(buf *b, const void *p, size_t n);
void buf_printf(buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline void buf_puts(buf *b, const char *s)
{
	buf_put(b, s, strlen(s));
}
/* Append a NUL without counting it in len (for C-string use). */
void buf_cstr(buf *b);
void buf_release(buf *b);
static inline void buf_reset(buf *b)
{
	b->len = 0;
	b->oom = 0;
}

static inline void be32_put(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static inline void be64_put(uint8_t *p, uint64_t v)
{
	be32_put(p, (uint32_t)(v >> 32));
	be32_put(p + 4, (uint32_t)v);
}

static inline uint32_t be32_get(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline uint64_t be64_get(const uint8_t *p)
{
	return (uint64_t)be32_get(p) << 32 | be32_get(p + 4);
}

/*
 * A reader over untrusted stored bytes: every get checks the bounds, and a
 * failed get sets `bad` so a decoder can check once at the end.
 */
typedef struct rdr {
	const uint8_t *p;
	const uint8_t *end;
	int bad;
} rdr;

static inline void rd_init(rdr *r, const void *p, size_t n)
{
	r->p = p;
	r->end = r->p + n;
	r->bad = 0;
}

uint8_t rd_u8(rdr *r);
uint32_t rd_be32(rdr *r);
uint64_t rd_be64(rdr *r);
uint64_t rd_varint_long(rdr *r);
/* A varint; one byte (most of them) inline. */
static inline uint64_t rd_varint(rdr *r)
{
	if (r->p < r->end && !(*r->p & 0x80))
		return *r->p++;
	return rd_varint_long(r);
}
/* A varint length and the bytes; returns a pointer into the input. */
const uint8_t *rd_str(rdr *r, size_t *n);
const uint8_t *rd_bytes(rdr *r, size_t n);

#endif
