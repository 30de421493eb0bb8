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
 *  10 -> 11: nothing to build: revisions of format 2, erased Versions.
 *  11 -> 12: nothing to build: proposals of format 2 (a schema document).
 *  12 -> 13: nothing to build: Versions of format 3 (a checksum). An older
 *           version, which would not read them, refuses the store.
 */
#include <string.h>

#include "base/json.h"
#include "base/err.h"
#include "admin/admin.h"
#include "version/index.h"
#include "version/version.h"

/*
 * The secondary indexes an older store lacks or holds in an older form,
 * rebuilt for Domain `domain`: each index as of the format it gives.
 */
static int indexes_of_domain(cairn_store *st, MDB_txn *txn, const char *domain)
{
	dctx d;
	int rc;

	if ((rc = dctx_open(&d, st, txn, domain, NULL)))
		return rc;
	for (const index_ops *const *ix = index_registry; *ix && !rc; ix++)
		if ((*ix)->format > st->format && (*ix)->rebuild)
			rc = (*ix)->rebuild(&d, d.s);
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
		rc = indexes_of_domain(st, txn, name);
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
