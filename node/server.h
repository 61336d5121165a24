/*
 * server.h — the node's request server: a listening socket on the node's
 * URL from the cluster file (ipc:// or tcp://, see proto/rpc.h), and a
 * thread per connection.
 */
#ifndef KV_SERVER_H
#define KV_SERVER_H

#include "err.h"
#include "node.h"

typedef struct server server;

/*
 * server_open listens on url and accepts connections, each served by a
 * thread of its own that reads requests, feeds node_dispatch and writes
 * the replies. With nng_url (kv-node --nng-requests), it also serves the
 * same frames arriving as nng messages there (proto/nframe.h), one
 * message a round. Returns KV_OK with an owned server in *out (free with
 * server_close()), KV_IO when an address cannot be bound, or KV_ENOMEM.
 */
kv_err server_open(node *n, const char *url, const char *nng_url,
    server **out);

/*
 * server_close stops accepting, closes every connection once its running
 * request is answered, and returns when their threads are gone; accepts
 * NULL.
 */
void server_close(server *s);

#endif
