/*
 * store.c — write batches, shared by both store engines, and sorted loads
 * for an engine without its own (see store.h).
 */
#include "store.h"

#include <stdlib.h>
#include <string.h>

atomic_bool store_disk_failing;

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
	if (l->s->ops->load_finish != NULL)
		return l->s->ops->load_finish(l);
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
