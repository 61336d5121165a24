/*
 * expr_key.c — turns a parsed KeyConditionExpression into at most two
 * conditions on top-level attributes (one per key attribute), with
 * DynamoDB's messages for shapes a key condition may not have: OR, NOT,
 * IN, <>, most functions, size(), nested paths, two attributes in one
 * comparison, two conditions on one attribute (rules as dynalite applies
 * them, checked against DynamoDB).
 *
 * Which attributes are the table's or index's keys, and which operators a
 * hash key accepts, are the router's to check on the result. Parsing is
 * expr_parse.c's; read expr.h first.
 */
#include "expr_int.h"

#include <string.h>

typedef struct keys {
	expr_key_cond *out;
	size_t max;    /* room in out */
	size_t n;      /* conditions found */
	expr_err *err;
} keys;

static kv_err
bad_operator(keys *k, const char *op)
{
	return expr_errf(k->err, 0, "Invalid operator used in "
	    "KeyConditionExpression: %s", op);
}

static const char *
fn_word(expr_fn fn)
{
	switch (fn) {
	case EXPR_FN_ATTRIBUTE_EXISTS:
		return "attribute_exists";
	case EXPR_FN_ATTRIBUTE_NOT_EXISTS:
		return "attribute_not_exists";
	case EXPR_FN_ATTRIBUTE_TYPE:
		return "attribute_type";
	case EXPR_FN_CONTAINS:
		return "contains";
	case EXPR_FN_NOT_CONTAINS:
		return "NOT_CONTAINS";
	default:
		return NULL;
	}
}

static expr_key_op
flip(expr_cmp cmp, bool flipped)
{
	switch (cmp) {
	case EXPR_LT:
		return flipped ? EXPR_KEY_GT : EXPR_KEY_LT;
	case EXPR_LE:
		return flipped ? EXPR_KEY_GE : EXPR_KEY_LE;
	case EXPR_GT:
		return flipped ? EXPR_KEY_LT : EXPR_KEY_GT;
	case EXPR_GE:
		return flipped ? EXPR_KEY_LE : EXPR_KEY_GE;
	default:
		return EXPR_KEY_EQ;
	}
}

/* primitive checks one comparison, BETWEEN or begins_with. */
static kv_err
primitive(keys *k, const expr_cond *c)
{
	const expr_path *attr = NULL;
	expr_key_cond kc;
	size_t i, at = 0, nv = 0;

	memset(&kc, 0, sizeof(kc));
	if ((c->kind == EXPR_COND_BETWEEN ||
		(c->kind == EXPR_COND_FUNC && c->fn == EXPR_FN_BEGINS_WITH)) &&
	    (c->nops == 0 || c->ops[0].kind != EXPR_OPND_PATH))
		return expr_errf(k->err, 0, "Invalid condition in "
		    "KeyConditionExpression: %s operator must have the key "
		    "attribute as its first operand",
		    c->kind == EXPR_COND_BETWEEN ? "BETWEEN" : "begins_with");
	for (i = 0; i < c->nops; i++) {
		const expr_operand *o = &c->ops[i];

		if (o->kind == EXPR_OPND_FUNC)
			return expr_errf(k->err, 0, "KeyConditionExpressions "
			    "cannot contain nested operations");
		if (o->kind == EXPR_OPND_VALUE) {
			if (nv < 2)
				kc.v[nv++] = o->val;
			continue;
		}
		if (attr != NULL)
			return expr_errf(k->err, 0, "Invalid condition in "
			    "KeyConditionExpression: Multiple attribute names "
			    "used in one condition");
		if (o->path.n > 1)
			return expr_errf(k->err, 0, "KeyConditionExpressions "
			    "cannot have conditions on nested attributes");
		attr = &o->path;
		at = i;
	}
	if (attr == NULL || attr->elems[0].name == NULL)
		return expr_errf(k->err, 0, "Invalid condition in "
		    "KeyConditionExpression: No key attribute specified");
	kc.attr = attr->elems[0].name;
	kc.attr_len = attr->elems[0].name_len;
	for (i = 0; i < k->n && i < k->max; i++) {
		if (k->out[i].attr_len == kc.attr_len &&
		    memcmp(k->out[i].attr, kc.attr, kc.attr_len) == 0)
			return expr_errf(k->err, 0, "KeyConditionExpressions "
			    "must only contain one condition per key");
	}
	if (c->kind == EXPR_COND_BETWEEN)
		kc.op = EXPR_KEY_BETWEEN;
	else if (c->kind == EXPR_COND_FUNC)
		kc.op = EXPR_KEY_BEGINS_WITH;
	else
		kc.op = flip(c->cmp, at != 0);
	if (k->n < k->max)
		k->out[k->n] = kc;
	k->n++;
	return KV_OK;
}

static kv_err
walk(keys *k, const expr_cond *c)
{
	const char *fn;
	size_t i;
	kv_err e;

	switch (c->kind) {
	case EXPR_COND_AND:
		for (i = 0; i < c->nkids; i++) {
			e = walk(k, c->kids[i]);
			if (e != KV_OK)
				return e;
		}
		return KV_OK;
	case EXPR_COND_OR:
		return bad_operator(k, "OR");
	case EXPR_COND_NOT:
		return bad_operator(k, "NOT");
	case EXPR_COND_IN:
		return bad_operator(k, "IN");
	case EXPR_COND_TRUE:
		return KV_OK;
	case EXPR_COND_CMP:
		if (c->cmp == EXPR_NE)
			return bad_operator(k, "<>");
		return primitive(k, c);
	case EXPR_COND_BETWEEN:
		return primitive(k, c);
	case EXPR_COND_FUNC:
		fn = fn_word(c->fn);
		if (fn != NULL)
			return bad_operator(k, fn);
		if (c->fn == EXPR_FN_SIZE)
			return expr_errf(k->err, 0, "KeyConditionExpressions "
			    "cannot contain nested operations");
		return primitive(k, c);
	}
	return KV_OK;
}

kv_err
expr_key_conditions_max(const expr_cond *c, expr_key_cond *out, size_t max,
    size_t *n, expr_err *err)
{
	keys k = { .out = out, .max = max, .err = err };
	kv_err e;

	*n = 0;
	e = walk(&k, c);
	if (e != KV_OK)
		return e;
	if (k.n > max && max <= 2)
		return expr_errf(err, 0, "Conditions can be of length 1 or 2 "
		    "only");
	if (k.n > max) /* our words: a multi-attribute key's limit */
		return expr_errf(err, 0, "Conditions can be of length 1 to %zu "
		    "only", max);
	*n = k.n;
	return KV_OK;
}

kv_err
expr_key_conditions(const expr_cond *c, expr_key_cond out[2], size_t *n,
    expr_err *err)
{
	return expr_key_conditions_max(c, out, 2, n, err);
}
