/*
 * api.c — request dispatch by X-Amz-Target (see api.h). Parses the body
 * once with jansson (duplicate keys refused, as a hostile-input rule; NUL
 * allowed inside strings, as DynamoDB allows it in attribute values) and
 * hands the object to the operation; on the event loop's path the tree
 * is built in the request's arena (json_read_in). Request members that
 * are names or enumerations are read with req_string, which refuses an
 * embedded NUL.
 */
#include "api_async.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "json_read.h"

#define TARGET_PREFIX "DynamoDB_20120810."

/*
 * item: the operations the event loop runs itself: the single-item ones
 * and Query (one node call each), the transactions (a call at a time).
 */
#define QUERY 100
#define TXN_WRITE 101
#define TXN_GET 102
/* A transaction's body the loop parses itself (up to 4 MB: a worker). */
#define TXN_LOOP_BODY (64 * 1024)
static const struct {
	const char *name;
	api_op_fn fn;
	int item; /* item_kind, QUERY, or -1 */
} ops[API_N_OPS] = {
	{ "CreateTable", ops_table_create, -1 },
	{ "DescribeTable", ops_table_describe, -1 },
	{ "ListTables", ops_table_list, -1 },
	{ "DeleteTable", ops_table_delete, -1 },
	{ "UpdateTable", ops_table_update, -1 },
	{ "PutItem", ops_item_put, ITEM_PUT },
	{ "GetItem", ops_item_get, ITEM_GET },
	{ "DeleteItem", ops_item_delete, ITEM_DELETE },
	{ "UpdateItem", ops_item_update, ITEM_UPDATE },
	{ "Query", ops_read_query, QUERY },
	{ "Scan", ops_read_scan, -1 },
	{ "BatchGetItem", ops_batch_get, -1 },
	{ "BatchWriteItem", ops_batch_write, -1 },
	{ "TransactWriteItems", ops_txn_write, TXN_WRITE },
	{ "TransactGetItems", ops_txn_get, TXN_GET },
	{ "DescribeEndpoints", ops_account_endpoints, -1 },
	{ "DescribeLimits", ops_account_limits, -1 },
	{ "UpdateTimeToLive", ops_table_ttl_update, -1 },
	{ "DescribeTimeToLive", ops_table_ttl_describe, -1 },
	{ "TagResource", ops_tags_tag, -1 },
	{ "UntagResource", ops_tags_untag, -1 },
	{ "ListTagsOfResource", ops_tags_list, -1 },
	{ "CreateBackup", ops_backup_create, -1 },
	{ "DescribeBackup", ops_backup_describe, -1 },
	{ "ListBackups", ops_backup_list, -1 },
	{ "DeleteBackup", ops_backup_delete, -1 },
	{ "RestoreTableFromBackup", ops_backup_restore, -1 },
	{ "DescribeContinuousBackups", ops_backup_continuous, -1 },
	{ "UpdateContinuousBackups", ops_backup_continuous_update, -1 },
};

void
api_reply_json(reply *out, json_t *j)
{
	char *body = j != NULL ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
	if (body == NULL) {
		errors_reply(out, ERR_INTERNAL, "out of memory");
		return;
	}
	free(out->body);
	out->status = 200;
	out->body = body;
	out->len = strlen(body);
}

void
api_reply_text(reply *out, jtext *t)
{
	if (t->failed || t->p == NULL) {
		jtext_fini(t);
		errors_reply(out, ERR_INTERNAL, "out of memory");
		return;
	}
	free(out->body);
	out->status = 200;
	out->body = t->p;
	out->len = t->len;
	jtext_init(t);
}

/*
 * The region is the third field of the credential scope:
 * "AWS4-HMAC-SHA256 Credential=AKID/20261130/us-east-1/dynamodb/...".
 */
static const char *
region_of(arena *a, const char *auth)
{
	const char *p = auth != NULL ? strstr(auth, "Credential=") : NULL;
	if (p == NULL)
		return "us-east-1";
	p += strlen("Credential=");
	for (int slash = 0; slash < 2; slash++) {
		p = strchr(p, '/');
		if (p == NULL)
			return "us-east-1";
		p++;
	}
	size_t n = strcspn(p, "/, ");
	if (n == 0 || n > 64)
		return "us-east-1";
	return arena_dup(a, p, n);
}

/* Counts one answer of operation i by its outcome (api_counters). */
static void
count(router *r, size_t i, const reply *out)
{
	api_counters *k = &r->counters[i];
	atomic_fetch_add_explicit(&k->requests, 1, memory_order_relaxed);
	if (out->status == 200)
		return;
	bool throttled = out->body != NULL &&
	    (strstr(out->body, "#ThrottlingException") != NULL ||
	    strstr(out->body, "#ProvisionedThroughputExceeded") != NULL);
	atomic_fetch_add_explicit(throttled ? &k->throttled :
	    out->status >= 500 ? &k->server_errors : &k->client_errors, 1,
	    memory_order_relaxed);
}

const char *
api_op_name(size_t i)
{
	return i < API_N_OPS ? ops[i].name : NULL;
}

/* Finds the operation X-Amz-Target names; false when there is none. */
static bool
find_op(const char *target, size_t *op)
{
	if (target == NULL || strncmp(target, TARGET_PREFIX,
	    strlen(TARGET_PREFIX)) != 0)
		return false;
	const char *name = target + strlen(TARGET_PREFIX);
	for (size_t i = 0; i < API_N_OPS; i++)
		if (strcmp(ops[i].name, name) == 0) {
			*op = i;
			return true;
		}
	return false;
}

/*
 * Finds the operation of target and parses body into *j, in arena a when
 * it is not NULL (json_read_in; *in_arena says whether the tree is
 * there, else it is jansson's own); false after filling *out (counted
 * when the operation is known).
 */
static bool
parse(router *r, const char *target, const char *body, size_t len,
    arena *a, size_t *op, json_t **j, bool *in_arena, reply *out)
{
	json_error_t jerr;

	*j = NULL;
	*in_arena = false;
	if (!find_op(target, op)) {
		errors_reply(out, ERR_UNKNOWN_OPERATION,
		    "An unknown operation was requested.");
		return false;
	}
	/* jansson has the last word on what json_read leaves (json_read.h). */
	*j = a != NULL ? json_read_in(a, body, len) : json_read(body, len);
	*in_arena = a != NULL && *j != NULL;
	if (*j == NULL)
		*j = json_loadb(body, len,
		    JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &jerr);
	if (*j == NULL || !json_is_object(*j)) {
		errors_reply(out, ERR_SERIALIZATION, "%s",
		    *j == NULL ? jerr.text :
		    "Start of structure or map found where not expected");
		if (!*in_arena)
			json_decref(*j);
		*j = NULL;
		*in_arena = false;
		count(r, *op, out);
		return false;
	}
	return true;
}

/* a is initialised already. */
static void
ctx_init(api_ctx *c, router *r, arena *a, const char *auth)
{
	c->r = r;
	c->a = a;
	c->region = region_of(a, auth);
	if (c->region == NULL)
		c->region = "us-east-1";
}

void
api_handle(router *r, const char *target, const char *auth,
    const char *body, size_t len, reply *out)
{
	size_t op;
	json_t *j;
	bool in_arena;
	arena a;
	api_ctx c;

	if (!parse(r, target, body, len, NULL, &op, &j, &in_arena, out))
		return;
	arena_init(&a);
	ctx_init(&c, r, &a, auth);
	ops[op].fn(&c, j, out);
	count(r, op, out);
	json_decref(j);
	arena_fini(&a);
}

static void
async_fini(api_async *s)
{
	if (!s->body_in_arena)
		json_decref(s->body);
	s->body = NULL;
	arena_fini(&s->a);
}

api_path
api_start(router *r, const char *target, const char *auth, const char *body,
    size_t len, api_async *s, reply *out)
{
	memset(s, 0, sizeof(*s));
	/* The others' bodies (a batch may be 16 MB) are parsed by a worker. */
	if (find_op(target, &s->op) && (ops[s->op].item < 0 ||
	    (ops[s->op].item >= TXN_WRITE && len > TXN_LOOP_BODY)))
		return API_WORKER;
	arena_init(&s->a);
	if (!parse(r, target, body, len, &s->a, &s->op, &s->body,
	    &s->body_in_arena, out)) {
		arena_fini(&s->a);
		return API_DONE;
	}
	ctx_init(&s->c, r, &s->a, auth);
	s->query = ops[s->op].item == QUERY;
	if (ops[s->op].item == TXN_WRITE) {
		int a = ops_txn_start(&s->c, s->body, &s->txn, &s->req,
		    &s->owner, out);
		if (a == 1)
			return API_NODE;
		if (a < 0)
			out->status = 0; /* the worker answers */
	} else if (ops[s->op].item == TXN_GET) {
		int a = ops_txn_get_start(&s->c, s->body, &s->tget, &s->req,
		    &s->owner, out);
		if (a == 1)
			return API_NODE;
		if (a < 0)
			out->status = 0;
	} else if (s->query) {
		query_req *q = &s->u.q;
		if (ops_query_read(&s->c, s->body, q, out) &&
		    ops_query_route(&s->c, s->body, q, NULL, out)) {
			s->req = &q->req;
			s->owner = q->owner;
			return API_NODE;
		}
	} else if (ops_item_prepare(&s->c, (item_kind) ops[s->op].item,
	    s->body, &s->u.ir, out) && ops_item_route(&s->c, &s->u.ir.op,
	    NULL, &s->owner, out)) {
		s->req = &s->u.ir.op.req;
		return API_NODE;
	}
	async_fini(s);
	if (out->status == 0)
		return API_WORKER; /* not in this router's catalog yet */
	count(r, s->op, out);
	return API_DONE;
}

api_path
api_finish(api_async *s, kv_err rv, rpc_response *resp, reply *out)
{
	int a = 0;
	if (s->txn != NULL) {
		a = ops_txn_next(&s->c, s->txn, rv, resp, &s->req, &s->owner,
		    out);
		if (a == 1)
			return API_NODE;
	} else if (s->tget != NULL) {
		a = ops_txn_get_next(&s->c, s->tget, rv, resp, &s->req,
		    &s->owner, out);
		if (a == 1)
			return API_NODE;
	} else if (s->query)
		a = ops_query_answer(&s->c, &s->u.q, rv, resp, out);
	else if (rv != KV_OK)
		errors_from_kv(out, rv);
	else if ((a = ops_item_answer(&s->c, &s->u.ir.op, resp, out)) == 1)
		ops_item_finish(&s->c, &s->u.ir, resp, out);
	async_fini(s);
	if (a < 0)
		return API_WORKER; /* a stale route: the worker refreshes */
	count(s->c.r, s->op, out);
	return API_DONE;
}

bool
api_restartable(const api_async *s)
{
	return s->txn == NULL || ops_txn_restartable(s->txn);
}

void
api_abort(api_async *s)
{
	if (s->txn != NULL)
		ops_txn_abort(s->txn);
	if (s->tget != NULL)
		ops_txn_get_abort(s->tget);
	async_fini(s);
}
