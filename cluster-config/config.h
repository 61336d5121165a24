/*
 * config.h — the cluster file: which nodes and routers make up a cluster.
 *
 * A cluster file is plain text, one setting a line, '#' starts a comment:
 *
 *   partitions 4                      default partitions of a new table
 *   partition-rcu 3000                read ceiling of one partition (RCU/s)
 *   partition-wcu 1000                write ceiling of one partition (WCU/s)
 *   burst-seconds 300                 unused capacity kept as burst credit
 *   node  ipc://.kv/run/node0.ipc  .kv/data/node0  [127.0.0.1:9100]
 *                                     (URL, data folder, and optionally
 *                                     where it serves GET /metrics)
 *   router 127.0.0.1:8000             (HTTP listen address)
 *
 * Nodes are numbered in file order from 0; node 0 hosts the catalog.
 * Relative paths are relative to the folder the processes run in (./kv runs
 * them from the repository root). The same file is read by ./kv (bash).
 */
#ifndef KV_CONFIG_H
#define KV_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

#define CONFIG_MAX_NODES 64
#define CONFIG_MAX_ROUTERS 16

typedef struct config_node {
	char url[256];
	char data[512];
	char metrics_host[128]; /* "" when the node serves no /metrics */
	int metrics_port;
} config_node;

typedef struct config_router {
	char host[128];
	int port;
} config_router;

#define CONFIG_PARTITION_RCU 3000 /* DynamoDB's per-partition ceilings */
#define CONFIG_PARTITION_WCU 1000
#define CONFIG_BURST_SECONDS 300

typedef struct config {
	uint32_t partitions;
	uint64_t partition_rcu, partition_wcu; /* ceilings, units per second */
	uint32_t burst_seconds;
	config_node nodes[CONFIG_MAX_NODES];
	size_t n_nodes;
	config_router routers[CONFIG_MAX_ROUTERS];
	size_t n_routers;
} config;

/*
 * config_load reads the cluster file at path into *c. Returns KV_OK, KV_IO
 * when it cannot be read, or KV_EINVAL with a line-numbered reason in
 * why[0..whylen) when it is malformed.
 */
kv_err config_load(const char *path, config *c, char *why, size_t whylen);

/*
 * config_number reads a decimal integer (digits only) into *out; KV_EINVAL
 * for anything else, for the cluster file and command-line overrides.
 */
kv_err config_number(const char *s, uint64_t *out);

#endif
