/*
 * peer.c — the node-to-node seam (see peer.h).
 *
 * Server: one REP socket and PEER_WORKERS threads, each with a context and
 * an aio of its own, receiving, serving and replying in turn (nng routes
 * each reply to the pipe its request came on). A worker waits with no
 * timeout; peer_close stops the workers' aios (bus.h).
 *
 * Client: one REQ socket per node called, dialing for as long as the seam
 * lives. A call opens a context of its own on it, so calls to one node
 * run side by side. Connections are counted per socket by the pipe
 * callbacks (on nng's threads; ADD_PRE up, REM_POST down, which nng pairs
 * one to one), so that a call to a node that is down fails after a short
 * grace instead of its whole deadline.
 *
 * A dialer that stays without a connection while calls want one is
 * replaced (bus_dialer, bus.h): calls that find no connection to a node
 * count as misses, told to the dialer only while no other call to that
 * node is under way (the `use` lock below, tried), since a replacement
 * closes the old dialer. A connection over which calls time out with no reply
 * for BUS_SILENT_MS is closed and dialed again: each reply and each
 * timeout is told to the dialer, and a call that finds the silence long
 * enough closes the pipes if no other call to that node is under way
 * (the remote's `use` lock, tried; the next timeout tries again).
 *
 * Locking rule: the handler table and the node table are written before
 * the seam is shared (peer_handle before peer_listen, peer_add before the
 * first call) and only read afterwards; a node's dialer keeps bus.h's
 * rule; a node's `use` lock is held shared from a call's context open to
 * its close, and exclusively only by a successful try, never waited for
 * (but by a test's plant, peer_plant_dead_dialer).
 */
#include "peer.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bus.h" /* nng.h, before its protocols */
#include <nng/protocol/reqrep0/rep.h>
#include <nng/protocol/reqrep0/req.h>

#include "config.h"
#include "thread_name.h"

_Static_assert(PEER_REDIAL_MS == BUS_REDIAL_MS, "peer.h's redial time is "
    "bus.h's");

typedef struct handler {
	peer_fn fn;
	void *arg;
} handler;

typedef struct worker {
	struct peer *p;
	nng_aio *aio;
	pthread_t th;
} worker;

typedef struct remote {
	bool added;
	nng_socket sock;
	bus_dialer d; /* its one dialer: every pipe of sock is its */
	/* Held shared by each call under way on sock, exclusively (tried,
	 * never waited for) to close a silent connection's pipes. */
	pthread_rwlock_t use;
} remote;

struct peer {
	uint32_t self;
	handler handlers[PEER_TYPES];
	bool listening;
	atomic_bool stop; /* the workers leave */
	nng_socket srv;
	worker workers[PEER_WORKERS]; /* the first n_workers run */
	int n_workers;
	remote nodes[CONFIG_MAX_NODES];
};

kv_err
peer_open(uint32_t self, peer **out)
{
	peer *p = calloc(1, sizeof(*p));
	if (p == NULL)
		return KV_ENOMEM;
	p->self = self;
	atomic_init(&p->stop, false);
	*out = p;
	return KV_OK;
}

kv_err
peer_handle(peer *p, uint32_t type, peer_fn fn, void *arg)
{
	if (type == 0 || type >= PEER_TYPES || p->listening)
		return KV_EINVAL;
	p->handlers[type].fn = fn;
	p->handlers[type].arg = arg;
	return KV_OK;
}

/* Serves one request (the body of m); returns the reply bytes. */
static kv_err
serve(peer *p, nng_msg *m, uint8_t **out, size_t *len)
{
	arena a;
	peer_msg pm;
	peer_reply rep = { .code = KV_OK };

	arena_init(&a);
	kv_err rv = wire_unpack_peer_msg(nng_msg_body(m), nng_msg_len(m), &a,
	    &pm);
	if (rv != KV_OK)
		rep.code = rv;
	else if (pm.type == 0 || pm.type >= PEER_TYPES ||
	    p->handlers[pm.type].fn == NULL)
		rep.code = KV_PROTO;
	else
		p->handlers[pm.type].fn(p->handlers[pm.type].arg, &pm, &a,
		    &rep);
	rv = wire_pack_peer_reply(&rep, out, len);
	arena_fini(&a);
	return rv;
}

static void *
work(void *arg)
{
	worker *w = arg;
	peer *p = w->p;
	nng_aio *aio = w->aio;
	thread_name("kv-peer");
	nng_ctx ctx;
	if (nng_ctx_open(&ctx, p->srv) != 0)
		return NULL;
	while (!atomic_load(&p->stop)) {
		nng_aio_set_timeout(aio, NNG_DURATION_INFINITE);
		nng_ctx_recv(ctx, aio);
		nng_aio_wait(aio);
		int rv = nng_aio_result(aio);
		if (rv == NNG_ECLOSED || rv == NNG_ECANCELED)
			break; /* closed, or stopped by peer_close */
		if (rv != 0)
			continue;
		nng_msg *m = nng_aio_get_msg(aio);
		uint8_t *buf = NULL;
		size_t len = 0;
		if (serve(p, m, &buf, &len) != KV_OK) {
			nng_msg_free(m);
			continue; /* the caller times out */
		}
		nng_msg_clear(m);
		if (nng_msg_append(m, buf, len) != 0) {
			free(buf);
			nng_msg_free(m);
			continue;
		}
		free(buf);
		nng_aio_set_msg(aio, m);
		nng_aio_set_timeout(aio, NNG_DURATION_DEFAULT);
		nng_ctx_send(ctx, aio);
		nng_aio_wait(aio);
		if (nng_aio_result(aio) != 0)
			nng_msg_free(m);
	}
	nng_ctx_close(ctx);
	return NULL;
}

kv_err
peer_listen(peer *p, const char *url)
{
	if (p->listening)
		return KV_EINVAL;
	int rv = nng_rep0_open(&p->srv);
	if (rv != 0)
		return bus_err(rv);
	p->listening = true;
	kv_err e = bus_setup(p->srv);
	if (e == KV_OK)
		e = bus_listen(p->srv, url, "node-to-node messages");
	for (int i = 0; i < PEER_WORKERS && e == KV_OK; i++) {
		worker *w = &p->workers[i];
		w->p = p;
		e = bus_err(nng_aio_alloc(&w->aio, NULL, NULL));
		if (e == KV_OK && pthread_create(&w->th, NULL, work, w) != 0) {
			nng_aio_free(w->aio);
			e = KV_ENOMEM;
		}
		if (e == KV_OK)
			p->n_workers++;
	}
	return e; /* on failure, peer_close cleans up */
}

static void
on_pipe(nng_pipe pipe, nng_pipe_ev ev, void *arg)
{
	remote *r = arg;
	bus_dialer_pipe(&r->d, pipe, ev);
}

kv_err
peer_add(peer *p, uint32_t node, const char *url, bool later)
{
	if (node >= CONFIG_MAX_NODES || p->nodes[node].added)
		return KV_EINVAL;
	remote *r = &p->nodes[node];
	int rv = nng_req0_open(&r->sock);
	if (rv != 0)
		return bus_err(rv);
	pthread_rwlock_init(&r->use, NULL);
	kv_err e = bus_setup(r->sock);
	if (e == KV_OK)
		e = bus_err(nng_pipe_notify(r->sock, NNG_PIPE_EV_ADD_PRE,
		    on_pipe, r));
	if (e == KV_OK)
		e = bus_err(nng_pipe_notify(r->sock, NNG_PIPE_EV_REM_POST,
		    on_pipe, r));
	if (e == KV_OK)
		e = later ? bus_dialer_init(&r->d, r->sock, url) :
		    bus_dialer_start(&r->d, r->sock, url);
	if (e != KV_OK) {
		nng_close(r->sock);
		pthread_rwlock_destroy(&r->use);
		return e;
	}
	r->added = true;
	return KV_OK;
}

void
peer_plant_dead_dialer(peer *p, uint32_t node)
{
	if (node < CONFIG_MAX_NODES && p->nodes[node].added) {
		/* Between calls, as a repair closes (bus.h). */
		pthread_rwlock_wrlock(&p->nodes[node].use);
		bus_dialer_plant_dead(&p->nodes[node].d);
		pthread_rwlock_unlock(&p->nodes[node].use);
	}
}

/* Receives on ctx through aio until end; the nng result. */
static int
recv_until(nng_ctx ctx, nng_aio *aio, int64_t end)
{
	int64_t left = end - bus_mono_ms();
	if (left <= 0)
		return NNG_ETIMEDOUT;
	nng_aio_set_timeout(aio, (nng_duration) left);
	nng_ctx_recv(ctx, aio);
	nng_aio_wait(aio);
	return nng_aio_result(aio);
}

/*
 * Calls fn (which may close the dialer or its pipes) on r's dialer if no
 * call to r is under way: with r's use lock taken exclusively, by a try,
 * never waited for. A close beside another call's context on the socket
 * can stop nng 1.5.2's reaper for good (bus.h).
 */
static void
alone(remote *r, void (*fn)(bus_dialer *))
{
	if (pthread_rwlock_trywrlock(&r->use) == 0) {
		fn(&r->d);
		pthread_rwlock_unlock(&r->use);
	}
}

/* A call whose request is on its way (peer_call_start). */
struct peer_pending {
	remote *r; /* the node called */
	nng_ctx ctx;
	nng_aio *aio;
	int64_t end;
};

kv_err
peer_call_start(peer *p, uint32_t node, uint32_t type, const uint8_t *body,
    size_t len, int timeout_ms, peer_pending **out)
{
	*out = NULL;
	if (node >= CONFIG_MAX_NODES || !p->nodes[node].added)
		return KV_UNAVAILABLE;
	remote *r = &p->nodes[node];
	int64_t start = bus_mono_ms(), end = start + timeout_ms;
	int64_t grace = start + (timeout_ms < PEER_CONNECT_GRACE_MS ?
	    timeout_ms : PEER_CONNECT_GRACE_MS);
	while (!bus_dialer_up(&r->d)) {
		/* A miss may replace the dialer: calls under way end by
		 * their deadlines, and the next miss tries again. */
		alone(r, bus_dialer_missed);
		if (bus_mono_ms() >= grace)
			return KV_UNAVAILABLE;
		struct timespec ts = { 0, 2 * 1000000L };
		nanosleep(&ts, NULL);
	}
	peer_msg pm = { .type = type, .from = p->self, .body = body,
		.len = len };
	uint8_t *buf;
	size_t blen;
	kv_err rv = wire_pack_peer_msg(&pm, &buf, &blen);
	if (rv != KV_OK)
		return rv;
	peer_pending *pp = calloc(1, sizeof(*pp));
	nng_msg *m = NULL;
	pthread_rwlock_rdlock(&r->use);
	int nrv = pp == NULL ? NNG_ENOMEM : nng_ctx_open(&pp->ctx, r->sock);
	if (nrv != 0) {
		pthread_rwlock_unlock(&r->use);
		free(buf);
		free(pp);
		return bus_err(nrv);
	}
	pp->end = end;
	pp->r = r;
	/* No resend on a timer: only a broken connection resends. */
	nng_ctx_set_ms(pp->ctx, NNG_OPT_REQ_RESENDTIME, NNG_DURATION_INFINITE);
	if ((nrv = nng_aio_alloc(&pp->aio, NULL, NULL)) == 0 &&
	    (nrv = nng_msg_alloc(&m, 0)) == 0 &&
	    (nrv = nng_msg_append(m, buf, blen)) == 0) {
		int64_t left = end - bus_mono_ms();
		nng_aio_set_msg(pp->aio, m);
		nng_aio_set_timeout(pp->aio, (nng_duration) (left > 0 ?
		    left : 1));
		nng_ctx_send(pp->ctx, pp->aio);
		free(buf);
		*out = pp;
		return KV_OK;
	}
	free(buf);
	if (m != NULL)
		nng_msg_free(m);
	nng_aio_free(pp->aio);
	nng_ctx_close(pp->ctx);
	pthread_rwlock_unlock(&r->use);
	free(pp);
	return bus_err(nrv) == KV_ENOMEM ? KV_ENOMEM : KV_UNAVAILABLE;
}

kv_err
peer_call_end(peer_pending *pp, arena *a, peer_reply *out)
{
	kv_err rv = KV_OK;
	nng_msg *m = NULL;
	memset(out, 0, sizeof(*out));
	nng_aio_wait(pp->aio);
	int nrv = nng_aio_result(pp->aio);
	if (nrv != 0)
		m = nng_aio_get_msg(pp->aio); /* not sent: still ours */
	else if ((nrv = recv_until(pp->ctx, pp->aio, pp->end)) == 0) {
		bus_dialer_answered(&pp->r->d);
		m = nng_aio_get_msg(pp->aio);
		peer_reply tmp;
		rv = wire_unpack_peer_reply(nng_msg_body(m), nng_msg_len(m), a,
		    &tmp);
		if (rv == KV_OK)
			*out = tmp;
	}
	if (m != NULL)
		nng_msg_free(m);
	nng_aio_free(pp->aio);
	nng_ctx_close(pp->ctx);
	remote *r = pp->r;
	pthread_rwlock_unlock(&r->use);
	free(pp);
	if (nrv == NNG_ETIMEDOUT && bus_dialer_silent(&r->d))
		alone(r, bus_dialer_reconnect);
	if (nrv != 0)
		return bus_err(nrv) == KV_ENOMEM ? KV_ENOMEM :
		    nrv == NNG_ETIMEDOUT ? KV_TIMEDOUT : KV_UNAVAILABLE;
	return rv;
}

kv_err
peer_call(peer *p, uint32_t node, uint32_t type, const uint8_t *body,
    size_t len, int timeout_ms, arena *a, peer_reply *out)
{
	peer_pending *pp;
	memset(out, 0, sizeof(*out));
	kv_err rv = peer_call_start(p, node, type, body, len, timeout_ms, &pp);
	return rv == KV_OK ? peer_call_end(pp, a, out) : rv;
}

void
peer_close(peer *p)
{
	if (p == NULL)
		return;
	atomic_store(&p->stop, true);
	for (int i = 0; i < p->n_workers; i++)
		nng_aio_stop(p->workers[i].aio);
	for (int i = 0; i < p->n_workers; i++) {
		pthread_join(p->workers[i].th, NULL);
		nng_aio_free(p->workers[i].aio);
	}
	if (bus_exit_started())
		return; /* the sockets stay to the exit, and p with them */
	if (p->listening) {
		bus_unlisten(p->srv);
		nng_close(p->srv);
	}
	for (size_t i = 0; i < CONFIG_MAX_NODES; i++)
		if (p->nodes[i].added) {
			nng_close(p->nodes[i].sock);
			bus_dialer_fini(&p->nodes[i].d);
			pthread_rwlock_destroy(&p->nodes[i].use);
		}
	free(p);
}
