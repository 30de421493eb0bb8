/*
 * libFuzzer target: the filter language. Each input is a filter run as a
 * query (and as a count) over a small store whose Kind has an attribute of
 * every type, indexed and not; a bad filter must be refused cleanly.
 */
#include <stdint.h>
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
		"{\"name\":\"s\",\"type\":\"string\",\"indexed\":true},{\"name\":\"u\",\"type\":\"string\"},"
		"{\"name\":\"e\",\"type\":\"enum\",\"values\":[\"a\",\"b\"],\"indexed\":true},"
		"{\"name\":\"i\",\"type\":\"int\",\"indexed\":true},{\"name\":\"f\",\"type\":\"float\"},"
		"{\"name\":\"d\",\"type\":\"date\",\"indexed\":true},"
		"{\"name\":\"t\",\"type\":\"datetime\",\"indexed\":true},"
		"{\"name\":\"b\",\"type\":\"bool\",\"indexed\":true},"
		"{\"name\":\"g\",\"type\":\"strings\",\"indexed\":true}]}]}";
	cairn_open_options o = {.flags = CAIRN_OPEN_CREATE | CAIRN_OPEN_NOSYNC | CAIRN_OPEN_NO_BACKGROUND};
	cairn_commit_options co = {0};
	cairn_changeset *cs;
	char dir[] = "/tmp/cairn-fuzz-query-XXXXXX";

	if (!mkdtemp(dir) || cairn_open(dir, &o, &st) || cairn_domain_create(st, "d"))
		abort();
	co.domain = "d";
	if (cairn_schema_apply(st, &co, schema, strlen(schema), NULL) || cairn_changeset_new(&cs))
		abort();
	for (int k = 0; k < 40; k++) {
		char line[512];
		int n = snprintf(line, sizeof(line),
				 "{\"kind\":\"T\",\"key\":\"k%02d\",\"values\":{\"s\":\"s%d\",\"u\":\"u%d\","
				 "\"e\":\"%s\",\"i\":%d,\"f\":%d.5,\"d\":\"2024-01-%02d\","
				 "\"t\":\"2024-01-01T00:00:%02dZ\",\"b\":%s,\"g\":[\"x%d\",\"y\"]}}",
				 k, k % 7, k % 5, k % 2 ? "a" : "b", k - 20, k % 9, 1 + k % 28, k % 60,
				 k % 3 ? "true" : "false", k % 4);

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
	static const char *const sorts[] = {NULL, "s", "i", "d", "u", "f", "b"};
	cairn_read_options ro = {0};
	cairn_query_options q;
	cairn_query_result res;
	cairn_record out[8];
	cairn_txn *t;

	if (!st)
		setup();
	ro.domain = "d";
	if (cairn_txn_begin(st, &ro, &t))
		abort();
	memset(&q, 0, sizeof(q));
	q.kind = "T";
	q.where = (const char *)data;
	q.where_len = size;
	q.sort = sorts[size % 7];
	q.limit = 1 + size % 8;
	if (cairn_query(t, &q, out, 8, &res) == 0 && res.next) {
		q.after = res.next;
		cairn_query(t, &q, out, 8, &res);
	}
	cairn_query_count(t, "T", (const char *)data, size, NULL, NULL, NULL, NULL);
	cairn_txn_end(t);
	return 0;
}
