/*
 * api.c — request dispatch by X-Amz-Target (see api.h). Parses the body
 * once with jansson (duplicate keys refused, as a hostile-input rule; NUL
 * allowed inside strings, as DynamoDB allows it in attribute values) and
 * hands the object to the operation. Request members that are names or
 * enumerations are read with req_string, which refuses an embedded NUL.
 */
#include "api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"

#define TARGET_PREFIX "DynamoDB_20120810."

static const struct {
	const char *name;
	api_op_fn fn;
} ops[API_N_OPS] = {
	{ "CreateTable", ops_table_create },
	{ "DescribeTable", ops_table_describe },
	{ "ListTables", ops_table_list },
	{ "DeleteTable", ops_table_delete },
	{ "UpdateTable", ops_table_update },
	{ "PutItem", ops_item_put },
	{ "GetItem", ops_item_get },
	{ "DeleteItem", ops_item_delete },
	{ "UpdateItem", ops_item_update },
	{ "Query", ops_read_query },
	{ "Scan", ops_read_scan },
	{ "BatchGetItem", ops_batch_get },
	{ "BatchWriteItem", ops_batch_write },
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

void
api_handle(router *r, const char *target, const char *auth,
    const char *body, size_t len, reply *out)
{
	api_op_fn fn = NULL;
	size_t op = 0;
	json_error_t jerr;
	arena a;

	if (target != NULL && strncmp(target, TARGET_PREFIX,
	    strlen(TARGET_PREFIX)) == 0) {
		const char *name = target + strlen(TARGET_PREFIX);
		for (size_t i = 0; i < API_N_OPS; i++)
			if (strcmp(ops[i].name, name) == 0) {
				fn = ops[i].fn;
				op = i;
			}
	}
	if (fn == NULL) {
		errors_reply(out, ERR_UNKNOWN_OPERATION,
		    "An unknown operation was requested.");
		return;
	}
	json_t *j = json_loadb(body, len,
	    JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &jerr);
	if (j == NULL || !json_is_object(j)) {
		errors_reply(out, ERR_SERIALIZATION, "%s",
		    j == NULL ? jerr.text :
		    "Start of structure or map found where not expected");
		json_decref(j);
		count(r, op, out);
		return;
	}
	arena_init(&a);
	api_ctx c = { .r = r, .a = &a, .region = region_of(&a, auth) };
	if (c.region == NULL)
		c.region = "us-east-1";
	fn(&c, j, out);
	count(r, op, out);
	json_decref(j);
	arena_fini(&a);
}
