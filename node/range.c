/*
 * range.c — RPC_RANGE: read a key range of one partition, for Query and
 * Scan. The router names the range in storage keys; the node clamps it to
 * the partition it owns (a read never crosses a partition), walks it in
 * either direction, and stops after `limit` items or once the items read
 * add up to `max_bytes` (DynamoDB's 1 MB page counts items read, before
 * any filter). The filter, if any, runs here, so items it drops never
 * travel; they are still counted as read and paid for.
 *
 * A RocksDB iterator reads one consistent snapshot, so a page never sees
 * half of a concurrent write batch. No partition mutex is taken.
 */
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "expr_codec.h"
#include "index.h"
#include "capacity.h"
#include "keyenc.h"
#include "node.h"
#include "throttle.h"

typedef struct walk {
	arena *a;
	const expr_cond *filter;
	uint32_t limit;
	uint64_t max_bytes;
	rpc_response *resp;
	size_t cap;
	bool stopped; /* by limit or size, not by the end of the range */
	/* The partitions read (a keyed group's members; else one) and the
	 * item bytes read in each, which each pays for. */
	part **members;
	uint64_t *member_bytes;
	size_t n_members;
	part *one;          /* members of an unkeyed partition: no allocation */
	uint64_t one_bytes;
	int local;          /* -1 the items; k local index k's entries */
	bool fetch;         /* each entry read with its whole item */
	store *st;
	uint8_t *fetched;   /* the record of the last item fetched */
} walk;

/*
 * Reads the whole item of local index entry k for a read that asks for
 * attributes the index does not project: DynamoDB fetches them from the
 * table, and charges the fetch as a read of the item of its own, in 4 KB
 * units. *item and *len become the item; *extra the bytes to pay. A
 * missing item (deleted since the entry was read) leaves the entry.
 */
static kv_err
fetch_item(walk *w, const uint8_t *k, size_t kl, const uint8_t **item,
    size_t *len, uint64_t *extra)
{
	uint8_t *bk = arena_alloc(w->a, kl);
	size_t bkl = bk != NULL ? keyenc_local_base(k, kl, bk) : 0;
	uint8_t *rec = NULL;
	size_t rl = 0;
	bool found = false;
	*extra = 0;
	if (bk == NULL)
		return KV_ENOMEM;
	if (bkl == 0)
		return KV_CORRUPT;
	kv_err rv = store_get(w->st, bk, bkl, &rec, &rl, &found);
	if (rv != KV_OK || !found)
		return rv;
	if (rl < RECORD_HEADER) {
		free(rec);
		return KV_CORRUPT;
	}
	free(w->fetched);
	w->fetched = rec;
	*item = rec + RECORD_HEADER;
	*len = rl - RECORD_HEADER;
	*extra = ((uint64_t) record_size(rec) + 4095) / 4096 * 4096;
	return KV_OK;
}

static bool
keep(walk *w, const uint8_t *item, size_t len)
{
	rpc_response *r = w->resp;
	if (r->n_items == w->cap) {
		size_t cap = w->cap == 0 ? 64 : w->cap * 2;
		const uint8_t **items = arena_alloc(w->a, cap * sizeof(*items));
		size_t *lens = arena_alloc(w->a, cap * sizeof(*lens));
		if (items == NULL || lens == NULL)
			return false;
		if (r->n_items > 0) {
			memcpy(items, r->items, r->n_items * sizeof(*items));
			memcpy(lens, r->item_lens, r->n_items * sizeof(*lens));
		}
		r->items = items;
		r->item_lens = lens;
		w->cap = cap;
	}
	r->items[r->n_items] = (const uint8_t *) arena_dup(w->a, item, len);
	if (r->items[r->n_items] == NULL)
		return false;
	r->item_lens[r->n_items++] = len;
	return true;
}

static bool
visit(void *arg, const uint8_t *k, size_t kl, const uint8_t *v, size_t vl)
{
	walk *w = arg;
	rpc_response *r = w->resp;
	/* Items, or one local index's entries (core/keyenc.h). */
	if (keyenc_local_of(k, kl) != w->local)
		return true;
	if (vl < RECORD_HEADER) {
		r->code = KV_CORRUPT;
		return false;
	}
	/* An index entry's record: past its version; a tombstone is not an
	 * item (index.h). */
	size_t at = record_item_offset(v, vl);
	if (at == vl)
		return true;
	const uint8_t *item = v + at;
	size_t len = vl - at;
	uint64_t paid = record_size(v);
	if (w->fetch) {
		uint64_t extra;
		if ((r->code = fetch_item(w, k, kl, &item, &len, &extra)) !=
		    KV_OK)
			return false;
		paid += extra;
	}
	r->scanned++;
	r->read_bytes += paid;
	size_t m = 0;
	while (m + 1 < w->n_members && !part_holds_key(w->members[m], k, kl))
		m++;
	w->member_bytes[m] += paid;
	bool pass = true;
	if (w->filter != NULL) {
		value decoded;
		if (codec_decode(w->a, item, len, &decoded) != KV_OK) {
			r->code = KV_CORRUPT;
			return false;
		}
		pass = expr_eval_condition(w->filter, &decoded);
	}
	if (pass && !keep(w, item, len)) {
		r->code = KV_ENOMEM;
		return false;
	}
	if ((w->limit != 0 && r->scanned >= w->limit) ||
	    (w->max_bytes != 0 && r->read_bytes >= w->max_bytes)) {
		w->stopped = true;
		r->last_item = (const uint8_t *) arena_dup(w->a, item, len);
		r->last_item_len = len;
		if (r->last_item == NULL)
			r->code = KV_ENOMEM;
		return false;
	}
	return true;
}

/* Returns the larger (or smaller) of two byte strings. */
static const uint8_t *
pick(const uint8_t *x, size_t xl, const uint8_t *y, size_t yl, bool larger,
    size_t *len)
{
	int c = memcmp(x, y, xl < yl ? xl : yl);
	if (c == 0)
		c = xl < yl ? -1 : xl > yl;
	bool take_x = larger ? c >= 0 : c <= 0;
	*len = take_x ? xl : yl;
	return take_x ? x : y;
}

static int
by_kfrom(const void *a, const void *b)
{
	const part *x = *(part *const *) a, *y = *(part *const *) b;
	int c = memcmp(x->kfrom, y->kfrom, x->kfrom_len < y->kfrom_len ?
	    x->kfrom_len : y->kfrom_len);
	return c != 0 ? c : (int) x->kfrom_len - (int) y->kfrom_len;
}

/*
 * The partitions [lo, hi) reads: p, or the members of p's keyed group
 * whose keys meet the range, in key order. Needs the map lock.
 */
static kv_err
members_of(node *n, part *p, const uint8_t *lo, size_t lol,
    const uint8_t *hi, size_t hil, arena *a, walk *w)
{
	size_t k = 0;
	if (!p->keyed) {
		/* The common case, on every Query and Scan: no allocation. */
		w->one = p;
		w->one_bytes = 0;
		w->members = &w->one;
		w->member_bytes = &w->one_bytes;
		w->n_members = 1;
		return KV_OK;
	}
	w->members = arena_alloc(a, (n->parts.n + 1) * sizeof(*w->members));
	w->member_bytes = arena_alloc(a, (n->parts.n + 1) *
	    sizeof(*w->member_bytes));
	if (w->members == NULL || w->member_bytes == NULL)
		return KV_ENOMEM;
	for (size_t i = 0; i < n->parts.n; i++) {
		part *q = n->parts.p[i];
		if (q->table_id != p->table_id || !q->keyed ||
		    q->lo != p->lo)
			continue;
		uint8_t qlo[PART_BOUND_MAX], qhi[PART_BOUND_MAX];
		size_t qlol, qhil;
		part_bounds(q, qlo, &qlol, qhi, &qhil);
		/* Meets [lo, hi): qlo < hi and lo < qhi. */
		int c1 = memcmp(qlo, hi, qlol < hil ? qlol : hil);
		int c2 = memcmp(lo, qhi, lol < qhil ? lol : qhil);
		bool before_hi = c1 < 0 || (c1 == 0 && qlol < hil);
		bool after_lo = c2 < 0 || (c2 == 0 && lol < qhil);
		if (before_hi && after_lo)
			w->members[k++] = q;
	}
	qsort(w->members, k, sizeof(*w->members), by_kfrom);
	if (k == 0)
		w->members[k++] = p; /* an empty range: nothing read */
	memset(w->member_bytes, 0, k * sizeof(*w->member_bytes));
	w->n_members = k;
	return KV_OK;
}

void
range_serve(node *n, const rpc_request *req, arena *a, rpc_response *resp)
{
	expr_cond *filter = NULL;
	uint8_t plo[KEYENC_PREFIX], phi[KEYENC_PREFIX];
	size_t phil;

	if (req->table_id == 0 || (req->condition != NULL &&
	    expr_codec_decode_cond(a, req->condition, req->condition_len,
	    &filter) != KV_OK)) {
		resp->code = KV_PROTO;
		return;
	}
	pthread_rwlock_rdlock(&n->parts.lock);
	part *p = part_map_find_locked(&n->parts, req->table_id, req->part);
	if (p == NULL || p->epoch != req->epoch) {
		resp->code = KV_STALE_ROUTE;
		goto out;
	}
	/* A Query reads one collection: its key for the heat sketch. */
	const uint8_t *coll = NULL;
	if (req->range_lo != NULL && req->range_hi != NULL &&
	    req->range_lo_len > KEYENC_PREFIX &&
	    req->range_hi_len >= KEYENC_PREFIX &&
	    memcmp(req->range_lo, req->range_hi, KEYENC_PREFIX) == 0)
		coll = req->range_lo;
	size_t colll = coll != NULL ? req->range_lo_len : 0;
	/* The partition's own key range: [table|lo, table|last+1). */
	part_key_range(p, plo, phi, &phil);
	size_t lol, hil;
	const uint8_t *lo = pick(req->range_lo != NULL ? req->range_lo : plo,
	    req->range_lo != NULL ? req->range_lo_len : sizeof(plo), plo,
	    sizeof(plo), true, &lol);
	const uint8_t *hi = req->range_hi != NULL ? pick(req->range_hi,
	    req->range_hi_len, phi, phil, false, &hil) : phi;
	if (req->range_hi == NULL)
		hil = phil;
	walk w = { .a = a, .filter = filter, .limit = req->limit,
		.max_bytes = req->max_bytes, .resp = resp,
		.local = (int) (req->local & 0xFF) - 1,
		.fetch = (req->local & RPC_LOCAL_FETCH) != 0, .st = n->st };
	if (req->local > (RPC_LOCAL_FETCH | 0xFF) ||
	    (w.fetch && w.local < 0)) {
		resp->code = KV_PROTO;
		goto out;
	}
	/*
	 * A keyed group is read as one (the router names its first
	 * member): each member the range reaches must admit the read, and
	 * pays for what was read in its keys.
	 */
	if ((resp->code = members_of(n, p, lo, lol, hi, hil, a, &w)) !=
	    KV_OK)
		goto out;
	for (size_t i = 0; i < w.n_members; i++)
		if ((resp->code = throttle_admit(n, w.members[i], false, coll,
		    colll, resp)) != KV_OK)
			goto out;
	resp->code = KV_OK;
	kv_err rv = req->backward ?
	    store_scan_rev(n->st, lo, lol, hi, hil, visit, &w) :
	    store_scan(n->st, lo, lol, hi, hil, visit, &w);
	if (rv != KV_OK)
		resp->code = rv;
	free(w.fetched);
	/* What was read is paid for, whether the filter kept it or not. */
	for (size_t i = 0; i < w.n_members; i++)
		if (w.n_members == 1 || w.member_bytes[i] > 0)
			throttle_charge(n, w.members[i], false, coll, colll,
			    capacity_read_half_units(w.member_bytes[i],
			    req->consistent));
out:
	pthread_rwlock_unlock(&n->parts.lock);
}
