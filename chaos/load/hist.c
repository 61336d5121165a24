/*
 * hist.c — log-linear latency histogram (see hist.h). A value v >= 256
 * with its highest set bit at position m keeps its top 8 bits: the bucket
 * is (m - 7, v >> (m - 7)), and the low m - 7 bits are the error.
 */
#include "hist.h"

#include <string.h>

#define SUB_COUNT (1u << HIST_SUB_BITS)       /* 256 */
#define HALF_COUNT (1u << (HIST_SUB_BITS - 1)) /* 128 */

void
hist_init(hist *h)
{
	memset(h, 0, sizeof(*h));
}

unsigned
hist_bucket(uint64_t v)
{
	if (v < SUB_COUNT)
		return (unsigned) v;
	unsigned msb = 63u - (unsigned) __builtin_clzll(v);
	unsigned shift = msb - (HIST_SUB_BITS - 1);
	unsigned top = (unsigned) (v >> shift); /* 128..255 */
	return SUB_COUNT + (shift - 1) * HALF_COUNT + (top - HALF_COUNT);
}

uint64_t
hist_bucket_high(unsigned idx)
{
	if (idx < SUB_COUNT)
		return idx;
	unsigned j = idx - SUB_COUNT;
	unsigned shift = j / HALF_COUNT + 1;
	uint64_t top = HALF_COUNT + j % HALF_COUNT;
	return ((top + 1) << shift) - 1;
}

void
hist_record(hist *h, uint64_t us)
{
	if (us > HIST_MAX) {
		us = HIST_MAX;
		h->clamped++;
	}
	h->counts[hist_bucket(us)]++;
	if (h->total == 0 || us < h->min)
		h->min = us;
	if (us > h->max)
		h->max = us;
	h->total++;
	h->sum += us;
}

void
hist_merge(hist *dst, const hist *src)
{
	if (src->total == 0)
		return;
	for (unsigned i = 0; i < HIST_BUCKETS; i++)
		dst->counts[i] += src->counts[i];
	if (dst->total == 0 || src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
	dst->total += src->total;
	dst->clamped += src->clamped;
	dst->sum += src->sum;
}

uint64_t
hist_percentile(const hist *h, double p)
{
	if (h->total == 0)
		return 0;
	if (!(p > 0))
		return h->min;
	if (p >= 100)
		return h->max;
	/* The rank-th smallest value, rank = ceil(p% of total), from 1. */
	double want = p / 100.0 * (double) h->total;
	uint64_t rank = (uint64_t) want;
	if ((double) rank < want)
		rank++;
	if (rank == 0)
		rank = 1;
	uint64_t seen = 0;
	for (unsigned i = 0; i < HIST_BUCKETS; i++) {
		seen += h->counts[i];
		if (seen >= rank) {
			uint64_t v = hist_bucket_high(i);
			if (v > h->max)
				v = h->max;
			if (v < h->min)
				v = h->min;
			return v;
		}
	}
	return h->max;
}

double
hist_mean(const hist *h)
{
	return h->total == 0 ? 0 : (double) h->sum / (double) h->total;
}
