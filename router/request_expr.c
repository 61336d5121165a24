/*
 * request_expr.c — reading a request's expression members (see
 * request_expr.h). The checks run in DynamoDB's order: the member types,
 * the shapes (a non-empty AttributesToGet, ConditionalOperator's values),
 * expression and legacy members not mixed, ConditionalOperator beside two
 * or more conditions, placeholders only with expressions, placeholder maps
 * not empty and their values valid, the legacy members translated (their
 * attribute names checked), the placeholder keys and the names they stand
 * for, then each expression parsed (update, condition, projection), then
 * unused placeholders.
 */
#include "request_expr.h"

#include <stdio.h>
#include <string.h>

#include "errors.h"
#include "json.h"
#include "request.h"

/* Members an operation may carry, by `which` flag. */
static const struct {
	unsigned flag;
	const char *expr;   /* expression member */
	const char *legacy; /* its legacy counterpart */
} members[] = {
	/* The order is DynamoDB's order in its messages. */
	{ REQ_EXPR_UPDATE, "UpdateExpression", "AttributeUpdates" },
	{ REQ_EXPR_CONDITION, "ConditionExpression", "Expected" },
	{ REQ_EXPR_PROJECTION, "ProjectionExpression", "AttributesToGet" },
	{ REQ_EXPR_FILTER, "FilterExpression", "QueryFilter" },
	{ REQ_EXPR_KEY, "KeyConditionExpression", "KeyConditions" },
};

/* The legacy member of m for this operation (Scan's filter differs). */
static const char *
legacy_name(size_t m, unsigned which)
{
	if (members[m].flag == REQ_EXPR_FILTER && (which & REQ_EXPR_SCAN))
		return "ScanFilter";
	return members[m].legacy;
}
#define N_MEMBERS (sizeof(members) / sizeof(members[0]))

static bool
invalid(reply *rep, const char *msg)
{
	errors_reply(rep, ERR_VALIDATION, "%s", msg);
	return false;
}

static bool
from_json_error(reply *rep, const json_error *e)
{
	errors_reply(rep, e->kind == JSON_ERR_SERIALIZATION ?
	    ERR_SERIALIZATION : ERR_VALIDATION, "%s", e->msg);
	return false;
}

/*
 * Appends ", ConditionalOperator" (or without the comma at the start) to
 * buf when body has one and the operation takes it; returns the new used.
 */
static size_t
add_cond_op(json_t *body, unsigned which, char *buf, size_t len,
    size_t used)
{
	json_t *j = json_object_get(body, "ConditionalOperator");
	if (!(which & (REQ_EXPR_CONDITION | REQ_EXPR_FILTER)) || j == NULL ||
	    json_is_null(j) || used >= len)
		return used;
	return used + (size_t) snprintf(buf + used, len - used, "%s%s",
	    used > 0 ? ", " : "", "ConditionalOperator");
}

/* "{A, B}" of the members present in body among `names`. */
static void
list_present(json_t *body, unsigned which, bool legacy, char *buf,
    size_t len)
{
	size_t used = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < N_MEMBERS; i++) {
		const char *m = legacy ? legacy_name(i, which) :
		    members[i].expr;
		/*
		 * ConditionalOperator is a legacy member too, listed after
		 * the filter and before KeyConditions ("QueryFilter,
		 * ConditionalOperator, KeyConditions", as DynamoDB lists
		 * them).
		 */
		if (legacy && members[i].flag == REQ_EXPR_KEY &&
		    (which & REQ_EXPR_KEY))
			used = add_cond_op(body, which, buf, len, used);
		if (!(which & members[i].flag) ||
		    json_object_get(body, m) == NULL ||
		    json_is_null(json_object_get(body, m)))
			continue;
		/* DynamoDB takes KeyConditions beside a FilterExpression or
		 * a ProjectionExpression: only with KeyConditionExpression
		 * is it a mix. */
		if (legacy && members[i].flag == REQ_EXPR_KEY &&
		    json_object_get(body, members[i].expr) == NULL)
			continue;
		used += (size_t) snprintf(buf + used, len - used, "%s%s",
		    used > 0 ? ", " : "", m);
		if (used >= len)
			break;
	}
	/* Operations without KeyConditions list it last. */
	if (legacy && !(which & REQ_EXPR_KEY))
		add_cond_op(body, which, buf, len, used);
}

static bool
read_names(api_ctx *c, json_t *names_j, expr_name **out, size_t *n,
    reply *rep)
{
	const char *key;
	json_t *val;
	size_t i = 0;
	*n = json_object_size(names_j);
	*out = arena_alloc(c->a, (*n + 1) * sizeof(expr_name));
	if (*out == NULL) {
		errors_from_kv(rep, KV_ENOMEM);
		return false;
	}
	json_object_foreach(names_j, key, val) {
		if (!json_is_string(val)) {
			errors_reply(rep, ERR_SERIALIZATION, "Unexpected value "
			    "type in payload for member "
			    "ExpressionAttributeNames");
			return false;
		}
		(*out)[i].key = key;
		(*out)[i].key_len = strlen(key);
		(*out)[i].name = json_string_value(val);
		(*out)[i].name_len = json_string_length(val);
		i++;
	}
	return true;
}

static bool
read_values(api_ctx *c, json_t *values_j, expr_value **out, size_t *n,
    reply *rep)
{
	const char *key;
	json_t *val;
	size_t i = 0;
	json_error jerr;
	*n = json_object_size(values_j);
	*out = arena_alloc(c->a, (*n + 1) * sizeof(expr_value));
	if (*out == NULL) {
		errors_from_kv(rep, KV_ENOMEM);
		return false;
	}
	/* Shapes first (SerializationException wins), then the values. */
	json_object_foreach(values_j, key, val) {
		value *v = arena_alloc(c->a, sizeof(*v));
		if (v == NULL) {
			errors_from_kv(rep, KV_ENOMEM);
			return false;
		}
		kv_err rv = json_to_value(c->a, val, 0, v, &jerr);
		if (rv == KV_EINVAL && jerr.kind == JSON_ERR_SERIALIZATION)
			return from_json_error(rep, &jerr);
		if (rv == KV_EINVAL) {
			errors_reply(rep, ERR_VALIDATION, "ExpressionAttributeValues "
			    "contains invalid value: %s for key %s", jerr.msg,
			    key);
			return false;
		}
		if (rv != KV_OK) {
			errors_from_kv(rep, rv);
			return false;
		}
		(*out)[i].key = key;
		(*out)[i].key_len = strlen(key);
		(*out)[i].val = v;
		i++;
	}
	return true;
}

/* Expected (+ ConditionalOperator) -> a condition. */
static bool
read_expected(api_ctx *c, json_t *exp_j, const char *op, expr_cond **out,
    reply *rep)
{
	size_t n = json_object_size(exp_j), i = 0;
	expr_cond **conds = arena_alloc(c->a, (n + 1) * sizeof(*conds));
	const char *attr;
	json_t *e;
	expr_err err;
	json_error jerr;

	if (conds == NULL) {
		errors_from_kv(rep, KV_ENOMEM);
		return false;
	}
	json_object_foreach(exp_j, attr, e) {
		expr_expected x;
		json_t *list, *jv, *jex;
		const char *cmp;
		memset(&x, 0, sizeof(x));
		if (!json_is_object(e))
			return errors_reply(rep, ERR_SERIALIZATION, "Expected "
			    "null"), false;
		if (!req_string(e, "ComparisonOperator", &cmp, rep) ||
		    !req_array(e, "AttributeValueList", &list, rep))
			return false;
		x.attr = attr;
		x.attr_len = strlen(attr);
		x.op = cmp;
		x.op_len = cmp != NULL ? strlen(cmp) : 0;
		jex = json_object_get(e, "Exists");
		if (jex != NULL && !json_is_null(jex)) {
			if (!json_is_boolean(jex))
				return errors_reply(rep, ERR_SERIALIZATION,
				    "Unexpected value type in payload for "
				    "member Exists"), false;
			x.has_exists = true;
			x.exists = json_is_true(jex);
		}
		jv = json_object_get(e, "Value");
		if (jv != NULL && !json_is_null(jv)) {
			value *v = arena_alloc(c->a, sizeof(*v));
			if (v == NULL)
				return errors_from_kv(rep, KV_ENOMEM), false;
			if (json_to_value(c->a, jv, 0, v, &jerr) != KV_OK)
				return from_json_error(rep, &jerr);
			x.val = v;
		}
		if (list != NULL) {
			size_t k;
			json_t *lv;
			value *vals = arena_alloc(c->a,
			    (json_array_size(list) + 1) * sizeof(value));
			if (vals == NULL)
				return errors_from_kv(rep, KV_ENOMEM), false;
			json_array_foreach(list, k, lv) {
				if (json_to_value(c->a, lv, 0, &vals[k],
				    &jerr) != KV_OK)
					return from_json_error(rep, &jerr);
			}
			x.list = vals;
			x.nlist = json_array_size(list);
			x.has_list = true;
		}
		kv_err rv = expr_legacy_expected(c->a, &x, &conds[i++], &err);
		if (rv == KV_EINVAL)
			return invalid(rep, err.msg);
		if (rv != KV_OK)
			return errors_from_kv(rep, rv), false;
		/* The name after its condition, as DynamoDB checks them. */
		if (json_check_name(attr, x.attr_len, &jerr) != KV_OK)
			return from_json_error(rep, &jerr);
	}
	*out = expr_legacy_join(c->a, conds, n,
	    op != NULL && strcmp(op, "OR") == 0);
	if (*out == NULL)
		return errors_from_kv(rep, KV_ENOMEM), false;
	return true;
}

/*
 * QueryFilter, ScanFilter or KeyConditions -> one condition: each entry is
 * {ComparisonOperator, AttributeValueList}, joined by ConditionalOperator
 * (KeyConditions always by AND).
 */
static bool
read_legacy_filter(api_ctx *c, json_t *f_j, bool or, bool key,
    expr_cond **out, reply *rep)
{
	size_t n = json_object_size(f_j), i = 0;
	expr_cond **conds = arena_alloc(c->a, (n + 1) * sizeof(*conds));
	const char *attr;
	json_t *e;
	expr_err err;
	json_error jerr;

	if (conds == NULL)
		return errors_from_kv(rep, KV_ENOMEM), false;
	json_object_foreach(f_j, attr, e) {
		const char *op;
		json_t *list, *lv;
		size_t k;
		if (!json_is_object(e))
			return errors_reply(rep, ERR_SERIALIZATION, "Expected "
			    "null"), false;
		if (!req_string(e, "ComparisonOperator", &op, rep) ||
		    !req_array(e, "AttributeValueList", &list, rep))
			return false;
		/* DynamoDB checks a filter's name before its condition, and a
		 * key condition's after it. */
		if (!key && json_check_name(attr, strlen(attr), &jerr) != KV_OK)
			return from_json_error(rep, &jerr);
		if (op == NULL)
			return invalid(rep, "1 validation error detected: Value "
			    "null at 'comparisonOperator' failed to satisfy "
			    "constraint: Member must not be null");
		/* A key condition can only use what a key range serves. */
		if (key && strcmp(op, "EQ") != 0 && strcmp(op, "LE") != 0 &&
		    strcmp(op, "LT") != 0 && strcmp(op, "GE") != 0 &&
		    strcmp(op, "GT") != 0 && strcmp(op, "BEGINS_WITH") != 0 &&
		    strcmp(op, "BETWEEN") != 0)
			return invalid(rep, "Attempted conditional constraint "
			    "is not an indexable operation");
		size_t nl = list != NULL ? json_array_size(list) : 0;
		value *vals = arena_alloc(c->a, (nl + 1) * sizeof(value));
		if (vals == NULL)
			return errors_from_kv(rep, KV_ENOMEM), false;
		if (list != NULL) {
			json_array_foreach(list, k, lv) {
				if (json_to_value(c->a, lv, 0, &vals[k],
				    &jerr) != KV_OK)
					return from_json_error(rep, &jerr);
			}
		}
		kv_err rv = expr_legacy_filter(c->a, attr, strlen(attr), op,
		    strlen(op), vals, nl, &conds[i++], &err);
		if (rv == KV_EINVAL)
			return invalid(rep, err.msg);
		if (rv != KV_OK)
			return errors_from_kv(rep, rv), false;
		if (key && json_check_name(attr, strlen(attr), &jerr) != KV_OK)
			return from_json_error(rep, &jerr);
	}
	*out = expr_legacy_join(c->a, conds, n, or);
	if (*out == NULL)
		return errors_from_kv(rep, KV_ENOMEM), false;
	return true;
}

/* AttributeUpdates -> an update. */
static bool
read_attribute_updates(api_ctx *c, json_t *au_j, expr_update **out,
    reply *rep)
{
	size_t n = json_object_size(au_j), i = 0;
	expr_legacy_update *u = arena_alloc(c->a, (n + 1) * sizeof(*u));
	const char *attr;
	json_t *e;
	expr_err err;
	json_error jerr;

	if (u == NULL)
		return errors_from_kv(rep, KV_ENOMEM), false;
	json_object_foreach(au_j, attr, e) {
		const char *action;
		if (!json_is_object(e))
			return errors_reply(rep, ERR_SERIALIZATION, "Expected "
			    "null"), false;
		if (!req_string(e, "Action", &action, rep))
			return false;
		u[i].attr = attr;
		u[i].attr_len = strlen(attr);
		u[i].action = action;
		u[i].action_len = action != NULL ? strlen(action) : 0;
		json_t *jv = json_object_get(e, "Value");
		if (jv != NULL && !json_is_null(jv)) {
			value *v = arena_alloc(c->a, sizeof(*v));
			if (v == NULL)
				return errors_from_kv(rep, KV_ENOMEM), false;
			if (json_to_value(c->a, jv, 0, v, &jerr) != KV_OK)
				return from_json_error(rep, &jerr);
			u[i].val = v;
		}
		i++;
	}
	kv_err rv = expr_legacy_updates(c->a, u, n, out, &err);
	if (rv == KV_EINVAL)
		return invalid(rep, err.msg);
	if (rv != KV_OK)
		return errors_from_kv(rep, rv), false;
	/* Names after the updates themselves, as DynamoDB checks them. */
	for (i = 0; i < n; i++)
		if (json_check_name(u[i].attr, u[i].attr_len, &jerr) != KV_OK)
			return from_json_error(rep, &jerr);
	return true;
}

static bool
read_attributes_to_get(api_ctx *c, json_t *atg, expr_projection **out,
    reply *rep)
{
	size_t n = json_array_size(atg), i;
	const char **names = arena_alloc(c->a, (n + 1) * sizeof(*names));
	size_t *lens = arena_alloc(c->a, (n + 1) * sizeof(*lens));
	json_t *e;
	json_error jerr;
	if (names == NULL || lens == NULL)
		return errors_from_kv(rep, KV_ENOMEM), false;
	json_array_foreach(atg, i, e) {
		if (!json_is_string(e))
			return errors_reply(rep, ERR_SERIALIZATION, "Unexpected "
			    "value type in payload for member AttributesToGet"),
			    false;
		names[i] = json_string_value(e);
		lens[i] = json_string_length(e);
		if (json_check_name(names[i], lens[i], &jerr) != KV_OK)
			return from_json_error(rep, &jerr);
		for (size_t k = 0; k < i; k++)
			if (lens[k] == lens[i] &&
			    memcmp(names[k], names[i], lens[i]) == 0) {
				errors_reply(rep, ERR_VALIDATION, "One or more "
				    "parameter values were invalid: Duplicate "
				    "value in attribute name: %s", names[i]);
				return false;
			}
	}
	if (expr_legacy_projection(c->a, names, lens, n, out) != KV_OK)
		return errors_from_kv(rep, KV_ENOMEM), false;
	return true;
}

/*
 * ConditionalOperator joins two or more legacy conditions: DynamoDB refuses
 * it beside no Expected, QueryFilter or ScanFilter (or an empty one; an
 * empty Expected alone is no condition) and beside only one condition.
 * The words are DynamoDB's (DAX's client checks, and a suite run against
 * DynamoDB: extenddb's legacy ConditionalOperator tests).
 */
static bool
cond_op_ok(unsigned which, json_t *exp_j, json_t *filter_j, reply *rep)
{
	size_t n = 0;
	if (which & REQ_EXPR_CONDITION)
		n += json_object_size(exp_j);
	if (which & REQ_EXPR_FILTER)
		n += json_object_size(filter_j);
	if (n == 0)
		return invalid(rep, "ConditionalOperator cannot be used without "
		    "Filter or Expected");
	if (n == 1)
		return invalid(rep, "ConditionalOperator can only be used when "
		    "Filter or Expected has two or more elements");
	return true;
}

static bool
parse_failed(kv_err rv, const expr_err *err, reply *rep)
{
	if (rv == KV_EINVAL)
		return invalid(rep, err->msg);
	errors_from_kv(rep, rv);
	return false;
}

bool
req_exprs_read(api_ctx *c, json_t *body, unsigned which, req_exprs *out,
    reply *rep)
{
	const char *texts[N_MEMBERS] = { NULL };
	json_t *names_j, *values_j, *exp_j = NULL, *au_j = NULL, *atg = NULL;
	json_t *filter_j = NULL, *keyc_j = NULL;
	const char *cond_op = NULL;
	expr_name *names = NULL;
	expr_value *values = NULL;
	size_t nnames = 0, nvalues = 0;
	char buf1[128], buf2[160];
	req_errors shape = { 0 };
	expr_err err;
	json_error jerr;
	kv_err rv;

	memset(out, 0, sizeof(*out));
	/* Member types. */
	for (size_t i = 0; i < N_MEMBERS; i++)
		if ((which & members[i].flag) &&
		    !req_string(body, members[i].expr, &texts[i], rep))
			return false;
	/*
	 * GetItem has no ExpressionAttributeValues member (its projection
	 * takes no values), so there it is ignored like any unknown member.
	 */
	values_j = NULL;
	if (!req_object(body, "ExpressionAttributeNames", &names_j, rep) ||
	    ((which & ~(unsigned) REQ_EXPR_PROJECTION) != 0 &&
	    !req_object(body, "ExpressionAttributeValues", &values_j, rep)))
		return false;
	if ((which & (REQ_EXPR_CONDITION | REQ_EXPR_FILTER)) &&
	    !req_string(body, "ConditionalOperator", &cond_op, rep))
		return false;
	if ((which & REQ_EXPR_CONDITION) &&
	    !req_object(body, "Expected", &exp_j, rep))
		return false;
	if ((which & REQ_EXPR_FILTER) && !req_object(body,
	    (which & REQ_EXPR_SCAN) ? "ScanFilter" : "QueryFilter", &filter_j,
	    rep))
		return false;
	if ((which & REQ_EXPR_KEY) &&
	    !req_object(body, "KeyConditions", &keyc_j, rep))
		return false;
	if ((which & REQ_EXPR_UPDATE) &&
	    !req_object(body, "AttributeUpdates", &au_j, rep))
		return false;
	if ((which & REQ_EXPR_PROJECTION) && !req_attributes_to_get(body,
	    "attributesToGet", &shape, &atg, rep))
		return false;
	if (cond_op != NULL && strcmp(cond_op, "AND") != 0 &&
	    strcmp(cond_op, "OR") != 0)
		req_errors_add(&shape, "Value '%s' at 'conditionalOperator' "
		    "failed to satisfy constraint: Member must satisfy enum "
		    "value set: [OR, AND]", cond_op);
	if (req_errors_reply(&shape, rep))
		return false;

	/* Expression and legacy members are not mixed. */
	list_present(body, which, false, buf1, sizeof(buf1));
	list_present(body, which, true, buf2, sizeof(buf2));
	bool any_expr = buf1[0] != '\0';
	if (any_expr && buf2[0] != '\0') {
		errors_reply(rep, ERR_VALIDATION, "Can not use both expression "
		    "and non-expression parameters in the same request: "
		    "Non-expression parameters: {%s} Expression parameters: "
		    "{%s}", buf2, buf1);
		return false;
	}
	if (cond_op != NULL && !cond_op_ok(which, exp_j, filter_j, rep))
		return false;
	if (names_j != NULL && !any_expr)
		return invalid(rep, "ExpressionAttributeNames can only be "
		    "specified when using expressions");
	if (values_j != NULL) {
		/* Only expressions that can hold values count here. */
		char nulls[128];
		size_t used = 0, count = 0;
		bool have = false;
		nulls[0] = '\0';
		for (size_t i = 0; i < N_MEMBERS; i++) {
			if (!(which & members[i].flag) ||
			    members[i].flag == REQ_EXPR_PROJECTION)
				continue;
			have |= texts[i] != NULL;
			used += (size_t) snprintf(nulls + used,
			    sizeof(nulls) - used, "%s%s",
			    count > 0 ? " and " : "", members[i].expr);
			count++;
		}
		if (count > 0 && !have) {
			errors_reply(rep, ERR_VALIDATION, "ExpressionAttributeValues "
			    "can only be specified when using expressions: %s "
			    "%s null", nulls, count > 1 ? "are" : "is");
			return false;
		}
	}
	if (names_j != NULL && json_object_size(names_j) == 0)
		return invalid(rep, "ExpressionAttributeNames must not be "
		    "empty");
	if (values_j != NULL && json_object_size(values_j) == 0)
		return invalid(rep, "ExpressionAttributeValues must not be "
		    "empty");
	if ((names_j != NULL && !read_names(c, names_j, &names, &nnames,
	    rep)) ||
	    (values_j != NULL && !read_values(c, values_j, &values,
	    &nvalues, rep)))
		return false;
	expr_ctx_init(&out->ctx, names, nnames, values, nvalues);

	/*
	 * Legacy members become trees. AttributeUpdates before Expected:
	 * DynamoDB reports a bad update first (dynalite's updateItem tests,
	 * run against DynamoDB).
	 */
	if (au_j != NULL && !read_attribute_updates(c, au_j, &out->update,
	    rep))
		return false;
	if (exp_j != NULL && !read_expected(c, exp_j, cond_op, &out->cond,
	    rep))
		return false;
	if (atg != NULL && !read_attributes_to_get(c, atg, &out->proj, rep))
		return false;
	if (filter_j != NULL && !read_legacy_filter(c, filter_j,
	    cond_op != NULL && strcmp(cond_op, "OR") == 0, false, &out->filter,
	    rep))
		return false;
	if (keyc_j != NULL && !read_legacy_filter(c, keyc_j, false, true,
	    &out->key, rep))
		return false;
	if (!any_expr)
		return true;

	if ((rv = expr_ctx_check_keys(&out->ctx, &err)) != KV_OK)
		return parse_failed(rv, &err, rep);
	/* DynamoDB checks the names' values after the keys of both maps. */
	for (size_t i = 0; i < nnames; i++)
		if (json_check_name(names[i].name, names[i].name_len, &jerr) !=
		    KV_OK) {
			errors_reply(rep, ERR_VALIDATION, "ExpressionAttributeNames "
			    "contains invalid value: %s for key %s", jerr.msg,
			    names[i].key);
			return false;
		}
	for (size_t i = 0; i < N_MEMBERS; i++) {
		const char *s = texts[i];
		if (s == NULL)
			continue;
		size_t len = strlen(s);
		switch (members[i].flag) {
		case REQ_EXPR_UPDATE:
			rv = expr_parse_update(c->a, s, len, &out->ctx,
			    &out->update, &err);
			break;
		case REQ_EXPR_CONDITION:
			rv = expr_parse_condition(c->a, EXPR_CONDITION, s, len,
			    &out->ctx, &out->cond, &err);
			break;
		case REQ_EXPR_FILTER:
			rv = expr_parse_condition(c->a, EXPR_FILTER, s, len,
			    &out->ctx, &out->filter, &err);
			break;
		case REQ_EXPR_KEY:
			rv = expr_parse_condition(c->a, EXPR_KEY_CONDITION, s,
			    len, &out->ctx, &out->key, &err);
			break;
		default:
			rv = expr_parse_projection(c->a, s, len, &out->ctx,
			    &out->proj, &err);
			break;
		}
		if (rv != KV_OK)
			return parse_failed(rv, &err, rep);
	}
	if ((rv = expr_ctx_check_unused(&out->ctx, &err)) != KV_OK)
		return parse_failed(rv, &err, rep);
	return true;
}
