/* Integration tests of reads: pages with keyset cursors, Link pages, time travel, counts and the log. */
#include <stdlib.h>

#include "tests.h"

static cairn_txn *begin(cairn_store *st, uint64_t at)
{
	cairn_read_options ro = {0};
	cairn_txn *t = NULL;

	ro.domain = "d";
	ro.at_revision = at;
	if (cairn_txn_begin(st, &ro, &t))
		fprintf(stderr, "    begin: %s\n", cairn_errmsg());
	return t;
}

void test_read_page(void)
{
	cairn_store *st = test_store();
	cairn_record recs[7];
	cairn_txn *t;
	char line[128], *all = NULL;
	size_t n, len = 0, seen = 0;
	FILE *f = open_memstream(&all, &len);

	CHECK(st && f);
	/* Keys whose byte order differs from their numeric order, and a prefix of another key. */
	for (int i = 0; i < 25; i++)
		fprintf(f, "{\"kind\":\"Plant\",\"key\":\"L%d\"}\n", i);
	fprintf(f, "{\"kind\":\"Plant\",\"key\":\"L1x\"}\n{\"kind\":\"Supplier\",\"key\":\"S\",\"values\":{\"vat\":\"v\"}}");
	fclose(f);
	OK(test_commit(st, all, NULL));
	free(all);
	OK(test_commit(st, "{\"kind\":\"Plant\",\"key\":\"L3\",\"op\":\"delete\"}\n"
			   "{\"kind\":\"Plant\",\"key\":\"L4\",\"title\":\"changed\"}",
		       NULL));
	t = begin(st, 0);
	CHECK(t);
	/* Walk all pages of 7: each key once, in byte order, the deleted one absent. */
	{
		char prev[128] = "";
		const char *after = NULL;
		size_t after_len = 0;
		char afterbuf[64];

		do {
			OK(cairn_page(t, "Plant", after, after_len, recs, 7, &n));
			for (size_t i = 0; i < n; i++) {
				snprintf(line, sizeof(line), "%.*s", (int)recs[i].key_len, recs[i].key);
				CHECK(strcmp(prev, line) < 0);
				CHECK(strcmp(line, "L3") != 0);
				CHECK(strcmp(recs[i].kind, "Plant") == 0);
				if (strcmp(line, "L4") == 0)
					CHECK(test_streq(recs[i].title, recs[i].title_len, "changed"));
				snprintf(prev, sizeof(prev), "%s", line);
				seen++;
			}
			if (n) {
				memcpy(afterbuf, recs[n - 1].key, recs[n - 1].key_len);
				after = afterbuf;
				after_len = recs[n - 1].key_len;
			}
		} while (n == 7);
	}
	CHECK(seen == 25); /* 26 put, 1 deleted */
	/* "L1x" follows "L1" and precedes "L10". */
	OK(cairn_page(t, "Plant", "L1", 2, recs, 2, &n));
	CHECK(n == 2 && test_streq(recs[0].key, recs[0].key_len, "L10"));
	OK(cairn_page(t, "Plant", NULL, 0, recs, 3, &n));
	CHECK(n == 3 && test_streq(recs[0].key, recs[0].key_len, "L0") &&
	      test_streq(recs[1].key, recs[1].key_len, "L1") &&
	      test_streq(recs[2].key, recs[2].key_len, "L10"));
	OK(cairn_page(t, "Plant", "L9", 2, recs, 7, &n));
	CHECK(n == 0);
	CHECK_RC(cairn_page(t, "Plant", NULL, 0, recs, 0, &n), CAIRN_EINVAL);
	CHECK_RC(cairn_page(t, "Plant", NULL, 0, recs, CAIRN_MAX_PAGE + 1, &n), CAIRN_EINVAL);
	CHECK_RC(cairn_page(t, "Nope", NULL, 0, recs, 5, &n), CAIRN_EUNKNOWNKIND);
	/* The Supplier does not leak into the Plant pages (Kinds are separate). */
	OK(cairn_page(t, "Supplier", NULL, 0, recs, 7, &n));
	CHECK(n == 1);
	cairn_txn_end(t);
	cairn_close(st);
}

void test_read_links_page(void)
{
	cairn_store *st = test_store();
	cairn_link l[4];
	cairn_link_cursor cur;
	cairn_txn *t;
	char *all = NULL;
	size_t len = 0, n, total = 0, out_seen = 0, in_seen = 0;
	FILE *f = open_memstream(&all, &len);

	CHECK(st && f);
	fprintf(f, "{\"kind\":\"Supplier\",\"key\":\"S\",\"values\":{\"vat\":\"v\"}}\n");
	fprintf(f, "{\"kind\":\"Part\",\"key\":\"hub\",\"values\":{\"sku\":\"hub\"}}\n");
	fprintf(f, "{\"rel\":\"supplied_by\",\"from\":\"Part:hub\",\"to\":\"Supplier:S\"}\n");
	for (int i = 0; i < 10; i++) {
		fprintf(f, "{\"kind\":\"Plant\",\"key\":\"L%d\"}\n", i);
		fprintf(f, "{\"rel\":\"stocked_at\",\"from\":\"Part:hub\",\"to\":\"Plant:L%d\"}\n", i);
	}
	fclose(f);
	OK(test_commit(st, all, NULL));
	free(all);
	t = begin(st, 0);
	CHECK(t);
	/* 11 Links out, in pages of 4, each once. */
	memset(&cur, 0, sizeof(cur));
	do {
		OK(cairn_links(t, "Part", "hub", 3, CAIRN_BOTH, NULL, &cur, l, 4, &n));
		for (size_t i = 0; i < n; i++) {
			CHECK(test_streq(l[i].from_key, l[i].from_key_len, "hub"));
			out_seen += strcmp(l[i].from_kind, "Part") == 0;
		}
		total += n;
	} while (n == 4);
	CHECK(total == 11 && out_seen == 11);
	/* Filtered by Relation. */
	memset(&cur, 0, sizeof(cur));
	OK(cairn_links(t, "Part", "hub", 3, CAIRN_OUT, "supplied_by", &cur, l, 4, &n));
	CHECK(n == 1 && strcmp(l[0].to_kind, "Supplier") == 0);
	memset(&cur, 0, sizeof(cur));
	OK(cairn_links(t, "Plant", "L3", 2, CAIRN_IN, NULL, &cur, l, 4, &n));
	CHECK(n == 1 && test_streq(l[0].from_key, l[0].from_key_len, "hub"));
	in_seen = n;
	CHECK(in_seen == 1);
	memset(&cur, 0, sizeof(cur));
	CHECK_RC(cairn_links(t, "Part", "nobody", 6, CAIRN_BOTH, NULL, &cur, l, 4, &n),
		 CAIRN_ENOTFOUND);
	CHECK_RC(cairn_links(t, "Part", "hub", 3, CAIRN_BOTH, "nope", &cur, l, 4, &n),
		 CAIRN_EUNKNOWNREL);
	CHECK_RC(cairn_links(t, "Part", "hub", 3, 7, NULL, &cur, l, 4, &n), CAIRN_EINVAL);
	cairn_txn_end(t);
	cairn_close(st);
}

void test_read_at_revision(void)
{
	cairn_store *st = test_store();
	cairn_commit_result r1, r2, r3;
	cairn_record r;
	cairn_link l[2];
	cairn_link_cursor cur;
	cairn_txn *t;
	size_t n;
	uint64_t c;

	CHECK(st);
	OK(test_commit(st, "{\"kind\":\"Part\",\"key\":\"P\",\"title\":\"one\",\"values\":{\"sku\":\"1\"}}\n"
			   "{\"kind\":\"Plant\",\"key\":\"L\"}",
		       &r1));
	OK(test_commit(st, "{\"kind\":\"Part\",\"key\":\"P\",\"title\":\"two\",\"values\":{\"sku\":\"1\"}}\n"
			   "{\"rel\":\"stocked_at\",\"from\":\"Part:P\",\"to\":\"Plant:L\"}",
		       &r2));
	OK(test_commit(st, "{\"rel\":\"stocked_at\",\"from\":\"Part:P\",\"to\":\"Plant:L\",\"op\":\"unlink\"}\n"
			   "{\"kind\":\"Part\",\"key\":\"P\",\"op\":\"delete\"}",
		       &r3));
	/* Each revision answers what it answered then. */
	t = begin(st, r1.revision);
	CHECK(t && cairn_txn_revision(t) == r1.revision);
	OK(cairn_get(t, "Part", "P", 1, &r));
	CHECK(test_streq(r.title, r.title_len, "one"));
	memset(&cur, 0, sizeof(cur));
	OK(cairn_links(t, "Part", "P", 1, CAIRN_BOTH, NULL, &cur, l, 2, &n));
	CHECK(n == 0);
	OK(cairn_count(t, "Part", &c));
	CHECK(c == 1);
	cairn_txn_end(t);
	t = begin(st, r2.revision);
	OK(cairn_get(t, "Part", "P", 1, &r));
	CHECK(test_streq(r.title, r.title_len, "two") && r.revision == r2.revision);
	memset(&cur, 0, sizeof(cur));
	OK(cairn_links(t, "Part", "P", 1, CAIRN_BOTH, NULL, &cur, l, 2, &n));
	CHECK(n == 1);
	cairn_txn_end(t);
	t = begin(st, r3.revision);
	CHECK_RC(cairn_get(t, "Part", "P", 1, &r), CAIRN_ENOTFOUND);
	OK(cairn_count(t, "Part", &c));
	CHECK(c == 0);
	cairn_txn_end(t);
	/* Before the schema existed, and a revision that does not exist yet. */
	t = begin(st, 1);
	CHECK_RC(cairn_get(t, "Part", "P", 1, &r), CAIRN_ENOTFOUND);
	cairn_txn_end(t);
	{
		cairn_read_options ro = {0};

		ro.domain = "d";
		ro.at_revision = r3.revision + 1;
		CHECK_RC(cairn_txn_begin(st, &ro, &t), CAIRN_ENOTFOUND);
		/* By time: now is after everything; the epoch is before everything. */
		ro.at_revision = 0;
		ro.at_time_ms = 1;
		OK(cairn_txn_begin(st, &ro, &t));
		CHECK(cairn_txn_revision(t) == 0);
		cairn_txn_end(t);
		ro.at_time_ms = (int64_t)4102444800000; /* 2100 */
		OK(cairn_txn_begin(st, &ro, &t));
		CHECK(cairn_txn_revision(t) == r3.revision);
		cairn_txn_end(t);
	}
	/* A snapshot stays consistent while commits go on. */
	t = begin(st, 0);
	OK(test_commit(st, "{\"kind\":\"Part\",\"key\":\"Q\",\"values\":{\"sku\":\"q\"}}", NULL));
	CHECK_RC(cairn_get(t, "Part", "Q", 1, &r), CAIRN_ENOTFOUND);
	cairn_txn_end(t);
	t = begin(st, 0);
	OK(cairn_get(t, "Part", "Q", 1, &r));
	cairn_txn_end(t);
	cairn_close(st);
}

void test_read_count_log(void)
{
	cairn_store *st = test_store();
	cairn_revision revs[10];
	const char *kinds[8];
	cairn_txn *t;
	size_t n;
	uint64_t c;

	CHECK(st);
	OK(test_commit(st, "{\"kind\":\"Plant\",\"key\":\"A\"}\n{\"kind\":\"Plant\",\"key\":\"B\"}", NULL));
	OK(test_commit(st, "{\"kind\":\"Plant\",\"key\":\"C\"}", NULL));
	OK(test_commit(st, "{\"kind\":\"Plant\",\"key\":\"A\",\"op\":\"delete\"}", NULL));
	t = begin(st, 0);
	CHECK(t);
	OK(cairn_count(t, "Plant", &c));
	CHECK(c == 2);
	OK(cairn_count(t, "Part", &c));
	CHECK(c == 0);
	OK(cairn_kind_list(t, kinds, 8, &n));
	CHECK(n == 3 && strcmp(kinds[0], "Supplier") == 0 && strcmp(kinds[2], "Plant") == 0);
	/* The log: newest first, down to the schema revision. */
	OK(cairn_log(t, 0, revs, 10, &n));
	CHECK(n == 4);
	CHECK(revs[0].revision == 4 && revs[3].revision == 1 && revs[3].type == CAIRN_REV_SCHEMA);
	CHECK(revs[0].changes == 1 && revs[1].changes == 1 && revs[2].changes == 2);
	OK(cairn_log(t, 3, revs, 10, &n));
	CHECK(n == 2 && revs[0].revision == 2);
	OK(cairn_log(t, 0, revs, 2, &n));
	CHECK(n == 2 && revs[1].revision == 3);
	cairn_txn_end(t);
	cairn_close(st);
}
