/*
 * expr_project_test.c — tests of projection (core/expr_eval.c,
 * expr_project) and of ReturnValues built from it: nested paths give
 * nested maps and packed lists as DynamoDB returns them, missing paths
 * are skipped, and UPDATED_OLD / UPDATED_NEW are the old and new items
 * projected on the paths an update writes (expr_update_paths).
 * Cases follow Alternator's test_projection_expression.py and dynalite's
 * updateItem tests, both checked against DynamoDB.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "expr_test_util.h"

struct prcase {
	char item[128];
	char expr[64];
	char names[32];
	char want[128];
};

ParameterizedTestParameters(expr_project, table)
{
	static struct prcase cases[] = {
		{ "{p: \"k\", a: {b: [2, 4, {x: \"hi\", y: \"yo\"}], c:"
		    " 5}, b: \"hello\", \"a.b\": \"dot\", n: null}", "a",
		    "#n=a;#name=a.b;#c=c",
		    "{a: {b: [2, 4, {x: \"hi\", y: \"yo\"}], c: 5}}" },
		{ "{p: \"k\", a: {b: [2, 4, {x: \"hi\", y: \"yo\"}], c:"
		    " 5}, b: \"hello\", \"a.b\": \"dot\", n: null}", "a.b",
		    "#n=a;#name=a.b;#c=c",
		    "{a: {b: [2, 4, {x: \"hi\", y: \"yo\"}]}}" },
		{ "{p: \"k\", a: {b: [2, 4, {x: \"hi\", y: \"yo\"}], c:"
		    " 5}, b: \"hello\", \"a.b\": \"dot\", n: null}", "a.b[0]",
		    "#n=a;#name=a.b;#c=c", "{a: {b: [2]}}" },
		{ "{p: \"k\", a: {b: [2, 4, {x: \"hi\", y: \"yo\"}], c:"
		    " 5}, b: \"hello\", \"a.b\": \"dot\", n: null}", "a.b[2]",
		    "#n=a;#name=a.b;#c=c",
		    "{a: {b: [{x: \"hi\", y: \"yo\"}]}}" },
		{ "{p: \"k\", a: {b: [2, 4, {x: \"hi\", y: \"yo\"}], c:"
		    " 5}, b: \"hello\", \"a.b\": \"dot\", n: null}",
		    "a.b[2].y", "#n=a;#name=a.b;#c=c",
		    "{a: {b: [{y: \"yo\"}]}}" },
		{ "{p: \"k\", a: {b: [2, 4, {x: \"hi\", y: \"yo\"}], c:"
		    " 5}, b: \"hello\", \"a.b\": \"dot\", n: null}", "x",
		    "#n=a;#name=a.b;#c=c", "{}" },
		{ "{p: \"k\", a: {b: [2, 4, {x: \"hi\", y: \"yo\"}], c:"
		    " 5}, b: \"hello\", \"a.b\": \"dot\", n: null}", "a.b[3]",
		    "#n=a;#name=a.b;#c=c", "{}" },
		{ "{p: \"k\", a: {b: [2, 4, {x: \"hi\", y: \"yo\"}], c:"
		    " 5}, b: \"hello\", \"a.b\": \"dot\", n: null}", "a.x",
		    "#n=a;#name=a.b;#c=c", "{}" },
		{ "{p: \"k\", a: {b: [2, 4, {x: \"hi\", y: \"yo\"}], c:"
		    " 5}, b: \"hello\", \"a.b\": \"dot\", n: null}", "a.x.y",
		    "#n=a;#name=a.b;#c=c", "{}" },
		{ "{p: \"k\", a: {b: [2, 4, {x: \"hi\", y: \"yo\"}], c:"
		    " 5}, b: \"hello\", \"a.b\": \"dot\", n: null}",
		    "a.b[3].x", "#n=a;#name=a.b;#c=c", "{}" },
		{ "{p: \"k\", a: {b: [2, 4, {x: \"hi\", y: \"yo\"}], c:"
		    " 5}, b: \"hello\", \"a.b\": \"dot\", n: null}", "a.b.x",
		    "#n=a;#name=a.b;#c=c", "{}" },
		{ "{p: \"k\", a: {b: [2, 4, {x: \"hi\", y: \"yo\"}], c:"
		    " 5}, b: \"hello\", \"a.b\": \"dot\", n: null}", "a[0]",
		    "#n=a;#name=a.b;#c=c", "{}" },
		{ "{p: \"k\", a: {b: [2, 4, {x: \"hi\", y: \"yo\"}], c:"
		    " 5}, b: \"hello\", \"a.b\": \"dot\", n: null}",
		    "a.b[0].x", "#n=a;#name=a.b;#c=c", "{}" },
		{ "{p: \"k\", a: {b: [2, 4, {x: \"hi\", y: \"yo\"}], c:"
		    " 5}, b: \"hello\", \"a.b\": \"dot\", n: null}",
		    "a.b[0][0]", "#n=a;#name=a.b;#c=c", "{}" },
		{ "{p: \"k\", a: {b: [2, 4, {x: \"hi\", y: \"yo\"}], c:"
		    " 5}, b: \"hello\", \"a.b\": \"dot\", n: null}", "b.x",
		    "#n=a;#name=a.b;#c=c", "{}" },
		{ "{p: \"k\", a: {b: [2, 4, {x: \"hi\", y: \"yo\"}], c:"
		    " 5}, b: \"hello\", \"a.b\": \"dot\", n: null}", "b[0]",
		    "#n=a;#name=a.b;#c=c", "{}" },
		{ "{p: \"k\", a: {b: [2, 4, {x: \"hi\", y: \"yo\"}], c:"
		    " 5}, b: \"hello\", \"a.b\": \"dot\", n: null}", "n.x",
		    "#n=a;#name=a.b;#c=c", "{}" },
		{ "{p: \"k\", a: {b: [2, 4, {x: \"hi\", y: \"yo\"}], c:"
		    " 5}, b: \"hello\", \"a.b\": \"dot\", n: null}",
		    "a.b[0],a.b[1]", "#n=a;#name=a.b;#c=c",
		    "{a: {b: [2, 4]}}" },
		{ "{p: \"k\", a: {b: [2, 4, {x: \"hi\", y: \"yo\"}], c:"
		    " 5}, b: \"hello\", \"a.b\": \"dot\", n: null}",
		    "a.b[1],a.b[0]", "#n=a;#name=a.b;#c=c",
		    "{a: {b: [2, 4]}}" },
		{ "{p: \"k\", a: {b: [2, 4, {x: \"hi\", y: \"yo\"}], c:"
		    " 5}, b: \"hello\", \"a.b\": \"dot\", n: null}",
		    "a.b[2], a.b[0]", "#n=a;#name=a.b;#c=c",
		    "{a: {b: [2, {x: \"hi\", y: \"yo\"}]}}" },
		{ "{p: \"k\", a: {b: [2, 4, {x: \"hi\", y: \"yo\"}], c:"
		    " 5}, b: \"hello\", \"a.b\": \"dot\", n: null}",
		    "a.b[0],a.c", "#n=a;#name=a.b;#c=c",
		    "{a: {b: [2], c: 5}}" },
		{ "{p: \"k\", a: {b: [2, 4, {x: \"hi\", y: \"yo\"}], c:"
		    " 5}, b: \"hello\", \"a.b\": \"dot\", n: null}", "a.c,b",
		    "#n=a;#name=a.b;#c=c", "{a: {c: 5}, b: \"hello\"}" },
		{ "{p: \"k\", a: {b: [2, 4, {x: \"hi\", y: \"yo\"}], c:"
		    " 5}, b: \"hello\", \"a.b\": \"dot\", n: null}",
		    "a.x, a.b[0], x, a.b[3].x", "#n=a;#name=a.b;#c=c",
		    "{a: {b: [2]}}" },
		{ "{p: \"k\", a: {b: [2, 4, {x: \"hi\", y: \"yo\"}], c:"
		    " 5}, b: \"hello\", \"a.b\": \"dot\", n: null}",
		    "a.b[2].x, a.b[2].y", "#n=a;#name=a.b;#c=c",
		    "{a: {b: [{x: \"hi\", y: \"yo\"}]}}" },
		{ "{p: \"k\", a: {b: [2, 4, {x: \"hi\", y: \"yo\"}], c:"
		    " 5}, b: \"hello\", \"a.b\": \"dot\", n: null}",
		    "a.b[2].x, a.b[2].z", "#n=a;#name=a.b;#c=c",
		    "{a: {b: [{x: \"hi\"}]}}" },
		{ "{p: \"k\", a: {b: [2, 4, {x: \"hi\", y: \"yo\"}], c:"
		    " 5}, b: \"hello\", \"a.b\": \"dot\", n: null}",
		    "a.b[1], a.b[2].y, a.b[9]", "#n=a;#name=a.b;#c=c",
		    "{a: {b: [4, {y: \"yo\"}]}}" },
		{ "{p: \"k\", a: {b: [2, 4, {x: \"hi\", y: \"yo\"}], c:"
		    " 5}, b: \"hello\", \"a.b\": \"dot\", n: null}", "p",
		    "#n=a;#name=a.b;#c=c", "{p: \"k\"}" },
		{ "{p: \"k\", a: {b: [2, 4, {x: \"hi\", y: \"yo\"}], c:"
		    " 5}, b: \"hello\", \"a.b\": \"dot\", n: null}", "p, b",
		    "#n=a;#name=a.b;#c=c", "{p: \"k\", b: \"hello\"}" },
		{ "{p: \"k\", a: {b: [2, 4, {x: \"hi\", y: \"yo\"}], c:"
		    " 5}, b: \"hello\", \"a.b\": \"dot\", n: null}", "n",
		    "#n=a;#name=a.b;#c=c", "{n: null}" },
		{ "{p: \"k\", a: {b: [2, 4, {x: \"hi\", y: \"yo\"}], c:"
		    " 5}, b: \"hello\", \"a.b\": \"dot\", n: null}", "#n.b[0]",
		    "#n=a;#name=a.b;#c=c", "{a: {b: [2]}}" },
		{ "{p: \"k\", a: {b: [2, 4, {x: \"hi\", y: \"yo\"}], c:"
		    " 5}, b: \"hello\", \"a.b\": \"dot\", n: null}", "#n.#c",
		    "#n=a;#name=a.b;#c=c", "{a: {c: 5}}" },
		{ "{p: \"k\", a: {b: [2, 4, {x: \"hi\", y: \"yo\"}], c:"
		    " 5}, b: \"hello\", \"a.b\": \"dot\", n: null}", "#name",
		    "#n=a;#name=a.b;#c=c", "{\"a.b\": \"dot\"}" },
		{ "{p: \"k\", a: {b: [2, 4, {x: \"hi\", y: \"yo\"}], c:"
		    " 5}, b: \"hello\", \"a.b\": \"dot\", n: null}",
		    "#name, a.b[1]", "#n=a;#name=a.b;#c=c",
		    "{\"a.b\": \"dot\", a: {b: [4]}}" },
		{ "{p: \"k\", a: {b: [2, 4, {x: \"hi\", y: \"yo\"}], c:"
		    " 5}, b: \"hello\", \"a.b\": \"dot\", n: null}",
		    "p, a, b, n, #name", "#n=a;#name=a.b;#c=c",
		    "{p: \"k\", a: {b: [2, 4, {x: \"hi\", y: \"yo\"}], c:"
		    " 5}, b: \"hello\", \"a.b\": \"dot\", n: null}" },
		{ "{a: [1]}", "a.c", "#n=a;#name=a.b;#c=c", "{}" },
		{ "{a: [1]}", "a[0]", "#n=a;#name=a.b;#c=c", "{a: [1]}" },
		{ "{a: [{b: [0, {c: 1, d: 2}], e: 3}]}", "a[0].b[1].c",
		    "#n=a;#name=a.b;#c=c", "{a: [{b: [{c: 1}]}]}" },
		{ "{l: [0, 1, 2, 3, 4, 5]}", "l[0], l[2], l[4]",
		    "#n=a;#name=a.b;#c=c", "{l: [0, 2, 4]}" },
		{ "{l: [0, 1, 2, 3, 4, 5]}", "l[5], l[0]",
		    "#n=a;#name=a.b;#c=c", "{l: [0, 5]}" },
		{ "{m: {a: [], b: {}, c: 1}}", "m.a, m.b",
		    "#n=a;#name=a.b;#c=c", "{m: {a: [], b: {}}}" },
		{ "{}", "x", "#n=a;#name=a.b;#c=c", "{}" },
	};

	return cr_make_param_array(
	    struct prcase, cases, sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct prcase *c, expr_project, table)
{
	expr_projection *p;
	value item, got, want, again;
	expr_ctx *ctx;
	expr_err err;
	arena a;

	arena_init(&a);
	item = V(&a, c->item);
	want = V(&a, c->want);
	ctx = ctx_make(&a, c->names, "");
	cr_assert_eq(expr_parse_projection(&a, c->expr, strlen(c->expr), ctx,
			 &p, &err),
	    KV_OK, "\"%s\": %s", c->expr, err.msg);
	cr_assert_eq(expr_project(&a, &item, p, &got), KV_OK);
	cr_expect_eq(got.type, VAL_M);
	cr_expect(value_equal(&got, &want), "\"%s\":\n got %s\nwant %s",
	    c->expr, vstr(&a, &got), c->want);
	again = V(&a, c->item);
	cr_expect(value_equal(&item, &again), "projection changed the item");
	arena_fini(&a);
}

/* ---- ReturnValues ----------------------------------------------------- */

struct rvcase {
	char old[96];
	char expr[160];
	char values[64];
	char updated_old[96];
	char updated_new[96];
};

ParameterizedTestParameters(expr_project, return_values)
{
	static struct rvcase cases[] = {
		{ "{a: \"x\", b: {a: 1, b: 2, c: 3}, c: [1, 3]}",
		    "set b.c=((c[1])+(b.a)),b.a = a,c[1] = a, c[4] = b.a - "
		    "b.b, c[2] = b.c add c[8] :b, c[6] :a",
		    ":a=2;:b=SS(\"a\")", "{b: {c: 3, a: 1}, c: [3]}",
		    "{b: {a: \"x\", c: 4}, c: [\"x\", 3, 2]}" },
		{ "{a: \"k\", b: \"a\", c: \"a\"}", "set b=:b,c=:c",
		    ":b=\"b\";:c=\"a\"", "{b: \"a\", c: \"a\"}",
		    "{b: \"b\", c: \"a\"}" },
		{ "{a: \"k\", b: \"a\", c: \"a\"}", "REMOVE b SET d = :d",
		    ":d=1", "{b: \"a\"}", "{d: 1}" },
		{ "{a: \"k\", b: NS(1, 2, 3)}", "DELETE b :b",
		    ":b=NS(1, 2, 3)",
		    "{b: NS(1, 2, 3)}", "{}" },
		{ "{a: \"k\", b: 1}", "ADD b :b, c :b", ":b=3", "{b: 1}",
		    "{b: 4, c: 3}" },
		{ "{a: \"k\", l: [1, 2, 3]}", "REMOVE l[0] SET l[2] = :v",
		    ":v=9", "{l: [1, 3]}", "{l: [2]}" },
	};

	return cr_make_param_array(
	    struct rvcase, cases, sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct rvcase *c, expr_project, return_values)
{
	value old, neu, got, want;
	expr_projection paths;
	expr_update *u;
	expr_err err;
	arena a;

	arena_init(&a);
	old = V(&a, c->old);
	cr_assert_eq(expr_parse_update(&a, c->expr, strlen(c->expr),
			 ctx_make(&a, "", c->values), &u, &err),
	    KV_OK, "%s", err.msg);
	cr_assert_eq(expr_apply_update(&a, u, &old, &neu, &err), KV_OK, "%s",
	    err.msg);
	cr_assert_eq(expr_update_paths(&a, u, &paths), KV_OK);
	cr_assert_eq(paths.n, u->n);
	cr_assert_eq(expr_project(&a, &old, &paths, &got), KV_OK);
	want = V(&a, c->updated_old);
	cr_expect(value_equal(&got, &want), "UPDATED_OLD of \"%s\": %s",
	    c->expr, vstr(&a, &got));
	cr_assert_eq(expr_project(&a, &neu, &paths, &got), KV_OK);
	want = V(&a, c->updated_new);
	cr_expect(value_equal(&got, &want), "UPDATED_NEW of \"%s\": %s",
	    c->expr, vstr(&a, &got));
	arena_fini(&a);
}

Test(expr_project, update_paths_name_the_written_attributes)
{
	expr_projection paths;
	expr_update *u;
	expr_err err;
	arena a;
	const char *e = "SET a.b = :v, #k = :v REMOVE c[1] ADD d :v "
			"DELETE e.f :s";

	arena_init(&a);
	cr_assert_eq(expr_parse_update(&a, e, strlen(e),
			 ctx_make(&a, "#k=pk", ":v=1;:s=SS(\"x\")"), &u, &err),
	    KV_OK, "%s", err.msg);
	cr_assert_eq(expr_update_paths(&a, u, &paths), KV_OK);
	cr_assert_eq(paths.n, 5);
	cr_expect_eq(paths.paths[0].n, 2);
	cr_expect_eq(memcmp(paths.paths[1].elems[0].name, "pk", 2), 0);
	cr_expect_eq(paths.paths[1].elems[0].name_len, 2);
	cr_expect_eq(paths.paths[2].elems[1].name, NULL);
	cr_expect_eq(paths.paths[2].elems[1].index, 1);
	cr_expect_eq(memcmp(paths.paths[4].elems[0].name, "e", 1), 0);
	arena_fini(&a);
}

Test(expr_project, path_get_walks_maps_and_lists)
{
	expr_projection *p;
	expr_err err;
	value item;
	arena a;
	const value *v;

	arena_init(&a);
	item = V(&a, "{a: {b: [1, {c: \"x\"}]}}");
	cr_assert_eq(expr_parse_projection(&a, "a.b[1].c, a.b[2], a.c[0]", 24,
			 ctx_make(&a, "", ""), &p, &err),
	    KV_OK);
	v = expr_path_get(&item, &p->paths[0]);
	cr_assert_not_null(v);
	cr_expect_eq(v->type, VAL_S);
	cr_expect_null(expr_path_get(&item, &p->paths[1]));
	cr_expect_null(expr_path_get(&item, &p->paths[2]));
	arena_fini(&a);
}
