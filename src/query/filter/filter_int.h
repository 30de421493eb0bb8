/*
 * The query language's private header: what parse.c (the filter), plan.c
 * (intervals, index entries, the planner) and execute.c (records, walks,
 * cursors, the API, counts) share.
 *
 * Attribute queries: a JSON filter over the Records of a Kind, sorted by key
 * or by an attribute (key as the tie-break), paged by a cursor, on any
 * branch at any revision (docs/query.md).
 *
 * The filter is parsed into a tree of conditions. The planner looks at the
 * conjuncts of the top level that an index can answer (equality, in,
 * ranges, prefix, exists, contains on an indexed attribute) and picks one
 * of four ways:
 *
 *   ordered:  walk the index in the order of the answer and check each
 *             Record (an equality or a short `in` on any indexed attribute
 *             when sorting by key: its entries are in key order per value;
 *             the sort attribute's own conditions when sorting by it);
 *   collect:  walk a selective index, keep what matches, sort, page;
 *   keyscan:  walk the Kind in key order and check each Record (scanned);
 *   scansort: walk the Kind, keep what matches, sort by the attribute
 *             (scanned).
 *
 * An index entry counts when its vid is in the live set of the view; every
 * candidate is checked against the whole filter on its Version, so index
 * ranges only need to cover the answer (string prefixes, arrays).
 */
#ifndef CAIRN_QUERY_FILTER_INT_H
#define CAIRN_QUERY_FILTER_INT_H

#include <string.h>

#include "base/json.h"
#include "query/read.h"

enum { Q_AND = 1, Q_OR, Q_NOT, Q_LEAF };
enum { C_EQ = 1, C_NE, C_GT, C_GTE, C_LT, C_LTE, C_IN, C_PREFIX, C_EXISTS, C_CONTAINS };

/* The operators' names, by C_* (parse.c). */
extern const char *const qf_op_names[];

typedef struct qnode {
	int op;			/* Q_* */
	int cmp;		/* leaf: C_* */
	const attr_def *a;	/* leaf */
	const jv *val;		/* leaf: the operand (an array for in) */
	struct qnode *kids;	/* and, or: n; not: 1 */
	size_t n;
} qnode;

/* An interval of encoded values of one attribute: [lo, hi], each bound open or closed or absent. */
typedef struct ival {
	const uint8_t *lo, *hi;
	size_t lo_len, hi_len;
	int lo_open, hi_open;	/* exclude the bound itself */
	int prefix;		/* lo is a prefix every value in the interval starts with (hi unused) */
} ival;

#define NEED_MAX 16

typedef struct qctx {
	cairn_txn *t;
	const kind_def *k;
	arena *mem;		/* scratch of this call (the transaction's, reset per call) */
	arena *out;		/* what outlives the call: cursors, projections, plans */
	qnode *root;
	/* the attributes a Record's values are read for (filter, sort, fields) */
	const char *need[NEED_MAX];
	size_t need_len[NEED_MAX], n_need;
	int need_all;
	const attr_def *sort;	/* NULL: by key */
	int desc;
	/* the cursor: the position after which the page starts */
	int has_after;
	int after_has_value;
	const jv *after_value;
	const char *after_key;
	size_t after_key_len;
	/* counts */
	uint64_t entries, candidates, matched;
	int scanned;
	int resort;		/* an ordered walk met values longer than the index keeps */
	buf plan;
} qctx;

/* One walk over an attribute's entries through a list of intervals, in index order. */
typedef struct estream {
	qctx *c;
	const attr_def *a;
	const ival *iv;
	size_t n_iv, cur_iv;
	kbuf prefix;
	MDB_cursor *cur;
	int started, done;
	attr_entry e;		/* the current entry */
	/* The last run of entries of one value and Record that was decided (qf_es_vid). */
	uint8_t run[ATTR_STRING_CAP * 2 + 16 + CAIRN_MAX_KEY];
	size_t run_len;
	vrec ver;		/* the Version qf_es_vid read to decide, if it read one */
	int have_ver;
} estream;

typedef struct hit {
	cairn_record r;
	const jv *values;
	const jv *sortv;	/* the sort attribute's value (NULL: none) */
} hit;

typedef struct hits {
	hit *v;
	size_t n, cap;
} hits;

typedef struct page_out {
	hits *h;
	size_t want;		/* stop once this many are kept (0: keep all) */
	int missing_only;	/* keep only Records without the sort attribute */
} page_out;

typedef struct cand {
	const qnode *q;
	const qnode *q2;	/* a second range on the same attribute, merged into iv */
	ival *iv;
	size_t n_iv;
	uint64_t est;
	int cut;	/* an operand longer than the index keeps: its entries are not in order */
} cand;

/* Are a's values (or its elements) strings? */
static inline int qf_string_like(const attr_def *a)
{
	return a->type == AT_STRING || a->type == AT_ENUM || a->type == AT_REF ||
	       a->type == AT_STRINGS;
}

/* Compare two byte strings: memcmp, then the shorter first. */
static inline int qf_bytes_cmp(const uint8_t *x, size_t xn, const uint8_t *y, size_t yn)
{
	int r = memcmp(x, y, xn < yn ? xn : yn);

	return r ? r : (xn > yn) - (xn < yn);
}

/* Close the walk's cursor (a closed walk: nothing). */
static inline void qf_es_close(estream *s)
{
	if (s->cur)
		mdb_cursor_close(s->cur);
	s->cur = NULL;
}

/* parse.c */
/* Compare two values of attribute a (both of its element type): <0, 0, >0. */
int qf_vcmp(const attr_def *a, const jv *x, const jv *y);
/* Does the Record with these values satisfy q? */
int qf_eval(const qnode *q, const jv *values);
/* Parse filter f (at path, for its errors: CAIRN_EQUERY) of c's Kind into out, in c->mem. */
int qf_parse_node(qctx *c, const jv *f, const char *path, qnode *out);

/* plan.c */
/* The encoded form of a value of a, in c->mem. */
int qf_enc(qctx *c, const attr_def *a, const jv *v, const uint8_t **out, size_t *len);
/* Open a walk of a's entries through the intervals iv[0..n_iv-1] (none: every entry). */
int qf_es_open(estream *s, qctx *c, const attr_def *a, const ival *iv, size_t n_iv);
/* Start the walk (at a value and past a key, or at the first interval). */
int qf_es_start(estream *s, const uint8_t *v, size_t vn, const char *key, size_t key_len);
/* The Version the current entry stands for; 0 for none, or when its run was decided. */
int qf_es_vid(estream *s, uint64_t *vid);
/* The next entry in the intervals (s->done past the last). */
int qf_es_next(estream *s);
/* Entries of the intervals, counted up to cap: how selective a conjunct is. */
int qf_estimate(qctx *c, const attr_def *a, const ival *iv, size_t n_iv, uint64_t cap,
		uint64_t *n);
/* The top-level conjuncts (64 at most): the root's children if it is an and, else the root. */
void qf_conjuncts(const qnode *root, const qnode **out, size_t *n);
/* The conjuncts an index answers, with their intervals (in c->mem). */
int qf_cands_build(qctx *c, cand **out, size_t *nc);
/* Plan and walk: want hits past the cursor into h; *sorted 0 when they are to be sorted. */
int qf_run(qctx *c, size_t want, hits *h, int *sorted);

/* execute.c */
/* Walk the Kind in key order after `after`, calling fn on each Record (>0 from fn: stop). */
int qf_kind_walk(qctx *c, const char *after, size_t after_len,
		 int (*fn)(qctx *c, const cairn_record *r, void *arg), void *arg);
/* A qf_kind_walk callback: keep a Record that matches and is past the cursor (arg: a page_out). */
int qf_keep_record(qctx *c, const cairn_record *r, void *arg);
/* The ordered way: the intervals of a in key order (bykey) or value order, until want hits. */
int qf_walk_ordered(qctx *c, const attr_def *a, const ival *iv, size_t n_iv, int bykey,
		    size_t want, hits *h);
/* The collect way: every match the intervals of `a` hold, in any order. */
int qf_walk_collect(qctx *c, const attr_def *a, const ival *iv, size_t n_iv, hits *h);

#endif
