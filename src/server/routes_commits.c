/*
 * The routes of writes: commits, branches, diffs and merges, and proposals
 * with their review.
 */
#include <string.h>

#include "base/alloc.h"
#include "server/internal.h"

/* ------------------------------------------------------------ commits -- */

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
	buf_printf(&r->out, ",\"changes\":%llu,\"unchanged\":%llu}",
		   (unsigned long long)j->cr.res.changes, (unsigned long long)j->cr.res.unchanged);
	api_written(r, j->cr.res.revision);
	/* 200 when nothing was written: every change was what the store holds. */
	reply_json(r, j->cr.res.changes || !j->cr.res.unchanged ? 201 : 200);
}

/*
 * POST /v1/domains/{d}/commits: {"changes":[import lines...], "branch", "expect_revision",
 * "actor", "source", "confidence", "message", "trace_id", "embed", "vector_model"}.
 */
void h_commit(req *r)
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

	if (api_allow(r, d, NEED_WRITE, NULL) || !(o = api_body_object(r)) ||
	    api_only(r, o, names) || api_str_member(r, o, "branch", &branch) ||
	    api_bool_member(r, o, "embed", &embed) || api_str_member(r, o, "vector_model", &vmodel))
		return;
	if (embed && !r->s->emb)
		return reply_error(r, 400, cairn_errname(CAIRN_EINVAL),
				   "embed needs a model: start the server with --model");
	if (embed && vmodel)
		return reply_error(r, 400, cairn_errname(CAIRN_EINVAL),
				   "embed names its model: no vector_model with it");
	if (!branch)
		branch = arg(r, "branch");
	if (api_allow(r, d, NEED_WRITE, branch ? branch : "main"))
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
	if (api_provenance(r, o, &j->co))
		goto fail;
	if (api_expect_member(r, o, &j->co))
		goto fail;
	for (uint32_t i = 0; i < ch->len && !rc; i++) {
		buf_reset(&line);
		if (ch->u.items[i].type != JV_OBJECT) {
			reply_error(r, 400, cairn_errname(CAIRN_EINVAL), "change %u is not an object", i);
			goto fail;
		}
		jv_canon(&ch->u.items[i], &line);
		rc = line.oom ? CAIRN_ENOMEM
			      : cairn_changeset_add_json(j->cs, (const char *)line.p, line.len);
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

void h_branches(req *r)
{
	struct items_out io = {r, 1, 0, 0};
	int rc;

	if (api_allow(r, r->seg[2], NEED_READ, NULL))
		return;
	PUTS(&r->out, "{\"items\":[");
	if ((rc = cairn_branch_list(r->s->st, r->seg[2], w_branch, &io)))
		return reply_cairn(r, rc);
	PUTS(&r->out, "]}");
	reply_json(r, 200);
}

void h_branch_create(req *r)
{
	static const char *const names[] = {"name", "from", NULL};
	const char *d = r->seg[2], *name, *from;
	const jv *o = NULL;
	int rc;

	if (api_allow(r, d, NEED_WRITE, NULL) || !(o = api_body_object(r)) ||
	    api_only(r, o, names) || api_str_member(r, o, "name", &name) ||
	    api_str_member(r, o, "from", &from))
		return;
	if (!name)
		return reply_error(r, 400, cairn_errname(CAIRN_EINVAL), "\"name\" is required");
	if (api_allow(r, d, NEED_WRITE, name))
		return;
	if ((rc = cairn_branch_create(r->s->st, d, name, from)))
		return reply_cairn(r, rc);
	PUTS(&r->out, "{\"name\":");
	wire_cstr(&r->out, name);
	PUTS(&r->out, ",\"created\":true}");
	reply_json(r, 201);
}

void h_branch_rename(req *r)
{
	static const char *const names[] = {"name", NULL};
	const char *d = r->seg[2], *name;
	const jv *o = NULL;
	int rc;

	if (api_allow(r, d, NEED_WRITE, NULL) || !(o = api_body_object(r)) ||
	    api_only(r, o, names) || api_str_member(r, o, "name", &name))
		return;
	if (!name)
		return reply_error(r, 400, cairn_errname(CAIRN_EINVAL),
				   "\"name\", the new name, is required");
	if (api_allow(r, d, NEED_WRITE, r->seg[4]) || api_allow(r, d, NEED_WRITE, name))
		return;
	if ((rc = cairn_branch_rename(r->s->st, d, r->seg[4], name)))
		return reply_cairn(r, rc);
	PUTS(&r->out, "{\"name\":");
	wire_cstr(&r->out, name);
	PUTS(&r->out, ",\"renamed\":true}");
	reply_json(r, 200);
}

void h_branch_delete(req *r)
{
	const char *d = r->seg[2];
	int rc;

	if (api_allow(r, d, NEED_WRITE, r->seg[4]))
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
void h_diff(req *r)
{
	const char *d = r->seg[2], *theirs = arg(r, "theirs"), *from = arg(r, "from"),
		   *to = arg(r, "to");
	struct items_out io = {r, 1, 0, 1};
	int rc;

	if (api_allow(r, d, NEED_READ, NULL))
		return;
	PUTS(&r->out, "{\"items\":[");
	if (theirs) {
		io.two_sided = 1;
		rc = cairn_branch_diff(r->s->st, d, arg(r, "ours"), theirs, api_w_item, &io);
	} else if (from && to) {
		uint64_t f, t2;
		cairn_txn *t;

		if (api_parse_u64(from, &f) || api_parse_u64(to, &t2))
			return reply_error(r, 400, cairn_errname(CAIRN_EINVAL),
					   "from and to are revision numbers");
		if (api_begin(r, d, &t))
			return;
		rc = cairn_diff_revisions(t, f, t2, api_w_item, &io);
		cairn_txn_end(t);
	} else {
		return reply_error(r, 400, cairn_errname(CAIRN_EINVAL),
				   "give ours and theirs (two branches), or from and to (revisions)");
	}
	if (rc)
		return api_past_deadline(r) ? api_reply_timeout(r) : reply_cairn(r, rc);
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
	if (m->schema_revision)
		buf_printf(b, ",\"schema_revision\":%llu", (unsigned long long)m->schema_revision);
}

/* Merge options from a body: resolve, resolutions (an array of objects), provenance. */
static int merge_body(req *r, const jv *o, cairn_merge_options *mo, buf *res)
{
	const char *resolve;
	const jv *rs = jv_get(o, "resolutions"), *dr = jv_get(o, "dry_run");

	if (api_str_member(r, o, "resolve", &resolve) || api_provenance(r, o, &mo->commit))
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
void h_merge(req *r)
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

	if (api_allow(r, d, NEED_WRITE, NULL) || !(o = api_body_object(r)) ||
	    api_only(r, o, names) || api_str_member(r, o, "from", &from) ||
	    api_str_member(r, o, "into", &into))
		return;
	if (!from)
		return reply_error(r, 400, cairn_errname(CAIRN_EINVAL),
				   "\"from\", the branch to merge, is required (\"into\" is the "
				   "target; \"source\" here is the merge's provenance, where "
				   "proposals name the branch \"source\")");
	if (api_allow(r, d, NEED_WRITE, into ? into : "main"))
		return;
	memset(&mo, 0, sizeof(mo));
	mo.commit.domain = d;
	mo.commit.branch = into;
	mo.source = from;
	if (api_expect_member(r, o, &mo.commit) || merge_body(r, o, &mo, &res)) {
		buf_release(&res);
		return;
	}
	PUTS(&r->out, "{\"items\":[");
	memset(&mr, 0, sizeof(mr));
	io.timed = mo.dry_run; /* a dry run is a read; a merge runs to its end */
	rc = cairn_merge(r->s->st, &mo, api_w_item, &io, &mr);
	buf_release(&res);
	if (rc && rc != CAIRN_EMERGE)
		return io.timed && api_past_deadline(r) ? api_reply_timeout(r) : reply_cairn(r, rc);
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
	api_written(r, mr.revision);
	reply_json(r, mo.dry_run || !mr.revision ? 200 : 201);
}

/* ---------------------------------------------------------- proposals -- */

/* A proposal, with the schema document it offers (read in t) when it offers one. */
static void w_proposal(buf *b, const cairn_proposal *p, cairn_txn *t)
{
	const char *schema;
	size_t schema_len;

	buf_printf(b, "{\"id\":%llu,\"status\":\"%s\",\"source\":", (unsigned long long)p->id,
		   wire_proposal_status(p->status));
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
	if (cairn_proposal_schema(t, p->id, &schema, &schema_len) == 0 && schema_len) {
		PUTS(b, ",\"schema\":");
		buf_put(b, schema, schema_len);
	}
	buf_put_u8(b, '}');
}

struct proposals_out {
	struct items_out io;
	cairn_txn *t;
};

static int w_proposal_cb(void *ctx, const cairn_proposal *p)
{
	struct proposals_out *po = ctx;

	if (!po->io.first)
		buf_put_u8(&po->io.r->out, ',');
	po->io.first = 0;
	w_proposal(&po->io.r->out, p, po->t);
	return 0;
}

void h_proposals(req *r)
{
	const char *d = r->seg[2], *status = arg(r, "status");
	struct proposals_out po = {{r, 1, 0, 0}, NULL};
	cairn_txn *t;
	int st = 0, rc;

	if (api_allow(r, d, NEED_READ, NULL))
		return;
	if (status)
		st = wire_proposal_status_parse(status);
	if (status && !st)
		return reply_error(r, 400, cairn_errname(CAIRN_EINVAL),
				   "status is open, merged, rejected or withdrawn");
	if (api_begin(r, d, &t))
		return;
	PUTS(&r->out, "{\"items\":[");
	po.t = t;
	rc = cairn_proposal_list(t, st, w_proposal_cb, &po);
	if (rc) {
		cairn_txn_end(t);
		return reply_cairn(r, rc);
	}
	PUTS(&r->out, "]}");
	api_reply_read(r, t);
	cairn_txn_end(t);
}

static int proposal_id(req *r, uint64_t *id)
{
	if (api_parse_u64(r->seg[4], id)) {
		reply_error(r, 404, cairn_errname(CAIRN_ENOTFOUND), "not a proposal number");
		return -1;
	}
	return 0;
}

void h_proposal(req *r)
{
	const char *d = r->seg[2];
	cairn_proposal p;
	cairn_txn *t;
	uint64_t id;
	int rc;

	if (api_allow(r, d, NEED_READ, NULL) || proposal_id(r, &id) || api_begin(r, d, &t))
		return;
	if ((rc = cairn_proposal_get(t, id, &p))) {
		cairn_txn_end(t);
		return reply_cairn(r, rc);
	}
	w_proposal(&r->out, &p, t);
	api_reply_read(r, t);
	cairn_txn_end(t);
}

/* The target of proposal id, to check the token against (in r's arena). */
/* A proposal's source and target branches (in r's memory); replied, -1, when it cannot be read. */
static int proposal_branches(req *r, uint64_t id, const char **source, const char **target)
{
	cairn_read_options ro = {0};
	cairn_proposal p;
	cairn_txn *t;
	int rc;

	ro.domain = r->seg[2];
	if ((rc = cairn_txn_begin(r->s->st, &ro, &t))) {
		reply_cairn(r, rc);
		return -1;
	}
	if ((rc = cairn_proposal_get(t, id, &p)) == 0 &&
	    (!(*source = arena_strndup(&r->mem, p.source, strlen(p.source))) ||
	     !(*target = arena_strndup(&r->mem, p.target, strlen(p.target)))))
		rc = CAIRN_ENOMEM;
	cairn_txn_end(t);
	if (rc) {
		reply_cairn(r, rc);
		return -1;
	}
	return 0;
}

/*
 * A proposal, a note or a closing is signed by the token that makes it: an
 * "author" in the request must be that name (it used to be taken as said,
 * so one agent could sign for another). Replied, -1, when it is not.
 */
static int signed_by_token(req *r, const char *author)
{
	if (!author || strcmp(author, api_identity(r)) == 0)
		return 0;
	reply_error(r, 403, cairn_errname(CAIRN_EFORBIDDEN),
		    "\"author\" is signed by the token: this one signs as \"%s\" (its label); "
		    "leave \"author\" out",
		    api_identity(r));
	return -1;
}

void h_propose(req *r)
{
	static const char *const names[] = {"source", "target", "title", "description", "author",
					    "schema", NULL};
	const char *d = r->seg[2], *source, *target, *title, *desc, *author;
	cairn_proposal_options po = {0};
	const jv *o = NULL, *schema;
	buf doc = BUF_INIT;
	uint64_t id;
	int rc;

	if (api_allow(r, d, NEED_WRITE, NULL) || !(o = api_body_object(r)) ||
	    api_only(r, o, names) || api_str_member(r, o, "source", &source) ||
	    api_str_member(r, o, "target", &target) || api_str_member(r, o, "title", &title) ||
	    api_str_member(r, o, "description", &desc) || api_str_member(r, o, "author", &author))
		return;
	if (!source)
		return reply_error(r, 400, cairn_errname(CAIRN_EINVAL), "\"source\" is required");
	/* Proposing asks for nothing on the target: the token must be able to write the source. */
	if (api_allow(r, d, NEED_WRITE, source) || signed_by_token(r, author))
		return;
	author = api_identity(r);
	if ((schema = jv_get(o, "schema")) && schema->type != JV_OBJECT)
		return reply_error(r, 400, cairn_errname(CAIRN_EINVAL),
				   "\"schema\" is a schema document (docs/schema.md)");
	if (schema) {
		jv_canon(schema, &doc);
		if (doc.oom) {
			buf_release(&doc);
			return reply_cairn(r, CAIRN_ENOMEM);
		}
		po.schema = (const char *)doc.p;
		po.schema_len = doc.len;
	}
	po.source = source;
	po.target = target;
	po.title = title;
	po.description = desc;
	po.author = author;
	rc = cairn_proposal_open(r->s->st, d, &po, &id);
	buf_release(&doc);
	if (rc)
		return reply_cairn(r, rc);
	buf_printf(&r->out, "{\"id\":%llu}", (unsigned long long)id);
	reply_json(r, 201);
}

void h_proposal_diff(req *r)
{
	const char *d = r->seg[2];
	struct items_out io = {r, 1, 1, 1};
	cairn_merge_result mr;
	uint64_t id;
	int rc;

	if (api_allow(r, d, NEED_READ, NULL) || proposal_id(r, &id))
		return;
	PUTS(&r->out, "{\"items\":[");
	memset(&mr, 0, sizeof(mr));
	if ((rc = cairn_proposal_diff(r->s->st, d, id, api_w_item, &io, &mr)))
		return api_past_deadline(r) ? api_reply_timeout(r) : reply_cairn(r, rc);
	PUTS(&r->out, "],");
	w_merge_result(&r->out, &mr);
	buf_put_u8(&r->out, '}');
	reply_json(r, 200);
}

void h_proposal_note(req *r)
{
	static const char *const names[] = {"text", "verdict", "author", NULL};
	const char *d = r->seg[2], *text, *verdict, *author, *source, *target;
	const jv *o = NULL;
	uint64_t id;
	int rc;

	/* A review note is a write by the proposer (who may write its branch) or a reviewer (its target). */
	if (api_allow(r, d, NEED_WRITE, NULL) || proposal_id(r, &id) || !(o = api_body_object(r)) ||
	    api_only(r, o, names) || api_str_member(r, o, "text", &text) ||
	    api_str_member(r, o, "verdict", &verdict) || api_str_member(r, o, "author", &author))
		return;
	if (!text)
		return reply_error(r, 400, cairn_errname(CAIRN_EINVAL), "\"text\" is required");
	if (proposal_branches(r, id, &source, &target) || signed_by_token(r, author))
		return;
	if (!api_may_write(r, source) && !api_may_write(r, target))
		return reply_error(r, 403, cairn_errname(CAIRN_EFORBIDDEN),
				   "a note is left by who may write the proposal's branch (%s) or its "
				   "target (%s); the token may write only to branches matching %s",
				   source, target, r->tok.branches);
	author = api_identity(r);
	if ((rc = cairn_proposal_note(r->s->st, d, id, author, text, verdict)))
		return reply_cairn(r, rc);
	buf_printf(&r->out, "{\"id\":%llu,\"noted\":true}", (unsigned long long)id);
	reply_json(r, 201);
}

void h_proposal_accept(req *r)
{
	static const char *const names[] = {"resolve", "resolutions", "expect_revision", "actor",
					    "source", "confidence", "message", "trace_id", NULL};
	const char *d = r->seg[2], *source, *target;
	struct items_out io = {r, 1, 1, 0};
	cairn_merge_options mo;
	cairn_merge_result mr;
	buf res = BUF_INIT;
	const jv *o = NULL;
	uint64_t id;
	int rc;

	if (api_allow(r, d, NEED_WRITE, NULL) || proposal_id(r, &id) ||
	    (r->body.len && (!(o = api_body_object(r)) || api_only(r, o, names))) ||
	    proposal_branches(r, id, &source, &target) || api_allow(r, d, NEED_WRITE, target))
		return;
	if (!r->body.len)
		o = jv_object(&r->mem, 0);
	memset(&mo, 0, sizeof(mo));
	if (api_expect_member(r, o, &mo.commit) || merge_body(r, o, &mo, &res)) {
		buf_release(&res);
		return;
	}
	mo.dry_run = 0;
	PUTS(&r->out, "{\"items\":[");
	memset(&mr, 0, sizeof(mr));
	rc = cairn_proposal_accept(r->s->st, d, id, &mo, api_w_item, &io, &mr);
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
	api_written(r, mr.schema_revision ? mr.schema_revision : mr.revision);
	reply_json(r, mr.revision || mr.schema_revision ? 201 : 200);
}

void h_proposal_close(req *r)
{
	static const char *const names[] = {"note", "author", NULL};
	const char *d = r->seg[2], *note, *author, *source, *target;
	int reject = strcmp(r->seg[5], "reject") == 0;
	const jv *o = NULL;
	uint64_t id;
	int rc;

	if (api_allow(r, d, NEED_WRITE, NULL) || proposal_id(r, &id))
		return;
	if (r->body.len &&
	    (!(o = api_body_object(r)) || api_only(r, o, names) ||
	     api_str_member(r, o, "note", &note) || api_str_member(r, o, "author", &author)))
		return;
	if (!r->body.len)
		note = author = NULL;
	/* Rejecting is the target's reviewers' call; withdrawing, the proposer's (its branch). */
	if (proposal_branches(r, id, &source, &target) ||
	    api_allow(r, d, NEED_WRITE, reject ? target : source) || signed_by_token(r, author))
		return;
	author = api_identity(r);
	rc = cairn_proposal_close(r->s->st, d, id,
				  reject ? CAIRN_PROPOSAL_REJECTED : CAIRN_PROPOSAL_WITHDRAWN, author,
				  note);
	if (rc)
		return reply_cairn(r, rc);
	buf_printf(&r->out, "{\"id\":%llu,\"status\":\"%s\"}", (unsigned long long)id,
		   reject ? "rejected" : "withdrawn");
	reply_json(r, 200);
}
