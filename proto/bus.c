/*
 * bus.c — nng's errors and the cluster's socket options (see bus.h).
 */
#include "bus.h"
#include "clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rpc.h"

kv_err
bus_err(int rv)
{
	switch (rv) {
	case 0:
		return KV_OK;
	case NNG_ENOMEM:
		return KV_ENOMEM;
	case NNG_ETIMEDOUT:
		return KV_TIMEDOUT;
	case NNG_EINVAL:
	case NNG_EADDRINVAL:
	case NNG_ENOTSUP:
	case NNG_EBADTYPE:
		return KV_EINVAL;
	case NNG_EADDRINUSE:
	case NNG_EPERM:
		return KV_IO;
	case NNG_EPROTO:
	case NNG_EMSGSIZE:
		return KV_PROTO;
	case NNG_EAGAIN:
		return KV_BUSY;
	default: /* closed, refused, reset, unreachable, ... */
		return KV_UNAVAILABLE;
	}
}

kv_err
bus_setup(nng_socket s)
{
	int rv = nng_socket_set_size(s, NNG_OPT_RECVMAXSZ, RPC_MAX_MESSAGE);
	if (rv == 0)
		rv = nng_socket_set_ms(s, NNG_OPT_RECONNMINT,
		    BUS_RECONNECT_MIN_MS);
	if (rv == 0)
		rv = nng_socket_set_ms(s, NNG_OPT_RECONNMAXT,
		    BUS_RECONNECT_MAX_MS);
	return bus_err(rv);
}

kv_err
bus_listen(nng_socket s, const char *url, const char *what)
{
	nng_listener l;
	int rv = nng_listen(s, url, &l, 0);
	if (rv != 0) {
		fprintf(stderr, "kv: cannot listen on %s (%s): %s\n", url,
		    what, nng_strerror(rv));
		return rv == NNG_EADDRINVAL || rv == NNG_EINVAL ||
		    rv == NNG_ENOTSUP ? KV_EINVAL : KV_IO;
	}
	bus_guard_add(s, l, url, what);
	return KV_OK;
}

/* Tests: a stopped reaper (bus_plant_stopped_reaper). */
static atomic_bool plant_stopped_reaper;

void
bus_plant_stopped_reaper(bool on)
{
	atomic_store(&plant_stopped_reaper, on);
}

/*
 * Creates, without starting it, a dialer of url from s that, once
 * started, dials at once and then, after each failure, again within
 * reconnect_ms (0: the socket's times, from BUS_RECONNECT_MIN_MS doubling
 * to BUS_RECONNECT_MAX_MS). *id, when not NULL, is set to its id.
 */
static kv_err
dialer_new(nng_socket s, const char *url, nng_duration reconnect_ms,
    atomic_int *id, nng_dialer *out)
{
	int rv = nng_dialer_create(out, s, url);
	if (rv == 0 && reconnect_ms > 0 &&
	    ((rv = nng_dialer_set_ms(*out, NNG_OPT_RECONNMINT,
	    reconnect_ms)) != 0 ||
	    (rv = nng_dialer_set_ms(*out, NNG_OPT_RECONNMAXT,
	    reconnect_ms)) != 0))
		nng_dialer_close(*out);
	if (rv != 0)
		return bus_err(rv) == KV_ENOMEM ? KV_ENOMEM : KV_EINVAL;
	if (id != NULL)
		atomic_store(id, nng_dialer_id(*out));
	return KV_OK;
}

/* Starts dialer d without waiting for the connection. */
static kv_err
dialer_go(nng_dialer d)
{
	int rv = nng_dialer_start(d, NNG_FLAG_NONBLOCK);
	return rv == 0 ? KV_OK : bus_err(rv) == KV_ENOMEM ? KV_ENOMEM :
	    KV_EINVAL;
}

kv_err
bus_dial(nng_socket s, const char *url, atomic_int *id)
{
	nng_dialer d;
	kv_err e = dialer_new(s, url, 0, id, &d);
	return e == KV_OK ? dialer_go(d) : e;
}

int
bus_recv(nng_socket s, nng_aio *aio, nng_duration ms, nng_msg **m)
{
	*m = NULL;
	nng_aio_set_timeout(aio, ms);
	nng_recv_aio(s, aio);
	nng_aio_wait(aio);
	int rv = nng_aio_result(aio);
	if (rv == 0)
		*m = nng_aio_get_msg(aio);
	return rv;
}

kv_err
bus_dialer_init(bus_dialer *d, nng_socket s, const char *url)
{
	nng_dialer dl;
	kv_err e = dialer_new(s, url, 0, &d->id, &dl);
	if (e != KV_OK)
		return e;
	d->sock = s;
	if ((d->url = strdup(url)) == NULL) {
		nng_dialer_close(dl);
		return KV_ENOMEM;
	}
	pthread_mutex_init(&d->mu, NULL);
	pthread_mutex_init(&d->pipes_mu, NULL);
	return KV_OK;
}

/* Starts d's first dialer. Needs d->mu. */
static kv_err
start_locked(bus_dialer *d)
{
	if (atomic_load(&d->dialing))
		return KV_OK;
	nng_dialer dl = { .id = (uint32_t) atomic_load(&d->id) };
	kv_err e = dialer_go(dl);
	if (e == KV_OK)
		atomic_store(&d->dialing, true);
	return e;
}

kv_err
bus_dialer_start(bus_dialer *d, nng_socket s, const char *url)
{
	kv_err e = bus_dialer_init(d, s, url);
	if (e != KV_OK)
		return e;
	pthread_mutex_lock(&d->mu);
	e = start_locked(d);
	pthread_mutex_unlock(&d->mu);
	if (e != KV_OK)
		bus_dialer_fini(d);
	return e;
}

void
bus_dialer_want(bus_dialer *d)
{
	if (d->url == NULL || atomic_load(&d->dialing))
		return;
	pthread_mutex_lock(&d->mu);
	if (start_locked(d) != KV_OK)
		fprintf(stderr, "kv: cannot dial %s\n", d->url);
	pthread_mutex_unlock(&d->mu);
}

void
bus_dialer_fini(bus_dialer *d)
{
	if (d->url == NULL)
		return;
	free(d->url);
	d->url = NULL;
	pthread_mutex_destroy(&d->mu);
	pthread_mutex_destroy(&d->pipes_mu);
}

bool
bus_dialer_owns(bus_dialer *d, nng_pipe p)
{
	int id = nng_dialer_id(nng_pipe_dialer(p));
	return id > 0 && (id == atomic_load(&d->id) ||
	    id == atomic_load(&d->old_id));
}

/*
 * For a state that began at *start (bus_mono_ms; 0: not under way): notes
 * now as its start if it had none; true once it has lasted ms, with
 * *since its start.
 */
static bool
lasted(_Atomic int64_t *start, int64_t now, int64_t ms, int64_t *since)
{
	*since = atomic_load(start);
	if (*since == 0) {
		atomic_compare_exchange_strong(start, since, now);
		return false;
	}
	return now - *since >= ms;
}

/* The slot of pipe id in d's ids (0: a free slot), or -1. Needs
 * pipes_mu. */
static int
pipe_slot(const bus_dialer *d, uint32_t id)
{
	for (int i = 0; i < BUS_DIALER_PIPES; i++)
		if (d->pipe_ids[i] == id)
			return i;
	return -1;
}

/* Drops pipe id from d's count, if d still counts it. */
/* Frees pipe slot i and uncounts its pipe. Needs d->pipes_mu. */
static void
drop_slot_locked(bus_dialer *d, int i)
{
	d->pipe_ids[i] = 0;
	atomic_fetch_sub(&d->pipes, 1);
}

static void
forget_pipe(bus_dialer *d, uint32_t id)
{
	pthread_mutex_lock(&d->pipes_mu);
	int i = pipe_slot(d, id);
	if (i >= 0)
		drop_slot_locked(d, i);
	pthread_mutex_unlock(&d->pipes_mu);
}

void
bus_dialer_pipe(bus_dialer *d, nng_pipe p, nng_pipe_ev ev)
{
	uint32_t id = (uint32_t) nng_pipe_id(p);
	if (ev == NNG_PIPE_EV_ADD_PRE) {
		pthread_mutex_lock(&d->pipes_mu);
		int i = pipe_slot(d, 0);
		if (i >= 0)
			d->pipe_ids[i] = id;
		else
			d->untracked++;
		atomic_fetch_add(&d->pipes, 1);
		pthread_mutex_unlock(&d->pipes_mu);
		/* A silence is timed on the connections that were there. */
		atomic_store(&d->silent_since, 0);
	} else if (ev == NNG_PIPE_EV_REM_POST &&
	    !atomic_load(&plant_stopped_reaper)) {
		/* A pipe whose id was not kept (they were all taken) was only
		 * counted; one forgotten already (forget_pipe) is not counted
		 * twice. */
		pthread_mutex_lock(&d->pipes_mu);
		int i = pipe_slot(d, id);
		if (i >= 0) {
			drop_slot_locked(d, i);
		} else if (d->untracked > 0) {
			d->untracked--;
			atomic_fetch_sub(&d->pipes, 1);
		}
		pthread_mutex_unlock(&d->pipes_mu);
	}
}

void
bus_dialer_answered(bus_dialer *d)
{
	if (atomic_load(&d->silent_since) != 0)
		atomic_store(&d->silent_since, 0);
}

bool
bus_dialer_silent(bus_dialer *d)
{
	int64_t since;
	return d->url != NULL && lasted(&d->silent_since, bus_mono_ms(),
	    BUS_SILENT_MS, &since);
}

static void dialer_close(bus_dialer *d);

/*
 * Closes d's current dialer and starts a fresh one, which dials at once.
 * Needs d->mu.
 */
static void
replace_locked(bus_dialer *d)
{
	atomic_store(&d->old_id, atomic_load(&d->id));
	dialer_close(d);
	nng_dialer dl;
	if (dialer_new(d->sock, d->url, BUS_DOWN_RECONNECT_MS, &d->id,
	    &dl) != KV_OK || dialer_go(dl) != KV_OK)
		fprintf(stderr, "kv: cannot dial %s again\n", d->url);
}

void
bus_dialer_reconnect(bus_dialer *d)
{
	int64_t now = bus_mono_ms();
	int64_t since = atomic_load(&d->silent_since);
	/* One caller closes; the next time is BUS_SILENT_MS later. */
	if (d->url == NULL || since == 0 || now - since < BUS_SILENT_MS ||
	    !atomic_compare_exchange_strong(&d->silent_since, &since, now))
		return;
	/*
	 * A pipe this repair closed last time and still counted: nng never
	 * removed it, so its reaper has stopped (bus.h). It is forgotten,
	 * or d would count it up for good.
	 */
	uint32_t ids[BUS_DIALER_PIPES], stuck = 0;
	size_t n = 0, n_stuck = 0;
	pthread_mutex_lock(&d->pipes_mu);
	for (size_t j = 0; j < BUS_DIALER_PIPES; j++) {
		int i = d->closed_ids[j] != 0 ?
		    pipe_slot(d, d->closed_ids[j]) : -1;
		if (i >= 0) {
			stuck = d->pipe_ids[i];
			drop_slot_locked(d, i);
			n_stuck++;
		}
	}
	for (size_t i = 0; i < BUS_DIALER_PIPES; i++)
		if (d->pipe_ids[i] != 0)
			ids[n++] = d->pipe_ids[i];
	memset(d->closed_ids, 0, sizeof(d->closed_ids));
	memcpy(d->closed_ids, ids, n * sizeof(ids[0]));
	pthread_mutex_unlock(&d->pipes_mu);
	fprintf(stderr, "kv: no answer over the connection to %s for %lld "
	    "ms: connecting again (%zu pipe%s closed, id %u; a fresh "
	    "dialer)\n", d->url, (long long) (now - since), n,
	    n == 1 ? "" : "s", n > 0 ? ids[0] : 0);
	if (n_stuck > 0)
		fprintf(stderr, "kv: %zu pipe%s to %s closed by the last "
		    "repair never went away (pipe %u): nng's reaper has "
		    "stopped\n", n_stuck, n_stuck == 1 ? "" : "s", d->url,
		    stuck);
	for (size_t i = 0; i < n && !atomic_load(&plant_stopped_reaper);
	    i++) {
		nng_pipe p = NNG_PIPE_INITIALIZER;
		p.id = ids[i];
		/* A pipe nng no longer knows left no REM_POST behind. */
		if (nng_pipe_close(p) == NNG_ENOENT)
			forget_pipe(d, ids[i]);
	}
	/*
	 * And a fresh dialer. nng 1.5.2 redials only once its reaper has
	 * removed the closed pipe, so with a stopped reaper the dialer whose
	 * pipe closed never dials again; a fresh one dials at once.
	 */
	pthread_mutex_lock(&d->mu);
	replace_locked(d);
	pthread_mutex_unlock(&d->mu);
}

bool
bus_dialer_up(bus_dialer *d)
{
	if (atomic_load(&d->pipes) <= 0)
		return false;
	if (atomic_load(&d->down_since) != 0)
		atomic_store(&d->down_since, 0);
	return true;
}

/* Closes d's current dialer, which then no longer dials. */
static void
dialer_close(bus_dialer *d)
{
	nng_dialer dl = { .id = (uint32_t) atomic_load(&d->id) };
	nng_dialer_close(dl);
}

void
bus_dialer_missed(bus_dialer *d)
{
	int64_t now = bus_mono_ms(), since;
	if (d->url == NULL)
		return;
	if (!atomic_load(&d->dialing)) {
		bus_dialer_want(d);
		return;
	}
	if (!lasted(&d->down_since, now, BUS_REDIAL_MS, &since) ||
	    pthread_mutex_trylock(&d->mu) != 0)
		return;
	if (atomic_load(&d->pipes) <= 0 &&
	    atomic_load(&d->down_since) == since) {
		replace_locked(d);
		atomic_store(&d->down_since, now);
	}
	pthread_mutex_unlock(&d->mu);
}

void
bus_dialer_plant_dead(bus_dialer *d)
{
	if (d->url != NULL)
		dialer_close(d);
}

int64_t
bus_now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t
bus_mono_ms(void)
{
	return clock_mono_ms();
}
