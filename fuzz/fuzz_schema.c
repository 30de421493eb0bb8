/* libFuzzer target: the schema reader, merged into the test schema and loaded back from its canonical form. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/schema.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char base_json[] =
		"{\"kinds\":[{\"name\":\"A\",\"attributes\":[{\"name\":\"x\",\"type\":\"enum\","
		"\"values\":[\"p\",\"q\"]}]}],\"relations\":[{\"name\":\"r\",\"from\":\"A\",\"to\":\"A\"}]}";
	schema *base = NULL, *s = NULL, *back = NULL;
	schema_delta d = {0};

	if (schema_apply_json(NULL, base_json, strlen(base_json), &base, NULL))
		abort();
	if (schema_apply_json(base, (const char *)data, size, &s, &d) == 0) {
		/* The canonical form must load back to itself. */
		if (schema_load(s->json, s->json_len, 1, &back) != 0 || back->json_len != s->json_len ||
		    memcmp(back->json, s->json, s->json_len) != 0)
			abort();
		schema_free(back);
		schema_delta_release(&d);
		schema_free(s);
	}
	schema_free(base);
	return 0;
}
