/*
 * survey.c — SURVEYOR/RESPONDENT (see survey.h).
 *
 * Respondent: one thread receives a question, asks the owner's answer
 * function and sends the answer back on the pipe it came from (nng's
 * respondent does the routing). It waits on its aio with no timeout;
 * survey_resp_close stops the aio (bus.h). The respondent socket is raw
 * too: the question's header (the pipe, the route, the survey's id)
 * stays on the message, and the answer goes back with it. nng 1.5.2's
 * cooked RESPONDENT leaves a closed pipe on its list of pipes to receive
 * from, and a later receive takes a NULL message from it and crashes
 * (nng issue 1959, fixed in 1.10): a node frozen while its surveyor
 * closed the connection died that way as soon as it went on, once in
 * about ten runs of test_gsi_collect.py.
 *
 * Surveyor: one dialer per target (bus_dialer, bus.h), created before it
 * starts (a target dialed `later` starts at the first survey), so that
 * the pipe callbacks (on nng's threads) can count each target's
 * connections by dialer id. surveyor_ask runs on the caller's
 * thread; answers are matched to targets by the dialer of the pipe they
 * came on, not by what they claim. A target found without a connection
 * at a survey counts as a miss, so a dialer that stopped dialing is
 * replaced at a survey BUS_REDIAL_MS later; one connected but silent at
 * every survey for BUS_SILENT_MS has its connection closed and dialed
 * again.
 *
 * The surveyor socket is raw: surveyor_ask puts the survey's id in the
 * header itself, keeps its own deadline with the receive timeout, and
 * drops answers to earlier surveys. nng 1.5.2's cooked SURVEYOR, with
 * its survey timer, could hang in nng_close when an answer arrived as
 * the socket closed (kv-admin closes right after its survey), nine times
 * in ten in the test that sweeps that window.
 */
#include "survey.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bus.h" /* nng.h, before its protocols */
#include <nng/protocol/survey0/respond.h>
#include <nng/protocol/survey0/survey.h>
#include "thread_name.h"


struct survey_resp {
	nng_socket sock;
	survey_answer_fn fn;
	void *arg;
	pthread_t th;
	nng_aio *aio;   /* the thread's receive */
	atomic_bool stop;
};

static void *
resp_run(void *arg)
{
	survey_resp *r = arg;
	thread_name("kv-survey");
	while (!atomic_load(&r->stop)) {
		nng_msg *m;
		if (bus_recv(r->sock, r->aio, NNG_DURATION_INFINITE, &m) != 0)
			break; /* stopped or closed */
		uint32_t what = 0;
		kv_err rv = wire_unpack_survey_ask(nng_msg_body(m),
		    nng_msg_len(m), &what);
		nng_msg_clear(m);
		arena a;
		member ans;
		uint8_t *buf = NULL;
		size_t len = 0;
		arena_init(&a);
		memset(&ans, 0, sizeof(ans));
		if (rv == KV_OK)
			rv = r->fn(r->arg, what, &a, &ans);
		if (rv == KV_OK)
			rv = wire_pack_member(&ans, &buf, &len);
		arena_fini(&a);
		/* The header (the survey's id and route) stays in m. */
		if (rv != KV_OK || nng_msg_append(m, buf, len) != 0 ||
		    nng_sendmsg(r->sock, m, 0) != 0)
			nng_msg_free(m);
		free(buf);
	}
	return NULL;
}

kv_err
survey_resp_open(const char *url, survey_answer_fn fn, void *arg,
    survey_resp **out)
{
	survey_resp *r = calloc(1, sizeof(*r));
	if (r == NULL)
		return KV_ENOMEM;
	r->fn = fn;
	r->arg = arg;
	int rv = nng_respondent0_open_raw(&r->sock);
	if (rv != 0) {
		free(r);
		return bus_err(rv);
	}
	atomic_init(&r->stop, false);
	kv_err e = bus_setup(r->sock);
	if (e == KV_OK)
		e = bus_err(nng_aio_alloc(&r->aio, NULL, NULL));
	if (e == KV_OK)
		e = bus_listen(r->sock, url, "surveys");
	if (e == KV_OK && pthread_create(&r->th, NULL, resp_run, r) != 0)
		e = KV_ENOMEM;
	if (e != KV_OK) {
		bus_unlisten(r->sock);
		nng_close(r->sock);
		nng_aio_free(r->aio);
		free(r);
		return e;
	}
	*out = r;
	return KV_OK;
}

void
survey_resp_close(survey_resp *r)
{
	if (r == NULL)
		return;
	atomic_store(&r->stop, true);
	nng_aio_stop(r->aio);
	pthread_join(r->th, NULL);
	nng_aio_free(r->aio);
	/* At exit the socket stays open to the end (bus_exit.h). */
	if (!bus_exit_started()) {
		bus_unlisten(r->sock);
		nng_close(r->sock);
	}
	free(r);
}

/* ---- surveyor ---- */

typedef struct target {
	member_kind kind;
	uint32_t index;
	bool dialed;      /* false: no address (written before it is shared) */
	bus_dialer d;     /* zeroed until dialed */
} target;

struct surveyor {
	nng_socket sock;
	target *t;
	size_t n;
	uint32_t next; /* the next survey's id */
};

static target *
by_dialer(surveyor *s, nng_pipe p)
{
	for (size_t i = 0; i < s->n; i++)
		if (bus_dialer_owns(&s->t[i].d, p))
			return &s->t[i];
	return NULL;
}

static void
on_pipe(nng_pipe p, nng_pipe_ev ev, void *arg)
{
	target *t = by_dialer(arg, p);
	if (t != NULL)
		bus_dialer_pipe(&t->d, p, ev);
}

kv_err
surveyor_open(const survey_target *targets, size_t n, surveyor **out)
{
	surveyor *s = calloc(1, sizeof(*s));
	if (s == NULL || (n > 0 && (s->t = calloc(n, sizeof(target))) ==
	    NULL)) {
		free(s);
		return KV_ENOMEM;
	}
	s->n = n;
	int rv = nng_surveyor0_open_raw(&s->sock);
	if (rv != 0) {
		free(s->t);
		free(s);
		return bus_err(rv);
	}
	kv_err e = bus_setup(s->sock);
	if (e == KV_OK)
		e = bus_err(nng_pipe_notify(s->sock, NNG_PIPE_EV_ADD_PRE,
		    on_pipe, s));
	if (e == KV_OK)
		e = bus_err(nng_pipe_notify(s->sock, NNG_PIPE_EV_REM_POST,
		    on_pipe, s));
	for (size_t i = 0; i < n && e == KV_OK; i++) {
		s->t[i].kind = targets[i].kind;
		s->t[i].index = targets[i].index;
		if (targets[i].url == NULL || targets[i].url[0] == '\0')
			continue;
		e = targets[i].later ?
		    bus_dialer_init(&s->t[i].d, s->sock, targets[i].url) :
		    bus_dialer_start(&s->t[i].d, s->sock, targets[i].url);
		s->t[i].dialed = e == KV_OK;
	}
	if (e != KV_OK) {
		surveyor_close(s);
		return e;
	}
	*out = s;
	return KV_OK;
}

void
surveyor_close(surveyor *s)
{
	if (s == NULL || bus_exit_started())
		return; /* the socket stays to the exit, and s with it */
	nng_close(s->sock); /* no callback runs after this returns */
	for (size_t i = 0; i < s->n; i++)
		bus_dialer_fini(&s->t[i].d);
	free(s->t);
	free(s);
}

void
surveyor_plant_dead_dialer(surveyor *s, size_t i)
{
	if (i < s->n && s->t[i].dialed)
		bus_dialer_plant_dead(&s->t[i].d);
}

static size_t
connected(surveyor *s)
{
	size_t k = 0;
	for (size_t i = 0; i < s->n; i++)
		k += s->t[i].dialed && bus_dialer_up(&s->t[i].d);
	return k;
}

static size_t
dialed(surveyor *s)
{
	size_t k = 0;
	for (size_t i = 0; i < s->n; i++)
		k += s->t[i].dialed;
	return k;
}

kv_err
surveyor_ask(surveyor *s, uint32_t what, int connect_ms, int deadline_ms,
    arena *a, survey_result *results)
{
	int64_t t0 = bus_mono_ms();
	for (size_t i = 0; i < s->n; i++)
		if (s->t[i].dialed)
			bus_dialer_want(&s->t[i].d);
	while (connected(s) < dialed(s) && bus_mono_ms() - t0 < connect_ms) {
		struct timespec ts = { 0, 2 * 1000000L };
		nanosleep(&ts, NULL);
	}
	size_t asked = 0;
	for (size_t i = 0; i < s->n; i++) {
		memset(&results[i], 0, sizeof(results[i]));
		if (!s->t[i].dialed) {
			results[i].outcome = SURVEY_NO_ADDRESS;
		} else if (bus_dialer_up(&s->t[i].d)) {
			results[i].outcome = SURVEY_SILENT;
			asked++;
		} else {
			results[i].outcome = SURVEY_UNREACHABLE;
			bus_dialer_missed(&s->t[i].d);
		}
	}
	if (asked == 0)
		return KV_OK;
	uint8_t *buf;
	size_t len;
	kv_err rv = wire_pack_survey_ask(what, &buf, &len);
	if (rv != KV_OK)
		return rv;
	/* A survey's id has its top bit set (nng's SURVEYOR header). */
	uint32_t id = (s->next++ & 0x7fffffffu) | 0x80000000u;
	nng_msg *m = NULL;
	int nrv = nng_msg_alloc(&m, 0);
	if (nrv == 0 && (nrv = nng_msg_header_append_u32(m, id)) == 0 &&
	    (nrv = nng_msg_append(m, buf, len)) == 0 &&
	    (nrv = nng_sendmsg(s->sock, m, 0)) == 0)
		m = NULL;
	if (m != NULL)
		nng_msg_free(m);
	free(buf);
	if (nrv != 0)
		return bus_err(nrv) == KV_ENOMEM ? KV_ENOMEM : KV_OK;
	int64_t end = bus_mono_ms() + deadline_ms;
	size_t got = 0;
	while (got < asked) {
		int64_t left = end - bus_mono_ms();
		if (left <= 0)
			break;
		nng_socket_set_ms(s->sock, NNG_OPT_RECVTIMEO,
		    (nng_duration) left);
		if (nng_recvmsg(s->sock, &m, 0) != 0)
			break; /* the deadline passed, or closed */
		/* An answer to an earlier survey, come late, is dropped. */
		uint32_t got_id;
		if (nng_msg_header_len(m) != 4 ||
		    nng_msg_header_trim_u32(m, &got_id) != 0 || got_id != id) {
			nng_msg_free(m);
			continue;
		}
		target *t = by_dialer(s, nng_msg_get_pipe(m));
		survey_result *r = t != NULL ? &results[t - s->t] : NULL;
		if (r != NULL && r->outcome != SURVEY_ANSWERED &&
		    wire_unpack_member(nng_msg_body(m), nng_msg_len(m), a,
		    &r->m) == KV_OK) {
			/* A target that just connected was not counted. */
			if (r->outcome == SURVEY_SILENT)
				got++;
			r->outcome = SURVEY_ANSWERED;
		}
		nng_msg_free(m);
	}
	/* What came of it, for each connection asked (bus.h); a surveyor
	 * asks from one thread at a time, and nothing is under way now. */
	for (size_t i = 0; i < s->n; i++)
		if (results[i].outcome == SURVEY_ANSWERED)
			bus_dialer_answered(&s->t[i].d);
		else if (results[i].outcome == SURVEY_SILENT &&
		    bus_dialer_silent(&s->t[i].d))
			bus_dialer_reconnect(&s->t[i].d);
	return KV_OK;
}

void
survey_members_of(const config *cfg, bool routers, survey_members *m)
{
	size_t n = cfg->n_nodes + (routers ? cfg->n_routers : 0);
	memset(m, 0, sizeof(*m));
	for (size_t i = 0; i < n && i < SURVEY_MEMBERS; i++) {
		bool node = i < cfg->n_nodes;
		size_t k = node ? i : i - cfg->n_nodes;
		const char *base = node ? cfg->nodes[k].bus :
		    cfg->routers[k].bus;
		m->t[i].kind = node ? MEMBER_NODE : MEMBER_ROUTER;
		m->t[i].index = (uint32_t) k;
		m->t[i].later = node && cfg->nodes[k].standby;
		if (base[0] != '\0' && config_bus_url(base, CONFIG_BUS_SURVEY,
		    m->urls[i], sizeof(m->urls[i])) == KV_OK)
			m->t[i].url = m->urls[i];
		m->n++;
	}
}

const char *
survey_outcome_name(survey_outcome o)
{
	switch (o) {
	case SURVEY_ANSWERED: return "answered";
	case SURVEY_UNREACHABLE: return "not reachable";
	case SURVEY_SILENT: return "no answer by the deadline";
	default: return "no survey address in the cluster file";
	}
}
