/*
 * locks.c — the lock table of prepared transactions, reading them back at
 * start, and the resolver that asks for the outcome of those left
 * prepared too long (txn_int.h, ../txn.h).
 */
#include "txn_int.h"

#include <stdio.h>

#include "clock.h"
#include "cluster.h"
#include "thread_name.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

static size_t
bucket_of(const uint8_t *k, size_t kl)
{
	return (size_t) XXH3_64bits(k, kl) & (LOCK_BUCKETS - 1);
}

bool
txn_is_locked(txn_state *s, const uint8_t *k, size_t kl)
{
	for (lockent *e = s->buckets[bucket_of(k, kl)]; e != NULL; e = e->next)
		if (e->kl == kl && memcmp(e->key, k, kl) == 0)
			return true;
	return false;
}

bool
txn_locked(node *n, const uint8_t *k, size_t kl)
{
	txn_state *s = n->txn;
	if (s == NULL || atomic_load(&s->n_locked) == 0)
		return false;
	pthread_mutex_lock(&s->mu);
	bool locked = txn_is_locked(s, k, kl);
	pthread_mutex_unlock(&s->mu);
	return locked;
}

bool
txn_range_busy(node *n, uint32_t table_id, uint64_t lo, uint64_t last)
{
	txn_state *s = n->txn;
	bool busy = false;
	if (s == NULL || atomic_load(&s->n_locked) == 0)
		return false;
	pthread_mutex_lock(&s->mu);
	for (ptxn *t = s->txns; t != NULL && !busy; t = t->next)
		for (size_t i = 0; i < t->n && !busy; i++) {
			const lockent *e = t->ents[i];
			uint64_t h = keyenc_key_hash(e->key);
			busy = keyenc_key_table(e->key) == table_id &&
			    h >= lo && h <= last;
		}
	pthread_mutex_unlock(&s->mu);
	return busy;
}

ptxn *
txn_find_locked(txn_state *s, uint64_t id)
{
	for (ptxn *t = s->txns; t != NULL; t = t->next)
		if (t->id == id)
			return t;
	return NULL;
}

kv_err
txn_add_locked(txn_state *s, uint64_t id, uint32_t keeper,
    uint8_t *const *recs, const size_t *vls, const txn_seen *seen,
    size_t n)
{
	ptxn *t = calloc(1, sizeof(*t));
	lockent **ents = calloc(n > 0 ? n : 1, sizeof(*ents));
	if (t == NULL || ents == NULL)
		goto fail;
	for (size_t i = 0; i < n; i++) {
		ents[i] = calloc(1, sizeof(**ents));
		if (ents[i] == NULL || (ents[i]->rec = malloc(TXN_KEY_LEN +
		    vls[i])) == NULL)
			goto fail;
		memcpy(ents[i]->rec, recs[i], TXN_KEY_LEN + vls[i]);
		const uint8_t *v = ents[i]->rec + TXN_KEY_LEN;
		ents[i]->rl = vls[i];
		ents[i]->key = v + TXN_HEAD;
		ents[i]->kl = bytes_get_le32(v + 9);
		ents[i]->t = t;
		if (seen != NULL && seen[i].valid) {
			uint8_t *old = NULL;
			if (seen[i].old != NULL && (old = malloc(seen[i].ol)) ==
			    NULL)
				goto fail;
			if (old != NULL)
				memcpy(old, seen[i].old, seen[i].ol);
			ents[i]->seen = seen[i];
			ents[i]->seen.old = old;
		}
	}
	*t = (ptxn) { .id = id, .keeper = keeper, .since_us = txn_now_us(),
		.ents = ents, .n = n, .next = s->txns };
	s->txns = t;
	for (size_t i = 0; i < n; i++) {
		size_t b = bucket_of(ents[i]->key, ents[i]->kl);
		ents[i]->next = s->buckets[b];
		s->buckets[b] = ents[i];
	}
	atomic_fetch_add(&s->n_locked, n);
	return KV_OK;
fail:
	for (size_t i = 0; ents != NULL && i < n; i++) {
		if (ents[i] != NULL) {
			free(ents[i]->rec);
			free((uint8_t *) ents[i]->seen.old);
		}
		free(ents[i]);
	}
	free(ents);
	free(t);
	return KV_ENOMEM;
}

void
txn_drop_locked(txn_state *s, ptxn *t)
{
	for (size_t i = 0; i < t->n; i++) {
		lockent **pp = &s->buckets[bucket_of(t->ents[i]->key,
		    t->ents[i]->kl)];
		while (*pp != NULL && *pp != t->ents[i])
			pp = &(*pp)->next;
		if (*pp != NULL)
			*pp = t->ents[i]->next;
		free(t->ents[i]->rec);
		free((uint8_t *) t->ents[i]->seen.old);
		free(t->ents[i]);
	}
	atomic_fetch_sub(&s->n_locked, t->n);
	for (ptxn **pp = &s->txns; *pp != NULL; pp = &(*pp)->next)
		if (*pp == t) {
			*pp = t->next;
			break;
		}
	free(t->ents);
	free(t);
}

/* ---- reading prepared transactions back ---- */

typedef struct loaded {
	uint64_t id;
	uint32_t keeper;
	uint8_t **recs; /* as txn_add_locked takes them */
	size_t *vls, n, cap;
	bool failed;
} loaded;

static void
loaded_reset(loaded *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->recs[i]);
	l->n = 0;
}

/* Locks what l holds: one transaction's items. */
static void
loaded_flush(txn_state *s, loaded *l)
{
	if (l->n > 0 && txn_add_locked(s, l->id, l->keeper, l->recs, l->vls,
	    NULL, l->n) != KV_OK)
		l->failed = true;
	loaded_reset(l);
}

static bool
load_one(void *arg, const uint8_t *k, size_t kl, const uint8_t *v,
    size_t vl)
{
	void **ctx = arg;
	txn_state *s = ctx[0];
	loaded *l = ctx[1];
	if (!txn_record_ok(kl, v, vl))
		return true; /* not ours to read: left alone */
	uint64_t id = bytes_get_be64(k + 5);
	if (l->n > 0 && id != l->id)
		loaded_flush(s, l);
	if (l->n == l->cap) {
		size_t cap = l->cap == 0 ? 16 : 2 * l->cap;
		uint8_t **recs = realloc(l->recs, cap * sizeof(*recs));
		if (recs != NULL)
			l->recs = recs;
		size_t *vls = realloc(l->vls, cap * sizeof(*vls));
		if (vls != NULL)
			l->vls = vls;
		if (recs == NULL || vls == NULL) {
			l->failed = true;
			return false;
		}
		l->cap = cap;
	}
	l->recs[l->n] = malloc(kl + vl);
	if (l->recs[l->n] == NULL) {
		l->failed = true;
		return false;
	}
	memcpy(l->recs[l->n], k, kl);
	memcpy(l->recs[l->n] + kl, v, vl);
	l->vls[l->n++] = vl;
	l->id = id;
	l->keeper = bytes_get_le32(v);
	return true;
}

/* Locks the items of every transaction still prepared in the store. */
static kv_err
load_prepared(node *n, txn_state *s)
{
	static const uint8_t lo[5] = { 0, 0, 0, 0, 'T' };
	static const uint8_t hi[5] = { 0, 0, 0, 0, 'T' + 1 };
	loaded l = { 0 };
	void *ctx[2] = { s, &l };
	pthread_mutex_lock(&s->mu);
	kv_err rv = store_scan(n->st, lo, sizeof(lo), hi, sizeof(hi), load_one,
	    ctx);
	if (rv == KV_OK)
		loaded_flush(s, &l);
	pthread_mutex_unlock(&s->mu);
	loaded_reset(&l);
	free(l.recs);
	free(l.vls);
	if (rv == KV_OK && l.failed)
		rv = KV_ENOMEM;
	return rv;
}

/* ---- the resolver ---- */

/* Asks transaction t's keeper for its outcome: KV_OK with *commit. */
static kv_err
ask_outcome(node *n, uint64_t id, uint32_t keeper, bool *commit)
{
	uint32_t out = 0;
	kv_err rv;
	if (keeper == n->index) {
		rv = txn_decide(n, id, RPC_TXN_RESOLVE, &out);
	} else {
		rpc_request req = { .op = RPC_TXN_DECIDE, .txn = id,
			.limit = RPC_TXN_RESOLVE };
		rpc_response resp;
		arena a;
		arena_init(&a);
		memset(&resp, 0, sizeof(resp));
		rv = cluster_tell_ms(n, keeper, &req, &a, &resp, KEEP_CALL_MS);
		if (rv == KV_OK) {
			rv = resp.code;
			out = (uint32_t) resp.seq;
			wire_response_fini(&resp);
		}
		arena_fini(&a);
	}
	*commit = out == RPC_TXN_COMMIT;
	return rv == KV_OK && out != RPC_TXN_COMMIT && out != RPC_TXN_ABORT ?
	    KV_PROTO : rv;
}

/* One look at the prepared transactions: those waiting too long are
 * resolved, one at a time. */
static void
resolve_old(node *n)
{
	txn_state *s = n->txn;
	int64_t now = txn_now_us();
	for (;;) {
		uint64_t id = 0;
		uint32_t keeper = 0;
		pthread_mutex_lock(&s->mu);
		for (ptxn *t = s->txns; t != NULL; t = t->next)
			if (!t->resolving &&
			    now - t->since_us > TXN_RESOLVE_MS * 1000) {
				t->resolving = true;
				id = t->id;
				keeper = t->keeper;
				break;
			}
		pthread_mutex_unlock(&s->mu);
		if (id == 0)
			return;
		bool commit;
		kv_err rv = ask_outcome(n, id, keeper, &commit);
		if (rv == KV_OK)
			rv = txn_finish(n, id, commit);
		if (rv == KV_OK) {
			fprintf(stderr, "kv-node %u: transaction %016llx left "
			    "prepared: %s\n", n->index, (unsigned long long) id,
			    commit ? "committed" : "aborted");
			continue;
		}
		/* Not now (the keeper is away, the view behind): later. */
		pthread_mutex_lock(&s->mu);
		ptxn *t = txn_find_locked(s, id);
		if (t != NULL) {
			t->resolving = false;
			t->since_us = now;
		}
		pthread_mutex_unlock(&s->mu);
		return;
	}
}

static void *
resolver(void *arg)
{
	node *n = arg;
	txn_state *s = n->txn;
	thread_name("kv-txn-resolve");
	pthread_mutex_lock(&s->run_mu);
	while (!s->stop) {
		struct timespec ts = clock_deadline_in(RESOLVE_TICK_MS);
		pthread_cond_timedwait(&s->cv, &s->run_mu, &ts);
		if (s->stop)
			break;
		pthread_mutex_unlock(&s->run_mu);
		resolve_old(n);
		if (txn_now_us() - s->swept_us > SWEEP_KEEP_MS * 1000) {
			s->swept_us = txn_now_us();
			txn_sweep_kept(n);
		}
		pthread_mutex_lock(&s->run_mu);
	}
	pthread_mutex_unlock(&s->run_mu);
	return NULL;
}

kv_err
txn_open(node *n)
{
	txn_state *s = calloc(1, sizeof(*s));
	if (s == NULL)
		return KV_ENOMEM;
	pthread_mutex_init(&s->mu, NULL);
	pthread_mutex_init(&s->keep_mu, NULL);
	pthread_mutex_init(&s->run_mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	n->txn = s;
	s->swept_us = txn_now_us();
	kv_err rv = load_prepared(n, s);
	if (rv != KV_OK)
		return rv;
	if (pthread_create(&s->thread, NULL, resolver, n) != 0)
		return KV_ENOMEM;
	s->started = true;
	return KV_OK;
}

void
txn_close(node *n)
{
	txn_state *s = n->txn;
	if (s == NULL)
		return;
	if (s->started) {
		pthread_mutex_lock(&s->run_mu);
		s->stop = true;
		pthread_cond_signal(&s->cv);
		pthread_mutex_unlock(&s->run_mu);
		pthread_join(s->thread, NULL);
	}
	pthread_mutex_lock(&s->mu);
	while (s->txns != NULL)
		txn_drop_locked(s, s->txns);
	pthread_mutex_unlock(&s->mu);
	pthread_mutex_destroy(&s->mu);
	pthread_mutex_destroy(&s->keep_mu);
	pthread_mutex_destroy(&s->run_mu);
	pthread_cond_destroy(&s->cv);
	free(s);
	n->txn = NULL;
}
