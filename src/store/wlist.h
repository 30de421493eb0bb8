/*
 * A write list: the puts of one commit, collected, then written sorted by
 * sub-database and key through one cursor per sub-database. Sorted puts keep
 * LMDB on the leaf page it is already on instead of descending from the root
 * for each key, and a run whose first key is beyond the sub-database's last
 * key is appended (MDB_APPEND), which also fills pages instead of halving them.
 */
#ifndef CAIRN_STORE_WLIST_H
#define CAIRN_STORE_WLIST_H

#include "store/store.h"
#include "base/arena.h"

typedef struct wl_entry {
	const uint8_t *k, *v;
	uint32_t vlen;
	uint16_t klen;
	uint8_t db;
} wl_entry;

typedef struct wlist {
	wl_entry *e;
	size_t n, cap;
	arena mem;
} wlist;

/* Queue a put (key and value are copied). Returns 0 or CAIRN_ENOMEM. */
int wl_add(wlist *w, int db, const void *k, size_t kn, const void *v, size_t vn);
/* Sort the queue by sub-database, then key (wl_flush does). */
int wl_sort(wlist *w);
/* Write everything queued, then empty the list. */
int wl_flush(wlist *w, MDB_txn *txn, cairn_store *st);
void wl_release(wlist *w);

#endif
