/*
 * run.h — one kv-load run: check or create the table, load the data set,
 * drive the workload closed or open loop, report. kv_load.c fills a
 * run_opts from the command line; everything after that happens here.
 *
 * Closed loop: every connection sends its next request as soon as the
 * answer to the last one arrives. Open loop: requests fall due on the
 * pace schedule whether or not earlier ones were answered; due requests
 * wait in a queue for a free connection, and latency counts from when a
 * request was due, so time spent queued behind a slow server is counted
 * (no coordinated omission). Read next: serve.h.
 */
#ifndef KVLOAD_RUN_H
#define KVLOAD_RUN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "pace.h"
#include "workload.h"
#include "zipf.h"

typedef struct run_opts {
	const char *url;             /* for messages and the summary */
	const char *host;            /* "HOST:PORT", the Host header */
	struct sockaddr_storage addr;
	socklen_t alen;
	const char *table;
	workload_kind kind;
	zipf dist;                   /* over --keys, with --shard-hot */
	const char *dist_spec;       /* as given, for the summary */
	const char *prefix;
	size_t item_size;
	bool index_keys;             /* --index-keys (workload.h) */
	bool collections;            /* --collections (workload.h) */
	const char *index;           /* --index NAME, or NULL (workload.h) */
	uint64_t seed;
	size_t connections;
	double duration;             /* seconds; 0: no run, INFINITY: none */
	uint64_t count;              /* requests; 0: no bound */
	bool open;                   /* open loop on `pace` */
	pace pace;
	int64_t timeout_ns;          /* per request */
	bool create, load, check, allow_errors, quiet;
	const char *csv, *json;      /* output files, or NULL */
	const char *lat;             /* --latencies FILE, or NULL */
} run_opts;

/*
 * run_main does the run o describes (borrowed) and returns the exit
 * status: 0 when every answer was right and nothing but throttles failed
 * (other failures allowed with allow_errors), 1 otherwise or when the
 * run could not start (the reason is printed on stderr).
 */
int run_main(const run_opts *o);

#endif
