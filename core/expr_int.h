/*
 * expr_int.h — what the expr_*.c files share and nobody else uses: tokens,
 * the syntax tree the parser builds before validation, and the error
 * helpers. Read expr.h first; the pipeline is expr_lex.c (tokens) ->
 * expr_parse.c (syntax tree) -> expr_check.c (validation, public tree).
 */
#ifndef KV_EXPR_INT_H
#define KV_EXPR_INT_H

#include <stdarg.h>

#include "expr.h"

/* ---- tokens (expr_lex.c) -------------------------------------------- */

typedef enum tok_kind {
	TK_EOF = 0,
	TK_NAME,    /* [A-Za-z][A-Za-z0-9_]* that is not a keyword */
	TK_NAMEREF, /* #[A-Za-z0-9_]+ */
	TK_VALREF,  /* :[A-Za-z0-9_]+ */
	TK_INT,     /* [0-9]+ */
	TK_LPAREN,
	TK_RPAREN,
	TK_LBRACK,
	TK_RBRACK,
	TK_DOT,
	TK_COMMA,
	TK_EQ,
	TK_NE,
	TK_LT,
	TK_LE,
	TK_GT,
	TK_GE,
	TK_PLUS,
	TK_MINUS,
	TK_BAD, /* any other character (a whole UTF-8 sequence) */
	/* keywords, case-insensitive; which ones depends on the kind */
	TK_AND,
	TK_OR,
	TK_NOT,
	TK_BETWEEN,
	TK_IN,
	TK_SET,
	TK_REMOVE,
	TK_ADD,
	TK_DELETE,
} tok_kind;

typedef struct expr_tok {
	tok_kind kind;
	uint32_t off; /* byte offset in the expression */
	uint32_t len;
} expr_tok;

/* A tokenized expression; toks[ntoks - 1] is TK_EOF. */
typedef struct expr_src {
	expr_kind kind;
	const char *s;
	size_t len;
	expr_tok *toks;
	size_t ntoks;
} expr_src;

/*
 * expr_lex_run tokenizes s[0..len) (len <= EXPR_MAX_LEN) into src. Never
 * fails on content (unknown characters become TK_BAD tokens, which no
 * rule accepts). Returns KV_OK or KV_ENOMEM.
 */
kv_err expr_lex_run(arena *a, expr_kind kind, const char *s, size_t len,
    expr_src *src);

/*
 * expr_lex_syntax_error writes DynamoDB's syntax error for token at:
 * "Invalid <kind>: Syntax error; token: \"<t>\", near: \"<n>\"", where
 * <n> is the text from the token before to the token after (<EOF> has no
 * text).
 */
void expr_lex_syntax_error(const expr_src *src, size_t at, expr_err *err);

/* ---- syntax tree (expr_parse.c) -------------------------------------- */

typedef enum sx_elem_kind {
	SX_ELEM_NAME = 1,
	SX_ELEM_REF,
	SX_ELEM_INDEX,
} sx_elem_kind;

typedef struct sx_elem {
	sx_elem_kind kind;
	uint32_t tok;   /* the NAME, NAMEREF or INT token */
	uint32_t index; /* SX_ELEM_INDEX */
} sx_elem;

typedef struct sx_path {
	sx_elem *elems;
	size_t n;
} sx_path;

typedef enum sx_opnd_kind { SX_PATH = 1, SX_VALUE, SX_CALL } sx_opnd_kind;

typedef struct sx_opnd sx_opnd;
struct sx_opnd {
	sx_opnd_kind kind;
	sx_path path;   /* SX_PATH */
	uint32_t tok;   /* SX_VALUE: the VALREF; SX_CALL: the name */
	sx_opnd *args;  /* SX_CALL; for + and - the two terms */
	size_t nargs;
	tok_kind arith; /* TK_PLUS/TK_MINUS for a SET value a + b, else 0 */
};

typedef enum sx_cond_kind {
	SX_CMP = 1,
	SX_BETWEEN,
	SX_IN,
	SX_FUNC, /* ops[0] is the call */
	SX_AND,
	SX_OR,
	SX_NOT,
} sx_cond_kind;

typedef struct sx_cond sx_cond;
struct sx_cond {
	sx_cond_kind kind;
	expr_cmp cmp;
	sx_opnd *ops;
	size_t nops;
	sx_cond **kids;
	size_t nkids;
};

typedef struct sx_action {
	expr_action_kind kind;
	uint32_t clause; /* index of the clause keyword token */
	sx_path path;
	sx_opnd *val;
} sx_action;

typedef struct sx_update {
	sx_action *actions;
	size_t n;
	uint32_t *clauses; /* keyword token of each clause, in order */
	size_t nclauses;
} sx_update;

typedef struct sx_projection {
	sx_path *paths;
	size_t n;
} sx_projection;

/*
 * The parse functions return KV_OK with the tree, KV_EINVAL with the
 * syntax error (or a nesting-limit error) in err, or KV_ENOMEM.
 * *redundant_parens is set when "((x))" was seen (condition grammar): it is
 * not a syntax error but the first semantic error DynamoDB reports.
 */
kv_err expr_parse_sx_condition(arena *a, const expr_src *src, sx_cond **out,
    bool *redundant_parens, expr_err *err);
kv_err expr_parse_sx_update(arena *a, const expr_src *src, sx_update **out,
    expr_err *err);
kv_err expr_parse_sx_projection(arena *a, const expr_src *src,
    sx_projection **out, expr_err *err);

/* ---- validation (expr_check.c) ---------------------------------------- */

kv_err expr_check_condition(arena *a, const expr_src *src, const sx_cond *c,
    bool redundant_parens, expr_ctx *ctx, expr_cond **out, expr_err *err);
kv_err expr_check_update(arena *a, const expr_src *src, const sx_update *u,
    expr_ctx *ctx, expr_update **out, expr_err *err);
kv_err expr_check_projection(arena *a, const expr_src *src,
    const sx_projection *p, expr_ctx *ctx, expr_projection **out,
    expr_err *err);

/* ---- helpers (expr.c) ------------------------------------------------ */

/* expr_errf writes "Invalid <kind>: " and the formatted text (kind 0: no
 * prefix). Always returns KV_EINVAL. */
kv_err expr_errf(expr_err *err, expr_kind kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A growing message buffer that truncates at EXPR_ERR_MAX - 1. */
typedef struct expr_buf {
	char *p;
	size_t len;
	size_t cap;
} expr_buf;

void expr_buf_init(expr_buf *b, char *p, size_t cap);
void expr_buf_add(expr_buf *b, const char *s, size_t n);
void expr_buf_addf(expr_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* expr_buf_path appends DynamoDB's form of a path: "[a, b, [2]]". */
void expr_buf_path(expr_buf *b, const expr_path *p);

/* expr_buf_value appends "{N:5}" as DynamoDB prints a scalar operand. */
void expr_buf_value(expr_buf *b, const value *v);

/* expr_ctx_name / expr_ctx_value look a key up, index built in a.
 * They return NULL when the key is not defined (or on ENOMEM: *nomem). */
expr_name *expr_ctx_name(arena *a, expr_ctx *ctx, const char *key,
    size_t len, bool *nomem);
expr_value *expr_ctx_value(arena *a, expr_ctx *ctx, const char *key,
    size_t len, bool *nomem);

/* expr_path_eq reports whether two resolved paths are identical. */
bool expr_path_eq(const expr_path *x, const expr_path *y);

/* expr_elem_eq reports whether two path elements are the same. */
bool expr_elem_eq(const expr_path_elem *x, const expr_path_elem *y);

/*
 * A trie of document paths, merged element by element: projections mark
 * the nodes where a path ends (leaf), updates hang their action and
 * computed value on them. Nodes live in the caller's arena.
 */
typedef struct expr_pnode expr_pnode;
struct expr_pnode {
	const expr_path_elem *key; /* NULL at the root */
	bool leaf;                 /* projection: a path ends here */
	const expr_action *act;    /* update: the action at this path */
	const value *set;          /* update: SET's computed value */
	expr_pnode **kids;
	size_t nkids, cap;
};

/*
 * expr_pnode_child returns n's child for key, adding it when missing, or
 * NULL when memory is exhausted.
 */
expr_pnode *expr_pnode_child(arena *a, expr_pnode *n,
    const expr_path_elem *key);

/* expr_pnode_index_cmp orders child pointers by list index (qsort). */
int expr_pnode_index_cmp(const void *x, const void *y);

/* expr_value_height is the nesting of M and L inside v (0 for a scalar),
 * counted up to limit + 1. */
int expr_value_height(const value *v, int limit);

#endif
