/*
 * The server: the store behind an HTTP/JSON API (docs/http.md). It uses the
 * store only through cairn.h, like any client, and the project's own JSON
 * reader and buffers for its requests and responses.
 */
#ifndef CAIRN_SERVER_H
#define CAIRN_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "cairn.h"
#include "base/buf.h"

typedef struct srv_config {
	const char *store;	  /* store directory */
	const char *host;	  /* address to listen on (default 127.0.0.1) */
	unsigned port;		  /* default 7411; 0 picks a free port (tests) */
	unsigned threads;	  /* request threads (0: one per core) */
	size_t max_body;	  /* bytes of a request body (default 16 MiB) */
	size_t max_import;	  /* bytes of an import body (default 1 GiB) */
	unsigned max_depth;	  /* JSON nesting of a request (default 32) */
	unsigned max_batch;	  /* changes per commit request (default 10,000) */
	unsigned max_conns;	  /* concurrent connections (default 1,000) */
	unsigned max_client_conns; /* of them from one client address (default 512; 0: no limit) */
	unsigned timeout_s;	  /* idle connection timeout (default 60 s) */
	unsigned header_timeout_s; /* until a request's headers are in (default 10 s; 0: timeout_s) */
	unsigned query_ms;	  /* time a read may take: diffs, changes, export (default 10 s; 0: none) */
	double rate;		  /* requests per token per second (0: no limit) */
	unsigned burst;		  /* requests a token may make at once (default 2 x rate) */
	unsigned group_max;	  /* commits per group commit (default 256) */
	const char *access_log;	  /* file for JSON access log lines; "-" stderr, NULL none */
	int nosync;		  /* do not fsync (tests) */
	const char *model;	  /* the embedder's model file for semantic and hybrid search (NULL: none) */
	int64_t retain_ms;	  /* > 0: compact every Domain to this retention, hourly (cairn_compact) */
	/* Set by server_start: the port it listens on. */
	unsigned bound_port;
} srv_config;

void srv_config_defaults(srv_config *c);

typedef struct srv srv;

/* Open the store and start serving in threads of the server's own. */
int server_start(const srv_config *c, srv **out);
/* Stop accepting, finish requests in flight and commits queued, then close. */
void server_stop(srv *s);
/* Run until SIGTERM or SIGINT (then stop gracefully). Returns an exit code. */
int server_run(srv_config *c);
/*
 * Why the calling thread's last server_start or server_run failed: the
 * server's own reason (an address it cannot listen on, an access log it
 * cannot open) or the library's (cairn_errmsg) for a store that does not
 * open. Never NULL. The server never writes the library's error detail.
 */
const char *server_errmsg(void);

#endif
