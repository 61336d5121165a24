/*
 * request.h — reading the fields of a DynamoDB request, with DynamoDB's
 * answers for fields of the wrong JSON type (SerializationException), for
 * constraint violations ("1 validation error detected: ..."), and for keys
 * that do not fit a table's key schema.
 */
#ifndef KV_REQUEST_H
#define KV_REQUEST_H

#include <jansson.h>
#include <stdbool.h>

#include "arena.h"
#include "catalog.h"
#include "json.h"
#include "router.h"
#include "value.h"

/* Collects constraint violations into DynamoDB's one-message form. */
typedef struct req_errors {
	int n;
	char buf[4096];
} req_errors;

/* req_errors_add records one "Value ... failed to satisfy ..." clause. */
void req_errors_add(req_errors *e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/*
 * req_errors_reply fills *out with the ValidationException for the
 * collected clauses and returns true, or returns false when there are none.
 */
bool req_errors_reply(const req_errors *e, reply *out);

/*
 * Field readers. Each sets *v to the field (NULL when absent or JSON null)
 * and returns true, or fills *out with a SerializationException and returns
 * false when the field has the wrong JSON type. Borrow body.
 */
bool req_string(json_t *body, const char *field, const char **v,
    reply *out);
bool req_object(json_t *body, const char *field, json_t **v, reply *out);
bool req_array(json_t *body, const char *field, json_t **v, reply *out);
bool req_bool(json_t *body, const char *field, bool *v, reply *out);
bool req_integer(json_t *body, const char *field, json_t **v, reply *out);

/*
 * req_check_table_name adds DynamoDB's violations for a table name (null,
 * length 3..255, pattern [a-zA-Z0-9_.-]+) under member `member`.
 */
void req_check_table_name(req_errors *e, const char *name,
    const char *member);

/*
 * req_check_billing_mode adds DynamoDB's violation for a billing mode that
 * is neither PROVISIONED nor PAY_PER_REQUEST under member `member`, and
 * says whether billing names one (false also when it is NULL: absent).
 */
bool req_check_billing_mode(req_errors *e, const char *billing,
    const char *member);

/*
 * req_check_length adds DynamoDB's violation for the string v (not NULL)
 * shorter than min or longer than max bytes, under member `member`: the
 * shape check of a name with length constraints, such as a key attribute's
 * (1..255).
 */
void req_check_length(req_errors *e, const char *v, size_t min, size_t max,
    const char *member);

/*
 * req_attributes_to_get reads body's AttributesToGet into *atg (NULL when
 * absent or JSON null) and adds DynamoDB's violation for an empty list to
 * *e under member `member` ("attributesToGet", or the path of a
 * BatchGetItem table's). Returns true, or false after filling *out with a
 * SerializationException for a member that is not a list. Borrows body.
 */
bool req_attributes_to_get(json_t *body, const char *member, req_errors *e,
    json_t **atg, reply *out);

/*
 * req_item_key finds the key attributes of an item to be written. Returns
 * true with *pk and *sk (NULL without a sort key) pointing into item, or
 * fills *out with DynamoDB's ValidationException (missing key, wrong type,
 * empty value, key too long) and returns false.
 */
bool req_item_key(const table *t, const value *item, const value **pk,
    const value **sk, reply *out);

/*
 * req_key checks a Key parameter: exactly the table's key attributes, of
 * the right types. Same results as req_item_key.
 */
bool req_key(const table *t, const value *key, const value **pk,
    const value **sk, reply *out);

/*
 * req_capacity reads ReturnConsumedCapacity into *mode (NULL when absent or
 * NONE). Returns true, or false after filling *out.
 */
bool req_capacity(json_t *body, const char **mode, reply *out);

/*
 * req_consumed adds DynamoDB's ConsumedCapacity for `half` half units on
 * table `name` to the response object j when mode asks for it (TOTAL:
 * CapacityUnits; INDEXES: also the Table share). Borrows everything.
 */
void req_consumed(json_t *j, const char *mode, const char *name,
    uint64_t half);
/* req_consumed_text does the same for a response object being written. */
void req_consumed_text(jtext *t, const char *mode, const char *name,
    uint64_t half);

/*
 * req_metrics_mode reads ReturnItemCollectionMetrics: *size true for
 * SIZE, false for NONE or none; false after filling *out.
 */
bool req_metrics_mode(json_t *body, bool *size, reply *out);

/*
 * req_collection_metrics returns DynamoDB's ItemCollectionMetrics (a new
 * reference, or NULL) for the collection of item (its key will do) in
 * t, of `bytes` bytes: its partition key, and the size's estimate as a
 * range of whole gigabytes around it.
 */
json_t *req_collection_metrics(const table *t, const value *item,
    uint64_t bytes);

/*
 * req_collection_metrics_add appends item's collection metrics (as
 * req_collection_metrics) to map's list for table t, made when missing:
 * the ItemCollectionMetrics of BatchWriteItem and TransactWriteItems.
 */
void req_collection_metrics_add(json_t *map, const table *t,
    const value *item, uint64_t bytes);

/*
 * req_consumed_indexes is req_consumed_text for a request that also cost
 * indexes names[0..n) ihalf[i] half units each (local[i]: a local index;
 * local NULL: all global): CapacityUnits is the sum (DynamoDB counts a
 * table's index writes in its total), and INDEXES adds the Table share
 * and the GlobalSecondaryIndexes and LocalSecondaryIndexes maps.
 */
void req_consumed_indexes(jtext *t, const char *mode, const char *name,
    uint64_t half, const char *const *names, const uint64_t *ihalf,
    const bool *local, size_t n);

/* req_consumed_object is the ConsumedCapacity object (a new reference)
 * req_consumed_indexes writes; mode is not NULL. */
json_t *req_consumed_object(const char *mode, const char *name,
    uint64_t half, const char *const *names, const uint64_t *ihalf,
    const bool *local,
    size_t n);


/*
 * req_table_missing fills *out with ResourceNotFoundException for a data
 * plane request on a missing table.
 */
void req_table_missing(reply *out);

#endif
