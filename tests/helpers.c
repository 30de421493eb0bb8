/* Shared test helpers: a store with the test schema, commits from import lines, export. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "tests.h"

const char test_schema[] =
	"{\"kinds\":["
	"{\"name\":\"Supplier\",\"attributes\":["
	"{\"name\":\"vat\",\"type\":\"string\",\"unique\":true},"
	"{\"name\":\"country\",\"type\":\"enum\",\"values\":[\"DE\",\"FR\",\"US\"],\"indexed\":true},"
	"{\"name\":\"rating\",\"type\":\"int\"},"
	"{\"name\":\"since\",\"type\":\"date\"},"
	"{\"name\":\"audited\",\"type\":\"datetime\"},"
	"{\"name\":\"active\",\"type\":\"bool\"},"
	"{\"name\":\"tags\",\"type\":\"strings\"}]},"
	"{\"name\":\"Part\",\"attributes\":["
	"{\"name\":\"sku\",\"type\":\"string\",\"required\":true,\"unique\":true},"
	"{\"name\":\"supplier\",\"type\":\"ref\",\"ref\":\"Supplier\",\"indexed\":true},"
	"{\"name\":\"status\",\"type\":\"enum\",\"values\":[\"active\",\"eol\"]},"
	"{\"name\":\"price\",\"type\":\"float\"}]},"
	"{\"name\":\"Plant\",\"attributes\":[{\"name\":\"city\",\"type\":\"string\"}]}],"
	"\"relations\":["
	"{\"name\":\"supplied_by\",\"from\":\"Part\",\"to\":\"Supplier\",\"cardinality\":\"many\"},"
	"{\"name\":\"stocked_at\",\"from\":\"Part\",\"to\":\"Plant\"},"
	"{\"name\":\"primary_plant\",\"from\":\"Part\",\"to\":\"Plant\",\"cardinality\":\"one\"}]}";

cairn_store *test_store(void)
{
	cairn_open_options o = {.flags = CAIRN_OPEN_CREATE | CAIRN_OPEN_NOSYNC | CAIRN_OPEN_NO_BACKGROUND};
	cairn_commit_options co = {0};
	cairn_store *st = NULL;

	if (cairn_open(test_path("store"), &o, &st) || cairn_domain_create(st, "d")) {
		fprintf(stderr, "    test_store: %s\n", cairn_errmsg());
		cairn_close(st);
		return NULL;
	}
	co.domain = "d";
	co.prov.actor = "test";
	if (cairn_schema_apply(st, &co, test_schema, strlen(test_schema), NULL)) {
		fprintf(stderr, "    test_store: schema: %s\n", cairn_errmsg());
		cairn_close(st);
		return NULL;
	}
	return st;
}

int test_commit_in(cairn_store *st, const char *domain, const char *lines,
		   cairn_commit_result *res)
{
	return test_commit_on(st, domain, NULL, lines, res);
}

int test_commit_on(cairn_store *st, const char *domain, const char *branch, const char *lines,
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
	co.domain = domain;
	co.branch = branch;
	co.prov.actor = "test";
	rc = cairn_commit(st, &co, cs, res);
	cairn_changeset_free(cs);
	return rc;
}

int test_commit(cairn_store *st, const char *lines, cairn_commit_result *res)
{
	return test_commit_in(st, "d", lines, res);
}

char *test_export(cairn_store *st, const char *domain)
{
	cairn_read_options ro = {0};
	cairn_txn *t;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	ro.domain = domain;
	if (cairn_txn_begin(st, &ro, &t))
		return NULL;
	f = open_memstream(&buf, &len);
	if (!f || cairn_export(t, f)) {
		if (f)
			fclose(f);
		free(buf);
		cairn_txn_end(t);
		return NULL;
	}
	fclose(f);
	cairn_txn_end(t);
	return buf;
}

uint64_t test_head(cairn_store *st, const char *domain)
{
	cairn_read_options ro = {0};
	cairn_txn *t;
	uint64_t rev;

	ro.domain = domain;
	if (cairn_txn_begin(st, &ro, &t))
		return UINT64_MAX;
	rev = cairn_txn_revision(t);
	cairn_txn_end(t);
	return rev;
}

int test_streq(const char *p, size_t n, const char *s)
{
	return strlen(s) == n && memcmp(p, s, n) == 0;
}

unsigned test_osa(const char *a, size_t an, const char *b, size_t bn)
{
	static unsigned d[256][256];

	if (an > 255 || bn > 255)
		return UINT_MAX;
	for (size_t i = 0; i <= an; i++)
		d[i][0] = (unsigned)i;
	for (size_t j = 0; j <= bn; j++)
		d[0][j] = (unsigned)j;
	for (size_t i = 1; i <= an; i++)
		for (size_t j = 1; j <= bn; j++) {
			unsigned v = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);

			if (d[i - 1][j] + 1 < v)
				v = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < v)
				v = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1;
			d[i][j] = v;
		}
	return d[an][bn];
}

unsigned test_typo_edits(const char *q, size_t m, const char *w)
{
	size_t n = strlen(w);

	if (!m || !n)
		return UINT_MAX;
	if (w[0] == q[0])
		return test_osa(q, m, w, n);
	/* another first letter: 2, when nothing else changed */
	if ((n == m && memcmp(w + 1, q + 1, m - 1) == 0) ||
	    (n == m + 1 && memcmp(w + 1, q, m) == 0) ||
	    (n + 1 == m && memcmp(w, q + 1, n) == 0) ||
	    (n == m && m >= 2 && w[0] == q[1] && w[1] == q[0] && memcmp(w + 2, q + 2, m - 2) == 0))
		return 2;
	return UINT_MAX;
}

uint64_t test_db_entries(cairn_store *st, const char *db)
{
	cairn_db_stats s[32];
	size_t n;

	if (cairn_store_stats(st, s, 32, &n))
		return UINT64_MAX;
	for (size_t i = 0; i < n; i++)
		if (strcmp(s[i].name, db) == 0)
			return s[i].entries;
	return UINT64_MAX;
}

struct horizon_arg {
	const char *domain;
	uint64_t h;
};

static int horizon_one(void *ctx, const cairn_domain_info *d)
{
	struct horizon_arg *a = ctx;

	if (strcmp(d->name, a->domain) == 0)
		a->h = d->horizon;
	return 0;
}

uint64_t test_horizon(cairn_store *st, const char *domain)
{
	struct horizon_arg a = {domain, UINT64_MAX};

	return cairn_domain_list(st, horizon_one, &a) ? UINT64_MAX : a.h;
}
