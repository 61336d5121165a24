/*
 * collect.c — collecting index tombstones: RPC_INDEX_COLLECT's steps on
 * every node, and the catalog node's collector that drives the rounds
 * (../index.h says why a round is safe).
 *
 * Locking: a node's round is guarded by collect_mu; a SWEEP marks it
 * busy and works without it, holding the map's lock shared (as the
 * index counts do, node/stats.c), and holds a partition's mutex while it
 * scans a chunk (COLLECT_HOLD_US at most) and deletes its tombstones, so
 * that no record applies in between. The collector's own state is its
 * thread's, with coll_mu for the stop.
 *
 * Death: a SWEEP's deletions are one durable batch per chunk, each a
 * tombstone that no record could still need; a kill between chunks
 * leaves the rest for a later round (the restart's boot ends this one).
 */
#include "index_int.h"

#include "catalog_node.h"
#include "clock.h"
#include "thread_name.h"

#define COLLECT_BUDGET_US 50000 /* of sweeping, per SWEEP request */
#define COLLECT_CHUNK 256       /* tombstones deleted in one batch */
#define COLLECT_HOLD_US 2000    /* a chunk's scan holds a partition */
#define COLLECT_CHECK 256       /* keys between looks at the clock */
#define COLLECT_CALL_MS 5000
#define COLLECT_DRAIN_MS 10000  /* LOW asked this long at most */
#define COLLECT_POLL_MS 100
/*
 * After the outboxes sent everything up to their marks: an apply request
 * whose sender gave up on it (REPL_CALL_MS) may still be on its way, or
 * waiting in its node's queue, and must find the tombstones there.
 */
#define COLLECT_GRACE_MS (2 * REPL_CALL_MS)
#define COLLECT_MAX_WAITING 1024 /* indexes one LOW answer names */

static void collector_stop(index_state *s);

void
index_collect_fini(index_state *s)
{
	collector_stop(s);
	free(s->round.from);
	s->round.from = NULL;
	pthread_mutex_destroy(&s->collect_mu);
	pthread_mutex_destroy(&s->coll_mu);
	pthread_cond_destroy(&s->coll_cv);
}

/* ---- a node's steps ---- */

/* A tombstone's stamp, or UINT64_MAX when v is not a tombstone. */
static uint64_t
tombstone_stamp(const uint8_t *v, size_t vl)
{
	if (vl < RECORD_HEADER + RECORD_VERSION_LEN || (v[3] & 0x80) == 0 ||
	    record_item_offset(v, vl) != vl)
		return UINT64_MAX;
	if (vl < RECORD_HEADER + RECORD_VERSION_LEN + RECORD_STAMP_LEN)
		return 0; /* written before tombstones had stamps */
	return bytes_get_le64(v + RECORD_HEADER + RECORD_VERSION_LEN);
}

size_t
index_restamp(node *n, const uint8_t *v, size_t vl, uint8_t *out)
{
	if (n->gsi == NULL || tombstone_stamp(v, vl) == UINT64_MAX)
		return 0;
	memcpy(out, v, RECORD_HEADER + RECORD_VERSION_LEN);
	bytes_put_le64(out + RECORD_HEADER + RECORD_VERSION_LEN,
	    atomic_load(&n->gsi->clock));
	return RECORD_TOMBSTONE_LEN;
}

/*
 * The tombstones a scan of one partition found, to delete: their keys
 * one after the other in keys (kls each).
 */
typedef struct found_set {
	uint64_t fence;
	int64_t deadline_us;
	size_t seen;
	uint8_t *keys;    /* grown as needed (cap bytes) */
	size_t used, cap;
	size_t kls[COLLECT_CHUNK];
	size_t n;
	uint64_t young;   /* tombstones at or above the fence */
	uint8_t *stop;    /* the scan goes on after this key (owned) */
	size_t stop_len;
	bool nomem;
} found_set;

static bool
find_one(void *arg, const uint8_t *k, size_t kl, const uint8_t *v,
    size_t vl)
{
	found_set *f = arg;
	uint64_t stamp = tombstone_stamp(v, vl);
	bool full = false;
	if (stamp < f->fence) {
		if (f->used + kl > f->cap) {
			size_t cap = 2 * (f->used + kl);
			uint8_t *keys = realloc(f->keys, cap);
			if (keys == NULL) {
				f->nomem = true;
				return false;
			}
			f->keys = keys;
			f->cap = cap;
		}
		memcpy(f->keys + f->used, k, kl);
		f->used += kl;
		f->kls[f->n++] = kl;
		full = f->n == COLLECT_CHUNK;
	} else if (stamp != UINT64_MAX) {
		f->young++;
	}
	if (!full && (++f->seen % COLLECT_CHECK != 0 ||
	    clock_mono_us() < f->deadline_us))
		return true;
	/* A chunk's worth, or out of time: go on after this key. */
	f->stop = store_key_after(k, kl, &f->stop_len);
	f->nomem = f->stop == NULL;
	return false;
}

/*
 * Scans one chunk of p from `from` (NULL: its start) and deletes the
 * tombstones stamped below f->fence in one durable batch, all under p's
 * mutex: no record can be applied to p in between (index_apply_serve
 * takes it), so what the scan read is what is deleted. *deleted and
 * *left count them; f->stop says where the next chunk starts.
 */
static kv_err
sweep_chunk(node *n, part *p, found_set *f, const uint8_t *from,
    size_t from_len, int64_t deadline, uint64_t *deleted, uint64_t *left)
{
	uint8_t lo[PART_BOUND_MAX], hi[PART_BOUND_MAX];
	size_t lol, hil;
	store_batch b;
	kv_err rv;
	int64_t hold = clock_mono_us() + COLLECT_HOLD_US;
	f->deadline_us = hold < deadline ? hold : deadline;
	f->seen = f->young = f->used = f->n = 0;
	f->stop = NULL;
	f->stop_len = 0;
	f->nomem = false;
	store_batch_init(&b);
	pthread_mutex_lock(&p->mu);
	part_bounds(p, lo, &lol, hi, &hil);
	rv = store_scan(n->st, from != NULL ? from : lo,
	    from != NULL ? from_len : lol, hi, hil, find_one, f);
	if (rv == KV_OK && f->nomem)
		rv = KV_ENOMEM;
	const uint8_t *k = f->keys;
	for (size_t i = 0; i < f->n && rv == KV_OK; k += f->kls[i++])
		rv = store_batch_add(&b, STORE_DELETE, k, f->kls[i], NULL, 0);
	if (rv == KV_OK && b.n > 0)
		rv = store_write(n->st, &b);
	k = f->keys;
	for (size_t i = 0; i < f->n && rv == KV_OK; k += f->kls[i++])
		move_note(p, k, f->kls[i]); /* a move under way sends it */
	pthread_mutex_unlock(&p->mu);
	store_batch_fini(&b);
	if (rv == KV_OK) {
		*deleted += f->n;
		*left += f->young;
	} else {
		free(f->stop);
		f->stop = NULL;
	}
	return rv;
}

static bool
id_in(uint32_t id, const uint32_t *ids, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

/*
 * The partition of a collected index, not one of skip[0..n_skip), that
 * comes first at or after (table, part) in (table id, partition id)
 * order; NULL when none. The map's lock is held.
 */
static part *
next_part(node *n, const uint32_t *gsi, size_t n_gsi, const uint32_t *skip,
    size_t n_skip, uint32_t table, uint32_t id)
{
	part *best = NULL;
	for (size_t i = 0; i < n->parts.n; i++) {
		part *p = n->parts.p[i];
		if (!id_in(p->table_id, gsi, n_gsi) ||
		    id_in(p->table_id, skip, n_skip))
			continue;
		if (p->table_id < table || (p->table_id == table &&
		    p->id < id))
			continue;
		if (best == NULL || p->table_id < best->table_id ||
		    (p->table_id == best->table_id && p->id < best->id))
			best = p;
	}
	return best;
}

/* The global indexes' tables of the view in *ids (in a), *count of
 * them: KV_OK, KV_BUSY without a view yet, or KV_ENOMEM. */
static kv_err
index_tables(node *n, arena *a, uint32_t **ids, size_t *count)
{
	index_state *s = n->gsi;
	kv_err rv = KV_BUSY;
	*count = 0;
	pthread_rwlock_rdlock(&s->view_lock);
	if (s->view != NULL) {
		*ids = arena_alloc(a, (s->view->n_tables + 1) * sizeof(**ids));
		rv = *ids == NULL ? KV_ENOMEM : KV_OK;
		for (size_t i = 0; *ids != NULL && i < s->view->n_tables; i++)
			if (s->view->tables[i].base_id != 0)
				(*ids)[(*count)++] = s->view->tables[i].id;
	}
	pthread_rwlock_unlock(&s->view_lock);
	return rv;
}

/*
 * One SWEEP request: goes on through this node's partitions of global
 * indexes (but those of skip) for COLLECT_BUDGET_US, deleting the
 * tombstones stamped below the round's fence. *done once all are swept.
 */
static kv_err
sweep(node *n, const uint32_t *skip, size_t n_skip, arena *a, bool *done)
{
	index_state *s = n->gsi;
	struct collect_round *r = &s->round;
	size_t n_gsi;
	uint32_t *gsi = NULL;
	kv_err rv = index_tables(n, a, &gsi, &n_gsi);
	uint64_t deleted = 0, left = 0;
	int64_t deadline = clock_mono_us() + COLLECT_BUDGET_US;
	*done = false;
	if (rv != KV_OK)
		return rv;
	found_set *f = calloc(1, sizeof(*f));
	if (f == NULL)
		return KV_ENOMEM;
	f->fence = r->fence;
	/* r's position is this request's alone: the round is busy. */
	pthread_rwlock_rdlock(&n->parts.lock);
	while (rv == KV_OK && clock_mono_us() < deadline) {
		part *p = next_part(n, gsi, n_gsi, skip, n_skip, r->at_table,
		    r->at_part);
		if (p == NULL) {
			*done = true;
			break;
		}
		if (p->table_id != r->at_table || p->id != r->at_part) {
			free(r->from);
			r->from = NULL;
			r->at_table = p->table_id;
			r->at_part = p->id;
		}
		rv = sweep_chunk(n, p, f, r->from, r->from_len, deadline,
		    &deleted, &left);
		if (rv != KV_OK)
			break;
		free(r->from);
		r->from = f->stop;
		r->from_len = f->stop_len;
		if (r->from == NULL) /* p is done: the next one */
			r->at_part = p->id + 1;
	}
	pthread_rwlock_unlock(&n->parts.lock);
	free(f->keys);
	free(f);
	r->deleted += deleted;
	r->left += left;
	atomic_fetch_add(&s->collected, deleted);
	return rv;
}

/* The answer's bytes: the boot, then n u64s (or the u32s of ids). */
static kv_err
answer(index_state *s, arena *a, const uint64_t *nums, size_t n,
    const uint32_t *ids, size_t n_ids, rpc_response *resp)
{
	size_t len = 8 + 8 * n + 4 * n_ids;
	uint8_t *b = arena_alloc(a, len);
	if (b == NULL)
		return KV_ENOMEM;
	bytes_put_le64(b, s->boot);
	for (size_t i = 0; i < n; i++)
		bytes_put_le64(b + 8 + 8 * i, nums[i]);
	for (size_t i = 0; i < n_ids; i++)
		bytes_put_le32(b + 8 + 8 * n + 4 * i, ids[i]);
	resp->item = b;
	resp->item_len = len;
	return KV_OK;
}

void
index_collect_serve(node *n, const rpc_request *req, arena *a,
    rpc_response *resp)
{
	index_state *s = n->gsi;
	struct collect_round *r = &s->round;
	uint64_t num;
	bool done = false;

	switch (req->limit) {
	case RPC_COLLECT_FENCE:
		pthread_mutex_lock(&s->collect_mu);
		if (r->busy) {
			pthread_mutex_unlock(&s->collect_mu);
			resp->code = KV_BUSY;
			return;
		}
		/* Above every stamp given so far (apply.c reads the clock
		 * for one), at or below every later one. */
		num = index_next_number(s);
		free(r->from);
		*r = (struct collect_round) { .fence = num,
		    .fence_tombs = atomic_load(&s->tombs),
		    .clean_tombs = r->clean_tombs };
		resp->found = r->clean_tombs != r->fence_tombs;
		pthread_mutex_unlock(&s->collect_mu);
		resp->code = answer(s, a, &num, 1, NULL, 0, resp);
		return;
	case RPC_COLLECT_MARK:
		num = atomic_load(&s->clock);
		resp->code = answer(s, a, &num, 1, NULL, 0, resp);
		return;
	case RPC_COLLECT_LOW: {
		uint32_t *ids = arena_alloc(a, COLLECT_MAX_WAITING *
		    sizeof(*ids));
		size_t n_ids = 0;
		resp->code = ids == NULL ? KV_ENOMEM :
		    index_outbox_waiting(n, req->ack, ids, COLLECT_MAX_WAITING,
		    &n_ids);
		if (resp->code == KV_OK)
			resp->code = answer(s, a, NULL, 0, ids, n_ids, resp);
		return;
	}
	case RPC_COLLECT_SWEEP:
		break;
	default:
		resp->code = KV_PROTO;
		return;
	}
	size_t n_skip = req->item_len / 4;
	uint32_t *skip = arena_alloc(a, (n_skip + 1) * sizeof(*skip));
	if (skip == NULL || req->item_len % 4 != 0) {
		resp->code = skip == NULL ? KV_ENOMEM : KV_PROTO;
		return;
	}
	for (size_t i = 0; i < n_skip; i++)
		skip[i] = bytes_get_le32(req->item + 4 * i);
	pthread_mutex_lock(&s->collect_mu);
	if (req->move_id != s->boot || r->fence == 0 ||
	    req->ack != r->fence || r->busy) {
		/* Restarted, or another round began: this one is over. */
		pthread_mutex_unlock(&s->collect_mu);
		resp->code = KV_BUSY;
		resp->message = "not the collection round under way";
		return;
	}
	r->busy = true;
	pthread_mutex_unlock(&s->collect_mu);
	resp->code = sweep(n, skip, n_skip, a, &done);
	pthread_mutex_lock(&s->collect_mu);
	r->busy = false;
	if (resp->code == KV_OK && done) {
		s->last_left = r->left;
		if (r->left == 0 && n_skip == 0)
			r->clean_tombs = r->fence_tombs;
		/* The fence stays: a repeat of this request (its answer
		 * lost) finds the sweep done again. */
	}
	num = r->deleted;
	pthread_mutex_unlock(&s->collect_mu);
	resp->found = resp->code == KV_OK && done;
	if (resp->code == KV_OK)
		resp->code = answer(s, a, &num, 1, NULL, 0, resp);
}

/* ---- the collector (the catalog node's) ---- */

/* Waits ms, or less if the collector is stopped: true when it is. */
static bool
wait_or_stop(index_state *s, int64_t ms)
{
	struct timespec ts = clock_deadline_in(ms);
	pthread_mutex_lock(&s->coll_mu);
	while (!s->coll_stop &&
	    pthread_cond_timedwait(&s->coll_cv, &s->coll_mu, &ts) == 0)
		;
	bool stop = s->coll_stop;
	pthread_mutex_unlock(&s->coll_mu);
	return stop;
}

/* A node taking part in a round. */
typedef struct member {
	uint32_t node;
	uint64_t boot;  /* its answers' (0: none yet) */
	uint64_t fence, mark;
} member;

/*
 * Asks m's node one step; the numbers of its answer in nums[0..n_nums),
 * the indexes after them in ids (at most cap, *n_ids; may be NULL),
 * FENCE's and SWEEP's found in *found. KV_BUSY when the node restarted
 * since its first answer of the round.
 */
static kv_err
ask(node *n, member *m, const rpc_request *req, uint64_t *nums,
    size_t n_nums, uint32_t *ids, size_t cap, size_t *n_ids, bool *found)
{
	rpc_response resp;
	arena a;
	arena_init(&a);
	kv_err rv = cluster_ask(n, m->node, req, &a, &resp, COLLECT_CALL_MS);
	size_t len = resp.item_len;
	if (rv == KV_OK && (resp.item == NULL || len < 8 + 8 * n_nums ||
	    (len - 8 - 8 * n_nums) % 4 != 0))
		rv = KV_PROTO;
	if (rv == KV_OK) {
		uint64_t boot = bytes_get_le64(resp.item);
		if (m->boot != 0 && boot != m->boot)
			rv = KV_BUSY;
		m->boot = boot;
	}
	for (size_t i = 0; rv == KV_OK && i < n_nums; i++)
		nums[i] = bytes_get_le64(resp.item + 8 + 8 * i);
	size_t k = rv == KV_OK ? (len - 8 - 8 * n_nums) / 4 : 0;
	for (size_t i = 0; ids != NULL && i < k; i++) {
		uint32_t id = bytes_get_le32(resp.item + 8 + 8 * n_nums +
		    4 * i);
		if (!id_in(id, ids, *n_ids) && *n_ids < cap)
			ids[(*n_ids)++] = id;
	}
	if (found != NULL)
		*found = resp.found;
	wire_response_fini(&resp);
	arena_fini(&a);
	return rv;
}

/* Whether the view has a global index (and so perhaps tombstones). */
static bool
any_index(index_state *s)
{
	bool any = false;
	pthread_rwlock_rdlock(&s->view_lock);
	for (size_t i = 0; s->view != NULL && i < s->view->n_tables && !any;
	    i++)
		any = s->view->tables[i].base_id != 0;
	pthread_rwlock_unlock(&s->view_lock);
	return any;
}

/* One round over every node that may be running; a COLLECT_ROUND_*. */
static int
round_once(node *n)
{
	index_state *s = n->gsi;
	member ms[CONFIG_MAX_NODES];
	uint32_t waiting[COLLECT_MAX_WAITING];
	size_t k = 0, n_wait = 0;
	uint64_t deleted = 0;
	bool any = false, found;
	/* A planted fault (plant.h) leaves out what it cannot reach. */
	bool early = plant_armed(&n->plant, PLANT_COLLECT_EARLY);
	size_t left_out = 0;

	/* Without a global index, no node is asked anything. */
	if (!any_index(s))
		return COLLECT_ROUND_IDLE;
	for (uint32_t i = 0; i < n->cfg.n_nodes && k < CONFIG_MAX_NODES; i++)
		if (catalog_node_running(n, i))
			ms[k++] = (member) { .node = i };
	for (size_t i = 0; i < k; i++) {
		rpc_request req = { .op = RPC_INDEX_COLLECT,
		    .limit = RPC_COLLECT_FENCE };
		if (ask(n, &ms[i], &req, &ms[i].fence, 1, NULL, 0, NULL,
		    &found) == KV_OK) {
			any |= found;
			continue;
		}
		if (!early)
			return COLLECT_ROUND_ENDED;
		ms[i--] = ms[--k];
		left_out++;
	}
	early = early && left_out > 0;
	if (!any)
		return COLLECT_ROUND_IDLE;
	/* Every fence is given: now the marks. */
	for (size_t i = 0; i < k && !early; i++) {
		rpc_request req = { .op = RPC_INDEX_COLLECT,
		    .limit = RPC_COLLECT_MARK };
		if (ask(n, &ms[i], &req, &ms[i].mark, 1, NULL, 0, NULL,
		    NULL) != KV_OK)
			return COLLECT_ROUND_ENDED;
	}
	/* Until every outbox has sent what it held at its mark (an index
	 * paused or behind for long keeps its tombstones this round). */
	int64_t until = clock_mono_us() + COLLECT_DRAIN_MS * 1000;
	for (; !early;) {
		n_wait = 0;
		for (size_t i = 0; i < k; i++) {
			rpc_request req = { .op = RPC_INDEX_COLLECT,
			    .limit = RPC_COLLECT_LOW, .ack = ms[i].mark };
			if (ask(n, &ms[i], &req, NULL, 0, waiting,
			    COLLECT_MAX_WAITING, &n_wait, NULL) != KV_OK)
				return COLLECT_ROUND_ENDED;
		}
		if (n_wait == 0 || clock_mono_us() >= until)
			break;
		if (wait_or_stop(s, COLLECT_POLL_MS))
			return COLLECT_ROUND_ENDED;
	}
	if (wait_or_stop(s, early ? 0 : COLLECT_GRACE_MS))
		return COLLECT_ROUND_ENDED;
	uint8_t skip[4 * COLLECT_MAX_WAITING];
	for (size_t w = 0; w < n_wait; w++)
		bytes_put_le32(skip + 4 * w, waiting[w]);
	int64_t t0 = clock_mono_us();
	for (size_t i = 0; i < k; i++) {
		uint64_t got = 0;
		do {
			rpc_request req = { .op = RPC_INDEX_COLLECT,
			    .limit = RPC_COLLECT_SWEEP, .ack = ms[i].fence,
			    .move_id = ms[i].boot, .item = skip,
			    .item_len = 4 * n_wait };
			if (ask(n, &ms[i], &req, &got, 1, NULL, 0, NULL,
			    &found) != KV_OK || wait_or_stop(s, 0))
				return COLLECT_ROUND_ENDED;
		} while (!found);
		deleted += got;
	}
	int64_t took = clock_mono_us() - t0;
	atomic_fetch_add(&s->sweep_us, (uint64_t) took);
	if (deleted > 0)
		fprintf(stderr, "kv-node %u: %llu index tombstones collected "
		    "(sweeps %.2f s)\n", n->index, (unsigned long long) deleted,
		    (double) took / 1e6);
	if (early && deleted > 0 && plant_fire(&n->plant, PLANT_COLLECT_EARLY))
		fprintf(stderr, "kv-node %u: PLANTED FAULT: index tombstones "
		    "collected without %zu node%s and without waiting for the "
		    "outboxes\n", n->index, left_out, left_out == 1 ? "" : "s");
	return COLLECT_ROUND_SWEPT;
}

static void *
collector_run(void *arg)
{
	node *n = arg;
	index_state *s = n->gsi;
	thread_name("kv-gsi-collect");
	while (!wait_or_stop(s, (int64_t) n->cfg.gsi_collect_s * 1000))
		atomic_fetch_add(&s->rounds[round_once(n)], 1);
	return NULL;
}

kv_err
index_collector_start(node *n)
{
	index_state *s = n->gsi;
	if (s == NULL || n->cfg.gsi_collect_s == 0)
		return KV_OK;
	if (pthread_create(&s->coll_thread, NULL, collector_run, n) != 0)
		return KV_ENOMEM;
	s->coll_started = true;
	return KV_OK;
}

static void
collector_stop(index_state *s)
{
	if (!s->coll_started)
		return;
	pthread_mutex_lock(&s->coll_mu);
	s->coll_stop = true;
	pthread_cond_broadcast(&s->coll_cv);
	pthread_mutex_unlock(&s->coll_mu);
	pthread_join(s->coll_thread, NULL);
	s->coll_started = false;
}

void
index_collector_stop(node *n)
{
	if (n->gsi != NULL)
		collector_stop(n->gsi);
}
