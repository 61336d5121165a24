/*
 * metrics.h — partition counters as Prometheus text (exposition format
 * 0.0.4), for GET /metrics on every node and router.
 *
 * One family per quantity, one sample per partition, labelled with the
 * table (name when the caller knows it, always its id), the partition id
 * and the owning node. Counters end in _total and only ever rise while
 * the owner runs (they restart from zero with it); gauges are current
 * values. Units are capacity units (RCU/WCU), not the half units the
 * buckets count in.
 *
 *   kv_partition_consumed_read_units_total    RCU charged
 *   kv_partition_consumed_write_units_total   WCU charged
 *   kv_partition_admitted_reads_total         requests let through
 *   kv_partition_admitted_writes_total
 *   kv_partition_throttled_reads_total        requests refused
 *   kv_partition_throttled_writes_total
 *   kv_partition_read_ceiling_units           the bucket's rate (per s)
 *   kv_partition_write_ceiling_units
 *   kv_partition_read_burst_credit_units      credit beyond one second
 *   kv_partition_write_burst_credit_units
 *   kv_partition_items, kv_partition_bytes    items and their sizes
 */
#ifndef KV_METRICS_H
#define KV_METRICS_H

#include <stdio.h>

#include "wire.h"

/*
 * metrics_name_fn returns the name of table table_id, or NULL when the
 * caller does not know it (the label is then left out).
 */
typedef const char *(*metrics_name_fn)(void *arg, uint32_t table_id);

/* One node's stats, as its STATS verb answered them. */
typedef struct metrics_source {
	uint32_t node;
	const part_stats *stats;
	size_t n;
} metrics_source;

/*
 * metrics_burst_units returns the burst credit, in capacity units, of a
 * bucket at level with rate (micro half-units, as part_stats carries
 * them): the level above the current second, never negative.
 */
double metrics_burst_units(int64_t level, int64_t rate);

/*
 * metrics_write_parts writes every family above for the partitions of
 * srcs[0..n) to f. name_of may be NULL.
 */
void metrics_write_parts(FILE *f, const metrics_source *srcs, size_t n,
    metrics_name_fn name_of, void *arg);

#endif
