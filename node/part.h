/*
 * part.h — the partitions this node owns, with their epochs and counters.
 *
 * Locking rule: part_map.lock guards the list of partitions. Every data
 * request holds it shared for its whole duration (so a partition cannot be
 * dropped under it); ASSIGN and DROP_TABLE hold it exclusive. A partition's
 * own mutex serialises writes to it: a write reads the old item (or its
 * size from the partition's size index), writes the new one and updates
 * items/bytes and the size index while holding it, which makes each
 * single-item read-modify-write atomic. A partition's cap_mu guards its
 * two token buckets and capacity settings; it is held only for the few
 * instructions of an admission or a charge, never around I/O, and nothing
 * else is taken while holding it. Lock order: map, then partition mu, then
 * cap_mu.
 *
 * Durability: each partition's range and epoch are stored under a
 * metadata key (table id 0), written by ASSIGN. Its counters (items,
 * bytes) live in memory while the node runs, kept exact under the
 * partition's mutex by every item write, and reach the record only at a
 * clean stop (part_map_save) or an ASSIGN; writing them with every item
 * doubled the entries a write adds to RocksDB's memtable. So the records
 * are trusted only after a clean stop: part_map_save writes all records
 * and a clean-stop marker in one batch, and part_map_recover, at the next
 * start, removes the marker (durably, before any request) and takes the
 * counters from the records if it was there, or counts every
 * partition's items again from the store if it was not (kill -9, a
 * failed write, a store from before the marker). Death at any point
 * leaves either the marker with exact records, or no marker.
 *
 *   metadata key: 00 00 00 00 'P' table_id(4, BE) part_id(4, BE)
 *   value:        lo(8) last(8) epoch(8) items(8) bytes(8)
 *                 prov_rcu(8) prov_wcu(8) table_parts(4), little-endian
 *                 keyed(1) kfrom_len(1) kto_len(1) kfrom(64) kto(64)
 * prov_rcu, prov_wcu and table_parts are the table's provisioned
 * throughput and how many partitions share it (0 units: on demand), so
 * that a restarted node enforces the same ceilings before the catalog
 * node speaks to it again; the rest are a keyed partition's key bounds
 * (catalog.h). Values written before those fields existed (40 bytes: on
 * demand; 60: no key bounds) are read too.
 *
 * Token buckets are not durable: after a restart every bucket starts
 * empty, which forfeits burst credit (never grants any), as a new
 * partition does.
 */
#ifndef KV_PART_H
#define KV_PART_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bucket.h"
#include "catalog.h"
#include "err.h"
#include "heat.h"
#include "move.h"
#include "size_index.h"
#include "store.h"

#define PART_META_KEY_LEN 13
#define PART_META_VAL_LEN (63 + 2 * PART_KEY_MAX)
#define PART_META_VAL_LEN_V2 60
#define PART_META_VAL_LEN_V1 40
/* The longest storage key that bounds a partition: prefix and bound. */
#define PART_BOUND_MAX (12 + PART_KEY_MAX)

#define PART_LOCAL_MAX 5 /* local indexes of a table (DynamoDB's limit) */

/*
 * A partition's count of its local index entries (node/stats.c): the
 * last finished count, and the one under way, which a DescribeTable
 * takes on for a while and leaves at a key for the next to go on from.
 */
typedef struct local_count {
	uint64_t items[PART_LOCAL_MAX], bytes[PART_LOCAL_MAX]; /* last */
	int64_t at_us;   /* when the last ended (monotonic; 0: none yet) */
	int64_t took_us; /* the time its scans took */
	uint64_t run_items[PART_LOCAL_MAX], run_bytes[PART_LOCAL_MAX];
	int64_t run_us;  /* the scans' time so far */
	uint8_t *from;   /* the run goes on after this key; NULL: no run */
	size_t from_len;
	bool busy;       /* a request is scanning (without the mutex) */
	uint64_t epoch;  /* the partition's epoch when the last count or
	                  * the run began: a new range counts anew */
} local_count;

typedef struct part {
	uint32_t table_id;
	uint32_t id;
	uint64_t lo, last;
	uint64_t epoch;
	/* Keyed: part of hash lo == last (catalog.h's partition). */
	bool keyed;
	uint8_t kfrom_len, kto_len;
	uint8_t kfrom[PART_KEY_MAX], kto[PART_KEY_MAX];
	uint64_t items; /* guarded by mu */
	uint64_t bytes; /* DynamoDB item sizes, summed; guarded by mu */
	size_index sizes; /* guarded by mu (size_index.h) */
	pthread_mutex_t mu;
	/* Capacity, guarded by cap_mu (set by ASSIGN; see throttle.h). */
	pthread_mutex_t cap_mu;
	bucket rd, wr;
	uint64_t prov_rcu, prov_wcu; /* the table's; 0: on demand */
	uint32_t table_parts;        /* partitions sharing them */
	bool rd_prov_binds, wr_prov_binds; /* share below the ceiling */
	int64_t borrow_until_ns; /* rates above the share until then; 0: none */
	int64_t rd_lent, wr_lent; /* the rates a lend asks for (micro-units) */
	heat heat; /* guarded by cap_mu (heat.h) */
	/* A move of this partition away (move.h), guarded by mu. */
	uint64_t move_id; /* 0: none */
	key_set dirty;    /* keys written since the move began */
	key_set inflight; /* keys of the last batch sent, until acked */
	uint64_t dirty_seq; /* that batch's number */
	bool dirty_lost;  /* the set ran out of memory: the move fails */
	local_count local; /* guarded by mu (node/stats.c) */
} part;

typedef struct part_map {
	pthread_rwlock_t lock;
	part **p;
	size_t n, cap;
	/* All partitions' size_index tables (size_index.h); the limit is
	 * set once, before any request (main.c: the memory budget). */
	size_budget sizes;
	/* The newest catalog version each table's ASSIGN came from
	 * (assign.c; guarded by lock, taken exclusive). */
	struct assign_seen {
		uint32_t table_id;
		uint64_t version;
	} *seen;
	size_t n_seen;
} part_map;

/* part_map_init prepares an empty map; cannot fail. */
void part_map_init(part_map *m);

/* part_map_fini frees every partition; safe on a zeroed map. */
void part_map_fini(part_map *m);

/*
 * part_map_load adds every partition recorded in st. Called once at start,
 * before any request. Returns KV_OK, KV_IO, KV_CORRUPT or KV_ENOMEM.
 */
kv_err part_map_load(part_map *m, store *st);

/* part_map_find_locked returns the partition or NULL. Needs m->lock. */
part *part_map_find_locked(part_map *m, uint32_t table_id, uint32_t id);

/*
 * part_map_check_locked returns in *out the partition (table_id, id) if this
 * node owns it at exactly epoch and it holds hash h; otherwise
 * KV_STALE_ROUTE. Needs m->lock (shared is enough).
 */
kv_err part_map_check_locked(part_map *m, uint32_t table_id, uint32_t id,
    uint64_t epoch, uint64_t h, part **out);

/*
 * part_map_check_key_locked is part_map_check_locked for a storage key: it
 * also refuses (KV_PROTO) a key shorter than a key prefix or whose table id
 * is not table_id, so no request can touch another table's keys or the
 * node's metadata (table id 0).
 */
kv_err part_map_check_key_locked(part_map *m, uint32_t table_id,
    uint32_t id, uint64_t epoch, const uint8_t *key, size_t key_len,
    part **out);

/*
 * part_map_add_locked inserts a new partition with zero counters and
 * returns it in *out. Its buckets are unset (rate 0: every request would
 * be throttled) until the caller gives it its ceilings with
 * throttle_configure, as ASSIGN and the node's start do. Needs m->lock
 * exclusive. KV_OK or KV_ENOMEM.
 */
kv_err part_map_add_locked(part_map *m, uint32_t table_id, uint32_t id,
    uint64_t lo, uint64_t last, uint64_t epoch, part **out);

/* part_map_remove_locked frees partition p. Needs m->lock exclusive. */
void part_map_remove_locked(part_map *m, part *p);

/*
 * part_map_recover is part_map_load at a node's start, with the counters
 * made right as the header comment says; *recounted tells whether the
 * items were counted again. Returns KV_OK, KV_IO, KV_CORRUPT or
 * KV_ENOMEM; on failure the node must not serve.
 */
kv_err part_map_recover(part_map *m, store *st, bool *recounted);

/*
 * part_map_save writes every partition's record with its live counters,
 * and the clean-stop marker, in one durable batch. Called at a clean
 * stop, once no request can run (after server_close). KV_OK, KV_IO or
 * KV_ENOMEM; after a failure the next start counts again.
 */
kv_err part_map_save(part_map *m, store *st);

/*
 * part_recount sets p's counters from the items stored in its range.
 * Needs p->mu or no concurrent writer. KV_OK, KV_IO or KV_CORRUPT (a
 * record shorter than its header).
 */
kv_err part_recount(part *p, store *st);

/*
 * part_key_range writes the storage keys that bound p's items,
 * [lo, hi): lo is 12 bytes, hi 12 or (for the last partition of the
 * hash space) 4, in *hil.
 */
void part_key_range(const part *p, uint8_t lo[12], uint8_t hi[12],
    size_t *hil);

/*
 * part_bounds writes the storage keys that bound p's items, [lo, hi),
 * with their lengths (a keyed partition's bounds are longer than
 * part_key_range's). Buffers of PART_BOUND_MAX bytes.
 */
void part_bounds(const part *p, uint8_t *lo, size_t *lol, uint8_t *hi,
    size_t *hil);

/*
 * part_holds_key: whether storage key key[0..kl) (kl >= 12) lies in p:
 * its hash in [lo, last], and within the key bounds of a keyed one.
 */
bool part_holds_key(const part *p, const uint8_t *key, size_t kl);

/*
 * part_lock_set locks the mutexes of ps[0..*n) in address order (so that
 * two threads locking sets never wait on each other), once each: ps is
 * sorted, its duplicates and NULLs dropped, *n the partitions left.
 * part_unlock_set unlocks what part_lock_set locked.
 */
void part_lock_set(part **ps, size_t *n);
void part_unlock_set(part **ps, size_t n);

/*
 * part_member_locked returns the partition of p's keyed group (p itself
 * when it is not keyed) that holds key, or NULL. Needs m->lock.
 */
part *part_member_locked(part_map *m, part *p, const uint8_t *key,
    size_t kl);

/* part_set_keys copies a catalog partition's key bounds into p. */
void part_set_keys(part *p, const partition *tp);

/* part_range_keys: part_key_range for hashes [lo, last] of table_id. */
void part_range_keys(uint32_t table_id, uint64_t lo, uint64_t last,
    uint8_t klo[12], uint8_t khi[12], size_t *hil);

/*
 * part_count_range counts the items and bytes stored in hashes
 * [lo, last] of table_id. KV_OK, KV_IO or KV_CORRUPT.
 */
kv_err part_count_range(store *st, uint32_t table_id, uint64_t lo,
    uint64_t last, uint64_t *items, uint64_t *bytes);

/* part_count_keys counts the items and bytes stored in [lo, hi). */
kv_err part_count_keys(store *st, const uint8_t *lo, size_t lol,
    const uint8_t *hi, size_t hil, uint64_t *items, uint64_t *bytes);

/* part_meta_key writes p's metadata key. */
void part_meta_key(uint32_t table_id, uint32_t id,
    uint8_t key[PART_META_KEY_LEN]);

/*
 * part_meta_value writes p's metadata value with the given counters (the
 * values it will have once the batch is written). Needs p->mu or the map
 * lock exclusive.
 */
void part_meta_value(const part *p, uint64_t items, uint64_t bytes,
    uint8_t val[PART_META_VAL_LEN]);

#endif
