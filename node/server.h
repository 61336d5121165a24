/*
 * server.h — the node's request server: a listening socket on the node's
 * URL from the cluster file (ipc:// or tcp://, see proto/rpc.h), served by
 * a few threads sharing one epoll set.
 */
#ifndef KV_SERVER_H
#define KV_SERVER_H

#include "err.h"
#include "node.h"

typedef struct server server;

/*
 * server_open listens on url and starts `threads` threads that read
 * requests, feed node_dispatch and write the replies. Returns KV_OK with
 * an owned server in *out (free with server_close()), or KV_IO when url
 * cannot be bound.
 */
kv_err server_open(node *n, const char *url, int threads, server **out);

/* server_close stops accepting, waits for running requests; accepts NULL. */
void server_close(server *s);

#endif
