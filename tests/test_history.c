/* History pages and lineage of Records and Links, across deletes, re-creations and branches. */
#include <stdlib.h>

#include "tests.h"

static cairn_txn *begin(cairn_store *st, const char *branch, uint64_t at)
{
	cairn_read_options ro = {0};
	cairn_txn *t = NULL;

	ro.domain = "d";
	ro.branch = branch;
	ro.at_revision = at;
	if (cairn_txn_begin(st, &ro, &t))
		fprintf(stderr, "    begin: %s\n", cairn_errmsg());
	return t;
}

static int commit_as(cairn_store *st, const char *branch, const char *actor, double conf,
		     const char *line, cairn_commit_result *res)
{
	cairn_commit_options co = {0};
	cairn_changeset *cs;
	int rc;

	if ((rc = cairn_changeset_new(&cs)))
		return rc;
	if (!(rc = cairn_changeset_add_json(cs, line, strlen(line)))) {
		co.domain = "d";
		co.branch = branch;
		co.prov.actor = actor;
		co.prov.confidence = conf;
		co.prov.has_confidence = 1;
		rc = cairn_commit(st, &co, cs, res);
	}
	cairn_changeset_free(cs);
	return rc;
}

void test_history_record(void)
{
	cairn_store *st = test_store();
	cairn_commit_result r[6];
	cairn_history_entry h[10];
	cairn_history_cursor cur = {0, 0};
	cairn_txn *t;
	size_t n;

	CHECK(st);
	OK(commit_as(st, NULL, "alice", 0.9,
		     "{\"kind\":\"Supplier\",\"key\":\"S\",\"title\":\"Acme\",\"values\":{\"vat\":\"V\",\"rating\":3}}", &r[0]));
	OK(commit_as(st, NULL, "bob", 0.5,
		     "{\"kind\":\"Supplier\",\"key\":\"S\",\"op\":\"patch\",\"values\":{\"rating\":4,\"country\":\"DE\"}}", &r[1]));
	OK(commit_as(st, NULL, "carol", 1, "{\"kind\":\"Supplier\",\"key\":\"S\",\"op\":\"delete\"}", &r[2]));
	OK(commit_as(st, NULL, "dave", 1,
		     "{\"kind\":\"Supplier\",\"key\":\"S\",\"title\":\"Acme 2\",\"values\":{\"vat\":\"W\"}}", &r[3]));
	t = begin(st, NULL, 0);
	CHECK(t);
	OK(cairn_history(t, "Supplier", "S", 1, &cur, h, 10, &n));
	CHECK(n == 4 && cur.done);
	/* Newest first: re-created, deleted, updated, created. */
	CHECK(h[0].change == CAIRN_CREATED && h[0].rev.revision == r[3].revision);
	CHECK(test_streq(h[0].rev.actor, h[0].rev.actor_len, "dave"));
	CHECK(test_streq(h[0].title, h[0].title_len, "Acme 2") && h[0].title_before_len == 0);
	CHECK(h[1].change == CAIRN_DELETED && test_streq(h[1].values, h[1].values_len, "{}"));
	CHECK(test_streq(h[1].diff, h[1].diff_len,
			 "{\"country\":{\"before\":\"DE\",\"after\":null},\"rating\":{\"before\":4,"
			 "\"after\":null},\"vat\":{\"before\":\"V\",\"after\":null}}"));
	CHECK(h[2].change == CAIRN_UPDATED && h[2].rev.confidence == 0.5);
	CHECK(test_streq(h[2].diff, h[2].diff_len,
			 "{\"country\":{\"before\":null,\"after\":\"DE\"},\"rating\":{\"before\":3,"
			 "\"after\":4}}"));
	CHECK(test_streq(h[2].title_before, h[2].title_before_len, "Acme"));
	CHECK(h[3].change == CAIRN_CREATED && test_streq(h[3].rev.actor, h[3].rev.actor_len, "alice"));
	/* Pages of one, through the cursor. */
	memset(&cur, 0, sizeof(cur));
	for (int i = 0; i < 4; i++) {
		OK(cairn_history(t, "Supplier", "S", 1, &cur, h, 1, &n));
		CHECK(n == 1 && h[0].rev.revision == r[3 - i].revision);
	}
	CHECK(cur.done);
	OK(cairn_history(t, "Supplier", "S", 1, &cur, h, 1, &n));
	CHECK(n == 0);
	memset(&cur, 0, sizeof(cur));
	CHECK_RC(cairn_history(t, "Supplier", "nobody", 6, &cur, h, 10, &n), CAIRN_ENOTFOUND);
	cairn_txn_end(t);
	/* At a past revision, the history stops there. */
	t = begin(st, NULL, r[1].revision);
	memset(&cur, 0, sizeof(cur));
	OK(cairn_history(t, "Supplier", "S", 1, &cur, h, 10, &n));
	CHECK(n == 2 && h[0].rev.revision == r[1].revision);
	cairn_txn_end(t);
	/* On a branch: its own Versions, then the parent's before the fork. */
	OK(cairn_branch_create(st, "d", "b", NULL));
	OK(commit_as(st, "b", "erin", 1,
		     "{\"kind\":\"Supplier\",\"key\":\"S\",\"op\":\"patch\",\"values\":{\"rating\":5}}", &r[4]));
	OK(commit_as(st, NULL, "frank", 1,
		     "{\"kind\":\"Supplier\",\"key\":\"S\",\"op\":\"patch\",\"values\":{\"rating\":1}}", &r[5]));
	t = begin(st, "b", 0);
	memset(&cur, 0, sizeof(cur));
	OK(cairn_history(t, "Supplier", "S", 1, &cur, h, 10, &n));
	CHECK(n == 5 && h[0].rev.revision == r[4].revision && h[1].rev.revision == r[3].revision);
	CHECK(strcmp(h[0].rev.branch, "b") == 0 && strcmp(h[1].rev.branch, "main") == 0);
	cairn_txn_end(t);
	t = begin(st, NULL, 0);
	memset(&cur, 0, sizeof(cur));
	OK(cairn_history(t, "Supplier", "S", 1, &cur, h, 10, &n));
	CHECK(n == 5 && h[0].rev.revision == r[5].revision && h[1].rev.revision == r[3].revision);
	cairn_txn_end(t);
	cairn_close(st);
}

void test_history_link(void)
{
	cairn_store *st = test_store();
	cairn_history_entry h[8];
	cairn_history_cursor cur = {0, 0};
	cairn_lineage_entry le;
	cairn_revision created;
	cairn_commit_result r1, r2;
	cairn_txn *t;
	size_t n;

	CHECK(st);
	OK(test_commit(st, "{\"kind\":\"Supplier\",\"key\":\"S\",\"values\":{\"vat\":\"V\"}}\n"
			   "{\"kind\":\"Part\",\"key\":\"P\",\"values\":{\"sku\":\"A\"}}\n"
			   "{\"rel\":\"supplied_by\",\"from\":\"Part:P\",\"to\":\"Supplier:S\",\"values\":{\"share\":1}}",
		       &r1));
	/* Linked again with the same values: nothing to write, no revision. */
	OK(test_commit(st, "{\"rel\":\"supplied_by\",\"from\":\"Part:P\",\"to\":\"Supplier:S\",\"values\":{\"share\":1}}", &r2));
	CHECK(r2.changes == 0 && r2.unchanged == 1 && r2.revision == r1.revision &&
	      memcmp(r2.hash, r1.hash, 32) == 0);
	OK(test_commit(st, "{\"rel\":\"supplied_by\",\"from\":\"Part:P\",\"to\":\"Supplier:S\",\"values\":{\"share\":0.5}}", NULL));
	OK(test_commit(st, "{\"rel\":\"supplied_by\",\"from\":\"Part:P\",\"to\":\"Supplier:S\",\"op\":\"unlink\"}", NULL));
	t = begin(st, NULL, 0);
	OK(cairn_link_history(t, "supplied_by", "Part", "P", 1, "Supplier", "S", 1, &cur, h, 8, &n));
	CHECK(n == 3);
	CHECK(h[0].change == CAIRN_DELETED && h[1].change == CAIRN_UPDATED && h[2].change == CAIRN_CREATED);
	CHECK(test_streq(h[1].diff, h[1].diff_len, "{\"share\":{\"before\":1,\"after\":0.5}}"));
	CHECK_RC(cairn_link_lineage(t, "supplied_by", "Part", "P", 1, "Supplier", "S", 1, &le, &created),
		 CAIRN_ENOTFOUND); /* unlinked */
	cairn_txn_end(t);
	/* Before the unlink: values set at r1, created at r1. */
	t = begin(st, NULL, r2.revision);
	OK(cairn_link_lineage(t, "supplied_by", "Part", "P", 1, "Supplier", "S", 1, &le, &created));
	CHECK(le.rev.revision == r1.revision && created.revision == r1.revision);
	memset(&cur, 0, sizeof(cur));
	CHECK_RC(cairn_link_history(t, "supplied_by", "Part", "P", 1, "Supplier", "X", 1, &cur, h, 8, &n),
		 CAIRN_ENOTFOUND);
	CHECK_RC(cairn_link_history(t, "nope", "Part", "P", 1, "Supplier", "S", 1, &cur, h, 8, &n),
		 CAIRN_EUNKNOWNREL);
	cairn_txn_end(t);
	cairn_close(st);
}

void test_lineage_values(void)
{
	cairn_store *st = test_store();
	cairn_commit_result r1, r2, r3;
	cairn_lineage_entry le[10];
	cairn_revision created;
	cairn_txn *t;
	size_t n;

	CHECK(st);
	OK(commit_as(st, NULL, "alice", 0.9,
		     "{\"kind\":\"Supplier\",\"key\":\"S\",\"title\":\"Acme\",\"values\":{\"vat\":\"V\",\"rating\":3,\"country\":\"DE\"}}", &r1));
	OK(commit_as(st, NULL, "bob", 0.6,
		     "{\"kind\":\"Supplier\",\"key\":\"S\",\"op\":\"patch\",\"values\":{\"rating\":4}}", &r2));
	/* A put that repeats a value keeps that value's lineage. */
	OK(commit_as(st, NULL, "carol", 0.7,
		     "{\"kind\":\"Supplier\",\"key\":\"S\",\"title\":\"Acme\",\"values\":{\"vat\":\"V\",\"rating\":4,\"country\":\"FR\"}}", &r3));
	t = begin(st, NULL, 0);
	OK(cairn_lineage(t, "Supplier", "S", 1, le, 10, &n, &created));
	CHECK(n == 4);
	CHECK(strcmp(le[0].attribute, "") == 0 && le[0].rev.revision == r1.revision);
	CHECK(strcmp(le[1].attribute, "vat") == 0 && le[1].rev.revision == r1.revision);
	CHECK(test_streq(le[1].rev.actor, le[1].rev.actor_len, "alice"));
	CHECK(strcmp(le[2].attribute, "country") == 0 && le[2].rev.revision == r3.revision);
	CHECK(strcmp(le[3].attribute, "rating") == 0 && le[3].rev.revision == r2.revision);
	CHECK(le[3].rev.confidence == 0.6);
	CHECK(created.revision == r1.revision);
	CHECK_RC(cairn_lineage(t, "Supplier", "nobody", 6, le, 10, &n, &created), CAIRN_ENOTFOUND);
	cairn_txn_end(t);
	/* After a delete and a re-creation, everything dates from the re-creation. */
	OK(test_commit(st, "{\"kind\":\"Supplier\",\"key\":\"S\",\"op\":\"delete\"}", NULL));
	OK(test_commit(st, "{\"kind\":\"Supplier\",\"key\":\"S\",\"title\":\"Acme\",\"values\":{\"vat\":\"V\"}}", &r1));
	t = begin(st, NULL, 0);
	OK(cairn_lineage(t, "Supplier", "S", 1, le, 10, &n, &created));
	CHECK(n == 2 && le[0].rev.revision == r1.revision && le[1].rev.revision == r1.revision);
	CHECK(created.revision == r1.revision);
	cairn_txn_end(t);
	cairn_close(st);
}
