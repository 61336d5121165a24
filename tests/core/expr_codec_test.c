/*
 * expr_codec_test.c — condition and update trees survive the trip to
 * bytes and back (core/expr_codec.c) and evaluate the same afterwards;
 * corrupt bytes are refused without a crash.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "expr_codec.h"
#include "expr_test_util.h"

static const char NAMES[] = "#a=a;#s=status;#n=n.x";
static const char VALUES[] = ":v=5;:w=\"x\";:l=[1, 2];:s=SS(\"a\", \"b\");"
    ":t=\"S\";:one=1;:b=b\"\\x00\\xff\"";

static const char *const conditions[] = {
	"a = :v",
	"#a <> :v AND b < :w OR NOT (c >= :v)",
	"a BETWEEN :one AND :v",
	"a IN (:v, :w, :one)",
	"attribute_exists(#s) AND attribute_not_exists(m.n[2].o)",
	"attribute_type(a, :t)",
	"begins_with(s, :w) OR contains(l, :one) OR contains(ss, :w)",
	"size(l) > :one",
	"#n.y[0] = :b",
	/* Values where DynamoDB takes a path or a value: the literal's
	 * size and type (a decoder that wanted paths made these 500s). */
	"size(:w) = :one AND size(:l) BETWEEN :one AND :v",
	"attribute_type(:w, :t) AND NOT attribute_type(:v, :t)",
	"size(:s) IN (:one, :v) OR begins_with(:w, :w) OR contains(:l, :one)",
	":v = :v AND size(:w) < size(s)",
	"attribute_type(size(l), :t) OR contains(:l, size(s))",
};

static const char *const updates[] = {
	"SET a = :v",
	"SET a = a + :one, b = if_not_exists(b, :v) - :one",
	"SET l = list_append(l, :l) REMOVE m.n, x[1]",
	"ADD c :one, ss :s DELETE tt :s",
	"SET #n.y = :w",
};

static const char ITEM[] = "{a: 5, b: \"y\", c: 7, s: \"xyz\", l: [1, 2, 3],"
    " ss: SS(\"x\", \"a\"), tt: SS(\"a\", \"q\"), m: {n: [0, 1, {o: 1}]},"
    " \"n.x\": {y: [b\"\\x00\\xff\"]}, x: [1, 2, 3], status: true}";

/* Encodes c, decodes it and encodes again: the bytes must agree. */
static expr_cond *
round_trip_cond(arena *a, const expr_cond *c)
{
	uint8_t *b1, *b2;
	size_t l1, l2;
	expr_cond *back;
	cr_assert_eq(expr_codec_encode_cond(c, &b1, &l1), KV_OK);
	cr_assert_eq(expr_codec_decode_cond(a, b1, l1, &back), KV_OK);
	cr_assert_eq(expr_codec_encode_cond(back, &b2, &l2), KV_OK);
	cr_assert_eq(l1, l2);
	cr_assert_arr_eq(b1, b2, l1);
	free(b2);
	/* The decoded tree points into b1: keep it alive with the arena. */
	uint8_t *keep = arena_alloc(a, l1);
	memcpy(keep, b1, l1);
	free(b1);
	cr_assert_eq(expr_codec_decode_cond(a, keep, l1, &back), KV_OK);
	return back;
}

Test(expr_codec, conditions_round_trip_and_evaluate_alike)
{
	for (size_t i = 0; i < sizeof(conditions) / sizeof(*conditions); i++) {
		arena a;
		arena_init(&a);
		expr_ctx *ctx = ctx_make(&a, NAMES, VALUES);
		expr_cond *c;
		expr_err err;
		cr_assert_eq(expr_parse_condition(&a, EXPR_CONDITION,
		    conditions[i], strlen(conditions[i]), ctx, &c, &err), KV_OK,
		    "%s: %s", conditions[i], err.msg);
		expr_cond *back = round_trip_cond(&a, c);
		value item = V(&a, ITEM);
		cr_assert_eq(expr_eval_condition(c, &item),
		    expr_eval_condition(back, &item), "%s", conditions[i]);
		cr_assert_eq(expr_eval_condition(c, NULL),
		    expr_eval_condition(back, NULL), "%s", conditions[i]);
		arena_fini(&a);
	}
}

Test(expr_codec, updates_round_trip_and_apply_alike)
{
	for (size_t i = 0; i < sizeof(updates) / sizeof(*updates); i++) {
		arena a;
		arena_init(&a);
		expr_ctx *ctx = ctx_make(&a, NAMES, VALUES);
		expr_update *u, *back;
		expr_err err, err2;
		uint8_t *buf;
		size_t len;
		cr_assert_eq(expr_parse_update(&a, updates[i],
		    strlen(updates[i]), ctx, &u, &err), KV_OK, "%s: %s",
		    updates[i], err.msg);
		cr_assert_eq(expr_codec_encode_update(u, &buf, &len), KV_OK);
		uint8_t *keep = arena_alloc(&a, len);
		memcpy(keep, buf, len);
		free(buf);
		cr_assert_eq(expr_codec_decode_update(&a, keep, len, &back),
		    KV_OK, "%s", updates[i]);
		value item = V(&a, ITEM), r1, r2;
		kv_err e1 = expr_apply_update(&a, u, &item, &r1, &err);
		kv_err e2 = expr_apply_update(&a, back, &item, &r2, &err2);
		cr_assert_eq(e1, e2, "%s", updates[i]);
		if (e1 == KV_OK)
			cr_assert(value_equal(&r1, &r2), "%s: %s vs %s",
			    updates[i], vstr(&a, &r1), vstr(&a, &r2));
		else
			cr_assert_str_eq(err.msg, err2.msg);
		arena_fini(&a);
	}
}

Test(expr_codec, legacy_update_flag_survives)
{
	arena a;
	arena_init(&a);
	expr_legacy_update lu = { .attr = "a", .attr_len = 1,
		.action = "DELETE", .action_len = 6 };
	expr_update *u, *back;
	expr_err err;
	uint8_t *buf;
	size_t len;
	cr_assert_eq(expr_legacy_updates(&a, &lu, 1, &u, &err), KV_OK,
	    "%s", err.msg);
	cr_assert_eq(expr_codec_encode_update(u, &buf, &len), KV_OK);
	cr_assert_eq(expr_codec_decode_update(&a, buf, len, &back), KV_OK);
	cr_assert(back->legacy);
	cr_assert_eq(back->n, 1);
	cr_assert_eq(back->actions[0].kind, u->actions[0].kind);
	free(buf);
	arena_fini(&a);
}

/* Every truncation and many byte flips: refused or decoded, no crash. */
Test(expr_codec, corrupt_bytes_are_refused_without_crashing)
{
	arena a;
	arena_init(&a);
	expr_ctx *ctx = ctx_make(&a, NAMES, VALUES);
	expr_cond *c;
	expr_update *u;
	expr_err err;
	uint8_t *cb, *ub;
	size_t cl, ul;
	const char *ce = conditions[1], *ue = updates[2];
	cr_assert_eq(expr_parse_condition(&a, EXPR_CONDITION, ce, strlen(ce),
	    ctx, &c, &err), KV_OK);
	cr_assert_eq(expr_parse_update(&a, ue, strlen(ue), ctx, &u, &err),
	    KV_OK);
	cr_assert_eq(expr_codec_encode_cond(c, &cb, &cl), KV_OK);
	cr_assert_eq(expr_codec_encode_update(u, &ub, &ul), KV_OK);
	for (size_t n = 0; n < cl; n++) {
		arena t;
		arena_init(&t);
		uint8_t *copy = malloc(n + 1);
		memcpy(copy, cb, n);
		expr_cond *out;
		cr_assert_eq(expr_codec_decode_cond(&t, copy, n, &out),
		    KV_CORRUPT, "truncated to %zu", n);
		free(copy);
		arena_fini(&t);
	}
	for (size_t n = 0; n < ul; n++) {
		arena t;
		arena_init(&t);
		uint8_t *copy = malloc(n + 1);
		memcpy(copy, ub, n);
		expr_update *out;
		cr_assert_eq(expr_codec_decode_update(&t, copy, n, &out),
		    KV_CORRUPT, "truncated to %zu", n);
		free(copy);
		arena_fini(&t);
	}
	uint64_t x = 0x9E3779B97F4A7C15ull;
	value item = V(&a, ITEM);
	for (int k = 0; k < 20000; k++) {
		arena t;
		arena_init(&t);
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		bool cond = k & 1;
		size_t len = cond ? cl : ul;
		uint8_t *copy = malloc(len);
		memcpy(copy, cond ? cb : ub, len);
		copy[x % len] ^= (uint8_t) (1u << ((x >> 32) % 8));
		if (cond) {
			expr_cond *out;
			if (expr_codec_decode_cond(&t, copy, len, &out) == KV_OK)
				(void) expr_eval_condition(out, &item);
		} else {
			expr_update *out;
			value r;
			if (expr_codec_decode_update(&t, copy, len, &out) ==
			    KV_OK)
				(void) expr_apply_update(&t, out, &item, &r,
				    &err);
		}
		free(copy);
		arena_fini(&t);
	}
	free(cb);
	free(ub);
	arena_fini(&a);
}

Test(expr_codec, trailing_bytes_are_refused)
{
	arena a;
	arena_init(&a);
	expr_ctx *ctx = ctx_make(&a, NAMES, VALUES);
	expr_cond *c, *out;
	expr_err err;
	uint8_t *b;
	size_t l;
	cr_assert_eq(expr_parse_condition(&a, EXPR_CONDITION, "a = :v", 6, ctx,
	    &c, &err), KV_OK);
	cr_assert_eq(expr_codec_encode_cond(c, &b, &l), KV_OK);
	uint8_t *more = malloc(l + 1);
	memcpy(more, b, l);
	more[l] = 0;
	cr_assert_eq(expr_codec_decode_cond(&a, more, l + 1, &out),
	    KV_CORRUPT);
	free(more);
	free(b);
	arena_fini(&a);
}
