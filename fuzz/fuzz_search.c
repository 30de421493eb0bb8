/*
 * libFuzzer target: search texts. Each input is the text of a search (and,
 * by its length, the limit, partial matches and typos) over a small store
 * with words, identifiers, accents and CJK in titles and searchable values;
 * a bad text must be refused cleanly, a good one answered in order.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cairn.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static cairn_store *st;

static void cleanup(void)
{
	cairn_close(st);
}

static void setup(void)
{
	static const char schema[] =
		"{\"kinds\":[{\"name\":\"T\",\"attributes\":["
		"{\"name\":\"body\",\"type\":\"string\",\"search\":true},"
		"{\"name\":\"tags\",\"type\":\"strings\",\"search\":0.5}]}]}";
	static const char *const words[] = {"steel",   "valves",     "running", "PO-2024-0117",
					    "Zürich",  "东京タワー", "order_status", "PurchaseOrder",
					    "bearing", "bears",      "the",     "a"};
	cairn_open_options o = {.flags = CAIRN_OPEN_CREATE | CAIRN_OPEN_NOSYNC | CAIRN_OPEN_NO_BACKGROUND};
	cairn_commit_options co = {0};
	cairn_changeset *cs;
	char dir[] = "/tmp/cairn-fuzz-search-XXXXXX";

	if (!mkdtemp(dir) || cairn_open(dir, &o, &st) || cairn_domain_create(st, "d"))
		abort();
	co.domain = "d";
	if (cairn_schema_apply(st, &co, schema, strlen(schema), NULL) || cairn_changeset_new(&cs))
		abort();
	for (int k = 0; k < 60; k++) {
		char line[512];
		int n = snprintf(line, sizeof(line),
				 "{\"kind\":\"T\",\"key\":\"k%02d\",\"title\":\"%s %s\",\"values\":{"
				 "\"body\":\"%s %s %s\",\"tags\":[\"%s\"]}}",
				 k, words[k % 12], words[(k * 7) % 12], words[(k * 5) % 12],
				 words[(k * 3) % 12], words[k % 5], words[(k * 11) % 12]);

		if (cairn_changeset_add_json(cs, line, (size_t)n))
			abort();
	}
	if (cairn_commit(st, &co, cs, NULL))
		abort();
	cairn_changeset_free(cs);
	atexit(cleanup);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cairn_read_options ro = {0};
	cairn_search_options o = {0};
	cairn_search_info info;
	cairn_hit h[8];
	cairn_txn *t;
	size_t n;

	if (!size) /* a length of 0 means a NUL-terminated text */
		return 0;
	if (!st)
		setup();
	ro.domain = "d";
	if (cairn_txn_begin(st, &ro, &t))
		abort();
	o.text = (const char *)data;
	o.text_len = size;
	o.limit = 1 + size % 8;
	o.all_words = size % 3 == 0;
	o.no_typos = size % 5 == 0;
	if (cairn_search(t, &o, h, 8, &n, &info) == 0)
		for (size_t i = 1; i < n; i++) /* best first, whole matches before partial ones */
			if (h[i].words > h[i - 1].words ||
			    (h[i].words == h[i - 1].words && h[i].score > h[i - 1].score))
				abort();
	cairn_txn_end(t);
	return 0;
}
