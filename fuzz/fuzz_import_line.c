/* libFuzzer target: one import line through cairn_changeset_add_json (the JSON Lines reader). */
#include <stdint.h>
#include <stdlib.h>

#include "cairn.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cairn_changeset *cs;

	if (cairn_changeset_new(&cs))
		return 0;
	cairn_changeset_add_json(cs, (const char *)data, size);
	cairn_changeset_free(cs);
	return 0;
}
