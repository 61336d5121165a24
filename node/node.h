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
#include "plant.h"
#include "rpc.h"
#include "store.h"
#include "value.h"
#include "wire.h"

#define RECORD_HEADER 4

typedef struct catalog_state catalog_state;
typedef struct cluster_state cluster_state;

/* A move into this node (move.h), one at a time. */
typedef struct move_in {
	uint64_t id; /* 0: none */
	uint32_t table_id, part_id;
	uint64_t lo, last;
	uint32_t source;
	uint64_t items, bytes; /* what the range holds here so far */
	uint64_t dirty_ack;    /* the last write-set batch applied */
	/* The last chunk copied, so that a repeated step is answered
	 * again rather than applied twice (owned; see move.c). */
	uint8_t *copy_at, *copy_next;
	size_t copy_at_len, copy_next_len;
	bool copied_any, copy_more;
	uint64_t copy_count;
	/* The copy so far, applied when the last chunk is in (store.h's
	 * sorted load); NULL before the first chunk and after the last. */
	struct store_load *load;
} move_in;

typedef struct node {
	uint32_t index; /* position in the cluster file */
	config cfg;
	store *st;
	part_map parts;
	pthread_mutex_t peers_mu; /* guards peers[] (opened lazily) */
	rpc_client *peers[CONFIG_MAX_NODES];
	catalog_state *cat; /* node 0 only, else NULL */
	cluster_state *cl;  /* the nng side: cluster.h */
	bool capacity_off;  /* --no-capacity: never throttle (to measure) */
	int64_t started_ms; /* Unix time the process started */
	pthread_mutex_t move_mu; /* guards move */
	move_in move;
	struct heat_mon *heat; /* the heat monitor (heat.h); NULL: none */
	struct index_state *gsi; /* index.h: the view, the replicator */
	struct txn_state *txn;   /* txn.h: prepared transactions */
	struct ttl_state *ttl;   /* ttl.h: the Time to Live sweep */
	plant plant; /* plant.h: a fault planted on purpose (--plant) */
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

/* The verb-specific parts of PUT, DELETE and UPDATE. */
kv_err put_new_item(const rpc_request *req, const struct expr_update *upd,
    arena *a, const value *old_item, value **new_item,
    struct expr_err *err);
kv_err delete_new_item(const rpc_request *req,
    const struct expr_update *upd, arena *a, const value *old_item,
    value **new_item, struct expr_err *err);
kv_err update_new_item(const rpc_request *req,
    const struct expr_update *upd, arena *a, const value *old_item,
    value **new_item, struct expr_err *err);

/*
 * A run of writes to one item (write.c). Writes to the same item that one
 * read of a connection brings, one after the other, are served against
 * the item as the previous one left it, in memory, and reach the store
 * as one batch when the run ends: one read of the old item and one
 * memtable insert for the run, instead of for each write. A hot item
 * (a counter) is the case this is for.
 *
 * While a run is open it holds the map's lock shared and its
 * partition's mutex, so no other write to the partition, and no change
 * of ownership, comes between its writes; reads from other connections
 * see the item as it was before the run. That is linearizable because
 * no write of the run is answered before the run ends (write_run_end)
 * and its log is flushed (server.c): the writes take effect together,
 * at the end. The server ends a run before any request that is not a
 * write to the same item (write_run_takes), before replies go out, and
 * when the connection goes.
 *
 * If the process dies during a run, none of its writes is in the store,
 * and none was answered. If the batch cannot be written, none is
 * applied, and the caller must drop the connection without sending the
 * replies, so that their outcome is unknown to the client, as with a log
 * flush that fails.
 */
typedef struct write_run {
	part *p; /* NULL: no run */
	uint32_t table_id, part_id;
	uint64_t epoch;
	uint8_t *key; /* owned */
	size_t key_len;
	uint8_t *rec; /* the item's record as the run left it; NULL: none */
	size_t rec_len;
	uint64_t items, bytes; /* the partition's counters after the run */
	bool dirty;            /* rec differs from the store */
} write_run;

/* write_run_init makes r an empty run. */
void write_run_init(write_run *r);

/* write_run_takes says whether req continues r (a write to its item). */
bool write_run_takes(const write_run *r, const rpc_request *req);

/*
 * write_run_end writes what r changed in one batch, releases its locks
 * and empties it. KV_OK (also for an empty run), or the store's error,
 * with nothing of the run applied (see above).
 */
kv_err write_run_end(node *n, write_run *r);

/*
 * write_serve runs the shared write path (route check, partition lock,
 * condition, fn, size limit, batch, return values) for PUT, DELETE and
 * UPDATE. With run NULL the write is in the store when it returns; with
 * a run, the write opens it or continues it (write_run_takes must hold
 * for an open one), and reaches the store when it ends.
 */
void write_serve(node *n, const rpc_request *req, arena *a,
    rpc_response *resp, write_fn fn, write_run *run);

/*
 * write_commit writes item key's new record rec (NULL: the item is
 * deleted) over old_v (NULL: none; old_size its size), with the index
 * records and local index entries of t (NULL: a table without indexes)
 * and whatever b already holds, in one batch, and sets p's counters;
 * p's mutex is held. For a transaction's commit (node/txn.h), whose
 * checks were made when it was prepared. KV_OK or the store's error,
 * with nothing applied.
 */
struct table;
kv_err write_commit(node *n, part *p, const struct table *t,
    const uint8_t *key, size_t key_len, const value *old_v,
    uint32_t old_size, const value *new_v, const uint8_t *rec,
    size_t rec_len, arena *a, store_batch *b);

/* One item's change, as write_commit takes it. */
typedef struct write_change {
	part *p;
	const struct table *t;
	const uint8_t *key;
	size_t key_len;
	const value *old_v;
	uint32_t old_size;
	const value *new_v;
	const uint8_t *rec;
	size_t rec_len;
} write_change;

/*
 * write_commits is write_commit for the changes cs[0..nc) at once, in
 * one batch with what b holds (each change's partition mutex held): a
 * transaction's keeper commits its share with its decision. Two changes
 * in one item collection of a table with local indexes would each read
 * the collection's size as the store has it: the caller keeps them
 * apart.
 */
kv_err write_commits(node *n, const write_change *cs, size_t nc, arena *a,
    store_batch *b);

/* A verb's server: fills resp (strings and bytes in a). */
typedef void (*verb_fn)(node *n, const rpc_request *req, arena *a,
    rpc_response *resp);

void get_serve(node *n, const rpc_request *req, arena *a,
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

/*
 * node_dispatch_run is node_dispatch with a connection's write run: a
 * single-item write joins it (see write_run). The caller ends the run
 * before a request that write_run_takes refuses.
 */
void node_dispatch_run(node *n, const rpc_request *req, arena *a,
    rpc_response *resp, write_run *run);

/* record_size reads the item size from a stored record (len >= 4). */
static inline uint32_t
record_size(const uint8_t *rec)
{
	/* The top bit marks an index entry's record (index.h). */
	return (uint32_t) rec[0] | (uint32_t) rec[1] << 8 |
	    (uint32_t) rec[2] << 16 | (uint32_t) (rec[3] & 0x7F) << 24;
}

#endif
