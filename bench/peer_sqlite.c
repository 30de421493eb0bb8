/*
 * The SQLite peer: the workload in SQLite (libsqlite3), configured for its
 * best honest showing. WAL journal with synchronous=FULL, so a commit is
 * durable when it returns, as Cairn's are; a 1 GiB page cache and a memory
 * map over the whole file; tables WITHOUT ROWID keyed like Cairn's indexes;
 * the same attributes indexed (expression indexes on the JSON values, one
 * per Kind and attribute); prepared statements; JSON lines loaded in
 * transactions of 10,000 with SQLite's own JSON functions. It keeps no
 * history: an update overwrites the row (plus one provenance row per
 * commit), where Cairn writes a new Version.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <sqlite3.h>

#include "bench/engine.h"
#include "bench/gen.h"

#define BATCH 10000

typedef struct sq {
	sqlite3 *db;
	char path[1024];
	sqlite3_stmt *get, *page, *links, *count, *update, *commit_row, *ins_rec, *ins_link;
	sqlite3_stmt *hood[2]; /* headers, with values */
	sqlite3_stmt *resolve, *search;
	/* Attribute queries: one statement per Kind, attribute and shape, prepared on first use. */
	struct {
		char id[96];
		sqlite3_stmt *st;
	} q[32];
	size_t n_q;
} sq;

static int fail(engine *e, const char *what)
{
	sq *s = e->h;

	snprintf(e->err, sizeof(e->err), "sqlite: %s: %s", what, sqlite3_errmsg(s->db));
	return -1;
}

static int exec(engine *e, const char *sql)
{
	sq *s = e->h;

	return sqlite3_exec(s->db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : fail(e, sql);
}

static int prepare(engine *e, const char *sql, sqlite3_stmt **st)
{
	sq *s = e->h;

	return sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, st, NULL) == SQLITE_OK
		       ? 0
		       : fail(e, sql);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int load_file(engine *e, const char *path, sqlite3_stmt *ins)
{
	sq *s = e->h;
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0, n = 0;
	ssize_t len;
	int rc = 0;

	if (!f) {
		snprintf(e->err, sizeof(e->err), "sqlite: cannot read %s", path);
		return -1;
	}
	if (exec(e, "BEGIN")) {
		fclose(f);
		return -1;
	}
	while (!rc && (len = getline(&line, &cap, f)) > 0) {
		sqlite3_bind_text(ins, 1, line, (int)len, SQLITE_STATIC);
		if (sqlite3_step(ins) != SQLITE_DONE)
			rc = fail(e, "insert");
		sqlite3_reset(ins);
		if (!rc && ++n % BATCH == 0) {
			sqlite3_step(s->commit_row);
			sqlite3_reset(s->commit_row);
			rc = exec(e, "COMMIT") || exec(e, "BEGIN");
		}
	}
	if (!rc) {
		sqlite3_step(s->commit_row);
		sqlite3_reset(s->commit_row);
		rc = exec(e, "COMMIT");
	} else {
		exec(e, "ROLLBACK");
	}
	free(line);
	fclose(f);
	return rc;
}

static int sq_load(engine *e, const char *dir, double *records_s, double *links_s)
{
	sq *s = e->h;
	char path[1200];
	double t0;

	snprintf(path, sizeof(path), "%s/records.jsonl", dir);
	t0 = now_s();
	if (load_file(e, path, s->ins_rec))
		return -1;
	*records_s = now_s() - t0;
	snprintf(path, sizeof(path), "%s/links.jsonl", dir);
	t0 = now_s();
	if (load_file(e, path, s->ins_link))
		return -1;
	*links_s = now_s() - t0;
	return exec(e, "ANALYZE");
}

static uint64_t row_bytes(sqlite3_stmt *st, int from, int to)
{
	uint64_t b = 0;

	for (int i = from; i < to; i++)
		b += (uint64_t)sqlite3_column_bytes(st, i);
	return b;
}

static int sq_get(engine *e, const char *kind, const char *key, uint64_t *bytes)
{
	sq *s = e->h;
	int rc;

	sqlite3_bind_text(s->get, 1, kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(s->get, 2, key, -1, SQLITE_STATIC);
	rc = sqlite3_step(s->get);
	if (rc == SQLITE_ROW)
		*bytes += strlen(key) + row_bytes(s->get, 0, 2);
	sqlite3_reset(s->get);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : fail(e, "get");
}

static int sq_page(engine *e, const char *kind, const char *after, unsigned limit, uint64_t *bytes)
{
	sq *s = e->h;
	int rc;

	sqlite3_bind_text(s->page, 1, kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(s->page, 2, after, -1, SQLITE_STATIC);
	sqlite3_bind_int(s->page, 3, (int)limit);
	while ((rc = sqlite3_step(s->page)) == SQLITE_ROW)
		*bytes += row_bytes(s->page, 0, 3);
	sqlite3_reset(s->page);
	return rc == SQLITE_DONE ? 0 : fail(e, "page");
}

static int sq_links(engine *e, const char *kind, const char *key, uint64_t *bytes)
{
	sq *s = e->h;
	int rc;

	sqlite3_bind_text(s->links, 1, kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(s->links, 2, key, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(s->links)) == SQLITE_ROW)
		*bytes += strlen(key) + row_bytes(s->links, 2, 4);
	sqlite3_reset(s->links);
	return rc == SQLITE_DONE ? 0 : fail(e, "links");
}

static int sq_count(engine *e, const char *kind, uint64_t *n)
{
	sq *s = e->h;
	int rc;

	sqlite3_bind_text(s->count, 1, kind, -1, SQLITE_STATIC);
	rc = sqlite3_step(s->count);
	if (rc == SQLITE_ROW)
		*n = (uint64_t)sqlite3_column_int64(s->count, 0);
	sqlite3_reset(s->count);
	return rc == SQLITE_ROW ? 0 : fail(e, "count");
}

static int sq_update(engine *e, const bench_update *u, size_t n)
{
	sq *s = e->h;
	char path[96];

	if (exec(e, "BEGIN"))
		return -1;
	for (size_t i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "$.%s", u[i].attr);
		sqlite3_bind_text(s->update, 1, u[i].kind, -1, SQLITE_STATIC);
		sqlite3_bind_text(s->update, 2, u[i].key, -1, SQLITE_STATIC);
		sqlite3_bind_text(s->update, 3, path, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(s->update, 4, u[i].value);
		if (sqlite3_step(s->update) != SQLITE_DONE) {
			sqlite3_reset(s->update);
			exec(e, "ROLLBACK");
			return fail(e, "update");
		}
		sqlite3_reset(s->update);
	}
	sqlite3_step(s->commit_row);
	sqlite3_reset(s->commit_row);
	return exec(e, "COMMIT");
}

/*
 * The Kind and the JSON path are literals in the statement, so that the
 * planner matches the partial expression index of that Kind and attribute.
 */
static sqlite3_stmt *query_stmt(engine *e, const bench_query *q)
{
	sq *s = e->h;
	char id[96], sql[512];
	size_t i;

	snprintf(id, sizeof(id), "%s.%s.%c", q->kind, q->attr, q->hi ? 'r' : 'e');
	for (i = 0; i < s->n_q; i++)
		if (!strcmp(s->q[i].id, id))
			return s->q[i].st;
	if (s->n_q == sizeof(s->q) / sizeof(s->q[0])) {
		snprintf(e->err, sizeof(e->err), "sqlite: too many query shapes");
		return NULL;
	}
	if (q->hi)
		snprintf(sql, sizeof(sql),
			 "SELECT key, title, vals FROM records WHERE kind = '%s' AND "
			 "json_extract(vals, '$.%s') >= ?1 AND json_extract(vals, '$.%s') < ?2 "
			 "ORDER BY json_extract(vals, '$.%s'), key LIMIT ?3",
			 q->kind, q->attr, q->attr, q->attr);
	else
		snprintf(sql, sizeof(sql),
			 "SELECT key, title, vals FROM records WHERE kind = '%s' AND "
			 "json_extract(vals, '$.%s') = ?1 ORDER BY key LIMIT ?3",
			 q->kind, q->attr);
	if (prepare(e, sql, &s->q[s->n_q].st))
		return NULL;
	snprintf(s->q[s->n_q].id, sizeof(s->q[s->n_q].id), "%s", id);
	return s->q[s->n_q++].st;
}

static void bind_value(sqlite3_stmt *st, int i, const char *v, int numeric)
{
	if (numeric)
		sqlite3_bind_double(st, i, strtod(v, NULL));
	else
		sqlite3_bind_text(st, i, v, -1, SQLITE_STATIC);
}

static int sq_query(engine *e, const bench_query *q, uint64_t *bytes)
{
	sqlite3_stmt *st = query_stmt(e, q);
	int rc;

	if (!st)
		return -1;
	bind_value(st, 1, q->lo, q->numeric);
	if (q->hi)
		bind_value(st, 2, q->hi, q->numeric);
	sqlite3_bind_int(st, 3, (int)q->limit);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		*bytes += row_bytes(st, 0, 3);
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 : fail(e, "query");
}

static int sq_hood(engine *e, const char *kind, const char *key, int values, uint64_t *bytes,
		   uint64_t *nodes)
{
	sq *s = e->h;
	sqlite3_stmt *st = s->hood[values != 0];
	int rc;

	sqlite3_bind_text(st, 1, kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, key, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		*bytes += row_bytes(st, 1, 5);
		*nodes += *(const char *)sqlite3_column_text(st, 0) == 'n';
	}
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 : fail(e, "neighborhood");
}

/* The text as FTS5 asks it: each word quoted, all of them (AND) or any (OR); a phrase as it is. */
static void peer_fts_query(const char *text, int any, char *out, size_t cap)
{
	size_t n = 0;

	out[0] = '\0';
	if (strchr(text, '"')) {
		snprintf(out, cap, "%s", text);
		return;
	}
	for (const char *p = text; *p && n + 8 < cap;) {
		size_t w = strcspn(p, " \t");

		if (w)
			n += (size_t)snprintf(out + n, cap - n, "%s\"%.*s\"",
					      n ? (any ? " OR " : " ") : "", (int)w, p);
		p += w;
		p += strspn(p, " \t");
	}
}

static int sq_search(engine *e, const char *text, int any, char (*hits)[SEARCH_HIT_BYTES],
		     size_t *n, uint64_t *bytes)
{
	sq *s = e->h;
	char q[512];
	int rc;

	peer_fts_query(text, any, q, sizeof(q));
	*n = 0;
	sqlite3_bind_text(s->search, 1, q, -1, SQLITE_TRANSIENT);
	while ((rc = sqlite3_step(s->search)) == SQLITE_ROW) {
		if (*n < SEARCH_TOP)
			snprintf(hits[(*n)++], SEARCH_HIT_BYTES, "%s:%s",
				 (const char *)sqlite3_column_text(s->search, 0),
				 (const char *)sqlite3_column_text(s->search, 1));
		*bytes += row_bytes(s->search, 0, 3);
	}
	sqlite3_reset(s->search);
	return rc == SQLITE_DONE ? 0 : fail(e, "search");
}

static int sq_resolve(engine *e, const char *text, uint64_t *bytes)
{
	sq *s = e->h;
	int rc;

	sqlite3_bind_text(s->resolve, 1, text, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(s->resolve)) == SQLITE_ROW)
		*bytes += row_bytes(s->resolve, 0, 3);
	sqlite3_reset(s->resolve);
	return rc == SQLITE_DONE ? 0 : fail(e, "resolve");
}

static uint64_t sq_size(engine *e)
{
	sq *s = e->h;
	struct stat sb;
	char wal[1100];
	uint64_t total = 0;

	sqlite3_wal_checkpoint_v2(s->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
	if (stat(s->path, &sb) == 0)
		total += (uint64_t)sb.st_size;
	snprintf(wal, sizeof(wal), "%s-wal", s->path);
	if (stat(wal, &sb) == 0)
		total += (uint64_t)sb.st_size;
	return total;
}

static void sq_close(engine *e)
{
	sq *s;

	if (!e)
		return;
	s = e->h;
	if (s) {
		sqlite3_stmt *all[] = {s->get,	  s->page,	 s->links,   s->count,
				       s->update, s->commit_row, s->ins_rec, s->ins_link};

		for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
			sqlite3_finalize(all[i]);
		for (size_t i = 0; i < s->n_q; i++)
			sqlite3_finalize(s->q[i].st);
		sqlite3_finalize(s->hood[0]);
		sqlite3_finalize(s->hood[1]);
		sqlite3_finalize(s->resolve);
		sqlite3_finalize(s->search);
		sqlite3_close(s->db);
		free(s);
	}
	free(e);
}

engine *peer_sqlite_open(const char *dir, char *why, size_t whylen)
{
	engine *e = calloc(1, sizeof(*e));
	sq *s = calloc(1, sizeof(*s));
	const char *attrs[64][3];
	size_t n_attrs = gen_indexed_attrs(attrs, 64);
	char sql[4096];

	if (!e || !s) {
		free(e);
		free(s);
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	e->h = s;
	e->name = "SQLite";
	e->config = "SQLite " SQLITE_VERSION ": WAL, synchronous=FULL, 1 GiB cache, mmap, "
		    "WITHOUT ROWID tables, the same indexes, prepared statements; search: FTS5 over "
		    "the titles (porter stemmer, unicode61 with diacritics removed, bm25 rank), kept "
		    "by a trigger during loads";
	e->load = sq_load;
	e->get = sq_get;
	e->page = sq_page;
	e->links = sq_links;
	e->count = sq_count;
	e->query = sq_query;
	e->hood = sq_hood;
	e->resolve = sq_resolve;
	e->search = sq_search;
	e->update = sq_update;
	e->size = sq_size;
	e->close = sq_close;
	snprintf(s->path, sizeof(s->path), "%s/peer.sqlite", dir);
	remove(s->path);
	if (sqlite3_open_v2(s->path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
	    SQLITE_OK)
		goto out_fail;
	if (exec(e, "PRAGMA journal_mode=WAL") || exec(e, "PRAGMA synchronous=FULL") ||
	    exec(e, "PRAGMA cache_size=-1048576") || exec(e, "PRAGMA mmap_size=17179869184") ||
	    exec(e, "PRAGMA temp_store=MEMORY") ||
	    exec(e, "CREATE TABLE records (kind TEXT NOT NULL, key TEXT NOT NULL, title TEXT, "
		    "vals TEXT, rev INTEGER, PRIMARY KEY (kind, key)) WITHOUT ROWID") ||
	    exec(e, "CREATE TABLE links (from_kind TEXT NOT NULL, from_key TEXT NOT NULL, "
		    "rel TEXT NOT NULL, to_kind TEXT NOT NULL, to_key TEXT NOT NULL, vals TEXT, "
		    "PRIMARY KEY (from_kind, from_key, rel, to_kind, to_key)) WITHOUT ROWID") ||
	    exec(e, "CREATE INDEX links_in ON links (to_kind, to_key, rel, from_kind, from_key)") ||
	    exec(e, "CREATE TABLE commits (id INTEGER PRIMARY KEY, actor TEXT, time INTEGER)") ||
	    /* Full-text search of the titles, kept by a trigger: the index is on during loads. */
	    exec(e, "CREATE VIRTUAL TABLE fts USING fts5(title, kind UNINDEXED, key UNINDEXED, "
		    "tokenize = 'porter unicode61 remove_diacritics 2')") ||
	    exec(e, "CREATE TRIGGER records_fts AFTER INSERT ON records BEGIN INSERT INTO fts "
		    "(title, kind, key) VALUES (new.title, new.kind, new.key); END"))
		goto out_fail;
	for (size_t i = 0; i < n_attrs; i++) {
		snprintf(sql, sizeof(sql),
			 "CREATE INDEX attr_%s_%s ON records (json_extract(vals, '$.%s'), key) "
			 "WHERE kind = '%s'",
			 attrs[i][0], attrs[i][1], attrs[i][1], attrs[i][0]);
		if (exec(e, sql))
			goto out_fail;
	}
	if (prepare(e, "SELECT title, vals, rev FROM records WHERE kind = ?1 AND key = ?2",
		    &s->get) ||
	    prepare(e, "SELECT key, title, vals FROM records WHERE kind = ?1 AND key > ?2 "
		       "ORDER BY key LIMIT ?3",
		    &s->page) ||
	    prepare(e, "SELECT rel, 'out', to_kind, to_key, vals FROM links WHERE from_kind = ?1 "
		       "AND from_key = ?2 UNION ALL SELECT rel, 'in', from_kind, from_key, vals "
		       "FROM links WHERE to_kind = ?1 AND to_key = ?2",
		    &s->links) ||
	    prepare(e, "SELECT count(*) FROM records WHERE kind = ?1", &s->count) ||
	    prepare(e, "UPDATE records SET vals = json_set(vals, ?3, ?4), rev = rev + 1 "
		       "WHERE kind = ?1 AND key = ?2",
		    &s->update) ||
	    prepare(e, "INSERT INTO commits (actor, time) VALUES ('bench', unixepoch())",
		    &s->commit_row) ||
	    prepare(e, "INSERT INTO records (kind, key, title, vals, rev) VALUES "
		       "(json_extract(?1, '$.kind'), json_extract(?1, '$.key'), "
		       "json_extract(?1, '$.title'), json_extract(?1, '$.values'), 1)",
		    &s->ins_rec) ||
	    prepare(e, "INSERT INTO links SELECT substr(f, 1, instr(f, ':') - 1), "
		       "substr(f, instr(f, ':') + 1), r, substr(t, 1, instr(t, ':') - 1), "
		       "substr(t, instr(t, ':') + 1), v FROM (SELECT json_extract(?1, '$.rel') r, "
		       "json_extract(?1, '$.from') f, json_extract(?1, '$.to') t, "
		       "json_extract(?1, '$.values') v)",
		    &s->ins_link))
		goto out_fail;
	for (int v = 0; v < 2; v++) {
		gen_hood_sql(sql, sizeof(sql), "?1", "?2", "vals", v);
		if (prepare(e, sql, &s->hood[v]))
			goto out_fail;
	}
	if (exec(e, "CREATE INDEX records_key ON records (key)") ||
	    exec(e, "CREATE INDEX records_title ON records (lower(title))") ||
	    prepare(e, "SELECT kind, key, title FROM records WHERE key = ?1 UNION "
		       "SELECT kind, key, title FROM records WHERE lower(title) = lower(?1)",
		    &s->resolve) ||
	    prepare(e, "SELECT kind, key, title FROM fts WHERE fts MATCH ?1 ORDER BY rank LIMIT 20",
		    &s->search))
		goto out_fail;
	return e;
out_fail:
	snprintf(why, whylen, "%s", e->err[0] ? e->err : "cannot open SQLite");
	sq_close(e);
	return NULL;
}
