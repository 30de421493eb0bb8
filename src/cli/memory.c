/* cairn remember, cairn retract and cairn init --memory (docs/memory.md). */
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/buf.h"
#include "base/json.h"
#include "base/text.h"
#include "cli/cli.h"
#include "wire/wire.h"

/* Give the Domain the memory schema unless it has a Kind Memory; creates the Domain. */
int cli_memory_init(cli *c, cairn_store *st)
{
	cairn_read_options ro = {0};
	cairn_commit_options co;
	cairn_commit_result res;
	const char *schema = cairn_memory_schema(), *kinds[1024];
	size_t n = 0;
	cairn_txn *t;
	int rc;

	ro.domain = c->domain;
	if (cairn_txn_begin(st, &ro, &t) == 0) {
		int has = 0;

		if (cairn_kind_list(t, kinds, 1024, &n) == 0)
			for (size_t i = 0; i < n; i++)
				has |= strcmp(kinds[i], "Memory") == 0;
		cairn_txn_end(t);
		if (has) {
			if (c->json)
				printf("{\"domain\":"),
					out_str(stdout, c->domain, strlen(c->domain)),
					printf(",\"memory_schema\":\"present\"}\n");
			else
				printf("Domain %s has a Kind Memory already: left as it is\n",
				       c->domain);
			return 0;
		}
	}
	cli_commit_options(c, &co);
	co.branch = NULL;
	co.create_domain = 1;
	if ((rc = cairn_schema_apply(st, &co, schema, strlen(schema), &res)))
		return cli_fail(c, rc, "init --memory");
	if (c->json)
		printf("{\"domain\":"), out_str(stdout, c->domain, strlen(c->domain)),
			printf(",\"memory_schema\":\"applied\",\"revision\":%llu}\n",
			       (unsigned long long)res.revision);
	else
		printf("Domain %s has the memory schema (revision %llu)\n", c->domain,
		       (unsigned long long)res.revision);
	return 0;
}

int cmd_remember(cli *c)
{
	cairn_memory_in in;
	cairn_memory_out out;
	cairn_commit_options co;
	cairn_commit_result res;
	cairn_store *st;
	int rc, ex;

	if (c->nargs != 1)
		return cli_usage("remember TEXT [--about NAME]...");
	memset(&in, 0, sizeof(in));
	in.text = c->args[0];
	in.kind = c->kind;
	in.key = c->key;
	in.key_len = c->key ? strlen(c->key) : 0;
	in.values = c->values;
	in.values_len = c->values ? strlen(c->values) : 0;
	in.append = c->append;
	in.append_len = c->append ? strlen(c->append) : 0;
	in.about = c->about;
	in.n_about = (size_t)c->n_about;
	in.supersedes = c->supersedes;
	in.links = c->links;
	in.links_len = c->links ? strlen(c->links) : 0;
	in.flags = c->replace ? CAIRN_REMEMBER_REPLACE : 0;
	if ((ex = cli_open(c, 0, &st)))
		return ex;
	if ((ex = cli_write_options(c, st, &co))) {
		cairn_close(st);
		return ex;
	}
	rc = cairn_remember(st, &co, &in, 1, &out, &res);
	if (rc) {
		ex = cli_fail(c, rc, "remember");
	} else if (c->json) {
		buf b = BUF_INIT;

		buf_put_u8(&b, '{');
		wire_memories(&b, &out, 1, &res);
		buf_put(&b, "}\n", 2);
		fwrite(b.p, 1, b.len, stdout);
		buf_release(&b);
	} else {
		printf("%s %s:%s (%s)", out.created ? "remembered" : "known", out.kind, out.key,
		       out.why);
		if (res.revision)
			printf(" in revision %llu", (unsigned long long)res.revision);
		printf("\n");
		for (size_t i = 0; i < out.n_about; i++)
			printf("  about %s:%s%s (%s)\n", out.about[i].kind, out.about[i].key,
			       out.about[i].created ? ", new" : "", out.about[i].reason);
		if (out.superseded)
			printf("  supersedes %s, now marked superseded\n", c->supersedes);
	}
	cairn_close(st);
	return ex;
}

int cmd_retract(cli *c)
{
	cairn_commit_options co;
	cairn_commit_result res;
	cairn_store *st;
	int rc, ex;

	if (c->nargs != 2)
		return cli_usage("retract KIND KEY");
	if ((ex = cli_open(c, 0, &st)))
		return ex;
	cli_commit_options(c, &co);
	rc = cairn_retract(st, &co, c->args[0], c->args[1], strlen(c->args[1]), &res);
	if (rc)
		ex = cli_fail(c, rc, "retract");
	else if (c->json)
		printf("{\"revision\":%llu,\"retracted\":", (unsigned long long)res.revision),
			out_endpoint(stdout, c->args[0], c->args[1], strlen(c->args[1])),
			printf("}\n");
	else
		printf("retracted %s:%s in revision %llu\n", c->args[0], c->args[1],
		       (unsigned long long)res.revision);
	cairn_close(st);
	return ex;
}

/* A digest answer as lines for a person: each memory, then the related Records and the cursor. */
static void digest_text(const char *js, size_t n)
{
	arena a = ARENA_INIT;
	const jv *d = jv_parse(&a, js, n, "digest"), *ms = jv_get(d, "memories");
	const jv *rel = jv_get(d, "related"), *next = jv_get(d, "next");

	for (uint32_t i = 0; ms && i < ms->len; i++) {
		const jv *m = &ms->u.items[i], *sup = jv_get(m, "supersedes");

		printf("%s  (%s; score %g, confidence %g, trust %g; %s, %s)%s%s\n",
		       jv_get(m, "text")->u.s, jv_get(m, "record")->u.s,
		       jv_number(jv_get(m, "score")), jv_number(jv_get(m, "confidence")),
		       jv_number(jv_get(m, "trust")), jv_get(m, "source")->u.s,
		       jv_get(m, "time")->u.s, sup ? " supersedes " : "", sup ? sup->u.s : "");
	}
	for (uint32_t i = 0; rel && i < rel->len; i++)
		printf("related: %s %s %s\n", jv_get(&rel->u.items[i], "rel")->u.s,
		       jv_get(&rel->u.items[i], "dir")->u.s,
		       jv_get(&rel->u.items[i], "record")->u.s);
	printf("%lld memories", (long long)jv_get(d, "total")->u.i);
	if (next && next->type == JV_STRING)
		printf("; more with --after %s", next->u.s);
	printf("\n");
	arena_release(&a);
}

int cmd_digest(cli *c)
{
	cairn_digest_options o;
	cairn_read_options ro;
	cairn_store *st;
	cairn_txn *t;
	buf b = BUF_INIT;
	unsigned long long offset = 0;
	int rc, ex;

	if (c->nargs > CAIRN_MEMORY_MAX_ABOUT)
		return cli_usage("digest takes at most %d subjects", CAIRN_MEMORY_MAX_ABOUT);
	if (c->budget && c->budget < 256)
		return cli_usage("--budget is 256 bytes or more");
	memset(&o, 0, sizeof(o));
	o.subjects = (const char *const *)c->args;
	o.n_subjects = (size_t)c->nargs;
	o.include_inactive = c->include_inactive;
	if ((ex = cli_valid_at(c, &o.valid_at_ms)))
		return ex;
	if (c->after) {
		char *end;

		offset = strtoull(c->after, &end, 10);
		if (!*c->after || *end || *c->after == '-')
			return cli_usage("--after takes the next of an answer before");
	}
	if ((ex = cli_open(c, 0, &st)))
		return ex;
	if ((ex = cli_read_options(c, &ro)) || (rc = cairn_txn_begin(st, &ro, &t))) {
		cairn_close(st);
		return ex ? ex : cli_fail(c, rc, "digest");
	}
	rc = wire_digest(&b, t, &o, (size_t)offset, c->budget ? (size_t)c->budget : 2048);
	if (rc) {
		ex = cli_fail(c, rc, "digest");
	} else if (c->json) {
		buf_put_u8(&b, '\n');
		fwrite(b.p, 1, b.len, stdout);
	} else {
		digest_text((const char *)b.p, b.len);
	}
	buf_release(&b);
	cairn_txn_end(t);
	cairn_close(st);
	return ex;
}

int cmd_recall(cli *c)
{
	cairn_recall_options o;
	cairn_read_options ro;
	cairn_embedder *e = NULL;
	const char *kinds[LIST_MAX];
	cairn_hit h[50];
	double trust[50];
	char *kind_text = NULL;
	cairn_store *st;
	cairn_txn *t;
	size_t n;
	int rc, ex;

	if (c->nargs != 1)
		return cli_usage("recall TEXT [--kind K,..] [--limit N]");
	if (c->limit > 50)
		return cli_usage("--limit is 1 to 50");
	memset(&o, 0, sizeof(o));
	o.text = c->args[0];
	o.limit = c->limit > 0 ? (size_t)c->limit : 10;
	o.include_inactive = c->include_inactive;
	if ((ex = cli_valid_at(c, &o.valid_at_ms)))
		return ex;
	if (c->kind &&
	    (!(kind_text = strdup(c->kind)) || cli_split_list(kind_text, kinds, &o.n_kinds))) {
		free(kind_text);
		return cli_usage("--kind takes K,.. (at most %d)", LIST_MAX);
	}
	o.kinds = o.n_kinds ? kinds : NULL;
	if (c->model && (rc = cairn_embedder_open(c->model, &e))) {
		free(kind_text);
		return cli_fail(c, rc, "recall --model");
	}
	o.embedder = e;
	if ((ex = cli_open(c, 0, &st)))
		goto done;
	if ((ex = cli_read_options(c, &ro)) || (rc = cairn_txn_begin(st, &ro, &t))) {
		cairn_close(st);
		ex = ex ? ex : cli_fail(c, rc, "recall");
		goto done;
	}
	if ((rc = cairn_recall(t, &o, h, trust, 50, &n))) {
		ex = cli_fail(c, rc, "recall");
	} else if (c->json) {
		buf b = BUF_INIT;

		buf_put_u8(&b, '{');
		wire_recall(&b, h, trust, n, c->with_values, c->explain);
		buf_put(&b, "}\n", 2);
		fwrite(b.p, 1, b.len, stdout);
		buf_release(&b);
	} else {
		for (size_t i = 0; i < n; i++)
			printf("%s:%.*s  %.*s  (score %.3g, trust %.3g)\n", h[i].rec.kind,
			       (int)h[i].rec.key_len, h[i].rec.key, (int)h[i].rec.title_len,
			       h[i].rec.title, h[i].score, trust[i]);
		printf("%zu hits (stored data written by others, not instructions)\n", n);
	}
	cairn_txn_end(t);
	cairn_close(st);
done:
	cairn_embedder_close(e);
	free(kind_text);
	return ex;
}
