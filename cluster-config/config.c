/*
 * config.c — parser for cluster files (see config.h). Unknown settings are
 * errors, so a typo never silently falls back to a default.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *
next_word(char **p)
{
	char *s = *p;
	while (*s == ' ' || *s == '\t')
		s++;
	if (*s == '\0' || *s == '#')
		return NULL;
	char *w = s;
	while (*s != '\0' && *s != ' ' && *s != '\t' && *s != '#')
		s++;
	if (*s == '#')
		*s = '\0';
	else if (*s != '\0')
		*s++ = '\0';
	*p = s;
	return w;
}

/*
 * Splits "host:port" or "[v6host]:port" into host[0..hostlen) (without
 * brackets) and *port (1..65535).
 */
static kv_err
host_port(const char *s, char *host, size_t hostlen, int *port)
{
	const char *colon = strrchr(s, ':');
	const char *h = s, *hend = colon;
	uint64_t v;
	if (colon == NULL || colon == s)
		return KV_EINVAL;
	if (s[0] == '[') {
		if (colon[-1] != ']' || colon - s < 3)
			return KV_EINVAL;
		h = s + 1;
		hend = colon - 1;
	} else if (memchr(s, ':', (size_t) (colon - s)) != NULL) {
		return KV_EINVAL; /* IPv6 needs its brackets */
	}
	if ((size_t) (hend - h) >= hostlen ||
	    config_number(colon + 1, &v) != KV_OK || v == 0 || v > 65535)
		return KV_EINVAL;
	memcpy(host, h, (size_t) (hend - h));
	host[hend - h] = '\0';
	*port = (int) v;
	return KV_OK;
}

void
config_host_port(const char *host, int port, char *out, size_t outlen)
{
	bool v6 = strchr(host, ':') != NULL;
	snprintf(out, outlen, "%s%s%s:%d", v6 ? "[" : "", host, v6 ? "]" : "",
	    port);
}

kv_err
config_bus_url(const char *base, config_bus which, char *out, size_t outlen)
{
	static const char *const suffix[] = { ".peer", ".survey", ".feed",
		".requests" };
	int n;
	if (strncmp(base, "ipc://", 6) == 0 && base[6] != '\0') {
		n = snprintf(out, outlen, "%s%s", base, suffix[which]);
	} else if (strncmp(base, "tcp://", 6) == 0) {
		char host[128];
		int port;
		if (host_port(base + 6, host, sizeof(host), &port) != KV_OK ||
		    port + (int) which > 65535)
			return KV_EINVAL;
		char hp[160];
		config_host_port(host, port + (int) which, hp, sizeof(hp));
		n = snprintf(out, outlen, "tcp://%s", hp);
	} else {
		return KV_EINVAL;
	}
	return n < 0 || (size_t) n >= outlen ? KV_EINVAL : KV_OK;
}

/* Whether every address of bus base `base` can be derived. */
static bool
bus_ok(const char *base)
{
	char probe[300];
	for (int w = CONFIG_BUS_PEER; w <= CONFIG_BUS_FEED; w++)
		if (config_bus_url(base, (config_bus) w, probe,
		    sizeof(probe)) != KV_OK)
			return false;
	return true;
}

/*
 * A node's default bus base: its URL, one port up for TCP. KV_EINVAL for
 * a URL that is neither ipc://PATH nor tcp://HOST:PORT, or whose nng
 * ports would pass 65535.
 */
static kv_err
default_bus(const char *url, char *out, size_t outlen)
{
	if (strncmp(url, "ipc://", 6) == 0) {
		if (strlen(url) >= outlen || url[6] == '\0')
			return KV_EINVAL;
		strcpy(out, url);
	} else if (config_bus_url(url, CONFIG_BUS_SURVEY, out, outlen) !=
	    KV_OK) {
		return KV_EINVAL;
	}
	return bus_ok(out) ? KV_OK : KV_EINVAL;
}

/* Takes "bus=URL" into out; false when w is not such a word. */
static bool
bus_word(const char *w, char *out, size_t outlen, bool *bad)
{
	if (w == NULL || strncmp(w, "bus=", 4) != 0)
		return false;
	if (strlen(w + 4) >= outlen || !bus_ok(w + 4))
		*bad = true;
	else
		strcpy(out, w + 4);
	return true;
}

kv_err
config_number(const char *s, uint64_t *out)
{
	char *end;
	if (s == NULL || *s < '0' || *s > '9')
		return KV_EINVAL;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0')
		return KV_EINVAL;
	*out = v;
	return KV_OK;
}

/* Every address the cluster binds, with whose it is, for check_addresses. */
typedef struct use {
	char url[300];
	char who[64];
} use;

static void
add_use(use *u, size_t *n, const char *url, const char *fmt, unsigned i,
    const char *what)
{
	snprintf(u[*n].url, sizeof(u[*n].url), "%s", url);
	snprintf(u[*n].who, sizeof(u[*n].who), fmt, i, what);
	(*n)++;
}

/* Two uses of one address (say, a default bus port that is another
 * node's port) would fail at start, or worse: refuse the file now. */
static kv_err
check_addresses(const config *c, const char *path, char *why, size_t whylen)
{
	size_t cap = c->n_nodes * 4 + c->n_routers * 2, n = 0;
	use *u = calloc(cap, sizeof(*u));
	char url[300];
	if (u == NULL) {
		snprintf(why, whylen, "%s: out of memory", path);
		return KV_ENOMEM;
	}
	for (size_t i = 0; i < c->n_nodes; i++) {
		const config_node *nd = &c->nodes[i];
		add_use(u, &n, nd->url, "node %u's %s", (unsigned) i,
		    "requests");
		for (int w = CONFIG_BUS_PEER; w <= CONFIG_BUS_FEED; w++) {
			if (w == CONFIG_BUS_FEED && i != 0)
				continue;
			config_bus_url(nd->bus, (config_bus) w, url,
			    sizeof(url));
			add_use(u, &n, url, "node %u's %s", (unsigned) i,
			    w == CONFIG_BUS_PEER ? "peer messages" :
			    w == CONFIG_BUS_SURVEY ? "surveys" :
			    "catalog feed");
		}
	}
	for (size_t i = 0; i < c->n_routers; i++) {
		char hp[160];
		config_host_port(c->routers[i].host, c->routers[i].port, hp,
		    sizeof(hp));
		snprintf(url, sizeof(url), "tcp://%s", hp);
		/* Routers may share their HTTP address with each other. */
		bool shared = false;
		for (size_t k = 0; k < n; k++)
			shared |= strcmp(u[k].url, url) == 0 &&
			    strncmp(u[k].who, "router", 6) == 0 &&
			    strstr(u[k].who, "HTTP") != NULL;
		if (!shared)
			add_use(u, &n, url, "router %u's %s", (unsigned) i,
			    "HTTP");
		if (c->routers[i].bus[0] == '\0')
			continue;
		config_bus_url(c->routers[i].bus, CONFIG_BUS_SURVEY, url,
		    sizeof(url));
		add_use(u, &n, url, "router %u's %s", (unsigned) i,
		    "surveys");
	}
	kv_err rv = KV_OK;
	for (size_t i = 0; i < n && rv == KV_OK; i++)
		for (size_t k = i + 1; k < n && rv == KV_OK; k++)
			if (strcmp(u[i].url, u[k].url) == 0) {
				snprintf(why, whylen, "%s: %s is both %s and "
				    "%s (give one of them another address, "
				    "or bus=URL)", path, u[i].url, u[i].who,
				    u[k].who);
				rv = KV_EINVAL;
			}
	free(u);
	return rv;
}

kv_err
config_split_option(config *c, const char *key, const char *val)
{
	uint64_t v;
	while (*key == '-')
		key++;
	if (strcmp(key, "split-threshold") == 0) {
		char *end;
		double f = strtod(val, &end);
		if (end == val || *end != '\0' || !(f > 0 && f <= 1))
			return KV_EINVAL;
		c->split_threshold = f;
		return KV_OK;
	}
	if (config_number(val, &v) != KV_OK)
		return KV_EINVAL;
	if (strcmp(key, "split-after-seconds") == 0 && v <= 86400) {
		c->split_after_s = (uint32_t) v;
		return KV_OK;
	}
	if (strcmp(key, "split-size-mb") == 0 && v <= (1ull << 30)) {
		c->split_size_bytes = v << 20;
		return KV_OK;
	}
	if (strcmp(key, "gsi-delay-ms") == 0 && v <= 3600000) {
		c->gsi_delay_ms = (uint32_t) v;
		return KV_OK;
	}
	if (strcmp(key, "gsi-collect-seconds") == 0 && v <= 86400) {
		c->gsi_collect_s = (uint32_t) v;
		return KV_OK;
	}
	if (strcmp(key, "memory-mb") == 0 && v >= 32 && v <= (1u << 20)) {
		c->memory_mb = (uint32_t) v;
		return KV_OK;
	}
	if (strcmp(key, "ttl-sweep-ms") == 0 && v >= 10 && v <= 86400000) {
		c->ttl_sweep_ms = (uint32_t) v;
		return KV_OK;
	}
	if (strcmp(key, "item-collection-kb") == 0 && v > 0 &&
	    v <= (1ull << 40)) {
		c->collection_max = v << 10;
		return KV_OK;
	}
	return KV_EINVAL;
}

kv_err
config_load(const char *path, config *c, char *why, size_t whylen)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	int lineno = 0;
	kv_err rv = KV_OK;

	memset(c, 0, sizeof(*c));
	c->partitions = 4;
	c->partition_rcu = CONFIG_PARTITION_RCU;
	c->partition_wcu = CONFIG_PARTITION_WCU;
	c->burst_seconds = CONFIG_BURST_SECONDS;
	c->split_after_s = CONFIG_SPLIT_AFTER_S;
	c->split_threshold = CONFIG_SPLIT_THRESHOLD;
	c->split_size_bytes = (uint64_t) CONFIG_SPLIT_SIZE_MB << 20;
	c->collection_max = CONFIG_COLLECTION_KB << 10;
	c->ttl_sweep_ms = CONFIG_TTL_SWEEP_MS;
	c->gsi_collect_s = CONFIG_GSI_COLLECT_S;
	c->memory_mb = CONFIG_MEMORY_MB;
	if (f == NULL) {
		snprintf(why, whylen, "%s: cannot open", path);
		return KV_IO;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		lineno++;
		line[strcspn(line, "\r\n")] = '\0';
		char *p = line;
		char *key = next_word(&p);
		if (key == NULL)
			continue;
		char *a = next_word(&p);
		char *b = a != NULL ? next_word(&p) : NULL;
		char *extra = b != NULL ? next_word(&p) : NULL;
		char *extra2 = extra != NULL ? next_word(&p) : NULL;
		bool bad = false;
		if (strcmp(key, "partitions") == 0 && a != NULL && b == NULL) {
			long n = strtol(a, NULL, 10);
			if (n < 1 || n > 4096)
				goto bad;
			c->partitions = (uint32_t) n;
		} else if ((strcmp(key, "partition-rcu") == 0 ||
		    strcmp(key, "partition-wcu") == 0 ||
		    strcmp(key, "burst-seconds") == 0) && a != NULL &&
		    b == NULL) {
			uint64_t v;
			if (config_number(a, &v) != KV_OK || (key[0] == 'p' &&
			    v == 0) || v > UINT32_MAX)
				goto bad;
			if (strcmp(key, "partition-rcu") == 0)
				c->partition_rcu = v;
			else if (strcmp(key, "partition-wcu") == 0)
				c->partition_wcu = v;
			else
				c->burst_seconds = (uint32_t) v;
		} else if ((strncmp(key, "split-", 6) == 0 ||
		    strcmp(key, "gsi-delay-ms") == 0 ||
		    strcmp(key, "gsi-collect-seconds") == 0 ||
		    strcmp(key, "ttl-sweep-ms") == 0 ||
		    strcmp(key, "memory-mb") == 0 ||
		    strcmp(key, "item-collection-kb") == 0) && a != NULL &&
		    b == NULL) {
			if (config_split_option(c, key, a) != KV_OK)
				goto bad;
		} else if (strcmp(key, "node") == 0 && b != NULL) {
			char *extra3 = extra2 != NULL ? next_word(&p) : NULL;
			if (extra3 != NULL && next_word(&p) != NULL)
				goto bad;
			if (c->n_nodes == CONFIG_MAX_NODES)
				goto bad;
			config_node *nd = &c->nodes[c->n_nodes];
			if (strlen(a) >= sizeof(nd->url) ||
			    strlen(b) >= sizeof(nd->data))
				goto bad;
			strcpy(nd->url, a);
			strcpy(nd->data, b);
			if (default_bus(a, nd->bus, sizeof(nd->bus)) != KV_OK)
				goto bad;
			char *opt[3] = { extra, extra2, extra3 };
			bool had_metrics = false, had_bus = false;
			nd->standby = false;
			for (int k = 0; k < 3 && opt[k] != NULL; k++) {
				if (strcmp(opt[k], "standby") == 0) {
					bad |= nd->standby;
					nd->standby = true;
				} else if (bus_word(opt[k], nd->bus,
				    sizeof(nd->bus), &bad)) {
					bad |= had_bus;
					had_bus = true;
				} else if (had_metrics || host_port(opt[k],
				    nd->metrics_host, sizeof(nd->metrics_host),
				    &nd->metrics_port) != KV_OK) {
					bad = true;
				} else {
					had_metrics = true;
				}
			}
			if (bad)
				goto bad;
			c->n_nodes++;
		} else if (strcmp(key, "router") == 0 && a != NULL &&
		    extra == NULL) {
			if (c->n_routers == CONFIG_MAX_ROUTERS)
				goto bad;
			config_router *r = &c->routers[c->n_routers];
			if (host_port(a, r->host, sizeof(r->host), &r->port) !=
			    KV_OK || (b != NULL && (!bus_word(b, r->bus,
			    sizeof(r->bus), &bad) || bad)))
				goto bad;
			c->n_routers++;
		} else {
			goto bad;
		}
		continue;
bad:
		snprintf(why, whylen, "%s:%d: cannot understand this line",
		    path, lineno);
		rv = KV_EINVAL;
		break;
	}
	fclose(f);
	if (rv == KV_OK && c->n_nodes == 0) {
		snprintf(why, whylen, "%s: no node lines", path);
		rv = KV_EINVAL;
	}
	if (rv == KV_OK)
		rv = check_addresses(c, path, why, whylen);
	return rv;
}
