/*
 * multi.c — RPC_MULTI: several single-item requests for this node in one
 * message (a batch's items, grouped by owner), served in order, each as
 * if it had come alone: its own route check, throttle and answer. One
 * message instead of one per item saves the round trips and wake-ups
 * that dominate a batch. Only GET, PUT and DELETE may be inside, so a
 * MULTI never nests and never waits on another node.
 */
#include <stdlib.h>
#include <string.h>

#include "node.h"

void
multi_serve(node *n, const rpc_request *req, arena *a, rpc_response *resp)
{
	resp->subs = arena_alloc(a, (req->n_subs + 1) * sizeof(*resp->subs));
	resp->sub_lens = arena_alloc(a, (req->n_subs + 1) *
	    sizeof(*resp->sub_lens));
	if (resp->subs == NULL || resp->sub_lens == NULL) {
		resp->code = KV_ENOMEM;
		return;
	}
	resp->code = KV_OK;
	for (size_t i = 0; i < req->n_subs; i++) {
		rpc_request sub;
		rpc_response out;
		uint8_t *buf = NULL;
		size_t len = 0;

		memset(&out, 0, sizeof(out));
		kv_err rv = wire_unpack_request(req->subs[i], req->sub_lens[i],
		    a, &sub);
		if (rv == KV_OK && sub.op != RPC_GET && sub.op != RPC_PUT &&
		    sub.op != RPC_DELETE)
			rv = KV_PROTO;
		if (rv == KV_OK)
			node_dispatch(n, &sub, a, &out);
		else
			out.code = rv;
		wire_request_fini(&sub);
		rv = wire_pack_response(&out, &buf, &len);
		wire_response_fini(&out);
		if (rv != KV_OK) {
			resp->code = rv;
			return;
		}
		resp->subs[i] = (const uint8_t *) arena_dup(a, (char *) buf,
		    len);
		resp->sub_lens[i] = len;
		free(buf);
		if (resp->subs[i] == NULL && len > 0) {
			resp->code = KV_ENOMEM;
			return;
		}
		if (resp->subs[i] == NULL)
			resp->subs[i] = (const uint8_t *) "";
		resp->n_subs = i + 1;
	}
}
