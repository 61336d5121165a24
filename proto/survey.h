/*
 * survey.h — asking every member of the cluster at once: nng's
 * SURVEYOR/RESPONDENT. Every node and router answers surveys on the
 * address its cluster-file line gives (config_bus_url); a surveyor dials
 * all of them, sends one question and collects answers until each
 * connected member has answered or the deadline passes. Every member
 * comes back with an answer or a clear reason why not: not reachable (no
 * connection within the connect time) or silent (connected, no answer by
 * the deadline).
 *
 * Used by kv-admin (`status`, one survey instead of a call per node) and
 * by the catalog node's health view (a survey every second).
 */
#ifndef KV_SURVEY_H
#define KV_SURVEY_H

#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "config.h"
#include "err.h"
#include "wire_cluster.h"

typedef struct survey_resp survey_resp;
typedef struct surveyor surveyor;

/*
 * A respondent's answer: fills *out for the question's SURVEY_* bits
 * `what`, allocating in a (valid until the answer is packed). Runs on the
 * respondent's thread; must not block for long.
 */
typedef kv_err (*survey_answer_fn)(void *arg, uint32_t what, arena *a,
    member *out);

/*
 * survey_resp_open listens on url and answers every survey with fn.
 * Returns KV_OK with an owned respondent (free with survey_resp_close()),
 * KV_IO when url cannot be bound, KV_EINVAL or KV_ENOMEM.
 */
kv_err survey_resp_open(const char *url, survey_answer_fn fn, void *arg,
    survey_resp **out);

/* survey_resp_close stops answering and frees; accepts NULL. */
void survey_resp_close(survey_resp *r);

/* Whom to ask. url NULL or "": the member has no survey address. */
typedef struct survey_target {
	member_kind kind;
	uint32_t index;
	const char *url;
	bool later; /* a standby node: dialed from the first survey on */
} survey_target;

typedef enum survey_outcome {
	SURVEY_ANSWERED = 1,
	SURVEY_UNREACHABLE, /* no connection within the connect time */
	SURVEY_SILENT,      /* connected, but no answer by the deadline */
	SURVEY_NO_ADDRESS,  /* the cluster file gives it no address */
} survey_outcome;

typedef struct survey_result {
	survey_outcome outcome;
	member m; /* SURVEY_ANSWERED: the answer (pointers into the arena) */
} survey_result;

/* Every member of a cluster file, as survey targets. */
#define SURVEY_MEMBERS (CONFIG_MAX_NODES + CONFIG_MAX_ROUTERS)
typedef struct survey_members {
	survey_target t[SURVEY_MEMBERS];
	char urls[SURVEY_MEMBERS][300]; /* t[i].url points here */
	size_t n;
} survey_members;

/*
 * survey_members_of fills *m with cfg's nodes in file order, then, with
 * `routers`, its routers, each with its survey address (config_bus_url;
 * a router without bus= has none); standby nodes are dialed `later`.
 * Borrows cfg.
 */
void survey_members_of(const config *cfg, bool routers, survey_members *m);

/*
 * surveyor_open copies targets[0..n) and starts dialing every one of them
 * (again and again, for as long as the surveyor lives), or, for targets
 * dialed `later`, from the first survey on. Returns KV_OK
 * with an owned surveyor (free with surveyor_close()), KV_EINVAL for a
 * URL nng cannot dial, or KV_ENOMEM.
 */
kv_err surveyor_open(const survey_target *targets, size_t n,
    surveyor **out);

/*
 * surveyor_ask waits up to connect_ms for targets that are not connected
 * yet, then asks every connected one for `what` (SURVEY_* bits) and
 * collects answers for up to deadline_ms. results[i] is the outcome for
 * targets[i]; answers point into a (valid until arena_fini(a)). Returns
 * KV_OK (whatever the members did) or KV_ENOMEM. One survey at a time per
 * surveyor.
 */
kv_err surveyor_ask(surveyor *s, uint32_t what, int connect_ms,
    int deadline_ms, arena *a, survey_result *results);

/*
 * Tests: closes the dialer of target i, as if nng had stopped dialing
 * (bus.h's bus_dialer); surveys replace it.
 */
void surveyor_plant_dead_dialer(surveyor *s, size_t i);

/* surveyor_close stops dialing and frees; accepts NULL. */
void surveyor_close(surveyor *s);

/* survey_outcome_name: "answered", "not reachable", "no answer", ... */
const char *survey_outcome_name(survey_outcome o);

#endif
