/*
 * index.c — global secondary indexes on the nodes (see index.h).
 *
 * An outbox record's key is {0, 0, 0, 0, 'O'}, the index table's id
 * (big-endian u32) and the record's number (big-endian u64): each
 * index's records read in the order they were written, and one index
 * paused or behind holds up no other. Its value:
 *
 *   OFFSET  SIZE  FIELD (numbers little-endian)
 *   0       4     the index table's id
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

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "bytes.h"
#include "capacity.h"
#include "cluster.h"
#include "codec.h"
#include "item.h"
#include "keyenc.h"
#include "move.h"
#include "part.h"
#include "throttle.h"

#define OUTBOX_KEY_LEN 17
#define MAX_COUNTED 256 /* indexes whose pending records are counted */
#define PRESSURE_US 1000000 /* a refusal holds base writes back this long */
#define SWEEP_US 5000000 /* the replicator's look at the whole outbox */
#define REC_HEAD 25           /* the fixed part of a record's value */
#define ROUTE_HEAD INDEX_ROUTE_LEN /* partition id and epoch first */
#define REPL_MAX_RECORDS RPC_INDEX_APPLY_MAX /* per round: one RPC's most */
#define REPL_MAX_BYTES (1u << 20)
#define REPL_IDLE_MS 100      /* wait for a kick at most this long */
#define REPL_RETRY_MS 50      /* after a failed send */
#define REPL_CALL_MS 5000

enum { REC_PUT = 1, REC_DELETE = 2 };

#define FILL_CHUNK 64 /* items a fill takes under one partition lock */

/* A fill of one index from this node's partitions of its base table. */
typedef struct fill {
	uint32_t base_id, index_id;
	struct fill_done {
		uint32_t part;
		uint64_t epoch;
	} *done;            /* partitions filled, at that epoch */
	size_t n_done, cap;
	bool running;       /* its thread has not ended */
	uint64_t end_num;   /* the outbox number when it last ended */
	bool joinable;      /* a thread to join */
	pthread_t thread;
	node *n;
	struct fill *next;
} fill;

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
	_Atomic uint64_t filled;        /* items given records by fills */
	int64_t swept_us; /* the replicator's last look at the whole outbox */
	/* Records waiting per index, and the number of the oldest at the
	 * replicator's last look (0: none), guarded by count_mu. */
	pthread_mutex_t order_mu; /* index_order_lock */
	pthread_mutex_t count_mu;
	struct index_count {
		uint32_t id;
		int64_t pending;
		uint64_t oldest;
		/* Its owners refused its records for want of capacity:
		 * until then, with the refusal's RPC_THROTTLE_* bits. */
		int64_t pressed_until_us;
		uint32_t pressed_bits;
		/* The replicator's next read starts at this number: every
		 * record before it is sent and deleted. Reading from the
		 * start of the index would step over the deleted records'
		 * tombstones, as many as the store has not compacted away. */
		uint64_t cursor;
	} counts[MAX_COUNTED];
	size_t n_counts;
	pthread_mutex_t fill_mu;        /* guards fills and their fields */
	fill *fills;
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

/* The count of index id (added when missing; NULL when full). Needs
 * count_mu. */
static struct index_count *
count_of(index_state *s, uint32_t id)
{
	for (size_t i = 0; i < s->n_counts; i++)
		if (s->counts[i].id == id)
			return &s->counts[i];
	if (s->n_counts == MAX_COUNTED)
		return NULL;
	s->counts[s->n_counts] = (struct index_count) { .id = id };
	return &s->counts[s->n_counts++];
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

/* Whether d is a global index that writes keep (not local, not going). */
static bool
kept_global(const index_def *d)
{
	return !d->local && d->table_id != 0 && !d->deleting;
}

static bool
has_global(const table *t)
{
	for (size_t i = 0; i < t->n_indexes; i++)
		if (kept_global(&t->indexes[i]))
			return true;
	return false;
}

kv_err
index_view_table(node *n, uint32_t table_id, const table **out)
{
	index_state *s = n->gsi;
	*out = NULL;
	if (s == NULL)
		return KV_OK;
	pthread_rwlock_rdlock(&s->view_lock);
	/*
	 * No view yet (the node has just started and the feed has not
	 * answered), or one older than the partitions' last assignment:
	 * which indexes the table has is not known, and a write without
	 * its records would be missing from them for good.
	 */
	bool behind = s->view == NULL;
	pthread_rwlock_rdlock(&n->parts.lock);
	for (size_t i = 0; !behind && i < n->parts.n_seen; i++)
		behind = n->parts.seen[i].table_id == table_id &&
		    n->parts.seen[i].version > s->view->version;
	pthread_rwlock_unlock(&n->parts.lock);
	const table *t = behind ? NULL : table_find_id(s->view, table_id);
	if (t != NULL && has_global(t)) {
		*out = t;
		return KV_OK;
	}
	pthread_rwlock_unlock(&s->view_lock);
	return behind ? KV_STALE_ROUTE : KV_OK;
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
		if (!kept_global(d))
			continue;
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

uint8_t *
index_record_encode(arena *a, uint32_t index_id, uint64_t epoch,
    uint64_t num, const uint8_t *key, size_t kl, const value *item,
    size_t *len)
{
	size_t il = item != NULL ? codec_size(item) : 0;
	size_t vl = REC_HEAD + kl + (item != NULL ? 4 + il : 0);
	uint8_t *v = arena_alloc(a, vl);
	if (v == NULL)
		return NULL;
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
	*len = vl;
	return v;
}

/* Adds one record (item NULL: a delete) to b, its bytes in a. */
static kv_err
add_record(index_state *s, uint32_t index_id, uint64_t epoch,
    const uint8_t *key, size_t kl, const value *item, arena *a,
    store_batch *b)
{
	size_t vl;
	uint64_t num = next_number(s);
	uint8_t *k = arena_alloc(a, OUTBOX_KEY_LEN);
	uint8_t *v = index_record_encode(a, index_id, epoch, num, key, kl,
	    item, &vl);
	if (k == NULL || v == NULL)
		return KV_ENOMEM;
	memcpy(k, outbox_lo, sizeof(outbox_lo));
	bytes_put_be32(k + 5, index_id);
	bytes_put_be64(k + 9, num);
	atomic_fetch_add(&s->records_written, 1);
	return store_batch_add(b, STORE_PUT, k, OUTBOX_KEY_LEN, v, vl);
}

static bool
same_bytes(const uint8_t *x, size_t xl, const uint8_t *y, size_t yl)
{
	return xl == yl && memcmp(x, y, xl) == 0;
}

/* index_outbox for one global index d of t; its cost in *half. */
static kv_err
outbox_one(node *n, const table *t, const index_def *d, uint64_t epoch,
    const value *old, const value *cur, arena *a, store_batch *b,
    uint64_t *half)
{
	kv_err rv;
	uint8_t *ok = NULL, *nk = NULL;
	size_t okl = 0, nkl = 0;
	value op, np;
	if ((rv = entry_key(t, d, old, &ok, &okl)) != KV_OK ||
	    (rv = entry_key(t, d, cur, &nk, &nkl)) != KV_OK) {
		free(ok);
		return rv;
	}
	bool had = ok != NULL, has = nk != NULL;
	bool moved = had && (!has || !same_bytes(ok, okl, nk, nkl));
	*half = 0;
	if (had)
		rv = project(t, d, old, a, &op);
	if (rv == KV_OK && has) {
		rv = project(t, d, cur, a, &np);
		bool same = rv == KV_OK && had && !moved &&
		    value_equal(&op, &np);
		if (rv == KV_OK && !same) {
			uint8_t *kc = (uint8_t *) arena_dup(a, nk, nkl);
			rv = kc == NULL ? KV_ENOMEM : add_record(n->gsi,
			    d->table_id, epoch, kc, nkl, &np, a, b);
			*half += 2 * capacity_write_units(had && !moved ?
			    item_size(&op) : 0, item_size(&np));
		}
	}
	if (rv == KV_OK && moved) {
		uint8_t *kc = (uint8_t *) arena_dup(a, ok, okl);
		rv = kc == NULL ? KV_ENOMEM : add_record(n->gsi,
		    d->table_id, epoch, kc, okl, NULL, a, b);
		*half += 2 * capacity_write_units(item_size(&op), 0);
	}
	free(ok);
	free(nk);
	return rv;
}

kv_err
index_outbox(node *n, const table *t, uint64_t epoch, const value *old,
    const value *cur, arena *a, store_batch *b, index_units *u, size_t *n_u)
{
	kv_err rv = KV_OK;
	if (n_u != NULL)
		*n_u = 0;
	for (size_t i = 0; rv == KV_OK && i < t->n_indexes; i++) {
		const index_def *d = &t->indexes[i];
		uint64_t half;
		if (!kept_global(d))
			continue;
		rv = outbox_one(n, t, d, epoch, old, cur, a, b, &half);
		if (rv == KV_OK && u != NULL && half > 0)
			u[(*n_u)++] = (index_units) { d->table_id, half };
	}
	return rv;
}

kv_err
index_units_answer(arena *a, const index_units *u, size_t n,
    rpc_response *resp)
{
	if (n == 0)
		return KV_OK;
	const uint8_t **blobs = arena_alloc(a, n * sizeof(*blobs));
	size_t *lens = arena_alloc(a, n * sizeof(*lens));
	if (blobs == NULL || lens == NULL)
		return KV_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		uint8_t *w = arena_alloc(a, RPC_INDEX_UNITS_LEN);
		if (w == NULL)
			return KV_ENOMEM;
		bytes_put_le32(w, u[i].index_id);
		bytes_put_le64(w + 4, u[i].half);
		blobs[i] = w;
		lens[i] = RPC_INDEX_UNITS_LEN;
	}
	resp->blobs = blobs;
	resp->blob_lens = lens;
	resp->n_blobs = n;
	return KV_OK;
}

void
index_order_lock(node *n)
{
	pthread_mutex_lock(&n->gsi->order_mu);
}

void
index_order_unlock(node *n)
{
	pthread_mutex_unlock(&n->gsi->order_mu);
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

/*
 * What the batch being applied has written to one entry key so far (a
 * batch may hold several records of one entry), by key hash; open
 * addressing over twice the records.
 */
typedef struct seen_entry {
	const rec *r;       /* the record that wrote it last; NULL: free */
	const uint8_t *val; /* what it wrote */
	size_t vl;
} seen_entry;

static seen_entry *
seen_slot(seen_entry *t, size_t cap, const rec *r)
{
	size_t i = (size_t) XXH3_64bits(r->key, r->kl) & (cap - 1);
	while (t[i].r != NULL && (t[i].r->kl != r->kl ||
	    memcmp(t[i].r->key, r->key, r->kl) != 0))
		i = (i + 1) & (cap - 1);
	return &t[i];
}

static int
by_address(const void *x, const void *y)
{
	uintptr_t a = (uintptr_t) *(part *const *) x;
	uintptr_t b = (uintptr_t) *(part *const *) y;
	return a < b ? -1 : a > b;
}

void
index_apply_serve(node *n, const rpc_request *req, arena *a,
    rpc_response *resp)
{
	index_state *s = n->gsi;
	size_t nr = req->n_subs, cap = 16;
	while (cap < 2 * nr)
		cap *= 2;
	rec *rs = arena_alloc(a, (nr > 0 ? nr : 1) * sizeof(rec));
	part **ps = arena_alloc(a, (nr > 0 ? nr : 1) * sizeof(part *));
	part **locked = arena_alloc(a, (nr > 0 ? nr : 1) * sizeof(part *));
	int64_t *d_items = arena_alloc(a, (nr > 0 ? nr : 1) * sizeof(int64_t));
	int64_t *d_bytes = arena_alloc(a, (nr > 0 ? nr : 1) * sizeof(int64_t));
	bool *applied = arena_alloc(a, (nr > 0 ? nr : 1) * sizeof(bool));
	seen_entry *seen = arena_alloc(a, cap * sizeof(seen_entry));
	size_t nl = 0;
	store_batch b;

	if (rs == NULL || ps == NULL || locked == NULL || d_items == NULL ||
	    d_bytes == NULL || applied == NULL || seen == NULL) {
		resp->code = KV_ENOMEM;
		return;
	}
	memset(seen, 0, cap * sizeof(seen_entry));
	for (size_t i = 0; i < nr; i++)
		if (!rec_parse(req->subs[i], req->sub_lens[i], true,
		    &rs[i])) {
			resp->code = KV_PROTO;
			return;
		}
	store_batch_init(&b);
	pthread_rwlock_rdlock(&n->parts.lock);
	/* All or nothing: every record must be this node's to apply. */
	resp->code = KV_OK;
	for (size_t i = 0; i < nr && resp->code == KV_OK; i++)
		resp->code = part_map_check_key_locked(&n->parts,
		    rs[i].index_id, rs[i].part, rs[i].part_epoch, rs[i].key,
		    rs[i].kl, &ps[i]);
	/*
	 * The index partitions must have write capacity for them: if one
	 * has not, none is applied, and the base node holds back the
	 * writes that would add to its records (back-pressure).
	 */
	for (size_t i = 0; i < nr && resp->code == KV_OK; i++) {
		bool first = true;
		for (size_t k = 0; k < nl && first; k++)
			first = locked[k] != ps[i];
		if (!first)
			continue;
		locked[nl++] = ps[i];
		resp->code = throttle_admit(n, ps[i], true, rs[i].key,
		    rs[i].kl, resp);
	}
	if (resp->code != KV_OK)
		goto unlock_map;
	/*
	 * One batch for all of them, under the mutexes of every partition
	 * they touch (taken in address order, so two batches never wait on
	 * each other), so that no other write to their entries comes
	 * between a record's version check and its write.
	 */
	qsort(locked, nl, sizeof(*locked), by_address);
	for (size_t k = 0; k < nl; k++)
		pthread_mutex_lock(&locked[k]->mu);
	for (size_t i = 0; i < nr && resp->code == KV_OK; i++) {
		const rec *r = &rs[i];
		seen_entry *e = seen_slot(seen, cap, r);
		uint8_t *old = NULL;
		const uint8_t *ov;
		size_t ol = 0;
		bool found;
		applied[i] = false;
		d_items[i] = d_bytes[i] = 0;
		if (e->r != NULL) {
			ov = e->val;
			ol = e->vl;
			found = true;
		} else {
			resp->code = store_get(n->st, r->key, r->kl, &old, &ol,
			    &found);
			ov = old;
			if (resp->code == KV_OK && found && ol < RECORD_HEADER)
				resp->code = KV_CORRUPT;
			if (resp->code != KV_OK) {
				free(old);
				break;
			}
		}
		if (found && !newer(r->v_epoch, r->v_num, ov, ol)) {
			free(old);
			atomic_fetch_add(&s->stale_skipped, 1);
			continue;
		}
		bool was_live = found && record_item_offset(ov, ol) < ol;
		uint32_t old_size = found ? record_size(ov) : 0;
		free(old);
		size_t vl = RECORD_HEADER + RECORD_VERSION_LEN + r->il;
		uint8_t *v = arena_alloc(a, vl);
		if (v == NULL) {
			resp->code = KV_ENOMEM;
			break;
		}
		uint32_t size = r->kind == REC_PUT ? r->size : 0;
		bytes_put_le32(v, size | RECORD_VERSIONED);
		bytes_put_le64(v + RECORD_HEADER, r->v_epoch);
		bytes_put_le64(v + RECORD_HEADER + 8, r->v_num);
		if (r->il > 0)
			memcpy(v + RECORD_HEADER + RECORD_VERSION_LEN, r->item,
			    r->il);
		if ((resp->code = store_batch_add(&b, STORE_PUT, r->key, r->kl,
		    v, vl)) != KV_OK)
			break;
		*e = (seen_entry) { r, v, vl };
		applied[i] = true;
		d_items[i] = (r->kind == REC_PUT ? 1 : 0) - (was_live ? 1 : 0);
		d_bytes[i] = (int64_t) size - (int64_t) old_size;
	}
	/* Durable before the answer: the sender deletes its records then. */
	if (resp->code == KV_OK && b.n > 0)
		resp->code = store_write(n->st, &b);
	for (size_t i = 0; i < nr && resp->code == KV_OK; i++) {
		if (!applied[i])
			continue;
		/* A move under way sends the entry again (after the write,
		 * or it could read the old one). */
		move_note(ps[i], rs[i].key, rs[i].kl);
		ps[i]->items += (uint64_t) d_items[i];
		ps[i]->bytes += (uint64_t) d_bytes[i];
	}
	for (size_t k = 0; k < nl; k++)
		pthread_mutex_unlock(&locked[k]->mu);
	for (size_t i = 0; i < nr && resp->code == KV_OK; i++) {
		if (!applied[i])
			continue;
		atomic_fetch_add(&s->applied, 1);
		/* The index partition pays for its writes (DynamoDB charges
		 * a GSI's writes to the GSI). */
		throttle_charge(n, ps[i], true, rs[i].key, rs[i].kl,
		    2 * capacity_write_units(0, rs[i].size));
	}
unlock_map:
	pthread_rwlock_unlock(&n->parts.lock);
	store_batch_fini(&b);
}

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
		if (kept_global(&t->indexes[i]) && t->indexes[i].table_id ==
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
		if (c.vls[i] < RECORD_HEADER ||
		    (at = record_item_offset(c.vals[i], c.vls[i])) ==
		    c.vls[i])
			continue;
		ok = codec_decode(&a, c.vals[i] + at, c.vls[i] - at, &item) ==
		    KV_OK && item.type == VAL_M && outbox_one(n, t, d,
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

/*
 * Deletes the outbox records marked in done. When all are (the usual
 * case), one range deletion covers them: every record between the first
 * and the last is in pd, as they were read in one go.
 */
static kv_err
delete_done(node *n, const pending *pd, const bool *done)
{
	store_batch b;
	kv_err rv = KV_OK;
	size_t k = 0;
	uint8_t end[OUTBOX_KEY_LEN];
	store_batch_init(&b);
	for (size_t i = 0; i < pd->n; i++)
		k += done[i];
	if (k == pd->n && k > 1 && pd->kls[k - 1] == OUTBOX_KEY_LEN &&
	    bytes_get_be64(pd->keys[k - 1] + 9) < UINT64_MAX) {
		memcpy(end, pd->keys[k - 1], OUTBOX_KEY_LEN);
		bytes_put_be64(end + 9, bytes_get_be64(end + 9) + 1);
		rv = store_batch_add(&b, STORE_DELETE_RANGE, pd->keys[0],
		    pd->kls[0], end, sizeof(end));
	} else {
		for (size_t i = 0; i < pd->n && rv == KV_OK; i++)
			if (done[i])
				rv = store_batch_add(&b, STORE_DELETE,
				    pd->keys[i], pd->kls[i], NULL, 0);
	}
	if (rv == KV_OK && k > 0)
		rv = store_write(n->st, &b);
	if (rv == KV_OK && k > 0) {
		index_state *s = n->gsi;
		pthread_mutex_lock(&s->count_mu);
		struct index_count *c = count_of(s,
		    bytes_get_be32(pd->keys[0] + 5));
		if (c != NULL)
			c->pending -= (int64_t) k;
		pthread_mutex_unlock(&s->count_mu);
	}
	store_batch_fini(&b);
	return rv;
}

/* Notes that index id's owners refused its records for want of
 * capacity (bits: the refusal's RPC_THROTTLE_*), or took them (0). */
static void
note_pressure(index_state *s, uint32_t id, uint32_t bits)
{
	pthread_mutex_lock(&s->count_mu);
	struct index_count *c = count_of(s, id);
	if (c != NULL) {
		c->pressed_until_us = bits != 0 ? now_us() + PRESSURE_US : 0;
		c->pressed_bits = bits;
	}
	pthread_mutex_unlock(&s->count_mu);
}

bool
index_pressed(node *n, const store_batch *b, uint32_t *index_id,
    uint32_t *bits)
{
	index_state *s = n->gsi;
	bool pressed = false;
	int64_t now = now_us();
	pthread_mutex_lock(&s->count_mu);
	for (size_t i = 0; i < b->n && !pressed; i++) {
		const store_op *op = &b->ops[i];
		if (op->key_len != OUTBOX_KEY_LEN ||
		    memcmp(op->key, outbox_lo, sizeof(outbox_lo)) != 0)
			continue;
		uint32_t id = bytes_get_be32(op->key + 5);
		for (size_t k = 0; k < s->n_counts && !pressed; k++)
			if (s->counts[k].id == id &&
			    s->counts[k].pressed_until_us > now) {
				pressed = true;
				*index_id = id;
				*bits = s->counts[k].pressed_bits;
			}
	}
	pthread_mutex_unlock(&s->count_mu);
	return pressed;
}

const char *
index_name_of_locked(node *n, uint32_t index_id, arena *a)
{
	const table *it = table_find_id(n->gsi->view, index_id);
	const char *slash = it != NULL ? strchr(it->name, '/') : NULL;
	return slash != NULL ? arena_dup(a, slash + 1, strlen(slash + 1)) :
	    NULL;
}

/*
 * Sends node `dest` the records routed to it; true when all applied.
 * *bits: the refusal's RPC_THROTTLE_* bits when the owner had no
 * capacity for them, else 0.
 */
static bool
send_to(node *n, uint32_t dest, const pending *pd, const uint32_t *to,
    const bool *routed, uint32_t *bits)
{
	*bits = 0;
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
		if (resp.code == KV_THROTTLED)
			*bits = resp.throttle | RPC_THROTTLE_WRITE;
	} else {
		kv_err rv = cluster_tell_ms(n, dest, &req, &a, &resp,
		    REPL_CALL_MS);
		ok = rv == KV_OK && resp.code == KV_OK;
		if (rv == KV_OK && resp.code == KV_THROTTLED)
			*bits = resp.throttle | RPC_THROTTLE_WRITE;
		if (rv == KV_OK)
			wire_response_fini(&resp);
	}
	arena_fini(&a);
out:
	free(blobs);
	free(lens);
	return ok;
}

void
index_count(node *n, const store_batch *b, int sign)
{
	index_state *s = n->gsi;
	pthread_mutex_lock(&s->count_mu);
	for (size_t i = 0; i < b->n; i++) {
		const store_op *op = &b->ops[i];
		if (op->key_len != OUTBOX_KEY_LEN ||
		    memcmp(op->key, outbox_lo, sizeof(outbox_lo)) != 0)
			continue;
		struct index_count *c = count_of(s,
		    bytes_get_be32(op->key + 5));
		if (c != NULL)
			c->pending += sign;
	}
	pthread_mutex_unlock(&s->count_mu);
}

/* Notes the oldest record waiting for index id (0: none). */
static void
note_oldest(index_state *s, uint32_t id, uint64_t num)
{
	pthread_mutex_lock(&s->count_mu);
	struct index_count *c = count_of(s, id);
	if (c != NULL) {
		c->oldest = num;
		if (num == 0)
			c->pending = 0; /* none read: none left */
	}
	pthread_mutex_unlock(&s->count_mu);
}

/* The first index id >= from with records in the outbox, in *id. */
static bool
first_key(void *arg, const uint8_t *k, size_t kl, const uint8_t *v,
    size_t vl)
{
	(void) v;
	(void) vl;
	if (kl == OUTBOX_KEY_LEN)
		*(uint64_t *) arg = bytes_get_be32(k + 5);
	return false;
}

static bool
next_index(node *n, uint64_t from, uint32_t *id)
{
	uint8_t lo[9];
	uint64_t got = UINT64_MAX;
	if (from > UINT32_MAX)
		return false;
	memcpy(lo, outbox_lo, sizeof(outbox_lo));
	bytes_put_be32(lo + 5, (uint32_t) from);
	if (store_scan(n->st, lo, sizeof(lo), outbox_hi, sizeof(outbox_hi),
	    first_key, &got) != KV_OK || got == UINT64_MAX)
		return false;
	*id = (uint32_t) got;
	return true;
}

/*
 * Sends what index `id` has waiting, up to one batch: the records old
 * enough (the delay), unless the index is paused. Returns true when a
 * full batch went (there may be more), with *failed on a failure.
 */
static bool
repl_index(node *n, uint32_t id, uint64_t cursor, bool *failed)
{
	index_state *s = n->gsi;
	pending pd = { 0 };
	bool more = false;
	uint8_t lo[OUTBOX_KEY_LEN], hi[9];
	memcpy(lo, outbox_lo, sizeof(outbox_lo));
	bytes_put_be32(lo + 5, id);
	bytes_put_be64(lo + 9, cursor);
	memcpy(hi, lo, sizeof(hi));
	size_t hil = sizeof(hi);
	if (id == UINT32_MAX) {
		memcpy(hi, outbox_hi, sizeof(outbox_hi));
		hil = sizeof(outbox_hi);
	} else {
		bytes_put_be32(hi + 5, id + 1);
	}
	kv_err rv = store_scan(n->st, lo, sizeof(lo), hi, hil, take_one, &pd);
	if (rv != KV_OK) {
		*failed = true;
		pending_free(&pd);
		return false;
	}
	note_oldest(s, id, pd.n > 0 ? bytes_get_be64(pd.keys[0] + 9) : 0);
	if (pd.n == 0) {
		pending_free(&pd);
		return false;
	}
	bool *routed = calloc(pd.n, sizeof(*routed));
	bool *done = calloc(pd.n, sizeof(*done));
	uint32_t *to = calloc(pd.n, sizeof(*to));
	bool *sent = calloc(CONFIG_MAX_NODES, sizeof(*sent));
	if (to == NULL || routed == NULL || done == NULL || sent == NULL) {
		*failed = true;
		goto out;
	}
	/*
	 * Route by the view. With the index gone, its records are done;
	 * while it is paused, being deleted or not known yet, they wait;
	 * so do those younger than the delay, and all after them.
	 */
	uint64_t young = (uint64_t) now_us() - (uint64_t) n->cfg.gsi_delay_ms *
	    1000;
	size_t usable = pd.n;
	pthread_rwlock_rdlock(&s->view_lock);
	const table *it = table_find_id(s->view, id);
	bool gone = it == NULL && s->view != NULL &&
	    id < s->view->next_table_id;
	bool wait = it == NULL || it->paused || (!table_serving(it) &&
	    it->status != TABLE_CREATING);
	for (size_t i = 0; i < pd.n && !gone && !wait; i++) {
		rec r;
		if (!rec_parse(pd.vals[i] + ROUTE_HEAD, pd.vls[i] - ROUTE_HEAD,
		    false, &r) || r.index_id != id) {
			done[i] = true; /* cannot be sent: never will be */
			atomic_fetch_add(&s->records_dropped, 1);
			continue;
		}
		if (n->cfg.gsi_delay_ms > 0 && r.v_num > young) {
			usable = i;
			break;
		}
		const partition *p = table_partition_for(it,
		    keyenc_key_hash(r.key));
		bytes_put_le32(pd.vals[i], p->id);
		bytes_put_le64(pd.vals[i] + 4, p->epoch);
		to[i] = p->node;
		routed[i] = true;
	}
	pthread_rwlock_unlock(&s->view_lock);
	for (size_t i = 0; gone && i < pd.n; i++) {
		done[i] = true;
		atomic_fetch_add(&s->records_dropped, 1);
	}
	uint32_t pressure = 0;
	for (size_t i = 0; i < usable; i++) {
		if (!routed[i] || sent[to[i]])
			continue;
		sent[to[i]] = true;
		uint32_t bits;
		bool ok = send_to(n, to[i], &pd, to, routed, &bits);
		pressure |= bits;
		for (size_t j = i; j < usable; j++)
			if (routed[j] && to[j] == to[i])
				done[j] = ok;
		if (ok)
			continue;
		*failed = true;
		if (bits == 0)
			atomic_fetch_add(&s->send_failures, 1);
	}
	if (usable > 0)
		note_pressure(s, id, pressure);
	size_t nd = 0, first_left = pd.n;
	for (size_t i = 0; i < pd.n; i++) {
		nd += done[i];
		if (!done[i] && first_left == pd.n)
			first_left = i;
	}
	if (delete_done(n, &pd, done) != KV_OK) {
		*failed = true;
	} else {
		if (!gone)
			atomic_fetch_add(&s->records_sent, nd);
		/* The next read starts at the first record left, or after
		 * the last one read. */
		uint64_t next = first_left < pd.n ?
		    bytes_get_be64(pd.keys[first_left] + 9) :
		    bytes_get_be64(pd.keys[pd.n - 1] + 9) + 1;
		pthread_mutex_lock(&s->count_mu);
		struct index_count *c = count_of(s, id);
		if (c != NULL)
			c->cursor = next;
		pthread_mutex_unlock(&s->count_mu);
	}
	more = nd == pd.n && (pd.n >= REPL_MAX_RECORDS ||
	    pd.bytes >= REPL_MAX_BYTES);
out:
	free(to);
	free(routed);
	free(done);
	free(sent);
	pending_free(&pd);
	return more && !*failed;
}

/*
 * One round over every index with records waiting. Returns true when
 * some index may have more to send at once; *waiting when records wait
 * (the delay, a pause, a failure), to look again soon.
 */
static bool
repl_round(node *n, bool *failed, bool *waiting)
{
	index_state *s = n->gsi;
	struct index_count todo[MAX_COUNTED];
	size_t k = 0;
	bool more = false;
	*failed = *waiting = false;
	/* Every index with records here is counted (index_count, and the
	 * tally at start). */
	int64_t now = now_us();
	if (now - s->swept_us > SWEEP_US) {
		/*
		 * Now and then, look at the whole outbox for an index whose
		 * records the counts missed (none should: a safety net, whose
		 * cost is stepping over tombstones once in a while).
		 */
		uint32_t id;
		uint64_t from = 0;
		s->swept_us = now;
		while (next_index(n, from, &id)) {
			pthread_mutex_lock(&s->count_mu);
			struct index_count *c = count_of(s, id);
			if (c != NULL && c->pending <= 0)
				c->pending = 1;
			pthread_mutex_unlock(&s->count_mu);
			from = (uint64_t) id + 1;
		}
	}
	pthread_mutex_lock(&s->count_mu);
	for (size_t i = 0; i < s->n_counts; i++)
		if (s->counts[i].pending > 0)
			todo[k++] = s->counts[i];
	pthread_mutex_unlock(&s->count_mu);
	for (size_t i = 0; i < k; i++) {
		bool f = false;
		more |= repl_index(n, todo[i].id, todo[i].cursor, &f);
		*failed |= f;
		*waiting = true;
	}
	return more;
}

static void *
repl_run(void *arg)
{
	node *n = arg;
	index_state *s = n->gsi;
	bool failed = false, waiting = false;
	pthread_mutex_lock(&s->mu);
	while (!s->stop) {
		s->kicked = false;
		pthread_mutex_unlock(&s->mu);
		bool again = repl_round(n, &failed, &waiting);
		pthread_mutex_lock(&s->mu);
		if (again || (s->kicked && !failed))
			continue;
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		long ms = failed || waiting ? REPL_RETRY_MS : REPL_IDLE_MS;
		ts.tv_nsec += ms * 1000000L;
		ts.tv_sec += ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		if (!s->stop && !s->kicked)
			pthread_cond_timedwait(&s->cv, &s->mu, &ts);
	}
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

/* Counts the outbox's records per index, and the highest number. */
typedef struct outbox_tally {
	index_state *s;
	uint64_t last;
} outbox_tally;

static bool
tally_one(void *arg, const uint8_t *k, size_t kl, const uint8_t *v,
    size_t vl)
{
	outbox_tally *t = arg;
	(void) v;
	(void) vl;
	if (kl != OUTBOX_KEY_LEN)
		return true;
	struct index_count *c = count_of(t->s, bytes_get_be32(k + 5));
	if (c != NULL)
		c->pending++;
	uint64_t num = bytes_get_be64(k + 9);
	if (num > t->last)
		t->last = num;
	return true;
}

kv_err
index_open(node *n)
{
	index_state *s = calloc(1, sizeof(*s));
	if (s == NULL)
		return KV_ENOMEM;
	/*
	 * Writers first: a stream of writes to indexed tables, each holding
	 * the view shared, must not keep a new catalog out for long. So no
	 * thread may take it shared twice (a waiting writer would block the
	 * second).
	 */
	pthread_rwlockattr_t attr;
	pthread_rwlockattr_init(&attr);
	pthread_rwlockattr_setkind_np(&attr,
	    PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&s->view_lock, &attr);
	pthread_rwlockattr_destroy(&attr);
	pthread_mutex_init(&s->mu, NULL);
	pthread_mutex_init(&s->fill_mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	pthread_mutex_init(&s->count_mu, NULL);
	pthread_mutex_init(&s->order_mu, NULL);
	/* Numbers keep rising across restarts; the counts start right. */
	outbox_tally tally = { .s = s };
	if (store_scan(n->st, outbox_lo, sizeof(outbox_lo), outbox_hi,
	    sizeof(outbox_hi), tally_one, &tally) != KV_OK)
		tally.last = 0;
	atomic_store(&s->clock, tally.last);
	n->gsi = s;
	if (pthread_create(&s->thread, NULL, repl_run, n) != 0) {
		index_close(n); /* frees s */
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
	/* Fills see stop between chunks. */
	for (fill *f = s->fills, *next; f != NULL; f = next) {
		next = f->next;
		if (f->joinable)
			pthread_join(f->thread, NULL);
		free(f->done);
		free(f);
	}
	pthread_mutex_destroy(&s->fill_mu);
	pthread_mutex_destroy(&s->count_mu);
	pthread_mutex_destroy(&s->order_mu);
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
	    "this node's outbox, per index (table \"BASE/INDEX\").\n"
	    "# TYPE kv_index_outbox_records gauge\n");
	struct index_count counts[MAX_COUNTED];
	pthread_mutex_lock(&s->count_mu);
	size_t nc = s->n_counts;
	memcpy(counts, s->counts, nc * sizeof(*counts));
	pthread_mutex_unlock(&s->count_mu);
	int64_t now = now_us();
	pthread_rwlock_rdlock(&s->view_lock);
	for (size_t i = 0; i < nc; i++) {
		const table *it = table_find_id(s->view, counts[i].id);
		if (it == NULL)
			continue;
		fprintf(f, "kv_index_outbox_records{node=\"%u\",index=\"%s\"} "
		    "%lld\n", n->index, it->name, (long long) (counts[i].pending >
		    0 ? counts[i].pending : 0));
	}
	fprintf(f, "# HELP kv_index_outbox_oldest_seconds Age of the oldest "
	    "record waiting for each index (at the replicator's last look; "
	    "0: none).\n# TYPE kv_index_outbox_oldest_seconds gauge\n");
	for (size_t i = 0; i < nc; i++) {
		const table *it = table_find_id(s->view, counts[i].id);
		if (it == NULL)
			continue;
		fprintf(f, "kv_index_outbox_oldest_seconds{node=\"%u\","
		    "index=\"%s\"} %.6f\n", n->index, it->name,
		    counts[i].oldest != 0 && counts[i].pending > 0 ?
		    (double) (now - (int64_t) counts[i].oldest) / 1e6 : 0.0);
	}
	pthread_rwlock_unlock(&s->view_lock);
	fprintf(f, "# HELP kv_index_records_total Index records: written to "
	    "the outbox (by writes and by fills), sent and acknowledged, "
	    "dropped (index gone), applied here, skipped here as older than "
	    "the entry.\n"
	    "# TYPE kv_index_records_total counter\n"
	    "kv_index_records_total{node=\"%u\",what=\"written\"} %llu\n"
	    "kv_index_records_total{node=\"%u\",what=\"sent\"} %llu\n"
	    "kv_index_records_total{node=\"%u\",what=\"dropped\"} %llu\n"
	    "kv_index_records_total{node=\"%u\",what=\"applied\"} %llu\n"
	    "kv_index_records_total{node=\"%u\",what=\"skipped\"} %llu\n",
	    n->index, (unsigned long long) atomic_load(&s->records_written),
	    n->index, (unsigned long long) atomic_load(&s->records_sent),
	    n->index, (unsigned long long) atomic_load(&s->records_dropped),
	    n->index, (unsigned long long) atomic_load(&s->applied),
	    n->index, (unsigned long long) atomic_load(&s->stale_skipped));
	fprintf(f, "# HELP kv_index_filled_items_total Items given index "
	    "records by fills of new indexes.\n"
	    "# TYPE kv_index_filled_items_total counter\n"
	    "kv_index_filled_items_total{node=\"%u\"} %llu\n", n->index,
	    (unsigned long long) atomic_load(&s->filled));
	fprintf(f, "# HELP kv_index_send_failures_total Rounds in which an "
	    "index node did not apply what it was sent.\n"
	    "# TYPE kv_index_send_failures_total counter\n"
	    "kv_index_send_failures_total{node=\"%u\"} %llu\n", n->index,
	    (unsigned long long) atomic_load(&s->send_failures));
}
