/*
 * The full-text index (docs/storage.md, "Postings"): the words of every
 * Record Version, written by each commit as one segment of its own in
 * (term, vid) order, so a commit's writes are sequential whatever words it
 * holds. Within a segment, the postings of a term are split by vid >> 16
 * into containers; each container holds its vids (2 bytes each, or a bitset when
 * dense), then per block of TEXT_BLOCK postings the bounds a ranking needs to
 * skip it, then each posting's Kind, term frequencies and field lengths.
 * A segment holds the Versions of one branch (a commit's; a rebuild writes
 * one segment per branch), so clearing a deleted branch drops its segments
 * whole; a Version's postings are in one segment only.
 */
#ifndef CAIRN_INDEX_TEXT_H
#define CAIRN_INDEX_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "model/analyze.h"
#include "base/json.h"
#include "model/schema.h"
#include "base/buf.h"
#include "base/hmap.h"
#include "version/index.h"
#include "version/version.h"

/* The full-text index's operations (ops.c; index/registry.c). */
extern const index_ops text_index;
/* cairn check: every segment's containers decode, and name Record Versions of their Kind (check.c). */
int text_check(index_check *c);

#define TEXT_BLOCK 128		 /* postings per block of bounds */
#define TEXT_SKIP 16		 /* a block's payload can be entered every this many postings */
#define TEXT_BITSET_MIN 4096	 /* a container of this many postings or more is a bitset */
#define TEXT_BITSET_BYTES 8192
#define TEXT_CONTAINER_BITS 16	 /* a container holds the vids of one vid >> 16 */
#define TEXT_FIELD_GAP 100	 /* positions between fields and values: no phrase spans them */
#define TEXT_TERM_MAX (1 + TOKEN_CAP)
#define TERM_WORD 'w'		 /* a word as written (folded) */
#define TERM_STEM 's'		 /* the stem of a word (of letters) */

/* One posting as collected by a writer. */
typedef struct tpost {
	uint64_t vid;
	uint32_t term;		/* index in textw.t */
	uint32_t kind;
	uint32_t tf_title, tf_values; /* tf_values in tenths, weighted by the attributes */
	uint32_t dl_title, dl_values;
	uint32_t pos_off, pos_len; /* a word's positions: bytes in textw.posb (delta varints) */
} tpost;

/* The postings of one commit (or rebuild), written as one segment. */
typedef struct textw {
	const schema *s;
	stemmer *stem;		/* NULL: language "none" */
	hmap terms;		/* term bytes -> index + 1 in t */
	struct tterm {
		uint32_t off, len;	/* in bytes */
		uint32_t count;		/* postings */
		uint32_t stem;		/* of a word: its stem's term + 1 (0: none) */
		uint8_t stem_done;	/* stem is known */
		uint8_t lex;		/* a word of letters: in the lexicon */
		uint32_t doc_tf_title, doc_tf_values; /* within the document being added */
		uint32_t doc_pos_head, doc_pos_tail; /* its positions there: dpos index + 1 */
		uint64_t doc;		/* the vid doc_tf_* count for */
	} *t;
	size_t n_terms, cap_terms;
	buf bytes;
	tpost *p;
	size_t n_p, cap_p;
	uint32_t *doc_terms;	/* the terms of the document being added */
	size_t n_doc_terms, cap_doc_terms;
	struct dpos {
		uint32_t pos, next;	/* next: dpos index + 1 of the term's next, 0 at the end */
	} *dpos;		/* the positions of the words of the document being added */
	size_t n_dpos, cap_dpos;
	buf posb;		/* the positions of the postings collected */
	/* The segment prepared for writing (textw_prepare) */
	int prepared;
	uint32_t seg;
	buf prep;		/* its containers: u16 key length, key, u32 value length, value */
	uint32_t *order;	/* its terms, in byte order */
	uint8_t desc[60];	/* its descriptor (TSEG_BYTES) */
	uint64_t docs, sum_title, sum_values; /* documents added and their lengths */
	uint64_t last_vid;	/* of the last document added */
} textw;

int textw_init(textw *w, const schema *s);
void textw_release(textw *w);
/* Nothing collected yet? */
static inline int textw_empty(const textw *w)
{
	return w->docs == 0;
}
/*
 * Collect the postings of Record Version vid of Kind k (title, values:
 * its values object or NULL); its field lengths in *dl_title, *dl_values.
 * Versions must come in increasing vid order.
 */
int textw_doc(textw *w, const kind_def *k, uint64_t vid, const char *title, size_t title_len,
	      const jv *values, uint32_t *dl_title, uint32_t *dl_values);
/*
 * Encode what was collected as segment seg of Domain dom, ready to write,
 * without touching the store (a thread of its own may do it).
 */
int textw_prepare(textw *w, uint32_t dom, uint32_t seg, uint32_t branch);
/*
 * Write what was collected (prepared first, unless it was for seg) as
 * segment seg of Domain dom (its keys in order, then its descriptor), and
 * its new words into the lexicon; the writer is emptied.
 */
int textw_flush(textw *w, MDB_txn *txn, cairn_store *st, uint32_t dom, uint32_t seg,
		uint32_t branch);
/* The key of a lexicon word (and the prefix of a Domain's: len 0 without the 0x00). */
void key_lexicon(kbuf *k, uint32_t dom, const char *word, size_t len);

/* A segment as its descriptor says. */
typedef struct tseg {
	uint32_t id;
	uint64_t containers, postings, min_vid, max_vid;
	uint64_t docs, sum_title, sum_values; /* Versions indexed and their field lengths */
	uint32_t branch;	/* the branch its Versions were written on */
} tseg;
#define TSEG_BYTES 60

/*
 * Merge segments when a branch has TEXT_MERGE_MIN or more: the
 * TEXT_MERGE_FANIN neighbours (in vid order) with the fewest postings
 * become one, so that small commits leave few segments to read. *found says
 * whether there was such work (with dry, only that: nothing is written).
 */
#define TEXT_MERGE_MIN 8
#define TEXT_MERGE_FANIN 8
#define TEXT_MERGE_RATIO 8	/* the largest of a merge's segments, at most this times the rest */
int text_merge_step(MDB_txn *txn, cairn_store *st, uint32_t dom, int dry, int *found);

/* Versions whose postings a rewrite leaves out, and what it left out. */
typedef struct tdrop {
	const uint8_t *bits;	/* a bitmap by vid */
	uint64_t nbits;
	uint8_t *seen;		/* (internal) the documents counted, from seen_base */
	uint64_t seen_base, seen_bits;
	uint64_t postings, docs, sum_title, sum_values; /* left out */
	uint32_t seg;		/* the id of the segment written */
} tdrop;

/*
 * Rewrite segment seg as a new one without the postings of the Versions
 * drop->bits names (compaction); its document count and field lengths lose
 * theirs. A segment left without postings is removed.
 */
int text_compact_segment(MDB_txn *txn, cairn_store *st, uint32_t dom, const tseg *seg,
			 tdrop *drop);

/* Drop the segments of a deleted branch (its clearing's last step). */
int text_drop_branch(MDB_txn *txn, cairn_store *st, uint32_t dom, uint32_t branch);

/* The segments of a Domain, in id order (*out freed by the caller with cr_free). */
int text_segments(MDB_txn *txn, cairn_store *st, uint32_t dom, tseg **out, size_t *n);
/* The id a new segment of the Domain gets. */
int text_segment_next(MDB_txn *txn, cairn_store *st, uint32_t dom, uint32_t *id);
/* Key prefixes: a segment's descriptor, and a term's containers in a segment. */
void key_tseg(kbuf *k, uint32_t dom, uint32_t seg);
void key_tterm(kbuf *k, uint32_t dom, uint32_t seg, const char *term, size_t len);

/* A container, its block headers decoded (pointers into the stored bytes). */
typedef struct tcont {
	uint64_t base;		/* its first vid: (vid >> 16) << 16 */
	uint32_t n;		/* postings */
	uint32_t nb;		/* blocks */
	const uint8_t *bits;	/* the bitset of a dense container, or NULL */
	int positions;		/* its postings carry their word positions (terms as written) */
	struct tblock {
		uint32_t n;		/* postings */
		uint32_t first, last;	/* vid - base of the first and the last */
		uint32_t max_tf_title, max_tf_values, min_dl_title, min_dl_values;
		const uint8_t *vids, *payload; /* vids: 2 bytes each, when not a bitset */
		const uint8_t *skips;	/* payload offset of posting 16 k (k >= 1), 4 bytes each */
		size_t payload_len;
		double bound;		/* a ranking's own: the score no posting of it exceeds */
	} *b;
} tcont;

/* What the postings of one block say, by position in the block, read as far as needed. */
typedef struct tpay {
	uint32_t kind[TEXT_BLOCK], tf_title[TEXT_BLOCK], tf_values[TEXT_BLOCK];
	uint32_t dl_title[TEXT_BLOCK], dl_values[TEXT_BLOCK];
	const uint8_t *pos[TEXT_BLOCK];	/* positions, delta varints (when the container has them) */
	uint32_t pos_len[TEXT_BLOCK];
	rdr r;
	const uint8_t *base, *skips;
	uint32_t n, done;	/* postings in the block, and read up to */
	int positions;
} tpay;

/*
 * Decode a container's headers (a value of the postings sub-database, for
 * vid >> 16 = hi); the blocks are allocated in a. CAIRN_ECORRUPT on bad bytes.
 */
int tcont_decode(const void *v, size_t n, uint64_t hi, arena *a, tcont *out);
/* The vid (- base) of posting j of a block of a container without a bitset. */
static inline uint32_t tblock_vid(const struct tblock *b, uint32_t j)
{
	return (uint32_t)b->vids[2 * j] | (uint32_t)b->vids[2 * j + 1] << 8;
}
/* The vids (- base) of block bi, in order, into lo[0..b->n - 1]. */
int tblock_vids(const tcont *c, uint32_t bi, uint16_t *lo);
/* The vids and the whole payload of block bi, every posting checked. */
int tblock_read(const tcont *c, uint32_t bi, uint16_t *lo, tpay *p);
/* Start reading the payload of block bi. */
void tpay_begin(const tcont *c, uint32_t bi, tpay *p);
/*
 * Read it up to posting j, entering at the last skip before j when that is
 * ahead of what was read (read every posting: j = 0, 1, ..., n - 1; reading
 * the last checks that nothing follows).
 */
int tpay_upto(tpay *p, uint32_t j);

/*
 * Decode the positions of a posting (tpay.pos, tpay.pos_len) into
 * out[0..cap-1]; *n how many there are (even past cap). CAIRN_ECORRUPT
 * unless there is at least one and they ascend.
 */
int tpos_decode(const uint8_t *p, size_t len, uint32_t *out, size_t cap, size_t *n);

/*
 * Rebuild the full-text index of the Domain of d (a write transaction):
 * every Record Version again, under schema s.
 */
int text_rebuild(dctx *d, const schema *s);

#endif
