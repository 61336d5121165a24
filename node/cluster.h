/*
 * cluster.h — the node's part in the cluster's nng traffic: it answers
 * surveys, serves and sends node-to-node messages (proto/peer.h), follows
 * the catalog feed (every node but the catalog node, which publishes it:
 * catalog_node.c), and on the catalog node keeps the health view, a
 * survey of every member each HEALTH_PERIOD_MS.
 */
#ifndef KV_NODE_CLUSTER_H
#define KV_NODE_CLUSTER_H

#include <stdint.h>
#include <stdio.h>

#include "arena.h"

#include "err.h"
#include "wire.h"

typedef struct node node;

#define HEALTH_PERIOD_MS 1000
#define HEALTH_DEADLINE_MS 500

/*
 * cluster_open starts all of the above for n (after its store, its
 * partitions and, on node 0, its catalog are open). Returns KV_OK, or
 * KV_IO when one of its addresses cannot be bound (printed), KV_EINVAL,
 * KV_ENOMEM; on failure cluster_close cleans up.
 */
kv_err cluster_open(node *n);

/*
 * Closing takes two steps. cluster_stop ends what reads the node's state
 * on threads of its own (the health view, survey answers, the feed
 * subscription): call it before the catalog closes. cluster_close then
 * closes the node-to-node seam, which the catalog's worker sends on and
 * whose handlers use the partitions and the store: call it after the
 * catalog closes and before the store does. Both are safe after a failed
 * or no cluster_open, and cluster_close also stops what cluster_stop
 * would.
 */
void cluster_stop(node *n);
void cluster_close(node *n);

/*
 * cluster_catalog_version is the catalog version this node holds (the
 * catalog node's own; another node's from the feed; 0: none yet).
 */
uint64_t cluster_catalog_version(node *n);

/*
 * cluster_tell sends req (borrowed) to node i over the node-to-node seam
 * (PEER_VERB) and unpacks its answer into *resp (pointers valid until
 * arena_fini(a); call wire_response_fini(resp) afterwards). Returns
 * KV_OK with the node's own code in resp->code, or what peer_call
 * returns. For the catalog node's orders to owners.
 */
kv_err cluster_tell(node *n, uint32_t i, const rpc_request *req, arena *a,
    rpc_response *resp);

/*
 * cluster_ask is cluster_tell_ms to any node, this one too (served here
 * by node_dispatch): node i's code, or the call's failure. Call
 * wire_response_fini(resp) afterwards.
 */
kv_err cluster_ask(node *n, uint32_t i, const rpc_request *req, arena *a,
    rpc_response *resp, int timeout_ms);

/* cluster_tell_ms: cluster_tell waiting timeout_ms for the answer. */
kv_err cluster_tell_ms(node *n, uint32_t i, const rpc_request *req,
    arena *a, rpc_response *resp, int timeout_ms);

/*
 * cluster_write_health writes the health view as Prometheus text to f
 * (nothing on a node without one):
 *   kv_cluster_member_up{kind,index,addr}           1 answered the last survey
 *   kv_cluster_member_catalog_version{kind,index}   the version it holds
 *   kv_cluster_member_silent_seconds{kind,index}    since its last answer
 */
void cluster_write_health(node *n, FILE *f);

#endif
