/*
 * Exact vector search against a brute-force reference: random Records with
 * vectors, updates and deletes on main and a branch; random queries (a
 * vector or a Record to be near, Kinds, a filter, each metric, limits) on
 * main, on the branch and at past revisions. The reference reads what the
 * view holds through pages and cairn_vector_get and ranks it itself.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "tests.h"
#include "base/arena.h"

#define VDIM 8

static const char vschema[] =
	"{\"kinds\":[{\"name\":\"A\",\"attributes\":[{\"name\":\"grp\",\"type\":\"int\"}]},"
	"{\"name\":\"B\",\"attributes\":[{\"name\":\"grp\",\"type\":\"int\"}]}]}";

typedef struct rv {
	int kind;
	char key[16];
	uint64_t vid;
	int grp;
	float v[VDIM];
} rv;

/* Every live Record of the view with its vector. */
static size_t view_all(cairn_txn *t, rv *out, size_t cap)
{
	static const char *const kinds[] = {"A", "B"};
	size_t n = 0;

	for (int k = 0; k < 2; k++) {
		cairn_record r[100];
		char after[16] = "";
		size_t got;

		do {
			if (cairn_page(t, kinds[k], after, strlen(after), r, 100, &got))
				return SIZE_MAX;
			for (size_t i = 0; i < got && n < cap; i++) {
				arena a = ARENA_INIT;
				const jv *vals = jv_parse(&a, r[i].values, r[i].values_len, "v");
				size_t dim;

				out[n].kind = k;
				snprintf(out[n].key, sizeof(out[n].key), "%.*s", (int)r[i].key_len, r[i].key);
				out[n].vid = r[i].vid;
				out[n].grp = jv_get(vals, "grp") ? (int)jv_number(jv_get(vals, "grp")) : -1;
				arena_release(&a);
				if (cairn_vector_get(t, r[i].vid, out[n].v, VDIM, &dim) || dim != VDIM)
					return SIZE_MAX;
				n++;
			}
			if (got)
				snprintf(after, sizeof(after), "%.*s", (int)r[got - 1].key_len, r[got - 1].key);
		} while (got == 100);
	}
	return n;
}

static double score(int metric, const float *x, const float *q)
{
	double s = 0, nx = 0, nq = 0;

	for (int d = 0; d < VDIM; d++) {
		if (metric == CAIRN_L2)
			s += ((double)x[d] - q[d]) * ((double)x[d] - q[d]);
		else
			s += (double)x[d] * q[d];
		nx += (double)x[d] * x[d];
		nq += (double)q[d] * q[d];
	}
	if (metric == CAIRN_L2)
		return s > 0 ? -sqrt(s) : 0;
	if (metric == CAIRN_COSINE)
		return nx > 0 && nq > 0 ? s / (sqrt(nx) * sqrt(nq)) : 0;
	return s;
}

typedef struct rh {
	uint64_t vid;
	double s;
} rh;

static int rh_cmp(const void *x, const void *y)
{
	const rh *a = x, *b = y;

	if (a->s != b->s)
		return a->s > b->s ? -1 : 1;
	return (a->vid > b->vid) - (a->vid < b->vid);
}

static int compare(cairn_store *st, const char *branch, uint64_t at, int queries)
{
	cairn_read_options ro = {0};
	rv *all = calloc(2000, sizeof(*all));
	rh *want = calloc(2000, sizeof(*want));
	cairn_txn *t;
	size_t n;
	int bad = 0;

	ro.domain = "d";
	ro.branch = branch;
	ro.at_revision = at;
	if (!all || !want || cairn_txn_begin(st, &ro, &t)) {
		free(all);
		free(want);
		return 0;
	}
	n = view_all(t, all, 2000);
	if (n == SIZE_MAX || n < 20)
		bad = 1;
	for (int it = 0; it < queries && !bad; it++) {
		cairn_vsearch_options o = {0};
		cairn_hit h[40];
		float q[VDIM];
		const char *kname = rand() % 2 ? "B" : "A";
		int kind = rand() % 3 - 1; /* -1: every Kind */
		int grp = rand() % 3 ? -1 : rand() % 4;
		char where[32];
		cairn_ref near = {0, 0, 0};
		size_t got, nw = 0, near_i = SIZE_MAX;

		o.limit = 1 + (size_t)rand() % 40;
		o.metric = rand() % 3;
		if (rand() % 3 == 0) {
			near_i = (size_t)rand() % n;
			near.kind = all[near_i].kind ? "B" : "A";
			near.key = all[near_i].key;
			o.near = &near;
			memcpy(q, all[near_i].v, sizeof(q));
		} else {
			for (int d = 0; d < VDIM; d++)
				q[d] = (float)(rand() % 2001 - 1000) / 1000.0f;
			o.vector = q;
			o.dim = VDIM;
		}
		if (kind >= 0) {
			kname = kind ? "B" : "A";
			o.kinds = &kname;
			o.n_kinds = 1;
			if (grp >= 0) {
				snprintf(where, sizeof(where), "{\"grp\":%d}", grp);
				o.where = where;
			}
		}
		if (cairn_vsearch(t, &o, h, 40, &got)) {
			fprintf(stderr, "    vsearch: %s\n", cairn_errmsg());
			bad = 1;
			break;
		}
		for (size_t i = 0; i < n; i++) {
			if (i == near_i || (kind >= 0 && all[i].kind != kind) ||
			    (kind >= 0 && grp >= 0 && all[i].grp != grp))
				continue;
			want[nw].vid = all[i].vid;
			want[nw++].s = score(o.metric, all[i].v, q);
		}
		qsort(want, nw, sizeof(*want), rh_cmp);
		if (nw > o.limit)
			nw = o.limit;
		if (got != nw) {
			fprintf(stderr, "    %zu hits, want %zu (metric %d, kind %d, grp %d)\n", got, nw,
				o.metric, kind, grp);
			bad = 1;
		}
		/*
		 * The same ranking up to float rounding: each hit is a Record the
		 * reference scores within 1e-5 of the reference's hit at its place
		 * (scores are summed in float32 lanes, the reference in double).
		 */
		for (size_t i = 0; i < got && !bad; i++) {
			double mine = INFINITY;

			for (size_t j = 0; j < n; j++)
				if (all[j].vid == h[i].rec.vid && j != near_i)
					mine = score(o.metric, all[j].v, q);
			if (fabs(mine - want[i].s) > 1e-5 || fabs(h[i].score - want[i].s) > 1e-5 ||
			    (kind >= 0 && strcmp(h[i].rec.kind, kname) != 0)) {
				fprintf(stderr, "    hit %zu: vid %llu %.12f, want vid %llu %.12f\n", i,
					(unsigned long long)h[i].rec.vid, h[i].score,
					(unsigned long long)want[i].vid, want[i].s);
				bad = 1;
			}
		}
	}
	cairn_txn_end(t);
	free(all);
	free(want);
	return !bad;
}

static int put_batch(cairn_store *st, const char *branch, int round, uint64_t *rev)
{
	char *lines = malloc(64 * 256);
	size_t len = 0;
	cairn_commit_result res;
	int rc;

	for (int i = 0; i < 30; i++) {
		int k = rand() % 2, key = rand() % 300;

		len += (size_t)snprintf(lines + len, 64 * 256 - len,
					"%s{\"kind\":\"%s\",\"key\":\"k%d\",\"title\":\"r%d\",\"values\":{\"grp\":%d},"
					"\"vector\":[",
					len ? "\n" : "", k ? "B" : "A", key, round, rand() % 4);
		for (int d = 0; d < VDIM; d++)
			len += (size_t)snprintf(lines + len, 64 * 256 - len, "%s%d", d ? "," : "",
						rand() % 21 - 10);
		len += (size_t)snprintf(lines + len, 64 * 256 - len, "]}");
	}
	rc = test_commit_on(st, "d", branch, lines, &res);
	free(lines);
	if (!rc && rev)
		*rev = res.revision;
	return rc;
}

void test_vsearch_reference(void)
{
	cairn_store *st;
	cairn_open_options oo = {.flags = CAIRN_OPEN_CREATE | CAIRN_OPEN_NOSYNC | CAIRN_OPEN_NO_BACKGROUND};
	cairn_commit_options co = {0};
	uint64_t past = 0;

	srand(17);
	if (cairn_open(test_path("vstore"), &oo, &st) || cairn_domain_create(st, "d")) {
		CHECK(0);
		return;
	}
	co.domain = "d";
	co.prov.actor = "test";
	OK(cairn_schema_apply(st, &co, vschema, strlen(vschema), NULL));
	for (int r = 0; r < 12; r++)
		OK(put_batch(st, NULL, r, r == 5 ? &past : NULL));
	OK(cairn_branch_create(st, "d", "b", NULL));
	for (int r = 12; r < 16; r++) {
		OK(put_batch(st, "b", r, NULL));
		OK(put_batch(st, NULL, r + 100, NULL));
	}
	/* Some deletes (of the keys that exist): their vectors leave the view. */
	for (int i = 0; i < 300; i += 9) {
		char key[16];
		cairn_changeset *cs;

		snprintf(key, sizeof(key), "k%d", i);
		OK(cairn_changeset_new(&cs));
		OK(cairn_changeset_delete(cs, "A", key, strlen(key), 0));
		co.branch = NULL;
		(void)cairn_commit(st, &co, cs, NULL); /* refused when k<i> is no A */
		cairn_changeset_free(cs);
	}
	CHECK(compare(st, NULL, 0, 150));
	CHECK(compare(st, "b", 0, 100));
	CHECK(compare(st, NULL, past, 80));
	cairn_close(st);
}

void test_vsearch_errors(void)
{
	cairn_store *st = test_store();
	cairn_read_options ro = {0};
	cairn_vsearch_options o = {0};
	cairn_hit h[5];
	cairn_txn *t;
	float q[3] = {1, 0, 0}, inf[3] = {1, INFINITY, 0};
	cairn_ref near = {"Supplier", "S1", 0}, none = {"Supplier", "nope", 0},
		  plain = {"Supplier", "S2", 0};
	const char *kinds[] = {"Nope"};
	size_t n;

	CHECK(st);
	if (!st)
		return;
	OK(test_commit(st, "{\"kind\":\"Supplier\",\"key\":\"S1\",\"vector\":[1,0,0]}\n"
			   "{\"kind\":\"Supplier\",\"key\":\"S2\"}\n"
			   "{\"kind\":\"Supplier\",\"key\":\"S3\",\"vector\":[0.9,0.1,0]}",
		       NULL));
	ro.domain = "d";
	OK(cairn_txn_begin(st, &ro, &t));
	o.limit = 5;
	CHECK_RC(cairn_vsearch(t, &o, h, 5, &n), CAIRN_EINVAL); /* neither */
	o.vector = q;
	o.dim = 3;
	o.near = &near;
	CHECK_RC(cairn_vsearch(t, &o, h, 5, &n), CAIRN_EINVAL); /* both */
	o.near = NULL;
	OK(cairn_vsearch(t, &o, h, 5, &n));
	CHECK(n == 2 && h[0].rec.key_len == 2 && memcmp(h[0].rec.key, "S1", 2) == 0 &&
	      fabs(h[0].score - 1) < 1e-9);
	o.dim = 2;
	CHECK_RC(cairn_vsearch(t, &o, h, 5, &n), CAIRN_EDIM);
	o.dim = 3;
	o.vector = inf;
	CHECK_RC(cairn_vsearch(t, &o, h, 5, &n), CAIRN_EINVAL);
	o.vector = NULL;
	o.near = &near;
	OK(cairn_vsearch(t, &o, h, 5, &n));
	CHECK(n == 1 && memcmp(h[0].rec.key, "S3", 2) == 0); /* itself left out */
	o.near = &none;
	CHECK_RC(cairn_vsearch(t, &o, h, 5, &n), CAIRN_ENOTFOUND);
	o.near = &plain;
	CHECK_RC(cairn_vsearch(t, &o, h, 5, &n), CAIRN_EINVAL); /* no vector */
	o.near = &near;
	o.kinds = kinds;
	o.n_kinds = 1;
	CHECK_RC(cairn_vsearch(t, &o, h, 5, &n), CAIRN_EUNKNOWNKIND);
	o.n_kinds = 0;
	o.where = "{\"vat\":\"x\"}";
	CHECK_RC(cairn_vsearch(t, &o, h, 5, &n), CAIRN_EINVAL); /* where without kinds */
	o.where = NULL;
	o.metric = 3;
	CHECK_RC(cairn_vsearch(t, &o, h, 5, &n), CAIRN_EINVAL);
	o.metric = CAIRN_COSINE;
	o.limit = 101;
	CHECK_RC(cairn_vsearch(t, &o, h, 5, &n), CAIRN_EINVAL);
	cairn_txn_end(t);
	cairn_close(st);
}
