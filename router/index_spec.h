/*
 * index_spec.h — the secondary indexes of a CreateTable request, the
 * GlobalSecondaryIndexUpdates of an UpdateTable request, and how a
 * TableDescription shows indexes.
 *
 * CreateTable reads GlobalSecondaryIndexes and LocalSecondaryIndexes in
 * two steps that slot into ops_table.c's own: index_spec_read adds the
 * shape violations ("Value ... at 'globalSecondaryIndexes.1.member...'")
 * to the request's list, and index_spec_check, once the table's own key
 * schema has passed, runs DynamoDB's service checks and yields the
 * index_defs to send to the catalog node. UpdateTable reads its list with
 * index_spec_read_updates, checks what needs no table with
 * index_spec_check_updates and, against the table the catalog holds,
 * turns it into changes with index_spec_plan; ops_table.c sends each as
 * one RPC_INDEX_UPDATE. Which table holds a GSI's entries, and its status,
 * is the catalog node's business (node/catalog/catalog_node.c); index_spec_describe
 * only turns what the catalog says into DynamoDB's JSON. Query and Scan on
 * an index live in ops_read.c.
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

/* index_spec_key_schema returns d's KeySchema as DynamoDB lists it (owned
 * JSON): its HASH elements, then its RANGE elements. */
json_t *index_spec_key_schema(const index_def *d);

/*
 * index_spec_describe returns DynamoDB's description of index d of the
 * table whose ARN is table_arn (owned JSON, or NULL without memory). For
 * a GSI, it is the catalog table holding its entries (NULL while the
 * catalog has none yet: the throughput shown is then d's), status its
 * IndexStatus and backfilling its Backfilling member: -1 leaves it out
 * (DynamoDB shows it only for a GSI added by UpdateTable, while CREATING),
 * 0 false, 1 true. items and bytes are its ItemCount and IndexSizeBytes.
 * Borrows everything.
 */
json_t *index_spec_describe(const index_def *d, const char *table_arn,
    const table *it, const char *status, int backfilling, uint64_t items,
    uint64_t bytes);

/* What UpdateTable asks of one global index (DynamoDB's action names). */
typedef enum index_change_kind {
	INDEX_CHANGE_CREATE = 1, /* Create */
	INDEX_CHANGE_DELETE,     /* Delete */
	INDEX_CHANGE_THROUGHPUT, /* Update: its ProvisionedThroughput */
} index_change_kind;

/*
 * One element of GlobalSecondaryIndexUpdates as read. An element must
 * name exactly one action; kind and name are those of the first it names
 * (in the order Update, Create, Delete).
 */
typedef struct index_update {
	index_change_kind kind;  /* 0: it names none */
	int n_actions;           /* how many of Update, Create, Delete */
	const char *name;        /* IndexName (borrowed); may be NULL */
	struct index_req *create; /* Create: the definition as read */
	json_int_t rcu, wcu;     /* Update: its ProvisionedThroughput */
} index_update;

/*
 * The GlobalSecondaryIndexUpdates of one UpdateTable request. list is
 * borrowed from the request's JSON (NULL when absent); u lives in the
 * request's arena.
 */
typedef struct index_updates {
	json_t *list;
	index_update *u;
	size_t n;
} index_updates;

/*
 * index_spec_read_updates reads body's GlobalSecondaryIndexUpdates into
 * *s and adds their constraint violations to *e. Returns true, or false
 * after filling *out with the SerializationException for a member of the
 * wrong JSON type. Borrows body, which must outlive *s; allocates in c->a.
 */
bool index_spec_read_updates(api_ctx *c, json_t *body, index_updates *s,
    req_errors *e, reply *out);

/*
 * index_spec_check_updates runs the checks of s that need no table (each
 * element one action, one action per index). Returns true, or false
 * after filling *out with DynamoDB's ValidationException.
 */
bool index_spec_check_updates(const index_updates *s, reply *out);

/* What index_spec_plan knows of the table an UpdateTable changes. */
typedef struct index_spec_base {
	/*
	 * The table as the catalog holds it, borrowed. Its indexes' rcu and
	 * wcu must hold each GSI's current throughput (its own table's).
	 */
	const table *cur;
	billing_mode want;        /* the billing mode after the request */
	bool table_pt;            /* the request sets the table's throughput */
	const key_def *defs;      /* the request's AttributeDefinitions */
	size_t n_defs;
	bool defs_given;          /* AttributeDefinitions present */
} index_spec_base;

/* One change for the catalog node (RPC_INDEX_UPDATE). */
typedef struct index_change {
	index_change_kind kind;
	/*
	 * The index: for a create as requested, otherwise cur's definition
	 * with, for a throughput change, the requested rcu and wcu. Strings
	 * borrowed from the request or from b->cur.
	 */
	index_def def;
} index_change;

/*
 * index_spec_plan checks s (which passed index_spec_check_updates; it
 * may be empty) against the table b describes, in DynamoDB's order, with
 * DynamoDB's rule that a switch to PROVISIONED gives every GSI throughput
 * of its own in the same request, and returns in
 * *changes (in c->a) the *n changes to make: the one create or delete
 * first, if any, then the throughput changes in the request's order. Returns true, or false after filling
 * *out with DynamoDB's answer: ValidationException, LimitExceededException
 * (more than one create or delete; a 21st GSI) or ResourceNotFoundException
 * (an index the table does not have). Borrows s and b.
 */
bool index_spec_plan(api_ctx *c, const index_updates *s,
    const index_spec_base *b, index_change **changes, size_t *n,
    reply *out);

/*
 * index_spec_not_found fills *out with DynamoDB's ResourceNotFoundException
 * for an index `index` that table `table` does not have.
 */
void index_spec_not_found(reply *out, const char *table, const char *index);

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
