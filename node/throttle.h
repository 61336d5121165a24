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
 * empty buckets; later calls keep the credit (bucket_set_rate).
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
 * throttle_stats fills the capacity fields of *s (rates, credit, charged
 * and throttled counts) from p.
 */
void throttle_stats(part *p, part_stats *s);

#endif
