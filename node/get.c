/*
 * get.c — RPC_GET: read one item by its storage key.
 *
 * Reads take no partition mutex: a RocksDB get sees either the old or the
 * new record of a concurrent write, never a mix. ConsistentRead needs
 * nothing more on a single-copy partition; it is carried for the capacity
 * arithmetic: the read is admitted by, and charged to, the partition's
 * read bucket (throttle.h).
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "capacity.h"
#include "keyenc.h"
#include "node.h"
#include "throttle.h"
#include "txn.h"

#define STAMP_TRIES 4

/*
 * The first read of TransactGetItems: the item with its stamp (*stamp),
 * taken before the read and found unchanged after it; a write under way
 * on its slot is waited out a few times, then reported as *busy.
 */
static kv_err
read_stamped(node *n, const uint8_t *k, size_t kl, uint8_t **rec,
    size_t *len, bool *found, uint64_t *stamp, bool *busy)
{
	kv_err rv = KV_OK;
	for (int tries = 0; tries < STAMP_TRIES; tries++) {
		if (!store_stamp_take(n->st, k, kl, stamp)) {
			sched_yield();
			continue;
		}
		rv = store_get(n->st, k, kl, rec, len, found);
		if (rv != KV_OK || store_stamp_same(n->st, k, kl, *stamp))
			return rv;
		free(*rec);
		*rec = NULL;
		*found = false;
	}
	*busy = true;
	return rv;
}

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
	if (resp->code == KV_OK && req->txn == RPC_TXN_READ_CHECK) {
		/*
		 * TransactGetItems's second read: the item is not in a
		 * transaction and nothing wrote it since the first read took
		 * its stamp (else "locked": the router reads again). The
		 * first read paid for both.
		 */
		resp->locked = txn_locked(n, req->key, req->key_len) ||
		    !store_stamp_same(n->st, req->key, req->key_len, req->ack);
		pthread_rwlock_unlock(&n->parts.lock);
		return;
	}
	if (resp->code == KV_OK) {
		/* For TransactGetItems (only: a plain read does not pay
		 * for the lock table): the item is in a transaction. */
		if (req->txn != 0) {
			resp->locked = txn_locked(n, req->key, req->key_len);
			resp->code = read_stamped(n, req->key, req->key_len,
			    &rec, &len, &found, &resp->seq, &resp->locked);
		} else {
			resp->code = store_get(n->st, req->key, req->key_len,
			    &rec, &len, &found);
		}
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
		/* A missing item costs the minimum, as DynamoDB charges; a
		 * transaction's read twice a strongly consistent one (its
		 * check, RPC_TXN_READ_CHECK, then pays nothing). */
		if (resp->code == KV_OK)
			throttle_charge(n, p, false, req->key, req->key_len,
			    (req->txn != 0 ? 2 : 1) * capacity_read_half_units(
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
