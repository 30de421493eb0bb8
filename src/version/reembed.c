/*
 * Re-embedding a Domain in place (cairn_reembed): every Version's vector
 * from the new model, the Domain's model switched and its vector index
 * dropped, in one revision of type "vectors".
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

/* ---------------------------------------------------------- re-embed -- */

/* Catalog (dom 'E' rev) -> be32 dim, model id: one per re-embedding. */
static void key_reembed(kbuf *k, uint32_t dom, uint64_t rev)
{
	kb_init(k);
	kb_be32(k, dom);
	kb_u8(k, CAT_REEMBED);
	kb_be64(k, rev);
}

int vec_reembed_get(MDB_txn *txn, cairn_store *st, uint32_t dom, uint64_t rev, uint32_t *dim,
		    char model[VEC_MODEL_MAX + 1])
{
	kbuf k;
	MDB_val v;
	int rc;

	key_reembed(&k, dom, rev);
	if ((rc = db_get(txn, st, DB_CATALOG, k.b, k.n, &v)))
		return rc;
	return vec_model_decode(&v, dim, model);
}

int vec_generation(MDB_txn *txn, cairn_store *st, uint32_t dom, uint64_t *rev)
{
	MDB_cursor *cur;
	MDB_val k, v;
	kbuf p;
	int mrc;

	*rev = 0;
	key_reembed(&p, dom, UINT64_MAX);
	if ((mrc = mdb_cursor_open(txn, st->dbi[DB_CATALOG], &cur)))
		return store_err(mrc, "catalog");
	k.mv_data = p.b;
	k.mv_size = p.n;
	/* The key before (dom 'E' UINT64_MAX), if it is one of the Domain's re-embeddings. */
	mrc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
	if (mrc == 0 || mrc == MDB_NOTFOUND)
		mrc = mdb_cursor_get(cur, &k, &v, mrc ? MDB_LAST : MDB_PREV);
	if (mrc == 0 && k.mv_size == p.n && memcmp(k.mv_data, p.b, 5) == 0)
		*rev = be64_get((const uint8_t *)k.mv_data + 5);
	mdb_cursor_close(cur);
	return mrc && mrc != MDB_NOTFOUND ? store_err(mrc, "catalog") : 0;
}

/* Every vector of the Domain anew, by the embedder, in txn. */
static int reembed_vectors(cctx *c, const cairn_embedder *e, cairn_reembed_result *out)
{
	size_t dim = cairn_embedder_dim(e), n = 0, cap = 0;
	float *vec = cr_malloc(dim * sizeof(float));
	uint64_t *vids = NULL;
	MDB_cursor *cur = NULL;
	MDB_val k, v;
	kbuf p, vk;
	int mrc, rc = 0;

	if (!vec)
		return err_set(CAIRN_ENOMEM, "out of memory");
	/*
	 * The vectors there are (a compaction removed those no read can see),
	 * listed first: the puts below move the pages a cursor walks.
	 */
	if ((mrc = mdb_cursor_open(c->d.txn, c->d.st->dbi[DB_VECTORS], &cur))) {
		cr_free(vec);
		return store_err(mrc, "vectors");
	}
	kb_init(&p);
	kb_be32(&p, c->d.dom);
	k.mv_data = p.b;
	k.mv_size = p.n;
	for (mrc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); mrc == 0 && !rc;
	     mrc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		if (k.mv_size != 12 || memcmp(k.mv_data, p.b, 4) != 0)
			break;
		if (n == cap) {
			uint64_t *nv = cr_reallocarray(vids, cap ? cap * 2 : 1024, sizeof(*nv));

			if (!nv) {
				rc = err_set(CAIRN_ENOMEM, "out of memory");
				break;
			}
			vids = nv;
			cap = cap ? cap * 2 : 1024;
		}
		vids[n++] = be64_get((const uint8_t *)k.mv_data + 4);
	}
	mdb_cursor_close(cur);
	if (!rc && mrc && mrc != MDB_NOTFOUND)
		rc = store_err(mrc, "vectors");
	for (size_t i = 0; i < n && !rc; i++) {
		vrec ver;
		size_t words = 0;

		if ((rc = version_get(&c->d, vids[i], &ver)))
			break;
		if (ver.type != V_REC || !ver.dim)
			continue;
		if ((rc = cairn_embed(e, ver.title, ver.title_len, vec, dim, &words)))
			break;
		key_u64(&vk, c->d.dom, vids[i]);
		rc = db_put(c->d.txn, c->d.st, DB_VECTORS, vk.b, vk.n, vec, dim * sizeof(float), 0);
		out->vectors++;
		out->empty += words == 0;
	}
	cr_free(vids);
	cr_free(vec);
	return rc;
}

/* One run of a re-embedding, as store_write runs it. */
struct reembed_once {
	const cairn_commit_options *o;
	cairn_reembed_result *out;
};

static int reembed_once(MDB_txn *txn, cairn_store *st, void *arg)
{
	struct reembed_once *a = arg;
	const cairn_commit_options *o = a->o;
	cairn_reembed_result *out = a->out;
	const cairn_embedder *e = o->embedder;
	const char *id = cairn_embedder_model(e);
	uint32_t dim = (uint32_t)cairn_embedder_dim(e), old_dim;
	char old[VEC_MODEL_MAX + 1];
	uint8_t b[4 + VEC_MODEL_MAX], digest[32];
	size_t idn = strlen(id);
	sha256_ctx h;
	kbuf k;
	cctx c;
	int rc, created;

	memset(out, 0, sizeof(*out));
	memset(&c, 0, sizeof(c));
	if ((rc = dctx_open_write(&c.d, st, txn, o, &created)))
		goto out;
	if (o->has_expect && branch_head(&c.d.br) != o->expect_revision) {
		rc = err_set(CAIRN_ECONFLICT, "branch %s is at revision %llu, not the expected %llu",
			     c.d.br.name, (unsigned long long)branch_head(&c.d.br),
			     (unsigned long long)o->expect_revision);
		goto out;
	}
	if ((rc = counters_get(txn, st, c.d.dom, &c.ctr)) ||
	    (rc = vec_model_get(txn, st, c.d.dom, &old_dim, old)))
		goto out;
	if (!old_dim) {
		rc = err_set(CAIRN_EINVAL, "the Domain has no vectors to re-embed");
		goto out;
	}
	c.rev = c.ctr.next_rev;
	if ((rc = reembed_vectors(&c, e, out)))
		goto out;
	/* The old index is of the old vectors: gone, and built again in the background. */
	kb_init(&k);
	kb_be32(&k, c.d.dom);
	if ((rc = db_del_prefix(txn, st, DB_VINDEX, k.b, k.n, NULL)))
		goto out;
	be32_put(b, dim);
	memcpy(b + 4, id, idn);
	kb_u8(&k, CAT_VMODEL);
	if ((rc = db_put(txn, st, DB_CATALOG, k.b, k.n, b, 4 + idn, 0)))
		goto out;
	key_reembed(&k, c.d.dom, c.rev);
	if ((rc = db_put(txn, st, DB_CATALOG, k.b, k.n, b, 4 + idn, MDB_NOOVERWRITE)))
		goto out;
	if (sha256_init(&h)) {
		rc = err_set(CAIRN_ENOMEM, "out of memory");
		goto out;
	}
	sha256_update(&h, b, 4 + idn);
	sha256_final(&h, digest);
	rc = commit_write_revision(&c, CAIRN_REV_VECTORS, &o->prov, digest, c.ctr.next_vid, 0,
			    &out->commit);
out:
	commit_cctx_release(&c);
	return rc;
}

int cairn_reembed(cairn_store *st, const cairn_commit_options *opts, cairn_reembed_result *out)
{
	cairn_reembed_result tmp;
	struct reembed_once a;
	int rc;

	if (!st || !opts)
		return err_set(CAIRN_EINVAL, "cairn_reembed: NULL argument");
	if (!opts->domain)
		return commit_options_check(opts, "cairn_reembed", NULL);
	if (!opts->embedder)
		return err_set(CAIRN_EINVAL, "cairn_reembed: no embedder (the new model)");
	if (strlen(cairn_embedder_model(opts->embedder)) > VEC_MODEL_MAX)
		return err_set(CAIRN_EINVAL, "the model id is longer than %d bytes", VEC_MODEL_MAX);
	if ((rc = commit_options_check(opts, "cairn_reembed",
				       "the vectors belong to the Domain, not to a branch: re-embed "
				       "on main (every branch's vectors are re-embedded)")))
		return rc;
	a = (struct reembed_once){opts, out ? out : &tmp};
	/* The index of the old vectors is gone: built again in the background. */
	if (!(rc = store_write(st, reembed_once, &a)))
		store_wake(st);
	return rc;
}
