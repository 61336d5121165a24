/*
 * ops_metrics.c — GET /metrics on a router: Prometheus text with this
 * router's answers per operation and outcome, how its catalog is kept
 * current, and every node's partition counters (rendered by
 * proto/metrics.c, named from the catalog the feed keeps current), asked
 * of all the nodes at once with one survey (member.h). Nodes that do not
 * answer are left out for this scrape; kv_router_node_up says which.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>

#include "api.h"
#include "conn.h"
#include "metrics.h"
#include "feed.h"
#include "member.h"
#include "route.h"

typedef struct names {
	uint32_t *ids;
	char **names;
	size_t n;
} names;

static const char *
name_of(void *arg, uint32_t table_id)
{
	names *nm = arg;
	for (size_t i = 0; i < nm->n; i++)
		if (nm->ids[i] == table_id)
			return nm->names[i];
	return NULL;
}

static void
counters(FILE *f, router *r)
{
	static const struct {
		const char *name, *help;
		size_t off;
	} fams[] = {
		{ "kv_router_requests_total", "Requests answered, by operation.",
		    offsetof(api_counters, requests) },
		{ "kv_router_throttled_total", "Requests answered with "
		    "ThrottlingException or "
		    "ProvisionedThroughputExceededException.",
		    offsetof(api_counters, throttled) },
		{ "kv_router_client_errors_total", "Other 4xx answers.",
		    offsetof(api_counters, client_errors) },
		{ "kv_router_server_errors_total", "5xx answers.",
		    offsetof(api_counters, server_errors) },
	};
	for (size_t k = 0; k < sizeof(fams) / sizeof(fams[0]); k++) {
		fprintf(f, "# HELP %s %s\n# TYPE %s counter\n", fams[k].name,
		    fams[k].help, fams[k].name);
		for (size_t i = 0; i < API_N_OPS; i++) {
			atomic_uint_fast64_t *v = (atomic_uint_fast64_t *)
			    ((char *) &r->counters[i] + fams[k].off);
			fprintf(f, "%s{op=\"%s\"} %llu\n", fams[k].name,
			    api_op_name(i), (unsigned long long)
			    atomic_load_explicit(v, memory_order_relaxed));
		}
	}
}

/* How this router's catalog is kept current (route.h). */
static void
catalog_feed(FILE *f, router *r)
{
	route_counts rc;
	route_feed_counts(&rc);
	fprintf(f, "# HELP kv_router_catalog_version The catalog version "
	    "this router holds.\n# TYPE kv_router_catalog_version gauge\n"
	    "kv_router_catalog_version %llu\n",
	    (unsigned long long) route_version(r));
	static const struct {
		const char *name, *help;
		size_t off;
	} fams[] = {
		{ "kv_router_catalog_feed_changes_total", "Catalog changes "
		    "applied from the catalog feed.",
		    offsetof(route_counts, feed_changes) },
		{ "kv_router_catalog_feed_gaps_total", "Gaps in the feed's "
		    "sequence (a lost change, a reconnect, a heartbeat ahead).",
		    offsetof(route_counts, feed_gaps) },
		{ "kv_router_catalog_feed_fetches_total", "Whole catalogs the "
		    "feed fetched (at start, after a gap or a silence).",
		    offsetof(route_counts, feed_fetches) },
		{ "kv_router_catalog_demand_fetches_total", "Whole catalogs "
		    "fetched on demand (DescribeTable, ListTables, an unknown "
		    "table, a stale route).",
		    offsetof(route_counts, demand_fetches) },
	};
	for (size_t k = 0; k < sizeof(fams) / sizeof(fams[0]); k++)
		fprintf(f, "# HELP %s %s\n# TYPE %s counter\n%s %llu\n",
		    fams[k].name, fams[k].help, fams[k].name, fams[k].name,
		    (unsigned long long) *(const uint64_t *)
		    ((const char *) &rc + fams[k].off));
	const char *h = "kv_router_catalog_propagation_seconds";
	fprintf(f, "# HELP %s Time from the catalog node publishing a change "
	    "to this router holding its version.\n# TYPE %s histogram\n",
	    h, h);
	uint64_t cum = 0;
	static const int64_t bounds[FEED_LAG_BUCKETS] = FEED_LAG_BOUNDS_US;
	for (size_t b = 0; b < FEED_LAG_BUCKETS; b++) {
		cum += rc.lag_counts[b];
		fprintf(f, "%s_bucket{le=\"%g\"} %llu\n", h,
		    (double) bounds[b] / 1e6, (unsigned long long) cum);
	}
	fprintf(f, "%s_bucket{le=\"+Inf\"} %llu\n%s_sum %.6f\n"
	    "%s_count %llu\n", h, (unsigned long long) rc.lag_samples, h,
	    rc.lag_sum_s, h, (unsigned long long) rc.lag_samples);
}

static void
text_out(reply *out, char *buf)
{
	free(out->body);
	if (buf == NULL) {
		out->status = 500;
		out->body = strdup("out of memory\n");
	} else {
		out->status = 200;
		out->body = buf;
	}
	out->len = out->body != NULL ? strlen(out->body) : 0;
}

void
ops_metrics(router *r, reply *out)
{
	arena a;
	names nm = { 0 };
	metrics_source src[CONFIG_MAX_NODES];
	survey_result res[CONFIG_MAX_NODES];
	bool up[CONFIG_MAX_NODES] = { false };
	size_t n_src = 0;
	char *buf = NULL;
	size_t len = 0;

	arena_init(&a);
	route_read_lock();
	const catalog *cat = route_current(r);
	nm.ids = arena_alloc(&a, (cat->n_tables + 1) * sizeof(*nm.ids));
	nm.names = arena_alloc(&a, (cat->n_tables + 1) * sizeof(*nm.names));
	for (size_t i = 0; nm.ids != NULL && nm.names != NULL &&
	    i < cat->n_tables; i++) {
		nm.ids[nm.n] = cat->tables[i].id;
		nm.names[nm.n] = arena_dup(&a, cat->tables[i].name,
		    strlen(cat->tables[i].name));
		if (nm.names[nm.n] != NULL)
			nm.n++;
	}
	route_read_unlock();

	if (member_survey_nodes(r, &a, res) != KV_OK)
		memset(res, 0, sizeof(res));
	for (uint32_t i = 0; i < r->cfg.n_nodes; i++) {
		up[i] = res[i].outcome == SURVEY_ANSWERED;
		if (up[i])
			src[n_src++] = (metrics_source) { .node = i,
				.stats = res[i].m.stats,
				.n = res[i].m.n_stats };
	}
	FILE *f = open_memstream(&buf, &len);
	if (f != NULL) {
		counters(f, r);
		catalog_feed(f, r);
		fputs("# HELP kv_router_node_up Whether the node answered "
		    "this scrape.\n# TYPE kv_router_node_up gauge\n", f);
		for (uint32_t i = 0; i < r->cfg.n_nodes; i++)
			fprintf(f, "kv_router_node_up{node=\"%u\"} %d\n", i,
			    up[i] ? 1 : 0);
		metrics_write_parts(f, src, n_src, name_of, &nm);
		fclose(f);
	}
	arena_fini(&a);
	text_out(out, buf);
}
