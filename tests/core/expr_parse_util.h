/*
 * expr_parse_util.h — the case tables of the expression-parser tests
 * (expr_parse_test.c: conditions, filters, key conditions and limits;
 * expr_parse_update_test.c: updates and projections): a case is kind,
 * expression, ExpressionAttributeNames, ExpressionAttributeValues
 * (expr_test_util.h syntax; "@" for the STD_ ones below) and the expected
 * message ("" when the expression is valid). Header-only.
 */
#ifndef KV_EXPR_PARSE_UTIL_H
#define KV_EXPR_PARSE_UTIL_H

#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "expr_test_util.h"

struct pcase {
	char kind; /* C F K (conditions) U (update) P (projection) */
	char expr[600];
	char names[64];
	char values[300];
	char want[300];
};

struct pcase_big {
	char kind;
	char expr[4800];
	char names[64];
	char values[1200];
	char want[300];
};

/* "@" in a case stands for these. */
#define STD_NAMES "#n=n;#m=m"
#define STD_VALUES                                                            \
	":v=1;:w=2;:lo=1;:hi=5;:s=\"abc\";:t=\"S\";:n=3;:l=[1];"       \
	":ss=SS(\"a\");:ns=NS(1);:Alpha_Numeric_123=1"

/* run parses one case; err->msg is "" on success. */
static inline kv_err
run(arena *a, char kind, const char *expr, const char *names,
    const char *values, expr_err *err)
{
	expr_ctx *ctx;
	expr_cond *c;
	expr_update *u;
	expr_projection *p;
	size_t len = strlen(expr);
	kv_err e;

	if (strcmp(names, "@") == 0)
		names = STD_NAMES;
	if (strcmp(values, "@") == 0)
		values = STD_VALUES;
	ctx = ctx_make(a, names, values);

	err->msg[0] = '\0';
	switch (kind) {
	case 'C':
		e = expr_parse_condition(a, EXPR_CONDITION, expr, len, ctx, &c,
		    err);
		break;
	case 'F':
		e = expr_parse_condition(a, EXPR_FILTER, expr, len, ctx, &c,
		    err);
		break;
	case 'K':
		e = expr_parse_condition(a, EXPR_KEY_CONDITION, expr, len, ctx,
		    &c, err);
		break;
	case 'U':
		e = expr_parse_update(a, expr, len, ctx, &u, err);
		break;
	default:
		e = expr_parse_projection(a, expr, len, ctx, &p, err);
		break;
	}
	return e;
}

static inline void
check(char kind, const char *expr, const char *names, const char *values,
    const char *want)
{
	arena a;
	expr_err err;
	kv_err e;

	arena_init(&a);
	e = run(&a, kind, expr, names, values, &err);
	if (want[0] == '\0') {
		cr_expect_eq(e, KV_OK, "%c \"%.100s\": %s (%s)", kind, expr,
		    kv_err_name(e), err.msg);
	} else {
		cr_expect_eq(e, KV_EINVAL, "%c \"%.100s\": %s", kind, expr,
		    kv_err_name(e));
		cr_expect_str_eq(err.msg, want,
		    "%c \"%.100s\":\n got %s\nwant %s", kind, expr, err.msg,
		    want);
	}
	arena_fini(&a);
}

#endif
