/*
 * cairn-bench: the benchmark with its peers. `make bench` runs it:
 *   cairn-bench [--size N] [--seed S] [--peers] [--keep DIR [reuse]] [--out FILE]
 *   cairn-bench --vectors [--npm DIR] ...: the vector benchmark (usearch, with --peers,
 *   from DIR/node_modules)
 * It is the runner of `cairn bench`, plus SQLite and PostgreSQL run beside
 * Cairn on the same data and calls (--peers). See docs/performance.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/bench.h"
#include "bench/gen.h"

static int usage(void)
{
	fprintf(stderr, "usage: cairn-bench [--size N] [--seed S] [--peers] [--keep DIR [reuse]] "
			"[--out FILE] [--vectors [--npm DIR]]\n");
	return 2;
}

static int number(const char *s, uint64_t *v)
{
	char *end;
	double d = strtod(s, &end);

	if (!*s || *end || d < 0 || d != (double)(uint64_t)d)
		return -1;
	*v = (uint64_t)d;
	return 0;
}

int main(int argc, char **argv)
{
	bench_options o = {0};
	char work[256];

	o.records = 100000;
	o.seed = 42;
	o.warmup = 30;
	o.calls = 300;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(a, "--size") == 0 && v && !number(v, &o.records))
			i++;
		else if (strcmp(a, "--seed") == 0 && v && !number(v, &o.seed))
			i++;
		else if (strcmp(a, "--out") == 0 && v)
			o.out = argv[++i];
		else if (strcmp(a, "--keep") == 0 && v) {
			o.work = argv[++i];
			o.keep = 1;
			if (i + 1 < argc && strcmp(argv[i + 1], "reuse") == 0) {
				o.reuse = access(o.work, F_OK) == 0;
				i++;
			}
		} else if (strcmp(a, "--vectors") == 0) {
			o.vectors = 1;
		} else if (strcmp(a, "--npm") == 0 && v) {
			o.npm = argv[++i];
		} else if (strcmp(a, "--peers") == 0) {
			o.peers[o.n_peers++] = peer_sqlite_open;
			o.peers[o.n_peers++] = peer_pg_open;
		} else {
			return usage();
		}
	}
	if (o.records < GEN_MIN_RECORDS || o.records > GEN_MAX_RECORDS) {
		fprintf(stderr, "cairn-bench: --size is %llu to %llu\n", GEN_MIN_RECORDS,
			GEN_MAX_RECORDS);
		return 2;
	}
	if (!o.work) {
		snprintf(work, sizeof(work), "%s/cairn-bench-%d",
			 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
		o.work = work;
	}
	if (o.vectors) {
		if (!o.n_peers)
			o.npm = NULL; /* usearch runs with the other peers */
		return bench_vectors(&o) ? 1 : 0;
	}
	return bench_run(&o) ? 1 : 0;
}
