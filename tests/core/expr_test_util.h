/*
 * expr_test_util.h — helpers shared by the expr_*_test.c files: a small
 * literal syntax for attribute values, placeholder contexts built from
 * text, and one-call parse wrappers. Header-only (static functions), so
 * that each test executable stays one file plus kvcore.
 *
 * Literals: "text" (S), 12.5 (N), b"bytes" (B), true/false (BOOL), null
 * (NULL), [v, ...] (L), {name: v, "any name": v} (M), SS("a", "b"),
 * NS(1, 2), BS(b"x"). Escapes in quotes: \" \\ \n \x41.
 * Contexts: names "#a=a;#b=b.c" and values ":v=5;:s=\"x\"".
 */
#ifndef KV_EXPR_TEST_UTIL_H
#define KV_EXPR_TEST_UTIL_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"

typedef struct lit {
	arena *a;
	const char *p;
	const char *end;
	bool bad;
} lit;

static inline void
lit_ws(lit *l)
{
	while (l->p < l->end && (*l->p == ' ' || *l->p == '\t' ||
				    *l->p == '\n'))
		l->p++;
}

static inline bool
lit_eat(lit *l, char c)
{
	lit_ws(l);
	if (l->p < l->end && *l->p == c) {
		l->p++;
		return true;
	}
	return false;
}

static inline int
lit_hex(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* lit_quoted reads "..." into the arena; *len gets the byte count. */
static inline const char *
lit_quoted(lit *l, size_t *len)
{
	char *buf;
	size_t n = 0;

	lit_ws(l);
	if (l->p >= l->end || *l->p != '"') {
		l->bad = true;
		return "";
	}
	l->p++;
	buf = arena_alloc(l->a, (size_t) (l->end - l->p) + 1);
	while (l->p < l->end && *l->p != '"') {
		char c = *l->p++;

		if (c == '\\' && l->p < l->end) {
			c = *l->p++;
			if (c == 'n') {
				c = '\n';
			} else if (c == 'x' && l->end - l->p >= 2) {
				c = (char) (lit_hex(l->p[0]) * 16 +
				    lit_hex(l->p[1]));
				l->p += 2;
			}
		}
		buf[n++] = c;
	}
	if (l->p >= l->end)
		l->bad = true;
	else
		l->p++;
	buf[n] = '\0';
	*len = n;
	return buf;
}

static inline bool
lit_word(lit *l, const char *w)
{
	size_t n = strlen(w);

	lit_ws(l);
	if ((size_t) (l->end - l->p) >= n && memcmp(l->p, w, n) == 0) {
		l->p += n;
		return true;
	}
	return false;
}

static void lit_value(lit *l, value *out);

static inline void
lit_list(lit *l, char close, val_type t, value *out)
{
	value tmp[512];
	size_t n = 0;

	memset(out, 0, sizeof(*out));
	out->type = t;
	if (!lit_eat(l, close)) {
		do {
			if (n == 512) {
				l->bad = true;
				return;
			}
			lit_value(l, &tmp[n++]);
		} while (!l->bad && lit_eat(l, ','));
		if (!lit_eat(l, close))
			l->bad = true;
	}
	out->len = n;
	out->u.elems = arena_alloc(l->a, (n + 1) * sizeof(value));
	memcpy(out->u.elems, tmp, n * sizeof(value));
}

static inline void
lit_map(lit *l, value *out)
{
	attr tmp[256];
	size_t n = 0;

	memset(out, 0, sizeof(*out));
	out->type = VAL_M;
	if (!lit_eat(l, '}')) {
		do {
			attr *at = &tmp[n++];

			lit_ws(l);
			if (l->p < l->end && *l->p == '"') {
				at->name = lit_quoted(l, &at->name_len);
			} else {
				const char *s = l->p;

				while (l->p < l->end && *l->p != ':' &&
				    *l->p != ' ')
					l->p++;
				at->name = arena_dup(l->a, s,
				    (size_t) (l->p - s));
				at->name_len = (size_t) (l->p - s);
			}
			if (!lit_eat(l, ':'))
				l->bad = true;
			lit_value(l, &at->v);
		} while (!l->bad && n < 256 && lit_eat(l, ','));
		if (!lit_eat(l, '}'))
			l->bad = true;
	}
	out->len = n;
	out->u.attrs = arena_alloc(l->a, (n + 1) * sizeof(attr));
	memcpy(out->u.attrs, tmp, n * sizeof(attr));
}

static inline void
lit_value(lit *l, value *out)
{
	memset(out, 0, sizeof(*out));
	lit_ws(l);
	if (l->p >= l->end) {
		l->bad = true;
		return;
	}
	if (*l->p == '"') {
		out->type = VAL_S;
		out->u.bytes = lit_quoted(l, &out->len);
	} else if (lit_word(l, "b\"")) {
		l->p--;
		out->type = VAL_B;
		out->u.bytes = lit_quoted(l, &out->len);
	} else if (lit_word(l, "true")) {
		out->type = VAL_BOOL;
		out->b = true;
	} else if (lit_word(l, "false")) {
		out->type = VAL_BOOL;
	} else if (lit_word(l, "null")) {
		out->type = VAL_NULL;
		out->b = true;
	} else if (lit_eat(l, '[')) {
		lit_list(l, ']', VAL_L, out);
	} else if (lit_eat(l, '{')) {
		lit_map(l, out);
	} else if (lit_word(l, "SS(")) {
		lit_list(l, ')', VAL_SS, out);
	} else if (lit_word(l, "NS(")) {
		lit_list(l, ')', VAL_NS, out);
	} else if (lit_word(l, "BS(")) {
		lit_list(l, ')', VAL_BS, out);
	} else {
		const char *s = l->p, *msg;

		while (l->p < l->end && strchr("+-.0123456789eE", *l->p))
			l->p++;
		out->type = VAL_N;
		out->u.num = arena_alloc(l->a, sizeof(number));
		if (s == l->p || number_parse(s, (size_t) (l->p - s),
				     out->u.num, &msg) != KV_OK)
			l->bad = true;
	}
}

/* V parses a literal (aborting the test on a typo). */
static inline value
V(arena *a, const char *s)
{
	lit l = { .a = a, .p = s, .end = s + strlen(s) };
	value v;

	lit_value(&l, &v);
	lit_ws(&l);
	cr_assert(!l.bad && l.p == l.end, "bad literal: %s", s);
	return v;
}

/* Vp is V into the arena, for callers that keep a pointer. */
static inline value *
Vp(arena *a, const char *s)
{
	value *v = arena_alloc(a, sizeof(value));

	*v = V(a, s);
	return v;
}

/* ctx_make builds a context from "#a=a;#b=b" and ":v=5;:w=\"x\"". */
static inline expr_ctx *
ctx_make(arena *a, const char *names, const char *values)
{
	expr_ctx *ctx = arena_alloc(a, sizeof(*ctx));
	expr_name *nm = arena_alloc(a, 1024 * sizeof(*nm));
	expr_value *vl = arena_alloc(a, 1024 * sizeof(*vl));
	size_t nn = 0, nv = 0;
	const char *p = names, *q;

	while (p != NULL && *p != '\0') {
		const char *eq = strchr(p, '=');
		const char *semi;

		cr_assert(eq != NULL, "bad names: %s", names);
		semi = strchr(eq, ';');
		if (semi == NULL)
			semi = eq + strlen(eq);
		nm[nn].key = p;
		nm[nn].key_len = (size_t) (eq - p);
		nm[nn].name = eq + 1;
		nm[nn].name_len = (size_t) (semi - eq - 1);
		nn++;
		p = *semi ? semi + 1 : semi;
	}
	p = values;
	while (p != NULL && *p != '\0') {
		lit l;

		q = strchr(p, '=');
		cr_assert(q != NULL, "bad values: %s", values);
		vl[nv].key = p;
		vl[nv].key_len = (size_t) (q - p);
		l = (lit){ .a = a, .p = q + 1, .end = q + 1 + strlen(q + 1) };
		vl[nv].val = arena_alloc(a, sizeof(value));
		lit_value(&l, (value *) vl[nv].val);
		cr_assert(!l.bad, "bad values: %s", values);
		nv++;
		lit_ws(&l);
		if (l.p < l.end) {
			cr_assert(*l.p == ';', "bad values: %s", values);
			l.p++;
		}
		p = l.p;
	}
	expr_ctx_init(ctx, nm, nn, vl, nv);
	return ctx;
}

/* vstr prints a value in the literal syntax, for failure messages. */
static inline void
vstr_add(char *buf, size_t cap, size_t *k, const char *s, size_t n)
{
	while (n-- > 0 && *k + 1 < cap)
		buf[(*k)++] = *s++;
	buf[*k] = '\0';
}

static inline void
vstr_rec(const value *v, char *buf, size_t cap, size_t *k)
{
	char num[NUMBER_FMT_MAX];
	size_t i, n;

	switch (v->type) {
	case VAL_S:
	case VAL_B:
		if (v->type == VAL_B)
			vstr_add(buf, cap, k, "b", 1);
		vstr_add(buf, cap, k, "\"", 1);
		vstr_add(buf, cap, k, v->u.bytes, v->len);
		vstr_add(buf, cap, k, "\"", 1);
		return;
	case VAL_N:
		n = number_format(v->u.num, num);
		vstr_add(buf, cap, k, num, n);
		return;
	case VAL_BOOL:
		vstr_add(buf, cap, k, v->b ? "true" : "false", v->b ? 4 : 5);
		return;
	case VAL_NULL:
		vstr_add(buf, cap, k, "null", 4);
		return;
	case VAL_M:
		vstr_add(buf, cap, k, "{", 1);
		for (i = 0; i < v->len; i++) {
			if (i > 0)
				vstr_add(buf, cap, k, ", ", 2);
			vstr_add(buf, cap, k, v->u.attrs[i].name,
			    v->u.attrs[i].name_len);
			vstr_add(buf, cap, k, ": ", 2);
			vstr_rec(&v->u.attrs[i].v, buf, cap, k);
		}
		vstr_add(buf, cap, k, "}", 1);
		return;
	default:
		vstr_add(buf, cap, k,
		    v->type == VAL_L	? "["
		    : v->type == VAL_SS ? "SS("
		    : v->type == VAL_NS ? "NS("
					: "BS(",
		    v->type == VAL_L ? 1 : 3);
		for (i = 0; i < v->len; i++) {
			if (i > 0)
				vstr_add(buf, cap, k, ", ", 2);
			vstr_rec(&v->u.elems[i], buf, cap, k);
		}
		vstr_add(buf, cap, k, v->type == VAL_L ? "]" : ")", 1);
		return;
	}
}

static inline const char *
vstr(arena *a, const value *v)
{
	char *buf = arena_alloc(a, 4096);
	size_t k = 0;

	buf[0] = '\0';
	vstr_rec(v, buf, 4096, &k);
	return buf;
}

#endif
