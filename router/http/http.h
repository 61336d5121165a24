/*
 * http.h — the router's HTTP/1.1 server: POST / carries DynamoDB requests,
 * GET / answers health checks and GET /metrics serves Prometheus text.
 * A few event loops serve every connection; http.c says how.
 */
#ifndef KV_HTTP_H
#define KV_HTTP_H

#include <stdbool.h>

#include "err.h"
#include "router.h"

/* Largest request body accepted; larger ones are refused unread. */
#define HTTP_MAX_BODY (16u * 1024 * 1024)

typedef struct http http;

/* Event loops a router runs unless told otherwise (kv-router --loops). */
#define HTTP_LOOPS 1

/*
 * http_open serves r on host:port with `loops` event loops and a pool of
 * worker threads for the operations that block. Returns KV_OK with an
 * owned server in *out (free with http_close()), KV_IO when the port
 * cannot be bound, or KV_ENOMEM.
 */
kv_err http_open(router *r, const char *host, int port, int loops,
    http **out);

/* http_ring: do the loops write through io_uring (see http.c)? */
bool http_ring(const http *h);

/* http_close stops the server and waits for its threads; accepts NULL. */
void http_close(http *h);

#endif
