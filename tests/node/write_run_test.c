/*
 * write_run_test.c — runs of writes to one item (write_run in node/node.h,
 * node/write.c) on a hand-built node (verbs_fixture.h): what each write
 * of a run sees, that nothing is stored before the run ends and readers
 * meanwhile see the item as before, which requests continue a run, and
 * that a write from elsewhere waits for the whole run.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "verbs_fixture.h"

TestSuite(write_run, .init = setup, .fini = teardown);

static rpc_response
call_run(rpc_op op, const itm *it, rpc_return rv, write_run *run)
{
	rpc_request req = item_req(op, it, epoch_of(it), rv);
	rpc_response r;

	memset(&r, 0, sizeof(r));
	r.code = KV_ERR_COUNT;
	node_dispatch_run(N, &req, &A, &r, run);
	return r;
}

static void
expect_returned(const rpc_response *r, const itm *want)
{
	cr_assert_eq(r->code, KV_OK, "%s", kv_err_name(r->code));
	if (want == NULL) {
		cr_assert(!r->found);
		return;
	}
	cr_assert(r->found);
	cr_assert_eq(r->item_len, want->enc_len);
	cr_assert_arr_eq(r->item, want->enc, want->enc_len);
}

Test(write_run, a_run_serves_each_write_on_the_last_and_stores_once)
{
	itm one, two, three;
	write_run run;

	cr_assert_eq(assign(&T), KV_OK);
	make_itm(&one, &T, "hot", "one");
	make_itm(&two, &T, "hot", "two");
	make_itm(&three, &T, "hot", "three");
	write_run_init(&run);
	rpc_response r = call_run(RPC_PUT, &one, RPC_RETURN_ALL_OLD, &run);
	expect_returned(&r, NULL);
	cr_assert_not_null(run.p, "a write opens a run");
	/* Each write sees the one before it, though none is stored. */
	r = call_run(RPC_PUT, &two, RPC_RETURN_ALL_OLD, &run);
	expect_returned(&r, &one);
	r = call_run(RPC_DELETE, &two, RPC_RETURN_ALL_OLD, &run);
	expect_returned(&r, &two);
	r = call_run(RPC_DELETE, &two, RPC_RETURN_ALL_OLD, &run);
	expect_returned(&r, NULL);
	r = call_run(RPC_PUT, &three, RPC_RETURN_ALL_OLD, &run);
	expect_returned(&r, NULL);
	/* Readers elsewhere see the item as it was before the run. */
	cr_assert_eq(stored_keys(T.id), 0);
	expect_no_item(&three);
	cr_assert_eq(write_run_end(N, &run), KV_OK);
	cr_assert_null(run.p);
	expect_item(&three, &three);
	totals s = stats(T.id);
	cr_assert_eq(s.items, 1);
	cr_assert_eq(s.bytes, three.size);
	expect_records_match_map();
	/* Ending an empty run does nothing. */
	cr_assert_eq(write_run_end(N, &run), KV_OK);
	itm_fini(&one);
	itm_fini(&two);
	itm_fini(&three);
}

Test(write_run, a_run_takes_only_writes_to_its_item)
{
	itm a, b;
	write_run run;

	cr_assert_eq(assign(&T), KV_OK);
	make_itm(&a, &T, "a", "x");
	make_itm(&b, &T, "b", "y");
	write_run_init(&run);
	rpc_request put_a = item_req(RPC_PUT, &a, epoch_of(&a),
	    RPC_RETURN_NONE);
	cr_assert(!write_run_takes(&run, &put_a), "no run is open");
	cr_assert_eq(call_run(RPC_PUT, &a, RPC_RETURN_NONE, &run).code,
	    KV_OK);
	cr_assert(write_run_takes(&run, &put_a));
	rpc_request upd_a = item_req(RPC_UPDATE, &a, epoch_of(&a),
	    RPC_RETURN_NONE);
	rpc_request del_a = item_req(RPC_DELETE, &a, epoch_of(&a),
	    RPC_RETURN_NONE);
	rpc_request get_a = item_req(RPC_GET, &a, epoch_of(&a),
	    RPC_RETURN_NONE);
	rpc_request put_b = item_req(RPC_PUT, &b, epoch_of(&b),
	    RPC_RETURN_NONE);
	rpc_request stale_a = item_req(RPC_PUT, &a, epoch_of(&a) + 1,
	    RPC_RETURN_NONE);
	cr_assert(write_run_takes(&run, &upd_a));
	cr_assert(write_run_takes(&run, &del_a));
	cr_assert(!write_run_takes(&run, &get_a));
	cr_assert(!write_run_takes(&run, &put_b));
	cr_assert(!write_run_takes(&run, &stale_a));
	cr_assert_eq(write_run_end(N, &run), KV_OK);
	expect_item(&a, &a);
	itm_fini(&a);
	itm_fini(&b);
}

typedef struct lone_put {
	const itm *it;
	atomic_bool done;
	kv_err code;
} lone_put;

static void *
lone_put_run(void *arg)
{
	lone_put *w = arg;
	arena a;
	rpc_request req = item_req(RPC_PUT, w->it, epoch_of(w->it),
	    RPC_RETURN_NONE);
	rpc_response r;

	arena_init(&a);
	memset(&r, 0, sizeof(r));
	node_dispatch(N, &req, &a, &r);
	w->code = r.code;
	atomic_store(&w->done, true);
	arena_fini(&a);
	return NULL;
}

Test(write_run, a_write_from_elsewhere_waits_for_the_run, .timeout = 30)
{
	itm one, two, three;
	write_run run;
	pthread_t th;

	cr_assert_eq(assign(&T), KV_OK);
	make_itm(&one, &T, "hot", "one");
	make_itm(&two, &T, "hot", "two");
	make_itm(&three, &T, "hot", NULL);
	write_run_init(&run);
	cr_assert_eq(call_run(RPC_PUT, &one, RPC_RETURN_NONE, &run).code,
	    KV_OK);
	lone_put w = { .it = &two, .code = KV_ERR_COUNT };
	atomic_init(&w.done, false);
	cr_assert_eq(pthread_create(&th, NULL, lone_put_run, &w), 0);
	usleep(100 * 1000);
	cr_assert(!atomic_load(&w.done), "the write came between the run's");
	rpc_response r = call_run(RPC_PUT, &three, RPC_RETURN_ALL_OLD, &run);
	expect_returned(&r, &one);
	cr_assert_eq(write_run_end(N, &run), KV_OK);
	pthread_join(th, NULL);
	cr_assert_eq(w.code, KV_OK);
	/* It came after the whole run. */
	expect_item(&two, &two);
	totals s = stats(T.id);
	cr_assert_eq(s.items, 1);
	cr_assert_eq(s.bytes, two.size);
	expect_records_match_map();
	itm_fini(&one);
	itm_fini(&two);
	itm_fini(&three);
}
