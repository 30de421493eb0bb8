/*
 * The interface of the secondary indexes: what the version layer calls on
 * every index without naming one (as PostgreSQL calls an index through its
 * access-method table). Each index (src/index/<name>/) fills an index_ops;
 * src/index/registry.c lists them, so adding an index is a folder and one
 * line there (docs/architecture.md, "Adding an index").
 *
 * The keys index and the attribute index are not here: they decide which
 * Version a read sees and answer the commit's constraints (unique values,
 * references), so they are the version layer's own.
 */
#ifndef CAIRN_VERSION_INDEX_H
#define CAIRN_VERSION_INDEX_H

#include "store/wlist.h"
#include "version/version.h"

/* A Record Version a commit writes, as an index sees it. */
typedef struct index_rec {
	const kind_def *k;	 /* its Kind, in the commit's schema */
	const vrec *v;		 /* the Version, decoded (key, title, values bytes) */
	uint64_t vid;
	const jv *values;	 /* its values, parsed (NULL: none) */
	const jv *prev_values;	 /* the values of the Version it replaces; NULL: a new Record */
	int renamed;		 /* its title differs from the replaced Version's */
} index_rec;

/* One index's part of one commit. */
typedef struct index_commit {
	dctx *d;		 /* the commit's Domain, branch and schema; d->txn its transaction */
	wlist *wl;		 /* the commit's sorted writes, flushed before finish */
	size_t n_recs;		 /* Record Versions the commit writes */
	int async;		 /* put and prepare run on a thread of their own */
	void *state;		 /* the index's own, from begin to release */
} index_commit;

/* What cairn check (admin/check.c) gives an index to verify its entries with. */
typedef struct index_check {
	dctx *d;		 /* main's view of the Domain, in a read transaction */
	uint32_t vdim;		 /* the Domain's vector dimension */
	uint64_t *entries;	 /* entries looked at: one more for each */
	/* Report one problem (a sentence naming the entry). */
	void (*problem)(struct index_check *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
	/* Version vid decoded: 0; 1 after reporting it missing or undecodable (what: the entry); an error. */
	int (*version)(struct index_check *k, uint64_t vid, vrec *v, const char *what);
	/* 1 if the branch is deleted: its Versions may be gone before its entries. */
	int (*branch_gone)(struct index_check *k, uint32_t branch);
	void *ctx;		 /* the checker's own */
} index_check;

/*
 * One bounded step of an index's own pass of a compaction
 * (admin/compact.c), in the step's write transaction.
 */
typedef struct index_compact {
	MDB_txn *txn;
	cairn_store *st;
	uint32_t dom;
	const uint8_t *dead;	 /* a bit per vid: the Versions no read can see any more */
	uint64_t nbits;
	int dry;		 /* count only: the transaction is thrown away */
	uint64_t budget;	 /* entries a step may look at */
	uint8_t *resume;	 /* where the next step starts: 64 bytes, kept between steps */
	size_t *resume_n;	 /* 0 when the pass begins */
	void **state;		 /* the index's own across the pass's steps (freed by compact_release) */
	cairn_compact_result *res; /* what is removed is counted here */
	int *done;		 /* set when nothing is left */
	int *discard;		 /* set to throw the step's writes away (its counts go with them) */
} index_compact;

typedef struct index_ops {
	const char *name;
	/*
	 * A commit, in this order, each optional: begin (the writer's thread,
	 * before any put; may read d->txn), put for every Record Version in vid
	 * order, prepare after the last put, finish (the writer's thread, after
	 * the commit's sorted writes; writes d->txn), release (always, also
	 * after an error or without begin). put adds to wl or to its state.
	 * With async_min > 0 and a commit of that many Record Versions, async
	 * is set before begin, and put and prepare run on a thread of their own
	 * while the commit writes the rest: they may then touch neither d->txn
	 * nor wl.
	 */
	size_t async_min;
	int (*begin)(index_commit *ic);
	int (*put)(index_commit *ic, const index_rec *r);
	int (*prepare)(index_commit *ic);
	int (*finish)(index_commit *ic);
	void (*release)(index_commit *ic);
	/*
	 * A schema change (schema_check.c), on every live branch: for a delta
	 * item of type delta_record (0: none) about attribute a of Kind k,
	 * add_record for each Record that has a value for a; for any item of
	 * type delta_all (0: none), rebuild once, after every branch.
	 */
	int delta_record;
	int (*add_record)(dctx *d, const kind_def *k, const vrec *v, const jv *values,
			  uint64_t vid);
	int delta_all;
	int (*rebuild)(dctx *d, const schema *s);
	/*
	 * The store format from which the index is as this code writes it: the
	 * upgrade of an older store (admin/upgrade.c) rebuilds it in every
	 * Domain (0, or no rebuild: nothing to build; the background builds it).
	 */
	unsigned format;
	/* cairn check: every entry of the Domain against the Version it names; problems reported. */
	int (*check)(index_check *k);
	/*
	 * Compaction: drop, the entries of Record Version v (values, vid) no
	 * read can see, but those its successor succ (values succ_values; may
	 * be NULL) relies on; compact, one step of the index's own pass, and
	 * compact_release when the compaction ends.
	 */
	int (*drop)(dctx *d, const kind_def *k, const vrec *v, const jv *values, uint64_t vid,
		    const vrec *succ, const jv *succ_values);
	int (*compact)(index_compact *k);
	void (*compact_release)(void *state);
	/*
	 * Erasure (admin/erase.c), after the index's compaction pass has run
	 * with the erased Versions as its dead ones, and before Record Version
	 * v (values, vid) becomes a stub: what the index keeps of v beyond the
	 * entries that name it (full text: the lexicon's words of v that no
	 * posting has any more). *removed counts what went.
	 */
	int (*forget)(dctx *d, const kind_def *k, const vrec *v, const jv *values, uint64_t vid,
		      uint64_t *removed);
	/* The admin layer's upkeep, each optional. A deleted branch's entries, once it is cleared. */
	int (*drop_branch)(MDB_txn *txn, cairn_store *st, uint32_t dom, uint32_t branch);
	/* One bounded step of background work in Domain dom (dry: only look); *found if any. */
	int (*maintain)(MDB_txn *txn, cairn_store *st, uint32_t dom, int dry, int *found);
	/* Work in transactions of its own, with nothing else pending, until done or *stop. */
	int (*catch_up)(cairn_store *st, const volatile int *stop);
} index_ops;

/* Every index, NULL-terminated (src/index/registry.c). */
extern const index_ops *const index_registry[];

#endif
