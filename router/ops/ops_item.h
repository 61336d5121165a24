/*
 * ops_item.h — the single-item request path, shared by the single-item
 * operations (ops_item.c) and the batch operations (ops_batch.c).
 */
#ifndef KV_OPS_ITEM_H
#define KV_OPS_ITEM_H

#include "api.h"
#include "expr.h"
#include "json.h"
#include "request_expr.h"
#include "wire.h"

/* What a single-item operation sends, besides its key. */
typedef struct item_op {
	const char *table;
	const value *v;          /* the Item (PutItem) or the Key */
	bool is_item;            /* v is a whole item */
	const expr_update *upd;  /* UpdateItem: refuse key updates */
	const char *capacity;    /* ReturnConsumedCapacity; NULL: none */
	bool metrics;            /* ReturnItemCollectionMetrics SIZE */
	rpc_request req;         /* op, item, expressions, return values */
	bool throttled;          /* set by ops_item_call: a throttle answer */
} item_op;

/*
 * ops_item_call sends op to the owner of its item's partition, refreshing
 * the catalog and retrying on stale routes. Returns true when the node
 * gave an answer for the client (KV_OK, KV_COND_FAILED or KV_EINVAL in
 * resp->code; wire_response_fini(resp) afterwards), or false after filling
 * *out (missing table, bad key, unreachable node: out's status says which;
 * a throttled request also sets op->throttled).
 */
bool ops_item_call(api_ctx *c, item_op *op, rpc_response *resp, reply *out);

/*
 * ops_item_route fills op->req's table, partition, epoch and storage key
 * from the current catalog and returns the partition's owner in *owner;
 * false after filling *out (missing table, refreshed once when *refreshed
 * was false; bad key). The batch operations route first, then send every
 * item of one node in one message. With refreshed NULL it never refreshes
 * (a network call): a table it does not find returns false with *out
 * untouched, for a caller that must not block (the event loop).
 */
bool ops_item_route(api_ctx *c, item_op *op, bool *refreshed,
    uint32_t *owner, reply *out);

/*
 * ops_item_answer sorts a node's response to op: 1 when it is an answer
 * for the client (KV_OK, KV_COND_FAILED, KV_EINVAL), 0 after filling *out
 * (a throttle also sets op->throttled), -1 for a stale route (retry after
 * route_stale). Finalises resp unless it returns 1.
 */
int ops_item_answer(api_ctx *c, item_op *op, rpc_response *resp,
    reply *out);

typedef enum item_kind { ITEM_PUT, ITEM_GET, ITEM_DELETE, ITEM_UPDATE } item_kind;

/*
 * A single-item request between its two halves: ops_item_prepare reads
 * and checks it and encodes what goes to the node; ops_item_finish turns
 * the node's answer into the reply. The sync operations run prepare,
 * ops_item_call and finish in a row; the router's event loop sends the
 * request itself in between. op points into the struct: it must not move
 * after prepare.
 */
typedef struct item_req {
	item_kind kind;
	item_op op;
	value v;            /* the Item or the Key */
	req_exprs x;
	expr_update empty;  /* UpdateItem without an update expression */
	bool consistent;    /* GetItem's ConsistentRead */
} item_req;

/* ops_item_prepare fills *ir from body (in c->a); false after filling *out. */
bool ops_item_prepare(api_ctx *c, item_kind kind, json_t *body, item_req *ir,
    reply *out);

/*
 * ops_item_finish fills *out from a response ops_item_answer took as the
 * client's answer (1), and finalises resp.
 */
void ops_item_finish(api_ctx *c, item_req *ir, rpc_response *resp,
    reply *out);

/* ops_item_encode puts v into op->req.item as codec bytes (in c->a). */
bool ops_item_encode(api_ctx *c, const value *v, item_op *op, reply *out);

/*
 * ops_index_units reads what a write to table tname cost each index
 * from the node's answer (its blobs: RPC_INDEX_UNITS_LEN bytes each) into
 * names[], ihalf[] and local[] (room for resp->n_blobs; names in c->a),
 * with the index names from the router's catalog. Returns how many.
 */
size_t ops_index_units(api_ctx *c, const char *tname,
    const rpc_response *resp, const char **names, uint64_t *ihalf,
    bool *local);

/*
 * ops_write_item writes the item in resp to t as the member `field` of
 * the object being written, projected by proj (NULL: whole); nothing when
 * there is none. False when it cannot be decoded or memory ran out.
 */
bool ops_write_item(api_ctx *c, jtext *t, const rpc_response *resp,
    const char *field, const expr_projection *proj);

/*
 * ops_collection_metrics returns the ItemCollectionMetrics of op's write
 * (a new reference) when op asked for them and its table has local
 * indexes, else NULL.
 */
json_t *ops_collection_metrics(api_ctx *c, const item_op *op,
    const rpc_response *resp);

/*
 * ops_index_name returns the name of the index of table tname that a
 * node's units blob calls id (a GSI's table, or RPC_LOCAL_INDEX_ID), and
 * whether it is local; NULL when the catalog no longer has it. Borrows
 * the catalog: needs the route's read lock.
 */
const char *ops_index_name(api_ctx *c, const char *tname, uint32_t id,
    bool *local);

#endif
