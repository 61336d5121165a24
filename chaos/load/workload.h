/*
 * workload.h — what kv-load asks and what a right answer looks like: the
 * DynamoDB JSON of every request (GetItem, PutItem, UpdateItem, Query,
 * TransactWriteItems, TransactGetItems, BatchWriteItem for loading,
 * CreateTable, DescribeTable) and the check of every response. The only
 * file that knows DynamoDB's JSON shapes.
 *
 * Workloads and their operations:
 *
 *   put             PutItem of a drawn key, v padded to --item-size bytes
 *   get             GetItem of a drawn key; no Item is WRONG (MissingItem)
 *   query           Query pk = "q" Limit 10; a page not of 10 is BadPage.
 *                   With an index (--index): Query that global index,
 *                   whose keys are the g1 and g2 of --index-keys, for
 *                   g1 = one of the 256 buckets, uniformly, Limit 10;
 *                   more than 10 items, or an item of another bucket or
 *                   out of g2 order, is BadPage. Its --load writes
 *                   every key, key i with g1 = b<i mod 256> and g2 = i
 *   update-counter  UpdateItem SET n = if_not_exists(n, :z) + :one on "hot"
 *   counter         UpdateItem ADD n :one on a drawn key (1 WCU each)
 *   ycsb-a/b/c      GetItem, or UpdateItem SET v = :v with a fresh pad:
 *                   50/50, 95/5, 100/0
 *   ycsb-e          95 % Query pk = key AND sk >= s (s in 0..9, Limit
 *                   1..10), 5 % PutItem of a new sort key (10 and up)
 *   txn-put2        TransactWriteItems of 2 Puts, as put's, on 2 distinct
 *                   drawn keys
 *   txn-update4     TransactWriteItems of 4 Updates ADD n :one on 4
 *                   distinct drawn keys; its --load writes get's items
 *   txn-get4        TransactGetItems of 4 distinct drawn keys; an answer
 *                   without every item, in order, is WRONG (MissingItem,
 *                   WrongItem, BadShape)
 *
 * A transaction answered 400 TransactionCanceledException is CANCELED:
 * neither right nor wrong, counted apart, by the first reason that is
 * not None in its CancellationReasons (when it lists them, one per
 * action; a list of another length is WRONG, BadReasons).
 *
 * Table, index and key prefix go into JSON unescaped: kv_load.c admits
 * only characters that need no escaping. Read next: report.h.
 */
#ifndef KVLOAD_WORKLOAD_H
#define KVLOAD_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "http.h"
#include "zipf.h"

typedef enum workload_kind {
	WORKLOAD_PUT,
	WORKLOAD_GET,
	WORKLOAD_QUERY,
	WORKLOAD_UPDATE_COUNTER,
	WORKLOAD_COUNTER,
	WORKLOAD_YCSB_A,
	WORKLOAD_YCSB_B,
	WORKLOAD_YCSB_C,
	WORKLOAD_YCSB_E,
	WORKLOAD_TXN_PUT2,
	WORKLOAD_TXN_UPDATE4,
	WORKLOAD_TXN_GET4,
	WORKLOAD_KIND_COUNT
} workload_kind;

/* Operations, as counted in the report. */
typedef enum workload_op {
	WORKLOAD_OP_GET,
	WORKLOAD_OP_PUT,
	WORKLOAD_OP_UPDATE,
	WORKLOAD_OP_QUERY,
	WORKLOAD_OP_TXN_WRITE,
	WORKLOAD_OP_TXN_GET,
	WORKLOAD_OP_COUNT
} workload_op;

typedef enum workload_outcome {
	WORKLOAD_OK,
	WORKLOAD_THROTTLED, /* ThrottlingException and its kin */
	WORKLOAD_ERROR,     /* any other failure, by type */
	WORKLOAD_WRONG,     /* answered, but not what the data set implies */
	WORKLOAD_CANCELED,  /* a transaction refused as a whole (400
	                     * TransactionCanceledException), by reason */
} workload_outcome;

/* The most actions a transaction of kv-load's workloads has. */
#define WORKLOAD_TXN_MAX 4

/* What became of one request. */
typedef struct workload_verdict {
	workload_outcome outcome;
	char type[64];     /* error type: "ValidationException", "Transport" */
	char message[200]; /* the server's message, if any */
} workload_verdict;

/* What a request asked, kept until its answer is checked. */
typedef struct workload_req {
	workload_op op;
	char key[96];
	int64_t sk; /* ycsb-e: the Query's lowest sk, or the new sk put */
	int limit;  /* Query: Limit */
	/* A transaction: the keys of its actions, in order (key holds the
	 * first too), n_keys of them. */
	char keys[WORKLOAD_TXN_MAX][96];
	unsigned n_keys;
} workload_req;

typedef struct workload {
	workload_kind kind;
	const char *table;  /* borrowed; valid for the workload's life */
	const char *prefix; /* borrowed; likewise */
	size_t item_size;
	zipf keys;
	bool check;
	zipf_rng op_rng;  /* which operation */
	zipf_rng key_rng; /* which key, and the other choices */
	uint64_t seq;     /* fresh pads and new sort keys */
	/* --index-keys: a put also sets g1 (S, one of 256 buckets) and g2
	 * (N, a fresh number), which change on every write: keys for two
	 * global indexes, each write moving its entries. */
	bool index_keys;
	/* --index: the query workload reads this global index of a table
	 * written with --index-keys (g1 HASH, g2 RANGE) instead of the item
	 * collection "q"; NULL otherwise. Borrowed, like table. */
	const char *index;
	/* --collections: the data set is item collections, sort keys sk
	 * 0..9 under every key (ycsb-e's); get and put address one item
	 * of a drawn collection, query reads a drawn collection's page of
	 * 10. */
	bool collections;
	char *pad;        /* owned: item_size bytes and a NUL */
} workload;

/* workload_parse reads a --workload name. KV_EINVAL if unknown. */
kv_err workload_parse(const char *name, workload_kind *kind);

/* workload_name returns the name of kind ("ycsb-a"), static. */
const char *workload_name(workload_kind kind);

/* workload_op_name returns DynamoDB's name of op ("GetItem"), static. */
const char *workload_op_name(workload_op op);

/* workload_ops returns the operations kind uses, as 1 << op bits. */
unsigned workload_ops(workload_kind kind);

/* workload_range_key says whether kind needs the sort key sk (N). */
bool workload_range_key(workload_kind kind);

/*
 * workload_txn_items returns how many items one transaction of kind
 * touches, each on a distinct key (0 when kind is no transaction).
 */
unsigned workload_txn_items(workload_kind kind);

/*
 * workload_distinct_keys returns how many distinct keys draws over keys
 * can give: every rank, rank 0 as its shards when it is sharded.
 */
uint64_t workload_distinct_keys(const zipf *keys);

/*
 * workload_init prepares w. table and prefix are borrowed and must
 * outlive w; keys is copied. Returns KV_ENOMEM, with nothing to free.
 */
kv_err workload_init(workload *w, workload_kind kind, const char *table,
    const char *prefix, size_t item_size, const zipf *keys, uint64_t seed,
    bool check);

/* workload_fini frees w's memory; safe on a zeroed workload. */
void workload_fini(workload *w);

/* workload_pick draws the next operation of the mix. */
workload_op workload_pick(workload *w);

/*
 * workload_request draws the key and the rest of a request of type op,
 * fills *req and appends the JSON body to body. KV_ENOMEM on failure,
 * KV_EINVAL if a key does not fit req->key.
 */
kv_err workload_request(workload *w, workload_op op, workload_req *req,
    http_buf *body);

/*
 * workload_check judges the answer (status and body[0..len), borrowed) to
 * req: OK, THROTTLED, ERROR by __type, or WRONG when a 200 answer is not
 * what the loaded data implies; CANCELED for a transaction answered 400
 * TransactionCanceledException. Without checks, any 200 is OK.
 */
void workload_check(const workload *w, const workload_req *req, int status,
    const char *body, size_t len, workload_verdict *v);

/*
 * workload_classify judges any answer by its status and __type only: OK
 * for 200, THROTTLED or ERROR otherwise, with the message.
 */
void workload_classify(int status, const char *body, size_t len,
    workload_verdict *v);

/*
 * workload_create_table appends the CreateTable body for w's table, and
 * for its global index when the workload reads one.
 */
kv_err workload_create_table(const workload *w, http_buf *body);

/* workload_describe_table appends the DescribeTable body. */
kv_err workload_describe_table(const workload *w, http_buf *body);

/*
 * workload_table_ready reads a 200 DescribeTable answer: *active says
 * whether TableStatus is ACTIVE (and, with an index, its IndexStatus).
 * Returns KV_EINVAL, with the reason in why[0..whylen), when the key
 * schema is not the one the workload needs (pk S as hash key, and sk N as
 * range key exactly when it uses one; with an index, that global index
 * with g1 S as hash key and g2 N as range key), or KV_PROTO when the
 * answer is not a DescribeTable answer.
 */
kv_err workload_table_ready(const workload *w, const char *body, size_t len,
    bool *active, char *why, size_t whylen);

/* workload_load_items returns how many items --load writes (0: none). */
uint64_t workload_load_items(const workload *w);

/*
 * workload_load_batch appends a BatchWriteItem body putting items
 * first..first+n-1 of the data set (n <= 25). KV_ENOMEM on failure.
 */
kv_err workload_load_batch(const workload *w, uint64_t first, size_t n,
    http_buf *body);

/*
 * workload_unprocessed reads a 200 BatchWriteItem answer: *count is the
 * number of UnprocessedItems, and when it is not 0, retry gets a body
 * that sends them again. Returns KV_PROTO if the answer is not a
 * BatchWriteItem answer, KV_ENOMEM.
 */
kv_err workload_unprocessed(const char *body, size_t len, http_buf *retry,
    size_t *count);

#endif
