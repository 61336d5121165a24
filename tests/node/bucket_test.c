/*
 * bucket_test.c — the token bucket (node/capacity/bucket.c) on a fake clock: a
 * start with one second of capacity and no burst credit, continuous
 * refill, burst credit that accumulates only from unused capacity and
 * stops at the burst window, admission above zero with the charge taken
 * afterwards (debt), rate changes keeping credit, and the admitted rate
 * under overload equalling the refill rate.
 */
#include <criterion/criterion.h>

#include "bucket.h"

#define SEC 1000000000LL
#define MS 1000000LL
#define UNIT (2 * BUCKET_MICRO) /* one whole RCU/WCU */

Test(bucket, rate_micro)
{
	cr_assert_eq(bucket_rate_micro(1000, 1), 1000 * UNIT);
	cr_assert_eq(bucket_rate_micro(5, 4), 5 * UNIT / 4); /* 1.25 units */
	cr_assert_eq(bucket_rate_micro(1, 3), UNIT / 3);
	cr_assert_eq(bucket_rate_micro(7, 0), 7 * UNIT);
}

Test(bucket, starts_with_one_second_and_no_burst)
{
	bucket b;
	bucket_init(&b, bucket_rate_micro(1000, 1), 300, 5 * SEC);
	cr_assert_eq(bucket_credit(&b, 5 * SEC), 1000 * UNIT);
	cr_assert_eq(bucket_burst(&b, 5 * SEC), 0, "no burst credit at birth");
	/* Spend the second: nothing is left to admit. */
	cr_assert(bucket_admit(&b, 5 * SEC));
	bucket_charge(&b, 2 * 1000, 5 * SEC);
	cr_assert_not(bucket_admit(&b, 5 * SEC));
	cr_assert_eq(b.throttled, 1);
	cr_assert_eq(b.admitted, 1);
}

Test(bucket, refills_continuously)
{
	bucket b;
	bucket_init(&b, bucket_rate_micro(1000, 1), 300, 0);
	bucket_charge(&b, 2 * 1000, 0); /* empty */
	/* 1000 units/s: 1 ms brings exactly one unit. */
	cr_assert_eq(bucket_credit(&b, 1 * MS), UNIT);
	cr_assert_eq(bucket_credit(&b, 250 * MS), 250 * UNIT);
	cr_assert(bucket_admit(&b, 250 * MS));
	/* Time running backwards (a caller mixing clocks) changes nothing. */
	cr_assert_eq(bucket_credit(&b, 100 * MS), 250 * UNIT);
}

Test(bucket, burst_accumulates_up_to_window)
{
	bucket b;
	bucket_init(&b, bucket_rate_micro(1000, 1), 300, 0);
	/* Unused: after t seconds, one second plus t seconds of credit. */
	cr_assert_eq(bucket_burst(&b, 299 * SEC), 299LL * 1000 * UNIT);
	cr_assert_eq(bucket_burst(&b, 300 * SEC), 300LL * 1000 * UNIT);
	cr_assert_eq(bucket_burst(&b, 3600 * SEC), 300LL * 1000 * UNIT,
	    "credit stops at 300 s of unused capacity");
	cr_assert_eq(bucket_credit(&b, 3600 * SEC), 301LL * 1000 * UNIT);
	/* Spending all of it at once is allowed... */
	bucket_charge(&b, 2 * 301000, 3600 * SEC);
	cr_assert_eq(bucket_credit(&b, 3600 * SEC), 0);
	cr_assert_not(bucket_admit(&b, 3600 * SEC));
	/* ...and it comes back at the rate, not at once. */
	cr_assert_eq(bucket_credit(&b, 3601 * SEC), 1000 * UNIT);
	cr_assert_eq(bucket_burst(&b, 3601 * SEC), 0);
}

Test(bucket, zero_window_keeps_one_unit)
{
	bucket b;
	bucket_init(&b, bucket_rate_micro(10, 1), 0, 0);
	cr_assert_eq(bucket_credit(&b, 60 * SEC), 10 * UNIT,
	    "no burst window: one second of capacity, no more");
	bucket_init(&b, bucket_rate_micro(1, 10), 0, 0);
	cr_assert_eq(bucket_credit(&b, 60 * SEC), UNIT,
	    "a tenth of a unit per second still fills to one unit");
	cr_assert(bucket_admit(&b, 60 * SEC));
}

Test(bucket, charge_after_admit_can_go_into_debt)
{
	bucket b;
	bucket_init(&b, bucket_rate_micro(100, 1), 300, 0);
	bucket_charge(&b, 2 * 100, 0); /* empty */
	/* 10 ms at 100/s: one unit. A 400 KB write costs 400 WCU. */
	cr_assert(bucket_admit(&b, 10 * MS));
	bucket_charge(&b, 2 * 400, 10 * MS);
	cr_assert_eq(bucket_credit(&b, 10 * MS), -399 * UNIT);
	cr_assert_eq(b.charged_half, 200 + 800);
	/* The debt is refilled first: 3.99 s later it is just paid. */
	cr_assert_not(bucket_admit(&b, 4000 * MS));
	cr_assert_eq(bucket_credit(&b, 4000 * MS), 0);
	cr_assert(bucket_admit(&b, 4001 * MS));
}

Test(bucket, half_units)
{
	bucket b;
	bucket_init(&b, bucket_rate_micro(1, 1), 300, 0);
	/* An eventually consistent read of <= 4 KB costs half a unit. */
	cr_assert_eq(bucket_credit(&b, 0), UNIT);
	bucket_charge(&b, 1, 0);
	cr_assert_eq(bucket_credit(&b, 0), UNIT / 2);
	bucket_charge(&b, 1, 0);
	cr_assert_eq(bucket_credit(&b, 0), 0);
}

Test(bucket, overload_admits_the_rate)
{
	/*
	 * 1000 WCU/s, offered 5000 one-unit writes per second for 10 s: the
	 * bucket admits the first second's 1000 plus 1000 per second (and at
	 * most the one in flight when the run ends), never more.
	 */
	bucket b;
	bucket_init(&b, bucket_rate_micro(1000, 1), 300, 0);
	uint64_t ok = 0;
	for (int64_t t = 0; t < 10 * SEC; t += SEC / 5000) {
		if (bucket_admit(&b, t)) {
			ok++;
			bucket_charge(&b, 2, t);
		}
	}
	cr_assert(ok >= 10999 && ok <= 11001, "admitted %llu",
	    (unsigned long long) ok);
	cr_assert_eq(b.admitted, ok);
	cr_assert_eq(b.admitted + b.throttled, 50000);
}

Test(bucket, burst_then_rate)
{
	/*
	 * Idle 2 s at 100 WCU/s (200 units of burst credit on top of the
	 * current second's 100), then 1000 writes/s: the first second admits
	 * the credit, the current second and its own refill; later seconds
	 * the rate.
	 */
	bucket b;
	bucket_init(&b, bucket_rate_micro(100, 1), 300, 0);
	uint64_t per_sec[4] = { 0 };
	for (int64_t t = 2 * SEC; t < 6 * SEC; t += MS) {
		if (bucket_admit(&b, t)) {
			per_sec[(t - 2 * SEC) / SEC]++;
			bucket_charge(&b, 2, t);
		}
	}
	cr_assert(per_sec[0] >= 399 && per_sec[0] <= 401, "%llu",
	    (unsigned long long) per_sec[0]);
	for (int i = 1; i < 4; i++)
		cr_assert(per_sec[i] >= 99 && per_sec[i] <= 101, "%llu",
		    (unsigned long long) per_sec[i]);
}

Test(bucket, set_rate_keeps_credit_and_clips)
{
	bucket b;
	bucket_init(&b, bucket_rate_micro(100, 1), 300, 0);
	cr_assert_eq(bucket_credit(&b, 10 * SEC), 1100 * UNIT);
	/* Raising: credit kept, refill faster from now on. */
	bucket_set_rate(&b, bucket_rate_micro(1000, 1), 300, 10 * SEC);
	cr_assert_eq(bucket_credit(&b, 11 * SEC), 2100 * UNIT);
	/* Lowering to 1 unit/s with a 60 s window: clipped to 61 units. */
	bucket_set_rate(&b, bucket_rate_micro(1, 1), 60, 11 * SEC);
	cr_assert_eq(bucket_credit(&b, 11 * SEC), 61 * UNIT);
}

Test(bucket, huge_values_do_not_overflow)
{
	bucket b;
	bucket_init(&b, bucket_rate_micro(UINT32_MAX, 1), UINT32_MAX, 0);
	int64_t c = bucket_credit(&b, INT64_MAX / 2);
	cr_assert(c > 0);
	bucket_charge(&b, UINT64_MAX / 4, INT64_MAX / 2);
	cr_assert(bucket_credit(&b, INT64_MAX / 2) < 0);
}
