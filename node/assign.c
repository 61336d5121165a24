/*
 * assign.c — RPC_ASSIGN: the catalog node tells this node which partitions
 * of a table it owns, at which epochs. Partitions it newly owns start empty;
 * ones it keeps take the new range and epoch (so routers holding an older
 * epoch get KV_STALE_ROUTE); ones it no longer owns are forgotten (moving
 * their items is the business of a future move verb). Idempotent: the
 * catalog node resends until it hears KV_OK. The in-memory map is updated
 * before the batch is written: if the write fails or the node dies, the
 * catalog node resends (also after its own restart) and they converge.
 * The assignment also carries the table's billing mode and throughput,
 * which set each partition's token-bucket rates (throttle.h): UpdateTable
 * reaches the owners as a fresh ASSIGN.
 */
#include <string.h>

#include "node.h"
#include "throttle.h"

void
assign_serve(node *n, const rpc_request *req, arena *a, rpc_response *resp)
{
	const table *t = req->table;
	store_batch b;
	uint8_t (*keys)[PART_META_KEY_LEN] = NULL;
	uint8_t (*vals)[PART_META_VAL_LEN] = NULL;

	if (t == NULL || t->id == 0 || t->id == UINT32_MAX) {
		resp->code = KV_PROTO;
		return;
	}
	store_batch_init(&b);
	keys = arena_alloc(a, (t->n_parts + 1) * PART_META_KEY_LEN);
	vals = arena_alloc(a, (t->n_parts + 1) * PART_META_VAL_LEN);
	if (keys == NULL || vals == NULL) {
		resp->code = KV_ENOMEM;
		return;
	}
	pthread_rwlock_wrlock(&n->parts.lock);
	resp->code = KV_OK;
	for (size_t i = 0; i < t->n_parts && resp->code == KV_OK; i++) {
		const partition *tp = &t->parts[i];
		if (tp->node != req->node)
			continue;
		part *p = part_map_find_locked(&n->parts, t->id, tp->id);
		bool fresh = p == NULL;
		if (fresh) {
			resp->code = part_map_add_locked(&n->parts, t->id,
			    tp->id, tp->lo, tp->last, tp->epoch, &p);
			if (resp->code != KV_OK)
				break;
		}
		bool prov = t->billing == BILLING_PROVISIONED;
		throttle_configure(n, p, prov ? t->rcu : 0, prov ? t->wcu : 0,
		    (uint32_t) t->n_parts, fresh);
		p->lo = tp->lo;
		p->last = tp->last;
		p->epoch = tp->epoch;
		/* Its keys may have changed: known sizes start over. */
		size_index_fini(&p->sizes);
		part_meta_key(t->id, tp->id, keys[i]);
		part_meta_value(p, p->items, p->bytes, vals[i]);
		resp->code = store_batch_add(&b, STORE_PUT, keys[i],
		    PART_META_KEY_LEN, vals[i], PART_META_VAL_LEN);
	}
	/*
	 * Partitions of this table that the catalog now places elsewhere:
	 * drop their records so requests for them get KV_STALE_ROUTE. Their
	 * items stay in the store; copying them to the new owner before the
	 * catalog changes is the job of the (future) move verb.
	 */
	uint8_t (*gone)[PART_META_KEY_LEN] = arena_alloc(a,
	    (n->parts.n + 1) * PART_META_KEY_LEN);
	part *drop[64];
	size_t n_drop = 0;
	if (gone == NULL && resp->code == KV_OK)
		resp->code = KV_ENOMEM;
	for (size_t i = 0; i < n->parts.n && resp->code == KV_OK; i++) {
		part *p = n->parts.p[i];
		bool mine = false;
		if (p->table_id != t->id)
			continue;
		for (size_t k = 0; k < t->n_parts; k++)
			mine |= t->parts[k].id == p->id &&
			    t->parts[k].node == req->node;
		if (mine)
			continue;
		if (n_drop == sizeof(drop) / sizeof(drop[0])) {
			resp->code = KV_BUSY; /* the catalog node resends */
			break;
		}
		part_meta_key(t->id, p->id, gone[n_drop]);
		resp->code = store_batch_add(&b, STORE_DELETE, gone[n_drop],
		    PART_META_KEY_LEN, NULL, 0);
		drop[n_drop++] = p;
	}
	if (resp->code == KV_OK)
		resp->code = store_write(n->st, &b);
	if (resp->code == KV_OK)
		for (size_t i = 0; i < n_drop; i++)
			part_map_remove_locked(&n->parts, drop[i]);
	pthread_rwlock_unlock(&n->parts.lock);
	store_batch_fini(&b);
}
