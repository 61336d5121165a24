/*
 * conn.h — N keep-alive HTTP/1.1 client connections to one address, run
 * by one epoll loop on the calling thread: non-blocking sockets, at most
 * one request in flight on each (no pipelining), no thread per connection.
 *
 * A connection the server closes (Connection: close, EOF, reset) opens
 * again at once and the close is counted; a connect that fails is retried
 * after a back-off (10 ms doubling to 1 s). A request that gets no answer
 * within the timeout fails and its connection starts over.
 *
 * What to send and what an answer means belong to the caller (run.c):
 * this file only moves bytes. Callbacks never send; the caller picks up
 * connections that are ready with conn_pool_idle after each poll, which
 * keeps closed loop, open loop and loading one shape. Read next:
 * workload.h.
 */
#ifndef KVLOAD_CONN_H
#define KVLOAD_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "err.h"

typedef struct conn_pool conn_pool;

typedef struct conn_result {
	/*
	 * KV_OK: a whole response. KV_IO: connect refused, reset, or closed
	 * before the answer was whole. KV_PROTO: the answer is not HTTP/1.x.
	 * KV_TIMEDOUT: no answer in time. KV_ENOMEM.
	 */
	kv_err err;
	int sys_errno;    /* KV_IO: errno, or 0 for a close by the server */
	int status;       /* KV_OK: the HTTP status */
	const char *body; /* KV_OK: valid during the callback only */
	size_t len;
} conn_result;

/*
 * Called from conn_pool_poll once per request sent, with the connection's
 * index and what became of the request. It must not call conn_pool_send.
 */
typedef void (*conn_done_fn)(void *arg, size_t id, const conn_result *res);

typedef struct conn_stats {
	uint64_t connects;      /* connections established */
	uint64_t server_closes; /* closed by the server, then reopened */
	uint64_t failures;      /* connects that failed */
	uint64_t timeouts;      /* requests without an answer in time */
	int last_errno;         /* why the last connect failed, or 0 */
} conn_stats;

/* conn_now returns CLOCK_MONOTONIC in nanoseconds. */
int64_t conn_now(void);

/*
 * conn_pool_new starts n connections to addr (borrowed; copied) and
 * returns the pool in *out, owned — free with conn_pool_free(). Requests
 * not answered within timeout_ns fail. done(arg, ...) reports every
 * request's end. Returns KV_ENOMEM, or KV_IO when no socket can be made.
 * A refused connect is not an error here: it fails the first requests.
 */
kv_err conn_pool_new(const struct sockaddr *addr, socklen_t alen, size_t n,
    int64_t timeout_ns, conn_done_fn done, void *arg, conn_pool **out);

/* conn_pool_free closes every connection; requests in flight are dropped
 * without a callback. Safe on NULL. */
void conn_pool_free(conn_pool *p);

/* conn_pool_size returns n. */
size_t conn_pool_size(const conn_pool *p);

/*
 * conn_pool_idle sets *id to a connection that can take a request now
 * (connected or connecting, nothing in flight) and returns true, or
 * returns false if there is none. Each ready connection is handed out once
 * until it has carried a request.
 */
bool conn_pool_idle(conn_pool *p, size_t *id);

/*
 * conn_pool_send sends req[0..len) (borrowed; copied) on connection id,
 * which conn_pool_idle just handed out. Returns KV_OK, after which the
 * callback reports the request's end exactly once (already before this
 * returns if the socket fails on the first write), or KV_EINVAL if the
 * connection is busy or down, or KV_ENOMEM (no callback then).
 */
kv_err conn_pool_send(conn_pool *p, size_t id, const char *req, size_t len);

/*
 * conn_pool_poll waits up to timeout_ns for socket events (less when a
 * reconnect or a request timeout is due) and handles them, calling the
 * callback for finished requests. Returns KV_OK (also when interrupted by
 * a signal) or KV_IO when epoll fails.
 */
kv_err conn_pool_poll(conn_pool *p, int64_t timeout_ns);

/* conn_pool_busy returns how many requests are in flight. */
size_t conn_pool_busy(const conn_pool *p);

/* conn_pool_stats returns the counts so far. */
conn_stats conn_pool_stats(const conn_pool *p);

#endif
