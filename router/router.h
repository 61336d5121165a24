/*
 * router.h — one router process: its view of the cluster and the request
 * entry point. http.c feeds requests to api.c, which dispatches them to
 * ops_table.c (control plane) and ops_item.c (single items); route.c keeps
 * the catalog snapshot and conn.c talks to nodes.
 */
#ifndef KV_ROUTER_H
#define KV_ROUTER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "rpc.h"

typedef struct route_snapshot route_snapshot;

/* The operations api.c serves, for per-operation counters. */
#define API_N_OPS 29

/* Answers of one operation, by outcome (relaxed atomics; for /metrics). */
typedef struct api_counters {
	atomic_uint_fast64_t requests;
	atomic_uint_fast64_t throttled;     /* throttling exceptions */
	atomic_uint_fast64_t client_errors; /* other 4xx */
	atomic_uint_fast64_t server_errors; /* 5xx */
} api_counters;

typedef struct router {
	config cfg;
	char listen[160];  /* host:port this router serves, for GET / */
	rpc_client *nodes[CONFIG_MAX_NODES];
	route_snapshot *snap; /* RCU-protected; see route.h */
	int call_timeout_ms;
	bool no_ring;      /* each write alone, not through io_uring (http.c) */
	bool nng_requests; /* the loop's node frames over nng (nframe.h) */
	api_counters counters[API_N_OPS]; /* indexed as api.c's ops[] */
	uint32_t index;    /* its line among the cluster file's routers */
	int64_t started_ms; /* Unix time the process started */
	atomic_uint_fast32_t open_conns; /* client connections (relaxed) */
	int txn_fault;     /* --txn-fault: ROUTER_FAULT_*, 0: none */
	struct auth_keys *auth; /* --auth: SigV4 required (auth.h); NULL: not */
	/* The front door's limits (http.c): seconds a request may take to
	 * arrive whole, and client connections at once. */
	int request_seconds;
	uint32_t max_connections;
} router;

#define ROUTER_FAULT_PREPARED 1 /* die once a transaction is prepared */
#define ROUTER_FAULT_DECIDED 2  /* die once its COMMIT is recorded */

/* An HTTP answer: status and an owned JSON body (free with free()). */
typedef struct reply {
	int status;
	char *body;
	size_t len;
} reply;

#endif
