/*
 * hist_test.c — the latency histogram (chaos/load/hist.c): percentiles
 * read back within the stated relative error (1/128) of the exact order
 * statistics of sorted samples, merging equals recording both, and
 * values beyond the range clamp instead of crashing.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hist.h"
#include "zipf.h"

#define SAMPLES 200000

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
	return x < y ? -1 : x > y;
}

/* The exact p-th percentile of sorted[0..n): the ceil(p% n)-th value. */
static uint64_t
exact(const uint64_t *sorted, size_t n, double p)
{
	size_t rank = (size_t) ceil(p / 100.0 * (double) n);
	if (rank == 0)
		rank = 1;
	return sorted[rank - 1];
}

static void
check_percentiles(uint64_t *v, size_t n, const char *what)
{
	hist *h = malloc(sizeof(*h));
	cr_assert_not_null(h);
	hist_init(h);
	for (size_t i = 0; i < n; i++)
		hist_record(h, v[i]);
	qsort(v, n, sizeof(v[0]), cmp_u64);
	const double ps[] = { 50, 90, 99, 99.9, 100 };
	for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
		uint64_t want = exact(v, n, ps[i]);
		uint64_t got = hist_percentile(h, ps[i]);
		cr_assert(got >= want && (double) (got - want) <=
		    (double) want / 128.0,
		    "%s p%g: got %llu, exact %llu", what, ps[i],
		    (unsigned long long) got, (unsigned long long) want);
	}
	cr_assert_eq(h->max, v[n - 1], "%s: max is exact", what);
	cr_assert_eq(h->min, v[0], "%s: min is exact", what);
	cr_assert_eq(h->total, n);
	free(h);
}

Test(hist, uniform_samples_within_relative_error)
{
	uint64_t *v = malloc(SAMPLES * sizeof(*v));
	cr_assert_not_null(v);
	zipf_rng r;
	zipf_rng_seed(&r, 7);
	for (size_t i = 0; i < SAMPLES; i++)
		v[i] = 1 + zipf_rng_below(&r, 1000000);
	check_percentiles(v, SAMPLES, "uniform 1 us..1 s");
	free(v);
}

Test(hist, exponential_samples_within_relative_error)
{
	uint64_t *v = malloc(SAMPLES * sizeof(*v));
	cr_assert_not_null(v);
	zipf_rng r;
	zipf_rng_seed(&r, 11);
	for (size_t i = 0; i < SAMPLES; i++) {
		/* Mean 2 ms: a latency-like long tail. */
		double u = zipf_rng_double(&r);
		v[i] = 1 + (uint64_t) (-2000.0 * log(1.0 - u));
	}
	check_percentiles(v, SAMPLES, "exponential, mean 2 ms");
	free(v);
}

Test(hist, every_bucket_is_within_one_128th)
{
	/* Powers of two, their neighbours and a sweep up to 100 s. */
	for (uint64_t v = 1; v <= HIST_MAX; v = v * 2 + 1) {
		uint64_t hi = hist_bucket_high(hist_bucket(v));
		cr_assert(hi >= v && (double) (hi - v) <= (double) v / 128.0,
		    "value %llu lands in a bucket up to %llu",
		    (unsigned long long) v, (unsigned long long) hi);
	}
	unsigned prev = 0;
	for (uint64_t v = 1; v <= 100000000; v += v / 64 + 1) {
		unsigned b = hist_bucket(v);
		cr_assert(b >= prev && b < HIST_BUCKETS);
		cr_assert_leq(hist_bucket_high(b) - v, v / 128);
		prev = b;
	}
	cr_assert_eq(hist_bucket(HIST_MAX), HIST_BUCKETS - 1);
	cr_assert_eq(hist_bucket_high(HIST_BUCKETS - 1), HIST_MAX);
}

Test(hist, merge_equals_recording_both)
{
	hist *a = malloc(sizeof(hist)), *b = malloc(sizeof(hist));
	hist *both = malloc(sizeof(hist));
	cr_assert(a != NULL && b != NULL && both != NULL);
	hist_init(a);
	hist_init(b);
	hist_init(both);
	zipf_rng r;
	zipf_rng_seed(&r, 3);
	for (int i = 0; i < 50000; i++) {
		uint64_t v = zipf_rng_below(&r, 5000000);
		hist_record(i % 3 == 0 ? a : b, v);
		hist_record(both, v);
	}
	hist_merge(a, b);
	cr_assert_eq(a->total, both->total);
	cr_assert_eq(a->min, both->min);
	cr_assert_eq(a->max, both->max);
	cr_assert_eq(a->sum, both->sum);
	cr_assert_eq(memcmp(a->counts, both->counts, sizeof(a->counts)), 0);
	for (double p = 0; p <= 100; p += 12.5)
		cr_assert_eq(hist_percentile(a, p), hist_percentile(both, p));
	free(a);
	free(b);
	free(both);
}

Test(hist, merging_into_empty_copies)
{
	hist *a = malloc(sizeof(hist)), *b = malloc(sizeof(hist));
	cr_assert(a != NULL && b != NULL);
	hist_init(a);
	hist_init(b);
	hist_record(b, 500);
	hist_record(b, 700);
	hist_merge(a, b);
	cr_assert_eq(a->min, 500);
	cr_assert_eq(a->max, 700);
	hist_init(b);
	hist_merge(a, b); /* an empty source changes nothing */
	cr_assert_eq(a->min, 500);
	cr_assert_eq(a->total, 2);
	free(a);
	free(b);
}

Test(hist, extreme_values_clamp)
{
	hist *h = malloc(sizeof(hist));
	cr_assert_not_null(h);
	hist_init(h);
	hist_record(h, 0);
	hist_record(h, UINT64_MAX);
	hist_record(h, HIST_MAX + 1);
	hist_record(h, HIST_MAX);
	cr_assert_eq(h->total, 4);
	cr_assert_eq(h->clamped, 2);
	cr_assert_eq(h->min, 0);
	cr_assert_eq(h->max, HIST_MAX);
	cr_assert_eq(hist_percentile(h, 100), HIST_MAX);
	cr_assert_eq(hist_percentile(h, 0), 0);
	cr_assert_eq(hist_percentile(h, 25), 0);
	cr_assert_eq(hist_percentile(h, 50), HIST_MAX);
	free(h);
}

Test(hist, empty_reads_zero)
{
	hist *h = malloc(sizeof(hist));
	cr_assert_not_null(h);
	hist_init(h);
	cr_assert_eq(hist_percentile(h, 50), 0);
	cr_assert_eq(hist_percentile(h, 100), 0);
	cr_assert_float_eq(hist_mean(h), 0, 1e-12);
	free(h);
}

Test(hist, small_values_are_exact)
{
	hist *h = malloc(sizeof(hist));
	cr_assert_not_null(h);
	hist_init(h);
	for (uint64_t v = 1; v <= 255; v++)
		hist_record(h, v);
	cr_assert_eq(hist_percentile(h, 50), 128);
	cr_assert_eq(hist_percentile(h, 1), 3);
	cr_assert_float_eq(hist_mean(h), 128.0, 1e-9);
	free(h);
}
