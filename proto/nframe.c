/*
 * nframe.c — request frames over nng REQ/REP (see nframe.h).
 *
 * The router's side is a raw REQ socket: it never resends, the loop polls
 * its descriptor, and each message carries an id of ours in its header,
 * which the reply brings back. The node's side is a cooked REP socket
 * served by one thread, receiving and replying in turn; cooked REP waits
 * for room on a connection instead of dropping a reply (a polyamorous
 * PAIR1 socket, tried first, dropped replies under load: it is best
 * effort). One thread serving in order keeps each link's replies in the
 * order of its messages, which the router checks by id.
 *
 * A channel belongs to one router loop's thread; nng's callbacks do not
 * touch it.
 */
#include "nframe.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#include "bus.h" /* nng.h, before its protocols */
#include <nng/protocol/reqrep0/rep.h>
#include <nng/protocol/reqrep0/req.h>
#include "thread_name.h"

/* Messages a channel queues while nng's thread writes. */
#define SEND_QUEUE 128

struct nframe {
	nng_socket sock;
	uint32_t next;     /* the next message's id */
	uint32_t *sent;    /* ids sent and not answered, oldest first */
	size_t head, n, cap; /* a ring over sent[] */
};

struct nframe_server {
	nng_socket sock;
	nframe_serve_fn fn;
	void *arg;
	pthread_t th;
	nng_aio *aio;   /* the thread's receive, stopped to end it (bus.h) */
	atomic_bool stop;
};

kv_err
nframe_dial(const char *url, nframe **out)
{
	nframe *c = calloc(1, sizeof(*c));
	if (c == NULL)
		return KV_ENOMEM;
	int rv = nng_req0_open_raw(&c->sock);
	if (rv != 0) {
		free(c);
		return bus_err(rv);
	}
	kv_err e = bus_setup(c->sock);
	if (e == KV_OK)
		e = bus_err(nng_socket_set_int(c->sock, NNG_OPT_SENDBUF,
		    SEND_QUEUE));
	if (e == KV_OK)
		e = bus_dial(c->sock, url, NULL);
	if (e != KV_OK) {
		nng_close(c->sock);
		free(c);
		return e;
	}
	*out = c;
	return KV_OK;
}

int
nframe_fd(nframe *c)
{
	int fd;
	return nng_socket_get_int(c->sock, NNG_OPT_RECVFD, &fd) == 0 ? fd : -1;
}

kv_err
nframe_send(nframe *c, const void *buf, size_t len)
{
	if (c->n == c->cap) {
		size_t cap = c->cap == 0 ? 64 : c->cap * 2;
		uint32_t *ids = malloc(cap * sizeof(*ids));
		if (ids == NULL)
			return KV_ENOMEM;
		for (size_t i = 0; i < c->n; i++)
			ids[i] = c->sent[(c->head + i) % c->cap];
		free(c->sent);
		c->sent = ids;
		c->cap = cap;
		c->head = 0;
	}
	/* A request id has its top bit set (nng's REQ/REP header). */
	uint32_t id = (c->next++ & 0x7fffffffu) | 0x80000000u;
	nng_msg *m = NULL;
	int rv = nng_msg_alloc(&m, 0);
	if (rv == 0 && (rv = nng_msg_header_append_u32(m, id)) == 0 &&
	    (rv = nng_msg_append(m, buf, len)) == 0 &&
	    (rv = nng_sendmsg(c->sock, m, NNG_FLAG_NONBLOCK)) == 0) {
		c->sent[(c->head + c->n++) % c->cap] = id;
		return KV_OK;
	}
	if (m != NULL)
		nng_msg_free(m);
	return rv == NNG_ENOMEM ? KV_ENOMEM : KV_BUSY;
}

kv_err
nframe_recv(nframe *c, nframe_msg **m, const uint8_t **body, size_t *len)
{
	nng_msg *msg;
	int rv = nng_recvmsg(c->sock, &msg, NNG_FLAG_NONBLOCK);
	if (rv == NNG_EAGAIN)
		return KV_BUSY;
	if (rv != 0)
		return KV_UNAVAILABLE;
	/* The reply to the oldest message, or something is badly wrong. */
	uint32_t id;
	if (nng_msg_header_len(msg) != 4 ||
	    nng_msg_header_trim_u32(msg, &id) != 0 || c->n == 0 ||
	    id != c->sent[c->head]) {
		nng_msg_free(msg);
		return KV_PROTO;
	}
	c->head = (c->head + 1) % c->cap;
	c->n--;
	*m = (nframe_msg *) msg;
	*body = nng_msg_body(msg);
	*len = nng_msg_len(msg);
	return KV_OK;
}

void
nframe_msg_free(nframe_msg *m)
{
	nng_msg_free((nng_msg *) m);
}

void
nframe_close(nframe *c)
{
	if (c == NULL)
		return;
	/* At exit the socket stays open to the end (bus_exit.h). */
	if (!bus_exit_started())
		nng_close(c->sock);
	free(c->sent);
	free(c);
}

static void *
serve_run(void *arg)
{
	nframe_server *s = arg;
	thread_name("kv-nframe");
	while (!atomic_load(&s->stop)) {
		nng_msg *m;
		if (bus_recv(s->sock, s->aio, NNG_DURATION_INFINITE, &m) != 0)
			break; /* stopped or closed */
		uint8_t *out = NULL;
		size_t olen = 0;
		if (!s->fn(s->arg, nng_msg_body(m), nng_msg_len(m), &out,
		    &olen)) {
			nng_msg_free(m);
			continue;
		}
		/* The same message goes back (cooked REP routes it). */
		nng_msg_clear(m);
		if (nng_msg_append(m, out, olen) != 0 ||
		    nng_sendmsg(s->sock, m, 0) != 0)
			nng_msg_free(m);
		free(out);
	}
	return NULL;
}

kv_err
nframe_serve(const char *url, nframe_serve_fn fn, void *arg,
    nframe_server **out)
{
	nframe_server *s = calloc(1, sizeof(*s));
	if (s == NULL)
		return KV_ENOMEM;
	s->fn = fn;
	s->arg = arg;
	int rv = nng_rep0_open(&s->sock);
	if (rv != 0) {
		free(s);
		return bus_err(rv);
	}
	atomic_init(&s->stop, false);
	kv_err e = bus_setup(s->sock);
	if (e == KV_OK)
		e = bus_err(nng_aio_alloc(&s->aio, NULL, NULL));
	if (e == KV_OK)
		e = bus_listen(s->sock, url, "requests over nng");
	if (e == KV_OK && pthread_create(&s->th, NULL, serve_run, s) != 0)
		e = KV_ENOMEM;
	if (e != KV_OK) {
		bus_unlisten(s->sock);
		nng_close(s->sock);
		nng_aio_free(s->aio);
		free(s);
		return e;
	}
	*out = s;
	return KV_OK;
}

void
nframe_server_close(nframe_server *s)
{
	if (s == NULL)
		return;
	atomic_store(&s->stop, true);
	nng_aio_stop(s->aio);
	pthread_join(s->th, NULL);
	nng_aio_free(s->aio);
	/* At exit the socket stays open to the end (bus_exit.h). */
	if (!bus_exit_started()) {
		bus_unlisten(s->sock);
		nng_close(s->sock);
	}
	free(s);
}
