/*
 * move.h — a partition's move to another node, as its two owners see it
 * (the catalog node drives it: node/reshape.c).
 *
 * The source keeps serving while the target copies: MOVE_BEGIN makes the
 * source record the key of every item written to the partition from then
 * on (the partition's write set, in memory); the target pulls the range
 * in chunks (MOVE_PULL), then pulls the written items again (MOVE_DIRTY)
 * until few are left; MOVE_FENCE raises the source's epoch durably to one
 * that no router holds, after which it serves nothing of the partition;
 * a last MOVE_DIRTY empties the write set, and the catalog hands the
 * partition over. The copy's chunks go into a sorted load (store.h) that
 * is applied, all at once, with the last chunk, before any catch-up; each
 * catch-up step applies what it pulled before the next step starts. Every
 * value is read from the source's store when it is pulled, so the value
 * the target holds last for a key is one the source held after that key's
 * last write: nothing written is lost, and nothing is applied twice (a
 * record is a whole item, not a delta). A copy step that fails forgets
 * the move on the target, so nothing builds on a load with a gap.
 *
 * The write set and the move's id live in the partition (part.h: guarded
 * by its mu). They are not durable: a source that restarts forgets the
 * move, and its next step answers KV_BUSY ("no such move"), which makes
 * the catalog node abort it. The target's state is one slot per node
 * (moves are one at a time in a cluster), guarded by node.move_mu.
 */
#ifndef KV_MOVE_H
#define KV_MOVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "err.h"
#include "wire.h"

struct arena;

typedef struct part part;
typedef struct node node;

/* The keys written since a move began (a hash set of owned copies). */
typedef struct key_set {
	struct key_slot *slots;
	size_t n, cap;
} key_set;

/*
 * move_note records key in p's write set when a move of p is under way.
 * Needs p->mu. Out of memory marks the set lost (the move aborts).
 */
void move_note(part *p, const uint8_t *key, size_t key_len);

/* move_forget drops p's move state. Needs p->mu or sole ownership. */
void move_forget(part *p);

/*
 * move_tally gives the items and bytes the target copied for the move of
 * partition part_id of table_id under way here; false when there is
 * none. ASSIGN takes them for the partition it creates, so that the
 * hand-over (the time writes are fenced) does not count the range again.
 */
bool move_tally(node *n, uint32_t table_id, uint32_t part_id,
    uint64_t *items, uint64_t *bytes);

/*
 * move_call sends one step of a move to node i (locally without the
 * wire), waits timeout_ms for its answer, and returns the call's or the
 * step's error. A node that is not connected (its link reconnecting) is
 * tried again for MOVE_RECONNECT_MS: every step is idempotent (the write
 * set's batches are acknowledged, a repeated copy step is answered
 * again), so sending one again is safe. The catalog node waits
 * MOVE_STEP_MS for a step, longer than a target waits for the source
 * (MOVE_PULL_MS, plus its reconnection), so that a step's failure comes
 * back as the step's own answer rather than as a timeout.
 */
#define MOVE_RECONNECT_MS 2000
#define MOVE_PULL_MS 3000
#define MOVE_STEP_MS 8000
kv_err move_call(node *n, uint32_t i, const rpc_request *req, arena *a,
    rpc_response *resp, int timeout_ms);

/*
 * move_target_close frees the target's move state at exit (a copy not
 * yet applied is dropped, as a restart would). No step may run.
 */
void move_target_close(node *n);

/* The verbs (RPC_MOVE_BEGIN ... RPC_MOVE_STEP). */
void move_serve(node *n, const rpc_request *req, arena *a,
    rpc_response *resp);

/*
 * The largest chunk a MOVE_PULL or MOVE_DIRTY answers, in bytes of keys
 * and records.
 */
#define MOVE_CHUNK_BYTES (256 * 1024)

/*
 * The copy is paced to at most this many MB a second (of chunks), so
 * that a move leaves the nodes' cores to the requests they serve: at
 * full speed (about 115 MB/s on this project's 2-core machine kind) the
 * worst second's p99 during a move was 7 to 48 times the p99 before it;
 * at 40 MB/s the p99 of the requests answered during a 1 GB move was
 * 5.2 times the p99 before, at 20 MB/s 4.1 and 5.0 times (README,
 * "Moving a partition").
 */
#define MOVE_COPY_MB_S 20

#endif
