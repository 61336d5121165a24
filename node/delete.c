/*
 * delete.c — RPC_DELETE: remove one item, optionally returning it.
 * Same shape as put.c: read the old record and write the deletion and the
 * partition's metadata in one batch under the partition mutex. Deleting a
 * missing item succeeds and changes nothing, as in DynamoDB.
 */
#include <stdlib.h>
#include <string.h>

#include "keyenc.h"
#include "node.h"

void
delete_serve(node *n, const rpc_request *req, arena *a, rpc_response *resp)
{
	part *p;
	uint8_t *old = NULL;
	size_t old_len = 0;
	bool found = false;
	store_batch b;
	uint8_t mkey[PART_META_KEY_LEN], mval[PART_META_VAL_LEN];

	store_batch_init(&b);
	pthread_rwlock_rdlock(&n->parts.lock);
	resp->code = part_map_check_key_locked(&n->parts, req->table_id,
	    req->part, req->epoch, req->key, req->key_len, &p);
	if (resp->code != KV_OK)
		goto unlock_map;
	pthread_mutex_lock(&p->mu);
	resp->code = store_get(n->st, req->key, req->key_len, &old, &old_len,
	    &found);
	if (resp->code != KV_OK || !found)
		goto unlock;
	if (old_len < RECORD_HEADER) {
		resp->code = KV_CORRUPT;
		goto unlock;
	}
	uint64_t items = p->items - 1;
	uint64_t bytes = p->bytes - record_size(old);
	part_meta_key(p->table_id, p->id, mkey);
	part_meta_value(p, items, bytes, mval);
	if ((resp->code = store_batch_add(&b, STORE_DELETE, req->key,
	    req->key_len, NULL, 0)) != KV_OK ||
	    (resp->code = store_batch_add(&b, STORE_PUT, mkey, sizeof(mkey),
	    mval, sizeof(mval))) != KV_OK ||
	    (resp->code = store_write(n->st, &b)) != KV_OK)
		goto unlock;
	p->items = items;
	p->bytes = bytes;
unlock:
	pthread_mutex_unlock(&p->mu);
unlock_map:
	pthread_rwlock_unlock(&n->parts.lock);
	if (resp->code == KV_OK && found &&
	    req->return_values == RPC_RETURN_ALL_OLD) {
		node_return_old(a, old, old_len, resp);
	}
	store_batch_fini(&b);
	free(old);
}
