/*
 * Upgrades of the store format, run by cairn_open when it finds an older
 * store opened read-write: each in one write transaction, so that a store
 * is either upgraded whole or left as it was.
 *
 *   4 -> 5: the names index (DB_NAMES) for resolution, built from every
 *           Record Version of every Domain.
 *   5 -> 6: the full-text index (DB_POSTINGS), built the same way.
 *   6 -> 7: the full-text index again: words carry their positions (for
 *           phrases), and block skips are 4 bytes.
 *   7 -> 8: the vector index's sub-database (DB_VINDEX), created empty: the
 *           background builds each Domain's index from its vectors.
 *   8 -> 9: nothing to build. A store of format 9 may hold a compaction
 *           horizon (catalog dom 'K'), below which index entries are gone;
 *           an older version, which would read there, refuses the store.
 *   9 -> 10: nothing to build: the keys index's segments (DB_KSEG), created
 *           empty when the store is opened. An older version, which would
 *           not read them, refuses the store.
 */
#include <string.h>

#include "base/json.h"
#include "base/err.h"
#include "index/text/text.h"
#include "admin/admin.h"
#include "index/names/names.h"
#include "version/version.h"

/* The names entries of every Record Version of one Domain. */
static int names_of_domain(cairn_store *st, MDB_txn *txn, const char *domain)
{
	MDB_cursor *cur;
	MDB_val k, v;
	dctx d;
	uint8_t p[4];
	int mrc, rc;

	if ((rc = dctx_open(&d, st, txn, domain, NULL)))
		return rc;
	be32_put(p, d.dom);
	if ((mrc = mdb_cursor_open(txn, st->dbi[DB_VERSIONS], &cur))) {
		dctx_close(&d);
		return store_err(mrc, "versions");
	}
	k.mv_data = p;
	k.mv_size = 4;
	rc = 0;
	for (mrc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); mrc == 0 && !rc;
	     mrc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		const kind_def *kd;
		arena tmp = ARENA_INIT;
		const jv *vals, *pvals = NULL;
		vrec ver, pv;
		int has_prev = 0;

		if (k.mv_size != 12 || memcmp(k.mv_data, p, 4) != 0)
			break;
		if (vrec_decode(v.mv_data, v.mv_size, &ver)) {
			rc = err_set(CAIRN_ECORRUPT, "a Version does not decode");
			break;
		}
		if (ver.type != V_REC || !(kd = schema_kind_id(d.s, ver.kr)))
			continue;
		/* As a commit writes them: the names its predecessor lacked. */
		if (ver.prev && (rc = version_get(&d, ver.prev, &pv)) == 0 && pv.type == V_REC) {
			has_prev = 1;
			pvals = jv_parse(&tmp, pv.values, pv.values_len, "stored values");
		} else if (rc && rc != CAIRN_ENOTFOUND) {
			break;
		}
		rc = 0;
		vals = jv_parse(&tmp, ver.values, ver.values_len, "stored values");
		rc = vals && (!has_prev || pvals)
			     ? names_entries_put(&d, kd, &ver, vals, be64_get((uint8_t *)k.mv_data + 4),
						 has_prev ? &pv : NULL, pvals, 0)
			     : err_set(CAIRN_ECORRUPT, "stored values do not parse");
		arena_release(&tmp);
	}
	mdb_cursor_close(cur);
	dctx_close(&d);
	if (!rc && mrc && mrc != MDB_NOTFOUND)
		rc = store_err(mrc, "versions");
	return rc;
}

/* The full-text index of one Domain. */
static int text_of_domain(cairn_store *st, MDB_txn *txn, const char *domain)
{
	dctx d;
	int rc;

	if ((rc = dctx_open(&d, st, txn, domain, NULL)))
		return rc;
	rc = text_rebuild(&d, d.s);
	dctx_close(&d);
	return rc;
}

static int upgrade_txn(cairn_store *st, MDB_txn *txn)
{
	MDB_cursor *cur;
	MDB_val k, v;
	uint8_t p[5] = {0, 0, 0, 0, 'N'};
	char name[CAIRN_MAX_NAME + 1];
	int mrc, rc = 0;

	if ((mrc = mdb_cursor_open(txn, st->dbi[DB_CATALOG], &cur)))
		return store_err(mrc, "catalog");
	k.mv_data = p;
	k.mv_size = 5;
	for (mrc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); mrc == 0 && !rc;
	     mrc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		if (k.mv_size <= 5 || k.mv_size > 5 + CAIRN_MAX_NAME || memcmp(k.mv_data, p, 5) != 0)
			break;
		memcpy(name, (uint8_t *)k.mv_data + 5, k.mv_size - 5);
		name[k.mv_size - 5] = '\0';
		if (st->format < 5)
			rc = names_of_domain(st, txn, name);
		if (!rc && st->format < 7)
			rc = text_of_domain(st, txn, name);
	}
	mdb_cursor_close(cur);
	if (!rc && mrc && mrc != MDB_NOTFOUND)
		rc = store_err(mrc, "catalog");
	return rc ? rc : store_format_put(txn, st);
}

static int upgrade_once(MDB_txn *txn, cairn_store *st, void *arg)
{
	(void)arg;
	return upgrade_txn(st, txn);
}

int store_upgrade(cairn_store *st)
{
	return store_write(st, upgrade_once, NULL);
}
