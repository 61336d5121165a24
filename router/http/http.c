/*
 * http.c — the router's HTTP/1.1 server (see http.h).
 *
 * Event loops. Each of `loops` threads owns an epoll set, the client
 * connections it accepted, and one connection to every node. A loop reads
 * what has arrived on all its ready connections, parses each complete
 * request and starts it without blocking (api_start): a single-item
 * operation or a Query becomes a frame appended to its node's output,
 * a transaction (TransactWriteItems, TransactGetItems) a frame per node
 * call in turn (the answer to one starts the next: call_end), everything
 * else goes to the worker pool. When every ready event has
 * been handled, the loop writes each node's frames, so requests that
 * arrived together travel to a node in one write (a node with LINK_BATCH
 * waiting gets them at once); the node serves them in order and answers
 * in a few writes, and the loop matches answers to calls in that order
 * (per node, first in, first out). One wake-up thus serves
 * many requests, where a thread per connection paid several wake-ups for
 * each. docs/design-notes.md, "The router's event loop", has the
 * measurements.
 *
 * The ring. Where io_uring is allowed (and not --no-ring), a round's
 * reads go to the kernel in one call before its events are handled
 * (round_reads), and its writes, answers and node frames alike, in one
 * call after (round_writes), instead of a recv and a send each: on this
 * VM every system call is dear. Nothing is in flight between those
 * calls. That part is http_ring.c; the types both files use are in
 * http_int.h.
 *
 * Workers. Operations that make several node calls, wait, or refresh the
 * catalog (tables, Scan, batches, /metrics, a stale route, a node that
 * cannot be reached yet) run api_handle on one of WORKERS threads,
 * which may block; the answer comes back to the loop through its done
 * list and eventfd, and the loop writes it. A worker's quick node calls
 * go out on the loop's links too (http_relay.c).
 *
 * Connections. A client connection has at most one request being served;
 * its bytes stay in the input buffer until it is answered, and requests
 * pipelined behind it wait there. A request body over HTTP_MAX_BODY is
 * refused from its headers (instead of "100 Continue"), after which the
 * connection is drained (read and discarded) until the client closes, so
 * that the client sees the answer instead of a reset. Every answer carries
 * DynamoDB's headers: x-amzn-RequestId and x-amz-crc32 (CRC32 of the body,
 * which the SDKs check). Connections idle for IDLE_SECONDS are closed.
 *
 * Locking rule: a loop's connections, links and calls belong to its thread
 * alone. A worker touches only its job; it hands the finished job back
 * under the loop's done_mu. The pool's queue is guarded by pool_mu.
 *
 * Failure: a node connection that breaks fails the calls on it with
 * KV_UNAVAILABLE (they may or may not have been applied, as with
 * rpc_call); one whose oldest call is older than the call timeout fails
 * them with KV_TIMEDOUT and is closed, so that no late answer is matched
 * to a newer call. A node that refuses the connection has applied
 * nothing, so its calls go to the workers, which use rpc_call's fast
 * failure and its grace for a starting cluster.
 */
#define _GNU_SOURCE
#include "http.h"
#include "clock.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "api_async.h"
#include "auth.h"
#include "conn.h"
#include "errors.h"
#include "http_inflate.h"
#include "http_parse.h"

#include "http_int.h"
#include "nframe.h"
#include "thread_name.h"

static atomic_uint_fast64_t request_seq;

/* ---- buffers ---- */

bool
buf_reserve(buf *b, size_t extra)
{
	if (b->cap - b->len >= extra)
		return true;
	size_t cap = b->cap == 0 ? 4096 : b->cap;
	while (cap - b->len < extra)
		cap *= 2;
	char *p = realloc(b->p, cap);
	if (p == NULL)
		return false;
	b->p = p;
	b->cap = cap;
	return true;
}

static bool
buf_add(buf *b, const void *p, size_t n)
{
	if (!buf_reserve(b, n))
		return false;
	memcpy(b->p + b->len, p, n);
	b->len += n;
	return true;
}

void
buf_consume(buf *b, size_t n)
{
	memmove(b->p, b->p + n, b->len - n);
	b->len -= n;
	/* Keep a big buffer only while it is in use. */
	if (b->len == 0 && b->cap > 1024 * 1024) {
		free(b->p);
		b->p = NULL;
		b->cap = 0;
	}
}

static void
buf_fini(buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

/* ---- client connections ---- */

/*
 * Unlinks c and closes its socket. The memory waits on the dead list until
 * the round's events are handled, since one of them may still name c.
 */
static void
conn_free(hconn *c)
{
	loop *l = c->l;
	if (c->freed)
		return;
	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		l->conns = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	c->freed = true;
	atomic_fetch_sub_explicit(&l->h->r->open_conns, 1,
	    memory_order_relaxed);
	c->next = l->dead;
	l->dead = c;
}

static void
conns_bury(loop *l)
{
	while (l->dead != NULL) {
		hconn *c = l->dead;
		l->dead = c->next;
		buf_fini(&c->in);
		buf_fini(&c->out);
		http_req_fini(&c->rq);
		free(c);
	}
}

/*
 * Closes c's socket; the struct goes when no request of it is being
 * served (a call or job still points to it until then).
 */
static void
conn_drop(hconn *c)
{
	if (c->freed)
		return;
	if (c->fd >= 0) {
		close(c->fd);
		c->fd = -1;
	}
	if (!c->busy)
		conn_free(c);
}

/* Bytes of answers queued for c and not yet written. */
size_t
unsent(const hconn *c)
{
	return c->out.len - c->sent;
}

/*
 * Takes the outcome of writing c->out: n bytes written, or -1 when the
 * connection broke. False: c is gone (dropped).
 */
bool
conn_wrote(hconn *c, ssize_t n)
{
	if (n < 0) {
		conn_drop(c);
		return false;
	}
	c->sent += (size_t) n;
	/*
	 * A client that reads slowly takes a little at a time: move what is
	 * left to the front only once it is no more than what was written,
	 * so that the copying stays linear in the bytes sent.
	 */
	if (c->sent > 0 && c->sent >= unsent(c)) {
		buf_consume(&c->out, c->sent);
		c->sent = 0;
	}
	if (c->out.len == 0 && c->closing && !c->busy) {
		if (c->draining) {
			/* Let the client read the answer, then see EOF. */
			shutdown(c->fd, SHUT_WR);
			return true;
		}
		conn_drop(c);
		return false;
	}
	return true;
}

/* Writes what it can of c->out now. False: c is gone (dropped). */
bool
conn_flush_now(hconn *c)
{
	return conn_wrote(c, rpc_send_some(c->fd, c->out.p + c->sent,
	    unsent(c)));
}

/*
 * Has c->out written: with the round's other writes when the loop has a
 * ring (round_writes), else now. False: c is gone (dropped).
 */
static bool
conn_flush(hconn *c)
{
	loop *l = c->l;
	if (!l->ring_ok)
		return conn_flush_now(c);
	if (c->queued)
		return true;
	if (l->n_writes == l->cap_writes) {
		size_t cap = l->cap_writes == 0 ? 64 : 2 * l->cap_writes;
		hconn **w = realloc(l->writes, cap * sizeof(*w));
		if (w == NULL)
			return conn_flush_now(c);
		l->writes = w;
		l->cap_writes = cap;
	}
	l->writes[l->n_writes++] = c;
	c->queued = true;
	return true;
}

static const char *
date_header(loop *l)
{
	time_t now = time(NULL);
	if (now != l->date_at) {
		struct tm tm;
		gmtime_r(&now, &tm);
		strftime(l->date, sizeof(l->date),
		    "%a, %d %b %Y %H:%M:%S GMT", &tm);
		l->date_at = now;
	}
	return l->date;
}

/* Queues rp (taking its body) as c's answer. False: out of memory. */
static bool
conn_answer(hconn *c, reply *rp, const char *ctype)
{
	char *body = rp->body;
	size_t len = body != NULL ? rp->len : 0;
	uint64_t seq = atomic_fetch_add(&request_seq, 1);
	const char *conn = c->closing ? "Connection: close\r\n" :
	    c->rq.http10 ? "Connection: keep-alive\r\n" : "";
	bool ok = false;

	rp->body = NULL;
	/* Every piece is bounded: the head takes under 400 bytes, and
	 * CORS's headers under 400 more. */
	if (strlen(ctype) < 64 && buf_reserve(&c->out, 800 + len)) {
		char *p = c->out.p + c->out.len;
		p = http_put_str(p, "HTTP/1.1 ");
		p = http_put_dec(p, (uint64_t) rp->status);
		*p++ = ' ';
		p = http_put_str(p, http_reason(rp->status));
		p = http_put_str(p, "\r\nx-amzn-RequestId: KV");
		p = http_put_hex(p, seq, 16);
		p = http_put_hex(p, (uint64_t) time(NULL), 8);
		p = http_put_str(p, "\r\nx-amz-crc32: ");
		p = http_put_dec(p, http_crc32(body, len));
		p = http_put_str(p, "\r\nContent-Type: ");
		p = http_put_str(p, ctype);
		p = http_put_str(p, "\r\nContent-Length: ");
		p = http_put_dec(p, len);
		p = http_put_str(p, "\r\nDate: ");
		p = http_put_str(p, date_header(c->l));
		p = http_put_str(p, "\r\n");
		p = http_put_cors(p, &c->rq);
		p = http_put_str(p, conn);
		p = http_put_str(p, "\r\n");
		/* A HEAD answer is a GET answer's head alone. */
		if (len > 0 && c->rq.method != HTTP_HEAD) {
			memcpy(p, body, len);
			p += len;
		}
		c->out.len = (size_t) (p - c->out.p);
		ok = true;
	}
	free(body);
	return ok;
}

/* A reply with a fixed text body (GET answers). */
static void
text_reply(reply *rp, int status, const char *text)
{
	rp->status = status;
	rp->body = strdup(text);
	rp->len = rp->body != NULL ? strlen(rp->body) : 0;
}

static void conn_process(hconn *c);
static bool to_node(hconn *c, call *q);

/*
 * Ends c's request with rp (taking its body): answers and drops the
 * request's bytes. False when c is gone.
 */
static bool
conn_done(hconn *c, reply *rp, const char *ctype)
{
	c->busy = false;
	if (c->fd < 0) {
		free(rp->body);
		rp->body = NULL;
		conn_free(c);
		return false;
	}
	c->closing = c->closing || !c->rq.keep_alive;
	if (rp->status == 0) { /* never filled: a bug, not the client's */
		free(rp->body);
		rp->body = NULL;
		errors_reply(rp, ERR_INTERNAL, "no answer was made");
	}
	if (!conn_answer(c, rp, ctype))
		c->closing = true;
	buf_consume(&c->in, c->rq.total);
	c->started = 0; /* the next request's clock starts at the sweep */
	http_req_fini(&c->rq);
	http_req_init(&c->rq);
	return conn_flush(c);
}

/* conn_done for an answer that came later: then the next request. */
static void
conn_resume(hconn *c, reply *rp, const char *ctype)
{
	if (conn_done(c, rp, ctype) && !c->closing)
		conn_process(c);
}

/* ---- the worker pool ---- */

static void
job_free(job *j)
{
	free(j->target);
	free(j->auth);
	free(j->body);
	free(j->rp.body);
	free(j);
}

static char *
dup_or_null(const char *s)
{
	return s != NULL ? strdup(s) : NULL;
}

/* Hands c's request to a worker. False when c is gone. */
static bool
to_worker(hconn *c, int get)
{
	http *h = c->l->h;
	job *j = calloc(1, sizeof(*j));
	const char *body = http_req_body(&c->rq, c->in.p);
	if (j != NULL) {
		j->l = c->l;
		j->c = c;
		j->get = get;
		j->target = dup_or_null(c->rq.has_target ? c->rq.target :
		    NULL);
		j->auth = dup_or_null(c->rq.has_auth ? c->rq.auth : NULL);
		j->len = c->rq.body_len;
		j->body = malloc(j->len + 1);
	}
	if (j == NULL || j->body == NULL ||
	    (c->rq.has_target && j->target == NULL) ||
	    (c->rq.has_auth && j->auth == NULL)) {
		reply rp = { 0 };
		errors_from_kv(&rp, KV_ENOMEM);
		if (j != NULL)
			job_free(j);
		return conn_done(c, &rp, JSON_TYPE);
	}
	memcpy(j->body, body, j->len);
	j->body[j->len] = '\0';
	pthread_mutex_lock(&h->pool_mu);
	if (h->queue_tail != NULL)
		h->queue_tail->next = j;
	else
		h->queue = j;
	h->queue_tail = j;
	pthread_cond_signal(&h->pool_cv);
	pthread_mutex_unlock(&h->pool_mu);
	return true;
}

static void *
worker(void *arg)
{
	http *h = arg;
	thread_name("kv-http-work");
	for (;;) {
		pthread_mutex_lock(&h->pool_mu);
		while (h->queue == NULL && !atomic_load(&h->stop))
			pthread_cond_wait(&h->pool_cv, &h->pool_mu);
		job *j = h->queue;
		if (j == NULL) {
			pthread_mutex_unlock(&h->pool_mu);
			return NULL;
		}
		h->queue = j->next;
		if (h->queue == NULL)
			h->queue_tail = NULL;
		pthread_mutex_unlock(&h->pool_mu);
		j->next = NULL;
		if (j->get == GET_METRICS)
			ops_metrics(h->r, &j->rp);
		else if (j->get == GET_STATUS)
			ops_status_json(h->r, &j->rp);
		else {
			conn_relay_set(relay_call, j->l);
			api_handle(h->r, j->target, j->auth, j->body, j->len,
			    &j->rp);
			conn_relay_set(NULL, NULL);
		}
		loop *l = j->l;
		pthread_mutex_lock(&l->done_mu);
		j->next = l->done;
		l->done = j;
		pthread_mutex_unlock(&l->done_mu);
		uint64_t one = 1;
		if (write(l->efd, &one, sizeof(one)) < 0)
			perror("kv-router: waking a loop");
	}
}

/* Writes the answers workers finished for loop l. */
static void
take_done(loop *l)
{
	uint64_t n;
	if (read(l->efd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		perror("kv-router: reading the eventfd");
	pthread_mutex_lock(&l->done_mu);
	job *j = l->done;
	l->done = NULL;
	pthread_mutex_unlock(&l->done_mu);
	while (j != NULL) {
		job *next = j->next;
		conn_resume(j->c, &j->rp, j->get == GET_METRICS ?
		    "text/plain; version=0.0.4; charset=utf-8" :
		    j->get == GET_STATUS ? "application/json" : JSON_TYPE);
		job_free(j);
		j = next;
	}
}

/* ---- node links ---- */

static void
link_close(nlink *k, loop *l)
{
	if (k->fd >= 0)
		epoll_ctl(l->ep, EPOLL_CTL_DEL, k->fd, NULL);
	if (k->nf != NULL)
		nframe_close(k->nf); /* its descriptor is nng's */
	else if (k->fd >= 0)
		close(k->fd);
	k->nf = NULL;
	k->fd = -1;
	k->connecting = false;
	k->out.len = 0;
	k->queued = 0;
	k->in.len = 0;
	k->pre = PRE_NONE;
}

/* Ends call k with rv (no answer) or the node's response. */
static void
call_end(call *k, kv_err rv, rpc_response *resp)
{
	if (k->rl != NULL) {
		relay_end(k->rl, RELAY_DONE, rv, resp);
		free(k);
		return;
	}
	reply rp = { 0 };
	hconn *c = k->c;
	api_path p = api_finish(&k->s, rv, resp, &rp);
	if (p == API_NODE) {
		/* A transaction's next call: it goes on, client or not. */
		to_node(c, k);
		return;
	}
	if (p == API_WORKER && c->fd >= 0)
		to_worker(c, 0);
	else
		conn_resume(c, &rp, JSON_TYPE);
	free(k);
}

/*
 * Fails every call on k and closes it. sent: the calls may have reached
 * the node (they fail with rv); otherwise none did, and they go to the
 * workers to be tried afresh.
 */
static void
link_fail(nlink *k, loop *l, bool sent, kv_err rv)
{
	call *q = k->head;
	k->head = k->tail = NULL;
	link_close(k, l);
	while (q != NULL) {
		call *next = q->next;
		if (!sent && q->rl != NULL) {
			relay_end(q->rl, RELAY_NOT_SENT, rv, NULL);
			free(q);
		} else if (!sent && q->c->fd >= 0 &&
		    api_restartable(&q->s)) {
			api_abort(&q->s);
			to_worker(q->c, 0);
			free(q);
		} else {
			call_end(q, rv, NULL);
		}
		q = next;
	}
}

/*
 * --nng-requests: a channel to the node's nng address for requests; the
 * loop polls nng's descriptor (level-triggered: readable while a message
 * waits). It connects in the background.
 */
static bool
link_connect_nng(nlink *k, loop *l, uint32_t node)
{
	char url[300];
	if (config_bus_url(l->h->r->cfg.nodes[node].bus, CONFIG_BUS_REQUESTS,
	    url, sizeof(url)) != KV_OK || nframe_dial(url, &k->nf) != KV_OK)
		return false;
	int fd = nframe_fd(k->nf);
	struct epoll_event ev = { .events = EPOLLIN,
		.data.u64 = ((uint64_t) node << 32) | 1u };
	if (fd < 0 || epoll_ctl(l->ep, EPOLL_CTL_ADD, fd, &ev) != 0) {
		nframe_close(k->nf);
		k->nf = NULL;
		return false;
	}
	k->fd = fd;
	k->connecting = false;
	return true;
}

static bool
link_connect(nlink *k, loop *l, uint32_t node)
{
	struct sockaddr_storage sa;
	socklen_t len;
	if (l->h->r->nng_requests)
		return link_connect_nng(k, l, node);
	if (rpc_parse_url(l->h->r->cfg.nodes[node].url, &sa, &len) != KV_OK)
		return false;
	int fd = socket(sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	if (sa.ss_family != AF_UNIX) {
		int one = 1;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	}
	bool pending = false;
	if (connect(fd, (struct sockaddr *) &sa, len) != 0) {
		if (errno != EINPROGRESS) {
			close(fd);
			return false;
		}
		pending = true;
	}
	struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT | EPOLLRDHUP |
		EPOLLET, .data.u64 = ((uint64_t) node << 32) | 1u };
	if (epoll_ctl(l->ep, EPOLL_CTL_ADD, fd, &ev) != 0) {
		close(fd);
		return false;
	}
	k->fd = fd;
	k->connecting = pending;
	return true;
}

/*
 * Takes the outcome of writing k->out: n bytes written, or -1 when the
 * link broke. False: it broke (and its calls failed).
 */
bool
link_wrote(nlink *k, loop *l, ssize_t n)
{
	k->queued = 0;
	if (n < 0) {
		link_fail(k, l, true, KV_UNAVAILABLE);
		return false;
	}
	if (n > 0)
		buf_consume(&k->out, (size_t) n);
	return true;
}

/* Writes k's queued frames now. False: the link broke (already failed). */
bool
link_flush(nlink *k, loop *l)
{
	if (k->fd < 0 || k->connecting)
		return true;
	if (k->nf != NULL) {
		/*
		 * One message for all of them. Not sent (not connected yet,
		 * or nng's queue full): they wait for the next round, and
		 * the call deadline bounds the wait.
		 */
		if (k->out.len == 0 ||
		    nframe_send(k->nf, k->out.p, k->out.len) != KV_OK)
			return true;
		return link_wrote(k, l, (ssize_t) k->out.len);
	}
	return link_wrote(k, l, rpc_send_some(k->fd, k->out.p, k->out.len));
}

/*
 * Ends the calls whose answers are complete in k->in, oldest first.
 * False: the link failed meanwhile (a bad frame, or what an answer
 * started).
 */
static bool
link_take(nlink *k, loop *l)
{
	size_t off = 0;
	while (k->in.len - off >= 4) {
		const uint8_t *f = (const uint8_t *) k->in.p + off;
		uint32_t flen = (uint32_t) f[0] | (uint32_t) f[1] << 8 |
		    (uint32_t) f[2] << 16 | (uint32_t) f[3] << 24;
		call *q = k->head;
		if (flen > RPC_MAX_MESSAGE || q == NULL) {
			link_fail(k, l, true, KV_PROTO);
			return false;
		}
		if (k->in.len - off - 4 < flen)
			break;
		k->head = q->next;
		if (k->head == NULL)
			k->tail = NULL;
		rpc_response resp;
		kv_err rv = wire_unpack_response(f + 4, flen,
		    q->rl != NULL ? q->rl->a : &q->s.a, &resp);
		off += 4 + (size_t) flen;
		call_end(q, rv, rv == KV_OK ? &resp : NULL);
		if (k->fd < 0)
			return false; /* failed by what the answer started */
	}
	if (off > 0)
		buf_consume(&k->in, off);
	return true;
}

/* --nng-requests: takes every waiting message's answers. */
static void
link_read_nng(nlink *k, loop *l)
{
	for (;;) {
		nframe_msg *m;
		const uint8_t *body;
		size_t len;
		kv_err rv = nframe_recv(k->nf, &m, &body, &len);
		if (rv == KV_BUSY)
			return;
		if (rv != KV_OK) {
			link_fail(k, l, true, KV_UNAVAILABLE);
			return;
		}
		bool ok = buf_reserve(&k->in, len);
		if (ok) {
			memcpy(k->in.p + k->in.len, body, len);
			k->in.len += len;
		}
		nframe_msg_free(m);
		if (!ok) {
			link_fail(k, l, true, KV_ENOMEM);
			return;
		}
		if (!link_take(k, l))
			return;
	}
}

/* Reads the node's answers on k and ends their calls, oldest first. */
static void
link_read(nlink *k, loop *l)
{
	if (k->nf != NULL) {
		link_read_nng(k, l);
		return;
	}
	for (;;) {
		bool emptied;
		if (k->pre != PRE_NONE) {
			pre_read pre = k->pre;
			k->pre = PRE_NONE;
			if (pre == PRE_EOF || pre == PRE_ERROR) {
				link_fail(k, l, true, KV_UNAVAILABLE);
				return;
			}
			emptied = pre == PRE_EMPTIED;
		} else {
			if (!buf_reserve(&k->in, READ_CHUNK)) {
				link_fail(k, l, true, KV_ENOMEM);
				return;
			}
			size_t space = k->in.cap - k->in.len;
			ssize_t n = recv(k->fd, k->in.p + k->in.len, space, 0);
			if (n == 0 ||
			    (n < 0 && errno != EINTR && errno != EAGAIN)) {
				link_fail(k, l, true, KV_UNAVAILABLE);
				return;
			}
			if (n < 0) {
				if (errno == EINTR)
					continue;
				return;
			}
			k->in.len += (size_t) n;
			emptied = (size_t) n < space; /* a short read */
		}
		if (!link_take(k, l) || emptied)
			return; /* failed meanwhile, or emptied */
	}
}

static void
link_event(loop *l, uint32_t node, uint32_t events)
{
	nlink *k = &l->links[node];
	if (k->fd < 0)
		return;
	if (k->nf != NULL) {
		if (events & EPOLLIN)
			link_read(k, l);
		return;
	}
	if (k->connecting) {
		int err = 0;
		socklen_t el = sizeof(err);
		if (!(events & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
			return;
		if (getsockopt(k->fd, SOL_SOCKET, SO_ERROR, &err, &el) != 0 ||
		    err != 0) {
			link_fail(k, l, false, KV_UNAVAILABLE);
			return;
		}
		k->connecting = false;
	}
	if ((events & EPOLLOUT) && !link_flush(k, l))
		return;
	if (events & (EPOLLIN | EPOLLERR | EPOLLHUP | EPOLLRDHUP))
		link_read(k, l);
}

/*
 * Queues q's request (msg, len bytes, packed) on l's link to node with
 * the call deadline, and connects the link if it is not. False, with
 * nothing queued, for a node not in the cluster or without memory. The
 * link may fail at once (a refused connection), and q with it.
 */
bool
link_queue(loop *l, uint32_t node, call *q, const uint8_t *msg, size_t len)
{
	nlink *k = node < l->h->r->cfg.n_nodes ? &l->links[node] : NULL;
	if (k == NULL || !buf_reserve(&k->out, len + 4))
		return false;
	q->next = NULL;
	q->deadline_ms = clock_mono_ms() + l->h->r->call_timeout_ms;
	uint8_t h4[4] = { (uint8_t) len, (uint8_t) (len >> 8),
		(uint8_t) (len >> 16), (uint8_t) (len >> 24) };
	buf_add(&k->out, h4, 4);
	buf_add(&k->out, msg, len);
	if (k->tail != NULL)
		k->tail->next = q;
	else
		k->head = q;
	k->tail = q;
	if (++k->queued >= LINK_BATCH)
		l->urgent = true;
	if (k->fd < 0 && !link_connect(k, l, node))
		link_fail(k, l, false, KV_UNAVAILABLE);
	return true;
}

/*
 * Queues call q, prepared by api_start, to its node. False when c is
 * gone.
 */
static bool
to_node(hconn *c, call *q)
{
	loop *l = c->l;
	uint8_t *msg = NULL;
	size_t len = 0;

	q->c = c;
	q->rl = NULL;
	if (wire_pack_request(q->s.req, &msg, &len) != KV_OK ||
	    !link_queue(l, q->s.owner, q, msg, len)) {
		reply rp = { 0 };
		free(msg);
		if (api_finish(&q->s, q->s.owner < l->h->r->cfg.n_nodes ?
		    KV_ENOMEM : KV_UNAVAILABLE, NULL, &rp) == API_NODE)
			return to_node(c, q); /* a transaction's next call */
		free(q);
		return conn_done(c, &rp, JSON_TYPE);
	}
	free(msg);
	return true;
}

/* Fails the calls of links whose oldest call is past its deadline. */
static void
links_expire(loop *l)
{
	int64_t now = clock_mono_ms();
	for (size_t i = 0; i < l->h->r->cfg.n_nodes; i++) {
		nlink *k = &l->links[i];
		if (k->head != NULL && k->head->deadline_ms <= now)
			link_fail(k, l, !k->connecting, KV_TIMEDOUT);
	}
}

static bool
links_waiting(loop *l)
{
	for (size_t i = 0; i < l->h->r->cfg.n_nodes; i++)
		if (l->links[i].head != NULL)
			return true;
	return false;
}

/* ---- requests ---- */

/* DynamoDB's answer to a body over HTTP_MAX_BODY, as sent or decoded. */
static void
reply_too_large(reply *rp)
{
	errors_reply(rp, ERR_TOO_LARGE, "Request body is larger than the "
	    "maximum of %u bytes", HTTP_MAX_BODY);
}

/*
 * Undoes the body's Content-Encoding (http_inflate.h): the decoded body
 * then belongs to c->rq, as a chunked one does, until conn_done. False
 * with the answer in *rp; nothing of the request was applied.
 */
static bool
conn_inflate(hconn *c, reply *rp)
{
	char why[256];
	switch (http_inflate(&c->rq, c->in.p, HTTP_MAX_BODY, why,
	    sizeof(why))) {
	case HTTP_INFLATE_OK:
		return true;
	case HTTP_INFLATE_TOO_LARGE:
		reply_too_large(rp);
		return false;
	case HTTP_INFLATE_NOMEM:
		errors_from_kv(rp, KV_ENOMEM);
		return false;
	default:
		/*
		 * DynamoDB answers 500 InternalServerError to a body that is
		 * not of its coding and to a coding it does not know (as
		 * scylladb's test/alternator/test_compressed_request.py
		 * records). But a 500 tells the SDKs to retry, and the same
		 * bytes fail the same way every time: a client's mistake
		 * gets a 400 here, as SerializationException, DynamoDB's
		 * type for a body it cannot read.
		 */
		errors_reply(rp, ERR_SERIALIZATION, "%s", why);
		return false;
	}
}

/* Starts the complete request in c->rq. False when c is gone. */
static bool
conn_start(hconn *c)
{
	router *r = c->l->h->r;
	http_req *rq = &c->rq;
	reply rp = { 0 };

	c->busy = true;
	if (rq->method == HTTP_GET || rq->method == HTTP_HEAD) {
		if (strcmp(rq->path, "/metrics") == 0)
			return to_worker(c, GET_METRICS);
		if (strcmp(rq->path, "/status.json") == 0)
			return to_worker(c, GET_STATUS);
		if (strcmp(rq->path, "/status") == 0) {
			text_reply(&rp, 200, ops_status_page);
			return conn_done(c, &rp, "text/html; charset=utf-8");
		}
		if (strcmp(rq->path, "/") != 0) {
			text_reply(&rp, 404, "not found\n");
		} else {
			char txt[256];
			snprintf(txt, sizeof(txt), "healthy: %s ", r->listen);
			text_reply(&rp, 200, txt);
		}
		return conn_done(c, &rp, "text/plain");
	}
	if (rq->method == HTTP_OPTIONS && rq->origin) {
		rp.status = 200; /* a CORS preflight: its headers say it */
		return conn_done(c, &rp, "text/plain");
	}
	/* --auth: SigV4, over the body as sent (before conn_inflate). */
	if (r->auth != NULL && !auth_check(r->auth, c->in.p, rq->head_len,
	    http_req_body(rq, c->in.p), rq->body_len, time(NULL), &rp))
		return conn_done(c, &rp, JSON_TYPE);
	if (rq->method != HTTP_POST) {
		errors_reply(&rp, ERR_UNKNOWN_OPERATION,
		    "An unknown operation was requested.");
		return conn_done(c, &rp, JSON_TYPE);
	}
	if (strcmp(rq->path, "/") != 0) {
		/*
		 * Operations are POSTed to "/" only; its query does not
		 * count ("/?x=1" is "/": the parser keeps it apart, as
		 * SigV4 signs it apart). dynalite, written against
		 * DynamoDB, found that DynamoDB does not look at the path;
		 * we refuse another one all the same, so that a client
		 * pointed at a wrong URL hears so instead of working by
		 * chance, and so that paths stay free for the router's own
		 * pages. 404 for the path, and the __type of a request no
		 * operation serves, which the SDKs do not retry.
		 */
		errors_reply(&rp, ERR_UNKNOWN_OPERATION, "DynamoDB requests "
		    "are served at the path \"/\" only.");
		rp.status = 404;
		return conn_done(c, &rp, JSON_TYPE);
	}
	if (!conn_inflate(c, &rp))
		return conn_done(c, &rp, JSON_TYPE);
	call *q = malloc(sizeof(*q));
	if (q == NULL) {
		errors_from_kv(&rp, KV_ENOMEM);
		return conn_done(c, &rp, JSON_TYPE);
	}
	q->next = NULL;
	switch (api_start(r, rq->has_target ? rq->target : NULL,
	    rq->has_auth ? rq->auth : NULL, http_req_body(rq, c->in.p),
	    rq->body_len, &q->s, &rp)) {
	case API_NODE:
		return to_node(c, q); /* takes q */
	case API_DONE:
		free(q);
		return conn_done(c, &rp, JSON_TYPE);
	case API_WORKER:
	default:
		free(q);
		return to_worker(c, 0);
	}
}

/* Refuses the request being parsed, and closes after the answer. */
static void
conn_refuse(hconn *c, http_status st)
{
	reply rp = { 0 };
	if (st == HTTP_TOO_LARGE) {
		reply_too_large(&rp);
	} else {
		text_reply(&rp, st == HTTP_HEAD_TOO_LARGE ? 431 :
		    st == HTTP_BAD_VERSION ? 505 : 400, "bad request\n");
	}
	c->closing = true;
	c->draining = true;
	c->in.len = 0;
	conn_answer(c, &rp, st == HTTP_TOO_LARGE ? JSON_TYPE : "text/plain");
	conn_flush(c);
}

/* Parses and starts what c->in holds, until a request is in service. */
static void
conn_process(hconn *c)
{
	/* Requests wait while the client leaves OUT_LIMIT of answers unread. */
	while (!c->busy && !c->closing && c->in.len > 0 &&
	    unsent(c) <= OUT_LIMIT) {
		bool cont = false;
		http_status st = http_req_parse(&c->rq, c->in.p, c->in.len,
		    HTTP_MAX_BODY, &cont);
		if (cont) {
			static const char go[] = "HTTP/1.1 100 Continue\r\n\r\n";
			if (!buf_add(&c->out, go, sizeof(go) - 1) ||
			    !conn_flush(c))
				return;
		}
		if (st == HTTP_INCOMPLETE)
			break;
		if (st != HTTP_COMPLETE) {
			conn_refuse(c, st);
			return;
		}
		if (!conn_start(c))
			return;
	}
	/*
	 * A client that half-closed has its complete requests answered, in
	 * order; then the connection closes.
	 */
	if (c->eof && !c->busy && !c->closing && unsent(c) <= OUT_LIMIT) {
		c->closing = true;
		if (unsent(c) == 0)
			conn_drop(c);
	}
}

void
conn_room(hconn *c, size_t was)
{
	if (was > OUT_LIMIT && unsent(c) <= OUT_LIMIT)
		conn_process(c);
}

/* Reads what has arrived on c. */
static void
conn_read(hconn *c)
{
	c->active = time(NULL);
	for (;;) {
		/* This round's read through the ring (round_reads) first. */
		if (c->pre != PRE_NONE) {
			pre_read pre = c->pre;
			c->pre = PRE_NONE;
			if (pre == PRE_ERROR) {
				conn_drop(c);
				return;
			}
			if (pre == PRE_EOF) {
				c->eof = true;
				break;
			}
			/* As after a short read below, or a full one. */
			if (pre == PRE_EMPTIED && !c->hup)
				break;
			continue;
		}
		if (c->in.len > IN_LIMIT || c->eof)
			break;
		if (c->draining) {
			char sink[READ_CHUNK];
			ssize_t n = recv(c->fd, sink, sizeof(sink), 0);
			if (n > 0 && (c->drained += (size_t) n) < DRAIN_LIMIT)
				continue;
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0 && errno == EAGAIN)
				return;
			conn_drop(c);
			return;
		}
		if (!buf_reserve(&c->in, READ_CHUNK)) {
			conn_drop(c);
			return;
		}
		ssize_t n = recv(c->fd, c->in.p + c->in.len,
		    c->in.cap - c->in.len, 0);
		if (n == 0) {
			/* Half closed: answer what came, then close. */
			c->eof = true;
			break;
		}
		if (n < 0 && errno != EINTR && errno != EAGAIN) {
			conn_drop(c);
			return;
		}
		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		c->in.len += (size_t) n;
		/*
		 * A short read emptied the socket: what comes later raises a
		 * new edge, so the recv that would say EAGAIN can be saved;
		 * unless the FIN is in already, which raises none.
		 */
		if (c->in.len < c->in.cap && !c->hup)
			break;
	}
	/* Over IN_LIMIT, reading waits for answers to free the input. */
	c->read_more = !c->eof && c->in.len > IN_LIMIT;
	conn_process(c);
	/* A refusal leaves the rest of the upload to be drained now. */
	if (!c->freed && c->fd >= 0 && c->draining)
		conn_read(c);
}

static void
accept_all(loop *l)
{
	for (;;) {
		int fd = accept4(l->h->lfd, NULL, NULL,
		    SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		/* Past the limit, a connection is closed at once. */
		uint32_t cap = l->h->r->max_connections;
		if (cap > 0 && atomic_load_explicit(&l->h->r->open_conns,
		    memory_order_relaxed) >= cap) {
			close(fd);
			continue;
		}
		int one = 1;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		hconn *c = calloc(1, sizeof(*c));
		if (c == NULL) {
			close(fd);
			continue;
		}
		c->l = l;
		c->fd = fd;
		c->active = time(NULL);
		atomic_fetch_add_explicit(&l->h->r->open_conns, 1,
		    memory_order_relaxed);
		http_req_init(&c->rq);
		c->next = l->conns;
		if (l->conns != NULL)
			l->conns->prev = c;
		l->conns = c;
		struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT |
			EPOLLRDHUP | EPOLLET, .data.ptr = c };
		if (epoll_ctl(l->ep, EPOLL_CTL_ADD, fd, &ev) != 0)
			conn_drop(c);
	}
}

/* Closes connections idle for IDLE_SECONDS; resumes paused reads. */
static void
conns_sweep(loop *l)
{
	time_t now = time(NULL);
	if (now == l->swept)
		return;
	l->swept = now;
	int slow = l->h->r->request_seconds;
	for (hconn *c = l->conns, *next; c != NULL; c = next) {
		next = c->next;
		if (c->fd < 0 || c->busy)
			continue;
		/* A request that trickles in (slow-loris) may not hold its
		 * connection: it has request_seconds to arrive whole. */
		if (c->in.len == 0)
			c->started = 0;
		else if (c->started == 0)
			c->started = now;
		if ((unsent(c) == 0 && now - c->active > IDLE_SECONDS) ||
		    (slow > 0 && c->started != 0 && now - c->started > slow))
			conn_drop(c);
	}
}

static void *
loop_run(void *arg)
{
	loop *l = arg;
	http *h = l->h;
	thread_name("kv-http-loop");
	struct epoll_event evs[256];

	while (!atomic_load(&h->stop)) {
		int timeout = links_waiting(l) ? 50 : 1000;
		int n = epoll_wait(l->ep, evs, 256, timeout);
		if (l->ring_ok && n > 0)
			round_reads(l, evs, n);
		for (int i = 0; i < n; i++) {
			uint64_t tag = evs[i].data.u64;
			/*
			 * A node with LINK_BATCH requests waiting gets them
			 * now, so it works while the round goes on.
			 */
			if (l->urgent) {
				l->urgent = false;
				for (size_t k = 0; k < h->r->cfg.n_nodes; k++)
					if (l->links[k].queued >= LINK_BATCH)
						link_flush(&l->links[k], l);
			}
			if (tag == TAG_LISTEN) {
				accept_all(l);
			} else if (tag == TAG_EVENT) {
				take_done(l);
				take_relays(l);
			} else if (tag & 1u) {
				link_event(l, (uint32_t) (tag >> 32),
				    evs[i].events);
			} else {
				hconn *c = evs[i].data.ptr;
				uint32_t ev = evs[i].events;
				if (c->fd < 0)
					continue;
				if ((ev & EPOLLOUT) && unsent(c) > 0) {
					size_t was = unsent(c);
					if (!conn_flush_now(c))
						continue;
					conn_room(c, was);
					if (c->fd < 0)
						continue;
				}
				if (ev & (EPOLLHUP | EPOLLRDHUP))
					c->hup = true;
				if (ev & (EPOLLIN | EPOLLERR | EPOLLHUP |
				    EPOLLRDHUP))
					conn_read(c);
			}
		}
		/*
		 * Each node's frames of this round, in one write (the ring's,
		 * below, except over nng).
		 */
		for (size_t i = 0; i < h->r->cfg.n_nodes; i++)
			if (l->links[i].out.len > 0 &&
			    (!l->ring_ok || l->links[i].nf != NULL))
				link_flush(&l->links[i], l);
		links_expire(l);
		conns_sweep(l);
		for (hconn *c = l->conns, *next; c != NULL; c = next) {
			next = c->next;
			if (c->read_more && !c->busy && c->fd >= 0 &&
			    unsent(c) <= OUT_LIMIT)
				conn_read(c);
		}
		if (l->ring_ok)
			round_writes(l);
		conns_bury(l);
	}
	relays_close(l);
	return NULL;
}

/* ---- opening and closing ---- */

static void
loop_fini(loop *l)
{
	for (size_t i = 0; i < CONFIG_MAX_NODES; i++) {
		nlink *k = &l->links[i];
		for (call *q = k->head, *next; q != NULL; q = next) {
			next = q->next;
			api_abort(&q->s);
			q->c->busy = false;
			free(q);
		}
		k->head = k->tail = NULL;
		if (k->nf != NULL)
			nframe_close(k->nf);
		else if (k->fd >= 0)
			close(k->fd);
		buf_fini(&k->out);
		buf_fini(&k->in);
	}
	for (job *j = l->done, *next; j != NULL; j = next) {
		next = j->next;
		j->c->busy = false;
		job_free(j);
	}
	l->done = NULL;
	while (l->conns != NULL) {
		l->conns->busy = false;
		conn_free(l->conns);
	}
	conns_bury(l);
	free(l->writes);
	l->writes = NULL;
	l->n_writes = l->cap_writes = 0;
	if (l->ring_ok)
		io_uring_queue_exit(&l->ring);
	l->ring_ok = false;
	if (l->ep >= 0)
		close(l->ep);
	if (l->efd >= 0)
		close(l->efd);
	pthread_mutex_destroy(&l->done_mu);
}

static bool
loop_init(http *h, loop *l)
{
	l->h = h;
	l->ep = epoll_create1(EPOLL_CLOEXEC);
	l->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	pthread_mutex_init(&l->done_mu, NULL);
	for (size_t i = 0; i < CONFIG_MAX_NODES; i++)
		l->links[i].fd = -1;
	if (l->ep < 0 || l->efd < 0)
		return false;
	/* Without io_uring (an old kernel, a sandbox), each write goes alone. */
	/* SUBMIT_ALL: one refused operation does not hold back the rest. */
	l->ring_ok = !h->r->no_ring &&
	    (io_uring_queue_init(RING_ENTRIES, &l->ring,
	    IORING_SETUP_SUBMIT_ALL) == 0 ||
	    io_uring_queue_init(RING_ENTRIES, &l->ring, 0) == 0);
	struct epoll_event lev = { .events = EPOLLIN | EPOLLEXCLUSIVE,
		.data.u64 = TAG_LISTEN };
	struct epoll_event eev = { .events = EPOLLIN, .data.u64 = TAG_EVENT };
	return epoll_ctl(l->ep, EPOLL_CTL_ADD, h->lfd, &lev) == 0 &&
	    epoll_ctl(l->ep, EPOLL_CTL_ADD, l->efd, &eev) == 0;
}

/*
 * Listens on host (an IPv4 or IPv6 address, "::" for every address) and
 * port. SO_REUSEPORT lets the cluster's other routers listen on the same
 * address: the kernel spreads new connections over the listeners, and
 * when one router dies the others take all of them.
 */
static int
listen_on(const char *host, int port)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_STREAM,
		.ai_flags = AI_PASSIVE | AI_NUMERICHOST | AI_NUMERICSERV };
	struct addrinfo *ai;
	char ps[16];
	snprintf(ps, sizeof(ps), "%d", port);
	if (strcmp(host, "localhost") == 0)
		host = "127.0.0.1";
	if (getaddrinfo(host, ps, &hints, &ai) != 0)
		return -1;
	int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0);
	if (fd < 0) {
		freeaddrinfo(ai);
		return -1;
	}
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
	if (ai->ai_family == AF_INET6)
		/* "::" takes IPv4 too, as Linux does by default. */
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &(int) { 0 },
		    sizeof(int));
	int ok = bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
	    listen(fd, 1024) == 0;
	freeaddrinfo(ai);
	if (!ok) {
		close(fd);
		return -1;
	}
	return fd;
}

kv_err
http_open(router *r, const char *host, int port, int loops, http **out)
{
	http *h = calloc(1, sizeof(*h));
	if (h == NULL)
		return KV_ENOMEM;
	h->r = r;
	atomic_init(&h->stop, false);
	pthread_mutex_init(&h->pool_mu, NULL);
	pthread_cond_init(&h->pool_cv, NULL);
	for (int i = 0; i < MAX_LOOPS; i++)
		h->loops[i].ep = h->loops[i].efd = -1;
	if (loops < 1)
		loops = 1;
	if (loops > MAX_LOOPS)
		loops = MAX_LOOPS;
	h->n_loops = loops;
	if ((h->lfd = listen_on(host, port)) < 0) {
		pthread_mutex_destroy(&h->pool_mu);
		pthread_cond_destroy(&h->pool_cv);
		free(h);
		return KV_IO;
	}
	kv_err rv = KV_OK;
	for (int i = 0; i < loops && rv == KV_OK; i++)
		if (!loop_init(h, &h->loops[i]))
			rv = KV_IO;
	for (int i = 0; i < WORKERS && rv == KV_OK; i++) {
		if (pthread_create(&h->workers[i], NULL, worker, h) != 0)
			rv = KV_ENOMEM;
		else
			h->n_workers++;
	}
	for (int i = 0; i < loops && rv == KV_OK; i++) {
		if (pthread_create(&h->loops[i].th, NULL, loop_run,
		    &h->loops[i]) != 0)
			rv = KV_ENOMEM;
		else
			h->loops[i].started = true;
	}
	if (rv != KV_OK) {
		http_close(h);
		return rv;
	}
	*out = h;
	return KV_OK;
}

bool
http_ring(const http *h)
{
	for (int i = 0; i < h->n_loops; i++)
		if (!h->loops[i].ring_ok)
			return false;
	return h->n_loops > 0;
}

void
http_close(http *h)
{
	if (h == NULL)
		return;
	atomic_store(&h->stop, true);
	for (int i = 0; i < h->n_loops; i++) {
		uint64_t one = 1;
		if (h->loops[i].efd >= 0 &&
		    write(h->loops[i].efd, &one, sizeof(one)) < 0)
			perror("kv-router: stopping a loop");
	}
	for (int i = 0; i < h->n_loops; i++)
		if (h->loops[i].started)
			pthread_join(h->loops[i].th, NULL);
	pthread_mutex_lock(&h->pool_mu);
	pthread_cond_broadcast(&h->pool_cv);
	pthread_mutex_unlock(&h->pool_mu);
	for (int i = 0; i < h->n_workers; i++)
		pthread_join(h->workers[i], NULL);
	for (job *j = h->queue, *next; j != NULL; j = next) {
		next = j->next;
		j->c->busy = false;
		job_free(j);
	}
	for (int i = 0; i < h->n_loops; i++)
		loop_fini(&h->loops[i]);
	close(h->lfd);
	pthread_mutex_destroy(&h->pool_mu);
	pthread_cond_destroy(&h->pool_cv);
	free(h);
}
