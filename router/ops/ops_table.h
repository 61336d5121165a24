/*
 * ops_table.h — what the table operations (ops_table.c) share with the
 * tag operations (ops_tags.c).
 */
#ifndef KV_OPS_TABLE_H
#define KV_OPS_TABLE_H

#include <jansson.h>

#include "api.h"
#include "catalog.h"
#include "wire.h"

/*
 * ops_table_json: the TableDescription of t. with_counts adds ItemCount
 * and TableSizeBytes (and the indexes') from the owners (DescribeTable),
 * which needs network calls.
 */
json_t *ops_table_json(api_ctx *c, const table *t, bool with_counts);

/* ops_table_name reads and checks TableName for the control-plane
 * operations: true with *name set (NULL when absent), or false after
 * answering DynamoDB's error. */
bool ops_table_name(json_t *body, const char **name, reply *out);

/*
 * ops_table_created answers the catalog node's answer to a new table
 * (CreateTable, RestoreTableFromBackup) whose own errors the caller has
 * answered: the TableDescription, or an internal error.
 */
void ops_table_created(api_ctx *c, const rpc_response *resp, reply *out);

/* ops_backup_summary: the RestoreSummary of t, restored from a backup. */
json_t *ops_backup_summary(api_ctx *c, const table *t);

/* A borrowed table naming `name` for a change request to the catalog
 * node (the fields every table on the wire must have). */
void ops_change_table(table *t, const char *name, billing_mode billing);

/* Checks the catalog node's answer to a change of table `name` (about
 * its index `index`, or NULL): true when it carries the table, else
 * DynamoDB's error in *out, *resp finalised. */
bool ops_change_ok(rpc_response *resp, const char *name, const char *index,
    reply *out);

/*
 * ops_tags_read reads the list of tags `member` of body (TagResource's
 * Tags, CreateTable's): true with *tags (in the context's arena; strings
 * borrowed from body) and *n set, *n 0 when absent and not required;
 * false after answering DynamoDB's error.
 */
bool ops_tags_read(api_ctx *c, json_t *body, const char *member,
    bool required, table_tag **tags, size_t *n, reply *out);

#endif
