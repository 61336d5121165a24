/*
 * wire.h — router<->node messages as our own structs, and their packing.
 *
 * The rest of the code builds an rpc_request / rpc_response and never sees
 * protobuf-c. wire.c converts to and from kv.proto; unpacking copies every
 * byte into the caller's arena and frees the protobuf message before it
 * returns, so nothing from protobuf-c outlives the call. Corrupt or hostile
 * bytes give KV_PROTO, never a crash.
 */
#ifndef KV_WIRE_H
#define KV_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "catalog.h"
#include "err.h"

/* The verbs a node serves; node/<verb>.c implements each. */
typedef enum rpc_op {
	RPC_PING = 1,         /* liveness; answers KV_OK */
	RPC_GET = 2,          /* read one item by storage key */
	RPC_PUT = 3,          /* write one item */
	RPC_DELETE = 4,       /* delete one item */
	RPC_UPDATE = 5,       /* apply an update to one item */
	RPC_RANGE = 6,        /* read a key range of one partition */
	RPC_CATALOG_GET = 10, /* catalog node: current catalog */
	RPC_CREATE_TABLE = 11, /* catalog node: add a table */
	RPC_DELETE_TABLE = 12, /* catalog node: remove a table */
	RPC_ASSIGN = 13,      /* owner: take these partitions of a table */
	RPC_DROP_TABLE = 14,  /* owner: forget a table and its items */
	RPC_STATS = 15,       /* owner: item counts and sizes of a table */
	RPC_BUMP_EPOCH = 16,  /* catalog node: raise a partition's epoch */
	RPC_UPDATE_TABLE = 17, /* catalog node: change throughput or billing */
	RPC_MULTI = 18,       /* several GET/PUT/DELETE in one message */
	RPC_FEED_FAULT = 19,  /* catalog node: a fault on its catalog feed
	                       * (table_name "drop": the next `limit`
	                       * changes are lost; "disconnect": the feed
	                       * closes for `limit` ms) */
	/* Adaptive capacity (node/adaptive/move.c, node/catalog/catalog_node.c). */
	RPC_SPLIT = 20,       /* catalog node: split partition `part` of
	                       * table_name at `cuts` (none: its middle),
	                       * if it still has `epoch` (0: any) */
	RPC_MOVE = 21,        /* catalog node: move partition `part` of
	                       * table_name to node `node`; answers once done */
	RPC_EVENTS = 22,      /* catalog node: recent splits and moves */
	RPC_HOT_KEYS = 23,    /* owner: top keys of its partitions of
	                       * table_id (0: all) */
	RPC_MOVE_BEGIN = 24,  /* source: start recording the writes to
	                       * partition `part` (move_id) */
	RPC_MOVE_PULL = 25,   /* source: the next items of the partition
	                       * from range_lo, at most max_bytes */
	RPC_MOVE_DIRTY = 26,  /* source: items written since MOVE_BEGIN that
	                       * were not sent yet, at most max_bytes */
	RPC_MOVE_FENCE = 27,  /* source: stop serving the partition (its
	                       * epoch rises to `epoch`, durably) */
	RPC_MOVE_END = 28,    /* source: stop recording (move over) */
	RPC_MOVE_STEP = 29,   /* target: one step of a move in (limit:
	                       * MOVE_STEP_*), pulling from node `node` */
	RPC_SPLIT_ASK = 30,   /* catalog node: an owner asks for a split
	                       * (heat or size) over the node-to-node seam */
	RPC_NODE = 32,        /* catalog node: add (limit RPC_NODE_ADD) or
	                       * drain (RPC_NODE_DRAIN) node `node`;
	                       * answers once its partitions moved */
	RPC_BORROW = 31,      /* owner: rates its partitions of PROVISIONED
	                       * tables may use for max_bytes ms (item:
	                       * RPC_BORROW_ENTRY bytes a partition) */
	RPC_INDEX_APPLY = 33, /* index owner: apply outbox records (subs;
	                       * node/index.h), all or none */
	RPC_INDEX_UPDATE = 34, /* catalog node: UpdateTable's change of one
	                        * global index (limit RPC_INDEX_*) of table
	                        * `table` (its name; indexes[0] the index;
	                        * attr_defs the request's definitions) */
	RPC_INDEX_BACKFILL = 35, /* base owner: fill index `part` (a table
	                          * id) from table `table_id`'s partitions;
	                          * answers what is done (node/index.h) */
	RPC_TXN_PREPARE = 36, /* participant: prepare transaction `txn`'s
	                       * actions on this node (subs: PUT, DELETE,
	                       * UPDATE or CHECK requests; `node` keeps the
	                       * decision); answers one sub each. With
	                       * limit RPC_TXN_COMMIT, sent to the keeper
	                       * last: once prepared, also record COMMIT and
	                       * commit here (seq: the outcome) */
	RPC_TXN_FINISH = 37,  /* participant: commit (limit RPC_TXN_COMMIT)
	                       * or abort transaction `txn` here */
	RPC_TXN_DECIDE = 38,  /* decision keeper: record or read `txn`'s
	                       * outcome (limit RPC_TXN_*; node/txn.h) */
	RPC_TXN_TOKEN = 39,   /* token keeper: a ClientRequestToken's
	                       * record (limit RPC_TOKEN_*; node/txn.h) */
	RPC_CHECK = 40,       /* inside RPC_TXN_PREPARE only: a
	                       * ConditionCheck (a condition, no write) */
	RPC_TTL_UPDATE = 41,  /* catalog node: Time to Live of table
	                       * `table` on (its ttl_attr) or off (NULL) */
	RPC_TAGS = 42,        /* catalog node: set (limit RPC_TAGS_SET) or
	                       * remove (RPC_TAGS_REMOVE: by key) table
	                       * `table`'s tags to those it carries */
	/* On-demand backups (node/backup.h). */
	RPC_BACKUP = 43,      /* catalog node: limit RPC_BACKUP_*; answers
	                       * backups as wire_pack_backup blobs */
	RPC_BACKUP_TAKE = 44, /* owner: copy its partitions of `table` into
	                       * backup move_id; answers a part_stats each */
	RPC_BACKUP_RESTORE = 45, /* owner: fill its partitions of the new
	                          * table `table` from backup move_id */
	RPC_BACKUP_DROP = 46, /* any node: remove backup move_id's copies */
	RPC_INDEX_COLLECT = 47, /* any node: a step (limit RPC_COLLECT_*) of
	                         * a round collecting index tombstones
	                         * (node/index.h) */
} rpc_op;

/*
 * RPC_BACKUP's request (rpc_request.limit). CREATE: of table_name, the
 * backup's name in `item`; DESCRIBE, DELETE: the backup whose ARN is in
 * `item`; LIST: every backup (table_name NULL) or those of table_name;
 * RESTORE: create `table` (its name, schema and indexes) from the backup
 * whose ARN is in `item`, answering the table.
 */
#define RPC_BACKUP_CREATE 1
#define RPC_BACKUP_DESCRIBE 2
#define RPC_BACKUP_LIST 3
#define RPC_BACKUP_DELETE 4
#define RPC_BACKUP_RESTORE_TABLE 5
/* RPC_BACKUP_RESTORE with this limit: leave out the local indexes'
 * entries (the new table has none). */
#define RPC_BACKUP_NO_LOCAL 1

/* RPC_TXN_FINISH's and RPC_TXN_DECIDE's outcome (rpc_request.limit;
 * RPC_TXN_DECIDE answers it in resp.seq). */
#define RPC_TXN_COMMIT 1
#define RPC_TXN_ABORT 2
#define RPC_TXN_RESOLVE 3 /* DECIDE: the outcome, aborting if none yet */

/* RPC_TXN_TOKEN's step (rpc_request.limit); resp.seq answers RPC_TOKEN_*
 * states for BEGIN. */
#define RPC_TOKEN_BEGIN 1  /* claim: NEW, or the state of an earlier one */
#define RPC_TOKEN_DONE 2   /* the claimed transaction committed */
#define RPC_TOKEN_DROP 3   /* it was cancelled: the token is free again */
#define RPC_TOKEN_NEW 1
#define RPC_TOKEN_RUNNING 2
#define RPC_TOKEN_COMMITTED 3
#define RPC_TOKEN_MISMATCH 4

/*
 * A write to a table with secondary indexes answers, in resp.blobs, what
 * it cost each index it changed: RPC_INDEX_UNITS_LEN bytes each, the
 * index's table id (u32) and half write units (u64), little-endian. A
 * local index k has no table: its id is RPC_LOCAL_INDEX_ID(k).
 */
#define RPC_INDEX_UNITS_LEN 12
#define RPC_LOCAL_INDEX_ID(k) (0xFFFFFF00u | (uint32_t) (k))
#define RPC_IS_LOCAL_INDEX_ID(id) (((id) & 0xFFFFFF00u) == 0xFFFFFF00u)

/* RPC_TAGS's change (rpc_request.limit). */
#define RPC_TAGS_SET 1
#define RPC_TAGS_REMOVE 2

/* RPC_INDEX_COLLECT's step (rpc_request.limit; node/index.h). */
#define RPC_COLLECT_FENCE 1
#define RPC_COLLECT_MARK 2
#define RPC_COLLECT_LOW 3
#define RPC_COLLECT_SWEEP 4

/* RPC_INDEX_UPDATE's change (rpc_request.limit). */
#define RPC_INDEX_CREATE 1
#define RPC_INDEX_DELETE 2
#define RPC_INDEX_THROUGHPUT 3
#define RPC_INDEX_PAUSE 4  /* hold the index's replication (kv-admin) */
#define RPC_INDEX_RESUME 5

/* Why a partition is split or moved (rpc_request.reason). */
typedef enum rpc_reason {
	RPC_REASON_OPERATOR = 0,
	RPC_REASON_HEAT = 1,
	RPC_REASON_SIZE = 2,
	RPC_REASON_REBALANCE = 3,
	RPC_REASON_HOT_ITEM = 4,
} rpc_reason;

#define RPC_NODE_ADD 1
#define RPC_NODE_DRAIN 2

/* The steps of RPC_MOVE_STEP. */
#define MOVE_STEP_START 1 /* clear the range, reset the tally */
#define MOVE_STEP_COPY 2  /* pull one chunk from range_lo; apply it */
#define MOVE_STEP_DRAIN 3 /* pull written items once; apply them */
#define MOVE_STEP_ABORT 4 /* forget the move, clear the range */

/*
 * RPC_MOVE for tests: with limit = one of these, the move pauses
 * max_bytes ms after that step, so that a node can be killed there.
 */
#define MOVE_PAUSE_BEGIN 1    /* the source records writes */
#define MOVE_PAUSE_CHUNK 2    /* each chunk copied */
#define MOVE_PAUSE_COPY 3     /* the whole range copied */
#define MOVE_PAUSE_CATCH_UP 4 /* the writes made meanwhile copied */
#define MOVE_PAUSE_FENCE 5    /* the source fenced */
#define MOVE_PAUSE_TAKEN 6    /* the target took the partition, the
                               * catalog not yet changed */
/*
 * A planted fault, to show that the checkers of moves catch a lost
 * write: the move skips the catch-up (the writes made while it copied
 * are lost), after holding the copy max_bytes ms so that some are made.
 */
#define MOVE_PLANT_SKIP_CATCH_UP 100

/*
 * One partition's rates in an RPC_BORROW, little-endian: table id (4),
 * partition id (4), read and write units per second in thousandths (8
 * each).
 */
#define RPC_BORROW_ENTRY 24

/* The most cut points one SPLIT takes. */
#define RPC_MAX_CUTS 8

/* The most requests one MULTI carries (a BatchGetItem's 100 keys). */
#define RPC_MULTI_MAX 100
/* The most records one INDEX_APPLY carries (node/index.c). */
#define RPC_INDEX_APPLY_MAX 1000

/* Why a request was throttled (rpc_response.throttle, with KV_THROTTLED). */
#define RPC_THROTTLE_WRITE 1u       /* the write bucket; else the read one */
#define RPC_THROTTLE_PROVISIONED 2u /* the table's provisioned share binds;
                                     * else the partition's ceiling */
#define RPC_THROTTLE_TABLE_PROVISIONED 4u /* the table is PROVISIONED */
#define RPC_THROTTLE_INDEX 8u /* a global index of the table cannot take
                               * the write (resp.message: the index) */

typedef enum rpc_return {
	RPC_RETURN_NONE = 0,
	RPC_RETURN_ALL_OLD = 1,
	RPC_RETURN_UPDATED_OLD = 2,
	RPC_RETURN_ALL_NEW = 3,
	RPC_RETURN_UPDATED_NEW = 4,
} rpc_return;

typedef struct rpc_request {
	rpc_op op;
	uint32_t table_id;
	uint32_t part;  /* partition id within the table */
	uint64_t epoch; /* the epoch the router believes the partition has */
	const uint8_t *key;
	size_t key_len;
	const uint8_t *item; /* codec bytes (UPDATE: the key attributes) */
	size_t item_len;
	const uint8_t *condition; /* expr_codec bytes; NULL: none */
	size_t condition_len;
	const uint8_t *update;    /* expr_codec bytes (UPDATE) */
	size_t update_len;
	bool return_on_failure;   /* a failed condition returns the item */
	const uint8_t *range_lo;  /* RANGE: [range_lo, range_hi) */
	size_t range_lo_len;
	const uint8_t *range_hi;  /* NULL: to the partition's end */
	size_t range_hi_len;
	bool backward;            /* RANGE: descending key order */
	uint32_t limit;           /* RANGE: items to read at most; 0: any */
	uint64_t max_bytes;       /* RANGE: stop once this much was read */
	rpc_return return_values;
	bool consistent;
	const table *table;     /* CREATE_TABLE, ASSIGN; see wire_request_fini */
	const char *table_name; /* DELETE_TABLE; NULL when absent */
	uint64_t min_version;   /* CATALOG_GET: wanted at least this */
	uint32_t node;          /* ASSIGN: the node being told */
	const uint8_t **subs;   /* MULTI: packed requests (wire_pack_request);
	                         * INDEX_APPLY: records (node/index.h) */
	size_t *sub_lens;
	size_t n_subs;
	uint64_t move_id;       /* MOVE_*: the move */
	const uint64_t *cuts;   /* SPLIT: at most RPC_MAX_CUTS */
	size_t n_cuts;
	uint32_t reason;        /* SPLIT, MOVE: rpc_reason */
	uint64_t ack;           /* MOVE_DIRTY: the batch last applied */
	/* RANGE: 0 reads the table's items; k + 1 the entries of its local
	 * index k, with RPC_LOCAL_FETCH each with its whole item. */
	uint32_t local;
	uint64_t txn;           /* TXN_*: the transaction's id; GET: one of
	                         * RPC_TXN_READ* below */
} rpc_request;

/*
 * A GET's txn for TransactGetItems's reads. RPC_TXN_READ: is the item
 * locked, and its write stamp (resp.seq, node/store/store.h); charged
 * twice a strongly consistent read. RPC_TXN_READ_CHECK: no item read,
 * nothing charged; "locked" when it is locked or its stamp is no longer
 * `ack`.
 */
#define RPC_TXN_READ 1
#define RPC_TXN_READ_CHECK 2

#define RPC_LOCAL_FETCH 0x100

/* The most local secondary indexes a table has (DynamoDB's limit). */
#define WIRE_LOCAL_MAX 5

typedef struct part_stats {
	uint32_t table_id;
	uint32_t part;
	uint64_t epoch;
	uint64_t items;
	uint64_t bytes;
	/* Capacity (node/capacity/throttle.h); see PartStats in kv.proto. */
	int64_t read_rate, write_rate;
	int64_t read_credit, write_credit;
	uint64_t read_charged, write_charged;
	uint64_t read_admitted, write_admitted;
	uint64_t read_throttled, write_throttled;
	uint64_t prov_rcu, prov_wcu;
	/* Asked for one table: each local index's entries and their
	 * projected sizes, by the index's number (n_local of them). */
	uint32_t n_local;
	uint64_t local_items[WIRE_LOCAL_MAX], local_bytes[WIRE_LOCAL_MAX];
} part_stats;

typedef struct rpc_response {
	kv_err code;
	const char *message; /* NULL or a reason for the code */
	bool found;
	const uint8_t *item; /* codec bytes; NULL when absent */
	size_t item_len;
	catalog *cat;        /* CATALOG_GET; see wire_unpack_response */
	table *table;        /* CREATE_TABLE, DELETE_TABLE: the table */
	part_stats *stats;
	size_t n_stats;
	const uint8_t **items; /* RANGE: codec bytes of the matching items */
	size_t *item_lens;
	size_t n_items;
	uint32_t scanned;      /* RANGE: items read */
	uint64_t read_bytes;   /* RANGE: their sizes, summed */
	const uint8_t *last_item; /* RANGE: set when it stopped early */
	size_t last_item_len;
	uint32_t old_size, new_size; /* writes: for capacity units */
	uint32_t throttle;     /* KV_THROTTLED: RPC_THROTTLE_* bits */
	const uint8_t **subs;  /* MULTI: packed responses, in request order */
	size_t *sub_lens;
	size_t n_subs;
	const uint8_t **blobs; /* MOVE_PULL, MOVE_DIRTY: wire_pair each;
	                        * EVENTS, HOT_KEYS: a JSON text each */
	size_t *blob_lens;
	size_t n_blobs;
	uint64_t seq;          /* MOVE_DIRTY: this batch's number; GET with
	                        * RPC_TXN_READ: the item's write stamp */
	/* A write to a table with local indexes: the size of the item's
	 * collection after it (DynamoDB's ItemCollectionMetrics). */
	bool has_coll;
	uint64_t coll_size;
	bool locked;           /* GET: the item is in a prepared transaction */
} rpc_response;

/*
 * A key and its stored record as one blob: key length (4, little-endian),
 * key, record; an empty record means the key has no item (deleted).
 * wire_pair_make returns the blob in a (NULL: out of memory);
 * wire_pair_read splits one, false when it is malformed.
 */
uint8_t *wire_pair_make(arena *a, const uint8_t *k, size_t kl,
    const uint8_t *v, size_t vl, size_t *len);
bool wire_pair_read(const uint8_t *b, size_t len, const uint8_t **k,
    size_t *kl, const uint8_t **v, size_t *vl);

/*
 * wire_pack_request returns owned bytes (free with free()) holding r in
 * *out, length in *len. Borrows r. Returns KV_OK or KV_ENOMEM.
 */
kv_err wire_pack_request(const rpc_request *r, uint8_t **out, size_t *len);

/*
 * wire_unpack_request reads buf[0..len) into *r; every pointer in *r is
 * valid until arena_fini(a), except r->table, which is owned by *r until
 * wire_request_fini(r). Returns KV_OK, KV_PROTO or KV_ENOMEM; on failure
 * nothing needs freeing.
 */
kv_err wire_unpack_request(const uint8_t *buf, size_t len, arena *a,
    rpc_request *r);

/* wire_request_fini frees what an unpacked request owns; safe on zeroed. */
void wire_request_fini(rpc_request *r);

/* wire_pack_response: as wire_pack_request, for a response. */
kv_err wire_pack_response(const rpc_response *r, uint8_t **out, size_t *len);

/*
 * wire_unpack_response reads a response into *r; pointers are valid until
 * arena_fini(a), except r->cat and r->table, which *r owns until
 * wire_response_fini(r) (a router keeps a catalog beyond one request: it
 * may take r->cat and set it to NULL). On failure nothing needs freeing.
 */
kv_err wire_unpack_response(const uint8_t *buf, size_t len, arena *a,
    rpc_response *r);

/* wire_response_fini frees what an unpacked response owns; safe on zeroed. */
void wire_response_fini(rpc_response *r);

/*
 * wire_pack_catalog / wire_unpack_catalog serialise a whole catalog, for the
 * catalog node's durable copy. unpack returns an owned catalog in *out
 * (free with catalog_free()).
 */
kv_err wire_pack_catalog(const catalog *c, uint8_t **out, size_t *len);
kv_err wire_unpack_catalog(const uint8_t *buf, size_t len, catalog **out);

/* wire_pack_backup / wire_unpack_backup: one backup, owned
 * (backup_rec_fini); KV_CORRUPT for bytes that are not one. */
kv_err wire_pack_backup(const backup_rec *b, uint8_t **out, size_t *len);
kv_err wire_unpack_backup(const uint8_t *buf, size_t len, backup_rec *out);

/* wire_pack_table / wire_unpack_table: one table, owned (table_fini). */
kv_err wire_pack_table(const table *t, uint8_t **out, size_t *len);
kv_err wire_unpack_table(const uint8_t *buf, size_t len, table *out);

#endif
