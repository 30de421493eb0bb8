/*
 * Attribute queries against a brute-force reference: random Records of
 * every attribute type (indexed or not, arrays, long strings, missing
 * values), random filters and sorts, every page followed by its cursor,
 * compared in content and order with the Records read one by one and
 * filtered by an evaluator of this file's own, on main, on a branch and at
 * a past revision.
 */
#include <stdlib.h>

#include "query/read.h"
#include "tests.h"
#include "base/knob.h"

static const char qschema[] =
	"{\"kinds\":[{\"name\":\"Other\"},{\"name\":\"Item\",\"attributes\":["
	"{\"name\":\"s\",\"type\":\"string\",\"indexed\":true},"
	"{\"name\":\"u\",\"type\":\"string\"},"
	"{\"name\":\"e\",\"type\":\"enum\",\"values\":[\"red\",\"green\",\"blue\"],\"indexed\":true},"
	"{\"name\":\"i\",\"type\":\"int\",\"indexed\":true},"
	"{\"name\":\"j\",\"type\":\"int\"},"
	"{\"name\":\"f\",\"type\":\"float\",\"indexed\":true},"
	"{\"name\":\"d\",\"type\":\"date\",\"indexed\":true},"
	"{\"name\":\"b\",\"type\":\"bool\",\"indexed\":true},"
	"{\"name\":\"tags\",\"type\":\"strings\",\"indexed\":true},"
	"{\"name\":\"r\",\"type\":\"ref\",\"ref\":\"Other\"},"
	"{\"name\":\"long\",\"type\":\"string\",\"indexed\":true}]}]}";

/* ------------------------------------------------------------ the model -- */

#define NREC 240
#define NOTHER 5

typedef struct item {
	int exists;
	int has[11];	/* s u e i j f d b tags r long */
	char s[8], u[8], e[8], d[12], r[8];
	char *lng;
	int i, j, b;
	double f;
	int ntags;
	char tags[3][8];
} item;

static const char *const attrs[] = {"s", "u", "e", "i", "j", "f", "d", "b", "tags", "r", "long"};
enum { A_S, A_U, A_E, A_I, A_J, A_F, A_D, A_B, A_TAGS, A_R, A_LONG, N_ATTRS };

static char longs[4][400];

static void random_item(item *it)
{
	static const char *const colors[] = {"red", "green", "blue"};

	memset(it->has, 0, sizeof(it->has));
	it->exists = 1;
	for (int a = 0; a < N_ATTRS; a++)
		it->has[a] = rand() % 5 != 0;
	snprintf(it->s, sizeof(it->s), "s%d", rand() % 12);
	snprintf(it->u, sizeof(it->u), "u%d", rand() % 12);
	snprintf(it->e, sizeof(it->e), "%s", colors[rand() % 3]);
	it->i = rand() % 40 - 20;
	it->j = rand() % 40 - 20;
	it->f = (rand() % 80 - 40) / 4.0;
	snprintf(it->d, sizeof(it->d), "2024-%02d-%02d", 1 + rand() % 3, 1 + rand() % 28);
	it->b = rand() % 2;
	it->ntags = rand() % 4;
	for (int t = 0; t < it->ntags; t++)
		snprintf(it->tags[t], sizeof(it->tags[t]), "t%d", rand() % 6);
	snprintf(it->r, sizeof(it->r), "o%d", rand() % NOTHER);
	it->lng = longs[rand() % 4];
}

/*
 * Change one attribute of it, or two, the others kept: the Version that
 * results keeps most indexed values, whose entries an earlier Version wrote.
 */
static void mutate_some(item *it)
{
	item x;
	int n = 1 + rand() % 2;

	random_item(&x);
	for (int m = 0; m < n; m++) {
		int a = rand() % N_ATTRS;

		it->has[a] = x.has[a];
		switch (a) {
		case A_S: memcpy(it->s, x.s, sizeof(x.s)); break;
		case A_U: memcpy(it->u, x.u, sizeof(x.u)); break;
		case A_E: memcpy(it->e, x.e, sizeof(x.e)); break;
		case A_I: it->i = x.i; break;
		case A_J: it->j = x.j; break;
		case A_F: it->f = x.f; break;
		case A_D: memcpy(it->d, x.d, sizeof(x.d)); break;
		case A_B: it->b = x.b; break;
		case A_TAGS: it->ntags = x.ntags; memcpy(it->tags, x.tags, sizeof(x.tags)); break;
		case A_R: memcpy(it->r, x.r, sizeof(x.r)); break;
		default: it->lng = x.lng; break;
		}
	}
}

static void item_json(char *out, size_t cap, int k, const item *it)
{
	size_t n = (size_t)snprintf(out, cap, "{\"kind\":\"Item\",\"key\":\"k%03d\",\"values\":{", k);
	int first = 1;

#define ADD(...)                                                                                   \
	do {                                                                                       \
		n += (size_t)snprintf(out + n, cap - n, "%s", first ? "" : ",");                   \
		first = 0;                                                                         \
		n += (size_t)snprintf(out + n, cap - n, __VA_ARGS__);                              \
	} while (0)
	if (it->has[A_S]) ADD("\"s\":\"%s\"", it->s);
	if (it->has[A_U]) ADD("\"u\":\"%s\"", it->u);
	if (it->has[A_E]) ADD("\"e\":\"%s\"", it->e);
	if (it->has[A_I]) ADD("\"i\":%d", it->i);
	if (it->has[A_J]) ADD("\"j\":%d", it->j);
	if (it->has[A_F]) ADD("\"f\":%.2f", it->f);
	if (it->has[A_D]) ADD("\"d\":\"%s\"", it->d);
	if (it->has[A_B]) ADD("\"b\":%s", it->b ? "true" : "false");
	if (it->has[A_TAGS]) {
		ADD("\"tags\":[");
		for (int t = 0; t < it->ntags; t++)
			n += (size_t)snprintf(out + n, cap - n, "%s\"%s\"", t ? "," : "", it->tags[t]);
		n += (size_t)snprintf(out + n, cap - n, "]");
	}
	if (it->has[A_R]) ADD("\"r\":\"%s\"", it->r);
	if (it->has[A_LONG]) ADD("\"long\":\"%s\"", it->lng);
#undef ADD
	snprintf(out + n, cap - n, "}}");
}

/* ------------------------------------------------------------- filters -- */

/* A filter: a tree the reference evaluates, and its JSON for the engine. */
typedef struct flt {
	int op;		/* 0 leaf, 1 and, 2 or, 3 not */
	int attr, cmp;	/* leaf: attribute, C_* below */
	char sval[400];	/* operand as the item stores it (strings), or a number */
	double num;
	int nin;
	char in[3][400];
	double innum[3];
	int exists;
	struct flt *kids[3];
	int nk;
} flt;

enum { EQ, NE, GT, GTE, LT, LTE, IN, PREFIX, EXISTS, CONTAINS };
static const char *const opn[] = {"eq", "ne", "gt", "gte", "lt", "lte", "in", "prefix", "exists", "contains"};

static int numeric(int a)
{
	return a == A_I || a == A_J || a == A_F || a == A_B;
}

/* An operand drawn from the values the data has. */
static void operand(int a, char *s, size_t cap, double *num)
{
	item t;

	random_item(&t);
	switch (a) {
	case A_S: snprintf(s, cap, "%s", t.s); break;
	case A_U: snprintf(s, cap, "%s", t.u); break;
	case A_E: snprintf(s, cap, "%s", t.e); break;
	case A_I: *num = t.i; break;
	case A_J: *num = t.j; break;
	case A_F: *num = t.f; break;
	case A_D: snprintf(s, cap, "%s", t.d); break;
	case A_B: *num = t.b; break;
	case A_TAGS: snprintf(s, cap, "t%d", rand() % 6); break;
	case A_R: snprintf(s, cap, "%s", t.r); break;
	default: snprintf(s, cap, "%s", t.lng); break;
	}
}

static flt *random_filter(int depth)
{
	flt *f = calloc(1, sizeof(*f));
	int r = rand() % 10;

	if (depth > 0 && r < 3) {
		f->op = 1 + rand() % 3;
		f->nk = f->op == 3 ? 1 : 2 + rand() % 2;
		for (int i = 0; i < f->nk; i++)
			f->kids[i] = random_filter(depth - 1);
		return f;
	}
	if (depth > 0 && r == 3) { /* a lower and an upper bound on one attribute: one interval */
		static const int ranged[] = {A_I, A_J, A_F, A_D, A_S, A_E, A_R};
		int a = ranged[rand() % 7];

		f->op = 1;
		f->nk = 2;
		for (int i = 0; i < 2; i++) {
			flt *k = f->kids[i] = calloc(1, sizeof(*k));

			k->attr = a;
			k->cmp = i ? LT + rand() % 2 : GT + rand() % 2;
			operand(a, k->sval, sizeof(k->sval), &k->num);
		}
		return f;
	}
	f->attr = rand() % N_ATTRS;
	do
		f->cmp = rand() % 10;
	while ((f->cmp == PREFIX && (numeric(f->attr) || f->attr == A_D)) || (f->cmp == CONTAINS && f->attr != A_TAGS) ||
	       (f->attr == A_B && f->cmp >= GT && f->cmp <= LTE));
	if (f->cmp == EXISTS)
		f->exists = rand() % 2;
	else if (f->cmp == IN) {
		f->nin = 1 + rand() % 3;
		for (int i = 0; i < f->nin; i++)
			operand(f->attr, f->in[i], sizeof(f->in[i]), &f->innum[i]);
	} else {
		operand(f->attr, f->sval, sizeof(f->sval), &f->num);
		if (f->cmp == PREFIX)
			f->sval[f->attr == A_LONG ? 200 + rand() % 50 : 1 + rand() % 2] = '\0';
	}
	return f;
}

static void free_filter(flt *f)
{
	for (int i = 0; i < f->nk; i++)
		free_filter(f->kids[i]);
	free(f);
}

static size_t lit(char *o, size_t cap, const flt *f, const char *s, double num)
{
	if (f->attr == A_B)
		return (size_t)snprintf(o, cap, "%s", num ? "true" : "false");
	if (numeric(f->attr))
		return (size_t)snprintf(o, cap, f->attr == A_F ? "%.2f" : "%.0f", num);
	return (size_t)snprintf(o, cap, "\"%s\"", s);
}

static size_t filter_json(char *o, size_t cap, const flt *f)
{
	size_t n = 0;

	if (f->op) {
		n += (size_t)snprintf(o + n, cap - n, f->op == 1 ? "{\"and\":[" : f->op == 2 ? "{\"or\":[" : "{\"not\":");
		for (int i = 0; i < f->nk; i++) {
			if (i)
				n += (size_t)snprintf(o + n, cap - n, ",");
			n += filter_json(o + n, cap - n, f->kids[i]);
		}
		n += (size_t)snprintf(o + n, cap - n, f->op == 3 ? "}" : "]}");
		return n;
	}
	n += (size_t)snprintf(o + n, cap - n, "{\"%s\":{\"%s\":", attrs[f->attr], opn[f->cmp]);
	if (f->cmp == EXISTS)
		n += (size_t)snprintf(o + n, cap - n, "%s", f->exists ? "true" : "false");
	else if (f->cmp == IN) {
		n += (size_t)snprintf(o + n, cap - n, "[");
		for (int i = 0; i < f->nin; i++) {
			if (i)
				n += (size_t)snprintf(o + n, cap - n, ",");
			n += lit(o + n, cap - n, f, f->in[i], f->innum[i]);
		}
		n += (size_t)snprintf(o + n, cap - n, "]");
	} else {
		n += lit(o + n, cap - n, f, f->sval, f->num);
	}
	n += (size_t)snprintf(o + n, cap - n, "}}");
	return n;
}

/* ------------------------------------------------- the reference evaluator -- */

/* A value of the item as a number or a string, and whether it is there. */
static int value_of(const item *it, int a, double *num, const char **s)
{
	if (!it->has[a])
		return 0;
	switch (a) {
	case A_S: *s = it->s; break;
	case A_U: *s = it->u; break;
	case A_E: *s = it->e; break;
	case A_I: *num = it->i; break;
	case A_J: *num = it->j; break;
	case A_F: *num = it->f; break;
	case A_D: *s = it->d; break;
	case A_B: *num = it->b; break;
	case A_R: *s = it->r; break;
	case A_LONG: *s = it->lng; break;
	default: return 0;
	}
	return 1;
}

static int cmp1(int a, double xn, const char *xs, double yn, const char *ys)
{
	if (numeric(a))
		return (xn > yn) - (xn < yn);
	return strcmp(xs, ys) < 0 ? -1 : strcmp(xs, ys) > 0;
}

static int leaf1(const flt *f, double xn, const char *xs)
{
	int c = f->cmp == IN || f->cmp == PREFIX ? 0 : cmp1(f->attr, xn, xs, f->num, f->sval);

	switch (f->cmp) {
	case EQ: case CONTAINS: return c == 0;
	case NE: return c != 0;
	case GT: return c > 0;
	case GTE: return c >= 0;
	case LT: return c < 0;
	case LTE: return c <= 0;
	case PREFIX: return strncmp(xs, f->sval, strlen(f->sval)) == 0;
	case IN:
		for (int i = 0; i < f->nin; i++)
			if (cmp1(f->attr, xn, xs, f->innum[i], f->in[i]) == 0)
				return 1;
		return 0;
	}
	return 0;
}

static int ref_eval(const flt *f, const item *it)
{
	if (f->op == 1) {
		for (int i = 0; i < f->nk; i++)
			if (!ref_eval(f->kids[i], it))
				return 0;
		return 1;
	}
	if (f->op == 2) {
		for (int i = 0; i < f->nk; i++)
			if (ref_eval(f->kids[i], it))
				return 1;
		return 0;
	}
	if (f->op == 3)
		return !ref_eval(f->kids[0], it);
	if (f->cmp == EXISTS)
		return it->has[f->attr] == f->exists;
	if (f->attr == A_TAGS) {
		if (!it->has[A_TAGS])
			return f->cmp == NE;
		if (f->cmp == NE) {
			for (int t = 0; t < it->ntags; t++)
				if (strcmp(it->tags[t], f->sval) == 0)
					return 0;
			return 1;
		}
		for (int t = 0; t < it->ntags; t++)
			if (leaf1(f, 0, it->tags[t]))
				return 1;
		return 0;
	}
	{
		double xn = 0;
		const char *xs = "";

		if (!value_of(it, f->attr, &xn, &xs))
			return f->cmp == NE;
		return leaf1(f, xn, xs);
	}
}

/* ------------------------------------------------------------- the test -- */

static int sort_attr;		/* -1: key */
static const item *sort_items;

static int ref_cmp(const void *x, const void *y)
{
	int a = *(const int *)x, b = *(const int *)y;

	if (sort_attr >= 0) {
		double an = 0, bn = 0;
		const char *as = "", *bs = "";
		int ha = value_of(&sort_items[a], sort_attr, &an, &as);
		int hb = value_of(&sort_items[b], sort_attr, &bn, &bs);

		if (ha != hb)
			return ha ? -1 : 1;
		if (ha) {
			int c = cmp1(sort_attr, an, as, bn, bs);

			if (c)
				return c;
		}
	}
	return (a > b) - (a < b); /* keys are k000..: key order is index order */
}

/* One random query on a view, checked page by page against the reference. */
static int check_query(cairn_store *st, const char *branch, uint64_t at, const item *items,
		       unsigned seed)
{
	static const int sorts[] = {-1, -1, A_S, A_U, A_I, A_J, A_F, A_D, A_E, A_LONG};
	cairn_read_options ro = {0};
	cairn_query_options q;
	cairn_query_result res;
	cairn_record out[25];
	char where[8192], after[512] = "";
	int ref[NREC], nref = 0, got = 0, bad = 0;
	flt *f;
	cairn_txn *t;

	srand(seed);
	f = random_filter(2);
	filter_json(where, sizeof(where), f);
	sort_attr = sorts[rand() % (int)(sizeof(sorts) / sizeof(sorts[0]))];
	for (int k = 0; k < NREC; k++)
		if (items[k].exists && ref_eval(f, &items[k]))
			ref[nref++] = k;
	sort_items = items;
	qsort(ref, (size_t)nref, sizeof(int), ref_cmp);
	ro.domain = "d";
	ro.branch = branch;
	ro.at_revision = at;
	if (cairn_txn_begin(st, &ro, &t)) {
		free_filter(f);
		return 1;
	}
	memset(&q, 0, sizeof(q));
	q.kind = "Item";
	q.where = where;
	q.where_len = strlen(where);
	q.sort = sort_attr >= 0 ? attrs[sort_attr] : NULL;
	q.limit = 1 + (size_t)(rand() % 25);
	for (int pages = 0; pages < 1000; pages++) {
		int rc;

		q.after = *after ? after : NULL;
		rc = cairn_query(t, &q, out, 25, &res);
		if (rc) {
			fprintf(stderr, "    query %s sort %s: %s\n", where, q.sort ? q.sort : "key", cairn_errmsg());
			bad = 1;
			break;
		}
		for (size_t i = 0; i < res.n && !bad; i++, got++) {
			char key[8];

			snprintf(key, sizeof(key), "k%03d", got < nref ? ref[got] : -1);
			if (got >= nref || !test_streq(out[i].key, out[i].key_len, key)) {
				fprintf(stderr, "    %s sort %s limit %zu: answer %d is %.*s, expected %s\n",
					where, q.sort ? q.sort : "key", q.limit, got, (int)out[i].key_len,
					out[i].key, got < nref ? key : "none");
				bad = 1;
			}
		}
		if (bad || !res.next)
			break;
		snprintf(after, sizeof(after), "%s", res.next);
	}
	if (!bad && got != nref) {
		fprintf(stderr, "    %s sort %s: %d answers, expected %d\n", where, q.sort ? q.sort : "key",
			got, nref);
		bad = 1;
	}
	if (!bad) { /* the count agrees */
		uint64_t total = 0;

		if (cairn_query_count(t, "Item", where, strlen(where), NULL, NULL, NULL, &total) ||
		    total != (uint64_t)nref) {
			fprintf(stderr, "    count %s: %llu, expected %d\n", where, (unsigned long long)total, nref);
			bad = 1;
		}
	}
	cairn_txn_end(t);
	free_filter(f);
	return bad;
}

static int commit_items(cairn_store *st, const char *branch, const item *items, const int *which, int n,
			const int *deleted, int nd, uint64_t *rev)
{
	cairn_commit_options co = {0};
	cairn_commit_result res;
	cairn_changeset *cs;
	char line[4096];
	int rc;

	if ((rc = cairn_changeset_new(&cs)))
		return rc;
	for (int i = 0; i < n && !rc; i++) {
		item_json(line, sizeof(line), which[i], &items[which[i]]);
		rc = cairn_changeset_add_json(cs, line, strlen(line));
	}
	for (int i = 0; i < nd && !rc; i++) {
		snprintf(line, sizeof(line), "{\"kind\":\"Item\",\"key\":\"k%03d\",\"op\":\"delete\"}", deleted[i]);
		rc = cairn_changeset_add_json(cs, line, strlen(line));
	}
	co.domain = "d";
	co.branch = branch;
	if (!rc)
		rc = cairn_commit(st, &co, cs, &res);
	cairn_changeset_free(cs);
	if (!rc && rev)
		*rev = res.revision;
	return rc;
}

void test_query_reference(void)
{
	cairn_open_options oo = {.flags = CAIRN_OPEN_CREATE | CAIRN_OPEN_NOSYNC | CAIRN_OPEN_NO_BACKGROUND};
	cairn_commit_options co = {0};
	cairn_store *st = NULL;
	item *main_v1 = calloc(NREC, sizeof(item)), *main_v2 = calloc(NREC, sizeof(item));
	item *branch = calloc(NREC, sizeof(item)), *main_v3 = calloc(NREC, sizeof(item));
	int all[NREC], some[NREC], ns = 0, dels[NREC], nd = 0, bad = 0;
	uint64_t rev1, rev2;

	CHECK(main_v1 && main_v2 && main_v3 && branch);
	srand(777);
	for (int l = 0; l < 4; l++) { /* long strings sharing the index's prefix, and differing after */
		memset(longs[l], 'L', 300);
		longs[l][300] = '\0';
		longs[l][250 + l * 10] = (char)('a' + (3 - l));
		if (l == 3)
			longs[l][100] = '\0'; /* one short */
	}
	OK(cairn_open(test_path("store"), &oo, &st));
	OK(cairn_domain_create(st, "d"));
	co.domain = "d";
	OK(cairn_schema_apply(st, &co, qschema, strlen(qschema), NULL));
	{
		char lines[512] = "";

		for (int o = 0; o < NOTHER; o++)
			snprintf(lines + strlen(lines), sizeof(lines) - strlen(lines),
				 "{\"kind\":\"Other\",\"key\":\"o%d\"}\n", o);
		OK(test_commit_in(st, "d", lines, NULL));
	}
	for (int k = 0; k < NREC; k++) {
		random_item(&main_v1[k]);
		all[k] = k;
	}
	OK(commit_items(st, NULL, main_v1, all, NREC, NULL, 0, &rev1));
	/* Then updates and deletes on main, and other ones on a branch made before them. */
	OK(cairn_branch_create(st, "d", "b", NULL));
	memcpy(main_v2, main_v1, NREC * sizeof(item));
	memcpy(branch, main_v1, NREC * sizeof(item));
	for (int k = 0; k < NREC; k++) {
		int r = rand() % 6;

		if (r == 0) {
			random_item(&main_v2[k]);
			some[ns++] = k;
		} else if (r == 1) {
			main_v2[k].exists = 0;
			dels[nd++] = k;
		} else if (r == 2) {
			mutate_some(&main_v2[k]);
			some[ns++] = k;
		}
	}
	OK(commit_items(st, NULL, main_v2, some, ns, dels, nd, &rev2));
	/* Some changed again, some back to what they were at first, some re-created. */
	memcpy(main_v3, main_v2, NREC * sizeof(item));
	ns = 0;
	for (int k = 0; k < NREC; k++) {
		int r = rand() % 5;

		if (r == 0 && main_v3[k].exists) {
			mutate_some(&main_v3[k]);
			some[ns++] = k;
		} else if (r == 1) {
			main_v3[k] = main_v1[k];
			some[ns++] = k;
		}
	}
	OK(commit_items(st, NULL, main_v3, some, ns, NULL, 0, NULL));
	ns = nd = 0;
	for (int k = 0; k < NREC; k++)
		if (rand() % 4 == 0) {
			if (rand() % 2)
				random_item(&branch[k]);
			else
				mutate_some(&branch[k]);
			some[ns++] = k;
		}
	OK(commit_items(st, "b", branch, some, ns, NULL, 0, NULL));
	/* Twice: as planned, then with a planner that finds every index unselective (the other ways). */
	for (int pass = 0; pass < 2 && !bad; pass++) {
		OK(knob_set("query_small", pass ? 4 : 256, NULL));
		for (unsigned i = 0; i < (getenv("QMANY") ? 5000u : 300u) && !bad; i++) {
			bad |= check_query(st, NULL, 0, main_v3, 1000 + i);
			if (i % 3 == 0)
				bad |= check_query(st, "b", 0, branch, 5000 + i);
			if (i % 3 == 1)
				bad |= check_query(st, NULL, rev1, main_v1, 9000 + i);
			if (i % 3 == 2)
				bad |= check_query(st, NULL, rev2, main_v2, 13000 + i);
		}
	}
	knob_reset();
	CHECK(!bad);
	free(main_v1);
	free(main_v2);
	free(main_v3);
	free(branch);
	cairn_close(st);
}

static size_t count_where(cairn_store *st, const char *where)
{
	cairn_read_options ro = {0};
	cairn_query_options q = {0};
	cairn_query_result res;
	cairn_record out[10];
	cairn_txn *t;

	ro.domain = "d";
	if (cairn_txn_begin(st, &ro, &t))
		return 99;
	q.kind = "Supplier";
	q.where = where;
	q.where_len = strlen(where);
	q.limit = 10;
	res.n = 99;
	if (cairn_query(t, &q, out, 10, &res))
		res.n = 98;
	cairn_txn_end(t);
	return res.n;
}

/*
 * A Version writes attribute entries only for the values its predecessor
 * lacked: a change of other values writes none, and reads, unique checks
 * and compaction rely on the entry of the Version that brought the value.
 */
void test_query_relied_entries(void)
{
	cairn_store *st = test_store();
	cairn_compact_options co = {0};
	cairn_compact_result cr;
	uint64_t before;

	CHECK(st);
	OK(test_commit(st, "{\"kind\":\"Supplier\",\"key\":\"S1\",\"values\":{\"vat\":\"V1\",\"country\":\"DE\"}}", NULL));
	before = test_db_entries(st, "attr");
	/* rating is not indexed: no entry; country and vat are kept: none either. */
	OK(test_commit(st, "{\"kind\":\"Supplier\",\"key\":\"S1\",\"values\":{\"vat\":\"V1\",\"country\":\"DE\",\"rating\":3}}", NULL));
	OK(test_commit(st, "{\"kind\":\"Supplier\",\"key\":\"S1\",\"values\":{\"vat\":\"V1\",\"country\":\"DE\",\"rating\":4}}", NULL));
	CHECK(test_db_entries(st, "attr") == before);
	CHECK(count_where(st, "{\"country\":\"DE\"}") == 1);
	/* The value is still used: the entry of the first Version says so. */
	CHECK_RC(test_commit(st, "{\"kind\":\"Supplier\",\"key\":\"S2\",\"values\":{\"vat\":\"V1\"}}", NULL),
		 CAIRN_EUNIQUE);
	/* DE -> FR -> DE: entries for each value brought, the Record found once. */
	OK(test_commit(st, "{\"kind\":\"Supplier\",\"key\":\"S1\",\"values\":{\"vat\":\"V2\",\"country\":\"FR\"}}", NULL));
	CHECK(count_where(st, "{\"country\":\"DE\"}") == 0);
	CHECK(count_where(st, "{\"country\":\"FR\"}") == 1);
	OK(test_commit(st, "{\"kind\":\"Supplier\",\"key\":\"S2\",\"values\":{\"vat\":\"V1\"}}", NULL));
	OK(test_commit(st, "{\"kind\":\"Supplier\",\"key\":\"S1\",\"values\":{\"vat\":\"V2\",\"country\":\"DE\"}}", NULL));
	OK(test_commit(st, "{\"kind\":\"Supplier\",\"key\":\"S1\",\"values\":{\"vat\":\"V2\",\"country\":\"DE\",\"rating\":5}}", NULL));
	CHECK(count_where(st, "{\"country\":\"DE\"}") == 1);
	CHECK(count_where(st, "{\"country\":{\"in\":[\"DE\",\"FR\"]}}") == 1);
	/* A ref the later Version of a Part relies on still names its Supplier. */
	OK(test_commit(st, "{\"kind\":\"Part\",\"key\":\"P1\",\"values\":{\"sku\":\"K1\",\"supplier\":\"S2\"}}", NULL));
	OK(test_commit(st, "{\"kind\":\"Part\",\"key\":\"P1\",\"values\":{\"sku\":\"K1\",\"supplier\":\"S2\",\"price\":1.5}}", NULL));
	CHECK_RC(test_commit(st, "{\"kind\":\"Supplier\",\"key\":\"S2\",\"op\":\"delete\"}", NULL),
		 CAIRN_EREF);
	/* Compaction keeps the entries later Versions rely on. */
	OK(cairn_compact(st, "d", &co, &cr));
	CHECK(cr.horizon == test_head(st, "d") && cr.versions > 0);
	CHECK(count_where(st, "{\"country\":\"DE\"}") == 1);
	CHECK(count_where(st, "{\"country\":\"FR\"}") == 0);
	CHECK_RC(test_commit(st, "{\"kind\":\"Supplier\",\"key\":\"S3\",\"values\":{\"vat\":\"V2\"}}", NULL),
		 CAIRN_EUNIQUE);
	CHECK_RC(test_commit(st, "{\"kind\":\"Supplier\",\"key\":\"S2\",\"op\":\"delete\"}", NULL),
		 CAIRN_EREF);
	OK(cairn_check(st, "d", NULL, NULL, NULL));
	cairn_close(st);
}
