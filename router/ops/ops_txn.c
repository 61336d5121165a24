/*
 * ops_txn.c — TransactWriteItems and TransactGetItems: the router
 * coordinates (docs/design-notes.md, "Transactions"; node/txn.h).
 *
 * TransactWriteItems checks every action as the single-item operation
 * would (ops_item_prepare), routes it, refuses two actions on one item,
 * then runs two-phase commit: RPC_TXN_PREPARE to every participant node
 * but the decision keeper (the first action's node) with its actions;
 * when all of them prepared, RPC_TXN_PREPARE with RPC_TXN_COMMIT to the
 * keeper, which prepares its own, records COMMIT and commits them in one
 * batch; then RPC_TXN_FINISH to the others. A participant that failed an action makes the
 * transaction cancelled: the others abort, and the answer lists one
 * reason per action, in order. A stale route aborts and starts over.
 *
 * The coordinator may die at any point: a participant left prepared asks
 * the keeper, which records ABORT unless COMMIT is there. So the client's
 * success is sent only after COMMIT is recorded; a finish that does not
 * arrive is done by the participant itself.
 *
 * ClientRequestToken: its record lives on the node the token's hash picks
 * (RPC_TXN_TOKEN): claimed before prepare, marked committed after the
 * decision, freed when the transaction is cancelled.
 *
 * TransactGetItems reads its items (RPC_MULTI of GETs per node), then
 * asks every node whether any of them was written since: the answer
 * stands when none was and none was in a prepared transaction, so it is
 * a snapshot at a moment between the two rounds.
 *
 * Both are written as steps (tp_*, tg_*) that two drivers run: a
 * worker's, which blocks on its calls, and the router's event loop's
 * (ops_txn.h), which sends one call at a time and goes on when its
 * answer comes.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api.h"
#include "capacity.h"
#include "codec.h"
#include "conn.h"
#include "errors.h"
#include "item.h"
#include "json.h"
#include "ops_item.h"
#include "ops_txn.h"
#include "request.h"
#include "route.h"
#include "thread_name.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#define TXN_MAX_ACTIONS 100
#define TXN_MAX_BYTES (4u * 1024 * 1024)
#define TOKEN_MAX 36
#define GET_ROUNDS 3

/* One action of a transaction. */
typedef struct action {
	item_req ir;
	uint32_t owner;
	rpc_response got;     /* the participant's answer */
	bool answered;
} action;

static const char *const kinds[4] = { "ConditionCheck", "Put", "Delete",
	"Update" };

/* ---- reading and checking ---- */

/* The member of a TransactItems element naming its action; -1 if not
 * exactly one. */
static int
action_kind(json_t *el, json_t **inner)
{
	int k = -1, found = 0;
	for (int i = 0; i < 4; i++) {
		json_t *v = json_object_get(el, kinds[i]);
		if (v != NULL && !json_is_null(v)) {
			k = i;
			*inner = v;
			found++;
		}
	}
	return found == 1 ? k : -1;
}

/* TransactItems: an array of 1..100 objects; false after filling *out. */
static bool
read_items(json_t *body, json_t **items, reply *out)
{
	if (!req_array(body, "TransactItems", items, out))
		return false;
	if (*items == NULL) {
		errors_reply(out, ERR_VALIDATION, "1 validation error detected: "
		    "Value null at 'transactItems' failed to satisfy constraint: "
		    "Member must not be null");
		return false;
	}
	size_t n = json_array_size(*items);
	if (n < 1 || n > TXN_MAX_ACTIONS) {
		errors_reply(out, ERR_VALIDATION, "1 validation error detected: "
		    "Value '[...]' at 'transactItems' failed to satisfy "
		    "constraint: Member must have length %s",
		    n < 1 ? "greater than or equal to 1" :
		    "less than or equal to 100");
		return false;
	}
	return true;
}

/* Whether two actions name one item. */
static bool
same_item(const action *x, const action *y)
{
	return x->ir.op.req.table_id == y->ir.op.req.table_id &&
	    x->ir.op.req.key_len == y->ir.op.req.key_len &&
	    memcmp(x->ir.op.req.key, y->ir.op.req.key,
	    x->ir.op.req.key_len) == 0;
}

/*
 * Routes every action (refreshing the catalog once if a table is
 * missing) and refuses two on one item. False after filling *out.
 */
static bool
route_all(api_ctx *c, action *xs, size_t n, bool *refreshed, reply *out)
{
	for (size_t i = 0; i < n; i++)
		if (!ops_item_route(c, &xs[i].ir.op, refreshed, &xs[i].owner,
		    out))
			return false;
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < i; j++)
			if (same_item(&xs[i], &xs[j])) {
				errors_reply(out, ERR_VALIDATION, "Transaction "
				    "request cannot include multiple operations "
				    "on one item");
				return false;
			}
	return true;
}

/* ---- node calls ---- */

/* The nodes the actions live on, once each, in first-action order. */
static size_t
participants(const action *xs, size_t n, uint32_t *nodes)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		bool seen = false;
		for (size_t j = 0; j < k && !seen; j++)
			seen = nodes[j] == xs[i].owner;
		if (!seen)
			nodes[k++] = xs[i].owner;
	}
	return k;
}

/*
 * One node's actions as one request (op: RPC_TXN_PREPARE, with `limit`,
 * or RPC_MULTI for reads): group_pack fills g->req, group_take takes the
 * node's answer into each action's xs[i].got (in c->a; the node's seq in
 * *seq), group_free frees what group_pack made. Both drivers of the
 * commit (the worker's, the event loop's) and the reads send them.
 */
typedef struct group {
	const uint8_t *subs[TXN_MAX_ACTIONS];
	uint8_t *bufs[TXN_MAX_ACTIONS];
	size_t lens[TXN_MAX_ACTIONS], idx[TXN_MAX_ACTIONS], k, packed;
	rpc_request req;
} group;

static kv_err
group_pack(group *g, action *xs, size_t n, uint32_t node, rpc_op op,
    uint64_t txn, uint32_t keeper, uint32_t limit)
{
	kv_err rv = KV_OK;
	g->k = g->packed = 0;
	for (size_t i = 0; i < n; i++)
		if (xs[i].owner == node)
			g->idx[g->k++] = i;
	while (g->packed < g->k && (rv = wire_pack_request(
	    &xs[g->idx[g->packed]].ir.op.req, &g->bufs[g->packed],
	    &g->lens[g->packed])) == KV_OK) {
		g->subs[g->packed] = g->bufs[g->packed];
		g->packed++;
	}
	g->req = (rpc_request) { .op = op, .subs = g->subs,
		.sub_lens = g->lens, .n_subs = g->k, .txn = txn, .node = keeper,
		.limit = limit };
	return rv;
}

/* KV_OK, or why the node as a whole did not answer (KV_STALE_ROUTE
 * among them). Takes resp (wire_response_fini). */
static kv_err
group_take(api_ctx *c, group *g, action *xs, rpc_response *resp,
    uint64_t *seq)
{
	kv_err rv = resp->code != KV_OK ? resp->code :
	    resp->n_subs != g->k ? KV_PROTO : KV_OK;
	if (seq != NULL)
		*seq = resp->seq;
	for (size_t j = 0; rv == KV_OK && j < g->k; j++) {
		action *x = &xs[g->idx[j]];
		rv = wire_unpack_response(resp->subs[j], resp->sub_lens[j],
		    c->a, &x->got);
		x->answered = rv == KV_OK;
	}
	wire_response_fini(resp);
	return rv;
}

static void
group_free(group *g)
{
	for (size_t j = 0; j < g->packed; j++)
		free(g->bufs[j]);
	g->packed = 0;
}

/* group_pack, the call, group_take: the node's seq in *seq. */
static kv_err
send_group(api_ctx *c, action *xs, size_t n, uint32_t node, rpc_op op,
    uint64_t txn, uint32_t keeper, uint32_t limit, uint64_t *seq)
{
	group g;
	rpc_response resp;
	kv_err rv = group_pack(&g, xs, n, node, op, txn, keeper, limit);
	if (rv == KV_OK)
		rv = conn_call(c->r, node, &g.req, c->a, &resp);
	if (rv == KV_OK)
		rv = group_take(c, &g, xs, &resp, seq);
	group_free(&g);
	return rv;
}

/* One call of op (FINISH or DECIDE, with `limit`) to node; the node's
 * answer's code, and its seq in *seq. */
static kv_err
call_node(api_ctx *c, uint32_t node, rpc_op op, uint64_t txn,
    uint32_t limit, uint64_t *seq)
{
	rpc_request req = { .op = op, .txn = txn, .limit = limit };
	rpc_response resp;
	memset(&resp, 0, sizeof(resp));
	kv_err rv = conn_call(c->r, node, &req, c->a, &resp);
	if (rv == KV_OK) {
		rv = resp.code;
		if (seq != NULL)
			*seq = resp.seq;
		wire_response_fini(&resp);
	}
	return rv;
}

/* ---- tokens ---- */

typedef struct token {
	bool given;
	uint8_t hashes[32]; /* the token's, the request's */
	uint32_t keeper;
} token;

/* Reads ClientRequestToken; false after filling *out. */
static bool
read_token(api_ctx *c, json_t *body, json_t *items, token *t, reply *out)
{
	const char *s;
	memset(t, 0, sizeof(*t));
	if (!req_string(body, "ClientRequestToken", &s, out))
		return false;
	if (s == NULL)
		return true;
	size_t len = strlen(s);
	if (len < 1 || len > TOKEN_MAX) {
		errors_reply(out, ERR_VALIDATION, "1 validation error detected: "
		    "Value '%s' at 'clientRequestToken' failed to satisfy "
		    "constraint: Member must have length %s", s, len < 1 ?
		    "greater than or equal to 1" :
		    "less than or equal to 36");
		return false;
	}
	char *canon = json_dumps(items, JSON_COMPACT | JSON_SORT_KEYS);
	if (canon == NULL) {
		errors_from_kv(out, KV_ENOMEM);
		return false;
	}
	XXH128_hash_t th = XXH3_128bits(s, len);
	XXH128_hash_t ph = XXH3_128bits(canon, strlen(canon));
	free(canon);
	XXH128_canonicalFromHash((XXH128_canonical_t *) t->hashes, th);
	XXH128_canonicalFromHash((XXH128_canonical_t *) (t->hashes + 16), ph);
	t->keeper = (uint32_t) (th.low64 % c->r->cfg.n_nodes);
	t->given = true;
	return true;
}

/* RPC_TXN_TOKEN step on t's keeper: KV_OK with *state for BEGIN. */
static kv_err
token_step(api_ctx *c, const token *t, uint32_t step, uint64_t *state)
{
	rpc_request req = { .op = RPC_TXN_TOKEN, .limit = step,
		.item = t->hashes, .item_len = sizeof(t->hashes) };
	rpc_response resp;
	memset(&resp, 0, sizeof(resp));
	kv_err rv = conn_call(c->r, t->keeper, &req, c->a, &resp);
	if (rv == KV_OK) {
		rv = resp.code;
		if (state != NULL)
			*state = resp.seq;
		wire_response_fini(&resp);
	}
	return rv;
}

/* ---- answers ---- */

/* ConsumedCapacity of the actions: per table, half units in half[i]. */
static void
consumed(json_t *j, const char *mode, const action *xs, const uint64_t *half,
    size_t n)
{
	if (mode == NULL)
		return;
	json_t *list = json_array();
	for (size_t i = 0; i < n; i++) {
		bool first = true;
		for (size_t k = 0; k < i && first; k++)
			first = strcmp(xs[k].ir.op.table, xs[i].ir.op.table) != 0;
		if (!first)
			continue;
		uint64_t sum = 0;
		for (size_t k = i; k < n; k++)
			if (strcmp(xs[k].ir.op.table, xs[i].ir.op.table) == 0)
				sum += half[k];
		json_array_append_new(list, req_consumed_object(mode,
		    xs[i].ir.op.table, sum, NULL, NULL, NULL, 0));
	}
	json_object_set_new(j, "ConsumedCapacity", list);
}

/*
 * ItemCollectionMetrics of a committed transaction: for each write to a
 * table with local indexes, its item collection's size after it (as its
 * participant worked it out when it prepared), by table.
 */
static void
collection_metrics(api_ctx *c, const action *xs, size_t n, json_t *j)
{
	json_t *map = json_object();
	route_read_lock();
	for (size_t i = 0; i < n; i++) {
		if (!xs[i].answered || !xs[i].got.has_coll)
			continue;
		const table *t = catalog_find(route_current(c->r),
		    xs[i].ir.op.table, strlen(xs[i].ir.op.table));
		if (t != NULL)
			req_collection_metrics_add(map, t, &xs[i].ir.v,
			    xs[i].got.coll_size);
	}
	route_read_unlock();
	if (json_object_size(map) > 0)
		json_object_set_new(j, "ItemCollectionMetrics", map);
	else
		json_decref(map);
}

/* The reason of one action's answer, for CancellationReasons. */
static json_t *
reason_of(api_ctx *c, const action *x, const char **code)
{
	const rpc_response *g = &x->got;
	json_t *r = NULL;
	*code = "None";
	if (!x->answered || g->code == KV_OK)
		return json_pack("{s:s}", "Code", "None");
	switch (g->code) {
	case KV_COND_FAILED:
		*code = "ConditionalCheckFailed";
		r = json_pack("{s:s,s:s}", "Code", *code, "Message",
		    "The conditional request failed");
		if (r != NULL && g->found && g->item != NULL) {
			value item;
			if (codec_decode(c->a, g->item, g->item_len, &item) ==
			    KV_OK)
				json_object_set_new(r, "Item",
				    json_from_item(&item));
		}
		return r;
	case KV_TXN_CONFLICT:
		*code = "TransactionConflict";
		return json_pack("{s:s,s:s}", "Code", *code, "Message",
		    "Transaction is ongoing for the item.");
	case KV_THROTTLED:
		/* DynamoDB's code by the table's billing: provisioned tables
		 * exceed their throughput, on-demand ones are throttled; a
		 * global index that cannot take the write has DynamoDB's
		 * message for an index (errors.c). */
		*code = (g->throttle & RPC_THROTTLE_TABLE_PROVISIONED) ?
		    "ProvisionedThroughputExceeded" : "ThrottlingError";
		return json_pack("{s:s,s:s}", "Code", *code, "Message",
		    errors_throttle_message(g->throttle, false));
	case KV_COLL_FULL:
		*code = "ItemCollectionSizeLimitExceeded";
		return json_pack("{s:s,s:s}", "Code", *code, "Message",
		    "Collection size exceeded.");
	default:
		*code = "ValidationError";
		return json_pack("{s:s,s:s}", "Code", *code, "Message",
		    g->message != NULL ? g->message : "Invalid request");
	}
}

/* TransactionCanceledException listing each action's reason. */
static void
reply_canceled(api_ctx *c, const action *xs, size_t n, reply *out)
{
	json_t *list = json_array();
	jtext codes;
	jtext_init(&codes);
	for (size_t i = 0; i < n; i++) {
		const char *code;
		json_array_append_new(list, reason_of(c, &xs[i], &code));
		if (i > 0)
			jtext_lit(&codes, ", ");
		jtext_raw(&codes, code, strlen(code));
	}
	json_t *extra = json_pack("{s:o}", "CancellationReasons", list);
	errors_reply_with(out, ERR_TXN_CANCELED, extra, "Transaction "
	    "cancelled, please refer cancellation reasons for specific "
	    "reasons [%.*s]", (int) codes.len, codes.p != NULL ? codes.p : "");
	jtext_fini(&codes);
}

/* ---- TransactWriteItems ---- */

/* Reads and checks the actions; false after filling *out. */
static bool
read_actions(api_ctx *c, json_t *items, action *xs, reply *out)
{
	size_t n = json_array_size(items), bytes = 0;
	for (size_t i = 0; i < n; i++) {
		json_t *inner = NULL;
		int k = action_kind(json_array_get(items, i), &inner);
		static const item_kind as[4] = { ITEM_DELETE, ITEM_PUT,
			ITEM_DELETE, ITEM_UPDATE };
		if (k < 0 || !json_is_object(inner)) {
			errors_reply(out, ERR_VALIDATION, "TransactItems can "
			    "only contain one of Check, Put, Update or Delete");
			return false;
		}
		memset(&xs[i], 0, sizeof(xs[i]));
		if (!ops_item_prepare(c, as[k], inner, &xs[i].ir, out))
			return false;
		if (k == 0) {
			json_t *ce = json_object_get(inner,
			    "ConditionExpression");
			if ((ce == NULL || json_is_null(ce)) &&
			    json_object_get(inner, "Expected") == NULL) {
				errors_reply(out, ERR_VALIDATION, "1 validation "
				    "error detected: Value null at "
				    "'transactItems.%zu.member.conditionCheck."
				    "conditionExpression' failed to satisfy "
				    "constraint: Member must not be null",
				    i + 1);
				return false;
			}
			xs[i].ir.op.req.op = RPC_CHECK;
		}
		/* Only the failed condition's item may come back. */
		xs[i].ir.op.req.return_values = RPC_RETURN_NONE;
		bytes += item_size(&xs[i].ir.v);
	}
	/* Our wording: DynamoDB's full text was not found. */
	if (bytes > TXN_MAX_BYTES) {
		errors_reply(out, ERR_VALIDATION, "Transaction request size "
		    "cannot exceed 4 MB");
		return false;
	}
	return true;
}

typedef enum outcome {
	TXN_DONE,      /* committed: answer success */
	TXN_CANCELED,  /* an action failed: answer its reasons */
	TXN_STALE,     /* a route moved: start over */
	TXN_FAILED,    /* *out filled */
} outcome;

/*
 * One attempt at the two phases over the routed actions, as steps that
 * two drivers run: the worker's (two_phase: a step's calls at once) and
 * the event loop's (ops_txn_start and ops_txn_next: one call after
 * another). Every other participant prepares first; then the decision
 * keeper (the first action's node) prepares its share and, if it can,
 * records COMMIT and commits (RPC_TXN_PREPARE with RPC_TXN_COMMIT); then
 * the others commit. So a transaction of one node is one call, and one
 * of several, three rounds. If an action failed anywhere, every
 * participant is still asked (so that the answer gives each action's
 * reason), and those that prepared abort.
 *
 * tp_begin starts; each tp_advance takes the outcomes of the calls of
 * the step before (their rv and seq, a PREPARE's answers already in xs)
 * and returns true with the next step's calls in calls[0..nc), or false
 * at the end, with the outcome in `result` (*out filled for TXN_FAILED).
 */
typedef enum tp_step {
	TP_START,
	TP_OTHERS, /* the participants but the keeper prepare */
	TP_KEEPER, /* the keeper prepares and decides */
	TP_FINISH, /* the others commit or abort */
	TP_END,
} tp_step;

typedef struct tp_call {
	uint32_t node;
	rpc_op op;      /* RPC_TXN_PREPARE (the node's actions), RPC_TXN_FINISH */
	uint32_t limit;
	kv_err rv;
	uint64_t seq;   /* the keeper's: its decision */
} tp_call;

typedef struct tp {
	action *xs;
	size_t n;
	uint32_t nodes[TXN_MAX_ACTIONS]; /* nodes[0]: the keeper */
	bool prepared[TXN_MAX_ACTIONS];
	size_t np;
	uint64_t txn;
	tp_step step;
	kv_err fail;
	bool canceled, keeper_ok;
	tp_call calls[TXN_MAX_ACTIONS];
	size_t nc;
	outcome result;
} tp;

static void
tp_begin(tp *t, action *xs, size_t n)
{
	memset(t, 0, sizeof(*t));
	t->xs = xs;
	t->n = n;
	t->np = participants(xs, n, t->nodes);
	while (t->txn == 0 || t->txn == UINT64_MAX) /* node/txn: id + 1 */
		arc4random_buf(&t->txn, sizeof(t->txn));
	for (size_t i = 0; i < n; i++)
		xs[i].answered = false;
}

static void
tp_add(tp *t, uint32_t node, rpc_op op, uint32_t limit)
{
	t->calls[t->nc++] = (tp_call) { .node = node, .op = op,
		.limit = limit };
}

/* Whether every action of `node` succeeded. */
static bool
tp_node_ok(const tp *t, uint32_t node)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->xs[i].owner == node && t->xs[i].got.code != KV_OK)
			return false;
	return true;
}

/* After the keeper (or instead of it): abort, or commit, the others. */
static void
tp_finish(api_ctx *c, tp *t, uint64_t decision, reply *out)
{
	t->step = TP_FINISH;
	if (t->fail != KV_OK || t->canceled) {
		t->prepared[0] = t->keeper_ok && t->canceled; /* undecided */
		for (size_t i = 0; i < t->np; i++)
			if (t->prepared[i])
				tp_add(t, t->nodes[i], RPC_TXN_FINISH,
				    RPC_TXN_ABORT);
		if (t->fail == KV_STALE_ROUTE) {
			t->result = TXN_STALE;
		} else if (t->fail != KV_OK) {
			errors_from_kv(out, t->fail);
			t->result = TXN_FAILED;
		} else {
			t->result = TXN_CANCELED;
		}
		return;
	}
	bool commit = decision == RPC_TXN_COMMIT;
	if (commit && c->r->txn_fault == ROUTER_FAULT_DECIDED)
		_exit(9);
	for (size_t i = 1; i < t->np; i++)
		if (t->prepared[i])
			tp_add(t, t->nodes[i], RPC_TXN_FINISH, commit ?
			    RPC_TXN_COMMIT : RPC_TXN_ABORT);
	t->result = commit ? TXN_DONE : TXN_CANCELED;
	if (!commit) /* resolved as aborted while we prepared (too slow) */
		for (size_t i = 0; i < t->n; i++)
			t->xs[i].got.code = KV_TXN_CONFLICT;
}

static bool
tp_advance(api_ctx *c, tp *t, reply *out)
{
	for (;;) {
		tp_call *k = t->calls;
		size_t nc = t->nc;
		t->nc = 0;
		switch (t->step) {
		case TP_START:
			t->step = TP_OTHERS;
			for (size_t i = 1; i < t->np; i++)
				tp_add(t, t->nodes[i], RPC_TXN_PREPARE, 0);
			break;
		case TP_OTHERS:
			for (size_t i = 0; i < nc; i++) {
				if (k[i].rv != KV_OK) {
					if (t->fail == KV_OK ||
					    t->fail == KV_STALE_ROUTE)
						t->fail = k[i].rv;
					continue;
				}
				/* A node whose action failed prepared nothing. */
				t->prepared[i + 1] = tp_node_ok(t, k[i].node);
				t->canceled |= !t->prepared[i + 1];
			}
			if (t->fail != KV_OK) {
				tp_finish(c, t, 0, out);
				break;
			}
			if (c->r->txn_fault == ROUTER_FAULT_PREPARED &&
			    !t->canceled && t->np > 1)
				_exit(9); /* --txn-fault: a coordinator's crash */
			/* The keeper: to commit, or only for its reasons. */
			t->step = TP_KEEPER;
			tp_add(t, t->nodes[0], RPC_TXN_PREPARE, t->canceled ?
			    0 : RPC_TXN_COMMIT);
			break;
		case TP_KEEPER: {
			kv_err rv = k[0].rv;
			t->keeper_ok = rv == KV_OK && tp_node_ok(t, t->nodes[0]);
			if (rv != KV_OK && rv != KV_STALE_ROUTE && !t->canceled) {
				/* It may have committed: the others ask it. */
				errors_reply(out, ERR_INTERNAL, "The "
				    "transaction's outcome could not be "
				    "learned; it may or may not have been "
				    "applied");
				t->result = TXN_FAILED;
				t->step = TP_END;
				return false;
			}
			t->fail = rv;
			t->canceled |= rv == KV_OK && !t->keeper_ok;
			tp_finish(c, t, k[0].seq, out);
			break;
		}
		case TP_FINISH:
		case TP_END:
			t->step = TP_END;
			return false;
		}
		if (t->nc > 0)
			return true;
	}
}

/*
 * Calls to several participants at once: each on a thread of its own
 * (the first on the caller's), with an arena of its own that outlives
 * the call (the answers live there until the request ends: calls_fini).
 */
typedef struct call {
	api_ctx c;
	arena a;
	tp *t;
	tp_call *k;
	struct call *next; /* every call made, for calls_fini */
} call;

static void *
call_run(void *arg)
{
	call *q = arg;
	tp_call *k = q->k;
	thread_name("kv-txn-call");
	if (k->op == RPC_TXN_PREPARE)
		k->rv = send_group(&q->c, q->t->xs, q->t->n, k->node, k->op,
		    q->t->txn, q->t->nodes[0], k->limit, &k->seq);
	else
		k->rv = call_node(&q->c, k->node, k->op, q->t->txn, k->limit,
		    &k->seq);
	return NULL;
}

/* The worker's driver: each step's calls at once. */
static outcome
two_phase(api_ctx *c, call **all, action *xs, size_t n, reply *out)
{
	tp t;
	tp_begin(&t, xs, n);
	while (tp_advance(c, &t, out)) {
		call *qs[TXN_MAX_ACTIONS];
		pthread_t th[TXN_MAX_ACTIONS];
		bool started[TXN_MAX_ACTIONS] = { false };
		size_t nq = 0;
		for (size_t i = 0; i < t.nc; i++) {
			call *q = calloc(1, sizeof(*q));
			if (q == NULL) {
				t.calls[i].rv = KV_ENOMEM;
				continue;
			}
			*q = (call) { .c = *c, .t = &t, .k = &t.calls[i],
				.next = *all };
			arena_init(&q->a);
			q->c.a = &q->a;
			*all = q;
			qs[nq++] = q;
		}
		for (size_t i = 1; i < nq; i++)
			started[i] = pthread_create(&th[i], NULL, call_run,
			    qs[i]) == 0;
		if (nq > 0)
			call_run(qs[0]);
		for (size_t i = 1; i < nq; i++) {
			if (started[i])
				pthread_join(th[i], NULL);
			else
				call_run(qs[i]); /* no thread: in turn */
		}
	}
	return t.result;
}

static void
calls_fini(call *all)
{
	while (all != NULL) {
		call *next = all->next;
		arena_fini(&all->a);
		free(all);
		all = next;
	}
}

/* The answer to a TransactWriteItems that ended as o (not TXN_STALE). */
static void
answer_write(api_ctx *c, outcome o, const action *xs, size_t n,
    const char *mode, bool metrics, reply *out)
{
	switch (o) {
	case TXN_DONE: {
		/* Two write units per item unit: prepare and commit. */
		uint64_t *half = arena_alloc(c->a, n * sizeof(*half));
		if (half == NULL)
			return errors_from_kv(out, KV_ENOMEM);
		for (size_t i = 0; i < n; i++)
			half[i] = 4 * capacity_write_units(xs[i].got.old_size,
			    xs[i].got.new_size);
		json_t *j = json_object();
		consumed(j, mode, xs, half, n);
		if (metrics)
			collection_metrics(c, xs, n, j);
		api_reply_json(out, j);
		break;
	}
	case TXN_CANCELED:
		reply_canceled(c, xs, n, out);
		break;
	case TXN_STALE:
		errors_reply(out, ERR_UNAVAILABLE,
		    "The partition map kept changing; try again");
		break;
	case TXN_FAILED:
		break;
	}
}

static void
actions_fini(action *xs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (xs[i].answered)
			wire_response_fini(&xs[i].got);
}

/*
 * What both paths read first: the options and the actions (not routed).
 * False after filling *out.
 */
static bool
read_write(api_ctx *c, json_t *body, const char **mode, bool *metrics,
    json_t **items, action **xs, reply *out)
{
	if (!req_capacity(body, mode, out) ||
	    !req_metrics_mode(body, metrics, out) ||
	    !read_items(body, items, out))
		return false;
	*xs = arena_alloc(c->a, json_array_size(*items) * sizeof(**xs));
	if (*xs == NULL) {
		errors_from_kv(out, KV_ENOMEM);
		return false;
	}
	return true;
}

void
ops_txn_write(api_ctx *c, json_t *body, reply *out)
{
	json_t *items;
	const char *mode;
	bool metrics, refreshed = false;
	token tok;
	action *xs;

	if (!read_write(c, body, &mode, &metrics, &items, &xs, out) ||
	    !read_token(c, body, items, &tok, out))
		return;
	size_t n = json_array_size(items);
	if (!read_actions(c, items, xs, out) ||
	    !route_all(c, xs, n, &refreshed, out))
		return;
	if (tok.given) {
		uint64_t state = 0;
		kv_err rv = token_step(c, &tok, RPC_TOKEN_BEGIN, &state);
		if (rv != KV_OK)
			return errors_from_kv(out, rv);
		if (state == RPC_TOKEN_MISMATCH) {
			errors_reply(out, ERR_IDEMPOTENT_MISMATCH, "The request "
			    "uses the same client token as a previous, but "
			    "non-identical request.");
			return;
		}
		if (state == RPC_TOKEN_RUNNING) {
			errors_reply(out, ERR_TXN_IN_PROGRESS, "The transaction "
			    "with the given request token is already in "
			    "progress.");
			return;
		}
		if (state == RPC_TOKEN_COMMITTED) {
			/* Done before: success, applying nothing; a repeat
			 * costs the reads that found it done (DynamoDB). */
			uint64_t *half = arena_alloc(c->a, n * sizeof(*half));
			if (half == NULL)
				return errors_from_kv(out, KV_ENOMEM);
			for (size_t i = 0; i < n; i++)
				half[i] = capacity_read_half_units(
				    item_size(&xs[i].ir.v), true);
			json_t *j = json_object();
			consumed(j, mode, xs, half, n);
			api_reply_json(out, j);
			return;
		}
	}
	outcome o = TXN_STALE;
	call *all = NULL;
	for (int attempt = 0; attempt < ROUTE_STALE_RETRIES &&
	    o == TXN_STALE; attempt++) {
		if (attempt > 0) {
			route_stale(c->r, attempt - 1);
			refreshed = true;
			if (!route_all(c, xs, n, &refreshed, out)) {
				o = TXN_FAILED;
				break;
			}
		}
		o = two_phase(c, &all, xs, n, out);
	}
	if (tok.given)
		(void) token_step(c, &tok, o == TXN_DONE ? RPC_TOKEN_DONE :
		    RPC_TOKEN_DROP, NULL);
	answer_write(c, o, xs, n, mode, metrics, out);
	actions_fini(xs, n);
	calls_fini(all);
}

/* ---- TransactWriteItems on the event loop (ops_txn.h) ---- */

struct ops_txn_async {
	action *xs;
	size_t n;
	const char *mode;
	bool metrics;
	tp t;
	size_t next;    /* t.calls[next]: the call out */
	unsigned made;  /* calls handed out */
	group g;        /* its request */
};

/*
 * Hands out the next call, or ends: 1 with *req and *owner, 0 with *out,
 * -1 for the worker (a stale route: nothing is prepared any more).
 */
static int
async_go(api_ctx *c, ops_txn_async *s, const rpc_request **req,
    uint32_t *owner, reply *out)
{
	for (;;) {
		if (s->next < s->t.nc) {
			tp_call *k = &s->t.calls[s->next];
			kv_err rv = KV_OK;
			if (k->op == RPC_TXN_PREPARE)
				rv = group_pack(&s->g, s->xs, s->n, k->node,
				    k->op, s->t.txn, s->t.nodes[0], k->limit);
			else
				s->g.req = (rpc_request) { .op = k->op,
					.txn = s->t.txn, .limit = k->limit };
			if (rv == KV_OK) {
				s->made++;
				*req = &s->g.req;
				*owner = k->node;
				return 1;
			}
			group_free(&s->g);
			k->rv = rv;
			s->next++;
			continue;
		}
		if (!tp_advance(c, &s->t, out))
			break;
		s->next = 0;
	}
	outcome o = s->t.result;
	if (o != TXN_STALE)
		answer_write(c, o, s->xs, s->n, s->mode, s->metrics, out);
	actions_fini(s->xs, s->n);
	s->n = 0;
	return o == TXN_STALE ? -1 : 0;
}

int
ops_txn_start(api_ctx *c, json_t *body, ops_txn_async **sp,
    const rpc_request **req, uint32_t *owner, reply *out)
{
	json_t *items;
	ops_txn_async *s = arena_alloc(c->a, sizeof(*s));
	*sp = NULL;
	if (s == NULL) {
		errors_from_kv(out, KV_ENOMEM);
		return 0;
	}
	memset(s, 0, sizeof(*s));
	if (!read_write(c, body, &s->mode, &s->metrics, &items, &s->xs, out))
		return 0;
	/* A token's record lives on a node of its own: the worker's. */
	json_t *tok = json_object_get(body, "ClientRequestToken");
	if (tok != NULL && !json_is_null(tok))
		return -1;
	size_t n = json_array_size(items);
	if (!read_actions(c, items, s->xs, out))
		return 0;
	if (!route_all(c, s->xs, n, NULL, out))
		return out->status == 0 ? -1 : 0; /* 0: not in the catalog */
	s->n = n;
	tp_begin(&s->t, s->xs, n);
	*sp = s;
	return async_go(c, s, req, owner, out);
}

int
ops_txn_next(api_ctx *c, ops_txn_async *s, kv_err rv, rpc_response *resp,
    const rpc_request **req, uint32_t *owner, reply *out)
{
	tp_call *k = &s->t.calls[s->next];
	if (rv == KV_OK && k->op == RPC_TXN_PREPARE) {
		rv = group_take(c, &s->g, s->xs, resp, &k->seq);
	} else if (rv == KV_OK) {
		rv = resp->code;
		k->seq = resp->seq;
		wire_response_fini(resp);
	}
	group_free(&s->g);
	k->rv = rv;
	s->next++;
	return async_go(c, s, req, owner, out);
}

bool
ops_txn_restartable(const ops_txn_async *s)
{
	return s->made <= 1;
}

void
ops_txn_abort(ops_txn_async *s)
{
	group_free(&s->g);
	actions_fini(s->xs, s->n);
	s->n = 0;
}

/* ---- TransactGetItems ---- */

/*
 * The reads as steps, which both drivers run (the worker's, ops_txn_get,
 * and the event loop's, ops_txn_get_start/next): every item is read by
 * node (RPC_MULTI, a node after another: reading them at once on threads
 * of their own was slower), then checked: the second read asks each
 * node whether anything wrote its items since the first read took their
 * write stamps (RPC_TXN_READ_CHECK; node/store/store.h), without
 * reading them again. Each node checks the stamps of its first-round
 * reads again at the end of them (multi.c), so the node read last needs
 * no second round, and a single node none at all: its items held from
 * their reads to the end of its answer, which is the moment the answer
 * stands for, since the other nodes' items, read before it, are checked
 * after it. The answer stands when no item was in a prepared
 * transaction at either check and none was written in between; a write
 * in between reads them all again. tg_read starts a read; tg_node names
 * the node to read next (false when the read is whole); tg_took takes a
 * node's outcome; tg_after judges a whole read: 1 for another read, 0
 * with *out filled, -1 for a stale route (refresh it and begin again).
 */
typedef enum tg_step {
	TG_FIRST,
	TG_SECOND,
} tg_step;

typedef struct tg {
	action *xs;
	size_t n;
	const char *mode;
	rpc_response *first;
	uint32_t nodes[TXN_MAX_ACTIONS];
	size_t np, k; /* k: the node being read */
	int round;
	tg_step step;
	kv_err fail;  /* a node that did not answer */
} tg;

static void
tg_read(tg *t)
{
	t->np = participants(t->xs, t->n, t->nodes);
	/* The node read last has checked its items itself (multi.c). */
	if (t->step == TG_SECOND && t->np > 0)
		t->np--;
	t->k = 0;
	t->fail = KV_OK;
	for (size_t i = 0; i < t->n; i++)
		t->xs[i].answered = false;
}

static bool
tg_node(const tg *t, uint32_t *node)
{
	if (t->k >= t->np || t->fail != KV_OK)
		return false;
	*node = t->nodes[t->k];
	return true;
}

static void
tg_took(tg *t, kv_err rv)
{
	if (rv != KV_OK)
		t->fail = rv;
	t->k++;
}

/* The Responses of agreeing reads, written as text (the hot path). */
static void
answer_get(api_ctx *c, const tg *t, reply *out)
{
	uint64_t *half = arena_alloc(c->a, t->n * sizeof(*half));
	jtext j;
	if (half == NULL)
		return errors_from_kv(out, KV_ENOMEM);
	jtext_init(&j);
	jtext_lit(&j, "{\"Responses\":[");
	for (size_t i = 0; i < t->n; i++) {
		const rpc_response *g = &t->first[i]; /* the items read */
		if (i > 0)
			jtext_lit(&j, ",");
		jtext_lit(&j, "{");
		if (!ops_write_item(c, &j, g, "Item", t->xs[i].ir.x.proj)) {
			jtext_fini(&j);
			return errors_from_kv(out, KV_ENOMEM);
		}
		jtext_lit(&j, "}");
		/* A transactional read: twice a strongly consistent one. */
		half[i] = 2 * capacity_read_half_units(g->old_size, true);
	}
	jtext_lit(&j, "]");
	if (t->mode != NULL) {
		json_t *o = json_object();
		consumed(o, t->mode, t->xs, half, t->n);
		jtext_member(&j, "ConsumedCapacity");
		jtext_json(&j, json_object_get(o, "ConsumedCapacity"));
		json_decref(o);
	}
	jtext_lit(&j, "}");
	api_reply_text(out, &j);
}

static int
tg_after(api_ctx *c, tg *t, reply *out)
{
	action *xs = t->xs;
	if (t->fail != KV_OK) {
		errors_from_kv(out, t->fail);
		return 0;
	}
	if (t->step == TG_FIRST) {
		bool stale = false, locked = false, failed = false;
		for (size_t i = 0; i < t->n; i++) {
			stale |= xs[i].got.code == KV_STALE_ROUTE;
			locked |= xs[i].got.locked;
			t->first[i] = xs[i].got;
		}
		if (stale)
			return -1;
		for (size_t i = 0; i < t->n; i++) {
			if (xs[i].got.code != KV_OK)
				failed = true;
			else if (xs[i].got.locked)
				xs[i].got.code = KV_TXN_CONFLICT;
		}
		if (failed || locked) {
			reply_canceled(c, xs, t->n, out);
			return 0;
		}
		if (t->np == 1) {
			/* One node: it checked its reads itself. */
			answer_get(c, t, out);
			return 0;
		}
		/* The second read checks each item's stamp. */
		for (size_t i = 0; i < t->n; i++) {
			xs[i].ir.op.req.txn = RPC_TXN_READ_CHECK;
			xs[i].ir.op.req.ack = t->first[i].seq;
		}
		t->step = TG_SECOND;
		return 1;
	}
	bool agree = true;
	for (size_t i = 0; i < t->n; i++) {
		rpc_request *q = &xs[i].ir.op.req;
		q->txn = RPC_TXN_READ; /* for a read again */
		q->ack = 0;
		if (xs[i].got.code != KV_OK || xs[i].got.locked) {
			agree = false;
			xs[i].got.code = xs[i].got.code != KV_OK ?
			    xs[i].got.code : KV_TXN_CONFLICT;
		}
	}
	if (agree) {
		answer_get(c, t, out);
		return 0;
	}
	if (t->round == GET_ROUNDS - 1) {
		reply_canceled(c, xs, t->n, out);
		return 0;
	}
	t->round++;
	t->step = TG_FIRST;
	return 1;
}

/*
 * What both paths read first: the options and the Gets (not routed);
 * t's arrays in c->a. False after filling *out.
 */
static bool
read_gets(api_ctx *c, json_t *body, tg *t, reply *out)
{
	json_t *items;
	memset(t, 0, sizeof(*t));
	if (!req_capacity(body, &t->mode, out) ||
	    !read_items(body, &items, out))
		return false;
	size_t n = json_array_size(items);
	t->xs = arena_alloc(c->a, n * sizeof(*t->xs));
	t->first = arena_alloc(c->a, n * sizeof(*t->first));
	if (t->xs == NULL || t->first == NULL) {
		errors_from_kv(out, KV_ENOMEM);
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		json_t *el = json_array_get(items, i);
		json_t *get = json_is_object(el) ? json_object_get(el, "Get") :
		    NULL;
		if (!json_is_object(get) || json_object_size(el) != 1) {
			errors_reply(out, ERR_VALIDATION, "TransactItems can "
			    "only contain one of Get");
			return false;
		}
		memset(&t->xs[i], 0, sizeof(t->xs[i]));
		if (!ops_item_prepare(c, ITEM_GET, get, &t->xs[i].ir, out))
			return false;
		t->xs[i].ir.op.req.consistent = true;
		t->xs[i].ir.op.req.txn = RPC_TXN_READ;
	}
	t->n = n;
	return true;
}

void
ops_txn_get(api_ctx *c, json_t *body, reply *out)
{
	bool refreshed = false;
	tg t;

	if (!read_gets(c, body, &t, out) ||
	    !route_all(c, t.xs, t.n, &refreshed, out))
		return;
	for (;;) {
		uint32_t node;
		tg_read(&t);
		while (tg_node(&t, &node))
			tg_took(&t, send_group(c, t.xs, t.n, node, RPC_MULTI, 0,
			    0, 0, NULL));
		int a = tg_after(c, &t, out);
		if (a == 0)
			return;
		if (a < 0) {
			route_stale(c->r, t.round);
			refreshed = true;
			if (!route_all(c, t.xs, t.n, &refreshed, out))
				return;
			if (++t.round == GET_ROUNDS)
				break;
		}
	}
	errors_reply(out, ERR_UNAVAILABLE,
	    "The partition map kept changing; try again");
}

/* ---- TransactGetItems on the event loop (ops_txn.h) ---- */

struct ops_txn_get_async {
	tg t;
	group g; /* the read out */
};

/* The next node's read, or the end: as ops_txn_get_next. */
static int
get_go(api_ctx *c, ops_txn_get_async *s, const rpc_request **req,
    uint32_t *owner, reply *out)
{
	for (;;) {
		uint32_t node;
		while (tg_node(&s->t, &node)) {
			kv_err rv = group_pack(&s->g, s->t.xs, s->t.n, node,
			    RPC_MULTI, 0, 0, 0);
			if (rv == KV_OK) {
				*req = &s->g.req;
				*owner = node;
				return 1;
			}
			group_free(&s->g);
			tg_took(&s->t, rv);
		}
		int a = tg_after(c, &s->t, out);
		if (a <= 0)
			return a; /* -1: a stale route, the worker's */
		tg_read(&s->t);
	}
}

int
ops_txn_get_start(api_ctx *c, json_t *body, ops_txn_get_async **sp,
    const rpc_request **req, uint32_t *owner, reply *out)
{
	ops_txn_get_async *s = arena_alloc(c->a, sizeof(*s));
	*sp = s;
	if (s == NULL) {
		errors_from_kv(out, KV_ENOMEM);
		return 0;
	}
	memset(s, 0, sizeof(*s));
	if (!read_gets(c, body, &s->t, out))
		return 0;
	if (!route_all(c, s->t.xs, s->t.n, NULL, out))
		return out->status == 0 ? -1 : 0; /* 0: not in the catalog */
	tg_read(&s->t);
	return get_go(c, s, req, owner, out);
}

int
ops_txn_get_next(api_ctx *c, ops_txn_get_async *s, kv_err rv,
    rpc_response *resp, const rpc_request **req, uint32_t *owner,
    reply *out)
{
	if (rv == KV_OK)
		rv = group_take(c, &s->g, s->t.xs, resp, NULL);
	group_free(&s->g);
	tg_took(&s->t, rv);
	return get_go(c, s, req, owner, out);
}

void
ops_txn_get_abort(ops_txn_get_async *s)
{
	group_free(&s->g);
}
