/*
 * zipf.h — which key a request touches, and the seeded random numbers
 * everything in kv-load draws from.
 *
 * A distribution picks a rank in 0..n-1, rank 0 being the hottest:
 * uniform, Zipf (P(rank k) proportional to (k + 1)^-theta) or always 0
 * ("hot"). Zipf draws use Hörmann and Derflinger's rejection-inversion
 * ("Rejection-inversion to generate variates from monotone discrete
 * distributions", 1996; the form of Apache Commons RNG): exact, O(1) time
 * and memory for any n, so --keys can be large. zipf_solve finds the theta
 * that gives rank 0 a wanted share (--hot-share), from the exact
 * p0 = 1 / H(n, theta). Write sharding (--shard-hot K) replaces rank 0 by
 * K keys drawn uniformly.
 *
 * Ranks become key strings ("k17", "k0#3") with zipf_key_format. There is
 * no scrambling of ranks: the partition hash already spreads them.
 * Read next: pace.h.
 */
#ifndef KVLOAD_ZIPF_H
#define KVLOAD_ZIPF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

/* xoshiro256**: fast, good, and the same sequence for the same seed. */
typedef struct zipf_rng {
	uint64_t s[4];
} zipf_rng;

/* zipf_rng_seed starts r from seed (splitmix64 expands it); cannot fail. */
void zipf_rng_seed(zipf_rng *r, uint64_t seed);

/* zipf_rng_next returns 64 random bits. */
uint64_t zipf_rng_next(zipf_rng *r);

/* zipf_rng_double returns a double uniform in [0, 1). */
double zipf_rng_double(zipf_rng *r);

/* zipf_rng_below returns an integer uniform in [0, n), without bias; n > 0. */
uint64_t zipf_rng_below(zipf_rng *r, uint64_t n);

typedef enum zipf_kind {
	ZIPF_UNIFORM,
	ZIPF_ZIPF,
	ZIPF_HOT,
} zipf_kind;

typedef struct zipf {
	zipf_kind kind;
	uint64_t n;         /* ranks 0..n-1 */
	double theta;       /* ZIPF_ZIPF only */
	uint32_t shard_hot; /* 0: rank 0 is one key; K: K keys "P0#0".. */
	/* Rejection-inversion constants (ZIPF_ZIPF). */
	double h_x1, h_n, s;
} zipf;

/* A drawn key: its rank and, when rank 0 is sharded, which shard. */
typedef struct zipf_key {
	uint64_t rank;
	int64_t shard; /* -1 when not sharded */
} zipf_key;

/*
 * zipf_init prepares a distribution over n ranks. Returns KV_EINVAL when
 * n is 0, or for ZIPF_ZIPF when theta is not finite or not above 0.
 */
kv_err zipf_init(zipf *z, zipf_kind kind, uint64_t n, double theta);

/*
 * zipf_parse reads --dist ("uniform", "zipf:THETA" or "hot") into *z over n
 * ranks. Returns KV_EINVAL for anything else, with *z unchanged.
 */
kv_err zipf_parse(zipf *z, const char *spec, uint64_t n);

/* zipf_next returns a rank in 0..n-1 drawn from z with r. */
uint64_t zipf_next(const zipf *z, zipf_rng *r);

/* zipf_draw returns a key: a rank, and a shard if it is a sharded rank 0. */
zipf_key zipf_draw(const zipf *z, zipf_rng *r);

/*
 * zipf_key_format writes prefix followed by the rank in decimal ("k17"),
 * or "k0#3" for shard 3 of rank 0, into buf[0..len), NUL-terminated.
 * Returns KV_OK, or KV_EINVAL if it does not fit.
 */
kv_err zipf_key_format(const zipf_key *k, const char *prefix, char *buf,
    size_t len);

/* zipf_harmonic returns H(n, theta) = sum of k^-theta for k = 1..n. */
double zipf_harmonic(uint64_t n, double theta);

/* zipf_p0 returns the share of rank 0 under Zipf(theta) over n ranks. */
double zipf_p0(uint64_t n, double theta);

/*
 * zipf_solve finds by bisection the theta whose rank 0 gets `share` of the
 * draws over n ranks (to 1e-12 in theta). Returns KV_EINVAL when share is
 * not in (1/n, 1): uniform already gives 1/n, and 1 needs infinite theta.
 */
kv_err zipf_solve(uint64_t n, double share, double *theta);

#endif
