/*
 * store.h — the node's ordered key-value store behind a small operations
 * table, with a RocksDB engine (store_rocks.c) and an in-memory one
 * (store_mem.c) so that one test suite runs on both.
 *
 * Concurrency contract: every operation may be called from any thread at
 * any time; a batch is applied atomically (all of it or none of it, also
 * across a crash) and is visible to readers all at once. The store gives no
 * isolation between a read and a later write: callers that read, decide
 * and write hold their partition's lock (see part.h).
 *
 * Durability: store_write returns after the batch is in the write-ahead
 * log; it survives kill -9 of the process (and, when opened with sync,
 * loss of the machine). store_write_buffered may leave the batch's log
 * record in the process until the next store_flush (from any thread):
 * the batch is applied and visible at once, but survives kill -9 only
 * once a store_flush has returned after it. The request server writes
 * that way and flushes before any reply leaves the node (server.c), so
 * the requests of one read share one log write, and nothing a client
 * was told of, written or read, can be lost.
 */
#ifndef KV_STORE_H
#define KV_STORE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"

/*
 * A failing disk, on demand, for chaos experiments (kv-node starts
 * failing on SIGUSR1 and stops on SIGUSR2): while it is set, every write
 * and flush answers KV_IO without reaching the engine, as a disk that
 * refuses writes would, and reads go on. The request server then answers
 * errors and never acknowledges a write it could not make durable. Set
 * from a signal handler, so a lock-free atomic.
 */
extern atomic_bool store_disk_failing;

typedef struct store store;

typedef enum store_op_kind {
	STORE_PUT = 1,
	STORE_DELETE,
	STORE_DELETE_RANGE, /* [key, end) */
} store_op_kind;

typedef struct store_op {
	store_op_kind kind;
	const uint8_t *key;
	size_t key_len;
	const uint8_t *val; /* PUT: value; DELETE_RANGE: end key */
	size_t val_len;
} store_op;

/* A batch borrows every key and value until store_write returns. */
typedef struct store_batch {
	store_op *ops;
	size_t n, cap;
} store_batch;

/*
 * A scan callback gets each key and value in order; they are valid only
 * during the call. Returning false stops the scan.
 */
typedef bool (*store_scan_fn)(void *arg, const uint8_t *k, size_t kl,
    const uint8_t *v, size_t vl);

/* What a store holds in memory, in bytes (store_memory_of). */
typedef struct store_memory {
	uint64_t cache;          /* the block cache's use, with index and
	                          * filter blocks */
	uint64_t cache_capacity; /* its size */
	uint64_t memtables;      /* every memtable, flushing ones too */
	uint64_t table_readers;  /* table readers outside the cache */
} store_memory;

/*
 * A sorted load: a stream of pairs in strictly increasing key order that
 * no reader sees until store_load_finish applies them all at once,
 * durably, as one write made at that moment (above every write before
 * it). Nothing else may write those keys while it is open. A partition's
 * move copies its range so (node/adaptive/move.c): the RocksDB engine
 * writes the pairs into table files as they come and hands the files to
 * the store at the end, so the copy takes no log, memtable, flush or
 * compaction on the way (store_rocks.c); an engine without its own way
 * (store_mem.c) keeps the pairs and writes them in one batch.
 */
typedef struct store_load {
	struct store *s; /* an engine's load starts with this one */
} store_load;

typedef struct store_ops {
	kv_err (*get)(store *s, const uint8_t *k, size_t kl, uint8_t **v,
	    size_t *vl, bool *found);
	kv_err (*write)(store *s, const store_batch *b); /* buffered */
	kv_err (*flush)(store *s);
	kv_err (*scan)(store *s, const uint8_t *lo, size_t lol,
	    const uint8_t *hi, size_t hil, store_scan_fn fn, void *arg);
	kv_err (*scan_rev)(store *s, const uint8_t *lo, size_t lol,
	    const uint8_t *hi, size_t hil, store_scan_fn fn, void *arg);
	kv_err (*scan_snap)(store *s, const uint8_t *lo, size_t lol,
	    const uint8_t *hi, size_t hil, store_scan_fn fn, void *arg);
	void (*memory)(store *s, store_memory *m);
	void (*close)(store *s);
	/* A sorted load's steps (NULL: store.c's batch in memory). */
	kv_err (*load_open)(store *s, store_load **out);
	kv_err (*load_put)(store_load *l, const uint8_t *k, size_t kl,
	    const uint8_t *v, size_t vl);
	kv_err (*load_finish)(store_load *l);
	void (*load_abort)(store_load *l);
} store_ops;

/*
 * Write stamps: how a reader learns, without reading again, that nothing
 * wrote a key since it read it (TransactGetItems's second read, get.c).
 * Every key has a slot (its hash over STORE_STAMP_SLOTS). A write marks
 * the slot of each key it writes busy while its batch is applied, then
 * moves the slot's count on; range deletions and sorted loads, whose
 * keys are not listed, do the same to a slot shared by every key of the
 * range's domain, or to those of every domain. A key's stamp is its
 * slot's count plus its domain's shared one, which starts at the clock
 * when the store opens, so a stamp taken before a restart never matches
 * one after. A stamp that is unchanged, with neither slot busy, means no
 * write of the key began or ended in between; a write of another key of
 * the slot only makes the reader try again.
 *
 * The domains (store.c, stamp_domain): the tables' keys are one; the
 * node's own records (table id 0, core/keyenc.h) are shared out over
 * eight by their kind, the byte after the table id ('T' a transaction's,
 * 'O' an index outbox's; two kinds of one domain only move on each
 * other's stamps for nothing), and keys too short for a kind are the
 * last. A range within one kind of record (an outbox's records once
 * applied, a transaction's taken back) moves on only its domain's
 * count: an index outbox trimmed many times a second under indexed
 * writes would otherwise change the stamp of every item on the node and
 * cancel TransactGetItems of items nobody wrote as conflicts. A range
 * across domains moves all of them on. The node's records also hash
 * into the upper half of the slots, the tables' keys into the lower, so
 * that an outbox's writes never share a slot with an item.
 */
#define STORE_STAMP_SLOTS (1u << 16)
#define STORE_STAMP_DOMAINS 10 /* the tables', 8 of kinds, short keys' */

typedef struct store_stamps {
	_Atomic uint32_t busy[STORE_STAMP_SLOTS];
	_Atomic uint64_t count[STORE_STAMP_SLOTS];
	_Atomic uint32_t all_busy[STORE_STAMP_DOMAINS];
	_Atomic uint64_t all_count[STORE_STAMP_DOMAINS];
} store_stamps;

struct store {
	const store_ops *ops;
	store_stamps *stamps; /* store_base_init's */
};

/*
 * store_base_init sets up what every engine's store shares (its stamps);
 * store_base_fini frees it. KV_OK or KV_ENOMEM.
 */
kv_err store_base_init(store *s, const store_ops *ops);
void store_base_fini(store *s);

/*
 * store_stamp_take sets *stamp to key k's stamp; false while a write of
 * its slot (or a range write) is being applied. store_stamp_same: whether
 * k's stamp is still `stamp`, with no write of it under way.
 */
bool store_stamp_take(store *s, const uint8_t *k, size_t kl,
    uint64_t *stamp);
bool store_stamp_same(store *s, const uint8_t *k, size_t kl, uint64_t stamp);

/* The engine's write of b, with the stamps of its keys kept (store.c). */
kv_err store_apply(store *s, const store_batch *b);

/*
 * store_open_rocks opens (creating if needed) a RocksDB store in dir,
 * sized for a node's memory budget of memory_mb (0: the cluster file's
 * default, config.h's CONFIG_MEMORY_MB). A node's budget is shared so:
 * three eighths for the block cache (with index and filter blocks), an
 * eighth for the memtables (store_rocks.c), a quarter for the size index
 * (size_index.h; main.c sets it), and a quarter left for the rest of the
 * process (threads, connection buffers, the allocator's slack).
 * Returns KV_OK with an owned store in *out (free with store_close()), or
 * KV_IO with the reason in why[0..whylen).
 */
kv_err store_open_rocks(const char *dir, bool sync, uint32_t memory_mb,
    store **out, char *why, size_t whylen);

/* store_open_mem returns an empty in-memory store. KV_OK or KV_ENOMEM. */
kv_err store_open_mem(store **out);

/*
 * store_get looks up key k. On KV_OK with *found, *v holds owned bytes
 * (free with free()). Returns KV_OK, KV_IO or KV_ENOMEM.
 */
static inline kv_err
store_get(store *s, const uint8_t *k, size_t kl, uint8_t **v, size_t *vl,
    bool *found)
{
	return s->ops->get(s, k, kl, v, vl, found);
}

/*
 * store_write applies b atomically and makes it durable (see above).
 * Returns KV_OK, KV_IO or KV_ENOMEM; after KV_IO from the flush the batch
 * may be applied without being durable.
 */
static inline kv_err
store_write(store *s, const store_batch *b)
{
	if (atomic_load_explicit(&store_disk_failing, memory_order_relaxed))
		return KV_IO;
	kv_err rv = store_apply(s, b);
	return rv == KV_OK ? s->ops->flush(s) : rv;
}

/* store_write_buffered applies b atomically; durable after store_flush. */
static inline kv_err
store_write_buffered(store *s, const store_batch *b)
{
	if (atomic_load_explicit(&store_disk_failing, memory_order_relaxed))
		return KV_IO;
	return store_apply(s, b);
}

/*
 * store_flush makes every batch applied before it durable. Returns KV_OK
 * or KV_IO.
 */
static inline kv_err
store_flush(store *s)
{
	if (atomic_load_explicit(&store_disk_failing, memory_order_relaxed))
		return KV_IO;
	return s->ops->flush(s);
}

/*
 * store_scan calls fn for every key in [lo, hi) in byte order (hi NULL:
 * to the end). Returns KV_OK, KV_IO or KV_ENOMEM.
 */
static inline kv_err
store_scan(store *s, const uint8_t *lo, size_t lol, const uint8_t *hi,
    size_t hil, store_scan_fn fn, void *arg)
{
	return s->ops->scan(s, lo, lol, hi, hil, fn, arg);
}

/*
 * store_scan_rev is store_scan in descending byte order: every key in
 * [lo, hi) from the largest down (hi NULL: from the last key).
 */
static inline kv_err
store_scan_rev(store *s, const uint8_t *lo, size_t lol, const uint8_t *hi,
    size_t hil, store_scan_fn fn, void *arg)
{
	return s->ops->scan_rev(s, lo, lol, hi, hil, fn, arg);
}

/*
 * store_scan_snap is store_scan over the store as it was when the scan
 * began, whatever is written meanwhile, and fn may write to the store
 * itself (a point-in-time copy: node/backup.c).
 */
static inline kv_err
store_scan_snap(store *s, const uint8_t *lo, size_t lol, const uint8_t *hi,
    size_t hil, store_scan_fn fn, void *arg)
{
	return s->ops->scan_snap(s, lo, lol, hi, hil, fn, arg);
}

/*
 * store_key_after returns, malloc'd, the smallest key after k[0..kl)
 * (k with a zero byte added), its length in *len: where a scan stopped
 * at k goes on. NULL without memory.
 */
static inline uint8_t *
store_key_after(const uint8_t *k, size_t kl, size_t *len)
{
	uint8_t *after = malloc(kl + 1);
	if (after == NULL)
		return NULL;
	memcpy(after, k, kl);
	after[kl] = 0;
	*len = kl + 1;
	return after;
}

/* store_memory_of fills *m (zeros for a store that does not say). */
static inline void
store_memory_of(store *s, store_memory *m)
{
	memset(m, 0, sizeof(*m));
	if (s->ops->memory != NULL)
		s->ops->memory(s, m);
}

/* store_close closes the store; accepts NULL. */
static inline void
store_close(store *s)
{
	if (s != NULL)
		s->ops->close(s);
}

/*
 * store_load_open starts a sorted load into s (see store_load above):
 * KV_OK with *out, or KV_IO / KV_ENOMEM. store_load_put adds a pair (v
 * NULL: a delete of k), above every key given before; store_load_finish
 * applies them all and frees the load, whatever it returns (KV_IO: none
 * applied); store_load_abort frees it and applies none. A load left open
 * by a process that died applies nothing.
 */
kv_err store_load_open(store *s, store_load **out);
kv_err store_load_put(store_load *l, const uint8_t *k, size_t kl,
    const uint8_t *v, size_t vl);
kv_err store_load_finish(store_load *l);
void store_load_abort(store_load *l);

/* store_batch_init prepares an empty batch; cannot fail. */
void store_batch_init(store_batch *b);

/* store_batch_fini frees the batch's list; safe on a zeroed batch. */
void store_batch_fini(store_batch *b);

/* store_batch_add appends one operation. Returns KV_OK or KV_ENOMEM. */
kv_err store_batch_add(store_batch *b, store_op_kind kind, const uint8_t *k,
    size_t kl, const uint8_t *v, size_t vl);

#endif
