/*
 * index.h — global secondary indexes on the nodes: this node's view of
 * the catalog, the outbox a base write fills, the replicator that ships
 * it, and the apply verb of the index partitions' owners.
 *
 * A base write that changes what an index holds for its item puts, in
 * the same store batch as the item, one outbox record per index entry to
 * change: "put this entry" (the projected item) or "delete this entry",
 * each with the entry's storage key (keyenc_index_key) and a version.
 * The process dies before the batch reaches the WAL: neither the item
 * nor the records exist. After: both do, and the replicator sends the
 * records when the node starts again.
 *
 * The version of a record is (the base partition's epoch, the record's
 * outbox number). Outbox numbers are a node's clock in microseconds,
 * made to rise by one at least on each record, so they order the writes
 * of one node; the epoch rises whenever a partition changes owner or
 * range, so a later write of an item on another owner has a higher
 * version even when its clock is behind.
 *
 * The replicator (one thread per node) reads the outbox in order and
 * sends each index node its records in one RPC_INDEX_APPLY (over the
 * frames, rpc.h, as a router calls a node), waits for the answer, and
 * deletes the records that were applied. A record whose partition moved
 * or split is sent again once the view has the change. While records
 * keep coming, a round that sends begins at most every REPL_SPACING_MS.
 *
 * Applying is idempotent and ordered per entry: an entry's record holds
 * the version that wrote it, and a record applies only when its version
 * is higher; a delete leaves a tombstone with its version, so that an
 * older put arriving later (from the old owner's outbox after a move)
 * does not bring the entry back. Tombstones are invisible to reads.
 *
 * Locking: the view is a catalog behind view_lock (a rwlock). A write to
 * a table with global indexes holds it shared from before the map's lock
 * until the write is done, so the indexes it writes records for are the
 * ones of one catalog; installing a new view takes it exclusive and
 * takes no other lock. The replicator takes it shared to route.
 */
#ifndef KV_INDEX_H
#define KV_INDEX_H

#include <stdio.h>

#include "catalog.h"
#include "node.h"
#include "store.h"

/*
 * An entry record: RECORD_HEADER bytes of size with this bit set, then
 * the version (two u64), then the item. A tombstone has size 0 (a put's
 * item has its keys, so never size 0) and, in place of the item, the
 * number of the node's outbox clock when it was written (u64; absent in
 * the tombstones of earlier builds: 0), which says whether it is older
 * than a collection's fence (index_collect_serve).
 */
#define RECORD_VERSIONED 0x80000000u
#define RECORD_VERSION_LEN 16
#define RECORD_STAMP_LEN 8
#define RECORD_TOMBSTONE_LEN (RECORD_HEADER + RECORD_VERSION_LEN + \
    RECORD_STAMP_LEN)

/* index_open sets up the view and starts the replicator. KV_OK or
 * KV_ENOMEM. */
kv_err index_open(node *n);

/* index_close stops the replicator and frees the view; safe after a
 * failed or missing open. */
void index_close(node *n);

/* index_view_install makes c (owned) the node's view of the catalog. */
void index_view_install(node *n, catalog *c);

/*
 * index_view_table sets *out to the table `table_id` of the view,
 * read-locked, when it has global indexes to keep or local ones; to NULL (and nothing locked)
 * otherwise. Call index_view_unlock after a non-NULL answer. Returns
 * KV_STALE_ROUTE (nothing locked) while the node has no view yet, or one
 * older than the table's last assignment here: a write must not go
 * ahead without knowing its indexes (the router retries).
 */
kv_err index_view_table(node *n, uint32_t table_id, const table **out);
void index_view_unlock(node *n);

/*
 * index_view_lock read-locks the view and returns it (NULL: none yet;
 * without indexes at all, NULL and nothing locked: n->gsi is NULL).
 * Call index_view_unlock after a lock, before the map's lock as
 * index_view_table's callers do.
 */
const catalog *index_view_lock(node *n);

/* index_table_indexed says whether t has an index its writes maintain
 * (a global one kept, or a local one). */
bool index_table_indexed(const table *t);

/*
 * index_view_known, with the view read-locked (index_view_lock) and the
 * map's lock not held, is index_view_table's answer without the locking:
 * false when the view cannot tell table_id's indexes yet; else true, with
 * *out the table when it has indexes to keep (NULL otherwise).
 */
bool index_view_known(node *n, uint32_t table_id, const table **out);

/* index_has_local reports whether the view's table table_id has local
 * indexes (which bind each item collection to one partition). */
bool index_has_local(node *n, uint32_t table_id);

/*
 * index_check reports, for a base item about to be written to table t,
 * whether its index key attributes are of the index's key types, not
 * empty and within a key's size (2048 bytes for a partition key's
 * attribute, 1024 for a sort key's); false with DynamoDB's message in
 * msg (KV_EINVAL).
 */
bool index_check(const table *t, const value *item, char *msg,
    size_t msglen);

/* What a write costs one global index: half write units (core/capacity.h). */
typedef struct index_units {
	uint32_t index_id; /* the index's table */
	uint64_t half;
} index_units;


/*
 * index_outbox adds to b the outbox records for a write of t's item from
 * old (NULL: none) to cur (NULL: deleted) on a partition at epoch, in a
 * (keys and values live there). When u is not NULL, u[0..*n_u) gets what
 * the write costs each index it changes (u has room for t->n_indexes):
 * an entry added or removed costs its projected size, one changed in
 * place the larger of its two sizes, and a key that changes both a
 * delete and a put, as DynamoDB counts. With b NULL only u is worked out:
 * no record is made or numbered (a transaction's prepare asks which
 * indexes its write would change). KV_OK or KV_ENOMEM.
 */
kv_err index_outbox(node *n, const table *t, uint64_t epoch,
    const value *old, const value *cur, arena *a, store_batch *b,
    index_units *u, size_t *n_u);

/*
 * index_local_write adds to b the changes of t's local index entries for
 * a write of its item from old (NULL: none) to cur (NULL: deleted), and
 * the new size of the item's collection (local.c), which it gives in
 * *coll. u[*n_u..] gets what the write costs each local index, with ids
 * RPC_LOCAL_INDEX_ID(k). The partition's mutex is held. KV_COLL_FULL (b
 * unchanged by the size) when the write would grow the collection past
 * the cluster's item-collection limit; KV_OK, KV_ENOMEM or KV_IO.
 */
kv_err index_local_write(node *n, const table *t, const value *old,
    const value *cur, arena *a, store_batch *b, index_units *u, size_t *n_u,
    uint64_t *coll);


/*
 * index_units_answer puts u[0..n) in resp's blobs (RPC_INDEX_UNITS_LEN bytes
 * each: the index's table id, then the half units, little-endian), for
 * the router's ConsumedCapacity. KV_OK or KV_ENOMEM.
 */
kv_err index_units_answer(arena *a, const index_units *u, size_t n,
    rpc_response *resp);

/*
 * index_record_encode returns, in a, an outbox record's value (index/index_int.h
 * gives the layout): a put of item under entry key key[0..kl) of index
 * table index_id (item NULL: a delete), at version (epoch, num); its
 * length in *len. NULL without memory. Sent to an index node, a record
 * is preceded by INDEX_ROUTE_LEN bytes: the partition id (u32) and
 * epoch (u64) it was routed to, little-endian. For the writes' records
 * and the unit tests.
 */
uint8_t *index_record_encode(arena *a, uint32_t index_id, uint64_t epoch,
    uint64_t num, const uint8_t *key, size_t kl, const value *item,
    size_t *len);
#define INDEX_ROUTE_LEN 12

/*
 * index_order_lock and index_order_unlock bracket the giving of outbox
 * numbers and the store write that holds those records (a write's, a
 * fill chunk's), so that records reach the store in the order of their
 * numbers: the replicator reads each index's records from a cursor, and
 * a record numbered below one it has read, written after it, would be
 * behind the cursor and never sent. Taken after the partition mutex.
 */
void index_order_lock(node *n);
void index_order_unlock(node *n);

/* index_kick tells the replicator that records were written. */
void index_kick(node *n);

/*
 * index_count adds sign (+1 written, -1 deleted) to the waiting count of
 * the index of each outbox record in b (the other operations are left
 * alone), for the lag gauges; call it once b is in the store. Returns
 * whether a record of b may go now, to kick the replicator for: false when
 * each of their indexes waits (paused, or held by the delay) and the
 * replicator will look at it again by itself.
 */
bool index_count(node *n, const store_batch *b, int sign);

/*
 * index_pressed reports whether one of the outbox records in b is for an
 * index whose owners refused records for want of write capacity in the
 * last second (the replicator keeps trying): the write that would add
 * it must be throttled instead (DynamoDB throttles a table's writes when
 * a GSI cannot take them). *index_id and *bits (RPC_THROTTLE_*) say
 * which and why.
 */
bool index_pressed(node *n, const store_batch *b, uint32_t *index_id,
    uint32_t *bits);

/* index_units_pressed: as index_pressed, for a write that would change
 * the indexes of u[0..n_u) (index_outbox's units). index_table_pressed:
 * whether any global index of t is held back now (a cheap first look,
 * before working out which indexes a write changes). */
bool index_units_pressed(node *n, const index_units *u, size_t n_u,
    uint32_t *index_id, uint32_t *bits);
bool index_table_pressed(node *n, const table *t);

/* index_name_of_locked returns the name of the index whose table is
 * index_id, in a, or NULL; the caller holds the view (index_view_table). */
const char *index_name_of_locked(node *n, uint32_t index_id, arena *a);

/* RPC_INDEX_APPLY: apply a batch of outbox records (subs). */
void index_apply_serve(node *n, const rpc_request *req, arena *a,
    rpc_response *resp);

/*
 * record_item_offset returns where the item of a stored record starts
 * (after the header, and the version of an entry); vl when none (a
 * tombstone). vl >= RECORD_HEADER.
 */
static inline size_t
record_item_offset(const uint8_t *v, size_t vl)
{
	if ((v[3] & 0x80) == 0)
		return RECORD_HEADER;
	if (vl < RECORD_HEADER + RECORD_VERSION_LEN ||
	    (v[0] | v[1] | v[2] | (v[3] & 0x7f)) == 0)
		return vl; /* a tombstone: size 0 */
	return RECORD_HEADER + RECORD_VERSION_LEN;
}

/*
 * RPC_INDEX_BACKFILL (req->table_id the base table, req->part the index
 * table): starts filling the index from every partition of the base
 * table this node owns and has not filled yet, on a thread of its own,
 * and answers at once: resp->found when every one of them is filled.
 * KV_BUSY while the view does not have the index yet (a write made
 * before it would have no record, and the fill might miss it).
 *
 * A partition is filled in chunks of items, each under the partition's
 * mutex, so that a chunk's records and any write to its items are
 * ordered: a write after the chunk has a later version. Every item gets
 * a put record, as from a write of the item. A partition that changes
 * epoch (moved or split) while being filled is not counted as filled at
 * its new epoch: it is filled again when asked. The process dies during
 * a fill: the records written so far are kept and sent; the catalog
 * node asks again and the fill starts over (records apply idempotently).
 */
void index_backfill_serve(node *n, const rpc_request *req, arena *a,
    rpc_response *resp);

/*
 * Collecting tombstones. A tombstone keeps an older put from bringing its
 * entry back; once no older record of its entry can arrive any more, it
 * can go. The catalog node's collector (index_collector_start) finds that
 * moment in rounds over every node, with RPC_INDEX_COLLECT's steps
 * (rpc_request.limit):
 *
 *   FENCE  each node gives a fence F: every tombstone written here
 *          before the answer has a stamp below F, every later one not;
 *   MARK   then each node gives M, the last outbox number it has given;
 *   LOW    (ack = M) the indexes with a record numbered M or below still
 *          in this node's outbox; asked until none has, on every node;
 *   SWEEP  (ack = F, move_id = the node's boot, item = the indexes still
 *          waiting, u32 each) delete this node's tombstones of the other
 *          indexes stamped below F, a budget of time per request; asked
 *          until it answers found (done).
 *
 * Why it is safe: a put older than a tombstone was written to some
 * outbox before the write that made the tombstone's delete, so before
 * the fence, so before MARK: once every outbox has sent everything up to
 * its M, no such put is left to come. The collector waits a grace
 * period more (COLLECT_GRACE_MS) for an apply request sent earlier and
 * still on its way. Every answer carries the node's boot: a node that
 * restarted during a round (its stamps start again) ends the round. A
 * node that cannot be reached ends it too, and so does a drained one:
 * its outbox still counts.
 *
 * The answer of each step (resp.item): the node's boot (u64), then FENCE
 * and MARK the number (u64), LOW the indexes (u32 each), SWEEP the
 * tombstones deleted in this round so far (u64); FENCE's found says the
 * node wrote tombstones since its last round that left none.
 */
void index_collect_serve(node *n, const rpc_request *req, arena *a,
    rpc_response *resp);

/*
 * index_restamp: when v[0..vl) is a tombstone, writes it to out
 * (RECORD_TOMBSTONE_LEN bytes) stamped with this node's outbox clock and
 * returns its length; 0 otherwise. A move's target stamps the tombstones
 * it takes in so: their stamps are another node's clock, which says
 * nothing about this node's fences, while the moment they arrive here
 * comes after the write that made them.
 */
size_t index_restamp(node *n, const uint8_t *v, size_t vl, uint8_t *out);

/* index_collector_start starts the catalog node's collector thread (every
 * cfg.gsi_collect_s seconds; 0: never); index_collector_stop ends it. */
kv_err index_collector_start(node *n);
void index_collector_stop(node *n);

/* index_write_metrics writes the outbox and apply counters. */
void index_write_metrics(node *n, FILE *f);

#endif
