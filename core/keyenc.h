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
 * A table with local secondary indexes keeps two more kinds of keys in
 * its partitions, after the table id and hash of an item collection's
 * partition key, where an item's key has the type tag of its partition
 * key (S, N or B, all below 0xFE):
 *
 *   local index k's entry:  0xFF, k, partition key, index sort key,
 *                           table sort key
 *   the collection's size:  0xFE, partition key
 *
 * So both move and split with the collection's hash, and the entries of
 * one index and partition key value form one contiguous range, ordered
 * by the index's sort key.
 *
 * The hash is XXH3-64 of the type tag and the canonical bytes of the key
 * (for N, the number encoding, so 1E+2 and 100 hash alike). It is stable
 * across restarts and machines: it picks the partition.
 */
#ifndef KV_KEYENC_H
#define KV_KEYENC_H

#include <stdbool.h>
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
 * keyenc_value_extent returns the length of the encoded key value at
 * p[0..n) (each encoding delimits itself), or 0 if it is malformed.
 */
size_t keyenc_value_extent(const uint8_t *p, size_t n);

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

#define KEYENC_LOCAL_MARK 0xFE /* the first byte above every type tag */
#define KEYENC_LOCAL_ENTRY 0xFF
#define KEYENC_COLL_SIZE 0xFE

/*
 * keyenc_collection writes the key prefix of pk's item collection to buf
 * (room for KEYENC_PREFIX + 2 + keyenc_value_size(pk)) and returns its
 * length: the table's items (local < 0) or local index `local`'s
 * entries of that partition key value.
 */
size_t keyenc_collection(uint32_t table_id, int local, const value *pk,
    uint8_t *buf);

/*
 * keyenc_local_key builds the storage key of an entry in local index
 * `local` of table_id: the collection's prefix, the index's sort key isk
 * and the table's sort key sk. Owned bytes in *out. KV_OK or KV_ENOMEM.
 */
kv_err keyenc_local_key(uint32_t table_id, int local, const value *pk,
    const value *isk, const value *sk, uint8_t **out, size_t *len);

/* keyenc_size_key builds the key of pk's item collection size record. */
kv_err keyenc_size_key(uint32_t table_id, const value *pk, uint8_t **out,
    size_t *len);

/*
 * keyenc_local_of returns what a storage key of a table holds: -1 an
 * item, k an entry of local index k, -2 anything else (a size record).
 */
static inline int
keyenc_local_of(const uint8_t *k, size_t kl)
{
	if (kl <= KEYENC_PREFIX || k[KEYENC_PREFIX] < KEYENC_LOCAL_MARK)
		return -1;
	if (k[KEYENC_PREFIX] == KEYENC_LOCAL_ENTRY && kl > KEYENC_PREFIX + 1)
		return k[KEYENC_PREFIX + 1];
	return -2;
}

/* keyenc_is_item reports whether storage key k is an item's. */
static inline bool
keyenc_is_item(const uint8_t *k, size_t kl)
{
	return keyenc_local_of(k, kl) == -1;
}

/*
 * keyenc_local_base writes to buf (room for kl bytes) the key of the item
 * whose entry in a local index has key k[0..kl): the entry without its
 * marker and index sort key. Returns its length, 0 if k is malformed.
 */
size_t keyenc_local_base(const uint8_t *k, size_t kl, uint8_t *buf);

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
