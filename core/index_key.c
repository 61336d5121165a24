/*
 * index_key.c — a global index's key values from an item's attributes:
 * see index_key.h.
 */
#include "index_key.h"

#include <string.h>

#include "keyenc.h"

size_t
index_key_parts(const index_def *d, bool sort,
    const key_def *parts[INDEX_KEY_PARTS])
{
	const key_def *first = sort ? &d->range : &d->hash;
	const key_def *more = sort ? d->rmore : d->hmore;
	size_t n = sort ? d->n_rmore : d->n_hmore;
	if (first->name == NULL)
		return 0;
	parts[0] = first;
	for (size_t i = 0; i < n && i + 1 < INDEX_KEY_PARTS; i++)
		parts[i + 1] = &more[i];
	return n + 1 < INDEX_KEY_PARTS ? n + 1 : INDEX_KEY_PARTS;
}

size_t
index_key_all(const index_def *d, const key_def *keys[2 * INDEX_KEY_PARTS],
    size_t *nh)
{
	size_t h = index_key_parts(d, false, keys);
	if (nh != NULL)
		*nh = h;
	return h + index_key_parts(d, true, keys + h);
}

/* Whether s names name[0..n). */
static bool
same_name(const char *s, const char *name, size_t n)
{
	return s != NULL && strlen(s) == n && memcmp(s, name, n) == 0;
}

bool
index_projects(const table *t, const index_def *d, const char *name,
    size_t n)
{
	const key_def *keys[2 * INDEX_KEY_PARTS];
	if (d->projection == PROJECT_ALL || same_name(t->hash.name, name, n) ||
	    same_name(t->range.name, name, n))
		return true;
	for (size_t i = 0, nk = index_key_all(d, keys, NULL); i < nk; i++)
		if (same_name(keys[i]->name, name, n))
			return true;
	for (size_t i = 0; d->projection == PROJECT_INCLUDE &&
	    i < d->n_include; i++)
		if (same_name(d->include[i], name, n))
			return true;
	return false;
}

kv_err
index_key_compose(const value *const *vals, size_t n, arena *a, value *out)
{
	size_t len = 0;
	for (size_t i = 0; i < n; i++)
		len += keyenc_value_size(vals[i]);
	uint8_t *buf = arena_alloc_raw(a, len > 0 ? len : 1);
	if (buf == NULL)
		return KV_ENOMEM;
	size_t at = 0;
	for (size_t i = 0; i < n; i++)
		at += keyenc_value(vals[i], buf + at);
	*out = (value) { .type = VAL_B, .len = at,
	    .u.bytes = (const char *) buf };
	return KV_OK;
}

int
index_key_value(const index_def *d, bool sort, const value *item,
    arena *a, value *out)
{
	const key_def *parts[INDEX_KEY_PARTS];
	const value *vals[INDEX_KEY_PARTS];
	size_t n = index_key_parts(d, sort, parts);
	if (item == NULL || n == 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		vals[i] = item_attr(item, parts[i]->name,
		    strlen(parts[i]->name));
		if (vals[i] == NULL || vals[i]->type != parts[i]->type)
			return 0;
	}
	if (n == 1) {
		*out = *vals[0];
		return 1;
	}
	return index_key_compose(vals, n, a, out) == KV_OK ? 1 : -1;
}
