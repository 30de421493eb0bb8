/*
 * Memory routes (docs/memory.md): POST /v1/domains/{d}/remember and
 * POST /v1/domains/{d}/retract, the library's cairn_remember and
 * cairn_retract with the request's provenance.
 */
#include <string.h>

#include "server/internal.h"
#include "base/alloc.h"

/* The commit options of a memory write: the branch (allowed to the token), provenance, expect. */
static int memory_opts(req *r, const jv *o, cairn_commit_options *co)
{
	const char *branch;

	memset(co, 0, sizeof(*co));
	co->domain = r->seg[2];
	if (api_str_member(r, o, "branch", &branch))
		return -1;
	if (!branch)
		branch = arg(r, "branch");
	if (api_allow(r, co->domain, NEED_WRITE, branch ? branch : "main"))
		return -1;
	co->branch = branch;
	return api_provenance(r, o, co) || api_expect_member(r, o, co) ? -1 : 0;
}

/*
 * POST /v1/domains/{d}/remember: {"memories": [memory, ...]} (or one memory's
 * members at the top level), with "branch", provenance and "expect_revision".
 */
void h_remember(req *r)
{
	static const char *const names[] = {
		"memories",   "branch",	 "expect_revision", "actor", "source",
		"confidence", "message", "trace_id",	    "text",  "kind",
		"key",	      "values",	 "append",	    "about", "supersedes",
		"replace",    "links",	 NULL};
	static const char *const one_names[] = {"text",	 "kind",       "key",	  "values", "append",
						"about", "supersedes", "replace", "links",  NULL};
	cairn_commit_options co;
	cairn_commit_result res;
	cairn_memory_in *in = NULL;
	cairn_memory_out *out = NULL;
	const jv *o, *ms;
	jv *one = NULL;
	size_t n;
	char err[256];
	int rc;

	if (api_allow(r, r->seg[2], NEED_WRITE, NULL) || !(o = api_body_object(r)) ||
	    api_only(r, o, names) || memory_opts(r, o, &co))
		return;
	ms = jv_get(o, "memories");
	if (ms) {
		for (size_t i = 0; one_names[i]; i++)
			if (jv_get(o, one_names[i]))
				return reply_error(
					r, 400, cairn_errname(CAIRN_EINVAL),
					"\"memories\" or one memory's members (\"%s\"), not "
					"both",
					one_names[i]);
		if (ms->type != JV_ARRAY || !ms->len || ms->len > CAIRN_MEMORY_MAX_BATCH)
			return reply_error(r, 400, cairn_errname(CAIRN_EINVAL),
					   "\"memories\" is an array of 1 to %d memories",
					   CAIRN_MEMORY_MAX_BATCH);
		n = ms->len;
	} else {
		/* One memory: its members, without the request's own. */
		if (!(one = jv_object(&r->mem, o->len)))
			return reply_cairn(r, CAIRN_ENOMEM);
		for (uint32_t i = 0; i < o->len; i++)
			for (size_t k = 0; one_names[k]; k++)
				if (strcmp(o->u.items[i].key, one_names[k]) == 0)
					one->u.items[one->len++] = o->u.items[i];
		n = 1;
	}
	in = arena_alloc(&r->mem, n * sizeof(*in));
	out = cr_calloc(n, sizeof(*out));
	if (!in || !out) {
		cr_free(out);
		return reply_cairn(r, CAIRN_ENOMEM);
	}
	for (size_t i = 0; i < n; i++)
		if (wire_memory_in(&r->mem, ms ? &ms->u.items[i] : one, &in[i], err, sizeof(err))) {
			cr_free(out);
			if (ms)
				return reply_error(r, 400, cairn_errname(CAIRN_EINVAL),
						   "memories[%zu]: %s", i, err);
			return reply_error(r, 400, cairn_errname(CAIRN_EINVAL), "%s", err);
		}
	if ((rc = cairn_remember(r->s->st, &co, in, n, out, &res))) {
		cr_free(out);
		return reply_cairn(r, rc);
	}
	buf_put_u8(&r->out, '{');
	wire_memories(&r->out, out, n, &res);
	buf_put_u8(&r->out, '}');
	cr_free(out);
	if (res.revision)
		api_written(r, res.revision);
	reply_json(r, 200);
}

/* POST /v1/domains/{d}/retract: {"record": "Kind:key"}, with "branch" and provenance. */
void h_retract(req *r)
{
	static const char *const names[] = {"record",  "branch",   "expect_revision",
					    "actor",   "source",   "confidence",
					    "message", "trace_id", NULL};
	cairn_commit_options co;
	cairn_commit_result res;
	const char *rec, *c;
	char kind[CAIRN_MAX_NAME + 1];
	const jv *o;
	int rc;

	if (api_allow(r, r->seg[2], NEED_WRITE, NULL) || !(o = api_body_object(r)) ||
	    api_only(r, o, names) || api_str_member(r, o, "record", &rec) || memory_opts(r, o, &co))
		return;
	if (!rec || !(c = strchr(rec, ':')) || c == rec || (size_t)(c - rec) > CAIRN_MAX_NAME ||
	    !c[1])
		return reply_error(r, 400, cairn_errname(CAIRN_EINVAL),
				   "\"record\" names the memory as Kind:key");
	memcpy(kind, rec, (size_t)(c - rec));
	kind[c - rec] = '\0';
	if ((rc = cairn_retract(r->s->st, &co, kind, c + 1, strlen(c + 1), &res)))
		return reply_cairn(r, rc);
	buf_printf(&r->out, "{\"revision\":%llu,\"retracted\":", (unsigned long long)res.revision);
	wire_cstr(&r->out, rec);
	buf_put_u8(&r->out, '}');
	api_written(r, res.revision);
	reply_json(r, 200);
}

/*
 * POST /v1/domains/{d}/digest: {"subjects", "include_inactive", "valid_at",
 * "half_life_days", "after" (the next of an answer before), "budget"
 * (bytes, default 2048)} (reader; ?branch= and ?at= as every read).
 */
void h_digest(req *r)
{
	static const char *const names[] = {
		"subjects", "include_inactive", "valid_at", "half_life_days",
		"after",    "budget",		NULL};
	const char *d = r->seg[2], *after;
	cairn_digest_options o;
	char err[256];
	uint64_t offset = 0;
	long budget;
	const jv *b;
	cairn_txn *t;
	int rc;

	if (api_allow(r, d, NEED_READ, NULL) || !(b = api_body_object(r)) ||
	    api_only(r, b, names) || api_str_member(r, b, "after", &after) ||
	    api_int_member(r, b, "budget", 256, 1 << 20, &budget))
		return;
	if (after && api_parse_u64(after, &offset))
		return reply_error(r, 400, cairn_errname(CAIRN_EINVAL),
				   "\"after\" is the \"next\" of an answer before");
	if (wire_digest_options(&r->mem, b, &o, err, sizeof(err)))
		return reply_error(r, 400, cairn_errname(CAIRN_EINVAL), "%s", err);
	if (api_begin(r, d, &t))
		return;
	if ((rc = wire_digest(&r->out, t, &o, (size_t)offset, budget ? (size_t)budget : 2048))) {
		cairn_txn_end(t);
		return reply_cairn(r, rc);
	}
	api_reply_read(r, t);
	cairn_txn_end(t);
}

/*
 * POST /v1/domains/{d}/recall: {"text", "kinds", "limit", "include_inactive",
 * "valid_at", "half_life_days", "values", "explain"} (reader): cairn_recall,
 * by meaning too when the server has a model.
 */
void h_recall(req *r)
{
	static const char *const names[] = {
		"text",	  "kinds",   "limit", "include_inactive", "valid_at", "half_life_days",
		"values", "explain", NULL};
	const char *d = r->seg[2];
	cairn_recall_options o;
	cairn_hit h[50];
	double trust[50];
	char err[256];
	int values, explain, rc;
	const jv *b;
	cairn_txn *t;
	size_t n;

	if (api_allow(r, d, NEED_READ, NULL) || !(b = api_body_object(r)) ||
	    api_only(r, b, names) || api_bool_member(r, b, "values", &values) ||
	    api_bool_member(r, b, "explain", &explain))
		return;
	if (wire_recall_options(&r->mem, b, &o, err, sizeof(err)))
		return reply_error(r, 400, cairn_errname(CAIRN_EINVAL), "%s", err);
	o.embedder = r->s->emb;
	if (api_begin(r, d, &t))
		return;
	if ((rc = cairn_recall(t, &o, h, trust, 50, &n))) {
		cairn_txn_end(t);
		return reply_cairn(r, rc);
	}
	buf_put_u8(&r->out, '{');
	wire_recall(&r->out, h, trust, n, values, explain);
	buf_put_u8(&r->out, '}');
	api_reply_read(r, t);
	cairn_txn_end(t);
}
