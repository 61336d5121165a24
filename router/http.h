/*
 * http.h — the router's HTTP/1.1 server (libmicrohttpd): POST / carries
 * DynamoDB requests, GET / answers health checks. The only file that
 * includes libmicrohttpd.
 */
#ifndef KV_HTTP_H
#define KV_HTTP_H

#include "err.h"
#include "router.h"

/* Largest request body accepted; larger ones are refused unread. */
#define HTTP_MAX_BODY (16u * 1024 * 1024)

typedef struct http http;

/*
 * http_open serves r on host:port with one thread per connection (calls
 * to nodes block). Returns KV_OK with an owned server in *out (free with
 * http_close()), or KV_IO when the port cannot be bound.
 */
kv_err http_open(router *r, const char *host, int port, http **out);

/* http_close stops the server and waits for its threads; accepts NULL. */
void http_close(http *h);

#endif
