/*
 * outbox.c — the node's view of the catalog, and the records a base write
 * puts in its outbox (index_int.h, ../index.h).
 */
#include "index_int.h"

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
bool
index_kept_global(const index_def *d)
{
	return !d->local && d->table_id != 0 && !d->deleting;
}

/* Whether a write to t has index entries to keep: a kept global
 * index, or a local one. */
bool
index_table_indexed(const table *t)
{
	for (size_t i = 0; i < t->n_indexes; i++)
		if (index_kept_global(&t->indexes[i]) || t->indexes[i].local)
			return true;
	return false;
}

/*
 * Whether the view (read-locked) cannot tell table_id's indexes: there is
 * none yet (the node has just started and the feed has not answered), or
 * it is older than the partitions' last assignment. A write without its
 * index records would be missing from them for good. Takes the map's
 * lock: not to be held.
 */
static bool
view_behind(node *n, index_state *s, uint32_t table_id)
{
	bool behind = s->view == NULL;
	pthread_rwlock_rdlock(&n->parts.lock);
	for (size_t i = 0; !behind && i < n->parts.n_seen; i++)
		behind = n->parts.seen[i].table_id == table_id &&
		    n->parts.seen[i].version > s->view->version;
	pthread_rwlock_unlock(&n->parts.lock);
	return behind;
}

bool
index_view_known(node *n, uint32_t table_id, const table **out)
{
	index_state *s = n->gsi;
	*out = NULL;
	if (s == NULL)
		return true;
	if (view_behind(n, s, table_id))
		return false;
	const table *t = table_find_id(s->view, table_id);
	*out = t != NULL && index_table_indexed(t) ? t : NULL;
	return true;
}

kv_err
index_view_table(node *n, uint32_t table_id, const table **out)
{
	index_state *s = n->gsi;
	*out = NULL;
	if (s == NULL)
		return KV_OK;
	pthread_rwlock_rdlock(&s->view_lock);
	bool behind = view_behind(n, s, table_id);
	const table *t = behind ? NULL : table_find_id(s->view, table_id);
	if (t != NULL && index_table_indexed(t)) {
		*out = t;
		return KV_OK;
	}
	pthread_rwlock_unlock(&s->view_lock);
	return behind ? KV_STALE_ROUTE : KV_OK;
}

const catalog *
index_view_lock(node *n)
{
	index_state *s = n->gsi;
	if (s == NULL)
		return NULL;
	pthread_rwlock_rdlock(&s->view_lock);
	return s->view;
}

bool
index_has_local(node *n, uint32_t table_id)
{
	index_state *s = n->gsi;
	bool has = false;
	if (s == NULL)
		return false;
	pthread_rwlock_rdlock(&s->view_lock);
	const table *t = s->view != NULL ? table_find_id(s->view, table_id) :
	    NULL;
	has = t != NULL && table_has_local(t);
	pthread_rwlock_unlock(&s->view_lock);
	return has;
}

void
index_view_unlock(node *n)
{
	pthread_rwlock_unlock(&n->gsi->view_lock);
}

/* ---- the base write's side ---- */

const value *
index_attr_of(const value *item, const key_def *k)
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
		const key_def *keys[2 * INDEX_KEY_PARTS];
		if (!index_kept_global(d) && !d->local)
			continue;
		size_t nh, nk = index_key_all(d, keys, &nh);
		for (size_t k = 0; k < nk; k++) {
			const value *v = index_attr_of(item, keys[k]);
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
			/* A table key's limits, per attribute of a
			 * multi-attribute key (our reading). */
			size_t max = k < nh ? 2048 : 1024;
			if ((v->type == VAL_S || v->type == VAL_B) &&
			    v->len > max) {
				snprintf(msg, msglen, "One or more parameter "
				    "values were invalid: Size limit exceeded "
				    "for Index Key %s Actual Size: %zu bytes "
				    "Max Size: %zu bytes IndexName: %s",
				    keys[k]->name, v->len, max, d->name);
				return false;
			}
		}
	}
	return true;
}

/*
 * The storage key of item's entry in index d of t, owned, in *key; NULL
 * when the item is not in the index (it lacks an index key attribute: a
 * sparse index). A multi-attribute key's value is built in a. KV_OK or
 * KV_ENOMEM.
 */
static kv_err
entry_key(const table *t, const index_def *d, const value *item, arena *a,
    uint8_t **key, size_t *len)
{
	value ipk, isk;
	int hp, rp = 1;
	*key = NULL;
	*len = 0;
	if ((hp = index_key_value(d, false, item, a, &ipk)) < 0 ||
	    (d->range.name != NULL &&
	    (rp = index_key_value(d, true, item, a, &isk)) < 0))
		return KV_ENOMEM;
	if (hp == 0 || rp == 0)
		return KV_OK;
	return keyenc_index_key(d->table_id, &ipk,
	    d->range.name != NULL ? &isk : NULL,
	    index_attr_of(item, &t->hash), index_attr_of(item, &t->range),
	    key, len);
}

kv_err
index_project(const table *t, const index_def *d, const value *item,
    arena *a, value *out)
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
		if (index_projects(t, d, at->name, at->name_len))
			keep[k++] = *at;
	}
	*out = (value) { .type = VAL_M, .len = k, .u.attrs = keep };
	return KV_OK;
}

uint64_t
index_next_number(index_state *s)
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
	if (b == NULL)
		return KV_OK; /* only the units are asked (index_outbox) */
	uint64_t num = index_next_number(s);
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
kv_err
index_outbox_one(node *n, const table *t, const index_def *d, uint64_t epoch,
    const value *old, const value *cur, arena *a, store_batch *b,
    uint64_t *half)
{
	kv_err rv;
	uint8_t *ok = NULL, *nk = NULL;
	size_t okl = 0, nkl = 0;
	value op, np;
	if ((rv = entry_key(t, d, old, a, &ok, &okl)) != KV_OK ||
	    (rv = entry_key(t, d, cur, a, &nk, &nkl)) != KV_OK) {
		free(ok);
		return rv;
	}
	bool had = ok != NULL, has = nk != NULL;
	bool moved = had && (!has || !same_bytes(ok, okl, nk, nkl));
	*half = 0;
	if (had)
		rv = index_project(t, d, old, a, &op);
	if (rv == KV_OK && has) {
		rv = index_project(t, d, cur, a, &np);
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
		if (!index_kept_global(d))
			continue;
		rv = index_outbox_one(n, t, d, epoch, old, cur, a, b, &half);
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
