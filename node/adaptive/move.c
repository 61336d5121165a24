/*
 * move.c — the owners' side of a partition move (see move.h): the
 * source's write set and verbs, and the target's steps.
 */
#include "move.h"
#include "clock.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "cluster.h"
#include "index.h"
#include "keyenc.h"
#include "node.h"
#include "part.h"
#include "txn.h"

/* ---- the write set ---- */

enum { SLOT_EMPTY = 0, SLOT_FULL, SLOT_GONE };

struct key_slot {
	uint8_t state;
	uint64_t h;
	uint8_t *key;
	size_t len;
};

static void
set_free(key_set *s)
{
	for (size_t i = 0; i < s->cap; i++)
		if (s->slots[i].state == SLOT_FULL)
			free(s->slots[i].key);
	free(s->slots);
	memset(s, 0, sizeof(*s));
}

/* Places an owned key; the set has room and does not hold it. */
static void
set_place(key_set *s, uint64_t h, uint8_t *key, size_t len)
{
	size_t i = (size_t) h & (s->cap - 1);
	while (s->slots[i].state == SLOT_FULL)
		i = (i + 1) & (s->cap - 1);
	s->slots[i] = (struct key_slot) { SLOT_FULL, h, key, len };
	s->n++;
}

static bool
set_grow(key_set *s)
{
	size_t cap = s->cap == 0 ? 64 : s->cap * 2;
	key_set g = { .slots = calloc(cap, sizeof(struct key_slot)),
	    .cap = cap };
	if (g.slots == NULL)
		return false;
	for (size_t i = 0; i < s->cap; i++)
		if (s->slots[i].state == SLOT_FULL)
			set_place(&g, s->slots[i].h, s->slots[i].key,
			    s->slots[i].len);
	free(s->slots);
	*s = g;
	return true;
}

/*
 * Adds key (owned: taken over when `owned`, else copied); false when
 * memory runs out (an owned key is then freed).
 */
static bool
set_put(key_set *s, uint8_t *key, size_t len, bool owned)
{
	uint64_t h = XXH3_64bits(key, len);
	if (s->cap > 0) {
		size_t i = (size_t) h & (s->cap - 1);
		for (size_t k = 0; k < s->cap &&
		    s->slots[i].state != SLOT_EMPTY; k++) {
			struct key_slot *e = &s->slots[i];
			if (e->state == SLOT_FULL && e->h == h &&
			    e->len == len && memcmp(e->key, key, len) == 0) {
				if (owned)
					free(key);
				return true;
			}
			i = (i + 1) & (s->cap - 1);
		}
	}
	/* Tombstones count as used, so probes always end. */
	size_t used = 0;
	for (size_t i = 0; s->cap > 0 && (s->n + 1) * 2 > s->cap / 2 &&
	    i < s->cap; i++)
		used += s->slots[i].state != SLOT_EMPTY;
	if ((s->cap == 0 || (s->n + 1) * 2 > s->cap || used * 4 > s->cap * 3)
	    && !set_grow(s)) {
		if (owned)
			free(key);
		return false;
	}
	uint8_t *copy = key;
	if (!owned) {
		if ((copy = malloc(len > 0 ? len : 1)) == NULL)
			return false;
		memcpy(copy, key, len);
	}
	set_place(s, h, copy, len);
	return true;
}

void
move_note(part *p, const uint8_t *key, size_t key_len)
{
	if (p->move_id == 0 || p->dirty_lost)
		return;
	if (!set_put(&p->dirty, (uint8_t *) key, key_len, false))
		p->dirty_lost = true;
}

void
move_forget(part *p)
{
	set_free(&p->dirty);
	set_free(&p->inflight);
	p->move_id = 0;
	p->dirty_seq = 0;
	p->dirty_lost = false;
}

/*
 * The last batch sent was not applied (its number was not acknowledged:
 * the answer was lost, or the request came twice): its keys go back
 * to the write set to be sent again. Needs p->mu.
 */
static void
resend_inflight(part *p)
{
	key_set *f = &p->inflight;
	for (size_t i = 0; i < f->cap; i++) {
		struct key_slot *e = &f->slots[i];
		if (e->state != SLOT_FULL)
			continue;
		if (!set_put(&p->dirty, e->key, e->len, true))
			p->dirty_lost = true;
		e->key = NULL;
		e->state = SLOT_GONE;
	}
	f->n = 0;
	set_free(f);
}

/* ---- the source ---- */

/* Collects key-record pairs into the answer (blobs in a). */
typedef struct chunk {
	arena *a;
	const uint8_t **blobs;
	size_t *lens;
	size_t n, cap;
	uint64_t bytes, max_bytes;
	const uint8_t *last; /* last key taken (in a) */
	size_t last_len;
	bool full, failed;
} chunk;

static bool
chunk_add(chunk *c, const uint8_t *k, size_t kl, const uint8_t *v,
    size_t vl)
{
	if (c->n == c->cap) {
		size_t cap = c->cap == 0 ? 256 : c->cap * 2;
		const uint8_t **b = arena_alloc(c->a, cap * sizeof(*b));
		size_t *l = arena_alloc(c->a, cap * sizeof(*l));
		if (b == NULL || l == NULL) {
			c->failed = true;
			return false;
		}
		if (c->n > 0) {
			memcpy(b, c->blobs, c->n * sizeof(*b));
			memcpy(l, c->lens, c->n * sizeof(*l));
		}
		c->blobs = b;
		c->lens = l;
		c->cap = cap;
	}
	size_t len;
	uint8_t *blob = wire_pair_make(c->a, k, kl, v, vl, &len);
	if (blob == NULL) {
		c->failed = true;
		return false;
	}
	c->blobs[c->n] = blob;
	c->lens[c->n++] = len;
	c->last = blob + 4;
	c->last_len = kl;
	c->bytes += len;
	return true;
}

static bool
pull_one(void *arg, const uint8_t *k, size_t kl, const uint8_t *v, size_t vl)
{
	chunk *c = arg;
	if (c->bytes >= c->max_bytes) {
		c->full = true;
		return false;
	}
	return chunk_add(c, k, kl, v, vl);
}

/* The source's partition of req, with its move checked. Needs the lock. */
static part *
source_part(node *n, const rpc_request *req, rpc_response *resp)
{
	part *p = part_map_find_locked(&n->parts, req->table_id, req->part);
	if (p == NULL) {
		resp->code = KV_STALE_ROUTE;
		return NULL;
	}
	return p;
}

static void
no_move(arena *a, rpc_response *resp)
{
	resp->code = KV_BUSY;
	resp->message = "no such move on this node (it restarted?)";
}

static void
source_begin(node *n, const rpc_request *req, rpc_response *resp)
{
	pthread_rwlock_rdlock(&n->parts.lock);
	part *p = source_part(n, req, resp);
	if (p != NULL) {
		pthread_mutex_lock(&p->mu);
		if (p->epoch != req->epoch) {
			resp->code = KV_STALE_ROUTE;
		} else if (p->move_id != req->move_id &&
		    txn_range_busy(n, p->table_id, p->lo, p->last)) {
			/* Prepared transactions hold items of it: the move
			 * waits for them (node/txn.h). */
			resp->code = KV_BUSY;
			resp->message = "transactions are prepared on the "
			    "partition";
		} else {
			if (p->move_id != req->move_id) {
				move_forget(p);
				p->move_id = req->move_id;
			}
			resp->code = KV_OK;
		}
		pthread_mutex_unlock(&p->mu);
	}
	pthread_rwlock_unlock(&n->parts.lock);
}

static bool
moving(part *p, const rpc_request *req)
{
	pthread_mutex_lock(&p->mu);
	bool ok = req->move_id != 0 && p->move_id == req->move_id;
	pthread_mutex_unlock(&p->mu);
	return ok;
}

static void
source_pull(node *n, const rpc_request *req, arena *a, rpc_response *resp)
{
	uint8_t lo[KEYENC_PREFIX], hi[KEYENC_PREFIX];
	size_t hil;
	chunk c = { .a = a, .max_bytes = req->max_bytes != 0 &&
	    req->max_bytes < MOVE_CHUNK_BYTES ? req->max_bytes :
	    MOVE_CHUNK_BYTES };

	pthread_rwlock_rdlock(&n->parts.lock);
	part *p = source_part(n, req, resp);
	if (p == NULL)
		goto out;
	if (!moving(p, req)) {
		no_move(a, resp);
		goto out;
	}
	part_key_range(p, lo, hi, &hil);
	const uint8_t *from = lo;
	size_t froml = sizeof(lo);
	if (req->range_lo_len > 0) {
		size_t m = req->range_lo_len < froml ? req->range_lo_len :
		    froml;
		int cmp = memcmp(req->range_lo, lo, m);
		if (cmp > 0 || (cmp == 0 && req->range_lo_len > froml)) {
			from = req->range_lo;
			froml = req->range_lo_len;
		}
	}
	resp->code = store_scan(n->st, from, froml, hi, hil, pull_one, &c);
	if (resp->code == KV_OK && c.failed)
		resp->code = KV_ENOMEM;
	if (resp->code != KV_OK)
		goto out;
	resp->blobs = c.blobs;
	resp->blob_lens = c.lens;
	resp->n_blobs = c.n;
	resp->found = c.full; /* more to come */
	if (c.full) {
		/* The next chunk starts just after the last key taken. */
		uint8_t *next = arena_alloc(a, c.last_len + 1);
		if (next == NULL) {
			resp->code = KV_ENOMEM;
			goto out;
		}
		memcpy(next, c.last, c.last_len);
		next[c.last_len] = 0;
		resp->last_item = next;
		resp->last_item_len = c.last_len + 1;
	}
out:
	pthread_rwlock_unlock(&n->parts.lock);
}

static void
source_dirty(node *n, const rpc_request *req, arena *a, rpc_response *resp)
{
	chunk c = { .a = a, .max_bytes = MOVE_CHUNK_BYTES };

	pthread_rwlock_rdlock(&n->parts.lock);
	part *p = source_part(n, req, resp);
	if (p == NULL)
		goto out;
	pthread_mutex_lock(&p->mu);
	if (req->move_id == 0 || p->move_id != req->move_id) {
		no_move(a, resp);
	} else if (p->dirty_lost) {
		resp->code = KV_ENOMEM;
		resp->message = "the move's write set ran out of memory";
	} else {
		/*
		 * Each batch has a number; the target acknowledges the last
		 * one it applied with its next ask. Until then the batch's
		 * keys are kept, and sent again if the acknowledgement does
		 * not come: a lost answer or a repeated request (peer.h)
		 * loses nothing.
		 */
		if (req->ack == p->dirty_seq)
			set_free(&p->inflight);
		else
			resend_inflight(p);
		key_set *s = &p->dirty;
		resp->code = p->dirty_lost ? KV_ENOMEM : KV_OK;
		for (size_t i = 0; i < s->cap && c.bytes < c.max_bytes &&
		    resp->code == KV_OK; i++) {
			struct key_slot *e = &s->slots[i];
			if (e->state != SLOT_FULL)
				continue;
			uint8_t *v = NULL;
			size_t vl = 0;
			bool found = false;
			resp->code = store_get(n->st, e->key, e->len, &v, &vl,
			    &found);
			if (resp->code != KV_OK)
				break;
			bool ok = chunk_add(&c, e->key, e->len, v,
			    found ? vl : 0);
			free(v);
			if (!ok || !set_put(&p->inflight, e->key, e->len,
			    true)) {
				/* The key is gone (freed): the move fails. */
				if (!ok)
					free(e->key);
				p->dirty_lost = true;
				e->key = NULL;
				e->state = SLOT_GONE;
				s->n--;
				resp->code = KV_ENOMEM;
				break;
			}
			e->key = NULL;
			e->state = SLOT_GONE;
			s->n--;
		}
		if (s->n == 0 && s->cap > 0)
			memset(s->slots, 0, s->cap * sizeof(*s->slots));
		resp->scanned = (uint32_t) (s->n > UINT32_MAX ? UINT32_MAX :
		    s->n);
		resp->seq = ++p->dirty_seq;
	}
	pthread_mutex_unlock(&p->mu);
	if (resp->code == KV_OK) {
		resp->blobs = c.blobs;
		resp->blob_lens = c.lens;
		resp->n_blobs = c.n;
	}
out:
	pthread_rwlock_unlock(&n->parts.lock);
}

static void
source_fence(node *n, const rpc_request *req, arena *a, rpc_response *resp)
{
	uint8_t key[PART_META_KEY_LEN], val[PART_META_VAL_LEN];
	store_batch b;

	store_batch_init(&b);
	/* Exclusive: no request of the partition is under way after this. */
	pthread_rwlock_wrlock(&n->parts.lock);
	part *p = source_part(n, req, resp);
	if (p == NULL)
		goto out;
	if (req->move_id == 0 || p->move_id != req->move_id) {
		no_move(a, resp);
		goto out;
	}
	resp->code = KV_OK;
	if (p->epoch >= req->epoch)
		goto out; /* fenced already */
	uint64_t old = p->epoch;
	p->epoch = req->epoch;
	part_meta_key(p->table_id, p->id, key);
	part_meta_value(p, p->items, p->bytes, val);
	if ((resp->code = store_batch_add(&b, STORE_PUT, key, sizeof(key),
	    val, sizeof(val))) != KV_OK ||
	    (resp->code = store_write(n->st, &b)) != KV_OK)
		p->epoch = old;
out:
	pthread_rwlock_unlock(&n->parts.lock);
	store_batch_fini(&b);
}

static void
source_end(node *n, const rpc_request *req, rpc_response *resp)
{
	pthread_rwlock_rdlock(&n->parts.lock);
	part *p = part_map_find_locked(&n->parts, req->table_id, req->part);
	if (p != NULL) {
		pthread_mutex_lock(&p->mu);
		if (p->move_id == req->move_id)
			move_forget(p);
		pthread_mutex_unlock(&p->mu);
	}
	pthread_rwlock_unlock(&n->parts.lock);
	resp->code = KV_OK;
}

/* ---- the target ---- */

/* Whether a partition this node owns overlaps hashes [lo, last] of t. */
static bool
overlaps_owned(node *n, uint32_t table_id, uint64_t lo, uint64_t last)
{
	bool any = false;
	pthread_rwlock_rdlock(&n->parts.lock);
	for (size_t i = 0; i < n->parts.n; i++) {
		part *p = n->parts.p[i];
		if (p->table_id == table_id && p->lo <= last && lo <= p->last)
			any = true;
	}
	pthread_rwlock_unlock(&n->parts.lock);
	return any;
}

static bool
any_key(void *arg, const uint8_t *k, size_t kl, const uint8_t *v, size_t vl)
{
	(void) k;
	(void) kl;
	(void) v;
	(void) vl;
	*(bool *) arg = true;
	return false;
}

/*
 * Deletes every key of hashes [lo, last] of table_id, durably. A range
 * that holds none is left alone: a deletion would sit above the copy's
 * files and keep them from the last level (store.h's sorted load).
 */
static kv_err
clear_range(node *n, uint32_t table_id, uint64_t lo, uint64_t last)
{
	uint8_t klo[KEYENC_PREFIX], khi[KEYENC_PREFIX];
	size_t hil;
	store_batch b;
	bool any = false;
	part_range_keys(table_id, lo, last, klo, khi, &hil);
	kv_err rv = store_scan(n->st, klo, sizeof(klo), khi, hil, any_key,
	    &any);
	if (rv != KV_OK || !any)
		return rv;
	store_batch_init(&b);
	rv = store_batch_add(&b, STORE_DELETE_RANGE, klo, sizeof(klo), khi,
	    hil);
	if (rv == KV_OK)
		rv = store_write(n->st, &b);
	store_batch_fini(&b);
	return rv;
}

/* Drops a copy not yet applied. */
static void
load_drop(move_in *m)
{
	if (m->load != NULL)
		store_load_abort(m->load);
	m->load = NULL;
}

/* Applies the copy (all its chunks at once), if one is open. */
static kv_err
load_apply(move_in *m)
{
	kv_err rv = m->load != NULL ? store_load_finish(m->load) : KV_OK;
	m->load = NULL;
	return rv;
}

/*
 * Applies the pairs of a MOVE_DIRTY answer in one durable batch, or adds
 * those of a MOVE_PULL answer to the copy's load (applied with the last
 * chunk: the chunks come in key order, and no catch-up runs before the
 * copy ends); every key must be of the move's table and range.
 */
static kv_err
apply_pairs(node *n, move_in *m, const rpc_response *got, bool copy)
{
	store_batch b;
	kv_err rv = KV_OK;
	uint64_t items = m->items, bytes = m->bytes;
	if (copy && m->load == NULL && got->n_blobs > 0 &&
	    (rv = store_load_open(n->st, &m->load)) != KV_OK)
		return rv;
	/* Index tombstones arrive stamped by another node's clock: each is
	 * stamped again by this one's (index.h, index_restamp). */
	uint8_t *stamped = malloc((got->n_blobs + 1) * RECORD_TOMBSTONE_LEN);
	if (stamped == NULL)
		return KV_ENOMEM;
	store_batch_init(&b);
	for (size_t i = 0; i < got->n_blobs && rv == KV_OK; i++) {
		const uint8_t *k, *v;
		size_t kl, vl, sl;
		if (!wire_pair_read(got->blobs[i], got->blob_lens[i], &k, &kl,
		    &v, &vl) || kl < KEYENC_PREFIX ||
		    keyenc_key_table(k) != m->table_id ||
		    keyenc_key_hash(k) < m->lo ||
		    keyenc_key_hash(k) > m->last ||
		    (vl > 0 && vl < RECORD_HEADER)) {
			rv = KV_PROTO;
			break;
		}
		/*
		 * The tally of what the range holds here: a chunk's keys are
		 * new (the range was cleared, chunks do not overlap, and no
		 * catch-up runs before the copy ends); a caught-up key may
		 * replace one copied before.
		 */
		if (!keyenc_is_item(k, kl)) {
			/* A local index's entry or a collection's size: moved,
			 * not tallied (core/keyenc.h). */
		} else if (!copy) {
			uint8_t *old = NULL;
			size_t ol = 0;
			bool found = false;
			if ((rv = store_get(n->st, k, kl, &old, &ol, &found)) !=
			    KV_OK)
				break;
			if (found && ol >= RECORD_HEADER) {
				/* An index tombstone is no item (index.h). */
				if (record_item_offset(old, ol) < ol)
					items--;
				bytes -= record_size(old);
			}
			free(old);
		}
		if (vl > 0 && keyenc_is_item(k, kl)) {
			if (record_item_offset(v, vl) < vl)
				items++;
			bytes += record_size(v);
			uint8_t *t = stamped + i * RECORD_TOMBSTONE_LEN;
			if ((sl = index_restamp(n, v, vl, t)) > 0) {
				v = t;
				vl = sl;
			}
		}
		if (copy)
			rv = store_load_put(m->load, k, kl, vl > 0 ? v : NULL,
			    vl);
		else
			rv = vl > 0 ? store_batch_add(&b, STORE_PUT, k, kl, v,
			    vl) : store_batch_add(&b, STORE_DELETE, k, kl, NULL,
			    0);
	}
	if (rv == KV_OK && b.n > 0)
		rv = store_write(n->st, &b);
	store_batch_fini(&b);
	free(stamped);
	if (rv == KV_OK) {
		m->items = items;
		m->bytes = bytes;
	}
	return rv;
}

bool
move_tally(node *n, uint32_t table_id, uint32_t part_id, uint64_t *items,
    uint64_t *bytes)
{
	pthread_mutex_lock(&n->move_mu);
	bool ok = n->move.id != 0 && n->move.table_id == table_id &&
	    n->move.part_id == part_id;
	if (ok) {
		*items = n->move.items;
		*bytes = n->move.bytes;
	}
	pthread_mutex_unlock(&n->move_mu);
	return ok;
}

/* One pull from the source for the target's move m. */
static kv_err
pull(node *n, const move_in *m, rpc_op op, const rpc_request *req,
    arena *a, rpc_response *got)
{
	rpc_request pr = {
		.op = op, .table_id = m->table_id, .part = m->part_id,
		.move_id = m->id, .range_lo = req->range_lo,
		.range_lo_len = req->range_lo_len,
		.max_bytes = MOVE_CHUNK_BYTES, .ack = m->dirty_ack,
	};
	kv_err rv = move_call(n, m->source, &pr, a, got, MOVE_PULL_MS);
	if (rv == KV_OK)
		rv = got->code;
	return rv;
}

kv_err
move_call(node *n, uint32_t i, const rpc_request *req, arena *a,
    rpc_response *resp, int timeout_ms)
{
	kv_err rv;
	int64_t end = clock_mono_ms() + MOVE_RECONNECT_MS;
	for (;;) {
		memset(resp, 0, sizeof(*resp));
		if (i == n->index) {
			node_dispatch(n, req, a, resp);
			return resp->code;
		}
		rv = cluster_tell_ms(n, i, req, a, resp, timeout_ms);
		if (rv != KV_UNAVAILABLE || clock_mono_ms() >= end)
			break;
		struct timespec ts = { 0, 50 * 1000000L };
		nanosleep(&ts, NULL);
	}
	return rv == KV_OK ? resp->code : rv;
}

static void
copy_forget(move_in *m)
{
	free(m->copy_at);
	free(m->copy_next);
	m->copy_at = m->copy_next = NULL;
	m->copy_at_len = m->copy_next_len = 0;
	m->copied_any = m->copy_more = false;
	m->copy_count = 0;
}

static bool
same(const uint8_t *a, size_t al, const uint8_t *b, size_t bl)
{
	return al == bl && (al == 0 || memcmp(a, b, al) == 0);
}

static uint8_t *
dup_bytes(const uint8_t *b, size_t len)
{
	uint8_t *d = malloc(len > 0 ? len : 1);
	if (d != NULL && len > 0)
		memcpy(d, b, len);
	return d;
}

static void
target_step(node *n, const rpc_request *req, arena *a, rpc_response *resp)
{
	move_in *m = &n->move;
	rpc_response got;

	memset(&got, 0, sizeof(got));
	pthread_mutex_lock(&n->move_mu);
	if (req->limit == MOVE_STEP_START) {
		const table *t = req->table;
		const partition *tp = NULL;
		for (size_t i = 0; t != NULL && i < t->n_parts; i++)
			if (t->parts[i].id == req->part)
				tp = &t->parts[i];
		if (tp == NULL || req->move_id == 0 ||
		    req->node >= n->cfg.n_nodes || req->node == n->index) {
			resp->code = KV_PROTO;
			goto out;
		}
		if (overlaps_owned(n, t->id, tp->lo, tp->last)) {
			resp->code = KV_EINVAL;
			resp->message = "the target owns part of that range";
			goto out;
		}
		copy_forget(m);
		load_drop(m);
		*m = (move_in) { .id = req->move_id, .table_id = t->id,
		    .part_id = tp->id, .lo = tp->lo, .last = tp->last,
		    .source = req->node };
		resp->code = clear_range(n, m->table_id, m->lo, m->last);
		if (resp->code != KV_OK)
			m->id = 0;
		goto out;
	}
	if (req->limit == MOVE_STEP_ABORT) {
		if (m->id != 0 && (req->move_id == 0 || m->id == req->move_id)) {
			load_drop(m);
			if (!overlaps_owned(n, m->table_id, m->lo, m->last))
				clear_range(n, m->table_id, m->lo, m->last);
			copy_forget(m);
			m->id = 0;
		}
		resp->code = KV_OK;
		goto out;
	}
	if (m->id == 0 || m->id != req->move_id) {
		no_move(a, resp);
		goto out;
	}
	if (req->limit == MOVE_STEP_COPY || req->limit == MOVE_STEP_DRAIN) {
		bool copy = req->limit == MOVE_STEP_COPY;
		if (copy && m->copied_any && same(req->range_lo,
		    req->range_lo_len, m->copy_at, m->copy_at_len)) {
			/* A repeated step (peer.h): the same answer again. */
			resp->code = KV_OK;
			resp->found = m->copy_more;
			resp->last_item = m->copy_next;
			resp->last_item_len = m->copy_next_len;
			resp->read_bytes = m->copy_count;
			goto out;
		}
		if (copy && (m->copied_any ? !same(req->range_lo,
		    req->range_lo_len, m->copy_next, m->copy_next_len) :
		    req->range_lo_len != 0)) {
			resp->code = KV_PROTO;
			resp->message = "a copy step out of order";
			goto out;
		}
		/* The copy is in before any catch-up (normally applied
		 * with its last chunk). */
		kv_err applied = copy ? KV_OK : load_apply(m);
		resp->code = applied;
		if (resp->code == KV_OK)
			resp->code = pull(n, m, copy ? RPC_MOVE_PULL :
			    RPC_MOVE_DIRTY, req, a, &got);
		if (resp->code == KV_OK)
			resp->code = apply_pairs(n, m, &got, copy);
		if (resp->code == KV_OK && copy && !got.found)
			resp->code = load_apply(m);
		if (resp->code != KV_OK && (copy || applied != KV_OK)) {
			/*
			 * The load may hold part of a chunk, or be gone with
			 * a failed apply: no later step may build on it. The
			 * move is forgotten here, so that the catalog node
			 * (which aborts it on this answer) or a repeat of
			 * this step finds none.
			 */
			load_drop(m);
			m->id = 0;
		}
		if (resp->code == KV_OK && copy) {
			uint8_t *at = dup_bytes(req->range_lo,
			    req->range_lo_len);
			uint8_t *next = dup_bytes(got.last_item,
			    got.last_item_len);
			if (at == NULL || next == NULL) {
				free(at);
				free(next);
				resp->code = KV_ENOMEM;
			} else {
				copy_forget(m);
				m->copy_at = at;
				m->copy_at_len = req->range_lo_len;
				m->copy_next = next;
				m->copy_next_len = got.last_item_len;
				m->copied_any = true;
				m->copy_more = got.found;
				m->copy_count = got.n_blobs;
			}
		}
		if (resp->code == KV_OK) {
			if (!copy)
				m->dirty_ack = got.seq;
			resp->found = got.found;
			resp->last_item = got.last_item;
			resp->last_item_len = got.last_item_len;
			resp->scanned = got.scanned;
			resp->read_bytes = got.n_blobs;
		} else if (got.message != NULL) {
			resp->message = got.message;
		}
		wire_response_fini(&got);
		goto out;
	}
	resp->code = KV_PROTO;
out:
	pthread_mutex_unlock(&n->move_mu);
}

void
move_target_close(node *n)
{
	load_drop(&n->move);
	copy_forget(&n->move);
	n->move.id = 0;
}

void
move_serve(node *n, const rpc_request *req, arena *a, rpc_response *resp)
{
	if (req->table_id == 0 && req->op != RPC_MOVE_STEP) {
		resp->code = KV_PROTO;
		return;
	}
	switch (req->op) {
	case RPC_MOVE_BEGIN: source_begin(n, req, resp); break;
	case RPC_MOVE_PULL: source_pull(n, req, a, resp); break;
	case RPC_MOVE_DIRTY: source_dirty(n, req, a, resp); break;
	case RPC_MOVE_FENCE: source_fence(n, req, a, resp); break;
	case RPC_MOVE_END: source_end(n, req, resp); break;
	case RPC_MOVE_STEP: target_step(n, req, a, resp); break;
	default: resp->code = KV_PROTO; break;
	}
}
