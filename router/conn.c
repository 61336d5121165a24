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

kv_err
conn_call(router *r, uint32_t i, const rpc_request *req, arena *a,
    rpc_response *resp)
{
	memset(resp, 0, sizeof(*resp));
	if (i >= r->cfg.n_nodes || r->nodes[i] == NULL)
		return KV_UNAVAILABLE;
	return rpc_call(r->nodes[i], req, a, resp, r->call_timeout_ms);
}
