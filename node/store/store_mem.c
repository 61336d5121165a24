/*
 * store_mem.c — the in-memory engine of store.h: a sorted array of owned
 * key/value pairs under one read-write lock. Meant for tests and
 * experiments, not for size: inserts are O(n). A scan holds the read lock
 * while it calls back, so a scan callback must not write to the store.
 */
#include "store.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct entry {
	uint8_t *k;
	size_t kl;
	uint8_t *v;
	size_t vl;
} entry;

typedef struct mem {
	store base;
	pthread_rwlock_t lock; /* guards e, n, cap */
	entry *e;
	size_t n, cap;
} mem;

static int
keycmp(const uint8_t *a, size_t al, const uint8_t *b, size_t bl)
{
	int c = memcmp(a, b, al < bl ? al : bl);
	if (c != 0)
		return c;
	return al < bl ? -1 : al > bl ? 1 : 0;
}

/* Index of the first entry >= k. */
static size_t
lower_bound_locked(mem *m, const uint8_t *k, size_t kl)
{
	size_t lo = 0, hi = m->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (keycmp(m->e[mid].k, m->e[mid].kl, k, kl) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static kv_err
mem_get(store *s, const uint8_t *k, size_t kl, uint8_t **v, size_t *vl,
    bool *found)
{
	mem *m = (mem *) s;
	kv_err rv = KV_OK;
	*found = false;
	*v = NULL;
	*vl = 0;
	pthread_rwlock_rdlock(&m->lock);
	size_t i = lower_bound_locked(m, k, kl);
	if (i < m->n && keycmp(m->e[i].k, m->e[i].kl, k, kl) == 0) {
		*v = malloc(m->e[i].vl > 0 ? m->e[i].vl : 1);
		if (*v == NULL) {
			rv = KV_ENOMEM;
		} else {
			memcpy(*v, m->e[i].v, m->e[i].vl);
			*vl = m->e[i].vl;
			*found = true;
		}
	}
	pthread_rwlock_unlock(&m->lock);
	return rv;
}

static void
erase_locked(mem *m, size_t i, size_t j)
{
	for (size_t x = i; x < j; x++) {
		free(m->e[x].k);
		free(m->e[x].v);
	}
	if (m->n > j)
		memmove(&m->e[i], &m->e[j], (m->n - j) * sizeof(entry));
	m->n -= j - i;
}

static kv_err
mem_write(store *s, const store_batch *b)
{
	mem *m = (mem *) s;
	/* Copy every put first, so that the batch cannot half-apply. */
	entry *fresh = calloc(b->n > 0 ? b->n : 1, sizeof(entry));
	kv_err rv = KV_OK;
	if (fresh == NULL)
		return KV_ENOMEM;
	size_t puts = 0;
	for (size_t i = 0; i < b->n; i++) {
		if (b->ops[i].kind != STORE_PUT)
			continue;
		puts++;
		entry *f = &fresh[i];
		f->k = malloc(b->ops[i].key_len + 1);
		f->v = malloc(b->ops[i].val_len + 1);
		if (f->k == NULL || f->v == NULL) {
			rv = KV_ENOMEM;
			goto out;
		}
		memcpy(f->k, b->ops[i].key, b->ops[i].key_len);
		memcpy(f->v, b->ops[i].val, b->ops[i].val_len);
		f->kl = b->ops[i].key_len;
		f->vl = b->ops[i].val_len;
	}
	pthread_rwlock_wrlock(&m->lock);
	if (m->n + puts > m->cap) {
		size_t cap = m->cap == 0 ? 64 : m->cap;
		while (cap < m->n + puts)
			cap *= 2;
		entry *e = realloc(m->e, cap * sizeof(entry));
		if (e == NULL) {
			pthread_rwlock_unlock(&m->lock);
			rv = KV_ENOMEM;
			goto out;
		}
		m->e = e;
		m->cap = cap;
	}
	for (size_t i = 0; i < b->n; i++) {
		const store_op *op = &b->ops[i];
		size_t at = lower_bound_locked(m, op->key, op->key_len);
		bool hit = at < m->n &&
		    keycmp(m->e[at].k, m->e[at].kl, op->key, op->key_len) == 0;
		if (op->kind == STORE_PUT) {
			if (hit) {
				free(m->e[at].k);
				free(m->e[at].v);
			} else {
				memmove(&m->e[at + 1], &m->e[at],
				    (m->n - at) * sizeof(entry));
				m->n++;
			}
			m->e[at] = fresh[i];
			fresh[i].k = fresh[i].v = NULL;
		} else if (op->kind == STORE_DELETE) {
			if (hit)
				erase_locked(m, at, at + 1);
		} else {
			size_t end = lower_bound_locked(m, op->val,
			    op->val_len);
			if (end > at)
				erase_locked(m, at, end);
		}
	}
	pthread_rwlock_unlock(&m->lock);
out:
	for (size_t i = 0; i < b->n; i++) {
		free(fresh[i].k);
		free(fresh[i].v);
	}
	free(fresh);
	return rv;
}

static kv_err
mem_scan(store *s, const uint8_t *lo, size_t lol, const uint8_t *hi,
    size_t hil, store_scan_fn fn, void *arg)
{
	mem *m = (mem *) s;
	pthread_rwlock_rdlock(&m->lock);
	for (size_t i = lower_bound_locked(m, lo, lol); i < m->n; i++) {
		if (hi != NULL && keycmp(m->e[i].k, m->e[i].kl, hi, hil) >= 0)
			break;
		if (!fn(arg, m->e[i].k, m->e[i].kl, m->e[i].v, m->e[i].vl))
			break;
	}
	pthread_rwlock_unlock(&m->lock);
	return KV_OK;
}

/* The copy mem_scan_snap takes of one entry. */
typedef struct snap_entry {
	uint8_t *k, *v;
	size_t kl, vl;
} snap_entry;

static bool
snap_take(void *arg, const uint8_t *k, size_t kl, const uint8_t *v,
    size_t vl)
{
	struct { snap_entry *e; size_t n, cap; bool failed; } *l = arg;
	if (l->n == l->cap) {
		size_t cap = l->cap == 0 ? 64 : l->cap * 2;
		snap_entry *e = realloc(l->e, cap * sizeof(*e));
		if (e == NULL) {
			l->failed = true;
			return false;
		}
		l->e = e;
		l->cap = cap;
	}
	snap_entry *e = &l->e[l->n];
	e->k = malloc(kl > 0 ? kl : 1);
	e->v = malloc(vl > 0 ? vl : 1);
	if (e->k == NULL || e->v == NULL) {
		free(e->k);
		free(e->v);
		l->failed = true;
		return false;
	}
	memcpy(e->k, k, kl);
	if (vl > 0)
		memcpy(e->v, v, vl);
	e->kl = kl;
	e->vl = vl;
	l->n++;
	return true;
}

/* A copy of the range under the read lock, then the calls without it
 * (fn may write): this store is for tests, its ranges small. */
static kv_err
mem_scan_snap(store *s, const uint8_t *lo, size_t lol, const uint8_t *hi,
    size_t hil, store_scan_fn fn, void *arg)
{
	struct { snap_entry *e; size_t n, cap; bool failed; } l = { 0 };
	kv_err rv = mem_scan(s, lo, lol, hi, hil, snap_take, &l);
	if (rv == KV_OK && l.failed)
		rv = KV_ENOMEM;
	bool go = rv == KV_OK;
	for (size_t i = 0; i < l.n; i++) {
		if (go)
			go = fn(arg, l.e[i].k, l.e[i].kl, l.e[i].v, l.e[i].vl);
		free(l.e[i].k);
		free(l.e[i].v);
	}
	free(l.e);
	return rv;
}

static kv_err
mem_scan_rev(store *s, const uint8_t *lo, size_t lol, const uint8_t *hi,
    size_t hil, store_scan_fn fn, void *arg)
{
	mem *m = (mem *) s;
	pthread_rwlock_rdlock(&m->lock);
	size_t end = hi != NULL ? lower_bound_locked(m, hi, hil) : m->n;
	for (size_t i = end; i-- > 0;) {
		if (keycmp(m->e[i].k, m->e[i].kl, lo, lol) < 0)
			break;
		if (!fn(arg, m->e[i].k, m->e[i].kl, m->e[i].v, m->e[i].vl))
			break;
	}
	pthread_rwlock_unlock(&m->lock);
	return KV_OK;
}

static void
mem_close(store *s)
{
	mem *m = (mem *) s;
	erase_locked(m, 0, m->n);
	free(m->e);
	pthread_rwlock_destroy(&m->lock);
	store_base_fini(&m->base);
	free(m);
}

/* Nothing to make durable: the store lives and dies with the process. */
static kv_err
mem_flush(store *s)
{
	(void) s;
	return KV_OK;
}

static const store_ops mem_ops = {
	.get = mem_get,
	.write = mem_write,
	.flush = mem_flush,
	.scan = mem_scan,
	.scan_rev = mem_scan_rev,
	.scan_snap = mem_scan_snap,
	.close = mem_close,
};

kv_err
store_open_mem(store **out)
{
	mem *m = calloc(1, sizeof(*m));
	if (m == NULL)
		return KV_ENOMEM;
	if (store_base_init(&m->base, &mem_ops) != KV_OK) {
		free(m);
		return KV_ENOMEM;
	}
	pthread_rwlock_init(&m->lock, NULL);
	*out = &m->base;
	return KV_OK;
}
