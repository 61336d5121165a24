/*
 * local.c — local secondary indexes: entries written in the base write's
 * own batch, beside the item, and the size of each item collection
 * (../index.h, core/keyenc.h for the keys).
 *
 * An entry's record is a plain record (the projected item's size, then
 * the projected item), like an item's: there is no version, because the
 * entry changes in the same batch as its item, under the same partition
 * mutex, so the two can never disagree. A move or split carries entries
 * and size records with their hash, like the items.
 *
 * A collection's size record holds, as a little-endian u64, the sum of
 * the sizes of its items and of their entries in every local index, an
 * entry counting its projected item and 100 bytes, as DynamoDB sizes an
 * index entry. It is absent for an empty collection.
 */
#include "index_int.h"

#define ENTRY_OVERHEAD 100 /* DynamoDB's per-entry storage overhead */

/*
 * Adds to b the change of item's entry in local index number k (d) from
 * old to cur; its size change to *delta and its cost to *half.
 */
static kv_err
local_one(const table *t, const index_def *d, int k, const value *pk,
    const value *old, const value *cur, arena *a, store_batch *b,
    int64_t *delta, uint64_t *half)
{
	const value *items[2] = { old, cur };
	uint8_t *keys[2] = { NULL, NULL };
	size_t kls[2] = { 0, 0 };
	value proj[2];
	kv_err rv = KV_OK;
	*half = 0;
	for (int i = 0; i < 2 && rv == KV_OK; i++) {
		const value *isk = index_attr_of(items[i], &d->range);
		const value *sk = index_attr_of(items[i], &t->range);
		if (items[i] == NULL || isk == NULL ||
		    isk->type != d->range.type || sk == NULL)
			continue; /* not in the index: a sparse one */
		rv = keyenc_local_key(t->id, k, pk, isk, sk, &keys[i],
		    &kls[i]);
		if (rv == KV_OK)
			rv = index_project(t, d, items[i], a, &proj[i]);
	}
	bool had = keys[0] != NULL, has = keys[1] != NULL;
	bool moved = had && (!has || kls[0] != kls[1] ||
	    memcmp(keys[0], keys[1], kls[0]) != 0);
	uint32_t os = had ? (uint32_t) item_size(&proj[0]) : 0;
	uint32_t ns = has ? (uint32_t) item_size(&proj[1]) : 0;
	if (rv == KV_OK && has && (moved || !had ||
	    !value_equal(&proj[0], &proj[1]))) {
		size_t cl = codec_size(&proj[1]);
		uint8_t *v = arena_alloc(a, RECORD_HEADER + cl);
		uint8_t *kc = (uint8_t *) arena_dup(a, keys[1], kls[1]);
		if (v == NULL || kc == NULL) {
			rv = KV_ENOMEM;
		} else {
			bytes_put_le32(v, ns);
			codec_write(&proj[1], v + RECORD_HEADER);
			rv = store_batch_add(b, STORE_PUT, kc, kls[1], v,
			    RECORD_HEADER + cl);
			*half += 2 * capacity_write_units(had && !moved ? os :
			    0, ns);
		}
	}
	if (rv == KV_OK && moved) {
		uint8_t *kc = (uint8_t *) arena_dup(a, keys[0], kls[0]);
		rv = kc == NULL ? KV_ENOMEM : store_batch_add(b,
		    STORE_DELETE, kc, kls[0], NULL, 0);
		*half += 2 * capacity_write_units(os, 0);
	}
	*delta += (has ? (int64_t) ns + ENTRY_OVERHEAD : 0) -
	    (had ? (int64_t) os + ENTRY_OVERHEAD : 0);
	free(keys[0]);
	free(keys[1]);
	return rv;
}

kv_err
index_local_write(node *n, const table *t, const value *old,
    const value *cur, arena *a, store_batch *b, index_units *u, size_t *n_u,
    uint64_t *coll)
{
	const value *pk = index_attr_of(cur != NULL ? cur : old, &t->hash);
	int64_t delta = (cur != NULL ? (int64_t) item_size(cur) : 0) -
	    (old != NULL ? (int64_t) item_size(old) : 0);
	kv_err rv = KV_OK;
	if (pk == NULL)
		return KV_CORRUPT;
	for (size_t i = 0; rv == KV_OK && i < t->n_indexes; i++) {
		const index_def *d = &t->indexes[i];
		uint64_t half;
		if (!d->local)
			continue;
		int k = index_local_no(t, d);
		rv = local_one(t, d, k, pk, old, cur, a, b, &delta, &half);
		if (rv == KV_OK && u != NULL && half > 0)
			u[(*n_u)++] = (index_units) { RPC_LOCAL_INDEX_ID(k), half };
	}
	if (rv != KV_OK)
		return rv;

	/* The collection's size: read, checked, written in the batch. */
	uint8_t *sk, *v = NULL;
	size_t skl, vl = 0;
	bool found = false;
	if ((rv = keyenc_size_key(t->id, pk, &sk, &skl)) != KV_OK)
		return rv;
	rv = store_get(n->st, sk, skl, &v, &vl, &found);
	uint64_t size = found && vl == 8 ? bytes_get_le64(v) : 0;
	free(v);
	if (rv == KV_OK && found && vl != 8)
		rv = KV_CORRUPT;
	uint64_t now = delta < 0 && (uint64_t) -delta > size ? 0 :
	    size + (uint64_t) delta;
	/* A write that grows a collection past its limit is refused; one
	 * that shrinks it, or keeps its size, goes through (DynamoDB). */
	if (rv == KV_OK && delta > 0 && n->cfg.collection_max > 0 &&
	    now > n->cfg.collection_max)
		rv = KV_COLL_FULL;
	uint8_t *kc = rv == KV_OK ? (uint8_t *) arena_dup(a, sk, skl) : NULL;
	uint8_t *w = rv == KV_OK ? arena_alloc(a, 8) : NULL;
	free(sk);
	if (rv == KV_OK && (kc == NULL || w == NULL))
		rv = KV_ENOMEM;
	if (rv != KV_OK || now == size)
		goto out;
	bytes_put_le64(w, now);
	rv = now > 0 ? store_batch_add(b, STORE_PUT, kc, skl, w, 8) :
	    store_batch_add(b, STORE_DELETE, kc, skl, NULL, 0);
out:
	*coll = rv == KV_OK ? now : size;
	return rv;
}
