/*
 * write.c — the single-item write path shared by PUT, DELETE and UPDATE.
 *
 * First the partition's write bucket must admit the request (throttle.h);
 * a throttled write changes nothing. Under the partition mutex: read the
 * old record, evaluate the condition
 * on it, compute the new item (the verb's part), then write the new record
 * and set the partition's live counters. The condition is therefore
 * checked against exactly the version that is replaced, and concurrent
 * writes to one item never lose an update. If the process dies before the
 * record reaches the WAL nothing changed; after, it did, and the next
 * start counts the partition's items again (part.h).
 *
 * A put with no condition and no ReturnValues takes the old item's size
 * from the partition's size index when it is there (size_index.h) and
 * reads nothing.
 *
 * In a run (write_run in node.h), the locks are taken by the run's first
 * write and held until it ends; each write reads the record the last one
 * left in the run, and the run's last record goes to the store at its
 * end (write_run_end), before any reply.
 *
 * What is returned: ALL_OLD the old item, ALL_NEW the new one, UPDATED_OLD
 * and UPDATED_NEW the updated paths of either (UPDATE only); with a failed
 * condition, the old item when the request asks for it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capacity.h"
#include "codec.h"
#include "expr_codec.h"
#include "index.h"
#include "item.h"
#include "keyenc.h"
#include "node.h"
#include "throttle.h"
#include "txn.h"

/* Puts v (an item) into resp as codec bytes in a. */
static void
return_item(arena *a, const value *v, rpc_response *resp)
{
	size_t n = codec_size(v);
	uint8_t *buf = arena_alloc(a, n > 0 ? n : 1);
	if (buf == NULL) {
		resp->code = KV_ENOMEM;
		return;
	}
	codec_write(v, buf);
	resp->found = true;
	resp->item = buf;
	resp->item_len = n;
}

/* Projects v on the paths an update wrote and returns that. */
static void
return_updated(arena *a, const expr_update *u, const value *v,
    rpc_response *resp)
{
	expr_projection paths;
	value out;
	if (v == NULL)
		return;
	if (expr_update_paths(a, u, &paths) != KV_OK ||
	    expr_project(a, v, &paths, &out) != KV_OK) {
		resp->code = KV_ENOMEM;
		return;
	}
	if (out.len > 0)
		return_item(a, &out, resp);
}

static void
fail_with(arena *a, rpc_response *resp, kv_err code, const char *msg)
{
	resp->code = code;
	resp->message = arena_dup(a, msg, strlen(msg));
}

void
write_run_init(write_run *r)
{
	memset(r, 0, sizeof(*r));
}

bool
write_run_takes(const write_run *r, const rpc_request *req)
{
	return r->p != NULL && (req->op == RPC_PUT ||
	    req->op == RPC_DELETE || req->op == RPC_UPDATE) &&
	    req->table_id == r->table_id && req->part == r->part_id &&
	    req->epoch == r->epoch && req->key_len == r->key_len &&
	    memcmp(req->key, r->key, r->key_len) == 0;
}

/* Adds the write of rec (NULL: the deletion of key) to b. */
static kv_err
item_op_add(store_batch *b, const uint8_t *key, size_t key_len,
    const uint8_t *rec, size_t rec_len)
{
	return rec != NULL ?
	    store_batch_add(b, STORE_PUT, key, key_len, rec, rec_len) :
	    store_batch_add(b, STORE_DELETE, key, key_len, NULL, 0);
}

/*
 * Once a batch that wrote rec (NULL: deleted key) is applied: sets p's
 * live counters (the stored records get them at a clean stop, part.h)
 * and its size index, and notes for a move under way the item and the
 * keys of its table that b's operations [from, to) changed with it
 * (local index entries, its collection's size), not the outbox's.
 */
static void
item_applied(part *p, const store_batch *b, size_t from, size_t to,
    const uint8_t *key, size_t key_len, const uint8_t *rec,
    uint64_t items, uint64_t bytes)
{
	for (size_t i = from; i < to; i++)
		if (b->ops[i].key_len > KEYENC_PREFIX &&
		    keyenc_key_table(b->ops[i].key) == p->table_id)
			move_note(p, b->ops[i].key, b->ops[i].key_len);
	p->items = items;
	p->bytes = bytes;
	if (rec != NULL)
		size_index_set(&p->sizes, key, key_len, record_size(rec));
	else
		size_index_remove(&p->sizes, key, key_len);
}

/*
 * Writes rec (NULL: deletes key) and, once it is applied, sets p's
 * counters to items and bytes (item_applied). b holds what must go in
 * the same batch (index records: index.h), or nothing; the caller
 * finishes it.
 */
static kv_err
write_item(node *n, part *p, const uint8_t *key, size_t key_len,
    const uint8_t *rec, size_t rec_len, uint64_t items, uint64_t bytes,
    store_batch *b)
{
	kv_err rv = item_op_add(b, key, key_len, rec, rec_len);
	/* Durable before the reply leaves: server.c flushes. */
	if (rv == KV_OK)
		rv = store_write_buffered(n->st, b);
	if (rv == KV_OK)
		item_applied(p, b, 0, b->n, key, key_len, rec, items, bytes);
	return rv;
}

kv_err
write_commits(node *n, const write_change *cs, size_t nc, arena *a,
    store_batch *b)
{
	kv_err rv = KV_OK;
	bool indexed = false;
	size_t *ends = arena_alloc(a, (nc + 1) * sizeof(*ends));
	if (ends == NULL)
		return KV_ENOMEM;
	for (size_t i = 0; i < nc; i++)
		indexed |= cs[i].t != NULL;
	if (indexed)
		index_order_lock(n);
	for (size_t i = 0; rv == KV_OK && i < nc; i++) {
		const write_change *c = &cs[i];
		uint64_t coll;
		if (c->t != NULL) {
			rv = index_outbox(n, c->t, c->p->epoch, c->old_v,
			    c->new_v, a, b, NULL, NULL);
			if (rv == KV_OK && table_has_local(c->t))
				rv = index_local_write(n, c->t, c->old_v,
				    c->new_v, a, b, NULL, NULL, &coll);
			/* A transaction's write was checked when it was
			 * prepared: it is not refused now (the collection's
			 * limit included). */
			if (rv == KV_COLL_FULL)
				rv = KV_OK;
		}
		if (rv == KV_OK)
			rv = item_op_add(b, c->key, c->key_len, c->rec,
			    c->rec_len);
		ends[i] = b->n;
	}
	/* Durable before the reply leaves: server.c flushes. */
	if (rv == KV_OK)
		rv = store_write_buffered(n->st, b);
	for (size_t i = 0; rv == KV_OK && i < nc; i++) {
		const write_change *c = &cs[i];
		uint64_t size = c->new_v != NULL ? item_size(c->new_v) : 0;
		uint64_t items = c->p->items + (c->old_v == NULL ? 1 : 0) -
		    (c->new_v == NULL ? 1 : 0);
		item_applied(c->p, b, i == 0 ? 0 : ends[i - 1], ends[i],
		    c->key, c->key_len, c->rec, items,
		    c->p->bytes + size - c->old_size);
	}
	if (indexed) {
		index_order_unlock(n);
		if (rv == KV_OK) {
			if (index_count(n, b, 1))
				index_kick(n);
		}
	}
	return rv;
}

kv_err
write_commit(node *n, part *p, const table *t, const uint8_t *key,
    size_t key_len, const value *old_v, uint32_t old_size,
    const value *new_v, const uint8_t *rec, size_t rec_len, arena *a,
    store_batch *b)
{
	write_change c = { .p = p, .t = t, .key = key, .key_len = key_len,
		.old_v = old_v, .old_size = old_size, .new_v = new_v,
		.rec = rec, .rec_len = rec_len };
	return write_commits(n, &c, 1, a, b);
}

/*
 * The planted faults of a single-item write (plant.h): whether this one
 * is to be answered without being written; stale-read keeps old (the
 * record being replaced, NULL: none) on the way.
 */
static bool
planted(node *n, const rpc_request *req, const uint8_t *old,
    size_t old_len)
{
	if (n->plant.kind == PLANT_NONE)
		return false;
	if ((req->op == RPC_PUT || req->op == RPC_UPDATE) &&
	    plant_fire(&n->plant, PLANT_STALE_READ))
		plant_keep(&n->plant, req->key, req->key_len, old, old_len);
	if ((req->op == RPC_PUT && plant_fire(&n->plant, PLANT_LOSE_ACK)) ||
	    (req->op == RPC_UPDATE && plant_fire(&n->plant, PLANT_DUP_ID))) {
		fprintf(stderr, "kv-node %u: PLANTED FAULT: a %s answered as "
		    "done and not written\n", n->index,
		    req->op == RPC_PUT ? "PutItem" : "UpdateItem");
		return true;
	}
	return false;
}

kv_err
write_run_end(node *n, write_run *r)
{
	kv_err rv = KV_OK;
	if (r->p == NULL)
		return KV_OK;
	if (r->dirty) {
		store_batch b;
		store_batch_init(&b);
		rv = write_item(n, r->p, r->key, r->key_len, r->rec,
		    r->rec_len, r->items, r->bytes, &b);
		store_batch_fini(&b);
	}
	pthread_mutex_unlock(&r->p->mu);
	pthread_rwlock_unlock(&n->parts.lock);
	free(r->key);
	free(r->rec);
	write_run_init(r);
	return rv;
}

/*
 * Opens run r on p (whose locks the caller holds) for req's item, whose
 * record is cur (taken over; NULL: none). False when memory runs out,
 * with nothing taken.
 */
static bool
run_open(write_run *r, part *p, const rpc_request *req, uint8_t *cur,
    size_t cur_len)
{
	uint8_t *key = malloc(req->key_len > 0 ? req->key_len : 1);
	if (key == NULL)
		return false;
	memcpy(key, req->key, req->key_len);
	r->p = p;
	r->table_id = req->table_id;
	r->part_id = req->part;
	r->epoch = req->epoch;
	r->key = key;
	r->key_len = req->key_len;
	r->rec = cur;
	r->rec_len = cur_len;
	r->items = p->items;
	r->bytes = p->bytes;
	r->dirty = false;
	return true;
}

void
write_serve(node *n, const rpc_request *req, arena *a, rpc_response *resp,
    write_fn fn, write_run *run)
{
	part *p;
	uint8_t *old = NULL, *rec = NULL;
	size_t old_len = 0, rec_len = 0;
	bool found = false;
	value old_item, *old_v = NULL, *new_v = NULL;
	expr_cond *cond = NULL;
	expr_update *upd = NULL;
	expr_err err;
	uint64_t items0, bytes0;
	/*
	 * In a run, the locks stay held and the record read belongs to the
	 * run; `prev` keeps a record the run let go of until the answer no
	 * longer needs it.
	 */
	bool in_run = run != NULL && run->p != NULL;
	uint8_t *prev = NULL;
	/*
	 * A put with no condition and no ReturnValues needs only the old
	 * item's size, which p->sizes may know (size_index.h); then the old
	 * record is not read, and the write does not open a run, whose
	 * next write would need the record.
	 */
	bool blind = req->op == RPC_PUT && req->condition == NULL &&
	    req->return_values == RPC_RETURN_NONE &&
	    n->plant.kind != PLANT_STALE_READ; /* it keeps the old record */
	bool size_known = false;
	uint32_t old_size = 0;
	/*
	 * A table with secondary indexes: the view stays read-locked until
	 * the end, its writes read the old item (to find its old entries)
	 * and never open a run (each write has its own records).
	 */
	const table *indexed = NULL;
	bool kick = false, ordered = false;
	uint64_t local_half = 0; /* what the write cost local indexes */
	store_batch b;

	store_batch_init(&b);
	if (!in_run && (resp->code = index_view_table(n, req->table_id,
	    &indexed)) != KV_OK)
		goto done;
	if (indexed != NULL) {
		blind = false;
		run = NULL;
	}

	if ((req->condition != NULL && expr_codec_decode_cond(a,
	    req->condition, req->condition_len, &cond) != KV_OK) ||
	    (req->update != NULL && expr_codec_decode_update(a, req->update,
	    req->update_len, &upd) != KV_OK)) {
		resp->code = KV_PROTO;
		goto done;
	}
	if (in_run) {
		/* write_run_takes held: the same item, route checked. */
		p = run->p;
		if ((resp->code = throttle_admit(n, p, true, req->key,
		    req->key_len, resp)) != KV_OK)
			goto done;
		old = run->rec;
		old_len = run->rec_len;
		found = old != NULL;
		items0 = run->items;
		bytes0 = run->bytes;
	} else {
		pthread_rwlock_rdlock(&n->parts.lock);
		resp->code = part_map_check_key_locked(&n->parts,
		    req->table_id, req->part, req->epoch, req->key,
		    req->key_len, &p);
		if (resp->code != KV_OK ||
		    (resp->code = throttle_admit(n, p, true, req->key,
		    req->key_len, resp)) != KV_OK)
			goto unlock_map;
		pthread_mutex_lock(&p->mu);
		/* An item in a prepared transaction takes no other write
		 * (node/txn.h; a run holds the mutex: none is prepared
		 * meanwhile). */
		if (txn_locked(n, req->key, req->key_len)) {
			resp->code = KV_TXN_CONFLICT;
			goto unlock;
		}
		if (blind && size_index_get(&p->sizes, req->key, req->key_len,
		    &old_size))
			found = size_known = true;
		else
			resp->code = store_get(n->st, req->key, req->key_len,
			    &old, &old_len, &found);
		if (resp->code != KV_OK)
			goto unlock;
		items0 = p->items;
		bytes0 = p->bytes;
		if (run != NULL && !size_known &&
		    run_open(run, p, req, old, old_len))
			in_run = true; /* the run has the locks and old now */
	}
	if (found && !size_known) {
		if (old_len < RECORD_HEADER ||
		    codec_decode(a, old + RECORD_HEADER,
		    old_len - RECORD_HEADER, &old_item) != KV_OK ||
		    old_item.type != VAL_M) {
			resp->code = KV_CORRUPT;
			goto unlock;
		}
		old_v = &old_item;
		old_size = record_size(old);
	}
	resp->old_size = old_size;
	if (cond != NULL && !expr_eval_condition(cond, old_v)) {
		resp->code = KV_COND_FAILED;
		if (req->return_on_failure && old_v != NULL)
			return_item(a, old_v, resp);
		goto unlock;
	}
	err.msg[0] = '\0';
	resp->code = fn(req, upd, a, old_v, &new_v, &err);
	if (resp->code != KV_OK) {
		if (err.msg[0] != '\0')
			fail_with(a, resp, resp->code, err.msg);
		goto unlock;
	}
	size_t size = 0;
	if (new_v != NULL) {
		size = item_size(new_v);
		resp->new_size = (uint32_t) size;
		if (size > ITEM_MAX_SIZE) {
			fail_with(a, resp, KV_EINVAL, upd != NULL ?
			    "Item size to update has exceeded the maximum "
			    "allowed size" :
			    "Item size has exceeded the maximum allowed size");
			goto unlock;
		}
		char msg[512];
		if (indexed != NULL && !index_check(indexed, new_v, msg,
		    sizeof(msg))) {
			fail_with(a, resp, KV_EINVAL, msg);
			goto unlock;
		}
		rec_len = RECORD_HEADER + codec_size(new_v);
		if ((rec = malloc(rec_len)) == NULL) {
			resp->code = KV_ENOMEM;
			goto unlock;
		}
		for (int i = 0; i < 4; i++)
			rec[i] = (uint8_t) (size >> (8 * i));
		codec_write(new_v, rec + RECORD_HEADER);
	} else if (!found) {
		goto unlock; /* deleting a missing item changes nothing */
	}
	if (planted(n, req, found ? old : NULL, old_len))
		goto unlock; /* answered as done, not written (plant.h) */
	uint64_t items = items0 + (found ? 0 : 1) - (new_v == NULL ? 1 : 0);
	uint64_t bytes = bytes0 + size - old_size;
	if (in_run) {
		prev = run->rec; /* old_v may point into it: freed below */
		run->rec = rec;
		run->rec_len = rec_len;
		run->items = items;
		run->bytes = bytes;
		run->dirty = true;
		rec = NULL;
	} else {
		if (indexed != NULL) {
			uint32_t iid, bits;
			index_units *u = arena_alloc(a, (indexed->n_indexes +
			    1) * sizeof(*u));
			size_t nu = 0;
			/* Records reach the store in the order of their
			 * numbers (index.h), held until the write is in. */
			index_order_lock(n);
			ordered = true;
			resp->code = u == NULL ? KV_ENOMEM : index_outbox(n,
			    indexed, p->epoch, old_v, new_v, a, &b, u, &nu);
			size_t ng = nu;
			if (resp->code == KV_OK && table_has_local(indexed)) {
				resp->code = index_local_write(n, indexed,
				    old_v, new_v, a, &b, u, &nu,
				    &resp->coll_size);
				resp->has_coll = true;
			}
			/* A local index's writes are the table's to pay. */
			for (size_t i = ng; i < nu; i++)
				local_half += u[i].half;
			if (resp->code == KV_OK)
				resp->code = index_units_answer(a, u, nu, resp);
			if (resp->code != KV_OK)
				goto unlock;
			if (index_pressed(n, &b, &iid, &bits)) {
				resp->code = KV_THROTTLED;
				resp->throttle = bits | RPC_THROTTLE_INDEX;
				resp->message = index_name_of_locked(n, iid,
				    a);
				goto unlock;
			}
			kick = b.n > 0;
		}
		resp->code = write_item(n, p, req->key, req->key_len, rec,
		    rec_len, items, bytes, &b);
		kick = kick && resp->code == KV_OK;
		if (kick)
			kick = index_count(n, &b, 1);
	}
unlock:
	if (ordered)
		index_order_unlock(n);
	if (!in_run)
		pthread_mutex_unlock(&p->mu);
	/*
	 * The write bucket pays for what the answer reports: the larger of
	 * the old and new item, and for a failed condition the existing item
	 * (core/capacity.h).
	 */
	if (resp->code == KV_OK || resp->code == KV_COND_FAILED)
		throttle_charge(n, p, true, req->key, req->key_len,
		    2 * capacity_write_units(
		    resp->old_size, resp->code == KV_OK ? resp->new_size : 0) +
		    (resp->code == KV_OK ? local_half : 0));
unlock_map:
	if (!in_run)
		pthread_rwlock_unlock(&n->parts.lock);
	if (resp->code == KV_OK) {
		switch (req->return_values) {
		case RPC_RETURN_NONE:
			break;
		case RPC_RETURN_ALL_OLD:
			if (old_v != NULL)
				return_item(a, old_v, resp);
			break;
		case RPC_RETURN_ALL_NEW:
			if (new_v != NULL)
				return_item(a, new_v, resp);
			break;
		case RPC_RETURN_UPDATED_OLD:
			if (upd != NULL)
				return_updated(a, upd, old_v, resp);
			break;
		case RPC_RETURN_UPDATED_NEW:
			if (upd != NULL)
				return_updated(a, upd, new_v, resp);
			break;
		}
	}
	if (!in_run)
		free(old);
	free(prev);
	free(rec);
done:
	if (indexed != NULL)
		index_view_unlock(n);
	store_batch_fini(&b);
	if (kick)
		index_kick(n);
}
