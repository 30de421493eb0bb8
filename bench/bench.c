/*
 * The benchmark: generate the supply workload, import it into a fresh store
 * (durably), then time every operation implemented so far, the way
 * shared/workload.md lists them: 30 warm-up and 300 timed calls per read,
 * random keys drawn from the data, p50/p95/p99/max per operation, and counts
 * that do not depend on the machine (index entries visited, Versions read,
 * B-tree seeks, bytes returned, pages written per commit, bytes per Record).
 *
 * Results go to stdout and, with --out, into docs/performance.md between
 * markers for the dataset size, so that the page's prose survives a re-run
 * and the run it replaces is kept as "previous" for before/after reading.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <lmdb.h>
#include <openssl/opensslv.h>

#include "bench/bench.h"
#include "bench/gen.h"
#include "bench/http.h"
#include "cairn.h"

#define DOMAIN "supply"

typedef struct result {
	char name[96];
	double p50, p95, p99, max; /* microseconds */
	double entries, versions, seeks, bytes; /* per call */
	unsigned calls;
	char note[160];
} result;

#define MAX_ENGINES 4

/* One operation timed on every engine: p50 and p99 per engine. */
typedef struct cmp_row {
	char name[96];
	double p50[MAX_ENGINES], p99[MAX_ENGINES];
	int ok[MAX_ENGINES];
	double overlap[MAX_ENGINES];	/* searches: the share of Cairn's top 20 in the peer's */
	int search;
} cmp_row;

/* An attribute query of q_filters.txt, with its filter in Cairn's JSON form. */
typedef struct qfilter {
	char kind[32], attr[32], lo[64], hi[64];
	int numeric, range;
	char where[256];
	size_t where_len;
} qfilter;

typedef struct bench {
	const bench_options *o;
	cairn_store *st;
	char dir[1024];
	char store[1200];
	/* query keys: kind index and key, from q_keys.txt */
	char (*kinds)[64];
	char (*keys)[64];
	size_t n_keys;
	/* the Records of each Kind in the store, for updates anywhere in it */
	uint64_t kind_count[6], n_records;
	/* attribute queries, from q_filters.txt: equalities and ranges */
	struct qfilter *qeq, *qrange;
	size_t n_qeq, n_qrange;
	/* neighborhoods: the query keys of Parts, and what the calls returned */
	size_t *parts, n_parts;
	uint32_t hood_fanout; /* Links per Record and hop (0: no cap) */
	uint64_t hood_nodes, hood_links, hood_calls;
	uint64_t *hood_sizes; /* Records per call, for the median */
	size_t n_hood_sizes, cap_hood_sizes;
	/* resolution: titles of query Records, as they are, folded and misspelt */
	char (*rtext)[3][256];
	char (*rtext_key)[64];
	size_t n_rtext;
	uint64_t resolve_top1, resolve_calls;
	/* full-text search: q_title_words, q_common_words, q_two_common, q_typos, q_partial,
	 * q_phrases */
	char (*stext[6])[128];
	size_t n_stext[6];
	uint64_t search_hits, search_calls, search_matches;
	result res[32];
	size_t n_res;
	const char *branch;	/* reads on this branch (NULL: main) */
	size_t key_span;	/* reads draw from the first key_span query keys (0: all) */
	/* Versioning: its own table. */
	result vres[24];
	size_t n_vres;
	char (*upd)[64];	/* Supplier keys to update, spread over the Kind, shuffled */
	size_t n_upd, next_upd;
	double space_branch_bytes, space_branch_entries;
	double space_change_branch, space_change_main;
	/* The server. */
	http_bench_out http;
	int have_http;
	double merge_s, import_s, import_rate, open_ms_p50, open_ms_max;
	double import_rec_s, import_link_s;
	uint64_t records, links, store_bytes;
	cairn_db_stats dbs[16];
	size_t n_dbs;
	uint64_t rng;
	double commit1_pages, commit1000_pages, commit_full_pages;
	/* Cairn beside its peers. */
	engine *eng[MAX_ENGINES];
	size_t n_eng;
	double load_rec_s[MAX_ENGINES], load_link_s[MAX_ENGINES];
	uint64_t size[MAX_ENGINES];
	cmp_row cmp[24];
	char (*ref_hits)[SEARCH_TOP][SEARCH_HIT_BYTES]; /* Cairn's hits per call of a search row */
	size_t *ref_n;
	size_t n_cmp;
	char peer_notes[1024];
} bench;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t rnd(bench *b)
{
	uint64_t z = (b->rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void summarize(result *r, double *us, unsigned n)
{
	qsort(us, n, sizeof(double), cmp_double);
	r->calls = n;
	r->p50 = us[n / 2];
	r->p95 = us[(size_t)(n * 0.95)];
	r->p99 = us[(size_t)(n * 0.99)];
	r->max = us[n - 1];
}

static int die(const char *what, int rc)
{
	fprintf(stderr, "bench: %s: %s (%s)\n", what, cairn_errmsg(), cairn_errname(rc));
	return -1;
}

/* Bytes the process wrote through write(2) so far: LMDB writes pages with pwrite. */
static uint64_t wchar(void)
{
	FILE *f = fopen("/proc/self/io", "r");
	char line[128];
	unsigned long long v = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "wchar: %llu", &v) == 1)
			break;
	fclose(f);
	return v;
}

static int load_keys(bench *b)
{
	char path[1200], line[256];
	FILE *f;
	size_t cap = 1024;

	snprintf(path, sizeof(path), "%s/q_keys.txt", b->dir);
	f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "bench: %s: %s\n", path, strerror(errno));
		return -1;
	}
	b->kinds = malloc(cap * sizeof(*b->kinds));
	b->keys = malloc(cap * sizeof(*b->keys));
	while (b->kinds && b->keys && fgets(line, sizeof(line), f)) {
		char *tab = strchr(line, '\t'), *nl;

		if (!tab)
			continue;
		*tab = '\0';
		if ((nl = strchr(tab + 1, '\n')))
			*nl = '\0';
		if (b->n_keys == cap) {
			cap *= 2;
			b->kinds = realloc(b->kinds, cap * sizeof(*b->kinds));
			b->keys = realloc(b->keys, cap * sizeof(*b->keys));
			if (!b->kinds || !b->keys)
				break;
		}
		snprintf(b->kinds[b->n_keys], 64, "%.63s", line);
		snprintf(b->keys[b->n_keys], 64, "%.63s", tab + 1);
		b->n_keys++;
	}
	fclose(f);
	if (b->n_keys && !(b->parts = malloc(b->n_keys * sizeof(*b->parts))))
		return -1;
	for (size_t i = 0; i < b->n_keys; i++)
		if (strcmp(b->kinds[i], "Part") == 0)
			b->parts[b->n_parts++] = i;
	return b->n_keys && b->n_parts ? 0 : -1;
}

static int numeric(const char *s)
{
	char *end;

	if (!*s)
		return 0;
	(void)strtod(s, &end);
	return !*end;
}

static void json_value(char *out, size_t n, const char *v, int num)
{
	snprintf(out, n, num ? "%s" : "\"%s\"", v);
}

/* Append q to a list that grows by doubling (capacity: 16, then the next power of two). */
static int push_filter(qfilter **list, size_t *n, const qfilter *q)
{
	if (*n == 0 || (*n >= 16 && !(*n & (*n - 1)))) {
		qfilter *nl = realloc(*list, (*n ? *n * 2 : 16) * sizeof(**list));

		if (!nl)
			return -1;
		*list = nl;
	}
	(*list)[(*n)++] = *q;
	return 0;
}

/* q_filters.txt: Kind, attribute and a value (equality) or two (a range, lo <= v < hi). */
static int load_filters(bench *b)
{
	char path[1200], line[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/q_filters.txt", b->dir);
	if (!(f = fopen(path, "r"))) {
		fprintf(stderr, "bench: %s: %s\n", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		char *fld[4] = {NULL, NULL, NULL, NULL}, *save = NULL, lo[80], hi[80];
		int nf = 0;
		qfilter q;

		line[strcspn(line, "\n")] = '\0';
		for (char *t = strtok_r(line, "\t", &save); t && nf < 4; t = strtok_r(NULL, "\t", &save))
			fld[nf++] = t;
		if (nf < 3)
			continue;
		memset(&q, 0, sizeof(q));
		snprintf(q.kind, sizeof(q.kind), "%.31s", fld[0]);
		snprintf(q.attr, sizeof(q.attr), "%.31s", fld[1]);
		snprintf(q.lo, sizeof(q.lo), "%.63s", fld[2]);
		q.range = nf == 4;
		q.numeric = numeric(q.lo);
		json_value(lo, sizeof(lo), q.lo, q.numeric);
		if (q.range) {
			snprintf(q.hi, sizeof(q.hi), "%.63s", fld[3]);
			json_value(hi, sizeof(hi), q.hi, q.numeric);
			q.where_len = (size_t)snprintf(q.where, sizeof(q.where),
						       "{\"%s\":{\"gte\":%s,\"lt\":%s}}", q.attr, lo, hi);
		} else {
			q.where_len = (size_t)snprintf(q.where, sizeof(q.where), "{\"%s\":%s}", q.attr, lo);
		}
		if (push_filter(q.range ? &b->qrange : &b->qeq, q.range ? &b->n_qrange : &b->n_qeq, &q))
			break;
	}
	fclose(f);
	return b->n_qeq && b->n_qrange ? 0 : -1;
}

/* ------------------------------------------------------------- build -- */

static void gen_progress(void *ctx, uint64_t done, uint64_t total)
{
	(void)ctx;
	if (isatty(STDERR_FILENO))
		fprintf(stderr, "\r  generating %llu / %llu Records", (unsigned long long)done,
			(unsigned long long)total);
}

static int build(bench *b)
{
	/* No maintenance thread: the import's segments are merged after it, timed apart. */
	cairn_open_options oo = {.flags = CAIRN_OPEN_CREATE | CAIRN_OPEN_NO_BACKGROUND};
	cairn_commit_options co = {0};
	cairn_import_options io;
	cairn_import_stats stats;
	cairn_import *im;
	gen_options go = {0};
	gen_stats gs;
	char path[1200], *json = NULL;
	size_t len = 0;
	FILE *f;
	int rc;
	const char *files[] = {"records.jsonl", "links.jsonl"};

	go.records = b->o->records;
	go.seed = b->o->seed;
	go.dir = b->dir;
	go.progress = gen_progress;
	go.stats = &gs;
	if (gen_run(&go))
		return -1;
	if (isatty(STDERR_FILENO))
		fprintf(stderr, "\n");
	/*
	 * The dataset just written is still being flushed by the kernel: wait for
	 * it, so that the timed import's syncs do not queue behind it.
	 */
	sync();
	snprintf(path, sizeof(path), "%s/schema.json", b->dir);
	f = fopen(path, "r");
	if (!f)
		return -1;
	{
		FILE *m = open_memstream(&json, &len);
		int ch;

		while ((ch = fgetc(f)) != EOF)
			fputc(ch, m);
		fclose(m);
	}
	fclose(f);
	if ((rc = cairn_open(b->store, &oo, &b->st)) || (rc = cairn_domain_create(b->st, DOMAIN)))
		return die("create store", rc);
	co.domain = DOMAIN;
	co.prov.actor = "bench";
	rc = cairn_schema_apply(b->st, &co, json, len, NULL);
	free(json);
	if (rc)
		return die("schema", rc);
	memset(&io, 0, sizeof(io));
	io.commit = co;
	io.commit.prov.source = "supply workload";
	/* Records, then Links: each file is one import, timed on its own. */
	for (int i = 0; i < 2; i++) {
		uint64_t t0 = now_ns();
		int erc;

		snprintf(path, sizeof(path), "%s/%s", b->dir, files[i]);
		f = fopen(path, "r");
		if (!f)
			return -1;
		if ((rc = cairn_import_begin(b->st, &io, &im))) {
			fclose(f);
			return die("import", rc);
		}
		rc = cairn_import_feed(im, files[i], f);
		fclose(f);
		erc = cairn_import_end(im, &stats);
		if (!rc)
			rc = erc;
		if (rc)
			return die("import", rc);
		if (i == 0) {
			b->import_rec_s = (double)(now_ns() - t0) / 1e9;
			b->records = stats.records;
		} else {
			b->import_link_s = (double)(now_ns() - t0) / 1e9;
			b->links = stats.links;
		}
	}
	b->import_s = b->import_rec_s + b->import_link_s;
	b->import_rate = (double)b->records / b->import_rec_s;
	{
		uint64_t t0 = now_ns();
		int pending = 1;

		while (pending && !rc)
			rc = cairn_store_maintain(b->st, 2000, &pending);
		if (rc)
			return die("maintain", rc);
		b->merge_s = (double)(now_ns() - t0) / 1e9;
	}
	/* Sizes as imported (segments merged), before the timed commits add Versions. */
	if ((rc = cairn_store_stats(b->st, b->dbs, 16, &b->n_dbs)))
		return die("stats", rc);
	return 0;
}

/* -------------------------------------------------------------- reads -- */

typedef int (*read_fn)(bench *b, cairn_txn *t, size_t i, uint64_t *bytes);

static int op_get(bench *b, cairn_txn *t, size_t i, uint64_t *bytes)
{
	cairn_record r;
	int rc = cairn_get(t, b->kinds[i], b->keys[i], strlen(b->keys[i]), &r);

	*bytes += r.key_len + r.title_len + r.values_len;
	return rc;
}

static int op_page(bench *b, cairn_txn *t, size_t i, uint64_t *bytes)
{
	cairn_record r[50];
	size_t n;
	int rc = cairn_page(t, b->kinds[i], b->keys[i], strlen(b->keys[i]), r, 50, &n);

	for (size_t j = 0; j < n; j++)
		*bytes += r[j].key_len + r[j].title_len + r[j].values_len;
	return rc;
}

static int op_links(bench *b, cairn_txn *t, size_t i, uint64_t *bytes)
{
	cairn_link l[100];
	cairn_link_cursor cur;
	size_t n;
	int rc;

	memset(&cur, 0, sizeof(cur));
	rc = cairn_links(t, b->kinds[i], b->keys[i], strlen(b->keys[i]), CAIRN_BOTH, NULL, &cur, l,
			 100, &n);
	for (size_t j = 0; j < n; j++)
		*bytes += l[j].from_key_len + l[j].to_key_len + l[j].values_len;
	return rc;
}

static int op_count(bench *b, cairn_txn *t, size_t i, uint64_t *bytes)
{
	uint64_t n;

	*bytes += 8;
	return cairn_count(t, b->kinds[i], &n);
}

/* The first 50 Records of a filter: in key order (equality), in the attribute's order (range). */
static int run_query(cairn_txn *t, const qfilter *f, uint64_t *bytes)
{
	cairn_query_options q = {0};
	cairn_query_result res;
	cairn_record r[50];
	int rc;

	q.kind = f->kind;
	q.where = f->where;
	q.where_len = f->where_len;
	q.sort = f->range ? f->attr : NULL;
	q.limit = 50;
	rc = cairn_query(t, &q, r, 50, &res);
	for (size_t j = 0; !rc && j < res.n; j++)
		*bytes += r[j].key_len + r[j].title_len + r[j].values_len;
	return rc;
}

/* The 2-hop neighborhood of a Part, both directions, uncapped (as the peers' SQL) or not. */
static int run_hood(bench *b, cairn_txn *t, size_t k, int values, uint64_t *bytes, cairn_graph *g)
{
	cairn_neighborhood_options o = {0};
	cairn_ref r = {b->kinds[k], b->keys[k], 0};
	int rc;

	o.start = &r;
	o.n_start = 1;
	o.depth = 2;
	o.fanout = b->hood_fanout ? b->hood_fanout : CAIRN_MAX_NODES;
	o.max_nodes = CAIRN_MAX_NODES;
	o.values = values;
	if ((rc = cairn_neighborhood(t, &o, g)))
		return rc;
	for (size_t j = 0; j < g->n_nodes; j++)
		*bytes += g->nodes[j].rec.key_len + g->nodes[j].rec.title_len + g->nodes[j].rec.values_len;
	for (size_t j = 0; j < g->n_links; j++)
		*bytes += g->links[j].from_key_len + g->links[j].to_key_len + g->links[j].values_len;
	return 0;
}

static int op_hood(bench *b, cairn_txn *t, size_t i, uint64_t *bytes, int values)
{
	cairn_graph g;
	int rc = run_hood(b, t, b->parts[i % b->n_parts], values, bytes, &g);

	b->hood_nodes += g.n_nodes;
	b->hood_links += g.n_links;
	b->hood_calls++;
	if (!rc && b->n_hood_sizes == b->cap_hood_sizes) {
		size_t cap = b->cap_hood_sizes ? b->cap_hood_sizes * 2 : 512;
		uint64_t *n = realloc(b->hood_sizes, cap * sizeof(*n));

		if (!n)
			return CAIRN_ENOMEM;
		b->hood_sizes = n;
		b->cap_hood_sizes = cap;
	}
	if (!rc)
		b->hood_sizes[b->n_hood_sizes++] = g.n_nodes;
	return rc;
}

static int op_hood_headers(bench *b, cairn_txn *t, size_t i, uint64_t *bytes)
{
	return op_hood(b, t, i, bytes, 0);
}

static int op_hood_values(bench *b, cairn_txn *t, size_t i, uint64_t *bytes)
{
	return op_hood(b, t, i, bytes, 1);
}

/* The texts of a query file, one per line (at most 1,000). */
static int load_texts(bench *b, const char *file, int which)
{
	char path[1300], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", b->dir, file);
	if (!(f = fopen(path, "r")))
		return die(file, CAIRN_EIO);
	if (!(b->stext[which] = calloc(1000, sizeof(*b->stext[which])))) {
		fclose(f);
		return die(file, CAIRN_ENOMEM);
	}
	while (b->n_stext[which] < 1000 && fgets(line, sizeof(line), f)) {
		size_t n = strcspn(line, "\t\r\n");

		if (n && n < sizeof(b->stext[which][0])) {
			memcpy(b->stext[which][b->n_stext[which]], line, n);
			b->stext[which][b->n_stext[which]++][n] = '\0';
		}
	}
	fclose(f);
	return b->n_stext[which] ? 0 : die(file, CAIRN_ENOTFOUND);
}

static int run_search(bench *b, cairn_txn *t, size_t i, int which, uint64_t *bytes)
{
	cairn_search_options o = {0};
	cairn_search_info info;
	cairn_hit h[20];
	size_t n;
	int rc;

	o.text = b->stext[which][i % b->n_stext[which]];
	o.limit = 20;
	rc = cairn_search(t, &o, h, 20, &n, &info);
	for (size_t j = 0; !rc && j < n; j++)
		*bytes += h[j].rec.key_len + h[j].rec.title_len + 8;
	b->search_calls++;
	b->search_hits += n;
	b->search_matches += info.scored;
	return rc;
}

static int op_search_word(bench *b, cairn_txn *t, size_t i, uint64_t *bytes)
{
	return run_search(b, t, i, 0, bytes);
}

static int op_search_common(bench *b, cairn_txn *t, size_t i, uint64_t *bytes)
{
	return run_search(b, t, i, 1, bytes);
}

static int op_search_two(bench *b, cairn_txn *t, size_t i, uint64_t *bytes)
{
	return run_search(b, t, i, 2, bytes);
}

static int op_search_typo(bench *b, cairn_txn *t, size_t i, uint64_t *bytes)
{
	return run_search(b, t, i, 3, bytes);
}

static int op_search_partial(bench *b, cairn_txn *t, size_t i, uint64_t *bytes)
{
	return run_search(b, t, i, 4, bytes);
}

static int op_search_phrase(bench *b, cairn_txn *t, size_t i, uint64_t *bytes)
{
	return run_search(b, t, i, 5, bytes);
}

/* The titles of the first query Records: as they are, upper-cased, two middle letters swapped. */
static int load_rtexts(bench *b)
{
	cairn_read_options ro = {0};
	cairn_txn *t;
	size_t want = b->n_keys < 1000 ? b->n_keys : 1000;
	int rc;

	ro.domain = DOMAIN;
	if (!(b->rtext = calloc(want, sizeof(*b->rtext))) ||
	    !(b->rtext_key = calloc(want, sizeof(*b->rtext_key))) ||
	    (rc = cairn_txn_begin(b->st, &ro, &t)))
		return -1;
	for (size_t i = 0; i < want; i++) {
		cairn_record r;
		char *x;
		size_t n;

		if (cairn_get(t, b->kinds[i], b->keys[i], strlen(b->keys[i]), &r) || r.title_len < 8 ||
		    r.title_len > 255)
			continue;
		x = b->rtext[b->n_rtext][0];
		memcpy(x, r.title, r.title_len);
		for (n = 0; n < r.title_len; n++)
			b->rtext[b->n_rtext][1][n] = (char)(x[n] >= 'a' && x[n] <= 'z' ? x[n] - 32 : x[n]);
		memcpy(b->rtext[b->n_rtext][2], x, r.title_len);
		x = b->rtext[b->n_rtext][2];
		n = r.title_len / 2;
		if (x[n] == x[n + 1] || x[n] == ' ' || x[n + 1] == ' ')
			n--; /* a swap that changes the text, inside a word */
		{
			char c = x[n];

			x[n] = x[n + 1];
			x[n + 1] = c;
		}
		memcpy(b->rtext_key[b->n_rtext], b->keys[i], 64);
		b->n_rtext++;
	}
	cairn_txn_end(t);
	return b->n_rtext ? 0 : -1;
}

static int run_resolve(bench *b, cairn_txn *t, size_t i, int form, uint64_t *bytes)
{
	cairn_resolve_options o = {0};
	cairn_match m[10];
	size_t k = i % b->n_rtext, n;
	int rc, truncated;

	o.text = b->rtext[k][form];
	rc = cairn_resolve(t, &o, m, 10, &n, &truncated);
	for (size_t j = 0; !rc && j < n; j++)
		*bytes += m[j].rec.key_len + m[j].rec.title_len + strlen(m[j].reason) + 8;
	b->resolve_calls++;
	b->resolve_top1 += !rc && n && strlen(b->rtext_key[k]) == m[0].rec.key_len &&
			   memcmp(m[0].rec.key, b->rtext_key[k], m[0].rec.key_len) == 0;
	return rc;
}

static int op_resolve_title(bench *b, cairn_txn *t, size_t i, uint64_t *bytes)
{
	return run_resolve(b, t, i, 0, bytes);
}

static int op_resolve_upper(bench *b, cairn_txn *t, size_t i, uint64_t *bytes)
{
	return run_resolve(b, t, i, 1, bytes);
}

static int op_resolve_typo(bench *b, cairn_txn *t, size_t i, uint64_t *bytes)
{
	return run_resolve(b, t, i, 2, bytes);
}

static int op_query_eq(bench *b, cairn_txn *t, size_t i, uint64_t *bytes)
{
	return run_query(t, &b->qeq[i % b->n_qeq], bytes);
}

static int op_query_range(bench *b, cairn_txn *t, size_t i, uint64_t *bytes)
{
	return run_query(t, &b->qrange[i % b->n_qrange], bytes);
}

/* Time fn over random query keys, one read transaction for all calls. */
static int time_read(bench *b, const char *name, read_fn fn, const char *note)
{
	cairn_read_options ro = {0};
	cairn_read_stats s0, s1;
	unsigned total = b->o->warmup + b->o->calls;
	double *us = malloc(total * sizeof(double));
	uint64_t bytes = 0;
	cairn_txn *t;
	result *r = &b->res[b->n_res++];
	int rc;

	ro.domain = DOMAIN;
	ro.branch = b->branch;
	if (!us || (rc = cairn_txn_begin(b->st, &ro, &t)))
		return die(name, us ? rc : CAIRN_ENOMEM);
	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "%s", name);
	snprintf(r->note, sizeof(r->note), "%s", note ? note : "");
	for (unsigned c = 0; c < total; c++) {
		size_t i = rnd(b) % (b->key_span ? b->key_span : b->n_keys);
		uint64_t t0, bb = 0;

		if (c == b->o->warmup)
			cairn_txn_stats(t, &s0);
		t0 = now_ns();
		rc = fn(b, t, i, &bb);
		us[c] = (double)(now_ns() - t0) / 1000.0;
		if (rc && rc != CAIRN_ENOTFOUND) {
			cairn_txn_end(t);
			free(us);
			return die(name, rc);
		}
		if (c >= b->o->warmup)
			bytes += bb;
	}
	cairn_txn_stats(t, &s1);
	cairn_txn_end(t);
	summarize(r, us + b->o->warmup, b->o->calls);
	r->entries = (double)(s1.entries - s0.entries) / b->o->calls;
	r->versions = (double)(s1.versions - s0.versions) / b->o->calls;
	r->seeks = (double)(s1.seeks - s0.seeks) / b->o->calls;
	r->bytes = (double)bytes / b->o->calls;
	free(us);
	return 0;
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

/* A neighborhood row, with what the calls returned in its note. */
static int time_hood(bench *b, const char *name, uint32_t fanout, read_fn fn)
{
	char cap[64] = "no cap";
	int rc;

	b->hood_nodes = b->hood_links = b->hood_calls = 0;
	b->n_hood_sizes = 0;
	b->hood_fanout = fanout;
	rc = time_read(b, name, fn, NULL);
	b->hood_fanout = 0;
	if (rc)
		return rc;
	qsort(b->hood_sizes, b->n_hood_sizes, sizeof(uint64_t), cmp_u64);
	if (fanout)
		snprintf(cap, sizeof(cap), "at most %u Links per Record and hop", fanout);
	snprintf(b->res[b->n_res - 1].note, sizeof(b->res[0].note),
		 "%.0f Records (median %llu) and %.0f Links on average, %s",
		 (double)b->hood_nodes / b->hood_calls,
		 (unsigned long long)b->hood_sizes[b->n_hood_sizes / 2],
		 (double)b->hood_links / b->hood_calls, cap);
	return 0;
}

/* A search row, with the hits and the Records scored per call in its note. */
static int time_search(bench *b, const char *name, read_fn fn)
{
	int rc;

	b->search_hits = b->search_calls = b->search_matches = 0;
	if ((rc = time_read(b, name, fn, NULL)))
		return rc;
	snprintf(b->res[b->n_res - 1].note, sizeof(b->res[0].note),
		 "%.1f hits, %.0f Records scored per call", (double)b->search_hits / b->search_calls,
		 (double)b->search_matches / b->search_calls);
	return 0;
}

/* A resolution row, with how often the Record the title came from was first. */
static int time_resolve(bench *b, const char *name, read_fn fn)
{
	int rc;

	b->resolve_top1 = b->resolve_calls = 0;
	if ((rc = time_read(b, name, fn, NULL)))
		return rc;
	snprintf(b->res[b->n_res - 1].note, sizeof(b->res[0].note),
		 "the Record named first in %.0f%% of the calls",
		 100.0 * (double)b->resolve_top1 / (double)b->resolve_calls);
	return 0;
}

/* An untimed pass of 1,000 gets (on b->branch), so that timed reads do not pay for cold CPU caches. */
static int untimed_pass(bench *b)
{
	const bench_options *o = b->o;
	bench_options quiet = *o;
	int rc;

	quiet.calls = 1000;
	quiet.warmup = 0;
	b->o = &quiet;
	rc = time_read(b, "warm-up", op_get, NULL);
	b->o = o;
	b->n_res--;
	return rc;
}

/* A read transaction begun and ended per call, with one get inside. */
static int time_txn_get(bench *b)
{
	cairn_read_options ro = {0};
	unsigned total = b->o->warmup + b->o->calls;
	double *us = malloc(total * sizeof(double));
	result *r = &b->res[b->n_res++];

	if (!us)
		return -1;
	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "get by key, own read transaction");
	snprintf(r->note, sizeof(r->note), "begin, get, end per call");
	ro.domain = DOMAIN;
	for (unsigned c = 0; c < total; c++) {
		size_t i = rnd(b) % b->n_keys;
		cairn_record rec;
		cairn_txn *t;
		uint64_t t0 = now_ns();
		int rc = cairn_txn_begin(b->st, &ro, &t);

		if (!rc)
			rc = cairn_get(t, b->kinds[i], b->keys[i], strlen(b->keys[i]), &rec);
		cairn_txn_end(t);
		us[c] = (double)(now_ns() - t0) / 1000.0;
		if (rc && rc != CAIRN_ENOTFOUND) {
			free(us);
			return die("txn get", rc);
		}
	}
	summarize(r, us + b->o->warmup, b->o->calls);
	free(us);
	return 0;
}

/* ------------------------------------------------------------- writes -- */

/* A numeric attribute of each Kind of the workload schema that an update can change. */
static const char *patch_attr(const char *kind)
{
	static const char *const map[][2] = {
		{"Supplier", "rating"},	    {"Plant", "capacity"},  {"Part", "lead_time_days"},
		{"PurchaseOrder", "quantity"}, {"Contract", "value"}, {"RiskFlag", "score"},
	};

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (strcmp(map[i][0], kind) == 0)
			return map[i][1];
	return "value";
}

/* Record r (any number) of the store, each as likely: its Kind's index into kind and its key. */
static int record_at(const bench *b, uint64_t r, int *kind, char key[64])
{
	int k = 0;

	r %= b->n_records;
	while (r >= b->kind_count[k])
		r -= b->kind_count[k++];
	*kind = k;
	return snprintf(key, 64, "%s-%llu", gen_key_prefix(k), (unsigned long long)(1001 + r));
}

/* How many Records of each Kind the store holds. */
static int count_records(bench *b)
{
	cairn_read_options ro = {0};
	cairn_txn *t;
	int rc;

	ro.domain = DOMAIN;
	if ((rc = cairn_txn_begin(b->st, &ro, &t)))
		return die("count", rc);
	b->n_records = 0;
	for (int k = 0; k < 6 && !rc; k++) {
		rc = cairn_count(t, gen_kind_name(k), &b->kind_count[k]);
		b->n_records += b->kind_count[k];
	}
	cairn_txn_end(t);
	return rc ? die("count", rc) : b->n_records ? 0 : -1;
}

/*
 * Commits of per_commit updates, each of a Record drawn from the whole
 * store (not the query keys): random places in every index, as a batch of
 * an agent's corrections would be.
 */
static int time_commits(bench *b, unsigned per_commit, unsigned calls, const char *name,
			double *pages)
{
	cairn_commit_options co = {0};
	cairn_changeset *cs;
	double *us = malloc(calls * sizeof(double));
	result *r = &b->res[b->n_res++];
	uint64_t w0, w1;
	char patch[96];
	int rc;

	if (!us || (rc = cairn_changeset_new(&cs)))
		return -1;
	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "%s", name);
	co.domain = DOMAIN;
	co.prov.actor = "bench";
	w0 = wchar();
	for (unsigned c = 0; c < calls; c++) {
		uint64_t t0;

		cairn_changeset_clear(cs);
		for (unsigned j = 0; j < per_commit; j++) {
			char key[64];
			int k, kn = record_at(b, rnd(b), &k, key);
			int n = snprintf(patch, sizeof(patch), "{\"%s\":%u}",
					 patch_attr(gen_kind_name(k)), (unsigned)(rnd(b) % 1000) + 1);

			rc = cairn_changeset_patch(cs, gen_kind_name(k), key, (size_t)kn, patch, (size_t)n);
			if (rc) {
				free(us);
				cairn_changeset_free(cs);
				return die(name, rc);
			}
		}
		t0 = now_ns();
		rc = cairn_commit(b->st, &co, cs, NULL);
		us[c] = (double)(now_ns() - t0) / 1000.0;
		if (rc) {
			free(us);
			cairn_changeset_free(cs);
			return die(name, rc);
		}
	}
	w1 = wchar();
	*pages = (double)(w1 - w0) / 4096.0 / calls;
	summarize(r, us, calls);
	snprintf(r->note, sizeof(r->note), "%.1f pages written per commit", *pages);
	free(us);
	cairn_changeset_free(cs);
	return 0;
}

/*
 * Commits of 1,000 full updates, as agents write: each Part drawn from the
 * whole Kind gets a new title of 7 words and every value replaced (a new
 * name, another Supplier, category, cost, lead time and date), the words
 * drawn from the data's own title words.
 */
static int time_full_updates(bench *b, unsigned calls, const char *name, double *pages)
{
	cairn_commit_options co = {0};
	cairn_changeset *cs;
	double *us = malloc(calls * sizeof(double));
	result *r = &b->res[b->n_res++];
	size_t nw = b->n_stext[0] + b->n_stext[1];
	uint64_t w0, w1;
	int rc = 0;

	if (!us || !nw || !b->kind_count[0] || !b->kind_count[2] || (rc = cairn_changeset_new(&cs))) {
		free(us);
		return die(name, rc ? rc : CAIRN_EINVAL);
	}
	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "%s", name);
	co.domain = DOMAIN;
	co.prov.actor = "bench";
	w0 = wchar();
	for (unsigned c = 0; c < calls && !rc; c++) {
		uint64_t t0;

		cairn_changeset_clear(cs);
		for (unsigned j = 0; j < 1000 && !rc; j++) {
			char key[64], title[1024], values[1024];
			size_t tl = 0;
			int kn, vn;

			kn = snprintf(key, sizeof(key), "%s-%llu", gen_key_prefix(2),
				      (unsigned long long)(1001 + rnd(b) % b->kind_count[2]));
			for (int w = 0; w < 7; w++) {
				size_t x = rnd(b) % nw;
				const char *word = x < b->n_stext[0] ? b->stext[0][x] : b->stext[1][x - b->n_stext[0]];

				tl += (size_t)snprintf(title + tl, sizeof(title) - tl, "%s%s", w ? " " : "", word);
			}
			vn = snprintf(values, sizeof(values),
				      "{\"name\":\"%s %s SD-%u\",\"supplier\":\"%s-%llu\",\"category\":\"%s\","
				      "\"unit_cost\":%u.%02u,\"lead_time_days\":%u,\"introduced\":\"20%02u-%02u-%02u\"}",
				      b->stext[0][rnd(b) % b->n_stext[0]], b->stext[0][rnd(b) % b->n_stext[0]],
				      (unsigned)(rnd(b) % 9000) + 1000, gen_key_prefix(0),
				      (unsigned long long)(1001 + rnd(b) % b->kind_count[0]),
				      gen_category((unsigned)rnd(b)), (unsigned)(rnd(b) % 9000) + 1,
				      (unsigned)(rnd(b) % 100), (unsigned)(rnd(b) % 180) + 1,
				      (unsigned)(rnd(b) % 10) + 15, (unsigned)(rnd(b) % 12) + 1,
				      (unsigned)(rnd(b) % 28) + 1);
			rc = cairn_changeset_put(cs, gen_kind_name(2), key, (size_t)kn, title, tl, values,
						 (size_t)vn);
		}
		t0 = now_ns();
		if (!rc)
			rc = cairn_commit(b->st, &co, cs, NULL);
		us[c] = (double)(now_ns() - t0) / 1000.0;
	}
	cairn_changeset_free(cs);
	if (rc) {
		free(us);
		return die(name, rc);
	}
	w1 = wchar();
	*pages = (double)(w1 - w0) / 4096.0 / calls;
	summarize(r, us, calls);
	snprintf(r->note, sizeof(r->note), "%.1f pages written per commit", *pages);
	free(us);
	return 0;
}

/* --------------------------------------------------------- versioning -- */

static int op_history(bench *b, cairn_txn *t, size_t i, uint64_t *bytes)
{
	cairn_history_entry h[20];
	cairn_history_cursor cur = {0, 0};
	size_t n;
	int rc = cairn_history(t, b->kinds[i], b->keys[i], strlen(b->keys[i]), &cur, h, 20, &n);

	for (size_t j = 0; !rc && j < n; j++)
		*bytes += h[j].title_len + h[j].values_len + h[j].diff_len + h[j].rev.actor_len +
			  h[j].rev.message_len;
	return rc;
}

static int op_lineage(bench *b, cairn_txn *t, size_t i, uint64_t *bytes)
{
	cairn_lineage_entry le[64];
	cairn_revision created;
	size_t n;
	int rc = cairn_lineage(t, b->kinds[i], b->keys[i], strlen(b->keys[i]), le, 64, &n, &created);

	for (size_t j = 0; !rc && j < n; j++)
		*bytes += strlen(le[j].attribute) + 8 + le[j].rev.actor_len;
	return rc;
}

/* Move the last timed read into the versioning table. */
static void to_versioning(bench *b, const char *name)
{
	b->vres[b->n_vres] = b->res[--b->n_res];
	if (name)
		snprintf(b->vres[b->n_vres].name, sizeof(b->vres[0].name), "%s", name);
	b->n_vres++;
}

static result *vrow(bench *b, const char *name, double *us, unsigned n, const char *note)
{
	result *r = &b->vres[b->n_vres++];

	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "%s", name);
	snprintf(r->note, sizeof(r->note), "%s", note);
	summarize(r, us, n);
	return r;
}

static uint64_t store_bytes(bench *b, uint64_t *entries)
{
	cairn_db_stats d[16];
	size_t n = 0;
	uint64_t bytes = 0;

	*entries = 0;
	if (cairn_store_stats(b->st, d, 16, &n))
		return 0;
	for (size_t i = 0; i < n; i++) {
		bytes += d[i].bytes;
		*entries += d[i].entries;
	}
	return bytes;
}

/* Suppliers to update: every k-th of the Kind in key order, shuffled, so updates spread. */
static int load_updates(bench *b)
{
	cairn_read_options ro = {0};
	cairn_record r[1000];
	char after[64] = "";
	uint64_t total, step, seen = 0;
	size_t n, want = 20000;
	cairn_txn *t;
	int rc;

	ro.domain = DOMAIN;
	if ((rc = cairn_txn_begin(b->st, &ro, &t)))
		return die("versioning keys", rc);
	if ((rc = cairn_count(t, "Supplier", &total)) || total < 2000) {
		cairn_txn_end(t);
		return die("versioning keys", rc ? rc : CAIRN_ENOTFOUND);
	}
	step = total / want ? total / want : 1;
	b->upd = malloc(want * sizeof(*b->upd));
	do {
		if (!b->upd || (rc = cairn_page(t, "Supplier", after, strlen(after), r, 1000, &n))) {
			cairn_txn_end(t);
			return die("versioning keys", b->upd ? rc : CAIRN_ENOMEM);
		}
		for (size_t j = 0; j < n; j++, seen++)
			if (seen % step == 0 && b->n_upd < want)
				snprintf(b->upd[b->n_upd++], 64, "%.*s", (int)r[j].key_len, r[j].key);
		if (n)
			snprintf(after, sizeof(after), "%.*s", (int)r[n - 1].key_len, r[n - 1].key);
	} while (n == 1000 && b->n_upd < want);
	cairn_txn_end(t);
	for (size_t j = b->n_upd - 1; j > 0; j--) {
		size_t k = rnd(b) % (j + 1);
		char tmp[64];

		memcpy(tmp, b->upd[j], 64);
		memcpy(b->upd[j], b->upd[k], 64);
		memcpy(b->upd[k], tmp, 64);
	}
	return 0;
}

/* One durable commit of n updates of distinct Suppliers on branch (NULL: main). */
static int commit_updates(bench *b, const char *branch, size_t n)
{
	cairn_commit_options co = {0};
	cairn_changeset *cs;
	char patch[48];
	int rc;

	if ((rc = cairn_changeset_new(&cs)))
		return die("update", rc);
	for (size_t j = 0; j < n && !rc; j++) {
		const char *key = b->upd[b->next_upd % b->n_upd];
		/* A value no update used before, so every change changes something. */
		int len = snprintf(patch, sizeof(patch), "{\"rating\":%zu}", 100000 + b->next_upd++);

		rc = cairn_changeset_patch(cs, "Supplier", key, strlen(key), patch, (size_t)len);
	}
	co.domain = DOMAIN;
	co.branch = branch;
	co.prov.actor = "bench";
	if (!rc)
		rc = cairn_commit(b->st, &co, cs, NULL);
	cairn_changeset_free(cs);
	return rc ? die("update", rc) : 0;
}

/*
 * The same read on main and on a branch, call by call with the same key,
 * in alternating order, so that neither side warms the CPU caches for the
 * other more than it is warmed itself. Two rows: main's, the branch's.
 */
static int time_pair(bench *b, const char *name, read_fn fn, const char *branch)
{
	cairn_read_options ro = {0};
	cairn_read_stats s0[2], s1[2];
	unsigned total = b->o->warmup + b->o->calls;
	double *us = malloc(2 * total * sizeof(double));
	uint64_t bytes[2] = {0, 0};
	cairn_txn *t[2] = {NULL, NULL};
	result *r[2];
	int rc = 0;

	ro.domain = DOMAIN;
	if (!us)
		return die(name, CAIRN_ENOMEM);
	if ((rc = cairn_txn_begin(b->st, &ro, &t[0])))
		goto out;
	ro.branch = branch;
	if ((rc = cairn_txn_begin(b->st, &ro, &t[1])))
		goto out;
	for (unsigned c = 0; c < total && !rc; c++) {
		size_t i = rnd(b) % b->n_keys;

		for (int j = 0; j < 2 && !rc; j++) {
			int side = (int)(c & 1) ^ j;
			uint64_t t0, bb = 0;

			if (c == b->o->warmup)
				cairn_txn_stats(t[side], &s0[side]);
			t0 = now_ns();
			rc = fn(b, t[side], i, &bb);
			us[side * total + c] = (double)(now_ns() - t0) / 1000.0;
			if (rc == CAIRN_ENOTFOUND)
				rc = 0;
			if (c >= b->o->warmup)
				bytes[side] += bb;
		}
	}
	for (int side = 0; side < 2 && !rc; side++) {
		char label[96];

		cairn_txn_stats(t[side], &s1[side]);
		snprintf(label, sizeof(label), "%s, %s", name,
			 side ? "on the diverged branch" : "on main");
		r[side] = vrow(b, label, us + side * total + b->o->warmup, b->o->calls, "");
		r[side]->entries = (double)(s1[side].entries - s0[side].entries) / b->o->calls;
		r[side]->versions = (double)(s1[side].versions - s0[side].versions) / b->o->calls;
		r[side]->seeks = (double)(s1[side].seeks - s0[side].seeks) / b->o->calls;
		r[side]->bytes = (double)bytes[side] / b->o->calls;
	}
	if (!rc)
		snprintf(r[1]->note, sizeof(r[1]->note), "p50 %+.0f%% against main",
			 (r[1]->p50 / r[0]->p50 - 1) * 100);
out:
	cairn_txn_end(t[0]);
	cairn_txn_end(t[1]);
	free(us);
	return rc ? die(name, rc) : 0;
}

static const struct {
	const char *name;
	read_fn fn;
} branch_reads[] = {
	{"get by key", op_get},
	{"page of 50 of a Kind", op_page},
	{"Links of a Record", op_links},
	{"count of a Kind", op_count},
	{"query, indexed equality, 50", op_query_eq},
	{"query, indexed range, 50", op_query_range},
	{"2-hop neighborhood of a Part", op_hood_headers},
};

/*
 * Versioning, as the workload lists it: branch creation, history pages and
 * lineage of Records with ten Versions, reads on a branch diverged from
 * main by 1,000 changes on each side (beside the same reads on main), the
 * merge of a branch with 1,000 changes, and the space a branch takes.
 */
static int time_versioning(bench *b)
{
	unsigned nb = 50, nm = 10;
	double *us = malloc((nb > b->o->calls ? nb : b->o->calls) * sizeof(double));
	uint64_t e0, e1, s0, s1;
	char name[64];
	int rc;

	if (!us || load_updates(b))
		goto fail;
	/* Branch creation, durable, and what an empty branch costs. */
	s0 = store_bytes(b, &e0);
	for (unsigned i = 0; i < nb; i++) {
		uint64_t t0 = now_ns();

		snprintf(name, sizeof(name), "bench/empty-%u", i);
		rc = cairn_branch_create(b->st, DOMAIN, name, NULL);
		us[i] = (double)(now_ns() - t0) / 1000.0;
		if (rc) {
			die("branch create", rc);
			goto fail;
		}
	}
	s1 = store_bytes(b, &e1);
	b->space_branch_bytes = (double)(s1 - s0) / nb;
	b->space_branch_entries = (double)(e1 - e0) / nb;
	vrow(b, "branch creation, durable", us, nb, "from main; nothing copied");
	for (unsigned i = 0; i < nb; i++) {
		uint64_t t0 = now_ns();

		snprintf(name, sizeof(name), "bench/empty-%u", i);
		rc = cairn_branch_delete(b->st, DOMAIN, name);
		us[i] = (double)(now_ns() - t0) / 1000.0;
		if (rc) {
			die("branch delete", rc);
			goto fail;
		}
	}
	vrow(b, "branch deletion, durable", us, nb, "returns at once; cleared in the background");

	/*
	 * History and lineage of the first 300 query keys' Records: ten more
	 * updates each, over the ~30 each the commit timings made.
	 */
	{
		cairn_commit_options co = {0};
		cairn_changeset *cs;
		char patch[96];

		co.domain = DOMAIN;
		co.prov.actor = "bench";
		co.prov.message = "history round";
		for (int round = 0; round < 10; round++) {
			if ((rc = cairn_changeset_new(&cs))) {
				die("history setup", rc);
				goto fail;
			}
			for (size_t i = 0; i < 300 && i < b->n_keys && !rc; i++) {
				int n = snprintf(patch, sizeof(patch), "{\"%s\":%d}",
						 patch_attr(b->kinds[i]), round * 7 + 1);

				rc = cairn_changeset_patch(cs, b->kinds[i], b->keys[i], strlen(b->keys[i]),
							   patch, (size_t)n);
			}
			if (!rc)
				rc = cairn_commit(b->st, &co, cs, NULL);
			cairn_changeset_free(cs);
			if (rc) {
				die("history setup", rc);
				goto fail;
			}
		}
		/* Map what the commits wrote, as a running server has it mapped. */
		if ((rc = cairn_store_warm(b->st))) {
			die("warm", rc);
			goto fail;
		}
		if (untimed_pass(b))
			goto fail;
		b->key_span = b->n_keys < 300 ? b->n_keys : 300;
		if (time_read(b, "history page", op_history, NULL))
			goto fail;
		to_versioning(b, "history page of a Record: its newest 20 Versions");
		snprintf(b->vres[b->n_vres - 1].note, sizeof(b->vres[0].note),
			 "Records with 10 to 60 Versions; each entry with provenance and a "
			 "per-Attribute diff");
		if (time_read(b, "lineage", op_lineage, NULL))
			goto fail;
		to_versioning(b, "lineage of a Record with 10 to 60 Versions");
		snprintf(b->vres[b->n_vres - 1].note, sizeof(b->vres[0].note),
			 "revision and provenance of every current value");
		b->key_span = 0;
	}

	/* A branch diverged by 1,000 changes on each side; the same reads on both. */
	s0 = store_bytes(b, &e0);
	if ((rc = cairn_branch_create(b->st, DOMAIN, "bench/diverged", NULL))) {
		die("branch create", rc);
		goto fail;
	}
	if (commit_updates(b, "bench/diverged", 1000))
		goto fail;
	s1 = store_bytes(b, &e1);
	b->space_change_branch = (double)(s1 - s0) / 1000;
	s0 = s1;
	if (commit_updates(b, NULL, 1000))
		goto fail;
	s1 = store_bytes(b, &e1);
	b->space_change_main = (double)(s1 - s0) / 1000;
	if ((rc = cairn_store_warm(b->st))) {
		die("warm", rc);
		goto fail;
	}
	b->branch = "bench/diverged";
	if (untimed_pass(b))
		goto fail;
	b->branch = NULL;
	if (untimed_pass(b))
		goto fail;
	for (size_t k = 0; k < sizeof(branch_reads) / sizeof(branch_reads[0]); k++)
		if (time_pair(b, branch_reads[k].name, branch_reads[k].fn, "bench/diverged"))
			goto fail;

	/* Merges of branches with 1,000 changes each into main. */
	for (unsigned i = 0; i < nm; i++) {
		cairn_merge_options mo;
		cairn_merge_result mr;
		uint64_t t0;

		snprintf(name, sizeof(name), "bench/merge-%u", i);
		if ((rc = cairn_branch_create(b->st, DOMAIN, name, NULL))) {
			die("branch create", rc);
			goto fail;
		}
		if (commit_updates(b, name, 1000))
			goto fail;
		memset(&mo, 0, sizeof(mo));
		mo.commit.domain = DOMAIN;
		mo.commit.prov.actor = "bench";
		mo.source = name;
		t0 = now_ns();
		rc = cairn_merge(b->st, &mo, NULL, NULL, &mr);
		us[i] = (double)(now_ns() - t0) / 1000.0;
		if (rc || mr.changes != 1000) {
			die("merge", rc ? rc : CAIRN_ECORRUPT);
			goto fail;
		}
		if ((rc = cairn_branch_delete(b->st, DOMAIN, name))) {
			die("branch delete", rc);
			goto fail;
		}
	}
	vrow(b, "merge of a branch with 1,000 changes, durable", us, nm,
	     "three-way, one commit of 1,000 changes on main");
	free(us);
	return 0;
fail:
	free(us);
	return -1;
}

/*
 * The server on this store, measured by clients in this process: the store
 * is closed meanwhile (one environment per process), then opened again.
 */
static int time_server(bench *b)
{
	char token[CAIRN_TOKEN_MAX];
	http_bench_in in;
	uint64_t id;
	int rc;

	if ((rc = cairn_token_create(b->st, DOMAIN, CAIRN_ROLE_WRITER, NULL, "bench", token,
				     sizeof(token), &id)))
		return die("token", rc);
	cairn_close(b->st);
	b->st = NULL;
	memset(&in, 0, sizeof(in));
	in.store = b->store;
	in.domain = DOMAIN;
	in.token = token;
	in.kinds = b->kinds;
	in.keys = b->keys;
	in.n_keys = b->n_keys;
	in.supplier_keys = b->upd;
	in.n_supplier_keys = b->n_upd;
	in.warmup = b->o->warmup;
	in.calls = b->o->calls;
	rc = http_bench(&in, &b->http);
	b->have_http = rc == 0;
	if (rc)
		fprintf(stderr, "bench: server: %s\n", cairn_errmsg());
	if ((rc = cairn_open(b->store, NULL, &b->st)))
		return die("open", rc);
	return cairn_store_warm(b->st) ? -1 : 0;
}

static int time_open(bench *b)
{
	double ms[11];

	cairn_close(b->st);
	b->st = NULL;
	for (int i = 0; i < 11; i++) {
		uint64_t t0 = now_ns();
		int rc = cairn_open(b->store, NULL, &b->st);
		cairn_read_options ro = {0};
		cairn_txn *t;
		cairn_record r;

		/* Open, and answer a first read: nothing is rebuilt. */
		ro.domain = DOMAIN;
		if (!rc)
			rc = cairn_txn_begin(b->st, &ro, &t);
		if (!rc) {
			cairn_get(t, b->kinds[0], b->keys[0], strlen(b->keys[0]), &r);
			cairn_txn_end(t);
		}
		ms[i] = (double)(now_ns() - t0) / 1e6;
		if (rc)
			return die("open", rc);
		if (i < 10) {
			cairn_close(b->st);
			b->st = NULL;
		}
	}
	qsort(ms, 11, sizeof(double), cmp_double);
	b->open_ms_p50 = ms[5];
	b->open_ms_max = ms[10];
	return 0;
}

/* ------------------------------------------------------------ peers -- */

/* Cairn as an engine: every call its own read transaction or commit, like the peers'. */
static int ce_get(engine *e, const char *kind, const char *key, uint64_t *bytes)
{
	cairn_read_options ro = {0};
	cairn_record r;
	cairn_txn *t;
	int rc;

	ro.domain = DOMAIN;
	if ((rc = cairn_txn_begin(e->h, &ro, &t)))
		return rc;
	rc = cairn_get(t, kind, key, strlen(key), &r);
	if (!rc)
		*bytes += r.key_len + r.title_len + r.values_len;
	cairn_txn_end(t);
	return rc == CAIRN_ENOTFOUND ? 0 : rc;
}

static int ce_page(engine *e, const char *kind, const char *after, unsigned limit, uint64_t *bytes)
{
	cairn_read_options ro = {0};
	cairn_record r[100];
	cairn_txn *t;
	size_t n;
	int rc;

	ro.domain = DOMAIN;
	if ((rc = cairn_txn_begin(e->h, &ro, &t)))
		return rc;
	rc = cairn_page(t, kind, after, strlen(after), r, limit > 100 ? 100 : limit, &n);
	for (size_t i = 0; !rc && i < n; i++)
		*bytes += r[i].key_len + r[i].title_len + r[i].values_len;
	cairn_txn_end(t);
	return rc;
}

static int ce_links(engine *e, const char *kind, const char *key, uint64_t *bytes)
{
	cairn_read_options ro = {0};
	cairn_link l[CAIRN_MAX_PAGE];
	cairn_link_cursor cur;
	cairn_txn *t;
	size_t n;
	int rc;

	ro.domain = DOMAIN;
	memset(&cur, 0, sizeof(cur));
	if ((rc = cairn_txn_begin(e->h, &ro, &t)))
		return rc;
	rc = cairn_links(t, kind, key, strlen(key), CAIRN_BOTH, NULL, &cur, l, CAIRN_MAX_PAGE, &n);
	for (size_t i = 0; !rc && i < n; i++)
		*bytes += l[i].from_key_len + l[i].to_key_len + l[i].values_len;
	cairn_txn_end(t);
	return rc;
}

static int ce_count(engine *e, const char *kind, uint64_t *n)
{
	cairn_read_options ro = {0};
	cairn_txn *t;
	int rc;

	ro.domain = DOMAIN;
	if ((rc = cairn_txn_begin(e->h, &ro, &t)))
		return rc;
	rc = cairn_count(t, kind, n);
	cairn_txn_end(t);
	return rc;
}

static int ce_query(engine *e, const bench_query *bq, uint64_t *bytes)
{
	cairn_read_options ro = {0};
	qfilter f;
	cairn_txn *t;
	int rc;

	/* The same filter in Cairn's JSON form, built per call as a client would. */
	memset(&f, 0, sizeof(f));
	snprintf(f.kind, sizeof(f.kind), "%s", bq->kind);
	snprintf(f.attr, sizeof(f.attr), "%s", bq->attr);
	f.range = bq->hi != NULL;
	if (f.range)
		f.where_len = (size_t)snprintf(f.where, sizeof(f.where),
					       bq->numeric ? "{\"%s\":{\"gte\":%s,\"lt\":%s}}"
							   : "{\"%s\":{\"gte\":\"%s\",\"lt\":\"%s\"}}",
					       bq->attr, bq->lo, bq->hi);
	else
		f.where_len = (size_t)snprintf(f.where, sizeof(f.where),
					       bq->numeric ? "{\"%s\":%s}" : "{\"%s\":\"%s\"}",
					       bq->attr, bq->lo);
	ro.domain = DOMAIN;
	if ((rc = cairn_txn_begin(e->h, &ro, &t)))
		return rc;
	rc = run_query(t, &f, bytes);
	cairn_txn_end(t);
	return rc;
}

static int ce_hood(engine *e, const char *kind, const char *key, int values, uint64_t *bytes,
		   uint64_t *nodes)
{
	cairn_neighborhood_options o = {0};
	cairn_read_options ro = {0};
	cairn_ref r = {kind, key, 0};
	cairn_graph g;
	cairn_txn *t;
	int rc;

	ro.domain = DOMAIN;
	if ((rc = cairn_txn_begin(e->h, &ro, &t)))
		return rc;
	o.start = &r;
	o.n_start = 1;
	o.depth = 2;
	o.fanout = CAIRN_MAX_NODES;
	o.max_nodes = CAIRN_MAX_NODES;
	o.values = values;
	if (!(rc = cairn_neighborhood(t, &o, &g))) {
		for (size_t j = 0; j < g.n_nodes; j++)
			*bytes += g.nodes[j].rec.key_len + g.nodes[j].rec.title_len +
				  g.nodes[j].rec.values_len;
		for (size_t j = 0; j < g.n_links; j++)
			*bytes += g.links[j].from_key_len + g.links[j].to_key_len + g.links[j].values_len;
		*nodes += g.n_nodes;
	}
	cairn_txn_end(t);
	return rc;
}

static int ce_resolve(engine *e, const char *text, uint64_t *bytes)
{
	cairn_read_options ro = {0};
	cairn_resolve_options o = {0};
	cairn_match m[10];
	cairn_txn *t;
	size_t n;
	int rc, truncated;

	ro.domain = DOMAIN;
	if ((rc = cairn_txn_begin(e->h, &ro, &t)))
		return rc;
	o.text = text;
	o.exact = 1; /* what the peers do: no spellings, no prefixes */
	rc = cairn_resolve(t, &o, m, 10, &n, &truncated);
	for (size_t j = 0; !rc && j < n; j++)
		*bytes += m[j].rec.key_len + m[j].rec.title_len + strlen(m[j].reason) + 8;
	cairn_txn_end(t);
	return rc;
}

static int ce_update(engine *e, const bench_update *u, size_t n)
{
	cairn_commit_options co = {0};
	cairn_changeset *cs;
	char patch[96];
	int rc;

	if ((rc = cairn_changeset_new(&cs)))
		return rc;
	for (size_t i = 0; i < n && !rc; i++) {
		int len = snprintf(patch, sizeof(patch), "{\"%s\":%ld}", u[i].attr, u[i].value);

		rc = cairn_changeset_patch(cs, u[i].kind, u[i].key, strlen(u[i].key), patch, (size_t)len);
	}
	co.domain = DOMAIN;
	co.prov.actor = "bench";
	if (!rc)
		rc = cairn_commit(e->h, &co, cs, NULL);
	cairn_changeset_free(cs);
	return rc;
}

static int ce_search(engine *e, const char *text, int any, char (*hits)[SEARCH_HIT_BYTES],
		     size_t *n, uint64_t *bytes)
{
	cairn_read_options ro = {0};
	cairn_search_options o = {0};
	cairn_hit h[SEARCH_TOP];
	cairn_txn *t;
	int rc;

	(void)any; /* Cairn's partial matches follow the Records with every word by themselves */
	ro.domain = DOMAIN;
	if ((rc = cairn_txn_begin(e->h, &ro, &t)))
		return rc;
	o.text = text;
	o.limit = SEARCH_TOP;
	rc = cairn_search(t, &o, h, SEARCH_TOP, n, NULL);
	for (size_t j = 0; !rc && j < *n; j++) {
		snprintf(hits[j], SEARCH_HIT_BYTES, "%s:%.*s", h[j].rec.kind, (int)h[j].rec.key_len,
			 h[j].rec.key);
		*bytes += h[j].rec.key_len + h[j].rec.title_len + 8;
	}
	cairn_txn_end(t);
	return rc;
}

static void cairn_engine(bench *b, engine *e)
{
	memset(e, 0, sizeof(*e));
	e->name = "Cairn";
	e->config = "embedded, durable commits";
	e->h = b->st;
	e->get = ce_get;
	e->page = ce_page;
	e->links = ce_links;
	e->count = ce_count;
	e->query = ce_query;
	e->hood = ce_hood;
	e->resolve = ce_resolve;
	e->search = ce_search;
	e->update = ce_update;
}

enum cmp_op {
	CMP_GET, CMP_PAGE, CMP_LINKS, CMP_COUNT, CMP_QEQ, CMP_QRANGE, CMP_HOOD, CMP_HOODV, CMP_RESOLVE,
	CMP_S_WORD, CMP_S_COMMON, CMP_S_TWO, CMP_S_TYPO, CMP_S_PARTIAL, CMP_S_PHRASE, /* stext[0..5] */
	CMP_UPDATE1, CMP_UPDATE1000
};

/* How many of a (Cairn's) are in b: over the larger of the two (1 when both are empty). */
static double overlap(char (*a)[SEARCH_HIT_BYTES], size_t na, char (*b)[SEARCH_HIT_BYTES], size_t nb)
{
	size_t both = 0;

	for (size_t i = 0; i < na; i++)
		for (size_t j = 0; j < nb; j++)
			if (strcmp(a[i], b[j]) == 0) {
				both++;
				break;
			}
	return na || nb ? (double)both / (double)(na > nb ? na : nb) : 1;
}

/*
 * Time one operation on engine e (the k-th), with the random sequence
 * seeded the same for every engine. A search keeps Cairn's hits (ei 0) and
 * gives a peer's mean overlap with them in *ov.
 */
static int cmp_time(bench *b, engine *e, size_t ei, int op, double *p50, double *p99, double *ov)
{
	unsigned calls = op == CMP_UPDATE1000 ? (b->o->calls / 10 > 10 ? b->o->calls / 10 : 10)
			 : op == CMP_COUNT    ? 50
					      : b->o->calls;
	unsigned warm = op >= CMP_UPDATE1 ? 0 : b->o->warmup;
	double *us = malloc((calls + warm) * sizeof(double));
	bench_update *u = NULL;
	char (*ukeys)[64] = NULL;
	uint64_t seq = b->o->seed * 31 + (uint64_t)op;
	int rc = 0;

	if (!us)
		return -1;
	if (op >= CMP_UPDATE1 &&
	    (!(u = calloc(1000, sizeof(*u))) || !(ukeys = calloc(1000, sizeof(*ukeys))))) {
		free(u);
		free(us);
		return -1;
	}
	*ov = 0;
	for (unsigned c = 0; c < calls + warm && !rc; c++) {
		uint64_t bytes = 0, n = 0, t0;
		size_t i;

		seq += 0x9e3779b97f4a7c15ull;
		i = (size_t)((seq ^ (seq >> 29)) * 0xbf58476d1ce4e5b9ull >> 11) % b->n_keys;
		if (op >= CMP_UPDATE1) {
			size_t m = op == CMP_UPDATE1 ? 1 : 1000;

			/* Records anywhere in the store, the same for every engine. */
			for (size_t j = 0; j < m; j++) {
				int k;

				record_at(b, (seq + j) * 0x9e3779b97f4a7c15ull >> 17, &k, ukeys[j]);
				u[j].kind = gen_kind_name(k);
				u[j].key = ukeys[j];
				u[j].attr = patch_attr(u[j].kind);
				u[j].value = (long)((seq >> 7) % 1000) + 1;
			}
			t0 = now_ns();
			rc = e->update(e, u, m);
		} else {
			t0 = now_ns();
			switch (op) {
			case CMP_GET:
				rc = e->get(e, b->kinds[i], b->keys[i], &bytes);
				break;
			case CMP_PAGE:
				rc = e->page(e, b->kinds[i], b->keys[i], 50, &bytes);
				break;
			case CMP_LINKS:
				rc = e->links(e, b->kinds[i], b->keys[i], &bytes);
				break;
			case CMP_COUNT:
				rc = e->count(e, b->kinds[i], &n);
				break;
			case CMP_RESOLVE:
				rc = e->resolve(e, b->rtext[i % b->n_rtext][1], &bytes);
				break;
			case CMP_S_WORD:
			case CMP_S_COMMON:
			case CMP_S_TWO:
			case CMP_S_TYPO:
			case CMP_S_PARTIAL:
			case CMP_S_PHRASE: {
				int w = op - CMP_S_WORD;
				char hits[SEARCH_TOP][SEARCH_HIT_BYTES];
				size_t nh = 0;

				rc = e->search(e, b->stext[w][i % b->n_stext[w]], op == CMP_S_PARTIAL, hits,
					       &nh, &bytes);
				if (rc)
					break;
				if (ei == 0) {
					memcpy(b->ref_hits[c], hits, sizeof(hits));
					b->ref_n[c] = nh;
				} else if (c >= warm) {
					*ov += overlap(b->ref_hits[c], b->ref_n[c], hits, nh) / calls;
				}
				break;
			}
			case CMP_HOOD:
			case CMP_HOODV: {
				size_t k = b->parts[i % b->n_parts];

				rc = e->hood(e, b->kinds[k], b->keys[k], op == CMP_HOODV, &bytes, &n);
				break;
			}
			default: {
				const qfilter *f = op == CMP_QEQ ? &b->qeq[i % b->n_qeq]
								 : &b->qrange[i % b->n_qrange];
				bench_query q = {f->kind, f->attr, f->lo, f->range ? f->hi : NULL,
						 f->numeric, 50};

				rc = e->query(e, &q, &bytes);
				break;
			}
			}
		}
		us[c] = (double)(now_ns() - t0) / 1000.0;
	}
	if (!rc) {
		result r;

		summarize(&r, us + warm, calls);
		*p50 = r.p50;
		*p99 = r.p99;
	}
	free(us);
	free(u);
	free(ukeys);
	return rc;
}

static int compare(bench *b)
{
	static const char *const names[] = {"get by key", "page of 50 of a Kind",
					    "Links of a Record (both directions)",
					    "count of a Kind",
					    "query: indexed equality, first 50",
					    "query: indexed range, first 50",
					    "2-hop neighborhood of a Part, headers",
					    "2-hop neighborhood of a Part, with values",
					    "resolution of a title in capitals, exact and folded only",
					    "full-text search of a title word, top 20",
					    "full-text search of a very common word, top 20",
					    "full-text search of two common words, top 20",
					    "search of a title word with two letters swapped, top 20",
					    "search of three rare title words, some or all, top 20",
					    "phrase search of two title words in a row, top 20",
					    "commit of one update, durable",
					    "commit of 1,000 updates, durable"};
	engine cairn;

	cairn_engine(b, &cairn);
	b->eng[0] = &cairn;
	b->n_eng = 1;
	b->load_rec_s[0] = b->import_rec_s;
	b->load_link_s[0] = b->import_link_s;
	for (size_t p = 0; p < b->o->n_peers && b->n_eng < MAX_ENGINES; p++) {
		char why[512] = "";
		engine *e = b->o->peers[p](b->dir, why, sizeof(why));
		size_t k = b->n_eng;

		if (!e) {
			size_t l = strlen(b->peer_notes);

			snprintf(b->peer_notes + l, sizeof(b->peer_notes) - l, "- a peer could not run: %s\n",
				 why);
			fprintf(stderr, "bench: peer skipped: %s\n", why);
			continue;
		}
		fprintf(stderr, "bench: loading %s\n", e->name);
		if (e->load(e, b->dir, &b->load_rec_s[k], &b->load_link_s[k])) {
			fprintf(stderr, "bench: %s: %s\n", e->name, e->err);
			e->close(e);
			continue;
		}
		b->size[k] = e->size(e);
		b->eng[b->n_eng++] = e;
	}
	if (b->n_eng < 2)
		return 0;
	if (!(b->ref_hits = calloc(b->o->calls + b->o->warmup, sizeof(*b->ref_hits))) ||
	    !(b->ref_n = calloc(b->o->calls + b->o->warmup, sizeof(*b->ref_n))))
		return -1;
	for (int op = CMP_GET; op <= CMP_UPDATE1000; op++) {
		cmp_row *r = &b->cmp[b->n_cmp++];

		snprintf(r->name, sizeof(r->name), "%s", names[op]);
		r->search = op >= CMP_S_WORD && op <= CMP_S_PHRASE;
		for (size_t k = 0; k < b->n_eng; k++) {
			fprintf(stderr, "bench: %s: %s\n", b->eng[k]->name, names[op]);
			r->ok[k] = cmp_time(b, b->eng[k], k, op, &r->p50[k], &r->p99[k],
					    &r->overlap[k]) == 0 &&
				   (k == 0 || r->ok[0]);
			if (!r->ok[k])
				fprintf(stderr, "bench: %s: %s failed: %s\n", b->eng[k]->name,
					names[op], k ? b->eng[k]->err : cairn_errmsg());
		}
	}
	return 0;
}

static void report_compare(FILE *f, bench *b)
{
	if (b->n_eng < 2) {
		if (b->peer_notes[0])
			fprintf(f, "\n#### Peers\n\n%s", b->peer_notes);
		return;
	}
	fprintf(f, "\n#### Beside the peers (each call its own transaction; the same calls in the same "
		   "order; p50 / p99 in microseconds, and the peer's p50 over Cairn's)\n\n");
	fprintf(f, "| operation |");
	for (size_t k = 0; k < b->n_eng; k++)
		fprintf(f, " %s |", b->eng[k]->name);
	fprintf(f, "\n|---|");
	for (size_t k = 0; k < b->n_eng; k++)
		fprintf(f, "---:|");
	fprintf(f, "\n");
	for (size_t i = 0; i < b->n_cmp; i++) {
		cmp_row *r = &b->cmp[i];

		fprintf(f, "| %s |", r->name);
		for (size_t k = 0; k < b->n_eng; k++) {
			if (!r->ok[k])
				fprintf(f, " failed |");
			else if (k == 0 || !r->ok[0])
				fprintf(f, " %.1f / %.1f |", r->p50[k], r->p99[k]);
			else if (r->search)
				fprintf(f, " %.1f / %.1f (%.1f×, %.0f%% of the top 20) |", r->p50[k],
					r->p99[k], r->p50[k] / r->p50[0], 100 * r->overlap[k]);
			else
				fprintf(f, " %.1f / %.1f (%.1f×) |", r->p50[k], r->p99[k],
					r->p50[k] / r->p50[0]);
		}
		fprintf(f, "\n");
	}
	fprintf(f, "| import of the Records, Records/s |");
	for (size_t k = 0; k < b->n_eng; k++)
		fprintf(f, " %.0f |", (double)b->records / b->load_rec_s[k]);
	fprintf(f, "\n| import of the Links, Links/s |");
	for (size_t k = 0; k < b->n_eng; k++)
		fprintf(f, " %.0f |", (double)b->links / b->load_link_s[k]);
	fprintf(f, "\n| size on disk, bytes per Record |");
	for (size_t k = 0; k < b->n_eng; k++) {
		uint64_t size = b->size[k];

		if (k == 0)
			for (size_t i = 0; i < b->n_dbs; i++)
				size += b->dbs[i].bytes;
		fprintf(f, " %.0f |", (double)size / (double)b->records);
	}
	fprintf(f, "\n\n");
	for (size_t k = 1; k < b->n_eng; k++)
		fprintf(f, "- %s: %s.\n", b->eng[k]->name, b->eng[k]->config);
	fprintf(f, "%s", b->peer_notes);
}

/* --------------------------------------------------------------- report -- */

int bench_publish(const bench_options *o, const char *tag, const char *text)
{
	fputs(text, stdout);
	if (o->out && bench_page_update(o->out, tag, text)) {
		fprintf(stderr, "bench: cannot write %s\n", o->out);
		return -1;
	}
	return 0;
}

int bench_remove_work(const bench_options *o)
{
	char cmd[1300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", o->work);
	return system(cmd) != 0 ? -1 : 0;
}

void bench_cpu(char *cpu, size_t n)
{
	FILE *p = fopen("/proc/cpuinfo", "r");
	char line[512];

	snprintf(cpu, n, "unknown");
	while (p && fgets(line, sizeof(line), p)) {
		char *c = strchr(line, ':');

		if (strncmp(line, "model name", 10) == 0 && c) {
			snprintf(cpu, n, "%s", c + 2);
			cpu[strcspn(cpu, "\n")] = '\0';
			break;
		}
	}
	if (p)
		fclose(p);
}

static void env_line(FILE *f, const char *label, const char *value)
{
	fprintf(f, "| %s | %s |\n", label, value);
}

static void report_env(FILE *f, bench *b)
{
	char cpu[256], buf[512];
	FILE *p;
	long mem_kb = 0;
	struct utsname u;
	struct rusage ru;
	time_t now = time(NULL);

	bench_cpu(cpu, sizeof(cpu));
	p = fopen("/proc/meminfo", "r");
	if (p) {
		if (fscanf(p, "MemTotal: %ld kB", &mem_kb) != 1)
			mem_kb = 0;
		fclose(p);
	}
	uname(&u);
	getrusage(RUSAGE_SELF, &ru);
	fprintf(f, "| | |\n|---|---|\n");
	env_line(f, "CPU", cpu);
	snprintf(buf, sizeof(buf), "%ld online", sysconf(_SC_NPROCESSORS_ONLN));
	env_line(f, "cores", buf);
	snprintf(buf, sizeof(buf), "%.1f GiB", (double)mem_kb / 1048576.0);
	env_line(f, "memory", buf);
	snprintf(buf, sizeof(buf), "%s %s", u.sysname, u.release);
	env_line(f, "kernel", buf);
	env_line(f, "compiler", __VERSION__);
	env_line(f, "flags", CAIRN_BENCH_CFLAGS);
	snprintf(buf, sizeof(buf), "LMDB %d.%d.%d, %s", MDB_VERSION_MAJOR, MDB_VERSION_MINOR,
		 MDB_VERSION_PATCH, OPENSSL_VERSION_TEXT);
	env_line(f, "libraries", buf);
	strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M UTC", gmtime(&now));
	env_line(f, "date", buf);
	{
		FILE *g = popen("git rev-parse --short HEAD 2>/dev/null", "r");

		if (g && fgets(buf, sizeof(buf), g))
			buf[strcspn(buf, "\n")] = '\0';
		else
			snprintf(buf, sizeof(buf), "unknown");
		if (g)
			pclose(g);
	}
	env_line(f, "commit", buf);
	snprintf(buf, sizeof(buf), "%.0f MiB", (double)ru.ru_maxrss / 1024.0);
	env_line(f, "peak resident memory", buf);
	(void)b;
}

static void report(FILE *f, bench *b)
{
	uint64_t total = 0;

	fprintf(f, "### %llu Records, %llu Links (seed %llu)\n\n",
		(unsigned long long)b->records, (unsigned long long)b->links,
		(unsigned long long)b->o->seed);
	report_env(f, b);
	fprintf(f, "\n#### Reads and writes (microseconds; %u timed calls after %u warm-up)\n\n",
		b->o->calls, b->o->warmup);
	fprintf(f, "| operation | p50 | p95 | p99 | max | entries/call | Versions/call | seeks/call | bytes/call | note |\n");
	fprintf(f, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
	for (size_t i = 0; i < b->n_res; i++) {
		result *r = &b->res[i];

		fprintf(f, "| %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.0f | %s |\n",
			r->name, r->p50, r->p95, r->p99, r->max, r->entries, r->versions, r->seeks,
			r->bytes, r->note);
	}
	if (b->n_vres) {
		fprintf(f, "\n#### Versioning (microseconds)\n\n");
		fprintf(f, "| operation | p50 | p95 | p99 | max | entries/call | Versions/call | seeks/call | bytes/call | note |\n");
		fprintf(f, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
		for (size_t i = 0; i < b->n_vres; i++) {
			result *r = &b->vres[i];

			fprintf(f, "| %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.0f | %s |\n",
				r->name, r->p50, r->p95, r->p99, r->max, r->entries, r->versions,
				r->seeks, r->bytes, r->note);
		}
		fprintf(f, "\nSpace: an empty branch adds %.1f entries and %.0f bytes of B-tree pages; "
			   "a change on a branch takes %.0f bytes, on main %.0f (1,000 updates each, "
			   "bytes of pages in use after the commit, less before).\n",
			b->space_branch_entries, b->space_branch_bytes, b->space_change_branch,
			b->space_change_main);
	}
	if (b->have_http) {
		const http_bench_out *h = &b->http;
		double lib = 0;

		for (size_t i = 0; i < b->n_res; i++)
			if (strcmp(b->res[i].name, "get by key, own read transaction") == 0)
				lib = b->res[i].p50;
		fprintf(f, "\n#### Server (HTTP/JSON on loopback, keep-alive, clients in the same process)\n\n");
		fprintf(f, "| measure | value |\n|---|---:|\n");
		fprintf(f, "| get by key, one client, p50 / p95 / p99 | %.1f / %.1f / %.1f µs |\n",
			h->get_p50, h->get_p95, h->get_p99);
		fprintf(f, "| of which over the library's get in its own read transaction (p50) | %.1f µs |\n",
			h->get_p50 - lib);
		fprintf(f, "| gets per second, %u connections | %.0f |\n", h->read_conns, h->reads_per_s);
		fprintf(f, "| durable single-Record commits per second, %u clients (group commit) | %.0f |\n",
			h->commit_conns, h->commits_per_s);
		fprintf(f, "| their latency p50 / p95 / p99 | %.2f / %.2f / %.2f ms |\n",
			h->commit_p50 / 1000, h->commit_p95 / 1000, h->commit_p99 / 1000);
		fprintf(f, "| memory per idle connection (%u open, each after one request) | %.1f KiB |\n",
			h->idle_conns, h->idle_conn_bytes / 1024);
	}
	fprintf(f, "\n#### Import and open\n\n");
	fprintf(f, "| measure | value |\n|---|---:|\n");
	fprintf(f, "| bulk import of the Records (records.jsonl), durable | %.2f s: %.0f Records/s |\n",
		b->import_rec_s, b->import_rate);
	fprintf(f, "| bulk import of the Links (links.jsonl), durable | %.2f s: %.0f Links/s |\n",
		b->import_link_s, (double)b->links / b->import_link_s);
	fprintf(f, "| whole import, Records and Links | %.2f s: %.0f lines/s |\n", b->import_s,
		(double)(b->records + b->links) / b->import_s);
	fprintf(f, "| merging the import's postings segments (maintenance, after the import) | %.2f s |\n",
		b->merge_s);
	fprintf(f, "| open of the populated store and first read, p50 / max of 11 | %.2f ms / %.2f ms |\n",
		b->open_ms_p50, b->open_ms_max);
	fprintf(f, "\n#### Size on disk by sub-database, as imported (a Record with its ~3 Links)\n\n");
	fprintf(f, "| sub-database | entries | bytes | bytes per Record |\n|---|---:|---:|---:|\n");
	for (size_t i = 0; i < b->n_dbs; i++)
		total += b->dbs[i].bytes;
	for (size_t i = 0; i < b->n_dbs; i++)
		fprintf(f, "| %s | %llu | %llu | %.1f |\n", b->dbs[i].name,
			(unsigned long long)b->dbs[i].entries, (unsigned long long)b->dbs[i].bytes,
			(double)b->dbs[i].bytes / (double)b->records);
	fprintf(f, "| **total** | | %llu | **%.1f** |\n", (unsigned long long)total,
		(double)total / (double)b->records);
	report_compare(f, b);
}

int bench_page_update(const char *path, const char *tag, const char *text)
{
	char begin[128], end[128], pbegin[128], pend[128];
	char *page = NULL, *out = NULL;
	size_t len = 0, olen = 0;
	FILE *f = fopen(path, "r"), *o;

	snprintf(begin, sizeof(begin), "<!-- bench:begin %s -->", tag);
	snprintf(end, sizeof(end), "<!-- bench:end %s -->", tag);
	snprintf(pbegin, sizeof(pbegin), "<!-- bench:previous %s -->", tag);
	snprintf(pend, sizeof(pend), "<!-- bench:previous-end %s -->", tag);
	if (f) {
		FILE *m = open_memstream(&page, &len);
		int ch;

		while ((ch = fgetc(f)) != EOF)
			fputc(ch, m);
		fclose(m);
		fclose(f);
	} else {
		page = strdup("# Performance\n\n");
		len = strlen(page);
	}
	o = open_memstream(&out, &olen);
	{
		char *bb = strstr(page, begin), *be = bb ? strstr(bb, end) : NULL;
		char *pb = strstr(page, pbegin), *pe = pb ? strstr(pb, pend) : NULL;

		if (bb && be) {
			/* The current block becomes the previous one. */
			char *old = strndup(bb + strlen(begin), (size_t)(be - bb - strlen(begin)));

			fwrite(page, 1, (size_t)(bb - page), o);
			fprintf(o, "%s\n%s\n%s\n", begin, text, end);
			be += strlen(end);
			if (pb && pe && pb > be) {
				fwrite(be, 1, (size_t)(pb - be), o);
				fprintf(o, "%s\n<details><summary>The run before this one</summary>\n%s\n</details>\n%s",
					pbegin, old, pend);
				fputs(pe + strlen(pend), o);
			} else {
				fprintf(o, "\n%s\n<details><summary>The run before this one</summary>\n%s\n</details>\n%s",
					pbegin, old, pend);
				fputs(be, o);
			}
			free(old);
		} else {
			fputs(page, o);
			fprintf(o, "\n%s\n%s\n%s\n", begin, text, end);
		}
	}
	fclose(o);
	f = fopen(path, "w");
	if (!f || fwrite(out, 1, olen, f) != olen) {
		if (f)
			fclose(f);
		free(page);
		free(out);
		return -1;
	}
	fclose(f);
	free(page);
	free(out);
	return 0;
}

int bench_run(const bench_options *o)
{
	bench b;
	char tag[64];
	char *text = NULL;
	size_t tlen = 0;
	FILE *m;
	int rc = -1;

	memset(&b, 0, sizeof(b));
	b.o = o;
	b.rng = o->seed * 7919 + 1;
	snprintf(b.dir, sizeof(b.dir), "%s", o->work);
	snprintf(b.store, sizeof(b.store), "%s/store", o->work);
	if (o->reuse) {
		if (cairn_open(b.store, NULL, &b.st))
			return die("open", -1);
	} else {
		char cmd[1300];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s/store'", o->work);
		if (system(cmd) != 0)
			return -1;
		fprintf(stderr, "bench: generating and importing %llu Records into %s\n",
			(unsigned long long)o->records, b.store);
		if (build(&b))
			goto out;
	}
	if (load_keys(&b) || load_filters(&b)) {
		fprintf(stderr, "bench: no query keys or filters in %s\n", b.dir);
		goto out;
	}
	/* Reads are measured warm, as in a running server: map the whole store first. */
	if ((rc = cairn_store_warm(b.st))) {
		die("warm", rc);
		goto out;
	}
	if (untimed_pass(&b))
		goto out;
	fprintf(stderr, "bench: timing reads\n");
	if (time_txn_get(&b) ||
	    time_read(&b, "get by key", op_get, "one read transaction for all calls") ||
	    time_read(&b, "page of 50 of a Kind (keyset)", op_page, NULL) ||
	    time_read(&b, "Links of a Record (both directions)", op_links, NULL) ||
	    time_read(&b, "count of a Kind", op_count, NULL) ||
	    time_read(&b, "query: indexed equality, first 50 by key", op_query_eq, NULL) ||
	    time_read(&b, "query: indexed range, first 50 by the Attribute", op_query_range, NULL) ||
	    time_hood(&b, "2-hop neighborhood of a Part, headers", 0, op_hood_headers) ||
	    time_hood(&b, "2-hop neighborhood of a Part, with values", 0, op_hood_values) ||
	    time_hood(&b, "2-hop neighborhood of a Part, fanout 50, headers", 50,
		      op_hood_headers) ||
	    time_hood(&b, "2-hop neighborhood of a Part, fanout 50, with values", 50,
		      op_hood_values) ||
	    load_rtexts(&b) ||
	    time_resolve(&b, "resolution of a title", op_resolve_title) ||
	    time_resolve(&b, "resolution of a title in capitals", op_resolve_upper) ||
	    time_resolve(&b, "resolution of a title with two letters swapped", op_resolve_typo) ||
	    load_texts(&b, "q_title_words.txt", 0) || load_texts(&b, "q_common_words.txt", 1) ||
	    load_texts(&b, "q_two_common.txt", 2) || load_texts(&b, "q_typos.txt", 3) ||
	    load_texts(&b, "q_partial.txt", 4) || load_texts(&b, "q_phrases.txt", 5) ||
	    time_search(&b, "full-text search of a title word, top 20", op_search_word) ||
	    time_search(&b, "full-text search of a very common word, top 20", op_search_common) ||
	    time_search(&b, "full-text search of two common words, top 20", op_search_two) ||
	    time_search(&b, "typo-tolerant search of a title word with two letters swapped, top 20",
			op_search_typo) ||
	    time_search(&b, "partial-match search of three rare title words, top 20",
			op_search_partial) ||
	    time_search(&b, "phrase search of two title words in a row, top 20", op_search_phrase))
		goto out;
	fprintf(stderr, "bench: timing commits\n");
	if (count_records(&b) || time_commits(&b, 1, o->calls, "commit of one Record update, durable",
			 &b.commit1_pages) ||
	    time_commits(&b, 1000, o->calls / 10 > 10 ? o->calls / 10 : 10,
			 "commit of 1,000 Record updates, durable", &b.commit1000_pages) ||
	    time_full_updates(&b, o->calls / 10 > 10 ? o->calls / 10 : 10,
			      "commit of 1,000 full updates (title and every value), durable",
			      &b.commit_full_pages))
		goto out;
	fprintf(stderr, "bench: timing versioning\n");
	if (time_versioning(&b))
		goto out;
	if (time_open(&b))
		goto out;
	fprintf(stderr, "bench: timing the server\n");
	if (time_server(&b))
		goto out;
	/* The open test left a fresh handle: map it again, as the peers' caches are warm. */
	if (o->n_peers && (cairn_store_warm(b.st) || compare(&b)))
		goto out;
	if (o->reuse && cairn_store_stats(b.st, b.dbs, 16, &b.n_dbs))
		goto out;
	m = open_memstream(&text, &tlen);
	report(m, &b);
	fclose(m);
	snprintf(tag, sizeof(tag), "size=%llu", (unsigned long long)o->records);
	if (bench_publish(o, tag, text))
		goto out;
	rc = 0;
out:
	for (size_t k = 1; k < b.n_eng; k++)
		b.eng[k]->close(b.eng[k]);
	free(text);
	free(b.kinds);
	free(b.keys);
	free(b.qeq);
	free(b.parts);
	free(b.hood_sizes);
	for (int i = 0; i < 6; i++)
		free(b.stext[i]);
	free(b.rtext);
	free(b.rtext_key);
	free(b.ref_hits);
	free(b.ref_n);
	free(b.qrange);
	free(b.upd);
	cairn_close(b.st);
	if (!o->keep && !o->reuse && bench_remove_work(o))
		fprintf(stderr, "bench: could not remove %s\n", o->work);
	return rc;
}
