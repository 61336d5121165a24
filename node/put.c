/*
 * put.c — RPC_PUT: replace one item, optionally returning the old one.
 *
 * Under the partition mutex: read the old record (for ReturnValues and the
 * partition's counters), then write the new record and the partition's
 * metadata in one batch. If the process dies before the batch is in the
 * WAL, nothing changed; after, both did.
 */
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "item.h"
#include "keyenc.h"
#include "node.h"

void
put_serve(node *n, const rpc_request *req, arena *a, rpc_response *resp)
{
	part *p;
	value item;
	uint8_t *old = NULL, *rec = NULL;
	size_t old_len = 0;
	bool found = false;
	store_batch b;
	uint8_t mkey[PART_META_KEY_LEN], mval[PART_META_VAL_LEN];

	store_batch_init(&b);
	if (codec_decode(a, req->item, req->item_len, &item) != KV_OK ||
	    item.type != VAL_M) {
		resp->code = KV_PROTO;
		return;
	}
	size_t size = item_size(&item);
	rec = malloc(RECORD_HEADER + req->item_len);
	if (rec == NULL) {
		resp->code = KV_ENOMEM;
		return;
	}
	for (int i = 0; i < 4; i++)
		rec[i] = (uint8_t) (size >> (8 * i));
	memcpy(rec + RECORD_HEADER, req->item, req->item_len);

	pthread_rwlock_rdlock(&n->parts.lock);
	resp->code = part_map_check_key_locked(&n->parts, req->table_id,
	    req->part, req->epoch, req->key, req->key_len, &p);
	if (resp->code != KV_OK)
		goto unlock_map;
	pthread_mutex_lock(&p->mu);
	resp->code = store_get(n->st, req->key, req->key_len, &old, &old_len,
	    &found);
	if (resp->code != KV_OK)
		goto unlock;
	if (found && old_len < RECORD_HEADER) {
		resp->code = KV_CORRUPT;
		goto unlock;
	}
	uint64_t items = p->items + (found ? 0 : 1);
	uint64_t bytes = p->bytes + size - (found ? record_size(old) : 0);
	part_meta_key(p->table_id, p->id, mkey);
	part_meta_value(p, items, bytes, mval);
	if ((resp->code = store_batch_add(&b, STORE_PUT, req->key,
	    req->key_len, rec, RECORD_HEADER + req->item_len)) != KV_OK ||
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
	free(rec);
}
