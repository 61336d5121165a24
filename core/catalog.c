/*
 * catalog.c — lookups in an immutable catalog and partition layout.
 * Everything here reads a catalog that nobody changes; see catalog.h.
 */
#include "catalog.h"

#include <stdlib.h>
#include <string.h>

const table *
catalog_find(const catalog *c, const char *name, size_t n)
{
	size_t lo = 0, hi = c->n_tables;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const char *tn = c->tables[mid].name;
		size_t tl = strlen(tn);
		int r = memcmp(tn, name, tl < n ? tl : n);
		if (r == 0)
			r = tl < n ? -1 : tl > n ? 1 : 0;
		if (r == 0)
			return &c->tables[mid];
		if (r < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const partition *
table_partition_for(const table *t, uint64_t h)
{
	size_t lo = 0, hi = t->n_parts;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const partition *p = &t->parts[mid];
		if (h < p->lo)
			hi = mid;
		else if (h > p->last)
			lo = mid + 1;
		else
			return p;
	}
	return NULL;
}

bool
table_parts_valid(const table *t)
{
	if (t->n_parts == 0 || t->parts[0].lo != 0 ||
	    t->parts[t->n_parts - 1].last != UINT64_MAX)
		return false;
	for (size_t i = 0; i < t->n_parts; i++) {
		if (t->parts[i].lo > t->parts[i].last)
			return false;
		if (i > 0 && t->parts[i].lo != t->parts[i - 1].last + 1)
			return false;
		for (size_t k = 0; k < i; k++)
			if (t->parts[k].id == t->parts[i].id)
				return false;
	}
	return true;
}

void
table_fini(table *t)
{
	free(t->name);
	free(t->uuid);
	free(t->hash.name);
	free(t->range.name);
	for (size_t i = 0; i < t->n_attr_defs; i++)
		free(t->attr_defs[i].name);
	free(t->attr_defs);
	free(t->parts);
	memset(t, 0, sizeof(*t));
}

void
catalog_free(catalog *c)
{
	if (c == NULL)
		return;
	for (size_t i = 0; i < c->n_tables; i++)
		table_fini(&c->tables[i]);
	free(c->tables);
	free(c);
}

kv_err
table_split_even(table *t, size_t n, uint32_t first_node, uint32_t n_nodes)
{
	partition *p = calloc(n, sizeof(*p));
	if (p == NULL)
		return KV_ENOMEM;
	/* Partition i starts at floor(i * 2^64 / n). */
	for (size_t i = 0; i < n; i++) {
		p[i].id = (uint32_t) i;
		p[i].lo = (uint64_t) (((unsigned __int128) i << 64) / n);
		p[i].last = i + 1 == n ? UINT64_MAX :
		    (uint64_t) ((((unsigned __int128) (i + 1)) << 64) / n) - 1;
		p[i].node = (uint32_t) ((first_node + i) % n_nodes);
		p[i].epoch = 1;
	}
	free(t->parts);
	t->parts = p;
	t->n_parts = n;
	return KV_OK;
}
