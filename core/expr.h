/*
 * expr.h — DynamoDB expressions: ConditionExpression, FilterExpression,
 * KeyConditionExpression, UpdateExpression and ProjectionExpression, and
 * the legacy parameters (Expected, QueryFilter, ScanFilter, AttributeUpdates,
 * AttributesToGet) translated into the same trees.
 *
 * One library for both sides: the router parses and validates every
 * expression of a request (and projects results), the node evaluates
 * conditions and applies updates on the stored item. Parsing is here,
 * evaluation in expr_eval.c, updates in expr_update.c, the legacy
 * translation in expr_legacy.c. Read this design note first.
 *
 * DESIGN NOTE
 *
 * Pipeline. expr_parse_* tokenizes (expr_lex.c), parses with a hand-written
 * recursive descent parser (expr_parse.c; nesting of parentheses and
 * function calls is limited to EXPR_MAX_NESTING, NOT chains and AND/OR
 * lists are loops, so the C stack is bounded), then validates the tree
 * (expr_check.c): placeholders are resolved through the request's
 * ExpressionAttributeNames/Values, and DynamoDB's semantic checks run in
 * DynamoDB's order so that the first error reported is DynamoDB's first.
 * A tree returned by a successful parse is fully resolved: paths hold
 * attribute names, operands hold the values themselves.
 *
 * Trees. A path (expr_path) is a list of elements, each an attribute name
 * or a list index: a.b[2].#c is [a, b, [2], <value of #c>]. An operand
 * (expr_operand) is a path, a value (a :placeholder), or a function call
 * whose arguments are operands (size, if_not_exists, list_append, and
 * + and -, which are kept as the functions EXPR_FN_PLUS/MINUS). A condition
 * (expr_cond) is a comparison (= <> < <= > >=), BETWEEN, IN, a boolean
 * function (attribute_exists, attribute_not_exists, attribute_type,
 * begins_with, contains), NOT, or an n-ary AND/OR. An update (expr_update)
 * is a list of actions SET path = operand, REMOVE path, ADD path value,
 * DELETE path value, in the order written. A projection is a list of
 * paths.
 *
 * Ownership. Everything a parse or a constructor returns lives in the
 * caller's arena and is valid until arena_fini. Trees borrow: the source
 * text and the ExpressionAttributeNames/Values passed in expr_ctx must
 * outlive the tree (a value operand points at the caller's value; a name
 * points into the caller's name). expr_apply_update and expr_project build
 * results that may share unchanged subtrees with their input item and
 * with the values of the tree: keep those alive while the result is used.
 *
 * Substitutions. expr_ctx carries the request's placeholders and a used
 * flag for each. Every parse marks what it resolved; after parsing ALL
 * expressions of one request the caller calls expr_ctx_check_unused,
 * which produces DynamoDB's "unused in expressions" error.
 *
 * Errors. Functions that can fail return KV_OK, KV_ENOMEM, or KV_EINVAL
 * with err->msg holding DynamoDB's complete message, including the
 * "Invalid UpdateExpression: " prefix where DynamoDB puts one. Messages
 * longer than EXPR_ERR_MAX - 1 bytes are truncated.
 *
 * Who calls what. The router: expr_ctx_check_keys, expr_parse_condition /
 * _update / _projection, expr_ctx_check_unused, expr_update_paths (to refuse
 * updates of key attributes, and for ReturnValues), expr_project (results,
 * ReturnValues UPDATED_*), expr_eval_condition (FilterExpression), and the
 * expr_legacy_* translators. The node: expr_eval_condition (condition
 * checks) and expr_apply_update, on trees the router validated (the text
 * and placeholders parsed again on the node, or the tree itself shipped).
 *
 * Limits. Expressions longer than EXPR_MAX_LEN bytes, with more than
 * EXPR_MAX_OPERATORS operators and functions, an IN with more than
 * EXPR_MAX_IN_OPERANDS operands or a path deeper than EXPR_MAX_PATH_DEPTH
 * are refused with DynamoDB's messages. Deeper nesting than
 * EXPR_MAX_NESTING is our own bound; it is reported as a syntax error on
 * the offending token (DynamoDB has no such message).
 *
 * Not here: JSON (router/json.c), key-schema checks (which key attributes
 * an update may not touch, which key conditions a Query accepts: the
 * caller's, from expr_update_paths and the condition tree), item size
 * limits (item.h).
 */
#ifndef KV_EXPR_H
#define KV_EXPR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "err.h"
#include "value.h"

/* DynamoDB's limits on expressions. */
#define EXPR_MAX_LEN 4096      /* bytes of expression text */
#define EXPR_MAX_OPERATORS 300 /* operators and functions per expression */
#define EXPR_MAX_IN_OPERANDS 100 /* IN: the left operand plus the list */
#define EXPR_MAX_PATH_DEPTH 32 /* elements of one document path */
/* Our own bound on nested parentheses and calls (keeps the stack small). */
#define EXPR_MAX_NESTING 256

#define EXPR_ERR_MAX 512

typedef struct expr_err {
	char msg[EXPR_ERR_MAX];
} expr_err;

/* Which request parameter an expression came from: picks the message
 * prefix ("Invalid FilterExpression: ") and, for updates, the grammar. */
typedef enum expr_kind {
	EXPR_CONDITION = 1, /* ConditionExpression */
	EXPR_FILTER,        /* FilterExpression */
	EXPR_KEY_CONDITION, /* KeyConditionExpression (condition grammar) */
	EXPR_UPDATE,        /* UpdateExpression */
	EXPR_PROJECTION,    /* ProjectionExpression */
} expr_kind;

/* expr_kind_name returns "ConditionExpression", ... (static). */
const char *expr_kind_name(expr_kind k);

/* ---- substitutions ------------------------------------------------- */

/* One entry of ExpressionAttributeNames: "#n" -> "name". */
typedef struct expr_name {
	const char *key; /* "#n", borrowed */
	size_t key_len;
	const char *name; /* the attribute name, borrowed */
	size_t name_len;
	bool used; /* set by a parse that referenced it */
} expr_name;

/* One entry of ExpressionAttributeValues: ":v" -> value. */
typedef struct expr_value {
	const char *key; /* ":v", borrowed */
	size_t key_len;
	const value *val; /* borrowed */
	bool used;
} expr_value;

/*
 * The placeholders of one request, shared by all of its expressions. The
 * caller fills names/values (borrowed arrays, in request order: unused
 * keys are reported in this order) and zeroes the rest; expr_ctx_init does
 * exactly that. The first parse builds lookup indexes in its arena, so a
 * context must not outlive the arena of the first parse that used it.
 */
typedef struct expr_ctx {
	expr_name *names;
	size_t nnames;
	expr_value *values;
	size_t nvalues;
	/* Private: hash indexes built in the arena of the first parse. */
	uint32_t *name_index_;
	uint32_t *value_index_;
	size_t name_slots_;
	size_t value_slots_;
} expr_ctx;

/* expr_ctx_init sets up ctx over the given arrays (borrowed); cannot fail. */
void expr_ctx_init(expr_ctx *ctx, expr_name *names, size_t nnames,
    expr_value *values, size_t nvalues);

/*
 * expr_ctx_check_keys checks the keys as DynamoDB does before parsing
 * anything: "#" or ":" followed by one or more of [0-9A-Za-z_]. Returns
 * KV_OK or KV_EINVAL with "ExpressionAttributeNames contains invalid key:
 * Syntax error; key: \"<key>\"" (names are checked before values). The
 * router checks emptiness ("... must not be empty") and the values
 * themselves.
 */
kv_err expr_ctx_check_keys(const expr_ctx *ctx, expr_err *err);

/*
 * expr_ctx_check_unused returns KV_EINVAL with "Value provided in
 * ExpressionAttributeNames unused in expressions: keys: {#a, #b}" if a
 * name was never used (names first), else the same for values, else
 * KV_OK. Call it once, after parsing every expression of the request.
 */
kv_err expr_ctx_check_unused(const expr_ctx *ctx, expr_err *err);

/* ---- trees ----------------------------------------------------------- */

typedef struct expr_path_elem {
	const char *name; /* attribute name; NULL for a list index */
	size_t name_len;
	uint32_t index; /* list index when name == NULL */
} expr_path_elem;

typedef struct expr_path {
	expr_path_elem *elems;
	size_t n; /* >= 1 */
} expr_path;

typedef enum expr_fn {
	EXPR_FN_NONE = 0,
	/* condition functions */
	EXPR_FN_ATTRIBUTE_EXISTS,
	EXPR_FN_ATTRIBUTE_NOT_EXISTS,
	EXPR_FN_ATTRIBUTE_TYPE,
	EXPR_FN_BEGINS_WITH,
	EXPR_FN_CONTAINS,
	EXPR_FN_SIZE,
	/* legacy NOT_CONTAINS: false when the attribute is missing */
	EXPR_FN_NOT_CONTAINS,
	/* update functions */
	EXPR_FN_IF_NOT_EXISTS,
	EXPR_FN_LIST_APPEND,
	EXPR_FN_PLUS,
	EXPR_FN_MINUS,
} expr_fn;

typedef enum expr_operand_kind {
	EXPR_OPND_PATH = 1,
	EXPR_OPND_VALUE,
	EXPR_OPND_FUNC,
} expr_operand_kind;

typedef struct expr_operand expr_operand;
struct expr_operand {
	expr_operand_kind kind;
	expr_path path;   /* PATH */
	const value *val; /* VALUE, borrowed */
	expr_fn fn;       /* FUNC */
	expr_operand *args;
	size_t nargs;
};

typedef enum expr_cmp {
	EXPR_EQ = 1,
	EXPR_NE,
	EXPR_LT,
	EXPR_LE,
	EXPR_GT,
	EXPR_GE,
} expr_cmp;

typedef enum expr_cond_kind {
	EXPR_COND_CMP = 1, /* ops[0] cmp ops[1] */
	EXPR_COND_BETWEEN, /* ops[0] BETWEEN ops[1] AND ops[2] */
	EXPR_COND_IN,      /* ops[0] IN (ops[1], ...) */
	EXPR_COND_FUNC,    /* fn(ops...) */
	EXPR_COND_AND,     /* kids[0] AND kids[1] AND ... */
	EXPR_COND_OR,
	EXPR_COND_NOT, /* NOT kids[0] */
	EXPR_COND_TRUE, /* an empty legacy condition (no Expected entries) */
} expr_cond_kind;

typedef struct expr_cond expr_cond;
struct expr_cond {
	expr_cond_kind kind;
	expr_cmp cmp; /* CMP */
	expr_fn fn;   /* FUNC */
	expr_operand *ops;
	size_t nops;
	expr_cond **kids; /* AND, OR, NOT */
	size_t nkids;
};

typedef enum expr_action_kind {
	EXPR_ACT_SET = 1, /* path = val (an operand) */
	EXPR_ACT_REMOVE,  /* REMOVE path */
	EXPR_ACT_ADD,     /* ADD path val (a value operand) */
	EXPR_ACT_DELETE,  /* DELETE path val (a value operand) */
} expr_action_kind;

typedef struct expr_action {
	expr_action_kind kind;
	expr_path path;
	expr_operand *val; /* SET, ADD, DELETE */
} expr_action;

typedef struct expr_update {
	expr_action *actions;
	size_t n;
	/*
	 * Built from AttributeUpdates: ADD also appends lists, DELETE without
	 * a value removes, and type mismatches say "Type mismatch for
	 * attribute to update".
	 */
	bool legacy;
} expr_update;

typedef struct expr_projection {
	expr_path *paths;
	size_t n;
} expr_projection;

/* ---- parsing (router and node) -------------------------------------- */

/*
 * expr_parse_condition parses s[0..len) as a condition of kind
 * EXPR_CONDITION, EXPR_FILTER or EXPR_KEY_CONDITION (same grammar; the kind
 * only names the expression in messages — the key-schema rules of
 * KeyConditionExpression are the caller's), resolving placeholders through
 * ctx and marking them used. On KV_OK *out is the resolved tree, in a.
 * KV_EINVAL: err->msg is DynamoDB's message, e.g. "Invalid
 * ConditionExpression: Syntax error; token: \"x\", near: \"a x\"". Also
 * KV_ENOMEM. s, ctx's names and values are borrowed by the tree.
 */
kv_err expr_parse_condition(arena *a, expr_kind kind, const char *s,
    size_t len, expr_ctx *ctx, expr_cond **out, expr_err *err);

/* expr_parse_update parses an UpdateExpression; as expr_parse_condition. */
kv_err expr_parse_update(arena *a, const char *s, size_t len, expr_ctx *ctx,
    expr_update **out, expr_err *err);

/* expr_parse_projection parses a ProjectionExpression (names only). */
kv_err expr_parse_projection(arena *a, const char *s, size_t len,
    expr_ctx *ctx, expr_projection **out, expr_err *err);

/*
 * expr_update_paths returns in *out the paths u writes, one per action in
 * order (top-level names for legacy updates). The router refuses updates
 * whose first element names a key attribute ("Cannot update attribute
 * pk. This attribute is part of the key"); ReturnValues UPDATED_OLD and
 * UPDATED_NEW are expr_project of the old and new item with these paths.
 * The array is new (in a); the paths' elements are u's. Returns KV_OK or
 * KV_ENOMEM.
 */
kv_err expr_update_paths(arena *a, const expr_update *u,
    expr_projection *out);

/* ---- key conditions (router) ---------------------------------------- */

typedef enum expr_key_op {
	EXPR_KEY_EQ = 1,
	EXPR_KEY_LT,
	EXPR_KEY_LE,
	EXPR_KEY_GT,
	EXPR_KEY_GE,
	EXPR_KEY_BETWEEN,     /* v[0] and v[1] */
	EXPR_KEY_BEGINS_WITH, /* v[0] */
} expr_key_op;

/* One condition of a KeyConditionExpression: attr op v[0] (and v[1]). */
typedef struct expr_key_cond {
	const char *attr; /* a top-level attribute name, borrowed */
	size_t attr_len;
	expr_key_op op; /* ":v < a" is returned as "a > :v" */
	const value *v[2];
} expr_key_cond;

/*
 * expr_key_conditions checks that c, parsed with EXPR_KEY_CONDITION, has a
 * shape a key condition may have and returns its conditions in out[0..*n)
 * (*n is 1 or 2), in the order written. KV_EINVAL messages, as DynamoDB's
 * (no "Invalid KeyConditionExpression: " prefix): "Invalid operator used
 * in KeyConditionExpression: OR" (also NOT, IN, <>, attribute_exists,
 * attribute_not_exists, attribute_type, contains), "KeyConditionExpressions
 * cannot contain nested operations" (size), "Invalid condition in
 * KeyConditionExpression: BETWEEN operator must have the key attribute as
 * its first operand" (and begins_with), "Invalid condition in
 * KeyConditionExpression: Multiple attribute names used in one
 * condition", "KeyConditionExpressions cannot have conditions on nested
 * attributes", "Invalid condition in KeyConditionExpression: No key
 * attribute specified", "KeyConditionExpressions must only contain one
 * condition per key", "Conditions can be of length 1 or 2 only". Which
 * attributes are keys ("Query condition missed key schema element") and
 * which operators a hash key takes are the caller's checks.
 */
kv_err expr_key_conditions(const expr_cond *c, expr_key_cond out[2],
    size_t *n, expr_err *err);

/*
 * expr_key_conditions_max is expr_key_conditions with room for max
 * conditions in out (a multi-attribute index key has up to eight
 * attributes).
 */
kv_err expr_key_conditions_max(const expr_cond *c, expr_key_cond *out,
    size_t max, size_t *n, expr_err *err);

/* ---- evaluation (node, and router for filters) ---------------------- */

/*
 * expr_eval_condition evaluates c on item (type M), or on a missing item
 * when item is NULL, with DynamoDB's semantics: comparisons of different
 * types or with a missing attribute are false (<> is then true), ordering
 * only on S, N and B, size() of N, BOOL or NULL yields nothing. Pure; no
 * errors are possible at this stage (they were reported by the parse).
 */
bool expr_eval_condition(const expr_cond *c, const value *item);

/*
 * expr_apply_update applies u to old_item (type M; NULL when the item does
 * not exist) and sets *new_item to the resulting item (type M, built in a,
 * sharing unchanged parts with old_item and u). SET operands are all read
 * from old_item before anything is written. Returns KV_OK, KV_ENOMEM, or
 * KV_EINVAL with one of DynamoDB's messages: "The provided expression
 * refers to an attribute that does not exist in the item", "An operand in
 * the update expression has an incorrect data type", "The document path
 * provided in the update expression is invalid for update", the number
 * overflow and underflow messages of number.h, "Type mismatch for
 * attribute to update" (legacy), "Nesting Levels have exceeded supported
 * limits: ..." (a result nested deeper than VALUE_MAX_DEPTH, with the
 * full text router/json.c uses). Key and item size
 * rules are the caller's.
 */
kv_err expr_apply_update(arena *a, const expr_update *u,
    const value *old_item, value *new_item, expr_err *err);

/*
 * expr_project sets *out to an item (type M) holding only the parts of
 * item named by p, nested as in item: projecting a.b[1] of {a: {b: [x, y,
 * z], c: 1}} gives {a: {b: [y]}}; several elements of one list keep their
 * order and are packed. Missing paths are skipped. Returns KV_OK or
 * KV_ENOMEM. The result shares subtrees with item.
 */
kv_err expr_project(arena *a, const value *item, const expr_projection *p,
    value *out);

/* expr_path_get returns the value at path p in v (an item), or NULL. */
const value *expr_path_get(const value *v, const expr_path *p);

/* ---- legacy parameters (router) ------------------------------------- */

/*
 * One entry of Expected, as the router decoded it. op is the
 * ComparisonOperator text (NULL when absent); has_exists/exists the Exists
 * flag; val the Value (NULL when absent); list/nlist the AttributeValueList
 * (has_list when present, even if empty). All borrowed.
 */
typedef struct expr_expected {
	const char *attr;
	size_t attr_len;
	const char *op;
	size_t op_len;
	bool has_exists;
	bool exists;
	const value *val;
	const value *list;
	size_t nlist;
	bool has_list;
} expr_expected;

/*
 * expr_legacy_expected translates one Expected entry into a condition,
 * with DynamoDB's checks and messages ("One or more parameter values were
 * invalid: Exists and ComparisonOperator cannot be used together for
 * Attribute: a", "... Invalid number of argument(s) for the EQ
 * ComparisonOperator", "... ComparisonOperator LT is not valid for SS
 * AttributeValue type", ...). Returns KV_OK, KV_EINVAL or KV_ENOMEM.
 */
kv_err expr_legacy_expected(arena *a, const expr_expected *e,
    expr_cond **out, expr_err *err);

/*
 * expr_legacy_filter translates one Condition of QueryFilter, ScanFilter or
 * KeyConditions (attribute attr, ComparisonOperator op, AttributeValueList
 * list[0..n)) into a condition, with DynamoDB's checks and messages.
 */
kv_err expr_legacy_filter(arena *a, const char *attr, size_t attr_len,
    const char *op, size_t op_len, const value *list, size_t n,
    expr_cond **out, expr_err *err);

/*
 * expr_legacy_join combines conds[0..n) with ConditionalOperator AND (or
 * OR when or is set). n == 0 gives a condition that is always true; n == 1
 * gives conds[0]. Returns NULL only when memory is exhausted.
 */
expr_cond *expr_legacy_join(arena *a, expr_cond **conds, size_t n, bool or);

/* One entry of AttributeUpdates; action NULL means PUT. Borrowed. */
typedef struct expr_legacy_update {
	const char *attr;
	size_t attr_len;
	const char *action; /* "PUT", "ADD", "DELETE" */
	size_t action_len;
	const value *val; /* NULL when absent */
} expr_legacy_update;

/*
 * expr_legacy_updates translates AttributeUpdates into an update (legacy
 * set), checking DynamoDB's rules ("One or more parameter values were
 * invalid: Only DELETE action is allowed when no attribute value is
 * specified", "... DELETE action with value is not supported for the type
 * S", "... ADD action is not supported for the type S"). n may be 0.
 */
kv_err expr_legacy_updates(arena *a, const expr_legacy_update *u, size_t n,
    expr_update **out, expr_err *err);

/* expr_legacy_projection builds a projection of the top-level names
 * attrs[i] (AttributesToGet). Returns KV_OK or KV_ENOMEM. */
kv_err expr_legacy_projection(arena *a, const char *const *attrs,
    const size_t *lens, size_t n, expr_projection **out);

/* ---- constructors (for callers that build trees themselves) --------- */

/*
 * expr_path_top sets *out to a one-element path naming attr (borrowed).
 * Returns KV_OK or KV_ENOMEM.
 */
kv_err expr_path_top(arena *a, const char *attr, size_t len,
    expr_path *out);

/* expr_reserved reports whether s[0..n) is one of DynamoDB's reserved
 * words, compared case-insensitively. */
bool expr_reserved(const char *s, size_t n);

#endif
