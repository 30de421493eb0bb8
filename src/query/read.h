/* Read transactions: a snapshot of one branch of one Domain, and the reads on it. */
#ifndef CAIRN_QUERY_READ_H
#define CAIRN_QUERY_READ_H

#include "base/arena.h"
#include "version/txn.h"

/*
 * The dimension a Version's vector has now, given the one it was written
 * with (0: it has none): the Domain's, which a re-embedding may change.
 */
uint32_t txn_vector_dim(cairn_txn *t, uint32_t written);


/*
 * The Versions (vids, *out malloc'd) of the Records of kind that satisfy
 * where, when an index answers a conjunct of it with at most cap entries,
 * or answers the whole filter (one equality or in on a string, enum or ref)
 * with at most cap_direct live ones, read without their Versions (an enum
 * value expected to hold more than cap_few of them and 1 in 16 of the Kind
 * is not walked); otherwise *out is NULL and *n 0 (the filter is not that
 * selective, or no index answers it). Errors as cairn_query's.
 */
int query_vids_small(cairn_txn *t, const char *kind, const char *where, size_t where_len,
		     uint64_t cap, uint64_t cap_few, uint64_t cap_direct, uint64_t **out,
		     size_t *n);

/* A filter of the query language (filter/) over one Kind, on its own. */
typedef struct qfilter qfilter;
/* Parse where[0..len-1] for Kind kind into a (CAIRN_EQUERY naming the mistake). */
int qfilter_parse(cairn_txn *t, arena *a, const char *kind, const char *where, size_t len,
		  const qfilter **out);
/* Do these stored values satisfy f? (a: scratch, given back) */
int qfilter_match(const qfilter *f, arena *a, const char *values, size_t len, int *match);

/*
 * Check x (NULL: nothing to check) for a search of fn over the Kinds
 * kinds[0..n_kinds-1] (none: every Kind): CAIRN_EINVAL saying what is wrong.
 */
int exclude_check(cairn_txn *t, const cairn_exclude *x, const uint32_t *kinds, size_t n_kinds,
		  const char *fn);
/* Do these stored values leave their Record out by x? (a: scratch, given back) */
int exclude_match(const cairn_exclude *x, arena *a, const char *values, size_t len, int *out);

/*
 * Fill a cairn_record from Version vid, a Record of Kind k (NULL: its own);
 * its vrec too when vout is not NULL. CAIRN_ECORRUPT when it is not one.
 */
int record_fill(cairn_txn *t, const kind_def *k, uint64_t vid, cairn_record *out, vrec *vout);


#endif
