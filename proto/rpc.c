/*
 * rpc.c — the nng client side of router<->node calls (see rpc.h).
 *
 * Connection state is tracked with pipe notifications: `pipes` counts the
 * live connections of the socket (0 or 1, one dialer) and `ever` says
 * whether there was one. They are atomics because nng calls the notifier
 * from its own threads.
 */
#include "rpc.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nng/nng.h>
#include <nng/protocol/reqrep0/req.h>
#include <nng/supplemental/util/platform.h>

struct rpc_client {
	nng_socket sock;
	atomic_int pipes;
	atomic_bool ever;       /* connected at least once */
	struct timespec opened;
};

static void
pipe_event(nng_pipe p, nng_pipe_ev ev, void *arg)
{
	rpc_client *c = arg;
	/*
	 * nng reports REM_POST for every pipe that saw ADD_PRE, also for one
	 * closed before it was added (ADD_POST never came): count from
	 * ADD_PRE, or a connection that fails half-way leaves the count one
	 * too low and the node looking dead for good.
	 */
	if (ev == NNG_PIPE_EV_ADD_PRE)
		atomic_fetch_add(&c->pipes, 1);
	else if (ev == NNG_PIPE_EV_ADD_POST)
		atomic_store(&c->ever, true);
	else if (ev == NNG_PIPE_EV_REM_POST)
		atomic_fetch_sub(&c->pipes, 1);
}

kv_err
rpc_client_open(const char *url, rpc_client **out)
{
	rpc_client *c = calloc(1, sizeof(*c));
	if (c == NULL)
		return KV_ENOMEM;
	atomic_init(&c->pipes, 0);
	atomic_init(&c->ever, false);
	clock_gettime(CLOCK_MONOTONIC, &c->opened);
	if (nng_req0_open(&c->sock) != 0) {
		free(c);
		return KV_ENOMEM;
	}
	nng_socket_set_ms(c->sock, NNG_OPT_REQ_RESENDTIME,
	    NNG_DURATION_INFINITE);
	nng_socket_set_size(c->sock, NNG_OPT_RECVMAXSZ, RPC_MAX_MESSAGE);
	nng_socket_set_ms(c->sock, NNG_OPT_RECONNMINT, 20);
	nng_socket_set_ms(c->sock, NNG_OPT_RECONNMAXT, 250);
	nng_pipe_notify(c->sock, NNG_PIPE_EV_ADD_PRE, pipe_event, c);
	nng_pipe_notify(c->sock, NNG_PIPE_EV_ADD_POST, pipe_event, c);
	nng_pipe_notify(c->sock, NNG_PIPE_EV_REM_POST, pipe_event, c);
	if (nng_dial(c->sock, url, NULL, NNG_FLAG_NONBLOCK) != 0) {
		nng_close(c->sock);
		free(c);
		return KV_EINVAL;
	}
	*out = c;
	return KV_OK;
}

void
rpc_client_close(rpc_client *c)
{
	if (c == NULL)
		return;
	nng_close(c->sock);
	free(c);
}

bool
rpc_client_connected(rpc_client *c)
{
	return atomic_load(&c->pipes) > 0;
}

static long
ms_since(const struct timespec *t)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - t->tv_sec) * 1000 +
	    (now.tv_nsec - t->tv_nsec) / 1000000;
}

/*
 * A client that was just opened, or whose node just restarted, may not be
 * connected yet: give it a short while before calling the node dead.
 */
static bool
wait_connected(rpc_client *c, int budget_ms)
{
	struct timespec start;
	clock_gettime(CLOCK_MONOTONIC, &start);
	while (!rpc_client_connected(c)) {
		if (ms_since(&start) >= budget_ms)
			return false;
		nng_msleep(5);
	}
	return true;
}

kv_err
rpc_call(rpc_client *c, const rpc_request *req, arena *a,
    rpc_response *resp, int timeout_ms)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	nng_ctx ctx;
	nng_aio *aio;
	nng_msg *msg = NULL;
	kv_err rv;
	int e;

	memset(resp, 0, sizeof(*resp));
	/*
	 * A client that never connected and is young (its process just
	 * started, the node may be starting too) gets its whole deadline to
	 * connect; otherwise a missing connection means the node is down,
	 * apart from a short reconnection window.
	 */
	int grace = !atomic_load(&c->ever) && ms_since(&c->opened) < 3000 ?
	    timeout_ms : 150;
	if (!wait_connected(c, grace < timeout_ms ? grace : timeout_ms))
		return KV_UNAVAILABLE;
	if ((rv = wire_pack_request(req, &buf, &len)) != KV_OK)
		return rv;
	if (nng_msg_alloc(&msg, 0) != 0 ||
	    nng_msg_append(msg, buf, len) != 0) {
		free(buf);
		nng_msg_free(msg);
		return KV_ENOMEM;
	}
	free(buf);
	if (nng_aio_alloc(&aio, NULL, NULL) != 0) {
		nng_msg_free(msg);
		return KV_ENOMEM;
	}
	if (nng_ctx_open(&ctx, c->sock) != 0) {
		nng_msg_free(msg);
		nng_aio_free(aio);
		return KV_ENOMEM;
	}
	/* nng 1.5 has no nng_ctx_sendmsg: a private aio, waited on. */
	nng_aio_set_timeout(aio, timeout_ms);
	nng_aio_set_msg(aio, msg);
	nng_ctx_send(ctx, aio);
	nng_aio_wait(aio);
	if ((e = nng_aio_result(aio)) != 0) {
		nng_msg_free(msg);
		rv = e == NNG_ETIMEDOUT ? KV_TIMEDOUT : KV_UNAVAILABLE;
		goto out;
	}
	nng_ctx_recv(ctx, aio);
	nng_aio_wait(aio);
	if ((e = nng_aio_result(aio)) != 0) {
		rv = e == NNG_ETIMEDOUT ? KV_TIMEDOUT : KV_UNAVAILABLE;
		/* The connection dropped while we waited: the node died. */
		if (e == NNG_ETIMEDOUT && !rpc_client_connected(c))
			rv = KV_UNAVAILABLE;
		goto out;
	}
	msg = nng_aio_get_msg(aio);
	rv = wire_unpack_response(nng_msg_body(msg), nng_msg_len(msg), a,
	    resp);
	nng_msg_free(msg);
out:
	nng_ctx_close(ctx);
	nng_aio_free(aio);
	return rv;
}
