/*
 * expr_parse.c — the grammars of condition, update and projection
 * expressions, as a recursive descent parser over expr_lex.c's tokens. It
 * builds syntax trees (expr_int.h) and reports only syntax errors; names,
 * values, functions and types are checked afterwards by expr_check.c, in
 * the order DynamoDB reports them.
 *
 * Conditions need one trick: after "(" the parser cannot tell a grouped
 * condition "(a = b)" from a grouped operand "(a) = b". It parses a cover:
 * a condition, or an operand that the caller turns into a condition (a
 * function call such as attribute_exists(a)) or rejects (a bare path).
 * This keeps the parser linear, without backtracking. Recursion happens
 * only for "(" and function calls and is bounded by EXPR_MAX_NESTING; NOT
 * chains and AND/OR lists are loops.
 */
#include "expr_int.h"

#include <string.h>

typedef struct parser {
	arena *a;
	const expr_src *src;
	size_t pos;
	int depth;
	bool redundant; /* saw "((x))" */
	kv_err e;       /* first failure; KV_OK while parsing goes on */
	expr_err *err;
} parser;

/* A growing array in the arena (old copies are left behind). */
typedef struct vec {
	void *p;
	size_t n, cap, size;
} vec;

static bool
vec_push(parser *p, vec *v, const void *elem)
{
	if (v->n == v->cap) {
		size_t cap = v->cap ? 2 * v->cap : 4;
		void *np = arena_alloc(p->a, cap * v->size);

		if (np == NULL) {
			p->e = KV_ENOMEM;
			return false;
		}
		if (v->n > 0)
			memcpy(np, v->p, v->n * v->size);
		v->p = np;
		v->cap = cap;
	}
	memcpy((char *) v->p + v->n * v->size, elem, v->size);
	v->n++;
	return true;
}

static void *
alloc(parser *p, size_t n)
{
	void *q = arena_alloc(p->a, n);

	if (q == NULL && p->e == KV_OK)
		p->e = KV_ENOMEM;
	return q;
}

static tok_kind
peek(const parser *p)
{
	return p->src->toks[p->pos].kind;
}

static tok_kind
peek2(const parser *p)
{
	if (p->pos + 1 >= p->src->ntoks)
		return TK_EOF;
	return p->src->toks[p->pos + 1].kind;
}

static void
advance(parser *p)
{
	if (p->src->toks[p->pos].kind != TK_EOF)
		p->pos++;
}

/* fail records a syntax error at the current token (first one wins). */
static void
fail(parser *p)
{
	if (p->e != KV_OK)
		return;
	p->e = KV_EINVAL;
	expr_lex_syntax_error(p->src, p->pos, p->err);
}

static bool
expect(parser *p, tok_kind k)
{
	if (p->e != KV_OK)
		return false;
	if (peek(p) != k) {
		fail(p);
		return false;
	}
	advance(p);
	return true;
}

/* enter counts one level of nesting; too deep is a syntax error here. */
static bool
enter(parser *p)
{
	if (++p->depth > EXPR_MAX_NESTING) {
		fail(p);
		return false;
	}
	return true;
}

/* ---- paths ------------------------------------------------------------ */

static bool
path_elem(parser *p, vec *elems, sx_elem_kind kind)
{
	sx_elem el = { .kind = kind, .tok = (uint32_t) p->pos };

	if (kind == SX_ELEM_INDEX) {
		const expr_tok *t = &p->src->toks[p->pos];
		uint64_t v = 0;
		uint32_t i;

		for (i = 0; i < t->len; i++) {
			v = v * 10 + (uint64_t) (p->src->s[t->off + i] - '0');
			if (v > INT32_MAX) {
				fail(p);
				return false;
			}
		}
		el.index = (uint32_t) v;
	}
	advance(p);
	return vec_push(p, elems, &el);
}

/* path_tail parses ('.' name | '[' int ']')* after a path's first name. */
static bool
path_tail(parser *p, vec *elems)
{
	for (;;) {
		if (p->e != KV_OK)
			return false;
		if (peek(p) == TK_DOT) {
			advance(p);
			if (peek(p) == TK_NAME) {
				path_elem(p, elems, SX_ELEM_NAME);
			} else if (peek(p) == TK_NAMEREF) {
				path_elem(p, elems, SX_ELEM_REF);
			} else {
				fail(p);
				return false;
			}
		} else if (peek(p) == TK_LBRACK) {
			advance(p);
			if (peek(p) != TK_INT) {
				fail(p);
				return false;
			}
			if (!path_elem(p, elems, SX_ELEM_INDEX))
				return false;
			if (!expect(p, TK_RBRACK))
				return false;
		} else {
			return true;
		}
	}
}

static bool
parse_path(parser *p, sx_path *out)
{
	vec elems = { .size = sizeof(sx_elem) };

	if (peek(p) == TK_NAME)
		path_elem(p, &elems, SX_ELEM_NAME);
	else if (peek(p) == TK_NAMEREF)
		path_elem(p, &elems, SX_ELEM_REF);
	else
		fail(p);
	if (p->e != KV_OK || !path_tail(p, &elems))
		return false;
	out->elems = elems.p;
	out->n = elems.n;
	return true;
}

/* continue_path extends a grouped path "(a.b).c" in place. */
static bool
continue_path(parser *p, sx_path *path)
{
	vec elems = { .p = path->elems, .n = path->n, .cap = path->n,
		.size = sizeof(sx_elem) };

	if (peek(p) != TK_DOT && peek(p) != TK_LBRACK)
		return false;
	if (!path_tail(p, &elems))
		return false;
	path->elems = elems.p;
	path->n = elems.n;
	return true;
}

/* ---- operands ---------------------------------------------------------- */

typedef sx_opnd *(*opnd_fn)(parser *p, bool *parens);

static sx_opnd *cond_operand_parens(parser *p, bool *parens);
static sx_opnd *upd_operand_parens(parser *p, bool *parens);

/*
 * operand parses a :value, a path or a call name(args...), where each
 * argument is parsed by arg (which allows the grammar's parentheses).
 */
static sx_opnd *
operand(parser *p, opnd_fn arg)
{
	sx_opnd *o = alloc(p, sizeof(*o));
	vec args = { .size = sizeof(sx_opnd) };
	bool parens;

	if (o == NULL)
		return NULL;
	switch (peek(p)) {
	case TK_VALREF:
		o->kind = SX_VALUE;
		o->tok = (uint32_t) p->pos;
		advance(p);
		return o;
	case TK_NAME:
		if (peek2(p) == TK_LPAREN)
			break;
		/* fall through */
	case TK_NAMEREF:
		o->kind = SX_PATH;
		return parse_path(p, &o->path) ? o : NULL;
	default:
		fail(p);
		return NULL;
	}
	o->kind = SX_CALL;
	o->tok = (uint32_t) p->pos;
	if (!enter(p))
		return NULL;
	advance(p);
	advance(p);
	for (;;) {
		sx_opnd *x = arg(p, &parens);

		if (x == NULL || !vec_push(p, &args, x))
			return NULL;
		if (peek(p) != TK_COMMA)
			break;
		advance(p);
	}
	if (!expect(p, TK_RPAREN))
		return NULL;
	p->depth--;
	o->args = args.p;
	o->nargs = args.n;
	return o;
}

/*
 * cond_operand_parens parses an operand of the condition grammar, which
 * may be wrapped in parentheses: "(x)" is fine, "((x))" is redundant, and
 * a grouped path may go on: "(a.b).c". *parens tells whether the result
 * is exactly "( ... )".
 */
static sx_opnd *
cond_operand_parens(parser *p, bool *parens)
{
	sx_opnd *o;
	bool inner;

	*parens = false;
	if (peek(p) != TK_LPAREN)
		return operand(p, cond_operand_parens);
	if (!enter(p))
		return NULL;
	advance(p);
	o = cond_operand_parens(p, &inner);
	if (o == NULL || !expect(p, TK_RPAREN))
		return NULL;
	p->depth--;
	if (inner)
		p->redundant = true;
	*parens = true;
	if (o->kind == SX_PATH && continue_path(p, &o->path))
		*parens = false;
	return p->e == KV_OK ? o : NULL;
}

/* ---- conditions -------------------------------------------------------- */

/* A condition, or an operand the caller may still compare or reject. */
typedef struct cover {
	sx_cond *cond;
	sx_opnd *opnd;
	bool parens;
} cover;

static bool parse_or(parser *p, cover *out);

static sx_cond *
new_cond(parser *p, sx_cond_kind kind)
{
	sx_cond *c = alloc(p, sizeof(*c));

	if (c != NULL)
		c->kind = kind;
	return c;
}

/*
 * to_cond turns a cover into a condition: a call becomes a function
 * condition, a bare path or value is a syntax error at the current token.
 */
static sx_cond *
to_cond(parser *p, const cover *cv)
{
	sx_cond *c;

	if (cv->cond != NULL)
		return cv->cond;
	if (cv->opnd->kind != SX_CALL) {
		fail(p);
		return NULL;
	}
	c = new_cond(p, SX_FUNC);
	if (c == NULL)
		return NULL;
	c->ops = cv->opnd;
	c->nops = 1;
	return c;
}

static bool
is_comparator(tok_kind k, expr_cmp *cmp)
{
	switch (k) {
	case TK_EQ:
		*cmp = EXPR_EQ;
		return true;
	case TK_NE:
		*cmp = EXPR_NE;
		return true;
	case TK_LT:
		*cmp = EXPR_LT;
		return true;
	case TK_LE:
		*cmp = EXPR_LE;
		return true;
	case TK_GT:
		*cmp = EXPR_GT;
		return true;
	case TK_GE:
		*cmp = EXPR_GE;
		return true;
	default:
		return false;
	}
}

/* tail parses what may follow a left operand x: a comparator, BETWEEN
 * or IN; otherwise x stays an operand cover. */
static bool
tail(parser *p, sx_opnd *x, bool parens, cover *out)
{
	vec ops = { .size = sizeof(sx_opnd) };
	sx_cond *c;
	expr_cmp cmp;
	bool par;

	memset(out, 0, sizeof(*out));
	if (!vec_push(p, &ops, x))
		return false;
	if (is_comparator(peek(p), &cmp)) {
		advance(p);
		c = new_cond(p, SX_CMP);
		if (c == NULL)
			return false;
		c->cmp = cmp;
	} else if (peek(p) == TK_BETWEEN) {
		advance(p);
		c = new_cond(p, SX_BETWEEN);
		if (c == NULL)
			return false;
	} else if (peek(p) == TK_IN) {
		advance(p);
		c = new_cond(p, SX_IN);
		if (c == NULL || !expect(p, TK_LPAREN))
			return false;
	} else {
		out->opnd = x;
		out->parens = parens;
		return true;
	}
	for (;;) {
		sx_opnd *y = cond_operand_parens(p, &par);

		if (y == NULL || !vec_push(p, &ops, y))
			return false;
		if (c->kind == SX_CMP)
			break;
		if (c->kind == SX_BETWEEN) {
			if (ops.n == 3)
				break;
			if (!expect(p, TK_AND))
				return false;
			continue;
		}
		if (peek(p) != TK_COMMA)
			break;
		advance(p);
	}
	if (c->kind == SX_IN && !expect(p, TK_RPAREN))
		return false;
	c->ops = ops.p;
	c->nops = ops.n;
	out->cond = c;
	return true;
}

static bool
parse_primary(parser *p, cover *out)
{
	sx_opnd *x;
	cover in;

	if (peek(p) != TK_LPAREN) {
		x = operand(p, cond_operand_parens);
		return x != NULL && tail(p, x, false, out);
	}
	if (!enter(p))
		return false;
	advance(p);
	if (!parse_or(p, &in) || !expect(p, TK_RPAREN))
		return false;
	p->depth--;
	if (in.parens)
		p->redundant = true;
	if (in.cond != NULL) {
		memset(out, 0, sizeof(*out));
		out->cond = in.cond;
		out->parens = true;
		return true;
	}
	x = in.opnd;
	if (x->kind == SX_PATH && continue_path(p, &x->path))
		return p->e == KV_OK && tail(p, x, false, out);
	return p->e == KV_OK && tail(p, x, true, out);
}

static bool
parse_not(parser *p, cover *out)
{
	size_t nots = 0;
	sx_cond *c;

	while (peek(p) == TK_NOT) {
		advance(p);
		nots++;
	}
	if (!parse_primary(p, out))
		return false;
	if (nots == 0)
		return true;
	c = to_cond(p, out);
	while (c != NULL && nots-- > 0) {
		sx_cond *n = new_cond(p, SX_NOT);

		if (n == NULL)
			return false;
		n->kids = alloc(p, sizeof(sx_cond *));
		if (n->kids == NULL)
			return false;
		n->kids[0] = c;
		n->nkids = 1;
		c = n;
	}
	memset(out, 0, sizeof(*out));
	out->cond = c;
	return c != NULL;
}

/* list parses sub (sep sub)*, joining two or more into an AND/OR node. */
static bool
parse_list(parser *p, tok_kind sep, sx_cond_kind kind,
    bool (*sub)(parser *, cover *), cover *out)
{
	vec kids = { .size = sizeof(sx_cond *) };
	sx_cond *c;

	if (!sub(p, out))
		return false;
	if (peek(p) != sep)
		return true;
	c = to_cond(p, out);
	if (c == NULL || !vec_push(p, &kids, &c))
		return false;
	while (peek(p) == sep) {
		cover cv;

		advance(p);
		if (!sub(p, &cv))
			return false;
		c = to_cond(p, &cv);
		if (c == NULL || !vec_push(p, &kids, &c))
			return false;
	}
	c = new_cond(p, kind);
	if (c == NULL)
		return false;
	c->kids = kids.p;
	c->nkids = kids.n;
	memset(out, 0, sizeof(*out));
	out->cond = c;
	return true;
}

static bool
parse_and(parser *p, cover *out)
{
	return parse_list(p, TK_AND, SX_AND, parse_not, out);
}

static bool
parse_or(parser *p, cover *out)
{
	return parse_list(p, TK_OR, SX_OR, parse_and, out);
}

static void
parser_init(parser *p, arena *a, const expr_src *src, expr_err *err)
{
	memset(p, 0, sizeof(*p));
	p->a = a;
	p->src = src;
	p->err = err;
}

kv_err
expr_parse_sx_condition(arena *a, const expr_src *src, sx_cond **out,
    bool *redundant_parens, expr_err *err)
{
	parser p;
	cover cv;
	sx_cond *c = NULL;

	parser_init(&p, a, src, err);
	if (parse_or(&p, &cv))
		c = to_cond(&p, &cv);
	if (c != NULL)
		expect(&p, TK_EOF);
	if (p.e == KV_OK && c == NULL)
		fail(&p);
	*out = c;
	*redundant_parens = p.redundant;
	return p.e;
}

/* ---- updates ------------------------------------------------------------ */

/*
 * upd_operand_parens parses an operand of the update grammar, with at most
 * one pair of parentheses around it.
 */
static sx_opnd *
upd_operand_parens(parser *p, bool *parens)
{
	sx_opnd *o;

	*parens = false;
	if (peek(p) != TK_LPAREN)
		return operand(p, upd_operand_parens);
	if (!enter(p))
		return NULL;
	advance(p);
	o = operand(p, upd_operand_parens);
	if (o == NULL || !expect(p, TK_RPAREN))
		return NULL;
	p->depth--;
	*parens = true;
	return o;
}

/* arith builds x + y or x - y (op is the operator token). */
static sx_opnd *
arith(parser *p, sx_opnd *x, size_t op)
{
	sx_opnd *o = alloc(p, sizeof(*o)), *y;
	bool parens;

	if (o == NULL)
		return NULL;
	o->kind = SX_CALL;
	o->tok = (uint32_t) op;
	o->arith = p->src->toks[op].kind;
	o->args = alloc(p, 2 * sizeof(sx_opnd));
	if (o->args == NULL)
		return NULL;
	y = upd_operand_parens(p, &parens);
	if (y == NULL)
		return NULL;
	o->args[0] = *x;
	o->args[1] = *y;
	o->nargs = 2;
	return o;
}

/* set_value_inner: operand [('+' | '-') operand]. */
static sx_opnd *
set_value_inner(parser *p)
{
	sx_opnd *x;
	bool parens;

	x = upd_operand_parens(p, &parens);
	if (x == NULL)
		return NULL;
	if (peek(p) != TK_PLUS && peek(p) != TK_MINUS)
		return x;
	advance(p);
	return arith(p, x, p->pos - 1);
}

/*
 * set_value: set_value_inner, or one in parentheses. "(a) + b" is read as
 * a grouped operand followed by + (the parentheses held one operand).
 */
static sx_opnd *
set_value(parser *p)
{
	sx_opnd *x;

	if (peek(p) != TK_LPAREN)
		return set_value_inner(p);
	if (!enter(p))
		return NULL;
	advance(p);
	x = set_value_inner(p);
	if (x == NULL || !expect(p, TK_RPAREN))
		return NULL;
	p->depth--;
	if ((peek(p) == TK_PLUS || peek(p) == TK_MINUS) && x->arith == 0) {
		advance(p);
		return arith(p, x, p->pos - 1);
	}
	return x;
}

static bool
parse_action(parser *p, expr_action_kind kind, uint32_t clause, vec *acts)
{
	sx_action act = { .kind = kind, .clause = clause };

	if (!parse_path(p, &act.path))
		return false;
	switch (kind) {
	case EXPR_ACT_SET:
		if (!expect(p, TK_EQ))
			return false;
		act.val = set_value(p);
		if (act.val == NULL)
			return false;
		break;
	case EXPR_ACT_ADD:
	case EXPR_ACT_DELETE:
		if (peek(p) != TK_VALREF) {
			fail(p);
			return false;
		}
		act.val = alloc(p, sizeof(sx_opnd));
		if (act.val == NULL)
			return false;
		act.val->kind = SX_VALUE;
		act.val->tok = (uint32_t) p->pos;
		advance(p);
		break;
	case EXPR_ACT_REMOVE:
		break;
	}
	return vec_push(p, acts, &act);
}

static bool
clause_kind(tok_kind k, expr_action_kind *kind)
{
	switch (k) {
	case TK_SET:
		*kind = EXPR_ACT_SET;
		return true;
	case TK_REMOVE:
		*kind = EXPR_ACT_REMOVE;
		return true;
	case TK_ADD:
		*kind = EXPR_ACT_ADD;
		return true;
	case TK_DELETE:
		*kind = EXPR_ACT_DELETE;
		return true;
	default:
		return false;
	}
}

kv_err
expr_parse_sx_update(arena *a, const expr_src *src, sx_update **out,
    expr_err *err)
{
	vec acts = { .size = sizeof(sx_action) };
	vec clauses = { .size = sizeof(uint32_t) };
	expr_action_kind kind;
	sx_update *u;
	parser p;

	parser_init(&p, a, src, err);
	if (!clause_kind(peek(&p), &kind))
		fail(&p);
	while (p.e == KV_OK && clause_kind(peek(&p), &kind)) {
		uint32_t clause = (uint32_t) p.pos;

		if (!vec_push(&p, &clauses, &clause))
			break;
		advance(&p);
		while (parse_action(&p, kind, clause, &acts) &&
		    peek(&p) == TK_COMMA)
			advance(&p);
	}
	if (p.e == KV_OK)
		expect(&p, TK_EOF);
	if (p.e != KV_OK)
		return p.e;
	u = alloc(&p, sizeof(*u));
	if (u == NULL)
		return KV_ENOMEM;
	u->actions = acts.p;
	u->n = acts.n;
	u->clauses = clauses.p;
	u->nclauses = clauses.n;
	*out = u;
	return KV_OK;
}

/* ---- projections -------------------------------------------------------- */

kv_err
expr_parse_sx_projection(arena *a, const expr_src *src, sx_projection **out,
    expr_err *err)
{
	vec paths = { .size = sizeof(sx_path) };
	sx_projection *pr;
	parser p;

	parser_init(&p, a, src, err);
	for (;;) {
		sx_path path;

		if (!parse_path(&p, &path) || !vec_push(&p, &paths, &path))
			break;
		if (peek(&p) != TK_COMMA)
			break;
		advance(&p);
	}
	if (p.e == KV_OK)
		expect(&p, TK_EOF);
	if (p.e != KV_OK)
		return p.e;
	pr = alloc(&p, sizeof(*pr));
	if (pr == NULL)
		return KV_ENOMEM;
	pr->paths = paths.p;
	pr->n = paths.n;
	*out = pr;
	return KV_OK;
}
