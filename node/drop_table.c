/*
 * drop_table.c — RPC_DROP_TABLE: forget every partition and item of a
 * table. One batch deletes the table's whole key range and its partition
 * records, so a crash leaves either all of it or none. Idempotent.
 */
#include "keyenc.h"
#include "node.h"

void
drop_table_serve(node *n, const rpc_request *req, arena *a,
    rpc_response *resp)
{
	uint8_t lo[4], hi[4], mlo[PART_META_KEY_LEN], mhi[PART_META_KEY_LEN];
	store_batch b;

	if (req->table_id == 0 || req->table_id == UINT32_MAX) {
		resp->code = KV_PROTO;
		return;
	}
	keyenc_table_prefix(req->table_id, lo);
	keyenc_table_prefix(req->table_id + 1, hi);
	part_meta_key(req->table_id, 0, mlo);
	part_meta_key(req->table_id + 1, 0, mhi);
	store_batch_init(&b);
	pthread_rwlock_wrlock(&n->parts.lock);
	if ((resp->code = store_batch_add(&b, STORE_DELETE_RANGE, lo, 4, hi,
	    4)) == KV_OK &&
	    (resp->code = store_batch_add(&b, STORE_DELETE_RANGE, mlo,
	    sizeof(mlo), mhi, sizeof(mhi))) == KV_OK &&
	    (resp->code = store_write(n->st, &b)) == KV_OK) {
		/* Removal moves the last entry into the hole: walk down. */
		for (size_t i = n->parts.n; i-- > 0;)
			if (n->parts.p[i]->table_id == req->table_id)
				part_map_remove_locked(&n->parts,
				    n->parts.p[i]);
	}
	pthread_rwlock_unlock(&n->parts.lock);
	store_batch_fini(&b);
}
