/*
 * conn.c — the epoll HTTP/1.1 client (see conn.h). Each connection is a
 * socket state (down, connecting, up) and a request flag; level-triggered
 * epoll with EPOLLOUT asked for only while a connect or a write is
 * pending, so a request that fits the socket buffer costs one send and no
 * epoll_ctl. The loop also wakes every 10 ms while connections wait for a
 * reconnect or requests for their timeout.
 */
#include "conn.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "http.h"

#define BACKOFF_MIN_NS (10 * 1000000LL)
#define BACKOFF_MAX_NS (1000 * 1000000LL)
#define SCAN_EVERY_NS (10 * 1000000LL)
#define READ_CHUNK (16 * 1024)
#define MAX_EVENTS 256

typedef enum sock_state {
	SOCK_DOWN,       /* no socket; reconnect at retry_at */
	SOCK_CONNECTING, /* connect in progress */
	SOCK_UP,
} sock_state;

typedef struct conn {
	int fd;
	sock_state sock;
	bool busy;      /* a request is in flight */
	bool in_idle;   /* has an entry in the idle stack */
	bool want_out;  /* EPOLLOUT is in the interest set */
	int64_t sent_at;
	int64_t retry_at;
	int64_t backoff;
	size_t wrote;   /* bytes of wbuf already sent */
	http_buf wbuf;  /* the request */
	http_buf rbuf;  /* the response so far */
	http_resp resp;
} conn;

struct conn_pool {
	int ep;
	struct sockaddr_storage addr;
	socklen_t alen;
	int64_t timeout;
	conn_done_fn done;
	void *arg;
	conn *conns;
	size_t n;
	size_t *idle; /* stack of ids that may be ready */
	size_t n_idle;
	size_t busy;
	int64_t next_scan;
	conn_stats stats;
};

int64_t
conn_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static bool
ready(const conn *c)
{
	return !c->busy && c->sock != SOCK_DOWN;
}

static void
push_idle(conn_pool *p, size_t id)
{
	conn *c = &p->conns[id];
	if (c->in_idle || !ready(c))
		return;
	c->in_idle = true;
	p->idle[p->n_idle++] = id;
}

static void
set_interest(conn_pool *p, size_t id, bool out)
{
	conn *c = &p->conns[id];
	if (c->want_out == out)
		return;
	struct epoll_event ev = { .events = out ? EPOLLIN | EPOLLOUT : EPOLLIN,
		.data.u64 = id };
	epoll_ctl(p->ep, EPOLL_CTL_MOD, c->fd, &ev);
	c->want_out = out;
}

static void
close_sock(conn_pool *p, size_t id)
{
	conn *c = &p->conns[id];
	if (c->fd >= 0)
		close(c->fd); /* also leaves the epoll set */
	c->fd = -1;
	c->sock = SOCK_DOWN;
	c->want_out = false;
	c->wrote = 0;
	http_buf_clear(&c->wbuf);
	http_buf_clear(&c->rbuf);
	http_resp_reset(&c->resp);
}

/*
 * Opens a socket and starts connecting. On failure the connection is down
 * until its back-off ends; the errno is returned (0 on success).
 */
static int
start_connect(conn_pool *p, size_t id)
{
	conn *c = &p->conns[id];
	close_sock(p, id);
	int fd = socket(p->addr.ss_family,
	    SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		goto fail;
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	int rc = connect(fd, (struct sockaddr *) &p->addr, p->alen);
	if (rc < 0 && errno != EINPROGRESS) {
		int err = errno;
		close(fd);
		errno = err;
		goto fail;
	}
	struct epoll_event ev = { .events = rc == 0 ? EPOLLIN : EPOLLOUT,
		.data.u64 = id };
	if (epoll_ctl(p->ep, EPOLL_CTL_ADD, fd, &ev) < 0) {
		int err = errno;
		close(fd);
		errno = err;
		goto fail;
	}
	c->fd = fd;
	c->want_out = rc != 0;
	c->sock = rc == 0 ? SOCK_UP : SOCK_CONNECTING;
	if (rc == 0) {
		p->stats.connects++;
		c->backoff = 0;
	}
	push_idle(p, id);
	return 0;
fail:;
	int err = errno;
	p->stats.failures++;
	p->stats.last_errno = err;
	c->backoff = c->backoff == 0 ? BACKOFF_MIN_NS : c->backoff * 2;
	if (c->backoff > BACKOFF_MAX_NS)
		c->backoff = BACKOFF_MAX_NS;
	c->retry_at = conn_now() + c->backoff;
	return err;
}

/*
 * Ends the request in flight on id with res, then either keeps the
 * connection (keep) or starts over: at once (reconnect) or after a
 * back-off (the connect failed).
 */
typedef enum after {
	AFTER_KEEP,
	AFTER_RECONNECT,
	AFTER_BACKOFF,
} after;

static void
finish(conn_pool *p, size_t id, const conn_result *res, after next)
{
	conn *c = &p->conns[id];
	if (c->busy) {
		c->busy = false;
		p->busy--;
		p->done(p->arg, id, res);
	}
	switch (next) {
	case AFTER_KEEP:
		push_idle(p, id);
		break;
	case AFTER_RECONNECT:
		start_connect(p, id);
		break;
	case AFTER_BACKOFF: {
		close_sock(p, id);
		c->backoff = c->backoff == 0 ? BACKOFF_MIN_NS : c->backoff * 2;
		if (c->backoff > BACKOFF_MAX_NS)
			c->backoff = BACKOFF_MAX_NS;
		c->retry_at = conn_now() + c->backoff;
		break;
	}
	}
}

static void
fail(conn_pool *p, size_t id, kv_err e, int err, after next)
{
	conn_result res = { .err = e, .sys_errno = err };
	finish(p, id, &res, next);
}

/* Writes what is left of the request; arms EPOLLOUT if it does not fit. */
static void
flush(conn_pool *p, size_t id)
{
	conn *c = &p->conns[id];
	while (c->wrote < c->wbuf.len) {
		ssize_t n = send(c->fd, c->wbuf.p + c->wrote,
		    c->wbuf.len - c->wrote, MSG_NOSIGNAL);
		if (n > 0) {
			c->wrote += (size_t) n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			set_interest(p, id, true);
			return;
		}
		p->stats.server_closes++;
		fail(p, id, KV_IO, n < 0 ? errno : 0, AFTER_RECONNECT);
		return;
	}
	set_interest(p, id, false);
}

static void
on_connected(conn_pool *p, size_t id)
{
	conn *c = &p->conns[id];
	int err = 0;
	socklen_t len = sizeof(err);
	if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		err = errno;
	if (err != 0) {
		p->stats.failures++;
		p->stats.last_errno = err;
		fail(p, id, KV_IO, err, AFTER_BACKOFF);
		return;
	}
	c->sock = SOCK_UP;
	c->backoff = 0;
	p->stats.connects++;
	if (c->busy)
		flush(p, id);
	else
		set_interest(p, id, false);
}

/* Parses what has arrived; delivers the response once it is whole. */
static void
on_bytes(conn_pool *p, size_t id, bool eof)
{
	conn *c = &p->conns[id];
	if (!c->busy) {
		/* Bytes nobody asked for, or the server closing an idle
		 * keep-alive connection: start over either way. */
		p->stats.server_closes++;
		start_connect(p, id);
		return;
	}
	bool done;
	kv_err e;
	for (;;) {
		e = http_resp_parse(&c->resp, c->rbuf.p, c->rbuf.len, &done);
		if (e == KV_OK && !done && eof)
			e = http_resp_eof(&c->resp, c->rbuf.p, c->rbuf.len,
			    &done);
		if (e != KV_OK || !done)
			break;
		if (c->resp.status >= 200)
			break;
		/* An interim 1xx answer: the real one follows. */
		http_buf_consume(&c->rbuf, c->resp.total);
		http_resp_reset(&c->resp);
	}
	if (e != KV_OK) {
		fail(p, id, e, 0, AFTER_RECONNECT);
		return;
	}
	if (!done) {
		if (eof) {
			p->stats.server_closes++;
			fail(p, id, KV_IO, 0, AFTER_RECONNECT);
		}
		return;
	}
	conn_result res = { .err = KV_OK, .status = c->resp.status };
	res.body = http_resp_body(&c->resp, c->rbuf.p, &res.len);
	/* Extra bytes after the answer would be read as the next one's. */
	bool close = eof || c->resp.close || c->rbuf.len > c->resp.total;
	if (close)
		p->stats.server_closes++;
	size_t total = c->resp.total;
	finish(p, id, &res, close ? AFTER_RECONNECT : AFTER_KEEP);
	if (!close) {
		http_buf_consume(&c->rbuf, total);
		http_resp_reset(&c->resp);
	}
}

static void
on_readable(conn_pool *p, size_t id)
{
	conn *c = &p->conns[id];
	for (;;) {
		if (http_buf_reserve(&c->rbuf, READ_CHUNK) != KV_OK) {
			fail(p, id, KV_ENOMEM, 0, AFTER_RECONNECT);
			return;
		}
		ssize_t n = recv(c->fd, c->rbuf.p + c->rbuf.len,
		    c->rbuf.cap - c->rbuf.len - 1, 0);
		if (n > 0) {
			c->rbuf.len += (size_t) n;
			c->rbuf.p[c->rbuf.len] = '\0';
			if ((size_t) n < READ_CHUNK)
				break; /* most likely drained */
			continue;
		}
		if (n == 0) {
			on_bytes(p, id, true);
			return;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			break;
		p->stats.server_closes++;
		fail(p, id, KV_IO, errno, AFTER_RECONNECT);
		return;
	}
	on_bytes(p, id, false);
}

kv_err
conn_pool_new(const struct sockaddr *addr, socklen_t alen, size_t n,
    int64_t timeout_ns, conn_done_fn done, void *arg, conn_pool **out)
{
	if (n == 0 || alen > sizeof(struct sockaddr_storage))
		return KV_EINVAL;
	conn_pool *p = calloc(1, sizeof(*p));
	if (p == NULL)
		return KV_ENOMEM;
	p->ep = -1;
	p->conns = calloc(n, sizeof(conn));
	p->idle = calloc(n, sizeof(size_t));
	if (p->conns == NULL || p->idle == NULL) {
		conn_pool_free(p);
		return KV_ENOMEM;
	}
	p->n = n;
	for (size_t i = 0; i < n; i++) {
		p->conns[i].fd = -1;
		http_buf_init(&p->conns[i].wbuf);
		http_buf_init(&p->conns[i].rbuf);
		http_resp_init(&p->conns[i].resp);
	}
	memcpy(&p->addr, addr, alen);
	p->alen = alen;
	p->timeout = timeout_ns;
	p->done = done;
	p->arg = arg;
	p->ep = epoll_create1(EPOLL_CLOEXEC);
	if (p->ep < 0) {
		conn_pool_free(p);
		return KV_IO;
	}
	for (size_t i = 0; i < n; i++) {
		int err = start_connect(p, i);
		/* Out of descriptors is a setup error; refused is not. */
		if (err == EMFILE || err == ENFILE || err == ENOBUFS) {
			conn_pool_free(p);
			return KV_IO;
		}
	}
	*out = p;
	return KV_OK;
}

void
conn_pool_free(conn_pool *p)
{
	if (p == NULL)
		return;
	for (size_t i = 0; p->conns != NULL && i < p->n; i++) {
		conn *c = &p->conns[i];
		if (c->fd >= 0)
			close(c->fd);
		http_buf_fini(&c->wbuf);
		http_buf_fini(&c->rbuf);
		http_resp_fini(&c->resp);
	}
	if (p->ep >= 0)
		close(p->ep);
	free(p->conns);
	free(p->idle);
	free(p);
}

size_t
conn_pool_size(const conn_pool *p)
{
	return p->n;
}

bool
conn_pool_idle(conn_pool *p, size_t *id)
{
	while (p->n_idle > 0) {
		size_t i = p->idle[--p->n_idle];
		p->conns[i].in_idle = false;
		if (ready(&p->conns[i])) {
			*id = i;
			return true;
		}
	}
	return false;
}

kv_err
conn_pool_send(conn_pool *p, size_t id, const char *req, size_t len)
{
	conn *c = &p->conns[id];
	if (!ready(c))
		return KV_EINVAL;
	http_buf_clear(&c->wbuf);
	if (http_buf_append(&c->wbuf, req, len) != KV_OK)
		return KV_ENOMEM;
	c->wrote = 0;
	c->busy = true;
	c->sent_at = conn_now();
	p->busy++;
	if (c->sock == SOCK_UP)
		flush(p, id);
	return KV_OK;
}

/* Times out requests and reconnects connections whose back-off is over. */
static void
scan(conn_pool *p, int64_t now)
{
	for (size_t i = 0; i < p->n; i++) {
		conn *c = &p->conns[i];
		if (c->busy && now - c->sent_at > p->timeout) {
			p->stats.timeouts++;
			fail(p, i, KV_TIMEDOUT, 0, AFTER_RECONNECT);
		} else if (c->sock == SOCK_DOWN && now >= c->retry_at) {
			start_connect(p, i);
		}
	}
}

static bool
needs_scan(const conn_pool *p)
{
	if (p->busy > 0)
		return true;
	for (size_t i = 0; i < p->n; i++)
		if (p->conns[i].sock == SOCK_DOWN)
			return true;
	return false;
}

kv_err
conn_pool_poll(conn_pool *p, int64_t timeout_ns)
{
	int64_t now = conn_now();
	bool scanning = needs_scan(p);
	if (scanning && timeout_ns > p->next_scan - now)
		timeout_ns = p->next_scan - now;
	if (timeout_ns < 0)
		timeout_ns = 0;
	struct epoll_event evs[MAX_EVENTS];
	struct timespec ts = { .tv_sec = timeout_ns / 1000000000LL,
		.tv_nsec = timeout_ns % 1000000000LL };
	int n = epoll_pwait2(p->ep, evs, MAX_EVENTS, &ts, NULL);
	if (n < 0 && errno == ENOSYS) {
		/* Kernels before 5.11: millisecond timeouts, rounded up. */
		n = epoll_wait(p->ep, evs, MAX_EVENTS,
		    (int) ((timeout_ns + 999999) / 1000000));
	}
	if (n < 0)
		return errno == EINTR ? KV_OK : KV_IO;
	for (int i = 0; i < n; i++) {
		size_t id = (size_t) evs[i].data.u64;
		conn *c = &p->conns[id];
		if (c->fd < 0)
			continue; /* closed by an earlier event */
		uint32_t ev = evs[i].events;
		if (c->sock == SOCK_CONNECTING) {
			if (ev & (EPOLLOUT | EPOLLERR | EPOLLHUP))
				on_connected(p, id);
			continue;
		}
		if ((ev & EPOLLOUT) && c->busy && c->wrote < c->wbuf.len)
			flush(p, id);
		if (c->fd >= 0 && (ev & (EPOLLIN | EPOLLERR | EPOLLHUP)))
			on_readable(p, id);
	}
	now = conn_now();
	if (now >= p->next_scan) {
		if (scanning || needs_scan(p))
			scan(p, now);
		p->next_scan = now + SCAN_EVERY_NS;
	}
	return KV_OK;
}

size_t
conn_pool_busy(const conn_pool *p)
{
	return p->busy;
}

conn_stats
conn_pool_stats(const conn_pool *p)
{
	return p->stats;
}
