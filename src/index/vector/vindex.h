/*
 * The vector index (docs/vectors.md): a partition index over a Domain's
 * vectors. Spherical k-means centroids split the vectors into lists; each
 * list holds, per vector, its vid, its Record's Kind, and an int8 copy with
 * its scale and norm. A search scores the centroids, scans the nearest
 * lists in int8, re-ranks the best in float32 from the vectors
 * sub-database, and scans exactly the vectors newer than the index.
 *
 * Like every index it is append-only and shared by all branches: an entry
 * counts when its vid is in the view's live set. It covers the vectors up
 * to a watermark vid; newer ones (the tail) are added by a catch-up, in the
 * background, and are searched exactly until then.
 *
 * DB_VINDEX keys (dom is be32):
 *   (dom, 'M')                       -> meta: be32 format (1), dim, lists,
 *                                       0; be64 watermark, entries, next seq
 *   (dom, 'C')                       -> lists x dim float32 unit centroids
 *   (dom, 'L', be32 list, be32 seq)  -> a block: u32 n, u32 dim, then n u64
 *                                       vids, n u32 Kinds, n float scales,
 *                                       n float norms, n x dim int8 codes
 *                                       (native little-endian)
 */
#ifndef CAIRN_INDEX_VINDEX_H
#define CAIRN_INDEX_VINDEX_H

#include "version/index.h"
#include "version/version.h"

#define VINDEX_BLOCK_MAX 512 /* entries per block */

typedef struct vindex_meta {
	uint32_t dim, lists;
	uint64_t watermark, entries, seq;
} vindex_meta;


/* The Domain's index meta; CAIRN_ENOTFOUND when it has none. */
int vindex_meta_get(MDB_txn *txn, cairn_store *st, uint32_t dom, vindex_meta *m);

/* A block's arrays (pointers into the stored value). */
typedef struct vblock {
	uint32_t n, dim;
	const uint8_t *vids, *kinds, *scales, *norms;
	const int8_t *codes;
} vblock;

int vblock_decode(const void *p, size_t len, uint32_t dim, vblock *b);

/*
 * Compaction: remove from up to `budget` blocks of the Domain's index, from
 * block resume on (be32 list, be32 seq; all zero to start), the entries of
 * the Versions the bitmap names; resume moves past them,
 * *more is 0 once the last block is done, *removed grows by the entries
 * removed. Blocks left empty are deleted; the meta's count follows.
 */
int vindex_compact_step(MDB_txn *txn, cairn_store *st, uint32_t dom, const uint8_t *bits,
			uint64_t nbits, uint8_t resume[8], unsigned budget, uint64_t *removed,
			int *more);

/* For the maintenance thread: build or catch up every Domain's index that needs it. */
int vindex_maintain(cairn_store *st, const volatile int *stop);

/* The vector index's operations (index/registry.c). */
extern const index_ops vector_index;

#endif
