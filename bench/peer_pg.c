/*
 * The PostgreSQL peer: Debian's PostgreSQL server, started by the harness
 * on a private directory and a loopback port (as the postgres user when the
 * harness runs as root) and stopped at the end. Durable commits (fsync and
 * synchronous_commit on), 2 GiB of shared buffers, C collation so keys sort
 * by bytes as in Cairn, the same indexes (B-tree expression indexes on the
 * JSONB values, forward and reverse Link indexes), prepared statements over
 * libpq, loads through COPY in transactions of 10,000 lines, and a commit of
 * many updates as one statement over arrays. Like the SQLite peer it keeps
 * no history: an update overwrites the row, plus one provenance row per
 * commit.
 */
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "bench/engine.h"
#include "bench/gen.h"

#define BATCH 10000

typedef struct pg {
	PGconn *conn;
	char dir[1024];	/* the cluster's directory */
	char bin[512];	/* PostgreSQL's bin directory */
	char as[64];	/* "runuser -u postgres -- " when root */
	int port;
	int started;
	char q[32][96];	/* attribute query statements prepared so far, by name */
	size_t n_q;
} pg;

/* The indexed expression of an attribute: numbers as float8, so ranges compare numerically. */
static void attr_expr(char *out, size_t n, const char *attr, int numeric)
{
	if (numeric)
		snprintf(out, n, "((vals->>'%s')::float8)", attr);
	else
		snprintf(out, n, "(vals->>'%s')", attr);
}

static int fail(engine *e, const char *what, PGresult *r)
{
	pg *p = e->h;

	snprintf(e->err, sizeof(e->err), "postgresql: %s: %s", what,
		 r ? PQresultErrorMessage(r) : PQerrorMessage(p->conn));
	PQclear(r);
	return -1;
}

static int cmd_ok(engine *e, const char *sql)
{
	pg *p = e->h;
	PGresult *r = PQexec(p->conn, sql);

	if (PQresultStatus(r) != PGRES_COMMAND_OK && PQresultStatus(r) != PGRES_TUPLES_OK)
		return fail(e, sql, r);
	PQclear(r);
	return 0;
}

static int prepare(engine *e, const char *name, const char *sql)
{
	pg *p = e->h;
	PGresult *r = PQprepare(p->conn, name, sql, 0, NULL);

	if (PQresultStatus(r) != PGRES_COMMAND_OK)
		return fail(e, sql, r);
	PQclear(r);
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int run(const char *cmd)
{
	int rc = system(cmd);

	return rc == 0 ? 0 : -1;
}

/* COPY a batch of lines into the staging table, then move them in one statement, durably. */
static int load_batch(engine *e, char **lines, size_t n, const char *move)
{
	pg *p = e->h;
	PGresult *r;

	if (cmd_ok(e, "BEGIN") || cmd_ok(e, "TRUNCATE staging"))
		return -1;
	r = PQexec(p->conn, "COPY staging (line) FROM STDIN");
	if (PQresultStatus(r) != PGRES_COPY_IN)
		return fail(e, "COPY", r);
	PQclear(r);
	for (size_t i = 0; i < n; i++) {
		/* COPY's text format: a backslash is an escape, so double each. */
		char buf[65536], *o = buf;

		for (const char *c = lines[i]; *c && *c != '\n' && o < buf + sizeof(buf) - 3; c++) {
			if (*c == '\\')
				*o++ = '\\';
			*o++ = *c;
		}
		*o++ = '\n';
		if (PQputCopyData(p->conn, buf, (int)(o - buf)) != 1)
			return fail(e, "COPY data", NULL);
	}
	if (PQputCopyEnd(p->conn, NULL) != 1)
		return fail(e, "COPY end", NULL);
	r = PQgetResult(p->conn);
	if (PQresultStatus(r) != PGRES_COMMAND_OK)
		return fail(e, "COPY", r);
	PQclear(r);
	return cmd_ok(e, move) ||
	       cmd_ok(e, "INSERT INTO commits (actor, time) VALUES ('bench', now())") ||
	       cmd_ok(e, "COMMIT");
}

static int load_file(engine *e, const char *path, const char *move)
{
	FILE *f = fopen(path, "r");
	char **lines = calloc(BATCH, sizeof(char *));
	size_t caps[BATCH] = {0}, n = 0;
	int rc = 0;

	if (!f || !lines) {
		snprintf(e->err, sizeof(e->err), "postgresql: cannot read %s", path);
		if (f)
			fclose(f);
		free(lines);
		return -1;
	}
	while (!rc && getline(&lines[n], &caps[n], f) > 0)
		if (++n == BATCH) {
			rc = load_batch(e, lines, n, move);
			n = 0;
		}
	if (!rc && n)
		rc = load_batch(e, lines, n, move);
	for (size_t i = 0; i < BATCH; i++)
		free(lines[i]);
	free(lines);
	fclose(f);
	return rc;
}

static int pg_load(engine *e, const char *dir, double *records_s, double *links_s)
{
	char path[1200];
	double t0;

	snprintf(path, sizeof(path), "%s/records.jsonl", dir);
	t0 = now_s();
	if (load_file(e, path,
		      "INSERT INTO records (kind, key, title, vals, rev) SELECT line->>'kind', "
		      "line->>'key', line->>'title', coalesce(line->'values', '{}'), 1 FROM staging"))
		return -1;
	*records_s = now_s() - t0;
	snprintf(path, sizeof(path), "%s/links.jsonl", dir);
	t0 = now_s();
	if (load_file(e, path,
		      "INSERT INTO links SELECT split_part(line->>'from', ':', 1), "
		      "substr(line->>'from', strpos(line->>'from', ':') + 1), line->>'rel', "
		      "split_part(line->>'to', ':', 1), substr(line->>'to', strpos(line->>'to', ':') + 1), "
		      "line->'values' FROM staging"))
		return -1;
	*links_s = now_s() - t0;
	return cmd_ok(e, "VACUUM ANALYZE");
}

static uint64_t result_bytes(PGresult *r, int from, int to)
{
	uint64_t b = 0;

	for (int i = 0; i < PQntuples(r); i++)
		for (int j = from; j < to; j++)
			b += (uint64_t)PQgetlength(r, i, j);
	return b;
}

static int query(engine *e, const char *name, int n, const char *const *args, PGresult **out)
{
	pg *p = e->h;

	*out = PQexecPrepared(p->conn, name, n, args, NULL, NULL, 0);
	if (PQresultStatus(*out) != PGRES_TUPLES_OK)
		return fail(e, name, *out);
	return 0;
}

static int pg_get(engine *e, const char *kind, const char *key, uint64_t *bytes)
{
	const char *args[] = {kind, key};
	PGresult *r;

	if (query(e, "get", 2, args, &r))
		return -1;
	*bytes += strlen(key) + result_bytes(r, 0, 2);
	PQclear(r);
	return 0;
}

static int pg_page(engine *e, const char *kind, const char *after, unsigned limit, uint64_t *bytes)
{
	char lim[16];
	const char *args[] = {kind, after, lim};
	PGresult *r;

	snprintf(lim, sizeof(lim), "%u", limit);
	if (query(e, "page", 3, args, &r))
		return -1;
	*bytes += result_bytes(r, 0, 3);
	PQclear(r);
	return 0;
}

static int pg_links(engine *e, const char *kind, const char *key, uint64_t *bytes)
{
	const char *args[] = {kind, key};
	PGresult *r;

	if (query(e, "links", 2, args, &r))
		return -1;
	*bytes += PQntuples(r) * strlen(key) + result_bytes(r, 2, 4);
	PQclear(r);
	return 0;
}

static int pg_count(engine *e, const char *kind, uint64_t *n)
{
	const char *args[] = {kind};
	PGresult *r;

	if (query(e, "count", 1, args, &r))
		return -1;
	*n = strtoull(PQgetvalue(r, 0, 0), NULL, 10);
	PQclear(r);
	return 0;
}

/* An array literal of the given strings ({"a","b"}), quoted. */
static char *array_lit(const bench_update *u, size_t n, int field)
{
	size_t cap = 16, len = 0;
	char *s = malloc(cap);

	if (!s)
		return NULL;
	s[len++] = '{';
	for (size_t i = 0; i < n; i++) {
		char num[32];
		const char *v = field == 0 ? u[i].kind : field == 1 ? u[i].key : field == 2 ? u[i].attr
											 : num;

		snprintf(num, sizeof(num), "%ld", u[i].value);
		while (len + 2 * strlen(v) + 8 > cap) {
			char *t = realloc(s, cap *= 2);

			if (!t) {
				free(s);
				return NULL;
			}
			s = t;
		}
		if (i)
			s[len++] = ',';
		s[len++] = '"';
		for (; *v; v++) {
			if (*v == '"' || *v == '\\')
				s[len++] = '\\';
			s[len++] = *v;
		}
		s[len++] = '"';
	}
	s[len++] = '}';
	s[len] = '\0';
	return s;
}

static int pg_update(engine *e, const bench_update *u, size_t n)
{
	pg *p = e->h;
	char *arr[4];
	PGresult *r;
	int rc = 0;

	for (int f = 0; f < 4; f++)
		arr[f] = array_lit(u, n, f);
	if (!arr[0] || !arr[1] || !arr[2] || !arr[3]) {
		snprintf(e->err, sizeof(e->err), "postgresql: out of memory");
		rc = -1;
		goto out;
	}
	if (cmd_ok(e, "BEGIN")) {
		rc = -1;
		goto out;
	}
	r = PQexecPrepared(p->conn, "update", 4, (const char *const *)arr, NULL, NULL, 0);
	if (PQresultStatus(r) != PGRES_COMMAND_OK) {
		rc = fail(e, "update", r);
		cmd_ok(e, "ROLLBACK");
		goto out;
	}
	PQclear(r);
	rc = cmd_ok(e, "INSERT INTO commits (actor, time) VALUES ('bench', now())") ||
	     cmd_ok(e, "COMMIT");
out:
	for (int f = 0; f < 4; f++)
		free(arr[f]);
	return rc ? -1 : 0;
}

/* The Kind is a literal in the statement, so that the planner matches the partial index. */
static int pg_query(engine *e, const bench_query *q, uint64_t *bytes)
{
	pg *p = e->h;
	char name[96], sql[512], x[96], lim[16];
	const char *args[3];
	PGresult *r;
	size_t i;
	int n = 0;

	snprintf(name, sizeof(name), "q_%s_%s_%c", q->kind, q->attr, q->hi ? 'r' : 'e');
	for (i = 0; i < p->n_q && strcmp(p->q[i], name); i++)
		;
	if (i == p->n_q) {
		if (p->n_q == sizeof(p->q) / sizeof(p->q[0])) {
			snprintf(e->err, sizeof(e->err), "postgresql: too many query shapes");
			return -1;
		}
		attr_expr(x, sizeof(x), q->attr, q->numeric);
		if (q->hi)
			snprintf(sql, sizeof(sql),
				 "SELECT key, title, vals::text FROM records WHERE kind = '%s' AND "
				 "%s >= $1 AND %s < $2 ORDER BY %s, key LIMIT $3",
				 q->kind, x, x, x);
		else
			snprintf(sql, sizeof(sql),
				 "SELECT key, title, vals::text FROM records WHERE kind = '%s' AND "
				 "%s = $1 ORDER BY key LIMIT $2",
				 q->kind, x);
		if (prepare(e, name, sql))
			return -1;
		snprintf(p->q[p->n_q++], sizeof(p->q[0]), "%s", name);
	}
	snprintf(lim, sizeof(lim), "%u", q->limit);
	args[n++] = q->lo;
	if (q->hi)
		args[n++] = q->hi;
	args[n++] = lim;
	if (query(e, name, n, args, &r))
		return -1;
	*bytes += result_bytes(r, 0, 3);
	PQclear(r);
	return 0;
}

static int pg_hood(engine *e, const char *kind, const char *key, int values, uint64_t *bytes,
		   uint64_t *nodes)
{
	const char *args[] = {kind, key};
	PGresult *r;

	if (query(e, values ? "hood_v" : "hood", 2, args, &r))
		return -1;
	*bytes += result_bytes(r, 1, 5);
	for (int i = 0; i < PQntuples(r); i++)
		*nodes += *PQgetvalue(r, i, 0) == 'n';
	PQclear(r);
	return 0;
}

/* websearch_to_tsquery's text: as it is (every word, "a phrase"), or with any, words or'ed. */
static int pg_search(engine *e, const char *text, int any, char (*hits)[SEARCH_HIT_BYTES],
		     size_t *n, uint64_t *bytes)
{
	char q[512];
	const char *args[] = {q};
	PGresult *r;
	size_t len = 0;

	q[0] = '\0';
	if (!any)
		snprintf(q, sizeof(q), "%s", text);
	for (const char *p = text; any && *p && len + 8 < sizeof(q);) {
		size_t w = strcspn(p, " \t");

		if (w)
			len += (size_t)snprintf(q + len, sizeof(q) - len, "%s%.*s", len ? " or " : "",
						(int)w, p);
		p += w;
		p += strspn(p, " \t");
	}
	if (query(e, "search", 1, args, &r))
		return -1;
	*n = 0;
	for (int i = 0; i < PQntuples(r) && *n < SEARCH_TOP; i++)
		snprintf(hits[(*n)++], SEARCH_HIT_BYTES, "%s:%s", PQgetvalue(r, i, 0),
			 PQgetvalue(r, i, 1));
	*bytes += result_bytes(r, 0, 3);
	PQclear(r);
	return 0;
}

static int pg_resolve(engine *e, const char *text, uint64_t *bytes)
{
	const char *args[] = {text};
	PGresult *r;

	if (query(e, "resolve", 1, args, &r))
		return -1;
	*bytes += result_bytes(r, 0, 3);
	PQclear(r);
	return 0;
}

static uint64_t pg_size(engine *e)
{
	pg *p = e->h;
	PGresult *r = PQexec(p->conn, "SELECT pg_database_size(current_database())");
	uint64_t n = 0;

	if (PQresultStatus(r) == PGRES_TUPLES_OK)
		n = strtoull(PQgetvalue(r, 0, 0), NULL, 10);
	PQclear(r);
	return n;
}

static void pg_close(engine *e)
{
	pg *p;
	char cmd[4096];

	if (!e)
		return;
	p = e->h;
	if (p) {
		PQfinish(p->conn);
		if (p->started) {
			snprintf(cmd, sizeof(cmd), "%s'%s/pg_ctl' -D '%s' -m fast -w stop >/dev/null 2>&1",
				 p->as, p->bin, p->dir);
			if (run(cmd))
				fprintf(stderr, "bench: could not stop PostgreSQL in %s\n", p->dir);
		}
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", p->dir);
		if (run(cmd))
			fprintf(stderr, "bench: could not remove %s\n", p->dir);
		free(p);
	}
	free(e);
}

/* PostgreSQL's bin directory: pg_config --bindir, else the newest /usr/lib/postgresql/N/bin. */
static int find_bin(char *out, size_t n)
{
	FILE *f = popen("pg_config --bindir 2>/dev/null", "r");
	glob_t g;

	if (f) {
		if (fgets(out, (int)n, f)) {
			char path[600];

			out[strcspn(out, "\n")] = '\0';
			snprintf(path, sizeof(path), "%s/initdb", out);
			pclose(f);
			if (access(path, X_OK) == 0)
				return 0;
		} else {
			pclose(f);
		}
	}
	if (glob("/usr/lib/postgresql/*/bin/initdb", 0, NULL, &g) == 0 && g.gl_pathc) {
		snprintf(out, n, "%s", g.gl_pathv[g.gl_pathc - 1]);
		out[strlen(out) - strlen("/initdb")] = '\0';
		globfree(&g);
		return 0;
	}
	return -1;
}

engine *peer_pg_open(const char *dir, char *why, size_t whylen)
{
	engine *e = calloc(1, sizeof(*e));
	pg *p = calloc(1, sizeof(*p));
	const char *attrs[64][3];
	size_t n_attrs = gen_indexed_attrs(attrs, 64);
	char cmd[8192], conninfo[256], sql[4096];

	if (!e || !p) {
		free(e);
		free(p);
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	e->h = p;
	e->name = "PostgreSQL";
	e->config = "PostgreSQL 15 over libpq on loopback: fsync and synchronous_commit on, "
		    "shared_buffers 2 GB, C collation, the same indexes, prepared statements, "
		    "COPY loads; search: a generated tsvector of the titles (english) with a GIN "
		    "index, websearch_to_tsquery, ranked by ts_rank";
	e->load = pg_load;
	e->get = pg_get;
	e->page = pg_page;
	e->links = pg_links;
	e->count = pg_count;
	e->query = pg_query;
	e->hood = pg_hood;
	e->resolve = pg_resolve;
	e->search = pg_search;
	e->update = pg_update;
	e->size = pg_size;
	e->close = pg_close;
	if (find_bin(p->bin, sizeof(p->bin))) {
		snprintf(why, whylen, "PostgreSQL's server is not installed (apt-get install postgresql)");
		goto out_fail;
	}
	snprintf(p->dir, sizeof(p->dir), "%s/pg", dir);
	p->port = 20000 + (int)(getpid() % 20000);
	if (geteuid() == 0)
		snprintf(p->as, sizeof(p->as), "runuser -u postgres -- ");
	/* The chown needs the directory and its parent reachable by postgres. */
	if (geteuid() == 0)
		snprintf(cmd, sizeof(cmd),
			 "rm -rf '%s' && mkdir -p '%s' && chown postgres: '%s' && chmod o+x '%s' && "
			 "%s'%s/initdb' -D '%s' -A trust -U bench --locale=C --encoding=UTF8 "
			 "--no-sync >/dev/null 2>&1",
			 p->dir, p->dir, p->dir, dir, p->as, p->bin, p->dir);
	else
		snprintf(cmd, sizeof(cmd),
			 "rm -rf '%s' && mkdir -p '%s' && '%s/initdb' -D '%s' -A trust -U bench "
			 "--locale=C --encoding=UTF8 --no-sync >/dev/null 2>&1",
			 p->dir, p->dir, p->bin, p->dir);
	if (run(cmd)) {
		snprintf(why, whylen, "initdb failed in %s", p->dir);
		goto out_fail;
	}
	snprintf(cmd, sizeof(cmd),
		 "%s'%s/pg_ctl' -D '%s' -w -t 60 -l '%s/server.log' -o \"-p %d "
		 "-c listen_addresses=127.0.0.1 -k '%s' -c shared_buffers=2GB -c fsync=on "
		 "-c synchronous_commit=on -c full_page_writes=on -c wal_level=minimal "
		 "-c max_wal_senders=0 -c max_wal_size=8GB -c checkpoint_timeout=30min "
		 "-c work_mem=64MB -c maintenance_work_mem=512MB\" start >/dev/null 2>&1",
		 p->as, p->bin, p->dir, p->dir, p->port, p->dir);
	if (run(cmd)) {
		snprintf(why, whylen, "the PostgreSQL server did not start (see %s/server.log)",
			 p->dir);
		goto out_fail;
	}
	p->started = 1;
	snprintf(conninfo, sizeof(conninfo), "host=127.0.0.1 port=%d user=bench dbname=postgres",
		 p->port);
	p->conn = PQconnectdb(conninfo);
	if (PQstatus(p->conn) != CONNECTION_OK) {
		snprintf(why, whylen, "cannot connect to PostgreSQL: %s", PQerrorMessage(p->conn));
		goto out_fail;
	}
	if (cmd_ok(e, "CREATE TABLE records (kind text NOT NULL, key text NOT NULL, title text, "
		      "vals jsonb, rev int, tsv tsvector GENERATED ALWAYS AS "
		      "(to_tsvector('english', coalesce(title, ''))) STORED, PRIMARY KEY (kind, key))") ||
	    cmd_ok(e, "CREATE INDEX records_tsv ON records USING gin (tsv)") ||
	    cmd_ok(e, "CREATE TABLE links (from_kind text NOT NULL, from_key text NOT NULL, "
		      "rel text NOT NULL, to_kind text NOT NULL, to_key text NOT NULL, vals jsonb, "
		      "PRIMARY KEY (from_kind, from_key, rel, to_kind, to_key))") ||
	    cmd_ok(e, "CREATE INDEX links_in ON links (to_kind, to_key, rel, from_kind, from_key)") ||
	    cmd_ok(e, "CREATE TABLE commits (id bigserial PRIMARY KEY, actor text, time timestamptz)") ||
	    cmd_ok(e, "CREATE UNLOGGED TABLE staging (line jsonb)"))
		goto out_err;
	for (size_t i = 0; i < n_attrs; i++) {
		char x[96];

		attr_expr(x, sizeof(x), attrs[i][1],
			  !strcmp(attrs[i][2], "int") || !strcmp(attrs[i][2], "float"));
		snprintf(sql, sizeof(sql), "CREATE INDEX attr_%s_%s ON records (%s, key) WHERE kind = '%s'",
			 attrs[i][0], attrs[i][1], x, attrs[i][0]);
		if (cmd_ok(e, sql))
			goto out_err;
	}
	if (prepare(e, "get", "SELECT title, vals::text, rev FROM records WHERE kind = $1 AND key = $2") ||
	    prepare(e, "page", "SELECT key, title, vals::text FROM records WHERE kind = $1 AND "
			       "key > $2 ORDER BY key LIMIT $3") ||
	    prepare(e, "links", "SELECT rel, 'out', to_kind, to_key, vals::text FROM links "
				"WHERE from_kind = $1 AND from_key = $2 UNION ALL SELECT rel, 'in', "
				"from_kind, from_key, vals::text FROM links WHERE to_kind = $1 AND "
				"to_key = $2") ||
	    prepare(e, "count", "SELECT count(*) FROM records WHERE kind = $1") ||
	    prepare(e, "update", "UPDATE records r SET vals = jsonb_set(r.vals, ARRAY[u.attr], "
				 "to_jsonb(u.val)), rev = r.rev + 1 FROM unnest($1::text[], "
				 "$2::text[], $3::text[], $4::bigint[]) AS u(kind, key, attr, val) "
				 "WHERE r.kind = u.kind AND r.key = u.key"))
		goto out_err;
	for (int v = 0; v < 2; v++) {
		gen_hood_sql(sql, sizeof(sql), "$1", "$2", "vals::text", v);
		if (prepare(e, v ? "hood_v" : "hood", sql))
			goto out_err;
	}
	if (cmd_ok(e, "CREATE INDEX records_key ON records (key)") ||
	    cmd_ok(e, "CREATE INDEX records_title ON records (lower(title))") ||
	    prepare(e, "resolve", "SELECT kind, key, title FROM records WHERE key = $1 UNION "
				  "SELECT kind, key, title FROM records WHERE lower(title) = lower($1)") ||
	    prepare(e, "search", "SELECT kind, key, title FROM records, "
				 "websearch_to_tsquery('english', $1) q WHERE tsv @@ q "
				 "ORDER BY ts_rank(tsv, q) DESC LIMIT 20"))
		goto out_err;
	return e;
out_err:
	snprintf(why, whylen, "%s", e->err);
out_fail:
	pg_close(e);
	return NULL;
}
