/*
 * node.c — the node's dispatch table and its connections to peers.
 */
#include "node.h"

#include "backup.h"
#include "catalog_node.h"
#include "heat.h"
#include "index.h"
#include "move.h"
#include "txn.h"
#include "throttle.h"

rpc_client *
node_peer(node *n, uint32_t i)
{
	rpc_client *c = NULL;
	if (i >= n->cfg.n_nodes)
		return NULL;
	pthread_mutex_lock(&n->peers_mu);
	if (n->peers[i] == NULL &&
	    rpc_client_open(n->cfg.nodes[i].url, &n->peers[i]) != KV_OK)
		n->peers[i] = NULL;
	c = n->peers[i];
	pthread_mutex_unlock(&n->peers_mu);
	return c;
}

static void
ping_serve(node *n, const rpc_request *req, arena *a, rpc_response *resp)
{
	resp->code = KV_OK;
}

void
node_dispatch(node *n, const rpc_request *req, arena *a, rpc_response *resp)
{
	node_dispatch_run(n, req, a, resp, NULL);
}

void
node_dispatch_run(node *n, const rpc_request *req, arena *a,
    rpc_response *resp, write_run *run)
{
	verb_fn fn = NULL;
	switch (req->op) {
	case RPC_PUT:
		write_serve(n, req, a, resp, put_new_item, run);
		return;
	case RPC_DELETE:
		write_serve(n, req, a, resp, delete_new_item, run);
		return;
	case RPC_UPDATE:
		write_serve(n, req, a, resp, update_new_item, run);
		return;
	case RPC_PING: fn = ping_serve; break;
	case RPC_GET: fn = get_serve; break;
	case RPC_RANGE: fn = range_serve; break;
	case RPC_CATALOG_GET: fn = catalog_node_get; break;
	case RPC_CREATE_TABLE: fn = catalog_node_create; break;
	case RPC_DELETE_TABLE: fn = catalog_node_delete; break;
	case RPC_ASSIGN: fn = assign_serve; break;
	case RPC_DROP_TABLE: fn = drop_table_serve; break;
	case RPC_STATS: fn = stats_serve; break;
	case RPC_BUMP_EPOCH: fn = catalog_node_bump; break;
	case RPC_UPDATE_TABLE: fn = catalog_node_update; break;
	case RPC_MULTI: fn = multi_serve; break;
	case RPC_FEED_FAULT: fn = catalog_node_fault; break;
	case RPC_SPLIT:
	case RPC_SPLIT_ASK: fn = reshape_split; break;
	case RPC_MOVE: fn = reshape_move; break;
	case RPC_NODE: fn = reshape_node; break;
	case RPC_EVENTS: fn = reshape_events; break;
	case RPC_HOT_KEYS: fn = hot_keys_serve; break;
	case RPC_BORROW: fn = borrow_serve; break;
	case RPC_INDEX_APPLY: fn = index_apply_serve; break;
	case RPC_INDEX_UPDATE: fn = catalog_node_index; break;
	case RPC_TTL_UPDATE: fn = catalog_node_ttl; break;
	case RPC_TAGS: fn = catalog_node_tags; break;
	case RPC_BACKUP: fn = catalog_backup_serve; break;
	case RPC_BACKUP_TAKE:
	case RPC_BACKUP_RESTORE:
	case RPC_BACKUP_DROP: fn = backup_serve; break;
	case RPC_INDEX_BACKFILL: fn = index_backfill_serve; break;
	case RPC_INDEX_COLLECT: fn = index_collect_serve; break;
	case RPC_TXN_PREPARE: fn = txn_prepare_serve; break;
	case RPC_TXN_FINISH: fn = txn_finish_serve; break;
	case RPC_TXN_DECIDE: fn = txn_decide_serve; break;
	case RPC_TXN_TOKEN: fn = txn_token_serve; break;
	case RPC_CHECK: break; /* inside RPC_TXN_PREPARE only */
	case RPC_MOVE_BEGIN:
	case RPC_MOVE_PULL:
	case RPC_MOVE_DIRTY:
	case RPC_MOVE_FENCE:
	case RPC_MOVE_END:
	case RPC_MOVE_STEP: fn = move_serve; break;
	}
	if (fn == NULL) {
		resp->code = KV_PROTO;
		return;
	}
	fn(n, req, a, resp);
}
