/*
 * Vector kernels: float32 and int8 dot products, with AVX2 versions chosen
 * at run time on x86-64 (every other machine gets the portable loops).
 */
#ifndef CAIRN_UTIL_VEC_H
#define CAIRN_UTIL_VEC_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* sum a[i] * b[i], in float (8 partial sums: not the order of a plain loop). */
float vec_dot(const float *a, const float *b, size_t n);
/* sum (a[i] - b[i])^2, in float (as vec_dot). */
float vec_l2sq(const float *a, const float *b, size_t n);
/* sum a[i] * b[i] of int8 a and an int16 copy of an int8 query b (|b[i]| <= 127). */
int32_t vec_dot_i8(const int8_t *a, const int16_t *b, size_t n);
/*
 * p as floats: p itself when it is 4-byte aligned (LMDB aligns values only
 * to 2 bytes), else a copy of its n floats in tmp.
 */
static inline const float *vec_aligned(const void *p, size_t n, float *tmp)
{
	if (((uintptr_t)p & 3) == 0)
		return (const float *)p;
	memcpy(tmp, p, n * sizeof(float));
	return tmp;
}

/* Quantize x[0..n-1] to q (round(x / scale)), returning scale = max |x| / 127 (0 for all zeros). */
float vec_quantize(const float *x, size_t n, int8_t *q);

#endif
