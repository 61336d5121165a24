/*
 * cluster.c — the node's nng side (see cluster.h): survey answers, the
 * node-to-node seam's handler, the feed subscription and, on the catalog
 * node, the health view.
 *
 * Locking rule: the seam, the respondent and the subscriber are opened
 * before anything can use them and closed after; their own threads call
 * in here. The health view's table is guarded by health.mu: its thread
 * writes it, a /metrics scrape reads it.
 */
#include "cluster.h"
#include "clock.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "catalog_node.h"
#include "index.h"
#include "feed.h"
#include "node.h"
#include "peer.h"
#include "survey.h"
#include "thread_name.h"

/* What the catalog node last heard from one member. */
typedef struct member_health {
	survey_outcome outcome;
	int64_t answered_ms;  /* monotonic time of the last answer; 0: never */
	uint64_t catalog_version;
	char addr[160];
} member_health;

typedef struct health {
	pthread_mutex_t mu; /* guards stop, cv's waits and the table */
	pthread_cond_t cv;
	bool stop;
	pthread_t th;
	surveyor *sv;
	survey_members all; /* whom it asks: nodes, then routers */
	survey_target *targets; /* all.t */
	member_health seen[SURVEY_MEMBERS];
	size_t n;
} health;

struct cluster_state {
	peer *peer;
	survey_resp *resp;
	feed_sub *feed;
	health *health;
};

uint64_t
cluster_catalog_version(node *n)
{
	if (n->cat != NULL)
		return catalog_node_version(n);
	if (n->cl == NULL || n->cl->feed == NULL)
		return 0;
	feed_counts fc;
	feed_sub_counts(n->cl->feed, &fc);
	return fc.version;
}

/* ---- survey answers ---- */

static kv_err
answer(void *arg, uint32_t what, arena *a, member *m)
{
	node *n = arg;
	m->kind = MEMBER_NODE;
	m->index = n->index;
	m->pid = getpid();
	m->started_ms = n->started_ms;
	m->catalog_version = cluster_catalog_version(n);
	m->addr = n->cfg.nodes[n->index].url;
	if (n->cl->feed != NULL) {
		feed_counts fc;
		feed_sub_counts(n->cl->feed, &fc);
		m->feed_changes = fc.changes;
		m->feed_fetches = fc.fetches;
		m->feed_gaps = fc.gaps;
		if ((what & SURVEY_ARRIVALS) && feed_sub_arrivals(n->cl->feed,
		    a, &m->arrivals, &m->n_arrivals) != KV_OK)
			return KV_ENOMEM;
	}
	if (what & SURVEY_STATS) {
		rpc_request req = { .op = RPC_STATS };
		rpc_response resp;
		memset(&resp, 0, sizeof(resp));
		stats_serve(n, &req, a, &resp);
		if (resp.code != KV_OK)
			return resp.code;
		m->stats = resp.stats; /* in a */
		m->n_stats = resp.n_stats;
	}
	return KV_OK;
}

/* ---- the node-to-node seam ---- */

/*
 * PEER_VERB: a verb one node sends another, served as if it had come
 * over the frames: the catalog node's orders to owners, an owner's ask
 * for a split, and the steps of a move. No other verb is taken.
 */
static void
peer_verb(void *arg, const peer_msg *m, arena *a, peer_reply *out)
{
	node *n = arg;
	rpc_request req;
	rpc_response resp;
	uint8_t *buf = NULL;
	size_t len = 0;

	memset(&resp, 0, sizeof(resp));
	out->code = wire_unpack_request(m->body, m->len, a, &req);
	if (out->code != KV_OK)
		return;
	switch (req.op) {
	case RPC_ASSIGN: case RPC_DROP_TABLE: case RPC_SPLIT_ASK:
	case RPC_MOVE_BEGIN: case RPC_MOVE_PULL: case RPC_MOVE_DIRTY:
	case RPC_MOVE_FENCE: case RPC_MOVE_END: case RPC_MOVE_STEP:
	case RPC_BORROW: case RPC_INDEX_APPLY: case RPC_INDEX_BACKFILL:
	case RPC_TXN_DECIDE: case RPC_BACKUP_TAKE: case RPC_BACKUP_RESTORE:
	case RPC_BACKUP_DROP: case RPC_INDEX_COLLECT:
		break;
	default:
		out->code = KV_PROTO;
		goto out;
	}
	node_dispatch(n, &req, a, &resp);
	/*
	 * What the answer shows (a move's chunk, an applied batch) may be a
	 * write another thread applied and has not yet made durable: it is
	 * made durable first, as the request server does (store.h), or the
	 * answer is an error. Otherwise a kill could take back a write a
	 * peer has already copied.
	 */
	out->code = store_flush(n->st);
	if (out->code == KV_OK)
		out->code = wire_pack_response(&resp, &buf, &len);
	if (out->code == KV_OK) {
		out->body = (const uint8_t *) arena_dup(a, buf, len);
		out->len = len;
		if (out->body == NULL)
			out->code = KV_ENOMEM;
	}
	free(buf);
	wire_response_fini(&resp);
out:
	wire_request_fini(&req);
}

/* ---- the feed ---- */

/* The whole catalog from the catalog node, over the frames. */
static kv_err
fetch(void *arg, catalog **out)
{
	node *n = arg;
	rpc_request req = { .op = RPC_CATALOG_GET };
	rpc_response resp;
	arena a;
	rpc_client *c = node_peer(n, 0);
	if (c == NULL)
		return KV_UNAVAILABLE;
	arena_init(&a);
	kv_err rv = rpc_call(c, &req, &a, &resp, RPC_DEFAULT_TIMEOUT_MS);
	if (rv == KV_OK && (rv = resp.code) == KV_OK && resp.cat == NULL)
		rv = KV_PROTO;
	if (rv == KV_OK) {
		*out = resp.cat;
		resp.cat = NULL;
	}
	if (rv != KV_UNAVAILABLE && rv != KV_TIMEDOUT)
		wire_response_fini(&resp);
	arena_fini(&a);
	return rv;
}

/* The feed's catalogs become the node's view (index.h). */
static void
install(void *arg, catalog *c, int64_t published_us)
{
	(void) published_us;
	index_view_install(arg, c);
}

/* ---- the health view ---- */

static void
health_round(node *n, health *h)
{
	arena a;
	survey_result *res = calloc(h->n, sizeof(*res));
	if (res == NULL)
		return;
	arena_init(&a);
	surveyor_ask(h->sv, SURVEY_STATS, 0, HEALTH_DEADLINE_MS, &a, res);
	/* The same answers say what the PROVISIONED tables use. */
	reshape_borrow(n, h->targets, res, h->n);
	int64_t now = clock_mono_ms();
	pthread_mutex_lock(&h->mu);
	for (size_t i = 0; i < h->n; i++) {
		member_health *s = &h->seen[i];
		const survey_target *t = &h->targets[i];
		bool was_up = s->outcome == SURVEY_ANSWERED;
		bool up = res[i].outcome == SURVEY_ANSWERED;
		if (up) {
			s->answered_ms = now;
			s->catalog_version = res[i].m.catalog_version;
		}
		/* Say when a member starts or stops answering. */
		if (up != was_up && (up || s->answered_ms != 0))
			fprintf(stderr, "kv-node %u: %s %u (%s) %s\n",
			    n->index, t->kind == MEMBER_NODE ? "node" :
			    "router", t->index, s->addr,
			    up ? "answers surveys" :
			    survey_outcome_name(res[i].outcome));
		s->outcome = res[i].outcome;
	}
	pthread_mutex_unlock(&h->mu);
	arena_fini(&a);
	free(res);
}

static void *
health_run(void *arg)
{
	node *n = arg;
	health *h = n->cl->health;
	thread_name("kv-health");
	pthread_mutex_lock(&h->mu);
	while (!h->stop) {
		pthread_mutex_unlock(&h->mu);
		health_round(n, h);
		pthread_mutex_lock(&h->mu);
		struct timespec ts = clock_deadline_in(HEALTH_PERIOD_MS);
		if (!h->stop)
			pthread_cond_timedwait(&h->cv, &h->mu, &ts);
	}
	pthread_mutex_unlock(&h->mu);
	return NULL;
}

static void
health_free(health *h)
{
	if (h == NULL)
		return;
	surveyor_close(h->sv);
	pthread_mutex_destroy(&h->mu);
	pthread_cond_destroy(&h->cv);
	free(h);
}

static kv_err
health_open(node *n, health **out)
{
	const config *cfg = &n->cfg;
	health *h = calloc(1, sizeof(*h));
	if (h == NULL)
		return KV_ENOMEM;
	pthread_mutex_init(&h->mu, NULL);
	pthread_cond_init(&h->cv, NULL);
	survey_members_of(cfg, true, &h->all);
	h->targets = h->all.t;
	h->n = h->all.n;
	for (size_t i = 0; i < h->n; i++) {
		uint32_t k = h->targets[i].index;
		if (h->targets[i].kind == MEMBER_NODE)
			snprintf(h->seen[i].addr, sizeof(h->seen[i].addr),
			    "%s", cfg->nodes[k].url);
		else
			config_host_port(cfg->routers[k].host,
			    cfg->routers[k].port, h->seen[i].addr,
			    sizeof(h->seen[i].addr));
	}
	kv_err rv = surveyor_open(h->targets, h->n, &h->sv);
	if (rv != KV_OK) {
		health_free(h);
		return rv;
	}
	*out = h;
	return KV_OK;
}

void
cluster_write_health(node *n, FILE *f)
{
	health *h = n->cl != NULL ? n->cl->health : NULL;
	if (h == NULL)
		return;
	static const char *const fams[3][2] = {
		{ "kv_cluster_member_up", "Whether the member answered the "
		    "catalog node's last survey." },
		{ "kv_cluster_member_catalog_version", "The catalog version "
		    "the member held at its last answer." },
		{ "kv_cluster_member_silent_seconds", "Time since the member "
		    "last answered a survey." },
	};
	int64_t now = clock_mono_ms();
	pthread_mutex_lock(&h->mu);
	for (int k = 0; k < 3; k++) {
		fprintf(f, "# HELP %s %s\n# TYPE %s gauge\n", fams[k][0],
		    fams[k][1], fams[k][0]);
		for (size_t i = 0; i < h->n; i++) {
			const member_health *m = &h->seen[i];
			if (k > 0 && m->answered_ms == 0)
				continue; /* never answered: no value */
			fprintf(f, "%s{kind=\"%s\",index=\"%u\"", fams[k][0],
			    h->targets[i].kind == MEMBER_NODE ? "node" :
			    "router", h->targets[i].index);
			if (k == 0)
				fprintf(f, ",addr=\"%s\"} %d\n", m->addr,
				    m->outcome == SURVEY_ANSWERED);
			else if (k == 1)
				fprintf(f, "} %llu\n", (unsigned long long)
				    m->catalog_version);
			else
				fprintf(f, "} %.3f\n",
				    (double) (now - m->answered_ms) / 1e3);
		}
	}
	pthread_mutex_unlock(&h->mu);
}

/* ---- wiring ---- */

kv_err
cluster_open(node *n)
{
	const config *cfg = &n->cfg;
	const config_node *me = &cfg->nodes[n->index];
	char url[300];
	kv_err rv;

	if ((n->cl = calloc(1, sizeof(*n->cl))) == NULL)
		return KV_ENOMEM;
	cluster_state *cl = n->cl;
	if ((rv = peer_open(n->index, &cl->peer)) != KV_OK ||
	    (rv = peer_handle(cl->peer, PEER_VERB, peer_verb, n)) != KV_OK ||
	    (rv = config_bus_url(me->bus, CONFIG_BUS_PEER, url,
	    sizeof(url))) != KV_OK ||
	    (rv = peer_listen(cl->peer, url)) != KV_OK)
		return rv;
	for (uint32_t i = 0; i < cfg->n_nodes; i++) {
		if (i == n->index)
			continue;
		if ((rv = config_bus_url(cfg->nodes[i].bus, CONFIG_BUS_PEER,
		    url, sizeof(url))) != KV_OK ||
		    (rv = peer_add(cl->peer, i, url,
		    cfg->nodes[i].standby)) != KV_OK)
			return rv;
	}
	if (n->index != 0 && ((rv = config_bus_url(cfg->nodes[0].bus,
	    CONFIG_BUS_FEED, url, sizeof(url))) != KV_OK ||
	    (rv = feed_sub_open(url, fetch, install, n, &cl->feed)) != KV_OK))
		return rv;
	if ((rv = config_bus_url(me->bus, CONFIG_BUS_SURVEY, url,
	    sizeof(url))) != KV_OK ||
	    (rv = survey_resp_open(url, answer, n, &cl->resp)) != KV_OK)
		return rv;
	if (n->cat != NULL) {
		if ((rv = health_open(n, &cl->health)) != KV_OK)
			return rv;
		if (pthread_create(&cl->health->th, NULL, health_run, n) != 0) {
			health_free(cl->health);
			cl->health = NULL;
			return KV_ENOMEM;
		}
	}
	return KV_OK;
}

void
cluster_stop(node *n)
{
	cluster_state *cl = n->cl;
	if (cl == NULL)
		return;
	if (cl->health != NULL) {
		pthread_mutex_lock(&cl->health->mu);
		cl->health->stop = true;
		pthread_cond_broadcast(&cl->health->cv);
		pthread_mutex_unlock(&cl->health->mu);
		pthread_join(cl->health->th, NULL);
		health_free(cl->health);
		cl->health = NULL;
	}
	survey_resp_close(cl->resp);
	cl->resp = NULL;
	feed_sub_close(cl->feed);
	cl->feed = NULL;
}

void
cluster_close(node *n)
{
	cluster_state *cl = n->cl;
	if (cl == NULL)
		return;
	cluster_stop(n);
	peer_close(cl->peer);
	free(cl);
	n->cl = NULL;
}

kv_err
cluster_tell(node *n, uint32_t i, const rpc_request *req, arena *a,
    rpc_response *resp)
{
	return cluster_tell_ms(n, i, req, a, resp, RPC_DEFAULT_TIMEOUT_MS);
}

kv_err
cluster_tell_ms(node *n, uint32_t i, const rpc_request *req, arena *a,
    rpc_response *resp, int timeout_ms)
{
	uint8_t *buf;
	size_t len;
	peer_reply rep;
	memset(resp, 0, sizeof(*resp));
	if (n->cl == NULL || n->cl->peer == NULL)
		return KV_UNAVAILABLE;
	kv_err rv = wire_pack_request(req, &buf, &len);
	if (rv != KV_OK)
		return rv;
	rv = peer_call(n->cl->peer, i, PEER_VERB, buf, len, timeout_ms, a,
	    &rep);
	free(buf);
	if (rv == KV_OK && (rv = rep.code) == KV_OK)
		rv = wire_unpack_response(rep.body, rep.len, a, resp);
	return rv;
}

kv_err
cluster_ask(node *n, uint32_t i, const rpc_request *req, arena *a,
    rpc_response *resp, int timeout_ms)
{
	if (i == n->index) {
		memset(resp, 0, sizeof(*resp));
		node_dispatch(n, req, a, resp);
		return resp->code;
	}
	kv_err rv = cluster_tell_ms(n, i, req, a, resp, timeout_ms);
	return rv == KV_OK ? resp->code : rv;
}
