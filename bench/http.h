/* The server measured by in-process clients over loopback (bench/http.c). */
#ifndef CAIRN_BENCH_HTTP_H
#define CAIRN_BENCH_HTTP_H

#include <stddef.h>

typedef struct http_bench_in {
	const char *store;	/* the store, closed by the caller meanwhile */
	const char *domain;
	const char *token;	/* a writer (or admin) token of the Domain */
	char (*kinds)[64];	/* keys to read */
	char (*keys)[64];
	size_t n_keys;
	char (*supplier_keys)[64]; /* Suppliers to update (their "rating") */
	size_t n_supplier_keys;
	unsigned warmup, calls;
} http_bench_in;

typedef struct http_bench_out {
	double get_p50, get_p95, get_p99;	/* microseconds, one client */
	double reads_per_s;
	unsigned read_conns;
	double commits_per_s, commit_p50, commit_p95, commit_p99;
	unsigned commit_conns;
	double idle_conn_bytes;
	unsigned idle_conns;
	unsigned failed;
} http_bench_out;

int http_bench(const http_bench_in *in, http_bench_out *out);

#endif
