/*
 * rpc_test.c — the frames' client (proto/rpc.c) against a small server of
 * the test's own on a Unix socket: rpc_call_start / rpc_call_end keep
 * several calls in flight, each answer reaching the call it belongs to;
 * a call that times out is not answered later by its late reply (its
 * connection is closed, never reused); a node that does not listen
 * fails the start at once with KV_UNAVAILABLE. The server answers a
 * request with its table_id in old_size and, when table_id is SLOW,
 * only after SLOW_MS.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "rpc.h"
#include "wire.h"

#define SLOW 999u
#define SLOW_MS 400

typedef struct srv {
	char dir[64], path[108], url[128];
	int lfd;
	pthread_t th;
	atomic_int conns; /* connections accepted */
} srv;

static srv S;

static bool
read_n(int fd, uint8_t *p, size_t n)
{
	while (n > 0) {
		ssize_t r = recv(fd, p, n, 0);
		if (r <= 0)
			return false;
		p += r;
		n -= (size_t) r;
	}
	return true;
}

/* Serves one connection: frame in, frame out, until it closes. */
static void *
conn_thread(void *arg)
{
	int fd = (int) (intptr_t) arg;
	for (;;) {
		uint8_t hdr[4], *buf, *out = NULL;
		size_t olen = 0;
		if (!read_n(fd, hdr, 4))
			break;
		uint32_t n = (uint32_t) hdr[0] | (uint32_t) hdr[1] << 8 |
		    (uint32_t) hdr[2] << 16 | (uint32_t) hdr[3] << 24;
		buf = malloc(n > 0 ? n : 1);
		if (buf == NULL || !read_n(fd, buf, n)) {
			free(buf);
			break;
		}
		arena a;
		rpc_request req;
		rpc_response resp;
		arena_init(&a);
		memset(&resp, 0, sizeof(resp));
		resp.code = wire_unpack_request(buf, n, &a, &req);
		if (resp.code == KV_OK && req.table_id == SLOW)
			usleep(SLOW_MS * 1000);
		if (resp.code == KV_OK) {
			resp.old_size = req.table_id;
			wire_request_fini(&req);
		}
		bool ok = wire_pack_response(&resp, &out, &olen) == KV_OK;
		arena_fini(&a);
		free(buf);
		if (ok) {
			uint8_t h[4] = { (uint8_t) olen, (uint8_t) (olen >> 8),
				(uint8_t) (olen >> 16), (uint8_t) (olen >> 24) };
			ok = rpc_send_all(fd, h, 4, 1000) &&
			    rpc_send_all(fd, out, olen, 1000);
		}
		free(out);
		if (!ok)
			break;
	}
	close(fd);
	return NULL;
}

static void *
accept_thread(void *arg)
{
	srv *s = arg;
	for (;;) {
		int fd = accept(s->lfd, NULL, NULL);
		if (fd < 0)
			return NULL;
		atomic_fetch_add(&s->conns, 1);
		pthread_t th;
		pthread_attr_t at;
		pthread_attr_init(&at);
		pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
		pthread_create(&th, &at, conn_thread, (void *) (intptr_t) fd);
		pthread_attr_destroy(&at);
	}
}

static void
setup(void)
{
	memset(&S, 0, sizeof(S));
	strcpy(S.dir, "/tmp/kv-rpc-test-XXXXXX");
	cr_assert_not_null(mkdtemp(S.dir));
	snprintf(S.path, sizeof(S.path), "%s/node.sock", S.dir);
	snprintf(S.url, sizeof(S.url), "ipc://%s", S.path);
	S.lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert_geq(S.lfd, 0);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	strcpy(sa.sun_path, S.path);
	cr_assert_eq(bind(S.lfd, (struct sockaddr *) &sa, sizeof(sa)), 0);
	cr_assert_eq(listen(S.lfd, 16), 0);
	cr_assert_eq(pthread_create(&S.th, NULL, accept_thread, &S), 0);
}

static void
teardown(void)
{
	shutdown(S.lfd, SHUT_RDWR);
	close(S.lfd);
	pthread_join(S.th, NULL);
	unlink(S.path);
	rmdir(S.dir);
}

TestSuite(rpc, .init = setup, .fini = teardown);

static rpc_request
ping(uint32_t id)
{
	return (rpc_request) { .op = RPC_PING, .table_id = id };
}

Test(rpc, calls_in_flight_get_their_own_answers)
{
	rpc_client *c;
	rpc_pending *p[4];
	cr_assert_eq(rpc_client_open(S.url, &c), KV_OK);
	for (uint32_t i = 0; i < 4; i++) {
		rpc_request req = ping(100 + i);
		cr_assert_eq(rpc_call_start(c, &req, 2000, &p[i]), KV_OK);
	}
	/* Ended in another order than started. */
	const int order[4] = { 2, 0, 3, 1 };
	for (int k = 0; k < 4; k++) {
		arena a;
		rpc_response resp;
		arena_init(&a);
		cr_assert_eq(rpc_call_end(p[order[k]], &a, &resp), KV_OK);
		cr_assert_eq(resp.code, KV_OK);
		cr_assert_eq(resp.old_size, 100u + (uint32_t) order[k]);
		wire_response_fini(&resp);
		arena_fini(&a);
	}
	/* Four at once took four connections; given back, they serve the
	 * next calls without new ones. */
	cr_assert_eq(atomic_load(&S.conns), 4);
	for (uint32_t i = 0; i < 8; i++) {
		arena a;
		rpc_response resp;
		rpc_request req = ping(7 + i);
		arena_init(&a);
		cr_assert_eq(rpc_call(c, &req, &a, &resp, 2000), KV_OK);
		cr_assert_eq(resp.old_size, 7u + i);
		wire_response_fini(&resp);
		arena_fini(&a);
	}
	cr_assert_eq(atomic_load(&S.conns), 4);
	rpc_client_close(c);
}

Test(rpc, a_late_reply_never_answers_another_call)
{
	rpc_client *c;
	rpc_pending *p;
	arena a;
	rpc_response resp;
	cr_assert_eq(rpc_client_open(S.url, &c), KV_OK);
	rpc_request slow = ping(SLOW);
	cr_assert_eq(rpc_call_start(c, &slow, 100, &p), KV_OK);
	arena_init(&a);
	cr_assert_eq(rpc_call_end(p, &a, &resp), KV_TIMEDOUT);
	arena_fini(&a);
	/* The slow reply arrives meanwhile; the next call must read its
	 * own, on another connection. */
	usleep(2 * SLOW_MS * 1000);
	rpc_request req = ping(42);
	arena_init(&a);
	cr_assert_eq(rpc_call(c, &req, &a, &resp, 2000), KV_OK);
	cr_assert_eq(resp.old_size, 42u);
	wire_response_fini(&resp);
	arena_fini(&a);
	cr_assert_eq(atomic_load(&S.conns), 2);
	rpc_client_close(c);
}

Test(rpc, a_node_that_does_not_listen_fails_the_start)
{
	rpc_client *c;
	rpc_pending *p = (rpc_pending *) &c; /* must come back NULL */
	char url[160];
	snprintf(url, sizeof(url), "ipc://%s/none.sock", S.dir);
	cr_assert_eq(rpc_client_open(url, &c), KV_OK);
	rpc_request req = ping(1);
	/* A young client retries until its deadline: keep that short. */
	cr_assert_eq(rpc_call_start(c, &req, 50, &p), KV_UNAVAILABLE);
	cr_assert_null(p);
	rpc_client_close(c);
}
