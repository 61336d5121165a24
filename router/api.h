/*
 * api.h — DynamoDB's JSON 1.0 API: one entry point that takes the target
 * operation and the body of a POST and produces the reply. Each operation
 * lives in ops_table.c or ops_item.c; request.c holds their shared parsing
 * of request fields.
 */
#ifndef KV_API_H
#define KV_API_H

#include <jansson.h>

#include "arena.h"
#include "json.h"
#include "router.h"

/* What an operation gets besides its parsed body. */
typedef struct api_ctx {
	router *r;
	arena *a;          /* freed when the request ends */
	const char *region; /* from the request's credential scope */
} api_ctx;

typedef void (*api_op_fn)(api_ctx *c, json_t *body, reply *out);

/*
 * api_handle serves one request: target is the X-Amz-Target header (or
 * NULL), auth the Authorization header (or NULL), body[0..len) the raw
 * body. Fills *out with the status and an owned body. Thread-safe.
 */
void api_handle(router *r, const char *target, const char *auth,
    const char *body, size_t len, reply *out);

/* The operations (ops_table.c, ops_item.c). */
void ops_table_create(api_ctx *c, json_t *body, reply *out);
void ops_table_describe(api_ctx *c, json_t *body, reply *out);
void ops_table_list(api_ctx *c, json_t *body, reply *out);
void ops_table_delete(api_ctx *c, json_t *body, reply *out);
void ops_table_update(api_ctx *c, json_t *body, reply *out);

/* api_op_name returns the name of operation i (< API_N_OPS), for metrics. */
const char *api_op_name(size_t i);

/*
 * ops_metrics fills *out with this router's Prometheus text: its answers
 * per operation and outcome, how its catalog is kept current (with the
 * catalog feed's propagation histogram), and every node's partition
 * counters (proto/metrics.h) with table names from the catalog.
 * Thread-safe.
 */
void ops_metrics(router *r, reply *out);
void ops_item_put(api_ctx *c, json_t *body, reply *out);
void ops_item_get(api_ctx *c, json_t *body, reply *out);
void ops_item_delete(api_ctx *c, json_t *body, reply *out);
void ops_item_update(api_ctx *c, json_t *body, reply *out);
void ops_read_query(api_ctx *c, json_t *body, reply *out);
void ops_read_scan(api_ctx *c, json_t *body, reply *out);
void ops_batch_get(api_ctx *c, json_t *body, reply *out);
void ops_batch_write(api_ctx *c, json_t *body, reply *out);
void ops_txn_write(api_ctx *c, json_t *body, reply *out);
void ops_txn_get(api_ctx *c, json_t *body, reply *out);
void ops_table_ttl_update(api_ctx *c, json_t *body, reply *out);
void ops_table_ttl_describe(api_ctx *c, json_t *body, reply *out);
void ops_tags_tag(api_ctx *c, json_t *body, reply *out);
void ops_tags_untag(api_ctx *c, json_t *body, reply *out);
void ops_tags_list(api_ctx *c, json_t *body, reply *out);
void ops_backup_create(api_ctx *c, json_t *body, reply *out);
void ops_backup_describe(api_ctx *c, json_t *body, reply *out);
void ops_backup_list(api_ctx *c, json_t *body, reply *out);
void ops_backup_delete(api_ctx *c, json_t *body, reply *out);
void ops_backup_restore(api_ctx *c, json_t *body, reply *out);
void ops_backup_continuous(api_ctx *c, json_t *body, reply *out);
void ops_backup_continuous_update(api_ctx *c, json_t *body, reply *out);
/* GET /status (ops_status.c): the status page, and its JSON feed. */
extern const char ops_status_page[];
void ops_status_json(router *r, reply *out);
void ops_account_endpoints(api_ctx *c, json_t *body, reply *out);
void ops_account_limits(api_ctx *c, json_t *body, reply *out);

/* api_reply_json fills *out with 200 and the JSON of j (takes j). */
void api_reply_json(reply *out, json_t *j);
/*
 * api_reply_text fills *out with 200 and the text in t, which it takes (t
 * is left empty); a failed t gives an internal error instead.
 */
void api_reply_text(reply *out, jtext *t);

#endif
