/*
 * pace_test.c — the open-loop schedule (chaos/load/pace.c) on a fake
 * clock: a flat rate puts due times exactly 1/R apart, a schedule steps
 * at the right times, a ramp's rate is linear in time and its requests
 * follow the integral of the rate.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdio.h>

#include "pace.h"

#define NS 1000000000LL

/* Takes every request due by now_ns, like kv-load's loop; returns them. */
static int
take_due(pace *p, int64_t now_ns, int64_t *last)
{
	int n = 0;
	int64_t due;
	while (pace_peek(p, &due) && due <= now_ns) {
		*last = due;
		pace_take(p);
		n++;
	}
	return n;
}

Test(pace, flat_rate_due_times_are_exactly_1_over_r_apart)
{
	pace p;
	cr_assert_eq(pace_rate(&p, 1000, INFINITY), KV_OK);
	int64_t prev = -1, due;
	for (int n = 0; n < 100000; n++) {
		cr_assert(pace_peek(&p, &due));
		cr_assert_eq(due, (int64_t) n * 1000000, "request %d due %lld",
		    n, (long long) due);
		if (prev >= 0)
			cr_assert_eq(due - prev, 1000000);
		prev = due;
		pace_take(&p);
	}
}

Test(pace, odd_rates_do_not_drift)
{
	pace p;
	cr_assert_eq(pace_rate(&p, 3, INFINITY), KV_OK);
	int64_t prev = 0, due;
	cr_assert(pace_peek(&p, &due));
	cr_assert_eq(due, 0);
	pace_take(&p);
	for (int n = 1; n <= 30000; n++) {
		cr_assert(pace_peek(&p, &due));
		cr_assert(llabs(due - prev - NS / 3) <= 1);
		cr_assert(llabs(due - llround(n * 1e9 / 3)) <= 1,
		    "request %d due %lld", n, (long long) due);
		prev = due;
		pace_take(&p);
	}
}

Test(pace, fake_clock_sees_r_per_second)
{
	pace p;
	cr_assert_eq(pace_rate(&p, 2000, 5), KV_OK);
	int64_t last = 0;
	for (int s = 0; s < 5; s++) {
		int n = 0;
		/* A clock that moves in uneven steps. */
		for (int64_t t = s * NS; t < (s + 1) * NS; t += 777777)
			n += take_due(&p, t, &last);
		n += take_due(&p, (s + 1) * NS - 1, &last);
		cr_assert_eq(n, 2000, "second %d: %d due", s, n);
	}
	int64_t due;
	cr_assert(!pace_peek(&p, &due), "the schedule is over after 5 s");
}

Test(pace, schedule_steps_at_the_right_times)
{
	pace p;
	cr_assert_eq(pace_parse_schedule(&p, "10:1,20:1"), KV_OK);
	cr_assert_eq(p.n_steps, 2);
	cr_assert_float_eq(pace_length(&p), 2.0, 1e-12);
	int64_t due;
	for (int n = 0; n < 10; n++) {
		cr_assert(pace_peek(&p, &due));
		cr_assert_eq(due, (int64_t) n * (NS / 10));
		pace_take(&p);
	}
	for (int n = 0; n < 20; n++) {
		cr_assert(pace_peek(&p, &due));
		cr_assert_eq(due, NS + (int64_t) n * (NS / 20),
		    "step 1 request %d due %lld", n, (long long) due);
		pace_take(&p);
	}
	cr_assert(!pace_peek(&p, &due));
	cr_assert_eq(pace_step_at(&p, 0.0), 0);
	cr_assert_eq(pace_step_at(&p, 0.999), 0);
	cr_assert_eq(pace_step_at(&p, 1.0), 1);
	cr_assert_eq(pace_step_at(&p, 5.0), 1);
	cr_assert_float_eq(pace_rate_at(&p, 0.5), 10, 1e-12);
	cr_assert_float_eq(pace_rate_at(&p, 1.5), 20, 1e-12);
	cr_assert_float_eq(pace_rate_at(&p, 2.5), 0, 1e-12);
}

Test(pace, a_zero_rate_step_pauses)
{
	pace p;
	cr_assert_eq(pace_parse_schedule(&p, "10:1,0:2,10:1"), KV_OK);
	int64_t last = 0;
	cr_assert_eq(take_due(&p, NS - 1, &last), 10);
	cr_assert_eq(take_due(&p, 3 * NS - 1, &last), 0);
	cr_assert_eq(take_due(&p, 4 * NS - 1, &last), 10);
	cr_assert_eq(last, 3 * NS + 9 * (NS / 10));
}

Test(pace, fractional_counts_carry_into_the_next_step)
{
	/* 2.5 requests in the first step: the third is due 0.5/R2 later. */
	pace p;
	cr_assert_eq(pace_parse_schedule(&p, "5:0.5,10:1"), KV_OK);
	cr_assert_float_eq(pace_due_at(&p, 2), 0.4, 1e-12);
	cr_assert_float_eq(pace_due_at(&p, 3), 0.5 + 0.05, 1e-12);
	cr_assert(isinf(pace_due_at(&p, 13)));
}

Test(pace, ramp_rate_is_linear)
{
	pace p;
	cr_assert_eq(pace_parse_ramp(&p, "0:100:10"), KV_OK);
	for (double t = 0; t < 10; t += 0.25)
		cr_assert_float_eq(pace_rate_at(&p, t), 10 * t, 1e-9);
	/* Requests due by t: the integral 5 t^2. */
	int64_t last = 0;
	int total = 0;
	for (int s = 1; s <= 10; s++) {
		total += take_due(&p, s * NS, &last);
		double want = 5.0 * s * s;
		cr_assert(fabs(total - want) <= 1, "by %d s: %d due, want %g",
		    s, total, want);
	}
	cr_assert_eq(total, 500);
}

Test(pace, falling_ramp_is_linear)
{
	pace p;
	cr_assert_eq(pace_parse_ramp(&p, "200:100:4"), KV_OK);
	cr_assert_float_eq(pace_rate_at(&p, 0), 200, 1e-9);
	cr_assert_float_eq(pace_rate_at(&p, 2), 150, 1e-9);
	cr_assert_float_eq(pace_rate_at(&p, 3.5), 112.5, 1e-9);
	int64_t last = 0;
	int total = 0;
	for (int s = 1; s <= 4; s++) {
		total += take_due(&p, s * NS, &last);
		double want = 200.0 * s - 12.5 * s * s;
		cr_assert(fabs(total - want) <= 1, "by %d s: %d due, want %g",
		    s, total, want);
	}
	int64_t due;
	cr_assert(!pace_peek(&p, &due));
	/* Due times never go backwards. */
	pace_parse_ramp(&p, "200:0:4");
	int64_t prev = -1;
	while (pace_peek(&p, &due)) {
		cr_assert_geq(due, prev);
		prev = due;
		pace_take(&p);
	}
	cr_assert_leq(prev, 4 * NS);
}

/* Criterion may run a test in a fresh process: no pointers here. */
struct spec {
	char text[24];
};

ParameterizedTestParameters(pace, bad_schedules_are_refused)
{
	static struct spec bad[] = { { "" }, { "10" }, { "10:" }, { "10:0" },
		{ "-1:5" }, { "a:b" }, { "10:1," }, { "10:1,20" }, { ":1" },
		{ "10:1;20:1" }, { "10:-1" }, { "inf:1" }, { "10:nan" } };
	return cr_make_param_array(struct spec, bad,
	    sizeof(bad) / sizeof(bad[0]));
}

ParameterizedTest(struct spec *s, pace, bad_schedules_are_refused)
{
	pace p;
	cr_assert_eq(pace_parse_schedule(&p, s->text), KV_EINVAL, "%s",
	    s->text);
}

ParameterizedTestParameters(pace, bad_ramps_are_refused)
{
	static struct spec bad[] = { { "" }, { "1:2" }, { "1:2:0" },
		{ "1:2:-3" }, { "a:2:3" }, { "1:2:3:4" }, { "-1:2:3" },
		{ "1:2:3x" } };
	return cr_make_param_array(struct spec, bad,
	    sizeof(bad) / sizeof(bad[0]));
}

ParameterizedTest(struct spec *s, pace, bad_ramps_are_refused)
{
	pace p;
	cr_assert_eq(pace_parse_ramp(&p, s->text), KV_EINVAL, "%s", s->text);
}

Test(pace, bad_rates_are_refused)
{
	pace p;
	cr_assert_eq(pace_rate(&p, 0, 1), KV_EINVAL);
	cr_assert_eq(pace_rate(&p, -5, 1), KV_EINVAL);
	cr_assert_eq(pace_rate(&p, 5, 0), KV_EINVAL);
	cr_assert_eq(pace_rate(&p, INFINITY, 1), KV_EINVAL);
}
