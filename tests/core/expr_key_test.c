/*
 * expr_key_test.c — tests of KeyConditionExpression shapes
 * (core/expr_key.c): the conditions it returns, and DynamoDB's messages
 * for the shapes a key condition may not have (cases from dynalite's
 * query tests, checked against DynamoDB).
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "expr_test_util.h"

struct kcase {
	char expr[96];
	char values[48];
	char conds[32]; /* "a EQ b GT": what a valid expression gives */
	char want[120]; /* message, or "" when valid */
};

#define KC "Invalid condition in KeyConditionExpression: "
#define KO "Invalid operator used in KeyConditionExpression: "
#define NESTED "KeyConditionExpressions cannot contain nested operations"
#define DEEP                                                                  \
	"KeyConditionExpressions cannot have conditions on nested "           \
	"attributes"
#define TWICE                                                                 \
	"KeyConditionExpressions must only contain one condition per key"

ParameterizedTestParameters(expr_key, shapes)
{
	static struct kcase cases[] = {
		{ "a = :a", ":a=1", "a EQ", "" },
		{ ":a = a", ":a=1", "a EQ", "" },
		{ "a = :a AND b < :a", ":a=1", "a EQ b LT", "" },
		{ "a = :a AND :a < b", ":a=1", "a EQ b GT", "" },
		{ ":a <= b AND a = :a", ":a=1", "b GE a EQ", "" },
		{ ":a > b", ":a=1", "b LT", "" },
		{ ":a >= b", ":a=1", "b LE", "" },
		{ "b <= :a", ":a=1", "b LE", "" },
		{ "(a = :a) AND (b BETWEEN :a AND :b)", ":a=1;:b=2",
		    "a EQ b BETWEEN", "" },
		{ "a = :a AND begins_with(b, :s)", ":a=1;:s=\"x\"",
		    "a EQ b BEGINS_WITH", "" },
		{ "#k = :a", ":a=1", "pk EQ", "" },
		{ "a > b and size(b) > c or a > c", "", "", KO "OR" },
		{ "a in (b, size(c), d)", "", "", KO "IN" },
		{ "attribute_exists(a)", "", "", KO "attribute_exists" },
		{ "attribute_not_exists(a)", "", "",
		    KO "attribute_not_exists" },
		{ "contains(a.d, b)", "", "", KO "contains" },
		{ "attribute_type(a, :a)", ":a=\"S\"", "",
		    KO "attribute_type" },
		{ "not a > b", "", "", KO "NOT" },
		{ "a <> b", "", "", KO "<>" },
		{ ":a between size(b) and size(a) and b > :b",
		    ":a=\"1\";:b=\"1\"", "",
		    KC "BETWEEN operator must have the key attribute as its "
		       "first operand" },
		{ "begins_with(:a, b) and a > :b", ":a=\"1\";:b=\"1\"", "",
		    KC "begins_with operator must have the key attribute as "
		       "its first operand" },
		{ "size(b) > a AND a.b > b AND b > c", "", "", NESTED },
		{ "a > size(b.d)", "", "", NESTED },
		{ "a between size(b) and size(a)", "", "", NESTED },
		{ "b > a.b", "", "",
		    KC "Multiple attribute names used in one condition" },
		{ "b between c[1] and d", "", "",
		    KC "Multiple attribute names used in one condition" },
		{ "a between b and size(a)", "", "",
		    KC "Multiple attribute names used in one condition" },
		{ "begins_with(a, b)", "", "",
		    KC "Multiple attribute names used in one condition" },
		{ "b.d > a AND c.d > e.f", "", "", DEEP },
		{ "a.d > c", "", "", DEEP },
		{ "b[0] > a", "", "", DEEP },
		{ ":b > :a AND a < :b", ":a=1;:b=1", "",
		    KC "No key attribute specified" },
		{ ":a > b AND :a < :b", ":a=1;:b=1", "",
		    KC "No key attribute specified" },
		{ "b > :a AND b < :a and c = :a and d = :a", ":a=1", "",
		    TWICE },
		{ "(a > :a and b > :a) and (b > :a and c > :a)", ":a=1", "",
		    TWICE },
		{ ":a = a and b = :a and :a = c", ":a=\"a\"", "",
		    "Conditions can be of length 1 or 2 only" },
		{ "(a > :a and b > :a) and (c > :a and d > :a) and (e > :a "
		  "and f > :a)",
		    ":a=\"a\"", "",
		    "Conditions can be of length 1 or 2 only" },
	};

	return cr_make_param_array(
	    struct kcase, cases, sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct kcase *c, expr_key, shapes)
{
	expr_key_cond out[2];
	expr_cond *cond;
	expr_err err;
	char got[64], *p;
	size_t n = 9, i;
	arena a;
	kv_err e;

	arena_init(&a);
	e = expr_parse_condition(&a, EXPR_KEY_CONDITION, c->expr,
	    strlen(c->expr), ctx_make(&a, "#k=pk", c->values), &cond, &err);
	cr_assert_eq(e, KV_OK, "%s: %s", c->expr, err.msg);
	e = expr_key_conditions(cond, out, &n, &err);
	if (c->want[0] != '\0') {
		cr_expect_eq(e, KV_EINVAL, "%s", c->expr);
		cr_expect_str_eq(err.msg, c->want, "%s", c->expr);
		arena_fini(&a);
		return;
	}
	cr_assert_eq(e, KV_OK, "%s: %s", c->expr, err.msg);
	p = got;
	for (i = 0; i < n; i++) {
		static const char *const names[] = { [EXPR_KEY_EQ] = "EQ",
			[EXPR_KEY_LT] = "LT", [EXPR_KEY_LE] = "LE",
			[EXPR_KEY_GT] = "GT", [EXPR_KEY_GE] = "GE",
			[EXPR_KEY_BETWEEN] = "BETWEEN",
			[EXPR_KEY_BEGINS_WITH] = "BEGINS_WITH" };

		p += sprintf(p, "%s%.*s %s", i ? " " : "",
		    (int) out[i].attr_len, out[i].attr, names[out[i].op]);
		cr_expect_not_null(out[i].v[0]);
		if (out[i].op == EXPR_KEY_BETWEEN)
			cr_expect_not_null(out[i].v[1]);
	}
	cr_expect_str_eq(got, c->conds, "%s", c->expr);
	arena_fini(&a);
}
