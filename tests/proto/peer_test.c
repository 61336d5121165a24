/*
 * peer_test.c — the node-to-node seam (proto/peer.c) over real nng
 * sockets in this process: two seams, node 0 and node 1, each listening
 * on its own ipc:// address in a fresh temporary folder and calling the
 * other. Checked: a handler's answer comes back with its code, message
 * and body; a type without a handler is KV_PROTO; a node never added or
 * not listening is KV_UNAVAILABLE after the connect grace, not the whole
 * timeout; a slow handler is KV_TIMEDOUT; concurrent calls each get their
 * own answer; a dialer that stopped is replaced; a node added `later` is
 * dialed only from its first call on; closing is clean (run it under
 * LeakSanitizer too).
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bus.h" /* bus_guard_relistened */
#include "bus_fixture.h"
#include "config.h"
#include "peer.h"

#define T_ECHO PEER_VERB /* echoes the body */
#define T_SLOW 2         /* waits (for slow_release or 10 s), then echoes */
#define T_NONE 3         /* no handler */

typedef struct node_ctx {
	uint32_t self;
	atomic_uint calls;
	atomic_uint slow_calls;
	atomic_uint wrong_from; /* messages whose sender is not the other */
} node_ctx;

static node_ctx CTX[2];
static peer *P[2];
static char URL[2][128];

static pthread_mutex_t slow_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t slow_cv = PTHREAD_COND_INITIALIZER;
static bool slow_release;

/*
 * Echoes the body. A body starting with "code:" answers with that code
 * (a number) and a message instead.
 */
static void
echo(void *arg, const peer_msg *m, arena *a, peer_reply *out)
{
	node_ctx *c = arg;
	atomic_fetch_add(&c->calls, 1);
	if (m->from != 1 - c->self)
		atomic_fetch_add(&c->wrong_from, 1);
	if (m->len > 5 && memcmp(m->body, "code:", 5) == 0) {
		char *s = arena_dup(a, m->body + 5, m->len - 5);
		out->code = (kv_err) atoi(s);
		out->message = "as you asked";
		return;
	}
	uint8_t *b = arena_alloc(a, m->len + 1);
	if (b == NULL) {
		out->code = KV_ENOMEM;
		return;
	}
	if (m->len > 0)
		memcpy(b, m->body, m->len);
	out->code = KV_OK;
	out->body = b;
	out->len = m->len;
}

static void
slow(void *arg, const peer_msg *m, arena *a, peer_reply *out)
{
	node_ctx *c = arg;
	atomic_fetch_add(&c->slow_calls, 1);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 10;
	pthread_mutex_lock(&slow_mu);
	while (!slow_release && pthread_cond_timedwait(&slow_cv, &slow_mu,
	    &ts) == 0)
		;
	pthread_mutex_unlock(&slow_mu);
	echo(arg, m, a, out);
}

static void
release_slow(void)
{
	pthread_mutex_lock(&slow_mu);
	slow_release = true;
	pthread_cond_broadcast(&slow_cv);
	pthread_mutex_unlock(&slow_mu);
}

static void
setup(void)
{
	tu_dir_make("kvpeer");
	slow_release = false;
	for (uint32_t i = 0; i < 2; i++) {
		char name[16];
		snprintf(name, sizeof(name), "node%u.peer", i);
		tu_url(URL[i], sizeof(URL[i]), name);
		memset(&CTX[i], 0, sizeof(CTX[i]));
		CTX[i].self = i;
		cr_assert_eq(peer_open(i, &P[i]), KV_OK);
		cr_assert_eq(peer_handle(P[i], T_ECHO, echo, &CTX[i]), KV_OK);
		cr_assert_eq(peer_handle(P[i], T_SLOW, slow, &CTX[i]), KV_OK);
		cr_assert_eq(peer_listen(P[i], URL[i]), KV_OK);
	}
	cr_assert_eq(peer_add(P[0], 1, URL[1], false), KV_OK);
	cr_assert_eq(peer_add(P[1], 0, URL[0], false), KV_OK);
}

static void *
peer_close_run(void *arg)
{
	peer_close(arg);
	return NULL;
}

static void
teardown(void)
{
	release_slow();
	void *args[2] = { P[0], P[1] };
	tu_parallel(peer_close_run, args, 2);
	P[0] = P[1] = NULL;
	tu_dir_remove();
}

TestSuite(peer, .init = setup, .fini = teardown, .timeout = 60);

/* call sends a string to node `to` from node `from`. */
static kv_err
call(int from, uint32_t to, uint32_t type, const char *body, int timeout_ms,
    arena *a, peer_reply *out)
{
	return peer_call(P[from], to, type, (const uint8_t *) body,
	    strlen(body), timeout_ms, a, out);
}

static void
expect_body(const peer_reply *r, const char *body)
{
	cr_assert_eq(r->len, strlen(body));
	cr_assert_arr_eq(r->body, body, strlen(body));
}

Test(peer, call_is_answered_by_the_handler_both_ways)
{
	arena a;
	peer_reply r;
	arena_init(&a);
	cr_assert_eq(call(0, 1, T_ECHO, "hello node 1", 5000, &a, &r), KV_OK);
	cr_assert_eq(r.code, KV_OK);
	cr_assert_null(r.message);
	expect_body(&r, "hello node 1");
	cr_assert_eq(call(1, 0, T_ECHO, "and back", 5000, &a, &r), KV_OK);
	expect_body(&r, "and back");
	cr_assert_eq(atomic_load(&CTX[1].calls), 1);
	cr_assert_eq(atomic_load(&CTX[0].calls), 1);
	cr_assert_eq(atomic_load(&CTX[0].wrong_from), 0);
	cr_assert_eq(atomic_load(&CTX[1].wrong_from), 0);

	/* Binary bodies, and an empty one. */
	static const uint8_t bin[] = { 0, 0xff, 0, 1, 0x80 };
	cr_assert_eq(peer_call(P[0], 1, T_ECHO, bin, sizeof(bin), 5000, &a,
	    &r), KV_OK);
	cr_assert_eq(r.len, sizeof(bin));
	cr_assert_arr_eq(r.body, bin, sizeof(bin));
	cr_assert_eq(peer_call(P[0], 1, T_ECHO, NULL, 0, 5000, &a, &r), KV_OK);
	cr_assert_eq(r.code, KV_OK);
	cr_assert_eq(r.len, 0);
	arena_fini(&a);
}

Test(peer, handler_code_and_message_come_back)
{
	arena a;
	peer_reply r;
	arena_init(&a);
	char body[32];
	snprintf(body, sizeof(body), "code:%d", (int) KV_STALE_ROUTE);
	cr_assert_eq(call(0, 1, T_ECHO, body, 5000, &a, &r), KV_OK,
	    "the call worked; the answer's code is the handler's");
	cr_assert_eq(r.code, KV_STALE_ROUTE);
	cr_assert_str_eq(r.message, "as you asked");
	cr_assert_eq(r.len, 0);
	arena_fini(&a);
}

Test(peer, type_without_handler_is_answered_proto)
{
	arena a;
	peer_reply r;
	arena_init(&a);
	static const uint32_t types[] = { T_NONE, 0, PEER_TYPES - 1,
		PEER_TYPES, 1000, UINT32_MAX };
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		cr_assert_eq(call(0, 1, types[i], "x", 5000, &a, &r), KV_OK,
		    "type %u", types[i]);
		cr_assert_eq(r.code, KV_PROTO, "type %u: %s", types[i],
		    kv_err_name(r.code));
		cr_assert_eq(r.len, 0);
	}
	cr_assert_eq(atomic_load(&CTX[1].calls), 0);
	/* The seam still serves the types it knows. */
	cr_assert_eq(call(0, 1, T_ECHO, "still here", 5000, &a, &r), KV_OK);
	expect_body(&r, "still here");
	arena_fini(&a);
}

Test(peer, node_never_added_is_unavailable_at_once)
{
	arena a;
	peer_reply r;
	arena_init(&a);
	static const uint32_t nodes[] = { 2, 0 /* itself: not added */,
		CONFIG_MAX_NODES - 1, CONFIG_MAX_NODES, UINT32_MAX };
	for (size_t i = 0; i < sizeof(nodes) / sizeof(nodes[0]); i++) {
		int64_t t0 = tu_mono_ms();
		cr_assert_eq(call(0, nodes[i], T_ECHO, "x", 5000, &a, &r),
		    KV_UNAVAILABLE, "node %u", nodes[i]);
		cr_assert_lt(tu_mono_ms() - t0, 100, "node %u", nodes[i]);
	}
	arena_fini(&a);
}

/*
 * A dialer that stopped dialing (planted: closed under the seam) is
 * replaced once calls have found no connection for PEER_REDIAL_MS, and
 * calls go through again. Without the redial none ever would.
 */
Test(peer, a_dialer_that_stopped_is_replaced)
{
	arena a;
	peer_reply r;
	arena_init(&a);
	cr_assert_eq(call(0, 1, T_ECHO, "before", 5000, &a, &r), KV_OK);
	peer_plant_dead_dialer(P[0], 1);
	int64_t t0 = tu_mono_ms();
	kv_err rv = KV_OK;
	/* The closed dialer's connection goes away soon (a call sent on
	 * it as it goes times out). */
	while (rv != KV_UNAVAILABLE && tu_mono_ms() - t0 < 5000)
		rv = call(0, 1, T_ECHO, "x", 1000, &a, &r);
	cr_assert_eq(rv, KV_UNAVAILABLE, "%s", kv_err_name(rv));
	int64_t down = tu_mono_ms();
	while (rv != KV_OK && tu_mono_ms() - down < 4 * PEER_REDIAL_MS)
		rv = call(0, 1, T_ECHO, "after", 1000, &a, &r);
	cr_assert_eq(rv, KV_OK, "no connection %lld ms after the dialer "
	    "stopped", (long long) (tu_mono_ms() - down));
	expect_body(&r, "after");
	cr_assert_geq(tu_mono_ms() - down, PEER_REDIAL_MS - 500,
	    "came back before any redial: the plant did not hold");
	arena_fini(&a);
}

/* A third seam, node c->self, echoing at url. */
static peer *
echo_node(node_ctx *c, const char *url)
{
	peer *p;
	cr_assert_eq(peer_open(c->self, &p), KV_OK);
	cr_assert_eq(peer_handle(p, T_ECHO, echo, c), KV_OK);
	cr_assert_eq(peer_listen(p, url), KV_OK);
	return p;
}

/* Node 0's calls to node `to` are answered within 3 s. */
static void
expect_found(uint32_t to, arena *a, peer_reply *r)
{
	kv_err rv = KV_UNAVAILABLE;
	cr_assert(TU_WAIT_FOR((rv = call(0, to, T_ECHO, "now?", 5000, a,
	    r)) == KV_OK, 3000), "%s", kv_err_name(rv));
	expect_body(r, "now?");
}

Test(peer, node_not_listening_is_unavailable_after_the_grace)
{
	arena a;
	peer_reply r;
	char nobody[128];
	arena_init(&a);
	tu_url(nobody, sizeof(nobody), "node2.peer");
	cr_assert_eq(peer_add(P[0], 2, nobody, false), KV_OK);
	int64_t t0 = tu_mono_ms();
	cr_assert_eq(call(0, 2, T_ECHO, "anyone?", 10000, &a, &r),
	    KV_UNAVAILABLE);
	int64_t took = tu_mono_ms() - t0;
	cr_assert_geq(took, PEER_CONNECT_GRACE_MS - 10, "took %lld ms",
	    (long long) took);
	cr_assert_lt(took, PEER_CONNECT_GRACE_MS + 800, "took %lld ms",
	    (long long) took);

	/* A timeout shorter than the grace bounds the wait. */
	t0 = tu_mono_ms();
	cr_assert_eq(call(0, 2, T_ECHO, "anyone?", 50, &a, &r),
	    KV_UNAVAILABLE);
	cr_assert_lt(tu_mono_ms() - t0, 50 + 500);

	/* Once it listens, the dialer finds it. */
	node_ctx c2 = { .self = 2 };
	peer *p2 = echo_node(&c2, nobody);
	expect_found(2, &a, &r);
	peer_close(p2);
	arena_fini(&a);
}

/*
 * A node added `later` (a standby node of the cluster file) is not dialed
 * until something calls it; the first call dials it and is answered. A
 * plain Unix listener stands in for the node first, to see any dialing.
 */
Test(peer, a_node_added_later_is_dialed_at_its_first_call)
{
	arena a;
	peer_reply r;
	char url[128];
	arena_init(&a);
	tu_url(url, sizeof(url), "node2.peer");
	int fd = tu_unix_listen(url);
	cr_assert_eq(peer_add(P[0], 2, url, true), KV_OK);
	tu_sleep_ms(500); /* nng would have dialed a few times by now */
	cr_assert_not(tu_unix_dialed(fd), "dialed before any call");
	cr_assert_neq(call(0, 2, T_ECHO, "x", 300, &a, &r), KV_OK,
	    "the stand-in speaks no nng");
	cr_assert(TU_WAIT_FOR(tu_unix_dialed(fd), 2000),
	    "the first call did not dial");
	close(fd);
	unlink(url + 6);

	/* The node itself, at that address: the dialer finds it. */
	node_ctx c2 = { .self = 2 };
	peer *p2 = echo_node(&c2, url);
	expect_found(2, &a, &r);
	peer_close(p2);

	/* Added later and called at once: the first call is answered. */
	char url3[128];
	tu_url(url3, sizeof(url3), "node3.peer");
	node_ctx c3 = { .self = 3 };
	peer *p3 = echo_node(&c3, url3);
	cr_assert_eq(peer_add(P[0], 3, url3, true), KV_OK);
	cr_assert_eq(call(0, 3, T_ECHO, "first", 5000, &a, &r), KV_OK);
	expect_body(&r, "first");
	peer_close(p3);
	arena_fini(&a);
}

Test(peer, slow_handler_times_out)
{
	arena a;
	peer_reply r;
	arena_init(&a);
	/* Connected first, so the time is the handler's alone. */
	cr_assert_eq(call(0, 1, T_ECHO, "warm", 5000, &a, &r), KV_OK);
	int64_t t0 = tu_mono_ms();
	cr_assert_eq(call(0, 1, T_SLOW, "slow", 300, &a, &r), KV_TIMEDOUT);
	int64_t took = tu_mono_ms() - t0;
	cr_assert_geq(took, 290, "took %lld ms", (long long) took);
	cr_assert_lt(took, 300 + 1000, "took %lld ms", (long long) took);
	cr_assert(TU_WAIT_FOR(atomic_load(&CTX[1].slow_calls) == 1, 1000));

	/* One worker is busy; the other still serves. */
	cr_assert_eq(call(0, 1, T_ECHO, "other worker", 5000, &a, &r), KV_OK);
	expect_body(&r, "other worker");

	/* The late answer to the slow call is nobody's answer. */
	release_slow();
	cr_assert_eq(call(0, 1, T_ECHO, "after", 5000, &a, &r), KV_OK);
	expect_body(&r, "after");
	cr_assert_eq(atomic_load(&CTX[1].slow_calls), 1,
	    "the timed out message was served again");
	arena_fini(&a);
}

#define THREADS 8
#define CALLS 25

typedef struct caller {
	int id;
	int from;
	int wrong, failed;
} caller;

static void *
caller_run(void *arg)
{
	caller *c = arg;
	for (int k = 0; k < CALLS; k++) {
		arena a;
		peer_reply r;
		char body[64];
		arena_init(&a);
		snprintf(body, sizeof(body), "thread %d call %d %s", c->id, k,
		    k % 2 ? "odd" : "even, a little longer");
		kv_err rv = call(c->from, (uint32_t) (1 - c->from), T_ECHO,
		    body, 5000, &a, &r);
		if (rv != KV_OK || r.code != KV_OK)
			c->failed++;
		else if (r.len != strlen(body) || memcmp(r.body, body,
		    r.len) != 0)
			c->wrong++;
		arena_fini(&a);
	}
	return NULL;
}

Test(peer, concurrent_calls_get_their_own_answers)
{
	pthread_t th[THREADS];
	caller c[THREADS];
	for (int i = 0; i < THREADS; i++) {
		/* Six call node 1, two call node 0: both ways at once. */
		c[i] = (caller) { .id = i, .from = i < 6 ? 0 : 1 };
		cr_assert_eq(pthread_create(&th[i], NULL, caller_run, &c[i]),
		    0);
	}
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < THREADS; i++) {
		cr_assert_eq(c[i].failed, 0, "thread %d: %d failed", i,
		    c[i].failed);
		cr_assert_eq(c[i].wrong, 0, "thread %d: %d wrong answers", i,
		    c[i].wrong);
	}
	cr_assert_eq(atomic_load(&CTX[1].calls), 6 * CALLS);
	cr_assert_eq(atomic_load(&CTX[0].calls), 2 * CALLS);
}

Test(peer, setup_calls_refuse_what_they_cannot_do)
{
	peer *p;
	cr_assert_eq(peer_open(5, &p), KV_OK);
	cr_assert_eq(peer_handle(p, 0, echo, NULL), KV_EINVAL);
	cr_assert_eq(peer_handle(p, PEER_TYPES, echo, NULL), KV_EINVAL);
	cr_assert_eq(peer_handle(p, PEER_TYPES - 1, echo, NULL), KV_OK);
	cr_assert_eq(peer_add(p, CONFIG_MAX_NODES, URL[0], false),
	    KV_EINVAL);
	cr_assert_eq(peer_add(p, 3, "nope://x", false), KV_EINVAL);
	/*
	 * Nobody listens there: closing a seam while one of its dialers is
	 * still negotiating a connection leaks that connection in nng 1.5.2
	 * (seen with nng alone), which LeakSanitizer would blame on us.
	 */
	char nobody[128];
	tu_url(nobody, sizeof(nobody), "nobody.peer");
	cr_assert_eq(peer_add(p, 3, nobody, false), KV_OK);
	cr_assert_eq(peer_add(p, 3, URL[1], false), KV_EINVAL,
	    "added before");
	/* Node 0 holds URL[0]. */
	cr_assert_eq(peer_listen(p, URL[0]), KV_IO);
	peer_close(p);

	cr_assert_eq(peer_open(6, &p), KV_OK);
	char url[128];
	tu_url(url, sizeof(url), "node6.peer");
	cr_assert_eq(peer_listen(p, url), KV_OK);
	cr_assert_eq(peer_listen(p, url), KV_EINVAL, "at most once");
	cr_assert_eq(peer_handle(p, T_ECHO, echo, NULL), KV_EINVAL,
	    "after listening");
	peer_close(p);
	peer_close(NULL);
}

Test(peer, close_after_calls_is_clean)
{
	arena a;
	peer_reply r;
	arena_init(&a);
	for (int i = 0; i < 20; i++)
		cr_assert_eq(call(i % 2, (uint32_t) (1 - i % 2), T_ECHO, "x",
		    5000, &a, &r), KV_OK);
	arena_fini(&a);
	/* The fixture closes both; LeakSanitizer checks at exit. Close one
	 * now so the other's connection to it breaks first. */
	peer_close(P[1]);
	P[1] = NULL;
	/* Whether the break is seen before the call or during it. */
	arena_init(&a);
	kv_err rv = call(0, 1, T_ECHO, "gone", 500, &a, &r);
	cr_assert(rv == KV_UNAVAILABLE || rv == KV_TIMEDOUT, "%s",
	    kv_err_name(rv));
	arena_fini(&a);
}

/* Connects to the Unix socket of an ipc:// URL and leaves at once, in
 * the middle of nng's handshake. */
static void
cut_handshake(const char *url)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	cr_assert_geq(fd, 0);
	cr_assert_lt(strlen(url + 6), sizeof(sa.sun_path));
	memcpy(sa.sun_path, url + 6, strlen(url + 6) + 1);
	(void) connect(fd, (struct sockaddr *) &sa, sizeof(sa));
	close(fd);
	tu_sleep_ms(20);
}

/*
 * nng 1.5.2 (issue #1518) stops taking connections on a listener after a
 * peer left during the handshake; a dialer then believes it is connected
 * and its calls are never read. The guard (bus_guard.c) makes the
 * listener again: a caller that comes after the cut is answered.
 */
Test(peer, a_listener_whose_handshake_was_cut_takes_calls_again)
{
	arena a;
	peer_reply r;
	arena_init(&a);
	unsigned before = bus_guard_relistened();
	for (int i = 0; i < 5; i++)
		cut_handshake(URL[1]);
	peer *late;
	cr_assert_eq(peer_open(7, &late), KV_OK);
	cr_assert_eq(peer_add(late, 1, URL[1], false), KV_OK);
	kv_err rv = KV_UNAVAILABLE;
	int64_t t0 = tu_mono_ms();
	while ((rv = peer_call(late, 1, T_ECHO, (const uint8_t *) "late", 4,
	    1000, &a, &r)) != KV_OK && tu_mono_ms() - t0 < 20000)
		;
	cr_assert_eq(rv, KV_OK, "a caller after the cut: %s after %lld ms",
	    kv_err_name(rv), (long long) (tu_mono_ms() - t0));
	expect_body(&r, "late");
	/* The old callers' connection is dropped with the listener it came
	 * through: they connect again. */
	expect_found(1, &a, &r);
	cr_log_info("answered %lld ms after the cut; listeners made again: %u",
	    (long long) (tu_mono_ms() - t0), bus_guard_relistened() - before);
	peer_close(late);
	arena_fini(&a);
}

/*
 * Calls node 1 at an address where a black hole took the first
 * connection (the handshake done, then nothing) and the real node listens
 * afterwards; with reaper_stopped, as if nng's reaper had stopped (bus.h).
 * Asserts that a call is answered by the real node within 20 s, after the
 * repair's BUS_SILENT_MS; returns the time from the first silent call.
 */
static int64_t
through_a_hole(const char *name, bool reaper_stopped)
{
	arena a;
	peer_reply r;
	char url[128];
	arena_init(&a);
	tu_url(url, sizeof(url), name);
	int lfd = tu_unix_listen(url);
	bus_plant_stopped_reaper(reaper_stopped);
	peer *caller;
	cr_assert_eq(peer_open(0, &caller), KV_OK);
	cr_assert_eq(peer_add(caller, 1, url, false), KV_OK);
	int hole = tu_black_hole(lfd, url, 0x31 /* rep0 */);
	node_ctx c = { .self = 1 };
	peer *real = echo_node(&c, url);
	/* The first calls go into the hole. */
	cr_assert_eq(peer_call(caller, 1, T_ECHO, (const uint8_t *) "hole", 4,
	    500, &a, &r), KV_TIMEDOUT);
	kv_err rv = KV_TIMEDOUT;
	int64_t t0 = tu_mono_ms();
	while ((rv = peer_call(caller, 1, T_ECHO, (const uint8_t *) "real", 4,
	    1000, &a, &r)) != KV_OK && tu_mono_ms() - t0 < 20000)
		;
	int64_t took = tu_mono_ms() - t0;
	cr_assert_eq(rv, KV_OK, "%s after %lld ms", kv_err_name(rv),
	    (long long) took);
	expect_body(&r, "real");
	cr_assert_geq(took, BUS_SILENT_MS - 1000, "took %lld ms",
	    (long long) took);
	if (!reaper_stopped) {
		/* The hole's connection was closed by the caller. */
		char buf[256];
		ssize_t n;
		while ((n = read(hole, buf, sizeof(buf))) > 0)
			;
		cr_assert_eq(n, 0, "the hole's connection is still open");
	}
	bus_plant_stopped_reaper(false);
	close(hole);
	peer_close(caller);
	peer_close(real);
	arena_fini(&a);
	return took;
}

/*
 * A connection that carries nothing: the caller's pipe is up (the
 * handshake was done) but no reply ever comes over it, and nng's dialer,
 * believing itself connected, never dials again. After BUS_SILENT_MS of
 * timed-out calls the caller closes that connection and dials anew, and
 * reaches the real node now listening at the address.
 */
Test(peer, a_connection_that_carries_nothing_is_dialed_again)
{
	cr_log_info("answered %lld ms after the first silent call",
	    (long long) through_a_hole("hole.peer", false));
}

/*
 * The same connection with nng's reaper stopped (bus.h): the repair's
 * close of the pipe changes nothing, so the dialer stays connected to the
 * hole and never dials again, and no REM_POST comes. The repair's fresh
 * dialer reaches the real node all the same. (Without it the call would
 * time out for good.)
 */
Test(peer, a_silent_connection_is_dialed_again_with_the_reaper_stopped)
{
	cr_log_info("answered %lld ms after the first silent call, the "
	    "reaper stopped", (long long) through_a_hole("reaper.peer", true));
}
