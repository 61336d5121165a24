/*
 * capacity.h — DynamoDB's capacity-unit arithmetic: what one read or write
 * costs, and a per-table tally for ReturnConsumedCapacity.
 *
 * Units are integers counted in HALF units, so the eventually consistent
 * 0.5 RCU is 1 and no floating point is needed until the router prints
 * the figure. Sizes are item sizes in bytes as item_size() computes them.
 * Nothing here renders JSON, throttles or knows about partitions: the
 * router renders ConsumedCapacity, and the node's token buckets (still
 * to come) are meant to spend the same half units. Next: item.h, which
 * gives the sizes.
 *
 * The rules, from the DynamoDB developer guide ("Item sizes and
 * formats"/CapacityUnitCalculations, "Read/write capacity mode",
 * transaction-apis, Query and Scan "Capacity units consumed"):
 *
 *   read    ceil(bytes / 4 KB) RCU, at least 1; eventually consistent
 *           reads cost half of that, exactly (0.5, 1.5, 1976.5).
 *           GetItem and each BatchGetItem key: the item's size (a missing
 *           item still costs the minimum). Query and Scan: the sum of
 *           the sizes of all items READ in one page (before the filter,
 *           whatever the projection), rounded once per page. On an
 *           index, the sizes of the index entries (projected attributes).
 *   write   ceil(max(old, new) / 1 KB) WCU, at least 1.
 *   txn     every item read or written in TransactGetItems or
 *           TransactWriteItems costs twice (prepare and commit), even
 *           when the transaction is cancelled; transactional reads are
 *           strongly consistent.
 *
 * How ConsumedCapacity prints the figures (for the router): CapacityUnits
 * is a JSON number that always carries a decimal point — DynamoDB answers
 * {"CapacityUnits":1.0}, {"CapacityUnits":0.5}, {"CapacityUnits":3953.0}
 * (the AWS CLI examples and raw response logs show 1.0, never 1). Build
 * it with json_real(capacity_to_double(half)): jansson prints a real with
 * "%.17g" and appends ".0" to a whole number, which is that format, and
 * every half-unit count below 2^53 converts exactly.
 */
#ifndef KV_CAPACITY_H
#define KV_CAPACITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

#define CAPACITY_READ_BYTES 4096  /* one RCU: a strong read of <= 4 KB */
#define CAPACITY_WRITE_BYTES 1024 /* one WCU: a write of <= 1 KB */
#define CAPACITY_TXN_FACTOR 2     /* prepare + commit */

/*
 * The most indexes one tally can name: DynamoDB's limits of 20 global
 * (the default quota) and 5 local secondary indexes per table.
 */
#define CAPACITY_MAX_INDEXES 25

/*
 * capacity_read_half_units returns the cost in half RCU of reading bytes
 * in one request: ceil(bytes / 4096) units with a minimum of 1, times 2
 * when consistent (strongly consistent) and times 1 when eventually
 * consistent — so an eventually consistent read of up to 4 KB returns 1
 * (0.5 RCU) and a strongly consistent one 2 (1.0 RCU).
 *
 * What bytes is, per operation:
 *   GetItem, each key of BatchGetItem: the item's size, 0 when the item
 *     does not exist (it still costs the minimum). BatchGetItem calls
 *     once per key and adds: each item is rounded separately.
 *   Query, Scan: the sum of the sizes of the items read for one page,
 *     filtered out or not; call once per page, never once per item. (The
 *     guide also speaks of a minimum per partition a Scan touches; the
 *     router charges per page only, which is what reproduces the measured
 *     Scan costs in ../shared/SEEDS.md.)
 *   An index: the sizes of the index entries, not of the table items.
 */
uint64_t capacity_read_half_units(uint64_t bytes, bool consistent);

/*
 * capacity_write_units returns the cost in whole WCU of one item write:
 * ceil(max(old_size, new_size) / 1024), with a minimum of 1. The caller
 * passes, in bytes (0 for "no item"):
 *   PutItem: the replaced item's size and the new item's size.
 *   UpdateItem: the item's size before and after the update, even when
 *     only one attribute changed; an upsert has old_size 0.
 *   DeleteItem: the deleted item's size and 0. Deleting a missing item
 *     costs 1.
 *   A failed ConditionExpression: the existing item's size and 0 — the
 *     guide charges "the size of the item" (1 KB item: 1 WCU, twice
 *     that: 2) and 1 WCU when the item does not exist. FIXME: the guide
 *     does not say whether a failed put of an item larger than the
 *     existing one charges the larger size; we charge the existing one.
 *   BatchWriteItem: once per put or delete, then add (each item rounded
 *     separately: 500 bytes + 3.5 KB cost 1 + 4 = 5).
 *   An index entry: the entry's size before and after the write (see
 *     capacity_acc_add_index_write for when an index is charged).
 */
uint64_t capacity_write_units(uint64_t old_size, uint64_t new_size);

/*
 * capacity_txn_read_half_units returns the cost in half RCU of reading
 * one item of bytes in TransactGetItems: a strongly consistent read,
 * doubled (4 KB item: 4, i.e. 2.0 RCU). A missing item costs the same
 * as a 4 KB one.
 */
uint64_t capacity_txn_read_half_units(uint64_t bytes);

/*
 * capacity_txn_write_units returns the cost in whole WCU of one action of
 * TransactWriteItems: capacity_write_units(old_size, new_size) doubled.
 * It is charged for every action, even when the transaction is cancelled.
 */
uint64_t capacity_txn_write_units(uint64_t old_size, uint64_t new_size);

/*
 * capacity_to_double returns half / 2 as a double, the figure DynamoDB
 * prints (1 -> 0.5, 2 -> 1.0, 3953 -> 1976.5); exact for half < 2^53.
 * Give it to json_real, never to json_integer (see the note at the top).
 */
double capacity_to_double(uint64_t half);

/* Which map of ConsumedCapacity an index share goes to. */
typedef enum capacity_index_kind {
	CAPACITY_GSI, /* GlobalSecondaryIndexes */
	CAPACITY_LSI  /* LocalSecondaryIndexes */
} capacity_index_kind;

/* The units charged to one table or index, in half units. */
typedef struct capacity_share {
	uint64_t read_half;  /* ReadCapacityUnits * 2 */
	uint64_t write_half; /* WriteCapacityUnits * 2 */
} capacity_share;

typedef struct capacity_index_share {
	const char *name; /* borrowed from the caller, see below */
	size_t name_len;
	capacity_index_kind kind;
	capacity_share units;
} capacity_index_share;

/*
 * capacity_acc tallies what one request consumed on ONE table (the
 * router keeps one per table named by BatchGetItem, BatchWriteItem or a
 * transaction). It holds what ReturnConsumedCapacity needs:
 *
 *   CapacityUnits           capacity_acc_total()
 *   ReadCapacityUnits       capacity_acc_read_total()
 *   WriteCapacityUnits      capacity_acc_write_total()
 *   Table                   .table (INDEXES only)
 *   GlobalSecondaryIndexes  .indexes[] of kind CAPACITY_GSI (INDEXES only)
 *   LocalSecondaryIndexes   .indexes[] of kind CAPACITY_LSI (INDEXES only)
 *
 * each Capacity object being CapacityUnits = read + write, and its
 * ReadCapacityUnits and WriteCapacityUnits. Rendering notes, measured on
 * DynamoDB by third parties, not in the guide: the read/write split
 * appears only on transactional operations (TransactGetItems,
 * TransactWriteItems); GetItem, PutItem, UpdateItem, DeleteItem, Query
 * and Scan print CapacityUnits alone, at the top and on Table
 * (nubo-db/dynamodb-conformance #69). Under INDEXES an index map is
 * absent when no index of that kind was charged (the same suite, #124),
 * so callers do not add an index share that costs nothing; Table stays,
 * 0.0 when a Query on a GSI charged only the index (ExtendDB #305). The
 * tally is plain integers: capacity_acc_init; there is nothing to free.
 */
typedef struct capacity_acc {
	capacity_share table;
	capacity_index_share indexes[CAPACITY_MAX_INDEXES]; /* added order */
	size_t nindexes;
} capacity_acc;

/* capacity_acc_init empties a tally; cannot fail. */
void capacity_acc_init(capacity_acc *a);

/* capacity_acc_add_read charges half read units to the table. */
void capacity_acc_add_read(capacity_acc *a, uint64_t half);

/* capacity_acc_add_write charges units whole write units to the table. */
void capacity_acc_add_write(capacity_acc *a, uint64_t units);

/*
 * capacity_acc_add_index_read charges half read units to the index
 * name[0..name_len) of kind kind, creating its share on first use (the
 * same name and kind always find the same share). The name is borrowed
 * and must stay valid as long as the tally is read — a name from the
 * table's catalog entry, which the request holds. Returns KV_OK, or
 * KV_EINVAL when the tally already names CAPACITY_MAX_INDEXES other
 * indexes (nothing is charged then).
 *
 * A Query or Scan on a GSI charges the index, not the table; one on an
 * LSI is charged to the LSI here, though it spends the base table's
 * provisioned throughput (the guide's tables for Query and Scan).
 */
kv_err capacity_acc_add_index_read(capacity_acc *a, capacity_index_kind kind,
    const char *name, size_t name_len, uint64_t half);

/*
 * capacity_acc_add_index_write charges units whole write units to an
 * index, as capacity_acc_add_index_read does. The guide's rules for a
 * table write, per index: a new entry (item written with the index key
 * attributes, or an update that adds them) costs one write; an entry
 * whose index key changes costs two (delete the old entry, put the new
 * one: capacity_write_units(old, 0) + capacity_write_units(0, new)); an
 * entry removed (the key attribute removed, or the item deleted) costs
 * one; an entry whose projected attributes change costs one; an item in
 * the index neither before nor after costs nothing, and (measured) an
 * identical overwrite costs the index nothing — do not call then.
 * Returns KV_OK or KV_EINVAL, as above.
 */
kv_err capacity_acc_add_index_write(capacity_acc *a,
    capacity_index_kind kind, const char *name, size_t name_len,
    uint64_t units);

/*
 * capacity_acc_merge adds every share of src to dst (partial results of
 * one request on one table: Scan segments, fan-out to partitions). The
 * names of src are borrowed by dst from then on. Returns KV_OK, or
 * KV_EINVAL when dst would name more than CAPACITY_MAX_INDEXES indexes;
 * then dst is unchanged.
 */
kv_err capacity_acc_merge(capacity_acc *dst, const capacity_acc *src);

/* capacity_share_total returns read + write of one share, in half units. */
uint64_t capacity_share_total(const capacity_share *s);

/*
 * capacity_acc_read_total, capacity_acc_write_total and capacity_acc_total
 * return the read, write and all half units of the table and every index
 * together: the top-level ReadCapacityUnits, WriteCapacityUnits and
 * CapacityUnits of ConsumedCapacity (TOTAL and INDEXES alike).
 */
uint64_t capacity_acc_read_total(const capacity_acc *a);
uint64_t capacity_acc_write_total(const capacity_acc *a);
uint64_t capacity_acc_total(const capacity_acc *a);

#endif
