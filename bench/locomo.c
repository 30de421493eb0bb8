/*
 * The recall benchmark (cairn-bench locomo FILE...): conversations in the
 * LoCoMo format (docs/performance.md, "Recall on conversations"), each
 * loaded into a Domain of its own as a user would (a Turn Record per turn:
 * its text and photo caption, speaker, session and date; a Speaker Record
 * per speaker, which the turns link to), and every question of categories
 * 1 to 4 searched as written, through each way of searching: words,
 * meaning, hybrid, and recall (what the memory tools use), with SQLite
 * FTS5 (Porter stemmer, bm25, the question's words ORed) beside it on the
 * same turns. It prints recall@5, recall@10 and hit@10, overall and per
 * category, and the latency per question; its block of the page is
 * "locomo". The data stays outside the project: the command takes paths.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sqlite3.h>

#include "cairn.h"
#include "base/arena.h"
#include "base/buf.h"
#include "base/json.h"
#include "bench/bench.h"

#define K 10		/* hits read per question */
#define MAX_EVIDENCE 32
#define CATS 4		/* categories 1 to 4: multi-hop, temporal, open-domain, single-hop */

static const char *const cat_names[CATS] = {"multi-hop", "temporal", "open-domain", "single-hop"};

enum { M_FTS5, M_WORDS, M_MEANING, M_HYBRID, M_RECALL, MODES };

static const char *const mode_names[MODES] = {
	"SQLite FTS5 (Porter, bm25, words ORed)", "Cairn, words (`cairn search`)",
	"Cairn, meaning (`cairn search --semantic`)", "Cairn, hybrid (`cairn search --hybrid`)",
	"Cairn, recall (`cairn recall`, MCP search)"};

static const char schema[] =
	"{\"kinds\":[{\"name\":\"Speaker\",\"attributes\":[]},"
	"{\"name\":\"Turn\",\"attributes\":["
	"{\"name\":\"speaker\",\"type\":\"string\",\"search\":true},"
	"{\"name\":\"session\",\"type\":\"int\",\"indexed\":true},"
	"{\"name\":\"date\",\"type\":\"string\",\"search\":true}]}],"
	"\"relations\":[{\"name\":\"said_by\",\"from\":\"Turn\",\"to\":\"Speaker\"}]}";

typedef struct score {
	double recall5, recall10, hit10;
	unsigned n;
} score;

typedef struct run {
	score all[MODES], cat[MODES][CATS];
	double *us[MODES];
	size_t n_us, cap_us;
	unsigned turns, questions, conversations;
} run;

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int fail(const char *what, int rc)
{
	fprintf(stderr, "bench: locomo: %s: %s: %s\n", what, cairn_errname(rc), cairn_errmsg());
	return -1;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *p = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (p = malloc((size_t)n + 1)) && fread(p, 1, (size_t)n, f) == (size_t)n) {
		p[n] = '\0';
		*len = (size_t)n;
	} else {
		free(p);
		p = NULL;
	}
	fclose(f);
	return p;
}

/* The D<n>:<m> ids in the evidence strings of a question (some hold several). */
static size_t evidence(const jv *ev, char ids[MAX_EVIDENCE][16])
{
	size_t n = 0;

	for (uint32_t i = 0; jv_is(ev, JV_ARRAY) && i < ev->len; i++) {
		const char *s = ev->u.items[i].type == JV_STRING ? ev->u.items[i].u.s : "";

		for (const char *p = s; (p = strchr(p, 'D'));) {
			unsigned a, b;
			int used;

			if (sscanf(p, "D%u:%u%n", &a, &b, &used) == 2 && n < MAX_EVIDENCE) {
				int dup = 0;

				snprintf(ids[n], 16, "D%u:%u", a, b);
				for (size_t j = 0; j < n; j++)
					dup |= strcmp(ids[j], ids[n]) == 0;
				n += !dup;
				p += used;
			} else {
				p++;
			}
		}
	}
	return n;
}

static void judge(score *s, char ids[MAX_EVIDENCE][16], size_t n_ids, char hits[K][16],
		  size_t n_hits)
{
	unsigned f5 = 0, f10 = 0;

	for (size_t e = 0; e < n_ids; e++)
		for (size_t h = 0; h < n_hits; h++)
			if (strcmp(ids[e], hits[h]) == 0) {
				f10++;
				f5 += h < 5;
				break;
			}
	s->recall5 += (double)f5 / (double)n_ids;
	s->recall10 += (double)f10 / (double)n_ids;
	s->hit10 += f10 > 0;
	s->n++;
}

/* FTS5: the question's words, each quoted, ORed. */
static void fts_query(buf *q, const char *text)
{
	int first = 1;

	for (const char *p = text; *p;) {
		const char *w = p;

		while (*p && (isalnum((unsigned char)*p) || (unsigned char)*p >= 0x80))
			p++;
		if (p > w) {
			if (!first)
				PUTS(q, " OR ");
			first = 0;
			buf_put_u8(q, '"');
			buf_put(q, w, (size_t)(p - w));
			buf_put_u8(q, '"');
		}
		while (*p && !(isalnum((unsigned char)*p) || (unsigned char)*p >= 0x80))
			p++;
	}
	buf_put_u8(q, '\0');
}

static int record_us(run *r, const double us[MODES])
{
	if (r->n_us == r->cap_us) {
		size_t cap = r->cap_us ? r->cap_us * 2 : 1024;

		for (int m = 0; m < MODES; m++) {
			double *p = realloc(r->us[m], cap * sizeof(double));

			if (!p)
				return -1;
			r->us[m] = p;
		}
		r->cap_us = cap;
	}
	for (int m = 0; m < MODES; m++)
		r->us[m][r->n_us] = us[m];
	r->n_us++;
	return 0;
}

/* Load one conversation into Domain dom and the FTS5 table; the turns loaded. */
static int load(cairn_store *st, sqlite3 *db, const char *dom, const jv *conv,
		const cairn_embedder *emb, unsigned *turns)
{
	cairn_commit_options co = {0};
	cairn_changeset *cs = NULL;
	sqlite3_stmt *ins = NULL;
	buf title = BUF_INIT, values = BUF_INIT;
	int rc;

	co.domain = dom;
	co.prov.actor = "bench";
	co.create_domain = 1;
	if ((rc = cairn_schema_apply(st, &co, schema, sizeof(schema) - 1, NULL)))
		return fail("schema", rc);
	co.create_domain = 0;
	co.embedder = emb;
	co.vector_model = emb ? cairn_embedder_model(emb) : NULL;
	if (sqlite3_exec(db,
			 "CREATE VIRTUAL TABLE t USING fts5(dia UNINDEXED, text, speaker, date, "
			 "tokenize='porter unicode61')",
			 NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "INSERT INTO t VALUES (?,?,?,?)", -1, &ins, NULL) != SQLITE_OK) {
		fprintf(stderr, "bench: locomo: sqlite: %s\n", sqlite3_errmsg(db));
		return -1;
	}
	if ((rc = cairn_changeset_new(&cs)))
		goto out;
	for (int who = 0; who < 2 && !rc; who++) {
		const jv *name = jv_get(conv, who ? "speaker_b" : "speaker_a");

		if (jv_is(name, JV_STRING))
			rc = cairn_changeset_put(cs, "Speaker", name->u.s, name->len, name->u.s,
						 name->len, "{}", 2);
	}
	sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
	for (unsigned sn = 1; !rc; sn++) {
		char key[48];
		const jv *sess, *date;

		snprintf(key, sizeof(key), "session_%u", sn);
		if (!(sess = jv_get(conv, key)))
			break;
		snprintf(key, sizeof(key), "session_%u_date_time", sn);
		date = jv_get(conv, key);
		for (uint32_t i = 0; jv_is(sess, JV_ARRAY) && i < sess->len && !rc; i++) {
			const jv *tu = &sess->u.items[i], *sp = jv_get(tu, "speaker"),
				 *tx = jv_get(tu, "text"), *id = jv_get(tu, "dia_id"),
				 *cap = jv_get(tu, "blip_caption");

			if (!jv_is(sp, JV_STRING) || !jv_is(tx, JV_STRING) || !jv_is(id, JV_STRING))
				continue;
			title.len = values.len = 0;
			buf_put(&title, tx->u.s, tx->len);
			if (jv_is(cap, JV_STRING) && cap->len) {
				buf_put_u8(&title, ' ');
				buf_put(&title, cap->u.s, cap->len);
			}
			PUTS(&values, "{\"speaker\":");
			json_quote(&values, sp->u.s, sp->len);
			buf_printf(&values, ",\"session\":%u", sn);
			if (jv_is(date, JV_STRING)) {
				PUTS(&values, ",\"date\":");
				json_quote(&values, date->u.s, date->len);
			}
			buf_put_u8(&values, '}');
			if (title.oom || values.oom) {
				rc = CAIRN_ENOMEM;
				break;
			}
			rc = cairn_changeset_put(cs, "Turn", id->u.s, id->len, (const char *)title.p,
						 title.len, (const char *)values.p, values.len);
			if (!rc)
				rc = cairn_changeset_link(cs, "said_by", "Turn", id->u.s, id->len,
							  "Speaker", sp->u.s, sp->len, NULL, 0);
			sqlite3_bind_text(ins, 1, id->u.s, (int)id->len, SQLITE_STATIC);
			sqlite3_bind_text(ins, 2, (const char *)title.p, (int)title.len,
					  SQLITE_TRANSIENT);
			sqlite3_bind_text(ins, 3, sp->u.s, (int)sp->len, SQLITE_STATIC);
			sqlite3_bind_text(ins, 4, jv_is(date, JV_STRING) ? date->u.s : "", -1,
					  SQLITE_STATIC);
			if (sqlite3_step(ins) != SQLITE_DONE) {
				fprintf(stderr, "bench: locomo: sqlite: %s\n", sqlite3_errmsg(db));
				rc = CAIRN_EINVAL;
			}
			sqlite3_reset(ins);
			(*turns)++;
		}
	}
	sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	if (!rc)
		rc = cairn_commit(st, &co, cs, NULL);
out:
	cairn_changeset_free(cs);
	sqlite3_finalize(ins);
	buf_release(&title);
	buf_release(&values);
	return rc ? fail("load", rc) : 0;
}

/* Each question of categories 1 to 4 through every way of searching. */
static int ask(cairn_store *st, sqlite3 *db, const char *dom, const jv *qa,
	       const cairn_embedder *emb, run *r)
{
	static const char *const turn[] = {"Turn"};
	cairn_read_options ro = {0};
	sqlite3_stmt *q = NULL;
	cairn_txn *t = NULL;
	cairn_hit hits[K];
	float *vec = NULL;
	size_t dim = emb ? cairn_embedder_dim(emb) : 0;
	buf fq = BUF_INIT;
	int rc = 0;

	ro.domain = dom;
	if ((rc = cairn_txn_begin(st, &ro, &t)))
		return fail("read", rc);
	if (sqlite3_prepare_v2(db, "SELECT dia FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT 10",
			       -1, &q, NULL) != SQLITE_OK) {
		fprintf(stderr, "bench: locomo: sqlite: %s\n", sqlite3_errmsg(db));
		rc = -1;
		goto out;
	}
	if (dim && !(vec = calloc(dim, sizeof(float)))) {
		rc = -1;
		goto out;
	}
	for (uint32_t i = 0; jv_is(qa, JV_ARRAY) && i < qa->len && !rc; i++) {
		const jv *it = &qa->u.items[i], *qt = jv_get(it, "question"),
			 *cat = jv_get(it, "category");
		char ids[MAX_EVIDENCE][16], got[K][16];
		double us[MODES] = {0};
		size_t n_ids, n;
		int c;

		if (!jv_is(qt, JV_STRING) || !jv_is(cat, JV_INT) || cat->u.i < 1 || cat->u.i > CATS)
			continue;
		c = (int)cat->u.i - 1;
		if (!(n_ids = evidence(jv_get(it, "evidence"), ids)))
			continue;
		for (int m = 0; m < MODES && !rc; m++) {
			double t0 = now_us();

			n = 0;
			if (m == M_FTS5) {
				fq.len = 0;
				fts_query(&fq, qt->u.s);
				sqlite3_bind_text(q, 1, (const char *)fq.p, -1, SQLITE_STATIC);
				while (n < K && sqlite3_step(q) == SQLITE_ROW)
					snprintf(got[n++], 16, "%s", sqlite3_column_text(q, 0));
				sqlite3_reset(q);
			} else if (m == M_WORDS) {
				cairn_search_options so = {0};

				so.text = qt->u.s;
				so.kinds = turn;
				so.n_kinds = 1;
				so.limit = K;
				rc = cairn_search(t, &so, hits, K, &n, NULL);
			} else if (m == M_MEANING) {
				cairn_vsearch_options vo = {0};
				size_t words = 0;

				if (!emb)
					continue;
				rc = cairn_embed(emb, qt->u.s, qt->len, vec, dim, &words);
				vo.vector = vec;
				vo.dim = dim;
				vo.kinds = turn;
				vo.n_kinds = 1;
				vo.limit = K;
				if (!rc && words)
					rc = cairn_vsearch(t, &vo, hits, K, &n);
			} else if (m == M_HYBRID) {
				cairn_hybrid_options ho = {0};

				ho.text = qt->u.s;
				ho.embedder = emb;
				ho.kinds = turn;
				ho.n_kinds = 1;
				ho.limit = K;
				if (!emb)
					ho.text_weight = 1;
				rc = cairn_hybrid(t, &ho, hits, K, &n);
			} else {
				cairn_recall_options ro2 = {0};

				ro2.text = qt->u.s;
				ro2.embedder = emb;
				ro2.kinds = turn;
				ro2.n_kinds = 1;
				ro2.limit = K;
				rc = cairn_recall(t, &ro2, hits, NULL, K, &n);
			}
			us[m] = now_us() - t0;
			if (rc) {
				fail(mode_names[m], rc);
				break;
			}
			if (m != M_FTS5)
				for (size_t h = 0; h < n; h++)
					snprintf(got[h], 16, "%.*s", (int)hits[h].rec.key_len,
						 hits[h].rec.key);
			judge(&r->all[m], ids, n_ids, got, n);
			judge(&r->cat[m][c], ids, n_ids, got, n);
		}
		if (!rc && record_us(r, us))
			rc = -1;
		r->questions++;
	}
out:
	free(vec);
	buf_release(&fq);
	sqlite3_finalize(q);
	cairn_txn_end(t);
	return rc;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void report(buf *b, run *r, const char *model)
{
	char cpu[256];

	bench_cpu(cpu, sizeof(cpu));
	buf_printf(b,
		   "%u conversations, %u turns, %u questions (categories 1 to 4), each searched "
		   "as written among its conversation's turns, the first %d hits judged. "
		   "Embedder: %s.\n\n",
		   r->conversations, r->turns, r->questions, K, model ? model : "none");
	PUTS(b, "| search | recall@5 | recall@10 | hit@10 | p50 ms | p95 ms | p99 ms |\n"
		"|---|---:|---:|---:|---:|---:|---:|\n");
	for (int m = 0; m < MODES; m++) {
		const score *s = &r->all[m];
		double p[3] = {0, 0, 0};

		if (!s->n)
			continue;
		qsort(r->us[m], r->n_us, sizeof(double), cmp_double);
		p[0] = r->us[m][r->n_us / 2];
		p[1] = r->us[m][(size_t)((double)r->n_us * 0.95)];
		p[2] = r->us[m][(size_t)((double)r->n_us * 0.99)];
		buf_printf(b, "| %s | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f |\n", mode_names[m],
			   s->recall5 / s->n, s->recall10 / s->n, s->hit10 / s->n, p[0] / 1e3,
			   p[1] / 1e3, p[2] / 1e3);
	}
	PUTS(b, "\nrecall@10 per category (questions):\n\n| search |");
	for (int c = 0; c < CATS; c++)
		buf_printf(b, " %s (%u) |", cat_names[c], r->cat[M_FTS5][c].n);
	PUTS(b, "\n|---|");
	for (int c = 0; c < CATS; c++)
		PUTS(b, "---:|");
	buf_put_u8(b, '\n');
	for (int m = 0; m < MODES; m++) {
		if (!r->all[m].n)
			continue;
		buf_printf(b, "| %s |", mode_names[m]);
		for (int c = 0; c < CATS; c++) {
			const score *s = &r->cat[m][c];

			buf_printf(b, " %.3f |", s->n ? s->recall10 / s->n : 0.0);
		}
		buf_put_u8(b, '\n');
	}
	buf_printf(b, "\nMeasured on %s, in-process (one thread); latency per question.\n", cpu);
}

int bench_locomo(const bench_options *o, char **files, int n_files)
{
	cairn_open_options oo = {.flags = CAIRN_OPEN_CREATE | CAIRN_OPEN_NOSYNC};
	cairn_embedder *emb = NULL;
	cairn_store *st = NULL;
	char path[1100];
	run r;
	buf rep = BUF_INIT;
	int rc = -1, crc;

	memset(&r, 0, sizeof(r));
	snprintf(path, sizeof(path), "rm -rf '%s' && mkdir -p '%s'", o->work, o->work);
	if (system(path) != 0)
		return -1;
	if (o->model && (crc = cairn_embedder_open(o->model, &emb)))
		return fail(o->model, crc);
	snprintf(path, sizeof(path), "%s/store", o->work);
	if ((crc = cairn_open(path, &oo, &st))) {
		fail("open", crc);
		goto out;
	}
	for (int f = 0; f < n_files; f++) {
		arena a = ARENA_INIT;
		size_t len = 0;
		char *text = slurp(files[f], &len), dom[32];
		const jv *root = NULL, *conv = NULL;
		sqlite3 *db = NULL;
		int frc = -1;

		if (!text) {
			fprintf(stderr, "bench: locomo: cannot read %s\n", files[f]);
		} else if (!(root = jv_parse(&a, text, len, files[f]))) {
			fprintf(stderr, "bench: locomo: %s\n", cairn_errmsg());
		} else if (!(conv = jv_get(root, "conversation"))) {
			conv = root;
		}
		if (root && sqlite3_open(":memory:", &db) == SQLITE_OK) {
			snprintf(dom, sizeof(dom), "c%d", f + 1);
			if (!load(st, db, dom, conv, emb, &r.turns) &&
			    !ask(st, db, dom, jv_get(root, "qa"), emb, &r))
				frc = 0;
			r.conversations++;
		}
		sqlite3_close(db);
		arena_release(&a);
		free(text);
		if (frc)
			goto out;
		fprintf(stderr, "bench: locomo: %s: %u questions so far\n", files[f], r.questions);
	}
	report(&rep, &r, emb ? cairn_embedder_model(emb) : NULL);
	buf_put_u8(&rep, '\0');
	rc = rep.oom ? -1 : bench_publish(o, "locomo", (const char *)rep.p);
out:
	cairn_close(st);
	cairn_embedder_close(emb);
	for (int m = 0; m < MODES; m++)
		free(r.us[m]);
	buf_release(&rep);
	if (!o->keep)
		bench_remove_work(o);
	return rc;
}
