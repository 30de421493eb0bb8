/*
 * The commit pipeline's own interface (validate.c, constraints.c,
 * apply.c, commit.c, reembed.c): the plan a commit builds while it
 * validates, which apply then only writes.
 */
#ifndef CAIRN_VERSION_COMMIT_INT_H
#define CAIRN_VERSION_COMMIT_INT_H

#include "base/arena.h"
#include "base/hmap.h"
#include "store/wlist.h"
#include "version/index.h"
#include "version/version.h"

/* A validation failure was recorded (not an error code: those are negative). */
#define COLLECTED 1

typedef struct rstate {
	uint32_t kind;
	const char *key; /* points into a change or into owned storage */
	size_t key_len;
	char *key_own;
	uint64_t rid;
	int existed;	    /* visible at the branch head before the commit */
	int seen;	    /* the branch had an entry of it (a Version or a delete) before the commit */
	int exists;	    /* after the changes simulated so far */
	uint64_t cur_vid;   /* newest Version (in the view or planned), 0 if none */
	int cur_live;	    /* cur_vid is a live (non-tombstone) Version in the view */
	int loaded;	    /* values, title, lineage loaded for cur_vid */
	const jv *values;   /* in a change's or the commit's arena */
	char *title;
	size_t title_len;
	uint64_t *lin;	    /* lineage: revision per attribute id (0 = title), n_attrs + 1 */
	uint32_t dim;	    /* vector dimension of cur_vid */
	uint64_t vec_vid;   /* the Version whose vector cur_vid carries (0: none) */
	uint64_t created;   /* revision that created the Record (when it exists) */
	long last_change;
	int touched;
} rstate;

typedef struct lstate {
	uint32_t rel;
	size_t from, to;    /* rstate indexes */
	int existed, exists;
	uint64_t cur_vid;
	int cur_live;
	long last_change;
	int touched;
	int loaded;	    /* values, created, values_rev loaded for cur_vid */
	const char *values; /* canonical values of cur_vid (commit arena) */
	size_t values_len;
	uint64_t created, values_rev;
} lstate;

typedef struct pop {
	int type;	    /* enum vtype */
	long change;
	size_t st;	    /* rstate or lstate index */
	uint64_t vid, prev;
	int prev_live;	    /* prev was live in the view: clear its bit */
	int count_delta;    /* +1 / -1 on the Kind's count */
	size_t enc_off, enc_len; /* encoded Version in the arena */
	const jv *values;   /* Records: values, for attribute index entries */
	int renamed;	    /* Records: the predecessor existed with another title */
	const jv *prev_values; /* Records: the existing predecessor's values, else NULL */
	const float *vec;   /* a new vector, or NULL */
	uint64_t vec_from;  /* copy the vector of this vid (0: none) */
	uint32_t dim;
	int link_values;    /* a Link with non-empty values */
} pop;

typedef struct cctx {
	dctx d;
	const cairn_changeset *cs;
	int mode;
	counters ctr;
	uint64_t rev;
	rstate *rs;
	size_t n_rs, cap_rs;
	lstate *ls;
	size_t n_ls, cap_ls;
	hmap rmap, lmap;
	pop *ops;
	size_t n_ops, cap_ops;
	buf arena;	    /* encoded Versions */
	buf tmp;
	commit_fail *fails;
	size_t n_fails;
	uint64_t unchanged; /* changes that would write what is there: skipped */
	const commit_extra *x; /* a merge's second parent, or NULL */
	arena mem;	    /* stored values parsed, values built by the commit */
	wlist wl;	    /* the index entries and Versions to write, sorted at the end */
	struct ix_part *ix; /* the secondary indexes' parts of the commit, while apply runs */
	uint32_t vec_dim;   /* the Domain's vector dimension (0: not set yet) */
	int vec_dim_new;
	char vec_model[VEC_MODEL_MAX + 1]; /* the model that made the Domain's vectors ("": unnamed) */
	const char *cmodel; /* ... and this commit's vectors (embedder's or vector_model) */
	const cairn_embedder *emb; /* embeds the title of a put without a vector */
	int model_checked;
	int vec_woke;	    /* the background was told of new vectors (their index) */
	uint32_t kseg;	    /* the keys segment this commit writes (0: none) */
	int kfold;	    /* ... or, reaching the threshold, it folds them all */
	uint8_t *kbloom;    /* its filter, kblocks x 64 bytes */
	uint32_t kblocks, kentries;
} cctx;

/* Visit the Links touching Record rid that exist in the view (before this commit). */
typedef int (*link_visit)(cctx *c, int out_dir, uint32_t rel, uint64_t other, uint32_t other_kind,
			  const char *other_key, size_t other_len, void *arg);

/* validate.c */
/*
 * Simulate every change of c->cs over the branch head and plan its
 * Versions; the first failure (by change) as the error, every one in
 * c->fails with COMMIT_COLLECT. Writes nothing.
 */
int commit_validate(cctx *c);
/* Record a validation failure of change `change`; kind/key name a missing Record, if any. */
int commit_failf(cctx *c, long change, int code, uint32_t kind, const char *key, size_t key_len,
		 const char *fmt, ...) __attribute__((format(printf, 7, 8)));
/* The state of Record (kind, key) in the commit, made on first use from what the view sees; its index in *out. */
int commit_rstate_get(cctx *c, uint32_t kind, const char *key, size_t key_len, size_t *out);
/* The key of a Link's state in the commit's map. */
void commit_lkey(uint8_t out[20], uint32_t rel, uint64_t from, uint64_t to);
int commit_links_in_view(cctx *c, uint64_t rid, link_visit fn, void *arg);

/* constraints.c: the checks of the final state, in order; failures recorded as validation's. */
int commit_constraints(cctx *c);

/* apply.c */
/* Write the validated plan of c and its Revision (out: may be NULL). */
int commit_apply(cctx *c, const cairn_provenance *prov, cairn_commit_result *out);
/* The Revision of c: its record, the branch head and the counters. */
int commit_write_revision(cctx *c, int type, const cairn_provenance *p, const uint8_t digest[32],
			  uint64_t first_vid, uint64_t n_versions, cairn_commit_result *out);
/* Free what the secondary indexes kept for the commit (their threads are joined). */
void commit_ix_release(cctx *c);

/* commit.c */
void commit_cctx_release(cctx *c);
/*
 * The checks every commit's options take in fn (cairn_commit, ...): a
 * Domain, valid provenance, zero reserved words and, with main_only (the
 * message), no branch but main. CAIRN_EINVAL naming fn.
 */
int commit_options_check(const cairn_commit_options *o, const char *fn, const char *main_only);
/* CAIRN_EINVAL unless the provenance is valid (confidence in [0, 1], UTF-8 texts in their limits). */
int commit_prov_check(const cairn_provenance *p);
/* A catalog value of a vector model: be32 dimension, then the model's id. */
int vec_model_decode(const MDB_val *v, uint32_t *dim, char model[VEC_MODEL_MAX + 1]);

#endif
