/*
 * Robustness: out-of-memory at every allocation of a commit leaves the store
 * unchanged, and a writer killed with SIGKILL at random moments (committing,
 * merging, deleting branches) loses no acknowledged commit.
 *
 * The moment of a kill follows the writer's progress, never the clock: the
 * writer reports each step on a pipe (report), the parent kills it once a
 * step chosen at random has been reported (kill_at_step), and what must be
 * in the store afterwards follows from the steps reported, so a slow or
 * loaded machine runs the same test, only slower.
 */
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests.h"
#include "base/knob.h"
#include "base/alloc.h"
#include "base/text.h"
#include "store/store.h"
#include "version/version.h"
#include "index/vector/vindex.h"

static int add(cairn_changeset *cs, const char *line)
{
	return cairn_changeset_add_json(cs, line, strlen(line));
}

void test_oom_commit(void)
{
	cairn_store *st = test_store();
	cairn_changeset *cs;
	cairn_commit_options co = {0};
	cairn_commit_result res;
	char *before, *after;
	uint64_t head;
	int rc = CAIRN_ENOMEM, n, failures = 0;

	CHECK(st);
	OK(test_commit(st, "{\"kind\":\"Supplier\",\"key\":\"S1\",\"values\":{\"vat\":\"1\"}}\n"
			   "{\"kind\":\"Part\",\"key\":\"P0\",\"values\":{\"sku\":\"0\"}}\n"
			   "{\"rel\":\"supplied_by\",\"from\":\"Part:P0\",\"to\":\"Supplier:S1\"}",
		       NULL));
	OK(cairn_changeset_new(&cs));
	OK(add(cs, "{\"kind\":\"Part\",\"key\":\"P1\",\"values\":{\"sku\":\"a\",\"supplier\":\"S1\",\"price\":2.5}}"));
	OK(add(cs, "{\"kind\":\"Part\",\"key\":\"P0\",\"op\":\"patch\",\"values\":{\"status\":\"eol\"}}"));
	OK(add(cs, "{\"rel\":\"supplied_by\",\"from\":\"Part:P1\",\"to\":\"Supplier:S1\",\"values\":{\"w\":1}}"));
	OK(add(cs, "{\"rel\":\"supplied_by\",\"from\":\"Part:P0\",\"to\":\"Supplier:S1\",\"op\":\"unlink\"}"));
	co.domain = "d";
	head = test_head(st, "d");
	before = test_export(st, "d");
	CHECK(before);
	/* Fail the nth allocation (and all after it) until the commit gets through. */
	for (n = 1; rc == CAIRN_ENOMEM && n < 5000; n++) {
		alloc_fail_after(n, 1);
		rc = cairn_commit(st, &co, cs, &res);
		alloc_fail_after(0, 0);
		if (rc != CAIRN_ENOMEM)
			break;
		failures++;
		CHECK(test_head(st, "d") == head);
		after = test_export(st, "d");
		CHECK(after && strcmp(before, after) == 0);
		free(after);
	}
	OK(rc);
	CHECK(failures > 10); /* the commit allocates: the hook did fail it */
	CHECK(res.revision == head + 1);
	OK(cairn_check(st, "d", NULL, NULL, NULL));
	/* Reads under memory pressure fail cleanly too. */
	for (n = 1; n < 50; n++) {
		cairn_read_options ro = {0};
		cairn_txn *t = NULL;
		cairn_record r;

		ro.domain = "d";
		cache_invalidate(st); /* so the schema is loaded again */
		alloc_fail_after(n, 1);
		rc = cairn_txn_begin(st, &ro, &t);
		if (!rc)
			rc = cairn_get(t, "Part", "P1", 2, &r);
		alloc_fail_after(0, 0);
		cairn_txn_end(t);
		CHECK(rc == 0 || rc == CAIRN_ENOMEM);
	}
	free(before);
	cairn_changeset_free(cs);
	cairn_close(st);
}

/*
 * Report the writer's next step, *step, on fd, and count it: steps are
 * numbered 0, 1, 2... in the order the writer makes them. A writer reports
 * a step once it is done (durably, for a commit) unless it says otherwise.
 * Exits the process (status 100) when the parent is gone.
 */
static void report(int fd, uint32_t *step)
{
	if (write(fd, step, sizeof(*step)) != sizeof(*step))
		_exit(100);
	++*step;
}

/*
 * Run child(path, arg, fd) in a process of its own; it reports its steps on
 * fd (report) and never returns. Once step `until` has been reported, wait a
 * random number (below spin) of empty loop turns, which spreads the kill over
 * the step that follows without ever deciding what is checked, kill the
 * child with SIGKILL, reap it, and read the steps it reported before it died.
 * Returns 0 and *last, the last step reported (until or later), or the line
 * that failed: the child ended by itself or reported steps out of order.
 */
static int kill_at_step(void (*child)(const char *path, int arg, int fd), const char *path,
			int arg, uint32_t until, unsigned spin, uint32_t *last)
{
	uint32_t seq, next = 0;
	int fds[2], status, line = 0;
	pid_t pid;

	if (pipe(fds))
		return __LINE__;
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return __LINE__;
	}
	if (pid == 0) {
		close(fds[0]);
		child(path, arg, fds[1]);
		_exit(2);
	}
	close(fds[1]);
	while (next <= until && read(fds[0], &seq, sizeof(seq)) == sizeof(seq) && seq == next)
		next++;
	if (next > until && spin)
		for (volatile unsigned i = (unsigned)rand() % spin; i; i--)
			;
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	if (next <= until)
		line = __LINE__;
	while (!line && read(fds[0], &seq, sizeof(seq)) == sizeof(seq))
		if (seq != next++)
			line = __LINE__;
	close(fds[0]);
	if (!line && (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL))
		line = __LINE__;
	if (line)
		fprintf(stderr, "    the writer reported %u steps of %u, then %s %d\n", next,
			until + 1, WIFSIGNALED(status) ? "died of signal" : "exited with",
			WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	*last = next - 1;
	return line;
}

/* The writer: commit forever; step i: commit i acknowledged. */
static void writer(const char *path, int arg, int fd)
{
	cairn_open_options o = {0};
	cairn_commit_options co = {0};
	cairn_changeset *cs;
	cairn_store *st;
	char line[160];
	uint32_t step = 0;

	(void)arg;
	if (cairn_open(path, &o, &st) || cairn_changeset_new(&cs))
		_exit(3);
	/* Large commits write keys segments, and every third one folds them. */
	st->kseg_min = 50;
	st->kseg_fold = 3;
	co.domain = "d";
	co.prov.actor = "crash-writer";
	for (uint32_t i = 0;; i++) {
		cairn_changeset_clear(cs);
		/*
		 * Every fourth commit is large, so kills also land in long
		 * transactions: c<i>-0 and u1 to u199, which the first one
		 * creates and the others update.
		 */
		for (int j = 0; j < (i % 4 == 3 ? 200 : 1); j++) {
			int n = j ? snprintf(line, sizeof(line),
					     "{\"kind\":\"Plant\",\"key\":\"u%d\",\"values\":{\"city\":\"x%u\"}}",
					     j, i)
				  : snprintf(line, sizeof(line),
					     "{\"kind\":\"Plant\",\"key\":\"c%u-0\",\"values\":{\"city\":\"x%u\"}}",
					     i, i);

			if (cairn_changeset_add_json(cs, line, (size_t)n))
				_exit(5);
		}
		if (cairn_commit(st, &co, cs, NULL))
			_exit(6);
		report(fd, &step);
	}
}

void test_crash_sigkill(void)
{
	cairn_store *st = test_store();
	uint32_t acked_total = 0;
	int rounds = 0;
	char path[512];

	CHECK(st);
	snprintf(path, sizeof(path), "%s", test_path("store"));
	cairn_close(st);
	srand(12345);
	while (acked_total < 220 && rounds < 200) {
		uint32_t last;
		char key[64];

		rounds++;
		/* Killed once commit 0 to 11 is acknowledged: in any of the four kinds. */
		CHECK(kill_at_step(writer, path, 0, (uint32_t)rand() % 12, 1u << 20, &last) == 0);
		/* Every acknowledged commit of this round is there; the store checks clean. */
		{
			cairn_read_options ro = {0};
			cairn_txn *t;
			cairn_record r;

			OK(cairn_open(path, NULL, &st));
			OK(cairn_check(st, "d", NULL, NULL, NULL));
			ro.domain = "d";
			OK(cairn_txn_begin(st, &ro, &t));
			for (uint32_t i = 0; i <= last; i++) {
				snprintf(key, sizeof(key), "c%u-0", i);
				OK(cairn_get(t, "Plant", key, strlen(key), &r));
			}
			/*
			 * The updates of the last large commit acknowledged, or of
			 * the one after it, written but not acknowledged.
			 */
			if (last >= 3) {
				uint32_t l = last - (last + 1) % 4, m;

				OK(cairn_get(t, "Plant", "u5", 2, &r));
				CHECK(sscanf(r.values, "{\"city\":\"x%u\"}", &m) == 1);
				CHECK(m % 4 == 3 && m >= l && m <= last + 4);
			}
			cairn_txn_end(t);
			/* Start the next round from an empty Domain, so keys are fresh. */
			OK(cairn_domain_drop(st, "d"));
			OK(cairn_domain_create(st, "d"));
			{
				cairn_commit_options co = {0};

				co.domain = "d";
				OK(cairn_schema_apply(st, &co, test_schema, strlen(test_schema), NULL));
			}
			cairn_close(st);
		}
		acked_total += last + 1;
	}
	CHECK(acked_total >= 200);
}

/*
 * The merge writer: per round, make a branch, write 150 Records on it and
 * change 50 of main's, merge it into main, delete the branch (cleared by the
 * background thread) and go on. Steps 4i to 4i + 3: branch i made, its
 * commit, its merge, its deletion.
 */
static void merge_writer(const char *path, int round, int fd)
{
	cairn_open_options o = {0}; /* the background thread runs */
	cairn_commit_options co = {0};
	cairn_merge_options mo;
	cairn_changeset *cs;
	cairn_store *st;
	char line[160], name[32];
	uint32_t step = 0;

	if (cairn_open(path, &o, &st) || cairn_changeset_new(&cs))
		_exit(3);
	co.domain = "d";
	co.prov.actor = "crash-merger";
	for (uint32_t i = 0;; i++) {
		snprintf(name, sizeof(name), "r%d-%u", round, i);
		if (cairn_branch_create(st, "d", name, NULL))
			_exit(4);
		report(fd, &step);
		co.branch = name;
		cairn_changeset_clear(cs);
		for (int j = 0; j < 200; j++) {
			int n = j < 150 ? snprintf(line, sizeof(line),
						   "{\"kind\":\"Plant\",\"key\":\"%s-%d\",\"values\":{\"city\":\"%s\"}}",
						   name, j, name)
					: snprintf(line, sizeof(line),
						   "{\"kind\":\"Plant\",\"key\":\"base-%d\",\"values\":{\"city\":\"%s\"}}",
						   j - 150, name);

			if (cairn_changeset_add_json(cs, line, (size_t)n))
				_exit(5);
		}
		if (cairn_commit(st, &co, cs, NULL))
			_exit(6);
		report(fd, &step);
		memset(&mo, 0, sizeof(mo));
		mo.commit.domain = "d";
		mo.commit.prov.actor = "crash-merger";
		mo.source = name;
		if (cairn_merge(st, &mo, NULL, NULL, NULL))
			_exit(7);
		report(fd, &step);
		if (cairn_branch_delete(st, "d", name))
			_exit(9);
		report(fd, &step);
	}
}

/*
 * Kill a writer that merges branches and deletes them, while the
 * background thread clears deleted branches: every acknowledged merge is on
 * main, the store checks clean after each kill, and clearing resumes and
 * finishes after the restart.
 */
void test_crash_merge_delete(void)
{
	cairn_open_options nb = {.flags = CAIRN_OPEN_NO_BACKGROUND};
	cairn_store *st = test_store();
	uint32_t acked_total = 0;
	char path[512], lines[8192];
	int rounds = 0;

	CHECK(st);
	snprintf(path, sizeof(path), "%s", test_path("store"));
	lines[0] = 0;
	for (int j = 0; j < 50; j++)
		snprintf(lines + strlen(lines), sizeof(lines) - strlen(lines),
			 "{\"kind\":\"Plant\",\"key\":\"base-%d\",\"values\":{\"city\":\"start\"}}\n", j);
	OK(test_commit(st, lines, NULL));
	cairn_close(st);
	srand(4242);
	while ((acked_total < 12 || rounds < 8) && rounds < 60) {
		uint32_t last, merged;

		rounds++;
		/*
		 * Killed once merge 0, 1 or 2 is acknowledged, or a step of the
		 * iteration after it: making, committing, merging or deleting.
		 */
		CHECK(kill_at_step(merge_writer, path, rounds, 2 + (uint32_t)rand() % 12, 1u << 22,
				   &last) == 0);
		merged = (last - 2) / 4 + 1; /* merges acknowledged: step 4i + 2 reported */
		OK(cairn_open(path, &nb, &st));
		OK(cairn_check(st, "d", NULL, NULL, NULL));
		{
			int pending; /* a step of clearing left by the killed writer, if any */

			OK(cairn_store_maintain(st, 1, &pending));
		}
		{
			cairn_read_options ro = {0};
			cairn_txn *t;
			cairn_record r;
			char key[64], name[32];

			ro.domain = "d";
			OK(cairn_txn_begin(st, &ro, &t));
			for (uint32_t i = 0; i < merged; i++) {
				snprintf(name, sizeof(name), "r%d-%u", rounds, i);
				snprintf(key, sizeof(key), "%s-149", name);
				OK(cairn_get(t, "Plant", key, strlen(key), &r));
				CHECK(strstr(r.values, name) != NULL);
			}
			/* main saw every merge whole: base-0 and base-49 were changed together. */
			{
				cairn_record a, b;

				OK(cairn_get(t, "Plant", "base-0", 6, &a));
				OK(cairn_get(t, "Plant", "base-49", 7, &b));
				CHECK(a.values_len == b.values_len &&
				      memcmp(a.values, b.values, a.values_len) == 0);
			}
			cairn_txn_end(t);
			/* A deletion acknowledged (step 4i + 3 reported) stays done. */
			for (uint32_t i = 0; 4 * i + 3 <= last; i++) {
				cairn_read_options bo = {0};

				snprintf(name, sizeof(name), "r%d-%u", rounds, i);
				bo.domain = "d";
				bo.branch = name;
				CHECK_RC(cairn_txn_begin(st, &bo, &t), CAIRN_ENOBRANCH);
			}
		}
		cairn_close(st);
		acked_total += merged;
	}
	CHECK(acked_total >= 12);
	/* Clearing of every deleted branch finishes, and the store still checks clean. */
	OK(cairn_open(path, &nb, &st));
	for (int pending = 1; pending;)
		OK(cairn_store_maintain(st, 1000, &pending));
	OK(cairn_check(st, "d", NULL, NULL, NULL));
	cairn_close(st);
}

/*
 * Readers in several threads, and in another process, while one writer
 * commits: every read transaction sees a consistent snapshot (a commit adds
 * a pair of Records at once, so a snapshot never sees an odd count or one
 * Record of a pair without the other), and readers never wait for the writer.
 */
struct reader_arg {
	cairn_store *st;
	volatile int *stop;
	pthread_barrier_t *start; /* passed by every reader and the writer before it commits */
	long reads;
	int bad;
};

static int snapshot_ok(cairn_store *st)
{
	cairn_read_options ro = {0};
	cairn_record recs[CAIRN_MAX_PAGE], r;
	cairn_txn *t;
	uint64_t count;
	size_t n;
	int ok = 1;

	ro.domain = "d";
	if (cairn_txn_begin(st, &ro, &t))
		return 0;
	if (cairn_count(t, "Plant", &count) || count % 2)
		ok = 0;
	if (ok && cairn_page(t, "Plant", NULL, 0, recs, CAIRN_MAX_PAGE, &n))
		ok = 0;
	for (size_t i = 0; ok && i < n; i++) {
		char other[64];

		/* Pairs are "aN" and "bN": each has its twin. */
		snprintf(other, sizeof(other), "%c%.*s", recs[i].key[0] == 'a' ? 'b' : 'a',
			 (int)recs[i].key_len - 1, recs[i].key + 1);
		if (cairn_get(t, "Plant", other, strlen(other), &r))
			ok = 0;
	}
	if (ok && n < CAIRN_MAX_PAGE && n != count)
		ok = 0;
	cairn_txn_end(t);
	return ok;
}

/* Read snapshots from the start of the writes until stop: at least one, whatever the timing. */
static void *reader(void *p)
{
	struct reader_arg *a = p;

	pthread_barrier_wait(a->start);
	do {
		if (!snapshot_ok(a->st))
			a->bad++;
		a->reads++;
	} while (!*a->stop);
	return NULL;
}

/* 1 once the other end of fd is closed (or written to), without waiting. */
static int hung_up(int fd)
{
	struct pollfd p = {fd, POLLIN, 0};

	return poll(&p, 1, 0) == 1;
}

void test_readers_concurrent(void)
{
	cairn_store *st = test_store();
	volatile int stop = 0;
	struct reader_arg args[4];
	pthread_barrier_t start;
	pthread_t th[4];
	char line[256], ready;
	pid_t pid;
	int up[2], down[2], status;
	long child_reads = 0;

	CHECK(st);
	/*
	 * Another process reads the same store (forked with no store open):
	 * from before the first commit (it says so on up) until the writer is
	 * done (it closes down), then it sends the number of its reads.
	 */
	cairn_close(st);
	CHECK(pipe(up) == 0 && pipe(down) == 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		cairn_store *cs = NULL;
		long reads = 0;
		int bad = 0;

		close(up[0]);
		close(down[1]);
		if (cairn_open(test_path("store"), NULL, &cs))
			_exit(3);
		if (write(up[1], "r", 1) != 1)
			_exit(4);
		do {
			bad += !snapshot_ok(cs);
			reads++;
		} while (!hung_up(down[0]));
		cairn_close(cs);
		if (write(up[1], &reads, sizeof(reads)) != sizeof(reads))
			_exit(4);
		_exit(bad ? 5 : 0);
	}
	close(up[1]);
	close(down[0]);
	CHECK(read(up[0], &ready, 1) == 1);
	OK(cairn_open(test_path("store"), NULL, &st));
	pthread_barrier_init(&start, NULL, 5);
	for (int i = 0; i < 4; i++) {
		args[i].st = st;
		args[i].stop = &stop;
		args[i].start = &start;
		args[i].reads = 0;
		args[i].bad = 0;
		CHECK(pthread_create(&th[i], NULL, reader, &args[i]) == 0);
	}
	pthread_barrier_wait(&start);
	for (int i = 0; i < 150; i++) {
		snprintf(line, sizeof(line),
			 "{\"kind\":\"Plant\",\"key\":\"a%d\"}\n{\"kind\":\"Plant\",\"key\":\"b%d\"}", i, i);
		OK(test_commit(st, line, NULL));
	}
	stop = 1;
	close(down[1]);
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		CHECK(args[i].bad == 0);
		CHECK(args[i].reads > 0);
	}
	pthread_barrier_destroy(&start);
	CHECK(read(up[0], &child_reads, sizeof(child_reads)) == sizeof(child_reads));
	close(up[0]);
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK(child_reads > 0);
	CHECK(snapshot_ok(st));
	cairn_close(st);
}

/* Tamper with the stored bytes of a store under the engine's feet. */
enum tamper { T_VERSION_BYTE, T_DROP_KEYS_ENTRY, T_DROP_ADJ_ENTRY, T_REVISION_ACTOR, T_LIVE_BIT,
	      T_COUNT, T_DROP_ATTR_ENTRY };

static int tamper(cairn_store *st, int what)
{
	MDB_txn *txn;
	MDB_cursor *cur;
	MDB_val k, v;
	int db = what == T_VERSION_BYTE	  ? DB_VERSIONS
		 : what == T_DROP_KEYS_ENTRY ? DB_KEYS
		 : what == T_DROP_ADJ_ENTRY  ? DB_ADJ
		 : what == T_DROP_ATTR_ENTRY ? DB_ATTR
		 : what == T_REVISION_ACTOR  ? DB_REVS
		 : what == T_LIVE_BIT	      ? DB_CELLS
					      : DB_CELLS;
	int rc;

	if (store_write_begin(st, &txn))
		return -1;
	if (mdb_cursor_open(txn, st->dbi[db], &cur)) {
		store_write_abort(st, txn);
		return -1;
	}
	rc = mdb_cursor_get(cur, &k, &v, MDB_LAST);
	/* Cells: the live-set chunks have type 1, counts type 2; pick the right one. */
	while (!rc && db == DB_CELLS && ((uint8_t *)k.mv_data)[4] != (what == T_COUNT ? 2 : 1))
		rc = mdb_cursor_get(cur, &k, &v, MDB_PREV);
	if (!rc) {
		uint8_t copy[4096];
		MDB_val nv = {v.mv_size, copy};

		memcpy(copy, v.mv_data, v.mv_size < sizeof(copy) ? v.mv_size : sizeof(copy));
		switch (what) {
		case T_VERSION_BYTE: /* the last byte: lineage of a Record, a title of a Link... */
			copy[v.mv_size - 1] ^= 1;
			rc = mdb_cursor_put(cur, &k, &nv, MDB_CURRENT);
			break;
		case T_DROP_KEYS_ENTRY:
		case T_DROP_ADJ_ENTRY:
		case T_DROP_ATTR_ENTRY:
			rc = mdb_cursor_del(cur, 0);
			break;
		case T_REVISION_ACTOR: /* a byte in the middle: provenance */
			copy[v.mv_size / 2] ^= 0x20;
			rc = mdb_cursor_put(cur, &k, &nv, MDB_CURRENT);
			break;
		case T_LIVE_BIT:
			copy[0] ^= 0x80;
			rc = mdb_cursor_put(cur, &k, &nv, MDB_CURRENT);
			break;
		case T_COUNT:
			copy[7] ^= 1;
			rc = mdb_cursor_put(cur, &k, &nv, MDB_CURRENT);
			break;
		}
	}
	mdb_cursor_close(cur);
	if (rc) {
		store_write_abort(st, txn);
		return -1;
	}
	return store_write_commit(st, txn);
}

static void count_problem(void *ctx, const char *p)
{
	(void)p;
	++*(int *)ctx;
}

void test_check_detects(void)
{
	static const char *const names[] = {"a Version's bytes",       "a keys entry",
					    "an adj entry",	       "a revision's provenance",
					    "a live-set bit",	       "a count",
					    "an attribute entry relied on"};

	for (int what = T_VERSION_BYTE; what <= T_DROP_ATTR_ENTRY; what++) {
		cairn_check_report rep;
		cairn_store *st;
		char cmd[600];
		int problems = 0;

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", test_path("store"));
		CHECK(system(cmd) == 0);
		st = test_store();
		CHECK(st);
		OK(test_commit(st, "{\"kind\":\"Supplier\",\"key\":\"S1\",\"values\":{\"vat\":\"1\",\"country\":\"DE\"}}\n"
				   "{\"kind\":\"Part\",\"key\":\"P1\",\"values\":{\"sku\":\"a\",\"supplier\":\"S1\"}}\n"
				   "{\"rel\":\"supplied_by\",\"from\":\"Part:P1\",\"to\":\"Supplier:S1\"}",
			       NULL));
		OK(test_commit(st, "{\"kind\":\"Plant\",\"key\":\"L1\",\"values\":{\"city\":\"Lyon\"}}", NULL));
		/* P1's entries now stand for its later Version too. */
		OK(test_commit(st, "{\"kind\":\"Part\",\"key\":\"P1\",\"values\":{\"sku\":\"a\",\"supplier\":\"S1\",\"price\":2}}", NULL));
		OK(cairn_check(st, "d", NULL, NULL, NULL));
		if (tamper(st, what)) {
			fprintf(stderr, "    could not tamper with %s\n", names[what]);
			CHECK(0);
		}
		if (cairn_check(st, "d", count_problem, &problems, &rep) != CAIRN_ECORRUPT ||
		    problems == 0 || rep.problems != (uint64_t)problems) {
			fprintf(stderr, "    check missed a change to %s\n", names[what]);
			CHECK(0);
		}
		cairn_close(st);
	}
}

/*
 * The vector writer: commits of 600 Records with 16-dimension vectors, the
 * background catching the index up, and a rebuild after every third commit,
 * until killed. Steps: commit 0, 1, 2, rebuild, commit 3, 4, 5, rebuild...
 */
static void vector_writer(const char *path, int arg, int fd)
{
	cairn_open_options o = {0}; /* the background thread runs */
	cairn_commit_options co = {0};
	cairn_changeset *cs;
	cairn_store *st;
	uint32_t step = 0;
	float v[16];

	(void)arg;
	knob_set("vindex_min", 500, NULL);
	knob_set("vindex_catchup", 300, NULL);
	if (cairn_open(path, &o, &st) || cairn_changeset_new(&cs)) {
		fprintf(stderr, "    writer: open: %s\n", cairn_errmsg());
		_exit(3);
	}
	co.domain = "d";
	co.prov.actor = "crash";
	for (unsigned i = 0;; i++) {
		cairn_changeset_clear(cs);
		for (int j = 0; j < 600; j++) {
			char key[32];
			int n = snprintf(key, sizeof(key), "v%u-%d", i, j);

			for (int d = 0; d < 16; d++)
				v[d] = (float)((i * 7 + (unsigned)j * 13 + (unsigned)d * 3) % 17) - 8;
			if (cairn_changeset_put(cs, "Plant", key, (size_t)n, key, (size_t)n, "{\"city\":\"x\"}", 12) ||
			    cairn_changeset_vector(cs, v, 16))
				_exit(4);
		}
		if (cairn_commit(st, &co, cs, NULL))
			_exit(5);
		report(fd, &step);
		if (i % 3 == 2) {
			cairn_vindex_options vo = {0};

			vo.rebuild = 1;
			if (cairn_vindex_update(st, "d", &vo, NULL))
				_exit(6);
			report(fd, &step);
		}
	}
}

/* Killed while building or catching up its vector index, a store checks clean and searches. */
void test_crash_vindex(void)
{
	cairn_store *st = test_store();
	char path[512];
	int built = 0;

	CHECK(st);
	snprintf(path, sizeof(path), "%s", test_path("store"));
	cairn_close(st);
	srand(777);
	for (int round = 0; round < 8; round++) {
		cairn_read_options ro = {0};
		cairn_vsearch_options vo = {0};
		cairn_vindex_info in;
		cairn_hit h[5];
		cairn_txn *t;
		float q[16] = {1};
		size_t n;
		uint32_t last;

		/*
		 * Killed in commit 0 to 2 or the rebuild after them; in rounds 3 and
		 * 7, once that rebuild (step 3) is acknowledged.
		 */
		CHECK(kill_at_step(vector_writer, path, 0, round % 4 == 3 ? 3 : (uint32_t)rand() % 3,
				   1u << 22, &last) == 0);
		OK(cairn_open(path, NULL, &st));
		OK(cairn_check(st, "d", NULL, NULL, NULL));
		OK(cairn_vindex_stat(st, "d", &in));
		if (last >= 3) /* a rebuild was acknowledged: the index stays */
			CHECK(in.vectors > 0);
		built += in.vectors > 0;
		ro.domain = "d";
		OK(cairn_txn_begin(st, &ro, &t));
		vo.vector = q;
		vo.dim = 16;
		vo.limit = 5;
		OK(cairn_vsearch(t, &vo, h, 5, &n));
		cairn_txn_end(t);
		cairn_close(st);
	}
	CHECK(built >= 2); /* rounds 3 and 7, at least, have an index */
}

static void count_problems(void *ctx, const char *p)
{
	fprintf(stderr, "    %s\n", p);
	++*(int *)ctx;
}

/*
 * kill_at_step(child, path, 0, until, spin, last), then open the store (*st)
 * and check Domain "d": 0, or the line that failed.
 */
static int kill_and_open(void (*child)(const char *, int, int), const char *path, uint32_t until,
			 unsigned spin, uint32_t *last, cairn_store **st)
{
	int line, problems = 0;

	if ((line = kill_at_step(child, path, 0, until, spin, last)))
		return line;
	if (cairn_open(path, NULL, st))
		return __LINE__;
	if (cairn_check(*st, "d", count_problems, &problems, NULL) || problems)
		return __LINE__;
	return 0;
}

static const char *const reembed_words[] = {"government", "people", "world", "said",
					     "steel",	   "year",   "new",   "time"};

/* The title of Plant i: three words the mini model knows. */
static int reembed_title(unsigned i, char *t, size_t cap)
{
	return snprintf(t, cap, "%s %s %s", reembed_words[i % 8], reembed_words[i / 8 % 8],
			reembed_words[i / 64 % 8]);
}

/* The models the re-embedder takes turns with: mini/1 in m1.cemb, mini/2 in m2.cemb. */
static const char *const reembed_models[] = {"mini/1", "mini/2"};

/*
 * The re-embedder: the Domain's vectors by one model, then the other, and
 * commits embedded on write between, the background building the index as
 * it goes, until killed. Steps 3i to 3i + 2: about to re-embed with model
 * i % 2 (reported before it starts), re-embedded, Record w<i> committed.
 */
static void reembed_writer(const char *path, int arg, int fd)
{
	cairn_open_options o = {0};
	cairn_commit_options co = {0};
	cairn_embedder *e[2];
	cairn_changeset *cs;
	cairn_store *st;
	uint32_t step = 0;

	(void)arg;
	knob_set("vindex_min", 500, NULL);
	if (cairn_open(path, &o, &st) || cairn_changeset_new(&cs) ||
	    cairn_embedder_open(test_path("m1.cemb"), &e[0]) ||
	    cairn_embedder_open(test_path("m2.cemb"), &e[1]))
		_exit(3);
	co.domain = "d";
	co.prov.actor = "crash";
	for (unsigned i = 0;; i++) {
		char key[32], title[64];
		int n = snprintf(key, sizeof(key), "w%u", i), tn = reembed_title(i, title, sizeof(title));

		co.embedder = e[i % 2];
		report(fd, &step);
		if (cairn_reembed(st, &co, NULL))
			_exit(4);
		report(fd, &step);
		cairn_changeset_clear(cs);
		if (cairn_changeset_put(cs, "Plant", key, (size_t)n, title, (size_t)tn, NULL, 0) ||
		    cairn_commit(st, &co, cs, NULL))
			_exit(5);
		report(fd, &step);
	}
}

/*
 * Killed while re-embedding, a store has every vector of one model or
 * every vector of the other (the 16-dimension ones it began with, or the
 * model's vectors of each title), checks clean, and searches. Once a
 * re-embedding is acknowledged, the vectors are the model's; after
 * re-embedding i, until re-embedding i + 1 begins, model i % 2's.
 */
void test_crash_reembed(void)
{
	cairn_store *st = test_store();
	cairn_commit_options co = {0};
	cairn_changeset *cs;
	char path[512];
	float v[128];
	int changed = 0, acked = 0;

	CHECK(st);
	if (!st)
		return;
	OK(cairn_embedder_convert("tests/data/glove-mini.json", test_path("m1.cemb"), "mini/1"));
	OK(cairn_embedder_convert("tests/data/glove-mini.json", test_path("m2.cemb"), "mini/2"));
	co.domain = "d";
	co.prov.actor = "test";
	OK(cairn_changeset_new(&cs));
	for (unsigned i = 0; i < 4000; i++) {
		char key[16], title[64];
		int n = snprintf(key, sizeof(key), "p%u", i), tn = reembed_title(i, title, sizeof(title));

		for (int d = 0; d < 16; d++)
			v[d] = (float)((i * 7 + (unsigned)d * 3) % 17) - 8;
		OK(cairn_changeset_put(cs, "Plant", key, (size_t)n, title, (size_t)tn, NULL, 0));
		OK(cairn_changeset_vector(cs, v, 16));
	}
	OK(cairn_commit(st, &co, cs, NULL));
	cairn_changeset_free(cs);
	snprintf(path, sizeof(path), "%s", test_path("store"));
	cairn_close(st);
	srand(4242);
	for (int round = 0; round < 6; round++) {
		cairn_read_options ro = {0};
		cairn_vsearch_options vo = {0};
		cairn_embedder *e;
		cairn_record rec;
		cairn_hit h[5];
		cairn_txn *t;
		char model[64], title[64];
		size_t n, dim, words;
		uint32_t last;

		/*
		 * Round 0 is killed once the first re-embedding (of the 16-dimension
		 * vectors) is about to begin, the others after step 1 to 5.
		 */
		CHECK(kill_and_open(reembed_writer, path, round ? 1 + (uint32_t)rand() % 5 : 0,
				    1u << 24, &last, &st) == 0);
		acked |= last >= 1;
		ro.domain = "d";
		OK(cairn_txn_begin(st, &ro, &t));
		OK(cairn_vector_model(t, model, sizeof(model), &dim));
		CHECK((dim == 16 && !model[0]) ||
		      (dim == 100 && (!strcmp(model, "mini/1") || !strcmp(model, "mini/2"))));
		CHECK(!acked || dim == 100);
		if (last % 3)
			CHECK(strcmp(model, reembed_models[last / 3 % 2]) == 0);
		changed += dim == 100;
		OK(cairn_embedder_open(test_path("m1.cemb"), &e));
		for (unsigned i = 0; i < 4000; i += 397) {
			char key[16];
			float got[128];
			int kn = snprintf(key, sizeof(key), "p%u", i), tn = reembed_title(i, title, sizeof(title));

			OK(cairn_get(t, "Plant", key, (size_t)kn, &rec));
			OK(cairn_vector_get(t, rec.vid, got, 128, &n));
			CHECK(n == dim && rec.vector_dim == dim);
			if (dim == 100) {
				OK(cairn_embed(e, title, (size_t)tn, v, 128, &words));
				CHECK(memcmp(v, got, sizeof(float) * 100) == 0);
			}
		}
		cairn_embedder_close(e);
		vo.vector = v;
		vo.dim = dim;
		vo.limit = 5;
		OK(cairn_vsearch(t, &vo, h, 5, &n));
		CHECK(n == 5);
		cairn_txn_end(t);
		cairn_close(st);
	}
	CHECK(changed >= 5); /* rounds 1 to 5, at least, were re-embedded */
}

/* -------------------------------------------------------- compaction -- */

/*
 * Commit changes to random Suppliers and compact, forever (until killed).
 * Steps 2g - 2 and 2g - 1: generation g (from 1) committed, compacted.
 */
static void compact_writer(const char *path, int arg, int fd)
{
	cairn_open_options o = {0};
	cairn_commit_options co = {0};
	cairn_compact_options cp = {0};
	cairn_changeset *cs;
	cairn_store *st;
	static const char *const countries[] = {"DE", "FR", "US"};
	uint32_t step = 0;

	(void)arg;
	knob_set("vindex_min", 500, NULL);
	if (cairn_open(path, &o, &st) || cairn_changeset_new(&cs)) {
		fprintf(stderr, "    writer: open: %s\n", cairn_errmsg());
		_exit(3);
	}
	co.domain = "d";
	co.prov.actor = "crash";
	for (unsigned g = 1;; g++) {
		cairn_commit_result res;
		float v[8];

		cairn_changeset_clear(cs);
		for (int j = 0; j < 300; j++) {
			unsigned i = (unsigned)rand() % 2000;
			char key[16], title[48], vals[64];
			int kn = snprintf(key, sizeof(key), "s%u", i);
			int tn = snprintf(title, sizeof(title), "supplier %u generation %u", i, g);
			int vn = snprintf(vals, sizeof(vals), "{\"country\":\"%s\",\"vat\":\"V%u\"}",
					  countries[(i + g) % 3], i);

			for (int d = 0; d < 8; d++)
				v[d] = (float)((i + g * (unsigned)d) % 13) - 6;
			if (cairn_changeset_put(cs, "Supplier", key, (size_t)kn, title, (size_t)tn, vals,
						(size_t)vn) ||
			    cairn_changeset_vector(cs, v, 8))
				_exit(4);
		}
		if (cairn_commit(st, &co, cs, &res))
			_exit(5);
		report(fd, &step);
		cp.horizon = res.revision - (g % 3);
		if (cairn_compact(st, "d", &cp, NULL))
			_exit(6);
		report(fd, &step);
	}
}

/*
 * Killed while compacting (and committing, and building the vector index in
 * the background), a store checks clean, and from its horizon on a query by
 * the attribute index finds exactly the Records whose Versions have the
 * value; a compaction again finishes the work.
 */
void test_crash_compact(void)
{
	cairn_store *st = test_store();
	cairn_commit_options co = {0};
	cairn_changeset *cs;
	char path[512];
	float v[8];
	int compacted = 0;

	CHECK(st);
	if (!st)
		return;
	co.domain = "d";
	co.prov.actor = "test";
	OK(cairn_changeset_new(&cs));
	for (unsigned i = 0; i < 2000; i++) {
		char key[16], vals[64];
		int n = snprintf(key, sizeof(key), "s%u", i);
		int vn = snprintf(vals, sizeof(vals), "{\"country\":\"DE\",\"vat\":\"V%u\"}", i);

		for (int d = 0; d < 8; d++)
			v[d] = (float)((i * 7 + (unsigned)d * 3) % 17) - 8;
		OK(cairn_changeset_put(cs, "Supplier", key, (size_t)n, "supplier", 8, vals, (size_t)vn));
		OK(cairn_changeset_vector(cs, v, 8));
	}
	OK(cairn_commit(st, &co, cs, NULL));
	cairn_changeset_free(cs);
	snprintf(path, sizeof(path), "%s", test_path("store"));
	cairn_close(st);
	srand(777);
	for (int round = 0; round < 5; round++) {
		cairn_compact_options cp = {0};
		cairn_compact_result r;
		uint64_t h = 0, last;
		uint32_t step;
		int problems = 0;

		/* Killed in a compaction (after an even step) or a commit (after an odd one). */
		CHECK(kill_and_open(compact_writer, path, 1 + (uint32_t)rand() % 7, 1u << 22, &step,
				    &st) == 0);
		CHECK((h = test_horizon(st, "d")) != UINT64_MAX);
		/* A compaction was acknowledged (step 1): to revision 2 at least. */
		CHECK(h > 1);
		compacted += h > 1;
		last = test_head(st, "d");
		for (uint64_t at = h ? h : 1; at <= last; at += (last - at) / 2 + 1) {
			cairn_read_options ro = {0};
			cairn_query_options q = {0};
			cairn_query_result qr;
			cairn_record recs[1000];
			cairn_txn *t;
			uint64_t by_index = 0, by_scan = 0;
			const char *after = NULL;

			ro.domain = "d";
			ro.at_revision = at;
			OK(cairn_txn_begin(st, &ro, &t));
			OK(cairn_query_count(t, "Supplier", "{\"country\":\"FR\"}", 16, NULL, NULL,
					     NULL, &by_index));
			q.kind = "Supplier";
			q.limit = 1000;
			do { /* every Record, the filter applied to its Version */
				q.after = after;
				OK(cairn_query(t, &q, recs, 1000, &qr));
				for (size_t i = 0; i < qr.n; i++)
					by_scan += strstr(recs[i].values, "\"country\":\"FR\"") != NULL;
				after = qr.next;
			} while (after);
			cairn_txn_end(t);
			CHECK(by_index == by_scan);
		}
		cp.horizon = h ? h : 1;
		OK(cairn_compact(st, "d", &cp, &r));
		CHECK(r.horizon == cp.horizon);
		OK(cairn_check(st, "d", count_problems, &problems, NULL));
		CHECK(problems == 0);
		cairn_close(st);
	}
	CHECK(compacted == 5);
}
