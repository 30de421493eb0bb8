/*
 * A randomized reference test of versioning: commits, branch creation,
 * three-way merges (with every kind of resolution) and branch deletion run
 * against both the engine and a small in-memory model, and every live
 * branch is read at every revision of the Domain and compared with the
 * model's state there. The model keeps a full snapshot per commit and
 * implements the merge rules of docs/api.md independently of the engine.
 */
#include <stdlib.h>

#include "tests.h"
#include "version/version.h"

#define NK 12		/* Records n0..n11 */
#define NA 4		/* n0..n3 are never deleted: Links join them */
#define NL (NA * NA)	/* Links r(ni -> nj) */
#define MAXB 64		/* branches ever created */
#define MAXC 400	/* commits per branch */
#define INF UINT64_MAX

typedef struct rstate {
	signed char ex, title, x, y; /* title: -1 only when absent; x, y: -1 absent */
} rstate;

typedef struct state {
	rstate r[NK];
	signed char l[NL]; /* -1: no Link, else its value w */
} state;

typedef struct mbranch {
	int live;
	char name[16];
	int parent;
	uint64_t fork;
	int n;
	uint64_t rev[MAXC];
	state snap[MAXC];
	state cur;
} mbranch;

static const char model_schema[] =
	"{\"kinds\":[{\"name\":\"N\",\"attributes\":[{\"name\":\"x\",\"type\":\"int\"},"
	"{\"name\":\"y\",\"type\":\"int\"}]}],"
	"\"relations\":[{\"name\":\"r\",\"from\":\"N\",\"to\":\"N\"}]}";

static mbranch *B;
static int nb;
static uint64_t horizon; /* the Domain's compaction horizon */
static uint64_t marker[MAXB][MAXB]; /* [target][source]: the source head at their last merge */
static uint64_t last_rev;

static uint64_t head(int b)
{
	return B[b].n ? B[b].rev[B[b].n - 1] : B[b].fork;
}

/* The model's state of branch b as of revision rev. */
static const state *state_at(int b, uint64_t rev)
{
	static const state empty = {
		.r = {{0, -1, -1, -1}, {0, -1, -1, -1}, {0, -1, -1, -1}, {0, -1, -1, -1},
		      {0, -1, -1, -1}, {0, -1, -1, -1}, {0, -1, -1, -1}, {0, -1, -1, -1},
		      {0, -1, -1, -1}, {0, -1, -1, -1}, {0, -1, -1, -1}, {0, -1, -1, -1}},
		.l = {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1},
	};

	for (int i = B[b].n - 1; i >= 0; i--)
		if (B[b].rev[i] <= rev)
			return &B[b].snap[i];
	if (B[b].parent < 0)
		return &empty;
	return state_at(B[b].parent, rev < B[b].fork ? rev : B[b].fork);
}

static int rs_eq(const rstate *a, const rstate *b)
{
	return a->ex == b->ex && (!a->ex || (a->title == b->title && a->x == b->x && a->y == b->y));
}

/* ----------------------------------------------------------- the engine side -- */

static int commit_lines(cairn_store *st, int b, const char *lines, uint64_t *rev)
{
	cairn_commit_options co = {0};
	cairn_commit_result res;
	cairn_changeset *cs;
	const char *p = lines;
	int rc;

	if ((rc = cairn_changeset_new(&cs)))
		return rc;
	while (*p && !rc) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);

		rc = cairn_changeset_add_json(cs, p, n);
		p += n + (nl ? 1 : 0);
	}
	co.domain = "t";
	co.branch = B[b].name;
	co.prov.actor = "model";
	if (!rc)
		rc = cairn_commit(st, &co, cs, &res);
	cairn_changeset_free(cs);
	if (!rc)
		*rev = res.revision;
	return rc;
}

static void record_json(char *out, size_t cap, int k, const rstate *r)
{
	char v[64] = "{";

	if (r->x >= 0)
		snprintf(v + strlen(v), sizeof(v) - strlen(v), "\"x\":%d", r->x);
	if (r->y >= 0)
		snprintf(v + strlen(v), sizeof(v) - strlen(v), "%s\"y\":%d", r->x >= 0 ? "," : "",
			 r->y);
	strcat(v, "}");
	if (r->title > 0)
		snprintf(out, cap, "{\"kind\":\"N\",\"key\":\"n%d\",\"title\":\"t%d\",\"values\":%s}\n",
			 k, r->title, v);
	else
		snprintf(out, cap, "{\"kind\":\"N\",\"key\":\"n%d\",\"values\":%s}\n", k, v);
}

/* Compare branch b of the engine at revision rev with the model. Returns 0 or a line number. */
static int compare(cairn_store *st, int b, uint64_t rev)
{
	const state *s = state_at(b, rev);
	cairn_read_options ro = {0};
	cairn_txn *t;
	int bad = 0;

	ro.domain = "t";
	ro.branch = B[b].name;
	ro.at_revision = rev;
	if (rev < horizon && rev < head(b)) { /* compacted away, unless the branch's head */
		if (cairn_txn_begin(st, &ro, &t) != CAIRN_ECOMPACTED)
			return __LINE__;
		return 0;
	}
	if (cairn_txn_begin(st, &ro, &t))
		return __LINE__;
	for (int k = 0; k < NK && !bad; k++) {
		cairn_record r;
		char key[16], want[160], got[160];
		int rc;

		snprintf(key, sizeof(key), "n%d", k);
		rc = cairn_get(t, "N", key, strlen(key), &r);
		if (!s->r[k].ex) {
			bad = rc == CAIRN_ENOTFOUND ? 0 : __LINE__;
			continue;
		}
		if (rc) {
			bad = __LINE__;
			break;
		}
		record_json(want, sizeof(want), k, &s->r[k]);
		if (r.title_len)
			snprintf(got, sizeof(got),
				 "{\"kind\":\"N\",\"key\":\"n%d\",\"title\":\"%.*s\",\"values\":%.*s}\n", k,
				 (int)r.title_len, r.title, (int)r.values_len, r.values);
		else
			snprintf(got, sizeof(got), "{\"kind\":\"N\",\"key\":\"n%d\",\"values\":%.*s}\n",
				 k, (int)r.values_len, r.values);
		if (strcmp(want, got) != 0) {
			fprintf(stderr, "    %s at %llu: want %s    got %s", B[b].name,
				(unsigned long long)rev, want, got);
			bad = __LINE__;
		}
	}
	{
		uint64_t n = 0, want = 0;

		for (int k = 0; k < NK; k++)
			want += s->r[k].ex;
		if (cairn_count(t, "N", &n) || n != want) {
			fprintf(stderr, "    %s at %llu: count %llu, want %llu\n", B[b].name,
				(unsigned long long)rev, (unsigned long long)n, (unsigned long long)want);
			bad = __LINE__;
		}
	}
	for (int i = 0; i < NA && !bad; i++) {
		cairn_link_cursor cur;
		cairn_link out[NA + 1];
		char key[16];
		size_t n;
		int expect = 0, rc;

		memset(&cur, 0, sizeof(cur));
		snprintf(key, sizeof(key), "n%d", i);
		rc = cairn_links(t, "N", key, strlen(key), CAIRN_OUT, "r", &cur, out, NA + 1, &n);
		if (!s->r[i].ex) { /* before the anchors were made */
			bad = rc == CAIRN_ENOTFOUND ? 0 : __LINE__;
			continue;
		}
		if (rc) {
			bad = __LINE__;
			break;
		}
		for (int j = 0; j < NA; j++)
			expect += s->l[i * NA + j] >= 0;
		if ((int)n != expect) {
			fprintf(stderr, "    %s at %llu: n%d has %zu Links, want %d\n", B[b].name,
				(unsigned long long)rev, i, n, expect);
			bad = __LINE__;
		}
		for (size_t m = 0; m < n && !bad; m++) {
			int j = out[m].to_key[1] - '0';
			char w[16];

			snprintf(w, sizeof(w), "{\"w\":%d}", s->l[i * NA + j]);
			if (j < 0 || j >= NA || s->l[i * NA + j] < 0 ||
			    !test_streq(out[m].values, out[m].values_len, w))
				bad = __LINE__;
		}
	}
	cairn_txn_end(t);
	return bad;
}

/* Every live branch at every revision; deleted ones are gone. */
static int compare_all(cairn_store *st)
{
	for (int b = 0; b < nb; b++) {
		if (!B[b].live) {
			cairn_read_options ro = {0};
			cairn_txn *t;
			int rc;

			ro.domain = "t";
			ro.branch = B[b].name;
			rc = cairn_txn_begin(st, &ro, &t);
			if (rc == 0)
				cairn_txn_end(t);
			/* The name may have been taken again by a later branch. */
			for (int c = b + 1; c < nb && rc == 0; c++)
				if (B[c].live && strcmp(B[c].name, B[b].name) == 0)
					rc = CAIRN_ENOBRANCH;
			if (rc != CAIRN_ENOBRANCH)
				return __LINE__;
			continue;
		}
		for (uint64_t r = 1; r <= last_rev; r++) {
			int line = compare(st, b, r);

			if (line)
				return line;
		}
	}
	return 0;
}

/* ------------------------------------------------------------ the model's merge -- */

struct mres {
	state merged;
	int items, conflicts, unresolved;
};

/* A three-way merge of one value; *conflict is set when both sides changed it differently. */
static int merge3(int b, int o, int t, int resolve, int *conflicts, int *unresolved)
{
	if (o == t)
		return o;
	if (o == b)
		return t;
	if (t == b)
		return o;
	(*conflicts)++;
	if (resolve == CAIRN_RESOLVE_THEIRS)
		return t;
	if (resolve == CAIRN_RESOLVE_NONE)
		(*unresolved)++;
	return o;
}

static void merge_record(const rstate *b, const rstate *o, const rstate *t, int resolve,
			 rstate *out, struct mres *m)
{
	int ochg = !rs_eq(b, o), tchg = !rs_eq(b, t), ex = o->ex;

	*out = *o;
	if (!ochg && !tchg)
		return;
	m->items++;
	if (b->ex != o->ex || b->ex != t->ex) {
		int force = ochg && tchg && o->ex != t->ex;

		if (force) {
			m->conflicts++;
			if (resolve == CAIRN_RESOLVE_NONE) {
				m->unresolved++;
				return;
			}
			ex = resolve == CAIRN_RESOLVE_OURS ? o->ex : t->ex;
			*out = ex ? (o->ex ? *o : *t) : (rstate){0, -1, -1, -1};
			return;
		}
		ex = merge3(b->ex, o->ex, t->ex, resolve, &m->conflicts, &m->unresolved);
		if (!ex) {
			*out = (rstate){0, -1, -1, -1};
			return;
		}
	}
	out->ex = 1;
	out->title = (signed char)merge3(b->ex ? b->title : -1, o->ex ? o->title : -1,
					 t->ex ? t->title : -1, resolve, &m->conflicts,
					 &m->unresolved);
	if (out->title < 0)
		out->title = 0;
	out->x = (signed char)merge3(b->ex ? b->x : -1, o->ex ? o->x : -1, t->ex ? t->x : -1,
				     resolve, &m->conflicts, &m->unresolved);
	out->y = (signed char)merge3(b->ex ? b->y : -1, o->ex ? o->y : -1, t->ex ? t->y : -1,
				     resolve, &m->conflicts, &m->unresolved);
}

/* The base the engine uses: the lowest shared branch, or a later merge between the two. */
static const state *merge_base(int o, int t)
{
	uint64_t best = 0;
	const state *base = NULL;

	for (int bt = t; bt >= 0 && !base; bt = B[bt].parent) {
		uint64_t lt = INF;

		/* The limit of a level is the fork of the branch below it. */
		for (int c = t; c != bt; c = B[c].parent)
			lt = B[c].fork < lt ? B[c].fork : lt;
		for (int bo = o; bo >= 0; bo = B[bo].parent) {
			uint64_t lo = INF;

			if (bo != bt)
				continue;
			for (int c = o; c != bo; c = B[c].parent)
				lo = B[c].fork < lo ? B[c].fork : lo;
			best = lt < lo ? lt : lo;
			base = state_at(bt, best);
			break;
		}
	}
	if (marker[o][t] > best) {
		best = marker[o][t];
		base = state_at(t, best);
	}
	if (marker[t][o] > best) {
		best = marker[t][o];
		base = state_at(o, best);
	}
	return base;
}

static void model_merge(int o, int t, int resolve, struct mres *m)
{
	const state *b = merge_base(o, t), *os = &B[o].cur, *ts = &B[t].cur;

	memset(m, 0, sizeof(*m));
	for (int k = 0; k < NK; k++)
		merge_record(&b->r[k], &os->r[k], &ts->r[k], resolve, &m->merged.r[k], m);
	for (int l = 0; l < NL; l++) {
		m->merged.l[l] = os->l[l];
		if (b->l[l] == os->l[l] && b->l[l] == ts->l[l])
			continue;
		m->items++;
		m->merged.l[l] = (signed char)merge3(b->l[l], os->l[l], ts->l[l], resolve,
						     &m->conflicts, &m->unresolved);
	}
}

static int state_eq(const state *a, const state *b)
{
	for (int k = 0; k < NK; k++)
		if (!rs_eq(&a->r[k], &b->r[k]))
			return 0;
	return memcmp(a->l, b->l, NL) == 0;
}

static void push(int b, uint64_t rev)
{
	B[b].rev[B[b].n] = rev;
	B[b].snap[B[b].n++] = B[b].cur;
	last_rev = rev;
}

static int live_children(int b)
{
	for (int c = 0; c < nb; c++)
		if (B[c].live && B[c].parent == b)
			return 1;
	return 0;
}

static int pick_live(void)
{
	int b;

	do
		b = rand() % nb;
	while (!B[b].live);
	return b;
}

/* ---------------------------------------------------------------------- test -- */

static int item_count(void *ctx, const cairn_change_item *it)
{
	(void)it;
	(*(int *)ctx)++;
	return 0;
}

/*
 * Compact at a random horizon (never lower than the last), and check that
 * what time travel no longer reaches is refused.
 */
static void print_problem(void *ctx, const char *problem)
{
	(void)ctx;
	fprintf(stderr, "    check: %s\n", problem);
}

static void compact_some(cairn_store *st)
{
	cairn_compact_options o = {.horizon = 1 + (uint64_t)rand() % last_rev};
	cairn_compact_result r;
	cairn_read_options ro = {0};
	cairn_txn *t;
	int n = 0;

	OK(cairn_compact(st, "t", &o, &r));
	CHECK(r.horizon == (o.horizon > horizon ? o.horizon : horizon));
	horizon = r.horizon;
	ro.domain = "t";
	OK(cairn_txn_begin(st, &ro, &t));
	if (horizon > 1) {
		CHECK_RC(cairn_revision_changes(t, horizon - 1, item_count, &n), CAIRN_ECOMPACTED);
		if (head(0) > horizon)
			CHECK_RC(cairn_diff_revisions(t, horizon - 1, head(0), item_count, &n),
				 CAIRN_ECOMPACTED);
	}
	if (head(0) > horizon)
		OK(cairn_diff_revisions(t, horizon, head(0), item_count, &n));
	cairn_txn_end(t);
	n = compare_all(st);
	if (n)
		fprintf(stderr, "    after a compaction to %llu: mismatch at line %d\n",
			(unsigned long long)horizon, n);
	CHECK(n == 0);
	OK(cairn_check(st, "t", print_problem, NULL, NULL));
}

static void run_reference(int compact, int kseg)
{
	cairn_open_options oo = {.flags = CAIRN_OPEN_NOSYNC | CAIRN_OPEN_NO_BACKGROUND};
	cairn_commit_options co = {0};
	cairn_store *st = test_store();
	char lines[2048];
	uint64_t rev;
	int line, merges = 0, conflicted = 0, deletes = 0, named = 0;

	CHECK(st);
	if (kseg) { /* every commit's keys entries of known Records as a segment, folded often */
		st->kseg_min = 1;
		st->kseg_fold = 5;
	}
	B = calloc(MAXB, sizeof(*B));
	CHECK(B);
	srand(20261130);
	OK(cairn_domain_create(st, "t"));
	co.domain = "t";
	OK(cairn_schema_apply(st, &co, model_schema, strlen(model_schema), NULL));
	nb = 1;
	B[0].live = 1;
	B[0].parent = -1;
	strcpy(B[0].name, "main");
	for (int k = 0; k < NK; k++)
		B[0].cur.r[k] = (rstate){0, -1, -1, -1};
	memset(B[0].cur.l, -1, NL);
	lines[0] = 0;
	for (int k = 0; k < NA; k++) {
		B[0].cur.r[k] = (rstate){1, 0, k, -1};
		record_json(lines + strlen(lines), sizeof(lines) - strlen(lines), k, &B[0].cur.r[k]);
	}
	OK(commit_lines(st, 0, lines, &rev));
	push(0, rev);

	for (int step = 0; step < 1500; step++) {
		int op = rand() % 100;

		if (op < 55) { /* a commit of 1 to 4 changes to distinct Records and Links */
			int b = pick_live(), n = 1 + rand() % 4, used[NK + NL] = {0}, changed = 0;

			lines[0] = 0;
			for (int c = 0; c < n; c++) {
				int id = rand() % (NK + NL);
				char *p = lines + strlen(lines);
				size_t cap = sizeof(lines) - strlen(lines);

				if (used[id]++)
					continue;
				if (id < NK) {
					rstate *r = &B[b].cur.r[id];

					if (r->ex && id >= NA && rand() % 3 == 0) {
						snprintf(p, cap,
							 "{\"kind\":\"N\",\"key\":\"n%d\",\"op\":\"delete\"}\n",
							 id);
						*r = (rstate){0, -1, -1, -1};
						changed = 1;
					} else {
						rstate was = *r;

						*r = (rstate){1, (signed char)(rand() % 3),
							      (signed char)(rand() % 5 - 1),
							      (signed char)(rand() % 5 - 1)};
						record_json(p, cap, id, r);
						changed |= memcmp(&was, r, sizeof(was)) != 0;
					}
				} else {
					int l = id - NK;
					signed char *w = &B[b].cur.l[l];

					if (*w >= 0 && rand() % 3 == 0) {
						snprintf(p, cap,
							 "{\"rel\":\"r\",\"from\":\"N:n%d\",\"to\":\"N:n%d\","
							 "\"op\":\"unlink\"}\n",
							 l / NA, l % NA);
						*w = -1;
						changed = 1;
					} else {
						signed char was = *w;

						*w = (signed char)(rand() % 3);
						changed |= was != *w;
						snprintf(p, cap,
							 "{\"rel\":\"r\",\"from\":\"N:n%d\",\"to\":\"N:n%d\","
							 "\"values\":{\"w\":%d}}\n",
							 l / NA, l % NA, *w);
					}
				}
			}
			OK(commit_lines(st, b, lines, &rev));
			if (changed) {
				CHECK(rev == last_rev + 1);
				CHECK(B[b].n < MAXC);
				push(b, rev);
			} else { /* what was there already: no revision, the branch's head */
				CHECK(rev == B[b].rev[B[b].n - 1]);
			}
		} else if (op < 65) { /* a branch */
			int from = pick_live(), live = 0;

			for (int c = 0; c < nb; c++)
				live += B[c].live;
			if (nb == MAXB || live >= 7)
				continue;
			/* Names are sometimes reused after a delete. */
			snprintf(B[nb].name, sizeof(B[nb].name), "b%d", named++ % 12);
			for (int c = 0; c < nb; c++)
				if (B[c].live && strcmp(B[c].name, B[nb].name) == 0)
					snprintf(B[nb].name, sizeof(B[nb].name), "c%d", named);
			OK(cairn_branch_create(st, "t", B[nb].name, B[from].name));
			B[nb].live = 1;
			B[nb].parent = from;
			B[nb].fork = head(from);
			B[nb].cur = B[from].cur;
			nb++;
		} else if (op < 87) { /* a merge, or a diff and then a merge */
			int o = pick_live(), t = pick_live(), resolve = rand() % 3, seen = 0;
			cairn_merge_options mo;
			cairn_merge_result mr;
			struct mres m;

			if (o == t)
				continue;
			model_merge(o, t, resolve, &m);
			OK(cairn_branch_diff(st, "t", B[o].name, B[t].name, item_count, &seen));
			if (seen != m.items)
				fprintf(stderr, "    diff %s %s: %d items, model %d\n", B[o].name,
					B[t].name, seen, m.items);
			CHECK(seen == m.items);
			memset(&mo, 0, sizeof(mo));
			memset(&mr, 0, sizeof(mr));
			mo.commit.domain = "t";
			mo.commit.branch = B[o].name;
			mo.commit.prov.actor = "merger";
			mo.source = B[t].name;
			mo.resolve = resolve;
			if (m.unresolved) {
				CHECK_RC(cairn_merge(st, &mo, NULL, NULL, &mr), CAIRN_EMERGE);
				conflicted++;
				continue;
			}
			OK(cairn_merge(st, &mo, NULL, NULL, &mr));
			CHECK((int)mr.items == m.items);
			CHECK((int)mr.conflicts == m.conflicts);
			marker[o][t] = head(t);
			if (state_eq(&m.merged, &B[o].cur)) {
				CHECK(mr.revision == 0);
			} else {
				CHECK(mr.revision == last_rev + 1);
				B[o].cur = m.merged;
				push(o, mr.revision);
			}
			merges++;
		} else if (op < 93) { /* delete a branch */
			int b = pick_live();

			if (b == 0)
				continue;
			if (live_children(b)) {
				CHECK_RC(cairn_branch_delete(st, "t", B[b].name), CAIRN_EINVAL);
				continue;
			}
			OK(cairn_branch_delete(st, "t", B[b].name));
			B[b].live = 0;
			deletes++;
		} else if (compact && op < 95) { /* compaction */
			compact_some(st);
		} else if (op < 97) { /* some background clearing */
			int pending;

			OK(cairn_store_maintain(st, (unsigned)(1 + rand() % 50), &pending));
		} else { /* reopen */
			cairn_close(st);
			OK(cairn_open(test_path("store"), &oo, &st));
			if (kseg) {
				st->kseg_min = 1;
				st->kseg_fold = 5;
			}
		}
		if (step % 500 == 499 && (line = compare_all(st)) != 0) {
			fprintf(stderr, "    mismatch found at line %d after step %d\n", line, step);
			CHECK(0);
		}
	}
	line = compare_all(st);
	if (line)
		fprintf(stderr, "    mismatch found at line %d\n", line);
	CHECK(line == 0);
	/* Finish the clearing: nothing the live branches see changes, and the store checks clean. */
	for (int pending = 1; pending;)
		OK(cairn_store_maintain(st, 1000, &pending));
	CHECK(compare_all(st) == 0);
	OK(cairn_check(st, "t", NULL, NULL, NULL));
	CHECK(merges >= 10 && conflicted >= 3 && deletes >= 3);
	if (compact) { /* a last one, up to the latest revision */
		cairn_compact_options o = {.horizon = last_rev};
		cairn_compact_result r;

		OK(cairn_compact(st, "t", &o, &r));
		CHECK(r.horizon == last_rev && r.versions > 0 && r.cells > 0);
		horizon = r.horizon;
		CHECK(compare_all(st) == 0);
		OK(cairn_check(st, "t", NULL, NULL, NULL));
	}
	cairn_close(st);
	free(B);
	B = NULL;
	nb = 0;
	horizon = 0;
	last_rev = 0;
	memset(marker, 0, sizeof(marker));
}

void test_timetravel_reference(void)
{
	run_reference(0, 0);
}

/* The same with compactions among the steps: every read from the horizon on is unchanged. */
void test_timetravel_compact(void)
{
	run_reference(1, 0);
}

/*
 * The same with keys segments (version/kseg.c): every commit writes its keys
 * entries of Records its branch had as a segment, five segments are folded
 * into keys, and a compaction or a branch's clearing folds them too.
 */
void test_timetravel_kseg(void)
{
	run_reference(1, 1);
}
