/*
 * throttle.h — a partition's read and write ceilings, applied on the node
 * that owns it: admission before a data verb runs, the charge after it.
 *
 * A partition's rate is the node's per-partition ceiling (the cluster
 * file's partition-rcu / partition-wcu, DynamoDB's 3000 / 1000 by
 * default) or, for a PROVISIONED table, its share of the table's
 * throughput (units / partitions) when that is lower: provisioning never
 * lifts the ceiling. Burst credit is kept for burst-seconds (300). The
 * charge is exactly what the operation consumed, in the half units of
 * core/capacity.h: a GetItem its item's size, a RANGE call the bytes it
 * read (rounded once per call; a Scan page that spans partitions is
 * rounded once per partition here but once per page in the answer's
 * ConsumedCapacity, so the buckets may be charged up to one unit more per
 * partition crossed), a write the larger of the old and new item, a failed
 * condition the existing item.
 *
 * Locking: every function takes p->cap_mu itself; the caller holds the
 * partition map lock (shared) so that p stays alive.
 */
#ifndef KV_THROTTLE_H
#define KV_THROTTLE_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"
#include "part.h"
#include "wire.h"

typedef struct node node;

/* throttle_now_ns is the clock the buckets run on (monotonic). */
int64_t throttle_now_ns(void);

/*
 * throttle_configure sets p's rates from the node's ceilings and the
 * table's throughput (billing provisioned with rcu/wcu over table_parts
 * partitions, or on demand with rcu = wcu = 0). The first call starts
 * empty buckets; later calls keep the credit (bucket_set_rate) and a
 * lend not yet over (throttle_borrow), between the new share and the
 * ceiling.
 */
void throttle_configure(node *n, part *p, uint64_t rcu, uint64_t wcu,
    uint32_t table_parts, bool first);

/*
 * throttle_admit takes p's read or write bucket: KV_OK when the request
 * may run, else KV_THROTTLED with resp->throttle saying which bucket, and
 * whether the table's provisioned share or the partition ceiling binds.
 */
kv_err throttle_admit(node *n, part *p, bool write, const uint8_t *key,
    size_t key_len, rpc_response *resp);

/*
 * throttle_charge takes half_units from p's read or write bucket. Both
 * count the request on storage key key[0..key_len) (NULL: a range of
 * several collections) in p's heat sketch (heat.h).
 */
void throttle_charge(node *n, part *p, bool write, const uint8_t *key,
    size_t key_len, uint64_t half_units);

/*
 * Borrowing (instant adaptive capacity): a PROVISIONED table's partition
 * may use more than its share of the table's units while the table as a
 * whole uses less than them. The catalog node works out, once a second,
 * what each hungry partition may use (reshape.c, RPC_BORROW), and the
 * owner applies it with throttle_borrow: never below the share, never
 * above the partition ceiling, and only until until_ns, after which
 * throttle_tick returns the partition to its share (so a lost catalog
 * node lends nothing for long). Burst credit is kept across changes.
 */
void throttle_borrow(node *n, part *p, double rd_units, double wr_units,
    int64_t until_ns);
void throttle_tick(node *n, part *p, int64_t now_ns);

/* RPC_BORROW: applies the catalog node's rates (throttle_borrow). */
void borrow_serve(node *n, const rpc_request *req, arena *a,
    rpc_response *resp);

/*
 * throttle_stats fills the capacity fields of *s (rates, credit, charged
 * and throttled counts) from p.
 */
void throttle_stats(part *p, part_stats *s);

#endif
