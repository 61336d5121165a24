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
 * The sorted load of an engine without its own: each pair copied into
 * one growing buffer, written in one batch at the end.
 */
typedef struct kept_load {
	store_load base;
	uint8_t *buf; /* kl (size_t), key, vl + 1 (size_t; 0: delete), value */
	size_t len, cap, n;
} kept_load;

static kv_err
kept_append(kept_load *l, const void *p, size_t len)
{
	if (l->len + len > l->cap) {
		size_t cap = l->cap == 0 ? 4096 : l->cap;
		while (cap < l->len + len)
			cap *= 2;
		uint8_t *nb = realloc(l->buf, cap);
		if (nb == NULL)
			return KV_ENOMEM;
		l->buf = nb;
		l->cap = cap;
	}
	memcpy(l->buf + l->len, p, len);
	l->len += len;
	return KV_OK;
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
	size_t vtag = v != NULL ? vl + 1 : 0;
	kv_err rv = kept_append(kp, &kl, sizeof(kl));
	if (rv == KV_OK)
		rv = kept_append(kp, k, kl);
	if (rv == KV_OK)
		rv = kept_append(kp, &vtag, sizeof(vtag));
	if (rv == KV_OK && v != NULL)
		rv = kept_append(kp, v, vl);
	if (rv == KV_OK)
		kp->n++;
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
	store_batch b;
	kv_err rv = KV_OK;
	store_batch_init(&b);
	for (size_t off = 0; off < kp->len && rv == KV_OK;) {
		size_t kl, vtag;
		memcpy(&kl, kp->buf + off, sizeof(kl));
		const uint8_t *k = kp->buf + off + sizeof(kl);
		off += sizeof(kl) + kl;
		memcpy(&vtag, kp->buf + off, sizeof(vtag));
		off += sizeof(vtag);
		rv = vtag == 0 ? store_batch_add(&b, STORE_DELETE, k, kl, NULL,
		    0) : store_batch_add(&b, STORE_PUT, k, kl, kp->buf + off,
		    vtag - 1);
		off += vtag != 0 ? vtag - 1 : 0;
	}
	if (rv == KV_OK && b.n > 0)
		rv = store_write(l->s, &b);
	store_batch_fini(&b);
	free(kp->buf);
	free(kp);
	return rv;
}

void
store_load_abort(store_load *l)
{
	if (l->s->ops->load_abort != NULL) {
		l->s->ops->load_abort(l);
		return;
	}
	kept_load *kp = (kept_load *) l;
	free(kp->buf);
	free(kp);
}
