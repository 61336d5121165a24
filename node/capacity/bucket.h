/*
 * bucket.h — one token bucket: a partition's read or write capacity.
 *
 * The model (DynamoDB developer guide, "Burst capacity" and "Best
 * practices for designing partition keys"): capacity flows in continuously
 * at the partition's rate. The bucket holds the current second's capacity
 * (one second of the rate: a partition serves its 1000 WCU "per second"
 * even when they arrive in the same millisecond) plus BURST CREDIT: what
 * was left unused, kept for up to `burst` seconds (DynamoDB keeps 300 s).
 * A new bucket holds one second and no burst credit, so credit only ever
 * comes from capacity left unused.
 *
 * A request is ADMITTED when the level is above zero and is then charged
 * exactly what it consumed, which may take the level below zero: a Query
 * page's cost is known only after it was read, and a 400 KB write costs
 * 400 WCU at once. The debt is paid back by the refill before anything
 * else is admitted. Under a load above the rate the bucket therefore
 * admits, on average, exactly `rate` units per second — the partition's
 * ceiling — and throttles the rest.
 *
 * Arithmetic is integer: levels and rates are in micro half-units (one
 * RCU or WCU is 2,000,000), time in nanoseconds from any monotonic origin
 * the caller chooses (tests pass a fake clock). No locking here: the
 * owner (node/part.h) serialises calls on one bucket.
 */
#ifndef KV_BUCKET_H
#define KV_BUCKET_H

#include <stdbool.h>
#include <stdint.h>

#define BUCKET_MICRO 1000000LL /* micro half-units per half unit */

typedef struct bucket {
	int64_t level;   /* micro half-units; below zero while in debt */
	int64_t rate;    /* micro half-units per second */
	int64_t cap;     /* most kept: (1 + burst) s of rate, micro */
	int64_t last_ns; /* when level was last brought up to date */
	uint64_t charged_half;   /* half units charged, ever */
	uint64_t admitted;       /* requests admitted, ever */
	uint64_t throttled;      /* requests refused, ever */
} bucket;

/*
 * bucket_init starts a bucket refilling at rate_micro micro half-units
 * per second (see bucket_rate_micro), holding one second of the rate and
 * no burst credit, that keeps at most burst_s seconds of burst credit.
 */
void bucket_init(bucket *b, int64_t rate_micro, uint32_t burst_s,
    int64_t now_ns);

/*
 * bucket_rate_micro converts a rate of units_num / units_den capacity
 * units per second (a table's provisioned units shared by its partitions
 * are units / n_parts) to micro half-units per second.
 */
int64_t bucket_rate_micro(uint64_t units_num, uint64_t units_den);

/*
 * bucket_set_rate changes the rate and the burst window from now on:
 * credit earned so far at the old rate is kept, clipped to the new cap.
 */
void bucket_set_rate(bucket *b, int64_t rate_micro, uint32_t burst_s,
    int64_t now_ns);

/*
 * bucket_admit reports whether a request may run now (level above zero)
 * and counts it as admitted or throttled.
 */
bool bucket_admit(bucket *b, int64_t now_ns);

/* bucket_charge takes half_units from the level (after the request ran). */
void bucket_charge(bucket *b, uint64_t half_units, int64_t now_ns);

/*
 * bucket_credit returns the level at now in micro half-units: up to one
 * second of the rate is the current capacity, anything above is burst
 * credit, and a negative level a debt still to be refilled.
 */
int64_t bucket_credit(bucket *b, int64_t now_ns);

/* bucket_burst returns the burst credit at now (level above one second). */
int64_t bucket_burst(bucket *b, int64_t now_ns);

#endif
