/*
 * route.c — RCU-published catalog snapshots (see route.h), kept current by
 * the catalog feed (proto/feed.h) and by fetches on demand.
 *
 * Locking rule: `refresh_mu` serialises publishing (from the feed's thread
 * and from fetches), so versions only go up; readers take no lock at all.
 * Old snapshots are freed by call_rcu once every reader that could see
 * them has left its read-side section.
 */
#include "route.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <urcu-bp.h>

#include "conn.h"
#include "feed.h"

struct route_snapshot {
	struct rcu_head head;
	catalog *cat;
};

static pthread_mutex_t refresh_mu = PTHREAD_MUTEX_INITIALIZER;
static atomic_uint_fast64_t refresh_gen; /* completed fetches; written under refresh_mu */
static kv_err last_rv;       /* result of the latest fetch; likewise */
static atomic_uint_fast64_t demand_fetches; /* fetches by route_refresh */
static feed_sub *feed;

static void
snapshot_free(struct rcu_head *h)
{
	route_snapshot *s = caa_container_of(h, route_snapshot, head);
	catalog_free(s->cat);
	free(s);
}

void
route_read_lock(void)
{
	rcu_read_lock();
}

void
route_read_unlock(void)
{
	rcu_read_unlock();
}

const catalog *
route_current(router *r)
{
	route_snapshot *s = rcu_dereference(r->snap);
	return s->cat;
}

/* Publishes cat (taken) if it is newer. Needs refresh_mu. */
static void
publish_locked(router *r, catalog *cat)
{
	route_snapshot *cur = rcu_dereference(r->snap);
	if (cur != NULL && cur->cat->version >= cat->version &&
	    cat->version != 0) {
		catalog_free(cat);
		return;
	}

	route_snapshot *s = malloc(sizeof(*s));
	if (s == NULL) {
		catalog_free(cat);
		return;
	}
	s->cat = cat;
	route_snapshot *old = rcu_xchg_pointer(&r->snap, s);
	if (old != NULL)
		call_rcu(&old->head, snapshot_free);
}

/* The whole catalog from the catalog node (owned by the caller). */
static kv_err
fetch(router *r, catalog **out)
{
	rpc_request req = { .op = RPC_CATALOG_GET };
	rpc_response resp;
	arena a;

	arena_init(&a);
	kv_err rv = conn_call(r, 0, &req, &a, &resp);
	if (rv == KV_OK && resp.code != KV_OK)
		rv = resp.code;
	if (rv == KV_OK && resp.cat == NULL)
		rv = KV_PROTO;
	if (rv == KV_OK) {
		*out = resp.cat;
		resp.cat = NULL;
	}
	wire_response_fini(&resp);
	arena_fini(&a);
	return rv;
}

static kv_err
feed_fetch(void *arg, catalog **out)
{
	return fetch(arg, out);
}

/* The feed's thread: publish c (taken) if it is newer. */
static void
feed_install(void *arg, catalog *c, int64_t published_us)
{
	router *r = arg;
	(void) published_us; /* the feed keeps the propagation times */
	pthread_mutex_lock(&refresh_mu);
	publish_locked(r, c);
	pthread_mutex_unlock(&refresh_mu);
}

kv_err
route_refresh(router *r)
{
	/*
	 * A caller that queued behind other fetches shares the result of one
	 * that started after it asked (fetches are serialised, so the second
	 * one completed after gen was read did) instead of fetching again: a
	 * stale-route storm costs a few fetches, not one per request.
	 */
	uint64_t gen = atomic_load(&refresh_gen);
	pthread_mutex_lock(&refresh_mu);
	if (atomic_load(&refresh_gen) >= gen + 2) {
		kv_err shared = last_rv;
		pthread_mutex_unlock(&refresh_mu);
		return shared;
	}
	catalog *cat = NULL;
	kv_err rv = fetch(r, &cat);
	if (rv == KV_OK)
		publish_locked(r, cat);
	atomic_fetch_add(&demand_fetches, 1);
	atomic_fetch_add(&refresh_gen, 1);
	last_rv = rv;
	pthread_mutex_unlock(&refresh_mu);
	return rv;
}

kv_err
route_open(router *r)
{
	route_snapshot *s = calloc(1, sizeof(*s));
	if (s == NULL)
		return KV_ENOMEM;
	s->cat = calloc(1, sizeof(catalog));
	if (s->cat == NULL) {
		free(s);
		return KV_ENOMEM;
	}
	rcu_assign_pointer(r->snap, s);
	route_refresh(r);
	char url[300];
	kv_err rv = config_bus_url(r->cfg.nodes[0].bus, CONFIG_BUS_FEED, url,
	    sizeof(url));
	if (rv == KV_OK)
		rv = feed_sub_open(url, feed_fetch, feed_install, r, &feed);
	return rv;
}

void
route_close(router *r)
{
	feed_sub_close(feed);
	feed = NULL;
	route_snapshot *s = rcu_xchg_pointer(&r->snap, NULL);
	synchronize_rcu();
	if (s != NULL) {
		catalog_free(s->cat);
		free(s);
	}
	rcu_barrier();
}

void
route_stale(router *r, int attempt)
{
	route_refresh(r);
	usleep((useconds_t) (attempt < 10 ? attempt : 10) * 5000);
}

uint64_t
route_version(router *r)
{
	route_read_lock();
	uint64_t v = route_current(r)->version;
	route_read_unlock();
	return v;
}

void
route_feed_counts(route_counts *out)
{
	feed_counts fc;
	memset(&fc, 0, sizeof(fc));
	if (feed != NULL)
		feed_sub_counts(feed, &fc);
	out->feed_changes = fc.changes;
	out->feed_fetches = fc.fetches;
	out->feed_gaps = fc.gaps;
	out->demand_fetches = atomic_load(&demand_fetches);
	memcpy(out->lag_counts, fc.lag_counts, sizeof(fc.lag_counts));
	out->lag_samples = fc.lag_samples;
	out->lag_sum_s = fc.lag_sum_s;
}

kv_err
route_feed_arrivals(arena *a, feed_arrival **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	return feed != NULL ? feed_sub_arrivals(feed, a, out, n) : KV_OK;
}
