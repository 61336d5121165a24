/*
 * config.h — the cluster file: which nodes and routers make up a cluster.
 *
 * A cluster file is plain text, one setting a line, '#' starts a comment:
 *
 *   partitions 4                      default partitions of a new table
 *   node  ipc://.kv/run/node0.ipc  .kv/data/node0     (URL, data folder)
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
} config_node;

typedef struct config_router {
	char host[128];
	int port;
} config_router;

typedef struct config {
	uint32_t partitions;
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

#endif
