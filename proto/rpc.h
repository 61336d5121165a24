/*
 * rpc.h — calling a node: a client per remote node, shared by every thread
 * of a process; each call runs on a connection of its own from the
 * client's pool (so calls run concurrently), as one length-prefixed
 * request and one length-prefixed reply (rpc.c has the framing).
 *
 * Used by the router for every request, by a node for the catalog (the
 * feed's fetch) and for its index replicator's apply calls to the index
 * partitions' owners, and by kv-admin. A call to a node that refuses
 * connections fails fast with KV_UNAVAILABLE instead of waiting out its
 * deadline, so a dead node makes exactly its partitions fail while the
 * others serve. Requests are never resent; retrying is the caller's
 * decision, since only some verbs are idempotent.
 */
#ifndef KV_RPC_H
#define KV_RPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "arena.h"
#include "err.h"
#include "wire.h"

/* Largest message a process accepts from the wire. */
#define RPC_MAX_MESSAGE (64u * 1024 * 1024)
#define RPC_DEFAULT_TIMEOUT_MS 5000

typedef struct rpc_client rpc_client;

/*
 * rpc_parse_url turns ipc://PATH (a Unix-domain socket) or tcp://HOST:PORT
 * into a socket address. KV_OK or KV_EINVAL.
 */
kv_err rpc_parse_url(const char *url, struct sockaddr_storage *sa,
    socklen_t *len);

/*
 * rpc_client_open returns an owned client for the node at url (ipc:// or
 * tcp://) in *out (free with rpc_client_close()); connections are opened
 * on first use. Returns KV_OK, KV_EINVAL for a bad URL, or KV_ENOMEM.
 */
kv_err rpc_client_open(const char *url, rpc_client **out);

/* rpc_client_close closes its connections; accepts NULL. No call may run. */
void rpc_client_close(rpc_client *c);

/*
 * rpc_call sends req and waits up to timeout_ms for the response, which is
 * unpacked into *resp (see wire_unpack_response for ownership; call
 * wire_response_fini(resp) after KV_OK). Returns KV_OK when a response
 * arrived (its own code is in resp->code), KV_UNAVAILABLE when the node
 * cannot be reached or the connection broke while waiting (the node went
 * away: the request may or may not have been applied), KV_TIMEDOUT when it
 * did not answer in time (likewise), KV_PROTO or KV_ENOMEM. Thread-safe.
 */
kv_err rpc_call(rpc_client *c, const rpc_request *req, arena *a,
    rpc_response *resp, int timeout_ms);

/*
 * rpc_call in two halves, for a caller with calls to several nodes at
 * once: rpc_call_start returns once req is written on a connection of
 * its own (KV_OK, *out the call; req may go then) or with rpc_call's
 * failures; rpc_call_end waits for the reply as rpc_call does and frees
 * the call. Every call started must be ended.
 */
typedef struct rpc_pending rpc_pending;
kv_err rpc_call_start(rpc_client *c, const rpc_request *req, int timeout_ms,
    rpc_pending **out);
kv_err rpc_call_end(rpc_pending *p, arena *a, rpc_response *resp);

/*
 * rpc_send_some writes what a non-blocking socket fd takes of buf[0..len)
 * now (without SIGPIPE): the number of bytes written (less than len when
 * the socket is full), or -1 when the connection is broken.
 */
ssize_t rpc_send_some(int fd, const void *buf, size_t len);

/*
 * rpc_send_all writes all of buf to socket fd (without SIGPIPE). When the
 * socket is non-blocking and full, it waits up to wait_ms for room each
 * time (0: not at all). False on an error or when it gave up. For the
 * node's server, which answers on the same framing.
 */
bool rpc_send_all(int fd, const uint8_t *buf, size_t len, int wait_ms);

#endif
