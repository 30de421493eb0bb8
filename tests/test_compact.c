/*
 * Compaction (cairn_compact) of every index: attribute, names, full-text,
 * vectors and the vector index. Reads from the horizon on, at heads and
 * through a branch's view of its parent as of its fork answer exactly as
 * before; what only earlier revisions saw is gone; a read before the
 * horizon is refused; the store checks clean; a second run finds nothing;
 * and the errors. (The versioning side, with random branches and merges
 * against a model, is tests/test_timetravel.c.)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests.h"
#include "base/knob.h"
#include "admin/admin.h"
#include "version/version.h"
#include "index/vector/vindex.h"

#define CN 400	 /* Records */
#define CDIM 8

static const char cschema[] =
	"{\"kinds\":[{\"name\":\"Doc\",\"attributes\":["
	"{\"name\":\"tag\",\"type\":\"string\",\"indexed\":true},"
	"{\"name\":\"code\",\"type\":\"string\",\"unique\":true},"
	"{\"name\":\"nick\",\"type\":\"string\",\"alias\":true}]}]}";

static const char *const words[] = {"apple", "birch", "cedar", "delta", "ember", "fjord", "grove"};

/* Doc i as written by generation g (0: the first), as an import line. */
static size_t doc_line(char *out, size_t cap, int i, int g)
{
	size_t n = (size_t)snprintf(out, cap,
				    "{\"kind\":\"Doc\",\"key\":\"d%d\",\"title\":\"%s note %d %s\","
				    "\"values\":{\"tag\":\"t%d\",\"code\":\"C-%d-%d\",\"nick\":\"nick %d\"},"
				    "\"vector\":[",
				    i, words[(i + g) % 7], i, g ? "revised" : "first", (i + g) % 5, i, g, i);

	for (int d = 0; d < CDIM; d++)
		n += (size_t)snprintf(out + n, cap - n, "%s%.4f", d ? "," : "",
				      (double)((i * 7 + d * 3 + g * 5) % 11) - 5.0 + 0.01 * i);
	return n + (size_t)snprintf(out + n, cap - n, "]}\n");
}

/* Commit Docs [lo, hi) (step) of generation g, or their deletes (g < 0), on branch. */
static int write_docs(cairn_store *st, const char *branch, int lo, int hi, int step, int g,
		      uint64_t *rev)
{
	size_t cap = (size_t)(hi - lo) * 400 + 1, n = 0;
	char *lines = malloc(cap);
	cairn_commit_result res;
	int rc;

	if (!lines)
		return CAIRN_ENOMEM;
	lines[0] = 0;
	for (int i = lo; i < hi; i += step)
		n += g < 0 ? (size_t)snprintf(lines + n, cap - n,
					      "{\"kind\":\"Doc\",\"key\":\"d%d\",\"op\":\"delete\"}\n", i)
			   : doc_line(lines + n, cap - n, i, g);
	rc = test_commit_on(st, "c", branch, lines, &res);
	free(lines);
	if (!rc)
		*rev = res.revision;
	return rc;
}

static void put_keys(char *out, size_t cap, const char *what, const cairn_record *r, size_t n,
		     size_t stride)
{
	size_t at = strlen(out);

	at += (size_t)snprintf(out + at, cap - at, "%s:", what);
	for (size_t i = 0; i < n && at < cap; i++) {
		const cairn_record *x = (const cairn_record *)((const char *)r + i * stride);

		at += (size_t)snprintf(out + at, cap - at, " %.*s", (int)x->key_len, x->key);
	}
	if (at < cap)
		snprintf(out + at, cap - at, "\n");
}

/* What reads of branch at rev (0: its head) answer, as text; 0 or the error. */
static int answers(cairn_store *st, const char *branch, uint64_t rev, char *out, size_t cap)
{
	cairn_read_options ro = {0};
	cairn_query_options q = {0};
	cairn_query_result qr;
	cairn_search_options so = {0};
	cairn_vsearch_options vo = {0};
	cairn_resolve_options rs = {0};
	cairn_record recs[100];
	cairn_hit hits[40];
	cairn_match m[10];
	float v[CDIM];
	uint64_t count;
	size_t n;
	int rc, trunc;
	cairn_txn *t;

	out[0] = 0;
	ro.domain = "c";
	ro.branch = branch;
	ro.at_revision = rev;
	if ((rc = cairn_txn_begin(st, &ro, &t)))
		return rc;
	q.kind = "Doc";
	q.where = "{\"tag\":\"t1\"}";
	q.where_len = strlen(q.where);
	q.limit = 100;
	if ((rc = cairn_query(t, &q, recs, 100, &qr)))
		goto out;
	put_keys(out, cap, "query", recs, qr.n, sizeof(recs[0]));
	so.text = "cedar";
	so.limit = 40;
	so.all_words = 1;
	if ((rc = cairn_search(t, &so, hits, 40, &n, NULL)))
		goto out;
	put_keys(out, cap, "search", &hits[0].rec, n, sizeof(hits[0]));
	for (int d = 0; d < CDIM; d++)
		v[d] = (float)(d % 3) - 1.0f;
	vo.vector = v;
	vo.dim = CDIM;
	vo.limit = 20;
	if ((rc = cairn_vsearch(t, &vo, hits, 40, &n)))
		goto out;
	put_keys(out, cap, "vsearch", &hits[0].rec, n, sizeof(hits[0]));
	vo.exact = 1;
	if ((rc = cairn_vsearch(t, &vo, hits, 40, &n)))
		goto out;
	put_keys(out, cap, "exact", &hits[0].rec, n, sizeof(hits[0]));
	rs.text = "C-7-0";
	rs.exact = 1;
	if ((rc = cairn_resolve(t, &rs, m, 10, &n, &trunc)))
		goto out;
	put_keys(out, cap, "resolve", &m[0].rec, n, sizeof(m[0]));
	/* A name every Version of d8 and d16 has, brought by their first (compacted). */
	for (int i = 8; i <= 16; i += 8) {
		char nick[32];

		snprintf(nick, sizeof(nick), "nick %d", i);
		rs.text = nick;
		if ((rc = cairn_resolve(t, &rs, m, 10, &n, &trunc)))
			goto out;
		put_keys(out, cap, "nick", &m[0].rec, n, sizeof(m[0]));
	}
	if ((rc = cairn_count(t, "Doc", &count)))
		goto out;
	snprintf(out + strlen(out), cap - strlen(out), "count: %llu\n", (unsigned long long)count);
out:
	cairn_txn_end(t);
	return rc;
}

#define CAP 16384

void test_compact_indexes(void)
{
	cairn_open_options oo = {.flags = CAIRN_OPEN_CREATE | CAIRN_OPEN_NOSYNC | CAIRN_OPEN_NO_BACKGROUND};
	cairn_commit_options co = {0};
	cairn_compact_options o = {0};
	cairn_compact_result r, dry;
	cairn_vindex_options vo = {0};
	cairn_vindex_info vi;
	cairn_store *st;
	uint64_t r1, r2, r3, r4, rb, attr0, vec0;
	static char before[6][CAP], after[CAP];
	const char *br[6] = {"main", "main", "main", "main", "b", "b"};
	uint64_t at[6];

	OK(cairn_open(test_path("store"), &oo, &st));
	OK(cairn_domain_create(st, "c"));
	co.domain = "c";
	co.prov.actor = "test";
	OK(cairn_schema_apply(st, &co, cschema, strlen(cschema), NULL));
	OK(write_docs(st, NULL, 0, CN, 1, 0, &r1));
	vo.lists = 8;
	OK(cairn_vindex_update(st, "c", &vo, &vi));
	OK(write_docs(st, NULL, 0, CN, 2, 1, &r2));	  /* the even ones change */
	OK(cairn_branch_create(st, "c", "b", "main")); /* b forks at r2 */
	OK(write_docs(st, NULL, 0, CN, 4, 2, &r3));	  /* a quarter changes again */
	OK(write_docs(st, NULL, 1, CN, 10, -1, &r4));  /* a tenth are deleted */
	OK(write_docs(st, "b", 3, CN, 6, 3, &rb));	  /* b changes some of its own */
	OK(cairn_vindex_update(st, "c", NULL, &vi));
	CHECK(vi.vectors > CN);
	at[0] = r1, at[1] = r2, at[2] = r3, at[3] = 0, at[4] = r2 + 1, at[5] = 0;
	for (int i = 0; i < 6; i++)
		OK(answers(st, br[i], at[i], before[i], CAP));
	CHECK(strcmp(before[1], before[3]) != 0 && strstr(before[2], "d8") != NULL);
	attr0 = test_db_entries(st, "attr");
	vec0 = test_db_entries(st, "vectors");

	/* The horizon at r3: r1 and r2 of main are out of reach, b's view of main at r2 is not. */
	o.horizon = r3;
	/* A dry run first: what it would remove, nothing written. */
	o.dry_run = 1;
	OK(cairn_compact(st, "c", &o, &dry));
	o.dry_run = 0;
	CHECK(dry.horizon == r3 && dry.versions == CN / 2 && dry.attr_entries > 0);
	CHECK(test_db_entries(st, "attr") == attr0 && test_db_entries(st, "vectors") == vec0);
	OK(answers(st, "main", r1, after, CAP));
	CHECK(strcmp(before[0], after) == 0);
	OK(cairn_compact(st, "c", &o, &r));
	CHECK(r.versions == dry.versions && r.attr_entries == dry.attr_entries &&
	      r.vectors == dry.vectors && r.vindex_entries == dry.vindex_entries &&
	      r.postings == dry.postings && r.segments == dry.segments && r.cells == dry.cells);
	CHECK(r.horizon == r3);
	/*
	 * The first generation of the even Docs; not the second of every fourth,
	 * which b sees through main as of r2.
	 */
	CHECK(r.versions == CN / 2);
	CHECK(r.attr_entries > 0 && r.vectors > 0 && r.vindex_entries > 0 && r.postings > 0 &&
	      r.segments > 0 && r.cells > 0 && r.link_entries == 0);
	CHECK(test_db_entries(st, "attr") == attr0 - r.attr_entries);
	CHECK(test_db_entries(st, "vectors") == vec0 - r.vectors);
	CHECK(r.vectors == r.versions);
	OK(cairn_vindex_stat(st, "c", &vi));
	CHECK(vi.vectors == vec0 - r.vindex_entries);
	for (int i = 0; i < 6; i++) {
		int rc = answers(st, br[i], at[i], after, CAP);

		if (i < 2) { /* main before the horizon */
			CHECK_RC(rc, CAIRN_ECOMPACTED);
			continue;
		}
		OK(rc);
		if (strcmp(before[i], after) != 0)
			fprintf(stderr, "    %s at %llu:\n%s    now:\n%s", br[i],
				(unsigned long long)at[i], before[i], after);
		CHECK(strcmp(before[i], after) == 0);
	}
	OK(cairn_check(st, "c", NULL, NULL, NULL));

	/* Again: nothing more to remove; a lower horizon keeps the Domain's. */
	o.horizon = r1;
	OK(cairn_compact(st, "c", &o, &r));
	CHECK(r.horizon == r3 && r.versions == CN / 2 && r.attr_entries == 0 &&
	      r.vectors == 0 && r.vindex_entries == 0 && r.postings == 0 && r.cells == 0);
	/* The segments the first one wrote were looked at, and left as they are. */
	CHECK(r.segments == 0);

	/* b merges into main: its base, main at r2, is still read. */
	{
		cairn_merge_options mo;
		cairn_merge_result mr;

		memset(&mo, 0, sizeof(mo));
		memset(&mr, 0, sizeof(mr));
		mo.commit.domain = "c";
		mo.commit.prov.actor = "test";
		mo.source = "b";
		mo.resolve = CAIRN_RESOLVE_THEIRS;
		OK(cairn_merge(st, &mo, NULL, NULL, &mr));
		CHECK(mr.revision > rb && mr.items > 0);
	}
	OK(cairn_check(st, "c", NULL, NULL, NULL));

	/* Up to the head by a retention of nothing; a long one finds nothing that old. */
	o.horizon = 0;
	o.retain_ms = 0;
	OK(cairn_compact(st, "c", &o, &r));
	CHECK(r.horizon == test_head(st, "c"));
	OK(answers(st, "main", 0, after, CAP));
	OK(cairn_check(st, "c", NULL, NULL, NULL));
	cairn_close(st);
}

void test_compact_errors(void)
{
	cairn_open_options ro = {.flags = CAIRN_OPEN_RDONLY};
	cairn_compact_options o = {0};
	cairn_compact_result r;
	cairn_store *st = test_store();
	char *before, *after;
	uint64_t head;

	CHECK(st);
	OK(test_commit(st, "{\"kind\":\"Supplier\",\"key\":\"S1\",\"title\":\"one\"}", NULL));
	OK(test_commit(st, "{\"kind\":\"Supplier\",\"key\":\"S1\",\"title\":\"two\"}", NULL));
	head = test_head(st, "d");
	before = test_export(st, "d");
	CHECK(before);
	o.horizon = head + 1;
	CHECK_RC(cairn_compact(st, "d", &o, &r), CAIRN_EINVAL);
	o.horizon = 0;
	o.retain_ms = -1;
	CHECK_RC(cairn_compact(st, "d", &o, &r), CAIRN_EINVAL);
	o.retain_ms = 0;
	CHECK_RC(cairn_compact(st, "nope", &o, &r), CAIRN_ENODOMAIN);
	CHECK_RC(cairn_compact(st, "d", NULL, &r), CAIRN_EINVAL);
	CHECK_RC(cairn_compact(NULL, "d", &o, &r), CAIRN_EINVAL);
	/* Nothing older than a day: nothing done, time travel whole. */
	o.retain_ms = 86400000;
	OK(cairn_compact(st, "d", &o, &r));
	CHECK(r.horizon == 0 && r.versions == 0);
	{
		cairn_read_options rd = {0};
		cairn_txn *t;

		rd.domain = "d";
		rd.at_revision = 1;
		OK(cairn_txn_begin(st, &rd, &t));
		cairn_txn_end(t);
	}
	after = test_export(st, "d");
	CHECK(after && strcmp(before, after) == 0);
	free(after);
	cairn_close(st);
	OK(cairn_open(test_path("store"), &ro, &st));
	o.retain_ms = 0;
	CHECK_RC(cairn_compact(st, "d", &o, &r), CAIRN_EREADONLY);
	after = test_export(st, "d");
	CHECK(after && strcmp(before, after) == 0);
	free(after);
	free(before);
	cairn_close(st);
}

/* With a retention, the maintenance thread compacts every Domain by itself. */
void test_compact_background(void)
{
	cairn_open_options oo = {.flags = CAIRN_OPEN_NOSYNC, .retain_ms = 1};
	cairn_store *st = test_store();
	uint64_t h = 0, head, passes;

	CHECK(st);
	OK(test_commit(st, "{\"kind\":\"Supplier\",\"key\":\"S1\",\"values\":{\"country\":\"DE\"}}", NULL));
	OK(test_commit(st, "{\"kind\":\"Supplier\",\"key\":\"S1\",\"values\":{\"country\":\"FR\"}}", NULL));
	OK(test_commit(st, "{\"kind\":\"Supplier\",\"key\":\"S1\",\"values\":{\"country\":\"US\"}}", NULL));
	head = test_head(st, "d");
	cairn_close(st);
	oo.retain_ms = -5;
	CHECK_RC(cairn_open(test_path("store"), &oo, &st), CAIRN_EINVAL);
	CHECK(st == NULL);
	oo.retain_ms = 1;
	OK(knob_set("compact_every_ms", 50, NULL));
	usleep(5000); /* time passes: the last revision is older than the retention */
	OK(cairn_open(test_path("store"), &oo, &st));
	/* The first pass of compaction runs right after the open. */
	OK(maint_wait(st, 1, TEST_HANG_MS));
	h = test_horizon(st, "d");
	CHECK(h == head);
	{
		cairn_read_options ro = {0};
		cairn_txn *t;

		ro.domain = "d";
		ro.at_revision = head - 1;
		CHECK_RC(cairn_txn_begin(st, &ro, &t), CAIRN_ECOMPACTED);
	}
	/* And again an interval later, for a new commit. */
	OK(test_commit(st, "{\"kind\":\"Supplier\",\"key\":\"S1\",\"values\":{\"country\":\"DE\"}}", NULL));
	head = test_head(st, "d");
	/*
	 * The pass after the next one began after this commit, and an
	 * interval (50 ms, more than the retention) after it.
	 */
	passes = maint_compactions(st);
	OK(maint_wait(st, passes + 2, TEST_HANG_MS));
	h = test_horizon(st, "d");
	CHECK(h == head);
	OK(cairn_check(st, "d", NULL, NULL, NULL));
	cairn_close(st);
}
