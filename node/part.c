/*
 * part.c — the node's partition registry and its metadata records (see
 * part.h for the locking rule and the record layout).
 */
#include "part.h"
#include "index.h"

#include "bytes.h"
#include "keyenc.h"
#include "node.h"

#include <stdlib.h>
#include <string.h>

static void
put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t) (v >> 24);
	p[1] = (uint8_t) (v >> 16);
	p[2] = (uint8_t) (v >> 8);
	p[3] = (uint8_t) v;
}

static uint32_t
get_be32(const uint8_t *p)
{
	return (uint32_t) p[0] << 24 | (uint32_t) p[1] << 16 |
	    (uint32_t) p[2] << 8 | p[3];
}

void
part_map_init(part_map *m)
{
	pthread_rwlock_init(&m->lock, NULL);
	m->p = NULL;
	m->n = m->cap = 0;
	m->seen = NULL;
	m->n_seen = 0;
	atomic_init(&m->sizes.bytes, 0);
	m->sizes.limit = 32u << 20; /* main.c sets the node's share */
}

void
part_map_fini(part_map *m)
{
	for (size_t i = 0; i < m->n; i++) {
		move_forget(m->p[i]);
		free(m->p[i]->local.from);
		size_index_fini(&m->p[i]->sizes);
		pthread_mutex_destroy(&m->p[i]->mu);
		pthread_mutex_destroy(&m->p[i]->cap_mu);
		free(m->p[i]);
	}
	free(m->p);
	m->p = NULL;
	m->n = m->cap = 0;
	free(m->seen);
	m->seen = NULL;
	m->n_seen = 0;
	pthread_rwlock_destroy(&m->lock);
}

void
part_meta_key(uint32_t table_id, uint32_t id, uint8_t key[PART_META_KEY_LEN])
{
	memset(key, 0, 4);
	key[4] = 'P';
	put_be32(key + 5, table_id);
	put_be32(key + 9, id);
}

void
part_meta_value(const part *p, uint64_t items, uint64_t bytes,
    uint8_t val[PART_META_VAL_LEN])
{
	bytes_put_le64(val, p->lo);
	bytes_put_le64(val + 8, p->last);
	bytes_put_le64(val + 16, p->epoch);
	bytes_put_le64(val + 24, items);
	bytes_put_le64(val + 32, bytes);
	bytes_put_le64(val + 40, p->prov_rcu);
	bytes_put_le64(val + 48, p->prov_wcu);
	bytes_put_le32(val + 56, p->table_parts);
	memset(val + 60, 0, PART_META_VAL_LEN - 60);
	val[60] = p->keyed;
	val[61] = p->kfrom_len;
	val[62] = p->kto_len;
	memcpy(val + 63, p->kfrom, p->kfrom_len);
	memcpy(val + 63 + PART_KEY_MAX, p->kto, p->kto_len);
}

void
part_set_keys(part *p, const partition *tp)
{
	p->keyed = tp->keyed;
	p->kfrom_len = tp->kfrom_len;
	p->kto_len = tp->kto_len;
	memcpy(p->kfrom, tp->kfrom, tp->kfrom_len);
	memcpy(p->kto, tp->kto, tp->kto_len);
}

/* memcmp of byte strings, the shorter first when one begins the other. */
static int
bytes_cmp(const uint8_t *a, size_t al, const uint8_t *b, size_t bl)
{
	int c = memcmp(a, b, al < bl ? al : bl);
	return c != 0 ? c : al < bl ? -1 : al > bl;
}

bool
part_holds_key(const part *p, const uint8_t *key, size_t kl)
{
	uint64_t h = keyenc_key_hash(key);
	if (h < p->lo || h > p->last)
		return false;
	if (!p->keyed)
		return true;
	const uint8_t *suf = key + KEYENC_PREFIX;
	size_t sl = kl - KEYENC_PREFIX;
	return (p->kfrom_len == 0 || bytes_cmp(suf, sl, p->kfrom,
	    p->kfrom_len) >= 0) && (p->kto_len == 0 || bytes_cmp(suf, sl,
	    p->kto, p->kto_len) < 0);
}

static int
by_address(const void *x, const void *y)
{
	uintptr_t a = (uintptr_t) *(part *const *) x;
	uintptr_t b = (uintptr_t) *(part *const *) y;
	return a < b ? -1 : a > b;
}

void
part_lock_set(part **ps, size_t *n)
{
	size_t k = 0;
	qsort(ps, *n, sizeof(*ps), by_address);
	for (size_t i = 0; i < *n; i++)
		if (ps[i] != NULL && (k == 0 || ps[k - 1] != ps[i]))
			ps[k++] = ps[i];
	*n = k;
	for (size_t i = 0; i < k; i++)
		pthread_mutex_lock(&ps[i]->mu);
}

void
part_unlock_set(part **ps, size_t n)
{
	for (size_t i = n; i > 0; i--)
		pthread_mutex_unlock(&ps[i - 1]->mu);
}

part *
part_member_locked(part_map *m, part *p, const uint8_t *key, size_t kl)
{
	if (part_holds_key(p, key, kl))
		return p;
	if (!p->keyed)
		return NULL;
	for (size_t i = 0; i < m->n; i++) {
		part *q = m->p[i];
		if (q->table_id == p->table_id && q->keyed && q->lo == p->lo &&
		    part_holds_key(q, key, kl))
			return q;
	}
	return NULL;
}

void
part_bounds(const part *p, uint8_t *lo, size_t *lol, uint8_t *hi,
    size_t *hil)
{
	part_range_keys(p->table_id, p->lo, p->last, lo, hi, hil);
	*lol = KEYENC_PREFIX;
	if (!p->keyed)
		return;
	memcpy(lo + KEYENC_PREFIX, p->kfrom, p->kfrom_len);
	*lol = KEYENC_PREFIX + p->kfrom_len;
	if (p->kto_len > 0) {
		keyenc_range_prefix(p->table_id, p->lo, hi);
		memcpy(hi + KEYENC_PREFIX, p->kto, p->kto_len);
		*hil = KEYENC_PREFIX + p->kto_len;
	}
}

part *
part_map_find_locked(part_map *m, uint32_t table_id, uint32_t id)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->p[i]->table_id == table_id && m->p[i]->id == id)
			return m->p[i];
	return NULL;
}

kv_err
part_map_check_locked(part_map *m, uint32_t table_id, uint32_t id,
    uint64_t epoch, uint64_t h, part **out)
{
	part *p = part_map_find_locked(m, table_id, id);
	if (p == NULL || p->epoch != epoch || h < p->lo || h > p->last)
		return KV_STALE_ROUTE;
	*out = p;
	return KV_OK;
}

kv_err
part_map_check_key_locked(part_map *m, uint32_t table_id, uint32_t id,
    uint64_t epoch, const uint8_t *key, size_t key_len, part **out)
{
	if (key_len < KEYENC_PREFIX || table_id == 0 ||
	    keyenc_key_table(key) != table_id)
		return KV_PROTO;
	kv_err rv = part_map_check_locked(m, table_id, id, epoch,
	    keyenc_key_hash(key), out);
	if (rv != KV_OK)
		return rv;
	/* A keyed group: the member that holds the key serves it. */
	*out = part_member_locked(m, *out, key, key_len);
	return *out != NULL ? KV_OK : KV_STALE_ROUTE;
}

kv_err
part_map_add_locked(part_map *m, uint32_t table_id, uint32_t id,
    uint64_t lo, uint64_t last, uint64_t epoch, part **out)
{
	if (m->n == m->cap) {
		size_t cap = m->cap == 0 ? 16 : m->cap * 2;
		part **np = realloc(m->p, cap * sizeof(*np));
		if (np == NULL)
			return KV_ENOMEM;
		m->p = np;
		m->cap = cap;
	}
	part *p = calloc(1, sizeof(*p));
	if (p == NULL)
		return KV_ENOMEM;
	p->table_id = table_id;
	p->id = id;
	p->lo = lo;
	p->last = last;
	p->epoch = epoch;
	size_index_init(&p->sizes, &m->sizes);
	pthread_mutex_init(&p->mu, NULL);
	pthread_mutex_init(&p->cap_mu, NULL);
	m->p[m->n++] = p;
	*out = p;
	return KV_OK;
}

void
part_map_remove_locked(part_map *m, part *p)
{
	for (size_t i = 0; i < m->n; i++) {
		if (m->p[i] != p)
			continue;
		m->p[i] = m->p[--m->n];
		move_forget(p);
		free(p->local.from);
		size_index_fini(&p->sizes);
		pthread_mutex_destroy(&p->mu);
		pthread_mutex_destroy(&p->cap_mu);
		free(p);
		return;
	}
}

typedef struct load_ctx {
	part_map *m;
	kv_err rv;
} load_ctx;

static bool
load_one(void *arg, const uint8_t *k, size_t kl, const uint8_t *v, size_t vl)
{
	load_ctx *c = arg;
	part *p;
	if (kl != PART_META_KEY_LEN || (vl != PART_META_VAL_LEN &&
	    vl != PART_META_VAL_LEN_V2 && vl != PART_META_VAL_LEN_V1) ||
	    (vl == PART_META_VAL_LEN && (v[61] > PART_KEY_MAX ||
	    v[62] > PART_KEY_MAX))) {
		c->rv = KV_CORRUPT;
		return false;
	}
	c->rv = part_map_add_locked(c->m, get_be32(k + 5), get_be32(k + 9),
	    bytes_get_le64(v), bytes_get_le64(v + 8), bytes_get_le64(v + 16), &p);
	if (c->rv != KV_OK)
		return false;
	p->items = bytes_get_le64(v + 24);
	p->bytes = bytes_get_le64(v + 32);
	if (vl != PART_META_VAL_LEN_V1) {
		p->prov_rcu = bytes_get_le64(v + 40);
		p->prov_wcu = bytes_get_le64(v + 48);
		p->table_parts = bytes_get_le32(v + 56);
	}
	if (vl == PART_META_VAL_LEN) {
		p->keyed = v[60] != 0;
		p->kfrom_len = v[61];
		p->kto_len = v[62];
		memcpy(p->kfrom, v + 63, p->kfrom_len);
		memcpy(p->kto, v + 63 + PART_KEY_MAX, p->kto_len);
	}
	return true;
}

kv_err
part_map_load(part_map *m, store *st)
{
	static const uint8_t lo[5] = { 0, 0, 0, 0, 'P' };
	static const uint8_t hi[5] = { 0, 0, 0, 0, 'P' + 1 };
	load_ctx c = { .m = m, .rv = KV_OK };
	kv_err rv = store_scan(st, lo, sizeof(lo), hi, sizeof(hi), load_one,
	    &c);
	return rv != KV_OK ? rv : c.rv;
}

/* The clean-stop marker (part.h): present only between part_map_save
 * and the next part_map_recover. */
static const uint8_t clean_key[5] = { 0, 0, 0, 0, 'S' };
static const uint8_t clean_val[1] = { 1 };

void
part_range_keys(uint32_t table_id, uint64_t lo, uint64_t last,
    uint8_t klo[12], uint8_t khi[12], size_t *hil)
{
	keyenc_range_prefix(table_id, lo, klo);
	if (last == UINT64_MAX) {
		keyenc_table_prefix(table_id + 1, khi);
		*hil = 4;
	} else {
		keyenc_range_prefix(table_id, last + 1, khi);
		*hil = KEYENC_PREFIX;
	}
}

void
part_key_range(const part *p, uint8_t lo[12], uint8_t hi[12], size_t *hil)
{
	part_range_keys(p->table_id, p->lo, p->last, lo, hi, hil);
}

typedef struct count_ctx {
	uint64_t items, bytes;
	bool corrupt;
} count_ctx;

static bool
count_one(void *arg, const uint8_t *k, size_t kl, const uint8_t *v,
    size_t vl)
{
	count_ctx *c = arg;
	if (!keyenc_is_item(k, kl))
		return true; /* a local index's entry, a collection's size */
	if (vl < RECORD_HEADER) {
		c->corrupt = true;
		return false;
	}
	if (record_item_offset(v, vl) < vl) /* not an index tombstone */
		c->items++;
	c->bytes += record_size(v);
	return true;
}

kv_err
part_count_keys(store *st, const uint8_t *lo, size_t lol, const uint8_t *hi,
    size_t hil, uint64_t *items, uint64_t *bytes)
{
	count_ctx c = { 0 };
	kv_err rv = store_scan(st, lo, lol, hi, hil, count_one, &c);
	if (rv != KV_OK)
		return rv;
	if (c.corrupt)
		return KV_CORRUPT;
	*items = c.items;
	*bytes = c.bytes;
	return KV_OK;
}

kv_err
part_count_range(store *st, uint32_t table_id, uint64_t lo, uint64_t last,
    uint64_t *items, uint64_t *bytes)
{
	uint8_t klo[KEYENC_PREFIX], khi[KEYENC_PREFIX];
	size_t hil;
	part_range_keys(table_id, lo, last, klo, khi, &hil);
	return part_count_keys(st, klo, sizeof(klo), khi, hil, items, bytes);
}

kv_err
part_recount(part *p, store *st)
{
	uint8_t lo[PART_BOUND_MAX], hi[PART_BOUND_MAX];
	size_t lol, hil;
	part_bounds(p, lo, &lol, hi, &hil);
	return part_count_keys(st, lo, lol, hi, hil, &p->items, &p->bytes);
}

/*
 * Writes, in one durable batch, every partition's record with its live
 * counters and then either the clean-stop marker (mark) or its removal.
 */
static kv_err
write_records(part_map *m, store *st, bool mark)
{
	store_batch b;
	kv_err rv = KV_OK;
	uint8_t (*keys)[PART_META_KEY_LEN] = malloc((m->n + 1) *
	    PART_META_KEY_LEN);
	uint8_t (*vals)[PART_META_VAL_LEN] = malloc((m->n + 1) *
	    PART_META_VAL_LEN);

	store_batch_init(&b);
	if (keys == NULL || vals == NULL)
		rv = KV_ENOMEM;
	for (size_t i = 0; i < m->n && rv == KV_OK; i++) {
		const part *p = m->p[i];
		part_meta_key(p->table_id, p->id, keys[i]);
		part_meta_value(p, p->items, p->bytes, vals[i]);
		rv = store_batch_add(&b, STORE_PUT, keys[i], PART_META_KEY_LEN,
		    vals[i], PART_META_VAL_LEN);
	}
	if (rv == KV_OK)
		rv = mark ? store_batch_add(&b, STORE_PUT, clean_key,
		    sizeof(clean_key), clean_val, sizeof(clean_val)) :
		    store_batch_add(&b, STORE_DELETE, clean_key,
		    sizeof(clean_key), NULL, 0);
	if (rv == KV_OK)
		rv = store_write(st, &b);
	store_batch_fini(&b);
	free(keys);
	free(vals);
	return rv;
}

kv_err
part_map_recover(part_map *m, store *st, bool *recounted)
{
	uint8_t *v = NULL;
	size_t vl;
	bool clean = false;

	kv_err rv = part_map_load(m, st);
	if (rv == KV_OK)
		rv = store_get(st, clean_key, sizeof(clean_key), &v, &vl,
		    &clean);
	free(v);
	for (size_t i = 0; i < m->n && rv == KV_OK && !clean; i++)
		rv = part_recount(m->p[i], st);
	/* Before any request: from here a stop without part_map_save is
	 * unclean. The records are rewritten too, with what was counted. */
	if (rv == KV_OK)
		rv = write_records(m, st, false);
	if (rv == KV_OK)
		*recounted = !clean;
	return rv;
}

kv_err
part_map_save(part_map *m, store *st)
{
	return write_records(m, st, true);
}
