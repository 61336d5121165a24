/*
 * server.c — nng rep server with asynchronous contexts (see server.h).
 *
 * Each context loops: receive a request, unpack it, dispatch it, pack the
 * response into the same nng message, send, receive again. The callbacks
 * run on nng's task threads; a verb never waits on another node from here
 * (the catalog worker does that on its own thread), so no context can wait
 * on itself. Messages above RPC_MAX_MESSAGE are refused by nng before they
 * are read whole.
 */
#include "server.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nng/nng.h>
#include <nng/protocol/reqrep0/rep.h>

typedef enum { WORK_RECV, WORK_SEND } work_state;

typedef struct work {
	node *n;
	nng_aio *aio;
	nng_ctx ctx;
	work_state state;
} work;

struct server {
	nng_socket sock;
	work *w;
	int n_work;
};

/* Serves one request message; the reply replaces its body. */
static void
serve(node *n, nng_msg *msg)
{
	arena a;
	rpc_request req;
	rpc_response resp;
	uint8_t *out = NULL;
	size_t len = 0;

	arena_init(&a);
	memset(&resp, 0, sizeof(resp));
	kv_err rv = wire_unpack_request(nng_msg_body(msg), nng_msg_len(msg),
	    &a, &req);
	if (rv == KV_OK)
		node_dispatch(n, &req, &a, &resp);
	else
		resp.code = rv;
	if (wire_pack_response(&resp, &out, &len) != KV_OK) {
		wire_response_fini(&resp);
		memset(&resp, 0, sizeof(resp));
		resp.code = KV_ENOMEM;
		if (wire_pack_response(&resp, &out, &len) != KV_OK)
			len = 0;
	}
	nng_msg_clear(msg);
	if (len > 0 && nng_msg_append(msg, out, len) != 0)
		nng_msg_clear(msg);
	free(out);
	wire_response_fini(&resp);
	wire_request_fini(&req);
	arena_fini(&a);
}

static void
work_cb(void *arg)
{
	work *w = arg;
	int e = nng_aio_result(w->aio);

	switch (w->state) {
	case WORK_RECV:
		if (e == NNG_ECLOSED || e == NNG_ECANCELED)
			return;
		if (e != 0)
			break;
		nng_msg *msg = nng_aio_get_msg(w->aio);
		serve(w->n, msg);
		nng_aio_set_msg(w->aio, msg);
		w->state = WORK_SEND;
		nng_ctx_send(w->ctx, w->aio);
		return;
	case WORK_SEND:
		if (e != 0)
			nng_msg_free(nng_aio_get_msg(w->aio));
		if (e == NNG_ECLOSED || e == NNG_ECANCELED)
			return;
		break;
	}
	w->state = WORK_RECV;
	nng_ctx_recv(w->ctx, w->aio);
}

kv_err
server_open(node *n, const char *url, int contexts, server **out)
{
	server *s = calloc(1, sizeof(*s));
	int e;
	if (s == NULL)
		return KV_ENOMEM;
	s->w = calloc((size_t) contexts, sizeof(work));
	if (s->w == NULL || nng_rep0_open(&s->sock) != 0) {
		free(s->w);
		free(s);
		return KV_ENOMEM;
	}
	nng_socket_set_size(s->sock, NNG_OPT_RECVMAXSZ, RPC_MAX_MESSAGE);
	for (int i = 0; i < contexts; i++) {
		work *w = &s->w[i];
		w->n = n;
		if (nng_aio_alloc(&w->aio, work_cb, w) != 0 ||
		    nng_ctx_open(&w->ctx, s->sock) != 0) {
			server_close(s);
			return KV_ENOMEM;
		}
		s->n_work = i + 1;
	}
	if ((e = nng_listen(s->sock, url, NULL, 0)) != 0) {
		fprintf(stderr, "kv-node: cannot listen on %s: %s\n", url,
		    nng_strerror(e));
		server_close(s);
		return KV_IO;
	}
	for (int i = 0; i < s->n_work; i++) {
		s->w[i].state = WORK_RECV;
		nng_ctx_recv(s->w[i].ctx, s->w[i].aio);
	}
	*out = s;
	return KV_OK;
}

void
server_close(server *s)
{
	if (s == NULL)
		return;
	for (int i = 0; i < s->n_work; i++)
		nng_aio_stop(s->w[i].aio);
	nng_close(s->sock);
	for (int i = 0; i < s->n_work; i++) {
		nng_ctx_close(s->w[i].ctx);
		nng_aio_free(s->w[i].aio);
	}
	free(s->w);
	free(s);
}
