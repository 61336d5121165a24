/*
 * catalog.h — tables, their partitions and owners: the cluster's map.
 *
 * The catalog node keeps the authoritative catalog in its store (see
 * node/catalog.c); routers hold an immutable snapshot behind an RCU pointer
 * (router/route.c); proto/wire.c converts it to and from the wire. A
 * catalog value is never changed after it is published: a change builds a
 * new one with a higher version.
 *
 * Partitions of a table cover the 64-bit hash space without gaps, in
 * order: partition i holds hashes lo..last (both inclusive, so the last
 * partition can end at UINT64_MAX). Each names its owner node (an index
 * into the cluster file's node list) and an epoch that rises whenever the
 * partition's owner or range changes; a node refuses requests that name
 * another epoch.
 */
#ifndef KV_CATALOG_H
#define KV_CATALOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "value.h"

typedef enum table_status {
	TABLE_CREATING = 1,
	TABLE_ACTIVE,
	TABLE_DELETING,
	TABLE_UPDATING, /* throughput or billing changing; still serving */
} table_status;

typedef enum billing_mode {
	BILLING_PROVISIONED = 1,
	BILLING_PAY_PER_REQUEST,
} billing_mode;

typedef struct key_def {
	char *name;    /* owned by the table */
	val_type type; /* VAL_S, VAL_N or VAL_B */
} key_def;

#define PART_KEY_MAX 64 /* longest key bound of a keyed partition */

typedef struct partition {
	uint32_t id;    /* unique within the table */
	uint64_t lo;    /* first hash served */
	uint64_t last;  /* last hash served (inclusive) */
	uint32_t node;  /* owner: index into the cluster's nodes */
	uint64_t epoch; /* rises on every change of owner or range */
	/*
	 * A keyed partition holds part of the items of a single hash
	 * (lo == last), split on the sort key: the storage keys of that hash
	 * whose bytes after the 12-byte prefix lie in [kfrom, kto) (kfrom_len
	 * 0: from the first; kto_len 0: to the last). The keyed partitions of
	 * one hash sit together in parts, in key order, on one node. The
	 * first of them (kfrom_len 0) stands for the group in routing: its
	 * owner serves each key from the member that holds it.
	 */
	bool keyed;
	uint8_t kfrom_len, kto_len;
	uint8_t kfrom[PART_KEY_MAX], kto[PART_KEY_MAX];
} partition;

typedef enum index_projection {
	PROJECT_ALL = 1,
	PROJECT_KEYS_ONLY,
	PROJECT_INCLUDE,
} index_projection;

/*
 * A secondary index of a table, as its base table lists it. A global
 * index (GSI) keeps its entries in a catalog table of its own
 * (table_id): partitioned, placed and throttled like any table, named
 * "BASE/INDEX" (a name no request can use, as '/' is not allowed in
 * table names), with base_id set, the index's keys as its key schema,
 * and its own status, throughput and partitions. A local index (LSI)
 * lives in its base table's partitions (table_id 0).
 */
#define INDEX_KEY_PARTS 4 /* attributes of one key of a GSI, at most */

typedef struct index_def {
	char *name;
	bool local;
	uint32_t table_id;  /* GSI: the table of its entries; LSI: 0 */
	key_def hash;       /* LSI: the base table's hash key */
	key_def range;      /* range.name == NULL: none (GSI only) */
	/*
	 * A GSI's multi-attribute keys: the partition key's attributes
	 * after hash, hmore[0..n_hmore), and the sort key's after range,
	 * rmore[0..n_rmore), in KeySchema order. Such a key is stored as
	 * one Binary value (index_key_value in core/index_key.h).
	 */
	key_def hmore[INDEX_KEY_PARTS - 1];
	key_def rmore[INDEX_KEY_PARTS - 1];
	uint8_t n_hmore, n_rmore;
	index_projection projection;
	char **include;     /* PROJECT_INCLUDE: NonKeyAttributes */
	size_t n_include;
	/* CreateTable / UpdateTable only: the GSI's provisioned throughput
	 * to give its table (0: on demand). */
	uint64_t rcu, wcu;
	/* Being deleted: no longer written or read, listed as DELETING
	 * until its table is dropped (then the definition goes too). */
	bool deleting;
} index_def;

/* A tag of a table (TagResource; owned strings). */
typedef struct table_tag {
	char *key, *value;
} table_tag;

#define TABLE_MAX_TAGS 50 /* DynamoDB's limit per resource */

typedef struct table {
	char *name;
	uint32_t id;       /* storage prefix; never reused */
	char *uuid;        /* TableId as DynamoDB shows it */
	key_def hash;
	key_def range;     /* range.name == NULL without a sort key */
	key_def *attr_defs;
	size_t n_attr_defs;
	billing_mode billing;
	uint64_t rcu, wcu; /* provisioned throughput; 0 for on-demand */
	table_status status;
	int64_t created_ms; /* Unix time in milliseconds */
	int64_t last_increase_ms, last_decrease_ms; /* throughput; 0: never */
	uint32_t decreases_today; /* throughput decreases on decreases_day */
	int64_t decreases_day;    /* UTC day: Unix ms / 86,400,000 */
	int64_t billing_changed_ms; /* last billing-mode change; 0: never */
	partition *parts;   /* sorted by lo */
	size_t n_parts;
	index_def *indexes; /* its secondary indexes (a base table) */
	size_t n_indexes;
	uint32_t base_id;   /* a GSI's table: the base table's id; else 0 */
	bool backfilling;   /* a GSI's table: being built from the base */
	bool paused;        /* a GSI's table: replication held (index.h) */
	/* Time to Live: the attribute whose Number (Unix seconds) says
	 * when an item expires; NULL: TTL is disabled (node/ttl.c). */
	char *ttl_attr;
	table_tag *tags;    /* its tags, in the order they were first set */
	size_t n_tags;
	/* Restored from a backup (RestoreTableFromBackup): its ARN and
	 * when the restore began; the restore is in progress while the
	 * table is CREATING (node/backup.h). NULL: not restored. */
	char *restore_arn;
	int64_t restore_ms;
} table;

typedef enum backup_status {
	BACKUP_CREATING = 1,
	BACKUP_AVAILABLE,
	BACKUP_DELETED, /* its data being removed from the nodes */
} backup_status;

/*
 * An on-demand backup of a table (node/backup.h): the table as it was
 * (src, with the partitions and owners the copy was taken from), and
 * what DynamoDB describes of it.
 */
typedef struct backup_rec {
	uint64_t id;        /* names its copies on the nodes */
	char *name, *arn;   /* owned */
	backup_status status;
	int64_t created_ms;
	uint64_t size_bytes, items;
	table src;
} backup_rec;

/* backup_rec_fini frees what b owns; safe on a zeroed one. */
void backup_rec_fini(backup_rec *b);

typedef struct catalog {
	uint64_t version;
	table *tables; /* sorted by name (bytewise) */
	size_t n_tables;
	uint32_t next_table_id;
} catalog;

/* catalog_find returns the table named name[0..n), or NULL. Borrows. */
const table *catalog_find(const catalog *c, const char *name, size_t n);

/* table_serving reports whether t takes data requests (ACTIVE, UPDATING). */
static inline bool
table_serving(const table *t)
{
	return t->status == TABLE_ACTIVE || t->status == TABLE_UPDATING;
}

/*
 * table_partition_for returns the partition of t that holds hash h (the
 * first of a keyed group: see partition). The partitions must cover the
 * hash space (they always do in a catalog).
 */
const partition *table_partition_for(const table *t, uint64_t h);

/*
 * table_parts_valid reports whether t's partitions cover the hash space in
 * order, without gaps or overlaps, with distinct ids.
 */
bool table_parts_valid(const table *t);

/* table_is_index reports whether t holds a GSI's entries. */
static inline bool
table_is_index(const table *t)
{
	return t->base_id != 0;
}

/*
 * index_local_no returns the number of t's local index d (0 for its
 * first LSI, in the order CreateTable gave them), as its entries' keys
 * carry it (core/keyenc.h); -1 for a global one. LSIs are made only with
 * their table and never dropped, so the number never changes.
 */
static inline int
index_local_no(const table *t, const index_def *d)
{
	int k = 0;
	if (!d->local)
		return -1;
	for (const index_def *e = t->indexes; e < d; e++)
		k += e->local;
	return k;
}

/* table_has_local reports whether t has local secondary indexes. */
static inline bool
table_has_local(const table *t)
{
	for (size_t i = 0; i < t->n_indexes; i++)
		if (t->indexes[i].local)
			return true;
	return false;
}

/*
 * table_find_id returns the table of c with id `id`, or NULL. Linear in
 * the number of tables. Borrows.
 */
const table *table_find_id(const catalog *c, uint32_t id);

/* index_def_fini frees what an index definition owns; safe when zeroed. */
void index_def_fini(index_def *d);

/*
 * index_def_copy makes *out a deep copy of d (free with index_def_fini).
 * KV_OK or KV_ENOMEM, with *out zeroed on failure.
 */
kv_err index_def_copy(const index_def *d, index_def *out);

/* table_fini frees what a table owns; safe on a zeroed table. */
void table_fini(table *t);

/* catalog_free frees c and everything in it; accepts NULL. */
void catalog_free(catalog *c);

/*
 * table_copy makes *out a deep copy of t (free with table_fini). Returns
 * KV_OK or KV_ENOMEM, with *out zeroed on failure.
 */
kv_err table_copy(const table *t, table *out);

/*
 * catalog_apply returns in *out an owned catalog (free with
 * catalog_free()) made of base's tables, less those whose id is in
 * gone[0..n_gone) or in ups, plus copies of ups[0..n_ups) (a table that
 * is new or changed) whose id is not in gone, sorted by name, with the
 * given version and next_table_id. base may be NULL (no tables). Borrows everything.
 * Returns KV_OK, KV_ENOMEM, or KV_CORRUPT when the result would hold two
 * tables of one name (a change that does not fit base).
 */
kv_err catalog_apply(const catalog *base, const table *ups, size_t n_ups,
    const uint32_t *gone, size_t n_gone, uint64_t version,
    uint32_t next_table_id, catalog **out);

/* catalog_clone: catalog_apply with no change, keeping c's version. */
kv_err catalog_clone(const catalog *c, catalog **out);

/*
 * table_split_even fills t->parts with n partitions of equal hash ranges,
 * assigned round-robin to nodes first_node, first_node + 1, ... modulo
 * n_nodes, all at epoch 1. Returns KV_OK or KV_ENOMEM.
 */
kv_err table_split_even(table *t, size_t n, uint32_t first_node,
    uint32_t n_nodes);

#endif
