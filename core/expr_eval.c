/*
 * expr_eval.c — evaluates conditions on an item and projects items, with
 * DynamoDB's semantics: a missing attribute makes comparisons false (and
 * <> true), values of different types are never equal nor ordered,
 * ordering exists only for S, N and B, size() of N, BOOL or NULL yields
 * nothing. Nothing here can fail: problems with the expression itself were
 * reported when it was parsed (expr_check.c). Updates are expr_update.c's.
 */
#define _GNU_SOURCE /* memmem: linear time, unlike a naive search */
#include "expr_int.h"

#include <stdlib.h>
#include <string.h>

const value *
expr_path_get(const value *v, const expr_path *p)
{
	size_t i;

	for (i = 0; i < p->n && v != NULL; i++) {
		const expr_path_elem *e = &p->elems[i];

		if (e->name != NULL) {
			v = v->type == VAL_M
			    ? item_attr(v, e->name, e->name_len)
			    : NULL;
		} else {
			v = v->type == VAL_L && e->index < v->len
			    ? &v->u.elems[e->index]
			    : NULL;
		}
	}
	return v;
}

/* Room for a value computed during evaluation (the result of size()). */
typedef struct opval {
	value tmp;
	number num;
} opval;

static const value *
size_of(const value *v, opval *ov)
{
	if (v == NULL)
		return NULL;
	switch (v->type) {
	case VAL_S:
	case VAL_B:
	case VAL_SS:
	case VAL_NS:
	case VAL_BS:
	case VAL_L:
	case VAL_M:
		break;
	default:
		return NULL; /* N, BOOL, NULL have no size */
	}
	number_from_u64((uint64_t) v->len, &ov->num);
	memset(&ov->tmp, 0, sizeof(ov->tmp));
	ov->tmp.type = VAL_N;
	ov->tmp.u.num = &ov->num;
	return &ov->tmp;
}

/* operand returns the value of o on item, or NULL when it has none. */
static const value *
operand(const expr_operand *o, const value *item, opval *ov)
{
	opval inner;

	switch (o->kind) {
	case EXPR_OPND_PATH:
		return item != NULL ? expr_path_get(item, &o->path) : NULL;
	case EXPR_OPND_VALUE:
		return o->val;
	case EXPR_OPND_FUNC:
		if (o->fn == EXPR_FN_SIZE && o->nargs == 1)
			return size_of(operand(&o->args[0], item, &inner), ov);
		return NULL;
	}
	return NULL;
}

static bool
orderable(const value *v)
{
	return v->type == VAL_S || v->type == VAL_N || v->type == VAL_B;
}

/* ordered compares x and y when both exist, share a type and have an
 * order; *c is the comparison. */
static bool
ordered(const value *x, const value *y, int *c)
{
	if (x == NULL || y == NULL || x->type != y->type || !orderable(x))
		return false;
	*c = value_cmp(x, y);
	return true;
}

static bool
equal(const value *x, const value *y)
{
	return x != NULL && y != NULL && value_equal(x, y);
}

static bool
has_bytes(const char *hay, size_t n, const char *needle, size_t m)
{
	if (m == 0)
		return true;
	return m <= n && memmem(hay, n, needle, m) != NULL;
}

static bool
contains(const value *a, const value *b)
{
	size_t i;

	if (a == NULL || b == NULL)
		return false;
	switch (a->type) {
	case VAL_S:
	case VAL_B:
		return b->type == a->type &&
		    has_bytes(a->u.bytes, a->len, b->u.bytes, b->len);
	case VAL_SS:
	case VAL_NS:
	case VAL_BS:
		if (b->type != (a->type == VAL_SS   ? VAL_S
				   : a->type == VAL_NS ? VAL_N
							: VAL_B))
			return false;
		/* fall through */
	case VAL_L:
		for (i = 0; i < a->len; i++) {
			if (value_equal(&a->u.elems[i], b))
				return true;
		}
		return false;
	default:
		return false;
	}
}

static bool
begins_with(const value *a, const value *b)
{
	if (a == NULL || b == NULL || a->type != b->type ||
	    (a->type != VAL_S && a->type != VAL_B))
		return false;
	return a->len >= b->len &&
	    (b->len == 0 || memcmp(a->u.bytes, b->u.bytes, b->len) == 0);
}

static bool
attribute_type(const value *x, const value *t)
{
	if (x == NULL || t == NULL || t->type != VAL_S)
		return false;
	return value_type_from_name(t->u.bytes, t->len) == x->type;
}

static bool
function(const expr_cond *c, const value *item)
{
	opval o1, o2;
	const value *x, *y;

	if (c->nops == 0)
		return false;
	x = operand(&c->ops[0], item, &o1);
	y = c->nops > 1 ? operand(&c->ops[1], item, &o2) : NULL;
	switch (c->fn) {
	case EXPR_FN_ATTRIBUTE_EXISTS:
		return x != NULL;
	case EXPR_FN_ATTRIBUTE_NOT_EXISTS:
		return x == NULL;
	case EXPR_FN_ATTRIBUTE_TYPE:
		return attribute_type(x, y);
	case EXPR_FN_BEGINS_WITH:
		return begins_with(x, y);
	case EXPR_FN_CONTAINS:
		return contains(x, y);
	case EXPR_FN_NOT_CONTAINS:
		return x != NULL && y != NULL && !contains(x, y);
	default:
		return false;
	}
}

static bool
primitive(const expr_cond *c, const value *item)
{
	opval o1, o2, o3;
	const value *x, *y, *z;
	int k, l;
	size_t i;

	switch (c->kind) {
	case EXPR_COND_CMP:
		x = operand(&c->ops[0], item, &o1);
		y = operand(&c->ops[1], item, &o2);
		switch (c->cmp) {
		case EXPR_EQ:
			return equal(x, y);
		case EXPR_NE:
			return !equal(x, y);
		case EXPR_LT:
			return ordered(x, y, &k) && k < 0;
		case EXPR_LE:
			return ordered(x, y, &k) && k <= 0;
		case EXPR_GT:
			return ordered(x, y, &k) && k > 0;
		case EXPR_GE:
			return ordered(x, y, &k) && k >= 0;
		}
		return false;
	case EXPR_COND_BETWEEN:
		x = operand(&c->ops[0], item, &o1);
		y = operand(&c->ops[1], item, &o2);
		z = operand(&c->ops[2], item, &o3);
		return ordered(x, y, &k) && ordered(x, z, &l) && k >= 0 &&
		    l <= 0;
	case EXPR_COND_IN:
		x = operand(&c->ops[0], item, &o1);
		if (x == NULL)
			return false;
		for (i = 1; i < c->nops; i++) {
			if (equal(x, operand(&c->ops[i], item, &o2)))
				return true;
		}
		return false;
	case EXPR_COND_FUNC:
		return function(c, item);
	default:
		return false;
	}
}

bool
expr_eval_condition(const expr_cond *c, const value *item)
{
	bool neg = false;
	size_t i;

	/* NOT chains are walked, not recursed. */
	while (c->kind == EXPR_COND_NOT) {
		neg = !neg;
		c = c->kids[0];
	}
	switch (c->kind) {
	case EXPR_COND_TRUE:
		return !neg;
	case EXPR_COND_AND:
		for (i = 0; i < c->nkids; i++) {
			if (!expr_eval_condition(c->kids[i], item))
				return neg;
		}
		return !neg;
	case EXPR_COND_OR:
		for (i = 0; i < c->nkids; i++) {
			if (expr_eval_condition(c->kids[i], item))
				return !neg;
		}
		return neg;
	default:
		return primitive(c, item) != neg;
	}
}

/* ---- projection ------------------------------------------------------- */

/*
 * The projected paths as a tree: each node is one path element; a leaf
 * takes the whole value found there.
 */
/* project copies the parts of v under node n into *out; false if none. */
static kv_err
project(arena *a, const expr_pnode *n, const value *v, bool top, value *out,
    bool *found)
{
	size_t i, k = 0;
	kv_err e;

	*found = false;
	if (n->leaf) {
		*out = *v;
		*found = true;
		return KV_OK;
	}
	memset(out, 0, sizeof(*out));
	if (v->type == VAL_M) {
		out->type = VAL_M;
		out->u.attrs = arena_alloc(a, (n->nkids + 1) * sizeof(attr));
		if (out->u.attrs == NULL)
			return KV_ENOMEM;
		for (i = 0; i < n->nkids; i++) {
			const expr_pnode *c = n->kids[i];
			const value *cv;
			bool f;

			if (c->key->name == NULL)
				continue;
			cv = item_attr(v, c->key->name, c->key->name_len);
			if (cv == NULL)
				continue;
			e = project(a, c, cv, false, &out->u.attrs[k].v, &f);
			if (e != KV_OK)
				return e;
			if (!f)
				continue;
			out->u.attrs[k].name = c->key->name;
			out->u.attrs[k].name_len = c->key->name_len;
			k++;
		}
		out->len = k;
		*found = k > 0 || top;
		return KV_OK;
	}
	if (v->type == VAL_L) {
		expr_pnode **kids = arena_alloc(a, (n->nkids + 1) * sizeof(*kids));
		size_t m = 0;

		out->type = VAL_L;
		out->u.elems = arena_alloc(a, (n->nkids + 1) * sizeof(value));
		if (kids == NULL || out->u.elems == NULL)
			return KV_ENOMEM;
		for (i = 0; i < n->nkids; i++) {
			if (n->kids[i]->key->name == NULL)
				kids[m++] = n->kids[i];
		}
		qsort(kids, m, sizeof(*kids), expr_pnode_index_cmp);
		for (i = 0; i < m; i++) {
			bool f;

			if (kids[i]->key->index >= v->len)
				continue;
			e = project(a, kids[i],
			    &v->u.elems[kids[i]->key->index], false,
			    &out->u.elems[k], &f);
			if (e != KV_OK)
				return e;
			if (f)
				k++;
		}
		out->len = k;
		*found = k > 0;
		return KV_OK;
	}
	return KV_OK;
}

kv_err
expr_project(arena *a, const value *item, const expr_projection *p,
    value *out)
{
	expr_pnode root;
	size_t i, j;
	bool found;

	memset(&root, 0, sizeof(root));
	for (i = 0; i < p->n; i++) {
		expr_pnode *n = &root;

		for (j = 0; j < p->paths[i].n && !n->leaf; j++) {
			n = expr_pnode_child(a, n, &p->paths[i].elems[j]);
			if (n == NULL)
				return KV_ENOMEM;
		}
		if (!n->leaf) {
			n->leaf = true;
			n->nkids = 0; /* a whole value covers its parts */
		}
	}
	if (item == NULL || item->type != VAL_M || root.leaf) {
		memset(out, 0, sizeof(*out));
		out->type = VAL_M;
		return KV_OK;
	}
	return project(a, &root, item, true, out, &found);
}
