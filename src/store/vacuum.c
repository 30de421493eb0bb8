/*
 * cairn vacuum: rewrite a closed store into a fresh data file that holds
 * only live data, and put it in the old one's place.
 *
 * LMDB never shrinks its file and never clears what it frees: the pages a
 * transaction freed keep their bytes until they are reused, and a page
 * keeps the bytes of entries deleted from it in its free space. So after an
 * erasure (admin/erase.c) the erased bytes can still be read from data.mdb.
 * A vacuum copies every key and value of every sub-database, in key order
 * (MDB_APPEND), into a new environment in one write transaction: its pages
 * are new and written once, so they hold the live data and nothing else.
 * The new data.mdb is synced and renamed over the old one (atomic), and the
 * directory synced.
 *
 * It must run alone: every process that opens the store holds lock.mdb
 * with flock(LOCK_SH) (store_open), taken before the data file is mapped;
 * the vacuum takes it with LOCK_EX, without waiting, and refuses
 * (CAIRN_ELOCKED) if anyone holds it. A crash leaves the old store whole
 * and a `.vacuum` folder beside it, which the next vacuum removes.
 *
 * cairn backup: a copy of an open store, made by LMDB from one read
 * transaction (mdb_env_copyfd2, compacting), while the store is in use.
 */
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/err.h"
#include "base/text.h"
#include "store/store.h"

static int mdb_fail(int rc, const char *what)
{
	return store_err(rc, what);
}

/* Every sub-database of src into dst, in one transaction of dst. */
static int copy_all(MDB_env *src, MDB_env *dst)
{
	MDB_txn *rt = NULL, *wt = NULL;
	MDB_cursor *names = NULL;
	MDB_dbi main_dbi;
	MDB_val k, v;
	int rc, mrc;

	if ((mrc = mdb_txn_begin(src, NULL, MDB_RDONLY, &rt)))
		return mdb_fail(mrc, "vacuum: read");
	if ((mrc = mdb_txn_begin(dst, NULL, 0, &wt))) {
		rc = mdb_fail(mrc, "vacuum: write");
		goto out;
	}
	if ((mrc = mdb_dbi_open(rt, NULL, 0, &main_dbi)) ||
	    (mrc = mdb_cursor_open(rt, main_dbi, &names))) {
		rc = mdb_fail(mrc, "vacuum: the sub-databases");
		goto out;
	}
	rc = 0;
	for (mrc = mdb_cursor_get(names, &k, &v, MDB_FIRST); mrc == 0 && !rc;
	     mrc = mdb_cursor_get(names, &k, &v, MDB_NEXT)) {
		char name[256];
		MDB_dbi sd, dd;
		MDB_cursor *c;
		MDB_val ek, ev;
		int crc;

		if (k.mv_size == 0 || k.mv_size >= sizeof(name) ||
		    memchr(k.mv_data, 0, k.mv_size)) {
			rc = err_set(CAIRN_EFORMAT, "vacuum: the store has a key that names no "
						    "sub-database");
			break;
		}
		memcpy(name, k.mv_data, k.mv_size);
		name[k.mv_size] = '\0';
		if ((crc = mdb_dbi_open(rt, name, 0, &sd)) ||
		    (crc = mdb_dbi_open(wt, name, MDB_CREATE, &dd)) ||
		    (crc = mdb_cursor_open(rt, sd, &c))) {
			rc = mdb_fail(crc, name);
			break;
		}
		for (crc = mdb_cursor_get(c, &ek, &ev, MDB_FIRST); crc == 0;
		     crc = mdb_cursor_get(c, &ek, &ev, MDB_NEXT))
			if ((crc = mdb_put(wt, dd, &ek, &ev, MDB_APPEND)))
				break;
		mdb_cursor_close(c);
		if (crc != MDB_NOTFOUND)
			rc = mdb_fail(crc, name);
	}
	if (!rc && mrc != MDB_NOTFOUND)
		rc = mdb_fail(mrc, "vacuum: the sub-databases");
	if (!rc) {
		mrc = mdb_txn_commit(wt);
		wt = NULL;
		if (mrc)
			rc = mdb_fail(mrc, "vacuum: commit");
	}
out:
	if (names)
		mdb_cursor_close(names);
	if (wt)
		mdb_txn_abort(wt);
	mdb_txn_abort(rt);
	return rc;
}

/* Remove dir/.vacuum and what it holds (the two files an environment has). */
static void tmp_remove(const char *tmp)
{
	char f[PATH_MAX + 32];

	snprintf(f, sizeof(f), "%s/data.mdb", tmp);
	unlink(f);
	snprintf(f, sizeof(f), "%s/lock.mdb", tmp);
	unlink(f);
	rmdir(tmp);
}

static int fsync_path(const char *p)
{
	int fd = open(p, O_RDONLY), rc;

	if (fd < 0)
		return -1;
	rc = fsync(fd);
	close(fd);
	return rc;
}

int cairn_vacuum(const char *path, cairn_vacuum_result *out)
{
	uint64_t t0 = time_mono_ns();
	char real[PATH_MAX], data[PATH_MAX + 16], lock[PATH_MAX + 16], tmp[PATH_MAX + 16],
		tdata[PATH_MAX + 32];
	cairn_vacuum_result res;
	MDB_env *src = NULL, *dst = NULL;
	struct stat sb;
	int fd, rc, mrc;

	memset(&res, 0, sizeof(res));
	if (!path || !*path)
		return err_set(CAIRN_EINVAL, "cairn_vacuum: no path");
	if (!realpath(path, real))
		return err_set(errno == ENOENT ? CAIRN_ENOTFOUND : CAIRN_EIO, "%s: %s", path,
			       strerror(errno));
	snprintf(data, sizeof(data), "%s/data.mdb", real);
	snprintf(lock, sizeof(lock), "%s/lock.mdb", real);
	snprintf(tmp, sizeof(tmp), "%s/.vacuum", real);
	snprintf(tdata, sizeof(tdata), "%s/data.mdb", tmp);
	if (stat(data, &sb) != 0)
		return err_set(CAIRN_ENOTFOUND, "%s: no store here", path);
	res.bytes_before = (uint64_t)sb.st_size;
	if ((fd = open(lock, O_RDWR | O_CREAT, 0644)) < 0)
		return err_set(CAIRN_EIO, "%s: %s", lock, strerror(errno));
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		close(fd);
		return err_set(CAIRN_ELOCKED,
			       "store %s is open (by this process or another, such as cairn serve): "
			       "close it, stop the server, and run the vacuum again",
			       real);
	}
	tmp_remove(tmp); /* what a vacuum that crashed left */
	if (mkdir(tmp, 0755) != 0) {
		rc = err_set(CAIRN_EIO, "%s: %s", tmp, strerror(errno));
		goto out;
	}
	if ((mrc = mdb_env_create(&src)) || (mrc = mdb_env_set_maxdbs(src, 64)) ||
	    (mrc = mdb_env_open(src, real, MDB_RDONLY | MDB_NOTLS, 0644))) {
		rc = mdb_fail(mrc, real);
		goto out;
	}
	if ((mrc = mdb_env_create(&dst)) || (mrc = mdb_env_set_maxdbs(dst, 64)) ||
	    (mrc = mdb_env_set_mapsize(dst, (size_t)sb.st_size * 2 + (64u << 20))) ||
	    (mrc = mdb_env_open(dst, tmp, MDB_NOSYNC, 0644))) {
		rc = mdb_fail(mrc, tmp);
		goto out;
	}
	if ((rc = copy_all(src, dst)))
		goto out;
	if ((mrc = mdb_env_sync(dst, 1))) {
		rc = mdb_fail(mrc, "vacuum: sync");
		goto out;
	}
	mdb_env_close(dst);
	dst = NULL;
	mdb_env_close(src);
	src = NULL;
	if (rename(tdata, data) != 0) {
		rc = err_set(CAIRN_EIO, "vacuum: %s: %s", data, strerror(errno));
		goto out;
	}
	fsync_path(real);
	if (stat(data, &sb) == 0)
		res.bytes_after = (uint64_t)sb.st_size;
	rc = 0;
out:
	if (dst)
		mdb_env_close(dst);
	if (src)
		mdb_env_close(src);
	tmp_remove(tmp);
	close(fd);
	res.seconds = (double)(time_mono_ns() - t0) / 1e9;
	if (out)
		*out = res;
	return rc;
}

int cairn_backup(cairn_store *st, const char *dir, cairn_backup_result *out)
{
	cairn_backup_result res;
	char part[PATH_MAX], data[PATH_MAX];
	uint64_t t0 = time_mono_ns();
	struct stat sb;
	DIR *d;
	struct dirent *e;
	int fd, mrc, rc = 0, empty = 1;

	memset(&res, 0, sizeof(res));
	if (out)
		*out = res;
	if (!st || !dir || !*dir)
		return err_set(CAIRN_EINVAL, "cairn_backup: no store or no directory");
	if (snprintf(part, sizeof(part), "%s/data.mdb.partial", dir) >= (int)sizeof(part) ||
	    snprintf(data, sizeof(data), "%s/data.mdb", dir) >= (int)sizeof(data))
		return err_set(CAIRN_EINVAL, "cairn_backup: the directory's path is too long");
	if (mkdir(dir, 0700) != 0) {
		if (errno != EEXIST || stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
			return err_set(errno == EEXIST ? CAIRN_EEXIST : CAIRN_EIO, "%s: %s", dir,
				       errno == EEXIST ? "exists and is not a directory"
						       : strerror(errno));
		if (!(d = opendir(dir)))
			return err_set(CAIRN_EIO, "%s: %s", dir, strerror(errno));
		while ((e = readdir(d)))
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
				empty = 0;
		closedir(d);
		if (!empty)
			return err_set(CAIRN_EEXIST,
				       "%s is not empty: a backup goes into a new or an empty directory",
				       dir);
	}
	if ((fd = open(part, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) < 0)
		return err_set(CAIRN_EIO, "%s: %s", part, strerror(errno));
	/* The copy's read transaction must not meet a growth of the map (env.c). */
	pthread_rwlock_rdlock(&st->maplock);
	mrc = mdb_env_copyfd2(st->env, fd, MDB_CP_COMPACT);
	pthread_rwlock_unlock(&st->maplock);
	if (mrc)
		rc = mdb_fail(mrc, "backup");
	else if (fsync(fd) != 0 || fstat(fd, &sb) != 0)
		rc = err_set(CAIRN_EIO, "%s: %s", part, strerror(errno));
	close(fd);
	if (!rc && rename(part, data) != 0)
		rc = err_set(CAIRN_EIO, "%s: %s", data, strerror(errno));
	if (rc) {
		unlink(part);
		return rc;
	}
	fsync_path(dir);
	res.bytes = (uint64_t)sb.st_size;
	res.seconds = (double)(time_mono_ns() - t0) / 1e9;
	if (out)
		*out = res;
	return 0;
}
