/*
 * txn_int.h — what the files of node/txn/ share (see ../txn.h).
 * locks.c: the lock table, start and the resolver; prepare.c: prepare;
 * finish.c: commit and abort; keep.c: outcomes and tokens.
 *
 * A prepared action's record: key {0, 0, 0, 0, 'T'}, the transaction's
 * id (big-endian u64), the action's number (big-endian u16); value:
 *
 *   OFFSET  SIZE  FIELD (little-endian)
 *   0       4     the decision keeper's node
 *   4       4     the table id
 *   8       1     TXN_PUT (a record follows the key), TXN_DELETE or
 *                 TXN_CHECK (a ConditionCheck: the item is only locked)
 *   9       4     n: the item's storage key length
 *   13      n     the item's storage key
 *   13+n    var   TXN_PUT: the item's new record
 */
#ifndef KV_TXN_INT_H
#define KV_TXN_INT_H

#include "txn.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bytes.h"
#include "keyenc.h"

#define TXN_KEY_LEN 15
#define TXN_HEAD 13
#define LOCK_BUCKETS 1024
#define RESOLVE_TICK_MS 200
#define SWEEP_KEEP_MS 60000 /* outcomes and tokens looked over this often */
#define KEEP_CALL_MS 2000

enum { TXN_PUT = 1, TXN_DELETE = 2, TXN_CHECK = 3 };

typedef struct ptxn ptxn;

/*
 * What prepare saw of an action, for its commit to reuse instead of
 * reading the store again: the item's stored record (old, ol; NULL when
 * there was none) with its write stamp taken before that read, and the
 * prepared record's stamp taken after it was written. A commit that
 * finds both stamps unchanged (store.h) knows that the item is still
 * what prepare read and that its prepared record is still there (no
 * other finish wrote it); any other answer, a restart's among them,
 * sends it to the store. valid is false when a stamp could not be taken.
 */
typedef struct txn_seen {
	bool valid;
	uint64_t item_stamp, rec_stamp;
	const uint8_t *old;
	size_t ol;
} txn_seen;

/*
 * A locked item, with its action's prepared record as the store holds it
 * (so that a finish reads it here instead of scanning the store): rec is
 * the record's key (TXN_KEY_LEN bytes) then its rl bytes of value; key
 * points into the value. seen: what prepare read (its old owned here).
 */
typedef struct lockent {
	uint8_t *rec; /* owned */
	size_t rl;
	const uint8_t *key;
	size_t kl;
	txn_seen seen;
	ptxn *t;
	struct lockent *next; /* in its bucket */
} lockent;

/* A transaction prepared here. */
struct ptxn {
	uint64_t id;
	uint32_t keeper;      /* the node that keeps its outcome */
	int64_t since_us;     /* prepared (or read back) at */
	bool resolving;       /* a finish or the resolver is at it */
	lockent **ents;       /* its locked items (owned) */
	size_t n;
	ptxn *next;
};

typedef struct txn_state {
	pthread_mutex_t mu;  /* guards buckets, txns */
	atomic_size_t n_locked;
	lockent *buckets[LOCK_BUCKETS];
	ptxn *txns;
	pthread_mutex_t keep_mu; /* outcome and token records' read-modify-write */
	pthread_mutex_t run_mu;  /* guards stop */
	pthread_cond_t cv;
	bool stop, started;
	pthread_t thread;
	int64_t swept_us;
} txn_state;

static inline int64_t
txn_now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* The key of action `seq` of transaction id, in buf. */
static inline void
txn_key(uint64_t id, uint16_t seq, uint8_t buf[TXN_KEY_LEN])
{
	memset(buf, 0, 4);
	buf[4] = 'T';
	bytes_put_be64(buf + 5, id);
	buf[13] = (uint8_t) (seq >> 8);
	buf[14] = (uint8_t) seq;
}

/*
 * txn_add_locked records transaction id (keeper: its decision keeper) as
 * prepared here with the actions whose prepared records are recs[0..n)
 * (each its key, TXN_KEY_LEN bytes, then vls[i] bytes of value, as
 * checked by txn_record_ok), locking their items; seen[i] (copied), when
 * seen is not NULL, is what prepare read of action i. Needs mu. KV_OK or
 * KV_ENOMEM (nothing added).
 */
kv_err txn_add_locked(txn_state *s, uint64_t id, uint32_t keeper,
    uint8_t *const *recs, const size_t *vls, const txn_seen *seen,
    size_t n);

/* Whether a prepared record's key and value are well formed. */
static inline bool
txn_record_ok(size_t kl, const uint8_t *v, size_t vl)
{
	return kl == TXN_KEY_LEN && vl >= TXN_HEAD &&
	    bytes_get_le32(v + 9) <= vl - TXN_HEAD;
}

/* txn_find_locked returns the prepared transaction id, or NULL. Needs mu. */
ptxn *txn_find_locked(txn_state *s, uint64_t id);

/* txn_drop_locked unlocks t's items and forgets it. Needs mu. */
void txn_drop_locked(txn_state *s, ptxn *t);

/* txn_is_locked is txn_locked with mu held. */
bool txn_is_locked(txn_state *s, const uint8_t *k, size_t kl);

/*
 * txn_finish commits (commit true) or aborts transaction id here: see
 * finish.c. KV_OK, or KV_BUSY when it must be tried again later (the
 * view of the catalog is behind), or the store's error.
 */
kv_err txn_finish(node *n, uint64_t id, bool commit);

/*
 * txn_decide records or reads transaction id's outcome on this node (its
 * decision keeper): mode RPC_TXN_COMMIT records COMMIT unless an outcome
 * is there, RPC_TXN_RESOLVE records ABORT unless one is there. The
 * outcome in *out (RPC_TXN_COMMIT or RPC_TXN_ABORT). keep.c.
 */
kv_err txn_decide(node *n, uint64_t id, uint32_t mode, uint32_t *out);

/*
 * txn_decide_add is txn_decide's first half, with keep_mu held: it adds
 * the outcome's record to b (when none is there; the caller writes b
 * before letting go of keep_mu), in a.
 */
kv_err txn_decide_add(node *n, uint64_t id, uint32_t mode, arena *a,
    store_batch *b, uint32_t *out);

/* txn_sweep_kept deletes the outcomes and tokens older than TXN_KEEP_MS. */
void txn_sweep_kept(node *n);

#endif
