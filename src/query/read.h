/* Read transactions: a snapshot of one branch of one Domain, and the reads on it. */
#ifndef CAIRN_QUERY_READ_H
#define CAIRN_QUERY_READ_H

#include "version/version.h"

struct cairn_txn {
	cairn_store *st;
	MDB_txn *txn;
	dctx d;
};

#endif
