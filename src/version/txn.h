/* Read transactions (txn.c): the handle every read of the engine takes. */
#ifndef CAIRN_VERSION_TXN_H
#define CAIRN_VERSION_TXN_H

#include "base/arena.h"
#include "version/version.h"

struct cairn_txn {
	cairn_store *st;
	MDB_txn *txn;
	dctx d;
	int past;	/* reads as of a revision or time (d.rev), not at the branch head */
	arena mem;	/* results the transaction builds (diffs), freed when it ends */
	arena scratch;	/* what one call needs only while it runs (a query's parsed values) */
	uint32_t vdim;	/* the Domain's vector dimension, once vdim_read */
	int vdim_read;
};

/* Fill a cairn_revision from revision rev (pointers into the map). */
int revision_fill(cairn_txn *t, uint64_t rev, cairn_revision *out);

#endif
