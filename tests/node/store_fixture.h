/*
 * store_fixture.h — what the store's tests share (store_test.c,
 * store_rocks_test.c): a fresh store S on either engine (RocksDB in a
 * mkdtemp directory, removed afterwards), STORE_TEST to run one body on
 * both, and helpers on S over (pointer, length) byte strings, with a
 * scan collector.
 */
#ifndef KV_STORE_FIXTURE_H
#define KV_STORE_FIXTURE_H

#include <criterion/criterion.h>
#include <ftw.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "store.h"

typedef enum engine {
	ENGINE_ROCKS,
	ENGINE_MEM,
} engine;

static store *S;
static char dir[64];

static int
rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	return remove(path);
}

static inline void
open_engine(engine e)
{
	char why[256] = "";

	S = NULL;
	dir[0] = '\0';
	if (e == ENGINE_MEM) {
		cr_assert_eq(store_open_mem(&S), KV_OK);
		return;
	}
	strcpy(dir, "/tmp/kv-store-test-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	cr_assert_eq(store_open_rocks(dir, false, 0, &S, why, sizeof(why)), KV_OK,
	    "%s", why);
}

static inline void
reopen_rocks(void)
{
	char why[256] = "";

	store_close(S);
	S = NULL;
	cr_assert_eq(store_open_rocks(dir, false, 0, &S, why, sizeof(why)), KV_OK,
	    "%s", why);
}

static inline void
close_engine(void)
{
	store_close(S);
	S = NULL;
	if (dir[0] != '\0')
		nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	dir[0] = '\0';
}

TestSuite(store, .fini = close_engine);

/*
 * STORE_TEST(name) defines the body `name(engine e)` once and registers it
 * as store::name_rocks and store::name_mem, each on a fresh store S.
 */
#define STORE_TEST(name)                                                     \
	static void name(engine e);                                          \
	Test(store, name##_rocks)                                            \
	{                                                                    \
		open_engine(ENGINE_ROCKS);                                   \
		name(ENGINE_ROCKS);                                          \
	}                                                                    \
	Test(store, name##_mem)                                              \
	{                                                                    \
		open_engine(ENGINE_MEM);                                     \
		name(ENGINE_MEM);                                            \
	}                                                                    \
	static void name(engine e)

/* Byte-string wrappers, so that tests can pass string literals. */
static inline kv_err
badd(store_batch *b, store_op_kind kind, const void *k, size_t kl,
    const void *v, size_t vl)
{
	return store_batch_add(b, kind, k, kl, v, vl);
}

static inline kv_err
scan(const void *lo, size_t lol, const void *hi, size_t hil,
    store_scan_fn fn, void *arg)
{
	return store_scan(S, lo, lol, hi, hil, fn, arg);
}

/* Helpers on S. Keys and values are (pointer, length) byte strings. */

static inline void
put(const void *k, size_t kl, const void *v, size_t vl)
{
	store_batch b;

	store_batch_init(&b);
	cr_assert_eq(badd(&b, STORE_PUT, k, kl, v, vl), KV_OK);
	cr_assert_eq(store_write(S, &b), KV_OK);
	store_batch_fini(&b);
}

static inline void
del(const void *k, size_t kl)
{
	store_batch b;

	store_batch_init(&b);
	cr_assert_eq(badd(&b, STORE_DELETE, k, kl, NULL, 0), KV_OK);
	cr_assert_eq(store_write(S, &b), KV_OK);
	store_batch_fini(&b);
}

static inline void
del_range(const void *lo, size_t lol, const void *hi, size_t hil)
{
	store_batch b;

	store_batch_init(&b);
	cr_assert_eq(badd(&b, STORE_DELETE_RANGE, lo, lol, hi, hil),
	    KV_OK);
	cr_assert_eq(store_write(S, &b), KV_OK);
	store_batch_fini(&b);
}

static inline void
expect_missing(const void *k, size_t kl)
{
	uint8_t *v = (uint8_t *) "sentinel";
	size_t vl = 99;
	bool found = true;

	cr_assert_eq(store_get(S, k, kl, &v, &vl, &found), KV_OK);
	cr_assert(!found, "key of %zu bytes should be missing", kl);
	cr_assert_null(v);
	cr_assert_eq(vl, 0);
}

static inline void
expect_value(const void *k, size_t kl, const void *want, size_t wl)
{
	uint8_t *v = NULL;
	size_t vl = 99;
	bool found = false;

	cr_assert_eq(store_get(S, k, kl, &v, &vl, &found), KV_OK);
	cr_assert(found, "key of %zu bytes should be present", kl);
	cr_assert_eq(vl, wl);
	if (wl > 0)
		cr_assert_arr_eq(v, want, wl);
	free(v);
}

/* A scan collector: copies of every key and value, in the order seen. */
typedef struct kvpair {
	uint8_t *k, *v;
	size_t kl, vl;
} kvpair;

typedef struct collected {
	kvpair *p;
	size_t n, cap;
	size_t stop_after; /* 0: never stop */
} collected;

static inline bool
collect(void *arg, const uint8_t *k, size_t kl, const uint8_t *v, size_t vl)
{
	collected *c = arg;

	if (c->n == c->cap) {
		c->cap = c->cap == 0 ? 16 : c->cap * 2;
		c->p = realloc(c->p, c->cap * sizeof(*c->p));
		cr_assert_not_null(c->p);
	}
	kvpair *p = &c->p[c->n++];
	p->k = malloc(kl + 1);
	p->v = malloc(vl + 1);
	memcpy(p->k, k, kl);
	memcpy(p->v, v, vl);
	p->kl = kl;
	p->vl = vl;
	return c->stop_after == 0 || c->n < c->stop_after;
}

static inline void
collected_fini(collected *c)
{
	for (size_t i = 0; i < c->n; i++) {
		free(c->p[i].k);
		free(c->p[i].v);
	}
	free(c->p);
	memset(c, 0, sizeof(*c));
}

static inline int
bytecmp(const uint8_t *a, size_t al, const uint8_t *b, size_t bl)
{
	int c = memcmp(a, b, al < bl ? al : bl);
	if (c != 0)
		return c;
	return al < bl ? -1 : al > bl ? 1 : 0;
}

/* Scans [lo, hi) (hi NULL: to the end) and checks the keys, in order. */
static inline void
expect_scan(const void *lo, size_t lol, const void *hi, size_t hil,
    const char *const *keys, size_t n)
{
	collected c = { 0 };

	cr_assert_eq(scan(lo, lol, hi, hil, collect, &c), KV_OK);
	cr_assert_eq(c.n, n, "scan saw %zu keys, want %zu", c.n, n);
	for (size_t i = 0; i < n; i++) {
		cr_assert_eq(c.p[i].kl, strlen(keys[i]), "key %zu", i);
		cr_assert_arr_eq(c.p[i].k, keys[i], c.p[i].kl, "key %zu", i);
	}
	collected_fini(&c);
}

#endif
