/* cairn-bench: the workload generator and the benchmark, with its peers (docs/performance.md). */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/bench.h"
#include "bench/gen.h"

/* Exit codes, as the cairn command's (docs/cli.md). */
enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

static const char bench_usage[] =
	"usage: cairn-bench [--size N] [--seed S] [--out FILE] [--keep DIR [reuse]] [--peers]\n"
	"       cairn-bench --vectors [--size N] [--seed S] [--out FILE] [--keep DIR [reuse]]\n"
	"                   [--peers [--npm DIR]]\n"
	"       cairn-bench --memory [--size N] [--seed S] [--out FILE] [--keep DIR [reuse]]\n"
	"       cairn-bench locomo [--model FILE | --model none] [--out FILE] [--keep DIR] FILE...\n"
	"       cairn-bench gen [--size N] [--seed S] [--vectors | --vectors-f32]\n"
	"                   [--json | --text] --out DIR\n"
	"\n"
	"Runs the benchmark and prints its Markdown report (docs/performance.md).\n"
	"  --size N         Records of the dataset, 10000 to 10000000 (default 100000; 1e6)\n"
	"  --seed S         the generator's seed (default 42)\n"
	"  --out FILE       also write the report into FILE (its block of that size)\n"
	"  --keep DIR       work in DIR and keep it; with reuse, time the store already there\n"
	"  --peers          run SQLite and PostgreSQL beside Cairn on the same data and calls\n"
	"  --vectors        the vector benchmark instead\n"
	"  --memory         the memory benchmark instead: remember and digest\n"
	"  --npm DIR        with --vectors --peers: usearch from DIR/node_modules\n"
	"gen writes the supply workload into DIR (cairn-bench gen --help); locomo measures\n"
	"recall on conversations in the LoCoMo format (cairn-bench locomo --help).\n";

static const char locomo_usage[] =
	"usage: cairn-bench locomo [--model FILE | --model none] [--out FILE] [--keep DIR] FILE...\n"
	"\n"
	"Loads each conversation (LoCoMo's JSON: speaker_a, speaker_b, session_N,\n"
	"session_N_date_time, qa) into a Domain of its own, searches every question of\n"
	"categories 1 to 4 by words, meaning, hybrid and recall, and SQLite FTS5 beside\n"
	"them, and prints recall@5, recall@10, hit@10 and the latency per question.\n"
	"  --model FILE     the embedder (default models/glove-6b-100d.cemb, or\n"
	"                   $CAIRN_MODEL); none: by words alone\n"
	"  --out FILE       also write the report into FILE (its block \"locomo\")\n"
	"  --keep DIR       build the stores in DIR and keep them\n";

static const char gen_usage[] =
	"usage: cairn-bench gen [--size N] [--seed S] [--vectors | --vectors-f32]\n"
	"                       [--json | --text] --out DIR\n"
	"\n"
	"Writes the supply workload into DIR: schema.json, records.jsonl, links.jsonl, q_*.txt.\n"
	"  --size N         Records, 10000 to 10000000 (default 100000; 1e6 works)\n"
	"  --seed S         the generator's seed (default 42): the same size and seed,\n"
	"                   the same files\n"
	"  --vectors        a 384-dimension vector in every Record line\n"
	"  --vectors-f32    the vectors in vectors.f32 instead (float32 rows, for\n"
	"                   cairn import --vectors)\n"
	"  --out DIR        the directory (created if missing)\n"
	"  --json, --text   the summary's format (default: JSON unless stdout is a terminal)\n";

static int usage_error(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n(%s --help for usage)\n", cmd);
	return EXIT_USAGE;
}

/* What getopt_long refused (opterr is 0, the option string starts with ':'). */
static int bad_option(const char *cmd, int opt, char **argv)
{
	if (opt == ':')
		return usage_error(cmd, "%s takes a value", argv[optind - 1]);
	return usage_error(cmd, "unknown option %s", argv[optind - 1]);
}

/* A whole number, 1e6 included; 0, or an exit code after saying why. */
static int number(const char *cmd, const char *opt, const char *s, uint64_t *v)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(s, &end);
	if (!*s || *end || errno || d < 0 || d != (double)(uint64_t)d)
		return usage_error(cmd, "%s takes a whole number, not %s", opt, s);
	*v = (uint64_t)d;
	return 0;
}

static int check_size(const char *cmd, uint64_t records)
{
	if (records >= GEN_MIN_RECORDS && records <= GEN_MAX_RECORDS)
		return 0;
	return usage_error(cmd, "--size is %llu to %llu", GEN_MIN_RECORDS, GEN_MAX_RECORDS);
}

/* s as a JSON string, escaped as the cairn command writes strings. */
static void json_str(FILE *f, const char *s)
{
	for (fputc('"', f); *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch == '\n')
			fputs("\\n", f);
		else if (ch == '\t')
			fputs("\\t", f);
		else if (ch == '\r')
			fputs("\\r", f);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

static void progress(void *ctx, uint64_t done, uint64_t total)
{
	(void)ctx;
	if (isatty(STDERR_FILENO))
		fprintf(stderr, "\r  %llu / %llu Records", (unsigned long long)done,
			(unsigned long long)total);
}

static void gen_summary(const gen_stats *s, const char *dir, int json)
{
	if (json) {
		printf("{\"dir\":");
		json_str(stdout, dir);
		printf(",\"records\":%llu,\"links\":%llu,\"vocabulary\":%u}\n",
		       (unsigned long long)s->records, (unsigned long long)s->links, s->vocab);
	} else {
		printf("wrote %llu Records and %llu Links to %s\n", (unsigned long long)s->records,
		       (unsigned long long)s->links, dir);
	}
}

enum { OPT_SIZE = 256, OPT_SEED, OPT_OUT, OPT_KEEP, OPT_VECTORS, OPT_VECF32, OPT_NPM, OPT_PEERS,
       OPT_JSON, OPT_TEXT, OPT_HELP, OPT_MEMORY, OPT_MODEL };

static int gen_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"size", required_argument, 0, OPT_SIZE}, {"seed", required_argument, 0, OPT_SEED},
		{"out", required_argument, 0, OPT_OUT}, {"vectors", no_argument, 0, OPT_VECTORS},
		{"vectors-f32", no_argument, 0, OPT_VECF32}, {"json", no_argument, 0, OPT_JSON},
		{"text", no_argument, 0, OPT_TEXT}, {"help", no_argument, 0, OPT_HELP},
		{0, 0, 0, 0},
	};
	const char *cmd = "cairn-bench gen";
	gen_options o = {.records = 100000, .seed = 42, .progress = progress};
	gen_stats s;
	int opt, rc = 0, json = !isatty(STDOUT_FILENO);

	while (!rc && (opt = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (opt) {
		case OPT_SIZE: rc = number(cmd, "--size", optarg, &o.records); break;
		case OPT_SEED: rc = number(cmd, "--seed", optarg, &o.seed); break;
		case OPT_OUT: o.dir = optarg; break;
		case OPT_VECTORS: o.vectors = 1; break;
		case OPT_VECF32: o.vectors = GEN_VECTORS_F32; break;
		case OPT_JSON: json = 1; break;
		case OPT_TEXT: json = 0; break;
		case OPT_HELP:
		case 'h': fputs(gen_usage, stdout); return EXIT_OK;
		default: return bad_option(cmd, opt, argv);
		}
	}
	if (rc || (rc = check_size(cmd, o.records)))
		return rc;
	if (optind < argc)
		return usage_error(cmd, "unexpected argument %s", argv[optind]);
	if (!o.dir)
		return usage_error(cmd, "--out DIR is required");
	o.stats = &s;
	if (gen_run(&o))
		return EXIT_FAIL;
	if (isatty(STDERR_FILENO))
		fprintf(stderr, "\n");
	gen_summary(&s, o.dir, json);
	return EXIT_OK;
}

/* --keep DIR: work there and keep it; the argument reuse times the store already in it. */
static int keep_option(bench_options *o, int argc, char **argv)
{
	if (optind == argc)
		return 0;
	if (optind + 1 < argc || strcmp(argv[optind], "reuse") != 0 || !o->keep)
		return usage_error("cairn-bench", "unexpected argument %s", argv[optind]);
	o->reuse = access(o->work, F_OK) == 0;
	return 0;
}

static int bench_parse(bench_options *o, int argc, char **argv)
{
	static const struct option opts[] = {
		{"size", required_argument, 0, OPT_SIZE}, {"seed", required_argument, 0, OPT_SEED},
		{"out", required_argument, 0, OPT_OUT}, {"keep", required_argument, 0, OPT_KEEP},
		{"vectors", no_argument, 0, OPT_VECTORS}, {"npm", required_argument, 0, OPT_NPM},
		{"peers", no_argument, 0, OPT_PEERS}, {"help", no_argument, 0, OPT_HELP},
		{"memory", no_argument, 0, OPT_MEMORY}, {0, 0, 0, 0},
	};
	const char *cmd = "cairn-bench";
	int opt, rc = 0;

	while (!rc && (opt = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (opt) {
		case OPT_SIZE: rc = number(cmd, "--size", optarg, &o->records); break;
		case OPT_SEED: rc = number(cmd, "--seed", optarg, &o->seed); break;
		case OPT_OUT: o->out = optarg; break;
		case OPT_KEEP: o->work = optarg; o->keep = 1; break;
		case OPT_VECTORS: o->vectors = 1; break;
		case OPT_NPM: o->npm = optarg; break;
		case OPT_PEERS: o->n_peers = 2; break;
		case OPT_MEMORY: o->memory = 1; break;
		case OPT_HELP:
		case 'h': fputs(bench_usage, stdout); return -1;
		default: return bad_option(cmd, opt, argv);
		}
	}
	if (rc || (rc = check_size(cmd, o->records)))
		return rc;
	return keep_option(o, argc, argv);
}

static int bench_main(int argc, char **argv)
{
	bench_options o = {.records = 100000, .seed = 42, .warmup = 30, .calls = 300};
	char work[256];
	int rc = bench_parse(&o, argc, argv);

	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	if (o.n_peers) {
		o.peers[0] = peer_sqlite_open;
		o.peers[1] = peer_pg_open;
	} else {
		o.npm = NULL; /* usearch runs with the other peers */
	}
	if (!o.work) {
		snprintf(work, sizeof(work), "%s/cairn-bench-%d",
			 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
		o.work = work;
	}
	if (o.vectors)
		return bench_vectors(&o) ? EXIT_FAIL : EXIT_OK;
	if (o.memory)
		return bench_memory(&o) ? EXIT_FAIL : EXIT_OK;
	return bench_run(&o) ? EXIT_FAIL : EXIT_OK;
}

static int locomo_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"model", required_argument, 0, OPT_MODEL}, {"out", required_argument, 0, OPT_OUT},
		{"keep", required_argument, 0, OPT_KEEP},   {"help", no_argument, 0, OPT_HELP},
		{0, 0, 0, 0},
	};
	const char *cmd = "cairn-bench locomo", *env = getenv("CAIRN_MODEL");
	bench_options o = {.model = env && *env ? env : "models/glove-6b-100d.cemb"};
	char work[256];
	int opt;

	while ((opt = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (opt) {
		case OPT_MODEL: o.model = optarg; break;
		case OPT_OUT: o.out = optarg; break;
		case OPT_KEEP: o.work = optarg; o.keep = 1; break;
		case OPT_HELP:
		case 'h': fputs(locomo_usage, stdout); return EXIT_OK;
		default: return bad_option(cmd, opt, argv);
		}
	}
	if (optind == argc)
		return usage_error(cmd, "give the conversations' files (LoCoMo's JSON)");
	if (strcmp(o.model, "none") == 0)
		o.model = NULL;
	else if (access(o.model, R_OK) != 0)
		return usage_error(cmd, "no model at %s: make model builds it, or --model none", o.model);
	if (!o.work) {
		snprintf(work, sizeof(work), "%s/cairn-bench-%d",
			 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
		o.work = work;
	}
	return bench_locomo(&o, argv + optind, argc - optind) ? EXIT_FAIL : EXIT_OK;
}

int main(int argc, char **argv)
{
	opterr = 0; /* bad_option says what was wrong */
	if (argc > 1 && strcmp(argv[1], "gen") == 0)
		return gen_main(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "locomo") == 0)
		return locomo_main(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "help") == 0) {
		fputs(argc > 2 && strcmp(argv[2], "gen") == 0	    ? gen_usage
		      : argc > 2 && strcmp(argv[2], "locomo") == 0 ? locomo_usage
								    : bench_usage,
		      stdout);
		return EXIT_OK;
	}
	return bench_main(argc, argv);
}
