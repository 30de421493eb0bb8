/*
 * HTTP: libmicrohttpd's threads (epoll, a pool of request threads) read the
 * requests; a request's body is collected up to its limit, then it is
 * routed (api.c) and answered, or, for a commit, handed to the writer
 * thread and its connection suspended until the commit is durable, so that
 * no request thread waits for the sync of a commit. (The rarer writes,
 * branches, merges, proposals and schema changes, run on the request
 * thread and wait for their own sync.)
 *
 * The path is split and percent-decoded here, segment by segment, so that a
 * branch name with a slash travels as one segment ("agent%2Fplanner-7").
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include "server/internal.h"
#include "base/alloc.h"
#include "base/err.h"
#include "base/text.h"

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void srv_config_defaults(srv_config *c)
{
	memset(c, 0, sizeof(*c));
	c->store = "./data";
	c->host = "127.0.0.1";
	c->port = 7411;
	c->max_body = 16u << 20;
	c->max_import = 1u << 30;
	c->max_depth = 32;
	c->max_batch = 10000;
	c->max_conns = 1000;
	c->max_client_conns = 512;
	c->timeout_s = 60;
	c->header_timeout_s = 10;
	c->query_ms = 10000;
	c->group_max = 256;
}

/* ----------------------------------------------------------- JSON out -- */

/* ------------------------------------------------------------ replies -- */

void reply_json(req *r, unsigned status)
{
	r->status = status;
	r->ctype = "application/json";
}

void reply_error(req *r, unsigned status, const char *code, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	buf_reset(&r->out);
	PUTS(&r->out, "{\"error\":{\"code\":");
	wire_cstr(&r->out, code);
	PUTS(&r->out, ",\"message\":");
	wire_cstr(&r->out, msg);
	PUTS(&r->out, "}}");
	reply_json(r, status);
}

unsigned status_of(int rc)
{
	return rc == CAIRN_OK ? 200 : wire_error_of(rc)->http;
}

void reply_cairn(req *r, int rc)
{
	const char *msg = cairn_errmsg();
	long change = cairn_errchange();

	buf_reset(&r->out);
	PUTS(&r->out, "{\"error\":{\"code\":");
	wire_cstr(&r->out, cairn_errname(rc));
	PUTS(&r->out, ",\"message\":");
	wire_cstr(&r->out, *msg ? msg : cairn_strerror(rc));
	if (change >= 0)
		buf_printf(&r->out, ",\"change\":%ld", change);
	PUTS(&r->out, "}}");
	reply_json(r, status_of(rc));
}

/* --------------------------------------------------------- arguments -- */

static int hexval(int c)
{
	return c >= '0' && c <= '9' ? c - '0'
	       : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10
				      : -1;
}

/*
 * Decode %HH (and, in query values, '+' as a space) in place: 0, -1 on a
 * bad escape, or ESC_NUL for %00, which a decoded C string could not hold
 * (the name would end there): it is refused, naming what held it.
 */
#define ESC_NUL (-2)
static int unescape(char *s, int plus)
{
	char *o = s;

	for (; *s; s++) {
		if (*s == '%') {
			int h = hexval((unsigned char)s[1]), l = h < 0 ? -1 : hexval((unsigned char)s[2]);

			if (h < 0 || l < 0)
				return -1;
			if (h == 0 && l == 0)
				return ESC_NUL;
			*o++ = (char)(h << 4 | l);
			s += 2;
		} else if (plus && *s == '+') {
			*o++ = ' ';
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
	return 0;
}

/* libmicrohttpd must not decode: the path is split before it is decoded. */
static size_t keep_escapes(void *cls, struct MHD_Connection *c, char *s)
{
	(void)cls;
	(void)c;
	return strlen(s);
}

/* The first query argument that does not decode: how (unescape's code), and its name. */
struct bad_arg {
	req *r;
	int rc, oom;
	const char *name;
};

static enum MHD_Result check_arg(void *cls, enum MHD_ValueKind kind, const char *key,
				 const char *value)
{
	struct bad_arg *b = cls;

	(void)kind;
	for (int i = 0; i < 2 && !b->rc; i++) {
		const char *v = i ? value : key;
		char *t = v ? arena_strndup(&b->r->mem, v, strlen(v)) : NULL;

		if (v && !t) {
			b->rc = b->oom = 1;
			break;
		}
		if (t && (b->rc = unescape(t, 1)) != 0)
			b->name = i ? key : NULL;
	}
	return b->rc ? MHD_NO : MHD_YES;
}

/*
 * Every query argument decodes (a bad escape is the client's mistake, told
 * as such): 0, or -1 replied.
 */
int args_ok(req *r)
{
	struct bad_arg b = {r, 0, 0, NULL};
	char *name;

	MHD_get_connection_values(r->conn, MHD_GET_ARGUMENT_KIND, check_arg, &b);
	if (b.rc == 0)
		return 0;
	if (b.oom) {
		reply_error(r, 503, cairn_errname(CAIRN_ENOMEM), "out of memory");
	} else if (b.rc != ESC_NUL) {
		reply_error(r, 400, E_FRAMING, "a bad percent-escape in the query");
	} else if (!b.name) {
		reply_error(r, 400, cairn_errname(CAIRN_EINVAL),
			    "a query argument's name " JSON_NUL_REFUSED);
	} else {
		/* The name as sent, decoded when it can be (it is in the answer, as JSON). */
		name = arena_strndup(&r->mem, b.name, strlen(b.name));
		if (name && unescape(name, 1))
			name = NULL;
		reply_error(r, 400, cairn_errname(CAIRN_EINVAL), "the query argument %s " JSON_NUL_REFUSED,
			    name ? name : b.name);
	}
	return -1;
}

const char *arg(req *r, const char *name)
{
	const char *v = MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, name);
	char *d;

	if (!v)
		return NULL;
	d = arena_strndup(&r->mem, v, strlen(v));
	if (!d || unescape(d, 1))
		return "\x01"; /* never a valid value: refused by whoever reads it */
	return d;
}

static int split_path(req *r, const char *url)
{
	char *p;

	r->path = arena_strndup(&r->mem, url, strlen(url));
	p = arena_strndup(&r->mem, url, strlen(url));
	if (!r->path || !p)
		return -1;
	if (*p == '/')
		p++;
	r->nseg = 0;
	while (*p) {
		char *slash = strchr(p, '/');

		if (r->nseg == MAX_SEGS)
			return -1;
		if (slash)
			*slash = '\0';
		if (!*p)
			return -1;
		switch (unescape(p, 0)) {
		case 0:
			break;
		case ESC_NUL: /* routed, then refused naming the segment (route) */
			if (r->nul_seg < 0)
				r->nul_seg = r->nseg;
			break;
		default:
			return -2; /* a bad percent-escape */
		}
		r->seg[r->nseg++] = p;
		if (!slash)
			break;
		p = slash + 1;
		if (!*p) /* a trailing slash */
			return -1;
	}
	return 0;
}

/* ------------------------------------------------------------ metrics -- */

static const unsigned lat_edges_us[11] = {50, 100, 250, 500, 1000, 2500, 5000, 10000, 25000,
					  100000, 1000000};

static void observe(srv *s, req *r)
{
	uint64_t us = (now_ns() - r->t0) / 1000;
	int b = 0;

	while (b < 11 && us > lat_edges_us[b])
		b++;
	atomic_fetch_add(&s->lat_bucket[b], 1);
	atomic_fetch_add(&s->lat_sum_us, us);
	atomic_fetch_add(&s->requests, 1);
	if (r->status >= 500)
		atomic_fetch_add(&s->errors5, 1);
	else if (r->status >= 400)
		atomic_fetch_add(&s->errors4, 1);
	if (s->log) {
		char t[48];

		time_format_ms(time_now_ms(), t);
		pthread_mutex_lock(&s->loglock);
		fprintf(s->log, "{\"time\":\"%s\",\"method\":\"%s\",\"path\":", t, r->method);
		{
			buf pb = BUF_INIT;

			wire_cstr(&pb, r->path ? r->path : "");
			fwrite(pb.p, 1, pb.len, s->log);
			buf_release(&pb);
		}
		fprintf(s->log, ",\"status\":%u,\"us\":%llu,\"bytes\":%zu,\"token\":%llu}\n", r->status,
			(unsigned long long)us, r->out.len,
			(unsigned long long)(r->authed ? r->tok.id : 0));
		fflush(s->log);
		pthread_mutex_unlock(&s->loglock);
	}
}

void metrics_text(srv *s, buf *b)
{
	unsigned long long cum = 0;
	cairn_db_stats d[16];
	size_t n = 0;
	uint64_t bytes = 0;

	buf_printf(b, "# HELP cairn_requests_total HTTP requests answered.\n"
		      "# TYPE cairn_requests_total counter\n"
		      "cairn_requests_total %llu\n",
		   (unsigned long long)atomic_load(&s->requests));
	buf_printf(b, "# HELP cairn_request_errors_total Requests answered with an error.\n"
		      "# TYPE cairn_request_errors_total counter\n"
		      "cairn_request_errors_total{class=\"4xx\"} %llu\n"
		      "cairn_request_errors_total{class=\"5xx\"} %llu\n",
		   (unsigned long long)atomic_load(&s->errors4),
		   (unsigned long long)atomic_load(&s->errors5));
	buf_printf(b, "# HELP cairn_request_seconds Time from a request's first byte to its answer.\n"
		      "# TYPE cairn_request_seconds histogram\n");
	for (int i = 0; i < 12; i++) {
		cum += atomic_load(&s->lat_bucket[i]);
		if (i < 11)
			buf_printf(b, "cairn_request_seconds_bucket{le=\"%g\"} %llu\n",
				   lat_edges_us[i] / 1e6, cum);
		else
			buf_printf(b, "cairn_request_seconds_bucket{le=\"+Inf\"} %llu\n", cum);
	}
	buf_printf(b, "cairn_request_seconds_sum %g\ncairn_request_seconds_count %llu\n",
		   (double)atomic_load(&s->lat_sum_us) / 1e6, cum);
	buf_printf(b, "# HELP cairn_commits_total Commit requests made durable by the writer.\n"
		      "# TYPE cairn_commits_total counter\n"
		      "cairn_commits_total %llu\n"
		      "# HELP cairn_commits_failed_total Commit requests the writer refused (validation).\n"
		      "# TYPE cairn_commits_failed_total counter\n"
		      "cairn_commits_failed_total %llu\n"
		      "# HELP cairn_commit_groups_total Durable transactions of the writer.\n"
		      "# TYPE cairn_commit_groups_total counter\n"
		      "cairn_commit_groups_total %llu\n",
		   (unsigned long long)atomic_load(&s->commits),
		   (unsigned long long)atomic_load(&s->commit_failed),
		   (unsigned long long)atomic_load(&s->commit_groups));
	buf_printf(b, "# HELP cairn_connections_open Connections open now.\n"
		      "# TYPE cairn_connections_open gauge\n"
		      "cairn_connections_open %u\n"
		      "# HELP cairn_connections_refused_total Connections refused as they were accepted.\n"
		      "# TYPE cairn_connections_refused_total counter\n"
		      "cairn_connections_refused_total{reason=\"per_client\"} %llu\n"
		      "# HELP cairn_connections_closed_slow_total Connections closed for not sending "
		      "their headers in time.\n"
		      "# TYPE cairn_connections_closed_slow_total counter\n"
		      "cairn_connections_closed_slow_total %llu\n",
		   conns_open(s), (unsigned long long)atomic_load(&s->refused_client),
		   (unsigned long long)atomic_load(&s->closed_slow));
	buf_printf(b, "# HELP cairn_requests_in_flight Requests being answered.\n"
		      "# TYPE cairn_requests_in_flight gauge\n"
		      "cairn_requests_in_flight %u\n",
		   atomic_load(&s->inflight));
	if (cairn_store_stats(s->st, d, 16, &n) == 0) {
		buf_printf(b, "# HELP cairn_store_bytes Bytes of B-tree pages in use, by sub-database.\n"
			      "# TYPE cairn_store_bytes gauge\n");
		for (size_t i = 0; i < n; i++) {
			buf_printf(b, "cairn_store_bytes{db=\"%s\"} %llu\n", d[i].name,
				   (unsigned long long)d[i].bytes);
			bytes += d[i].bytes;
		}
		buf_printf(b, "cairn_store_bytes{db=\"all\"} %llu\n", (unsigned long long)bytes);
	}
	buf_printf(b, "# HELP cairn_uptime_seconds Seconds since the server started.\n"
		      "# TYPE cairn_uptime_seconds gauge\n"
		      "cairn_uptime_seconds %lld\n",
		   (long long)((time_now_ms() - s->started_ms) / 1000));
}

/* ----------------------------------------------------------- requests -- */

static enum MHD_Result answer(req *r)
{
	struct MHD_Response *resp;
	char *body;
	size_t len = r->out.len;

	if (r->out.oom) {
		buf_reset(&r->out);
		reply_error(r, 503, cairn_errname(CAIRN_ENOMEM), "out of memory");
		len = r->out.len;
	}
	body = (char *)r->out.p;
	resp = MHD_create_response_from_buffer(len, len ? body : (char *)"", MHD_RESPMEM_MUST_COPY);
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, "Content-Type",
				r->ctype ? r->ctype : "application/json");
	MHD_add_response_header(resp, "Cache-Control", "no-store");
	if (r->etag[0])
		MHD_add_response_header(resp, "ETag", r->etag);
	if (r->revision) {
		char rv[24];

		snprintf(rv, sizeof(rv), "%llu", (unsigned long long)r->revision);
		MHD_add_response_header(resp, "X-Cairn-Revision", rv);
	}
	/*
	 * Answered from the headers: the body is not read, so the connection
	 * ends with the answer. For two framings (Content-Length and
	 * Transfer-Encoding) what follows the body cannot be told from a
	 * request (RFC 9112, 6.1): a smuggled second request is never read.
	 */
	if (r->early)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
	if (r->retry_after) {
		char ra[16];

		snprintf(ra, sizeof(ra), "%u", r->retry_after);
		MHD_add_response_header(resp, "Retry-After", ra);
	}
	{
		enum MHD_Result ret = MHD_queue_response(r->conn, r->status ? r->status : 500, resp);

		MHD_destroy_response(resp);
		return ret;
	}
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **req_cls)
{
	srv *s = cls;
	req *r = *req_cls;

	(void)version;
	if (!r) {
		const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
		const char *te = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
							     "Transfer-Encoding");

		r = cr_calloc(1, sizeof(*r));
		if (!r)
			return MHD_NO;
		/* Its headers are in: from now on the connection may idle --timeout. */
		conns_headers_in(s, conn);
		if (conns_header_timeout(&s->cfg) != s->cfg.timeout_s)
			MHD_set_connection_option(conn, MHD_CONNECTION_OPTION_TIMEOUT,
						  (unsigned)s->cfg.timeout_s);
		r->s = s;
		r->conn = conn;
		r->method = method;
		r->t0 = now_ns();
		r->nul_seg = -1;
		atomic_fetch_add(&s->inflight, 1);
		*req_cls = r;
		/*
		 * What the headers alone refuse is answered now, before any of
		 * the body is read (and without a 100 Continue for it), and the
		 * connection closes with the answer: the body is never read.
		 */
		if (cl && te) { /* two framings: a request smuggling attempt, or a broken client */
			r->bad_framing = r->early = 1;
			r->path = arena_strndup(&r->mem, url, strlen(url)); /* for the access log */
			reply_error(r, 400, E_FRAMING,
				    "a request has either Content-Length or Transfer-Encoding, not both");
			return answer(r);
		}
		if ((r->path_ok = split_path(r, url)) == 0 && !s->stopping && route_stream(r)) {
			/* Streamed: the import runs as the body arrives, unless it is said too large. */
			if (cl && strtoull(cl, NULL, 10) > s->cfg.max_import && r->import) {
				import_finish(r, 0);
				r->refused = r->too_large = r->early = 1;
				reply_error(r, 413, E_BODY, "an import body is at most %zu bytes",
					    s->cfg.max_import);
				return answer(r);
			}
			return MHD_YES;
		}
		if (cl && strtoull(cl, NULL, 10) > s->cfg.max_body) {
			r->too_large = r->early = 1;
			if (!r->path)
				r->path = arena_strndup(&r->mem, url, strlen(url));
			reply_error(r, 413, E_BODY, "the request body is larger than %zu bytes",
				    s->cfg.max_body);
			return answer(r);
		}
		return MHD_YES;
	}
	if (*upload_size && (r->import || r->refused)) {
		r->streamed += *upload_size;
		if (r->streamed > s->cfg.max_import)
			r->too_large = 1;
		else if (r->import)
			import_feed(r, upload, *upload_size);
		*upload_size = 0;
		return MHD_YES;
	}
	if (r->import) {
		import_finish(r, 1);
		if (r->too_large)
			reply_error(r, 413, E_BODY, "an import body is at most %zu bytes (the batches "
						    "committed before stay)",
				    s->cfg.max_import);
		return answer(r);
	}
	if (r->refused)
		return answer(r);
	if (*upload_size) {
		if (!r->too_large && !r->bad_framing) {
			if (r->body.len + *upload_size > s->cfg.max_body) {
				r->too_large = 1;
				buf_release(&r->body);
			} else {
				buf_put(&r->body, upload, *upload_size);
			}
		}
		*upload_size = 0;
		return MHD_YES;
	}
	if (r->job) { /* resumed by the writer: the commit is done */
		r->job->respond(r, r->job);
		return answer(r);
	}
	if (r->bad_framing)
		reply_error(r, 400, E_FRAMING,
			    "a request has either Content-Length or Transfer-Encoding, not both");
	else if (r->too_large)
		reply_error(r, 413, E_BODY, "the request body is larger than %zu bytes",
			    s->cfg.max_body);
	else if (r->body.oom)
		reply_error(r, 503, cairn_errname(CAIRN_ENOMEM), "out of memory");
	else if (r->path_ok == -2)
		reply_error(r, 400, E_FRAMING, "a bad percent-escape in the path");
	else if (args_ok(r))
		; /* replied */
	else if (r->path_ok < 0)
		reply_error(r, 404, E_ROUTE, "no such path");
	else if (s->stopping)
		reply_error(r, 503, E_SHUTDOWN, "the server is shutting down");
	else {
		r->deadline_ns = s->cfg.query_ms ? now_ns() + (uint64_t)s->cfg.query_ms * 1000000u : 0;
		route(r);
	}
	if (r->job) /* handed to the writer, which resumes the connection */
		return MHD_YES;
	return answer(r);
}

/*
 * The server went idle: hand the allocator's free memory back to the
 * system, at most once a second. Without it, what a storm of large
 * requests allocated stays resident in glibc's per-thread arenas.
 */
static void idle_trim(srv *s)
{
#ifdef __GLIBC__
	int64_t now = time_now_ms(), last = atomic_load(&s->trimmed_ms);

	if (now - last >= 1000 && atomic_compare_exchange_strong(&s->trimmed_ms, &last, now))
		malloc_trim(0);
#else
	(void)s;
#endif
}

static void on_done(void *cls, struct MHD_Connection *conn, void **req_cls,
		    enum MHD_RequestTerminationCode toe)
{
	srv *s = cls;
	req *r = *req_cls;

	(void)conn;
	(void)toe;
	if (!r)
		return;
	import_finish(r, 0); /* a request cut short: its import commits nothing more */
	observe(s, r);
	if (r->job) {
		cairn_changeset_free(r->job->cs);
		cr_free(r->job);
	}
	buf_release(&r->body);
	buf_release(&r->out);
	arena_release(&r->mem);
	cr_free(r);
	*req_cls = NULL;
	if (atomic_fetch_sub(&s->inflight, 1) == 1)
		idle_trim(s);
}

/* ------------------------------------------------------------- server -- */

static _Thread_local char start_error[512];

const char *server_errmsg(void)
{
	return start_error;
}

/* Fail server_start with rc: the reason given, or the library's (fmt NULL). */
static int start_fail(int rc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int start_fail(int rc, const char *fmt, ...)
{
	va_list ap;

	if (!fmt) {
		snprintf(start_error, sizeof(start_error), "%s",
			 *cairn_errmsg() ? cairn_errmsg() : cairn_strerror(rc));
		return rc;
	}
	va_start(ap, fmt);
	vsnprintf(start_error, sizeof(start_error), fmt, ap);
	va_end(ap);
	return rc;
}

int server_start(const srv_config *c, srv **out)
{
	cairn_open_options oo = {0};
	struct sockaddr_in sa;
	const union MHD_DaemonInfo *di;
	srv *s;
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned threads;
	int rc;

	*out = NULL;
	start_error[0] = '\0';
	s = cr_calloc(1, sizeof(*s));
	if (!s)
		return start_fail(CAIRN_ENOMEM, "out of memory");
	s->cfg = *c;
	s->started_ms = time_now_ms();
	pthread_mutex_init(&s->qlock, NULL);
	pthread_cond_init(&s->qcond, NULL);
	pthread_mutex_init(&s->rlock, NULL);
	pthread_mutex_init(&s->loglock, NULL);
	oo.flags = c->nosync ? CAIRN_OPEN_NOSYNC : 0; /* with the maintenance thread */
	oo.retain_ms = c->retain_ms;		       /* which compacts, if asked */
	if ((rc = cairn_open(c->store, &oo, &s->st))) {
		cr_free(s);
		return start_fail(rc, NULL);
	}
	if (c->model && (rc = cairn_embedder_open(c->model, &s->emb))) {
		start_fail(rc, NULL);
		goto fail;
	}
	if (c->access_log) {
		if (strcmp(c->access_log, "-") == 0) {
			s->log = stderr;
		} else if ((s->log = fopen(c->access_log, "a"))) {
			s->log_owned = 1;
		} else {
			rc = start_fail(CAIRN_EIO, "cannot open the access log %s: %s",
					c->access_log, strerror(errno));
			goto fail;
		}
	}
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)c->port);
	if (inet_pton(AF_INET, c->host, &sa.sin_addr) != 1) {
		rc = start_fail(CAIRN_EINVAL,
				"cannot listen on \"%s\": an IPv4 address is expected", c->host);
		goto fail;
	}
	if ((rc = writer_start(s))) {
		start_fail(rc, "cannot start the writer thread");
		goto fail;
	}
	threads = c->threads ? c->threads : (unsigned)(cores > 0 ? cores : 1);
	/* A pool of one is no pool: libmicrohttpd wants 0 then. Malformed requests are answered, not logged. */
	if (conns_start(s)) {
		writer_stop(s);
		rc = start_fail(CAIRN_EIO, "cannot start the connection sweeper thread");
		goto fail;
	}
	/* conns.c refuses a client's connections over its limit; the daemon keeps the total. */
	s->d = MHD_start_daemon(MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME, 0,
				conns_accept, s, on_request, s, MHD_OPTION_SOCK_ADDR, &sa,
				MHD_OPTION_THREAD_POOL_SIZE, threads > 1 ? threads : 0,
				MHD_OPTION_CONNECTION_LIMIT, c->max_conns,
				MHD_OPTION_CONNECTION_TIMEOUT, conns_header_timeout(c),
				MHD_OPTION_NOTIFY_CONNECTION, conns_notify, s,
				MHD_OPTION_NOTIFY_COMPLETED, on_done, s,
				MHD_OPTION_UNESCAPE_CALLBACK, keep_escapes, NULL,
				MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)65536, MHD_OPTION_END);
	if (!s->d) {
		conns_stop(s);
		writer_stop(s);
		rc = start_fail(CAIRN_EIO, "cannot listen on %s:%u (in use, or not allowed)",
				c->host, c->port);
		goto fail;
	}
	di = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
	s->cfg.bound_port = di ? di->port : c->port;
	*out = s;
	return 0;
fail:
	if (s->log_owned)
		fclose(s->log);
	cairn_embedder_close(s->emb);
	cairn_close(s->st);
	cr_free(s);
	return rc;
}

unsigned server_port(const srv *s);
unsigned server_port(const srv *s)
{
	return s->cfg.bound_port;
}

void server_stop(srv *s)
{
	struct timespec ts = {0, 2000000};

	if (!s)
		return;
	/* No new connections; answer what is in flight (commits included), then stop. */
	s->stopping = 1;
	MHD_quiesce_daemon(s->d);
	for (int i = 0; i < 15000 && atomic_load(&s->inflight) > 0; i++)
		nanosleep(&ts, NULL);
	MHD_stop_daemon(s->d);
	conns_stop(s);
	writer_stop(s);
	if (s->log_owned)
		fclose(s->log);
	cairn_close(s->st);
	cairn_embedder_close(s->emb);
	free(s->buckets);
	pthread_mutex_destroy(&s->qlock);
	pthread_cond_destroy(&s->qcond);
	pthread_mutex_destroy(&s->rlock);
	pthread_mutex_destroy(&s->loglock);
	cr_free(s);
}

int server_run(srv_config *c)
{
	sigset_t set;
	srv *s;
	int sig, rc;

	/* The signals wait for this thread; every thread started from here blocks them. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	if ((rc = server_start(c, &s)))
		return rc;
	c->bound_port = s->cfg.bound_port;
	fprintf(stderr, "cairn: serving %s on http://%s:%u/v1/ (pid %ld)\n", c->store, c->host,
		c->bound_port, (long)getpid());
	sigwait(&set, &sig);
	fprintf(stderr, "cairn: %s: finishing requests in flight, then stopping\n",
		sig == SIGTERM ? "SIGTERM" : "SIGINT");
	server_stop(s);
	return 0;
}
