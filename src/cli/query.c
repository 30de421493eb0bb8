/*
 * The cairn command: attribute queries (docs/query.md, docs/cli.md "query").
 * Uses only cairn.h.
 */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

/* "a,b,c" into a list (in place). */
static size_t split_fields(char *s, const char **out, size_t cap)
{
	size_t n = 0;

	for (char *p = strtok(s, ","); p && n < cap; p = strtok(NULL, ","))
		out[n++] = p;
	return n;
}

static int print_group(void *ctx, const char *value, size_t len, uint64_t n)
{
	cli *c = ctx;

	if (c->json)
		printf("{\"value\":%.*s,\"count\":%llu}\n", (int)len, value, (unsigned long long)n);
	else
		printf("%-30.*s %llu\n", (int)len, value, (unsigned long long)n);
	return 0;
}

/*
 * query KIND [--where JSON] [--sort ATTR] [--limit N] [--after CURSOR]
 *            [--fields A,B] [--explain] | --count [--group-by ATTR]
 */
int cmd_query(cli *c)
{
	cairn_read_options ro;
	cairn_query_options q;
	cairn_query_result res;
	cairn_record *out;
	cairn_store *st;
	cairn_txn *t;
	const char *fields[256];
	char *fcopy = NULL;
	int rc, ex;

	if (c->nargs != 1)
		return cli_usage("query KIND [--where JSON] [--sort ATTR] [--limit N] [--after CURSOR] "
				 "[--fields A,B] [--explain] | query KIND --count [--group-by ATTR]");
	if (c->limit > CAIRN_MAX_PAGE)
		return cli_usage("--limit is at most %d", CAIRN_MAX_PAGE);
	if ((ex = cli_read_options(c, &ro)))
		return ex;
	if ((ex = cli_open(c, 0, &st)))
		return ex;
	if ((rc = cairn_txn_begin(st, &ro, &t))) {
		ex = cli_fail(c, rc, "query");
		cairn_close(st);
		return ex;
	}
	if (c->count || c->group_by) {
		uint64_t total = 0;

		rc = cairn_query_count(t, c->args[0], c->where, c->where ? strlen(c->where) : 0,
				       c->group_by, print_group, c, &total);
		if (rc)
			ex = cli_fail(c, rc, "query");
		else if (c->json)
			printf("{\"total\":%llu}\n", (unsigned long long)total);
		else
			printf("%llu Record%s\n", (unsigned long long)total, total == 1 ? "" : "s");
		cairn_txn_end(t);
		cairn_close(st);
		return ex;
	}
	memset(&q, 0, sizeof(q));
	q.kind = c->args[0];
	q.where = c->where;
	q.where_len = c->where ? strlen(c->where) : 0;
	q.sort = c->sort;
	q.after = c->after;
	q.limit = c->limit > 0 ? (size_t)c->limit : 50;
	q.explain = c->explain;
	if (c->fields) {
		fcopy = strdup(c->fields);
		q.fields = fields;
		q.n_fields = fcopy ? split_fields(fcopy, fields, 256) : 0;
	}
	out = calloc(q.limit, sizeof(*out));
	rc = out ? cairn_query(t, &q, out, q.limit, &res) : CAIRN_ENOMEM;
	if (rc) {
		ex = cli_fail(c, rc, "query");
	} else {
		for (size_t i = 0; i < res.n; i++) {
			if (c->json) {
				out_header(stdout, &out[i]);
				printf(",\"values\":%.*s}\n", (int)out[i].values_len, out[i].values);
			} else {
				printf("%s:%.*s  %.*s\n  %.*s\n", out[i].kind, (int)out[i].key_len,
				       out[i].key, (int)out[i].title_len, out[i].title,
				       (int)out[i].values_len, out[i].values);
			}
		}
		if (c->json) {
			printf("{\"next\":");
			if (res.next)
				out_str(stdout, res.next, strlen(res.next));
			else
				printf("null");
			printf(",\"scanned\":%s,\"entries\":%llu,\"checked\":%llu,\"matched\":%llu",
			       res.scanned ? "true" : "false", (unsigned long long)res.entries,
			       (unsigned long long)res.candidates, (unsigned long long)res.matched);
			if (res.plan) {
				printf(",\"plan\":");
				out_str(stdout, res.plan, strlen(res.plan));
			}
			printf("}\n");
		} else {
			if (res.plan)
				printf("plan: %s\n", res.plan);
			if (res.scanned)
				printf("(the Kind was scanned: no index answered the filter)\n");
			if (res.next)
				printf("more: --after %s\n", res.next);
		}
	}
	free(out);
	free(fcopy);
	cairn_txn_end(t);
	cairn_close(st);
	return ex;
}
