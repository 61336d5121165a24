/*
 * store_test.c — the store interface (node/store/store.h) run over both engines:
 * every STORE_TEST below becomes one test on RocksDB (in a fresh mkdtemp
 * directory) and one on the in-memory engine, so the two cannot drift
 * apart. Covers point reads and writes, binary keys, batch order and
 * atomicity, delete-range bounds, scan order and bounds, write stamps, a
 * seeded random model test and sorted loads (a move's copy). The node's
 * records in a family of their own and durability across close, open and
 * kill are store_rocks_test.c's.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_fixture.h"

/* ---- lifecycle ---- */

/* Closing a store that was never written must be clean (run under UBSan). */
STORE_TEST(close_of_untouched_store_is_clean)
{
	store_close(S);
	S = NULL;
	store_close(NULL); /* accepts NULL */
}

STORE_TEST(close_of_emptied_store_is_clean)
{
	put("k", 1, "v", 1);
	del("k", 1);
	expect_scan("", 0, NULL, 0, NULL, 0);
	store_close(S);
	S = NULL;
}

/* ---- point reads and writes ---- */

STORE_TEST(get_missing_is_not_found)
{
	expect_missing("nothing", 7);
	expect_missing("\x00", 1);
}

STORE_TEST(put_then_get_round_trips)
{
	put("alpha", 5, "one", 3);
	put("beta", 4, "two", 3);
	expect_value("alpha", 5, "one", 3);
	expect_value("beta", 4, "two", 3);
	expect_missing("alph", 4);
	expect_missing("alphab", 6);
}

STORE_TEST(empty_value_is_found)
{
	put("empty", 5, "", 0);
	expect_value("empty", 5, "", 0);
	collected c = { 0 };
	cr_assert_eq(scan("", 0, NULL, 0, collect, &c), KV_OK);
	cr_assert_eq(c.n, 1);
	cr_assert_eq(c.p[0].vl, 0);
	collected_fini(&c);
}

STORE_TEST(binary_keys_and_values_round_trip)
{
	static const uint8_t k1[] = { 0x00 };
	static const uint8_t k2[] = { 0x00, 0x00 };
	static const uint8_t k3[] = { 0xff };
	static const uint8_t k4[] = { 0xff, 0x00, 0xff };
	static const uint8_t k5[] = { 0x00, 0xff, 0x00 };
	static const uint8_t v[] = { 0x00, 0xff, 0x00, 0x01, 0x80 };

	put(k1, sizeof(k1), v, 1);
	put(k2, sizeof(k2), v, 2);
	put(k3, sizeof(k3), v, 3);
	put(k4, sizeof(k4), v, 4);
	put(k5, sizeof(k5), v, 5);
	expect_value(k1, sizeof(k1), v, 1);
	expect_value(k2, sizeof(k2), v, 2);
	expect_value(k3, sizeof(k3), v, 3);
	expect_value(k4, sizeof(k4), v, 4);
	expect_value(k5, sizeof(k5), v, 5);
	/* A key with a NUL is not cut short at it. */
	static const uint8_t k6[] = { 0x00, 0x01 };
	expect_missing(k6, sizeof(k6));
}

STORE_TEST(overwrite_replaces_value)
{
	put("k", 1, "first value", 11);
	put("k", 1, "2nd", 3);
	expect_value("k", 1, "2nd", 3);
	put("k", 1, "", 0);
	expect_value("k", 1, "", 0);
	expect_scan("", 0, NULL, 0, (const char *[]) { "k" }, 1);
}

STORE_TEST(delete_removes_only_that_key)
{
	put("a", 1, "1", 1);
	put("ab", 2, "2", 1);
	put("b", 1, "3", 1);
	del("ab", 2);
	expect_missing("ab", 2);
	expect_value("a", 1, "1", 1);
	expect_value("b", 1, "3", 1);
	/* Deleting a missing key is not an error. */
	del("zz", 2);
	del("ab", 2);
	expect_scan("", 0, NULL, 0, (const char *[]) { "a", "b" }, 2);
}

/* ---- batches ---- */

STORE_TEST(batch_applies_every_op)
{
	store_batch b;

	put("gone", 4, "x", 1);
	put("r1", 2, "x", 1);
	put("r2", 2, "x", 1);
	put("r3", 2, "x", 1);
	store_batch_init(&b);
	cr_assert_eq(badd(&b, STORE_PUT, "a", 1, "A", 1), KV_OK);
	cr_assert_eq(badd(&b, STORE_PUT, "b", 1, "B", 1), KV_OK);
	cr_assert_eq(badd(&b, STORE_DELETE, "gone", 4, NULL, 0),
	    KV_OK);
	cr_assert_eq(badd(&b, STORE_DELETE_RANGE, "r1", 2, "r3", 2),
	    KV_OK);
	/* More ops than the batch's first allocation. */
	for (int i = 0; i < 20; i++) {
		static char keys[20][4];
		snprintf(keys[i], sizeof(keys[i]), "c%02d", i);
		cr_assert_eq(badd(&b, STORE_PUT,
		    (const uint8_t *) keys[i], 3, (const uint8_t *) "C", 1),
		    KV_OK);
	}
	cr_assert_eq(b.n, 24);
	cr_assert_eq(store_write(S, &b), KV_OK);
	store_batch_fini(&b);
	cr_assert_eq(b.n, 0);
	cr_assert_null(b.ops);

	expect_value("a", 1, "A", 1);
	expect_value("b", 1, "B", 1);
	expect_missing("gone", 4);
	expect_missing("r1", 2);
	expect_missing("r2", 2);
	expect_value("r3", 2, "x", 1);
	for (int i = 0; i < 20; i++) {
		char k[4];
		snprintf(k, sizeof(k), "c%02d", i);
		expect_value(k, 3, "C", 1);
	}
}

STORE_TEST(batch_ops_apply_in_order)
{
	store_batch b;

	store_batch_init(&b);
	/* put then delete: gone; delete then put: present; put twice: last. */
	badd(&b, STORE_PUT, "x", 1, "1", 1);
	badd(&b, STORE_DELETE, "x", 1, NULL, 0);
	badd(&b, STORE_DELETE, "y", 1, NULL, 0);
	badd(&b, STORE_PUT, "y", 1, "2", 1);
	badd(&b, STORE_PUT, "z", 1, "3", 1);
	badd(&b, STORE_PUT, "z", 1, "4", 1);
	badd(&b, STORE_PUT, "w1", 2, "5", 1);
	badd(&b, STORE_DELETE_RANGE, "w", 1, "x", 1);
	badd(&b, STORE_PUT, "w2", 2, "6", 1);
	cr_assert_eq(store_write(S, &b), KV_OK);
	store_batch_fini(&b);
	expect_missing("x", 1);
	expect_value("y", 1, "2", 1);
	expect_value("z", 1, "4", 1);
	expect_missing("w1", 2);
	expect_value("w2", 2, "6", 1);
}

STORE_TEST(empty_batch_is_a_no_op)
{
	store_batch b;

	put("k", 1, "v", 1);
	store_batch_init(&b);
	cr_assert_eq(store_write(S, &b), KV_OK);
	store_batch_fini(&b);
	expect_scan("", 0, NULL, 0, (const char *[]) { "k" }, 1);
}

/*
 * A writer sets keys "pa" and "pb" to the same counter in one batch per
 * step; a reader scanning ["p", "q") must never see them differ or see
 * only one of them.
 */
typedef struct atom_ctx {
	volatile bool done;
	int torn;
	int scans;
} atom_ctx;

typedef struct pair_seen {
	int n;
	char v[2][16];
	size_t vl[2];
} pair_seen;

static bool
see_pair(void *arg, const uint8_t *k, size_t kl, const uint8_t *v, size_t vl)
{
	pair_seen *s = arg;

	if (s->n < 2 && vl < sizeof(s->v[0])) {
		memcpy(s->v[s->n], v, vl);
		s->vl[s->n] = vl;
	}
	s->n++;
	return true;
}

static void *
atom_reader(void *arg)
{
	atom_ctx *c = arg;

	while (!__atomic_load_n(&c->done, __ATOMIC_ACQUIRE)) {
		pair_seen s = { 0 };
		if (scan("p", 1, "q", 1, see_pair, &s) != KV_OK) {
			c->torn++;
			continue;
		}
		c->scans++;
		if (s.n == 0)
			continue;
		if (s.n != 2 || s.vl[0] != s.vl[1] ||
		    memcmp(s.v[0], s.v[1], s.vl[0]) != 0)
			c->torn++;
	}
	return NULL;
}

STORE_TEST(batch_is_visible_all_at_once)
{
	atom_ctx c = { 0 };
	pthread_t t;

	cr_assert_eq(pthread_create(&t, NULL, atom_reader, &c), 0);
	for (int i = 0; i < 3000; i++) {
		char v[16];
		int vl = snprintf(v, sizeof(v), "%d", i);
		store_batch b;

		store_batch_init(&b);
		badd(&b, STORE_PUT, "pa", 2, v, (size_t) vl);
		badd(&b, STORE_PUT, "pb", 2, v, (size_t) vl);
		cr_assert_eq(store_write(S, &b), KV_OK);
		store_batch_fini(&b);
	}
	__atomic_store_n(&c.done, true, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	cr_assert_eq(c.torn, 0, "%d of %d scans saw half a batch", c.torn,
	    c.scans);
	expect_value("pa", 2, "2999", 4);
	expect_value("pb", 2, "2999", 4);
}

/* ---- delete-range ---- */

STORE_TEST(delete_range_is_half_open)
{
	static const char *keys[] = { "a", "b", "b\x00", "ba", "bz", "c",
		"c\x00", "d" };
	static const size_t lens[] = { 1, 1, 2, 2, 2, 1, 2, 1 };

	for (size_t i = 0; i < 8; i++)
		put(keys[i], lens[i], "v", 1);
	del_range("b", 1, "c", 1);
	expect_value("a", 1, "v", 1);
	expect_missing("b", 1);
	expect_missing("b\x00", 2);
	expect_missing("ba", 2);
	expect_missing("bz", 2);
	expect_value("c", 1, "v", 1);     /* hi itself is kept */
	expect_value("c\x00", 2, "v", 1); /* and what follows it */
	expect_value("d", 1, "v", 1);
}

STORE_TEST(delete_range_with_binary_bounds)
{
	static const uint8_t k0[] = { 0x00 };
	static const uint8_t k1[] = { 0x00, 0xff };
	static const uint8_t k2[] = { 0x01 };
	static const uint8_t k3[] = { 0xfe, 0xff, 0xff };
	static const uint8_t k4[] = { 0xff };
	static const uint8_t k5[] = { 0xff, 0x00 };
	static const uint8_t lo[] = { 0x00, 0x00 };
	static const uint8_t hi[] = { 0xff };

	put(k0, 1, "v", 1);
	put(k1, 2, "v", 1);
	put(k2, 1, "v", 1);
	put(k3, 3, "v", 1);
	put(k4, 1, "v", 1);
	put(k5, 2, "v", 1);
	del_range(lo, sizeof(lo), hi, sizeof(hi));
	expect_value(k0, 1, "v", 1); /* 00 < 00 00 */
	expect_missing(k1, 2);
	expect_missing(k2, 1);
	expect_missing(k3, 3);
	expect_value(k4, 1, "v", 1);
	expect_value(k5, 2, "v", 1);
}

STORE_TEST(delete_range_of_nothing_changes_nothing)
{
	put("a", 1, "v", 1);
	put("z", 1, "v", 1);
	del_range("b", 1, "y", 1); /* holds no key */
	del_range("m", 1, "m", 1); /* empty range */
	expect_scan("", 0, NULL, 0, (const char *[]) { "a", "z" }, 2);
}

/* ---- scans ---- */

STORE_TEST(scan_is_in_bytewise_order)
{
	/* Inserted out of order; 0x80 and 0xff sort after ASCII (unsigned). */
	static const uint8_t keys[][3] = {
		{ 0xff, 0, 0 }, { 'b', 0, 0 }, { 0x80, 0, 0 }, { 0x00, 0, 0 },
		{ 'a', 'a', 0 }, { 'a', 0, 0 }, { 0x7f, 0, 0 },
		{ 0x00, 0x00, 0 }, { 'a', 0x00, 0 },
	};
	static const size_t lens[] = { 1, 1, 1, 1, 2, 1, 1, 2, 2 };
	static const char *const want[] = { "\x00", "\x00\x00", "a",
		"a\x00", "aa", "b", "\x7f", "\x80", "\xff" };
	static const size_t want_len[] = { 1, 2, 1, 2, 2, 1, 1, 1, 1 };
	collected c = { 0 };

	for (size_t i = 0; i < 9; i++)
		put(keys[i], lens[i], keys[i], lens[i]);
	cr_assert_eq(scan("", 0, NULL, 0, collect, &c), KV_OK);
	cr_assert_eq(c.n, 9);
	for (size_t i = 0; i < 9; i++) {
		cr_assert_eq(c.p[i].kl, want_len[i], "key %zu", i);
		cr_assert_arr_eq(c.p[i].k, want[i], want_len[i], "key %zu", i);
		/* The value is the key: the scan pairs them correctly. */
		cr_assert_eq(c.p[i].vl, want_len[i]);
		cr_assert_arr_eq(c.p[i].v, want[i], want_len[i]);
	}
	collected_fini(&c);
}

STORE_TEST(scan_honours_half_open_bounds)
{
	static const char *const all[] = { "a", "b", "ba", "bb", "c", "d" };

	for (size_t i = 0; i < 6; i++)
		put(all[i], strlen(all[i]), "v", 1);
	expect_scan("b", 1, "c", 1, all + 1, 3);  /* lo in, hi out */
	expect_scan("ba", 2, "bb", 2, all + 2, 1);
	expect_scan("b\x00", 2, "c\x00", 2, all + 2, 3); /* between keys */
	expect_scan("0", 1, "a", 1, NULL, 0);     /* before everything */
	expect_scan("c", 1, "c", 1, NULL, 0);     /* empty range */
	expect_scan("e", 1, NULL, 0, NULL, 0);    /* after everything */
	expect_scan("c", 1, NULL, 0, all + 4, 2); /* hi NULL: to the end */
	expect_scan("", 0, NULL, 0, all, 6);
	expect_scan("", 0, "b", 1, all, 1);
}

STORE_TEST(scan_stops_when_callback_returns_false)
{
	collected c = { .stop_after = 3 };

	for (char k = 'a'; k <= 'j'; k++)
		put(&k, 1, "v", 1);
	cr_assert_eq(scan("", 0, NULL, 0, collect, &c), KV_OK);
	cr_assert_eq(c.n, 3, "callback called %zu times after false", c.n);
	cr_assert_eq(c.p[2].k[0], 'c');
	collected_fini(&c);

	c = (collected) { .stop_after = 1 };
	cr_assert_eq(scan("e", 1, "h", 1, collect, &c), KV_OK);
	cr_assert_eq(c.n, 1);
	cr_assert_eq(c.p[0].k[0], 'e');
	collected_fini(&c);
}

/*
 * A snapshot scan's callback writes into the scanned range (it changes a
 * key not seen yet, deletes one, adds one): the scan still sees the
 * range as it was when it began, and the writes are there afterwards.
 */
static bool
snap_writer(void *arg, const uint8_t *k, size_t kl, const uint8_t *v,
    size_t vl)
{
	collected *c = arg;
	if (c->n == 0) {
		put("d", 1, "new", 3);
		del("e", 1);
		put("cc", 2, "added", 5);
	}
	return collect(arg, k, kl, v, vl);
}

STORE_TEST(snapshot_scan_sees_the_range_as_it_began)
{
	static const char *const keys[] = { "a", "b", "c", "d", "e" };
	collected c = { 0 };

	for (size_t i = 0; i < 5; i++)
		put(keys[i], 1, "old", 3);
	cr_assert_eq(store_scan_snap(S, (const uint8_t *) "", 0, NULL, 0,
	    snap_writer, &c), KV_OK);
	cr_assert_eq(c.n, 5);
	for (size_t i = 0; i < 5; i++) {
		cr_assert_eq(c.p[i].kl, 1);
		cr_assert_eq(c.p[i].k[0], keys[i][0]);
		cr_assert_eq(c.p[i].vl, 3);
		cr_assert_arr_eq(c.p[i].v, "old", 3);
	}
	collected_fini(&c);
	expect_value("d", 1, "new", 3);
	expect_missing("e", 1);
	expect_value("cc", 2, "added", 5);
}

STORE_TEST(scan_of_empty_store_calls_nothing)
{
	expect_scan("", 0, NULL, 0, NULL, 0);
	expect_scan("a", 1, "b", 1, NULL, 0);
}

/* ---- write stamps ---- */

/*
 * A key's stamp holds while nothing writes it and moves on with every
 * write of it, with any range deletion, with a sorted load of it (in
 * RocksDB, whose loads list no keys, with any load), and across a
 * reopen; a write of a key in another slot leaves it (the slots are
 * 65,536: the test finds a key in another one by trying).
 */
STORE_TEST(write_stamps_move_with_writes_of_the_key)
{
	uint64_t st, st2;
	cr_assert(store_stamp_take(S, (const uint8_t *) "k", 1, &st));
	cr_assert(store_stamp_same(S, (const uint8_t *) "k", 1, st));
	put("k", 1, "v", 1);
	cr_assert(!store_stamp_same(S, (const uint8_t *) "k", 1, st));
	cr_assert(store_stamp_take(S, (const uint8_t *) "k", 1, &st));
	/* Another key: many of them, of which most are in other slots. */
	size_t same = 0;
	for (int i = 0; i < 64; i++) {
		char k[16];
		int kl = snprintf(k, sizeof(k), "other%d", i);
		put(k, (size_t) kl, "v", 1);
		same += store_stamp_same(S, (const uint8_t *) "k", 1, st);
		cr_assert(store_stamp_take(S, (const uint8_t *) "k", 1, &st));
	}
	cr_assert_geq(same, 60, "writes of other keys moved the stamp %zu "
	    "times in 64", 64 - same);
	del("k", 1);
	cr_assert(!store_stamp_same(S, (const uint8_t *) "k", 1, st));
	cr_assert(store_stamp_take(S, (const uint8_t *) "k", 1, &st));
	del_range("x", 1, "y", 1);
	cr_assert(!store_stamp_same(S, (const uint8_t *) "k", 1, st));
	cr_assert(store_stamp_take(S, (const uint8_t *) "z", 1, &st));
	store_load *l;
	cr_assert_eq(store_load_open(S, &l), KV_OK);
	cr_assert_eq(store_load_put(l, (const uint8_t *) "z", 1,
	    (const uint8_t *) "v", 1), KV_OK);
	cr_assert_eq(store_load_finish(l), KV_OK);
	cr_assert(!store_stamp_same(S, (const uint8_t *) "z", 1, st));
	if (e == ENGINE_ROCKS) {
		cr_assert(store_stamp_take(S, (const uint8_t *) "k", 1, &st));
		reopen_rocks();
		cr_assert(store_stamp_take(S, (const uint8_t *) "k", 1, &st2));
		cr_assert_neq(st, st2, "a stamp outlived a reopen");
	}
}

/*
 * A range deletion moves on the stamps of its domain only (store.h): one
 * within one kind of the node's records (an index outbox's, here kind
 * 'O') leaves the stamps of items and of another kind ('T', a
 * transaction's) as they were, and so does a write of one of those
 * records; a range within the tables leaves the node's records; a range
 * across kinds moves everything on.
 */
STORE_TEST(write_stamps_of_items_outlive_ranges_of_node_records)
{
	static const uint8_t item[] = { 0, 0, 0, 7, 'a' };
	static const uint8_t txn[] = { 0, 0, 0, 0, 'T', 1, 2 };
	static const uint8_t o_lo[] = { 0, 0, 0, 0, 'O', 1 };
	static const uint8_t o_hi[] = { 0, 0, 0, 0, 'O', 9 };
	static const uint8_t o_rec[] = { 0, 0, 0, 0, 'O', 3 };
	static const uint8_t p_kind[] = { 0, 0, 0, 0, 'P' };
	static const uint8_t t_lo[] = { 0, 0, 0, 7 };
	static const uint8_t t_hi[] = { 0, 0, 0, 8 };
	uint64_t si, st;

	cr_assert(store_stamp_take(S, item, sizeof(item), &si));
	cr_assert(store_stamp_take(S, txn, sizeof(txn), &st));
	for (int i = 0; i < 64; i++) {
		put(o_rec, sizeof(o_rec), "v", 1);
		del_range(o_lo, sizeof(o_lo), o_hi, sizeof(o_hi));
	}
	cr_assert(store_stamp_same(S, item, sizeof(item), si),
	    "an outbox's records moved an item's stamp");
	cr_assert(store_stamp_same(S, txn, sizeof(txn), st),
	    "an outbox's range moved a transaction record's stamp");
	del_range(t_lo, sizeof(t_lo), t_hi, sizeof(t_hi));
	cr_assert(!store_stamp_same(S, item, sizeof(item), si));
	cr_assert(store_stamp_same(S, txn, sizeof(txn), st));
	cr_assert(store_stamp_take(S, item, sizeof(item), &si));
	/* From the outbox's records to the next kind: across domains. */
	del_range(o_lo, sizeof(o_lo), p_kind, sizeof(p_kind));
	cr_assert(!store_stamp_same(S, item, sizeof(item), si));
	cr_assert(!store_stamp_same(S, txn, sizeof(txn), st));
}

/* ---- random model test ---- */

/* xorshift64*: a PRNG of our own so that seeds mean the same everywhere. */
static uint64_t rng_state;

static uint64_t
rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1DULL;
}

static size_t
rnd(size_t n)
{
	return n == 0 ? 0 : (size_t) (rng() % n);
}

/*
 * Keys are 0..4 bytes over a small alphabet that includes 0x00 and 0xff,
 * so that collisions, prefixes and extreme bytes are common.
 */
static size_t
random_key(uint8_t *k)
{
	static const uint8_t alpha[] = { 0x00, 0x01, 'a', 0x7f, 0x80, 0xff };
	size_t n = rnd(5);

	for (size_t i = 0; i < n; i++)
		k[i] = alpha[rnd(sizeof(alpha))];
	return n;
}

/* The model: a sorted array of owned pairs. */
typedef struct model {
	kvpair *p;
	size_t n, cap;
} model;

static size_t
model_lower(const model *m, const uint8_t *k, size_t kl)
{
	size_t i = 0;
	while (i < m->n && bytecmp(m->p[i].k, m->p[i].kl, k, kl) < 0)
		i++;
	return i;
}

static void
model_put(model *m, const uint8_t *k, size_t kl, const uint8_t *v, size_t vl)
{
	size_t i = model_lower(m, k, kl);

	if (i < m->n && bytecmp(m->p[i].k, m->p[i].kl, k, kl) == 0) {
		free(m->p[i].v);
	} else {
		if (m->n == m->cap) {
			m->cap = m->cap == 0 ? 64 : m->cap * 2;
			m->p = realloc(m->p, m->cap * sizeof(*m->p));
		}
		memmove(&m->p[i + 1], &m->p[i], (m->n - i) * sizeof(*m->p));
		m->n++;
		m->p[i].k = malloc(kl + 1);
		memcpy(m->p[i].k, k, kl);
		m->p[i].kl = kl;
	}
	m->p[i].v = malloc(vl + 1);
	memcpy(m->p[i].v, v, vl);
	m->p[i].vl = vl;
}

static void
model_erase(model *m, size_t i, size_t j)
{
	for (size_t x = i; x < j; x++) {
		free(m->p[x].k);
		free(m->p[x].v);
	}
	memmove(&m->p[i], &m->p[j], (m->n - j) * sizeof(*m->p));
	m->n -= j - i;
}

static void
model_delete(model *m, const uint8_t *k, size_t kl)
{
	size_t i = model_lower(m, k, kl);
	if (i < m->n && bytecmp(m->p[i].k, m->p[i].kl, k, kl) == 0)
		model_erase(m, i, i + 1);
}

static void
model_delete_range(model *m, const uint8_t *lo, size_t lol,
    const uint8_t *hi, size_t hil)
{
	size_t i = model_lower(m, lo, lol), j = model_lower(m, hi, hil);
	if (j > i)
		model_erase(m, i, j);
}

static void
model_fini(model *m)
{
	model_erase(m, 0, m->n);
	free(m->p);
}

/* Checks a scan of [lo, hi) against the model. */
static void
check_scan(const model *m, const uint8_t *lo, size_t lol, const uint8_t *hi,
    size_t hil, int step)
{
	collected c = { 0 };
	size_t i = model_lower(m, lo, lol);
	size_t j = hi == NULL ? m->n : model_lower(m, hi, hil);

	if (j < i)
		j = i;
	cr_assert_eq(scan(lo, lol, hi, hil, collect, &c), KV_OK);
	cr_assert_eq(c.n, j - i, "step %d: scan saw %zu keys, model %zu",
	    step, c.n, j - i);
	for (size_t x = 0; x < c.n; x++) {
		const kvpair *w = &m->p[i + x], *g = &c.p[x];
		cr_assert(bytecmp(g->k, g->kl, w->k, w->kl) == 0,
		    "step %d: key %zu differs", step, x);
		cr_assert(bytecmp(g->v, g->vl, w->v, w->vl) == 0,
		    "step %d: value %zu differs", step, x);
	}
	collected_fini(&c);
}

STORE_TEST(random_ops_match_a_model)
{
	model m = { 0 };
	/* The batch borrows its keys and values: keep them until written. */
	uint8_t keys[8][2][4], vals[8][32];

	rng_state = 0x9e3779b97f4a7c15ULL;
	for (int step = 0; step < 2000; step++) {
		store_batch b;
		size_t nops = rnd(4) == 0 ? 1 + rnd(8) : 1;

		store_batch_init(&b);
		for (size_t o = 0; o < nops; o++) {
			size_t kl = random_key(keys[o][0]);
			size_t r = rnd(10);
			if (r < 6) {
				size_t vl = rnd(sizeof(vals[o]));
				for (size_t i = 0; i < vl; i++)
					vals[o][i] = (uint8_t) rng();
				badd(&b, STORE_PUT, keys[o][0], kl,
				    vals[o], vl);
				model_put(&m, keys[o][0], kl, vals[o], vl);
			} else if (r < 9) {
				badd(&b, STORE_DELETE, keys[o][0],
				    kl, NULL, 0);
				model_delete(&m, keys[o][0], kl);
			} else {
				size_t hl = random_key(keys[o][1]);
				const uint8_t *lo = keys[o][0];
				const uint8_t *hi = keys[o][1];
				size_t lol = kl, hil = hl;
				if (bytecmp(lo, lol, hi, hil) > 0) {
					const uint8_t *t = lo;
					size_t tl = lol;
					lo = hi, lol = hil;
					hi = t, hil = tl;
				}
				badd(&b, STORE_DELETE_RANGE, lo,
				    lol, hi, hil);
				model_delete_range(&m, lo, lol, hi, hil);
			}
		}
		cr_assert_eq(store_write(S, &b), KV_OK, "step %d", step);
		store_batch_fini(&b);

		/* Spot checks: one get, and now and then a bounded scan. */
		uint8_t k[4], h[4];
		size_t kl = random_key(k);
		size_t i = model_lower(&m, k, kl);
		if (i < m.n && bytecmp(m.p[i].k, m.p[i].kl, k, kl) == 0)
			expect_value(k, kl, m.p[i].v, m.p[i].vl);
		else
			expect_missing(k, kl);
		if (step % 50 == 0) {
			size_t hl = random_key(h);
			const uint8_t *hi = rnd(4) == 0 ? NULL : h;
			check_scan(&m, k, kl, hi, hl, step);
		}
	}
	cr_assert_gt(m.n, 10, "the model should end up non-trivial");
	check_scan(&m, (const uint8_t *) "", 0, NULL, 0, 2000);
	if (e == ENGINE_ROCKS) {
		reopen_rocks();
		check_scan(&m, (const uint8_t *) "", 0, NULL, 0, 2001);
	}
	model_fini(&m);
}

/*
 * Scans within one item collection (lo and hi share the 12-byte prefix:
 * table id and hash) read in RocksDB's prefix mode, which skips the files
 * whose bloom filter lacks the collection. Every such scan, forward and
 * backward, must still see exactly the collection's keys in the range,
 * whether they sit in the memtable, a new file or an old one, beside
 * neighbouring collections whose prefixes differ in one byte.
 */
static void
collection_prefix(int c, uint8_t p[12])
{
	memset(p, 0, 12);
	p[3] = 7;                     /* the table id */
	p[4 + (c % 8)] = (uint8_t) (c / 8 + 1); /* hashes one byte apart */
	p[11] |= (uint8_t) (c & 1);
}

static void
check_scan_rev(const model *m, const uint8_t *lo, size_t lol,
    const uint8_t *hi, size_t hil)
{
	collected c = { 0 };
	size_t i = model_lower(m, lo, lol), j = model_lower(m, hi, hil);

	if (j < i)
		j = i;
	cr_assert_eq(store_scan_rev(S, lo, lol, hi, hil, collect, &c), KV_OK);
	cr_assert_eq(c.n, j - i, "backward scan saw %zu keys, model %zu", c.n,
	    j - i);
	for (size_t x = 0; x < c.n; x++)
		cr_assert(bytecmp(c.p[x].k, c.p[x].kl, m->p[j - 1 - x].k,
		    m->p[j - 1 - x].kl) == 0, "backward key %zu differs", x);
	collected_fini(&c);
}

static void
load_put(store_load *l, const char *k, const char *v)
{
	cr_assert_eq(store_load_put(l, (const uint8_t *) k, strlen(k),
	    (const uint8_t *) v, v != NULL ? strlen(v) : 0), KV_OK);
}

/*
 * A sorted load (a move's copy into a cleared range): nothing shows until
 * it finishes, then all of it at once, above what was written before;
 * an aborted one leaves nothing.
 */
STORE_TEST(sorted_load_applies_at_finish)
{
	(void) e;
	put("k2", 2, "old", 3);
	put("k3", 2, "gone", 4);
	put("k5", 2, "cleared", 7);
	del_range("k4", 2, "k6", 2);
	store_load *l;
	cr_assert_eq(store_load_open(S, &l), KV_OK);
	load_put(l, "k1", "a");
	load_put(l, "k2", "b");
	load_put(l, "k3", NULL);
	load_put(l, "k4", "c");
	expect_missing("k1", 2);
	expect_value("k2", 2, "old", 3);
	cr_assert_eq(store_load_finish(l), KV_OK);
	expect_value("k1", 2, "a", 1);
	expect_value("k2", 2, "b", 1);
	expect_missing("k3", 2);
	expect_value("k4", 2, "c", 1);
	expect_missing("k5", 2);
	/* Written after it: above it. */
	put("k1", 2, "later", 5);
	expect_value("k1", 2, "later", 5);
	cr_assert_eq(store_load_open(S, &l), KV_OK);
	load_put(l, "k8", "x");
	load_put(l, "k9", "y");
	store_load_abort(l);
	expect_missing("k8", 2);
	expect_missing("k9", 2);
	/* An empty load is no error. */
	cr_assert_eq(store_load_open(S, &l), KV_OK);
	cr_assert_eq(store_load_finish(l), KV_OK);
}

static bool
count_one(void *arg, const uint8_t *k, size_t kl, const uint8_t *v, size_t vl)
{
	(void) k;
	(void) kl;
	(void) v;
	(void) vl;
	(*(uint64_t *) arg)++;
	return true;
}

static int
load_files_in(const char *d)
{
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "test -z \"$(ls %s | grep kvload-)\"", d);
	return system(cmd) == 0 ? 0 : 1;
}

Test(store, rocks_sorted_load_spans_files_and_leaves_none)
{
	open_engine(ENGINE_ROCKS);
	/* 40 MB: more than one of the load's files. */
	static char v[4096];
	memset(v, 'v', sizeof(v) - 1);
	store_load *l;
	cr_assert_eq(store_load_open(S, &l), KV_OK);
	for (int i = 0; i < 10000; i++) {
		char k[16];
		snprintf(k, sizeof(k), "key%06d", i);
		load_put(l, k, v);
	}
	cr_assert_eq(load_files_in(dir), 1, "files while it is open");
	cr_assert_eq(store_load_finish(l), KV_OK);
	cr_assert_eq(load_files_in(dir), 0, "files left after it");
	uint64_t n = 0;
	cr_assert_eq(scan("key", 3, "kez", 3, count_one, &n), KV_OK);
	cr_assert_eq(n, 10000);
	expect_value("key004321", 9, v, sizeof(v) - 1);
	/* A dead process's files are deleted at the next open. */
	char stray[128];
	snprintf(stray, sizeof(stray), "%s/kvload-77.sst", dir);
	FILE *f = fopen(stray, "w");
	cr_assert_not_null(f);
	fclose(f);
	reopen_rocks();
	cr_assert_eq(load_files_in(dir), 0);
	expect_value("key000000", 9, v, sizeof(v) - 1);
}

Test(store, rocks_collection_scans_see_every_file)
{
	model m = { 0 };
	enum { COLLS = 40, ROUNDS = 4 };

	open_engine(ENGINE_ROCKS);
	rng_state = 0x5eed5eed5eedULL;
	for (int round = 0; round < ROUNDS; round++) {
		/* Each round writes some collections, deletes a few keys;
		 * a reopen turns the memtable into a file of its own, so
		 * the last round's keys stay in the memtable. */
		for (int c = round; c < COLLS; c += 1 + round) {
			uint8_t k[14], v[8];
			collection_prefix(c, k);
			for (int sk = 0; sk < 12; sk++) {
				k[12] = (uint8_t) rnd(16);
				k[13] = (uint8_t) sk;
				size_t kl = rnd(3) == 0 ? 13 : 14;
				for (size_t i = 0; i < sizeof(v); i++)
					v[i] = (uint8_t) rng();
				if (rnd(5) == 0) {
					del(k, kl);
					model_delete(&m, k, kl);
				} else {
					put(k, kl, v, sizeof(v));
					model_put(&m, k, kl, v, sizeof(v));
				}
			}
			put(k, 12, "p", 1); /* the bare prefix is a key too */
			model_put(&m, k, 12, (const uint8_t *) "p", 1);
			/* Shorter keys beside the collections, where a scan
			 * stepping out of one lands. */
			size_t sl = 4 + (size_t) c % 8;
			put(k, sl, "s", 1);
			model_put(&m, k, sl, (const uint8_t *) "s", 1);
		}
		if (round < ROUNDS - 1)
			reopen_rocks();
	}
	for (int c = 0; c < COLLS; c++) {
		uint8_t lo[14], hi[14];
		collection_prefix(c, lo);
		collection_prefix(c, hi);
		/* The whole collection: [prefix, prefix ff ff). */
		hi[12] = hi[13] = 0xff;
		check_scan(&m, lo, 12, hi, 14, c);
		check_scan_rev(&m, lo, 12, hi, 14);
		/* A slice of it. */
		lo[12] = (uint8_t) rnd(16);
		hi[12] = (uint8_t) (lo[12] + rnd(8));
		check_scan(&m, lo, 13, hi, 13, c);
		check_scan_rev(&m, lo, 13, hi, 13);
		/* From the collection to the end of the table: across
		 * collections, in total order. */
		uint8_t end[12] = { 0, 0, 0, 8 };
		check_scan(&m, lo, 12, end, sizeof(end), c);
		check_scan_rev(&m, lo, 12, end, sizeof(end));
	}
	model_fini(&m);
}
