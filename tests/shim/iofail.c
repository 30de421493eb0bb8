/*
 * A preloaded shim for tests (LD_PRELOAD): the I/O calls on a file named
 * data.mdb (write, pwrite, writev, fsync, fdatasync) are counted, and the
 * one numbered $CAIRN_IOFAIL_AT (from 1) fails with EIO, as a disk that
 * returns an error does; the others go through. With $CAIRN_IOFAIL_COUNT
 * naming a file, the number of such calls is written there at exit, so
 * that a test can fail each of them in turn.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "datafile.h"

static unsigned long calls;

/* Count a call on fd; 1 when it is the one to fail. */
static int fails(int fd)
{
	const char *at = getenv("CAIRN_IOFAIL_AT");

	if (!is_data(fd))
		return 0;
	calls++;
	return at && strtoul(at, NULL, 10) == calls;
}

__attribute__((destructor)) static void report(void)
{
	const char *f = getenv("CAIRN_IOFAIL_COUNT");
	FILE *out;

	if (f && (out = fopen(f, "w"))) {
		fprintf(out, "%lu\n", calls);
		fclose(out);
	}
}

typedef ssize_t (*pwrite_fn)(int, const void *, size_t, off_t);
typedef ssize_t (*write_fn)(int, const void *, size_t);
typedef ssize_t (*writev_fn)(int, const struct iovec *, int);
typedef int (*sync_fn)(int);

ssize_t pwrite(int fd, const void *b, size_t n, off_t off)
{
	static pwrite_fn real;

	if (!real)
		real = (pwrite_fn)dlsym(RTLD_NEXT, "pwrite");
	if (fails(fd))
		return errno = EIO, -1;
	return real(fd, b, n, off);
}

ssize_t write(int fd, const void *b, size_t n)
{
	static write_fn real;

	if (!real)
		real = (write_fn)dlsym(RTLD_NEXT, "write");
	if (fails(fd))
		return errno = EIO, -1;
	return real(fd, b, n);
}

ssize_t writev(int fd, const struct iovec *v, int cnt)
{
	static writev_fn real;

	if (!real)
		real = (writev_fn)dlsym(RTLD_NEXT, "writev");
	if (fails(fd))
		return errno = EIO, -1;
	return real(fd, v, cnt);
}

int fsync(int fd)
{
	static sync_fn real;

	if (!real)
		real = (sync_fn)dlsym(RTLD_NEXT, "fsync");
	if (fails(fd))
		return errno = EIO, -1;
	return real(fd);
}

int fdatasync(int fd)
{
	static sync_fn real;

	if (!real)
		real = (sync_fn)dlsym(RTLD_NEXT, "fdatasync");
	if (fails(fd))
		return errno = EIO, -1;
	return real(fd);
}
