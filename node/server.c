/*
 * server.c — the node's request server (see server.h).
 *
 * Framing is rpc.c's: a 4-byte little-endian length, then a packed
 * request; the reply goes back the same way on the same connection, in
 * the order the requests came. rpc.c runs one call at a time on a
 * connection; a router's event loop sends many (router/http/http.c), and the
 * replies to the requests one read brought go back in few writes: one
 * per FLUSH_EVERY requests, and one for the rest. Before each such
 * write the store's log is flushed (store.h), so the writes of a read
 * share one log write and no reply gets ahead of its write's durability.
 * Consecutive writes to one item are a run (write_run in node.h), which
 * ends, its writes stored, before the next request that is not one of
 * them and before each such write of replies.
 *
 * Threads: one accepting thread, and a thread per connection that
 * sleeps in a blocking recv, serves every complete request that arrived
 * (node_dispatch, inline on this thread), writes the replies and reads
 * again. Connections are few and long-lived (a router's event loops and
 * workers, the catalog, other nodes), so a thread each is cheap. A round
 * of requests therefore costs one wake-up and two system calls here (a
 * recv and a send); a worker pool on one epoll set paid an epoll_wait and
 * an epoll_ctl re-arm on top, and the connection moved between threads,
 * away from their warm caches. Side by side (3 rounds of 5 s), PutItem
 * went from 30,200 to 34,100 ops/s (the nodes' CPU per PutItem from 28
 * to 24 us) and the hot counter from 35,800 to 40,800; GetItem did not
 * change. A slow request holds only its own connection, which a pool
 * could not serve faster anyway: a connection's requests are answered
 * in order. A verb
 * never waits on another node from here (the catalog worker does that on
 * its own thread), so no connection can wait on itself. A frame longer
 * than RPC_MAX_MESSAGE closes the connection. Sockets are blocking; a
 * write waits at most WRITE_TIMEOUT_MS (SO_SNDTIMEO) for a client that
 * stops reading, which is then dropped.
 *
 * Locking rule: a connection's state belongs to its thread; the list of
 * connections is guarded by mu, and a connection leaves it (under mu)
 * before its socket is closed and its memory freed. server_close sets
 * `stop`, wakes and joins the accepting thread (so no connection is added
 * after), shuts down every listed socket under mu, which ends each
 * thread's recv, and waits on `gone` until the list is empty.
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
#include <sys/socket.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <unistd.h>

#include "nframe.h"
#include "rpc.h"
#include "thread_name.h"

#define WRITE_TIMEOUT_MS 10000 /* a client that stops reading is dropped */
#define FLUSH_EVERY 8

/* Replies not yet written: length-prefixed packed responses. */
typedef struct obuf {
	uint8_t *p;
	size_t len, cap;
} obuf;

typedef struct sconn {
	server *s;
	int fd;
	uint8_t *buf; /* bytes read and not yet served */
	size_t len, cap;
	obuf out;
	unsigned unflushed; /* replies in out */
	write_run run; /* writes to one item, not in the store yet */
} sconn;

struct server {
	node *n;
	int lfd;
	int wake[2];   /* a pipe: readable when the server stops */
	atomic_bool stop;
	pthread_t acceptor;
	bool accepting; /* acceptor runs */
	char path[108]; /* the Unix socket's file, unlinked at close */
	nframe_server *nf; /* requests over nng (--nng-requests), or NULL */
	/* Every open connection; guarded by mu, `gone` when one leaves. */
	pthread_mutex_t mu;
	pthread_cond_t gone;
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
	pthread_cond_broadcast(&s->gone);
	pthread_mutex_unlock(&s->mu);
	close(c->fd);
	free(c->buf);
	free(c->out.p);
	free(c);
}

/*
 * Serves one request frame body with write run `run`; appends the reply
 * to o. False: drop the connection (the run could not be stored, or no
 * memory).
 */
static bool
serve(node *n, write_run *run, obuf *o, const uint8_t *msg, size_t len)
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
	/*
	 * A request that does not continue the run ends it: its writes go
	 * to the store first. If they cannot, the replies already queued
	 * must not go out (write_run in node.h).
	 */
	if (rv == KV_OK && run->p != NULL && !write_run_takes(run, &req) &&
	    write_run_end(n, run) != KV_OK) {
		wire_request_fini(&req);
		arena_fini(&a);
		return false;
	}
	if (rv == KV_OK)
		node_dispatch_run(n, &req, &a, &resp, run);
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
	if (o->cap - o->len < olen + 4) {
		size_t cap = o->cap == 0 ? 4096 : o->cap;
		while (cap - o->len < olen + 4)
			cap *= 2;
		uint8_t *nb = realloc(o->p, cap);
		if (nb == NULL) {
			free(out);
			return false;
		}
		o->p = nb;
		o->cap = cap;
	}
	for (int i = 0; i < 4; i++)
		o->p[o->len++] = (uint8_t) (olen >> (8 * i));
	memcpy(o->p + o->len, out, olen);
	o->len += olen;
	free(out);
	return true;
}

/* The length of the frame at h (4 bytes, little-endian). */
static uint32_t
frame_len(const uint8_t *h)
{
	return (uint32_t) h[0] | (uint32_t) h[1] << 8 | (uint32_t) h[2] << 16 |
	    (uint32_t) h[3] << 24;
}

/*
 * Writes the queued replies in one go. False: drop. The writes served so
 * far are made durable first (store.h): a reply may acknowledge one, or
 * show one another thread made.
 */
static bool
flush(server *s, sconn *c)
{
	/* The run's writes first: its replies are among those below. */
	if (write_run_end(s->n, &c->run) != KV_OK)
		return false;
	if (c->out.len == 0)
		return true;
	/*
	 * A log that cannot be written leaves the writes applied but not
	 * durable: no reply goes out, and the connection is dropped, so the
	 * client learns that their outcome is unknown.
	 */
	bool ok = store_flush(s->n->st) == KV_OK &&
	    rpc_send_all(c->fd, c->out.p, c->out.len, 0); /* SO_SNDTIMEO */
	c->out.len = 0;
	c->unflushed = 0;
	if (c->out.cap > 1024 * 1024) {
		free(c->out.p);
		c->out.p = NULL;
		c->out.cap = 0;
	}
	return ok;
}

/*
 * Waits for requests, then serves every complete one that arrived.
 * Returns false when the connection is done (closed by the peer, broken,
 * oversized, or shut down by server_close).
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
			return false;
		}
		c->len += (size_t) n;
		size_t off = 0;
		while (c->len - off >= 4) {
			const uint8_t *h = c->buf + off;
			uint32_t flen = frame_len(h);
			if (flen > RPC_MAX_MESSAGE)
				return false;
			if (c->len - off - 4 < flen)
				break;
			if (!serve(s->n, &c->run, &c->out, h + 4, flen))
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
		 * A short read emptied the socket: back to the caller, which
		 * waits in the next recv. A full one may have left more.
		 */
		if ((size_t) n < space)
			return true;
	}
}

/*
 * One message of requests over nng (nframe.h): every frame in it served
 * in order, as one read of a connection is, the writes made durable, and
 * the replies returned as one message. A message that does not hold whole
 * frames, or whose writes cannot be stored, is dropped unanswered.
 */
static bool
serve_message(void *arg, const uint8_t *in, size_t len, uint8_t **out,
    size_t *olen)
{
	node *n = arg;
	write_run run;
	obuf o = { 0 };
	size_t off = 0;
	bool ok = true;

	write_run_init(&run);
	while (ok && off < len) {
		if (len - off < 4 || frame_len(in + off) > len - off - 4) {
			ok = false;
			break;
		}
		uint32_t flen = frame_len(in + off);
		ok = serve(n, &run, &o, in + off + 4, flen);
		off += 4 + (size_t) flen;
	}
	ok = write_run_end(n, &run) == KV_OK && ok &&
	    store_flush(n->st) == KV_OK;
	if (!ok) {
		free(o.p);
		return false;
	}
	*out = o.p;
	*olen = o.len;
	return true;
}

static void *
conn_run(void *arg)
{
	sconn *c = arg;
	thread_name("kv-conn");
	while (on_readable(c->s, c))
		;
	/* Its locks go; its writes too, unanswered (outcome unknown). */
	write_run_end(c->s->n, &c->run);
	conn_forget(c->s, c);
	return NULL;
}

/* Takes one accepted socket: a connection and its thread. */
static void
conn_start(server *s, int fd)
{
	int one = 1;
	struct timeval tv = { .tv_sec = WRITE_TIMEOUT_MS / 1000,
		.tv_usec = WRITE_TIMEOUT_MS % 1000 * 1000 };
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	sconn *c = calloc(1, sizeof(*c));
	if (c == NULL) {
		close(fd);
		return;
	}
	c->fd = fd;
	c->s = s;
	write_run_init(&c->run);
	pthread_mutex_lock(&s->mu);
	if (s->n_conns == s->cap_conns) {
		size_t cap = s->cap_conns == 0 ? 64 : s->cap_conns * 2;
		sconn **nc = realloc(s->conns, cap * sizeof(*nc));
		if (nc == NULL) {
			pthread_mutex_unlock(&s->mu);
			close(fd);
			free(c);
			return;
		}
		s->conns = nc;
		s->cap_conns = cap;
	}
	s->conns[s->n_conns++] = c;
	pthread_mutex_unlock(&s->mu);
	pthread_attr_t at;
	pthread_t th;
	bool started = pthread_attr_init(&at) == 0 &&
	    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED) == 0 &&
	    pthread_create(&th, &at, conn_run, c) == 0;
	pthread_attr_destroy(&at);
	if (!started)
		conn_forget(s, c);
}

static void *
acceptor(void *arg)
{
	server *s = arg;
	thread_name("kv-accept");
	struct pollfd p[2] = { { .fd = s->lfd, .events = POLLIN },
		{ .fd = s->wake[0], .events = POLLIN } };

	while (!atomic_load(&s->stop)) {
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (p[1].revents != 0)
			break;
		for (;;) {
			/* Blocking, so that the connection's recv waits. */
			int fd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC);
			if (fd < 0)
				break;
			conn_start(s, fd);
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
server_open(node *n, const char *url, const char *nng_url, server **out)
{
	server *s = calloc(1, sizeof(*s));
	if (s == NULL)
		return KV_ENOMEM;
	s->n = n;
	s->lfd = -1;
	s->wake[0] = s->wake[1] = -1;
	atomic_init(&s->stop, false);
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->gone, NULL);
	if (pipe2(s->wake, O_CLOEXEC) != 0) {
		server_close(s);
		return KV_IO;
	}
	if ((s->lfd = listen_on(s, url)) < 0) {
		server_close(s);
		return KV_IO;
	}
	kv_err rv;
	if (nng_url != NULL &&
	    (rv = nframe_serve(nng_url, serve_message, n, &s->nf)) != KV_OK) {
		server_close(s);
		return rv;
	}
	if (pthread_create(&s->acceptor, NULL, acceptor, s) != 0) {
		server_close(s);
		return KV_ENOMEM;
	}
	s->accepting = true;
	*out = s;
	return KV_OK;
}

void
server_close(server *s)
{
	if (s == NULL)
		return;
	atomic_store(&s->stop, true);
	nframe_server_close(s->nf);
	if (s->wake[1] >= 0 && write(s->wake[1], "x", 1) < 0)
		perror("kv-node: waking the server");
	if (s->accepting)
		pthread_join(s->acceptor, NULL);
	/* Every recv ends; each thread finishes its request and leaves. */
	pthread_mutex_lock(&s->mu);
	for (size_t i = 0; i < s->n_conns; i++)
		shutdown(s->conns[i]->fd, SHUT_RDWR);
	while (s->n_conns > 0)
		pthread_cond_wait(&s->gone, &s->mu);
	pthread_mutex_unlock(&s->mu);
	if (s->lfd >= 0)
		close(s->lfd);
	if (s->path[0] != '\0')
		unlink(s->path);
	free(s->conns);
	for (int i = 0; i < 2; i++)
		if (s->wake[i] >= 0)
			close(s->wake[i]);
	pthread_cond_destroy(&s->gone);
	pthread_mutex_destroy(&s->mu);
	free(s);
}
