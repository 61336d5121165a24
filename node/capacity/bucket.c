/*
 * bucket.c — token bucket arithmetic (see bucket.h for the model).
 */
#include "bucket.h"

/*
 * The most a bucket keeps: the current second plus burst_s seconds of
 * credit. It is at least one unit: a bucket that could never rise above
 * zero (a rate of almost nothing) would never admit anything.
 */
static int64_t
cap_for(int64_t rate, uint32_t burst_s)
{
	__int128 cap = (__int128) rate * ((__int128) burst_s + 1);
	if (cap > INT64_MAX / 2)
		cap = INT64_MAX / 2;
	return cap < 2 * BUCKET_MICRO ? 2 * BUCKET_MICRO : (int64_t) cap;
}

/* Adds what flowed in since last_ns, up to the cap. */
static void
refill(bucket *b, int64_t now_ns)
{
	if (now_ns <= b->last_ns)
		return;
	if (b->level >= b->cap) {
		b->last_ns = now_ns;
		return;
	}
	__int128 add = (__int128) b->rate * (now_ns - b->last_ns) /
	    1000000000;
	__int128 level = b->level + add;
	b->level = level > b->cap ? b->cap : (int64_t) level;
	b->last_ns = now_ns;
}

int64_t
bucket_rate_micro(uint64_t units_num, uint64_t units_den)
{
	if (units_den == 0)
		units_den = 1;
	__int128 r = (__int128) units_num * 2 * BUCKET_MICRO / units_den;
	return r > INT64_MAX / 4 ? INT64_MAX / 4 : (int64_t) r;
}

void
bucket_init(bucket *b, int64_t rate_micro, uint32_t burst_s, int64_t now_ns)
{
	*b = (bucket) {
		.level = rate_micro, .rate = rate_micro,
		.cap = cap_for(rate_micro, burst_s), .last_ns = now_ns,
	};
}

void
bucket_set_rate(bucket *b, int64_t rate_micro, uint32_t burst_s,
    int64_t now_ns)
{
	refill(b, now_ns);
	b->rate = rate_micro;
	b->cap = cap_for(rate_micro, burst_s);
	if (b->level > b->cap)
		b->level = b->cap;
}

bool
bucket_admit(bucket *b, int64_t now_ns)
{
	refill(b, now_ns);
	if (b->level > 0) {
		b->admitted++;
		return true;
	}
	b->throttled++;
	return false;
}

void
bucket_charge(bucket *b, uint64_t half_units, int64_t now_ns)
{
	refill(b, now_ns);
	__int128 level = (__int128) b->level -
	    (__int128) half_units * BUCKET_MICRO;
	/* A debt deeper than a day of refill is as good as infinite. */
	b->level = level < INT64_MIN / 2 ? INT64_MIN / 2 : (int64_t) level;
	b->charged_half += half_units;
}

int64_t
bucket_credit(bucket *b, int64_t now_ns)
{
	refill(b, now_ns);
	return b->level;
}

int64_t
bucket_burst(bucket *b, int64_t now_ns)
{
	refill(b, now_ns);
	return b->level > b->rate ? b->level - b->rate : 0;
}
