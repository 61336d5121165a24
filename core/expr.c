/*
 * expr.c — the small pieces every expr_*.c file uses: expression kind
 * names, message formatting (prefixes, paths, operand values), the
 * placeholder context and its lookups, and the public parse entry points
 * that run lexer, parser and checker in turn.
 *
 * Grammar lives in expr_parse.c, validation in expr_check.c; read expr.h
 * first.
 */
#include "expr_int.h"

#include <stdio.h>
#include <string.h>

static const char *const kind_names[] = {
	[EXPR_CONDITION] = "ConditionExpression",
	[EXPR_FILTER] = "FilterExpression",
	[EXPR_KEY_CONDITION] = "KeyConditionExpression",
	[EXPR_UPDATE] = "UpdateExpression",
	[EXPR_PROJECTION] = "ProjectionExpression",
};

const char *
expr_kind_name(expr_kind k)
{
	if ((size_t) k >= sizeof(kind_names) / sizeof(kind_names[0]) ||
	    kind_names[k] == NULL)
		return "Expression";
	return kind_names[k];
}

/* ---- message buffers ------------------------------------------------ */

void
expr_buf_init(expr_buf *b, char *p, size_t cap)
{
	b->p = p;
	b->len = 0;
	b->cap = cap;
	if (cap > 0)
		p[0] = '\0';
}

void
expr_buf_add(expr_buf *b, const char *s, size_t n)
{
	size_t room;

	if (b->cap == 0)
		return;
	room = b->cap - 1 - b->len;
	if (n > room)
		n = room;
	if (n > 0)
		memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void
buf_vaddf(expr_buf *b, const char *fmt, va_list ap)
{
	int n;

	if (b->cap == 0 || b->len + 1 >= b->cap)
		return;
	n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
	if (n < 0)
		return;
	b->len += (size_t) n;
	if (b->len > b->cap - 1)
		b->len = b->cap - 1;
}

void
expr_buf_addf(expr_buf *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	buf_vaddf(b, fmt, ap);
	va_end(ap);
}

kv_err
expr_errf(expr_err *err, expr_kind kind, const char *fmt, ...)
{
	expr_buf b;
	va_list ap;

	expr_buf_init(&b, err->msg, sizeof(err->msg));
	if (kind != 0)
		expr_buf_addf(&b, "Invalid %s: ", expr_kind_name(kind));
	va_start(ap, fmt);
	buf_vaddf(&b, fmt, ap);
	va_end(ap);
	return KV_EINVAL;
}

void
expr_buf_path(expr_buf *b, const expr_path *p)
{
	size_t i;

	expr_buf_add(b, "[", 1);
	for (i = 0; i < p->n; i++) {
		const expr_path_elem *e = &p->elems[i];

		if (i > 0)
			expr_buf_add(b, ", ", 2);
		if (e->name != NULL)
			expr_buf_add(b, e->name, e->name_len);
		else
			expr_buf_addf(b, "[%u]", (unsigned) e->index);
	}
	expr_buf_add(b, "]", 1);
}

static void
buf_base64(expr_buf *b, const unsigned char *p, size_t n)
{
	static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmn"
				  "opqrstuvwxyz0123456789+/";
	char out[4];
	size_t i;

	for (i = 0; i < n; i += 3) {
		uint32_t w = (uint32_t) p[i] << 16;

		if (i + 1 < n)
			w |= (uint32_t) p[i + 1] << 8;
		if (i + 2 < n)
			w |= p[i + 2];
		out[0] = tab[(w >> 18) & 63];
		out[1] = tab[(w >> 12) & 63];
		out[2] = i + 1 < n ? tab[(w >> 6) & 63] : '=';
		out[3] = i + 2 < n ? tab[w & 63] : '=';
		expr_buf_add(b, out, 4);
		if (b->len + 1 >= b->cap)
			return;
	}
}

void
expr_buf_value(expr_buf *b, const value *v)
{
	char num[NUMBER_FMT_MAX];
	size_t n;

	expr_buf_addf(b, "{%s:", value_type_name(v->type));
	switch (v->type) {
	case VAL_S:
		expr_buf_add(b, v->u.bytes, v->len);
		break;
	case VAL_N:
		n = number_format(v->u.num, num);
		expr_buf_add(b, num, n);
		break;
	case VAL_B:
		buf_base64(b, (const unsigned char *) v->u.bytes, v->len);
		break;
	case VAL_BOOL:
		expr_buf_addf(b, "%s", v->b ? "true" : "false");
		break;
	case VAL_NULL:
		expr_buf_addf(b, "true");
		break;
	default:
		expr_buf_addf(b, "...");
		break;
	}
	expr_buf_add(b, "}", 1);
}

/* ---- placeholder context --------------------------------------------- */

void
expr_ctx_init(expr_ctx *ctx, expr_name *names, size_t nnames,
    expr_value *values, size_t nvalues)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->names = names;
	ctx->nnames = nnames;
	ctx->values = values;
	ctx->nvalues = nvalues;
}

static bool
key_ok(const char *k, size_t n, char lead)
{
	size_t i;

	if (n < 2 || k[0] != lead)
		return false;
	for (i = 1; i < n; i++) {
		char c = k[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			(c >= '0' && c <= '9') || c == '_'))
			return false;
	}
	return true;
}

kv_err
expr_ctx_check_keys(const expr_ctx *ctx, expr_err *err)
{
	size_t i;

	for (i = 0; i < ctx->nnames; i++) {
		const expr_name *e = &ctx->names[i];

		if (!key_ok(e->key, e->key_len, '#'))
			return expr_errf(err, 0,
			    "ExpressionAttributeNames contains invalid key: "
			    "Syntax error; key: \"%.*s\"",
			    (int) e->key_len, e->key);
	}
	for (i = 0; i < ctx->nvalues; i++) {
		const expr_value *e = &ctx->values[i];

		if (!key_ok(e->key, e->key_len, ':'))
			return expr_errf(err, 0,
			    "ExpressionAttributeValues contains invalid key: "
			    "Syntax error; key: \"%.*s\"",
			    (int) e->key_len, e->key);
	}
	return KV_OK;
}

kv_err
expr_ctx_check_unused(const expr_ctx *ctx, expr_err *err)
{
	expr_buf b;
	bool any = false;
	size_t i;

	expr_buf_init(&b, err->msg, sizeof(err->msg));
	for (i = 0; i < ctx->nnames; i++) {
		if (ctx->names[i].used)
			continue;
		expr_buf_add(&b, any ? ", " : "Value provided in "
		    "ExpressionAttributeNames unused in expressions: keys: {",
		    any ? 2 : strlen("Value provided in ExpressionAttribute"
				     "Names unused in expressions: keys: {"));
		expr_buf_add(&b, ctx->names[i].key, ctx->names[i].key_len);
		any = true;
	}
	if (any) {
		expr_buf_add(&b, "}", 1);
		return KV_EINVAL;
	}
	for (i = 0; i < ctx->nvalues; i++) {
		if (ctx->values[i].used)
			continue;
		expr_buf_add(&b, any ? ", " : "Value provided in "
		    "ExpressionAttributeValues unused in expressions: keys: {",
		    any ? 2 : strlen("Value provided in ExpressionAttribute"
				     "Values unused in expressions: keys: {"));
		expr_buf_add(&b, ctx->values[i].key, ctx->values[i].key_len);
		any = true;
	}
	if (any) {
		expr_buf_add(&b, "}", 1);
		return KV_EINVAL;
	}
	return KV_OK;
}

/* Below this many entries a lookup scans; above, it uses a hash index. */
#define SCAN_MAX 8

static uint32_t
hash_key(const char *s, size_t n)
{
	uint32_t h = 2166136261u;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ (uint8_t) s[i]) * 16777619u;
	return h;
}

/*
 * build_index returns an open-addressing table of *slots entries (a power
 * of two, at least twice n) holding 1 + the position of each key, or NULL.
 * keyof(i) yields key i. A duplicate key keeps its first position.
 */
static uint32_t *
build_index(arena *a, size_t n, const char *(*keyof)(const void *, size_t,
    size_t *), const void *arr, size_t *slots)
{
	size_t cap = 16, i;
	uint32_t *t;

	while (cap < 2 * n)
		cap *= 2;
	t = arena_alloc(a, cap * sizeof(*t));
	if (t == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		size_t len, j;
		const char *k = keyof(arr, i, &len);

		j = hash_key(k, len) & (cap - 1);
		while (t[j] != 0)
			j = (j + 1) & (cap - 1);
		t[j] = (uint32_t) (i + 1);
	}
	*slots = cap;
	return t;
}

static const char *
name_key(const void *arr, size_t i, size_t *len)
{
	const expr_name *e = (const expr_name *) arr + i;

	*len = e->key_len;
	return e->key;
}

static const char *
value_key(const void *arr, size_t i, size_t *len)
{
	const expr_value *e = (const expr_value *) arr + i;

	*len = e->key_len;
	return e->key;
}

/* find returns the position of key in the table, or -1. */
static long
find(const uint32_t *t, size_t slots, const void *arr,
    const char *(*keyof)(const void *, size_t, size_t *), const char *key,
    size_t len)
{
	size_t j = hash_key(key, len) & (slots - 1);

	while (t[j] != 0) {
		size_t klen;
		const char *k = keyof(arr, t[j] - 1, &klen);

		if (klen == len && memcmp(k, key, len) == 0)
			return (long) t[j] - 1;
		j = (j + 1) & (slots - 1);
	}
	return -1;
}

static long
lookup(arena *a, uint32_t **index, size_t *slots, const void *arr,
    size_t n, const char *(*keyof)(const void *, size_t, size_t *),
    const char *key, size_t len, bool *nomem)
{
	size_t i;

	if (n <= SCAN_MAX) {
		for (i = 0; i < n; i++) {
			size_t klen;
			const char *k = keyof(arr, i, &klen);

			if (klen == len && memcmp(k, key, len) == 0)
				return (long) i;
		}
		return -1;
	}
	if (*index == NULL) {
		*index = build_index(a, n, keyof, arr, slots);
		if (*index == NULL) {
			*nomem = true;
			return -1;
		}
	}
	return find(*index, *slots, arr, keyof, key, len);
}

expr_name *
expr_ctx_name(arena *a, expr_ctx *ctx, const char *key, size_t len,
    bool *nomem)
{
	long i = lookup(a, &ctx->name_index_, &ctx->name_slots_, ctx->names,
	    ctx->nnames, name_key, key, len, nomem);

	return i < 0 ? NULL : &ctx->names[i];
}

expr_value *
expr_ctx_value(arena *a, expr_ctx *ctx, const char *key, size_t len,
    bool *nomem)
{
	long i = lookup(a, &ctx->value_index_, &ctx->value_slots_,
	    ctx->values, ctx->nvalues, value_key, key, len, nomem);

	return i < 0 ? NULL : &ctx->values[i];
}

/* ---- paths ----------------------------------------------------------- */

bool
expr_path_eq(const expr_path *x, const expr_path *y)
{
	size_t i;

	if (x->n != y->n)
		return false;
	for (i = 0; i < x->n; i++) {
		const expr_path_elem *a = &x->elems[i], *b = &y->elems[i];

		if ((a->name == NULL) != (b->name == NULL))
			return false;
		if (a->name == NULL) {
			if (a->index != b->index)
				return false;
		} else if (a->name_len != b->name_len ||
		    (a->name_len > 0 &&
			memcmp(a->name, b->name, a->name_len) != 0)) {
			return false;
		}
	}
	return true;
}

kv_err
expr_path_top(arena *a, const char *attr, size_t len, expr_path *out)
{
	out->elems = arena_alloc(a, sizeof(expr_path_elem));
	if (out->elems == NULL)
		return KV_ENOMEM;
	out->elems[0].name = attr;
	out->elems[0].name_len = len;
	out->n = 1;
	return KV_OK;
}

int
expr_value_height(const value *v, int limit)
{
	int h = 0, c;
	size_t i;

	if (limit < 0)
		return 1;
	switch (v->type) {
	case VAL_L:
		for (i = 0; i < v->len && h <= limit; i++) {
			c = 1 + expr_value_height(&v->u.elems[i], limit - 1);
			if (c > h)
				h = c;
		}
		return h;
	case VAL_M:
		for (i = 0; i < v->len && h <= limit; i++) {
			c = 1 + expr_value_height(&v->u.attrs[i].v,
				    limit - 1);
			if (c > h)
				h = c;
		}
		return h;
	default:
		return 0;
	}
}

/* ---- entry points ----------------------------------------------------- */

/*
 * prepare checks what DynamoDB checks before parsing: the expression is
 * not empty (nor only blanks) and not longer than EXPR_MAX_LEN. Condition
 * and filter expressions report their size, the others do not.
 */
static kv_err
prepare(arena *a, expr_kind kind, const char *s, size_t len, expr_src *src,
    expr_err *err)
{
	size_t i;

	if (len > EXPR_MAX_LEN) {
		if (kind == EXPR_CONDITION || kind == EXPR_FILTER)
			return expr_errf(err, kind, "Expression size has "
			    "exceeded the maximum allowed size; expression "
			    "size: %zu", len);
		return expr_errf(err, kind, "Expression size has exceeded "
		    "the maximum allowed size;");
	}
	for (i = 0; i < len; i++) {
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\n' &&
		    s[i] != '\r')
			break;
	}
	if (i == len)
		return expr_errf(err, kind,
		    "The expression can not be empty;");
	return expr_lex_run(a, kind, s, len, src);
}

kv_err
expr_parse_condition(arena *a, expr_kind kind, const char *s, size_t len,
    expr_ctx *ctx, expr_cond **out, expr_err *err)
{
	expr_src src;
	sx_cond *c;
	bool parens = false;
	kv_err e;

	if (kind != EXPR_CONDITION && kind != EXPR_FILTER &&
	    kind != EXPR_KEY_CONDITION)
		kind = EXPR_CONDITION;
	e = prepare(a, kind, s, len, &src, err);
	if (e == KV_OK)
		e = expr_parse_sx_condition(a, &src, &c, &parens, err);
	if (e == KV_OK)
		e = expr_check_condition(a, &src, c, parens, ctx, out, err);
	return e;
}

kv_err
expr_parse_update(arena *a, const char *s, size_t len, expr_ctx *ctx,
    expr_update **out, expr_err *err)
{
	expr_src src;
	sx_update *u;
	kv_err e;

	e = prepare(a, EXPR_UPDATE, s, len, &src, err);
	if (e == KV_OK)
		e = expr_parse_sx_update(a, &src, &u, err);
	if (e == KV_OK)
		e = expr_check_update(a, &src, u, ctx, out, err);
	return e;
}

kv_err
expr_parse_projection(arena *a, const char *s, size_t len, expr_ctx *ctx,
    expr_projection **out, expr_err *err)
{
	expr_src src;
	sx_projection *p;
	kv_err e;

	e = prepare(a, EXPR_PROJECTION, s, len, &src, err);
	if (e == KV_OK)
		e = expr_parse_sx_projection(a, &src, &p, err);
	if (e == KV_OK)
		e = expr_check_projection(a, &src, p, ctx, out, err);
	return e;
}

kv_err
expr_update_paths(arena *a, const expr_update *u, expr_projection *out)
{
	size_t i;

	out->n = u->n;
	out->paths = NULL;
	if (u->n == 0)
		return KV_OK;
	out->paths = arena_alloc(a, u->n * sizeof(expr_path));
	if (out->paths == NULL)
		return KV_ENOMEM;
	for (i = 0; i < u->n; i++)
		out->paths[i] = u->actions[i].path;
	return KV_OK;
}

bool
expr_elem_eq(const expr_path_elem *x, const expr_path_elem *y)
{
	if ((x->name == NULL) != (y->name == NULL))
		return false;
	if (x->name == NULL)
		return x->index == y->index;
	return x->name_len == y->name_len &&
	    (x->name_len == 0 || memcmp(x->name, y->name, x->name_len) == 0);
}

expr_pnode *
expr_pnode_child(arena *a, expr_pnode *n, const expr_path_elem *key)
{
	expr_pnode *k;
	size_t i;

	for (i = 0; i < n->nkids; i++) {
		if (expr_elem_eq(n->kids[i]->key, key))
			return n->kids[i];
	}
	if (n->nkids == n->cap) {
		size_t cap = n->cap ? 2 * n->cap : 4;
		expr_pnode **nk = arena_alloc(a, cap * sizeof(*nk));

		if (nk == NULL)
			return NULL;
		if (n->nkids > 0)
			memcpy(nk, n->kids, n->nkids * sizeof(*nk));
		n->kids = nk;
		n->cap = cap;
	}
	k = arena_alloc(a, sizeof(*k));
	if (k == NULL)
		return NULL;
	k->key = key;
	n->kids[n->nkids++] = k;
	return k;
}

int
expr_pnode_index_cmp(const void *x, const void *y)
{
	uint32_t a = (*(expr_pnode *const *) x)->key->index;
	uint32_t b = (*(expr_pnode *const *) y)->key->index;

	return a < b ? -1 : a > b;
}
