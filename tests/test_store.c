/* Tests of the store layer and Domains: open, format, one environment per process, map growth, isolation. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/wlist.h"
#include "tests.h"

void test_store_open(void)
{
	cairn_open_options create = {.flags = CAIRN_OPEN_CREATE}, ro = {.flags = CAIRN_OPEN_RDONLY};
	cairn_store *st = NULL;
	cairn_changeset *cs;
	cairn_commit_options co = {0};
	FILE *f;

	/* No store, no create: not found, and nothing is created. */
	CHECK_RC(cairn_open(test_path("none"), NULL, &st), CAIRN_ENOTFOUND);
	CHECK(st == NULL);
	CHECK(access(test_path("none"), F_OK) != 0);
	CHECK_RC(cairn_open(NULL, NULL, &st), CAIRN_EINVAL);
	OK(cairn_open(test_path("s"), &create, &st));
	OK(cairn_domain_create(st, "d"));
	cairn_close(st);
	/* Reopen: the Domain is there. */
	OK(cairn_open(test_path("s"), NULL, &st));
	CHECK_RC(cairn_domain_create(st, "d"), CAIRN_EEXIST);
	cairn_close(st);
	/* Read-only: reads work, writes are refused. */
	OK(cairn_open(test_path("s"), &ro, &st));
	OK(cairn_changeset_new(&cs));
	OK(cairn_changeset_put(cs, "X", "k", 1, NULL, 0, NULL, 0));
	co.domain = "d";
	CHECK_RC(cairn_commit(st, &co, cs, NULL), CAIRN_EREADONLY);
	CHECK_RC(cairn_domain_create(st, "e"), CAIRN_EREADONLY);
	cairn_changeset_free(cs);
	cairn_close(st);
	/* A directory that is not a store, and a file that is not a directory. */
	mkdir(test_path("empty"), 0755);
	CHECK_RC(cairn_open(test_path("empty"), NULL, &st), CAIRN_ENOTFOUND);
	f = fopen(test_path("file"), "w");
	CHECK(f);
	fclose(f);
	CHECK_RC(cairn_open(test_path("file"), &create, &st), CAIRN_EINVAL);
	/* An LMDB file that is not a Cairn store. */
	mkdir(test_path("junk"), 0755);
	f = fopen(test_path("junk/data.mdb"), "w");
	CHECK(f);
	for (int i = 0; i < 8192; i++)
		fputc(i * 7, f);
	fclose(f);
	CHECK(cairn_open(test_path("junk"), NULL, &st) != 0 && st == NULL);
	cairn_close(NULL); /* a no-op */
}

void test_store_locked(void)
{
	cairn_open_options create = {.flags = CAIRN_OPEN_CREATE};
	cairn_store *a = NULL, *b = NULL;

	OK(cairn_open(test_path("s"), &create, &a));
	/* LMDB forbids two environments on one file in a process: the second open is refused. */
	CHECK_RC(cairn_open(test_path("s"), NULL, &b), CAIRN_ELOCKED);
	CHECK(b == NULL);
	cairn_close(a);
	OK(cairn_open(test_path("s"), NULL, &b));
	cairn_close(b);
}

void test_store_grow(void)
{
	/* A 1 MiB map must grow (several times) to hold what is written. */
	cairn_open_options o = {.flags = CAIRN_OPEN_CREATE | CAIRN_OPEN_NOSYNC, .map_size = 1 << 20};
	cairn_commit_options co = {0};
	cairn_store *st = NULL;
	cairn_changeset *cs;
	char key[32], title[600];
	const char *schema = "{\"kinds\":[{\"name\":\"Note\"}]}";

	OK(cairn_open(test_path("s"), &o, &st));
	OK(cairn_domain_create(st, "d"));
	co.domain = "d";
	OK(cairn_schema_apply(st, &co, schema, strlen(schema), NULL));
	OK(cairn_changeset_new(&cs));
	memset(title, 'x', sizeof(title));
	for (int batch = 0; batch < 20; batch++) {
		cairn_changeset_clear(cs);
		for (int i = 0; i < 500; i++) {
			snprintf(key, sizeof(key), "n-%d-%d", batch, i);
			OK(cairn_changeset_put(cs, "Note", key, strlen(key), title, sizeof(title), NULL, 0));
		}
		OK(cairn_commit(st, &co, cs, NULL));
	}
	cairn_changeset_free(cs);
	{
		cairn_read_options ro = {0};
		cairn_txn *t;
		uint64_t n;

		ro.domain = "d";
		OK(cairn_txn_begin(st, &ro, &t));
		OK(cairn_count(t, "Note", &n));
		CHECK(n == 10000);
		cairn_txn_end(t);
	}
	OK(cairn_check(st, "d", NULL, NULL, NULL));
	cairn_close(st);
	/* Reopening with the default map size opens it as it is. */
	OK(cairn_open(test_path("s"), NULL, &st));
	OK(cairn_check(st, "d", NULL, NULL, NULL));
	cairn_close(st);
}

static int collect(void *ctx, const cairn_domain_info *d)
{
	char *names = ctx;

	strcat(names, d->name);
	strcat(names, ",");
	return 0;
}

void test_domain_lifecycle(void)
{
	cairn_open_options o = {.flags = CAIRN_OPEN_CREATE | CAIRN_OPEN_NOSYNC};
	cairn_store *st = NULL;
	cairn_read_options ro = {0};
	cairn_txn *t = NULL;
	char names[256] = "";

	OK(cairn_open(test_path("s"), &o, &st));
	/* A write may create its Domain, in its own transaction: refused, it leaves none. */
	{
		cairn_commit_options co = {0};
		const char *schema = "{\"kinds\":[{\"name\":\"K\"}]}";
		cairn_changeset *cs;

		co.domain = "made";
		co.create_domain = 1;
		CHECK_RC(cairn_schema_apply(st, &co, "{\"kinds\":7}", 11, NULL), CAIRN_ESCHEMA);
		OK(cairn_changeset_new(&cs));
		OK(cairn_changeset_put(cs, "Nope", "k", 1, NULL, 0, NULL, 0));
		CHECK_RC(cairn_commit(st, &co, cs, NULL), CAIRN_EUNKNOWNKIND);
		OK(cairn_domain_list(st, collect, names));
		CHECK(strcmp(names, "") == 0);
		OK(cairn_schema_apply(st, &co, schema, strlen(schema), NULL));
		cairn_changeset_clear(cs);
		OK(cairn_changeset_put(cs, "K", "k", 1, NULL, 0, NULL, 0));
		co.domain = "made2";
		CHECK_RC(cairn_commit(st, &co, cs, NULL), CAIRN_EUNKNOWNKIND); /* new, so no schema */
		co.create_domain = 0;
		CHECK_RC(cairn_commit(st, &co, cs, NULL), CAIRN_ENODOMAIN);
		co.domain = "made";
		OK(cairn_commit(st, &co, cs, NULL));
		OK(cairn_domain_list(st, collect, names));
		CHECK(strcmp(names, "made,") == 0);
		OK(cairn_domain_drop(st, "made"));
		names[0] = '\0';
		cairn_changeset_free(cs);
	}
	CHECK_RC(cairn_domain_create(st, "bad name"), CAIRN_EINVAL);
	CHECK_RC(cairn_domain_create(st, ""), CAIRN_EINVAL);
	OK(cairn_domain_create(st, "beta"));
	OK(cairn_domain_create(st, "alpha"));
	OK(cairn_domain_list(st, collect, names));
	CHECK(strcmp(names, "alpha,beta,") == 0);
	CHECK_RC(cairn_domain_drop(st, "gamma"), CAIRN_ENODOMAIN);
	cairn_close(st);

	/* A Domain with data, dropped: its data is gone, the name can be created again, empty. */
	st = test_store();
	CHECK(st);
	OK(test_commit(st, "{\"kind\":\"Plant\",\"key\":\"L1\"}", NULL));
	OK(cairn_domain_drop(st, "d"));
	ro.domain = "d";
	CHECK_RC(cairn_txn_begin(st, &ro, &t), CAIRN_ENODOMAIN);
	CHECK(t == NULL);
	CHECK_RC(test_commit(st, "{\"kind\":\"Plant\",\"key\":\"L2\"}", NULL), CAIRN_ENODOMAIN);
	OK(cairn_domain_create(st, "d"));
	OK(cairn_txn_begin(st, &ro, &t));
	CHECK(cairn_txn_revision(t) == 0);
	{
		cairn_record r;

		CHECK_RC(cairn_get(t, "Plant", "L1", 2, &r), CAIRN_EUNKNOWNKIND); /* schema gone too */
	}
	cairn_txn_end(t);
	cairn_close(st);
	/* The drop is durable. */
	OK(cairn_open(test_path("store"), NULL, &st));
	OK(cairn_txn_begin(st, &ro, &t));
	CHECK(cairn_txn_revision(t) == 0);
	cairn_txn_end(t);
	cairn_close(st);
}

void test_domain_isolation(void)
{
	cairn_store *st = test_store();
	cairn_commit_options co = {0};
	cairn_read_options ro = {0};
	cairn_txn *t;
	cairn_record r;
	char *a, *b;

	CHECK(st);
	OK(cairn_domain_create(st, "e"));
	co.domain = "e";
	OK(cairn_schema_apply(st, &co, test_schema, strlen(test_schema), NULL));
	OK(test_commit_in(st, "d", "{\"kind\":\"Supplier\",\"key\":\"S1\",\"title\":\"in d\",\"values\":{\"vat\":\"V\"}}", NULL));
	/* The same key and the same unique value in another Domain are independent. */
	OK(test_commit_in(st, "e", "{\"kind\":\"Supplier\",\"key\":\"S1\",\"title\":\"in e\",\"values\":{\"vat\":\"V\"}}", NULL));
	ro.domain = "e";
	OK(cairn_txn_begin(st, &ro, &t));
	OK(cairn_get(t, "Supplier", "S1", 2, &r));
	CHECK(test_streq(r.title, r.title_len, "in e"));
	CHECK_RC(cairn_get(t, "Part", "P1", 2, &r), CAIRN_ENOTFOUND);
	cairn_txn_end(t);
	/* A reference into another Domain does not resolve. */
	OK(test_commit_in(st, "d", "{\"kind\":\"Supplier\",\"key\":\"S9\",\"values\":{\"vat\":\"V9\"}}", NULL));
	CHECK_RC(test_commit_in(st, "e", "{\"kind\":\"Part\",\"key\":\"P1\",\"values\":{\"sku\":\"x\",\"supplier\":\"S9\"}}", NULL),
		 CAIRN_EREF);
	a = test_export(st, "d");
	b = test_export(st, "e");
	CHECK(a && b && !strstr(a, "in e") && !strstr(b, "in d") && !strstr(b, "S9"));
	free(a);
	free(b);
	/* Dropping one Domain leaves the other whole. */
	OK(cairn_domain_drop(st, "d"));
	OK(cairn_check(st, "e", NULL, NULL, NULL));
	OK(cairn_txn_begin(st, &ro, &t));
	OK(cairn_get(t, "Supplier", "S1", 2, &r));
	cairn_txn_end(t);
	cairn_close(st);
}

/* A commit's write list sorts by sub-database, then key bytes, shorter first on a tie. */
void test_store_wlist_sort(void)
{
	wlist w;
	int bad = 0;

	memset(&w, 0, sizeof(w));
	srand(5);
	static uint8_t seen[5000];

	for (int i = 0; i < 5000; i++) {
		uint8_t k[300];
		uint32_t id = (uint32_t)i;
		/* Short and long keys; a shared prefix, then few distinct bytes (zeros too). */
		size_t n = i % 50 == 0 ? 200 + (size_t)rand() % 90 : 4 + (size_t)rand() % 20;

		for (size_t j = 0; j < n; j++)
			k[j] = j < 4 ? 7 : (uint8_t)(rand() % (i % 7 == 0 ? 256 : 3));
		OK(wl_add(&w, rand() % 3, k, n, &id, sizeof(id)));
	}
	OK(wl_sort(&w));
	for (size_t i = 0; i < w.n; i++) { /* every entry once */
		uint32_t id;

		memcpy(&id, w.e[i].v, sizeof(id));
		if (w.e[i].vlen != sizeof(id) || id >= 5000 || seen[id]++)
			bad = 1;
	}
	for (size_t i = 1; i < w.n && !bad; i++) {
		const wl_entry *a = &w.e[i - 1], *b = &w.e[i];
		size_t n = a->klen < b->klen ? a->klen : b->klen;
		int c = memcmp(a->k, b->k, n);

		if (a->db > b->db || (a->db == b->db && (c > 0 || (c == 0 && a->klen > b->klen))))
			bad = 1;
	}
	CHECK(w.n == 5000 && !bad);
	wl_release(&w);
}

/*
 * An online backup while a writer commits: the writer reports its commits,
 * the backup is taken once 20 are in, and the writer goes on to 120. The
 * backup opens as a store, checks clean, and holds exactly what the store
 * held at the backup's head revision; a second backup into it is refused.
 */
struct backup_writer {
	cairn_store *st;
	atomic_int done;
	int rc;
};

static void *backup_writer_run(void *arg)
{
	struct backup_writer *w = arg;
	char line[160];

	for (int i = 0; i < 120 && !w->rc; i++) {
		snprintf(line, sizeof(line),
			 "{\"kind\":\"Plant\",\"key\":\"b%03d\",\"title\":\"plant %d\","
			 "\"values\":{\"city\":\"c%d\"}}",
			 i % 40, i, i);
		w->rc = test_commit(w->st, line, NULL);
		atomic_store(&w->done, i + 1);
	}
	return NULL;
}

void test_store_backup(void)
{
	cairn_open_options oo = {.flags = CAIRN_OPEN_NOSYNC | CAIRN_OPEN_NO_BACKGROUND};
	struct backup_writer w = {0};
	cairn_backup_result br;
	cairn_read_options ro = {.domain = "d"};
	cairn_record a[100], b[100];
	cairn_store *bk = NULL;
	cairn_txn *ta, *tb;
	char dir[4096];
	pthread_t th;
	size_t na, nb;
	uint64_t head, base;
	FILE *f;

	w.st = test_store();
	CHECK(w.st);
	if (!w.st)
		return;
	snprintf(dir, sizeof(dir), "%s", test_path("backup"));
	base = test_head(w.st, "d");
	CHECK(pthread_create(&th, NULL, backup_writer_run, &w) == 0);
	while (atomic_load(&w.done) < 20 && !w.rc)
		sched_yield();
	OK(cairn_backup(w.st, dir, &br));
	CHECK(br.bytes > 0);
	pthread_join(th, NULL);
	OK(w.rc);
	/* The backup is a store: it checks clean and holds the store as of its head. */
	OK(cairn_open(dir, &oo, &bk));
	OK(cairn_check(bk, "d", NULL, NULL, NULL));
	OK(cairn_txn_begin(bk, &ro, &tb));
	head = cairn_txn_revision(tb);
	/* 20 commits at least, 120 at most: the writer may have gone on meanwhile. */
	CHECK(head >= base + 20 && head <= base + 120);
	ro.at_revision = head;
	OK(cairn_txn_begin(w.st, &ro, &ta));
	OK(cairn_page(ta, "Plant", NULL, 0, a, 100, &na));
	OK(cairn_page(tb, "Plant", NULL, 0, b, 100, &nb));
	CHECK(na == nb && na > 0);
	for (size_t i = 0; i < na && i < nb; i++)
		CHECK(a[i].key_len == b[i].key_len && memcmp(a[i].key, b[i].key, a[i].key_len) == 0 &&
		      a[i].title_len == b[i].title_len &&
		      memcmp(a[i].title, b[i].title, a[i].title_len) == 0 &&
		      a[i].values_len == b[i].values_len &&
		      memcmp(a[i].values, b[i].values, a[i].values_len) == 0 &&
		      a[i].revision == b[i].revision);
	cairn_txn_end(ta);
	cairn_txn_end(tb);
	cairn_close(bk);
	/* Into a directory that holds something, or a file: refused, nothing written. */
	CHECK_RC(cairn_backup(w.st, dir, &br), CAIRN_EEXIST);
	CHECK(strstr(cairn_errmsg(), "not empty"));
	snprintf(dir, sizeof(dir), "%s", test_path("a-file"));
	CHECK((f = fopen(dir, "w")) != NULL);
	if (f)
		fclose(f);
	CHECK_RC(cairn_backup(w.st, dir, &br), CAIRN_EEXIST);
	CHECK_RC(cairn_backup(w.st, "", &br), CAIRN_EINVAL);
	CHECK_RC(cairn_backup(NULL, dir, &br), CAIRN_EINVAL);
	cairn_close(w.st);
}
