/*
 * server.h — the node's nng server: a rep socket bound to the node's URL
 * from the cluster file, served by a fixed set of asynchronous contexts.
 */
#ifndef KV_SERVER_H
#define KV_SERVER_H

#include "err.h"
#include "node.h"

typedef struct server server;

/*
 * server_open listens on url and starts `contexts` concurrent request
 * contexts that feed node_dispatch. Returns KV_OK with an owned server in
 * *out (free with server_close()), or KV_IO when url cannot be bound.
 */
kv_err server_open(node *n, const char *url, int contexts, server **out);

/* server_close stops accepting, waits for running requests; accepts NULL. */
void server_close(server *s);

#endif
