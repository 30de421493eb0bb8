/*
 * libFuzzer target: the JSON reader and the canonical writer (canonical
 * output must read back to itself), and the member walk over canonical
 * objects (it must find the parsed members, key and value bytes).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"

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
	if (v->type == JV_OBJECT) {
		size_t pos = 0, count = 0;
		jmember m;
		int r;

		while ((r = json_member_next((const char *)x.p, x.len, &pos, &m)) == 1) {
			const jv *mv = jv_getn(v, m.key, m.key_len);

			buf_reset(&y);
			if (mv)
				jv_canon(mv, &y);
			if (!mv || y.len != m.val_len || memcmp(y.p, m.val, m.val_len) != 0)
				abort();
			count++;
		}
		/* -1 only for a key with an escape; otherwise every member was seen. */
		if (r == 0 ? count != v->len : !memchr(x.p, '\\', x.len))
			abort();
	} else if (json_member_next((const char *)x.p, x.len, &(size_t){0}, &(jmember){0}) != -1) {
		abort();
	}
	arena_release(&a);
	buf_release(&x);
	buf_release(&y);
	return 0;
}
