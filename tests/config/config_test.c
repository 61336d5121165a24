/*
 * config_test.c — the cluster-file parser (cluster-config/config.c):
 * nodes and routers with bus= addresses, the default bus addresses
 * derived from a node's URL (ipc and tcp, IPv6 in brackets), routers
 * sharing one HTTP address, and the files it must refuse — malformed or
 * repeated options, IPv6 without brackets, and two uses of one address,
 * named both; the split settings (their defaults, limits and refusals,
 * in the file and through config_split_option). Files are written into
 * a fresh temporary folder.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"

static char dir[64];
static char path[128];

static void
setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/kvconfig.XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/cluster.conf", dir);
}

static void
teardown(void)
{
	unlink(path);
	rmdir(dir);
}

TestSuite(config, .init = setup, .fini = teardown);

/*
 * load writes text into the cluster file and loads it. "@" in text
 * stands for the temporary folder, so that ipc paths are the test's own.
 */
static kv_err
load(const char *text, config *c, char *why, size_t whylen)
{
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	for (const char *p = text; *p != '\0'; p++) {
		if (*p == '@')
			fputs(dir, f);
		else
			fputc(*p, f);
	}
	cr_assert_eq(fclose(f), 0);
	why[0] = '\0';
	return config_load(path, c, why, whylen);
}

static config C; /* 40 KB: not on the stack */

static void
expect_loads(const char *text)
{
	char why[512];
	kv_err rv = load(text, &C, why, sizeof(why));
	cr_assert_eq(rv, KV_OK, "%s: %s", kv_err_name(rv), why);
}

/* ---- files that load ---- */

Test(config, nodes_and_routers_with_bus_addresses)
{
	char want[256];
	expect_loads(
	    "# a comment line\n"
	    "partitions 8\n"
	    "node ipc://@/n0.ipc @/data0 127.0.0.1:9100 bus=ipc://@/n0bus\n"
	    "node tcp://127.0.0.1:7000 @/data1 bus=tcp://127.0.0.1:7100\n"
	    "node tcp://127.0.0.1:7010 @/data2 bus=ipc://@/n2 [::1]:9102\n"
	    "router 127.0.0.1:8000 bus=ipc://@/r0   # trailing comment\n"
	    "router 127.0.0.1:8001 bus=tcp://[::1]:8100\n"
	    "router 127.0.0.1:8002\n");
	cr_assert_eq(C.partitions, 8);
	cr_assert_eq(C.n_nodes, 3);
	cr_assert_eq(C.n_routers, 3);

	snprintf(want, sizeof(want), "ipc://%s/n0.ipc", dir);
	cr_assert_str_eq(C.nodes[0].url, want);
	snprintf(want, sizeof(want), "%s/data0", dir);
	cr_assert_str_eq(C.nodes[0].data, want);
	cr_assert_str_eq(C.nodes[0].metrics_host, "127.0.0.1");
	cr_assert_eq(C.nodes[0].metrics_port, 9100);
	snprintf(want, sizeof(want), "ipc://%s/n0bus", dir);
	cr_assert_str_eq(C.nodes[0].bus, want);

	cr_assert_str_eq(C.nodes[1].bus, "tcp://127.0.0.1:7100");
	cr_assert_str_eq(C.nodes[1].metrics_host, "", "no /metrics");

	/* bus= before the metrics address works too. */
	snprintf(want, sizeof(want), "ipc://%s/n2", dir);
	cr_assert_str_eq(C.nodes[2].bus, want);
	cr_assert_str_eq(C.nodes[2].metrics_host, "::1");
	cr_assert_eq(C.nodes[2].metrics_port, 9102);

	cr_assert_str_eq(C.routers[0].host, "127.0.0.1");
	cr_assert_eq(C.routers[0].port, 8000);
	snprintf(want, sizeof(want), "ipc://%s/r0", dir);
	cr_assert_str_eq(C.routers[0].bus, want);
	cr_assert_str_eq(C.routers[1].bus, "tcp://[::1]:8100");
	cr_assert_str_eq(C.routers[2].bus, "", "a router without bus=");
}

Test(config, node_bus_defaults_to_its_url_one_port_up_for_tcp)
{
	char want[256];
	expect_loads(
	    "node ipc://@/n0.ipc @/d0\n"
	    "node tcp://127.0.0.1:7000 @/d1\n"
	    "node tcp://[::1]:7100 @/d2\n"
	    "node tcp://localhost:7200 @/d3 127.0.0.1:9000\n");
	snprintf(want, sizeof(want), "ipc://%s/n0.ipc", dir);
	cr_assert_str_eq(C.nodes[0].bus, want);
	cr_assert_str_eq(C.nodes[1].bus, "tcp://127.0.0.1:7001");
	cr_assert_str_eq(C.nodes[2].bus, "tcp://[::1]:7101");
	cr_assert_str_eq(C.nodes[3].bus, "tcp://localhost:7201");

	/* And the addresses derived from them. */
	char url[300];
	cr_assert_eq(config_bus_url(C.nodes[0].bus, CONFIG_BUS_FEED, url,
	    sizeof(url)), KV_OK);
	snprintf(want, sizeof(want), "ipc://%s/n0.ipc.feed", dir);
	cr_assert_str_eq(url, want);
	cr_assert_eq(config_bus_url(C.nodes[2].bus, CONFIG_BUS_PEER, url,
	    sizeof(url)), KV_OK);
	cr_assert_str_eq(url, "tcp://[::1]:7101");
}

Test(config, ipv6_router_keeps_its_host_without_brackets)
{
	expect_loads(
	    "node ipc://@/n0 @/d0\n"
	    "router [::1]:8000\n"
	    "router [fe80::1%eth0]:8001 bus=ipc://@/r1\n");
	cr_assert_str_eq(C.routers[0].host, "::1");
	cr_assert_eq(C.routers[0].port, 8000);
	cr_assert_str_eq(C.routers[1].host, "fe80::1%eth0");
	cr_assert_eq(C.routers[1].port, 8001);
}

Test(config, routers_may_share_one_http_address)
{
	expect_loads(
	    "node ipc://@/n0 @/d0\n"
	    "router 127.0.0.1:8000 bus=ipc://@/r0\n"
	    "router 127.0.0.1:8000 bus=ipc://@/r1\n"
	    "router 127.0.0.1:8000\n");
	cr_assert_eq(C.n_routers, 3);
	for (size_t i = 0; i < 3; i++) {
		cr_assert_str_eq(C.routers[i].host, "127.0.0.1");
		cr_assert_eq(C.routers[i].port, 8000);
	}
}

Test(config, settings_have_defaults)
{
	expect_loads("node ipc://@/n0 @/d0\n");
	cr_assert_eq(C.partitions, 4);
	cr_assert_eq(C.partition_rcu, CONFIG_PARTITION_RCU);
	cr_assert_eq(C.partition_wcu, CONFIG_PARTITION_WCU);
	cr_assert_eq(C.burst_seconds, CONFIG_BURST_SECONDS);
	cr_assert_eq(C.n_routers, 0);
}

/*
 * find_local_conf finds cluster-config/local.conf: beside this file's
 * sources when __FILE__ is absolute (or relative to where ctest runs the
 * test), else in a folder above the test's executable (the build folders
 * live in the repository).
 */
static bool
find_local_conf(char *out, size_t outlen)
{
	const char *slash = strrchr(__FILE__, '/');
	if (slash != NULL) {
		snprintf(out, outlen, "%.*s/../../cluster-config/local.conf",
		    (int) (slash - __FILE__), __FILE__);
		if (access(out, R_OK) == 0)
			return true;
	}
	char exe[512];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return false;
	exe[n] = '\0';
	char *end;
	while ((end = strrchr(exe, '/')) != NULL && end != exe) {
		*end = '\0';
		snprintf(out, outlen, "%s/cluster-config/local.conf", exe);
		if (access(out, R_OK) == 0)
			return true;
	}
	return false;
}

/* A node line may end with `standby`, with or without its options. */
Test(config, standby_nodes)
{
	char why[256];
	const char *path = "/tmp/kv-config-standby.conf";
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs("node ipc:///tmp/a a\n"
	    "node ipc:///tmp/b b standby\n"
	    "node ipc:///tmp/c c 127.0.0.1:9100 bus=ipc:///tmp/cc standby\n"
	    "node ipc:///tmp/d d standby 127.0.0.1:9101\n", f);
	fclose(f);
	kv_err rv = config_load(path, &C, why, sizeof(why));
	cr_assert_eq(rv, KV_OK, "%s", why);
	cr_assert_eq(C.n_nodes, 4);
	cr_assert(!C.nodes[0].standby);
	cr_assert(C.nodes[1].standby && C.nodes[2].standby &&
	    C.nodes[3].standby);
	cr_assert_str_eq(C.nodes[2].bus, "ipc:///tmp/cc");
	cr_assert_eq(C.nodes[3].metrics_port, 9101);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs("node ipc:///tmp/a a standby standby\n", f);
	fclose(f);
	cr_assert_eq(config_load(path, &C, why, sizeof(why)), KV_EINVAL);
	unlink(path);
}

/* The file ./kv up starts. */
Test(config, shipped_local_conf_loads)
{
	char conf[1024], why[512];
	cr_assert(find_local_conf(conf, sizeof(conf)),
	    "cluster-config/local.conf not found");
	kv_err rv = config_load(conf, &C, why, sizeof(why));
	cr_assert_eq(rv, KV_OK, "%s: %s", kv_err_name(rv), why);
	cr_assert_eq(C.n_nodes, 4);
	cr_assert(!C.nodes[0].standby && !C.nodes[2].standby);
	cr_assert(C.nodes[3].standby, "node 3 waits for ./kv node add");
	cr_assert_eq(C.n_routers, 2);
	cr_assert_str_eq(C.nodes[0].bus, C.nodes[0].url);
	cr_assert_str_eq(C.routers[0].bus, "ipc://.kv/run/router0");
	cr_assert_str_eq(C.routers[1].bus, "ipc://.kv/run/router1");
}

Test(config, missing_file_is_io)
{
	char why[256];
	kv_err rv = config_load("/nonexistent/kv/cluster.conf", &C, why,
	    sizeof(why));
	cr_assert_eq(rv, KV_IO);
	cr_assert_not_null(strstr(why, "/nonexistent/kv/cluster.conf"));
}

/* ---- files that are refused ---- */

/*
 * Parameters are copied into the test's process (criterion runs each in
 * a process of its own), so they hold arrays, not pointers.
 */
struct bad_file {
	char text[200];
	char needle1[40]; /* both must be in the reason */
	char needle2[40];
};

ParameterizedTestParameters(config, malformed_file_is_refused)
{
	static struct bad_file cases[] = {
		/* IPv6 needs its brackets. */
		{ "node ipc://@/n0 @/d\nrouter ::1:8000\n", ":2:",
		    "cannot understand" },
		{ "node tcp://::1:7000 @/d\n", ":1:", "cannot understand" },
		{ "node ipc://@/n0 @/d ::1:9100\n", ":1:",
		    "cannot understand" },
		{ "node ipc://@/n0 @/d\nrouter [::1]8000\n", ":2:",
		    "cannot understand" },
		{ "node ipc://@/n0 @/d\nrouter []:8000\n", ":2:",
		    "cannot understand" },
		{ "node ipc://@/n0 @/d\nrouter [::1:8000\n", ":2:",
		    "cannot understand" },
		/* Malformed bus=. */
		{ "node ipc://@/n0 @/d bus=\n", ":1:", "cannot understand" },
		{ "node ipc://@/n0 @/d bus=ipc://\n", ":1:",
		    "cannot understand" },
		{ "node ipc://@/n0 @/d bus=http://h:1\n", ":1:",
		    "cannot understand" },
		{ "node ipc://@/n0 @/d bus=tcp://h\n", ":1:",
		    "cannot understand" },
		{ "node ipc://@/n0 @/d bus=tcp://h:0\n", ":1:",
		    "cannot understand" },
		{ "node ipc://@/n0 @/d bus=tcp://h:x\n", ":1:",
		    "cannot understand" },
		{ "node ipc://@/n0 @/d bus=tcp://::1:7000\n", ":1:",
		    "cannot understand" },
		{ "node ipc://@/n0 @/d bus=tcp://h:65534\n", ":1:",
		    "cannot understand" }, /* its feed would be 65536 */
		{ "node ipc://@/n0 @/d\nrouter 127.0.0.1:8000 bus=\n", ":2:",
		    "cannot understand" },
		{ "node ipc://@/n0 @/d\nrouter 127.0.0.1:8000 bus=udp://h:1\n",
		    ":2:", "cannot understand" },
		{ "node ipc://@/n0 @/d\nrouter 127.0.0.1:8000 "
		    "127.0.0.1:9000\n", ":2:", "cannot understand" },
		/* Repeated options. */
		{ "node ipc://@/n0 @/d bus=ipc://@/a bus=ipc://@/b\n", ":1:",
		    "cannot understand" },
		{ "node ipc://@/n0 @/d\nrouter 127.0.0.1:8000 bus=ipc://@/a "
		    "bus=ipc://@/b\n", ":2:", "cannot understand" },
		{ "node ipc://@/n0 @/d 127.0.0.1:9100 127.0.0.1:9101\n", ":1:",
		    "cannot understand" },
		{ "node ipc://@/n0 @/d 127.0.0.1:9100 bus=ipc://@/a "
		    "127.0.0.1:9101\n", ":1:", "cannot understand" },
		/* A node URL with no room for its default bus ports. */
		{ "node tcp://127.0.0.1:65535 @/d\n", ":1:",
		    "cannot understand" },
		{ "node ipc://@/n0 @/d\nnode tcp://127.0.0.1:x @/d\n", ":2:",
		    "cannot understand" },
		{ "node http://127.0.0.1:7000 @/d\n", ":1:",
		    "cannot understand" },
		/* Everything else. */
		{ "node ipc://@/n0\n", ":1:", "cannot understand" },
		{ "router 127.0.0.1:8000\n", "no node lines", "cluster.conf" },
		{ "", "no node lines", "cluster.conf" },
		{ "node ipc://@/n0 @/d\nrouter 127.0.0.1:0\n", ":2:",
		    "cannot understand" },
		{ "node ipc://@/n0 @/d\nrouter 127.0.0.1:65536\n", ":2:",
		    "cannot understand" },
		{ "node ipc://@/n0 @/d\nrouter 127.0.0.1\n", ":2:",
		    "cannot understand" },
		{ "node ipc://@/n0 @/d\nnodes 3\n", ":2:",
		    "cannot understand" },
	};
	return cr_make_param_array(struct bad_file, cases,
	    sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct bad_file *b, config, malformed_file_is_refused)
{
	char why[512];
	kv_err rv = load(b->text, &C, why, sizeof(why));
	cr_assert_eq(rv, KV_EINVAL, "%s: %s for\n%s", kv_err_name(rv), why,
	    b->text);
	cr_assert_not_null(strstr(why, b->needle1), "\"%s\" not in: %s",
	    b->needle1, why);
	cr_assert_not_null(strstr(why, b->needle2), "\"%s\" not in: %s",
	    b->needle2, why);
}

ParameterizedTestParameters(config, two_uses_of_one_address_are_refused)
{
	static struct bad_file cases[] = {
		/* Node 0's default nng ports are 7001..7003. */
		{ "node tcp://127.0.0.1:7000 @/d0\n"
		    "node tcp://127.0.0.1:7001 @/d1\n",
		    "node 0's peer messages", "node 1's requests" },
		{ "node tcp://127.0.0.1:7000 @/d0\n"
		    "node tcp://127.0.0.1:7003 @/d1\n",
		    "node 0's catalog feed", "node 1's requests" },
		{ "node tcp://[::1]:7000 @/d0\n"
		    "node tcp://[::1]:7002 @/d1\n",
		    "tcp://[::1]:7002", "node 1's requests" },
		/* Node 1's own nng ports reach back onto node 0. */
		{ "node tcp://127.0.0.1:7002 @/d0\n"
		    "node tcp://127.0.0.1:7000 @/d1\n",
		    "node 0's requests", "node 1's surveys" },
		/* A bus= base that is the node's own request port. */
		{ "node tcp://127.0.0.1:7000 @/d0 bus=tcp://127.0.0.1:7000\n",
		    "node 0's requests", "node 0's peer messages" },
		{ "node ipc://@/n0 @/d0 bus=ipc://@/b\n"
		    "node ipc://@/n1 @/d1 bus=ipc://@/b\n",
		    "node 0's peer messages", "node 1's peer messages" },
		{ "node ipc://@/n0 @/d0\nnode ipc://@/n0 @/d1\n",
		    "node 0's requests", "node 1's requests" },
		/* Routers. */
		{ "node ipc://@/n0 @/d0\nrouter 127.0.0.1:8000 bus=ipc://@/n0\n",
		    "node 0's surveys", "router 0's surveys" },
		{ "node ipc://@/n0 @/d0\n"
		    "router 127.0.0.1:8000 bus=ipc://@/r\n"
		    "router 127.0.0.1:8001 bus=ipc://@/r\n",
		    "router 0's surveys", "router 1's surveys" },
		{ "node tcp://127.0.0.1:8000 @/d0\nrouter 127.0.0.1:8000\n",
		    "node 0's requests", "router 0's HTTP" },
		{ "node tcp://127.0.0.1:7000 @/d0\nrouter 127.0.0.1:7002\n",
		    "node 0's surveys", "router 0's HTTP" },
		{ "node ipc://@/n0 @/d0\n"
		    "router 127.0.0.1:8000 bus=tcp://127.0.0.1:7999\n",
		    "router 0's HTTP", "router 0's surveys" },
		{ "node ipc://@/n0 @/d0\n"
		    "router 127.0.0.1:8000\n"
		    "router 127.0.0.1:9000 bus=tcp://127.0.0.1:7999\n",
		    "router 0's HTTP", "router 1's surveys" },
	};
	return cr_make_param_array(struct bad_file, cases,
	    sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct bad_file *b, config,
    two_uses_of_one_address_are_refused)
{
	char why[512];
	kv_err rv = load(b->text, &C, why, sizeof(why));
	cr_assert_eq(rv, KV_EINVAL, "%s for\n%s", kv_err_name(rv), b->text);
	cr_assert_not_null(strstr(why, b->needle1), "\"%s\" not in: %s",
	    b->needle1, why);
	cr_assert_not_null(strstr(why, b->needle2), "\"%s\" not in: %s",
	    b->needle2, why);
	cr_assert_not_null(strstr(why, " is both "), "%s", why);
}

/*
 * Three bugs these tests found in config.c as of a18c79a (see each
 * comment), fixed since (bd481b4); they stay as regression tests.
 */

/*
 * "ipc://" alone is no address: config_bus_url refuses it as a base, but
 * default_bus copied a node's ipc URL without that check, and
 * check_addresses then ignored config_bus_url's error and recorded its
 * uninitialised `url` buffer: the file was refused with stack garbage as
 * the reason ("<garbage> is both node 0's peer messages and node 0's
 * surveys"), and the read of the uninitialised buffer is undefined.
 */
Test(config, node_url_ipc_without_a_path_is_refused_by_line)
{
	char why[512];
	kv_err rv = load("node ipc:// @/d\n", &C, why, sizeof(why));
	cr_assert_eq(rv, KV_EINVAL, "%s", kv_err_name(rv));
	cr_assert_not_null(strstr(why, ":1: cannot understand"),
	    "the reason is: %s", why);
}

/*
 * Node 0 at tcp://H:65533 has its default bus base at 65534 and its
 * catalog feed at 65536, which cannot be. bus=tcp://H:65534 is refused
 * as a bad line (bus_word probes the feed address), but the default was
 * not checked: check_addresses ignored config_bus_url's KV_EINVAL for
 * the feed and recorded the previous address again, so the file was
 * refused for a collision that does not exist ("tcp://127.0.0.1:65535 is
 * both node 0's surveys and node 0's catalog feed").
 */
Test(config, node0_feed_port_past_65535_is_refused_by_line)
{
	char why[512];
	kv_err rv = load("node tcp://127.0.0.1:65533 @/d\n", &C, why,
	    sizeof(why));
	cr_assert_eq(rv, KV_EINVAL, "%s", kv_err_name(rv));
	cr_assert_not_null(strstr(why, ":1: cannot understand"),
	    "the reason is: %s", why);
}

/*
 * Routers may share their HTTP address with each other's HTTP address,
 * but check_addresses's "shared" test matched any earlier use by a
 * router, surveys included: router 1's HTTP on router 0's survey
 * address (tcp://127.0.0.1:7999 + 1 = 8000) was accepted, and one of the
 * two binds would fail at start.
 */
Test(config, router_http_on_another_routers_survey_address_is_refused)
{
	char why[512];
	kv_err rv = load(
	    "node ipc://@/n0 @/d0\n"
	    "router 127.0.0.1:9000 bus=tcp://127.0.0.1:7999\n"
	    "router 127.0.0.1:8000\n", &C, why, sizeof(why));
	cr_assert_eq(rv, KV_EINVAL, "%s: accepted", kv_err_name(rv));
	cr_assert_not_null(strstr(why, "router 0's surveys"), "%s", why);
	cr_assert_not_null(strstr(why, "router 1's HTTP"), "%s", why);
}

/* ---- config_bus_url, config_host_port ---- */

struct bus_case {
	char base[40];
	config_bus which;
	char want[40]; /* "": KV_EINVAL */
};

ParameterizedTestParameters(config, bus_url_derives_the_addresses)
{
	static struct bus_case cases[] = {
		{ "ipc://a/b", CONFIG_BUS_PEER, "ipc://a/b.peer" },
		{ "ipc://a/b", CONFIG_BUS_SURVEY, "ipc://a/b.survey" },
		{ "ipc://a/b", CONFIG_BUS_FEED, "ipc://a/b.feed" },
		{ "ipc:///abs/x.ipc", CONFIG_BUS_FEED, "ipc:///abs/x.ipc.feed" },
		{ "tcp://127.0.0.1:7000", CONFIG_BUS_PEER,
		    "tcp://127.0.0.1:7000" },
		{ "tcp://127.0.0.1:7000", CONFIG_BUS_SURVEY,
		    "tcp://127.0.0.1:7001" },
		{ "tcp://127.0.0.1:7000", CONFIG_BUS_FEED,
		    "tcp://127.0.0.1:7002" },
		{ "tcp://[::1]:7000", CONFIG_BUS_PEER, "tcp://[::1]:7000" },
		{ "tcp://[::1]:7000", CONFIG_BUS_SURVEY, "tcp://[::1]:7001" },
		{ "tcp://[::1]:7000", CONFIG_BUS_FEED, "tcp://[::1]:7002" },
		{ "tcp://host.example:1", CONFIG_BUS_FEED,
		    "tcp://host.example:3" },
		{ "tcp://h:65535", CONFIG_BUS_PEER, "tcp://h:65535" },
		{ "tcp://h:65535", CONFIG_BUS_SURVEY, "" },
		{ "tcp://h:65534", CONFIG_BUS_FEED, "" },
		{ "", CONFIG_BUS_PEER, "" },
		{ "ipc://", CONFIG_BUS_PEER, "" },
		{ "inproc://x", CONFIG_BUS_PEER, "" },
		{ "http://h:80", CONFIG_BUS_PEER, "" },
		{ "tcp://", CONFIG_BUS_PEER, "" },
		{ "tcp://h", CONFIG_BUS_PEER, "" },
		{ "tcp://h:", CONFIG_BUS_PEER, "" },
		{ "tcp://:7000", CONFIG_BUS_PEER, "" },
		{ "tcp://h:0", CONFIG_BUS_PEER, "" },
		{ "tcp://h:-1", CONFIG_BUS_PEER, "" },
		{ "tcp://h:70000", CONFIG_BUS_PEER, "" },
		{ "tcp://h:7000x", CONFIG_BUS_PEER, "" },
		{ "tcp://::1:7000", CONFIG_BUS_PEER, "" },
		{ "tcp://[::1]7000", CONFIG_BUS_PEER, "" },
	};
	return cr_make_param_array(struct bus_case, cases,
	    sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct bus_case *c, config, bus_url_derives_the_addresses)
{
	char out[300];
	strcpy(out, "untouched");
	kv_err rv = config_bus_url(c->base, c->which, out, sizeof(out));
	if (c->want[0] == '\0') {
		cr_assert_eq(rv, KV_EINVAL, "%s (%d) gave %s", c->base,
		    c->which, out);
		return;
	}
	cr_assert_eq(rv, KV_OK, "%s (%d): %s", c->base, c->which,
	    kv_err_name(rv));
	cr_assert_str_eq(out, c->want);
}

Test(config, bus_url_refuses_a_short_buffer)
{
	char out[64];
	/* "ipc://a/b.survey" is 16 characters and its NUL. */
	cr_assert_eq(config_bus_url("ipc://a/b", CONFIG_BUS_SURVEY, out, 17),
	    KV_OK);
	cr_assert_str_eq(out, "ipc://a/b.survey");
	cr_assert_eq(config_bus_url("ipc://a/b", CONFIG_BUS_SURVEY, out, 16),
	    KV_EINVAL);
	cr_assert_eq(config_bus_url("tcp://[::1]:7000", CONFIG_BUS_FEED, out,
	    8), KV_EINVAL);
}

struct hp_case {
	char host[40];
	int port;
	char want[40];
};

ParameterizedTestParameters(config, host_port_brackets_ipv6)
{
	static struct hp_case cases[] = {
		{ "127.0.0.1", 8000, "127.0.0.1:8000" },
		{ "localhost", 1, "localhost:1" },
		{ "::1", 8000, "[::1]:8000" },
		{ "fe80::1%eth0", 65535, "[fe80::1%eth0]:65535" },
		{ "", 80, ":80" },
	};
	return cr_make_param_array(struct hp_case, cases,
	    sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct hp_case *c, config, host_port_brackets_ipv6)
{
	char out[64];
	config_host_port(c->host, c->port, out, sizeof(out));
	cr_assert_str_eq(out, c->want);
}

Test(config, host_port_truncates_within_the_buffer)
{
	char out[8];
	memset(out, 'z', sizeof(out));
	config_host_port("::1", 8000, out, 6);
	cr_assert_str_eq(out, "[::1]");
	cr_assert_eq(out[6], 'z', "wrote past its buffer");
}

/* Every router line and node line round-trips through host_port. */
Test(config, router_host_and_port_rebuild_its_address)
{
	char hp[160];
	expect_loads(
	    "node ipc://@/n0 @/d0\n"
	    "router [::1]:8000\n"
	    "router 10.0.0.1:8001\n");
	config_host_port(C.routers[0].host, C.routers[0].port, hp,
	    sizeof(hp));
	cr_assert_str_eq(hp, "[::1]:8000");
	config_host_port(C.routers[1].host, C.routers[1].port, hp,
	    sizeof(hp));
	cr_assert_str_eq(hp, "10.0.0.1:8001");
}

/* ---- split settings (split-after-seconds, -threshold, -size-mb) ---- */

Test(config, split_settings_have_defaults)
{
	expect_loads("node ipc://@/n0 @/d0\n");
	cr_assert_eq(C.split_after_s, CONFIG_SPLIT_AFTER_S);
	cr_assert_float_eq(C.split_threshold, CONFIG_SPLIT_THRESHOLD, 1e-12);
	cr_assert_eq(C.split_size_bytes, (uint64_t) CONFIG_SPLIT_SIZE_MB << 20);
}

Test(config, split_settings_load_from_the_file)
{
	expect_loads(
	    "split-after-seconds 60\n"
	    "split-threshold 0.55   # of the ceiling\n"
	    "split-size-mb 64\n"
	    "node ipc://@/n0 @/d0\n");
	cr_assert_eq(C.split_after_s, 60);
	cr_assert_float_eq(C.split_threshold, 0.55, 1e-12);
	cr_assert_eq(C.split_size_bytes, 64ULL << 20, "megabytes, in bytes");
}

Test(config, split_settings_at_their_limits_load)
{
	expect_loads(
	    "split-after-seconds 86400\n"
	    "split-threshold 1\n"
	    "split-size-mb 1073741824\n"
	    "node ipc://@/n0 @/d0\n");
	cr_assert_eq(C.split_after_s, 86400);
	cr_assert_float_eq(C.split_threshold, 1.0, 1e-12);
	cr_assert_eq(C.split_size_bytes, 1ULL << 50);
}

Test(config, split_settings_of_zero_turn_splits_off)
{
	expect_loads(
	    "split-after-seconds 0\n"
	    "split-size-mb 0\n"
	    "split-threshold 0.001\n"
	    "node ipc://@/n0 @/d0\n");
	cr_assert_eq(C.split_after_s, 0);
	cr_assert_eq(C.split_size_bytes, 0);
	cr_assert_float_eq(C.split_threshold, 0.001, 1e-12);
}

Test(config, ttl_sweep_period_has_a_default_and_loads)
{
	expect_loads("node ipc://@/n0 @/d0\n");
	cr_assert_eq(C.ttl_sweep_ms, CONFIG_TTL_SWEEP_MS);
	expect_loads("ttl-sweep-ms 250\nnode ipc://@/n0 @/d0\n");
	cr_assert_eq(C.ttl_sweep_ms, 250);
	config c;
	cr_assert_eq(config_split_option(&c, "--ttl-sweep-ms", "9"), KV_EINVAL,
	    "below 10 ms");
	cr_assert_eq(config_split_option(&c, "--ttl-sweep-ms", "40"), KV_OK);
	cr_assert_eq(c.ttl_sweep_ms, 40);
}

Test(config, memory_budget_has_a_default_and_loads)
{
	expect_loads("node ipc://@/n0 @/d0\n");
	cr_assert_eq(C.memory_mb, CONFIG_MEMORY_MB);
	expect_loads("memory-mb 1024\nnode ipc://@/n0 @/d0\n");
	cr_assert_eq(C.memory_mb, 1024);
	config c;
	cr_assert_eq(config_split_option(&c, "--memory-mb", "31"), KV_EINVAL,
	    "below 32 MB");
	cr_assert_eq(config_split_option(&c, "--memory-mb", "x"), KV_EINVAL);
	cr_assert_eq(config_split_option(&c, "--memory-mb", "64"), KV_OK);
	cr_assert_eq(c.memory_mb, 64);
}

Test(config, split_setting_given_twice_keeps_the_last)
{
	expect_loads(
	    "split-after-seconds 60\n"
	    "split-after-seconds 90\n"
	    "node ipc://@/n0 @/d0\n");
	cr_assert_eq(C.split_after_s, 90);
}

ParameterizedTestParameters(config, bad_split_setting_is_refused_by_line)
{
	static struct bad_file cases[] = {
		{ "node ipc://@/n0 @/d\nsplit-after-seconds 86401\n", ":2:",
		    "cannot understand" },
		{ "node ipc://@/n0 @/d\nsplit-after-seconds -1\n", ":2:",
		    "cannot understand" },
		{ "node ipc://@/n0 @/d\nsplit-after-seconds 1.5\n", ":2:",
		    "cannot understand" },
		{ "node ipc://@/n0 @/d\nsplit-after-seconds ten\n", ":2:",
		    "cannot understand" },
		{ "node ipc://@/n0 @/d\n"
		    "split-after-seconds 99999999999999999999\n", ":2:",
		    "cannot understand" },
		{ "node ipc://@/n0 @/d\nsplit-after-seconds\n", ":2:",
		    "cannot understand" },
		{ "node ipc://@/n0 @/d\nsplit-after-seconds 5 6\n", ":2:",
		    "cannot understand" },
		{ "node ipc://@/n0 @/d\nsplit-threshold 0\n", ":2:",
		    "cannot understand" },
		{ "node ipc://@/n0 @/d\nsplit-threshold -0.5\n", ":2:",
		    "cannot understand" },
		{ "node ipc://@/n0 @/d\nsplit-threshold 1.01\n", ":2:",
		    "cannot understand" },
		{ "node ipc://@/n0 @/d\nsplit-threshold 80%\n", ":2:",
		    "cannot understand" },
		{ "node ipc://@/n0 @/d\nsplit-threshold nan\n", ":2:",
		    "cannot understand" },
		{ "node ipc://@/n0 @/d\nsplit-threshold inf\n", ":2:",
		    "cannot understand" },
		{ "node ipc://@/n0 @/d\nsplit-threshold high\n", ":2:",
		    "cannot understand" },
		{ "node ipc://@/n0 @/d\nsplit-size-mb -1\n", ":2:",
		    "cannot understand" },
		{ "node ipc://@/n0 @/d\nsplit-size-mb 1e3\n", ":2:",
		    "cannot understand" },
		{ "node ipc://@/n0 @/d\nsplit-size-mb 10G\n", ":2:",
		    "cannot understand" },
		/* 2^30 MB + 1: past what fits in bytes with room to spare. */
		{ "node ipc://@/n0 @/d\nsplit-size-mb 1073741825\n", ":2:",
		    "cannot understand" },
		{ "node ipc://@/n0 @/d\nsplit-bogus 1\n", ":2:",
		    "cannot understand" },
		{ "node ipc://@/n0 @/d\n--split-threshold 0.5\n", ":2:",
		    "cannot understand" }, /* dashes are for command lines */
	};
	return cr_make_param_array(struct bad_file, cases,
	    sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct bad_file *b, config,
    bad_split_setting_is_refused_by_line)
{
	char why[512];
	kv_err rv = load(b->text, &C, why, sizeof(why));
	cr_assert_eq(rv, KV_EINVAL, "%s: %s for\n%s", kv_err_name(rv), why,
	    b->text);
	cr_assert_not_null(strstr(why, b->needle1), "\"%s\" not in: %s",
	    b->needle1, why);
	cr_assert_not_null(strstr(why, b->needle2), "\"%s\" not in: %s",
	    b->needle2, why);
}

/* config_split_option, as the nodes' command lines use it. */

Test(config, split_option_takes_keys_with_and_without_dashes)
{
	config c;
	memset(&c, 0, sizeof(c));
	cr_assert_eq(config_split_option(&c, "split-after-seconds", "120"),
	    KV_OK);
	cr_assert_eq(c.split_after_s, 120);
	cr_assert_eq(config_split_option(&c, "--split-threshold", "0.25"),
	    KV_OK);
	cr_assert_float_eq(c.split_threshold, 0.25, 1e-12);
	cr_assert_eq(config_split_option(&c, "-split-size-mb", "3"), KV_OK);
	cr_assert_eq(c.split_size_bytes, 3ULL << 20);
	cr_assert_eq(config_split_option(&c, "--split-after-seconds", "0"),
	    KV_OK);
	cr_assert_eq(c.split_after_s, 0);
}

Test(config, split_option_refuses_other_keys)
{
	config c;
	memset(&c, 0, sizeof(c));
	cr_assert_eq(config_split_option(&c, "partitions", "4"), KV_EINVAL);
	cr_assert_eq(config_split_option(&c, "--split", "4"), KV_EINVAL);
	cr_assert_eq(config_split_option(&c, "split-after", "4"), KV_EINVAL);
	cr_assert_eq(config_split_option(&c, "split-after-seconds-x", "4"),
	    KV_EINVAL);
	cr_assert_eq(config_split_option(&c, "", "4"), KV_EINVAL);
	cr_assert_eq(config_split_option(&c, "--", "4"), KV_EINVAL);
	cr_assert_eq(c.split_after_s, 0);
	cr_assert_eq(c.split_size_bytes, 0);
}

struct split_bad {
	char key[32];
	char val[32];
};

ParameterizedTestParameters(config, split_option_refuses_bad_values)
{
	static struct split_bad cases[] = {
		{ "split-after-seconds", "86401" },
		{ "split-after-seconds", "" },
		{ "split-after-seconds", "-5" },
		{ "split-after-seconds", "+5" },
		{ "split-after-seconds", " 5" },
		{ "split-after-seconds", "5s" },
		{ "split-after-seconds", "18446744073709551616" },
		{ "--split-threshold", "0" },
		{ "--split-threshold", "0.0" },
		{ "--split-threshold", "-1" },
		{ "--split-threshold", "1.0000001" },
		{ "--split-threshold", "" },
		{ "--split-threshold", "0.5x" },
		{ "--split-threshold", "NaN" },
		{ "--split-threshold", "-inf" },
		{ "--split-size-mb", "1073741825" },
		{ "--split-size-mb", "" },
		{ "--split-size-mb", "-1" },
		{ "--split-size-mb", "0.5" },
	};
	return cr_make_param_array(struct split_bad, cases,
	    sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct split_bad *b, config,
    split_option_refuses_bad_values)
{
	config c;
	memset(&c, 0, sizeof(c));
	c.split_after_s = 7;
	c.split_threshold = 0.7;
	c.split_size_bytes = 7;
	cr_assert_eq(config_split_option(&c, b->key, b->val), KV_EINVAL,
	    "%s \"%s\"", b->key, b->val);
	cr_assert_eq(c.split_after_s, 7, "a refusal changes nothing");
	cr_assert_float_eq(c.split_threshold, 0.7, 1e-12);
	cr_assert_eq(c.split_size_bytes, 7);
}
