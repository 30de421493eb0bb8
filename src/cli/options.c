/* The cairn command's options: every option once, and each command's parsed from its usage. */
#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

/* How an option sets its field of the cli struct. */
enum opt_type {
	T_STR,	 /* const char *: the value */
	T_ON,	 /* int: 1 */
	T_OFF,	 /* int: 0 */
	T_LONG,	 /* long: a non-negative integer */
	T_UNIT,	 /* the confidence, 0 to 1 */
	T_BOOST, /* double: 0 to 1000000 */
	T_HOP,	 /* one more --hop */
	T_ABOUT, /* one more --about */
	T_HELP,
};

typedef struct cli_opt {
	const char *name;
	enum opt_type type;
	size_t off;
} cli_opt;

#define F(field) offsetof(cli, field)

static const cli_opt options[] = {
	{"store", T_STR, F(store)},		{"domain", T_STR, F(domain)},
	{"branch", T_STR, F(branch)},		{"at", T_STR, F(at)},
	{"actor", T_STR, F(prov.actor)},	{"source", T_STR, F(prov.source)},
	{"message", T_STR, F(prov.message)},	{"trace", T_STR, F(prov.trace_id)},
	{"confidence", T_UNIT, 0},		{"expect", T_LONG, F(expect)},
	{"json", T_ON, F(json)},		{"text", T_OFF, F(json)},
	{"no-sync", T_ON, F(nosync)},		{"limit", T_LONG, F(limit)},
	{"after", T_STR, F(after)},		{"dir", T_STR, F(dir)},
	{"rel", T_STR, F(rel)},			{"kind", T_STR, F(kind)},
	{"on-error", T_STR, F(on_error)},	{"batch", T_LONG, F(batch)},
	{"title", T_STR, F(title)},		{"schema", T_STR, F(schema)},		{"values", T_STR, F(values)},
	{"cascade", T_ON, F(cascade)},		{"out", T_STR, F(out)},
	{"from", T_STR, F(from)},		{"into", T_STR, F(into)},
	{"resolve", T_STR, F(resolve)},		{"resolutions", T_STR, F(resolutions)},
	{"dry-run", T_ON, F(dry_run)},		{"verdict", T_STR, F(verdict)},
	{"status", T_STR, F(status)},		{"role", T_STR, F(role)},
	{"branches", T_STR, F(branches)},	{"label", T_STR, F(label)},
	{"where", T_STR, F(where)},		{"sort", T_STR, F(sort)},
	{"fields", T_STR, F(fields)},		{"group-by", T_STR, F(group_by)},
	{"explain", T_ON, F(explain)},		{"count", T_ON, F(count)},
	{"hop", T_HOP, 0},			{"depth", T_LONG, F(depth)},
	{"fanout", T_LONG, F(fanout)},		{"with-values", T_ON, F(with_values)},
	{"edits", T_LONG, F(edits)},		{"exact", T_ON, F(exact)},
	{"all-words", T_ON, F(all_words)},	{"no-typos", T_ON, F(no_typos)},
	{"model", T_STR, F(model)},		{"id", T_STR, F(model_id)},
	{"pairs", T_STR, F(pairs)},		{"near", T_STR, F(near)},
	{"vector", T_STR, F(vector)},		{"metric", T_STR, F(metric)},
	{"probes", T_LONG, F(probes)},		{"lists", T_LONG, F(lists)},
	{"rebuild", T_ON, F(rebuild)},		{"retain", T_STR, F(retain)},
	{"horizon", T_STR, F(horizon)},		{"vectors", T_STR, F(vectors_file)},
	{"dim", T_LONG, F(dim)},		{"semantic", T_ON, F(semantic)},
	{"hybrid", T_ON, F(hybrid)},		{"rank", T_STR, F(rank)},
	{"fusion", T_STR, F(fusion)},		{"boost-near", T_STR, F(boost_near)},
	{"weights", T_STR, F(weights)},
	{"boost", T_BOOST, F(boost)},		{"embed", T_ON, F(embed)},
	{"vector-model", T_STR, F(vector_model)}, {"help", T_HELP, 0},
	{"memory", T_ON, F(memory)},		{"about", T_ABOUT, 0},
	{"key", T_STR, F(key)},			{"append", T_STR, F(append)},
	{"supersedes", T_STR, F(supersedes)},	{"replace", T_ON, F(replace)},
	{"include-inactive", T_ON, F(include_inactive)}, {"valid-at", T_STR, F(valid_at)},
	{"budget", T_LONG, F(budget)},		{"links", T_STR, F(links)},
	{"record", T_STR, F(record)},		{"actor-as", T_STR, F(actor_as)},
	{"atomic", T_ON, F(atomic)},
};

#define N_OPTIONS (sizeof(options) / sizeof(options[0]))
#define MAX_CMD_OPTIONS 48

static const cli_opt *find_option(const char *name, size_t len)
{
	for (size_t i = 0; i < N_OPTIONS; i++)
		if (strlen(options[i].name) == len && memcmp(options[i].name, name, len) == 0)
			return &options[i];
	return NULL;
}

/* Add option o to the getopt table lo of n entries, once. */
static size_t add_option(struct option *lo, size_t n, const cli_opt *o)
{
	for (size_t i = 0; i < n; i++)
		if (lo[i].val == (int)(o - options) + 256)
			return n;
	lo[n].name = o->name;
	lo[n].has_arg = o->type != T_ON && o->type != T_OFF && o->type != T_HELP;
	lo[n].flag = NULL;
	lo[n].val = (int)(o - options) + 256;
	return n + 1;
}

/*
 * The options of a command: every --name its usage text shows (at the start
 * of a word, or after one of "[(|,"), so that the text and the parser cannot
 * disagree, and --help. Fills lo (ending with a zero entry) and returns 0,
 * or -1 when the usage names an option this file does not know (a mistake
 * in the table of commands).
 */
static int command_options(const cli_cmd *cmd, struct option *lo)
{
	size_t n = add_option(lo, 0, find_option("help", 4));

	for (const char *p = strstr(cmd->usage, "--"); p; p = strstr(p + 2, "--")) {
		size_t len = strspn(p + 2, "abcdefghijklmnopqrstuvwxyz0123456789-");
		const cli_opt *o;

		if (p > cmd->usage && !strchr(" \n[(|,", p[-1]))
			continue;
		if (!len)
			continue;
		if (!(o = find_option(p + 2, len)) || n == MAX_CMD_OPTIONS)
			return -1;
		n = add_option(lo, n, o);
	}
	memset(&lo[n], 0, sizeof(lo[n]));
	return 0;
}

static int parse_long(const char *s, const char *opt, long *v)
{
	char *end;

	errno = 0;
	*v = strtol(s, &end, 10);
	if (!*s || *end || errno || *v < 0)
		return cli_usage("--%s takes a non-negative integer, not %s", opt, s);
	return 0;
}

static int parse_number(const char *s, double lo, double hi, double *v)
{
	char *end;

	*v = strtod(s, &end);
	return !*s || *end || !(*v >= lo && *v <= hi);
}

/* Set the option's field from its value arg. Returns 0 or an exit code. */
static int set_option(cli *c, const cli_opt *o, const char *arg)
{
	char *field = (char *)c + o->off;

	switch (o->type) {
	case T_STR:
		*(const char **)field = arg;
		return 0;
	case T_ON:
	case T_OFF:
		*(int *)field = o->type == T_ON;
		return 0;
	case T_LONG:
		return parse_long(arg, o->name, (long *)field);
	case T_UNIT:
		c->prov.has_confidence = 1;
		if (parse_number(arg, 0, 1, &c->prov.confidence))
			return cli_usage("--confidence takes a number from 0 to 1");
		return 0;
	case T_BOOST:
		if (parse_number(arg, 0, 1e6, (double *)field))
			return cli_usage("--boost is a number from 0 to 1000000");
		return 0;
	case T_HOP:
		if (c->n_hops == (int)(sizeof(c->hops) / sizeof(c->hops[0])))
			return cli_usage("at most %d --hop", c->n_hops);
		c->hops[c->n_hops++] = arg;
		return 0;
	case T_ABOUT:
		if (c->n_about == CAIRN_MEMORY_MAX_ABOUT)
			return cli_usage("at most %d --about", CAIRN_MEMORY_MAX_ABOUT);
		c->about[c->n_about++] = arg;
		return 0;
	default:
		return 0;
	}
}

/* How many of the command's options lo begin with the len bytes of name. */
static int prefixes(const struct option *lo, const char *name, size_t len)
{
	int n = 0;

	for (; lo->name; lo++)
		n += strncmp(lo->name, name, len) == 0;
	return n;
}

/* What getopt_long refused: the option in argv[optind - 1], or the short one in optopt. */
static int refuse(const cli_cmd *cmd, const struct option *lo, int opt, char **argv)
{
	const char *a = argv[optind - 1];
	int len = (int)strcspn(a, "=");

	if (opt == ':')
		return cli_usage("%.*s takes a value", len, a);
	if (optopt >= 256)
		return cli_usage("%.*s takes no value", len, a);
	if (optopt)
		return cli_usage("%s does not take -%c", cmd->name, optopt);
	if (len > 2 && prefixes(lo, a + 2, (size_t)len - 2) > 1)
		return cli_usage("%.*s is more than one option of %s: spell it out", len, a,
				 cmd->name);
	return cli_usage("%s does not take %.*s", cmd->name, len, a);
}

int cli_parse(cli *c, int argc, char **argv)
{
	struct option lo[MAX_CMD_OPTIONS + 1];
	int opt, ex = 0;

	if (c->cmd->own_options) {
		c->args = argv + 1;
		c->nargs = argc - 1;
		return 0;
	}
	if (command_options(c->cmd, lo)) {
		fprintf(stderr, "cairn: %s: its usage names an unknown option\n", c->cmd->name);
		return EXIT_FAIL;
	}
	opterr = 0;
	optind = 1;
	while (!ex && (opt = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
		const cli_opt *o = opt >= 256 ? &options[opt - 256] : NULL;

		if (opt == 'h' || (o && o->type == T_HELP)) {
			fputs(c->cmd->usage, stdout);
			return -1;
		}
		ex = o ? set_option(c, o, optarg) : refuse(c->cmd, lo, opt, argv);
	}
	c->args = argv + optind;
	c->nargs = argc - optind;
	return ex;
}
