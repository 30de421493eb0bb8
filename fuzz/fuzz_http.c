/*
 * libFuzzer target: the HTTP request path of the server, whole: each input
 * is sent as raw bytes on a connection to a server running in this process
 * (libmicrohttpd's parser, the framing and size checks, path decoding,
 * routing, the token check and the route itself). "TOKEN" in an input is
 * replaced by a writer token of the store, so that inputs reach the routes
 * past the token check. Whatever comes back must be an HTTP response.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cairn.h"
#include "server/server.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
unsigned server_port(const srv *s);

static srv *server;
static char token[CAIRN_TOKEN_MAX];

static void cleanup(void)
{
	server_stop(server);
}

static void start(void)
{
	static const char schema[] =
		"{\"kinds\":[{\"name\":\"Supplier\",\"attributes\":[{\"name\":\"country\",\"type\":"
		"\"string\"}]},{\"name\":\"Part\"}],\"relations\":[{\"name\":\"supplied_by\","
		"\"from\":\"Part\",\"to\":\"Supplier\"}]}";
	cairn_open_options o = {.flags = CAIRN_OPEN_CREATE | CAIRN_OPEN_NOSYNC | CAIRN_OPEN_NO_BACKGROUND};
	cairn_commit_options co = {0};
	static char dir[] = "/tmp/cairn-fuzz-http-XXXXXX";
	srv_config c;
	cairn_store *st;
	uint64_t id;

	signal(SIGPIPE, SIG_IGN);
	if (!mkdtemp(dir) || cairn_open(dir, &o, &st) || cairn_domain_create(st, "d"))
		abort();
	co.domain = "d";
	if (cairn_schema_apply(st, &co, schema, strlen(schema), NULL) ||
	    cairn_token_create(st, "d", CAIRN_ROLE_WRITER, NULL, "fuzz", token, sizeof(token), &id))
		abort();
	cairn_close(st);
	srv_config_defaults(&c);
	c.store = dir;
	c.port = 0;
	c.threads = 1;
	c.nosync = 1;
	c.timeout_s = 1;
	c.max_body = 1 << 16;
	if (server_start(&c, &server))
		abort();
	atexit(cleanup);
}

/*
 * The length of the answer that starts reply[0..n-1] when its headers are
 * all there and say it (Content-Length), else 0: the harness need not wait
 * for the server to close the connection after it.
 */
static size_t answer_length(char *reply, size_t n)
{
	char *end, *cl;

	reply[n] = '\0';
	if (memchr(reply, '\0', n) || !(end = strstr(reply, "\r\n\r\n")))
		return 0;
	*end = '\0';
	cl = strcasestr(reply, "\r\nContent-Length:");
	*end = '\r';
	if (!cl)
		return 0;
	return (size_t)(end + 4 - reply) + strtoul(cl + 17, NULL, 10);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sockaddr_in sa;
	char *msg, reply[1024];
	size_t n = 0, got = 0, tokens = 0;
	int fd;

	if (!server)
		start();
	for (size_t i = 0; i + 5 <= size; i++) /* each TOKEN grows to the token's length */
		if (memcmp(data + i, "TOKEN", 5) == 0) {
			tokens++;
			i += 4;
		}
	if (!(msg = malloc(size + tokens * strlen(token) + 1)))
		return 0;
	for (size_t i = 0; i < size; i++) {
		if (i + 5 <= size && memcmp(data + i, "TOKEN", 5) == 0) {
			memcpy(msg + n, token, strlen(token));
			n += strlen(token);
			i += 4;
		} else {
			msg[n++] = (char)data[i];
		}
	}
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)server_port(server));
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		if (fd >= 0)
			close(fd);
		free(msg);
		return 0;
	}
	(void)!write(fd, msg, n);
	shutdown(fd, SHUT_WR);
	for (size_t total = 0, whole = 0;;) {
		struct pollfd p = {fd, POLLIN, 0};
		ssize_t r;

		/* The answer's first bytes may take a while; once they came, what follows is near. */
		if (poll(&p, 1, got ? 50 : 2000) <= 0)
			break;
		if (got < sizeof(reply) - 1) {
			r = read(fd, reply + got, sizeof(reply) - 1 - got);
			if (r > 0)
				got += (size_t)r;
		} else { /* the start is kept; the rest is read and dropped */
			char rest[4096];

			r = read(fd, rest, sizeof(rest));
		}
		if (r <= 0)
			break;
		total += (size_t)r;
		if (!whole) /* a first answer of known length ends once it is all here */
			whole = answer_length(reply, got);
		if (whole && total >= whole)
			break;
	}
	close(fd);
	free(msg);
	/* Nothing, or an HTTP response: never anything else. */
	if (got && (got < 12 || memcmp(reply, "HTTP/1.", 7) != 0))
		abort();
	return 0;
}
