/*
 * metrics_http.c — GET /metrics on a node (see metrics_http.h). One
 * libmicrohttpd thread; each scrape reads the partitions' counters through
 * the STATS verb, like any other caller.
 */
#define _GNU_SOURCE
#include "index.h"
#include "metrics_http.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

#include "catalog_node.h"
#include "cluster.h"
#include "metrics.h"
#include "node.h"
#include "ttl.h"

struct metrics_http {
	struct MHD_Daemon *d;
	node *n;
};

/* The resident size of this process (VmRSS), in bytes; 0 if unknown. */
static uint64_t
resident_bytes(void)
{
	char line[128];
	uint64_t kb = 0;
	FILE *f = fopen("/proc/self/status", "r");
	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "VmRSS: %" SCNu64, &kb) == 1)
			break;
	fclose(f);
	return kb * 1024;
}

/*
 * Where the node's memory goes, against its budget (memory-mb): the
 * store's shares (node/store/store_rocks.c), the size index's tables, and the
 * whole process.
 */
static void
write_memory(node *n, FILE *f)
{
	store_memory m;
	store_memory_of(n->st, &m);
	uint64_t sizes = (uint64_t) atomic_load(&n->parts.sizes.bytes);
	fprintf(f, "# HELP kv_node_memory_bytes Memory the node uses, by "
	    "part: resident (the process), budget (memory-mb), block_cache "
	    "(with index and filter blocks), block_cache_capacity, "
	    "memtables, table_readers, size_index.\n"
	    "# TYPE kv_node_memory_bytes gauge\n");
	const struct { const char *part; uint64_t v; } rows[] = {
		{ "resident", resident_bytes() },
		{ "budget", (uint64_t) n->cfg.memory_mb << 20 },
		{ "block_cache", m.cache },
		{ "block_cache_capacity", m.cache_capacity },
		{ "memtables", m.memtables },
		{ "table_readers", m.table_readers },
		{ "size_index", sizes },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		fprintf(f, "kv_node_memory_bytes{node=\"%u\",part=\"%s\"} "
		    "%" PRIu64 "\n", n->index, rows[i].part, rows[i].v);
}

/* The node's scrape: its partitions' counters as Prometheus text. */
static char *
render(node *n, size_t *len)
{
	arena a;
	rpc_request req = { .op = RPC_STATS };
	rpc_response resp;
	char *buf = NULL;

	arena_init(&a);
	memset(&resp, 0, sizeof(resp));
	node_dispatch(n, &req, &a, &resp);
	FILE *f = open_memstream(&buf, len);
	if (f != NULL) {
		metrics_source src = { .node = n->index, .stats = resp.stats,
			.n = resp.code == KV_OK ? resp.n_stats : 0 };
		fprintf(f, "# HELP kv_node_partitions Partitions this node "
		    "owns.\n# TYPE kv_node_partitions gauge\n"
		    "kv_node_partitions{node=\"%u\"} %zu\n", n->index, src.n);
		metrics_write_parts(f, &src, 1, NULL, NULL);
		cluster_write_health(n, f);
		reshape_write_metrics(n, f);
		index_write_metrics(n, f);
		ttl_write_metrics(n, f);
		write_memory(n, f);
		fclose(f);
	}
	wire_response_fini(&resp);
	arena_fini(&a);
	return buf;
}

static enum MHD_Result
on_request(void *cls, struct MHD_Connection *conn, const char *url,
    const char *method, const char *version, const char *upload_data,
    size_t *upload_size, void **con_cls)
{
	metrics_http *m = cls;
	struct MHD_Response *resp;
	unsigned status = 200;
	size_t len = 0;
	char *body = NULL;

	if (strcmp(method, "GET") != 0 || strcmp(url, "/metrics") != 0) {
		status = 404;
		body = strdup("not found: this node serves GET /metrics\n");
		len = body != NULL ? strlen(body) : 0;
	} else if ((body = render(m->n, &len)) == NULL) {
		status = 500;
	}
	resp = MHD_create_response_from_buffer(len, body != NULL ? body : "",
	    body != NULL ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
	if (resp == NULL) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(resp, "Content-Type",
	    "text/plain; version=0.0.4; charset=utf-8");
	enum MHD_Result ret = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

kv_err
metrics_http_open(node *n, const char *host, int port, metrics_http **out)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
		.sin_port = htons((uint16_t) port) };
	/* An IPv6 host comes without its brackets (config.h). */
	struct sockaddr_in6 sa6 = { .sin6_family = AF_INET6,
		.sin6_port = htons((uint16_t) port) };
	struct sockaddr *addr = (struct sockaddr *) &sa;
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD |
	    MHD_USE_ERROR_LOG;
	if (strcmp(host, "localhost") == 0)
		host = "127.0.0.1";
	if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
		if (inet_pton(AF_INET6, host, &sa6.sin6_addr) != 1)
			return KV_EINVAL;
		addr = (struct sockaddr *) &sa6;
		flags |= MHD_USE_IPv6;
	}
	metrics_http *m = calloc(1, sizeof(*m));
	if (m == NULL)
		return KV_ENOMEM;
	m->n = n;
	m->d = MHD_start_daemon(flags, (uint16_t) port, NULL, NULL, on_request,
	    m, MHD_OPTION_SOCK_ADDR, addr, MHD_OPTION_END);
	if (m->d == NULL) {
		free(m);
		return KV_IO;
	}
	*out = m;
	return KV_OK;
}

void
metrics_http_close(metrics_http *m)
{
	if (m == NULL)
		return;
	MHD_stop_daemon(m->d);
	free(m);
}
