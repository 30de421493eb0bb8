/*
 * The server's parts: requests and responses (http.c), routes (api.c, and
 * routes_*.c by area), the writer (writer.c).
 */
#ifndef CAIRN_SERVER_INTERNAL_H
#define CAIRN_SERVER_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#include <microhttpd.h>

#include "base/json.h"
#include "server/mcp.h"
#include "wire/wire.h"
#include "server/server.h"
#include "base/arena.h"

#define MAX_SEGS 12


/* Error codes of the server itself, beside the library's (cairn_errname). */
#define E_ROUTE "route_not_found"
#define E_METHOD "method_not_allowed"
#define E_RATE "rate_limited"
#define E_BODY "payload_too_large"
#define E_FRAMING "bad_request"
#define E_MEDIA "unsupported_media_type"
#define E_SHUTDOWN "shutting_down"
#define E_TIMEOUT "query_timeout"

typedef struct job job;
typedef struct req req;
typedef struct conn_ent conn_ent;

/* Connections a client address holds (conns.c). */
typedef struct client_ent {
	uint32_t ip;
	unsigned n; /* 0: free slot */
} client_ent;

/* Token buckets, one per token id, in a small open-addressed table. */
typedef struct bucket {
	uint64_t id; /* 0: free slot */
	double tokens;
	uint64_t last_ns;
} bucket;

struct srv {
	srv_config cfg;
	cairn_store *st;
	cairn_embedder *emb;	/* the model that embeds query texts, or NULL */
	struct MHD_Daemon *d;
	/* The writer thread and the commits waiting for it. */
	pthread_t writer;
	pthread_mutex_t qlock;
	pthread_cond_t qcond;
	job *qhead, *qtail;
	int writer_running, writer_quit;
	volatile int stopping;	/* refusing new requests */
	/* Rate limits. */
	pthread_mutex_t rlock;
	bucket *buckets;
	size_t n_buckets;
	/* Access log. */
	FILE *log;
	int log_owned;
	pthread_mutex_t loglock;
	/* Metrics. */
	atomic_ullong requests, errors4, errors5, commits, commit_groups, commit_failed;
	atomic_ullong lat_bucket[12]; /* request latency histogram, see http.c */
	atomic_ullong lat_sum_us;
	atomic_uint inflight;
	_Atomic int64_t trimmed_ms; /* when free memory was last handed back (http.c) */
	int64_t started_ms;
	/* Connections (conns.c), under clock. */
	pthread_mutex_t clock;
	conn_ent *conns;
	unsigned n_conns;
	client_ent *clients;
	size_t n_clients, clients_used;
	pthread_t sweeper;
	pthread_cond_t sweep_cond;
	int sweeping, sweep_quit;
	atomic_ullong refused_client, closed_slow;
};

/* A request, from its first byte to its response. */
struct req {
	srv *s;
	struct MHD_Connection *conn;
	const char *method;
	char *path;		/* the path as received, before decoding */
	char *seg[MAX_SEGS];	/* decoded path segments */
	int nseg, path_ok;	/* path_ok: 0, or -1 no such path, -2 a bad escape */
	int nul_seg;		/* the segment that held %00 (cut short there), or -1 */
	buf body;
	int too_large, bad_framing;
	int early; /* answered from the headers, the body unread: the connection closes */
	arena mem;		/* parsed JSON and other per-request data */
	cairn_token_info tok;
	int authed;
	/* The response. */
	unsigned status;
	buf out;
	const char *ctype;
	char etag[40];
	uint64_t revision;	/* X-Cairn-Revision when non-zero */
	unsigned retry_after;
	/* A commit handed to the writer. */
	job *job;
	/* A streamed import (import.c), or a streamed request refused on its first call. */
	struct import_job *import;
	int refused;
	size_t streamed;	/* body bytes so far */
	const char *route;	/* for the access log */
	uint64_t t0;
	uint64_t deadline_ns;	/* reads that walk much (diffs, export) stop here; 0: never */
};

/* A commit waiting for the writer (writer.c). */
struct job {
	job *next;
	req *r;
	cairn_commit_options co;
	cairn_changeset *cs;
	cairn_commit_req cr;
	int done;
	/* What to answer once committed, written by the route. */
	void (*respond)(req *r, job *j);
};

/* http.c */
void reply_json(req *r, unsigned status); /* r->out holds the JSON */
void reply_error(req *r, unsigned status, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* The error of a library call (cairn_errmsg, cairn_errchange) with its HTTP status. */
void reply_cairn(req *r, int rc);
unsigned status_of(int rc);
/* Every query argument decodes, none to U+0000: 0, or -1 replied. */
int args_ok(req *r);
/* A query argument, decoded (NULL when absent). */
const char *arg(req *r, const char *name);
uint64_t now_ns(void);
/* The Prometheus text of the server's metrics. */
void metrics_text(srv *s, buf *b);

/* api.c */
void route(req *r);
/* The first call of a request: 1 if it is a streamed route (started, or refused in r). */
int route_stream(req *r);

/* What a route needs of the token (api_allow). */
enum need { NEED_NONE, NEED_READ, NEED_WRITE, NEED_ADMIN, NEED_ADMIN_ALL };

/* A list of items being written into r->out (api_w_item, and the lists of branches, proposals). */
struct items_out {
	req *r;
	int first, two_sided;
	int timed;	/* a read: stop at the request's deadline */
};

/*
 * The request's token for a Domain (NULL: any), a role (need), and for a write the branch
 * written (NULL: none yet): replied, -1, when refused.
 */
int api_allow(req *r, const char *domain, int need, const char *branch);
/* May the request's (checked) token write to branch? */
int api_may_write(const req *r, const char *branch);
/* The name the token signs with: its label, else "token". */
const char *api_identity(const req *r);
/* A decimal number without sign: 0, or -1 when s is not one. */
int api_parse_u64(const char *s, uint64_t *v);
/* A read transaction of ?branch= and ?at= on domain: 0, or -1 replied. */
int api_begin(req *r, const char *domain, cairn_txn **t);
/* A write's revision, as ETag and X-Cairn-Revision (a read of it then sees it). */
void api_written(req *r, uint64_t rev);
/* The reply of a read: JSON, with the revision read as ETag and header. */
void api_reply_read(req *r, cairn_txn *t);
/* ?limit= (def when absent), 1 to CAIRN_MAX_PAGE; -1 replied when bad. */
long api_limit_arg(req *r, long def);
/* ?valid_at= as an exclude of what was not true then into *x (*out NULL: none); -1 replied. */
int api_valid_at_arg(req *r, cairn_exclude *x, const cairn_exclude **out);
/* The request body as a JSON object, or NULL (replied). */
const jv *api_body_object(req *r);
/* Members of a body object: only the allowed names (-1 replied). */
int api_only(req *r, const jv *o, const char *const *names);
/* A string member (NULL when absent); -1 replied when present and not a string. */
int api_str_member(req *r, const jv *o, const char *name, const char **out);
/* An optional integer member in lo..hi (0 when absent); -1 replied when bad. */
int api_int_member(req *r, const jv *o, const char *name, long lo, long hi, long *out);
/* An optional boolean member (0 when absent); -1 replied when not a boolean. */
int api_bool_member(req *r, const jv *o, const char *name, int *out);
/* Provenance from a body's members: actor, source, confidence, message, trace_id (-1 replied). */
int api_provenance(req *r, const jv *o, cairn_commit_options *co);
/* "expect_revision": the head the write expects (-1 replied when not a revision). */
int api_expect_member(req *r, const jv *o, cairn_commit_options *co);
/* The answer of a read stopped at its deadline. */
void api_reply_timeout(req *r);
/* Is the request past its deadline? */
int api_past_deadline(const req *r);
/* A change item into ctx's list (a struct items_out); CAIRN_ELIMIT past a timed read's deadline. */
int api_w_item(void *ctx, const cairn_change_item *it);

/* The routes of api.c's table, by the file of their area. */
/* routes_domains.c */
void h_domains(req *r);
void h_domain_create(req *r);
void h_backup(req *r);
void h_domain_drop(req *r);
void h_schema_get(req *r);
void h_schema_put(req *r);
void h_reembed(req *r);
void h_compact(req *r);
void h_erase(req *r);
/* routes_records.c */
void h_record(req *r);
void h_page(req *r);
void h_links(req *r);
void h_counts(req *r);
void h_revisions(req *r);
void h_revision(req *r);
void h_revision_changes(req *r);
void h_history(req *r);
void h_lineage(req *r);
void h_link_history(req *r);
void h_export(req *r);
/* routes_commits.c */
void h_commit(req *r);
void h_branches(req *r);
void h_branch_create(req *r);
void h_branch_rename(req *r);
void h_branch_delete(req *r);
void h_diff(req *r);
void h_merge(req *r);
void h_proposals(req *r);
void h_proposal(req *r);
void h_propose(req *r);
void h_proposal_diff(req *r);
void h_proposal_note(req *r);
void h_proposal_accept(req *r);
void h_proposal_close(req *r);
/* routes_queries.c */
void h_query(req *r);
void h_query_count(req *r);
void h_neighborhood(req *r);
void h_follow(req *r);
void h_path(req *r);
void h_resolve(req *r);
void h_search(req *r);
void h_remember(req *r);
void h_retract(req *r);
void h_digest(req *r);
void h_recall(req *r);

/* import.c */
int import_start(req *r, int (*allow_write)(req *r, const char *domain, const char *branch));
void import_feed(req *r, const char *p, size_t n);
void import_finish(req *r, int answer);
extern const char openapi_json[];

/* writer.c */
int writer_start(srv *s);
void writer_stop(srv *s);
/* Queue j and suspend the request; the writer resumes it when j is done. */
void writer_submit(srv *s, job *j);

/* JSON output helpers (to r->out). */

/*
 * Connections (conns.c): the accept policy (--max-connections-per-client), libmicrohttpd's connection notifications,
 * the first request's headers arriving, and the sweeper that closes a
 * connection whose headers are not in --header-timeout after it connected.
 */
enum MHD_Result conns_accept(void *cls, const struct sockaddr *addr, socklen_t len);
void conns_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
		  enum MHD_ConnectionNotificationCode toe);
void conns_headers_in(srv *s, struct MHD_Connection *conn);
unsigned conns_open(srv *s);
/* The time a new connection has for its headers: header_timeout_s, or timeout_s. */
unsigned conns_header_timeout(const srv_config *c);
int conns_start(srv *s);
void conns_stop(srv *s);

#endif
