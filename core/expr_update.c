/*
 * expr_update.c — applies an update (UpdateExpression or AttributeUpdates)
 * to an item, as DynamoDB does.
 *
 * First every SET operand is computed from the old item, so "SET a = b,
 * b = a" swaps. Then the actions' paths are merged into a tree and the
 * tree is applied to the old item in one walk, copying only what changes:
 * list positions refer to the old list ("REMOVE a[1], a[2]" removes the
 * second and third elements; "SET a[9]" past the end appends, several such
 * in index order). Nothing is written to the caller's item. Parsing is
 * expr_parse.c's and expr_check.c's; conditions are expr_eval.c's.
 */
#include "expr_int.h"

#include <stdlib.h>
#include <string.h>

static const char MSG_MISSING[] = "The provided expression refers to an "
				  "attribute that does not exist in the item";
static const char MSG_TYPE[] = "An operand in the update expression has "
			       "an incorrect data type";
static const char MSG_PATH[] = "The document path provided in the update "
			       "expression is invalid for update";
static const char MSG_MISMATCH[] = "Type mismatch for attribute to update";

typedef struct updater {
	arena *a;
	const expr_update *u;
	const value *old;
	expr_err *err;
} updater;

static kv_err
fail(updater *up, const char *msg)
{
	return expr_errf(up->err, 0, "%s", msg);
}

/* ---- SET operands ------------------------------------------------------ */

static kv_err
new_number(updater *up, const number *n, value *out)
{
	memset(out, 0, sizeof(*out));
	out->type = VAL_N;
	out->u.num = arena_alloc(up->a, sizeof(number));
	if (out->u.num == NULL)
		return KV_ENOMEM;
	*out->u.num = *n;
	return KV_OK;
}

static kv_err eval(updater *up, const expr_operand *o, value *out);

static kv_err
eval_typed(updater *up, const expr_operand *o, val_type t, value *out)
{
	kv_err e = eval(up, o, out);

	if (e == KV_OK && out->type != t)
		return fail(up, MSG_TYPE);
	return e;
}

/* eval computes a SET operand on the old item. */
static kv_err
eval(updater *up, const expr_operand *o, value *out)
{
	const value *v;
	value x, y;
	number n;
	const char *msg;
	kv_err e;

	switch (o->kind) {
	case EXPR_OPND_VALUE:
		*out = *o->val;
		return KV_OK;
	case EXPR_OPND_PATH:
		v = up->old != NULL ? expr_path_get(up->old, &o->path) : NULL;
		if (v == NULL)
			return fail(up, MSG_MISSING);
		*out = *v;
		return KV_OK;
	case EXPR_OPND_FUNC:
		break;
	}
	switch (o->fn) {
	case EXPR_FN_IF_NOT_EXISTS:
		v = NULL;
		if (up->old != NULL && o->args[0].kind == EXPR_OPND_PATH)
			v = expr_path_get(up->old, &o->args[0].path);
		if (v != NULL) {
			*out = *v;
			return KV_OK;
		}
		return eval(up, &o->args[1], out);
	case EXPR_FN_LIST_APPEND:
		if ((e = eval_typed(up, &o->args[0], VAL_L, &x)) != KV_OK ||
		    (e = eval_typed(up, &o->args[1], VAL_L, &y)) != KV_OK)
			return e;
		memset(out, 0, sizeof(*out));
		out->type = VAL_L;
		out->len = x.len + y.len;
		out->u.elems = arena_alloc(up->a,
		    (out->len + 1) * sizeof(value));
		if (out->u.elems == NULL)
			return KV_ENOMEM;
		if (x.len > 0)
			memcpy(out->u.elems, x.u.elems, x.len * sizeof(value));
		if (y.len > 0)
			memcpy(out->u.elems + x.len, y.u.elems,
			    y.len * sizeof(value));
		return KV_OK;
	case EXPR_FN_PLUS:
	case EXPR_FN_MINUS:
		if ((e = eval_typed(up, &o->args[0], VAL_N, &x)) != KV_OK ||
		    (e = eval_typed(up, &o->args[1], VAL_N, &y)) != KV_OK)
			return e;
		e = o->fn == EXPR_FN_PLUS
		    ? number_add(x.u.num, y.u.num, &n, &msg)
		    : number_sub(x.u.num, y.u.num, &n, &msg);
		if (e != KV_OK)
			return fail(up, msg);
		return new_number(up, &n, out);
	default:
		return fail(up, MSG_TYPE);
	}
}

/* ---- ADD and DELETE ---------------------------------------------------- */

static bool
is_set(val_type t)
{
	return t == VAL_SS || t == VAL_NS || t == VAL_BS;
}

static int
member_cmp(const void *x, const void *y)
{
	return value_cmp(*(const value *const *) x, *(const value *const *) y);
}

/* sorted returns pointers to the members of set, in value order. */
static const value **
sorted(updater *up, const value *set)
{
	const value **p = arena_alloc(up->a, (set->len + 1) * sizeof(*p));
	size_t i;

	if (p == NULL)
		return NULL;
	for (i = 0; i < set->len; i++)
		p[i] = &set->u.elems[i];
	qsort(p, set->len, sizeof(*p), member_cmp);
	return p;
}

static bool
has_member(const value **sorted_set, size_t n, const value *m)
{
	return bsearch(&m, sorted_set, n, sizeof(*sorted_set), member_cmp) !=
	    NULL;
}

/*
 * merge builds cur's members followed by those of val that cur lacks
 * (union), or cur's members that val lacks (difference). Members of one
 * set have one type (S, N or B), which value_cmp orders, so membership is
 * a binary search: O((n + m) log n) for sets of any size.
 */
static kv_err
merge(updater *up, const value *cur, const value *val, bool add, value *out)
{
	const value **in_cur = NULL, **in_val = NULL;
	size_t i, k = 0;

	*out = *cur;
	out->u.elems = arena_alloc(up->a,
	    (cur->len + val->len + 1) * sizeof(value));
	if (add)
		in_cur = sorted(up, cur);
	else
		in_val = sorted(up, val);
	if (out->u.elems == NULL || (in_cur == NULL && in_val == NULL))
		return KV_ENOMEM;
	for (i = 0; i < cur->len; i++) {
		if (add || !has_member(in_val, val->len, &cur->u.elems[i]))
			out->u.elems[k++] = cur->u.elems[i];
	}
	for (i = 0; add && i < val->len; i++) {
		if (!has_member(in_cur, cur->len, &val->u.elems[i]))
			out->u.elems[k++] = val->u.elems[i];
	}
	out->len = k;
	return KV_OK;
}

/* add applies ADD val to cur (NULL when missing). */
static kv_err
add(updater *up, const value *cur, const value *val, value *out)
{
	const char *mismatch = up->u->legacy ? MSG_MISMATCH : MSG_TYPE;
	const char *msg;
	number n;
	value tmp;
	kv_err e;

	if (cur == NULL) {
		*out = *val;
		return KV_OK;
	}
	if (cur->type != val->type)
		return fail(up, mismatch);
	switch (val->type) {
	case VAL_N:
		if (number_add(cur->u.num, val->u.num, &n, &msg) != KV_OK)
			return fail(up, msg);
		return new_number(up, &n, out);
	case VAL_SS:
	case VAL_NS:
	case VAL_BS:
		return merge(up, cur, val, true, out);
	case VAL_L:
		if (!up->u->legacy)
			return fail(up, MSG_TYPE);
		tmp = *cur;
		tmp.len = cur->len + val->len;
		tmp.u.elems = arena_alloc(up->a,
		    (tmp.len + 1) * sizeof(value));
		if (tmp.u.elems == NULL)
			return KV_ENOMEM;
		if (cur->len > 0)
			memcpy(tmp.u.elems, cur->u.elems,
			    cur->len * sizeof(value));
		if (val->len > 0)
			memcpy(tmp.u.elems + cur->len, val->u.elems,
			    val->len * sizeof(value));
		*out = tmp;
		return KV_OK;
	default:
		e = fail(up, mismatch);
		return e;
	}
}

/* del applies DELETE val to cur; *present false when nothing remains. */
static kv_err
del(updater *up, const value *cur, const value *val, value *out,
    bool *present)
{
	kv_err e;

	*present = false;
	if (cur == NULL)
		return KV_OK;
	if (!is_set(val->type) || cur->type != val->type)
		return fail(up, up->u->legacy ? MSG_MISMATCH : MSG_TYPE);
	e = merge(up, cur, val, false, out);
	if (e == KV_OK)
		*present = out->len > 0;
	return e;
}

/* ---- the tree of paths ------------------------------------------------ */

static kv_err apply_node(updater *up, const expr_pnode *n, const value *cur,
    int depth, value *out, bool *present);

static kv_err
apply_map(updater *up, const expr_pnode *n, const value *old, int depth,
    value *out)
{
	size_t len = old != NULL ? old->len : 0, i, k;
	bool *gone;
	kv_err e;

	memset(out, 0, sizeof(*out));
	out->type = VAL_M;
	out->u.attrs = arena_alloc(up->a, (len + n->nkids + 1) * sizeof(attr));
	gone = arena_alloc(up->a, len + 1);
	if (out->u.attrs == NULL || gone == NULL)
		return KV_ENOMEM;
	if (len > 0)
		memcpy(out->u.attrs, old->u.attrs, len * sizeof(attr));
	k = len;
	for (i = 0; i < n->nkids; i++) {
		const expr_pnode *c = n->kids[i];
		const value *cur = NULL;
		size_t pos;
		value nv;
		bool present;

		if (c->key->name == NULL)
			return fail(up, MSG_PATH);
		for (pos = 0; pos < len; pos++) {
			const attr *at = &old->u.attrs[pos];

			if (at->name_len == c->key->name_len &&
			    memcmp(at->name, c->key->name, at->name_len) ==
				0) {
				cur = &at->v;
				break;
			}
		}
		e = apply_node(up, c, cur, depth, &nv, &present);
		if (e != KV_OK)
			return e;
		if (cur != NULL) {
			if (present)
				out->u.attrs[pos].v = nv;
			else
				gone[pos] = true;
		} else if (present) {
			out->u.attrs[k].name = c->key->name;
			out->u.attrs[k].name_len = c->key->name_len;
			out->u.attrs[k].v = nv;
			k++;
		}
	}
	/* Drop removed attributes, keeping the order of the rest. */
	out->len = 0;
	for (i = 0; i < k; i++) {
		if (i < len && gone[i])
			continue;
		out->u.attrs[out->len++] = out->u.attrs[i];
	}
	return KV_OK;
}

static kv_err
apply_list(updater *up, const expr_pnode *n, const value *old, int depth,
    value *out)
{
	expr_pnode **kids;
	size_t i, j = 0, k = 0;
	kv_err e;

	kids = arena_alloc(up->a, (n->nkids + 1) * sizeof(*kids));
	*out = *old;
	out->u.elems = arena_alloc(up->a,
	    (old->len + n->nkids + 1) * sizeof(value));
	if (kids == NULL || out->u.elems == NULL)
		return KV_ENOMEM;
	for (i = 0; i < n->nkids; i++) {
		if (n->kids[i]->key->name != NULL)
			return fail(up, MSG_PATH);
		kids[i] = n->kids[i];
	}
	qsort(kids, n->nkids, sizeof(*kids), expr_pnode_index_cmp);
	/* Positions are those of the old list; past its end, append. */
	for (i = 0; i < old->len || j < n->nkids; i++) {
		const value *cur = i < old->len ? &old->u.elems[i] : NULL;
		bool present;
		value nv;

		if (cur != NULL &&
		    (j == n->nkids || kids[j]->key->index != i)) {
			out->u.elems[k++] = *cur;
			continue;
		}
		e = apply_node(up, kids[j++], cur, depth, &nv, &present);
		if (e != KV_OK)
			return e;
		if (present)
			out->u.elems[k++] = nv;
	}
	out->len = k;
	return KV_OK;
}

/*
 * apply_node computes the new value of the path ending at n, whose old
 * value is cur (NULL when missing), at nesting depth depth (0 for a
 * top-level attribute). *present is false when the result is removed.
 */
static kv_err
apply_node(updater *up, const expr_pnode *n, const value *cur, int depth,
    value *out, bool *present)
{
	kv_err e;

	*present = true;
	if (n->act == NULL) {
		if (cur == NULL || n->nkids == 0)
			return fail(up, MSG_PATH);
		if (n->kids[0]->key->name != NULL) {
			if (cur->type != VAL_M)
				return fail(up, MSG_PATH);
			return apply_map(up, n, cur, depth + 1, out);
		}
		if (cur->type != VAL_L)
			return fail(up, MSG_PATH);
		return apply_list(up, n, cur, depth + 1, out);
	}
	switch (n->act->kind) {
	case EXPR_ACT_SET:
		*out = *n->set;
		break;
	case EXPR_ACT_REMOVE:
		*present = false;
		return KV_OK;
	case EXPR_ACT_ADD:
		e = add(up, cur, n->act->val->val, out);
		if (e != KV_OK)
			return e;
		break;
	case EXPR_ACT_DELETE:
		if (n->act->val == NULL) { /* legacy DELETE without a value */
			*present = false;
			return KV_OK;
		}
		return del(up, cur, n->act->val->val, out, present);
	}
	if (depth + expr_value_height(out, VALUE_MAX_DEPTH) > VALUE_MAX_DEPTH)
		return fail(up, VALUE_NESTING_MSG);
	return KV_OK;
}

kv_err
expr_apply_update(arena *a, const expr_update *u, const value *old_item,
    value *new_item, expr_err *err)
{
	updater up = { .a = a, .u = u, .old = old_item, .err = err };
	value *vals;
	expr_pnode root;
	size_t i, j;
	kv_err e;

	vals = arena_alloc(a, (u->n + 1) * sizeof(value));
	if (vals == NULL)
		return KV_ENOMEM;
	/* Every SET operand reads the old item, before any write. */
	for (i = 0; i < u->n; i++) {
		if (u->actions[i].kind != EXPR_ACT_SET)
			continue;
		e = eval(&up, u->actions[i].val, &vals[i]);
		if (e != KV_OK)
			return e;
	}
	memset(&root, 0, sizeof(root));
	for (i = 0; i < u->n; i++) {
		const expr_action *act = &u->actions[i];
		expr_pnode *n = &root;

		/* Removing from an item that does not exist does nothing. */
		if (act->kind == EXPR_ACT_REMOVE && old_item == NULL)
			continue;
		for (j = 0; j < act->path.n; j++) {
			if (n->act != NULL)
				return fail(&up, MSG_PATH);
			n = expr_pnode_child(a, n, &act->path.elems[j]);
			if (n == NULL)
				return KV_ENOMEM;
		}
		if (n->act != NULL || n->nkids > 0 || act->path.n == 0)
			return fail(&up, MSG_PATH);
		n->act = act;
		n->set = &vals[i];
	}
	if (old_item != NULL && old_item->type != VAL_M)
		return fail(&up, MSG_PATH);
	return apply_map(&up, &root, old_item, 0, new_item);
}
