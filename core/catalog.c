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
		else {
			/* A keyed group answers by its first member. */
			while (p->keyed && p->kfrom_len > 0 && p > t->parts &&
			    p[-1].lo == p->lo)
				p--;
			return p;
		}
	}
	return NULL;
}

/* Whether b follows a within one keyed group. */
static bool
keyed_next(const partition *a, const partition *b)
{
	return a->keyed && b->keyed && a->lo == a->last && b->lo == a->lo &&
	    b->last == a->last && a->kto_len > 0 &&
	    a->kto_len == b->kfrom_len &&
	    memcmp(a->kto, b->kfrom, a->kto_len) == 0 && a->node == b->node;
}

bool
table_parts_valid(const table *t)
{
	if (t->n_parts == 0 || t->parts[0].lo != 0 ||
	    t->parts[t->n_parts - 1].last != UINT64_MAX)
		return false;
	for (size_t i = 0; i < t->n_parts; i++) {
		const partition *p = &t->parts[i];
		if (p->lo > p->last || (p->keyed && p->lo != p->last) ||
		    p->kfrom_len > PART_KEY_MAX || p->kto_len > PART_KEY_MAX ||
		    (!p->keyed && (p->kfrom_len > 0 || p->kto_len > 0)))
			return false;
		/* A keyed group starts from the first key, ends at the last. */
		if (i > 0 && keyed_next(p - 1, p))
			goto ids;
		if (i > 0 && (p->lo != p[-1].last + 1 ||
		    (p[-1].keyed && p[-1].kto_len > 0)))
			return false;
		if (p->keyed && p->kfrom_len > 0)
			return false;
		if (i + 1 == t->n_parts && p->keyed && p->kto_len > 0)
			return false;
	ids:
		for (size_t k = 0; k < i; k++)
			if (t->parts[k].id == t->parts[i].id)
				return false;
	}
	return true;
}

const table *
table_find_id(const catalog *c, uint32_t id)
{
	for (size_t i = 0; c != NULL && i < c->n_tables; i++)
		if (c->tables[i].id == id)
			return &c->tables[i];
	return NULL;
}

void
index_def_fini(index_def *d)
{
	free(d->name);
	free(d->hash.name);
	free(d->range.name);
	for (size_t i = 0; i < d->n_hmore; i++)
		free(d->hmore[i].name);
	for (size_t i = 0; i < d->n_rmore; i++)
		free(d->rmore[i].name);
	for (size_t i = 0; i < d->n_include; i++)
		free(d->include[i]);
	free(d->include);
	memset(d, 0, sizeof(*d));
}

void
backup_rec_fini(backup_rec *b)
{
	free(b->name);
	free(b->arn);
	table_fini(&b->src);
	memset(b, 0, sizeof(*b));
}

void
table_fini(table *t)
{
	free(t->name);
	free(t->uuid);
	free(t->ttl_attr);
	free(t->restore_arn);
	for (size_t i = 0; i < t->n_tags; i++) {
		free(t->tags[i].key);
		free(t->tags[i].value);
	}
	free(t->tags);
	free(t->hash.name);
	free(t->range.name);
	for (size_t i = 0; i < t->n_attr_defs; i++)
		free(t->attr_defs[i].name);
	free(t->attr_defs);
	free(t->parts);
	for (size_t i = 0; i < t->n_indexes; i++)
		index_def_fini(&t->indexes[i]);
	free(t->indexes);
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

static char *
dup_or_null(const char *s, bool *failed)
{
	if (s == NULL)
		return NULL;
	char *d = strdup(s);
	if (d == NULL)
		*failed = true;
	return d;
}

kv_err
index_def_copy(const index_def *d, index_def *out)
{
	bool failed = false;
	*out = *d;
	out->name = dup_or_null(d->name, &failed);
	out->hash.name = dup_or_null(d->hash.name, &failed);
	out->range.name = dup_or_null(d->range.name, &failed);
	for (size_t i = 0; i < d->n_hmore; i++)
		out->hmore[i].name = dup_or_null(d->hmore[i].name, &failed);
	for (size_t i = 0; i < d->n_rmore; i++)
		out->rmore[i].name = dup_or_null(d->rmore[i].name, &failed);
	out->include = NULL;
	out->n_include = 0;
	if (!failed && d->n_include > 0) {
		out->include = calloc(d->n_include, sizeof(char *));
		failed = out->include == NULL;
		for (size_t i = 0; !failed && i < d->n_include; i++) {
			out->include[i] = dup_or_null(d->include[i], &failed);
			out->n_include = i + 1;
		}
	}
	if (failed) {
		index_def_fini(out);
		return KV_ENOMEM;
	}
	return KV_OK;
}

kv_err
table_copy(const table *t, table *out)
{
	bool failed = false;

	*out = *t;
	out->name = dup_or_null(t->name, &failed);
	out->uuid = dup_or_null(t->uuid, &failed);
	out->ttl_attr = dup_or_null(t->ttl_attr, &failed);
	out->restore_arn = dup_or_null(t->restore_arn, &failed);
	out->tags = NULL;
	out->n_tags = 0;
	if (!failed && t->n_tags > 0) {
		out->tags = calloc(t->n_tags, sizeof(table_tag));
		failed = out->tags == NULL;
		for (size_t i = 0; !failed && i < t->n_tags; i++) {
			out->tags[i].key = dup_or_null(t->tags[i].key, &failed);
			out->tags[i].value = dup_or_null(t->tags[i].value,
			    &failed);
			out->n_tags = i + 1;
		}
	}
	out->hash.name = dup_or_null(t->hash.name, &failed);
	out->range.name = dup_or_null(t->range.name, &failed);
	out->attr_defs = NULL;
	out->n_attr_defs = 0;
	out->parts = NULL;
	out->n_parts = 0;
	out->indexes = NULL;
	out->n_indexes = 0;
	if (!failed && t->n_indexes > 0) {
		out->indexes = calloc(t->n_indexes, sizeof(index_def));
		failed = out->indexes == NULL;
		for (size_t i = 0; !failed && i < t->n_indexes; i++) {
			failed = index_def_copy(&t->indexes[i],
			    &out->indexes[i]) != KV_OK;
			if (!failed)
				out->n_indexes = i + 1;
		}
	}
	if (!failed && t->n_attr_defs > 0) {
		out->attr_defs = calloc(t->n_attr_defs, sizeof(key_def));
		failed = out->attr_defs == NULL;
		for (size_t i = 0; !failed && i < t->n_attr_defs; i++) {
			out->attr_defs[i].type = t->attr_defs[i].type;
			out->attr_defs[i].name = dup_or_null(
			    t->attr_defs[i].name, &failed);
			out->n_attr_defs = i + 1;
		}
	}
	if (!failed && t->n_parts > 0) {
		out->parts = malloc(t->n_parts * sizeof(partition));
		failed = out->parts == NULL;
		if (!failed) {
			memcpy(out->parts, t->parts,
			    t->n_parts * sizeof(partition));
			out->n_parts = t->n_parts;
		}
	}
	if (failed) {
		table_fini(out);
		return KV_ENOMEM;
	}
	return KV_OK;
}

static int
by_name(const void *a, const void *b)
{
	return strcmp(((const table *) a)->name, ((const table *) b)->name);
}

static bool
has_id(const uint32_t *ids, size_t n, uint32_t id)
{
	for (size_t i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

static bool
upserted(const table *ups, size_t n, uint32_t id)
{
	for (size_t i = 0; i < n; i++)
		if (ups[i].id == id)
			return true;
	return false;
}

kv_err
catalog_apply(const catalog *base, const table *ups, size_t n_ups,
    const uint32_t *gone, size_t n_gone, uint64_t version,
    uint32_t next_table_id, catalog **out)
{
	size_t n_base = base != NULL ? base->n_tables : 0;
	catalog *c = calloc(1, sizeof(*c));
	if (c == NULL)
		return KV_ENOMEM;
	c->version = version;
	c->next_table_id = next_table_id;
	if (n_base + n_ups > 0) {
		c->tables = calloc(n_base + n_ups, sizeof(table));
		if (c->tables == NULL) {
			free(c);
			return KV_ENOMEM;
		}
	}
	kv_err rv = KV_OK;
	for (size_t i = 0; i < n_base && rv == KV_OK; i++) {
		const table *t = &base->tables[i];
		if (has_id(gone, n_gone, t->id) || upserted(ups, n_ups, t->id))
			continue;
		if ((rv = table_copy(t, &c->tables[c->n_tables])) == KV_OK)
			c->n_tables++;
	}
	for (size_t i = 0; i < n_ups && rv == KV_OK; i++) {
		if (has_id(gone, n_gone, ups[i].id))
			continue;
		if ((rv = table_copy(&ups[i], &c->tables[c->n_tables])) ==
		    KV_OK)
			c->n_tables++;
	}
	if (rv == KV_OK && c->n_tables > 1) {
		qsort(c->tables, c->n_tables, sizeof(table), by_name);
		for (size_t i = 1; i < c->n_tables; i++)
			if (strcmp(c->tables[i - 1].name, c->tables[i].name) ==
			    0)
				rv = KV_CORRUPT;
	}
	if (rv != KV_OK) {
		catalog_free(c);
		return rv;
	}
	*out = c;
	return KV_OK;
}

kv_err
catalog_clone(const catalog *c, catalog **out)
{
	return catalog_apply(c, NULL, 0, NULL, 0, c->version,
	    c->next_table_id, out);
}
