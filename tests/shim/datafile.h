/* For the preloaded shims: whether a descriptor is a store's data file (a file named data.mdb). */
#ifndef CAIRN_SHIM_DATAFILE_H
#define CAIRN_SHIM_DATAFILE_H

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int is_data(int fd)
{
	char link[64], path[4096];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n < 9)
		return 0;
	path[n] = '\0';
	return strcmp(path + n - 9, "/data.mdb") == 0;
}

#endif
