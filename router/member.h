/*
 * member.h — the router as a member of the cluster: it answers surveys
 * (proto/survey.h) on the address its cluster-file line gives (bus=), so
 * that kv-admin status and the catalog node's health view list routers
 * too, and it surveys the nodes for their partitions' counters (GET
 * /metrics), all at once rather than one call after another.
 */
#ifndef KV_ROUTER_MEMBER_H
#define KV_ROUTER_MEMBER_H

#include "arena.h"
#include "err.h"
#include "router.h"
#include "survey.h"

/*
 * member_open starts answering surveys for r (router r->index of the
 * cluster file), if its line gives a bus address. Returns KV_OK, KV_IO
 * when the address cannot be bound, KV_EINVAL or KV_ENOMEM.
 */
kv_err member_open(router *r);

/* member_close stops answering and asking; safe without a member_open. */
void member_close(void);

/* How long a survey of the nodes waits for connections, then answers. */
#define MEMBER_CONNECT_MS 200
#define MEMBER_DEADLINE_MS 2000

/*
 * member_survey_nodes asks every node of r->cfg at once for its
 * partitions' counters (SURVEY_STATS); results[i] is node i's outcome
 * (r->cfg.n_nodes entries), its answer pointing into a (valid until
 * arena_fini(a)). One survey at a time: concurrent callers wait their
 * turn. KV_OK, KV_UNAVAILABLE without member_open, or KV_ENOMEM.
 */
kv_err member_survey_nodes(router *r, arena *a, survey_result *results);

#endif
