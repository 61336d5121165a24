/*
 * throttle_test.c — a partition's rates (node/capacity/throttle.c): the
 * share of a provisioned table, a lend by adaptive capacity, and a lend
 * not yet over kept through a new configuration (an ASSIGN of any of the
 * table's partitions), between the new share and the ceiling.
 */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "node.h"
#include "throttle.h"

#define UNIT (2 * BUCKET_MICRO) /* one whole RCU/WCU per second */
#define SEC 1000000000LL

static node *N;
static part *P;

static void
setup(void)
{
	N = calloc(1, sizeof(*N));
	P = calloc(1, sizeof(*P));
	cr_assert(N != NULL && P != NULL);
	N->cfg.partition_rcu = 3000;
	N->cfg.partition_wcu = 1000;
	N->cfg.burst_seconds = 300;
	pthread_mutex_init(&P->cap_mu, NULL);
}

static void
teardown(void)
{
	pthread_mutex_destroy(&P->cap_mu);
	free(P);
	free(N);
}

TestSuite(throttle, .init = setup, .fini = teardown);

Test(throttle, a_provisioned_partition_gets_its_share)
{
	throttle_configure(N, P, 100, 40, 4, true);
	cr_assert_eq(P->wr.rate, 10 * UNIT);
	cr_assert_eq(P->rd.rate, 25 * UNIT);
	cr_assert(P->wr_prov_binds);
	throttle_configure(N, P, 0, 0, 4, false); /* on demand */
	cr_assert_eq(P->wr.rate, 1000 * UNIT, "the ceiling");
	cr_assert_not(P->wr_prov_binds);
}

Test(throttle, a_lend_is_kept_between_share_and_ceiling)
{
	throttle_configure(N, P, 100, 40, 4, true);
	int64_t until = throttle_now_ns() + 10 * SEC;
	throttle_borrow(N, P, 1.0, 30.0, until);
	cr_assert_eq(P->wr.rate, 30 * UNIT);
	cr_assert_eq(P->rd.rate, 25 * UNIT, "never below the share");
	throttle_borrow(N, P, 0, 1900.0, until);
	cr_assert_eq(P->wr.rate, 1000 * UNIT, "never above the ceiling");
	cr_assert_not(P->wr_prov_binds);
}

Test(throttle, a_lend_not_over_outlives_a_new_configuration)
{
	throttle_configure(N, P, 100, 40, 4, true);
	throttle_borrow(N, P, 0, 30.0, throttle_now_ns() + 10 * SEC);
	throttle_configure(N, P, 100, 40, 4, false); /* an ASSIGN */
	cr_assert_eq(P->wr.rate, 30 * UNIT, "the lend is kept");
	cr_assert(P->wr_prov_binds);
	throttle_configure(N, P, 100, 40, 2, false); /* share now 20 */
	cr_assert_eq(P->wr.rate, 30 * UNIT);
	throttle_configure(N, P, 100, 100, 2, false); /* share now 50 */
	cr_assert_eq(P->wr.rate, 50 * UNIT, "never below the new share");
	/* It ends when it was to end. */
	throttle_tick(N, P, throttle_now_ns() + 11 * SEC);
	cr_assert_eq(P->wr.rate, 50 * UNIT);
	cr_assert_eq(P->borrow_until_ns, 0);
}

Test(throttle, a_lend_that_is_over_is_not_kept)
{
	throttle_configure(N, P, 100, 40, 4, true);
	throttle_borrow(N, P, 0, 30.0, throttle_now_ns() - 1);
	throttle_configure(N, P, 100, 40, 4, false);
	cr_assert_eq(P->wr.rate, 10 * UNIT);
	cr_assert_eq(P->borrow_until_ns, 0);
}

Test(throttle, a_table_gone_on_demand_forgets_the_lend)
{
	throttle_configure(N, P, 100, 40, 4, true);
	throttle_borrow(N, P, 0, 30.0, throttle_now_ns() + 10 * SEC);
	throttle_configure(N, P, 0, 0, 4, false);
	cr_assert_eq(P->wr.rate, 1000 * UNIT);
	cr_assert_eq(P->borrow_until_ns, 0);
}
