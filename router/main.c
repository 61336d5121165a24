/*
 * main.c — kv-router: reads the cluster file, connects to every node,
 * loads the catalog and serves HTTP until SIGINT or SIGTERM.
 *
 *   kv-router --config FILE [--index I] [--port P] [--loops N] [--no-ring]
 *
 * --no-ring: each write to a client or a node is its own send, instead of
 * a round's writes going to the kernel together through io_uring.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conn.h"
#include "http.h"
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
	    "[--loops N] [--no-ring]\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	const char *path = NULL;
	long index = 0, port = 0, loops = HTTP_LOOPS;
	bool no_ring = false;
	char why[512];
	static router r;
	http *h = NULL;
	int status = 1;

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
		else
			usage();
	}
	if (path == NULL)
		usage();
	if (config_load(path, &r.cfg, why, sizeof(why)) != KV_OK) {
		fprintf(stderr, "kv-router: %s\n", why);
		return 1;
	}
	const char *host = "127.0.0.1";
	if ((size_t) index < r.cfg.n_routers) {
		host = r.cfg.routers[index].host;
		if (port == 0)
			port = r.cfg.routers[index].port;
	}
	if (port <= 0 || port > 65535) {
		fprintf(stderr, "kv-router: no port for router %ld\n", index);
		return 1;
	}
	snprintf(r.listen, sizeof(r.listen), "%s:%ld", host, port);
	r.call_timeout_ms = RPC_DEFAULT_TIMEOUT_MS;
	r.no_ring = no_ring;
	signal(SIGPIPE, SIG_IGN);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	if (conn_open(&r) != KV_OK) {
		fprintf(stderr, "kv-router: cannot open node connections\n");
		goto out;
	}
	if (route_open(&r) != KV_OK)
		goto out;
	if (http_open(&r, host, (int) port, (int) loops, &h) != KV_OK) {
		fprintf(stderr, "kv-router: cannot listen on %s\n", r.listen);
		goto out;
	}
	fprintf(stderr, "kv-router: serving http://%s (%s)\n", r.listen,
	    http_ring(h) ? "writes through io_uring" :
	    no_ring ? "each write alone: --no-ring" :
	    "each write alone: io_uring refused");
	while (!stopping)
		pause();
	status = 0;
out:
	http_close(h);
	route_close(&r);
	conn_close(&r);
	return status;
}
