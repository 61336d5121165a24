/*
 * ops_read.h — Query and Scan (ops_read.c): the parsed request and the
 * page being built, and Query split around its one node call, so that
 * the router's event loop can send that call itself (api_async.h).
 */
#ifndef KV_OPS_READ_H
#define KV_OPS_READ_H

#include "api.h"
#include "request_expr.h"
#include "wire.h"

typedef enum select_mode {
	SELECT_ALL = 1,
	SELECT_SPECIFIC,
	SELECT_COUNT,
} select_mode;

/* A read request, parsed and checked. */
typedef struct read_req {
	const char *table;
	req_exprs x;
	uint32_t limit;       /* 0: none */
	bool consistent;
	bool backward;        /* Query: ScanIndexForward false */
	select_mode select;
	value esk;            /* ExclusiveStartKey */
	bool has_esk;
	uint32_t segment, total_segments; /* Scan; total 0: not parallel */
	const char *capacity; /* ReturnConsumedCapacity; NULL: none */
	const char *index;    /* IndexName; NULL: the table itself */
	const char *select_given; /* Select as the request gave it, or NULL */
	/* Set once the table is known: the local index read (-1: none),
	 * and whether its entries are read with their items (the request
	 * wants attributes the index does not project). */
	int local;
	bool fetch;
	/* A global index read: its definition (the route's catalog's,
	 * valid while its read lock is held); NULL otherwise. */
	const index_def *gsi;
} read_req;

/* The page being built. */
typedef struct page {
	jtext items;          /* the items' JSON, comma-separated */
	uint32_t count, scanned;
	uint64_t read_bytes;
	value last;           /* last item read, when the page stopped early */
	bool stopped;
	uint32_t throttle;    /* KV_THROTTLED: the node's RPC_THROTTLE_* bits */
} page;

/*
 * A Query between its halves: ops_query_read parses and checks what does
 * not depend on the catalog; ops_query_route finds the table, the item
 * collection's bounds and the owner, and builds the RANGE request;
 * ops_query_answer turns the node's answer into the page. Everything
 * lives in c->a and borrows the body.
 */
typedef struct query_req {
	read_req r;
	const uint8_t *cond;  /* the filter, encoded; NULL: none */
	size_t condl;
	rpc_request req;      /* the RANGE request, once routed */
	uint32_t owner;       /* its node */
	const char *tname;    /* the table's name */
} query_req;

/* ops_query_read: false after filling *out. */
bool ops_query_read(api_ctx *c, json_t *body, query_req *q, reply *out);

/*
 * ops_query_route: false after filling *out; with refreshed NULL it never
 * refreshes the catalog, and a table it does not find returns false with
 * *out untouched (as ops_item_route).
 */
bool ops_query_route(api_ctx *c, json_t *body, query_req *q,
    bool *refreshed, reply *out);

/*
 * ops_query_answer takes the outcome of sending q->req (rv KV_OK with the
 * node's *resp, which it finalises, or the transport's error): 1 or 0
 * with *out filled, or -1 for a stale route (route again and resend).
 */
int ops_query_answer(api_ctx *c, query_req *q, kv_err rv, rpc_response *resp,
    reply *out);

#endif
