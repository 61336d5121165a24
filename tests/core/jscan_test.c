/*
 * jscan_test.c — JSON read in place (core/jscan.c): which texts are
 * valid, always as jansson judges them with JSON_DECODE_ANY (checked on
 * every case and on thousands of mutated DynamoDB answers); members by
 * name with the last duplicate winning; arrays; kinds; strings compared
 * and copied after decoding; integers as jansson sees them.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <jansson.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jscan.h"
#include "json_mutate.h"

/* What jansson says of buf[0..len), with top-level scalars allowed. */
static bool
jansson_valid(const char *buf, size_t len)
{
	json_t *j = json_loadb(buf, len, JSON_DECODE_ANY, NULL);
	bool ok = j != NULL;
	json_decref(j);
	return ok;
}

/* Validates a C string literal's bytes, NULs inside included. */
#define DOC_OK(lit) jscan_doc(lit, sizeof(lit) - 1, NULL)

/* The value of a C string literal; the text must be valid. */
static jscan_val
root_of(const char *text)
{
	jscan_val v;
	cr_assert(jscan_doc(text, strlen(text), &v), "invalid: %s", text);
	return v;
}

/* Whether v is exactly the text want. */
static bool
val_is(jscan_val v, const char *want)
{
	return v.n == strlen(want) && memcmp(v.p, want, v.n) == 0;
}

/* Criterion may run a test in a fresh process: no pointers here. */
struct doc_case {
	char what[48];
	char text[48];
	size_t len;
};

#define D(what, lit) { what, lit, sizeof(lit) - 1 }

ParameterizedTestParameters(jscan, invalid_documents_are_refused)
{
	static struct doc_case cases[] = {
		D("empty input", ""),
		D("only whitespace", " \t\r\n"),
		D("open object", "{"),
		D("open array", "["),
		D("name without value", "{\"a\":"),
		D("name without colon", "{\"a\" 1}"),
		D("unquoted name", "{a:1}"),
		D("single-quoted name", "{'a':1}"),
		D("number as name", "{1:2}"),
		D("missing comma", "{\"a\":1 \"b\":2}"),
		D("trailing comma in array", "[1,]"),
		D("trailing comma in object", "{\"a\":1,}"),
		D("leading comma", "[,1]"),
		D("lone comma in object", "{,}"),
		D("mismatched close", "[1}"),
		D("extra close", "[1]]"),
		D("trailing garbage", "{} x"),
		D("two documents", "{}{}"),
		D("two numbers", "1 2"),
		D("leading zero", "01"),
		D("negative leading zero", "-01"),
		D("fraction without digits", "1."),
		D("fraction without integer", ".5"),
		D("lone minus", "-"),
		D("plus sign", "+1"),
		D("double minus", "--1"),
		D("exponent without digits", "1e"),
		D("exponent sign without digits", "1e+"),
		D("hex number", "0x10"),
		D("two points", "1.5.2"),
		D("NaN", "NaN"),
		D("Infinity", "-Infinity"),
		D("integer above long long", "9223372036854775808"),
		D("integer below long long", "-9223372036854775809"),
		D("real overflow", "1e309"),
		D("negative real overflow", "[-1.8e308]"),
		D("cut literal", "tru"),
		D("capital literal", "True"),
		D("long literal", "nulll"),
		D("unterminated string", "\"abc"),
		D("escape of x", "\"\\x\""),
		D("escape of capital U", "\"\\U0041\""),
		D("escaped single quote", "\"\\'\""),
		D("short \\u", "\"\\u12\""),
		D("non-hex \\u", "\"\\u12G4\""),
		D("escaped NUL", "\"\\u0000\""),
		D("escaped NUL in a name", "{\"\\u0000\":1}"),
		D("lone high surrogate", "\"\\ud800\""),
		D("lone low surrogate", "\"\\udc00\""),
		D("high surrogate then letter", "\"\\ud800x\""),
		D("high surrogate then \\u0041", "\"\\ud800\\u0041\""),
		D("two high surrogates", "\"\\ud800\\ud800\""),
		D("high surrogate then \\ue000", "\"\\ud800\\ue000\""),
		D("high surrogate then \\n", "\"\\ud83d\\n\""),
		D("low then high surrogate", "\"\\udfff\\ud800\""),
		D("overlong 2-byte UTF-8", "\"\xc0\xaf\""),
		D("overlong 2-byte UTF-8 C1", "\"\xc1\xbf\""),
		D("overlong 3-byte UTF-8", "\"\xe0\x80\xaf\""),
		D("overlong 4-byte UTF-8", "\"\xf0\x80\x80\xaf\""),
		D("UTF-8 encoded high surrogate", "\"\xed\xa0\x80\""),
		D("UTF-8 encoded low surrogate", "\"\xed\xbf\xbf\""),
		D("UTF-8 above U+10FFFF", "\"\xf4\x90\x80\x80\""),
		D("UTF-8 lead F5", "\"\xf5\x80\x80\x80\""),
		D("UTF-8 byte FF", "\"\xff\""),
		D("lone continuation byte", "\"\x80\""),
		D("cut 2-byte UTF-8", "\"\xc3\""),
		D("cut 3-byte UTF-8", "\"\xe2\x82\""),
		D("cut 4-byte UTF-8", "\"\xf0\x9f\x98\""),
		D("cut UTF-8 at the end", "\"\xe2\x82"),
		D("UTF-8 outside a string", "\xc3\xa9"),
		D("raw control character", "\"a\x01\""),
		D("raw tab in a string", "\"\t\""),
		D("raw newline in a string", "\"\n\""),
		D("raw 0x1f in a string", "\"\x1f\""),
		D("NUL inside a string", "\"a\0b\""),
		D("NUL after an open bracket", "[\0 1]"),
		D("NUL after a string", "{\"a\":\"b\"\0}"),
		D("NUL after a close", "[1]\0"),
		D("two NULs after a number", "[1\0\0]"),
		D("NUL before a value", "\0{}"),
	};
	return cr_make_param_array(struct doc_case, cases,
	    sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct doc_case *c, jscan, invalid_documents_are_refused)
{
	jscan_val root = { "untouched", 9 };
	cr_assert(!jansson_valid(c->text, c->len), "jansson takes: %s",
	    c->what);
	cr_assert(!jscan_doc(c->text, c->len, &root), "%s", c->what);
	cr_assert(val_is(root, "untouched"), "%s: root set", c->what);
}

ParameterizedTestParameters(jscan, valid_documents_are_accepted)
{
	static struct doc_case cases[] = {
		D("empty object", "{}"),
		D("empty array", "[]"),
		D("whitespace around", " \t\r\n{ } \n"),
		D("zero", "0"),
		D("minus zero", "-0"),
		D("real", "-1.5e+10"),
		D("capital exponent", "1E5"),
		D("zero point zero", "0.0"),
		D("real underflow", "1e-400"),
		D("largest integer", "9223372036854775807"),
		D("smallest integer", "-9223372036854775808"),
		D("DBL_MAX", "1.7976931348623157e308"),
		D("true", "true"),
		D("false", "false"),
		D("null", "null"),
		D("empty string", "\"\""),
		D("all short escapes", "\"\\\"\\\\\\/\\b\\f\\n\\r\\t\""),
		D("\\u escape", "\"\\u00e9\\u20AC\""),
		D("surrogate pair", "\"\\ud83d\\ude00\""),
		D("raw UTF-8", "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\""),
		D("largest code point", "\"\xf4\x8f\xbf\xbf\""),
		D("DEL in a string", "\"\x7f\""),
		D("nested", "{\"a\":[1,{\"b\":null}],\"c\":\"d\"}"),
		D("NUL after a number", "[1\0]"),
		D("NUL after a real", "{\"a\":1.5e3\0}"),
		D("NUL after a literal", "{\"a\":true\0,\"b\":2}"),
		D("NUL after a top-level number", "1\0"),
		D("duplicate names", "{\"a\":1,\"a\":2}"),
	};
	return cr_make_param_array(struct doc_case, cases,
	    sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct doc_case *c, jscan, valid_documents_are_accepted)
{
	cr_assert(jansson_valid(c->text, c->len), "jansson refuses: %s",
	    c->what);
	cr_assert(jscan_doc(c->text, c->len, NULL), "%s", c->what);
}

Test(jscan, root_is_the_value_without_whitespace)
{
	jscan_val v;
	cr_assert(jscan_doc(" \n{\"a\":1}\t ", 11, &v));
	cr_assert(val_is(v, "{\"a\":1}"));
	cr_assert(jscan_doc("1\0", 2, &v));
	cr_assert(val_is(v, "1"));
	cr_assert(!jscan_doc(NULL, 0, &v));
}

/* A DynamoDB answer of the kind kv-load checks. */
static const char get_answer[] =
    "{\"Item\":{\"pk\":{\"S\":\"k17\"},\"v\":{\"S\":\"x\\\"y\\\\\"},"
    "\"n\":{\"N\":\"-12.5e3\"},\"l\":{\"L\":[{\"BOOL\":true},"
    "{\"NULL\":true}]},\"u\":{\"S\":\"\\u00e9\xe2\x82\xac\"}},"
    "\"ConsumedCapacity\":{\"CapacityUnits\":0.5,\"TableName\":\"t\"}}";

Test(jscan, every_cut_of_an_answer_is_invalid)
{
	size_t n = sizeof(get_answer) - 1;
	cr_assert(jscan_doc(get_answer, n, NULL));
	for (size_t len = 0; len < n; len++) {
		/* A copy of exactly len bytes, so ASan sees any overread. */
		char *cut = malloc(len + 1);
		cr_assert_not_null(cut);
		memcpy(cut, get_answer, len);
		cr_assert(!jscan_doc(cut, len, NULL), "cut at %zu", len);
		cr_assert(!jansson_valid(cut, len), "jansson, cut at %zu",
		    len);
		free(cut);
	}
}

/* n arrays around inner (which may be empty). */
static char *
nested(size_t n, const char *inner, size_t *len)
{
	size_t in = strlen(inner);
	char *s = malloc(2 * n + in);
	cr_assert_not_null(s);
	memset(s, '[', n);
	memcpy(s + n, inner, in);
	memset(s + n + in, ']', n);
	*len = 2 * n + in;
	return s;
}

Test(jscan, nesting_deeper_than_jansson_allows_is_invalid)
{
	struct {
		size_t arrays;
		const char *inner;
		bool ok;
	} cases[] = {
		{ JSCAN_MAX_DEPTH, "", true },
		{ JSCAN_MAX_DEPTH - 1, "1", true },
		{ JSCAN_MAX_DEPTH - 1, "{}", true },
		{ JSCAN_MAX_DEPTH, "1", false },
		{ JSCAN_MAX_DEPTH, "{}", false },
		{ JSCAN_MAX_DEPTH + 1, "", false },
		{ 100000, "", false },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t len;
		char *s = nested(cases[i].arrays, cases[i].inner, &len);
		cr_assert_eq(jscan_doc(s, len, NULL), cases[i].ok, "case %zu",
		    i);
		cr_assert_eq(jansson_valid(s, len), cases[i].ok,
		    "jansson, case %zu", i);
		free(s);
	}
	/* Objects count as arrays do. */
	size_t len = 0;
	char *s = malloc(8 * (JSCAN_MAX_DEPTH + 1));
	cr_assert_not_null(s);
	for (size_t i = 0; i < JSCAN_MAX_DEPTH; i++)
		len += (size_t) sprintf(s + len, "{\"a\":");
	s[len++] = '1';
	memset(s + len, '}', JSCAN_MAX_DEPTH);
	len += JSCAN_MAX_DEPTH;
	cr_assert(!jscan_doc(s, len, NULL));
	cr_assert(!jansson_valid(s, len));
	free(s);
}

/* 2^1024 - 2^970: strtod rounds it, and anything above, to infinity. */
static const char dbl_half_past_max[] =
    "17976931348623158079372897140530341507993413271003782693617377898044"
    "49682927647509466490179775872070963302864166928879109465555478519404"
    "02630657488671505820681908902000708383676273854845817711531764475730"
    "27006985557136695962284291481986083493647529271907416844436551070434"
    "2711559699508093042880177904174497792";

Test(jscan, reals_overflow_exactly_where_strtod_gives_infinity)
{
	char buf[512];
	const char *h = dbl_half_past_max;
	struct {
		const char *fmt;
		bool ok;
	} cases[] = {
		{ "%se0", false },
		{ "-%s.0", false },
		{ "0.%se309", false },
		{ "0.000%se312", false },
		{ "%.100s.%se209", false },
		{ "%.308se0", true },    /* ten times smaller */
		{ "%.308s1.0", true },   /* just below: last digit 1 < 2 */
		{ "%.308s1.99e0", true },
		{ "%.308s3.0", false },
		{ "0.%se308", true },
		{ "%s0e-1", false },
		{ "%s0e-2", true },
		{ "%s", false },         /* an integer: out of long long */
		{ "00.%se309", false }, /* not JSON at all */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int n = snprintf(buf, sizeof(buf), cases[i].fmt, h, h + 100);
		cr_assert(n > 0 && (size_t) n < sizeof(buf));
		bool want = cases[i].ok;
		cr_assert_eq(jansson_valid(buf, (size_t) n), want,
		    "jansson, case %zu: %s", i, buf);
		cr_assert_eq(jscan_doc(buf, (size_t) n, NULL), want,
		    "case %zu: %s", i, buf);
	}
	cr_assert(!DOC_OK("1e99999999999999999999999"));
	cr_assert(DOC_OK("1e-99999999999999999999999"));
	cr_assert(DOC_OK("0e99999999999999999999999"));
	cr_assert(DOC_OK("0.0000e400"));
}

Test(jscan, kinds)
{
	jscan_val v = root_of("[{}, [], \"s\", -1, 2.5, true, false, null]");
	jscan_kind want[] = { JSCAN_OBJECT, JSCAN_ARRAY, JSCAN_STRING,
		JSCAN_NUMBER, JSCAN_NUMBER, JSCAN_TRUE, JSCAN_FALSE,
		JSCAN_NULL };
	jscan_iter it;
	jscan_val e;
	size_t i = 0;
	jscan_iter_init(&it, v);
	while (jscan_next(&it, &e)) {
		cr_assert_lt(i, sizeof(want) / sizeof(want[0]));
		cr_assert_eq(jscan_kind_of(e), want[i], "element %zu", i);
		i++;
	}
	cr_assert_eq(i, sizeof(want) / sizeof(want[0]));
	cr_assert_eq(jscan_kind_of((jscan_val) { NULL, 0 }), JSCAN_NONE);
}

Test(jscan, member_lookup_last_duplicate_wins)
{
	jscan_val o = root_of("{\"a\":1,\"b\":{\"a\":5},\"a\":[3],\"c\":2}");
	cr_assert(val_is(jscan_get(o, "a"), "[3]"));
	cr_assert(val_is(jscan_get(o, "c"), "2"));
	cr_assert(val_is(jscan_get(jscan_get(o, "b"), "a"), "5"));
	cr_assert_eq(jscan_kind_of(jscan_get(o, "d")), JSCAN_NONE);

	/* The same with jansson, for the record. */
	json_t *j = json_loads("{\"a\":1,\"a\":[3]}", 0, NULL);
	cr_assert(json_is_array(json_object_get(j, "a")));
	json_decref(j);
}

Test(jscan, member_lookup_matches_whole_decoded_names)
{
	jscan_val o = root_of(
	    "{\"pkx\":1,\"p\":2,\"\\u0070k\":3,\"a\\\\b\":4,\"q\\\"\":5,"
	    "\"\\ud83d\\ude00\":6,\"\":7,\"x\":{\"y\":8},"
	    "\"s\":\"\\\"y\\\":\"}");
	cr_assert(val_is(jscan_get(o, "pk"), "3"));
	cr_assert(val_is(jscan_get(o, "pkx"), "1"));
	cr_assert(val_is(jscan_get(o, "p"), "2"));
	cr_assert(val_is(jscan_get(o, "a\\b"), "4"));
	cr_assert(val_is(jscan_get(o, "q\""), "5"));
	cr_assert(val_is(jscan_get(o, "\xf0\x9f\x98\x80"), "6"));
	cr_assert(val_is(jscan_get(o, ""), "7"));
	/* Only members of o itself, not of its values nor inside strings. */
	cr_assert_eq(jscan_kind_of(jscan_get(o, "y")), JSCAN_NONE);
	cr_assert_eq(jscan_kind_of(jscan_get(o, "pk\\")), JSCAN_NONE);
}

Test(jscan, member_lookup_skips_strings_with_escaped_quotes)
{
	jscan_val o = root_of("{ \"a\" : \"x\\\\\" , "
	    "\"b\" : \"\\\"}\\\\\\\"\" ,"
	    " \"c\" : [ \"]\" , { \"}\" : \"{\" } ] , \"d\" : 5 }");
	cr_assert(val_is(jscan_get(o, "a"), "\"x\\\\\""));
	cr_assert(val_is(jscan_get(o, "c"), "[ \"]\" , { \"}\" : \"{\" } ]"));
	cr_assert(val_is(jscan_get(o, "d"), "5"));
}

Test(jscan, member_lookup_in_a_non_object_finds_nothing)
{
	cr_assert_eq(jscan_kind_of(jscan_get(root_of("[\"a\",1]"), "a")),
	    JSCAN_NONE);
	cr_assert_eq(jscan_kind_of(jscan_get(root_of("\"a\""), "a")),
	    JSCAN_NONE);
	cr_assert_eq(jscan_kind_of(jscan_get(root_of("{}"), "a")),
	    JSCAN_NONE);
	cr_assert_eq(jscan_kind_of(jscan_get((jscan_val) { NULL, 0 }, "a")),
	    JSCAN_NONE);
}

Test(jscan, member_after_a_dropped_nul_is_found)
{
	static const char text[] = "{\"a\":1\0,\"b\":true\0}";
	jscan_val o;
	cr_assert(jscan_doc(text, sizeof(text) - 1, &o));
	cr_assert(val_is(jscan_get(o, "a"), "1"));
	cr_assert(val_is(jscan_get(o, "b"), "true"));
}

/* How many elements array arr has (0 if not an array), by walking it. */
static size_t
size_of(jscan_val arr)
{
	jscan_iter it;
	jscan_val e;
	size_t n = 0;
	jscan_iter_init(&it, arr);
	while (jscan_next(&it, &e))
		n++;
	return n;
}

Test(jscan, array_elements_in_order)
{
	jscan_val a = root_of("[ 1 , \"a,]\" ,{\"b\":[2,3]}, [],null ]");
	const char *want[] = { "1", "\"a,]\"", "{\"b\":[2,3]}", "[]", "null" };
	jscan_iter it;
	jscan_val e;
	size_t i = 0;
	jscan_iter_init(&it, a);
	while (jscan_next(&it, &e)) {
		cr_assert_lt(i, 5);
		cr_assert(val_is(e, want[i]), "element %zu", i);
		i++;
	}
	cr_assert_eq(i, 5);
	cr_assert(!jscan_next(&it, &e));
	cr_assert_eq(size_of(a), 5);
	cr_assert_eq(size_of(root_of("[ ]")), 0);
	cr_assert_eq(size_of(root_of("{\"a\":1}")), 0);
	cr_assert_eq(size_of(root_of("[[]]")), 1);
	jscan_iter_init(&it, root_of("7"));
	cr_assert(!jscan_next(&it, &e));
}

Test(jscan, strings_compare_equal_after_decoding)
{
	cr_assert(jscan_str_eq(root_of("\"\\u006b17\""), "k17"));
	cr_assert(jscan_str_eq(root_of("\"k17\""), "k17"));
	cr_assert(!jscan_str_eq(root_of("\"k17\""), "k1"));
	cr_assert(!jscan_str_eq(root_of("\"k17\""), "k17x"));
	cr_assert(!jscan_str_eq(root_of("\"\\u006b1\""), "k17"));
	cr_assert(!jscan_str_eq(root_of("\"\\u006b17\""), "k1"));
	cr_assert(jscan_str_eq(root_of("\"a\\nb\\t\\/\\\"\\\\\""),
	    "a\nb\t/\"\\"));
	cr_assert(jscan_str_eq(root_of("\"\\u00e9\\u20ac\""),
	    "\xc3\xa9\xe2\x82\xac"));
	cr_assert(jscan_str_eq(root_of("\"\\uD83D\\uDE00\""),
	    "\xf0\x9f\x98\x80"));
	cr_assert(jscan_str_eq(root_of("\"\""), ""));
	cr_assert(!jscan_str_eq(root_of("17"), "17"));
	cr_assert(!jscan_str_eq(root_of("null"), "null"));
	cr_assert(!jscan_str_eq((jscan_val) { NULL, 0 }, ""));
}

Test(jscan, string_copy_decodes_and_cuts_like_snprintf)
{
	char buf[8];
	jscan_val s = root_of("\"ab\\u00e9\\n\"");
	cr_assert_eq(jscan_str_copy(s, buf, sizeof(buf)), 5);
	cr_assert_str_eq(buf, "ab\xc3\xa9\n");
	jscan_val l = root_of("\"0123456789\\u0041\"");
	cr_assert_eq(jscan_str_copy(l, buf, sizeof(buf)), 11);
	cr_assert_str_eq(buf, "0123456");
	cr_assert_eq(jscan_str_copy(l, buf, 1), 11);
	cr_assert_str_eq(buf, "");
	cr_assert_eq(jscan_str_copy(l, NULL, 0), 11);
	strcpy(buf, "junk");
	cr_assert_eq(jscan_str_copy(root_of("[\"a\"]"), buf, sizeof(buf)), 0);
	cr_assert_str_eq(buf, "");
}

Test(jscan, decoded_bytes_one_at_a_time)
{
	jscan_chars c;
	jscan_chars_init(&c, root_of("\"a\\u00e9\\ud83d\\ude00\\\"\""));
	const unsigned char want[] = { 'a', 0xc3, 0xa9, 0xf0, 0x9f, 0x98,
		0x80, '"' };
	for (size_t i = 0; i < sizeof(want); i++)
		cr_assert_eq(jscan_chars_next(&c), want[i], "byte %zu", i);
	cr_assert_eq(jscan_chars_next(&c), -1);
	cr_assert_eq(jscan_chars_next(&c), -1);
	jscan_chars_init(&c, root_of("5"));
	cr_assert_eq(jscan_chars_next(&c), -1);
}

Test(jscan, integers_as_jansson_sees_them)
{
	struct {
		const char *text;
		bool is_int;
		long long v;
	} cases[] = {
		{ "0", true, 0 },
		{ "-0", true, 0 },
		{ "42", true, 42 },
		{ "-17", true, -17 },
		{ "9223372036854775807", true, LLONG_MAX },
		{ "-9223372036854775808", true, LLONG_MIN },
		{ "1.0", false, 0 },
		{ "1e3", false, 0 },
		{ "1E3", false, 0 },
		{ "-0.0", false, 0 },
		{ "\"1\"", false, 0 },
		{ "true", false, 0 },
		{ "null", false, 0 },
		{ "[1]", false, 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *t = cases[i].text;
		long long v = 99;
		cr_assert_eq(jscan_int(root_of(t), &v), cases[i].is_int, "%s",
		    t);
		cr_assert_eq(v, cases[i].is_int ? cases[i].v : 99, "%s", t);
		json_t *j = json_loads(t, JSON_DECODE_ANY, NULL);
		cr_assert_eq(json_is_integer(j), cases[i].is_int,
		    "jansson: %s", t);
		json_decref(j);
	}
	/* Out of range: not valid text, and not an integer either. */
	long long v = 99;
	cr_assert(!jscan_int((jscan_val) { "9223372036854775808", 19 }, &v));
	cr_assert(!jscan_int((jscan_val) { "-9223372036854775809", 20 }, &v));
	cr_assert_eq(v, 99);
}

/* --- The walk ---------------------------------------------------------- */

/* Writes each report of a walk as text; stops after `stop` reports. */
typedef struct recorder {
	char out[512];
	size_t n;
	int reports, stop;
} recorder;

static bool
record(recorder *r, const char *what, jscan_val v)
{
	r->n += (size_t) snprintf(r->out + r->n, sizeof(r->out) - r->n,
	    "%s%.*s ", what, (int) v.n, v.p);
	return ++r->reports != r->stop;
}

static bool
rec_open(void *arg, jscan_kind kind)
{
	return record(arg, kind == JSCAN_OBJECT ? "{" : "[",
	    (jscan_val) { "", 0 });
}

static bool
rec_close(void *arg)
{
	return record(arg, "}", (jscan_val) { "", 0 });
}

static bool
rec_name(void *arg, jscan_val name)
{
	return record(arg, "name:", name);
}

static bool
rec_scalar(void *arg, jscan_kind kind, jscan_val v)
{
	static const char *const kinds[] = { "", "", "", "s:", "n:", "t:",
		"f:", "z:" };
	return record(arg, kinds[kind], v);
}

static const jscan_handler recorder_handler = {
	.open = rec_open,
	.close = rec_close,
	.name = rec_name,
	.scalar = rec_scalar,
};

Test(jscan, walk_reports_in_text_order)
{
	static const char doc[] = " {\"a\" : [1, \"x\",true,false,null,{}],"
				  "\"b\\n\":{\"c\":-1.5e3}, \"d\":[]} ";
	recorder r = { .n = 0 };
	jscan_val root;
	cr_assert(jscan_walk(doc, sizeof(doc) - 1, &recorder_handler, &r,
	    &root));
	cr_assert_str_eq(r.out, "{ name:\"a\" [ n:1 s:\"x\" t:true "
	    "f:false z:null { } } name:\"b\\n\" { name:\"c\" n:-1.5e3 } "
	    "name:\"d\" [ } } ");
	cr_assert_eq(root.p, doc + 1);
	cr_assert_eq(root.n, sizeof(doc) - 3);
}

Test(jscan, walk_stops_when_a_report_says_so)
{
	static const char doc[] = "{\"a\":[1,2,3]}";
	/* {, the name, [, 1, 2, 3, ], }: eight reports. */
	for (int stop = 1; stop <= 8; stop++) {
		recorder r = { .n = 0, .stop = stop };
		cr_assert(!jscan_walk(doc, sizeof(doc) - 1, &recorder_handler,
		    &r, NULL), "stop at %d", stop);
		cr_assert_eq(r.reports, stop);
	}
	recorder r = { .n = 0, .stop = 9 };
	cr_assert(jscan_walk(doc, sizeof(doc) - 1, &recorder_handler, &r,
	    NULL));
	cr_assert_eq(r.reports, 8);
}

/* --- jscan and jansson on mutated answers ------------------------------ */

static const char *const seeds[] = {
	get_answer,
	"{\"Count\":2,\"Items\":[{\"pk\":{\"S\":\"q\"},\"sk\":{\"N\":\"0\"}},"
	"{\"pk\":{\"S\":\"q\"},\"sk\":{\"N\":\"1\"}}],\"ScannedCount\":2,"
	"\"LastEvaluatedKey\":{\"pk\":{\"S\":\"q\"},\"sk\":{\"N\":\"1\"}}}",
	"{\"__type\":\"com.amazonaws.dynamodb.v20120810#ThrottlingException\","
	"\"message\":\"Rate of requests exceeds the allowed throughput.\"}",
	"[1, -0, 0.5e-3, 1E+9, true, false, null, \"\\u00e9\\ud83d\\ude00\\n"
	"\\\"\\\\\\/\", \"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\", {}, []]",
	"{\"a\":{\"b\":[[[[1]]]]},\"a\":9223372036854775807,"
	"\"c\":-9223372036854775808, \"d\":1.7976931348623157e308}",
};

Test(jscan, agrees_with_jansson_on_mutated_answers)
{
	uint64_t rng = 20240611;
	size_t valid = 0, runs = 20000;
	for (size_t i = 0; i < runs; i++) {
		const char *seed = seeds[next_rand(&rng) % 5];
		size_t len = strlen(seed);
		char work[1024];
		memcpy(work, seed, len);
		mutate(&rng, work, &len, sizeof(work));
		/* Exactly len bytes on the heap, so ASan sees any overread. */
		char *buf = malloc(len + 1);
		cr_assert_not_null(buf);
		memcpy(buf, work, len);
		bool want = jansson_valid(buf, len);
		jscan_val root;
		cr_assert_eq(jscan_doc(buf, len, &root), want,
		    "run %zu: %.*s", i, (int) len, buf);
		recorder r = { .n = 0 };
		cr_assert_eq(jscan_walk(buf, len, &recorder_handler, &r, NULL),
		    want, "walk, run %zu: %.*s", i, (int) len, buf);
		if (want) {
			valid++;
			/* Walking what is valid must stay inside it. */
			size_of(root);
			jscan_get(root, "Item");
		}
		free(buf);
	}
	/* Enough of both outcomes for the comparison to mean something. */
	cr_assert_gt(valid, runs / 20);
	cr_assert_lt(valid, runs - runs / 20);
}

Test(jscan, agrees_with_jansson_on_numbers)
{
	uint64_t rng = 7;
	char buf[512];
	size_t valid = 0;
	for (size_t i = 0; i < 20000; i++) {
		size_t n = 0;
		if (next_rand(&rng) % 2)
			buf[n++] = '-';
		size_t digits = 1 + next_rand(&rng) % 330;
		size_t point = next_rand(&rng) % (digits + 1);
		for (size_t d = 0; d < digits; d++) {
			char c = d < 309 ? dbl_half_past_max[d] : '0';
			if (next_rand(&rng) % 40 == 0 || d + 1 == digits)
				c = (char) ('0' + next_rand(&rng) % 10);
			if (d == 0 && c == '0')
				c = '1';
			buf[n++] = c;
			if (d + 1 == point && d + 1 < digits)
				buf[n++] = '.';
		}
		long exp = 309 - (long) (point > 0 ? point : digits) +
		    (long) (next_rand(&rng) % 5) - 2;
		if (next_rand(&rng) % 4 != 0)
			n += (size_t) sprintf(buf + n, "e%ld", exp);
		bool want = jansson_valid(buf, n);
		cr_assert_eq(jscan_doc(buf, n, NULL), want, "%.*s", (int) n,
		    buf);
		valid += want;
	}
	/* Numbers on both sides of the limit. */
	cr_assert_gt(valid, 2000);
	cr_assert_lt(valid, 18000);
}
