/*
 * Robustness: out-of-memory at every allocation of a commit leaves the store
 * unchanged, and a writer killed with SIGKILL at random moments (committing,
 * merging, deleting branches) loses no acknowledged commit.
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests.h"
#include "base/alloc.h"
#include "base/text.h"
#include "store/store.h"
#include "version/version.h"
#include "index/vector/vindex.h"

static int add(cairn_changeset *cs, const char *line)
{
	return cairn_cs_add_json(cs, line, strlen(line));
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
		rc = cairn_read_begin(st, &ro, &t);
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

/* The writer: commit forever, reporting each acknowledged commit on fd. */
static void writer(const char *path, int fd)
{
	cairn_open_options o = {0};
	cairn_commit_options co = {0};
	cairn_changeset *cs;
	cairn_store *st;
	char line[160];

	if (cairn_open(path, &o, &st) || cairn_changeset_new(&cs))
		_exit(3);
	/* Large commits write keys segments, and every third one folds them. */
	st->kseg_min = 50;
	st->kseg_fold = 3;
	co.domain = "d";
	co.prov.actor = "crash-writer";
	for (uint32_t i = 0;; i++) {
		uint32_t seq;

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

			if (cairn_cs_add_json(cs, line, (size_t)n))
				_exit(5);
		}
		if (cairn_commit(st, &co, cs, NULL))
			_exit(6);
		seq = i;
		if (write(fd, &seq, sizeof(seq)) != sizeof(seq))
			_exit(7);
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
		int fds[2], status;
		pid_t pid;
		uint32_t seq, last = UINT32_MAX;
		char key[64];

		rounds++;
		CHECK(pipe(fds) == 0);
		pid = fork();
		CHECK(pid >= 0);
		if (pid == 0) {
			close(fds[0]);
			writer(path, fds[1]);
		}
		close(fds[1]);
		usleep((useconds_t)(5000 + rand() % 60000));
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
		while (read(fds[0], &seq, sizeof(seq)) == sizeof(seq))
			last = seq;
		close(fds[0]);
		/* Every acknowledged commit of this round is there; the store checks clean. */
		{
			cairn_read_options ro = {0};
			cairn_txn *t;
			cairn_record r;

			OK(cairn_open(path, NULL, &st));
			OK(cairn_check(st, "d", NULL, NULL, NULL));
			ro.domain = "d";
			OK(cairn_read_begin(st, &ro, &t));
			for (uint32_t i = 0; last != UINT32_MAX && i <= last; i++) {
				snprintf(key, sizeof(key), "c%u-0", i);
				OK(cairn_get(t, "Plant", key, strlen(key), &r));
			}
			/*
			 * The updates of the last large commit acknowledged, or of
			 * the one after it, written but not acknowledged.
			 */
			if (last != UINT32_MAX && last >= 3) {
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
		if (last != UINT32_MAX)
			acked_total += last + 1;
	}
	CHECK(acked_total >= 200);
}

/*
 * The merge writer: per round, make a branch, write 150 Records on it and
 * change 50 of main's, merge it into main, report the merge, delete the
 * branch (cleared by the background thread) and go on.
 */
static void merge_writer(const char *path, int round, int fd)
{
	cairn_open_options o = {0}; /* the background thread runs */
	cairn_commit_options co = {0};
	cairn_merge_options mo;
	cairn_changeset *cs;
	cairn_store *st;
	char line[160], name[32];

	if (cairn_open(path, &o, &st) || cairn_changeset_new(&cs))
		_exit(3);
	co.domain = "d";
	co.prov.actor = "crash-merger";
	for (uint32_t i = 0;; i++) {
		snprintf(name, sizeof(name), "r%d-%u", round, i);
		if (cairn_branch_create(st, "d", name, NULL))
			_exit(4);
		co.branch = name;
		cairn_changeset_clear(cs);
		for (int j = 0; j < 200; j++) {
			int n = j < 150 ? snprintf(line, sizeof(line),
						   "{\"kind\":\"Plant\",\"key\":\"%s-%d\",\"values\":{\"city\":\"%s\"}}",
						   name, j, name)
					: snprintf(line, sizeof(line),
						   "{\"kind\":\"Plant\",\"key\":\"base-%d\",\"values\":{\"city\":\"%s\"}}",
						   j - 150, name);

			if (cairn_cs_add_json(cs, line, (size_t)n))
				_exit(5);
		}
		if (cairn_commit(st, &co, cs, NULL))
			_exit(6);
		memset(&mo, 0, sizeof(mo));
		mo.commit.domain = "d";
		mo.commit.prov.actor = "crash-merger";
		mo.source = name;
		if (cairn_merge(st, &mo, NULL, NULL, NULL))
			_exit(7);
		if (write(fd, &i, sizeof(i)) != sizeof(i))
			_exit(8);
		if (cairn_branch_delete(st, "d", name))
			_exit(9);
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
		int fds[2], status;
		pid_t pid;
		uint32_t seq, last = UINT32_MAX;

		rounds++;
		CHECK(pipe(fds) == 0);
		pid = fork();
		CHECK(pid >= 0);
		if (pid == 0) {
			close(fds[0]);
			merge_writer(path, rounds, fds[1]);
		}
		close(fds[1]);
		usleep((useconds_t)(20000 + rand() % 150000));
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
		while (read(fds[0], &seq, sizeof(seq)) == sizeof(seq))
			last = seq;
		close(fds[0]);
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
			OK(cairn_read_begin(st, &ro, &t));
			for (uint32_t i = 0; last != UINT32_MAX && i <= last; i++) {
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
		}
		cairn_close(st);
		if (last != UINT32_MAX)
			acked_total += last + 1;
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
	if (cairn_read_begin(st, &ro, &t))
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

static void *reader(void *p)
{
	struct reader_arg *a = p;

	while (!*a->stop) {
		if (!snapshot_ok(a->st))
			a->bad++;
		a->reads++;
	}
	return NULL;
}

void test_readers_concurrent(void)
{
	cairn_store *st = test_store();
	volatile int stop = 0;
	struct reader_arg args[4];
	pthread_t th[4];
	char line[256];
	pid_t pid;
	int fds[2], status;
	long child_reads = 0;

	CHECK(st);
	/* Another process reads the same store while this one writes (forked with no store open). */
	cairn_close(st);
	CHECK(pipe(fds) == 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		cairn_store *cs = NULL;
		long reads = 0;
		int bad = 0;

		close(fds[0]);
		if (cairn_open(test_path("store"), NULL, &cs))
			_exit(3);
		for (uint64_t t0 = time_mono_ns(); time_mono_ns() - t0 < 300000000;) {
			bad += !snapshot_ok(cs);
			reads++;
		}
		cairn_close(cs);
		if (write(fds[1], &reads, sizeof(reads)) != sizeof(reads))
			_exit(4);
		_exit(bad ? 5 : 0);
	}
	close(fds[1]);
	OK(cairn_open(test_path("store"), NULL, &st));
	for (int i = 0; i < 4; i++) {
		args[i].st = st;
		args[i].stop = &stop;
		args[i].reads = 0;
		args[i].bad = 0;
		CHECK(pthread_create(&th[i], NULL, reader, &args[i]) == 0);
	}
	for (int i = 0; i < 150; i++) {
		snprintf(line, sizeof(line),
			 "{\"kind\":\"Plant\",\"key\":\"a%d\"}\n{\"kind\":\"Plant\",\"key\":\"b%d\"}", i, i);
		OK(test_commit(st, line, NULL));
	}
	stop = 1;
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		CHECK(args[i].bad == 0);
		CHECK(args[i].reads > 0);
	}
	CHECK(read(fds[0], &child_reads, sizeof(child_reads)) == sizeof(child_reads));
	close(fds[0]);
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
 * background catching the index up, and a rebuild now and then, until killed.
 */
static void vector_writer(const char *path)
{
	cairn_open_options o = {0}; /* the background thread runs */
	cairn_commit_options co = {0};
	cairn_changeset *cs;
	cairn_store *st;
	float v[16];

	vindex_min = 500;
	vindex_catchup = 300;
	if (cairn_open(path, &o, &st) || cairn_changeset_new(&cs))
		_exit(3);
	co.domain = "d";
	co.prov.actor = "crash";
	for (unsigned i = 0;; i++) {
		cairn_changeset_clear(cs);
		for (int j = 0; j < 600; j++) {
			char key[32];
			int n = snprintf(key, sizeof(key), "v%u-%d", i, j);

			for (int d = 0; d < 16; d++)
				v[d] = (float)((i * 7 + (unsigned)j * 13 + (unsigned)d * 3) % 17) - 8;
			if (cairn_cs_put(cs, "Plant", key, (size_t)n, key, (size_t)n, "{\"city\":\"x\"}", 12) ||
			    cairn_cs_vector(cs, v, 16))
				_exit(4);
		}
		if (cairn_commit(st, &co, cs, NULL))
			_exit(5);
		if (i % 3 == 2) {
			cairn_vindex_options vo = {0};

			vo.rebuild = 1;
			if (cairn_vindex_update(st, "d", &vo, NULL))
				_exit(6);
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
		int status;
		pid_t pid = fork();

		CHECK(pid >= 0);
		if (pid == 0)
			vector_writer(path);
		usleep((useconds_t)(100000 + rand() % 400000));
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
		OK(cairn_open(path, NULL, &st));
		OK(cairn_check(st, "d", NULL, NULL, NULL));
		OK(cairn_vindex_stat(st, "d", &in));
		built += in.vectors > 0;
		ro.domain = "d";
		OK(cairn_read_begin(st, &ro, &t));
		vo.vector = q;
		vo.dim = 16;
		vo.limit = 5;
		OK(cairn_vsearch(t, &vo, h, 5, &n));
		cairn_txn_end(t);
		cairn_close(st);
	}
	CHECK(built > 0); /* some rounds ran long enough to have an index */
}

static void count_problems(void *ctx, const char *p)
{
	fprintf(stderr, "    %s\n", p);
	++*(int *)ctx;
}

/*
 * Run child(path) in a process of its own, kill it with SIGKILL after
 * lo + rand() % span microseconds, open the store (*st) and check Domain
 * "d": 0, or the line that failed.
 */
static int kill_and_open(void (*child)(const char *), const char *path, unsigned lo,
			 unsigned span, cairn_store **st)
{
	int status, problems = 0;
	pid_t pid = fork();

	if (pid < 0)
		return __LINE__;
	if (pid == 0)
		child(path);
	usleep((useconds_t)(lo + (unsigned)rand() % span));
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
		return __LINE__;
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

/*
 * The re-embedder: the Domain's vectors by one model, then the other, and
 * commits embedded on write between, the background building the index as
 * it goes, until killed.
 */
static void reembed_writer(const char *path)
{
	cairn_open_options o = {0};
	cairn_commit_options co = {0};
	cairn_embedder *e[2];
	cairn_changeset *cs;
	cairn_store *st;

	vindex_min = 500;
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
		if (cairn_reembed(st, &co, NULL))
			_exit(4);
		cairn_changeset_clear(cs);
		if (cairn_cs_put(cs, "Plant", key, (size_t)n, title, (size_t)tn, NULL, 0) ||
		    cairn_commit(st, &co, cs, NULL))
			_exit(5);
	}
}

/*
 * Killed while re-embedding, a store has every vector of one model or
 * every vector of the other (the 16-dimension ones it began with, or the
 * model's vectors of each title), checks clean, and searches.
 */
void test_crash_reembed(void)
{
	cairn_store *st = test_store();
	cairn_commit_options co = {0};
	cairn_changeset *cs;
	char path[512];
	float v[128];
	int changed = 0;

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
		OK(cairn_cs_put(cs, "Plant", key, (size_t)n, title, (size_t)tn, NULL, 0));
		OK(cairn_cs_vector(cs, v, 16));
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

		CHECK(kill_and_open(reembed_writer, path, 30000, 300000, &st) == 0);
		ro.domain = "d";
		OK(cairn_read_begin(st, &ro, &t));
		OK(cairn_vector_model(t, model, sizeof(model), &dim));
		CHECK((dim == 16 && !model[0]) ||
		      (dim == 100 && (!strcmp(model, "mini/1") || !strcmp(model, "mini/2"))));
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
	CHECK(changed > 0); /* some rounds re-embedded */
}

/* -------------------------------------------------------- compaction -- */

/* Commit changes to random Suppliers and compact, forever (until killed). */
static void compact_writer(const char *path)
{
	cairn_open_options o = {0};
	cairn_commit_options co = {0};
	cairn_compact_options cp = {0};
	cairn_changeset *cs;
	cairn_store *st;
	static const char *const countries[] = {"DE", "FR", "US"};

	vindex_min = 500;
	if (cairn_open(path, &o, &st) || cairn_changeset_new(&cs))
		_exit(3);
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
			if (cairn_cs_put(cs, "Supplier", key, (size_t)kn, title, (size_t)tn, vals,
					 (size_t)vn) ||
			    cairn_cs_vector(cs, v, 8))
				_exit(4);
		}
		if (cairn_commit(st, &co, cs, &res))
			_exit(5);
		cp.horizon = res.revision - (g % 3);
		if (cairn_compact(st, "d", &cp, NULL))
			_exit(6);
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
		OK(cairn_cs_put(cs, "Supplier", key, (size_t)n, "supplier", 8, vals, (size_t)vn));
		OK(cairn_cs_vector(cs, v, 8));
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
		int problems = 0;

		CHECK(kill_and_open(compact_writer, path, 100000, 400000, &st) == 0);
		CHECK((h = test_horizon(st, "d")) != UINT64_MAX);
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
			OK(cairn_read_begin(st, &ro, &t));
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
	CHECK(compacted > 0);
}
