/*
 * keyenc.h — storage keys and partition-key hashing.
 *
 * Every item lives in RocksDB under a key whose byte order equals
 * DynamoDB's order within an item collection, and groups each partition's
 * items into one contiguous range:
 *
 *   OFFSET  SIZE  FIELD
 *   0       4     table id, big-endian (0 is reserved for node metadata)
 *   4       8     hash of the typed partition key, big-endian
 *   12      var   partition key, encoded as below
 *   12+n    var   sort key, encoded as below (absent without a sort key)
 *
 * A key value is encoded as its type tag (S, N or B) followed by:
 *   N: number_encode() (self-delimiting, order-preserving);
 *   S, B: the bytes with 0x00 written as 0x00 0xFF, then 0x00 0x01.
 * The escape keeps the encoding order-preserving and self-delimiting, so
 * the sort-key range of one item collection is one contiguous byte range.
 *
 * The hash is XXH3-64 of the type tag and the canonical bytes of the key
 * (for N, the number encoding, so 1E+2 and 100 hash alike). It is stable
 * across restarts and machines: it picks the partition.
 */
#ifndef KV_KEYENC_H
#define KV_KEYENC_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "value.h"

#define KEYENC_PREFIX 12 /* table id + hash */

/* keyenc_hash returns the partition hash of the key value pk (S, N or B). */
uint64_t keyenc_hash(const value *pk);

/*
 * keyenc_value_size returns the number of bytes keyenc_value will write
 * for the key value v (S, N or B).
 */
size_t keyenc_value_size(const value *v);

/* keyenc_value writes the encoding of v to buf and returns its length. */
size_t keyenc_value(const value *v, uint8_t *buf);

/*
 * keyenc_item_key builds the storage key of an item: owned bytes in *out
 * (free with free()), length in *len. sk is NULL for tables without a sort
 * key. Returns KV_OK or KV_ENOMEM.
 */
kv_err keyenc_item_key(uint32_t table_id, const value *pk, const value *sk,
    uint8_t **out, size_t *len);

/*
 * keyenc_index_key builds the storage key of a global index's entry:
 * the index's key pk (and sort key sk, NULL without one) as
 * keyenc_item_key would, followed by the base item's key bpk (and bsk),
 * which makes entries of equal index keys distinct and orders them by
 * the base key. Every encoded value delimits itself, so the entries of
 * one index key value are the keys that begin with its item key.
 * keyenc_item_key is this without bpk and bsk.
 */
kv_err keyenc_index_key(uint32_t table_id, const value *pk, const value *sk,
    const value *bpk, const value *bsk, uint8_t **out, size_t *len);

/* keyenc_table_prefix writes the 4-byte prefix of a table's keys. */
void keyenc_table_prefix(uint32_t table_id, uint8_t buf[4]);

/*
 * keyenc_range_prefix writes the 12-byte key of table_id at hash h: the
 * first key of a partition starting at h.
 */
void keyenc_range_prefix(uint32_t table_id, uint64_t h, uint8_t buf[12]);

/* keyenc_key_hash returns the hash stored in a storage key (len >= 12). */
uint64_t keyenc_key_hash(const uint8_t *key);

/* keyenc_key_table returns the table id stored in a storage key. */
uint32_t keyenc_key_table(const uint8_t *key);

#endif
