/*
 * The interface's growth rules (docs/api.md, "Versions"): the version
 * calls, options whose reserved words are set (as a program built for a
 * newer version would set them) refused and nothing written, and the
 * reserved words of every result zeroed by the library.
 */
#include <stdlib.h>
#include <string.h>

#include "tests.h"

#define POISON 0xa5a5a5a5a5a5a5a5ull

void test_api_version(void)
{
	char want[32];

	snprintf(want, sizeof(want), "%d.%d.%d", CAIRN_VERSION_MAJOR, CAIRN_VERSION_MINOR,
		 CAIRN_VERSION_PATCH);
	CHECK(strcmp(cairn_version(), CAIRN_VERSION_STRING) == 0);
	CHECK(strcmp(cairn_version(), want) == 0);
	CHECK(cairn_version_number() == CAIRN_VERSION_NUMBER);
	CHECK(cairn_version_number() ==
	      CAIRN_VERSION_MAJOR * 10000 + CAIRN_VERSION_MINOR * 100 + CAIRN_VERSION_PATCH);
}

/* Did the last call fail with CAIRN_EINVAL and a message naming the reserved words? */
static int refused_as_newer(int rc)
{
	return rc == CAIRN_EINVAL && strstr(cairn_errmsg(), "reserved word") &&
	       strstr(cairn_errmsg(), CAIRN_VERSION_STRING);
}

static const char line[] = "{\"kind\":\"Supplier\",\"key\":\"S-9\",\"title\":\"Nine\"}";

/* The writes: each refused, and the head of main where it was. */
static void writes_refused(cairn_store *st)
{
	cairn_commit_options co = {.domain = "d"};
	cairn_merge_options mo = {.commit = {.domain = "d"}, .source = "b"};
	cairn_import_options io = {.commit = {.domain = "d"}};
	cairn_compact_options xo = {0};
	cairn_vindex_options vo = {0};
	cairn_import *im = NULL;
	cairn_changeset *cs;
	uint64_t head = test_head(st, "d");

	OK(cairn_changeset_new(&cs));
	OK(cairn_changeset_add_json(cs, line, strlen(line)));
	for (int i = 0; i < CAIRN_RESERVED; i++) {
		memset(co.reserved, 0, sizeof(co.reserved));
		co.reserved[i] = 1;
		CHECK(refused_as_newer(cairn_commit(st, &co, cs, NULL)));
		CHECK(refused_as_newer(cairn_schema_apply(st, &co, test_schema,
							  strlen(test_schema), NULL)));
		CHECK(refused_as_newer(cairn_reembed(st, &co, NULL)) ||
		      cairn_reembed(st, &co, NULL) == CAIRN_EINVAL); /* no embedder: refused anyway */
	}
	memset(co.reserved, 0, sizeof(co.reserved));
	{
		cairn_commit_req r = {0};

		co.reserved[3] = 7;
		r.opts = &co;
		r.cs = cs;
		OK(cairn_commit_group(st, &r, 1));
		CHECK(refused_as_newer(r.rc) || (r.rc == CAIRN_EINVAL && strstr(r.msg, "reserved")));
		co.reserved[3] = 0;
	}
	mo.reserved[0] = 1;
	CHECK(refused_as_newer(cairn_merge(st, &mo, NULL, NULL, NULL)));
	mo.reserved[0] = 0;
	mo.commit.reserved[2] = 1;
	CHECK(refused_as_newer(cairn_merge(st, &mo, NULL, NULL, NULL)));
	io.reserved[1] = 1;
	CHECK(refused_as_newer(cairn_import_begin(st, &io, &im)) && im == NULL);
	io.reserved[1] = 0;
	io.commit.reserved[0] = 1;
	CHECK(refused_as_newer(cairn_import_begin(st, &io, &im)) && im == NULL);
	xo.reserved[0] = 1;
	CHECK(refused_as_newer(cairn_compact(st, "d", &xo, NULL)));
	vo.reserved[3] = 1;
	CHECK(refused_as_newer(cairn_vindex_update(st, "d", &vo, NULL)));
	cairn_changeset_free(cs);
	CHECK(test_head(st, "d") == head);
	CHECK(test_horizon(st, "d") == 0);
}

/* The reads: each refused. */
static void reads_refused(cairn_store *st)
{
	cairn_read_options ro = {.domain = "d"};
	cairn_query_options qo = {.kind = "Supplier", .limit = 4};
	cairn_ref start = {"Supplier", "S-1", 3};
	cairn_neighborhood_options no = {.start = &start, .n_start = 1};
	cairn_resolve_options so = {.text = "Acme"};
	cairn_search_options to = {.text = "Acme", .limit = 4};
	float vec[4] = {1, 0, 0, 0};
	cairn_vsearch_options vo = {.vector = vec, .dim = 4};
	cairn_rank_options rank = {0};
	cairn_hybrid_options ho = {.text = "Acme", .limit = 4};
	cairn_record recs[4];
	cairn_query_result qr;
	cairn_graph g;
	cairn_match m[4];
	cairn_hit h[4];
	size_t n;
	cairn_txn *t;

	ro.reserved[2] = 1;
	CHECK(refused_as_newer(cairn_txn_begin(st, &ro, &t)) && t == NULL);
	ro.reserved[2] = 0;
	OK(cairn_txn_begin(st, &ro, &t));
	qo.reserved[0] = 1;
	CHECK(refused_as_newer(cairn_query(t, &qo, recs, 4, &qr)));
	no.reserved[1] = 1;
	CHECK(refused_as_newer(cairn_neighborhood(t, &no, &g)));
	so.reserved[2] = 1;
	CHECK(refused_as_newer(cairn_resolve(t, &so, m, 4, &n, NULL)));
	to.reserved[2] = 1;
	CHECK(refused_as_newer(cairn_search(t, &to, h, 4, &n, NULL)));
	vo.reserved[0] = 1;
	CHECK(refused_as_newer(cairn_vsearch(t, &vo, h, 4, &n)));
	ho.reserved[1] = 1;
	CHECK(refused_as_newer(cairn_hybrid(t, &ho, h, 4, &n)));
	ho.reserved[1] = 0;
	rank.reserved[2] = 1;
	ho.rank = &rank;
	CHECK(refused_as_newer(cairn_hybrid(t, &ho, h, 4, &n)));
	/* The same options zeroed again are taken. */
	qo.reserved[0] = 0;
	OK(cairn_query(t, &qo, recs, 4, &qr));
	CHECK(qr.n == 1);
	to.reserved[2] = 0;
	OK(cairn_search(t, &to, h, 4, &n, NULL));
	CHECK(n == 1);
	cairn_txn_end(t);
}

void test_api_reserved_options(void)
{
	cairn_store *st = test_store();
	cairn_open_options oo = {.flags = CAIRN_OPEN_NOSYNC};
	cairn_store *other = (cairn_store *)&oo;

	CHECK(st);
	OK(test_commit(st, "{\"kind\":\"Supplier\",\"key\":\"S-1\",\"title\":\"Acme\"}", NULL));
	OK(cairn_branch_create(st, "d", "b", NULL));
	writes_refused(st);
	if (test_failed)
		goto out;
	reads_refused(st);
	if (test_failed)
		goto out;
	oo.reserved[0] = 1;
	CHECK(refused_as_newer(cairn_open(test_path("other"), &oo, &other)) && other == NULL);
out:
	cairn_close(st);
}

static int all_zero_n(const uint64_t *r, int n)
{
	for (int i = 0; i < n; i++)
		if (r[i])
			return 0;
	return 1;
}

/* Every word of a reserved array (of whatever length a field left it) zero? */
#define all_zero(r) all_zero_n((r), (int)(sizeof(r) / sizeof((r)[0])))

void test_api_reserved_results(void)
{
	cairn_store *st = test_store();
	cairn_read_options ro = {.domain = "d"};
	cairn_commit_result cr;
	cairn_merge_options mo = {.commit = {.domain = "d"}, .source = "b"};
	cairn_merge_result mr;
	cairn_compact_options xo = {.dry_run = 1};
	cairn_compact_result xr;
	cairn_check_report ck;
	cairn_read_stats rs;
	cairn_vindex_info vi;
	cairn_search_options so = {.text = "Acme", .limit = 4};
	cairn_search_info si;
	cairn_import_options io = {.commit = {.domain = "d"}};
	cairn_import_stats is;
	cairn_import *im;
	cairn_hit h[4];
	cairn_txn *t;
	FILE *in;
	size_t n;

	CHECK(st);
	memset(&cr, 0xa5, sizeof(cr));
	OK(test_commit(st, "{\"kind\":\"Supplier\",\"key\":\"S-1\",\"title\":\"Acme\"}", &cr));
	CHECK(all_zero(cr.reserved));
	OK(cairn_branch_create(st, "d", "b", NULL));
	OK(test_commit_on(st, "d", "b", "{\"kind\":\"Supplier\",\"key\":\"S-2\",\"title\":\"Acme two\"}",
			  NULL));
	memset(&mr, 0xa5, sizeof(mr));
	OK(cairn_merge(st, &mo, NULL, NULL, &mr));
	CHECK(all_zero(mr.reserved) && mr.schema_revision == 0);
	memset(&xr, 0xa5, sizeof(xr));
	OK(cairn_compact(st, "d", &xo, &xr));
	CHECK(all_zero(xr.reserved));
	memset(&ck, 0xa5, sizeof(ck));
	OK(cairn_check(st, "d", NULL, NULL, &ck));
	/* (one word became unverifiable) */
	CHECK(all_zero_n(ck.reserved, CAIRN_RESERVED - 1) && ck.unverifiable == 0);
	memset(&vi, 0xa5, sizeof(vi));
	OK(cairn_vindex_stat(st, "d", &vi));
	CHECK(all_zero(vi.reserved));
	OK(cairn_txn_begin(st, &ro, &t));
	memset(&si, 0xa5, sizeof(si));
	OK(cairn_search(t, &so, h, 4, &n, &si));
	CHECK(n == 2 && all_zero_n(si.reserved, CAIRN_RESERVED - 1) && si.stopped == 0);
	so.text = "the Acme";
	memset(&si, 0xa5, sizeof(si));
	OK(cairn_search(t, &so, h, 4, &n, &si));
	CHECK(n == 2 && si.stopped == 1 && si.words == 1);
	so.text = "Acme";
	memset(&rs, 0xa5, sizeof(rs));
	cairn_txn_stats(t, &rs);
	CHECK(all_zero(rs.reserved));
	cairn_txn_end(t);
	memset(&rs, 0xa5, sizeof(rs));
	cairn_txn_stats(NULL, &rs);
	CHECK(all_zero(rs.reserved));
	in = fmemopen((void *)line, strlen(line), "r");
	CHECK(in);
	OK(cairn_import_begin(st, &io, &im));
	OK(cairn_import_feed(im, "line", in));
	fclose(in);
	memset(&is, 0xa5, sizeof(is));
	OK(cairn_import_end(im, &is));
	CHECK(all_zero(is.reserved));
	cairn_close(st);
}

/* The names of 0.1.0 still work, as the new ones do (cairn.h, "deprecated"). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
void test_api_old_names(void)
{
	cairn_store *st = test_store();
	cairn_commit_options co = {.domain = "d"};
	cairn_read_options ro = {.domain = "d"};
	cairn_changeset *cs;
	cairn_record r;
	cairn_txn *t;
	uint64_t id = 0;
	float v[3] = {1, 0, 0};

	CHECK(st);
	OK(cairn_changeset_new(&cs));
	OK(cairn_cs_put(cs, "Supplier", "S-1", 3, "Acme", 4, NULL, 0));
	OK(cairn_cs_vector(cs, v, 3));
	OK(cairn_cs_add_json(cs, line, strlen(line)));
	OK(cairn_cs_put(cs, "Part", "P-1", 3, "Bolt", 4, "{\"sku\":\"B\"}", 11));
	OK(cairn_cs_link(cs, "supplied_by", "Part", "P-1", 3, "Supplier", "S-1", 3, NULL, 0));
	CHECK(cairn_changeset_count(cs) == 4);
	OK(cairn_commit(st, &co, cs, NULL));
	cairn_changeset_clear(cs);
	OK(cairn_cs_patch(cs, "Part", "P-1", 3, "{\"sku\":\"C\"}", 11));
	OK(cairn_cs_unlink(cs, "supplied_by", "Part", "P-1", 3, "Supplier", "S-1", 3));
	OK(cairn_cs_delete(cs, "Supplier", "S-9", 3, 0));
	OK(cairn_commit(st, &co, cs, NULL));
	cairn_changeset_free(cs);
	OK(cairn_read_begin(st, &ro, &t));
	OK(cairn_get(t, "Part", "P-1", 3, &r));
	CHECK(test_streq(r.values, r.values_len, "{\"sku\":\"C\"}"));
	CHECK_RC(cairn_get(t, "Supplier", "S-9", 3, &r), CAIRN_ENOTFOUND);
	cairn_txn_end(t);
	OK(cairn_branch_create(st, "d", "b", NULL));
	OK(cairn_propose(st, "d", "b", NULL, "t", NULL, NULL, &id));
	CHECK(id == 1);
	cairn_close(st);
}
#pragma GCC diagnostic pop
