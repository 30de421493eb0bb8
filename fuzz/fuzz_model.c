/*
 * libFuzzer target: the word-vector JSON a model file is converted from.
 * Each input is parsed as the wink package's JSON; a bad one must be
 * refused cleanly, and every word given must be non-empty UTF-8 within
 * EMB_WORD_MAX bytes with finite components.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "model/embed.h"
#include "base/text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint32_t dim;

static int one(void *ctx, const char *w, size_t n, const float *v, uint32_t rank)
{
	(void)ctx;
	(void)rank;
	if (!n || n > EMB_WORD_MAX || !utf8_valid(w, n) || !dim || dim > EMB_DIM_MAX)
		abort();
	for (uint32_t i = 0; i < dim; i++)
		if (!isfinite(v[i]))
			abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	emb_parse_wink((const char *)data, size, &dim, one, NULL);
	return 0;
}
