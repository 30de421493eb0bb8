/*
 * Text analysis for full-text search: the words of a text, normalized the
 * same way for what is indexed and what is asked (docs/search.md,
 * "Analysis"). utf8proc does the Unicode work, libstemmer the stemming.
 */
#ifndef CAIRN_MODEL_ANALYZE_H
#define CAIRN_MODEL_ANALYZE_H

#include <stddef.h>
#include <stdint.h>

/* The longest token kept (bytes); a longer one is cut at a character boundary. */
#define TOKEN_CAP 64

enum token_kind {
	TK_WORD = 1,  /* a word, or one part of an identifier */
	TK_WHOLE = 2, /* an identifier kept whole (po-2024-0117), at its first part's position */
	TK_CJK = 3    /* one Han, kana or Hangul character */
};

typedef struct token {
	const char *s; /* normalized bytes, TOKEN_CAP at most (not NUL-terminated) */
	size_t len;
	uint32_t pos;  /* word position in the text */
	int kind;      /* enum token_kind */
	int digits;    /* the token is digits only */
	size_t end;    /* the byte of the text after its last character */
	size_t start;  /* the byte of the text where its first character starts */
} token;

/*
 * Call fn(ctx, t) for each token of s[0..n-1] (valid UTF-8; a byte that is
 * not is a separator), in text order. Positions start at *pos, which is
 * advanced past the text. A nonzero return of fn stops and is returned.
 */
int analyze(const char *s, size_t n, uint32_t *pos, int (*fn)(void *ctx, const token *t),
	    void *ctx);

/* A Snowball stemmer of one language; not shared between threads. */
typedef struct stemmer stemmer;

/* The stemmer of language (a Snowball name: "english", "german", ...); NULL when unknown. */
stemmer *stemmer_new(const char *language);
void stemmer_free(stemmer *s);
/*
 * The stem of word w[0..n-1] (a TK_WORD token of letters): *out points to
 * it, valid until the next call. Returns its length.
 */
size_t stem(stemmer *s, const char *w, size_t n, const char **out);
/* Is language one libstemmer knows? */
int stem_language_ok(const char *language);

#endif
