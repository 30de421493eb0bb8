/* Growable byte buffers and bounds-checked readers. */
#include <stdarg.h>
#include <stdio.h>

#include "cairn.h"
#include "alloc.h"
#include "buf.h"

int buf_reserve(buf *b, size_t n)
{
	size_t cap;
	uint8_t *p;

	if (b->oom)
		return CAIRN_ENOMEM;
	if (n <= b->cap - b->len)
		return 0;
	if (n > SIZE_MAX / 2 - b->len)
		goto out_oom;
	cap = b->cap ? b->cap : 64;
	while (cap - b->len < n)
		cap *= 2;
	p = cr_realloc(b->p, cap);
	if (!p)
		goto out_oom;
	b->p = p;
	b->cap = cap;
	return 0;
out_oom:
	b->oom = 1;
	return CAIRN_ENOMEM;
}

void buf_put(buf *b, const void *p, size_t n)
{
	if (n == 0 || buf_reserve(b, n))
		return;
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

void buf_put_u8(buf *b, uint8_t v)
{
	buf_put(b, &v, 1);
}

void buf_put_be32(buf *b, uint32_t v)
{
	uint8_t t[4];

	be32_put(t, v);
	buf_put(b, t, 4);
}

void buf_put_be64(buf *b, uint64_t v)
{
	uint8_t t[8];

	be64_put(t, v);
	buf_put(b, t, 8);
}

void buf_put_varint(buf *b, uint64_t v)
{
	uint8_t t[10];
	size_t n = 0;

	while (v >= 0x80) {
		t[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	t[n++] = (uint8_t)v;
	buf_put(b, t, n);
}

void buf_put_str(buf *b, const void *p, size_t n)
{
	buf_put_varint(b, n);
	buf_put(b, p, n);
}

void buf_printf(buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || buf_reserve(b, (size_t)n + 1))
		return;
	va_start(ap, fmt);
	vsnprintf((char *)b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void buf_cstr(buf *b)
{
	if (buf_reserve(b, 1))
		return;
	b->p[b->len] = '\0';
}

void buf_release(buf *b)
{
	cr_free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
	b->oom = 0;
}

uint8_t rd_u8(rdr *r)
{
	if (r->end - r->p < 1) {
		r->bad = 1;
		return 0;
	}
	return *r->p++;
}

uint32_t rd_be32(rdr *r)
{
	uint32_t v;

	if (r->end - r->p < 4) {
		r->bad = 1;
		r->p = r->end;
		return 0;
	}
	v = be32_get(r->p);
	r->p += 4;
	return v;
}

uint64_t rd_be64(rdr *r)
{
	uint64_t v;

	if (r->end - r->p < 8) {
		r->bad = 1;
		r->p = r->end;
		return 0;
	}
	v = be64_get(r->p);
	r->p += 8;
	return v;
}

uint64_t rd_varint_long(rdr *r)
{
	uint64_t v = 0;
	unsigned shift = 0;

	while (r->p < r->end && shift < 64) {
		uint8_t c = *r->p++;

		v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return v;
		shift += 7;
	}
	r->bad = 1;
	r->p = r->end;
	return 0;
}

const uint8_t *rd_bytes(rdr *r, size_t n)
{
	const uint8_t *p = r->p;

	if ((size_t)(r->end - r->p) < n) {
		r->bad = 1;
		r->p = r->end;
		return NULL;
	}
	r->p += n;
	return p;
}

const uint8_t *rd_str(rdr *r, size_t *n)
{
	uint64_t len = rd_varint(r);

	if (r->bad || len > (uint64_t)(r->end - r->p)) {
		r->bad = 1;
		r->p = r->end;
		*n = 0;
		return NULL;
	}
	*n = (size_t)len;
	return rd_bytes(r, (size_t)len);
}
