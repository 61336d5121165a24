/*
 * serve.h — the null server (--serve-null PORT): HTTP/1.1 keep-alive on
 * 127.0.0.1 that answers every request at once with 200 and "{}". It
 * measures the ceiling of anything behind HTTP on this machine: run
 * kv-load --no-check against it and compare with the real router.
 *
 * One epoll loop, like conn.c; pipelined requests are answered in order.
 * It reads no JSON and keeps no state but bytes. Read next: kv_load.c.
 */
#ifndef KVLOAD_SERVE_H
#define KVLOAD_SERVE_H

#include "err.h"

/*
 * serve_null answers on 127.0.0.1:port until SIGINT or SIGTERM, then
 * prints how many requests it answered. Returns KV_OK after a signal,
 * KV_IO when the port cannot be bound or epoll fails (errno says why),
 * KV_ENOMEM.
 */
kv_err serve_null(int port);

#endif
