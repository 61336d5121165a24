/*
 * index_key.h — the keys of a global secondary index, one attribute or
 * several (multi-attribute keys: up to INDEX_KEY_PARTS attributes for the
 * partition key and as many for the sort key).
 *
 * A key of one attribute is that attribute's value, as for a table. A
 * key of several is stored as one Binary value: the keyenc_value
 * encodings of its attributes' values, in KeySchema order. Each encoding
 * delimits itself and keeps its type's order, so the byte order of these
 * values is the order of the tuples, first attribute first, which is
 * DynamoDB's order of a multi-attribute sort key; and the entries whose
 * first k sort attributes have given values are the values that begin
 * with those k encodings, one contiguous range of storage keys. The
 * partition hash of such a key is keyenc_hash of the Binary value, so
 * both attributes decide the partition together.
 *
 * The base write's records (node/index/outbox.c), the index's reads
 * (router/ops/ops_read.c) and the fill build keys only through here.
 */
#ifndef KV_INDEX_KEY_H
#define KV_INDEX_KEY_H

#include <stdbool.h>
#include <stddef.h>

#include "arena.h"
#include "catalog.h"
#include "err.h"
#include "value.h"

/*
 * index_key_parts puts the attributes of d's partition key (sort false)
 * or sort key (sort true) in parts[0..n), in KeySchema order, and
 * returns n (0: d has no sort key).
 */
size_t index_key_parts(const index_def *d, bool sort,
    const key_def *parts[INDEX_KEY_PARTS]);

/*
 * index_key_all puts the attributes of d's partition key, then those of
 * its sort key, in keys[0..n), and returns n; *nh (when not NULL) is how
 * many are the partition key's.
 */
size_t index_key_all(const index_def *d,
    const key_def *keys[2 * INDEX_KEY_PARTS], size_t *nh);

/*
 * index_projects reports whether index d of table t projects the
 * top-level attribute name[0..n): with ALL every one; else the table's
 * keys, the index's key attributes and (INCLUDE) its NonKeyAttributes.
 */
bool index_projects(const table *t, const index_def *d, const char *name,
    size_t n);

/* index_key_multi reports whether that key has several attributes. */
static inline bool
index_key_multi(const index_def *d, bool sort)
{
	return (sort ? d->n_rmore : d->n_hmore) > 0;
}

/* index_multi reports whether either key of d has several attributes. */
static inline bool
index_multi(const index_def *d)
{
	return d->n_hmore > 0 || d->n_rmore > 0;
}

/*
 * index_key_compose sets *out to the Binary value of a multi-attribute
 * key whose attributes have the values vals[0..n) (S, N or B), its bytes
 * in a. KV_OK or KV_ENOMEM.
 */
kv_err index_key_compose(const value *const *vals, size_t n, arena *a,
    value *out);

/*
 * index_key_value sets *out to the value of d's partition key (sort
 * false) or sort key (sort true) in item: the attribute's value (sharing
 * item's bytes), or for several attributes their composed value (in a).
 * Returns 1; 0 when item lacks one of the attributes or has one with
 * another type than its definition (the item is then not in the index);
 * -1 without memory.
 */
int index_key_value(const index_def *d, bool sort, const value *item,
    arena *a, value *out);

#endif
