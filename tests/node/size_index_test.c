/*
 * size_index_test.c — the per-partition index of stored item sizes
 * (node/size_index.h): entries are exact or absent, through growth,
 * removals and the node-wide bound, against a plain array as the model.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "size_index.h"

static atomic_size_t total;
static size_index X;

static void
setup(void)
{
	atomic_init(&total, 0);
	size_index_init(&X, &total);
}

static void
teardown(void)
{
	size_index_fini(&X);
	cr_assert_eq(atomic_load(&total), 0, "fini gives back every entry");
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
	cr_assert_eq(atomic_load(&total), 0);
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
	cr_assert_eq(atomic_load(&total), 1);
	size_index_remove(&X, (const uint8_t *) "abc", 3);
	cr_assert(!size_index_get(&X, (const uint8_t *) "abc", 3, &s));
	cr_assert_eq(atomic_load(&total), 0);
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
	cr_assert_eq(atomic_load(&total), live);
	for (unsigned i = 0; i < KEYS; i++) {
		uint32_t s;
		size_t kl = key_of(i, k);
		bool have = size_index_get(&X, k, kl, &s);
		cr_assert_eq(have, model[i] >= 0, "key %u", i);
		if (have)
			cr_assert_eq(s, (uint32_t) model[i], "key %u", i);
	}
}

Test(size_index, keys_longer_than_the_slot_are_not_indexed)
{
	uint8_t k[SIZE_INDEX_MAX_KEY + 1];
	uint32_t s;
	memset(k, 'k', sizeof(k));
	size_index_set(&X, k, SIZE_INDEX_MAX_KEY, 1);
	size_index_set(&X, k, SIZE_INDEX_MAX_KEY + 1, 2);
	cr_assert(size_index_get(&X, k, SIZE_INDEX_MAX_KEY, &s));
	cr_assert_eq(s, 1);
	cr_assert(!size_index_get(&X, k, SIZE_INDEX_MAX_KEY + 1, &s));
	cr_assert_eq(atomic_load(&total), 1);
}

Test(size_index, at_the_bound_new_keys_stay_unknown_and_known_ones_change)
{
	uint32_t s;
	size_index_set(&X, (const uint8_t *) "known", 5, 1);
	atomic_store(&total, SIZE_INDEX_MAX_ENTRIES);
	size_index_set(&X, (const uint8_t *) "new", 3, 2);
	cr_assert(!size_index_get(&X, (const uint8_t *) "new", 3, &s));
	size_index_set(&X, (const uint8_t *) "known", 5, 3);
	cr_assert(size_index_get(&X, (const uint8_t *) "known", 5, &s));
	cr_assert_eq(s, 3);
	atomic_store(&total, 1); /* back to what this index holds */
}

Test(size_index, entries_of_two_indexes_count_together)
{
	size_index other;
	size_index_init(&other, &total);
	size_index_set(&X, (const uint8_t *) "a", 1, 1);
	size_index_set(&other, (const uint8_t *) "a", 1, 2);
	size_index_set(&other, (const uint8_t *) "b", 1, 2);
	cr_assert_eq(atomic_load(&total), 3);
	size_index_fini(&other);
	cr_assert_eq(atomic_load(&total), 1);
}
