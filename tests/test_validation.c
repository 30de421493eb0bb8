/*
 * Negative tests, one per validation rule: each sets up valid data, attempts
 * a commit that breaks the rule, and checks the exact error code, the change
 * the error names, a specific message, and that the store is unchanged (same
 * head, byte-identical export, cairn_check clean).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tests.h"

/* A string literal as (pointer, length). */
#define LIT(s) (s), (sizeof(s) - 1)

/*
 * The valid data every test starts from. Supplier s3 is linked (a2
 * supplied_by s3) but named by no ref attribute, so deleting it concerns
 * Links only; Plant p1 has two incoming Links.
 */
static const char base_lines[] =
	"{\"kind\":\"Supplier\",\"key\":\"s1\",\"title\":\"Acme\","
	"\"values\":{\"vat\":\"DE1\",\"country\":\"DE\",\"rating\":5,\"since\":\"2020-01-31\"}}\n"
	"{\"kind\":\"Supplier\",\"key\":\"s2\",\"title\":\"Bolt\","
	"\"values\":{\"vat\":\"FR2\",\"country\":\"FR\"}}\n"
	"{\"kind\":\"Supplier\",\"key\":\"s3\",\"title\":\"Cog\",\"values\":{\"vat\":\"US3\"}}\n"
	"{\"kind\":\"Plant\",\"key\":\"p1\",\"values\":{\"city\":\"Lyon\"}}\n"
	"{\"kind\":\"Plant\",\"key\":\"p2\",\"values\":{\"city\":\"Graz\"}}\n"
	"{\"kind\":\"Part\",\"key\":\"a1\",\"title\":\"Bolt M6\","
	"\"values\":{\"sku\":\"SKU1\",\"supplier\":\"s1\",\"status\":\"active\",\"price\":1.5}}\n"
	"{\"kind\":\"Part\",\"key\":\"a2\",\"values\":{\"sku\":\"SKU2\",\"supplier\":\"s2\"}}\n"
	"{\"rel\":\"supplied_by\",\"from\":\"Part:a1\",\"to\":\"Supplier:s1\"}\n"
	"{\"rel\":\"supplied_by\",\"from\":\"Part:a2\",\"to\":\"Supplier:s3\"}\n"
	"{\"rel\":\"stocked_at\",\"from\":\"Part:a1\",\"to\":\"Plant:p1\"}\n"
	"{\"rel\":\"primary_plant\",\"from\":\"Part:a1\",\"to\":\"Plant:p1\"}\n";

/* The store's state before an invalid commit. */
struct snap {
	uint64_t head;
	char *exp;
};

static int snap_take(cairn_store *st, struct snap *s)
{
	s->head = test_head(st, "d");
	s->exp = test_export(st, "d");
	if (s->head == UINT64_MAX || !s->exp) {
		fprintf(stderr, "    snapshot failed: %s\n", cairn_errmsg());
		return 0;
	}
	return 1;
}

/* A fresh store holding base_lines, with its snapshot; NULL on failure. */
static cairn_store *setup(struct snap *s)
{
	cairn_store *st = test_store();
	int rc;

	if (!st)
		return NULL;
	rc = test_commit(st, base_lines, NULL);
	if (rc) {
		fprintf(stderr, "    setup commit: %s: %s\n", cairn_errname(rc), cairn_errmsg());
		cairn_close(st);
		return NULL;
	}
	if (!snap_take(st, s)) {
		cairn_close(st);
		return NULL;
	}
	return st;
}

/* Same head, identical export, and a clean check as when the snapshot was taken. */
static int unchanged(cairn_store *st, const struct snap *s)
{
	uint64_t head = test_head(st, "d");
	char *exp = test_export(st, "d");
	int rc, ok = 1;

	if (head != s->head) {
		fprintf(stderr, "    head moved from %llu to %llu\n", (unsigned long long)s->head,
			(unsigned long long)head);
		ok = 0;
	}
	if (!exp || strcmp(exp, s->exp) != 0) {
		fprintf(stderr, "    export differs:\n--- before\n%s--- after\n%s", s->exp,
			exp ? exp : "(export failed)\n");
		ok = 0;
	}
	free(exp);
	rc = cairn_check(st, "d", NULL, NULL, NULL);
	if (rc) {
		fprintf(stderr, "    cairn_check: %s: %s\n", cairn_errname(rc), cairn_errmsg());
		ok = 0;
	}
	return ok;
}

static void snap_release(struct snap *s)
{
	free(s->exp);
	s->exp = NULL;
}

/* Take a new snapshot after a commit that was meant to change the store. */
static int resnap(cairn_store *st, struct snap *s)
{
	snap_release(s);
	return snap_take(st, s);
}

static int errchange_is(long want)
{
	if (cairn_errchange() == want)
		return 1;
	fprintf(stderr, "    cairn_errchange() is %ld, expected %ld (message: %s)\n",
		cairn_errchange(), want, cairn_errmsg());
	return 0;
}

static int errmsg_has(const char *needle)
{
	if (strstr(cairn_errmsg(), needle))
		return 1;
	fprintf(stderr, "    cairn_errmsg() \"%s\" does not mention \"%s\"\n", cairn_errmsg(),
		needle);
	return 0;
}

/*
 * Commit `lines` and expect it refused with `code`, naming change `idx`
 * (-1: no change) and mentioning `needle`, with the store left as in `snap`.
 */
#define REFUSED(st, lines, code, idx, needle)                                                      \
	do {                                                                                       \
		CHECK_RC(test_commit((st), (lines), NULL), (code));                                \
		CHECK(errchange_is(idx));                                                          \
		CHECK(errmsg_has(needle));                                                         \
		CHECK(unchanged((st), &snap));                                                     \
	} while (0)

/* Commit `lines`, which must succeed and move the head by one. */
#define ACCEPTED(st, lines)                                                                        \
	do {                                                                                       \
		cairn_commit_result res_;                                                          \
		OK(test_commit((st), (lines), &res_));                                             \
		CHECK(res_.revision == snap.head + 1);                                             \
		CHECK(test_head((st), "d") == res_.revision);                                      \
		CHECK(cairn_check((st), "d", NULL, NULL, NULL) == 0);                              \
		CHECK(resnap((st), &snap));                                                        \
	} while (0)

/* Accepted, but every change was what the store holds: nothing written, the head unchanged. */
#define UNCHANGED(st, lines)                                                                       \
	do {                                                                                       \
		cairn_commit_result res_;                                                          \
		OK(test_commit((st), (lines), &res_));                                             \
		CHECK(res_.revision == snap.head && res_.changes == 0 && res_.unchanged >= 1);     \
		CHECK(test_head((st), "d") == snap.head);                                          \
		CHECK(unchanged((st), &snap));                                                     \
	} while (0)

static int commit_cs(cairn_store *st, const cairn_changeset *cs, cairn_commit_result *res)
{
	cairn_commit_options co = {0};

	co.domain = "d";
	co.prov.actor = "test";
	return cairn_commit(st, &co, cs, res);
}

/* Does Record kind:key exist at the head of d? */
static int exists(cairn_store *st, const char *kind, const char *key, size_t key_len)
{
	cairn_read_options ro = {0};
	cairn_record r;
	cairn_txn *t;
	int rc;

	ro.domain = "d";
	if (cairn_txn_begin(st, &ro, &t))
		return -1;
	rc = cairn_get(t, kind, key, key_len, &r);
	cairn_txn_end(t);
	return rc == 0 ? 1 : rc == CAIRN_ENOTFOUND ? 0 : -1;
}

/* Number of Links of kind:key in direction dir (rel may be NULL), or -1. */
static long nlinks(cairn_store *st, const char *kind, const char *key, int dir, const char *rel)
{
	cairn_read_options ro = {0};
	cairn_link_cursor cur;
	cairn_link out[16];
	cairn_txn *t;
	size_t n;
	int rc;

	memset(&cur, 0, sizeof(cur));
	ro.domain = "d";
	if (cairn_txn_begin(st, &ro, &t))
		return -1;
	rc = cairn_links(t, kind, key, strlen(key), dir, rel, &cur, out, 16, &n);
	cairn_txn_end(t);
	return rc ? -1 : (long)n;
}

static long count_of(cairn_store *st, const char *kind)
{
	cairn_read_options ro = {0};
	cairn_txn *t;
	uint64_t n;
	int rc;

	ro.domain = "d";
	if (cairn_txn_begin(st, &ro, &t))
		return -1;
	rc = cairn_count(t, kind, &n);
	cairn_txn_end(t);
	return rc ? -1 : (long)n;
}

/* ------------------------------------------------------------- Kinds -- */

void test_neg_unknown_kind(void)
{
	struct snap snap;
	cairn_store *st;

	CHECK((st = setup(&snap)) != NULL);
	/* A put of an unknown Kind after a valid change. */
	REFUSED(st,
		"{\"kind\":\"Plant\",\"key\":\"p9\"}\n"
		"{\"kind\":\"Widget\",\"key\":\"w1\",\"values\":{\"city\":\"Oslo\"}}",
		CAIRN_EUNKNOWNKIND, 1, "Widget");
	/* A patch and a delete of an unknown Kind. */
	REFUSED(st,
		"{\"kind\":\"Plant\",\"key\":\"p9\"}\n"
		"{\"kind\":\"Plant\",\"key\":\"p8\"}\n"
		"{\"kind\":\"Gadget\",\"key\":\"a1\",\"op\":\"patch\",\"values\":{}}",
		CAIRN_EUNKNOWNKIND, 2, "Gadget");
	REFUSED(st, "{\"kind\":\"Gizmo\",\"key\":\"a1\",\"op\":\"delete\"}", CAIRN_EUNKNOWNKIND, 0,
		"Gizmo");
	/* Kind names are case-sensitive. */
	REFUSED(st, "{\"kind\":\"plant\",\"key\":\"p9\"}", CAIRN_EUNKNOWNKIND, 0, "plant");
	snap_release(&snap);
	cairn_close(st);
}

/* -------------------------------------------------------- Attributes -- */

void test_neg_unknown_attribute(void)
{
	struct snap snap;
	cairn_store *st;

	CHECK((st = setup(&snap)) != NULL);
	REFUSED(st,
		"{\"kind\":\"Plant\",\"key\":\"p9\"}\n"
		"{\"kind\":\"Supplier\",\"key\":\"s9\",\"values\":{\"vat\":\"X9\",\"colour\":"
		"\"red\"}}",
		CAIRN_EUNKNOWNATTR, 1, "colour");
	/* An attribute of another Kind. */
	REFUSED(st, "{\"kind\":\"Plant\",\"key\":\"p9\",\"values\":{\"sku\":\"S\"}}",
		CAIRN_EUNKNOWNATTR, 0, "sku");
	/* A patch adding an unknown attribute to a stored Record. */
	REFUSED(st,
		"{\"kind\":\"Plant\",\"key\":\"p9\"}\n"
		"{\"kind\":\"Part\",\"key\":\"a1\",\"op\":\"patch\",\"values\":{\"weight\":3}}",
		CAIRN_EUNKNOWNATTR, 1, "weight");
	/* Attribute names are case-sensitive. */
	REFUSED(st, "{\"kind\":\"Plant\",\"key\":\"p9\",\"values\":{\"City\":\"Oslo\"}}",
		CAIRN_EUNKNOWNATTR, 0, "City");
	/* A null value of an unknown attribute is dropped, not refused. */
	ACCEPTED(st, "{\"kind\":\"Plant\",\"key\":\"p9\",\"values\":{\"colour\":null}}");
	snap_release(&snap);
	cairn_close(st);
}

void test_neg_wrong_type(void)
{
	static const struct {
		const char *line;
		const char *attr;
	} bad[] = {
		{"{\"kind\":\"Supplier\",\"key\":\"s9\",\"values\":{\"rating\":\"five\"}}",
		 "rating"},
		{"{\"kind\":\"Supplier\",\"key\":\"s9\",\"values\":{\"rating\":1.5}}", "rating"},
		{"{\"kind\":\"Supplier\",\"key\":\"s9\",\"values\":{\"vat\":12}}", "vat"},
		{"{\"kind\":\"Supplier\",\"key\":\"s9\",\"values\":{\"active\":\"yes\"}}",
		 "active"},
		{"{\"kind\":\"Supplier\",\"key\":\"s9\",\"values\":{\"active\":1}}", "active"},
		{"{\"kind\":\"Supplier\",\"key\":\"s9\",\"values\":{\"tags\":\"a\"}}", "tags"},
		{"{\"kind\":\"Supplier\",\"key\":\"s9\",\"values\":{\"tags\":[\"a\",1]}}", "tags"},
		{"{\"kind\":\"Supplier\",\"key\":\"s9\",\"values\":{\"since\":20200101}}", "since"},
		{"{\"kind\":\"Supplier\",\"key\":\"s9\",\"values\":{\"country\":1}}", "country"},
		{"{\"kind\":\"Supplier\",\"key\":\"s9\",\"values\":{\"vat\":{\"a\":1}}}", "vat"},
		{"{\"kind\":\"Part\",\"key\":\"a9\",\"values\":{\"sku\":\"S9\",\"price\":\"cheap\"}"
		 "}",
		 "price"},
		{"{\"kind\":\"Part\",\"key\":\"a9\",\"values\":{\"sku\":\"S9\",\"supplier\":5}}",
		 "supplier"},
		{"{\"kind\":\"Part\",\"key\":\"a1\",\"op\":\"patch\",\"values\":{\"price\":true}}",
		 "price"},
	};
	struct snap snap;
	cairn_store *st;
	char lines[512];

	CHECK((st = setup(&snap)) != NULL);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		/* The bad change is the second of the commit. */
		snprintf(lines, sizeof(lines), "{\"kind\":\"Plant\",\"key\":\"p9\"}\n%s",
			 bad[i].line);
		REFUSED(st, lines, CAIRN_ETYPE, 1, bad[i].attr);
	}
	/* An integer is a valid float. */
	ACCEPTED(st,
		 "{\"kind\":\"Part\",\"key\":\"a1\",\"op\":\"patch\",\"values\":{\"price\":2}}");
	snap_release(&snap);
	cairn_close(st);
}

void test_neg_enum_value(void)
{
	struct snap snap;
	cairn_store *st;

	CHECK((st = setup(&snap)) != NULL);
	REFUSED(st,
		"{\"kind\":\"Plant\",\"key\":\"p9\"}\n"
		"{\"kind\":\"Supplier\",\"key\":\"s9\",\"values\":{\"vat\":\"X9\",\"country\":"
		"\"UK\"}}",
		CAIRN_EENUM, 1, "\"UK\"");
	CHECK(errmsg_has("country"));
	/* Enum values are case-sensitive. */
	REFUSED(st, "{\"kind\":\"Supplier\",\"key\":\"s9\",\"values\":{\"country\":\"de\"}}",
		CAIRN_EENUM, 0, "\"de\"");
	/* A patch of a stored Record. */
	REFUSED(st,
		"{\"kind\":\"Part\",\"key\":\"a1\",\"op\":\"patch\",\"values\":{\"status\":"
		"\"gone\"}}",
		CAIRN_EENUM, 0, "gone");
	CHECK(errmsg_has("status"));
	/* An empty string is not a value of the enum. */
	REFUSED(st, "{\"kind\":\"Supplier\",\"key\":\"s9\",\"values\":{\"country\":\"\"}}",
		CAIRN_EENUM, 0, "country");
	ACCEPTED(st, "{\"kind\":\"Part\",\"key\":\"a1\",\"op\":\"patch\",\"values\":{\"status\":"
		     "\"eol\"}}");
	snap_release(&snap);
	cairn_close(st);
}

void test_neg_required_missing(void)
{
	struct snap snap;
	cairn_store *st;

	CHECK((st = setup(&snap)) != NULL);
	REFUSED(st,
		"{\"kind\":\"Plant\",\"key\":\"p9\"}\n"
		"{\"kind\":\"Part\",\"key\":\"a9\",\"values\":{\"status\":\"active\"}}",
		CAIRN_EREQUIRED, 1, "sku");
	/* No values at all. */
	REFUSED(st, "{\"kind\":\"Part\",\"key\":\"a9\"}", CAIRN_EREQUIRED, 0, "sku");
	/* null removes a value: a put with sku null lacks it. */
	REFUSED(st, "{\"kind\":\"Part\",\"key\":\"a9\",\"values\":{\"sku\":null}}", CAIRN_EREQUIRED,
		0, "sku");
	/* A merge patch removing the required value of a stored Record. */
	REFUSED(st,
		"{\"kind\":\"Plant\",\"key\":\"p9\"}\n"
		"{\"kind\":\"Plant\",\"key\":\"p8\"}\n"
		"{\"kind\":\"Part\",\"key\":\"a1\",\"op\":\"patch\",\"values\":{\"sku\":null}}",
		CAIRN_EREQUIRED, 2, "sku");
	/* A put replacing a stored Record without it. */
	REFUSED(st, "{\"kind\":\"Part\",\"key\":\"a2\",\"values\":{\"supplier\":\"s2\"}}",
		CAIRN_EREQUIRED, 0, "a2");
	snap_release(&snap);
	cairn_close(st);
}

/* ------------------------------------------------------------ unique -- */

void test_neg_unique_store(void)
{
	struct snap snap;
	cairn_store *st;

	CHECK((st = setup(&snap)) != NULL);
	/* vat DE1 belongs to s1. */
	REFUSED(st,
		"{\"kind\":\"Plant\",\"key\":\"p9\"}\n"
		"{\"kind\":\"Supplier\",\"key\":\"s9\",\"values\":{\"vat\":\"DE1\"}}",
		CAIRN_EUNIQUE, 1, "vat");
	CHECK(errmsg_has("DE1"));
	/* A patch giving s2 the vat of s1. */
	REFUSED(st,
		"{\"kind\":\"Supplier\",\"key\":\"s2\",\"op\":\"patch\",\"values\":{\"vat\":"
		"\"DE1\"}}",
		CAIRN_EUNIQUE, 0, "vat");
	/* A required unique attribute: sku SKU1 belongs to a1. */
	REFUSED(st, "{\"kind\":\"Part\",\"key\":\"a9\",\"values\":{\"sku\":\"SKU1\"}}",
		CAIRN_EUNIQUE, 0, "sku");
	/* Re-putting the same Record with its own unique value is allowed. */
	ACCEPTED(st, "{\"kind\":\"Supplier\",\"key\":\"s1\",\"title\":\"Acme AG (DE)\","
		     "\"values\":{\"vat\":\"DE1\",\"country\":\"DE\"}}");
	UNCHANGED(st, "{\"kind\":\"Supplier\",\"key\":\"s1\",\"op\":\"patch\",\"values\":{\"vat\":"
		      "\"DE1\"}}");
	ACCEPTED(st, "{\"kind\":\"Supplier\",\"key\":\"s1\",\"op\":\"patch\",\"values\":{\"vat\":"
		     "\"DE1\",\"country\":\"FR\"}}");
	/* The value is still taken by s1 after its re-put. */
	REFUSED(st, "{\"kind\":\"Supplier\",\"key\":\"s9\",\"values\":{\"vat\":\"DE1\"}}",
		CAIRN_EUNIQUE, 0, "DE1");
	/* A value freed by a patch in an earlier commit may be taken. */
	ACCEPTED(st, "{\"kind\":\"Supplier\",\"key\":\"s2\",\"op\":\"patch\",\"values\":{\"vat\":"
		     "\"FR3\"}}");
	ACCEPTED(st, "{\"kind\":\"Supplier\",\"key\":\"s9\",\"values\":{\"vat\":\"FR2\"}}");
	/* The value of a Record deleted in an earlier commit is free. */
	ACCEPTED(st, "{\"kind\":\"Supplier\",\"key\":\"s3\",\"op\":\"delete\",\"cascade\":true}");
	ACCEPTED(st, "{\"kind\":\"Supplier\",\"key\":\"s7\",\"values\":{\"vat\":\"US3\"}}");
	/* Unique values are per Kind and attribute: a Plant may have city DE1. */
	ACCEPTED(st, "{\"kind\":\"Plant\",\"key\":\"p9\",\"values\":{\"city\":\"DE1\"}}");
	snap_release(&snap);
	cairn_close(st);
}

void test_neg_unique_in_commit(void)
{
	struct snap snap;
	cairn_store *st;

	CHECK((st = setup(&snap)) != NULL);
	/* Two new Records with the same new value: the later change is named. */
	REFUSED(st,
		"{\"kind\":\"Supplier\",\"key\":\"s8\",\"values\":{\"vat\":\"NEW\"}}\n"
		"{\"kind\":\"Plant\",\"key\":\"p9\"}\n"
		"{\"kind\":\"Supplier\",\"key\":\"s9\",\"values\":{\"vat\":\"NEW\"}}",
		CAIRN_EUNIQUE, 2, "vat");
	CHECK(errmsg_has("s8"));
	CHECK(errmsg_has("s9"));
	REFUSED(st,
		"{\"kind\":\"Part\",\"key\":\"a8\",\"values\":{\"sku\":\"X\"}}\n"
		"{\"kind\":\"Part\",\"key\":\"a9\",\"values\":{\"sku\":\"X\"}}",
		CAIRN_EUNIQUE, 1, "sku");
	/* A stored Record patched to the value a new Record of the commit takes. */
	REFUSED(st,
		"{\"kind\":\"Supplier\",\"key\":\"s9\",\"values\":{\"vat\":\"NEW\"}}\n"
		"{\"kind\":\"Supplier\",\"key\":\"s2\",\"op\":\"patch\",\"values\":{\"vat\":"
		"\"NEW\"}}",
		CAIRN_EUNIQUE, 1, "vat");
	/* The same Record put twice with one value is one holder. */
	ACCEPTED(
		st,
		"{\"kind\":\"Supplier\",\"key\":\"s9\",\"values\":{\"vat\":\"NEW\"}}\n"
		"{\"kind\":\"Supplier\",\"key\":\"s9\",\"values\":{\"vat\":\"NEW\",\"rating\":2}}");
	/* A Record deleted in the same commit gives its value up. */
	ACCEPTED(st, "{\"kind\":\"Supplier\",\"key\":\"s7\",\"values\":{\"vat\":\"US3\"}}\n"
		     "{\"kind\":\"Supplier\",\"key\":\"s3\",\"op\":\"delete\",\"cascade\":true}");
	/* Values judged by the final state: s1 gives DE1 up as s8 takes it. */
	ACCEPTED(st, "{\"kind\":\"Supplier\",\"key\":\"s8\",\"values\":{\"vat\":\"DE1\"}}\n"
		     "{\"kind\":\"Supplier\",\"key\":\"s1\",\"op\":\"patch\",\"values\":{\"vat\":"
		     "\"DE9\"}}");
	snap_release(&snap);
	cairn_close(st);
}

/* -------------------------------------------------- references, Links -- */

void test_neg_ref_missing(void)
{
	struct snap snap;
	cairn_store *st;

	CHECK((st = setup(&snap)) != NULL);
	REFUSED(st,
		"{\"kind\":\"Plant\",\"key\":\"p9\"}\n"
		"{\"kind\":\"Part\",\"key\":\"a9\",\"values\":{\"sku\":\"S9\",\"supplier\":"
		"\"nobody\"}}",
		CAIRN_EREF, 1, "nobody");
	CHECK(errmsg_has("supplier"));
	/* A patch of a stored Part. */
	REFUSED(st,
		"{\"kind\":\"Part\",\"key\":\"a1\",\"op\":\"patch\",\"values\":{\"supplier\":"
		"\"ghost\"}}",
		CAIRN_EREF, 0, "ghost");
	/* A ref to a Record of another Kind with that key: p1 is a Plant. */
	REFUSED(st,
		"{\"kind\":\"Part\",\"key\":\"a9\",\"values\":{\"sku\":\"S9\",\"supplier\":\"p1\"}"
		"}",
		CAIRN_EREF, 0, "p1");
	/* An empty ref. */
	REFUSED(st,
		"{\"kind\":\"Part\",\"key\":\"a9\",\"values\":{\"sku\":\"S9\",\"supplier\":\"\"}}",
		CAIRN_EREF, 0, "supplier");
	/* A ref to a Supplier the same commit deletes. */
	REFUSED(st,
		"{\"kind\":\"Part\",\"key\":\"a9\",\"values\":{\"sku\":\"S9\",\"supplier\":\"s3\"}}"
		"\n"
		"{\"kind\":\"Supplier\",\"key\":\"s3\",\"op\":\"delete\",\"cascade\":true}",
		CAIRN_EREF, 0, "s3");
	/* A ref to a Supplier put later in the same commit is fine. */
	ACCEPTED(st, "{\"kind\":\"Part\",\"key\":\"a9\",\"values\":{\"sku\":\"S9\",\"supplier\":"
		     "\"s9\"}}\n"
		     "{\"kind\":\"Supplier\",\"key\":\"s9\",\"values\":{\"vat\":\"X9\"}}");
	CHECK(exists(st, "Part", "a9", 2) == 1);
	CHECK(exists(st, "Supplier", "s9", 2) == 1);
	/*
	 * ENGINE BUG (kept failing, last in this test): deleting a Supplier that a
	 * stored Part's ref attribute names is accepted, because check_refs in
	 * src/version/commit.c checks only the refs of Records the commit touches.
	 * a2.supplier is then "s2", which does not exist: a later patch of a2
	 * fails with EREF, and an export no longer imports.
	 */
	REFUSED(st, "{\"kind\":\"Supplier\",\"key\":\"s2\",\"op\":\"delete\"}", CAIRN_EREF, 0,
		"s2");
	snap_release(&snap);
	cairn_close(st);
}

void test_neg_link_end_missing(void)
{
	struct snap snap;
	cairn_store *st;

	CHECK((st = setup(&snap)) != NULL);
	REFUSED(st,
		"{\"kind\":\"Plant\",\"key\":\"p9\"}\n"
		"{\"rel\":\"supplied_by\",\"from\":\"Part:a1\",\"to\":\"Supplier:ghost\"}",
		CAIRN_ELINKEND, 1, "ghost");
	/* The from end missing. */
	REFUSED(st, "{\"rel\":\"stocked_at\",\"from\":\"Part:nopart\",\"to\":\"Plant:p1\"}",
		CAIRN_ELINKEND, 0, "nopart");
	/*
	 * A Link to a Record the same commit deletes breaks two rules at once
	 * (a Link end missing, a deleted Record with a Link): the commit is judged
	 * on its final state and the failure of the earliest change is reported.
	 * Link first: the Link's change, ELINKEND.
	 */
	REFUSED(st,
		"{\"rel\":\"stocked_at\",\"from\":\"Part:a2\",\"to\":\"Plant:p2\"}\n"
		"{\"kind\":\"Plant\",\"key\":\"p2\",\"op\":\"delete\"}",
		CAIRN_ELINKEND, 0, "p2");
	/*
	 * Delete first: the delete's change, EHASLINKS, although the Link made
	 * after the delete is what names a missing Record, and the message's
	 * advice ("unlink them first or delete with cascade") does not help.
	 */
	REFUSED(st,
		"{\"kind\":\"Plant\",\"key\":\"p2\",\"op\":\"delete\"}\n"
		"{\"rel\":\"stocked_at\",\"from\":\"Part:a2\",\"to\":\"Plant:p2\"}",
		CAIRN_EHASLINKS, 0, "p2");
	REFUSED(st,
		"{\"kind\":\"Plant\",\"key\":\"p2\",\"op\":\"delete\",\"cascade\":true}\n"
		"{\"rel\":\"stocked_at\",\"from\":\"Part:a2\",\"to\":\"Plant:p2\"}",
		CAIRN_EHASLINKS, 0, "p2");
	/* Deleted and put again before the Link: the Link's end exists. */
	ACCEPTED(st, "{\"kind\":\"Plant\",\"key\":\"p2\",\"op\":\"delete\"}\n"
		     "{\"kind\":\"Plant\",\"key\":\"p2\",\"values\":{\"city\":\"Wien\"}}\n"
		     "{\"rel\":\"stocked_at\",\"from\":\"Part:a2\",\"to\":\"Plant:p2\"}");
	/* Ends put later in the same commit are fine. */
	ACCEPTED(st, "{\"rel\":\"stocked_at\",\"from\":\"Part:a9\",\"to\":\"Plant:p9\"}\n"
		     "{\"kind\":\"Plant\",\"key\":\"p9\"}\n"
		     "{\"kind\":\"Part\",\"key\":\"a9\",\"values\":{\"sku\":\"S9\"}}");
	CHECK(nlinks(st, "Plant", "p9", CAIRN_IN, NULL) == 1);
	snap_release(&snap);
	cairn_close(st);
}

void test_neg_link_wrong_kinds(void)
{
	struct snap snap;
	cairn_store *st;

	CHECK((st = setup(&snap)) != NULL);
	/* supplied_by links Part to Supplier. */
	REFUSED(st,
		"{\"kind\":\"Plant\",\"key\":\"p9\"}\n"
		"{\"rel\":\"supplied_by\",\"from\":\"Plant:p1\",\"to\":\"Supplier:s1\"}",
		CAIRN_ELINKKIND, 1, "supplied_by");
	CHECK(errmsg_has("Plant"));
	REFUSED(st, "{\"rel\":\"supplied_by\",\"from\":\"Part:a1\",\"to\":\"Plant:p1\"}",
		CAIRN_ELINKKIND, 0, "supplied_by");
	/* Reversed. */
	REFUSED(st, "{\"rel\":\"supplied_by\",\"from\":\"Supplier:s1\",\"to\":\"Part:a1\"}",
		CAIRN_ELINKKIND, 0, "supplied_by");
	/* An unlink with the wrong Kinds. */
	REFUSED(st,
		"{\"rel\":\"stocked_at\",\"from\":\"Part:a1\",\"to\":\"Supplier:s1\",\"op\":"
		"\"unlink\"}",
		CAIRN_ELINKKIND, 0, "stocked_at");
	snap_release(&snap);
	cairn_close(st);
}

void test_neg_cardinality_one(void)
{
	struct snap snap;
	cairn_store *st;

	CHECK((st = setup(&snap)) != NULL);
	/* Two primary plants for a2 in one commit (the change named: see the end). */
	CHECK_RC(
		test_commit(st,
			    "{\"rel\":\"primary_plant\",\"from\":\"Part:a2\",\"to\":\"Plant:p1\"}\n"
			    "{\"rel\":\"primary_plant\",\"from\":\"Part:a2\",\"to\":\"Plant:p2\"}",
			    NULL),
		CAIRN_ECARDINALITY);
	CHECK(errmsg_has("primary_plant"));
	CHECK(errmsg_has("a2"));
	CHECK(unchanged(st, &snap));
	/* a1 has primary_plant p1 stored; a second one. */
	REFUSED(st,
		"{\"kind\":\"Plant\",\"key\":\"p9\"}\n"
		"{\"rel\":\"primary_plant\",\"from\":\"Part:a1\",\"to\":\"Plant:p2\"}",
		CAIRN_ECARDINALITY, 1, "primary_plant");
	CHECK(errmsg_has("a1"));
	/* ... also to a Plant put in the same commit. */
	REFUSED(st,
		"{\"rel\":\"primary_plant\",\"from\":\"Part:a1\",\"to\":\"Plant:p9\"}\n"
		"{\"kind\":\"Plant\",\"key\":\"p9\"}",
		CAIRN_ECARDINALITY, 0, "primary_plant");
	/* Re-linking the same pair: still one Link (as it was: nothing written). */
	UNCHANGED(st, "{\"rel\":\"primary_plant\",\"from\":\"Part:a1\",\"to\":\"Plant:p1\"}");
	ACCEPTED(st, "{\"rel\":\"primary_plant\",\"from\":\"Part:a1\",\"to\":\"Plant:p1\","
		     "\"values\":{\"note\":\"x\"}}");
	/* Cardinality many is not limited. */
	ACCEPTED(st, "{\"rel\":\"stocked_at\",\"from\":\"Part:a1\",\"to\":\"Plant:p2\"}");
	/* Replacing by unlink + link in one commit is allowed, in either order. */
	ACCEPTED(st, "{\"rel\":\"primary_plant\",\"from\":\"Part:a1\",\"to\":\"Plant:p1\",\"op\":"
		     "\"unlink\"}\n"
		     "{\"rel\":\"primary_plant\",\"from\":\"Part:a1\",\"to\":\"Plant:p2\"}");
	CHECK(nlinks(st, "Part", "a1", CAIRN_OUT, "primary_plant") == 1);
	ACCEPTED(st, "{\"rel\":\"primary_plant\",\"from\":\"Part:a1\",\"to\":\"Plant:p1\"}\n"
		     "{\"rel\":\"primary_plant\",\"from\":\"Part:a1\",\"to\":\"Plant:p2\",\"op\":"
		     "\"unlink\"}");
	CHECK(nlinks(st, "Part", "a1", CAIRN_OUT, "primary_plant") == 1);
	/* Cardinality one bounds the from side only: p1 may be primary for many Parts. */
	ACCEPTED(st, "{\"rel\":\"primary_plant\",\"from\":\"Part:a2\",\"to\":\"Plant:p1\"}");
	CHECK(nlinks(st, "Plant", "p1", CAIRN_IN, "primary_plant") == 2);
	/*
	 * ENGINE BUG (kept failing, last in this test): two Links of a cardinality
	 * one Relation from one Record in one commit name the FIRST Link's change
	 * (check_cardinality reports l->last_change of the first Link state it
	 * meets), though that Link alone is valid; the unique rule names the later
	 * change, and a stored Link plus a new one names the new one.
	 */
	REFUSED(st,
		"{\"kind\":\"Plant\",\"key\":\"p9\"}\n"
		"{\"kind\":\"Part\",\"key\":\"a9\",\"values\":{\"sku\":\"S9\"}}\n"
		"{\"rel\":\"primary_plant\",\"from\":\"Part:a9\",\"to\":\"Plant:p9\"}\n"
		"{\"rel\":\"primary_plant\",\"from\":\"Part:a9\",\"to\":\"Plant:p2\"}",
		CAIRN_ECARDINALITY, 3, "a9");
	snap_release(&snap);
	cairn_close(st);
}

/* -------------------------------------------------------------- keys -- */

/*
 * A key error is returned when the change is added: nothing is added, the
 * error names the index it would have had, and the valid changes still commit.
 */
static int key_refused(cairn_changeset *cs, int rc, int want, long idx, size_t count,
		       const char *needle)
{
	if (rc != want) {
		fprintf(stderr, "    got %s (%d), expected %s: %s\n", cairn_errname(rc), rc,
			cairn_errname(want), cairn_errmsg());
		return 0;
	}
	if (!errchange_is(idx) || !errmsg_has(needle))
		return 0;
	if (cairn_changeset_count(cs) != count) {
		fprintf(stderr, "    the change set holds %zu changes, expected %zu\n",
			cairn_changeset_count(cs), count);
		return 0;
	}
	return 1;
}

/* Commit cs (holding only valid changes) and check it moved the head by one. */
static int valid_rest_commits(cairn_store *st, cairn_changeset *cs, struct snap *snap)
{
	cairn_commit_result res;
	int rc;

	if (!unchanged(st, snap))
		return 0;
	rc = commit_cs(st, cs, &res);
	if (rc) {
		fprintf(stderr, "    commit of the valid changes: %s: %s\n", cairn_errname(rc),
			cairn_errmsg());
		return 0;
	}
	if (res.revision != snap->head + 1 || test_head(st, "d") != res.revision ||
	    cairn_check(st, "d", NULL, NULL, NULL) != 0) {
		fprintf(stderr, "    the valid commit did not move the head by one\n");
		return 0;
	}
	return resnap(st, snap);
}

void test_neg_key_empty(void)
{
	struct snap snap;
	cairn_changeset *cs;
	cairn_store *st;
	int rc;

	CHECK((st = setup(&snap)) != NULL);
	OK(cairn_changeset_new(&cs));
	OK(cairn_changeset_put(cs, "Plant", "p9", 2, "Oslo", 4, NULL, 0));
	rc = cairn_changeset_put(cs, "Plant", "", 0, "x", 1, NULL, 0);
	CHECK(key_refused(cs, rc, CAIRN_EKEYEMPTY, 1, 1, "empty"));
	/* A pointer with length 0 is empty too. */
	rc = cairn_changeset_put(cs, "Plant", "p8", 0, NULL, 0, NULL, 0);
	CHECK(key_refused(cs, rc, CAIRN_EKEYEMPTY, 1, 1, "empty"));
	rc = cairn_changeset_patch(cs, "Plant", "", 0, LIT("{}"));
	CHECK(key_refused(cs, rc, CAIRN_EKEYEMPTY, 1, 1, "empty"));
	rc = cairn_changeset_delete(cs, "Plant", "", 0, 0);
	CHECK(key_refused(cs, rc, CAIRN_EKEYEMPTY, 1, 1, "empty"));
	rc = cairn_changeset_link(cs, "stocked_at", "Part", "a1", 2, "Plant", "", 0, NULL, 0);
	CHECK(key_refused(cs, rc, CAIRN_EKEYEMPTY, 1, 1, "empty"));
	rc = cairn_changeset_unlink(cs, "stocked_at", "Part", "", 0, "Plant", "p1", 2);
	CHECK(key_refused(cs, rc, CAIRN_EKEYEMPTY, 1, 1, "empty"));
	/* Import lines. */
	rc = cairn_changeset_add_json(cs, LIT("{\"kind\":\"Plant\",\"key\":\"\"}"));
	CHECK(key_refused(cs, rc, CAIRN_EKEYEMPTY, 1, 1, "empty"));
	rc = cairn_changeset_add_json(
				      cs, LIT("{\"rel\":\"stocked_at\",\"from\":\"Part:\",\"to\":\"Plant:p1\"}"));
	CHECK(key_refused(cs, rc, CAIRN_EKEYEMPTY, 1, 1, "empty"));
	CHECK(valid_rest_commits(st, cs, &snap));
	CHECK(exists(st, "Plant", "p9", 2) == 1);
	cairn_changeset_free(cs);
	snap_release(&snap);
	cairn_close(st);
}

void test_neg_key_too_long(void)
{
	char key[CAIRN_MAX_KEY + 2], line[600];
	struct snap snap;
	cairn_changeset *cs;
	cairn_store *st;
	int rc;

	memset(key, 'k', sizeof(key));
	key[sizeof(key) - 1] = '\0';
	CHECK((st = setup(&snap)) != NULL);
	OK(cairn_changeset_new(&cs));
	OK(cairn_changeset_put(cs, "Plant", "p9", 2, NULL, 0, NULL, 0));
	rc = cairn_changeset_put(cs, "Plant", key, CAIRN_MAX_KEY + 1, NULL, 0, NULL, 0);
	CHECK(key_refused(cs, rc, CAIRN_EKEYLONG, 1, 1, "257"));
	rc = cairn_changeset_delete(cs, "Plant", key, CAIRN_MAX_KEY + 1, 0);
	CHECK(key_refused(cs, rc, CAIRN_EKEYLONG, 1, 1, "257"));
	rc = cairn_changeset_link(cs, "stocked_at", "Part", key, CAIRN_MAX_KEY + 1, "Plant", "p1", 2, NULL,
				  0);
	CHECK(key_refused(cs, rc, CAIRN_EKEYLONG, 1, 1, "257"));
	snprintf(line, sizeof(line), "{\"kind\":\"Plant\",\"key\":\"%.*s\"}", CAIRN_MAX_KEY + 1,
		 key);
	rc = cairn_changeset_add_json(cs, line, strlen(line));
	CHECK(key_refused(cs, rc, CAIRN_EKEYLONG, 1, 1, "257"));
	/* Exactly the limit is a valid key. */
	OK(cairn_changeset_put(cs, "Plant", key, CAIRN_MAX_KEY, NULL, 0, NULL, 0));
	CHECK(valid_rest_commits(st, cs, &snap));
	CHECK(exists(st, "Plant", key, CAIRN_MAX_KEY) == 1);
	CHECK(exists(st, "Plant", "p9", 2) == 1);
	cairn_changeset_free(cs);
	snap_release(&snap);
	cairn_close(st);
}

void test_neg_key_not_utf8(void)
{
	static const struct {
		const char *key;
		size_t len;
		const char *needle;
	} bad[] = {
		{"\xff", 1, "UTF-8"},
		{"ab\xc3", 3, "UTF-8"},		  /* truncated sequence */
		{"\xc0\x80", 2, "UTF-8"},	  /* overlong NUL */
		{"\xed\xa0\x80", 3, "UTF-8"},	  /* a UTF-16 surrogate */
		{"\xf4\x90\x80\x80", 4, "UTF-8"}, /* above U+10FFFF */
		{"a\0b", 3, "U+0000"},
		{"\0", 1, "U+0000"},
	};
	struct snap snap;
	cairn_changeset *cs;
	cairn_store *st;
	int rc;

	CHECK((st = setup(&snap)) != NULL);
	OK(cairn_changeset_new(&cs));
	OK(cairn_changeset_put(cs, "Plant", "p9", 2, NULL, 0, NULL, 0));
	OK(cairn_changeset_put(cs, "Plant", "\xc3\xa9t\xc3\xa9", 5, NULL, 0, NULL, 0)); /* "été" */
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		rc = cairn_changeset_put(cs, "Plant", bad[i].key, bad[i].len, NULL, 0, NULL, 0);
		CHECK(key_refused(cs, rc, CAIRN_EUTF8, 2, 2, bad[i].needle));
		rc = cairn_changeset_unlink(cs, "stocked_at", "Part", "a1", 2, "Plant", bad[i].key,
					    bad[i].len);
		CHECK(key_refused(cs, rc, CAIRN_EUTF8, 2, 2, bad[i].needle));
	}
	/* An import line that is not UTF-8 is refused as a whole. */
	rc = cairn_changeset_add_json(cs, LIT("{\"kind\":\"Plant\",\"key\":\"\xff\"}"));
	CHECK(key_refused(cs, rc, CAIRN_EUTF8, 2, 2, "UTF-8"));
	CHECK(valid_rest_commits(st, cs, &snap));
	CHECK(exists(st, "Plant", "\xc3\xa9t\xc3\xa9", 5) == 1);
	cairn_changeset_free(cs);
	snap_release(&snap);
	cairn_close(st);
}

/*
 * Names hold no U+0000. JSON can carry one ("\u0000"), but a Kind, Relation,
 * attribute or op is read as a C string and would be cut there, naming
 * another: "Plant\u0000x" would be Plant, "delete\u0000x" a delete. Each is
 * refused when the change is added, naming the change, and the store is
 * unchanged; a title or a string value may hold U+0000 and is kept whole.
 */
void test_neg_names_nul(void)
{
	static const struct {
		const char *line;
		size_t len;
		int code;
		const char *needle;
	} bad[] = {
		{LIT("{\"kind\":\"Plant\\u0000x\",\"key\":\"p9\"}"), CAIRN_EINVAL,
		 "the Kind name may not contain U+0000"},
		{LIT("{\"kind\":\"Plant\",\"key\":\"p1\\u0000x\"}"), CAIRN_EUTF8,
		 "the key may not contain U+0000"},
		{LIT("{\"kind\":\"Plant\",\"key\":\"p1\",\"values\":{\"city\\u0000x\":\"Oslo\"}}"),
		 CAIRN_EINVAL, "an attribute name may not contain U+0000"},
		{LIT("{\"kind\":\"Plant\",\"key\":\"p1\",\"op\":\"patch\",\"values\":{\"city\\u0000\":\"Oslo\"}}"),
		 CAIRN_EINVAL, "an attribute name may not contain U+0000"},
		{LIT("{\"kind\":\"Supplier\",\"key\":\"s3\",\"op\":\"delete\\u0000x\"}"), CAIRN_EINVAL,
		 "\"op\" may not contain U+0000"},
		{LIT("{\"rel\":\"stocked_at\\u0000x\",\"from\":\"Part:a2\",\"to\":\"Plant:p2\"}"),
		 CAIRN_EINVAL, "the Relation name may not contain U+0000"},
		{LIT("{\"rel\":\"stocked_at\",\"from\":\"Part\\u0000x:a2\",\"to\":\"Plant:p2\"}"),
		 CAIRN_EINVAL, "the Kind name may not contain U+0000"},
		{LIT("{\"rel\":\"stocked_at\",\"from\":\"Part:a1\",\"to\":\"Plant:p1\",\"op\":\"unlink\\u0000\"}"),
		 CAIRN_EINVAL, "\"op\" may not contain U+0000"},
		{LIT("{\"rel\":\"stocked_at\",\"from\":\"Part:a2\",\"to\":\"Plant:p2\",\"values\":{\"q\\u0000\":1}}"),
		 CAIRN_EINVAL, "an attribute name may not contain U+0000"},
	};
	struct snap snap;
	cairn_changeset *cs;
	cairn_record r;
	cairn_txn *t;
	cairn_read_options ro = {0};
	cairn_store *st;
	int rc;

	CHECK((st = setup(&snap)) != NULL);
	OK(cairn_changeset_new(&cs));
	OK(cairn_changeset_put(cs, "Plant", "p9", 2, "a\0b", 3, LIT("{\"city\":\"x\\u0000y\"}")));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		rc = cairn_changeset_add_json(cs, bad[i].line, bad[i].len);
		if (!key_refused(cs, rc, bad[i].code, 1, 1, bad[i].needle))
			fprintf(stderr, "    line %zu: %s\n", i, bad[i].line);
		CHECK(key_refused(cs, rc, bad[i].code, 1, 1, bad[i].needle));
	}
	/* The same through the calls that take values as JSON text. */
	rc = cairn_changeset_put(cs, "Plant", "p1", 2, NULL, 0, LIT("{\"city\\u0000x\":\"Oslo\"}"));
	CHECK(key_refused(cs, rc, CAIRN_EINVAL, 1, 1, "an attribute name may not contain U+0000"));
	rc = cairn_changeset_patch(cs, "Plant", "p1", 2, LIT("{\"city\\u0000\":null}"));
	CHECK(key_refused(cs, rc, CAIRN_EINVAL, 1, 1, "an attribute name may not contain U+0000"));
	rc = cairn_changeset_link(cs, "stocked_at", "Part", "a2", 2, "Plant", "p2", 2,
				  LIT("{\"q\\u0000\":1}"));
	CHECK(key_refused(cs, rc, CAIRN_EINVAL, 1, 1, "an attribute name may not contain U+0000"));
	/* Nothing was written by any of them: p1 keeps its city, s3 and the Link stay. */
	CHECK(unchanged(st, &snap));
	CHECK(exists(st, "Supplier", "s3", 2) == 1);
	CHECK(valid_rest_commits(st, cs, &snap));
	ro.domain = "d";
	OK(cairn_txn_begin(st, &ro, &t));
	OK(cairn_get(t, "Plant", "p1", 2, &r));
	CHECK(test_streq(r.values, r.values_len, "{\"city\":\"Lyon\"}"));
	OK(cairn_get(t, "Plant", "p9", 2, &r));
	CHECK(r.title_len == 3 && memcmp(r.title, "a\0b", 3) == 0);
	CHECK(test_streq(r.values, r.values_len, "{\"city\":\"x\\u0000y\"}"));
	cairn_txn_end(t);
	cairn_changeset_free(cs);
	snap_release(&snap);
	cairn_close(st);
}

/* The schema of Domain d at the head of main, malloc'd (NULL on failure). */
static char *schema_text(cairn_store *st)
{
	cairn_read_options ro = {0};
	const char *js;
	size_t n;
	cairn_txn *t;
	char *out = NULL;

	ro.domain = "d";
	if (cairn_txn_begin(st, &ro, &t))
		return NULL;
	if (cairn_schema_get(t, &js, &n) == 0 && (out = malloc(n + 1))) {
		memcpy(out, js, n);
		out[n] = '\0';
	}
	cairn_txn_end(t);
	return out;
}

/*
 * The other entry points that read names from JSON: a schema, a merge's
 * resolutions, a query's filter. A name with U+0000 in them is refused,
 * never read as the name before it (a resolution of "Plant\u0000x" would
 * resolve Plant's conflict; a filter on "city\u0000x" would filter on city),
 * and nothing is written.
 */
void test_neg_json_names_nul(void)
{
	static const char *const schemas[][2] = {
		{"{\"kinds\":[{\"name\":\"Plant\\u0000x\",\"attributes\":[{\"name\":\"zone\",\"type\":\"string\"}]}]}",
		 "a name may not contain U+0000"},
		{"{\"kinds\":[{\"name\":\"Plant\",\"attributes\":[{\"name\":\"city\\u0000\",\"type\":\"int\"}]}]}",
		 "a name may not contain U+0000"},
		{"{\"relations\":[{\"name\":\"near\",\"from\":\"Plant\\u0000\",\"to\":\"Plant\"}]}",
		 "\"from\" may not contain U+0000"},
		{"{\"kinds\":[{\"name\":\"Part\",\"attributes\":[{\"name\":\"alt\",\"type\":\"ref\",\"ref\":\"Plant\\u0000\"}]}]}",
		 "\"ref\" may not contain U+0000"},
	};
	static const char *const resolutions[][2] = {
		{"{\"kind\":\"Plant\\u0000x\",\"key\":\"p1\",\"attribute\":\"city\",\"take\":\"theirs\"}",
		 "\"kind\" may not contain U+0000"},
		{"{\"kind\":\"Plant\",\"key\":\"p1\",\"attribute\":\"city\\u0000\",\"take\":\"theirs\"}",
		 "\"attribute\" may not contain U+0000"},
		{"{\"kind\":\"Plant\",\"key\":\"p1\",\"attribute\":\"city\",\"take\":\"theirs\\u0000\"}",
		 "\"take\" may not contain U+0000"},
	};
	static const char *const filters[][2] = {
		{"{\"city\\u0000x\":\"Lyon\"}", "an attribute name may not contain U+0000"},
		{"{\"and\\u0000\":[{\"city\":\"Lyon\"}]}", "an attribute name may not contain U+0000"},
		{"{\"city\":{\"eq\\u0000\":\"Lyon\"}}", "unknown operator"},
	};
	cairn_commit_options co = {0};
	cairn_merge_options mo;
	cairn_read_options ro = {0};
	cairn_query_options q;
	cairn_query_result qr;
	cairn_record out[4];
	struct snap snap;
	cairn_store *st;
	cairn_txn *t;
	char *before, *after;

	CHECK((st = setup(&snap)) != NULL);
	co.domain = "d";
	co.prov.actor = "test";
	CHECK((before = schema_text(st)) != NULL);
	for (size_t i = 0; i < sizeof(schemas) / sizeof(schemas[0]); i++) {
		CHECK_RC(cairn_schema_apply(st, &co, schemas[i][0], strlen(schemas[i][0]), NULL),
			 CAIRN_ESCHEMA);
		CHECK(errmsg_has(schemas[i][1]));
		CHECK(unchanged(st, &snap));
		after = schema_text(st);
		CHECK(after && strcmp(before, after) == 0);
		free(after);
	}
	free(before);
	/* A conflict on p1's city, for the resolutions to name. */
	OK(cairn_branch_create(st, "d", "b", NULL));
	OK(test_commit_on(st, "d", "b", "{\"kind\":\"Plant\",\"key\":\"p1\",\"values\":{\"city\":\"Oslo\"}}",
			  NULL));
	OK(test_commit(st, "{\"kind\":\"Plant\",\"key\":\"p1\",\"values\":{\"city\":\"Rome\"}}", NULL));
	CHECK(resnap(st, &snap));
	memset(&mo, 0, sizeof(mo));
	mo.commit = co;
	mo.source = "b";
	for (size_t i = 0; i < sizeof(resolutions) / sizeof(resolutions[0]); i++) {
		mo.resolutions = resolutions[i][0];
		mo.resolutions_len = strlen(resolutions[i][0]);
		CHECK_RC(cairn_merge(st, &mo, NULL, NULL, NULL), CAIRN_EINVAL);
		CHECK(errmsg_has(resolutions[i][1]));
		CHECK(unchanged(st, &snap));
	}
	/* The same resolution, spelt right, merges: the refusals were for the U+0000. */
	mo.resolutions = "{\"kind\":\"Plant\",\"key\":\"p1\",\"attribute\":\"city\",\"take\":\"theirs\"}";
	mo.resolutions_len = strlen(mo.resolutions);
	mo.dry_run = 1;
	OK(cairn_merge(st, &mo, NULL, NULL, NULL));
	CHECK(unchanged(st, &snap));
	ro.domain = "d";
	OK(cairn_txn_begin(st, &ro, &t));
	for (size_t i = 0; i < sizeof(filters) / sizeof(filters[0]); i++) {
		memset(&q, 0, sizeof(q));
		q.kind = "Plant";
		q.where = filters[i][0];
		q.where_len = strlen(filters[i][0]);
		q.limit = 4;
		CHECK_RC(cairn_query(t, &q, out, 4, &qr), CAIRN_EQUERY);
		CHECK(errmsg_has(filters[i][1]));
	}
	cairn_txn_end(t);
	snap_release(&snap);
	cairn_close(st);
}

/* ------------------------------------------------ deletes and patches -- */

void test_neg_delete_with_links(void)
{
	struct snap snap;
	cairn_store *st;

	CHECK((st = setup(&snap)) != NULL);
	/* a2 supplied_by s3. */
	REFUSED(st,
		"{\"kind\":\"Plant\",\"key\":\"p9\"}\n"
		"{\"kind\":\"Supplier\",\"key\":\"s3\",\"op\":\"delete\"}",
		CAIRN_EHASLINKS, 1, "s3");
	/* p1 has two incoming Links. */
	REFUSED(st, "{\"kind\":\"Plant\",\"key\":\"p1\",\"op\":\"delete\"}", CAIRN_EHASLINKS, 0,
		"p1");
	CHECK(errmsg_has("2 Link"));
	/* A Part with outgoing Links. */
	REFUSED(st, "{\"kind\":\"Part\",\"key\":\"a2\",\"op\":\"delete\"}", CAIRN_EHASLINKS, 0,
		"a2");
	/* A stored Link counts even when the commit touches the other end. */
	REFUSED(st,
		"{\"kind\":\"Part\",\"key\":\"a2\",\"op\":\"patch\",\"values\":{\"status\":\"eol\"}"
		"}\n"
		"{\"kind\":\"Supplier\",\"key\":\"s3\",\"op\":\"delete\"}",
		CAIRN_EHASLINKS, 1, "s3");
	/* Unlinking one of two Links is not enough. */
	REFUSED(st,
		"{\"rel\":\"stocked_at\",\"from\":\"Part:a1\",\"to\":\"Plant:p1\",\"op\":"
		"\"unlink\"}\n"
		"{\"kind\":\"Plant\",\"key\":\"p1\",\"op\":\"delete\"}",
		CAIRN_EHASLINKS, 1, "1 Link");
	/* ... and cascade false is no cascade. */
	REFUSED(st, "{\"kind\":\"Supplier\",\"key\":\"s3\",\"op\":\"delete\",\"cascade\":false}",
		CAIRN_EHASLINKS, 0, "s3");
	/* Unlinking first in the same commit allows the delete. */
	ACCEPTED(st, "{\"rel\":\"stocked_at\",\"from\":\"Part:a1\",\"to\":\"Plant:p1\",\"op\":"
		     "\"unlink\"}\n"
		     "{\"rel\":\"primary_plant\",\"from\":\"Part:a1\",\"to\":\"Plant:p1\",\"op\":"
		     "\"unlink\"}\n"
		     "{\"kind\":\"Plant\",\"key\":\"p1\",\"op\":\"delete\"}");
	CHECK(exists(st, "Plant", "p1", 2) == 0);
	/* With cascade the delete goes through and the Links are gone. */
	CHECK(nlinks(st, "Part", "a2", CAIRN_OUT, "supplied_by") == 1);
	ACCEPTED(st, "{\"kind\":\"Supplier\",\"key\":\"s3\",\"op\":\"delete\",\"cascade\":true}");
	CHECK(exists(st, "Supplier", "s3", 2) == 0);
	CHECK(nlinks(st, "Part", "a2", CAIRN_OUT, "supplied_by") == 0);
	CHECK(nlinks(st, "Part", "a2", CAIRN_BOTH, NULL) == 0);
	/* Cascade also removes a Link made earlier in the same commit. */
	ACCEPTED(st, "{\"rel\":\"stocked_at\",\"from\":\"Part:a2\",\"to\":\"Plant:p2\"}\n"
		     "{\"kind\":\"Plant\",\"key\":\"p2\",\"op\":\"delete\",\"cascade\":true}");
	CHECK(nlinks(st, "Part", "a2", CAIRN_BOTH, NULL) == 0);
	/* A Record recreated after a cascade delete starts with no Links. */
	ACCEPTED(st, "{\"kind\":\"Supplier\",\"key\":\"s3\",\"values\":{\"vat\":\"US3\"}}");
	CHECK(nlinks(st, "Supplier", "s3", CAIRN_BOTH, NULL) == 0);
	snap_release(&snap);
	cairn_close(st);
}

void test_neg_patch_missing(void)
{
	struct snap snap;
	cairn_store *st;

	CHECK((st = setup(&snap)) != NULL);
	REFUSED(st,
		"{\"kind\":\"Plant\",\"key\":\"p9\"}\n"
		"{\"kind\":\"Supplier\",\"key\":\"ghost\",\"op\":\"patch\",\"values\":{\"rating\":"
		"1}}",
		CAIRN_ENOTFOUND, 1, "ghost");
	/* A key of another Kind: a1 is a Part. */
	REFUSED(st,
		"{\"kind\":\"Supplier\",\"key\":\"a1\",\"op\":\"patch\",\"values\":{\"rating\":1}}",
		CAIRN_ENOTFOUND, 0, "a1");
	/* A Record deleted earlier in the same commit. */
	REFUSED(st,
		"{\"kind\":\"Plant\",\"key\":\"p2\",\"op\":\"delete\"}\n"
		"{\"kind\":\"Plant\",\"key\":\"p2\",\"op\":\"patch\",\"values\":{\"city\":\"Wien\"}"
		"}",
		CAIRN_ENOTFOUND, 1, "p2");
	/* A delete of a missing Record is refused the same way. */
	REFUSED(st, "{\"kind\":\"Plant\",\"key\":\"ghost\",\"op\":\"delete\"}", CAIRN_ENOTFOUND, 0,
		"ghost");
	/* A patch of a Record put earlier in the same commit is fine. */
	ACCEPTED(st, "{\"kind\":\"Plant\",\"key\":\"p9\"}\n"
		     "{\"kind\":\"Plant\",\"key\":\"p9\",\"op\":\"patch\",\"values\":{\"city\":"
		     "\"Oslo\"}}");
	snap_release(&snap);
	cairn_close(st);
}

void test_neg_unlink_missing(void)
{
	struct snap snap;
	cairn_store *st;

	CHECK((st = setup(&snap)) != NULL);
	/* a2 is not stocked at p1. */
	REFUSED(st,
		"{\"kind\":\"Plant\",\"key\":\"p9\"}\n"
		"{\"rel\":\"stocked_at\",\"from\":\"Part:a2\",\"to\":\"Plant:p1\",\"op\":"
		"\"unlink\"}",
		CAIRN_ENOTFOUND, 1, "stocked_at");
	CHECK(errmsg_has("a2"));
	/* The same Link unlinked twice in one commit. */
	REFUSED(st,
		"{\"rel\":\"stocked_at\",\"from\":\"Part:a1\",\"to\":\"Plant:p1\",\"op\":"
		"\"unlink\"}\n"
		"{\"rel\":\"stocked_at\",\"from\":\"Part:a1\",\"to\":\"Plant:p1\",\"op\":"
		"\"unlink\"}",
		CAIRN_ENOTFOUND, 1, "stocked_at");
	/* A Link of another Relation between the same Records: a1 primary_plant p1 exists. */
	REFUSED(st,
		"{\"rel\":\"stocked_at\",\"from\":\"Part:a1\",\"to\":\"Plant:p2\",\"op\":"
		"\"unlink\"}",
		CAIRN_ENOTFOUND, 0, "p2");
	/* Ends that do not exist at all. */
	REFUSED(st,
		"{\"rel\":\"stocked_at\",\"from\":\"Part:nopart\",\"to\":\"Plant:p1\",\"op\":"
		"\"unlink\"}",
		CAIRN_ENOTFOUND, 0, "nopart");
	/* "delete" is a synonym of unlink for Link lines. */
	REFUSED(st,
		"{\"rel\":\"stocked_at\",\"from\":\"Part:a2\",\"to\":\"Plant:p1\",\"op\":"
		"\"delete\"}",
		CAIRN_ENOTFOUND, 0, "stocked_at");
	/* Link and unlink in one commit: the Link never existed before and is gone after. */
	ACCEPTED(st, "{\"rel\":\"stocked_at\",\"from\":\"Part:a2\",\"to\":\"Plant:p1\"}\n"
		     "{\"rel\":\"stocked_at\",\"from\":\"Part:a2\",\"to\":\"Plant:p1\",\"op\":"
		     "\"unlink\"}");
	CHECK(nlinks(st, "Part", "a2", CAIRN_OUT, "stocked_at") == 0);
	snap_release(&snap);
	cairn_close(st);
}

/* -------------------------------------------------------------- JSON -- */

/* A Link line whose values nest `depth` levels in all (the line itself is level 1). */
static size_t deep_link(char *out, size_t cap, int depth)
{
	size_t n =
		(size_t)snprintf(out, cap,
				 "{\"rel\":\"stocked_at\",\"from\":\"Part:a1\",\"to\":\"Plant:p2\","
				 "\"values\":{\"a\":");

	for (int d = 0; d < depth - 2 && n < cap; d++)
		out[n++] = '[';
	for (int d = 0; d < depth - 2 && n < cap; d++)
		out[n++] = ']';
	if (n + 3 > cap)
		return 0;
	out[n++] = '}';
	out[n++] = '}';
	out[n] = '\0';
	return n;
}

void test_neg_bad_json(void)
{
	static const struct {
		const char *line;
		int code;
		const char *needle;
	} bad[] = {
		/* Malformed. */
		{"{\"kind\":\"Plant\",\"key\":", CAIRN_EJSON, "line"},
		{"{\"kind\":\"Plant\",\"key\":\"p9\"} trailing", CAIRN_EJSON, "line"},
		{"{kind:\"Plant\",\"key\":\"p9\"}", CAIRN_EJSON, "line"},
		{"{\"kind\":\"Plant\",\"key\":\"p9\",}", CAIRN_EJSON, "line"},
		/* Not an object, or an object that is neither a Record nor a Link. */
		{"[1,2]", CAIRN_EJSON, "object"},
		{"\"Plant\"", CAIRN_EJSON, "line"},
		{"{}", CAIRN_EJSON, "kind"},
		/* Values that are not an object. */
		{"{\"kind\":\"Plant\",\"key\":\"p9\",\"values\":[1]}", CAIRN_ETYPE, "values"},
		{"{\"kind\":\"Plant\",\"key\":\"p9\",\"values\":\"Oslo\"}", CAIRN_ETYPE, "values"},
		{"{\"kind\":\"Plant\",\"key\":\"p9\",\"values\":3}", CAIRN_ETYPE, "values"},
		{"{\"kind\":\"Plant\",\"key\":\"p1\",\"op\":\"patch\",\"values\":[]}", CAIRN_ETYPE,
		 "values"},
		{"{\"rel\":\"stocked_at\",\"from\":\"Part:a1\",\"to\":\"Plant:p2\",\"values\":[]}",
		 CAIRN_ETYPE, "values"},
		/* Members of the wrong type. */
		{"{\"kind\":\"Plant\",\"key\":9}", CAIRN_ETYPE, "key"},
		{"{\"kind\":\"Plant\",\"key\":\"p9\",\"title\":1}", CAIRN_ETYPE, "title"},
		{"{\"kind\":\"Plant\",\"key\":\"p9\",\"vector\":\"x\"}", CAIRN_ETYPE, "vector"},
		{"{\"kind\":\"Plant\",\"key\":\"p9\",\"vector\":[1,\"x\"]}", CAIRN_ETYPE, "vector"},
		{"{\"kind\":\"Plant\",\"key\":\"p9\",\"op\":\"delete\",\"cascade\":1}", CAIRN_ETYPE,
		 "cascade"},
		/* Duplicate keys, at the top and in values. */
		{"{\"kind\":\"Plant\",\"kind\":\"Part\",\"key\":\"p9\"}", CAIRN_EJSON, "duplicate"},
		{"{\"kind\":\"Plant\",\"key\":\"p9\",\"values\":{\"city\":\"A\",\"city\":\"B\"}}",
		 CAIRN_EJSON, "duplicate"},
		/* An unknown op; a Link end without a Kind. */
		{"{\"kind\":\"Plant\",\"key\":\"p9\",\"op\":\"upsert\"}", CAIRN_EINVAL, "upsert"},
		{"{\"rel\":\"stocked_at\",\"from\":\"a1\",\"to\":\"Plant:p2\"}", CAIRN_EINVAL,
		 "Kind:key"},
	};
	struct snap snap;
	cairn_changeset *cs;
	cairn_store *st;
	char lines[512], deep[400];
	size_t n;
	int rc;

	CHECK((st = setup(&snap)) != NULL);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		/* The bad line is the third of the commit. */
		snprintf(lines, sizeof(lines),
			 "{\"kind\":\"Plant\",\"key\":\"p9\"}\n{\"kind\":\"Plant\",\"key\":\"p8\"}"
			 "\n%s",
			 bad[i].line);
		REFUSED(st, lines, bad[i].code, 2, bad[i].needle);
	}
	/* Nesting deeper than 64 levels. */
	CHECK((n = deep_link(deep, sizeof(deep), 65)) > 0);
	snprintf(lines, sizeof(lines), "{\"kind\":\"Plant\",\"key\":\"p9\"}\n%s", deep);
	REFUSED(st, lines, CAIRN_EJSON, 1, "deeper");
	/* Exactly 64 levels is not a JSON error (a Link's values may hold any object). */
	OK(cairn_changeset_new(&cs));
	CHECK((n = deep_link(deep, sizeof(deep), 64)) > 0);
	OK(cairn_changeset_add_json(cs, deep, n));
	cairn_changeset_free(cs);

	/* The same through the changeset API, where the error comes when a change is added. */
	OK(cairn_changeset_new(&cs));
	rc = cairn_changeset_add_json(cs, LIT(""));
	CHECK(key_refused(cs, rc, CAIRN_EJSON, 0, 0, "line"));
	OK(cairn_changeset_put(cs, "Plant", "p9", 2, NULL, 0, NULL, 0));
	/* The values object of a 66-level line nests 65 levels. */
	CHECK((n = deep_link(deep, sizeof(deep), 66)) > 0);
	{
		const char *vals = strstr(deep, "\"values\":") + 9;

		rc = cairn_changeset_link(cs, "stocked_at", "Part", "a1", 2, "Plant", "p2", 2, vals,
					  strlen(vals) - 1);
	}
	CHECK(key_refused(cs, rc, CAIRN_EJSON, 1, 1, "deeper"));
	rc = cairn_changeset_put(cs, "Plant", "p8", 2, NULL, 0, LIT("[1]"));
	CHECK(key_refused(cs, rc, CAIRN_ETYPE, 1, 1, "object"));
	rc = cairn_changeset_put(cs, "Plant", "p8", 2, NULL, 0, LIT("{\"city\":"));
	CHECK(key_refused(cs, rc, CAIRN_EJSON, 1, 1, "values"));
	rc = cairn_changeset_patch(cs, "Plant", "p1", 2, LIT("{\"city\":1,\"city\":2}"));
	CHECK(key_refused(cs, rc, CAIRN_EJSON, 1, 1, "duplicate"));
	/* A scalar is valid JSON but not an object: ETYPE, like an array, or "values":7 in a line. */
	rc = cairn_changeset_link(cs, "stocked_at", "Part", "a1", 2, "Plant", "p2", 2, LIT("7"));
	CHECK(key_refused(cs, rc, CAIRN_ETYPE, 1, 1, "object"));
	CHECK(valid_rest_commits(st, cs, &snap));
	cairn_changeset_free(cs);
	/* A null values member is the empty object. */
	ACCEPTED(st, "{\"kind\":\"Plant\",\"key\":\"p7\",\"values\":null}");
	/*
	 * Unknown fields of a line. ENGINE BUG (kept failing, last in this test):
	 * the code and change are right but cairn_errmsg() is "", because
	 * add_json_record and add_json_link in src/model/changeset.c call
	 * err_change(..., "%s", cairn_errmsg()), formatting the thread's message
	 * buffer into itself (overlapping vsnprintf, undefined behaviour).
	 */
	REFUSED(st,
		"{\"kind\":\"Plant\",\"key\":\"p9\"}\n{\"kind\":\"Plant\",\"key\":\"p8\"}\n"
		"{\"rel\":\"stocked_at\",\"from\":\"Part:a1\",\"to\":\"Plant:p2\",\"weight\":1}",
		CAIRN_EJSON, 2, "weight");
	REFUSED(st,
		"{\"kind\":\"Plant\",\"key\":\"p9\"}\n{\"kind\":\"Plant\",\"key\":\"p8\"}\n"
		"{\"kind\":\"Plant\",\"key\":\"p9\",\"colour\":1}",
		CAIRN_EJSON, 2, "colour");
	snap_release(&snap);
	cairn_close(st);
}

void test_neg_unknown_relation(void)
{
	struct snap snap;
	cairn_store *st;

	CHECK((st = setup(&snap)) != NULL);
	REFUSED(st,
		"{\"kind\":\"Plant\",\"key\":\"p9\"}\n"
		"{\"rel\":\"made_of\",\"from\":\"Part:a1\",\"to\":\"Part:a2\"}",
		CAIRN_EUNKNOWNREL, 1, "made_of");
	REFUSED(st,
		"{\"rel\":\"made_of\",\"from\":\"Part:a1\",\"to\":\"Part:a2\",\"op\":\"unlink\"}",
		CAIRN_EUNKNOWNREL, 0, "made_of");
	/* Relation names are case-sensitive. */
	REFUSED(st, "{\"rel\":\"Supplied_By\",\"from\":\"Part:a1\",\"to\":\"Supplier:s2\"}",
		CAIRN_EUNKNOWNREL, 0, "Supplied_By");
	snap_release(&snap);
	cairn_close(st);
}

/* -------------------------------------------------------- provenance -- */

void test_neg_confidence_range(void)
{
	const double bad[] = {1.5, -0.1, NAN, INFINITY, -INFINITY, 1.0000001};
	cairn_commit_options co = {0};
	cairn_commit_result res;
	struct snap snap;
	cairn_changeset *cs;
	cairn_store *st;

	CHECK((st = setup(&snap)) != NULL);
	OK(cairn_changeset_new(&cs));
	OK(cairn_changeset_put(cs, "Plant", "p9", 2, NULL, 0, NULL, 0));
	co.domain = "d";
	co.prov.actor = "test";
	co.prov.has_confidence = 1;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		co.prov.confidence = bad[i];
		CHECK_RC(cairn_commit(st, &co, cs, &res), CAIRN_EINVAL);
		CHECK(errchange_is(-1));
		CHECK(errmsg_has("confidence"));
		CHECK(unchanged(st, &snap));
		/* A schema change checks it too. */
		CHECK_RC(cairn_schema_apply(st, &co, "{}", 2, NULL), CAIRN_EINVAL);
		CHECK(errmsg_has("confidence"));
		CHECK(unchanged(st, &snap));
	}
	/* Out of range is ignored without has_confidence (1.0 is recorded). */
	co.prov.has_confidence = 0;
	co.prov.confidence = 7;
	OK(cairn_commit(st, &co, cs, &res));
	CHECK(res.revision == snap.head + 1);
	CHECK(resnap(st, &snap));
	/* The bounds are valid. */
	co.prov.has_confidence = 1;
	co.prov.confidence = 0;
	cairn_changeset_clear(cs); /* each commit changes p9: one that changes nothing writes nothing */
	OK(cairn_changeset_put(cs, "Plant", "p9", 2, "b", 1, NULL, 0));
	OK(cairn_commit(st, &co, cs, &res));
	co.prov.confidence = 1;
	cairn_changeset_clear(cs);
	OK(cairn_changeset_put(cs, "Plant", "p9", 2, "c", 1, NULL, 0));
	OK(cairn_commit(st, &co, cs, &res));
	CHECK(res.revision == snap.head + 2);
	CHECK(cairn_check(st, "d", NULL, NULL, NULL) == 0);
	cairn_changeset_free(cs);
	snap_release(&snap);
	cairn_close(st);
}

/* ------------------------------------------------------------- dates -- */

void test_neg_bad_dates(void)
{
	static const struct {
		const char *attr;
		const char *value;
	} bad[] = {
		{"since", "2024-02-30"},
		{"since", "2023-02-29"}, /* not a leap year */
		{"since", "1900-02-29"}, /* not a leap year either */
		{"since", "2024-13-01"},
		{"since", "2024-00-10"},
		{"since", "2024-01-00"},
		{"since", "2024-04-31"},
		{"since", "24-01-01"},
		{"since", "2024-1-01"},
		{"since", "2024/01/01"},
		{"since", "2024-01-01T00:00:00Z"},
		{"since", ""},
		{"audited", "2024-01-01T10:00:00"},   /* no time zone */
		{"audited", "2024-01-01T10:00:00.5"}, /* no time zone */
		{"audited", "2024-01-01"},
		{"audited", "2024-01-01T24:00:00Z"},
		{"audited", "2024-01-01T10:60:00Z"},
		{"audited", "2024-02-30T10:00:00Z"},
		{"audited", "2024-01-01T10:00:00+2:00"},
		{"audited", "2024-01-01T10:00:00.Z"},
		{"audited", "2024-01-01T10:00:00Zjunk"},
	};
	static const char *const good[] = {
		"{\"kind\":\"Supplier\",\"key\":\"s9\",\"values\":{\"since\":\"2024-02-29\","
		"\"audited\":\"2024-01-01T10:00:00Z\"}}",
		"{\"kind\":\"Supplier\",\"key\":\"s9\",\"values\":{\"since\":\"2000-02-29\","
		"\"audited\":\"2024-01-01T10:00:00.123+02:00\"}}",
		"{\"kind\":\"Supplier\",\"key\":\"s9\",\"values\":{\"since\":\"2024-12-31\","
		"\"audited\":\"2024-06-30T23:59:60-05:30\"}}",
	};
	struct snap snap;
	cairn_store *st;
	char lines[512];

	CHECK((st = setup(&snap)) != NULL);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(lines, sizeof(lines),
			 "{\"kind\":\"Plant\",\"key\":\"p9\"}\n"
			 "{\"kind\":\"Supplier\",\"key\":\"s9\",\"values\":{\"%s\":\"%s\"}}",
			 bad[i].attr, bad[i].value);
		REFUSED(st, lines, CAIRN_ETYPE, 1, bad[i].attr);
	}
	/* A patch of a stored date. */
	REFUSED(st,
		"{\"kind\":\"Supplier\",\"key\":\"s1\",\"op\":\"patch\",\"values\":{\"since\":"
		"\"2021-02-29\"}}",
		CAIRN_ETYPE, 0, "since");
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		ACCEPTED(st, good[i]);
	snap_release(&snap);
	cairn_close(st);
}

/* ----------------------------------------------------------- vectors -- */

void test_neg_vector_dimension(void)
{
	const float v4[] = {1, 2, 3, 4};
	struct snap snap;
	cairn_changeset *cs;
	cairn_store *st;
	int rc;

	CHECK((st = setup(&snap)) != NULL);
	/* The first vectors, 3 then 4 dimensions in one commit: the 4 is refused. */
	REFUSED(st,
		"{\"kind\":\"Plant\",\"key\":\"p9\",\"vector\":[1,2,3]}\n"
		"{\"kind\":\"Plant\",\"key\":\"p8\",\"vector\":[1,2,3,4]}",
		CAIRN_EDIM, 1, "4 dimensions");
	/* The refused commit set no dimension: 2 dimensions may come first now. */
	ACCEPTED(st, "{\"kind\":\"Plant\",\"key\":\"p7\",\"vector\":[0.5,0.25]}");
	ACCEPTED(st, "{\"kind\":\"Plant\",\"key\":\"p7\",\"op\":\"delete\"}");
	/* Still 2 after the only Record with a vector is gone. */
	REFUSED(st, "{\"kind\":\"Plant\",\"key\":\"p9\",\"vector\":[1,2,3]}", CAIRN_EDIM, 0,
		"3 dimensions");
	REFUSED(st,
		"{\"kind\":\"Plant\",\"key\":\"p9\",\"vector\":[1,2]}\n"
		"{\"kind\":\"Supplier\",\"key\":\"s9\",\"values\":{\"vat\":\"V\"},\"vector\":[1,2,"
		"3,4]}",
		CAIRN_EDIM, 1, "4 dimensions");
	/* A patch with a vector of another dimension. */
	REFUSED(st,
		"{\"kind\":\"Plant\",\"key\":\"p1\",\"op\":\"patch\",\"values\":{},\"vector\":[1]}",
		CAIRN_EDIM, 0, "1 dimensions");
	/* Through the changeset API. */
	OK(cairn_changeset_new(&cs));
	OK(cairn_changeset_put(cs, "Plant", "p9", 2, NULL, 0, NULL, 0));
	OK(cairn_changeset_vector(cs, v4, 4));
	CHECK_RC(commit_cs(st, cs, NULL), CAIRN_EDIM);
	CHECK(errchange_is(0));
	CHECK(unchanged(st, &snap));
	/* No dimensions, and more than the limit, are refused when added. */
	rc = cairn_changeset_vector(cs, v4, 0);
	CHECK(key_refused(cs, rc, CAIRN_EDIM, 0, 1, "dimensions"));
	cairn_changeset_free(cs);
	OK(cairn_changeset_new(&cs));
	rc = cairn_changeset_add_json(cs, LIT("{\"kind\":\"Plant\",\"key\":\"p9\",\"vector\":[]}"));
	CHECK(key_refused(cs, rc, CAIRN_EDIM, 0, 0, "dimensions"));
	cairn_changeset_free(cs);
	ACCEPTED(st, "{\"kind\":\"Plant\",\"key\":\"p9\",\"vector\":[1,2]}");
	snap_release(&snap);
	cairn_close(st);
}

/* ------------------------------------------------------- all or none -- */

void test_neg_one_bad_change_of_many(void)
{
	struct snap snap;
	cairn_changeset *cs;
	cairn_store *st;
	char key[16], vals[64];
	long before;

	CHECK((st = setup(&snap)) != NULL);
	before = count_of(st, "Supplier");
	CHECK(before == 3);
	OK(cairn_changeset_new(&cs));
	for (int i = 0, k = 0; i < 101; i++) {
		if (i == 57) {
			OK(cairn_changeset_put(cs, "Supplier", "bad57", 5, NULL, 0,
					       LIT("{\"colour\":\"red\"}")));
			continue;
		}
		snprintf(key, sizeof(key), "m%03d", k);
		snprintf(vals, sizeof(vals), "{\"vat\":\"M%03d\",\"rating\":%d}", k, k);
		OK(cairn_changeset_put(cs, "Supplier", key, strlen(key), "many", 4, vals, strlen(vals)));
		k++;
	}
	CHECK(cairn_changeset_count(cs) == 101);
	CHECK_RC(commit_cs(st, cs, NULL), CAIRN_EUNKNOWNATTR);
	CHECK(errchange_is(57));
	CHECK(errmsg_has("change 57"));
	CHECK(errmsg_has("colour"));
	CHECK(unchanged(st, &snap));
	CHECK(count_of(st, "Supplier") == before);
	for (int k = 0; k < 100; k++) {
		snprintf(key, sizeof(key), "m%03d", k);
		CHECK(exists(st, "Supplier", key, strlen(key)) == 0);
	}
	/* A failure found only by the final checks (a ref) names its change too. */
	cairn_changeset_clear(cs);
	for (int i = 0; i < 101; i++) {
		snprintf(key, sizeof(key), "m%03d", i);
		if (i == 57)
			OK(cairn_changeset_put(cs, "Part", "bad57", 5, NULL, 0,
					       LIT("{\"sku\":\"B\",\"supplier\":\"nobody\"}")));
		else
			OK(cairn_changeset_put(cs, "Plant", key, strlen(key), NULL, 0, NULL, 0));
	}
	CHECK_RC(commit_cs(st, cs, NULL), CAIRN_EREF);
	CHECK(errchange_is(57));
	CHECK(errmsg_has("nobody"));
	CHECK(unchanged(st, &snap));
	CHECK(count_of(st, "Plant") == 2);
	cairn_changeset_free(cs);
	snap_release(&snap);
	cairn_close(st);
}
