/*
 * pace.h — the open-loop schedule: when the n-th request is due.
 *
 * A schedule is a list of steps; in each the offered rate goes linearly
 * from `from` to `to` requests/s over `secs` seconds (from == to for a flat
 * step, secs = INFINITY for a plain --rate). The number of requests due by
 * time t is the integral of the rate, and request n (from 0) is due when
 * that integral reaches n: a flat rate R gives due times exactly n/R,
 * computed from n rather than summed, so they do not drift.
 *
 * Time is the caller's: seconds or nanoseconds since the start of the
 * run, from a fake clock in the tests and CLOCK_MONOTONIC in kv-load.
 * Nothing here sleeps or reads a clock. Read next: http.h.
 */
#ifndef KVLOAD_PACE_H
#define KVLOAD_PACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

#define PACE_MAX_STEPS 256

typedef struct pace_step {
	double from, to; /* requests/s at the start and at the end */
	double secs;     /* length, > 0; INFINITY for the last step only */
	double t0;       /* start, seconds since the start of the run */
	double n0;       /* requests due before the step (a real number) */
} pace_step;

typedef struct pace {
	pace_step steps[PACE_MAX_STEPS];
	size_t n_steps;
	size_t cur;    /* the step request `next` falls in */
	uint64_t next; /* index of the next request */
} pace;

/*
 * pace_rate sets *p to a flat rate of `rate` requests/s for secs seconds
 * (INFINITY: no end). Returns KV_EINVAL unless rate > 0 and secs > 0.
 */
kv_err pace_rate(pace *p, double rate, double secs);

/*
 * pace_parse_schedule reads --schedule "R1:S1,R2:S2,...": R1 requests/s
 * for S1 seconds, then R2 for S2, ... (a rate of 0 is a pause). Returns
 * KV_EINVAL when malformed, a rate is negative, a length is not above 0,
 * or there are more than PACE_MAX_STEPS steps.
 */
kv_err pace_parse_schedule(pace *p, const char *spec);

/*
 * pace_parse_ramp reads --ramp "FROM:TO:SECS": one step whose rate goes
 * linearly from FROM to TO over SECS seconds. Returns KV_EINVAL when
 * malformed, a rate is negative or SECS is not above 0.
 */
kv_err pace_parse_ramp(pace *p, const char *spec);

/* pace_length returns the length of the schedule in seconds, or INFINITY. */
double pace_length(const pace *p);

/*
 * pace_peek sets *due_ns to when the next request is due, in nanoseconds
 * since the start, and returns true; false once the schedule is over.
 */
bool pace_peek(pace *p, int64_t *due_ns);

/* pace_take moves on to the following request. */
void pace_take(pace *p);

/*
 * pace_due_at returns when request n (from 0) is due, in seconds since
 * the start, or INFINITY if the schedule ends before it. Does not move.
 */
double pace_due_at(const pace *p, uint64_t n);

/* pace_rate_at returns the offered rate at t seconds (0 after the end). */
double pace_rate_at(const pace *p, double t);

/*
 * pace_step_at returns the index of the step t seconds fall in (the last
 * step after the end, 0 before the start).
 */
size_t pace_step_at(const pace *p, double t);

/* pace_step_count returns the requests due in step i (a real number). */
double pace_step_count(const pace *p, size_t i);

#endif
