/*
 * server.c — the node's request server (see server.h).
 *
 * Framing is rpc.c's: a 4-byte little-endian length, then a packed
 * request; the reply goes back the same way on the same connection, in
 * the order the requests came. rpc.c runs one call at a time on a
 * connection; a router's event loop sends many (router/http.c), and the
 * replies to the requests one read brought go back in few writes: one
 * per FLUSH_EVERY requests, and one for the rest. Before each such
 * write the store's log is flushed (store.h), so the writes of a read
 * share one log write and no reply gets ahead of its write's durability.
 *
 * Threads: `threads` workers wait on one epoll set. Every connection is
 * registered EPOLLONESHOT, so exactly one worker handles it at a time: it
 * reads what has arrived, serves every complete request (node_dispatch,
 * inline on this thread), writes the replies, and re-arms the connection.
 * A request therefore costs one wake-up on this side, and no hand-off
 * between threads. A verb never waits on another node from here (the
 * catalog worker does that on its own thread), so no worker can wait on
 * itself. A frame longer than RPC_MAX_MESSAGE closes the connection.
 *
 * Locking rule: a connection's state belongs to the worker that took its
 * event until it re-arms it; the listening socket and the wake-up pipe are
 * shared and only read. server_close sets `stop`, wakes every worker
 * through the pipe and joins them before closing anything.
 */
#define _GNU_SOURCE
#include "server.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <unistd.h>

#include "rpc.h"

#define MAX_THREADS 16
#define WRITE_TIMEOUT_MS 10000 /* a client that stops reading is dropped */
#define FLUSH_EVERY 8

typedef struct sconn {
	int fd;
	uint8_t *buf; /* bytes read and not yet served */
	size_t len, cap;
	uint8_t *out; /* replies not yet written */
	size_t olen, ocap;
	unsigned unflushed; /* replies in out */
} sconn;

struct server {
	node *n;
	int lfd, ep;
	int wake[2];   /* a pipe: readable when the server stops */
	atomic_bool stop;
	pthread_t th[MAX_THREADS];
	int n_th;
	char path[108]; /* the Unix socket's file, unlinked at close */
	/* Every open connection, to free them at close; guarded by mu. */
	pthread_mutex_t mu;
	sconn **conns;
	size_t n_conns, cap_conns;
};

static void
conn_forget(server *s, sconn *c)
{
	pthread_mutex_lock(&s->mu);
	for (size_t i = 0; i < s->n_conns; i++) {
		if (s->conns[i] == c) {
			s->conns[i] = s->conns[--s->n_conns];
			break;
		}
	}
	pthread_mutex_unlock(&s->mu);
	close(c->fd);
	free(c->buf);
	free(c->out);
	free(c);
}

/* Serves one request frame body; queues the reply. False: drop. */
static bool
serve(server *s, sconn *c, const uint8_t *msg, size_t len)
{
	arena a;
	rpc_request req;
	rpc_response resp;
	uint8_t *out = NULL;
	size_t olen = 0;

	arena_init(&a);
	memset(&resp, 0, sizeof(resp));
	memset(&req, 0, sizeof(req));
	kv_err rv = wire_unpack_request(msg, len, &a, &req);
	if (rv == KV_OK)
		node_dispatch(s->n, &req, &a, &resp);
	else
		resp.code = rv;
	if (wire_pack_response(&resp, &out, &olen) != KV_OK) {
		wire_response_fini(&resp);
		memset(&resp, 0, sizeof(resp));
		resp.code = KV_ENOMEM;
		if (wire_pack_response(&resp, &out, &olen) != KV_OK)
			olen = 0;
	}
	wire_response_fini(&resp);
	wire_request_fini(&req);
	arena_fini(&a);
	if (out == NULL)
		return false;
	if (c->ocap - c->olen < olen + 4) {
		size_t cap = c->ocap == 0 ? 4096 : c->ocap;
		while (cap - c->olen < olen + 4)
			cap *= 2;
		uint8_t *nb = realloc(c->out, cap);
		if (nb == NULL) {
			free(out);
			return false;
		}
		c->out = nb;
		c->ocap = cap;
	}
	for (int i = 0; i < 4; i++)
		c->out[c->olen++] = (uint8_t) (olen >> (8 * i));
	memcpy(c->out + c->olen, out, olen);
	c->olen += olen;
	free(out);
	return true;
}

/*
 * Writes the queued replies in one go. False: drop. The writes served so
 * far are made durable first (store.h): a reply may acknowledge one, or
 * show one another thread made.
 */
static bool
flush(server *s, sconn *c)
{
	if (c->olen == 0)
		return true;
	/*
	 * A log that cannot be written leaves the writes applied but not
	 * durable: no reply goes out, and the connection is dropped, so the
	 * client learns that their outcome is unknown.
	 */
	bool ok = store_flush(s->n->st) == KV_OK &&
	    rpc_send_all(c->fd, c->out, c->olen, WRITE_TIMEOUT_MS);
	c->olen = 0;
	c->unflushed = 0;
	if (c->ocap > 1024 * 1024) {
		free(c->out);
		c->out = NULL;
		c->ocap = 0;
	}
	return ok;
}

/*
 * Reads what has arrived and serves every complete request. Returns false
 * when the connection is done (closed by the peer, broken, oversized).
 */
static bool
on_readable(server *s, sconn *c)
{
	for (;;) {
		if (c->cap - c->len < 65536) {
			size_t cap = c->cap == 0 ? 65536 : c->cap * 2;
			uint8_t *nb = realloc(c->buf, cap);
			if (nb == NULL)
				return false;
			c->buf = nb;
			c->cap = cap;
		}
		size_t space = c->cap - c->len;
		ssize_t n = recv(c->fd, c->buf + c->len, space, 0);
		if (n == 0)
			return false;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN;
		}
		c->len += (size_t) n;
		size_t off = 0;
		while (c->len - off >= 4) {
			const uint8_t *h = c->buf + off;
			uint32_t flen = (uint32_t) h[0] | (uint32_t) h[1] << 8 |
			    (uint32_t) h[2] << 16 | (uint32_t) h[3] << 24;
			if (flen > RPC_MAX_MESSAGE)
				return false;
			if (c->len - off - 4 < flen)
				break;
			if (!serve(s, c, h + 4, flen))
				return false;
			off += 4 + (size_t) flen;
			/*
			 * A long batch answers as it goes, so that the router
			 * can pass the first answers on while the rest are
			 * served.
			 */
			if (++c->unflushed >= FLUSH_EVERY && !flush(s, c))
				return false;
		}
		if (off > 0) {
			memmove(c->buf, c->buf + off, c->len - off);
			c->len -= off;
		}
		/* Keep a big buffer only while a big request is arriving. */
		if (c->len == 0 && c->cap > 1024 * 1024) {
			free(c->buf);
			c->buf = NULL;
			c->cap = 0;
		}
		/* The replies not written yet, in one write. */
		if (!flush(s, c))
			return false;
		/*
		 * A short read emptied the socket; the connection is re-armed
		 * (level-triggered), so anything that came since wakes a
		 * worker again: no recv needed to hear EAGAIN.
		 */
		if ((size_t) n < space)
			return true;
	}
}

static void
on_accept(server *s)
{
	for (;;) {
		int fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK |
		    SOCK_CLOEXEC);
		if (fd < 0)
			return;
		int one = 1;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		sconn *c = calloc(1, sizeof(*c));
		if (c == NULL) {
			close(fd);
			continue;
		}
		c->fd = fd;
		pthread_mutex_lock(&s->mu);
		if (s->n_conns == s->cap_conns) {
			size_t cap = s->cap_conns == 0 ? 64 : s->cap_conns * 2;
			sconn **nc = realloc(s->conns, cap * sizeof(*nc));
			if (nc == NULL) {
				pthread_mutex_unlock(&s->mu);
				close(fd);
				free(c);
				continue;
			}
			s->conns = nc;
			s->cap_conns = cap;
		}
		s->conns[s->n_conns++] = c;
		pthread_mutex_unlock(&s->mu);
		struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT |
			EPOLLRDHUP, .data.ptr = c };
		if (epoll_ctl(s->ep, EPOLL_CTL_ADD, fd, &ev) != 0)
			conn_forget(s, c);
	}
}

static void *
worker(void *arg)
{
	server *s = arg;
	struct epoll_event evs[16];

	while (!atomic_load(&s->stop)) {
		int n = epoll_wait(s->ep, evs, 16, -1);
		for (int i = 0; i < n; i++) {
			void *p = evs[i].data.ptr;
			if (p == (void *) s) {
				on_accept(s);
				struct epoll_event ev = { .events = EPOLLIN |
					EPOLLONESHOT, .data.ptr = s };
				epoll_ctl(s->ep, EPOLL_CTL_MOD, s->lfd, &ev);
				continue;
			}
			if (p == (void *) &s->wake)
				return NULL; /* stopping: left readable for all */
			sconn *c = p;
			if (!on_readable(s, c)) {
				epoll_ctl(s->ep, EPOLL_CTL_DEL, c->fd, NULL);
				conn_forget(s, c);
				continue;
			}
			struct epoll_event ev = { .events = EPOLLIN |
				EPOLLONESHOT | EPOLLRDHUP, .data.ptr = c };
			epoll_ctl(s->ep, EPOLL_CTL_MOD, c->fd, &ev);
		}
	}
	return NULL;
}

/* Binds and listens on url; -1 (with a message) when it cannot. */
static int
listen_on(server *s, const char *url)
{
	struct sockaddr_storage sa;
	socklen_t len;
	if (rpc_parse_url(url, &sa, &len) != KV_OK) {
		fprintf(stderr, "kv-node: bad URL %s\n", url);
		return -1;
	}
	int fd = socket(sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (sa.ss_family == AF_UNIX) {
		/*
		 * A socket file left by a node that died is in the way; one a
		 * running node still listens on must not be taken over.
		 */
		const char *path = ((struct sockaddr_un *) &sa)->sun_path;
		int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (probe >= 0 && connect(probe, (struct sockaddr *) &sa,
		    len) == 0) {
			close(probe);
			close(fd);
			fprintf(stderr, "kv-node: %s is in use by another "
			    "process\n", url);
			return -1;
		}
		if (probe >= 0)
			close(probe);
		unlink(path);
		size_t pl = strnlen(path, sizeof(s->path) - 1);
		memcpy(s->path, path, pl);
		s->path[pl] = '\0';
	} else {
		int one = 1;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	}
	if (bind(fd, (struct sockaddr *) &sa, len) != 0 ||
	    listen(fd, 512) != 0) {
		fprintf(stderr, "kv-node: cannot listen on %s: %s\n", url,
		    strerror(errno));
		close(fd);
		s->path[0] = '\0';
		return -1;
	}
	return fd;
}

kv_err
server_open(node *n, const char *url, int threads, server **out)
{
	server *s = calloc(1, sizeof(*s));
	if (s == NULL)
		return KV_ENOMEM;
	s->n = n;
	s->wake[0] = s->wake[1] = -1;
	atomic_init(&s->stop, false);
	pthread_mutex_init(&s->mu, NULL);
	if (threads < 1)
		threads = 1;
	if (threads > MAX_THREADS)
		threads = MAX_THREADS;
	s->ep = epoll_create1(EPOLL_CLOEXEC);
	if (s->ep < 0 || pipe2(s->wake, O_CLOEXEC) != 0) {
		server_close(s);
		return KV_IO;
	}
	if ((s->lfd = listen_on(s, url)) < 0) {
		server_close(s);
		return KV_IO;
	}
	struct epoll_event lev = { .events = EPOLLIN | EPOLLONESHOT,
		.data.ptr = s };
	struct epoll_event wev = { .events = EPOLLIN, .data.ptr = &s->wake };
	if (epoll_ctl(s->ep, EPOLL_CTL_ADD, s->lfd, &lev) != 0 ||
	    epoll_ctl(s->ep, EPOLL_CTL_ADD, s->wake[0], &wev) != 0) {
		server_close(s);
		return KV_IO;
	}
	for (int i = 0; i < threads; i++) {
		if (pthread_create(&s->th[i], NULL, worker, s) != 0)
			break;
		s->n_th++;
	}
	if (s->n_th == 0) {
		server_close(s);
		return KV_ENOMEM;
	}
	*out = s;
	return KV_OK;
}

void
server_close(server *s)
{
	if (s == NULL)
		return;
	atomic_store(&s->stop, true);
	if (s->wake[1] >= 0 && write(s->wake[1], "x", 1) < 0)
		perror("kv-node: waking the server");
	for (int i = 0; i < s->n_th; i++)
		pthread_join(s->th[i], NULL);
	if (s->lfd > 0)
		close(s->lfd);
	if (s->path[0] != '\0')
		unlink(s->path);
	for (size_t i = 0; i < s->n_conns; i++) {
		close(s->conns[i]->fd);
		free(s->conns[i]->buf);
		free(s->conns[i]->out);
		free(s->conns[i]);
	}
	free(s->conns);
	if (s->ep >= 0)
		close(s->ep);
	for (int i = 0; i < 2; i++)
		if (s->wake[i] >= 0)
			close(s->wake[i]);
	pthread_mutex_destroy(&s->mu);
	free(s);
}
