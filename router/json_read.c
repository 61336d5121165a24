/*
 * json_read.c — request bodies into jansson trees (see json_read.h).
 *
 * One walk of the text (jscan_walk) builds the tree as it goes: a
 * container is added to its parent when it opens, so the stack holds
 * borrowed pointers and the root owns everything. A member name waits
 * in `key` for its value. Names and strings without escapes are taken
 * from the text as they are; the others are decoded into a buffer of
 * the reader. Any refusal (see json_read.h) stops the walk, and the
 * partial tree goes with the root.
 */
#include "json_read.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "jscan.h"

/* Numbers up to this many characters are converted from the stack. */
#define NUMBER_STACK 64

typedef struct dbuf {
	char *p;
	size_t cap;
} dbuf;

typedef struct reader {
	json_t *root;
	json_t *open[JSON_READ_MAX_DEPTH]; /* borrowed: the root owns them */
	size_t depth;
	const char *key; /* the pending member name */
	size_t key_len;
	dbuf keys, strings; /* decoded names; decoded strings */
} reader;

/*
 * The decoded bytes of string s: the text inside the quotes when it has
 * no escape, else decoded into b (never longer than the text). False
 * when memory runs out.
 */
static bool
decode(jscan_val s, dbuf *b, const char **out, size_t *n)
{
	const char *in = s.p + 1;
	size_t len = s.n - 2;
	if (memchr(in, '\\', len) == NULL) {
		*out = in;
		*n = len;
		return true;
	}
	if (b->cap < len) {
		char *p = realloc(b->p, len);
		if (p == NULL)
			return false;
		b->p = p;
		b->cap = len;
	}
	jscan_chars c;
	size_t k = 0;
	jscan_chars_init(&c, s);
	for (int ch; (ch = jscan_chars_next(&c)) >= 0;)
		b->p[k++] = (char) ch;
	*out = b->p;
	*n = k;
	return true;
}

/* Adds v (stolen) where the text has it; false to leave the text. */
static bool
add(reader *r, json_t *v)
{
	if (v == NULL)
		return false;
	if (r->depth == 0) { /* a scalar at the top: not a request */
		json_decref(v);
		return false;
	}
	json_t *top = r->open[r->depth - 1];
	if (!json_is_object(top))
		return json_array_append_new(top, v) == 0;
	if (json_object_getn(top, r->key, r->key_len) != NULL) {
		json_decref(v); /* a duplicate: jansson says so */
		return false;
	}
	return json_object_setn_new_nocheck(top, r->key, r->key_len, v) == 0;
}

static bool
on_open(void *arg, jscan_kind kind)
{
	reader *r = arg;
	if (r->depth == JSON_READ_MAX_DEPTH)
		return false;
	json_t *c = kind == JSCAN_OBJECT ? json_object() : json_array();
	if (c == NULL)
		return false;
	if (r->depth == 0) {
		if (kind != JSCAN_OBJECT) {
			json_decref(c);
			return false;
		}
		r->root = c;
	} else if (!add(r, c)) {
		return false;
	}
	r->open[r->depth++] = c;
	return true;
}

static bool
on_close(void *arg)
{
	reader *r = arg;
	r->depth--;
	return true;
}

static bool
on_name(void *arg, jscan_val name)
{
	reader *r = arg;
	return decode(name, &r->keys, &r->key, &r->key_len);
}

/* A number as jansson reads it: long long when it can, else a double. */
static json_t *
number(jscan_val v)
{
	long long i;
	if (jscan_int(v, &i))
		return json_integer(i);
	char stack[NUMBER_STACK];
	char *s = v.n < sizeof(stack) ? stack : malloc(v.n + 1);
	if (s == NULL)
		return NULL;
	memcpy(s, v.p, v.n);
	s[v.n] = '\0';
	json_t *j = json_real(strtod(s, NULL));
	if (s != stack)
		free(s);
	return j;
}

static bool
on_scalar(void *arg, jscan_kind kind, jscan_val v)
{
	reader *r = arg;
	const char *s;
	size_t n;
	switch (kind) {
	case JSCAN_STRING:
		if (!decode(v, &r->strings, &s, &n))
			return false;
		return add(r, json_stringn_nocheck(s, n));
	case JSCAN_NUMBER:
		return add(r, number(v));
	case JSCAN_TRUE:
		return add(r, json_true());
	case JSCAN_FALSE:
		return add(r, json_false());
	case JSCAN_NULL:
		return add(r, json_null());
	default:
		return false;
	}
}

static const jscan_handler build = {
	.open = on_open,
	.close = on_close,
	.name = on_name,
	.scalar = on_scalar,
};

/*
 * The arena json_read_in builds in, on this thread; NULL elsewhere. While
 * it is set, every jansson allocation on the thread comes from it, and
 * every jansson free on the thread is of something allocated from it (a
 * partial tree, a duplicate's value, a grown object's old table): nothing
 * else runs jansson on the thread meanwhile.
 */
static _Thread_local arena *in_arena;

static void *
jansson_alloc(size_t n)
{
	return in_arena != NULL ? arena_alloc_raw(in_arena, n) : malloc(n);
}

static void
jansson_free(void *p)
{
	if (in_arena == NULL)
		free(p);
}

/* Before main: no thread and no jansson value exists yet. */
__attribute__((constructor)) static void
jansson_through_here(void)
{
	json_set_alloc_funcs(jansson_alloc, jansson_free);
}

json_t *
json_read_in(arena *a, const char *buf, size_t len)
{
	in_arena = a;
	json_t *j = json_read(buf, len);
	in_arena = NULL;
	return j;
}

json_t *
json_read(const char *buf, size_t len)
{
	reader r;
	r.root = NULL;
	r.depth = 0;
	r.key = NULL;
	r.key_len = 0;
	r.keys = (dbuf) { NULL, 0 };
	r.strings = (dbuf) { NULL, 0 };
	bool ok = jscan_walk(buf, len, &build, &r, NULL);
	free(r.keys.p);
	free(r.strings.p);
	if (!ok || r.root == NULL) {
		json_decref(r.root);
		return NULL;
	}
	return r.root;
}
