/*
 * The cairn command. Every subcommand takes --store DIR (default
 * $CAIRN_STORE, else ./data), --domain NAME (default $CAIRN_DOMAIN, else
 * "default") and --branch NAME (default $CAIRN_BRANCH, else main). Output is
 * JSON (one object per line) when stdout is not a terminal, readable text
 * when it is. See docs/cli.md.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "server/graphio.h"

static const char usage_text[] =
	"usage: cairn COMMAND [options] [arguments]\n"
	"\n"
	"Store and Domains\n"
	"  init [DIR]                      create a store (default: --store)\n"
	"  domain create|list|drop [NAME]  manage Domains (tenants)\n"
	"  stats                           size of the store by sub-database\n"
	"  check                           verify hash chain, indexes and live sets\n"
	"  maintain                        finish background work now (clearing deleted branches)\n"
	"  compact [--retain 7d | --horizon REV] [--dry-run]\n"
	"                                  drop the index entries only time travel before the\n"
	"                                  horizon reads; it then reaches back to the horizon\n"
	"Branches\n"
	"  branch create NAME [--from B]   a new branch from the head of B (default main)\n"
	"  branch list                     the Domain's branches\n"
	"  branch rename NAME NEW          rename a branch\n"
	"  branch delete NAME              delete a branch (its space is reclaimed by maintain)\n"
	"  diff BRANCH | diff A B          what differs between two branches (--branch and BRANCH)\n"
	"                                  since their common ancestor\n"
	"  diff FROM_REV TO_REV            what changed on --branch between two revisions\n"
	"  changes REV                     what one revision changed\n"
	"  merge SOURCE [--into T] [--resolve ours|theirs] [--resolutions FILE] [--dry-run]\n"
	"                                  merge branch SOURCE into T (default --branch)\n"
	"Proposals\n"
	"  propose SOURCE [--into T] [--title T] [--message TEXT]   offer SOURCE for merge\n"
	"  proposal list [--status S]      open, merged, rejected, withdrawn\n"
	"  proposal show|diff N            a proposal; its diff and conflicts, computed now\n"
	"  proposal note N TEXT [--verdict V]   add a review note\n"
	"  proposal accept N [--resolve ...] [--resolutions FILE]   merge it\n"
	"  proposal reject|withdraw N [TEXT]\n"
	"Schema\n"
	"  schema apply FILE               add or change Kinds, Attributes, Relations\n"
	"  schema show                     print the Domain's schema\n"
	"Writes (each is one durable commit)\n"
	"  import FILE...                  import JSON Lines ('-' reads stdin)\n"
	"         [--vectors FILE.f32 --dim N] [--embed [--model FILE] | --vector-model ID]\n"
	"  put KIND KEY [--title T] [--values JSON]\n"
	"  patch KIND KEY --values JSON    merge patch of the values\n"
	"  delete KIND KEY [--cascade]\n"
	"  link REL FROM_KIND:KEY TO_KIND:KEY [--values JSON]\n"
	"  unlink REL FROM_KIND:KEY TO_KIND:KEY\n"
	"Reads\n"
	"  get KIND KEY                    a Record, with the revision and provenance of its last change\n"
	"  page KIND [--after KEY] [--limit N]   Records of a Kind in key order\n"
	"  links KIND KEY [--dir out|in|both] [--rel REL] [--limit N]\n"
	"  count [KIND]                    Records per Kind\n"
	"  query KIND [--where JSON] [--sort ATTR] [--limit N] [--after C] [--fields A,B] [--explain]\n"
	"                                  Records matching a filter (docs/query.md)\n"
	"  query KIND --count [--where JSON] [--group-by ATTR]   how many, per value\n"
	"  neighbors KIND:KEY... [--depth 1-3] [--hop DIR[:RELS[:KINDS]]]... [--fanout N] [--limit N]\n"
	"                                  the Records and Links around Records (or --dir/--rel/--kind\n"
	"                                  for every hop; --with-values for values)\n"
	"  follow KIND:KEY --hop DIR:RELS[:KINDS]...   the Records reached along a sequence of steps\n"
	"  path KIND:KEY KIND:KEY [--depth N] [--dir D] [--rel R,..] [--kind K,..]\n"
	"                                  a shortest path between two Records (exit 3 when none)\n"
	"  resolve TEXT [--kind K,..] [--limit N] [--edits 1|2] [--exact]\n"
	"                                  the Records a name most likely names, best first\n"
	"  search TEXT [--kind K,..] [--where JSON] [--limit N] [--all-words] [--no-typos]\n"
	"         [--explain]              Records with every word, best first (BM25), then some\n"
	"  search --near KIND:KEY | --vector JSON [--metric cosine|dot|l2] [--kind K,..]\n"
	"         [--where JSON] [--limit N] [--probes N] [--exact]   nearest vectors\n"
	"  search --semantic|--hybrid TEXT [--model FILE] [--kind K,..] [--where JSON] [--limit N]\n"
	"         [--fusion rrf|weighted] [--boost-near KIND:KEY,.. [--boost N]] [--rank JSON]\n"
	"                                  by meaning (the text embedded), or words and meaning\n"
	"                                  fused, each hit with its receipt\n"
	"  vindex [--lists N] [--rebuild] the vector index: build it or add newer vectors now\n"
	"  reembed [--model FILE]         every vector of the Domain anew by the model, at once\n"
	"  embed TEXT [--model FILE]      a text's vector (the built-in embedder)\n"
	"  embed --pairs FILE.tsv         its retrieval quality on paraphrase pairs\n"
	"  model convert SOURCE.json OUT.cemb [--id ID]   a model file from word vectors\n"
	"  log [--limit N]                 the revision log of the branch\n"
	"  history KIND KEY [--limit N]    a Record's Versions, newest first, with provenance and diffs\n"
	"  history REL FROM_KIND:KEY TO_KIND:KEY   the same for a Link\n"
	"  lineage KIND KEY                the revision and provenance behind each current value\n"
	"  lineage REL FROM_KIND:KEY TO_KIND:KEY   the same for a Link\n"
	"  export [--out FILE]             every Record and Link as import lines\n"
	"Server\n"
	"  serve [--listen HOST:PORT] ...  the HTTP/JSON API and MCP (cairn serve --help)\n"
	"  mcp [--writes] ...              MCP tools on stdin/stdout (cairn mcp --help)\n"
	"  token create --role reader|writer|admin [--domain D|'*'] [--branches PATTERN] [--label T]\n"
	"                                  make a token; prints its secret (shown only once)\n"
	"  token list | token revoke ID\n"
	"\n"
	"Options\n"
	"  --store DIR        store directory ($CAIRN_STORE, else ./data)\n"
	"  --domain NAME      Domain ($CAIRN_DOMAIN, else default; created by the first write)\n"
	"  --branch NAME      branch ($CAIRN_BRANCH, else main)\n"
	"  --at REV|TIME      read as of a revision number or an RFC 3339 time\n"
	"  --actor, --source, --message, --trace ID, --confidence X   provenance of a write\n"
	"  --expect REV       refuse the write unless the branch head is REV\n"
	"  --batch N          changes per commit when importing (default 10000)\n"
	"  --on-error stop|skip   what a bad import line does (default stop)\n"
	"  --json | --text    force the output format\n"
	"  --no-sync          do not fsync commits (scratch stores only)\n"
	"\n"
	"Exit codes: 0 ok, 1 failure, 2 usage, 3 not found, 4 invalid input, 5 conflict,\n"
	"6 check found problems.\n";

int cli_usage(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "cairn: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n(cairn --help for usage)\n");
	return EXIT_USAGE;
}

int cli_exit_code(int rc)
{
	switch (rc) {
	case CAIRN_OK:
		return EXIT_OK;
	case CAIRN_EINVAL:
	case CAIRN_EQUERY:
		return EXIT_USAGE;
	case CAIRN_ENOTFOUND:
	case CAIRN_ENODOMAIN:
	case CAIRN_ENOBRANCH:
	case CAIRN_ECOMPACTED:
		return EXIT_NOTFOUND;
	case CAIRN_ECONFLICT:
	case CAIRN_EMERGE:
	case CAIRN_ECLOSED:
		return EXIT_CONFLICT;
	case CAIRN_ECORRUPT:
		return EXIT_CORRUPT;
	case CAIRN_ENOMEM:
	case CAIRN_EIO:
	case CAIRN_EFORMAT:
	case CAIRN_EMAPFULL:
	case CAIRN_EREADONLY:
	case CAIRN_ELOCKED:
		return EXIT_FAIL;
	default:
		return EXIT_INVALID;
	}
}

void out_str(FILE *f, const char *s, size_t n)
{
	static const char hx[] = "0123456789abcdef";

	fputc('"', f);
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (ch == '"' || ch == '\\') {
			fputc('\\', f);
			fputc(ch, f);
		} else if (ch == '\n') {
			fputs("\\n", f);
		} else if (ch == '\t') {
			fputs("\\t", f);
		} else if (ch == '\r') {
			fputs("\\r", f);
		} else if (ch < 0x20) {
			fprintf(f, "\\u00%c%c", hx[ch >> 4], hx[ch & 15]);
		} else {
			fputc(ch, f);
		}
	}
	fputc('"', f);
}

void out_header(FILE *f, const cairn_record *r)
{
	fputs("{\"kind\":", f);
	out_str(f, r->kind, strlen(r->kind));
	fputs(",\"key\":", f);
	out_str(f, r->key, r->key_len);
	fputs(",\"title\":", f);
	out_str(f, r->title, r->title_len);
}

void out_endpoint(FILE *f, const char *kind, const char *key, size_t key_len)
{
	size_t kn = strlen(kind);
	char *b = malloc(kn + 1 + key_len);

	if (!b) {
		fputs("null", f);
		return;
	}
	memcpy(b, kind, kn);
	b[kn] = ':';
	memcpy(b + kn + 1, key, key_len);
	out_str(f, b, kn + 1 + key_len);
	free(b);
}

void out_hash(FILE *f, const uint8_t h[32])
{
	for (int i = 0; i < 32; i++)
		fprintf(f, "%02x", h[i]);
}

void out_time(FILE *f, int64_t ms)
{
	time_t s = (time_t)(ms / 1000);
	struct tm tm;
	char b[32];

	gmtime_r(&s, &tm);
	strftime(b, sizeof(b), "%Y-%m-%dT%H:%M:%S", &tm);
	fprintf(f, "%s.%03dZ", b, (int)(ms % 1000));
}

int cli_fail(cli *c, int rc, const char *what)
{
	const char *msg = cairn_errmsg();

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

/* ---------------------------------------------------------- commands -- */

static int cmd_init(cli *c)
{
	cairn_store *st;
	int rc;

	if (c->nargs > 1)
		return cli_usage("init takes at most one directory");
	if (c->nargs == 1)
		c->store = c->args[0];
	if ((rc = cli_open(c, 1, &st)))
		return rc;
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

static int cmd_domain(cli *c)
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
		printf("\",\"changes\":%llu}\n", (unsigned long long)r->changes);
	} else {
		printf("committed revision %llu (%llu change%s)\n", (unsigned long long)r->revision,
		       (unsigned long long)r->changes, r->changes == 1 ? "" : "s");
	}
}

static int cmd_schema(cli *c)
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
		cli_commit_options(c, &co);
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
			rc = cairn_read_begin(st, &ro, &t);
			if (!rc)
				rc = cairn_schema_get(t, &json, &len);
			if (rc)
				ex = cli_fail(c, rc, "schema");
			else
				printf("%.*s\n", (int)len, json);
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

static void on_progress(void *ctx, const cairn_import_stats *s)
{
	struct progress *p = ctx;
	double t = elapsed(&p->t0), rate = t > 0 ? (double)(s->records + s->links) / t : 0;

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

static int cmd_import(cli *c)
{
	cairn_import_options io;
	cairn_import_stats stats;
	cairn_import *im;
	cairn_store *st;
	struct progress pr = {0};
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
	cli_commit_options(c, &io.commit);
	if (!io.commit.prov.source)
		io.commit.prov.source = c->args[0];
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
	if (c->tty_err)
		fprintf(stderr, "\n");
	if (rc) {
		ex = cli_fail(c, rc, "import");
	} else {
		double t = elapsed(&pr.t0);

		if (c->json)
			printf("{\"lines\":%llu,\"records\":%llu,\"links\":%llu,\"skipped\":%llu,"
			       "\"commits\":%llu,\"seconds\":%.3f}\n",
			       (unsigned long long)stats.lines, (unsigned long long)stats.records,
			       (unsigned long long)stats.links, (unsigned long long)stats.skipped,
			       (unsigned long long)stats.commits, t);
		else
			printf("imported %llu Records and %llu Links in %llu commits (%.1f s, %.0f "
			       "per second)%s\n",
			       (unsigned long long)stats.records, (unsigned long long)stats.links,
			       (unsigned long long)stats.commits, t,
			       t > 0 ? (double)(stats.records + stats.links) / t : 0.0,
			       stats.skipped ? ", some lines skipped" : "");
		if (stats.skipped && !c->json)
			printf("skipped %llu bad lines\n", (unsigned long long)stats.skipped);
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

static int cmd_write(cli *c, const char *cmd)
{
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
			rc = cairn_cs_put(cs, c->args[0], c->args[1], strlen(c->args[1]),
					  c->title ? c->title : "", c->title ? strlen(c->title) : 0,
					  c->values, c->values ? strlen(c->values) : 0);
		else if (strcmp(cmd, "patch") == 0)
			rc = c->values ? cairn_cs_patch(cs, c->args[0], c->args[1], strlen(c->args[1]),
							c->values, strlen(c->values))
				       : CAIRN_EINVAL;
		else
			rc = cairn_cs_delete(cs, c->args[0], c->args[1], strlen(c->args[1]),
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
			rc = cairn_cs_link(cs, c->args[0], fk, fkey, strlen(fkey), tk, tkey,
					   strlen(tkey), c->values, c->values ? strlen(c->values) : 0);
		else
			rc = cairn_cs_unlink(cs, c->args[0], fk, fkey, strlen(fkey), tk, tkey,
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
	cli_commit_options(c, &co);
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
	rc = cairn_read_begin(*st, &ro, t);
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

static int cmd_get(cli *c)
{
	cairn_store *st;
	cairn_txn *t;
	cairn_record r;
	int rc, ex;

	if (c->nargs != 2)
		return cli_usage("get KIND KEY");
	if ((ex = begin_read(c, &st, &t)))
		return ex;
	rc = cairn_get(t, c->args[0], c->args[1], strlen(c->args[1]), &r);
	if (rc)
		ex = cli_fail(c, rc, "get");
	else
		print_record(c, t, &r, 1);
	end_read(st, t);
	return ex;
}

static int cmd_page(cli *c)
{
	cairn_record *recs;
	cairn_store *st;
	cairn_txn *t;
	size_t n, limit = c->limit > 0 ? (size_t)c->limit : 50;
	int rc, ex;

	if (c->nargs != 1)
		return cli_usage("page KIND [--after KEY] [--limit N]");
	if (limit > CAIRN_MAX_PAGE)
		return cli_usage("--limit is at most %d", CAIRN_MAX_PAGE);
	if ((ex = begin_read(c, &st, &t)))
		return ex;
	recs = calloc(limit, sizeof(*recs));
	rc = recs ? cairn_page(t, c->args[0], c->after, c->after ? strlen(c->after) : 0, recs,
			       limit, &n)
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

static int cmd_links(cli *c)
{
	cairn_link *links;
	cairn_link_cursor cur;
	cairn_store *st;
	cairn_txn *t;
	size_t n, limit = c->limit > 0 ? (size_t)c->limit : 100;
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
				printf("{\"rel\":");
				out_str(stdout, l->rel, strlen(l->rel));
				printf(",\"from\":");
				out_endpoint(stdout, l->from_kind, l->from_key, l->from_key_len);
				printf(",\"to\":");
				out_endpoint(stdout, l->to_kind, l->to_key, l->to_key_len);
				printf(",\"values\":%.*s,\"revision\":%llu}\n", (int)l->values_len,
				       l->values, (unsigned long long)l->revision);
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

static int cmd_count(cli *c)
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

static int cmd_log(cli *c)
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

static int cmd_export(cli *c)
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

static int cmd_check(cli *c)
{
	cairn_check_report rep;
	cairn_store *st;
	int rc, ex;

	if (c->nargs)
		return cli_usage("check");
	if ((ex = cli_open(c, 0, &st)))
		return ex;
	rc = cairn_check(st, c->domain, on_problem, c, &rep);
	if (rc && rc != CAIRN_ECORRUPT) {
		ex = cli_fail(c, rc, "check");
	} else {
		if (c->json)
			printf("{\"ok\":%s,\"revisions\":%llu,\"versions\":%llu,\"index_entries\":"
			       "%llu,\"problems\":%llu}\n",
			       rc ? "false" : "true", (unsigned long long)rep.revisions,
			       (unsigned long long)rep.versions,
			       (unsigned long long)rep.index_entries,
			       (unsigned long long)rep.problems);
		else
			printf("%s: %llu revisions, %llu Versions, %llu index entries verified, %llu "
			       "problem%s\n",
			       rc ? "FAILED" : "ok", (unsigned long long)rep.revisions,
			       (unsigned long long)rep.versions,
			       (unsigned long long)rep.index_entries,
			       (unsigned long long)rep.problems, rep.problems == 1 ? "" : "s");
		ex = rc ? EXIT_CORRUPT : 0;
	}
	cairn_close(st);
	return ex;
}

static int cmd_stats(cli *c)
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

static int cmd_history(cli *c)
{
	static const char *const what[] = {"?", "created", "updated", "deleted"};
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
			printf(",\"values\":%.*s,\"diff\":%.*s}\n", (int)h[i].values_len, h[i].values,
			       (int)h[i].diff_len, h[i].diff);
		} else {
			printf("%-8s ", what[h[i].change]);
			out_prov(c, &h[i].rev);
			printf("\n");
			if (h[i].title_len != h[i].title_before_len ||
			    memcmp(h[i].title, h[i].title_before, h[i].title_len) != 0)
				printf("         title: \"%.*s\" -> \"%.*s\"\n", (int)h[i].title_before_len,
				       h[i].title_before, (int)h[i].title_len, h[i].title);
			if (h[i].diff_len > 2)
				printf("         %.*s\n", (int)h[i].diff_len, h[i].diff);
		}
	}
	if (!rc && !c->json && !cur.done)
		printf("(more: raise --limit)\n");
	free(h);
	end_read(st, t);
	return ex;
}

static int cmd_lineage(cli *c)
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

static int cmd_branch(cli *c)
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

static int cmd_maintain(cli *c)
{
	cairn_open_options o = {CAIRN_OPEN_NO_BACKGROUND, 0, 0, 0};
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

static int cmd_compact(cli *c)
{
	cairn_compact_options o = {0, 0, 0};
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

		gio_compact(&b, &r);
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

/* ------------------------------------------------------------- main -- */

enum {
	OPT_STORE = 256, OPT_DOMAIN, OPT_BRANCH, OPT_AT, OPT_ACTOR, OPT_SOURCE, OPT_MESSAGE,
	OPT_TRACE, OPT_CONFIDENCE, OPT_JSON, OPT_TEXT, OPT_LIMIT, OPT_AFTER, OPT_DIR, OPT_REL,
	OPT_ONERROR, OPT_BATCH, OPT_TITLE, OPT_VALUES, OPT_CASCADE, OPT_EXPECT, OPT_OUT,
	OPT_NOSYNC, OPT_HELP, OPT_FROM,
	OPT_RESOLVE, OPT_RESOLUTIONS, OPT_DRYRUN, OPT_VERDICT, OPT_STATUS, OPT_INTO, OPT_ROLE,
	OPT_BRANCHES, OPT_LABEL, OPT_WHERE, OPT_SORT, OPT_FIELDS, OPT_GROUPBY, OPT_EXPLAIN,
	OPT_COUNT, OPT_KIND, OPT_HOP, OPT_DEPTH, OPT_FANOUT, OPT_WITHVALUES, OPT_EDITS, OPT_EXACT, OPT_ALLWORDS, OPT_NOTYPOS, OPT_MODEL, OPT_MODEL_ID, OPT_PAIRS, OPT_NEAR, OPT_VECTOR, OPT_METRIC,
	OPT_PROBES, OPT_LISTS, OPT_REBUILD, OPT_VECFILE, OPT_DIM,
	OPT_SEMANTIC, OPT_HYBRID, OPT_RANK, OPT_FUSION, OPT_BOOSTNEAR, OPT_BOOST, OPT_EMBED,
	OPT_VMODEL, OPT_RETAIN, OPT_HORIZON,
};

static long parse_long(const char *s, const char *opt, int *bad)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (!*s || *end || errno || v < 0) {
		*bad = cli_usage("%s takes a non-negative integer, not %s", opt, s);
		return -1;
	}
	return v;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"store", required_argument, 0, OPT_STORE},
		{"domain", required_argument, 0, OPT_DOMAIN},
		{"branch", required_argument, 0, OPT_BRANCH},
		{"at", required_argument, 0, OPT_AT},
		{"actor", required_argument, 0, OPT_ACTOR},
		{"source", required_argument, 0, OPT_SOURCE},
		{"message", required_argument, 0, OPT_MESSAGE},
		{"trace", required_argument, 0, OPT_TRACE},
		{"confidence", required_argument, 0, OPT_CONFIDENCE},
		{"json", no_argument, 0, OPT_JSON},
		{"text", no_argument, 0, OPT_TEXT},
		{"limit", required_argument, 0, OPT_LIMIT},
		{"after", required_argument, 0, OPT_AFTER},
		{"dir", required_argument, 0, OPT_DIR},
		{"rel", required_argument, 0, OPT_REL},
		{"on-error", required_argument, 0, OPT_ONERROR},
		{"batch", required_argument, 0, OPT_BATCH},
		{"title", required_argument, 0, OPT_TITLE},
		{"values", required_argument, 0, OPT_VALUES},
		{"cascade", no_argument, 0, OPT_CASCADE},
		{"expect", required_argument, 0, OPT_EXPECT},
		{"out", required_argument, 0, OPT_OUT},
		{"no-sync", no_argument, 0, OPT_NOSYNC},
		{"from", required_argument, 0, OPT_FROM},
		{"resolve", required_argument, 0, OPT_RESOLVE},
		{"resolutions", required_argument, 0, OPT_RESOLUTIONS},
		{"dry-run", no_argument, 0, OPT_DRYRUN},
		{"verdict", required_argument, 0, OPT_VERDICT},
		{"status", required_argument, 0, OPT_STATUS},
		{"into", required_argument, 0, OPT_INTO},
		{"role", required_argument, 0, OPT_ROLE},
		{"branches", required_argument, 0, OPT_BRANCHES},
		{"label", required_argument, 0, OPT_LABEL},
		{"where", required_argument, 0, OPT_WHERE},
		{"sort", required_argument, 0, OPT_SORT},
		{"fields", required_argument, 0, OPT_FIELDS},
		{"group-by", required_argument, 0, OPT_GROUPBY},
		{"explain", no_argument, 0, OPT_EXPLAIN},
		{"count", no_argument, 0, OPT_COUNT},
		{"kind", required_argument, 0, OPT_KIND},
		{"hop", required_argument, 0, OPT_HOP},
		{"depth", required_argument, 0, OPT_DEPTH},
		{"fanout", required_argument, 0, OPT_FANOUT},
		{"with-values", no_argument, 0, OPT_WITHVALUES},
		{"edits", required_argument, 0, OPT_EDITS},
		{"exact", no_argument, 0, OPT_EXACT},
		{"all-words", no_argument, 0, OPT_ALLWORDS},
		{"no-typos", no_argument, 0, OPT_NOTYPOS},
		{"model", required_argument, 0, OPT_MODEL},
		{"id", required_argument, 0, OPT_MODEL_ID},
		{"pairs", required_argument, 0, OPT_PAIRS},
		{"near", required_argument, 0, OPT_NEAR},
		{"vector", required_argument, 0, OPT_VECTOR},
		{"metric", required_argument, 0, OPT_METRIC},
		{"probes", required_argument, 0, OPT_PROBES},
		{"lists", required_argument, 0, OPT_LISTS},
		{"rebuild", no_argument, 0, OPT_REBUILD},
		{"retain", required_argument, 0, OPT_RETAIN},
		{"horizon", required_argument, 0, OPT_HORIZON},
		{"vectors", required_argument, 0, OPT_VECFILE}, /* import --vectors FILE.f32 */
		{"dim", required_argument, 0, OPT_DIM},
		{"semantic", no_argument, 0, OPT_SEMANTIC},
		{"hybrid", no_argument, 0, OPT_HYBRID},
		{"rank", required_argument, 0, OPT_RANK},
		{"fusion", required_argument, 0, OPT_FUSION},
		{"boost-near", required_argument, 0, OPT_BOOSTNEAR},
		{"boost", required_argument, 0, OPT_BOOST},
		{"embed", no_argument, 0, OPT_EMBED},
		{"vector-model", required_argument, 0, OPT_VMODEL},
		{"help", no_argument, 0, OPT_HELP},
		{0, 0, 0, 0},
	};
	cli c;
	const char *cmd;
	int o, bad = 0;

	memset(&c, 0, sizeof(c));
	c.store = getenv("CAIRN_STORE") && *getenv("CAIRN_STORE") ? getenv("CAIRN_STORE") : "./data";
	c.domain = getenv("CAIRN_DOMAIN") && *getenv("CAIRN_DOMAIN") ? getenv("CAIRN_DOMAIN")
								     : "default";
	c.branch = getenv("CAIRN_BRANCH") && *getenv("CAIRN_BRANCH") ? getenv("CAIRN_BRANCH") : NULL;
	c.json = !isatty(STDOUT_FILENO);
	c.tty_err = isatty(STDERR_FILENO);
	c.limit = -1;
	c.expect = -1;
	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		fputs(usage_text, argc < 2 ? stderr : stdout);
		return argc < 2 ? EXIT_USAGE : 0;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
		printf("cairn %s\n", CAIRN_VERSION_STRING);
		return 0;
	}
	cmd = argv[1];
	if (strcmp(cmd, "serve") == 0) /* its own flags */
		return cmd_serve(&c, argc - 2, argv + 2);
	if (strcmp(cmd, "mcp") == 0)
		return cmd_mcp(&c, argc - 2, argv + 2);
	argv++;
	argc--;
	optind = 1;
	while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1 && !bad) {
		switch (o) {
		case OPT_STORE: c.store = optarg; break;
		case OPT_DOMAIN: c.domain = optarg; break;
		case OPT_BRANCH: c.branch = optarg; break;
		case OPT_AT: c.at = optarg; break;
		case OPT_ACTOR: c.prov.actor = optarg; break;
		case OPT_SOURCE: c.prov.source = optarg; break;
		case OPT_MESSAGE: c.prov.message = optarg; break;
		case OPT_TRACE: c.prov.trace_id = optarg; break;
		case OPT_CONFIDENCE: {
			char *end;

			c.prov.confidence = strtod(optarg, &end);
			c.prov.has_confidence = 1;
			if (*end || !*optarg || !(c.prov.confidence >= 0 && c.prov.confidence <= 1))
				bad = cli_usage("--confidence takes a number from 0 to 1");
			break;
		}
		case OPT_JSON: c.json = 1; break;
		case OPT_TEXT: c.json = 0; break;
		case OPT_LIMIT: c.limit = parse_long(optarg, "--limit", &bad); break;
		case OPT_AFTER: c.after = optarg; break;
		case OPT_DIR: c.dir = optarg; break;
		case OPT_REL: c.rel = optarg; break;
		case OPT_ONERROR: c.on_error = optarg; break;
		case OPT_BATCH: c.batch = parse_long(optarg, "--batch", &bad); break;
		case OPT_TITLE: c.title = optarg; break;
		case OPT_VALUES: c.values = optarg; break;
		case OPT_CASCADE: c.cascade = 1; break;
		case OPT_EXPECT: c.expect = parse_long(optarg, "--expect", &bad); break;
		case OPT_OUT: c.out = optarg; break;
		case OPT_NOSYNC: c.nosync = 1; break;
		case OPT_FROM: c.from = optarg; break;
		case OPT_RESOLVE: c.resolve = optarg; break;
		case OPT_RESOLUTIONS: c.resolutions = optarg; break;
		case OPT_DRYRUN: c.dry_run = 1; break;
		case OPT_VERDICT: c.verdict = optarg; break;
		case OPT_STATUS: c.status = optarg; break;
		case OPT_INTO: c.into = optarg; break;
		case OPT_ROLE: c.role = optarg; break;
		case OPT_BRANCHES: c.branches = optarg; break;
		case OPT_LABEL: c.label = optarg; break;
		case OPT_WHERE: c.where = optarg; break;
		case OPT_SORT: c.sort = optarg; break;
		case OPT_FIELDS: c.fields = optarg; break;
		case OPT_GROUPBY: c.group_by = optarg; break;
		case OPT_EXPLAIN: c.explain = 1; break;
		case OPT_COUNT: c.count = 1; break;
		case OPT_KIND: c.kind = optarg; break;
		case OPT_HOP:
			if (c.n_hops == (int)(sizeof(c.hops) / sizeof(c.hops[0])))
				bad = cli_usage("at most %d --hop", c.n_hops);
			else
				c.hops[c.n_hops++] = optarg;
			break;
		case OPT_DEPTH: c.depth = parse_long(optarg, "--depth", &bad); break;
		case OPT_FANOUT: c.fanout = parse_long(optarg, "--fanout", &bad); break;
		case OPT_WITHVALUES: c.with_values = 1; break;
		case OPT_EDITS: c.edits = parse_long(optarg, "--edits", &bad); break;
		case OPT_EXACT: c.exact = 1; break;
		case OPT_ALLWORDS: c.all_words = 1; break;
		case OPT_NOTYPOS: c.no_typos = 1; break;
		case OPT_MODEL: c.model = optarg; break;
		case OPT_MODEL_ID: c.model_id = optarg; break;
		case OPT_PAIRS: c.pairs = optarg; break;
		case OPT_NEAR: c.near = optarg; break;
		case OPT_VECTOR: c.vector = optarg; break;
		case OPT_METRIC: c.metric = optarg; break;
		case OPT_PROBES: c.probes = parse_long(optarg, "--probes", &bad); break;
		case OPT_LISTS: c.lists = parse_long(optarg, "--lists", &bad); break;
		case OPT_REBUILD: c.rebuild = 1; break;
		case OPT_RETAIN: c.retain = optarg; break;
		case OPT_HORIZON: c.horizon = optarg; break;
		case OPT_VECFILE: c.vectors_file = optarg; break;
		case OPT_DIM: c.dim = parse_long(optarg, "--dim", &bad); break;
		case OPT_EMBED: c.embed = 1; break;
		case OPT_VMODEL: c.vector_model = optarg; break;
		case OPT_SEMANTIC: c.semantic = 1; break;
		case OPT_HYBRID: c.hybrid = 1; break;
		case OPT_RANK: c.rank = optarg; break;
		case OPT_FUSION: c.fusion = optarg; break;
		case OPT_BOOSTNEAR: c.boost_near = optarg; break;
		case OPT_BOOST: {
			char *end;

			c.boost = strtod(optarg, &end);
			if (!*optarg || *end || !(c.boost >= 0) || c.boost > 1e6)
				bad = cli_usage("--boost is a number from 0 to 1000000");
			break;
		}
		case OPT_HELP:
		case 'h': fputs(usage_text, stdout); return 0;
		default: return EXIT_USAGE;
		}
	}
	if (bad)
		return bad;
	c.args = argv + optind;
	c.nargs = argc - optind;
	/* --embed: the model that embeds what this command writes (closed at exit). */
	if (c.embed) {
		cairn_embedder *emb;
		int rc;

		if (c.vector_model)
			return cli_usage("--embed names its model: no --vector-model with it");
		if ((rc = cairn_embedder_open(cli_model_path(&c), &emb)))
			return cli_fail(&c, rc, "embed");
		c.emb = emb;
		atexit(close_embedder);
		embedder_to_close = emb;
	}

	if (strcmp(cmd, "init") == 0)
		return cmd_init(&c);
	if (strcmp(cmd, "domain") == 0)
		return cmd_domain(&c);
	if (strcmp(cmd, "schema") == 0)
		return cmd_schema(&c);
	if (strcmp(cmd, "import") == 0)
		return cmd_import(&c);
	if (strcmp(cmd, "put") == 0 || strcmp(cmd, "patch") == 0 || strcmp(cmd, "delete") == 0 ||
	    strcmp(cmd, "link") == 0 || strcmp(cmd, "unlink") == 0)
		return cmd_write(&c, cmd);
	if (strcmp(cmd, "get") == 0)
		return cmd_get(&c);
	if (strcmp(cmd, "page") == 0)
		return cmd_page(&c);
	if (strcmp(cmd, "links") == 0)
		return cmd_links(&c);
	if (strcmp(cmd, "count") == 0)
		return cmd_count(&c);
	if (strcmp(cmd, "log") == 0)
		return cmd_log(&c);
	if (strcmp(cmd, "export") == 0)
		return cmd_export(&c);
	if (strcmp(cmd, "check") == 0)
		return cmd_check(&c);
	if (strcmp(cmd, "stats") == 0)
		return cmd_stats(&c);
	if (strcmp(cmd, "branch") == 0)
		return cmd_branch(&c);
	if (strcmp(cmd, "history") == 0)
		return cmd_history(&c);
	if (strcmp(cmd, "lineage") == 0)
		return cmd_lineage(&c);
	if (strcmp(cmd, "compact") == 0)
		return cmd_compact(&c);
	if (strcmp(cmd, "maintain") == 0)
		return cmd_maintain(&c);
	if (strcmp(cmd, "token") == 0)
		return cmd_token(&c);
	if (strcmp(cmd, "query") == 0)
		return cmd_query(&c);
	if (strcmp(cmd, "neighbors") == 0)
		return cmd_neighbors(&c);
	if (strcmp(cmd, "follow") == 0)
		return cmd_follow(&c);
	if (strcmp(cmd, "path") == 0)
		return cmd_path(&c);
	if (strcmp(cmd, "resolve") == 0)
		return cmd_resolve(&c);
	if (strcmp(cmd, "search") == 0)
		return cmd_search(&c);
	if (strcmp(cmd, "model") == 0)
		return cmd_model(&c);
	if (strcmp(cmd, "embed") == 0)
		return cmd_embed(&c);
	if (strcmp(cmd, "vindex") == 0)
		return cmd_vindex(&c);
	if (strcmp(cmd, "reembed") == 0)
		return cmd_reembed(&c);
	if (strcmp(cmd, "diff") == 0)
		return cmd_diff(&c);
	if (strcmp(cmd, "changes") == 0)
		return cmd_changes(&c);
	if (strcmp(cmd, "merge") == 0)
		return cmd_merge(&c);
	if (strcmp(cmd, "propose") == 0)
		return cmd_propose(&c);
	if (strcmp(cmd, "proposal") == 0)
		return cmd_proposal(&c);
	return cli_usage("unknown command \"%s\"", cmd);
}
