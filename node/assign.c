/*
 * assign.c — RPC_ASSIGN: the catalog node tells this node which partitions
 * of a table it owns, at which epochs. Partitions it newly owns start empty;
 * ones it keeps take the new range and epoch (so routers holding an older
 * epoch get KV_STALE_ROUTE); ones it no longer owns are forgotten (moving
 * their items is the business of a future move verb). Idempotent: the
 * catalog node resends until it hears KV_OK.
 */
#include <string.h>

#include "node.h"

void
assign_serve(node *n, const rpc_request *req, arena *a, rpc_response *resp)
{
	const table *t = req->table;
	store_batch b;
	uint8_t (*keys)[PART_META_KEY_LEN] = NULL;
	uint8_t (*vals)[PART_META_VAL_LEN] = NULL;

	if (t == NULL) {
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
		if (p == NULL) {
			resp->code = part_map_add_locked(&n->parts, t->id,
			    tp->id, tp->lo, tp->last, tp->epoch, &p);
			if (resp->code != KV_OK)
				break;
		}
		p->lo = tp->lo;
		p->last = tp->last;
		p->epoch = tp->epoch;
		part_meta_key(t->id, tp->id, keys[i]);
		part_meta_value(p, p->items, p->bytes, vals[i]);
		resp->code = store_batch_add(&b, STORE_PUT, keys[i],
		    PART_META_KEY_LEN, vals[i], PART_META_VAL_LEN);
	}
	if (resp->code == KV_OK)
		resp->code = store_write(n->st, &b);
	pthread_rwlock_unlock(&n->parts.lock);
	store_batch_fini(&b);
}
