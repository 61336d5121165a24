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
#include "txn.h"

/*
 * The reads of TransactGetItems's first round (GETs with RPC_TXN_READ)
 * are checked again once all are read: each item's stamp still the one
 * its read took, and the item not locked. Then every item of the MULTI
 * held its value from its own read to that moment, so the router need
 * not check the last node it reads in the second round (ops_txn.c).
 * A read that fails the check answers "locked".
 */
static void
recheck_reads(node *n, const rpc_request *subs, rpc_response *outs,
    size_t k)
{
	for (size_t i = 0; i < k; i++)
		if (subs[i].op == RPC_GET && subs[i].txn == RPC_TXN_READ &&
		    outs[i].code == KV_OK && !outs[i].locked)
			outs[i].locked = !store_stamp_same(n->st, subs[i].key,
			    subs[i].key_len, outs[i].seq) ||
			    txn_locked(n, subs[i].key, subs[i].key_len);
}

void
multi_serve(node *n, const rpc_request *req, arena *a, rpc_response *resp)
{
	size_t k = req->n_subs;
	rpc_request *subs = arena_alloc(a, (k + 1) * sizeof(*subs));
	rpc_response *outs = arena_alloc(a, (k + 1) * sizeof(*outs));
	resp->subs = arena_alloc(a, (k + 1) * sizeof(*resp->subs));
	resp->sub_lens = arena_alloc(a, (k + 1) * sizeof(*resp->sub_lens));
	if (resp->subs == NULL || resp->sub_lens == NULL || subs == NULL ||
	    outs == NULL) {
		resp->code = KV_ENOMEM;
		return;
	}
	resp->code = KV_OK;
	memset(outs, 0, (k + 1) * sizeof(*outs));
	memset(subs, 0, (k + 1) * sizeof(*subs));
	for (size_t i = 0; i < k; i++) {
		kv_err rv = wire_unpack_request(req->subs[i], req->sub_lens[i],
		    a, &subs[i]);
		if (rv == KV_OK && subs[i].op != RPC_GET &&
		    subs[i].op != RPC_PUT && subs[i].op != RPC_DELETE)
			rv = KV_PROTO;
		if (rv == KV_OK)
			node_dispatch(n, &subs[i], a, &outs[i]);
		else
			outs[i].code = rv;
	}
	recheck_reads(n, subs, outs, k);
	for (size_t i = 0; i < k; i++) {
		uint8_t *buf = NULL;
		size_t len = 0;
		kv_err rv = resp->code == KV_OK ?
		    wire_pack_response(&outs[i], &buf, &len) : KV_OK;
		if (resp->code == KV_OK && rv == KV_OK) {
			resp->subs[i] = (const uint8_t *) arena_dup(a,
			    (char *) buf, len);
			resp->sub_lens[i] = len;
			if (resp->subs[i] == NULL && len > 0)
				rv = KV_ENOMEM;
			else if (resp->subs[i] == NULL)
				resp->subs[i] = (const uint8_t *) "";
			if (rv == KV_OK)
				resp->n_subs = i + 1;
		}
		free(buf);
		if (rv != KV_OK)
			resp->code = rv;
		wire_response_fini(&outs[i]);
		wire_request_fini(&subs[i]);
	}
}
