/*
 * plant.h — planted faults: bugs a node commits on purpose, once, so
 * that a chaos experiment's checker can be shown to catch them
 * (chaos/README.md). Off unless kv-node is started with --plant
 * KIND[:N]; nothing here runs otherwise but a comparison of an enum.
 *
 * Each kind fires exactly once, at the Nth event it counts (N: 200 by
 * default), then never again:
 *   lose-ack    the Nth PutItem is answered as done and not written;
 *   dup-id      the Nth UpdateItem is answered (its ReturnValues too)
 *               and not written, so the next one computes from the
 *               same old value: an ID generator hands a range out twice;
 *   stale-read  the Nth PutItem/UpdateItem keeps a copy of the record it
 *               replaces, and the first GetItem of that item at least
 *               100 ms later is answered with the copy (or "no item");
 *   txn-half    the Nth committed transaction action to reach this node
 *               is dropped: its prepared record goes, the item is not
 *               written (half a transaction);
 *   index-drop  the Nth index record applied here that removes a live
 *               entry is acknowledged and not written: the entry stays
 *               for good (an index that never converges);
 *   collect-early  node 0's tombstone collector, while it has not
 *               fired, goes on with a round without the nodes it cannot
 *               reach and without waiting for any outbox; the Nth such
 *               round that deletes tombstones is the event (an older
 *               put still in the unreached node's outbox can then bring
 *               its entry back).
 *
 * Locking: the counter is atomic; the stale-read copy is guarded by mu.
 */
#ifndef KV_NODE_PLANT_H
#define KV_NODE_PLANT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

typedef enum plant_kind {
	PLANT_NONE = 0,
	PLANT_LOSE_ACK,
	PLANT_DUP_ID,
	PLANT_STALE_READ,
	PLANT_TXN_HALF,
	PLANT_INDEX_DROP,
	PLANT_COLLECT_EARLY,
} plant_kind;

typedef struct plant {
	plant_kind kind;
	uint64_t after;       /* fires at this event (1-based) */
	_Atomic uint64_t seen; /* events counted so far */
	pthread_mutex_t mu;   /* guards the stale-read copy below */
	bool held, served;
	uint8_t *key, *rec;   /* owned; rec NULL: the item was absent */
	size_t key_len, rec_len;
	int64_t held_ms;      /* CLOCK_MONOTONIC when the copy was kept */
} plant;

/* plant_parse sets p from "KIND" or "KIND:N"; KV_EINVAL if unknown. */
kv_err plant_parse(plant *p, const char *spec);

/* plant_fire counts an event of kind k: true exactly once, at the Nth
 * event of p's kind (false for every other kind). */
static inline bool
plant_fire(plant *p, plant_kind k)
{
	if (p->kind != k)
		return false;
	return atomic_fetch_add(&p->seen, 1) + 1 == p->after;
}

/* plant_armed says whether p is of kind k and has not fired yet. */
static inline bool
plant_armed(plant *p, plant_kind k)
{
	return p->kind == k && atomic_load(&p->seen) < p->after;
}

/* plant_keep keeps the record rec (NULL: none) that a write of key is
 * about to replace (stale-read, after plant_fire said so). */
void plant_keep(plant *p, const uint8_t *key, size_t key_len,
    const uint8_t *rec, size_t rec_len);

/*
 * plant_stale hands out the kept record for a read of key (once, and
 * only 100 ms or more after it was kept, so that the write it predates
 * was answered): true with *rec (malloc'd, NULL for "no item") and
 * *rec_len set; false otherwise.
 */
bool plant_stale(plant *p, const uint8_t *key, size_t key_len,
    uint8_t **rec, size_t *rec_len);

#endif
