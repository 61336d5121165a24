/*
 * ops_txn.h — TransactWriteItems and TransactGetItems on the router's
 * event loop (api_async.h), one node call at a time, without a worker's
 * thread. The steps are the worker's (ops_txn.c); only the driver
 * differs.
 */
#ifndef KV_OPS_TXN_H
#define KV_OPS_TXN_H

#include "api.h"

typedef struct ops_txn_async ops_txn_async;

/*
 * ops_txn_start reads, checks and routes the request and starts the
 * commit: 1 with the first call (*req for node *owner; *sp the state, in
 * c->a), 0 with *out filled, or -1 when a worker must serve the request
 * (a ClientRequestToken, a table not in this router's catalog yet).
 */
int ops_txn_start(api_ctx *c, json_t *body, ops_txn_async **sp,
    const rpc_request **req, uint32_t *owner, reply *out);

/*
 * ops_txn_next takes the outcome of the call out (rv KV_OK with the
 * node's *resp, or the transport's error) and returns as ops_txn_start:
 * 1 with the next call, 0 with *out, -1 for a worker to start over (a
 * stale route; nothing stays prepared).
 */
int ops_txn_next(api_ctx *c, ops_txn_async *s, kv_err rv,
    rpc_response *resp, const rpc_request **req, uint32_t *owner,
    reply *out);

/*
 * Whether the call out is the first: if it was not sent, a worker may
 * serve the request from the start. After that, a call that could not
 * be sent is a call that failed (ops_txn_next with the error).
 */
bool ops_txn_restartable(const ops_txn_async *s);

/* ops_txn_abort frees what s holds, when the request is dropped. */
void ops_txn_abort(ops_txn_async *s);

/*
 * TransactGetItems: as the three above (it reads only, so a worker may
 * always start it over). -1 also for a stale route.
 */
typedef struct ops_txn_get_async ops_txn_get_async;

int ops_txn_get_start(api_ctx *c, json_t *body, ops_txn_get_async **sp,
    const rpc_request **req, uint32_t *owner, reply *out);
int ops_txn_get_next(api_ctx *c, ops_txn_get_async *s, kv_err rv,
    rpc_response *resp, const rpc_request **req, uint32_t *owner,
    reply *out);
void ops_txn_get_abort(ops_txn_get_async *s);

#endif
