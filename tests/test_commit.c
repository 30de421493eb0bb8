/* Integration tests of commits through the public API: puts, patches, deletes, Links, provenance, hashes. */
#include <math.h>
#include <stdlib.h>

#include "tests.h"

static int get(cairn_store *st, const char *kind, const char *key, cairn_record *r, cairn_txn **t)
{
	cairn_read_options ro = {0};
	int rc;

	ro.domain = "d";
	rc = cairn_txn_begin(st, &ro, t);
	if (rc)
		return rc;
	return cairn_get(*t, kind, key, strlen(key), r);
}

void test_commit_basic(void)
{
	cairn_store *st = test_store();
	cairn_commit_result res;
	cairn_record r;
	cairn_txn *t;

	CHECK(st);
	OK(test_commit(st, "{\"kind\":\"Supplier\",\"key\":\"S-1\",\"title\":\"Acme \\u00e9\",\"values\":{\"vat\":\"DE1\",\"country\":\"DE\",\"rating\":5,\"since\":\"2020-01-31\",\"audited\":\"2024-05-01T10:00:00Z\",\"active\":true,\"tags\":[\"a\",\"b\"]}}",
		       &res));
	CHECK(res.revision == 2 && res.changes == 1); /* revision 1 is the schema */
	OK(get(st, "Supplier", "S-1", &r, &t));
	CHECK(test_streq(r.key, r.key_len, "S-1"));
	CHECK(test_streq(r.title, r.title_len, "Acme \xc3\xa9"));
	CHECK(strcmp(r.kind, "Supplier") == 0);
	/* Values come back canonical: keys sorted, compact. */
	CHECK(test_streq(r.values, r.values_len,
			 "{\"active\":true,\"audited\":\"2024-05-01T10:00:00Z\",\"country\":\"DE\","
			 "\"rating\":5,\"since\":\"2020-01-31\",\"tags\":[\"a\",\"b\"],\"vat\":\"DE1\"}"));
	CHECK(r.revision == 2 && cairn_txn_revision(t) == 2);
	CHECK_RC(cairn_get(t, "Supplier", "S-2", 3, &r), CAIRN_ENOTFOUND);
	CHECK_RC(cairn_get(t, "Nope", "S-1", 3, &r), CAIRN_EUNKNOWNKIND);
	cairn_txn_end(t);
	/* A put replaces title and values; null values are dropped; an int is a valid float. */
	OK(test_commit(st, "{\"kind\":\"Supplier\",\"key\":\"S-1\",\"title\":\"Acme\",\"values\":{\"vat\":\"DE1\",\"rating\":null}}\n"
			   "{\"kind\":\"Part\",\"key\":\"P-1\",\"values\":{\"sku\":\"K\",\"price\":3}}",
		       &res));
	OK(get(st, "Supplier", "S-1", &r, &t));
	CHECK(test_streq(r.values, r.values_len, "{\"vat\":\"DE1\"}"));
	CHECK(test_streq(r.title, r.title_len, "Acme"));
	cairn_txn_end(t);
	/* An empty change set is refused. */
	{
		cairn_changeset *cs;
		cairn_commit_options co = {0};

		OK(cairn_changeset_new(&cs));
		co.domain = "d";
		CHECK_RC(cairn_commit(st, &co, cs, NULL), CAIRN_EINVAL);
		co.domain = "nope";
		OK(cairn_changeset_put(cs, "Plant", "x", 1, NULL, 0, NULL, 0));
		CHECK_RC(cairn_commit(st, &co, cs, NULL), CAIRN_ENODOMAIN);
		co.domain = "d";
		co.branch = "no-such-branch";
		CHECK_RC(cairn_commit(st, &co, cs, NULL), CAIRN_ENOBRANCH);
		cairn_changeset_free(cs);
	}
	OK(cairn_check(st, "d", NULL, NULL, NULL));
	cairn_close(st);
}

void test_commit_provenance(void)
{
	cairn_store *st = test_store();
	cairn_commit_options co = {0};
	cairn_commit_result res;
	cairn_changeset *cs;
	cairn_revision rv;
	cairn_record r;
	cairn_txn *t;

	CHECK(st);
	OK(cairn_changeset_new(&cs));
	OK(cairn_changeset_put(cs, "Plant", "L1", 2, "Lyon works", 10, "{\"city\":\"Lyon\"}", 15));
	co.domain = "d";
	co.prov.actor = "agent/planner-7";
	co.prov.source = "https://example.com/doc";
	co.prov.message = "learned from the supplier list";
	co.prov.trace_id = "trace-42";
	co.prov.confidence = 0.75;
	co.prov.has_confidence = 1;
	co.prov.client_time_ms = 1700000000000;
	OK(cairn_commit(st, &co, cs, &res));
	cairn_changeset_free(cs);
	OK(get(st, "Plant", "L1", &r, &t));
	OK(cairn_revision_get(t, r.revision, &rv));
	CHECK(rv.revision == res.revision && rv.type == CAIRN_REV_DATA);
	CHECK(test_streq(rv.actor, rv.actor_len, "agent/planner-7"));
	CHECK(test_streq(rv.source, rv.source_len, "https://example.com/doc"));
	CHECK(test_streq(rv.message, rv.message_len, "learned from the supplier list"));
	CHECK(test_streq(rv.trace_id, rv.trace_id_len, "trace-42"));
	CHECK(rv.confidence == 0.75);
	CHECK(rv.client_time_ms == 1700000000000);
	CHECK(rv.time_ms > 1700000000000);
	CHECK(strcmp(rv.branch, "main") == 0);
	CHECK(memcmp(rv.hash, res.hash, 32) == 0);
	CHECK_RC(cairn_revision_get(t, 99, &rv), CAIRN_ENOTFOUND);
	cairn_txn_end(t);
	/* Without confidence, 1.0 is recorded. */
	OK(test_commit(st, "{\"kind\":\"Plant\",\"key\":\"L2\"}", &res));
	OK(get(st, "Plant", "L2", &r, &t));
	OK(cairn_revision_get(t, r.revision, &rv));
	CHECK(rv.confidence == 1.0);
	cairn_txn_end(t);
	cairn_close(st);
}

void test_commit_hash_chain(void)
{
	cairn_store *st = test_store();
	cairn_commit_result a, b;
	cairn_revision rv;
	cairn_read_options ro = {0};
	cairn_txn *t;

	CHECK(st);
	OK(test_commit(st, "{\"kind\":\"Plant\",\"key\":\"L1\"}", &a));
	OK(test_commit(st, "{\"kind\":\"Plant\",\"key\":\"L2\"}", &b));
	CHECK(b.revision == a.revision + 1);
	CHECK(memcmp(a.hash, b.hash, 32) != 0);
	ro.domain = "d";
	OK(cairn_txn_begin(st, &ro, &t));
	OK(cairn_revision_get(t, b.revision, &rv));
	CHECK(rv.parent == a.revision);
	CHECK(memcmp(rv.parent_hash, a.hash, 32) == 0);
	cairn_txn_end(t);
	OK(cairn_check(st, "d", NULL, NULL, NULL));
	cairn_close(st);
}

void test_commit_expect(void)
{
	cairn_store *st = test_store();
	cairn_commit_options co = {0};
	cairn_commit_result res;
	cairn_changeset *cs;
	uint64_t head;

	CHECK(st);
	head = test_head(st, "d");
	OK(cairn_changeset_new(&cs));
	OK(cairn_changeset_put(cs, "Plant", "L1", 2, NULL, 0, NULL, 0));
	co.domain = "d";
	co.has_expect = 1;
	co.expect_revision = head + 5;
	CHECK_RC(cairn_commit(st, &co, cs, NULL), CAIRN_ECONFLICT);
	CHECK(test_head(st, "d") == head);
	co.expect_revision = head;
	OK(cairn_commit(st, &co, cs, &res));
	CHECK(res.revision == head + 1);
	/* The same expectation again is now stale. */
	CHECK_RC(cairn_commit(st, &co, cs, NULL), CAIRN_ECONFLICT);
	cairn_changeset_free(cs);
	cairn_close(st);
}

void test_commit_patch_delete(void)
{
	cairn_store *st = test_store();
	cairn_record r;
	cairn_txn *t;

	CHECK(st);
	OK(test_commit(st, "{\"kind\":\"Part\",\"key\":\"P1\",\"title\":\"bolt\",\"values\":{\"sku\":\"A\",\"status\":\"active\",\"price\":1.5}}", NULL));
	OK(test_commit(st, "{\"kind\":\"Part\",\"key\":\"P1\",\"op\":\"patch\",\"values\":{\"status\":\"eol\",\"price\":null}}", NULL));
	OK(get(st, "Part", "P1", &r, &t));
	CHECK(test_streq(r.values, r.values_len, "{\"sku\":\"A\",\"status\":\"eol\"}"));
	CHECK(test_streq(r.title, r.title_len, "bolt")); /* a patch keeps the title */
	cairn_txn_end(t);
	/* A patch that removes a required value is refused. */
	CHECK_RC(test_commit(st, "{\"kind\":\"Part\",\"key\":\"P1\",\"op\":\"patch\",\"values\":{\"sku\":null}}", NULL),
		 CAIRN_EREQUIRED);
	OK(test_commit(st, "{\"kind\":\"Part\",\"key\":\"P1\",\"op\":\"delete\"}", NULL));
	CHECK_RC(get(st, "Part", "P1", &r, &t), CAIRN_ENOTFOUND);
	cairn_txn_end(t);
	/* Deleted, a unique value is free again; the key can be put again. */
	OK(test_commit(st, "{\"kind\":\"Part\",\"key\":\"P2\",\"values\":{\"sku\":\"A\"}}\n"
			   "{\"kind\":\"Part\",\"key\":\"P1\",\"values\":{\"sku\":\"B\"}}",
		       NULL));
	OK(get(st, "Part", "P1", &r, &t));
	CHECK(test_streq(r.values, r.values_len, "{\"sku\":\"B\"}"));
	cairn_txn_end(t);
	OK(cairn_check(st, "d", NULL, NULL, NULL));
	cairn_close(st);
}

static size_t links(cairn_store *st, const char *kind, const char *key, int dir, cairn_link *out,
		    size_t cap)
{
	cairn_read_options ro = {0};
	cairn_link_cursor cur = {{0}};
	cairn_txn *t;
	size_t n = 0;

	ro.domain = "d";
	if (cairn_txn_begin(st, &ro, &t))
		return 999;
	if (cairn_links(t, kind, key, strlen(key), dir, NULL, &cur, out, cap, &n))
		n = 999;
	cairn_txn_end(t);
	return n;
}

void test_commit_links(void)
{
	cairn_store *st = test_store();
	cairn_link l[8];

	CHECK(st);
	OK(test_commit(st, "{\"kind\":\"Supplier\",\"key\":\"S1\",\"values\":{\"vat\":\"1\"}}\n"
			   "{\"kind\":\"Supplier\",\"key\":\"S2\",\"values\":{\"vat\":\"2\"}}\n"
			   "{\"kind\":\"Part\",\"key\":\"P1\",\"values\":{\"sku\":\"A\"}}\n"
			   "{\"rel\":\"supplied_by\",\"from\":\"Part:P1\",\"to\":\"Supplier:S1\",\"values\":{\"share\":0.5}}\n"
			   "{\"rel\":\"supplied_by\",\"from\":\"Part:P1\",\"to\":\"Supplier:S2\"}",
		       NULL));
	CHECK(links(st, "Part", "P1", CAIRN_OUT, l, 8) == 2);
	CHECK(links(st, "Supplier", "S1", CAIRN_IN, l, 8) == 1);
	CHECK(test_streq(l[0].from_key, l[0].from_key_len, "P1"));
	CHECK(test_streq(l[0].values, l[0].values_len, "{\"share\":0.5}"));
	CHECK(strcmp(l[0].rel, "supplied_by") == 0 && strcmp(l[0].from_kind, "Part") == 0);
	CHECK(links(st, "Supplier", "S1", CAIRN_OUT, l, 8) == 0);
	/* Linking again replaces the Link's values; it stays one Link. */
	OK(test_commit(st, "{\"rel\":\"supplied_by\",\"from\":\"Part:P1\",\"to\":\"Supplier:S1\",\"values\":{\"share\":0.9}}", NULL));
	CHECK(links(st, "Supplier", "S1", CAIRN_IN, l, 8) == 1);
	CHECK(test_streq(l[0].values, l[0].values_len, "{\"share\":0.9}"));
	OK(test_commit(st, "{\"rel\":\"supplied_by\",\"from\":\"Part:P1\",\"to\":\"Supplier:S1\",\"op\":\"unlink\"}", NULL));
	CHECK(links(st, "Part", "P1", CAIRN_OUT, l, 8) == 1);
	CHECK(test_streq(l[0].to_key, l[0].to_key_len, "S2"));
	/* Link again after unlink. */
	OK(test_commit(st, "{\"rel\":\"supplied_by\",\"from\":\"Part:P1\",\"to\":\"Supplier:S1\"}", NULL));
	CHECK(links(st, "Part", "P1", CAIRN_BOTH, l, 8) == 2);
	OK(cairn_check(st, "d", NULL, NULL, NULL));
	cairn_close(st);
}

void test_commit_cascade(void)
{
	cairn_store *st = test_store();
	cairn_link l[8];
	uint64_t n;
	cairn_read_options ro = {0};
	cairn_txn *t;

	CHECK(st);
	OK(test_commit(st, "{\"kind\":\"Supplier\",\"key\":\"S1\",\"values\":{\"vat\":\"1\"}}\n"
			   "{\"kind\":\"Part\",\"key\":\"P1\",\"values\":{\"sku\":\"A\"}}\n"
			   "{\"kind\":\"Part\",\"key\":\"P2\",\"values\":{\"sku\":\"B\"}}\n"
			   "{\"rel\":\"supplied_by\",\"from\":\"Part:P1\",\"to\":\"Supplier:S1\"}\n"
			   "{\"rel\":\"supplied_by\",\"from\":\"Part:P2\",\"to\":\"Supplier:S1\"}",
		       NULL));
	CHECK_RC(test_commit(st, "{\"kind\":\"Supplier\",\"key\":\"S1\",\"op\":\"delete\"}", NULL),
		 CAIRN_EHASLINKS);
	/* Unlinking in the same commit makes the delete valid. */
	OK(test_commit(st, "{\"rel\":\"supplied_by\",\"from\":\"Part:P1\",\"to\":\"Supplier:S1\",\"op\":\"unlink\"}\n"
			   "{\"kind\":\"Part\",\"key\":\"P1\",\"op\":\"delete\"}",
		       NULL));
	OK(test_commit(st, "{\"kind\":\"Supplier\",\"key\":\"S1\",\"op\":\"delete\",\"cascade\":true}", NULL));
	CHECK(links(st, "Part", "P2", CAIRN_BOTH, l, 8) == 0);
	ro.domain = "d";
	OK(cairn_txn_begin(st, &ro, &t));
	OK(cairn_count(t, "Supplier", &n));
	CHECK(n == 0);
	OK(cairn_count(t, "Part", &n));
	CHECK(n == 1);
	cairn_txn_end(t);
	OK(cairn_check(st, "d", NULL, NULL, NULL));
	cairn_close(st);
}

void test_commit_same_record_twice(void)
{
	cairn_store *st = test_store();
	cairn_commit_result res;
	cairn_record r;
	cairn_txn *t;
	uint64_t n;

	CHECK(st);
	/* Put, patch and re-put in one commit: the last state wins, counted once. */
	OK(test_commit(st, "{\"kind\":\"Part\",\"key\":\"P1\",\"values\":{\"sku\":\"A\"}}\n"
			   "{\"kind\":\"Part\",\"key\":\"P1\",\"op\":\"patch\",\"values\":{\"status\":\"eol\"}}\n"
			   "{\"kind\":\"Part\",\"key\":\"P2\",\"values\":{\"sku\":\"B\"}}\n"
			   "{\"kind\":\"Part\",\"key\":\"P2\",\"op\":\"delete\"}",
		       &res));
	CHECK(res.changes == 4);
	OK(get(st, "Part", "P1", &r, &t));
	CHECK(test_streq(r.values, r.values_len, "{\"sku\":\"A\",\"status\":\"eol\"}"));
	CHECK_RC(cairn_get(t, "Part", "P2", 2, &r), CAIRN_ENOTFOUND);
	OK(cairn_count(t, "Part", &n));
	CHECK(n == 1);
	cairn_txn_end(t);
	OK(cairn_check(st, "d", NULL, NULL, NULL));
	cairn_close(st);
}

static cairn_changeset *cs_of(const char *line)
{
	cairn_changeset *cs;

	if (cairn_changeset_new(&cs))
		return NULL;
	if (cairn_changeset_add_json(cs, line, strlen(line))) {
		cairn_changeset_free(cs);
		return NULL;
	}
	return cs;
}

/* A group commit: each commit stands or fails alone, in order, and the good ones are all there. */
void test_commit_group(void)
{
	cairn_store *st = test_store();
	cairn_commit_options co = {0}, stale = {0};
	cairn_commit_req r[4];
	cairn_changeset *cs[4];
	uint64_t head;
	char *before, *after;

	CHECK(st);
	co.domain = "d";
	co.prov.actor = "group";
	head = test_head(st, "d");
	stale = co;
	stale.has_expect = 1;
	stale.expect_revision = head; /* stale by the time its turn comes */
	cs[0] = cs_of("{\"kind\":\"Plant\",\"key\":\"A\",\"values\":{\"city\":\"Oslo\"}}");
	cs[1] = cs_of("{\"kind\":\"Nope\",\"key\":\"B\"}");
	cs[2] = cs_of("{\"kind\":\"Plant\",\"key\":\"A\",\"op\":\"patch\",\"values\":{\"city\":\"Bergen\"}}");
	cs[3] = cs_of("{\"kind\":\"Plant\",\"key\":\"C\"}");
	for (int i = 0; i < 4; i++) {
		CHECK(cs[i] || i == 1);
		memset(&r[i], 0, sizeof(r[i]));
		r[i].opts = i == 3 ? &stale : &co;
		r[i].cs = cs[i];
	}
	CHECK(cs[1] != NULL); /* the unknown Kind is found at commit time */
	OK(cairn_commit_group(st, r, 4));
	CHECK(r[0].rc == 0 && r[0].res.revision == head + 1);
	CHECK(r[1].rc == CAIRN_EUNKNOWNKIND && r[1].change == 0 && strstr(r[1].msg, "Nope"));
	CHECK(r[2].rc == 0 && r[2].res.revision == head + 2); /* it saw the first */
	CHECK(r[3].rc == CAIRN_ECONFLICT);
	CHECK(test_head(st, "d") == head + 2);
	OK(cairn_check(st, "d", NULL, NULL, NULL));
	{
		cairn_read_options ro = {0};
		cairn_record rec;
		cairn_txn *t;

		ro.domain = "d";
		OK(cairn_txn_begin(st, &ro, &t));
		OK(cairn_get(t, "Plant", "A", 1, &rec));
		CHECK(test_streq(rec.values, rec.values_len, "{\"city\":\"Bergen\"}"));
		CHECK_RC(cairn_get(t, "Plant", "C", 1, &rec), CAIRN_ENOTFOUND);
		cairn_txn_end(t);
	}
	/* A group where every commit fails writes nothing. */
	before = test_export(st, "d");
	r[0].cs = cs[1];
	r[1].opts = &stale;
	r[1].cs = cs[3];
	OK(cairn_commit_group(st, r, 2));
	CHECK(r[0].rc == CAIRN_EUNKNOWNKIND && r[1].rc == CAIRN_ECONFLICT);
	after = test_export(st, "d");
	CHECK(before && after && strcmp(before, after) == 0);
	CHECK(test_head(st, "d") == head + 2);
	/* A request without a change set fails alone, before any transaction. */
	r[0].cs = NULL;
	r[1].opts = &co;
	r[1].cs = cs[3];
	OK(cairn_commit_group(st, r, 2));
	CHECK(r[0].rc == CAIRN_EINVAL && r[1].rc == 0 && r[1].res.revision == head + 3);
	free(before);
	free(after);
	for (int i = 0; i < 4; i++)
		cairn_changeset_free(cs[i]);
	cairn_close(st);
}
