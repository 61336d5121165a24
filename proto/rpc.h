/*
 * rpc.h — calling a node: one nng req socket per remote node, shared by
 * every thread of a process (each call opens its own nng context, so calls
 * run concurrently on one connection).
 *
 * Used by the router for every request and by the catalog node to tell
 * owners about their partitions. A call to a node that is not connected
 * fails fast with KV_UNAVAILABLE instead of waiting out its deadline, so a
 * dead node makes exactly its partitions fail while the others serve.
 * Requests are not resent by nng (resend timer off); retrying is the
 * caller's decision, since only some verbs are idempotent.
 */
#ifndef KV_RPC_H
#define KV_RPC_H

#include <stdbool.h>

#include "arena.h"
#include "err.h"
#include "wire.h"

/* Largest message a process accepts from the wire (NNG_OPT_RECVMAXSZ). */
#define RPC_MAX_MESSAGE (64u * 1024 * 1024)
#define RPC_DEFAULT_TIMEOUT_MS 5000

typedef struct rpc_client rpc_client;

/*
 * rpc_client_open starts dialling url (ipc:// or tcp://) in the background
 * and returns an owned client in *out (free with rpc_client_close()).
 * Returns KV_OK, KV_EINVAL for a bad URL, or KV_ENOMEM.
 */
kv_err rpc_client_open(const char *url, rpc_client **out);

/* rpc_client_close closes the connection; accepts NULL. No call may run. */
void rpc_client_close(rpc_client *c);

/* rpc_client_connected reports whether the node is connected right now. */
bool rpc_client_connected(rpc_client *c);

/*
 * rpc_call sends req and waits up to timeout_ms for the response, which is
 * unpacked into *resp (see wire_unpack_response for ownership; call
 * wire_response_fini(resp) after KV_OK). Returns KV_OK when a response
 * arrived (its own code is in resp->code), KV_UNAVAILABLE when the node is
 * not connected, KV_TIMEDOUT when it did not answer in time (the request
 * may or may not have been applied), KV_PROTO or KV_ENOMEM. Thread-safe.
 */
kv_err rpc_call(rpc_client *c, const rpc_request *req, arena *a,
    rpc_response *resp, int timeout_ms);

#endif
