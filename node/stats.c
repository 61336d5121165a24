/*
 * stats.c — RPC_STATS: item counts and sizes of this node's partitions of
 * one table (table_id 0: of every table), with their capacity counters,
 * for DescribeTable, kv-admin status and the routers' /metrics.
 */
#include "node.h"
#include "throttle.h"

void
stats_serve(node *n, const rpc_request *req, arena *a, rpc_response *resp)
{
	pthread_rwlock_rdlock(&n->parts.lock);
	resp->stats = arena_alloc(a, (n->parts.n + 1) * sizeof(part_stats));
	if (resp->stats == NULL) {
		resp->code = KV_ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n->parts.n; i++) {
		part *p = n->parts.p[i];
		if (req->table_id != 0 && p->table_id != req->table_id)
			continue;
		pthread_mutex_lock(&p->mu);
		resp->stats[resp->n_stats++] = (part_stats) {
			.table_id = p->table_id, .part = p->id,
			.epoch = p->epoch, .items = p->items,
			.bytes = p->bytes,
		};
		pthread_mutex_unlock(&p->mu);
		throttle_stats(p, &resp->stats[resp->n_stats - 1]);
	}
	resp->code = KV_OK;
out:
	pthread_rwlock_unlock(&n->parts.lock);
}
