/*
 * The admin layer's own interface: what its files share. The admin layer is
 * the top of the library (docs/architecture.md): opening and closing, the
 * maintenance thread, compaction, check, upgrade, import and tokens; it
 * alone may call every engine folder.
 */
#ifndef CAIRN_ADMIN_H
#define CAIRN_ADMIN_H

#include "version/version.h"

/*
 * Start the maintenance thread of a writable store (retain_ms > 0: compact
 * to that retention hourly) and make it the store's wake hook. CAIRN_ENOMEM.
 */
int maint_start(cairn_store *st, int64_t retain_ms);
/* Passes of compaction (with a retention) the thread has finished since the open; 0 without it. */
uint64_t maint_compactions(cairn_store *st);
/*
 * For tests: wait until the maintenance thread is idle, every wake-up so
 * far answered by a pass that began after it, and has finished at least
 * `compactions` passes of compaction since the open. 0, CAIRN_EINVAL for a
 * store without the thread, CAIRN_ELIMIT if timeout_ms (a guard against a
 * hang, not a measure of speed) ran out first.
 */
int maint_wait(cairn_store *st, uint64_t compactions, int64_t timeout_ms);
/* Stop and free the maintenance thread, waiting for its current step; no-op without one. */
void maint_stop(cairn_store *st);
/* Bring an older store (st->format) to STORE_FORMAT (upgrade.c). */
int store_upgrade(cairn_store *st);
/*
 * Delete the index entries of Version vid (ver decoded): a Record's
 * attribute, names and vector entries, a Link's adjacency entries both
 * ways (not its keys entry, postings or vector-index entries). A names
 * or attribute entry names the Version that brought the name or value to
 * its Record (docs/storage.md): with succ, the Record Version that replaced
 * it on its branch, those of the names and values succ also has stay. res
 * (may be NULL) counts what was removed.
 */
int version_entries_drop(MDB_txn *txn, cairn_store *st, const schema *s, uint32_t dom,
			 uint64_t vid, const vrec *ver, const vrec *succ, cairn_compact_result *res);

/*
 * For tests: called after each durable step transaction of an erasure
 * (admin/erase.c) with its phase (1 index passes, 2 forgetting, 3 stubs, 4
 * index passes again) and the step's number from 1. NULL: none.
 */
extern void (*erase_step_hook)(void *ctx, int phase, long step);
extern void *erase_step_ctx;

#endif
