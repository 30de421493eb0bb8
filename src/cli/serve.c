/*
 * cairn serve: the store behind the HTTP/JSON API (docs/http.md). Settings
 * come from flags, else the environment (CAIRN_LISTEN, ...), else a config
 * file (--config FILE, lines "name = value" with the flags' names), else
 * the defaults.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "server/server.h"

static const char *const names[] = {"listen", "threads", "max-body", "max-import", "max-depth", "max-batch",
				    "max-connections", "max-connections-per-client", "timeout", "header-timeout", "query-ms", "rate", "burst", "group",
				    "access-log", "model", "retain", NULL};

/* One setting by name; returns 0, or prints why and returns an exit code. */
static int set(srv_config *c, const char *name, const char *v, char **owned)
{
	char *end;
	double d;

	if (strcmp(name, "listen") == 0) {
		const char *colon = strrchr(v, ':');
		unsigned long port;

		if (!colon || colon == v)
			return cli_usage("listen is HOST:PORT, not %s", v);
		port = strtoul(colon + 1, &end, 10);
		if (*end || !colon[1] || port > 65535)
			return cli_usage("listen is HOST:PORT, not %s", v);
		*owned = strndup(v, (size_t)(colon - v));
		if (!*owned)
			return EXIT_FAIL;
		c->host = *owned;
		c->port = (unsigned)port;
		return 0;
	}
	if (strcmp(name, "access-log") == 0) {
		c->access_log = v;
		return 0;
	}
	if (strcmp(name, "model") == 0) {
		c->model = v;
		return 0;
	}
	if (strcmp(name, "store") == 0) {
		c->store = v;
		return 0;
	}
	if (strcmp(name, "retain") == 0) {
		if ((c->retain_ms = cli_parse_duration_ms(v)) <= 0)
			return cli_usage("retain takes a duration such as 90s, 30m, 12h or 7d, not %s",
					 v);
		return 0;
	}
	{
		int known = 0;

		for (int i = 0; names[i] && !known; i++)
			known = strcmp(names[i], name) == 0;
		if (!known)
			return cli_usage("serve has no setting \"%s\"", name);
	}
	errno = 0;
	d = strtod(v, &end);
	if (!*v || *end || errno || d < 0)
		return cli_usage("%s takes a non-negative number, not %s", name, v);
	if (strcmp(name, "rate") == 0)
		c->rate = d;
	else if (d != (double)(unsigned)d)
		return cli_usage("%s takes a whole number, not %s", name, v);
	else if (strcmp(name, "threads") == 0)
		c->threads = (unsigned)d;
	else if (strcmp(name, "max-body") == 0)
		c->max_body = (size_t)d;
	else if (strcmp(name, "max-import") == 0)
		c->max_import = (size_t)d;
	else if (strcmp(name, "max-depth") == 0)
		c->max_depth = (unsigned)d;
	else if (strcmp(name, "max-batch") == 0)
		c->max_batch = (unsigned)d;
	else if (strcmp(name, "max-connections") == 0)
		c->max_conns = (unsigned)d;
	else if (strcmp(name, "max-connections-per-client") == 0)
		c->max_client_conns = (unsigned)d;
	else if (strcmp(name, "timeout") == 0)
		c->timeout_s = (unsigned)d;
	else if (strcmp(name, "header-timeout") == 0)
		c->header_timeout_s = (unsigned)d;
	else if (strcmp(name, "query-ms") == 0)
		c->query_ms = (unsigned)d;
	else if (strcmp(name, "burst") == 0)
		c->burst = (unsigned)d;
	else if (strcmp(name, "group") == 0)
		c->group_max = (unsigned)d;
	else
		return cli_usage("serve has no setting \"%s\"", name);
	if ((strcmp(name, "max-depth") == 0 || strcmp(name, "max-batch") == 0 ||
	     strcmp(name, "group") == 0 || strcmp(name, "max-connections") == 0 ||
	     strcmp(name, "max-body") == 0 || strcmp(name, "max-import") == 0) &&
	    d < 1)
		return cli_usage("%s is at least 1", name);
	return 0;
}


static int read_config(srv_config *c, const char *path, char **owned)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	int n = 0, ex = 0;

	if (!f) {
		fprintf(stderr, "cairn: cannot read %s: %s\n", path, strerror(errno));
		return EXIT_FAIL;
	}
	while (!ex && fgets(line, sizeof(line), f)) {
		char *p = line, *eq, *k, *v, *e;

		n++;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '#' || *p == '\n' || !*p)
			continue;
		if (!(eq = strchr(p, '='))) {
			fprintf(stderr, "cairn: %s:%d: expected name = value\n", path, n);
			ex = EXIT_USAGE;
			break;
		}
		*eq = '\0';
		k = p;
		for (e = eq; e > k && (e[-1] == ' ' || e[-1] == '\t'); e--)
			;
		*e = '\0';
		v = eq + 1;
		while (*v == ' ' || *v == '\t')
			v++;
		v[strcspn(v, "\r\n")] = '\0';
		for (e = v + strlen(v); e > v && (e[-1] == ' ' || e[-1] == '\t'); e--)
			;
		*e = '\0';
		v = strdup(v);
		if (!v) {
			ex = EXIT_FAIL;
			break;
		}
		owned[n % 64] = v; /* kept for the server's life; a few bytes */
		ex = set(c, k, v, &owned[64 + n % 64]);
	}
	fclose(f);
	return ex;
}

/* A setting flags and config lines may give (the config file's own name aside). */
static int is_setting(const char *name)
{
	for (int i = 0; names[i]; i++)
		if (strcmp(names[i], name) == 0)
			return 1;
	return strcmp(name, "store") == 0;
}

/* --config FILE: the settings it gives come first, the environment and the flags after. */
static const char *config_flag(int argc, char **argv)
{
	const char *config = NULL;

	for (int i = 0; i < argc; i++)
		if (strcmp(argv[i], "--config") == 0 && i + 1 < argc)
			config = argv[i + 1];
		else if (strncmp(argv[i], "--config=", 9) == 0)
			config = argv[i] + 9;
	return config;
}

static int env_settings(srv_config *cfg, char **owned)
{
	int ex;

	if (getenv("CAIRN_STORE") && *getenv("CAIRN_STORE"))
		cfg->store = getenv("CAIRN_STORE");
	for (int i = 0; names[i]; i++) {
		char env[64], *v;

		snprintf(env, sizeof(env), "CAIRN_%s", names[i]);
		for (char *p = env; *p; p++)
			*p = *p == '-' ? '_' : (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
		if ((v = getenv(env)) && *v && (ex = set(cfg, names[i], v, owned)))
			return ex;
	}
	return 0;
}

/* The flags (what follows "serve"): 0, -1 after printing the usage, or an exit code. */
static int flag_settings(srv_config *cfg, int argc, char **argv, char **owned)
{
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i], *eq = strchr(a, '='), *v;
		char name[64];
		int ex;

		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			fputs(cli_serve_usage, stdout);
			return -1;
		}
		if (strcmp(a, "--no-sync") == 0) {
			cfg->nosync = 1;
			continue;
		}
		if (strncmp(a, "--", 2) != 0)
			return cli_usage("serve takes no argument %s", a);
		snprintf(name, sizeof(name), "%.*s", eq ? (int)(eq - a - 2) : (int)strlen(a + 2),
			 a + 2);
		if (!is_setting(name) && strcmp(name, "config") != 0)
			return cli_usage("serve does not take --%s", name);
		if (!eq && i + 1 >= argc)
			return cli_usage("serve: --%s needs a value", name);
		v = eq ? eq + 1 : argv[++i];
		if (strcmp(name, "config") != 0 && (ex = set(cfg, name, v, owned)))
			return ex;
	}
	return 0;
}

int cmd_serve(cli *c)
{
	static char *owned[128];
	const char *config = config_flag(c->nargs, c->args);
	static char found[PATH_MAX];
	srv_config cfg;
	int ex, rc;

	srv_config_defaults(&cfg);
	if ((config && (ex = read_config(&cfg, config, owned))) ||
	    (ex = env_settings(&cfg, &owned[126])) ||
	    (ex = flag_settings(&cfg, c->nargs, c->args, &owned[127])))
		return ex < 0 ? 0 : ex;
	/* The built-in model where make model or make install put it, unless another was named. */
	if (!cfg.model)
		cfg.model = cli_find_model(found);
	else if (cfg.model && strcmp(cfg.model, "none") == 0)
		cfg.model = NULL;
	rc = server_run(&cfg);
	if (rc)
		return cli_fail_msg(c, rc, "serve", server_errmsg());
	return 0;
}
