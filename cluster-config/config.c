/*
 * config.c — parser for cluster files (see config.h). Unknown settings are
 * errors, so a typo never silently falls back to a default.
 */
#include "config.h"

#include <errno.h>
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

/* Splits "host:port" into host[0..hostlen) and *port (1..65535). */
static kv_err
host_port(const char *s, char *host, size_t hostlen, int *port)
{
	const char *colon = strrchr(s, ':');
	uint64_t v;
	if (colon == NULL || colon == s || (size_t) (colon - s) >= hostlen ||
	    config_number(colon + 1, &v) != KV_OK || v == 0 || v > 65535)
		return KV_EINVAL;
	memcpy(host, s, (size_t) (colon - s));
	host[colon - s] = '\0';
	*port = (int) v;
	return KV_OK;
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
		} else if (strcmp(key, "node") == 0 && b != NULL &&
		    (extra == NULL || next_word(&p) == NULL)) {
			config_node *nd = &c->nodes[c->n_nodes];
			if (c->n_nodes == CONFIG_MAX_NODES ||
			    strlen(a) >= sizeof(nd->url) ||
			    strlen(b) >= sizeof(nd->data) ||
			    (extra != NULL && host_port(extra, nd->metrics_host,
			    sizeof(nd->metrics_host), &nd->metrics_port) !=
			    KV_OK))
				goto bad;
			strcpy(nd->url, a);
			strcpy(nd->data, b);
			c->n_nodes++;
		} else if (strcmp(key, "router") == 0 && a != NULL &&
		    b == NULL) {
			config_router *r = &c->routers[c->n_routers];
			if (c->n_routers == CONFIG_MAX_ROUTERS ||
			    host_port(a, r->host, sizeof(r->host), &r->port) !=
			    KV_OK)
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
	return rv;
}
