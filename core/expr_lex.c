/*
 * expr_lex.c — splits an expression into tokens, and writes DynamoDB's
 * syntax error for a token.
 *
 * Tokens follow DynamoDB's lexer: names start with a letter and go on
 * with letters, digits and '_'; #name and :value references need at least
 * one such character after the sign; integers are digits; keywords are
 * case-insensitive and depend on the expression kind (AND, OR, NOT,
 * BETWEEN, IN in conditions; SET, REMOVE, ADD, DELETE in updates). Any
 * other character is a token of its own that no rule accepts, so the
 * parser reports it. Grammar is in expr_parse.c.
 */
#include "expr_int.h"

#include <string.h>

static bool
is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool
is_alnum(char c)
{
	return is_alpha(c) || is_digit(c) || c == '_';
}

static bool
is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* same_word compares s[0..n) with the upper-case word w, ignoring case. */
static bool
same_word(const char *s, size_t n, const char *w)
{
	size_t i;

	if (strlen(w) != n)
		return false;
	for (i = 0; i < n; i++) {
		char c = s[i];

		if (c >= 'a' && c <= 'z')
			c = (char) (c - 'a' + 'A');
		if (c != w[i])
			return false;
	}
	return true;
}

static tok_kind
keyword(expr_kind kind, const char *s, size_t n)
{
	static const struct {
		const char *w;
		tok_kind k;
		bool update;
	} kw[] = {
		{ "AND", TK_AND, false },
		{ "OR", TK_OR, false },
		{ "NOT", TK_NOT, false },
		{ "BETWEEN", TK_BETWEEN, false },
		{ "IN", TK_IN, false },
		{ "SET", TK_SET, true },
		{ "REMOVE", TK_REMOVE, true },
		{ "ADD", TK_ADD, true },
		{ "DELETE", TK_DELETE, true },
	};
	size_t i;

	if (kind == EXPR_PROJECTION || n > 7)
		return TK_NAME;
	for (i = 0; i < sizeof(kw) / sizeof(kw[0]); i++) {
		if (kw[i].update != (kind == EXPR_UPDATE))
			continue;
		if (same_word(s, n, kw[i].w))
			return kw[i].k;
	}
	return TK_NAME;
}

/* utf8_len returns the length of the UTF-8 sequence starting at s[i]. */
static size_t
utf8_len(const char *s, size_t i, size_t len)
{
	unsigned char c = (unsigned char) s[i];
	size_t n = 1, k;

	if (c >= 0xC0 && c < 0xE0)
		n = 2;
	else if (c >= 0xE0 && c < 0xF0)
		n = 3;
	else if (c >= 0xF0 && c < 0xF8)
		n = 4;
	for (k = 1; k < n; k++) {
		if (i + k >= len ||
		    ((unsigned char) s[i + k] & 0xC0) != 0x80)
			return k;
	}
	return n;
}

kv_err
expr_lex_run(arena *a, expr_kind kind, const char *s, size_t len,
    expr_src *src)
{
	size_t i = 0, n = 0;
	expr_tok *t;

	/* At most one token per byte, plus the end. */
	t = arena_alloc(a, (len + 1) * sizeof(*t));
	if (t == NULL)
		return KV_ENOMEM;
	while (i < len) {
		size_t start = i;
		tok_kind k;

		if (is_space(s[i])) {
			i++;
			continue;
		}
		if (is_alpha(s[i])) {
			while (i < len && is_alnum(s[i]))
				i++;
			k = keyword(kind, s + start, i - start);
		} else if (is_digit(s[i])) {
			while (i < len && is_digit(s[i]))
				i++;
			k = TK_INT;
		} else if ((s[i] == '#' || s[i] == ':') && i + 1 < len &&
		    is_alnum(s[i + 1])) {
			k = s[i] == '#' ? TK_NAMEREF : TK_VALREF;
			i++;
			while (i < len && is_alnum(s[i]))
				i++;
		} else {
			char c = s[i++];
			char d = i < len ? s[i] : '\0';

			switch (c) {
			case '(':
				k = TK_LPAREN;
				break;
			case ')':
				k = TK_RPAREN;
				break;
			case '[':
				k = TK_LBRACK;
				break;
			case ']':
				k = TK_RBRACK;
				break;
			case '.':
				k = TK_DOT;
				break;
			case ',':
				k = TK_COMMA;
				break;
			case '=':
				k = TK_EQ;
				break;
			case '+':
				k = TK_PLUS;
				break;
			case '-':
				k = TK_MINUS;
				break;
			case '<':
				k = TK_LT;
				if (d == '>' || d == '=') {
					k = d == '>' ? TK_NE : TK_LE;
					i++;
				}
				break;
			case '>':
				k = TK_GT;
				if (d == '=') {
					k = TK_GE;
					i++;
				}
				break;
			default:
				k = TK_BAD;
				i = start + utf8_len(s, start, len);
				break;
			}
		}
		t[n].kind = k;
		t[n].off = (uint32_t) start;
		t[n].len = (uint32_t) (i - start);
		n++;
	}
	t[n].kind = TK_EOF;
	t[n].off = (uint32_t) len;
	t[n].len = 0;
	src->kind = kind;
	src->s = s;
	src->len = len;
	src->toks = t;
	src->ntoks = n + 1;
	return KV_OK;
}

void
expr_lex_syntax_error(const expr_src *src, size_t at, expr_err *err)
{
	const expr_tok *t = &src->toks[at];
	size_t from, to;
	expr_buf b;

	/* near: from the token before to the end of the token after. */
	from = at > 0 ? src->toks[at - 1].off : t->off;
	if (t->kind == TK_EOF)
		to = at > 0 ? src->toks[at - 1].off + src->toks[at - 1].len
			    : t->off;
	else if (at + 1 < src->ntoks)
		to = src->toks[at + 1].off + src->toks[at + 1].len;
	else
		to = t->off + t->len;
	expr_buf_init(&b, err->msg, sizeof(err->msg));
	expr_buf_addf(&b, "Invalid %s: Syntax error; token: \"",
	    expr_kind_name(src->kind));
	if (t->kind == TK_EOF)
		expr_buf_add(&b, "<EOF>", 5);
	else
		expr_buf_add(&b, src->s + t->off, t->len);
	expr_buf_add(&b, "\", near: \"", 10);
	expr_buf_add(&b, src->s + from, to - from);
	expr_buf_add(&b, "\"", 1);
}
