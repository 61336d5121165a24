/*
 * value_test.c — type names, ordering, DynamoDB equality and deep copy of
 * attribute values (core/value.c). Trees are built by hand here; the JSON
 * and binary builders have their own tests.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "value.h"

static arena A;

static void
setup(void)
{
	arena_init(&A);
}

static void
teardown(void)
{
	arena_fini(&A);
}

TestSuite(value, .init = setup, .fini = teardown);

static value
S(const char *s)
{
	value v = { .type = VAL_S, .len = strlen(s) };

	v.u.bytes = s;
	return v;
}

static value
Bn(const char *p, size_t n)
{
	value v = { .type = VAL_B, .len = n };

	v.u.bytes = p;
	return v;
}

static value
N(const char *s)
{
	value v = { .type = VAL_N };
	const char *msg;

	v.u.num = arena_alloc(&A, sizeof(number));
	cr_assert_eq(number_parse(s, strlen(s), v.u.num, &msg), KV_OK, "%s",
	    s);
	return v;
}

/* coll builds a set or list of type t from n members. */
static value
coll(val_type t, size_t n, const value *members)
{
	value v = { .type = t, .len = n };

	v.u.elems = arena_alloc(&A, n * sizeof(value) + 1);
	memcpy(v.u.elems, members, n * sizeof(value));
	return v;
}

static value
map(size_t n, const char *const *names, const value *vals)
{
	value v = { .type = VAL_M, .len = n };
	size_t i;

	v.u.attrs = arena_alloc(&A, n * sizeof(attr) + 1);
	for (i = 0; i < n; i++) {
		v.u.attrs[i].name = names[i];
		v.u.attrs[i].name_len = strlen(names[i]);
		v.u.attrs[i].v = vals[i];
	}
	return v;
}

static value
boolean(bool b)
{
	value v = { .type = VAL_BOOL, .b = b };

	return v;
}

static value
null(void)
{
	value v = { .type = VAL_NULL, .b = true };

	return v;
}

Test(value, type_names_round_trip)
{
	static const char *const names[] = { "S", "N", "B", "SS", "NS", "BS",
		"M", "L", "NULL", "BOOL" };
	val_type t;

	for (t = VAL_S; t <= VAL_BOOL; t++) {
		const char *n = value_type_name(t);

		cr_assert_str_eq(n, names[t - VAL_S]);
		cr_assert_eq(value_type_from_name(n, strlen(n)), t);
	}
}

Test(value, unknown_type_names_are_zero)
{
	static const char *const bad[] = { "", "s", "X", "SSS", "NULLX",
		"BOO", "bool", "Null", "M " };
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(value_type_from_name(bad[i], strlen(bad[i])), 0,
		    "%s", bad[i]);
	/* The length is respected: "SS" cut to one byte is "S". */
	cr_assert_eq(value_type_from_name("SS", 1), VAL_S);
}

Test(value, strings_order_by_unsigned_bytes)
{
	value a = S("a"), b = S("b"), ab = S("ab"), empty = S("");
	value lo = S("\x7f"), hi = S("\x80");

	cr_assert_lt(value_cmp(&a, &b), 0);
	cr_assert_gt(value_cmp(&b, &a), 0);
	cr_assert_lt(value_cmp(&a, &ab), 0);
	cr_assert_lt(value_cmp(&empty, &a), 0);
	cr_assert_lt(value_cmp(&lo, &hi), 0);
	cr_assert_eq(value_cmp(&ab, &ab), 0);
}

Test(value, binaries_order_by_unsigned_bytes)
{
	value a = Bn("\x00\x01", 2), b = Bn("\x00\xff", 2);
	value c = Bn("\x00", 1), d = Bn("", 0);

	cr_assert_lt(value_cmp(&a, &b), 0);
	cr_assert_lt(value_cmp(&c, &a), 0);
	cr_assert_lt(value_cmp(&d, &c), 0);
	cr_assert_eq(value_cmp(&d, &d), 0);
}

Test(value, numbers_order_numerically)
{
	value nine = N("9"), ten = N("10"), neg = N("-1"), zero = N("0");
	value hundred = N("100"), e2 = N("1E+2"), tiny = N("1E-130");

	cr_assert_lt(value_cmp(&nine, &ten), 0);
	cr_assert_lt(value_cmp(&neg, &zero), 0);
	cr_assert_lt(value_cmp(&zero, &tiny), 0);
	cr_assert_eq(value_cmp(&hundred, &e2), 0);
}

Test(value, different_types_order_by_type)
{
	value s = S("z"), n = N("1");

	cr_assert_neq(value_cmp(&s, &n), 0);
	cr_assert_eq(value_cmp(&s, &n), -value_cmp(&n, &s));
}

Test(value, numbers_are_equal_by_value)
{
	value a = N("1.0"), b = N("1"), c = N("1.01");

	cr_assert(value_equal(&a, &b));
	cr_assert_not(value_equal(&a, &c));
}

Test(value, scalars_of_different_types_differ)
{
	value s = S("1"), n = N("1"), b = Bn("1", 1);

	cr_assert_not(value_equal(&s, &n));
	cr_assert_not(value_equal(&s, &b));
}

Test(value, null_and_bool_equality)
{
	value t = boolean(true), f = boolean(false), n1 = null(), n2 = null();

	cr_assert(value_equal(&t, &t));
	cr_assert_not(value_equal(&t, &f));
	cr_assert(value_equal(&n1, &n2));
	cr_assert_not(value_equal(&n1, &f));
}

Test(value, small_sets_ignore_order)
{
	value m1[] = { S("a"), S("b"), S("c") };
	value m2[] = { S("c"), S("a"), S("b") };
	value m3[] = { S("c"), S("a"), S("d") };
	value x = coll(VAL_SS, 3, m1), y = coll(VAL_SS, 3, m2);
	value z = coll(VAL_SS, 3, m3), w = coll(VAL_SS, 2, m1);

	cr_assert(value_equal(&x, &y));
	cr_assert_not(value_equal(&x, &z));
	cr_assert_not(value_equal(&x, &w));
}

Test(value, number_sets_compare_members_by_value)
{
	value m1[] = { N("1"), N("2") };
	value m2[] = { N("2.0"), N("1E0") };
	value x = coll(VAL_NS, 2, m1), y = coll(VAL_NS, 2, m2);

	cr_assert(value_equal(&x, &y));
}

Test(value, large_sets_ignore_order)
{
	enum { COUNT = 200 };
	static char text[COUNT][8];
	value m1[COUNT], m2[COUNT];
	value x, y;
	size_t i;

	for (i = 0; i < COUNT; i++) {
		snprintf(text[i], sizeof(text[i]), "m%zu", i);
		m1[i] = S(text[i]);
		m2[COUNT - 1 - i] = S(text[i]);
	}
	x = coll(VAL_SS, COUNT, m1);
	y = coll(VAL_SS, COUNT, m2);
	cr_assert(value_equal(&x, &y));
	m2[17] = S("other");
	y = coll(VAL_SS, COUNT, m2);
	cr_assert_not(value_equal(&x, &y));
}

Test(value, binary_sets_ignore_order)
{
	value m1[] = { Bn("\x01", 1), Bn("\x02\x00", 2) };
	value m2[] = { Bn("\x02\x00", 2), Bn("\x01", 1) };
	value x = coll(VAL_BS, 2, m1), y = coll(VAL_BS, 2, m2);

	cr_assert(value_equal(&x, &y));
}

Test(value, lists_keep_order)
{
	value m1[] = { S("a"), N("1") };
	value m2[] = { N("1"), S("a") };
	value x = coll(VAL_L, 2, m1), y = coll(VAL_L, 2, m2);
	value z = coll(VAL_L, 2, m1);

	cr_assert_not(value_equal(&x, &y));
	cr_assert(value_equal(&x, &z));
}

Test(value, maps_compare_by_name)
{
	static const char *const n1[] = { "a", "b" };
	static const char *const n2[] = { "b", "a" };
	static const char *const n3[] = { "a", "c" };
	value v1[] = { S("x"), N("1") };
	value v2[] = { N("1.0"), S("x") };
	value x = map(2, n1, v1), y = map(2, n2, v2), z = map(2, n3, v1);

	cr_assert(value_equal(&x, &y));
	cr_assert_not(value_equal(&x, &z));
}

Test(value, large_maps_compare_by_name)
{
	enum { COUNT = 100 };
	static char text[COUNT][8];
	const char *n1[COUNT], *n2[COUNT];
	value v1[COUNT], v2[COUNT];
	value x, y;
	size_t i;

	for (i = 0; i < COUNT; i++) {
		snprintf(text[i], sizeof(text[i]), "k%zu", i);
		n1[i] = text[i];
		v1[i] = S(text[i]);
		n2[COUNT - 1 - i] = text[i];
		v2[COUNT - 1 - i] = S(text[i]);
	}
	x = map(COUNT, n1, v1);
	y = map(COUNT, n2, v2);
	cr_assert(value_equal(&x, &y));
	v2[3] = S("different");
	y = map(COUNT, n2, v2);
	cr_assert_not(value_equal(&x, &y));
}

Test(value, nested_values_compare_deeply)
{
	static const char *const names[] = { "l" };
	value inner1[] = { N("1"), S("s") }, inner2[] = { N("1"), S("t") };
	value l1 = coll(VAL_L, 2, inner1), l2 = coll(VAL_L, 2, inner2);
	value x = map(1, names, &l1), y = map(1, names, &l2);
	value z = map(1, names, &l1);

	cr_assert_not(value_equal(&x, &y));
	cr_assert(value_equal(&x, &z));
}

Test(value, item_attr_finds_by_exact_name)
{
	static const char *const names[] = { "a", "ab", "" };
	value vals[] = { S("1"), S("2"), S("3") };
	value item = map(3, names, vals), notmap = S("a");
	const value *v;

	v = item_attr(&item, "ab", 2);
	cr_assert_not_null(v);
	cr_assert_eq(v->u.bytes[0], '2');
	v = item_attr(&item, "", 0);
	cr_assert_not_null(v);
	cr_assert_eq(v->u.bytes[0], '3');
	cr_assert_null(item_attr(&item, "abc", 3));
	cr_assert_null(item_attr(&item, "x", 1));
	cr_assert_null(item_attr(&notmap, "a", 1));
}

Test(value, copy_is_deep_and_outlives_the_source)
{
	static const char *const names[] = { "s", "n", "set", "l", "b" };
	value set_m[] = { N("1"), N("-2.5") };
	value list_m[] = { S("x"), null(), boolean(true) };
	value vals[5];
	value src, dst;
	arena other;

	vals[0] = S("hello");
	vals[1] = N("12345678901234567890123456789012345678");
	vals[2] = coll(VAL_NS, 2, set_m);
	vals[3] = coll(VAL_L, 3, list_m);
	vals[4] = Bn("\x00\xff", 2);
	src = map(5, names, vals);

	arena_init(&other);
	cr_assert_eq(value_copy(&other, &src, &dst), KV_OK);
	cr_assert(value_equal(&src, &dst));
	cr_assert_neq(dst.u.attrs, src.u.attrs);
	cr_assert_neq(dst.u.attrs[0].v.u.bytes, src.u.attrs[0].v.u.bytes);
	cr_assert_neq(dst.u.attrs[1].v.u.num, src.u.attrs[1].v.u.num);
	/* Scribble over the source: the copy must not change. */
	memset(src.u.attrs[1].v.u.num, 0, sizeof(number));
	src.u.attrs[0].v.u.bytes = "HELLO";
	cr_assert_eq(memcmp(dst.u.attrs[0].v.u.bytes, "hello", 5), 0);
	cr_assert_eq(dst.u.attrs[1].v.u.num->ndigits, 38);
	arena_fini(&other);
}
