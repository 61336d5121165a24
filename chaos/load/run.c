/*
 * run.c — the phases of a run (see run.h). One conn_pool serves all of
 * them; its callback goes to the phase in progress. After every poll the
 * loop hands work to the connections conn_pool_idle returns: the next
 * request (closed loop), the oldest due request (open loop), or the next
 * batch or a resend (loading).
 */
#include "run.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "conn.h"
#include "http.h"
#include "report.h"

#define NS 1000000000LL
#define MS 1000000LL
#define BATCH 25                /* BatchWriteItem's limit */
#define LOAD_MAX_ATTEMPTS 30    /* per batch, then loading fails */
#define LATE_NS NS              /* "late": sent over 1 s after due */
#define CONNECT_WAIT_NS (3 * NS) /* setup gives up without a connection */
#define ACTIVE_WAIT_NS (60 * NS) /* for CREATING to become ACTIVE */

typedef enum phase {
	PHASE_SYNC,
	PHASE_LOAD,
	PHASE_RUN,
} phase;

/* The request in flight on one connection. */
typedef struct slot {
	workload_req req;
	int64_t due;       /* ns since the start of the run */
	http_buf body;     /* loading: the batch, to send again */
	size_t items;      /* loading: items in it */
	unsigned attempts; /* loading: sends of these items so far */
} slot;

/* A batch waiting to be sent again. */
typedef struct retry {
	http_buf body;
	size_t items;
	unsigned attempts;
	int64_t not_before;
} retry;

/* A request that fell due in the open loop and waits for a connection. */
typedef struct due {
	int64_t at;
	workload_op op;
} due;

typedef struct run {
	const run_opts *o;
	conn_pool *pool;
	workload w;
	report *rep;
	slot *slots;
	http_buf req;  /* scratch: the HTTP request */
	http_buf body; /* scratch: its JSON body */
	phase phase;
	int64_t t0;
	pace pace;

	/* PHASE_SYNC: the one answer awaited. */
	bool sync_done;
	conn_result sync_res;
	http_buf sync_answer;

	/* PHASE_LOAD */
	uint64_t load_next, load_total, load_done, load_resent;
	retry *retries;
	size_t n_retries, cap_retries;
	bool load_failed;
	char why[512];
	double load_secs;

	/* PHASE_RUN */
	due *queue; /* ring */
	size_t q_head, q_len, q_cap;
	uint64_t issued, generated, late, unsent;
} run;

static volatile sig_atomic_t stop_signal;

static void
on_signal(int sig)
{
	stop_signal = sig;
}

static void
transport_verdict(const conn_result *res, workload_verdict *v)
{
	v->outcome = WORKLOAD_ERROR;
	const char *type = "Transport";
	const char *msg = res->sys_errno != 0 ? strerror(res->sys_errno) :
	    "closed by the server before the answer was whole";
	if (res->err == KV_TIMEDOUT) {
		type = "Timeout";
		msg = "no answer within --timeout";
	} else if (res->err == KV_PROTO) {
		type = "BadHttp";
		msg = "the answer is not HTTP/1.1";
	} else if (res->err == KV_ENOMEM) {
		type = "ClientMemory";
		msg = "out of memory";
	}
	snprintf(v->type, sizeof(v->type), "%s", type);
	snprintf(v->message, sizeof(v->message), "%s", msg);
}

/* Waits up to ns for sockets: the loop's way to sleep. */
static void
pause_for(run *r, int64_t ns)
{
	int64_t end = conn_now() + ns;
	for (int64_t now = conn_now(); now < end && !stop_signal;
	    now = conn_now())
		conn_pool_poll(r->pool, end - now);
}

/* --- PHASE_SYNC: one request at a time, for the table. ---------------- */

static void
sync_done(run *r, const conn_result *res)
{
	r->sync_res = *res;
	http_buf_clear(&r->sync_answer);
	if (res->err == KV_OK &&
	    http_buf_append(&r->sync_answer, res->body, res->len) != KV_OK)
		r->sync_res.err = KV_ENOMEM;
	r->sync_res.body = NULL;
	r->sync_done = true;
}

/*
 * Sends op with r->body and waits for the answer, judged into *v.
 * Returns KV_OK when there is an answer, else the transport's error with
 * its reason in *v.
 */
static kv_err
call(run *r, const char *op, workload_verdict *v)
{
	size_t id;
	int64_t give_up = conn_now() + CONNECT_WAIT_NS;
	while (!conn_pool_idle(r->pool, &id)) {
		if (stop_signal || conn_now() > give_up) {
			conn_stats st = conn_pool_stats(r->pool);
			int err = st.last_errno != 0 ? st.last_errno :
			                                ETIMEDOUT;
			conn_result res = { .err = KV_IO, .sys_errno = err };
			transport_verdict(&res, v);
			return KV_IO;
		}
		conn_pool_poll(r->pool, 10 * MS);
	}
	http_buf_clear(&r->req);
	kv_err e = http_request(&r->req, r->o->host, op, r->body.p,
	    r->body.len);
	r->phase = PHASE_SYNC;
	r->sync_done = false;
	if (e == KV_OK)
		e = conn_pool_send(r->pool, id, r->req.p, r->req.len);
	if (e != KV_OK) {
		conn_result res = { .err = e };
		transport_verdict(&res, v);
		return e;
	}
	while (!r->sync_done)
		conn_pool_poll(r->pool, 100 * MS);
	if (r->sync_res.err != KV_OK) {
		transport_verdict(&r->sync_res, v);
		return r->sync_res.err;
	}
	workload_classify(r->sync_res.status, r->sync_answer.p,
	    r->sync_answer.len, v);
	return KV_OK;
}

static void
say_failed(const run *r, const char *what, const workload_verdict *v)
{
	fprintf(stderr, "kv-load: %s on %s failed: %s%s%s\n", what, r->o->url,
	    v->type, v->message[0] != '\0' ? ": " : "", v->message);
}

/* Creates the table if asked, then waits for it to be ACTIVE with the
 * key schema the workload needs. Returns false after saying why not. */
static bool
setup(run *r)
{
	const run_opts *o = r->o;
	workload_verdict v;
	if (o->create) {
		http_buf_clear(&r->body);
		if (workload_create_table(&r->w, &r->body) != KV_OK)
			return false;
		if (call(r, "CreateTable", &v) != KV_OK) {
			say_failed(r, "CreateTable", &v);
			return false;
		}
		if (v.outcome != WORKLOAD_OK &&
		    strcmp(v.type, "ResourceInUseException") != 0) {
			say_failed(r, "CreateTable", &v);
			return false;
		}
	}
	if (!o->create && !o->check)
		return true;
	int64_t give_up = conn_now() + ACTIVE_WAIT_NS;
	for (;;) {
		http_buf_clear(&r->body);
		if (workload_describe_table(&r->w, &r->body) != KV_OK)
			return false;
		if (call(r, "DescribeTable", &v) != KV_OK) {
			say_failed(r, "DescribeTable", &v);
			return false;
		}
		if (v.outcome == WORKLOAD_OK) {
			bool active = false;
			char why[400];
			kv_err e = workload_table_ready(&r->w,
			    r->sync_answer.p, r->sync_answer.len, &active, why,
			    sizeof(why));
			if (e == KV_EINVAL) {
				fprintf(stderr, "kv-load: %s\n", why);
				return false;
			}
			if (e != KV_OK) {
				fprintf(stderr, "kv-load: DescribeTable on "
				    "%s: the answer has no Table.TableStatus "
				    "and KeySchema (a null server? then use "
				    "--no-check without --create)\n", o->url);
				return false;
			}
			if (active)
				return true;
		} else if (strcmp(v.type, "ResourceNotFoundException") == 0 &&
		    !o->create) {
			fprintf(stderr, "kv-load: table %s does not exist "
			    "on %s (add --create)\n", o->table, o->url);
			return false;
		} else if (strcmp(v.type, "ResourceNotFoundException") != 0) {
			say_failed(r, "DescribeTable", &v);
			return false;
		}
		if (stop_signal || conn_now() > give_up) {
			fprintf(stderr, "kv-load: table %s on %s is not "
			    "ACTIVE after %lld s\n", o->table, o->url,
			    (long long) (ACTIVE_WAIT_NS / NS));
			return false;
		}
		pause_for(r, 50 * MS);
	}
}

/* --- PHASE_LOAD: BatchWriteItem over every connection. ---------------- */

static void
load_fail(run *r, const char *fmt, const char *a, const char *b)
{
	if (r->load_failed)
		return;
	r->load_failed = true;
	snprintf(r->why, sizeof(r->why), fmt, a, b);
}

/* Queues body[0..len) (items of them) to be sent again after a back-off. */
static void
load_again(run *r, const char *body, size_t len, size_t items,
    unsigned attempts, const workload_verdict *last)
{
	r->load_resent += items;
	if (attempts >= LOAD_MAX_ATTEMPTS) {
		load_fail(r, "BatchWriteItem: gave up after 30 attempts; "
		    "the last failure was %s: %s", last->type, last->message);
		return;
	}
	if (r->n_retries == r->cap_retries) {
		size_t cap = r->cap_retries == 0 ? 16 : r->cap_retries * 2;
		retry *nr = realloc(r->retries, cap * sizeof(retry));
		if (nr == NULL) {
			load_fail(r, "%s%s", "out of memory", "");
			return;
		}
		r->retries = nr;
		r->cap_retries = cap;
	}
	retry *q = &r->retries[r->n_retries];
	http_buf_init(&q->body);
	if (http_buf_append(&q->body, body, len) != KV_OK) {
		load_fail(r, "%s%s", "out of memory", "");
		return;
	}
	int64_t backoff = (5 * MS) << (attempts < 8 ? attempts : 8);
	if (backoff > NS)
		backoff = NS;
	q->items = items;
	q->attempts = attempts;
	q->not_before = conn_now() + backoff;
	r->n_retries++;
}

static void
load_done(run *r, size_t id, const conn_result *res)
{
	slot *s = &r->slots[id];
	workload_verdict v;
	if (res->err != KV_OK) {
		transport_verdict(res, &v);
		load_again(r, s->body.p, s->body.len, s->items,
		    s->attempts + 1, &v);
		return;
	}
	workload_classify(res->status, res->body, res->len, &v);
	if (v.outcome == WORKLOAD_THROTTLED || res->status >= 500) {
		load_again(r, s->body.p, s->body.len, s->items,
		    s->attempts + 1, &v);
		return;
	}
	if (v.outcome != WORKLOAD_OK) {
		load_fail(r, "BatchWriteItem failed: %s: %s", v.type,
		    v.message);
		return;
	}
	http_buf again;
	http_buf_init(&again);
	size_t left = 0;
	kv_err e = workload_unprocessed(res->body, res->len, &again, &left);
	if (e != KV_OK || left > s->items) {
		load_fail(r, "BatchWriteItem: %s%s",
		    "the answer is not an object with UnprocessedItems", "");
	} else {
		r->load_done += s->items - left;
		if (left > 0) {
			snprintf(v.type, sizeof(v.type), "UnprocessedItems");
			snprintf(v.message, sizeof(v.message),
			    "%zu items unprocessed", left);
			load_again(r, again.p, again.len, left,
			    s->attempts + 1, &v);
		}
	}
	http_buf_fini(&again);
}

/* The index of a retry whose back-off is over, or -1. */
static long
retry_ready(const run *r, int64_t now)
{
	for (size_t i = 0; i < r->n_retries; i++)
		if (r->retries[i].not_before <= now)
			return (long) i;
	return -1;
}

static void
load_send(run *r, size_t id, int64_t now)
{
	slot *s = &r->slots[id];
	http_buf_clear(&s->body);
	long i = retry_ready(r, now);
	kv_err e;
	if (i >= 0) {
		retry *q = &r->retries[i];
		e = http_buf_append(&s->body, q->body.p, q->body.len);
		s->items = q->items;
		s->attempts = q->attempts;
		http_buf_fini(&q->body);
		r->retries[i] = r->retries[--r->n_retries];
	} else {
		size_t n = r->load_total - r->load_next < BATCH ?
		    (size_t) (r->load_total - r->load_next) : BATCH;
		e = workload_load_batch(&r->w, r->load_next, n, &s->body);
		s->items = n;
		s->attempts = 0;
		r->load_next += n;
	}
	http_buf_clear(&r->req);
	if (e == KV_OK)
		e = http_request(&r->req, r->o->host, "BatchWriteItem",
		    s->body.p, s->body.len);
	if (e == KV_OK)
		e = conn_pool_send(r->pool, id, r->req.p, r->req.len);
	if (e != KV_OK)
		load_fail(r, "%s%s", "out of memory", "");
}

static bool
load(run *r)
{
	r->load_total = workload_load_items(&r->w);
	if (r->load_total == 0) {
		fprintf(stderr, "kv-load: workload %s reads nothing back: "
		    "--load has nothing to write\n",
		    workload_name(r->o->kind));
		return true;
	}
	r->phase = PHASE_LOAD;
	int64_t start = conn_now();
	while (r->load_done < r->load_total && !r->load_failed &&
	    !stop_signal) {
		int64_t now = conn_now();
		size_t id;
		while ((retry_ready(r, now) >= 0 ||
		    r->load_next < r->load_total) && !r->load_failed &&
		    conn_pool_idle(r->pool, &id))
			load_send(r, id, now);
		conn_pool_poll(r->pool, 20 * MS);
	}
	/* Answers still on their way belong to no phase. */
	while (conn_pool_busy(r->pool) > 0)
		conn_pool_poll(r->pool, 100 * MS);
	r->load_secs = (double) (conn_now() - start) / NS;
	if (r->load_failed || stop_signal) {
		fprintf(stderr, "kv-load: loading %s: %s\n", r->o->table,
		    r->load_failed ? r->why : "interrupted");
		return false;
	}
	printf("kv-load: loaded %" PRIu64 " items into %s in %.2f s: "
	    "%.0f items/s (%" PRIu64 " resent)\n", r->load_total, r->o->table,
	    r->load_secs, r->load_secs > 0 ? r->load_total / r->load_secs : 0,
	    r->load_resent);
	fflush(stdout);
	return true;
}

/* --- PHASE_RUN --------------------------------------------------------- */

static void
run_done(run *r, size_t id, const conn_result *res)
{
	slot *s = &r->slots[id];
	workload_verdict v;
	if (res->err != KV_OK)
		transport_verdict(res, &v);
	else
		workload_check(&r->w, &s->req, res->status, res->body,
		    res->len, &v);
	report_done(r->rep, s->req.op, s->due, conn_now() - r->t0, &v);
}

static void
on_done(void *arg, size_t id, const conn_result *res)
{
	run *r = arg;
	switch (r->phase) {
	case PHASE_SYNC:
		sync_done(r, res);
		break;
	case PHASE_LOAD:
		load_done(r, id, res);
		break;
	case PHASE_RUN:
		run_done(r, id, res);
		break;
	}
}

/* Sends a request of op, due at due (ns since start), on connection id. */
static void
issue(run *r, size_t id, workload_op op, int64_t due)
{
	slot *s = &r->slots[id];
	http_buf_clear(&r->body);
	http_buf_clear(&r->req);
	s->due = due;
	r->issued++;
	kv_err e = workload_request(&r->w, op, &s->req, &r->body);
	if (e == KV_OK)
		e = http_request(&r->req, r->o->host, workload_op_name(op),
		    r->body.p, r->body.len);
	if (e == KV_OK)
		e = conn_pool_send(r->pool, id, r->req.p, r->req.len);
	if (e != KV_OK) {
		/* Counted like a request that failed on its way. */
		s->req.op = op;
		conn_result res = { .err = e };
		run_done(r, id, &res);
	}
}

static bool
queue_push(run *r, int64_t at, workload_op op)
{
	if (r->q_len == r->q_cap) {
		size_t cap = r->q_cap == 0 ? 1024 : r->q_cap * 2;
		due *nq = malloc(cap * sizeof(due));
		if (nq == NULL)
			return false;
		for (size_t i = 0; i < r->q_len; i++)
			nq[i] = r->queue[(r->q_head + i) % r->q_cap];
		free(r->queue);
		r->queue = nq;
		r->q_cap = cap;
		r->q_head = 0;
	}
	r->queue[(r->q_head + r->q_len) % r->q_cap] = (due) { at, op };
	r->q_len++;
	return true;
}

static due
queue_pop(run *r)
{
	due d = r->queue[r->q_head];
	r->q_head = (r->q_head + 1) % r->q_cap;
	r->q_len--;
	return d;
}

static int64_t
min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

static void
closed_loop(run *r, int64_t end)
{
	const run_opts *o = r->o;
	for (;;) {
		int64_t now = conn_now() - r->t0;
		bool stopping = stop_signal || now >= end ||
		    (o->count > 0 && r->issued >= o->count);
		size_t id;
		while (!stopping && (o->count == 0 || r->issued < o->count) &&
		    conn_pool_idle(r->pool, &id)) {
			workload_op op = workload_pick(&r->w);
			int64_t t = conn_now() - r->t0;
			report_offered(r->rep, op, t);
			issue(r, id, op, t);
		}
		report_tick(r->rep, now, conn_pool_busy(r->pool), 0);
		if (stopping && conn_pool_busy(r->pool) == 0)
			return;
		int64_t next = (now / NS + 1) * NS;
		if (!stopping)
			next = min64(next, end);
		conn_pool_poll(r->pool, next - now);
	}
}

static void
open_loop(run *r, int64_t end)
{
	const run_opts *o = r->o;
	bool generating = true;
	int64_t stopped_at = 0;
	for (;;) {
		int64_t now = conn_now() - r->t0;
		int64_t due_ns = 0;
		if (generating) {
			while ((o->count == 0 || r->generated < o->count) &&
			    pace_peek(&r->pace, &due_ns) && due_ns <= now &&
			    due_ns < end) {
				workload_op op = workload_pick(&r->w);
				if (!queue_push(r, due_ns, op))
					break;
				report_offered(r->rep, op, due_ns);
				pace_take(&r->pace);
				r->generated++;
			}
			if (stop_signal || now >= end ||
			    (o->count > 0 && r->generated >= o->count) ||
			    !pace_peek(&r->pace, &due_ns)) {
				generating = false;
				stopped_at = now;
			}
		}
		size_t id;
		while (r->q_len > 0 && conn_pool_idle(r->pool, &id)) {
			due d = queue_pop(r);
			if (now - d.at > LATE_NS)
				r->late++;
			issue(r, id, d.op, d.at);
		}
		report_tick(r->rep, now, conn_pool_busy(r->pool), r->q_len);
		if (!generating && r->q_len > 0 &&
		    (stop_signal || now - stopped_at > o->timeout_ns)) {
			/* The schedule is over and the server far behind. */
			r->unsent += r->q_len;
			r->q_len = 0;
		}
		if (!generating && r->q_len == 0 &&
		    conn_pool_busy(r->pool) == 0)
			return;
		int64_t next = (now / NS + 1) * NS;
		if (generating) {
			next = min64(next, end);
			if (pace_peek(&r->pace, &due_ns))
				next = min64(next, due_ns);
		}
		conn_pool_poll(r->pool, next - now);
	}
}

static void
print_header(const run *r, FILE *out)
{
	const run_opts *o = r->o;
	fprintf(out, "kv-load: %s on %s table %s, %zu connections, ",
	    workload_name(o->kind), o->url, o->table, o->connections);
	if (!o->open)
		fprintf(out, "closed loop");
	else if (r->pace.n_steps == 1 &&
	    r->pace.steps[0].from == r->pace.steps[0].to)
		fprintf(out, "open loop at %g/s", r->pace.steps[0].from);
	else if (r->pace.n_steps == 1)
		fprintf(out, "open loop ramp %g/s to %g/s over %g s",
		    r->pace.steps[0].from, r->pace.steps[0].to,
		    r->pace.steps[0].secs);
	else
		fprintf(out, "open loop, %zu step%s over %.1f s",
		    r->pace.n_steps, r->pace.n_steps == 1 ? "" : "s",
		    pace_length(&r->pace));
	fprintf(out, ", keys %s over %" PRIu64, o->dist_spec, o->dist.n);
	if (o->dist.shard_hot > 0)
		fprintf(out, " (key 0 sharded %u ways)", o->dist.shard_hot);
	fprintf(out, "\n");
}

static kv_err
write_json(const run *r, double secs)
{
	const run_opts *o = r->o;
	json_t *j = report_json(r->rep);
	if (j == NULL)
		return KV_ENOMEM;
	conn_stats st = conn_pool_stats(r->pool);
	json_t *cfg = json_pack("{s:s,s:s,s:s,s:s,s:I,s:I,s:s,s:I,s:I,s:b,"
	    "s:f}",
	    "url", o->url, "table", o->table,
	    "workload", workload_name(o->kind), "dist", o->dist_spec,
	    "keys", (json_int_t) o->dist.n,
	    "shard_hot", (json_int_t) o->dist.shard_hot,
	    "key_prefix", o->prefix,
	    "connections", (json_int_t) o->connections,
	    "seed", (json_int_t) o->seed, "open_loop", o->open,
	    "seconds", secs);
	if (cfg != NULL && o->dist.kind == ZIPF_ZIPF)
		json_object_set_new(cfg, "theta", json_real(o->dist.theta));
	if (cfg != NULL && o->index != NULL)
		json_object_set_new(cfg, "index", json_string(o->index));
	json_object_set_new(j, "config", cfg);
	json_object_set_new(j, "connections", json_pack(
	    "{s:I,s:I,s:I,s:I}",
	    "opened", (json_int_t) st.connects,
	    "closed_by_server", (json_int_t) st.server_closes,
	    "failed", (json_int_t) st.failures,
	    "timeouts", (json_int_t) st.timeouts));
	json_object_set_new(j, "late", json_integer((json_int_t) r->late));
	json_object_set_new(j, "unsent", json_integer((json_int_t) r->unsent));
	if (o->load && r->load_total > 0)
		json_object_set_new(j, "load", json_pack("{s:I,s:f,s:f,s:I}",
		    "items", (json_int_t) r->load_total,
		    "seconds", r->load_secs,
		    "items_per_s", r->load_secs > 0 ?
		        (double) r->load_total / r->load_secs : 0.0,
		    "resent", (json_int_t) r->load_resent));
	int rc = json_dump_file(j, o->json,
	    JSON_INDENT(2) | JSON_REAL_PRECISION(9));
	json_decref(j);
	return rc == 0 ? KV_OK : KV_IO;
}

/* Measures; returns the exit status. */
static int
measure(run *r)
{
	const run_opts *o = r->o;
	FILE *csv = NULL;
	if (o->csv != NULL && (csv = fopen(o->csv, "w")) == NULL) {
		fprintf(stderr, "kv-load: cannot write %s: %s\n", o->csv,
		    strerror(errno));
		return 1;
	}
	FILE *lat = NULL;
	if (o->lat != NULL && (lat = fopen(o->lat, "w")) == NULL) {
		fprintf(stderr, "kv-load: cannot write %s: %s\n", o->lat,
		    strerror(errno));
		if (csv != NULL)
			fclose(csv);
		return 1;
	}
	report_config rc = {
		.pace = o->open ? &r->pace : NULL,
		.ops = workload_ops(o->kind),
		.csv = csv,
		.lat = lat,
		.progress = o->quiet ? NULL : stderr,
	};
	if (report_new(&rc, &r->rep) != KV_OK) {
		if (csv != NULL)
			fclose(csv);
		if (lat != NULL)
			fclose(lat);
		return 1;
	}
	print_header(r, stdout);
	fflush(stdout);
	double limit = o->duration;
	if (o->open && pace_length(&r->pace) < limit)
		limit = pace_length(&r->pace);
	int64_t end = isinf(limit) ? INT64_MAX : llround(limit * NS);
	r->phase = PHASE_RUN;
	r->t0 = conn_now();
	if (o->open)
		open_loop(r, end);
	else
		closed_loop(r, end);
	int64_t elapsed = conn_now() - r->t0;
	report_finish(r->rep, elapsed);
	if (csv != NULL && fclose(csv) != 0)
		fprintf(stderr, "kv-load: writing %s failed\n", o->csv);
	if (lat != NULL && fclose(lat) != 0)
		fprintf(stderr, "kv-load: writing %s failed\n", o->lat);
	report_print(r->rep, stdout);
	conn_stats st = conn_pool_stats(r->pool);
	printf("\n%.2f s; connections: %" PRIu64 " opened, %" PRIu64
	    " closed by the server, %" PRIu64 " failed to connect, %" PRIu64
	    " timed out\n", (double) elapsed / NS, st.connects,
	    st.server_closes, st.failures, st.timeouts);
	if (o->open)
		printf("open loop: %" PRIu64 " requests due, %" PRIu64
		    " sent over 1 s late, %" PRIu64 " never sent\n",
		    r->generated, r->late, r->unsent);
	if (o->json != NULL && write_json(r, (double) elapsed / NS) != KV_OK)
		fprintf(stderr, "kv-load: cannot write %s\n", o->json);
	uint64_t errors, wrong;
	report_failures(r->rep, &errors, &wrong);
	if (wrong > 0)
		printf("FAILED: %" PRIu64 " wrong answers\n", wrong);
	else if (errors > 0 && !o->allow_errors)
		printf("FAILED: %" PRIu64 " errors (--allow-errors to accept "
		    "them)\n", errors);
	return wrong > 0 || (errors > 0 && !o->allow_errors) ? 1 : 0;
}

int
run_main(const run_opts *o)
{
	run r;
	memset(&r, 0, sizeof(r));
	r.o = o;
	r.pace = o->pace;
	http_buf_init(&r.req);
	http_buf_init(&r.body);
	http_buf_init(&r.sync_answer);
	int rc = 1;

	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal; /* no SA_RESTART: epoll returns */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (workload_init(&r.w, o->kind, o->table, o->prefix, o->item_size,
	    &o->dist, o->seed, o->check) != KV_OK)
		goto out;
	r.w.index_keys = o->index_keys;
	r.w.collections = o->collections;
	r.w.index = o->index;
	r.slots = calloc(o->connections, sizeof(slot));
	if (r.slots == NULL)
		goto out;
	kv_err e = conn_pool_new((const struct sockaddr *) &o->addr, o->alen,
	    o->connections, o->timeout_ns, on_done, &r, &r.pool);
	if (e != KV_OK) {
		fprintf(stderr, "kv-load: cannot open %zu connections: %s\n",
		    o->connections, e == KV_IO ? strerror(errno) :
		    kv_err_name(e));
		goto out;
	}
	if (!setup(&r))
		goto out;
	if (o->load && !load(&r))
		goto out;
	if (o->duration == 0 || stop_signal) {
		rc = stop_signal ? 1 : 0;
		goto out;
	}
	rc = measure(&r);
out:
	conn_pool_free(r.pool);
	report_free(r.rep);
	for (size_t i = 0; r.slots != NULL && i < o->connections; i++)
		http_buf_fini(&r.slots[i].body);
	free(r.slots);
	for (size_t i = 0; i < r.n_retries; i++)
		http_buf_fini(&r.retries[i].body);
	free(r.retries);
	free(r.queue);
	http_buf_fini(&r.req);
	http_buf_fini(&r.body);
	http_buf_fini(&r.sync_answer);
	workload_fini(&r.w);
	return rc;
}
