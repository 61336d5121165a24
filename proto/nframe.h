/*
 * nframe.h — the request path's frames carried by nng instead of a socket
 * of our own: kept to measure the choice again (docs/design-notes.md, "The
 * node transport"), selected with kv-router --nng-requests and kv-node
 * --nng-requests. A router's event loop sends each node one message per
 * round holding that round's frames (4-byte length, packed request, as on
 * the sockets), and the node answers with one message holding the
 * replies, in order.
 *
 * The node listens on a REP socket (any number of router loops dialing
 * it) and serves it from one thread, so that the messages of one link are
 * answered in the order they came. The router's side is a raw REQ socket
 * per node and loop (no resending); the loop polls the descriptor nng
 * offers for it (readable while a message waits), as it polls its
 * sockets. nng's own threads do the reads and writes in both processes.
 */
#ifndef KV_NFRAME_H
#define KV_NFRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

typedef struct nframe nframe;
typedef struct nframe_msg nframe_msg;
typedef struct nframe_server nframe_server;

/*
 * nframe_dial returns an owned channel to the node serving url (free with
 * nframe_close()); it connects in the background. KV_OK, KV_EINVAL or
 * KV_ENOMEM.
 */
kv_err nframe_dial(const char *url, nframe **out);

/*
 * nframe_fd is a descriptor that polls readable while a message waits
 * (never read it or close it; it is nng's). -1 on failure.
 */
int nframe_fd(nframe *c);

/*
 * nframe_send sends buf[0..len) as one message without waiting. KV_OK;
 * KV_BUSY when it was not sent (not connected yet, or its queue is full):
 * nothing of it reached the node; KV_ENOMEM.
 */
kv_err nframe_send(nframe *c, const void *buf, size_t len);

/*
 * nframe_recv takes a waiting message without waiting: KV_OK with its body
 * in *body, *len (valid until nframe_msg_free(*m)), KV_BUSY when none
 * waits, KV_UNAVAILABLE when the channel is closed, KV_PROTO when the
 * reply is not to the oldest message unanswered (the channel is then
 * useless: close it).
 */
kv_err nframe_recv(nframe *c, nframe_msg **m, const uint8_t **body,
    size_t *len);

void nframe_msg_free(nframe_msg *m);

/* nframe_close closes the channel; accepts NULL. */
void nframe_close(nframe *c);

/*
 * A node's server: fn serves one message (the round's frames) and returns
 * the replies' bytes in *out (owned by the caller, free()), or false to
 * drop the message unanswered (the router then fails its calls with an
 * unknown outcome when they time out).
 */
typedef bool (*nframe_serve_fn)(void *arg, const uint8_t *in, size_t len,
    uint8_t **out, size_t *olen);

/*
 * nframe_serve listens on url and serves messages with fn on a thread of
 * its own. KV_OK with an owned server (nframe_server_close()), KV_IO when
 * url cannot be bound, KV_EINVAL, KV_ENOMEM.
 */
kv_err nframe_serve(const char *url, nframe_serve_fn fn, void *arg,
    nframe_server **out);

/* nframe_server_close stops serving (a message being served finishes). */
void nframe_server_close(nframe_server *s);

#endif
