/*
 * size_index_test.c — the per-partition index of stored item sizes
 * (node/size_index.h): entries are exact or absent, through growth,
 * removals and the node-wide budget, against a plain array as the model.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "size_index.h"

static size_budget B;
static size_index X;

static void
setup(void)
{
	atomic_init(&B.bytes, 0);
	B.limit = 64u << 20;
	size_index_init(&X, &B);
}

static void
teardown(void)
{
	size_index_fini(&X);
	cr_assert_eq(atomic_load(&B.bytes), 0, "fini gives back every table");
}

/* The bytes of X's table, as the budget counts them. */
static size_t
table_bytes(const size_index *x)
{
	return x->cap * SIZE_INDEX_SLOT_BYTES;
}

TestSuite(size_index, .init = setup, .fini = teardown);

static size_t
key_of(unsigned i, uint8_t *buf)
{
	return (size_t) snprintf((char *) buf, 32, "key-%u", i);
}

Test(size_index, an_empty_index_knows_nothing)
{
	uint32_t s = 7;
	cr_assert(!size_index_get(&X, (const uint8_t *) "a", 1, &s));
	cr_assert_eq(s, 7);
	size_index_remove(&X, (const uint8_t *) "a", 1);
	cr_assert_eq(atomic_load(&B.bytes), 0);
}

Test(size_index, set_get_update_remove)
{
	uint32_t s;
	size_index_set(&X, (const uint8_t *) "abc", 3, 10);
	cr_assert(size_index_get(&X, (const uint8_t *) "abc", 3, &s));
	cr_assert_eq(s, 10);
	/* A prefix or a longer key is another key. */
	cr_assert(!size_index_get(&X, (const uint8_t *) "ab", 2, &s));
	cr_assert(!size_index_get(&X, (const uint8_t *) "abcd", 4, &s));
	size_index_set(&X, (const uint8_t *) "abc", 3, 99);
	cr_assert(size_index_get(&X, (const uint8_t *) "abc", 3, &s));
	cr_assert_eq(s, 99);
	cr_assert_eq(X.n, 1);
	cr_assert_eq(atomic_load(&B.bytes), table_bytes(&X));
	size_index_remove(&X, (const uint8_t *) "abc", 3);
	cr_assert(!size_index_get(&X, (const uint8_t *) "abc", 3, &s));
	cr_assert_eq(X.n, 0);
	/* The empty key is a key. */
	size_index_set(&X, (const uint8_t *) "", 0, 4);
	cr_assert(size_index_get(&X, (const uint8_t *) "", 0, &s));
	cr_assert_eq(s, 4);
}

/* 40,000 random operations on 3,000 keys, checked against an array. */
Test(size_index, agrees_with_a_model_through_growth_and_removals)
{
	enum { KEYS = 3000, OPS = 40000 };
	static int64_t model[KEYS]; /* -1: no entry */
	uint64_t r = 88172645463325252ull;
	uint8_t k[32];
	size_t live = 0;

	for (unsigned i = 0; i < KEYS; i++)
		model[i] = -1;
	for (unsigned op = 0; op < OPS; op++) {
		r ^= r << 13;
		r ^= r >> 7;
		r ^= r << 17;
		unsigned i = (unsigned) (r % KEYS);
		size_t kl = key_of(i, k);
		if ((r >> 32) % 3 == 0) {
			size_index_remove(&X, k, kl);
			live -= model[i] >= 0;
			model[i] = -1;
		} else {
			uint32_t size = (uint32_t) (r >> 40);
			size_index_set(&X, k, kl, size);
			live += model[i] < 0;
			model[i] = size;
		}
	}
	cr_assert_eq(X.n, live);
	cr_assert_eq(atomic_load(&B.bytes), table_bytes(&X));
	for (unsigned i = 0; i < KEYS; i++) {
		uint32_t s;
		size_t kl = key_of(i, k);
		bool have = size_index_get(&X, k, kl, &s);
		cr_assert_eq(have, model[i] >= 0, "key %u", i);
		if (have)
			cr_assert_eq(s, (uint32_t) model[i], "key %u", i);
	}
}

Test(size_index, long_keys_are_indexed_by_their_fingerprint)
{
	uint8_t k[300];
	uint32_t s;
	memset(k, 'k', sizeof(k));
	size_index_set(&X, k, 299, 1);
	size_index_set(&X, k, 300, 2);
	cr_assert(size_index_get(&X, k, 299, &s));
	cr_assert_eq(s, 1);
	cr_assert(size_index_get(&X, k, 300, &s));
	cr_assert_eq(s, 2);
	k[150] = 'j'; /* one byte in the middle makes another key */
	cr_assert(!size_index_get(&X, k, 300, &s));
}

Test(size_index, at_the_budget_new_keys_stay_unknown_and_known_ones_change)
{
	uint32_t s;
	uint8_t k[32];
	size_index_set(&X, (const uint8_t *) "known", 5, 1);
	/* The budget is this table: the next growth does not fit. */
	B.limit = table_bytes(&X);
	unsigned i = 0;
	for (; X.n < X.cap * 3 / 4; i++)
		size_index_set(&X, k, key_of(i, k), i);
	size_t cap = X.cap;
	size_index_set(&X, (const uint8_t *) "new", 3, 2);
	cr_assert(!size_index_get(&X, (const uint8_t *) "new", 3, &s));
	cr_assert_eq(X.cap, cap, "the table did not grow");
	cr_assert_leq(atomic_load(&B.bytes), B.limit);
	size_index_set(&X, (const uint8_t *) "known", 5, 3);
	cr_assert(size_index_get(&X, (const uint8_t *) "known", 5, &s));
	cr_assert_eq(s, 3);
	/* With room again, it grows and takes new keys. */
	B.limit = 64u << 20;
	size_index_set(&X, (const uint8_t *) "new", 3, 2);
	cr_assert(size_index_get(&X, (const uint8_t *) "new", 3, &s));
	cr_assert_gt(X.cap, cap);
}

Test(size_index, tables_of_two_indexes_count_together)
{
	size_index other;
	size_index_init(&other, &B);
	size_index_set(&X, (const uint8_t *) "a", 1, 1);
	size_index_set(&other, (const uint8_t *) "a", 1, 2);
	size_index_set(&other, (const uint8_t *) "b", 1, 2);
	cr_assert_eq(atomic_load(&B.bytes), table_bytes(&X) +
	    table_bytes(&other));
	size_index_fini(&other);
	cr_assert_eq(atomic_load(&B.bytes), table_bytes(&X));
}
