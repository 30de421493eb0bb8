/* The benchmark runner of cairn-bench (see docs/performance.md). Uses only cairn.h. */
#ifndef CAIRN_BENCH_H
#define CAIRN_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include "bench/engine.h"

typedef struct bench_options {
	uint64_t records;	/* dataset size (default 100,000) */
	uint64_t seed;		/* generator seed (default 42) */
	const char *work;	/* working directory for the dataset and the store */
	const char *out;	/* performance page to update (NULL: print only) */
	int keep;		/* keep the working directory */
	int reuse;		/* reuse a store already built in work */
	unsigned warmup;	/* warm-up calls per read (default 30) */
	unsigned calls;		/* timed calls per read (default 300) */
	/* Peers to run beside Cairn, on the same data and calls (--peers: SQLite, PostgreSQL). */
	engine *(*peers[4])(const char *dir, char *why, size_t whylen);
	size_t n_peers;
	int vectors;		/* the vector benchmark instead (bench_vectors) */
	int memory;		/* the memory benchmark instead (bench_memory) */
	const char *npm;	/* where node_modules/usearch is, for its peer (NULL: none) */
	const char *model;	/* the embedder, for the recall benchmark (NULL: none) */
} bench_options;

int bench_run(const bench_options *o);
/* The vector benchmark (vbench.c): its own dataset, with vectors; its own block of the page. */
int bench_vectors(const bench_options *o);
/* The memory benchmark (mbench.c): remember and digest on a memory Domain; block "memory=N". */
int bench_memory(const bench_options *o);
/* The recall benchmark (locomo.c): conversations in the LoCoMo format; block "locomo". */
int bench_locomo(const bench_options *o, char **files, int n_files);
/*
 * Replace the block tagged tag ("size=N") in the page at path with text,
 * keeping the prose around it and the block it replaces as the previous run.
 */
/*
 * Print a report and, with --out, write it into its block of the page
 * (tag, e.g. "size=N"). 0, or -1 after saying the page could not be written.
 */
int bench_publish(const bench_options *o, const char *tag, const char *text);
/* Remove the working directory (o->work). 0, or -1 when it could not be. */
int bench_remove_work(const bench_options *o);
/* The machine's CPU model, from /proc/cpuinfo ("unknown" when it says none). */
void bench_cpu(char *cpu, size_t n);
int bench_page_update(const char *path, const char *tag, const char *text);

#endif
