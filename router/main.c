/*
 * main.c — kv-router: reads the cluster file, connects to every node,
 * loads the catalog and serves HTTP until SIGINT or SIGTERM.
 *
 *   kv-router --config FILE [--index I] [--port P] [--loops N] [--no-ring]
 *             [--nng-requests] [--txn-fault prepared|decided]
 *             [--auth FILE] [--request-seconds N] [--max-connections N]
 *
 * --index I: which of the cluster file's router lines this router is
 * (default 0): its HTTP address and its survey address. Several routers
 * may listen on one address (SO_REUSEPORT); the kernel spreads new
 * connections over them.
 *
 * --no-ring: each write to a client or a node is its own send, instead of
 * a round's writes going to the kernel together through io_uring.
 *
 * --nng-requests: the event loop's frames to each node go as one nng
 * message a round (proto/nframe.h; the nodes need the same flag), to
 * measure nng on the request path against the sockets. The workers' calls
 * keep the sockets.
 *
 * --txn-fault: for tests of transactions' recovery, the router dies
 * (_exit) in every TransactWriteItems once all participants prepared
 * (prepared) or once COMMIT is recorded (decided), before the next
 * phase: what a crash of the coordinator at that point leaves.
 *
 * --auth FILE: every request must be signed (AWS Signature Version 4) with
 * a key of FILE (auth.h).
 *
 * --request-seconds N (60): a request must arrive whole within N seconds
 * of its first byte, or its connection is closed (a client that trickles
 * bytes holds no connection for long); 0: no limit. --max-connections N
 * (20000): connections past N are closed as they are accepted.
 */
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "auth.h"
#include "bus_exit.h"
#include "conn.h"
#include "http.h"
#include "member.h"
#include "route.h"

static volatile sig_atomic_t stopping;

static void
on_signal(int sig)
{
	stopping = 1;
}

static void
usage(void)
{
	fprintf(stderr,
	    "usage: kv-router --config FILE [--index I] [--port P] "
	    "[--loops N] [--no-ring] [--nng-requests] [--auth FILE]\n"
	    "    [--request-seconds N] [--max-connections N]\n"
	    "    [--txn-fault prepared|decided]\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	const char *path = NULL, *auth = NULL;
	long index = 0, port = 0, loops = HTTP_LOOPS;
	bool no_ring = false, nng_requests = false;
	char why[512];
	static router r;
	http *h = NULL;
	int status = 1;

	r.request_seconds = 60;      /* --request-seconds */
	r.max_connections = 20000;   /* --max-connections */

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--config") == 0 && i + 1 < argc)
			path = argv[++i];
		else if (strcmp(argv[i], "--index") == 0 && i + 1 < argc)
			index = strtol(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--port") == 0 && i + 1 < argc)
			port = strtol(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--loops") == 0 && i + 1 < argc)
			loops = strtol(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--no-ring") == 0)
			no_ring = true;
		else if (strcmp(argv[i], "--nng-requests") == 0)
			nng_requests = true;
		else if (strcmp(argv[i], "--auth") == 0 && i + 1 < argc)
			auth = argv[++i];
		else if (strcmp(argv[i], "--request-seconds") == 0 &&
		    i + 1 < argc)
			r.request_seconds = (int) strtol(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--max-connections") == 0 &&
		    i + 1 < argc)
			r.max_connections = (uint32_t) strtoul(argv[++i], NULL,
			    10);
		else if (strcmp(argv[i], "--txn-fault") == 0 && i + 1 < argc &&
		    (strcmp(argv[i + 1], "prepared") == 0 ||
		    strcmp(argv[i + 1], "decided") == 0))
			r.txn_fault = argv[++i][0] == 'p' ? ROUTER_FAULT_PREPARED :
			    ROUTER_FAULT_DECIDED;
		else
			usage();
	}
	if (path == NULL)
		usage();
	/*
	 * The allocator, before any thread starts. Each request's arena is
	 * freed whole when it is answered, and glibc gave the top of a
	 * thread's heap back to the system (madvise, whose TLB flush
	 * interrupts every core) whenever 128 KB lay free there: under
	 * TransactGetItems that was 2.5 % of all CPU, and the pages were
	 * faulted in again by the next requests. Up to 8 MB free at a
	 * heap's top stays; blocks of 1 MB and more come from mmap
	 * (docs/design-notes.md, "The router's allocator").
	 */
	mallopt(M_TRIM_THRESHOLD, 8 * 1024 * 1024);
	mallopt(M_MMAP_THRESHOLD, 1024 * 1024);
	if (config_load(path, &r.cfg, why, sizeof(why)) != KV_OK) {
		fprintf(stderr, "kv-router: %s\n", why);
		return 1;
	}
	if (auth != NULL && auth_load(auth, &r.auth, why, sizeof(why)) !=
	    KV_OK) {
		fprintf(stderr, "kv-router: --auth: %s\n", why);
		return 1;
	}
	const char *host = "127.0.0.1";
	if (index < 0 || (r.cfg.n_routers > 0 &&
	    (size_t) index >= r.cfg.n_routers)) {
		fprintf(stderr, "kv-router: no router %ld in %s\n", index,
		    path);
		return 1;
	}
	r.index = (uint32_t) index;
	if ((size_t) index < r.cfg.n_routers) {
		host = r.cfg.routers[index].host;
		if (port == 0)
			port = r.cfg.routers[index].port;
	}
	if (port <= 0 || port > 65535) {
		fprintf(stderr, "kv-router: no port for router %ld\n", index);
		return 1;
	}
	config_host_port(host, (int) port, r.listen, sizeof(r.listen));
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	r.started_ms = (int64_t) now.tv_sec * 1000 + now.tv_nsec / 1000000;
	r.call_timeout_ms = RPC_DEFAULT_TIMEOUT_MS;
	r.no_ring = no_ring;
	r.nng_requests = nng_requests;
	signal(SIGPIPE, SIG_IGN);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	if (conn_open(&r) != KV_OK) {
		fprintf(stderr, "kv-router: cannot open node connections\n");
		goto out;
	}
	if (route_open(&r) != KV_OK) {
		fprintf(stderr, "kv-router: cannot follow the catalog feed\n");
		goto out;
	}
	if (member_open(&r) != KV_OK) {
		fprintf(stderr, "kv-router: cannot join the cluster's "
		    "surveys\n");
		goto out;
	}
	if (http_open(&r, host, (int) port, (int) loops, &h) != KV_OK) {
		fprintf(stderr, "kv-router: cannot listen on %s\n", r.listen);
		goto out;
	}
	fprintf(stderr, "kv-router: serving http://%s (%s%s)\n", r.listen,
	    http_ring(h) ? "writes through io_uring" :
	    no_ring ? "each write alone: --no-ring" :
	    "each write alone: io_uring refused",
	    nng_requests ? "; node requests over nng" : "");
	while (!stopping)
		pause();
	status = 0;
out:
	bus_exit_begin(); /* nng sockets are left to the exit (bus_exit.h) */
	http_close(h);
	member_close();
	route_close(&r);
	conn_close(&r);
	return status;
}
