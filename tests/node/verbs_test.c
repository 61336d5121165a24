/*
 * verbs_test.c — the node's data and ownership verbs (node/get.c, put.c,
 * delete.c, assign.c, drop_table.c, stats.c) driven through node_dispatch
 * on a hand-built node with an in-memory store: no sockets, no catalog
 * worker. Checks the partition counters against item_size, ReturnValues,
 * route checks that write nothing, bad payloads, idempotent ASSIGN and
 * DROP_TABLE, counters that agree with a recount of the stored items, and a
 * multi-threaded write burst (the node is verbs_fixture.h's; runs of
 * writes to one item are in write_run_test.c). The last tests start the
 * catalog worker (node/catalog/catalog_node.c) on a one-node cluster and follow
 * a table through CREATING -> ACTIVE -> DELETING -> gone.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bytes.h"
#include "txn.h"
#include "verbs_fixture.h"

TestSuite(verbs, .init = setup, .fini = teardown);

/* ---- dispatch ---- */

Test(verbs, ping_answers_ok)
{
	rpc_request req = { .op = RPC_PING };
	cr_assert_eq(call(&req).code, KV_OK);
}

Test(verbs, unknown_verb_is_proto)
{
	rpc_request req = { .op = (rpc_op) 99 };
	cr_assert_eq(call(&req).code, KV_PROTO);
	req.op = (rpc_op) 0;
	cr_assert_eq(call(&req).code, KV_PROTO);
}

Test(verbs, catalog_verbs_off_node_zero_are_proto)
{
	/* No catalog_node_open: this node hosts no catalog. */
	static const rpc_op ops[] = { RPC_CATALOG_GET, RPC_CREATE_TABLE,
		RPC_DELETE_TABLE, RPC_BUMP_EPOCH };
	for (size_t i = 0; i < 4; i++) {
		rpc_request req = { .op = ops[i], .table = &T,
			.table_name = "t1" };
		rpc_response r = call(&req);
		cr_assert_eq(r.code, KV_PROTO, "op %d", ops[i]);
		cr_assert_null(r.cat);
		cr_assert_null(r.table);
	}
}

/* ---- ASSIGN ---- */

Test(verbs, assign_creates_empty_partitions)
{
	cr_assert_eq(assign(&T), KV_OK);
	totals s = stats(T.id);
	cr_assert_eq(s.n_parts, NPARTS);
	for (uint32_t i = 0; i < NPARTS; i++) {
		const part_stats *p = stats_of(&s, T.id, i);
		cr_assert_not_null(p, "part %u", i);
		cr_assert_eq(p->epoch, 1);
		cr_assert_eq(p->items, 0);
		cr_assert_eq(p->bytes, 0);
	}
	expect_records_match_map();
}

Test(verbs, assign_without_table_is_proto)
{
	rpc_request req = { .op = RPC_ASSIGN, .table_id = 1 };
	cr_assert_eq(call(&req).code, KV_PROTO);
	cr_assert_eq(N->parts.n, 0);
}

Test(verbs, assign_takes_only_this_nodes_partitions)
{
	/* Two nodes: this one (0) owns partitions 0 and 2. */
	cr_assert_eq(table_split_even(&T, NPARTS, 0, 2), KV_OK);
	cr_assert_eq(assign(&T), KV_OK);
	totals s = stats(T.id);
	cr_assert_eq(s.n_parts, 2);
	cr_assert_not_null(stats_of(&s, T.id, 0));
	cr_assert_not_null(stats_of(&s, T.id, 2));
	expect_records_match_map();
}

Test(verbs, assign_twice_is_idempotent)
{
	itm a, b;

	make_itm(&a, &T, "alpha", "first");
	make_itm(&b, &T, "beta", "second");
	cr_assert_eq(assign(&T), KV_OK);
	cr_assert_eq(put(&a, RPC_RETURN_NONE).code, KV_OK);
	cr_assert_eq(put(&b, RPC_RETURN_NONE).code, KV_OK);
	totals before = stats(T.id);
	cr_assert_eq(assign(&T), KV_OK);
	cr_assert_eq(assign(&T), KV_OK);
	totals after = stats(T.id);
	cr_assert_eq(after.n_parts, NPARTS);
	cr_assert_eq(N->parts.n, NPARTS);
	cr_assert_eq(after.items, 2);
	cr_assert_eq(after.items, before.items);
	cr_assert_eq(after.bytes, before.bytes);
	expect_item(&a, &a);
	expect_item(&b, &b);
	expect_records_match_map();
	itm_fini(&a);
	itm_fini(&b);
}

Test(verbs, assign_with_new_epoch_refuses_the_old_one)
{
	itm a;

	make_itm(&a, &T, "alpha", "first");
	cr_assert_eq(assign(&T), KV_OK);
	cr_assert_eq(put(&a, RPC_RETURN_NONE).code, KV_OK);
	T.parts[a.part].epoch = 2;
	cr_assert_eq(assign(&T), KV_OK);
	rpc_request old = item_req(RPC_GET, &a, 1, RPC_RETURN_NONE);
	cr_assert_eq(call(&old).code, KV_STALE_ROUTE);
	expect_item(&a, &a); /* at epoch 2 */
	totals s = stats(T.id);
	cr_assert_eq(stats_of(&s, T.id, a.part)->epoch, 2);
	cr_assert_eq(stats_of(&s, T.id, a.part)->items, 1,
	    "counters survive an epoch change");
	expect_records_match_map();
	itm_fini(&a);
}

/*
 * assign.c's header: "ones it no longer owns are forgotten". A partition
 * moved to node 1 at epoch 2 must stop serving the old epoch here.
 */
Test(verbs, assign_forgets_partitions_moved_away)
{
	itm a;

	make_itm(&a, &T, "alpha", "first");
	cr_assert_eq(assign(&T), KV_OK);
	T.parts[a.part].node = 1;
	T.parts[a.part].epoch = 2;
	N->cfg.n_nodes = 2;
	cr_assert_eq(assign(&T), KV_OK);
	totals s = stats(T.id);
	cr_expect_eq(s.n_parts, NPARTS - 1,
	    "node 0 still lists %zu partitions, want %d", s.n_parts,
	    NPARTS - 1);
	cr_expect_null(stats_of(&s, T.id, a.part));
	rpc_request req = item_req(RPC_PUT, &a, 1, RPC_RETURN_NONE);
	cr_expect_eq(call(&req).code, KV_STALE_ROUTE,
	    "a PUT at the old epoch of a moved partition was accepted");
	itm_fini(&a);
}

/* ---- PUT, GET, DELETE ---- */

Test(verbs, get_of_missing_item_is_not_found)
{
	itm a;

	make_itm(&a, &T, "nobody", NULL);
	cr_assert_eq(assign(&T), KV_OK);
	expect_no_item(&a);
	itm_fini(&a);
}

Test(verbs, put_then_get_round_trips)
{
	itm a;

	make_itm(&a, &T, "alpha", "some data");
	cr_assert_eq(assign(&T), KV_OK);
	rpc_response r = put(&a, RPC_RETURN_NONE);
	cr_assert_eq(r.code, KV_OK);
	cr_assert(!r.found);
	cr_assert_null(r.item);
	expect_item(&a, &a);
	cr_assert_eq(stored_keys(T.id), 1);
	itm_fini(&a);
}

Test(verbs, stats_count_items_and_bytes)
{
	enum { NI = 40 };
	itm it[NI];
	uint64_t items[NPARTS] = { 0 }, bytes[NPARTS] = { 0 }, total = 0;

	cr_assert_eq(assign(&T), KV_OK);
	for (int i = 0; i < NI; i++) {
		char pk[16], data[64];
		snprintf(pk, sizeof(pk), "key-%d", i);
		memset(data, 'x', (size_t) i);
		data[i] = '\0';
		make_itm(&it[i], &T, pk, i % 5 == 0 ? NULL : data);
		cr_assert_eq(put(&it[i], RPC_RETURN_NONE).code, KV_OK);
		items[it[i].part]++;
		bytes[it[i].part] += it[i].size;
		total += it[i].size;
	}
	totals s = stats(T.id);
	cr_assert_eq(s.items, NI);
	cr_assert_eq(s.bytes, total);
	for (uint32_t p = 0; p < NPARTS; p++) {
		cr_assert_eq(stats_of(&s, T.id, p)->items, items[p], "part %u",
		    p);
		cr_assert_eq(stats_of(&s, T.id, p)->bytes, bytes[p], "part %u",
		    p);
	}
	cr_assert_gt(items[0] * items[1] * items[2] * items[3], 0,
	    "40 keys should reach every partition");

	/* Overwrite with a bigger and with a smaller item. */
	itm big, small;
	make_itm(&big, &T, "key-7", "a much longer value than before");
	make_itm(&small, &T, "key-8", NULL);
	cr_assert_eq(put(&big, RPC_RETURN_NONE).code, KV_OK);
	cr_assert_eq(put(&small, RPC_RETURN_NONE).code, KV_OK);
	total += big.size - it[7].size;
	total -= it[8].size - small.size;
	s = stats(T.id);
	cr_assert_eq(s.items, NI, "overwrites do not add items");
	cr_assert_eq(s.bytes, total);

	/* Delete some, and one that is missing. */
	cr_assert_eq(del(&it[3], RPC_RETURN_NONE).code, KV_OK);
	cr_assert_eq(del(&it[4], RPC_RETURN_NONE).code, KV_OK);
	cr_assert_eq(del(&it[4], RPC_RETURN_NONE).code, KV_OK);
	total -= it[3].size + it[4].size;
	s = stats(T.id);
	cr_assert_eq(s.items, NI - 2);
	cr_assert_eq(s.bytes, total);
	cr_assert_eq(stored_keys(T.id), NI - 2);
	expect_no_item(&it[3]);
	expect_item(&it[7], &big);
	expect_records_match_map();

	/* Emptying the table brings both counters back to zero. */
	for (int i = 0; i < NI; i++)
		cr_assert_eq(del(&it[i], RPC_RETURN_NONE).code, KV_OK);
	s = stats(T.id);
	cr_assert_eq(s.items, 0);
	cr_assert_eq(s.bytes, 0);
	cr_assert_eq(stored_keys(T.id), 0);
	expect_records_match_map();
	for (int i = 0; i < NI; i++)
		itm_fini(&it[i]);
	itm_fini(&big);
	itm_fini(&small);
}

Test(verbs, stats_of_table_zero_lists_every_table)
{
	itm a;

	cr_assert_eq(assign(&T), KV_OK);
	cr_assert_eq(assign(&T2), KV_OK);
	make_itm(&a, &T2, "x", "y");
	cr_assert_eq(put(&a, RPC_RETURN_NONE).code, KV_OK);
	totals s = stats(0);
	cr_assert_eq(s.n_parts, 2 * NPARTS);
	cr_assert_eq(s.items, 1);
	cr_assert_eq(s.bytes, a.size);
	cr_assert_eq(stats(T.id).items, 0);
	cr_assert_eq(stats(T2.id).items, 1);
	cr_assert_eq(stats(77).n_parts, 0);
	itm_fini(&a);
}

Test(verbs, all_old_returns_the_old_item)
{
	itm v1, v2, v3;

	make_itm(&v1, &T, "same", "one");
	make_itm(&v2, &T, "same", "two, longer");
	make_itm(&v3, &T, "same", NULL);
	cr_assert_eq(assign(&T), KV_OK);

	/* A new item has no old one, even when asked for. */
	rpc_response r = put(&v1, RPC_RETURN_ALL_OLD);
	cr_assert_eq(r.code, KV_OK);
	cr_assert(!r.found);
	cr_assert_null(r.item);

	r = put(&v2, RPC_RETURN_ALL_OLD);
	cr_assert_eq(r.code, KV_OK);
	cr_assert(r.found);
	cr_assert_eq(r.item_len, v1.enc_len);
	cr_assert_arr_eq(r.item, v1.enc, v1.enc_len);

	/* Without ALL_OLD nothing comes back. */
	r = put(&v3, RPC_RETURN_NONE);
	cr_assert_eq(r.code, KV_OK);
	cr_assert(!r.found);
	cr_assert_null(r.item);

	r = del(&v1, RPC_RETURN_ALL_OLD);
	cr_assert_eq(r.code, KV_OK);
	cr_assert(r.found);
	cr_assert_eq(r.item_len, v3.enc_len);
	cr_assert_arr_eq(r.item, v3.enc, v3.enc_len);

	/* Deleting again: nothing there, nothing returned. */
	r = del(&v1, RPC_RETURN_ALL_OLD);
	cr_assert_eq(r.code, KV_OK);
	cr_assert(!r.found);
	cr_assert_null(r.item);

	cr_assert_eq(put(&v1, RPC_RETURN_NONE).code, KV_OK);
	r = del(&v1, RPC_RETURN_NONE);
	cr_assert_eq(r.code, KV_OK);
	cr_assert(!r.found);
	cr_assert_null(r.item);
	itm_fini(&v1);
	itm_fini(&v2);
	itm_fini(&v3);
}

struct stale_case {
	int64_t epoch_delta; /* added to the right epoch */
	int part_delta;      /* added to the right partition id */
	uint32_t table_id;   /* 0: the right one */
	char why[48];        /* not a pointer: parameters cross an exec */
};

ParameterizedTestParameters(verbs, stale_route_writes_nothing)
{
	static struct stale_case cases[] = {
		{ -1, 0, 0, "older epoch" },
		{ 1, 0, 0, "newer epoch" },
		{ 0, 1, 0, "partition that does not hold the hash" },
		{ 0, 0, 2, "table not assigned here" },
	};
	return cr_make_param_array(struct stale_case, cases,
	    sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct stale_case *c, verbs, stale_route_writes_nothing)
{
	itm a, b;

	make_itm(&a, &T, "alpha", "one");
	make_itm(&b, &T, "alpha", "two");
	cr_assert_eq(assign(&T), KV_OK);
	cr_assert_eq(put(&a, RPC_RETURN_NONE).code, KV_OK);
	totals before = stats(T.id);

	for (int op = 0; op < 3; op++) {
		static const rpc_op ops[] = { RPC_PUT, RPC_GET, RPC_DELETE };
		rpc_request req = item_req(ops[op], &b,
		    (uint64_t) ((int64_t) epoch_of(&b) + c->epoch_delta),
		    RPC_RETURN_ALL_OLD);
		req.part = (b.part + (uint32_t) c->part_delta) % NPARTS;
		uint8_t other[512];
		if (c->table_id != 0) {
			/* A well-formed key of the other table. */
			cr_assert_leq(req.key_len, sizeof(other));
			memcpy(other, req.key, req.key_len);
			keyenc_table_prefix(c->table_id, other);
			req.key = other;
			req.table_id = c->table_id;
		}
		rpc_response r = call(&req);
		cr_assert_eq(r.code, KV_STALE_ROUTE, "%s, op %d: %s", c->why,
		    ops[op], kv_err_name(r.code));
		cr_assert(!r.found, "%s", c->why);
		cr_assert_null(r.item, "%s", c->why);
	}
	/* The first item is untouched and the counters did not move. */
	expect_item(&a, &a);
	totals after = stats(T.id);
	cr_assert_eq(after.items, before.items);
	cr_assert_eq(after.bytes, before.bytes);
	cr_assert_eq(stored_keys(T.id), 1);
	expect_records_match_map();
	itm_fini(&a);
	itm_fini(&b);
}

Test(verbs, verbs_before_assign_are_stale)
{
	itm a;

	make_itm(&a, &T, "alpha", "one");
	cr_assert_eq(put(&a, RPC_RETURN_NONE).code, KV_STALE_ROUTE);
	cr_assert_eq(get(&a).code, KV_STALE_ROUTE);
	cr_assert_eq(del(&a, RPC_RETURN_NONE).code, KV_STALE_ROUTE);
	cr_assert_eq(stored_keys(T.id), 0);
	itm_fini(&a);
}

/*
 * The node must not let a request for one table write into another
 * table's key range: the storage key's table prefix has to be req's
 * table. (Otherwise table 1's counters count an item that DROP_TABLE 1
 * will not delete.)
 */
Test(verbs, key_of_another_table_is_refused)
{
	itm a;

	make_itm(&a, &T2, "alpha", "one"); /* key of table 2 */
	cr_assert_eq(assign(&T), KV_OK);
	cr_assert_eq(assign(&T2), KV_OK);
	rpc_request req = item_req(RPC_PUT, &a, 1, RPC_RETURN_NONE);
	req.table_id = T.id; /* same hash, so T's partition accepts it */
	rpc_response r = call(&req);
	cr_expect(r.code == KV_PROTO || r.code == KV_STALE_ROUTE,
	    "PUT of a table-2 key under table 1 gave %s", kv_err_name(r.code));
	cr_expect_eq(stats(T.id).items, 0, "table 1 counts an item");
	/* DROP_TABLE 1 must leave nothing counted in table 2's range. */
	cr_assert_eq(drop(T.id), KV_OK);
	cr_expect_eq(stored_keys(T2.id), stats(T2.id).items,
	    "table 2 holds %zu keys but counts %" PRIu64 " items",
	    stored_keys(T2.id), stats(T2.id).items);
	itm_fini(&a);
}

/*
 * The same gap, aimed at the node's own metadata: a 13-byte key with table
 * prefix 0 that is exactly partition (1, 0)'s metadata record. Its "hash"
 * (bytes 4..12: 'P', table 1, first three bytes of part 0) falls in
 * partition 1 of table 1, so the route check passes; the write replaces a
 * 40-byte record with an item record and the next start fails to load.
 */
Test(verbs, key_in_the_metadata_space_is_refused)
{
	itm a;
	uint8_t mkey[PART_META_KEY_LEN];

	make_itm(&a, &T, "alpha", "one");
	cr_assert_eq(assign(&T), KV_OK);
	part_meta_key(T.id, 0, mkey);
	const partition *p = table_partition_for(&T, keyenc_key_hash(mkey));
	cr_assert_not_null(p);
	rpc_request req = {
		.op = RPC_PUT, .table_id = T.id, .part = p->id,
		.epoch = p->epoch, .key = mkey, .key_len = sizeof(mkey),
		.item = a.enc, .item_len = a.enc_len,
	};
	rpc_response r = call(&req);
	cr_expect(r.code == KV_PROTO || r.code == KV_STALE_ROUTE,
	    "PUT onto partition (1, 0)'s metadata key gave %s",
	    kv_err_name(r.code));
	part_map fresh;
	part_map_init(&fresh);
	kv_err rv = part_map_load(&fresh, N->st);
	part_map_fini(&fresh);
	cr_expect_eq(rv, KV_OK, "the node could not restart: %s",
	    kv_err_name(rv));
	itm_fini(&a);
}

/* ---- bad payloads ---- */

/* Arrays, not pointers: criterion's parameters cross an exec. */
struct bad_item {
	bool absent; /* item NULL */
	uint8_t bytes[8];
	size_t len;
	char why[40];
};

ParameterizedTestParameters(verbs, bad_item_payload_is_proto)
{
	static struct bad_item cases[] = {
		{ true, { 0 }, 0, "no item" },
		{ false, { 0 }, 0, "empty item" },
		{ false, { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff }, 6,
		    "garbage" },
		{ false, { 0x07 }, 1, "truncated map" },
		{ false, { 0x07, 0x01, 0x01, 'a' }, 4,
		    "map cut in an attribute" },
		{ false, { 0x01, 0x03, 'a', 'b', 'c' }, 5, "an S, not a map" },
		{ false, { 0x0a, 0x01 }, 2, "a BOOL, not a map" },
		{ false, { 0x07, 0x00, 0x00 }, 3, "empty map, trailing byte" },
	};
	return cr_make_param_array(struct bad_item, cases,
	    sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct bad_item *c, verbs, bad_item_payload_is_proto)
{
	itm a;

	make_itm(&a, &T, "alpha", "one");
	cr_assert_eq(assign(&T), KV_OK);
	rpc_request req = item_req(RPC_PUT, &a, epoch_of(&a),
	    RPC_RETURN_ALL_OLD);
	req.item = c->absent ? NULL : c->bytes;
	req.item_len = c->len;
	cr_assert_eq(call(&req).code, KV_PROTO, "%s", c->why);
	cr_assert_eq(stored_keys(T.id), 0, "%s", c->why);
	totals s = stats(T.id);
	cr_assert_eq(s.items, 0, "%s", c->why);
	cr_assert_eq(s.bytes, 0, "%s", c->why);
	expect_records_match_map();
	itm_fini(&a);
}

Test(verbs, bad_payload_leaves_the_old_item)
{
	itm a;
	static const uint8_t junk[] = { 0xde, 0xad, 0xbe, 0xef };

	make_itm(&a, &T, "alpha", "one");
	cr_assert_eq(assign(&T), KV_OK);
	cr_assert_eq(put(&a, RPC_RETURN_NONE).code, KV_OK);
	rpc_request req = item_req(RPC_PUT, &a, epoch_of(&a),
	    RPC_RETURN_ALL_OLD);
	req.item = junk;
	req.item_len = sizeof(junk);
	rpc_response r = call(&req);
	cr_assert_eq(r.code, KV_PROTO);
	cr_assert(!r.found);
	expect_item(&a, &a);
	cr_assert_eq(stats(T.id).bytes, a.size);
	itm_fini(&a);
}

Test(verbs, short_key_is_proto)
{
	itm a;

	make_itm(&a, &T, "alpha", "one");
	cr_assert_eq(assign(&T), KV_OK);
	static const rpc_op ops[] = { RPC_PUT, RPC_GET, RPC_DELETE };
	for (int op = 0; op < 3; op++) {
		for (size_t len = 0; len < KEYENC_PREFIX; len++) {
			rpc_request req = item_req(ops[op], &a, epoch_of(&a),
			    RPC_RETURN_NONE);
			req.key_len = len;
			if (len == 0)
				req.key = NULL;
			cr_assert_eq(call(&req).code, KV_PROTO,
			    "op %d, key of %zu bytes", ops[op], len);
		}
	}
	cr_assert_eq(stored_keys(T.id), 0);
	cr_assert_eq(stats(T.id).items, 0);
	itm_fini(&a);
}

/* ---- DROP_TABLE ---- */

Test(verbs, drop_table_removes_items_and_partitions)
{
	enum { NI = 12 };
	itm a[NI], b[NI];

	cr_assert_eq(assign(&T), KV_OK);
	cr_assert_eq(assign(&T2), KV_OK);
	for (int i = 0; i < NI; i++) {
		char pk[16];
		snprintf(pk, sizeof(pk), "k%d", i);
		make_itm(&a[i], &T, pk, "in t1");
		make_itm(&b[i], &T2, pk, "in t2");
		cr_assert_eq(put(&a[i], RPC_RETURN_NONE).code, KV_OK);
		cr_assert_eq(put(&b[i], RPC_RETURN_NONE).code, KV_OK);
	}
	totals t2_before = stats(T2.id);
	cr_assert_eq(stored_keys(T.id), NI);

	cr_assert_eq(drop(T.id), KV_OK);
	cr_assert_eq(stats(T.id).n_parts, 0);
	cr_assert_eq(stored_keys(T.id), 0);
	cr_assert_eq(N->parts.n, NPARTS);
	for (int i = 0; i < NI; i++)
		cr_assert_eq(get(&a[i]).code, KV_STALE_ROUTE);
	/* Its metadata records are gone too. */
	expect_records_match_map();

	/* The other table is untouched. */
	totals t2_after = stats(T2.id);
	cr_assert_eq(t2_after.n_parts, NPARTS);
	cr_assert_eq(t2_after.items, t2_before.items);
	cr_assert_eq(t2_after.bytes, t2_before.bytes);
	cr_assert_eq(stored_keys(T2.id), NI);
	for (int i = 0; i < NI; i++)
		expect_item(&b[i], &b[i]);

	/* Dropping again, or a table never seen, changes nothing. */
	cr_assert_eq(drop(T.id), KV_OK);
	cr_assert_eq(drop(1234), KV_OK);
	cr_assert_eq(stats(0).n_parts, NPARTS);

	/* Re-assigning the table gives empty partitions. */
	cr_assert_eq(assign(&T), KV_OK);
	totals t1 = stats(T.id);
	cr_assert_eq(t1.n_parts, NPARTS);
	cr_assert_eq(t1.items, 0);
	cr_assert_eq(t1.bytes, 0);
	expect_no_item(&a[0]);
	for (int i = 0; i < NI; i++) {
		itm_fini(&a[i]);
		itm_fini(&b[i]);
	}
}

Test(verbs, drop_table_spares_the_catalog_record_and_neighbours)
{
	itm a;
	table t3;
	store_batch b;
	static const uint8_t cat_key[5] = { 0, 0, 0, 0, 'C' };

	make_table(&t3, "t3", 3);
	make_itm(&a, &t3, "x", "y");
	store_batch_init(&b);
	cr_assert_eq(store_batch_add(&b, STORE_PUT, cat_key, 5,
	    (const uint8_t *) "cat", 3), KV_OK);
	cr_assert_eq(store_write(N->st, &b), KV_OK);
	store_batch_fini(&b);
	cr_assert_eq(assign(&T), KV_OK);
	cr_assert_eq(assign(&T2), KV_OK);
	cr_assert_eq(assign(&t3), KV_OK);
	cr_assert_eq(put(&a, RPC_RETURN_NONE).code, KV_OK);
	cr_assert_eq(drop(T2.id), KV_OK); /* between tables 1 and 3 */
	cr_assert_eq(stats(T.id).n_parts, NPARTS);
	cr_assert_eq(stats(t3.id).n_parts, NPARTS);
	cr_assert_eq(stats(t3.id).items, 1);
	expect_item(&a, &a);
	uint8_t *v = NULL;
	size_t vl = 0;
	bool found = false;
	cr_assert_eq(store_get(N->st, cat_key, 5, &v, &vl, &found), KV_OK);
	cr_assert(found, "DROP_TABLE deleted the catalog record");
	free(v);
	expect_records_match_map();
	itm_fini(&a);
	table_fini(&t3);
}

Test(verbs, drop_table_of_reserved_ids_is_proto)
{
	cr_assert_eq(assign(&T), KV_OK);
	cr_assert_eq(drop(0), KV_PROTO);
	cr_assert_eq(drop(UINT32_MAX), KV_PROTO);
	cr_assert_eq(stats(0).n_parts, NPARTS);
	expect_records_match_map();
}

/* ---- concurrency ---- */

enum { NTHREADS = 8, PER_THREAD = 500 };

typedef struct burst {
	itm *items;
	int first, n;
	int failures;
} burst;

static void *
burst_run(void *arg)
{
	burst *b = arg;
	arena a;

	arena_init(&a);
	for (int i = b->first; i < b->first + b->n; i++) {
		rpc_request req = item_req(RPC_PUT, &b->items[i],
		    epoch_of(&b->items[i]), RPC_RETURN_NONE);
		rpc_response r;
		memset(&r, 0, sizeof(r));
		node_dispatch(N, &req, &a, &r);
		if (r.code != KV_OK)
			b->failures++;
	}
	arena_fini(&a);
	return NULL;
}

Test(verbs, concurrent_puts_to_one_partition_are_all_counted,
    .timeout = 120)
{
	int total = NTHREADS * PER_THREAD;
	itm *items = calloc((size_t) total, sizeof(itm));
	burst b[NTHREADS];
	pthread_t th[NTHREADS];
	uint64_t bytes = 0;

	/* This counts writes; the ceiling would throttle some of them. */
	N->capacity_off = true;
	cr_assert_eq(assign(&T), KV_OK);
	/* Distinct keys that all hash into partition 0. */
	for (int i = 0, n = 0; n < total; i++) {
		char pk[24];
		snprintf(pk, sizeof(pk), "c-%d", i);
		make_itm(&items[n], &T, pk, i % 2 ? "odd" : NULL);
		if (items[n].part != 0) {
			itm_fini(&items[n]);
			continue;
		}
		bytes += items[n].size;
		n++;
	}
	for (int t = 0; t < NTHREADS; t++) {
		b[t] = (burst) { .items = items, .first = t * PER_THREAD,
			.n = PER_THREAD };
		cr_assert_eq(pthread_create(&th[t], NULL, burst_run, &b[t]),
		    0);
	}
	for (int t = 0; t < NTHREADS; t++)
		pthread_join(th[t], NULL);
	for (int t = 0; t < NTHREADS; t++)
		cr_assert_eq(b[t].failures, 0, "thread %d", t);
	totals s = stats(T.id);
	cr_assert_eq(stats_of(&s, T.id, 0)->items, (uint64_t) total);
	cr_assert_eq(stats_of(&s, T.id, 0)->bytes, bytes);
	cr_assert_eq(s.items, (uint64_t) total);
	cr_assert_eq(stored_keys(T.id), (size_t) total);
	expect_records_match_map();
	for (int i = 0; i < total; i++)
		itm_fini(&items[i]);
	free(items);
}

/* ---- the catalog worker on a one-node cluster ---- */

static const table *
find_table(const catalog *c, const char *name)
{
	return catalog_find(c, name, strlen(name));
}

/*
 * wait_status polls CATALOG_GET until table `name` has status want (0:
 * until it is gone), for up to 10 s. Returns whether it got there.
 */
static bool
wait_status(const char *name, table_status want)
{
	for (int i = 0; i < 1000; i++) {
		rpc_request req = { .op = RPC_CATALOG_GET };
		rpc_response r = call(&req);
		cr_assert_eq(r.code, KV_OK);
		cr_assert_not_null(r.cat);
		const table *t = find_table(r.cat, name);
		bool done = want == 0 ? t == NULL :
		    t != NULL && t->status == want;
		wire_response_fini(&r);
		if (done)
			return true;
		usleep(10 * 1000);
	}
	return false;
}

static rpc_response
create(const table *t)
{
	rpc_request req = { .op = RPC_CREATE_TABLE, .table = t };
	return call(&req);
}

Test(verbs, catalog_create_assigns_and_delete_drops, .timeout = 60)
{
	itm a;

	cr_assert_eq(catalog_node_open(N), KV_OK);
	rpc_response r = create(&T);
	cr_assert_eq(r.code, KV_OK, "%s", kv_err_name(r.code));
	cr_assert_not_null(r.table);
	cr_assert_str_eq(r.table->name, "t1");
	cr_assert_eq(r.table->status, TABLE_CREATING);
	cr_assert_eq(r.table->n_parts, NPARTS);
	cr_assert_eq(strlen(r.table->uuid), 36);
	uint32_t id = r.table->id;
	cr_assert_neq(id, 0);
	/* Items are addressed with the catalog's id and layout. */
	table_fini(&T);
	T = *r.table;
	free(r.table);
	r.table = NULL;
	wire_response_fini(&r);

	cr_assert(wait_status("t1", TABLE_ACTIVE), "table never got ACTIVE");
	totals s = stats(id);
	cr_assert_eq(s.n_parts, NPARTS);
	make_itm(&a, &T, "alpha", "one");
	cr_assert_eq(put(&a, RPC_RETURN_NONE).code, KV_OK);
	expect_item(&a, &a);

	/* The name is taken now. */
	r = create(&T);
	cr_assert_eq(r.code, KV_TABLE_EXISTS);
	cr_assert_null(r.table);

	rpc_request dreq = { .op = RPC_DELETE_TABLE, .table_name = "t1" };
	r = call(&dreq);
	cr_assert_eq(r.code, KV_OK, "%s", kv_err_name(r.code));
	cr_assert_not_null(r.table);
	cr_assert_eq(r.table->status, TABLE_DELETING);
	wire_response_fini(&r);
	cr_assert(wait_status("t1", 0), "table never went away");
	cr_assert_eq(stats(id).n_parts, 0);
	cr_assert_eq(stored_keys(id), 0);
	expect_records_match_map();

	r = call(&dreq);
	cr_assert_eq(r.code, KV_NO_TABLE);
	cr_assert_null(r.table);
	itm_fini(&a);
}

Test(verbs, catalog_bump_epoch_reaches_the_owner, .timeout = 60)
{
	cr_assert_eq(catalog_node_open(N), KV_OK);
	rpc_response r = create(&T);
	cr_assert_eq(r.code, KV_OK);
	uint32_t id = r.table->id;
	wire_response_fini(&r);
	cr_assert(wait_status("t1", TABLE_ACTIVE));

	rpc_request req = { .op = RPC_BUMP_EPOCH, .table_name = "t1",
		.part = 2 };
	r = call(&req);
	cr_assert_eq(r.code, KV_OK, "%s", kv_err_name(r.code));
	cr_assert_not_null(r.table);
	cr_assert_eq(r.table->parts[2].epoch, 2);
	cr_assert_eq(r.table->parts[1].epoch, 1);
	wire_response_fini(&r);

	bool seen = false;
	for (int i = 0; i < 1000 && !seen; i++) {
		totals s = stats(id);
		const part_stats *p = stats_of(&s, id, 2);
		seen = p != NULL && p->epoch == 2;
		if (!seen)
			usleep(10 * 1000);
	}
	cr_assert(seen, "the owner never heard of epoch 2");

	req.part = 99;
	r = call(&req);
	cr_assert_eq(r.code, KV_EINVAL);
	cr_assert_null(r.table);
	req.table_name = "nope";
	req.part = 0;
	r = call(&req);
	cr_assert_eq(r.code, KV_NO_TABLE);
	cr_assert_null(r.table);
}

Test(verbs, catalog_survives_reopen, .timeout = 60)
{
	cr_assert_eq(catalog_node_open(N), KV_OK);
	rpc_response r = create(&T);
	cr_assert_eq(r.code, KV_OK);
	wire_response_fini(&r);
	r = create(&T2);
	cr_assert_eq(r.code, KV_OK);
	wire_response_fini(&r);
	cr_assert(wait_status("t1", TABLE_ACTIVE));
	cr_assert(wait_status("t2", TABLE_ACTIVE));
	catalog_node_close(N);
	cr_assert_null(N->cat);

	cr_assert_eq(catalog_node_open(N), KV_OK);
	rpc_request req = { .op = RPC_CATALOG_GET };
	r = call(&req);
	cr_assert_eq(r.code, KV_OK);
	cr_assert_eq(r.cat->n_tables, 2);
	const table *t1 = find_table(r.cat, "t1");
	const table *t2 = find_table(r.cat, "t2");
	cr_assert_not_null(t1);
	cr_assert_not_null(t2);
	cr_assert_eq(t1->status, TABLE_ACTIVE);
	cr_assert_neq(t1->id, t2->id);
	cr_assert_gt(r.cat->next_table_id, t1->id);
	cr_assert_gt(r.cat->next_table_id, t2->id);
	wire_response_fini(&r);
}

/* ---- per-partition capacity (throttle.h) ---- */

#define UNIT_MICRO (2 * BUCKET_MICRO)

static double
now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double) t.tv_sec + t.tv_nsec / 1e9;
}

Test(verbs, writes_beyond_the_ceiling_are_throttled_and_change_nothing)
{
	itm a, b;

	N->cfg.partition_wcu = 10; /* 10 WCU/s: one write per 100 ms */
	N->cfg.burst_seconds = 0;
	cr_assert_eq(assign(&T), KV_OK);
	make_itm(&a, &T, "alpha", "one");
	make_itm(&b, &T, "alpha", "two"); /* the same key, another value */
	/*
	 * A new partition holds one second of capacity: ten 1-WCU writes,
	 * and one more if the refill during them took the level above zero.
	 */
	int ok = 0;
	double t0 = now_s();
	while (ok < 100 && put(&a, RPC_RETURN_NONE).code == KV_OK)
		ok++;
	/* Plus what flowed in meanwhile (a loaded machine is slow). */
	int most = 11 + (int) ((now_s() - t0) * 10);
	cr_assert(ok >= 10 && ok <= most, "%d writes admitted (most %d)", ok,
	    most);
	rpc_response r = put(&b, RPC_RETURN_NONE);
	cr_assert_eq(r.code, KV_THROTTLED);
	cr_assert_eq(r.throttle, RPC_THROTTLE_WRITE, "on demand, ceiling");
	/* The throttled write did nothing; reads have their own bucket. */
	expect_item(&a, &a);
	totals s = stats(T.id);
	const part_stats *p = stats_of(&s, T.id, a.part);
	cr_assert_eq(p->write_throttled, 2);
	cr_assert_eq(p->write_admitted, (uint64_t) ok);
	cr_assert_eq(p->write_charged, 2 * (uint64_t) ok,
	    "one WCU each, in half units");
	cr_assert_eq(p->read_charged, 1, "one eventually consistent read");
	cr_assert_eq(p->read_throttled, 0);
	cr_assert_eq(p->write_rate, 10 * UNIT_MICRO);
	cr_assert_eq(p->read_rate, (int64_t) CONFIG_PARTITION_RCU *
	    UNIT_MICRO);
	cr_assert(p->write_credit <= 0, "the second is spent");
	/* Other partitions of the table are untouched. */
	for (uint32_t i = 0; i < NPARTS; i++)
		if (i != a.part)
			cr_assert_eq(stats_of(&s, T.id, i)->write_throttled, 0);
	/* 100 ms later the debt is paid and the write goes through. */
	usleep(120 * 1000);
	cr_assert_eq(put(&b, RPC_RETURN_NONE).code, KV_OK);
	expect_item(&a, &b);
	itm_fini(&a);
	itm_fini(&b);
}

Test(verbs, provisioned_share_below_the_ceiling_binds)
{
	itm a, c;

	T.billing = BILLING_PROVISIONED;
	T.rcu = 4000; /* 1000 per partition: below the 3000 ceiling */
	T.wcu = 8;    /* 2 per partition */
	cr_assert_eq(assign(&T), KV_OK);
	make_itm(&a, &T, "alpha", "one");
	int ok = 0; /* one second of 2 WCU/s */
	rpc_response r;
	double t0 = now_s();
	while (ok < 100 && (r = put(&a, RPC_RETURN_NONE)).code == KV_OK)
		ok++;
	int most = 3 + (int) ((now_s() - t0) * 2);
	cr_assert(ok >= 2 && ok <= most, "%d writes admitted (most %d)", ok,
	    most);
	cr_assert_eq(r.code, KV_THROTTLED);
	cr_assert_eq(r.throttle, RPC_THROTTLE_WRITE |
	    RPC_THROTTLE_PROVISIONED | RPC_THROTTLE_TABLE_PROVISIONED);
	totals s = stats(T.id);
	const part_stats *p = stats_of(&s, T.id, a.part);
	cr_assert_eq(p->write_rate, 2 * UNIT_MICRO);
	cr_assert_eq(p->read_rate, 1000 * UNIT_MICRO);
	cr_assert_eq(p->prov_wcu, 8);

	/* Provisioning above the ceiling never lifts it. */
	T.rcu = 1000000;
	T.wcu = 1000000;
	cr_assert_eq(assign(&T), KV_OK);
	s = stats(T.id);
	p = stats_of(&s, T.id, a.part);
	cr_assert_eq(p->write_rate, (int64_t) CONFIG_PARTITION_WCU *
	    UNIT_MICRO);
	usleep(10 * 1000);
	make_itm(&c, &T, "alpha", NULL);
	r = put(&c, RPC_RETURN_NONE);
	cr_assert_eq(r.code, KV_OK, "%s", kv_err_name(r.code));
	itm_fini(&a);
	itm_fini(&c);
}

Test(verbs, capacity_survives_a_restart_of_the_map)
{
	T.billing = BILLING_PROVISIONED;
	T.rcu = 40;
	T.wcu = 20;
	cr_assert_eq(assign(&T), KV_OK);
	part_map_fini(&N->parts);
	part_map_init(&N->parts);
	cr_assert_eq(part_map_load(&N->parts, N->st), KV_OK);
	cr_assert_eq(N->parts.n, NPARTS);
	for (size_t i = 0; i < N->parts.n; i++) {
		part *p = N->parts.p[i];
		cr_assert_eq(p->prov_rcu, 40);
		cr_assert_eq(p->prov_wcu, 20);
		cr_assert_eq(p->table_parts, NPARTS);
	}
}

Test(verbs, catalog_update_table_reaches_the_buckets, .timeout = 60)
{
	cr_assert_eq(catalog_node_open(N), KV_OK);
	T.billing = BILLING_PROVISIONED;
	T.rcu = 4;
	T.wcu = 4;
	rpc_response r = create(&T);
	cr_assert_eq(r.code, KV_OK);
	uint32_t id = r.table->id;
	wire_response_fini(&r);
	cr_assert(wait_status("t1", TABLE_ACTIVE));
	totals s = stats(id);
	cr_assert_eq(stats_of(&s, id, 0)->write_rate, UNIT_MICRO);

	table want = { .name = (char *) "t1", .billing = BILLING_PROVISIONED,
		.rcu = 4, .wcu = 4 };
	rpc_request req = { .op = RPC_UPDATE_TABLE, .table = &want };
	r = call(&req);
	cr_assert_eq(r.code, KV_EINVAL, "nothing would change");
	cr_assert_not_null(r.message);
	cr_assert(strstr(r.message, "will not change") != NULL);

	/*
	 * The worker's ASSIGN, which must come before ACTIVE, waits for the
	 * map's lock: the table stays UPDATING until the second call is
	 * answered, however fast the worker is.
	 */
	pthread_rwlock_rdlock(&N->parts.lock);
	want.wcu = 400;
	r = call(&req);
	cr_assert_eq(r.code, KV_OK, "%s", kv_err_name(r.code));
	cr_assert_eq(r.table->status, TABLE_UPDATING);
	cr_assert_neq(r.table->last_increase_ms, 0);
	wire_response_fini(&r);
	r = call(&req);
	pthread_rwlock_unlock(&N->parts.lock);
	cr_assert_eq(r.code, KV_IN_USE, "still UPDATING");
	cr_assert_str_eq(r.message, "UPDATING");
	cr_assert(wait_status("t1", TABLE_ACTIVE));
	s = stats(id);
	cr_assert_eq(stats_of(&s, id, 0)->write_rate, 100 * UNIT_MICRO);

	/* Lowering counts a decrease; on demand drops the shares. */
	want.wcu = 40;
	r = call(&req);
	cr_assert_eq(r.code, KV_OK);
	cr_assert_eq(r.table->decreases_today, 1);
	wire_response_fini(&r);
	cr_assert(wait_status("t1", TABLE_ACTIVE));
	want.billing = BILLING_PAY_PER_REQUEST;
	r = call(&req);
	cr_assert_eq(r.code, KV_OK);
	cr_assert_eq(r.table->rcu, 0);
	cr_assert_neq(r.table->billing_changed_ms, 0);
	wire_response_fini(&r);
	cr_assert(wait_status("t1", TABLE_ACTIVE));
	s = stats(id);
	cr_assert_eq(stats_of(&s, id, 0)->write_rate,
	    (int64_t) CONFIG_PARTITION_WCU * UNIT_MICRO);
	cr_assert_eq(stats_of(&s, id, 0)->prov_wcu, 0);
}

/* ---- MULTI: several item verbs in one message ---- */

Test(verbs, multi_serves_each_sub_request_in_order)
{
	itm a, b;
	uint8_t *bufs[3];
	size_t lens[3];
	const uint8_t *subs[3];

	cr_assert_eq(assign(&T), KV_OK);
	make_itm(&a, &T, "alpha", "one");
	make_itm(&b, &T, "beta", "two");
	rpc_request reqs[3] = {
		item_req(RPC_PUT, &a, epoch_of(&a), RPC_RETURN_NONE),
		item_req(RPC_GET, &a, epoch_of(&a), RPC_RETURN_NONE),
		item_req(RPC_GET, &b, epoch_of(&b) + 1, RPC_RETURN_NONE),
	};
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(wire_pack_request(&reqs[i], &bufs[i], &lens[i]),
		    KV_OK);
		subs[i] = bufs[i];
	}
	rpc_request m = { .op = RPC_MULTI, .subs = subs, .sub_lens = lens,
		.n_subs = 3 };
	rpc_response r = call(&m);
	cr_assert_eq(r.code, KV_OK);
	cr_assert_eq(r.n_subs, 3);
	rpc_response one[3];
	for (int i = 0; i < 3; i++)
		cr_assert_eq(wire_unpack_response(r.subs[i], r.sub_lens[i], &A,
		    &one[i]), KV_OK);
	cr_assert_eq(one[0].code, KV_OK, "the put");
	cr_assert_eq(one[1].code, KV_OK);
	cr_assert(one[1].found, "the get sees the put before it");
	cr_assert_eq(one[1].item_len, a.enc_len);
	cr_assert_eq(one[2].code, KV_STALE_ROUTE, "its own route check");
	for (int i = 0; i < 3; i++)
		free(bufs[i]);

	/* Only single-item verbs may be inside. */
	rpc_request bad = { .op = RPC_STATS };
	cr_assert_eq(wire_pack_request(&bad, &bufs[0], &lens[0]), KV_OK);
	subs[0] = bufs[0];
	m.n_subs = 1;
	r = call(&m);
	cr_assert_eq(r.code, KV_OK);
	cr_assert_eq(wire_unpack_response(r.subs[0], r.sub_lens[0], &A,
	    &one[0]), KV_OK);
	cr_assert_eq(one[0].code, KV_PROTO);
	free(bufs[0]);
	itm_fini(&a);
	itm_fini(&b);
}

/* Packs reqs[0..n) into a MULTI, serves it, and unpacks the answers. */
static void
multi_call(const rpc_request *reqs, size_t n, rpc_response *one)
{
	uint8_t *bufs[8];
	size_t lens[8];
	const uint8_t *subs[8];

	cr_assert_leq(n, 8);
	for (size_t i = 0; i < n; i++) {
		cr_assert_eq(wire_pack_request(&reqs[i], &bufs[i], &lens[i]),
		    KV_OK);
		subs[i] = bufs[i];
	}
	rpc_request m = { .op = RPC_MULTI, .subs = subs, .sub_lens = lens,
		.n_subs = n };
	rpc_response r = call(&m);
	cr_assert_eq(r.code, KV_OK);
	cr_assert_eq(r.n_subs, n);
	for (size_t i = 0; i < n; i++) {
		cr_assert_eq(wire_unpack_response(r.subs[i], r.sub_lens[i], &A,
		    &one[i]), KV_OK);
		free(bufs[i]);
	}
}

/*
 * TransactGetItems's reads (GET with RPC_TXN_READ) answer each item's
 * write stamp, and a MULTI checks them again once all are read: an item
 * written after its read, before the MULTI ends, answers "locked". The
 * second round's check (RPC_TXN_READ_CHECK) reads nothing and answers
 * "locked" once the item was written since its stamp.
 */
Test(verbs, transaction_reads_check_their_stamps)
{
	itm a, b, a2;

	cr_assert_eq(assign(&T), KV_OK);
	make_itm(&a, &T, "alpha", "one");
	make_itm(&b, &T, "beta", "two");
	make_itm(&a2, &T, "alpha", "changed");
	put(&a, RPC_RETURN_NONE);
	put(&b, RPC_RETURN_NONE);

	rpc_request rd[3] = {
		item_req(RPC_GET, &a, epoch_of(&a), RPC_RETURN_NONE),
		item_req(RPC_GET, &b, epoch_of(&b), RPC_RETURN_NONE),
	};
	rd[0].txn = rd[1].txn = RPC_TXN_READ;
	rpc_response one[3];
	multi_call(rd, 2, one);
	for (int i = 0; i < 2; i++) {
		cr_assert_eq(one[i].code, KV_OK);
		cr_assert(one[i].found);
		cr_assert(!one[i].locked, "read %d unchanged", i);
	}
	uint64_t sa = one[0].seq, sb = one[1].seq;

	/* Nothing written: the check holds, and reads nothing. */
	rpc_request ck[2] = { rd[0], rd[1] };
	ck[0].txn = ck[1].txn = RPC_TXN_READ_CHECK;
	ck[0].ack = sa;
	ck[1].ack = sb;
	multi_call(ck, 2, one);
	cr_assert(!one[0].locked && !one[1].locked);
	cr_assert(!one[0].found && one[0].item_len == 0);

	/* a written since: its check fails, b's holds. */
	put(&a2, RPC_RETURN_NONE);
	multi_call(ck, 2, one);
	cr_assert(one[0].locked, "a was written since its stamp");
	cr_assert(!one[1].locked);

	/* a written inside the MULTI, after its read: the recheck at the
	 * end sees it. */
	rpc_request mixed[3] = {
		rd[0],
		item_req(RPC_PUT, &a, epoch_of(&a), RPC_RETURN_NONE),
		rd[1],
	};
	multi_call(mixed, 3, one);
	cr_assert_eq(one[0].code, KV_OK);
	cr_assert(one[0].locked, "a changed before the MULTI's end");
	cr_assert(!one[2].locked);
	itm_fini(&a);
	itm_fini(&b);
	itm_fini(&a2);
}

/*
 * Prepares act as transaction id on this node, runs between (when not
 * NULL), and commits.
 */
static void
prepare_and_commit(uint64_t id, const rpc_request *act, void (*between)(void))
{
	uint8_t *buf;
	size_t len;
	const uint8_t *subs[1];
	rpc_response one;

	cr_assert_eq(wire_pack_request(act, &buf, &len), KV_OK);
	subs[0] = buf;
	rpc_request prep = { .op = RPC_TXN_PREPARE, .txn = id, .node = 0,
		.subs = subs, .sub_lens = &len, .n_subs = 1 };
	rpc_response r = call(&prep);
	cr_assert_eq(r.code, KV_OK, "%s", kv_err_name(r.code));
	cr_assert_eq(r.n_subs, 1);
	cr_assert_eq(wire_unpack_response(r.subs[0], r.sub_lens[0], &A, &one),
	    KV_OK);
	cr_assert_eq(one.code, KV_OK, "%s", kv_err_name(one.code));
	free(buf);
	if (between != NULL)
		between();
	rpc_request fin = { .op = RPC_TXN_FINISH, .txn = id,
		.limit = RPC_TXN_COMMIT };
	r = call(&fin);
	cr_assert_eq(r.code, KV_OK, "%s", kv_err_name(r.code));
}

static itm hidden;

/* Writes `hidden` straight into the store, past the transaction's lock. */
static void
write_past_the_lock(void)
{
	uint8_t *rec = malloc(RECORD_HEADER + hidden.enc_len);
	store_batch b;

	cr_assert_not_null(rec);
	bytes_put_le32(rec, (uint32_t) hidden.size);
	memcpy(rec + RECORD_HEADER, hidden.enc, hidden.enc_len);
	store_batch_init(&b);
	cr_assert_eq(store_batch_add(&b, STORE_PUT, hidden.key,
	    hidden.key_len, rec, RECORD_HEADER + hidden.enc_len), KV_OK);
	cr_assert_eq(store_write(N->st, &b), KV_OK);
	store_batch_fini(&b);
	free(rec);
}

/*
 * A commit reuses the item prepare read only while its write stamp says
 * nothing wrote it since (node/txn/txn_int.h): a delete prepared over a
 * missing item, with the item written in between past the lock (nothing
 * in the node does that; the store is written directly), deletes what is
 * there at commit.
 */
Test(verbs, a_commit_reads_again_an_item_written_since_prepare)
{
	itm a;

	cr_assert_eq(assign(&T), KV_OK);
	cr_assert_eq(txn_open(N), KV_OK);
	make_itm(&a, &T, "alpha", "one");
	make_itm(&hidden, &T, "alpha", "written past the lock");

	/* Nothing in between: the delete of an item that is there. */
	put(&a, RPC_RETURN_NONE);
	rpc_request d = item_req(RPC_DELETE, &a, epoch_of(&a),
	    RPC_RETURN_NONE);
	prepare_and_commit(41, &d, NULL);
	expect_no_item(&a);

	/* Missing at prepare, written before the commit. */
	prepare_and_commit(42, &d, write_past_the_lock);
	expect_no_item(&a);
	txn_close(N);
	itm_fini(&a);
	itm_fini(&hidden);
}

/*
 * The keeper's share (PREPARE with RPC_TXN_COMMIT) is written at once,
 * with its outcome, in one batch (prepare.c's commit_now): overwrites,
 * a new item, a delete in its partition, the delete of a missing
 * item, over several partitions; the counters agree with the items, no
 * item is left locked, and the same PREPARE again answers the same
 * outcome and leaves the items and counters as they were.
 */
Test(verbs, a_keepers_share_commits_with_its_outcome)
{
	enum { NI = 6 };
	itm old[NI], now[NI];
	rpc_request acts[NI];
	uint8_t *bufs[NI];
	size_t lens[NI];
	const uint8_t *subs[NI];
	uint64_t total = 0;

	cr_assert_eq(assign(&T), KV_OK);
	cr_assert_eq(txn_open(N), KV_OK);
	for (int i = 0; i < NI; i++) {
		char pk[16];
		snprintf(pk, sizeof(pk), "k%d", i);
		make_itm(&old[i], &T, pk, "before");
		make_itm(&now[i], &T, pk, i % 2 == 0 ? "after, longer" : NULL);
		/* The new item in the partition of the one deleted. */
		for (int j = 0; i == 4 && now[4].part != now[3].part; j++) {
			itm_fini(&old[4]);
			itm_fini(&now[4]);
			snprintf(pk, sizeof(pk), "new%d", j);
			make_itm(&old[4], &T, pk, "before");
			make_itm(&now[4], &T, pk, "after, longer");
		}
		/* k0..k3 there before; k4 new; k5 missing, deleted. */
		if (i < 4) {
			put(&old[i], RPC_RETURN_NONE);
			total += old[i].size;
		}
		acts[i] = item_req(i == 3 || i == 5 ? RPC_DELETE : RPC_PUT,
		    &now[i], epoch_of(&now[i]), RPC_RETURN_NONE);
		cr_assert_eq(wire_pack_request(&acts[i], &bufs[i], &lens[i]),
		    KV_OK);
		subs[i] = bufs[i];
	}
	for (int i = 0; i < NI; i++)
		total += (i == 3 || i == 5 ? 0 : now[i].size) -
		    (i < 4 ? old[i].size : 0);

	rpc_request prep = { .op = RPC_TXN_PREPARE, .txn = 77, .node = 0,
		.limit = RPC_TXN_COMMIT, .subs = subs, .sub_lens = lens,
		.n_subs = NI };
	for (int round = 0; round < 2; round++) {
		rpc_response r = call(&prep);
		cr_assert_eq(r.code, KV_OK, "%s", kv_err_name(r.code));
		cr_assert_eq(r.seq, RPC_TXN_COMMIT, "round %d", round);
		for (int i = 0; i < NI; i++) {
			if (i == 3 || i == 5)
				expect_no_item(&now[i]);
			else
				expect_item(&now[i], &now[i]);
		}
		totals s = stats(T.id);
		cr_assert_eq(s.items, 4, "round %d", round);
		cr_assert_eq(s.bytes, total, "round %d", round);
		cr_assert_eq(stored_keys(T.id), 4);
		expect_records_match_map();
	}
	/* Nothing is left locked: a plain write goes through. */
	for (int i = 0; i < NI; i++)
		cr_assert_eq(put(&old[i], RPC_RETURN_NONE).code, KV_OK);
	txn_close(N);
	for (int i = 0; i < NI; i++) {
		free(bufs[i]);
		itm_fini(&old[i]);
		itm_fini(&now[i]);
	}
}
