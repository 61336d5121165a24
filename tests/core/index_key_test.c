/*
 * index_key_test.c — a global index's multi-attribute keys (index_key.h):
 * the composed Binary values sort as their tuples do, attribute after
 * attribute, each by its own type; a prefix of the tuple is a prefix of
 * the bytes; an item lacking an attribute, or holding one of another
 * type, has no key.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index_key.h"
#include "keyenc.h"
#include "value.h"

static int
sgn(long x)
{
	return (x > 0) - (x < 0);
}

static int
bytes_cmp(const char *a, size_t la, const char *b, size_t lb)
{
	int c = memcmp(a, b, la < lb ? la : lb);
	if (c != 0)
		return sgn(c);
	return la < lb ? -1 : la > lb;
}

/* A tuple of (S, N, B) with small alphabets, so that ties happen. */
typedef struct tuple {
	char s[4];
	size_t sl;
	number n;
	uint8_t b[3];
	size_t bl;
	value v[3];
} tuple;

static void
random_tuple(tuple *t, unsigned *seed)
{
	char num[16];
	const char *msg;
	t->sl = (size_t) rand_r(seed) % 4;
	for (size_t i = 0; i < t->sl; i++)
		t->s[i] = "a\0b"[rand_r(seed) % 3];
	snprintf(num, sizeof(num), "%d.%d", rand_r(seed) % 7 - 3,
	    rand_r(seed) % 3);
	cr_assert_eq(number_parse(num, strlen(num), &t->n, &msg), KV_OK);
	t->bl = (size_t) rand_r(seed) % 3;
	for (size_t i = 0; i < t->bl; i++)
		t->b[i] = (uint8_t) "\x00\x01\xff"[rand_r(seed) % 3];
	t->v[0] = (value) { .type = VAL_S, .len = t->sl, .u.bytes = t->s };
	t->v[1] = (value) { .type = VAL_N, .u.num = &t->n };
	t->v[2] = (value) { .type = VAL_B, .len = t->bl,
	    .u.bytes = (const char *) t->b };
}

/* The tuples' order: attribute by attribute, each by its type. */
static int
tuple_cmp(const tuple *x, const tuple *y, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int c = value_cmp(&x->v[i], &y->v[i]);
		if (c != 0)
			return sgn(c);
	}
	return 0;
}

Test(index_key, composed_values_sort_as_their_tuples)
{
	unsigned seed = 20261206;
	arena a;
	arena_init(&a);
	for (int round = 0; round < 20000; round++) {
		tuple x, y;
		value cx, cy;
		random_tuple(&x, &seed);
		random_tuple(&y, &seed);
		const value *px[3] = { &x.v[0], &x.v[1], &x.v[2] };
		const value *py[3] = { &y.v[0], &y.v[1], &y.v[2] };
		cr_assert_eq(index_key_compose(px, 3, &a, &cx), KV_OK);
		cr_assert_eq(index_key_compose(py, 3, &a, &cy), KV_OK);
		cr_assert_eq(cx.type, VAL_B);
		cr_assert_eq(bytes_cmp(cx.u.bytes, cx.len, cy.u.bytes, cy.len),
		    tuple_cmp(&x, &y, 3), "round %d", round);
		/* Their first attributes' composition is a prefix. */
		value c1;
		cr_assert_eq(index_key_compose(px, 1, &a, &c1), KV_OK);
		cr_assert(c1.len <= cx.len &&
		    memcmp(c1.u.bytes, cx.u.bytes, c1.len) == 0);
		/* The storage encoding keeps the order too. */
		uint8_t *ex = malloc(keyenc_value_size(&cx));
		uint8_t *ey = malloc(keyenc_value_size(&cy));
		size_t lx = keyenc_value(&cx, ex), ly = keyenc_value(&cy, ey);
		cr_assert_eq(bytes_cmp((char *) ex, lx, (char *) ey, ly),
		    tuple_cmp(&x, &y, 3));
		free(ex);
		free(ey);
	}
	arena_fini(&a);
}

static value
item_of(attr *attrs, size_t n)
{
	return (value) { .type = VAL_M, .len = n, .u.attrs = attrs };
}

Test(index_key, an_item_needs_every_attribute_with_its_type)
{
	index_def d;
	memset(&d, 0, sizeof(d));
	d.hash = (key_def) { .name = "t", .type = VAL_S };
	d.hmore[0] = (key_def) { .name = "g", .type = VAL_S };
	d.n_hmore = 1;
	d.range = (key_def) { .name = "r", .type = VAL_S };
	const key_def *parts[INDEX_KEY_PARTS];
	cr_assert_eq(index_key_parts(&d, false, parts), 2);
	cr_assert_str_eq(parts[1]->name, "g");
	cr_assert_eq(index_key_parts(&d, true, parts), 1);
	cr_assert(index_key_multi(&d, false) && !index_key_multi(&d, true));

	arena a;
	arena_init(&a);
	attr at[3] = {
		{ "t", 1, { .type = VAL_S, .len = 1, .u.bytes = "x" } },
		{ "g", 1, { .type = VAL_S, .len = 2, .u.bytes = "eu" } },
		{ "r", 1, { .type = VAL_S, .len = 1, .u.bytes = "1" } },
	};
	value item = item_of(at, 3), out;
	cr_assert_eq(index_key_value(&d, false, &item, &a, &out), 1);
	cr_assert_eq(out.type, VAL_B);
	const value *vals[2] = { &at[0].v, &at[1].v };
	value want;
	cr_assert_eq(index_key_compose(vals, 2, &a, &want), KV_OK);
	cr_assert(value_equal(&out, &want));
	/* One sort attribute: the attribute's own value. */
	cr_assert_eq(index_key_value(&d, true, &item, &a, &out), 1);
	cr_assert(value_equal(&out, &at[2].v));
	/* Without g, or with g a Number: not in the index. */
	value part = item_of(at, 1);
	cr_assert_eq(index_key_value(&d, false, &part, &a, &out), 0);
	at[1].v = (value) { .type = VAL_B, .len = 2, .u.bytes = "eu" };
	cr_assert_eq(index_key_value(&d, false, &item, &a, &out), 0);
	cr_assert_eq(index_key_value(&d, false, NULL, &a, &out), 0);
	arena_fini(&a);
}
