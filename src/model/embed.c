/* The built-in embedder: the model file, its conversion, and embedding (embed.h). */
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/analyze.h"
#include "model/embed.h"
#include "base/alloc.h"
#include "base/buf.h"
#include "base/err.h"
#include "base/text.h"

/* ----------------------------------------------------- the source JSON -- */

typedef struct wsrc {
	const char *p, *s, *end;
} wsrc;

static void ws_skip(wsrc *r)
{
	while (r->p < r->end && (*r->p == ' ' || *r->p == '\n' || *r->p == '\r' || *r->p == '\t'))
		r->p++;
}

static int ws_bad(const wsrc *r, const char *what)
{
	return err_set(CAIRN_EJSON, "word vectors: %s at byte %zu", what, (size_t)(r->p - r->s));
}

/* A JSON string into out (at most cap bytes; longer: *n > cap, the rest skipped). */
static int ws_string(wsrc *r, char *out, size_t cap, size_t *n)
{
	*n = 0;
	ws_skip(r);
	if (r->p >= r->end || *r->p != '"')
		return ws_bad(r, "a string expected");
	r->p++;
	while (r->p < r->end && *r->p != '"') {
		unsigned cp = (unsigned char)*r->p++;
		char u[4];
		size_t un = 1;

		u[0] = (char)cp;
		if (cp < 0x20)
			return ws_bad(r, "a control character in a string");
		if (cp == '\\') {
			if (r->p >= r->end)
				break;
			switch (*r->p++) {
			case '"': u[0] = '"'; break;
			case '\\': u[0] = '\\'; break;
			case '/': u[0] = '/'; break;
			case 'b': u[0] = '\b'; break;
			case 'f': u[0] = '\f'; break;
			case 'n': u[0] = '\n'; break;
			case 'r': u[0] = '\r'; break;
			case 't': u[0] = '\t'; break;
			case 'u': {
				unsigned v = 0;

				for (int i = 0; i < 4; i++) {
					int c = r->p < r->end ? *r->p++ : 0;

					v <<= 4;
					if (c >= '0' && c <= '9')
						v |= (unsigned)(c - '0');
					else if ((c | 32) >= 'a' && (c | 32) <= 'f')
						v |= (unsigned)((c | 32) - 'a' + 10);
					else
						return ws_bad(r, "a bad \\u escape");
				}
				if (v >= 0xd800 && v < 0xe000)
					v = 0xfffd; /* a surrogate: the replacement character */
				if (v < 0x80) {
					u[0] = (char)v;
				} else if (v < 0x800) {
					u[0] = (char)(0xc0 | v >> 6);
					u[1] = (char)(0x80 | (v & 0x3f));
					un = 2;
				} else {
					u[0] = (char)(0xe0 | v >> 12);
					u[1] = (char)(0x80 | ((v >> 6) & 0x3f));
					u[2] = (char)(0x80 | (v & 0x3f));
					un = 3;
				}
				break;
			}
			default:
				return ws_bad(r, "a bad escape");
			}
		}
		if (*n + un <= cap)
			memcpy(out + *n, u, un);
		*n += un;
	}
	if (r->p >= r->end)
		return ws_bad(r, "an unterminated string");
	r->p++;
	return 0;
}

static int ws_char(wsrc *r, char c, const char *what)
{
	ws_skip(r);
	if (r->p >= r->end || *r->p != c)
		return ws_bad(r, what);
	r->p++;
	return 0;
}

static int ws_number(wsrc *r, double *out)
{
	char tmp[64];
	size_t n = 0;
	char *e;

	ws_skip(r);
	while (r->p + n < r->end && n < sizeof(tmp) - 1 &&
	       strchr("0123456789+-.eE", r->p[n]) && r->p[n])
		n++;
	memcpy(tmp, r->p, n);
	tmp[n] = '\0';
	errno = 0;
	*out = strtod(tmp, &e);
	if (!n || e != tmp + n || errno || !isfinite(*out))
		return ws_bad(r, "a number expected");
	r->p += n;
	return 0;
}

/* Skip one JSON value (of the members the parser does not read). */
static int ws_skip_value(wsrc *r, int depth)
{
	char s[1];
	size_t n;
	double d;

	ws_skip(r);
	if (r->p >= r->end)
		return ws_bad(r, "a value expected");
	if (depth > 64)
		return ws_bad(r, "too deep");
	switch (*r->p) {
	case '"':
		return ws_string(r, s, 0, &n);
	case '[':
	case '{': {
		char close = *r->p == '[' ? ']' : '}';
		int obj = close == '}', first = 1, rc;

		r->p++;
		for (;;) {
			ws_skip(r);
			if (r->p < r->end && *r->p == close) {
				r->p++;
				return 0;
			}
			if (!first && (rc = ws_char(r, ',', "',' expected")))
				return rc;
			first = 0;
			if (obj && ((rc = ws_string(r, s, 0, &n)) || (rc = ws_char(r, ':', "':' expected"))))
				return rc;
			if ((rc = ws_skip_value(r, depth + 1)))
				return rc;
		}
	}
	default:
		if ((size_t)(r->end - r->p) >= 4 &&
		    (!memcmp(r->p, "true", 4) || !memcmp(r->p, "null", 4))) {
			r->p += 4;
			return 0;
		}
		if ((size_t)(r->end - r->p) >= 5 && !memcmp(r->p, "false", 5)) {
			r->p += 5;
			return 0;
		}
		return ws_number(r, &d);
	}
}

int emb_parse_wink(const char *p, size_t n, uint32_t *dim, emb_word_fn fn, void *ctx)
{
	wsrc r = {p, p, p + n};
	float *v = NULL;
	int rc, first = 1, seen_vectors = 0;

	*dim = 0;
	if ((rc = ws_char(&r, '{', "an object expected")))
		return rc;
	for (;;) {
		char name[32];
		size_t nn;

		ws_skip(&r);
		if (r.p < r.end && *r.p == '}')
			break;
		if ((!first && (rc = ws_char(&r, ',', "',' expected"))) ||
		    (rc = ws_string(&r, name, sizeof(name), &nn)) ||
		    (rc = ws_char(&r, ':', "':' expected")))
			goto out;
		first = 0;
		if (nn == 10 && !memcmp(name, "dimensions", 10)) {
			double d;

			if ((rc = ws_number(&r, &d)))
				goto out;
			if (d < 1 || d > EMB_DIM_MAX || d != floor(d) || *dim) {
				rc = ws_bad(&r, "dimensions is 1 to 1024, once");
				goto out;
			}
			*dim = (uint32_t)d;
		} else if (nn == 7 && !memcmp(name, "vectors", 7)) {
			int firstw = 1;

			if (!*dim) {
				rc = ws_bad(&r, "vectors before dimensions");
				goto out;
			}
			if (seen_vectors++ || (rc = ws_char(&r, '{', "vectors is an object")))
				goto out;
			if (!(v = cr_malloc((*dim + 2) * sizeof(*v)))) {
				rc = err_set(CAIRN_ENOMEM, "out of memory");
				goto out;
			}
			for (;;) {
				char w[EMB_WORD_MAX];
				size_t wn;

				ws_skip(&r);
				if (r.p < r.end && *r.p == '}') {
					r.p++;
					break;
				}
				if ((!firstw && (rc = ws_char(&r, ',', "',' expected"))) ||
				    (rc = ws_string(&r, w, sizeof(w), &wn)) ||
				    (rc = ws_char(&r, ':', "':' expected")) ||
				    (rc = ws_char(&r, '[', "a vector is an array")))
					goto out;
				firstw = 0;
				/* dim components, the L2 norm, the rank */
				for (uint32_t i = 0; i < *dim + 2; i++) {
					double d;

					if ((i && (rc = ws_char(&r, ',', "',' expected"))) ||
					    (rc = ws_number(&r, &d)))
						goto out;
					if (fabs(d) > FLT_MAX) {
						rc = ws_bad(&r, "a number out of a float's range");
						goto out;
					}
					v[i] = (float)d;
				}
				if ((rc = ws_char(&r, ']', "a vector of dimensions + 2 numbers")))
					goto out;
				if (v[*dim + 1] < 0 || v[*dim + 1] > (float)UINT32_MAX) {
					rc = ws_bad(&r, "a rank out of range");
					goto out;
				}
				if (wn && wn <= sizeof(w) && utf8_valid(w, wn) &&
				    (rc = fn(ctx, w, wn, v, (uint32_t)v[*dim + 1])))
					goto out;
			}
		} else if ((rc = ws_skip_value(&r, 0))) {
			goto out;
		}
	}
	if (!seen_vectors)
		rc = ws_bad(&r, "no vectors");
out:
	cr_free(v);
	return rc;
}

/* ------------------------------------------------------- the model file -- */

/*
 * Little-endian, at these offsets:
 *   0   "CAIRN-EMB\0"      16  u32 n_words       28  u32 model id length
 *   10  u16 version        20  u32 flags (0)     32  model id, 64 bytes
 *   12  u32 dim            24  f32 SIF a         96  f32 pc[dim] (unit)
 * then u32 word_off[n_words + 1] (into the word bytes, words in byte
 * order), u32 rank[n_words], f32 scale[n_words], i8 vec[n_words][dim]
 * (component = vec * scale), and the word bytes.
 */
#define EMB_HEAD 96
#define EMB_ID_MAX 64

struct cairn_embedder {
	const uint8_t *map;
	size_t size;
	uint32_t dim, n;
	float a, h;		/* SIF a; the harmonic number of n (ranks to probabilities) */
	char model[EMB_ID_MAX + 1];
	const uint8_t *pc, *off, *rank, *scale, *vec, *words;
};

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static float lef(const uint8_t *p)
{
	uint32_t u = le32(p);
	float f;

	memcpy(&f, &u, 4);
	return f;
}

static void put32(buf *b, uint32_t v)
{
	uint8_t x[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};

	buf_put(b, x, 4);
}

static void putf(buf *b, float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	put32(b, u);
}

/* A word's probability, from its rank by Zipf's law. */
static double rank_p(uint32_t rank, double h)
{
	return 1.0 / ((double)(rank + 1) * h);
}

/* The words collected for a conversion. */
typedef struct conv {
	uint32_t dim;
	buf words;		/* their bytes */
	uint32_t *woff;		/* start of each in words (+ one past the last) */
	uint32_t *rank;
	float *vec;		/* n * dim */
	size_t n, cap;
} conv;

static int conv_word(void *ctx, const char *w, size_t n, const float *v, uint32_t rank)
{
	conv *c = ctx;

	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 4096;
		uint32_t *o = cr_reallocarray(c->woff, cap + 1, sizeof(*o));
		uint32_t *r = o ? cr_reallocarray(c->rank, cap, sizeof(*r)) : NULL;
		float *f = r ? cr_reallocarray(c->vec, cap * c->dim, sizeof(*f)) : NULL;

		if (o)
			c->woff = o;
		if (r)
			c->rank = r;
		if (!f)
			return err_set(CAIRN_ENOMEM, "out of memory");
		c->vec = f;
		c->cap = cap;
	}
	c->woff[c->n] = (uint32_t)c->words.len;
	buf_put(&c->words, w, n);
	c->rank[c->n] = rank;
	memcpy(c->vec + c->n * c->dim, v, c->dim * sizeof(float));
	c->n++;
	c->woff[c->n] = (uint32_t)c->words.len;
	return c->words.oom || c->words.len > UINT32_MAX ? err_set(CAIRN_ENOMEM, "out of memory") : 0;
}

static int word_cmp(const void *x, const void *y, void *ctx)
{
	const conv *c = ctx;
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
	size_t na = c->woff[a + 1] - c->woff[a], nb = c->woff[b + 1] - c->woff[b];
	int r = memcmp(c->words.p + c->woff[a], c->words.p + c->woff[b], na < nb ? na : nb);

	if (r)
		return r;
	if (na != nb)
		return na < nb ? -1 : 1;
	return c->rank[a] < c->rank[b] ? -1 : c->rank[a] > c->rank[b];
}

/*
 * The corpus's common direction: the first principal component of the word
 * vectors weighted by their probabilities (power iteration), which SIF
 * removes from every sentence vector.
 */
static void common_direction(const conv *c, double h, float *pc)
{
	double *x = cr_calloc(c->dim, sizeof(double)), *y = cr_calloc(c->dim, sizeof(double));

	if (!x || !y) {
		memset(pc, 0, c->dim * sizeof(float));
		goto out;
	}
	for (uint32_t d = 0; d < c->dim; d++)
		x[d] = 1.0 / sqrt((double)c->dim);
	for (int it = 0; it < 50; it++) {
		double norm = 0;

		memset(y, 0, c->dim * sizeof(double));
		for (size_t i = 0; i < c->n; i++) {
			const float *v = c->vec + i * c->dim;
			double p = rank_p(c->rank[i], h), dot = 0;

			for (uint32_t d = 0; d < c->dim; d++)
				dot += v[d] * x[d];
			for (uint32_t d = 0; d < c->dim; d++)
				y[d] += p * dot * v[d];
		}
		for (uint32_t d = 0; d < c->dim; d++)
			norm += y[d] * y[d];
		norm = sqrt(norm);
		for (uint32_t d = 0; d < c->dim && norm > 0; d++)
			x[d] = y[d] / norm;
	}
	for (uint32_t d = 0; d < c->dim; d++)
		pc[d] = (float)x[d];
out:
	cr_free(x);
	cr_free(y);
}

static double harmonic(uint32_t n)
{
	return log((double)n + 1) + 0.5772156649;
}

int cairn_embedder_convert(const char *source, const char *out, const char *model_id)
{
	conv c;
	buf b = BUF_INIT;
	uint32_t *ord = NULL;
	float *pc = NULL;
	struct stat sb;
	void *map = MAP_FAILED;
	int fd = -1, rc = 0;
	FILE *f = NULL;
	size_t keep = 0, idn;

	memset(&c, 0, sizeof(c));
	if (!source || !out || !model_id)
		return err_set(CAIRN_EINVAL, "cairn_embedder_convert: NULL argument");
	if ((idn = strlen(model_id)) == 0 || idn > EMB_ID_MAX)
		return err_set(CAIRN_EINVAL, "a model id is 1 to %d bytes", EMB_ID_MAX);
	if ((fd = open(source, O_RDONLY)) < 0 || fstat(fd, &sb) || sb.st_size == 0 ||
	    (map = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0)) == MAP_FAILED) {
		rc = err_set(CAIRN_EIO, "%s: %s", source, errno ? strerror(errno) : "empty");
		goto out;
	}
	c.dim = 0;
	{
		/* dimensions come before vectors in the file: the first pass reads them */
		uint32_t dim;
		const char *s = map;
		const char *d = memmem(s, (size_t)sb.st_size < 4096 ? (size_t)sb.st_size : 4096,
				       "\"dimensions\":", 13);

		c.dim = d ? (uint32_t)strtoul(d + 13, NULL, 10) : 0;
		if (c.dim < 1 || c.dim > EMB_DIM_MAX) {
			rc = err_set(CAIRN_EJSON, "%s: no \"dimensions\" of 1 to 1024 at its start", source);
			goto out;
		}
		if ((rc = emb_parse_wink(map, (size_t)sb.st_size, &dim, conv_word, &c)))
			goto out;
		if (dim != c.dim || !c.n) {
			rc = err_set(CAIRN_EJSON, "%s: no word vectors", source);
			goto out;
		}
	}
	/* The words in byte order, each once (the most frequent of equal ones). */
	if (!(ord = cr_reallocarray(NULL, c.n, sizeof(*ord))) || !(pc = cr_calloc(c.dim, sizeof(*pc)))) {
		rc = err_set(CAIRN_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < c.n; i++)
		ord[i] = (uint32_t)i;
	qsort_r(ord, c.n, sizeof(*ord), word_cmp, &c);
	for (size_t i = 0; i < c.n; i++) {
		uint32_t a = ord[i];

		if (keep && c.woff[a + 1] - c.woff[a] == c.woff[ord[keep - 1] + 1] - c.woff[ord[keep - 1]] &&
		    !memcmp(c.words.p + c.woff[a], c.words.p + c.woff[ord[keep - 1]], c.woff[a + 1] - c.woff[a]))
			continue;
		ord[keep++] = a;
	}
	common_direction(&c, harmonic((uint32_t)keep), pc);
	/* The file. */
	buf_put(&b, EMB_MAGIC, 10);
	buf_put_u8(&b, EMB_VERSION);
	buf_put_u8(&b, 0);
	put32(&b, c.dim);
	put32(&b, (uint32_t)keep);
	put32(&b, 0);
	putf(&b, (float)EMB_SIF_A);
	put32(&b, (uint32_t)idn);
	{
		char id[EMB_ID_MAX] = {0};

		memcpy(id, model_id, idn);
		buf_put(&b, id, EMB_ID_MAX);
	}
	for (uint32_t d = 0; d < c.dim; d++)
		putf(&b, pc[d]);
	{
		uint32_t at = 0;

		for (size_t i = 0; i < keep; i++) {
			put32(&b, at);
			at += c.woff[ord[i] + 1] - c.woff[ord[i]];
		}
		put32(&b, at);
	}
	for (size_t i = 0; i < keep; i++)
		put32(&b, c.rank[ord[i]]);
	/* int8 per component, one scale per word (its largest component over 127) */
	for (size_t i = 0; i < keep; i++) {
		const float *v = c.vec + (size_t)ord[i] * c.dim;
		float m = 0;

		for (uint32_t d = 0; d < c.dim; d++)
			m = fabsf(v[d]) > m ? fabsf(v[d]) : m;
		putf(&b, m / 127.0f);
	}
	for (size_t i = 0; i < keep; i++) {
		const float *v = c.vec + (size_t)ord[i] * c.dim;
		float m = 0;

		for (uint32_t d = 0; d < c.dim; d++)
			m = fabsf(v[d]) > m ? fabsf(v[d]) : m;
		for (uint32_t d = 0; d < c.dim; d++)
			buf_put_u8(&b, (uint8_t)(int8_t)(m > 0 ? lrintf(v[d] / m * 127.0f) : 0));
	}
	for (size_t i = 0; i < keep; i++)
		buf_put(&b, c.words.p + c.woff[ord[i]], c.woff[ord[i] + 1] - c.woff[ord[i]]);
	if (b.oom) {
		rc = err_set(CAIRN_ENOMEM, "out of memory");
		goto out;
	}
	if (!(f = fopen(out, "wb")) || fwrite(b.p, 1, b.len, f) != b.len || fflush(f) ||
	    fsync(fileno(f))) {
		rc = err_set(CAIRN_EIO, "%s: %s", out, strerror(errno));
		goto out;
	}
out:
	if (f && fclose(f) && !rc)
		rc = err_set(CAIRN_EIO, "%s: %s", out, strerror(errno));
	if (map != MAP_FAILED)
		munmap(map, (size_t)sb.st_size);
	if (fd >= 0)
		close(fd);
	buf_release(&b);
	buf_release(&c.words);
	cr_free(c.woff);
	cr_free(c.rank);
	cr_free(c.vec);
	cr_free(ord);
	cr_free(pc);
	return rc;
}

int cairn_embedder_open(const char *path, cairn_embedder **out)
{
	cairn_embedder *e;
	struct stat sb;
	void *map;
	int fd;
	size_t need;
	uint32_t idn;

	if (!path || !out)
		return err_set(CAIRN_EINVAL, "cairn_embedder_open: NULL argument");
	*out = NULL;
	if ((fd = open(path, O_RDONLY)) < 0)
		return err_set(errno == ENOENT ? CAIRN_ENOTFOUND : CAIRN_EIO, "%s: %s", path,
			       strerror(errno));
	if (fstat(fd, &sb) || sb.st_size < EMB_HEAD ||
	    (map = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_SHARED, fd, 0)) == MAP_FAILED) {
		close(fd);
		return err_set(CAIRN_EFORMAT, "%s: not a Cairn model file", path);
	}
	close(fd);
	if (!(e = cr_calloc(1, sizeof(*e)))) {
		munmap(map, (size_t)sb.st_size);
		return err_set(CAIRN_ENOMEM, "out of memory");
	}
	e->map = map;
	e->size = (size_t)sb.st_size;
	e->dim = le32(e->map + 12);
	e->n = le32(e->map + 16);
	e->a = lef(e->map + 24);
	idn = le32(e->map + 28);
	if (memcmp(e->map, EMB_MAGIC, 10) || e->map[10] != EMB_VERSION || !e->dim ||
	    e->dim > EMB_DIM_MAX || !e->n || idn == 0 || idn > EMB_ID_MAX || !(e->a > 0))
		goto bad;
	memcpy(e->model, e->map + 32, idn);
	e->pc = e->map + EMB_HEAD;
	e->off = e->pc + 4 * (size_t)e->dim;
	e->rank = e->off + 4 * ((size_t)e->n + 1);
	e->scale = e->rank + 4 * (size_t)e->n;
	e->vec = e->scale + 4 * (size_t)e->n;
	e->words = e->vec + (size_t)e->n * e->dim;
	need = (size_t)(e->words - e->map);
	if (need > e->size || le32(e->off) != 0 ||
	    le32(e->off + 4 * (size_t)e->n) != e->size - need)
		goto bad;
	for (uint32_t i = 0; i < e->n; i++)
		if (le32(e->off + 4 * (size_t)i) > le32(e->off + 4 * ((size_t)i + 1)))
			goto bad;
	e->h = (float)harmonic(e->n);
	*out = e;
	return 0;
bad:
	cairn_embedder_close(e);
	return err_set(CAIRN_EFORMAT, "%s: not a Cairn model file of version %d", path, EMB_VERSION);
}

void cairn_embedder_close(cairn_embedder *e)
{
	if (!e)
		return;
	munmap((void *)e->map, e->size);
	cr_free(e);
}

const char *cairn_embedder_model(const cairn_embedder *e)
{
	return e ? e->model : NULL;
}

size_t cairn_embedder_dim(const cairn_embedder *e)
{
	return e ? e->dim : 0;
}

/* The index of word w in the model, or -1. */
static long find_word(const cairn_embedder *e, const char *w, size_t n)
{
	size_t lo = 0, hi = e->n;

	while (lo < hi) {
		size_t m = lo + (hi - lo) / 2;
		uint32_t a = le32(e->off + 4 * m), b = le32(e->off + 4 * (m + 1));
		size_t mn = b - a;
		int r = memcmp(e->words + a, w, mn < n ? mn : n);

		if (!r)
			r = mn < n ? -1 : mn > n;
		if (r < 0)
			lo = m + 1;
		else if (r > 0)
			hi = m;
		else
			return (long)m;
	}
	return -1;
}

struct etoks {
	token t[512];
	char s[512][TOKEN_CAP];
	size_t n;
};

static int take_token(void *ctx, const token *t)
{
	struct etoks *x = ctx;

	if (x->n == 512)
		return 0;
	x->t[x->n] = *t;
	memcpy(x->s[x->n], t->s, t->len);
	x->t[x->n].s = x->s[x->n];
	x->n++;
	return 0;
}

/* Add word i of the model, with its SIF weight, to acc. */
static void add_word(const cairn_embedder *e, long i, double *acc)
{
	double p = rank_p(le32(e->rank + 4 * (size_t)i), e->h), w = e->a / (e->a + p);
	double s = lef(e->scale + 4 * (size_t)i) * w;
	const int8_t *v = (const int8_t *)(e->vec + (size_t)i * e->dim);

	for (uint32_t d = 0; d < e->dim; d++)
		acc[d] += s * v[d];
}

int cairn_embed(const cairn_embedder *e, const char *text, size_t len, float *out, size_t cap,
		size_t *words)
{
	struct etoks *x;
	double acc[EMB_DIM_MAX], dot = 0, norm = 0;
	uint32_t pos = 0;
	size_t known = 0;
	int rc;

	if (!e || !text || !out)
		return err_set(CAIRN_EINVAL, "cairn_embed: NULL argument");
	if (cap < e->dim)
		return err_set(CAIRN_ELIMIT, "the vector has %u dimensions", e->dim);
	if (!utf8_valid(text, len))
		return err_set(CAIRN_EUTF8, "the text is not UTF-8");
	if (!(x = cr_malloc(sizeof(*x))))
		return err_set(CAIRN_ENOMEM, "out of memory");
	x->n = 0;
	if ((rc = analyze(text, len, &pos, take_token, x))) {
		cr_free(x);
		return rc;
	}
	memset(acc, 0, sizeof(acc));
	/*
	 * Each word the model knows, weighted; an identifier it knows whole
	 * (e-mail, o'clock) stands for its parts.
	 */
	for (size_t i = 0; i < x->n; i++) {
		const token *t = &x->t[i];
		long w;

		if (t->kind != TK_WHOLE || (w = find_word(e, t->s, t->len)) < 0)
			continue;
		add_word(e, w, acc);
		known++;
		for (size_t j = 0; j < x->n; j++)
			if (x->t[j].kind != TK_WHOLE && x->t[j].start >= t->start && x->t[j].end <= t->end)
				x->t[j].kind = 0; /* covered */
	}
	for (size_t i = 0; i < x->n; i++) {
		const token *t = &x->t[i];
		long w;

		if ((t->kind == TK_WORD || t->kind == TK_CJK) && (w = find_word(e, t->s, t->len)) >= 0) {
			add_word(e, w, acc);
			known++;
		}
	}
	cr_free(x);
	/* Less the common direction, to unit length (all zeros when no word is known). */
	for (uint32_t d = 0; d < e->dim; d++)
		dot += acc[d] * lef(e->pc + 4 * (size_t)d);
	for (uint32_t d = 0; d < e->dim; d++) {
		acc[d] -= dot * lef(e->pc + 4 * (size_t)d);
		norm += acc[d] * acc[d];
	}
	norm = sqrt(norm);
	for (uint32_t d = 0; d < e->dim; d++)
		out[d] = known && norm > 0 ? (float)(acc[d] / norm) : 0.0f;
	if (words)
		*words = known;
	return 0;
}
