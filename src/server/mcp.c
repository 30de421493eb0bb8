/*
 * MCP, the Model Context Protocol (revision 2025-06-18): JSON-RPC 2.0
 * messages answered with the store's tools. The same handler serves stdio
 * (cairn mcp, one message per line) and streamable HTTP (POST /mcp, one
 * message per request, answered as application/json).
 *
 * The tools are what an agent needs to remember and recall: remember a
 * Record with its provenance, link two Records, get one, list a Kind,
 * look at a Record's neighborhood, its history and lineage, describe the
 * schema, make a branch and propose it. Results are sized for a context
 * window: headers (kind, key, title) first, values when asked, a cursor
 * for more. Tools that write are listed and callable only when writes are
 * allowed (a writer token, or cairn mcp --writes).
 */
#include <stdlib.h>
#include <string.h>

#include "wire/wire.h"
#include "server/mcp.h"
#include "base/alloc.h"
#include "base/err.h"
#include "base/text.h"

#define PROTOCOL "2025-06-18"

/* JSON-RPC error codes. */
enum { RPC_PARSE = -32700, RPC_INVALID = -32600, RPC_METHOD = -32601, RPC_PARAMS = -32602 };

typedef struct call {
	mcp_ctx *c;
	arena *mem;
	const jv *args;
	buf *out;	/* the tool's result object, as JSON */
	char err[1024]; /* a tool error: shown to the model, isError */
} call;

/* ------------------------------------------------------------ schemas -- */

#define STR "{\"type\":\"string\"}"
#define INT "{\"type\":\"integer\"}"
#define BOOL "{\"type\":\"boolean\"}"
#define AT "\"at\":{\"type\":\"string\",\"description\":\"read as of a revision number or an RFC 3339 time\"}"
#define BRANCH "\"branch\":{\"type\":\"string\",\"description\":\"default main\"}"

typedef struct tool {
	const char *name, *title, *description, *input;
	int writes;
	int (*fn)(call *k);
} tool;

static int t_describe(call *k);
static int t_get(call *k);
static int t_list(call *k);
static int t_neighborhood(call *k);
static int t_resolve(call *k);
static int t_search(call *k);
static int t_history(call *k);
static int t_lineage(call *k);
static int t_remember(call *k);
static int t_link(call *k);
static int t_branch(call *k);
static int t_propose(call *k);

static const tool tools[] = {
	{"describe", "Describe the memory",
	 "What this memory holds: its Kinds (types of Records) with their attributes, its Relations "
	 "(types of Links between Records), and how many Records of each Kind there are. Call it "
	 "first to learn which kinds and attributes exist.",
	 "{\"type\":\"object\",\"properties\":{" BRANCH "," AT "}}", 0, t_describe},
	{"get", "Get a Record",
	 "One Record by kind and key: its title, its values, and who last changed it, when, from "
	 "which source and with what confidence.",
	 "{\"type\":\"object\",\"required\":[\"kind\",\"key\"],\"properties\":{\"kind\":" STR
	 ",\"key\":" STR "," BRANCH "," AT "}}",
	 0, t_get},
	{"list", "List Records of a Kind",
	 "Records of one kind in key order: key and title only unless values is true. Pass the "
	 "returned next as after for more.",
	 "{\"type\":\"object\",\"required\":[\"kind\"],\"properties\":{\"kind\":" STR ",\"after\":" STR
	 ",\"limit\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":100},\"values\":" BOOL "," BRANCH
	 "," AT "}}",
	 0, t_list},
	{"neighborhood", "The Records around a Record",
	 "The Records linked to one Record, and with depth 2 or 3 the Records linked to those: "
	 "each with its depth and title, and the Links between them (rel, from, to as Kind:key). "
	 "Narrow it with dir (out, in, both), rels and kinds (the Kinds reached). Hubs are cut at "
	 "fanout Links per Record and the answer at limit Records; truncated says when.",
	 "{\"type\":\"object\",\"required\":[\"kind\",\"key\"],\"properties\":{\"kind\":" STR
	 ",\"key\":" STR ",\"depth\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":3},\"dir\":"
	 "{\"type\":\"string\",\"enum\":[\"out\",\"in\",\"both\"]},\"rels\":{\"type\":\"array\","
	 "\"items\":" STR "},\"kinds\":{\"type\":\"array\",\"items\":" STR "},\"fanout\":{\"type\":"
	 "\"integer\",\"minimum\":1,\"maximum\":100},\"limit\":{\"type\":\"integer\",\"minimum\":1,"
	 "\"maximum\":200},\"values\":" BOOL "," BRANCH "," AT "}}",
	 0, t_neighborhood},
	{"resolve", "Find the Records a name names",
	 "Before you remember something, look whether it is known already: the Records a text (a "
	 "name, an identifier, a phrase) most likely names, best first, each with a score from 0 "
	 "to 1 and the reason (its key, title, a unique value or an alias; the same ignoring case "
	 "and accents; a close spelling; a name that starts with the text). Narrow it with kinds.",
	 "{\"type\":\"object\",\"required\":[\"text\"],\"properties\":{\"text\":" STR
	 ",\"kinds\":{\"type\":\"array\",\"items\":" STR "},\"limit\":{\"type\":\"integer\","
	 "\"minimum\":1,\"maximum\":20},\"exact\":" BOOL "," BRANCH "," AT "}}",
	 0, t_resolve},
	{"search", "Search by words",
	 "The Records whose title and searchable values hold every word of a text, best first "
	 "by BM25, each with its score, then (when few have them all) Records with some of the "
	 "words, words saying how many: for what you know by its words rather than its name. "
	 "Words match as written and by their stem, close spellings count for less, and a word "
	 "ending in * stands for the words that start with it. Narrow it with kinds, and with "
	 "kinds, with where: a filter on their attributes ({\"status\":\"open\"}, "
	 "{\"amount\":{\"gte\":100}}). Words in double quotes are a phrase, in a row. explain: "
	 "why each hit matched (terms, fields, snippets with <em> marks). Instead of text, near "
	 "({\"kind\",\"key\"}) finds the Records whose vectors are closest to that Record's. "
	 "mode: hybrid (the default when the server has a model: words and meaning fused, each "
	 "hit with a receipt of its score's parts), words, or semantic (meaning only). rank "
	 "weighs memories: {\"confidence\":true, \"trust\":{source or actor: weight}, "
	 "\"half_life_days\":30, \"time_attribute\":name, \"status_attribute\":name, "
	 "\"exclude\":[values], \"demote\":[values]}.",
	 "{\"type\":\"object\",\"properties\":{\"text\":" STR
	 ",\"near\":{\"type\":\"object\",\"properties\":{\"kind\":" STR ",\"key\":" STR "}}"
	 ",\"kinds\":{\"type\":\"array\",\"items\":" STR "},\"where\":{\"type\":\"object\"},"
	 "\"limit\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":20},\"all_words\":" BOOL
	 ",\"explain\":" BOOL ",\"mode\":{\"type\":\"string\",\"enum\":[\"hybrid\",\"words\","
	 "\"semantic\"]},\"rank\":{\"type\":\"object\"}," BRANCH "," AT "}}",
	 0, t_search},
	{"history", "History of a Record",
	 "How a Record came to be: its versions newest first, each with what changed (before and "
	 "after per attribute) and who changed it, when, from which source.",
	 "{\"type\":\"object\",\"required\":[\"kind\",\"key\"],\"properties\":{\"kind\":" STR
	 ",\"key\":" STR ",\"limit\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":50},\"cursor\":" STR
	 "," BRANCH "," AT "}}",
	 0, t_history},
	{"lineage", "Lineage of a Record",
	 "For each current value of a Record, the change that set it: who, when, from which "
	 "source, with what confidence.",
	 "{\"type\":\"object\",\"required\":[\"kind\",\"key\"],\"properties\":{\"kind\":" STR
	 ",\"key\":" STR "," BRANCH "," AT "}}",
	 0, t_lineage},
	{"remember", "Remember a Record",
	 "Store what you learned as a Record: kind, key, an optional title and values. Values are "
	 "merged into an existing Record (null removes one). Say where it came from (source), how "
	 "sure you are (confidence, 0 to 1) and why (message): they are kept with it.",
	 "{\"type\":\"object\",\"required\":[\"kind\",\"key\"],\"properties\":{\"kind\":" STR
	 ",\"key\":" STR ",\"title\":" STR ",\"values\":{\"type\":\"object\"},\"source\":" STR
	 ",\"confidence\":{\"type\":\"number\",\"minimum\":0,\"maximum\":1},\"message\":" STR
	 "," BRANCH "}}",
	 1, t_remember},
	{"link", "Link two Records",
	 "Record a relation between two Records, named as Kind:key, with optional values.",
	 "{\"type\":\"object\",\"required\":[\"rel\",\"from\",\"to\"],\"properties\":{\"rel\":" STR
	 ",\"from\":{\"type\":\"string\",\"description\":\"Kind:key\"},\"to\":{\"type\":\"string\","
	 "\"description\":\"Kind:key\"},\"values\":{\"type\":\"object\"},\"source\":" STR
	 ",\"confidence\":{\"type\":\"number\",\"minimum\":0,\"maximum\":1},\"message\":" STR
	 "," BRANCH "}}",
	 1, t_link},
	{"branch", "Make a branch",
	 "Make a branch of your own to work on without touching main (from another branch, or "
	 "main). Write to it with branch, then propose it.",
	 "{\"type\":\"object\",\"required\":[\"name\"],\"properties\":{\"name\":" STR ",\"from\":" STR
	 "}}",
	 1, t_branch},
	{"propose", "Propose a branch",
	 "Offer a branch for review and merge into main (or target), with a title and a "
	 "description of what changed and why.",
	 "{\"type\":\"object\",\"required\":[\"source\",\"title\"],\"properties\":{\"source\":" STR
	 ",\"target\":" STR ",\"title\":" STR ",\"description\":" STR "}}",
	 1, t_propose},
};

/* ------------------------------------------------------------ helpers -- */

static const char *s_arg(call *k, const char *name)
{
	const jv *v = jv_get(k->args, name);

	return v && v->type == JV_STRING ? v->u.s : NULL;
}

/* A string argument that must be there, or the tool fails with a word for the model. */
static int need(call *k, const char *name, const char **out)
{
	const jv *v = jv_get(k->args, name);

	if (!v || v->type != JV_STRING || !v->len) {
		snprintf(k->err, sizeof(k->err), "\"%s\" is required, a non-empty string", name);
		return -1;
	}
	*out = v->u.s;
	return 0;
}

static int lib_fail(call *k, int rc)
{
	const char *m = cairn_errmsg();

	snprintf(k->err, sizeof(k->err), "%s: %s", cairn_errname(rc), *m ? m : cairn_strerror(rc));
	return -1;
}

static int begin(call *k, cairn_txn **t)
{
	cairn_read_options ro = {0};
	const char *at = s_arg(k, "at");
	int rc;

	ro.domain = k->c->domain;
	ro.branch = s_arg(k, "branch");
	if (at) {
		char *end;
		unsigned long long rev = strtoull(at, &end, 10);

		if (*at && !*end && rev > 0)
			ro.at_revision = rev;
		else if (time_parse_rfc3339(at, strlen(at), &ro.at_time_ms)) {
			snprintf(k->err, sizeof(k->err),
				 "at is a revision number or an RFC 3339 time, not %s", at);
			return -1;
		}
	}
	if ((rc = cairn_txn_begin(k->c->st, &ro, t)))
		return lib_fail(k, rc);
	return 0;
}

static long int_arg(call *k, const char *name, long def, long lo, long hi)
{
	const jv *v = jv_get(k->args, name);

	if (!v || v->type != JV_INT)
		return def;
	return v->u.i < lo ? lo : v->u.i > hi ? hi : (long)v->u.i;
}

static void w_prov(buf *b, const cairn_revision *r)
{
	buf_printf(b, "{\"revision\":%llu,\"branch\":", (unsigned long long)r->revision);
	json_quote(b, r->branch, strlen(r->branch));
	buf_put(b, ",\"time\":", 8);
	{
		char t[48];

		time_format_ms(r->time_ms, t);
		json_quote(b, t, strlen(t));
	}
	buf_put(b, ",\"actor\":", 9);
	json_quote(b, r->actor, r->actor_len);
	if (r->source_len) {
		buf_put(b, ",\"source\":", 10);
		json_quote(b, r->source, r->source_len);
	}
	PUTS(b, ",\"confidence\":");
	json_number(b, r->confidence);
	if (r->message_len) {
		buf_put(b, ",\"message\":", 11);
		json_quote(b, r->message, r->message_len);
	}
	buf_put_u8(b, '}');
}

/* The provenance of a write, from the arguments and the caller. */
static void write_opts(call *k, cairn_commit_options *co)
{
	const jv *cf = jv_get(k->args, "confidence");

	memset(co, 0, sizeof(*co));
	co->domain = k->c->domain;
	co->branch = s_arg(k, "branch");
	co->prov.actor = k->c->actor;
	co->prov.source = s_arg(k, "source");
	co->prov.message = s_arg(k, "message");
	if (cf && jv_is_number(cf)) {
		co->prov.has_confidence = 1;
		co->prov.confidence = jv_number(cf);
	}
	co->prov.client_time_ms = time_now_ms();
}

/* A write may be refused by the caller's branch pattern. */
static int branch_ok(call *k, const char *branch)
{
	if (!k->c->branch_ok || k->c->branch_ok(k->c->branch_ctx, branch ? branch : "main"))
		return 0;
	snprintf(k->err, sizeof(k->err),
		 "you may not write to branch %s: make a branch of your own (tool branch) and "
		 "propose it",
		 branch ? branch : "main");
	return -1;
}

/* -------------------------------------------------------------- tools -- */

static int t_describe(call *k)
{
	const char *js, *kinds[1024];
	size_t n, nk;
	cairn_txn *t;
	int rc;

	if (begin(k, &t))
		return -1;
	rc = cairn_schema_get(t, &js, &n);
	if (!rc)
		rc = cairn_kind_list(t, kinds, 1024, &nk);
	if (rc) {
		cairn_txn_end(t);
		return lib_fail(k, rc);
	}
	buf_put(k->out, "{\"domain\":", 10);
	json_quote(k->out, k->c->domain, strlen(k->c->domain));
	buf_put(k->out, ",\"schema\":", 10);
	buf_put(k->out, js, n);
	buf_put(k->out, ",\"counts\":{", 11);
	for (size_t i = 0; i < nk; i++) {
		uint64_t c = 0;

		cairn_count(t, kinds[i], &c);
		if (i)
			buf_put_u8(k->out, ',');
		json_quote(k->out, kinds[i], strlen(kinds[i]));
		buf_printf(k->out, ":%llu", (unsigned long long)c);
	}
	buf_printf(k->out, "},\"revision\":%llu}", (unsigned long long)cairn_txn_revision(t));
	cairn_txn_end(t);
	return 0;
}

static int t_get(call *k)
{
	const char *kind, *key;
	cairn_record r;
	cairn_revision rv;
	cairn_txn *t;
	int rc;

	if (need(k, "kind", &kind) || need(k, "key", &key) || begin(k, &t))
		return -1;
	rc = cairn_get(t, kind, key, strlen(key), &r);
	if (!rc)
		rc = cairn_revision_get(t, r.revision, &rv);
	if (rc) {
		cairn_txn_end(t);
		return lib_fail(k, rc);
	}
	wire_record_open(k->out, &r);
	buf_put(k->out, ",\"values\":", 10);
	buf_put(k->out, r.values, r.values_len);
	buf_put(k->out, ",\"last_change\":", 15);
	w_prov(k->out, &rv);
	buf_put_u8(k->out, '}');
	cairn_txn_end(t);
	return 0;
}

static int t_list(call *k)
{
	const char *kind, *after = s_arg(k, "after");
	long limit = int_arg(k, "limit", 20, 1, 100);
	const jv *vals = jv_get(k->args, "values");
	int with_values = vals && vals->type == JV_TRUE;
	cairn_record *r;
	cairn_txn *t;
	size_t n;
	int rc;

	if (need(k, "kind", &kind) || begin(k, &t))
		return -1;
	r = arena_alloc(k->mem, (size_t)limit * sizeof(*r));
	rc = r ? cairn_page(t, kind, after, after ? strlen(after) : 0, r, (size_t)limit, &n)
	       : CAIRN_ENOMEM;
	if (rc) {
		cairn_txn_end(t);
		return lib_fail(k, rc);
	}
	buf_put(k->out, "{\"records\":[", 12);
	for (size_t i = 0; i < n; i++) {
		buf_put(k->out, i ? ",{\"key\":" : "{\"key\":", i ? 8 : 7);
		json_quote(k->out, r[i].key, r[i].key_len);
		buf_put(k->out, ",\"title\":", 9);
		json_quote(k->out, r[i].title, r[i].title_len);
		if (with_values) {
			buf_put(k->out, ",\"values\":", 10);
			buf_put(k->out, r[i].values, r[i].values_len);
		}
		buf_put_u8(k->out, '}');
	}
	buf_put(k->out, "],\"next\":", 9);
	if (n == (size_t)limit)
		json_quote(k->out, r[n - 1].key, r[n - 1].key_len);
	else
		buf_put(k->out, "null", 4);
	buf_put_u8(k->out, '}');
	cairn_txn_end(t);
	return 0;
}

static int t_neighborhood(call *k)
{
	const char *kind, *key;
	cairn_neighborhood_options o = {0};
	cairn_ref ref;
	cairn_hop hop;
	cairn_graph g;
	cairn_txn *t;
	const jv *v = jv_get(k->args, "values");
	int rc;

	if (need(k, "kind", &kind) || need(k, "key", &key) ||
	    wire_hop_members(k->mem, k->args, "arguments", &hop, k->err, sizeof(k->err)))
		return -1;
	if (v && !jv_is_bool(v)) {
		snprintf(k->err, sizeof(k->err), "values is true or false");
		return -1;
	}
	ref.kind = kind;
	ref.key = key;
	ref.key_len = strlen(key);
	o.start = &ref;
	o.n_start = 1;
	o.depth = (unsigned)int_arg(k, "depth", 1, 1, CAIRN_MAX_DEPTH);
	o.hops = &hop;
	o.n_hops = 1;
	o.fanout = (size_t)int_arg(k, "fanout", 10, 1, 100);
	o.max_nodes = (size_t)int_arg(k, "limit", 30, 1, 200);
	o.values = jv_is(v, JV_TRUE);
	if (begin(k, &t))
		return -1;
	if ((rc = cairn_neighborhood(t, &o, &g))) {
		cairn_txn_end(t);
		return lib_fail(k, rc);
	}
	buf_put_u8(k->out, '{');
	wire_graph(k->out, &g, o.values);
	buf_put_u8(k->out, '}');
	cairn_txn_end(t);
	return 0;
}

static int t_resolve(call *k)
{
	cairn_resolve_options o;
	cairn_match *m;
	cairn_txn *t;
	size_t n;
	int rc, truncated;

	if (wire_resolve_options(k->mem, k->args, &o, k->err, sizeof(k->err)))
		return -1;
	o.limit = (size_t)int_arg(k, "limit", 5, 1, 20);
	if (!(m = arena_alloc(k->mem, o.limit * sizeof(*m)))) {
		snprintf(k->err, sizeof(k->err), "out of memory");
		return -1;
	}
	if (begin(k, &t))
		return -1;
	if ((rc = cairn_resolve(t, &o, m, o.limit, &n, &truncated))) {
		cairn_txn_end(t);
		return lib_fail(k, rc);
	}
	buf_put_u8(k->out, '{');
	wire_matches(k->out, m, n, truncated, 0);
	buf_put_u8(k->out, '}');
	cairn_txn_end(t);
	return 0;
}

/*
 * search in hybrid or semantic mode: words and meaning (the text embedded
 * by the server's model), ranked with the rank signals, with receipts.
 * *fallback is set when the default mode met vectors of another model
 * (another dimension): the caller searches by words instead.
 */
static int t_search_hybrid(call *k, int semantic, int asked, size_t limit, int *fallback)
{
	cairn_hybrid_options o;
	cairn_rank_options rk;
	cairn_search_info info;
	cairn_hit *h;
	cairn_txn *t;
	size_t n;
	int rc;

	*fallback = 0;
	if (wire_hybrid_options(k->mem, k->args, &o, &rk, k->err, sizeof(k->err)))
		return -1;
	if (!o.text) {
		snprintf(k->err, sizeof(k->err), "a %s search needs a text", semantic ? "semantic" : "hybrid");
		return -1;
	}
	o.limit = limit;
	o.embedder = k->c->emb;
	if (semantic) {
		o.text_weight = 0;
		o.vector_weight = 1;
	}
	if (!(h = arena_alloc(k->mem, limit * sizeof(*h)))) {
		snprintf(k->err, sizeof(k->err), "out of memory");
		return -1;
	}
	if (begin(k, &t))
		return -1;
	rc = cairn_hybrid(t, &o, h, limit, &n);
	if (rc == CAIRN_EDIM && !asked) {
		cairn_txn_end(t);
		*fallback = 1;
		return 0;
	}
	if (rc) {
		cairn_txn_end(t);
		return lib_fail(k, rc);
	}
	memset(&info, 0, sizeof(info));
	buf_put_u8(k->out, '{');
	wire_hits_as(k->out, h, n, &info, 0, "receipt");
	buf_printf(k->out, ",\"mode\":\"%s\"}", semantic ? "semantic" : "hybrid");
	cairn_txn_end(t);
	return 0;
}

#define VEC_MODEL_ID_CAP 256 /* room for a model id */

/* search: by text, or with near, the Records whose vectors are closest to that Record's. */
static int t_search(call *k)
{
	int by_vector = wire_is_vsearch(k->args);
	const char *mode = s_arg(k, "mode");
	const jv *rank = jv_get(k->args, "rank");
	cairn_search_options o;
	cairn_vsearch_options vo;
	cairn_ref near = {0, 0, 0};
	cairn_search_info info;
	size_t n, limit = (size_t)int_arg(k, "limit", 10, 1, 20);
	cairn_hit *h;
	cairn_txn *t;
	int rc;

	if (mode && strcmp(mode, "hybrid") && strcmp(mode, "words") && strcmp(mode, "semantic")) {
		snprintf(k->err, sizeof(k->err), "mode is hybrid, words or semantic");
		return -1;
	}
	if (mode && strcmp(mode, "words") && !k->c->emb) {
		snprintf(k->err, sizeof(k->err), "%s search needs a model: this server has none "
						 "(cairn serve --model FILE)", mode);
		return -1;
	}
	/* Hybrid by default when there is a model, a text, and nothing only words can do. */
	if (!by_vector && k->c->emb && (mode ? strcmp(mode, "words") != 0
					      : !jv_is(jv_get(k->args, "explain"), JV_TRUE) &&
							!jv_is(jv_get(k->args, "all_words"), JV_TRUE))) {
		int fallback;

		if (t_search_hybrid(k, mode && strcmp(mode, "semantic") == 0, mode != NULL, limit,
				    &fallback))
			return -1;
		if (!fallback)
			return 0;
	}
	if (rank && rank->type != JV_NULL) {
		snprintf(k->err, sizeof(k->err), "rank needs mode hybrid or semantic (and a model)");
		return -1;
	}
	if (by_vector ? wire_vsearch_options(k->mem, k->args, &vo, &near, k->err, sizeof(k->err))
		      : wire_search_options(k->mem, k->args, &o, k->err, sizeof(k->err)))
		return -1;
	o.limit = vo.limit = limit;
	if (!(h = arena_alloc(k->mem, limit * sizeof(*h)))) {
		snprintf(k->err, sizeof(k->err), "out of memory");
		return -1;
	}
	if (begin(k, &t))
		return -1;
	memset(&info, 0, sizeof(info));
	rc = by_vector ? cairn_vsearch(t, &vo, h, limit, &n) : cairn_search(t, &o, h, limit, &n, &info);
	if (rc) {
		cairn_txn_end(t);
		return lib_fail(k, rc);
	}
	buf_put_u8(k->out, '{');
	wire_hits(k->out, h, n, &info, 0);
	if (!by_vector)
		buf_puts(k->out, ",\"mode\":\"words\"");
	buf_put_u8(k->out, '}');
	cairn_txn_end(t);
	return 0;
}

static int t_history(call *k)
{
	static const char *const what[] = {"?", "created", "updated", "deleted", "erased"};
	const char *kind, *key, *cur = s_arg(k, "cursor");
	long limit = int_arg(k, "limit", 10, 1, 50);
	cairn_history_cursor c = {0, 0};
	cairn_history_entry *h;
	cairn_txn *t;
	size_t n;
	int rc;

	if (need(k, "kind", &kind) || need(k, "key", &key))
		return -1;
	if (cur) {
		char *end;

		c.next_vid = strtoull(cur, &end, 10);
		if (!*cur || *end) {
			snprintf(k->err, sizeof(k->err), "cursor is the next of an earlier call");
			return -1;
		}
	}
	if (begin(k, &t))
		return -1;
	h = arena_alloc(k->mem, (size_t)limit * sizeof(*h));
	rc = h ? cairn_history(t, kind, key, strlen(key), &c, h, (size_t)limit, &n) : CAIRN_ENOMEM;
	if (rc) {
		cairn_txn_end(t);
		return lib_fail(k, rc);
	}
	buf_put(k->out, "{\"versions\":[", 13);
	for (size_t i = 0; i < n; i++) {
		if (i)
			buf_put_u8(k->out, ',');
		buf_printf(k->out, "{\"change\":\"%s\",\"diff\":", what[h[i].change >= 0 && h[i].change <= CAIRN_ERASED ? h[i].change : 0]);
		buf_put(k->out, h[i].diff, h[i].diff_len);
		buf_put(k->out, ",\"by\":", 6);
		w_prov(k->out, &h[i].rev);
		if (h[i].change == CAIRN_ERASED) {
			buf_put(k->out, ",\"erased_by\":", 13);
			w_prov(k->out, &h[i].erased);
		}
		buf_put_u8(k->out, '}');
	}
	buf_put(k->out, "],\"next\":", 9);
	if (c.done)
		buf_put(k->out, "null", 4);
	else
		buf_printf(k->out, "\"%llu\"", (unsigned long long)c.next_vid);
	buf_put_u8(k->out, '}');
	cairn_txn_end(t);
	return 0;
}

static int t_lineage(call *k)
{
	const char *kind, *key;
	cairn_lineage_entry *le;
	cairn_revision created;
	cairn_txn *t;
	size_t n;
	int rc;

	if (need(k, "kind", &kind) || need(k, "key", &key) || begin(k, &t))
		return -1;
	le = arena_alloc(k->mem, 257 * sizeof(*le));
	rc = le ? cairn_lineage(t, kind, key, strlen(key), le, 257, &n, &created) : CAIRN_ENOMEM;
	if (rc) {
		cairn_txn_end(t);
		return lib_fail(k, rc);
	}
	buf_put(k->out, "{\"created\":", 11);
	w_prov(k->out, &created);
	buf_put(k->out, ",\"values\":{", 11);
	for (size_t i = 0; i < n; i++) {
		const char *a = *le[i].attribute ? le[i].attribute : "(title)";

		if (i)
			buf_put_u8(k->out, ',');
		json_quote(k->out, a, strlen(a));
		buf_put_u8(k->out, ':');
		w_prov(k->out, &le[i].rev);
	}
	buf_put(k->out, "}}", 2);
	cairn_txn_end(t);
	return 0;
}

static int commit_one(call *k, cairn_changeset *cs, const cairn_commit_options *co)
{
	cairn_commit_result res;
	int rc = cairn_commit(k->c->st, co, cs, &res);

	cairn_changeset_free(cs);
	if (rc)
		return lib_fail(k, rc);
	buf_printf(k->out, "{\"revision\":%llu,\"changes\":%llu}", (unsigned long long)res.revision,
		   (unsigned long long)res.changes);
	return 0;
}

static int t_remember(call *k)
{
	const char *kind, *key, *title = s_arg(k, "title");
	const jv *vals = jv_get(k->args, "values");
	cairn_read_options ro = {0};
	cairn_commit_options co;
	cairn_commit_result res;
	int rc = CAIRN_ECONFLICT;

	if (need(k, "kind", &kind) || need(k, "key", &key))
		return -1;
	if (vals && vals->type != JV_OBJECT && vals->type != JV_NULL) {
		snprintf(k->err, sizeof(k->err), "values is an object of attribute values");
		return -1;
	}
	if (!vals || vals->type != JV_OBJECT)
		vals = jv_object(k->mem, 0);
	write_opts(k, &co);
	if (!vals || branch_ok(k, co.branch))
		return vals ? -1 : lib_fail(k, CAIRN_ENOMEM);
	ro.domain = k->c->domain;
	ro.branch = co.branch;
	/*
	 * A Record that exists has the values merged in (null removes one) and
	 * keeps its title unless one is given; a new one is put as given. The
	 * commit expects the head the merge was made on, and is made again on
	 * the new head when another write came in between, so none is lost.
	 */
	for (int tries = 0; rc == CAIRN_ECONFLICT && tries < 8; tries++) {
		cairn_changeset *cs;
		cairn_record cur;
		cairn_txn *t;
		buf v = BUF_INIT;

		if ((rc = cairn_changeset_new(&cs)))
			break;
		if ((rc = cairn_txn_begin(k->c->st, &ro, &t))) {
			cairn_changeset_free(cs);
			break;
		}
		co.has_expect = 1;
		co.expect_revision = cairn_txn_revision(t);
		/* A memory is embedded on write when the Domain's vectors are the model's. */
		if (k->c->emb) {
			char model[VEC_MODEL_ID_CAP];
			size_t dim;

			co.embedder = cairn_vector_model(t, model, sizeof(model), &dim) == 0 &&
						  strcmp(model, cairn_embedder_model(k->c->emb)) == 0
					      ? k->c->emb
					      : NULL;
		}
		if (cairn_get(t, kind, key, strlen(key), &cur) == 0) {
			const jv *cv = jv_parse(k->mem, cur.values, cur.values_len, "stored values");
			const jv *merged = cv ? jv_merge_patch(k->mem, cv, vals) : NULL;

			if (merged)
				jv_canon(merged, &v);
			rc = !merged || v.oom ? CAIRN_ENOMEM
					      : cairn_changeset_put(cs, kind, key, strlen(key),
								    title ? title : cur.title,
								    title ? strlen(title) : cur.title_len,
								    (const char *)v.p, v.len);
		} else {
			jv_canon(vals, &v);
			rc = v.oom ? CAIRN_ENOMEM
				   : cairn_changeset_put(cs, kind, key, strlen(key), title ? title : "",
							 title ? strlen(title) : 0, (const char *)v.p, v.len);
		}
		cairn_txn_end(t);
		buf_release(&v);
		if (!rc)
			rc = cairn_commit(k->c->st, &co, cs, &res);
		cairn_changeset_free(cs);
	}
	if (rc)
		return lib_fail(k, rc);
	buf_printf(k->out, "{\"revision\":%llu,\"changes\":%llu}", (unsigned long long)res.revision,
		   (unsigned long long)res.changes);
	return 0;
}

static int t_link(call *k)
{
	const char *rel, *from, *to, *fc, *tc;
	const jv *vals = jv_get(k->args, "values");
	cairn_commit_options co;
	cairn_changeset *cs;
	buf v = BUF_INIT;
	char fk[CAIRN_MAX_NAME + 1], tk[CAIRN_MAX_NAME + 1];
	int rc;

	if (need(k, "rel", &rel) || need(k, "from", &from) || need(k, "to", &to))
		return -1;
	fc = strchr(from, ':');
	tc = strchr(to, ':');
	if (!fc || !tc || fc == from || tc == to || (size_t)(fc - from) > CAIRN_MAX_NAME ||
	    (size_t)(tc - to) > CAIRN_MAX_NAME) {
		snprintf(k->err, sizeof(k->err), "from and to name Records as Kind:key");
		return -1;
	}
	memcpy(fk, from, (size_t)(fc - from));
	fk[fc - from] = '\0';
	memcpy(tk, to, (size_t)(tc - to));
	tk[tc - to] = '\0';
	write_opts(k, &co);
	if (branch_ok(k, co.branch))
		return -1;
	if (vals && vals->type == JV_OBJECT)
		jv_canon(vals, &v);
	if ((rc = cairn_changeset_new(&cs))) {
		buf_release(&v);
		return lib_fail(k, rc);
	}
	rc = cairn_changeset_link(cs, rel, fk, fc + 1, strlen(fc + 1), tk, tc + 1, strlen(tc + 1),
				  v.len ? (const char *)v.p : NULL, v.len);
	buf_release(&v);
	if (rc) {
		cairn_changeset_free(cs);
		return lib_fail(k, rc);
	}
	return commit_one(k, cs, &co);
}

static int t_branch(call *k)
{
	const char *name, *from = s_arg(k, "from");
	int rc;

	if (need(k, "name", &name) || branch_ok(k, name))
		return -1;
	if ((rc = cairn_branch_create(k->c->st, k->c->domain, name, from)))
		return lib_fail(k, rc);
	buf_put(k->out, "{\"branch\":", 10);
	json_quote(k->out, name, strlen(name));
	buf_put(k->out, ",\"created\":true}", 16);
	return 0;
}

static int t_propose(call *k)
{
	const char *source, *title;
	uint64_t id;
	int rc;

	if (need(k, "source", &source) || need(k, "title", &title) || branch_ok(k, source))
		return -1;
	rc = cairn_proposal_create(k->c->st, k->c->domain, source, s_arg(k, "target"), title,
				   s_arg(k, "description"), k->c->actor, &id);
	if (rc)
		return lib_fail(k, rc);
	buf_printf(k->out, "{\"proposal\":%llu,\"status\":\"open\"}", (unsigned long long)id);
	return 0;
}

/* ---------------------------------------------------------- JSON-RPC -- */

static void rpc_id(buf *o, const jv *id)
{
	PUTS(o, "{\"jsonrpc\":\"2.0\",\"id\":");
	if (id)
		jv_canon(id, o);
	else
		PUTS(o, "null");
}

static void rpc_error(buf *o, const jv *id, int code, const char *msg)
{
	rpc_id(o, id);
	buf_printf(o, ",\"error\":{\"code\":%d,\"message\":", code);
	json_quote(o, msg, strlen(msg));
	PUTS(o, "}}");
}

static int tool_visible(const mcp_ctx *c, const tool *t)
{
	return !t->writes || c->writes;
}

static void tools_list(mcp_ctx *c, buf *o)
{
	int first = 1;

	PUTS(o, "{\"tools\":[");
	for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++) {
		const tool *t = &tools[i];

		if (!tool_visible(c, t))
			continue;
		if (!first)
			buf_put_u8(o, ',');
		first = 0;
		PUTS(o, "{\"name\":");
		json_quote(o, t->name, strlen(t->name));
		PUTS(o, ",\"title\":");
		json_quote(o, t->title, strlen(t->title));
		PUTS(o, ",\"description\":");
		json_quote(o, t->description, strlen(t->description));
		PUTS(o, ",\"inputSchema\":");
		buf_put(o, t->input, strlen(t->input));
		buf_printf(o, ",\"annotations\":{\"readOnlyHint\":%s}}", t->writes ? "false" : "true");
	}
	PUTS(o, "]}");
}

static void tools_call(mcp_ctx *c, arena *mem, const jv *params, const jv *id, buf *o)
{
	const jv *name = jv_get(params, "name"), *args = jv_get(params, "arguments");
	const tool *t = NULL;
	buf res = BUF_INIT;
	call k;
	int rc;

	if (!name || name->type != JV_STRING)
		return rpc_error(o, id, RPC_PARAMS, "tools/call needs a tool name");
	for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++)
		if (strcmp(tools[i].name, name->u.s) == 0 && tool_visible(c, &tools[i]))
			t = &tools[i];
	if (!t)
		return rpc_error(o, id, RPC_PARAMS, "no such tool");
	if (args && args->type != JV_OBJECT)
		return rpc_error(o, id, RPC_PARAMS, "arguments is an object");
	memset(&k, 0, sizeof(k));
	k.c = c;
	k.mem = mem;
	k.args = args ? args : jv_object(mem, 0);
	k.out = &res;
	rc = k.args ? t->fn(&k) : (snprintf(k.err, sizeof(k.err), "out of memory"), -1);
	rpc_id(o, id);
	PUTS(o, ",\"result\":{\"content\":[{\"type\":\"text\",\"text\":");
	if (rc || res.oom) {
		const char *e = res.oom ? "out of memory" : k.err;

		json_quote(o, e, strlen(e));
		PUTS(o, "}],\"isError\":true}}");
	} else {
		json_quote(o, (const char *)res.p, res.len);
		PUTS(o, "}],\"structuredContent\":");
		buf_put(o, res.p, res.len);
		PUTS(o, ",\"isError\":false}}");
	}
	buf_release(&res);
}

int mcp_handle(mcp_ctx *c, const char *msg, size_t len, buf *out)
{
	arena mem = ARENA_INIT;
	const jv *m, *id, *method, *params;

	m = jv_parse(&mem, msg, len, "message");
	if (!m) {
		rpc_error(out, NULL, RPC_PARSE, cairn_errmsg());
		arena_release(&mem);
		return 1;
	}
	if (m->type == JV_ARRAY) {
		rpc_error(out, NULL, RPC_INVALID, "batches are not part of this protocol revision");
		arena_release(&mem);
		return 1;
	}
	id = jv_get(m, "id");
	method = jv_get(m, "method");
	params = jv_get(m, "params");
	if (m->type != JV_OBJECT || !jv_is(jv_get(m, "jsonrpc"), JV_STRING) ||
	    strcmp(jv_get(m, "jsonrpc")->u.s, "2.0") != 0 ||
	    (id && id->type != JV_STRING && id->type != JV_INT)) {
		rpc_error(out, id && (id->type == JV_STRING || id->type == JV_INT) ? id : NULL,
			  RPC_INVALID, "not a JSON-RPC 2.0 message");
		arena_release(&mem);
		return 1;
	}
	if (!method) { /* a response to us: we send no requests, so there is nothing to do */
		arena_release(&mem);
		return 0;
	}
	if (method->type != JV_STRING) {
		rpc_error(out, id, RPC_INVALID, "method is a string");
		arena_release(&mem);
		return 1;
	}
	if (!id) { /* a notification (initialized, cancelled, ...): nothing to answer */
		if (strcmp(method->u.s, "notifications/initialized") == 0)
			c->initialized = 1;
		arena_release(&mem);
		return 0;
	}
	if (params && params->type != JV_OBJECT) {
		rpc_error(out, id, RPC_PARAMS, "params is an object");
	} else if (strcmp(method->u.s, "initialize") == 0) {
		const jv *pv = jv_get(params, "protocolVersion");

		rpc_id(out, id);
		PUTS(out, ",\"result\":{\"protocolVersion\":");
		/* Our revision, whatever the client asked for: it decides whether it can go on. */
		(void)pv;
		json_quote(out, PROTOCOL, strlen(PROTOCOL));
		PUTS(out, ",\"capabilities\":{\"tools\":{\"listChanged\":false}},"
			  "\"serverInfo\":{\"name\":\"cairn\",\"title\":\"Cairn\",\"version\":");
		json_quote(out, CAIRN_VERSION_STRING, strlen(CAIRN_VERSION_STRING));
		PUTS(out, "},\"instructions\":");
		{
			char ins[512];

			snprintf(ins, sizeof(ins),
				 "A memory of typed Records and Links (Domain %s). Call describe "
				 "first. Everything written is kept with who wrote it, from which "
				 "source and with what confidence; history and lineage show it.%s",
				 c->domain,
				 c->writes ? " Before you remember something, resolve its name: it "
					     "may be known already. Write on a branch of your own and "
					     "propose it when main is not yours."
					   : " This session can read only.");
			json_quote(out, ins, strlen(ins));
		}
		PUTS(out, "}}");
	} else if (strcmp(method->u.s, "ping") == 0) {
		rpc_id(out, id);
		PUTS(out, ",\"result\":{}}");
	} else if (strcmp(method->u.s, "tools/list") == 0) {
		rpc_id(out, id);
		PUTS(out, ",\"result\":");
		tools_list(c, out);
		buf_put_u8(out, '}');
	} else if (strcmp(method->u.s, "tools/call") == 0) {
		tools_call(c, &mem, params ? params : jv_object(&mem, 0), id, out);
	} else {
		rpc_error(out, id, RPC_METHOD, "no such method");
	}
	arena_release(&mem);
	return 1;
}
