/*
 * arena_test.c — the bump allocator (core/arena.c): zeroed, aligned,
 * separate memory across reuse; large requests; an arena filled on one
 * thread and released on another (as a request handed to a worker is).
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "arena.h"

Test(arena, memory_is_zeroed_aligned_and_separate)
{
	arena a;
	arena_init(&a);
	for (int round = 0; round < 3; round++) {
		char *prev = NULL;
		for (size_t n = 1; n < 3000; n += 97) {
			char *p = arena_alloc(&a, n);
			cr_assert_not_null(p);
			cr_assert_eq((uintptr_t) p % _Alignof(max_align_t), 0);
			for (size_t i = 0; i < n; i++)
				cr_assert_eq(p[i], 0);
			memset(p, 0xa5, n); /* dirties what a reuse must clear */
			cr_assert_neq(p, prev);
			prev = p;
		}
		arena_fini(&a);
		cr_assert_eq(a.used, 0);
		arena_init(&a);
	}
	arena_fini(&a);
}

Test(arena, large_requests_and_dup)
{
	arena a;
	arena_init(&a);
	char *big = arena_alloc(&a, 400 * 1024);
	cr_assert_not_null(big);
	memset(big, 1, 400 * 1024);
	char *small = arena_alloc(&a, 16);
	cr_assert_not_null(small);
	char *d = arena_dup(&a, "abc", 3);
	cr_assert_str_eq(d, "abc");
	cr_assert_null(arena_alloc(&a, SIZE_MAX - 8));
	arena_fini(&a);
}

static void *
churn(void *arg)
{
	arena *given = arg;
	arena_fini(given);
	for (int i = 0; i < 50; i++) {
		arena a;
		arena_init(&a);
		for (int k = 0; k < 20; k++)
			cr_assert_not_null(arena_alloc(&a, 1000));
		arena_fini(&a);
	}
	return NULL;
}

Test(arena, an_arena_may_be_released_on_another_thread)
{
	arena a;
	arena_init(&a);
	for (int k = 0; k < 40; k++)
		cr_assert_not_null(arena_alloc(&a, 1000));
	pthread_t th;
	cr_assert_eq(pthread_create(&th, NULL, churn, &a), 0);
	cr_assert_eq(pthread_join(th, NULL), 0);
}
