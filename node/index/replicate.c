/*
 * replicate.c — the replicator that ships each index's records to their
 * owners; start, stop and metrics (index_int.h, ../index.h).
 */
#include "index_int.h"

#include "clock.h"
#include "thread_name.h"

/* ---- the replicator ---- */

/*
 * The records one look read. Each record's key, room for its route and
 * its value are one allocation of the look's arena: one malloc for many
 * records, where two a record were a tenth of the replicator's CPU under
 * indexed writes.
 */
typedef struct out_rec {
	uint8_t *key, *val; /* val follows key */
	size_t kl, vl;      /* vl counts the route's room */
} out_rec;

typedef struct pending {
	arena a;
	out_rec *r;
	size_t n, cap, bytes;
	size_t max; /* records at most (0: REPL_MAX_RECORDS) */
} pending;

static bool
take_one(void *arg, const uint8_t *k, size_t kl, const uint8_t *v,
    size_t vl)
{
	pending *pd = arg;
	if (pd->n == pd->cap) {
		size_t cap = pd->cap == 0 ? 64 : pd->cap * 2;
		out_rec *r = realloc(pd->r, cap * sizeof(*r));
		if (r == NULL)
			return false;
		pd->r = r;
		pd->cap = cap;
	}
	uint8_t *rec = arena_alloc_raw(&pd->a, kl + ROUTE_HEAD + vl);
	if (rec == NULL)
		return false;
	memcpy(rec, k, kl);
	memcpy(rec + kl + ROUTE_HEAD, v, vl);
	pd->r[pd->n++] = (out_rec) { rec, rec + kl, kl, ROUTE_HEAD + vl };
	pd->bytes += kl + vl;
	return pd->n < (pd->max != 0 ? pd->max : REPL_MAX_RECORDS) &&
	    pd->bytes < REPL_MAX_BYTES;
}

static void
pending_free(pending *pd)
{
	arena_fini(&pd->a);
	free(pd->r);
	memset(pd, 0, sizeof(*pd));
}

static kv_err
delete_done(node *n, const pending *pd, const bool *done)
{
	store_batch b;
	kv_err rv = KV_OK;
	size_t k = 0;
	uint8_t end[OUTBOX_KEY_LEN], floor[8];
	uint64_t top = n->gsi->floor;
	store_batch_init(&b);
	for (size_t i = 0; i < pd->n; i++) {
		k += done[i];
		if (done[i] && pd->r[i].kl == OUTBOX_KEY_LEN &&
		    bytes_get_be64(pd->r[i].key + 9) > top)
			top = bytes_get_be64(pd->r[i].key + 9);
	}
	if (k == pd->n && k > 1 && pd->r[k - 1].kl == OUTBOX_KEY_LEN &&
	    bytes_get_be64(pd->r[k - 1].key + 9) < UINT64_MAX) {
		memcpy(end, pd->r[k - 1].key, OUTBOX_KEY_LEN);
		bytes_put_be64(end + 9, bytes_get_be64(end + 9) + 1);
		rv = store_batch_add(&b, STORE_DELETE_RANGE, pd->r[0].key,
		    pd->r[0].kl, end, sizeof(end));
	} else {
		for (size_t i = 0; i < pd->n && rv == KV_OK; i++)
			if (done[i])
				rv = store_batch_add(&b, STORE_DELETE,
				    pd->r[i].key, pd->r[i].kl, NULL, 0);
	}
	if (rv == KV_OK && top > n->gsi->floor) {
		bytes_put_be64(floor, top);
		rv = store_batch_add(&b, STORE_PUT, outbox_floor_key,
		    sizeof(outbox_floor_key), floor, sizeof(floor));
	}
	if (rv == KV_OK && k > 0)
		rv = store_write(n->st, &b);
	if (rv == KV_OK && k > 0) {
		index_state *s = n->gsi;
		s->floor = top;
		pthread_mutex_lock(&s->count_mu);
		struct index_count *c = count_of(s,
		    bytes_get_be32(pd->r[0].key + 5));
		if (c != NULL) {
			c->pending -= (int64_t) k;
			if (c->pending <= 0)
				c->oldest = 0;
		}
		pthread_mutex_unlock(&s->count_mu);
	}
	store_batch_fini(&b);
	return rv;
}

/* Notes that index id's owners refused its records for want of
 * capacity (bits: the refusal's RPC_THROTTLE_*), or took them (0). */
static void
note_pressure(index_state *s, uint32_t id, uint32_t bits)
{
	pthread_mutex_lock(&s->count_mu);
	struct index_count *c = count_of(s, id);
	if (c != NULL) {
		c->pressed_until_us = bits != 0 ? now_us() + PRESSURE_US : 0;
		c->pressed_bits = bits;
	}
	pthread_mutex_unlock(&s->count_mu);
}

/* Whether index id is pressed at now (its bits in *bits). Needs
 * count_mu. */
static bool
pressed_locked(index_state *s, uint32_t id, int64_t now, uint32_t *bits)
{
	for (size_t k = 0; k < s->n_counts; k++)
		if (s->counts[k].id == id && s->counts[k].pressed_until_us >
		    now) {
			*bits = s->counts[k].pressed_bits;
			return true;
		}
	return false;
}

bool
index_pressed(node *n, const store_batch *b, uint32_t *index_id,
    uint32_t *bits)
{
	index_state *s = n->gsi;
	bool pressed = false;
	int64_t now = now_us();
	pthread_mutex_lock(&s->count_mu);
	for (size_t i = 0; i < b->n && !pressed; i++) {
		const store_op *op = &b->ops[i];
		if (op->key_len != OUTBOX_KEY_LEN ||
		    memcmp(op->key, outbox_lo, sizeof(outbox_lo)) != 0)
			continue;
		*index_id = bytes_get_be32(op->key + 5);
		pressed = pressed_locked(s, *index_id, now, bits);
	}
	pthread_mutex_unlock(&s->count_mu);
	return pressed;
}

bool
index_table_pressed(node *n, const table *t)
{
	index_state *s = n->gsi;
	bool pressed = false;
	uint32_t bits;
	int64_t now = now_us();
	pthread_mutex_lock(&s->count_mu);
	for (size_t i = 0; i < t->n_indexes && !pressed; i++)
		pressed = index_kept_global(&t->indexes[i]) &&
		    pressed_locked(s, t->indexes[i].table_id, now, &bits);
	pthread_mutex_unlock(&s->count_mu);
	return pressed;
}

bool
index_units_pressed(node *n, const index_units *u, size_t n_u,
    uint32_t *index_id, uint32_t *bits)
{
	index_state *s = n->gsi;
	bool pressed = false;
	int64_t now = now_us();
	pthread_mutex_lock(&s->count_mu);
	for (size_t i = 0; i < n_u && !pressed; i++) {
		*index_id = u[i].index_id;
		pressed = pressed_locked(s, *index_id, now, bits);
	}
	pthread_mutex_unlock(&s->count_mu);
	return pressed;
}

const char *
index_name_of_locked(node *n, uint32_t index_id, arena *a)
{
	const table *it = table_find_id(n->gsi->view, index_id);
	const char *slash = it != NULL ? strchr(it->name, '/') : NULL;
	return slash != NULL ? arena_dup(a, slash + 1, strlen(slash + 1)) :
	    NULL;
}

/*
 * The apply request for node `dest`: the records routed to it, in order.
 * Its blobs and lengths are malloc'd (request_free); false without
 * memory.
 */
static bool
request_for(const pending *pd, const uint32_t *to, const bool *routed,
    uint32_t dest, rpc_request *req)
{
	size_t k = 0;
	for (size_t i = 0; i < pd->n; i++)
		if (routed[i] && to[i] == dest)
			k++;
	const uint8_t **blobs = malloc((k > 0 ? k : 1) * sizeof(*blobs));
	size_t *lens = malloc((k > 0 ? k : 1) * sizeof(*lens));
	if (blobs == NULL || lens == NULL) {
		free(blobs);
		free(lens);
		return false;
	}
	k = 0;
	for (size_t i = 0; i < pd->n; i++)
		if (routed[i] && to[i] == dest) {
			blobs[k] = pd->r[i].val;
			lens[k++] = pd->r[i].vl;
		}
	*req = (rpc_request) { .op = RPC_INDEX_APPLY, .subs = blobs,
	    .sub_lens = lens, .n_subs = k };
	return true;
}

static void
request_free(rpc_request *req)
{
	free((void *) req->subs);
	free(req->sub_lens);
}

/* Whether an apply answer took the records; *bits: the refusal's
 * RPC_THROTTLE_* bits when the owner had no capacity for them. */
static bool
applied_ok(kv_err rv, const rpc_response *resp, uint32_t *bits)
{
	*bits = rv == KV_OK && resp->code == KV_THROTTLED ?
	    resp->throttle | RPC_THROTTLE_WRITE : 0;
	return rv == KV_OK && resp->code == KV_OK;
}

/*
 * Starts the apply call to node d; NULL when it could not start. Over
 * the frames (rpc.h), as a router calls a node, not over the nng seam,
 * whose threads' hand-offs cost a heavy-case put more CPU side by side
 * (docs/design-notes.md, "Apply calls over the frames").
 */
static rpc_pending *
call_start(node *n, const pending *pd, const uint32_t *to,
    const bool *routed, uint32_t d)
{
	rpc_request req;
	rpc_pending *call = NULL;
	rpc_client *c = node_peer(n, d);
	if (c == NULL || !request_for(pd, to, routed, d, &req))
		return NULL;
	if (rpc_call_start(c, &req, REPL_CALL_MS, &call) != KV_OK)
		call = NULL;
	request_free(&req);
	return call;
}

/* Applies this node's own records; whether it took them, *bits. */
static bool
apply_here(node *n, const pending *pd, const uint32_t *to,
    const bool *routed, uint32_t *bits)
{
	rpc_request req;
	rpc_response resp;
	arena a;
	if (!request_for(pd, to, routed, n->index, &req))
		return false;
	arena_init(&a);
	memset(&resp, 0, sizeof(resp));
	index_apply_serve(n, &req, &a, &resp);
	bool ok = applied_ok(KV_OK, &resp, bits);
	arena_fini(&a);
	request_free(&req);
	return ok;
}

/* Waits for a started call's answer; whether it took them, *bits. */
static bool
call_end(rpc_pending *call, uint32_t *bits)
{
	rpc_response resp;
	arena a;
	arena_init(&a);
	kv_err rv = rpc_call_end(call, &a, &resp);
	bool ok = applied_ok(rv, &resp, bits);
	if (rv == KV_OK)
		wire_response_fini(&resp);
	arena_fini(&a);
	return ok;
}

/*
 * Sends every node its records: one node after the other, or, when
 * `together`, all at once (the requests to the other nodes go out first,
 * this node applies its own meanwhile, then the answers are collected).
 * ok[d], bits[d]: whether node d took its records and its refusal's bits
 * (for the nodes `wanted` marks). Every call started is ended.
 */
static void
send_all(node *n, const pending *pd, const uint32_t *to, const bool *routed,
    const bool *wanted, bool together, bool *ok, uint32_t *bits)
{
	rpc_pending *calls[CONFIG_MAX_NODES] = { 0 };
	for (uint32_t d = 0; d < CONFIG_MAX_NODES; d++) {
		ok[d] = false;
		bits[d] = 0;
		if (together && wanted[d] && d != n->index)
			calls[d] = call_start(n, pd, to, routed, d);
	}
	for (uint32_t d = 0; d < CONFIG_MAX_NODES; d++) {
		if (!wanted[d])
			continue;
		if (d == n->index) {
			ok[d] = apply_here(n, pd, to, routed, &bits[d]);
			continue;
		}
		if (!together)
			calls[d] = call_start(n, pd, to, routed, d);
		if (calls[d] != NULL)
			ok[d] = call_end(calls[d], &bits[d]);
	}
}

bool
index_count(node *n, const store_batch *b, int sign)
{
	index_state *s = n->gsi;
	bool go = false;
	int64_t now = now_us();
	pthread_mutex_lock(&s->count_mu);
	for (size_t i = 0; i < b->n; i++) {
		const store_op *op = &b->ops[i];
		if (op->key_len != OUTBOX_KEY_LEN ||
		    memcmp(op->key, outbox_lo, sizeof(outbox_lo)) != 0)
			continue;
		struct index_count *c = count_of(s,
		    bytes_get_be32(op->key + 5));
		if (c == NULL) {
			go = true;
			continue;
		}
		/* The first record to wait is the oldest until the next look
		 * (an oldest noted before the outbox drained says nothing). */
		if (sign > 0 && c->pending <= 0)
			c->oldest = bytes_get_be64(op->key + 9);
		c->pending += sign;
		go = go || c->idle_until_us <= now;
	}
	pthread_mutex_unlock(&s->count_mu);
	return go;
}

/* Notes the oldest record waiting for index id (0: none). */
static void
note_oldest(index_state *s, uint32_t id, uint64_t num)
{
	pthread_mutex_lock(&s->count_mu);
	struct index_count *c = count_of(s, id);
	if (c != NULL) {
		c->oldest = num;
		if (num == 0)
			c->pending = 0; /* none read: none left */
	}
	pthread_mutex_unlock(&s->count_mu);
}

/* The first record's index and number (the first key read). */
typedef struct first_rec {
	bool found;
	uint32_t id;
	uint64_t num;
} first_rec;

static bool
first_key(void *arg, const uint8_t *k, size_t kl, const uint8_t *v,
    size_t vl)
{
	first_rec *f = arg;
	(void) v;
	(void) vl;
	if (kl == OUTBOX_KEY_LEN) {
		f->found = true;
		f->id = bytes_get_be32(k + 5);
		f->num = bytes_get_be64(k + 9);
	}
	return false;
}

/* The first record of an index id >= from in the outbox, in *f (found
 * false: none); false when the store failed. */
static bool
next_index(node *n, uint64_t from, first_rec *f)
{
	uint8_t lo[9];
	memset(f, 0, sizeof(*f));
	if (from > UINT32_MAX)
		return true;
	memcpy(lo, outbox_lo, sizeof(outbox_lo));
	bytes_put_be32(lo + 5, (uint32_t) from);
	return store_scan(n->st, lo, sizeof(lo), outbox_hi, sizeof(outbox_hi),
	    first_key, f) == KV_OK;
}

kv_err
index_outbox_waiting(node *n, uint64_t max, uint32_t *ids, size_t cap,
    size_t *n_ids)
{
	first_rec f;
	uint64_t from = 0;
	*n_ids = 0;
	/* Every record numbered max or below is in the store by now: their
	 * numbers were given, and their batches written, under this lock. */
	index_order_lock(n);
	index_order_unlock(n);
	for (;;) {
		if (!next_index(n, from, &f))
			return KV_IO;
		if (!f.found)
			return KV_OK;
		if (f.num <= max && *n_ids < cap)
			ids[(*n_ids)++] = f.id;
		from = (uint64_t) f.id + 1;
	}
}

/*
 * Whether index id's records wait in the outbox, by the view (read-locked):
 * the index is paused, being deleted, or not known yet. *gone when its
 * table has left the catalog: its records are dropped, not kept.
 */
static bool
index_waits(const index_state *s, uint32_t id, const table **it, bool *gone)
{
	*it = table_find_id(s->view, id);
	*gone = *it == NULL && s->view != NULL &&
	    id < s->view->next_table_id;
	return !*gone && (*it == NULL || (*it)->paused ||
	    (!table_serving(*it) && (*it)->status != TABLE_CREATING));
}

/* The replicator looks at index id's records again no sooner than until
 * (a pause, the delay: repl_round). */
static void
note_idle(index_state *s, uint32_t id, int64_t until)
{
	pthread_mutex_lock(&s->count_mu);
	struct index_count *c = count_of(s, id);
	if (c != NULL)
		c->idle_until_us = until;
	pthread_mutex_unlock(&s->count_mu);
}

/*
 * Sends what index `id` has waiting, up to one batch: the records old
 * enough (the delay), unless the index is paused. Returns true when a
 * full batch went (there may be more), with *failed on a failure.
 *
 * Records that must wait are not read: a paused index's look reads only
 * its oldest record (for the metrics), and with a delay only the records
 * old enough are read, or the oldest alone when none is. Writes kick the
 * replicator, and each look used to read a full batch it could not send:
 * a paused index cost its node more CPU than the writes themselves.
 */
static bool
repl_index(node *n, uint32_t id, uint64_t cursor, bool *failed)
{
	index_state *s = n->gsi;
	pending pd = { 0 };
	arena_init(&pd.a);
	bool more = false;
	uint8_t lo[OUTBOX_KEY_LEN], hi[OUTBOX_KEY_LEN];
	memcpy(lo, outbox_lo, sizeof(outbox_lo));
	bytes_put_be32(lo + 5, id);
	bytes_put_be64(lo + 9, cursor);
	memcpy(hi, lo, 9);
	size_t hil = 9;
	if (id == UINT32_MAX) {
		memcpy(hi, outbox_hi, sizeof(outbox_hi));
		hil = sizeof(outbox_hi);
	} else {
		bytes_put_be32(hi + 5, id + 1);
	}
	const table *it;
	bool gone;
	pthread_rwlock_rdlock(&s->view_lock);
	bool wait = index_waits(s, id, &it, &gone);
	pthread_rwlock_unlock(&s->view_lock);
	int64_t now = now_us();
	uint64_t delay_us = (uint64_t) n->cfg.gsi_delay_ms * 1000;
	uint64_t young = (uint64_t) now - delay_us;
	bool bounded = !wait && delay_us > 0 && id != UINT32_MAX;
	kv_err rv = KV_OK;
	if (wait) {
		pd.max = 1;
	} else if (bounded) {
		/* Numbers are the outbox clock: those above young wait. */
		bytes_put_be32(hi + 5, id);
		bytes_put_be64(hi + 9, young + 1);
		hil = OUTBOX_KEY_LEN;
	}
	if (!bounded || young + 1 > cursor)
		rv = store_scan(n->st, lo, sizeof(lo), hi, hil, take_one, &pd);
	if (rv == KV_OK && bounded && pd.n == 0) {
		/* None old enough: the oldest, for the metrics and to know
		 * when to look again. */
		bytes_put_be32(hi + 5, id + 1);
		hil = 9;
		pd.max = 1;
		wait = true;
		rv = store_scan(n->st, lo, sizeof(lo), hi, hil, take_one, &pd);
	}
	/*
	 * The records read may belong to a write that is applied but not
	 * yet durable (its server flushes before it answers: store.h). Sent
	 * as they are, a kill before that flush would leave the index with
	 * entries of a write the table lost; made durable first, they are
	 * the table's for good.
	 */
	if (rv == KV_OK && pd.n > 0 && !wait)
		rv = store_flush(n->st);
	if (rv != KV_OK) {
		*failed = true;
		pending_free(&pd);
		return false;
	}
	atomic_fetch_add(&s->records_read, pd.n);
	uint64_t first = pd.n > 0 ? bytes_get_be64(pd.r[0].key + 9) : 0;
	note_oldest(s, id, first);
	if (wait || pd.n == 0) {
		if (wait && pd.n > 0)
			note_idle(s, id, bounded ? (int64_t) (first + delay_us) :
			    now + REPL_RETRY_MS * 1000);
		pending_free(&pd);
		return false;
	}
	bool *routed = calloc(pd.n, sizeof(*routed));
	bool *done = calloc(pd.n, sizeof(*done));
	uint32_t *to = calloc(pd.n, sizeof(*to));
	bool *sent = calloc(CONFIG_MAX_NODES, sizeof(*sent));
	if (to == NULL || routed == NULL || done == NULL || sent == NULL) {
		*failed = true;
		goto out;
	}
	/*
	 * Route by the view. With the index gone, its records are done;
	 * while it is paused, being deleted or not known yet, they wait;
	 * so do those younger than the delay, and all after them.
	 */
	size_t usable = pd.n;
	pthread_rwlock_rdlock(&s->view_lock);
	wait = index_waits(s, id, &it, &gone); /* it may have changed */
	for (size_t i = 0; i < pd.n && !gone && !wait; i++) {
		rec r;
		if (!index_rec_parse(pd.r[i].val + ROUTE_HEAD,
		    pd.r[i].vl - ROUTE_HEAD, false, &r) || r.index_id != id) {
			done[i] = true; /* cannot be sent: never will be */
			atomic_fetch_add(&s->records_dropped, 1);
			continue;
		}
		if (n->cfg.gsi_delay_ms > 0 && r.v_num > young) {
			usable = i;
			break;
		}
		const partition *p = table_partition_for(it,
		    keyenc_key_hash(r.key));
		bytes_put_le32(pd.r[i].val, p->id);
		bytes_put_le64(pd.r[i].val + 4, p->epoch);
		to[i] = p->node;
		routed[i] = true;
	}
	pthread_rwlock_unlock(&s->view_lock);
	for (size_t i = 0; gone && i < pd.n; i++) {
		done[i] = true;
		atomic_fetch_add(&s->records_dropped, 1);
	}
	uint32_t pressure = 0;
	bool ok[CONFIG_MAX_NODES];
	uint32_t bits[CONFIG_MAX_NODES];
	for (size_t i = 0; i < usable; i++)
		if (routed[i])
			sent[to[i]] = true;
	/*
	 * One owner after the other costs the cluster less CPU per record
	 * (about an eighth less per indexed put in the bench); all at once
	 * cuts the round's time to its slowest owner's. So records that have
	 * waited long go to all their owners at once.
	 */
	bool together = (uint64_t) now_us() > bytes_get_be64(pd.r[0].key + 9) +
	    REPL_TOGETHER_US;
	send_all(n, &pd, to, routed, sent, together, ok, bits);
	for (size_t i = 0; i < usable; i++)
		if (routed[i])
			done[i] = ok[to[i]];
	for (uint32_t d = 0; d < CONFIG_MAX_NODES; d++) {
		if (!sent[d])
			continue;
		pressure |= bits[d];
		if (ok[d])
			continue;
		*failed = true;
		if (bits[d] == 0)
			atomic_fetch_add(&s->send_failures, 1);
	}
	if (usable > 0)
		note_pressure(s, id, pressure);
	size_t nd = 0, first_left = pd.n;
	for (size_t i = 0; i < pd.n; i++) {
		nd += done[i];
		if (!done[i] && first_left == pd.n)
			first_left = i;
	}
	if (delete_done(n, &pd, done) != KV_OK) {
		*failed = true;
	} else {
		if (!gone)
			atomic_fetch_add(&s->records_sent, nd);
		/* The next read starts at the first record left, or after
		 * the last one read. */
		uint64_t next = first_left < pd.n ?
		    bytes_get_be64(pd.r[first_left].key + 9) :
		    bytes_get_be64(pd.r[pd.n - 1].key + 9) + 1;
		pthread_mutex_lock(&s->count_mu);
		struct index_count *c = count_of(s, id);
		if (c != NULL)
			c->cursor = next;
		pthread_mutex_unlock(&s->count_mu);
	}
	more = nd == pd.n && (pd.n >= REPL_MAX_RECORDS ||
	    pd.bytes >= REPL_MAX_BYTES);
out:
	free(to);
	free(routed);
	free(done);
	free(sent);
	pending_free(&pd);
	return more && !*failed;
}

/*
 * One round over every index with records waiting. Returns true when
 * some index may have more to send at once; *waiting when records wait
 * (the delay, a pause, a failure), to look again soon.
 */
static bool
repl_round(node *n, bool *failed, bool *waiting)
{
	index_state *s = n->gsi;
	struct index_count todo[MAX_COUNTED];
	size_t k = 0;
	bool more = false;
	*failed = *waiting = false;
	/* Every index with records here is counted (index_count, and the
	 * tally at start). */
	int64_t now = now_us();
	if (now - s->swept_us > SWEEP_US) {
		/*
		 * Now and then, look at the whole outbox for an index whose
		 * records the counts missed (none should: a safety net, whose
		 * cost is stepping over tombstones once in a while).
		 */
		first_rec f;
		uint64_t from = 0;
		s->swept_us = now;
		while (next_index(n, from, &f) && f.found) {
			pthread_mutex_lock(&s->count_mu);
			struct index_count *c = count_of(s, f.id);
			if (c != NULL && c->pending <= 0) {
				c->pending = 1;
				c->oldest = f.num;
			}
			pthread_mutex_unlock(&s->count_mu);
			from = (uint64_t) f.id + 1;
		}
	}
	pthread_mutex_lock(&s->count_mu);
	for (size_t i = 0; i < s->n_counts; i++)
		if (s->counts[i].pending > 0) {
			/* Paused or young, it was looked at lately. */
			if (s->counts[i].idle_until_us > now)
				*waiting = true;
			else
				todo[k++] = s->counts[i];
		}
	pthread_mutex_unlock(&s->count_mu);
	for (size_t i = 0; i < k; i++) {
		bool f = false;
		more |= repl_index(n, todo[i].id, todo[i].cursor, &f);
		*failed |= f;
		*waiting = true;
	}
	return more;
}

/* Waits on the replicator's cv (s->mu held) until CLOCK_REALTIME is
 * ms later, a kick or a stop. */
static void
repl_sleep(index_state *s, long ms)
{
	struct timespec ts = clock_deadline_in(ms);
	pthread_cond_timedwait(&s->cv, &s->mu, &ts);
}

static void *
repl_run(void *arg)
{
	node *n = arg;
	index_state *s = n->gsi;
	bool failed = false, waiting = false;
	int64_t last = 0; /* when the last round that sent began (monotonic) */
	thread_name("kv-gsi-repl");
	pthread_mutex_lock(&s->mu);
	while (!s->stop) {
		/*
		 * While writes keep coming, a round begins at most every
		 * REPL_SPACING_MS (kicks meanwhile wait for it), so that its
		 * calls carry the records of that many milliseconds (design
		 * notes, "Apply calls over the frames"). A full batch goes on
		 * at once, and so does the first record after a quiet spell.
		 */
		int64_t left;
		while (!s->stop && (left = last + REPL_SPACING_MS * 1000 -
		    clock_mono_us()) > 0)
			repl_sleep(s, (long) (left + 999) / 1000);
		if (s->stop)
			break;
		s->kicked = false;
		pthread_mutex_unlock(&s->mu);
		int64_t began = clock_mono_us();
		uint64_t sent0 = atomic_load(&s->records_sent);
		bool again = repl_round(n, &failed, &waiting);
		pthread_mutex_lock(&s->mu);
		bool sent = atomic_load(&s->records_sent) != sent0;
		if (sent)
			atomic_fetch_add(&s->rounds_sent, 1);
		last = again || !sent ? 0 : began;
		if (again || (s->kicked && !failed))
			continue;
		if (!s->stop && !s->kicked)
			repl_sleep(s, failed || waiting ? REPL_RETRY_MS :
			    REPL_IDLE_MS);
	}
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

/* Counts the outbox's records per index, and the highest number. */
typedef struct outbox_tally {
	index_state *s;
	uint64_t last;
} outbox_tally;

static bool
tally_one(void *arg, const uint8_t *k, size_t kl, const uint8_t *v,
    size_t vl)
{
	outbox_tally *t = arg;
	(void) v;
	(void) vl;
	if (kl != OUTBOX_KEY_LEN)
		return true;
	struct index_count *c = count_of(t->s, bytes_get_be32(k + 5));
	if (c != NULL)
		c->pending++;
	uint64_t num = bytes_get_be64(k + 9);
	if (num > t->last)
		t->last = num;
	return true;
}

kv_err
index_open(node *n)
{
	index_state *s = calloc(1, sizeof(*s));
	if (s == NULL)
		return KV_ENOMEM;
	/*
	 * Writers first: a stream of writes to indexed tables, each holding
	 * the view shared, must not keep a new catalog out for long. So no
	 * thread may take it shared twice (a waiting writer would block the
	 * second).
	 */
	pthread_rwlockattr_t attr;
	pthread_rwlockattr_init(&attr);
	pthread_rwlockattr_setkind_np(&attr,
	    PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&s->view_lock, &attr);
	pthread_rwlockattr_destroy(&attr);
	pthread_mutex_init(&s->mu, NULL);
	pthread_mutex_init(&s->fill_mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	pthread_mutex_init(&s->count_mu, NULL);
	pthread_mutex_init(&s->order_mu, NULL);
	pthread_mutex_init(&s->collect_mu, NULL);
	pthread_mutex_init(&s->coll_mu, NULL);
	pthread_cond_init(&s->coll_cv, NULL);
	s->round.clean_tombs = UINT64_MAX; /* tombstones of earlier runs */
	/*
	 * Numbers keep rising across restarts (above every record left and
	 * every one deleted, whatever the wall clock says); the counts start
	 * right.
	 */
	outbox_tally tally = { .s = s };
	uint8_t *fv = NULL;
	size_t fl = 0;
	bool found = false;
	if (store_scan(n->st, outbox_lo, sizeof(outbox_lo), outbox_hi,
	    sizeof(outbox_hi), tally_one, &tally) != KV_OK)
		tally.last = 0;
	if (store_get(n->st, outbox_floor_key, sizeof(outbox_floor_key), &fv,
	    &fl, &found) == KV_OK && found && fl == 8)
		s->floor = bytes_get_be64(fv);
	free(fv);
	atomic_store(&s->clock, tally.last > s->floor ? tally.last : s->floor);
	s->boot = (uint64_t) now_us();
	n->gsi = s;
	if (pthread_create(&s->thread, NULL, repl_run, n) != 0) {
		index_close(n); /* frees s */
		return KV_ENOMEM;
	}
	s->started = true;
	return KV_OK;
}

void
index_close(node *n)
{
	index_state *s = n->gsi;
	if (s == NULL)
		return;
	pthread_mutex_lock(&s->mu);
	s->stop = true;
	pthread_cond_signal(&s->cv);
	pthread_mutex_unlock(&s->mu);
	if (s->started)
		pthread_join(s->thread, NULL);
	/* Fills see stop between chunks. */
	for (fill *f = s->fills, *next; f != NULL; f = next) {
		next = f->next;
		if (f->joinable)
			pthread_join(f->thread, NULL);
		free(f->done);
		free(f);
	}
	index_collect_fini(s);
	pthread_mutex_destroy(&s->fill_mu);
	pthread_mutex_destroy(&s->count_mu);
	pthread_mutex_destroy(&s->order_mu);
	n->gsi = NULL;
	catalog_free(s->view);
	pthread_rwlock_destroy(&s->view_lock);
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->cv);
	free(s);
}

void
index_write_metrics(node *n, FILE *f)
{
	index_state *s = n->gsi;
	if (s == NULL)
		return;
	fprintf(f, "# HELP kv_index_outbox_records Index records waiting in "
	    "this node's outbox, per index (table \"BASE/INDEX\").\n"
	    "# TYPE kv_index_outbox_records gauge\n");
	struct index_count counts[MAX_COUNTED];
	pthread_mutex_lock(&s->count_mu);
	size_t nc = s->n_counts;
	memcpy(counts, s->counts, nc * sizeof(*counts));
	pthread_mutex_unlock(&s->count_mu);
	int64_t now = now_us();
	pthread_rwlock_rdlock(&s->view_lock);
	for (size_t i = 0; i < nc; i++) {
		const table *it = table_find_id(s->view, counts[i].id);
		if (it == NULL)
			continue;
		fprintf(f, "kv_index_outbox_records{node=\"%u\",index=\"%s\"} "
		    "%lld\n", n->index, it->name, (long long) (counts[i].pending >
		    0 ? counts[i].pending : 0));
	}
	fprintf(f, "# HELP kv_index_outbox_oldest_seconds Age of the oldest "
	    "record waiting for each index (at the replicator's last look; "
	    "0: none).\n# TYPE kv_index_outbox_oldest_seconds gauge\n");
	for (size_t i = 0; i < nc; i++) {
		const table *it = table_find_id(s->view, counts[i].id);
		if (it == NULL)
			continue;
		fprintf(f, "kv_index_outbox_oldest_seconds{node=\"%u\","
		    "index=\"%s\"} %.6f\n", n->index, it->name,
		    counts[i].oldest != 0 && counts[i].pending > 0 ?
		    (double) (now - (int64_t) counts[i].oldest) / 1e6 : 0.0);
	}
	pthread_rwlock_unlock(&s->view_lock);
	fprintf(f, "# HELP kv_index_records_total Index records: written to "
	    "the outbox (by writes and by fills), read from it by the "
	    "replicator (a record that waits may be read more than once), "
	    "sent and acknowledged, dropped (index gone), applied here, "
	    "skipped here as older than the entry.\n"
	    "# TYPE kv_index_records_total counter\n"
	    "kv_index_records_total{node=\"%u\",what=\"written\"} %llu\n"
	    "kv_index_records_total{node=\"%u\",what=\"read\"} %llu\n"
	    "kv_index_records_total{node=\"%u\",what=\"sent\"} %llu\n"
	    "kv_index_records_total{node=\"%u\",what=\"dropped\"} %llu\n"
	    "kv_index_records_total{node=\"%u\",what=\"applied\"} %llu\n"
	    "kv_index_records_total{node=\"%u\",what=\"skipped\"} %llu\n",
	    n->index, (unsigned long long) atomic_load(&s->records_written),
	    n->index, (unsigned long long) atomic_load(&s->records_read),
	    n->index, (unsigned long long) atomic_load(&s->records_sent),
	    n->index, (unsigned long long) atomic_load(&s->records_dropped),
	    n->index, (unsigned long long) atomic_load(&s->applied),
	    n->index, (unsigned long long) atomic_load(&s->stale_skipped));
	fprintf(f, "# HELP kv_index_applies_total Batches of index records "
	    "applied here (their records: kv_index_records_total applied and "
	    "skipped).\n"
	    "# TYPE kv_index_applies_total counter\n"
	    "kv_index_applies_total{node=\"%u\"} %llu\n", n->index,
	    (unsigned long long) atomic_load(&s->applies));
	fprintf(f, "# HELP kv_index_rounds_total The replicator's rounds "
	    "that sent records (while writes keep coming, at most one per "
	    "REPL_SPACING_MS).\n"
	    "# TYPE kv_index_rounds_total counter\n"
	    "kv_index_rounds_total{node=\"%u\"} %llu\n", n->index,
	    (unsigned long long) atomic_load(&s->rounds_sent));
	fprintf(f, "# HELP kv_index_filled_items_total Items given index "
	    "records by fills of new indexes.\n"
	    "# TYPE kv_index_filled_items_total counter\n"
	    "kv_index_filled_items_total{node=\"%u\"} %llu\n", n->index,
	    (unsigned long long) atomic_load(&s->filled));
	fprintf(f, "# HELP kv_index_tombstones_total Index tombstones "
	    "(entries deleted, kept so that an older put cannot bring them "
	    "back): written here where no tombstone was, replaced here by a "
	    "put of their entry, and collected here once no older record "
	    "could still come. This node holds written - replaced - "
	    "collected, but for the tombstones partition moves took.\n"
	    "# TYPE kv_index_tombstones_total counter\n"
	    "kv_index_tombstones_total{node=\"%u\",what=\"written\"} %llu\n"
	    "kv_index_tombstones_total{node=\"%u\",what=\"replaced\"} "
	    "%llu\n"
	    "kv_index_tombstones_total{node=\"%u\",what=\"collected\"} "
	    "%llu\n", n->index,
	    (unsigned long long) atomic_load(&s->tombs_added), n->index,
	    (unsigned long long) atomic_load(&s->tombs_replaced), n->index,
	    (unsigned long long) atomic_load(&s->collected));
	pthread_mutex_lock(&s->collect_mu);
	uint64_t left = s->last_left;
	pthread_mutex_unlock(&s->collect_mu);
	fprintf(f, "# HELP kv_index_tombstones_left Tombstones the last "
	    "collection sweep here kept (younger than its round, or of an "
	    "index whose records still waited).\n"
	    "# TYPE kv_index_tombstones_left gauge\n"
	    "kv_index_tombstones_left{node=\"%u\"} %llu\n", n->index,
	    (unsigned long long) left);
	if (s->coll_started)
		fprintf(f, "# HELP kv_index_collect_rounds_total Rounds of the "
		    "tombstone collector: swept, idle (no node had new "
		    "tombstones), ended (a node could not be reached or "
		    "restarted).\n"
		    "# TYPE kv_index_collect_rounds_total counter\n"
		    "kv_index_collect_rounds_total{outcome=\"swept\"} %llu\n"
		    "kv_index_collect_rounds_total{outcome=\"idle\"} %llu\n"
		    "kv_index_collect_rounds_total{outcome=\"ended\"} %llu\n",
		    (unsigned long long) atomic_load(&s->rounds[
		    COLLECT_ROUND_SWEPT]),
		    (unsigned long long) atomic_load(&s->rounds[
		    COLLECT_ROUND_IDLE]),
		    (unsigned long long) atomic_load(&s->rounds[
		    COLLECT_ROUND_ENDED]));
	if (s->coll_started)
		fprintf(f, "# HELP kv_index_collect_sweep_seconds_total Time "
		    "the swept rounds spent in their sweeps (every node's, one "
		    "after the other).\n"
		    "# TYPE kv_index_collect_sweep_seconds_total counter\n"
		    "kv_index_collect_sweep_seconds_total %.6f\n",
		    (double) atomic_load(&s->sweep_us) / 1e6);
	fprintf(f, "# HELP kv_index_send_failures_total Rounds in which an "
	    "index node did not apply what it was sent.\n"
	    "# TYPE kv_index_send_failures_total counter\n"
	    "kv_index_send_failures_total{node=\"%u\"} %llu\n", n->index,
	    (unsigned long long) atomic_load(&s->send_failures));
}
