/*
 * ops_account.c — the operations about the service rather than a table:
 * DescribeEndpoints and DescribeLimits. Neither takes a parameter.
 *
 * DescribeEndpoints answers the address clients should use, for SDKs
 * that discover endpoints: DynamoDB answers its regional name with a
 * cache period of 1440 minutes; here the address is this router's own
 * (its cluster-file line), since the regional name would send such a
 * client away from the cluster.
 *
 * DescribeLimits answers DynamoDB's default quotas for provisioned
 * throughput: 40,000 read and write capacity units per table (its
 * indexes included) and 80,000 per account in a region. The cluster
 * enforces none of them: they are what an application written against
 * DynamoDB's defaults expects to read back.
 */
#include "api.h"
#include "router.h"

#define ENDPOINT_CACHE_MINUTES 1440
#define TABLE_MAX_UNITS 40000
#define ACCOUNT_MAX_UNITS 80000

void
ops_account_endpoints(api_ctx *c, json_t *body, reply *out)
{
	(void) body;
	json_t *e = json_object();
	json_object_set_new(e, "Address", json_string(c->r->listen));
	json_object_set_new(e, "CachePeriodInMinutes",
	    json_integer(ENDPOINT_CACHE_MINUTES));
	json_t *list = json_array();
	json_array_append_new(list, e);
	json_t *j = json_object();
	json_object_set_new(j, "Endpoints", list);
	api_reply_json(out, j);
}

void
ops_account_limits(api_ctx *c, json_t *body, reply *out)
{
	(void) c;
	(void) body;
	json_t *j = json_object();
	json_object_set_new(j, "AccountMaxReadCapacityUnits",
	    json_integer(ACCOUNT_MAX_UNITS));
	json_object_set_new(j, "AccountMaxWriteCapacityUnits",
	    json_integer(ACCOUNT_MAX_UNITS));
	json_object_set_new(j, "TableMaxReadCapacityUnits",
	    json_integer(TABLE_MAX_UNITS));
	json_object_set_new(j, "TableMaxWriteCapacityUnits",
	    json_integer(TABLE_MAX_UNITS));
	api_reply_json(out, j);
}
