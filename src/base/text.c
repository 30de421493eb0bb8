/* UTF-8 validation, identifiers, clocks, RFC 3339 and SHA-256 (through OpenSSL's libcrypto). */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>
#include <xxhash.h>

#include "text.h"

size_t utf8_seq(const unsigned char *p, size_t left)
{
	unsigned c = p[0];

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		return left >= 2 && (p[1] & 0xc0) == 0x80 ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		if (left < 3 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80)
			return 0;
		if ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] > 0x9f))
			return 0; /* overlong, surrogate */
		return 3;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		if (left < 4 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80 ||
		    (p[3] & 0xc0) != 0x80)
			return 0;
		if ((c == 0xf0 && p[1] < 0x90) || (c == 0xf4 && p[1] > 0x8f))
			return 0; /* overlong, above U+10FFFF */
		return 4;
	}
	return 0;
}

int utf8_valid(const char *s, size_t n)
{
	const unsigned char *p, *end;

	if (!n)
		return 1; /* s may be NULL then, and NULL + 0 is undefined */
	p = (const unsigned char *)s;
	end = p + n;
	while (p < end) {
		size_t k;

		if (*p < 0x80) {
			p++;
			continue;
		}
		if (!(k = utf8_seq(p, (size_t)(end - p))))
			return 0;
		p += k;
	}
	return 1;
}

int name_valid(const char *name, size_t max)
{
	size_t n;

	if (!name)
		return 0;
	n = strlen(name);
	if (n == 0 || n > max || name[0] == '.' || name[0] == '-')
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.' || c == '-'))
			return 0;
	}
	return 1;
}

int64_t time_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

uint64_t time_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	int64_t era;
	unsigned yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = (unsigned)(y - era * 400);
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
	int64_t era;
	unsigned doe, yoe, doy, mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = (unsigned)(z - era * 146097);
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	*y = (int64_t)yoe + era * 400;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = doy - (153 * mp + 2) / 5 + 1;
	*m = mp < 10 ? mp + 3 : mp - 9;
	*y += *m <= 2;
}

void time_format_ms(int64_t ms, char out[48])
{
	int64_t days = ms >= 0 ? ms / 86400000 : -((-ms + 86399999) / 86400000);
	int64_t rem = ms - days * 86400000, y;
	unsigned m, d;

	civil_from_days(days, &y, &m, &d);
	snprintf(out, 48, "%04lld-%02u-%02uT%02d:%02d:%02d.%03dZ", (long long)y, m, d,
		 (int)(rem / 3600000), (int)(rem / 60000 % 60), (int)(rem / 1000 % 60),
		 (int)(rem % 1000));
}

static int digits(const char *s, size_t n, int *v)
{
	*v = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		*v = *v * 10 + (s[i] - '0');
	}
	return 0;
}

static int days_in_month(int y, int m)
{
	static const int dm[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};

	if (m == 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0))
		return 29;
	return dm[m - 1];
}

int date_parse(const char *s, size_t n, int64_t *days)
{
	int y, m, d;

	if (n != 10 || s[4] != '-' || s[7] != '-')
		return -1;
	if (digits(s, 4, &y) || digits(s + 5, 2, &m) || digits(s + 8, 2, &d))
		return -1;
	if (m < 1 || m > 12 || d < 1 || d > days_in_month(y, m))
		return -1;
	*days = days_from_civil(y, (unsigned)m, (unsigned)d);
	return 0;
}

int time_parse_rfc3339(const char *s, size_t n, int64_t *ms)
{
	int64_t days, frac = 0;
	int hh, mi, ss, off = 0;
	size_t i;

	if (n < 20 || date_parse(s, 10, &days))
		return -1;
	if ((s[10] != 'T' && s[10] != 't' && s[10] != ' ') || s[13] != ':' || s[16] != ':')
		return -1;
	if (digits(s + 11, 2, &hh) || digits(s + 14, 2, &mi) || digits(s + 17, 2, &ss))
		return -1;
	if (hh > 23 || mi > 59 || ss > 60)
		return -1;
	i = 19;
	if (i < n && s[i] == '.') {
		int scale = 100, nd = 0;

		for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++, nd++) {
			frac += (s[i] - '0') * scale;
			scale /= 10;
		}
		if (nd == 0)
			return -1;
	}
	if (i >= n)
		return -1;
	if (s[i] == 'Z' || s[i] == 'z') {
		i++;
	} else if (s[i] == '+' || s[i] == '-') {
		int oh, om;

		if (n - i != 6 || s[i + 3] != ':' || digits(s + i + 1, 2, &oh) ||
		    digits(s + i + 4, 2, &om) || oh > 23 || om > 59)
			return -1;
		off = (oh * 60 + om) * (s[i] == '+' ? 1 : -1);
		i += 6;
	} else {
		return -1;
	}
	if (i != n)
		return -1;
	*ms = ((days * 86400 + hh * 3600 + mi * 60 + (ss > 59 ? 59 : ss)) - off * 60) * 1000 + frac;
	return 0;
}

int sha256_init(sha256_ctx *c)
{
	EVP_MD_CTX *md = EVP_MD_CTX_new();

	c->md = md;
	if (!md || EVP_DigestInit_ex(md, EVP_sha256(), NULL) != 1) {
		EVP_MD_CTX_free(md);
		c->md = NULL;
		return -1;
	}
	return 0;
}

void sha256_update(sha256_ctx *c, const void *p, size_t n)
{
	if (c->md && n)
		EVP_DigestUpdate(c->md, p, n);
}

int sha256(const void *p, size_t n, uint8_t out[32])
{
	unsigned len = 32;

	if (EVP_Digest(p, n, out, &len, EVP_sha256(), NULL) != 1) {
		memset(out, 0, 32);
		return -1;
	}
	return 0;
}

void sha256_final(sha256_ctx *c, uint8_t out[32])
{
	unsigned len = 32;

	memset(out, 0, 32);
	if (c->md) {
		EVP_DigestFinal_ex(c->md, out, &len);
		EVP_MD_CTX_free(c->md);
		c->md = NULL;
	}
}

void hex_encode(const uint8_t *p, size_t n, char *out)
{
	static const char hx[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = hx[p[i] >> 4];
		out[2 * i + 1] = hx[p[i] & 15];
	}
	out[2 * n] = '\0';
}

uint64_t hash64(const void *p, size_t n)
{
	return XXH3_64bits(p, n);
}

/* ---------------------------------------------------- close names -- */

#define CLOSE_NAME_CAP 64 /* longer names get no suggestion */

static int lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c + 'a' - 'A' : c;
}

/* Edits from a to b (optimal string alignment: a swap of neighbours is one), ignoring case. */
static size_t edits(const char *a, size_t n, const char *b, size_t m)
{
	unsigned char d[CLOSE_NAME_CAP + 1][CLOSE_NAME_CAP + 1];

	for (size_t i = 0; i <= n; i++)
		d[i][0] = (unsigned char)i;
	for (size_t j = 0; j <= m; j++)
		d[0][j] = (unsigned char)j;
	for (size_t i = 1; i <= n; i++) {
		for (size_t j = 1; j <= m; j++) {
			size_t c = lower(a[i - 1]) != lower(b[j - 1]);
			size_t v = (size_t)d[i - 1][j - 1] + c;

			if ((size_t)d[i - 1][j] + 1 < v)
				v = (size_t)d[i - 1][j] + 1;
			if ((size_t)d[i][j - 1] + 1 < v)
				v = (size_t)d[i][j - 1] + 1;
			if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) &&
			    lower(a[i - 2]) == lower(b[j - 1]) && (size_t)d[i - 2][j - 2] + 1 < v)
				v = (size_t)d[i - 2][j - 2] + 1;
			d[i][j] = (unsigned char)v;
		}
	}
	return d[n][m];
}

const char *text_closest(const char *s, size_t len, const char *const *names, size_t n)
{
	const char *best = NULL;
	size_t best_d = (size_t)-1;
	/* One edit in a short name, two in a longer one; never most of the name. */
	size_t max = len <= 4 ? 1 : 2;

	if (!len || len > CLOSE_NAME_CAP)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		size_t m = strlen(names[i]), d;

		if (m > CLOSE_NAME_CAP)
			continue;
		d = edits(s, len, names[i], m);
		if (d < best_d && d <= max && d < len && d < m) {
			best = names[i];
			best_d = d;
		}
	}
	return best;
}
