/*
 * json_read_test.c — request bodies into trees (router/json_read.c), held
 * to jansson: whatever json_read takes on must give the very tree that
 * json_loadb gives with the router's flags (equal values, same member
 * order, integers as integers), and what it leaves must be left for a
 * reason: a duplicate, a \u0000, nesting past its limit, or no object at
 * the top. Checked on cases, on thousands of random documents, and on
 * their mutations; json_read_in, which builds in an arena, takes the same
 * texts, builds the same trees, and takes nothing from the heap.
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/json_mutate.h"
#include "json_read.h"

#define FLAGS (JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL)

static json_t *
jansson(const char *buf, size_t len)
{
	return json_loadb(buf, len, FLAGS, NULL);
}

/* The text of j as jansson writes it: order and number types show. */
static char *
dump(const json_t *j)
{
	char *s = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
	cr_assert_not_null(s);
	return s;
}

/*
 * The one rule: a tree from json_read is jansson's tree. Returns whether
 * json_read took the text on.
 */
static bool
same_as_jansson(const char *buf, size_t len)
{
	/* Exactly len bytes on the heap, so ASan sees any overread. */
	char *copy = malloc(len + 1);
	cr_assert_not_null(copy);
	memcpy(copy, buf, len);
	json_t *mine = json_read(copy, len);
	json_t *theirs = jansson(copy, len);
	arena a;
	arena_init(&a);
	cr_assert_not_null(arena_alloc(&a, 1)); /* its first chunk, 8 KB */
	size_t heap = mallinfo2().uordblks;
	json_t *in = json_read_in(&a, copy, len);
	/*
	 * A tree that fits in the first chunk takes nothing else from the
	 * heap. (Escapes are decoded in a buffer of the reader's, freed at
	 * the end; glibc counts a freed chunk kept in its cache as in use.)
	 */
	if (a.used <= 4096 && memchr(copy, '\\', len) == NULL)
		cr_assert_eq(mallinfo2().uordblks, heap,
		    "the heap grew: %.*s", (int) len, buf);
	cr_assert_eq(in != NULL, mine != NULL, "%.*s", (int) len, buf);
	if (in != NULL) {
		cr_assert(a.used > 16);
		cr_assert(json_equal(in, mine), "%.*s", (int) len, buf);
		char *x = dump(in), *y = dump(mine);
		cr_assert_str_eq(x, y, "%.*s", (int) len, buf);
		free(x);
		free(y);
	}
	arena_fini(&a); /* never json_decref(in) */
	if (mine != NULL) {
		cr_assert_not_null(theirs, "taken, but jansson refuses: %.*s",
		    (int) len, buf);
		cr_assert(json_equal(mine, theirs), "%.*s", (int) len, buf);
		char *a = dump(mine), *b = dump(theirs);
		cr_assert_str_eq(a, b, "%.*s", (int) len, buf);
		free(a);
		free(b);
	}
	json_decref(mine);
	json_decref(theirs);
	free(copy);
	return mine != NULL;
}

#define TAKEN(lit) same_as_jansson(lit, sizeof(lit) - 1)

Test(json_read, takes_request_bodies)
{
	cr_assert(TAKEN("{\"TableName\":\"bench\",\"Key\":{\"pk\":{\"S\":"
			"\"user1\"}}}"));
	cr_assert(TAKEN("{\"TableName\":\"t\",\"Key\":{\"pk\":{\"S\":\"hot\"}},"
			"\"UpdateExpression\":\"SET n = if_not_exists(n, :z) "
			"+ :one\",\"ExpressionAttributeValues\":{\":z\":{\"N\":"
			"\"0\"},\":one\":{\"N\":\"1\"}},\"ReturnValues\":"
			"\"UPDATED_NEW\"}"));
	cr_assert(TAKEN(" {\"Limit\": 10, \"ConsistentRead\" : true,\n\t"
			"\"ExclusiveStartKey\": null, \"Segment\": -0,"
			"\"X\": [1.5, -0.0, 1e-400, 2E+3, 9223372036854775807, "
			"-9223372036854775808, [], {}, [[{}]]]} \r\n"));
	cr_assert(TAKEN("{}"));
}

Test(json_read, decodes_escapes_in_names_and_strings)
{
	cr_assert(TAKEN("{\"a\\nb\":\"\\\"\\\\\\/\\b\\f\\n\\r\\t\","
			"\"\\u00e9t\\u00e9\":\"\\ud83d\\ude00\\u20ac\","
			"\"\xc3\xa9\":\"\xf0\x9f\x98\x80\","
			"\"\":\"\"}"));
	static const char s[] = "{\"k\\u0041\":\"x\\ty\"}";
	json_t *j = json_read(s, sizeof(s) - 1);
	cr_assert_not_null(j);
	cr_assert_str_eq(json_string_value(json_object_get(j, "kA")),
	    "x\ty");
	json_decref(j);
}

/*
 * Values of an arena tree may be shared with heap trees while the arena
 * lives: the heap tree's release leaves them be, and arena_fini takes
 * them (ASan's leak check and use-after-free checks watch both).
 */
Test(json_read, arena_tree_values_may_join_heap_trees)
{
	static const char s[] = "{\"Key\":{\"pk\":{\"S\":\"a\"}},\"n\":1}";
	arena a;
	arena_init(&a);
	json_t *in = json_read_in(&a, s, sizeof(s) - 1);
	cr_assert_not_null(in);
	json_t *heap = json_object();
	cr_assert_not_null(heap);
	cr_assert_eq(json_object_set(heap, "k", json_object_get(in, "Key")),
	    0);
	cr_assert_eq(json_object_set_new(heap, "m", json_string("heap")), 0);
	char *text = json_dumps(heap, JSON_COMPACT | JSON_SORT_KEYS);
	cr_assert_str_eq(text, "{\"k\":{\"pk\":{\"S\":\"a\"}},"
	    "\"m\":\"heap\"}");
	free(text); /* json_dumps' text is the heap's, as ever */
	json_decref(heap);
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(
	    json_object_get(in, "Key"), "pk"), "S")), "a");
	arena_fini(&a);
}

Test(json_read, leaves_duplicates_to_jansson)
{
	cr_assert(!TAKEN("{\"a\":1,\"a\":2}"));
	cr_assert(!TAKEN("{\"a\":1,\"\\u0061\":2}"));
	cr_assert(!TAKEN("{\"x\":[{\"b\":{},\"b\":[]}]}"));
	/* The same name in different objects is no duplicate. */
	cr_assert(TAKEN("{\"a\":{\"a\":{\"a\":1}},\"b\":[{\"a\":1},{\"a\":2}]}"));
}

Test(json_read, leaves_nul_escapes_to_jansson)
{
	/* jansson takes a NUL in a string (JSON_ALLOW_NUL) ... */
	static const char s[] = "{\"a\":\"x\\u0000y\"}";
	json_t *j = jansson(s, sizeof(s) - 1);
	cr_assert_not_null(j);
	cr_assert_eq(json_string_length(json_object_get(j, "a")), 3);
	json_decref(j);
	cr_assert(!TAKEN("{\"a\":\"x\\u0000y\"}"));
	/* ... and refuses one in a name. */
	cr_assert(!TAKEN("{\"a\\u0000\":1}"));
}

Test(json_read, leaves_other_tops_to_jansson)
{
	cr_assert(!TAKEN("[]"));
	cr_assert(!TAKEN("[{\"a\":1}]"));
	cr_assert(!TAKEN("\"s\""));
	cr_assert(!TAKEN("1"));
	cr_assert(!TAKEN("null"));
	cr_assert(!TAKEN(""));
	cr_assert(!TAKEN("{} {}"));
}

Test(json_read, leaves_deep_nesting_to_jansson)
{
	char buf[2 * (JSON_READ_MAX_DEPTH + 2) + 16];
	for (size_t depth = JSON_READ_MAX_DEPTH - 1;
	    depth <= JSON_READ_MAX_DEPTH + 1; depth++) {
		/* {"a": then [ to `depth` containers in all, then 1. */
		size_t n = (size_t) sprintf(buf, "{\"a\":");
		for (size_t d = 1; d < depth; d++)
			buf[n++] = '[';
		buf[n++] = '1';
		for (size_t d = 1; d < depth; d++)
			buf[n++] = ']';
		buf[n++] = '}';
		json_t *j = jansson(buf, n);
		cr_assert_not_null(j);
		json_decref(j);
		cr_assert_eq(same_as_jansson(buf, n),
		    depth <= JSON_READ_MAX_DEPTH, "depth %zu", depth);
	}
}

Test(json_read, refuses_what_jansson_refuses)
{
	static const char *const bad[] = {
		"{\"a\":}", "{\"a\":1,}", "{\"a\" 1}", "{a:1}", "{\"a\":01}",
		"{\"a\":1e400}", "{\"a\":9223372036854775808}", "{\"a\":tru}",
		"{\"a\":\"\\ud800\"}", "{\"a\":\"\\x\"}", "{\"a\":\"\x01\"}",
		"{\"a\":\"\xc0\xaf\"}", "{\"a\":\"\xed\xa0\x80\"}", "{\"a\":[1 2]}",
		"{\"a\":1", "{\"a\":\"", "{'a':1}", "{\"a\":NaN}",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_t *j = jansson(bad[i], strlen(bad[i]));
		cr_assert_null(j, "%s", bad[i]);
		cr_assert(!same_as_jansson(bad[i], strlen(bad[i])), "%s",
		    bad[i]);
	}
}

/* --- Random documents --------------------------------------------------- */

typedef struct text {
	char p[16384];
	size_t n;
} text;

static void
put(text *t, const char *s)
{
	size_t k = strlen(s);
	if (t->n + k < sizeof(t->p)) {
		memcpy(t->p + t->n, s, k);
		t->n += k;
	}
}

static void
gap(uint64_t *rng, text *t)
{
	static const char *const ws[] = { "", "", "", " ", "\n", "\t ", "\r\n" };
	put(t, ws[next_rand(rng) % 7]);
}

/* Names: plain, escaped, UTF-8, empty; distinct once decoded. */
static const char *const names[] = {
	"\"a\"", "\"pk\"", "\"TableName\"", "\"\\u00e9t\\u00e9\"",
	"\"k\\n\"", "\"\\ud83d\\ude00\"", "\"sp ace\"", "\"\"",
	"\"\xc3\xa9t\xc3\xa9x\"", "\"\\\"q\\\"\"", "\":v\"", "\"#n\"",
};
#define N_NAMES (sizeof(names) / sizeof(names[0]))

static const char *const numbers[] = {
	"0", "-0", "1", "-1", "42", "9223372036854775807",
	"-9223372036854775808", "1.5", "-0.0", "1e5", "1E-5", "2.5e+3",
	"1e-400", "0.1", "3.141592653589793", "1.7976931348623157e308",
	"123456789.123456789e-20",
};

static const char *const pieces[] = {
	"a", "Zz", "0", " ", "\\\"", "\\\\", "\\/", "\\b", "\\f", "\\n",
	"\\r", "\\t", "\\u00e9", "\\u20AC", "\\ud83d\\ude00", "\\u0001",
	"\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "SET n = :v",
};

static void
gen_value(uint64_t *rng, text *t, int depth)
{
	unsigned k = (unsigned) (next_rand(rng) % (depth < 6 ? 8 : 5));
	switch (k) {
	case 0: /* an object, its names distinct */
	case 5: {
		bool used[N_NAMES] = { false };
		size_t members = next_rand(rng) % 5;
		put(t, "{");
		for (size_t m = 0; m < members; m++) {
			size_t i = next_rand(rng) % N_NAMES;
			if (used[i])
				continue;
			used[i] = true;
			if (t->p[t->n - 1] != '{')
				put(t, ",");
			gap(rng, t);
			put(t, names[i]);
			gap(rng, t);
			put(t, ":");
			gap(rng, t);
			gen_value(rng, t, depth + 1);
			gap(rng, t);
		}
		put(t, "}");
		break;
	}
	case 1:
	case 6: {
		size_t elems = next_rand(rng) % 5;
		put(t, "[");
		for (size_t e = 0; e < elems; e++) {
			if (e > 0)
				put(t, ",");
			gap(rng, t);
			gen_value(rng, t, depth + 1);
			gap(rng, t);
		}
		put(t, "]");
		break;
	}
	case 2: {
		size_t n = next_rand(rng) % 6;
		put(t, "\"");
		for (size_t i = 0; i < n; i++)
			put(t, pieces[next_rand(rng) %
			    (sizeof(pieces) / sizeof(pieces[0]))]);
		put(t, "\"");
		break;
	}
	case 3:
		put(t, numbers[next_rand(rng) %
		    (sizeof(numbers) / sizeof(numbers[0]))]);
		break;
	default: {
		static const char *const words[] = { "true", "false", "null" };
		put(t, words[next_rand(rng) % 3]);
		break;
	}
	}
}

/* A random request-like body: an object at the top. */
static void
gen_doc(uint64_t *rng, text *t)
{
	t->n = 0;
	gap(rng, t);
	put(t, "{\"TableName\":");
	gen_value(rng, t, 1);
	put(t, ",\"Key\":");
	gen_value(rng, t, 1);
	put(t, "}");
	gap(rng, t);
}

Test(json_read, takes_random_documents_as_jansson_builds_them)
{
	uint64_t rng = 20261130;
	text t;
	for (int i = 0; i < 5000; i++) {
		gen_doc(&rng, &t);
		cr_assert_lt(t.n, sizeof(t.p) - 1, "document too long");
		cr_assert(same_as_jansson(t.p, t.n), "not taken: %.*s",
		    (int) t.n, t.p);
	}
}

Test(json_read, agrees_with_jansson_on_mutated_documents)
{
	uint64_t rng = 11;
	text t;
	size_t taken = 0, runs = 30000;
	for (size_t i = 0; i < runs; i++) {
		gen_doc(&rng, &t);
		if (t.n > 2048)
			continue;
		mutate(&rng, t.p, &t.n, sizeof(t.p));
		taken += same_as_jansson(t.p, t.n);
	}
	/* Enough of both outcomes for the comparison to mean something. */
	cr_assert_gt(taken, runs / 20);
	cr_assert_lt(taken, runs - runs / 20);
}
