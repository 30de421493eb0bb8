/*
 * The memory benchmark (cairn-bench --memory): a Domain with the memory
 * schema holding N memories about N/20 people, from 100 sources, each
 * linked to its subject by about; then, through the library, remembering
 * (resolve the subject by name, then one durable commit) and the digest
 * of a subject and the recall of a question, with their p50, p95 and p99,
 * and the counts that do not depend on the machine. Its block of docs/performance.md is "memory=N".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cairn.h"
#include "bench/bench.h"

#define DOMAIN "mem"
#define SOURCES 100
#define PER_SUBJECT 20
#define ERASED 1000 /* memories of the source erased */

static const char *const verbs[] = {"likes",   "visited",  "works on", "asked about",
				    "prefers", "moved to", "met",      "wrote about",
				    "plans",   "dislikes"};
static const char *const things[] = {"tea",    "Lisbon", "the roadmap", "chess",  "Porto",
				     "jazz",   "Oslo",	 "the budget",	"hiking", "coffee",
				     "Python", "Kyoto",	 "the launch",	"go",	  "sailing"};

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

typedef struct row {
	const char *name;
	double p50, p95, p99;
	unsigned calls;
} row;

static void pct(row *r, double *us, unsigned n)
{
	qsort(us, n, sizeof(*us), cmp_double);
	r->p50 = us[n / 2];
	r->p95 = us[(size_t)(n * 0.95)];
	r->p99 = us[(size_t)(n * 0.99)];
	r->calls = n;
	fprintf(stderr, "bench: %-56s p50 %8.1f us\n", r->name, r->p50);
}

static int fail(const char *what, int rc)
{
	fprintf(stderr, "bench: %s: %s: %s\n", what, cairn_errname(rc), cairn_errmsg());
	return -1;
}

/* The dataset as import lines: people, then their memories and about Links. */
static int write_data(const char *path, uint64_t n, uint64_t seed)
{
	FILE *f = fopen(path, "w");
	uint64_t people = n / PER_SUBJECT ? n / PER_SUBJECT : 1, x = seed * 2654435761u + 1;

	if (!f)
		return -1;
	for (uint64_t p = 0; p < people; p++)
		fprintf(f,
			"{\"kind\":\"Entity\",\"key\":\"p%llu\",\"title\":\"Person %llu\","
			"\"values\":{\"type\":\"person\"}}\n",
			(unsigned long long)p, (unsigned long long)p);
	for (uint64_t i = 0; i < n; i++) {
		uint64_t p = i % people;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		fprintf(f,
			"{\"kind\":\"Memory\",\"key\":\"m%llu\",\"title\":\"Person %llu %s %s "
			"%llu\","
			"\"values\":{\"status\":\"active\",\"confidence\":%.2f,\"source\":\"src/"
			"%llu\","
			"\"type\":\"fact\"}}\n"
			"{\"rel\":\"about\",\"from\":\"Memory:m%llu\",\"to\":\"Entity:p%llu\"}\n",
			(unsigned long long)i, (unsigned long long)p, verbs[x % 10],
			things[(x >> 8) % 15], (unsigned long long)i,
			0.5 + (double)((x >> 16) % 50) / 100.0, (unsigned long long)(i % SOURCES),
			(unsigned long long)i, (unsigned long long)p);
	}
	return fclose(f) ? -1 : 0;
}

int bench_memory(const bench_options *o)
{
	cairn_open_options oo = {.flags = CAIRN_OPEN_CREATE};
	cairn_commit_options co = {0};
	cairn_import_options io = {0};
	cairn_import_stats is;
	cairn_import *im;
	cairn_store *st = NULL;
	uint64_t people = o->records / PER_SUBJECT;
	char path[1100], store[1100], tag[64], *text = NULL;
	unsigned calls = o->calls ? o->calls : 300;
	double *us = calloc(calls, sizeof(double)), t0, import_s = 0, erase_s = 0;
	cairn_erase_result erased;
	row rows[5];
	size_t nrows = 0, tlen = 0, digest_items = 0, recall_hits = 0, recall_about = 0;
	uint64_t commits_before = 0;
	const char *schema = cairn_memory_schema();
	FILE *f, *m;
	int rc = -1, crc;
	long long run;

	if (!us)
		return -1;
	snprintf(path, sizeof(path), "mkdir -p '%s'", o->work);
	if (system(path) != 0)
		goto out;
	snprintf(store, sizeof(store), "%s/store", o->work);
	snprintf(path, sizeof(path), "%s/memories.jsonl", o->work);
	if ((crc = cairn_open(store, &oo, &st)))
		return fail("open", crc);
	co.domain = DOMAIN;
	co.prov.actor = "bench";
	co.create_domain = 1;
	if (!o->reuse) {
		fprintf(stderr, "bench: writing %llu memories\n", (unsigned long long)o->records);
		if (write_data(path, o->records, o->seed) || !(f = fopen(path, "r")))
			goto out;
		if ((crc = cairn_schema_apply(st, &co, schema, strlen(schema), NULL))) {
			fclose(f);
			fail("schema", crc);
			goto out;
		}
		io.commit = co;
		io.commit.create_domain = 0;
		t0 = now_us();
		if ((crc = cairn_import_begin(st, &io, &im)) ||
		    (crc = cairn_import_feed(im, path, f)) || (crc = cairn_import_end(im, &is))) {
			fclose(f);
			fail("import", crc);
			goto out;
		}
		import_s = (now_us() - t0) / 1e6;
		fclose(f);
		remove(path);
		fprintf(stderr, "bench: imported in %.1f s\n", import_s);
	}
	co.create_domain = 0;
	run = (long long)time(NULL);
	if ((crc = cairn_store_warm(st))) {
		fail("warm", crc);
		goto out;
	}
	/* Remember: a new memory about a person named by name, resolved first; durable. */
	for (unsigned i = 0; i < calls; i++) {
		char name[64], txt[128];
		const char *about[1] = {name};
		cairn_memory_in in;
		cairn_memory_out out;
		cairn_commit_result res;

		snprintf(name, sizeof(name), "Person %llu",
			 (unsigned long long)((i * 7919u) % people));
		/* New in every run, a reused store's too. */
		snprintf(txt, sizeof(txt), "%s said something new, number %u of run %lld", name, i,
			 (long long)run);
		memset(&in, 0, sizeof(in));
		in.text = txt;
		in.about = about;
		in.n_about = 1;
		co.prov.source = "bench/remember";
		t0 = now_us();
		crc = cairn_remember(st, &co, &in, 1, &out, &res);
		us[i] = now_us() - t0;
		if (crc || !out.created || out.about[0].created) {
			fail("remember", crc ? crc : CAIRN_EINVAL);
			goto out;
		}
		commits_before += res.revision != 0;
	}
	rows[nrows].name = "remember: resolve the subject by name, then one durable commit";
	pct(&rows[nrows++], us, calls);
	/* The digest of a subject, by Kind:key and by name. */
	for (int by_name = 0; by_name < 2; by_name++) {
		for (unsigned i = 0; i < calls; i++) {
			char subj[64];
			const char *s[1] = {subj};
			cairn_read_options ro = {0};
			cairn_digest_options d = {0};
			cairn_digest_item it[20];
			size_t n, total;
			cairn_txn *t;

			snprintf(subj, sizeof(subj), by_name ? "Person %llu" : "Entity:p%llu",
				 (unsigned long long)((i * 104729u) % people));
			ro.domain = DOMAIN;
			d.subjects = s;
			d.n_subjects = 1;
			t0 = now_us();
			if ((crc = cairn_txn_begin(st, &ro, &t)))
				goto dfail;
			crc = cairn_digest(t, &d, 0, it, 20, &n, &total, NULL, NULL);
			cairn_txn_end(t);
			us[i] = now_us() - t0;
			if (crc)
				goto dfail;
			digest_items += n;
		}
		rows[nrows].name = by_name ? "digest of a subject named by its name (top 20 of ~20)"
					   : "digest of a subject as Kind:key (top 20 of ~20)";
		pct(&rows[nrows++], us, calls);
	}
	/*
	 * Recall of a question as an agent asks it, by words (these memories
	 * have no vectors): "What does Person 123 think of chess?" Its top hit
	 * is counted when it is one of that person's memories about that thing.
	 */
	for (unsigned i = 0; i < calls; i++) {
		char q[128], want[64];
		cairn_read_options ro = {0};
		cairn_recall_options r = {0};
		const char *const kinds[] = {"Memory"};
		cairn_hit h[10];
		size_t n;
		cairn_txn *t;
		uint64_t p = (i * 7817u) % people;
		const char *thing = things[i % 15];

		snprintf(q, sizeof(q), "What does Person %llu think of %s?", (unsigned long long)p,
			 thing);
		snprintf(want, sizeof(want), "Person %llu ", (unsigned long long)p);
		ro.domain = DOMAIN;
		r.text = q;
		r.kinds = kinds;
		r.n_kinds = 1;
		t0 = now_us();
		if ((crc = cairn_txn_begin(st, &ro, &t)))
			goto rfail;
		crc = cairn_recall(t, &r, h, NULL, 10, &n);
		if (!crc && n) {
			const cairn_record *top = &h[0].rec;
			size_t wl = strlen(want), tl = strlen(thing);

			recall_about += top->title_len > wl && memcmp(top->title, want, wl) == 0 &&
					memmem(top->title, top->title_len, thing, tl) != NULL;
		}
		cairn_txn_end(t);
		us[i] = now_us() - t0;
		if (crc)
			goto rfail;
		recall_hits += n;
	}
	rows[nrows].name = "recall of a question by words (\"What does Person N think of chess?\", "
			   "top 10)";
	pct(&rows[nrows++], us, calls);
	/*
	 * Erasure: 1,000 memories from one source, each its own commit (as a
	 * conversation writes them), erased by that source at once.
	 */
	for (unsigned i = 0; i < ERASED; i++) {
		char name[64], txt[160];
		const char *about[1] = {name};
		cairn_memory_in in;
		cairn_memory_out out;

		snprintf(name, sizeof(name), "Person %llu", (unsigned long long)((i * 31u) % people));
		snprintf(txt, sizeof(txt), "%s told the forgettable thing %u of run %lld", name, i, run);
		memset(&in, 0, sizeof(in));
		in.text = txt;
		in.about = about;
		in.n_about = 1;
		co.prov.source = "bench/forget-me";
		if ((crc = cairn_remember(st, &co, &in, 1, &out, NULL))) {
			fail("remember", crc);
			goto out;
		}
	}
	{
		cairn_erase_options eo;

		memset(&eo, 0, sizeof(eo));
		eo.commit.domain = DOMAIN;
		eo.commit.prov.actor = "bench";
		eo.commit.prov.message = "the source asked to be forgotten";
		eo.source = "bench/forget-me";
		t0 = now_us();
		crc = cairn_erase(st, &eo, &erased);
		erase_s = (now_us() - t0) / 1e6;
		if (crc) {
			fail("erase", crc);
			goto out;
		}
		fprintf(stderr, "bench: erased one source's %u memories in %.2f s\n", ERASED, erase_s);
	}
	m = open_memstream(&text, &tlen);
	{
		char cpu[256], date[64];
		time_t now = time(NULL);

		bench_cpu(cpu, sizeof(cpu));
		strftime(date, sizeof(date), "%Y-%m-%d %H:%M UTC", gmtime(&now));
		fprintf(m,
			"### Memory: %llu memories\n\n%s, %ld cores, %s. Through the library, "
			"%llu memories about %llu people from %d sources (cairn-bench --memory "
			"--size %llu); durable commits; each digest its own read transaction.\n\n",
			(unsigned long long)o->records, cpu, sysconf(_SC_NPROCESSORS_ONLN), date,
			(unsigned long long)o->records, (unsigned long long)people, SOURCES,
			(unsigned long long)o->records);
	}
	if (import_s > 0)
		fprintf(m, "Loaded by import in %.1f s.\n\n", import_s);
	fprintf(m, "| operation | p50 µs | p95 µs | p99 µs | calls |\n|---|---:|---:|---:|---:|\n");
	for (size_t i = 0; i < nrows; i++)
		fprintf(m, "| %s | %.0f | %.0f | %.0f | %u |\n", rows[i].name, rows[i].p50,
			rows[i].p95, rows[i].p99, rows[i].calls);
	fprintf(m,
		"\nCounts: %u remembers, each one commit (%llu commits), no subject made twice; "
		"%zu memories shown by %u digests.\n",
		calls, (unsigned long long)commits_before, digest_items, 2 * calls);
	fprintf(m,
		"%zu memories recalled by %u questions; the first is the person's and of the "
		"thing asked about for %zu.\n",
		recall_hits, calls, recall_about);
	fprintf(m, "\n| erasure of one source's %u memories (each written by its own commit) | |\n"
		   "|---|---:|\n| time | %.2f s |\n| write transactions | %llu |\n"
		   "| Records, Links, Versions erased | %llu, %llu, %llu |\n"
		   "| index entries removed (attributes, postings, vectors; names uncounted) | %llu |\n"
		   "| lexicon words no posting has any more | %llu |\n",
		ERASED, erase_s, (unsigned long long)erased.transactions,
		(unsigned long long)erased.records, (unsigned long long)erased.links,
		(unsigned long long)erased.versions, (unsigned long long)erased.index_entries,
		(unsigned long long)erased.lexicon_words);
	fclose(m);
	snprintf(tag, sizeof(tag), "memory=%llu", (unsigned long long)o->records);
	if (bench_publish(o, tag, text))
		goto out;
	rc = 0;
	goto out;
dfail:
	fail("digest", crc);
	goto out;
rfail:
	fail("recall", crc);
out:
	free(text);
	free(us);
	if (st)
		cairn_close(st);
	if (!o->keep && bench_remove_work(o))
		rc = -1;
	return rc;
}
