/*
 * get.c — RPC_GET: read one item by its storage key.
 *
 * Reads take no partition mutex: a RocksDB get sees either the old or the
 * new record of a concurrent write, never a mix. ConsistentRead needs
 * nothing more on a single-copy partition; it is carried for the capacity
 * arithmetic: the read is admitted by, and charged to, the partition's
 * read bucket (throttle.h).
 */
#include <stdlib.h>
#include <string.h>

#include "capacity.h"
#include "keyenc.h"
#include "node.h"
#include "throttle.h"
#include "txn.h"

void
get_serve(node *n, const rpc_request *req, arena *a, rpc_response *resp)
{
	part *p;
	uint8_t *rec = NULL;
	size_t len = 0;
	bool found = false;

	pthread_rwlock_rdlock(&n->parts.lock);
	resp->code = part_map_check_key_locked(&n->parts, req->table_id,
	    req->part, req->epoch, req->key, req->key_len, &p);
	if (resp->code == KV_OK)
		resp->code = throttle_admit(n, p, false, req->key,
		    req->key_len, resp);
	if (resp->code == KV_OK) {
		/* For TransactGetItems (only: a plain read does not pay
		 * for the lock table): the item is in a transaction. */
		if (req->txn != 0)
			resp->locked = txn_locked(n, req->key, req->key_len);
		resp->code = store_get(n->st, req->key, req->key_len, &rec,
		    &len, &found);
		uint8_t *kept;
		size_t kept_len;
		if (resp->code == KV_OK && n->plant.kind == PLANT_STALE_READ &&
		    plant_stale(&n->plant, req->key, req->key_len, &kept,
		    &kept_len)) {
			free(rec);
			rec = kept;
			len = kept_len;
			found = kept != NULL;
		}
		/* A missing item costs the minimum, as DynamoDB charges. */
		if (resp->code == KV_OK)
			throttle_charge(n, p, false, req->key, req->key_len,
			    capacity_read_half_units(
			    found && len >= RECORD_HEADER ? record_size(rec) :
			    0, req->consistent));
	}
	pthread_rwlock_unlock(&n->parts.lock);
	if (resp->code != KV_OK || !found)
		return;
	if (len < RECORD_HEADER) {
		resp->code = KV_CORRUPT;
	} else {
		resp->found = true;
		resp->old_size = record_size(rec); /* for read capacity */
		resp->item_len = len - RECORD_HEADER;
		resp->item = (const uint8_t *) arena_dup(a,
		    rec + RECORD_HEADER, resp->item_len);
		if (resp->item == NULL)
			resp->code = KV_ENOMEM;
	}
	free(rec);
}
