/*
 * expr_check.c — validates a syntax tree and builds the resolved tree of
 * expr.h: placeholders, reserved words, functions and their operands,
 * operand types that are known before evaluation (the :values), path
 * overlaps and conflicts, clause repetition and the limits.
 *
 * DynamoDB does not stop at the first problem it meets: it notes the first
 * problem of each class and then reports the most important class. The
 * classes and their order (taken from dynalite's parsers, which were
 * checked against DynamoDB) are the orders[] below. In conditions the
 * name, operand-count, distinct-operand and function problems are noted
 * per primitive condition (a comparison, BETWEEN, IN or a function): the
 * first primitive with such a problem decides, and within it that order.
 * Evaluation is in expr_eval.c and expr_update.c.
 *
 * FIXME: a few wordings are not confirmed against DynamoDB and were
 * chosen in its style: the operator limit ("The expression contains too
 * many operators; ..."), the IN limit ("The IN operator is provided with
 * too many operands; ..."), and "The function is not allowed in a
 * condition/an update expression; ..." (seen in another emulator). The
 * class of the limits (first, before everything else) is also a guess.
 */
#include "expr_int.h"

#include <stdio.h>
#include <string.h>

typedef enum eclass {
	EC_LIMIT,      /* operators, IN operands, path depth */
	EC_PARENS,     /* "((x))" */
	EC_UNKNOWN_FN, /* unknown function, or not allowed in this kind */
	EC_MISUSED_FN, /* function used as an operand, size() as condition */
	EC_RESERVED,
	EC_CONDITION, /* first primitive's problem (conditions) */
	EC_SECTION,   /* clause used twice (updates) */
	EC_ATTR_NAME, /* undefined #name (updates, projections) */
	EC_ATTR_VAL,  /* undefined :value (updates) */
	EC_OVERLAP,
	EC_CONFLICT,
	EC_OPERAND,  /* ADD/DELETE operand type (updates) */
	EC_FUNCTION, /* function operands (updates) */
	EC_COUNT
} eclass;

/* Per primitive condition, in DynamoDB's order. */
typedef enum pclass {
	PC_NAMEVAL,  /* undefined #name or :value */
	PC_OPERAND,  /* number of operands */
	PC_DISTINCT, /* same path twice */
	PC_FUNCTION, /* operand types, document paths, BETWEEN bounds */
	PC_COUNT
} pclass;

static const eclass cond_order[] = { EC_LIMIT, EC_PARENS, EC_UNKNOWN_FN,
	EC_MISUSED_FN, EC_RESERVED, EC_CONDITION };
static const eclass update_order[] = { EC_LIMIT, EC_RESERVED,
	EC_UNKNOWN_FN, EC_SECTION, EC_ATTR_NAME, EC_ATTR_VAL, EC_OVERLAP,
	EC_CONFLICT, EC_OPERAND, EC_FUNCTION };
static const eclass projection_order[] = { EC_LIMIT, EC_RESERVED,
	EC_ATTR_NAME, EC_OVERLAP, EC_CONFLICT };

typedef struct checker {
	arena *a;
	const expr_src *src;
	expr_ctx *ctx;
	kv_err e; /* KV_ENOMEM once memory ran out */
	char *msg[EC_COUNT];
	bool in_prim;
	char prim[PC_COUNT][EXPR_ERR_MAX];
	bool prim_set[PC_COUNT];
	size_t operators;
	/* paths written so far (updates) or projected (projections) */
	expr_path *paths;
	size_t npaths, paths_cap;
} checker;

static void
vnote(checker *ck, char *buf, const char *fmt, va_list ap)
{
	expr_buf b;
	char tmp[EXPR_ERR_MAX];

	vsnprintf(tmp, sizeof(tmp), fmt, ap);
	expr_buf_init(&b, buf, EXPR_ERR_MAX);
	expr_buf_add(&b, tmp, strlen(tmp));
}

/* note records the first problem of class c. */
static void note(checker *ck, eclass c, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
note(checker *ck, eclass c, const char *fmt, ...)
{
	va_list ap;

	if (ck->msg[c] != NULL)
		return;
	ck->msg[c] = arena_alloc(ck->a, EXPR_ERR_MAX);
	if (ck->msg[c] == NULL) {
		ck->e = KV_ENOMEM;
		return;
	}
	va_start(ap, fmt);
	vnote(ck, ck->msg[c], fmt, ap);
	va_end(ap);
}

/* pnote records the first problem of class c in the current primitive. */
static void pnote(checker *ck, pclass c, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
pnote(checker *ck, pclass c, const char *fmt, ...)
{
	va_list ap;

	if (ck->prim_set[c])
		return;
	ck->prim_set[c] = true;
	va_start(ap, fmt);
	vnote(ck, ck->prim[c], fmt, ap);
	va_end(ap);
}

/* note_path writes "<text>path one: [..], path two: [..]" for c. */
static void
note_paths(checker *ck, eclass c, const char *what, const expr_path *one,
    const expr_path *two)
{
	char buf[EXPR_ERR_MAX];
	expr_buf b;

	if (ck->msg[c] != NULL)
		return;
	expr_buf_init(&b, buf, sizeof(buf));
	expr_buf_addf(&b, "Two document paths %s with each other; must remove "
	    "or rewrite one of these paths; path one: ", what);
	expr_buf_path(&b, one);
	expr_buf_add(&b, ", path two: ", 12);
	expr_buf_path(&b, two);
	note(ck, c, "%s", buf);
}

static void
prim_begin(checker *ck)
{
	ck->in_prim = true;
	memset(ck->prim_set, 0, sizeof(ck->prim_set));
}

static void
prim_end(checker *ck)
{
	int i;

	ck->in_prim = false;
	for (i = 0; i < PC_COUNT; i++) {
		if (ck->prim_set[i]) {
			note(ck, EC_CONDITION, "%s", ck->prim[i]);
			return;
		}
	}
}

static kv_err
finish(checker *ck, const eclass *order, size_t n, expr_err *err)
{
	size_t i;

	if (ck->e != KV_OK)
		return ck->e;
	for (i = 0; i < n; i++) {
		if (ck->msg[order[i]] != NULL)
			return expr_errf(err, ck->src->kind, "%s",
			    ck->msg[order[i]]);
	}
	return KV_OK;
}

static void *
alloc(checker *ck, size_t n)
{
	void *p = arena_alloc(ck->a, n);

	if (p == NULL)
		ck->e = KV_ENOMEM;
	return p;
}

static const expr_tok *
tok(const checker *ck, uint32_t i)
{
	return &ck->src->toks[i];
}

static const char *
tok_text(const checker *ck, uint32_t i)
{
	return ck->src->s + ck->src->toks[i].off;
}

/* ---- names and values ------------------------------------------------ */

/* undefined notes an undefined placeholder in the class of this kind. */
static void
undefined(checker *ck, bool name, uint32_t t)
{
	const char *fmt = name
	    ? "An expression attribute name used in the document path is not "
	      "defined; attribute name: %.*s"
	    : "An expression attribute value used in expression is not "
	      "defined; attribute value: %.*s";
	int len = (int) tok(ck, t)->len;

	if (ck->in_prim)
		pnote(ck, PC_NAMEVAL, fmt, len, tok_text(ck, t));
	else
		note(ck, name ? EC_ATTR_NAME : EC_ATTR_VAL, fmt, len,
		    tok_text(ck, t));
}

/* resolve_path builds the resolved path; false if a name is undefined. */
static bool
resolve_path(checker *ck, const sx_path *sp, expr_path *out)
{
	bool ok = true, nomem = false;
	size_t i;

	out->n = sp->n;
	out->elems = alloc(ck, sp->n * sizeof(expr_path_elem));
	if (out->elems == NULL)
		return false;
	if (sp->n > EXPR_MAX_PATH_DEPTH)
		note(ck, EC_LIMIT, "The document path has too many nesting "
		    "levels; nesting levels: %zu", sp->n);
	for (i = 0; i < sp->n; i++) {
		const sx_elem *se = &sp->elems[i];
		expr_path_elem *e = &out->elems[i];
		const expr_tok *t = tok(ck, se->tok);
		expr_name *nm;

		switch (se->kind) {
		case SX_ELEM_INDEX:
			e->index = se->index;
			break;
		case SX_ELEM_NAME:
			e->name = tok_text(ck, se->tok);
			e->name_len = t->len;
			if (expr_reserved(e->name, e->name_len))
				note(ck, EC_RESERVED, "Attribute name is a "
				    "reserved keyword; reserved keyword: %.*s",
				    (int) t->len, e->name);
			break;
		case SX_ELEM_REF:
			nm = expr_ctx_name(ck->a, ck->ctx,
			    tok_text(ck, se->tok), t->len, &nomem);
			if (nomem)
				ck->e = KV_ENOMEM;
			if (nm == NULL) {
				undefined(ck, true, se->tok);
				ok = false;
				e->name = "";
				break;
			}
			nm->used = true;
			e->name = nm->name;
			e->name_len = nm->name_len;
			break;
		}
	}
	return ok;
}

static const value *
resolve_value(checker *ck, uint32_t t)
{
	bool nomem = false;
	expr_value *v = expr_ctx_value(ck->a, ck->ctx, tok_text(ck, t),
	    tok(ck, t)->len, &nomem);

	if (nomem)
		ck->e = KV_ENOMEM;
	if (v == NULL) {
		undefined(ck, false, t);
		return NULL;
	}
	v->used = true;
	return v->val;
}

/*
 * check_overlap compares p with every path seen so far and remembers it:
 * a common prefix that is the whole of one path is an overlap, a name
 * against an index at the same place is a conflict.
 */
static void
check_overlap(checker *ck, const expr_path *p)
{
	size_t i, j, m;
	expr_path *np;

	for (i = 0; i < ck->npaths; i++) {
		const expr_path *q = &ck->paths[i];

		m = q->n < p->n ? q->n : p->n;
		for (j = 0; j < m; j++) {
			const expr_path_elem *x = &q->elems[j];
			const expr_path_elem *y = &p->elems[j];

			if ((x->name == NULL) != (y->name == NULL)) {
				note_paths(ck, EC_CONFLICT, "conflict", q, p);
				break;
			}
			if (x->name == NULL ? x->index != y->index
					    : (x->name_len != y->name_len ||
						  memcmp(x->name, y->name,
						      x->name_len) != 0))
				break;
		}
		if (j == m) {
			note_paths(ck, EC_OVERLAP, "overlap", q, p);
			return;
		}
	}
	if (ck->npaths == ck->paths_cap) {
		size_t cap = ck->paths_cap ? 2 * ck->paths_cap : 8;

		np = alloc(ck, cap * sizeof(*np));
		if (np == NULL)
			return;
		if (ck->npaths > 0)
			memcpy(np, ck->paths, ck->npaths * sizeof(*np));
		ck->paths = np;
		ck->paths_cap = cap;
	}
	ck->paths[ck->npaths++] = *p;
}

/* ---- functions --------------------------------------------------------- */

static const struct {
	const char *name;
	expr_fn fn;
	size_t arity;
	bool update; /* an UpdateExpression function */
} functions[] = {
	{ "attribute_exists", EXPR_FN_ATTRIBUTE_EXISTS, 1, false },
	{ "attribute_not_exists", EXPR_FN_ATTRIBUTE_NOT_EXISTS, 1, false },
	{ "attribute_type", EXPR_FN_ATTRIBUTE_TYPE, 2, false },
	{ "begins_with", EXPR_FN_BEGINS_WITH, 2, false },
	{ "contains", EXPR_FN_CONTAINS, 2, false },
	{ "size", EXPR_FN_SIZE, 1, false },
	{ "if_not_exists", EXPR_FN_IF_NOT_EXISTS, 2, true },
	{ "list_append", EXPR_FN_LIST_APPEND, 2, true },
};

#define NFUNCTIONS (sizeof(functions) / sizeof(functions[0]))

/* lookup_fn returns the entry for a name (case-sensitive), or -1. */
static int
lookup_fn(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < NFUNCTIONS; i++) {
		if (strlen(functions[i].name) == n &&
		    memcmp(functions[i].name, s, n) == 0)
			return (int) i;
	}
	return -1;
}

static const char *
fn_name(expr_fn fn)
{
	size_t i;

	if (fn == EXPR_FN_PLUS)
		return "+";
	if (fn == EXPR_FN_MINUS)
		return "-";
	for (i = 0; i < NFUNCTIONS; i++) {
		if (functions[i].fn == fn)
			return functions[i].name;
	}
	return "?";
}

/*
 * The type of an operand when it is known before evaluation: a :value's
 * type, N for size(). 0 when unknown (paths, other functions).
 */
static val_type
known_type(const expr_operand *o)
{
	if (o->kind == EXPR_OPND_VALUE)
		return o->val->type;
	if (o->kind == EXPR_OPND_FUNC && o->fn == EXPR_FN_SIZE)
		return VAL_N;
	return 0;
}

/* The type of a :value operand only ("immediate" type), else 0. */
static val_type
value_type(const expr_operand *o)
{
	return o->kind == EXPR_OPND_VALUE ? o->val->type : 0;
}

static bool
orderable(val_type t)
{
	return t == VAL_S || t == VAL_N || t == VAL_B;
}

/* ---- condition operands ------------------------------------------------ */

static bool cond_operand(checker *ck, const sx_opnd *so, expr_operand *o);

/* fn_error notes a function-operand problem in this kind's class. */
static void fn_error(checker *ck, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
fn_error(checker *ck, const char *fmt, ...)
{
	char buf[EXPR_ERR_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (ck->in_prim)
		pnote(ck, PC_FUNCTION, "%s", buf);
	else
		note(ck, EC_FUNCTION, "%s", buf);
}

static void
type_error(checker *ck, const char *fn, val_type t)
{
	fn_error(ck, "Incorrect operand type for operator or function; "
	    "operator or function: %s, operand type: %s", fn,
	    value_type_name(t));
}

/* distinct notes "x op x" where both operands are the same path. */
static void
distinct(checker *ck, const char *op, const expr_operand *x,
    const expr_operand *y)
{
	char buf[EXPR_ERR_MAX];
	expr_buf b;

	if (x->kind != EXPR_OPND_PATH || y->kind != EXPR_OPND_PATH ||
	    !expr_path_eq(&x->path, &y->path))
		return;
	expr_buf_init(&b, buf, sizeof(buf));
	expr_buf_addf(&b, "The first operand must be distinct from the "
	    "remaining operands for this operator or function; operator: "
	    "%s, first operand: ", op);
	expr_buf_path(&b, &x->path);
	pnote(ck, PC_DISTINCT, "%s", buf);
}

/* misused notes a function other than size() used as an operand. */
static void
misused(checker *ck, const expr_operand *o)
{
	if (o->kind == EXPR_OPND_FUNC && o->fn != EXPR_FN_SIZE &&
	    o->fn != EXPR_FN_NONE)
		note(ck, EC_MISUSED_FN, "The function is not allowed to be "
		    "used this way in an expression; function: %s",
		    fn_name(o->fn));
}

/* check_cond_fn runs DynamoDB's checks of one condition function call. */
static void
check_cond_fn(checker *ck, const expr_operand *o)
{
	const expr_operand *args = o->args;
	val_type t;

	if (o->nargs == 2 && o->fn != EXPR_FN_SIZE)
		distinct(ck, fn_name(o->fn), &args[0], &args[1]);
	switch (o->fn) {
	case EXPR_FN_ATTRIBUTE_EXISTS:
	case EXPR_FN_ATTRIBUTE_NOT_EXISTS:
		if (args[0].kind != EXPR_OPND_PATH)
			fn_error(ck, "Operator or function requires a "
			    "document path; operator or function: %s",
			    fn_name(o->fn));
		break;
	case EXPR_FN_BEGINS_WITH:
		for (size_t i = 0; i < 2; i++) {
			t = known_type(&args[i]);
			if (t != 0 && t != VAL_S && t != VAL_B) {
				type_error(ck, "begins_with", t);
				break;
			}
		}
		break;
	case EXPR_FN_ATTRIBUTE_TYPE:
		t = known_type(&args[1]);
		if (t == 0) {
			fn_error(ck, "Incorrect operand type for operator or "
			    "function; operator or function: attribute_type, "
			    "operand type: {NS,SS,L,BS,N,M,B,BOOL,NULL,S}");
		} else if (t != VAL_S) {
			type_error(ck, "attribute_type", t);
		} else if (value_type_from_name(args[1].val->u.bytes,
			       args[1].val->len) == 0) {
			fn_error(ck, "Invalid attribute type name found; "
			    "type: %.*s, valid types: "
			    "{B,NULL,SS,BOOL,L,BS,N,NS,S,M}",
			    (int) args[1].val->len, args[1].val->u.bytes);
		}
		break;
	case EXPR_FN_SIZE:
		t = known_type(&args[0]);
		if (t == VAL_N || t == VAL_BOOL || t == VAL_NULL)
			type_error(ck, "size", t);
		break;
	default:
		break;
	}
}

/*
 * cond_call checks a call in a condition: its arguments first (as DynamoDB
 * does, innermost first), then the call itself.
 */
static bool
cond_call(checker *ck, const sx_opnd *so, expr_operand *o)
{
	const char *name = tok_text(ck, so->tok);
	size_t len = tok(ck, so->tok)->len, i;
	int f;
	bool ok = true;

	o->kind = EXPR_OPND_FUNC;
	o->nargs = so->nargs;
	o->args = alloc(ck, so->nargs * sizeof(expr_operand));
	if (o->args == NULL)
		return false;
	ck->operators++;
	for (i = 0; i < so->nargs; i++)
		ok &= cond_operand(ck, &so->args[i], &o->args[i]);
	for (i = 0; i < so->nargs; i++)
		misused(ck, &o->args[i]);
	f = lookup_fn(name, len);
	if (f < 0 || functions[f].update) {
		if (f < 0)
			note(ck, EC_UNKNOWN_FN, "Invalid function name; "
			    "function: %.*s", (int) len, name);
		else
			note(ck, EC_UNKNOWN_FN, "The function is not allowed "
			    "in a condition expression; function: %.*s",
			    (int) len, name);
		o->fn = EXPR_FN_NONE;
		return false;
	}
	o->fn = functions[f].fn;
	if (so->nargs != functions[f].arity) {
		pnote(ck, PC_OPERAND, "Incorrect number of operands for "
		    "operator or function; operator or function: %s, number "
		    "of operands: %zu", functions[f].name, so->nargs);
		return false;
	}
	if (ok)
		check_cond_fn(ck, o);
	return ok;
}

/* cond_operand resolves one operand; false if something was wrong. */
static bool
cond_operand(checker *ck, const sx_opnd *so, expr_operand *o)
{
	memset(o, 0, sizeof(*o));
	switch (so->kind) {
	case SX_VALUE:
		o->kind = EXPR_OPND_VALUE;
		o->val = resolve_value(ck, so->tok);
		return o->val != NULL;
	case SX_PATH:
		o->kind = EXPR_OPND_PATH;
		return resolve_path(ck, &so->path, &o->path);
	case SX_CALL:
		return cond_call(ck, so, o);
	}
	return false;
}

/* ---- conditions ------------------------------------------------------- */

static const char *const cmp_names[] = {
	[EXPR_EQ] = "=",
	[EXPR_NE] = "<>",
	[EXPR_LT] = "<",
	[EXPR_LE] = "<=",
	[EXPR_GT] = ">",
	[EXPR_GE] = ">=",
};

/* between_bounds checks two :value bounds: same type, lower <= upper. */
static void
between_bounds(checker *ck, const expr_operand *lo, const expr_operand *hi)
{
	const char *what;
	char buf[EXPR_ERR_MAX];
	expr_buf b;

	if (lo->kind != EXPR_OPND_VALUE || hi->kind != EXPR_OPND_VALUE)
		return;
	if (lo->val->type != hi->val->type)
		what = "same data type for lower and upper bounds";
	else if (value_cmp(lo->val, hi->val) > 0)
		what = "upper bound to be greater than or equal to lower "
		       "bound";
	else
		return;
	expr_buf_init(&b, buf, sizeof(buf));
	expr_buf_addf(&b, "The BETWEEN operator requires %s; lower bound "
	    "operand: AttributeValue: ", what);
	expr_buf_value(&b, lo->val);
	expr_buf_add(&b, ", upper bound operand: AttributeValue: ", 39);
	expr_buf_value(&b, hi->val);
	fn_error(ck, "%s", buf);
}

static bool
primitive(checker *ck, const sx_cond *sc, expr_cond *c)
{
	bool ok = true;
	size_t i;

	c->nops = sc->nops;
	c->ops = alloc(ck, sc->nops * sizeof(expr_operand));
	if (c->ops == NULL)
		return false;
	prim_begin(ck);
	if (sc->kind != SX_FUNC)
		ck->operators++;
	for (i = 0; i < sc->nops; i++)
		ok &= cond_operand(ck, &sc->ops[i], &c->ops[i]);
	switch (sc->kind) {
	case SX_FUNC:
		/* The call itself is the condition. */
		c->kind = EXPR_COND_FUNC;
		c->fn = c->ops[0].fn;
		c->nops = c->ops[0].nargs;
		c->ops = c->ops[0].args;
		if (c->fn == EXPR_FN_SIZE)
			note(ck, EC_MISUSED_FN, "The function is not allowed "
			    "to be used this way in an expression; function: "
			    "size");
		break;
	case SX_CMP:
		c->kind = EXPR_COND_CMP;
		c->cmp = sc->cmp;
		misused(ck, &c->ops[0]);
		misused(ck, &c->ops[1]);
		if (!ok)
			break;
		distinct(ck, cmp_names[sc->cmp], &c->ops[0], &c->ops[1]);
		if (sc->cmp == EXPR_EQ || sc->cmp == EXPR_NE)
			break;
		for (i = 0; i < 2; i++) {
			val_type t = value_type(&c->ops[i]);

			if (t != 0 && !orderable(t)) {
				type_error(ck, cmp_names[sc->cmp], t);
				break;
			}
		}
		break;
	case SX_BETWEEN:
		c->kind = EXPR_COND_BETWEEN;
		for (i = 0; i < 3; i++)
			misused(ck, &c->ops[i]);
		if (!ok)
			break;
		for (i = 0; i < 3; i++) {
			val_type t = value_type(&c->ops[i]);

			if (t != 0 && !orderable(t)) {
				type_error(ck, "BETWEEN", t);
				break;
			}
		}
		between_bounds(ck, &c->ops[1], &c->ops[2]);
		break;
	case SX_IN:
		c->kind = EXPR_COND_IN;
		for (i = 0; i < sc->nops; i++)
			misused(ck, &c->ops[i]);
		if (sc->nops > EXPR_MAX_IN_OPERANDS)
			note(ck, EC_LIMIT, "The IN operator is provided with "
			    "too many operands; number of operands: %zu",
			    sc->nops);
		break;
	default:
		break;
	}
	prim_end(ck);
	return ok;
}

static expr_cond *
condition(checker *ck, const sx_cond *sc)
{
	expr_cond *c = alloc(ck, sizeof(*c));
	size_t i;

	if (c == NULL)
		return NULL;
	switch (sc->kind) {
	case SX_AND:
	case SX_OR:
	case SX_NOT:
		c->kind = sc->kind == SX_AND  ? EXPR_COND_AND
		    : sc->kind == SX_OR ? EXPR_COND_OR
					 : EXPR_COND_NOT;
		ck->operators += sc->kind == SX_NOT ? 1 : sc->nkids - 1;
		c->nkids = sc->nkids;
		c->kids = alloc(ck, sc->nkids * sizeof(expr_cond *));
		if (c->kids == NULL)
			return NULL;
		for (i = 0; i < sc->nkids; i++) {
			c->kids[i] = condition(ck, sc->kids[i]);
			if (c->kids[i] == NULL)
				return NULL;
		}
		return c;
	default:
		primitive(ck, sc, c);
		return ck->e == KV_OK ? c : NULL;
	}
}

static void
check_operators(checker *ck)
{
	if (ck->operators > EXPR_MAX_OPERATORS)
		note(ck, EC_LIMIT, "The expression contains too many "
		    "operators; number of operators: %zu", ck->operators);
}

static void
checker_init(checker *ck, arena *a, const expr_src *src, expr_ctx *ctx)
{
	memset(ck, 0, sizeof(*ck));
	ck->a = a;
	ck->src = src;
	ck->ctx = ctx;
}

kv_err
expr_check_condition(arena *a, const expr_src *src, const sx_cond *sc,
    bool redundant_parens, expr_ctx *ctx, expr_cond **out, expr_err *err)
{
	checker ck;
	expr_cond *c;
	kv_err e;

	checker_init(&ck, a, src, ctx);
	if (redundant_parens)
		note(&ck, EC_PARENS, "The expression has redundant "
		    "parentheses;");
	c = condition(&ck, sc);
	check_operators(&ck);
	e = finish(&ck, cond_order, sizeof(cond_order) / sizeof(cond_order[0]),
	    err);
	if (e == KV_OK)
		*out = c;
	return e;
}

/* ---- updates ---------------------------------------------------------- */

static bool upd_operand(checker *ck, const sx_opnd *so, expr_operand *o,
    bool arg);

static void
check_upd_fn(checker *ck, const expr_operand *o)
{
	size_t i;

	switch (o->fn) {
	case EXPR_FN_IF_NOT_EXISTS:
		if (o->args[0].kind != EXPR_OPND_PATH)
			fn_error(ck, "Operator or function requires a "
			    "document path; operator or function: "
			    "if_not_exists");
		break;
	case EXPR_FN_LIST_APPEND:
	case EXPR_FN_PLUS:
	case EXPR_FN_MINUS:
		for (i = 0; i < 2; i++) {
			val_type t = value_type(&o->args[i]);
			val_type want = o->fn == EXPR_FN_LIST_APPEND ? VAL_L
								     : VAL_N;

			if (t != 0 && t != want) {
				type_error(ck, fn_name(o->fn), t);
				break;
			}
		}
		break;
	default:
		break;
	}
}

static bool
upd_call(checker *ck, const sx_opnd *so, expr_operand *o, bool arg)
{
	const char *name = tok_text(ck, so->tok);
	size_t len = tok(ck, so->tok)->len, i;
	bool ok = true;
	int f = -1;

	o->kind = EXPR_OPND_FUNC;
	o->nargs = so->nargs;
	o->args = alloc(ck, so->nargs * sizeof(expr_operand));
	if (o->args == NULL)
		return false;
	ck->operators++;
	for (i = 0; i < so->nargs; i++)
		ok &= upd_operand(ck, &so->args[i], &o->args[i],
		    so->arith == 0);
	if (so->arith != 0) {
		o->fn = so->arith == TK_PLUS ? EXPR_FN_PLUS : EXPR_FN_MINUS;
	} else {
		f = lookup_fn(name, len);
		if (f < 0 || !functions[f].update) {
			if (f < 0)
				note(ck, EC_UNKNOWN_FN, "Invalid function "
				    "name; function: %.*s", (int) len, name);
			else
				note(ck, EC_UNKNOWN_FN, "The function is not "
				    "allowed in an update expression; "
				    "function: %.*s", (int) len, name);
			o->fn = EXPR_FN_NONE;
			return false;
		}
		o->fn = functions[f].fn;
		if (so->nargs != functions[f].arity) {
			fn_error(ck, "Incorrect number of operands for "
			    "operator or function; operator or function: %s, "
			    "number of operands: %zu", functions[f].name,
			    so->nargs);
			return false;
		}
	}
	if (arg && o->fn == EXPR_FN_LIST_APPEND)
		fn_error(ck, "The function is not allowed to be used this way "
		    "in an expression; function: list_append");
	if (ok)
		check_upd_fn(ck, o);
	return ok;
}

/* upd_operand resolves one operand of a SET value; arg: inside a call. */
static bool
upd_operand(checker *ck, const sx_opnd *so, expr_operand *o, bool arg)
{
	memset(o, 0, sizeof(*o));
	switch (so->kind) {
	case SX_VALUE:
		o->kind = EXPR_OPND_VALUE;
		o->val = resolve_value(ck, so->tok);
		return o->val != NULL;
	case SX_PATH:
		o->kind = EXPR_OPND_PATH;
		return resolve_path(ck, &so->path, &o->path);
	case SX_CALL:
		return upd_call(ck, so, o, arg);
	}
	return false;
}

static const char *
long_type_name(val_type t)
{
	switch (t) {
	case VAL_S:
		return "STRING";
	case VAL_N:
		return "NUMBER";
	case VAL_B:
		return "BINARY";
	case VAL_NULL:
		return "NULL";
	case VAL_BOOL:
		return "BOOLEAN";
	case VAL_L:
		return "LIST";
	case VAL_M:
		return "MAP";
	default:
		return value_type_name(t);
	}
}

static const char *const clause_names[] = {
	[EXPR_ACT_SET] = "SET",
	[EXPR_ACT_REMOVE] = "REMOVE",
	[EXPR_ACT_ADD] = "ADD",
	[EXPR_ACT_DELETE] = "DELETE",
};

static void
check_clauses(checker *ck, const sx_update *su)
{
	bool seen[EXPR_ACT_DELETE + 1] = { false };
	size_t i;

	for (i = 0; i < su->nclauses; i++) {
		expr_action_kind k;

		switch (tok(ck, su->clauses[i])->kind) {
		case TK_SET:
			k = EXPR_ACT_SET;
			break;
		case TK_REMOVE:
			k = EXPR_ACT_REMOVE;
			break;
		case TK_ADD:
			k = EXPR_ACT_ADD;
			break;
		default:
			k = EXPR_ACT_DELETE;
			break;
		}
		if (seen[k])
			note(ck, EC_SECTION, "The \"%s\" section can only be "
			    "used once in an update expression;",
			    clause_names[k]);
		seen[k] = true;
	}
}

static void
action(checker *ck, const sx_action *sa, expr_action *a)
{
	bool ok;

	a->kind = sa->kind;
	ok = resolve_path(ck, &sa->path, &a->path);
	if (ok)
		check_overlap(ck, &a->path);
	if (sa->val == NULL)
		return;
	a->val = alloc(ck, sizeof(expr_operand));
	if (a->val == NULL)
		return;
	if (sa->kind == EXPR_ACT_SET) {
		upd_operand(ck, sa->val, a->val, false);
		return;
	}
	a->val->kind = EXPR_OPND_VALUE;
	a->val->val = resolve_value(ck, sa->val->tok);
	if (a->val->val != NULL) {
		val_type t = a->val->val->type;
		bool set = t == VAL_SS || t == VAL_NS || t == VAL_BS;

		if (!set && !(sa->kind == EXPR_ACT_ADD && t == VAL_N))
			note(ck, EC_OPERAND, "Incorrect operand type for "
			    "operator or function; operator: %s, operand "
			    "type: %s", clause_names[sa->kind],
			    long_type_name(t));
	}
}

kv_err
expr_check_update(arena *a, const expr_src *src, const sx_update *su,
    expr_ctx *ctx, expr_update **out, expr_err *err)
{
	expr_update *u;
	checker ck;
	size_t i;
	kv_err e;

	checker_init(&ck, a, src, ctx);
	u = alloc(&ck, sizeof(*u));
	if (u == NULL)
		return KV_ENOMEM;
	u->n = su->n;
	u->actions = alloc(&ck, su->n * sizeof(expr_action));
	if (u->actions == NULL)
		return KV_ENOMEM;
	check_clauses(&ck, su);
	for (i = 0; i < su->n && ck.e == KV_OK; i++)
		action(&ck, &su->actions[i], &u->actions[i]);
	check_operators(&ck);
	e = finish(&ck, update_order,
	    sizeof(update_order) / sizeof(update_order[0]), err);
	if (e == KV_OK)
		*out = u;
	return e;
}

/* ---- projections ------------------------------------------------------ */

kv_err
expr_check_projection(arena *a, const expr_src *src, const sx_projection *sp,
    expr_ctx *ctx, expr_projection **out, expr_err *err)
{
	expr_projection *p;
	checker ck;
	size_t i;
	kv_err e;

	checker_init(&ck, a, src, ctx);
	p = alloc(&ck, sizeof(*p));
	if (p == NULL)
		return KV_ENOMEM;
	p->n = sp->n;
	p->paths = alloc(&ck, sp->n * sizeof(expr_path));
	if (p->paths == NULL)
		return KV_ENOMEM;
	for (i = 0; i < sp->n && ck.e == KV_OK; i++) {
		if (resolve_path(&ck, &sp->paths[i], &p->paths[i]))
			check_overlap(&ck, &p->paths[i]);
	}
	e = finish(&ck, projection_order,
	    sizeof(projection_order) / sizeof(projection_order[0]), err);
	if (e == KV_OK)
		*out = p;
	return e;
}
