/*
 * Keys segments (version/kseg.c): a commit with many keys entries of
 * Records its branch had writes them as a segment; reads by key, pages of a
 * Kind, time travel, branches and cairn check see through them; the commit
 * that reaches the fold threshold moves them into keys; a tampered segment
 * is reported. (The randomized reference test runs with segments too:
 * timetravel_kseg.)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests.h"
#include "version/version.h"

static const char kschema[] = "{\"kinds\":[{\"name\":\"N\",\"attributes\":["
			      "{\"name\":\"x\",\"type\":\"int\",\"indexed\":true}]}]}";

/* Commit Records n<lo>..n<hi-1> with x = g, or their deletes (g < 0), on branch. */
static int put_range(cairn_store *st, const char *branch, int lo, int hi, int g, uint64_t *rev)
{
	cairn_commit_options co = {0};
	cairn_commit_result res;
	cairn_changeset *cs;
	char line[160];
	int rc = cairn_changeset_new(&cs);

	for (int i = lo; i < hi && !rc; i++) {
		int n = g < 0 ? snprintf(line, sizeof(line),
					 "{\"kind\":\"N\",\"key\":\"n%03d\",\"op\":\"delete\"}", i)
			      : snprintf(line, sizeof(line),
					 "{\"kind\":\"N\",\"key\":\"n%03d\",\"title\":\"t%d g%d\","
					 "\"values\":{\"x\":%d}}",
					 i, i, g, g);

		rc = cairn_changeset_add_json(cs, line, (size_t)n);
	}
	co.domain = "d";
	co.branch = branch;
	co.prov.actor = "test";
	if (!rc)
		rc = cairn_commit(st, &co, cs, &res);
	cairn_changeset_free(cs);
	if (!rc && rev)
		*rev = res.revision;
	return rc;
}

/* x of Record n<i> as branch sees it at rev (0: head); -1 if absent, -2 on error. */
static int x_of(cairn_store *st, const char *branch, uint64_t rev, int i)
{
	cairn_read_options ro = {.domain = "d", .branch = branch, .at_revision = rev};
	cairn_txn *t;
	cairn_record r;
	char key[16];
	int x = -2, rc;

	snprintf(key, sizeof(key), "n%03d", i);
	if (cairn_txn_begin(st, &ro, &t))
		return -2;
	rc = cairn_get(t, "N", key, strlen(key), &r);
	if (rc == CAIRN_ENOTFOUND)
		x = -1;
	else if (!rc && sscanf(r.values, "{\"x\":%d}", &x) != 1)
		x = -2;
	cairn_txn_end(t);
	return x;
}

/* The Records a page walk of N sees (branch at rev): their count, and the sum of x. */
static int page_walk(cairn_store *st, const char *branch, uint64_t rev, int *count, long *sum)
{
	cairn_read_options ro = {.domain = "d", .branch = branch, .at_revision = rev};
	cairn_record recs[7];
	char after[16] = "";
	size_t n, after_len = 0;
	cairn_txn *t;
	int rc;

	*count = 0;
	*sum = 0;
	if ((rc = cairn_txn_begin(st, &ro, &t)))
		return rc;
	do {
		if ((rc = cairn_page(t, "N", after_len ? after : NULL, after_len, recs, 7, &n)))
			break;
		for (size_t i = 0; i < n; i++) {
			int x;

			if (sscanf(recs[i].values, "{\"x\":%d}", &x) != 1)
				rc = CAIRN_ECORRUPT;
			(*count)++;
			*sum += x;
		}
		if (n) {
			after_len = recs[n - 1].key_len;
			memcpy(after, recs[n - 1].key, after_len);
		}
	} while (n == 7 && !rc);
	cairn_txn_end(t);
	return rc;
}

static void count_problem(void *ctx, const char *p)
{
	(*(int *)ctx)++;
	fprintf(stderr, "    problem: %s\n", p);
}

static int problems(cairn_store *st)
{
	int n = 0, rc = cairn_check(st, "d", count_problem, &n, NULL);

	return rc && rc != CAIRN_ECORRUPT ? -1 : n;
}

void test_kseg_reads(void)
{
	cairn_commit_options co = {0};
	cairn_store *st = test_store();
	uint64_t r0, r1, r2, r3;
	int count;
	long sum;

	CHECK(st);
	st->kseg_min = 4;
	st->kseg_fold = 4;
	co.domain = "d";
	OK(cairn_schema_apply(st, &co, kschema, strlen(kschema), NULL));
	OK(put_range(st, NULL, 0, 40, 1, &r0)); /* new Records: keys */
	CHECK(test_db_entries(st, "kseg") == 0);

	OK(put_range(st, NULL, 10, 30, 2, &r1)); /* 20 updates: a segment and its descriptor */
	CHECK(test_db_entries(st, "kseg") == 21);
	OK(put_range(st, NULL, 0, 3, 5, NULL)); /* under kseg_min: keys */
	CHECK(test_db_entries(st, "kseg") == 21);
	CHECK(x_of(st, NULL, 0, 9) == 1);
	CHECK(x_of(st, NULL, 0, 10) == 2);
	CHECK(x_of(st, NULL, 0, 29) == 2);
	CHECK(x_of(st, NULL, 0, 30) == 1);
	CHECK(x_of(st, NULL, 0, 1) == 5);
	CHECK(x_of(st, NULL, r0, 10) == 1); /* before the segment */
	OK(page_walk(st, NULL, 0, &count, &sum));
	CHECK(count == 40 && sum == 3 * 5 + 17 * 1 + 20 * 2);
	OK(page_walk(st, NULL, r0, &count, &sum));
	CHECK(count == 40 && sum == 40);

	/* Deletes as a segment; a branch forked before them still sees the Records. */
	OK(cairn_branch_create(st, "d", "b", NULL));
	OK(put_range(st, NULL, 20, 26, -1, &r2));
	CHECK(test_db_entries(st, "kseg") == 21 + 7);
	CHECK(x_of(st, NULL, 0, 20) == -1);
	CHECK(x_of(st, NULL, r1, 20) == 2);
	CHECK(x_of(st, "b", 0, 20) == 2);
	OK(page_walk(st, NULL, 0, &count, &sum));
	CHECK(count == 34 && sum == 3 * 5 + 17 * 1 + 14 * 2);
	CHECK(problems(st) == 0);

	/* The branch's own segment; main does not see it. Re-puts after a delete go in too. */
	OK(put_range(st, "b", 15, 25, 7, NULL));
	CHECK(test_db_entries(st, "kseg") == 21 + 7 + 11);
	CHECK(x_of(st, "b", 0, 15) == 7 && x_of(st, "b", 0, 26) == 2);
	CHECK(x_of(st, NULL, 0, 15) == 2 && x_of(st, NULL, 0, 22) == -1);
	OK(put_range(st, NULL, 20, 24, 8, NULL)); /* the fourth segment: all folded into keys */
	CHECK(test_db_entries(st, "kseg") == 0);
	CHECK(x_of(st, NULL, 0, 20) == 8 && x_of(st, NULL, 0, 24) == -1);
	CHECK(x_of(st, "b", 0, 20) == 7 && x_of(st, NULL, r2, 20) == -1);
	OK(page_walk(st, "b", 0, &count, &sum));
	CHECK(count == 40 && sum == 3 * 5 + 17 * 1 + 10 * 7 + 10 * 2);
	CHECK(problems(st) == 0);

	/* Segments survive a reopen; a branch's deletion folds them before it clears. */
	OK(put_range(st, "b", 0, 40, 9, &r3));
	CHECK(test_db_entries(st, "kseg") == 41);
	cairn_close(st);
	{
		cairn_open_options o = {.flags = CAIRN_OPEN_NOSYNC | CAIRN_OPEN_NO_BACKGROUND};

		OK(cairn_open(test_path("store"), &o, &st));
	}
	CHECK(x_of(st, "b", 0, 39) == 9 && x_of(st, "b", r3 - 1, 39) == 1);
	CHECK(problems(st) == 0);
	OK(cairn_branch_delete(st, "d", "b"));
	{
		int pending = 1;

		for (int i = 0; i < 100 && pending; i++)
			OK(cairn_store_maintain(st, 1000, &pending));
		CHECK(!pending);
	}
	CHECK(test_db_entries(st, "kseg") == 0);
	CHECK(x_of(st, NULL, 0, 39) == 1 && x_of(st, NULL, 0, 20) == 8);
	CHECK(problems(st) == 0);
	cairn_close(st);
}

/* x = v counted through the query planner (its index, once x is indexed). */
static long x_count(cairn_store *st, int v)
{
	cairn_read_options ro = {.domain = "d"};
	cairn_txn *t;
	char where[32];
	uint64_t total = 0;
	int rc;

	snprintf(where, sizeof(where), "{\"x\":%d}", v);
	if (cairn_txn_begin(st, &ro, &t))
		return -1;
	rc = cairn_query_count(t, "N", where, strlen(where), NULL, NULL, NULL, &total);
	cairn_txn_end(t);
	return rc ? -1 : (long)total;
}

/* A schema change reads the Records through the segments: an index added is built from them. */
void test_kseg_schema(void)
{
	static const char plain[] = "{\"kinds\":[{\"name\":\"N\",\"attributes\":["
				    "{\"name\":\"x\",\"type\":\"int\"}]}]}";
	static const char uniq[] = "{\"kinds\":[{\"name\":\"N\",\"attributes\":["
				   "{\"name\":\"x\",\"type\":\"int\",\"indexed\":true,"
				   "\"unique\":true}]}]}";
	cairn_commit_options co = {0};
	cairn_store *st = test_store();

	CHECK(st);
	st->kseg_min = 4;
	co.domain = "d";
	OK(cairn_schema_apply(st, &co, plain, strlen(plain), NULL));
	OK(put_range(st, NULL, 0, 10, 1, NULL));
	for (int i = 0; i < 10; i++) { /* x = 100 + i, a commit each: to keys */
		OK(put_range(st, NULL, i, i + 1, 100 + i, NULL));
	}
	CHECK(test_db_entries(st, "kseg") == 0);
	OK(put_range(st, NULL, 0, 5, 7, NULL)); /* a segment: n000 to n004 share x = 7 */
	CHECK(test_db_entries(st, "kseg") == 6);
	CHECK_RC(cairn_schema_apply(st, &co, kschema, strlen(kschema), NULL), CAIRN_OK);
	CHECK(x_count(st, 7) == 5 && x_count(st, 100) == 0 && x_count(st, 105) == 1);
	/* Unique is refused, naming what the segment holds. */
	CHECK_RC(cairn_schema_apply(st, &co, uniq, strlen(uniq), NULL), CAIRN_ESCHEMADATA);
	CHECK(strstr(cairn_errmsg(), "4 existing Record(s)") && strstr(cairn_errmsg(), "N:n004"));
	CHECK(problems(st) == 0);
	cairn_close(st);
}

/*
 * A read transaction keeps the live-set chunks it has read: the same query
 * again tests its entries without a seek into cells, and a view at another
 * revision reads its own chunks (the answers differ as the data did).
 */
void test_live_chunk_cache(void)
{
	cairn_commit_options co = {0};
	cairn_store *st = test_store();
	cairn_read_options ro = {.domain = "d"};
	cairn_read_stats s0, s1, s2;
	uint64_t r1, n1 = 0, n2 = 0;
	cairn_txn *t;

	CHECK(st);
	co.domain = "d";
	OK(cairn_schema_apply(st, &co, kschema, strlen(kschema), NULL));
	OK(put_range(st, NULL, 0, 40, 1, &r1));
	OK(put_range(st, NULL, 0, 10, 2, NULL));
	OK(cairn_txn_begin(st, &ro, &t));
	cairn_txn_stats(t, &s0);
	OK(cairn_query_count(t, "N", "{\"x\":1}", 7, NULL, NULL, NULL, &n1));
	cairn_txn_stats(t, &s1);
	OK(cairn_query_count(t, "N", "{\"x\":1}", 7, NULL, NULL, NULL, &n2));
	cairn_txn_stats(t, &s2);
	cairn_txn_end(t);
	CHECK(n1 == 30 && n2 == 30);
	CHECK(s2.seeks - s1.seeks < s1.seeks - s0.seeks);
	CHECK(x_count(st, 1) == 30);
	ro.at_revision = r1;
	OK(cairn_txn_begin(st, &ro, &t));
	OK(cairn_query_count(t, "N", "{\"x\":1}", 7, NULL, NULL, NULL, &n1));
	cairn_txn_end(t);
	CHECK(n1 == 40);
	cairn_close(st);
}

/* Segments are folded when their entries reach the threshold too. */
void test_kseg_fold_entries(void)
{
	cairn_commit_options co = {0};
	cairn_store *st = test_store();

	CHECK(st);
	st->kseg_min = 5;
	st->kseg_fold_entries = 25;
	co.domain = "d";
	OK(cairn_schema_apply(st, &co, kschema, strlen(kschema), NULL));
	OK(put_range(st, NULL, 0, 30, 1, NULL));
	OK(put_range(st, NULL, 0, 12, 2, NULL));
	OK(put_range(st, NULL, 12, 24, 3, NULL));
	CHECK(test_db_entries(st, "kseg") == 26); /* two segments of 12 */
	OK(put_range(st, NULL, 24, 27, 4, NULL)); /* 3 entries: under kseg_min, to keys */
	CHECK(test_db_entries(st, "kseg") == 26);
	OK(put_range(st, NULL, 5, 10, 5, NULL)); /* 24 + 5 entries: folded */
	CHECK(test_db_entries(st, "kseg") == 0);
	CHECK(x_of(st, NULL, 0, 4) == 2 && x_of(st, NULL, 0, 5) == 5 && x_of(st, NULL, 0, 12) == 3);
	CHECK(x_of(st, NULL, 0, 26) == 4 && x_of(st, NULL, 0, 29) == 1);
	CHECK(problems(st) == 0);
	cairn_close(st);
}

/* cairn check reports a segment that lost its descriptor or holds what its filter does not. */
void test_kseg_check(void)
{
	cairn_commit_options co = {0};
	cairn_store *st = test_store();
	MDB_txn *txn;
	kbuf k;
	MDB_val v;
	uint8_t *copy;

	CHECK(st);
	st->kseg_min = 2;
	co.domain = "d";
	OK(cairn_schema_apply(st, &co, kschema, strlen(kschema), NULL));
	OK(put_range(st, NULL, 0, 10, 1, NULL));
	OK(put_range(st, NULL, 0, 10, 2, NULL));
	CHECK(test_db_entries(st, "kseg") == 11);
	CHECK(problems(st) == 0);

	/* A filter of zeros: every entry is one it does not hold. */
	kseg_desc_key(&k, 1, 1);
	OK(store_write_begin(st, &txn));
	OK(db_get(txn, st, DB_KSEG, k.b, k.n, &v));
	copy = malloc(v.mv_size);
	CHECK(copy);
	memcpy(copy, v.mv_data, 8);
	memset(copy + 8, 0, v.mv_size - 8);
	OK(db_put(txn, st, DB_KSEG, k.b, k.n, copy, v.mv_size, 0));
	OK(store_write_commit(st, txn));
	CHECK(problems(st) >= 10);

	/* No descriptor: its entries are reported. */
	OK(store_write_begin(st, &txn));
	OK(db_del(txn, st, DB_KSEG, k.b, k.n));
	OK(store_write_commit(st, txn));
	CHECK(problems(st) > 0);
	free(copy);
	cairn_close(st);
}
