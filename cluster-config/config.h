/*
 * config.h — the cluster file: which nodes and routers make up a cluster.
 *
 * A cluster file is plain text, one setting a line, '#' starts a comment:
 *
 *   partitions 4                      default partitions of a new table
 *   partition-rcu 3000                read ceiling of one partition (RCU/s)
 *   partition-wcu 1000                write ceiling of one partition (WCU/s)
 *   burst-seconds 300                 unused capacity kept as burst credit
 *   split-after-seconds 300           a partition this long above the
 *                                     split threshold splits (0: never)
 *   split-threshold 0.8               that share of its ceiling
 *   split-size-mb 10240               a partition above this size splits
 *                                     at its median (0: never)
 *   gsi-delay-ms 0                    every index record waits at least
 *                                     this long before it is sent, to
 *                                     test against an index behind
 *   gsi-collect-seconds 30            the catalog node's rounds that
 *                                     delete index tombstones no record
 *                                     can still need start this often
 *                                     (0: never; node/index.h)
 *   item-collection-kb 10485760       an item collection of a table with
 *                                     local indexes grows no larger
 *                                     (DynamoDB's 10 GB)
 *   ttl-sweep-ms 10000                each node looks for expired items
 *                                     (Time to Live) this often
 *   memory-mb 384                     each node's memory budget, shared
 *                                     by its store's block cache and
 *                                     memtables and its size index
 *                                     (node/store/store.h)
 *   node  ipc://.kv/run/node0.ipc  .kv/data/node0  [127.0.0.1:9100]
 *         [bus=URL] [standby]         (URL of its request server, data
 *                                     folder, and optionally where it
 *                                     serves GET /metrics and the base of
 *                                     its nng addresses, see below; a
 *                                     standby node takes no partition
 *                                     until it is added to the running
 *                                     cluster: ./kv node add N)
 *   router 127.0.0.1:8000 [bus=URL]   (HTTP listen address, and where it
 *                                     answers surveys)
 *
 * Nodes are numbered in file order from 0; node 0 hosts the catalog.
 * Routers are numbered in file order from 0 too; several may share one
 * HTTP address (the port is opened with SO_REUSEPORT). An address may be
 * IPv6 in brackets: router [::1]:8000, tcp://[::1]:7000.
 *
 * The cluster's nng traffic (proto/bus.h) uses addresses derived from a
 * base URL, config_bus_url: ipc://P gives ipc://P.peer, ipc://P.survey
 * and ipc://P.feed; tcp://H:N gives ports N, N+1 and N+2 of H. A node's
 * base defaults to its own URL, with the port moved up by one for TCP
 * (tcp://H:7000 serves requests on 7000 and nng on 7001-7003); a router
 * has nng addresses only if its line gives bus=. Two uses of one address
 * are an error. (A fourth address, ipc://P.requests or port N+3 of the
 * base, is used only by nodes started with --nng-requests, to measure
 * the request path over nng; it is not checked.)
 * Relative paths are relative to the folder the processes run in (./kv runs
 * them from the repository root). The same file is read by ./kv (bash).
 */
#ifndef KV_CONFIG_H
#define KV_CONFIG_H

#include <stdbool.h>
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
	char bus[256];          /* base of its nng addresses */
	bool standby;           /* takes partitions only once added */
} config_node;

typedef struct config_router {
	char host[128]; /* an IPv6 address without its brackets */
	int port;
	char bus[256];  /* base of its nng addresses; "": none */
} config_router;

/* The nng addresses derived from a bus base (config_bus_url). */
typedef enum config_bus {
	CONFIG_BUS_PEER = 0,   /* a node's node-to-node messages (peer.h) */
	CONFIG_BUS_SURVEY = 1, /* surveys, on nodes and routers (survey.h) */
	CONFIG_BUS_FEED = 2,   /* the catalog feed, on node 0 (feed.h) */
	CONFIG_BUS_REQUESTS = 3, /* requests over nng, only with
	                          * --nng-requests (nframe.h) */
} config_bus;

#define CONFIG_PARTITION_RCU 3000 /* DynamoDB's per-partition ceilings */
#define CONFIG_PARTITION_WCU 1000
#define CONFIG_BURST_SECONDS 300

typedef struct config {
	uint32_t partitions;
	uint64_t partition_rcu, partition_wcu; /* ceilings, units per second */
	uint32_t burst_seconds;
	uint32_t split_after_s;     /* 0: no splits for heat */
	double split_threshold;     /* share of the ceiling that is hot */
	uint64_t split_size_bytes;  /* 0: no splits for size */
	uint32_t gsi_delay_ms;      /* index records held back at least */
	uint32_t gsi_collect_s;     /* tombstone collection's period */
	uint64_t collection_max;    /* bytes of one item collection (LSIs) */
	uint32_t ttl_sweep_ms;      /* Time to Live: the sweeps' period */
	uint32_t memory_mb;         /* a node's memory budget */
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
 * config_bus_url writes the address `which` of the bus base `base` into
 * out[0..outlen) (see the file format above). KV_OK, or KV_EINVAL when
 * base is empty or not ipc:// or tcp://HOST:PORT, or out is too small.
 */
kv_err config_bus_url(const char *base, config_bus which, char *out,
    size_t outlen);

/*
 * config_host_port writes "host:port" into out, with brackets around an
 * IPv6 host ("[::1]:8000"), as URLs and the health answer show it.
 */
void config_host_port(const char *host, int port, char *out, size_t outlen);

/*
 * config_number reads a decimal integer (digits only) into *out; KV_EINVAL
 * for anything else, for the cluster file and command-line overrides.
 */
kv_err config_number(const char *s, uint64_t *out);

/*
 * config_split_option applies one of the node tuning settings (key
 * "split-after-seconds", "split-threshold", "split-size-mb",
 * "gsi-delay-ms", "gsi-collect-seconds", "item-collection-kb" or
 * "ttl-sweep-ms", with or
 * without leading dashes) to c: KV_OK, or
 * KV_EINVAL for another key or a bad value. For the cluster file and the
 * nodes' command lines.
 */
kv_err config_split_option(config *c, const char *key, const char *val);

#define CONFIG_SPLIT_AFTER_S 300
#define CONFIG_TTL_SWEEP_MS 10000
#define CONFIG_GSI_COLLECT_S 30
#define CONFIG_MEMORY_MB 384
#define CONFIG_SPLIT_THRESHOLD 0.8
#define CONFIG_SPLIT_SIZE_MB 10240
#define CONFIG_COLLECTION_KB (10ull << 20) /* 10 GB */

#endif
