/*
 * cairn mcp: the store as MCP tools over stdio (one JSON-RPC message per
 * line in, one per line out; nothing else on stdout). Write tools are off
 * unless --writes; --branches limits them to branches matching a pattern.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "server/mcp.h"

/* '*' matches any run of characters. */
static int glob(const char *p, const char *s)
{
	if (!*p)
		return !*s;
	if (*p == '*') {
		for (;; s++) {
			if (glob(p + 1, s))
				return 1;
			if (!*s)
				return 0;
		}
	}
	return *p == *s && glob(p + 1, s + 1);
}

static int pattern_ok(void *ctx, const char *branch)
{
	return glob(ctx, branch);
}

/* An option of mcp that takes a value. */
static int valued(const char *a)
{
	static const char *const names[] = {"--store", "--domain", "--branches", "--actor",
					    "--model", NULL};

	for (int i = 0; names[i]; i++)
		if (strcmp(a, names[i]) == 0)
			return 1;
	return 0;
}

int cmd_mcp(cli *c)
{
	int argc = c->nargs;
	char **argv = c->args;
	cairn_open_options oo = {0};
	const char *branches = NULL, *actor = NULL, *model = NULL;
	char found[PATH_MAX];
	cairn_embedder *emb = NULL;
	mcp_ctx m;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	buf out = BUF_INIT;
	int rc, writes = 0;

	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "--writes") == 0)
			writes = 1;
		else if (strcmp(a, "--no-sync") == 0)
			oo.flags |= CAIRN_OPEN_NOSYNC;
		else if (i + 1 < argc && strcmp(a, "--store") == 0)
			c->store = argv[++i];
		else if (i + 1 < argc && strcmp(a, "--domain") == 0)
			c->domain = argv[++i];
		else if (i + 1 < argc && strcmp(a, "--branches") == 0)
			branches = argv[++i];
		else if (i + 1 < argc && strcmp(a, "--actor") == 0)
			actor = argv[++i];
		else if (i + 1 < argc && strcmp(a, "--model") == 0)
			model = argv[++i];
		else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			fputs(cli_mcp_usage, stdout);
			return 0;
		} else if (i + 1 == argc && valued(a)) {
			return cli_usage("mcp: %s takes a value", a);
		} else {
			return cli_usage("mcp does not take %s", a);
		}
	}
	if (!model && getenv("CAIRN_MODEL") && *getenv("CAIRN_MODEL"))
		model = getenv("CAIRN_MODEL");
	if (!model)
		model = cli_find_model(found);
	if (model && strcmp(model, "none") == 0)
		model = NULL;
	if (model && (rc = cairn_embedder_open(model, &emb)))
		return cli_fail(c, rc, "mcp");
	if ((rc = cairn_open(c->store, &oo, &c->st_mcp))) {
		cairn_embedder_close(emb);
		return cli_fail(c, rc, NULL);
	}
	memset(&m, 0, sizeof(m));
	m.emb = emb;
	m.st = c->st_mcp;
	m.domain = c->domain;
	m.actor = actor ? actor : "mcp";
	m.writes = writes;
	m.may_erase = writes && !branches;
	if (branches) {
		m.branch_ok = pattern_ok;
		m.branch_ctx = (void *)branches;
		m.branches = branches;
	}
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	while ((n = getline(&line, &cap, stdin)) >= 0) {
		size_t len = (size_t)n;

		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			len--;
		if (!len)
			continue;
		buf_reset(&out);
		if (mcp_handle(&m, line, len, &out)) {
			fwrite(out.p, 1, out.len, stdout);
			fputc('\n', stdout);
			fflush(stdout);
		}
	}
	free(line);
	buf_release(&out);
	cairn_close(c->st_mcp);
	cairn_embedder_close(emb);
	return 0;
}
