/*
 * http_ring.c — the router's rounds through io_uring (see http.c, "The
 * ring", and docs/design-notes.md, "A round's reads and writes go
 * through io_uring"): the reads a round's events call for, in one
 * io_uring_enter before they are handled, and the round's node frames
 * and answers in one after. Runs on the loop's thread only.
 */
#include "http_int.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

/*
 * One write of a round handed to the ring: a client connection's answers
 * or a node link's frames, with the descriptor and length it was given,
 * so that an outcome is never applied to a socket opened since.
 */
typedef struct ring_write {
	hconn *c;       /* NULL: link `node` */
	uint32_t node;
	int fd;
	size_t len;
} ring_write;

/*
 * Submits the n operations prepared on l's ring (their user data 0..n-1)
 * and waits for all of them: res[i] is operation i's result, bytes or
 * -errno. They are MSG_DONTWAIT, so the wait is short. A ring that will
 * not take them (anything but a passing refusal) ends the process: the
 * operations name buffers that cannot be taken back from the kernel, and
 * a router restarted is better than one that corrupts or hangs.
 */
static void
ring_run(loop *l, unsigned n, int *res)
{
	bool done[RING_ENTRIES] = { false };
	unsigned got = 0;
	int rv;
	/*
	 * Submit all first (a kernel without SUBMIT_ALL stops at a refused
	 * one), then collect: they mostly complete during the submit, so
	 * collecting takes no further system call.
	 */
	for (long tries = 0; io_uring_sq_ready(&l->ring) > 0; tries++) {
		rv = io_uring_submit(&l->ring);
		if ((rv < 0 && rv != -EINTR && rv != -EAGAIN && rv != -EBUSY) ||
		    tries > 1000000) {
			fprintf(stderr, "kv-router: io_uring_enter: %s\n",
			    strerror(rv < 0 ? -rv : EBUSY));
			abort();
		}
		if (rv <= 0)
			sched_yield();
	}
	while (got < n) {
		struct io_uring_cqe *cqe;
		rv = io_uring_wait_cqe(&l->ring, &cqe);
		if (rv == -EINTR || rv == -EAGAIN)
			continue;
		if (rv != 0) {
			fprintf(stderr, "kv-router: io_uring_wait_cqe: %s\n",
			    strerror(-rv));
			abort();
		}
		uint64_t i = io_uring_cqe_get_data64(cqe);
		if (i < n && !done[i]) {
			res[i] = cqe->res;
			done[i] = true;
			got++;
		}
		io_uring_cqe_seen(&l->ring, cqe);
	}
}

/* Applies the outcome res (bytes, or -errno) of write w. */
static void
ring_wrote(loop *l, const ring_write *w, int res)
{
	/* Would block: the rest goes when EPOLLOUT says there is room. */
	ssize_t n = res >= 0 ? res : res == -EAGAIN ? 0 : -1;
	if (w->c != NULL) {
		hconn *c = w->c;
		if (c->freed || c->fd != w->fd)
			return; /* closed meanwhile */
		size_t was = unsent(c);
		/* A short write may have stopped short of a full socket. */
		if (conn_wrote(c, n) && n > 0 && (size_t) n < w->len &&
		    unsent(c) > 0 && !conn_flush_now(c))
			return;
		/*
		 * This write may be the one that makes room: the EPOLLOUT
		 * that follows finds no more than OUT_LIMIT waiting and would
		 * not let the held requests go on.
		 */
		if (c->fd >= 0)
			conn_room(c, was);
		return;
	}
	nlink *k = &l->links[w->node];
	if (k->fd != w->fd)
		return; /* failed meanwhile */
	if (link_wrote(k, l, n) && n > 0 && (size_t) n < w->len &&
	    k->out.len > 0)
		link_flush(k, l);
}

/*
 * Writes every node link's frames and the round's answers (connections
 * queued by conn_flush), RING_ENTRIES to an io_uring_enter, without
 * waiting on any socket (MSG_DONTWAIT: a full one says -EAGAIN, and
 * EPOLLOUT brings the rest). The frames go first, so that the nodes
 * start on them while the answers are delivered. Outcomes may queue
 * more (a broken link answers its calls, and an answer may start a
 * client's next request), so it goes on until nothing is left but what
 * a full socket holds back. On this machine's kind each system call
 * costs more than the work in it; one call for a round's dozens of
 * writes saves most of that.
 */
void
round_writes(loop *l)
{
	size_t nodes = l->h->r->cfg.n_nodes, next = 0;
	bool blocked[CONFIG_MAX_NODES] = { false };
	ring_write w[RING_ENTRIES];

	for (;;) {
		unsigned n = 0;
		for (uint32_t i = 0; i < nodes; i++) {
			nlink *k = &l->links[i];
			if (blocked[i] || k->fd < 0 || k->connecting ||
			    k->out.len == 0 || k->nf != NULL)
				continue;
			w[n] = (ring_write) { NULL, i, k->fd, k->out.len };
			struct io_uring_sqe *e = io_uring_get_sqe(&l->ring);
			io_uring_prep_send(e, k->fd, k->out.p, k->out.len,
			    MSG_NOSIGNAL | MSG_DONTWAIT);
			io_uring_sqe_set_data64(e, n++);
		}
		while (next < l->n_writes && n < RING_ENTRIES) {
			hconn *c = l->writes[next++];
			c->queued = false;
			if (c->freed || c->fd < 0)
				continue;
			if (unsent(c) == 0) {
				conn_wrote(c, 0); /* closes if it is time */
				continue;
			}
			w[n] = (ring_write) { c, 0, c->fd, unsent(c) };
			struct io_uring_sqe *e = io_uring_get_sqe(&l->ring);
			io_uring_prep_send(e, c->fd, c->out.p + c->sent,
			    unsent(c), MSG_NOSIGNAL | MSG_DONTWAIT);
			io_uring_sqe_set_data64(e, n++);
		}
		if (n == 0)
			break;
		int res[RING_ENTRIES];
		ring_run(l, n, res);
		/* In order: a link's failure may answer later connections. */
		for (unsigned i = 0; i < n; i++) {
			ring_wrote(l, &w[i], res[i]);
			/* What a full socket kept waits for EPOLLOUT. */
			if (w[i].c == NULL && (res[i] == -EAGAIN ||
			    (res[i] >= 0 && (size_t) res[i] < w[i].len)))
				blocked[w[i].node] = true;
		}
	}
	l->n_writes = 0;
}

/* One read of a round handed to the ring (round_reads). */
typedef struct ring_read {
	hconn *c;       /* NULL: link k */
	nlink *k;
	int fd;
	size_t space;   /* what the buffer had room for */
} ring_read;

/* The pre_read that result res (bytes, or -errno) of a read leaves. */
static pre_read
pre_of(int res, size_t space)
{
	return res > 0 ? ((size_t) res < space ? PRE_EMPTIED : PRE_MORE) :
	    res == 0 ? PRE_EOF : res == -EAGAIN ? PRE_EMPTIED : PRE_ERROR;
}

/*
 * Reads what the round's events announce, on client connections and
 * node links, through the ring: one io_uring_enter for all of them
 * instead of a recv each (MSG_DONTWAIT: an empty socket says -EAGAIN).
 * Only bookkeeping follows, before any event is handled, since handling
 * one may move another's buffer: the bytes join `in`, and `pre` says
 * what the read found; conn_read and link_read go on from `pre` as from
 * a recv of their own. Whatever is skipped here (a draining connection,
 * a full buffer, a link still connecting, no memory) is read by them.
 */
void
round_reads(loop *l, const struct epoll_event *evs, int n_evs)
{
	ring_read r[RING_ENTRIES];
	int res[RING_ENTRIES];
	int i = 0;

	while (i < n_evs) {
		unsigned n = 0;
		for (; i < n_evs && n < RING_ENTRIES; i++) {
			uint64_t tag = evs[i].data.u64;
			if (tag == TAG_LISTEN || tag == TAG_EVENT ||
			    !(evs[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP |
			    EPOLLRDHUP)))
				continue;
			ring_read x = { 0 };
			buf *b;
			if (tag & 1u) {
				x.k = &l->links[(uint32_t) (tag >> 32)];
				if (x.k->fd < 0 || x.k->connecting ||
				    x.k->pre != PRE_NONE || x.k->nf != NULL)
					continue;
				b = &x.k->in;
				x.fd = x.k->fd;
			} else {
				x.c = evs[i].data.ptr;
				if (x.c->fd < 0 || x.c->draining || x.c->eof ||
				    x.c->in.len > IN_LIMIT ||
				    x.c->pre != PRE_NONE)
					continue;
				b = &x.c->in;
				x.fd = x.c->fd;
			}
			if (!buf_reserve(b, READ_CHUNK))
				continue;
			x.space = b->cap - b->len;
			r[n] = x;
			struct io_uring_sqe *e = io_uring_get_sqe(&l->ring);
			io_uring_prep_recv(e, x.fd, b->p + b->len, x.space,
			    MSG_DONTWAIT);
			io_uring_sqe_set_data64(e, n++);
		}
		if (n == 0)
			continue;
		ring_run(l, n, res);
		for (unsigned j = 0; j < n; j++) {
			buf *b = r[j].c != NULL ? &r[j].c->in : &r[j].k->in;
			if (res[j] > 0)
				b->len += (size_t) res[j];
			if (r[j].c != NULL)
				r[j].c->pre = pre_of(res[j], r[j].space);
			else
				r[j].k->pre = pre_of(res[j], r[j].space);
		}
	}
}
