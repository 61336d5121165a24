/*
 * expr_legacy.c — builds the trees of expr.h from the legacy parameters
 * (Expected, QueryFilter, ScanFilter, KeyConditions, ConditionalOperator,
 * AttributeUpdates, AttributesToGet), with DynamoDB's checks and messages
 * for them, so that evaluation has one code path.
 *
 * The router decodes the JSON and hands over value trees; deciding which
 * parameters may be combined with which ("Can not use both expression and
 * non-expression parameters") is also the router's. Semantics follow the
 * expression forms: EQ is =, NULL is attribute_not_exists, and so on;
 * NOT_CONTAINS, which has no expression form, is false on a missing
 * attribute.
 */
#include "expr_int.h"

#include <string.h>

#define INVALID "One or more parameter values were invalid: "

typedef struct legacy_op {
	const char *name;
	int min, max; /* number of values; max -1: any */
	const val_type *types; /* allowed types, 0-terminated; NULL: any */
} legacy_op;

static const val_type ordered[] = { VAL_S, VAL_N, VAL_B, 0 };
static const val_type prefix[] = { VAL_S, VAL_B, 0 };

static const legacy_op ops[] = {
	{ "EQ", 1, 1, NULL },
	{ "NE", 1, 1, NULL },
	{ "LE", 1, 1, ordered },
	{ "LT", 1, 1, ordered },
	{ "GE", 1, 1, ordered },
	{ "GT", 1, 1, ordered },
	{ "NOT_NULL", 0, 0, NULL },
	{ "NULL", 0, 0, NULL },
	{ "CONTAINS", 1, 1, ordered },
	{ "NOT_CONTAINS", 1, 1, ordered },
	{ "BEGINS_WITH", 1, 1, prefix },
	{ "IN", 1, -1, ordered },
	{ "BETWEEN", 2, 2, ordered },
};

#define NOPS (sizeof(ops) / sizeof(ops[0]))

static const legacy_op *
find_op(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < NOPS; i++) {
		if (strlen(ops[i].name) == n && memcmp(ops[i].name, s, n) == 0)
			return &ops[i];
	}
	return NULL;
}

static bool
type_allowed(const legacy_op *op, val_type t)
{
	size_t i;

	if (op->types == NULL)
		return true;
	for (i = 0; op->types[i] != 0; i++) {
		if (op->types[i] == t)
			return true;
	}
	return false;
}

/*
 * check_values runs the checks every legacy condition shares: the number
 * of values, one type for all of them, a type the operator accepts, and
 * BETWEEN's order.
 */
static kv_err
check_values(const legacy_op *op, const value *vals, size_t n, bool types,
    expr_err *err)
{
	size_t i;

	if ((int) n < op->min || (op->max >= 0 && (int) n > op->max))
		return expr_errf(err, 0, INVALID "Invalid number of "
		    "argument(s) for the %s ComparisonOperator", op->name);
	for (i = 1; i < n; i++) {
		if (vals[i].type != vals[0].type)
			return expr_errf(err, 0, INVALID "AttributeValues "
			    "inside AttributeValueList must be of same type");
	}
	for (i = 0; types && i < n; i++) {
		if (!type_allowed(op, vals[i].type))
			return expr_errf(err, 0, INVALID "ComparisonOperator "
			    "%s is not valid for %s AttributeValue type",
			    op->name, value_type_name(vals[i].type));
	}
	if (strcmp(op->name, "BETWEEN") == 0 &&
	    value_cmp(&vals[0], &vals[1]) > 0)
		return expr_errf(err, 0, "The BETWEEN condition was provided "
		    "a range where the lower bound is greater than the upper "
		    "bound");
	return KV_OK;
}

/* build makes the condition "attr op vals". */
static kv_err
build(arena *a, const char *attr, size_t attr_len, const legacy_op *op,
    const value *vals, size_t n, expr_cond **out)
{
	expr_cond *c = arena_alloc(a, sizeof(*c));
	const char *name = op->name;
	size_t i;
	kv_err e;

	if (c == NULL)
		return KV_ENOMEM;
	c->nops = n + 1;
	c->ops = arena_alloc(a, (n + 1) * sizeof(expr_operand));
	if (c->ops == NULL)
		return KV_ENOMEM;
	c->ops[0].kind = EXPR_OPND_PATH;
	e = expr_path_top(a, attr, attr_len, &c->ops[0].path);
	if (e != KV_OK)
		return e;
	for (i = 0; i < n; i++) {
		c->ops[i + 1].kind = EXPR_OPND_VALUE;
		c->ops[i + 1].val = &vals[i];
	}
	if (strcmp(name, "EQ") == 0 || strcmp(name, "NE") == 0 ||
	    strcmp(name, "LE") == 0 || strcmp(name, "LT") == 0 ||
	    strcmp(name, "GE") == 0 || strcmp(name, "GT") == 0) {
		c->kind = EXPR_COND_CMP;
		if (name[0] == 'E')
			c->cmp = EXPR_EQ;
		else if (name[0] == 'N')
			c->cmp = EXPR_NE;
		else if (name[0] == 'L')
			c->cmp = name[1] == 'E' ? EXPR_LE : EXPR_LT;
		else
			c->cmp = name[1] == 'E' ? EXPR_GE : EXPR_GT;
	} else if (strcmp(name, "IN") == 0) {
		c->kind = EXPR_COND_IN;
	} else if (strcmp(name, "BETWEEN") == 0) {
		c->kind = EXPR_COND_BETWEEN;
	} else {
		c->kind = EXPR_COND_FUNC;
		if (strcmp(name, "NOT_NULL") == 0)
			c->fn = EXPR_FN_ATTRIBUTE_EXISTS;
		else if (strcmp(name, "NULL") == 0)
			c->fn = EXPR_FN_ATTRIBUTE_NOT_EXISTS;
		else if (strcmp(name, "CONTAINS") == 0)
			c->fn = EXPR_FN_CONTAINS;
		else if (strcmp(name, "NOT_CONTAINS") == 0)
			c->fn = EXPR_FN_NOT_CONTAINS;
		else
			c->fn = EXPR_FN_BEGINS_WITH;
	}
	*out = c;
	return KV_OK;
}

static kv_err
unknown_op(const char *op, size_t len, expr_err *err)
{
	return expr_errf(err, 0, "1 validation error detected: Value '%.*s' "
	    "at 'comparisonOperator' failed to satisfy constraint: Member "
	    "must satisfy enum value set: [IN, NULL, BETWEEN, LT, "
	    "NOT_CONTAINS, EQ, GT, NOT_NULL, NE, LE, BEGINS_WITH, GE, "
	    "CONTAINS]", (int) len, op);
}

kv_err
expr_legacy_expected(arena *a, const expr_expected *x,
    expr_cond **out, expr_err *err)
{
	const legacy_op *op;
	const value *vals;
	size_t n;
	kv_err e;
	bool exists;
	int an = (int) x->attr_len;

	if (x->has_list && x->val != NULL)
		return expr_errf(err, 0, INVALID "Value and "
		    "AttributeValueList cannot be used together for "
		    "Attribute: %.*s", an, x->attr);
	if (x->op != NULL) {
		if (x->has_exists)
			return expr_errf(err, 0, INVALID "Exists and "
			    "ComparisonOperator cannot be used together for "
			    "Attribute: %.*s", an, x->attr);
		op = find_op(x->op, x->op_len);
		if (op == NULL)
			return unknown_op(x->op, x->op_len, err);
		if (op->max != 0 && !x->has_list && x->val == NULL)
			return expr_errf(err, 0, INVALID "Value or "
			    "AttributeValueList must be used with "
			    "ComparisonOperator: %s for Attribute: %.*s",
			    op->name, an, x->attr);
		vals = x->has_list ? x->list : x->val;
		n = x->has_list ? x->nlist : (x->val != NULL ? 1 : 0);
		e = check_values(op, vals, n, true, err);
		if (e != KV_OK)
			return e;
		return build(a, x->attr, x->attr_len, op, vals, n, out);
	}
	if (x->has_list)
		return expr_errf(err, 0, INVALID "AttributeValueList can "
		    "only be used with a ComparisonOperator for Attribute: "
		    "%.*s", an, x->attr);
	exists = !x->has_exists || x->exists;
	if (exists && x->val == NULL)
		return expr_errf(err, 0, INVALID "Value must be provided when "
		    "Exists is %s for Attribute: %.*s",
		    x->has_exists ? "true" : "null", an, x->attr);
	if (!exists && x->val != NULL)
		return expr_errf(err, 0, INVALID "Value cannot be used when "
		    "Exists is false for Attribute: %.*s", an, x->attr);
	if (exists)
		return build(a, x->attr, x->attr_len, find_op("EQ", 2), x->val,
		    1, out);
	return build(a, x->attr, x->attr_len, find_op("NULL", 4), NULL, 0,
	    out);
}

kv_err
expr_legacy_filter(arena *a, const char *attr, size_t attr_len,
    const char *opname, size_t op_len, const value *list, size_t n,
    expr_cond **out, expr_err *err)
{
	const legacy_op *op = find_op(opname, op_len);
	kv_err e;

	if (op == NULL)
		return unknown_op(opname, op_len, err);
	e = check_values(op, list, n, true, err);
	if (e != KV_OK)
		return e;
	return build(a, attr, attr_len, op, list, n, out);
}

expr_cond *
expr_legacy_join(arena *a, expr_cond **conds, size_t n, bool or)
{
	expr_cond *c;

	if (n == 1)
		return conds[0];
	c = arena_alloc(a, sizeof(*c));
	if (c == NULL)
		return NULL;
	if (n == 0) {
		c->kind = EXPR_COND_TRUE;
		return c;
	}
	c->kind = or ? EXPR_COND_OR : EXPR_COND_AND;
	c->kids = arena_alloc(a, n * sizeof(expr_cond *));
	if (c->kids == NULL)
		return NULL;
	memcpy(c->kids, conds, n * sizeof(expr_cond *));
	c->nkids = n;
	return c;
}

static bool
word(const char *s, size_t n, const char *w)
{
	return strlen(w) == n && memcmp(s, w, n) == 0;
}

kv_err
expr_legacy_updates(arena *a, const expr_legacy_update *u, size_t n,
    expr_update **out, expr_err *err)
{
	expr_update *up = arena_alloc(a, sizeof(*up));
	size_t i;
	kv_err e;

	if (up == NULL)
		return KV_ENOMEM;
	up->legacy = true;
	up->n = n;
	up->actions = arena_alloc(a, (n + 1) * sizeof(expr_action));
	if (up->actions == NULL)
		return KV_ENOMEM;
	for (i = 0; i < n; i++) {
		const expr_legacy_update *x = &u[i];
		expr_action *act = &up->actions[i];
		const char *name = x->action != NULL ? x->action : "PUT";
		size_t len = x->action != NULL ? x->action_len : 3;
		val_type t = x->val != NULL ? x->val->type : 0;

		if (word(name, len, "PUT")) {
			act->kind = EXPR_ACT_SET;
		} else if (word(name, len, "ADD")) {
			act->kind = EXPR_ACT_ADD;
		} else if (word(name, len, "DELETE")) {
			act->kind = x->val != NULL ? EXPR_ACT_DELETE
						   : EXPR_ACT_REMOVE;
		} else {
			return expr_errf(err, 0, "1 validation error "
			    "detected: Value '%.*s' at 'attributeUpdates."
			    "%.*s.member.action' failed to satisfy "
			    "constraint: Member must satisfy enum value set: "
			    "[ADD, PUT, DELETE]", (int) len, name,
			    (int) x->attr_len, x->attr);
		}
		if (x->val == NULL && act->kind != EXPR_ACT_REMOVE)
			return expr_errf(err, 0, INVALID "Only DELETE action "
			    "is allowed when no attribute value is specified");
		if (act->kind == EXPR_ACT_DELETE && t != VAL_SS &&
		    t != VAL_NS && t != VAL_BS)
			return expr_errf(err, 0, INVALID "DELETE action with "
			    "value is not supported for the type %s",
			    value_type_name(t));
		if (act->kind == EXPR_ACT_ADD && t != VAL_L && t != VAL_SS &&
		    t != VAL_NS && t != VAL_BS && t != VAL_N)
			return expr_errf(err, 0, INVALID "ADD action is not "
			    "supported for the type %s", value_type_name(t));
		e = expr_path_top(a, x->attr, x->attr_len, &act->path);
		if (e != KV_OK)
			return e;
		if (x->val != NULL) {
			act->val = arena_alloc(a, sizeof(expr_operand));
			if (act->val == NULL)
				return KV_ENOMEM;
			act->val->kind = EXPR_OPND_VALUE;
			act->val->val = x->val;
		}
	}
	*out = up;
	return KV_OK;
}

kv_err
expr_legacy_projection(arena *a, const char *const *attrs,
    const size_t *lens, size_t n, expr_projection **out)
{
	expr_projection *p = arena_alloc(a, sizeof(*p));
	size_t i;
	kv_err e;

	if (p == NULL)
		return KV_ENOMEM;
	p->n = n;
	p->paths = arena_alloc(a, (n + 1) * sizeof(expr_path));
	if (p->paths == NULL)
		return KV_ENOMEM;
	for (i = 0; i < n; i++) {
		e = expr_path_top(a, attrs[i], lens[i], &p->paths[i]);
		if (e != KV_OK)
			return e;
	}
	*out = p;
	return KV_OK;
}
