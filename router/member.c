/*
 * member.c — a router's survey answers and its survey of the nodes (see
 * member.h). The respondent's thread reads the router's counters
 * (atomics) and its catalog snapshot (under the RCU read lock); it
 * changes nothing. Locking rule: survey_mu serialises member_survey_nodes
 * (a surveyor runs one survey at a time).
 */
#include "member.h"

#include <pthread.h>
#include <stddef.h>
#include <unistd.h>

#include "api.h"
#include "route.h"
#include "survey.h"

static survey_resp *resp;
static surveyor *nodes;
static pthread_mutex_t survey_mu = PTHREAD_MUTEX_INITIALIZER;

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
	static survey_members all; /* one member_open a process */
	char url[300];

	survey_members_of(&r->cfg, false, &all);
	kv_err rv = surveyor_open(all.t, all.n, &nodes);
	if (rv != KV_OK || r->index >= r->cfg.n_routers ||
	    r->cfg.routers[r->index].bus[0] == '\0')
		return rv; /* no address: the router is not surveyed */
	if ((rv = config_bus_url(r->cfg.routers[r->index].bus,
	    CONFIG_BUS_SURVEY, url, sizeof(url))) == KV_OK)
		rv = survey_resp_open(url, answer, r, &resp);
	return rv;
}

void
member_close(void)
{
	survey_resp_close(resp);
	resp = NULL;
	surveyor_close(nodes);
	nodes = NULL;
}

kv_err
member_survey_nodes(router *r, arena *a, survey_result *results)
{
	if (nodes == NULL)
		return KV_UNAVAILABLE;
	pthread_mutex_lock(&survey_mu);
	kv_err rv = surveyor_ask(nodes, SURVEY_STATS, MEMBER_CONNECT_MS,
	    MEMBER_DEADLINE_MS, a, results);
	pthread_mutex_unlock(&survey_mu);
	return rv;
}
