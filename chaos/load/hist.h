/*
 * hist.h — latency histogram with a bounded relative error.
 *
 * HdrHistogram's log-linear layout: values below 256 have a bucket each;
 * above, every range [2^e, 2^(e+1)) is cut into 128 equal buckets, so a
 * bucket spans at most 1/128 (0.78 %) of the smallest value in it and a
 * percentile read back is never more than that above the true one.
 * Values are microseconds from 0 to HIST_MAX (2^36 - 1 µs, about 19 hours);
 * larger values are clamped to HIST_MAX and counted in `clamped`.
 *
 * Recording is O(1) and allocates nothing; histograms merge by adding
 * counts. A hist is a plain struct of about 30 KB: embed or allocate it.
 * It takes no lock. Read next: zipf.h.
 */
#ifndef KVLOAD_HIST_H
#define KVLOAD_HIST_H

#include <stdint.h>

#define HIST_SUB_BITS 8 /* 256 exact buckets, then 128 per power of two */
#define HIST_MAX_BITS 36
#define HIST_MAX ((UINT64_C(1) << HIST_MAX_BITS) - 1)
#define HIST_BUCKETS \
	((1 << HIST_SUB_BITS) + \
	    (HIST_MAX_BITS - HIST_SUB_BITS) * (1 << (HIST_SUB_BITS - 1)))

typedef struct hist {
	uint64_t total;   /* values recorded */
	uint64_t clamped; /* of which above HIST_MAX */
	uint64_t min;     /* smallest value (after clamping); 0 if empty */
	uint64_t max;     /* largest value (after clamping) */
	uint64_t sum;     /* for the mean */
	uint64_t counts[HIST_BUCKETS];
} hist;

/* hist_init empties h; cannot fail. Also the way to reset it. */
void hist_init(hist *h);

/* hist_record adds one value in microseconds, clamping it to HIST_MAX. */
void hist_record(hist *h, uint64_t us);

/* hist_merge adds every value of src to dst, as if recorded there. */
void hist_merge(hist *dst, const hist *src);

/*
 * hist_percentile returns the value below or at which p percent of the
 * values lie (p in 0..100; 0 gives the minimum, 100 the maximum), as the
 * highest value of its bucket but never above the maximum recorded: at
 * most 1/128 above the exact order statistic. 0 for an empty histogram.
 */
uint64_t hist_percentile(const hist *h, double p);

/* hist_mean returns the mean value, 0 for an empty histogram. */
double hist_mean(const hist *h);

/*
 * hist_bucket returns the index of the bucket holding v (v <= HIST_MAX),
 * and hist_bucket_high the largest value that bucket holds; exposed for
 * the tests of the error bound.
 */
unsigned hist_bucket(uint64_t v);
uint64_t hist_bucket_high(unsigned idx);

#endif
