/*
 * assign.c — RPC_ASSIGN: the catalog node tells this node which partitions
 * of a table it owns, at which epochs. Partitions it newly owns take the
 * items its store holds in their hashes (none for a new table; the halves
 * of a split, or a partition moved in, find theirs); ones it keeps take
 * the new range and epoch (so routers holding an older epoch get
 * KV_STALE_ROUTE); ones it no longer owns are forgotten, with their items
 * where no partition of this node covers them any more (a move away).
 * An ASSIGN from an older catalog than one already served for the table
 * (req->min_version; a resend overtaken by a newer one) changes nothing.
 * Idempotent: the
 * catalog node resends until it hears KV_OK. The in-memory map is updated
 * before the batch is written: if the write fails or the node dies, the
 * catalog node resends (also after its own restart) and they converge.
 * The assignment also carries the table's billing mode and throughput,
 * which set each partition's token-bucket rates (throttle.h): UpdateTable
 * reaches the owners as a fresh ASSIGN.
 */
#include <stdlib.h>
#include <string.h>

#include "keyenc.h"
#include "node.h"
#include "throttle.h"

/* Whether a partition of this node of table_id overlaps [lo, last]. */
static bool
overlaps_locked(node *n, uint32_t table_id, uint64_t lo, uint64_t last)
{
	for (size_t i = 0; i < n->parts.n; i++) {
		const part *p = n->parts.p[i];
		if (p->table_id == table_id && p->lo <= last && lo <= p->last)
			return true;
	}
	return false;
}

/*
 * Whether this ASSIGN comes from an older catalog than one already
 * served for its table (a resent message overtaken by a newer one); if
 * not, remembers its version. Needs the map lock exclusive.
 */
static bool
stale_locked(node *n, uint32_t table_id, uint64_t version)
{
	part_map *m = &n->parts;
	if (version == 0)
		return false;
	for (size_t i = 0; i < m->n_seen; i++) {
		if (m->seen[i].table_id != table_id)
			continue;
		if (version < m->seen[i].version)
			return true;
		m->seen[i].version = version;
		return false;
	}
	void *g = realloc(m->seen, (m->n_seen + 1) * sizeof(*m->seen));
	if (g != NULL) {
		m->seen = g;
		m->seen[m->n_seen].table_id = table_id;
		m->seen[m->n_seen++].version = version;
	}
	return false;
}

/* Adds to b the deletion of hashes [lo, last] of table_id (keys in a). */
static kv_err
delete_hashes(uint32_t table_id, uint64_t lo, uint64_t last, arena *a,
    store_batch *b)
{
	uint8_t *klo = arena_alloc(a, KEYENC_PREFIX);
	uint8_t *khi = arena_alloc(a, KEYENC_PREFIX);
	size_t hil;
	if (klo == NULL || khi == NULL)
		return KV_ENOMEM;
	part_range_keys(table_id, lo, last, klo, khi, &hil);
	return store_batch_add(b, STORE_DELETE_RANGE, klo, KEYENC_PREFIX, khi,
	    hil);
}

/*
 * Adds to b the deletion of every hash of dropped partition d that none
 * of mine[0..n_mine) (sorted by lo) covers: its items moved away.
 */
static kv_err
delete_uncovered(const part *d, const partition *const *mine, size_t n_mine,
    arena *a, store_batch *b)
{
	uint64_t cur = d->lo;
	for (size_t i = 0; i < n_mine; i++) {
		const partition *tp = mine[i];
		if (tp->last < cur || tp->lo > d->last)
			continue;
		if (tp->lo > cur) {
			kv_err rv = delete_hashes(d->table_id, cur, tp->lo - 1,
			    a, b);
			if (rv != KV_OK)
				return rv;
		}
		if (tp->last >= d->last)
			return KV_OK;
		cur = tp->last + 1;
	}
	return delete_hashes(d->table_id, cur, d->last, a, b);
}

/* Counts the items of catalog partition tp of table table_id. */
static kv_err
count_tp(store *st, uint32_t table_id, const partition *tp, uint64_t *items,
    uint64_t *bytes)
{
	part q = { .table_id = table_id, .lo = tp->lo, .last = tp->last };
	uint8_t lo[PART_BOUND_MAX], hi[PART_BOUND_MAX];
	size_t lol, hil;
	part_set_keys(&q, tp);
	part_bounds(&q, lo, &lol, hi, &hil);
	return part_count_keys(st, lo, lol, hi, hil, items, bytes);
}

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
	const partition **mine = arena_alloc(a, (t->n_parts + 1) *
	    sizeof(*mine));
	uint64_t *items = arena_alloc(a, (t->n_parts + 1) * sizeof(*items));
	uint64_t *bytes = arena_alloc(a, (t->n_parts + 1) * sizeof(*bytes));
	bool *counted = arena_alloc(a, (t->n_parts + 1) * sizeof(*counted));
	if (keys == NULL || vals == NULL || mine == NULL || items == NULL ||
	    bytes == NULL || counted == NULL) {
		resp->code = KV_ENOMEM;
		return;
	}
	size_t n_mine = 0;
	for (size_t i = 0; i < t->n_parts; i++)
		if (t->parts[i].node == req->node)
			mine[n_mine++] = &t->parts[i];
	/*
	 * A partition new here over hashes no partition of this node holds
	 * (one moved in) is counted before the lock: no one writes there.
	 */
	memset(counted, 0, (t->n_parts + 1) * sizeof(*counted));
	pthread_rwlock_rdlock(&n->parts.lock);
	for (size_t i = 0; i < n_mine; i++)
		counted[i] = part_map_find_locked(&n->parts, t->id,
		    mine[i]->id) == NULL && !overlaps_locked(n, t->id,
		    mine[i]->lo, mine[i]->last);
	pthread_rwlock_unlock(&n->parts.lock);
	for (size_t i = 0; i < n_mine; i++)
		if (counted[i] && !move_tally(n, t->id, mine[i]->id, &items[i],
		    &bytes[i]) && count_tp(n->st, t->id, mine[i], &items[i],
		    &bytes[i]) != KV_OK)
			counted[i] = false;
	pthread_rwlock_wrlock(&n->parts.lock);
	resp->code = KV_OK;
	if (stale_locked(n, t->id, req->min_version))
		goto out; /* an older catalog's: nothing to do */
	/*
	 * New partitions over hashes a partition of this node held (a
	 * split) are counted here, under the lock, before anything changes.
	 */
	for (size_t i = 0; i < n_mine && resp->code == KV_OK; i++) {
		const partition *tp = mine[i];
		if (part_map_find_locked(&n->parts, t->id, tp->id) != NULL)
			continue;
		if (!counted[i] || overlaps_locked(n, t->id, tp->lo, tp->last))
			resp->code = count_tp(n->st, t->id, tp, &items[i],
			    &bytes[i]);
	}
	for (size_t i = 0; i < n_mine && resp->code == KV_OK; i++) {
		const partition *tp = mine[i];
		part *p = part_map_find_locked(&n->parts, t->id, tp->id);
		bool fresh = p == NULL;
		if (fresh) {
			resp->code = part_map_add_locked(&n->parts, t->id,
			    tp->id, tp->lo, tp->last, tp->epoch, &p);
			if (resp->code != KV_OK)
				break;
			p->items = items[i];
			p->bytes = bytes[i];
		}
		bool prov = t->billing == BILLING_PROVISIONED;
		throttle_configure(n, p, prov ? t->rcu : 0, prov ? t->wcu : 0,
		    (uint32_t) t->n_parts, fresh);
		p->lo = tp->lo;
		p->last = tp->last;
		p->epoch = tp->epoch;
		part_set_keys(p, tp);
		/* Its keys may have changed: known sizes start over. */
		size_index_fini(&p->sizes);
		part_meta_key(t->id, tp->id, keys[i]);
		part_meta_value(p, p->items, p->bytes, vals[i]);
		resp->code = store_batch_add(&b, STORE_PUT, keys[i],
		    PART_META_KEY_LEN, vals[i], PART_META_VAL_LEN);
	}
	/*
	 * Partitions of this table that the catalog now places elsewhere or
	 * replaced (a split): their records go, so requests for them get
	 * KV_STALE_ROUTE, and so do their items where no partition of this
	 * node covers them any more (they moved to another node), in the
	 * same batch.
	 */
	uint8_t (*gone)[PART_META_KEY_LEN] = arena_alloc(a,
	    (n->parts.n + 1) * PART_META_KEY_LEN);
	part *drop[64];
	size_t n_drop = 0;
	if (gone == NULL && resp->code == KV_OK)
		resp->code = KV_ENOMEM;
	for (size_t i = 0; i < n->parts.n && resp->code == KV_OK; i++) {
		part *p = n->parts.p[i];
		bool kept = false;
		if (p->table_id != t->id)
			continue;
		for (size_t k = 0; k < n_mine; k++)
			kept |= mine[k]->id == p->id;
		if (kept)
			continue;
		if (n_drop == sizeof(drop) / sizeof(drop[0])) {
			resp->code = KV_BUSY; /* the catalog node resends */
			break;
		}
		part_meta_key(t->id, p->id, gone[n_drop]);
		resp->code = store_batch_add(&b, STORE_DELETE, gone[n_drop],
		    PART_META_KEY_LEN, NULL, 0);
		if (resp->code == KV_OK)
			resp->code = delete_uncovered(p, mine, n_mine, a, &b);
		drop[n_drop++] = p;
	}
	if (resp->code == KV_OK)
		resp->code = store_write(n->st, &b);
	if (resp->code == KV_OK)
		for (size_t i = 0; i < n_drop; i++)
			part_map_remove_locked(&n->parts, drop[i]);
out:
	pthread_rwlock_unlock(&n->parts.lock);
	store_batch_fini(&b);
}
