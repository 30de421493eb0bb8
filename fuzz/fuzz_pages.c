/*
 * libFuzzer target: the data file's structure check (src/store/pages.c).
 * The input is a data file. Both checks must end on it; and when the full
 * check finds nothing wrong, LMDB must read every entry of every database
 * in it without faulting or failing an assertion, since that is what the
 * check vouches for.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lmdb.h>

#include "store/store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Read every entry of dbi, touching each byte of its keys and values. */
static unsigned read_all(MDB_txn *txn, MDB_dbi dbi)
{
	MDB_cursor *cur;
	MDB_val k, v;
	unsigned sum = 0;

	if (mdb_cursor_open(txn, dbi, &cur))
		return 0;
	while (mdb_cursor_get(cur, &k, &v, MDB_NEXT) == 0) {
		for (size_t i = 0; i < k.mv_size; i++)
			sum += ((const uint8_t *)k.mv_data)[i];
		for (size_t i = 0; i < v.mv_size; i++)
			sum += ((const uint8_t *)v.mv_data)[i];
	}
	mdb_cursor_close(cur);
	return sum;
}

static void lmdb_reads(const char *path, size_t size)
{
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi main_db;
	MDB_cursor *cur;
	MDB_val k, v;
	volatile unsigned sum = 0;

	if (mdb_env_create(&env))
		return;
	mdb_env_set_maxdbs(env, 64);
	mdb_env_set_mapsize(env, size + (1u << 20));
	if (mdb_env_open(env, path, MDB_NOSUBDIR | MDB_RDONLY | MDB_NOLOCK, 0600) ||
	    mdb_txn_begin(env, NULL, MDB_RDONLY, &txn)) {
		mdb_env_close(env);
		return;
	}
	if (mdb_dbi_open(txn, NULL, 0, &main_db) == 0 && mdb_cursor_open(txn, main_db, &cur) == 0) {
		while (mdb_cursor_get(cur, &k, &v, MDB_NEXT) == 0) {
			char name[256];
			MDB_dbi sub;

			if (k.mv_size == 0 || k.mv_size >= sizeof(name) || memchr(k.mv_data, 0, k.mv_size))
				continue;
			memcpy(name, k.mv_data, k.mv_size);
			name[k.mv_size] = '\0';
			if (mdb_dbi_open(txn, name, 0, &sub) == 0)
				sum += read_all(txn, sub);
		}
		mdb_cursor_close(cur);
	}
	(void)sum;
	mdb_txn_abort(txn);
	mdb_env_close(env);
}

static char path[64];

static void remove_file(void)
{
	unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	pages_report rep;

	if (fd < 0) {
		const char *tmp = getenv("TMPDIR");

		snprintf(path, sizeof(path), "%s/cairn-fuzz-pages-%d", tmp && *tmp && strlen(tmp) < 32 ? tmp : "/tmp",
			 (int)getpid());
		if ((fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) < 0)
			abort();
		atexit(remove_file);
	}
	if (ftruncate(fd, 0) || (size && pwrite(fd, data, size, 0) != (ssize_t)size))
		abort();
	if (pages_check(fd, 0, NULL, NULL, &rep))
		return 0;
	if (pages_check(fd, 1, NULL, NULL, &rep) || rep.problems)
		return 0;
	lmdb_reads(path, size);
	return 0;
}
