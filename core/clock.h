/*
 * clock.h — the monotonic clock in milliseconds (and microseconds), for timeouts and ages
 * measured inside one process (never compared across processes), and in
 * seconds as a double, for rates; and the deadline a condition variable
 * waits for (CLOCK_REALTIME, pthread_cond_timedwait's clock).
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

/* The CLOCK_REALTIME time ms milliseconds from now, for
 * pthread_cond_timedwait. */
static inline struct timespec
clock_deadline_in(int64_t ms)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += (time_t) (ms / 1000);
	ts.tv_nsec += (long) (ms % 1000) * 1000000L;
	ts.tv_sec += ts.tv_nsec / 1000000000L;
	ts.tv_nsec %= 1000000000L;
	return ts;
}

#endif
