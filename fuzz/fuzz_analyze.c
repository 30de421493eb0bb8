/*
 * libFuzzer target: text analysis. Each input is analyzed as a text would be
 * for indexing (any bytes: not UTF-8 is a separator) and every word is
 * stemmed; tokens must stay non-empty, within TOKEN_CAP and in position order,
 * each where it says it is in the input.
 */
#include <stdint.h>
#include <stdlib.h>

#include "model/analyze.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct fz {
	stemmer *en;
	uint32_t last;
	int any;
	size_t size, last_end; /* the input's length; where the last part ended */
};

static int one(void *ctx, const token *t)
{
	struct fz *f = ctx;
	const char *s;

	if (!t->len || t->len > TOKEN_CAP || t->start >= t->end || t->end > f->size)
		abort();
	if (t->kind != TK_WHOLE) { /* parts and characters in text order, apart */
		if (t->start < f->last_end)
			abort();
		f->last_end = t->end;
	}
	if (t->kind != TK_WHOLE) {
		if (f->any && t->pos != f->last + 1)
			abort();
		f->last = t->pos;
		f->any = 1;
	}
	if (t->kind == TK_WORD && !t->digits && stem(f->en, t->s, t->len, &s) > TOKEN_CAP * 2)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static stemmer *en;
	struct fz f = {0, 0, 0, size, 0};
	uint32_t pos = 0;

	if (!en && !(en = stemmer_new("english")))
		abort();
	f.en = en;
	if (analyze((const char *)data, size, &pos, one, &f))
		abort();
	return 0;
}
