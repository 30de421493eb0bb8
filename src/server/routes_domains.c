/*
 * The routes of Domains: listed, created and dropped; their schema, read
 * and changed; re-embedding their vectors, and compaction.
 */
#include <string.h>

#include "server/internal.h"

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

void h_domains(req *r)
{
	struct dom_list dl = {r, 1};
	int rc;

	if (api_allow(r, NULL, NEED_READ, NULL))
		return;
	PUTS(&r->out, "{\"items\":[");
	if ((rc = cairn_domain_list(r->s->st, list_domain, &dl)))
		return reply_cairn(r, rc);
	PUTS(&r->out, "]}");
	reply_json(r, 200);
}

/* POST /v1/backup {"dir"}: an online backup of the whole store (cairn_backup), on the server's disk. */
void h_backup(req *r)
{
	static const char *const names[] = {"dir", NULL};
	cairn_backup_result res;
	const jv *o = NULL;
	const char *dir;
	int rc;

	if (api_allow(r, NULL, NEED_ADMIN_ALL, NULL) || !(o = api_body_object(r)) ||
	    api_only(r, o, names) || api_str_member(r, o, "dir", &dir))
		return;
	if (!dir || *dir != '/')
		return reply_error(r, 400, cairn_errname(CAIRN_EINVAL),
				   "\"dir\" is required: an absolute path on the server's machine, "
				   "a new or empty directory");
	if ((rc = cairn_backup(r->s->st, dir, &res)))
		return reply_cairn(r, rc);
	PUTS(&r->out, "{\"backup\":");
	wire_cstr(&r->out, dir);
	buf_printf(&r->out, ",\"bytes\":%llu,\"seconds\":%.3f}", (unsigned long long)res.bytes,
		   res.seconds);
	reply_json(r, 201);
}

void h_domain_create(req *r)
{
	static const char *const names[] = {"name", "memory", NULL};
	const jv *o = NULL;
	const char *name;
	int rc, memory = 0;

	if (api_allow(r, NULL, NEED_ADMIN_ALL, NULL) || !(o = api_body_object(r)) ||
	    api_only(r, o, names) || api_str_member(r, o, "name", &name) ||
	    api_bool_member(r, o, "memory", &memory))
		return;
	if (!name)
		return reply_error(r, 400, cairn_errname(CAIRN_EINVAL), "\"name\" is required");
	if (memory) {
		/* The Domain and the memory schema in one commit (docs/memory.md). */
		cairn_commit_options co = {0};
		cairn_read_options ro = {0};
		const char *schema = cairn_memory_schema();
		cairn_txn *t;

		ro.domain = name;
		if (cairn_txn_begin(r->s->st, &ro, &t) == 0) {
			cairn_txn_end(t);
			return reply_error(r, 409, cairn_errname(CAIRN_EEXIST),
					   "Domain %s exists: give it the memory schema with PUT "
					   "/v1/domains/%s/schema",
					   name, name);
		}
		co.domain = name;
		co.create_domain = 1;
		if (api_provenance(r, o, &co))
			return;
		rc = cairn_schema_apply(r->s->st, &co, schema, strlen(schema), NULL);
	} else {
		rc = cairn_domain_create(r->s->st, name);
	}
	if (rc)
		return reply_cairn(r, rc);
	PUTS(&r->out, "{\"name\":");
	wire_cstr(&r->out, name);
	buf_puts(&r->out, memory ? ",\"created\":true,\"memory_schema\":true}" : ",\"created\":true}");
	reply_json(r, 201);
}

void h_domain_drop(req *r)
{
	int rc;

	if (api_allow(r, NULL, NEED_ADMIN_ALL, NULL))
		return;
	if ((rc = cairn_domain_drop(r->s->st, r->seg[2])))
		return reply_cairn(r, rc);
	PUTS(&r->out, "{\"name\":");
	wire_cstr(&r->out, r->seg[2]);
	PUTS(&r->out, ",\"dropped\":true}");
	reply_json(r, 200);
}

/* ------------------------------------------------------------- schema -- */

void h_schema_get(req *r)
{
	const char *d = r->seg[2], *js;
	cairn_txn *t;
	size_t n;
	int rc;

	if (api_allow(r, d, NEED_READ, NULL) || api_begin(r, d, &t))
		return;
	if ((rc = cairn_schema_get(t, &js, &n))) {
		cairn_txn_end(t);
		return reply_cairn(r, rc);
	}
	buf_put(&r->out, js, n);
	api_reply_read(r, t);
	cairn_txn_end(t);
}

void h_schema_put(req *r)
{
	static const char *const names[] = {"schema", "actor", "source", "confidence", "message",
					    "trace_id", NULL};
	const char *d = r->seg[2];
	cairn_commit_options co;
	cairn_commit_result res;
	const jv *o, *sch;
	buf sb = BUF_INIT;
	int rc;

	if (api_allow(r, d, NEED_ADMIN, NULL) || !(o = api_body_object(r)) || api_only(r, o, names))
		return;
	memset(&co, 0, sizeof(co));
	co.domain = d;
	if (api_provenance(r, o, &co))
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
	api_written(r, res.revision);
	reply_json(r, 200);
}

/* -------------------------------------------- re-embedding, compaction -- */

/*
 * POST /v1/domains/{d}/reembed: {"expect_revision", "actor", "source",
 * "confidence", "message", "trace_id"}: every vector of the Domain anew by
 * the server's model (admin; docs/vectors.md).
 */
void h_reembed(req *r)
{
	static const char *const names[] = {"expect_revision", "actor",	 "source", "confidence",
					    "message",	       "trace_id", NULL};
	const char *d = r->seg[2], *model;
	cairn_commit_options co;
	cairn_reembed_result res;
	const jv *o;
	int rc;

	if (api_allow(r, d, NEED_ADMIN, NULL) || !(o = api_body_object(r)) || api_only(r, o, names))
		return;
	if (!r->s->emb)
		return reply_error(r, 400, cairn_errname(CAIRN_EINVAL),
				   "re-embedding needs a model: start the server with --model");
	memset(&co, 0, sizeof(co));
	co.domain = d;
	co.embedder = r->s->emb;
	if (api_provenance(r, o, &co) || api_expect_member(r, o, &co))
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
	api_written(r, res.commit.revision);
	reply_json(r, 200);
}

/*
 * POST /v1/domains/{d}/compact: {"horizon": REV} or {"retain_ms": N}
 * (default 7 days), "dry_run": drop what only time travel before the horizon reads
 * (admin; cairn_compact).
 */
void h_compact(req *r)
{
	static const char *const names[] = {"horizon", "retain_ms", "dry_run", NULL};
	const char *d = r->seg[2];
	cairn_compact_options co = {.retain_ms = 7 * 86400 * 1000LL};
	cairn_compact_result res;
	const jv *o, *h, *ret, *dry;
	int rc;

	if (api_allow(r, d, NEED_ADMIN, NULL) || !(o = api_body_object(r)) || api_only(r, o, names))
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

/*
 * POST /v1/domains/{d}/erase: {"target": {"kind": K, "key": KEY} | {"source": S} |
 * {"actor": A}, "message": WHY, "actor", "trace_id", "dry_run"} (admin;
 * cairn_erase). The provenance members are the eraser's, as in every write.
 */
void h_erase(req *r)
{
	static const char *const names[] = {"target", "message", "actor", "trace_id", "dry_run",
					    NULL};
	static const char *const tnames[] = {"kind", "key", "source", "actor", NULL};
	const char *d = r->seg[2];
	cairn_erase_options eo;
	cairn_erase_result res;
	const jv *o, *t;
	int rc, dry = 0;

	memset(&eo, 0, sizeof(eo));
	if (api_allow(r, d, NEED_ADMIN, NULL) || !(o = api_body_object(r)) || api_only(r, o, names))
		return;
	t = jv_get(o, "target");
	if (!t || t->type != JV_OBJECT)
		return reply_error(r, 400, cairn_errname(CAIRN_EINVAL),
				   "\"target\" is an object: {\"kind\", \"key\"} (a Record), "
				   "{\"source\"} or {\"actor\"}");
	if (api_only(r, t, tnames) || api_str_member(r, t, "kind", &eo.kind) ||
	    api_str_member(r, t, "key", &eo.key) || api_str_member(r, t, "source", &eo.source) ||
	    api_str_member(r, t, "actor", &eo.actor) || api_bool_member(r, o, "dry_run", &dry))
		return;
	if (!eo.kind != !eo.key)
		return reply_error(r, 400, cairn_errname(CAIRN_EINVAL),
				   "a Record target has both \"kind\" and \"key\"");
	eo.key_len = eo.key ? strlen(eo.key) : 0;
	eo.dry_run = dry;
	eo.commit.domain = d;
	if (api_provenance(r, o, &eo.commit))
		return;
	if ((rc = cairn_erase(r->s->st, &eo, &res)))
		return reply_cairn(r, rc);
	wire_erase(&r->out, &res);
	reply_json(r, 200);
}
