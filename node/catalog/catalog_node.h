/*
 * catalog_node.h — the catalog, as hosted by node 0: the verbs routers call
 * to read and change it, and the worker that makes owners act on changes.
 * The catalog structures themselves are in core/catalog.h.
 */
#ifndef KV_CATALOG_NODE_H
#define KV_CATALOG_NODE_H

#include "err.h"
#include "wire.h"

typedef struct node node;

/*
 * catalog_node_open loads the catalog from n's store (an empty one on first
 * start), opens its feed (proto/feed.h) on node 0's bus address, when the
 * cluster file gives one, and starts the worker. Returns KV_OK, KV_IO
 * (also: the feed's address cannot be bound), KV_CORRUPT or KV_ENOMEM.
 * Call once, before serving requests.
 */
kv_err catalog_node_open(node *n);

/* catalog_node_close stops the worker and frees the catalog. */
void catalog_node_close(node *n);

/*
 * catalog_node_running says whether node i may be running: one of the
 * cluster file's nodes not on standby, or a standby node once added
 * (drained or not: a drained node still sends what its outbox holds).
 */
bool catalog_node_running(node *n, uint32_t i);

/*
 * The verbs. Each fills resp; resp->cat and resp->table are owned by resp
 * (the server frees them with wire_response_fini after packing).
 *   get:    the whole catalog.
 *   create: req->table (name, keys, attribute definitions, billing) is
 *           added as CREATING; KV_TABLE_EXISTS if the name is taken.
 *   delete: the table named req->table_name becomes DELETING; KV_NO_TABLE,
 *           or KV_IN_USE (message "CREATING" or "DELETING").
 *   bump:   partition req->part of req->table_name gets epoch + 1, and its
 *           owner is told; KV_NO_TABLE or KV_EINVAL (no such partition).
 *   update: the table named req->table->name takes req->table's billing
 *           mode and throughput and becomes UPDATING until every owner
 *           has heard; KV_NO_TABLE, KV_IN_USE (message: the status),
 *           KV_EINVAL (message: nothing would change) or KV_BUSY
 *           (message: the daily quota of decreases is used up).
 */
void catalog_node_get(node *n, const rpc_request *req, arena *a,
    rpc_response *resp);
void catalog_node_create(node *n, const rpc_request *req, arena *a,
    rpc_response *resp);
void catalog_node_delete(node *n, const rpc_request *req, arena *a,
    rpc_response *resp);
void catalog_node_bump(node *n, const rpc_request *req, arena *a,
    rpc_response *resp);
void catalog_node_update(node *n, const rpc_request *req, arena *a,
    rpc_response *resp);

/*
 * catalog_node_index (RPC_INDEX_UPDATE): a change of one global index of
 * the ACTIVE table req->table->name, whose req->table->indexes[0] names
 * it (limit RPC_INDEX_*):
 *   create: adds the index and its table, CREATING and backfilling; the
 *           worker fills it from the base partitions (index.h) and then
 *           clears backfilling. req->table->attr_defs add to the table's.
 *   delete: drops the index from the table and makes its table DELETING.
 *   throughput: gives the index's table rcu and wcu (UPDATING until the
 *           owners have heard).
 *   pause, resume: holds or lets go the index's replication (the
 *           records wait in the base nodes' outboxes meanwhile).
 * KV_NO_TABLE (message "index" when the table has no such index),
 * KV_IN_USE (the table's status), KV_EINVAL (message: an index of that
 * name exists), KV_BUSY (message: another index is being created or
 * deleted: one at a time, as DynamoDB).
 */
void catalog_node_index(node *n, const rpc_request *req, arena *a,
    rpc_response *resp);

/*
 * catalog_node_ttl (RPC_TTL_UPDATE): turns Time to Live on for the ACTIVE
 * table req->table->name with attribute req->table->ttl_attr, or off
 * (ttl_attr NULL). KV_EINVAL with DynamoDB's message when it is on (or
 * off) already; KV_NO_TABLE, KV_IN_USE as catalog_node_index.
 */
void catalog_node_ttl(node *n, const rpc_request *req, arena *a,
    rpc_response *resp);

/*
 * catalog_node_tags (RPC_TAGS): sets (RPC_TAGS_SET: a key's value is
 * replaced, a new key is added after the others) or removes (by key;
 * absent keys are no error) the tags req->table carries on the table of
 * its name (any status but DELETING). KV_EINVAL with a message when the
 * table would hold more than TABLE_MAX_TAGS; KV_NO_TABLE.
 */
void catalog_node_tags(node *n, const rpc_request *req, arena *a,
    rpc_response *resp);

/*
 * catalog_node_fault (RPC_FEED_FAULT): req->table_name "drop" loses the
 * next req->limit changes on the feed, "disconnect" closes the feed for
 * req->limit ms (feed.h); for tests and chaos experiments. KV_EINVAL for
 * another name, KV_UNAVAILABLE without a feed.
 */
void catalog_node_fault(node *n, const rpc_request *req, arena *a,
    rpc_response *resp);

/*
 * Adaptive capacity on the catalog node (reshape.c): RPC_SPLIT and
 * RPC_SPLIT_ASK, RPC_MOVE (answers when the move is done or undone),
 * RPC_EVENTS; and the splits' and moves' counters for /metrics.
 */
void reshape_split(node *n, const rpc_request *req, arena *a,
    rpc_response *resp);
void reshape_move(node *n, const rpc_request *req, arena *a,
    rpc_response *resp);
void reshape_events(node *n, const rpc_request *req, arena *a,
    rpc_response *resp);
void reshape_node(node *n, const rpc_request *req, arena *a,
    rpc_response *resp);
#include <stdio.h>
void reshape_write_metrics(node *n, FILE *f);

/*
 * reshape_borrow: from one survey of the nodes' partition counters (the
 * health view's, once a second), the rates the hungry partitions of
 * PROVISIONED tables may borrow from their table's unused units, sent to
 * their owners (RPC_BORROW). res[i] answers targets[i].
 */
struct survey_target;
struct survey_result;
void reshape_borrow(node *n, const struct survey_target *targets,
    const struct survey_result *res, size_t count);

/* catalog_node_version: the current catalog's version. Node 0 only. */
uint64_t catalog_node_version(node *n);

#endif
