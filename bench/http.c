/*
 * The server, measured by clients in the same process over loopback with
 * keep-alive: the latency of a get by key beside the library's, reads per
 * second from several connections, durable single-Record commits per
 * second from 32 concurrent clients (group commit), and the memory an idle
 * connection costs.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bench/http.h"
#include "server/server.h"

unsigned server_port(const srv *s);

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int conn_open(unsigned port)
{
	struct sockaddr_in sa;
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	if (fd < 0)
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Send a request and read its whole response (Content-Length framing); the status, or -1. */
static int roundtrip(int fd, const char *req, size_t n, char *rbuf, size_t cap)
{
	size_t got = 0, head = 0, want = 0;
	int status;

	while (n) {
		ssize_t w = write(fd, req, n);

		if (w <= 0)
			return -1;
		req += w;
		n -= (size_t)w;
	}
	for (;;) {
		ssize_t r = read(fd, rbuf + got, cap - got - 1);
		char *end, *cl;

		if (r <= 0)
			return -1;
		got += (size_t)r;
		rbuf[got] = '\0';
		if (!head && (end = strstr(rbuf, "\r\n\r\n"))) {
			head = (size_t)(end - rbuf) + 4;
			cl = strcasestr(rbuf, "Content-Length:");
			want = head + (cl ? strtoul(cl + 15, NULL, 10) : 0);
		}
		if (head && got >= want)
			break;
		if (got + 1 >= cap) /* a body larger than the buffer: read and drop the rest */
			got = head = 0;
	}
	if (sscanf(rbuf, "HTTP/1.%*d %d", &status) != 1)
		return -1;
	return status;
}

typedef struct ctx {
	unsigned port;
	const char *token;
	const char *domain;
	char (*kinds)[64];
	char (*keys)[64];
	size_t n_keys;
	uint64_t stop_ns;
	/* per thread */
	uint64_t done, rng;
	double *lat;
	size_t n_lat, cap_lat;
	int commits, bad;
} ctx;

static uint64_t rnd(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static int get_req(ctx *c, size_t i, char *req, size_t cap)
{
	return snprintf(req, cap,
			"GET /v1/domains/%s/records/%s/%s HTTP/1.1\r\nHost: bench\r\n"
			"Authorization: Bearer %s\r\n\r\n",
			c->domain, c->kinds[i], c->keys[i], c->token);
}

static int commit_req(ctx *c, size_t i, uint64_t v, char *req, size_t cap)
{
	char body[256];
	int n = snprintf(body, sizeof(body),
			 "{\"changes\":[{\"kind\":\"Supplier\",\"key\":\"%s\",\"op\":\"patch\","
			 "\"values\":{\"rating\":%llu}}]}",
			 c->keys[i], (unsigned long long)v);

	return snprintf(req, cap,
			"POST /v1/domains/%s/commits HTTP/1.1\r\nHost: bench\r\n"
			"Authorization: Bearer %s\r\nContent-Type: application/json\r\n"
			"Content-Length: %d\r\n\r\n%s",
			c->domain, c->token, n, body);
}

static void *client(void *arg)
{
	ctx *c = arg;
	char req[1024], *rbuf = malloc(1 << 16);
	int fd = conn_open(c->port);

	if (fd < 0 || !rbuf) {
		c->bad++;
		free(rbuf);
		return NULL;
	}
	while (now_ns() < c->stop_ns) {
		size_t i = rnd(&c->rng) % c->n_keys;
		int n = c->commits ? commit_req(c, i, rnd(&c->rng) % 100000 + 1, req, sizeof(req))
				   : get_req(c, i, req, sizeof(req));
		uint64_t t0 = now_ns();
		int st = roundtrip(fd, req, (size_t)n, rbuf, 1 << 16);

		if (st != (c->commits ? 201 : 200)) {
			c->bad++;
			if (st < 0)
				break;
			continue;
		}
		if (c->n_lat < c->cap_lat)
			c->lat[c->n_lat++] = (double)(now_ns() - t0) / 1000.0;
		c->done++;
	}
	close(fd);
	free(rbuf);
	return NULL;
}

/* n threads for secs seconds; fills throughput and latency percentiles. */
static int load(ctx *proto, unsigned n, double secs, double *per_s, double pct[3])
{
	pthread_t *th = calloc(n, sizeof(*th));
	ctx *cs = calloc(n, sizeof(*cs));
	double *all;
	size_t total = 0, k = 0;
	uint64_t done = 0, t0;
	int bad = 0;

	if (!th || !cs)
		return -1;
	t0 = now_ns();
	for (unsigned i = 0; i < n; i++) {
		cs[i] = *proto;
		cs[i].rng = proto->rng + i * 7919;
		cs[i].stop_ns = t0 + (uint64_t)(secs * 1e9);
		cs[i].cap_lat = 1 << 20;
		cs[i].lat = malloc(cs[i].cap_lat * sizeof(double));
		pthread_create(&th[i], NULL, client, &cs[i]);
	}
	for (unsigned i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
		done += cs[i].done;
		total += cs[i].n_lat;
		bad += cs[i].bad;
	}
	*per_s = (double)done / ((double)(now_ns() - t0) / 1e9);
	all = malloc((total ? total : 1) * sizeof(double));
	for (unsigned i = 0; i < n; i++) {
		memcpy(all + k, cs[i].lat, cs[i].n_lat * sizeof(double));
		k += cs[i].n_lat;
		free(cs[i].lat);
	}
	qsort(all, total, sizeof(double), cmp_double);
	pct[0] = total ? all[total / 2] : 0;
	pct[1] = total ? all[(size_t)(total * 0.95)] : 0;
	pct[2] = total ? all[(size_t)(total * 0.99)] : 0;
	free(all);
	free(th);
	free(cs);
	if (bad)
		fprintf(stderr, "bench: %d requests failed\n", bad);
	return done ? 0 : -1;
}

static long rss_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

int http_bench(const http_bench_in *in, http_bench_out *out)
{
	srv_config cfg;
	srv *s;
	ctx c;
	double per_s, pct[3];
	int rc;

	memset(out, 0, sizeof(*out));
	srv_config_defaults(&cfg);
	cfg.store = in->store;
	cfg.port = 0;
	cfg.max_client_conns = 0; /* every client here is one address: the idle connections' 1000 */
	if ((rc = server_start(&cfg, &s)))
		return rc;
	memset(&c, 0, sizeof(c));
	c.port = server_port(s);
	c.token = in->token;
	c.domain = in->domain;
	c.kinds = in->kinds;
	c.keys = in->keys;
	c.n_keys = in->n_keys;
	c.rng = 12345;
	/* Latency of one client, one call at a time: warm-up, then the timed calls. */
	{
		double *lat = malloc(in->calls * sizeof(double));
		char req[1024], *rbuf = malloc(1 << 16);
		int fd = conn_open(c.port);

		if (!lat || !rbuf || fd < 0) {
			free(lat);
			free(rbuf);
			server_stop(s);
			return -1;
		}
		for (unsigned k = 0; k < in->warmup + in->calls; k++) {
			size_t i = rnd(&c.rng) % c.n_keys;
			int n = get_req(&c, i, req, sizeof(req));
			uint64_t t0 = now_ns();

			if (roundtrip(fd, req, (size_t)n, rbuf, 1 << 16) != 200)
				out->failed++;
			if (k >= in->warmup)
				lat[k - in->warmup] = (double)(now_ns() - t0) / 1000.0;
		}
		close(fd);
		qsort(lat, in->calls, sizeof(double), cmp_double);
		out->get_p50 = lat[in->calls / 2];
		out->get_p95 = lat[(size_t)(in->calls * 0.95)];
		out->get_p99 = lat[(size_t)(in->calls * 0.99)];
		free(lat);
		free(rbuf);
	}
	/* Reads per second from several connections. */
	out->read_conns = 8;
	if (load(&c, out->read_conns, 3.0, &per_s, pct) == 0)
		out->reads_per_s = per_s;
	/* Durable single-Record commits from 32 clients at once. */
	c.commits = 1;
	c.keys = in->supplier_keys;
	c.n_keys = in->n_supplier_keys;
	out->commit_conns = 32;
	if (load(&c, out->commit_conns, 3.0, &per_s, pct) == 0) {
		out->commits_per_s = per_s;
		out->commit_p50 = pct[0];
		out->commit_p95 = pct[1];
		out->commit_p99 = pct[2];
	}
	/* What an idle connection costs: 1,000 of them, each having made one request. */
	{
		unsigned n = 1000, open = 0;
		int *fds = calloc(n, sizeof(int));
		char req[1024], *rbuf = malloc(1 << 16);
		long before = rss_kb();

		c.commits = 0;
		c.keys = in->keys;
		c.n_keys = in->n_keys;
		for (unsigned i = 0; fds && rbuf && i < n; i++) {
			int len = get_req(&c, i % c.n_keys, req, sizeof(req));

			fds[i] = conn_open(c.port);
			if (fds[i] >= 0 && roundtrip(fds[i], req, (size_t)len, rbuf, 1 << 16) == 200)
				open++;
		}
		out->idle_conns = open;
		out->idle_conn_bytes = open ? (double)(rss_kb() - before) * 1024.0 / open : 0;
		for (unsigned i = 0; fds && i < n; i++)
			if (fds[i] > 0)
				close(fds[i]);
		free(fds);
		free(rbuf);
	}
	server_stop(s);
	return 0;
}
