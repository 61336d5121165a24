/*
 * report.c — counters, histograms and their output (see report.h). Each
 * set of counters carries its own histogram; per-step sets are allocated
 * when a step first sees a request, since a schedule may have 256 steps
 * and most runs have one.
 */
#include "report.h"

#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "hist.h"

#define MAX_TYPES 16
#define NS 1000000000LL

typedef struct type_count {
	char name[64];
	uint64_t n;
	workload_outcome outcome; /* ERROR, WRONG, or CANCELED (a reason) */
} type_count;

typedef struct counts {
	uint64_t offered, ok, throttled, errors, wrong;
	uint64_t canceled; /* transactions refused as a whole */
	type_count types[MAX_TYPES];
	size_t n_types;
	uint64_t other_types; /* errors past MAX_TYPES distinct types */
	uint64_t other_reasons; /* cancellations likewise */
	hist lat;             /* successful requests, in microseconds */
} counts;

struct report {
	report_config cfg;
	size_t n_steps;
	counts total[WORKLOAD_OP_COUNT];
	counts sec[WORKLOAD_OP_COUNT]; /* the second being counted */
	int64_t second;                /* its index from 0 */
	size_t in_flight, queued;      /* at the last tick, for progress */
	counts **steps;                /* [step * WORKLOAD_OP_COUNT + op] */
	int64_t elapsed;
};

static void
counts_init(counts *c)
{
	memset(c, 0, offsetof(counts, lat));
	hist_init(&c->lat);
}

/* Adds src's counts and latencies (not its error types) to dst. */
static void
counts_add(counts *dst, const counts *src)
{
	dst->offered += src->offered;
	dst->ok += src->ok;
	dst->throttled += src->throttled;
	dst->errors += src->errors;
	dst->wrong += src->wrong;
	dst->canceled += src->canceled;
	hist_merge(&dst->lat, &src->lat);
}

kv_err
report_new(const report_config *cfg, report **out)
{
	report *r = malloc(sizeof(*r));
	if (r == NULL)
		return KV_ENOMEM;
	r->cfg = *cfg;
	r->n_steps = cfg->pace != NULL && cfg->pace->n_steps > 0 ?
	    cfg->pace->n_steps : 1;
	r->steps = calloc(r->n_steps * WORKLOAD_OP_COUNT, sizeof(counts *));
	if (r->steps == NULL) {
		free(r);
		return KV_ENOMEM;
	}
	for (int op = 0; op < WORKLOAD_OP_COUNT; op++) {
		counts_init(&r->total[op]);
		counts_init(&r->sec[op]);
	}
	r->second = 0;
	r->in_flight = 0;
	r->queued = 0;
	r->elapsed = 0;
	if (r->cfg.lat != NULL)
		fprintf(r->cfg.lat, "done_ms,op,outcome,us\n");
	if (r->cfg.csv != NULL)
		fprintf(r->cfg.csv, "second,step,op,offered,ok,throttled,"
		    "errors,p50_ms,p90_ms,p99_ms,p999_ms,max_ms\n");
	*out = r;
	return KV_OK;
}

void
report_free(report *r)
{
	if (r == NULL)
		return;
	for (size_t i = 0; i < r->n_steps * WORKLOAD_OP_COUNT; i++)
		free(r->steps[i]);
	free(r->steps);
	free(r);
}

static size_t
step_of(const report *r, int64_t t_ns)
{
	if (r->cfg.pace == NULL)
		return 0;
	return pace_step_at(r->cfg.pace, (double) t_ns / NS);
}

/* The counters of op in the step t_ns falls in, or NULL without memory. */
static counts *
step_counts(report *r, workload_op op, int64_t t_ns)
{
	size_t i = step_of(r, t_ns) * WORKLOAD_OP_COUNT + op;
	if (r->steps[i] == NULL) {
		r->steps[i] = malloc(sizeof(counts));
		if (r->steps[i] == NULL)
			return NULL;
		counts_init(r->steps[i]);
	}
	return r->steps[i];
}

static void
add_type(counts *c, const char *name, workload_outcome outcome)
{
	bool reason = outcome == WORKLOAD_CANCELED;
	for (size_t i = 0; i < c->n_types; i++) {
		if ((c->types[i].outcome == WORKLOAD_CANCELED) == reason &&
		    strcmp(c->types[i].name, name) == 0) {
			c->types[i].n++;
			return;
		}
	}
	if (c->n_types == MAX_TYPES) {
		if (reason)
			c->other_reasons++;
		else
			c->other_types++;
		return;
	}
	type_count *t = &c->types[c->n_types++];
	snprintf(t->name, sizeof(t->name), "%s", name);
	t->n = 1;
	t->outcome = outcome;
}

static void
count(counts *c, const workload_verdict *v, uint64_t us)
{
	switch (v->outcome) {
	case WORKLOAD_OK:
		c->ok++;
		hist_record(&c->lat, us);
		return;
	case WORKLOAD_THROTTLED:
		c->throttled++;
		return;
	case WORKLOAD_ERROR:
		c->errors++;
		break;
	case WORKLOAD_WRONG:
		c->wrong++;
		break;
	case WORKLOAD_CANCELED:
		c->canceled++;
		break;
	}
	add_type(c, v->type, v->outcome);
}

static double
ms(uint64_t us)
{
	return (double) us / 1000.0;
}

/* Writes second r->second's rows and progress line, then clears it. */
static void
flush_second(report *r)
{
	size_t step = step_of(r, r->second * NS);
	counts all;
	counts_init(&all);
	for (int op = 0; op < WORKLOAD_OP_COUNT; op++) {
		counts *c = &r->sec[op];
		counts_add(&all, c);
		if (r->cfg.csv != NULL && (r->cfg.ops & (1u << op)))
			fprintf(r->cfg.csv,
			    "%lld,%zu,%s,%llu,%llu,%llu,%llu,%.3f,%.3f,%.3f,"
			    "%.3f,%.3f\n",
			    (long long) r->second, step,
			    workload_op_name((workload_op) op),
			    (unsigned long long) c->offered,
			    (unsigned long long) c->ok,
			    (unsigned long long) c->throttled,
			    (unsigned long long) (c->errors + c->wrong),
			    ms(hist_percentile(&c->lat, 50)),
			    ms(hist_percentile(&c->lat, 90)),
			    ms(hist_percentile(&c->lat, 99)),
			    ms(hist_percentile(&c->lat, 99.9)),
			    ms(c->lat.max));
		counts_init(c);
	}
	if (r->cfg.progress != NULL)
		fprintf(r->cfg.progress,
		    "[%4llds] step %zu  offered %7llu/s  ok %7llu/s  "
		    "throttled %5llu/s  errors %5llu/s  p50 %7.3f  p99 %8.3f  "
		    "max %8.3f ms  in flight %zu  queued %zu\n",
		    (long long) r->second + 1, step,
		    (unsigned long long) all.offered,
		    (unsigned long long) all.ok,
		    (unsigned long long) all.throttled,
		    (unsigned long long) (all.errors + all.wrong),
		    ms(hist_percentile(&all.lat, 50)),
		    ms(hist_percentile(&all.lat, 99)), ms(all.lat.max),
		    r->in_flight, r->queued);
	r->second++;
}

static void
catch_up(report *r, int64_t now_ns)
{
	while ((r->second + 1) * NS <= now_ns)
		flush_second(r);
}

void
report_tick(report *r, int64_t now_ns, size_t in_flight, size_t queued)
{
	r->in_flight = in_flight;
	r->queued = queued;
	catch_up(r, now_ns);
}

void
report_offered(report *r, workload_op op, int64_t due_ns)
{
	catch_up(r, due_ns);
	r->sec[op].offered++;
	r->total[op].offered++;
	counts *s = step_counts(r, op, due_ns);
	if (s != NULL)
		s->offered++;
}

void
report_done(report *r, workload_op op, int64_t due_ns, int64_t done_ns,
    const workload_verdict *v)
{
	catch_up(r, done_ns);
	int64_t lat = done_ns - due_ns;
	uint64_t us = lat > 0 ? (uint64_t) (lat / 1000) : 0;
	count(&r->sec[op], v, us);
	count(&r->total[op], v, us);
	counts *s = step_counts(r, op, done_ns);
	if (s != NULL)
		count(s, v, us);
	if (r->cfg.lat != NULL) {
		static const char *const outcome[] = {
			[WORKLOAD_OK] = "ok", [WORKLOAD_THROTTLED] = "throttled",
			[WORKLOAD_ERROR] = "error", [WORKLOAD_WRONG] = "wrong",
			[WORKLOAD_CANCELED] = "canceled",
		};
		fprintf(r->cfg.lat, "%.3f,%s,%s,%" PRIu64 "\n",
		    (double) done_ns / 1e6, workload_op_name(op),
		    outcome[v->outcome], us);
	}
}

void
report_finish(report *r, int64_t elapsed_ns)
{
	catch_up(r, elapsed_ns);
	bool partial = false;
	for (int op = 0; op < WORKLOAD_OP_COUNT; op++)
		if (r->sec[op].offered + r->sec[op].ok + r->sec[op].throttled +
		    r->sec[op].errors + r->sec[op].wrong +
		    r->sec[op].canceled > 0)
			partial = true;
	if (partial)
		flush_second(r);
	r->elapsed = elapsed_ns;
}

static uint64_t
answered(const counts *c)
{
	return c->ok + c->throttled + c->errors + c->wrong + c->canceled;
}

static double
per_s(uint64_t n, double secs)
{
	return secs > 0 ? (double) n / secs : 0;
}

/*
 * The seconds step i lasted in this run: as scheduled, cut short by an
 * early end; with answers (`answers`), the last step runs to the end.
 */
static double
step_secs(const report *r, size_t i, bool answers)
{
	double run = (double) r->elapsed / NS;
	if (r->cfg.pace == NULL || r->cfg.pace->n_steps == 0)
		return run;
	const pace_step *s = &r->cfg.pace->steps[i];
	double end = s->t0 + s->secs;
	if (end > run || (answers && i == r->n_steps - 1))
		end = run;
	return end > s->t0 ? end - s->t0 : 0;
}

/* Starts the errors line of op `name`, or goes on to its next entry. */
static void
next_type(size_t *shown, const char *name, FILE *out)
{
	if ((*shown)++ == 0)
		fprintf(out, "  %s errors:", name);
	else
		fputc(',', out);
}

/* Writes op's errors by type (cancellations aside), if it had any. */
static void
print_types(const counts *c, const char *name, FILE *out)
{
	size_t shown = 0;
	for (size_t i = 0; i < c->n_types; i++) {
		const type_count *t = &c->types[i];
		if (t->outcome == WORKLOAD_CANCELED)
			continue;
		next_type(&shown, name, out);
		fprintf(out, " %s %llu%s", t->name, (unsigned long long) t->n,
		    t->outcome == WORKLOAD_WRONG ? " (WRONG)" : "");
	}
	if (c->other_types > 0) {
		next_type(&shown, name, out);
		fprintf(out, " other %llu",
		    (unsigned long long) c->other_types);
	}
	if (shown > 0)
		fputc('\n', out);
}

/*
 * Writes how many of op's transactions were canceled, as a rate and as
 * a share of its answers, and by which reasons.
 */
static void
print_canceled(const counts *c, const char *name, double secs, FILE *out)
{
	uint64_t n = answered(c);
	fprintf(out, "  %s canceled: %llu (%.1f/s, %.3f %% of answers)",
	    name, (unsigned long long) c->canceled, per_s(c->canceled, secs),
	    n > 0 ? 100.0 * (double) c->canceled / (double) n : 0.0);
	size_t shown = 0;
	for (size_t i = 0; i < c->n_types; i++) {
		const type_count *t = &c->types[i];
		if (t->outcome == WORKLOAD_CANCELED)
			fprintf(out, "%s %s %llu", shown++ == 0 ? ";" : ",",
			    t->name, (unsigned long long) t->n);
	}
	if (c->other_reasons > 0)
		fprintf(out, "%s other %llu", shown == 0 ? ";" : ",",
		    (unsigned long long) c->other_reasons);
	fprintf(out, "\n");
}

/* Whether op is a transaction, whose cancellations are reported. */
static bool
txn_op(int op)
{
	return op == WORKLOAD_OP_TXN_WRITE || op == WORKLOAD_OP_TXN_GET;
}

/* Sums the counters of every operation of step i into *all. */
static void
step_all(const report *r, size_t i, counts *all)
{
	counts_init(all);
	for (int op = 0; op < WORKLOAD_OP_COUNT; op++) {
		const counts *c = r->steps[i * WORKLOAD_OP_COUNT + op];
		if (c != NULL)
			counts_add(all, c);
	}
}

void
report_print(const report *r, FILE *out)
{
	double secs = (double) r->elapsed / NS;
	/* The op column fits the longest name shown ("TransactGetItems"). */
	int width = 12;
	for (int op = 0; op < WORKLOAD_OP_COUNT; op++) {
		int n = (int) strlen(workload_op_name((workload_op) op));
		bool shown = (r->cfg.ops & (1u << op)) ||
		    answered(&r->total[op]) > 0;
		if (shown && n > width)
			width = n;
	}
	fprintf(out, "%-*s %10s %11s %10s %8s %9s %9s %9s %9s %9s\n", width,
	    "op", "requests", "ok/s", "throttled", "errors", "p50 ms",
	    "p90 ms", "p99 ms", "p99.9 ms", "max ms");
	for (int op = 0; op < WORKLOAD_OP_COUNT; op++) {
		const counts *c = &r->total[op];
		if (!(r->cfg.ops & (1u << op)) && answered(c) == 0)
			continue;
		fprintf(out,
		    "%-*s %10llu %11.1f %10llu %8llu %9.3f %9.3f %9.3f %9.3f "
		    "%9.3f\n",
		    width, workload_op_name((workload_op) op),
		    (unsigned long long) answered(c), per_s(c->ok, secs),
		    (unsigned long long) c->throttled,
		    (unsigned long long) (c->errors + c->wrong),
		    ms(hist_percentile(&c->lat, 50)),
		    ms(hist_percentile(&c->lat, 90)),
		    ms(hist_percentile(&c->lat, 99)),
		    ms(hist_percentile(&c->lat, 99.9)), ms(c->lat.max));
		print_types(c, workload_op_name((workload_op) op), out);
		if (txn_op(op) || c->canceled > 0)
			print_canceled(c, workload_op_name((workload_op) op),
			    secs, out);
	}
	if (r->cfg.pace == NULL)
		return;
	fprintf(out, "\n%-4s %10s %10s %12s %10s %9s %9s\n", "step",
	    "offered/s", "ok/s", "throttled/s", "errors/s", "p50 ms",
	    "p99 ms");
	for (size_t i = 0; i < r->n_steps; i++) {
		counts s;
		step_all(r, i, &s);
		double d = step_secs(r, i, true);
		fprintf(out, "%-4zu %10.1f %10.1f %12.1f %10.1f %9.3f %9.3f\n",
		    i, per_s(s.offered, step_secs(r, i, false)),
		    per_s(s.ok, d), per_s(s.throttled, d),
		    per_s(s.errors + s.wrong, d),
		    ms(hist_percentile(&s.lat, 50)),
		    ms(hist_percentile(&s.lat, 99)));
	}
}

/* The JSON of one set of counters over secs seconds; NULL without memory. */
static json_t *
counts_json(const counts *c, double secs)
{
	json_t *types = json_object();
	json_t *reasons = json_object();
	for (size_t i = 0; types != NULL && reasons != NULL &&
	    i < c->n_types; i++)
		json_object_set_new(c->types[i].outcome == WORKLOAD_CANCELED ?
		    reasons : types, c->types[i].name,
		    json_integer((json_int_t) c->types[i].n));
	if (types != NULL && c->other_types > 0)
		json_object_set_new(types, "other",
		    json_integer((json_int_t) c->other_types));
	if (reasons != NULL && c->other_reasons > 0)
		json_object_set_new(reasons, "other",
		    json_integer((json_int_t) c->other_reasons));
	json_t *j = json_pack("{s:I,s:I,s:I,s:f,s:I,s:I,s:I,s:f,s:f,s:f,s:f,"
	    "s:f,s:f,s:o*}",
	    "requests", (json_int_t) answered(c),
	    "offered", (json_int_t) c->offered,
	    "ok", (json_int_t) c->ok,
	    "ok_per_s", per_s(c->ok, secs),
	    "throttled", (json_int_t) c->throttled,
	    "errors", (json_int_t) c->errors,
	    "wrong", (json_int_t) c->wrong,
	    "p50_ms", ms(hist_percentile(&c->lat, 50)),
	    "p90_ms", ms(hist_percentile(&c->lat, 90)),
	    "p99_ms", ms(hist_percentile(&c->lat, 99)),
	    "p999_ms", ms(hist_percentile(&c->lat, 99.9)),
	    "max_ms", ms(c->lat.max),
	    "mean_ms", hist_mean(&c->lat) / 1000.0,
	    "errors_by_type", types);
	/* Transactions refused as a whole: neither errors nor wrong. */
	if (j == NULL) {
		json_decref(reasons);
		return NULL;
	}
	if (json_object_set_new(j, "canceled_by_reason", reasons) != 0 ||
	    json_object_set_new(j, "canceled",
	    json_integer((json_int_t) c->canceled)) != 0 ||
	    json_object_set_new(j, "canceled_per_s",
	    json_real(per_s(c->canceled, secs))) != 0) {
		json_decref(j);
		return NULL;
	}
	return j;
}

json_t *
report_json(const report *r)
{
	double secs = (double) r->elapsed / NS;
	json_t *ops = json_object();
	json_t *steps = json_array();
	if (ops == NULL || steps == NULL)
		goto fail;
	for (int op = 0; op < WORKLOAD_OP_COUNT; op++) {
		const counts *c = &r->total[op];
		if (!(r->cfg.ops & (1u << op)) && answered(c) == 0)
			continue;
		json_t *j = counts_json(c, secs);
		if (j == NULL || json_object_set_new(ops,
		    workload_op_name((workload_op) op), j) != 0)
			goto fail;
	}
	for (size_t i = 0; r->cfg.pace != NULL && i < r->n_steps; i++) {
		double d = step_secs(r, i, true);
		double offered_secs = step_secs(r, i, false);
		const pace_step *ps = &r->cfg.pace->steps[i];
		counts all;
		step_all(r, i, &all);
		json_t *step_ops = json_object();
		for (int op = 0; step_ops != NULL && op < WORKLOAD_OP_COUNT;
		    op++) {
			const counts *c = r->steps[i * WORKLOAD_OP_COUNT + op];
			if (c != NULL)
				json_object_set_new(step_ops,
				    workload_op_name((workload_op) op),
				    counts_json(c, d));
		}
		json_t *j = json_pack("{s:I,s:f,s:f,s:f,s:I,s:f,s:f,s:f,s:f,"
		    "s:f,s:f,s:f,s:o*}",
		    "step", (json_int_t) i,
		    "secs", d,
		    "rate_from", ps->from,
		    "rate_to", ps->to,
		    "offered", (json_int_t) all.offered,
		    "offered_per_s", per_s(all.offered, offered_secs),
		    "ok_per_s", per_s(all.ok, d),
		    "throttled_per_s", per_s(all.throttled, d),
		    "errors_per_s", per_s(all.errors + all.wrong, d),
		    "canceled_per_s", per_s(all.canceled, d),
		    "p50_ms", ms(hist_percentile(&all.lat, 50)),
		    "p99_ms", ms(hist_percentile(&all.lat, 99)),
		    "ops", step_ops);
		if (j == NULL || json_array_append_new(steps, j) != 0)
			goto fail;
	}
	counts all;
	counts_init(&all);
	for (int op = 0; op < WORKLOAD_OP_COUNT; op++)
		counts_add(&all, &r->total[op]);
	return json_pack("{s:o,s:o,s:o}", "totals", counts_json(&all, secs),
	    "ops", ops, "steps", steps);
fail:
	json_decref(ops);
	json_decref(steps);
	return NULL;
}

void
report_failures(const report *r, uint64_t *errors, uint64_t *wrong)
{
	*errors = 0;
	*wrong = 0;
	for (int op = 0; op < WORKLOAD_OP_COUNT; op++) {
		*errors += r->total[op].errors;
		*wrong += r->total[op].wrong;
	}
}
