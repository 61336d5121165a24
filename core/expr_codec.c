/*
 * expr_codec.c — expression trees in binary, so the router can send the
 * node a condition or an update it has already parsed and checked (from
 * expression text or from the legacy parameters alike) and the node never
 * parses text or sees JSON.
 *
 * Layout (varints are LEB128, values are core/codec.h bytes behind a
 * varint length):
 *   path     n, then per element: 0 name-len name | 1 index
 *   operand  kind; PATH: path | VALUE: value | FUNC: fn nargs operand...
 *   cond     kind cmp fn nops operand... nkids cond...
 *   update   legacy n, then per action: kind path has-val [operand]
 * Decoding checks every count against the bytes left and bounds the
 * nesting, so hostile bytes give KV_CORRUPT, never a crash.
 */
#include "expr_codec.h"

#include <stdlib.h>
#include <string.h>

#include "codec.h"

#define DEPTH_MAX (2 * EXPR_MAX_NESTING + 8)

typedef struct wbuf {
	uint8_t *p;
	size_t len, cap;
	bool oom;
} wbuf;

/* Makes room for n more bytes; false (and w->oom) when out of memory. */
static bool
reserve(wbuf *w, size_t n)
{
	if (w->oom)
		return false;
	if (w->len + n > w->cap) {
		size_t cap = w->cap == 0 ? 256 : w->cap;
		while (cap < w->len + n)
			cap *= 2;
		uint8_t *np = realloc(w->p, cap);
		if (np == NULL) {
			w->oom = true;
			return false;
		}
		w->p = np;
		w->cap = cap;
	}
	return true;
}

static void
put(wbuf *w, const void *src, size_t n)
{
	if (n > 0 && reserve(w, n)) {
		memcpy(w->p + w->len, src, n);
		w->len += n;
	}
}

static void
put_byte(wbuf *w, uint8_t b)
{
	put(w, &b, 1);
}

static void
put_varint(wbuf *w, uint64_t v)
{
	uint8_t b[10];
	size_t n = 0;
	do {
		b[n] = (uint8_t) (v & 0x7f);
		v >>= 7;
		if (v != 0)
			b[n] |= 0x80;
		n++;
	} while (v != 0);
	put(w, b, n);
}

static void
put_path(wbuf *w, const expr_path *p)
{
	put_varint(w, p->n);
	for (size_t i = 0; i < p->n; i++) {
		const expr_path_elem *e = &p->elems[i];
		if (e->name != NULL) {
			put_byte(w, 0);
			put_varint(w, e->name_len);
			put(w, e->name, e->name_len);
		} else {
			put_byte(w, 1);
			put_varint(w, e->index);
		}
	}
}

static void
put_value(wbuf *w, const value *v)
{
	size_t n = codec_size(v);
	put_varint(w, n);
	if (reserve(w, n))
		w->len += codec_write(v, w->p + w->len);
}

static void
put_operand(wbuf *w, const expr_operand *o)
{
	put_byte(w, (uint8_t) o->kind);
	switch (o->kind) {
	case EXPR_OPND_PATH:
		put_path(w, &o->path);
		break;
	case EXPR_OPND_VALUE:
		put_value(w, o->val);
		break;
	case EXPR_OPND_FUNC:
		put_byte(w, (uint8_t) o->fn);
		put_varint(w, o->nargs);
		for (size_t i = 0; i < o->nargs; i++)
			put_operand(w, &o->args[i]);
		break;
	}
}

static void
put_cond(wbuf *w, const expr_cond *c)
{
	put_byte(w, (uint8_t) c->kind);
	put_byte(w, (uint8_t) c->cmp);
	put_byte(w, (uint8_t) c->fn);
	put_varint(w, c->nops);
	for (size_t i = 0; i < c->nops; i++)
		put_operand(w, &c->ops[i]);
	put_varint(w, c->nkids);
	for (size_t i = 0; i < c->nkids; i++)
		put_cond(w, c->kids[i]);
}

static kv_err
finish(wbuf *w, uint8_t **out, size_t *len)
{
	if (w->oom) {
		free(w->p);
		return KV_ENOMEM;
	}
	*out = w->p != NULL ? w->p : malloc(1);
	*len = w->len;
	return *out != NULL ? KV_OK : KV_ENOMEM;
}

kv_err
expr_codec_encode_cond(const expr_cond *c, uint8_t **out, size_t *len)
{
	wbuf w = { 0 };
	put_cond(&w, c);
	return finish(&w, out, len);
}

kv_err
expr_codec_encode_update(const expr_update *u, uint8_t **out, size_t *len)
{
	wbuf w = { 0 };
	put_byte(&w, u->legacy ? 1 : 0);
	put_varint(&w, u->n);
	for (size_t i = 0; i < u->n; i++) {
		const expr_action *a = &u->actions[i];
		put_byte(&w, (uint8_t) a->kind);
		put_path(&w, &a->path);
		put_byte(&w, a->val != NULL ? 1 : 0);
		if (a->val != NULL)
			put_operand(&w, a->val);
	}
	return finish(&w, out, len);
}

/* ---- decoding -------------------------------------------------------- */

typedef struct rbuf {
	arena *a;
	const uint8_t *p;
	size_t left;
	kv_err rv; /* first failure; KV_OK while all is well */
} rbuf;

static bool
fail(rbuf *r, kv_err e)
{
	if (r->rv == KV_OK)
		r->rv = e;
	return false;
}

static bool
get_byte(rbuf *r, uint8_t *b)
{
	if (r->left < 1)
		return fail(r, KV_CORRUPT);
	*b = *r->p++;
	r->left--;
	return true;
}

static bool
get_varint(rbuf *r, uint64_t *v)
{
	*v = 0;
	for (int shift = 0; shift < 64; shift += 7) {
		uint8_t b;
		if (!get_byte(r, &b))
			return false;
		*v |= (uint64_t) (b & 0x7f) << shift;
		if ((b & 0x80) == 0)
			return true;
	}
	return fail(r, KV_CORRUPT);
}

/* A count of things that take at least `each` bytes apiece. */
static bool
get_count(rbuf *r, size_t each, size_t *n)
{
	uint64_t v;
	if (!get_varint(r, &v))
		return false;
	if (v > r->left / each)
		return fail(r, KV_CORRUPT);
	*n = (size_t) v;
	return true;
}

static void *
alloc(rbuf *r, size_t n, size_t size)
{
	void *p = arena_alloc(r->a, (n > 0 ? n : 1) * size);
	if (p == NULL)
		fail(r, KV_ENOMEM);
	return p;
}

static bool
get_path(rbuf *r, expr_path *p)
{
	if (!get_count(r, 2, &p->n))
		return false;
	if (p->n == 0 || p->n > EXPR_MAX_PATH_DEPTH * 4)
		return fail(r, KV_CORRUPT);
	if ((p->elems = alloc(r, p->n, sizeof(*p->elems))) == NULL)
		return false;
	for (size_t i = 0; i < p->n; i++) {
		expr_path_elem *e = &p->elems[i];
		uint8_t tag;
		uint64_t v;
		if (!get_byte(r, &tag))
			return false;
		if (tag == 0) {
			size_t n;
			if (!get_count(r, 1, &n))
				return false;
			e->name = (const char *) r->p;
			e->name_len = n;
			r->p += n;
			r->left -= n;
		} else if (tag == 1) {
			if (!get_varint(r, &v) || v > UINT32_MAX)
				return fail(r, KV_CORRUPT);
			e->index = (uint32_t) v;
		} else {
			return fail(r, KV_CORRUPT);
		}
	}
	return true;
}

static bool
get_value(rbuf *r, const value **out)
{
	size_t n;
	value *v;
	if (!get_count(r, 1, &n) || (v = alloc(r, 1, sizeof(*v))) == NULL)
		return false;
	kv_err e = codec_decode(r->a, r->p, n, v);
	if (e != KV_OK)
		return fail(r, e);
	r->p += n;
	r->left -= n;
	*out = v;
	return true;
}

/*
 * Whether o is a path or a value: where DynamoDB takes either as a
 * function's operand, so the decoder must take what the parser built.
 */
static bool
path_or_value(const expr_operand *o)
{
	return o->kind == EXPR_OPND_PATH || o->kind == EXPR_OPND_VALUE;
}

static bool
get_operand(rbuf *r, expr_operand *o, int depth)
{
	uint8_t b;
	if (depth > DEPTH_MAX)
		return fail(r, KV_CORRUPT);
	memset(o, 0, sizeof(*o));
	if (!get_byte(r, &b))
		return false;
	o->kind = (expr_operand_kind) b;
	switch (o->kind) {
	case EXPR_OPND_PATH:
		return get_path(r, &o->path);
	case EXPR_OPND_VALUE:
		return get_value(r, &o->val);
	case EXPR_OPND_FUNC:
		if (!get_byte(r, &b))
			return false;
		o->fn = (expr_fn) b;
		if (!get_count(r, 1, &o->nargs) ||
		    (o->args = alloc(r, o->nargs, sizeof(*o->args))) == NULL)
			return false;
		for (size_t i = 0; i < o->nargs; i++)
			if (!get_operand(r, &o->args[i], depth + 1))
				return false;
		/* Only the shapes the parser builds, which evaluation expects. */
		switch (o->fn) {
		case EXPR_FN_SIZE:
			/* size(:v) is the size of the literal (DynamoDB). */
			if (o->nargs != 1 || !path_or_value(&o->args[0]))
				return fail(r, KV_CORRUPT);
			return true;
		case EXPR_FN_IF_NOT_EXISTS:
			if (o->nargs != 2 || o->args[0].kind != EXPR_OPND_PATH)
				return fail(r, KV_CORRUPT);
			return true;
		case EXPR_FN_LIST_APPEND:
		case EXPR_FN_PLUS:
		case EXPR_FN_MINUS:
			if (o->nargs != 2)
				return fail(r, KV_CORRUPT);
			return true;
		default:
			return fail(r, KV_CORRUPT);
		}
	}
	return fail(r, KV_CORRUPT);
}

static bool
get_cond(rbuf *r, expr_cond **out, int depth)
{
	uint8_t kind, cmp, fn;
	expr_cond *c;
	if (depth > DEPTH_MAX)
		return fail(r, KV_CORRUPT);
	if ((c = alloc(r, 1, sizeof(*c))) == NULL || !get_byte(r, &kind) ||
	    !get_byte(r, &cmp) || !get_byte(r, &fn))
		return false;
	if (kind < EXPR_COND_CMP || kind > EXPR_COND_TRUE ||
	    cmp > EXPR_GE || fn > EXPR_FN_MINUS)
		return fail(r, KV_CORRUPT);
	c->kind = (expr_cond_kind) kind;
	c->cmp = (expr_cmp) cmp;
	c->fn = (expr_fn) fn;
	if (!get_count(r, 1, &c->nops) ||
	    (c->ops = alloc(r, c->nops, sizeof(*c->ops))) == NULL)
		return false;
	for (size_t i = 0; i < c->nops; i++)
		if (!get_operand(r, &c->ops[i], depth + 1))
			return false;
	if (!get_count(r, 1, &c->nkids) ||
	    (c->kids = alloc(r, c->nkids, sizeof(*c->kids))) == NULL)
		return false;
	for (size_t i = 0; i < c->nkids; i++)
		if (!get_cond(r, &c->kids[i], depth + 1))
			return false;
	/* The shapes the evaluator relies on. */
	switch (c->kind) {
	case EXPR_COND_CMP:
		if (c->nops != 2 || c->cmp == 0)
			return fail(r, KV_CORRUPT);
		break;
	case EXPR_COND_BETWEEN:
		if (c->nops != 3)
			return fail(r, KV_CORRUPT);
		break;
	case EXPR_COND_IN:
		if (c->nops < 2)
			return fail(r, KV_CORRUPT);
		break;
	case EXPR_COND_FUNC:
		switch (c->fn) {
		case EXPR_FN_ATTRIBUTE_EXISTS:
		case EXPR_FN_ATTRIBUTE_NOT_EXISTS:
			if (c->nops != 1 || c->ops[0].kind != EXPR_OPND_PATH)
				return fail(r, KV_CORRUPT);
			break;
		case EXPR_FN_ATTRIBUTE_TYPE:
			/* attribute_type(:v, :t) tests the literal, and
			 * attribute_type(size(a), :t) a size. */
			if (c->nops != 2 || c->ops[1].kind != EXPR_OPND_VALUE)
				return fail(r, KV_CORRUPT);
			break;
		case EXPR_FN_BEGINS_WITH:
		case EXPR_FN_CONTAINS:
		case EXPR_FN_NOT_CONTAINS:
			if (c->nops != 2)
				return fail(r, KV_CORRUPT);
			break;
		default:
			return fail(r, KV_CORRUPT);
		}
		break;
	case EXPR_COND_AND:
	case EXPR_COND_OR:
		if (c->nkids < 1)
			return fail(r, KV_CORRUPT);
		break;
	case EXPR_COND_NOT:
		if (c->nkids != 1)
			return fail(r, KV_CORRUPT);
		break;
	case EXPR_COND_TRUE:
		break;
	}
	*out = c;
	return true;
}

kv_err
expr_codec_decode_cond(arena *a, const uint8_t *buf, size_t len,
    expr_cond **out)
{
	rbuf r = { .a = a, .p = buf, .left = len, .rv = KV_OK };
	if (get_cond(&r, out, 0) && r.left != 0)
		fail(&r, KV_CORRUPT);
	return r.rv;
}

kv_err
expr_codec_decode_update(arena *a, const uint8_t *buf, size_t len,
    expr_update **out)
{
	rbuf r = { .a = a, .p = buf, .left = len, .rv = KV_OK };
	expr_update *u = alloc(&r, 1, sizeof(*u));
	uint8_t legacy;
	if (u == NULL || !get_byte(&r, &legacy) || legacy > 1 ||
	    !get_count(&r, 3, &u->n) ||
	    (u->actions = alloc(&r, u->n, sizeof(*u->actions))) == NULL)
		return r.rv != KV_OK ? r.rv : KV_CORRUPT;
	u->legacy = legacy == 1;
	for (size_t i = 0; i < u->n; i++) {
		expr_action *act = &u->actions[i];
		uint8_t kind, has;
		if (!get_byte(&r, &kind) || kind < EXPR_ACT_SET ||
		    kind > EXPR_ACT_DELETE)
			return r.rv != KV_OK ? r.rv : KV_CORRUPT;
		act->kind = (expr_action_kind) kind;
		if (!get_path(&r, &act->path) || !get_byte(&r, &has) ||
		    has > 1)
			return r.rv != KV_OK ? r.rv : KV_CORRUPT;
		/* SET, ADD and DELETE carry an operand; legacy DELETE may not. */
		if (has == 0 && act->kind != EXPR_ACT_REMOVE &&
		    !(u->legacy && act->kind == EXPR_ACT_DELETE))
			return KV_CORRUPT;
		if (has == 1) {
			act->val = alloc(&r, 1, sizeof(*act->val));
			if (act->val == NULL || !get_operand(&r, act->val, 0))
				return r.rv != KV_OK ? r.rv : KV_CORRUPT;
			/* ADD and DELETE take a value; REMOVE takes nothing. */
			if ((act->kind != EXPR_ACT_SET &&
			    act->val->kind != EXPR_OPND_VALUE) ||
			    act->kind == EXPR_ACT_REMOVE)
				return KV_CORRUPT;
		}
	}
	if (r.left != 0)
		return KV_CORRUPT;
	*out = u;
	return KV_OK;
}
