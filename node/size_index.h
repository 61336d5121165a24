/*
 * size_index.h — per partition, the stored size of items this node has
 * written since it started: storage key -> the record's item size. A
 * PutItem with no condition and no ReturnValues needs only the old item's
 * size (capacity charges the larger of old and new; the partition's byte
 * counter subtracts the old), so with an entry here it skips the read of
 * the old record, which was a sixth of a node's CPU per put.
 *
 * An entry is exact or absent: write_item (write.c) sets or removes the
 * key's entry with every record it stores, under the partition's mutex,
 * and ASSIGN clears the index of every partition it touches. Absent means
 * unknown: the write reads the store as before. A key is added only while
 * the node-wide count of entries is below SIZE_INDEX_MAX_ENTRIES and its
 * storage key is at most SIZE_INDEX_MAX_KEY bytes (a bound on memory: a
 * slot is 56 bytes and a table at most a quarter full after it grows,
 * so about 15 MB a node, 30 MB at worst); an existing entry is always kept up to date, and when
 * memory runs out the key's entry is dropped.
 *
 * Locking rule: the partition's mu guards its index (or the map lock held
 * exclusive); `total` is shared by all partitions of a node and atomic.
 */
#ifndef KV_SIZE_INDEX_H
#define KV_SIZE_INDEX_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SIZE_INDEX_MAX_ENTRIES (128u * 1024)
#define SIZE_INDEX_MAX_KEY 40 /* longer storage keys are not indexed */

typedef struct size_slot size_slot;

typedef struct size_index {
	size_slot *slots;
	size_t cap;       /* a power of two, or 0 */
	size_t n;         /* live entries */
	size_t dead;      /* removed entries still in the probe chains */
	atomic_size_t *total; /* the node's live entries, for the bound */
} size_index;

/* size_index_init prepares an empty index counting into total. */
void size_index_init(size_index *x, atomic_size_t *total);

/* size_index_fini frees every entry; the index is then empty. */
void size_index_fini(size_index *x);

/* size_index_get sets *size and returns true if key has an entry. */
bool size_index_get(const size_index *x, const uint8_t *key, size_t kl,
    uint32_t *size);

/*
 * size_index_set records that key's stored item has this size. If the
 * entry cannot be made (the bound, or no memory), the key is left without
 * one, never with an older size.
 */
void size_index_set(size_index *x, const uint8_t *key, size_t kl,
    uint32_t size);

/* size_index_remove forgets key (no stored item, or unknown). */
void size_index_remove(size_index *x, const uint8_t *key, size_t kl);

#endif
