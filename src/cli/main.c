/* The cairn command: main, shared helpers, and the store, read and write commands (docs/cli.md). */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "base/text.h"
#include "wire/wire.h"

/* The command whose usage a usage error points to; NULL before one is known. */
static const char *usage_cmd;

int cli_usage(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "cairn: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (usage_cmd)
		fprintf(stderr, "\n(cairn %s --help for its usage)\n", usage_cmd);
	else
		fputs("\n(cairn help lists the commands; cairn help COMMAND shows one)\n", stderr);
	return EXIT_USAGE;
}

int cli_exit_code(int rc)
{
	return rc == CAIRN_OK ? EXIT_OK : wire_error_of(rc)->exit;
}

/* What a wire writer built, on f (null when it ran out of memory). */
static void out_buf(FILE *f, buf *b)
{
	if (b->oom)
		fputs("null", f);
	else
		fwrite(b->p, 1, b->len, f);
	buf_release(b);
}

void out_json_indented(FILE *f, const char *s, size_t n)
{
	int depth = 0, in_str = 0;

	for (size_t i = 0; i < n; i++) {
		char ch = s[i];

		if (in_str) {
			fputc(ch, f);
			if (ch == '\\' && i + 1 < n)
				fputc(s[++i], f);
			else if (ch == '"')
				in_str = 0;
			continue;
		}
		switch (ch) {
		case '"':
			in_str = 1;
			fputc(ch, f);
			break;
		case '{':
		case '[':
			if (i + 1 < n && (s[i + 1] == '}' || s[i + 1] == ']')) { /* empty */
				fputc(ch, f);
				fputc(s[++i], f);
				break;
			}
			fprintf(f, "%c\n%*s", ch, 2 * ++depth, "");
			break;
		case '}':
		case ']':
			fprintf(f, "\n%*s%c", 2 * (depth > 0 ? --depth : 0), "", ch);
			break;
		case ',':
			fprintf(f, ",\n%*s", 2 * depth, "");
			break;
		case ':':
			fputs(": ", f);
			break;
		default:
			fputc(ch, f);
		}
	}
	fputc('\n', f);
}

/* A value of a diff for people: its JSON, or (none) for null and absence. */
static void diff_value(FILE *f, const jv *v)
{
	buf b = BUF_INIT;

	if (!v || v->type == JV_NULL) {
		fputs("(none)", f);
		return;
	}
	jv_canon(v, &b);
	fwrite(b.p, 1, b.oom ? 0 : b.len, f);
	buf_release(&b);
}

void out_diff_text(FILE *f, const char *indent, const char *diff, size_t len)
{
	static const char *const sides[] = {"base", "ours", "theirs"};
	arena a = ARENA_INIT;
	const jv *d = jv_parse(&a, diff, len, "diff");

	if (!d || d->type != JV_OBJECT) { /* not what a diff is: as it is */
		fprintf(f, "%s%.*s\n", indent, (int)len, diff);
		arena_release(&a);
		return;
	}
	for (uint32_t i = 0; i < d->len; i++) {
		const jv *m = &d->u.items[i];

		fprintf(f, "%s%.*s: ", indent, (int)m->key_len, m->key);
		if (m->type == JV_OBJECT && (jv_get(m, "before") || jv_get(m, "after"))) {
			diff_value(f, jv_get(m, "before"));
			fputs(" -> ", f);
			diff_value(f, jv_get(m, "after"));
		} else if (m->type == JV_OBJECT && jv_get(m, "ours")) {
			const jv *cf = jv_get(m, "conflict"), *rv = jv_get(m, "resolved");

			for (int s = 0; s < 3; s++) {
				fprintf(f, "%s%s ", s ? ", " : "", sides[s]);
				diff_value(f, jv_get(m, sides[s]));
			}
			if (cf && cf->type == JV_TRUE)
				fputs("  CONFLICT", f);
			if (rv) {
				fputs(", resolved ", f);
				diff_value(f, rv);
			}
		} else {
			diff_value(f, m);
		}
		fputc('\n', f);
	}
	arena_release(&a);
}

void out_str(FILE *f, const char *s, size_t n)
{
	buf b = BUF_INIT;

	wire_str(&b, s, n);
	out_buf(f, &b);
}

void out_header(FILE *f, const cairn_record *r)
{
	buf b = BUF_INIT;

	wire_record_open(&b, r);
	out_buf(f, &b);
}

void out_endpoint(FILE *f, const char *kind, const char *key, size_t key_len)
{
	buf b = BUF_INIT;

	wire_endpoint(&b, kind, key, key_len);
	out_buf(f, &b);
}

int out_link(FILE *f, cairn_txn *t, const cairn_link *l, int values, cairn_revision *last)
{
	buf b = BUF_INIT;
	int rc = wire_link(&b, t, l, values, last);

	buf_put_u8(&b, '\n');
	out_buf(f, &b);
	return rc;
}

void out_hash(FILE *f, const uint8_t h[32])
{
	for (int i = 0; i < 32; i++)
		fprintf(f, "%02x", h[i]);
}

void out_time(FILE *f, int64_t ms)
{
	char t[48];

	time_format_ms(ms, t);
	fputs(t, f);
}

int cli_fail(cli *c, int rc, const char *what)
{
	return cli_fail_msg(c, rc, what, cairn_errmsg());
}

int cli_fail_msg(cli *c, int rc, const char *what, const char *msg)
{
	if (!*msg)
		msg = cairn_strerror(rc);
	if (c->json && !c->tty_err) {
		fprintf(stderr, "{\"error\":{\"code\":\"%s\",\"message\":", cairn_errname(rc));
		out_str(stderr, msg, strlen(msg));
		if (cairn_errchange() >= 0)
			fprintf(stderr, ",\"change\":%ld", cairn_errchange());
		fprintf(stderr, "}}\n");
	} else {
		fprintf(stderr, "cairn: %s%s%s (%s)\n", what ? what : "", what ? ": " : "", msg,
			cairn_errname(rc));
	}
	return cli_exit_code(rc);
}

/*
 * Open the store. A command runs no background thread: it would take the
 * writer lock for clearing deleted branches and make the command wait for
 * it on close, even a read. `cairn maintain` does that work on demand (and
 * the server, which stays up, in the background).
 */
int cli_open(cli *c, int create, cairn_store **st)
{
	cairn_open_options o = {0};
	int rc;

	if (!c->store || !*c->store)
		return cli_usage("--store is empty: give the store's directory (or set CAIRN_STORE)");
	o.flags = (create ? CAIRN_OPEN_CREATE : 0) | (c->nosync ? CAIRN_OPEN_NOSYNC : 0) |
		  CAIRN_OPEN_NO_BACKGROUND;
	rc = cairn_open(c->store, &o, st);
	if (rc)
		return cli_fail(c, rc, NULL); /* the message names the store */
	return 0;
}

/* Parse an RFC 3339 time with the C library (UTC offsets included). */
static int parse_time(const char *s, int64_t *ms)
{
	struct tm tm;
	const char *p;
	int64_t frac = 0, off = 0;
	int scale = 100;

	memset(&tm, 0, sizeof(tm));
	p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!p)
		return -1;
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++, scale /= 10)
			frac += (*p - '0') * scale;
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		int hh, mm;

		if (sscanf(p + 1, "%2d:%2d", &hh, &mm) != 2)
			return -1;
		off = (hh * 60 + mm) * (*p == '+' ? 1 : -1);
		p += 6;
	} else {
		return -1;
	}
	if (*p)
		return -1;
	*ms = ((int64_t)timegm(&tm) - off * 60) * 1000 + frac;
	return 0;
}

int cli_read_options(cli *c, cairn_read_options *ro)
{
	memset(ro, 0, sizeof(*ro));
	ro->domain = c->domain;
	ro->branch = c->branch;
	if (c->at) {
		char *end;
		unsigned long long rev;

		errno = 0;
		rev = strtoull(c->at, &end, 10);
		if (*c->at && !*end && !errno && rev > 0)
			ro->at_revision = rev;
		else if (parse_time(c->at, &ro->at_time_ms))
			return cli_usage("--at takes a revision number or an RFC 3339 time, not %s",
					 c->at);
	}
	return 0;
}

static cairn_embedder *embedder_to_close;

static void close_embedder(void)
{
	cairn_embedder_close(embedder_to_close);
}

/* The names of the store's Domains, in name order (strdup'd). */
typedef struct domain_names {
	char **names;
	size_t n, cap;
} domain_names;

static int add_domain(void *ctx, const cairn_domain_info *d)
{
	domain_names *dn = ctx;
	char **grown;

	if (dn->n == dn->cap) {
		dn->cap = dn->cap ? 2 * dn->cap : 16;
		if (!(grown = realloc(dn->names, dn->cap * sizeof(*grown))))
			return CAIRN_ENOMEM;
		dn->names = grown;
	}
	if (!(dn->names[dn->n] = strdup(d->name)))
		return CAIRN_ENOMEM;
	dn->n++;
	return 0;
}

void cli_commit_options(cli *c, cairn_commit_options *co)
{
	memset(co, 0, sizeof(*co));
	co->domain = c->domain;
	co->branch = c->branch;
	co->prov = c->prov;
	if (!co->prov.actor)
		co->prov.actor = getenv("USER") ? getenv("USER") : "cli";
	co->prov.client_time_ms = (int64_t)time(NULL) * 1000;
	co->create_domain = 1; /* the first write creates the Domain, in that write's commit */
	co->embedder = c->emb;
	co->vector_model = c->vector_model;
	if (c->expect >= 0) {
		co->has_expect = 1;
		co->expect_revision = (uint64_t)c->expect;
	}
}

static void domain_names_free(domain_names *dn)
{
	for (size_t i = 0; i < dn->n; i++)
		free(dn->names[i]);
	free(dn->names);
}

int cli_write_options(cli *c, cairn_store *st, cairn_commit_options *co)
{
	domain_names dn = {0};
	const char *near = NULL;
	char msg[512];
	int rc, found = 0;

	cli_commit_options(c, co);
	if ((rc = cairn_domain_list(st, add_domain, &dn))) {
		domain_names_free(&dn);
		return cli_fail(c, rc, c->cmd->name);
	}
	for (size_t i = 0; i < dn.n && !found; i++)
		found = strcmp(dn.names[i], c->domain) == 0;
	if (!found)
		near = text_closest(c->domain, strlen(c->domain), (const char *const *)dn.names,
				    dn.n);
	/* Short names are often one edit apart on purpose (hy, hy2): only their case is a typo. */
	if (near && strlen(c->domain) < 5 && strcasecmp(near, c->domain) != 0)
		near = NULL;
	if (near)
		snprintf(msg, sizeof(msg),
			 "no Domain named \"%s\" (did you mean \"%s\"?): a write makes the Domain "
			 "it names when there is none, but not one named so close to another; "
			 "if \"%s\" is meant, make it first (cairn domain create %s)",
			 c->domain, near, c->domain, c->domain);
	domain_names_free(&dn);
	return near ? cli_fail_msg(c, CAIRN_ENODOMAIN, c->cmd->name, msg) : 0;
}

/* ---------------------------------------------------------- commands -- */

int cmd_init(cli *c)
{
	cairn_store *st;
	int rc;

	if (c->nargs > 1)
		return cli_usage("init takes at most one directory");
	if (c->nargs == 1)
		c->store = c->args[0];
	if ((rc = cli_open(c, 1, &st)))
		return rc;
	if (c->memory) {
		rc = cli_memory_init(c, st);
		cairn_close(st);
		return rc;
	}
	cairn_close(st);
	if (c->json)
		printf("{\"store\":"), out_str(stdout, c->store, strlen(c->store)), printf("}\n");
	else
		printf("initialized store %s\n", c->store);
	return 0;
}

static int print_domain(void *ctx, const cairn_domain_info *d)
{
	cli *c = ctx;

	if (c->json) {
		printf("{\"name\":");
		out_str(stdout, d->name, strlen(d->name));
		printf(",\"revision\":%llu,\"horizon\":%llu,\"created\":\"",
		       (unsigned long long)d->revision, (unsigned long long)d->horizon);
		out_time(stdout, d->created_ms);
		printf("\"}\n");
	} else {
		printf("%-24s revision %llu", d->name, (unsigned long long)d->revision);
		if (d->horizon)
			printf(", time travel from revision %llu", (unsigned long long)d->horizon);
		printf("\n");
	}
	return 0;
}

int cmd_domain(cli *c)
{
	cairn_store *st;
	const char *sub = c->nargs ? c->args[0] : "list";
	int rc, ex = 0;

	if (strcmp(sub, "list") != 0 && strcmp(sub, "create") != 0 && strcmp(sub, "drop") != 0)
		return cli_usage("domain create|list|drop NAME");
	if (strcmp(sub, "list") != 0 && c->nargs != 2)
		return cli_usage("domain %s NAME", sub);
	if ((rc = cli_open(c, 0, &st)))
		return rc;
	if (strcmp(sub, "list") == 0)
		rc = cairn_domain_list(st, print_domain, c);
	else if (strcmp(sub, "create") == 0)
		rc = cairn_domain_create(st, c->args[1]);
	else
		rc = cairn_domain_drop(st, c->args[1]);
	if (rc)
		ex = cli_fail(c, rc, sub);
	else if (strcmp(sub, "list") != 0) {
		if (c->json)
			printf("{\"domain\":"), out_str(stdout, c->args[1], strlen(c->args[1])),
				printf(",\"%s\":true}\n", strcmp(sub, "create") == 0 ? "created" : "dropped");
		else
			printf("%s Domain %s\n", strcmp(sub, "create") == 0 ? "created" : "dropped",
			       c->args[1]);
	}
	cairn_close(st);
	return ex;
}

static int read_file(const char *path, char **data, size_t *len)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
	size_t cap = 65536, n = 0;
	char *b;

	if (!f)
		return -1;
	b = malloc(cap);
	while (b) {
		size_t r = fread(b + n, 1, cap - n, f);

		n += r;
		if (n < cap)
			break;
		cap *= 2;
		b = realloc(b, cap);
	}
	if (f != stdin)
		fclose(f);
	if (!b)
		return -1;
	*data = b;
	*len = n;
	return 0;
}

static void print_commit(cli *c, const cairn_commit_result *r)
{
	if (c->json) {
		printf("{\"revision\":%llu,\"hash\":\"", (unsigned long long)r->revision);
		out_hash(stdout, r->hash);
		printf("\",\"changes\":%llu,\"unchanged\":%llu}\n", (unsigned long long)r->changes,
		       (unsigned long long)r->unchanged);
	} else if (!r->changes && r->unchanged) {
		printf("nothing to commit: revision %llu holds it already\n",
		       (unsigned long long)r->revision);
	} else {
		printf("committed revision %llu (%llu change%s)\n", (unsigned long long)r->revision,
		       (unsigned long long)r->changes, r->changes == 1 ? "" : "s");
	}
}

int cmd_schema(cli *c)
{
	cairn_store *st;
	int rc, ex = 0;

	if (c->nargs < 1 || (strcmp(c->args[0], "apply") == 0 && c->nargs != 2) ||
	    (strcmp(c->args[0], "show") == 0 && c->nargs != 1) ||
	    (strcmp(c->args[0], "apply") != 0 && strcmp(c->args[0], "show") != 0))
		return cli_usage("schema apply FILE | schema show");
	if ((rc = cli_open(c, 0, &st)))
		return rc;
	if (strcmp(c->args[0], "apply") == 0) {
		cairn_commit_options co;
		cairn_commit_result res;
		char *json;
		size_t len;

		if (read_file(c->args[1], &json, &len)) {
			fprintf(stderr, "cairn: %s: %s\n", c->args[1], strerror(errno));
			cairn_close(st);
			return EXIT_NOTFOUND;
		}
		if ((ex = cli_write_options(c, st, &co))) {
			free(json);
			cairn_close(st);
			return ex;
		}
		rc = cairn_schema_apply(st, &co, json, len, &res);
		if (rc)
			ex = cli_fail(c, rc, "schema");
		else
			print_commit(c, &res);
		free(json);
	} else {
		cairn_read_options ro;
		cairn_txn *t;
		const char *json;
		size_t len;

		if ((ex = cli_read_options(c, &ro)) == 0) {
			rc = cairn_txn_begin(st, &ro, &t);
			if (!rc)
				rc = cairn_schema_get(t, &json, &len);
			if (rc)
				ex = cli_fail(c, rc, "schema");
			else if (c->json)
				printf("%.*s\n", (int)len, json);
			else /* for a reader: indented */
				out_json_indented(stdout, json, len);
			cairn_txn_end(t);
		}
	}
	cairn_close(st);
	return ex;
}

struct progress {
	cli *c;
	uint64_t total;
	struct timespec t0;
	uint64_t last_ns;
};

static double elapsed(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

/*
 * What an import has committed so far, for SIGINT's handler to say: two
 * buffers, the handler reading the one last finished while the other is
 * written.
 */
static char committed_msg[2][320];
static size_t committed_len[2];
static volatile sig_atomic_t committed_cur = -1;

static char staging[80]; /* --atomic: the branch the batches go to */

static void note_committed(const cli *c, const cairn_import_stats *s)
{
	int next = committed_cur == 0 ? 1 : 0;
	int n;

	if (c->atomic)
		n = snprintf(committed_msg[next], sizeof(committed_msg[next]),
			     c->json && !c->tty_err
				     ? "{\"interrupted\":{\"commits\":0,\"atomic\":true,\"branch\":\"%s\"}}\n"
				     : "\ncairn: import interrupted: nothing was imported (--atomic); "
				       "its batches are on branch %s: cairn branch delete %s\n",
			     staging, staging);
	else if (c->json && !c->tty_err)
		n = snprintf(committed_msg[next], sizeof(committed_msg[next]),
			     "{\"interrupted\":{\"commits\":%llu,\"records\":%llu,\"links\":%llu,"
			     "\"unchanged\":%llu}}\n",
			     (unsigned long long)s->commits, (unsigned long long)s->records,
			     (unsigned long long)s->links, (unsigned long long)s->unchanged);
	else
		n = snprintf(committed_msg[next], sizeof(committed_msg[next]),
			     "\ncairn: import interrupted: %llu commit%s made before it (%llu Records, "
			     "%llu Links): they stay, and the same import again writes only what is "
			     "missing\n",
			     (unsigned long long)s->commits, s->commits == 1 ? "" : "s",
			     (unsigned long long)s->records, (unsigned long long)s->links);
	committed_len[next] = n > 0 ? (size_t)n : 0;
	committed_cur = next;
}

/* SIGINT, SIGTERM during an import: say what stays committed, then die of the signal. */
static void on_import_signal(int sig)
{
	int cur = committed_cur;

	if (cur >= 0 && write(STDERR_FILENO, committed_msg[cur], committed_len[cur]) < 0)
		cur = -1;
	signal(sig, SIG_DFL);
	raise(sig);
}

static void on_progress(void *ctx, const cairn_import_stats *s)
{
	struct progress *p = ctx;
	double t = elapsed(&p->t0), rate = t > 0 ? (double)(s->records + s->links) / t : 0;

	note_committed(p->c, s);
	if (!p->c->tty_err)
		return;
	fprintf(stderr, "\r  %llu lines, %llu Records, %llu Links, %.0f/s",
		(unsigned long long)s->lines, (unsigned long long)s->records,
		(unsigned long long)s->links, rate);
	if (p->total && s->bytes && t > 0.5) {
		double frac = (double)s->bytes / (double)p->total, eta = t / frac - t;
		int w = 24, fill = (int)(frac * w);

		fprintf(stderr, "  [%.*s%*s] %3.0f%% ETA %dm%02ds", fill,
			"########################", w - fill, "", frac * 100, (int)eta / 60,
			(int)eta % 60);
	}
	fprintf(stderr, "   ");
}

static void on_bad_line(void *ctx, const char *file, uint64_t line, int rc, const char *msg)
{
	cli *c = ctx ? ((struct progress *)ctx)->c : NULL;

	if (c && c->json && !c->tty_err) {
		fprintf(stderr, "{\"error\":{\"code\":\"%s\",\"file\":", cairn_errname(rc));
		out_str(stderr, file, strlen(file));
		fprintf(stderr, ",\"line\":%llu,\"message\":", (unsigned long long)line);
		out_str(stderr, msg, strlen(msg));
		fprintf(stderr, "}}\n");
	} else {
		fprintf(stderr, "%s%s:%llu: %s (%s)\n", c && c->tty_err ? "\n" : "", file,
			(unsigned long long)line, msg, cairn_errname(rc));
	}
}

/*
 * --atomic: the batches go to a branch of their own, made from the target
 * now; mo gets the target, the provenance and any expectation, for the
 * merge at the end.
 */
static int atomic_begin(cli *c, cairn_store *st, cairn_commit_options *co, cairn_merge_options *mo)
{
	struct timespec now;
	int rc;

	clock_gettime(CLOCK_REALTIME, &now);
	snprintf(staging, sizeof(staging), "import.%ld.%lld%03ld", (long)getpid(),
		 (long long)now.tv_sec, now.tv_nsec / 1000000);
	memset(mo, 0, sizeof(*mo));
	mo->commit = *co;
	mo->source = staging;
	mo->resolve = CAIRN_RESOLVE_NONE;
	if ((rc = cairn_branch_create(st, co->domain, staging, co->branch)))
		return cli_fail(c, rc, "import --atomic");
	co->branch = staging;
	co->has_expect = 0; /* the target's head is checked by the merge */
	return 0;
}

/*
 * --atomic, after the import (rc its result): on success, the branch merged
 * into the target in one commit (*merged its revision; 0 when nothing
 * changed); either way the branch deleted. The import's stats say one
 * commit or none.
 */
static int atomic_end(cairn_store *st, const cairn_merge_options *mo, int rc,
		      cairn_import_stats *stats, uint64_t *merged)
{
	cairn_merge_result mr;
	int drc;

	memset(&mr, 0, sizeof(mr));
	if (!rc)
		rc = cairn_merge(st, mo, NULL, NULL, &mr);
	drc = cairn_branch_delete(st, mo->commit.domain, mo->source);
	if (!rc)
		rc = drc;
	*merged = mr.revision;
	stats->commits = mr.revision ? 1 : 0;
	return rc;
}

int cmd_import(cli *c)
{
	cairn_import_options io;
	cairn_import_stats stats;
	cairn_import *im;
	cairn_store *st;
	struct progress pr = {0};
	cairn_merge_options mo;
	uint64_t merged = 0;
	int rc, ex;

	if (c->nargs < 1)
		return cli_usage("import FILE... ('-' for stdin)");
	memset(&io, 0, sizeof(io));
	if (c->on_error && strcmp(c->on_error, "stop") != 0 && strcmp(c->on_error, "skip") != 0)
		return cli_usage("--on-error stop|skip");
	io.on_error = c->on_error && strcmp(c->on_error, "skip") == 0 ? CAIRN_ON_ERROR_SKIP
								       : CAIRN_ON_ERROR_STOP;
	io.batch = c->batch > 0 ? (size_t)c->batch : 0;
	if (!c->vectors_file != !c->dim)
		return cli_usage("import FILE... --vectors FILE.f32 --dim N: both or neither");
	if (c->vectors_file) {
		struct stat vs;

		if (c->dim < 1 || c->dim > CAIRN_MAX_VECTOR_DIM)
			return cli_usage("--dim is 1 to %d", CAIRN_MAX_VECTOR_DIM);
		if (!(io.vectors = fopen(c->vectors_file, "rb"))) {
			fprintf(stderr, "cairn: %s: %s\n", c->vectors_file, strerror(errno));
			return EXIT_NOTFOUND;
		}
		if (fstat(fileno(io.vectors), &vs) == 0 &&
		    (uint64_t)vs.st_size % ((uint64_t)c->dim * sizeof(float)) != 0) {
			fclose(io.vectors);
			return cli_usage("%s is not rows of %ld float32s (%lld bytes)", c->vectors_file,
					 c->dim, (long long)vs.st_size);
		}
		io.vector_dim = (size_t)c->dim;
	}
	pr.c = c;
	clock_gettime(CLOCK_MONOTONIC, &pr.t0);
	for (int i = 0; i < c->nargs; i++) {
		struct stat sb;

		if (strcmp(c->args[i], "-") != 0 && stat(c->args[i], &sb) == 0)
			pr.total += (uint64_t)sb.st_size;
	}
	io.progress = on_progress;
	/* A stopping error is reported once, at the end; skipped lines as they come. */
	io.on_bad_line = io.on_error == CAIRN_ON_ERROR_SKIP ? on_bad_line : NULL;
	io.ctx = &pr;
	if ((ex = cli_open(c, 0, &st))) {
		if (io.vectors)
			fclose(io.vectors);
		return ex;
	}
	if ((ex = cli_write_options(c, st, &io.commit))) {
		if (io.vectors)
			fclose(io.vectors);
		cairn_close(st);
		return ex;
	}
	if (!io.commit.prov.source)
		io.commit.prov.source = c->args[0];
	memset(&stats, 0, sizeof(stats));
	if (c->atomic && (ex = atomic_begin(c, st, &io.commit, &mo))) {
		if (io.vectors)
			fclose(io.vectors);
		cairn_close(st);
		return ex;
	}
	note_committed(c, &stats);
	signal(SIGINT, on_import_signal);
	signal(SIGTERM, on_import_signal);
	rc = cairn_import_begin(st, &io, &im);
	for (int i = 0; !rc && i < c->nargs; i++) {
		FILE *f = strcmp(c->args[i], "-") == 0 ? stdin : fopen(c->args[i], "r");

		if (!f) {
			fprintf(stderr, "cairn: %s: %s\n", c->args[i], strerror(errno));
			cairn_import_abort(im);
			cairn_close(st);
			if (io.vectors)
				fclose(io.vectors);
			return EXIT_NOTFOUND;
		}
		rc = cairn_import_feed(im, c->args[i], f);
		if (f != stdin)
			fclose(f);
	}
	if (im) {
		int erc = cairn_import_end(im, &stats);

		if (!rc)
			rc = erc;
	}
	if (c->atomic)
		rc = atomic_end(st, &mo, rc, &stats, &merged);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	if (c->tty_err)
		fprintf(stderr, "\n");
	if (rc) {
		ex = cli_fail(c, rc, "import");
		/* What the batches before the failure committed stays. */
		if (c->atomic)
			fprintf(stderr, c->json && !c->tty_err
						? "{\"committed\":{\"commits\":0,\"atomic\":true}}\n"
						: "cairn: import: nothing was imported (--atomic): the branch is "
						  "as it was\n");
		else if (c->json && !c->tty_err)
			fprintf(stderr,
				"{\"committed\":{\"commits\":%llu,\"records\":%llu,\"links\":%llu,"
				"\"unchanged\":%llu}}\n",
				(unsigned long long)stats.commits, (unsigned long long)stats.records,
				(unsigned long long)stats.links, (unsigned long long)stats.unchanged);
		else
			fprintf(stderr,
				"cairn: import: before the failure, %llu commit%s (%llu Records, %llu "
				"Links, %llu of them unchanged); they stay, and after the fix the same "
				"import again writes only what is missing\n",
				(unsigned long long)stats.commits, stats.commits == 1 ? "" : "s",
				(unsigned long long)stats.records, (unsigned long long)stats.links,
				(unsigned long long)stats.unchanged);
	} else {
		double t = elapsed(&pr.t0);

		if (c->json) {
			printf("{\"lines\":%llu,\"records\":%llu,\"links\":%llu,\"unchanged\":%llu,"
			       "\"skipped\":%llu,\"commits\":%llu,",
			       (unsigned long long)stats.lines, (unsigned long long)stats.records,
			       (unsigned long long)stats.links, (unsigned long long)stats.unchanged,
			       (unsigned long long)stats.skipped, (unsigned long long)stats.commits);
			if (c->atomic)
				printf("\"atomic\":true,\"revision\":%llu,", (unsigned long long)merged);
			printf("\"seconds\":%.3f}\n", t);
		} else {
			printf("imported %llu Records and %llu Links in %llu commit%s (%.1f s, %.0f "
			       "per second)%s\n",
			       (unsigned long long)stats.records, (unsigned long long)stats.links,
			       (unsigned long long)stats.commits, stats.commits == 1 ? "" : "s", t,
			       t > 0 ? (double)(stats.records + stats.links) / t : 0.0,
			       stats.skipped ? ", some lines skipped" : "");
		}
		if (stats.unchanged && !c->json)
			printf("%llu unchanged: already so, not written again\n",
			       (unsigned long long)stats.unchanged);
		if (stats.skipped && !c->json)
			printf("skipped %llu bad lines\n", (unsigned long long)stats.skipped);
		/* Skipping bad lines is for a few: a file of nothing else imported nothing. */
		if (stats.skipped && !stats.records && !stats.links) {
			char msg[128];

			snprintf(msg, sizeof(msg), "every line was bad (%llu skipped): nothing was "
				 "imported", (unsigned long long)stats.skipped);
			ex = cli_fail_msg(c, CAIRN_EJSON, "import", msg);
		}
	}
	cairn_close(st);
	if (io.vectors)
		fclose(io.vectors);
	return ex;
}

/* Split "Kind:key". */
static int endpoint(const char *s, char *kind, size_t kcap, const char **key)
{
	const char *colon = strchr(s, ':');

	if (!colon || colon == s || (size_t)(colon - s) >= kcap)
		return -1;
	memcpy(kind, s, (size_t)(colon - s));
	kind[colon - s] = '\0';
	*key = colon + 1;
	return 0;
}

int cmd_write(cli *c)
{
	const char *cmd = c->cmd->name;
	cairn_changeset *cs;
	cairn_commit_options co;
	cairn_commit_result res;
	cairn_store *st;
	int rc, ex;

	if ((rc = cairn_changeset_new(&cs)))
		return cli_fail(c, rc, cmd);
	if (strcmp(cmd, "put") == 0 || strcmp(cmd, "patch") == 0 || strcmp(cmd, "delete") == 0) {
		if (c->nargs != 2) {
			cairn_changeset_free(cs);
			return cli_usage("%s KIND KEY", cmd);
		}
		if (strcmp(cmd, "put") == 0)
			rc = cairn_changeset_put(cs, c->args[0], c->args[1], strlen(c->args[1]),
						 c->title ? c->title : "", c->title ? strlen(c->title) : 0,
						 c->values, c->values ? strlen(c->values) : 0);
		else if (strcmp(cmd, "patch") == 0)
			rc = c->values ? cairn_changeset_patch(cs, c->args[0], c->args[1], strlen(c->args[1]),
							       c->values, strlen(c->values))
				       : CAIRN_EINVAL;
		else
			rc = cairn_changeset_delete(cs, c->args[0], c->args[1], strlen(c->args[1]),
						    c->cascade ? CAIRN_CASCADE : 0);
	} else {
		char fk[CAIRN_MAX_NAME + 1], tk[CAIRN_MAX_NAME + 1];
		const char *fkey, *tkey;

		if (c->nargs != 3 || endpoint(c->args[1], fk, sizeof(fk), &fkey) ||
		    endpoint(c->args[2], tk, sizeof(tk), &tkey)) {
			cairn_changeset_free(cs);
			return cli_usage("%s REL FROM_KIND:KEY TO_KIND:KEY", cmd);
		}
		if (strcmp(cmd, "link") == 0)
			rc = cairn_changeset_link(cs, c->args[0], fk, fkey, strlen(fkey), tk, tkey,
						  strlen(tkey), c->values, c->values ? strlen(c->values) : 0);
		else
			rc = cairn_changeset_unlink(cs, c->args[0], fk, fkey, strlen(fkey), tk, tkey,
						    strlen(tkey));
	}
	if (rc) {
		cairn_changeset_free(cs);
		if (rc == CAIRN_EINVAL && strcmp(cmd, "patch") == 0 && !c->values)
			return cli_usage("patch KIND KEY --values JSON");
		return cli_fail(c, rc, cmd);
	}
	if ((ex = cli_open(c, 0, &st))) {
		cairn_changeset_free(cs);
		return ex;
	}
	if ((ex = cli_write_options(c, st, &co))) {
		cairn_changeset_free(cs);
		cairn_close(st);
		return ex;
	}
	rc = cairn_commit(st, &co, cs, &res);
	if (rc)
		ex = cli_fail(c, rc, cmd);
	else
		print_commit(c, &res);
	cairn_changeset_free(cs);
	cairn_close(st);
	return ex;
}

/* Begin a read; prints the error and returns its exit code. */
static int begin_read(cli *c, cairn_store **st, cairn_txn **t)
{
	cairn_read_options ro;
	int rc, ex;

	*st = NULL;
	*t = NULL;
	if ((ex = cli_read_options(c, &ro)))
		return ex;
	if ((ex = cli_open(c, 0, st)))
		return ex;
	rc = cairn_txn_begin(*st, &ro, t);
	if (rc) {
		ex = cli_fail(c, rc, "read");
		cairn_close(*st);
		*st = NULL;
	}
	return ex;
}

static void end_read(cairn_store *st, cairn_txn *t)
{
	cairn_txn_end(t);
	cairn_close(st);
}

static void print_values_text(const char *v, size_t n)
{
	printf("  values  %.*s\n", (int)n, v);
}

static void print_record(cli *c, cairn_txn *t, const cairn_record *r, int with_prov)
{
	cairn_revision rev;
	int have = with_prov && cairn_revision_get(t, r->revision, &rev) == 0;

	if (c->json) {
		out_header(stdout, r);
		printf(",\"values\":%.*s,\"revision\":%llu", (int)r->values_len, r->values,
		       (unsigned long long)r->revision);
		if (with_prov)
			printf(",\"read_revision\":%llu", (unsigned long long)cairn_txn_revision(t));
		if (have) {
			printf(",\"provenance\":{\"actor\":");
			out_str(stdout, rev.actor, rev.actor_len);
			printf(",\"source\":");
			out_str(stdout, rev.source, rev.source_len);
			printf(",\"confidence\":%g,\"message\":", rev.confidence);
			out_str(stdout, rev.message, rev.message_len);
			printf(",\"trace_id\":");
			out_str(stdout, rev.trace_id, rev.trace_id_len);
			printf(",\"time\":\"");
			out_time(stdout, rev.time_ms);
			printf("\"}");
		}
		printf("}\n");
		return;
	}
	printf("%s:%.*s  %.*s\n", r->kind, (int)r->key_len, r->key, (int)r->title_len, r->title);
	if (!with_prov)
		return;
	print_values_text(r->values, r->values_len);
	printf("  revision %llu (read at revision %llu)\n", (unsigned long long)r->revision,
	       (unsigned long long)cairn_txn_revision(t));
	if (have) {
		printf("  by %.*s", (int)rev.actor_len, rev.actor);
		if (rev.source_len)
			printf(" from %.*s", (int)rev.source_len, rev.source);
		printf(", confidence %g, at ", rev.confidence);
		out_time(stdout, rev.time_ms);
		printf("\n");
		if (rev.message_len)
			printf("  \"%.*s\"\n", (int)rev.message_len, rev.message);
	}
}

int cli_valid_at(cli *c, int64_t *ms)
{
	*ms = 0;
	if (c->valid_at && time_parse_rfc3339(c->valid_at, strlen(c->valid_at), ms))
		return cli_usage("--valid-at takes an RFC 3339 time, like 2026-03-01T00:00:00Z, "
				 "not %s",
				 c->valid_at);
	return 0;
}

/* --valid-at as an exclude into *x (*out NULL: none); an exit code for a bad time. */
static int valid_at_opt(cli *c, cairn_exclude *x, const cairn_exclude **out)
{
	int ex;

	memset(x, 0, sizeof(*x));
	ex = cli_valid_at(c, &x->valid_at_ms);
	*out = x->valid_at_ms ? x : NULL;
	return ex;
}

int cmd_get(cli *c)
{
	const cairn_exclude *when;
	cairn_exclude x;
	cairn_store *st;
	cairn_txn *t;
	cairn_record r;
	int rc, ex;

	if (c->nargs != 2)
		return cli_usage("get KIND KEY");
	if ((ex = valid_at_opt(c, &x, &when)) || (ex = begin_read(c, &st, &t)))
		return ex;
	rc = cairn_get_excluding(t, c->args[0], c->args[1], strlen(c->args[1]), when, &r);
	if (rc)
		ex = cli_fail(c, rc, "get");
	else
		print_record(c, t, &r, 1);
	end_read(st, t);
	return ex;
}

int cmd_page(cli *c)
{
	cairn_record *recs;
	cairn_store *st;
	cairn_txn *t;
	size_t n, limit = c->limit > 0 ? (size_t)c->limit : 50;
	const cairn_exclude *when;
	cairn_exclude x;
	int rc, ex;

	if (c->nargs != 1)
		return cli_usage("page KIND [--after KEY] [--limit N]");
	if (limit > CAIRN_MAX_PAGE)
		return cli_usage("--limit is at most %d", CAIRN_MAX_PAGE);
	if ((ex = valid_at_opt(c, &x, &when)) || (ex = begin_read(c, &st, &t)))
		return ex;
	recs = calloc(limit, sizeof(*recs));
	rc = recs ? cairn_page_excluding(t, c->args[0], c->after, c->after ? strlen(c->after) : 0,
					 when, recs, limit, &n)
		  : CAIRN_ENOMEM;
	if (rc) {
		ex = cli_fail(c, rc, "page");
	} else {
		for (size_t i = 0; i < n; i++)
			print_record(c, t, &recs[i], 0);
		if (!c->json && n == limit)
			printf("(more: --after %.*s)\n", (int)recs[n - 1].key_len, recs[n - 1].key);
	}
	free(recs);
	end_read(st, t);
	return ex;
}

int cmd_links(cli *c)
{
	cairn_link *links;
	cairn_link_cursor cur;
	cairn_store *st;
	cairn_txn *t;
	size_t n, limit = c->limit > 0 ? (size_t)c->limit : 100;
	cairn_revision last = {0};
	int dir = CAIRN_BOTH, rc, ex;

	if (c->nargs != 2)
		return cli_usage("links KIND KEY [--dir out|in|both] [--rel REL]");
	if (c->dir) {
		if (strcmp(c->dir, "out") == 0)
			dir = CAIRN_OUT;
		else if (strcmp(c->dir, "in") == 0)
			dir = CAIRN_IN;
		else if (strcmp(c->dir, "both") != 0)
			return cli_usage("--dir out|in|both");
	}
	if (limit > CAIRN_MAX_PAGE)
		return cli_usage("--limit is at most %d", CAIRN_MAX_PAGE);
	if ((ex = begin_read(c, &st, &t)))
		return ex;
	memset(&cur, 0, sizeof(cur));
	links = calloc(limit, sizeof(*links));
	rc = links ? cairn_links(t, c->args[0], c->args[1], strlen(c->args[1]), dir, c->rel, &cur,
				 links, limit, &n)
		   : CAIRN_ENOMEM;
	if (rc) {
		ex = cli_fail(c, rc, "links");
	} else {
		for (size_t i = 0; i < n; i++) {
			cairn_link *l = &links[i];

			if (c->json) {
				if ((rc = out_link(stdout, t, l, 1, &last))) {
					ex = cli_fail(c, rc, "links");
					break;
				}
			} else {
				printf("%s:%.*s -%s-> %s:%.*s", l->from_kind, (int)l->from_key_len,
				       l->from_key, l->rel, l->to_kind, (int)l->to_key_len,
				       l->to_key);
				if (l->values_len > 2)
					printf("  %.*s", (int)l->values_len, l->values);
				printf("\n");
			}
		}
		if (!c->json && n == limit)
			printf("(more Links: raise --limit)\n");
	}
	free(links);
	end_read(st, t);
	return ex;
}

int cmd_count(cli *c)
{
	cairn_store *st;
	cairn_txn *t;
	int rc = 0, ex;

	if (c->nargs > 1)
		return cli_usage("count [KIND]");
	if ((ex = begin_read(c, &st, &t)))
		return ex;
	if (c->nargs == 1) {
		uint64_t n;

		rc = cairn_count(t, c->args[0], &n);
		if (!rc) {
			if (c->json)
				printf("{\"kind\":\"%s\",\"count\":%llu}\n", c->args[0],
				       (unsigned long long)n);
			else
				printf("%s %llu\n", c->args[0], (unsigned long long)n);
		}
	} else {
		const char *kinds[256];
		size_t nk;

		rc = cairn_kind_list(t, kinds, 256, &nk);
		for (size_t i = 0; !rc && i < nk; i++) {
			uint64_t n;

			rc = cairn_count(t, kinds[i], &n);
			if (rc)
				break;
			if (c->json)
				printf("{\"kind\":\"%s\",\"count\":%llu}\n", kinds[i],
				       (unsigned long long)n);
			else
				printf("%-24s %llu\n", kinds[i], (unsigned long long)n);
		}
	}
	if (rc)
		ex = cli_fail(c, rc, "count");
	end_read(st, t);
	return ex;
}

int cmd_log(cli *c)
{
	cairn_revision *revs;
	cairn_store *st;
	cairn_txn *t;
	size_t n, limit = c->limit > 0 ? (size_t)c->limit : 20;
	int rc, ex;

	if (c->nargs)
		return cli_usage("log [--limit N]");
	if (limit > CAIRN_MAX_PAGE)
		return cli_usage("--limit is at most %d", CAIRN_MAX_PAGE);
	if ((ex = begin_read(c, &st, &t)))
		return ex;
	revs = calloc(limit, sizeof(*revs));
	rc = revs ? cairn_log(t, 0, revs, limit, &n) : CAIRN_ENOMEM;
	if (rc) {
		ex = cli_fail(c, rc, "log");
	} else {
		for (size_t i = 0; i < n; i++) {
			cairn_revision *r = &revs[i];

			if (c->json) {
				printf("{\"revision\":%llu,\"parent\":%llu,", (unsigned long long)r->revision,
				       (unsigned long long)r->parent);
				if (r->parent2) /* a merge: the source head it merged */
					printf("\"parent2\":%llu,", (unsigned long long)r->parent2);
				printf("\"type\":\"%s\",\"branch\":",
				       cairn_revision_type_name(r->type));
				out_str(stdout, r->branch, strlen(r->branch));
				printf(",\"time\":\"");
				out_time(stdout, r->time_ms);
				printf("\",\"actor\":");
				out_str(stdout, r->actor, r->actor_len);
				printf(",\"source\":");
				out_str(stdout, r->source, r->source_len);
				printf(",\"confidence\":%g,\"message\":", r->confidence);
				out_str(stdout, r->message, r->message_len);
				printf(",\"trace_id\":");
				out_str(stdout, r->trace_id, r->trace_id_len);
				printf(",\"changes\":%llu,\"hash\":\"", (unsigned long long)r->changes);
				out_hash(stdout, r->hash);
				printf("\"}\n");
			} else {
				printf("revision %llu  ", (unsigned long long)r->revision);
				out_time(stdout, r->time_ms);
				printf("  %.*s  %s, %llu change%s", (int)r->actor_len, r->actor,
				       cairn_revision_type_name(r->type),
				       (unsigned long long)r->changes, r->changes == 1 ? "" : "s");
				if (r->parent2)
					printf(", merging revision %llu", (unsigned long long)r->parent2);
				printf("\n");
				if (r->message_len)
					printf("    %.*s\n", (int)r->message_len, r->message);
			}
		}
	}
	free(revs);
	end_read(st, t);
	return ex;
}

int cmd_export(cli *c)
{
	cairn_store *st;
	cairn_txn *t;
	FILE *out = stdout;
	int rc, ex;

	if (c->nargs)
		return cli_usage("export [--out FILE]");
	if ((ex = begin_read(c, &st, &t)))
		return ex;
	if (c->out && !(out = fopen(c->out, "w"))) {
		fprintf(stderr, "cairn: %s: %s\n", c->out, strerror(errno));
		end_read(st, t);
		return EXIT_FAIL;
	}
	rc = cairn_export(t, out);
	if (out != stdout && fclose(out) != 0 && !rc)
		rc = CAIRN_EIO;
	if (rc)
		ex = cli_fail(c, rc, "export");
	end_read(st, t);
	return ex;
}

static void on_problem(void *ctx, const char *p)
{
	cli *c = ctx;

	if (c->json) {
		printf("{\"problem\":");
		out_str(stdout, p, strlen(p));
		printf("}\n");
	} else {
		printf("problem: %s\n", p);
	}
}

/* Check one Domain and print its line; 0, 1 when it has a problem, or -1 after an error. */
static int check_domain(cli *c, cairn_store *st, const char *domain, int *ex)
{
	cairn_check_report rep;
	int rc = cairn_check(st, domain, on_problem, c, &rep);

	if (rc && rc != CAIRN_ECORRUPT) {
		*ex = cli_fail(c, rc, "check");
		return -1;
	}
	if (c->json) {
		printf("{\"domain\":");
		out_str(stdout, domain, strlen(domain));
		printf(",\"ok\":%s,\"revisions\":%llu,\"versions\":%llu,\"index_entries\":%llu,"
		       "\"problems\":%llu,\"unverifiable\":%llu}\n",
		       rc ? "false" : "true", (unsigned long long)rep.revisions,
		       (unsigned long long)rep.versions, (unsigned long long)rep.index_entries,
		       (unsigned long long)rep.problems, (unsigned long long)rep.unverifiable);
	} else {
		printf("%s: %s: %llu revisions, %llu Versions, %llu index entries verified, %llu "
		       "problem%s\n",
		       domain, rc ? "FAILED" : "ok", (unsigned long long)rep.revisions,
		       (unsigned long long)rep.versions, (unsigned long long)rep.index_entries,
		       (unsigned long long)rep.problems, rep.problems == 1 ? "" : "s");
		if (rep.unverifiable)
			printf("%s: %llu revisions of format 1 hold erased Versions: their digest "
			       "cannot be recomputed; their hash chain was verified\n",
			       domain, (unsigned long long)rep.unverifiable);
	}
	return rc ? 1 : 0;
}

/* check [--domain D]: one Domain, or without --domain (and $CAIRN_DOMAIN) every one. */
int cmd_check(cli *c)
{
	domain_names dn = {0};
	cairn_store *st;
	int rc = 0, ex = 0, bad = 0, r;

	if (c->nargs)
		return cli_usage("check");
	if ((ex = cli_open(c, 0, &st)))
		return ex;
	if (cli_domain_given(c)) {
		r = check_domain(c, st, c->domain, &ex);
		bad = r > 0;
	} else if ((rc = cairn_domain_list(st, add_domain, &dn))) {
		ex = cli_fail(c, rc, "check");
	} else {
		for (size_t i = 0; i < dn.n && !ex; i++)
			if ((r = check_domain(c, st, dn.names[i], &ex)) > 0)
				bad++;
		if (!ex && !c->json)
			printf("%zu Domain%s checked%s\n", dn.n, dn.n == 1 ? "" : "s",
			       bad ? ", with problems" : "");
	}
	for (size_t i = 0; i < dn.n; i++)
		free(dn.names[i]);
	free(dn.names);
	cairn_close(st);
	return ex ? ex : bad ? EXIT_CORRUPT : 0;
}

int cmd_stats(cli *c)
{
	cairn_db_stats s[32];
	cairn_store *st;
	size_t n;
	int rc, ex;

	if ((ex = cli_open(c, 0, &st)))
		return ex;
	rc = cairn_store_stats(st, s, 32, &n);
	if (rc) {
		ex = cli_fail(c, rc, "stats");
	} else {
		for (size_t i = 0; i < n; i++) {
			if (c->json)
				printf("{\"db\":\"%s\",\"entries\":%llu,\"pages\":%llu,\"bytes\":%llu}\n",
				       s[i].name, (unsigned long long)s[i].entries,
				       (unsigned long long)s[i].pages, (unsigned long long)s[i].bytes);
			else
				printf("%-10s %12llu entries %10llu pages %14llu bytes\n", s[i].name,
				       (unsigned long long)s[i].entries,
				       (unsigned long long)s[i].pages, (unsigned long long)s[i].bytes);
		}
	}
	cairn_close(st);
	return ex;
}

static void out_prov(cli *c, const cairn_revision *r)
{
	if (c->json) {
		printf("\"revision\":%llu,\"branch\":", (unsigned long long)r->revision);
		out_str(stdout, r->branch, strlen(r->branch));
		printf(",\"time\":\"");
		out_time(stdout, r->time_ms);
		printf("\",\"actor\":");
		out_str(stdout, r->actor, r->actor_len);
		printf(",\"source\":");
		out_str(stdout, r->source, r->source_len);
		printf(",\"confidence\":%g,\"message\":", r->confidence);
		out_str(stdout, r->message, r->message_len);
		printf(",\"trace_id\":");
		out_str(stdout, r->trace_id, r->trace_id_len);
	} else {
		/* A deleted branch's name reads "(deleted)" already. */
		printf(*r->branch == '(' ? "revision %llu %s by %.*s" : "revision %llu (%s) by %.*s",
		       (unsigned long long)r->revision, r->branch, (int)r->actor_len, r->actor);
		if (r->source_len)
			printf(" from %.*s", (int)r->source_len, r->source);
		printf(", confidence %g, ", r->confidence);
		out_time(stdout, r->time_ms);
		if (r->message_len)
			printf(": %.*s", (int)r->message_len, r->message);
	}
}

int cmd_history(cli *c)
{
	static const char *const what[] = {"?", "created", "updated", "deleted", "erased"};
	cairn_history_entry *h;
	cairn_history_cursor cur = {0, 0};
	cairn_store *st;
	cairn_txn *t;
	size_t n, limit = c->limit > 0 ? (size_t)c->limit : 20;
	int rc, ex;

	char fk[CAIRN_MAX_NAME + 1], tk[CAIRN_MAX_NAME + 1];
	const char *fkey = NULL, *tkey = NULL;

	if (c->nargs != 2 && (c->nargs != 3 || endpoint(c->args[1], fk, sizeof(fk), &fkey) ||
			      endpoint(c->args[2], tk, sizeof(tk), &tkey)))
		return cli_usage("history KIND KEY | history REL FROM_KIND:KEY TO_KIND:KEY [--limit N]");
	if (limit > CAIRN_MAX_PAGE)
		return cli_usage("--limit is at most %d", CAIRN_MAX_PAGE);
	if ((ex = begin_read(c, &st, &t)))
		return ex;
	h = calloc(limit, sizeof(*h));
	if (!h)
		rc = CAIRN_ENOMEM;
	else if (c->nargs == 3)
		rc = cairn_link_history(t, c->args[0], fk, fkey, strlen(fkey), tk, tkey, strlen(tkey),
					&cur, h, limit, &n);
	else
		rc = cairn_history(t, c->args[0], c->args[1], strlen(c->args[1]), &cur, h, limit, &n);
	if (rc)
		ex = cli_fail(c, rc, "history");
	for (size_t i = 0; !rc && i < n; i++) {
		if (c->json) {
			printf("{\"change\":\"%s\",", what[h[i].change]);
			out_prov(c, &h[i].rev);
			printf(",\"title\":");
			out_str(stdout, h[i].title, h[i].title_len);
			printf(",\"values\":%.*s,\"diff\":%.*s", (int)h[i].values_len, h[i].values,
			       (int)h[i].diff_len, h[i].diff);
			if (h[i].change == CAIRN_ERASED) {
				printf(",\"erased\":{");
				out_prov(c, &h[i].erased);
				printf("}");
			}
			printf("}\n");
		} else {
			printf("%-8s ", what[h[i].change]);
			out_prov(c, &h[i].rev);
			printf("\n");
			if (h[i].change == CAIRN_ERASED) {
				printf("         erased: ");
				out_prov(c, &h[i].erased);
				printf("\n");
				continue;
			}
			if (h[i].title_len != h[i].title_before_len ||
			    memcmp(h[i].title, h[i].title_before, h[i].title_len) != 0)
				printf("         title: \"%.*s\" -> \"%.*s\"\n", (int)h[i].title_before_len,
				       h[i].title_before, (int)h[i].title_len, h[i].title);
			if (h[i].diff_len > 2)
				out_diff_text(stdout, "         ", h[i].diff, h[i].diff_len);
		}
	}
	if (!rc && !c->json && !cur.done)
		printf("(more: raise --limit)\n");
	free(h);
	end_read(st, t);
	return ex;
}

int cmd_lineage(cli *c)
{
	cairn_lineage_entry le[256];
	cairn_revision created;
	cairn_store *st;
	cairn_txn *t;
	char fk[CAIRN_MAX_NAME + 1], tk[CAIRN_MAX_NAME + 1];
	const char *fkey = NULL, *tkey = NULL;
	size_t n = 1;
	int rc, ex;

	if (c->nargs != 2 && (c->nargs != 3 || endpoint(c->args[1], fk, sizeof(fk), &fkey) ||
			      endpoint(c->args[2], tk, sizeof(tk), &tkey)))
		return cli_usage("lineage KIND KEY | lineage REL FROM_KIND:KEY TO_KIND:KEY");
	if ((ex = begin_read(c, &st, &t)))
		return ex;
	if (c->nargs == 3) /* a Link: the revision that set its values, as "(values)" */
		rc = cairn_link_lineage(t, c->args[0], fk, fkey, strlen(fkey), tk, tkey, strlen(tkey),
					&le[0], &created);
	else
		rc = cairn_lineage(t, c->args[0], c->args[1], strlen(c->args[1]), le, 256, &n,
				   &created);
	if (rc) {
		ex = cli_fail(c, rc, "lineage");
	} else if (c->json) {
		printf("{\"attribute\":null,\"created\":true,");
		out_prov(c, &created);
		printf("}\n");
		for (size_t i = 0; i < n; i++) {
			printf("{\"attribute\":");
			if (c->nargs == 3)
				printf("\"(values)\"");
			else if (*le[i].attribute)
				out_str(stdout, le[i].attribute, strlen(le[i].attribute));
			else
				printf("\"(title)\"");
			printf(",");
			out_prov(c, &le[i].rev);
			printf("}\n");
		}
	} else {
		printf("%-20s ", "created");
		out_prov(c, &created);
		printf("\n");
		for (size_t i = 0; i < n; i++) {
			printf("%-20s ", c->nargs == 3	     ? "(values)"
					 : *le[i].attribute ? le[i].attribute
							    : "(title)");
			out_prov(c, &le[i].rev);
			printf("\n");
		}
	}
	end_read(st, t);
	return ex;
}

static int print_branch(void *ctx, const cairn_branch_info *b)
{
	cli *c = ctx;

	if (c->json) {
		printf("{\"name\":");
		out_str(stdout, b->name, strlen(b->name));
		printf(",\"parent\":");
		if (b->parent)
			out_str(stdout, b->parent, strlen(b->parent));
		else
			printf("null");
		printf(",\"fork_revision\":%llu,\"head_revision\":%llu,\"created\":\"",
		       (unsigned long long)b->fork_revision, (unsigned long long)b->head_revision);
		out_time(stdout, b->created_ms);
		printf("\"}\n");
	} else if (b->parent) {
		printf("%-32s head %llu, from %s at %llu\n", b->name,
		       (unsigned long long)b->head_revision, b->parent,
		       (unsigned long long)b->fork_revision);
	} else {
		printf("%-32s head %llu\n", b->name, (unsigned long long)b->head_revision);
	}
	return 0;
}

int cmd_branch(cli *c)
{
	const char *sub = c->nargs ? c->args[0] : "list";
	cairn_store *st;
	int rc = 0, ex;

	if ((strcmp(sub, "list") == 0 && c->nargs > 1) ||
	    ((strcmp(sub, "create") == 0 || strcmp(sub, "delete") == 0) && c->nargs != 2) ||
	    (strcmp(sub, "rename") == 0 && c->nargs != 3) ||
	    (strcmp(sub, "list") && strcmp(sub, "create") && strcmp(sub, "delete") &&
	     strcmp(sub, "rename")))
		return cli_usage("branch create NAME [--from B] | list | rename NAME NEW | delete NAME");
	if ((ex = cli_open(c, 0, &st)))
		return ex;
	if (strcmp(sub, "list") == 0)
		rc = cairn_branch_list(st, c->domain, print_branch, c);
	else if (strcmp(sub, "create") == 0)
		rc = cairn_branch_create(st, c->domain, c->args[1], c->from);
	else if (strcmp(sub, "rename") == 0)
		rc = cairn_branch_rename(st, c->domain, c->args[1], c->args[2]);
	else
		rc = cairn_branch_delete(st, c->domain, c->args[1]);
	if (rc) {
		ex = cli_fail(c, rc, "branch");
	} else if (strcmp(sub, "list") != 0) {
		const char *name = strcmp(sub, "rename") == 0 ? c->args[2] : c->args[1];

		if (c->json) {
			printf("{\"branch\":");
			out_str(stdout, name, strlen(name));
			printf(",\"%s\":true}\n", strcmp(sub, "create") == 0   ? "created"
						   : strcmp(sub, "rename") == 0 ? "renamed"
										: "deleted");
		} else {
			printf("%s branch %s\n", strcmp(sub, "create") == 0   ? "created"
						  : strcmp(sub, "rename") == 0 ? "renamed to"
									       : "deleted",
			       name);
			if (strcmp(sub, "delete") == 0)
				printf("(its space is reclaimed by 'cairn maintain', or by a running "
				       "server in the background)\n");
		}
	}
	cairn_close(st);
	return ex;
}

int cmd_maintain(cli *c)
{
	cairn_open_options o = {.flags = CAIRN_OPEN_NO_BACKGROUND};
	cairn_store *st;
	int pending = 1, rc = 0;
	unsigned steps = 0;

	if (c->nargs)
		return cli_usage("maintain");
	if ((rc = cairn_open(c->store, &o, &st)))
		return cli_fail(c, rc, NULL);
	rc = cairn_store_maintain(st, 0, &pending); /* is there any? */
	while (pending && !rc) {
		rc = cairn_store_maintain(st, 5000, &pending);
		steps++;
	}
	cairn_close(st);
	if (rc)
		return cli_fail(c, rc, "maintain");
	if (c->json)
		printf("{\"steps\":%u}\n", steps);
	else
		printf("background work done (%u step%s)\n", steps, steps == 1 ? "" : "s");
	return 0;
}

int64_t cli_parse_duration_ms(const char *s)
{
	char *end;
	long long n;

	errno = 0;
	n = strtoll(s, &end, 10);
	if (!*s || *s == '-' || errno || n < 0 || n > (1LL << 40))
		return -1;
	switch (*end) {
	case '\0':
	case 's':
		break;
	case 'm':
		n *= 60;
		break;
	case 'h':
		n *= 3600;
		break;
	case 'd':
		n *= 86400;
		break;
	default:
		return -1;
	}
	if (*end && end[1])
		return -1;
	return (int64_t)n * 1000;
}

int cmd_compact(cli *c)
{
	cairn_compact_options o = {0};
	cairn_compact_result r;
	cairn_store *st;
	int rc, ex;

	if (c->nargs || (c->retain && c->horizon))
		return cli_usage("compact [--retain DURATION | --horizon REV] [--dry-run]");
	o.dry_run = c->dry_run;
	if (c->horizon) {
		char *end;

		errno = 0;
		o.horizon = strtoull(c->horizon, &end, 10);
		if (!*c->horizon || *end || errno || o.horizon == 0 || *c->horizon == '-')
			return cli_usage("--horizon takes a revision number, not %s", c->horizon);
	} else if ((o.retain_ms = cli_parse_duration_ms(c->retain ? c->retain : "7d")) < 0) {
		return cli_usage("--retain takes a duration such as 90s, 30m, 12h or 7d, not %s",
				 c->retain);
	}
	if ((ex = cli_open(c, 0, &st)))
		return ex;
	rc = cairn_compact(st, c->domain, &o, &r);
	cairn_close(st);
	if (rc)
		return cli_fail(c, rc, "compact");
	if (c->json) {
		buf b = BUF_INIT;

		wire_compact(&b, &r);
		printf("%.*s\n", (int)b.len, (const char *)b.p);
		buf_release(&b);
	} else if (!r.horizon) {
		printf("nothing to compact: no revision is that old\n");
	} else {
		printf("%s revision %llu; %llu Versions out of reach\n"
		       "%s: %llu attribute entries, %llu adjacency entries, %llu vectors, "
		       "%llu vector-index entries,\n%llu postings (%llu segments rewritten), "
		       "%llu live-set and count cells; %.2f s\n",
		       o.dry_run ? "a dry run: time travel would reach back to"
				 : "time travel now reaches back to",
		       (unsigned long long)r.horizon, (unsigned long long)r.versions,
		       o.dry_run ? "it would remove" : "removed", (unsigned long long)r.attr_entries, (unsigned long long)r.link_entries,
		       (unsigned long long)r.vectors, (unsigned long long)r.vindex_entries,
		       (unsigned long long)r.postings, (unsigned long long)r.segments,
		       (unsigned long long)r.cells, r.seconds);
	}
	return 0;
}

int cmd_erase(cli *c)
{
	cairn_erase_options o;
	cairn_erase_result r;
	cairn_store *st;
	char kind[CAIRN_MAX_NAME + 1];
	const char *colon;
	int rc, ex;

	memset(&o, 0, sizeof(o));
	if (c->nargs || !!c->record + !!c->prov.source + !!c->prov.actor != 1)
		return cli_usage("erase --record KIND:KEY | --source S | --actor A --message WHY "
				 "[--actor-as NAME] [--dry-run]");
	if (c->record) {
		colon = strchr(c->record, ':');
		if (!colon || colon == c->record || !colon[1] ||
		    (size_t)(colon - c->record) > CAIRN_MAX_NAME)
			return cli_usage("--record takes KIND:KEY, not %s", c->record);
		memcpy(kind, c->record, (size_t)(colon - c->record));
		kind[colon - c->record] = '\0';
		o.kind = kind;
		o.key = colon + 1;
		o.key_len = strlen(colon + 1);
	}
	o.source = c->prov.source;
	o.actor = c->prov.actor;
	o.dry_run = c->dry_run;
	o.commit.domain = c->domain;
	o.commit.prov.actor = c->actor_as ? c->actor_as : getenv("USER") ? getenv("USER") : "cli";
	o.commit.prov.message = c->prov.message;
	o.commit.prov.trace_id = c->prov.trace_id;
	o.commit.prov.client_time_ms = (int64_t)time(NULL) * 1000;
	if ((ex = cli_open(c, 0, &st)))
		return ex;
	rc = cairn_erase(st, &o, &r);
	cairn_close(st);
	if (rc)
		return cli_fail(c, rc, "erase");
	if (c->json) {
		buf b = BUF_INIT;

		wire_erase(&b, &r);
		printf("%.*s\n", (int)b.len, (const char *)b.p);
		buf_release(&b);
	} else {
		if (r.resumed)
			printf("completed an erasure a crash had interrupted first\n");
		if (o.dry_run)
			printf("a dry run: it would erase %llu Versions of %llu Records and %llu Links\n",
			       (unsigned long long)r.versions, (unsigned long long)r.records,
			       (unsigned long long)r.links);
		else
			printf("revision %llu erased %llu Versions of %llu Records and %llu Links;\n"
			       "removed %llu index entries (%llu attribute entries, %llu postings, "
			       "%llu lexicon words, %llu vectors, %llu vector-index entries) in %llu "
			       "transactions, %.2f s\n"
			       "run cairn vacuum to remove the erased bytes from the file\n",
			       (unsigned long long)r.revision, (unsigned long long)r.versions,
			       (unsigned long long)r.records, (unsigned long long)r.links,
			       (unsigned long long)r.index_entries, (unsigned long long)r.attr_entries,
			       (unsigned long long)r.postings, (unsigned long long)r.lexicon_words,
			       (unsigned long long)r.vectors, (unsigned long long)r.vindex_entries,
			       (unsigned long long)r.transactions, r.seconds);
	}
	return 0;
}

int cmd_vacuum(cli *c)
{
	cairn_vacuum_result r;
	int rc;

	if (c->nargs)
		return cli_usage("vacuum");
	if ((rc = cairn_vacuum(c->store, &r)))
		return cli_fail(c, rc, "vacuum");
	if (c->json)
		printf("{\"bytes_before\":%llu,\"bytes_after\":%llu,\"seconds\":%.3f}\n",
		       (unsigned long long)r.bytes_before, (unsigned long long)r.bytes_after,
		       r.seconds);
	else
		printf("rewrote %s: %llu bytes, was %llu; %.2f s\n", c->store,
		       (unsigned long long)r.bytes_after, (unsigned long long)r.bytes_before,
		       r.seconds);
	return 0;
}

int cmd_backup(cli *c)
{
	cairn_backup_result r;
	cairn_store *st;
	int rc, ex;

	if (c->nargs != 1)
		return cli_usage("backup DIR");
	if ((ex = cli_open(c, 0, &st)))
		return ex;
	rc = cairn_backup(st, c->args[0], &r);
	cairn_close(st);
	if (rc)
		return cli_fail(c, rc, "backup");
	if (c->json) {
		printf("{\"backup\":");
		out_str(stdout, c->args[0], strlen(c->args[0]));
		printf(",\"bytes\":%llu,\"seconds\":%.3f}\n", (unsigned long long)r.bytes,
		       r.seconds);
	} else {
		printf("backed up %s into %s: %llu bytes, %.2f s (open it with --store %s)\n",
		       c->store, c->args[0], (unsigned long long)r.bytes, r.seconds, c->args[0]);
	}
	return 0;
}

/* ------------------------------------------------------------- main -- */

/* --embed: the model that embeds what this command writes (closed at exit). */
static int open_embedder(cli *c)
{
	int rc;

	if (c->vector_model)
		return cli_usage("--embed names its model: no --vector-model with it");
	if ((rc = cli_open_model(c, &c->emb, "embed")))
		return rc;
	embedder_to_close = c->emb;
	atexit(close_embedder);
	return 0;
}

/* The Domain of a command without --domain or $CAIRN_DOMAIN (compared by address). */
static const char default_domain[] = "default";

int cli_domain_given(const cli *c)
{
	return c->domain != default_domain;
}

static void cli_defaults(cli *c)
{
	const char *store = getenv("CAIRN_STORE"), *domain = getenv("CAIRN_DOMAIN");
	const char *branch = getenv("CAIRN_BRANCH");

	memset(c, 0, sizeof(*c));
	c->store = store && *store ? store : "./data";
	c->domain = domain && *domain ? domain : default_domain;
	c->branch = branch && *branch ? branch : NULL;
	c->json = !isatty(STDOUT_FILENO);
	c->tty_err = isatty(STDERR_FILENO);
	c->limit = -1;
	c->expect = -1;
}

static int is_help(const char *a)
{
	return strcmp(a, "help") == 0 || strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0;
}

/* cairn help [COMMAND]: the list of commands, or one command's usage. */
static int help(int argc, char **argv)
{
	const cli_cmd *cmd;

	if (argc < 3) {
		cli_help(stdout);
		return 0;
	}
	if (strcmp(argv[2], "errors") == 0) { /* the table of docs/cli.md, "Exit codes" */
		size_t n;
		const wire_error *e = wire_errors(&n);

		puts("| error code | meaning | exit | HTTP |\n|---|---|---:|---:|");
		for (size_t i = 0; i < n; i++)
			printf("| `%s` | %s | %u | %u |\n", cairn_errname(e[i].rc),
			       cairn_strerror(e[i].rc), e[i].exit, e[i].http);
		return 0;
	}
	if (!(cmd = cli_command(argv[2])))
		return cli_usage("unknown command \"%s\"", argv[2]);
	fputs(cmd->usage, stdout);
	return 0;
}

/*
 * A write that waits for the store's writer lock, which another process (a
 * server, an import) holds while it writes, says so once a second has gone
 * by, once per wait, on stderr: otherwise the command just hangs. It goes
 * on by itself when the other write ends.
 */
static void *writer_watchdog(void *arg)
{
	const cli *c = arg;
	const struct timespec tick = {0, 100000000};
	int64_t told = 0;

	for (;;) {
		int64_t since = cairn_writer_waiting_since();

		if (since && since != told && time_now_ms() - since >= 1000) {
			time_t t = (time_t)(since / 1000);
			struct tm tm;
			char at[32];

			gmtime_r(&t, &tm);
			strftime(at, sizeof(at), "%Y-%m-%dT%H:%M:%SZ", &tm);
			if (c->json && !c->tty_err)
				fprintf(stderr, "{\"waiting\":{\"for\":\"another writer\",\"since\":\"%s\"}}\n", at);
			else
				fprintf(stderr, "cairn: waiting for another writer of the store since %s "
						"(a server, an import or another command is writing to it); "
						"this goes on when that write ends\n", at);
			told = since;
		}
		nanosleep(&tick, NULL);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	cli c;
	int ex;

	cli_defaults(&c);
	if (argc < 2) {
		cli_help(stderr);
		return EXIT_USAGE;
	}
	if (is_help(argv[1]))
		return help(argc, argv);
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
		printf("cairn %s\n", CAIRN_VERSION_STRING);
		return 0;
	}
	if (!(c.cmd = cli_command(argv[1])))
		return cli_usage("unknown command \"%s\"", argv[1]);
	usage_cmd = c.cmd->name;
	if ((ex = cli_parse(&c, argc - 1, argv + 1)))
		return ex < 0 ? 0 : ex;
	if (c.embed && (ex = open_embedder(&c)))
		return ex;
	/* A broken page no check has seen ends the command as a corrupt error, not a crash. */
	cairn_exit_on_damage(EXIT_CORRUPT, c.json && !c.tty_err);
	if (strcmp(c.cmd->name, "serve") != 0 && strcmp(c.cmd->name, "mcp") != 0) {
		pthread_t w;

		if (pthread_create(&w, NULL, writer_watchdog, &c) == 0)
			pthread_detach(w);
	}
	return c.cmd->run(&c);
}
