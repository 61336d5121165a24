/*
 * bus.c — nng's errors and the cluster's socket options (see bus.h).
 */
#include "bus.h"
#include "clock.h"

#include <stdio.h>
#include <time.h>

#include "rpc.h"

kv_err
bus_err(int rv)
{
	switch (rv) {
	case 0:
		return KV_OK;
	case NNG_ENOMEM:
		return KV_ENOMEM;
	case NNG_ETIMEDOUT:
		return KV_TIMEDOUT;
	case NNG_EINVAL:
	case NNG_EADDRINVAL:
	case NNG_ENOTSUP:
	case NNG_EBADTYPE:
		return KV_EINVAL;
	case NNG_EADDRINUSE:
	case NNG_EPERM:
		return KV_IO;
	case NNG_EPROTO:
	case NNG_EMSGSIZE:
		return KV_PROTO;
	case NNG_EAGAIN:
		return KV_BUSY;
	default: /* closed, refused, reset, unreachable, ... */
		return KV_UNAVAILABLE;
	}
}

kv_err
bus_setup(nng_socket s)
{
	int rv = nng_socket_set_size(s, NNG_OPT_RECVMAXSZ, RPC_MAX_MESSAGE);
	if (rv == 0)
		rv = nng_socket_set_ms(s, NNG_OPT_RECONNMINT,
		    BUS_RECONNECT_MIN_MS);
	if (rv == 0)
		rv = nng_socket_set_ms(s, NNG_OPT_RECONNMAXT,
		    BUS_RECONNECT_MAX_MS);
	return bus_err(rv);
}

kv_err
bus_listen(nng_socket s, const char *url, const char *what)
{
	int rv = nng_listen(s, url, NULL, 0);
	if (rv != 0) {
		fprintf(stderr, "kv: cannot listen on %s (%s): %s\n", url,
		    what, nng_strerror(rv));
		return rv == NNG_EADDRINVAL || rv == NNG_EINVAL ||
		    rv == NNG_ENOTSUP ? KV_EINVAL : KV_IO;
	}
	return KV_OK;
}

kv_err
bus_dial(nng_socket s, const char *url, atomic_int *id)
{
	nng_dialer d;
	int rv = nng_dialer_create(&d, s, url);
	if (rv != 0)
		return bus_err(rv) == KV_ENOMEM ? KV_ENOMEM : KV_EINVAL;
	if (id != NULL)
		atomic_store(id, nng_dialer_id(d));
	rv = nng_dialer_start(d, NNG_FLAG_NONBLOCK);
	return rv == 0 ? KV_OK : bus_err(rv) == KV_ENOMEM ? KV_ENOMEM :
	    KV_EINVAL;
}

int64_t
bus_now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t
bus_mono_ms(void)
{
	return clock_mono_ms();
}
