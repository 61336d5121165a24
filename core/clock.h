/*
 * clock.h — the monotonic clock in milliseconds (and microseconds), for timeouts and ages
 * measured inside one process (never compared across processes), and in
 * seconds as a double, for rates.
 */
#ifndef KV_CORE_CLOCK_H
#define KV_CORE_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline int64_t
clock_mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline int64_t
clock_mono_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static inline double
clock_mono_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

#endif
