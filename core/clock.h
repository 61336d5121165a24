/*
 * clock.h — the monotonic clock in milliseconds, for timeouts and ages
 * measured inside one process (never compared across processes).
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

#endif
