/*
 * The storage layer: one LMDB environment per store directory, its
 * sub-databases, transactions that grow the map when it is full, and the
 * byte encodings of keys. It knows nothing of schemas or Records.
 */
#ifndef CAIRN_STORE_H
#define CAIRN_STORE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include <lmdb.h>

#include "cairn.h"
#include "base/buf.h"

/* Sub-databases; docs/storage.md gives every key and value byte by byte. */
enum db_id {
	DB_META,     /* store format, Domain id counter, catalog generation */
	DB_CATALOG,  /* Domains, branches, schemas, counters */
	DB_VERSIONS, /* (dom, vid) -> Version */
	DB_KEYS,     /* (dom, kind, key, 0, ~vid) -> rid, branch, revision, flags */
	DB_ADJ,	     /* (dom, from rid, rel, to rid, ~vid) -> branch, revision, flags, to kind, to key */
	DB_ADJR,     /* (dom, to rid, rel, from rid, ~vid) -> branch, revision, flags, from kind, from key */
	DB_ATTR,     /* (dom, kind, attribute, encoded value, vid) -> empty */
	DB_CELLS,    /* (dom, type, branch, id, ~rev) -> live-set chunk or count as of rev */
	DB_REVS,     /* (dom, rev) -> Revision */
	DB_VECTORS,  /* (dom, vid) -> float32 vector */
	DB_NAMES,    /* (dom, normalized name, 0, vid, source, attribute) -> empty */
	DB_POSTINGS, /* (dom, segment, term, 0, vid >> 16) -> container; (dom, 0, segment) -> descriptor */
	DB_LEXICON,  /* (dom, word, 0) -> empty: every word of letters indexed (typo tolerance) */
	DB_VINDEX,   /* (dom, 'M' | 'C' | 'L' list seq) -> the vector index (index/vector/vindex.h) */
	DB_KSEG,     /* (dom, segment, kind, key, 0, ~vid) -> as keys; (dom, 0, segment) -> descriptor */
	DB_COUNT
};

extern const char *const db_names[DB_COUNT];

struct model_cache;
struct maint;

struct cairn_store {
	MDB_env *env;
	MDB_dbi dbi[DB_COUNT];
	unsigned flags;		/* cairn_open_flags */
	size_t map_size;
	pthread_rwlock_t maplock; /* held shared by every transaction, exclusively to grow the map */
	pthread_mutex_t wlock;	  /* one writer at a time in this process */
	pthread_mutex_t cache_lock;
	struct model_cache *cache; /* owned by the model layer */
	void (*cache_free)(struct model_cache *);
	struct maint *maint;	/* the maintenance thread, owned by the admin layer */
	void (*wake)(cairn_store *st); /* set by the admin layer: tell it of background work */
	atomic_int importing;	/* bulk imports running: the vector index waits for them */
	char *path;
	int lock_fd;		/* lock.mdb, held with flock(LOCK_SH) while open: cairn_vacuum takes it exclusively */
	unsigned format;	/* the format on disk: STORE_FORMAT, or an older one to upgrade */
	unsigned kseg_min;	/* a commit with this many keys entries of known Records writes a segment */
	unsigned kseg_fold;	/* segments of a Domain that make the commit fold them into keys */
	uint64_t kseg_fold_entries; /* ... or entries in them */
	unsigned env_flags;	/* mdb_env_open's, kept to open it again after MDB_PANIC */
	unsigned max_readers;
	/* The last full structure check (store_check_pages), under cache_lock. */
	uint64_t pages_txnid;	/* the transaction it checked, 0: none yet */
	uint64_t pages_problems;
};

/*
 * The keys index's segments (docs/storage.md, "Keys segments"): a commit
 * with KSEG_MIN_DEFAULT keys entries or more of Records its branch already
 * had writes them as a segment of their own; the commit that brings a
 * Domain's segments to KSEG_FOLD_DEFAULT, or their entries to
 * KSEG_FOLD_ENTRIES, folds them all into keys.
 */
#define KSEG_MIN_DEFAULT 256u
#define KSEG_SEG_MAX 32768u	/* more entries share keys pages anyway (an import's batch): to keys */
#define KSEG_FOLD_DEFAULT 32u
#define KSEG_FOLD_ENTRIES 262144u
#define KSEG_MAX 64u	/* segments a reader takes: more is a corrupt store */

/* Tell the store's maintenance thread, if it has one, that there is work for it. */
static inline void store_wake(cairn_store *st)
{
	if (st->wake)
		st->wake(st);
}

/* The format this code writes; STORE_FORMAT_OLDEST is the oldest cairn_open upgrades. */
#define STORE_FORMAT 13u
#define STORE_FORMAT_OLDEST 4u

/* Mark the store as of format STORE_FORMAT (inside an upgrade's write transaction). */
int store_format_put(MDB_txn *txn, cairn_store *st);

/* Open and close the environment (cairn_open and cairn_close add the layers above). */
/*
 * The error of a write to the store's file that failed with errno-like rc:
 * a full disk (ENOSPC, EDQUOT, or EIO with next to nothing free) is
 * CAIRN_EMAPFULL saying how much is free and what to do; else store_err.
 */
int store_write_err(const cairn_store *st, int rc, const char *what);

/*
 * The data file's structure (pages.c), read with pread() and never through
 * the map: full = 0 checks what opening reads (both meta pages, the file's
 * length, the main database and the meta and catalog trees), full = 1 every
 * page of every tree and the free list. Each problem goes to cb (at most 50,
 * the rest are counted in rep->problems); the result is 0 or an error that
 * kept the check from running (out of memory, fstat failing).
 */
typedef void (*pages_problem_fn)(void *ctx, const char *problem);
typedef struct {
	uint64_t problems;	/* 0: the structure is sound */
	uint64_t pages;		/* pages reached from the trees */
	uint64_t free_pages;	/* pages on the free list (full) */
	uint64_t txnid;		/* the transaction the current meta page gives */
	uint64_t last_page;
} pages_report;
int pages_check(int fd, int full, pages_problem_fn cb, void *ctx, pages_report *rep);

/*
 * The full structure check of st's data file as of its newest transaction,
 * once per transaction (the result is kept): *problems is what it found,
 * each passed to cb when this call ran the check, or one line saying the
 * file is damaged when an earlier call did.
 */
int store_check_pages(cairn_store *st, pages_problem_fn cb, void *ctx, uint64_t *problems);

/* The address of st's map (found in /proc/self/maps), or NULL. */
uint8_t *store_map_address(cairn_store *st);

/*
 * The damage guard (guard.c, cairn_exit_on_damage): while it is on, a fault
 * in a tracked store's map ends the process with a message. Open and every
 * change of the map's size track the store, close stops; both are no-ops
 * while the guard is off. store_guard_assert is LMDB's assertion callback.
 */
void store_guard_track(cairn_store *st);
void store_guard_untrack(cairn_store *st);
void store_guard_assert(MDB_env *env, const char *msg);

int store_open(const char *path, const cairn_open_options *opts, cairn_store **out);
void store_close(cairn_store *st);

/* Map LMDB and errno errors to CAIRN_E* codes, recording a message. */
int store_err(int mdb_rc, const char *what);

int store_read_begin(cairn_store *st, MDB_txn **txn);
void store_read_end(cairn_store *st, MDB_txn *txn);
/* Begin the write transaction (waits for another writer of this process). */
int store_write_begin(cairn_store *st, MDB_txn **txn);
/* Commit (durable unless CAIRN_OPEN_NOSYNC): 0, or store_write_err's error. */
int store_write_commit(cairn_store *st, MDB_txn *txn);
void store_write_abort(cairn_store *st, MDB_txn *txn);
/* Double the map size; waits for this process's transactions to end. */
int store_grow(cairn_store *st);

/* Doublings of the map one store_write may ask for before it gives up (CAIRN_EMAPFULL). */
#define STORE_GROW_MAX 16
/* What a store_write function returns to end its transaction without writing, successfully. */
#define STORE_DISCARD 1
typedef int (*store_write_fn)(MDB_txn *txn, cairn_store *st, void *arg);
/*
 * Every write of the engine: run fn(txn, st, arg) in a write transaction
 * and commit it (durably unless CAIRN_OPEN_NOSYNC). An error of fn aborts
 * it and is returned; STORE_DISCARD aborts it and returns 0. When the map
 * is full (CAIRN_EMAPFULL from fn or from the commit), the map grows and fn
 * runs again from the start in a new transaction, so fn must begin by
 * undoing what an earlier run of it left in arg. CAIRN_EREADONLY on a
 * read-only store; CAIRN_EMAPFULL when the map cannot grow (or has grown
 * STORE_GROW_MAX times for this write).
 */
int store_write(cairn_store *st, store_write_fn fn, void *arg);

/* Thin wrappers returning CAIRN_E* codes (CAIRN_ENOTFOUND for a missing key). */
int db_get(MDB_txn *txn, cairn_store *st, int db, const void *k, size_t kn, MDB_val *v);
int db_put(MDB_txn *txn, cairn_store *st, int db, const void *k, size_t kn, const void *v,
	   size_t vn, unsigned flags);
int db_del(MDB_txn *txn, cairn_store *st, int db, const void *k, size_t kn);
/* Delete every key starting with prefix; *count gets the number deleted (may be NULL). */
int db_del_prefix(MDB_txn *txn, cairn_store *st, int db, const void *prefix, size_t n,
		  uint64_t *count);

/* Store-level counters in DB_META. */
int meta_get_u64(MDB_txn *txn, cairn_store *st, const char *name, uint64_t *v);
int meta_put_u64(MDB_txn *txn, cairn_store *st, const char *name, uint64_t v);

/* A key being built: at most LMDB's 511-byte limit. */
typedef struct kbuf {
	uint8_t b[511];
	size_t n;
	int over; /* set when the key would not fit */
} kbuf;

static inline void kb_init(kbuf *k)
{
	k->n = 0;
	k->over = 0;
}

static inline void kb_u8(kbuf *k, uint8_t v)
{
	if (k->n + 1 > sizeof(k->b)) {
		k->over = 1;
		return;
	}
	k->b[k->n++] = v;
}

static inline void kb_be32(kbuf *k, uint32_t v)
{
	if (k->n + 4 > sizeof(k->b)) {
		k->over = 1;
		return;
	}
	be32_put(k->b + k->n, v);
	k->n += 4;
}

static inline void kb_be64(kbuf *k, uint64_t v)
{
	if (k->n + 8 > sizeof(k->b)) {
		k->over = 1;
		return;
	}
	be64_put(k->b + k->n, v);
	k->n += 8;
}

static inline void kb_bytes(kbuf *k, const void *p, size_t n)
{
	if (n > sizeof(k->b) - k->n) {
		k->over = 1;
		return;
	}
	memcpy(k->b + k->n, p, n);
	k->n += n;
}

#endif
