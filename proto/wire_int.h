/*
 * wire_int.h — what wire.c shares with wire_cluster.c: protobuf-c's
 * generated types and the conversions both files use. Private to proto/
 * (nothing outside this folder includes protobuf-c).
 */
#ifndef KV_WIRE_INT_H
#define KV_WIRE_INT_H

#include "kv.pb-c.h"
#include "wire.h"

/* Table -> protobuf. Borrows t; pb points into t and into keys/parts. */
typedef struct pb_table_buf {
	Kv__Table t;
	Kv__KeyDef hash, range;
	Kv__KeyDef *defs;
	Kv__KeyDef **defp;
	Kv__Partition *parts;
	Kv__Partition **partp;
	Kv__IndexDef *idx;
	Kv__IndexDef **idxp;
	Kv__KeyDef *idx_keys; /* 2 * INDEX_KEY_PARTS per index: hash,
	                       * range, then hash_more, range_more */
	Kv__KeyDef **idx_more; /* 2 * INDEX_KEY_PARTS per index */
	Kv__Tag *tags;
	Kv__Tag **tagp;
} pb_table_buf;

/*
 * wire_table_to_pb fills b to describe t (borrowed; b points into it);
 * release with wire_table_buf_fini. KV_OK or KV_ENOMEM.
 */
kv_err wire_table_to_pb(const table *t, pb_table_buf *b);
void wire_table_buf_fini(pb_table_buf *b);

/*
 * wire_table_from_pb makes *t an owned table (table_fini) from pb, checking
 * its partitions. KV_OK, KV_PROTO or KV_ENOMEM; on failure *t is zeroed.
 */
kv_err wire_table_from_pb(const Kv__Table *pb, table *t);

/* Partition counters to and from protobuf (plain copies). */
void wire_stats_to_pb(const part_stats *s, Kv__PartStats *pb);
void wire_stats_from_pb(const Kv__PartStats *pb, part_stats *s);

/* wire_pack_pb packs any message into owned bytes (free()). */
kv_err wire_pack_pb(const ProtobufCMessage *m, uint8_t **out, size_t *len);

/*
 * wire_copy_bytes copies d into a (valid until arena_fini) and sets *len;
 * NULL when d is empty (or the arena is exhausted: check d->len).
 */
const uint8_t *wire_copy_bytes(arena *a, const ProtobufCBinaryData *d,
    size_t *len);

/* An allocator for protobuf-c's unpacking that takes from arena a. */
void *wire_pb_arena_alloc(void *data, size_t n);
void wire_pb_arena_free(void *data, void *p);
#define PB_ARENA(a) { .alloc = wire_pb_arena_alloc, \
	.free = wire_pb_arena_free, .allocator_data = (a) }

#endif
