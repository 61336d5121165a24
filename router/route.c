/*
 * route.c — RCU-published catalog snapshots (see route.h).
 *
 * Locking rule: `refresh_mu` serialises fetch-and-publish, so versions only
 * go up; readers take no lock at all. Old snapshots are freed by call_rcu
 * once every reader that could see them has left its read-side section.
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

struct route_snapshot {
	struct rcu_head head;
	catalog *cat;
};

static pthread_mutex_t refresh_mu = PTHREAD_MUTEX_INITIALIZER;
static atomic_uint_fast64_t refresh_gen; /* completed fetches; written under refresh_mu */
static kv_err last_rv;       /* result of the latest fetch; likewise */
static pthread_t refresher;
static volatile bool refresher_stop;
static bool refresher_running;

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

kv_err
route_refresh(router *r)
{
	rpc_request req = { .op = RPC_CATALOG_GET };
	rpc_response resp;
	arena a;

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
	arena_init(&a);
	kv_err rv = conn_call(r, 0, &req, &a, &resp);
	if (rv == KV_OK && resp.code != KV_OK)
		rv = resp.code;
	if (rv == KV_OK && resp.cat == NULL)
		rv = KV_PROTO;
	if (rv == KV_OK) {
		publish_locked(r, resp.cat);
		resp.cat = NULL;
	}
	wire_response_fini(&resp);
	arena_fini(&a);
	atomic_fetch_add(&refresh_gen, 1);
	last_rv = rv;
	pthread_mutex_unlock(&refresh_mu);
	return rv;
}

static void *
refresh_loop(void *arg)
{
	router *r = arg;
	rcu_register_thread();
	while (!refresher_stop) {
		for (int i = 0; i < 10 && !refresher_stop; i++)
			usleep(100 * 1000);
		if (!refresher_stop)
			route_refresh(r);
	}
	rcu_unregister_thread();
	return NULL;
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
	refresher_stop = false;
	if (pthread_create(&refresher, NULL, refresh_loop, r) != 0)
		return KV_ENOMEM;
	refresher_running = true;
	return KV_OK;
}

void
route_close(router *r)
{
	if (refresher_running) {
		refresher_stop = true;
		pthread_join(refresher, NULL);
		refresher_running = false;
	}
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
	usleep((useconds_t) attempt * 5000);
}
