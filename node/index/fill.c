/*
 * fill.c — RPC_INDEX_BACKFILL: filling a new index from this node's
 * partitions of its base table (index_int.h, ../index.h).
 */
#include "index_int.h"

#include "thread_name.h"

/* ---- filling an index (RPC_INDEX_BACKFILL) ---- */

static bool
fill_has(const fill *f, uint32_t part, uint64_t epoch)
{
	for (size_t i = 0; i < f->n_done; i++)
		if (f->done[i].part == part && f->done[i].epoch == epoch)
			return true;
	return false;
}

/* The items of one chunk, copied out of the store. */
typedef struct chunk_items {
	uint8_t *keys[FILL_CHUNK], *vals[FILL_CHUNK];
	size_t kls[FILL_CHUNK], vls[FILL_CHUNK];
	size_t n;
	bool failed;
} chunk_items;

static bool
take_item(void *arg, const uint8_t *k, size_t kl, const uint8_t *v,
    size_t vl)
{
	chunk_items *c = arg;
	uint8_t *kc = malloc(kl + 1), *vc = malloc(vl > 0 ? vl : 1);
	if (kc == NULL || vc == NULL) {
		free(kc);
		free(vc);
		c->failed = true;
		return false;
	}
	memcpy(kc, k, kl);
	memcpy(vc, v, vl);
	c->keys[c->n] = kc;
	c->kls[c->n] = kl;
	c->vals[c->n] = vc;
	c->vls[c->n++] = vl;
	return c->n < FILL_CHUNK;
}

static void
chunk_free(chunk_items *c)
{
	for (size_t i = 0; i < c->n; i++) {
		free(c->keys[i]);
		free(c->vals[i]);
	}
	c->n = 0;
}

/*
 * Writes put records for the items of one chunk of partition `id` at
 * `epoch` from *from (owned; moved past the chunk). 1: more to do; 0:
 * the partition is filled; -1: it cannot be (gone, another epoch, the
 * index deleted, a failure).
 */
static int
fill_chunk(node *n, fill *f, uint32_t id, uint64_t epoch, uint8_t **from,
    size_t *froml)
{
	index_state *s = n->gsi;
	chunk_items c = { .n = 0 };
	int rc = -1;
	arena a;
	store_batch b;

	arena_init(&a);
	store_batch_init(&b);
	/* The locks of a write, in a write's order (index.h). */
	pthread_rwlock_rdlock(&s->view_lock);
	const table *t = table_find_id(s->view, f->base_id);
	const index_def *d = NULL;
	for (size_t i = 0; t != NULL && i < t->n_indexes; i++)
		if (index_kept_global(&t->indexes[i]) && t->indexes[i].table_id ==
		    f->index_id)
			d = &t->indexes[i];
	pthread_rwlock_rdlock(&n->parts.lock);
	part *p = d != NULL ? part_map_find_locked(&n->parts, f->base_id,
	    id) : NULL;
	if (p == NULL || p->epoch != epoch)
		goto unlock_map;
	pthread_mutex_lock(&p->mu);
	uint8_t lo[KEYENC_PREFIX], hi[KEYENC_PREFIX];
	size_t hil;
	part_key_range(p, lo, hi, &hil);
	const uint8_t *start = *from != NULL ? *from : lo;
	size_t startl = *from != NULL ? *froml : sizeof(lo);
	if (store_scan(n->st, start, startl, hi, hil, take_item, &c) !=
	    KV_OK || c.failed)
		goto unlock;
	bool ok = true;
	index_order_lock(n); /* numbers in store order (index.h) */
	for (size_t i = 0; i < c.n && ok; i++) {
		size_t at;
		value item;
		if (!keyenc_is_item(c.keys[i], c.kls[i]) ||
		    c.vls[i] < RECORD_HEADER ||
		    (at = record_item_offset(c.vals[i], c.vls[i])) ==
		    c.vls[i])
			continue;
		ok = codec_decode(&a, c.vals[i] + at, c.vls[i] - at, &item) ==
		    KV_OK && item.type == VAL_M && index_outbox_one(n, t, d,
		    p->epoch, NULL, &item, &a, &b, &(uint64_t) { 0 }) == KV_OK;
	}
	ok = ok && (b.n == 0 || store_write(n->st, &b) == KV_OK);
	index_order_unlock(n);
	if (!ok)
		goto unlock;
	index_count(n, &b, 1);
	atomic_fetch_add(&s->filled, c.n);
	rc = c.n < FILL_CHUNK ? 0 : 1;
	if (rc == 1) {
		/* The next chunk starts just after the last key. */
		size_t l = c.kls[c.n - 1];
		c.keys[c.n - 1][l] = 0;
		free(*from);
		*from = c.keys[c.n - 1];
		*froml = l + 1;
		c.keys[c.n - 1] = NULL;
	}
unlock:
	pthread_mutex_unlock(&p->mu);
unlock_map:
	pthread_rwlock_unlock(&n->parts.lock);
	pthread_rwlock_unlock(&s->view_lock);
	chunk_free(&c);
	store_batch_fini(&b);
	arena_fini(&a);
	if (rc >= 0 && b.n > 0)
		index_kick(n);
	return rc;
}

static bool
stopping(index_state *s)
{
	pthread_mutex_lock(&s->mu);
	bool stop = s->stop;
	pthread_mutex_unlock(&s->mu);
	return stop;
}

static void *
fill_run(void *arg)
{
	fill *f = arg;
	node *n = f->n;
	index_state *s = n->gsi;
	struct fill_done *todo = NULL;
	size_t k = 0;
	thread_name("kv-gsi-fill");

	/* The partitions to fill: this node's, not filled at their epoch. */
	pthread_rwlock_rdlock(&n->parts.lock);
	pthread_mutex_lock(&s->fill_mu);
	todo = calloc(n->parts.n + 1, sizeof(*todo));
	for (size_t i = 0; todo != NULL && i < n->parts.n; i++) {
		const part *p = n->parts.p[i];
		if (p->table_id == f->base_id && !fill_has(f, p->id, p->epoch))
			todo[k++] = (struct fill_done) { p->id, p->epoch };
	}
	pthread_mutex_unlock(&s->fill_mu);
	pthread_rwlock_unlock(&n->parts.lock);
	for (size_t i = 0; i < k && !stopping(s); i++) {
		uint8_t *from = NULL;
		size_t froml = 0;
		int rc;
		while ((rc = fill_chunk(n, f, todo[i].part, todo[i].epoch,
		    &from, &froml)) == 1 && !stopping(s))
			;
		free(from);
		if (rc != 0)
			continue;
		pthread_mutex_lock(&s->fill_mu);
		if (f->n_done == f->cap) {
			size_t cap = f->cap == 0 ? 8 : f->cap * 2;
			struct fill_done *g = realloc(f->done,
			    cap * sizeof(*g));
			if (g != NULL) {
				f->done = g;
				f->cap = cap;
			}
		}
		if (f->n_done < f->cap)
			f->done[f->n_done++] = todo[i];
		pthread_mutex_unlock(&s->fill_mu);
	}
	free(todo);
	pthread_mutex_lock(&s->fill_mu);
	f->end_num = atomic_load(&s->clock);
	f->running = false;
	pthread_mutex_unlock(&s->fill_mu);
	return NULL;
}

void
index_backfill_serve(node *n, const rpc_request *req, arena *a,
    rpc_response *resp)
{
	index_state *s = n->gsi;
	(void) a;
	/* The view must have the index: writes from then on have records. */
	bool known = false;
	pthread_rwlock_rdlock(&s->view_lock);
	const table *t = table_find_id(s->view, req->table_id);
	for (size_t i = 0; t != NULL && i < t->n_indexes; i++)
		known |= t->indexes[i].table_id == req->part;
	pthread_rwlock_unlock(&s->view_lock);
	if (!known) {
		resp->code = KV_BUSY;
		return;
	}
	pthread_rwlock_rdlock(&n->parts.lock);
	pthread_mutex_lock(&s->fill_mu);
	fill *f = s->fills;
	while (f != NULL && (f->base_id != req->table_id ||
	    f->index_id != req->part))
		f = f->next;
	if (f == NULL && (f = calloc(1, sizeof(*f))) != NULL) {
		f->base_id = req->table_id;
		f->index_id = req->part;
		f->n = n;
		f->next = s->fills;
		s->fills = f;
	}
	bool all = f != NULL && !f->running;
	for (size_t i = 0; all && i < n->parts.n; i++) {
		const part *p = n->parts.p[i];
		if (p->table_id == req->table_id && !fill_has(f, p->id,
		    p->epoch))
			all = false;
	}
	/*
	 * Filled means applied too: the index is not ACTIVE while records
	 * of the fill still wait here (the replicator's last look found
	 * none, or only later ones).
	 */
	bool sent = false;
	if (all) {
		pthread_mutex_lock(&s->count_mu);
		struct index_count *c = count_of(s, req->part);
		sent = c == NULL || c->pending <= 0 ||
		    (c->oldest != 0 && c->oldest > f->end_num);
		pthread_mutex_unlock(&s->count_mu);
	}
	resp->code = f == NULL ? KV_ENOMEM : KV_OK;
	resp->found = all && sent;
	if (f != NULL && !all && !f->running) {
		if (f->joinable)
			pthread_join(f->thread, NULL);
		f->joinable = f->running = pthread_create(&f->thread, NULL,
		    fill_run, f) == 0;
		if (!f->running)
			resp->code = KV_ENOMEM;
	}
	pthread_mutex_unlock(&s->fill_mu);
	pthread_rwlock_unlock(&n->parts.lock);
}
