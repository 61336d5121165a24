/*
 * blind_put_test.c — puts with no condition and no ReturnValues take the
 * old item's size from the partition's size index instead of reading it
 * (node/size_index.h, node/write.c), on a hand-built node
 * (verbs_fixture.h): capacity and counters come out as with the read, a
 * delete or an ASSIGN makes the size unknown again, and a random mix of
 * writes, in runs and not, agrees with a model and with a recount.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "verbs_fixture.h"

TestSuite(blind_put, .init = setup, .fini = teardown);

static bool
size_known(const itm *it, uint32_t *size)
{
	part *p = part_map_find_locked(&N->parts, it->t->id, it->part);
	cr_assert_not_null(p);
	return size_index_get(&p->sizes, it->key, it->key_len, size);
}

Test(blind_put, charges_and_counts_with_the_known_size)
{
	itm small, big;
	uint32_t s;

	cr_assert_eq(assign(&T), KV_OK);
	make_itm(&small, &T, "alpha", "one");
	make_itm(&big, &T, "alpha", "a much longer value than the first");
	rpc_response r = put(&small, RPC_RETURN_NONE);
	cr_assert_eq(r.code, KV_OK);
	cr_assert_eq(r.old_size, 0);
	cr_assert(size_known(&small, &s));
	cr_assert_eq(s, small.size);

	r = put(&big, RPC_RETURN_NONE);
	cr_assert_eq(r.code, KV_OK);
	cr_assert_eq(r.old_size, small.size, "the replaced item's size");
	cr_assert_eq(r.new_size, big.size);
	totals t = stats(T.id);
	cr_assert_eq(t.items, 1);
	cr_assert_eq(t.bytes, big.size);

	r = put(&small, RPC_RETURN_NONE);
	cr_assert_eq(r.old_size, big.size);
	expect_item(&small, &small);
	expect_records_match_map();
	itm_fini(&small);
	itm_fini(&big);
}

Test(blind_put, a_delete_or_an_assign_makes_the_size_unknown)
{
	itm a;
	uint32_t s;

	cr_assert_eq(assign(&T), KV_OK);
	make_itm(&a, &T, "beta", "two");
	cr_assert_eq(put(&a, RPC_RETURN_NONE).code, KV_OK);
	cr_assert_eq(del(&a, RPC_RETURN_NONE).code, KV_OK);
	cr_assert(!size_known(&a, &s));
	rpc_response r = put(&a, RPC_RETURN_NONE);
	cr_assert_eq(r.old_size, 0, "the item was gone");
	cr_assert_eq(stats(T.id).items, 1);
	cr_assert(size_known(&a, &s));

	cr_assert_eq(assign(&T), KV_OK);
	cr_assert(!size_known(&a, &s), "an ASSIGN starts the sizes over");
	r = put(&a, RPC_RETURN_NONE);
	cr_assert_eq(r.old_size, a.size, "read from the store again");
	expect_records_match_map();
	itm_fini(&a);
}

/*
 * Blind puts, puts that return the old item, and deletes on a few keys,
 * some through a connection's run and some not: each answer's old size
 * is the model's, and the counters agree with a recount at the end.
 */
Test(blind_put, a_random_mix_agrees_with_a_model)
{
	enum { KEYS = 5, VARIANTS = 3, OPS = 3000 };
	static const char *data[VARIANTS] = { NULL, "x", "a longer value" };
	itm it[KEYS][VARIANTS];
	int64_t model[KEYS]; /* stored size, -1: none */
	char pk[8];
	uint64_t r = 0x9E3779B97F4A7C15ull;
	write_run run;

	N->capacity_off = true; /* thousands of writes in no time */
	cr_assert_eq(assign(&T), KV_OK);
	for (int k = 0; k < KEYS; k++) {
		snprintf(pk, sizeof(pk), "k%d", k);
		for (int v = 0; v < VARIANTS; v++)
			make_itm(&it[k][v], &T, pk, data[v]);
		model[k] = -1;
	}
	write_run_init(&run);
	for (int op = 0; op < OPS; op++) {
		r ^= r << 13;
		r ^= r >> 7;
		r ^= r << 17;
		int k = (int) (r % KEYS), v = (int) ((r >> 8) % VARIANTS);
		int what = (int) ((r >> 16) % 4); /* 0-1 blind, 2 ALL_OLD, 3 del */
		const itm *x = &it[k][v];
		rpc_op verb = what == 3 ? RPC_DELETE : RPC_PUT;
		rpc_return rv = what == 2 ? RPC_RETURN_ALL_OLD :
		    RPC_RETURN_NONE;
		rpc_request req = item_req(verb, x, epoch_of(x), rv);
		rpc_response resp;
		memset(&resp, 0, sizeof(resp));
		bool with_run = (r >> 24) % 2 == 0;
		if (!with_run || !write_run_takes(&run, &req))
			cr_assert_eq(write_run_end(N, &run), KV_OK);
		node_dispatch_run(N, &req, &A, &resp, with_run ? &run : NULL);
		cr_assert_eq(resp.code, KV_OK, "op %d: %s", op,
		    kv_err_name(resp.code));
		cr_assert_eq(resp.old_size, model[k] < 0 ? 0 :
		    (uint32_t) model[k], "op %d (key %d, %s)", op, k,
		    what < 2 ? "blind" : what == 2 ? "ALL_OLD" : "delete");
		if (what == 2)
			cr_assert_eq(resp.found, model[k] >= 0, "op %d", op);
		model[k] = verb == RPC_DELETE ? -1 : (int64_t) x->size;
	}
	cr_assert_eq(write_run_end(N, &run), KV_OK);
	totals t = stats(T.id);
	uint64_t items = 0, bytes = 0;
	for (int k = 0; k < KEYS; k++)
		if (model[k] >= 0) {
			items++;
			bytes += (uint64_t) model[k];
		}
	cr_assert_eq(t.items, items);
	cr_assert_eq(t.bytes, bytes);
	expect_records_match_map();
	for (int k = 0; k < KEYS; k++)
		for (int v = 0; v < VARIANTS; v++)
			itm_fini(&it[k][v]);
}
