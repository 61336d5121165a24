/*
 * size_index.h — per partition, the stored size of items this node has
 * written since it started: storage key -> the record's item size. A
 * PutItem with no condition and no ReturnValues needs only the old item's
 * size (capacity charges the larger of old and new; the partition's byte
 * counter subtracts the old), so with an entry here it skips the read of
 * the old record, which was a sixth of a node's CPU per put (and, on a
 * table larger than the block cache, a read of the disk's pages).
 *
 * An entry is exact or absent: write_item (write.c) sets or removes the
 * key's entry with every record it stores, under the partition's mutex,
 * and ASSIGN clears the index of every partition it touches. Absent means
 * unknown: the write reads the store as before. A key is known by a
 * 96-bit fingerprint of it (XXH3-128), not by its bytes, so that an entry
 * is 16 bytes whatever the key's length: two keys of one partition with
 * one fingerprint would share an entry, which for three million keys
 * happens with a probability of about 10^-16 (n^2 / 2^97).
 *
 * Memory: the tables of all the node's partitions share a budget
 * (size_budget: the node's memory-mb, config.h, sets its limit); an index
 * grows only while the node's tables fit in it, and a key that finds its
 * index full stays unknown. An existing entry is always kept up to date,
 * and when memory runs out the key's entry is dropped.
 *
 * Locking rule: the partition's mu guards its index (or the map lock held
 * exclusive); the budget is shared by all partitions of a node and atomic.
 */
#ifndef KV_SIZE_INDEX_H
#define KV_SIZE_INDEX_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct size_slot size_slot;

/* The node's tables, in bytes, and what they may take. */
typedef struct size_budget {
	atomic_size_t bytes;
	size_t limit;
} size_budget;

#define SIZE_INDEX_SLOT_BYTES 16

typedef struct size_index {
	size_slot *slots;
	size_t cap;       /* a power of two, or 0 */
	size_t n;         /* live entries */
	size_t dead;      /* removed entries still in the probe chains */
	size_budget *budget;
} size_index;

/* size_index_init prepares an empty index whose table counts in budget. */
void size_index_init(size_index *x, size_budget *budget);

/* size_index_fini frees every entry; the index is then empty. */
void size_index_fini(size_index *x);

/* size_index_get sets *size and returns true if key has an entry. */
bool size_index_get(const size_index *x, const uint8_t *key, size_t kl,
    uint32_t *size);

/*
 * size_index_set records that key's stored item has this size. If the
 * entry cannot be made (the budget, or no memory), the key is left without
 * one, never with an older size.
 */
void size_index_set(size_index *x, const uint8_t *key, size_t kl,
    uint32_t size);

/* size_index_remove forgets key (no stored item, or unknown). */
void size_index_remove(size_index *x, const uint8_t *key, size_t kl);

#endif
