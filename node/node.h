/*
 * node.h — one storage node: its store, its partitions, its peers, and
 * (on node 0) the catalog. main.c builds one; server.c feeds it requests;
 * each wire verb is served by the file of the same name (get.c, put.c,
 * delete.c, assign.c, drop_table.c, stats.c, catalog.c).
 *
 * Stored item record (value of an item's storage key):
 *   OFFSET  SIZE  FIELD
 *   0       4     DynamoDB item size (item.h), little-endian
 *   4       var   the item in codec.h form
 * The size is kept so that deletes and overwrites adjust the partition's
 * byte count without decoding the old item.
 */
#ifndef KV_NODE_H
#define KV_NODE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "arena.h"
#include "config.h"
#include "part.h"
#include "rpc.h"
#include "store.h"
#include "value.h"
#include "wire.h"

#define RECORD_HEADER 4

typedef struct catalog_state catalog_state;

typedef struct node {
	uint32_t index; /* position in the cluster file */
	config cfg;
	store *st;
	part_map parts;
	pthread_mutex_t peers_mu; /* guards peers[] (opened lazily) */
	rpc_client *peers[CONFIG_MAX_NODES];
	catalog_state *cat; /* node 0 only, else NULL */
	bool capacity_off;  /* --no-capacity: never throttle (to measure) */
} node;

/*
 * The verb-specific part of a single-item write (write.c): given the
 * request, its decoded update (UPDATE only, else NULL) and the old item
 * (NULL when absent), sets *new_item to the item to store, or to NULL to
 * delete it. Returns KV_OK, or an error with err->msg set when it is
 * DynamoDB's message for the client (KV_EINVAL), or KV_PROTO/KV_ENOMEM.
 */
struct expr_update;
struct expr_err;
typedef kv_err (*write_fn)(const rpc_request *req,
    const struct expr_update *upd, arena *a, const value *old_item,
    value **new_item, struct expr_err *err);

/*
 * write_serve runs the shared write path (route check, partition lock,
 * condition, fn, size limit, batch, return values) for PUT, DELETE and
 * UPDATE.
 */
void write_serve(node *n, const rpc_request *req, arena *a,
    rpc_response *resp, write_fn fn);

/* A verb's server: fills resp (strings and bytes in a). */
typedef void (*verb_fn)(node *n, const rpc_request *req, arena *a,
    rpc_response *resp);

void get_serve(node *n, const rpc_request *req, arena *a,
    rpc_response *resp);
void put_serve(node *n, const rpc_request *req, arena *a,
    rpc_response *resp);
void delete_serve(node *n, const rpc_request *req, arena *a,
    rpc_response *resp);
void update_serve(node *n, const rpc_request *req, arena *a,
    rpc_response *resp);
void range_serve(node *n, const rpc_request *req, arena *a,
    rpc_response *resp);
void assign_serve(node *n, const rpc_request *req, arena *a,
    rpc_response *resp);
void drop_table_serve(node *n, const rpc_request *req, arena *a,
    rpc_response *resp);
void stats_serve(node *n, const rpc_request *req, arena *a,
    rpc_response *resp);
void multi_serve(node *n, const rpc_request *req, arena *a,
    rpc_response *resp);

/*
 * node_peer returns the client for node i, opening it on first use, or NULL
 * when it cannot be opened. Valid until the node shuts down. Thread-safe.
 */
rpc_client *node_peer(node *n, uint32_t i);

/* node_dispatch serves one request by its verb. Thread-safe. */
void node_dispatch(node *n, const rpc_request *req, arena *a,
    rpc_response *resp);

/* record_size reads the item size from a stored record (len >= 4). */
static inline uint32_t
record_size(const uint8_t *rec)
{
	return (uint32_t) rec[0] | (uint32_t) rec[1] << 8 |
	    (uint32_t) rec[2] << 16 | (uint32_t) rec[3] << 24;
}

#endif
