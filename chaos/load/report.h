/*
 * report.h — counting what happened: per operation, per second and per
 * step of the schedule, and writing it out (the table at the end, the
 * --csv rows, the --json summary, the progress line on stderr).
 *
 * Latency is that of successful requests, from when the request was due
 * (open loop) or sent (closed loop) to when its answer was whole; the
 * throttled, failed and wrong ones are counted, not timed. Requests are
 * offered in the second and step they fall due in, and answered in the
 * second and step their answer arrives in, so under overload a step shows
 * what the server gave while it lasted. The last step also holds the
 * answers that arrive after the schedule ends. Read next: run.h.
 */
#ifndef KVLOAD_REPORT_H
#define KVLOAD_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "err.h"
#include "pace.h"
#include "workload.h"

typedef struct report report;

typedef struct report_config {
	const pace *pace; /* borrowed, NULL for closed loop; outlives r */
	unsigned ops;     /* the operations in the mix, as 1 << op bits */
	FILE *csv;        /* borrowed; NULL: no per-second rows */
	/* borrowed; NULL: none. One row per answer: its completion time
	 * from the start in ms, the operation's name, the outcome (ok,
	 * throttled, error, wrong) and the latency in microseconds. */
	FILE *lat;
	FILE *progress;   /* borrowed; NULL: no line per second */
} report_config;

/*
 * report_new returns an empty report in *out, owned — free with
 * report_free(). KV_ENOMEM if memory runs out.
 */
kv_err report_new(const report_config *cfg, report **out);

/* report_free frees r; safe on NULL. */
void report_free(report *r);

/* report_offered counts a request of op due at due_ns (since start). */
void report_offered(report *r, workload_op op, int64_t due_ns);

/*
 * report_done counts the end of a request of op, due at due_ns and
 * answered at done_ns (nanoseconds since start, done_ns not decreasing
 * from call to call), judged v (borrowed).
 */
void report_done(report *r, workload_op op, int64_t due_ns, int64_t done_ns,
    const workload_verdict *v);

/*
 * report_tick writes the rows and progress lines of the seconds that
 * ended before now_ns; in_flight and queued go on the progress line.
 */
void report_tick(report *r, int64_t now_ns, size_t in_flight, size_t queued);

/* report_finish writes the last, partial second; elapsed_ns is the run. */
void report_finish(report *r, int64_t elapsed_ns);

/* report_print writes the final tables to out. */
void report_print(const report *r, FILE *out);

/*
 * report_json returns the summary, all operations together, per operation
 * and per step, as {"totals": {...}, "ops": {...}, "steps": [...]}, owned
 * — free with json_decref(); NULL if memory runs out.
 */
json_t *report_json(const report *r);

/* report_failures returns the errors (throttles not included) and the
 * wrong answers, through out-parameters. */
void report_failures(const report *r, uint64_t *errors, uint64_t *wrong);

#endif
