/*
 * The vector benchmark (cairn-bench --vectors, docs/performance.md): the
 * supply workload's Records with 384-dimension vectors drawn around 400
 * centres (shared/workload.md), imported from float32 rows, the vector
 * index built after the import, then semantic searches timed with no
 * filter, a 40% filter (Suppliers) and a 1% filter (RiskFlags), each with
 * its recall@10 and @20 against exact search, on main and on a branch that
 * diverged from main by 1,000 changes on each side; the recall-latency
 * curve over the lists scanned; and, with --peers and the npm package
 * usearch installed, usearch's curve on the same vectors and queries.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench.h"
#include "bench/gen.h"
#include "cairn.h"

#define DOMAIN "supply"
#define VDIM GEN_VECTOR_DIM
#define VREF 100   /* queries with exact answers (an exact search reads every vector) */
#define VK 20	   /* hits asked for; recall@10 and @20 */
#define CHANGES 1000 /* changes on each side of the branch */

typedef struct vrow {
	char name[96];
	double p50, p95, p99; /* microseconds */
	double r10, r20, entries;
} vrow;

typedef struct vb {
	const bench_options *o;
	cairn_store *st;
	char dir[1024], store[1200];
	float (*q)[VDIM];
	size_t nq;
	uint64_t (*ref)[VK]; /* exact answers (vids) of the first VREF queries */
	size_t nref[VREF];
	double import_s, build_s, embed_p50, embed_p95;
	cairn_vindex_info idx;
	vrow rows[16];	/* semantic (and hybrid) search rows */
	char wh[VREF][192]; /* an attribute filter per query (q_filters.txt), when where_on */
	int where_on;
	size_t n_rows;
	vrow curve[8], rare[8]; /* over the lists scanned: no filter; RiskFlags (1%) */
	size_t n_curve, n_rare;
	vrow peer[8];
	size_t n_peer;
	double peer_build_s, peer_bytes;
	char peer_note[256];
} vb;

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* A row's p50, p95 and p99 of the calls' times (sorted in place). */
static void percentiles(vrow *r, double *us, unsigned calls)
{
	qsort(us, calls, sizeof(double), cmp_d);
	r->p50 = us[calls / 2];
	r->p95 = us[(size_t)(calls * 0.95)];
	r->p99 = us[(size_t)(calls * 0.99)];
}

static int fail(const char *what, int rc)
{
	fprintf(stderr, "bench: %s: %s (%s)\n", what, cairn_errmsg(), cairn_errname(rc));
	return -1;
}

static int load_queries(vb *b)
{
	char path[1200];
	static char line[1 << 14];
	FILE *f;

	snprintf(path, sizeof(path), "%s/q_vectors.txt", b->dir);
	if (!(f = fopen(path, "r")))
		return fprintf(stderr, "bench: %s: %s\n", path, strerror(errno)), -1;
	b->q = malloc(GEN_QUERIES * sizeof(*b->q));
	while (b->q && b->nq < GEN_QUERIES && fgets(line, sizeof(line), f)) {
		char *p = line;

		for (int d = 0; d < VDIM; d++) {
			b->q[b->nq][d] = strtof(p, &p);
			if (*p == ',')
				p++;
		}
		b->nq++;
	}
	fclose(f);
	return b->q && b->nq >= VREF ? 0 : -1;
}

/* Generate (vectors as float32 rows), create the store and import the Records with them. */
static int build(vb *b)
{
	gen_options g = {0};
	cairn_open_options oo = {.flags = CAIRN_OPEN_CREATE | CAIRN_OPEN_NO_BACKGROUND};
	cairn_commit_options co = {0};
	cairn_import_options io;
	cairn_import_stats is;
	cairn_import *im = NULL;
	char path[1300], *schema = NULL;
	FILE *f, *vf;
	long n;
	double t0;
	int rc;

	g.records = b->o->records;
	g.seed = b->o->seed;
	g.dir = b->dir;
	g.vectors = GEN_VECTORS_F32;
	if (gen_run(&g))
		return -1;
	if ((rc = cairn_open(b->store, &oo, &b->st)) || (rc = cairn_domain_create(b->st, DOMAIN)))
		return fail("create", rc);
	snprintf(path, sizeof(path), "%s/schema.json", b->dir);
	if (!(f = fopen(path, "r")))
		return -1;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	schema = malloc((size_t)n + 1);
	if (!schema || fread(schema, 1, (size_t)n, f) != (size_t)n) {
		fclose(f);
		free(schema);
		return -1;
	}
	fclose(f);
	co.domain = DOMAIN;
	co.prov.actor = "bench";
	rc = cairn_schema_apply(b->st, &co, schema, (size_t)n, NULL);
	free(schema);
	if (rc)
		return fail("schema", rc);
	memset(&io, 0, sizeof(io));
	io.commit = co;
	io.on_error = CAIRN_ON_ERROR_STOP;
	snprintf(path, sizeof(path), "%s/vectors.f32", b->dir);
	if (!(vf = fopen(path, "rb")))
		return -1;
	io.vectors = vf;
	io.vector_dim = VDIM;
	snprintf(path, sizeof(path), "%s/records.jsonl", b->dir);
	if (!(f = fopen(path, "r"))) {
		fclose(vf);
		return -1;
	}
	fprintf(stderr, "bench: importing %llu Records with their vectors\n",
		(unsigned long long)b->o->records);
	t0 = now_us();
	if (!(rc = cairn_import_begin(b->st, &io, &im)))
		rc = cairn_import_feed(im, "records.jsonl", f);
	if (im) {
		int erc = cairn_import_end(im, &is);

		rc = rc ? rc : erc;
	}
	b->import_s = (now_us() - t0) / 1e6;
	fclose(f);
	fclose(vf);
	return rc ? fail("import", rc) : 0;
}

/* One search of query qi (filter: a Kind or NULL); hits' vids in out, candidates in *entries. */
static int search(vb *b, const char *branch, size_t qi, const char *kind, size_t probes, int exact,
		  uint64_t *out, size_t *n, double *entries)
{
	cairn_read_options ro = {0};
	cairn_vsearch_options o = {0};
	cairn_hit h[VK];
	cairn_read_stats rs;
	cairn_txn *t;
	int rc;

	ro.domain = DOMAIN;
	ro.branch = branch;
	if ((rc = cairn_txn_begin(b->st, &ro, &t)))
		return rc;
	o.vector = b->q[qi];
	o.dim = VDIM;
	o.limit = VK;
	o.probes = probes;
	o.exact = exact;
	if (kind) {
		o.kinds = &kind;
		o.n_kinds = 1;
	}
	if (b->where_on)
		o.where = b->wh[qi];
	rc = cairn_vsearch(t, &o, h, VK, n);
	for (size_t i = 0; !rc && i < *n; i++)
		out[i] = h[i].rec.vid;
	cairn_txn_stats(t, &rs);
	if (entries)
		*entries = (double)rs.entries;
	cairn_txn_end(t);
	return rc;
}

static int refs(vb *b, const char *branch, const char *kind)
{
	for (size_t i = 0; i < VREF; i++) {
		int rc = search(b, branch, i, kind, 0, 1, b->ref[i], &b->nref[i], NULL);

		if (rc)
			return fail("exact search", rc);
	}
	return 0;
}

/* Time calls searches (after warm-up), cycling over the VREF queries; recall against refs. */
static int timed(vb *b, vrow *r, const char *name, const char *branch, const char *kind,
		 size_t probes)
{
	unsigned calls = b->o->calls, warm = b->o->warmup;
	double *us = malloc(calls * sizeof(double)), ent = 0;
	uint64_t got[VK];
	size_t n;
	int rc = 0;

	if (!us)
		return -1;
	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "%s", name);
	for (unsigned i = 0; i < warm && !rc; i++)
		rc = search(b, branch, i % VREF, kind, probes, 0, got, &n, NULL);
	for (unsigned i = 0; i < calls && !rc; i++) {
		size_t qi = i % VREF, h10 = 0, h20 = 0;
		double t0 = now_us(), e;

		rc = search(b, branch, qi, kind, probes, 0, got, &n, &e);
		us[i] = now_us() - t0;
		ent += e;
		for (size_t a = 0; a < n; a++)
			for (size_t x = 0; x < b->nref[qi]; x++)
				if (got[a] == b->ref[qi][x]) {
					h20++;
					h10 += a < 10 && x < 10;
				}
		r->r10 += (double)h10 / (b->nref[qi] < 10 ? (double)b->nref[qi] : 10.0);
		r->r20 += (double)h20 / (double)(b->nref[qi] ? b->nref[qi] : 1);
	}
	if (rc) {
		free(us);
		return fail(name, rc);
	}
	percentiles(r, us, calls);
	r->r10 /= calls;
	r->r20 /= calls;
	r->entries = ent / calls;
	free(us);
	fprintf(stderr, "bench: %-52s p50 %7.1f us  recall@10 %.3f\n", name, r->p50, r->r10);
	return 0;
}

/*
 * Hybrid search: a title word of the data (q_title_words.txt) and a query
 * vector, fused by reciprocal rank, top 20; no recall (there is no exact
 * answer to a fusion), the candidates are both searches'.
 */
static int timed_hybrid(vb *b, vrow *r, const char *name, const char *rank_json)
{
	char path[1200], words[VREF][128];
	unsigned calls = b->o->calls, warm = b->o->warmup;
	double *us = malloc(calls * sizeof(double)), ent = 0;
	cairn_trust trust = {"bench", 0.9};
	cairn_rank_options rk = {0};
	size_t nw = 0;
	FILE *f;
	int rc = 0;

	snprintf(path, sizeof(path), "%s/q_title_words.txt", b->dir);
	if (!us || !(f = fopen(path, "r"))) {
		free(us);
		return -1;
	}
	while (nw < VREF && fgets(words[nw], sizeof(words[nw]), f))
		words[nw][strcspn(words[nw], "\n")] = '\0', nw++;
	fclose(f);
	if (!nw) {
		free(us);
		return -1;
	}
	rk.confidence = 1;
	rk.trust = &trust;
	rk.n_trust = 1;
	rk.half_life_days = 30;
	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "%s", name);
	for (unsigned i = 0; i < warm + calls && !rc; i++) {
		cairn_read_options ro = {0};
		cairn_hybrid_options o = {0};
		cairn_hit h[VK];
		cairn_read_stats rs;
		cairn_txn *t;
		size_t n;
		double t0 = now_us();

		ro.domain = DOMAIN;
		if ((rc = cairn_txn_begin(b->st, &ro, &t)))
			break;
		o.text = words[i % nw];
		o.vector = b->q[i % VREF];
		o.dim = VDIM;
		o.limit = VK;
		o.rank = rank_json ? &rk : NULL;
		rc = cairn_hybrid(t, &o, h, VK, &n);
		cairn_txn_stats(t, &rs);
		cairn_txn_end(t);
		if (i >= warm) {
			us[i - warm] = now_us() - t0;
			ent += (double)rs.entries;
		}
	}
	if (rc) {
		free(us);
		return fail(name, rc);
	}
	percentiles(r, us, calls);
	r->r10 = r->r20 = -1;
	r->entries = ent / calls;
	free(us);
	fprintf(stderr, "bench: %-52s p50 %7.1f us\n", name, r->p50);
	return 0;
}

/*
 * Attribute filters of q_filters.txt on Parts (kind, attribute), one per
 * query, cycling over those the file has: its recall and times, as a row.
 */
static int attr_filter(vb *b, const char *name, const char *kind, const char *attr)
{
	char path[1200], line[512];
	size_t n = 0;
	FILE *f;
	int rc;

	snprintf(path, sizeof(path), "%s/q_filters.txt", b->dir);
	if (!(f = fopen(path, "r")))
		return -1;
	while (n < VREF && fgets(line, sizeof(line), f)) {
		char k[64], a[64], v[96];

		if (sscanf(line, "%63[^\t]\t%63[^\t]\t%95[^\t\n]", k, a, v) == 3 &&
		    strcmp(k, kind) == 0 && strcmp(a, attr) == 0)
			snprintf(b->wh[n++], sizeof(b->wh[0]), "{\"%s\":\"%s\"}", a, v);
	}
	fclose(f);
	if (!n)
		return 0; /* none in this dataset */
	for (size_t i = n; i < VREF; i++)
		memcpy(b->wh[i], b->wh[i % n], sizeof(b->wh[0]));
	b->where_on = 1;
	rc = refs(b, NULL, kind) || timed(b, &b->rows[b->n_rows++], name, NULL, kind, 0) ? -1 : 0;
	b->where_on = 0;
	return rc;
}

/* The three filters of the workload on one branch. */
static int filters(vb *b, const char *branch, const char *where)
{
	static const char *const kinds[3] = {NULL, "Supplier", "RiskFlag"};
	static const char *const names[3] = {"no filter", "Suppliers (40%)", "RiskFlags (1%)"};

	for (int k = 0; k < 3; k++) {
		char name[96];

		snprintf(name, sizeof(name), "%s, %s", where, names[k]);
		if (refs(b, branch, kinds[k]) || timed(b, &b->rows[b->n_rows++], name, branch, kinds[k], 0))
			return -1;
	}
	return 0;
}

/* CHANGES new vectors for Records of q_keys.txt, on branch (NULL: main). */
static int diverge(vb *b, const char *branch, size_t offset)
{
	char path[1200], line[256];
	cairn_commit_options co = {0};
	cairn_changeset *cs;
	FILE *f;
	size_t i = 0;
	int rc;

	snprintf(path, sizeof(path), "%s/q_keys.txt", b->dir);
	if (!(f = fopen(path, "r")) || (rc = cairn_changeset_new(&cs))) {
		if (f)
			fclose(f);
		return -1;
	}
	while (!rc && i < CHANGES && fgets(line, sizeof(line), f)) {
		char *tab = strchr(line, '\t');

		if (!tab)
			continue;
		*tab = '\0';
		tab[1 + strcspn(tab + 1, "\n")] = '\0';
		if (!(rc = cairn_changeset_patch(cs, line, tab + 1, strlen(tab + 1), "{}", 2)))
			rc = cairn_changeset_vector(cs, b->q[VREF + (i + offset) % (b->nq - VREF)], VDIM);
		i++;
	}
	fclose(f);
	co.domain = DOMAIN;
	co.branch = branch;
	co.prov.actor = "bench";
	if (!rc)
		rc = cairn_commit(b->st, &co, cs, NULL);
	cairn_changeset_free(cs);
	return rc ? fail("diverge", rc) : 0;
}

/* Embedding a query with the built-in model, when its file is there. */
static void time_embed(vb *b)
{
	const char *path = getenv("CAIRN_MODEL") ? getenv("CAIRN_MODEL") : "models/glove-6b-100d.cemb";
	char file[1200], line[256];
	cairn_embedder *e;
	double us[300];
	float v[1024];
	unsigned n = 0;
	FILE *f;

	snprintf(file, sizeof(file), "%s/q_partial.txt", b->dir);
	if (cairn_embedder_open(path, &e))
		return;
	if ((f = fopen(file, "r"))) {
		while (n < 300 && fgets(line, sizeof(line), f)) {
			size_t len = strcspn(line, "\n"), words;
			double t0 = now_us();

			if (cairn_embed(e, line, len, v, 1024, &words))
				break;
			us[n++] = now_us() - t0;
		}
		fclose(f);
	}
	cairn_embedder_close(e);
	if (n) {
		qsort(us, n, sizeof(double), cmp_d);
		b->embed_p50 = us[n / 2];
		b->embed_p95 = us[(size_t)(n * 0.95)];
	}
}

/* ------------------------------------------------------------- usearch -- */

/*
 * The peer: usearch (npm) on the same float32 rows and query vectors,
 * through bench/peer_usearch.mjs, which measures its recall against exact
 * search over the same rows.
 */
static void peer_usearch(vb *b)
{
	char path[1300], cmd[4096], line[512];
	FILE *q, *p;

	snprintf(path, sizeof(path), "%s/node_modules/usearch/package.json", b->o->npm);
	if (access(path, R_OK) != 0) {
		snprintf(b->peer_note, sizeof(b->peer_note), "usearch is not installed (make bench-vectors)");
		return;
	}
	snprintf(path, sizeof(path), "%s/queries.f32", b->dir);
	if (!(q = fopen(path, "wb")))
		return;
	for (size_t i = 0; i < VREF; i++)
		fwrite(b->q[i], sizeof(float), VDIM, q);
	if (fclose(q) != 0)
		return;
	fprintf(stderr, "bench: usearch on the same vectors (its build takes a while)\n");
	snprintf(cmd, sizeof(cmd),
		 "node bench/peer_usearch.mjs '%s' '%s/vectors.f32' %d '%s/queries.f32' %d %d %u",
		 b->o->npm, b->dir, VDIM, b->dir, VREF, VK, b->o->calls);
	if (!(p = popen(cmd, "r")))
		return;
	while (fgets(line, sizeof(line), p)) {
		vrow *r = &b->peer[b->n_peer];
		double ef;

		if (sscanf(line, "{\"build_s\":%lf,\"bytes\":%lf}", &b->peer_build_s, &b->peer_bytes) == 2)
			continue;
		if (b->n_peer < 8 &&
		    sscanf(line, "{\"ef\":%lf,\"p50\":%lf,\"p95\":%lf,\"p99\":%lf,\"r10\":%lf,\"r20\":%lf}",
			   &ef, &r->p50, &r->p95, &r->p99, &r->r10, &r->r20) == 6) {
			snprintf(r->name, sizeof(r->name), "%.0f", ef);
			b->n_peer++;
		}
	}
	if (pclose(p) != 0 || !b->n_peer)
		snprintf(b->peer_note, sizeof(b->peer_note), "the usearch peer failed (see stderr)");
}

/* ---------------------------------------------------------------- page -- */

static void row_line(FILE *m, const vrow *r)
{
	if (r->r10 < 0) /* no exact answer to compare with */
		fprintf(m, "| %s | %.0f | %.0f | %.0f | | | %.0f |\n", r->name, r->p50, r->p95, r->p99,
			r->entries);
	else
		fprintf(m, "| %s | %.0f | %.0f | %.0f | %.3f | %.3f | %.0f |\n", r->name, r->p50,
			r->p95, r->p99, r->r10, r->r20, r->entries);
}

static void report(vb *b, FILE *m)
{
	char cpu[256];
	time_t now = time(NULL);
	char date[64];

	bench_cpu(cpu, sizeof(cpu));
	strftime(date, sizeof(date), "%Y-%m-%d %H:%M UTC", gmtime(&now));
	fprintf(m, "### Vectors: %llu Records x %d dimensions, %d clusters\n\n",
		(unsigned long long)b->o->records, VDIM, GEN_CLUSTERS);
	fprintf(m, "%s, %ld cores, %s; %u timed calls after %u warm-up calls per row, each its own "
		   "read transaction, cycling over %d query vectors drawn like the Records (fresh "
		   "draws); recall against exact search of the same view. Times in microseconds.\n\n",
		cpu, sysconf(_SC_NPROCESSORS_ONLN), date, b->o->calls, b->o->warmup, VREF);
	fprintf(m, "| | |\n|---|---|\n");
	if (b->import_s > 0)
		fprintf(m, "| import of the Records with their vectors (float32 rows), durable | %.1f s "
			   "(%.0f Records/s) |\n",
			b->import_s, (double)b->o->records / b->import_s);
	else
		fprintf(m, "| import of the Records with their vectors | not timed: the store of an "
			   "earlier run, reused |\n");
	fprintf(m, "| vector index build after the import (2 threads) | %.1f s |\n", b->build_s);
	fprintf(m, "| index: lists, entries | %llu, %llu |\n", (unsigned long long)b->idx.lists,
		(unsigned long long)b->idx.vectors);
	fprintf(m, "| index bytes per vector (int8 codes, vid, Kind, scale, norm, centroids) | %.0f |\n",
		(double)b->idx.bytes / (double)b->idx.vectors);
	fprintf(m, "| float32 vector bytes per vector (the vectors sub-database's values) | %d |\n",
		VDIM * 4);
	if (b->embed_p50 > 0)
		fprintf(m, "| embedding a query with the built-in model, p50 / p95 | %.1f us / %.1f us |\n",
			b->embed_p50, b->embed_p95);
	fprintf(m, "\n| search, top 20 (the vector index: 8 lists) | p50 | p95 | p99 | recall@10 | "
		   "recall@20 | candidates scored |\n|---|---:|---:|---:|---:|---:|---:|\n");
	for (size_t i = 0; i < b->n_rows; i++)
		row_line(m, &b->rows[i]);
	fprintf(m, "\n| lists scanned (main, no filter) | p50 | p95 | p99 | recall@10 | recall@20 | "
		   "candidates scored |\n|---|---:|---:|---:|---:|---:|---:|\n");
	for (size_t i = 0; i < b->n_curve; i++)
		row_line(m, &b->curve[i]);
	fprintf(m, "\n| lists asked for (main, RiskFlags 1%%: every list scanned) | p50 | p95 | p99 | "
		   "recall@10 | recall@20 | candidates scored |\n|---|---:|---:|---:|---:|---:|---:|\n");
	for (size_t i = 0; i < b->n_rare; i++)
		row_line(m, &b->rare[i]);
	if (b->n_peer) {
		fprintf(m, "\nusearch %s (npm), on the same float32 rows and queries, cosine, its "
			   "default connectivity and expansion_add, built with 2 threads in %.0f s "
			   "(%.0f bytes a vector in memory), searched one query at a time on one thread, "
			   "its recall against exact cosine search over the same rows (brute force in "
			   "the peer's script). The ratio is usearch's p50 over Cairn's at the fewest "
			   "lists that reach at least the same recall@10.\n\n",
			"2.26.2", b->peer_build_s, b->peer_bytes / (double)b->o->records);
		fprintf(m, "| usearch expansion_search | p50 | p95 | p99 | recall@10 | recall@20 | "
			   "usearch / Cairn at equal recall |\n|---|---:|---:|---:|---:|---:|---:|\n");
		for (size_t i = 0; i < b->n_peer; i++) {
			const vrow *r = &b->peer[i];
			const vrow *c = NULL;

			for (size_t j = 0; j < b->n_curve && !c; j++)
				if (b->curve[j].r10 >= r->r10)
					c = &b->curve[j];
			fprintf(m, "| %s | %.0f | %.0f | %.0f | %.3f | %.3f | ", r->name, r->p50, r->p95,
				r->p99, r->r10, r->r20);
			if (c)
				fprintf(m, "%.1fx (%s lists) |\n", r->p50 / c->p50, c->name);
			else
				fprintf(m, "(Cairn's curve stops below) |\n");
		}
	} else if (b->peer_note[0]) {
		fprintf(m, "\nPeer: %s.\n", b->peer_note);
	}
}

int bench_vectors(const bench_options *o)
{
	static const size_t probes[] = {1, 2, 4, 8, 16, 32};
	vb b;
	cairn_vindex_options vo = {0};
	char *text = NULL, tag[64];
	size_t tlen = 0;
	FILE *m;
	int rc = -1, crc;

	memset(&b, 0, sizeof(b));
	b.o = o;
	snprintf(b.dir, sizeof(b.dir), "%s", o->work);
	snprintf(b.store, sizeof(b.store), "%s/vstore", o->work);
	if (o->reuse && access(b.store, F_OK) == 0) {
		cairn_open_options oo = {.flags = CAIRN_OPEN_NO_BACKGROUND};

		if ((crc = cairn_open(b.store, &oo, &b.st)))
			return fail("open", crc);
	} else {
		char cmd[1300];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s/vstore'", o->work);
		if (system(cmd) != 0 || build(&b))
			goto out;
	}
	if (load_queries(&b) || !(b.ref = malloc(VREF * sizeof(*b.ref))))
		goto out;
	fprintf(stderr, "bench: building the vector index\n");
	vo.rebuild = 1;
	if ((crc = cairn_vindex_update(b.st, DOMAIN, &vo, &b.idx))) {
		fail("vindex", crc);
		goto out;
	}
	b.build_s = b.idx.seconds;
	if ((crc = cairn_store_warm(b.st))) {
		fail("warm", crc);
		goto out;
	}
	time_embed(&b);
	fprintf(stderr, "bench: timing semantic search (exact answers first)\n");
	if (filters(&b, NULL, "main") ||
	    attr_filter(&b, "main, Parts of one supplier (an indexed attribute; a few Parts)",
			"Part", "supplier") ||
	    attr_filter(&b, "main, Parts of one category (an indexed attribute; one of 12)",
			"Part", "category") ||
	    attr_filter(&b, "main, Suppliers of one country (an indexed enum; one of 20)",
			"Supplier", "country") ||
	    attr_filter(&b, "main, RiskFlags of one severity (an indexed enum; one of 4)",
			"RiskFlag", "severity") ||
	    timed_hybrid(&b, &b.rows[b.n_rows++], "main, hybrid: a title word and a vector (RRF)", NULL) ||
	    timed_hybrid(&b, &b.rows[b.n_rows++],
			 "main, hybrid, ranked: confidence, trust, 30-day half-life", "rank"))
		goto out;
	if (refs(&b, NULL, NULL))
		goto out;
	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		char name[32];

		snprintf(name, sizeof(name), "%zu", probes[i]);
		if (timed(&b, &b.curve[b.n_curve++], name, NULL, NULL, probes[i]))
			goto out;
	}
	/* A rare Kind at every probe count: more probes must never find less. */
	if (refs(&b, NULL, "RiskFlag"))
		goto out;
	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		char name[32];

		snprintf(name, sizeof(name), "%zu", probes[i]);
		if (timed(&b, &b.rare[b.n_rare++], name, NULL, "RiskFlag", probes[i]))
			goto out;
	}
	/* The peer, on the vectors as imported (before main changes). */
	if (o->npm)
		peer_usearch(&b);
	/* A branch 1,000 changes apart from main on each side (made once), its vectors indexed. */
	crc = cairn_branch_create(b.st, DOMAIN, "vbranch", NULL);
	if (crc && crc != CAIRN_EEXIST) {
		fail("branch", crc);
		goto out;
	}
	if (!crc && (diverge(&b, "vbranch", 0) || diverge(&b, NULL, CHANGES / 2)))
		goto out;
	if ((crc = cairn_vindex_update(b.st, DOMAIN, NULL, &b.idx))) {
		fail("vindex", crc);
		goto out;
	}
	if (filters(&b, "vbranch", "branch"))
		goto out;
	m = open_memstream(&text, &tlen);
	report(&b, m);
	fclose(m);
	snprintf(tag, sizeof(tag), "vectors=%llu", (unsigned long long)o->records);
	if (bench_publish(o, tag, text))
		goto out;
	rc = 0;
out:
	free(text);
	free(b.q);
	free(b.ref);
	if (b.st)
		cairn_close(b.st);
	if (!o->keep && bench_remove_work(o))
		rc = -1;
	return rc;
}
