/*
 * errors.c — the table of DynamoDB error answers (see errors.h). The
 * __type prefixes are DynamoDB's: validation and serialization errors come
 * from the coral framework, the rest from the DynamoDB service namespace.
 */
#include "errors.h"

#include <stdbool.h>
#include "wire.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
	int status;
	const char *type;
} kinds[] = {
	[ERR_VALIDATION] = { 400,
	    "com.amazon.coral.validate#ValidationException" },
	[ERR_SERIALIZATION] = { 400,
	    "com.amazon.coral.service#SerializationException" },
	[ERR_UNKNOWN_OPERATION] = { 400,
	    "com.amazon.coral.service#UnknownOperationException" },
	[ERR_RESOURCE_NOT_FOUND] = { 400,
	    "com.amazonaws.dynamodb.v20120810#ResourceNotFoundException" },
	[ERR_RESOURCE_IN_USE] = { 400,
	    "com.amazonaws.dynamodb.v20120810#ResourceInUseException" },
	[ERR_CONDITIONAL_CHECK] = { 400,
	    "com.amazonaws.dynamodb.v20120810#"
	    "ConditionalCheckFailedException" },
	[ERR_INTERNAL] = { 500,
	    "com.amazonaws.dynamodb.v20120810#InternalServerError" },
	[ERR_UNAVAILABLE] = { 503,
	    "com.amazonaws.dynamodb.v20120810#ServiceUnavailable" },
	[ERR_MISSING_ACTION] = { 400,
	    "com.amazon.coral.service#MissingAction" },
	[ERR_TOO_LARGE] = { 413,
	    "com.amazon.coral.service#RequestEntityTooLarge" },
	[ERR_LIMIT_EXCEEDED] = { 400,
	    "com.amazonaws.dynamodb.v20120810#LimitExceededException" },
	[ERR_PROVISIONED_EXCEEDED] = { 400,
	    "com.amazonaws.dynamodb.v20120810#"
	    "ProvisionedThroughputExceededException" },
	[ERR_THROTTLING] = { 400,
	    "com.amazonaws.dynamodb.v20120810#ThrottlingException" },
	[ERR_COLLECTION_SIZE] = { 400,
	    "com.amazonaws.dynamodb.v20120810#"
	    "ItemCollectionSizeLimitExceededException" },
	[ERR_TXN_CONFLICT] = { 400,
	    "com.amazonaws.dynamodb.v20120810#TransactionConflictException" },
	[ERR_TXN_CANCELED] = { 400,
	    "com.amazonaws.dynamodb.v20120810#TransactionCanceledException" },
	[ERR_TXN_IN_PROGRESS] = { 400,
	    "com.amazonaws.dynamodb.v20120810#"
	    "TransactionInProgressException" },
	[ERR_IDEMPOTENT_MISMATCH] = { 400,
	    "com.amazonaws.dynamodb.v20120810#"
	    "IdempotentParameterMismatchException" },
	[ERR_MISSING_AUTH] = { 400,
	    "com.amazon.coral.service#MissingAuthenticationTokenException" },
	[ERR_INCOMPLETE_SIGNATURE] = { 400,
	    "com.amazon.coral.service#IncompleteSignatureException" },
	[ERR_UNRECOGNIZED_CLIENT] = { 400,
	    "com.amazon.coral.service#UnrecognizedClientException" },
	[ERR_INVALID_SIGNATURE] = { 400,
	    "com.amazon.coral.service#InvalidSignatureException" },
	[ERR_TABLE_NOT_FOUND] = { 400,
	    "com.amazonaws.dynamodb.v20120810#TableNotFoundException" },
	[ERR_TABLE_IN_USE] = { 400,
	    "com.amazonaws.dynamodb.v20120810#TableInUseException" },
	[ERR_TABLE_EXISTS] = { 400,
	    "com.amazonaws.dynamodb.v20120810#TableAlreadyExistsException" },
	[ERR_BACKUP_NOT_FOUND] = { 400,
	    "com.amazonaws.dynamodb.v20120810#BackupNotFoundException" },
	[ERR_BACKUP_IN_USE] = { 400,
	    "com.amazonaws.dynamodb.v20120810#BackupInUseException" },
};

static const char fallback[] =
    "{\"__type\":\"com.amazonaws.dynamodb.v20120810#InternalServerError\","
    "\"message\":\"out of memory\"}";

/*
 * Cuts a UTF-8 sequence that truncation left incomplete at the end of s:
 * a message quoting a long value (a name in a "Value '...' at" clause)
 * must still go into the JSON body, which jansson refuses to build from
 * invalid UTF-8.
 */
static void
trim_utf8(char *s)
{
	size_t n = strlen(s), i = n, cont = 0;
	while (i > 0 && ((unsigned char) s[i - 1] & 0xC0) == 0x80 && cont < 3) {
		i--;
		cont++;
	}
	if (i == 0)
		return;
	unsigned char lead = (unsigned char) s[i - 1];
	size_t want = lead >= 0xF0 ? 3 : lead >= 0xE0 ? 2 : lead >= 0xC0 ? 1 :
	    0;
	if (lead >= 0xC0 && cont < want)
		s[i - 1] = '\0';
}

static void
reply_v(reply *r, api_error e, json_t *extra, const char *fmt, va_list ap)
{
	char msg[2048];
	if (vsnprintf(msg, sizeof(msg), fmt, ap) >= (int) sizeof(msg))
		trim_utf8(msg);

	json_t *j = json_pack("{s:s,s:s}", "__type", kinds[e].type,
	    "message", msg);
	if (j != NULL && extra != NULL)
		json_object_update(j, extra);
	json_decref(extra);
	char *body = j != NULL ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
	free(r->body);
	r->status = kinds[e].status;
	if (body == NULL) {
		r->status = 500;
		body = strdup(fallback);
	}
	r->body = body;
	r->len = body != NULL ? strlen(body) : 0;
}

void
errors_reply(reply *r, api_error e, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	reply_v(r, e, NULL, fmt, ap);
	va_end(ap);
}

void
errors_reply_with(reply *r, api_error e, json_t *extra, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	reply_v(r, e, extra, fmt, ap);
	va_end(ap);
}

void
errors_from_kv(reply *r, kv_err e)
{
	switch (e) {
	case KV_UNAVAILABLE:
		errors_reply(r, ERR_UNAVAILABLE,
		    "The partition's storage node is unavailable");
		break;
	case KV_TXN_CONFLICT:
		/* The wording DynamoDB gives the same reason inside a
		 * transaction's CancellationReasons. */
		errors_reply(r, ERR_TXN_CONFLICT,
		    "Transaction is ongoing for the item.");
		break;
	case KV_COLL_FULL:
		/* DynamoDB's wording in a transaction's CancellationReasons;
		 * the plain exception's own message was not found. */
		errors_reply(r, ERR_COLLECTION_SIZE, "Collection size exceeded.");
		break;
	case KV_TIMEDOUT:
		errors_reply(r, ERR_INTERNAL,
		    "The storage node did not answer in time; the request "
		    "may or may not have been applied");
		break;
	default:
		errors_reply(r, ERR_INTERNAL, "Internal server error (%s)",
		    kv_err_name(e));
		break;
	}
}

void
errors_table_arn(char *buf, size_t len, const char *region,
    const char *name)
{
	snprintf(buf, len, "arn:aws:dynamodb:%s:000000000000:table/%s",
	    region, name);
}

/*
 * DynamoDB's texts (API reference, ProvisionedThroughputExceededException
 * and ThrottlingException) and ThrottlingReason codes: <Table><Read|Write>
 * <KeyRangeThroughputExceeded|ProvisionedThroughputExceeded>. A hot
 * partition at its ceiling is a key-range throttle; a table's provisioned
 * share running out is a provisioned-throughput one.
 */
void
errors_throttled(reply *r, uint32_t throttle, const char *table_name,
    const char *index, const char *region)
{
	char arn[768], reason[96];
	bool write = (throttle & RPC_THROTTLE_WRITE) != 0;
	bool prov = (throttle & RPC_THROTTLE_TABLE_PROVISIONED) != 0;
	bool on_index = (throttle & RPC_THROTTLE_INDEX) != 0;

	errors_table_arn(arn, sizeof(arn), region, table_name);
	if (on_index) {
		size_t l = strlen(arn);
		snprintf(arn + l, sizeof(arn) - l, "/index/%s",
		    index != NULL ? index : "");
	}
	snprintf(reason, sizeof(reason), "%s%s%s", on_index ? "Index" :
	    "Table", write ? "Write" : "Read",
	    (throttle & RPC_THROTTLE_PROVISIONED) != 0 ?
	    "ProvisionedThroughputExceeded" : "KeyRangeThroughputExceeded");
	json_t *extra = json_pack("{s:[{s:s,s:s}]}", "ThrottlingReasons",
	    "reason", reason, "resource", arn);
	errors_reply_with(r, prov ? ERR_PROVISIONED_EXCEEDED : ERR_THROTTLING,
	    extra, "%s", errors_throttle_message(throttle, true));
}

const char *
errors_throttle_message(uint32_t throttle, bool hot_key_hint)
{
	bool prov = (throttle & RPC_THROTTLE_TABLE_PROVISIONED) != 0;
	if ((throttle & RPC_THROTTLE_INDEX) != 0)
		return prov ? "The level of configured provisioned throughput "
		    "for one or more global secondary indexes of the table was "
		    "exceeded. Consider increasing your provisioning level for "
		    "the under-provisioned global secondary indexes with the "
		    "UpdateTable API." : "Throughput exceeds the current "
		    "capacity for one or more global secondary indexes. "
		    "DynamoDB is automatically scaling your index so please "
		    "try again shortly.";
	if (prov)
		return "The level of configured provisioned throughput for the "
		    "table was exceeded. Consider increasing your provisioning "
		    "level with the UpdateTable API.";
	return hot_key_hint ? "Throughput exceeds the current capacity of "
	    "your table or index. DynamoDB is automatically scaling your "
	    "table or index so please try again shortly. If exceptions "
	    "persist, check if you have a hot key: https://docs.aws.amazon."
	    "com/amazondynamodb/latest/developerguide/"
	    "bp-partition-key-design.html" : "Throughput exceeds the current "
	    "capacity of your table or index. DynamoDB is automatically "
	    "scaling your table or index so please try again shortly.";
}
