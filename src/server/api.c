/*
 * The /v1 routes (docs/http.md, and the OpenAPI description served at
 * /v1/openapi.json): what every route uses, the service and MCP routes, and
 * the routing table; the other routes are in routes_*.c, by area. Each
 * checks the token, then calls the library and writes its answer as JSON.
 * Reads run on the request thread in a read transaction of their own;
 * commits go to the writer.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "wire/wire.h"
#include "server/internal.h"
#include "base/alloc.h"
#include "base/err.h"
#include "base/text.h"

typedef struct route_def {
	const char *method;
	const char *pattern[MAX_SEGS]; /* literal segments, or ":name" for any */
	int n;
	void (*fn)(req *r);
	const char *name;
} route_def;

/* ------------------------------------------------------------- access -- */

/* '*' matches any run of characters (slashes included). */
static int glob_match(const char *p, const char *s)
{
	if (!*p)
		return !*s;
	if (*p == '*') {
		for (;; s++) {
			if (glob_match(p + 1, s))
				return 1;
			if (!*s)
				return 0;
		}
	}
	return *p == *s && glob_match(p + 1, s + 1);
}

static int rate_ok(req *r)
{
	srv *s = r->s;
	uint64_t now = now_ns();
	double burst = s->cfg.burst ? s->cfg.burst : s->cfg.rate * 2 < 1 ? 1 : s->cfg.rate * 2;
	bucket *b = NULL;
	int ok;

	if (s->cfg.rate <= 0)
		return 1;
	pthread_mutex_lock(&s->rlock);
	if (!s->buckets) {
		s->n_buckets = 4096;
		s->buckets = calloc(s->n_buckets, sizeof(*s->buckets));
	}
	if (s->buckets) {
		/*
		 * The token's slot, or a free one, among 16 from its hash; else the one
		 * idle longest there is taken over: a full bucket after a long idle
		 * time is what a new one would be.
		 */
		size_t i = (size_t)(r->tok.id * 0x9e3779b97f4a7c15ull >> 52) % s->n_buckets;
		bucket *oldest = NULL;

		for (size_t k = 0; k < 16 && !b; k++, i = (i + 1) % s->n_buckets) {
			if (s->buckets[i].id == r->tok.id || s->buckets[i].id == 0)
				b = &s->buckets[i];
			else if (!oldest || s->buckets[i].last_ns < oldest->last_ns)
				oldest = &s->buckets[i];
		}
		if (!b && oldest) {
			b = oldest;
			b->id = 0;
		}
	}
	if (!b) { /* no table: no limit rather than a wrong one */
		pthread_mutex_unlock(&s->rlock);
		return 1;
	}
	if (b->id == 0) {
		b->id = r->tok.id;
		b->tokens = burst;
		b->last_ns = now;
	}
	b->tokens += (double)(now - b->last_ns) / 1e9 * s->cfg.rate;
	if (b->tokens > burst)
		b->tokens = burst;
	b->last_ns = now;
	ok = b->tokens >= 1;
	if (ok)
		b->tokens -= 1;
	else
		r->retry_after = (unsigned)ceil((1 - b->tokens) / s->cfg.rate);
	pthread_mutex_unlock(&s->rlock);
	return ok;
}

int api_may_write(const req *r, const char *branch)
{
	return r->tok.role >= CAIRN_ROLE_ADMIN ||
	       (r->tok.role >= CAIRN_ROLE_WRITER &&
		(!r->tok.branches[0] || glob_match(r->tok.branches, branch)));
}

const char *api_identity(const req *r)
{
	return r->tok.label[0] ? r->tok.label : "token";
}

/*
 * Check the request's token for a Domain (NULL: none in particular), a
 * role, and for writes the branch written (NULL: none, or not known yet;
 * "main" for main): a writer token with a branch pattern writes only to
 * branches that match it. Replies and returns -1 when refused.
 */
int api_allow(req *r, const char *domain, int need, const char *branch)
{
	const char *h = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Authorization");
	int rc;

	if (need == NEED_NONE)
		return 0;
	if (!h || strncasecmp(h, "Bearer ", 7) != 0) {
		reply_error(r, 401, cairn_errname(CAIRN_EAUTH),
			    "an Authorization: Bearer token is required");
		return -1;
	}
	if (!r->authed) {
		h += 7;
		while (*h == ' ')
			h++;
		if ((rc = cairn_token_check(r->s->st, h, strlen(h), &r->tok))) {
			reply_cairn(r, rc);
			return -1;
		}
		r->authed = 1;
		if (!rate_ok(r)) {
			reply_error(r, 429, E_RATE, "more than %g requests per second with this token",
				    r->s->cfg.rate);
			return -1;
		}
	}
	if (domain && r->tok.domain[0] && strcmp(domain, r->tok.domain) != 0) {
		reply_error(r, 403, cairn_errname(CAIRN_EFORBIDDEN),
			    "the token is for another Domain");
		return -1;
	}
	if (need == NEED_ADMIN_ALL && (r->tok.role != CAIRN_ROLE_ADMIN || r->tok.domain[0])) {
		reply_error(r, 403, cairn_errname(CAIRN_EFORBIDDEN),
			    "this needs an admin token of every Domain");
		return -1;
	}
	if ((need == NEED_WRITE && r->tok.role < CAIRN_ROLE_WRITER) ||
	    (need == NEED_ADMIN && r->tok.role < CAIRN_ROLE_ADMIN)) {
		reply_error(r, 403, cairn_errname(CAIRN_EFORBIDDEN), "the token's role is %s",
			    r->tok.role == CAIRN_ROLE_READER ? "reader" : "writer");
		return -1;
	}
	if (need == NEED_WRITE && branch && !api_may_write(r, branch)) {
		reply_error(r, 403, cairn_errname(CAIRN_EFORBIDDEN),
			    "the token may write only to branches matching %s", r->tok.branches);
		return -1;
	}
	return 0;
}

/* ---------------------------------------------------------- arguments -- */

int api_parse_u64(const char *s, uint64_t *v)
{
	char *end;
	unsigned long long x;

	if (!s || !*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	x = strtoull(s, &end, 10);
	if (*end || errno)
		return -1;
	*v = x;
	return 0;
}

/* The read options of ?branch= and ?at= (a revision or an RFC 3339 time). */
static int read_opts(req *r, const char *domain, cairn_read_options *ro)
{
	const char *at = arg(r, "at");

	memset(ro, 0, sizeof(*ro));
	ro->domain = domain;
	ro->branch = arg(r, "branch");
	if (at && api_parse_u64(at, &ro->at_revision) &&
	    time_parse_rfc3339(at, strlen(at), &ro->at_time_ms)) {
		reply_error(r, 400, cairn_errname(CAIRN_EINVAL),
			    "at is a revision number or an RFC 3339 time");
		return -1;
	}
	if (at && ro->at_revision == 0 && ro->at_time_ms == 0) {
		reply_error(r, 400, cairn_errname(CAIRN_EINVAL), "at starts from revision 1");
		return -1;
	}
	return 0;
}

int api_begin(req *r, const char *domain, cairn_txn **t)
{
	cairn_read_options ro;
	int rc;

	if (read_opts(r, domain, &ro))
		return -1;
	if ((rc = cairn_txn_begin(r->s->st, &ro, t))) {
		reply_cairn(r, rc);
		return -1;
	}
	return 0;
}

/* A write's revision, as ETag and X-Cairn-Revision (a read of it then sees it). */
void api_written(req *r, uint64_t rev)
{
	if (!rev)
		return;
	r->revision = rev;
	snprintf(r->etag, sizeof(r->etag), "\"r%llu\"", (unsigned long long)rev);
}

/* The reply of a read: JSON, with the revision read as ETag and header. */
void api_reply_read(req *r, cairn_txn *t)
{
	r->revision = cairn_txn_revision(t);
	snprintf(r->etag, sizeof(r->etag), "\"r%llu\"", (unsigned long long)r->revision);
	reply_json(r, 200);
}

long api_limit_arg(req *r, long def)
{
	const char *l = arg(r, "limit");
	uint64_t v;

	if (!l)
		return def;
	if (api_parse_u64(l, &v) || v < 1 || v > CAIRN_MAX_PAGE) {
		reply_error(r, 400, cairn_errname(CAIRN_EINVAL), "limit is 1 to %d", CAIRN_MAX_PAGE);
		return -1;
	}
	return (long)v;
}

int api_valid_at_arg(req *r, cairn_exclude *x, const cairn_exclude **out)
{
	const char *v = arg(r, "valid_at");

	memset(x, 0, sizeof(*x));
	*out = NULL;
	if (!v)
		return 0;
	if (time_parse_rfc3339(v, strlen(v), &x->valid_at_ms)) {
		reply_error(r, 400, cairn_errname(CAIRN_EINVAL),
			    "valid_at is an RFC 3339 time, like 2026-03-01T00:00:00Z");
		return -1;
	}
	*out = x->valid_at_ms ? x : NULL;
	return 0;
}

/* The request body as a JSON object, or NULL (replied). */
const jv *api_body_object(req *r)
{
	const jv *v;

	if (r->body.len == 0) {
		reply_error(r, 400, cairn_errname(CAIRN_EJSON), "a JSON object is expected as the body");
		return NULL;
	}
	v = jv_parse(&r->mem, (const char *)r->body.p, r->body.len, "request body");
	if (!v) {
		reply_cairn(r, err_code());
		return NULL;
	}
	if (v->type != JV_OBJECT) {
		reply_error(r, 400, cairn_errname(CAIRN_EJSON), "the body is a JSON object");
		return NULL;
	}
	if (!jv_depth_ok(v, r->s->cfg.max_depth)) {
		reply_error(r, 400, cairn_errname(CAIRN_ELIMIT), "the body nests deeper than %u levels",
			    r->s->cfg.max_depth);
		return NULL;
	}
	return v;
}

/* Members of a body object: only the allowed names. */
int api_only(req *r, const jv *o, const char *const *names)
{
	if (jv_only(o, names, CAIRN_EINVAL, "request")) {
		reply_cairn(r, CAIRN_EINVAL);
		return -1;
	}
	return 0;
}

/*
 * A string member (NULL when absent); -1 when present and not a string, or
 * holding U+0000: every string member is handed on as a C string.
 */
int api_str_member(req *r, const jv *o, const char *name, const char **out)
{
	const jv *v = jv_get(o, name);

	*out = NULL;
	if (!v || v->type == JV_NULL)
		return 0;
	if (v->type != JV_STRING) {
		reply_error(r, 400, cairn_errname(CAIRN_ETYPE), "\"%s\" is a string", name);
		return -1;
	}
	if (jv_str_nul(v)) {
		reply_error(r, 400, cairn_errname(CAIRN_EINVAL), "\"%s\" " JSON_NUL_REFUSED, name);
		return -1;
	}
	*out = v->u.s;
	return 0;
}

/* An optional integer member in lo..hi (0 when absent); -1 with the reply sent when bad. */
int api_int_member(req *r, const jv *o, const char *name, long lo, long hi, long *out)
{
	const jv *v = jv_get(o, name);

	*out = 0;
	if (!v || v->type == JV_NULL)
		return 0;
	if (v->type != JV_INT || v->u.i < lo || v->u.i > hi) {
		reply_error(r, 400, cairn_errname(CAIRN_EINVAL), "%s is an integer from %ld to %ld",
			    name, lo, hi);
		return -1;
	}
	*out = (long)v->u.i;
	return 0;
}

/* An optional boolean member (0 when absent); -1 with the reply sent when not a boolean. */
int api_bool_member(req *r, const jv *o, const char *name, int *out)
{
	const jv *v = jv_get(o, name);

	*out = jv_is(v, JV_TRUE);
	if (v && v->type != JV_NULL && !jv_is_bool(v)) {
		reply_error(r, 400, cairn_errname(CAIRN_ETYPE), "%s is true or false", name);
		return -1;
	}
	return 0;
}

/* Provenance from a body's members: actor, source, confidence, message, trace_id. */
int api_provenance(req *r, const jv *o, cairn_commit_options *co)
{
	const jv *c = jv_get(o, "confidence");

	if (api_str_member(r, o, "actor", &co->prov.actor) ||
	    api_str_member(r, o, "source", &co->prov.source) ||
	    api_str_member(r, o, "message", &co->prov.message) ||
	    api_str_member(r, o, "trace_id", &co->prov.trace_id))
		return -1;
	if (c && c->type != JV_NULL) {
		if (!jv_is_number(c)) {
			reply_error(r, 400, cairn_errname(CAIRN_ETYPE), "\"confidence\" is a number");
			return -1;
		}
		co->prov.has_confidence = 1;
		co->prov.confidence = jv_number(c);
	}
	if (!co->prov.actor) /* who, when the body does not say: the token */
		co->prov.actor = arena_strndup(&r->mem, api_identity(r), strlen(api_identity(r)));
	co->prov.client_time_ms = 0;
	return 0;
}

/* "expect_revision": the head the write expects (refused with revision_conflict if it moved). */
int api_expect_member(req *r, const jv *o, cairn_commit_options *co)
{
	const jv *ex = jv_get(o, "expect_revision");

	if (!ex || ex->type == JV_NULL)
		return 0;
	if (ex->type != JV_INT || ex->u.i < 0) {
		reply_error(r, 400, cairn_errname(CAIRN_ETYPE), "\"expect_revision\" is a revision number");
		return -1;
	}
	co->has_expect = 1;
	co->expect_revision = (uint64_t)ex->u.i;
	return 0;
}

/* ------------------------------------------------------------ pieces -- */



/* The answer of a read stopped at its deadline. */
void api_reply_timeout(req *r)
{
	reply_error(r, 503, E_TIMEOUT, "the read took longer than %u ms (the server's --query-ms)",
		    r->s->cfg.query_ms);
}

int api_past_deadline(const req *r)
{
	return r->deadline_ns && now_ns() > r->deadline_ns;
}

int api_w_item(void *ctx, const cairn_change_item *it)
{
	struct items_out *io = ctx;
	buf *b = &io->r->out;

	if (io->timed && api_past_deadline(io->r))
		return CAIRN_ELIMIT;
	if (!io->first)
		buf_put_u8(b, ',');
	io->first = 0;
	wire_change_item(b, it, io->two_sided);
	return b->oom ? CAIRN_ENOMEM : 0;
}

/* ------------------------------------------------------------ service -- */

static void h_health(req *r)
{
	buf_printf(&r->out, "{\"status\":\"ok\",\"version\":\"%s\"}", CAIRN_VERSION_STRING);
	reply_json(r, 200);
}

static void h_openapi(req *r)
{
	buf_put(&r->out, openapi_json, strlen(openapi_json));
	reply_json(r, 200);
}

/* Store-wide figures: for the admin of every Domain only. */
static void h_metrics(req *r)
{
	if (api_allow(r, NULL, NEED_ADMIN_ALL, NULL))
		return;
	metrics_text(r->s, &r->out);
	r->status = 200;
	r->ctype = "text/plain; version=0.0.4";
}

/* ---------------------------------------------------------------- MCP -- */

static int mcp_branch_ok(void *ctx, const char *branch)
{
	return api_may_write(ctx, branch);
}

/* An Origin, when a browser sends one, must be this machine (DNS rebinding). */
static int origin_ok(req *r)
{
	const char *o = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Origin");
	static const char *const ok[] = {"http://127.0.0.1", "http://localhost", "http://[::1]",
					 "https://127.0.0.1", "https://localhost", "https://[::1]"};

	if (!o)
		return 1;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		size_t n = strlen(ok[i]);

		if (strncmp(o, ok[i], n) == 0 && (o[n] == '\0' || o[n] == ':'))
			return 1;
	}
	return 0;
}

/*
 * POST /v1/mcp: MCP's streamable HTTP transport, one JSON-RPC message per
 * request, answered as application/json (202 for a notification). The
 * token gives the Domain (an admin of every Domain names one with
 * ?domain=) and whether the write tools are offered.
 */
static void h_mcp(req *r)
{
	const char *d = arg(r, "domain");
	mcp_ctx m;

	if (!origin_ok(r))
		return reply_error(r, 403, cairn_errname(CAIRN_EFORBIDDEN),
				   "requests from another origin are refused");
	if (api_allow(r, NULL, NEED_READ, NULL))
		return;
	if (r->tok.domain[0])
		d = r->tok.domain;
	if (!d)
		return reply_error(r, 400, cairn_errname(CAIRN_EINVAL),
				   "a token of every Domain names one with ?domain=");
	if (api_allow(r, d, NEED_READ, NULL))
		return;
	memset(&m, 0, sizeof(m));
	m.st = r->s->st;
	m.domain = d;
	m.emb = r->s->emb;
	m.actor = api_identity(r);
	m.writes = r->tok.role >= CAIRN_ROLE_WRITER;
	m.branch_ok = mcp_branch_ok;
	m.branch_ctx = r;
	m.max_depth = r->s->cfg.max_depth;
	m.may_erase = r->tok.role >= CAIRN_ROLE_ADMIN;
	m.branches = r->tok.role < CAIRN_ROLE_ADMIN && r->tok.branches[0] ? r->tok.branches : NULL;
	if (mcp_handle(&m, (const char *)r->body.p, r->body.len, &r->out)) {
		reply_json(r, 200);
	} else {
		r->status = 202;
		r->ctype = "application/json";
	}
}

/* ------------------------------------------------------------- routing -- */

/* An import is streamed from its first call (route_stream); here only when it could not start. */
static void h_import_late(req *r)
{
	reply_error(r, 503, E_SHUTDOWN, "the server is shutting down");
}

#define R(m, fn, ...) {m, {__VA_ARGS__}, sizeof((const char *[]){__VA_ARGS__}) / sizeof(char *), fn, #fn}

static const route_def routes[] = {
	R("GET", h_health, "v1", "health"),
	R("GET", h_openapi, "v1", "openapi.json"),
	R("GET", h_metrics, "v1", "metrics"),
	R("GET", h_domains, "v1", "domains"),
	R("POST", h_domain_create, "v1", "domains"),
	R("POST", h_backup, "v1", "backup"),
	R("DELETE", h_domain_drop, "v1", "domains", ":domain"),
	R("GET", h_schema_get, "v1", "domains", ":domain", "schema"),
	R("PUT", h_schema_put, "v1", "domains", ":domain", "schema"),
	R("POST", h_commit, "v1", "domains", ":domain", "commits"),
	R("GET", h_page, "v1", "domains", ":domain", "records", ":kind"),
	R("GET", h_record, "v1", "domains", ":domain", "records", ":kind", ":key"),
	R("GET", h_links, "v1", "domains", ":domain", "records", ":kind", ":key", "links"),
	R("GET", h_history, "v1", "domains", ":domain", "records", ":kind", ":key", "history"),
	R("GET", h_lineage, "v1", "domains", ":domain", "records", ":kind", ":key", "lineage"),
	R("GET", h_link_history, "v1", "domains", ":domain", "links", ":rel", ":from", ":to",
	  "history"),
	R("GET", h_link_history, "v1", "domains", ":domain", "links", ":rel", ":from", ":to",
	  "lineage"),
	R("GET", h_counts, "v1", "domains", ":domain", "counts"),
	R("GET", h_revisions, "v1", "domains", ":domain", "revisions"),
	R("GET", h_revision, "v1", "domains", ":domain", "revisions", ":rev"),
	R("GET", h_revision_changes, "v1", "domains", ":domain", "revisions", ":rev", "changes"),
	R("GET", h_branches, "v1", "domains", ":domain", "branches"),
	R("POST", h_branch_create, "v1", "domains", ":domain", "branches"),
	R("PATCH", h_branch_rename, "v1", "domains", ":domain", "branches", ":branch"),
	R("DELETE", h_branch_delete, "v1", "domains", ":domain", "branches", ":branch"),
	R("GET", h_diff, "v1", "domains", ":domain", "diff"),
	R("POST", h_merge, "v1", "domains", ":domain", "merges"),
	R("GET", h_proposals, "v1", "domains", ":domain", "proposals"),
	R("POST", h_propose, "v1", "domains", ":domain", "proposals"),
	R("GET", h_proposal, "v1", "domains", ":domain", "proposals", ":id"),
	R("GET", h_proposal_diff, "v1", "domains", ":domain", "proposals", ":id", "diff"),
	R("POST", h_proposal_note, "v1", "domains", ":domain", "proposals", ":id", "notes"),
	R("POST", h_proposal_accept, "v1", "domains", ":domain", "proposals", ":id", "accept"),
	R("POST", h_proposal_close, "v1", "domains", ":domain", "proposals", ":id", "reject"),
	R("POST", h_proposal_close, "v1", "domains", ":domain", "proposals", ":id", "withdraw"),
	R("GET", h_export, "v1", "domains", ":domain", "export"),
	R("POST", h_query, "v1", "domains", ":domain", "query"),
	R("POST", h_query_count, "v1", "domains", ":domain", "query", "count"),
	R("POST", h_neighborhood, "v1", "domains", ":domain", "neighborhood"),
	R("POST", h_follow, "v1", "domains", ":domain", "follow"),
	R("POST", h_path, "v1", "domains", ":domain", "path"),
	R("POST", h_resolve, "v1", "domains", ":domain", "resolve"),
	R("POST", h_search, "v1", "domains", ":domain", "search"),
	R("POST", h_remember, "v1", "domains", ":domain", "remember"),
	R("POST", h_retract, "v1", "domains", ":domain", "retract"),
	R("POST", h_digest, "v1", "domains", ":domain", "digest"),
	R("POST", h_recall, "v1", "domains", ":domain", "recall"),
	R("POST", h_reembed, "v1", "domains", ":domain", "reembed"),
	R("POST", h_compact, "v1", "domains", ":domain", "compact"),
	R("POST", h_erase, "v1", "domains", ":domain", "erase"),
	R("POST", h_mcp, "v1", "mcp"),
	R("POST", h_import_late, "v1", "domains", ":domain", "import"),
};

/* A segment that held %00 is cut short there: it matches no literal, only a parameter. */
static int matches(const route_def *rd, req *r)
{
	if (rd->n != r->nseg)
		return 0;
	for (int i = 0; i < rd->n; i++)
		if (rd->pattern[i][0] != ':' &&
		    (i == r->nul_seg || strcmp(rd->pattern[i], r->seg[i]) != 0))
			return 0;
	return 1;
}

/*
 * A parameter of the path that held %00 is refused, named: it would reach
 * the library cut short, naming another Record, branch or Domain.
 */
static int nul_refused(req *r, const char *param)
{
	if (r->nul_seg < 0)
		return 0;
	reply_error(r, 400, cairn_errname(CAIRN_EINVAL), "the path segment %s " JSON_NUL_REFUSED,
		    param);
	return 1;
}

static int allow_write(req *r, const char *domain, const char *branch)
{
	return api_allow(r, domain, NEED_WRITE, NULL) || api_allow(r, domain, NEED_WRITE, branch);
}

int route_stream(req *r)
{
	static const route_def import = R("POST", NULL, "v1", "domains", ":domain", "import");

	if (strcmp(r->method, "POST") != 0 || !matches(&import, r))
		return 0;
	r->route = "h_import";
	if (nul_refused(r, "domain") || args_ok(r) || import_start(r, allow_write))
		r->refused = 1;
	return 1;
}

void route(req *r)
{
	int path_found = 0;

	for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
		if (!matches(&routes[i], r))
			continue;
		path_found = 1;
		if (strcmp(routes[i].method, r->method) != 0)
			continue;
		r->route = routes[i].name;
		if (!nul_refused(r, routes[i].pattern[r->nul_seg < 0 ? 0 : r->nul_seg] + 1))
			routes[i].fn(r);
		return;
	}
	if (path_found)
		reply_error(r, 405, E_METHOD, "%s is not a method of this path", r->method);
	else
		reply_error(r, 404, E_ROUTE, "no such path");
}
