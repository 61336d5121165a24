/*
 * zipf.c — key distributions (see zipf.h). The rejection-inversion sampler
 * works on ranks 1..n as in the paper and returns rank - 1. Its helper
 * functions switch to Taylor series near 0 so theta = 1 needs no special
 * case.
 */
#include "zipf.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t
splitmix64(uint64_t *x)
{
	uint64_t z = (*x += UINT64_C(0x9E3779B97F4A7C15));
	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

void
zipf_rng_seed(zipf_rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&seed);
}

static uint64_t
rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t
zipf_rng_next(zipf_rng *r)
{
	uint64_t *s = r->s;
	uint64_t out = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return out;
}

double
zipf_rng_double(zipf_rng *r)
{
	return (double) (zipf_rng_next(r) >> 11) * 0x1.0p-53;
}

uint64_t
zipf_rng_below(zipf_rng *r, uint64_t n)
{
	/* Lemire's multiply-and-reject: no modulo bias for any n. */
	unsigned __int128 m = (unsigned __int128) zipf_rng_next(r) * n;
	uint64_t low = (uint64_t) m;
	if (low < n) {
		uint64_t floor = -n % n;
		while (low < floor) {
			m = (unsigned __int128) zipf_rng_next(r) * n;
			low = (uint64_t) m;
		}
	}
	return (uint64_t) (m >> 64);
}

/* log1p(x) / x, continuous at 0. */
static double
helper1(double x)
{
	if (fabs(x) > 1e-8)
		return log1p(x) / x;
	return 1 - x * (0.5 - x * (1.0 / 3 - 0.25 * x));
}

/* expm1(x) / x, continuous at 0. */
static double
helper2(double x)
{
	if (fabs(x) > 1e-8)
		return expm1(x) / x;
	return 1 + x * 0.5 * (1 + x * (1.0 / 3) * (1 + 0.25 * x));
}

/* H(x): an antiderivative of h(x) = x^-theta, H(1) = 0. */
static double
h_integral(double theta, double x)
{
	double lx = log(x);
	return helper2((1 - theta) * lx) * lx;
}

static double
h(double theta, double x)
{
	return exp(-theta * log(x));
}

static double
h_integral_inverse(double theta, double x)
{
	double t = x * (1 - theta);
	if (t < -1)
		t = -1; /* rounding; the true value is never below -1 */
	return exp(helper1(t) * x);
}

kv_err
zipf_init(zipf *z, zipf_kind kind, uint64_t n, double theta)
{
	if (n == 0)
		return KV_EINVAL;
	if (kind == ZIPF_ZIPF && (!isfinite(theta) || !(theta > 0)))
		return KV_EINVAL;
	memset(z, 0, sizeof(*z));
	z->kind = kind;
	z->n = n;
	if (kind != ZIPF_ZIPF)
		return KV_OK;
	z->theta = theta;
	z->h_x1 = h_integral(theta, 1.5) - 1;
	z->h_n = h_integral(theta, (double) n + 0.5);
	z->s = 2 - h_integral_inverse(theta,
	    h_integral(theta, 2.5) - h(theta, 2));
	return KV_OK;
}

kv_err
zipf_parse(zipf *z, const char *spec, uint64_t n)
{
	if (strcmp(spec, "uniform") == 0)
		return zipf_init(z, ZIPF_UNIFORM, n, 0);
	if (strcmp(spec, "hot") == 0)
		return zipf_init(z, ZIPF_HOT, n, 0);
	if (strncmp(spec, "zipf:", 5) != 0)
		return KV_EINVAL;
	char *end;
	double theta = strtod(spec + 5, &end);
	if (end == spec + 5 || *end != '\0')
		return KV_EINVAL;
	return zipf_init(z, ZIPF_ZIPF, n, theta);
}

uint64_t
zipf_next(const zipf *z, zipf_rng *r)
{
	switch (z->kind) {
	case ZIPF_HOT:
		return 0;
	case ZIPF_UNIFORM:
		return zipf_rng_below(r, z->n);
	case ZIPF_ZIPF:
		break;
	}
	double n = (double) z->n;
	for (;;) {
		/* u is uniform in (h_x1, h_n]. */
		double u = z->h_n + zipf_rng_double(r) * (z->h_x1 - z->h_n);
		double x = h_integral_inverse(z->theta, u);
		double k = floor(x + 0.5);
		if (k < 1)
			k = 1;
		else if (k > n)
			k = n;
		if (k - x <= z->s ||
		    u >= h_integral(z->theta, k + 0.5) - h(z->theta, k))
			return (uint64_t) k - 1;
	}
}

zipf_key
zipf_draw(const zipf *z, zipf_rng *r)
{
	zipf_key k = { zipf_next(z, r), -1 };
	if (k.rank == 0 && z->shard_hot > 0)
		k.shard = (int64_t) zipf_rng_below(r, z->shard_hot);
	return k;
}

kv_err
zipf_key_format(const zipf_key *k, const char *prefix, char *buf, size_t len)
{
	int n;
	if (k->shard >= 0)
		n = snprintf(buf, len, "%s%" PRIu64 "#%" PRId64, prefix,
		    k->rank, k->shard);
	else
		n = snprintf(buf, len, "%s%" PRIu64, prefix, k->rank);
	if (n < 0 || (size_t) n >= len)
		return KV_EINVAL;
	return KV_OK;
}

/*
 * Sum of k^-theta for k = 1..n: exact up to 4096 terms; beyond, the first
 * 1023 terms exactly and the rest by Euler-Maclaurin with two correction
 * terms, whose error at 1024 is far below a double's precision. This keeps
 * the bisection of zipf_solve fast for millions of keys.
 */
double
zipf_harmonic(uint64_t n, double theta)
{
	const uint64_t m = 1024;
	double sum = 0;
	if (n <= 4096) {
		for (uint64_t k = n; k >= 1; k--)
			sum += pow((double) k, -theta);
		return sum;
	}
	for (uint64_t k = m - 1; k >= 1; k--)
		sum += pow((double) k, -theta);
	double a = (double) m, b = (double) n, e = 1 - theta;
	double l = log(b / a);
	/* Integral of x^-theta from a to b, stable near theta = 1. */
	double integral = pow(a, e) * l * helper2(e * l);
	double fa = pow(a, -theta), fb = pow(b, -theta);
	double d1a = -theta * fa / a, d1b = -theta * fb / b;
	double c3 = -theta * (theta + 1) * (theta + 2);
	double d3a = c3 * fa / (a * a * a), d3b = c3 * fb / (b * b * b);
	return sum + integral + (fa + fb) / 2 + (d1b - d1a) / 12 -
	    (d3b - d3a) / 720;
}

double
zipf_p0(uint64_t n, double theta)
{
	return 1 / zipf_harmonic(n, theta);
}

kv_err
zipf_solve(uint64_t n, double share, double *theta)
{
	if (n < 2 || !(share > 1 / (double) n) || !(share < 1))
		return KV_EINVAL;
	/* p0 grows with theta: from 1/n at 0 towards 1. */
	double lo = 0, hi = 1;
	while (zipf_p0(n, hi) < share) {
		lo = hi;
		hi *= 2;
		if (hi > 1e6)
			return KV_EINVAL;
	}
	while (hi - lo > 1e-12) {
		double mid = (lo + hi) / 2;
		if (zipf_p0(n, mid) < share)
			lo = mid;
		else
			hi = mid;
	}
	*theta = (lo + hi) / 2;
	return KV_OK;
}
