/* Branches: O(1) creation, isolation from the parent, names, rename, delete and its clearing. */
#include <stdlib.h>
#include <unistd.h>

#include "tests.h"
#include "admin/admin.h"
#include "version/version.h"

static int get_in(cairn_store *st, const char *branch, uint64_t at, const char *kind,
		  const char *key, cairn_record *r, cairn_txn **t)
{
	cairn_read_options ro = {0};
	int rc;

	ro.domain = "d";
	ro.branch = branch;
	ro.at_revision = at;
	*t = NULL;
	rc = cairn_txn_begin(st, &ro, t);
	if (rc)
		return rc;
	return cairn_get(*t, kind, key, strlen(key), r);
}

static int commit_on(cairn_store *st, const char *branch, const char *lines,
		     cairn_commit_result *res)
{
	cairn_commit_options co = {0};
	cairn_changeset *cs;
	const char *p = lines;
	int rc;

	if ((rc = cairn_changeset_new(&cs)))
		return rc;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);

		if (n && (rc = cairn_changeset_add_json(cs, p, n))) {
			cairn_changeset_free(cs);
			return rc;
		}
		p += n + (nl ? 1 : 0);
	}
	co.domain = "d";
	co.branch = branch;
	rc = cairn_commit(st, &co, cs, res);
	cairn_changeset_free(cs);
	return rc;
}

static uint64_t count_in(cairn_store *st, const char *branch, const char *kind)
{
	cairn_read_options ro = {0};
	cairn_txn *t;
	uint64_t n = 999999;

	ro.domain = "d";
	ro.branch = branch;
	if (cairn_txn_begin(st, &ro, &t) == 0) {
		if (cairn_count(t, kind, &n))
			n = 999999;
		cairn_txn_end(t);
	}
	return n;
}

struct names {
	char all[512];
	char parents[512];
	uint64_t head_of_b, fork_of_b;
};

static int list_cb(void *ctx, const cairn_branch_info *b)
{
	struct names *n = ctx;

	strcat(n->all, b->name);
	strcat(n->all, ",");
	strcat(n->parents, b->parent ? b->parent : "-");
	strcat(n->parents, ",");
	if (strcmp(b->name, "b") == 0) {
		n->head_of_b = b->head_revision;
		n->fork_of_b = b->fork_revision;
	}
	return 0;
}

void test_branch_basic(void)
{
	cairn_store *st = test_store();
	cairn_commit_result r1, r2, r3;
	cairn_record r;
	cairn_txn *t;
	struct names n = {"", "", 0, 0};

	CHECK(st);
	OK(test_commit(st, "{\"kind\":\"Plant\",\"key\":\"L1\",\"title\":\"main 1\"}", &r1));
	OK(cairn_branch_create(st, "d", "b", NULL));
	CHECK_RC(cairn_branch_create(st, "d", "b", NULL), CAIRN_EEXIST);
	CHECK_RC(cairn_branch_create(st, "d", "main", NULL), CAIRN_EEXIST);
	CHECK_RC(cairn_branch_create(st, "d", "c", "nope"), CAIRN_ENOBRANCH);
	CHECK_RC(cairn_branch_create(st, "nope", "c", NULL), CAIRN_ENODOMAIN);
	/* The branch reads the parent as of the fork, and writes apart from it. */
	OK(get_in(st, "b", 0, "Plant", "L1", &r, &t));
	CHECK(test_streq(r.title, r.title_len, "main 1"));
	CHECK(cairn_txn_revision(t) == r1.revision);
	cairn_txn_end(t);
	OK(commit_on(st, "b", "{\"kind\":\"Plant\",\"key\":\"L1\",\"title\":\"on b\"}\n"
			      "{\"kind\":\"Plant\",\"key\":\"L2\"}",
		     &r2));
	OK(test_commit(st, "{\"kind\":\"Plant\",\"key\":\"L1\",\"title\":\"main 2\"}\n"
			   "{\"kind\":\"Plant\",\"key\":\"L3\"}",
		       &r3));
	OK(get_in(st, "b", 0, "Plant", "L1", &r, &t));
	CHECK(test_streq(r.title, r.title_len, "on b"));
	CHECK_RC(cairn_get(t, "Plant", "L3", 2, &r), CAIRN_ENOTFOUND); /* main's, after the fork */
	OK(cairn_get(t, "Plant", "L2", 2, &r));
	cairn_txn_end(t);
	OK(get_in(st, "main", 0, "Plant", "L1", &r, &t));
	CHECK(test_streq(r.title, r.title_len, "main 2"));
	CHECK_RC(cairn_get(t, "Plant", "L2", 2, &r), CAIRN_ENOTFOUND);
	cairn_txn_end(t);
	CHECK(count_in(st, "b", "Plant") == 2 && count_in(st, "main", "Plant") == 2);
	/* Time travel on the branch: before its own commit it reads the fork. */
	OK(get_in(st, "b", r1.revision, "Plant", "L1", &r, &t));
	CHECK(test_streq(r.title, r.title_len, "main 1"));
	cairn_txn_end(t);
	/* Listing, and a branch of a branch. */
	OK(cairn_branch_create(st, "d", "agent/planner-7", "b"));
	OK(cairn_branch_list(st, "d", list_cb, &n));
	CHECK(strcmp(n.all, "agent/planner-7,b,main,") == 0);
	CHECK(strcmp(n.parents, "b,main,-,") == 0);
	CHECK(n.fork_of_b == r1.revision && n.head_of_b == r2.revision);
	OK(get_in(st, "agent/planner-7", 0, "Plant", "L2", &r, &t));
	cairn_txn_end(t);
	/* The log of a branch runs through its fork into the parent's history. */
	{
		cairn_read_options ro = {0};
		cairn_revision revs[8];
		size_t nr;

		ro.domain = "d";
		ro.branch = "b";
		OK(cairn_txn_begin(st, &ro, &t));
		OK(cairn_log(t, 0, revs, 8, &nr));
		CHECK(nr == 3 && revs[0].revision == r2.revision && revs[1].revision == r1.revision);
		CHECK(strcmp(revs[0].branch, "b") == 0 && strcmp(revs[1].branch, "main") == 0);
		CHECK(memcmp(revs[0].parent_hash, r1.hash, 32) == 0);
		cairn_txn_end(t);
	}
	/* Expected revision on a branch without commits is its fork. */
	{
		cairn_commit_options co = {0};
		cairn_changeset *cs;

		OK(cairn_branch_create(st, "d", "e", NULL));
		OK(cairn_changeset_new(&cs));
		OK(cairn_changeset_put(cs, "Plant", "E", 1, NULL, 0, NULL, 0));
		co.domain = "d";
		co.branch = "e";
		co.has_expect = 1;
		co.expect_revision = r3.revision;
		OK(cairn_commit(st, &co, cs, NULL));
		cairn_changeset_free(cs);
	}
	OK(cairn_check(st, "d", NULL, NULL, NULL));
	cairn_close(st);
}

void test_branch_isolation(void)
{
	cairn_store *st = test_store();
	cairn_record r;
	cairn_txn *t;
	cairn_link l[4];
	cairn_link_cursor cur = {{0}};
	size_t n;

	CHECK(st);
	OK(test_commit(st, "{\"kind\":\"Supplier\",\"key\":\"S1\",\"values\":{\"vat\":\"V1\"}}\n"
			   "{\"kind\":\"Part\",\"key\":\"P1\",\"values\":{\"sku\":\"A\"}}\n"
			   "{\"rel\":\"supplied_by\",\"from\":\"Part:P1\",\"to\":\"Supplier:S1\"}",
		       NULL));
	OK(cairn_branch_create(st, "d", "b", NULL));
	/* Unique values, Links and deletes are per branch. */
	OK(commit_on(st, "b", "{\"rel\":\"supplied_by\",\"from\":\"Part:P1\",\"to\":\"Supplier:S1\",\"op\":\"unlink\"}\n"
			      "{\"kind\":\"Supplier\",\"key\":\"S1\",\"op\":\"delete\"}\n"
			      "{\"kind\":\"Supplier\",\"key\":\"S2\",\"values\":{\"vat\":\"V1\"}}",
		     NULL));
	CHECK_RC(test_commit(st, "{\"kind\":\"Supplier\",\"key\":\"S3\",\"values\":{\"vat\":\"V1\"}}", NULL),
		 CAIRN_EUNIQUE);
	CHECK_RC(commit_on(st, "b", "{\"kind\":\"Supplier\",\"key\":\"S3\",\"values\":{\"vat\":\"V1\"}}", NULL),
		 CAIRN_EUNIQUE);
	OK(get_in(st, "main", 0, "Supplier", "S1", &r, &t));
	OK(cairn_links(t, "Part", "P1", 2, CAIRN_OUT, NULL, &cur, l, 4, &n));
	CHECK(n == 1);
	cairn_txn_end(t);
	CHECK_RC(get_in(st, "b", 0, "Supplier", "S1", &r, &t), CAIRN_ENOTFOUND);
	memset(&cur, 0, sizeof(cur));
	OK(cairn_links(t, "Part", "P1", 2, CAIRN_OUT, NULL, &cur, l, 4, &n));
	CHECK(n == 0);
	cairn_txn_end(t);
	CHECK(count_in(st, "b", "Supplier") == 1 && count_in(st, "main", "Supplier") == 1);
	OK(cairn_check(st, "d", NULL, NULL, NULL));
	cairn_close(st);
}

void test_branch_names(void)
{
	cairn_store *st = test_store();
	const char *bad[] = {"", "/x", "x/", "a//b", ".x", "-x", "a b", "a\\b", "ü"};
	struct names n = {"", "", 0, 0};
	char longname[CAIRN_MAX_BRANCH + 2];
	cairn_record r;
	cairn_txn *t;

	CHECK(st);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK_RC(cairn_branch_create(st, "d", bad[i], NULL), CAIRN_EINVAL);
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	CHECK_RC(cairn_branch_create(st, "d", longname, NULL), CAIRN_EINVAL);
	longname[CAIRN_MAX_BRANCH] = '\0';
	OK(cairn_branch_create(st, "d", longname, NULL));
	OK(cairn_branch_create(st, "d", "agent/x.y_z-1", NULL));
	OK(commit_on(st, "agent/x.y_z-1", "{\"kind\":\"Plant\",\"key\":\"A\"}", NULL));
	/* Rename keeps the data; the old name is free, main cannot move. */
	OK(cairn_branch_rename(st, "d", "agent/x.y_z-1", "agent/renamed"));
	CHECK_RC(get_in(st, "agent/x.y_z-1", 0, "Plant", "A", &r, &t), CAIRN_ENOBRANCH);
	OK(get_in(st, "agent/renamed", 0, "Plant", "A", &r, &t));
	cairn_txn_end(t);
	CHECK_RC(cairn_branch_rename(st, "d", "main", "x"), CAIRN_EINVAL);
	CHECK_RC(cairn_branch_rename(st, "d", "agent/renamed", "main"), CAIRN_EINVAL);
	CHECK_RC(cairn_branch_rename(st, "d", "agent/renamed", longname), CAIRN_EEXIST);
	CHECK_RC(cairn_branch_rename(st, "d", "nope", "x"), CAIRN_ENOBRANCH);
	OK(cairn_branch_list(st, "d", list_cb, &n));
	CHECK(strstr(n.all, "agent/renamed,") && !strstr(n.all, "x.y_z"));
	/* Branches of branches: 31 levels below main work; a 32nd is refused at creation. */
	{
		char name[16], from[16] = "main";

		OK(commit_on(st, NULL, "{\"kind\":\"Plant\",\"key\":\"A\",\"values\":{\"city\":\"Deep\"}}", NULL));
		for (int i = 1; i <= 31; i++) {
			snprintf(name, sizeof(name), "deep%d", i);
			OK(cairn_branch_create(st, "d", name, from));
			snprintf(from, sizeof(from), "%s", name);
		}
		OK(get_in(st, "deep31", 0, "Plant", "A", &r, &t));
		cairn_txn_end(t);
		CHECK_RC(cairn_branch_create(st, "d", "deep32", "deep31"), CAIRN_ELIMIT);
		CHECK_RC(get_in(st, "deep32", 0, "Plant", "A", &r, &t), CAIRN_ENOBRANCH);
	}
	cairn_close(st);
}

static int count_items(void *ctx, const cairn_change_item *it)
{
	(void)ctx;
	(void)it;
	return 0;
}

static void clear_all(cairn_store *st)
{
	int pending = 1;

	for (int i = 0; i < 1000 && pending; i++)
		if (cairn_store_maintain(st, 3, &pending))
			break;
}

void test_branch_delete(void)
{
	cairn_store *st = test_store();
	cairn_db_stats before[16], after[16];
	size_t nb, na;
	cairn_record r;
	cairn_txn *t;
	char *exp_main;

	CHECK(st);
	OK(test_commit(st, "{\"kind\":\"Supplier\",\"key\":\"S1\",\"values\":{\"vat\":\"V1\"}}\n"
			   "{\"kind\":\"Part\",\"key\":\"P1\",\"values\":{\"sku\":\"A\",\"supplier\":\"S1\"}}",
		       NULL));
	OK(cairn_store_stats(st, before, 16, &nb));
	exp_main = test_export(st, "d");
	OK(cairn_branch_create(st, "d", "b", NULL));
	OK(cairn_branch_create(st, "d", "b/child", "b"));
	for (int i = 0; i < 20; i++) {
		char line[300];

		snprintf(line, sizeof(line),
			 "{\"kind\":\"Part\",\"key\":\"X%d\",\"values\":{\"sku\":\"x%d\",\"supplier\":\"S1\"},\"vector\":[1,2]}\n"
			 "{\"rel\":\"supplied_by\",\"from\":\"Part:X%d\",\"to\":\"Supplier:S1\"}",
			 i, i, i);
		OK(commit_on(st, "b", line, NULL));
	}
	CHECK_RC(cairn_branch_delete(st, "d", "main"), CAIRN_EINVAL);
	CHECK_RC(cairn_branch_delete(st, "d", "b"), CAIRN_EINVAL); /* b/child was made from it */
	OK(cairn_branch_delete(st, "d", "b/child"));
	OK(cairn_branch_delete(st, "d", "b"));
	CHECK_RC(cairn_branch_delete(st, "d", "b"), CAIRN_ENOBRANCH);
	/* Gone at once for reads and writes; the name is free again. */
	CHECK_RC(get_in(st, "b", 0, "Part", "X1", &r, &t), CAIRN_ENOBRANCH);
	CHECK(t == NULL);
	CHECK_RC(commit_on(st, "b", "{\"kind\":\"Plant\",\"key\":\"A\"}", NULL), CAIRN_ENOBRANCH);
	/* The store checks clean while the clearing is half done, and after. */
	{
		int pending;

		OK(cairn_store_maintain(st, 0, &pending)); /* only asks */
		CHECK(pending == 1);
		OK(cairn_store_maintain(st, 5, &pending));
		CHECK(pending == 1);
		OK(cairn_check(st, "d", NULL, NULL, NULL));
	}
	/* Before it is cleared, the branch already reads as deleted. */
	{
		cairn_read_options ro = {0};
		cairn_revision rv;

		ro.domain = "d";
		OK(cairn_txn_begin(st, &ro, &t));
		OK(cairn_revision_get(t, 3, &rv));
		CHECK(strcmp(rv.branch, "(deleted)") == 0);
		CHECK_RC(cairn_revision_changes(t, 3, count_items, NULL), CAIRN_ENOTFOUND);
		cairn_txn_end(t);
	}
	clear_all(st);
	OK(cairn_check(st, "d", NULL, NULL, NULL));
	/* Every entry of the branch is gone: the sub-databases hold what main holds. */
	OK(cairn_store_stats(st, after, 16, &na));
	for (size_t i = 0; i < na; i++) {
		if (strcmp(after[i].name, "catalog") == 0 || strcmp(after[i].name, "revisions") == 0 ||
		    strcmp(after[i].name, "meta") == 0)
			continue;
		if (after[i].entries != before[i].entries)
			fprintf(stderr, "    %s: %llu entries, %llu before the branch\n", after[i].name,
				(unsigned long long)after[i].entries,
				(unsigned long long)before[i].entries);
		CHECK(after[i].entries == before[i].entries);
	}
	/* main is untouched; the name can be used again, from scratch. */
	{
		char *exp = test_export(st, "d");

		CHECK(exp && exp_main && strcmp(exp, exp_main) == 0);
		free(exp);
	}
	OK(cairn_branch_create(st, "d", "b", NULL));
	CHECK_RC(get_in(st, "b", 0, "Part", "X1", &r, &t), CAIRN_ENOTFOUND);
	cairn_txn_end(t);
	/* The deleted branch's revisions stay readable (provenance). */
	{
		cairn_read_options ro = {0};
		cairn_revision rv;

		ro.domain = "d";
		OK(cairn_txn_begin(st, &ro, &t));
		OK(cairn_revision_get(t, 3, &rv));
		CHECK(strcmp(rv.branch, "(deleted)") == 0 && rv.changes == 2);
		cairn_txn_end(t);
	}
	free(exp_main);
	cairn_close(st);
}

/* Without a maintain call, the store's own thread clears a deleted branch. */
void test_branch_delete_background(void)
{
	cairn_open_options o = {.flags = CAIRN_OPEN_NOSYNC};
	cairn_store *st = test_store();
	CHECK(st);
	OK(cairn_branch_create(st, "d", "b", NULL));
	for (int i = 0; i < 30; i++) {
		char line[100];

		snprintf(line, sizeof(line), "{\"kind\":\"Plant\",\"key\":\"P%d\"}", i);
		OK(commit_on(st, "b", line, NULL));
	}
	OK(cairn_branch_delete(st, "d", "b"));
	cairn_close(st);
	/* A new process-level open finds the work left and does it. */
	OK(cairn_open(test_path("store"), &o, &st));
	OK(maint_wait(st, 0, TEST_HANG_MS)); /* the thread has gone idle: its work is done */
	CHECK(test_db_entries(st, "versions") == 0);
	OK(cairn_check(st, "d", NULL, NULL, NULL));
	cairn_close(st);
}

/*
 * Clearing is bounded within a revision too: a branch whose one commit
 * made 300 Versions is cleared in steps of the budget, the store checks
 * clean between steps, and pending turns 0 on the step that finishes.
 */
void test_branch_clear_bounded(void)
{
	cairn_store *st = test_store();
	char *lines = malloc(300 * 80), *p;
	int pending = 1, steps = 0;

	CHECK(st && lines);
	OK(cairn_branch_create(st, "d", "big", NULL));
	p = lines;
	for (int i = 0; i < 300; i++)
		p += sprintf(p, "{\"kind\":\"Plant\",\"key\":\"P%03d\",\"values\":{\"city\":\"c\"}}\n", i);
	OK(commit_on(st, "big", lines, NULL));
	free(lines);
	OK(cairn_branch_delete(st, "d", "big"));
	while (pending) {
		OK(cairn_store_maintain(st, 25, &pending));
		steps++;
		CHECK(steps < 100);
		if (steps == 5)
			OK(cairn_check(st, "d", NULL, NULL, NULL));
	}
	/* 300 Versions and a few revisions at 25 per step: at least 12 steps, none after. */
	CHECK(steps >= 12 && steps <= 14);
	OK(cairn_store_maintain(st, 25, &pending));
	CHECK(pending == 0);
	OK(cairn_check(st, "d", NULL, NULL, NULL));
	{
		cairn_record r;
		cairn_txn *t;

		OK(cairn_branch_create(st, "d", "big", NULL));
		CHECK_RC(get_in(st, "big", 0, "Plant", "P000", &r, &t), CAIRN_ENOTFOUND);
		cairn_txn_end(t);
	}
	cairn_close(st);
}

/* A deleted branch, even before it is cleared, does not hold back a schema change. */
void test_branch_delete_schema(void)
{
	cairn_store *st = test_store();
	cairn_commit_options co = {0};
	const char *city = "{\"name\":\"city\",\"type\":\"string\"}";
	char text[4096];
	const char *at;

	CHECK(st);
	at = strstr(test_schema, city);
	CHECK(at);
	snprintf(text, sizeof(text), "%.*s{\"name\":\"city\",\"type\":\"string\",\"required\":true}%s",
		 (int)(at - test_schema), test_schema, at + strlen(city));
	OK(cairn_branch_create(st, "d", "r", NULL));
	OK(commit_on(st, "r", "{\"kind\":\"Plant\",\"key\":\"Q\",\"values\":{}}", NULL));
	co.domain = "d";
	/* While the branch lives, its Plant without a city refuses the change. */
	CHECK_RC(cairn_schema_apply(st, &co, text, strlen(text), NULL), CAIRN_ESCHEMADATA);
	OK(cairn_branch_delete(st, "d", "r"));
	/* The schema is the Domain's: applied on main only, and read by every branch. */
	OK(cairn_branch_create(st, "d", "s", NULL));
	co.branch = "s";
	CHECK_RC(cairn_schema_apply(st, &co, text, strlen(text), NULL), CAIRN_EINVAL);
	co.branch = NULL;
	OK(cairn_schema_apply(st, &co, text, strlen(text), NULL));
	{
		cairn_read_options ro = {0};
		cairn_txn *t;
		const char *js;
		size_t jn;

		ro.domain = "d";
		ro.branch = "s";
		OK(cairn_txn_begin(st, &ro, &t));
		OK(cairn_schema_get(t, &js, &jn));
		CHECK(memmem(js, jn, "\"city\",\"type\":\"string\",\"required\":true", 38) != NULL);
		cairn_txn_end(t);
		ro.branch = NULL;
		ro.at_revision = 1; /* back in time: the schema then */
		OK(cairn_txn_begin(st, &ro, &t));
		OK(cairn_schema_get(t, &js, &jn));
		CHECK(memmem(js, jn, "\"city\",\"type\":\"string\",\"required\":true", 38) == NULL);
		cairn_txn_end(t);
		ro.at_revision = 0;
		ro.at_time_ms = 1000; /* before the Domain's first revision: no schema yet */
		OK(cairn_txn_begin(st, &ro, &t));
		OK(cairn_schema_get(t, &js, &jn));
		CHECK(test_streq(js, jn, "{\"kinds\":[],\"relations\":[]}"));
		cairn_txn_end(t);
	}
	OK(cairn_check(st, "d", NULL, NULL, NULL));
	cairn_close(st);
}
