/*
 * An engine the benchmark compares: Cairn, or a peer (SQLite, PostgreSQL)
 * holding the same data with the same indexes. Every operation is one
 * transaction of its own (a read, or a durable commit), called with the same
 * arguments on every engine, so the times sit side by side.
 */
#ifndef CAIRN_BENCH_ENGINE_H
#define CAIRN_BENCH_ENGINE_H

#include <stddef.h>
#include <stdint.h>

typedef struct engine engine;

#define SEARCH_TOP 20
#define SEARCH_HIT_BYTES 80

/* One update: set a numeric attribute of a Record. */
typedef struct bench_update {
	const char *kind, *key, *attr;
	long value;
} bench_update;

/*
 * One attribute query, the first `limit` Records of a Kind: attr = lo in key
 * order (hi NULL), or lo <= attr < hi in the attribute's order then key's.
 * numeric: lo and hi are numbers (else strings: enums, keys, dates).
 */
typedef struct bench_query {
	const char *kind, *attr, *lo, *hi;
	int numeric;
	unsigned limit;
} bench_query;

struct engine {
	const char *name;
	const char *config;	/* its configuration, for the page */
	void *h;
	/* Load records.jsonl then links.jsonl of dir; times each. */
	int (*load)(engine *e, const char *dir, double *records_s, double *links_s);
	int (*get)(engine *e, const char *kind, const char *key, uint64_t *bytes);
	int (*page)(engine *e, const char *kind, const char *after, unsigned limit, uint64_t *bytes);
	int (*links)(engine *e, const char *kind, const char *key, uint64_t *bytes);
	int (*count)(engine *e, const char *kind, uint64_t *n);
	int (*query)(engine *e, const bench_query *q, uint64_t *bytes);
	/*
	 * The Records a text names: its key in any Kind, or a title equal to it
	 * ignoring case (the peers' share of resolution: no accents, no spellings).
	 */
	int (*resolve)(engine *e, const char *text, uint64_t *bytes);
	/* The 2-hop neighborhood of a Record, both directions, no cap: its Records and Links. */
	int (*hood)(engine *e, const char *kind, const char *key, int values, uint64_t *bytes,
		    uint64_t *nodes);
	/*
	 * Full-text search of the titles, the best SEARCH_TOP first: every word
	 * (a text in double quotes: a phrase), or with any, some of them. Their
	 * "Kind:key" into hits, *n how many.
	 */
	int (*search)(engine *e, const char *text, int any, char (*hits)[SEARCH_HIT_BYTES],
		      size_t *n, uint64_t *bytes);
	/* One durable commit of n updates. */
	int (*update)(engine *e, const bench_update *u, size_t n);
	uint64_t (*size)(engine *e);	/* bytes on disk */
	void (*close)(engine *e);
	char err[512];
};

/* Peers: open a fresh one under dir (NULL when unavailable, with the reason in why). */
engine *peer_sqlite_open(const char *dir, char *why, size_t whylen);
engine *peer_pg_open(const char *dir, char *why, size_t whylen);

#endif
