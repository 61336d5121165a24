/*
 * expr_legacy_test.c — tests of the legacy parameters (core/expr_legacy.c):
 * Expected, QueryFilter/ScanFilter conditions, ConditionalOperator,
 * AttributeUpdates and AttributesToGet become the same trees as
 * expressions, with DynamoDB's checks and messages (dynalite's tests,
 * checked against DynamoDB) and the legacy semantics (ADD appends lists,
 * DELETE without a value removes, NOT_CONTAINS is false when missing).
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "expr_test_util.h"

static const char ITEM[] = "{n: 5, s: \"hello\", ss: SS(\"a\", \"b\"), "
			   "l: [1, \"two\"], b: b\"hi\", t: true}";

#define INV "One or more parameter values were invalid: "

/* An Expected entry: op "" = absent, exists '-' absent / 'T' / 'F',
 * val "" = absent, list "-" = absent, else a list literal. */
struct xcase {
	char attr[8];
	char op[16];
	char exists;
	char val[24];
	char list[40];
	bool want;
	char msg[240];
};

ParameterizedTestParameters(expr_legacy, expected)
{
	static struct xcase cases[] = {
		{ "n", "EQ", '-', "", "[5]", true, "" },
		{ "n", "EQ", '-', "", "[6]", false, "" },
		{ "n", "EQ", '-', "5", "-", true, "" },
		{ "x", "EQ", '-', "", "[5]", false, "" },
		{ "n", "NE", '-', "", "[5]", false, "" },
		{ "n", "NE", '-', "", "[\"5\"]", true, "" },
		{ "x", "NE", '-', "", "[5]", true, "" },
		{ "n", "LE", '-', "", "[5]", true, "" },
		{ "n", "LT", '-', "", "[5]", false, "" },
		{ "n", "GE", '-', "", "[5]", true, "" },
		{ "n", "GT", '-', "", "[4]", true, "" },
		{ "s", "GT", '-', "", "[\"a\"]", true, "" },
		{ "n", "GT", '-', "", "[\"4\"]", false, "" },
		{ "x", "NULL", '-', "", "-", true, "" },
		{ "n", "NULL", '-', "", "-", false, "" },
		{ "n", "NOT_NULL", '-', "", "[]", true, "" },
		{ "x", "NOT_NULL", '-', "", "-", false, "" },
		{ "s", "CONTAINS", '-', "", "[\"ell\"]", true, "" },
		{ "ss", "CONTAINS", '-', "", "[\"a\"]", true, "" },
		{ "l", "CONTAINS", '-', "", "[\"two\"]", true, "" },
		{ "b", "CONTAINS", '-', "", "[b\"i\"]", true, "" },
		{ "x", "CONTAINS", '-', "", "[\"a\"]", false, "" },
		{ "s", "NOT_CONTAINS", '-', "", "[\"xyz\"]", true, "" },
		{ "s", "NOT_CONTAINS", '-', "", "[\"ell\"]", false, "" },
		{ "ss", "NOT_CONTAINS", '-', "", "[\"c\"]", true, "" },
		{ "x", "NOT_CONTAINS", '-', "", "[\"a\"]", false, "" },
		{ "s", "BEGINS_WITH", '-', "", "[\"he\"]", true, "" },
		{ "s", "BEGINS_WITH", '-', "", "[\"el\"]", false, "" },
		{ "b", "BEGINS_WITH", '-', "", "[b\"h\"]", true, "" },
		{ "n", "IN", '-', "", "[1, 5]", true, "" },
		{ "n", "IN", '-', "", "[1, 2]", false, "" },
		{ "n", "BETWEEN", '-', "", "[1, 9]", true, "" },
		{ "n", "BETWEEN", '-', "", "[5, 5]", true, "" },
		{ "n", "BETWEEN", '-', "", "[6, 9]", false, "" },
		{ "n", "", '-', "5", "-", true, "" },
		{ "n", "", 'T', "5", "-", true, "" },
		{ "n", "", 'T', "6", "-", false, "" },
		{ "t", "", '-', "true", "-", true, "" },
		{ "x", "", 'F', "", "-", true, "" },
		{ "n", "", 'F', "", "-", false, "" },
		{ "n", "EQ", 'T', "", "[5]", false,
		    INV "Exists and ComparisonOperator cannot be used "
			"together for Attribute: n" },
		{ "n", "LT", '-', "5", "[5]", false,
		    INV "Value and AttributeValueList cannot be used together "
			"for Attribute: n" },
		{ "n", "", 'T', "5", "[5]", false,
		    INV "Value and AttributeValueList cannot be used together "
			"for Attribute: n" },
		{ "n", "EQ", '-', "", "-", false,
		    INV "Value or AttributeValueList must be used with "
			"ComparisonOperator: EQ for Attribute: n" },
		{ "n", "EQ", '-', "", "[]", false,
		    INV "Invalid number of argument(s) for the EQ "
			"ComparisonOperator" },
		{ "n", "EQ", '-', "", "[1, 2]", false,
		    INV "Invalid number of argument(s) for the EQ "
			"ComparisonOperator" },
		{ "n", "NULL", '-', "", "[1]", false,
		    INV "Invalid number of argument(s) for the NULL "
			"ComparisonOperator" },
		{ "n", "NULL", '-', "1", "-", false,
		    INV "Invalid number of argument(s) for the NULL "
			"ComparisonOperator" },
		{ "n", "IN", '-', "", "[]", false,
		    INV "Invalid number of argument(s) for the IN "
			"ComparisonOperator" },
		{ "n", "BETWEEN", '-', "", "[1, 10, 12]", false,
		    INV "Invalid number of argument(s) for the BETWEEN "
			"ComparisonOperator" },
		{ "n", "BETWEEN", '-', "1", "-", false,
		    INV "Invalid number of argument(s) for the BETWEEN "
			"ComparisonOperator" },
		{ "n", "IN", '-', "", "[\"b\", 1]", false,
		    INV "AttributeValues inside AttributeValueList must be of "
			"same type" },
		{ "n", "LT", '-', "", "[true]", false,
		    INV "ComparisonOperator LT is not valid for BOOL "
			"AttributeValue type" },
		{ "n", "GE", '-', "", "[SS(\"a\")]", false,
		    INV "ComparisonOperator GE is not valid for SS "
			"AttributeValue type" },
		{ "n", "IN", '-', "", "[[]]", false,
		    INV "ComparisonOperator IN is not valid for L "
			"AttributeValue type" },
		{ "n", "CONTAINS", '-', "", "[NS(1)]", false,
		    INV "ComparisonOperator CONTAINS is not valid for NS "
			"AttributeValue type" },
		{ "n", "NOT_CONTAINS", '-', "", "[{}]", false,
		    INV "ComparisonOperator NOT_CONTAINS is not valid for M "
			"AttributeValue type" },
		{ "n", "BEGINS_WITH", '-', "", "[1]", false,
		    INV "ComparisonOperator BEGINS_WITH is not valid for N "
			"AttributeValue type" },
		{ "n", "BETWEEN", '-', "", "[null, null]", false,
		    INV "ComparisonOperator BETWEEN is not valid for NULL "
			"AttributeValue type" },
		{ "n", "BETWEEN", '-', "", "[9, 1]", false,
		    "The BETWEEN condition was provided a range where the "
		    "lower bound is greater than the upper bound" },
		{ "n", "", '-', "", "[1]", false,
		    INV "AttributeValueList can only be used with a "
			"ComparisonOperator for Attribute: n" },
		{ "n", "", 'T', "", "[1]", false,
		    INV "AttributeValueList can only be used with a "
			"ComparisonOperator for Attribute: n" },
		{ "n", "", '-', "", "-", false,
		    INV "Value must be provided when Exists is null for "
			"Attribute: n" },
		{ "n", "", 'T', "", "-", false,
		    INV "Value must be provided when Exists is true for "
			"Attribute: n" },
		{ "n", "", 'F', "5", "-", false,
		    INV "Value cannot be used when Exists is false for "
			"Attribute: n" },
		{ "n", "FOO", '-', "", "[1]", false,
		    "1 validation error detected: Value 'FOO' at "
		    "'comparisonOperator' failed to satisfy constraint: "
		    "Member "
		    "must satisfy enum value set: [IN, NULL, BETWEEN, LT, "
		    "NOT_CONTAINS, EQ, GT, NOT_NULL, NE, LE, BEGINS_WITH, GE, "
		    "CONTAINS]" },
	};

	return cr_make_param_array(
	    struct xcase, cases, sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct xcase *c, expr_legacy, expected)
{
	expr_expected x = { 0 };
	expr_cond *cond;
	expr_err err;
	value item, list;
	arena a;
	kv_err e;

	arena_init(&a);
	item = V(&a, ITEM);
	x.attr = c->attr;
	x.attr_len = strlen(c->attr);
	if (c->op[0] != '\0') {
		x.op = c->op;
		x.op_len = strlen(c->op);
	}
	x.has_exists = c->exists != '-';
	x.exists = c->exists == 'T';
	if (c->val[0] != '\0')
		x.val = Vp(&a, c->val);
	if (strcmp(c->list, "-") != 0) {
		list = V(&a, c->list);
		x.has_list = true;
		x.list = list.u.elems;
		x.nlist = list.len;
	}
	e = expr_legacy_expected(&a, &x, &cond, &err);
	if (c->msg[0] != '\0') {
		cr_expect_eq(e, KV_EINVAL);
		cr_expect_str_eq(err.msg, c->msg);
	} else {
		cr_assert_eq(e, KV_OK, "%s %s: %s", c->attr, c->op, err.msg);
		cr_expect_eq(expr_eval_condition(cond, &item), c->want,
		    "%s %s %s", c->attr, c->op, c->list);
	}
	arena_fini(&a);
}

struct fcase {
	char attr[8];
	char op[16];
	char list[40];
	bool want;
	char msg[240];
};

ParameterizedTestParameters(expr_legacy, filter)
{
	static struct fcase cases[] = {
		{ "n", "EQ", "[5]", true, "" },
		{ "n", "NULL", "[]", false, "" },
		{ "x", "NULL", "[]", true, "" },
		{ "s", "BEGINS_WITH", "[\"h\"]", true, "" },
		{ "n", "BETWEEN", "[1, 4]", false, "" },
		{ "n", "IN", "[5]", true, "" },
		{ "n", "EQ", "[]", false,
		    INV "Invalid number of argument(s) for the EQ "
			"ComparisonOperator" },
		{ "n", "NOT_NULL", "[\"a\"]", false,
		    INV "Invalid number of argument(s) for the NOT_NULL "
			"ComparisonOperator" },
		{ "n", "IN", "[1, \"a\"]", false,
		    INV "AttributeValues inside AttributeValueList must be of "
			"same type" },
		{ "n", "LE", "[BS(b\"a\")]", false,
		    INV "ComparisonOperator LE is not valid for BS "
			"AttributeValue type" },
		{ "n", "BETWEEN", "[\"b\", \"a\"]", false,
		    "The BETWEEN condition was provided a range where the "
		    "lower bound is greater than the upper bound" },
	};

	return cr_make_param_array(
	    struct fcase, cases, sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct fcase *c, expr_legacy, filter)
{
	expr_cond *cond;
	expr_err err;
	value item, list;
	arena a;
	kv_err e;

	arena_init(&a);
	item = V(&a, ITEM);
	list = V(&a, c->list);
	e = expr_legacy_filter(&a, c->attr, strlen(c->attr), c->op,
	    strlen(c->op), list.u.elems, list.len, &cond, &err);
	if (c->msg[0] != '\0') {
		cr_expect_eq(e, KV_EINVAL);
		cr_expect_str_eq(err.msg, c->msg);
	} else {
		cr_assert_eq(e, KV_OK, "%s", err.msg);
		cr_expect_eq(expr_eval_condition(cond, &item), c->want);
	}
	arena_fini(&a);
}

static expr_cond *
filter(arena *a, const char *attr, const char *op, const char *list)
{
	value *l = Vp(a, list);
	expr_cond *c;
	expr_err err;

	cr_assert_eq(expr_legacy_filter(a, attr, strlen(attr), op, strlen(op),
			 l->u.elems, l->len, &c, &err),
	    KV_OK, "%s", err.msg);
	return c;
}

Test(expr_legacy, conditional_operator_joins_conditions)
{
	expr_cond *c[3];
	value item;
	arena a;

	arena_init(&a);
	item = V(&a, ITEM);
	c[0] = filter(&a, "n", "EQ", "[5]");
	c[1] = filter(&a, "s", "EQ", "[\"x\"]");
	c[2] = filter(&a, "x", "NULL", "[]");
	cr_expect(!expr_eval_condition(expr_legacy_join(&a, c, 3, false),
	    &item));
	cr_expect(expr_eval_condition(expr_legacy_join(&a, c, 3, true),
	    &item));
	cr_expect(expr_eval_condition(expr_legacy_join(&a, c, 1, false),
	    &item));
	cr_expect(!expr_eval_condition(expr_legacy_join(&a, c + 1, 1, true),
	    &item));
	cr_expect(expr_eval_condition(expr_legacy_join(&a, NULL, 0, false),
	    &item));
	cr_expect(expr_eval_condition(expr_legacy_join(&a, NULL, 0, true),
	    NULL));
	arena_fini(&a);
}

/* ---- AttributeUpdates ------------------------------------------------- */

/* One update: attr, action ("" for none), value ("" for none). */
struct lu {
	char attr[8];
	char action[8];
	char val[40];
};

struct lucase {
	char old[80];
	struct lu u[3];
	char want[240];
};

ParameterizedTestParameters(expr_legacy, updates)
{
	static struct lucase cases[] = {
		{ "{a: 1}", { { "b", "PUT", "2" } }, "{a: 1, b: 2}" },
		{ "{a: 1}", { { "a", "", "\"x\"" } }, "{a: \"x\"}" },
		{ "none", { { "b", "PUT", "2" } }, "{b: 2}" },
		{ "{a: 1}", { { "a", "ADD", "2" } }, "{a: 3}" },
		{ "{a: 1}", { { "b", "ADD", "2" } }, "{a: 1, b: 2}" },
		{ "{a: \"s\"}", { { "a", "ADD", "2" } },
		    "Type mismatch for attribute to update" },
		{ "{a: SS(\"x\")}", { { "a", "ADD", "SS(\"y\", \"x\")" } },
		    "{a: SS(\"x\", \"y\")}" },
		{ "{a: SS(\"x\")}", { { "a", "ADD", "NS(1)" } },
		    "Type mismatch for attribute to update" },
		{ "{a: NS(1)}", { { "a", "ADD", "1" } },
		    "Type mismatch for attribute to update" },
		{ "{b: [\"a\", 1]}", { { "b", "ADD", "[\"b\", 2]" } },
		    "{b: [\"a\", 1, \"b\", 2]}" },
		{ "none", { { "b", "ADD", "[\"b\"]" } }, "{b: [\"b\"]}" },
		{ "{b: \"s\"}", { { "b", "ADD", "[1]" } },
		    "Type mismatch for attribute to update" },
		{ "{a: 1, b: 2}", { { "b", "DELETE", "" } }, "{a: 1}" },
		{ "none", { { "b", "DELETE", "" } }, "{}" },
		{ "{b: NS(1, 2, 3)}", { { "b", "DELETE", "NS(1, 4)" } },
		    "{b: NS(2, 3)}" },
		{ "{b: NS(1, 2, 3)}", { { "b", "DELETE", "NS(2, 3, 1)" } },
		    "{}" },
		{ "{b: SS(\"1\")}", { { "b", "DELETE", "NS(1)" } },
		    "Type mismatch for attribute to update" },
		{ "{c: 1}", { { "c", "DELETE", "NS(1)" } },
		    "Type mismatch for attribute to update" },
		{ "{a: 1}",
		    { { "b", "PUT", "1" }, { "a", "DELETE", "" },
			{ "c", "ADD", "SS(\"a\")" } },
		    "{b: 1, c: SS(\"a\")}" },
		{ "{a: 1}", { { "b", "PUT", "" } },
		    INV "Only DELETE action is allowed when no attribute "
			"value is specified" },
		{ "{a: 1}", { { "b", "ADD", "" } },
		    INV "Only DELETE action is allowed when no attribute "
			"value is specified" },
		{ "{a: 1}", { { "b", "", "" } },
		    INV "Only DELETE action is allowed when no attribute "
			"value is specified" },
		{ "{a: 1}", { { "b", "DELETE", "\"s\"" } },
		    INV "DELETE action with value is not supported for the "
			"type S" },
		{ "{a: 1}", { { "b", "DELETE", "[1]" } },
		    INV "DELETE action with value is not supported for the "
			"type L" },
		{ "{a: 1}", { { "b", "ADD", "\"s\"" } },
		    INV "ADD action is not supported for the type S" },
		{ "{a: 1}", { { "b", "ADD", "true" } },
		    INV "ADD action is not supported for the type BOOL" },
		{ "{a: 1}", { { "b", "ADD", "{}" } },
		    INV "ADD action is not supported for the type M" },
		{ "{a: 1}", { { "b", "FOO", "1" } },
		    "1 validation error detected: Value 'FOO' at "
		    "'attributeUpdates.b.member.action' failed to satisfy "
		    "constraint: Member must satisfy enum value set: [ADD, "
		    "PUT, DELETE]" },
	};

	return cr_make_param_array(
	    struct lucase, cases, sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct lucase *c, expr_legacy, updates)
{
	expr_legacy_update lu[3];
	value old, *oldp = NULL, got;
	expr_update *u;
	expr_err err;
	size_t n = 0;
	arena a;
	kv_err e;

	arena_init(&a);
	memset(lu, 0, sizeof(lu));
	if (strcmp(c->old, "none") != 0) {
		old = V(&a, c->old);
		oldp = &old;
	}
	for (n = 0; n < 3 && c->u[n].attr[0] != '\0'; n++) {
		lu[n].attr = c->u[n].attr;
		lu[n].attr_len = strlen(c->u[n].attr);
		if (c->u[n].action[0] != '\0') {
			lu[n].action = c->u[n].action;
			lu[n].action_len = strlen(c->u[n].action);
		}
		if (c->u[n].val[0] != '\0')
			lu[n].val = Vp(&a, c->u[n].val);
	}
	e = expr_legacy_updates(&a, lu, n, &u, &err);
	if (e == KV_OK)
		e = expr_apply_update(&a, u, oldp, &got, &err);
	if (c->want[0] == '{') {
		value want = V(&a, c->want);

		cr_assert_eq(e, KV_OK, "%s", err.msg);
		cr_expect(value_equal(&got, &want), "got %s want %s",
		    vstr(&a, &got), c->want);
	} else {
		cr_expect_eq(e, KV_EINVAL);
		cr_expect_str_eq(err.msg, c->want);
	}
	arena_fini(&a);
}

Test(expr_legacy, empty_attribute_updates_change_nothing)
{
	expr_update *u;
	expr_err err;
	value old, got;
	arena a;

	arena_init(&a);
	old = V(&a, ITEM);
	cr_assert_eq(expr_legacy_updates(&a, NULL, 0, &u, &err), KV_OK);
	cr_assert_eq(expr_apply_update(&a, u, &old, &got, &err), KV_OK);
	cr_expect(value_equal(&old, &got));
	cr_assert_eq(expr_apply_update(&a, u, NULL, &got, &err), KV_OK);
	cr_expect_eq(got.type, VAL_M);
	cr_expect_eq(got.len, 0);
	arena_fini(&a);
}

Test(expr_legacy, attributes_to_get_projects_top_level_names)
{
	const char *names[] = { "s", "x", "a.b" };
	size_t lens[] = { 1, 1, 3 };
	expr_projection *p;
	value item, got, want;
	arena a;

	arena_init(&a);
	item = V(&a, "{s: 1, t: 2, a: {b: 3}, \"a.b\": 4}");
	cr_assert_eq(expr_legacy_projection(&a, names, lens, 3, &p), KV_OK);
	cr_assert_eq(expr_project(&a, &item, p, &got), KV_OK);
	want = V(&a, "{s: 1, \"a.b\": 4}");
	cr_expect(value_equal(&got, &want), "%s", vstr(&a, &got));
	arena_fini(&a);
}

Test(expr_legacy, path_top_builds_one_element)
{
	expr_path p;
	arena a;

	arena_init(&a);
	cr_assert_eq(expr_path_top(&a, "abc", 3, &p), KV_OK);
	cr_expect_eq(p.n, 1);
	cr_expect_eq(p.elems[0].name_len, 3);
	cr_expect_eq(memcmp(p.elems[0].name, "abc", 3), 0);
	arena_fini(&a);
}
