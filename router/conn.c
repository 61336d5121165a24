/*
 * conn.c — router-side node connections (see conn.h).
 */
#include "conn.h"

#include <string.h>

kv_err
conn_open(router *r)
{
	for (size_t i = 0; i < r->cfg.n_nodes; i++) {
		kv_err rv = rpc_client_open(r->cfg.nodes[i].url, &r->nodes[i]);
		if (rv != KV_OK)
			return rv;
	}
	return KV_OK;
}

void
conn_close(router *r)
{
	for (size_t i = 0; i < r->cfg.n_nodes; i++) {
		rpc_client_close(r->nodes[i]);
		r->nodes[i] = NULL;
	}
}

/* This thread's relay, if it has one (conn_relay_set). */
static __thread conn_relay_fn relay_fn;
static __thread void *relay_arg;

void
conn_relay_set(conn_relay_fn fn, void *arg)
{
	relay_fn = fn;
	relay_arg = arg;
}

/* Whether a relay may carry op (it never waits on anything). */
static bool
relayable(rpc_op op)
{
	/*
	 * The request path's operations: a node answers them from its own
	 * store at once. The others (catalog changes, moves, backups) may
	 * take long, and would hold up every request behind them on a
	 * shared link.
	 */
	switch (op) {
	case RPC_GET: case RPC_PUT: case RPC_DELETE: case RPC_UPDATE:
	case RPC_RANGE: case RPC_MULTI: case RPC_TXN_PREPARE:
	case RPC_TXN_FINISH: case RPC_TXN_DECIDE: case RPC_TXN_TOKEN:
		return true;
	default:
		return false;
	}
}

kv_err
conn_call(router *r, uint32_t i, const rpc_request *req, arena *a,
    rpc_response *resp)
{
	kv_err rv;
	memset(resp, 0, sizeof(*resp));
	if (i >= r->cfg.n_nodes || r->nodes[i] == NULL)
		return KV_UNAVAILABLE;
	if (relay_fn != NULL && relayable(req->op) &&
	    relay_fn(relay_arg, i, req, a, resp, &rv))
		return rv;
	memset(resp, 0, sizeof(*resp));
	return rpc_call(r->nodes[i], req, a, resp, r->call_timeout_ms);
}
