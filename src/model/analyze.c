/*
 * Text analysis (analyze.h). A text is cut into chunks: runs of letters and
 * digits joined by connectors (- _ . / : @ & '). Each chunk gives its parts,
 * cut at connectors, before a capital that follows a letter and is followed
 * by a lower-case letter (purchaseOrder, XMLParser, but GmbH whole) and
 * between letters and digits (PO2024), one
 * word position each; a chunk of several parts is also kept whole, connectors
 * and all, at its first part's position. Every character is folded on the way:
 * compatibility decomposition, case folding, accents removed. Han, kana and
 * Hangul characters are words of one character each.
 */
#include <string.h>

#include <libstemmer.h>
#include <utf8proc.h>

#include "model/analyze.h"
#include "base/alloc.h"

#define MAX_PARTS 64 /* parts of a chunk kept; later ones are words without the whole */

enum cclass { C_SEP, C_UPPER, C_LOWER, C_DIGIT, C_MARK, C_CJK, C_CONN };

typedef struct chunk {
	char whole[TOKEN_CAP + 8];
	size_t whole_len;
	int whole_over;			/* the whole is longer than TOKEN_CAP */
	char part[TOKEN_CAP + 8];
	size_t part_len;
	int part_digits;		/* the current part is digits only */
	size_t last_start;		/* part offset of the last character */
	size_t part_at, last_at;	/* text offsets: the part's first character, the last one */
	size_t whole_at;		/* ... the chunk's first character */
	int last, prev;			/* the classes of the last two characters */
	char conn;			/* a connector waiting for the next letter or digit */
	unsigned n_parts;
	uint32_t first_pos;
	size_t end;			/* the byte after the last character added */
} chunk;

typedef struct actx {
	int (*fn)(void *ctx, const token *t);
	void *ctx;
	uint32_t *pos;
	size_t at;			/* the byte after the character being read */
	size_t char_at;			/* the byte where it starts */
	chunk c;
} actx;

static int is_cjk(utf8proc_int32_t cp)
{
	return (cp >= 0x3040 && cp <= 0x30ff) ||   /* kana */
	       (cp >= 0x3400 && cp <= 0x4dbf) ||   /* Han extension A */
	       (cp >= 0x4e00 && cp <= 0x9fff) ||   /* Han */
	       (cp >= 0xac00 && cp <= 0xd7af) ||   /* Hangul syllables */
	       (cp >= 0xf900 && cp <= 0xfaff) ||   /* Han compatibility */
	       (cp >= 0xff66 && cp <= 0xff9d) ||   /* half-width katakana */
	       (cp >= 0x20000 && cp <= 0x2fa1f);   /* Han, supplementary planes */
}

/* The connector a code point is, or 0. */
static char connector(utf8proc_int32_t cp)
{
	switch (cp) {
	case '-': case '_': case '.': case '/': case ':': case '@': case '&': case '\'':
		return (char)cp;
	case 0x2010: case 0x2011: case 0x2012: case 0x2013: /* hyphens and dashes */
		return '-';
	case 0x2019: /* right single quotation mark, the typographic apostrophe */
		return '\'';
	}
	return 0;
}

static int classify(utf8proc_int32_t cp)
{
	if (cp < 0x80) {
		if (cp >= 'a' && cp <= 'z')
			return C_LOWER;
		if (cp >= 'A' && cp <= 'Z')
			return C_UPPER;
		if (cp >= '0' && cp <= '9')
			return C_DIGIT;
		return connector(cp) ? C_CONN : C_SEP;
	}
	if (is_cjk(cp))
		return C_CJK;
	switch (utf8proc_category(cp)) {
	case UTF8PROC_CATEGORY_LU:
	case UTF8PROC_CATEGORY_LT:
		return C_UPPER;
	case UTF8PROC_CATEGORY_LL:
	case UTF8PROC_CATEGORY_LM:
	case UTF8PROC_CATEGORY_LO:
		return C_LOWER;
	case UTF8PROC_CATEGORY_ND:
	case UTF8PROC_CATEGORY_NL:
	case UTF8PROC_CATEGORY_NO:
		return C_DIGIT;
	case UTF8PROC_CATEGORY_MN:
	case UTF8PROC_CATEGORY_MC:
	case UTF8PROC_CATEGORY_ME:
	case UTF8PROC_CATEGORY_CF: /* soft hyphens, joiners: ignored, as marks are */
		return C_MARK;
	default:
		return connector(cp) ? C_CONN : C_SEP;
	}
}

/* The folded form of cp, letters and digits only, into out (4 * 8 bytes at most). */
static size_t fold(utf8proc_int32_t cp, char *out)
{
	utf8proc_int32_t d[8];
	utf8proc_ssize_t nd;
	size_t o = 0;

	if (cp < 0x80) {
		out[0] = (char)(cp >= 'A' && cp <= 'Z' ? cp - 'A' + 'a' : cp);
		return 1;
	}
	nd = utf8proc_decompose_char(cp, d, 8,
				     UTF8PROC_COMPAT | UTF8PROC_CASEFOLD | UTF8PROC_STRIPMARK |
					     UTF8PROC_IGNORE | UTF8PROC_DECOMPOSE,
				     NULL);
	if (nd < 0 || nd > 8) {
		d[0] = cp;
		nd = 1;
	}
	for (utf8proc_ssize_t j = 0; j < nd; j++) {
		int cat = utf8proc_category(d[j]);

		if ((cat >= UTF8PROC_CATEGORY_LU && cat <= UTF8PROC_CATEGORY_LO) ||
		    (cat >= UTF8PROC_CATEGORY_ND && cat <= UTF8PROC_CATEGORY_NO))
			o += (size_t)utf8proc_encode_char(d[j], (utf8proc_uint8_t *)out + o);
	}
	return o;
}

static int emit(actx *a, const char *s, size_t len, uint32_t pos, int kind, int digits,
		size_t start, size_t end)
{
	token t = {s, len, pos, kind, digits, end, start};

	return len ? a->fn(a->ctx, &t) : 0;
}

/* End the current part of the chunk: it becomes a word. */
static int end_part(actx *a)
{
	chunk *c = &a->c;
	int rc;

	if (!c->part_len)
		return 0;
	if (c->n_parts == 0)
		c->first_pos = *a->pos;
	rc = emit(a, c->part, c->part_len, (*a->pos)++, TK_WORD, c->part_digits, c->part_at,
		  c->end);
	c->n_parts++;
	c->part_len = 0;
	c->last = c->prev = C_SEP;
	return rc;
}

/* End the chunk: its last part, then the whole when it has several. */
static int end_chunk(actx *a)
{
	chunk *c = &a->c;
	int rc = end_part(a);

	if (!rc && c->n_parts > 1 && c->n_parts <= MAX_PARTS && !c->whole_over)
		rc = emit(a, c->whole, c->whole_len, c->first_pos, TK_WHOLE, 0, c->whole_at, c->end);
	memset(c, 0, sizeof(*c));
	return rc;
}

static void whole_put(chunk *c, const char *s, size_t n)
{
	if (c->whole_len + n > TOKEN_CAP) {
		c->whole_over = 1;
		return;
	}
	memcpy(c->whole + c->whole_len, s, n);
	c->whole_len += n;
}

/* A letter or digit of class cl, folded to f[0..fn-1]. */
static int add_char(actx *a, int cl, const char *f, size_t fn)
{
	chunk *c = &a->c;
	int split = 0, rc;

	if (c->conn) {
		split = 1;
	} else if (c->part_len) {
		split = (cl == C_DIGIT) != (c->last == C_DIGIT);
		if (!split && cl == C_LOWER && c->last == C_UPPER &&
		    (c->prev == C_UPPER || c->prev == C_LOWER)) {
			/* purchaseOrder, XMLParser: the capital starts the next part. */
			char carry[TOKEN_CAP + 8];
			size_t cn = c->part_len - c->last_start;

			memcpy(carry, c->part + c->last_start, cn);
			c->part_len = c->last_start;
			c->end = c->last_at; /* the part ends before the capital */
			if ((rc = end_part(a)))
				return rc;
			memcpy(c->part, carry, cn);
			c->part_len = cn;
			c->part_at = c->last_at;
			c->part_digits = 0;
			c->prev = C_SEP;
			c->last = C_UPPER;
			c->last_start = 0;
		}
	}
	if (split && (rc = end_part(a)))
		return rc;
	if (c->conn) {
		whole_put(c, &c->conn, 1);
		c->conn = 0;
	}
	if (!c->whole_len)
		c->whole_at = a->char_at;
	whole_put(c, f, fn);
	if (!c->part_len) {
		c->part_digits = 1;
		c->part_at = a->char_at;
	}
	c->last_at = a->char_at;
	c->part_digits &= cl == C_DIGIT;
	c->prev = c->last;
	c->last = cl;
	c->last_start = c->part_len;
	if (c->part_len + fn <= TOKEN_CAP) {
		memcpy(c->part + c->part_len, f, fn);
		c->part_len += fn;
	}
	c->end = a->at;
	return 0;
}

int analyze(const char *s, size_t n, uint32_t *pos, int (*fn)(void *ctx, const token *t),
	    void *ctx)
{
	const utf8proc_uint8_t *p = (const utf8proc_uint8_t *)s;
	actx a;
	size_t i = 0;
	int rc = 0;

	memset(&a, 0, sizeof(a));
	a.fn = fn;
	a.ctx = ctx;
	a.pos = pos;
	while (i < n && !rc) {
		utf8proc_int32_t cp;
		utf8proc_ssize_t len;
		char f[40];
		size_t fl;
		int cl;

		a.char_at = i;
		if (p[i] < 0x80) {
			cp = p[i++];
		} else if ((len = utf8proc_iterate(p + i, (utf8proc_ssize_t)(n - i), &cp)) > 0) {
			i += (size_t)len;
		} else {
			i++;
			cp = ' '; /* not UTF-8: a separator */
		}
		a.at = i;
		cl = classify(cp);
		switch (cl) {
		case C_MARK: /* folded away; it does not end a word */
			break;
		case C_CONN:
			if (a.c.part_len && !a.c.conn)
				a.c.conn = connector(cp);
			else
				rc = end_chunk(&a);
			break;
		case C_CJK:
			if (!(rc = end_chunk(&a)) && (fl = fold(cp, f)))
				rc = emit(&a, f, fl, (*pos)++, TK_CJK, 0, a.char_at, i);
			break;
		case C_SEP:
			rc = end_chunk(&a);
			break;
		default:
			fl = fold(cp, f);
			if (fl)
				rc = add_char(&a, cl, f, fl);
		}
	}
	return rc ? rc : end_chunk(&a);
}

/* ------------------------------------------------------------ stemming -- */

struct stemmer {
	struct sb_stemmer *sb;
};

stemmer *stemmer_new(const char *language)
{
	struct sb_stemmer *sb = sb_stemmer_new(language, "UTF_8");
	stemmer *s;

	if (!sb)
		return NULL;
	if (!(s = cr_malloc(sizeof(*s)))) {
		sb_stemmer_delete(sb);
		return NULL;
	}
	s->sb = sb;
	return s;
}

void stemmer_free(stemmer *s)
{
	if (!s)
		return;
	sb_stemmer_delete(s->sb);
	cr_free(s);
}

size_t stem(stemmer *s, const char *w, size_t n, const char **out)
{
	const sb_symbol *r = sb_stemmer_stem(s->sb, (const sb_symbol *)w, (int)n);

	if (!r) { /* out of memory: the word is its own stem */
		*out = w;
		return n;
	}
	*out = (const char *)r;
	return (size_t)sb_stemmer_length(s->sb);
}

int stem_language_ok(const char *language)
{
	stemmer *s = stemmer_new(language);
	int ok = s != NULL;

	stemmer_free(s);
	return ok;
}
