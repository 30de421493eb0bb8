/* libFuzzer target: the JSON reader and the canonical writer (canonical output must read back to itself). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	arena a = ARENA_INIT;
	const jv *v = jv_parse(&a, (const char *)data, size, "fuzz"), *w;
	buf x = BUF_INIT, y = BUF_INIT;

	if (!v) {
		arena_release(&a);
		return 0;
	}
	jv_canon(v, &x);
	w = jv_parse(&a, (const char *)x.p, x.len, "canonical");
	if (!w || !jv_equal(v, w))
		abort();
	jv_canon(w, &y);
	if (x.len != y.len || memcmp(x.p, y.p, x.len) != 0)
		abort();
	arena_release(&a);
	buf_release(&x);
	buf_release(&y);
	return 0;
}
