/*
 * request_expr.h — the expression members of a request, read, checked and
 * parsed in DynamoDB's order: ConditionExpression, UpdateExpression,
 * ProjectionExpression with ExpressionAttributeNames/Values, or their
 * legacy forms Expected (+ ConditionalOperator), AttributeUpdates and
 * AttributesToGet, which become the same trees (core/expr.h); for Query and
 * Scan also KeyConditionExpression / KeyConditions and FilterExpression /
 * QueryFilter / ScanFilter.
 */
#ifndef KV_REQUEST_EXPR_H
#define KV_REQUEST_EXPR_H

#include <jansson.h>
#include <stdbool.h>

#include "api.h"
#include "expr.h"

/* Which members an operation accepts. */
#define REQ_EXPR_CONDITION 0x1  /* ConditionExpression / Expected */
#define REQ_EXPR_UPDATE 0x2     /* UpdateExpression / AttributeUpdates */
#define REQ_EXPR_PROJECTION 0x4 /* ProjectionExpression / AttributesToGet */
#define REQ_EXPR_FILTER 0x8     /* FilterExpression / QueryFilter */
#define REQ_EXPR_KEY 0x10       /* KeyConditionExpression / KeyConditions */
#define REQ_EXPR_SCAN 0x20      /* with FILTER: the legacy form is ScanFilter */

typedef struct req_exprs {
	expr_ctx ctx;
	expr_cond *cond;       /* NULL: no condition */
	expr_update *update;   /* NULL: no update */
	expr_projection *proj; /* NULL: every attribute */
	expr_cond *filter;     /* NULL: no filter */
	expr_cond *key;        /* NULL: no key condition */
} req_exprs;

/*
 * req_exprs_read reads the members named by `which` from body into *out
 * (everything in c->a, borrowing body). Returns true, or false after
 * filling *rep with DynamoDB's ValidationException or
 * SerializationException.
 */
bool req_exprs_read(api_ctx *c, json_t *body, unsigned which, req_exprs *out,
    reply *rep);

#endif
