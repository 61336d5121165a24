/*
 * kv_load.c — kv-load's main: reads the command line into a run_opts,
 * refuses targets that are not on this machine or in the given cluster
 * file, and hands over to run_main (or serve_null). Nothing else.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>

#include "config.h"
#include "run.h"
#include "serve.h"

static const char usage[] =
    "usage: kv-load [options]\n"
    "       kv-load --serve-null PORT\n"
    "\n"
    "Target\n"
    "  --url http://HOST:PORT   endpoint (default http://127.0.0.1:8000,\n"
    "                           or the first router of --config); loopback\n"
    "                           only, unless a router in --config\n"
    "  --config FILE            cluster file whose router lines may be used\n"
    "  --table NAME             table (default load)\n"
    "  --create                 create the table if missing, wait for ACTIVE\n"
    "  --load                   write the data set the workload reads first\n"
    "Workload\n"
    "  --workload W             put get query update-counter counter\n"
    "                           ycsb-a ycsb-b ycsb-c ycsb-e txn-put2\n"
    "                           txn-update4 txn-get4 (default get)\n"
    "  --keys N                 keys (default 10000)\n"
    "  --key-prefix P           key of rank i is P<i> (default k)\n"
    "  --dist D                 uniform, zipf:THETA or hot (default uniform)\n"
    "  --hot-share S            Zipf with theta solved so key 0 gets share S\n"
    "  --shard-hot K            write key 0 as K keys P0#0..P0#K-1\n"
    "  --item-size BYTES        length of the v pad (default 150)\n"
    "  --index-keys             puts also set g1 (S, 256 values) and g2\n"
    "                           (N, fresh), keys for two global indexes\n"
    "  --index NAME             query: Query global index NAME (g1 HASH,\n"
    "                           g2 RANGE) for g1 = a bucket, Limit 10;\n"
    "                           --load then writes keys with g1 and g2\n"
    "  --collections            get, put, query: item collections of sort\n"
    "                           keys sk 0..9 under every key; get and put\n"
    "                           one item of a drawn key, query its page of\n"
    "                           10; --load writes 10 items a key\n"
    "  --seed N                 random seed (default 1)\n"
    "  --no-check               count every 200 as right, skip table checks\n"
    "Load\n"
    "  --connections N          keep-alive connections (default 32)\n"
    "  --duration SECS          run time (default 10; 0 = setup/load only)\n"
    "  --count N                stop after N requests\n"
    "  --rate R                 open loop at R requests/s\n"
    "  --schedule R1:S1,...     open loop, R1/s for S1 s, then R2/s ...\n"
    "  --ramp FROM:TO:SECS      open loop, rate rising linearly\n"
    "  --timeout SECS           a request without answer fails (default 10)\n"
    "Output\n"
    "  --csv FILE               one row per second and operation\n"
    "  --latencies FILE         one row per answer (time, op, outcome, us)\n"
    "  --json FILE              the summary, per operation and per step\n"
    "  --quiet                  no progress line per second on stderr\n"
    "  --allow-errors           exit 0 despite errors (not wrong answers)\n"
    "Exit status: 0 when all went right, 1 on errors or wrong answers, "
    "2 on usage.\n";

enum {
	OPT_URL = 256,
	OPT_CONFIG,
	OPT_TABLE,
	OPT_CREATE,
	OPT_WORKLOAD,
	OPT_KEYS,
	OPT_PREFIX,
	OPT_DIST,
	OPT_HOT_SHARE,
	OPT_SHARD_HOT,
	OPT_SEED,
	OPT_ITEM_SIZE,
	OPT_LOAD,
	OPT_CONNECTIONS,
	OPT_DURATION,
	OPT_COUNT,
	OPT_RATE,
	OPT_SCHEDULE,
	OPT_RAMP,
	OPT_CSV,
	OPT_LATENCIES,
	OPT_INDEX_KEYS,
	OPT_COLLECTIONS,
	OPT_INDEX,
	OPT_JSON,
	OPT_ALLOW_ERRORS,
	OPT_SERVE_NULL,
	OPT_NO_CHECK,
	OPT_TIMEOUT,
	OPT_QUIET,
	OPT_HELP,
};

static const struct option options[] = {
	{ "url", required_argument, NULL, OPT_URL },
	{ "config", required_argument, NULL, OPT_CONFIG },
	{ "table", required_argument, NULL, OPT_TABLE },
	{ "create", no_argument, NULL, OPT_CREATE },
	{ "workload", required_argument, NULL, OPT_WORKLOAD },
	{ "keys", required_argument, NULL, OPT_KEYS },
	{ "key-prefix", required_argument, NULL, OPT_PREFIX },
	{ "dist", required_argument, NULL, OPT_DIST },
	{ "hot-share", required_argument, NULL, OPT_HOT_SHARE },
	{ "shard-hot", required_argument, NULL, OPT_SHARD_HOT },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "item-size", required_argument, NULL, OPT_ITEM_SIZE },
	{ "load", no_argument, NULL, OPT_LOAD },
	{ "connections", required_argument, NULL, OPT_CONNECTIONS },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "count", required_argument, NULL, OPT_COUNT },
	{ "rate", required_argument, NULL, OPT_RATE },
	{ "schedule", required_argument, NULL, OPT_SCHEDULE },
	{ "ramp", required_argument, NULL, OPT_RAMP },
	{ "csv", required_argument, NULL, OPT_CSV },
	{ "latencies", required_argument, NULL, OPT_LATENCIES },
	{ "index-keys", no_argument, NULL, OPT_INDEX_KEYS },
	{ "collections", no_argument, NULL, OPT_COLLECTIONS },
	{ "index", required_argument, NULL, OPT_INDEX },
	{ "json", required_argument, NULL, OPT_JSON },
	{ "allow-errors", no_argument, NULL, OPT_ALLOW_ERRORS },
	{ "serve-null", required_argument, NULL, OPT_SERVE_NULL },
	{ "no-check", no_argument, NULL, OPT_NO_CHECK },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "quiet", no_argument, NULL, OPT_QUIET },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

static int
bad_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "kv-load: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n\n%s", usage);
	return 2;
}

static bool
parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	if (!isdigit((unsigned char) s[0]))
		return false;
	errno = 0;
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

static bool
parse_double(const char *s, double lo, double hi, double *out)
{
	char *end;
	double v = strtod(s, &end);
	if (end == s || *end != '\0' || !isfinite(v) || v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

/* DynamoDB table names: 3 to 255 of [A-Za-z0-9_.-], no JSON escaping. */
static bool
table_name_ok(const char *s)
{
	size_t n = strlen(s);
	if (n < 3 || n > 255)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char) s[i]) &&
		    strchr("_.-", s[i]) == NULL)
			return false;
	return true;
}

/* Key prefixes go into JSON unescaped: printable, no quote or backslash. */
static bool
prefix_ok(const char *s)
{
	if (strlen(s) > 64)
		return false;
	for (; *s != '\0'; s++)
		if (!isgraph((unsigned char) *s) || *s == '"' || *s == '\\')
			return false;
	return true;
}

typedef struct target {
	char host[256]; /* without brackets */
	char port[8];
	char hostport[300]; /* as in the URL, for the Host header */
} target;

/* Splits "http://HOST:PORT[/]" (HOST may be "[v6]"). */
static bool
parse_url(const char *url, target *t)
{
	if (strncmp(url, "http://", 7) != 0)
		return false;
	const char *h = url + 7;
	size_t n = strcspn(h, "/");
	if (h[n] == '/' && h[n + 1] != '\0')
		return false; /* requests go to /, a path would be ignored */
	if (n == 0 || n >= sizeof(t->hostport))
		return false;
	memcpy(t->hostport, h, n);
	t->hostport[n] = '\0';
	const char *colon;
	if (t->hostport[0] == '[') {
		const char *close = strchr(t->hostport, ']');
		if (close == NULL || close[1] != ':')
			return false;
		size_t hn = (size_t) (close - t->hostport - 1);
		memcpy(t->host, t->hostport + 1, hn);
		t->host[hn] = '\0';
		colon = close + 1;
	} else {
		colon = strrchr(t->hostport, ':');
		if (colon == NULL)
			return false;
		size_t hn = (size_t) (colon - t->hostport);
		memcpy(t->host, t->hostport, hn);
		t->host[hn] = '\0';
	}
	uint64_t port;
	if (t->host[0] == '\0' || !parse_u64(colon + 1, 1, 65535, &port))
		return false;
	snprintf(t->port, sizeof(t->port), "%" PRIu64, port);
	return true;
}

static bool
addr_is_loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *) sa;
		return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 =
		    (const struct sockaddr_in6 *) sa;
		if (IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr))
			return true;
		return IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr) &&
		    in6->sin6_addr.s6_addr[12] == 127;
	}
	return false;
}

/* Whether host is a loopback address written as one ("127.0.0.2"). */
static bool
literal_loopback(const char *host)
{
	struct in_addr a4;
	struct in6_addr a6;
	if (inet_pton(AF_INET, host, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	if (inet_pton(AF_INET6, host, &a6) == 1)
		return IN6_IS_ADDR_LOOPBACK(&a6) ||
		    (IN6_IS_ADDR_V4MAPPED(&a6) && a6.s6_addr[12] == 127);
	return false;
}

/* Whether the cluster file lists host:port as a router. */
static bool
listed_router(const config *c, const target *t)
{
	for (size_t i = 0; i < c->n_routers; i++) {
		char port[8];
		snprintf(port, sizeof(port), "%d", c->routers[i].port);
		const char *h = c->routers[i].host;
		size_t hn = strlen(h);
		/* The file may bracket IPv6 hosts. */
		if (hn >= 2 && h[0] == '[' && h[hn - 1] == ']') {
			if (strlen(t->host) == hn - 2 &&
			    strncasecmp(h + 1, t->host, hn - 2) == 0 &&
			    strcmp(port, t->port) == 0)
				return true;
		} else if (strcasecmp(h, t->host) == 0 &&
		    strcmp(port, t->port) == 0) {
			return true;
		}
	}
	return false;
}

/*
 * Resolves the URL in o after checking it may be used: loopback, or a
 * router of the cluster file. Prints the reason and returns false if not.
 */
static bool
resolve(const char *url, const config *cfg, run_opts *o, target *t)
{
	if (!parse_url(url, t)) {
		fprintf(stderr, "kv-load: --url %s: expected "
		    "http://HOST:PORT\n", url);
		return false;
	}
	bool local = literal_loopback(t->host) ||
	    strcasecmp(t->host, "localhost") == 0;
	bool listed = cfg != NULL && listed_router(cfg, t);
	if (!local && !listed) {
		fprintf(stderr, "kv-load: refusing %s: only loopback "
		    "addresses (127.0.0.0/8, ::1, localhost) or a router "
		    "listed in the --config cluster file may be loaded\n",
		    url);
		return false;
	}
	struct addrinfo hints = { .ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_STREAM,
		.ai_flags = AI_NUMERICSERV };
	struct addrinfo *ai = NULL;
	int rc = getaddrinfo(t->host, t->port, &hints, &ai);
	if (rc != 0 || ai == NULL) {
		fprintf(stderr, "kv-load: cannot resolve %s: %s\n", t->host,
		    gai_strerror(rc));
		return false;
	}
	/* "localhost" must really be this machine. */
	if (!listed && !addr_is_loopback(ai->ai_addr)) {
		fprintf(stderr, "kv-load: refusing %s: %s is not a loopback "
		    "address here\n", url, t->host);
		freeaddrinfo(ai);
		return false;
	}
	memcpy(&o->addr, ai->ai_addr, ai->ai_addrlen);
	o->alen = ai->ai_addrlen;
	freeaddrinfo(ai);
	o->host = t->hostport;
	return true;
}

/* Lets N connections fit under the descriptor limit, if allowed to. */
static void
raise_fd_limit(size_t n)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= n + 64)
		return;
	rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > n + 64 ?
	    n + 64 : rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
}

/* The command line as given, before it is settled into a run_opts. */
typedef struct cli {
	const char *url, *config, *dist;
	const char *rate, *schedule, *ramp;
	uint64_t keys, shard_hot, serve_port;
	double hot_share, duration;
	bool have_duration, have_count, have_dist;
} cli;

/* Reads argv into *c and *o; returns -1, or the exit status to leave. */
static int
parse(int argc, char **argv, cli *c, run_opts *o)
{
	uint64_t u;
	double d;
	int opt;
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		switch (opt) {
		case OPT_URL:
			c->url = optarg;
			break;
		case OPT_CONFIG:
			c->config = optarg;
			break;
		case OPT_TABLE:
			if (!table_name_ok(optarg))
				return bad_usage("--table %s: 3 to 255 of "
				    "A-Z a-z 0-9 _ . -", optarg);
			o->table = optarg;
			break;
		case OPT_CREATE:
			o->create = true;
			break;
		case OPT_WORKLOAD:
			if (workload_parse(optarg, &o->kind) != KV_OK)
				return bad_usage("unknown --workload %s",
				    optarg);
			break;
		case OPT_KEYS:
			if (!parse_u64(optarg, 1, UINT64_C(1) << 40, &c->keys))
				return bad_usage("--keys %s: a number from 1",
				    optarg);
			break;
		case OPT_PREFIX:
			if (!prefix_ok(optarg))
				return bad_usage("--key-prefix %s: up to 64 "
				    "printable characters, no quote or "
				    "backslash", optarg);
			o->prefix = optarg;
			break;
		case OPT_DIST:
			c->dist = optarg;
			c->have_dist = true;
			break;
		case OPT_HOT_SHARE:
			if (!parse_double(optarg, 0, 1, &c->hot_share) ||
			    c->hot_share <= 0 || c->hot_share >= 1)
				return bad_usage("--hot-share %s: a share "
				    "between 0 and 1", optarg);
			break;
		case OPT_SHARD_HOT:
			if (!parse_u64(optarg, 1, 1000000, &c->shard_hot))
				return bad_usage("--shard-hot %s: 1 to "
				    "1000000 shards", optarg);
			break;
		case OPT_SEED:
			if (!parse_u64(optarg, 0, UINT64_MAX, &o->seed))
				return bad_usage("--seed %s: a number",
				    optarg);
			break;
		case OPT_ITEM_SIZE:
			if (!parse_u64(optarg, 0, 390000, &u))
				return bad_usage("--item-size %s: 0 to 390000 "
				    "bytes", optarg);
			o->item_size = (size_t) u;
			break;
		case OPT_LOAD:
			o->load = true;
			break;
		case OPT_CONNECTIONS:
			if (!parse_u64(optarg, 1, 100000, &u))
				return bad_usage("--connections %s: 1 to "
				    "100000", optarg);
			o->connections = (size_t) u;
			break;
		case OPT_DURATION:
			if (!parse_double(optarg, 0, 1e9, &c->duration))
				return bad_usage("--duration %s: seconds",
				    optarg);
			c->have_duration = true;
			break;
		case OPT_COUNT:
			if (!parse_u64(optarg, 1, UINT64_MAX, &o->count))
				return bad_usage("--count %s: a number from 1",
				    optarg);
			c->have_count = true;
			break;
		case OPT_RATE:
			c->rate = optarg;
			break;
		case OPT_SCHEDULE:
			c->schedule = optarg;
			break;
		case OPT_RAMP:
			c->ramp = optarg;
			break;
		case OPT_CSV:
			o->csv = optarg;
			break;
		case OPT_LATENCIES:
			o->lat = optarg;
			break;
		case OPT_INDEX_KEYS:
			o->index_keys = true;
			break;
		case OPT_COLLECTIONS:
			o->collections = true;
			break;
		case OPT_INDEX:
			/* Index names obey the rule of table names. */
			if (!table_name_ok(optarg))
				return bad_usage("--index %s: 3 to 255 of "
				    "A-Z a-z 0-9 _ . -", optarg);
			o->index = optarg;
			break;
		case OPT_JSON:
			o->json = optarg;
			break;
		case OPT_ALLOW_ERRORS:
			o->allow_errors = true;
			break;
		case OPT_SERVE_NULL:
			if (!parse_u64(optarg, 1, 65535, &c->serve_port))
				return bad_usage("--serve-null %s: a port",
				    optarg);
			break;
		case OPT_NO_CHECK:
			o->check = false;
			break;
		case OPT_TIMEOUT:
			if (!parse_double(optarg, 0.001, 3600, &d))
				return bad_usage("--timeout %s: seconds",
				    optarg);
			o->timeout_ns = llround(d * 1e9);
			break;
		case OPT_QUIET:
			o->quiet = true;
			break;
		case OPT_HELP:
			fputs(usage, stdout);
			return 0;
		default:
			fprintf(stderr, "\n%s", usage);
			return 2;
		}
	}
	if (optind < argc)
		return bad_usage("unexpected argument %s", argv[optind]);
	if (o->collections && o->kind != WORKLOAD_GET &&
	    o->kind != WORKLOAD_PUT && o->kind != WORKLOAD_QUERY)
		return bad_usage("--collections: only with --workload get, "
		    "put or query, not %s", workload_name(o->kind));
	if (o->collections && (o->index != NULL || o->index_keys))
		return bad_usage("--collections: not with %s", o->index_keys ?
		    "--index-keys" : "--index");
	if (o->index != NULL && o->kind != WORKLOAD_QUERY)
		return bad_usage("--index %s: only with --workload query",
		    o->index);
	return -1;
}

/*
 * Settles how the run is paced and how long it lasts: a count alone, or a
 * schedule alone, decides when it ends. Returns -1 or the exit status.
 */
static int
settle_pace(const cli *c, run_opts *o)
{
	if ((c->rate != NULL) + (c->schedule != NULL) + (c->ramp != NULL) > 1)
		return bad_usage("%s", "--rate, --schedule and --ramp "
		    "exclude each other");
	double duration = c->duration;
	if (!c->have_duration &&
	    (c->have_count || c->schedule != NULL || c->ramp != NULL))
		duration = INFINITY;
	o->duration = duration;
	if (c->rate != NULL) {
		/* A flat step as long as the run, for the step's rates. */
		double rate, secs = duration > 0 ? duration : 1;
		if (!parse_double(c->rate, 1e-3, 1e9, &rate) ||
		    pace_rate(&o->pace, rate, secs) != KV_OK)
			return bad_usage("--rate %s: requests per second",
			    c->rate);
		o->open = true;
	} else if (c->schedule != NULL) {
		if (pace_parse_schedule(&o->pace, c->schedule) != KV_OK)
			return bad_usage("--schedule %s: "
			    "RATE:SECS,RATE:SECS,...", c->schedule);
		o->open = true;
	} else if (c->ramp != NULL) {
		if (pace_parse_ramp(&o->pace, c->ramp) != KV_OK)
			return bad_usage("--ramp %s: FROM:TO:SECS", c->ramp);
		o->open = true;
	}
	return -1;
}

/* Settles the key distribution; returns -1 or the exit status. */
static int
settle_keys(const cli *c, run_opts *o)
{
	static char spec[64];
	if (c->hot_share > 0) {
		double theta;
		if (c->have_dist)
			return bad_usage("%s", "--hot-share and --dist "
			    "exclude each other");
		if (zipf_solve(c->keys, c->hot_share, &theta) != KV_OK) {
			snprintf(spec, sizeof(spec), "%g", c->hot_share);
			return bad_usage("--hot-share %s: needs a share above "
			    "1/keys and below 1", spec);
		}
		zipf_init(&o->dist, ZIPF_ZIPF, c->keys, theta);
		printf("kv-load: hot share %g over %" PRIu64
		    " keys: zipf theta = %.6f\n", c->hot_share, c->keys,
		    theta);
		snprintf(spec, sizeof(spec), "zipf:%.6f", theta);
		o->dist_spec = spec;
	} else {
		if (zipf_parse(&o->dist, c->dist, c->keys) != KV_OK)
			return bad_usage("--dist %s: uniform, zipf:THETA "
			    "(THETA > 0) or hot", c->dist);
		o->dist_spec = c->dist;
	}
	o->dist.shard_hot = (uint32_t) c->shard_hot;
	/* A transaction's actions are on distinct keys. */
	unsigned items = workload_txn_items(o->kind);
	if (items > workload_distinct_keys(&o->dist))
		return bad_usage("--workload %s: each transaction needs "
		    "distinct keys; raise --keys", workload_name(o->kind));
	return -1;
}

int
main(int argc, char **argv)
{
	run_opts o;
	memset(&o, 0, sizeof(o));
	o.table = "load";
	o.kind = WORKLOAD_GET;
	o.prefix = "k";
	o.item_size = 150;
	o.seed = 1;
	o.connections = 32;
	o.timeout_ns = 10 * 1000000000LL;
	o.check = true;
	cli c = { .dist = "uniform", .keys = 10000, .duration = 10 };
	int rc = parse(argc, argv, &c, &o);
	if (rc >= 0)
		return rc;

	if (c.serve_port != 0) {
		if (serve_null((int) c.serve_port) == KV_OK)
			return 0;
		fprintf(stderr, "kv-load: --serve-null %" PRIu64 ": %s\n",
		    c.serve_port, strerror(errno));
		return 1;
	}
	if ((rc = settle_pace(&c, &o)) >= 0 || (rc = settle_keys(&c, &o)) >= 0)
		return rc;

	config cfg, *cfgp = NULL;
	if (c.config != NULL) {
		char why[512];
		if (config_load(c.config, &cfg, why, sizeof(why)) != KV_OK) {
			fprintf(stderr, "kv-load: %s\n", why);
			return 2;
		}
		cfgp = &cfg;
	}
	char first_router[300];
	if (c.url == NULL && cfgp != NULL && cfg.n_routers > 0) {
		snprintf(first_router, sizeof(first_router), "http://%s:%d",
		    cfg.routers[0].host, cfg.routers[0].port);
		c.url = first_router;
	}
	o.url = c.url != NULL ? c.url : "http://127.0.0.1:8000";
	target t;
	if (!resolve(o.url, cfgp, &o, &t))
		return 2;
	raise_fd_limit(o.connections);
	return run_main(&o);
}
