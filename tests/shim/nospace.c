/*
 * A preloaded shim for tests (LD_PRELOAD): writes to a file named data.mdb
 * fail as on a full disk while the file $CAIRN_NOSPACE_FLAG names exists.
 * Its first byte says how: 'e', the write fails with ENOSPC; 's', half of
 * it is written (the short write a full disk makes) and statvfs says
 * nothing is free; 'i', the write fails with EIO on a disk with room. The
 * flag is read at each write, so a running server can be switched.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <sys/uio.h>
#include <unistd.h>

#include "datafile.h"

static char mode(void)
{
	const char *f = getenv("CAIRN_NOSPACE_FLAG");
	char c = 0;
	int fd;

	if (!f || (fd = open(f, O_RDONLY)) < 0)
		return 0;
	if (read(fd, &c, 1) != 1)
		c = 0;
	close(fd);
	return c;
}

/* What a write of n bytes to fd does now: -1 with errno, a short count, or n + 1 (go on). */
static ssize_t fault(int fd, size_t n)
{
	char m = is_data(fd) ? mode() : 0;

	if (m == 'e' || m == 'i') {
		errno = m == 'e' ? ENOSPC : EIO;
		return -1;
	}
	if (m == 's')
		return (ssize_t)(n / 2);
	return (ssize_t)n + 1;
}

ssize_t pwrite(int fd, const void *b, size_t n, off_t off)
{
	static ssize_t (*real)(int, const void *, size_t, off_t);
	ssize_t f = fault(fd, n);

	if (!real)
		real = dlsym(RTLD_NEXT, "pwrite");
	return f < 0 ? f : real(fd, b, f == (ssize_t)n + 1 ? n : (size_t)f, off);
}

ssize_t write(int fd, const void *b, size_t n)
{
	static ssize_t (*real)(int, const void *, size_t);
	ssize_t f = fault(fd, n);

	if (!real)
		real = dlsym(RTLD_NEXT, "write");
	return f < 0 ? f : real(fd, b, f == (ssize_t)n + 1 ? n : (size_t)f);
}

ssize_t writev(int fd, const struct iovec *v, int cnt)
{
	static ssize_t (*real)(int, const struct iovec *, int);
	struct iovec half;
	size_t n = 0;
	ssize_t f;

	for (int i = 0; i < cnt; i++)
		n += v[i].iov_len;
	f = fault(fd, n);
	if (!real)
		real = dlsym(RTLD_NEXT, "writev");
	if (f < 0 || f == (ssize_t)n + 1 || cnt < 1)
		return f < 0 ? f : real(fd, v, cnt);
	half.iov_base = v[0].iov_base; /* short: half of the first buffer */
	half.iov_len = v[0].iov_len / 2;
	return real(fd, &half, 1);
}

int statvfs(const char *path, struct statvfs *buf)
{
	static int (*real)(const char *, struct statvfs *);
	int rc;

	if (!real)
		real = dlsym(RTLD_NEXT, "statvfs");
	rc = real(path, buf);
	if (rc == 0 && mode() == 's')
		buf->f_bavail = buf->f_bfree = 0;
	return rc;
}
