/*
 * index_spec.h — the secondary indexes of a CreateTable request, and how a
 * TableDescription shows them.
 *
 * CreateTable reads GlobalSecondaryIndexes and LocalSecondaryIndexes in
 * two steps that slot into ops_table.c's own: index_spec_read adds the
 * shape violations ("Value ... at 'globalSecondaryIndexes.1.member...'")
 * to the request's list, and index_spec_check, once the table's own key
 * schema has passed, runs DynamoDB's service checks and yields the
 * index_defs to send to the catalog node. Which table holds a GSI's
 * entries, and its status, is the catalog node's business
 * (node/catalog_node.c); index_spec_describe only turns what the catalog
 * says into DynamoDB's JSON. Query and Scan on an index live in
 * ops_read.c.
 */
#ifndef KV_INDEX_SPEC_H
#define KV_INDEX_SPEC_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "api.h"
#include "catalog.h"
#include "request.h"

#define INDEX_SPEC_MAX_GSI 20      /* per table, as DynamoDB's default */
#define INDEX_SPEC_MAX_LSI 5
#define INDEX_SPEC_MAX_PROJECTED 100 /* NonKeyAttributes, all indexes */

struct index_req;

/*
 * The secondary indexes of one CreateTable request, as read. The lists
 * and strings are borrowed from the request's JSON; reqs lives in the
 * request's arena.
 */
typedef struct index_spec {
	json_t *local, *global;  /* the request's lists; NULL when absent */
	struct index_req *reqs;  /* LSIs first, then GSIs */
	size_t n_local, n_global;
} index_spec;

/* What the index checks need to know of the table being created. */
typedef struct index_spec_table {
	const char *hash, *range; /* key names; range NULL: none */
	const key_def *defs;      /* AttributeDefinitions, in their order */
	size_t n_defs;
	bool on_demand;           /* BillingMode PAY_PER_REQUEST */
} index_spec_table;

/*
 * index_spec_read reads body's GlobalSecondaryIndexes and
 * LocalSecondaryIndexes into *s and adds their constraint violations to
 * *e. Returns true, or false after filling *out with the
 * SerializationException for a member of the wrong JSON type. Borrows
 * body, which must outlive *s; allocates in c->a.
 */
bool index_spec_read(api_ctx *c, json_t *body, index_spec *s, req_errors *e,
    reply *out);

/* index_spec_given reports whether the request names any index list. */
bool index_spec_given(const index_spec *s);

/*
 * index_spec_check runs DynamoDB's checks of the indexes of s against
 * table t (its key schema must already have passed, and s must have read
 * without a violation). Returns true with *defs (in c->a, strings
 * borrowed from the request) and *n set, or false after filling *out
 * with DynamoDB's ValidationException.
 */
bool index_spec_check(api_ctx *c, const index_spec *s,
    const index_spec_table *t, index_def **defs, size_t *n, reply *out);

/*
 * index_spec_describe returns DynamoDB's description of index d of the
 * table whose ARN is table_arn (owned JSON, or NULL without memory). For
 * a GSI, it is the catalog table holding its entries (NULL while the
 * catalog has none yet) and status its IndexStatus; items and bytes are
 * its ItemCount and IndexSizeBytes. Borrows everything.
 */
json_t *index_spec_describe(const index_def *d, const char *table_arn,
    const table *it, const char *status, uint64_t items, uint64_t bytes);

/*
 * index_spec_read_throughput reads a ProvisionedThroughput object (a
 * table's or a GSI's) found at member `member` (e.g.
 * "provisionedThroughput"): its units go to *rcu and *wcu (0 when
 * absent), violations to *e. Returns true, or false after filling *out
 * for a member of the wrong JSON type.
 */
bool index_spec_read_throughput(json_t *pt, const char *member,
    req_errors *e, json_int_t *rcu, json_int_t *wcu, reply *out);

/*
 * index_spec_throughput_in_bounds checks DynamoDB's upper bound on
 * provisioned units. Returns true, or false after filling *out.
 */
bool index_spec_throughput_in_bounds(json_int_t rcu, json_int_t wcu,
    reply *out);

#endif
