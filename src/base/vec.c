/*
 * Vector kernels (vec.h). The AVX2 versions sum in eight lanes, so a float
 * result may differ from a sequential loop's in the last bits; an int8 dot
 * product is exact either way.
 */
#include <math.h>

#include "base/vec.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define VEC_X86 1
#endif

static float dot_plain(const float *a, const float *b, size_t n)
{
	float s[8] = {0};
	size_t i = 0;

	for (; i + 8 <= n; i += 8)
		for (int j = 0; j < 8; j++)
			s[j] += a[i + j] * b[i + j];
	for (; i < n; i++)
		s[0] += a[i] * b[i];
	return ((s[0] + s[4]) + (s[1] + s[5])) + ((s[2] + s[6]) + (s[3] + s[7]));
}

static float l2sq_plain(const float *a, const float *b, size_t n)
{
	float s[8] = {0};
	size_t i = 0;

	for (; i + 8 <= n; i += 8)
		for (int j = 0; j < 8; j++)
			s[j] += (a[i + j] - b[i + j]) * (a[i + j] - b[i + j]);
	for (; i < n; i++)
		s[0] += (a[i] - b[i]) * (a[i] - b[i]);
	return ((s[0] + s[4]) + (s[1] + s[5])) + ((s[2] + s[6]) + (s[3] + s[7]));
}

static int32_t dot_i8_plain(const int8_t *a, const int16_t *b, size_t n)
{
	int32_t s = 0;

	for (size_t i = 0; i < n; i++)
		s += (int32_t)a[i] * b[i];
	return s;
}

#ifdef VEC_X86
__attribute__((target("avx2,fma"))) static float dot_avx2(const float *a, const float *b, size_t n)
{
	__m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
	float r[8], t = 0;
	size_t i = 0;

	for (; i + 16 <= n; i += 16) {
		s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
		s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), s1);
	}
	for (; i + 8 <= n; i += 8)
		s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
	_mm256_storeu_ps(r, _mm256_add_ps(s0, s1));
	for (; i < n; i++)
		t += a[i] * b[i];
	return ((r[0] + r[4]) + (r[1] + r[5])) + ((r[2] + r[6]) + (r[3] + r[7])) + t;
}

__attribute__((target("avx2,fma"))) static float l2sq_avx2(const float *a, const float *b,
							  size_t n)
{
	__m256 s0 = _mm256_setzero_ps();
	float r[8], t = 0;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		__m256 d = _mm256_sub_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i));

		s0 = _mm256_fmadd_ps(d, d, s0);
	}
	_mm256_storeu_ps(r, s0);
	for (; i < n; i++)
		t += (a[i] - b[i]) * (a[i] - b[i]);
	return ((r[0] + r[4]) + (r[1] + r[5])) + ((r[2] + r[6]) + (r[3] + r[7])) + t;
}

__attribute__((target("avx2"))) static int32_t dot_i8_avx2(const int8_t *a, const int16_t *b,
							 size_t n)
{
	__m256i s = _mm256_setzero_si256();
	int32_t r[8], t = 0;
	size_t i = 0;

	for (; i + 16 <= n; i += 16) {
		__m256i x = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(a + i)));
		__m256i y = _mm256_loadu_si256((const __m256i *)(b + i));

		s = _mm256_add_epi32(s, _mm256_madd_epi16(x, y));
	}
	_mm256_storeu_si256((__m256i *)r, s);
	for (; i < n; i++)
		t += (int32_t)a[i] * b[i];
	return r[0] + r[1] + r[2] + r[3] + r[4] + r[5] + r[6] + r[7] + t;
}

static int have_avx2(void)
{
	static int known = -1;

	if (known < 0) {
		__builtin_cpu_init();
		known = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
	}
	return known;
}
#endif

float vec_dot(const float *a, const float *b, size_t n)
{
#ifdef VEC_X86
	if (have_avx2())
		return dot_avx2(a, b, n);
#endif
	return dot_plain(a, b, n);
}

float vec_l2sq(const float *a, const float *b, size_t n)
{
#ifdef VEC_X86
	if (have_avx2())
		return l2sq_avx2(a, b, n);
#endif
	return l2sq_plain(a, b, n);
}

int32_t vec_dot_i8(const int8_t *a, const int16_t *b, size_t n)
{
#ifdef VEC_X86
	if (have_avx2())
		return dot_i8_avx2(a, b, n);
#endif
	return dot_i8_plain(a, b, n);
}

float vec_quantize(const float *x, size_t n, int8_t *q)
{
	float m = 0, inv;

	for (size_t i = 0; i < n; i++)
		if (fabsf(x[i]) > m)
			m = fabsf(x[i]);
	if (m == 0 || !isfinite(m)) {
		for (size_t i = 0; i < n; i++)
			q[i] = 0;
		return 0;
	}
	inv = 127.0f / m;
	for (size_t i = 0; i < n; i++) {
		long r = lrintf(x[i] * inv);

		q[i] = (int8_t)(r > 127 ? 127 : r < -127 ? -127 : r);
	}
	return m / 127.0f;
}
