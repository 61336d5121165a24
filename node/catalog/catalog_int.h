/*
 * catalog_int.h — the catalog node's state, shared by catalog_node.c
 * (tables' life cycle) and reshape.c (splits, moves and their events).
 * Private to those two files.
 *
 * Locking rule: mu guards cat, resend, stop, the catalog record in the
 * store, and the reshape fields below marked so; publish under mu, talk
 * to other nodes without it. move_serial is held for the whole of a
 * move (one move at a time in a cluster) and taken before mu, never
 * while holding it.
 */
#ifndef KV_CATALOG_INT_H
#define KV_CATALOG_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "catalog.h"
#include "feed.h"
#include "store.h"
#include "wire.h"

typedef struct node node;
typedef struct catalog_state catalog_state;

#define EVENTS_KEPT 256

/* One split or move, as `./kv status --events` shows it. */
typedef struct reshape_event {
	uint64_t seq;
	char *json; /* owned */
} reshape_event;

struct catalog_state {
	pthread_mutex_t mu;
	pthread_cond_t cv; /* signalled when a table needs the worker */
	catalog *cat;
	uint32_t *resend; /* ids of tables whose owners must hear again */
	size_t n_resend;
	bool stop;
	pthread_t worker;
	feed_pub *pub; /* the catalog feed; NULL without a bus address */
	/* Reshaping (reshape.c). */
	pthread_mutex_t move_serial;
	uint32_t moving_table, moving_part; /* under mu; table 0: none */
	reshape_event events[EVENTS_KEPT];  /* under mu: a ring */
	uint64_t next_seq;                  /* under mu */
	uint64_t splits[5];                 /* under mu: by rpc_reason */
	uint64_t moves[5], moves_failed[5]; /* under mu: by rpc_reason */
	/* Borrowing: the counters of the last round (the health thread's
	 * own, not under mu). */
	struct borrow_prev *prev;
	size_t n_prev;
	int64_t prev_ms;
	uint64_t lent_rounds; /* under mu: rounds that lent anything */
	/*
	 * Which nodes take partitions (under mu, durable under NODES_KEY):
	 * a standby node of the cluster file once added, any node unless
	 * drained (catalog_node_eligible).
	 */
	uint64_t added_nodes, drained_nodes;
	/* Pieces of heat splits to place on the least loaded node (under
	 * mu), for the mover thread. */
	struct { uint32_t table_id, part; } place[64];
	size_t n_place;
	pthread_t mover;
	bool mover_started;
	/* Backups (backup/keep.c), under mu: their records, and whether a
	 * CREATING or DELETED one waits for the worker. */
	backup_rec *backups;
	size_t n_backups;
	bool backups_due;
};

struct borrow_prev {
	uint32_t table_id, part;
	uint64_t rd, wr, rd_thr, wr_thr; /* charged half units, throttles */
};

/*
 * catalog_publish_locked writes c as the durable catalog (with `extra`,
 * one more operation in the same batch, unless NULL), makes it current
 * and publishes the change on the feed, all under mu so that changes go
 * out in version order. Takes c on success. Needs mu.
 */
kv_err catalog_publish_locked(node *n, catalog *c, const store_op *extra);

/*
 * catalog_insert_locked adds a new table like `want` to c (a clone):
 * CREATING, with its id, partitions placed, and a table for each of its
 * global indexes. KV_TABLE_EXISTS, KV_ENOMEM. Needs mu.
 */
kv_err catalog_insert_locked(node *n, catalog *c, const table *want);

/*
 * Answers with table t of the changed catalog *c and publishes *c, which
 * becomes the catalog's (*c NULL) when that worked; resp->code says how
 * it went. Needs mu.
 */
void catalog_answer_publish_locked(node *n, catalog **c, const table *t,
    rpc_response *resp);

/* Queues table id for a fresh ASSIGN to its owners. Needs mu. */
void catalog_resend_add_locked(catalog_state *cs, uint32_t id);

/*
 * catalog_tell sends one verb about t (ASSIGN with the catalog version
 * it comes from, or DROP_TABLE) to node i, locally without the wire.
 * Returns the call's or the verb's error.
 */
kv_err catalog_tell(node *n, uint32_t i, rpc_op op, const table *t,
    uint64_t version);

/* The table named name in c, or NULL. */
table *catalog_find_mut(catalog *c, const char *name);

/* A deep copy of t into resp->table (for answers). */
kv_err catalog_copy_out(const table *t, rpc_response *resp);

int64_t catalog_now_ms(void);

/* Whether node i takes new partitions. Needs mu. */
bool catalog_node_eligible(node *n, uint32_t i);

/* Writes added_nodes and drained_nodes durably. Needs mu. */
kv_err catalog_nodes_save_locked(node *n);

/* reshape.c: starts and stops the mover thread (placement after heat
 * splits). */
kv_err reshape_start(node *n);
void reshape_stop(node *n);

/* reshape.c: finishes or undoes a move cut short by a restart. */
void reshape_recover(node *n);

/* reshape.c: frees the events. */
void reshape_fini(catalog_state *cs);

#endif
