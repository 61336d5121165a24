/*
 * metrics_http.h — the node's only HTTP: GET /metrics, Prometheus text of
 * its own partitions' counters (proto/metrics.h), on the address the
 * cluster file gives the node (optional). The partitions are labelled
 * with table ids; routers' /metrics add the table names.
 */
#ifndef KV_METRICS_HTTP_H
#define KV_METRICS_HTTP_H

#include "err.h"

typedef struct node node;
typedef struct metrics_http metrics_http;

/*
 * metrics_http_open serves n's metrics on host:port until
 * metrics_http_close. Returns KV_OK with *out set, or KV_IO when the port
 * cannot be bound.
 */
kv_err metrics_http_open(node *n, const char *host, int port,
    metrics_http **out);

/* metrics_http_close stops serving; accepts NULL. */
void metrics_http_close(metrics_http *m);

#endif
