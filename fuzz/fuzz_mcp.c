/*
 * libFuzzer target: one MCP message through the JSON-RPC handler, on a
 * store with a schema and some Records, write tools on. Any answer must be
 * one JSON-RPC response that reads back as JSON.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cairn.h"
#include "base/json.h"
#include "server/mcp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static cairn_store *st;

static void cleanup(void)
{
	cairn_close(st);
}

static cairn_store *store(void)
{
	static const char schema[] =
		"{\"kinds\":[{\"name\":\"Supplier\",\"attributes\":[{\"name\":\"country\",\"type\":"
		"\"string\"},{\"name\":\"rating\",\"type\":\"float\"}]},{\"name\":\"Part\"}],"
		"\"relations\":[{\"name\":\"supplied_by\",\"from\":\"Part\",\"to\":\"Supplier\"}]}";
	static const char lines[] =
		"{\"kind\":\"Supplier\",\"key\":\"S1\",\"title\":\"Acme\",\"values\":{\"country\":\"DE\"}}";
	cairn_open_options o = {.flags = CAIRN_OPEN_CREATE | CAIRN_OPEN_NOSYNC | CAIRN_OPEN_NO_BACKGROUND};
	cairn_commit_options co = {0};
	cairn_changeset *cs;
	char dir[] = "/tmp/cairn-fuzz-mcp-XXXXXX";

	if (st)
		return st;
	if (!mkdtemp(dir) || cairn_open(dir, &o, &st) || cairn_domain_create(st, "d"))
		abort();
	co.domain = "d";
	if (cairn_schema_apply(st, &co, schema, strlen(schema), NULL) || cairn_changeset_new(&cs) ||
	    cairn_changeset_add_json(cs, lines, strlen(lines)) || cairn_commit(st, &co, cs, NULL))
		abort();
	cairn_changeset_free(cs);
	atexit(cleanup);
	return st;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	mcp_ctx m;
	buf out = BUF_INIT;
	arena a = ARENA_INIT;

	memset(&m, 0, sizeof(m));
	m.st = store();
	m.domain = "d";
	m.actor = "fuzz";
	m.writes = 1;
	if (mcp_handle(&m, (const char *)data, size, &out)) {
		const jv *r = jv_parse(&a, (const char *)out.p, out.len, "response");

		if (!r || r->type != JV_OBJECT || !jv_get(r, "jsonrpc") ||
		    (!jv_get(r, "result") == !jv_get(r, "error")))
			abort();
	}
	arena_release(&a);
	buf_release(&out);
	return 0;
}
