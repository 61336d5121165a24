/*
 * err.c — names of the error codes, for logs and test failure messages.
 */
#include "err.h"

static const char *const names[KV_ERR_COUNT] = {
	[KV_OK] = "KV_OK",
	[KV_EINVAL] = "KV_EINVAL",
	[KV_ENOMEM] = "KV_ENOMEM",
	[KV_NO_TABLE] = "KV_NO_TABLE",
	[KV_TABLE_EXISTS] = "KV_TABLE_EXISTS",
	[KV_IN_USE] = "KV_IN_USE",
	[KV_STALE_ROUTE] = "KV_STALE_ROUTE",
	[KV_COND_FAILED] = "KV_COND_FAILED",
	[KV_TXN_CONFLICT] = "KV_TXN_CONFLICT",
	[KV_THROTTLED] = "KV_THROTTLED",
	[KV_BUSY] = "KV_BUSY",
	[KV_TIMEDOUT] = "KV_TIMEDOUT",
	[KV_UNAVAILABLE] = "KV_UNAVAILABLE",
	[KV_IO] = "KV_IO",
	[KV_CORRUPT] = "KV_CORRUPT",
	[KV_PROTO] = "KV_PROTO",
	[KV_COLL_FULL] = "KV_COLL_FULL",
};

const char *
kv_err_name(kv_err e)
{
	if ((unsigned) e >= KV_ERR_COUNT)
		return "KV_UNKNOWN";
	return names[e];
}
