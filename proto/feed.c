/*
 * feed.c — the catalog feed (see feed.h).
 *
 * Publisher. Locking rule: `mu` guards the version the heartbeat
 * announces and the drop count, and orders the sends on the socket; a
 * change is diffed outside it and sent under it, so the heartbeat never
 * announces a version whose change is still unsent. nng's PUB never
 * blocks a sender: a subscriber that cannot keep up loses messages, which
 * it sees as a gap. A disconnect fault (serialized by `fault_mu`, without
 * `mu`) closes the socket's listener and with it every connection, waits,
 * and listens again on the same socket (bus_listen_pause): meanwhile
 * sends reach nobody. It never closes the socket: nng_close waits on
 * nng's reaper, which nng 1.5.2 can stop for good (seen in the catalog
 * node under load: the fault, then the publisher, hung on the close).
 *
 * Subscriber. Its thread alone receives, applies and fetches; `mu`
 * guards only `cur`, which feed_sub_copy reads from other threads. The
 * counters are atomics. The pipe callback, on one of nng's threads, only
 * counts connections (bus_dialer, bus.h) and sets `reconnected`. Every
 * turn of the thread without a connection is a miss, so a dialer that
 * stopped dialing is replaced BUS_REDIAL_MS later; until then the
 * heartbeat's silence fetches keep the catalog fresh. The thread waits
 * on its aio for the next message: BUS_TICK_MS without a connection,
 * FETCH_RETRY_MS while a fetch is due, else FEED_SILENCE_MS (heartbeats
 * come well within it); feed_sub_close stops the aio (bus.h).
 */
#include "feed.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bus.h" /* nng.h, before its protocols */
#include <nng/protocol/pubsub0/pub.h>
#include <nng/protocol/pubsub0/sub.h>

#include "clock.h"
#include "wire.h"
#include "wire_cluster.h"
#include "thread_name.h"

/* After a failed fetch, the next try. */
#define FETCH_RETRY_MS 200

struct feed_pub {
	pthread_mutex_t mu;
	pthread_mutex_t fault_mu; /* one disconnect fault at a time */
	pthread_cond_t cv;   /* wakes the heartbeat to stop */
	nng_socket sock;
	uint64_t version;    /* what the heartbeat announces */
	uint32_t drop;       /* changes still to drop (fault) */
	bool stop;
	pthread_t hb;
	char url[256];
};

/* Opens a PUB socket listening on url into *out. */
static kv_err
pub_listen(const char *url, nng_socket *out)
{
	int rv = nng_pub0_open(out);
	if (rv != 0)
		return bus_err(rv);
	kv_err e = bus_setup(*out);
	if (e == KV_OK)
		e = bus_listen(*out, url, "catalog feed");
	if (e != KV_OK)
		nng_close(*out);
	return e;
}

/* Sends bytes as one message. Needs mu. */
static void
send_locked(feed_pub *p, const uint8_t *buf, size_t len)
{
	nng_msg *m;
	if (nng_msg_alloc(&m, 0) != 0)
		return;
	if (nng_msg_append(m, buf, len) != 0 || nng_sendmsg(p->sock, m, 0) !=
	    0)
		nng_msg_free(m);
}

static void
heartbeat_locked(feed_pub *p)
{
	catalog_event e = { .kind = CATALOG_EVENT_HEARTBEAT,
		.version = p->version, .published_us = bus_now_us() };
	uint8_t *buf;
	size_t len;
	if (wire_pack_catalog_event(&e, &buf, &len) != KV_OK)
		return;
	send_locked(p, buf, len);
	free(buf);
}

static void *
heartbeat_run(void *arg)
{
	feed_pub *p = arg;
	thread_name("kv-feed-beat");
	pthread_mutex_lock(&p->mu);
	while (!p->stop) {
		struct timespec ts = clock_deadline_in(FEED_HEARTBEAT_MS);
		pthread_cond_timedwait(&p->cv, &p->mu, &ts);
		if (!p->stop)
			heartbeat_locked(p);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

kv_err
feed_pub_open(const char *url, uint64_t version, feed_pub **out)
{
	feed_pub *p = calloc(1, sizeof(*p));
	if (p == NULL)
		return KV_ENOMEM;
	if (strlen(url) >= sizeof(p->url)) {
		free(p);
		return KV_EINVAL;
	}
	strcpy(p->url, url);
	p->version = version;
	pthread_mutex_init(&p->mu, NULL);
	pthread_mutex_init(&p->fault_mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	kv_err rv = pub_listen(p->url, &p->sock);
	if (rv == KV_OK && pthread_create(&p->hb, NULL, heartbeat_run, p) !=
	    0) {
		bus_unlisten(p->sock);
		nng_close(p->sock);
		rv = KV_ENOMEM;
	}
	if (rv != KV_OK) {
		pthread_mutex_destroy(&p->mu);
		pthread_mutex_destroy(&p->fault_mu);
		pthread_cond_destroy(&p->cv);
		free(p);
		return rv;
	}
	*out = p;
	return KV_OK;
}

static const table *
find_id(const catalog *c, uint32_t id)
{
	for (size_t i = 0; i < c->n_tables; i++)
		if (c->tables[i].id == id)
			return &c->tables[i];
	return NULL;
}

/* Whether a and b would travel as the same bytes. */
static bool
same_table(const table *a, const table *b, kv_err *rv)
{
	uint8_t *pa = NULL, *pb = NULL;
	size_t la = 0, lb = 0;
	bool same = false;
	if ((*rv = wire_pack_table(a, &pa, &la)) == KV_OK &&
	    (*rv = wire_pack_table(b, &pb, &lb)) == KV_OK)
		same = la == lb && memcmp(pa, pb, la) == 0;
	free(pa);
	free(pb);
	return same;
}

kv_err
feed_pub_change(feed_pub *p, const catalog *old, const catalog *cur)
{
	catalog_event e = { .kind = CATALOG_EVENT_CHANGE,
		.version = cur->version, .prev = old->version,
		.next_table_id = cur->next_table_id };
	uint8_t *buf = NULL;
	size_t len;
	kv_err rv = KV_OK;

	/* The event borrows cur's tables: copy the structs, not the data. */
	e.upserts = calloc(cur->n_tables + 1, sizeof(table));
	e.gone = calloc(old->n_tables + 1, sizeof(uint32_t));
	if (e.upserts == NULL || e.gone == NULL) {
		rv = KV_ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < cur->n_tables && rv == KV_OK; i++) {
		const table *was = find_id(old, cur->tables[i].id);
		if (was == NULL || !same_table(was, &cur->tables[i], &rv))
			e.upserts[e.n_upserts++] = cur->tables[i];
	}
	for (size_t i = 0; i < old->n_tables; i++)
		if (find_id(cur, old->tables[i].id) == NULL)
			e.gone[e.n_gone++] = old->tables[i].id;
	e.published_us = bus_now_us();
	if (rv == KV_OK)
		rv = wire_pack_catalog_event(&e, &buf, &len);
out:
	pthread_mutex_lock(&p->mu);
	if (cur->version > p->version)
		p->version = cur->version;
	if (rv == KV_OK && p->drop > 0)
		p->drop--;
	else if (rv == KV_OK)
		send_locked(p, buf, len);
	pthread_mutex_unlock(&p->mu);
	free(buf);
	free(e.upserts); /* borrowed tables: not table_fini */
	free(e.gone);
	return rv;
}

void
feed_pub_drop(feed_pub *p, uint32_t n)
{
	pthread_mutex_lock(&p->mu);
	p->drop = n;
	pthread_mutex_unlock(&p->mu);
}

/* Listening anew after a disconnect fault: tries, this long apart (an
 * address just released can still be held for a moment; 2 s of
 * FEED_DISCONNECT_EXTRA_MS). */
#define RELISTEN_TRIES 20
#define RELISTEN_STEP_MS 100

static void
sleep_ms(uint32_t ms)
{
	struct timespec ts = { .tv_sec = ms / 1000,
		.tv_nsec = (long) (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

kv_err
feed_pub_disconnect(feed_pub *p, uint32_t ms)
{
	pthread_mutex_lock(&p->fault_mu);
	int64_t t0 = bus_mono_ms();
	kv_err rv = bus_listen_pause(p->sock);
	if (rv == KV_OK) {
		sleep_ms(ms);
		rv = bus_listen_resume(p->sock);
		for (int i = 1; i < RELISTEN_TRIES && rv == KV_IO; i++) {
			sleep_ms(RELISTEN_STEP_MS);
			rv = bus_listen_resume(p->sock);
		}
	}
	fprintf(stderr, "kv: catalog feed: a fault closed its connections "
	    "for %u ms: %s after %lld ms\n", ms, rv == KV_OK ?
	    "listening again" : kv_err_name(rv),
	    (long long) (bus_mono_ms() - t0));
	pthread_mutex_unlock(&p->fault_mu);
	return rv;
}

void
feed_pub_close(feed_pub *p)
{
	if (p == NULL)
		return;
	pthread_mutex_lock(&p->mu);
	p->stop = true;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	pthread_join(p->hb, NULL);
	pthread_mutex_lock(&p->fault_mu); /* a fault under way ends first */
	pthread_mutex_unlock(&p->fault_mu);
	/* At exit the socket stays open to the end (bus_exit.h). */
	if (!bus_exit_started()) {
		bus_unlisten(p->sock);
		nng_close(p->sock);
	}
	pthread_mutex_destroy(&p->mu);
	pthread_mutex_destroy(&p->fault_mu);
	pthread_cond_destroy(&p->cv);
	free(p);
}

/* ---- subscriber ---- */

struct feed_sub {
	nng_socket sock;
	feed_fetch_fn fetch;
	feed_install_fn install;
	void *arg;
	pthread_t th;
	nng_aio *aio;            /* the thread's receive */
	atomic_bool stop;
	atomic_bool reconnected; /* a connection came after the first */
	atomic_bool connected_once;
	atomic_bool plant_dead;  /* a test's fault, for the thread to make */
	bus_dialer d;            /* its one dialer: every pipe is its */
	pthread_mutex_t mu;      /* guards cur and the arrivals below */
	catalog *cur;            /* written by the thread only */
	atomic_uint_fast64_t version, changes, fetches, gaps;
	feed_arrival ring[FEED_ARRIVALS]; /* by version % FEED_ARRIVALS */
	uint64_t newest;         /* the newest version in ring */
	uint64_t lag_counts[FEED_LAG_BUCKETS + 1];
	uint64_t lag_samples;
	double lag_sum_s;
};

static const int64_t lag_bounds_us[FEED_LAG_BUCKETS] = FEED_LAG_BOUNDS_US;

/* Records a change applied now. Needs mu. */
static void
arrived_locked(feed_sub *s, uint64_t version, int64_t published_us)
{
	int64_t now = bus_now_us();
	s->ring[version % FEED_ARRIVALS] = (feed_arrival) {
		.version = version, .published_us = published_us,
		.applied_us = now };
	if (version > s->newest)
		s->newest = version;
	int64_t lag = now - published_us;
	if (lag < 0)
		lag = 0; /* clocks of two hosts */
	size_t b = 0;
	while (b < FEED_LAG_BUCKETS && lag > lag_bounds_us[b])
		b++;
	s->lag_counts[b]++;
	s->lag_samples++;
	s->lag_sum_s += (double) lag / 1e6;
}

static void
on_pipe(nng_pipe pipe, nng_pipe_ev ev, void *arg)
{
	feed_sub *s = arg;
	bus_dialer_pipe(&s->d, pipe, ev);
	if (ev != NNG_PIPE_EV_ADD_POST)
		return;
	if (atomic_exchange(&s->connected_once, true))
		atomic_store(&s->reconnected, true);
}

/* Makes c (taken) the subscriber's catalog and hands a copy on. */
static void
take(feed_sub *s, catalog *c, int64_t published_us)
{
	catalog *copy = NULL;
	if (s->install != NULL && catalog_clone(c, &copy) != KV_OK)
		copy = NULL;
	pthread_mutex_lock(&s->mu);
	catalog *old = s->cur;
	s->cur = c;
	pthread_mutex_unlock(&s->mu);
	catalog_free(old);
	atomic_store(&s->version, c->version);
	uint64_t v = c->version;
	if (copy != NULL)
		s->install(s->arg, copy, published_us);
	if (published_us != 0) {
		pthread_mutex_lock(&s->mu);
		arrived_locked(s, v, published_us);
		pthread_mutex_unlock(&s->mu);
	}
}

/* Fetches the whole catalog; false when it could not. */
static bool
fetch_now(feed_sub *s)
{
	catalog *c = NULL;
	if (s->fetch(s->arg, &c) != KV_OK || c == NULL)
		return false;
	atomic_fetch_add(&s->fetches, 1);
	if (s->cur != NULL && c->version <= s->cur->version) {
		catalog_free(c); /* nothing newer (a fetch of our own raced) */
		return true;
	}
	take(s, c, 0);
	return true;
}

/* Handles one message; true when a fetch is needed. */
static bool
on_event(feed_sub *s, const uint8_t *buf, size_t len)
{
	catalog_event e;
	if (wire_unpack_catalog_event(buf, len, &e) != KV_OK)
		return true; /* something was lost to us: start over */
	uint64_t held = s->cur != NULL ? s->cur->version : 0;
	bool gap = false;
	if (e.version <= held) {
		/* old news */
	} else if (e.kind == CATALOG_EVENT_CHANGE && s->cur != NULL &&
	    e.prev == held) {
		catalog *c;
		if (catalog_apply(s->cur, e.upserts, e.n_upserts, e.gone,
		    e.n_gone, e.version, e.next_table_id, &c) == KV_OK) {
			take(s, c, e.published_us);
			atomic_fetch_add(&s->changes, 1);
		} else {
			gap = true;
		}
	} else {
		gap = true;
	}
	wire_catalog_event_fini(&e);
	if (gap)
		atomic_fetch_add(&s->gaps, 1);
	return gap;
}

static void *
sub_run(void *arg)
{
	feed_sub *s = arg;
	bool need = true;
	int64_t retry_at = 0, heard = bus_mono_ms();
	thread_name("kv-feed-sub");

	while (!atomic_load(&s->stop)) {
		int64_t now = bus_mono_ms();
		if (atomic_load(&s->plant_dead)) {
			bus_dialer_plant_dead(&s->d);
			atomic_store(&s->plant_dead, false);
		}
		if (!bus_dialer_up(&s->d))
			bus_dialer_missed(&s->d);
		if (atomic_exchange(&s->reconnected, false)) {
			/* What was sent meanwhile is lost to us: a gap. */
			atomic_fetch_add(&s->gaps, 1);
			need = true;
		}
		if (now - heard >= FEED_SILENCE_MS) {
			need = true; /* the safety net: nothing heard */
			heard = now;
			/* Heartbeats should have come over the connection
			 * (no receive is under way here). */
			if (bus_dialer_up(&s->d) && bus_dialer_silent(&s->d))
				bus_dialer_reconnect(&s->d);
		}
		if (need && now >= retry_at) {
			need = !fetch_now(s);
			retry_at = bus_mono_ms() + FETCH_RETRY_MS;
		}
		nng_msg *m;
		nng_duration wait = !bus_dialer_up(&s->d) ? BUS_TICK_MS :
		    need ? FETCH_RETRY_MS : FEED_SILENCE_MS;
		int rv = bus_recv(s->sock, s->aio, wait, &m);
		/* Cancelled without a stop: a plant's wake-up (it may come
		 * just after the plant is made). */
		if (rv == NNG_ETIMEDOUT || (rv == NNG_ECANCELED &&
		    !atomic_load(&s->stop)))
			continue;
		if (rv != 0)
			break; /* stopped or closed */
		heard = bus_mono_ms();
		bus_dialer_answered(&s->d);
		if (on_event(s, nng_msg_body(m), nng_msg_len(m))) {
			need = true;
			retry_at = 0; /* at once */
		}
		nng_msg_free(m);
	}
	return NULL;
}

kv_err
feed_sub_open(const char *url, feed_fetch_fn fetch, feed_install_fn install,
    void *arg, feed_sub **out)
{
	feed_sub *s = calloc(1, sizeof(*s));
	if (s == NULL)
		return KV_ENOMEM;
	s->fetch = fetch;
	s->install = install;
	s->arg = arg;
	pthread_mutex_init(&s->mu, NULL);
	int rv = nng_sub0_open(&s->sock);
	if (rv != 0) {
		pthread_mutex_destroy(&s->mu);
		free(s);
		return bus_err(rv);
	}
	kv_err e = bus_setup(s->sock);
	if (e == KV_OK)
		e = bus_err(nng_socket_set(s->sock, NNG_OPT_SUB_SUBSCRIBE, "",
		    0));
	if (e == KV_OK)
		e = bus_err(nng_aio_alloc(&s->aio, NULL, NULL));
	for (int ev = NNG_PIPE_EV_ADD_PRE; ev <= NNG_PIPE_EV_REM_POST &&
	    e == KV_OK; ev++)
		e = bus_err(nng_pipe_notify(s->sock, (nng_pipe_ev) ev,
		    on_pipe, s));
	if (e == KV_OK)
		e = bus_dialer_start(&s->d, s->sock, url);
	if (e == KV_OK && pthread_create(&s->th, NULL, sub_run, s) != 0)
		e = KV_ENOMEM;
	if (e != KV_OK) {
		nng_close(s->sock);
		nng_aio_free(s->aio);
		bus_dialer_fini(&s->d);
		pthread_mutex_destroy(&s->mu);
		free(s);
		return e;
	}
	*out = s;
	return KV_OK;
}

void
feed_sub_close(feed_sub *s)
{
	if (s == NULL)
		return;
	atomic_store(&s->stop, true);
	nng_aio_stop(s->aio);
	pthread_join(s->th, NULL); /* at once, or after a fetch */
	nng_aio_free(s->aio);
	if (bus_exit_started())
		return; /* the socket stays to the exit, and s with it */
	nng_close(s->sock);
	bus_dialer_fini(&s->d);
	catalog_free(s->cur);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

void
feed_sub_plant_dead_dialer(feed_sub *s)
{
	/*
	 * The thread closes the dialer, between receives, as it would
	 * replace one: a dialer closed while a receive waits on the socket
	 * can stop nng 1.5.2's reaper (bus.h), and the socket's close would
	 * then wait for good.
	 */
	atomic_store(&s->plant_dead, true);
	while (atomic_load(&s->plant_dead)) {
		nng_aio_cancel(s->aio);
		nanosleep(&(struct timespec) { 0, 1000000 }, NULL);
	}
}

void
feed_sub_counts(feed_sub *s, feed_counts *out)
{
	out->version = atomic_load(&s->version);
	out->changes = atomic_load(&s->changes);
	out->fetches = atomic_load(&s->fetches);
	out->gaps = atomic_load(&s->gaps);
	pthread_mutex_lock(&s->mu);
	memcpy(out->lag_counts, s->lag_counts, sizeof(s->lag_counts));
	out->lag_samples = s->lag_samples;
	out->lag_sum_s = s->lag_sum_s;
	pthread_mutex_unlock(&s->mu);
}

kv_err
feed_sub_arrivals(feed_sub *s, arena *a, feed_arrival **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	pthread_mutex_lock(&s->mu);
	uint64_t newest = s->newest;
	uint64_t first = newest >= FEED_ARRIVALS ? newest - FEED_ARRIVALS + 1 :
	    1;
	feed_arrival *arr = newest == 0 ? NULL :
	    arena_alloc(a, (size_t) (newest - first + 1) * sizeof(*arr));
	kv_err rv = newest != 0 && arr == NULL ? KV_ENOMEM : KV_OK;
	for (uint64_t v = first; arr != NULL && v <= newest; v++)
		if (s->ring[v % FEED_ARRIVALS].version == v)
			arr[(*n)++] = s->ring[v % FEED_ARRIVALS];
	pthread_mutex_unlock(&s->mu);
	*out = arr;
	return rv;
}

kv_err
feed_sub_copy(feed_sub *s, catalog **out)
{
	*out = NULL;
	pthread_mutex_lock(&s->mu);
	kv_err rv = s->cur != NULL ? catalog_clone(s->cur, out) : KV_OK;
	pthread_mutex_unlock(&s->mu);
	return rv;
}
