/*
 * Proposals: a branch offered for merge into another, with a title, a
 * description, an author, a status and review notes. They live in the
 * catalog, naming their branches by id (so a rename follows them); the
 * diff and conflicts are computed when asked, by a dry-run merge, and
 * accepting merges and marks the proposal merged in one transaction. A
 * proposal may offer a schema document too (format 2), applied after the
 * merge in the same transaction.
 */
#include <stdio.h>
#include <string.h>

#include "base/json.h"
#include "version/txn.h"
#include "base/alloc.h"
#include "base/err.h"
#include "base/text.h"
#include "version/version.h"

#define PROP_FORMAT 2  /* 1: without a schema document */
#define PROP_SCHEMA_MAX (1u << 20)

typedef struct prop {
	int status;
	uint32_t source, target;
	int64_t created, updated;
	uint64_t merged_rev;
	const char *title, *description, *author, *notes, *schema;
	size_t title_len, description_len, author_len, notes_len, schema_len;
} prop;

static void pkey(kbuf *k, uint32_t dom, uint64_t id)
{
	kb_init(k);
	kb_be32(k, dom);
	kb_u8(k, CAT_PROP);
	kb_be64(k, id);
}

static int prop_decode(const void *p, size_t n, prop *o)
{
	rdr r;

	uint8_t format;

	rd_init(&r, p, n);
	format = rd_u8(&r);
	if (format != 1 && format != PROP_FORMAT)
		return err_set(CAIRN_ECORRUPT, "a proposal has an unknown format");
	o->status = rd_u8(&r);
	o->source = rd_be32(&r);
	o->target = rd_be32(&r);
	o->created = (int64_t)rd_be64(&r);
	o->updated = (int64_t)rd_be64(&r);
	o->merged_rev = rd_be64(&r);
	o->title = (const char *)rd_str(&r, &o->title_len);
	o->description = (const char *)rd_str(&r, &o->description_len);
	o->author = (const char *)rd_str(&r, &o->author_len);
	o->notes = (const char *)rd_str(&r, &o->notes_len);
	o->schema = NULL;
	o->schema_len = 0;
	if (format == PROP_FORMAT)
		o->schema = (const char *)rd_str(&r, &o->schema_len);
	return r.bad || r.p != r.end ? err_set(CAIRN_ECORRUPT, "a proposal is malformed") : 0;
}

static int prop_put(MDB_txn *txn, cairn_store *st, uint32_t dom, uint64_t id, const prop *o)
{
	buf b = BUF_INIT;
	kbuf k;
	int rc;

	buf_put_u8(&b, PROP_FORMAT);
	buf_put_u8(&b, (uint8_t)o->status);
	buf_put_be32(&b, o->source);
	buf_put_be32(&b, o->target);
	buf_put_be64(&b, (uint64_t)o->created);
	buf_put_be64(&b, (uint64_t)o->updated);
	buf_put_be64(&b, o->merged_rev);
	buf_put_str(&b, o->title, o->title_len);
	buf_put_str(&b, o->description, o->description_len);
	buf_put_str(&b, o->author, o->author_len);
	buf_put_str(&b, o->notes, o->notes_len);
	buf_put_str(&b, o->schema ? o->schema : "", o->schema_len);
	if (b.oom) {
		buf_release(&b);
		return err_set(CAIRN_ENOMEM, "out of memory");
	}
	pkey(&k, dom, id);
	rc = db_put(txn, st, DB_CATALOG, k.b, k.n, b.p, b.len, 0);
	buf_release(&b);
	return rc;
}

static int prop_get(MDB_txn *txn, cairn_store *st, uint32_t dom, uint64_t id, prop *o)
{
	kbuf k;
	MDB_val v;
	int rc;

	pkey(&k, dom, id);
	rc = db_get(txn, st, DB_CATALOG, k.b, k.n, &v);
	if (rc == CAIRN_ENOTFOUND)
		return err_set(CAIRN_ENOTFOUND, "no proposal %llu", (unsigned long long)id);
	return rc ? rc : prop_decode(v.mv_data, v.mv_size, o);
}

static int text_ok(const char *s, const char *what)
{
	if (s && (strlen(s) > 65536 || !utf8_valid(s, strlen(s))))
		return err_set(CAIRN_EINVAL, "the %s is not UTF-8 text of at most 64 KiB", what);
	return 0;
}

/* A branch's id by name in d's Domain. */
static int branch_id_of(dctx *d, const char *name, uint32_t *id)
{
	int rc;

	if (!name || strcmp(name, "main") == 0) {
		*id = MAIN_BRANCH_ID;
		return 0;
	}
	{
		kbuf k;
		MDB_val v;

		if (!branch_name_valid(name))
			return err_set(CAIRN_ENOBRANCH, "no branch named \"%s\"", name);
		kb_init(&k);
		kb_be32(&k, d->dom);
		kb_u8(&k, CAT_BNAME);
		kb_bytes(&k, name, strlen(name));
		rc = db_get(d->txn, d->st, DB_CATALOG, k.b, k.n, &v);
		if (rc == CAIRN_ENOTFOUND)
			return err_set(CAIRN_ENOBRANCH, "no branch named \"%s\"", name);
		if (rc)
			return rc;
		*id = be32_get(v.mv_data);
		return 0;
	}
}

struct propose_arg {
	const cairn_proposal_options *o;
	const char *schema;	/* o->schema in canonical form (or NULL) */
	size_t schema_len;
	uint64_t id;
};

static int propose_txn(MDB_txn *txn, cairn_store *st, dctx *d, void *arg)
{
	struct propose_arg *a = arg;
	prop p = {0};
	uint8_t nb[8];
	uint64_t id = 1;
	kbuf k;
	MDB_val v;
	int rc;

	if ((rc = branch_id_of(d, a->o->source, &p.source)) ||
	    (rc = branch_id_of(d, a->o->target, &p.target)))
		return rc;
	if (p.source == p.target)
		return err_set(CAIRN_EINVAL, "a branch cannot be proposed into itself");
	if (a->schema) { /* checked against the schema now; against the data when accepted */
		schema *m = NULL;
		schema_delta delta = {0};

		if (p.target != MAIN_BRANCH_ID)
			return err_set(CAIRN_EINVAL, "a schema change is the Domain's: propose it "
						     "into main");
		rc = schema_apply_json(d->s, a->schema, a->schema_len, &m, &delta);
		schema_free(m);
		schema_delta_release(&delta);
		if (rc) {
			err_prefix("the proposal's schema: ");
			return rc;
		}
		p.schema = a->schema;
		p.schema_len = a->schema_len;
	}
	kb_init(&k);
	kb_be32(&k, d->dom);
	kb_u8(&k, CAT_PROPN);
	rc = db_get(txn, st, DB_CATALOG, k.b, k.n, &v);
	if (rc && rc != CAIRN_ENOTFOUND)
		return rc;
	if (!rc && v.mv_size == 8)
		id = be64_get(v.mv_data);
	be64_put(nb, id + 1);
	if ((rc = db_put(txn, st, DB_CATALOG, k.b, k.n, nb, 8, 0)))
		return rc;
	p.status = CAIRN_PROPOSAL_OPEN;
	p.created = p.updated = time_now_ms();
	p.title = a->o->title ? a->o->title : "";
	p.title_len = strlen(p.title);
	p.description = a->o->description ? a->o->description : "";
	p.description_len = strlen(p.description);
	p.author = a->o->author ? a->o->author : "";
	p.author_len = strlen(p.author);
	p.notes = "[]";
	p.notes_len = 2;
	a->id = id;
	return prop_put(txn, st, d->dom, id, &p);
}

int cairn_proposal_open(cairn_store *st, const char *domain, const cairn_proposal_options *o,
			uint64_t *id)
{
	struct propose_arg a = {o, NULL, 0, 0};
	buf doc = BUF_INIT;
	arena mem = ARENA_INIT;
	const jv *v;
	int rc;

	if (id)
		*id = 0;
	if (!st || !domain || !o || !o->source || !id)
		return err_set(CAIRN_EINVAL, "cairn_proposal_open: NULL argument");
	if ((rc = err_reserved(o->reserved, "cairn_proposal_open", "cairn_proposal_options")))
		return rc;
	if ((rc = text_ok(o->title, "title")) || (rc = text_ok(o->description, "description")) ||
	    (rc = text_ok(o->author, "author")))
		return rc;
	if (o->schema) { /* stored in canonical form */
		size_t len = o->schema_len ? o->schema_len : strlen(o->schema);

		if (!len || len > PROP_SCHEMA_MAX)
			return err_set(CAIRN_EINVAL, "the proposal's schema is 1 byte to 1 MiB");
		if (!(v = jv_parse(&mem, o->schema, len, "the proposal's schema"))) {
			arena_release(&mem);
			return err_code();
		}
		jv_canon(v, &doc);
		arena_release(&mem);
		if (doc.oom) {
			buf_release(&doc);
			return err_set(CAIRN_ENOMEM, "out of memory");
		}
		a.schema = (const char *)doc.p;
		a.schema_len = doc.len;
	}
	rc = domain_write(st, domain, propose_txn, &a, 0);
	buf_release(&doc);
	*id = rc ? 0 : a.id;
	return rc;
}

int cairn_proposal_create(cairn_store *st, const char *domain, const char *source,
			  const char *target, const char *title, const char *description,
			  const char *author, uint64_t *id)
{
	cairn_proposal_options o = {0};

	if (!source) {
		if (id)
			*id = 0;
		return err_set(CAIRN_EINVAL, "cairn_proposal_create: NULL argument");
	}
	o.source = source;
	o.target = target;
	o.title = title;
	o.description = description;
	o.author = author;
	return cairn_proposal_open(st, domain, &o, id);
}

int cairn_proposal_schema(cairn_txn *t, uint64_t id, const char **json, size_t *len)
{
	prop p;
	int rc;

	if (!t || !json || !len)
		return err_set(CAIRN_EINVAL, "cairn_proposal_schema: NULL argument");
	*json = NULL;
	*len = 0;
	if ((rc = prop_get(t->txn, t->st, t->d.dom, id, &p)))
		return rc;
	*json = p.schema_len ? p.schema : NULL;
	*len = p.schema_len;
	return 0;
}

static const char *branch_name_of(cairn_txn *t, uint32_t id)
{
	branch_info b;

	if (branch_get(t->txn, t->st, t->d.dom, id, &b) || b.state != BRANCH_LIVE)
		return "(deleted)";
	return b.name;
}

static void prop_fill(cairn_txn *t, uint64_t id, const prop *p, cairn_proposal *out)
{
	out->id = id;
	out->status = p->status;
	out->source = branch_name_of(t, p->source);
	out->target = branch_name_of(t, p->target);
	out->title = p->title;
	out->title_len = p->title_len;
	out->description = p->description;
	out->description_len = p->description_len;
	out->author = p->author;
	out->author_len = p->author_len;
	out->created_ms = p->created;
	out->updated_ms = p->updated;
	out->merged_revision = p->merged_rev;
	out->notes = p->notes;
	out->notes_len = p->notes_len;
}

int cairn_proposal_get(cairn_txn *t, uint64_t id, cairn_proposal *out)
{
	prop p;
	int rc;

	if (!t || !out)
		return err_set(CAIRN_EINVAL, "cairn_proposal_get: NULL argument");
	if ((rc = prop_get(t->txn, t->st, t->d.dom, id, &p)))
		return rc;
	prop_fill(t, id, &p, out);
	return 0;
}

int cairn_proposal_list(cairn_txn *t, int status, int (*cb)(void *ctx, const cairn_proposal *p),
			void *ctx)
{
	MDB_cursor *cur;
	MDB_val k, v;
	kbuf pre;
	int mrc, rc = 0;

	if (!t || !cb)
		return err_set(CAIRN_EINVAL, "cairn_proposal_list: NULL argument");
	pkey(&pre, t->d.dom, UINT64_MAX);
	mrc = mdb_cursor_open(t->txn, t->st->dbi[DB_CATALOG], &cur);
	if (mrc)
		return store_err(mrc, "catalog");
	k.mv_data = pre.b;
	k.mv_size = pre.n;
	/* Newest first: from the end of the proposals' range backwards. */
	mrc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
	mrc = mrc == 0 ? mdb_cursor_get(cur, &k, &v, MDB_PREV) : mdb_cursor_get(cur, &k, &v, MDB_LAST);
	for (; mrc == 0 && !rc; mrc = mdb_cursor_get(cur, &k, &v, MDB_PREV)) {
		cairn_proposal out;
		prop p;

		if (k.mv_size != pre.n || memcmp(k.mv_data, pre.b, pre.n - 8) != 0)
			break;
		if ((rc = prop_decode(v.mv_data, v.mv_size, &p)))
			break;
		if (status && p.status != status)
			continue;
		prop_fill(t, be64_get((uint8_t *)k.mv_data + pre.n - 8), &p, &out);
		rc = cb(ctx, &out);
	}
	mdb_cursor_close(cur);
	if (rc)
		return rc;
	return mrc && mrc != MDB_NOTFOUND ? store_err(mrc, "catalog") : 0;
}

struct note_arg {
	uint64_t id;
	const char *author, *text, *verdict;
	int status; /* 0: only a note; else the new status */
	uint64_t merged_rev;
};

/* Append a note and/or set the status of proposal a->id. */
static int update_txn(MDB_txn *txn, cairn_store *st, dctx *d, void *arg)
{
	struct note_arg *a = arg;
	buf notes = BUF_INIT;
	char when[48];
	prop p;
	int rc;

	if ((rc = prop_get(txn, st, d->dom, a->id, &p)))
		return rc;
	if (a->status && p.status != CAIRN_PROPOSAL_OPEN)
		return err_set(CAIRN_ECLOSED, "proposal %llu is not open", (unsigned long long)a->id);
	if (a->text) {
		time_format_ms(time_now_ms(), when);
		buf_put(&notes, p.notes, p.notes_len - 1); /* without the closing ']' */
		if (p.notes_len > 2)
			buf_put_u8(&notes, ',');
		buf_put(&notes, "{\"author\":", 10);
		json_quote(&notes, a->author ? a->author : "", a->author ? strlen(a->author) : 0);
		buf_put(&notes, ",\"text\":", 8);
		json_quote(&notes, a->text, strlen(a->text));
		buf_put(&notes, ",\"verdict\":", 11);
		if (a->verdict)
			json_quote(&notes, a->verdict, strlen(a->verdict));
		else
			buf_put(&notes, "null", 4);
		buf_printf(&notes, ",\"time\":\"%s\"}]", when);
		if (notes.oom) {
			buf_release(&notes);
			return err_set(CAIRN_ENOMEM, "out of memory");
		}
		p.notes = (const char *)notes.p;
		p.notes_len = notes.len;
	}
	if (a->status) {
		p.status = a->status;
		p.merged_rev = a->merged_rev;
	}
	p.updated = time_now_ms();
	rc = prop_put(txn, st, d->dom, a->id, &p);
	buf_release(&notes);
	return rc;
}

int cairn_proposal_note(cairn_store *st, const char *domain, uint64_t id, const char *author,
			const char *text, const char *verdict)
{
	struct note_arg a = {id, author, text, verdict, 0, 0};
	int rc;

	if (!st || !domain || !text)
		return err_set(CAIRN_EINVAL, "cairn_proposal_note: NULL argument");
	if ((rc = text_ok(text, "note")) || (rc = text_ok(author, "author")) ||
	    (rc = text_ok(verdict, "verdict")))
		return rc;
	return domain_write(st, domain, update_txn, &a, 0);
}

int cairn_proposal_close(cairn_store *st, const char *domain, uint64_t id, int status,
			 const char *author, const char *note)
{
	struct note_arg a = {id, author, note, NULL, status, 0};
	int rc;

	if (!st || !domain)
		return err_set(CAIRN_EINVAL, "cairn_proposal_close: NULL argument");
	if (status != CAIRN_PROPOSAL_REJECTED && status != CAIRN_PROPOSAL_WITHDRAWN)
		return err_set(CAIRN_EINVAL, "a proposal is closed as rejected or withdrawn");
	if ((rc = text_ok(note, "note")) || (rc = text_ok(author, "author")))
		return rc;
	a.verdict = status == CAIRN_PROPOSAL_REJECTED ? "rejected" : "withdrawn";
	return domain_write(st, domain, update_txn, &a, 0);
}

/* The names of a proposal's branches, for a merge. */
static int prop_branches(cairn_store *st, const char *domain, uint64_t id, char *source,
			 char *target, int *status)
{
	cairn_read_options ro = {0};
	cairn_proposal p;
	cairn_txn *t;
	int rc;

	ro.domain = domain;
	if ((rc = cairn_txn_begin(st, &ro, &t)))
		return rc;
	rc = cairn_proposal_get(t, id, &p);
	if (!rc) {
		snprintf(source, CAIRN_MAX_BRANCH + 1, "%s", p.source);
		snprintf(target, CAIRN_MAX_BRANCH + 1, "%s", p.target);
		*status = p.status;
		if (strcmp(p.source, "(deleted)") == 0 || strcmp(p.target, "(deleted)") == 0)
			rc = err_set(CAIRN_ENOBRANCH, "a branch of proposal %llu was deleted",
				     (unsigned long long)id);
	}
	cairn_txn_end(t);
	return rc;
}

int cairn_proposal_diff(cairn_store *st, const char *domain, uint64_t id, cairn_item_cb cb,
			void *ctx, cairn_merge_result *out)
{
	char source[CAIRN_MAX_BRANCH + 1], target[CAIRN_MAX_BRANCH + 1];
	cairn_merge_options o;
	int status, rc;

	if (!st || !domain)
		return err_set(CAIRN_EINVAL, "cairn_proposal_diff: NULL argument");
	if ((rc = prop_branches(st, domain, id, source, target, &status)))
		return rc;
	memset(&o, 0, sizeof(o));
	o.commit.domain = domain;
	o.commit.branch = target;
	o.source = source;
	o.dry_run = 1;
	return cairn_merge(st, &o, cb, ctx, out);
}

struct accept_arg {
	uint64_t id;
	const cairn_merge_options *o;
	uint64_t schema_rev;	/* the schema revision written (0: none) */
};

/* Inside the merge's transaction: the proposal marked merged, and its schema applied. */
static int mark_merged(dctx *d, const cairn_merge_result *res, void *arg)
{
	struct accept_arg *a = arg;
	struct note_arg n = {a->id, NULL, NULL, NULL, CAIRN_PROPOSAL_MERGED,
			     res->revision ? res->revision : branch_head(&d->br)};
	cairn_commit_options co;
	cairn_commit_result cr;
	char msg[64];
	char *doc;
	prop p;
	int rc;

	a->schema_rev = 0;
	if ((rc = update_txn(d->txn, d->st, d, &n)) ||
	    (rc = prop_get(d->txn, d->st, d->dom, a->id, &p)) || !p.schema_len)
		return rc;
	/* A copy: the writes of the schema revision may move the page it is on. */
	if (!(doc = cr_malloc(p.schema_len)))
		return err_set(CAIRN_ENOMEM, "out of memory");
	memcpy(doc, p.schema, p.schema_len);
	co = a->o->commit;
	co.branch = NULL;
	co.has_expect = 0;
	if (!co.prov.message) {
		snprintf(msg, sizeof(msg), "the schema of proposal %llu", (unsigned long long)a->id);
		co.prov.message = msg;
	}
	rc = schema_apply_txn(d->txn, d->st, &co, doc, p.schema_len, &cr);
	cr_free(doc);
	if (rc)
		err_prefix("the proposal's schema: ");
	else
		a->schema_rev = cr.revision;
	return rc;
}

int cairn_proposal_accept(cairn_store *st, const char *domain, uint64_t id,
			  const cairn_merge_options *opts, cairn_item_cb cb, void *ctx,
			  cairn_merge_result *out)
{
	char source[CAIRN_MAX_BRANCH + 1], target[CAIRN_MAX_BRANCH + 1];
	struct accept_arg a = {id, NULL, 0};
	cairn_merge_options o;
	int status, rc;

	if (!st || !domain)
		return err_set(CAIRN_EINVAL, "cairn_proposal_accept: NULL argument");
	if ((rc = prop_branches(st, domain, id, source, target, &status)))
		return rc;
	if (status != CAIRN_PROPOSAL_OPEN)
		return err_set(CAIRN_ECLOSED, "proposal %llu is not open", (unsigned long long)id);
	memset(&o, 0, sizeof(o));
	if (opts)
		o = *opts;
	o.commit.domain = domain;
	o.commit.branch = target;
	o.source = source;
	o.dry_run = 0;
	a.o = &o;
	rc = merge_run(st, &o, cb, ctx, out, mark_merged, &a);
	if (!rc && a.schema_rev) {
		cache_invalidate(st);
		if (out)
			out->schema_revision = a.schema_rev;
	}
	return rc;
}

/* The name of 0.1.0 (cairn.h, "deprecated"). */
int cairn_propose(cairn_store *st, const char *domain, const char *source, const char *target,
		  const char *title, const char *description, const char *author, uint64_t *id)
{
	return cairn_proposal_create(st, domain, source, target, title, description, author, id);
}
