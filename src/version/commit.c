/*
 * The commit pipeline: validate a change set completely, then apply it in
 * the same LMDB write transaction, then commit durably.
 *
 * Validation simulates the changes in order over the branch head, keeping a
 * state per Record and per Link the commit touches (rstate, lstate), and
 * turns every change into planned Versions with their vids, previous vids,
 * canonical values and lineage. Checks that depend on the final state of the
 * commit (references, Link ends, uniqueness, cardinality, Links left on a
 * deleted Record) run after the last change, so a Part may name a Plant put
 * later in the same commit. Nothing is written until every check passed;
 * apply then only writes the plan: the Versions, their index entries, the
 * live-set chunks and counts as new cells at the new revision, the Revision
 * (hash-chained to the branch's previous head) and the counters.
 *
 * Apply takes only a validated plan, which is what a replica replaying a log
 * of Revisions would need.
 */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/err.h"
#include "base/hmap.h"
#include "base/json.h"
#include "base/text.h"
#include "model/changeset.h"
#include "version/commit_int.h"

/* ------------------------------------------------------------ driver -- */

void commit_cctx_release(cctx *c)
{
	for (size_t i = 0; i < c->n_rs; i++) {
		cr_free(c->rs[i].key_own);
		cr_free(c->rs[i].title);
		cr_free(c->rs[i].lin);
	}
	cr_free(c->rs);
	cr_free(c->ls);
	cr_free(c->ops);
	cr_free(c->kbloom);
	hmap_release(&c->rmap);
	hmap_release(&c->lmap);
	buf_release(&c->arena);
	buf_release(&c->tmp);
	arena_release(&c->mem);
	wl_release(&c->wl);
	commit_ix_release(c);
	dctx_close(&c->d);
}

/* A catalog value of a vector model: be32 dimension, then the model's id. */
int vec_model_decode(const MDB_val *v, uint32_t *dim, char model[VEC_MODEL_MAX + 1])
{
	if (v->mv_size < 4 || v->mv_size > 4 + VEC_MODEL_MAX)
		return err_set(CAIRN_ECORRUPT, "bad vector model record");
	*dim = be32_get(v->mv_data);
	memcpy(model, (const uint8_t *)v->mv_data + 4, v->mv_size - 4);
	model[v->mv_size - 4] = '\0';
	return 0;
}

int vec_model_get(MDB_txn *txn, cairn_store *st, uint32_t dom, uint32_t *dim,
		  char model[VEC_MODEL_MAX + 1])
{
	kbuf k;
	MDB_val v;
	int rc;

	*dim = 0;
	model[0] = '\0';
	kb_init(&k);
	kb_be32(&k, dom);
	kb_u8(&k, CAT_VMODEL);
	rc = db_get(txn, st, DB_CATALOG, k.b, k.n, &v);
	if (rc == CAIRN_ENOTFOUND)
		return 0;
	return rc ? rc : vec_model_decode(&v, dim, model);
}


/* Validate and plan in an open write transaction. Returns 0, a fatal error, or the first failure's code. */

/*
 * The result of a commit whose every change was unchanged: nothing written,
 * the branch's head revision and its hash.
 */
static int head_result(cctx *c, cairn_commit_result *out)
{
	uint64_t head = branch_head(&c->d.br);
	MDB_val v;
	rrec r;
	kbuf k;
	int rc;

	if (!out)
		return 0;
	memset(out, 0, sizeof(*out));
	out->revision = head;
	if (!head)
		return 0;
	key_u64(&k, c->d.dom, head);
	if ((rc = db_get(c->d.txn, c->d.st, DB_REVS, k.b, k.n, &v)) ||
	    (rc = rrec_decode(v.mv_data, v.mv_size, &r)))
		return rc;
	memcpy(out->hash, r.hash, 32);
	return 0;
}

/* Validate and apply in txn (already open on the branch in c->d). */
static int run_in_txn(cctx *c, const cairn_commit_options *o, cairn_commit_result *out,
		      commit_fail **fails, size_t *n_fails)
{
	int rc;

	c->emb = o->embedder;
	c->cmodel = o->embedder ? cairn_embedder_model(o->embedder)
		    : o->vector_model ? o->vector_model : "";
	if (strlen(c->cmodel) > VEC_MODEL_MAX || !utf8_valid(c->cmodel, strlen(c->cmodel)))
		return err_set(CAIRN_EINVAL, "a model id is valid UTF-8 of at most %d bytes",
			       VEC_MODEL_MAX);
	if (o->has_expect && branch_head(&c->d.br) != o->expect_revision)
		rc = err_set(CAIRN_ECONFLICT, "branch %s is at revision %llu, not the expected %llu",
			     c->d.br.name, (unsigned long long)branch_head(&c->d.br),
			     (unsigned long long)o->expect_revision);
	else if (!(rc = commit_validate(c)) && !(rc = c->n_ops || !c->unchanged
							   ? commit_apply(c, &o->prov, out)
							   : head_result(c, out)) &&
		 out)
		out->unchanged = c->unchanged;
	if (rc && fails && c->n_fails) {
		*fails = c->fails;
		*n_fails = c->n_fails;
	} else {
		commit_fails_free(c->fails, c->n_fails);
	}
	c->fails = NULL;
	c->n_fails = 0;
	return rc;
}

int commit_in_txn(dctx *d, const cairn_commit_options *o, const cairn_changeset *cs, int mode,
		  const commit_extra *x, cairn_commit_result *out, commit_fail **fails,
		  size_t *n_fails)
{
	cctx c;
	int rc;

	memset(&c, 0, sizeof(c));
	c.d = *d;
	c.d.sref = NULL; /* the caller keeps its reference to the schema */
	c.d.kcur = NULL;
	c.d.lcache = NULL;
	c.d.lcache_n = 0;
	c.d.kseg_loaded = 0; /* an earlier commit of the transaction may have written segments */
	c.cs = cs;
	c.mode = mode;
	c.x = x;
	rc = run_in_txn(&c, o, out, fails, n_fails);
	commit_cctx_release(&c);
	d->kseg_loaded = 0; /* the commit may have written or folded segments */
	return rc;
}

/* One run of a commit, as store_write runs it. */
struct commit_once {
	const cairn_commit_options *o;
	const cairn_changeset *cs;
	int mode;
	cairn_commit_result *out;
	commit_fail **fails;
	size_t *n_fails;
	int created;
};

static int commit_once(MDB_txn *txn, cairn_store *st, void *arg)
{
	struct commit_once *a = arg;
	cctx c;
	int rc;

	if (a->fails && *a->fails) { /* an earlier run's, when the map filled */
		commit_fails_free(*a->fails, *a->n_fails);
		*a->fails = NULL;
		*a->n_fails = 0;
	}
	memset(&c, 0, sizeof(c));
	c.cs = a->cs;
	c.mode = a->mode;
	rc = dctx_open_write(&c.d, st, txn, a->o, &a->created);
	if (!rc)
		rc = run_in_txn(&c, a->o, a->out, a->fails, a->n_fails);
	commit_cctx_release(&c);
	return rc;
}

int commit_options_check(const cairn_commit_options *o, const char *fn, const char *main_only)
{
	int rc;

	if (!o->domain)
		return err_set(CAIRN_EINVAL, "%s: no Domain", fn);
	if (main_only && o->branch && strcmp(o->branch, "main") != 0)
		return err_set(CAIRN_EINVAL, "%s", main_only);
	if ((rc = commit_prov_check(&o->prov)))
		return rc;
	return err_reserved(o->reserved, fn, "cairn_commit_options");
}

int commit_prov_check(const cairn_provenance *p)
{
	const char *f[] = {p->actor, p->source, p->message, p->trace_id};
	const char *names[] = {"actor", "source", "message", "trace id"};

	if (p->has_confidence && !(p->confidence >= 0 && p->confidence <= 1))
		return err_set(CAIRN_EINVAL, "confidence must be between 0 and 1");
	for (int i = 0; i < 4; i++) {
		if (!f[i])
			continue;
		if (strlen(f[i]) > 65536)
			return err_set(CAIRN_ELIMIT, "the %s is longer than 65536 bytes", names[i]);
		if (!utf8_valid(f[i], strlen(f[i])))
			return err_set(CAIRN_EUTF8, "the %s is not valid UTF-8", names[i]);
	}
	return 0;
}

int commit_run(cairn_store *st, const cairn_commit_options *o, const cairn_changeset *cs,
	       int mode, cairn_commit_result *out, commit_fail **fails, size_t *n_fails)
{
	struct commit_once a;
	int rc;

	if (fails) {
		*fails = NULL;
		*n_fails = 0;
	}
	if (!st || !o || !cs)
		return err_set(CAIRN_EINVAL, "cairn_commit: NULL argument");
	if (cs->n == 0 && o->domain)
		return err_set(CAIRN_EINVAL, "cairn_commit: the change set is empty");
	if ((rc = commit_options_check(o, "cairn_commit", 0)))
		return rc;
	a = (struct commit_once){o, cs, mode, out, fails, n_fails, 0};
	if (!(rc = store_write(st, commit_once, &a)) && a.created)
		cache_invalidate(st);
	return rc;
}

int cairn_commit(cairn_store *st, const cairn_commit_options *opts, const cairn_changeset *cs,
		 cairn_commit_result *out)
{
	return commit_run(st, opts, cs, COMMIT_STOP, out, NULL, NULL);
}

/* ------------------------------------------------------ schema commit -- */

/* One run of a schema change, as store_write runs it. */
struct schema_once {
	const cairn_commit_options *o;
	const char *json;
	size_t len;
	cairn_commit_result *out;
};

static int schema_once(MDB_txn *txn, cairn_store *st, void *arg)
{
	struct schema_once *a = arg;
	const cairn_commit_options *o = a->o;
	cctx c;
	schema *m = NULL;
	schema_delta delta = {0};
	sha256_ctx h;
	uint8_t digest[32];
	int rc, created;

	memset(&c, 0, sizeof(c));
	rc = dctx_open_write(&c.d, st, txn, o, &created);
	if (rc)
		goto out;
	if (o->has_expect && branch_head(&c.d.br) != o->expect_revision) {
		rc = err_set(CAIRN_ECONFLICT, "branch %s is at revision %llu, not the expected %llu",
			     c.d.br.name, (unsigned long long)branch_head(&c.d.br),
			     (unsigned long long)o->expect_revision);
		goto out;
	}
	rc = schema_apply_json(c.d.s, a->json, a->len, &m, &delta);
	if (rc)
		goto out;
	if ((rc = counters_get(txn, st, c.d.dom, &c.ctr)))
		goto out;
	c.rev = c.ctr.next_rev;
	rc = schema_check_data(&c.d, m, &delta);
	if (rc)
		goto out;
	if ((rc = schema_store(txn, st, c.d.dom, c.rev, m)))
		goto out;
	if (sha256_init(&h)) {
		rc = err_set(CAIRN_ENOMEM, "out of memory");
		goto out;
	}
	sha256_update(&h, m->json, m->json_len);
	sha256_final(&h, digest);
	rc = commit_write_revision(&c, CAIRN_REV_SCHEMA, &o->prov, digest, c.ctr.next_vid, 0, a->out);
	if (rc)
		goto out;
	rc = catalog_touch(txn, st);
out:
	schema_free(m);
	schema_delta_release(&delta);
	commit_cctx_release(&c);
	return rc;
}

int schema_apply_txn(MDB_txn *txn, cairn_store *st, const cairn_commit_options *o,
		     const char *json, size_t len, cairn_commit_result *out)
{
	struct schema_once a = {o, json, len, out};

	return schema_once(txn, st, &a);
}

int cairn_schema_apply(cairn_store *st, const cairn_commit_options *opts, const char *json,
		       size_t len, cairn_commit_result *out)
{
	struct schema_once a;
	int rc;

	if (!st || !opts || !json)
		return err_set(CAIRN_EINVAL, "cairn_schema_apply: NULL argument");
	if ((rc = commit_options_check(opts, "cairn_schema_apply",
				       "the schema belongs to the Domain, not to a branch: apply it "
				       "on main (every branch reads with it)")))
		return rc;
	a = (struct schema_once){opts, json, len, out};
	if (!(rc = store_write(st, schema_once, &a)))
		cache_invalidate(st);
	return rc;
}

/* ------------------------------------------------------- group commit -- */

static void req_fail(cairn_commit_req *r, int rc)
{
	const char *m = cairn_errmsg();

	r->rc = rc;
	snprintf(r->msg, sizeof(r->msg), "%s", *m ? m : cairn_strerror(rc));
	r->change = cairn_errchange();
}

/*
 * The group in one write transaction, each commit in a nested transaction
 * of its own, so that a failed one is undone alone. Returns 0, or an error
 * of the whole group (CAIRN_EMAPFULL: grow and run it again).
 */
/* One run of a group of commits, as store_write runs it. */
struct group_once {
	cairn_commit_req *reqs;
	size_t n;
	const char *skip;
	int created_any;
};

static int group_once(MDB_txn *txn, cairn_store *st, void *arg)
{
	struct group_once *a = arg;
	cairn_commit_req *reqs = a->reqs;
	const char *skip = a->skip;
	size_t ok = 0, n = a->n;
	int rc = 0;

	a->created_any = 0;
	for (size_t i = 0; i < n; i++) {
		cairn_commit_req *r = &reqs[i];
		MDB_txn *child;
		cctx c;
		int created = 0, mrc;

		if (skip[i])
			continue;
		err_clear();
		mrc = mdb_txn_begin(st->env, txn, 0, &child);
		if (mrc) {
			rc = store_err(mrc, "nested transaction");
			break;
		}
		memset(&c, 0, sizeof(c));
		c.cs = r->cs;
		c.mode = COMMIT_STOP;
		rc = dctx_open_write(&c.d, st, child, r->opts, &created);
		if (!rc)
			rc = run_in_txn(&c, r->opts, &r->res, NULL, NULL);
		commit_cctx_release(&c);
		if (rc) {
			mdb_txn_abort(child);
			if (rc == CAIRN_EMAPFULL || rc == CAIRN_EIO || rc == CAIRN_ENOMEM)
				break; /* the whole group */
			req_fail(r, rc);
			rc = 0;
			continue;
		}
		if ((mrc = mdb_txn_commit(child))) {
			rc = store_err(mrc, "nested commit");
			break;
		}
		r->rc = 0;
		a->created_any |= created;
		ok++;
	}
	return rc || ok ? rc : STORE_DISCARD;
}

int cairn_commit_group(cairn_store *st, cairn_commit_req *reqs, size_t n)
{
	struct group_once a;
	char *skip;
	int rc = 0;

	if (!st || (!reqs && n))
		return err_set(CAIRN_EINVAL, "cairn_commit_group: NULL argument");
	skip = cr_calloc(n ? n : 1, 1);
	if (!skip)
		return err_set(CAIRN_ENOMEM, "out of memory");
	/* What fails before any transaction fails alone, and takes no part. */
	for (size_t i = 0; i < n; i++) {
		cairn_commit_req *r = &reqs[i];

		r->rc = 0;
		r->msg[0] = '\0';
		r->change = -1;
		memset(&r->res, 0, sizeof(r->res));
		err_clear();
		if (!r->opts || !r->cs || !r->opts->domain)
			rc = err_set(CAIRN_EINVAL, "cairn_commit_group: a commit without options, "
						   "change set or Domain");
		else if (r->cs->n == 0)
			rc = err_set(CAIRN_EINVAL, "cairn_commit: the change set is empty");
		else if (!(rc = commit_prov_check(&r->opts->prov)))
			rc = err_reserved(r->opts->reserved, "cairn_commit_group",
					  "cairn_commit_options");
		if (rc) {
			req_fail(r, rc);
			skip[i] = 1;
			rc = 0;
		}
	}
	a = (struct group_once){reqs, n, skip, 0};
	rc = store_write(st, group_once, &a);
	if (rc) {
		const char *m = cairn_errmsg();
		char msg[512];

		snprintf(msg, sizeof(msg), "%s", *m ? m : cairn_strerror(rc));
		for (size_t i = 0; i < n; i++)
			if (!skip[i]) {
				reqs[i].rc = rc;
				snprintf(reqs[i].msg, sizeof(reqs[i].msg), "%s", msg);
				reqs[i].change = -1;
			}
	} else if (a.created_any) {
		cache_invalidate(st);
	}
	cr_free(skip);
	return rc;
}

/*
 * The revision of an erasure (admin/erase.c), on main, in the caller's
 * write transaction: the vids it erases (ascending, n of them) go to the
 * catalog (dom 'R' rev), and its digest is their SHA-256.
 */
int erase_revision_write(MDB_txn *txn, cairn_store *st, const cairn_commit_options *o,
			 const uint64_t *vids, size_t n, uint64_t *rev)
{
	uint8_t digest[32], *list = NULL;
	cctx c;
	kbuf k;
	int rc, created;

	memset(&c, 0, sizeof(c));
	if ((rc = dctx_open_write(&c.d, st, txn, o, &created)) ||
	    (rc = counters_get(txn, st, c.d.dom, &c.ctr)))
		goto out;
	c.rev = c.ctr.next_rev;
	if (n && !(list = cr_reallocarray(NULL, n, 8))) {
		rc = err_set(CAIRN_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		be64_put(list + 8 * i, vids[i]);
	kb_init(&k);
	kb_be32(&k, c.d.dom);
	kb_u8(&k, CAT_ERASED);
	kb_be64(&k, c.rev);
	if ((rc = db_put(txn, st, DB_CATALOG, k.b, k.n, list ? list : digest, n * 8,
			 MDB_NOOVERWRITE)))
		goto out;
	sha256(list ? list : digest, n * 8, digest);
	rc = commit_write_revision(&c, CAIRN_REV_ERASE, &o->prov, digest, c.ctr.next_vid, 0, NULL);
	*rev = c.rev;
out:
	cr_free(list);
	commit_cctx_release(&c);
	return rc;
}
