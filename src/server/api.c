/*
 * The /v1 routes (docs/http.md, and the OpenAPI description served at
 * /v1/openapi.json): each checks the token, then calls the library and
 * writes its answer as JSON. Reads run on the request thread in a read
 * transaction of their own; commits go to the writer.
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

enum need { NEED_NONE, NEED_READ, NEED_WRITE, NEED_ADMIN, NEED_ADMIN_ALL };

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

/*
 * Check the request's token for a Domain (NULL: none in particular), a
 * role, and for writes the branch written (NULL: none, or not known yet;
 * "main" for main): a writer token with a branch pattern writes only to
 * branches that match it. Replies and returns -1 when refused.
 */
static int allow(req *r, const char *domain, int need, const char *branch)
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
	if (need == NEED_WRITE && branch && r->tok.role < CAIRN_ROLE_ADMIN && r->tok.branches[0] &&
	    !glob_match(r->tok.branches, branch)) {
		reply_error(r, 403, cairn_errname(CAIRN_EFORBIDDEN),
			    "the token may write only to branches matching %s", r->tok.branches);
		return -1;
	}
	return 0;
}

/* ---------------------------------------------------------- arguments -- */

static int parse_u64(const char *s, uint64_t *v)
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
	if (at && parse_u64(at, &ro->at_revision) &&
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

static int begin(req *r, const char *domain, cairn_txn **t)
{
	cairn_read_options ro;
	int rc;

	if (read_opts(r, domain, &ro))
		return -1;
	if ((rc = cairn_read_begin(r->s->st, &ro, t))) {
		reply_cairn(r, rc);
		return -1;
	}
	return 0;
}

/* A write's revision, as ETag and X-Cairn-Revision (a read of it then sees it). */
static void written(req *r, uint64_t rev)
{
	if (!rev)
		return;
	r->revision = rev;
	snprintf(r->etag, sizeof(r->etag), "\"r%llu\"", (unsigned long long)rev);
}

/* The reply of a read: JSON, with the revision read as ETag and header. */
static void reply_read(req *r, cairn_txn *t)
{
	r->revision = cairn_txn_revision(t);
	snprintf(r->etag, sizeof(r->etag), "\"r%llu\"", (unsigned long long)r->revision);
	reply_json(r, 200);
}

static long limit_arg(req *r, long def)
{
	const char *l = arg(r, "limit");
	uint64_t v;

	if (!l)
		return def;
	if (parse_u64(l, &v) || v < 1 || v > CAIRN_MAX_PAGE) {
		reply_error(r, 400, cairn_errname(CAIRN_EINVAL), "limit is 1 to %d", CAIRN_MAX_PAGE);
		return -1;
	}
	return (long)v;
}

static int depth_ok(const jv *v, unsigned left)
{
	if (v->type != JV_OBJECT && v->type != JV_ARRAY)
		return 1;
	if (left == 0)
		return 0;
	for (uint32_t i = 0; i < v->len; i++)
		if (!depth_ok(&v->u.items[i], left - 1))
			return 0;
	return 1;
}

/* The request body as a JSON object, or NULL (replied). */
static const jv *body_object(req *r)
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
	if (!depth_ok(v, r->s->cfg.max_depth)) {
		reply_error(r, 400, cairn_errname(CAIRN_ELIMIT), "the body nests deeper than %u levels",
			    r->s->cfg.max_depth);
		return NULL;
	}
	return v;
}

/* Members of a body object: only the allowed names. */
static int only(req *r, const jv *o, const char *const *names)
{
	if (jv_only(o, names, CAIRN_EINVAL, "request")) {
		reply_cairn(r, CAIRN_EINVAL);
		return -1;
	}
	return 0;
}

/* A string member (NULL when absent); -1 when present and not a string. */
static int str_member(req *r, const jv *o, const char *name, const char **out)
{
	const jv *v = jv_get(o, name);

	*out = NULL;
	if (!v || v->type == JV_NULL)
		return 0;
	if (v->type != JV_STRING) {
		reply_error(r, 400, cairn_errname(CAIRN_ETYPE), "\"%s\" is a string", name);
		return -1;
	}
	*out = v->u.s;
	return 0;
}

/* ------------------------------------------------------------ pieces -- */

static void w_revision(buf *b, const cairn_revision *v)
{
	buf_printf(b, "{\"revision\":%llu,\"parent\":%llu", (unsigned long long)v->revision,
		   (unsigned long long)v->parent);
	if (v->parent2)
		buf_printf(b, ",\"parent2\":%llu", (unsigned long long)v->parent2);
	buf_printf(b, ",\"type\":\"%s\",\"branch\":", cairn_revision_type_name(v->type));
	wire_cstr(b, v->branch);
	PUTS(b, ",\"time\":");
	wire_time(b, v->time_ms);
	PUTS(b, ",\"actor\":");
	wire_str(b, v->actor, v->actor_len);
	PUTS(b, ",\"source\":");
	wire_str(b, v->source, v->source_len);
	PUTS(b, ",\"confidence\":");
	json_number(b, v->confidence);
	PUTS(b, ",\"message\":");
	wire_str(b, v->message, v->message_len);
	PUTS(b, ",\"trace_id\":");
	wire_str(b, v->trace_id, v->trace_id_len);
	buf_printf(b, ",\"changes\":%llu,\"hash\":", (unsigned long long)v->changes);
	wire_hash(b, v->hash);
	buf_put_u8(b, '}');
}

static void w_record(buf *b, const cairn_record *rec)
{
	PUTS(b, "{\"kind\":");
	wire_cstr(b, rec->kind);
	PUTS(b, ",\"key\":");
	wire_str(b, rec->key, rec->key_len);
	PUTS(b, ",\"title\":");
	wire_str(b, rec->title, rec->title_len);
	PUTS(b, ",\"values\":");
	buf_put(b, rec->values, rec->values_len);
	buf_printf(b, ",\"revision\":%llu", (unsigned long long)rec->revision);
	if (rec->vector_dim)
		buf_printf(b, ",\"vector_dim\":%zu", rec->vector_dim);
	buf_put_u8(b, '}');
}

static void w_link(buf *b, const cairn_link *l)
{
	PUTS(b, "{\"rel\":");
	wire_cstr(b, l->rel);
	PUTS(b, ",\"from\":");
	wire_endpoint(b, l->from_kind, l->from_key, l->from_key_len);
	PUTS(b, ",\"to\":");
	wire_endpoint(b, l->to_kind, l->to_key, l->to_key_len);
	PUTS(b, ",\"values\":");
	buf_put(b, l->values, l->values_len);
	buf_printf(b, ",\"revision\":%llu}", (unsigned long long)l->revision);
}

/* "Kind:key" into its parts (in the request's arena); -1 when malformed. */
static int split_endpoint(req *r, const char *s, const char **kind, const char **key)
{
	const char *colon = strchr(s, ':');
	char *k;

	if (!colon || colon == s)
		return -1;
	k = arena_strndup(&r->mem, s, (size_t)(colon - s));
	if (!k)
		return -1;
	*kind = k;
	*key = colon + 1;
	return 0;
}

static void hex_cursor(buf *b, const uint8_t *p, size_t n)
{
	static const char hx[] = "0123456789abcdef";

	buf_put_u8(b, '"');
	for (size_t i = 0; i < n; i++) {
		buf_put_u8(b, (uint8_t)hx[p[i] >> 4]);
		buf_put_u8(b, (uint8_t)hx[p[i] & 15]);
	}
	buf_put_u8(b, '"');
}

static int unhex_cursor(const char *s, uint8_t *p, size_t n)
{
	if (strlen(s) != 2 * n)
		return -1;
	for (size_t i = 0; i < n; i++) {
		int h = 0, l = 0;

		if (sscanf(s + 2 * i, "%1x%1x", &h, &l) != 2)
			return -1;
		p[i] = (uint8_t)(h << 4 | l);
	}
	return 0;
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
	if (allow(r, NULL, NEED_ADMIN_ALL, NULL))
		return;
	metrics_text(r->s, &r->out);
	r->status = 200;
	r->ctype = "text/plain; version=0.0.4";
}

/* ------------------------------------------------------------ domains -- */

struct dom_list {
	req *r;
	int first;
};

static int list_domain(void *ctx, const cairn_domain_info *di)
{
	struct dom_list *dl = ctx;
	const char *name = di->name;

	if (dl->r->tok.domain[0] && strcmp(dl->r->tok.domain, name) != 0)
		return 0; /* not the token's */
	if (!dl->first)
		buf_put_u8(&dl->r->out, ',');
	dl->first = 0;
	PUTS(&dl->r->out, "{\"name\":");
	wire_cstr(&dl->r->out, name);
	buf_printf(&dl->r->out, ",\"revision\":%llu,\"horizon\":%llu}",
		   (unsigned long long)di->revision, (unsigned long long)di->horizon);
	return 0;
}

static void h_domains(req *r)
{
	struct dom_list dl = {r, 1};
	int rc;

	if (allow(r, NULL, NEED_READ, NULL))
		return;
	PUTS(&r->out, "{\"items\":[");
	if ((rc = cairn_domain_list(r->s->st, list_domain, &dl)))
		return reply_cairn(r, rc);
	PUTS(&r->out, "]}");
	reply_json(r, 200);
}

static void h_domain_create(req *r)
{
	static const char *const names[] = {"name", NULL};
	const jv *o = NULL;
	const char *name;
	int rc;

	if (allow(r, NULL, NEED_ADMIN_ALL, NULL) || !(o = body_object(r)) || only(r, o, names) ||
	    str_member(r, o, "name", &name))
		return;
	if (!name)
		return reply_error(r, 400, cairn_errname(CAIRN_EINVAL), "\"name\" is required");
	if ((rc = cairn_domain_create(r->s->st, name)))
		return reply_cairn(r, rc);
	PUTS(&r->out, "{\"name\":");
	wire_cstr(&r->out, name);
	PUTS(&r->out, ",\"created\":true}");
	reply_json(r, 201);
}

static void h_domain_drop(req *r)
{
	int rc;

	if (allow(r, NULL, NEED_ADMIN_ALL, NULL))
		return;
	if ((rc = cairn_domain_drop(r->s->st, r->seg[2])))
		return reply_cairn(r, rc);
	PUTS(&r->out, "{\"name\":");
	wire_cstr(&r->out, r->seg[2]);
	PUTS(&r->out, ",\"dropped\":true}");
	reply_json(r, 200);
}

/* ------------------------------------------------------------- schema -- */

static void h_schema_get(req *r)
{
	const char *d = r->seg[2], *js;
	cairn_txn *t;
	size_t n;
	int rc;

	if (allow(r, d, NEED_READ, NULL) || begin(r, d, &t))
		return;
	if ((rc = cairn_schema_get(t, &js, &n))) {
		cairn_txn_end(t);
		return reply_cairn(r, rc);
	}
	buf_put(&r->out, js, n);
	reply_read(r, t);
	cairn_txn_end(t);
}

/* Provenance from a body's members: actor, source, confidence, message, trace_id. */
static int provenance(req *r, const jv *o, cairn_commit_options *co)
{
	const jv *c = jv_get(o, "confidence");

	if (str_member(r, o, "actor", &co->prov.actor) ||
	    str_member(r, o, "source", &co->prov.source) ||
	    str_member(r, o, "message", &co->prov.message) ||
	    str_member(r, o, "trace_id", &co->prov.trace_id))
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
		co->prov.actor = arena_strndup(&r->mem, r->tok.label[0] ? r->tok.label : "token",
					       strlen(r->tok.label[0] ? r->tok.label : "token"));
	co->prov.client_time_ms = 0;
	return 0;
}

static void h_schema_put(req *r)
{
	static const char *const names[] = {"schema", "actor", "source", "confidence", "message",
					    "trace_id", NULL};
	const char *d = r->seg[2];
	cairn_commit_options co;
	cairn_commit_result res;
	const jv *o, *sch;
	buf sb = BUF_INIT;
	int rc;

	if (allow(r, d, NEED_ADMIN, NULL) || !(o = body_object(r)) || only(r, o, names))
		return;
	memset(&co, 0, sizeof(co));
	co.domain = d;
	if (provenance(r, o, &co))
		return;
	if (!(sch = jv_get(o, "schema")) || sch->type != JV_OBJECT)
		return reply_error(r, 400, cairn_errname(CAIRN_EINVAL),
				   "\"schema\" is the schema, an object (docs/schema.md)");
	jv_canon(sch, &sb);
	rc = sb.oom ? CAIRN_ENOMEM
		    : cairn_schema_apply(r->s->st, &co, (const char *)sb.p, sb.len, &res);
	buf_release(&sb);
	if (rc)
		return reply_cairn(r, rc);
	buf_printf(&r->out, "{\"revision\":%llu,\"hash\":", (unsigned long long)res.revision);
	wire_hash(&r->out, res.hash);
	buf_put_u8(&r->out, '}');
	written(r, res.revision);
	reply_json(r, 200);
}

/* ------------------------------------------------------------ records -- */

static void h_record(req *r)
{
	const char *d = r->seg[2], *kind = r->seg[4], *key = r->seg[5];
	cairn_record rec;
	cairn_revision rv;
	cairn_txn *t;
	int rc;

	if (allow(r, d, NEED_READ, NULL) || begin(r, d, &t))
		return;
	rc = cairn_get(t, kind, key, strlen(key), &rec);
	if (!rc)
		rc = cairn_revision_get(t, rec.revision, &rv);
	if (rc) {
		cairn_txn_end(t);
		return reply_cairn(r, rc);
	}
	w_record(&r->out, &rec);
	r->out.len--; /* reopen the object */
	PUTS(&r->out, ",\"provenance\":");
	w_revision(&r->out, &rv);
	buf_put_u8(&r->out, '}');
	reply_read(r, t);
	cairn_txn_end(t);
}

static void h_page(req *r)
{
	const char *d = r->seg[2], *kind = r->seg[4], *after = arg(r, "after");
	long limit;
	cairn_record *recs;
	cairn_txn *t;
	size_t n;
	int rc;

	if (allow(r, d, NEED_READ, NULL) || (limit = limit_arg(r, 50)) < 0 || begin(r, d, &t))
		return;
	recs = arena_alloc(&r->mem, (size_t)limit * sizeof(*recs));
	rc = recs ? cairn_page(t, kind, after, after ? strlen(after) : 0, recs, (size_t)limit, &n)
		  : CAIRN_ENOMEM;
	if (rc) {
		cairn_txn_end(t);
		return reply_cairn(r, rc);
	}
	PUTS(&r->out, "{\"items\":[");
	for (size_t i = 0; i < n; i++) {
		if (i)
			buf_put_u8(&r->out, ',');
		w_record(&r->out, &recs[i]);
	}
	PUTS(&r->out, "],\"next\":");
	if (n == (size_t)limit)
		wire_str(&r->out, recs[n - 1].key, recs[n - 1].key_len);
	else
		PUTS(&r->out, "null");
	buf_put_u8(&r->out, '}');
	reply_read(r, t);
	cairn_txn_end(t);
}

static void h_links(req *r)
{
	const char *d = r->seg[2], *kind = r->seg[4], *key = r->seg[5];
	const char *dir = arg(r, "dir"), *rel = arg(r, "rel"), *cursor = arg(r, "cursor");
	cairn_link_cursor cur;
	cairn_link *l;
	cairn_txn *t;
	long limit;
	size_t n;
	int rc, dv;

	memset(&cur, 0, sizeof(cur));
	dv = !dir || strcmp(dir, "both") == 0 ? CAIRN_BOTH
	     : strcmp(dir, "out") == 0	       ? CAIRN_OUT
	     : strcmp(dir, "in") == 0	       ? CAIRN_IN
						: -1;
	if (allow(r, d, NEED_READ, NULL) || (limit = limit_arg(r, 100)) < 0)
		return;
	if (dv < 0)
		return reply_error(r, 400, cairn_errname(CAIRN_EINVAL), "dir is out, in or both");
	if (cursor && unhex_cursor(cursor, cur.state, sizeof(cur.state)))
		return reply_error(r, 400, cairn_errname(CAIRN_EINVAL), "not a cursor of this route");
	if (begin(r, d, &t))
		return;
	l = arena_alloc(&r->mem, (size_t)limit * sizeof(*l));
	rc = l ? cairn_links(t, kind, key, strlen(key), dv, rel, &cur, l, (size_t)limit, &n)
	       : CAIRN_ENOMEM;
	if (rc) {
		cairn_txn_end(t);
		return reply_cairn(r, rc);
	}
	PUTS(&r->out, "{\"items\":[");
	for (size_t i = 0; i < n; i++) {
		if (i)
			buf_put_u8(&r->out, ',');
		w_link(&r->out, &l[i]);
	}
	PUTS(&r->out, "],\"next\":");
	if (n == (size_t)limit)
		hex_cursor(&r->out, cur.state, sizeof(cur.state));
	else
		PUTS(&r->out, "null");
	buf_put_u8(&r->out, '}');
	reply_read(r, t);
	cairn_txn_end(t);
}

static void h_counts(req *r)
{
	const char *d = r->seg[2], *kinds[1024];
	cairn_txn *t;
	size_t n;
	int rc;

	if (allow(r, d, NEED_READ, NULL) || begin(r, d, &t))
		return;
	PUTS(&r->out, "{\"counts\":{");
	rc = cairn_kind_list(t, kinds, 1024, &n);
	for (size_t i = 0; i < n && !rc; i++) {
		uint64_t c;

		if ((rc = cairn_count(t, kinds[i], &c)))
			break;
		if (i)
			buf_put_u8(&r->out, ',');
		wire_cstr(&r->out, kinds[i]);
		buf_printf(&r->out, ":%llu", (unsigned long long)c);
	}
	if (rc) {
		cairn_txn_end(t);
		return reply_cairn(r, rc);
	}
	PUTS(&r->out, "}}");
	reply_read(r, t);
	cairn_txn_end(t);
}

/* ---------------------------------------------------------- revisions -- */

static void h_revisions(req *r)
{
	const char *d = r->seg[2], *before = arg(r, "before");
	cairn_revision *revs;
	uint64_t b = 0;
	cairn_txn *t;
	long limit;
	size_t n;
	int rc;

	if (allow(r, d, NEED_READ, NULL) || (limit = limit_arg(r, 20)) < 0)
		return;
	if (before && parse_u64(before, &b))
		return reply_error(r, 400, cairn_errname(CAIRN_EINVAL), "before is a revision number");
	if (begin(r, d, &t))
		return;
	revs = arena_alloc(&r->mem, (size_t)limit * sizeof(*revs));
	rc = revs ? cairn_log(t, b, revs, (size_t)limit, &n) : CAIRN_ENOMEM;
	if (rc) {
		cairn_txn_end(t);
		return reply_cairn(r, rc);
	}
	PUTS(&r->out, "{\"items\":[");
	for (size_t i = 0; i < n; i++) {
		if (i)
			buf_put_u8(&r->out, ',');
		w_revision(&r->out, &revs[i]);
	}
	PUTS(&r->out, "],\"next\":");
	if (n == (size_t)limit && revs[n - 1].revision > 1)
		buf_printf(&r->out, "%llu", (unsigned long long)revs[n - 1].revision);
	else
		PUTS(&r->out, "null");
	buf_put_u8(&r->out, '}');
	reply_read(r, t);
	cairn_txn_end(t);
}

static void h_revision(req *r)
{
	const char *d = r->seg[2];
	cairn_revision rv;
	uint64_t rev;
	cairn_txn *t;
	int rc;

	if (allow(r, d, NEED_READ, NULL))
		return;
	if (parse_u64(r->seg[4], &rev))
		return reply_error(r, 404, cairn_errname(CAIRN_ENOTFOUND), "not a revision number");
	if (begin(r, d, &t))
		return;
	if ((rc = cairn_revision_get(t, rev, &rv))) {
		cairn_txn_end(t);
		return reply_cairn(r, rc);
	}
	w_revision(&r->out, &rv);
	reply_read(r, t);
	cairn_txn_end(t);
}

static const char *const change_names[] = {"unchanged", "created", "updated", "deleted"};

struct items_out {
	req *r;
	int first, two_sided;
	int timed;	/* a read: stop at the request's deadline */
};

/* The answer of a read stopped at its deadline. */
static void reply_timeout(req *r)
{
	reply_error(r, 503, E_TIMEOUT, "the read took longer than %u ms (the server's --query-ms)",
		    r->s->cfg.query_ms);
}

static int past_deadline(const req *r)
{
	return r->deadline_ns && now_ns() > r->deadline_ns;
}

static int w_item(void *ctx, const cairn_change_item *it)
{
	struct items_out *io = ctx;
	buf *b = &io->r->out;

	if (io->timed && past_deadline(io->r))
		return CAIRN_ELIMIT;
	if (!io->first)
		buf_put_u8(b, ',');
	io->first = 0;
	if (it->is_link) {
		PUTS(b, "{\"type\":\"link\",\"rel\":");
		wire_cstr(b, it->rel);
		PUTS(b, ",\"from\":");
		wire_endpoint(b, it->from_kind, it->from_key, it->from_len);
		PUTS(b, ",\"to\":");
		wire_endpoint(b, it->to_kind, it->to_key, it->to_len);
	} else {
		PUTS(b, "{\"type\":\"record\",\"kind\":");
		wire_cstr(b, it->kind);
		PUTS(b, ",\"key\":");
		wire_str(b, it->key, it->key_len);
	}
	buf_printf(b, ",\"ours\":\"%s\"", change_names[it->ours & 3]);
	if (io->two_sided)
		buf_printf(b, ",\"theirs\":\"%s\"", change_names[it->theirs & 3]);
	buf_printf(b, ",\"conflicts\":%d,\"unresolved\":%d,\"diff\":", it->conflicts,
		   it->unresolved);
	buf_put(b, it->diff, it->diff_len);
	buf_put_u8(b, '}');
	return b->oom ? CAIRN_ENOMEM : 0;
}

static void h_revision_changes(req *r)
{
	const char *d = r->seg[2];
	struct items_out io = {r, 1, 0, 1};
	uint64_t rev;
	cairn_txn *t;
	int rc;

	if (allow(r, d, NEED_READ, NULL))
		return;
	if (parse_u64(r->seg[4], &rev))
		return reply_error(r, 404, cairn_errname(CAIRN_ENOTFOUND), "not a revision number");
	if (begin(r, d, &t))
		return;
	PUTS(&r->out, "{\"items\":[");
	if ((rc = cairn_revision_changes(t, rev, w_item, &io))) {
		cairn_txn_end(t);
		return past_deadline(r) ? reply_timeout(r) : reply_cairn(r, rc);
	}
	PUTS(&r->out, "]}");
	reply_read(r, t);
	cairn_txn_end(t);
}

/* ---------------------------------------------------- history, lineage -- */

static void w_history(req *r, const cairn_history_entry *h, size_t n, const cairn_history_cursor *c)
{
	PUTS(&r->out, "{\"items\":[");
	for (size_t i = 0; i < n; i++) {
		if (i)
			buf_put_u8(&r->out, ',');
		buf_printf(&r->out, "{\"change\":\"%s\",\"vid\":%llu,\"title\":", change_names[h[i].change & 3],
			   (unsigned long long)h[i].vid);
		wire_str(&r->out, h[i].title, h[i].title_len);
		PUTS(&r->out, ",\"values\":");
		buf_put(&r->out, h[i].values, h[i].values_len);
		PUTS(&r->out, ",\"diff\":");
		buf_put(&r->out, h[i].diff, h[i].diff_len);
		PUTS(&r->out, ",\"provenance\":");
		w_revision(&r->out, &h[i].rev);
		buf_put_u8(&r->out, '}');
	}
	PUTS(&r->out, "],\"next\":");
	if (c->done)
		PUTS(&r->out, "null");
	else
		buf_printf(&r->out, "\"%llu\"", (unsigned long long)c->next_vid);
	buf_put_u8(&r->out, '}');
}

/* ?cursor= of a history page: the next vid. */
static int history_cursor(req *r, cairn_history_cursor *c)
{
	const char *s = arg(r, "cursor");

	memset(c, 0, sizeof(*c));
	if (s && parse_u64(s, &c->next_vid)) {
		reply_error(r, 400, cairn_errname(CAIRN_EINVAL), "not a cursor of this route");
		return -1;
	}
	return 0;
}

static void h_history(req *r)
{
	const char *d = r->seg[2], *kind = r->seg[4], *key = r->seg[5];
	cairn_history_cursor c;
	cairn_history_entry *h;
	cairn_txn *t;
	long limit;
	size_t n;
	int rc;

	if (allow(r, d, NEED_READ, NULL) || (limit = limit_arg(r, 20)) < 0 || history_cursor(r, &c) ||
	    begin(r, d, &t))
		return;
	h = arena_alloc(&r->mem, (size_t)limit * sizeof(*h));
	rc = h ? cairn_history(t, kind, key, strlen(key), &c, h, (size_t)limit, &n) : CAIRN_ENOMEM;
	if (rc) {
		cairn_txn_end(t);
		return reply_cairn(r, rc);
	}
	w_history(r, h, n, &c);
	reply_read(r, t);
	cairn_txn_end(t);
}

static void w_lineage_entry(buf *b, const char *attr, const cairn_revision *rv)
{
	PUTS(b, "{\"attribute\":");
	wire_cstr(b, attr);
	PUTS(b, ",\"provenance\":");
	w_revision(b, rv);
	buf_put_u8(b, '}');
}

static void h_lineage(req *r)
{
	const char *d = r->seg[2], *kind = r->seg[4], *key = r->seg[5];
	cairn_lineage_entry *le;
	cairn_revision created;
	cairn_txn *t;
	size_t n;
	int rc;

	if (allow(r, d, NEED_READ, NULL) || begin(r, d, &t))
		return;
	le = arena_alloc(&r->mem, 257 * sizeof(*le));
	rc = le ? cairn_lineage(t, kind, key, strlen(key), le, 257, &n, &created) : CAIRN_ENOMEM;
	if (rc) {
		cairn_txn_end(t);
		return reply_cairn(r, rc);
	}
	PUTS(&r->out, "{\"created\":");
	w_revision(&r->out, &created);
	PUTS(&r->out, ",\"values\":[");
	for (size_t i = 0; i < n; i++) {
		if (i)
			buf_put_u8(&r->out, ',');
		w_lineage_entry(&r->out, *le[i].attribute ? le[i].attribute : "(title)", &le[i].rev);
	}
	PUTS(&r->out, "]}");
	reply_read(r, t);
	cairn_txn_end(t);
}

/* /links/{rel}/{from}/{to}/history|lineage: from and to are "Kind:key". */
static void h_link_history(req *r)
{
	const char *d = r->seg[2], *rel = r->seg[4], *fk, *fkey, *tk, *tkey;
	int lineage = strcmp(r->seg[7], "lineage") == 0;
	cairn_history_cursor c;
	cairn_txn *t;
	long limit = 20;
	int rc;

	if (allow(r, d, NEED_READ, NULL))
		return;
	if (split_endpoint(r, r->seg[5], &fk, &fkey) || split_endpoint(r, r->seg[6], &tk, &tkey))
		return reply_error(r, 400, cairn_errname(CAIRN_EINVAL),
				   "a Link's ends are Kind:key, percent-encoded");
	if (!lineage && ((limit = limit_arg(r, 20)) < 0 || history_cursor(r, &c)))
		return;
	if (begin(r, d, &t))
		return;
	if (lineage) {
		cairn_lineage_entry le;
		cairn_revision created;

		rc = cairn_link_lineage(t, rel, fk, fkey, strlen(fkey), tk, tkey, strlen(tkey), &le,
					&created);
		if (!rc) {
			PUTS(&r->out, "{\"created\":");
			w_revision(&r->out, &created);
			PUTS(&r->out, ",\"values\":[");
			w_lineage_entry(&r->out, "(values)", &le.rev);
			PUTS(&r->out, "]}");
		}
	} else {
		cairn_history_entry *h = arena_alloc(&r->mem, (size_t)limit * sizeof(*h));
		size_t n;

		rc = h ? cairn_link_history(t, rel, fk, fkey, strlen(fkey), tk, tkey, strlen(tkey), &c,
					    h, (size_t)limit, &n)
		       : CAIRN_ENOMEM;
		if (!rc)
			w_history(r, h, n, &c);
	}
	if (rc) {
		cairn_txn_end(t);
		return reply_cairn(r, rc);
	}
	reply_read(r, t);
	cairn_txn_end(t);
}

/* ------------------------------------------------------------ commits -- */

/* "expect_revision": the head the write expects (refused with revision_conflict if it moved). */
static int expect_member(req *r, const jv *o, cairn_commit_options *co)
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

/* The error of change i of a request, named as a commit's error names it. */
static void reply_change_error(req *r, int rc, uint32_t i)
{
	char msg[600];

	snprintf(msg, sizeof(msg), "%s", cairn_errmsg()); /* it names the change already */
	buf_reset(&r->out);
	PUTS(&r->out, "{\"error\":{\"code\":");
	wire_cstr(&r->out, cairn_errname(rc));
	PUTS(&r->out, ",\"message\":");
	wire_cstr(&r->out, msg);
	buf_printf(&r->out, ",\"change\":%u}}", i);
	reply_json(r, status_of(rc));
}

static void commit_done(req *r, job *j)
{
	if (j->cr.rc) {
		buf_reset(&r->out);
		PUTS(&r->out, "{\"error\":{\"code\":");
		wire_cstr(&r->out, cairn_errname(j->cr.rc));
		PUTS(&r->out, ",\"message\":");
		wire_cstr(&r->out, j->cr.msg);
		if (j->cr.change >= 0)
			buf_printf(&r->out, ",\"change\":%ld", j->cr.change);
		PUTS(&r->out, "}}");
		reply_json(r, status_of(j->cr.rc));
		return;
	}
	buf_printf(&r->out, "{\"revision\":%llu,\"hash\":", (unsigned long long)j->cr.res.revision);
	wire_hash(&r->out, j->cr.res.hash);
	buf_printf(&r->out, ",\"changes\":%llu}", (unsigned long long)j->cr.res.changes);
	written(r, j->cr.res.revision);
	reply_json(r, 201);
}

static int bool_member(req *r, const jv *o, const char *name, int *out);

/*
 * POST /v1/domains/{d}/commits: {"changes":[import lines...], "branch", "expect_revision",
 * "actor", "source", "confidence", "message", "trace_id", "embed", "vector_model"}.
 */
static void h_commit(req *r)
{
	static const char *const names[] = {"changes", "branch",   "expect_revision", "actor",
					    "source",  "confidence", "message",	    "trace_id",
					    "embed",   "vector_model", NULL};
	const char *vmodel = NULL;
	int embed = 0;
	const char *d = r->seg[2], *branch;
	const jv *o, *ch;
	buf line = BUF_INIT;
	job *j;
	int rc = 0;

	if (allow(r, d, NEED_WRITE, NULL) || !(o = body_object(r)) || only(r, o, names) ||
	    str_member(r, o, "branch", &branch) || bool_member(r, o, "embed", &embed) ||
	    str_member(r, o, "vector_model", &vmodel))
		return;
	if (embed && !r->s->emb)
		return reply_error(r, 400, cairn_errname(CAIRN_EINVAL),
				   "embed needs a model: start the server with --model");
	if (embed && vmodel)
		return reply_error(r, 400, cairn_errname(CAIRN_EINVAL),
				   "embed names its model: no vector_model with it");
	if (!branch)
		branch = arg(r, "branch");
	if (allow(r, d, NEED_WRITE, branch ? branch : "main"))
		return;
	ch = jv_get(o, "changes");
	if (!ch || ch->type != JV_ARRAY || ch->len == 0)
		return reply_error(r, 400, cairn_errname(CAIRN_EINVAL),
				   "\"changes\" is a non-empty array of changes (import lines)");
	if (ch->len > r->s->cfg.max_batch)
		return reply_error(r, 413, cairn_errname(CAIRN_ELIMIT),
				   "a commit request holds at most %u changes", r->s->cfg.max_batch);
	j = cr_calloc(1, sizeof(*j));
	if (!j || cairn_changeset_new(&j->cs)) {
		cr_free(j);
		return reply_cairn(r, CAIRN_ENOMEM);
	}
	j->r = r;
	j->respond = commit_done;
	j->co.domain = d;
	j->co.branch = branch;
	j->co.embedder = embed ? r->s->emb : NULL;
	j->co.vector_model = vmodel;
	if (provenance(r, o, &j->co))
		goto fail;
	if (expect_member(r, o, &j->co))
		goto fail;
	for (uint32_t i = 0; i < ch->len && !rc; i++) {
		buf_reset(&line);
		if (ch->u.items[i].type != JV_OBJECT) {
			reply_error(r, 400, cairn_errname(CAIRN_EINVAL), "change %u is not an object", i);
			goto fail;
		}
		jv_canon(&ch->u.items[i], &line);
		rc = line.oom ? CAIRN_ENOMEM
			      : cairn_cs_add_json(j->cs, (const char *)line.p, line.len);
		if (rc) {
			reply_change_error(r, rc, i);
			goto fail;
		}
	}
	buf_release(&line);
	writer_submit(r->s, j);
	return;
fail:
	buf_release(&line);
	cairn_changeset_free(j->cs);
	cr_free(j);
}

/* ----------------------------------------------------------- branches -- */

static int w_branch(void *ctx, const cairn_branch_info *b)
{
	struct items_out *io = ctx;
	buf *o = &io->r->out;

	if (!io->first)
		buf_put_u8(o, ',');
	io->first = 0;
	PUTS(o, "{\"name\":");
	wire_cstr(o, b->name);
	PUTS(o, ",\"parent\":");
	wire_cstr(o, b->parent);
	buf_printf(o, ",\"fork_revision\":%llu,\"head_revision\":%llu,\"created\":",
		   (unsigned long long)b->fork_revision, (unsigned long long)b->head_revision);
	wire_time(o, b->created_ms);
	buf_put_u8(o, '}');
	return 0;
}

static void h_branches(req *r)
{
	struct items_out io = {r, 1, 0, 0};
	int rc;

	if (allow(r, r->seg[2], NEED_READ, NULL))
		return;
	PUTS(&r->out, "{\"items\":[");
	if ((rc = cairn_branch_list(r->s->st, r->seg[2], w_branch, &io)))
		return reply_cairn(r, rc);
	PUTS(&r->out, "]}");
	reply_json(r, 200);
}

static void h_branch_create(req *r)
{
	static const char *const names[] = {"name", "from", NULL};
	const char *d = r->seg[2], *name, *from;
	const jv *o = NULL;
	int rc;

	if (allow(r, d, NEED_WRITE, NULL) || !(o = body_object(r)) || only(r, o, names) ||
	    str_member(r, o, "name", &name) || str_member(r, o, "from", &from))
		return;
	if (!name)
		return reply_error(r, 400, cairn_errname(CAIRN_EINVAL), "\"name\" is required");
	if (allow(r, d, NEED_WRITE, name))
		return;
	if ((rc = cairn_branch_create(r->s->st, d, name, from)))
		return reply_cairn(r, rc);
	PUTS(&r->out, "{\"name\":");
	wire_cstr(&r->out, name);
	PUTS(&r->out, ",\"created\":true}");
	reply_json(r, 201);
}

static void h_branch_rename(req *r)
{
	static const char *const names[] = {"name", NULL};
	const char *d = r->seg[2], *name;
	const jv *o = NULL;
	int rc;

	if (allow(r, d, NEED_WRITE, NULL) || !(o = body_object(r)) || only(r, o, names) ||
	    str_member(r, o, "name", &name))
		return;
	if (!name)
		return reply_error(r, 400, cairn_errname(CAIRN_EINVAL),
				   "\"name\", the new name, is required");
	if (allow(r, d, NEED_WRITE, r->seg[4]) || allow(r, d, NEED_WRITE, name))
		return;
	if ((rc = cairn_branch_rename(r->s->st, d, r->seg[4], name)))
		return reply_cairn(r, rc);
	PUTS(&r->out, "{\"name\":");
	wire_cstr(&r->out, name);
	PUTS(&r->out, ",\"renamed\":true}");
	reply_json(r, 200);
}

static void h_branch_delete(req *r)
{
	const char *d = r->seg[2];
	int rc;

	if (allow(r, d, NEED_WRITE, r->seg[4]))
		return;
	if ((rc = cairn_branch_delete(r->s->st, d, r->seg[4])))
		return reply_cairn(r, rc);
	PUTS(&r->out, "{\"name\":");
	wire_cstr(&r->out, r->seg[4]);
	PUTS(&r->out, ",\"deleted\":true}");
	reply_json(r, 200);
}

/* ------------------------------------------------------- diff, merge -- */

/* GET /diff?ours=A&theirs=B (branches), or ?branch=B&from=R1&to=R2 (revisions). */
static void h_diff(req *r)
{
	const char *d = r->seg[2], *theirs = arg(r, "theirs"), *from = arg(r, "from"),
		   *to = arg(r, "to");
	struct items_out io = {r, 1, 0, 1};
	int rc;

	if (allow(r, d, NEED_READ, NULL))
		return;
	PUTS(&r->out, "{\"items\":[");
	if (theirs) {
		io.two_sided = 1;
		rc = cairn_branch_diff(r->s->st, d, arg(r, "ours"), theirs, w_item, &io);
	} else if (from && to) {
		uint64_t f, t2;
		cairn_txn *t;

		if (parse_u64(from, &f) || parse_u64(to, &t2))
			return reply_error(r, 400, cairn_errname(CAIRN_EINVAL),
					   "from and to are revision numbers");
		if (begin(r, d, &t))
			return;
		rc = cairn_diff_revisions(t, f, t2, w_item, &io);
		cairn_txn_end(t);
	} else {
		return reply_error(r, 400, cairn_errname(CAIRN_EINVAL),
				   "give ours and theirs (two branches), or from and to (revisions)");
	}
	if (rc)
		return past_deadline(r) ? reply_timeout(r) : reply_cairn(r, rc);
	PUTS(&r->out, "]}");
	reply_json(r, 200);
}

static void w_merge_result(buf *b, const cairn_merge_result *m)
{
	buf_printf(b, "\"revision\":%llu,\"changes\":%llu,\"differ\":%llu,\"conflicts\":%llu,"
		      "\"unresolved\":%llu",
		   (unsigned long long)m->revision, (unsigned long long)m->changes,
		   (unsigned long long)m->items, (unsigned long long)m->conflicts,
		   (unsigned long long)m->unresolved);
	if (m->revision) {
		PUTS(b, ",\"hash\":");
		wire_hash(b, m->hash);
	}
}

/* Merge options from a body: resolve, resolutions (an array of objects), provenance. */
static int merge_body(req *r, const jv *o, cairn_merge_options *mo, buf *res)
{
	const char *resolve;
	const jv *rs = jv_get(o, "resolutions"), *dr = jv_get(o, "dry_run");

	if (str_member(r, o, "resolve", &resolve) || provenance(r, o, &mo->commit))
		return -1;
	mo->resolve = !resolve || strcmp(resolve, "none") == 0 ? CAIRN_RESOLVE_NONE
		      : strcmp(resolve, "ours") == 0	       ? CAIRN_RESOLVE_OURS
		      : strcmp(resolve, "theirs") == 0	       ? CAIRN_RESOLVE_THEIRS
							       : -1;
	if (mo->resolve < 0) {
		reply_error(r, 400, cairn_errname(CAIRN_EINVAL), "resolve is none, ours or theirs");
		return -1;
	}
	if (dr && dr->type != JV_NULL) {
		if (!jv_is_bool(dr)) {
			reply_error(r, 400, cairn_errname(CAIRN_ETYPE), "\"dry_run\" is true or false");
			return -1;
		}
		mo->dry_run = dr->type == JV_TRUE;
	}
	if (rs && rs->type != JV_NULL) {
		if (rs->type != JV_ARRAY) {
			reply_error(r, 400, cairn_errname(CAIRN_ETYPE),
				    "\"resolutions\" is an array of resolutions");
			return -1;
		}
		for (uint32_t i = 0; i < rs->len; i++) {
			jv_canon(&rs->u.items[i], res);
			buf_put_u8(res, '\n');
		}
		if (res->oom) {
			reply_cairn(r, CAIRN_ENOMEM);
			return -1;
		}
		mo->resolutions = (const char *)res->p;
		mo->resolutions_len = res->len;
	}
	return 0;
}

/* POST /merges {"from","into","resolve","resolutions","dry_run", provenance}. */
static void h_merge(req *r)
{
	static const char *const names[] = {"from", "into", "resolve", "resolutions", "dry_run",
					    "expect_revision", "actor", "source", "confidence",
					    "message", "trace_id", NULL};
	const char *d = r->seg[2], *from, *into;
	struct items_out io = {r, 1, 1, 0};
	cairn_merge_options mo;
	cairn_merge_result mr;
	buf res = BUF_INIT;
	const jv *o = NULL;
	int rc;

	if (allow(r, d, NEED_WRITE, NULL) || !(o = body_object(r)) || only(r, o, names) ||
	    str_member(r, o, "from", &from) || str_member(r, o, "into", &into))
		return;
	if (!from)
		return reply_error(r, 400, cairn_errname(CAIRN_EINVAL),
				   "\"from\", the branch to merge, is required");
	if (allow(r, d, NEED_WRITE, into ? into : "main"))
		return;
	memset(&mo, 0, sizeof(mo));
	mo.commit.domain = d;
	mo.commit.branch = into;
	mo.source = from;
	if (expect_member(r, o, &mo.commit) || merge_body(r, o, &mo, &res)) {
		buf_release(&res);
		return;
	}
	PUTS(&r->out, "{\"items\":[");
	memset(&mr, 0, sizeof(mr));
	io.timed = mo.dry_run; /* a dry run is a read; a merge runs to its end */
	rc = cairn_merge(r->s->st, &mo, w_item, &io, &mr);
	buf_release(&res);
	if (rc && rc != CAIRN_EMERGE)
		return io.timed && past_deadline(r) ? reply_timeout(r) : reply_cairn(r, rc);
	PUTS(&r->out, "],");
	w_merge_result(&r->out, &mr);
	if (rc == CAIRN_EMERGE) {
		const char *m = cairn_errmsg();

		PUTS(&r->out, ",\"error\":{\"code\":\"merge_conflict\",\"message\":");
		wire_cstr(&r->out, m);
		PUTS(&r->out, "}}");
		return reply_json(r, 409);
	}
	buf_put_u8(&r->out, '}');
	written(r, mr.revision);
	reply_json(r, mo.dry_run || !mr.revision ? 200 : 201);
}

/* ---------------------------------------------------------- proposals -- */

static const char *const status_names[] = {"?", "open", "merged", "rejected", "withdrawn"};

static void w_proposal(buf *b, const cairn_proposal *p)
{
	buf_printf(b, "{\"id\":%llu,\"status\":\"%s\",\"source\":", (unsigned long long)p->id,
		   status_names[p->status >= 1 && p->status <= 4 ? p->status : 0]);
	wire_cstr(b, p->source);
	PUTS(b, ",\"target\":");
	wire_cstr(b, p->target);
	PUTS(b, ",\"title\":");
	wire_str(b, p->title, p->title_len);
	PUTS(b, ",\"description\":");
	wire_str(b, p->description, p->description_len);
	PUTS(b, ",\"author\":");
	wire_str(b, p->author, p->author_len);
	PUTS(b, ",\"created\":");
	wire_time(b, p->created_ms);
	PUTS(b, ",\"updated\":");
	wire_time(b, p->updated_ms);
	if (p->merged_revision)
		buf_printf(b, ",\"merged_revision\":%llu", (unsigned long long)p->merged_revision);
	PUTS(b, ",\"notes\":");
	buf_put(b, p->notes, p->notes_len);
	buf_put_u8(b, '}');
}

static int w_proposal_cb(void *ctx, const cairn_proposal *p)
{
	struct items_out *io = ctx;

	if (!io->first)
		buf_put_u8(&io->r->out, ',');
	io->first = 0;
	w_proposal(&io->r->out, p);
	return 0;
}

static void h_proposals(req *r)
{
	const char *d = r->seg[2], *status = arg(r, "status");
	struct items_out io = {r, 1, 0, 0};
	cairn_txn *t;
	int st = 0, rc;

	if (allow(r, d, NEED_READ, NULL))
		return;
	for (int i = 1; i <= 4 && status; i++)
		if (strcmp(status, status_names[i]) == 0)
			st = i;
	if (status && !st)
		return reply_error(r, 400, cairn_errname(CAIRN_EINVAL),
				   "status is open, merged, rejected or withdrawn");
	if (begin(r, d, &t))
		return;
	PUTS(&r->out, "{\"items\":[");
	rc = cairn_proposal_list(t, st, w_proposal_cb, &io);
	if (rc) {
		cairn_txn_end(t);
		return reply_cairn(r, rc);
	}
	PUTS(&r->out, "]}");
	reply_read(r, t);
	cairn_txn_end(t);
}

static int proposal_id(req *r, uint64_t *id)
{
	if (parse_u64(r->seg[4], id)) {
		reply_error(r, 404, cairn_errname(CAIRN_ENOTFOUND), "not a proposal number");
		return -1;
	}
	return 0;
}

static void h_proposal(req *r)
{
	const char *d = r->seg[2];
	cairn_proposal p;
	cairn_txn *t;
	uint64_t id;
	int rc;

	if (allow(r, d, NEED_READ, NULL) || proposal_id(r, &id) || begin(r, d, &t))
		return;
	if ((rc = cairn_proposal_get(t, id, &p))) {
		cairn_txn_end(t);
		return reply_cairn(r, rc);
	}
	w_proposal(&r->out, &p);
	reply_read(r, t);
	cairn_txn_end(t);
}

/* The target of proposal id, to check the token against (in r's arena). */
static const char *proposal_target(req *r, uint64_t id)
{
	cairn_read_options ro = {0};
	cairn_proposal p;
	cairn_txn *t;
	char *target = NULL;
	int rc;

	ro.domain = r->seg[2];
	if ((rc = cairn_read_begin(r->s->st, &ro, &t))) {
		reply_cairn(r, rc);
		return NULL;
	}
	if ((rc = cairn_proposal_get(t, id, &p)))
		reply_cairn(r, rc);
	else if (!(target = arena_strndup(&r->mem, p.target, strlen(p.target))))
		reply_cairn(r, CAIRN_ENOMEM);
	cairn_txn_end(t);
	return target;
}

static void h_propose(req *r)
{
	static const char *const names[] = {"source", "target", "title", "description", "author",
					    NULL};
	const char *d = r->seg[2], *source, *target, *title, *desc, *author;
	const jv *o = NULL;
	uint64_t id;
	int rc;

	if (allow(r, d, NEED_WRITE, NULL) || !(o = body_object(r)) || only(r, o, names) ||
	    str_member(r, o, "source", &source) || str_member(r, o, "target", &target) ||
	    str_member(r, o, "title", &title) || str_member(r, o, "description", &desc) ||
	    str_member(r, o, "author", &author))
		return;
	if (!source)
		return reply_error(r, 400, cairn_errname(CAIRN_EINVAL), "\"source\" is required");
	/* Proposing asks for nothing on the target: the token must be able to write the source. */
	if (allow(r, d, NEED_WRITE, source))
		return;
	if (!author)
		author = r->tok.label[0] ? r->tok.label : "token";
	if ((rc = cairn_propose(r->s->st, d, source, target, title, desc, author, &id)))
		return reply_cairn(r, rc);
	buf_printf(&r->out, "{\"id\":%llu}", (unsigned long long)id);
	reply_json(r, 201);
}

static void h_proposal_diff(req *r)
{
	const char *d = r->seg[2];
	struct items_out io = {r, 1, 1, 1};
	cairn_merge_result mr;
	uint64_t id;
	int rc;

	if (allow(r, d, NEED_READ, NULL) || proposal_id(r, &id))
		return;
	PUTS(&r->out, "{\"items\":[");
	memset(&mr, 0, sizeof(mr));
	if ((rc = cairn_proposal_diff(r->s->st, d, id, w_item, &io, &mr)))
		return past_deadline(r) ? reply_timeout(r) : reply_cairn(r, rc);
	PUTS(&r->out, "],");
	w_merge_result(&r->out, &mr);
	buf_put_u8(&r->out, '}');
	reply_json(r, 200);
}

static void h_proposal_note(req *r)
{
	static const char *const names[] = {"text", "verdict", "author", NULL};
	const char *d = r->seg[2], *text, *verdict, *author;
	const jv *o = NULL;
	uint64_t id;
	int rc;

	/* A review note is a write: any writer of the Domain may leave one. */
	if (allow(r, d, NEED_WRITE, NULL) || proposal_id(r, &id) || !(o = body_object(r)) ||
	    only(r, o, names) || str_member(r, o, "text", &text) ||
	    str_member(r, o, "verdict", &verdict) || str_member(r, o, "author", &author))
		return;
	if (!text)
		return reply_error(r, 400, cairn_errname(CAIRN_EINVAL), "\"text\" is required");
	if (!author)
		author = r->tok.label[0] ? r->tok.label : "token";
	if ((rc = cairn_proposal_note(r->s->st, d, id, author, text, verdict)))
		return reply_cairn(r, rc);
	buf_printf(&r->out, "{\"id\":%llu,\"noted\":true}", (unsigned long long)id);
	reply_json(r, 201);
}

static void h_proposal_accept(req *r)
{
	static const char *const names[] = {"resolve", "resolutions", "expect_revision", "actor",
					    "source", "confidence", "message", "trace_id", NULL};
	const char *d = r->seg[2], *target;
	struct items_out io = {r, 1, 1, 0};
	cairn_merge_options mo;
	cairn_merge_result mr;
	buf res = BUF_INIT;
	const jv *o = NULL;
	uint64_t id;
	int rc;

	if (allow(r, d, NEED_WRITE, NULL) || proposal_id(r, &id) ||
	    (r->body.len && (!(o = body_object(r)) || only(r, o, names))) ||
	    !(target = proposal_target(r, id)) || allow(r, d, NEED_WRITE, target))
		return;
	if (!r->body.len)
		o = jv_object(&r->mem, 0);
	memset(&mo, 0, sizeof(mo));
	if (expect_member(r, o, &mo.commit) || merge_body(r, o, &mo, &res)) {
		buf_release(&res);
		return;
	}
	mo.dry_run = 0;
	PUTS(&r->out, "{\"items\":[");
	memset(&mr, 0, sizeof(mr));
	rc = cairn_proposal_accept(r->s->st, d, id, &mo, w_item, &io, &mr);
	buf_release(&res);
	if (rc && rc != CAIRN_EMERGE)
		return reply_cairn(r, rc);
	PUTS(&r->out, "],");
	w_merge_result(&r->out, &mr);
	if (rc) {
		PUTS(&r->out, ",\"error\":{\"code\":\"merge_conflict\",\"message\":");
		wire_cstr(&r->out, cairn_errmsg());
		PUTS(&r->out, "}}");
		return reply_json(r, 409);
	}
	buf_put_u8(&r->out, '}');
	written(r, mr.revision);
	reply_json(r, mr.revision ? 201 : 200);
}

static void h_proposal_close(req *r)
{
	static const char *const names[] = {"note", "author", NULL};
	const char *d = r->seg[2], *note, *author, *target;
	int reject = strcmp(r->seg[5], "reject") == 0;
	const jv *o = NULL;
	uint64_t id;
	int rc;

	if (allow(r, d, NEED_WRITE, NULL) || proposal_id(r, &id))
		return;
	if (r->body.len && (!(o = body_object(r)) || only(r, o, names) ||
			    str_member(r, o, "note", &note) || str_member(r, o, "author", &author)))
		return;
	if (!r->body.len)
		note = author = NULL;
	/* Rejecting is the target's reviewers' call; withdrawing, any writer's. */
	if (!(target = proposal_target(r, id)) ||
	    allow(r, d, NEED_WRITE, reject ? target : NULL))
		return;
	if (!author)
		author = r->tok.label[0] ? r->tok.label : "token";
	rc = cairn_proposal_close(r->s->st, d, id,
				  reject ? CAIRN_PROPOSAL_REJECTED : CAIRN_PROPOSAL_WITHDRAWN, author,
				  note);
	if (rc)
		return reply_cairn(r, rc);
	buf_printf(&r->out, "{\"id\":%llu,\"status\":\"%s\"}", (unsigned long long)id,
		   reject ? "rejected" : "withdrawn");
	reply_json(r, 200);
}

/* An import is streamed from its first call (route_stream); here only when it could not start. */
static void h_import_late(req *r)
{
	reply_error(r, 503, E_SHUTDOWN, "the server is shutting down");
}

/* ------------------------------------------------------------- export -- */

/* The export's output, into the answer, until the request's deadline. */
static ssize_t export_write(void *cookie, const char *p, size_t n)
{
	req *r = cookie;

	if (past_deadline(r) || r->out.oom) {
		errno = r->out.oom ? ENOMEM : ETIMEDOUT;
		return -1;
	}
	buf_put(&r->out, p, n);
	return (ssize_t)n;
}

static void h_export(req *r)
{
	const char *d = r->seg[2];
	cairn_txn *t;
	FILE *m;
	int rc;

	if (allow(r, d, NEED_READ, NULL) || begin(r, d, &t))
		return;
	m = fopencookie(r, "w", (cookie_io_functions_t){NULL, export_write, NULL, NULL});
	rc = m ? cairn_export(t, m) : CAIRN_ENOMEM;
	if (m && fclose(m) && !rc)
		rc = CAIRN_EIO;
	if (rc) {
		cairn_txn_end(t);
		return past_deadline(r) ? reply_timeout(r) : reply_cairn(r, rc);
	}
	reply_read(r, t);
	r->ctype = "application/x-ndjson";
	cairn_txn_end(t);
}

/* ------------------------------------------------------------- queries -- */

/*
 * POST /v1/domains/{d}/query {"kind","where","sort","after","limit","fields","explain"}
 * and ?branch= ?at= as for every read.
 */
/* An optional integer member in lo..hi (0 when absent); -1 with the reply sent when bad. */
static int int_member(req *r, const jv *o, const char *name, long lo, long hi, long *out)
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
static int bool_member(req *r, const jv *o, const char *name, int *out)
{
	const jv *v = jv_get(o, name);

	*out = jv_is(v, JV_TRUE);
	if (v && v->type != JV_NULL && !jv_is_bool(v)) {
		reply_error(r, 400, cairn_errname(CAIRN_ETYPE), "%s is true or false", name);
		return -1;
	}
	return 0;
}

static void h_query(req *r)
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

	if (allow(r, d, NEED_READ, NULL) || !(o = body_object(r)) || only(r, o, names))
		return;
	memset(&q, 0, sizeof(q));
	if (str_member(r, o, "kind", &q.kind) || str_member(r, o, "sort", &q.sort) ||
	    str_member(r, o, "after", &q.after))
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
			fields[i] = f->u.items[i].u.s;
		}
		q.fields = fields;
		q.n_fields = f->len;
	}
	if (bool_member(r, o, "explain", &q.explain)) {
		buf_release(&where);
		return;
	}
	if (begin(r, d, &t)) {
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
		w_record(&r->out, &out[i]);
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
	reply_read(r, t);
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
static void h_query_count(req *r)
{
	static const char *const names[] = {"kind", "where", "group_by", NULL};
	const char *d = r->seg[2], *kind, *by;
	struct groups_out g = {r, 1};
	const jv *o, *w;
	buf where = BUF_INIT;
	uint64_t total = 0;
	cairn_txn *t;
	int rc;

	if (allow(r, d, NEED_READ, NULL) || !(o = body_object(r)) || only(r, o, names) ||
	    str_member(r, o, "kind", &kind) || str_member(r, o, "group_by", &by))
		return;
	if (!kind)
		return reply_error(r, 400, cairn_errname(CAIRN_EINVAL), "\"kind\" is required");
	if ((w = jv_get(o, "where")) && w->type != JV_NULL) {
		if (w->type != JV_OBJECT)
			return reply_error(r, 400, cairn_errname(CAIRN_EQUERY),
					   "where: a filter is an object");
		jv_canon(w, &where);
	}
	if (begin(r, d, &t)) {
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
	reply_read(r, t);
	cairn_txn_end(t);
}

/* ---------------------------------------------------------------- graph -- */

/* Reply with a graph answer, and found for a path. */
static void reply_graph(req *r, cairn_txn *t, const cairn_graph *g, int values, int path)
{
	buf_put_u8(&r->out, '{');
	wire_graph(&r->out, g, values);
	if (path)
		buf_printf(&r->out, ",\"found\":%s", g->found ? "true" : "false");
	buf_printf(&r->out, ",\"entries\":%llu}", (unsigned long long)g->entries);
	reply_read(r, t);
}

/* POST /v1/domains/{d}/neighborhood */
static void h_neighborhood(req *r)
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

	if (allow(r, d, NEED_READ, NULL) || !(b = body_object(r)) || only(r, b, names) ||
	    int_member(r, b, "depth", 1, CAIRN_MAX_DEPTH, &depth) ||
	    int_member(r, b, "fanout", 1, CAIRN_MAX_NODES, &fanout) ||
	    int_member(r, b, "max_nodes", 1, CAIRN_MAX_NODES, &max_nodes) ||
	    bool_member(r, b, "values", &o.values))
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
	if (begin(r, d, &t))
		return;
	if ((rc = cairn_neighborhood(t, &o, &g))) {
		cairn_txn_end(t);
		return reply_cairn(r, rc);
	}
	reply_graph(r, t, &g, o.values, 0);
	cairn_txn_end(t);
}

/* POST /v1/domains/{d}/follow */
static void h_follow(req *r)
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

	if (allow(r, d, NEED_READ, NULL) || !(b = body_object(r)) || only(r, b, names) ||
	    int_member(r, b, "max_nodes", 1, CAIRN_MAX_NODES, &max_nodes) ||
	    bool_member(r, b, "values", &values))
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
	if (begin(r, d, &t))
		return;
	if ((rc = cairn_follow(t, &start, steps, sv->len, (size_t)max_nodes, values, &g))) {
		cairn_txn_end(t);
		return reply_cairn(r, rc);
	}
	reply_graph(r, t, &g, values, 0);
	cairn_txn_end(t);
}

/* POST /v1/domains/{d}/path */
static void h_path(req *r)
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

	if (allow(r, d, NEED_READ, NULL) || !(b = body_object(r)) || only(r, b, names) ||
	    int_member(r, b, "max_depth", 1, CAIRN_MAX_PATH, &max_depth) ||
	    bool_member(r, b, "values", &values))
		return;
	if (wire_ref(&r->mem, jv_get(b, "from"), "from", &from, err, sizeof(err)) ||
	    wire_ref(&r->mem, jv_get(b, "to"), "to", &to, err, sizeof(err)) ||
	    wire_hop(&r->mem, jv_get(b, "hop"), "hop", &hop, err, sizeof(err)))
		return reply_error(r, 400, cairn_errname(CAIRN_EINVAL), "%s", err);
	if (begin(r, d, &t))
		return;
	if ((rc = cairn_shortest_path(t, &from, &to, (unsigned)max_depth, &hop, values, &g))) {
		cairn_txn_end(t);
		return reply_cairn(r, rc);
	}
	reply_graph(r, t, &g, values, 1);
	cairn_txn_end(t);
}

/* POST /v1/domains/{d}/resolve */
static void h_resolve(req *r)
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

	if (allow(r, d, NEED_READ, NULL) || !(b = body_object(r)) || only(r, b, names) ||
	    bool_member(r, b, "values", &values) || int_member(r, b, "limit", 1, 100, &limit))
		return;
	if (wire_resolve_options(&r->mem, b, &o, err, sizeof(err)))
		return reply_error(r, 400, cairn_errname(CAIRN_EINVAL), "%s", err);
	o.limit = limit ? (size_t)limit : 10;
	if (!(m = arena_alloc(&r->mem, o.limit * sizeof(*m))))
		return reply_cairn(r, CAIRN_ENOMEM);
	if (begin(r, d, &t))
		return;
	if ((rc = cairn_resolve(t, &o, m, o.limit, &n, &truncated))) {
		cairn_txn_end(t);
		return reply_cairn(r, rc);
	}
	buf_put_u8(&r->out, '{');
	wire_matches(&r->out, m, n, truncated, values);
	buf_put_u8(&r->out, '}');
	reply_read(r, t);
	cairn_txn_end(t);
}

/* POST /v1/domains/{d}/search with "near" or "vector": vector search. */
static void h_vsearch(req *r, const jv *b, long limit, int values)
{
	static const char *const only_v[] = {"near",  "vector", "metric", "kinds", "where",
					     "limit", "values", "probes", "exact",  NULL};
	cairn_vsearch_options o;
	cairn_ref near = {0, 0, 0};
	cairn_search_info info;
	cairn_hit *h;
	char err[256];
	cairn_txn *t;
	size_t n;
	int rc;

	if (only(r, b, only_v))
		return;
	if (wire_vsearch_options(&r->mem, b, &o, &near, err, sizeof(err)))
		return reply_error(r, 400, cairn_errname(CAIRN_EINVAL), "%s", err);
	o.limit = limit ? (size_t)limit : 20;
	if (!(h = arena_alloc(&r->mem, o.limit * sizeof(*h))))
		return reply_cairn(r, CAIRN_ENOMEM);
	if (begin(r, r->seg[2], &t))
		return;
	if ((rc = cairn_vsearch(t, &o, h, o.limit, &n))) {
		cairn_txn_end(t);
		return reply_cairn(r, rc);
	}
	memset(&info, 0, sizeof(info));
	buf_put_u8(&r->out, '{');
	wire_hits(&r->out, h, n, &info, values);
	buf_put_u8(&r->out, '}');
	reply_read(r, t);
	cairn_txn_end(t);
}

/*
 * POST /v1/domains/{d}/search with "hybrid" or "semantic": words and
 * meaning fused (semantic: meaning only), memory-aware ranking, receipts.
 */
static void h_hybrid(req *r, const jv *b, long limit, int values, int semantic)
{
	cairn_hybrid_options o;
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
	if (begin(r, r->seg[2], &t))
		return;
	if ((rc = cairn_hybrid(t, &o, h, o.limit, &n))) {
		cairn_txn_end(t);
		return reply_cairn(r, rc);
	}
	memset(&info, 0, sizeof(info));
	buf_put_u8(&r->out, '{');
	wire_hits_as(&r->out, h, n, &info, values, "receipt");
	buf_printf(&r->out, ",\"model\":");
	if (o.embedder && !o.vector)
		json_quote(&r->out, cairn_embedder_model(o.embedder),
			   strlen(cairn_embedder_model(o.embedder)));
	else
		buf_puts(&r->out, "null");
	buf_put_u8(&r->out, '}');
	reply_read(r, t);
	cairn_txn_end(t);
}

/* POST /v1/domains/{d}/search */
static void h_search(req *r)
{
	static const char *const names[] = {"text",	 "kinds",    "limit",  "values",
					    "all_words", "no_typos", "where",  "explain",
					    "near",	 "vector",   "metric", "probes",
					    "exact",	 "hybrid",   "semantic", "fusion",
					    "rrf_k",	 "weights",  "near_records", "graph_boost",
					    "rank",	 NULL};
	const char *d = r->seg[2];
	cairn_search_options o;
	cairn_search_info info;
	cairn_hit *h;
	char err[256];
	const jv *b;
	cairn_txn *t;
	size_t n;
	long limit;
	int rc, values, hybrid = 0, semantic = 0;

	if (allow(r, d, NEED_READ, NULL) || !(b = body_object(r)) || only(r, b, names) ||
	    bool_member(r, b, "values", &values) || int_member(r, b, "limit", 1, 100, &limit) ||
	    bool_member(r, b, "hybrid", &hybrid) || bool_member(r, b, "semantic", &semantic))
		return;
	if (hybrid && semantic)
		return reply_error(r, 400, cairn_errname(CAIRN_EINVAL),
				   "a search is hybrid or semantic, not both");
	if (hybrid || semantic) {
		static const char *const only_h[] = {
			"text",	  "vector",	  "kinds",	  "where", "limit", "values",
			"hybrid", "semantic",	  "fusion",	  "rrf_k", "weights",
			"rank",	  "near_records", "graph_boost", "probes", NULL};

		if (only(r, b, only_h))
			return;
		return h_hybrid(r, b, limit, values, semantic);
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
		return h_vsearch(r, b, limit, values);
	if (wire_search_options(&r->mem, b, &o, err, sizeof(err)))
		return reply_error(r, 400, cairn_errname(CAIRN_EINVAL), "%s", err);
	o.limit = limit ? (size_t)limit : 20;
	if (!(h = arena_alloc(&r->mem, o.limit * sizeof(*h))))
		return reply_cairn(r, CAIRN_ENOMEM);
	if (begin(r, d, &t))
		return;
	if ((rc = cairn_search(t, &o, h, o.limit, &n, &info))) {
		cairn_txn_end(t);
		return reply_cairn(r, rc);
	}
	buf_put_u8(&r->out, '{');
	wire_hits(&r->out, h, n, &info, values);
	buf_put_u8(&r->out, '}');
	reply_read(r, t);
	cairn_txn_end(t);
}

/* ---------------------------------------------------------------- MCP -- */

static int mcp_branch_ok(void *ctx, const char *branch)
{
	req *r = ctx;

	return r->tok.role >= CAIRN_ROLE_ADMIN || !r->tok.branches[0] ||
	       glob_match(r->tok.branches, branch);
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
	if (allow(r, NULL, NEED_READ, NULL))
		return;
	if (r->tok.domain[0])
		d = r->tok.domain;
	if (!d)
		return reply_error(r, 400, cairn_errname(CAIRN_EINVAL),
				   "a token of every Domain names one with ?domain=");
	if (allow(r, d, NEED_READ, NULL))
		return;
	memset(&m, 0, sizeof(m));
	m.st = r->s->st;
	m.domain = d;
	m.emb = r->s->emb;
	m.actor = r->tok.label[0] ? r->tok.label : "token";
	m.writes = r->tok.role >= CAIRN_ROLE_WRITER;
	m.branch_ok = mcp_branch_ok;
	m.branch_ctx = r;
	if (mcp_handle(&m, (const char *)r->body.p, r->body.len, &r->out)) {
		reply_json(r, 200);
	} else {
		r->status = 202;
		r->ctype = "application/json";
	}
}

/*
 * POST /v1/domains/{d}/reembed: {"expect_revision", "actor", "source",
 * "confidence", "message", "trace_id"}: every vector of the Domain anew by
 * the server's model (admin; docs/vectors.md).
 */
static void h_reembed(req *r)
{
	static const char *const names[] = {"expect_revision", "actor",	 "source", "confidence",
					    "message",	       "trace_id", NULL};
	const char *d = r->seg[2], *model;
	cairn_commit_options co;
	cairn_reembed_result res;
	const jv *o;
	int rc;

	if (allow(r, d, NEED_ADMIN, NULL) || !(o = body_object(r)) || only(r, o, names))
		return;
	if (!r->s->emb)
		return reply_error(r, 400, cairn_errname(CAIRN_EINVAL),
				   "re-embedding needs a model: start the server with --model");
	memset(&co, 0, sizeof(co));
	co.domain = d;
	co.embedder = r->s->emb;
	if (provenance(r, o, &co) || expect_member(r, o, &co))
		return;
	if ((rc = cairn_reembed(r->s->st, &co, &res)))
		return reply_cairn(r, rc);
	model = cairn_embedder_model(r->s->emb);
	buf_printf(&r->out, "{\"revision\":%llu,\"hash\":", (unsigned long long)res.commit.revision);
	wire_hash(&r->out, res.commit.hash);
	buf_printf(&r->out, ",\"vectors\":%llu,\"empty\":%llu,\"model\":",
		   (unsigned long long)res.vectors, (unsigned long long)res.empty);
	wire_str(&r->out, model, strlen(model));
	buf_printf(&r->out, ",\"dim\":%zu}", cairn_embedder_dim(r->s->emb));
	written(r, res.commit.revision);
	reply_json(r, 200);
}

/*
 * POST /v1/domains/{d}/compact: {"horizon": REV} or {"retain_ms": N}
 * (default 7 days), "dry_run": drop what only time travel before the horizon reads
 * (admin; cairn_compact).
 */
static void h_compact(req *r)
{
	static const char *const names[] = {"horizon", "retain_ms", "dry_run", NULL};
	const char *d = r->seg[2];
	cairn_compact_options co = {.retain_ms = 7 * 86400 * 1000LL};
	cairn_compact_result res;
	const jv *o, *h, *ret, *dry;
	int rc;

	if (allow(r, d, NEED_ADMIN, NULL) || !(o = body_object(r)) || only(r, o, names))
		return;
	h = jv_get(o, "horizon");
	ret = jv_get(o, "retain_ms");
	if ((h && (h->type != JV_INT || h->u.i < 1)) || (ret && (ret->type != JV_INT || ret->u.i < 0)))
		return reply_error(r, 400, cairn_errname(CAIRN_ETYPE),
				   "\"horizon\" is a revision number, \"retain_ms\" milliseconds");
	if (h && ret)
		return reply_error(r, 400, cairn_errname(CAIRN_EINVAL),
				   "\"horizon\" or \"retain_ms\", not both");
	if ((dry = jv_get(o, "dry_run")) && dry->type != JV_TRUE && dry->type != JV_FALSE)
		return reply_error(r, 400, cairn_errname(CAIRN_ETYPE), "\"dry_run\" is true or false");
	co.dry_run = dry && dry->type == JV_TRUE;
	if (h)
		co.horizon = (uint64_t)h->u.i;
	else if (ret)
		co.retain_ms = ret->u.i;
	if ((rc = cairn_compact(r->s->st, d, &co, &res)))
		return reply_cairn(r, rc);
	wire_compact(&r->out, &res);
	reply_json(r, 200);
}

/* ------------------------------------------------------------- routing -- */

#define R(m, fn, ...) {m, {__VA_ARGS__}, sizeof((const char *[]){__VA_ARGS__}) / sizeof(char *), fn, #fn}

static const route_def routes[] = {
	R("GET", h_health, "v1", "health"),
	R("GET", h_openapi, "v1", "openapi.json"),
	R("GET", h_metrics, "v1", "metrics"),
	R("GET", h_domains, "v1", "domains"),
	R("POST", h_domain_create, "v1", "domains"),
	R("DELETE", h_domain_drop, "v1", "domains", ":d"),
	R("GET", h_schema_get, "v1", "domains", ":d", "schema"),
	R("PUT", h_schema_put, "v1", "domains", ":d", "schema"),
	R("POST", h_commit, "v1", "domains", ":d", "commits"),
	R("GET", h_page, "v1", "domains", ":d", "records", ":kind"),
	R("GET", h_record, "v1", "domains", ":d", "records", ":kind", ":key"),
	R("GET", h_links, "v1", "domains", ":d", "records", ":kind", ":key", "links"),
	R("GET", h_history, "v1", "domains", ":d", "records", ":kind", ":key", "history"),
	R("GET", h_lineage, "v1", "domains", ":d", "records", ":kind", ":key", "lineage"),
	R("GET", h_link_history, "v1", "domains", ":d", "links", ":rel", ":from", ":to", "history"),
	R("GET", h_link_history, "v1", "domains", ":d", "links", ":rel", ":from", ":to", "lineage"),
	R("GET", h_counts, "v1", "domains", ":d", "counts"),
	R("GET", h_revisions, "v1", "domains", ":d", "revisions"),
	R("GET", h_revision, "v1", "domains", ":d", "revisions", ":rev"),
	R("GET", h_revision_changes, "v1", "domains", ":d", "revisions", ":rev", "changes"),
	R("GET", h_branches, "v1", "domains", ":d", "branches"),
	R("POST", h_branch_create, "v1", "domains", ":d", "branches"),
	R("PATCH", h_branch_rename, "v1", "domains", ":d", "branches", ":name"),
	R("DELETE", h_branch_delete, "v1", "domains", ":d", "branches", ":name"),
	R("GET", h_diff, "v1", "domains", ":d", "diff"),
	R("POST", h_merge, "v1", "domains", ":d", "merges"),
	R("GET", h_proposals, "v1", "domains", ":d", "proposals"),
	R("POST", h_propose, "v1", "domains", ":d", "proposals"),
	R("GET", h_proposal, "v1", "domains", ":d", "proposals", ":id"),
	R("GET", h_proposal_diff, "v1", "domains", ":d", "proposals", ":id", "diff"),
	R("POST", h_proposal_note, "v1", "domains", ":d", "proposals", ":id", "notes"),
	R("POST", h_proposal_accept, "v1", "domains", ":d", "proposals", ":id", "accept"),
	R("POST", h_proposal_close, "v1", "domains", ":d", "proposals", ":id", "reject"),
	R("POST", h_proposal_close, "v1", "domains", ":d", "proposals", ":id", "withdraw"),
	R("GET", h_export, "v1", "domains", ":d", "export"),
	R("POST", h_query, "v1", "domains", ":d", "query"),
	R("POST", h_query_count, "v1", "domains", ":d", "query", "count"),
	R("POST", h_neighborhood, "v1", "domains", ":d", "neighborhood"),
	R("POST", h_follow, "v1", "domains", ":d", "follow"),
	R("POST", h_path, "v1", "domains", ":d", "path"),
	R("POST", h_resolve, "v1", "domains", ":d", "resolve"),
	R("POST", h_search, "v1", "domains", ":d", "search"),
	R("POST", h_reembed, "v1", "domains", ":d", "reembed"),
	R("POST", h_compact, "v1", "domains", ":d", "compact"),
	R("POST", h_mcp, "v1", "mcp"),
	R("POST", h_import_late, "v1", "domains", ":d", "import"),
};

static int matches(const route_def *rd, req *r)
{
	if (rd->n != r->nseg)
		return 0;
	for (int i = 0; i < rd->n; i++)
		if (rd->pattern[i][0] != ':' && strcmp(rd->pattern[i], r->seg[i]) != 0)
			return 0;
	return 1;
}

static int allow_write(req *r, const char *domain, const char *branch)
{
	return allow(r, domain, NEED_WRITE, NULL) || allow(r, domain, NEED_WRITE, branch);
}

int route_stream(req *r)
{
	if (strcmp(r->method, "POST") != 0 || r->nseg != 4 || strcmp(r->seg[0], "v1") != 0 ||
	    strcmp(r->seg[1], "domains") != 0 || strcmp(r->seg[3], "import") != 0)
		return 0;
	r->route = "h_import";
	if (import_start(r, allow_write))
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
		routes[i].fn(r);
		return;
	}
	if (path_found)
		reply_error(r, 405, E_METHOD, "%s is not a method of this path", r->method);
	else
		reply_error(r, 404, E_ROUTE, "no such path");
}
