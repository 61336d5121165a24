/*
 * bus_guard.c — listeners that keep taking connections (see bus.h,
 * bus_listen).
 *
 * nng 1.5.2, the version Debian 12 ships, has a listener bug (nng issue
 * #1518, fixed in 1.6.0): when a peer leaves in the middle of the
 * handshake, the listener's accept loop ends for good. The transport goes
 * on accepting and even completing handshakes, so dialers believe they
 * are connected, but the socket never takes another pipe: nothing sent to
 * it is ever read. A process killed while its dialers were connecting is
 * such a peer, and so is any client that connects and closes at once (a
 * port check). In the cluster it showed as a restarted node that the
 * catalog node and the routers could not reach for good.
 *
 * So every listener made by bus_listen is guarded. A thread of the
 * process dials each one every BUS_GUARD_EVERY_MS from a socket of the
 * peer protocol it keeps for it and waits up to BUS_GUARD_WAIT_MS for the
 * listening socket to take that pipe (its pipe callback counts the pipes
 * it takes); nng's statistics do not tell, as a listener in that state
 * counts no error. Two probes in a row that it did not take
 * (BUS_GUARD_MISSES) mean the accept loop has ended: the listener is
 * closed and the socket listens again on the same address, which drops
 * the connections that listener had (their dialers connect again) and
 * starts a new accept loop. A probe closes its dialer only once its own
 * side of the handshake is done, or the wait is over, so that it does
 * not break a listener itself. Nothing here is durable: a process that
 * dies loses only its probes.
 *
 * Locking rule: guard_mu guards the table, the thread's start and the
 * listener handles; a probe and a new listen of a guarded socket happen
 * under it, so bus_unlisten (which its owner calls before closing the
 * socket) waits for a probe under way and no probe starts on a socket
 * being closed. A listener paused by a fault (bus_listen_pause) is closed
 * and made again under it too, and is not probed while paused. The pipe
 * callbacks (nng's threads) touch only the atomic counts; a slot is never
 * freed, so a late callback of a socket that is gone counts into memory
 * that stays valid.
 */
#include "bus.h"
#include "clock.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include <nng/protocol/pubsub0/sub.h>
#include <nng/protocol/reqrep0/req.h>
#include <nng/protocol/survey0/survey.h>

#define GUARDS 16
#define BUS_GUARD_EVERY_MS 4000 /* a probe of each listener this often */
#define BUS_GUARD_WAIT_MS 2000  /* for the socket to take the probe */
#define BUS_GUARD_MISSES 2      /* probes in a row it did not take */
#define BUS_GUARD_URL_MAX 256
#define SUB0_PROTO 0x21 /* nng's sub0 (its header in 1.5.2 names none) */

typedef struct guard {
	bool used;
	nng_socket sock;
	nng_listener l;
	char url[BUS_GUARD_URL_MAX];
	const char *what;
	int peer;        /* the protocol a probe speaks */
	int missed;      /* probes in a row the socket did not take */
	atomic_uint taken; /* pipes the socket took */
	bool probing;    /* probe is open */
	bool paused;     /* its listener closed by bus_listen_pause */
	nng_socket probe; /* dials the listener at each probe */
	atomic_bool up;  /* the probe's current dial has its pipe */
} guard;

static pthread_mutex_t guard_mu = PTHREAD_MUTEX_INITIALIZER;
static guard guards[GUARDS];
static bool started;
static atomic_bool guard_off;
static atomic_uint relistened;

static void
on_taken(nng_pipe p, nng_pipe_ev ev, void *arg)
{
	(void) p;
	(void) ev;
	atomic_fetch_add(&((guard *) arg)->taken, 1);
}

static void
on_probe_up(nng_pipe p, nng_pipe_ev ev, void *arg)
{
	(void) p;
	(void) ev;
	atomic_store((atomic_bool *) arg, true);
}

static int
probe_open(int peer, nng_socket *s)
{
	switch (peer) {
	case NNG_REQ0_SELF:
		return nng_req0_open(s);
	case NNG_SURVEYOR0_SELF:
		return nng_surveyor0_open(s);
	case SUB0_PROTO:
		return nng_sub0_open(s);
	default:
		return NNG_ENOTSUP;
	}
}

/* Whether g's socket took a pipe dialed to it within the wait. Needs
 * guard_mu. */
static bool
probe(guard *g)
{
	nng_dialer d;
	if (!g->probing) {
		/* One probe socket per listener, kept: a fresh socket per
		 * probe cost an idle cluster about 1 % of a core. */
		if (probe_open(g->peer, &g->probe) != 0)
			return true; /* cannot tell: no verdict */
		if (nng_pipe_notify(g->probe, NNG_PIPE_EV_ADD_POST,
		    on_probe_up, &g->up) != 0) {
			nng_close(g->probe);
			return true;
		}
		g->probing = true;
	}
	atomic_store(&g->up, false);
	unsigned before = atomic_load(&g->taken);
	if (nng_dialer_create(&d, g->probe, g->url) != 0)
		return true;
	if (nng_dialer_start(d, NNG_FLAG_NONBLOCK) != 0) {
		nng_dialer_close(d);
		return false; /* nothing listens there any more */
	}
	int64_t end = clock_mono_ms() + BUS_GUARD_WAIT_MS;
	while ((atomic_load(&g->taken) == before || !atomic_load(&g->up)) &&
	    clock_mono_ms() < end) {
		struct timespec ts = { 0, 2 * 1000000L };
		nanosleep(&ts, NULL);
	}
	bool took = atomic_load(&g->taken) != before;
	nng_dialer_close(d); /* and its pipe */
	return took;
}

/* Closes g's listener and listens again. Needs guard_mu. */
static void
relisten(guard *g)
{
	nng_listener_close(g->l);
	int rv = nng_listen(g->sock, g->url, &g->l, 0);
	atomic_fetch_add(&relistened, 1);
	fprintf(stderr, "kv: the listener on %s (%s) took no connection "
	    "for %d probes (nng 1.5.2 stops accepting after a peer leaves "
	    "during the handshake): listening anew: %s\n", g->url, g->what,
	    g->missed, rv == 0 ? "done" : nng_strerror(rv));
}

static void *
run(void *arg)
{
	(void) arg;
	for (;;) {
		struct timespec ts = { BUS_GUARD_EVERY_MS / 1000,
		    (long) (BUS_GUARD_EVERY_MS % 1000) * 1000000L };
		nanosleep(&ts, NULL);
		for (size_t i = 0; i < GUARDS; i++) {
			pthread_mutex_lock(&guard_mu);
			guard *g = &guards[i];
			if (g->used && !g->paused && !bus_exit_started() &&
			    !atomic_load(&guard_off)) {
				g->missed = probe(g) ? 0 : g->missed + 1;
				if (g->missed >= BUS_GUARD_MISSES) {
					relisten(g);
					g->missed = 0;
				}
			}
			pthread_mutex_unlock(&guard_mu);
		}
	}
	return NULL;
}

void
bus_guard_add(nng_socket s, nng_listener l, const char *url,
    const char *what)
{
	int peer = 0;
	if (nng_socket_get_int(s, NNG_OPT_PEER, &peer) != 0 ||
	    (peer != NNG_REQ0_SELF && peer != NNG_SURVEYOR0_SELF &&
	    peer != SUB0_PROTO) || strlen(url) >= BUS_GUARD_URL_MAX)
		return; /* a socket the guard cannot probe stays unguarded */
	pthread_mutex_lock(&guard_mu);
	guard *g = NULL;
	for (size_t i = 0; i < GUARDS && g == NULL; i++)
		if (!guards[i].used)
			g = &guards[i];
	if (g != NULL && nng_pipe_notify(s, NNG_PIPE_EV_ADD_POST, on_taken,
	    g) == 0) {
		g->sock = s;
		g->l = l;
		strcpy(g->url, url);
		g->what = what;
		g->peer = peer;
		g->missed = 0;
		g->paused = false;
		g->used = true;
		if (!started) {
			pthread_t th;
			started = pthread_create(&th, NULL, run, NULL) == 0;
			if (started)
				pthread_detach(th);
		}
	}
	pthread_mutex_unlock(&guard_mu);
}

void
bus_unlisten(nng_socket s)
{
	pthread_mutex_lock(&guard_mu);
	for (size_t i = 0; i < GUARDS; i++)
		if (guards[i].used && nng_socket_id(guards[i].sock) ==
		    nng_socket_id(s)) {
			guards[i].used = false;
			if (guards[i].probing)
				nng_close(guards[i].probe);
			guards[i].probing = false;
		}
	pthread_mutex_unlock(&guard_mu);
}

/* The guard of s's listener, or NULL. Needs guard_mu. */
static guard *
guard_of(nng_socket s)
{
	for (size_t i = 0; i < GUARDS; i++)
		if (guards[i].used && nng_socket_id(guards[i].sock) ==
		    nng_socket_id(s))
			return &guards[i];
	return NULL;
}

kv_err
bus_listen_pause(nng_socket s)
{
	pthread_mutex_lock(&guard_mu);
	guard *g = guard_of(s);
	kv_err rv = g == NULL || g->paused ? KV_EINVAL : KV_OK;
	if (rv == KV_OK) {
		/* Closes the transport's endpoint (an IPC path is unlinked
		 * here) and every pipe it took; nothing waits on the reaper. */
		nng_listener_close(g->l);
		g->paused = true;
		g->missed = 0;
	}
	pthread_mutex_unlock(&guard_mu);
	return rv;
}

kv_err
bus_listen_resume(nng_socket s)
{
	pthread_mutex_lock(&guard_mu);
	guard *g = guard_of(s);
	kv_err rv = g == NULL || !g->paused ? KV_EINVAL : KV_OK;
	if (rv == KV_OK) {
		int nrv = nng_listen(g->sock, g->url, &g->l, 0);
		if (nrv == 0)
			g->paused = false;
		else
			rv = nrv == NNG_ENOMEM ? KV_ENOMEM : KV_IO;
	}
	pthread_mutex_unlock(&guard_mu);
	return rv;
}

void
bus_guard_set_off(bool off)
{
	atomic_store(&guard_off, off);
}

unsigned
bus_guard_relistened(void)
{
	return atomic_load(&relistened);
}
