/* cairn gen and cairn bench: the benchmark workload of bench/, behind the command line. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/bench.h"
#include "bench/gen.h"
#include "cli/cli.h"

extern char *cli_size, *cli_seed, *cli_work;
extern int cli_vectors, cli_keep;

static int number(const char *s, const char *opt, uint64_t *v)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(s, &end); /* accepts 1e6 */
	if (!*s || *end || errno || d < 0 || d != (double)(uint64_t)d)
		return cli_usage("%s takes a whole number, not %s", opt, s);
	*v = (uint64_t)d;
	return 0;
}

static void progress(void *ctx, uint64_t done, uint64_t total)
{
	(void)ctx;
	if (isatty(STDERR_FILENO))
		fprintf(stderr, "\r  %llu / %llu Records", (unsigned long long)done,
			(unsigned long long)total);
}

int cmd_gen(cli *c)
{
	gen_options o = {0};
	gen_stats s;
	int rc;

	o.records = 100000;
	o.seed = 42;
	if ((cli_size && (rc = number(cli_size, "--size", &o.records))) ||
	    (cli_seed && (rc = number(cli_seed, "--seed", &o.seed))))
		return rc;
	if (!c->out)
		return cli_usage("gen --size N [--seed S] [--vectors] --out DIR");
	if (o.records < GEN_MIN_RECORDS || o.records > GEN_MAX_RECORDS)
		return cli_usage("--size is %llu to %llu", GEN_MIN_RECORDS, GEN_MAX_RECORDS);
	o.dir = c->out;
	o.vectors = cli_vectors;
	o.progress = progress;
	o.stats = &s;
	if (gen_run(&o))
		return EXIT_FAIL;
	if (isatty(STDERR_FILENO))
		fprintf(stderr, "\n");
	if (c->json)
	{
		printf("{\"dir\":");
		out_str(stdout, c->out, strlen(c->out));
		printf(",\"records\":%llu,\"links\":%llu,\"vocabulary\":%u}\n",
		       (unsigned long long)s.records, (unsigned long long)s.links, s.vocab);
	}
	else
		printf("wrote %llu Records and %llu Links to %s\n", (unsigned long long)s.records,
		       (unsigned long long)s.links, c->out);
	return 0;
}

int cmd_bench(cli *c)
{
	bench_options o = {0};
	char work[256];
	int rc;

	o.records = 100000;
	o.seed = 42;
	o.warmup = 30;
	o.calls = 300;
	if ((cli_size && (rc = number(cli_size, "--size", &o.records))) ||
	    (cli_seed && (rc = number(cli_seed, "--seed", &o.seed))))
		return rc;
	if (o.records < GEN_MIN_RECORDS || o.records > GEN_MAX_RECORDS)
		return cli_usage("--size is %llu to %llu", GEN_MIN_RECORDS, GEN_MAX_RECORDS);
	if (cli_work) {
		o.work = cli_work;
		o.keep = 1;
		o.reuse = access(cli_work, F_OK) == 0 && c->nargs == 1 &&
			  strcmp(c->args[0], "reuse") == 0;
	} else {
		snprintf(work, sizeof(work), "%s/cairn-bench-%d",
			 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
		o.work = work;
	}
	o.out = c->out;
	if (cli_vectors)
		return bench_vectors(&o) ? EXIT_FAIL : 0;
	return bench_run(&o) ? EXIT_FAIL : 0;
}
