/*
 * ops_txn.c — TransactWriteItems and TransactGetItems: the router
 * coordinates (docs/design-notes.md, "Transactions"; node/txn.h).
 *
 * TransactWriteItems checks every action as the single-item operation
 * would (ops_item_prepare), routes it, refuses two actions on one item,
 * then runs two-phase commit: RPC_TXN_PREPARE to every participant node
 * with its actions; when all of them prepared, RPC_TXN_DECIDE COMMIT to
 * the decision keeper (the first action's node); then RPC_TXN_FINISH to
 * every participant. A participant that failed an action makes the
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
 * TransactGetItems reads its items twice (RPC_MULTI of GETs per node):
 * the answer stands when no item was in a prepared transaction and the
 * two reads agree, so it is a snapshot at a moment between them.
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
#include "request.h"
#include "route.h"

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
 * Sends node `node` its actions (op: RPC_TXN_PREPARE, with `limit`, or
 * RPC_MULTI for reads) and takes each action's answer into xs[i].got, in
 * c->a; the node's seq in *seq. KV_OK, or why the node as a whole did
 * not answer (KV_STALE_ROUTE among them).
 */
static kv_err
send_group(api_ctx *c, action *xs, size_t n, uint32_t node, rpc_op op,
    uint64_t txn, uint32_t keeper, uint32_t limit, uint64_t *seq)
{
	const uint8_t *subs[TXN_MAX_ACTIONS];
	uint8_t *bufs[TXN_MAX_ACTIONS];
	size_t lens[TXN_MAX_ACTIONS], idx[TXN_MAX_ACTIONS], k = 0, packed = 0;
	kv_err rv = KV_OK;
	for (size_t i = 0; i < n; i++)
		if (xs[i].owner == node)
			idx[k++] = i;
	while (packed < k && (rv = wire_pack_request(&xs[idx[packed]].ir.op.req,
	    &bufs[packed], &lens[packed])) == KV_OK) {
		subs[packed] = bufs[packed];
		packed++;
	}
	rpc_request req = { .op = op, .subs = subs, .sub_lens = lens,
		.n_subs = k, .txn = txn, .node = keeper, .limit = limit };
	rpc_response resp;
	memset(&resp, 0, sizeof(resp));
	if (rv == KV_OK)
		rv = conn_call(c->r, node, &req, c->a, &resp);
	if (rv == KV_OK) {
		rv = resp.code != KV_OK ? resp.code :
		    resp.n_subs != k ? KV_PROTO : KV_OK;
		if (seq != NULL)
			*seq = resp.seq;
		for (size_t j = 0; rv == KV_OK && j < k; j++) {
			action *x = &xs[idx[j]];
			rv = wire_unpack_response(resp.subs[j], resp.sub_lens[j],
			    c->a, &x->got);
			x->answered = rv == KV_OK;
		}
		wire_response_fini(&resp);
	}
	for (size_t j = 0; j < packed; j++)
		free(bufs[j]);
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
		 * exceed their throughput, on-demand ones are throttled. */
		*code = (g->throttle & RPC_THROTTLE_TABLE_PROVISIONED) ?
		    "ProvisionedThroughputExceeded" : "ThrottlingError";
		return json_pack("{s:s,s:s}", "Code", *code, "Message",
		    (g->throttle & RPC_THROTTLE_TABLE_PROVISIONED) ?
		    "The level of configured provisioned throughput for the "
		    "table was exceeded. Consider increasing your provisioning "
		    "level with the UpdateTable API." :
		    "Throughput exceeds the current capacity of your table or "
		    "index. DynamoDB is automatically scaling your table or "
		    "index so please try again shortly.");
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
 * Calls to several participants at once: each on a thread of its own
 * (the first on the caller's), with an arena of its own that outlives
 * the call (the answers live there until the request ends: calls_fini).
 */
typedef struct call {
	api_ctx c;
	arena a;
	action *xs;
	size_t n;
	uint32_t node;
	rpc_op op;        /* RPC_TXN_PREPARE or RPC_TXN_FINISH */
	uint64_t txn;
	uint32_t keeper, limit;
	kv_err rv;
	uint64_t seq;
	struct call *next; /* every call made, for calls_fini */
} call;

static void *
call_run(void *arg)
{
	call *k = arg;
	if (k->op == RPC_TXN_PREPARE)
		k->rv = send_group(&k->c, k->xs, k->n, k->node, k->op, k->txn,
		    k->keeper, k->limit, &k->seq);
	else
		k->rv = call_node(&k->c, k->node, k->op, k->txn, k->limit,
		    &k->seq);
	return NULL;
}

/* Runs calls ks[0..nk) at once. */
static void
run_calls(call **ks, size_t nk)
{
	pthread_t th[TXN_MAX_ACTIONS];
	bool started[TXN_MAX_ACTIONS] = { false };
	for (size_t i = 1; i < nk; i++)
		started[i] = pthread_create(&th[i], NULL, call_run, ks[i]) == 0;
	if (nk > 0)
		call_run(ks[0]);
	for (size_t i = 1; i < nk; i++) {
		if (started[i])
			pthread_join(th[i], NULL);
		else
			call_run(ks[i]); /* no thread: in turn */
	}
}

/* A new call, kept on *all; NULL without memory. */
static call *
call_new(api_ctx *c, call **all, action *xs, size_t n, uint32_t node,
    rpc_op op, uint64_t txn, uint32_t keeper, uint32_t limit)
{
	call *k = calloc(1, sizeof(*k));
	if (k == NULL)
		return NULL;
	*k = (call) { .c = *c, .xs = xs, .n = n, .node = node, .op = op,
		.txn = txn, .keeper = keeper, .limit = limit, .next = *all };
	arena_init(&k->a);
	k->c.a = &k->a;
	*all = k;
	return k;
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

/* FINISH (limit) on nodes[0..np) where go[i], at once. */
static void
finish_on(api_ctx *c, call **all, const uint32_t *nodes, const bool *go,
    size_t np, uint64_t txn, uint32_t limit)
{
	call *ks[TXN_MAX_ACTIONS];
	size_t nk = 0;
	for (size_t i = 0; i < np; i++)
		if (go[i] && (ks[nk] = call_new(c, all, NULL, 0, nodes[i],
		    RPC_TXN_FINISH, txn, 0, limit)) != NULL)
			nk++;
	run_calls(ks, nk);
}

/*
 * One attempt at the two phases over the routed actions. Every other
 * participant prepares first, at once; then the decision keeper (the
 * first action's node) prepares its share and, if it can, records
 * COMMIT and commits (RPC_TXN_PREPARE with RPC_TXN_COMMIT); then the
 * others commit, at once. So a transaction of one node is one call, and
 * one of several, three rounds. If an action failed anywhere, every
 * participant is still asked (so that the answer gives each action's
 * reason), and those that prepared abort.
 */
static outcome
two_phase(api_ctx *c, call **all, action *xs, size_t n, reply *out)
{
	uint32_t nodes[TXN_MAX_ACTIONS];
	bool prepared[TXN_MAX_ACTIONS] = { false };
	call *ks[TXN_MAX_ACTIONS];
	size_t np = participants(xs, n, nodes), nk = 0;
	uint64_t txn = 0;
	while (txn == 0 || txn == UINT64_MAX) /* node/txn: id + 1 bounds */
		arc4random_buf(&txn, sizeof(txn));
	uint32_t keeper = nodes[0];
	kv_err fail = KV_OK;
	bool canceled = false;
	for (size_t i = 0; i < n; i++)
		xs[i].answered = false;
	for (size_t i = 1; i < np; i++)
		if ((ks[nk] = call_new(c, all, xs, n, nodes[i], RPC_TXN_PREPARE,
		    txn, keeper, 0)) != NULL)
			nk++;
	if (nk != np - 1) {
		errors_from_kv(out, KV_ENOMEM);
		return TXN_FAILED;
	}
	run_calls(ks, nk);
	for (size_t k = 0; k < nk; k++) {
		if (ks[k]->rv != KV_OK) {
			if (fail == KV_OK || fail == KV_STALE_ROUTE)
				fail = ks[k]->rv;
			continue;
		}
		/* A node whose action failed prepared nothing. */
		prepared[k + 1] = true;
		for (size_t i = 0; i < n; i++)
			if (xs[i].owner == ks[k]->node && xs[i].got.code != KV_OK)
				prepared[k + 1] = false;
		canceled |= !prepared[k + 1];
	}
	if (fail == KV_OK && c->r->txn_fault == ROUTER_FAULT_PREPARED &&
	    !canceled && np > 1)
		_exit(9); /* --txn-fault: a coordinator's crash, for tests */
	/* The keeper: to commit, or only for its reasons. */
	uint64_t outcome = 0;
	kv_err rv = fail == KV_OK ? send_group(c, xs, n, keeper,
	    RPC_TXN_PREPARE, txn, keeper, canceled ? 0 : RPC_TXN_COMMIT,
	    &outcome) : KV_OK;
	bool keeper_ok = fail == KV_OK && rv == KV_OK;
	for (size_t i = 0; keeper_ok && i < n; i++)
		if (xs[i].owner == keeper && xs[i].got.code != KV_OK)
			keeper_ok = false;
	if (fail == KV_OK && rv != KV_OK && rv != KV_STALE_ROUTE &&
	    !canceled) {
		/* It may have committed: the others ask it themselves. */
		errors_reply(out, ERR_INTERNAL, "The transaction's outcome "
		    "could not be learned; it may or may not have been "
		    "applied");
		return TXN_FAILED;
	}
	if (fail == KV_OK && rv != KV_OK)
		fail = rv;
	canceled |= fail == KV_OK && !keeper_ok;
	if (fail != KV_OK || canceled) {
		prepared[0] = keeper_ok && canceled; /* prepared, not decided */
		finish_on(c, all, nodes, prepared, np, txn, RPC_TXN_ABORT);
		if (fail == KV_STALE_ROUTE)
			return TXN_STALE;
		if (fail != KV_OK) {
			errors_from_kv(out, fail);
			return TXN_FAILED;
		}
		return TXN_CANCELED;
	}
	bool commit = outcome == RPC_TXN_COMMIT;
	if (commit && c->r->txn_fault == ROUTER_FAULT_DECIDED)
		_exit(9);
	finish_on(c, all, nodes, prepared, np, txn, commit ? RPC_TXN_COMMIT :
	    RPC_TXN_ABORT);
	if (!commit) {
		/* Resolved as aborted while we prepared (too slow). */
		for (size_t i = 0; i < n; i++)
			xs[i].got.code = KV_TXN_CONFLICT;
		return TXN_CANCELED;
	}
	return TXN_DONE;
}

void
ops_txn_write(api_ctx *c, json_t *body, reply *out)
{
	json_t *items;
	const char *mode;
	bool metrics, refreshed = false;
	token tok;

	if (!req_capacity(body, &mode, out) ||
	    !req_metrics_mode(body, &metrics, out) ||
	    !read_items(body, &items, out) ||
	    !read_token(c, body, items, &tok, out))
		return;
	size_t n = json_array_size(items);
	action *xs = arena_alloc(c->a, n * sizeof(*xs));
	uint64_t *half = arena_alloc(c->a, n * sizeof(*half));
	if (xs == NULL || half == NULL)
		return errors_from_kv(out, KV_ENOMEM);
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
	switch (o) {
	case TXN_DONE: {
		/* Two write units per item unit: prepare and commit. */
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
	for (size_t i = 0; i < n; i++)
		if (xs[i].answered)
			wire_response_fini(&xs[i].got);
	calls_fini(all);
}

/* ---- TransactGetItems ---- */

/* Reads every item once, by node: false (with *out) if a node failed. */
static bool
read_round(api_ctx *c, action *xs, size_t n, reply *out)
{
	uint32_t nodes[TXN_MAX_ACTIONS];
	size_t np = participants(xs, n, nodes);
	for (size_t i = 0; i < n; i++)
		xs[i].answered = false;
	for (size_t k = 0; k < np; k++) {
		kv_err rv = send_group(c, xs, n, nodes[k], RPC_MULTI, 0, 0, 0,
		    NULL);
		if (rv != KV_OK) {
			errors_from_kv(out, rv);
			return false;
		}
	}
	return true;
}

static bool
same_answer(const rpc_response *x, const rpc_response *y)
{
	return x->found == y->found && x->item_len == y->item_len &&
	    (x->item_len == 0 || memcmp(x->item, y->item, x->item_len) == 0);
}

void
ops_txn_get(api_ctx *c, json_t *body, reply *out)
{
	json_t *items;
	const char *mode;
	bool refreshed = false;

	if (!req_capacity(body, &mode, out) || !read_items(body, &items, out))
		return;
	size_t n = json_array_size(items);
	action *xs = arena_alloc(c->a, n * sizeof(*xs));
	rpc_response *first = arena_alloc(c->a, n * sizeof(*first));
	uint64_t *half = arena_alloc(c->a, n * sizeof(*half));
	if (xs == NULL || first == NULL || half == NULL)
		return errors_from_kv(out, KV_ENOMEM);
	for (size_t i = 0; i < n; i++) {
		json_t *el = json_array_get(items, i);
		json_t *get = json_is_object(el) ? json_object_get(el, "Get") :
		    NULL;
		if (!json_is_object(get) || json_object_size(el) != 1) {
			errors_reply(out, ERR_VALIDATION, "TransactItems can "
			    "only contain one of Get");
			return;
		}
		memset(&xs[i], 0, sizeof(xs[i]));
		if (!ops_item_prepare(c, ITEM_GET, get, &xs[i].ir, out))
			return;
		xs[i].ir.op.req.consistent = true;
		xs[i].ir.op.req.txn = 1; /* a transaction's read: locked? */
	}
	if (!route_all(c, xs, n, &refreshed, out))
		return;
	bool agree = false;
	for (int round = 0; round < GET_ROUNDS && !agree; round++) {
		if (!read_round(c, xs, n, out))
			return;
		bool stale = false, locked = false;
		for (size_t i = 0; i < n; i++) {
			stale |= xs[i].got.code == KV_STALE_ROUTE;
			locked |= xs[i].got.locked;
			first[i] = xs[i].got;
		}
		if (stale) {
			route_stale(c->r, round);
			refreshed = true;
			if (!route_all(c, xs, n, &refreshed, out))
				return;
			continue;
		}
		bool failed = false;
		for (size_t i = 0; i < n; i++) {
			if (xs[i].got.code != KV_OK)
				failed = true;
			else if (xs[i].got.locked)
				xs[i].got.code = KV_TXN_CONFLICT;
		}
		if (failed || locked)
			return reply_canceled(c, xs, n, out);
		if (!read_round(c, xs, n, out))
			return;
		agree = true;
		for (size_t i = 0; i < n; i++) {
			if (xs[i].got.code != KV_OK || xs[i].got.locked ||
			    !same_answer(&first[i], &xs[i].got)) {
				agree = false;
				xs[i].got.code = xs[i].got.code != KV_OK ?
				    xs[i].got.code : KV_TXN_CONFLICT;
			}
		}
		if (!agree && round == GET_ROUNDS - 1)
			return reply_canceled(c, xs, n, out);
	}
	if (!agree) {
		errors_reply(out, ERR_UNAVAILABLE,
		    "The partition map kept changing; try again");
		return;
	}
	json_t *list = json_array();
	for (size_t i = 0; i < n; i++) {
		json_t *r = json_object();
		const rpc_response *g = &xs[i].got;
		value item, shown;
		if (g->found && g->item != NULL && codec_decode(c->a, g->item,
		    g->item_len, &item) == KV_OK) {
			shown = item;
			if (xs[i].ir.x.proj == NULL || expr_project(c->a, &item,
			    xs[i].ir.x.proj, &shown) == KV_OK)
				json_object_set_new(r, "Item",
				    json_from_item(&shown));
		}
		json_array_append_new(list, r);
		/* A transactional read: twice a strongly consistent one. */
		half[i] = 2 * capacity_read_half_units(g->old_size, true);
	}
	json_t *j = json_pack("{s:o}", "Responses", list);
	consumed(j, mode, xs, half, n);
	api_reply_json(out, j);
}
