/*
 * The server's connections: how many each client (source address) holds,
 * and how long each new one has taken to send its first request's headers.
 *
 * libmicrohttpd's own limits are a total, and a timeout that a byte of
 * activity renews: one client could take every connection, and a client
 * that drips its headers a byte at a time kept its connection for ever.
 * Here every connection is registered when it starts and removed when it
 * closes (libmicrohttpd's connection notifications); the accept policy
 * refuses one over the client's --max-connections-per-client (over
 * --max-connections, libmicrohttpd stops accepting until there is room); and a sweeper thread shuts down, four times
 * a second, each connection whose headers are not in --header-timeout after
 * it connected. The sweeper shuts a socket down under the lock the close
 * notification takes, before libmicrohttpd closes the descriptor, so it never
 * touches a descriptor that was reused. Each refusal and each such closing
 * is counted for the metrics.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "base/alloc.h"
#include "base/text.h"
#include "server/internal.h"

struct conn_ent {
	conn_ent *prev, *next;
	int fd;
	uint32_t ip;	  /* the client's IPv4 address, network order */
	uint16_t port;	  /* and port: the sweeper makes sure fd is still this connection */
	int64_t t0_ms;	  /* when it connected */
	int headers;	  /* its first request's headers are in */
	int shut;	  /* the sweeper shut it down */
};

/* The slot of ip in the table of clients (open addressing, linear probing). */
static size_t client_slot(const srv *s, uint32_t ip)
{
	size_t i = (size_t)(hash64(&ip, 4) & (s->n_clients - 1));

	while (s->clients[i].n && s->clients[i].ip != ip)
		i = (i + 1) & (s->n_clients - 1);
	return i;
}

static unsigned client_count(const srv *s, uint32_t ip)
{
	return s->n_clients ? s->clients[client_slot(s, ip)].n : 0;
}

/* Count one more connection of ip; 0, or -1 out of memory (not counted). */
static int client_add(srv *s, uint32_t ip)
{
	size_t i;

	if (2 * (s->clients_used + 1) > s->n_clients) {
		size_t old_n = s->n_clients, n = old_n ? old_n * 2 : 64;
		client_ent *old = s->clients, *t = cr_calloc(n, sizeof(*t));

		if (!t)
			return -1;
		s->clients = t;
		s->n_clients = n;
		/* Rehash: removals leave no tombstones, so every live entry moves. */
		for (size_t j = 0; j < old_n; j++)
			if (old[j].n)
				s->clients[client_slot(s, old[j].ip)] = old[j];
		cr_free(old);
	}
	i = client_slot(s, ip);
	if (!s->clients[i].n) {
		s->clients[i].ip = ip;
		s->clients_used++;
	}
	s->clients[i].n++;
	return 0;
}

/* One connection of ip fewer; an entry that reaches 0 is removed, its cluster re-placed. */
static void client_remove(srv *s, uint32_t ip)
{
	size_t i, mask = s->n_clients - 1;

	if (!s->n_clients)
		return;
	i = client_slot(s, ip);
	if (!s->clients[i].n || --s->clients[i].n)
		return;
	s->clients_used--;
	for (size_t j = (i + 1) & mask; s->clients[j].n; j = (j + 1) & mask) {
		client_ent e = s->clients[j];

		s->clients[j].n = 0;
		s->clients[client_slot(s, e.ip)] = e;
	}
}

static uint32_t addr_ip(const struct sockaddr *a)
{
	return a && a->sa_family == AF_INET ? ((const struct sockaddr_in *)a)->sin_addr.s_addr : 0;
}

static uint16_t addr_port(const struct sockaddr *a)
{
	return a && a->sa_family == AF_INET ? ((const struct sockaddr_in *)a)->sin_port : 0;
}

/*
 * Shut e's socket down, if its descriptor is still e's connection (the
 * same peer): never a descriptor that was closed and given to another.
 */
static int shut(conn_ent *e)
{
	struct sockaddr_in peer;
	socklen_t len = sizeof(peer);

	if (getpeername(e->fd, (struct sockaddr *)&peer, &len) != 0 || peer.sin_family != AF_INET ||
	    peer.sin_addr.s_addr != e->ip || peer.sin_port != e->port)
		return 0;
	shutdown(e->fd, SHUT_RDWR);
	e->shut = 1;
	return 1;
}

enum MHD_Result conns_accept(void *cls, const struct sockaddr *addr, socklen_t len)
{
	srv *s = cls;
	enum MHD_Result ok = MHD_YES;

	(void)len;
	/*
	 * Over --max-connections, libmicrohttpd itself stops accepting: a new
	 * connection waits in the listen queue for room instead of being closed.
	 */
	pthread_mutex_lock(&s->clock);
	if (s->cfg.max_client_conns &&
	    client_count(s, addr_ip(addr)) >= s->cfg.max_client_conns) {
		atomic_fetch_add(&s->refused_client, 1);
		ok = MHD_NO;
	}
	pthread_mutex_unlock(&s->clock);
	return ok;
}

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void conns_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
		  enum MHD_ConnectionNotificationCode toe)
{
	srv *s = cls;
	conn_ent *e = *socket_context;

	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *fd =
			MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
		const union MHD_ConnectionInfo *ca =
			MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);

		if (!(e = cr_calloc(1, sizeof(*e))))
			return; /* not tracked: neither counted nor swept */
		e->fd = fd ? fd->connect_fd : -1;
		e->ip = addr_ip(ca ? ca->client_addr : NULL);
		e->port = addr_port(ca ? ca->client_addr : NULL);
		e->t0_ms = mono_ms();
		pthread_mutex_lock(&s->clock);
		if (client_add(s, e->ip)) {
			pthread_mutex_unlock(&s->clock);
			cr_free(e);
			return;
		}
		e->next = s->conns;
		if (s->conns)
			s->conns->prev = e;
		s->conns = e;
		s->n_conns++;
		pthread_mutex_unlock(&s->clock);
		*socket_context = e;
		return;
	}
	if (toe != MHD_CONNECTION_NOTIFY_CLOSED || !e)
		return;
	pthread_mutex_lock(&s->clock);
	if (e->prev)
		e->prev->next = e->next;
	else
		s->conns = e->next;
	if (e->next)
		e->next->prev = e->prev;
	s->n_conns--;
	client_remove(s, e->ip);
	pthread_mutex_unlock(&s->clock);
	cr_free(e);
	*socket_context = NULL;
}

void conns_headers_in(srv *s, struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	conn_ent *e = ci ? ci->socket_context : NULL;

	if (e && !e->headers) {
		pthread_mutex_lock(&s->clock);
		e->headers = 1;
		pthread_mutex_unlock(&s->clock);
	}
}

unsigned conns_open(srv *s)
{
	unsigned n;

	pthread_mutex_lock(&s->clock);
	n = s->n_conns;
	pthread_mutex_unlock(&s->clock);
	return n;
}

unsigned conns_header_timeout(const srv_config *c)
{
	if (!c->header_timeout_s || !c->timeout_s || c->header_timeout_s > c->timeout_s)
		return c->timeout_s;
	return c->header_timeout_s;
}

static void *sweeper(void *arg)
{
	srv *s = arg;
	int64_t limit = (int64_t)conns_header_timeout(&s->cfg) * 1000;

	pthread_mutex_lock(&s->clock);
	while (!s->sweep_quit) {
		struct timespec until;
		int64_t now;

		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_nsec += 250000000;
		if (until.tv_nsec >= 1000000000) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&s->sweep_cond, &s->clock, &until);
		now = mono_ms();
		for (conn_ent *e = s->conns; e && !s->sweep_quit; e = e->next)
			if (!e->headers && !e->shut && e->fd >= 0 && now - e->t0_ms >= limit && shut(e))
				atomic_fetch_add(&s->closed_slow, 1);
	}
	pthread_mutex_unlock(&s->clock);
	return NULL;
}

int conns_start(srv *s)
{
	pthread_condattr_t ca;

	pthread_mutex_init(&s->clock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->sweep_cond, &ca);
	pthread_condattr_destroy(&ca);
	if (!conns_header_timeout(&s->cfg))
		return 0; /* no timeout: nothing to sweep */
	if (pthread_create(&s->sweeper, NULL, sweeper, s) != 0)
		return -1;
	s->sweeping = 1;
	return 0;
}

void conns_stop(srv *s)
{
	if (s->sweeping) {
		pthread_mutex_lock(&s->clock);
		s->sweep_quit = 1;
		pthread_cond_signal(&s->sweep_cond);
		pthread_mutex_unlock(&s->clock);
		pthread_join(s->sweeper, NULL);
		s->sweeping = 0;
	}
	/* The daemon is stopped: every close was notified, nothing is left but the table. */
	cr_free(s->clients);
	s->clients = NULL;
	s->n_clients = s->clients_used = 0;
	pthread_cond_destroy(&s->sweep_cond);
	pthread_mutex_destroy(&s->clock);
}
