/*
 * store.c — write batches, shared by both store engines (see store.h).
 */
#include "store.h"

#include <stdlib.h>

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
