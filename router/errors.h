/*
 * errors.h — DynamoDB's error answers: the one table from our error codes
 * and DynamoDB's exception names to HTTP status, __type and message.
 */
#ifndef KV_ERRORS_H
#define KV_ERRORS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "router.h"

typedef enum api_error {
	ERR_VALIDATION = 1,      /* ValidationException */
	ERR_SERIALIZATION,       /* SerializationException */
	ERR_UNKNOWN_OPERATION,   /* UnknownOperationException */
	ERR_RESOURCE_NOT_FOUND,  /* ResourceNotFoundException */
	ERR_RESOURCE_IN_USE,     /* ResourceInUseException */
	ERR_CONDITIONAL_CHECK,   /* ConditionalCheckFailedException */
	ERR_INTERNAL,            /* InternalServerError (500) */
	ERR_UNAVAILABLE,         /* ServiceUnavailable (503) */
	ERR_MISSING_ACTION,      /* MissingAction */
	ERR_TOO_LARGE,           /* request over 16 MB (413) */
	ERR_LIMIT_EXCEEDED,      /* LimitExceededException */
	ERR_PROVISIONED_EXCEEDED, /* ProvisionedThroughputExceededException */
	ERR_THROTTLING,          /* ThrottlingException */
	ERR_COLLECTION_SIZE,     /* ItemCollectionSizeLimitExceededException */
	ERR_TXN_CONFLICT,        /* TransactionConflictException */
	ERR_TXN_CANCELED,        /* TransactionCanceledException */
	ERR_TXN_IN_PROGRESS,     /* TransactionInProgressException */
	ERR_IDEMPOTENT_MISMATCH, /* IdempotentParameterMismatchException */
	ERR_MISSING_AUTH,        /* MissingAuthenticationTokenException */
	ERR_INCOMPLETE_SIGNATURE, /* IncompleteSignatureException */
	ERR_UNRECOGNIZED_CLIENT, /* UnrecognizedClientException */
	ERR_INVALID_SIGNATURE,   /* InvalidSignatureException */
	ERR_TABLE_NOT_FOUND,     /* TableNotFoundException (backups) */
	ERR_TABLE_IN_USE,        /* TableInUseException */
	ERR_TABLE_EXISTS,        /* TableAlreadyExistsException */
	ERR_BACKUP_NOT_FOUND,    /* BackupNotFoundException */
	ERR_BACKUP_IN_USE,       /* BackupInUseException */
} api_error;

/*
 * errors_reply fills *r with DynamoDB's error body for e and the printf
 * message. Never fails: without memory it sends a fixed 500 body.
 */
void errors_reply(reply *r, api_error e, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * errors_reply_with is errors_reply with more members in the body (the
 * members of the object `extra`, taken; NULL for none), as DynamoDB adds
 * "Item" to a ConditionalCheckFailedException.
 */
void errors_reply_with(reply *r, api_error e, json_t *extra,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/*
 * errors_from_kv fills *r for a failed internal call: KV_UNAVAILABLE and
 * KV_TIMEDOUT become ServiceUnavailable / InternalServerError, others
 * InternalServerError. For codes that have a DynamoDB meaning, callers
 * answer themselves before reaching this.
 */
void errors_from_kv(reply *r, kv_err e);

/*
 * errors_throttled fills *r with DynamoDB's answer to a request a node
 * throttled: `throttle` is the node's RPC_THROTTLE_* bits, table_name the
 * table (for the ThrottlingReasons resource ARN), region the router's.
 * Provisioned tables get ProvisionedThroughputExceededException, on-demand
 * ones ThrottlingException, both HTTP 400 with DynamoDB's message and a
 * ThrottlingReasons list, so SDK retry policies back off and retry. With
 * RPC_THROTTLE_INDEX, a global index (named index) could not take the
 * write: DynamoDB's messages for an index, and Index... reasons on the
 * index's ARN.
 */
void errors_throttled(reply *r, uint32_t throttle, const char *table_name,
    const char *index, const char *region);

/*
 * errors_throttle_message: DynamoDB's message for a throttle of these
 * RPC_THROTTLE_* bits (a table's or a global index's, provisioned or
 * on demand). hot_key_hint: the on-demand table's message ends with the
 * hint on hot keys, as a throttled request's does (a cancelled
 * transaction's reason has none).
 */
const char *errors_throttle_message(uint32_t throttle, bool hot_key_hint);

/*
 * errors_table_arn writes the ARN DynamoDB gives table `name` in region
 * into buf[0..len).
 */
void errors_table_arn(char *buf, size_t len, const char *region,
    const char *name);

#endif
