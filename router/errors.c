/*
 * errors.c — the table of DynamoDB error answers (see errors.h). The
 * __type prefixes are DynamoDB's: validation and serialization errors come
 * from the coral framework, the rest from the DynamoDB service namespace.
 */
#include "errors.h"

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
};

static const char fallback[] =
    "{\"__type\":\"com.amazonaws.dynamodb.v20120810#InternalServerError\","
    "\"message\":\"out of memory\"}";

static void
reply_v(reply *r, api_error e, json_t *extra, const char *fmt, va_list ap)
{
	char msg[2048];
	vsnprintf(msg, sizeof(msg), fmt, ap);

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
