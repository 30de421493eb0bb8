/*
 * How far back a read may reach: the compaction horizon of a Domain (reads
 * of revisions before it are refused) and the revision that was the head at
 * a given time.
 */
#include "base/err.h"
#include "base/text.h"
#include "version/version.h"

static void key_horizon(kbuf *k, uint32_t dom)
{
	kb_init(k);
	kb_be32(k, dom);
	kb_u8(k, CAT_HORIZON);
}

int horizon_get(MDB_txn *txn, cairn_store *st, uint32_t dom, uint64_t *h)
{
	kbuf k;
	MDB_val v;
	int rc;

	*h = 0;
	key_horizon(&k, dom);
	rc = db_get(txn, st, DB_CATALOG, k.b, k.n, &v);
	if (rc == CAIRN_ENOTFOUND)
		return 0;
	if (rc)
		return rc;
	if (v.mv_size != 16)
		return err_set(CAIRN_ECORRUPT, "catalog: a horizon of %zu bytes", v.mv_size);
	*h = be64_get(v.mv_data);
	return 0;
}

int horizon_check(MDB_txn *txn, cairn_store *st, uint32_t dom, uint64_t rev, uint64_t head)
{
	uint64_t h;
	int rc = horizon_get(txn, st, dom, &h);

	if (rc || rev >= h || rev >= head)
		return rc;
	return err_set(CAIRN_ECOMPACTED,
		       "revision %llu is before the Domain's compaction horizon: time travel "
		       "reaches back to revision %llu",
		       (unsigned long long)rev, (unsigned long long)h);
}

int rev_at_time(MDB_txn *txn, cairn_store *st, uint32_t dom, int64_t ms, uint64_t last,
		uint64_t *out)
{
	uint64_t lo = 1, hi = last, best = 0;

	while (lo <= hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		kbuf k;
		MDB_val v;
		rrec r;
		int rc;

		key_u64(&k, dom, mid);
		rc = db_get(txn, st, DB_REVS, k.b, k.n, &v);
		if (rc)
			return rc == CAIRN_ENOTFOUND ? err_set(CAIRN_ECORRUPT, "revision missing")
						     : rc;
		if ((rc = rrec_decode(v.mv_data, v.mv_size, &r)))
			return rc;
		if (r.time_ms <= ms) {
			best = mid;
			lo = mid + 1;
		} else {
			hi = mid - 1;
		}
	}
	*out = best;
	return 0;
}

int horizon_put(MDB_txn *txn, cairn_store *st, uint32_t dom, uint64_t h)
{
	uint8_t v[16];
	kbuf k;

	be64_put(v, h);
	be64_put(v + 8, (uint64_t)time_now_ms());
	key_horizon(&k, dom);
	return db_put(txn, st, DB_CATALOG, k.b, k.n, v, sizeof(v), 0);
}

/* ------------------------------------------------------------- erasure -- */

int erase_list_get(MDB_txn *txn, cairn_store *st, uint32_t dom, uint64_t rev, const uint8_t **p,
		   size_t *n)
{
	kbuf k;
	MDB_val v;
	int rc;

	*p = NULL;
	*n = 0;
	kb_init(&k);
	kb_be32(&k, dom);
	kb_u8(&k, CAT_ERASED);
	kb_be64(&k, rev);
	if ((rc = db_get(txn, st, DB_CATALOG, k.b, k.n, &v)))
		return rc;
	if (v.mv_size % 8)
		return err_set(CAIRN_ECORRUPT, "catalog: an erase list of %zu bytes", v.mv_size);
	*p = v.mv_data;
	*n = v.mv_size / 8;
	return 0;
}

int erase_pending(MDB_txn *txn, cairn_store *st, uint32_t dom, uint64_t *rev)
{
	kbuf k;
	MDB_val v;
	int rc;

	*rev = 0;
	kb_init(&k);
	kb_be32(&k, dom);
	kb_u8(&k, CAT_ERASING);
	rc = db_get(txn, st, DB_CATALOG, k.b, k.n, &v);
	if (rc == CAIRN_ENOTFOUND)
		return 0;
	if (rc)
		return rc;
	if (v.mv_size < 8)
		return err_set(CAIRN_ECORRUPT, "catalog: an erase in progress of %zu bytes",
			       v.mv_size);
	*rev = be64_get(v.mv_data);
	return 0;
}
