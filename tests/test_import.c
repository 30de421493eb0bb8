/* Integration tests of import: forward references, bad lines, and export/import round trips. */
#include <stdlib.h>

#include "tests.h"

struct bad {
	int n;
	uint64_t lines[16];
	int codes[16];
	char msg[512];
};

static void on_bad(void *ctx, const char *file, uint64_t line, int rc, const char *msg)
{
	struct bad *b = ctx;

	if (b->n < 16) {
		b->lines[b->n] = line;
		b->codes[b->n] = rc;
	}
	b->n++;
	snprintf(b->msg, sizeof(b->msg), "%s:%llu: %s", file, (unsigned long long)line, msg);
}

/* Import the given inputs (name, text pairs) into Domain d. */
static int import(cairn_store *st, size_t batch, int on_error, struct bad *bad,
		  cairn_import_stats *stats, int n, const char **names, const char **texts)
{
	cairn_import_options io;
	cairn_import *im;
	int rc;

	memset(&io, 0, sizeof(io));
	io.commit.domain = "d";
	io.commit.prov.actor = "importer";
	io.batch = batch;
	io.on_error = on_error;
	io.on_bad_line = on_bad;
	io.ctx = bad;
	rc = cairn_import_begin(st, &io, &im);
	for (int i = 0; !rc && i < n; i++) {
		FILE *f = fmemopen((void *)texts[i], strlen(texts[i]), "r");

		rc = cairn_import_feed(im, names[i], f);
		fclose(f);
	}
	if (im) {
		int erc = cairn_import_end(im, stats);

		if (!rc)
			rc = erc;
	}
	return rc;
}

void test_import_forward(void)
{
	cairn_store *st = test_store();
	struct bad bad = {0};
	cairn_import_stats stats;
	const char *names[] = {"links.jsonl", "records.jsonl"};
	const char *texts[] = {
		/* Links before any Record they name. */
		"{\"rel\":\"supplied_by\",\"from\":\"Part:P1\",\"to\":\"Supplier:S1\"}\n"
		"{\"rel\":\"stocked_at\",\"from\":\"Part:P2\",\"to\":\"Plant:L1\"}\n",
		/* Parts before the Suppliers they reference, across many small batches. */
		"{\"kind\":\"Part\",\"key\":\"P1\",\"values\":{\"sku\":\"a\",\"supplier\":\"S2\"}}\n"
		"\n"
		"{\"kind\":\"Part\",\"key\":\"P2\",\"values\":{\"sku\":\"b\",\"supplier\":\"S1\"}}\n"
		"{\"kind\":\"Plant\",\"key\":\"L1\"}\n"
		"{\"kind\":\"Supplier\",\"key\":\"S1\",\"values\":{\"vat\":\"1\"}}\n"
		"{\"kind\":\"Plant\",\"key\":\"L2\"}\n"
		"{\"kind\":\"Plant\",\"key\":\"L3\"}\n"
		"{\"kind\":\"Supplier\",\"key\":\"S2\",\"values\":{\"vat\":\"2\"}}\n",
	};
	cairn_read_options ro = {0};
	cairn_txn *t;
	cairn_record r;
	uint64_t n;

	CHECK(st);
	OK(import(st, 2, CAIRN_ON_ERROR_STOP, &bad, &stats, 2, names, texts));
	CHECK(bad.n == 0);
	CHECK(stats.records == 7 && stats.links == 2 && stats.skipped == 0 && stats.deferred == 0);
	CHECK(stats.lines == 10);
	ro.domain = "d";
	OK(cairn_txn_begin(st, &ro, &t));
	OK(cairn_get(t, "Part", "P1", 2, &r));
	OK(cairn_count(t, "Supplier", &n));
	CHECK(n == 2);
	{
		cairn_link l[4];
		cairn_link_cursor cur = {{0}};
		size_t nl;

		OK(cairn_links(t, "Part", "P1", 2, CAIRN_OUT, NULL, &cur, l, 4, &nl));
		CHECK(nl == 1);
	}
	cairn_txn_end(t);
	OK(cairn_check(st, "d", NULL, NULL, NULL));
	cairn_close(st);
}

/*
 * Every reference pointing forward across batches, at a size where a
 * waiting change looked for by a scan, or moved by shifting the batch,
 * would take minutes: 20,000 Parts, each patched and linked, then their
 * Suppliers and Plants, in batches of 1,000. The store is the one the same
 * lines make in dependency order.
 */
void test_import_forward_many(void)
{
	enum { N = 20000 };
	const char *names[] = {"fwd.jsonl"}, *names2[] = {"dep.jsonl"};
	size_t cap = (size_t)N * 400, a = 0, b = 0;
	char *fwd = malloc(cap), *dep = malloc(cap), *parts = malloc(cap), *ends = malloc(cap);
	size_t np = 0, ne = 0;
	cairn_import_stats stats;
	struct bad bad = {0};
	char *one = NULL, *two = NULL;
	cairn_store *st;

	CHECK(fwd && dep && parts && ends);
	if (!fwd || !dep || !parts || !ends)
		goto out;
	for (int i = 0; i < N; i++) {
		np += (size_t)snprintf(parts + np, cap - np,
				       "{\"kind\":\"Part\",\"key\":\"P%d\",\"values\":"
				       "{\"sku\":\"s%d\",\"supplier\":\"S%d\"}}\n"
				       "{\"rel\":\"stocked_at\",\"from\":\"Part:P%d\",\"to\":\"Plant:L%d\"}\n",
				       i, i, i % 5000, i, i % 3000);
		if (i % 2 == 0) /* a later change of the same Part waits behind the first */
			np += (size_t)snprintf(parts + np, cap - np,
					       "{\"kind\":\"Part\",\"key\":\"P%d\",\"op\":\"patch\","
					       "\"values\":{\"price\":%d.5}}\n",
					       i, i % 100);
	}
	for (int i = 0; i < 5000; i++)
		ne += (size_t)snprintf(ends + ne, cap - ne,
				       "{\"kind\":\"Supplier\",\"key\":\"S%d\",\"values\":{\"vat\":\"v%d\"}}\n",
				       i, i);
	for (int i = 0; i < 3000; i++)
		ne += (size_t)snprintf(ends + ne, cap - ne, "{\"kind\":\"Plant\",\"key\":\"L%d\"}\n", i);
	a = (size_t)snprintf(fwd, cap, "%s%s", parts, ends);
	b = (size_t)snprintf(dep, cap, "%s%s", ends, parts);
	CHECK(a == b && a < cap);
	st = test_store();
	CHECK(st);
	if (st) {
		OK(import(st, 1000, CAIRN_ON_ERROR_STOP, &bad, &stats, 1, names, (const char **)&fwd));
		CHECK(bad.n == 0 && stats.skipped == 0 && stats.deferred == 0);
		CHECK(stats.records == N + N / 2 + 8000 && stats.links == N);
		one = test_export(st, "d");
		OK(cairn_check(st, "d", NULL, NULL, NULL));
		cairn_close(st);
	}
	{
		char cmd[600];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", test_path("store"));
		CHECK(system(cmd) == 0);
	}
	st = test_store();
	CHECK(st);
	if (st) {
		OK(import(st, 1000, CAIRN_ON_ERROR_STOP, &bad, &stats, 1, names2, (const char **)&dep));
		two = test_export(st, "d");
		cairn_close(st);
	}
	CHECK(one && two && strcmp(one, two) == 0);
out:
	free(one);
	free(two);
	free(fwd);
	free(dep);
	free(parts);
	free(ends);
}

void test_import_errors(void)
{
	cairn_store *st = test_store();
	struct bad bad = {0};
	cairn_import_stats stats;
	const char *names[] = {"in.jsonl"};
	const char *bad3[] = {"{\"kind\":\"Plant\",\"key\":\"A\"}\n"
			      "{\"kind\":\"Plant\",\"key\":\"B\"}\n"
			      "{\"kind\":\"Plant\",\"key\":\"C\",\"values\":{\"city\":7}}\n"
			      "{\"kind\":\"Plant\",\"key\":\"D\"}\n"};
	const char *never[] = {"{\"kind\":\"Plant\",\"key\":\"X\"}\n"
			       "{\"kind\":\"Part\",\"key\":\"P\",\"values\":{\"sku\":\"s\",\"supplier\":\"Nobody\"}}\n"
			       "{\"kind\":\"Plant\",\"key\":\"Y\"}\n"};
	const char *mixed[] = {"{\"kind\":\"Plant\",\"key\":\"M1\"}\n"
			       "not json\n"
			       "{\"kind\":\"Nope\",\"key\":\"x\"}\n"
			       "{\"kind\":\"Plant\",\"key\":\"M2\"}\n"
			       "{\"rel\":\"stocked_at\",\"from\":\"Part:none\",\"to\":\"Plant:M1\"}\n"};
	cairn_read_options ro = {0};
	cairn_txn *t;
	cairn_record r;

	CHECK(st);
	/* Stop: the bad line is named, batches before it stay committed, nothing after. */
	CHECK_RC(import(st, 1, CAIRN_ON_ERROR_STOP, &bad, &stats, 1, names, bad3), CAIRN_ETYPE);
	CHECK(strstr(cairn_errmsg(), "in.jsonl:3") != NULL);
	CHECK(bad.n == 1 && bad.lines[0] == 3);
	ro.domain = "d";
	OK(cairn_txn_begin(st, &ro, &t));
	OK(cairn_get(t, "Plant", "B", 1, &r));
	CHECK_RC(cairn_get(t, "Plant", "D", 1, &r), CAIRN_ENOTFOUND);
	cairn_txn_end(t);
	/* A reference that is never satisfied fails with the line that made it. */
	memset(&bad, 0, sizeof(bad));
	CHECK_RC(import(st, 10, CAIRN_ON_ERROR_STOP, &bad, &stats, 1, names, never), CAIRN_EREF);
	CHECK(strstr(cairn_errmsg(), "in.jsonl:2") != NULL && strstr(cairn_errmsg(), "Nobody"));
	/* Skip: each bad line is reported with its number and the rest goes in. */
	memset(&bad, 0, sizeof(bad));
	OK(import(st, 2, CAIRN_ON_ERROR_SKIP, &bad, &stats, 1, names, mixed));
	CHECK(bad.n == 3 && stats.skipped == 3);
	CHECK(bad.lines[0] == 2 && bad.codes[0] == CAIRN_EJSON);
	CHECK(bad.lines[1] == 3 && bad.codes[1] == CAIRN_EUNKNOWNKIND);
	CHECK(bad.lines[2] == 5 && bad.codes[2] == CAIRN_ELINKEND);
	OK(cairn_txn_begin(st, &ro, &t));
	OK(cairn_get(t, "Plant", "M2", 2, &r));
	cairn_txn_end(t);
	OK(cairn_check(st, "d", NULL, NULL, NULL));
	cairn_close(st);
}

void test_import_roundtrip(void)
{
	cairn_store *st = test_store(), *st2 = NULL;
	cairn_open_options o = {.flags = CAIRN_OPEN_CREATE | CAIRN_OPEN_NOSYNC};
	cairn_commit_options co = {0};
	cairn_import_stats stats;
	struct bad bad = {0};
	char *all = NULL, *exp1, *exp2;
	size_t len = 0;
	FILE *f = open_memstream(&all, &len);
	const char *names[] = {"export"};
	const char *texts[1];

	CHECK(st && f);
	for (int i = 0; i < 300; i++) {
		fprintf(f, "{\"kind\":\"Supplier\",\"key\":\"S%03d\",\"title\":\"Supplier \\\"%d\\\" \\u00fc\\n\","
			   "\"values\":{\"vat\":\"V%d\",\"rating\":%d,\"tags\":[\"x\",\"y%d\"]},\"vector\":[%d.5,0.25,-1]}\n",
			i, i, i, i - 150, i, i);
		fprintf(f, "{\"kind\":\"Part\",\"key\":\"P%03d\",\"values\":{\"sku\":\"K%d\",\"supplier\":\"S%03d\",\"price\":%d.125}}\n",
			i, i, (i * 7) % 300, i);
		fprintf(f, "{\"rel\":\"supplied_by\",\"from\":\"Part:P%03d\",\"to\":\"Supplier:S%03d\"%s}\n",
			i, (i * 11) % 300, i % 3 ? "" : ",\"values\":{\"w\":1}");
	}
	fclose(f);
	texts[0] = all;
	OK(import(st, 128, CAIRN_ON_ERROR_STOP, &bad, &stats, 1, names, texts));
	CHECK(stats.records == 600 && stats.links == 300);
	free(all);
	exp1 = test_export(st, "d");
	CHECK(exp1);
	/* Import the export elsewhere: the second export is byte-identical. */
	OK(cairn_open(test_path("second"), &o, &st2));
	OK(cairn_domain_create(st2, "d"));
	co.domain = "d";
	OK(cairn_schema_apply(st2, &co, test_schema, strlen(test_schema), NULL));
	texts[0] = exp1;
	OK(import(st2, 1000, CAIRN_ON_ERROR_STOP, &bad, &stats, 1, names, texts));
	exp2 = test_export(st2, "d");
	CHECK(exp2 && strcmp(exp1, exp2) == 0);
	CHECK(strstr(exp1, "\"vector\":[7.5,0.25,-1]") != NULL);
	OK(cairn_check(st2, "d", NULL, NULL, NULL));
	free(exp1);
	free(exp2);
	cairn_close(st2);
	cairn_close(st);
}

/* What the import ends with is what its lines say, in their order, whatever the batch size. */
void test_import_order(void)
{
	const char *names[] = {"in.jsonl"};
	const char *texts[] = {
		/* Line 1 waits for S9 (line 5); lines 2 and 3 change the same Part and must follow it. */
		"{\"kind\":\"Part\",\"key\":\"P\",\"title\":\"first\",\"values\":{\"sku\":\"a\",\"supplier\":\"S9\"}}\n"
		"{\"kind\":\"Part\",\"key\":\"P\",\"op\":\"patch\",\"values\":{\"price\":2.5}}\n"
		"{\"kind\":\"Part\",\"key\":\"Q\",\"values\":{\"sku\":\"q\"}}\n"
		"{\"kind\":\"Part\",\"key\":\"Q\",\"op\":\"delete\"}\n"
		"{\"kind\":\"Supplier\",\"key\":\"S9\",\"values\":{\"vat\":\"9\"}}\n"
		"{\"kind\":\"Part\",\"key\":\"R\",\"values\":{\"sku\":\"r\",\"supplier\":\"S10\"}}\n"
		"{\"kind\":\"Part\",\"key\":\"R\",\"op\":\"delete\"}\n"
		"{\"kind\":\"Supplier\",\"key\":\"S10\",\"values\":{\"vat\":\"10\"}}\n"};
	char *first = NULL;

	for (size_t batch = 1; batch <= 9; batch++) {
		cairn_store *st;
		struct bad bad = {0};
		cairn_import_stats stats;
		cairn_read_options ro = {0};
		cairn_txn *t;
		cairn_record r;
		char *exp;

		if (batch > 1) {
			char cmd[600];

			snprintf(cmd, sizeof(cmd), "rm -rf '%s'", test_path("store"));
			CHECK(system(cmd) == 0);
		}
		st = test_store();
		CHECK(st);
		OK(import(st, batch, CAIRN_ON_ERROR_STOP, &bad, &stats, 1, names, texts));
		ro.domain = "d";
		OK(cairn_txn_begin(st, &ro, &t));
		OK(cairn_get(t, "Part", "P", 1, &r));
		CHECK(test_streq(r.title, r.title_len, "first"));
		CHECK(test_streq(r.values, r.values_len, "{\"price\":2.5,\"sku\":\"a\",\"supplier\":\"S9\"}"));
		CHECK_RC(cairn_get(t, "Part", "Q", 1, &r), CAIRN_ENOTFOUND);
		CHECK_RC(cairn_get(t, "Part", "R", 1, &r), CAIRN_ENOTFOUND);
		cairn_txn_end(t);
		exp = test_export(st, "d");
		CHECK(exp);
		if (!first)
			first = exp;
		else {
			CHECK(strcmp(first, exp) == 0);
			free(exp);
		}
		OK(cairn_check(st, "d", NULL, NULL, NULL));
		cairn_close(st);
	}
	free(first);
}

/* Stopping at a bad line names the first bad line, and --expect holds across batches. */
void test_import_first_error(void)
{
	cairn_store *st = test_store();
	struct bad bad = {0};
	cairn_import_stats stats;
	const char *names[] = {"in.jsonl"};
	const char *two_bad[] = {"{\"kind\":\"Plant\",\"key\":\"A\"}\n"
				 "{\"kind\":\"Plant\",\"key\":\"B\",\"values\":{\"city\":1}}\n"
				 "{\"kind\":\"Plant\",\"key\":\"C\",\"values\":{\"nope\":1}}\n"};
	const char *json_after[] = {"{\"kind\":\"Plant\",\"key\":\"D\",\"values\":{\"city\":2}}\n"
				    "not json\n"};
	const char *many[] = {"{\"kind\":\"Plant\",\"key\":\"E\"}\n{\"kind\":\"Plant\",\"key\":\"F\"}\n"
			      "{\"kind\":\"Plant\",\"key\":\"G\"}\n"};
	cairn_import_options io;
	cairn_import *im;
	FILE *f;

	CHECK(st);
	CHECK_RC(import(st, 10, CAIRN_ON_ERROR_STOP, &bad, &stats, 1, names, two_bad), CAIRN_ETYPE);
	CHECK(strstr(cairn_errmsg(), "in.jsonl:2") != NULL);
	memset(&bad, 0, sizeof(bad));
	CHECK_RC(import(st, 10, CAIRN_ON_ERROR_STOP, &bad, &stats, 1, names, json_after), CAIRN_ETYPE);
	CHECK(strstr(cairn_errmsg(), "in.jsonl:1") != NULL);
	/* Expecting the head at the start, an import of three batches succeeds. */
	memset(&io, 0, sizeof(io));
	io.commit.domain = "d";
	io.commit.has_expect = 1;
	io.commit.expect_revision = test_head(st, "d");
	io.batch = 1;
	OK(cairn_import_begin(st, &io, &im));
	f = fmemopen((void *)many[0], strlen(many[0]), "r");
	OK(cairn_import_feed(im, "many", f));
	fclose(f);
	OK(cairn_import_end(im, &stats));
	CHECK(stats.commits == 3);
	/* A stale expectation is refused before anything is written. */
	io.commit.expect_revision = 1;
	OK(cairn_import_begin(st, &io, &im));
	f = fmemopen((void *)many[0], strlen(many[0]), "r");
	CHECK_RC(cairn_import_feed(im, "many", f), CAIRN_ECONFLICT);
	fclose(f);
	cairn_import_abort(im);
	cairn_close(st);
}
