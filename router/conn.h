/*
 * conn.h — the router's connections to its nodes (one rpc_client each,
 * opened at start, shared by every thread).
 */
#ifndef KV_CONN_H
#define KV_CONN_H

#include "router.h"
#include "wire.h"

/* conn_open opens a client for every node of r->cfg. KV_OK or an error. */
kv_err conn_open(router *r);

/* conn_close closes them all. */
void conn_close(router *r);

/*
 * conn_call sends req to node i with the router's deadline. Returns what
 * rpc_call returns; after KV_OK, call wire_response_fini(resp).
 */
kv_err conn_call(router *r, uint32_t i, const rpc_request *req, arena *a,
    rpc_response *resp);

/*
 * A relay carries the calling thread's conn_call another way: the HTTP
 * loop's node links, for its workers (http.c), where a node reads many
 * requests per wake-up instead of one per connection. It returns false
 * when it did not send req (nothing reached the node: conn_call then
 * calls through its own client), else true with conn_call's outcome in
 * *rv and *resp. Only the request path's quick operations go through
 * it. conn_relay_set(NULL, NULL) ends it. Per thread.
 */
typedef bool (*conn_relay_fn)(void *arg, uint32_t node,
    const rpc_request *req, arena *a, rpc_response *resp, kv_err *rv);
void conn_relay_set(conn_relay_fn fn, void *arg);

#endif
