/*
 * member.c — a router's survey answers (see member.h). The respondent's
 * thread reads the router's counters (atomics) and its catalog snapshot
 * (under the RCU read lock); it changes nothing.
 */
#include "member.h"

#include <stddef.h>
#include <unistd.h>

#include "api.h"
#include "route.h"
#include "survey.h"

static survey_resp *resp;

static kv_err
answer(void *arg, uint32_t what, arena *a, member *m)
{
	router *r = arg;
	route_counts rc;
	route_feed_counts(&rc);
	m->kind = MEMBER_ROUTER;
	m->index = r->index;
	m->pid = getpid();
	m->started_ms = r->started_ms;
	m->catalog_version = route_version(r);
	m->addr = r->listen;
	m->connections = (uint32_t) atomic_load_explicit(&r->open_conns,
	    memory_order_relaxed);
	for (size_t i = 0; i < API_N_OPS; i++)
		m->requests += atomic_load_explicit(&r->counters[i].requests,
		    memory_order_relaxed);
	m->feed_changes = rc.feed_changes;
	m->feed_fetches = rc.feed_fetches;
	m->feed_gaps = rc.feed_gaps;
	if (what & SURVEY_ARRIVALS)
		return route_feed_arrivals(a, &m->arrivals, &m->n_arrivals);
	return KV_OK;
}

kv_err
member_open(router *r)
{
	char url[300];
	if (r->index >= r->cfg.n_routers || r->cfg.routers[r->index].bus[0] ==
	    '\0')
		return KV_OK; /* no address: not surveyed */
	kv_err rv = config_bus_url(r->cfg.routers[r->index].bus,
	    CONFIG_BUS_SURVEY, url, sizeof(url));
	if (rv == KV_OK)
		rv = survey_resp_open(url, answer, r, &resp);
	return rv;
}

void
member_close(void)
{
	survey_resp_close(resp);
	resp = NULL;
}
