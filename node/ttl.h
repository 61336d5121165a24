/*
 * ttl.h — Time to Live: each node deletes the expired items of its own
 * partitions (ttl.c).
 *
 * A table's TTL attribute lives in the catalog (UpdateTimeToLive); every
 * ttl-sweep-ms (10 s by default; the cluster file, kv-node
 * --ttl-sweep-ms) the sweep reads each of this node's partitions of
 * such tables and deletes every item whose attribute is a Number of Unix
 * seconds in the past, and not more than five years in the past (as
 * DynamoDB, which leaves those alone). So an item is deleted within one
 * period and the time a sweep takes after it expires; until then reads
 * return it, as DynamoDB's do.
 *
 * A deletion is the write path's (write_commit): index records and local
 * index entries go in the same batch, moves hear of it, and it costs the
 * table no capacity (DynamoDB charges none). An item in a prepared
 * transaction is left for the next sweep.
 */
#ifndef KV_NODE_TTL_H
#define KV_NODE_TTL_H

#include <stdio.h>

#include "node.h"

/* ttl_open starts the sweep thread. KV_OK or KV_ENOMEM. */
kv_err ttl_open(node *n);

/* ttl_close stops it and frees its state; safe after a failed open. */
void ttl_close(node *n);

/* ttl_write_metrics writes kv_ttl_deleted_total and kv_ttl_swept_total. */
void ttl_write_metrics(node *n, FILE *f);

#endif
