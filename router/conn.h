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

#endif
