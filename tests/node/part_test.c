/*
 * part_test.c — the node's partition registry (node/part.c): adding,
 * finding and removing partitions, the route check (table, id, epoch and
 * hash range) that every data verb relies on, the metadata record layout
 * of part.h, part_map_load restoring exactly what the records hold, and
 * part_map_recover/part_map_save: counters from the records after a
 * clean stop, counted again from the items after any other.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdlib.h>
#include <string.h>

#include "keyenc.h"
#include "part.h"

static part_map M;
static store *S;

static void
setup(void)
{
	part_map_init(&M);
	S = NULL;
}

static void
teardown(void)
{
	part_map_fini(&M);
	store_close(S);
	S = NULL;
}

TestSuite(part, .init = setup, .fini = teardown);

static part *
add(uint32_t table_id, uint32_t id, uint64_t lo, uint64_t last,
    uint64_t epoch)
{
	part *p = NULL;

	pthread_rwlock_wrlock(&M.lock);
	cr_assert_eq(part_map_add_locked(&M, table_id, id, lo, last, epoch,
	    &p), KV_OK);
	pthread_rwlock_unlock(&M.lock);
	cr_assert_not_null(p);
	return p;
}

static kv_err
check(uint32_t table_id, uint32_t id, uint64_t epoch, uint64_t h, part **out)
{
	pthread_rwlock_rdlock(&M.lock);
	kv_err rv = part_map_check_locked(&M, table_id, id, epoch, h, out);
	pthread_rwlock_unlock(&M.lock);
	return rv;
}

static part *
find(uint32_t table_id, uint32_t id)
{
	pthread_rwlock_rdlock(&M.lock);
	part *p = part_map_find_locked(&M, table_id, id);
	pthread_rwlock_unlock(&M.lock);
	return p;
}

Test(part, empty_map_finds_nothing)
{
	part *p = (part *) 0x1;

	cr_assert_null(find(1, 0));
	cr_assert_eq(check(1, 0, 1, 0, &p), KV_STALE_ROUTE);
	cr_assert_eq(p, (part *) 0x1, "*out must be left alone on failure");
	cr_assert_eq(M.n, 0);
}

Test(part, add_then_find_returns_the_partition)
{
	part *a = add(7, 3, 100, 199, 5);

	cr_assert_eq(a->table_id, 7);
	cr_assert_eq(a->id, 3);
	cr_assert_eq(a->lo, 100);
	cr_assert_eq(a->last, 199);
	cr_assert_eq(a->epoch, 5);
	cr_assert_eq(a->items, 0);
	cr_assert_eq(a->bytes, 0);
	cr_assert_eq(find(7, 3), a);
	cr_assert_null(find(7, 4));
	cr_assert_null(find(8, 3));
	cr_assert_null(find(3, 7));
}

Test(part, check_accepts_exact_epoch_and_range)
{
	part *a = add(7, 3, 100, 199, 5), *p = NULL;

	cr_assert_eq(check(7, 3, 5, 100, &p), KV_OK);
	cr_assert_eq(p, a);
	p = NULL;
	cr_assert_eq(check(7, 3, 5, 150, &p), KV_OK);
	cr_assert_eq(p, a);
	p = NULL;
	cr_assert_eq(check(7, 3, 5, 199, &p), KV_OK); /* last is inclusive */
	cr_assert_eq(p, a);
}

struct stale_case {
	uint32_t table_id, id;
	uint64_t epoch, h;
	char why[32]; /* not a pointer: parameters cross an exec */
};

ParameterizedTestParameters(part, check_refuses_stale_routes)
{
	static struct stale_case cases[] = {
		{ 7, 3, 4, 150, "older epoch" },
		{ 7, 3, 6, 150, "newer epoch" },
		{ 7, 3, 0, 150, "epoch zero" },
		{ 7, 4, 5, 150, "other partition id" },
		{ 8, 3, 5, 150, "other table" },
		{ 0, 3, 5, 150, "table zero" },
		{ 7, 3, 5, 99, "hash just below lo" },
		{ 7, 3, 5, 200, "hash just above last" },
		{ 7, 3, 5, 0, "hash zero" },
		{ 7, 3, 5, UINT64_MAX, "hash max" },
	};
	return cr_make_param_array(struct stale_case, cases,
	    sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct stale_case *c, part, check_refuses_stale_routes)
{
	part *p = NULL;

	add(7, 3, 100, 199, 5);
	add(7, 4, 200, 299, 1); /* the neighbour, at another epoch */
	cr_assert_eq(check(c->table_id, c->id, c->epoch, c->h, &p),
	    KV_STALE_ROUTE, "%s", c->why);
	cr_assert_null(p, "%s", c->why);
}

Test(part, check_covers_the_ends_of_the_hash_space)
{
	part *a = add(1, 0, 0, UINT64_MAX / 2, 1);
	part *b = add(1, 1, UINT64_MAX / 2 + 1, UINT64_MAX, 1);
	part *p = NULL;

	cr_assert_eq(check(1, 0, 1, 0, &p), KV_OK);
	cr_assert_eq(p, a);
	cr_assert_eq(check(1, 1, 1, UINT64_MAX, &p), KV_OK);
	cr_assert_eq(p, b);
	cr_assert_eq(check(1, 0, 1, UINT64_MAX / 2 + 1, &p), KV_STALE_ROUTE);
	cr_assert_eq(check(1, 1, 1, UINT64_MAX / 2, &p), KV_STALE_ROUTE);
}

Test(part, many_partitions_grow_the_map)
{
	for (uint32_t t = 1; t <= 5; t++)
		for (uint32_t i = 0; i < 20; i++)
			add(t, i, i * 10, i * 10 + 9, t + i);
	cr_assert_eq(M.n, 100);
	for (uint32_t t = 1; t <= 5; t++) {
		for (uint32_t i = 0; i < 20; i++) {
			part *p = find(t, i);
			cr_assert_not_null(p, "table %u part %u", t, i);
			cr_assert_eq(p->lo, i * 10);
			cr_assert_eq(p->epoch, t + i);
		}
	}
}

Test(part, remove_forgets_only_that_partition)
{
	part *p[6];

	for (uint32_t i = 0; i < 6; i++)
		p[i] = add(2, i, i * 100, i * 100 + 99, 1);
	pthread_rwlock_wrlock(&M.lock);
	part_map_remove_locked(&M, p[2]); /* middle */
	part_map_remove_locked(&M, p[5]); /* last */
	part_map_remove_locked(&M, p[0]); /* first */
	pthread_rwlock_unlock(&M.lock);
	cr_assert_eq(M.n, 3);
	cr_assert_null(find(2, 0));
	cr_assert_null(find(2, 2));
	cr_assert_null(find(2, 5));
	for (uint32_t i = 1; i < 5; i += (i == 1 ? 2 : 1)) {
		part *q = find(2, i);
		cr_assert_not_null(q, "part %u", i);
		cr_assert_eq(q->lo, i * 100);
	}
	part *out = NULL;
	cr_assert_eq(check(2, 2, 1, 250, &out), KV_STALE_ROUTE);
	/* Adding it back gives a fresh partition with zero counters. */
	part *again = add(2, 2, 200, 299, 2);
	cr_assert_eq(again->items, 0);
	cr_assert_eq(check(2, 2, 2, 250, &out), KV_OK);
	cr_assert_eq(out, again);
}

Test(part, meta_key_layout_matches_part_h)
{
	uint8_t key[PART_META_KEY_LEN];
	static const uint8_t want[PART_META_KEY_LEN] = { 0, 0, 0, 0, 'P',
		0x01, 0x02, 0x03, 0x04, 0xa0, 0xb0, 0xc0, 0xd0 };

	part_meta_key(0x01020304, 0xa0b0c0d0, key);
	cr_assert_arr_eq(key, want, sizeof(want));
}

Test(part, meta_value_layout_matches_part_h)
{
	part *p = add(1, 2, 0x0102030405060708ULL, 0x1112131415161718ULL,
	    0x2122232425262728ULL);
	uint8_t val[PART_META_VAL_LEN];
	uint64_t want[5] = { 0x0102030405060708ULL, 0x1112131415161718ULL,
		0x2122232425262728ULL, 0x3132333435363738ULL,
		0x4142434445464748ULL };

	part_meta_value(p, want[3], want[4], val);
	for (int f = 0; f < 5; f++)
		for (int i = 0; i < 8; i++)
			cr_assert_eq(val[f * 8 + i],
			    (uint8_t) (want[f] >> (8 * i)),
			    "field %d byte %d", f, i);
	/* The counters written are the arguments, not p's own. */
	cr_assert_eq(p->items, 0);
}

/* ---- part_map_load ---- */

static void
open_mem(void)
{
	cr_assert_eq(store_open_mem(&S), KV_OK);
}

static void
put_raw(const void *k, size_t kl, const void *v, size_t vl)
{
	store_batch b;

	store_batch_init(&b);
	cr_assert_eq(store_batch_add(&b, STORE_PUT, k, kl, v, vl), KV_OK);
	cr_assert_eq(store_write(S, &b), KV_OK);
	store_batch_fini(&b);
}

struct want_part {
	uint32_t table_id, id;
	uint64_t lo, last, epoch, items, bytes;
};

static const struct want_part WANT[] = {
	{ 1, 0, 0, 99, 1, 0, 0 },
	{ 1, 1, 100, UINT64_MAX, 7, 12, 3456 },
	{ 2, 0, 0, UINT64_MAX, 3, 1, 42 },
	{ 0xffffff00, 0xfffffffe, 5, 6, UINT64_MAX, UINT64_MAX - 1,
	    UINT64_MAX - 2 },
	{ 300, 17, 1ULL << 63, (1ULL << 63) + 5, 2, 5, 1000 },
};
#define N_WANT (sizeof(WANT) / sizeof(WANT[0]))

/* Writes WANT's records in one batch through a scratch map. */
static void
write_metas(void)
{
	part_map scratch;
	store_batch b;
	uint8_t keys[N_WANT][PART_META_KEY_LEN];
	uint8_t vals[N_WANT][PART_META_VAL_LEN];

	part_map_init(&scratch);
	store_batch_init(&b);
	for (size_t i = 0; i < N_WANT; i++) {
		const struct want_part *w = &WANT[i];
		part *p;
		cr_assert_eq(part_map_add_locked(&scratch, w->table_id, w->id,
		    w->lo, w->last, w->epoch, &p), KV_OK);
		part_meta_key(w->table_id, w->id, keys[i]);
		part_meta_value(p, w->items, w->bytes, vals[i]);
		cr_assert_eq(store_batch_add(&b, STORE_PUT, keys[i],
		    PART_META_KEY_LEN, vals[i], PART_META_VAL_LEN), KV_OK);
	}
	cr_assert_eq(store_write(S, &b), KV_OK);
	store_batch_fini(&b);
	part_map_fini(&scratch);
}

Test(part, load_of_empty_store_adds_nothing)
{
	open_mem();
	cr_assert_eq(part_map_load(&M, S), KV_OK);
	cr_assert_eq(M.n, 0);
}

Test(part, load_restores_what_the_records_hold)
{
	open_mem();
	write_metas();
	/* Neighbours of the record range that load must ignore. */
	put_raw("\x00\x00\x00\x00" "C", 5, "catalog", 7);
	put_raw("\x00\x00\x00\x00" "O", 5, "x", 1);
	put_raw("\x00\x00\x00\x00" "Q", 5, "x", 1);
	put_raw("\x00\x00\x00\x01" "P" "0123456789ab", 17, "item", 4);
	put_raw("\x00\x00\x00", 3, "x", 1);

	cr_assert_eq(part_map_load(&M, S), KV_OK);
	cr_assert_eq(M.n, N_WANT);
	for (size_t i = 0; i < N_WANT; i++) {
		const struct want_part *w = &WANT[i];
		part *p = find(w->table_id, w->id), *q = NULL;
		cr_assert_not_null(p, "record %zu", i);
		cr_assert_eq(p->lo, w->lo, "record %zu", i);
		cr_assert_eq(p->last, w->last, "record %zu", i);
		cr_assert_eq(p->epoch, w->epoch, "record %zu", i);
		cr_assert_eq(p->items, w->items, "record %zu", i);
		cr_assert_eq(p->bytes, w->bytes, "record %zu", i);
		/* A loaded partition serves its range at its epoch. */
		cr_assert_eq(check(w->table_id, w->id, w->epoch, w->last, &q),
		    KV_OK, "record %zu", i);
		cr_assert_eq(q, p);
	}
}

Test(part, load_sees_the_latest_record)
{
	part_map scratch;
	part *p;
	uint8_t key[PART_META_KEY_LEN], val[PART_META_VAL_LEN];

	open_mem();
	part_map_init(&scratch);
	cr_assert_eq(part_map_add_locked(&scratch, 4, 1, 10, 20, 1, &p),
	    KV_OK);
	part_meta_key(4, 1, key);
	part_meta_value(p, 1, 100, val);
	put_raw(key, sizeof(key), val, sizeof(val));
	p->epoch = 2;
	part_meta_value(p, 2, 250, val);
	put_raw(key, sizeof(key), val, sizeof(val));
	part_map_fini(&scratch);

	cr_assert_eq(part_map_load(&M, S), KV_OK);
	cr_assert_eq(M.n, 1);
	p = find(4, 1);
	cr_assert_not_null(p);
	cr_assert_eq(p->epoch, 2);
	cr_assert_eq(p->items, 2);
	cr_assert_eq(p->bytes, 250);
}

struct corrupt_case {
	size_t key_len, val_len;
};

ParameterizedTestParameters(part, load_refuses_records_of_the_wrong_length)
{
	static struct corrupt_case cases[] = {
		{ PART_META_KEY_LEN, 0 },
		{ PART_META_KEY_LEN, PART_META_VAL_LEN - 1 },
		{ PART_META_KEY_LEN, PART_META_VAL_LEN + 1 },
		{ PART_META_KEY_LEN, 2 * PART_META_VAL_LEN },
		{ PART_META_KEY_LEN - 1, PART_META_VAL_LEN },
		{ PART_META_KEY_LEN + 1, PART_META_VAL_LEN },
		{ 5, PART_META_VAL_LEN },
	};
	return cr_make_param_array(struct corrupt_case, cases,
	    sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct corrupt_case *c, part,
    load_refuses_records_of_the_wrong_length)
{
	uint8_t key[PART_META_KEY_LEN + 1] = { 0 };
	uint8_t val[2 * PART_META_VAL_LEN] = { 0 };

	open_mem();
	write_metas();
	/* A key in the record range ('P' after four zero bytes). */
	part_meta_key(1, 99, key);
	put_raw(key, c->key_len, val, c->val_len);
	cr_assert_eq(part_map_load(&M, S), KV_CORRUPT, "key %zu, value %zu",
	    c->key_len, c->val_len);
}

/* ---- part_map_recover and part_map_save ---- */

/* An item record of DynamoDB size `size` at hash h of table_id. */
static void
put_item_at(uint32_t table_id, uint64_t h, uint8_t tag, uint32_t size)
{
	uint8_t key[KEYENC_PREFIX + 2], val[4 + 3] = { 0 };

	keyenc_range_prefix(table_id, h, key);
	key[KEYENC_PREFIX] = 'S';
	key[KEYENC_PREFIX + 1] = tag;
	for (int i = 0; i < 4; i++)
		val[i] = (uint8_t) (size >> (8 * i));
	put_raw(key, sizeof(key), val, sizeof(val));
}

/*
 * Items in and around WANT's partitions, at the ends of their ranges,
 * in a table no partition here owns, and in the next table after one
 * whose last partition ends the hash space.
 */
static void
put_items(void)
{
	put_item_at(1, 0, 'a', 10);
	put_item_at(1, 99, 'b', 20);
	put_item_at(1, 100, 'c', 5);
	put_item_at(1, UINT64_MAX, 'd', 7);
	put_item_at(2, 0, 'e', 9);
	put_item_at(3, 50, 'f', 1000);
	put_item_at(0xffffff00, 4, 'g', 1000);
	put_item_at(0xffffff00, 6, 'h', 11);
	put_item_at(0xffffff00, 7, 'i', 1000);
	put_item_at(300, (1ULL << 63) + 5, 'j', 13);
	put_item_at(300, (1ULL << 63) + 6, 'k', 1000);
}

/* What counting put_items' items gives, in WANT's order. */
static const uint64_t COUNTED[N_WANT][2] = {
	{ 2, 30 }, { 2, 12 }, { 1, 9 }, { 1, 11 }, { 1, 13 },
};

static void
expect_counters(part_map *m, bool counted)
{
	cr_assert_eq(m->n, N_WANT);
	for (size_t i = 0; i < N_WANT; i++) {
		const struct want_part *w = &WANT[i];
		part *p = part_map_find_locked(m, w->table_id, w->id);
		cr_assert_not_null(p, "record %zu", i);
		cr_expect_eq(p->items, counted ? COUNTED[i][0] : w->items,
		    "record %zu: %llu items", i,
		    (unsigned long long) p->items);
		cr_expect_eq(p->bytes, counted ? COUNTED[i][1] : w->bytes,
		    "record %zu: %llu bytes", i,
		    (unsigned long long) p->bytes);
		cr_expect_eq(p->epoch, w->epoch, "record %zu", i);
	}
}

Test(part, recover_without_the_marker_counts_the_items_again)
{
	bool recounted = false;
	part_map again;

	open_mem();
	write_metas();
	put_items();
	cr_assert_eq(part_map_recover(&M, S, &recounted), KV_OK);
	cr_assert(recounted);
	expect_counters(&M, true);
	/* The records now hold what was counted. */
	part_map_init(&again);
	cr_assert_eq(part_map_load(&again, S), KV_OK);
	expect_counters(&again, true);
	part_map_fini(&again);
}

Test(part, recover_after_save_trusts_the_records_once)
{
	bool recounted = true;
	part_map first, second;

	open_mem();
	write_metas();
	put_items();
	cr_assert_eq(part_map_load(&M, S), KV_OK);
	cr_assert_eq(part_map_save(&M, S), KV_OK);

	/* The records' counters, not the items': they were saved cleanly. */
	part_map_init(&first);
	cr_assert_eq(part_map_recover(&first, S, &recounted), KV_OK);
	cr_assert(!recounted);
	expect_counters(&first, false);
	part_map_fini(&first);

	/* That start took the marker: a stop now without part_map_save,
	 * such as kill -9, makes the next start count. */
	part_map_init(&second);
	cr_assert_eq(part_map_recover(&second, S, &recounted), KV_OK);
	cr_assert(recounted);
	expect_counters(&second, true);
	part_map_fini(&second);
}

Test(part, recover_refuses_an_item_record_shorter_than_its_header)
{
	uint8_t key[KEYENC_PREFIX + 2], val[3] = { 1, 2, 3 };
	bool recounted;

	open_mem();
	write_metas();
	put_items();
	keyenc_range_prefix(1, 42, key);
	key[KEYENC_PREFIX] = 'S';
	key[KEYENC_PREFIX + 1] = 'z';
	put_raw(key, sizeof(key), val, sizeof(val));
	cr_assert_eq(part_map_recover(&M, S, &recounted), KV_CORRUPT);
}

Test(part, recover_of_an_empty_store_finds_nothing_to_count)
{
	bool recounted = false;

	open_mem();
	cr_assert_eq(part_map_recover(&M, S, &recounted), KV_OK);
	cr_assert_eq(M.n, 0);
	cr_assert(recounted);
}
