/*
 * index_test.c — global index entries on a node (node/index.h): records
 * apply in version order whatever order they arrive in, a delete leaves
 * a tombstone that an older put cannot cross and that reads do not see,
 * a batch with one record for a partition the node does not hold at that
 * epoch applies none, and a write to a table with an index reaches the
 * index through the outbox and the replicator (all on this one node).
 * The replicator's counts of waiting records make room for new indexes
 * as old ones go quiet. A collection round's steps (RPC_INDEX_COLLECT)
 * delete the tombstones applied before its fence and no others, and
 * LOW names the indexes with records up to a mark.
 *
 * Table T (id 1) holds the entries of an index; T2 (id 2) is its base
 * table in the end-to-end test.
 */
#include <time.h>
#include <unistd.h>

#include "bytes.h"
#include "index.h"
#include "index/index_int.h"
#include "txn.h"
#include "verbs_fixture.h"

static void
index_setup(void)
{
	setup();
	cr_assert_eq(index_open(N), KV_OK);
	cr_assert_eq(assign(&T), KV_OK);
}

static void
index_teardown(void)
{
	index_close(N);
	teardown();
}

TestSuite(index, .init = index_setup, .fini = index_teardown);

/* A routed record for it's key in T: a put of it (NULL: a delete). */
static const uint8_t *
record(const itm *it, bool put, uint64_t epoch, uint64_t num, size_t *len)
{
	size_t vl;
	uint8_t *v = index_record_encode(&A, T.id, epoch, num, it->key,
	    it->key_len, put ? &it->v : NULL, &vl);
	uint8_t *r = arena_alloc(&A, INDEX_ROUTE_LEN + vl);
	cr_assert(v != NULL && r != NULL);
	bytes_put_le32(r, it->part);
	bytes_put_le64(r + 4, epoch_of(it));
	memcpy(r + INDEX_ROUTE_LEN, v, vl);
	*len = INDEX_ROUTE_LEN + vl;
	return r;
}

static kv_err
apply(const uint8_t **recs, size_t *lens, size_t n)
{
	rpc_request req = { .op = RPC_INDEX_APPLY, .subs = recs,
	    .sub_lens = lens, .n_subs = n };
	return call(&req).code;
}

static kv_err
apply_one(const itm *it, bool put, uint64_t epoch, uint64_t num)
{
	size_t len;
	const uint8_t *r = record(it, put, epoch, num, &len);
	return apply(&r, &len, 1);
}

/* The items a RANGE of every partition of t returns, their data
 * attribute in out[] (NULL when absent); returns how many. */
static size_t
entries(const table *t, const char **out, size_t max)
{
	size_t n = 0;
	for (size_t p = 0; p < t->n_parts; p++) {
		uint8_t lo[KEYENC_PREFIX];
		keyenc_range_prefix(t->id, t->parts[p].lo, lo);
		rpc_request req = { .op = RPC_RANGE, .table_id = t->id,
		    .part = t->parts[p].id, .epoch = t->parts[p].epoch,
		    .range_lo = lo, .range_lo_len = sizeof(lo) };
		rpc_response r = call(&req);
		cr_assert_eq(r.code, KV_OK);
		for (size_t i = 0; i < r.n_items && n < max; i++) {
			value v;
			cr_assert_eq(codec_decode(&A, r.items[i],
			    r.item_lens[i], &v), KV_OK);
			const value *d = item_attr(&v, "data", 4);
			out[n++] = d != NULL ? arena_dup(&A, d->u.bytes,
			    d->len) : NULL;
		}
	}
	return n;
}

static uint64_t
items_of(const table *t)
{
	rpc_request req = { .op = RPC_STATS, .table_id = t->id };
	rpc_response r = call(&req);
	uint64_t n = 0;
	cr_assert_eq(r.code, KV_OK);
	for (size_t i = 0; i < r.n_stats; i++)
		n += r.stats[i].items;
	return n;
}

Test(index, records_apply_in_version_order)
{
	itm v10, v5, v15, v2;
	const char *got[4];
	make_itm(&v10, &T, "k", "ten");
	make_itm(&v5, &T, "k", "five");
	make_itm(&v15, &T, "k", "fifteen");
	make_itm(&v2, &T, "k", "epoch two");

	cr_assert_eq(apply_one(&v10, true, 1, 10), KV_OK);
	cr_assert_eq(apply_one(&v5, true, 1, 5), KV_OK); /* older: skipped */
	cr_assert_eq(entries(&T, got, 4), 1);
	cr_assert_str_eq(got[0], "ten");
	cr_assert_eq(items_of(&T), 1);
	/* Applying the same record again changes nothing. */
	cr_assert_eq(apply_one(&v10, true, 1, 10), KV_OK);
	cr_assert_eq(items_of(&T), 1);

	/* A delete leaves a tombstone: gone from reads and counts, and an
	 * older put that arrives after it stays out. */
	cr_assert_eq(apply_one(&v10, false, 1, 20), KV_OK);
	cr_assert_eq(entries(&T, got, 4), 0);
	cr_assert_eq(items_of(&T), 0);
	cr_assert_eq(apply_one(&v15, true, 1, 15), KV_OK);
	cr_assert_eq(entries(&T, got, 4), 0);
	/* A later delete writes over the tombstone: still one. */
	cr_assert_eq(apply_one(&v10, false, 1, 25), KV_OK);
	cr_assert_eq(atomic_load(&N->gsi->tombs_added), 1);
	cr_assert_eq(atomic_load(&N->gsi->tombs_replaced), 0);

	/* A higher epoch outranks any number of a lower one. */
	cr_assert_eq(apply_one(&v2, true, 2, 1), KV_OK);
	cr_assert_eq(entries(&T, got, 4), 1);
	cr_assert_str_eq(got[0], "epoch two");
	cr_assert_eq(items_of(&T), 1);
	/* That put replaced the tombstone: none is left to collect. */
	cr_assert_eq(atomic_load(&N->gsi->tombs_added), 1);
	cr_assert_eq(atomic_load(&N->gsi->tombs_replaced), 1);
	itm_fini(&v10);
	itm_fini(&v5);
	itm_fini(&v15);
	itm_fini(&v2);
}

Test(index, a_batch_with_a_stale_route_applies_nothing)
{
	itm a, b;
	const char *got[4];
	size_t lens[2];
	make_itm(&a, &T, "a", "A");
	make_itm(&b, &T, "b", "B");
	const uint8_t *recs[2] = { record(&a, true, 1, 1, &lens[0]),
	    record(&b, true, 1, 2, &lens[1]) };
	/* b's record names an epoch its partition does not have. */
	bytes_put_le64((uint8_t *) recs[1] + 4, epoch_of(&b) + 1);
	cr_assert_eq(apply(recs, lens, 2), KV_STALE_ROUTE);
	cr_assert_eq(entries(&T, got, 4), 0);
	/* Routed right, both apply. */
	bytes_put_le64((uint8_t *) recs[1] + 4, epoch_of(&b));
	cr_assert_eq(apply(recs, lens, 2), KV_OK);
	cr_assert_eq(entries(&T, got, 4), 2);
	itm_fini(&a);
	itm_fini(&b);
}

Test(index, a_malformed_record_is_refused)
{
	uint8_t junk[30] = { 0 };
	const uint8_t *r = junk;
	size_t len = sizeof(junk);
	cr_assert_eq(apply(&r, &len, 1), KV_PROTO);
}

/* T2 with one global index on `data` (ALL) whose entries are in T. */
static catalog *
view_with_index(void)
{
	catalog *c = calloc(1, sizeof(*c));
	cr_assert_not_null(c);
	c->version = 1;
	c->next_table_id = 3;
	c->n_tables = 2;
	c->tables = calloc(2, sizeof(table));
	cr_assert_eq(table_copy(&T, &c->tables[0]), KV_OK);
	cr_assert_eq(table_copy(&T2, &c->tables[1]), KV_OK);
	table *ix = &c->tables[0], *base = &c->tables[1];
	free(ix->hash.name);
	ix->hash.name = strdup("data");
	ix->base_id = base->id;
	base->n_indexes = 1;
	base->indexes = calloc(1, sizeof(index_def));
	base->indexes[0].name = strdup("by_data");
	base->indexes[0].table_id = ix->id;
	base->indexes[0].hash.name = strdup("data");
	base->indexes[0].hash.type = VAL_S;
	base->indexes[0].projection = PROJECT_ALL;
	return c;
}

Test(index, a_write_reaches_its_index_through_the_outbox)
{
	itm it, bare;
	const char *got[4];
	cr_assert_eq(assign(&T2), KV_OK);
	index_view_install(N, view_with_index());
	make_itm(&it, &T2, "item", "indexed");
	make_itm(&bare, &T2, "bare", NULL); /* no index key: sparse */
	cr_assert_eq(put(&it, RPC_RETURN_NONE).code, KV_OK);
	cr_assert_eq(put(&bare, RPC_RETURN_NONE).code, KV_OK);
	size_t n = 0;
	for (int i = 0; i < 200 && (n = entries(&T, got, 4)) == 0; i++)
		usleep(10 * 1000);
	cr_assert_eq(n, 1, "the entry did not arrive in 2 s");
	cr_assert_str_eq(got[0], "indexed");
	/* The item deleted: its entry goes. */
	rpc_request del = item_req(RPC_DELETE, &it, epoch_of(&it),
	    RPC_RETURN_NONE);
	cr_assert_eq(call(&del).code, KV_OK);
	for (int i = 0; i < 200 && entries(&T, got, 4) != 0; i++)
		usleep(10 * 1000);
	cr_assert_eq(entries(&T, got, 4), 0);
	itm_fini(&it);
	itm_fini(&bare);
}

/* The outbox floor's value (0: none). */
static uint64_t
floor_of_outbox(void)
{
	uint8_t *v = NULL;
	size_t vl = 0;
	bool found = false;
	cr_assert_eq(store_get(N->st, outbox_floor_key,
	    sizeof(outbox_floor_key), &v, &vl, &found), KV_OK);
	uint64_t f = found && vl == 8 ? bytes_get_be64(v) : 0;
	free(v);
	return f;
}

Test(index, numbers_rise_across_a_restart_whatever_the_clock)
{
	itm it;
	const char *got[4];
	cr_assert_eq(assign(&T2), KV_OK);
	index_view_install(N, view_with_index());
	make_itm(&it, &T2, "item", "indexed");
	cr_assert_eq(put(&it, RPC_RETURN_NONE).code, KV_OK);
	for (int i = 0; i < 200 && entries(&T, got, 4) == 0; i++)
		usleep(10 * 1000);
	cr_assert_eq(entries(&T, got, 4), 1);
	/* The records sent are deleted with the highest number kept. */
	uint64_t given = atomic_load(&N->gsi->clock);
	for (int i = 0; i < 200 && floor_of_outbox() < given; i++)
		usleep(10 * 1000);
	cr_assert_eq(floor_of_outbox(), given);
	/* A wall clock an hour behind the numbers given before a restart:
	 * the restarted node numbers from above them. */
	uint8_t v[8];
	uint64_t ahead = given + 3600ULL * 1000000;
	bytes_put_be64(v, ahead);
	store_batch b;
	store_batch_init(&b);
	cr_assert_eq(store_batch_add(&b, STORE_PUT, outbox_floor_key,
	    sizeof(outbox_floor_key), v, sizeof(v)), KV_OK);
	cr_assert_eq(store_write(N->st, &b), KV_OK);
	store_batch_fini(&b);
	index_close(N);
	cr_assert_eq(index_open(N), KV_OK);
	cr_assert_eq(atomic_load(&N->gsi->clock), ahead);
	itm_fini(&it);
}

Test(index, no_view_no_write_to_an_indexed_node)
{
	itm it;
	cr_assert_eq(assign(&T2), KV_OK);
	make_itm(&it, &T2, "item", "x");
	/* The node has no view of the catalog yet: it cannot know the
	 * table's indexes, so the write waits (the router retries). */
	cr_assert_eq(put(&it, RPC_RETURN_NONE).code, KV_STALE_ROUTE);
	index_view_install(N, view_with_index());
	cr_assert_eq(put(&it, RPC_RETURN_NONE).code, KV_OK);
	itm_fini(&it);
}

Test(index, no_view_no_transaction_on_an_indexed_node)
{
	itm it;
	uint8_t *buf;
	size_t len;
	const uint8_t *subs[1];
	const char *got[4];
	cr_assert_eq(txn_open(N), KV_OK);
	cr_assert_eq(assign(&T2), KV_OK);
	make_itm(&it, &T2, "item", "x");
	rpc_request act = item_req(RPC_PUT, &it, epoch_of(&it),
	    RPC_RETURN_NONE);
	cr_assert_eq(wire_pack_request(&act, &buf, &len), KV_OK);
	subs[0] = buf;
	rpc_request prep = { .op = RPC_TXN_PREPARE, .txn = 5, .node = 0,
		.subs = subs, .sub_lens = &len, .n_subs = 1,
		.limit = RPC_TXN_COMMIT };
	/* Without a view the node cannot check the item's index keys nor
	 * give it its records: the prepare waits, as a write does. */
	rpc_response r0 = call(&prep);
	cr_assert_eq(r0.code, KV_STALE_ROUTE, "%s", kv_err_name(r0.code));
	index_view_install(N, view_with_index());
	cr_assert_eq(call(&prep).code, KV_OK);
	size_t n = 0;
	for (int i = 0; i < 200 && (n = entries(&T, got, 4)) == 0; i++)
		usleep(10 * 1000);
	cr_assert_eq(n, 1, "the entry did not arrive in 2 s");
	txn_close(N);
	free(buf);
	itm_fini(&it);
}

Test(index, counts_make_room_for_new_indexes)
{
	index_state *s = calloc(1, sizeof(*s));
	cr_assert(s != NULL);
	/* A node that has seen MAX_COUNTED indexes, each with records. */
	for (uint32_t id = 1; id <= MAX_COUNTED; id++) {
		struct index_count *c = count_of(s, id);
		cr_assert(c != NULL && c->id == id);
		c->pending = 1;
	}
	cr_assert_eq(count_of(s, 7)->pending, 1, "a known index keeps its count");
	cr_assert_null(count_of(s, 1000), "no slot is free");
	/* One index drains: a new one takes its slot, fresh. */
	count_of(s, 9)->pending = 0;
	count_of(s, 9)->cursor = 55;
	struct index_count *c = count_of(s, 1000);
	cr_assert(c != NULL && c->id == 1000 && c->pending == 0 &&
	    c->cursor == 0);
	c->pending = 3;
	/* An index its owners hold back keeps its slot while it lasts. */
	count_of(s, 10)->pending = 0;
	count_of(s, 10)->pressed_until_us = now_us() + 60 * 1000000LL;
	cr_assert_null(count_of(s, 1001));
	count_of(s, 10)->pressed_until_us = 0;
	cr_assert_eq(count_of(s, 1001)->id, 1001);
	cr_assert_eq(s->n_counts, MAX_COUNTED);
	free(s);
}

/* ---- collecting tombstones (RPC_INDEX_COLLECT) ---- */

/* One step; *nums gets the answer's first number after the boot. */
static rpc_response
collect(uint32_t step, uint64_t ack, uint64_t boot, uint64_t *num)
{
	rpc_request req = { .op = RPC_INDEX_COLLECT, .limit = step,
	    .ack = ack, .move_id = boot };
	rpc_response r = call(&req);
	if (r.code == KV_OK && num != NULL) {
		cr_assert_geq(r.item_len, 16);
		*num = bytes_get_le64(r.item + 8);
	}
	return r;
}

/* The stored record of it's entry key in T: 1 live, 0 a tombstone,
 * -1 none. */
static int
stored(const itm *it)
{
	uint8_t *v = NULL;
	size_t vl = 0;
	bool found = false;
	cr_assert_eq(store_get(N->st, it->key, it->key_len, &v, &vl, &found),
	    KV_OK);
	int got = !found ? -1 : record_item_offset(v, vl) < vl ? 1 : 0;
	free(v);
	return got;
}

Test(index, a_round_collects_the_tombstones_older_than_its_fence)
{
	itm a, b, a_old;
	const char *got[4];
	uint64_t fence, mark, deleted;
	index_view_install(N, view_with_index()); /* T: an index's table */
	make_itm(&a, &T, "a", "A");
	make_itm(&b, &T, "b", "B");
	make_itm(&a_old, &T, "a", "an older A");
	cr_assert_eq(apply_one(&a, true, 1, 10), KV_OK);
	cr_assert_eq(apply_one(&a, false, 1, 20), KV_OK);
	cr_assert_eq(stored(&a), 0);

	rpc_response r = collect(RPC_COLLECT_FENCE, 0, 0, &fence);
	cr_assert_eq(r.code, KV_OK);
	cr_assert(r.found, "a start does not know its tombstones' age");
	uint64_t boot = bytes_get_le64(r.item);
	/* A tombstone made after the fence is not this round's. */
	cr_assert_eq(apply_one(&b, true, 1, 30), KV_OK);
	cr_assert_eq(apply_one(&b, false, 1, 40), KV_OK);
	cr_assert_eq(collect(RPC_COLLECT_MARK, 0, 0, &mark).code, KV_OK);
	cr_assert_geq(mark, fence);
	r = collect(RPC_COLLECT_LOW, mark, 0, NULL);
	cr_assert_eq(r.code, KV_OK);
	cr_assert_eq(r.item_len, 8, "nothing waits in this outbox");

	/* Another boot's or another round's SWEEP is refused. */
	cr_assert_eq(collect(RPC_COLLECT_SWEEP, fence, boot + 1, NULL).code,
	    KV_BUSY);
	cr_assert_eq(collect(RPC_COLLECT_SWEEP, fence + 1, boot, NULL).code,
	    KV_BUSY);
	r = collect(RPC_COLLECT_SWEEP, fence, boot, &deleted);
	cr_assert_eq(r.code, KV_OK);
	cr_assert(r.found);
	cr_assert_eq(deleted, 1);
	cr_assert_eq(stored(&a), -1);
	cr_assert_eq(stored(&b), 0);
	/* A repeat (its answer lost) finds the sweep done. */
	r = collect(RPC_COLLECT_SWEEP, fence, boot, &deleted);
	cr_assert(r.code == KV_OK && r.found && deleted == 1);
	cr_assert_eq(entries(&T, got, 4), 0);
	cr_assert_eq(items_of(&T), 0);
	/* Gone, the tombstone no longer stops an older put: which is why a
	 * round waits until no outbox holds one. */
	cr_assert_eq(apply_one(&a_old, true, 1, 15), KV_OK);
	cr_assert_eq(stored(&a), 1);

	/* While T's records still wait somewhere, its tombstones stay. */
	r = collect(RPC_COLLECT_FENCE, 0, 0, &fence);
	cr_assert(r.code == KV_OK && r.found);
	uint8_t skip[4];
	bytes_put_le32(skip, T.id);
	rpc_request sk = { .op = RPC_INDEX_COLLECT,
	    .limit = RPC_COLLECT_SWEEP, .ack = fence, .move_id = boot,
	    .item = skip, .item_len = sizeof(skip) };
	r = call(&sk);
	cr_assert(r.code == KV_OK && r.found);
	cr_assert_eq(bytes_get_le64(r.item + 8), 0);
	cr_assert_eq(stored(&b), 0);

	/* The next round takes b; the one after finds nothing new. */
	r = collect(RPC_COLLECT_FENCE, 0, 0, &fence);
	cr_assert(r.code == KV_OK && r.found, "the last round left some");
	r = collect(RPC_COLLECT_SWEEP, fence, boot, &deleted);
	cr_assert(r.code == KV_OK && r.found && deleted == 1);
	cr_assert_eq(stored(&b), -1);
	r = collect(RPC_COLLECT_FENCE, 0, 0, &fence);
	cr_assert(r.code == KV_OK && !r.found);
	itm_fini(&a);
	itm_fini(&b);
	itm_fini(&a_old);
}

Test(index, low_names_the_indexes_with_records_up_to_the_mark)
{
	/* A record of index 50, which the view does not know yet: it waits
	 * in the outbox. */
	uint8_t k[OUTBOX_KEY_LEN], v[1] = { 0 };
	memcpy(k, outbox_lo, sizeof(outbox_lo));
	bytes_put_be32(k + 5, 50);
	bytes_put_be64(k + 9, 1000);
	store_batch b;
	store_batch_init(&b);
	cr_assert_eq(store_batch_add(&b, STORE_PUT, k, sizeof(k), v,
	    sizeof(v)), KV_OK);
	cr_assert_eq(store_write(N->st, &b), KV_OK);
	store_batch_fini(&b);
	rpc_response r = collect(RPC_COLLECT_LOW, 999, 0, NULL);
	cr_assert(r.code == KV_OK && r.item_len == 8);
	r = collect(RPC_COLLECT_LOW, 1000, 0, NULL);
	cr_assert(r.code == KV_OK && r.item_len == 12);
	cr_assert_eq(bytes_get_le32(r.item + 8), 50);
}

Test(index, a_tombstone_taken_in_by_a_move_gets_this_nodes_stamp)
{
	itm a;
	uint8_t out[RECORD_TOMBSTONE_LEN];
	make_itm(&a, &T, "a", "A");
	cr_assert_eq(apply_one(&a, true, 1, 10), KV_OK);
	uint8_t *v = NULL;
	size_t vl = 0;
	bool found = false;
	cr_assert_eq(store_get(N->st, a.key, a.key_len, &v, &vl, &found),
	    KV_OK);
	cr_assert_eq(index_restamp(N, v, vl, out), 0, "an entry is kept");
	free(v);
	/* A tombstone of an earlier build (no stamp), or another node's. */
	uint8_t old[RECORD_HEADER + RECORD_VERSION_LEN] = { 0 };
	bytes_put_le32(old, RECORD_VERSIONED);
	bytes_put_le64(old + RECORD_HEADER, 3);
	bytes_put_le64(old + RECORD_HEADER + 8, 77);
	atomic_store(&N->gsi->clock, 123456);
	cr_assert_eq(index_restamp(N, old, sizeof(old), out),
	    RECORD_TOMBSTONE_LEN);
	cr_assert_eq(memcmp(out, old, sizeof(old)), 0, "same version");
	cr_assert_eq(bytes_get_le64(out + sizeof(old)), 123456);
	cr_assert_eq(record_item_offset(out, sizeof(out)), sizeof(out));
	itm_fini(&a);
}
