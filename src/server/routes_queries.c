/*
 * The routes of reads that look for Records: queries and their counts,
 * graph walks and paths, resolution, and search (full-text, by meaning,
 * hybrid).
 */
#include <string.h>

#include "server/internal.h"

/* ------------------------------------------------------------- queries -- */

/*
 * POST /v1/domains/{d}/query {"kind","where","sort","after","limit","fields","explain"}
 * and ?branch= ?at= as for every read.
 */
void h_query(req *r)
{
	static const char *const names[] = {"kind", "where", "sort", "after", "limit", "fields",
					    "explain", NULL};
	const char *d = r->seg[2];
	cairn_query_options q;
	cairn_query_result res;
	cairn_record *out;
	const jv *o, *w, *lim, *f;
	const char **fields = NULL;
	buf where = BUF_INIT;
	cairn_txn *t;
	int rc;

	if (api_allow(r, d, NEED_READ, NULL) || !(o = api_body_object(r)) || api_only(r, o, names))
		return;
	memset(&q, 0, sizeof(q));
	if (api_str_member(r, o, "kind", &q.kind) || api_str_member(r, o, "sort", &q.sort) ||
	    api_str_member(r, o, "after", &q.after))
		return;
	if (!q.kind)
		return reply_error(r, 400, cairn_errname(CAIRN_EINVAL), "\"kind\" is required");
	if ((w = jv_get(o, "where")) && w->type != JV_NULL) {
		if (w->type != JV_OBJECT)
			return reply_error(r, 400, cairn_errname(CAIRN_EQUERY),
					   "where: a filter is an object");
		jv_canon(w, &where);
		q.where = (const char *)where.p;
		q.where_len = where.len;
	}
	q.limit = 50;
	if ((lim = jv_get(o, "limit")) && lim->type != JV_NULL) {
		if (lim->type != JV_INT || lim->u.i < 1 || lim->u.i > CAIRN_MAX_PAGE) {
			buf_release(&where);
			return reply_error(r, 400, cairn_errname(CAIRN_EINVAL), "limit is 1 to %d",
					   CAIRN_MAX_PAGE);
		}
		q.limit = (size_t)lim->u.i;
	}
	if ((f = jv_get(o, "fields")) && f->type != JV_NULL) {
		if (f->type != JV_ARRAY || !(fields = arena_alloc(&r->mem, (f->len + 1) * sizeof(char *)))) {
			buf_release(&where);
			return reply_error(r, 400, cairn_errname(CAIRN_ETYPE),
					   "fields is an array of attribute names");
		}
		for (uint32_t i = 0; i < f->len; i++) {
			if (f->u.items[i].type != JV_STRING) {
				buf_release(&where);
				return reply_error(r, 400, cairn_errname(CAIRN_ETYPE),
						   "fields is an array of attribute names");
			}
			if (jv_str_nul(&f->u.items[i])) {
				buf_release(&where);
				return reply_error(r, 400, cairn_errname(CAIRN_EINVAL),
						   "fields[%u] " JSON_NUL_REFUSED, i);
			}
			fields[i] = f->u.items[i].u.s;
		}
		q.fields = fields;
		q.n_fields = f->len;
	}
	if (api_bool_member(r, o, "explain", &q.explain)) {
		buf_release(&where);
		return;
	}
	if (api_begin(r, d, &t)) {
		buf_release(&where);
		return;
	}
	out = arena_alloc(&r->mem, q.limit * sizeof(*out));
	rc = out ? cairn_query(t, &q, out, q.limit, &res) : CAIRN_ENOMEM;
	buf_release(&where);
	if (rc) {
		cairn_txn_end(t);
		return reply_cairn(r, rc);
	}
	PUTS(&r->out, "{\"items\":[");
	for (size_t i = 0; i < res.n; i++) {
		if (i)
			buf_put_u8(&r->out, ',');
		wire_record(&r->out, &out[i]);
	}
	PUTS(&r->out, "],\"next\":");
	wire_cstr(&r->out, res.next);
	buf_printf(&r->out, ",\"scanned\":%s,\"entries\":%llu,\"checked\":%llu,\"matched\":%llu",
		   res.scanned ? "true" : "false", (unsigned long long)res.entries,
		   (unsigned long long)res.candidates, (unsigned long long)res.matched);
	if (res.plan) {
		PUTS(&r->out, ",\"plan\":");
		wire_cstr(&r->out, res.plan);
	}
	buf_put_u8(&r->out, '}');
	api_reply_read(r, t);
	cairn_txn_end(t);
}

struct groups_out {
	req *r;
	int first;
};

static int w_group(void *ctx, const char *value, size_t len, uint64_t n)
{
	struct groups_out *g = ctx;

	if (!g->first)
		buf_put_u8(&g->r->out, ',');
	g->first = 0;
	PUTS(&g->r->out, "{\"value\":");
	buf_put(&g->r->out, value, len);
	buf_printf(&g->r->out, ",\"count\":%llu}", (unsigned long long)n);
	return 0;
}

/* POST /v1/domains/{d}/query/count {"kind","where","group_by"}. */
void h_query_count(req *r)
{
	static const char *const names[] = {"kind", "where", "group_by", NULL};
	const char *d = r->seg[2], *kind, *by;
	struct groups_out g = {r, 1};
	const jv *o, *w;
	buf where = BUF_INIT;
	uint64_t total = 0;
	cairn_txn *t;
	int rc;

	if (api_allow(r, d, NEED_READ, NULL) || !(o = api_body_object(r)) ||
	    api_only(r, o, names) || api_str_member(r, o, "kind", &kind) ||
	    api_str_member(r, o, "group_by", &by))
		return;
	if (!kind)
		return reply_error(r, 400, cairn_errname(CAIRN_EINVAL), "\"kind\" is required");
	if ((w = jv_get(o, "where")) && w->type != JV_NULL) {
		if (w->type != JV_OBJECT)
			return reply_error(r, 400, cairn_errname(CAIRN_EQUERY),
					   "where: a filter is an object");
		jv_canon(w, &where);
	}
	if (api_begin(r, d, &t)) {
		buf_release(&where);
		return;
	}
	PUTS(&r->out, "{\"groups\":[");
	rc = cairn_query_count(t, kind, (const char *)where.p, where.len, by, w_group, &g, &total);
	buf_release(&where);
	if (rc) {
		cairn_txn_end(t);
		return reply_cairn(r, rc);
	}
	buf_printf(&r->out, "],\"total\":%llu}", (unsigned long long)total);
	api_reply_read(r, t);
	cairn_txn_end(t);
}

/* ---------------------------------------------------------------- graph -- */

/* Reply with a graph answer, and found for a path. */
static void reply_graph(req *r, cairn_txn *t, const cairn_graph *g, int values, int path)
{
	int rc;

	buf_put_u8(&r->out, '{');
	if ((rc = wire_graph(&r->out, t, g, values, 0, SIZE_MAX)))
		return reply_cairn(r, rc);
	if (path)
		buf_printf(&r->out, ",\"found\":%s", g->found ? "true" : "false");
	buf_printf(&r->out, ",\"entries\":%llu}", (unsigned long long)g->entries);
	api_reply_read(r, t);
}

/* POST /v1/domains/{d}/neighborhood */
void h_neighborhood(req *r)
{
	static const char *const names[] = {"start", "depth", "hops", "fanout", "max_nodes", "values",
					    NULL};
	const char *d = r->seg[2];
	cairn_neighborhood_options o = {0};
	const jv *b, *st, *hv;
	cairn_ref *refs;
	cairn_hop *hops = NULL;
	long depth, fanout, max_nodes;
	char err[256], what[32];
	cairn_graph g;
	cairn_txn *t;
	int rc;

	if (api_allow(r, d, NEED_READ, NULL) || !(b = api_body_object(r)) ||
	    api_only(r, b, names) || api_int_member(r, b, "depth", 1, CAIRN_MAX_DEPTH, &depth) ||
	    api_int_member(r, b, "fanout", 1, CAIRN_MAX_NODES, &fanout) ||
	    api_int_member(r, b, "max_nodes", 1, CAIRN_MAX_NODES, &max_nodes) ||
	    api_bool_member(r, b, "values", &o.values))
		return;
	st = jv_get(b, "start");
	if (!st || st->type != JV_ARRAY || !st->len || st->len > CAIRN_MAX_NODES)
		return reply_error(r, 400, cairn_errname(CAIRN_EINVAL),
				   "start is an array of 1 to %d Records as \"Kind:key\"", CAIRN_MAX_NODES);
	if (!(refs = arena_alloc(&r->mem, st->len * sizeof(*refs))))
		return reply_cairn(r, CAIRN_ENOMEM);
	for (uint32_t i = 0; i < st->len; i++) {
		snprintf(what, sizeof(what), "start[%u]", i);
		if (wire_ref(&r->mem, &st->u.items[i], what, &refs[i], err, sizeof(err)))
			return reply_error(r, 400, cairn_errname(CAIRN_EINVAL), "%s", err);
	}
	if ((hv = jv_get(b, "hops")) && hv->type != JV_NULL) {
		if (hv->type != JV_ARRAY || !hv->len || hv->len > CAIRN_MAX_DEPTH)
			return reply_error(r, 400, cairn_errname(CAIRN_EINVAL),
					   "hops is an array of 1 to %d hops", CAIRN_MAX_DEPTH);
		if (!(hops = arena_alloc(&r->mem, hv->len * sizeof(*hops))))
			return reply_cairn(r, CAIRN_ENOMEM);
		for (uint32_t i = 0; i < hv->len; i++) {
			snprintf(what, sizeof(what), "hops[%u]", i);
			if (wire_hop(&r->mem, &hv->u.items[i], what, &hops[i], err, sizeof(err)))
				return reply_error(r, 400, cairn_errname(CAIRN_EINVAL), "%s", err);
		}
		o.hops = hops;
		o.n_hops = hv->len;
	}
	o.start = refs;
	o.n_start = st->len;
	o.depth = (unsigned)(depth ? depth : hops ? (long)o.n_hops : 1);
	o.fanout = (size_t)fanout;
	o.max_nodes = (size_t)max_nodes;
	if (api_begin(r, d, &t))
		return;
	if ((rc = cairn_neighborhood(t, &o, &g))) {
		cairn_txn_end(t);
		return reply_cairn(r, rc);
	}
	reply_graph(r, t, &g, o.values, 0);
	cairn_txn_end(t);
}

/* POST /v1/domains/{d}/follow */
void h_follow(req *r)
{
	static const char *const names[] = {"start", "steps", "max_nodes", "values", NULL};
	const char *d = r->seg[2];
	const jv *b, *sv;
	cairn_ref start;
	cairn_hop *steps;
	long max_nodes;
	char err[256], what[32];
	cairn_graph g;
	cairn_txn *t;
	int rc, values;

	if (api_allow(r, d, NEED_READ, NULL) || !(b = api_body_object(r)) ||
	    api_only(r, b, names) ||
	    api_int_member(r, b, "max_nodes", 1, CAIRN_MAX_NODES, &max_nodes) ||
	    api_bool_member(r, b, "values", &values))
		return;
	if (wire_ref(&r->mem, jv_get(b, "start"), "start", &start, err, sizeof(err)))
		return reply_error(r, 400, cairn_errname(CAIRN_EINVAL), "%s", err);
	sv = jv_get(b, "steps");
	if (!sv || sv->type != JV_ARRAY || !sv->len || sv->len > CAIRN_MAX_PATH)
		return reply_error(r, 400, cairn_errname(CAIRN_EINVAL),
				   "steps is an array of 1 to %d hops", CAIRN_MAX_PATH);
	if (!(steps = arena_alloc(&r->mem, sv->len * sizeof(*steps))))
		return reply_cairn(r, CAIRN_ENOMEM);
	for (uint32_t i = 0; i < sv->len; i++) {
		snprintf(what, sizeof(what), "steps[%u]", i);
		if (wire_hop(&r->mem, &sv->u.items[i], what, &steps[i], err, sizeof(err)))
			return reply_error(r, 400, cairn_errname(CAIRN_EINVAL), "%s", err);
	}
	if (api_begin(r, d, &t))
		return;
	if ((rc = cairn_follow(t, &start, steps, sv->len, (size_t)max_nodes, values, &g))) {
		cairn_txn_end(t);
		return reply_cairn(r, rc);
	}
	reply_graph(r, t, &g, values, 0);
	cairn_txn_end(t);
}

/* POST /v1/domains/{d}/path */
void h_path(req *r)
{
	static const char *const names[] = {"from", "to", "max_depth", "hop", "values", NULL};
	const char *d = r->seg[2];
	const jv *b;
	cairn_ref from, to;
	cairn_hop hop;
	long max_depth;
	char err[256];
	cairn_graph g;
	cairn_txn *t;
	int rc, values;

	if (api_allow(r, d, NEED_READ, NULL) || !(b = api_body_object(r)) ||
	    api_only(r, b, names) ||
	    api_int_member(r, b, "max_depth", 1, CAIRN_MAX_PATH, &max_depth) ||
	    api_bool_member(r, b, "values", &values))
		return;
	if (wire_ref(&r->mem, jv_get(b, "from"), "from", &from, err, sizeof(err)) ||
	    wire_ref(&r->mem, jv_get(b, "to"), "to", &to, err, sizeof(err)) ||
	    wire_hop(&r->mem, jv_get(b, "hop"), "hop", &hop, err, sizeof(err)))
		return reply_error(r, 400, cairn_errname(CAIRN_EINVAL), "%s", err);
	if (api_begin(r, d, &t))
		return;
	if ((rc = cairn_shortest_path(t, &from, &to, (unsigned)max_depth, &hop, values, &g))) {
		cairn_txn_end(t);
		return reply_cairn(r, rc);
	}
	reply_graph(r, t, &g, values, 1);
	cairn_txn_end(t);
}

/* POST /v1/domains/{d}/resolve */
void h_resolve(req *r)
{
	static const char *const names[] = {"text", "kinds", "limit", "max_edits", "exact", "values",
					    NULL};
	const char *d = r->seg[2];
	cairn_resolve_options o;
	cairn_match *m;
	char err[256];
	const jv *b;
	cairn_txn *t;
	size_t n;
	long limit;
	int rc, values, truncated;

	if (api_allow(r, d, NEED_READ, NULL) || !(b = api_body_object(r)) ||
	    api_only(r, b, names) || api_bool_member(r, b, "values", &values) ||
	    api_int_member(r, b, "limit", 1, 100, &limit))
		return;
	if (wire_resolve_options(&r->mem, b, &o, err, sizeof(err)))
		return reply_error(r, 400, cairn_errname(CAIRN_EINVAL), "%s", err);
	o.limit = limit ? (size_t)limit : 10;
	if (!(m = arena_alloc(&r->mem, o.limit * sizeof(*m))))
		return reply_cairn(r, CAIRN_ENOMEM);
	if (api_begin(r, d, &t))
		return;
	if ((rc = cairn_resolve(t, &o, m, o.limit, &n, &truncated))) {
		cairn_txn_end(t);
		return reply_cairn(r, rc);
	}
	buf_put_u8(&r->out, '{');
	wire_matches(&r->out, m, n, truncated, values);
	buf_put_u8(&r->out, '}');
	api_reply_read(r, t);
	cairn_txn_end(t);
}

/* POST /v1/domains/{d}/search with "near" or "vector": vector search. */
static void h_vsearch(req *r, const jv *b, long limit, int values, int inactive, int64_t valid_at)
{
	static const char *const only_v[] = {"near",  "vector", "metric",	    "kinds",
					     "where", "limit",  "values",	    "probes",
					     "exact", "include_inactive", "valid_at", NULL};
	cairn_vsearch_options o;
	cairn_exclude ex;
	cairn_ref near = {0, 0, 0};
	cairn_search_info info;
	cairn_hit *h;
	char err[256];
	cairn_txn *t;
	size_t n;
	int rc;

	if (api_only(r, b, only_v))
		return;
	if (wire_vsearch_options(&r->mem, b, &o, &near, err, sizeof(err)))
		return reply_error(r, 400, cairn_errname(CAIRN_EINVAL), "%s", err);
	o.limit = limit ? (size_t)limit : 20;
	if (!(h = arena_alloc(&r->mem, o.limit * sizeof(*h))))
		return reply_cairn(r, CAIRN_ENOMEM);
	if (api_begin(r, r->seg[2], &t))
		return;
	o.exclude = cairn_memory_exclude(t, o.kinds, o.n_kinds, inactive, valid_at, &ex);
	if ((rc = cairn_vsearch(t, &o, h, o.limit, &n))) {
		cairn_txn_end(t);
		return reply_cairn(r, rc);
	}
	memset(&info, 0, sizeof(info));
	buf_put_u8(&r->out, '{');
	wire_hits(&r->out, h, n, &info, values);
	wire_excluded(&r->out, o.exclude);
	buf_put_u8(&r->out, '}');
	api_reply_read(r, t);
	cairn_txn_end(t);
}

/*
 * POST /v1/domains/{d}/search with "hybrid" or "semantic": words and
 * meaning fused (semantic: meaning only), memory-aware ranking, receipts.
 */
static void h_hybrid(req *r, const jv *b, long limit, int values, int semantic, int inactive,
		     int64_t valid_at)
{
	cairn_hybrid_options o;
	cairn_exclude ex;
	cairn_rank_options rk;
	cairn_search_info info;
	cairn_hit *h;
	char err[256];
	cairn_txn *t;
	size_t n;
	int rc;

	if (wire_hybrid_options(&r->mem, b, &o, &rk, err, sizeof(err)))
		return reply_error(r, 400, cairn_errname(CAIRN_EINVAL), "%s", err);
	o.limit = limit ? (size_t)limit : 20;
	o.embedder = r->s->emb;
	if (!o.text && !o.vector)
		return reply_error(r, 400, cairn_errname(CAIRN_EINVAL),
				   "a hybrid or semantic search needs a text or a vector");
	if (semantic) {
		if (!o.vector && !o.embedder)
			return reply_error(r, 400, cairn_errname(CAIRN_EINVAL),
					   "a semantic search of a text needs a model: start the "
					   "server with --model, or send a vector");
		o.text_weight = 0;
		o.vector_weight = 1;
	}
	if (!(h = arena_alloc(&r->mem, o.limit * sizeof(*h))))
		return reply_cairn(r, CAIRN_ENOMEM);
	if (api_begin(r, r->seg[2], &t))
		return;
	if (semantic && wire_no_vectors(t, err, sizeof(err))) {
		cairn_txn_end(t);
		return reply_error(r, 400, cairn_errname(CAIRN_EINVAL), "%s", err);
	}
	o.exclude = cairn_memory_exclude(t, o.kinds, o.n_kinds, inactive, valid_at, &ex);
	if ((rc = cairn_hybrid(t, &o, h, o.limit, &n))) {
		cairn_txn_end(t);
		return reply_cairn(r, rc);
	}
	memset(&info, 0, sizeof(info));
	buf_put_u8(&r->out, '{');
	wire_hits_as(&r->out, h, n, &info, values, "receipt");
	wire_excluded(&r->out, o.exclude);
	buf_printf(&r->out, ",\"model\":");
	if (o.embedder && !o.vector)
		json_quote(&r->out, cairn_embedder_model(o.embedder),
			   strlen(cairn_embedder_model(o.embedder)));
	else
		buf_puts(&r->out, "null");
	buf_put_u8(&r->out, '}');
	api_reply_read(r, t);
	cairn_txn_end(t);
}

/* POST /v1/domains/{d}/search */
void h_search(req *r)
{
	static const char *const names[] = {"text",	 "kinds",    "limit",  "values",
					    "all_words", "no_typos", "where",  "explain",
					    "near",	 "vector",   "metric", "probes",
					    "exact",	 "hybrid",   "semantic", "fusion",
					    "rrf_k",	 "weights",  "near_records", "graph_boost",
					    "rank",	 "include_inactive", "valid_at", NULL};
	const char *d = r->seg[2];
	cairn_search_options o;
	cairn_exclude ex;
	int64_t valid_at;
	cairn_search_info info;
	cairn_hit *h;
	char err[256];
	const jv *b;
	cairn_txn *t;
	size_t n;
	long limit;
	int rc, values, hybrid = 0, semantic = 0, inactive = 0;

	if (api_allow(r, d, NEED_READ, NULL) || !(b = api_body_object(r)) ||
	    api_only(r, b, names) || api_bool_member(r, b, "values", &values) ||
	    api_int_member(r, b, "limit", 1, 100, &limit) ||
	    api_bool_member(r, b, "hybrid", &hybrid) ||
	    api_bool_member(r, b, "semantic", &semantic) ||
	    api_bool_member(r, b, "include_inactive", &inactive))
		return;
	if (wire_valid_at(b, &valid_at, err, sizeof(err)))
		return reply_error(r, 400, cairn_errname(CAIRN_EINVAL), "%s", err);
	if (hybrid && semantic)
		return reply_error(r, 400, cairn_errname(CAIRN_EINVAL),
				   "a search is hybrid or semantic, not both");
	if (hybrid || semantic) {
		static const char *const only_h[] = {
			"text",	  "vector",	  "kinds",	  "where", "limit", "values",
			"hybrid", "semantic",	  "fusion",	  "rrf_k", "weights",
			"rank",	  "near_records", "graph_boost", "probes", "include_inactive",
			"valid_at", NULL};

		if (api_only(r, b, only_h))
			return;
		return h_hybrid(r, b, limit, values, semantic, inactive, valid_at);
	}
	{
		static const char *const fusion_only[] = {"fusion", "rrf_k", "weights", "near_records",
							  "graph_boost", "rank", NULL};

		for (int i = 0; fusion_only[i]; i++)
			if (jv_get(b, fusion_only[i]))
				return reply_error(r, 400, cairn_errname(CAIRN_EINVAL),
						   "%s is for a hybrid or semantic search", fusion_only[i]);
	}
	if (wire_is_vsearch(b))
		return h_vsearch(r, b, limit, values, inactive, valid_at);
	if (wire_search_options(&r->mem, b, &o, err, sizeof(err)))
		return reply_error(r, 400, cairn_errname(CAIRN_EINVAL), "%s", err);
	o.limit = limit ? (size_t)limit : 20;
	if (!(h = arena_alloc(&r->mem, o.limit * sizeof(*h))))
		return reply_cairn(r, CAIRN_ENOMEM);
	if (api_begin(r, d, &t))
		return;
	o.exclude = cairn_memory_exclude(t, o.kinds, o.n_kinds, inactive, valid_at, &ex);
	if ((rc = cairn_search(t, &o, h, o.limit, &n, &info))) {
		cairn_txn_end(t);
		return reply_cairn(r, rc);
	}
	buf_put_u8(&r->out, '{');
	wire_hits(&r->out, h, n, &info, values);
	wire_excluded(&r->out, o.exclude);
	buf_put_u8(&r->out, '}');
	api_reply_read(r, t);
	cairn_txn_end(t);
}
