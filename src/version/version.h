/*
 * The version layer: Domains, branches and their views, the encoding of
 * Versions and Revisions, versioned cells (live-set chunks and counts), and
 * the commit pipeline (validate, then apply).
 *
 * Visibility. Every Version carries the branch and revision that wrote it.
 * A read of branch B at revision R sees through a view: B itself up to R,
 * then B's parent up to min(fork revision, R), and so on up the chain. For
 * indexes grouped by identity (keys, adj, adj_rev) entries of one
 * identity are sorted newest first, and the first entry the view sees
 * decides (a tombstone means "absent"). For indexes that are not grouped by
 * identity (attr, names, postings, vectors) an entry counts when its vid is
 * in the live set of the view: a bitmap per branch, stored in chunks of
 * 4096 vids, each chunk rewritten as a new cell at every revision that
 * changes it, so the live set of any branch at any revision is one seek per
 * chunk and a fork copies nothing. (An attr or names entry names the
 * Version that brought its value; one that is not live is looked up:
 * attr_entry_visible.)
 */
#ifndef CAIRN_VERSION_H
#define CAIRN_VERSION_H

#include <stdint.h>

#include <lmdb.h>

#include "base/assert.h"
#include "base/text.h"
#include "cairn.h"
#include "model/schema.h"
#include "store/store.h"

#define MAIN_BRANCH_ID 1u
#define VEC_MODEL_MAX 128	/* bytes of a vector model id (catalog: dom 'V' -> be32 dim, id) */
#define VIEW_MAX 32		/* longest branch ancestry */
#define LIVE_CHUNK_BITS 12	/* 4096 vids per live-set chunk */
#define LIVE_CHUNK_BYTES (1u << (LIVE_CHUNK_BITS - 3))

/*
 * Values of the identity indexes (keys, adj, adj_rev): flags, then
 * the branch and revision that wrote the entry's Version as varints; then
 * for keys the rid, and for adj and adj_rev the Kind and key of the Link's
 * other end, so a Link is listed without reading the Record it points to.
 */
#define EF_TOMBSTONE 1u
#define EF_VALUES 2u	/* a Link entry whose Version has values */
/*
 * A keys entry of a Record Version that carries its header: the vector
 * dimension (varint) and the title, when the title is KEYS_TITLE_MAX bytes
 * or less, so a graph read lists a Record's header without its Version.
 */
#define EF_TITLE 4u
#define KEYS_TITLE_MAX 240
/*
 * An entry of an erased Version (cairn_erase, admin/erase.c): always with
 * EF_TOMBSTONE, so every read takes it for "absent" at every revision.
 */
#define EF_ERASED 8u

enum ventry_kind {
	VE_KEYS = 1,
	VE_ADJ = 3,
};

typedef struct ventry {
	uint8_t flags;
	uint32_t branch;
	uint64_t rev;
	uint64_t rid;		/* VE_KEYS */
	uint32_t kind;		/* VE_ADJ: Kind of the other end */
	const char *key;	/* VE_ADJ: key of the other end (points into the value) */
	size_t key_len;
	const char *title;	/* VE_KEYS with EF_TITLE: the title (points into the value) */
	size_t title_len;
	uint32_t dim;		/* ... and the vector dimension */
} ventry;

#define VENTRY_MAX (1 + 5 + 10 + 10 + 5 + CAIRN_MAX_KEY)
_Static_assert(KEYS_TITLE_MAX <= CAIRN_MAX_KEY, "a keys entry's title fits VENTRY_MAX");

/* Decode a value of an identity index. CAIRN_ECORRUPT if malformed. */
int ventry_decode(const void *p, size_t n, int what, ventry *out);
/* Encode into out (VENTRY_MAX bytes); returns the length. */
size_t ventry_encode(uint8_t *out, const ventry *e, int what);

/* Cell types in DB_CELLS. */
enum cell_type {
	CELL_LIVE = 1,	/* id: vid >> 12; value: 512-byte bitmap */
	CELL_COUNT = 2, /* id: Kind id; value: be64 count */
};

/* Version types. */
enum vtype {
	V_REC = 1,
	V_REC_DEL = 2,
	V_LINK = 3,
	V_LINK_DEL = 4,
	/*
	 * An erased Version (cairn_erase): a stub, rewritten in place of a
	 * Record (V_REC) or Link (V_LINK) Version, that keeps what identity
	 * and visibility need (kind or relation, branch, revision, previous
	 * vid, creating revision, rid and key or the Link's ends, lineage
	 * revisions), the SHA-256 of the bytes it replaced (so the change
	 * digest of a format-2 revision still verifies) and the erasing
	 * revision, and nothing of its title, values or vector.
	 */
	V_REC_ERASED = 5,
	V_LINK_ERASED = 6,
};

/* A Version of a Record (a tombstone and a stub included), of a Link. */
static inline int vtype_rec(int t)
{
	return t == V_REC || t == V_REC_DEL || t == V_REC_ERASED;
}

static inline int vtype_link(int t)
{
	return t == V_LINK || t == V_LINK_DEL || t == V_LINK_ERASED;
}

/* The type a stub stands for (V_REC, V_LINK), the others' own. */
static inline int vtype_orig(int t)
{
	return t == V_REC_ERASED ? V_REC : t == V_LINK_ERASED ? V_LINK : t;
}

typedef struct view_level {
	uint32_t branch;
	uint64_t limit; /* highest revision of this branch the view sees */
} view_level;

typedef struct view {
	view_level lv[VIEW_MAX];
	int n;
} view;

static inline int view_sees(const view *v, uint32_t branch, uint64_t rev)
{
	CR_ASSERT(v->n >= 1 && v->n <= VIEW_MAX);
	for (int i = 0; i < v->n; i++)
		if (v->lv[i].branch == branch)
			return rev <= v->lv[i].limit;
	return 0;
}

/* A decoded Version (pointers into the stored bytes). */
typedef struct vrec {
	int type;
	uint32_t kr;	    /* Kind id (Records) or Relation id (Links) */
	uint32_t branch;
	uint64_t rev;
	uint64_t prev;	    /* the Version this one replaced on its branch, or 0 */
	uint64_t created;   /* Records and Links: the revision that created them (this incarnation) */
	uint64_t rid;	    /* Records */
	uint64_t from_rid, to_rid; /* Links */
	const char *key;
	size_t key_len;
	const char *title;
	size_t title_len;
	const char *values;
	size_t values_len;
	uint32_t dim;	    /* the dimension of the vector it was written with, 0 if none; the
			       vector has the Domain's dimension now (cairn_reembed changes it) */
	const uint8_t *lineage; /* n_lineage pairs of varints (attribute id, revision) */
	size_t lineage_len;
	uint32_t n_lineage;
	/* Stubs (V_REC_ERASED, V_LINK_ERASED): the erasing revision, the erased bytes' SHA-256. */
	uint64_t erased_by;
	const uint8_t *orig_hash;
} vrec;

int vrec_decode(const void *p, size_t n, vrec *out);
/* Encode a Version; b receives the bytes. */
void vrec_encode(const vrec *v, buf *b);

/*
 * Revision formats: 1, whose change digest is SHA-256 over each Version's
 * (vid, bytes); 2 (every revision written since store format 11), over each
 * Version's (vid, SHA-256 of its bytes), so that an erased Version's stub,
 * which keeps that hash, still verifies.
 */
#define RREC_FORMAT 2

/* A decoded Revision. */
typedef struct rrec {
	int format;	/* 1 or 2 (encoded as RREC_FORMAT whatever it says) */
	int type;
	uint32_t branch;
	uint64_t parent, parent2;
	int64_t time_ms, client_time_ms;
	double confidence;
	const char *actor, *source, *message, *trace;
	size_t actor_len, source_len, message_len, trace_len;
	uint64_t first_vid, n_versions;
	uint8_t digest[32];
	uint8_t hash[32];
	uint8_t parent_hash[32];
} rrec;

int rrec_decode(const void *p, size_t n, rrec *out);
void rrec_encode(const rrec *r, buf *b);
/* What a format-2 digest takes of one Version: be64 vid, then the SHA-256 of its bytes. */
void rrec_digest_version(sha256_ctx *h, uint64_t vid, const void *bytes, size_t n);
/*
 * A stub of Version v (V_REC or V_LINK; bytes: its encoding) erased by
 * revision erased_by: b receives the stub's bytes.
 */
void vrec_stub(const vrec *v, const void *bytes, size_t n, uint64_t erased_by, buf *b);
/* The chained hash of revision rev (everything but r->hash). */
void rrec_hash(uint32_t dom, uint64_t rev, const rrec *r, uint8_t out[32]);

/* Branch info as stored in the catalog. */
typedef struct branch_info {
	uint32_t id;
	uint32_t parent;
	uint64_t fork_rev;	/* the parent's head when the branch was made (0 for main) */
	uint64_t head_rev;	/* the branch's last revision, 0 before its first commit */
	int64_t created_ms;
	uint8_t head_hash[32];
	uint8_t state;		/* BRANCH_LIVE or BRANCH_DELETING */
	uint64_t progress;	/* BRANCH_DELETING: the next revision to clear */
	const char *name;	/* NUL-terminated, in the stored bytes */
} branch_info;

enum { BRANCH_LIVE = 0, BRANCH_DELETING = 1 };

/* The branch's last revision, or the parent revision it starts from before its first commit. */
static inline uint64_t branch_head(const branch_info *b)
{
	return b->head_rev ? b->head_rev : b->fork_rev;
}

struct schema_ref {
	schema *s;
	int refs;
};

/* A segment of the keys index as a transaction reads it (version/kseg.c). */
typedef struct kseg_ref {
	uint32_t seg, blocks;
	const uint8_t *bloom;	/* blocks x 64 bytes (into the map) */
} kseg_ref;

/* A resolved Domain and branch inside one LMDB transaction. */
typedef struct dctx {
	cairn_store *st;
	MDB_txn *txn;
	uint32_t dom;
	struct schema_ref *sref;
	const schema *s;
	branch_info br;	/* the branch read or written */
	view v;
	uint64_t rev;	/* revision read: the branch head or the one asked for */
	cairn_read_stats stats;
	int readonly;	/* a read transaction: cursors below are kept until dctx_close */
	MDB_cursor *kcur; /* keys index cursor, reused by lookups (read transactions) */
	/*
	 * The live-set chunks a read transaction's view has read, by chunk id
	 * (NULL: not yet; else the cell, or a marker for none): its cells do
	 * not change. Owned by the dctx that grew it (dctx_close frees it);
	 * copies start without one, and dctx_at, another view, empties it.
	 */
	const uint8_t **lcache;
	size_t lcache_n;
	int kseg_loaded;  /* kseg holds the Domain's keys segments (reset after writing them) */
	unsigned kseg_n;
	uint64_t kseg_entries; /* in all of them */
	kseg_ref kseg[KSEG_MAX];
} dctx;

/*
 * Keys segments (version/kseg.c, docs/storage.md "Keys segments"). id is
 * a keys prefix: Domain, Kind, key and its 0.
 */
uint64_t kseg_hash(const uint8_t *id, size_t n);
uint32_t kseg_blocks(size_t entries);
void kseg_bloom_add(uint8_t *bloom, uint32_t blocks, uint64_t h);
int kseg_bloom_has(const uint8_t *bloom, uint32_t blocks, uint64_t h);
/* The key of id's entries in segment seg (~vid follows); the key of its descriptor. */
void kseg_key(kbuf *k, uint32_t dom, uint32_t seg, const uint8_t *id, size_t n);
void kseg_desc_key(kbuf *k, uint32_t dom, uint32_t seg);
/* A descriptor: be32 entries, be32 blocks, then the filter. CAIRN_ECORRUPT if malformed. */
int kseg_desc_decode(const void *p, size_t n, uint32_t *entries, uint32_t *blocks,
		     const uint8_t **bloom);
/* The number the next segment takes, how many the Domain has and their entries. */
int kseg_next(dctx *c, uint32_t *seg, unsigned *n, uint64_t *entries);
/*
 * The newest entry of id in a segment that the view sees, if its vid is
 * above after (*found; the entry into *e and *vid). The keys index itself is
 * the caller's: this adds what segments hold.
 */
int kseg_newer(dctx *c, const uint8_t *id, size_t n, uint64_t after, ventry *e, uint64_t *vid,
	       int *found);
/* Move every segment of the Domain into keys; *moved (may be NULL) counts the entries. */
int kseg_fold(MDB_txn *txn, cairn_store *st, uint32_t dom, uint64_t *moved);

/*
 * The Domain's vector dimension (0: none yet) and the id of the model its
 * vectors are of (catalog dom 'V'; "" when unnamed) into model.
 */
int vec_model_get(MDB_txn *txn, cairn_store *st, uint32_t dom, uint32_t *dim,
		  char model[VEC_MODEL_MAX + 1]);
/* The model the Domain's vectors were re-embedded with at revision rev (catalog dom 'E' rev). */
int vec_reembed_get(MDB_txn *txn, cairn_store *st, uint32_t dom, uint64_t rev, uint32_t *dim,
		    char model[VEC_MODEL_MAX + 1]);
/* The revision of the Domain's last re-embedding, 0 if none (a vector index built before is stale). */
int vec_generation(MDB_txn *txn, cairn_store *st, uint32_t dom, uint64_t *rev);

/*
 * The vids erase revision rev erased (catalog dom 'R' rev): *p points to n
 * be64 vids in the map. CAIRN_ENOTFOUND if it has none.
 */
int erase_list_get(MDB_txn *txn, cairn_store *st, uint32_t dom, uint64_t rev, const uint8_t **p,
		   size_t *n);
/*
 * Write the revision of an erasure (type CAIRN_REV_ERASE, on main, o->prov
 * its provenance) in write transaction txn: the vids it erases (n,
 * ascending) under catalog dom 'R' rev, its digest their SHA-256. *rev.
 */
int erase_revision_write(MDB_txn *txn, cairn_store *st, const cairn_commit_options *o,
			 const uint64_t *vids, size_t n, uint64_t *rev);
/* CAIRN_EINVAL unless the provenance is valid (commit.c: confidence, UTF-8, lengths). */
int commit_prov_check(const cairn_provenance *p);
/* The revision of the Domain's erase in progress (catalog dom 'r'), 0 if none. */
int erase_pending(MDB_txn *txn, cairn_store *st, uint32_t dom, uint64_t *rev);

/* The Domain's compaction horizon (horizon.c; 0 if never compacted). */
int horizon_get(MDB_txn *txn, cairn_store *st, uint32_t dom, uint64_t *h);
/* Move the Domain's horizon to h (never back: the caller compares), stamped now. */
int horizon_put(MDB_txn *txn, cairn_store *st, uint32_t dom, uint64_t h);
/* CAIRN_ECOMPACTED if reading a branch whose head is `head` as of rev is before the horizon. */
int horizon_check(MDB_txn *txn, cairn_store *st, uint32_t dom, uint64_t rev, uint64_t head);
/* The last revision of the Domain committed at or before ms (0 if none), of 1..last. */
int rev_at_time(MDB_txn *txn, cairn_store *st, uint32_t dom, int64_t ms, uint64_t last,
		uint64_t *out);
/* Resolve domain and branch (NULL: main) in txn. CAIRN_ENODOMAIN, CAIRN_ENOBRANCH. */
int dctx_open(dctx *c, cairn_store *st, MDB_txn *txn, const char *domain, const char *branch);
/* A view of branch id at its head, sharing base's transaction and schema (close base last). */
int dctx_branch(const dctx *base, uint32_t id, dctx *out);
/* The highest revision of branch id the view sees (0 if none). */
static inline uint64_t view_limit(const view *v, uint32_t id)
{
	for (int i = 0; i < v->n; i++)
		if (v->lv[i].branch == id)
			return v->lv[i].limit;
	return 0;
}
/* Restrict the view to revision rev (<= head). */
void dctx_at(dctx *c, uint64_t rev);
void dctx_close(dctx *c);
/* Create Domain name inside write transaction txn (CAIRN_EEXIST if present). */
int domain_create_txn(MDB_txn *txn, cairn_store *st, const char *name);
/* dctx_open for a write, creating the Domain first when create is set and it is missing. */
int dctx_open_write(dctx *c, cairn_store *st, MDB_txn *txn, const cairn_commit_options *o,
		    int *created);
/*
 * The catalog's entries: every key is (be32 dom, one type byte, ...); dom 0
 * holds what belongs to no Domain. One table, so that no two files pick the
 * same byte.
 */
#define CAT_NAME 'N'	 /* (0, 'N', name) -> dom */
#define CAT_INFO 'I'	 /* (dom, 'I') -> state, created, name */
#define CAT_CTR 'C'	 /* (dom, 'C') -> counters */
#define CAT_SCHEMA 'S'	 /* (dom, 'S', ~rev) -> schema JSON */
#define CAT_BNAME 'B'	 /* (dom, 'B', name) -> branch id */
#define CAT_BRANCH 'b'	 /* (dom, 'b', id) -> branch info */
#define CAT_NEXTB 'n'	 /* (dom, 'n') -> next branch id */
#define CAT_GONE 'x'	 /* (dom, 'x', id) -> a deleted branch, fully cleared */
#define CAT_CLEARING 'c' /* (dom, 'c', id) -> within the revision being cleared, the next vid */
#define CAT_LOG 'L'	 /* (0, 'L', seq) -> Domain event */
#define CAT_HORIZON 'K'	 /* (dom, 'K') -> be64 horizon, be64 time (ms) */
#define CAT_MERGED 'm'	 /* (dom, 'm', target, source) -> source head at the last merge */
#define CAT_PROP 'p'	 /* (dom, 'p', id) -> proposal */
#define CAT_PROPN 'q'	 /* (dom, 'q') -> next proposal id */
#define CAT_TOKEN 'T'	 /* (0, 'T', id) -> token */
#define CAT_TOKENN 'U'	 /* (0, 'U') -> next token id */
#define CAT_VMODEL 'V'	 /* (dom, 'V') -> be32 dim, the Domain's vector model id */
#define CAT_REEMBED 'E'	 /* (dom, 'E', rev) -> be32 dim, model id: one per re-embedding */
#define CAT_ERASED 'R'	 /* (dom, 'R', rev) -> the vids erase revision rev erased (be64, ascending) */
#define CAT_ERASING 'r'	 /* (dom, 'r') -> the erase in progress: be64 rev, its state (admin/erase.c) */

/* The catalog key (dom, type, name): name may be NULL. */
void branch_cat_key(kbuf *k, uint32_t dom, char type, const char *name);
typedef int (*domain_write_fn)(MDB_txn *txn, cairn_store *st, dctx *d, void *arg);
/*
 * fn in a write transaction (store_write) on main's view of Domain domain;
 * with catalog, the change is to the catalog (branches): its generation is
 * bumped and the cached schemas dropped.
 */
int domain_write(cairn_store *st, const char *domain, domain_write_fn fn, void *arg, int catalog);
/* 1 if name is a valid branch name. */
int branch_name_valid(const char *name);
/* The current schema of Domain dom, freshly loaded (free with schema_free). */
int schema_current(MDB_txn *txn, cairn_store *st, uint32_t dom, schema **out);
/* Drop the cached schema of a Domain (after a schema commit). */
void cache_invalidate(cairn_store *st);
/* Bump the catalog generation (any Domain, branch or schema change). */
int catalog_touch(MDB_txn *txn, cairn_store *st);

/* The id of the Domain named name. CAIRN_ENODOMAIN if there is none. */
int domain_id(MDB_txn *txn, cairn_store *st, const char *name, uint32_t *dom);
int branch_get(MDB_txn *txn, cairn_store *st, uint32_t dom, uint32_t id, branch_info *out);
/* Call fn for every branch entry of dom (any state); a non-zero return stops and is returned. */
int each_branch(MDB_txn *txn, cairn_store *st, uint32_t dom,
		int (*fn)(const branch_info *b, void *arg), void *arg);
/* The ids of dom's live branches (not those being cleared), main first; free *ids with cr_free. */
int branch_ids(MDB_txn *txn, cairn_store *st, uint32_t dom, uint32_t **ids, size_t *n);
int branch_put(MDB_txn *txn, cairn_store *st, uint32_t dom, const branch_info *b,
	       const char *name);

/* Domain counters. */
typedef struct counters {
	uint64_t next_vid, next_rid, next_rev;
	int64_t last_time_ms;
} counters;
int counters_get(MDB_txn *txn, cairn_store *st, uint32_t dom, counters *c);
int counters_put(MDB_txn *txn, cairn_store *st, uint32_t dom, const counters *c);

/* ----------------------------------------------------------- lookups -- */

/* What the view sees of one identity. */
typedef struct ident {
	int found;	/* an entry of the identity exists (on any branch) */
	int visible;	/* the view sees a live (non-tombstone) Version */
	uint64_t rid;	/* Records: the rid (valid when found) */
	uint64_t vid;	/* the Version the view sees (0 if none) */
	uint64_t rev;
	int tomb;	/* the newest entry the view sees is a tombstone */
	int has_title;	/* its entry carries the header: title and vector dimension */
	const char *title; /* (into the map) */
	size_t title_len;
	uint32_t dim;
} ident;

/* Look up Record (kind, key) in the view. */
int rec_lookup(dctx *c, uint32_t kind, const char *key, size_t key_len, ident *out);
/* Look up the Link (from, rel, to) in the view. */
int link_lookup(dctx *d, uint64_t from, uint32_t rel, uint64_t to, ident *out);
/* Fetch and decode Version vid. */
int version_get(dctx *c, uint64_t vid, vrec *out);

/* Encoded keys. */
void key_keys(kbuf *k, uint32_t dom, uint32_t kind, const char *key, size_t key_len);
/* The prefix (dom, rid) of a Record's adj and adj_rev entries. */
void key_rid(kbuf *k, uint32_t dom, uint64_t rid);
void key_adj(kbuf *k, uint32_t dom, uint64_t a, uint32_t rel, uint64_t b);
void key_cell(kbuf *k, uint32_t dom, int type, uint32_t branch, uint64_t id);
void key_u64(kbuf *k, uint32_t dom, uint64_t id);

/*
 * Read a versioned cell as the view sees it: *val points to the stored bytes,
 * or *len is 0 (and CAIRN_ENOTFOUND returned) when there is none.
 */
int cell_get(dctx *c, int type, uint64_t id, const uint8_t **val, size_t *len);
/* The same with a cursor of DB_CELLS the caller keeps open. */
int cell_get_cur(dctx *c, MDB_cursor *cur, int type, uint64_t id, const uint8_t **val,
		 size_t *len);
/* Is vid in the live set of the view? */
int live_test(dctx *c, uint64_t vid, int *live);
/* Count of Records of a Kind in the view. */
int count_get(dctx *c, uint32_t kind, uint64_t *n);

/*
 * The attribute index. An entry is (dom, kind, attribute, value, key, 0x00,
 * vid): value order, then key order (keys hold no NUL), then vid, so that a
 * range of values comes out sorted by value with key as the tie-break, as
 * queries sort. Values are encoded order-preserving (attr_encode); strings
 * keep a prefix of ATTR_STRING_CAP bytes, so that an entry always fits
 * LMDB's key size, and equality on longer strings is confirmed on the
 * Version. A string array has an entry per element.
 */
#define ATTR_STRING_CAP 224

/* Encode an attribute value for the attr index (order-preserving). Returns 0 or CAIRN_ETYPE. */
int attr_encode(const attr_def *a, const jv *v, buf *b);
/* Bytes of the encoded value at the start of p[0..n-1] (its type gives its length), or 0. */
size_t attr_value_len(const attr_def *a, const uint8_t *p, size_t n);
/* The prefix (dom, kind, attribute) of an attribute's entries. */
void attr_prefix(kbuf *k, uint32_t dom, uint32_t kind, uint32_t attr);
/* An entry; CAIRN_ETYPE if the value is not of the attribute's type. */
int attr_key(kbuf *k, uint32_t dom, uint32_t kind, const attr_def *a, const jv *v,
	     const char *key, size_t key_len, uint64_t vid);

typedef struct attr_entry {
	const uint8_t *value;	/* encoded */
	size_t value_len;
	int truncated;		/* a string longer than the index keeps */
	const char *key;
	size_t key_len;
	uint64_t vid;
} attr_entry;

/*
 * A Record Version writes attribute entries only for the values its
 * predecessor lacked (docs/storage.md, "Attribute index"): an entry names
 * the Version that brought the value, and later Versions that keep it
 * rely on that entry. So an entry whose vid is live in the view answers at
 * once; any other is resolved: the Record's Version the view sees, if it
 * has the entry's value (*vid, else 0; the Version read into *out).
 * Several entries of one value and Record may resolve to the same Version:
 * a reader takes one.
 */
int attr_entry_visible(dctx *d, const attr_def *a, uint32_t kind, const attr_entry *e,
		       uint64_t *vid, vrec *out);
/* Is enc[0..len-1] the encoding of the attribute's value (or of one of its items) in values? */
int attr_has_encoded(const attr_def *a, const jv *values, const uint8_t *enc, size_t len);

/* Split an entry (after its 12-byte prefix is known to be a's) into its parts; -1 if malformed. */
int attr_entry_parse(const attr_def *a, const uint8_t *k, size_t n, attr_entry *out);

/* The commit pipeline, shared by the public calls and the importer. */
struct cs_change;
typedef struct commit_fail {
	long change;	/* index of the failing change */
	int code;
	char *msg;	/* what is wrong */
	char *missing;	/* "Kind:key" of a Record the change needs that does not exist (EREF, ELINKEND) */
	size_t seq;	/* order of discovery, to sort failures of one change stably */
} commit_fail;

enum commit_mode {
	COMMIT_STOP = 0,	/* the first failing change fails the commit */
	COMMIT_COLLECT = 1,	/* collect every failing change; write nothing if any */
};

/*
 * Validate cs and, when every change is valid, write it. When changes fail
 * validation nothing is written, the code of the first failure is returned,
 * and (when fails is not NULL) every failure found is returned in *fails,
 * sorted by change, to be freed with commit_fails_free. COMMIT_STOP stops
 * at the first failing change; COMMIT_COLLECT goes on to find them all.
 */
int commit_run(cairn_store *st, const cairn_commit_options *o, const cairn_changeset *cs,
	       int mode, cairn_commit_result *out, commit_fail **fails, size_t *n_fails);
void commit_fails_free(commit_fail *f, size_t n);

/* What a merge adds to a commit. */
typedef struct commit_extra {
	uint64_t parent2;	/* the merged branch's head */
} commit_extra;

/*
 * The commit pipeline inside an open write transaction (for merges, which
 * compute their changes in the same transaction). dctx is open on the
 * target branch. Nothing is committed or aborted here.
 */
int commit_in_txn(dctx *d, const cairn_commit_options *o, const cairn_changeset *cs, int mode,
		  const commit_extra *x, cairn_commit_result *out, commit_fail **fails,
		  size_t *n_fails);

/* Write the attribute index entries of a Record Version (values: its values object). */
int attr_entries_put(dctx *d, uint32_t kind, const char *key, size_t key_len, const jv *values,
		     uint64_t vid);
/* Store a schema as of revision rev. */
int schema_store(MDB_txn *txn, cairn_store *st, uint32_t dom, uint64_t rev, const schema *s);
/* The schema JSON as of revision rev (zero-copy). */
int schema_json_at(MDB_txn *txn, cairn_store *st, uint32_t dom, uint64_t rev, const char **json,
		   size_t *len);
/*
 * Apply a schema document to o->domain as cairn_schema_apply does, inside
 * txn (a schema revision on main); the caller invalidates the store's
 * caches once txn is committed.
 */
int schema_apply_txn(MDB_txn *txn, cairn_store *st, const cairn_commit_options *o,
		     const char *json, size_t len, cairn_commit_result *out);
/* Called inside a merge's transaction once it is written (d: the target). */
typedef int (*merge_post)(dctx *d, const cairn_merge_result *res, void *arg);
int merge_run(cairn_store *st, const cairn_merge_options *o, cairn_item_cb cb, void *ctx,
	      cairn_merge_result *out, merge_post post, void *post_arg);

/*
 * Check a schema change against the data of every branch of the Domain, and
 * build the indexes it adds. CAIRN_ESCHEMADATA names the offending Records.
 */
int schema_check_data(dctx *d, const schema *s, const schema_delta *delta);

#endif
