/*
 * keep.c — what a node keeps for the coordinators: transactions'
 * outcomes (RPC_TXN_DECIDE) and ClientRequestTokens (RPC_TXN_TOKEN), each
 * for TXN_KEEP_MS (../txn.h).
 *
 * An outcome record: key {0, 0, 0, 0, 'X'} and the transaction's id
 * (big-endian u64); value: the outcome (u8, RPC_TXN_COMMIT or ABORT) and
 * when it was recorded (little-endian u64, µs). Recorded once: the first
 * of the coordinator's COMMIT and a participant's RESOLVE wins, under
 * keep_mu, in a durable write, so a coordinator that hears COMMIT knows
 * that no participant will ever abort, and the other way round.
 *
 * A token record: key {0, 0, 0, 0, 'K'} and the token's 16-byte hash;
 * value: its state (u8, RPC_TOKEN_RUNNING or COMMITTED), the hash of the
 * request it belongs to (16 bytes) and when it was claimed (u64, µs).
 */
#include "txn_int.h"

#define OUTCOME_KEY_LEN 13
#define OUTCOME_LEN 9
#define TOKEN_KEY_LEN 21
#define TOKEN_LEN 25
#define HASH_LEN 16

static void
outcome_key(uint64_t id, uint8_t k[OUTCOME_KEY_LEN])
{
	memset(k, 0, 4);
	k[4] = 'X';
	bytes_put_be64(k + 5, id);
}

kv_err
txn_decide_add(node *n, uint64_t id, uint32_t mode, arena *a,
    store_batch *b, uint32_t *out)
{
	uint8_t *k = arena_alloc(a, OUTCOME_KEY_LEN), *v = arena_alloc(a,
	    OUTCOME_LEN), *got = NULL;
	size_t gl = 0;
	bool found = false;
	if (k == NULL || v == NULL)
		return KV_ENOMEM;
	outcome_key(id, k);
	kv_err rv = store_get(n->st, k, OUTCOME_KEY_LEN, &got, &gl, &found);
	if (rv == KV_OK && found) {
		*out = gl == OUTCOME_LEN ? got[0] : 0;
		rv = gl == OUTCOME_LEN ? KV_OK : KV_CORRUPT;
	} else if (rv == KV_OK) {
		*out = mode == RPC_TXN_COMMIT ? RPC_TXN_COMMIT : RPC_TXN_ABORT;
		v[0] = (uint8_t) *out;
		bytes_put_le64(v + 1, (uint64_t) txn_now_us());
		rv = store_batch_add(b, STORE_PUT, k, OUTCOME_KEY_LEN, v,
		    OUTCOME_LEN);
	}
	free(got);
	return rv;
}

kv_err
txn_decide(node *n, uint64_t id, uint32_t mode, uint32_t *out)
{
	txn_state *s = n->txn;
	store_batch b;
	arena a;
	arena_init(&a);
	store_batch_init(&b);
	pthread_mutex_lock(&s->keep_mu);
	kv_err rv = txn_decide_add(n, id, mode, &a, &b, out);
	if (rv == KV_OK && b.n > 0)
		rv = store_write(n->st, &b);
	pthread_mutex_unlock(&s->keep_mu);
	store_batch_fini(&b);
	arena_fini(&a);
	return rv;
}

void
txn_decide_serve(node *n, const rpc_request *req, arena *a,
    rpc_response *resp)
{
	uint32_t out = 0;
	(void) a;
	if (n->txn == NULL || req->txn == 0 ||
	    (req->limit != RPC_TXN_COMMIT && req->limit != RPC_TXN_RESOLVE)) {
		resp->code = KV_PROTO;
		return;
	}
	resp->code = txn_decide(n, req->txn, req->limit, &out);
	resp->seq = out;
}

/*
 * RPC_TXN_TOKEN: req->item holds the token's hash and the request's
 * (16 bytes each). BEGIN answers (resp.seq) RPC_TOKEN_NEW after claiming
 * the token, or the state of the claim already there: RUNNING,
 * COMMITTED, or MISMATCH for another request's; a claim older than
 * TXN_KEEP_MS is forgotten. DONE marks it committed; DROP frees it.
 */
void
txn_token_serve(node *n, const rpc_request *req, arena *a,
    rpc_response *resp)
{
	txn_state *s = n->txn;
	uint8_t k[TOKEN_KEY_LEN], v[TOKEN_LEN], *got = NULL;
	size_t gl = 0;
	bool found = false;
	store_batch b;
	(void) a;
	if (s == NULL || req->item == NULL || req->item_len != 2 * HASH_LEN ||
	    req->limit < RPC_TOKEN_BEGIN || req->limit > RPC_TOKEN_DROP) {
		resp->code = KV_PROTO;
		return;
	}
	memset(k, 0, 4);
	k[4] = 'K';
	memcpy(k + 5, req->item, HASH_LEN);
	store_batch_init(&b);
	pthread_mutex_lock(&s->keep_mu);
	resp->code = store_get(n->st, k, sizeof(k), &got, &gl, &found);
	int64_t now = txn_now_us();
	if (resp->code == KV_OK && found && (gl != TOKEN_LEN ||
	    now - (int64_t) bytes_get_le64(got + 1 + HASH_LEN) >
	    (int64_t) TXN_KEEP_MS * 1000))
		found = false; /* expired (or unreadable): forgotten */
	if (resp->code != KV_OK)
		goto out;
	resp->seq = 0;
	switch (req->limit) {
	case RPC_TOKEN_BEGIN:
		if (found) {
			resp->seq = memcmp(got + 1, req->item + HASH_LEN,
			    HASH_LEN) != 0 ? RPC_TOKEN_MISMATCH : got[0];
			goto out;
		}
		v[0] = RPC_TOKEN_RUNNING;
		resp->seq = RPC_TOKEN_NEW;
		break;
	case RPC_TOKEN_DONE:
		v[0] = RPC_TOKEN_COMMITTED;
		break;
	default:
		resp->code = store_batch_add(&b, STORE_DELETE, k, sizeof(k),
		    NULL, 0);
		goto write;
	}
	memcpy(v + 1, req->item + HASH_LEN, HASH_LEN);
	bytes_put_le64(v + 1 + HASH_LEN, (uint64_t) now);
	resp->code = store_batch_add(&b, STORE_PUT, k, sizeof(k), v,
	    sizeof(v));
write:
	if (resp->code == KV_OK)
		resp->code = store_write(n->st, &b);
out:
	pthread_mutex_unlock(&s->keep_mu);
	store_batch_fini(&b);
	free(got);
}

/* ---- forgetting old outcomes and tokens ---- */

typedef struct sweep {
	int64_t before_us;
	store_batch *b;
	arena *a;
	size_t n;
} sweep;

static bool
sweep_one(void *arg, const uint8_t *k, size_t kl, const uint8_t *v,
    size_t vl)
{
	sweep *w = arg;
	const uint8_t *at = NULL;
	if (kl == OUTCOME_KEY_LEN && k[4] == 'X' && vl == OUTCOME_LEN)
		at = v + 1;
	else if (kl == TOKEN_KEY_LEN && k[4] == 'K' && vl == TOKEN_LEN)
		at = v + 1 + HASH_LEN;
	if (at == NULL || (int64_t) bytes_get_le64(at) >= w->before_us)
		return true;
	const uint8_t *kc = (const uint8_t *) arena_dup(w->a, k, kl);
	return kc != NULL && store_batch_add(w->b, STORE_DELETE, kc, kl, NULL,
	    0) == KV_OK && ++w->n < 100000;
}

void
txn_sweep_kept(node *n)
{
	static const uint8_t kinds[2] = { 'K', 'X' };
	store_batch b;
	arena a;
	sweep w = { .before_us = txn_now_us() - (int64_t) TXN_KEEP_MS * 1000,
		.b = &b, .a = &a };
	arena_init(&a);
	store_batch_init(&b);
	pthread_mutex_lock(&n->txn->keep_mu);
	for (int i = 0; i < 2; i++) {
		uint8_t lo[5] = { 0, 0, 0, 0, kinds[i] };
		uint8_t hi[5] = { 0, 0, 0, 0, (uint8_t) (kinds[i] + 1) };
		(void) store_scan(n->st, lo, sizeof(lo), hi, sizeof(hi),
		    sweep_one, &w);
	}
	if (b.n > 0)
		(void) store_write(n->st, &b);
	pthread_mutex_unlock(&n->txn->keep_mu);
	store_batch_fini(&b);
	arena_fini(&a);
}
