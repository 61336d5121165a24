/*
 * main.c — kv-node: wires a store, the partition map, the catalog (node 0)
 * and the request server together, then waits for SIGINT or SIGTERM.
 *
 *   kv-node --config FILE --index I [--sync] [--partition-rcu N]
 *           [--partition-wcu N] [--burst-seconds N] [--no-capacity]
 *           [--sched-normal] [--nng-requests]
 *
 * The capacity options override the cluster file's (see config.h);
 * --no-capacity turns throttling off altogether, to measure its cost.
 * --nng-requests also serves requests arriving over nng (proto/nframe.h),
 * for routers started with the same flag: a measurement, not the default
 * (docs/design-notes.md, "The node transport").
 *
 * Every thread of the node runs under SCHED_BATCH unless --sched-normal:
 * a node thread that a request wakes then waits for a free core or the
 * end of the running task's time slice instead of preempting it, which
 * on a machine with fewer cores than processes lets the router finish
 * its round (docs/design-notes.md, "Nodes do not preempt"). It needs no
 * privilege, and a machine with an idle core runs the woken thread there
 * at once as before.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bus_exit.h"
#include "catalog_node.h"
#include "cluster.h"
#include "metrics_http.h"
#include "heat.h"
#include "index.h"
#include "txn.h"
#include "node.h"
#include "server.h"
#include "throttle.h"
#include "ttl.h"


static volatile sig_atomic_t stopping;

static void
on_signal(int sig)
{
	stopping = 1;
}

/* The failing disk of store.h, on demand: SIGUSR1 on, SIGUSR2 off. */
static void
on_disk_signal(int sig)
{
	atomic_store(&store_disk_failing, sig == SIGUSR1);
}

/* mkdir -p */
static int
make_dirs(const char *path)
{
	char buf[1024];
	if (snprintf(buf, sizeof(buf), "%s", path) >= (int) sizeof(buf))
		return -1;
	for (char *p = buf + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) != 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(buf, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

static void
usage(void)
{
	fprintf(stderr, "usage: kv-node --config FILE --index I [--sync] "
	    "[--partition-rcu N] [--partition-wcu N] [--burst-seconds N] "
	    "[--no-capacity] [--sched-normal] [--nng-requests] "
	    "[--split-after-seconds N] [--split-threshold F] "
	    "[--split-size-mb N] [--gsi-delay-ms N]\n"
	    "    [--gsi-collect-seconds N] [--item-collection-kb N] "
	    "[--ttl-sweep-ms N] [--memory-mb N] [--plant KIND[:N]]\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	const char *path = NULL;
	long index = -1;
	bool sync = false, sched_batch = true, nng_requests = false;
	char why[512];
	static node n;
	server *srv = NULL;
	metrics_http *mh = NULL;
	int status = 1;
	bool loaded = false; /* the partitions, with their counters */

	const char *over_rcu = NULL, *over_wcu = NULL, *over_burst = NULL;
	const char *split_opt[16]; /* key, value pairs */
	size_t n_split = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--config") == 0 && i + 1 < argc)
			path = argv[++i];
		else if (strcmp(argv[i], "--partition-rcu") == 0 &&
		    i + 1 < argc)
			over_rcu = argv[++i];
		else if (strcmp(argv[i], "--partition-wcu") == 0 &&
		    i + 1 < argc)
			over_wcu = argv[++i];
		else if (strcmp(argv[i], "--burst-seconds") == 0 &&
		    i + 1 < argc)
			over_burst = argv[++i];
		else if ((strncmp(argv[i], "--split-", 8) == 0 ||
		    strcmp(argv[i], "--gsi-delay-ms") == 0 ||
		    strcmp(argv[i], "--gsi-collect-seconds") == 0 ||
		    strcmp(argv[i], "--ttl-sweep-ms") == 0 ||
		    strcmp(argv[i], "--memory-mb") == 0 ||
		    strcmp(argv[i], "--item-collection-kb") == 0) &&
		    i + 1 < argc && n_split < 16) {
			split_opt[n_split++] = argv[i];
			split_opt[n_split++] = argv[++i];
		} else if (strcmp(argv[i], "--no-capacity") == 0)
			n.capacity_off = true;
		else if (strcmp(argv[i], "--index") == 0 && i + 1 < argc)
			index = strtol(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--sync") == 0)
			sync = true;
		else if (strcmp(argv[i], "--sched-normal") == 0)
			sched_batch = false;
		else if (strcmp(argv[i], "--nng-requests") == 0)
			nng_requests = true;
		else if (strcmp(argv[i], "--plant") == 0 && i + 1 < argc) {
			/* A fault on purpose, for chaos checkers (plant.h). */
			if (plant_parse(&n.plant, argv[++i]) != KV_OK)
				usage();
			fprintf(stderr, "kv-node: PLANTED FAULT %s armed\n",
			    argv[i]);
		}
		else
			usage();
	}
	if (path == NULL || index < 0)
		usage();
	/*
	 * The allocator, before any thread starts. glibc gives each thread
	 * an arena of its own (up to eight a core) and keeps what is freed
	 * in it; a node's request threads and RocksDB's then held 150-250 MB
	 * beyond what the block cache, memtables and size index accounted
	 * for after a load of 3 M items (the memtables' blocks freed at each
	 * flush, the cache's evicted blocks). Two arenas, and blocks of 256
	 * KB and more straight from mmap (back to the system when freed),
	 * brought the unaccounted part to 50-90 MB at the same speed
	 * (docs/design-notes.md, "Cost that stays flat").
	 */
	mallopt(M_ARENA_MAX, 2);
	mallopt(M_MMAP_THRESHOLD, 256 * 1024);
	/* Before any thread starts (RocksDB's too): they inherit it. */
	struct sched_param sp = { .sched_priority = 0 };
	if (sched_batch && sched_setscheduler(0, SCHED_BATCH, &sp) != 0) {
		fprintf(stderr, "kv-node: SCHED_BATCH refused (%s); running "
		    "under the normal policy\n", strerror(errno));
		sched_batch = false;
	}
	if (config_load(path, &n.cfg, why, sizeof(why)) != KV_OK) {
		fprintf(stderr, "kv-node: %s\n", why);
		return 1;
	}
	if ((size_t) index >= n.cfg.n_nodes) {
		fprintf(stderr, "kv-node: no node %ld in %s\n", index, path);
		return 1;
	}
	uint64_t v;
	if (over_rcu != NULL) {
		if (config_number(over_rcu, &v) != KV_OK || v == 0)
			usage();
		n.cfg.partition_rcu = v;
	}
	if (over_wcu != NULL) {
		if (config_number(over_wcu, &v) != KV_OK || v == 0)
			usage();
		n.cfg.partition_wcu = v;
	}
	if (over_burst != NULL) {
		if (config_number(over_burst, &v) != KV_OK || v > UINT32_MAX)
			usage();
		n.cfg.burst_seconds = (uint32_t) v;
	}
	for (size_t i = 0; i < n_split; i += 2)
		if (config_split_option(&n.cfg, split_opt[i],
		    split_opt[i + 1]) != KV_OK)
			usage();
	n.index = (uint32_t) index;
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	n.started_ms = (int64_t) now.tv_sec * 1000 + now.tv_nsec / 1000000;
	pthread_mutex_init(&n.peers_mu, NULL);
	pthread_mutex_init(&n.move_mu, NULL);
	pthread_mutex_init(&n.plant.mu, NULL);
	part_map_init(&n.parts);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGUSR1, on_disk_signal);
	signal(SIGUSR2, on_disk_signal);

	const config_node *me = &n.cfg.nodes[index];
	if (make_dirs(me->data) != 0) {
		fprintf(stderr, "kv-node: cannot create %s: %s\n", me->data,
		    strerror(errno));
		return 1;
	}
	/* The size index's quarter of the budget (store.h's split). */
	n.parts.sizes.limit = (size_t) n.cfg.memory_mb << 20 >> 2;
	if (store_open_rocks(me->data, sync, n.cfg.memory_mb, &n.st, why,
	    sizeof(why)) !=
	    KV_OK) {
		fprintf(stderr, "kv-node: %s\n", why);
		return 1;
	}
	struct timespec t0, t1;
	bool recounted = false;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	kv_err rv = part_map_recover(&n.parts, n.st, &recounted);
	if (rv != KV_OK) {
		fprintf(stderr, "kv-node: cannot load partitions: %s\n",
		    kv_err_name(rv));
		goto out;
	}
	loaded = true;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (recounted && n.parts.n > 0)
		fprintf(stderr, "kv-node %u: not stopped cleanly last time: "
		    "counted the items of %zu partition%s again in %.0f ms\n",
		    n.index, n.parts.n, n.parts.n == 1 ? "" : "s",
		    (double) (t1.tv_sec - t0.tv_sec) *
		    1e3 + (double) (t1.tv_nsec - t0.tv_nsec) / 1e6);
	for (size_t i = 0; i < n.parts.n; i++) {
		part *p = n.parts.p[i];
		throttle_configure(&n, p, p->prov_rcu, p->prov_wcu,
		    p->table_parts, true);
	}
	/* Before the catalog and the server: both hand it catalogs. */
	if ((rv = index_open(&n)) != KV_OK)
		goto out;
	/* Prepared transactions lock their items before any request. */
	if ((rv = txn_open(&n)) != KV_OK) {
		fprintf(stderr, "kv-node: cannot read the prepared transactions "
		    "back: %s\n", kv_err_name(rv));
		goto out;
	}
	if ((rv = ttl_open(&n)) != KV_OK) {
		fprintf(stderr, "kv-node: cannot start the TTL sweep: %s\n",
		    kv_err_name(rv));
		goto out;
	}
	if (n.index == 0 && (rv = catalog_node_open(&n)) != KV_OK) {
		fprintf(stderr, "kv-node: cannot load the catalog: %s\n",
		    kv_err_name(rv));
		goto out;
	}
	char nng_url[300];
	if (nng_requests && config_bus_url(me->bus, CONFIG_BUS_REQUESTS,
	    nng_url, sizeof(nng_url)) != KV_OK)
		goto out;
	if (server_open(&n, me->url, nng_requests ? nng_url : NULL, &srv) !=
	    KV_OK)
		goto out;
	if ((rv = cluster_open(&n)) != KV_OK) {
		fprintf(stderr, "kv-node: cannot join the cluster's messaging "
		    "(%s)\n", kv_err_name(rv));
		goto out;
	}
	if (me->metrics_host[0] != '\0' && metrics_http_open(&n,
	    me->metrics_host, me->metrics_port, &mh) != KV_OK) {
		fprintf(stderr, "kv-node: cannot serve /metrics on %s:%d\n",
		    me->metrics_host, me->metrics_port);
		goto out;
	}
	/* The catalog node collects index tombstones (index.h). */
	if (n.index == 0 && (rv = index_collector_start(&n)) != KV_OK)
		goto out;
	/* Heat and size splits, and the end of borrowed rates. */
	if (!n.capacity_off && (rv = heat_mon_start(&n)) != KV_OK)
		goto out;
	fprintf(stderr, "kv-node %u: serving %s (data %s, %zu partitions; "
	    "per partition %llu RCU/s, %llu WCU/s, %u s burst%s; %s "
	    "scheduling)\n",
	    n.index, me->url, me->data, n.parts.n,
	    (unsigned long long) n.cfg.partition_rcu,
	    (unsigned long long) n.cfg.partition_wcu, n.cfg.burst_seconds,
	    n.capacity_off ? "; capacity OFF" : "",
	    sched_batch ? "batch" : "normal");
	while (!stopping)
		pause();
	status = 0;
out:
	bus_exit_begin(); /* nng sockets are left to the exit (bus_exit.h) */
	heat_mon_stop(&n);
	index_collector_stop(&n);
	metrics_http_close(mh);
	cluster_stop(&n);
	server_close(srv);
	ttl_close(&n);
	index_close(&n);
	txn_close(&n);
	catalog_node_close(&n);
	cluster_close(&n);
	/* No request runs now: the counters go to the records, with the
	 * marker that lets the next start trust them (part.h). */
	if (loaded && (rv = part_map_save(&n.parts, n.st)) != KV_OK)
		fprintf(stderr, "kv-node %u: cannot save the partitions' "
		    "counters (%s): the next start counts again\n", n.index,
		    kv_err_name(rv));
	for (size_t i = 0; i < CONFIG_MAX_NODES; i++)
		rpc_client_close(n.peers[i]);
	move_target_close(&n);
	part_map_fini(&n.parts);
	store_close(n.st);
	free(n.plant.key);
	free(n.plant.rec);
	return status;
}
