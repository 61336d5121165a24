/*
 * admin.c — kv-admin, the cluster's operator tool: reads the cluster file
 * and talks to the nodes directly over the wire protocol.
 *
 *   kv-admin --config FILE status         nodes, tables, partitions (the
 *                                         catalog's epoch and the one the
 *                                         owner holds)
 *   kv-admin --config FILE status --partitions [--once]
 *                                         per partition: consumed RCU/s
 *                                         and WCU/s, throttled requests/s,
 *                                         ceilings and burst credit left,
 *                                         refreshed every second (--once:
 *                                         one table over one second)
 *   kv-admin --config FILE bump-epoch TABLE PART
 *                                         raise a partition's epoch (tests
 *                                         routers' stale-route handling)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "metrics.h"
#include "rpc.h"

#define TIMEOUT_MS 5000 /* generous: a loaded node is slow, not gone */

static const char *
status_name(table_status s)
{
	return s == TABLE_CREATING ? "CREATING" :
	    s == TABLE_DELETING ? "DELETING" :
	    s == TABLE_UPDATING ? "UPDATING" : "ACTIVE";
}

static int
status(config *cfg, rpc_client **nodes)
{
	arena a;
	rpc_response stats[CONFIG_MAX_NODES];
	bool up[CONFIG_MAX_NODES];
	int rc = 0;

	arena_init(&a);
	printf("nodes:\n");
	for (size_t i = 0; i < cfg->n_nodes; i++) {
		rpc_request req = { .op = RPC_STATS };
		up[i] = rpc_call(nodes[i], &req, &a, &stats[i], TIMEOUT_MS) ==
		    KV_OK && stats[i].code == KV_OK;
		printf("  %zu  %-32s %-8s %s%s\n", i, cfg->nodes[i].url,
		    up[i] ? "up" : "DOWN", cfg->nodes[i].data,
		    i == 0 ? "  (catalog)" : "");
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
		printf("  %s  id=%u  %s  %s  hash=%s%s%s\n", tb->name, tb->id,
		    status_name(tb->status),
		    tb->billing == BILLING_PAY_PER_REQUEST ?
		    "PAY_PER_REQUEST" : "PROVISIONED", tb->hash.name,
		    tb->range.name != NULL ? " range=" : "",
		    tb->range.name != NULL ? tb->range.name : "");
		printf("    %-5s %-39s %-5s %-6s %-6s %10s %12s\n", "part",
		    "hash range", "node", "epoch", "owner", "items", "bytes");
		for (size_t p = 0; p < tb->n_parts; p++) {
			const partition *pp = &tb->parts[p];
			char items[32] = "?", bytes[32] = "?", ne[32] = "?";
			if (pp->node < cfg->n_nodes && up[pp->node]) {
				rpc_response *s = &stats[pp->node];
				for (size_t k = 0; k < s->n_stats; k++) {
					if (s->stats[k].table_id != tb->id ||
					    s->stats[k].part != pp->id)
						continue;
					snprintf(items, sizeof(items), "%llu",
					    (unsigned long long)
					    s->stats[k].items);
					snprintf(bytes, sizeof(bytes), "%llu",
					    (unsigned long long)
					    s->stats[k].bytes);
					snprintf(ne, sizeof(ne), "%llu",
					    (unsigned long long)
					    s->stats[k].epoch);
				}
			}
			printf("    %-5u %016llx-%016llx  %-5u %-6llu %-6s "
			    "%10s %12s\n", pp->id, (unsigned long long) pp->lo,
			    (unsigned long long) pp->last, pp->node,
			    (unsigned long long) pp->epoch, ne, items, bytes);
		}
	}
	wire_response_fini(&resp);
out:
	arena_fini(&a);
	return rc;
}

/* ---- status --partitions ---- */

/* One sample of every node's partition counters. */
typedef struct sample {
	arena a;
	double t; /* seconds, monotonic */
	rpc_response stats[CONFIG_MAX_NODES];
	bool up[CONFIG_MAX_NODES];
	catalog *cat; /* owned; NULL when node 0 is down */
} sample;

static double
mono_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
sample_take(config *cfg, rpc_client **nodes, sample *s)
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
	for (size_t i = 0; i < cfg->n_nodes; i++) {
		rpc_request req = { .op = RPC_STATS };
		s->up[i] = rpc_call(nodes[i], &req, &s->a, &s->stats[i],
		    TIMEOUT_MS) == KV_OK && s->stats[i].code == KV_OK;
	}
	s->t = mono_s();
}

static void
sample_fini(sample *s, size_t n_nodes)
{
	for (size_t i = 0; i < n_nodes; i++)
		if (s->up[i])
			wire_response_fini(&s->stats[i]);
	catalog_free(s->cat);
	arena_fini(&s->a);
}

static const part_stats *
find_stats(const sample *s, uint32_t node, uint32_t table_id, uint32_t part)
{
	if (!s->up[node])
		return NULL;
	const rpc_response *r = &s->stats[node];
	for (size_t k = 0; k < r->n_stats; k++)
		if (r->stats[k].table_id == table_id && r->stats[k].part == part)
			return &r->stats[k];
	return NULL;
}

/* Micro half-units (bucket.h) to whole capacity units. */
static double
units(int64_t micro_half)
{
	return (double) micro_half / 2e6;
}

static double
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
partitions(config *cfg, rpc_client **nodes, bool once)
{
	sample s[2];
	int i = 0;
	sample_take(cfg, nodes, &s[0]);
	for (;;) {
		sleep(1);
		sample_take(cfg, nodes, &s[1 - i]);
		if (!once)
			printf("\033[H\033[2J");
		print_partitions(&s[i], &s[1 - i]);
		fflush(stdout);
		sample_fini(&s[i], cfg->n_nodes);
		i = 1 - i;
		if (once)
			break;
	}
	sample_fini(&s[i], cfg->n_nodes);
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

int
main(int argc, char **argv)
{
	config cfg;
	char why[512];
	rpc_client *nodes[CONFIG_MAX_NODES] = { NULL };
	int rc = 2;

	if (argc < 4 || strcmp(argv[1], "--config") != 0) {
		fprintf(stderr, "usage: kv-admin --config FILE status "
		    "[--partitions [--once]] | bump-epoch TABLE PART\n");
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
	if (strcmp(argv[3], "status") == 0 && argc == 4)
		rc = status(&cfg, nodes);
	else if (strcmp(argv[3], "status") == 0 &&
	    strcmp(argv[4], "--partitions") == 0 && (argc == 5 ||
	    (argc == 6 && strcmp(argv[5], "--once") == 0)))
		rc = partitions(&cfg, nodes, argc == 6);
	else if (strcmp(argv[3], "bump-epoch") == 0 && argc == 6)
		rc = bump(nodes[0], argv[4], argv[5]);
	else
		fprintf(stderr, "kv-admin: unknown command %s\n", argv[3]);
	for (size_t i = 0; i < cfg.n_nodes; i++)
		rpc_client_close(nodes[i]);
	return rc;
}
