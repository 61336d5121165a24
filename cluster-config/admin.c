/*
 * admin.c — kv-admin, the cluster's operator tool: reads the cluster file
 * and talks to the nodes directly over the wire protocol.
 *
 *   kv-admin --config FILE status         nodes and routers (one survey of
 *                                         all of them), tables, partitions
 *                                         (the catalog's epoch and the one
 *                                         the owner holds)
 *   kv-admin --config FILE status --partitions [--once]
 *                                         per partition: consumed RCU/s
 *                                         and WCU/s, throttled requests/s,
 *                                         ceilings and burst credit left,
 *                                         refreshed every second (--once:
 *                                         one table over one second)
 *   kv-admin --config FILE bump-epoch TABLE PART
 *                                         raise a partition's epoch (tests
 *                                         routers' stale-route handling)
 *   kv-admin --config FILE feed-lag [--since V] [--raw]
 *                                         how long the catalog feed's
 *                                         changes after version V took to
 *                                         reach the last router (and each
 *                                         member): percentiles and a
 *                                         histogram; --raw prints every
 *                                         arrival instead
 *   kv-admin --config FILE feed-fault drop N | disconnect MS
 *                                         lose the catalog feed's next N
 *                                         changes, or close it for MS ms
 *                                         (tests the subscribers' gaps)
 *   kv-admin --config FILE partition split|move ..., status --events,
 *                          status --json, hot-keys TABLE
 *                                         adaptive capacity: see
 *                                         admin_reshape.c
 *
 * Members are asked with one survey (proto/survey.h): each answers within
 * SURVEY_DEADLINE_MS or is listed as DOWN with the reason (not reachable,
 * no answer by the deadline, no survey address).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netdb.h>
#include <sys/socket.h>
#include <sys/time.h>

#include "admin.h"
#include "bus_exit.h"
#include "config.h"
#include "feed.h"
#include "index_key.h"
#include "metrics.h"
#include "rpc.h"
#include "survey.h"

kv_err
members_open(const config *cfg, members *m)
{
	memset(m, 0, sizeof(*m));
	survey_members_of(cfg, true, &m->all);
	m->t = m->all.t;
	m->n = m->all.n;
	return surveyor_open(m->t, m->n, &m->sv);
}

void
members_ask(members *m, uint32_t what, arena *a, survey_result *results)
{
	if (surveyor_ask(m->sv, what, SURVEY_CONNECT_MS, SURVEY_DEADLINE_MS,
	    a, results) != KV_OK)
		for (size_t i = 0; i < m->n; i++)
			results[i].outcome = SURVEY_SILENT;
}

static const char *
ago(int64_t started_ms, char *buf, size_t len)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	int64_t s = ((int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000 -
	    started_ms) / 1000;
	if (s < 0)
		s = 0;
	if (s < 120)
		snprintf(buf, len, "%llds", (long long) s);
	else if (s < 7200)
		snprintf(buf, len, "%lldm", (long long) s / 60);
	else
		snprintf(buf, len, "%lldh", (long long) s / 3600);
	return buf;
}

static const char *
status_name(table_status s)
{
	return s == TABLE_CREATING ? "CREATING" :
	    s == TABLE_DELETING ? "DELETING" :
	    s == TABLE_UPDATING ? "UPDATING" : "ACTIVE";
}

/*
 * GET /metrics of one node (host, port) into an owned string, or NULL.
 * Plain HTTP/1.0 over a socket: the answer is small and the connection
 * closes at its end.
 */
static char *
node_metrics(const char *host, int port)
{
	char portstr[16], *buf = NULL;
	size_t len = 0, cap = 0;
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai;
	snprintf(portstr, sizeof(portstr), "%d", port);
	if (getaddrinfo(host, portstr, &hints, &ai) != 0)
		return NULL;
	int fd = socket(ai->ai_family, SOCK_STREAM, 0);
	struct timeval tv = { .tv_sec = 2 };
	if (fd >= 0) {
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	}
	if (fd < 0 || connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
		if (fd >= 0)
			close(fd);
		freeaddrinfo(ai);
		return NULL;
	}
	freeaddrinfo(ai);
	static const char req[] = "GET /metrics HTTP/1.0\r\n\r\n";
	if (write(fd, req, sizeof(req) - 1) != (ssize_t) sizeof(req) - 1) {
		close(fd);
		return NULL;
	}
	for (;;) {
		if (cap - len < 4096) {
			char *g = realloc(buf, cap = cap * 2 + 8192);
			if (g == NULL)
				break;
			buf = g;
		}
		ssize_t r = read(fd, buf + len, cap - len - 1);
		if (r <= 0)
			break;
		len += (size_t) r;
	}
	close(fd);
	if (buf != NULL)
		buf[len] = '\0';
	return buf;
}

/*
 * Prints, from every node's /metrics, each global index's records
 * waiting in the outboxes and the age of the oldest (node/index.h), the
 * lag of an index behind its table. Nothing when no node has any.
 */
static void
index_lag(const config *cfg)
{
	bool header = false;
	for (size_t i = 0; i < cfg->n_nodes; i++) {
		const config_node *cn = &cfg->nodes[i];
		if (cn->metrics_host[0] == '\0')
			continue;
		char *text = node_metrics(cn->metrics_host, cn->metrics_port);
		for (char *line = text, *next; line != NULL && *line != '\0';
		    line = next) {
			next = strchr(line, '\n');
			if (next != NULL)
				*next++ = '\0';
			static const char rec[] = "kv_index_outbox_records{",
			    old[] = "kv_index_outbox_oldest_seconds{";
			bool is_rec = strncmp(line, rec, sizeof(rec) - 1) == 0;
			if (!is_rec && strncmp(line, old, sizeof(old) - 1) != 0)
				continue;
			char *ix = strstr(line, "index=\""), *end, *val;
			if (ix == NULL || (end = strchr(ix + 7, '"')) == NULL ||
			    (val = strrchr(line, ' ')) == NULL)
				continue;
			if (!header) {
				printf("index replication (records waiting on "
				    "each node, age of the oldest):\n");
				header = true;
			}
			printf("  node %-3zu %-40.*s %s %s\n", i,
			    (int) (end - ix - 7), ix + 7, is_rec ? "waiting" :
			    "oldest ", val + 1);
		}
		free(text);
	}
}

/*
 * The names of tb's partition key (sort false) or sort key attributes,
 * joined by '+' into buf: a GSI's table keeps one composed value for a
 * multi-attribute key, whose attributes its base table's definition
 * lists (core/index_key.h). Empty without a sort key.
 */
static void
key_names(const catalog *c, const table *tb, bool sort, char *buf,
    size_t len)
{
	const key_def *parts[INDEX_KEY_PARTS];
	const key_def *own = sort ? &tb->range : &tb->hash;
	size_t n = own->name != NULL, at = 0;
	parts[0] = own;
	const table *base = tb->base_id != 0 ? table_find_id(c, tb->base_id) :
	    NULL;
	for (size_t i = 0; base != NULL && i < base->n_indexes; i++)
		if (base->indexes[i].table_id == tb->id)
			n = index_key_parts(&base->indexes[i], sort, parts);
	buf[0] = '\0';
	for (size_t i = 0; i < n && at < len; i++)
		at += (size_t) snprintf(buf + at, len - at, "%s%s",
		    i > 0 ? "+" : "", parts[i]->name);
}

static int
status(config *cfg, rpc_client **nodes, members *mb)
{
	arena a;
	survey_result res[SURVEY_MEMBERS];
	int rc = 0;
	char up_for[32];

	arena_init(&a);
	members_ask(mb, SURVEY_STATS, &a, res);
	printf("nodes:\n");
	for (size_t i = 0; i < cfg->n_nodes; i++) {
		const survey_result *r = &res[i];
		bool up = r->outcome == SURVEY_ANSWERED;
		/* A standby node not started yet is no failure. */
		printf("  %zu  %-32s %-8s %s%s", i, cfg->nodes[i].url,
		    up ? "up" : cfg->nodes[i].standby ? "standby" : "DOWN",
		    cfg->nodes[i].data, i == 0 ? "  (catalog)" : "");
		if (up)
			printf("  catalog=%llu pid=%lld up=%s\n",
			    (unsigned long long) r->m.catalog_version,
			    (long long) r->m.pid,
			    ago(r->m.started_ms, up_for, sizeof(up_for)));
		else
			printf("  (%s)\n", survey_outcome_name(r->outcome));
	}
	printf("routers:\n");
	if (cfg->n_routers == 0)
		printf("  (none in the cluster file)\n");
	for (size_t i = 0; i < cfg->n_routers; i++) {
		const survey_result *r = &res[cfg->n_nodes + i];
		char hp[160];
		config_host_port(cfg->routers[i].host, cfg->routers[i].port, hp,
		    sizeof(hp));
		bool up = r->outcome == SURVEY_ANSWERED;
		printf("  %zu  %-32s %-8s", i, hp, up ? "up" :
		    r->outcome == SURVEY_NO_ADDRESS ? "?" : "DOWN");
		if (up)
			printf(" catalog=%llu pid=%lld up=%s connections=%u "
			    "requests=%llu\n",
			    (unsigned long long) r->m.catalog_version,
			    (long long) r->m.pid,
			    ago(r->m.started_ms, up_for, sizeof(up_for)),
			    r->m.connections,
			    (unsigned long long) r->m.requests);
		else
			printf(" (%s)\n", survey_outcome_name(r->outcome));
	}
	rpc_request req = { .op = RPC_CATALOG_GET };
	rpc_response resp;
	if (rpc_call(nodes[0], &req, &a, &resp, TIMEOUT_MS) != KV_OK ||
	    resp.code != KV_OK || resp.cat == NULL) {
		printf("catalog: unavailable (node 0 is down)\n");
		rc = 1;
		goto out;
	}
	printf("tables (catalog version %llu):\n",
	    (unsigned long long) resp.cat->version);
	if (resp.cat->n_tables == 0)
		printf("  (none)\n");
	for (size_t t = 0; t < resp.cat->n_tables; t++) {
		const table *tb = &resp.cat->tables[t];
		char hash[256], range[256];
		key_names(resp.cat, tb, false, hash, sizeof(hash));
		key_names(resp.cat, tb, true, range, sizeof(range));
		printf("  %s  id=%u  %s  %s  hash=%s%s%s\n", tb->name, tb->id,
		    status_name(tb->status),
		    tb->billing == BILLING_PAY_PER_REQUEST ?
		    "PAY_PER_REQUEST" : "PROVISIONED", hash,
		    range[0] != '\0' ? " range=" : "", range);
		printf("    %-5s %-39s %-5s %-6s %-6s %10s %12s\n", "part",
		    "hash range", "node", "epoch", "owner", "items", "bytes");
		for (size_t p = 0; p < tb->n_parts; p++) {
			const partition *pp = &tb->parts[p];
			char items[32] = "?", bytes[32] = "?", ne[32] = "?";
			if (pp->node < cfg->n_nodes &&
			    res[pp->node].outcome == SURVEY_ANSWERED) {
				const member *m = &res[pp->node].m;
				for (size_t k = 0; k < m->n_stats; k++) {
					if (m->stats[k].table_id != tb->id ||
					    m->stats[k].part != pp->id)
						continue;
					snprintf(items, sizeof(items), "%llu",
					    (unsigned long long)
					    m->stats[k].items);
					snprintf(bytes, sizeof(bytes), "%llu",
					    (unsigned long long)
					    m->stats[k].bytes);
					snprintf(ne, sizeof(ne), "%llu",
					    (unsigned long long)
					    m->stats[k].epoch);
				}
			}
			printf("    %-5u %016llx-%016llx  %-5u %-6llu %-6s "
			    "%10s %12s\n", pp->id, (unsigned long long) pp->lo,
			    (unsigned long long) pp->last, pp->node,
			    (unsigned long long) pp->epoch, ne, items, bytes);
		}
	}
	wire_response_fini(&resp);
	index_lag(cfg);
out:
	arena_fini(&a);
	return rc;
}

/* ---- status --partitions ---- */

double
mono_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + ts.tv_nsec / 1e9;
}

void
sample_take(rpc_client **nodes, members *mb, sample *s)
{
	arena_init(&s->a);
	s->cat = NULL;
	rpc_request creq = { .op = RPC_CATALOG_GET };
	rpc_response cresp;
	memset(&cresp, 0, sizeof(cresp));
	if (rpc_call(nodes[0], &creq, &s->a, &cresp, TIMEOUT_MS) == KV_OK &&
	    cresp.code == KV_OK) {
		s->cat = cresp.cat;
		cresp.cat = NULL;
	}
	wire_response_fini(&cresp);
	members_ask(mb, SURVEY_STATS, &s->a, s->res);
	/*
	 * A node whose survey answer did not come is asked once more over
	 * its request frames, so that a late or lost answer does not show
	 * its partitions as unserved. (Its other survey fields stay empty.)
	 */
	for (size_t i = 0; i < mb->n; i++) {
		if (s->res[i].outcome == SURVEY_ANSWERED ||
		    mb->t[i].kind != MEMBER_NODE)
			continue;
		rpc_request sreq = { .op = RPC_STATS };
		rpc_response sresp;
		memset(&sresp, 0, sizeof(sresp));
		if (rpc_call(nodes[mb->t[i].index], &sreq, &s->a, &sresp,
		    TIMEOUT_MS) == KV_OK && sresp.code == KV_OK) {
			s->res[i].outcome = SURVEY_ANSWERED;
			s->res[i].m.stats = sresp.stats; /* in s->a */
			s->res[i].m.n_stats = sresp.n_stats;
		}
		wire_response_fini(&sresp);
	}
	s->t = mono_s();
}

void
sample_fini(sample *s)
{
	catalog_free(s->cat);
	arena_fini(&s->a);
}

const part_stats *
find_stats(const sample *s, uint32_t node, uint32_t table_id, uint32_t part)
{
	if (s->res[node].outcome != SURVEY_ANSWERED)
		return NULL;
	const member *m = &s->res[node].m;
	for (size_t k = 0; k < m->n_stats; k++)
		if (m->stats[k].table_id == table_id && m->stats[k].part == part)
			return &m->stats[k];
	return NULL;
}

/* Micro half-units (bucket.h) to whole capacity units. */
static double
units(int64_t micro_half)
{
	return (double) micro_half / 2e6;
}

double
rate(uint64_t now, uint64_t before, double dt)
{
	return dt > 0 && now >= before ? (double) (now - before) / dt : 0;
}

static void
print_partitions(const sample *prev, const sample *cur)
{
	double dt = cur->t - prev->t;
	char when[32];
	time_t now = time(NULL);
	strftime(when, sizeof(when), "%H:%M:%S", localtime(&now));
	printf("kv partitions at %s (rates over the last %.1f s; units per "
	    "second)\n", when, dt);
	printf("%-20s %4s %4s %9s %9s %8s %8s %8s %8s %10s %10s %9s\n",
	    "table", "part", "node", "RCU/s", "WCU/s", "thr-r/s", "thr-w/s",
	    "ceil-r", "ceil-w", "burst-r", "burst-w", "items");
	if (cur->cat == NULL) {
		printf("  (catalog unavailable: node 0 is down)\n");
		return;
	}
	for (size_t t = 0; t < cur->cat->n_tables; t++) {
		const table *tb = &cur->cat->tables[t];
		for (size_t p = 0; p < tb->n_parts; p++) {
			const partition *pp = &tb->parts[p];
			const part_stats *a = find_stats(cur, pp->node, tb->id,
			    pp->id);
			const part_stats *b = find_stats(prev, pp->node, tb->id,
			    pp->id);
			if (a == NULL) {
				printf("%-20.20s %4u %4u  (owner down)\n",
				    tb->name, pp->id, pp->node);
				continue;
			}
			part_stats zero = { 0 };
			if (b == NULL)
				b = &zero;
			printf("%-20.20s %4u %4u %9.1f %9.1f %8.1f %8.1f %8.0f "
			    "%8.0f %10.0f %10.0f %9llu\n", tb->name, pp->id,
			    pp->node,
			    rate(a->read_charged, b->read_charged, dt) / 2,
			    rate(a->write_charged, b->write_charged, dt) / 2,
			    rate(a->read_throttled, b->read_throttled, dt),
			    rate(a->write_throttled, b->write_throttled, dt),
			    units(a->read_rate), units(a->write_rate),
			    metrics_burst_units(a->read_credit, a->read_rate),
			    metrics_burst_units(a->write_credit,
			    a->write_rate),
			    (unsigned long long) a->items);
		}
	}
}

static int
partitions(rpc_client **nodes, members *mb, bool once)
{
	sample s[2];
	int i = 0;
	sample_take(nodes, mb, &s[0]);
	for (;;) {
		sleep(1);
		sample_take(nodes, mb, &s[1 - i]);
		if (!once)
			printf("\033[H\033[2J");
		print_partitions(&s[i], &s[1 - i]);
		fflush(stdout);
		sample_fini(&s[i]);
		i = 1 - i;
		if (once)
			break;
	}
	sample_fini(&s[i]);
	return 0;
}

static int
bump(rpc_client *catalog_node, const char *name, const char *part)
{
	arena a;
	rpc_request req = { .op = RPC_BUMP_EPOCH, .table_name = name,
		.part = (uint32_t) strtoul(part, NULL, 10) };
	rpc_response resp;
	arena_init(&a);
	kv_err rv = rpc_call(catalog_node, &req, &a, &resp, TIMEOUT_MS);
	if (rv == KV_OK)
		rv = resp.code;
	if (rv == KV_OK && resp.table != NULL) {
		for (size_t i = 0; i < resp.table->n_parts; i++)
			if (resp.table->parts[i].id == req.part)
				printf("%s partition %u: epoch %llu\n", name,
				    req.part, (unsigned long long)
				    resp.table->parts[i].epoch);
	} else {
		fprintf(stderr, "kv-admin: bump-epoch failed: %s\n",
		    kv_err_name(rv));
	}
	wire_response_fini(&resp);
	arena_fini(&a);
	return rv == KV_OK ? 0 : 1;
}

/* ---- feed-lag ---- */

static int
by_u64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;
	return x < y ? -1 : x > y;
}

static double
pct(const int64_t *v, size_t n, double p)
{
	if (n == 0)
		return 0;
	size_t i = (size_t) (p / 100.0 * (double) (n - 1) + 0.5);
	return (double) v[i < n ? i : n - 1] / 1000.0;
}

static void
print_dist(const char *what, int64_t *lags, size_t n)
{
	static const int64_t bounds[] = FEED_LAG_BOUNDS_US;
	qsort(lags, n, sizeof(*lags), by_u64);
	printf("%s: %zu changes", what, n);
	if (n > 0)
		printf(", p50 %.3f ms, p90 %.3f ms, p99 %.3f ms, max %.3f ms",
		    pct(lags, n, 50), pct(lags, n, 90), pct(lags, n, 99),
		    (double) lags[n - 1] / 1000.0);
	printf("\n");
	if (n == 0)
		return;
	printf("  histogram:");
	size_t k = 0;
	for (size_t b = 0; b <= sizeof(bounds) / sizeof(bounds[0]); b++) {
		size_t c = 0;
		bool last = b == sizeof(bounds) / sizeof(bounds[0]);
		while (k < n && (last || lags[k] <= bounds[b])) {
			c++;
			k++;
		}
		if (c == 0)
			continue;
		if (last)
			printf(" >%gms:%zu", (double) bounds[b - 1] / 1000.0,
			    c);
		else
			printf(" <=%gms:%zu", (double) bounds[b] / 1000.0, c);
	}
	printf("\n");
}

static int
feed_lag(members *mb, uint64_t since, bool raw)
{
	arena a;
	survey_result res[SURVEY_MEMBERS];
	arena_init(&a);
	members_ask(mb, SURVEY_ARRIVALS, &a, res);
	if (raw) {
		printf("# version published_us kind index applied_us\n");
		for (size_t i = 0; i < mb->n; i++) {
			const member *m = &res[i].m;
			if (res[i].outcome != SURVEY_ANSWERED)
				continue;
			for (size_t k = 0; k < m->n_arrivals; k++)
				if (m->arrivals[k].version > since)
					printf("%llu %lld %s %u %lld\n",
					    (unsigned long long)
					    m->arrivals[k].version, (long long)
					    m->arrivals[k].published_us,
					    m->kind == MEMBER_NODE ? "node" :
					    "router", m->index, (long long)
					    m->arrivals[k].applied_us);
		}
		arena_fini(&a);
		return 0;
	}
	/* Every version some member applied from the feed. */
	uint64_t lo = UINT64_MAX, hi = 0;
	size_t routers = 0;
	for (size_t i = 0; i < mb->n; i++) {
		if (res[i].outcome != SURVEY_ANSWERED)
			continue;
		routers += mb->t[i].kind == MEMBER_ROUTER;
		for (size_t k = 0; k < res[i].m.n_arrivals; k++) {
			uint64_t v = res[i].m.arrivals[k].version;
			if (v <= since)
				continue;
			lo = v < lo ? v : lo;
			hi = v > hi ? v : hi;
		}
	}
	size_t span = hi >= lo ? (size_t) (hi - lo + 1) : 0;
	int64_t *last = calloc(span + 1, sizeof(int64_t));
	int64_t *each = calloc(span + 1, sizeof(int64_t));
	if (last == NULL || each == NULL) {
		free(last);
		free(each);
		arena_fini(&a);
		return 1;
	}
	/* To the last router: versions every answering router applied. */
	size_t n_last = 0, missed = 0;
	for (uint64_t v = lo; span > 0 && v <= hi; v++) {
		int64_t pub = 0, worst = 0;
		size_t held = 0;
		for (size_t i = 0; i < mb->n; i++) {
			if (res[i].outcome != SURVEY_ANSWERED ||
			    mb->t[i].kind != MEMBER_ROUTER)
				continue;
			const member *m = &res[i].m;
			for (size_t k = 0; k < m->n_arrivals; k++) {
				const feed_arrival *fa = &m->arrivals[k];
				if (fa->version != v)
					continue;
				held++;
				pub = fa->published_us;
				if (fa->applied_us - pub > worst)
					worst = fa->applied_us - pub;
			}
		}
		if (held == 0)
			continue; /* not a change any router saw */
		if (held < routers) {
			missed++;
			continue;
		}
		last[n_last++] = worst;
	}
	if (span == 0)
		printf("catalog feed: %zu router%s answered; no change after "
		    "version %llu arrived from the feed\n", routers,
		    routers == 1 ? "" : "s", (unsigned long long) since);
	else
		printf("catalog feed: %zu router%s answered; versions "
		    "%llu..%llu\n", routers, routers == 1 ? "" : "s",
		    (unsigned long long) lo, (unsigned long long) hi);
	print_dist("to the last router", last, n_last);
	if (missed > 0)
		printf("  (%zu change%s reached some router by a fetch "
		    "instead: a gap)\n", missed, missed == 1 ? "" : "s");
	for (size_t i = 0; i < mb->n; i++) {
		if (res[i].outcome != SURVEY_ANSWERED ||
		    (mb->t[i].kind == MEMBER_NODE && mb->t[i].index == 0))
			continue;
		const member *m = &res[i].m;
		size_t n = 0;
		for (size_t k = 0; k < m->n_arrivals; k++)
			if (m->arrivals[k].version > since)
				each[n++] = m->arrivals[k].applied_us -
				    m->arrivals[k].published_us;
		char what[96];
		snprintf(what, sizeof(what), "%s %u (gaps %llu, fetches %llu)",
		    m->kind == MEMBER_NODE ? "node" : "router", m->index,
		    (unsigned long long) m->feed_gaps,
		    (unsigned long long) m->feed_fetches);
		print_dist(what, each, n);
	}
	free(last);
	free(each);
	arena_fini(&a);
	return 0;
}

static int
feed_fault(rpc_client *catalog_node, const char *what, const char *n)
{
	arena a;
	uint64_t v;
	if (config_number(n, &v) != KV_OK || v > UINT32_MAX) {
		fprintf(stderr, "kv-admin: feed-fault needs a number\n");
		return 2;
	}
	rpc_request req = { .op = RPC_FEED_FAULT, .table_name = what,
		.limit = (uint32_t) v };
	rpc_response resp;
	arena_init(&a);
	int fault_ms = strcmp(what, "disconnect") == 0 ?
	    (int) (v < 60000 ? v : 60000) + FEED_DISCONNECT_EXTRA_MS : 0;
	kv_err rv = rpc_call(catalog_node, &req, &a, &resp, TIMEOUT_MS +
	    fault_ms);
	if (rv == KV_OK)
		rv = resp.code;
	if (rv != KV_OK)
		fprintf(stderr, "kv-admin: feed-fault failed: %s%s%s\n",
		    kv_err_name(rv), resp.message != NULL ? ": " : "",
		    resp.message != NULL ? resp.message : "");
	wire_response_fini(&resp);
	arena_fini(&a);
	return rv == KV_OK ? 0 : 1;
}

int
main(int argc, char **argv)
{
	config cfg;
	char why[512];
	rpc_client *nodes[CONFIG_MAX_NODES] = { NULL };
	int rc = 2;

	if (argc < 4 || strcmp(argv[1], "--config") != 0) {
		fprintf(stderr, "usage: kv-admin --config FILE status "
		    "[--partitions [--once] | --events | --json] | "
		    "bump-epoch TABLE PART | feed-lag [--since V] [--raw] | "
		    "feed-fault drop N | feed-fault disconnect MS | "
		    "partition split TABLE PART [--at HASH]... | "
		    "partition move TABLE PART NODE | node add|drain N | "
		    "hot-keys TABLE [--json]\n");
		return 2;
	}
	if (config_load(argv[2], &cfg, why, sizeof(why)) != KV_OK) {
		fprintf(stderr, "kv-admin: %s\n", why);
		return 1;
	}
	for (size_t i = 0; i < cfg.n_nodes; i++)
		if (rpc_client_open(cfg.nodes[i].url, &nodes[i]) != KV_OK) {
			fprintf(stderr, "kv-admin: bad URL %s\n",
			    cfg.nodes[i].url);
			return 1;
		}
	bool lag = strcmp(argv[3], "feed-lag") == 0;
	bool surveys = strcmp(argv[3], "status") == 0 || lag;
	members mb = { 0 };
	if (surveys && members_open(&cfg, &mb) != KV_OK) {
		fprintf(stderr, "kv-admin: cannot survey the cluster (a bad "
		    "address in %s?)\n", argv[2]);
		rc = 1;
	} else if (surveys && !lag && argc == 4)
		rc = status(&cfg, nodes, &mb);
	else if (surveys && !lag && strcmp(argv[4], "--partitions") == 0 &&
	    (argc == 5 || (argc == 6 && strcmp(argv[5], "--once") == 0)))
		rc = partitions(nodes, &mb, argc == 6);
	else if (surveys && !lag && argc == 5 &&
	    strcmp(argv[4], "--events") == 0)
		rc = admin_events(nodes[0]);
	else if (surveys && !lag && argc == 5 &&
	    strcmp(argv[4], "--json") == 0)
		rc = admin_status_json(&cfg, nodes, &mb);
	else if (lag) {
		uint64_t since = 0;
		bool raw = false;
		rc = 0;
		for (int i = 4; i < argc && rc == 0; i++) {
			if (strcmp(argv[i], "--raw") == 0)
				raw = true;
			else if (strcmp(argv[i], "--since") == 0 &&
			    i + 1 < argc &&
			    config_number(argv[i + 1], &since) == KV_OK)
				i++;
			else
				rc = 2;
		}
		if (rc == 0)
			rc = feed_lag(&mb, since, raw);
		else
			fprintf(stderr, "kv-admin: feed-lag [--since V] "
			    "[--raw]\n");
	} else if (strcmp(argv[3], "bump-epoch") == 0 && argc == 6)
		rc = bump(nodes[0], argv[4], argv[5]);
	else if (strcmp(argv[3], "feed-fault") == 0 && argc == 6)
		rc = feed_fault(nodes[0], argv[4], argv[5]);
	else if (strcmp(argv[3], "partition") == 0 && argc >= 5 &&
	    strcmp(argv[4], "split") == 0)
		rc = admin_split(nodes[0], argc - 5, argv + 5);
	else if (strcmp(argv[3], "partition") == 0 && argc >= 5 &&
	    strcmp(argv[4], "move") == 0)
		rc = admin_move(nodes[0], argc - 5, argv + 5);
	else if (strcmp(argv[3], "node") == 0)
		rc = admin_node(nodes[0], argc - 4, argv + 4);
	else if (strcmp(argv[3], "index") == 0)
		rc = admin_index(nodes[0], argc - 4, argv + 4);
	else if (strcmp(argv[3], "hot-keys") == 0 && (argc == 5 ||
	    (argc == 6 && strcmp(argv[5], "--json") == 0)))
		rc = admin_hot_keys(&cfg, nodes, argv[4], argc == 6);
	else
		fprintf(stderr, "kv-admin: unknown command %s\n", argv[3]);
	bus_exit_begin(); /* a late answer could hang nng_close (bus_exit.h) */
	surveyor_close(mb.sv);
	for (size_t i = 0; i < cfg.n_nodes; i++)
		rpc_client_close(nodes[i]);
	return rc;
}
