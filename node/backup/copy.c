/*
 * copy.c — the owner's side of backups (backup.h): copying partitions
 * into a backup, filling a restored table's partitions from one, and
 * dropping a backup's copies.
 *
 * Each copy reads one store snapshot and writes what it read in batches
 * of about a megabyte, made durable before the answer; a copy cut short
 * by a crash is removed by the next attempt, which starts with a range
 * deletion of its destination.
 */
#include "backup.h"

#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "index.h"
#include "keyenc.h"
#include "node.h"
#include "part.h"
#include "store.h"

#define COPY_BATCH_BYTES (1u << 20)

/* The first key of backup id's copies: {0,0,0,0,'B'} and the id. */
static void
backup_prefix(uint64_t id, uint8_t out[BACKUP_KEY_PREFIX])
{
	memset(out, 0, 4);
	out[4] = 'B';
	bytes_put_be64(out + 5, id);
}

/*
 * The backup key of storage bound k[0..kl) (kl >= 4): the prefix and k
 * without its table id. A 4-byte bound is the end of its table (part.h:
 * the last partition's hi), which becomes the end of the backup.
 */
static size_t
backup_bound(uint64_t id, const uint8_t *k, size_t kl, uint8_t *out)
{
	if (kl <= 4) {
		backup_prefix(id + 1, out);
		return BACKUP_KEY_PREFIX;
	}
	backup_prefix(id, out);
	memcpy(out + BACKUP_KEY_PREFIX, k + 4, kl - 4);
	return BACKUP_KEY_PREFIX + kl - 4;
}

/* A copy in progress: the keys read are rewritten and written in batches. */
typedef struct copier {
	node *n;
	store_batch b;
	arena a;                 /* the batch's keys and values */
	size_t pending;          /* bytes in b */
	const uint8_t *prefix;   /* the destination's prefix */
	size_t prefix_len;
	size_t strip;            /* bytes of the source key replaced */
	bool from_table;         /* the source keys are storage keys */
	bool no_local;           /* leave local index entries out */
	uint64_t items, bytes;   /* items copied, their sizes */
	kv_err rv;
} copier;

static void
copier_init(copier *c, node *n)
{
	memset(c, 0, sizeof(*c));
	c->n = n;
	store_batch_init(&c->b);
	arena_init(&c->a);
}

static void
copier_fini(copier *c)
{
	store_batch_fini(&c->b);
	arena_fini(&c->a);
}

/* Writes the batch (buffered: durable at copier_flush). */
static kv_err
copier_write(copier *c)
{
	if (c->b.n > 0) {
		kv_err rv = store_write_buffered(c->n->st, &c->b);
		store_batch_fini(&c->b);
		store_batch_init(&c->b);
		arena_fini(&c->a);
		arena_init(&c->a);
		c->pending = 0;
		return rv;
	}
	return KV_OK;
}

static kv_err
copier_flush(copier *c)
{
	kv_err rv = copier_write(c);
	return rv == KV_OK ? store_flush(c->n->st) : rv;
}

static bool
copy_one(void *arg, const uint8_t *k, size_t kl, const uint8_t *v, size_t vl)
{
	copier *c = arg;
	if (kl < c->strip + KEYENC_PREFIX - 4) {
		c->rv = KV_CORRUPT;
		return false;
	}
	size_t nl = c->prefix_len + kl - c->strip;
	uint8_t *nk = arena_alloc(&c->a, nl);
	uint8_t *nv = arena_alloc(&c->a, vl > 0 ? vl : 1);
	if (nk == NULL || nv == NULL) {
		c->rv = KV_ENOMEM;
		return false;
	}
	memcpy(nk, c->prefix, c->prefix_len);
	memcpy(nk + c->prefix_len, k + c->strip, kl - c->strip);
	/* Past the table id and hash: an item's key, or (0xFE, 0xFF) a
	 * collection's size or a local index's entry (core/keyenc.h). */
	bool item = c->from_table ? keyenc_is_item(k, kl) :
	    keyenc_is_item(nk, nl);
	if (!item && c->no_local)
		return true;
	if (vl > 0)
		memcpy(nv, v, vl);
	if (item && vl >= RECORD_HEADER) {
		/* A global index's tombstone is no item (index.h). */
		if (record_item_offset(v, vl) < vl)
			c->items++;
		c->bytes += record_size(v);
	}
	if ((c->rv = store_batch_add(&c->b, STORE_PUT, nk, nl, nv, vl)) !=
	    KV_OK)
		return false;
	c->pending += nl + vl;
	if (c->pending >= COPY_BATCH_BYTES && (c->rv = copier_write(c)) !=
	    KV_OK)
		return false;
	return true;
}

/* Deletes [lo, hi) durably. */
static kv_err
clear(node *n, const uint8_t *lo, size_t lol, const uint8_t *hi, size_t hil)
{
	store_batch b;
	store_batch_init(&b);
	kv_err rv = store_batch_add(&b, STORE_DELETE_RANGE, lo, lol, hi, hil);
	if (rv == KV_OK)
		rv = store_write(n->st, &b);
	store_batch_fini(&b);
	return rv;
}

/*
 * This node's partition of table_id that is catalog partition tp, with
 * the same range: its bounds in lo/hi and its epoch. KV_STALE_ROUTE when
 * it has none such (moved or split since the catalog said).
 */
static kv_err
owned_bounds(node *n, uint32_t table_id, const partition *tp, uint8_t *lo,
    size_t *lol, uint8_t *hi, size_t *hil, uint64_t *epoch)
{
	kv_err rv = KV_STALE_ROUTE;
	pthread_rwlock_rdlock(&n->parts.lock);
	part *p = part_map_find_locked(&n->parts, table_id, tp->id);
	if (p != NULL && p->lo == tp->lo && p->last == tp->last &&
	    p->keyed == tp->keyed && p->kfrom_len == tp->kfrom_len &&
	    p->kto_len == tp->kto_len &&
	    memcmp(p->kfrom, tp->kfrom, tp->kfrom_len) == 0 &&
	    memcmp(p->kto, tp->kto, tp->kto_len) == 0) {
		part_bounds(p, lo, lol, hi, hil);
		*epoch = p->epoch;
		rv = KV_OK;
	}
	pthread_rwlock_unlock(&n->parts.lock);
	return rv;
}

/*
 * Copies partition tp of table t into backup id; its items and bytes in
 * *st. The partition's epoch is the same before and after the copy, or
 * the copy is refused: a move fences the source by raising it, so an
 * unchanged epoch says the snapshot held the whole partition.
 */
static kv_err
take_one(node *n, const table *t, const partition *tp, uint64_t id,
    part_stats *st)
{
	uint8_t lo[PART_BOUND_MAX], hi[PART_BOUND_MAX];
	uint8_t blo[BACKUP_KEY_PREFIX + PART_BOUND_MAX];
	uint8_t bhi[BACKUP_KEY_PREFIX + PART_BOUND_MAX];
	uint8_t prefix[BACKUP_KEY_PREFIX];
	size_t lol, hil;
	uint64_t epoch, after;
	kv_err rv = owned_bounds(n, t->id, tp, lo, &lol, hi, &hil, &epoch);
	if (rv != KV_OK)
		return rv;
	size_t blol = backup_bound(id, lo, lol, blo);
	size_t bhil = backup_bound(id, hi, hil, bhi);
	if ((rv = clear(n, blo, blol, bhi, bhil)) != KV_OK)
		return rv;
	copier c;
	copier_init(&c, n);
	backup_prefix(id, prefix);
	c.prefix = prefix;
	c.prefix_len = sizeof(prefix);
	c.strip = 4;
	c.from_table = true;
	rv = store_scan_snap(n->st, lo, lol, hi, hil, copy_one, &c);
	if (rv == KV_OK)
		rv = c.rv;
	if (rv == KV_OK)
		rv = copier_flush(&c);
	if (rv == KV_OK && (owned_bounds(n, t->id, tp, lo, &lol, hi, &hil,
	    &after) != KV_OK || after != epoch))
		rv = KV_STALE_ROUTE;
	*st = (part_stats) { .table_id = t->id, .part = tp->id,
	    .epoch = epoch, .items = c.items, .bytes = c.bytes };
	copier_fini(&c);
	return rv;
}

/* Fills partition tp of the new table t from backup id, then counts it. */
static kv_err
restore_one(node *n, const table *t, const partition *tp, uint64_t id,
    bool no_local)
{
	uint8_t lo[PART_BOUND_MAX], hi[PART_BOUND_MAX];
	uint8_t blo[BACKUP_KEY_PREFIX + PART_BOUND_MAX];
	uint8_t bhi[BACKUP_KEY_PREFIX + PART_BOUND_MAX];
	uint8_t prefix[4];
	size_t lol, hil;
	uint64_t epoch;
	kv_err rv = owned_bounds(n, t->id, tp, lo, &lol, hi, &hil, &epoch);
	if (rv != KV_OK)
		return rv;
	if ((rv = clear(n, lo, lol, hi, hil)) != KV_OK)
		return rv;
	size_t blol = backup_bound(id, lo, lol, blo);
	size_t bhil = backup_bound(id, hi, hil, bhi);
	copier c;
	copier_init(&c, n);
	bytes_put_be32(prefix, t->id);
	c.prefix = prefix;
	c.prefix_len = sizeof(prefix);
	c.strip = BACKUP_KEY_PREFIX;
	c.no_local = no_local;
	rv = store_scan_snap(n->st, blo, blol, bhi, bhil, copy_one, &c);
	if (rv == KV_OK)
		rv = c.rv;
	if (rv == KV_OK)
		rv = copier_flush(&c);
	copier_fini(&c);
	if (rv != KV_OK)
		return rv;
	/* The table is CREATING: nothing else writes the partition. */
	pthread_rwlock_rdlock(&n->parts.lock);
	part *p = part_map_find_locked(&n->parts, t->id, tp->id);
	if (p != NULL) {
		pthread_mutex_lock(&p->mu);
		p->items = c.items;
		p->bytes = c.bytes;
		pthread_mutex_unlock(&p->mu);
	}
	pthread_rwlock_unlock(&n->parts.lock);
	return p != NULL ? KV_OK : KV_STALE_ROUTE;
}

void
backup_serve(node *n, const rpc_request *req, arena *a, rpc_response *resp)
{
	const table *t = req->table;
	uint8_t lo[BACKUP_KEY_PREFIX], hi[BACKUP_KEY_PREFIX];

	if (req->move_id == 0 || req->move_id == UINT64_MAX ||
	    (req->op != RPC_BACKUP_DROP && t == NULL)) {
		resp->code = KV_PROTO;
		return;
	}
	if (req->op == RPC_BACKUP_DROP) {
		backup_prefix(req->move_id, lo);
		backup_prefix(req->move_id + 1, hi);
		resp->code = clear(n, lo, sizeof(lo), hi, sizeof(hi));
		return;
	}
	size_t mine = 0;
	for (size_t i = 0; i < t->n_parts; i++)
		mine += t->parts[i].node == n->index;
	part_stats *st = arena_alloc(a, (mine + 1) * sizeof(*st));
	if (st == NULL) {
		resp->code = KV_ENOMEM;
		return;
	}
	resp->code = KV_OK;
	for (size_t i = 0; i < t->n_parts && resp->code == KV_OK; i++) {
		const partition *tp = &t->parts[i];
		if (tp->node != n->index)
			continue;
		if (req->op == RPC_BACKUP_TAKE)
			resp->code = take_one(n, t, tp, req->move_id,
			    &st[resp->n_stats++]);
		else if (req->op == RPC_BACKUP_RESTORE)
			resp->code = restore_one(n, t, tp, req->move_id,
			    req->limit == RPC_BACKUP_NO_LOCAL);
		else
			resp->code = KV_PROTO;
	}
	if (resp->code == KV_OK && req->op == RPC_BACKUP_TAKE)
		resp->stats = st;
	else
		resp->n_stats = 0;
}
