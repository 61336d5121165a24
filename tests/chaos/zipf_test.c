/*
 * zipf_test.c — key distributions (chaos/load/zipf.c): the rejection-
 * inversion sampler gives rank 0 its theoretical share, --hot-share
 * solving finds the theta of a wanted share, uniform is uniform, hot-key
 * sharding spreads rank 0 evenly, and a seed fixes every draw.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "zipf.h"

#define DRAWS 1000000

/* The share of draws each rank below `track` got. */
static void
shares(const zipf *z, uint64_t seed, size_t draws, double *out, size_t track)
{
	zipf_rng r;
	zipf_rng_seed(&r, seed);
	uint64_t *n = calloc(track, sizeof(*n));
	cr_assert_not_null(n);
	for (size_t i = 0; i < draws; i++) {
		uint64_t k = zipf_next(z, &r);
		cr_assert_lt(k, z->n);
		if (k < track)
			n[k]++;
	}
	for (size_t k = 0; k < track; k++)
		out[k] = (double) n[k] / (double) draws;
	free(n);
}

Test(zipf, rank0_share_matches_theory_at_0_99)
{
	zipf z;
	cr_assert_eq(zipf_init(&z, ZIPF_ZIPF, 1000, 0.99), KV_OK);
	double p0 = zipf_p0(1000, 0.99);
	double s[3];
	shares(&z, 1, DRAWS, s, 3);
	cr_assert(fabs(s[0] - p0) / p0 < 0.02,
	    "rank 0 share %f, theory %f", s[0], p0);
	/* Ranks 1 and 2 follow (k + 1)^-theta too. */
	for (int k = 1; k < 3; k++) {
		double pk = p0 * pow(k + 1, -0.99);
		cr_assert(fabs(s[k] - pk) / pk < 0.03,
		    "rank %d share %f, theory %f", k, s[k], pk);
	}
}

Test(zipf, rank0_share_matches_theory_for_other_thetas)
{
	const double thetas[] = { 0.5, 1.0, 1.5 };
	for (size_t i = 0; i < 3; i++) {
		zipf z;
		cr_assert_eq(zipf_init(&z, ZIPF_ZIPF, 100000, thetas[i]),
		    KV_OK);
		double p0 = zipf_p0(100000, thetas[i]);
		double s;
		shares(&z, 2, DRAWS, &s, 1);
		cr_assert(fabs(s - p0) / p0 < 0.05,
		    "theta %g: rank 0 share %f, theory %f", thetas[i], s, p0);
	}
}

Test(zipf, harmonic_tail_approximation_is_exact_enough)
{
	const double thetas[] = { 0.3, 0.99, 1.0, 1.01, 2.0 };
	for (size_t i = 0; i < 5; i++) {
		double sum = 0;
		for (uint64_t k = 200000; k >= 1; k--)
			sum += pow((double) k, -thetas[i]);
		double h = zipf_harmonic(200000, thetas[i]);
		cr_assert(fabs(h - sum) / sum < 1e-10,
		    "theta %g: %.15g against %.15g", thetas[i], h, sum);
	}
}

Test(zipf, hot_share_solves_theta)
{
	double theta;
	cr_assert_eq(zipf_solve(10000, 0.0599, &theta), KV_OK);
	double p0 = zipf_p0(10000, theta);
	cr_assert(fabs(p0 - 0.0599) <= 1e-4, "theta %f gives p0 %f", theta,
	    p0);
	/* And the sampler with that theta agrees. */
	zipf z;
	cr_assert_eq(zipf_init(&z, ZIPF_ZIPF, 10000, theta), KV_OK);
	double s;
	shares(&z, 5, DRAWS, &s, 1);
	cr_assert(fabs(s - 0.0599) / 0.0599 < 0.02, "share %f", s);
}

Test(zipf, hot_share_out_of_range_is_refused)
{
	double theta = -1;
	cr_assert_eq(zipf_solve(10000, 0.0001, &theta), KV_EINVAL);
	cr_assert_eq(zipf_solve(10000, 1.0, &theta), KV_EINVAL);
	cr_assert_eq(zipf_solve(1, 0.5, &theta), KV_EINVAL);
	cr_assert_float_eq(theta, -1, 0, "theta untouched on failure");
	cr_assert_eq(zipf_solve(10, 0.9, &theta), KV_OK);
	cr_assert(fabs(zipf_p0(10, theta) - 0.9) < 1e-9);
}

Test(zipf, uniform_is_uniform)
{
	enum { N = 100 };
	zipf z;
	cr_assert_eq(zipf_init(&z, ZIPF_UNIFORM, N, 0), KV_OK);
	double s[N];
	shares(&z, 9, DRAWS, s, N);
	/* Chi-square with 99 degrees of freedom: mean 99, sd 14. */
	double chi = 0, e = (double) DRAWS / N;
	for (int k = 0; k < N; k++) {
		double d = s[k] * DRAWS - e;
		chi += d * d / e;
	}
	cr_assert_lt(chi, 99 + 6 * 14, "chi-square %f", chi);
}

Test(zipf, hot_is_always_rank0)
{
	zipf z;
	cr_assert_eq(zipf_parse(&z, "hot", 500), KV_OK);
	zipf_rng r;
	zipf_rng_seed(&r, 1);
	for (int i = 0; i < 1000; i++)
		cr_assert_eq(zipf_next(&z, &r), 0);
}

Test(zipf, shard_hot_spreads_rank0_evenly)
{
	enum { K = 8, DRAWN = 80000 };
	zipf z;
	cr_assert_eq(zipf_parse(&z, "hot", 1000), KV_OK);
	z.shard_hot = K;
	zipf_rng r;
	zipf_rng_seed(&r, 4);
	int n[K] = { 0 };
	for (int i = 0; i < DRAWN; i++) {
		zipf_key k = zipf_draw(&z, &r);
		cr_assert_eq(k.rank, 0);
		cr_assert(k.shard >= 0 && k.shard < K);
		n[k.shard]++;
	}
	for (int i = 0; i < K; i++)
		cr_assert(abs(n[i] - DRAWN / K) < DRAWN / K / 20,
		    "shard %d got %d of %d", i, n[i], DRAWN);
	/* Other ranks are not sharded. */
	cr_assert_eq(zipf_parse(&z, "uniform", 1000), KV_OK);
	z.shard_hot = K;
	for (int i = 0; i < 10000; i++) {
		zipf_key k = zipf_draw(&z, &r);
		cr_assert(k.rank == 0 ? k.shard >= 0 : k.shard == -1);
	}
}

Test(zipf, keys_are_prefix_and_rank)
{
	char buf[16];
	zipf_key k = { 17, -1 };
	cr_assert_eq(zipf_key_format(&k, "k", buf, sizeof(buf)), KV_OK);
	cr_assert_str_eq(buf, "k17");
	k = (zipf_key) { 0, 3 };
	cr_assert_eq(zipf_key_format(&k, "user", buf, sizeof(buf)), KV_OK);
	cr_assert_str_eq(buf, "user0#3");
	k = (zipf_key) { 123456789, -1 };
	cr_assert_eq(zipf_key_format(&k, "prefix", buf, 8), KV_EINVAL);
}

Test(zipf, seed_fixes_the_draws)
{
	zipf z;
	cr_assert_eq(zipf_init(&z, ZIPF_ZIPF, 1000000, 0.99), KV_OK);
	zipf_rng a, b, c;
	zipf_rng_seed(&a, 42);
	zipf_rng_seed(&b, 42);
	zipf_rng_seed(&c, 43);
	int same = 0;
	for (int i = 0; i < 1000; i++) {
		uint64_t x = zipf_next(&z, &a);
		cr_assert_eq(x, zipf_next(&z, &b));
		same += x == zipf_next(&z, &c);
	}
	cr_assert_lt(same, 500, "another seed gives other draws");
}

Test(zipf, dist_specs_parse)
{
	zipf z;
	cr_assert_eq(zipf_parse(&z, "zipf:0.99", 10), KV_OK);
	cr_assert_eq(z.kind, ZIPF_ZIPF);
	cr_assert_float_eq(z.theta, 0.99, 1e-12);
	cr_assert_eq(zipf_parse(&z, "uniform", 10), KV_OK);
	cr_assert_eq(z.kind, ZIPF_UNIFORM);
	cr_assert_eq(zipf_parse(&z, "zipf:", 10), KV_EINVAL);
	cr_assert_eq(zipf_parse(&z, "zipf:0", 10), KV_EINVAL);
	cr_assert_eq(zipf_parse(&z, "zipf:-1", 10), KV_EINVAL);
	cr_assert_eq(zipf_parse(&z, "zipf:1x", 10), KV_EINVAL);
	cr_assert_eq(zipf_parse(&z, "zipf:nan", 10), KV_EINVAL);
	cr_assert_eq(zipf_parse(&z, "normal", 10), KV_EINVAL);
	cr_assert_eq(zipf_parse(&z, "uniform", 0), KV_EINVAL);
}

Test(zipf, below_stays_below)
{
	zipf_rng r;
	zipf_rng_seed(&r, 8);
	int seen[3] = { 0 };
	for (int i = 0; i < 3000; i++) {
		uint64_t v = zipf_rng_below(&r, 3);
		cr_assert_lt(v, 3);
		seen[v]++;
	}
	cr_assert(seen[0] > 0 && seen[1] > 0 && seen[2] > 0);
	for (int i = 0; i < 1000; i++) {
		double d = zipf_rng_double(&r);
		cr_assert(d >= 0 && d < 1);
	}
}
