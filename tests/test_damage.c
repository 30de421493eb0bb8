/*
 * A damaged data file (src/store/pages.c, src/store/guard.c): the structure
 * check finds no problem in a sound store whatever was done to it, finds
 * every page of a tree that is zeroed, refuses to open a truncated or
 * broken file with an error that says what to do (leaving the file as it
 * was), and the damage guard turns a fault in the map into exit status and
 * message while leaving any other fault alone.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests.h"
#include "base/alloc.h"
#include "store/store.h"

/* A store with history: Records and Links written, updated, deleted, on two branches. */
static cairn_store *busy_store(void)
{
	cairn_store *st = test_store();
	char line[400];

	if (!st)
		return NULL;
	if (test_commit(st, "{\"kind\":\"Supplier\",\"key\":\"S1\",\"values\":{\"vat\":\"1\"}}", NULL))
		goto fail;
	for (int i = 0; i < 400; i++) {
		snprintf(line, sizeof(line),
			 "{\"kind\":\"Part\",\"key\":\"P%d\",\"title\":\"part number %d of the set\","
			 "\"values\":{\"sku\":\"s%d\",\"supplier\":\"S1\"}}\n"
			 "{\"rel\":\"supplied_by\",\"from\":\"Part:P%d\",\"to\":\"Supplier:S1\"}",
			 i, i, i, i);
		if (test_commit(st, line, NULL))
			goto fail;
	}
	if (cairn_branch_create(st, "d", "b", NULL))
		goto fail;
	for (int i = 0; i < 400; i += 3) {
		snprintf(line, sizeof(line),
			 "{\"rel\":\"supplied_by\",\"from\":\"Part:P%d\",\"to\":\"Supplier:S1\",\"op\":\"unlink\"}\n"
			 "{\"kind\":\"Part\",\"key\":\"P%d\",\"op\":\"delete\"}", i, i);
		if (test_commit(st, line, NULL))
			goto fail;
	}
	if (test_commit_on(st, "d", "b", "{\"kind\":\"Part\",\"key\":\"B1\",\"values\":{\"sku\":\"b\",\"supplier\":\"S1\"}}", NULL))
		goto fail;
	return st;
fail:
	fprintf(stderr, "    busy_store: %s\n", cairn_errmsg());
	cairn_close(st);
	return NULL;
}

static void count_problem(void *ctx, const char *p)
{
	(void)p;
	++*(int *)ctx;
}

static int data_fd(int flags)
{
	char p[600];

	snprintf(p, sizeof(p), "%s/data.mdb", test_path("store"));
	return open(p, flags);
}

/* A sound store has no problem, and every page is in a tree or free. */
void test_damage_sound(void)
{
	cairn_store *st = busy_store();
	pages_report rep;
	int fd, calls = 0;

	CHECK(st);
	OK(cairn_check(st, "d", NULL, NULL, NULL));
	cairn_close(st);
	CHECK((fd = data_fd(O_RDONLY)) >= 0);
	for (int full = 0; full < 2; full++) {
		OK(pages_check(fd, full, count_problem, &calls, &rep));
		CHECK(rep.problems == 0 && calls == 0);
		CHECK(rep.txnid > 400 && rep.last_page > 10);
	}
	CHECK(rep.free_pages > 0); /* the deletes freed pages */
	CHECK(rep.pages + rep.free_pages + 2 <= rep.last_page + 1);
	close(fd);
}

/* Zeroing any page a tree reaches is found by the full check, with a message naming it. */
void test_damage_every_page(void)
{
	cairn_store *st = busy_store();
	pages_report rep, sound;
	uint8_t *page, *zero;
	uint64_t found = 0, psize = 4096;
	int fd, calls;

	CHECK(st);
	cairn_close(st);
	CHECK((fd = data_fd(O_RDWR)) >= 0);
	OK(pages_check(fd, 1, NULL, NULL, &sound));
	CHECK(sound.problems == 0);
	page = cr_malloc(psize);
	zero = cr_calloc(1, psize);
	CHECK(page && zero);
	for (uint64_t pg = 2; pg <= sound.last_page && !test_failed; pg++) {
		CHECK(pread(fd, page, psize, (off_t)(pg * psize)) == (ssize_t)psize);
		CHECK(pwrite(fd, zero, psize, (off_t)(pg * psize)) == (ssize_t)psize);
		calls = 0;
		OK(pages_check(fd, 1, count_problem, &calls, &rep));
		found += rep.problems > 0;
		CHECK(calls > 0 || rep.problems == 0);
		CHECK(pwrite(fd, page, psize, (off_t)(pg * psize)) == (ssize_t)psize);
	}
	/* Each page a tree reaches; a free page zeroed harms nothing. */
	CHECK(found == sound.pages);
	OK(pages_check(fd, 1, NULL, NULL, &rep));
	CHECK(rep.problems == 0);
	cr_free(page);
	cr_free(zero);
	close(fd);
}

static int same_file(const char *a, const char *b)
{
	char cmd[1300];

	snprintf(cmd, sizeof(cmd), "cmp -s '%s' '%s'", a, b);
	return system(cmd) == 0;
}

/* A truncated file, a broken meta page, a broken catalog: open refuses, says what to do. */
void test_damage_open(void)
{
	cairn_store *st = busy_store();
	char data[600], copy[600], cmd[1300];
	pages_report rep;
	struct stat sb;
	uint8_t junk[64];
	int fd;

	CHECK(st);
	cairn_close(st);
	snprintf(data, sizeof(data), "%s/data.mdb", test_path("store"));
	snprintf(copy, sizeof(copy), "%s", test_path("sound.mdb"));
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", data, copy);
	CHECK(system(cmd) == 0);
	CHECK(stat(data, &sb) == 0);

	/* Cut short: the pages in use past the end are not free ones. */
	CHECK(truncate(data, sb.st_size / 2) == 0);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", data, test_path("cut.mdb"));
	CHECK(system(cmd) == 0);
	CHECK_RC(cairn_open(test_path("store"), NULL, &st), CAIRN_ECORRUPT);
	CHECK(strstr(cairn_errmsg(), "truncated") && strstr(cairn_errmsg(), "backup"));
	CHECK(same_file(data, test_path("cut.mdb"))); /* the refused open wrote nothing */

	/* Meta page 1 broken. */
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", copy, data);
	CHECK(system(cmd) == 0);
	memset(junk, 0x5a, sizeof(junk));
	CHECK((fd = open(data, O_RDWR)) >= 0);
	CHECK(pwrite(fd, junk, sizeof(junk), 4096 + 16) == (ssize_t)sizeof(junk));
	close(fd);
	CHECK_RC(cairn_open(test_path("store"), NULL, &st), CAIRN_ECORRUPT);
	CHECK(strstr(cairn_errmsg(), "meta page 1") != NULL);

	/* Sound again: opens, checks clean. */
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", copy, data);
	CHECK(system(cmd) == 0);
	OK(cairn_open(test_path("store"), NULL, &st));
	OK(cairn_check(st, "d", NULL, NULL, NULL));
	cairn_close(st);
	CHECK((fd = open(data, O_RDONLY)) >= 0);
	OK(pages_check(fd, 0, NULL, NULL, &rep));
	CHECK(rep.problems == 0);
	close(fd);
}

/* The full check's problems come before the content checks, once a transaction. */
void test_damage_check(void)
{
	cairn_store *st = busy_store();
	pages_report sound, open_rep, full_rep;
	uint8_t zero[4096] = {0}, page[4096];
	cairn_check_report ck;
	uint64_t pg;
	int fd, calls = 0;

	CHECK(st);
	cairn_close(st);
	CHECK((fd = data_fd(O_RDWR)) >= 0);
	OK(pages_check(fd, 1, NULL, NULL, &sound));
	/* A page of a tree opening does not read: the highest one. */
	for (pg = sound.last_page; pg >= 2; pg--) {
		CHECK(pread(fd, page, sizeof(page), (off_t)(pg * 4096)) == 4096);
		CHECK(pwrite(fd, zero, sizeof(zero), (off_t)(pg * 4096)) == 4096);
		OK(pages_check(fd, 0, NULL, NULL, &open_rep));
		OK(pages_check(fd, 1, NULL, NULL, &full_rep));
		if (!open_rep.problems && full_rep.problems)
			break;
		CHECK(pwrite(fd, page, sizeof(page), (off_t)(pg * 4096)) == 4096);
	}
	close(fd);
	CHECK(pg >= 2);
	OK(cairn_open(test_path("store"), NULL, &st));
	CHECK_RC(cairn_check(st, "d", count_problem, &calls, &ck), CAIRN_ECORRUPT);
	CHECK(calls >= 1 && ck.problems >= 1 && ck.versions == 0);
	CHECK(strstr(cairn_errmsg(), "damaged") && strstr(cairn_errmsg(), "backup"));
	calls = 0;
	CHECK_RC(cairn_check(st, "d", count_problem, &calls, &ck), CAIRN_ECORRUPT);
	CHECK(calls == 1 && ck.problems >= 1); /* said once, then referred to */
	cairn_close(st);
}

/* Run fn in a child with stderr on a pipe; its wait status and what it wrote. */
static int in_child(void (*fn)(void), char *out, size_t cap)
{
	int p[2], status = 0;
	ssize_t n, got = 0;
	pid_t pid;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		dup2(p[1], 2);
		fn();
		_exit(0);
	}
	close(p[1]);
	while (got + 1 < (ssize_t)cap && (n = read(p[0], out + got, cap - 1 - (size_t)got)) > 0)
		got += n;
	out[got] = '\0';
	close(p[0]);
	waitpid(pid, &status, 0);
	return status;
}

static void read_past_the_file(void)
{
	cairn_store *st;
	volatile const uint8_t *map;
	struct stat sb;
	char data[600];

	snprintf(data, sizeof(data), "%s/data.mdb", test_path("store"));
	if (cairn_exit_on_damage(77, 1) || cairn_open(test_path("store"), NULL, &st) ||
	    stat(data, &sb) || !(map = store_map_address(st)) || st->map_size < (size_t)sb.st_size + 8192)
		_exit(3);
	/* The map reaches past the file: reading there is what a broken page number does. */
	(void)map[(sb.st_size / 4096 + 1) * 4096];
	_exit(4);
}

static void fault_elsewhere(void)
{
	volatile uintptr_t wild = 64;

	if (cairn_exit_on_damage(77, 0))
		_exit(3);
	*(volatile int *)wild = 1;
	_exit(4);
}

void test_damage_guard(void)
{
	cairn_store *st = test_store();
	char out[2048];
	int status;

	CHECK(st);
	cairn_close(st);
	status = in_child(read_past_the_file, out, sizeof(out));
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 77);
	CHECK(strstr(out, "{\"error\":{\"code\":\"corrupt\"") == out);
	CHECK(strstr(out, "cairn check") && strstr(out, "backup"));
	/* Not a store's map: the fault is what it would have been. */
	status = in_child(fault_elsewhere, out, sizeof(out));
	CHECK(!(WIFEXITED(status) && (WEXITSTATUS(status) == 77 || WEXITSTATUS(status) == 4)));
	CHECK(!strstr(out, "\"corrupt\""));
}

/* A changed byte in a stored Version: the read that meets it says so, and so does the check. */
void test_damage_version(void)
{
	cairn_store *st = test_store();
	cairn_read_options ro = {0};
	cairn_record r;
	cairn_txn *t;
	MDB_txn *txn;
	MDB_cursor *cur;
	MDB_val k, v;
	uint8_t key[16], val[512];
	int calls = 0;

	CHECK(st);
	OK(test_commit(st, "{\"kind\":\"Supplier\",\"key\":\"S1\",\"title\":\"Acme\",\"values\":{\"vat\":\"1\"}}", NULL));
	/* The newest Version is S1's: flip one byte of its title. */
	CHECK(mdb_txn_begin(st->env, NULL, 0, &txn) == 0);
	CHECK(mdb_cursor_open(txn, st->dbi[DB_VERSIONS], &cur) == 0);
	CHECK(mdb_cursor_get(cur, &k, &v, MDB_LAST) == 0);
	CHECK(k.mv_size <= sizeof(key) && v.mv_size <= sizeof(val));
	memcpy(key, k.mv_data, k.mv_size);
	memcpy(val, v.mv_data, v.mv_size);
	mdb_cursor_close(cur);
	{
		uint8_t *at = memmem(val, v.mv_size, "Acme", 4);

		CHECK(at != NULL);
		at[0] = 'B';
	}
	k.mv_data = key;
	v.mv_data = val;
	CHECK(mdb_put(txn, st->dbi[DB_VERSIONS], &k, &v, 0) == 0);
	CHECK(mdb_txn_commit(txn) == 0);

	ro.domain = "d";
	OK(cairn_txn_begin(st, &ro, &t));
	CHECK_RC(cairn_get(t, "Supplier", "S1", 2, &r), CAIRN_ECORRUPT);
	CHECK(strstr(cairn_errmsg(), "checksum") != NULL);
	cairn_txn_end(t);
	CHECK_RC(cairn_check(st, "d", count_problem, &calls, NULL), CAIRN_ECORRUPT);
	CHECK(calls >= 1);
	cairn_close(st);
}
