/* The server's parts: requests and responses (http.c), routes (api.c), the writer (writer.c). */
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
	int64_t started_ms;
};

/* A request, from its first byte to its response. */
struct req {
	srv *s;
	struct MHD_Connection *conn;
	const char *method;
	char *path;		/* the path as received, before decoding */
	char *seg[MAX_SEGS];	/* decoded path segments */
	int nseg, path_ok;	/* path_ok: 0, or -1 no such path, -2 a bad escape */
	buf body;
	int too_large, bad_framing;
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
/* A query argument, decoded (NULL when absent). */
const char *arg(req *r, const char *name);
uint64_t now_ns(void);
/* The Prometheus text of the server's metrics. */
void metrics_text(srv *s, buf *b);

/* api.c */
void route(req *r);
/* The first call of a request: 1 if it is a streamed route (started, or refused in r). */
int route_stream(req *r);

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

#endif
