/*
 * heat.h — what makes a partition hot, and the monitor that splits it.
 *
 * Each partition keeps a top-k sketch of its item collections (keys by
 * partition-key hash) by the capacity they consumed and the requests
 * throttled on them: the space-saving algorithm (Metwally et al.), whose
 * counts overestimate a key by at most its entry's `err`, and which never
 * misses a key that holds more than 1/HEAT_TOPK of the weight. Counts are
 * halved every HEAT_DECAY_S seconds, with the partition's own totals, so
 * that the sketch follows the recent traffic. It is fed by the capacity
 * charges (throttle.c) under the partition's cap_mu.
 *
 * The monitor (one thread per node, once a second) reads every
 * partition's charged units: a partition that consumed at least
 * split_threshold of its read or write ceiling in each of split_after
 * consecutive seconds is hot, and the monitor asks the catalog node to
 * split it (RPC_SPLIT_ASK) at the cuts heat_cuts computes from the
 * sketch. A partition whose items pass split_size bytes is split at the
 * hash of its median byte. The catalog node refuses a request for a
 * partition that changed since (its epoch), so a repeated or late ask
 * does nothing.
 */
#ifndef KV_HEAT_H
#define KV_HEAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "catalog.h"
#include "err.h"

#define HEAT_TOPK 16
/* Encoded key bytes kept: for display, and as a cut (catalog.h). */
#define HEAT_PK_MAX PART_KEY_MAX
#define HEAT_DECAY_S 10

typedef struct heat_key {
	uint64_t h;         /* partition-key hash */
	uint64_t weight;    /* half units consumed + 2 per throttled request */
	uint64_t err;       /* weight may be overstated by this much */
	uint64_t rd, wr;    /* half units consumed (as counted here) */
	uint64_t throttled; /* requests refused */
	/*
	 * The key's bytes after the storage-key prefix (keyenc.h): the
	 * partition key, and for a partition of a single hash (whose sketch
	 * counts items, not collections: see heat_note) the sort key too;
	 * whole when `exact`, else cut short.
	 */
	uint8_t pk[HEAT_PK_MAX];
	uint8_t pk_len;
	bool exact;
} heat_key;

typedef struct heat {
	heat_key top[HEAT_TOPK];
	size_t n;
	uint64_t rd, wr, throttled; /* the partition's, decayed alike */
	int64_t decayed_s;          /* monotonic second of the last halving */
	/* The monitor's state. */
	uint64_t seen_rd, seen_wr;  /* charged counters at the last tick */
	uint32_t hot_s;             /* consecutive hot seconds */
	int64_t quiet_until_s;      /* no ask before this second */
} heat;

/*
 * heat_note adds one request on storage key key[0..kl) (NULL or shorter
 * than a key prefix: counted in the totals only): half_units consumed,
 * or a throttled request. A partition of many hashes counts item
 * collections (by partition-key hash); one of a single hash (by_key)
 * counts items, by their whole key, so that it can split on the sort
 * key. Needs the partition's cap_mu.
 */
void heat_note(heat *ht, const uint8_t *key, size_t kl, bool write,
    uint64_t half_units, bool throttled, bool by_key, int64_t now_s);

/*
 * heat_key_cuts chooses where a hot partition of a single hash splits
 * on the sort key (a keyed partition's bounds from/to: empty for the
 * first and the last key), weighing each key by its demand (units
 * consumed, and one per request throttled): a key with half or more ends
 * alone (cuts at it and just after it), else the cut falls at the key
 * where the weight, in key order, passes half. Cuts are key bytes after
 * the prefix (cut[k][0..cut_len[k])), strictly inside the bounds, in
 * increasing order; returns how many (0: it cannot split, e.g. one item
 * alone already), and sets *hot_item.
 */
size_t heat_key_cuts(const heat *ht, const uint8_t *from, size_t from_len,
    const uint8_t *to, size_t to_len, bool write,
    uint8_t cut[2][HEAT_PK_MAX], size_t cut_len[2], bool *hot_item);

/*
 * heat_cuts chooses where a hot partition [lo, last] splits, from its
 * sketch, in the write (write) or read dimension: when one key holds at
 * least half of the weight, cuts that leave its hash alone (one or two);
 * else the one hash that best halves the weight, counting the weight
 * outside the sketch as spread evenly over the range. Returns the number
 * of cuts written to cuts[0..2) in increasing order (each in (lo, last]),
 * 0 when the partition cannot split (a single hash), and sets *hot_item.
 */
size_t heat_cuts(const heat *ht, uint64_t lo, uint64_t last, bool write,
    uint64_t cuts[2], bool *hot_item);

/*
 * heat_key_text writes a key value for people: S as the string, N as the
 * number, B as base16, with the type ("S:PROD#1").
 */
void heat_key_text(const heat_key *k, char *buf, size_t len);

typedef struct node node;
typedef struct heat_mon heat_mon;

/*
 * heat_mon_start starts the node's monitor (when heat or size splits are
 * on in n->cfg). KV_OK or KV_ENOMEM. heat_mon_stop stops and frees it.
 */
kv_err heat_mon_start(node *n);
void heat_mon_stop(node *n);

/* The top keys of this node's partitions (RPC_HOT_KEYS), as JSON. */
struct rpc_request;
struct rpc_response;
struct arena;
void hot_keys_serve(node *n, const struct rpc_request *req, struct arena *a,
    struct rpc_response *resp);

/* heat_now_s: the monotonic clock in seconds, as heat_note takes it. */
int64_t heat_now_s(void);

#endif
