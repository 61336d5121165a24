/*
 * value.c — names, ordering, equality and deep copy of attribute values.
 *
 * Equality is DynamoDB's: numbers by value, sets and maps regardless of
 * order, lists in order. Large sets and maps are compared by sorting
 * copies of their members, so that comparing two 10,000-member sets is
 * not quadratic. Building trees is json.c's and codec.c's job; sizes are
 * item.c's. Read value.h first.
 */
#include "value.h"

#include <stdlib.h>
#include <string.h>

/* Below this many members, sets and maps are compared pairwise. */
#define SMALL_COLLECTION 8

static const char *const type_names[] = {
	[VAL_S] = "S",
	[VAL_N] = "N",
	[VAL_B] = "B",
	[VAL_SS] = "SS",
	[VAL_NS] = "NS",
	[VAL_BS] = "BS",
	[VAL_M] = "M",
	[VAL_L] = "L",
	[VAL_NULL] = "NULL",
	[VAL_BOOL] = "BOOL",
};

#define TYPE_COUNT (sizeof(type_names) / sizeof(type_names[0]))

const char *
value_type_name(val_type t)
{
	if ((size_t) t >= TYPE_COUNT || type_names[t] == NULL)
		return "?";
	return type_names[t];
}

val_type
value_type_from_name(const char *s, size_t n)
{
	size_t t;

	for (t = VAL_S; t < TYPE_COUNT; t++) {
		if (strlen(type_names[t]) == n &&
		    memcmp(type_names[t], s, n) == 0)
			return (val_type) t;
	}
	return 0;
}

/* bytes_cmp orders two byte strings as unsigned bytes, shorter first. */
static int
bytes_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
	size_t n = alen < blen ? alen : blen;
	int c = n > 0 ? memcmp(a, b, n) : 0;

	if (c != 0)
		return c < 0 ? -1 : 1;
	if (alen != blen)
		return alen < blen ? -1 : 1;
	return 0;
}

int
value_cmp(const value *a, const value *b)
{
	if (a->type != b->type)
		return a->type < b->type ? -1 : 1;
	switch (a->type) {
	case VAL_S:
	case VAL_B:
		return bytes_cmp(a->u.bytes, a->len, b->u.bytes, b->len);
	case VAL_N:
		return number_cmp(a->u.num, b->u.num);
	default:
		return 0;
	}
}

static int
member_qsort_cmp(const void *x, const void *y)
{
	return value_cmp(*(const value *const *) x,
	    *(const value *const *) y);
}

static int
attr_qsort_cmp(const void *x, const void *y)
{
	const attr *a = *(const attr *const *) x;
	const attr *b = *(const attr *const *) y;

	return bytes_cmp(a->name, a->name_len, b->name, b->name_len);
}

/*
 * sets_equal compares two sets of the same type and size. Members of a
 * valid set are unique, so equal sizes and a ⊆ b mean a = b.
 */
static bool
sets_equal(const value *a, const value *b)
{
	const value **sa, **sb;
	size_t i, j, n = a->len;
	bool eq = true;

	if (n > SMALL_COLLECTION) {
		sa = malloc(2 * n * sizeof(*sa));
		if (sa != NULL) {
			sb = sa + n;
			for (i = 0; i < n; i++) {
				sa[i] = &a->u.elems[i];
				sb[i] = &b->u.elems[i];
			}
			qsort(sa, n, sizeof(*sa), member_qsort_cmp);
			qsort(sb, n, sizeof(*sb), member_qsort_cmp);
			for (i = 0; i < n && eq; i++)
				eq = value_cmp(sa[i], sb[i]) == 0;
			free(sa);
			return eq;
		}
		/* Out of memory: fall back to the quadratic comparison. */
	}
	for (i = 0; i < n; i++) {
		for (j = 0; j < n; j++) {
			if (value_cmp(&a->u.elems[i], &b->u.elems[j]) == 0)
				break;
		}
		if (j == n)
			return false;
	}
	return true;
}

static bool
maps_equal(const value *a, const value *b)
{
	const attr **sa, **sb;
	size_t i, n = a->len;
	bool eq = true;

	if (n > SMALL_COLLECTION) {
		sa = malloc(2 * n * sizeof(*sa));
		if (sa != NULL) {
			sb = sa + n;
			for (i = 0; i < n; i++) {
				sa[i] = &a->u.attrs[i];
				sb[i] = &b->u.attrs[i];
			}
			qsort(sa, n, sizeof(*sa), attr_qsort_cmp);
			qsort(sb, n, sizeof(*sb), attr_qsort_cmp);
			for (i = 0; i < n && eq; i++) {
				eq = attr_qsort_cmp(&sa[i], &sb[i]) == 0 &&
				    value_equal(&sa[i]->v, &sb[i]->v);
			}
			free(sa);
			return eq;
		}
	}
	for (i = 0; i < n; i++) {
		const attr *x = &a->u.attrs[i];
		const value *y = item_attr(b, x->name, x->name_len);

		if (y == NULL || !value_equal(&x->v, y))
			return false;
	}
	return true;
}

bool
value_equal(const value *a, const value *b)
{
	size_t i;

	if (a->type != b->type)
		return false;
	switch (a->type) {
	case VAL_S:
	case VAL_B:
	case VAL_N:
		return value_cmp(a, b) == 0;
	case VAL_NULL:
		return true;
	case VAL_BOOL:
		return a->b == b->b;
	case VAL_SS:
	case VAL_NS:
	case VAL_BS:
		return a->len == b->len && sets_equal(a, b);
	case VAL_L:
		if (a->len != b->len)
			return false;
		for (i = 0; i < a->len; i++) {
			if (!value_equal(&a->u.elems[i], &b->u.elems[i]))
				return false;
		}
		return true;
	case VAL_M:
		return a->len == b->len && maps_equal(a, b);
	}
	return false;
}

const value *
item_attr(const value *item, const char *name, size_t n)
{
	size_t i;

	if (item->type != VAL_M)
		return NULL;
	for (i = 0; i < item->len; i++) {
		const attr *at = &item->u.attrs[i];

		if (at->name_len == n &&
		    (n == 0 || memcmp(at->name, name, n) == 0))
			return &at->v;
	}
	return NULL;
}

/* alloc_array returns n zeroed elements of size sz, or NULL on overflow. */
static void *
alloc_array(arena *a, size_t n, size_t sz)
{
	if (n != 0 && sz > SIZE_MAX / n)
		return NULL;
	return arena_alloc(a, n * sz);
}

kv_err
value_copy(arena *a, const value *src, value *dst)
{
	size_t i;
	kv_err e;

	*dst = *src;
	switch (src->type) {
	case VAL_S:
	case VAL_B:
		dst->u.bytes = arena_dup(a, src->u.bytes, src->len);
		return dst->u.bytes == NULL ? KV_ENOMEM : KV_OK;
	case VAL_N:
		dst->u.num = arena_alloc(a, sizeof(number));
		if (dst->u.num == NULL)
			return KV_ENOMEM;
		*dst->u.num = *src->u.num;
		return KV_OK;
	case VAL_SS:
	case VAL_NS:
	case VAL_BS:
	case VAL_L:
		dst->u.elems = alloc_array(a, src->len, sizeof(value));
		if (dst->u.elems == NULL && src->len > 0)
			return KV_ENOMEM;
		for (i = 0; i < src->len; i++) {
			e = value_copy(a, &src->u.elems[i], &dst->u.elems[i]);
			if (e != KV_OK)
				return e;
		}
		return KV_OK;
	case VAL_M:
		dst->u.attrs = alloc_array(a, src->len, sizeof(attr));
		if (dst->u.attrs == NULL && src->len > 0)
			return KV_ENOMEM;
		for (i = 0; i < src->len; i++) {
			const attr *s = &src->u.attrs[i];
			attr *d = &dst->u.attrs[i];

			d->name = arena_dup(a, s->name, s->name_len);
			if (d->name == NULL)
				return KV_ENOMEM;
			d->name_len = s->name_len;
			e = value_copy(a, &s->v, &d->v);
			if (e != KV_OK)
				return e;
		}
		return KV_OK;
	case VAL_NULL:
	case VAL_BOOL:
		return KV_OK;
	}
	return KV_OK;
}
