/*
 * cairn serve: the store behind the HTTP/JSON API (docs/http.md). Settings
 * come from flags, else the environment (CAIRN_LISTEN, ...), else a config
 * file (--config FILE, lines "name = value" with the flags' names), else
 * the defaults.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "server/server.h"

static const char serve_help[] =
	"usage: cairn serve [--store DIR] [--listen HOST:PORT] [options]\n"
	"\n"
	"Serve the store over HTTP/JSON at http://HOST:PORT/v1/ (docs/http.md). Every\n"
	"route but /v1/health and /v1/openapi.json needs a Bearer token made with\n"
	"'cairn token create'. SIGTERM or SIGINT stops it gracefully: no new\n"
	"connections, requests in flight answered, acknowledged commits durable.\n"
	"\n"
	"  --listen HOST:PORT    address (default 127.0.0.1:7411; loopback unless you say)\n"
	"  --threads N           request threads (default: one per core)\n"
	"  --max-body BYTES      largest request body (default 16777216)\n"
	"  --max-import BYTES    largest import body, streamed (default 1073741824)\n"
	"  --max-depth N         deepest JSON nesting of a request (default 32)\n"
	"  --max-batch N         most changes in one commit request (default 10000)\n"
	"  --max-connections N   concurrent connections (default 1000)\n"
	"  --timeout SECONDS     idle connection timeout (default 60)\n"
	"  --query-ms N          time a read may walk (diffs, changes, export) before 503\n"
	"                        query_timeout (default 10000; 0: no limit)\n"
	"  --rate N              requests per second per token, 0 for no limit (default 0);\n"
	"                        over it: 429 with Retry-After\n"
	"  --burst N             requests a token may make at once (default 2 x rate)\n"
	"  --group N             most commits written together by the writer (default 256)\n"
	"  --access-log FILE     JSON access log lines ('-': stderr; default none)\n"
	"  --model FILE          the embedder's model for semantic and hybrid search\n"
	"                        (default: models/glove-6b-100d.cemb when it exists; none)\n"
	"  --retain DURATION     compact every Domain to this retention (90s, 12h, 30d) at\n"
	"                        start and hourly: time travel reaches back that far\n"
	"                        (default: never compact)\n"
	"  --config FILE         settings as 'name = value' lines, names as above without --\n"
	"  --no-sync             do not fsync commits (scratch stores only)\n"
	"\n"
	"Environment: CAIRN_STORE, CAIRN_LISTEN, CAIRN_THREADS, CAIRN_MAX_BODY, CAIRN_MAX_IMPORT,\n"
	"CAIRN_MAX_DEPTH, CAIRN_MAX_BATCH, CAIRN_MAX_CONNECTIONS, CAIRN_TIMEOUT, CAIRN_QUERY_MS,\n"
	"CAIRN_RATE,\n"
	"CAIRN_BURST, CAIRN_GROUP, CAIRN_ACCESS_LOG, CAIRN_MODEL, CAIRN_RETAIN. Flags win over the\n"
	"environment, which\n"
	"wins over the config file.\n";

static const char *const names[] = {"listen", "threads", "max-body", "max-import", "max-depth", "max-batch",
				    "max-connections", "timeout", "query-ms", "rate", "burst", "group",
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
			return cli_usage("unknown setting \"%s\" (cairn serve --help)", name);
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
	else if (strcmp(name, "timeout") == 0)
		c->timeout_s = (unsigned)d;
	else if (strcmp(name, "query-ms") == 0)
		c->query_ms = (unsigned)d;
	else if (strcmp(name, "burst") == 0)
		c->burst = (unsigned)d;
	else if (strcmp(name, "group") == 0)
		c->group_max = (unsigned)d;
	else
		return cli_usage("unknown setting \"%s\"", name);
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

int cmd_serve(cli *c, int argc, char **argv)
{
	static char *owned[128];
	srv_config cfg;
	const char *config = NULL;
	int ex, rc;

	srv_config_defaults(&cfg);
	cfg.nosync = c->nosync;
	/* serve parses its own flags (argv: what follows "serve"). */
	for (int i = 0; i < argc; i++)
		if (strcmp(argv[i], "--config") == 0 && i + 1 < argc)
			config = argv[i + 1];
		else if (strncmp(argv[i], "--config=", 9) == 0)
			config = argv[i] + 9;
	if (config && (ex = read_config(&cfg, config, owned)))
		return ex;
	if (getenv("CAIRN_STORE") && *getenv("CAIRN_STORE"))
		cfg.store = getenv("CAIRN_STORE");
	for (int i = 0; names[i]; i++) {
		char env[64], *v;

		snprintf(env, sizeof(env), "CAIRN_%s", names[i]);
		for (char *p = env; *p; p++)
			*p = *p == '-' ? '_' : (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
		if ((v = getenv(env)) && *v && (ex = set(&cfg, names[i], v, &owned[126])))
			return ex;
	}
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i], *eq = strchr(a, '=');

		if (strncmp(a, "--", 2) == 0 && eq) { /* --name=value */
			char name[64];

			snprintf(name, sizeof(name), "%.*s", (int)(eq - a - 2), a + 2);
			if (strcmp(name, "store") == 0)
				cfg.store = eq + 1;
			else if (strcmp(name, "config") != 0 && (ex = set(&cfg, name, eq + 1, &owned[125])))
				return ex;
			continue;
		}
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			fputs(serve_help, stdout);
			return 0;
		}
		if (strcmp(a, "--no-sync") == 0) {
			cfg.nosync = 1;
			continue;
		}
		if (strcmp(a, "--config") == 0) {
			i++;
			continue;
		}
		if (strcmp(a, "--store") == 0 && i + 1 < argc) {
			cfg.store = argv[++i];
			continue;
		}
		if (strncmp(a, "--", 2) != 0 || i + 1 >= argc)
			return cli_usage("serve: %s needs a value (cairn serve --help)", a);
		if ((ex = set(&cfg, a + 2, argv[i + 1], &owned[127])))
			return ex;
		i++;
	}
	/* The built-in model where make model puts it, unless another was named. */
	if (!cfg.model && access("models/glove-6b-100d.cemb", R_OK) == 0)
		cfg.model = "models/glove-6b-100d.cemb";
	else if (cfg.model && strcmp(cfg.model, "none") == 0)
		cfg.model = NULL;
	rc = server_run(&cfg);
	if (rc)
		return cli_fail(c, rc, "serve");
	return 0;
}
