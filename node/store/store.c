/*
 * store.c — write batches, shared by both store engines, and sorted loads
 * for an engine without its own (see store.h).
 */
#include "store.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

atomic_bool store_disk_failing;

kv_err
store_base_init(store *s, const store_ops *ops)
{
	struct timespec now;
	s->ops = ops;
	s->stamps = calloc(1, sizeof(*s->stamps));
	if (s->stamps == NULL)
		return KV_ENOMEM;
	clock_gettime(CLOCK_REALTIME, &now);
	for (size_t d = 0; d < STORE_STAMP_DOMAINS; d++)
		atomic_store(&s->stamps->all_count[d], (uint64_t) now.tv_sec *
		    1000000000u + (uint64_t) now.tv_nsec);
	return KV_OK;
}

void
store_base_fini(store *s)
{
	free(s->stamps);
	s->stamps = NULL;
}

/* The first key of the tables' (every key below it is the node's). */
static const uint8_t TABLES_FIRST[4] = { 0, 0, 0, 1 };

#define DOMAIN_TABLES 0
#define DOMAIN_SHORT (STORE_STAMP_DOMAINS - 1)
#define DOMAIN_ALL STORE_STAMP_DOMAINS

/* Key k's stamp domain (store.h). */
static size_t
stamp_domain(const uint8_t *k, size_t kl)
{
	size_t m = kl < sizeof(TABLES_FIRST) ? kl : sizeof(TABLES_FIRST);
	int c = memcmp(k, TABLES_FIRST, m);
	if (c > 0 || (c == 0 && kl >= sizeof(TABLES_FIRST)))
		return DOMAIN_TABLES;
	if (kl <= sizeof(TABLES_FIRST))
		return DOMAIN_SHORT;
	return 1 + k[sizeof(TABLES_FIRST)] % (STORE_STAMP_DOMAINS - 2);
}

/* Key k's slot, d its domain: the tables' keys in the lower half, the
 * node's records in the upper (store.h). */
static size_t
stamp_slot(const uint8_t *k, size_t kl, size_t d)
{
	size_t half = STORE_STAMP_SLOTS / 2;
	size_t h = (size_t) XXH3_64bits(k, kl) & (half - 1);
	return d == DOMAIN_TABLES ? h : half + h;
}

/* The domain of every key in [lo, hi), or DOMAIN_ALL. */
static size_t
range_domain(const uint8_t *lo, size_t lol, const uint8_t *hi, size_t hil)
{
	if (hi == NULL)
		return DOMAIN_ALL;
	size_t d = stamp_domain(lo, lol);
	if (d == DOMAIN_TABLES && stamp_domain(hi, hil) == DOMAIN_TABLES)
		return d; /* above lo: every key a table's */
	/* One kind of the node's records: both begin with its five bytes. */
	size_t kind = sizeof(TABLES_FIRST) + 1;
	if (d != DOMAIN_TABLES && d != DOMAIN_SHORT && hil >= kind &&
	    memcmp(lo, hi, kind) == 0)
		return d;
	return DOMAIN_ALL;
}

bool
store_stamp_take(store *s, const uint8_t *k, size_t kl, uint64_t *stamp)
{
	store_stamps *st = s->stamps;
	if (st == NULL)
		return false; /* no stamps: never the same */
	size_t d = stamp_domain(k, kl), i = stamp_slot(k, kl, d);
	if (atomic_load(&st->all_busy[d]) != 0 ||
	    atomic_load(&st->busy[i]) != 0)
		return false;
	*stamp = atomic_load(&st->all_count[d]) + atomic_load(&st->count[i]);
	return true;
}

bool
store_stamp_same(store *s, const uint8_t *k, size_t kl, uint64_t stamp)
{
	uint64_t now;
	return store_stamp_take(s, k, kl, &now) && now == stamp;
}

/*
 * Marks (end false) or releases (end true) one slot around a write: busy
 * before, counted on after, so that a reader that saw neither sees the
 * write's keys unchanged.
 */
static void
slot_mark(_Atomic uint32_t *busy, _Atomic uint64_t *count, bool end)
{
	if (!end) {
		atomic_fetch_add(busy, 1);
	} else {
		atomic_fetch_add(count, 1);
		atomic_fetch_sub(busy, 1);
	}
}

/* slot_mark for the shared slot of domain d, or of every domain. */
static void
domain_mark(store_stamps *st, size_t d, bool end)
{
	for (size_t i = 0; i < STORE_STAMP_DOMAINS; i++)
		if (d == DOMAIN_ALL || d == i)
			slot_mark(&st->all_busy[i], &st->all_count[i], end);
}

/* slot_mark for the slots of b's keys (a range: its domain's shared one). */
static void
stamps_mark(store_stamps *st, const store_batch *b, bool end)
{
	for (size_t i = 0; i < b->n; i++) {
		const store_op *op = &b->ops[i];
		if (op->kind == STORE_DELETE_RANGE) {
			domain_mark(st, range_domain(op->key, op->key_len,
			    op->val, op->val_len), end);
		} else {
			size_t k = stamp_slot(op->key, op->key_len,
			    stamp_domain(op->key, op->key_len));
			slot_mark(&st->busy[k], &st->count[k], end);
		}
	}
}

kv_err
store_apply(store *s, const store_batch *b)
{
	if (s->stamps != NULL)
		stamps_mark(s->stamps, b, false);
	kv_err rv = s->ops->write(s, b);
	if (s->stamps != NULL)
		stamps_mark(s->stamps, b, true);
	return rv;
}

void
store_batch_init(store_batch *b)
{
	b->ops = NULL;
	b->n = b->cap = 0;
}

void
store_batch_fini(store_batch *b)
{
	free(b->ops);
	store_batch_init(b);
}

kv_err
store_batch_add(store_batch *b, store_op_kind kind, const uint8_t *k,
    size_t kl, const uint8_t *v, size_t vl)
{
	if (b->n == b->cap) {
		size_t cap = b->cap == 0 ? 4 : b->cap * 2;
		store_op *ops = realloc(b->ops, cap * sizeof(*ops));
		if (ops == NULL)
			return KV_ENOMEM;
		b->ops = ops;
		b->cap = cap;
	}
	b->ops[b->n++] = (store_op) {
		.kind = kind, .key = k, .key_len = kl, .val = v, .val_len = vl,
	};
	return KV_OK;
}

/*
 * The sorted load of an engine without its own: a batch of owned copies
 * (each pair in one allocation, the key first), written at the end.
 */
typedef struct kept_load {
	store_load base;
	store_batch b;
} kept_load;

static void
kept_free(kept_load *kp)
{
	for (size_t i = 0; i < kp->b.n; i++)
		free((void *) kp->b.ops[i].key);
	store_batch_fini(&kp->b);
	free(kp);
}

kv_err
store_load_open(store *s, store_load **out)
{
	if (s->ops->load_open != NULL)
		return s->ops->load_open(s, out);
	kept_load *l = calloc(1, sizeof(*l));
	if (l == NULL)
		return KV_ENOMEM;
	l->base.s = s;
	store_batch_init(&l->b);
	*out = &l->base;
	return KV_OK;
}

kv_err
store_load_put(store_load *l, const uint8_t *k, size_t kl, const uint8_t *v,
    size_t vl)
{
	if (atomic_load_explicit(&store_disk_failing, memory_order_relaxed))
		return KV_IO;
	if (l->s->ops->load_put != NULL)
		return l->s->ops->load_put(l, k, kl, v, vl);
	kept_load *kp = (kept_load *) l;
	size_t keep = v != NULL ? vl : 0;
	uint8_t *copy = malloc(kl + keep > 0 ? kl + keep : 1);
	if (copy == NULL)
		return KV_ENOMEM;
	memcpy(copy, k, kl);
	if (keep > 0)
		memcpy(copy + kl, v, keep);
	kv_err rv = store_batch_add(&kp->b, v != NULL ? STORE_PUT :
	    STORE_DELETE, copy, kl, v != NULL ? copy + kl : NULL, keep);
	if (rv != KV_OK)
		free(copy);
	return rv;
}

kv_err
store_load_finish(store_load *l)
{
	if (atomic_load_explicit(&store_disk_failing, memory_order_relaxed)) {
		store_load_abort(l);
		return KV_IO;
	}
	if (l->s->ops->load_finish != NULL) {
		/* Its keys are not listed: every key's stamp moves on. */
		store_stamps *st = l->s->stamps;
		if (st != NULL)
			domain_mark(st, DOMAIN_ALL, false);
		kv_err rv = l->s->ops->load_finish(l);
		if (st != NULL)
			domain_mark(st, DOMAIN_ALL, true);
		return rv;
	}
	kept_load *kp = (kept_load *) l;
	kv_err rv = kp->b.n > 0 ? store_write(l->s, &kp->b) : KV_OK;
	kept_free(kp);
	return rv;
}

void
store_load_abort(store_load *l)
{
	if (l->s->ops->load_abort != NULL)
		l->s->ops->load_abort(l);
	else
		kept_free((kept_load *) l);
}
