/*
 * The LMDB environment of a store: open and close, transactions, map growth.
 *
 * The map starts at 1 GiB (or twice the data file) and doubles whenever a
 * commit finds it full: the commit is aborted, the map grown under an
 * exclusive lock that waits for this process's transactions to end, and the
 * caller retries. Other processes adopt a grown map when their next read
 * transaction sees MDB_MAP_RESIZED.
 */
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "store/store.h"
#include "base/alloc.h"
#include "base/assert.h"
#include "base/err.h"
#include "base/text.h"

#define STORE_MAGIC "CAIRN-STORE"
/*
 * The initial map: address space, not disk (the data file grows as pages
 * are written), so it starts large: a commit that finds the map full is
 * aborted and done again after the map doubles, which cost an import of 1M
 * Records a whole batch (about a second) when the map started at 1 GiB.
 */
#define MAP_DEFAULT ((size_t)16 << 30)

const char *const db_names[DB_COUNT] = {
	[DB_META] = "meta",	  [DB_CATALOG] = "catalog", [DB_VERSIONS] = "versions",
	[DB_KEYS] = "keys",	  [DB_ADJ] = "adj",
	[DB_ADJR] = "adj_rev",	  [DB_ATTR] = "attr",	    [DB_CELLS] = "cells",
	[DB_REVS] = "revisions", [DB_VECTORS] = "vectors",  [DB_NAMES] = "names", [DB_POSTINGS] = "postings",
	[DB_LEXICON] = "lexicon",
	[DB_VINDEX] = "vindex",	  [DB_KSEG] = "kseg",
};

/* Paths open in this process: LMDB forbids opening one environment twice in a process. */
static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;
static char **open_paths;
static size_t n_open;

int store_err(int rc, const char *what)
{
	switch (rc) {
	case 0:
		return 0;
	case MDB_NOTFOUND:
		return CAIRN_ENOTFOUND;
	case MDB_MAP_FULL:
		return err_set(CAIRN_EMAPFULL, "%s: the store's map is full", what);
	case MDB_CORRUPTED:
	case MDB_PAGE_NOTFOUND:
	case MDB_INVALID:
	case MDB_BAD_TXN:
	case MDB_CURSOR_FULL: /* a tree deeper than LMDB allows: a page points back up */
		return err_set(CAIRN_ECORRUPT, "%s: %s (the data file is damaged: run cairn check)",
			       what, mdb_strerror(rc));
	case MDB_VERSION_MISMATCH:
		return err_set(CAIRN_EFORMAT, "%s: %s", what, mdb_strerror(rc));
	case MDB_READERS_FULL:
		return err_set(CAIRN_ELIMIT, "%s: too many concurrent readers", what);
	case ENOMEM:
		return err_set(CAIRN_ENOMEM, "%s: out of memory", what);
	case EACCES:
		return err_set(CAIRN_EREADONLY, "%s: %s", what, mdb_strerror(rc));
	default:
		return err_set(CAIRN_EIO, "%s: %s", what, mdb_strerror(rc));
	}
}

static int register_path(const char *path)
{
	char **p;

	pthread_mutex_lock(&open_lock);
	for (size_t i = 0; i < n_open; i++) {
		if (strcmp(open_paths[i], path) == 0) {
			pthread_mutex_unlock(&open_lock);
			return err_set(CAIRN_ELOCKED, "store %s is already open in this process",
				       path);
		}
	}
	p = cr_reallocarray(open_paths, n_open + 1, sizeof(*p));
	if (!p) {
		pthread_mutex_unlock(&open_lock);
		return err_set(CAIRN_ENOMEM, "out of memory");
	}
	open_paths = p;
	open_paths[n_open] = cr_strdup(path);
	if (!open_paths[n_open]) {
		pthread_mutex_unlock(&open_lock);
		return err_set(CAIRN_ENOMEM, "out of memory");
	}
	n_open++;
	pthread_mutex_unlock(&open_lock);
	return 0;
}

static void unregister_path(const char *path)
{
	pthread_mutex_lock(&open_lock);
	for (size_t i = 0; i < n_open; i++) {
		if (strcmp(open_paths[i], path) == 0) {
			cr_free(open_paths[i]);
			open_paths[i] = open_paths[--n_open];
			break;
		}
	}
	if (n_open == 0) {
		cr_free(open_paths);
		open_paths = NULL;
	}
	pthread_mutex_unlock(&open_lock);
}

int store_format_put(MDB_txn *txn, cairn_store *st)
{
	uint8_t mark[sizeof(STORE_MAGIC) + 4];
	int rc;

	memcpy(mark, STORE_MAGIC, sizeof(STORE_MAGIC));
	be32_put(mark + sizeof(STORE_MAGIC), STORE_FORMAT);
	if (!(rc = db_put(txn, st, DB_META, "format", 6, mark, sizeof(mark), 0)))
		st->format = STORE_FORMAT;
	return rc;
}

/* When this process's write began to wait for LMDB's writer lock (0: none waits). */
static _Atomic int64_t writer_wait_ms;

int64_t cairn_writer_waiting_since(void)
{
	return atomic_load(&writer_wait_ms);
}

/*
 * Begin a transaction; a write one waits for the writer lock other
 * processes hold while they write, and says so meanwhile
 * (cairn_writer_waiting_since).
 */
static int txn_begin(MDB_env *env, unsigned flags, MDB_txn **txn)
{
	int rc;

	if (flags & MDB_RDONLY)
		return mdb_txn_begin(env, NULL, flags, txn);
	atomic_store(&writer_wait_ms, time_now_ms());
	rc = mdb_txn_begin(env, NULL, flags, txn);
	atomic_store(&writer_wait_ms, 0);
	return rc;
}

/* Check the format marker, or write it into a new store. */
static int check_format(cairn_store *st, int creating)
{
	MDB_txn *txn;
	MDB_val v;
	uint8_t mark[sizeof(STORE_MAGIC) + 4];
	int rc;

	memcpy(mark, STORE_MAGIC, sizeof(STORE_MAGIC));
	be32_put(mark + sizeof(STORE_MAGIC), STORE_FORMAT);
	st->format = STORE_FORMAT;
	rc = txn_begin(st->env, (st->flags & CAIRN_OPEN_RDONLY) ? MDB_RDONLY : 0, &txn);
	if (rc)
		return store_err(rc, "open");
	rc = db_get(txn, st, DB_META, "format", 6, &v);
	if (rc == CAIRN_ENOTFOUND) {
		if (!creating || (st->flags & CAIRN_OPEN_RDONLY)) {
			mdb_txn_abort(txn);
			return err_set(CAIRN_EFORMAT, "%s is not a Cairn store", st->path);
		}
		rc = db_put(txn, st, DB_META, "format", 6, mark, sizeof(mark), 0);
		if (!rc)
			rc = meta_put_u64(txn, st, "created", (uint64_t)time(NULL));
		if (rc) {
			mdb_txn_abort(txn);
			return rc;
		}
		rc = mdb_txn_commit(txn);
		return rc ? store_write_err(st, rc, "open") : 0;
	}
	if (rc) {
		mdb_txn_abort(txn);
		return rc;
	}
	if (v.mv_size != sizeof(mark) || memcmp(v.mv_data, mark, sizeof(STORE_MAGIC)) != 0) {
		mdb_txn_abort(txn);
		return err_set(CAIRN_EFORMAT, "%s is not a Cairn store", st->path);
	}
	st->format = be32_get((const uint8_t *)v.mv_data + sizeof(STORE_MAGIC));
	if (st->format < STORE_FORMAT_OLDEST || st->format > STORE_FORMAT) {
		mdb_txn_abort(txn);
		return err_set(CAIRN_EFORMAT, "store format %u is not supported (this is format %u)",
			       st->format, STORE_FORMAT);
	}
	if (st->format < STORE_FORMAT && (st->flags & CAIRN_OPEN_RDONLY)) {
		mdb_txn_abort(txn);
		return err_set(CAIRN_EFORMAT, "store format %u must be upgraded to %u: open it once "
					      "read-write",
			       st->format, STORE_FORMAT);
	}
	mdb_txn_abort(txn);
	return 0;
}

static int open_dbis(cairn_store *st, int create)
{
	MDB_txn *txn;
	int rc;
	unsigned flags = create ? MDB_CREATE : 0;

	rc = txn_begin(st->env, (st->flags & CAIRN_OPEN_RDONLY) ? MDB_RDONLY : 0, &txn);
	if (rc)
		return store_err(rc, "open");
	for (int i = 0; i < DB_COUNT; i++) {
		rc = mdb_dbi_open(txn, db_names[i], flags, &st->dbi[i]);
		/* A sub-database that came with a later format: the upgrade fills it. */
		if (rc == MDB_NOTFOUND && i >= DB_NAMES && !(st->flags & CAIRN_OPEN_RDONLY))
			rc = mdb_dbi_open(txn, db_names[i], MDB_CREATE, &st->dbi[i]);
		else if (rc == MDB_NOTFOUND && i >= DB_NAMES)
			continue; /* read-only: check_format refuses the old format */
		if (rc == MDB_NOTFOUND) {
			mdb_txn_abort(txn);
			return err_set(create ? CAIRN_EIO : CAIRN_ENOTFOUND,
				       "%s: no Cairn store here", st->path);
		}
		if (rc) {
			mdb_txn_abort(txn);
			return store_err(rc, "open");
		}
	}
	rc = mdb_txn_commit(txn);
	return rc ? store_write_err(st, rc, "open") : 0;
}

/* Keep the first problem a structure check reports, for the open's error. */
static void first_problem(void *ctx, const char *problem)
{
	char *m = ctx;

	if (!*m)
		snprintf(m, 256, "%s", problem);
}

/*
 * Check what opening the data file reads before LMDB maps it (pages.c):
 * damage there is an error that says what to do, not a crash. A writer in
 * another process may move the tree under the check; a problem seen while
 * the transaction id changed is checked again.
 */
static int check_pages(const char *data)
{
	char m[256] = "";
	pages_report rep, prev = {0};
	int fd = open(data, O_RDONLY | O_CLOEXEC), rc = 0;

	if (fd < 0)
		return err_set(CAIRN_EIO, "%s: %s", data, strerror(errno));
	for (int tries = 0; tries < 4; tries++) {
		m[0] = '\0';
		rc = pages_check(fd, 0, first_problem, m, &rep);
		if (rc || !rep.problems || (tries && rep.txnid == prev.txnid))
			break;
		prev = rep;
	}
	close(fd);
	if (!rc && rep.problems)
		rc = err_set(CAIRN_ECORRUPT, "%s is damaged (%s): restore the store from a "
					     "backup (docs/storage.md, \"Damage\")", data, m);
	return rc;
}

/* Create and open st's LMDB environment (st->env), with the map size it has or needs. */
static int env_open(cairn_store *st)
{
	MDB_envinfo info;
	int rc = mdb_env_create(&st->env);

	if (rc) {
		st->env = NULL;
		return err_set(CAIRN_ENOMEM, "open: %s", mdb_strerror(rc));
	}
	mdb_env_set_assert(st->env, store_guard_assert);
	mdb_env_set_maxdbs(st->env, DB_COUNT + 2);
	mdb_env_set_maxreaders(st->env, st->max_readers);
	mdb_env_set_mapsize(st->env, st->map_size);
	rc = mdb_env_open(st->env, st->path, st->env_flags, 0644);
	if (rc)
		return store_err(rc, st->path);
	mdb_env_info(st->env, &info);
	st->map_size = info.me_mapsize;
	return 0;
}

/*
 * LMDB marks its environment dead (MDB_PANIC) when writing a meta page
 * failed: the file still holds the last commit that was made, but no
 * transaction may begin again. Open it again, once every transaction of
 * this process has ended (the map lock, held exclusively), so that a
 * server goes on after the disk's error without a restart.
 */
static int env_reopen(cairn_store *st)
{
	MDB_txn *t;
	int rc;

	pthread_rwlock_wrlock(&st->maplock);
	if (mdb_txn_begin(st->env, NULL, MDB_RDONLY, &t) == 0) {
		mdb_txn_abort(t); /* another thread reopened it already */
		pthread_rwlock_unlock(&st->maplock);
		return 0;
	}
	store_guard_untrack(st);
	mdb_env_close(st->env);
	rc = env_open(st);
	if (!rc)
		rc = open_dbis(st, 0);
	if (!rc)
		store_guard_track(st);
	pthread_rwlock_unlock(&st->maplock);
	return rc;
}

int store_check_pages(cairn_store *st, pages_problem_fn cb, void *ctx, uint64_t *problems)
{
	char data[PATH_MAX + 16];
	MDB_envinfo info;
	pages_report rep = {0};
	uint64_t prev = 0;
	int fd, rc = 0;

	*problems = 0;
	mdb_env_info(st->env, &info);
	pthread_mutex_lock(&st->cache_lock);
	if (st->pages_txnid && st->pages_txnid == info.me_last_txnid) {
		*problems = st->pages_problems;
		pthread_mutex_unlock(&st->cache_lock);
		if (*problems && cb)
			cb(ctx, "data file: its structure is damaged (the problems were listed by the "
				"check before this one)");
		return 0;
	}
	pthread_mutex_unlock(&st->cache_lock);
	snprintf(data, sizeof(data), "%s/data.mdb", st->path);
	fd = open(data, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return err_set(CAIRN_EIO, "%s: %s", data, strerror(errno));
	/*
	 * A writer may move the tree under the walk: problems seen while the
	 * transaction changed are looked at again, reported only when stable.
	 */
	for (int tries = 0; tries < 4; tries++) {
		rc = pages_check(fd, 1, NULL, NULL, &rep);
		if (rc || !rep.problems || (tries && rep.txnid == prev))
			break;
		prev = rep.txnid;
	}
	if (!rc && rep.problems && cb)
		rc = pages_check(fd, 1, cb, ctx, &rep);
	close(fd);
	if (rc)
		return rc;
	*problems = rep.problems;
	pthread_mutex_lock(&st->cache_lock);
	st->pages_txnid = rep.txnid;
	st->pages_problems = rep.problems;
	pthread_mutex_unlock(&st->cache_lock);
	return 0;
}

int store_open(const char *path, const cairn_open_options *opts, cairn_store **out)
{
	cairn_open_options o = {0};
	cairn_store *st;
	char real[PATH_MAX], data[PATH_MAX + 16];
	struct stat sb;
	unsigned mflags = MDB_NOTLS;
	int rc, exists;

	if (!out)
		return err_set(CAIRN_EINVAL, "cairn_open: out is NULL");
	*out = NULL;
	if (!path || !*path)
		return err_set(CAIRN_EINVAL, "cairn_open: no path");
	if (opts)
		o = *opts;
	if (stat(path, &sb) != 0) {
		if (errno != ENOENT)
			return err_set(CAIRN_EIO, "%s: %s", path, strerror(errno));
		if (!(o.flags & CAIRN_OPEN_CREATE))
			return err_set(CAIRN_ENOTFOUND, "%s: no store (create it with cairn init)",
				       path);
		if (mkdir(path, 0755) != 0 && errno != EEXIST)
			return err_set(CAIRN_EIO, "%s: %s", path, strerror(errno));
	} else if (!S_ISDIR(sb.st_mode)) {
		return err_set(CAIRN_EINVAL, "%s: not a directory", path);
	}
	if (!realpath(path, real))
		return err_set(CAIRN_EIO, "%s: %s", path, strerror(errno));
	snprintf(data, sizeof(data), "%s/data.mdb", real);
	exists = stat(data, &sb) == 0;
	if (!exists && !(o.flags & CAIRN_OPEN_CREATE))
		return err_set(CAIRN_ENOTFOUND, "%s: no store (create it with cairn init)", path);

	if (exists && sb.st_size > 0) {
		rc = check_pages(data);
		if (rc)
			return rc;
	}
	rc = register_path(real);
	if (rc)
		return rc;
	st = cr_calloc(1, sizeof(*st));
	if (!st) {
		unregister_path(real);
		return err_set(CAIRN_ENOMEM, "out of memory");
	}
	/*
	 * Every process that has the store open holds lock.mdb shared, taken
	 * before the data file is mapped: cairn_vacuum, which replaces the data
	 * file, takes it exclusively, so neither runs under the other.
	 */
	{
		char lk[PATH_MAX + 16];

		snprintf(lk, sizeof(lk), "%s/lock.mdb", real);
		st->lock_fd = open(lk, (o.flags & CAIRN_OPEN_RDONLY) ? O_RDONLY : O_RDWR | O_CREAT,
				   0644);
		if (st->lock_fd >= 0 && flock(st->lock_fd, LOCK_SH | LOCK_NB) != 0) {
			close(st->lock_fd);
			cr_free(st);
			unregister_path(real);
			return err_set(CAIRN_ELOCKED, "store %s is being vacuumed: open it when the "
						      "vacuum is done", real);
		}
	}
	st->flags = o.flags;
	st->path = cr_strdup(real);
	if (!st->path) {
		rc = err_set(CAIRN_ENOMEM, "out of memory");
		goto out_free;
	}
	pthread_rwlock_init(&st->maplock, NULL);
	pthread_mutex_init(&st->wlock, NULL);
	pthread_mutex_init(&st->cache_lock, NULL);

	st->map_size = o.map_size ? (size_t)o.map_size : MAP_DEFAULT;
	st->kseg_min = KSEG_MIN_DEFAULT;
	st->kseg_fold = KSEG_FOLD_DEFAULT;
	st->kseg_fold_entries = KSEG_FOLD_ENTRIES;
	if (exists && (size_t)sb.st_size * 2 > st->map_size)
		st->map_size = (size_t)sb.st_size * 2;
	if (o.flags & CAIRN_OPEN_RDONLY)
		mflags |= MDB_RDONLY;
	if (o.flags & CAIRN_OPEN_NOSYNC)
		mflags |= MDB_NOSYNC;
	st->env_flags = mflags;
	st->max_readers = o.max_readers ? o.max_readers : 512;
	rc = env_open(st);
	if (rc == CAIRN_ENOMEM)
		goto out_free;
	if (rc)
		goto out_env;
	rc = open_dbis(st, !exists && !(o.flags & CAIRN_OPEN_RDONLY));
	if (rc)
		goto out_env;
	rc = check_format(st, !exists);
	if (rc)
		goto out_env;
	store_guard_track(st);
	*out = st;
	return 0;
out_env:
	mdb_env_close(st->env);
out_free:
	if (st->lock_fd >= 0)
		close(st->lock_fd);
	unregister_path(real);
	pthread_rwlock_destroy(&st->maplock);
	pthread_mutex_destroy(&st->wlock);
	pthread_mutex_destroy(&st->cache_lock);
	cr_free(st->path);
	cr_free(st);
	return rc;
}

void store_close(cairn_store *st)
{
	if (!st)
		return;
	if (st->cache && st->cache_free)
		st->cache_free(st->cache);
	store_guard_untrack(st);
	mdb_env_close(st->env);
	if (st->lock_fd >= 0)
		close(st->lock_fd);
	unregister_path(st->path);
	pthread_rwlock_destroy(&st->maplock);
	pthread_mutex_destroy(&st->wlock);
	pthread_mutex_destroy(&st->cache_lock);
	cr_free(st->path);
	cr_free(st);
}

/* Adopt a map size grown by another process. */
static int adopt_map(cairn_store *st)
{
	int rc;

	pthread_rwlock_wrlock(&st->maplock);
	rc = mdb_env_set_mapsize(st->env, 0);
	if (!rc) {
		MDB_envinfo info;

		mdb_env_info(st->env, &info);
		st->map_size = info.me_mapsize;
		store_guard_track(st);
	}
	pthread_rwlock_unlock(&st->maplock);
	return rc ? store_err(rc, "resize") : 0;
}

int store_read_begin(cairn_store *st, MDB_txn **txn)
{
	int rc;

	for (int tries = 0; tries < 3; tries++) {
		pthread_rwlock_rdlock(&st->maplock);
		rc = mdb_txn_begin(st->env, NULL, MDB_RDONLY, txn);
		if (rc == 0)
			return 0;
		pthread_rwlock_unlock(&st->maplock);
		if (rc == MDB_PANIC && tries == 0)
			rc = env_reopen(st);
		else if (rc != MDB_MAP_RESIZED)
			return store_err(rc, "read transaction");
		else
			rc = adopt_map(st);
		if (rc)
			return rc;
	}
	return err_set(CAIRN_EIO, "read transaction: the map keeps being resized");
}

void store_read_end(cairn_store *st, MDB_txn *txn)
{
	if (!txn)
		return;
	mdb_txn_abort(txn);
	pthread_rwlock_unlock(&st->maplock);
}

int store_write_begin(cairn_store *st, MDB_txn **txn)
{
	int rc;

	if (st->flags & CAIRN_OPEN_RDONLY)
		return err_set(CAIRN_EREADONLY, "the store was opened read-only");
	pthread_mutex_lock(&st->wlock);
	for (int tries = 0; tries < 3; tries++) {
		pthread_rwlock_rdlock(&st->maplock);
		rc = txn_begin(st->env, 0, txn);
		if (rc == 0)
			return 0;
		pthread_rwlock_unlock(&st->maplock);
		if (rc == MDB_PANIC && tries == 0)
			rc = env_reopen(st);
		else if (rc != MDB_MAP_RESIZED)
			break;
		else
			rc = adopt_map(st);
		if (rc) {
			pthread_mutex_unlock(&st->wlock);
			return rc;
		}
	}
	pthread_mutex_unlock(&st->wlock);
	return store_err(rc, "write transaction");
}

/*
 * Below this much free space, a write LMDB reports as EIO (it says so for
 * a short write, which a full disk makes) is taken for a full disk.
 */
#define DISK_FULL_SLACK (32u << 20)

int store_write_err(const cairn_store *st, int rc, const char *what)
{
	struct statvfs fs;
	unsigned long long avail;

	if ((rc != ENOSPC && rc != EDQUOT && rc != EIO) || statvfs(st->path, &fs) != 0)
		return store_err(rc, what);
	avail = (unsigned long long)fs.f_bavail * fs.f_frsize;
	if (rc == EIO && avail >= DISK_FULL_SLACK)
		return err_set(CAIRN_EIO, "%s: the disk reported an I/O error writing the store: "
					  "nothing of this write was kept, and what was committed "
					  "before is intact; check the disk (the system log says "
					  "more), then write again", what);
	return err_set(CAIRN_EMAPFULL,
		       "%s: the disk holding the store is full (%llu bytes free for it%s): nothing "
		       "of this write was kept; free space there, or move the store to a larger "
		       "disk, and write again",
		       what, avail, rc == EDQUOT ? ", or its quota is reached" : "");
}

/* Commit and let go of the writer; LMDB's own result. */
static int commit_raw(cairn_store *st, MDB_txn *txn)
{
	int rc = mdb_txn_commit(txn);

	pthread_rwlock_unlock(&st->maplock);
	pthread_mutex_unlock(&st->wlock);
	return rc;
}

void store_write_abort(cairn_store *st, MDB_txn *txn)
{
	mdb_txn_abort(txn);
	pthread_rwlock_unlock(&st->maplock);
	pthread_mutex_unlock(&st->wlock);
}

int store_grow(cairn_store *st)
{
	struct timespec ts = {0, 1000000};
	size_t want;
	int rc = 0;

	/* Wait (up to ~10 s) for this process's transactions to end. */
	for (int i = 0; pthread_rwlock_trywrlock(&st->maplock) != 0; i++) {
		if (i > 10000)
			return err_set(CAIRN_EMAPFULL,
				       "the store is full and cannot grow while read transactions "
				       "of this process stay open");
		nanosleep(&ts, NULL);
	}
	want = st->map_size * 2;
	if (want < st->map_size) {
		rc = err_set(CAIRN_EMAPFULL, "the store cannot grow beyond %zu bytes", st->map_size);
	} else {
		rc = mdb_env_set_mapsize(st->env, want);
		if (rc)
			rc = store_err(rc, "grow");
		else
			st->map_size = want;
		if (!rc)
			store_guard_track(st);
	}
	pthread_rwlock_unlock(&st->maplock);
	return rc;
}

int store_write_commit(cairn_store *st, MDB_txn *txn)
{
	int rc = commit_raw(st, txn);

	return rc ? store_write_err(st, rc, "commit") : 0;
}

int store_write(cairn_store *st, store_write_fn fn, void *arg)
{
	MDB_txn *txn;
	int rc;

	CR_ASSERT(st && fn);
	for (int grown = 0;; grown++) {
		if ((rc = store_write_begin(st, &txn)))
			return rc;
		rc = fn(txn, st, arg);
		if (rc == STORE_DISCARD) {
			store_write_abort(st, txn);
			return 0;
		}
		if (rc) {
			store_write_abort(st, txn);
		} else {
			int mrc = commit_raw(st, txn);

			/* The map full grows; a full disk does not (store_write_err says so). */
			if (mrc && mrc != MDB_MAP_FULL)
				return store_write_err(st, mrc, "commit");
			rc = mrc ? CAIRN_EMAPFULL : 0;
		}
		if (rc != CAIRN_EMAPFULL)
			return rc;
		if (grown == STORE_GROW_MAX)
			return err_set(CAIRN_EMAPFULL, "one write needed the map to double %d times",
				       STORE_GROW_MAX);
		if ((rc = store_grow(st)))
			return rc;
	}
}

int db_get(MDB_txn *txn, cairn_store *st, int db, const void *k, size_t kn, MDB_val *v)
{
	MDB_val key = {kn, (void *)k};
	int rc = mdb_get(txn, st->dbi[db], &key, v);

	if (rc == MDB_NOTFOUND)
		return CAIRN_ENOTFOUND;
	return rc ? store_err(rc, db_names[db]) : 0;
}

int db_put(MDB_txn *txn, cairn_store *st, int db, const void *k, size_t kn, const void *v,
	   size_t vn, unsigned flags)
{
	MDB_val key = {kn, (void *)k}, val = {vn, (void *)v};
	int rc = mdb_put(txn, st->dbi[db], &key, &val, flags);

	return rc ? store_err(rc, db_names[db]) : 0;
}

int db_del(MDB_txn *txn, cairn_store *st, int db, const void *k, size_t kn)
{
	MDB_val key = {kn, (void *)k};
	int rc = mdb_del(txn, st->dbi[db], &key, NULL);

	if (rc == MDB_NOTFOUND)
		return CAIRN_ENOTFOUND;
	return rc ? store_err(rc, db_names[db]) : 0;
}

int db_del_prefix(MDB_txn *txn, cairn_store *st, int db, const void *prefix, size_t n,
		  uint64_t *count)
{
	MDB_cursor *c;
	MDB_val k = {n, (void *)prefix}, v;
	uint64_t deleted = 0;
	int rc;

	rc = mdb_cursor_open(txn, st->dbi[db], &c);
	if (rc)
		return store_err(rc, db_names[db]);
	rc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE);
	while (rc == 0 && k.mv_size >= n && memcmp(k.mv_data, prefix, n) == 0) {
		rc = mdb_cursor_del(c, 0);
		if (rc)
			break;
		deleted++;
		rc = mdb_cursor_get(c, &k, &v, MDB_GET_CURRENT);
		if (rc == MDB_NOTFOUND || rc == EINVAL)
			rc = mdb_cursor_get(c, &k, &v, MDB_NEXT);
	}
	mdb_cursor_close(c);
	if (count)
		*count = deleted;
	if (rc == MDB_NOTFOUND)
		return 0;
	return rc ? store_err(rc, db_names[db]) : 0;
}

int meta_get_u64(MDB_txn *txn, cairn_store *st, const char *name, uint64_t *v)
{
	MDB_val val;
	int rc = db_get(txn, st, DB_META, name, strlen(name), &val);

	if (rc == CAIRN_ENOTFOUND) {
		*v = 0;
		return 0;
	}
	if (rc)
		return rc;
	if (val.mv_size != 8)
		return err_set(CAIRN_ECORRUPT, "meta %s: bad size", name);
	*v = be64_get(val.mv_data);
	return 0;
}

int meta_put_u64(MDB_txn *txn, cairn_store *st, const char *name, uint64_t v)
{
	uint8_t b[8];

	be64_put(b, v);
	return db_put(txn, st, DB_META, name, strlen(name), b, 8, 0);
}

/*
 * The address of the store's memory map. LMDB reports it only for fixed
 * maps, so find the mapping of data.mdb in /proc/self/maps.
 */
uint8_t *store_map_address(cairn_store *st)
{
	char line[PATH_MAX + 256], want[PATH_MAX + 16];
	unsigned long lo, hi, best = 0, best_lo = 0;
	FILE *f = fopen("/proc/self/maps", "r");
	size_t wn;

	if (!f)
		return NULL;
	snprintf(want, sizeof(want), "%s/data.mdb", st->path);
	wn = strlen(want);
	while (fgets(line, sizeof(line), f)) {
		size_t n = strcspn(line, "\n");

		line[n] = '\0';
		if (n < wn || strcmp(line + n - wn, want) != 0)
			continue;
		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && hi - lo > best) {
			best = hi - lo;
			best_lo = lo;
		}
	}
	fclose(f);
	return (uint8_t *)best_lo;
}

int cairn_store_warm(cairn_store *st)
{
	MDB_envinfo info;
	MDB_stat ms;
	size_t used, page;
	volatile const uint8_t *p;
	uint8_t sum = 0;

	if (!st)
		return err_set(CAIRN_EINVAL, "cairn_store_warm: NULL store");
	mdb_env_info(st->env, &info);
	mdb_env_stat(st->env, &ms);
	page = ms.ms_psize;
	used = (info.me_last_pgno + 1) * page;
	p = store_map_address(st);
	if (!p)
		return err_set(CAIRN_EIO, "the store's map was not found");
#ifdef MADV_POPULATE_READ
	if (madvise((void *)p, used, MADV_POPULATE_READ) == 0)
		return 0;
#endif
	/* Older kernels: touch one byte per page. */
	madvise((void *)p, used, MADV_WILLNEED);
	for (size_t off = 0; off < used; off += page)
		sum ^= p[off];
	(void)sum;
	return 0;
}

int cairn_store_stats(cairn_store *st, cairn_db_stats *out, size_t cap, size_t *n)
{
	MDB_txn *txn;
	int rc;

	if (!st || !out || !n)
		return err_set(CAIRN_EINVAL, "cairn_store_stats: NULL argument");
	*n = 0;
	rc = store_read_begin(st, &txn);
	if (rc)
		return rc;
	for (int i = 0; i < DB_COUNT && *n < cap; i++) {
		MDB_stat ms;

		rc = mdb_stat(txn, st->dbi[i], &ms);
		if (rc) {
			store_read_end(st, txn);
			return store_err(rc, "stat");
		}
		out[*n].name = db_names[i];
		out[*n].entries = ms.ms_entries;
		out[*n].pages = ms.ms_branch_pages + ms.ms_leaf_pages + ms.ms_overflow_pages;
		out[*n].bytes = out[*n].pages * ms.ms_psize;
		(*n)++;
	}
	store_read_end(st, txn);
	return 0;
}
