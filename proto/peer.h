/*
 * peer.h — the node-to-node seam: typed request/reply messages between
 * nodes over nng (REQ/REP), with nng's automatic reconnection. Most of
 * what flows between nodes rather than from a router goes here: the
 * catalog node's orders to owners (ASSIGN, DROP_TABLE); partition moves
 * and transaction resolution add message types. (Index replication's
 * apply calls go over the frames, rpc.h: measured cheaper.)
 *
 * Each node listens on its peer address (config_bus_url) and serves
 * messages with the handler registered for their type, on PEER_WORKERS
 * threads. A caller names the node and the type; the message is one
 * PeerMessage (type, sender, body) and the answer one PeerReply (code,
 * message, body), both in kv.proto.
 *
 * Contract for every message type: handlers must be idempotent. nng's
 * REQ sends a request again on another connection when the one it went
 * out on breaks before the reply came, so a message may be served twice;
 * a caller that gets KV_TIMEDOUT or KV_UNAVAILABLE does not know whether
 * it was served at all. (ASSIGN and DROP_TABLE are idempotent; the types
 * to come carry versions or ids that make them so.)
 */
#ifndef KV_PEER_H
#define KV_PEER_H

#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "err.h"
#include "wire_cluster.h"

/* The message types. Numbers are never reused. */
typedef enum peer_type {
	PEER_VERB = 1, /* a catalog node's order to an owner: the body is a
	                * packed rpc_request (ASSIGN or DROP_TABLE), the
	                * reply's body the packed rpc_response */
	PEER_TYPES = 32 /* the highest type + 1 that can be handled */
} peer_type;

#define PEER_WORKERS 2
/* A call to a node that is not connected waits this long for it. */
#define PEER_CONNECT_GRACE_MS 200
/* Calls that found no connection to a node for this long replace its
 * dialer (peer.c; bus.h's BUS_REDIAL_MS, which this header cannot
 * include). */
#define PEER_REDIAL_MS 3000

typedef struct peer peer;

/*
 * A handler: serves m (borrowed, valid during the call) and fills *out;
 * out->body and out->message may point into a (valid until the reply is
 * packed). Runs on one of the seam's worker threads.
 */
typedef void (*peer_fn)(void *arg, const peer_msg *m, arena *a,
    peer_reply *out);

/*
 * peer_open returns an owned seam for node `self` in *out (free with
 * peer_close()); it neither listens nor dials yet. KV_OK or KV_ENOMEM.
 */
kv_err peer_open(uint32_t self, peer **out);

/*
 * peer_handle registers fn for messages of `type` (< PEER_TYPES). Call
 * before peer_listen. KV_OK or KV_EINVAL. Messages of a type without a
 * handler are answered KV_PROTO.
 */
kv_err peer_handle(peer *p, uint32_t type, peer_fn fn, void *arg);

/*
 * peer_listen binds url and starts the workers. KV_OK, KV_IO when url
 * cannot be bound, KV_EINVAL, KV_ENOMEM. At most once.
 */
kv_err peer_listen(peer *p, const char *url);

/*
 * peer_add makes node `node` (< CONFIG_MAX_NODES) callable at url and
 * starts dialing it, or, `later` (a standby node), at the first call to
 * it. KV_OK, KV_EINVAL (bad URL or index, or added before) or KV_ENOMEM.
 * Before any peer_call to it; not thread-safe against peer_call.
 */
kv_err peer_add(peer *p, uint32_t node, const char *url, bool later);

/*
 * peer_call sends body[0..len) as a message of `type` to node `node` and
 * waits up to timeout_ms for the reply, which it puts in *out (pointers
 * valid until arena_fini(a)). Returns KV_OK when a reply came (its own
 * code is in out->code), KV_UNAVAILABLE when the node is not connected
 * within PEER_CONNECT_GRACE_MS (or was never added), KV_TIMEDOUT, KV_PROTO
 * or KV_ENOMEM. Calls that keep finding no connection replace the
 * node's dialer after PEER_REDIAL_MS. Thread-safe; calls run
 * concurrently.
 */
kv_err peer_call(peer *p, uint32_t node, uint32_t type, const uint8_t *body,
    size_t len, int timeout_ms, arena *a, peer_reply *out);

/*
 * The two halves of peer_call, for a caller that has several calls to
 * make at once: peer_call_start returns once the request is on its way
 * (KV_OK, *out the call) or with peer_call's failures; peer_call_end
 * waits for the reply as peer_call does, and frees the call.
 */
typedef struct peer_pending peer_pending;
kv_err peer_call_start(peer *p, uint32_t node, uint32_t type,
    const uint8_t *body, size_t len, int timeout_ms, peer_pending **out);
kv_err peer_call_end(peer_pending *pp, arena *a, peer_reply *out);

/*
 * For tests: closes node's dialer, as if it had stopped dialing (the
 * fault a redial repairs).
 */
void peer_plant_dead_dialer(peer *p, uint32_t node);

/*
 * peer_close stops serving (a handler running finishes first) and
 * dialing, and frees; accepts NULL. No peer_call may run.
 */
void peer_close(peer *p);

#endif
