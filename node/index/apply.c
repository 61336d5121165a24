/*
 * apply.c — RPC_INDEX_APPLY: the index owner applies outbox records in
 * version order (index_int.h, ../index.h).
 */
#include "index_int.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

/* Reads a record (routed: with its partition first); false if malformed. */
bool
index_rec_parse(const uint8_t *p, size_t len, bool routed, rec *r)
{
	memset(r, 0, sizeof(*r));
	if (routed) {
		if (len < ROUTE_HEAD)
			return false;
		r->part = bytes_get_le32(p);
		r->part_epoch = bytes_get_le64(p + 4);
		p += ROUTE_HEAD;
		len -= ROUTE_HEAD;
	}
	if (len < REC_HEAD)
		return false;
	r->index_id = bytes_get_le32(p);
	r->v_epoch = bytes_get_le64(p + 4);
	r->v_num = bytes_get_le64(p + 12);
	r->kind = p[20];
	r->kl = bytes_get_le32(p + 21);
	if (r->kl < KEYENC_PREFIX || r->kl > len - REC_HEAD)
		return false;
	r->key = p + REC_HEAD;
	size_t rest = len - REC_HEAD - r->kl;
	if (r->kind == REC_PUT) {
		if (rest < 4)
			return false;
		r->size = bytes_get_le32(p + REC_HEAD + r->kl);
		r->item = p + REC_HEAD + r->kl + 4;
		r->il = rest - 4;
		/* Size 0 marks a tombstone (index.h): an item has its keys. */
		return r->il > 0 && r->size > 0 && r->size < RECORD_VERSIONED;
	}
	return r->kind == REC_DELETE && rest == 0;
}

/* Whether version (e, num) is above the one of stored record v. */
static bool
newer(uint64_t e, uint64_t num, const uint8_t *v, size_t vl)
{
	if (vl < RECORD_HEADER + RECORD_VERSION_LEN || (v[3] & 0x80) == 0)
		return true; /* no version: not an entry record */
	uint64_t se = bytes_get_le64(v + RECORD_HEADER);
	uint64_t sn = bytes_get_le64(v + RECORD_HEADER + 8);
	return e > se || (e == se && num > sn);
}

/*
 * What the batch being applied has written to one entry key so far (a
 * batch may hold several records of one entry), by key hash; open
 * addressing over twice the records.
 */
typedef struct seen_entry {
	const rec *r;       /* the record that wrote it last; NULL: free */
	const uint8_t *val; /* what it wrote */
	size_t vl;
} seen_entry;

static seen_entry *
seen_slot(seen_entry *t, size_t cap, const rec *r)
{
	size_t i = (size_t) XXH3_64bits(r->key, r->kl) & (cap - 1);
	while (t[i].r != NULL && (t[i].r->kl != r->kl ||
	    memcmp(t[i].r->key, r->key, r->kl) != 0))
		i = (i + 1) & (cap - 1);
	return &t[i];
}

void
index_apply_serve(node *n, const rpc_request *req, arena *a,
    rpc_response *resp)
{
	index_state *s = n->gsi;
	size_t nr = req->n_subs, cap = 16;
	while (cap < 2 * nr)
		cap *= 2;
	rec *rs = arena_alloc(a, (nr > 0 ? nr : 1) * sizeof(rec));
	part **ps = arena_alloc(a, (nr > 0 ? nr : 1) * sizeof(part *));
	part **locked = arena_alloc(a, (nr > 0 ? nr : 1) * sizeof(part *));
	int64_t *d_items = arena_alloc(a, (nr > 0 ? nr : 1) * sizeof(int64_t));
	int64_t *d_bytes = arena_alloc(a, (nr > 0 ? nr : 1) * sizeof(int64_t));
	bool *applied = arena_alloc(a, (nr > 0 ? nr : 1) * sizeof(bool));
	/* Per record: it added a tombstone (1), replaced one by a put (2). */
	uint8_t *tomb = arena_alloc(a, nr > 0 ? nr : 1);
	seen_entry *seen = arena_alloc(a, cap * sizeof(seen_entry));
	size_t nl = 0;
	store_batch b;

	if (rs == NULL || ps == NULL || locked == NULL || d_items == NULL ||
	    d_bytes == NULL || applied == NULL || tomb == NULL ||
	    seen == NULL) {
		resp->code = KV_ENOMEM;
		return;
	}
	memset(seen, 0, cap * sizeof(seen_entry));
	for (size_t i = 0; i < nr; i++)
		if (!index_rec_parse(req->subs[i], req->sub_lens[i], true,
		    &rs[i])) {
			resp->code = KV_PROTO;
			return;
		}
	store_batch_init(&b);
	pthread_rwlock_rdlock(&n->parts.lock);
	/* All or nothing: every record must be this node's to apply. */
	resp->code = KV_OK;
	for (size_t i = 0; i < nr && resp->code == KV_OK; i++)
		resp->code = part_map_check_key_locked(&n->parts,
		    rs[i].index_id, rs[i].part, rs[i].part_epoch, rs[i].key,
		    rs[i].kl, &ps[i]);
	/*
	 * The index partitions must have write capacity for them: if one
	 * has not, none is applied, and the base node holds back the
	 * writes that would add to its records (back-pressure).
	 */
	for (size_t i = 0; i < nr && resp->code == KV_OK; i++) {
		bool first = true;
		for (size_t k = 0; k < nl && first; k++)
			first = locked[k] != ps[i];
		if (!first)
			continue;
		locked[nl++] = ps[i];
		resp->code = throttle_admit(n, ps[i], true, rs[i].key,
		    rs[i].kl, resp);
	}
	if (resp->code != KV_OK)
		goto unlock_map;
	/*
	 * One batch for all of them, under the mutexes of every partition
	 * they touch (taken in address order, so two batches never wait on
	 * each other), so that no other write to their entries comes
	 * between a record's version check and its write.
	 */
	part_lock_set(locked, &nl);
	for (size_t i = 0; i < nr && resp->code == KV_OK; i++) {
		const rec *r = &rs[i];
		seen_entry *e = seen_slot(seen, cap, r);
		uint8_t *old = NULL;
		const uint8_t *ov;
		size_t ol = 0;
		bool found;
		applied[i] = false;
		tomb[i] = 0;
		d_items[i] = d_bytes[i] = 0;
		if (e->r != NULL) {
			ov = e->val;
			ol = e->vl;
			found = true;
		} else {
			resp->code = store_get(n->st, r->key, r->kl, &old, &ol,
			    &found);
			ov = old;
			if (resp->code == KV_OK && found && ol < RECORD_HEADER)
				resp->code = KV_CORRUPT;
			if (resp->code != KV_OK) {
				free(old);
				break;
			}
		}
		if (found && !newer(r->v_epoch, r->v_num, ov, ol)) {
			free(old);
			atomic_fetch_add(&s->stale_skipped, 1);
			continue;
		}
		bool was_live = found && record_item_offset(ov, ol) < ol;
		bool was_tomb = found && !was_live;
		/* A tombstone replaced by a newer one stays one tombstone. */
		if (r->kind == REC_DELETE && !was_tomb)
			tomb[i] = 1;
		else if (r->kind == REC_PUT && was_tomb)
			tomb[i] = 2;
		/* Only the removal of a live entry counts: a dropped put is
		 * healed by the item's next write (which removes the entry it
		 * expects there), a left entry is never visited again. */
		if (r->kind == REC_DELETE && was_live &&
		    plant_fire(&n->plant, PLANT_INDEX_DROP)) {
			free(old);
			fprintf(stderr, "kv-node %u: PLANTED FAULT: an index "
			    "removal acknowledged and not written\n",
			    n->index);
			continue;
		}
		uint32_t old_size = found ? record_size(ov) : 0;
		free(old);
		/* A tombstone carries, for its collection, the outbox clock
		 * as it is now: below the fence of any round that begins
		 * later (index_collect_serve). */
		size_t il = r->kind == REC_PUT ? r->il : RECORD_STAMP_LEN;
		size_t vl = RECORD_HEADER + RECORD_VERSION_LEN + il;
		uint8_t *v = arena_alloc(a, vl);
		if (v == NULL) {
			resp->code = KV_ENOMEM;
			break;
		}
		uint32_t size = r->kind == REC_PUT ? r->size : 0;
		bytes_put_le32(v, size | RECORD_VERSIONED);
		bytes_put_le64(v + RECORD_HEADER, r->v_epoch);
		bytes_put_le64(v + RECORD_HEADER + 8, r->v_num);
		if (r->kind == REC_PUT)
			memcpy(v + RECORD_HEADER + RECORD_VERSION_LEN, r->item,
			    r->il);
		else
			bytes_put_le64(v + RECORD_HEADER + RECORD_VERSION_LEN,
			    atomic_load(&s->clock));
		if ((resp->code = store_batch_add(&b, STORE_PUT, r->key, r->kl,
		    v, vl)) != KV_OK)
			break;
		*e = (seen_entry) { r, v, vl };
		applied[i] = true;
		d_items[i] = (r->kind == REC_PUT ? 1 : 0) - (was_live ? 1 : 0);
		d_bytes[i] = (int64_t) size - (int64_t) old_size;
	}
	/* Durable before the answer: the sender deletes its records then. */
	if (resp->code == KV_OK && b.n > 0)
		resp->code = store_write(n->st, &b);
	for (size_t i = 0; i < nr && resp->code == KV_OK; i++) {
		if (!applied[i])
			continue;
		/* A move under way sends the entry again (after the write,
		 * or it could read the old one). */
		move_note(ps[i], rs[i].key, rs[i].kl);
		ps[i]->items += (uint64_t) d_items[i];
		ps[i]->bytes += (uint64_t) d_bytes[i];
	}
	part_unlock_set(locked, nl);
	if (resp->code == KV_OK)
		atomic_fetch_add(&s->applies, 1);
	for (size_t i = 0; i < nr && resp->code == KV_OK; i++) {
		if (!applied[i])
			continue;
		atomic_fetch_add(&s->applied, 1);
		if (rs[i].kind == REC_DELETE)
			atomic_fetch_add(&s->tombs, 1);
		if (tomb[i] == 1)
			atomic_fetch_add(&s->tombs_added, 1);
		else if (tomb[i] == 2)
			atomic_fetch_add(&s->tombs_replaced, 1);
		/* The index partition pays for its writes (DynamoDB charges
		 * a GSI's writes to the GSI). */
		throttle_charge(n, ps[i], true, rs[i].key, rs[i].kl,
		    2 * capacity_write_units(0, rs[i].size));
	}
unlock_map:
	pthread_rwlock_unlock(&n->parts.lock);
	store_batch_fini(&b);
}
