/*
 * api_async.h — serving a request without blocking, for the router's
 * event loop (http.c): the single-item operations are split around their
 * one node call, everything else goes to a thread that may block.
 */
#ifndef KV_API_ASYNC_H
#define KV_API_ASYNC_H

#include "api.h"
#include "ops_item.h"
#include "ops_read.h"
#include "ops_txn.h"

typedef enum api_path {
	API_DONE,   /* *out holds the answer */
	API_NODE,   /* send the prepared request, then api_finish */
	API_WORKER, /* run api_handle where blocking is allowed */
} api_path;

/*
 * One request served without blocking (the router's event loop):
 * api_start parses it and, for a single-item operation or a Query,
 * prepares the one node request `req` for node `owner`; for
 * TransactWriteItems and TransactGetItems, the first of their calls, the
 * others following from api_finish one at a time. Everything else, and anything that needs a
 * network call first (a table not in this router's catalog, a stale
 * route, a transaction's ClientRequestToken), is API_WORKER: the caller
 * runs api_handle on a thread that may block, which starts over from the
 * raw request. Must not move between api_start and api_finish (it
 * points into itself).
 */
typedef struct api_async {
	size_t op;
	arena a;
	json_t *body;
	bool body_in_arena;       /* body lives in a (json_read_in) */
	api_ctx c;
	bool query;               /* u.q, else u.ir (or txn) */
	ops_txn_async *txn;       /* TransactWriteItems: its state, in a */
	ops_txn_get_async *tget;  /* TransactGetItems: its state, in a */
	union {
		item_req ir;
		query_req q;
	} u;
	const rpc_request *req;   /* what to send */
	uint32_t owner;           /* where */
} api_async;

/*
 * api_start begins a request (arguments as api_handle's; *out zeroed).
 * API_DONE after filling *out, API_NODE with *s->req ready for node
 * s->owner (then api_finish or api_abort must follow), or API_WORKER.
 */
api_path api_start(router *r, const char *target, const char *auth,
    const char *body, size_t len, api_async *s, reply *out);

/*
 * api_finish takes the outcome of sending s's request: rv KV_OK with the
 * node's *resp, or the transport's error (KV_UNAVAILABLE, KV_TIMEDOUT:
 * the request may or may not have been applied, as rpc_call says).
 * Returns API_DONE with *out filled, API_WORKER for a stale route
 * (nothing was applied), or API_NODE with the next request in *s->req
 * for s->owner (a transaction's next call). Frees what s holds unless
 * API_NODE.
 */
api_path api_finish(api_async *s, kv_err rv, rpc_response *resp,
    reply *out);

/*
 * When s's request could not be sent: api_restartable says whether a
 * worker may serve the request from the start (nothing of it reached a
 * node). If not, the caller goes on with api_finish(KV_UNAVAILABLE).
 */
bool api_restartable(const api_async *s);

/* api_abort frees what s holds after API_NODE, when it is not sent. */
void api_abort(api_async *s);

#endif
