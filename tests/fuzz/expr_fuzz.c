/*
 * expr_fuzz.c — libFuzzer target for the expression library (core/expr*.c).
 *
 * The first byte picks what the rest is: a ConditionExpression, a
 * FilterExpression, a KeyConditionExpression, an UpdateExpression, a
 * ProjectionExpression (all with one fixed set of #names and :values), or
 * two numbers for number_add/number_sub. Whatever parses is evaluated on a
 * fixed item and on no item, applied, projected; results are checked for
 * invariants (a result item encodes and decodes, arithmetic round-trips).
 * Not wired into CMake; build by hand, e.g.:
 *   clang-14 -g -O1 -fsanitize=fuzzer,address,undefined -I core \
 *     core/[a-z]*.c tests/fuzz/expr_fuzz.c -lxxhash -o /tmp/expr_fuzz
 * and run with the dictionary and seeds next to this file:
 *   /tmp/expr_fuzz -max_len=4200 -dict=tests/fuzz/expr.dict \
 *     tests/fuzz/corpus/expr
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "expr.h"

/* A tiny builder for the fixed values (no JSON here). */
static arena fixed;
static value item;
static expr_name names[8];
static expr_value values[20];

static value
S(const char *s)
{
	value v = { .type = VAL_S, .len = strlen(s) };

	v.u.bytes = s;
	return v;
}

static value
B(const char *s)
{
	value v = S(s);

	v.type = VAL_B;
	return v;
}

static value
N(const char *s)
{
	value v = { .type = VAL_N };
	const char *msg;

	v.u.num = arena_alloc(&fixed, sizeof(number));
	if (v.u.num == NULL || number_parse(s, strlen(s), v.u.num, &msg))
		abort();
	return v;
}

static value
coll(val_type t, size_t n, const value *elems)
{
	value v = { .type = t, .len = n };

	v.u.elems = arena_alloc(&fixed, (n + 1) * sizeof(value));
	if (n > 0)
		memcpy(v.u.elems, elems, n * sizeof(value));
	return v;
}

static value
map(size_t n, const char *const *keys, const value *vals)
{
	value v = { .type = VAL_M, .len = n };
	size_t i;

	v.u.attrs = arena_alloc(&fixed, (n + 1) * sizeof(attr));
	for (i = 0; i < n; i++) {
		v.u.attrs[i].name = keys[i];
		v.u.attrs[i].name_len = strlen(keys[i]);
		v.u.attrs[i].v = vals[i];
	}
	return v;
}

static void
setup(void)
{
	static const char *mk[] = { "a", "b" };
	static const char *ik[] = { "n", "s", "l", "m", "ss", "ns", "bs", "b",
		"t", "z", "a", "a.b", "e", "neg" };
	static const char *nk[][2] = { { "#n", "n" }, { "#m", "m" },
		{ "#a", "a" }, { "#l", "l" }, { "#s", "s" }, { "#d", "a.b" },
		{ "#x", "[0]" }, { "#k", "pk" } };
	value t = { .type = VAL_BOOL, .b = true };
	value z = { .type = VAL_NULL, .b = true };
	value inner[3], mv[2], iv[14], sv[3], l2[2];
	const char *vk[20];
	value vv[20];
	size_t i, nv = 0;

	arena_init(&fixed);
	inner[0] = N("3");
	l2[0] = coll(VAL_L, 1, inner);
	mv[0] = N("1");
	inner[0] = S("x");
	mv[1] = map(1, (const char *[]){ "c" }, inner);
	iv[0] = N("5");
	iv[1] = S("hello");
	inner[0] = N("1");
	inner[1] = N("2");
	inner[2] = map(1, (const char *[]){ "a" }, l2);
	iv[2] = coll(VAL_L, 3, inner);
	iv[3] = map(2, mk, mv);
	sv[0] = S("a");
	sv[1] = S("b");
	iv[4] = coll(VAL_SS, 2, sv);
	sv[0] = N("1");
	sv[1] = N("2.5");
	iv[5] = coll(VAL_NS, 2, sv);
	sv[0] = B("x");
	iv[6] = coll(VAL_BS, 1, sv);
	iv[7] = B("hi there");
	iv[8] = t;
	iv[9] = z;
	inner[0] = N("1");
	inner[1] = N("2");
	l2[1] = coll(VAL_L, 2, inner);
	iv[10] = map(1, (const char *[]){ "b" }, &l2[1]);
	iv[11] = N("1");
	iv[12] = S("");
	iv[13] = N("-9.99e125");
	item = map(14, ik, iv);

	for (i = 0; i < 8; i++) {
		names[i].key = nk[i][0];
		names[i].key_len = strlen(nk[i][0]);
		names[i].name = nk[i][1];
		names[i].name_len = strlen(nk[i][1]);
	}
#define VAL(k, v) (vk[nv] = (k), vv[nv++] = (v))
	VAL(":v", N("5"));
	VAL(":w", N("-1.5"));
	VAL(":s", S("abc"));
	VAL(":e", S(""));
	VAL(":b", B("hi"));
	VAL(":t", t);
	VAL(":z", z);
	VAL(":l", iv[2]);
	VAL(":m", iv[3]);
	VAL(":ss", iv[4]);
	VAL(":ns", iv[5]);
	VAL(":bs", iv[6]);
	VAL(":big", N("9.9999999999999999999999999999999999999e125"));
	VAL(":tiny", N("1e-130"));
	VAL(":ty", S("S"));
	VAL(":el", coll(VAL_L, 0, NULL));
	VAL(":n", N("12345678901234567890123456789012345678"));
	VAL(":h", S("hello"));
#undef VAL
	for (i = 0; i < nv; i++) {
		values[i].key = vk[i];
		values[i].key_len = strlen(vk[i]);
		values[i].val = arena_alloc(&fixed, sizeof(value));
		*(value *) values[i].val = vv[i];
	}
}

/* check_item aborts unless v is an item that survives the codec. */
static void
check_item(arena *a, const value *v)
{
	uint8_t *buf;
	size_t len;
	value back;

	if (v->type != VAL_M)
		abort();
	if (codec_encode(v, &buf, &len) != KV_OK)
		abort();
	if (codec_decode(a, buf, len, &back) != KV_OK ||
	    !value_equal(v, &back)) {
		free(buf);
		abort();
	}
	free(buf);
}

static void
numbers(const char *s, size_t len)
{
	const char *comma = memchr(s, ',', len), *msg;
	number a, b, sum, diff, back;

	if (comma == NULL)
		return;
	if (number_parse(s, (size_t) (comma - s), &a, &msg) != KV_OK ||
	    number_parse(comma + 1, len - (size_t) (comma - s) - 1, &b,
		&msg) != KV_OK)
		return;
	if (number_add(&a, &b, &sum, &msg) == KV_OK &&
	    number_sub(&sum, &b, &back, &msg) == KV_OK &&
	    number_cmp(&back, &a) != 0)
		abort();
	if (number_sub(&a, &b, &diff, &msg) == KV_OK) {
		int s1 = diff.ndigits == 0 ? 0 : diff.neg ? -1 : 1;
		int c = number_cmp(&a, &b);

		if (s1 != (c > 0) - (c < 0))
			abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const expr_kind conds[] = { EXPR_CONDITION, EXPR_FILTER,
		EXPR_KEY_CONDITION };
	static bool ready;
	expr_projection *p, paths;
	expr_update *u;
	expr_cond *c;
	expr_ctx ctx;
	expr_err err;
	value out, proj;
	const char *s;
	size_t len;
	arena a;

	if (!ready) {
		setup();
		ready = true;
	}
	if (size < 1)
		return 0;
	err.msg[0] = '\0';
	s = (const char *) data + 1;
	len = size - 1;
	arena_init(&a);
	for (size_t i = 0; i < 8; i++)
		names[i].used = false;
	for (size_t i = 0; i < 20; i++)
		values[i].used = false;
	expr_ctx_init(&ctx, names, 8, values, 18);
	switch (data[0] % 6) {
	case 0:
	case 1:
	case 2:
		if (expr_parse_condition(&a, conds[data[0] % 6], s, len, &ctx,
			&c, &err) == KV_OK) {
			expr_key_cond kc[2];
			size_t n;

			(void) expr_eval_condition(c, &item);
			(void) expr_eval_condition(c, NULL);
			if (expr_key_conditions(c, kc, &n, &err) == KV_OK &&
			    (n < 1 || n > 2))
				abort();
		}
		break;
	case 3:
		if (expr_parse_update(&a, s, len, &ctx, &u, &err) != KV_OK)
			break;
		if (expr_apply_update(&a, u, &item, &out, &err) == KV_OK) {
			check_item(&a, &out);
			if (expr_update_paths(&a, u, &paths) == KV_OK &&
			    expr_project(&a, &out, &paths, &proj) == KV_OK)
				check_item(&a, &proj);
		}
		if (expr_apply_update(&a, u, NULL, &out, &err) == KV_OK)
			check_item(&a, &out);
		break;
	case 4:
		if (expr_parse_projection(&a, s, len, &ctx, &p, &err) ==
			KV_OK &&
		    expr_project(&a, &item, p, &proj) == KV_OK)
			check_item(&a, &proj);
		break;
	default:
		numbers(s, len);
		break;
	}
	(void) expr_ctx_check_unused(&ctx, &err);
	if (strlen(err.msg) >= EXPR_ERR_MAX)
		abort();
	arena_fini(&a);
	return 0;
}
