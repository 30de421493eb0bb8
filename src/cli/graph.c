/*
 * The cairn command: graph reads (docs/cli.md "neighbors", "follow",
 * "path"). Records are named KIND:KEY (the key is everything after the
 * first colon); a hop is DIR[:REL,REL...[:KIND,KIND...]]. Reaches the engine through
 * cairn.h only (and the wire format, base's JSON reader).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "base/json.h"
#include "wire/wire.h"
#include "base/arena.h"


/* A hop parsed from the command line: its lists point into the copies it owns. */
typedef struct cli_hop {
	cairn_hop h;
	char *spec, *rels_text, *kinds_text;
	const char *rels[LIST_MAX], *kinds[LIST_MAX];
} cli_hop;

static int parse_dir(const char *s, int *dir)
{
	if (!*s || strcmp(s, "both") == 0)
		*dir = CAIRN_BOTH;
	else if (strcmp(s, "out") == 0)
		*dir = CAIRN_OUT;
	else if (strcmp(s, "in") == 0)
		*dir = CAIRN_IN;
	else
		return -1;
	return 0;
}

int cli_split_list(char *s, const char **out, size_t *n)
{
	*n = 0;
	if (!s || !*s)
		return 0;
	for (char *p = s;;) {
		char *comma = strchr(p, ',');

		if (comma)
			*comma = '\0';
		if (!*p || *n == LIST_MAX)
			return -1;
		out[(*n)++] = p;
		if (!comma)
			return 0;
		p = comma + 1;
	}
}

/* DIR[:RELS[:KINDS]], or the --dir, --rel and --kind options when spec is NULL. */
static int parse_hop(cli *c, const char *spec, cli_hop *o)
{
	char *rels = NULL, *kinds = NULL;
	const char *dir = c->dir ? c->dir : "";

	memset(o, 0, sizeof(*o));
	if (spec) {
		char *colon;

		if (!(o->spec = strdup(spec)))
			return cli_usage("out of memory");
		dir = o->spec;
		if ((colon = strchr(o->spec, ':'))) {
			*colon = '\0';
			rels = colon + 1;
			if ((colon = strchr(rels, ':'))) {
				*colon = '\0';
				kinds = colon + 1;
			}
		}
	} else {
		if ((c->rel && !(rels = o->rels_text = strdup(c->rel))) ||
		    (c->kind && !(kinds = o->kinds_text = strdup(c->kind))))
			return cli_usage("out of memory");
	}
	if (parse_dir(dir, &o->h.dir))
		return cli_usage(spec ? "a hop is DIR[:REL,...[:KIND,...]], DIR out, in or both"
				      : "--dir out|in|both");
	if (cli_split_list(rels, o->rels, &o->h.n_rels) || cli_split_list(kinds, o->kinds, &o->h.n_kinds))
		return cli_usage("a list of Relations or Kinds has an empty name or more than %d",
				 LIST_MAX);
	o->h.rels = o->h.n_rels ? o->rels : NULL;
	o->h.kinds = o->h.n_kinds ? o->kinds : NULL;
	return 0;
}

static void free_hops(cli_hop *h, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(h[i].spec);
		free(h[i].rels_text);
		free(h[i].kinds_text);
	}
}

/* KIND:KEY into a reference (pointing into s). */
static int parse_ref(const char *s, cairn_ref *r)
{
	const char *colon = strchr(s, ':');

	if (!colon || colon == s || !colon[1])
		return cli_usage("a Record is KIND:KEY, not \"%s\"", s);
	r->kind = strndup(s, (size_t)(colon - s));
	r->key = colon + 1;
	r->key_len = strlen(r->key);
	return r->kind ? 0 : cli_usage("out of memory");
}

/* The nodes, then the Links; 0 or the library's error reading a Link's revision. */
static int print_graph(cli *c, cairn_txn *t, const cairn_graph *g, int with_values)
{
	cairn_revision last = {0};
	int rc;

	for (size_t i = 0; i < g->n_nodes; i++) {
		const cairn_record *r = &g->nodes[i].rec;

		if (c->json) {
			out_header(stdout, r);
			printf(",\"depth\":%u", g->nodes[i].depth);
			if (with_values)
				printf(",\"values\":%.*s", (int)r->values_len, r->values);
			printf("}\n");
		} else {
			printf("%*s%s:%.*s  %.*s\n", (int)g->nodes[i].depth * 2, "", r->kind,
			       (int)r->key_len, r->key, (int)r->title_len, r->title);
			if (with_values)
				printf("%*s  %.*s\n", (int)g->nodes[i].depth * 2, "", (int)r->values_len,
				       r->values);
		}
	}
	for (size_t i = 0; i < g->n_links; i++) {
		const cairn_link *l = &g->links[i];

		if (c->json) {
			if ((rc = out_link(stdout, t, l, with_values, &last)))
				return rc;
		} else {
			printf("%s:%.*s -%s-> %s:%.*s", l->from_kind, (int)l->from_key_len, l->from_key,
			       l->rel, l->to_kind, (int)l->to_key_len, l->to_key);
			if (with_values && l->values_len > 2)
				printf("  %.*s", (int)l->values_len, l->values);
			printf("\n");
		}
	}
	return 0;
}

static void print_summary(cli *c, const cairn_graph *g, int path)
{
	if (c->json) {
		printf("{\"nodes\":%zu,\"links\":%zu,\"truncated\":%s", g->n_nodes, g->n_links,
		       g->truncated ? "true" : "false");
		if (path)
			printf(",\"found\":%s", g->found ? "true" : "false");
		printf(",\"entries\":%llu}\n", (unsigned long long)g->entries);
		return;
	}
	if (path && !g->found)
		printf("no path%s\n", g->truncated ? " found before the search gave up" : " that short");
	else
		printf("%zu Record%s, %zu Link%s%s\n", g->n_nodes, g->n_nodes == 1 ? "" : "s",
		       g->n_links, g->n_links == 1 ? "" : "s",
		       !g->truncated ? ""
		       : strcmp(c->cmd->name, "follow") == 0 ? " (truncated: raise --limit)"
							      : " (truncated: raise --fanout or --limit)");
}

/* The common part: hops from --hop (or --dir, --rel, --kind), a read transaction. */
typedef struct graph_cmd {
	cli_hop hops[CAIRN_MAX_PATH];
	size_t n_hops;
	cairn_store *st;
	cairn_txn *t;
} graph_cmd;

static int graph_begin(cli *c, graph_cmd *g, size_t max_hops)
{
	cairn_read_options ro;
	int ex, rc;

	memset(g, 0, sizeof(*g));
	if ((size_t)c->n_hops > max_hops)
		return cli_usage("at most %zu --hop", max_hops);
	if (c->n_hops && (c->dir || c->rel || c->kind))
		return cli_usage("--hop replaces --dir, --rel and --kind: give one or the other");
	for (size_t i = 0; i < (c->n_hops ? (size_t)c->n_hops : 1); i++) {
		if ((ex = parse_hop(c, c->n_hops ? c->hops[i] : NULL, &g->hops[i]))) {
			free_hops(g->hops, i + 1);
			return ex;
		}
		g->n_hops = i + 1;
	}
	if ((ex = cli_read_options(c, &ro)) || (ex = cli_open(c, 0, &g->st))) {
		free_hops(g->hops, g->n_hops);
		return ex;
	}
	if ((rc = cairn_txn_begin(g->st, &ro, &g->t))) {
		ex = cli_fail(c, rc, "read");
		cairn_close(g->st);
		free_hops(g->hops, g->n_hops);
		return ex;
	}
	return 0;
}

static void graph_end(graph_cmd *g)
{
	cairn_txn_end(g->t);
	cairn_close(g->st);
	free_hops(g->hops, g->n_hops);
}

/* neighbors KIND:KEY... [--depth N] [--hop SPEC]... [--fanout N] [--limit N] [--with-values] */
int cmd_neighbors(cli *c)
{
	cairn_neighborhood_options o;
	cairn_hop hops[CAIRN_MAX_DEPTH];
	cairn_ref *refs;
	cairn_graph g;
	graph_cmd gc;
	int rc, ex;

	if (c->nargs < 1)
		return cli_usage("neighbors KIND:KEY... [--depth 1-3] [--hop DIR[:RELS[:KINDS]]]... "
				 "[--dir D] [--rel R,..] [--kind K,..] [--fanout N] [--limit N] "
				 "[--with-values]");
	if (c->depth < 0 || c->depth > CAIRN_MAX_DEPTH)
		return cli_usage("--depth is 1 to %d", CAIRN_MAX_DEPTH);
	if (c->limit > CAIRN_MAX_NODES || c->fanout > CAIRN_MAX_NODES)
		return cli_usage("--limit and --fanout are at most %d", CAIRN_MAX_NODES);
	if (!(refs = calloc((size_t)c->nargs, sizeof(*refs))))
		return cli_usage("out of memory");
	ex = 0;
	for (int i = 0; i < c->nargs && !ex; i++)
		ex = parse_ref(c->args[i], &refs[i]);
	if (!ex && !(ex = graph_begin(c, &gc, CAIRN_MAX_DEPTH))) {
		memset(&o, 0, sizeof(o));
		for (size_t i = 0; i < gc.n_hops; i++)
			hops[i] = gc.hops[i].h;
		o.start = refs;
		o.n_start = (size_t)c->nargs;
		o.depth = c->depth > 0 ? (unsigned)c->depth : c->n_hops ? (unsigned)c->n_hops : 1;
		o.hops = hops;
		o.n_hops = gc.n_hops;
		o.fanout = c->fanout > 0 ? (size_t)c->fanout : 0;
		o.max_nodes = c->limit > 0 ? (size_t)c->limit : 0;
		o.values = c->with_values;
		if ((rc = cairn_neighborhood(gc.t, &o, &g))) {
			ex = cli_fail(c, rc, "neighbors");
		} else if ((rc = print_graph(c, gc.t, &g, c->with_values))) {
			ex = cli_fail(c, rc, "links");
		} else {
			print_summary(c, &g, 0);
		}
		graph_end(&gc);
	}
	for (int i = 0; i < c->nargs; i++)
		free((char *)refs[i].kind);
	free(refs);
	return ex;
}

/* follow KIND:KEY --hop SPEC... [--limit N] [--with-values] */
int cmd_follow(cli *c)
{
	cairn_hop steps[CAIRN_MAX_PATH];
	cairn_ref start = {NULL, NULL, 0};
	cairn_graph g;
	graph_cmd gc;
	int rc, ex;

	if (c->nargs != 1 || !c->n_hops)
		return cli_usage("follow KIND:KEY --hop DIR[:RELS[:KINDS]]... [--limit N] "
				 "[--with-values]");
	if (c->limit > CAIRN_MAX_NODES)
		return cli_usage("--limit is at most %d", CAIRN_MAX_NODES);
	if ((ex = parse_ref(c->args[0], &start)))
		return ex;
	if (!(ex = graph_begin(c, &gc, CAIRN_MAX_PATH))) {
		for (size_t i = 0; i < gc.n_hops; i++)
			steps[i] = gc.hops[i].h;
		rc = cairn_follow(gc.t, &start, steps, gc.n_hops,
				  c->limit > 0 ? (size_t)c->limit : 0, c->with_values, &g);
		if (rc) {
			ex = cli_fail(c, rc, "follow");
		} else if ((rc = print_graph(c, gc.t, &g, c->with_values))) {
			ex = cli_fail(c, rc, "links");
		} else {
			print_summary(c, &g, 0);
		}
		graph_end(&gc);
	}
	free((char *)start.kind);
	return ex;
}

/* path KIND:KEY KIND:KEY [--depth N] [--dir D] [--rel R,..] [--kind K,..] [--with-values] */
int cmd_path(cli *c)
{
	cairn_ref from = {NULL, NULL, 0}, to = {NULL, NULL, 0};
	cairn_graph g;
	graph_cmd gc;
	int rc, ex;

	if (c->nargs != 2)
		return cli_usage("path KIND:KEY KIND:KEY [--depth N] [--dir D] [--rel R,..] "
				 "[--kind K,..] [--with-values]");
	if (c->depth < 0 || c->depth > CAIRN_MAX_PATH)
		return cli_usage("--depth is 1 to %d", CAIRN_MAX_PATH);
	if ((ex = parse_ref(c->args[0], &from)) || (ex = parse_ref(c->args[1], &to))) {
		free((char *)from.kind);
		return ex;
	}
	if (!(ex = graph_begin(c, &gc, 1))) {
		rc = cairn_shortest_path(gc.t, &from, &to, (unsigned)(c->depth > 0 ? c->depth : 0),
					 &gc.hops[0].h, c->with_values, &g);
		if (rc) {
			ex = cli_fail(c, rc, "path");
		} else if ((rc = print_graph(c, gc.t, &g, c->with_values))) {
			ex = cli_fail(c, rc, "links");
		} else {
			print_summary(c, &g, 1);
			if (!g.found)
				ex = EXIT_NOTFOUND;
		}
		graph_end(&gc);
	}
	free((char *)from.kind);
	free((char *)to.kind);
	return ex;
}

static const char *const source_names[] = {"", "key", "title", "unique", "alias"};
static const char *const match_names[] = {"", "exact", "folded", "spelling", "prefix"};

/* resolve TEXT [--kind K,..] [--limit N] [--edits 1|2] [--exact] */
int cmd_resolve(cli *c)
{
	cairn_resolve_options o;
	cairn_match *m;
	cli_hop kinds;
	graph_cmd gc;
	size_t n;
	int rc, ex, truncated;

	if (c->nargs != 1)
		return cli_usage("resolve TEXT [--kind K,..] [--limit N] [--edits 1|2] [--exact]");
	if (c->limit > 100 || c->edits > 2)
		return cli_usage("--limit is at most 100, --edits 1 or 2");
	if ((ex = graph_begin(c, &gc, 1)))
		return ex;
	kinds = gc.hops[0];
	memset(&o, 0, sizeof(o));
	o.text = c->args[0];
	o.kinds = kinds.h.kinds;
	o.n_kinds = kinds.h.n_kinds;
	o.limit = c->limit > 0 ? (size_t)c->limit : 10;
	o.max_edits = (unsigned)(c->edits > 0 ? c->edits : 0);
	o.exact = c->exact;
	if (!(m = calloc(o.limit, sizeof(*m))))
		rc = CAIRN_ENOMEM;
	else
		rc = cairn_resolve(gc.t, &o, m, o.limit, &n, &truncated);
	if (rc) {
		ex = cli_fail(c, rc, "resolve");
	} else {
		for (size_t i = 0; i < n; i++) {
			const cairn_record *r = &m[i].rec;

			if (c->json) {
				out_header(stdout, r);
				printf(",\"score\":%.2f,\"source\":\"%s\",\"match\":\"%s\"", m[i].score,
				       source_names[m[i].source], match_names[m[i].match]);
				if (m[i].match == CAIRN_MATCH_SPELLING)
					printf(",\"edits\":%u", m[i].edits);
				if (m[i].attr) {
					printf(",\"attr\":");
					out_str(stdout, m[i].attr, strlen(m[i].attr));
				}
				printf(",\"reason\":");
				out_str(stdout, m[i].reason, strlen(m[i].reason));
				printf("}\n");
			} else {
				printf("%.2f  %s:%.*s  %.*s  (%s)\n", m[i].score, r->kind, (int)r->key_len,
				       r->key, (int)r->title_len, r->title, m[i].reason);
			}
		}
		if (!n && !c->json)
			printf("no Record is named so\n");
		if (truncated && !c->json)
			printf("(truncated: a step of the search stopped at its budget)\n");
		if (c->json)
			printf("{\"matches\":%zu,\"truncated\":%s}\n", n, truncated ? "true" : "false");
	}
	free(m);
	graph_end(&gc);
	return ex;
}

/* A hit's explanation as text: its terms, then its snippets with the matches in brackets. */
static void print_explain(const char *json, size_t len)
{
	arena a = ARENA_INIT;
	const jv *x = jv_parse(&a, json, len, "explain");
	const jv *terms = jv_get(x, "terms"), *snips = jv_get(x, "snippets");

	for (uint32_t i = 0; jv_is(terms, JV_ARRAY) && i < terms->len; i++) {
		const jv *t = &terms->u.items[i], *f = jv_get(t, "fields"), *e = jv_get(t, "edits");
		const jv *w = jv_get(t, "word"), *m = jv_get(t, "term"), *how = jv_get(t, "match");
		const jv *sc = jv_get(t, "score");

		if (!jv_is(w, JV_STRING) || !jv_is(m, JV_STRING) || !jv_is(how, JV_STRING) ||
		    !jv_is_number(sc))
			continue;
		printf("         %+.3f  %s", jv_number(sc), w->u.s);
		if (strcmp(w->u.s, m->u.s) != 0)
			printf(" -> %s", m->u.s);
		printf(" (%s", how->u.s);
		if (jv_is_number(e))
			printf(", %.0f edit%s", jv_number(e), jv_number(e) == 1 ? "" : "s");
		printf(") in");
		for (uint32_t j = 0; jv_is(f, JV_ARRAY) && j < f->len; j++)
			if (jv_is(&f->u.items[j], JV_STRING))
				printf(" %s", f->u.items[j].u.s);
		printf("\n");
	}
	for (uint32_t i = 0; jv_is(snips, JV_ARRAY) && i < snips->len; i++) {
		const jv *f = jv_get(&snips->u.items[i], "field"), *t = jv_get(&snips->u.items[i], "text");
		const char *p;

		if (!jv_is(f, JV_STRING) || !jv_is(t, JV_STRING))
			continue;
		printf("         %s: ", f->u.s);
		for (p = t->u.s; *p;) {
			if (strncmp(p, "<em>", 4) == 0) {
				putchar('[');
				p += 4;
			} else if (strncmp(p, "</em>", 5) == 0) {
				putchar(']');
				p += 5;
			} else {
				putchar(*p++);
			}
		}
		printf("\n");
	}
	arena_release(&a);
}

/* Hits of a search by vector or meaning: a JSON line each (with its receipt), or a text line. */
static void vector_hits(const cli *c, const cairn_hit *h, size_t n, int receipt)
{
	for (size_t i = 0; i < n; i++) {
		const cairn_record *r = &h[i].rec;

		if (c->json && receipt) {
			out_header(stdout, r);
			printf(",\"score\":%.6g,\"receipt\":%.*s}\n", h[i].score,
			       (int)h[i].explain_len, h[i].explain);
		} else if (c->json) {
			out_header(stdout, r);
			printf(",\"score\":%.6f}\n", h[i].score);
		} else {
			printf("%9.6f  %s:%.*s  %.*s\n", h[i].score, r->kind, (int)r->key_len, r->key,
			       (int)r->title_len, r->title);
		}
	}
}

/* A search's summary member saying what it left out (cairn_memory_exclude), if anything. */
static void print_excluded(const cairn_exclude *x)
{
	buf b = {0};

	wire_excluded(&b, x);
	if (b.len && !b.oom)
		fwrite(b.p, 1, b.len, stdout);
	buf_release(&b);
}

/* What a search that found nothing says it left out. */
static const char *excluded_note(const cairn_exclude *x)
{
	if (!x)
		return "";
	if (!x->valid_at_ms)
		return " (superseded and retracted memories left out: --include-inactive)";
	return x->attribute ? " (superseded and retracted memories, and what was not true at "
			      "--valid-at, left out: --include-inactive)"
			    : " (what was not true at --valid-at left out)";
}

/* search --near KIND:KEY | --vector JSON [--metric M] [--kind K,..] [--where JSON] [--limit N] */
static int vector_search(cli *c)
{
	cairn_exclude left;
	cairn_vsearch_options o;
	cairn_ref near = {0, 0, 0};
	float *q = NULL;
	char kind[CAIRN_MAX_NAME + 1];
	cairn_hit *h = NULL;
	cli_hop kinds;
	graph_cmd gc;
	arena a = ARENA_INIT;
	size_t n = 0;
	int rc = 0, ex;

	if (c->nargs || (!c->near == !c->vector))
		return cli_usage("search --near KIND:KEY | --vector JSON [--metric cosine|dot|l2] "
				 "[--kind K,..] [--where JSON] [--limit N] [--probes N] [--exact]");
	if (c->limit > 100)
		return cli_usage("--limit is at most 100");
	if (c->probes < 0 || c->probes > 65536)
		return cli_usage("--probes is 1 to 65536");
	memset(&o, 0, sizeof(o));
	if (c->metric && strcmp(c->metric, "cosine") && strcmp(c->metric, "dot") &&
	    strcmp(c->metric, "l2"))
		return cli_usage("--metric is cosine, dot or l2");
	o.metric = !c->metric || !strcmp(c->metric, "cosine") ? CAIRN_COSINE
		   : !strcmp(c->metric, "dot")		       ? CAIRN_DOT
							       : CAIRN_L2;
	if (c->near) {
		const char *colon = strchr(c->near, ':');

		if (!colon || colon == c->near || !colon[1] || (size_t)(colon - c->near) > CAIRN_MAX_NAME)
			return cli_usage("--near is KIND:KEY");
		memcpy(kind, c->near, (size_t)(colon - c->near));
		kind[colon - c->near] = '\0';
		near.kind = kind;
		near.key = colon + 1;
		o.near = &near;
	} else {
		const jv *v = jv_parse(&a, c->vector, strlen(c->vector), "--vector");

		if (!jv_is(v, JV_ARRAY) || !v->len || v->len > CAIRN_MAX_VECTOR_DIM) {
			arena_release(&a);
			return cli_usage("--vector is a JSON array of 1 to %d numbers", CAIRN_MAX_VECTOR_DIM);
		}
		if (!(q = malloc(v->len * sizeof(float)))) {
			arena_release(&a);
			return cli_fail(c, CAIRN_ENOMEM, "search");
		}
		for (uint32_t i = 0; i < v->len; i++) {
			if (!jv_is_number(&v->u.items[i])) {
				free(q);
				arena_release(&a);
				return cli_usage("--vector is a JSON array of numbers");
			}
			q[i] = (float)jv_number(&v->u.items[i]);
		}
		o.vector = q;
		o.dim = v->len;
	}
	arena_release(&a);
	if ((ex = graph_begin(c, &gc, 1))) {
		free(q);
		return ex;
	}
	kinds = gc.hops[0];
	o.kinds = kinds.h.kinds;
	o.n_kinds = kinds.h.n_kinds;
	o.limit = c->limit > 0 ? (size_t)c->limit : 20;
	o.where = c->where;
	o.probes = (size_t)c->probes;
	o.exact = c->exact;
	o.exclude = cairn_memory_exclude(gc.t, o.kinds, o.n_kinds, c->include_inactive,
					 c->valid_at_ms, &left);
	if (!(h = calloc(o.limit, sizeof(*h))))
		rc = CAIRN_ENOMEM;
	else
		rc = cairn_vsearch(gc.t, &o, h, o.limit, &n);
	if (rc) {
		ex = cli_fail(c, rc, "search");
	} else {
		vector_hits(c, h, n, 0);
		if (c->json) {
			printf("{\"hits\":%zu", n);
			print_excluded(o.exclude);
			printf("}\n");
		} else if (!n) {
			printf("no Record has a vector%s\n", excluded_note(o.exclude));
		}
	}
	free(h);
	free(q);
	graph_end(&gc);
	return ex;
}

/*
 * search --semantic|--hybrid TEXT: the text embedded by the built-in model
 * (and, hybrid, its words too), fused, ranked, each hit with its receipt.
 */
static int meaning_search(cli *c)
{
	cairn_exclude left;
	cairn_hybrid_options o;
	cairn_rank_options rk;
	cairn_embedder *e = NULL;
	cairn_ref near[64];
	char kinds_buf[64][CAIRN_MAX_NAME + 1], msg[512] = "";
	arena a = ARENA_INIT;
	cairn_hit *h = NULL;
	cli_hop kinds;
	graph_cmd gc;
	size_t n = 0;
	int rc = 0, ex;

	if (c->nargs != 1 || (c->semantic && c->hybrid))
		return cli_usage("search --semantic|--hybrid TEXT [--model FILE] [--kind K,..] "
				 "[--where JSON] [--limit N] [--fusion rrf|weighted] [--weights T,V] "
				 "[--boost-near KIND:KEY,.. [--boost N]] [--rank JSON]");
	if (c->limit > 100)
		return cli_usage("--limit is at most 100");
	if (c->probes < 0 || c->probes > 65536)
		return cli_usage("--probes is 1 to 65536");
	memset(&o, 0, sizeof(o));
	if (c->fusion && strcmp(c->fusion, "rrf") && strcmp(c->fusion, "weighted"))
		return cli_usage("--fusion is rrf or weighted");
	o.fusion = c->fusion && !strcmp(c->fusion, "weighted") ? CAIRN_FUSE_WEIGHTED : CAIRN_FUSE_RRF;
	if (c->weights) {
		char *end, *comma;
		int read = 0;

		o.text_weight = strtod(c->weights, &comma);
		if (comma != c->weights && *comma == ',') {
			o.vector_weight = strtod(comma + 1, &end);
			read = end != comma + 1 && !*end;
		}
		if (c->semantic || !read || !isfinite(o.text_weight) ||
		    !isfinite(o.vector_weight) || o.text_weight < 0 || o.vector_weight < 0 ||
		    o.text_weight + o.vector_weight <= 0)
			return cli_usage("--weights is TEXT,VECTOR, two numbers of 0 or more, not both "
					 "0 (such as 1,1), with --hybrid");
	}
	if (c->rank) {
		char err[256];
		const jv *v = jv_parse(&a, c->rank, strlen(c->rank), "--rank");

		if (!v || wire_rank_options(&a, v, &rk, err, sizeof(err))) {
			arena_release(&a);
			return cli_usage("--rank: %s", v ? err : cairn_errmsg());
		}
		o.rank = &rk;
	}
	if (c->boost_near) {
		const char *p = c->boost_near;

		while (*p && o.n_near < 64) {
			size_t len = strcspn(p, ","), kl;
			const char *colon = memchr(p, ':', len);

			kl = colon ? (size_t)(colon - p) : 0;
			if (!colon || !kl || kl > CAIRN_MAX_NAME || colon + 1 == p + len) {
				arena_release(&a);
				return cli_usage("--boost-near is KIND:KEY,...");
			}
			memcpy(kinds_buf[o.n_near], p, kl);
			kinds_buf[o.n_near][kl] = '\0';
			near[o.n_near].kind = kinds_buf[o.n_near];
			near[o.n_near].key = colon + 1;
			near[o.n_near].key_len = (size_t)(p + len - colon - 1);
			o.n_near++;
			p += len + (p[len] == ',');
		}
		o.near = near;
		o.graph_boost = c->boost > 0 ? c->boost : 1;
	}
	if ((ex = cli_open_model(c, &e, "search"))) {
		arena_release(&a);
		return ex;
	}
	if ((ex = graph_begin(c, &gc, 1))) {
		cairn_embedder_close(e);
		arena_release(&a);
		return ex;
	}
	kinds = gc.hops[0];
	o.text = c->args[0];
	o.embedder = e;
	o.kinds = kinds.h.kinds;
	o.n_kinds = kinds.h.n_kinds;
	o.where = c->where;
	o.limit = c->limit > 0 ? (size_t)c->limit : 20;
	o.probes = (size_t)c->probes;
	if (c->semantic) {
		o.text_weight = 0;
		o.vector_weight = 1;
	}
	o.exclude = cairn_memory_exclude(gc.t, o.kinds, o.n_kinds, c->include_inactive,
					 c->valid_at_ms, &left);
	if (c->semantic && wire_no_vectors(gc.t, msg, sizeof(msg)))
		rc = CAIRN_EINVAL;
	else if (!(h = calloc(o.limit, sizeof(*h))))
		rc = CAIRN_ENOMEM;
	else
		rc = cairn_hybrid(gc.t, &o, h, o.limit, &n);
	if (rc) {
		ex = *msg ? cli_fail_msg(c, rc, "search", msg) : cli_fail(c, rc, "search");
	} else {
		vector_hits(c, h, n, 1);
		if (c->json) {
			printf("{\"hits\":%zu,\"model\":\"%s\"", n, cairn_embedder_model(e));
			print_excluded(o.exclude);
			printf("}\n");
		} else if (!n) {
			printf("nothing found%s\n", excluded_note(o.exclude));
		}
	}
	free(h);
	graph_end(&gc);
	cairn_embedder_close(e);
	arena_release(&a);
	return ex;
}

/* search TEXT [--kind K,..] [--where JSON] [--limit N] [--all-words] [--no-typos] [--explain] */
int cmd_search(cli *c)
{
	cairn_exclude left;
	cairn_search_options o;
	cairn_search_info info;
	cairn_hit *h;
	cli_hop kinds;
	graph_cmd gc;
	size_t n = 0;
	int rc, ex;

	if ((ex = cli_valid_at(c, &c->valid_at_ms)))
		return ex;
	if (c->near || c->vector)
		return vector_search(c);
	if (c->semantic || c->hybrid)
		return meaning_search(c);
	if (c->nargs != 1)
		return cli_usage("search TEXT [--kind K,..] [--where JSON] [--limit N] [--all-words] "
				 "[--no-typos] [--explain]");
	if (c->limit > 100)
		return cli_usage("--limit is at most 100");
	if ((ex = graph_begin(c, &gc, 1)))
		return ex;
	kinds = gc.hops[0];
	memset(&o, 0, sizeof(o));
	o.text = c->args[0];
	o.kinds = kinds.h.kinds;
	o.n_kinds = kinds.h.n_kinds;
	o.limit = c->limit > 0 ? (size_t)c->limit : 20;
	o.all_words = c->all_words;
	o.no_typos = c->no_typos;
	o.explain = c->explain;
	o.where = c->where;
	o.exclude = cairn_memory_exclude(gc.t, o.kinds, o.n_kinds, c->include_inactive,
					 c->valid_at_ms, &left);
	if (!(h = calloc(o.limit, sizeof(*h))))
		rc = CAIRN_ENOMEM;
	else
		rc = cairn_search(gc.t, &o, h, o.limit, &n, &info);
	if (rc) {
		ex = cli_fail(c, rc, "search");
	} else {
		for (size_t i = 0; i < n; i++) {
			const cairn_record *r = &h[i].rec;

			if (c->json) {
				out_header(stdout, r);
				printf(",\"score\":%.4f,\"words\":%u", h[i].score, h[i].words);
				if (h[i].explain)
					printf(",\"explain\":%.*s", (int)h[i].explain_len, h[i].explain);
				printf("}\n");
			} else {
				printf("%7.3f  %s:%.*s  %.*s%s\n", h[i].score, r->kind, (int)r->key_len, r->key,
				       (int)r->title_len, r->title,
				       h[i].words < info.words ? "  (some of the words)" : "");
				if (h[i].explain)
					print_explain(h[i].explain, h[i].explain_len);
			}
		}
		if (c->json) {
			printf("{\"hits\":%zu,\"matches\":%llu,\"partial\":%zu,\"corrected\":%zu,"
			       "\"stopped\":%llu",
			       n, (unsigned long long)info.matches, info.partial, info.corrected,
			       (unsigned long long)info.stopped);
			print_excluded(o.exclude);
			printf("}\n");
		} else if (!n) {
			printf("no Record has the words%s\n", excluded_note(o.exclude));
		}
	}
	free(h);
	graph_end(&gc);
	return ex;
}
