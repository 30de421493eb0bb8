/*
 * The "supply" workload generator: a deterministic, streaming writer of the
 * benchmark dataset (schema, Records, Links, query files).
 *
 * Determinism
 * -----------
 * Every draw comes from xoshiro256** seeded through splitmix64, one stream per
 * purpose (Record values, Links, vectors, reservoirs, query files), so turning
 * vectors on changes nothing but the "vector" members, and the query files do
 * not disturb the data. Values are built from integers (money is integer
 * cents, dates are day numbers printed by hand) and floats are printed by
 * fmt_g6, our own exact "%.6g", so no libc's printf decides a byte. What is
 * left to the platform is libm's log, sin and cos in the Box-Muller draws of
 * the vectors: glibc's are within an ulp and a float32 printed to 6 digits
 * hides that, but a libm that differs by more would change vector digits.
 * Clang is told not to contract a*b+c into fma (GCC does not in C11 mode).
 * Every expression makes at most one draw: C leaves the order in which
 * function arguments (and initializers) are evaluated to the compiler, and
 * gcc and clang do differ. Doubles are assumed IEEE binary64 without excess
 * precision (x86-64, arm64; not 32-bit x87).
 *
 * Memory
 * ------
 * Records are written as they are drawn; nothing is kept per Record. What
 * stays is O(vocabulary): the 40,000 words, their Zipf table, a hash for
 * de-duplication, a count of the titles each word is in (for the common-word
 * queries), 400 cluster centres, and fixed-size reservoirs (Algorithm R) from
 * which the query files are drawn at the end.
 *
 * Shapes
 * ------
 * Kinds are written in dependency order (Supplier, Plant, Part,
 * PurchaseOrder, Contract, RiskFlag), so every ref names an earlier Record.
 * Record counts per Kind are known up front, which lets a Record name any
 * Record of any Kind as a ref or a Link end by index. Title words follow Zipf
 * (s = 1) over the vocabulary, ranked by a seeded shuffle of the word list;
 * a title never repeats a word, so a word's count is the number of titles it
 * is in. Link targets of the hot Relations follow a power law: an index
 * floor(n * u^4) (u uniform) puts the top Supplier behind n^(-1/4) of all
 * supplied_by Links (7% at 40k Suppliers, 2% at 4M), then an affine bijection
 * of the indexes spreads the popular Records over the key range. A Record's
 * targets of one Relation are drawn distinct, so no Link repeats.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gen.h"

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

#define OUT_CAP (1u << 20)     /* bytes of each file's write buffer */
#define VHASH_SLOTS (1u << 17) /* vocabulary hash slots (a power of two, > 3 x GEN_VOCAB) */
#define WORD_MIN 3
#define WORD_MAX 12
#define TITLE_MIN 3
#define TITLE_MAX 8
#define COMMON_WORDS 20 /* "common" = among the 20 words in the most titles */
#define RARE_RANK 1000	/* partial-match words are ranked at least this far down */
#define NOISE 0.05	/* per-dimension noise around a centre: |noise| ~ |centre| */
#define N_FILTERS 9	/* filter query templates */
#define FILTER_RES 128	/* reservoir slots per template (>= GEN_QUERIES / N_FILTERS) */
#define PROGRESS_EVERY 65536u
#define MAX_TARGETS 8 /* most Links of one Relation from one Record */

/* ------------------------------------------------------------- random -- */

typedef struct rng {
	uint64_t s[4];
} rng;

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Seed one stream: streams of one seed are unrelated, and so are seeds. */
static void rng_seed(rng *r, uint64_t seed, uint64_t stream)
{
	uint64_t x = seed;

	x = splitmix64(&x) ^ (stream * 0xd1b54a32d192ed03ull);
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&x);
}

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

/* xoshiro256** (Blackman and Vigna, 2018). */
static inline uint64_t rng_next(rng *r)
{
	uint64_t *s = r->s;
	uint64_t res = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return res;
}

/* Uniform in [0, n), n > 0, without modulo bias. */
static uint64_t rng_below(rng *r, uint64_t n)
{
	uint64_t floor = (0 - n) % n, x;

	do
		x = rng_next(r);
	while (x < floor);
	return x % n;
}

/* Uniform in [lo, hi]. */
static int64_t rng_range(rng *r, int64_t lo, int64_t hi)
{
	return lo + (int64_t)rng_below(r, (uint64_t)(hi - lo) + 1);
}

/* Uniform in [0, 1), 53 bits. */
static double rng_unit(rng *r)
{
	return (double)(rng_next(r) >> 11) * 0x1p-53;
}

/* 1 with probability pct / 100. */
static int rng_pct(rng *r, unsigned pct)
{
	return rng_below(r, 100) < pct;
}

/* Two independent standard normal draws (Box-Muller). */
static void rng_gauss2(rng *r, double *z0, double *z1)
{
	double u1 = (double)((rng_next(r) >> 11) + 1) * 0x1p-53; /* (0, 1]: log is finite */
	double u2 = rng_unit(r);
	double m = sqrt(-2.0 * log(u1));

	*z0 = m * cos(2.0 * M_PI * u2);
	*z1 = m * sin(2.0 * M_PI * u2);
}

/*
 * A distribution over the n Records of one Kind: uniform (power 0), or the
 * power law floor(n * u^power), scrambled by i -> (a * i + b) mod n with a
 * coprime to n, a bijection.
 */
typedef struct pool {
	uint64_t n, a, b;
	int power;
} pool;

static uint64_t gcd64(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

static void pool_init(pool *p, uint64_t n, int power, uint64_t salt)
{
	uint64_t x = salt;

	p->n = n;
	p->power = power;
	p->a = n > 1 ? splitmix64(&x) % n : 0;
	p->b = n > 1 ? splitmix64(&x) % n : 0;
	while (n > 1 && (p->a == 0 || gcd64(p->a, n) != 1))
		p->a = (p->a + 1) % n;
}

static uint64_t pool_pick(rng *r, const pool *p)
{
	double u, v;
	uint64_t i;

	if (p->power == 0)
		return rng_below(r, p->n);
	u = rng_unit(r);
	v = u;
	for (int k = 1; k < p->power; k++)
		v *= u;
	i = (uint64_t)(v * (double)p->n);
	if (i >= p->n)
		i = p->n - 1;
	return (p->a * i + p->b) % p->n; /* a, i < 10^7: no overflow */
}

/*
 * Fill t[have .. want-1] with targets from p, distinct from each other, from
 * t[0 .. have-1] and from self (UINT64_MAX: none). want is cut to what the
 * pool can give. Returns the number of targets in t.
 */
static unsigned pool_pick_distinct(rng *r, const pool *p, uint64_t *t, unsigned have, unsigned want,
				   uint64_t self)
{
	uint64_t avail = p->n - (self < p->n ? 1 : 0);

	if (want > avail)
		want = (unsigned)avail;
	while (have < want) {
		uint64_t x = pool_pick(r, p);
		unsigned tries = 0, j;

		for (;;) {
			for (j = 0; j < have && t[j] != x; j++)
				;
			if (j == have && x != self)
				break;
			/* After 64 repeats (a tiny pool), walk on: it must end as avail > have. */
			x = ++tries < 64 ? pool_pick(r, p) : (x + 1) % p->n;
		}
		t[have++] = x;
	}
	return have;
}

/* ------------------------------------------------------------- output -- */

/* A file written through our own fixed buffer; a full buffer goes out in one fwrite. */
typedef struct out {
	FILE *f;
	char *path;
	char *b;
	size_t n;
	int err; /* errno of the first failed write */
} out;

static char *path_join(const char *dir, const char *name)
{
	size_t a = strlen(dir), b = strlen(name);
	char *p = malloc(a + b + 2);

	if (!p)
		return NULL;
	memcpy(p, dir, a);
	p[a] = '/';
	memcpy(p + a + 1, name, b + 1);
	return p;
}

static int out_open(out *w, const char *dir, const char *name)
{
	memset(w, 0, sizeof(*w));
	w->path = path_join(dir, name);
	w->b = malloc(OUT_CAP);
	if (!w->path || !w->b) {
		fprintf(stderr, "gen: out of memory\n");
		goto out_free;
	}
	w->f = fopen(w->path, "wb");
	if (!w->f) {
		fprintf(stderr, "gen: %s: %s\n", w->path, strerror(errno));
		goto out_free;
	}
	return 0;
out_free:
	free(w->b);
	free(w->path);
	memset(w, 0, sizeof(*w));
	return -1;
}

static void out_flush(out *w)
{
	if (w->n && !w->err && fwrite(w->b, 1, w->n, w->f) != w->n)
		w->err = errno ? errno : EIO;
	w->n = 0;
}

/* Make room for k <= OUT_CAP bytes. */
static inline char *out_room(out *w, size_t k)
{
	if (w->n + k > OUT_CAP)
		out_flush(w);
	return w->b + w->n;
}

static void out_mem(out *w, const char *p, size_t k)
{
	while (k) {
		size_t m = k < OUT_CAP ? k : OUT_CAP;

		memcpy(out_room(w, m), p, m);
		w->n += m;
		p += m;
		k -= m;
	}
}

static void out_str(out *w, const char *s)
{
	out_mem(w, s, strlen(s));
}

static inline void out_ch(out *w, char c)
{
	*out_room(w, 1) = c;
	w->n++;
}

static void out_u64(out *w, uint64_t v)
{
	char t[20];
	int i = 20;

	do {
		t[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	out_mem(w, t + i, (size_t)(20 - i));
}

/* v / 10^dec with exactly dec decimals: out_fixed(w, 12345, 2) is "123.45". */
static void out_fixed(out *w, int64_t v, int dec)
{
	uint64_t u, p = 1;
	char t[8];

	if (v < 0)
		out_ch(w, '-');
	u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
	for (int i = 0; i < dec; i++)
		p *= 10;
	out_u64(w, u / p);
	out_ch(w, '.');
	u %= p;
	for (int i = dec - 1; i >= 0; i--) {
		t[i] = (char)('0' + u % 10);
		u /= 10;
	}
	out_mem(w, t, (size_t)dec);
}

/* Zero-padded decimal of width digits. */
static void out_pad(out *w, unsigned v, int width)
{
	char t[10];

	for (int i = width - 1; i >= 0; i--) {
		t[i] = (char)('0' + v % 10);
		v /= 10;
	}
	out_mem(w, t, (size_t)width);
}

/* Flush and close; 0, or -1 after printing why. Safe on a never-opened out. */
static int out_close(out *w)
{
	int rc = 0;

	if (w->f) {
		out_flush(w);
		if (fclose(w->f) != 0 && !w->err)
			w->err = errno ? errno : EIO;
		if (w->err) {
			fprintf(stderr, "gen: %s: %s\n", w->path, strerror(w->err));
			rc = -1;
		}
	}
	free(w->b);
	free(w->path);
	memset(w, 0, sizeof(*w));
	return rc;
}

/* -------------------------------------------------------------- float -- */

static const double pow10_tab[13] = {1e0, 1e1, 1e2, 1e3,  1e4,	1e5, 1e6,
				     1e7, 1e8, 1e9, 1e10, 1e11, 1e12};

/*
 * Write f as printf's "%.6g" would, into p (at least 32 bytes); returns the
 * length. For 1e-7 <= |f| < 1e6 it is done here, exactly: a float's 24-bit
 * mantissa times 10^k, k <= 12, is below 2^53, so |f| * 10^k is an exact
 * double and rint (ties to even, as glibc rounds) gives the 6 digits. The
 * rest (0, tiny, huge, NaN) goes to snprintf.
 */
static size_t fmt_g6(char *p, float f)
{
	double a = fabs((double)f), s = 0;
	char dg[6], *q = p;
	uint32_t d;
	int e, i, last;

	if (!(a >= 1e-7 && a < 1e6))
		return (size_t)snprintf(p, 32, "%.6g", (double)f);
	for (e = 5; e >= -7; e--) {
		s = a * pow10_tab[5 - e];
		if (s >= 1e5)
			break;
	}
	if (e < -7) /* |f| just below 1e-7 */
		return (size_t)snprintf(p, 32, "%.6g", (double)f);
	s = rint(s); /* 1e5 <= s <= 1e6 */
	if (s >= 1e6) {
		s = 1e5;
		e++;
	}
	d = (uint32_t)s;
	for (i = 5; i >= 0; i--) {
		dg[i] = (char)('0' + d % 10);
		d /= 10;
	}
	for (last = 5; last > 0 && dg[last] == '0'; last--)
		; /* dg[last]: the last significant digit */
	if (f < 0)
		*q++ = '-';
	if (e >= -4 && e < 6) {
		if (e >= 0) {
			for (i = 0; i <= e; i++)
				*q++ = dg[i];
			if (last > e) {
				*q++ = '.';
				for (; i <= last; i++)
					*q++ = dg[i];
			}
		} else {
			*q++ = '0';
			*q++ = '.';
			for (i = -1; i > e; i--)
				*q++ = '0';
			for (i = 0; i <= last; i++)
				*q++ = dg[i];
		}
	} else {
		*q++ = dg[0];
		if (last > 0) {
			*q++ = '.';
			for (i = 1; i <= last; i++)
				*q++ = dg[i];
		}
		*q++ = 'e';
		*q++ = e < 0 ? '-' : '+';
		e = e < 0 ? -e : e;
		*q++ = (char)('0' + e / 10);
		*q++ = (char)('0' + e % 10);
	}
	return (size_t)(q - p);
}

static void out_g6(out *w, float f)
{
	char *p = out_room(w, 32);

	w->n += fmt_g6(p, f);
}

/* -------------------------------------------------------------- dates -- */

/* Days since 1970-01-01 of a civil date (H. Hinnant's algorithm). */
static int64_t days_from_civil(int y, unsigned m, unsigned d)
{
	int64_t era, yoe, doy;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	return era * 146097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719468;
}

static void civil_from_days(int64_t z, int *y, unsigned *m, unsigned *d)
{
	int64_t era, yy;
	unsigned doe, yoe, doy, mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = (unsigned)(z - era * 146097);
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	yy = (int64_t)yoe + era * 400;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = doy - (153 * mp + 2) / 5 + 1;
	*m = mp < 10 ? mp + 3 : mp - 9;
	*y = (int)(yy + (*m <= 2));
}

/* "YYYY-MM-DD" (years 0 .. 9999). */
static void out_date(out *w, int64_t days)
{
	int y;
	unsigned m, d;

	civil_from_days(days, &y, &m, &d);
	out_pad(w, (unsigned)y, 4);
	out_ch(w, '-');
	out_pad(w, m, 2);
	out_ch(w, '-');
	out_pad(w, d, 2);
}

/* "YYYY-MM-DDTHH:MM:SSZ" */
static void out_datetime(out *w, int64_t days, unsigned sec)
{
	out_date(w, days);
	out_ch(w, 'T');
	out_pad(w, sec / 3600, 2);
	out_ch(w, ':');
	out_pad(w, sec / 60 % 60, 2);
	out_ch(w, ':');
	out_pad(w, sec % 60, 2);
	out_ch(w, 'Z');
}

/* A uniform day in [from-01-01, to-12-31]. */
static int64_t rng_day(rng *r, int from, int to)
{
	return rng_range(r, days_from_civil(from, 1, 1), days_from_civil(to, 12, 31));
}

/* ------------------------------------------------------------- tables -- */

/* An enum's values and the weights they are drawn with. */
typedef struct etab {
	const char *const *v;
	const unsigned *w;
	unsigned n;
} etab;

#define ETAB(name, vals, weights)                                                                  \
	static const etab name = {vals, weights, (unsigned)(sizeof(vals) / sizeof(vals[0]))};      \
	_Static_assert(sizeof(vals) / sizeof(vals[0]) == sizeof(weights) / sizeof(weights[0]),     \
		       #name " weights")

static const char *const country_v[] = {"US", "CN", "DE", "JP", "KR", "IN", "MX", "FR", "GB", "IT",
					"VN", "TW", "BR", "CA", "PL", "TH", "MY", "ES", "NL", "TR"};
static const unsigned country_w[] = {18, 16, 10, 8, 6, 6, 5, 4, 4, 3, 3, 3, 2, 2, 2, 2, 2, 1, 1, 2};
ETAB(e_country, country_v, country_w);

static const char *const category_v[] = {"electronics", "fasteners", "bearings",  "castings",
					 "plastics",	"chemicals", "packaging", "sensors",
					 "cables",	"motors",    "valves",	  "pumps"};
static const unsigned category_w[] = {20, 16, 8, 6, 10, 5, 9, 7, 6, 5, 4, 4};
ETAB(e_category, category_v, category_w);

static const char *const status_v[] = {"draft",	   "open",   "approved", "shipped",
				       "received", "closed", "cancelled"};
static const unsigned status_w[] = {5, 20, 15, 15, 20, 20, 5};
ETAB(e_status, status_v, status_w);

static const char *const currency_v[] = {"USD", "EUR", "CNY", "JPY", "GBP", "KRW", "INR", "MXN"};
static const unsigned currency_w[] = {40, 25, 12, 6, 6, 4, 4, 3};
ETAB(e_currency, currency_v, currency_w);

static const char *const ctype_v[] = {"framework", "spot", "consignment", "long_term", "service"};
static const unsigned ctype_w[] = {30, 25, 10, 25, 10};
ETAB(e_ctype, ctype_v, ctype_w);

static const char *const severity_v[] = {"low", "medium", "high", "critical"};
static const unsigned severity_w[] = {50, 30, 15, 5};
ETAB(e_severity, severity_v, severity_w);

static const char *const rcat_v[] = {"financial", "geopolitical", "quality",	  "compliance",
				     "logistics", "cyber",	  "environmental"};
static const unsigned rcat_w[] = {20, 10, 25, 15, 20, 5, 5};
ETAB(e_rcat, rcat_v, rcat_w);

static const char *const certs[] = {"ISO9001",	"ISO14001", "IATF16949", "AS9100",
				    "ISO45001", "ISO27001", "RoHS",	 "REACH"};
static const char *const company_suffix[] = {"Inc",  "Ltd", "GmbH", "SA", "Co",
					     "Corp", "AG",  "BV",   "KK", "Srl"};
static const char *const plant_suffix[] = {"Works", "Plant", "Factory", "Assembly",
					   "Mill",  "Fab",   "Depot"};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static unsigned etab_pick(rng *r, const etab *t)
{
	unsigned total = 0, i;
	uint64_t x;

	for (i = 0; i < t->n; i++)
		total += t->w[i];
	x = rng_below(r, total);
	for (i = 0; x >= t->w[i]; i++)
		x -= t->w[i];
	return i;
}

enum { K_SUPPLIER, K_PLANT, K_PART, K_ORDER, K_CONTRACT, K_RISK, K_COUNT };

static const struct kind_info {
	const char *name, *prefix;
	unsigned share; /* percent of the Records */
} kinds[K_COUNT] = {
	{"Supplier", "S", 40},	     {"Plant", "PL", 15},  {"Part", "P", 30},
	{"PurchaseOrder", "PO", 10}, {"Contract", "C", 4}, {"RiskFlag", "R", 1},
};

const char *gen_category(unsigned i)
{
	return category_v[i % (sizeof(category_v) / sizeof(category_v[0]))];
}

const char *gen_kind_name(int i)
{
	return i >= 0 && i < K_COUNT ? kinds[i].name : NULL;
}

const char *gen_key_prefix(int i)
{
	return i >= 0 && i < K_COUNT ? kinds[i].prefix : NULL;
}

enum {
	R_SUPPLIED_BY,
	R_STOCKED_AT,
	R_ORDERS,
	R_WITH,
	R_FLAGS,
	R_LOCATED_NEAR,
	R_SHIPS_TO,
	R_COUNT
};

static const struct rel_info {
	const char *name;
	int from, to;
} rels[R_COUNT] = {
	{"supplied_by", K_PART, K_SUPPLIER}, {"stocked_at", K_PART, K_PLANT},
	{"orders", K_ORDER, K_PART},	     {"with", K_CONTRACT, K_SUPPLIER},
	{"flags", K_RISK, K_SUPPLIER},	     {"located_near", K_PLANT, K_PLANT},
	{"ships_to", K_SUPPLIER, K_PLANT},
};

#define A_REQ 1u
#define A_UNIQUE 2u
#define A_INDEXED 4u

/* One Attribute of the schema; the Record writers below emit exactly these names. */
typedef struct attr_info {
	const char *name, *type;
	unsigned flags;
	const etab *values; /* enum */
	int ref;	    /* ref: the Kind; else -1 */
} attr_info;

static const attr_info supplier_attrs[] = {
	{"name", "string", A_REQ, NULL, -1},
	{"vat", "string", A_REQ | A_UNIQUE | A_INDEXED, NULL, -1},
	{"country", "enum", A_REQ | A_INDEXED, &e_country, -1},
	{"tier", "int", A_REQ, NULL, -1},
	{"rating", "float", 0, NULL, -1},
	{"since", "date", 0, NULL, -1},
	{"certifications", "strings", 0, NULL, -1},
};
static const attr_info plant_attrs[] = {
	{"name", "string", A_REQ, NULL, -1}, {"country", "enum", A_REQ | A_INDEXED, &e_country, -1},
	{"city", "string", 0, NULL, -1},     {"capacity", "int", 0, NULL, -1},
	{"opened", "date", 0, NULL, -1},     {"automated", "bool", 0, NULL, -1},
};
static const attr_info part_attrs[] = {
	{"name", "string", A_REQ, NULL, -1},
	{"supplier", "ref", A_REQ | A_INDEXED, NULL, K_SUPPLIER},
	{"category", "enum", A_REQ | A_INDEXED, &e_category, -1},
	{"unit_cost", "float", 0, NULL, -1},
	{"weight_kg", "float", 0, NULL, -1},
	{"lead_time_days", "int", 0, NULL, -1},
	{"introduced", "date", 0, NULL, -1},
};
static const attr_info order_attrs[] = {
	{"plant", "ref", A_REQ | A_INDEXED, NULL, K_PLANT},
	{"status", "enum", A_REQ | A_INDEXED, &e_status, -1},
	{"amount", "float", A_REQ | A_INDEXED, NULL, -1},
	{"quantity", "int", A_REQ, NULL, -1},
	{"currency", "enum", 0, &e_currency, -1},
	{"ordered", "date", A_REQ | A_INDEXED, NULL, -1},
	{"due", "date", 0, NULL, -1},
};
static const attr_info contract_attrs[] = {
	{"supplier", "ref", A_REQ, NULL, K_SUPPLIER},
	{"type", "enum", A_REQ, &e_ctype, -1},
	{"value", "float", 0, NULL, -1},
	{"start", "date", A_REQ, NULL, -1},
	{"end", "date", 0, NULL, -1},
	{"auto_renew", "bool", 0, NULL, -1},
	{"signed_at", "datetime", 0, NULL, -1},
};
static const attr_info risk_attrs[] = {
	{"supplier", "ref", A_REQ, NULL, K_SUPPLIER},
	{"severity", "enum", A_REQ | A_INDEXED, &e_severity, -1},
	{"category", "enum", 0, &e_rcat, -1},
	{"score", "float", 0, NULL, -1},
	{"raised", "date", 0, NULL, -1},
	{"note", "string", 0, NULL, -1},
	{"resolved", "bool", 0, NULL, -1},
};

static const struct {
	const attr_info *a;
	size_t n;
} kind_attrs[K_COUNT] = {
	{supplier_attrs, NELEM(supplier_attrs)}, {plant_attrs, NELEM(plant_attrs)},
	{part_attrs, NELEM(part_attrs)},	 {order_attrs, NELEM(order_attrs)},
	{contract_attrs, NELEM(contract_attrs)}, {risk_attrs, NELEM(risk_attrs)},
};

/* ---------------------------------------------------------- vocabulary -- */

typedef struct vocab {
	char *text;    /* the words, NUL-terminated, back to back */
	uint32_t *off; /* off[i]: word of Zipf rank i (0 the most frequent) */
	uint8_t *len;
	uint32_t n;
	uint32_t from_file;
	uint32_t *hash;	  /* VHASH_SLOTS: word index + 1, 0 empty */
	double *cum;	  /* cum[i]: Zipf weight of ranks 0..i */
	uint8_t *typo_ok; /* has a middle swap that makes a non-word */
	uint64_t *count;  /* titles the word is in */
	size_t used;	  /* bytes of text */
} vocab;

static uint64_t fnv1a(const char *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)p[i]) * 0x100000001b3ull;
	return h;
}

static const char *vword(const vocab *v, uint32_t i)
{
	return v->text + v->off[i];
}

/* Slot of word p[0..n-1]: the slot holding it, or the empty slot where it goes. */
static uint32_t vocab_slot(const vocab *v, const char *p, size_t n)
{
	uint32_t i = (uint32_t)fnv1a(p, n) & (VHASH_SLOTS - 1);

	while (v->hash[i]) {
		uint32_t w = v->hash[i] - 1;

		if (v->len[w] == n && memcmp(vword(v, w), p, n) == 0)
			break;
		i = (i + 1) & (VHASH_SLOTS - 1);
	}
	return i;
}

static int vocab_has(const vocab *v, const char *p, size_t n)
{
	return v->hash[vocab_slot(v, p, n)] != 0;
}

/* Add p[0..n-1] (WORD_MIN..WORD_MAX lowercase letters) unless present or full. */
static void vocab_add(vocab *v, const char *p, size_t n)
{
	uint32_t s;

	if (v->n >= GEN_VOCAB)
		return;
	s = vocab_slot(v, p, n);
	if (v->hash[s])
		return;
	v->off[v->n] = (uint32_t)v->used;
	v->len[v->n] = (uint8_t)n;
	memcpy(v->text + v->used, p, n);
	v->text[v->used + n] = '\0';
	v->used += n + 1;
	v->hash[s] = ++v->n;
}

static int word_ok(const char *p, size_t n)
{
	if (n < WORD_MIN || n > WORD_MAX)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (p[i] < 'a' || p[i] > 'z')
			return 0;
	return 1;
}

/* Take the list's lowercase words in file order. 0, or -1 if a named list cannot be read. */
static int vocab_load_file(vocab *v, const char *path, int named)
{
	char line[256];
	FILE *f = fopen(path, "r");
	int skip = 0;

	if (!f) {
		if (!named)
			return 0;
		fprintf(stderr, "gen: %s: %s\n", path, strerror(errno));
		return -1;
	}
	while (v->n < GEN_VOCAB && fgets(line, sizeof(line), f)) {
		size_t n = strlen(line);
		int whole = n > 0 && line[n - 1] == '\n';

		if (skip) { /* the tail of an overlong line */
			skip = !whole;
			continue;
		}
		skip = !whole && !feof(f);
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			n--;
		if (!skip && word_ok(line, n))
			vocab_add(v, line, n);
	}
	if (ferror(f)) {
		fprintf(stderr, "gen: %s: read error\n", path);
		fclose(f);
		return -1;
	}
	fclose(f);
	v->from_file = v->n;
	return 0;
}

/* Fill the vocabulary up with pronounceable words, the same on every run. */
static void vocab_synthesize(vocab *v)
{
	static const char *const onset[] = {
		"b", "c", "d", "f",  "g",  "h",	 "j",  "k",  "l",  "m",	 "n",  "p",  "r",  "s", "t",
		"v", "w", "z", "br", "ch", "cl", "dr", "fl", "gr", "pl", "sh", "st", "th", "tr"};
	static const char *const nucleus[] = {"a", "e", "i", "o", "u", "ai", "ea", "ou", "io"};
	static const char *const coda[] = {"", "", "", "n", "r", "s", "l", "m", "t", "nd", "st"};
	char w[WORD_MAX + 8];
	rng r;

	rng_seed(&r, 0x5eed, 1);
	while (v->n < GEN_VOCAB) {
		unsigned syl = (unsigned)rng_range(&r, 1, 4);
		size_t n = 0;

		for (unsigned s = 0; s < syl && n <= WORD_MAX; s++) {
			const char *parts[3];

			/* One draw a statement: the order of draws must not be the compiler's. */
			parts[0] = onset[rng_below(&r, NELEM(onset))];
			parts[1] = nucleus[rng_below(&r, NELEM(nucleus))];
			parts[2] = s + 1 == syl ? coda[rng_below(&r, NELEM(coda))] : "";

			for (int k = 0; k < 3; k++)
				for (const char *c = parts[k]; *c && n < sizeof(w); c++)
					w[n++] = *c;
		}
		if (word_ok(w, n))
			vocab_add(v, w, n);
	}
}

/* Position i (1 .. len-3) whose swap with i+1 makes a non-word, or 0 (i is the nth such, from 0).
 */
static unsigned typo_pos(const vocab *v, uint32_t wi, unsigned nth)
{
	const char *s = vword(v, wi);
	unsigned n = v->len[wi];
	char t[WORD_MAX + 1];

	for (unsigned i = 1; i + 2 < n; i++) {
		if (s[i] == s[i + 1])
			continue;
		memcpy(t, s, n);
		t[i] = s[i + 1];
		t[i + 1] = s[i];
		if (vocab_has(v, t, n))
			continue;
		if (nth-- == 0)
			return i;
	}
	return 0;
}

static unsigned typo_count(const vocab *v, uint32_t wi)
{
	unsigned k = 0;

	while (typo_pos(v, wi, k))
		k++;
	return k;
}

static void vocab_release(vocab *v)
{
	free(v->text);
	free(v->off);
	free(v->len);
	free(v->hash);
	free(v->cum);
	free(v->typo_ok);
	free(v->count);
	memset(v, 0, sizeof(*v));
}

/*
 * Build the vocabulary: the word list's words, topped up with synthetic ones,
 * shuffled by the seed into Zipf ranks. Returns 0 or -1 (message printed).
 */
static int vocab_build(vocab *v, const gen_options *o)
{
	const char *path = o->words ? o->words : "/usr/share/dict/words";
	rng r;

	memset(v, 0, sizeof(*v));
	v->text = malloc((size_t)GEN_VOCAB * (WORD_MAX + 1));
	v->off = malloc(GEN_VOCAB * sizeof(*v->off));
	v->len = malloc(GEN_VOCAB);
	v->hash = calloc(VHASH_SLOTS, sizeof(*v->hash));
	v->cum = malloc(GEN_VOCAB * sizeof(*v->cum));
	v->typo_ok = malloc(GEN_VOCAB);
	v->count = calloc(GEN_VOCAB, sizeof(*v->count));
	if (!v->text || !v->off || !v->len || !v->hash || !v->cum || !v->typo_ok || !v->count) {
		fprintf(stderr, "gen: out of memory\n");
		return -1;
	}
	if (vocab_load_file(v, path, o->words != NULL))
		return -1;
	vocab_synthesize(v);

	/* Ranks: a seeded Fisher-Yates shuffle, so the list's order (alphabetical) does not rank.
	 */
	rng_seed(&r, o->seed, 2);
	for (uint32_t i = v->n - 1; i > 0; i--) {
		uint32_t j = (uint32_t)rng_below(&r, (uint64_t)i + 1), t = v->off[i];
		uint8_t l = v->len[i];

		v->off[i] = v->off[j];
		v->off[j] = t;
		v->len[i] = v->len[j];
		v->len[j] = l;
	}
	memset(v->hash, 0, VHASH_SLOTS * sizeof(*v->hash));
	for (uint32_t i = 0; i < v->n; i++)
		v->hash[vocab_slot(v, vword(v, i), v->len[i])] = i + 1;

	for (uint32_t i = 0; i < v->n; i++) {
		v->cum[i] = (i ? v->cum[i - 1] : 0) + 1.0 / (double)(i + 1);
		v->typo_ok[i] = v->len[i] >= 5 && typo_pos(v, i, 0) != 0;
	}
	return 0;
}

/* A word rank drawn with Zipf frequencies (s = 1): binary search of the cumulative weights. */
static uint32_t zipf_pick(rng *r, const vocab *v)
{
	double u = rng_unit(r) * v->cum[v->n - 1];
	uint32_t lo = 0, hi = v->n - 1;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (v->cum[mid] > u)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* ----------------------------------------------------------- the run -- */

/* A fixed-size uniform sample of a stream (Algorithm R). */
typedef struct resv {
	uint64_t seen;
	uint32_t cap, n;
	uint64_t *v;
} resv;

static void resv_add(resv *s, rng *r, uint64_t item)
{
	if (s->n < s->cap) {
		s->v[s->n++] = item;
	} else {
		uint64_t j = rng_below(r, s->seen + 1);

		if (j < s->cap)
			s->v[j] = item;
	}
	s->seen++;
}

enum {
	F_COUNTRY,	 /* Supplier country = */
	F_VAT,		 /* Supplier vat = */
	F_CATEGORY,	 /* Part category = */
	F_PART_SUPPLIER, /* Part supplier = */
	F_STATUS,	 /* PurchaseOrder status = */
	F_AMOUNT,	 /* PurchaseOrder amount in [x, 1.1 x] */
	F_ORDER_PLANT,	 /* PurchaseOrder plant = */
	F_ORDERED,	 /* PurchaseOrder ordered in [d, d + 30] */
	F_SEVERITY,	 /* RiskFlag severity = */
};

typedef struct gen {
	const gen_options *o;
	uint64_t n[K_COUNT]; /* Records per Kind */
	rng r_val;	     /* Record values and titles */
	rng r_link;	     /* Link targets and values */
	rng r_vec;	     /* Record vectors */
	rng r_res;	     /* reservoir sampling */
	rng r_query;	     /* query files */
	rng r_phrase;	     /* the phrase reservoir (a stream of its own: the others stay as they were) */
	pool p_sup;	     /* Suppliers, power law 4: Part.supplier, supplied_by, with, flags */
	pool p_plant;	     /* Plants, power law 2: stocked_at, PurchaseOrder.plant */
	pool p_plant_u;	     /* Plants, uniform: ships_to, located_near */
	pool p_part;	     /* Parts, power law 2: orders */
	vocab v;
	double *centres; /* GEN_CLUSTERS x GEN_VECTOR_DIM unit vectors */
	out rec, lnk, vec; /* vec: vectors.f32, with vectors GEN_VECTORS_F32 */
	uint64_t done, links;
	resv q_keys, q_words, q_typos, q_rare, q_filter[N_FILTERS];
	resv q_phrases;	 /* two words in a row of a title: first << 32 | second */
	uint64_t *slots; /* the reservoirs' storage */
} gen;

#define RES_RARE (3 * GEN_QUERIES)

static int gen_init(gen *g, const gen_options *o)
{
	uint64_t rest = o->records;
	uint64_t *p;

	memset(g, 0, sizeof(*g));
	g->o = o;
	for (int k = K_COUNT - 1; k >= 0; k--) {
		g->n[k] = o->records * kinds[k].share / 100;
		rest -= g->n[k];
	}
	g->n[K_SUPPLIER] += rest; /* rounding */
	rng_seed(&g->r_val, o->seed, 10);
	rng_seed(&g->r_link, o->seed, 11);
	rng_seed(&g->r_vec, o->seed, 12);
	rng_seed(&g->r_res, o->seed, 13);
	rng_seed(&g->r_query, o->seed, 14);
	rng_seed(&g->r_phrase, o->seed, 15);
	pool_init(&g->p_sup, g->n[K_SUPPLIER], 4, o->seed ^ 0x5u);
	pool_init(&g->p_plant, g->n[K_PLANT], 2, o->seed ^ 0x9u);
	pool_init(&g->p_plant_u, g->n[K_PLANT], 0, 0);
	pool_init(&g->p_part, g->n[K_PART], 2, o->seed ^ 0xdu);

	g->slots = malloc((4 * GEN_QUERIES + RES_RARE + N_FILTERS * FILTER_RES) * sizeof(uint64_t));
	if (!g->slots) {
		fprintf(stderr, "gen: out of memory\n");
		return -1;
	}
	p = g->slots;
	g->q_keys = (resv){0, GEN_QUERIES, 0, p};
	p += GEN_QUERIES;
	g->q_words = (resv){0, GEN_QUERIES, 0, p};
	p += GEN_QUERIES;
	g->q_typos = (resv){0, GEN_QUERIES, 0, p};
	p += GEN_QUERIES;
	g->q_rare = (resv){0, RES_RARE, 0, p};
	p += RES_RARE;
	for (int i = 0; i < N_FILTERS; i++, p += FILTER_RES)
		g->q_filter[i] = (resv){0, FILTER_RES, 0, p};
	g->q_phrases = (resv){0, GEN_QUERIES, 0, p};
	return vocab_build(&g->v, o);
}

/* A random unit vector, or one near a random centre (centred). */
static void draw_vector(gen *g, rng *r, int centred, float *out_v)
{
	const double *c = centred ? g->centres + rng_below(r, GEN_CLUSTERS) * GEN_VECTOR_DIM : NULL;
	double x[GEN_VECTOR_DIM], ss = 0, inv;

	for (int d = 0; d < GEN_VECTOR_DIM; d += 2) {
		double z0, z1;

		rng_gauss2(r, &z0, &z1);
		x[d] = c ? c[d] + NOISE * z0 : z0;
		x[d + 1] = c ? c[d + 1] + NOISE * z1 : z1;
	}
	for (int d = 0; d < GEN_VECTOR_DIM; d++)
		ss += x[d] * x[d];
	inv = 1.0 / sqrt(ss);
	for (int d = 0; d < GEN_VECTOR_DIM; d++)
		out_v[d] = (float)(x[d] * inv);
}

static int centres_build(gen *g)
{
	float f[GEN_VECTOR_DIM];
	rng r;

	g->centres = malloc((size_t)GEN_CLUSTERS * GEN_VECTOR_DIM * sizeof(double));
	if (!g->centres) {
		fprintf(stderr, "gen: out of memory\n");
		return -1;
	}
	rng_seed(&r, g->o->seed, 3);
	for (int i = 0; i < GEN_CLUSTERS; i++) {
		draw_vector(g, &r, 0, f);
		for (int d = 0; d < GEN_VECTOR_DIM; d++)
			g->centres[i * GEN_VECTOR_DIM + d] = f[d];
	}
	return 0;
}

static void out_vector(out *w, const float *f, char sep)
{
	for (int d = 0; d < GEN_VECTOR_DIM; d++) {
		if (d)
			out_ch(w, sep);
		out_g6(w, f[d]);
	}
}

static void out_key(out *w, int kind, uint64_t i)
{
	out_str(w, kinds[kind].prefix);
	out_ch(w, '-');
	out_u64(w, 1001 + i);
}

/* "Kind:key" */
static void out_end(out *w, int kind, uint64_t i)
{
	out_str(w, kinds[kind].name);
	out_ch(w, ':');
	out_key(w, kind, i);
}

static void out_word(out *w, const vocab *v, uint32_t i, int capital)
{
	const char *s = vword(v, i);

	if (capital) {
		out_ch(w, (char)(s[0] - 'a' + 'A'));
		s++;
	}
	out_str(w, s);
}

/* Start the next member of a values object: `"name":`. */
static void fld(out *w, int *nth, const char *name)
{
	if ((*nth)++)
		out_ch(w, ',');
	out_ch(w, '"');
	out_str(w, name);
	out_str(w, "\":");
}

static void fld_str(out *w, int *nth, const char *name, const char *s)
{
	fld(w, nth, name);
	out_ch(w, '"');
	out_str(w, s);
	out_ch(w, '"');
}

static void fld_enum(gen *g, int *nth, const char *name, const etab *t, unsigned *picked)
{
	unsigned i = etab_pick(&g->r_val, t);

	fld_str(&g->rec, nth, name, t->v[i]);
	if (picked)
		*picked = i;
}

static void fld_ref(out *w, int *nth, const char *name, int kind, uint64_t i)
{
	fld(w, nth, name);
	out_ch(w, '"');
	out_key(w, kind, i);
	out_ch(w, '"');
}

static void fld_date(out *w, int *nth, const char *name, int64_t days)
{
	fld(w, nth, name);
	out_ch(w, '"');
	out_date(w, days);
	out_ch(w, '"');
}

static void fld_bool(out *w, int *nth, const char *name, int b)
{
	fld(w, nth, name);
	out_str(w, b ? "true" : "false");
}

static void fld_int(out *w, int *nth, const char *name, int64_t v)
{
	fld(w, nth, name);
	if (v < 0) {
		out_ch(w, '-');
		v = -v;
	}
	out_u64(w, (uint64_t)v);
}

/*
 * Title: TITLE_MIN..TITLE_MAX distinct Zipf words. Feeds the word counts and
 * the title-word, typo and rare-word reservoirs.
 */
static void write_title(gen *g)
{
	uint32_t t[TITLE_MAX], rare[TITLE_MAX];
	unsigned n = (unsigned)rng_range(&g->r_val, TITLE_MIN, TITLE_MAX), nrare = 0;
	out *w = &g->rec;

	for (unsigned i = 0; i < n; i++) {
		unsigned j;

		do {
			t[i] = zipf_pick(&g->r_val, &g->v);
			for (j = 0; j < i && t[j] != t[i]; j++)
				;
		} while (j < i);
		if (i)
			out_ch(w, ' ');
		out_word(w, &g->v, t[i], 0);
		g->v.count[t[i]]++;
		if (t[i] >= COMMON_WORDS)
			resv_add(&g->q_words, &g->r_res, t[i]);
		if (g->v.typo_ok[t[i]])
			resv_add(&g->q_typos, &g->r_res, t[i]);
		if (t[i] >= RARE_RANK)
			rare[nrare++] = t[i];
		if (i)
			resv_add(&g->q_phrases, &g->r_phrase, (uint64_t)t[i - 1] << 32 | t[i]);
	}
	if (nrare)
		resv_add(&g->q_rare, &g->r_res, rare[rng_below(&g->r_res, nrare)]);
}

static void record_begin(gen *g, int kind, uint64_t i)
{
	out *w = &g->rec;

	out_str(w, "{\"kind\":\"");
	out_str(w, kinds[kind].name);
	out_str(w, "\",\"key\":\"");
	out_key(w, kind, i);
	out_str(w, "\",\"title\":\"");
	write_title(g);
	out_str(w, "\",\"values\":{");
	resv_add(&g->q_keys, &g->r_res, (uint64_t)kind << 32 | i);
}

static void record_end(gen *g)
{
	out *w = &g->rec;

	out_ch(w, '}');
	if (g->o->vectors == GEN_VECTORS_F32) {
		float f[GEN_VECTOR_DIM];

		draw_vector(g, &g->r_vec, 1, f);
		out_mem(&g->vec, (const char *)f, sizeof(f));
	} else if (g->o->vectors) {
		float f[GEN_VECTOR_DIM];

		draw_vector(g, &g->r_vec, 1, f);
		out_str(w, ",\"vector\":[");
		out_vector(w, f, ',');
		out_ch(w, ']');
	}
	out_str(w, "}\n");
	g->done++;
	if (g->o->progress && g->done % PROGRESS_EVERY == 0)
		g->o->progress(g->o->ctx, g->done, g->o->records);
}

/* Links of Relation rel from Record i to targets t[0..n-1]; vname: a value drawn in [lo, hi]. */
static void write_links(gen *g, int rel, uint64_t i, const uint64_t *t, unsigned n,
			const char *vname, int64_t lo, int64_t hi)
{
	out *w = &g->lnk;

	for (unsigned k = 0; k < n; k++) {
		out_str(w, "{\"rel\":\"");
		out_str(w, rels[rel].name);
		out_str(w, "\",\"from\":\"");
		out_end(w, rels[rel].from, i);
		out_str(w, "\",\"to\":\"");
		out_end(w, rels[rel].to, t[k]);
		out_ch(w, '"');
		if (vname) {
			int nth = 0;

			out_str(w, ",\"values\":{");
			fld_int(w, &nth, vname, rng_range(&g->r_link, lo, hi));
			out_ch(w, '}');
		}
		out_str(w, "}\n");
	}
	g->links += n;
}

/* Draw 1..max distinct targets of Relation rel (t[0] given when have is 1) and write them. */
static void links_from(gen *g, int rel, uint64_t i, const pool *p, uint64_t first, unsigned max,
		       const char *vname, int64_t lo, int64_t hi)
{
	uint64_t t[MAX_TARGETS];
	unsigned want = (unsigned)rng_range(&g->r_link, 1, max), have = 0;
	uint64_t self = rels[rel].from == rels[rel].to ? i : UINT64_MAX;

	if (first != UINT64_MAX)
		t[have++] = first;
	have = pool_pick_distinct(&g->r_link, p, t, have, want, self);
	write_links(g, rel, i, t, have, vname, lo, hi);
}

/* VAT: country code and 9 digits, (i * 3^18 + c) mod 10^9, a bijection, so unique per Supplier. */
static void out_vat(out *w, unsigned country, uint64_t i)
{
	out_str(w, country_v[country]);
	out_pad(w, (unsigned)((i * 387420489ull + 123456789ull) % 1000000000ull), 9);
}

static void gen_supplier(gen *g, uint64_t i)
{
	out *w = &g->rec;
	rng *r = &g->r_val;
	unsigned country;
	int nth = 0;

	record_begin(g, K_SUPPLIER, i);
	fld(w, &nth, "name");
	out_ch(w, '"');
	out_word(w, &g->v, zipf_pick(r, &g->v), 1);
	if (rng_pct(r, 50)) {
		out_ch(w, ' ');
		out_word(w, &g->v, zipf_pick(r, &g->v), 1);
	}
	out_ch(w, ' ');
	out_str(w, company_suffix[rng_below(r, NELEM(company_suffix))]);
	out_ch(w, '"');
	country = etab_pick(r, &e_country);
	fld(w, &nth, "vat");
	out_ch(w, '"');
	out_vat(w, country, i);
	out_ch(w, '"');
	fld_str(w, &nth, "country", country_v[country]);
	fld_int(w, &nth, "tier", rng_pct(r, 20) ? 1 : rng_pct(r, 60) ? 2 : 3);
	if (rng_pct(r, 90)) {
		fld(w, &nth, "rating");
		out_fixed(w, rng_range(r, 100, 500), 2);
	}
	if (rng_pct(r, 95))
		fld_date(w, &nth, "since", rng_day(r, 1985, 2024));
	if (rng_pct(r, 75)) {
		unsigned mask = 0, k = (unsigned)rng_range(r, 1, 3), first = 1;

		while (k) {
			unsigned c = (unsigned)rng_below(r, NELEM(certs));

			if (!(mask & 1u << c)) {
				mask |= 1u << c;
				k--;
			}
		}
		fld(w, &nth, "certifications");
		out_ch(w, '[');
		for (unsigned c = 0; c < NELEM(certs); c++) {
			if (!(mask & 1u << c))
				continue;
			if (!first)
				out_ch(w, ',');
			first = 0;
			out_ch(w, '"');
			out_str(w, certs[c]);
			out_ch(w, '"');
		}
		out_ch(w, ']');
	}
	record_end(g);
	resv_add(&g->q_filter[F_COUNTRY], &g->r_res, country);
	resv_add(&g->q_filter[F_VAT], &g->r_res, (uint64_t)country << 32 | i);
	links_from(g, R_SHIPS_TO, i, &g->p_plant_u, UINT64_MAX, 2, NULL, 0, 0);
}

static void gen_plant(gen *g, uint64_t i)
{
	out *w = &g->rec;
	rng *r = &g->r_val;
	int nth = 0;

	record_begin(g, K_PLANT, i);
	fld(w, &nth, "name");
	out_ch(w, '"');
	out_word(w, &g->v, zipf_pick(r, &g->v), 1);
	out_ch(w, ' ');
	out_str(w, plant_suffix[rng_below(r, NELEM(plant_suffix))]);
	out_ch(w, ' ');
	out_u64(w, (uint64_t)rng_range(r, 1, 99));
	out_ch(w, '"');
	fld_enum(g, &nth, "country", &e_country, NULL);
	fld(w, &nth, "city");
	out_ch(w, '"');
	out_word(w, &g->v, (uint32_t)rng_below(r, g->v.n), 1);
	out_ch(w, '"');
	if (rng_pct(r, 90))
		fld_int(w, &nth, "capacity", rng_range(r, 2, 2000) * 50);
	if (rng_pct(r, 90))
		fld_date(w, &nth, "opened", rng_day(r, 1960, 2023));
	fld_bool(w, &nth, "automated", rng_pct(r, 40));
	record_end(g);
	links_from(g, R_LOCATED_NEAR, i, &g->p_plant_u, UINT64_MAX, 3, NULL, 0, 0);
}

static void gen_part(gen *g, uint64_t i)
{
	static const char *const letters = "ABCDEFGHJKLMNPRSTUVWXZ";
	out *w = &g->rec;
	rng *r = &g->r_val;
	uint64_t sup = pool_pick(&g->r_link, &g->p_sup);
	unsigned cat;
	int nth = 0;

	record_begin(g, K_PART, i);
	fld(w, &nth, "name");
	out_ch(w, '"');
	out_word(w, &g->v, zipf_pick(r, &g->v), 1);
	out_ch(w, ' ');
	out_word(w, &g->v, zipf_pick(r, &g->v), 0);
	out_ch(w, ' ');
	out_ch(w, letters[rng_below(r, strlen(letters))]);
	out_ch(w, letters[rng_below(r, strlen(letters))]);
	out_ch(w, '-');
	out_u64(w, (uint64_t)rng_range(r, 100, 9999));
	out_ch(w, '"');
	fld_ref(w, &nth, "supplier", K_SUPPLIER, sup);
	fld_enum(g, &nth, "category", &e_category, &cat);
	if (rng_pct(r, 95)) {
		static const int64_t scale[] = {1, 10, 100, 1000};

		int64_t c = rng_range(r, 10, 999);

		fld(w, &nth, "unit_cost");
		out_fixed(w, c * scale[rng_below(r, 4)], 2);
	}
	if (rng_pct(r, 80)) {
		fld(w, &nth, "weight_kg");
		out_fixed(w, rng_range(r, 1, 50000), 3);
	}
	fld_int(w, &nth, "lead_time_days", rng_range(r, 1, 180));
	if (rng_pct(r, 95))
		fld_date(w, &nth, "introduced", rng_day(r, 2005, 2025));
	record_end(g);
	resv_add(&g->q_filter[F_CATEGORY], &g->r_res, cat);
	resv_add(&g->q_filter[F_PART_SUPPLIER], &g->r_res, sup);
	links_from(g, R_SUPPLIED_BY, i, &g->p_sup, sup, 5, NULL, 0, 0);
	links_from(g, R_STOCKED_AT, i, &g->p_plant, UINT64_MAX, 4, "on_hand", 0, 5000);
}

static void gen_order(gen *g, uint64_t i)
{
	out *w = &g->rec;
	rng *r = &g->r_val;
	uint64_t plant = pool_pick(&g->r_link, &g->p_plant);
	int64_t qty, amount, ordered;
	unsigned status;
	int nth = 0;

	record_begin(g, K_ORDER, i);
	fld_ref(w, &nth, "plant", K_PLANT, plant);
	fld_enum(g, &nth, "status", &e_status, &status);
	qty = rng_range(r, 1, 99);
	qty *= rng_pct(r, 70) ? 1 : 10;
	amount = qty * rng_range(r, 50, 50000); /* cents */
	fld(w, &nth, "amount");
	out_fixed(w, amount, 2);
	fld_int(w, &nth, "quantity", qty);
	if (rng_pct(r, 95))
		fld_enum(g, &nth, "currency", &e_currency, NULL);
	ordered = rng_day(r, 2019, 2025);
	fld_date(w, &nth, "ordered", ordered);
	if (rng_pct(r, 90))
		fld_date(w, &nth, "due", ordered + rng_range(r, 7, 120));
	record_end(g);
	resv_add(&g->q_filter[F_STATUS], &g->r_res, status);
	resv_add(&g->q_filter[F_AMOUNT], &g->r_res, (uint64_t)amount);
	resv_add(&g->q_filter[F_ORDER_PLANT], &g->r_res, plant);
	resv_add(&g->q_filter[F_ORDERED], &g->r_res, (uint64_t)ordered);
	links_from(g, R_ORDERS, i, &g->p_part, UINT64_MAX, 7, "qty", 1, 500);
}

static void gen_contract(gen *g, uint64_t i)
{
	out *w = &g->rec;
	rng *r = &g->r_val;
	uint64_t sup = pool_pick(&g->r_link, &g->p_sup);
	int64_t start;
	int nth = 0;

	record_begin(g, K_CONTRACT, i);
	fld_ref(w, &nth, "supplier", K_SUPPLIER, sup);
	fld_enum(g, &nth, "type", &e_ctype, NULL);
	if (rng_pct(r, 90)) {
		int64_t v = rng_range(r, 1000, 100000) * 100;

		fld(w, &nth, "value");
		out_fixed(w, v * rng_range(r, 1, 100), 2);
	}
	start = rng_day(r, 2015, 2025);
	fld_date(w, &nth, "start", start);
	if (rng_pct(r, 85))
		fld_date(w, &nth, "end", start + rng_range(r, 180, 1825));
	fld_bool(w, &nth, "auto_renew", rng_pct(r, 35));
	if (rng_pct(r, 90)) {
		int64_t day = start - rng_range(r, 1, 60);

		fld(w, &nth, "signed_at");
		out_ch(w, '"');
		out_datetime(w, day, (unsigned)rng_below(r, 86400));
		out_ch(w, '"');
	}
	record_end(g);
	links_from(g, R_WITH, i, &g->p_sup, sup, 2, NULL, 0, 0);
}

static void gen_risk(gen *g, uint64_t i)
{
	out *w = &g->rec;
	rng *r = &g->r_val;
	uint64_t sup = pool_pick(&g->r_link, &g->p_sup);
	unsigned sev;
	int nth = 0;

	record_begin(g, K_RISK, i);
	fld_ref(w, &nth, "supplier", K_SUPPLIER, sup);
	fld_enum(g, &nth, "severity", &e_severity, &sev);
	fld_enum(g, &nth, "category", &e_rcat, NULL);
	fld(w, &nth, "score");
	out_fixed(w, rng_range(r, 0, 1000), 3);
	fld_date(w, &nth, "raised", rng_day(r, 2020, 2025));
	if (rng_pct(r, 80)) {
		unsigned n = (unsigned)rng_range(r, 4, 10);

		fld(w, &nth, "note");
		out_ch(w, '"');
		for (unsigned k = 0; k < n; k++) {
			if (k)
				out_ch(w, ' ');
			out_word(w, &g->v, zipf_pick(r, &g->v), k == 0);
		}
		out_ch(w, '"');
	}
	fld_bool(w, &nth, "resolved", rng_pct(r, 30));
	record_end(g);
	resv_add(&g->q_filter[F_SEVERITY], &g->r_res, sev);
	links_from(g, R_FLAGS, i, &g->p_sup, sup, 2, NULL, 0, 0);
}

/* ------------------------------------------------------------- schema -- */

static void bool_member(out *w, const char *name, int on)
{
	if (!on)
		return;
	out_str(w, ",\"");
	out_str(w, name);
	out_str(w, "\":true");
}

static int write_schema(const char *dir)
{
	out w;

	if (out_open(&w, dir, "schema.json"))
		return -1;
	out_str(&w, "{\n  \"kinds\": [");
	for (int k = 0; k < K_COUNT; k++) {
		out_str(&w, k ? ",\n" : "\n");
		out_str(&w, "    {\"name\": \"");
		out_str(&w, kinds[k].name);
		out_str(&w, "\", \"attributes\": [");
		for (size_t i = 0; i < kind_attrs[k].n; i++) {
			const attr_info *a = &kind_attrs[k].a[i];

			out_str(&w, i ? ",\n" : "\n");
			out_str(&w, "      {\"name\":\"");
			out_str(&w, a->name);
			out_str(&w, "\",\"type\":\"");
			out_str(&w, a->type);
			out_ch(&w, '"');
			bool_member(&w, "required", a->flags & A_REQ);
			bool_member(&w, "unique", a->flags & A_UNIQUE);
			bool_member(&w, "indexed", a->flags & A_INDEXED);
			if (a->values) {
				out_str(&w, ",\"values\":[");
				for (unsigned j = 0; j < a->values->n; j++) {
					out_str(&w, j ? ",\"" : "\"");
					out_str(&w, a->values->v[j]);
					out_ch(&w, '"');
				}
				out_ch(&w, ']');
			}
			if (a->ref >= 0) {
				out_str(&w, ",\"ref\":\"");
				out_str(&w, kinds[a->ref].name);
				out_ch(&w, '"');
			}
			out_ch(&w, '}');
		}
		out_str(&w, "\n    ]}");
	}
	out_str(&w, "\n  ],\n  \"relations\": [");
	for (int i = 0; i < R_COUNT; i++) {
		out_str(&w, i ? ",\n" : "\n");
		out_str(&w, "    {\"name\": \"");
		out_str(&w, rels[i].name);
		out_str(&w, "\", \"from\": \"");
		out_str(&w, kinds[rels[i].from].name);
		out_str(&w, "\", \"to\": \"");
		out_str(&w, kinds[rels[i].to].name);
		out_str(&w, "\", \"cardinality\": \"many\"}");
	}
	out_str(&w, "\n  ]\n}\n");
	return out_close(&w);
}

/* -------------------------------------------------------- query files -- */

static int q_keys(gen *g)
{
	out w;

	if (out_open(&w, g->o->dir, "q_keys.txt"))
		return -1;
	for (uint32_t i = 0; i < g->q_keys.n; i++) {
		int kind = (int)(g->q_keys.v[i] >> 32);

		out_str(&w, kinds[kind].name);
		out_ch(&w, '\t');
		out_key(&w, kind, g->q_keys.v[i] & 0xffffffffu);
		out_ch(&w, '\n');
	}
	return out_close(&w);
}

static int q_title_words(gen *g)
{
	out w;

	if (out_open(&w, g->o->dir, "q_title_words.txt"))
		return -1;
	for (uint32_t i = 0; i < g->q_words.n; i++) {
		out_word(&w, &g->v, (uint32_t)g->q_words.v[i], 0);
		out_ch(&w, '\n');
	}
	return out_close(&w);
}

/* The (up to) COMMON_WORDS words in the most titles, ties to the lower rank; returns how many. */
static unsigned top_words(const vocab *v, uint32_t *top)
{
	unsigned m = 0;

	for (uint32_t i = 0; i < v->n; i++) {
		unsigned j;

		if (!v->count[i] || (m == COMMON_WORDS && v->count[i] <= v->count[top[m - 1]]))
			continue;
		if (m < COMMON_WORDS)
			m++;
		for (j = m - 1; j > 0 && v->count[top[j - 1]] < v->count[i]; j--)
			top[j] = top[j - 1];
		top[j] = i;
	}
	return m;
}

static int q_common(gen *g)
{
	uint32_t top[COMMON_WORDS];
	unsigned m = top_words(&g->v, top);
	out w;

	if (out_open(&w, g->o->dir, "q_common_words.txt"))
		return -1;
	for (unsigned i = 0; m && i < GEN_QUERIES; i++) {
		out_word(&w, &g->v, top[rng_below(&g->r_query, m)], 0);
		out_ch(&w, '\n');
	}
	if (out_close(&w) || out_open(&w, g->o->dir, "q_two_common.txt"))
		return -1;
	for (unsigned i = 0; m >= 2 && i < GEN_QUERIES; i++) {
		unsigned a = (unsigned)rng_below(&g->r_query, m);
		unsigned b = (unsigned)rng_below(&g->r_query, m - 1);

		b += b >= a;
		out_word(&w, &g->v, top[a], 0);
		out_ch(&w, ' ');
		out_word(&w, &g->v, top[b], 0);
		out_ch(&w, '\n');
	}
	return out_close(&w);
}

static int q_typos(gen *g)
{
	out w;

	if (out_open(&w, g->o->dir, "q_typos.txt"))
		return -1;
	for (uint32_t i = 0; i < g->q_typos.n; i++) {
		uint32_t wi = (uint32_t)g->q_typos.v[i];
		const char *s = vword(&g->v, wi);
		unsigned n = g->v.len[wi];
		unsigned p = typo_pos(&g->v, wi,
				      (unsigned)rng_below(&g->r_query, typo_count(&g->v, wi)));
		char t[WORD_MAX + 1];

		memcpy(t, s, n);
		t[p] = s[p + 1];
		t[p + 1] = s[p];
		out_mem(&w, t, n);
		out_ch(&w, '\t');
		out_mem(&w, s, n);
		out_ch(&w, '\n');
	}
	return out_close(&w);
}

/* Two words in a row of a title, quoted: a phrase. */
static int q_phrases(gen *g)
{
	out w;

	if (out_open(&w, g->o->dir, "q_phrases.txt"))
		return -1;
	for (uint32_t i = 0; i < g->q_phrases.n; i++) {
		out_ch(&w, '"');
		out_word(&w, &g->v, (uint32_t)(g->q_phrases.v[i] >> 32), 0);
		out_ch(&w, ' ');
		out_word(&w, &g->v, (uint32_t)g->q_phrases.v[i], 0);
		out_str(&w, "\"\n");
	}
	return out_close(&w);
}

/* Three distinct rare words, from different titles (the reservoir keeps one per Record). */
static int q_partial(gen *g)
{
	const resv *s = &g->q_rare;
	out w;

	if (out_open(&w, g->o->dir, "q_partial.txt"))
		return -1;
	for (unsigned i = 0; s->n >= 3 && i < GEN_QUERIES; i++) {
		uint64_t t[3];
		unsigned k = 0, tries = 0;

		while (k < 3 && tries++ < 1000) {
			uint64_t x = s->v[rng_below(&g->r_query, s->n)];
			unsigned j;

			for (j = 0; j < k && t[j] != x; j++)
				;
			if (j == k)
				t[k++] = x;
		}
		if (k < 3)
			break;
		for (k = 0; k < 3; k++) {
			if (k)
				out_ch(&w, ' ');
			out_word(&w, &g->v, (uint32_t)t[k], 0);
		}
		out_ch(&w, '\n');
	}
	return out_close(&w);
}

static int q_filters(gen *g)
{
	out w;

	if (out_open(&w, g->o->dir, "q_filters.txt"))
		return -1;
	for (unsigned i = 0; i < GEN_QUERIES; i++) {
		unsigned f = i % N_FILTERS;
		const resv *s = &g->q_filter[f];
		uint64_t x;

		if (!s->n)
			continue;
		x = s->v[(i / N_FILTERS) % s->n];
		switch (f) {
		case F_COUNTRY:
			out_str(&w, "Supplier\tcountry\t");
			out_str(&w, country_v[x]);
			break;
		case F_VAT:
			out_str(&w, "Supplier\tvat\t");
			out_vat(&w, (unsigned)(x >> 32), x & 0xffffffffu);
			break;
		case F_CATEGORY:
			out_str(&w, "Part\tcategory\t");
			out_str(&w, category_v[x]);
			break;
		case F_PART_SUPPLIER:
			out_str(&w, "Part\tsupplier\t");
			out_key(&w, K_SUPPLIER, x);
			break;
		case F_STATUS:
			out_str(&w, "PurchaseOrder\tstatus\t");
			out_str(&w, status_v[x]);
			break;
		case F_AMOUNT:
			out_str(&w, "PurchaseOrder\tamount\t");
			out_fixed(&w, (int64_t)x, 2);
			out_ch(&w, '\t');
			out_fixed(&w, (int64_t)(x + x / 10), 2);
			break;
		case F_ORDER_PLANT:
			out_str(&w, "PurchaseOrder\tplant\t");
			out_key(&w, K_PLANT, x);
			break;
		case F_ORDERED:
			out_str(&w, "PurchaseOrder\tordered\t");
			out_date(&w, (int64_t)x);
			out_ch(&w, '\t');
			out_date(&w, (int64_t)x + 30);
			break;
		default:
			out_str(&w, "RiskFlag\tseverity\t");
			out_str(&w, severity_v[x]);
			break;
		}
		out_ch(&w, '\n');
	}
	return out_close(&w);
}

/* Query vectors: fresh draws from the Records' distribution (centre plus noise), not theirs. */
static int q_vectors(gen *g)
{
	float f[GEN_VECTOR_DIM];
	out w;

	if (out_open(&w, g->o->dir, "q_vectors.txt"))
		return -1;
	for (unsigned i = 0; i < GEN_QUERIES; i++) {
		draw_vector(g, &g->r_query, 1, f);
		out_vector(&w, f, ',');
		out_ch(&w, '\n');
	}
	return out_close(&w);
}

/* ---------------------------------------------------------------- run -- */

/* mkdir -p; 0 or -1 (message printed). */
static int make_dirs(const char *dir)
{
	size_t n = strlen(dir);
	char *p = malloc(n + 1);
	struct stat st;

	if (!p) {
		fprintf(stderr, "gen: out of memory\n");
		return -1;
	}
	memcpy(p, dir, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (p[i] != '/' && p[i] != '\0')
			continue;
		p[i] = '\0';
		if (mkdir(p, 0777) != 0 && errno != EEXIST) {
			fprintf(stderr, "gen: %s: %s\n", p, strerror(errno));
			free(p);
			return -1;
		}
		p[i] = i < n ? '/' : '\0';
	}
	free(p);
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "gen: %s: not a directory\n", dir);
		return -1;
	}
	return 0;
}

static void gen_release(gen *g)
{
	out_close(&g->rec);
	out_close(&g->lnk);
	out_close(&g->vec);
	vocab_release(&g->v);
	free(g->centres);
	free(g->slots);
}

int gen_run(const gen_options *o)
{
	static void (*const make[K_COUNT])(gen *, uint64_t) = {
		gen_supplier, gen_plant, gen_part, gen_order, gen_contract, gen_risk,
	};
	gen *g;
	int rc = -1;

	if (!o || !o->dir || !*o->dir) {
		fprintf(stderr, "gen: an output directory is required\n");
		return -1;
	}
	if (o->records < GEN_MIN_RECORDS || o->records > GEN_MAX_RECORDS) {
		fprintf(stderr, "gen: records must be %llu to %llu, not %llu\n", GEN_MIN_RECORDS,
			GEN_MAX_RECORDS, (unsigned long long)o->records);
		return -1;
	}
	g = malloc(sizeof(*g));
	if (!g) {
		fprintf(stderr, "gen: out of memory\n");
		return -1;
	}
	if (gen_init(g, o) || make_dirs(o->dir) || (o->vectors && centres_build(g)) ||
	    write_schema(o->dir) || out_open(&g->rec, o->dir, "records.jsonl") ||
	    out_open(&g->lnk, o->dir, "links.jsonl") ||
	    (o->vectors == GEN_VECTORS_F32 && out_open(&g->vec, o->dir, "vectors.f32")))
		goto out_release;
	for (int k = 0; k < K_COUNT; k++)
		for (uint64_t i = 0; i < g->n[k]; i++)
			make[k](g, i);
	if (out_close(&g->rec) || out_close(&g->lnk) || out_close(&g->vec))
		goto out_release;
	if (q_keys(g) || q_title_words(g) || q_common(g) || q_typos(g) || q_partial(g) ||
	    q_phrases(g) ||
	    q_filters(g) || (o->vectors && q_vectors(g)))
		goto out_release;
	if (o->progress && g->done % PROGRESS_EVERY != 0)
		o->progress(o->ctx, g->done, o->records);
	if (o->stats) {
		memset(o->stats, 0, sizeof(*o->stats));
		o->stats->records = g->done;
		o->stats->links = g->links;
		for (int k = 0; k < K_COUNT; k++)
			o->stats->per_kind[k] = g->n[k];
		o->stats->vocab = g->v.n;
		o->stats->vocab_from_file = g->v.from_file;
	}
	rc = 0;
out_release:
	gen_release(g);
	free(g);
	return rc;
}

size_t gen_indexed_attrs(const char *pairs[][3], size_t cap)
{
	size_t n = 0;

	for (int k = 0; k < K_COUNT; k++)
		for (size_t i = 0; i < kind_attrs[k].n; i++) {
			const attr_info *a = &kind_attrs[k].a[i];

			if (!(a->flags & (A_INDEXED | A_UNIQUE)) && a->ref < 0)
				continue;
			if (n < cap) {
				pairs[n][0] = kinds[k].name;
				pairs[n][1] = a->name;
				pairs[n][2] = a->type;
			}
			n++;
		}
	return n < cap ? n : cap;
}

const char *gen_relation_name(int i)
{
	return i >= 0 && i < R_COUNT ? rels[i].name : NULL;
}

void gen_hood_sql(char *sql, size_t n, const char *p1, const char *p2, const char *vals, int values)
{
	snprintf(sql, n,
		 "WITH h1(k, key) AS (SELECT to_kind, to_key FROM links WHERE from_kind = %1$s AND "
		 "from_key = %2$s UNION SELECT from_kind, from_key FROM links WHERE to_kind = %1$s AND "
		 "to_key = %2$s), "
		 "n1(k, key) AS (SELECT %1$s, %2$s UNION SELECT k, key FROM h1), "
		 "h2(k, key) AS (SELECT l.to_kind, l.to_key FROM n1 JOIN links l ON l.from_kind = n1.k "
		 "AND l.from_key = n1.key UNION SELECT l.from_kind, l.from_key FROM n1 JOIN links l ON "
		 "l.to_kind = n1.k AND l.to_key = n1.key), "
		 "lk(rel, fk, fkey, tk, tkey, vals) AS (SELECT l.rel, l.from_kind, l.from_key, "
		 "l.to_kind, l.to_key, l.vals FROM n1 JOIN links l ON l.from_kind = n1.k AND "
		 "l.from_key = n1.key UNION SELECT l.rel, l.from_kind, l.from_key, l.to_kind, l.to_key, "
		 "l.vals FROM n1 JOIN links l ON l.to_kind = n1.k AND l.to_key = n1.key) "
		 "SELECT 'n', r.kind, r.key, r.title, %4$s%3$s FROM (SELECT k, key FROM n1 UNION "
		 "SELECT k, key FROM h2) n JOIN records r ON r.kind = n.k AND r.key = n.key "
		 "UNION ALL SELECT 'l', l.rel, l.fk || ':' || l.fkey, l.tk || ':' || l.tkey, %5$s%3$s "
		 "FROM lk l",
		 p1, p2, values ? vals : "", values ? "r." : "NULL", values ? "l." : "NULL");
}
