/* Diffs and three-way merges: clean merges, every conflict kind, resolutions, lineage, repeats. */
#include <stdlib.h>

#include "tests.h"

static int on(cairn_store *st, const char *branch, const char *lines, cairn_commit_result *res)
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
	co.prov.actor = branch ? branch : "main";
	rc = cairn_commit(st, &co, cs, res);
	cairn_changeset_free(cs);
	return rc;
}

/* Items reported by a merge or a diff, as text lines "Kind:key ours theirs conflicts unresolved diff". */
struct seen {
	char text[8192];
	int n;
};

static int collect(void *ctx, const cairn_change_item *it)
{
	struct seen *s = ctx;
	size_t l = strlen(s->text);

	if (it->is_link)
		snprintf(s->text + l, sizeof(s->text) - l, "%s %.*s->%.*s %d %d %d %d %.*s\n", it->rel,
			 (int)it->from_len, it->from_key, (int)it->to_len, it->to_key, it->ours,
			 it->theirs, it->conflicts, it->unresolved, (int)it->diff_len, it->diff);
	else
		snprintf(s->text + l, sizeof(s->text) - l, "%s:%.*s %d %d %d %d %.*s\n", it->kind,
			 (int)it->key_len, it->key, it->ours, it->theirs, it->conflicts,
			 it->unresolved, (int)it->diff_len, it->diff);
	s->n++;
	return 0;
}

static int merge(cairn_store *st, const char *from, const char *into, int resolve,
		 const char *resolutions, struct seen *s, cairn_merge_result *res)
{
	cairn_merge_options o;

	memset(&o, 0, sizeof(o));
	o.commit.domain = "d";
	o.commit.branch = into;
	o.commit.prov.actor = "merger";
	o.source = from;
	o.resolve = resolve;
	o.resolutions = resolutions;
	o.resolutions_len = resolutions ? strlen(resolutions) : 0;
	if (s)
		memset(s, 0, sizeof(*s));
	return cairn_merge(st, &o, s ? collect : NULL, s, res);
}

static int values_of(cairn_store *st, const char *branch, const char *kind, const char *key,
		     char *out, size_t cap)
{
	cairn_read_options ro = {0};
	cairn_record r;
	cairn_txn *t;
	int rc;

	ro.domain = "d";
	ro.branch = branch;
	if ((rc = cairn_txn_begin(st, &ro, &t)))
		return rc;
	rc = cairn_get(t, kind, key, strlen(key), &r);
	if (!rc)
		snprintf(out, cap, "%.*s|%.*s", (int)r.title_len, r.title, (int)r.values_len, r.values);
	cairn_txn_end(t);
	return rc;
}

static cairn_store *setup(void)
{
	cairn_store *st = test_store();

	if (!st)
		return NULL;
	if (on(st, NULL, "{\"kind\":\"Supplier\",\"key\":\"S\",\"title\":\"Acme\",\"values\":{\"vat\":\"V\",\"rating\":1,\"country\":\"DE\"}}\n"
			 "{\"kind\":\"Supplier\",\"key\":\"T\",\"values\":{\"vat\":\"W\"}}\n"
			 "{\"kind\":\"Part\",\"key\":\"P\",\"values\":{\"sku\":\"A\",\"supplier\":\"S\"}}\n"
			 "{\"rel\":\"supplied_by\",\"from\":\"Part:P\",\"to\":\"Supplier:S\",\"values\":{\"share\":1}}",
	       NULL) ||
	    cairn_branch_create(st, "d", "b", NULL)) {
		cairn_close(st);
		return NULL;
	}
	return st;
}

void test_merge_clean(void)
{
	cairn_store *st = setup();
	cairn_merge_result res;
	cairn_commit_result rb;
	struct seen s;
	char v[512];

	CHECK(st);
	/* Different attributes of one Record on each side, and a new Record on the branch. */
	OK(on(st, "b", "{\"kind\":\"Supplier\",\"key\":\"S\",\"op\":\"patch\",\"values\":{\"rating\":5}}\n"
		       "{\"kind\":\"Supplier\",\"key\":\"N\",\"values\":{\"vat\":\"N1\"}}",
	      &rb));
	OK(on(st, NULL, "{\"kind\":\"Supplier\",\"key\":\"S\",\"op\":\"patch\",\"values\":{\"country\":\"FR\"}}", NULL));
	/* A dry run reports and writes nothing. */
	{
		cairn_merge_options o;
		uint64_t head = test_head(st, "d");

		memset(&o, 0, sizeof(o));
		o.commit.domain = "d";
		o.source = "b";
		o.dry_run = 1;
		memset(&s, 0, sizeof(s));
		OK(cairn_merge(st, &o, collect, &s, &res));
		CHECK(res.revision == 0 && res.items == 2 && res.conflicts == 0);
		CHECK(test_head(st, "d") == head);
	}
	OK(merge(st, "b", NULL, CAIRN_RESOLVE_NONE, NULL, &s, &res));
	CHECK(res.revision && res.conflicts == 0 && res.items == 2 && res.changes == 2);
	CHECK(strstr(s.text, "Supplier:S 2 2 0 0 {\"country\":{\"base\":\"DE\",\"ours\":\"FR\",\"theirs\":\"DE\"},\"rating\":{\"base\":1,\"ours\":1,\"theirs\":5}}"));
	CHECK(strstr(s.text, "Supplier:N 0 1 0 0"));
	OK(values_of(st, NULL, "Supplier", "S", v, sizeof(v)));
	CHECK(strcmp(v, "Acme|{\"country\":\"FR\",\"rating\":5,\"vat\":\"V\"}") == 0);
	OK(values_of(st, NULL, "Supplier", "N", v, sizeof(v)));
	/* The merge commit has two parents, and merged values keep their lineage. */
	{
		cairn_read_options ro = {0};
		cairn_lineage_entry le[8];
		cairn_revision rv, created;
		cairn_txn *t;
		size_t n;

		ro.domain = "d";
		OK(cairn_txn_begin(st, &ro, &t));
		OK(cairn_revision_get(t, res.revision, &rv));
		CHECK(rv.parent2 == rb.revision && strcmp(rv.branch, "main") == 0);
		OK(cairn_lineage(t, "Supplier", "S", 1, le, 8, &n, &created));
		for (size_t i = 0; i < n; i++)
			if (strcmp(le[i].attribute, "rating") == 0)
				CHECK(le[i].rev.revision == rb.revision &&
				      test_streq(le[i].rev.actor, le[i].rev.actor_len, "b"));
		OK(cairn_lineage(t, "Supplier", "N", 1, le, 8, &n, &created));
		CHECK(created.revision == rb.revision);
		cairn_txn_end(t);
	}
	/* Nothing left to merge: a second merge writes nothing. */
	OK(merge(st, "b", NULL, CAIRN_RESOLVE_NONE, NULL, &s, &res));
	CHECK(res.revision == 0);
	CHECK_RC(merge(st, "b", "b", CAIRN_RESOLVE_NONE, NULL, NULL, &res), CAIRN_EINVAL);
	CHECK_RC(merge(st, "nope", NULL, CAIRN_RESOLVE_NONE, NULL, NULL, &res), CAIRN_ENOBRANCH);
	OK(cairn_check(st, "d", NULL, NULL, NULL));
	cairn_close(st);
}

void test_merge_conflicts(void)
{
	cairn_store *st = setup();
	cairn_merge_result res;
	struct seen s;
	char v[512];
	uint64_t head;
	char *before;

	CHECK(st);
	OK(on(st, "b", "{\"kind\":\"Supplier\",\"key\":\"S\",\"title\":\"Acme B\",\"values\":{\"vat\":\"V\",\"rating\":5,\"country\":\"DE\"}}", NULL));
	OK(on(st, NULL, "{\"kind\":\"Supplier\",\"key\":\"S\",\"title\":\"Acme M\",\"values\":{\"vat\":\"V\",\"rating\":3,\"country\":\"DE\"}}", NULL));
	head = test_head(st, "d");
	before = test_export(st, "d");
	/* Both changed the title and the rating: two conflicts, reported in full, nothing written. */
	CHECK_RC(merge(st, "b", NULL, CAIRN_RESOLVE_NONE, NULL, &s, &res), CAIRN_EMERGE);
	CHECK(res.conflicts == 2 && res.unresolved == 2);
	CHECK(strstr(s.text, "\"(title)\":{\"base\":\"Acme\",\"ours\":\"Acme M\",\"theirs\":\"Acme B\",\"conflict\":true}"));
	CHECK(strstr(s.text, "\"rating\":{\"base\":1,\"ours\":3,\"theirs\":5,\"conflict\":true}"));
	CHECK(test_head(st, "d") == head);
	{
		char *after = test_export(st, "d");

		CHECK(after && strcmp(before, after) == 0);
		free(after);
	}
	/* An explicit resolution for one attribute, the default for the other. */
	CHECK_RC(merge(st, "b", NULL, CAIRN_RESOLVE_NONE,
		       "{\"kind\":\"Supplier\",\"key\":\"S\",\"attribute\":\"rating\",\"value\":4}\n", &s, &res),
		 CAIRN_EMERGE);
	CHECK(res.unresolved == 1);
	CHECK_RC(merge(st, "b", NULL, CAIRN_RESOLVE_NONE, "{\"kind\":\"Supplier\"", &s, &res), CAIRN_EJSON);
	CHECK_RC(merge(st, "b", NULL, CAIRN_RESOLVE_NONE, "{\"kind\":\"Nope\",\"key\":\"S\",\"attribute\":\"x\",\"take\":\"ours\"}", &s, &res),
		 CAIRN_EINVAL);
	/* Resolutions are checked before anything is merged: the attribute, and the value's shape. */
	CHECK_RC(merge(st, "b", NULL, CAIRN_RESOLVE_THEIRS, "{\"kind\":\"Supplier\",\"key\":\"S\",\"attribute\":\"ratin\",\"take\":\"ours\"}", &s, &res),
		 CAIRN_EUNKNOWNATTR);
	CHECK_RC(merge(st, "b", NULL, CAIRN_RESOLVE_THEIRS, "{\"kind\":\"Supplier\",\"key\":\"S\",\"attribute\":\"(title)\",\"value\":{\"a\":1}}", &s, &res),
		 CAIRN_ETYPE);
	CHECK_RC(merge(st, "b", NULL, CAIRN_RESOLVE_THEIRS, "{\"kind\":\"Supplier\",\"key\":\"S\",\"attribute\":\"(exists)\",\"value\":false}", &s, &res),
		 CAIRN_EINVAL);
	CHECK_RC(merge(st, "b", NULL, CAIRN_RESOLVE_THEIRS, "{\"rel\":\"supplied_by\",\"from\":\"Part:P\",\"to\":\"Supplier:S\",\"value\":3}", &s, &res),
		 CAIRN_ETYPE);
	CHECK(test_head(st, "d") == head);
	OK(merge(st, "b", NULL, CAIRN_RESOLVE_THEIRS,
		 "{\"kind\":\"Supplier\",\"key\":\"S\",\"attribute\":\"rating\",\"value\":4}\n", &s, &res));
	CHECK(res.conflicts == 2 && res.unresolved == 0);
	CHECK(strstr(s.text, "\"conflict\":true,\"resolved\":4"));
	OK(values_of(st, NULL, "Supplier", "S", v, sizeof(v)));
	CHECK(strcmp(v, "Acme B|{\"country\":\"DE\",\"rating\":4,\"vat\":\"V\"}") == 0);
	OK(cairn_check(st, "d", NULL, NULL, NULL));
	free(before);
	cairn_close(st);
}

void test_merge_delete_change(void)
{
	cairn_store *st = setup();
	cairn_merge_result res;
	struct seen s;
	char v[512];

	CHECK(st);
	/* main deletes T, the branch changes it: a conflict on existence. */
	OK(on(st, NULL, "{\"kind\":\"Supplier\",\"key\":\"T\",\"op\":\"delete\"}", NULL));
	OK(on(st, "b", "{\"kind\":\"Supplier\",\"key\":\"T\",\"op\":\"patch\",\"values\":{\"rating\":2}}", NULL));
	CHECK_RC(merge(st, "b", NULL, CAIRN_RESOLVE_NONE, NULL, &s, &res), CAIRN_EMERGE);
	CHECK(strstr(s.text, "Supplier:T 3 2 1 1 {\"(exists)\":{\"base\":{},\"ours\":null,\"theirs\":{},\"conflict\":true}}"));
	/* Resolved for theirs: the Record comes back as the branch has it. */
	OK(merge(st, "b", NULL, CAIRN_RESOLVE_NONE,
		 "{\"kind\":\"Supplier\",\"key\":\"T\",\"attribute\":\"(exists)\",\"take\":\"theirs\"}", &s, &res));
	OK(values_of(st, NULL, "Supplier", "T", v, sizeof(v)));
	CHECK(strcmp(v, "|{\"rating\":2,\"vat\":\"W\"}") == 0);
	/* The other way round: the branch deletes, main changed it; ours keeps it. */
	OK(cairn_branch_create(st, "d", "c", NULL));
	OK(on(st, "c", "{\"kind\":\"Supplier\",\"key\":\"T\",\"op\":\"delete\"}", NULL));
	OK(on(st, NULL, "{\"kind\":\"Supplier\",\"key\":\"T\",\"op\":\"patch\",\"values\":{\"rating\":3}}", NULL));
	CHECK_RC(merge(st, "c", NULL, CAIRN_RESOLVE_NONE, NULL, &s, &res), CAIRN_EMERGE);
	OK(merge(st, "c", NULL, CAIRN_RESOLVE_OURS, NULL, &s, &res));
	OK(values_of(st, NULL, "Supplier", "T", v, sizeof(v)));
	CHECK(strcmp(v, "|{\"rating\":3,\"vat\":\"W\"}") == 0);
	/* A delete on one side only goes through. */
	OK(cairn_branch_create(st, "d", "e", NULL));
	OK(on(st, "e", "{\"kind\":\"Supplier\",\"key\":\"T\",\"op\":\"delete\"}", NULL));
	OK(merge(st, "e", NULL, CAIRN_RESOLVE_NONE, NULL, &s, &res));
	CHECK_RC(values_of(st, NULL, "Supplier", "T", v, sizeof(v)), CAIRN_ENOTFOUND);
	OK(cairn_check(st, "d", NULL, NULL, NULL));
	cairn_close(st);
}

void test_merge_links(void)
{
	cairn_store *st = setup();
	cairn_merge_result res;
	cairn_commit_result br;
	struct seen s;

	CHECK(st);
	/* The branch adds a Link and changes another's values; main changes the same values. */
	OK(on(st, "b", "{\"rel\":\"supplied_by\",\"from\":\"Part:P\",\"to\":\"Supplier:T\"}\n"
		       "{\"rel\":\"supplied_by\",\"from\":\"Part:P\",\"to\":\"Supplier:S\",\"values\":{\"share\":0.5}}",
	      &br));
	OK(on(st, NULL, "{\"rel\":\"supplied_by\",\"from\":\"Part:P\",\"to\":\"Supplier:S\",\"values\":{\"share\":0.7}}", NULL));
	CHECK_RC(merge(st, "b", NULL, CAIRN_RESOLVE_NONE, NULL, &s, &res), CAIRN_EMERGE);
	CHECK(res.conflicts == 1);
	CHECK(strstr(s.text, "supplied_by P->S 2 2 1 1 {\"(values)\":{\"base\":{\"share\":1},\"ours\":{\"share\":0.7},\"theirs\":{\"share\":0.5},\"conflict\":true}}"));
	CHECK(strstr(s.text, "supplied_by P->T 0 1 0 0"));
	OK(merge(st, "b", NULL, CAIRN_RESOLVE_NONE,
		 "{\"rel\":\"supplied_by\",\"from\":\"Part:P\",\"to\":\"Supplier:S\",\"take\":\"theirs\"}", &s, &res));
	{
		cairn_read_options ro = {0};
		cairn_link l[4];
		cairn_link_cursor cur = {{0}};
		cairn_txn *t;
		size_t n;

		ro.domain = "d";
		OK(cairn_txn_begin(st, &ro, &t));
		OK(cairn_links(t, "Part", "P", 1, CAIRN_OUT, NULL, &cur, l, 4, &n));
		CHECK(n == 2);
		CHECK(test_streq(l[0].values, l[0].values_len, "{\"share\":0.5}"));
		/* Merged Links keep their lineage: the branch's revision set them, and made P->T. */
		{
			cairn_lineage_entry le;
			cairn_revision created;

			OK(cairn_link_lineage(t, "supplied_by", "Part", "P", 1, "Supplier", "S", 1, &le,
					      &created));
			CHECK(le.rev.revision == br.revision);
			OK(cairn_link_lineage(t, "supplied_by", "Part", "P", 1, "Supplier", "T", 1, &le,
					      &created));
			CHECK(le.rev.revision == br.revision && created.revision == br.revision);
		}
		cairn_txn_end(t);
	}
	/* Unlinked on the branch, unchanged on main: unlinked by the merge. */
	OK(cairn_branch_create(st, "d", "u", NULL));
	OK(on(st, "u", "{\"rel\":\"supplied_by\",\"from\":\"Part:P\",\"to\":\"Supplier:T\",\"op\":\"unlink\"}", NULL));
	OK(merge(st, "u", NULL, CAIRN_RESOLVE_NONE, NULL, &s, &res));
	CHECK(res.changes == 1);
	OK(cairn_check(st, "d", NULL, NULL, NULL));
	cairn_close(st);
}

void test_merge_repeated(void)
{
	cairn_store *st = setup();
	cairn_merge_result res;
	struct seen s;
	char v[512];

	CHECK(st);
	OK(on(st, "b", "{\"kind\":\"Supplier\",\"key\":\"S\",\"op\":\"patch\",\"values\":{\"rating\":5}}", NULL));
	OK(merge(st, "b", NULL, CAIRN_RESOLVE_NONE, NULL, &s, &res));
	/* main changes the merged value again; the branch changes something else. */
	OK(on(st, NULL, "{\"kind\":\"Supplier\",\"key\":\"S\",\"op\":\"patch\",\"values\":{\"rating\":6}}", NULL));
	OK(on(st, "b", "{\"kind\":\"Supplier\",\"key\":\"S\",\"op\":\"patch\",\"values\":{\"country\":\"US\"}}", NULL));
	/* The base is now the last merge, so the old change is no conflict. */
	OK(merge(st, "b", NULL, CAIRN_RESOLVE_NONE, NULL, &s, &res));
	CHECK(res.conflicts == 0);
	OK(values_of(st, NULL, "Supplier", "S", v, sizeof(v)));
	CHECK(strcmp(v, "Acme|{\"country\":\"US\",\"rating\":6,\"vat\":\"V\"}") == 0);
	/* Bringing main into the branch, then the branch back: clean both ways. */
	OK(merge(st, NULL, "b", CAIRN_RESOLVE_NONE, NULL, &s, &res));
	OK(values_of(st, "b", "Supplier", "S", v, sizeof(v)));
	CHECK(strcmp(v, "Acme|{\"country\":\"US\",\"rating\":6,\"vat\":\"V\"}") == 0);
	OK(on(st, "b", "{\"kind\":\"Supplier\",\"key\":\"S\",\"op\":\"patch\",\"values\":{\"rating\":7}}", NULL));
	OK(merge(st, "b", NULL, CAIRN_RESOLVE_NONE, NULL, &s, &res));
	CHECK(res.conflicts == 0);
	OK(values_of(st, NULL, "Supplier", "S", v, sizeof(v)));
	CHECK(strstr(v, "\"rating\":7"));
	/* A branch diff shows both sides' changes since the common ancestor. */
	OK(on(st, NULL, "{\"kind\":\"Plant\",\"key\":\"M\"}", NULL));
	OK(on(st, "b", "{\"kind\":\"Plant\",\"key\":\"B\"}", NULL));
	memset(&s, 0, sizeof(s));
	OK(cairn_branch_diff(st, "d", "main", "b", collect, &s));
	CHECK(s.n == 2 && strstr(s.text, "Plant:M 1 0") && strstr(s.text, "Plant:B 0 1"));
	OK(cairn_check(st, "d", NULL, NULL, NULL));
	cairn_close(st);
}

void test_diff_revisions(void)
{
	cairn_store *st = setup();
	cairn_commit_result r1, r2;
	cairn_read_options ro = {0};
	cairn_txn *t;
	struct seen s;

	CHECK(st);
	OK(on(st, NULL, "{\"kind\":\"Supplier\",\"key\":\"S\",\"op\":\"patch\",\"values\":{\"rating\":2}}\n"
			"{\"kind\":\"Plant\",\"key\":\"L\",\"title\":\"Lyon\"}",
	      &r1));
	OK(on(st, NULL, "{\"kind\":\"Plant\",\"key\":\"L\",\"op\":\"delete\"}\n"
			"{\"rel\":\"supplied_by\",\"from\":\"Part:P\",\"to\":\"Supplier:S\",\"op\":\"unlink\"}",
	      &r2));
	ro.domain = "d";
	OK(cairn_txn_begin(st, &ro, &t));
	memset(&s, 0, sizeof(s));
	OK(cairn_revision_changes(t, r1.revision, collect, &s));
	CHECK(s.n == 2);
	CHECK(strstr(s.text, "Supplier:S 2 0 0 0 {\"rating\":{\"before\":1,\"after\":2}}"));
	CHECK(strstr(s.text, "Plant:L 1 0 0 0 {\"(title)\":{\"before\":null,\"after\":\"Lyon\"}}"));
	/* From before r1 to r2: the Plant came and went, so it is not there; the rest is. */
	memset(&s, 0, sizeof(s));
	OK(cairn_diff_revisions(t, r1.revision - 1, r2.revision, collect, &s));
	CHECK(s.n == 2 && strstr(s.text, "Supplier:S 2") && strstr(s.text, "supplied_by P->S 3"));
	CHECK_RC(cairn_diff_revisions(t, r2.revision, r1.revision, collect, &s), CAIRN_EINVAL);
	CHECK_RC(cairn_revision_changes(t, 999, collect, &s), CAIRN_ENOTFOUND);
	cairn_txn_end(t);
	cairn_close(st);
}

static int count_props(void *ctx, const cairn_proposal *p)
{
	char *s = ctx;
	size_t l = strlen(s);

	snprintf(s + l, 256 - l, "%llu:%d,", (unsigned long long)p->id, p->status);
	return 0;
}

void test_proposals(void)
{
	cairn_store *st = setup();
	cairn_read_options ro = {0};
	cairn_merge_result res;
	cairn_proposal p;
	cairn_txn *t;
	struct seen s;
	uint64_t id, id2;
	char list[256] = "", v[512];

	CHECK(st);
	ro.domain = "d";
	OK(on(st, "b", "{\"kind\":\"Supplier\",\"key\":\"S\",\"op\":\"patch\",\"values\":{\"rating\":5}}", NULL));
	OK(cairn_proposal_create(st, "d", "b", NULL, "Raise S's rating", "Seen in the audit", "agent/x", &id));
	CHECK(id == 1);
	CHECK_RC(cairn_proposal_create(st, "d", "main", "main", NULL, NULL, NULL, &id2), CAIRN_EINVAL);
	CHECK_RC(cairn_proposal_create(st, "d", "nope", NULL, NULL, NULL, NULL, &id2), CAIRN_ENOBRANCH);
	OK(cairn_proposal_note(st, "d", id, "reviewer", "looks right", "approve"));
	OK(cairn_txn_begin(st, &ro, &t));
	OK(cairn_proposal_get(t, id, &p));
	CHECK(p.status == CAIRN_PROPOSAL_OPEN && strcmp(p.source, "b") == 0 && strcmp(p.target, "main") == 0);
	CHECK(test_streq(p.title, p.title_len, "Raise S's rating"));
	CHECK(test_streq(p.author, p.author_len, "agent/x"));
	CHECK(strstr(p.notes, "\"author\":\"reviewer\",\"text\":\"looks right\",\"verdict\":\"approve\""));
	CHECK_RC(cairn_proposal_get(t, 99, &p), CAIRN_ENOTFOUND);
	cairn_txn_end(t);
	/* The diff on demand, then accept: merged, and the proposal says so. */
	memset(&s, 0, sizeof(s));
	OK(cairn_proposal_diff(st, "d", id, collect, &s, &res));
	CHECK(res.items == 1 && res.revision == 0 && strstr(s.text, "\"rating\""));
	OK(cairn_proposal_accept(st, "d", id, NULL, NULL, NULL, &res));
	CHECK(res.revision != 0);
	OK(values_of(st, NULL, "Supplier", "S", v, sizeof(v)));
	CHECK(strstr(v, "\"rating\":5"));
	OK(cairn_txn_begin(st, &ro, &t));
	OK(cairn_proposal_get(t, id, &p));
	CHECK(p.status == CAIRN_PROPOSAL_MERGED && p.merged_revision == res.revision);
	cairn_txn_end(t);
	CHECK_RC(cairn_proposal_accept(st, "d", id, NULL, NULL, NULL, &res), CAIRN_ECLOSED);
	/* A conflicting proposal stays open when accepting fails; rejecting keeps the branch. */
	OK(on(st, "b", "{\"kind\":\"Supplier\",\"key\":\"S\",\"op\":\"patch\",\"values\":{\"rating\":8}}", NULL));
	OK(on(st, NULL, "{\"kind\":\"Supplier\",\"key\":\"S\",\"op\":\"patch\",\"values\":{\"rating\":9}}", NULL));
	OK(cairn_proposal_create(st, "d", "b", "main", "again", NULL, "agent/x", &id2));
	CHECK_RC(cairn_proposal_accept(st, "d", id2, NULL, NULL, NULL, &res), CAIRN_EMERGE);
	OK(cairn_proposal_close(st, "d", id2, CAIRN_PROPOSAL_REJECTED, "reviewer", "keep main's"));
	CHECK_RC(cairn_proposal_close(st, "d", id2, CAIRN_PROPOSAL_WITHDRAWN, NULL, NULL), CAIRN_ECLOSED);
	CHECK_RC(cairn_proposal_close(st, "d", id2, CAIRN_PROPOSAL_OPEN, NULL, NULL), CAIRN_EINVAL);
	OK(cairn_txn_begin(st, &ro, &t));
	OK(cairn_proposal_list(t, 0, count_props, list));
	CHECK(strcmp(list, "2:3,1:2,") == 0);
	list[0] = '\0';
	OK(cairn_proposal_list(t, CAIRN_PROPOSAL_MERGED, count_props, list));
	CHECK(strcmp(list, "1:2,") == 0);
	cairn_txn_end(t);
	OK(values_of(st, "b", "Supplier", "S", v, sizeof(v)));
	CHECK(strstr(v, "\"rating\":8"));
	OK(cairn_check(st, "d", NULL, NULL, NULL));
	cairn_close(st);
}

/* The schema's Kinds, comma-separated, into out. */
static int kinds_of(cairn_store *st, char *out, size_t cap)
{
	cairn_read_options ro = {.domain = "d"};
	const char *names[64];
	size_t n = 0, len = 0;
	cairn_txn *t;
	int rc;

	out[0] = '\0';
	if ((rc = cairn_txn_begin(st, &ro, &t)))
		return rc;
	rc = cairn_kind_list(t, names, 64, &n);
	for (size_t i = 0; !rc && i < n; i++)
		len += (size_t)snprintf(out + len, cap - len, "%s%s", i ? "," : "", names[i]);
	cairn_txn_end(t);
	return rc;
}

static uint64_t head_of(cairn_store *st)
{
	cairn_read_options ro = {.domain = "d"};
	cairn_revision r;
	cairn_txn *t;
	uint64_t h = 0;
	size_t n = 0;

	if (cairn_txn_begin(st, &ro, &t))
		return 0;
	if (cairn_log(t, 0, &r, 1, &n) == 0 && n == 1)
		h = r.revision;
	cairn_txn_end(t);
	return h;
}

/*
 * A proposal that offers a schema change: checked against the schema when
 * opened (a bad document, a target other than main: refused, nothing made),
 * applied after the merge in its transaction when accepted; a schema the
 * data does not fit undoes the merge with it and leaves the proposal open.
 */
void test_proposal_schema(void)
{
	static const char add[] =
		"{\"kinds\": [{\"name\": \"Note\", \"attributes\": [{\"name\": \"text\", \"type\": \"string\"}]},\n"
		" {\"name\": \"Supplier\", \"attributes\": [{\"name\": \"tier\", \"type\": \"string\"}]}]}\n";
	static const char canon[] = /* as it is kept */
		"{\"kinds\":[{\"attributes\":[{\"name\":\"text\",\"type\":\"string\"}],\"name\":\"Note\"},"
		"{\"attributes\":[{\"name\":\"tier\",\"type\":\"string\"}],\"name\":\"Supplier\"}]}";
	static const char need[] =
		"{\"kinds\":[{\"name\":\"Supplier\",\"attributes\":[{\"name\":\"tax\",\"type\":\"string\","
		"\"required\":true}]}]}";
	cairn_store *st = setup();
	cairn_read_options ro = {.domain = "d"};
	cairn_proposal_options po = {0};
	cairn_merge_result res;
	cairn_proposal p;
	const char *json;
	size_t len;
	cairn_txn *t;
	uint64_t id = 7, id2, head;
	char kinds[512], v[512];

	CHECK(st);
	if (!st)
		return;
	OK(on(st, "b", "{\"kind\":\"Supplier\",\"key\":\"S\",\"op\":\"patch\",\"values\":{\"rating\":5}}", NULL));
	po.source = "b";
	po.title = "Notes, and a tier for suppliers";
	po.author = "agent/x";
	/* Refused when opened, nothing made: a document that is no schema, one of a bad type, another target. */
	po.schema = "{\"kinds\":[{\"name\":\"Note\"";
	CHECK_RC(cairn_proposal_open(st, "d", &po, &id), CAIRN_EJSON);
	CHECK(id == 0 && strstr(cairn_errmsg(), "the proposal's schema: "));
	po.schema = "{\"kinds\":[{\"name\":\"Note\",\"attributes\":[{\"name\":\"t\",\"type\":\"strang\"}]}]}";
	CHECK(cairn_proposal_open(st, "d", &po, &id) != 0 && strstr(cairn_errmsg(), "strang"));
	po.schema = add;
	po.target = "b2";
	OK(cairn_branch_create(st, "d", "b2", NULL));
	CHECK_RC(cairn_proposal_open(st, "d", &po, &id), CAIRN_EINVAL);
	CHECK(strstr(cairn_errmsg(), "into main") != NULL);
	po.target = NULL;
	po.reserved[1] = 1;
	CHECK_RC(cairn_proposal_open(st, "d", &po, &id), CAIRN_EINVAL);
	po.reserved[1] = 0;
	OK(cairn_txn_begin(st, &ro, &t));
	CHECK_RC(cairn_proposal_get(t, 1, &p), CAIRN_ENOTFOUND); /* none was made */
	cairn_txn_end(t);
	/* Opened: the document is kept, the schema unchanged until it is accepted. */
	OK(cairn_proposal_open(st, "d", &po, &id));
	CHECK(id == 1);
	OK(cairn_txn_begin(st, &ro, &t));
	OK(cairn_proposal_schema(t, id, &json, &len));
	CHECK(test_streq(json, len, canon));
	CHECK_RC(cairn_proposal_schema(t, 9, &json, &len), CAIRN_ENOTFOUND);
	cairn_txn_end(t);
	OK(kinds_of(st, kinds, sizeof(kinds)));
	CHECK(!strstr(kinds, "Note"));
	CHECK_RC(on(st, NULL, "{\"kind\":\"Note\",\"key\":\"n\",\"values\":{\"text\":\"x\"}}", NULL),
		 CAIRN_EUNKNOWNKIND);
	/* A second one whose schema the data does not fit: accepting undoes the merge with it. */
	OK(on(st, "b2", "{\"kind\":\"Supplier\",\"key\":\"T\",\"op\":\"patch\",\"values\":{\"rating\":2}}", NULL));
	po.source = "b2";
	po.schema = need;
	OK(cairn_proposal_open(st, "d", &po, &id2));
	head = head_of(st);
	CHECK_RC(cairn_proposal_accept(st, "d", id2, NULL, NULL, NULL, &res), CAIRN_ESCHEMADATA);
	CHECK(strstr(cairn_errmsg(), "the proposal's schema: ") != NULL);
	CHECK(head_of(st) == head);
	OK(values_of(st, NULL, "Supplier", "T", v, sizeof(v)));
	CHECK(!strstr(v, "\"rating\":2"));
	OK(cairn_txn_begin(st, &ro, &t));
	OK(cairn_proposal_get(t, id2, &p));
	CHECK(p.status == CAIRN_PROPOSAL_OPEN);
	cairn_txn_end(t);
	/* Accepted: the merge, then the schema revision, the proposal merged. */
	OK(cairn_proposal_accept(st, "d", id, NULL, NULL, NULL, &res));
	CHECK(res.revision > head && res.schema_revision == res.revision + 1 && head_of(st) == res.schema_revision);
	OK(kinds_of(st, kinds, sizeof(kinds)));
	CHECK(strstr(kinds, ",Note") != NULL);
	OK(on(st, NULL, "{\"kind\":\"Note\",\"key\":\"n\",\"values\":{\"text\":\"x\"}}\n"
			"{\"kind\":\"Supplier\",\"key\":\"S\",\"op\":\"patch\",\"values\":{\"tier\":\"gold\"}}",
	      NULL));
	OK(values_of(st, NULL, "Supplier", "S", v, sizeof(v)));
	CHECK(strstr(v, "\"rating\":5") && strstr(v, "\"tier\":\"gold\""));
	OK(cairn_txn_begin(st, &ro, &t));
	OK(cairn_proposal_get(t, id, &p));
	CHECK(p.status == CAIRN_PROPOSAL_MERGED && p.merged_revision == res.revision);
	OK(cairn_proposal_schema(t, id, &json, &len)); /* kept with it */
	CHECK(test_streq(json, len, canon));
	OK(cairn_proposal_schema(t, id2, &json, &len));
	CHECK(len > 0 && strstr(json, "\"required\":true"));
	cairn_txn_end(t);
	/* A proposal without a schema has none. */
	po.schema = NULL;
	OK(cairn_proposal_open(st, "d", &po, &id2));
	OK(cairn_txn_begin(st, &ro, &t));
	OK(cairn_proposal_schema(t, id2, &json, &len));
	CHECK(len == 0 && json == NULL);
	cairn_txn_end(t);
	OK(cairn_check(st, "d", NULL, NULL, NULL));
	cairn_close(st);
}

static int vector_of(cairn_store *st, const char *branch, const char *key, float *out)
{
	cairn_read_options ro = {0};
	cairn_record r;
	cairn_txn *t;
	size_t dim = 0;
	int rc;

	ro.domain = "d";
	ro.branch = branch;
	if ((rc = cairn_txn_begin(st, &ro, &t)))
		return rc;
	rc = cairn_get(t, "Supplier", key, strlen(key), &r);
	if (!rc)
		rc = cairn_vector_get(t, r.vid, out, 3, &dim);
	cairn_txn_end(t);
	return rc ? rc : dim == 3 ? 0 : CAIRN_ENOTFOUND;
}

/* Vectors merge like values: a new Record's, a change on one side, a conflict and its resolution. */
void test_merge_vectors(void)
{
	cairn_store *st = setup();
	cairn_merge_result res;
	struct seen s;
	float v[3];

	CHECK(st);
	OK(on(st, "b", "{\"kind\":\"Supplier\",\"key\":\"V\",\"values\":{\"vat\":\"X\"},\"vector\":[1,0,0]}", NULL));
	OK(merge(st, "b", NULL, CAIRN_RESOLVE_NONE, NULL, &s, &res));
	OK(vector_of(st, NULL, "V", v));
	CHECK(v[0] == 1 && v[1] == 0 && v[2] == 0);
	/* Only the vector changes on the branch: the item is reported and the vector merged. */
	OK(on(st, "b", "{\"kind\":\"Supplier\",\"key\":\"V\",\"values\":{\"vat\":\"X\"},\"vector\":[0,1,0]}", NULL));
	OK(merge(st, "b", NULL, CAIRN_RESOLVE_NONE, NULL, &s, &res));
	CHECK(res.items == 1 && res.changes == 1);
	CHECK(strstr(s.text, "\"(vector)\":{\"base\":\"3 dimensions, xxh3 "));
	OK(vector_of(st, NULL, "V", v));
	CHECK(v[0] == 0 && v[1] == 1);
	{
		cairn_read_options ro = {0};
		cairn_txn *t;

		memset(&s, 0, sizeof(s));
		ro.domain = "d";
		OK(cairn_txn_begin(st, &ro, &t));
		OK(cairn_revision_changes(t, res.revision, collect, &s));
		cairn_txn_end(t);
		CHECK(s.n == 1 && strstr(s.text, "\"(vector)\":{\"before\":\"3 dimensions"));
	}
	/* Both change it: a conflict, settled for theirs. */
	OK(on(st, "b", "{\"kind\":\"Supplier\",\"key\":\"V\",\"values\":{\"vat\":\"X\"},\"vector\":[0,0,1]}", NULL));
	OK(on(st, NULL, "{\"kind\":\"Supplier\",\"key\":\"V\",\"values\":{\"vat\":\"X\"},\"vector\":[1,1,0]}", NULL));
	CHECK_RC(merge(st, "b", NULL, CAIRN_RESOLVE_NONE, NULL, &s, &res), CAIRN_EMERGE);
	CHECK(res.conflicts == 1 && strstr(s.text, "\"conflict\":true"));
	CHECK_RC(merge(st, "b", NULL, CAIRN_RESOLVE_NONE,
		       "{\"kind\":\"Supplier\",\"key\":\"V\",\"attribute\":\"(vector)\",\"value\":[1]}", &s, &res),
		 CAIRN_EINVAL);
	OK(merge(st, "b", NULL, CAIRN_RESOLVE_NONE,
		 "{\"kind\":\"Supplier\",\"key\":\"V\",\"attribute\":\"(vector)\",\"take\":\"theirs\"}", &s, &res));
	OK(vector_of(st, NULL, "V", v));
	CHECK(v[0] == 0 && v[1] == 0 && v[2] == 1);
	OK(cairn_check(st, "d", NULL, NULL, NULL));
	cairn_close(st);
}

/* A dry run is validated like the merge: a merge that would break a unique value fails dry too. */
void test_merge_dry_run(void)
{
	cairn_store *st = setup();
	cairn_merge_options o;
	cairn_merge_result res;
	uint64_t head;
	struct seen s;

	CHECK(st);
	OK(on(st, "b", "{\"kind\":\"Supplier\",\"key\":\"Y\",\"values\":{\"vat\":\"U1\"}}", NULL));
	OK(on(st, NULL, "{\"kind\":\"Supplier\",\"key\":\"X\",\"values\":{\"vat\":\"U1\"}}", NULL));
	head = test_head(st, "d");
	memset(&o, 0, sizeof(o));
	o.commit.domain = "d";
	o.source = "b";
	o.dry_run = 1;
	memset(&s, 0, sizeof(s));
	CHECK_RC(cairn_merge(st, &o, collect, &s, &res), CAIRN_EUNIQUE);
	CHECK_RC(merge(st, "b", NULL, CAIRN_RESOLVE_NONE, NULL, &s, &res), CAIRN_EUNIQUE);
	/* The diff alone reports the item; nothing was written by any of it. */
	memset(&s, 0, sizeof(s));
	OK(cairn_branch_diff(st, "d", NULL, "b", collect, &s));
	CHECK(s.n == 2 && strstr(s.text, "Supplier:Y 0 1") && strstr(s.text, "Supplier:X 1 0"));
	CHECK(test_head(st, "d") == head);
	/* A dry run of a good merge reports what it would write. */
	OK(on(st, "b", "{\"kind\":\"Supplier\",\"key\":\"Y\",\"values\":{\"vat\":\"U2\"}}", NULL));
	OK(cairn_merge(st, &o, NULL, NULL, &res));
	CHECK(res.revision == 0 && res.changes == 1 && res.items == 2);
	CHECK(test_head(st, "d") == head);
	OK(cairn_check(st, "d", NULL, NULL, NULL));
	cairn_close(st);
}
