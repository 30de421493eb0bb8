/* Read transactions: a snapshot of one branch of one Domain, and the reads on it. */
#ifndef CAIRN_QUERY_READ_H
#define CAIRN_QUERY_READ_H

#include "util/arena.h"
#include "version/version.h"

struct cairn_txn {
	cairn_store *st;
	MDB_txn *txn;
	dctx d;
	uint64_t at;	/* the revision read as of, or 0 at the branch head */
	arena mem;	/* results the transaction builds (diffs), freed when it ends */
};

/* Fill a cairn_revision from revision rev (pointers into the map). */
int revision_fill(cairn_txn *t, uint64_t rev, cairn_revision *out);

#endif
