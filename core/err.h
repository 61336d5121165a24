/*
 * err.h — the one error enum of the project.
 *
 * Every function that can fail returns a kv_err; KV_OK is zero. Distinct
 * outcomes get distinct codes because each leads to a different retry and
 * HTTP decision (see router/errors.c for the mapping to DynamoDB's __type).
 * A missing item is not an error: it is KV_OK with found = false.
 */
#ifndef KV_ERR_H
#define KV_ERR_H

typedef enum kv_err {
	KV_OK = 0,
	KV_EINVAL,        /* client input is invalid (ValidationException) */
	KV_ENOMEM,        /* allocation failed */
	KV_NO_TABLE,      /* table does not exist (ResourceNotFoundException) */
	KV_TABLE_EXISTS,  /* table already exists (ResourceInUseException) */
	KV_IN_USE,        /* table is being created or deleted */
	KV_STALE_ROUTE,   /* node does not own the partition at that epoch */
	KV_COND_FAILED,   /* a condition was false */
	KV_TXN_CONFLICT,  /* item is locked by a transaction */
	KV_THROTTLED,     /* a token bucket is empty */
	KV_BUSY,          /* try again soon */
	KV_TIMEDOUT,      /* no answer in time */
	KV_UNAVAILABLE,   /* the owner of a partition cannot be reached */
	KV_IO,            /* the store failed to read or write */
	KV_CORRUPT,       /* stored or received bytes do not decode */
	KV_PROTO,         /* a peer sent a message we cannot understand */
	KV_COLL_FULL,     /* an item collection would pass its size limit */
	KV_ERR_COUNT
} kv_err;

/* kv_err_name returns a static, human-readable name of e ("KV_EINVAL"). */
const char *kv_err_name(kv_err e);

#endif
