/*
 * index.c — global secondary indexes on the nodes (see index.h).
 *
 * An outbox record's key is {0, 0, 0, 0, 'O'} and its number (big-endian
 * u64), so the outbox reads in the order it was written; its value:
 *
 *   OFFSET  SIZE  FIELD
 *   0       4     the index table's id (big-endian)
 *   4       8     the base partition's epoch
 *   12      8     the record's number (again, for the version)
 *   20      1     1 put, 2 delete
 *   21      4     n: the entry's storage key length
 *   25      n     the entry's storage key
 *   25+n    4     put: the projected item's DynamoDB size
 *   29+n    var   put: the projected item (codec)
 *
 * Sent to an index node, each record is preceded by the partition id
 * (u32) and epoch (u64) that the replicator routed it to.
 */
#include "index.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bytes.h"
#include "capacity.h"
#include "cluster.h"
#include "codec.h"
#include "item.h"
#include "keyenc.h"
#include "move.h"
#include "part.h"
#include "throttle.h"

#define OUTBOX_KEY_LEN 13
#define REC_HEAD 25           /* the fixed part of a record's value */
#define ROUTE_HEAD 12         /* partition id and epoch before it */
#define REPL_MAX_RECORDS RPC_MULTI_MAX /* records per round: one RPC's most */
#define REPL_MAX_BYTES (1u << 20)
#define REPL_IDLE_MS 100      /* wait for a kick at most this long */
#define REPL_RETRY_MS 50      /* after a failed send */
#define REPL_CALL_MS 5000

enum { REC_PUT = 1, REC_DELETE = 2 };

typedef struct index_state {
	pthread_rwlock_t view_lock;
	catalog *view; /* guarded by view_lock */
	_Atomic uint64_t clock; /* the last outbox number given */
	pthread_mutex_t mu;     /* guards kicked, stop */
	pthread_cond_t cv;
	bool kicked, stop, started;
	pthread_t thread;
	/* Counters, for /metrics. */
	_Atomic uint64_t records_written, records_sent, records_dropped;
	_Atomic uint64_t applied, stale_skipped, send_failures;
	_Atomic uint64_t pending;       /* records in the outbox, last round */
	_Atomic int64_t oldest_us;      /* age of the oldest, last round */
} index_state;

static const uint8_t outbox_lo[5] = { 0, 0, 0, 0, 'O' };
static const uint8_t outbox_hi[5] = { 0, 0, 0, 0, 'O' + 1 };

static int64_t
now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* ---- the view ---- */

void
index_view_install(node *n, catalog *c)
{
	index_state *s = n->gsi;
	if (s == NULL) {
		catalog_free(c);
		return;
	}
	pthread_rwlock_wrlock(&s->view_lock);
	catalog *old = s->view;
	if (old != NULL && c->version < old->version) {
		old = c; /* the feed may hand over an older one: keep ours */
	} else {
		s->view = c;
	}
	pthread_rwlock_unlock(&s->view_lock);
	catalog_free(old);
	index_kick(n); /* records waiting for a route may have one now */
}

static bool
has_global(const table *t)
{
	for (size_t i = 0; i < t->n_indexes; i++)
		if (!t->indexes[i].local && t->indexes[i].table_id != 0)
			return true;
	return false;
}

const table *
index_view_table(node *n, uint32_t table_id)
{
	index_state *s = n->gsi;
	if (s == NULL)
		return NULL;
	pthread_rwlock_rdlock(&s->view_lock);
	const table *t = table_find_id(s->view, table_id);
	if (t != NULL && has_global(t))
		return t;
	pthread_rwlock_unlock(&s->view_lock);
	return NULL;
}

void
index_view_unlock(node *n)
{
	pthread_rwlock_unlock(&n->gsi->view_lock);
}

/* ---- the base write's side ---- */

static const value *
attr_of(const value *item, const key_def *k)
{
	if (item == NULL || k->name == NULL)
		return NULL;
	return item_attr(item, k->name, strlen(k->name));
}

bool
index_check(const table *t, const value *item, char *msg, size_t msglen)
{
	for (size_t i = 0; item != NULL && i < t->n_indexes; i++) {
		const index_def *d = &t->indexes[i];
		const key_def *keys[2] = { &d->hash, &d->range };
		for (int k = 0; k < 2; k++) {
			const value *v = attr_of(item, keys[k]);
			if (v == NULL)
				continue;
			if (v->type != keys[k]->type) {
				snprintf(msg, msglen, "One or more parameter "
				    "values were invalid: Type mismatch for "
				    "Index Key %s Expected: %s Actual: %s "
				    "IndexName: %s", keys[k]->name,
				    value_type_name(keys[k]->type),
				    value_type_name(v->type), d->name);
				return false;
			}
			if ((v->type == VAL_S || v->type == VAL_B) &&
			    v->len == 0) {
				snprintf(msg, msglen, "One or more parameter "
				    "values are not valid. A value specified "
				    "for a secondary index key is not "
				    "supported. The AttributeValue for a key "
				    "attribute cannot contain an empty %s "
				    "value. IndexName: %s, IndexKey: %s",
				    v->type == VAL_S ? "string" : "binary",
				    d->name, keys[k]->name);
				return false;
			}
		}
	}
	return true;
}

/*
 * The storage key of item's entry in index d of t, owned, in *key; NULL
 * when the item is not in the index (it lacks an index key: a sparse
 * index). KV_OK or KV_ENOMEM.
 */
static kv_err
entry_key(const table *t, const index_def *d, const value *item,
    uint8_t **key, size_t *len)
{
	const value *ipk = attr_of(item, &d->hash);
	const value *isk = attr_of(item, &d->range);
	*key = NULL;
	*len = 0;
	if (item == NULL || ipk == NULL || ipk->type != d->hash.type ||
	    (d->range.name != NULL && (isk == NULL ||
	    isk->type != d->range.type)))
		return KV_OK;
	return keyenc_index_key(d->table_id, ipk, isk,
	    attr_of(item, &t->hash), attr_of(item, &t->range), key, len);
}

static bool
named(const attr *at, const char *name)
{
	return name != NULL && strlen(name) == at->name_len &&
	    memcmp(at->name, name, at->name_len) == 0;
}

/* The attributes of item that index d of t projects, in a. */
static kv_err
project(const table *t, const index_def *d, const value *item, arena *a,
    value *out)
{
	if (d->projection == PROJECT_ALL) {
		*out = *item;
		return KV_OK;
	}
	attr *keep = arena_alloc(a, (item->len > 0 ? item->len : 1) *
	    sizeof(attr));
	size_t k = 0;
	if (keep == NULL)
		return KV_ENOMEM;
	for (size_t i = 0; i < item->len; i++) {
		const attr *at = &item->u.attrs[i];
		bool in = named(at, t->hash.name) || named(at, t->range.name) ||
		    named(at, d->hash.name) || named(at, d->range.name);
		for (size_t j = 0; !in && d->projection == PROJECT_INCLUDE &&
		    j < d->n_include; j++)
			in = named(at, d->include[j]);
		if (in)
			keep[k++] = *at;
	}
	*out = (value) { .type = VAL_M, .len = k, .u.attrs = keep };
	return KV_OK;
}

/* The next outbox number: the clock in µs, above the last one given. */
static uint64_t
next_number(index_state *s)
{
	uint64_t now = (uint64_t) now_us();
	uint64_t last = atomic_load(&s->clock);
	uint64_t want;
	do {
		want = now > last ? now : last + 1;
	} while (!atomic_compare_exchange_weak(&s->clock, &last, want));
	return want;
}

/* Adds one record (item NULL: a delete) to b, its bytes in a. */
static kv_err
add_record(index_state *s, uint32_t index_id, uint64_t epoch,
    const uint8_t *key, size_t kl, const value *item, arena *a,
    store_batch *b)
{
	size_t il = item != NULL ? codec_size(item) : 0;
	size_t vl = REC_HEAD + kl + (item != NULL ? 4 + il : 0);
	uint8_t *k = arena_alloc(a, OUTBOX_KEY_LEN), *v = arena_alloc(a, vl);
	if (k == NULL || v == NULL)
		return KV_ENOMEM;
	uint64_t num = next_number(s);
	memcpy(k, outbox_lo, sizeof(outbox_lo));
	bytes_put_be64(k + 5, num);
	bytes_put_le32(v, index_id);
	bytes_put_le64(v + 4, epoch);
	bytes_put_le64(v + 12, num);
	v[20] = item != NULL ? REC_PUT : REC_DELETE;
	bytes_put_le32(v + 21, (uint32_t) kl);
	memcpy(v + REC_HEAD, key, kl);
	if (item != NULL) {
		bytes_put_le32(v + REC_HEAD + kl, (uint32_t) item_size(item));
		codec_write(item, v + REC_HEAD + kl + 4);
	}
	atomic_fetch_add(&s->records_written, 1);
	return store_batch_add(b, STORE_PUT, k, OUTBOX_KEY_LEN, v, vl);
}

static bool
same_bytes(const uint8_t *x, size_t xl, const uint8_t *y, size_t yl)
{
	return xl == yl && memcmp(x, y, xl) == 0;
}

kv_err
index_outbox(node *n, const table *t, uint64_t epoch, const value *old,
    const value *cur, arena *a, store_batch *b)
{
	kv_err rv = KV_OK;
	for (size_t i = 0; rv == KV_OK && i < t->n_indexes; i++) {
		const index_def *d = &t->indexes[i];
		uint8_t *ok = NULL, *nk = NULL;
		size_t okl = 0, nkl = 0;
		value op, np;
		if (d->local || d->table_id == 0)
			continue;
		if ((rv = entry_key(t, d, old, &ok, &okl)) != KV_OK ||
		    (rv = entry_key(t, d, cur, &nk, &nkl)) != KV_OK) {
			free(ok);
			break;
		}
		bool had = ok != NULL, has = nk != NULL;
		bool moved = had && (!has || !same_bytes(ok, okl, nk, nkl));
		if (rv == KV_OK && has) {
			rv = project(t, d, cur, a, &np);
			bool same = false;
			if (rv == KV_OK && had && !moved &&
			    (rv = project(t, d, old, a, &op)) == KV_OK)
				same = value_equal(&op, &np);
			if (rv == KV_OK && !same) {
				uint8_t *kc = (uint8_t *) arena_dup(a, nk, nkl);
				rv = kc == NULL ? KV_ENOMEM : add_record(n->gsi,
				    d->table_id, epoch, kc, nkl, &np, a, b);
			}
		}
		if (rv == KV_OK && moved) {
			uint8_t *kc = (uint8_t *) arena_dup(a, ok, okl);
			rv = kc == NULL ? KV_ENOMEM : add_record(n->gsi,
			    d->table_id, epoch, kc, okl, NULL, a, b);
		}
		free(ok);
		free(nk);
	}
	return rv;
}

void
index_kick(node *n)
{
	index_state *s = n->gsi;
	if (s == NULL)
		return;
	pthread_mutex_lock(&s->mu);
	if (!s->kicked) {
		s->kicked = true;
		pthread_cond_signal(&s->cv);
	}
	pthread_mutex_unlock(&s->mu);
}

/* ---- the index node's side ---- */

typedef struct rec {
	uint32_t part;
	uint64_t part_epoch;
	uint32_t index_id;
	uint64_t v_epoch, v_num;
	int kind;
	const uint8_t *key;
	size_t kl;
	uint32_t size;
	const uint8_t *item;
	size_t il;
} rec;

/* Reads a record (routed: with its partition first); false if malformed. */
static bool
rec_parse(const uint8_t *p, size_t len, bool routed, rec *r)
{
	memset(r, 0, sizeof(*r));
	if (routed) {
		if (len < ROUTE_HEAD)
			return false;
		r->part = bytes_get_le32(p);
		r->part_epoch = bytes_get_le64(p + 4);
		p += ROUTE_HEAD;
		len -= ROUTE_HEAD;
	}
	if (len < REC_HEAD)
		return false;
	r->index_id = bytes_get_le32(p);
	r->v_epoch = bytes_get_le64(p + 4);
	r->v_num = bytes_get_le64(p + 12);
	r->kind = p[20];
	r->kl = bytes_get_le32(p + 21);
	if (r->kl < KEYENC_PREFIX || r->kl > len - REC_HEAD)
		return false;
	r->key = p + REC_HEAD;
	size_t rest = len - REC_HEAD - r->kl;
	if (r->kind == REC_PUT) {
		if (rest < 4)
			return false;
		r->size = bytes_get_le32(p + REC_HEAD + r->kl);
		r->item = p + REC_HEAD + r->kl + 4;
		r->il = rest - 4;
		return r->il > 0 && r->size < RECORD_VERSIONED;
	}
	return r->kind == REC_DELETE && rest == 0;
}

/* Whether version (e, num) is above the one of stored record v. */
static bool
newer(uint64_t e, uint64_t num, const uint8_t *v, size_t vl)
{
	if (vl < RECORD_HEADER + RECORD_VERSION_LEN || (v[3] & 0x80) == 0)
		return true; /* no version: not an entry record */
	uint64_t se = bytes_get_le64(v + RECORD_HEADER);
	uint64_t sn = bytes_get_le64(v + RECORD_HEADER + 8);
	return e > se || (e == se && num > sn);
}

/* Applies r to p (whose mutex the caller holds). */
static kv_err
apply_one(node *n, part *p, const rec *r, bool *skipped)
{
	uint8_t *old = NULL;
	size_t ol = 0;
	bool found = false;
	kv_err rv = store_get(n->st, r->key, r->kl, &old, &ol, &found);
	*skipped = false;
	if (rv != KV_OK)
		return rv;
	if (found && ol < RECORD_HEADER) {
		free(old);
		return KV_CORRUPT;
	}
	if (found && !newer(r->v_epoch, r->v_num, old, ol)) {
		free(old);
		*skipped = true;
		return KV_OK;
	}
	bool was_live = found && record_item_offset(old, ol) < ol;
	uint32_t old_size = found ? record_size(old) : 0;
	free(old);
	size_t vl = RECORD_HEADER + RECORD_VERSION_LEN + r->il;
	uint8_t *v = malloc(vl);
	if (v == NULL)
		return KV_ENOMEM;
	uint32_t size = r->kind == REC_PUT ? r->size : 0;
	bytes_put_le32(v, size | RECORD_VERSIONED);
	bytes_put_le64(v + RECORD_HEADER, r->v_epoch);
	bytes_put_le64(v + RECORD_HEADER + 8, r->v_num);
	if (r->il > 0)
		memcpy(v + RECORD_HEADER + RECORD_VERSION_LEN, r->item, r->il);
	store_batch b;
	store_batch_init(&b);
	rv = store_batch_add(&b, STORE_PUT, r->key, r->kl, v, vl);
	if (rv == KV_OK)
		rv = store_write_buffered(n->st, &b);
	store_batch_fini(&b);
	free(v);
	if (rv != KV_OK)
		return rv;
	move_note(p, r->key, r->kl);
	bool live = r->kind == REC_PUT;
	p->items = p->items + (live ? 1 : 0) - (was_live ? 1 : 0);
	p->bytes = p->bytes + size - old_size;
	return KV_OK;
}

void
index_apply_serve(node *n, const rpc_request *req, arena *a,
    rpc_response *resp)
{
	index_state *s = n->gsi;
	rec *rs = arena_alloc(a, (req->n_subs > 0 ? req->n_subs : 1) *
	    sizeof(rec));
	part **ps = arena_alloc(a, (req->n_subs > 0 ? req->n_subs : 1) *
	    sizeof(part *));
	if (rs == NULL || ps == NULL) {
		resp->code = KV_ENOMEM;
		return;
	}
	for (size_t i = 0; i < req->n_subs; i++)
		if (!rec_parse(req->subs[i], req->sub_lens[i], true,
		    &rs[i])) {
			resp->code = KV_PROTO;
			return;
		}
	pthread_rwlock_rdlock(&n->parts.lock);
	/* All or nothing: every record must be this node's to apply. */
	resp->code = KV_OK;
	for (size_t i = 0; i < req->n_subs && resp->code == KV_OK; i++)
		resp->code = part_map_check_key_locked(&n->parts,
		    rs[i].index_id, rs[i].part, rs[i].part_epoch, rs[i].key,
		    rs[i].kl, &ps[i]);
	for (size_t i = 0; i < req->n_subs && resp->code == KV_OK; i++) {
		bool skipped;
		pthread_mutex_lock(&ps[i]->mu);
		resp->code = apply_one(n, ps[i], &rs[i], &skipped);
		pthread_mutex_unlock(&ps[i]->mu);
		if (resp->code != KV_OK)
			break;
		if (skipped) {
			atomic_fetch_add(&s->stale_skipped, 1);
			continue;
		}
		atomic_fetch_add(&s->applied, 1);
		/* The index partition pays for its writes (DynamoDB charges
		 * a GSI's writes to the GSI). */
		throttle_charge(n, ps[i], true, rs[i].key, rs[i].kl,
		    2 * capacity_write_units(0, rs[i].size));
	}
	pthread_rwlock_unlock(&n->parts.lock);
	/* Durable before the answer: the sender deletes its records then. */
	if (resp->code == KV_OK)
		resp->code = store_flush(n->st);
}

/* ---- the replicator ---- */

typedef struct pending {
	uint8_t **keys, **vals;
	size_t *kls, *vls;
	size_t n, cap, bytes;
} pending;

static bool
take_one(void *arg, const uint8_t *k, size_t kl, const uint8_t *v,
    size_t vl)
{
	pending *pd = arg;
	if (pd->n == pd->cap) {
		size_t cap = pd->cap == 0 ? 64 : pd->cap * 2;
		uint8_t **keys = realloc(pd->keys, cap * sizeof(*keys));
		if (keys != NULL)
			pd->keys = keys;
		uint8_t **vals = realloc(pd->vals, cap * sizeof(*vals));
		if (vals != NULL)
			pd->vals = vals;
		size_t *kls = realloc(pd->kls, cap * sizeof(*kls));
		if (kls != NULL)
			pd->kls = kls;
		size_t *vls = realloc(pd->vls, cap * sizeof(*vls));
		if (vls != NULL)
			pd->vls = vls;
		if (keys == NULL || vals == NULL || kls == NULL || vls == NULL)
			return false;
		pd->cap = cap;
	}
	pd->keys[pd->n] = malloc(kl);
	pd->vals[pd->n] = malloc(ROUTE_HEAD + vl);
	if (pd->keys[pd->n] == NULL || pd->vals[pd->n] == NULL) {
		free(pd->keys[pd->n]);
		free(pd->vals[pd->n]);
		return false;
	}
	memcpy(pd->keys[pd->n], k, kl);
	memcpy(pd->vals[pd->n] + ROUTE_HEAD, v, vl);
	pd->kls[pd->n] = kl;
	pd->vls[pd->n] = ROUTE_HEAD + vl;
	pd->n++;
	pd->bytes += kl + vl;
	return pd->n < REPL_MAX_RECORDS && pd->bytes < REPL_MAX_BYTES;
}

static void
pending_free(pending *pd)
{
	for (size_t i = 0; i < pd->n; i++) {
		free(pd->keys[i]);
		free(pd->vals[i]);
	}
	free(pd->keys);
	free(pd->vals);
	free(pd->kls);
	free(pd->vls);
	memset(pd, 0, sizeof(*pd));
}

/* Deletes the outbox records marked in done. */
static kv_err
delete_done(node *n, const pending *pd, const bool *done)
{
	store_batch b;
	kv_err rv = KV_OK;
	size_t k = 0;
	store_batch_init(&b);
	for (size_t i = 0; i < pd->n && rv == KV_OK; i++)
		if (done[i]) {
			rv = store_batch_add(&b, STORE_DELETE, pd->keys[i],
			    pd->kls[i], NULL, 0);
			k++;
		}
	if (rv == KV_OK && k > 0)
		rv = store_write(n->st, &b);
	store_batch_fini(&b);
	return rv;
}

/* Sends node `dest` the records routed to it; true when all applied. */
static bool
send_to(node *n, uint32_t dest, const pending *pd, const uint32_t *to,
    const bool *routed)
{
	size_t k = 0;
	for (size_t i = 0; i < pd->n; i++)
		if (routed[i] && to[i] == dest)
			k++;
	const uint8_t **blobs = malloc(k * sizeof(*blobs));
	size_t *lens = malloc(k * sizeof(*lens));
	bool ok = false;
	if (blobs == NULL || lens == NULL)
		goto out;
	k = 0;
	for (size_t i = 0; i < pd->n; i++)
		if (routed[i] && to[i] == dest) {
			blobs[k] = pd->vals[i];
			lens[k++] = pd->vls[i];
		}
	rpc_request req = { .op = RPC_INDEX_APPLY, .subs = blobs,
	    .sub_lens = lens, .n_subs = k };
	rpc_response resp;
	arena a;
	arena_init(&a);
	memset(&resp, 0, sizeof(resp));
	if (dest == n->index) {
		index_apply_serve(n, &req, &a, &resp);
		ok = resp.code == KV_OK;
	} else {
		kv_err rv = cluster_tell_ms(n, dest, &req, &a, &resp,
		    REPL_CALL_MS);
		ok = rv == KV_OK && resp.code == KV_OK;
		if (rv == KV_OK)
			wire_response_fini(&resp);
	}
	arena_fini(&a);
out:
	free(blobs);
	free(lens);
	return ok;
}

/* One round: true when it sent everything it read (read again at once). */
static bool
repl_round(node *n, bool *failed)
{
	index_state *s = n->gsi;
	pending pd = { 0 };
	bool more = false;
	*failed = false;
	kv_err rv = store_scan(n->st, outbox_lo, sizeof(outbox_lo), outbox_hi,
	    sizeof(outbox_hi), take_one, &pd);
	if (rv != KV_OK || pd.n == 0) {
		atomic_store(&s->pending, 0);
		atomic_store(&s->oldest_us, 0);
		pending_free(&pd);
		*failed = rv != KV_OK;
		return false;
	}
	more = pd.n >= REPL_MAX_RECORDS || pd.bytes >= REPL_MAX_BYTES;
	atomic_store(&s->pending, pd.n);
	uint32_t *to = calloc(pd.n, sizeof(*to));
	bool *routed = calloc(pd.n, sizeof(*routed));
	bool *done = calloc(pd.n, sizeof(*done));
	bool *sent = calloc(CONFIG_MAX_NODES, sizeof(*sent));
	if (to == NULL || routed == NULL || done == NULL || sent == NULL) {
		*failed = true;
		goto out;
	}
	/* Route every record by the view; one with no index left is done. */
	pthread_rwlock_rdlock(&s->view_lock);
	for (size_t i = 0; i < pd.n; i++) {
		rec r;
		if (!rec_parse(pd.vals[i] + ROUTE_HEAD, pd.vls[i] - ROUTE_HEAD,
		    false, &r)) {
			done[i] = true; /* cannot be sent: never will be */
			atomic_fetch_add(&s->records_dropped, 1);
			continue;
		}
		if (i == 0)
			atomic_store(&s->oldest_us, now_us() -
			    (int64_t) r.v_num);
		const table *it = table_find_id(s->view, r.index_id);
		if (it == NULL) {
			/* The index is gone (or not known yet: keep it). */
			if (s->view != NULL && r.index_id < s->view->next_table_id) {
				done[i] = true;
				atomic_fetch_add(&s->records_dropped, 1);
			}
			continue;
		}
		if (!table_serving(it) && it->status != TABLE_CREATING)
			continue;
		const partition *p = table_partition_for(it,
		    keyenc_key_hash(r.key));
		bytes_put_le32(pd.vals[i], p->id);
		bytes_put_le64(pd.vals[i] + 4, p->epoch);
		to[i] = p->node;
		routed[i] = true;
	}
	pthread_rwlock_unlock(&s->view_lock);
	for (size_t i = 0; i < pd.n; i++) {
		if (!routed[i] || sent[to[i]])
			continue;
		sent[to[i]] = true;
		bool ok = send_to(n, to[i], &pd, to, routed);
		for (size_t j = i; j < pd.n; j++)
			if (routed[j] && to[j] == to[i])
				done[j] = ok;
		if (ok)
			continue;
		*failed = true;
		atomic_fetch_add(&s->send_failures, 1);
	}
	size_t nd = 0;
	for (size_t i = 0; i < pd.n; i++)
		nd += done[i];
	if (delete_done(n, &pd, done) != KV_OK)
		*failed = true;
	else
		atomic_fetch_add(&s->records_sent, nd);
	if (nd < pd.n)
		more = false; /* some wait: do not spin on them */
out:
	free(to);
	free(routed);
	free(done);
	free(sent);
	pending_free(&pd);
	return more && !*failed;
}

static void *
repl_run(void *arg)
{
	node *n = arg;
	index_state *s = n->gsi;
	bool failed = false;
	pthread_mutex_lock(&s->mu);
	while (!s->stop) {
		s->kicked = false;
		pthread_mutex_unlock(&s->mu);
		bool again = repl_round(n, &failed);
		pthread_mutex_lock(&s->mu);
		if (again || (s->kicked && !failed))
			continue;
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		long ms = failed || atomic_load(&s->pending) > 0 ?
		    REPL_RETRY_MS : REPL_IDLE_MS;
		ts.tv_nsec += ms * 1000000L;
		ts.tv_sec += ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		if (!s->stop && !s->kicked)
			pthread_cond_timedwait(&s->cv, &s->mu, &ts);
	}
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

/* The highest outbox number in the store, so numbers keep rising. */
static bool
last_number(void *arg, const uint8_t *k, size_t kl, const uint8_t *v,
    size_t vl)
{
	(void) v;
	(void) vl;
	if (kl == OUTBOX_KEY_LEN)
		*(uint64_t *) arg = bytes_get_be64(k + 5);
	return false;
}

kv_err
index_open(node *n)
{
	index_state *s = calloc(1, sizeof(*s));
	uint64_t last = 0;
	if (s == NULL)
		return KV_ENOMEM;
	pthread_rwlock_init(&s->view_lock, NULL);
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	if (store_scan_rev(n->st, outbox_lo, sizeof(outbox_lo), outbox_hi,
	    sizeof(outbox_hi), last_number, &last) != KV_OK)
		last = 0;
	atomic_store(&s->clock, last);
	n->gsi = s;
		if (pthread_create(&s->thread, NULL, repl_run, n) != 0) {
		n->gsi = NULL;
		index_close(n);
		free(s);
		return KV_ENOMEM;
	}
	s->started = true;
	return KV_OK;
}

void
index_close(node *n)
{
	index_state *s = n->gsi;
	if (s == NULL)
		return;
	pthread_mutex_lock(&s->mu);
	s->stop = true;
	pthread_cond_signal(&s->cv);
	pthread_mutex_unlock(&s->mu);
	if (s->started)
		pthread_join(s->thread, NULL);
	n->gsi = NULL;
	catalog_free(s->view);
	pthread_rwlock_destroy(&s->view_lock);
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->cv);
	free(s);
}

void
index_write_metrics(node *n, FILE *f)
{
	index_state *s = n->gsi;
	if (s == NULL)
		return;
	fprintf(f, "# HELP kv_index_outbox_records Index records waiting in "
	    "this node's outbox (at the replicator's last round).\n"
	    "# TYPE kv_index_outbox_records gauge\n"
	    "kv_index_outbox_records %llu\n",
	    (unsigned long long) atomic_load(&s->pending));
	fprintf(f, "# HELP kv_index_outbox_oldest_seconds Age of the oldest "
	    "record in the outbox (at the replicator's last round).\n"
	    "# TYPE kv_index_outbox_oldest_seconds gauge\n"
	    "kv_index_outbox_oldest_seconds %.6f\n",
	    (double) atomic_load(&s->oldest_us) / 1e6);
	fprintf(f, "# HELP kv_index_records_total Index records: written to "
	    "the outbox, sent and acknowledged, dropped (index gone), "
	    "applied here, skipped here as older than the entry.\n"
	    "# TYPE kv_index_records_total counter\n"
	    "kv_index_records_total{what=\"written\"} %llu\n"
	    "kv_index_records_total{what=\"sent\"} %llu\n"
	    "kv_index_records_total{what=\"dropped\"} %llu\n"
	    "kv_index_records_total{what=\"applied\"} %llu\n"
	    "kv_index_records_total{what=\"skipped\"} %llu\n",
	    (unsigned long long) atomic_load(&s->records_written),
	    (unsigned long long) atomic_load(&s->records_sent),
	    (unsigned long long) atomic_load(&s->records_dropped),
	    (unsigned long long) atomic_load(&s->applied),
	    (unsigned long long) atomic_load(&s->stale_skipped));
	fprintf(f, "# HELP kv_index_send_failures_total Rounds in which an "
	    "index node did not apply what it was sent.\n"
	    "# TYPE kv_index_send_failures_total counter\n"
	    "kv_index_send_failures_total %llu\n",
	    (unsigned long long) atomic_load(&s->send_failures));
}
