/*
 * json_test.c — DynamoDB AttributeValue JSON (router/json.c): round trips
 * of every type, canonical numbers and base64, nesting limits, and a table
 * of refused values, each with DynamoDB's exception kind and exact text.
 * Sources of the texts are listed in router/json.c.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

static arena A;

static void
setup(void)
{
	arena_init(&A);
}

static void
teardown(void)
{
	arena_fini(&A);
}

TestSuite(json, .init = setup, .fini = teardown);

static json_t *
parse(const char *text)
{
	json_error_t jerr;
	json_t *j = json_loads(text, JSON_DECODE_ANY, &jerr);

	cr_assert_not_null(j, "bad test JSON %s: %s", text, jerr.text);
	return j;
}

/* to_value converts text (an AttributeValue) and expects success. */
static value
to_value(const char *text)
{
	json_t *j = parse(text);
	json_error err = { 0 };
	value v;
	kv_err e = json_to_value(&A, j, 0, &v, &err);

	cr_assert_eq(e, KV_OK, "%s: %s %s", text, kv_err_name(e), err.msg);
	json_decref(j);
	return v;
}

/* dump returns the compact, key-sorted JSON of v (free it). */
static char *
dump(const value *v)
{
	json_t *j = json_from_value(v);
	char *s;

	cr_assert_not_null(j);
	s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
	json_decref(j);
	return s;
}

/* assert_round_trip converts in and back and expects out. */
static void
assert_round_trip(const char *in, const char *out)
{
	value v = to_value(in);
	char *s = dump(&v);

	cr_assert_str_eq(s, out, "%s", in);
	free(s);
}

Test(json, every_type_round_trips)
{
	static const char *const same[] = {
		"{\"S\":\"hello\"}",
		"{\"S\":\"\"}",
		"{\"N\":\"12.5\"}",
		"{\"N\":\"-7\"}",
		"{\"B\":\"AAEC/w==\"}",
		"{\"B\":\"\"}",
		"{\"BOOL\":true}",
		"{\"BOOL\":false}",
		"{\"NULL\":true}",
		"{\"SS\":[\"b\",\"a\",\"\"]}",
		"{\"NS\":[\"3\",\"-1.5\",\"0\"]}",
		"{\"BS\":[\"Zm9v\",\"\",\"YQ==\"]}",
		"{\"L\":[]}",
		"{\"M\":{}}",
		"{\"L\":[{\"S\":\"x\"},{\"N\":\"1\"},"
		"{\"L\":[{\"NULL\":true}]}]}",
		"{\"M\":{\"\":{\"S\":\"empty name\"},\"a\":{\"M\":{\"b\":"
		"{\"BOOL\":true}}},\"z\":{\"SS\":[\"q\"]}}}",
	};
	size_t i;

	for (i = 0; i < sizeof(same) / sizeof(same[0]); i++)
		assert_round_trip(same[i], same[i]);
	/* Escapes come back as UTF-8: é, €, and U+1F600 from a pair. */
	assert_round_trip("{\"S\":\"h\\u00e9llo \\u20ac \\ud83d\\ude00\"}",
	    "{\"S\":\"h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80\"}");
}

Test(json, numbers_come_back_canonical)
{
	assert_round_trip("{\"N\":\"0.1\"}", "{\"N\":\"0.1\"}");
	assert_round_trip("{\"N\":\"1E+2\"}", "{\"N\":\"100\"}");
	assert_round_trip("{\"N\":\"1.5E2\"}", "{\"N\":\"150\"}");
	assert_round_trip("{\"N\":\"0042.1200\"}", "{\"N\":\"42.12\"}");
	assert_round_trip("{\"N\":\"-0\"}", "{\"N\":\"0\"}");
	assert_round_trip("{\"N\":\"+5\"}", "{\"N\":\"5\"}");
	assert_round_trip("{\"N\":\"1E-5\"}", "{\"N\":\"0.00001\"}");
	assert_round_trip(
	    "{\"N\":\"12345678901234567890123456789012345678\"}",
	    "{\"N\":\"12345678901234567890123456789012345678\"}");
	assert_round_trip(
	    "{\"N\":\"-0.12345678901234567890123456789012345678\"}",
	    "{\"N\":\"-0.12345678901234567890123456789012345678\"}");
	assert_round_trip("{\"NS\":[\"1E+2\",\"0.10\"]}",
	    "{\"NS\":[\"100\",\"0.1\"]}");
}

Test(json, largest_and_smallest_numbers_are_accepted)
{
	value big = to_value(
	    "{\"N\":\"9.9999999999999999999999999999999999999E+125\"}");
	value tiny = to_value("{\"N\":\"1E-130\"}");
	char *s = dump(&big);

	cr_assert_eq(strlen(s), strlen("{\"N\":\"\"}") + 126);
	free(s);
	s = dump(&tiny);
	cr_assert_eq(strlen(s), strlen("{\"N\":\"0.\"}") + 130);
	free(s);
}

/* RFC 4648, section 10. */
Test(json, base64_matches_the_rfc_vectors)
{
	static const char *const vec[][2] = { { "", "" }, { "f", "Zg==" },
		{ "fo", "Zm8=" }, { "foo", "Zm9v" }, { "foob", "Zm9vYg==" },
		{ "fooba", "Zm9vYmE=" }, { "foobar", "Zm9vYmFy" } };
	size_t i;

	for (i = 0; i < sizeof(vec) / sizeof(vec[0]); i++) {
		char text[64];
		value v;

		snprintf(text, sizeof(text), "{\"B\":\"%s\"}", vec[i][1]);
		v = to_value(text);
		cr_assert_eq(v.type, VAL_B);
		cr_assert_eq(v.len, strlen(vec[i][0]));
		cr_assert_eq(memcmp(v.u.bytes, vec[i][0], v.len), 0);
		assert_round_trip(text, text);
	}
}

Test(json, binary_with_all_256_byte_values_round_trips)
{
	uint8_t raw[256];
	value v = { .type = VAL_B, .len = sizeof(raw) }, back;
	json_t *j;
	json_error err;
	size_t i;

	for (i = 0; i < sizeof(raw); i++)
		raw[i] = (uint8_t) i;
	v.u.bytes = (const char *) raw;
	j = json_from_value(&v);
	cr_assert_not_null(j);
	cr_assert_eq(json_string_length(json_object_get(j, "B")), 344);
	cr_assert_str_eq(json_string_value(json_object_get(j, "B")) + 340,
	    "/w==");
	cr_assert_eq(json_to_value(&A, j, 0, &back, &err), KV_OK, "%s",
	    err.msg);
	cr_assert_eq(back.len, 256);
	cr_assert_eq(memcmp(back.u.bytes, raw, 256), 0);
	json_decref(j);
}

Test(json, sets_and_lists_keep_their_order)
{
	value v = to_value("{\"SS\":[\"z\",\"a\",\"m\"]}");

	cr_assert_eq(v.len, 3);
	cr_assert_eq(v.u.elems[0].u.bytes[0], 'z');
	cr_assert_eq(v.u.elems[2].u.bytes[0], 'm');
	assert_round_trip("{\"L\":[{\"N\":\"2\"},{\"N\":\"1\"}]}",
	    "{\"L\":[{\"N\":\"2\"},{\"N\":\"1\"}]}");
}

/* Coral's deserializer ignores members it does not know or set to null. */
Test(json, unknown_and_null_members_are_ignored)
{
	value v = to_value("{\"X\":{\"deep\":[1]},\"S\":\"a\"}");

	cr_assert_eq(v.type, VAL_S);
	v = to_value("{\"S\":null,\"N\":\"1\"}");
	cr_assert_eq(v.type, VAL_N);
	v = to_value("{\"SS\":null,\"L\":[]}");
	cr_assert_eq(v.type, VAL_L);
}

/* Strings that Coral reads as booleans (dynalite, tested on DynamoDB). */
Test(json, boolean_text_is_accepted)
{
	static const char *const yes[] = { "true", "TRUE", "Yes", "1" };
	static const char *const no[] = { "false", "No", "0" };
	size_t i;

	for (i = 0; i < 4; i++) {
		char text[64];
		value v;

		snprintf(text, sizeof(text), "{\"BOOL\":\"%s\"}", yes[i]);
		v = to_value(text);
		cr_assert(v.b, "%s", text);
		snprintf(text, sizeof(text), "{\"NULL\":\"%s\"}", yes[i]);
		v = to_value(text);
		cr_assert_eq(v.type, VAL_NULL);
	}
	for (i = 0; i < 3; i++) {
		char text[64];
		value v;

		snprintf(text, sizeof(text), "{\"BOOL\":\"%s\"}", no[i]);
		v = to_value(text);
		cr_assert_not(v.b, "%s", text);
	}
}

/* nest wraps {"S":"x"} in levels lists: the string sits at that depth. */
static char *
nest(int levels)
{
	size_t cap = (size_t) levels * 16 + 32, k = 0;
	char *s = malloc(cap);
	int i;

	for (i = 0; i < levels; i++)
		k += (size_t) sprintf(s + k, "{\"L\":[");
	k += (size_t) sprintf(s + k, "{\"S\":\"x\"}");
	for (i = 0; i < levels; i++)
		k += (size_t) sprintf(s + k, "]}");
	return s;
}

Test(json, nesting_to_depth_32_is_accepted_and_33_refused)
{
	char *ok = nest(VALUE_MAX_DEPTH), *deep = nest(VALUE_MAX_DEPTH + 1);
	char item_text[2048];
	json_t *j;
	json_error err;
	value v;

	to_value(ok);
	j = parse(deep);
	cr_assert_eq(json_to_value(&A, j, 0, &v, &err), KV_EINVAL);
	cr_assert_eq(err.kind, JSON_ERR_VALIDATION);
	cr_assert_str_eq(err.msg,
	    "Nesting Levels have exceeded supported limits: Attributes in "
	    "the item have nested levels beyond supported limit");
	json_decref(j);
	/* The same limits hold for an attribute of an item. */
	snprintf(item_text, sizeof(item_text), "{\"a\":%s}", ok);
	j = parse(item_text);
	cr_assert_eq(json_to_item(&A, j, &v, &err), KV_OK, "%s", err.msg);
	json_decref(j);
	snprintf(item_text, sizeof(item_text), "{\"a\":%s}", deep);
	j = parse(item_text);
	cr_assert_eq(json_to_item(&A, j, &v, &err), KV_EINVAL);
	cr_assert_eq(err.kind, JSON_ERR_VALIDATION);
	json_decref(j);
	/* A caller one level down has one level less. */
	j = parse(ok);
	cr_assert_eq(json_to_value(&A, j, 1, &v, &err), KV_EINVAL);
	json_decref(j);
	free(ok);
	free(deep);
}

Test(json, maps_nest_like_lists)
{
	size_t k = 0;
	char text[2048];
	json_t *j;
	json_error err;
	value v;
	int i;

	for (i = 0; i < VALUE_MAX_DEPTH + 1; i++)
		k += (size_t) sprintf(text + k, "{\"M\":{\"a\":");
	k += (size_t) sprintf(text + k, "{\"NULL\":true}");
	for (i = 0; i < VALUE_MAX_DEPTH + 1; i++)
		k += (size_t) sprintf(text + k, "}}");
	j = parse(text);
	cr_assert_eq(json_to_value(&A, j, 0, &v, &err), KV_EINVAL);
	cr_assert_str_eq(err.msg,
	    "Nesting Levels have exceeded supported limits: Attributes in "
	    "the item have nested levels beyond supported limit");
	json_decref(j);
	/* One level less is fine. */
	j = parse(text);
	cr_assert_eq(json_to_value(&A,
			 json_object_get(json_object_get(j, "M"), "a"), 0, &v,
			 &err),
	    KV_OK, "%s", err.msg);
	json_decref(j);
}

Test(json, item_round_trips)
{
	static const char text[] = "{\"id\":{\"S\":\"1\"},"
				   "\"n\":{\"N\":\"1E+2\"},"
				   "\"tags\":{\"SS\":[\"a\",\"b\"]}}";
	json_t *j = parse(text), *back;
	json_error err;
	value v;
	char *s;

	cr_assert_eq(json_to_item(&A, j, &v, &err), KV_OK, "%s", err.msg);
	cr_assert_eq(v.type, VAL_M);
	cr_assert_eq(v.len, 3);
	cr_assert_not_null(item_attr(&v, "tags", 4));
	back = json_from_item(&v);
	s = json_dumps(back, JSON_COMPACT | JSON_SORT_KEYS);
	cr_assert_str_eq(s,
	    "{\"id\":{\"S\":\"1\"},\"n\":{\"N\":\"100\"},"
	    "\"tags\":{\"SS\":[\"a\",\"b\"]}}");
	free(s);
	json_decref(back);
	json_decref(j);
}

Test(json, null_item_is_an_empty_map)
{
	json_t *j = json_null();
	json_error err;
	value v;

	cr_assert_eq(json_to_item(&A, j, &v, &err), KV_OK);
	cr_assert_eq(v.type, VAL_M);
	cr_assert_eq(v.len, 0);
}

Test(json, item_names_may_hold_nul_bytes)
{
	json_t *j = json_object(), *back;
	json_error err;
	value v;

	json_object_setn_new(j, "a\0b", 3, parse("{\"S\":\"x\"}"));
	cr_assert_eq(json_to_item(&A, j, &v, &err), KV_OK, "%s", err.msg);
	cr_assert_eq(v.u.attrs[0].name_len, 3);
	cr_assert_not_null(item_attr(&v, "a\0b", 3));
	back = json_from_item(&v);
	/* json_equal() cannot see keys with NUL bytes; look it up. */
	cr_assert_eq(json_object_size(back), 1);
	cr_assert(json_equal(json_object_getn(back, "a\0b", 3),
	    json_object_getn(j, "a\0b", 3)));
	json_decref(back);
	json_decref(j);
}

/* Criterion may run the test in a fresh process: no pointers here. */
struct bad {
	char json[160];
	json_err_kind kind;
	char msg[240];
};

#define SER JSON_ERR_SERIALIZATION
#define VAL JSON_ERR_VALIDATION
#define INVALID "One or more parameter values were invalid: "
#define TRUNC "class com.amazon.coral.value.json.numbers.TruncatingBigNumber"
#define BOOLCLS "class java.lang.Boolean"
#define EMPTY \
	"Supplied AttributeValue is empty, must contain exactly one of the " \
	"supported datatypes"
#define MULTI \
	"Supplied AttributeValue has more than one datatypes set, must " \
	"contain exactly one of the supported datatypes"
#define NAN_MSG "The parameter cannot be converted to a numeric value"
#define LIST "Start of list found where not expected"
#define STRUCT "Start of structure or map found where not expected."
#define TO_STRING TRUNC " can not be converted to an String"
#define NULL_TRUE \
	INVALID "Null attribute value types must have the value of true"
#define LEN4 \
	"Base64 encoded length is expected a multiple of 4 bytes but found: "
#define BLOB(v) "'" v "' can not be converted to a Blob: "

ParameterizedTestParameters(json, refuses_bad_values)
{
	static struct bad cases[] = {
		/* how many types */
		{ "{}", VAL, EMPTY },
		{ "{\"X\":\"y\"}", VAL, EMPTY },
		{ "{\"S\":null}", VAL, EMPTY },
		{ "null", VAL, EMPTY },
		{ "{\"L\":[null]}", VAL, EMPTY },
		{ "{\"S\":\"a\",\"N\":\"1\"}", VAL, MULTI },
		{ "{\"NULL\":true,\"BOOL\":false}", VAL, MULTI },
		/* each type is validated before the count is checked */
		{ "{\"S\":\"a\",\"N\":\"x\"}", VAL, NAN_MSG ": x" },
		/* the shape of the value itself */
		{ "\"x\"", SER, "Expected null" },
		{ "5", SER, "Expected null" },
		{ "true", SER, "Expected null" },
		{ "[]", SER, LIST },
		{ "{\"L\":[5]}", SER, "Expected null" },
		{ "{\"M\":{\"a\":[]}}", SER, LIST },
		/* S and N want strings */
		{ "{\"S\":5}", SER, TO_STRING },
		{ "{\"S\":1.5}", SER, TO_STRING },
		{ "{\"S\":true}", SER,
		    BOOLCLS " can not be converted to an String" },
		{ "{\"S\":[]}", SER, LIST },
		{ "{\"S\":{}}", SER, STRUCT },
		{ "{\"N\":5}", SER, TO_STRING },
		{ "{\"SS\":[\"a\",1]}", SER, TO_STRING },
		{ "{\"NS\":[false]}", SER,
		    BOOLCLS " can not be converted to an String" },
		/* B wants base64 text */
		{ "{\"B\":true}", SER,
		    BOOLCLS " can not be converted to a Blob" },
		{ "{\"B\":5}", SER, TRUNC " can not be converted to a Blob" },
		{ "{\"B\":[]}", SER, LIST },
		{ "{\"BS\":[{}]}", SER, STRUCT },
		{ "{\"B\":\"23456\"}", SER,
		    BLOB("23456") LEN4 "5" },
		{ "{\"B\":\"Zg=\"}", SER,
		    BLOB("Zg=") LEN4 "3" },
		{ "{\"B\":\"\\u00e9\"}", SER,
		    BLOB("\xc3\xa9") LEN4 "1" },
		{ "{\"B\":\"=+/=\"}", SER,
		    BLOB("=+/=") "Invalid Base64 character: '='" },
		{ "{\"B\":\"Z!==\"}", SER,
		    BLOB("Z!==") "Invalid Base64 character: '!'" },
		{ "{\"B\":\"ab\\u00e9c\"}", SER,
		    BLOB("ab\xc3\xa9" "c") "Invalid Base64 character: "
					  "'\xc3\xa9'" },
		{ "{\"B\":\"Zm9 Zg==\"}", SER,
		    BLOB("Zm9 Zg==") "Invalid Base64 character: ' '" },
		{ "{\"B\":\"+/+=\"}", SER,
		    BLOB("+/+=") "Invalid last non-pad Base64 character "
				 "dectected" },
		{ "{\"B\":\"Zh==\"}", SER,
		    BLOB("Zh==") "Invalid last non-pad Base64 character "
				 "dectected" },
		{ "{\"B\":\"A===\"}", SER,
		    BLOB("A===") "Invalid last non-pad Base64 character "
				 "dectected" },
		{ "{\"B\":\"====\"}", SER,
		    BLOB("====") "Invalid last non-pad Base64 character "
				 "dectected" },
		{ "{\"BS\":[\"YQ==\",\"Zm8\"]}", SER,
		    BLOB("Zm8") LEN4 "3" },
		/* BOOL and NULL want booleans */
		{ "{\"BOOL\":5}", SER,
		    TRUNC " can not be converted to an Boolean" },
		{ "{\"BOOL\":\"maybe\"}", SER,
		    "'MAYBE' can not be converted to an Boolean" },
		{ "{\"NULL\":\"23\"}", SER,
		    "'23' can not be converted to an Boolean" },
		{ "{\"BOOL\":[]}", SER, LIST },
		{ "{\"NULL\":{}}", SER, STRUCT },
		/* lists and maps */
		{ "{\"L\":{}}", SER, STRUCT },
		{ "{\"L\":\"x\"}", SER, "Expected list or null" },
		{ "{\"SS\":5}", SER, "Expected list or null" },
		{ "{\"NS\":true}", SER, "Expected list or null" },
		{ "{\"BS\":{}}", SER, STRUCT },
		{ "{\"M\":[]}", SER, LIST },
		{ "{\"M\":\"x\"}", SER, "Expected map or null" },
		{ "{\"M\":7}", SER, "Expected map or null" },
		/* shape errors anywhere win over validation errors */
		{ "{\"L\":[{\"N\":\"x\"},{\"S\":5}]}", SER, TO_STRING },
		{ "{\"SS\":[],\"B\":\"x\"}", SER,
		    BLOB("x") LEN4 "1" },
		/* numbers (messages from number_parse) */
		{ "{\"N\":\"\"}", VAL, NAN_MSG },
		{ "{\"N\":\"abc\"}", VAL, NAN_MSG ": abc" },
		{ "{\"N\":\"NaN\"}", VAL, NAN_MSG ": NaN" },
		{ "{\"N\":\"Infinity\"}", VAL, NAN_MSG ": Infinity" },
		{ "{\"N\":\"1.2.3\"}", VAL, NAN_MSG ": 1.2.3" },
		{ "{\"N\":\"123456789012345678901234567890123456789\"}", VAL,
		    "Attempting to store more than 38 significant digits in a "
		    "Number" },
		{ "{\"N\":\"1E+126\"}", VAL,
		    "Number overflow. Attempting to store a number with "
		    "magnitude larger than supported range" },
		{ "{\"N\":\"-1E+126\"}", VAL,
		    "Number overflow. Attempting to store a number with "
		    "magnitude larger than supported range" },
		{ "{\"N\":\"1E-131\"}", VAL,
		    "Number underflow. Attempting to store a number with "
		    "magnitude smaller than supported range" },
		{ "{\"NS\":[\"1\",\"b\",\"a\"]}", VAL, NAN_MSG ": b" },
		{ "{\"NS\":[\"1\",\"\"]}", VAL, NAN_MSG },
		{ "{\"M\":{\"a\":{\"N\":\"x1\"}}}", VAL, NAN_MSG ": x1" },
		/* NULL */
		{ "{\"NULL\":false}", VAL,
		    NULL_TRUE },
		{ "{\"NULL\":\"no\"}", VAL,
		    NULL_TRUE },
		/* empty sets (the double spaces are DynamoDB's) */
		{ "{\"SS\":[]}", VAL,
		    INVALID "An string set  may not be empty" },
		{ "{\"NS\":[]}", VAL,
		    INVALID "An number set  may not be empty" },
		{ "{\"BS\":[]}", VAL,
		    INVALID "Binary sets should not be empty" },
		{ "{\"L\":[{\"SS\":[]}]}", VAL,
		    INVALID "An string set  may not be empty" },
		/* null members of sets */
		{ "{\"SS\":[\"a\",null]}", VAL,
		    INVALID "An string set may not have a empty string as a "
			    "member" },
		{ "{\"NS\":[null]}", VAL, NAN_MSG },
		{ "{\"BS\":[null]}", VAL,
		    INVALID "Binary sets may not contain null or empty "
			    "values" },
		/* duplicates */
		{ "{\"SS\":[\"a\",\"a\"]}", VAL,
		    INVALID "Input collection [a, a] contains duplicates." },
		{ "{\"SS\":[\"a\",\"b\",\"\",\"b\"]}", VAL,
		    INVALID "Input collection [a, b, , b] contains "
			    "duplicates." },
		{ "{\"NS\":[\"1\",\"1\"]}", VAL,
		    "Input collection contains duplicates" },
		{ "{\"NS\":[\"1\",\"1.0\"]}", VAL,
		    "Input collection contains duplicates" },
		{ "{\"NS\":[\"100\",\"2\",\"1E2\"]}", VAL,
		    "Input collection contains duplicates" },
		{ "{\"BS\":[\"Yg==\",\"Yg==\"]}", VAL,
		    INVALID "Input collection [Yg==, Yg==]of type BS contains "
			    "duplicates." },
		{ "{\"BS\":[\"\",\"YQ==\",\"\"]}", VAL,
		    INVALID "Input collection [, YQ==, ]of type BS contains "
			    "duplicates." },
	};
	return cr_make_param_array(struct bad, cases,
	    sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct bad *c, json, refuses_bad_values)
{
	json_t *j = parse(c->json);
	json_error err = { 0 };
	value v;

	cr_assert_eq(json_to_value(&A, j, 0, &v, &err), KV_EINVAL, "%s",
	    c->json);
	cr_assert_eq(err.kind, c->kind, "%s: kind %d, message %s", c->json,
	    err.kind, err.msg);
	cr_assert_str_eq(err.msg, c->msg, "%s", c->json);
	json_decref(j);
}

Test(json, item_must_be_a_map)
{
	static const char *const bad[][2] = {
		{ "[]", "Start of list found where not expected" },
		{ "\"x\"", "Expected map or null" },
		{ "3", "Expected map or null" },
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_t *j = parse(bad[i][0]);
		json_error err;
		value v;

		cr_assert_eq(json_to_item(&A, j, &v, &err), KV_EINVAL);
		cr_assert_eq(err.kind, JSON_ERR_SERIALIZATION);
		cr_assert_str_eq(err.msg, bad[i][1]);
		json_decref(j);
	}
}

/* The whole item's shape is checked before any value is validated. */
Test(json, item_shape_errors_win_over_earlier_validation_errors)
{
	json_t *j = parse("{\"a\":{\"N\":\"x\"},\"b\":{\"S\":5}}");
	json_error err;
	value v;

	cr_assert_eq(json_to_item(&A, j, &v, &err), KV_EINVAL);
	cr_assert_eq(err.kind, JSON_ERR_SERIALIZATION);
	cr_assert_str_eq(err.msg, TRUNC " can not be converted to an String");
	json_decref(j);
}

Test(json, long_duplicate_lists_are_cut_not_overflowed)
{
	char text[4096];
	size_t k = 0;
	json_t *j;
	json_error err;
	value v;
	int i;

	k += (size_t) sprintf(text + k, "{\"SS\":[");
	for (i = 0; i < 200; i++)
		k += (size_t) sprintf(text + k, "\"member-%d\",", i);
	sprintf(text + k, "\"member-0\"]}");
	j = parse(text);
	cr_assert_eq(json_to_value(&A, j, 0, &v, &err), KV_EINVAL);
	cr_assert_eq(strlen(err.msg), sizeof(err.msg) - 1);
	cr_assert_eq(strncmp(err.msg, INVALID "Input collection [member-0, ",
			 strlen(INVALID "Input collection [member-0, ")),
	    0);
	json_decref(j);
}

/* A message cut in the middle of a character would not fit in a reply. */
Test(json, cut_messages_stay_valid_utf8)
{
	char text[8192];
	size_t k, shift;
	json_t *j, *s;
	json_error err;
	value v;
	int i;

	for (shift = 0; shift < 3; shift++) {
		k = (size_t) sprintf(text, "{\"SS\":[\"%.*s\"", (int) shift,
		    "xx");
		for (i = 0; i < 200; i++)
			k += (size_t) sprintf(text + k,
			    ",\"\xe2\x82\xac%d\"", i); /* € */
		sprintf(text + k, ",\"\xe2\x82\xac" "0\"]}");
		j = parse(text);
		cr_assert_eq(json_to_value(&A, j, 0, &v, &err), KV_EINVAL);
		s = json_string(err.msg);
		cr_assert_not_null(s, "not UTF-8: %s", err.msg);
		json_decref(s);
		json_decref(j);

		/* The same through a formatted message (bad base64). */
		k = (size_t) sprintf(text, "{\"B\":\"%.*s", (int) shift, "AA");
		for (i = 0; i < 300; i++)
			k += (size_t) sprintf(text + k, "\xe2\x82\xac");
		sprintf(text + k, "\"}");
		j = parse(text);
		cr_assert_eq(json_to_value(&A, j, 0, &v, &err), KV_EINVAL);
		s = json_string(err.msg);
		cr_assert_not_null(s, "not UTF-8: %s", err.msg);
		json_decref(s);
		json_decref(j);
	}
}

/* ---- writing JSON text straight from values ---- */

static unsigned rng_state = 12345;

static unsigned
rnd(unsigned n)
{
	rng_state = rng_state * 1103515245u + 12345u;
	return (rng_state >> 8) % n;
}

/* A random string: ASCII, JSON's escapes, control bytes, UTF-8. */
static json_t *
rnd_string(size_t salt)
{
	static const char *const bits[] = { "a", "Z", "0", " ", "\"", "\\",
		"/", "\b", "\f", "\n", "\r", "\t", "\x01", "\x1f", "\x7f",
		"\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xe2\x80\xa8",
		"{", "}", ":", "," };
	char buf[160];
	size_t n = 0, parts = rnd(12);
	for (size_t i = 0; i < parts; i++) {
		const char *b = bits[rnd(sizeof(bits) / sizeof(bits[0]))];
		memcpy(buf + n, b, strlen(b));
		n += strlen(b);
	}
	n += (size_t) snprintf(buf + n, sizeof(buf) - n, "%zu", salt);
	return json_stringn(buf, n);
}

static json_t *
rnd_number(size_t salt)
{
	static const char *const forms[] = { "%zu", "-%zu", "%zu.25",
		"0.%zu", "%zuE+3", "-%zue-7", "000%zu", "1%zu0000000000000000" };
	char buf[64];
	snprintf(buf, sizeof(buf), forms[rnd(8)], salt);
	return json_string(buf);
}

static json_t *
rnd_binary(size_t salt)
{
	static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnop"
				  "qrstuvwxyz0123456789+/";
	char buf[64];
	size_t n = 4 * (1 + rnd(5));
	for (size_t i = 0; i < n; i++)
		buf[i] = b64[(rnd(64) + salt * 7 + i) % 64];
	if (rnd(3) == 0) /* one byte short of a group: "xx==" */
		buf[n - 2] = buf[n - 1] = '=', buf[n - 3] = 'A';
	return json_stringn(buf, n);
}

static json_t *rnd_attribute(int depth);

/* A map of random attributes, as an Item or the body of an M. */
static json_t *
rnd_map(int depth)
{
	json_t *m = json_object();
	size_t n = rnd(depth == 0 ? 8 : 4);
	for (size_t i = 0; i < n; i++) {
		json_t *name = rnd_string(i);
		json_object_set_new(m, json_string_value(name),
		    rnd_attribute(depth + 1));
		json_decref(name);
	}
	return m;
}

static json_t *
rnd_attribute(int depth)
{
	unsigned kind = rnd(depth > 3 ? 7 : 10);
	json_t *v = NULL, *a;
	const char *type = "S";
	size_t n = 1 + rnd(4);
	switch (kind) {
	case 0: v = rnd_string(0); break;
	case 1: type = "N"; v = rnd_number(rnd(1000)); break;
	case 2: type = "B"; v = rnd_binary(rnd(1000)); break;
	case 3: type = "BOOL"; v = json_boolean(rnd(2)); break;
	case 4: type = "NULL"; v = json_true(); break;
	case 5:
	case 6:
		type = kind == 5 ? "SS" : "NS";
		a = json_array();
		for (size_t i = 0; i < n; i++)
			json_array_append_new(a, kind == 5 ? rnd_string(i) :
			    json_string(((char[16]) { 0 })));
		if (kind == 6) {
			json_array_clear(a);
			for (size_t i = 0; i < n; i++) {
				char buf[16];
				snprintf(buf, sizeof(buf), "%zu", i * 3 + 1);
				json_array_append_new(a, json_string(buf));
			}
		}
		v = a;
		break;
	case 7:
		type = "L";
		v = json_array();
		for (size_t i = 0; i < n; i++)
			json_array_append_new(v, rnd_attribute(depth + 1));
		break;
	case 8:
		type = "M";
		v = rnd_map(depth);
		break;
	case 9:
		type = "BS";
		v = json_array();
		for (size_t i = 0; i < n; i++)
			json_array_append_new(v, rnd_binary(i));
		break;
	}
	return json_pack("{so}", type, v);
}

Test(json, written_items_match_jansson_byte_for_byte)
{
	size_t checked = 0;
	for (int round = 0; round < 2000; round++) {
		json_t *j = rnd_map(0);
		json_error err;
		value v;
		if (json_to_item(&A, j, &v, &err) != KV_OK) {
			/* A random binary set may repeat a value. */
			json_decref(j);
			continue;
		}
		json_t *back = json_from_item(&v);
		char *want = json_dumps(back, JSON_COMPACT);
		jtext t;
		jtext_init(&t);
		json_write_item(&t, &v);
		cr_assert(!t.failed);
		cr_assert_eq(t.len, strlen(want));
		cr_assert_str_eq(t.p, want);
		free(want);
		jtext_fini(&t);
		json_decref(back);
		json_decref(j);
		checked++;
	}
	cr_assert_gt(checked, 1500);
}

Test(json, written_text_escapes_every_control_byte)
{
	jtext t;
	char all[32];
	for (int i = 0; i < 32; i++)
		all[i] = (char) i;
	jtext_init(&t);
	jtext_string(&t, all, sizeof(all));
	json_t *s = json_stringn(all, sizeof(all));
	char *want = json_dumps(s, JSON_ENCODE_ANY);
	cr_assert_str_eq(t.p, want);
	cr_assert_str_eq(t.p + 1, "\\u0000\\u0001\\u0002\\u0003\\u0004\\u0005"
	    "\\u0006\\u0007\\b\\t\\n\\u000B\\f\\r\\u000E\\u000F\\u0010\\u0011"
	    "\\u0012\\u0013\\u0014\\u0015\\u0016\\u0017\\u0018\\u0019\\u001A"
	    "\\u001B\\u001C\\u001D\\u001E\\u001F\"");
	free(want);
	json_decref(s);
	jtext_fini(&t);
}

Test(json, written_text_numbers_and_jansson_values)
{
	jtext t;
	jtext_init(&t);
	jtext_uint(&t, 0);
	jtext_lit(&t, ",");
	jtext_uint(&t, UINT64_MAX);
	jtext_lit(&t, ",");
	json_t *j = json_pack("{s:s,s:f}", "TableName", "t",
	    "CapacityUnits", 1.0);
	jtext_json(&t, j);
	json_decref(j);
	cr_assert(!t.failed);
	cr_assert_str_eq(t.p, "0,18446744073709551615,"
	    "{\"TableName\":\"t\",\"CapacityUnits\":1.0}");
	jtext_json(&t, NULL);
	cr_assert(t.failed);
	jtext_fini(&t);
}

/* What jtext_string must write for one byte. */
static size_t
escape_ref(unsigned char c, char *out)
{
	static const char hex[] = "0123456789ABCDEF";
	const char *short_ = c == '"' ? "\\\"" : c == '\\' ? "\\\\" :
	    c == '\b' ? "\\b" : c == '\f' ? "\\f" : c == '\n' ? "\\n" :
	    c == '\r' ? "\\r" : c == '\t' ? "\\t" : NULL;
	if (short_ != NULL) {
		memcpy(out, short_, 2);
		return 2;
	}
	if (c < 0x20) {
		memcpy(out, "\\u00", 4);
		out[4] = hex[c >> 4];
		out[5] = hex[c & 15];
		return 6;
	}
	out[0] = (char) c;
	return 1;
}

Test(json, written_strings_escape_any_byte_at_any_offset)
{
	/* Every byte value at every offset of runs read eight at a time. */
	for (int c = 1; c < 256; c++) {
		for (size_t at = 0; at < 20; at++) {
			char in[20], want[64];
			size_t n = 0;
			memset(in, c == 'a' ? 'b' : 'a', sizeof(in));
			in[at] = (char) c;
			want[n++] = '"';
			for (size_t i = 0; i < sizeof(in); i++)
				n += escape_ref((unsigned char) in[i], want + n);
			want[n++] = '"';
			jtext t;
			jtext_init(&t);
			jtext_string(&t, in, sizeof(in));
			cr_assert_eq(t.len, n, "byte %d at %zu", c, at);
			cr_assert_eq(memcmp(t.p, want, n), 0, "byte %d at %zu",
			    c, at);
			jtext_fini(&t);
		}
	}
}
