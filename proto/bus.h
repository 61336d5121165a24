/*
 * bus.h — what the nng modules of proto/ (feed.c, survey.c, peer.c,
 * nframe.c) share: nng's headers, the translation of its errors into
 * kv_err (once, here), and the way every socket of the cluster is set up.
 * Private to proto/: nothing outside this folder includes nng.
 *
 * Every nng socket of the cluster dials without blocking, so a peer that
 * is not up yet is dialed again and again (from BUS_RECONNECT_MIN_MS,
 * doubling to BUS_RECONNECT_MAX_MS) until it is; a listener binds at
 * once and fails loudly. Messages larger than RPC_MAX_MESSAGE are refused
 * by the receiver before they are read.
 */
#ifndef KV_BUS_H
#define KV_BUS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <nng/nng.h>

#include "bus_exit.h"
#include "err.h"

#define BUS_RECONNECT_MIN_MS 20
#define BUS_RECONNECT_MAX_MS 500

/*
 * A thread that receives waits at most BUS_TICK_MS at a time, then looks
 * whether it should stop. Sockets are closed only once the threads that
 * receive on them have stopped: nng 1.5.2 can deadlock in nng_close while
 * another thread is blocked receiving on the socket (nng issues #1543 and
 * #1813, fixed in later releases).
 */
#define BUS_TICK_MS 250

/* bus_err translates an nng error code (0 is KV_OK). */
kv_err bus_err(int nng_rv);

/*
 * bus_setup applies the cluster's options to socket s (message size
 * limit, reconnection times). Returns KV_OK or the error.
 */
kv_err bus_setup(nng_socket s);

/*
 * bus_listen binds s to url and listens; a failure is printed to stderr
 * with what (the socket's role) and returned (KV_IO when the address is
 * taken or cannot be bound).
 */
kv_err bus_listen(nng_socket s, const char *url, const char *what);

/*
 * bus_dial starts dialing url from s without waiting for the connection
 * (nng dials again until it succeeds). *id, when not NULL, is set to the
 * dialer's id before the first attempt, so that a pipe callback can tell
 * whose connection it sees. KV_OK, KV_EINVAL for a URL nng cannot dial,
 * or KV_ENOMEM.
 */
kv_err bus_dial(nng_socket s, const char *url, atomic_int *id);

/* bus_now_us: CLOCK_REALTIME in microseconds. */
int64_t bus_now_us(void);

/* bus_mono_ms: CLOCK_MONOTONIC in milliseconds. */
int64_t bus_mono_ms(void);

#endif
