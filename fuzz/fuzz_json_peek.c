/*
 * libFuzzer target: reading one top-level member without parsing the rest
 * (json_peek_member, for the id of a JSON-RPC message the reader refused).
 * What it finds lies inside the input; on text the reader accepts, it finds
 * the member the reader found, with the same value, or none only when the
 * text spells a key with an escape.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data, *val;
	arena a = ARENA_INIT;
	size_t len = 0;
	int r = json_peek_member(s, size, "id", &val, &len);
	const jv *v, *m;

	if (r == 1 && (val < s || len == 0 || len > size || val + len > s + size))
		abort();
	v = jv_parse(&a, s, size, "fuzz");
	if (v && v->type == JV_OBJECT) {
		m = jv_get(v, "id");
		if (r == 1) {
			const jv *w = jv_parse(&a, val, len, "id");

			if (!m || !w || !jv_equal(m, w))
				abort();
		} else if (m && !memchr(s, '\\', size)) {
			abort();
		}
	} else if (v && r == 1) {
		abort(); /* not an object: no member to find */
	}
	arena_release(&a);
	return 0;
}
