/*
 * txn.h — a node's side of TransactWriteItems: two-phase commit with the
 * router as coordinator (docs/design-notes.md, "Transactions").
 *
 * Prepare (RPC_TXN_PREPARE) takes a transaction's actions on this node:
 * under the mutexes of their partitions it checks each (not locked by
 * another transaction, admitted by the write bucket, its condition true
 * on the stored item, the new item valid) and, when every one passes,
 * writes a prepared record per action in one durable batch and locks the
 * items. A prepared item refuses single-item writes
 * (TransactionConflictException) and other transactions
 * (TransactionConflict) until its transaction finishes; reads see the
 * item as last committed.
 *
 * The router then asks one participant, the transaction's decision
 * keeper, to record COMMIT (RPC_TXN_DECIDE), and tells every participant
 * to commit or abort (RPC_TXN_FINISH). A commit writes each prepared
 * item with its index records and deletes its prepared record in the
 * same batch; an abort deletes the prepared records.
 *
 * Crashes: prepared records are read back at start and lock their items
 * again. A transaction prepared here longer than TXN_RESOLVE_MS asks its
 * decision keeper for the outcome (RPC_TXN_DECIDE with RESOLVE), which
 * records ABORT if nothing was decided yet, so a coordinator that dies
 * at any point leaves nothing locked for long and nothing half applied:
 * a COMMIT recorded means every participant commits, in the end.
 *
 * Records (table id 0, like the node's other metadata): 'T', txn, action
 * number: a prepared action; 'X', txn: an outcome; 'K', token hash: a
 * ClientRequestToken (10 minutes).
 *
 * Locking: the lock table is behind txn_state.mu, taken after partition
 * mutexes and never while waiting on anything else.
 */
#ifndef KV_TXN_H
#define KV_TXN_H

#include "node.h"

#define TXN_RESOLVE_MS 2000   /* prepared this long: ask for the outcome */
#define TXN_KEEP_MS 600000    /* outcomes and tokens are kept 10 minutes */

/* txn_open reads the prepared records back and starts the resolver. */
kv_err txn_open(node *n);

/* txn_close stops the resolver and frees the lock table. */
void txn_close(node *n);

/*
 * txn_locked reports whether storage key k is locked by a prepared
 * transaction. Cheap when none is prepared. For the single-item writes,
 * with the key's partition mutex held (a prepare takes it too).
 */
bool txn_locked(node *n, const uint8_t *k, size_t kl);

/*
 * txn_range_busy reports whether a prepared transaction holds an item of
 * table_id with a hash in [lo, last]: a move of such a range waits.
 */
bool txn_range_busy(node *n, uint32_t table_id, uint64_t lo, uint64_t last);

void txn_prepare_serve(node *n, const rpc_request *req, arena *a,
    rpc_response *resp);
void txn_finish_serve(node *n, const rpc_request *req, arena *a,
    rpc_response *resp);
void txn_decide_serve(node *n, const rpc_request *req, arena *a,
    rpc_response *resp);
void txn_token_serve(node *n, const rpc_request *req, arena *a,
    rpc_response *resp);

#endif
