/*
 * admin.c — kv-admin, the cluster's operator tool: reads the cluster file
 * and talks to the nodes directly over the wire protocol.
 *
 *   kv-admin --config FILE status         nodes, tables, partitions (the
 *                                         catalog's epoch and the one the
 *                                         owner holds)
 *   kv-admin --config FILE bump-epoch TABLE PART
 *                                         raise a partition's epoch (tests
 *                                         routers' stale-route handling)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "rpc.h"

#define TIMEOUT_MS 5000 /* generous: a loaded node is slow, not gone */

static const char *
status_name(table_status s)
{
	return s == TABLE_CREATING ? "CREATING" :
	    s == TABLE_DELETING ? "DELETING" : "ACTIVE";
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
		fprintf(stderr, "usage: kv-admin --config FILE status | "
		    "bump-epoch TABLE PART\n");
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
	if (strcmp(argv[3], "status") == 0)
		rc = status(&cfg, nodes);
	else if (strcmp(argv[3], "bump-epoch") == 0 && argc == 6)
		rc = bump(nodes[0], argv[4], argv[5]);
	else
		fprintf(stderr, "kv-admin: unknown command %s\n", argv[3]);
	for (size_t i = 0; i < cfg.n_nodes; i++)
		rpc_client_close(nodes[i]);
	return rc;
}
