/* libFuzzer target: the JSON reader and the canonical writer (canonical output must read back to itself). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *v = json_parse((const char *)data, size, "fuzz"), *w;
	buf a = BUF_INIT, b = BUF_INIT;

	if (!v)
		return 0;
	json_canon(v, &a);
	w = json_parse((const char *)a.p, a.len, "canonical");
	if (!w)
		abort();
	json_canon(w, &b);
	if (a.len != b.len || memcmp(a.p, b.p, a.len) != 0)
		abort();
	json_decref(v);
	json_decref(w);
	buf_release(&a);
	buf_release(&b);
	return 0;
}
