/*
 * Read transactions: a snapshot of one branch of one Domain, at its head or
 * as of a past revision or time, and the revisions it shows (the log). The
 * reads on it are the query layer's (src/query/).
 */
#include <string.h>

#include "base/alloc.h"
#include "base/err.h"
#include "base/text.h"
#include "version/txn.h"

int cairn_txn_begin(cairn_store *st, const cairn_read_options *opts, cairn_txn **out)
{
	cairn_txn *t;
	counters ctr;
	int rc;

	if (!out)
		return err_set(CAIRN_EINVAL, "cairn_txn_begin: out is NULL");
	*out = NULL;
	if (!st || !opts || !opts->domain)
		return err_set(CAIRN_EINVAL, "cairn_txn_begin: a store and a Domain are required");
	if ((rc = err_reserved(opts->reserved, "cairn_txn_begin", "cairn_read_options")))
		return rc;
	t = cr_calloc(1, sizeof(*t));
	if (!t)
		return err_set(CAIRN_ENOMEM, "out of memory");
	t->st = st;
	rc = store_read_begin(st, &t->txn);
	if (rc) {
		cr_free(t);
		return rc;
	}
	rc = dctx_open(&t->d, st, t->txn, opts->domain, opts->branch);
	if (rc)
		goto out_fail;
	t->d.readonly = 1;
	if (opts->at_revision || opts->at_time_ms) {
		uint64_t rev = opts->at_revision;

		if ((rc = counters_get(t->txn, st, t->d.dom, &ctr)))
			goto out_fail;
		if (opts->at_time_ms &&
		    (rc = rev_at_time(t->txn, st, t->d.dom, opts->at_time_ms, ctr.next_rev - 1, &rev)))
			goto out_fail;
		if (opts->at_revision && rev >= ctr.next_rev) {
			rc = err_set(CAIRN_ENOTFOUND, "revision %llu does not exist (the latest is %llu)",
				     (unsigned long long)rev, (unsigned long long)ctr.next_rev - 1);
			goto out_fail;
		}
		if ((rc = horizon_check(t->txn, st, t->d.dom, rev, branch_head(&t->d.br))))
			goto out_fail;
		dctx_at(&t->d, rev);
		t->past = 1;
	}
	*out = t;
	return 0;
out_fail:
	dctx_close(&t->d);
	store_read_end(st, t->txn);
	cr_free(t);
	return rc;
}

void cairn_txn_end(cairn_txn *t)
{
	if (!t)
		return;
	dctx_close(&t->d);
	store_read_end(t->st, t->txn);
	arena_release(&t->mem);
	arena_release(&t->scratch);
	cr_free(t);
}

void cairn_txn_stats(const cairn_txn *t, cairn_read_stats *out)
{
	if (!out)
		return;
	if (!t)
		memset(out, 0, sizeof(*out));
	else
		*out = t->d.stats;
}

const char *cairn_revision_type_name(int type)
{
	return type == CAIRN_REV_SCHEMA ? "schema" : type == CAIRN_REV_VECTORS ? "vectors" : type == CAIRN_REV_ERASE ? "erase" : "data";
}

uint64_t cairn_txn_revision(const cairn_txn *t)
{
	return t ? t->d.rev : 0;
}

static int branch_name(cairn_txn *t, uint32_t id, const char **name)
{
	branch_info b;
	int rc = branch_get(t->txn, t->st, t->d.dom, id, &b);

	if (rc == CAIRN_ENOTFOUND || (!rc && b.state != BRANCH_LIVE)) { /* cleared, or being */
		*name = "(deleted)";
		return 0;
	}
	if (rc)
		return rc;
	*name = b.name;
	return 0;
}

static int revision_decode(cairn_txn *t, uint64_t rev, cairn_revision *out, rrec *r)
{
	kbuf k;
	MDB_val v;
	int rc;

	key_u64(&k, t->d.dom, rev);
	rc = db_get(t->txn, t->st, DB_REVS, k.b, k.n, &v);
	if (rc == CAIRN_ENOTFOUND)
		return err_set(CAIRN_ENOTFOUND, "revision %llu does not exist",
			       (unsigned long long)rev);
	if (rc || (rc = rrec_decode(v.mv_data, v.mv_size, r)))
		return rc;
	memset(out, 0, sizeof(*out));
	out->revision = rev;
	out->parent = r->parent;
	out->parent2 = r->parent2;
	out->type = r->type;
	out->time_ms = r->time_ms;
	out->client_time_ms = r->client_time_ms;
	out->actor = r->actor;
	out->actor_len = r->actor_len;
	out->source = r->source;
	out->source_len = r->source_len;
	out->message = r->message;
	out->message_len = r->message_len;
	out->trace_id = r->trace;
	out->trace_id_len = r->trace_len;
	out->confidence = r->confidence;
	out->changes = r->n_versions;
	memcpy(out->hash, r->hash, 32);
	memcpy(out->parent_hash, r->parent_hash, 32);
	if (r->branch == t->d.br.id) { /* most revisions a read shows are its own branch's */
		out->branch = t->d.br.name;
		return 0;
	}
	return branch_name(t, r->branch, &out->branch);
}

int cairn_revision_get(cairn_txn *t, uint64_t rev, cairn_revision *out)
{
	rrec r;

	if (!t || !out)
		return err_set(CAIRN_EINVAL, "cairn_revision_get: NULL argument");
	return revision_decode(t, rev, out, &r);
}

int revision_fill(cairn_txn *t, uint64_t rev, cairn_revision *out)
{
	rrec r;

	return revision_decode(t, rev, out, &r);
}

int cairn_log(cairn_txn *t, uint64_t before, cairn_revision *out, size_t cap, size_t *n)
{
	uint64_t rev;
	rrec r;
	int rc;

	if (!t || !out || !n)
		return err_set(CAIRN_EINVAL, "cairn_log: NULL argument");
	*n = 0;
	if (cap == 0 || cap > CAIRN_MAX_PAGE)
		return err_set(CAIRN_EINVAL, "a page holds 1 to %d revisions", CAIRN_MAX_PAGE);
	/* Walk the branch's chain from its head, through its fork, back to the first. */
	rev = branch_head(&t->d.br);
	while (rev && *n < cap) {
		if ((rc = revision_decode(t, rev, &out[*n], &r)))
			return rc;
		if (rev <= t->d.rev && (before == 0 || rev < before))
			(*n)++;
		if (r.parent >= rev)
			return err_set(CAIRN_ECORRUPT, "revision %llu has a later parent",
				       (unsigned long long)rev);
		rev = r.parent;
	}
	return 0;
}

/* The name of 0.1.0 (cairn.h, "deprecated"). */
int cairn_read_begin(cairn_store *st, const cairn_read_options *opts, cairn_txn **out)
{
	return cairn_txn_begin(st, opts, out);
}
