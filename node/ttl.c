/*
 * ttl.c — the Time to Live sweep (ttl.h).
 *
 * Locking, as a write's: the index view (read), the partition map
 * (read), then the partition's mutex, held for one chunk of at most
 * CHUNK items, so writes to the partition wait at most a chunk. The
 * state's mutex guards stop only; the counters are atomic.
 *
 * If the process dies during a sweep, each deletion done is durable or
 * not as any write is (its batch is one RocksDB write, logged); an item
 * not yet deleted is deleted by the next sweep after the restart.
 */
#include "ttl.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "codec.h"
#include "index.h"
#include "item.h"
#include "keyenc.h"
#include "number.h"
#include "txn.h"
#include "thread_name.h"

#define CHUNK 128
#define FIVE_YEARS_S (5ull * 365 * 86400)

typedef struct ttl_state {
	pthread_t thread;
	bool started;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool stop;
	_Atomic uint64_t deleted, swept;
} ttl_state;

/* One chunk's walk over a partition's keys (the scan's callback). */
typedef struct walk {
	node *n;
	part *p;
	const table *indexed; /* the table when it has indexes, else NULL */
	const char *attr;
	number now, oldest;
	size_t seen;
	uint8_t *last; /* the last key walked (owned), for the next chunk */
	size_t last_len;
	bool failed;
	bool flush;    /* something was written */
} walk;

/* Whether item's TTL attribute says it has expired. */
static bool
expired(const walk *w, const value *item)
{
	const value *v = item_attr(item, w->attr, strlen(w->attr));
	return v != NULL && v->type == VAL_N &&
	    number_cmp(v->u.num, &w->now) < 0 &&
	    number_cmp(v->u.num, &w->oldest) >= 0;
}

static bool
visit(void *arg, const uint8_t *k, size_t kl, const uint8_t *v, size_t vl)
{
	walk *w = arg;
	uint8_t *copy = realloc(w->last, kl + 1);
	if (copy == NULL) {
		w->failed = true;
		return false;
	}
	memcpy(copy, k, kl);
	w->last = copy;
	w->last_len = kl;
	w->seen++;
	size_t at;
	if (keyenc_is_item(k, kl) && vl >= RECORD_HEADER &&
	    (at = record_item_offset(v, vl)) < vl &&
	    !txn_locked(w->n, k, kl)) {
		arena a;
		value item;
		store_batch b;
		arena_init(&a);
		store_batch_init(&b);
		if (codec_decode(&a, v + at, vl - at, &item) == KV_OK &&
		    item.type == VAL_M && expired(w, &item)) {
			if (write_commit(w->n, w->p, w->indexed, k, kl, &item,
			    record_size(v), NULL, NULL, 0, &a, &b) == KV_OK) {
				atomic_fetch_add(&w->n->ttl->deleted, 1);
				w->flush = true;
			} else {
				w->failed = true;
			}
		}
		store_batch_fini(&b);
		arena_fini(&a);
	}
	return !w->failed && w->seen < CHUNK;
}

/*
 * Sweeps one chunk of partition id of table table_id (attribute attr)
 * from *from (owned; NULL: the start; moved past the chunk). 1: more to
 * do; 0: done; -1: the partition, its epoch or the table's TTL changed,
 * or a failure.
 */
static int
sweep_chunk(node *n, uint32_t table_id, const char *attr, uint32_t id,
    uint64_t epoch, uint8_t **from, size_t *froml)
{
	walk w = { .n = n, .attr = attr };
	int rc = -1;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	uint64_t now = (uint64_t) ts.tv_sec;
	number_from_u64(now, &w.now);
	number_from_u64(now > FIVE_YEARS_S ? now - FIVE_YEARS_S : 0,
	    &w.oldest);

	/* A view older than the partitions' assignment may not know the
	 * table's indexes yet (index.h): no sweep until it does. */
	const table *probe;
	if (index_view_table(n, table_id, &probe) != KV_OK)
		return -1;
	if (probe != NULL)
		index_view_unlock(n);
	const catalog *view = index_view_lock(n);
	const table *t = view != NULL ? table_find_id(view, table_id) : NULL;
	if (t == NULL || t->ttl_attr == NULL || strcmp(t->ttl_attr, attr) != 0)
		goto unlock_view;
	w.indexed = index_table_indexed(t) ? t : NULL;
	pthread_rwlock_rdlock(&n->parts.lock);
	part *p = part_map_find_locked(&n->parts, table_id, id);
	if (p == NULL || p->epoch != epoch)
		goto unlock_map;
	w.p = p;
	pthread_mutex_lock(&p->mu);
	uint8_t lo[KEYENC_PREFIX], hi[KEYENC_PREFIX];
	size_t hil;
	part_key_range(p, lo, hi, &hil);
	const uint8_t *start = *from != NULL ? *from : lo;
	size_t startl = *from != NULL ? *froml : sizeof(lo);
	if (store_scan(n->st, start, startl, hi, hil, visit, &w) == KV_OK &&
	    !w.failed && (!w.flush || store_flush(n->st) == KV_OK)) {
		atomic_fetch_add(&n->ttl->swept, w.seen);
		rc = w.seen < CHUNK ? 0 : 1;
	}
	pthread_mutex_unlock(&p->mu);
	if (rc == 1) {
		/* The next chunk starts just after the last key. */
		w.last[w.last_len] = 0;
		free(*from);
		*from = w.last;
		*froml = w.last_len + 1;
		w.last = NULL;
	}
unlock_map:
	pthread_rwlock_unlock(&n->parts.lock);
unlock_view:
	if (n->gsi != NULL)
		index_view_unlock(n);
	free(w.last);
	return rc;
}

static bool
stopping(ttl_state *s)
{
	pthread_mutex_lock(&s->mu);
	bool stop = s->stop;
	pthread_mutex_unlock(&s->mu);
	return stop;
}

/* A table to sweep: its id and TTL attribute (owned). */
typedef struct target {
	uint32_t id;
	char *attr;
} target;

static void
sweep(node *n)
{
	ttl_state *s = n->ttl;
	target *ts = NULL;
	size_t nt = 0;

	const catalog *view = index_view_lock(n);
	for (size_t i = 0; view != NULL && i < view->n_tables; i++) {
		const table *t = &view->tables[i];
		if (t->ttl_attr == NULL || t->base_id != 0)
			continue;
		target *g = realloc(ts, (nt + 1) * sizeof(*ts));
		if (g == NULL)
			break;
		ts = g;
		if ((ts[nt].attr = strdup(t->ttl_attr)) == NULL)
			break;
		ts[nt++].id = t->id;
	}
	if (n->gsi != NULL)
		index_view_unlock(n);
	for (size_t i = 0; i < nt && !stopping(s); i++) {
		/* This node's partitions of the table, as they are now. */
		struct { uint32_t id; uint64_t epoch; } *todo;
		size_t k = 0;
		pthread_rwlock_rdlock(&n->parts.lock);
		todo = calloc(n->parts.n + 1, sizeof(*todo));
		for (size_t j = 0; todo != NULL && j < n->parts.n; j++) {
			const part *p = n->parts.p[j];
			if (p->table_id == ts[i].id) {
				todo[k].id = p->id;
				todo[k++].epoch = p->epoch;
			}
		}
		pthread_rwlock_unlock(&n->parts.lock);
		for (size_t j = 0; j < k && !stopping(s); j++) {
			uint8_t *from = NULL;
			size_t froml = 0;
			while (sweep_chunk(n, ts[i].id, ts[i].attr, todo[j].id,
			    todo[j].epoch, &from, &froml) == 1 && !stopping(s))
				;
			free(from);
		}
		free(todo);
	}
	for (size_t i = 0; i < nt; i++)
		free(ts[i].attr);
	free(ts);
}

static void *
run(void *arg)
{
	node *n = arg;
	ttl_state *s = n->ttl;
	thread_name("kv-ttl");
	pthread_mutex_lock(&s->mu);
	while (!s->stop) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		uint64_t ns = (uint64_t) ts.tv_nsec +
		    (uint64_t) n->cfg.ttl_sweep_ms * 1000000u;
		ts.tv_sec += (time_t) (ns / 1000000000u);
		ts.tv_nsec = (long) (ns % 1000000000u);
		pthread_cond_timedwait(&s->cv, &s->mu, &ts);
		if (s->stop)
			break;
		pthread_mutex_unlock(&s->mu);
		sweep(n);
		pthread_mutex_lock(&s->mu);
	}
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

kv_err
ttl_open(node *n)
{
	ttl_state *s = calloc(1, sizeof(*s));
	if (s == NULL)
		return KV_ENOMEM;
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cv, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_init(&s->mu, NULL);
	n->ttl = s;
	if (pthread_create(&s->thread, NULL, run, n) != 0)
		return KV_ENOMEM;
	s->started = true;
	return KV_OK;
}

void
ttl_close(node *n)
{
	ttl_state *s = n->ttl;
	if (s == NULL)
		return;
	pthread_mutex_lock(&s->mu);
	s->stop = true;
	pthread_cond_signal(&s->cv);
	pthread_mutex_unlock(&s->mu);
	if (s->started)
		pthread_join(s->thread, NULL);
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->mu);
	free(s);
	n->ttl = NULL;
}

void
ttl_write_metrics(node *n, FILE *f)
{
	ttl_state *s = n->ttl;
	if (s == NULL)
		return;
	fprintf(f, "# HELP kv_ttl_deleted_total Items deleted by Time to "
	    "Live since the start.\n"
	    "# TYPE kv_ttl_deleted_total counter\n"
	    "kv_ttl_deleted_total{node=\"%u\"} %llu\n"
	    "# HELP kv_ttl_swept_total Keys read by Time to Live sweeps "
	    "since the start.\n"
	    "# TYPE kv_ttl_swept_total counter\n"
	    "kv_ttl_swept_total{node=\"%u\"} %llu\n", n->index,
	    (unsigned long long) atomic_load(&s->deleted), n->index,
	    (unsigned long long) atomic_load(&s->swept));
}
