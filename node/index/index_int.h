/*
 * index_int.h — what the files of node/index/ share: global secondary
 * indexes on the nodes (see ../index.h). outbox.c: the view and the base
 * write's records; apply.c: the index owner's side; fill.c: filling a
 * new index; replicate.c: the replicator, start and stop, metrics.
 *
 * An outbox record's key is {0, 0, 0, 0, 'O'}, the index table's id
 * (big-endian u32) and the record's number (big-endian u64): each
 * index's records read in the order they were written, and one index
 * paused or behind holds up no other. Its value:
 *
 *   OFFSET  SIZE  FIELD (numbers little-endian)
 *   0       4     the index table's id
 *   4       8     the base partition's epoch
 *   12      8     the record's number (again, for the version)
 *   20      1     1 put, 2 delete
 *   21      4     n: the entry's storage key length
 *   25      n     the entry's storage key
 *   25+n    4     put: the projected item's DynamoDB size
 *   29+n    var   put: the projected item (codec)
 *
 * Sent to an index node, each record is preceded by the partition id
 * (u32) and epoch (u64) that the replicator routed it to.
 */
#ifndef KV_INDEX_INT_H
#define KV_INDEX_INT_H

#include "index.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bytes.h"
#include "capacity.h"
#include "cluster.h"
#include "codec.h"
#include "index_key.h"
#include "item.h"
#include "keyenc.h"
#include "move.h"
#include "part.h"
#include "throttle.h"

#define OUTBOX_KEY_LEN 17
#define MAX_COUNTED 256 /* indexes whose pending records are counted */
#define PRESSURE_US 1000000 /* a refusal holds base writes back this long */
#define SWEEP_US 5000000 /* the replicator's look at the whole outbox */
#define REC_HEAD 25           /* the fixed part of a record's value */
#define ROUTE_HEAD INDEX_ROUTE_LEN /* partition id and epoch first */
#define REPL_MAX_RECORDS RPC_INDEX_APPLY_MAX /* per round: one RPC's most */
#define REPL_MAX_BYTES (1u << 20)
#define REPL_IDLE_MS 100      /* wait for a kick at most this long */
#define REPL_RETRY_MS 50      /* after a failed send */
#define REPL_CALL_MS 5000
#define REPL_TOGETHER_US 25000 /* older records: to all owners at once */
#define REPL_SPACING_MS 10    /* rounds that send, at most one per */

enum { REC_PUT = 1, REC_DELETE = 2 };

#define FILL_CHUNK 64 /* items a fill takes under one partition lock */

/* A fill of one index from this node's partitions of its base table. */
typedef struct fill {
	uint32_t base_id, index_id;
	struct fill_done {
		uint32_t part;
		uint64_t epoch;
	} *done;            /* partitions filled, at that epoch */
	size_t n_done, cap;
	bool running;       /* its thread has not ended */
	uint64_t end_num;   /* the outbox number when it last ended */
	bool joinable;      /* a thread to join */
	pthread_t thread;
	node *n;
	struct fill *next;
} fill;

typedef struct index_state {
	pthread_rwlock_t view_lock;
	catalog *view; /* guarded by view_lock */
	_Atomic uint64_t clock; /* the last outbox number given */
	uint64_t floor; /* the replicator's: outbox_floor_key's value */
	pthread_mutex_t mu;     /* guards kicked, stop */
	pthread_cond_t cv;
	bool kicked, stop, started;
	pthread_t thread;
	/* Counters, for /metrics. */
	_Atomic uint64_t records_written, records_read, records_sent;
	_Atomic uint64_t rounds_sent; /* replicator rounds that sent */
	_Atomic uint64_t records_dropped;
	_Atomic uint64_t applied, stale_skipped, send_failures;
	_Atomic uint64_t applies;       /* apply batches served here */
	_Atomic uint64_t filled;        /* items given records by fills */
	int64_t swept_us; /* the replicator's last look at the whole outbox */
	/* Records waiting per index, and the number of the oldest at the
	 * replicator's last look (0: none), guarded by count_mu. */
	pthread_mutex_t order_mu; /* index_order_lock */
	pthread_mutex_t count_mu;
	struct index_count {
		uint32_t id;
		int64_t pending;
		uint64_t oldest;
		/* Its owners refused its records for want of capacity:
		 * until then, with the refusal's RPC_THROTTLE_* bits. */
		int64_t pressed_until_us;
		uint32_t pressed_bits;
		/* The replicator's next read starts at this number: every
		 * record before it is sent and deleted. Reading from the
		 * start of the index would step over the deleted records'
		 * tombstones, as many as the store has not compacted away. */
		uint64_t cursor;
		/* Its records wait (a pause, the delay): the replicator
		 * looks again no sooner than this. */
		int64_t idle_until_us;
	} counts[MAX_COUNTED];
	size_t n_counts;
	pthread_mutex_t fill_mu;        /* guards fills and their fields */
	fill *fills;
	/* Collecting tombstones (collect.c; ../index.h). */
	uint64_t boot;             /* this start's id: the clock at open */
	_Atomic uint64_t tombs;    /* tombstones written here */
	/* Of them, those where no tombstone was (written over one, one
	 * stays), and tombstones a put wrote over (gone uncollected): the
	 * store holds added - replaced - collected, moves aside. */
	_Atomic uint64_t tombs_added, tombs_replaced;
	_Atomic uint64_t collected; /* tombstones deleted by sweeps here */
	pthread_mutex_t collect_mu; /* guards round */
	struct collect_round {
		uint64_t fence;       /* the round's fence (0: none) */
		uint64_t fence_tombs; /* tombs at the fence */
		uint64_t clean_tombs; /* tombs at the fence of the last round
		                       * that left none (UINT64_MAX: not
		                       * known, as at start) */
		uint32_t at_table, at_part; /* the sweep goes on there */
		uint8_t *from;        /* after this key (NULL: the start) */
		size_t from_len;
		uint64_t deleted;     /* this round's */
		uint64_t left;        /* tombstones it kept (too young,
		                       * changed, or of a waiting index) */
		bool busy;            /* a SWEEP is running */
	} round;
	uint64_t last_left;        /* the last finished sweep's left */
	/* The collector (the catalog node's), guarded by coll_mu. */
	pthread_mutex_t coll_mu;
	pthread_cond_t coll_cv;
	bool coll_stop, coll_started;
	pthread_t coll_thread;
	_Atomic uint64_t rounds[3]; /* COLLECT_ROUND_*: rounds that ended so */
	_Atomic uint64_t sweep_us;  /* the swept rounds' SWEEP steps, summed */
} index_state;

enum { COLLECT_ROUND_SWEPT, COLLECT_ROUND_IDLE, COLLECT_ROUND_ENDED };

static const uint8_t outbox_lo[5] = { 0, 0, 0, 0, 'O' };
static const uint8_t outbox_hi[5] = { 0, 0, 0, 0, 'O' + 1 };
/*
 * The highest outbox number deleted so far (big-endian u64), written in
 * the batch that deletes records: a restarted node numbers from above it
 * and above the records left, so its records outrank the entries it made
 * before even if the wall clock went back meanwhile.
 */
static const uint8_t outbox_floor_key[5] = { 0, 0, 0, 0, 'o' };

static inline int64_t
now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/*
 * The count of index id, added when missing. A full table gives the slot
 * of an index with nothing waiting and no pressure left to a new one (a
 * node outlives many indexes; its cursor restarts at the outbox's start,
 * which costs a step over tombstones, not a record); NULL only when every
 * slot has records waiting (the sweep finds the rest later). Needs
 * count_mu.
 */
static inline struct index_count *
count_of(index_state *s, uint32_t id)
{
	size_t slot = s->n_counts;
	for (size_t i = 0; i < s->n_counts; i++)
		if (s->counts[i].id == id)
			return &s->counts[i];
	if (slot == MAX_COUNTED) {
		int64_t now = now_us();
		for (slot = 0; slot < MAX_COUNTED; slot++)
			if (s->counts[slot].pending <= 0 &&
			    s->counts[slot].pressed_until_us <= now)
				break;
		if (slot == MAX_COUNTED)
			return NULL;
	} else {
		s->n_counts++;
	}
	s->counts[slot] = (struct index_count) { .id = id };
	return &s->counts[slot];
}

/* A record as read from the outbox or a request (index_rec_parse). */
typedef struct rec {
	uint32_t part;
	uint64_t part_epoch;
	uint32_t index_id;
	uint64_t v_epoch, v_num;
	int kind;
	const uint8_t *key;
	size_t kl;
	uint32_t size;
	const uint8_t *item;
	size_t il;
} rec;

/* Whether d is a global index that writes keep (not local, not going). */
bool index_kept_global(const index_def *d);

/* index_outbox for one global index d of t; its cost in *half (outbox.c). */
kv_err index_outbox_one(node *n, const table *t, const index_def *d,
    uint64_t epoch, const value *old, const value *cur, arena *a,
    store_batch *b, uint64_t *half);

/* The attribute of item (NULL: none) named by k, or NULL (outbox.c). */
const value *index_attr_of(const value *item, const key_def *k);

/* The attributes of item that index d of t projects, in a (outbox.c). */
kv_err index_project(const table *t, const index_def *d, const value *item,
    arena *a, value *out);

/* The next outbox number: the clock in µs, above the last one given
 * (outbox.c). */
uint64_t index_next_number(index_state *s);

/*
 * index_outbox_waiting puts in ids[0..*n) (at most cap) the indexes that
 * have a record numbered `max` or below in this node's outbox
 * (replicate.c). KV_OK or the store's failure.
 */
kv_err index_outbox_waiting(node *n, uint64_t max, uint32_t *ids,
    size_t cap, size_t *n_ids);

/* Frees what the collection's state holds (collect.c). */
void index_collect_fini(index_state *s);

/* Reads a record (routed: with its partition first); false if malformed
 * (apply.c). */
bool index_rec_parse(const uint8_t *p, size_t len, bool routed, rec *r);

#endif
