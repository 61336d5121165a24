/*
 * workload_test.c — the check of every answer (chaos/load/workload.c):
 * verdicts on GetItem, Query and write answers, error types and throttles
 * of non-200 answers, and, on thousands of mutated answers, the same
 * verdicts as the jansson-based check kv-load used before (kept below as
 * the reference).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <jansson.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/json_mutate.h"
#include "workload.h"

/* --- The reference: the check as written with jansson ----------------- */

static const char *const ref_throttles[] = {
	"ThrottlingException",
	"ProvisionedThroughputExceededException",
	"RequestLimitExceeded",
};

static void
ref_verdict(workload_verdict *v, workload_outcome o, const char *type)
{
	v->outcome = o;
	snprintf(v->type, sizeof(v->type), "%s", type);
}

static void
ref_classify(int status, const char *body, size_t len, workload_verdict *v)
{
	v->type[0] = '\0';
	v->message[0] = '\0';
	if (status == 200) {
		v->outcome = WORKLOAD_OK;
		return;
	}
	json_t *j = json_loadb(body, len, 0, NULL);
	const char *type = json_string_value(json_object_get(j, "__type"));
	const char *msg = json_string_value(json_object_get(j, "message"));
	if (msg == NULL)
		msg = json_string_value(json_object_get(j, "Message"));
	if (msg != NULL)
		snprintf(v->message, sizeof(v->message), "%s", msg);
	if (type == NULL) {
		char t[32];
		snprintf(t, sizeof(t), "HTTP%d", status);
		ref_verdict(v, WORKLOAD_ERROR, t);
		json_decref(j);
		return;
	}
	const char *hash = strrchr(type, '#');
	const char *name = hash != NULL ? hash + 1 : type;
	workload_outcome o = WORKLOAD_ERROR;
	size_t nt = sizeof(ref_throttles) / sizeof(ref_throttles[0]);
	for (size_t i = 0; i < nt; i++)
		if (strcmp(name, ref_throttles[i]) == 0)
			o = WORKLOAD_THROTTLED;
	ref_verdict(v, o, name);
	json_decref(j);
}

static bool
ref_item_has_key(json_t *item, const char *key)
{
	json_t *pk = json_object_get(item, "pk");
	const char *s = json_string_value(json_object_get(pk, "S"));
	return s != NULL && strcmp(s, key) == 0;
}

static long long
ref_item_sk(json_t *item)
{
	json_t *sk = json_object_get(item, "sk");
	const char *n = json_string_value(json_object_get(sk, "N"));
	if (n == NULL)
		return -1;
	char *end;
	long long v = strtoll(n, &end, 10);
	return *end == '\0' && end != n ? v : -1;
}

static const char *
ref_check_page(const workload *w, const workload_req *req, json_t *j)
{
	json_t *items = json_object_get(j, "Items");
	json_t *count = json_object_get(j, "Count");
	if (!json_is_array(items) || !json_is_integer(count))
		return "BadShape";
	long long n = json_integer_value(count);
	if ((size_t) n != json_array_size(items))
		return "BadPage";
	long long lo = req->limit, hi = req->limit;
	if (w->kind == WORKLOAD_YCSB_E) {
		if (lo > 10 - req->sk)
			lo = 10 - req->sk;
	}
	if (n < lo || n > hi)
		return "BadPage";
	long long prev = -1;
	for (size_t i = 0; i < json_array_size(items); i++) {
		json_t *item = json_array_get(items, i);
		long long sk = ref_item_sk(item);
		if (!ref_item_has_key(item, req->key) || sk < req->sk ||
		    sk <= prev)
			return "BadPage";
		prev = sk;
	}
	return NULL;
}

static void
ref_check(const workload *w, const workload_req *req, int status,
    const char *body, size_t len, workload_verdict *v)
{
	ref_classify(status, body, len, v);
	if (status != 200 || !w->check)
		return;
	json_t *j = json_loadb(body, len, 0, NULL);
	if (!json_is_object(j)) {
		ref_verdict(v, WORKLOAD_WRONG, "BadJson");
		json_decref(j);
		return;
	}
	const char *wrong = NULL;
	switch (req->op) {
	case WORKLOAD_OP_GET: {
		json_t *item = json_object_get(j, "Item");
		if (item == NULL)
			wrong = "MissingItem";
		else if (!json_is_object(item) ||
		    !ref_item_has_key(item, req->key))
			wrong = "WrongItem";
		break;
	}
	case WORKLOAD_OP_QUERY:
		wrong = ref_check_page(w, req, j);
		break;
	default:
		break;
	}
	if (wrong != NULL)
		ref_verdict(v, WORKLOAD_WRONG, wrong);
	json_decref(j);
}

/* --- Helpers ----------------------------------------------------------- */

static void
make(workload *w, workload_kind kind)
{
	zipf z;
	cr_assert_eq(zipf_init(&z, ZIPF_UNIFORM, 100, 0), KV_OK);
	cr_assert_eq(workload_init(w, kind, "t", "k", 8, &z, 1, true), KV_OK);
}

static workload_req
req_of(workload_op op, const char *key, int64_t sk, int limit)
{
	workload_req r;
	memset(&r, 0, sizeof(r));
	r.op = op;
	snprintf(r.key, sizeof(r.key), "%s", key);
	r.sk = sk;
	r.limit = limit;
	return r;
}

/* Checks body as a 200 answer, with the reference agreeing. */
static workload_verdict
check200(const workload *w, const workload_req *req, const char *body)
{
	workload_verdict v, ref;
	workload_check(w, req, 200, body, strlen(body), &v);
	ref_check(w, req, 200, body, strlen(body), &ref);
	cr_assert_eq(v.outcome, ref.outcome, "reference differs: %s", body);
	cr_assert_str_eq(v.type, ref.type, "reference differs: %s", body);
	return v;
}

static void
expect_ok(const workload *w, const workload_req *req, const char *body)
{
	workload_verdict v = check200(w, req, body);
	cr_assert_eq(v.outcome, WORKLOAD_OK, "%s: %s", v.type, body);
}

static void
expect_wrong(const workload *w, const workload_req *req, const char *body,
    const char *why)
{
	workload_verdict v = check200(w, req, body);
	cr_assert_eq(v.outcome, WORKLOAD_WRONG, "not wrong: %s", body);
	cr_assert_str_eq(v.type, why, "%s", body);
}

/*
 * Writes a Query page into buf: Count as the text count, and one item of
 * pk per sort key text in sks.
 */
static const char *
page(char *buf, size_t cap, const char *count, const char *pk,
    const char *const *sks, size_t n)
{
	size_t at = (size_t) snprintf(buf, cap, "{\"Count\":%s,\"Items\":[",
	    count);
	for (size_t i = 0; i < n; i++)
		at += (size_t) snprintf(buf + at, cap - at,
		    "%s{\"pk\":{\"S\":\"%s\"},\"sk\":{\"N\":\"%s\"},"
		    "\"v\":{\"S\":\"xxxxxxxx\"}}", i > 0 ? "," : "", pk,
		    sks[i]);
	at += (size_t) snprintf(buf + at, cap - at, "],\"ScannedCount\":%zu}",
	    n);
	cr_assert_lt(at, cap);
	return buf;
}

static const char *const ten[] = { "0", "1", "2", "3", "4", "5", "6", "7",
	"8", "9" };

/* --- GetItem ----------------------------------------------------------- */

Test(workload, get_right_item_is_ok)
{
	workload w;
	make(&w, WORKLOAD_GET);
	workload_req r = req_of(WORKLOAD_OP_GET, "k17", -1, 0);
	expect_ok(&w, &r, "{\"Item\":{\"pk\":{\"S\":\"k17\"},"
	    "\"v\":{\"S\":\"xxxxxxxx\"}}}");
	/* Extra members and ConsumedCapacity change nothing. */
	expect_ok(&w, &r, "{\"ConsumedCapacity\":{\"CapacityUnits\":0.5,"
	    "\"TableName\":\"t\"},\"Item\":{\"v\":{\"S\":\"x\"},\"pk\":{"
	    "\"S\":\"k17\"},\"n\":{\"N\":\"3\"}},\"Other\":[1,2,{}]}");
	/* A key spelled with escapes is the same key. */
	expect_ok(&w, &r, "{\"Item\":{\"pk\":{\"S\":\"\\u006b17\"}}}");
	expect_ok(&w, &r, "{\"Item\":{\"\\u0070k\":{\"\\u0053\":\"k\\u0031"
	    "7\"}}}");
	workload_fini(&w);
}

Test(workload, get_without_item_is_missing_item)
{
	workload w;
	make(&w, WORKLOAD_GET);
	workload_req r = req_of(WORKLOAD_OP_GET, "k17", -1, 0);
	expect_wrong(&w, &r, "{}", "MissingItem");
	expect_wrong(&w, &r, "{\"item\":{\"pk\":{\"S\":\"k17\"}}}",
	    "MissingItem");
	expect_wrong(&w, &r, "{\"ConsumedCapacity\":{\"Item\":1}}",
	    "MissingItem");
	workload_fini(&w);
}

Test(workload, get_of_another_item_is_wrong_item)
{
	workload w;
	make(&w, WORKLOAD_GET);
	workload_req r = req_of(WORKLOAD_OP_GET, "k17", -1, 0);
	expect_wrong(&w, &r, "{\"Item\":null}", "WrongItem");
	expect_wrong(&w, &r, "{\"Item\":[]}", "WrongItem");
	expect_wrong(&w, &r, "{\"Item\":\"k17\"}", "WrongItem");
	expect_wrong(&w, &r, "{\"Item\":{}}", "WrongItem");
	expect_wrong(&w, &r, "{\"Item\":{\"pk\":{\"S\":\"k18\"}}}",
	    "WrongItem");
	expect_wrong(&w, &r, "{\"Item\":{\"pk\":{\"S\":\"k1\"}}}",
	    "WrongItem");
	expect_wrong(&w, &r, "{\"Item\":{\"pk\":{\"S\":\"k170\"}}}",
	    "WrongItem");
	expect_wrong(&w, &r, "{\"Item\":{\"pk\":{\"N\":\"17\"}}}",
	    "WrongItem");
	expect_wrong(&w, &r, "{\"Item\":{\"pk\":\"k17\"}}", "WrongItem");
	/* The last of duplicate members counts, as with jansson. */
	expect_wrong(&w, &r, "{\"Item\":{\"pk\":{\"S\":\"k17\"},"
	    "\"pk\":{\"S\":\"k18\"}}}", "WrongItem");
	expect_ok(&w, &r, "{\"Item\":{\"pk\":{\"S\":\"k18\"}},"
	    "\"Item\":{\"pk\":{\"S\":\"k17\"}}}");
	workload_fini(&w);
}

Test(workload, invalid_json_is_bad_json)
{
	workload w;
	make(&w, WORKLOAD_GET);
	workload_req r = req_of(WORKLOAD_OP_GET, "k17", -1, 0);
	expect_wrong(&w, &r, "", "BadJson");
	expect_wrong(&w, &r, "{\"Item\":{\"pk\":{\"S\":\"k17\"}}",
	    "BadJson");
	expect_wrong(&w, &r, "{\"Item\":{\"pk\":{\"S\":\"k17\"}}}x",
	    "BadJson");
	expect_wrong(&w, &r, "{\"Item\":{\"pk\":{\"S\":\"\\ud800\"}}}",
	    "BadJson");
	expect_wrong(&w, &r, "{\"Item\":{\"n\":99999999999999999999}}",
	    "BadJson");
	expect_wrong(&w, &r, "\"k17\"", "BadJson");
	expect_wrong(&w, &r, "[]", "BadJson");
	workload_fini(&w);
}

Test(workload, without_checks_any_200_is_ok)
{
	workload w;
	make(&w, WORKLOAD_GET);
	w.check = false;
	workload_req r = req_of(WORKLOAD_OP_GET, "k17", -1, 0);
	expect_ok(&w, &r, "not json");
	expect_ok(&w, &r, "{}");
	workload_fini(&w);
}

/* --- Query ------------------------------------------------------------- */

Test(workload, query_good_page_is_ok)
{
	workload w;
	char buf[2048];
	make(&w, WORKLOAD_QUERY);
	workload_req r = req_of(WORKLOAD_OP_QUERY, "q", -1, 10);
	expect_ok(&w, &r, page(buf, sizeof(buf), "10", "q", ten, 10));
	const char *const later[] = { "40", "41", "42", "50", "51", "52",
		"60", "61", "62", "99" };
	expect_ok(&w, &r, page(buf, sizeof(buf), "10", "q", later, 10));
	workload_fini(&w);
}

Test(workload, query_bad_pages)
{
	workload w;
	char buf[2048];
	make(&w, WORKLOAD_QUERY);
	workload_req r = req_of(WORKLOAD_OP_QUERY, "q", -1, 10);
	/* Count not the number of items. */
	expect_wrong(&w, &r, page(buf, sizeof(buf), "9", "q", ten, 10),
	    "BadPage");
	expect_wrong(&w, &r, page(buf, sizeof(buf), "-1", "q", ten, 10),
	    "BadPage");
	/* Not a page of 10. */
	expect_wrong(&w, &r, page(buf, sizeof(buf), "9", "q", ten, 9),
	    "BadPage");
	/* Out of order, or repeated. */
	const char *const unsorted[] = { "0", "1", "3", "2", "4", "5", "6",
		"7", "8", "9" };
	expect_wrong(&w, &r, page(buf, sizeof(buf), "10", "q", unsorted, 10),
	    "BadPage");
	const char *const twice[] = { "0", "1", "1", "2", "4", "5", "6", "7",
		"8", "9" };
	expect_wrong(&w, &r, page(buf, sizeof(buf), "10", "q", twice, 10),
	    "BadPage");
	/* Another partition's items. */
	expect_wrong(&w, &r, page(buf, sizeof(buf), "10", "r", ten, 10),
	    "BadPage");
	/* A sort key that is not wholly an integer. */
	const char *const junk[] = { "0", "1", "2", "3", "4", "5x", "6", "7",
		"8", "9" };
	expect_wrong(&w, &r, page(buf, sizeof(buf), "10", "q", junk, 10),
	    "BadPage");
	workload_fini(&w);
}

Test(workload, query_of_the_wrong_shape_is_bad_shape)
{
	workload w;
	char buf[2048];
	make(&w, WORKLOAD_QUERY);
	workload_req r = req_of(WORKLOAD_OP_QUERY, "q", -1, 10);
	expect_wrong(&w, &r, page(buf, sizeof(buf), "\"10\"", "q", ten, 10),
	    "BadShape");
	expect_wrong(&w, &r, page(buf, sizeof(buf), "10.0", "q", ten, 10),
	    "BadShape");
	expect_wrong(&w, &r, page(buf, sizeof(buf), "1e1", "q", ten, 10),
	    "BadShape");
	expect_wrong(&w, &r, page(buf, sizeof(buf), "null", "q", ten, 10),
	    "BadShape");
	expect_wrong(&w, &r, "{\"Count\":10,\"Items\":{}}", "BadShape");
	expect_wrong(&w, &r, "{\"Count\":0,\"Items\":null}", "BadShape");
	expect_wrong(&w, &r, "{\"Count\":0}", "BadShape");
	expect_wrong(&w, &r, "{\"Items\":[]}", "BadShape");
	workload_fini(&w);
}

Test(workload, ycsb_e_page_bounds)
{
	workload w;
	char buf[2048];
	make(&w, WORKLOAD_YCSB_E);
	/* sk >= 7 with Limit 5: at least 3 (7, 8, 9), at most 5. */
	workload_req r = req_of(WORKLOAD_OP_QUERY, "k3", 7, 5);
	const char *const sks[] = { "7", "8", "9", "10", "11", "12" };
	expect_ok(&w, &r, page(buf, sizeof(buf), "3", "k3", sks, 3));
	expect_ok(&w, &r, page(buf, sizeof(buf), "4", "k3", sks, 4));
	expect_ok(&w, &r, page(buf, sizeof(buf), "5", "k3", sks, 5));
	expect_wrong(&w, &r, page(buf, sizeof(buf), "2", "k3", sks, 2),
	    "BadPage");
	expect_wrong(&w, &r, page(buf, sizeof(buf), "6", "k3", sks, 6),
	    "BadPage");
	/* Below the requested start. */
	const char *const low[] = { "6", "7", "8" };
	expect_wrong(&w, &r, page(buf, sizeof(buf), "3", "k3", low, 3),
	    "BadPage");
	workload_fini(&w);
}

/* --collections: one item of a collection by pk and sk, pages of 10. */
Test(workload, collections_address_items_and_pages)
{
	workload w;
	http_buf b;
	workload_req r;
	char buf[2048];
	make(&w, WORKLOAD_GET);
	w.collections = true;
	for (workload_op op = WORKLOAD_OP_GET; op <= WORKLOAD_OP_PUT; op++) {
		http_buf_init(&b);
		cr_assert_eq(workload_request(&w, op, &r, &b), KV_OK);
		cr_assert(r.sk >= 0 && r.sk <= 9, "sk %lld", (long long) r.sk);
		char want[64];
		snprintf(want, sizeof(want), "\"sk\":{\"N\":\"%lld\"}",
		    (long long) r.sk);
		cr_assert_not_null(memmem(b.p, b.len, want, strlen(want)),
		    "%.*s", (int) b.len, b.p);
		cr_assert_not_null(memmem(b.p, b.len, r.key, strlen(r.key)));
		http_buf_fini(&b);
	}
	cr_assert_eq(workload_load_items(&w), 100 * 10);
	workload_fini(&w);

	make(&w, WORKLOAD_QUERY);
	w.collections = true;
	http_buf_init(&b);
	cr_assert_eq(workload_request(&w, WORKLOAD_OP_QUERY, &r, &b), KV_OK);
	cr_assert_eq(r.sk, 0);
	cr_assert_eq(r.limit, 10);
	cr_assert_neq(strcmp(r.key, "q"), 0, "a drawn key, not q");
	http_buf_fini(&b);
	expect_ok(&w, &r, page(buf, sizeof(buf), "10", r.key, ten, 10));
	expect_wrong(&w, &r, page(buf, sizeof(buf), "9", r.key, ten, 9),
	    "BadPage");
	expect_wrong(&w, &r, page(buf, sizeof(buf), "10", "k0x", ten, 10),
	    "BadPage");
	workload_fini(&w);
}

Test(workload, sort_keys_are_read_as_strtoll_reads_them)
{
	workload w;
	char buf[512];
	make(&w, WORKLOAD_YCSB_E);
	const char *const texts[] = { "7", " 7", "\\t\\n7", "+7", "-7", "07",
		"7 ", "7x", "", " ", "+", "-", "0x7", "\\u0037", "7.0", "7e0",
		"\\u00a07", "9223372036854775807", "9223372036854775808",
		"99999999999999999999", "-9223372036854775808",
		"-99999999999999999999", "0000000000000000000000000000000007",
		"                                                    7" };
	const int64_t starts[] = { -1, 0, 7, 8, INT64_MAX };
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		for (size_t k = 0; k < sizeof(starts) / sizeof(*starts); k++) {
			workload_req r = req_of(WORKLOAD_OP_QUERY, "k3",
			    starts[k], 1);
			check200(&w, &r,
			    page(buf, sizeof(buf), "1", "k3", &texts[i], 1));
			/* And as the second key, after 6. */
			r.limit = 2;
			const char *two[] = { "6", texts[i] };
			if (starts[k] <= 6)
				check200(&w, &r,
				    page(buf, sizeof(buf), "2", "k3", two, 2));
		}
	}
	workload_req r = req_of(WORKLOAD_OP_QUERY, "k3", 7, 1);
	const char *const ok[] = { " 7", "+7", "07", "\\u0037" };
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		expect_ok(&w, &r,
		    page(buf, sizeof(buf), "1", "k3", &ok[i], 1));
	const char *const bad[] = { "7 ", "7x", "", "7.0", "0x7" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		expect_wrong(&w, &r, page(buf, sizeof(buf), "1", "k3", &bad[i],
		    1), "BadPage");
	workload_fini(&w);
}

/* --- Writes ------------------------------------------------------------ */

Test(workload, write_answers_must_be_objects)
{
	workload w;
	make(&w, WORKLOAD_YCSB_A);
	workload_req put = req_of(WORKLOAD_OP_PUT, "k1", -1, 0);
	workload_req upd = req_of(WORKLOAD_OP_UPDATE, "k1", -1, 0);
	expect_ok(&w, &put, "{}");
	expect_ok(&w, &upd, "{\"Attributes\":{\"n\":{\"N\":\"3\"}}}");
	expect_wrong(&w, &put, "[]", "BadJson");
	expect_wrong(&w, &upd, "", "BadJson");
	expect_wrong(&w, &upd, "{", "BadJson");
	workload_fini(&w);
}

/* --- Non-200 answers --------------------------------------------------- */

/* Checks a status answer against the reference; returns the verdict. */
static workload_verdict
check_status(int status, const char *body)
{
	workload w;
	make(&w, WORKLOAD_GET);
	workload_req r = req_of(WORKLOAD_OP_GET, "k1", -1, 0);
	workload_verdict v, ref;
	workload_check(&w, &r, status, body, strlen(body), &v);
	ref_check(&w, &r, status, body, strlen(body), &ref);
	cr_assert_eq(v.outcome, ref.outcome, "%s", body);
	cr_assert_str_eq(v.type, ref.type, "%s", body);
	cr_assert_str_eq(v.message, ref.message, "%s", body);
	workload_fini(&w);
	return v;
}

Test(workload, errors_by_type_after_the_last_hash)
{
	workload_verdict v = check_status(400, "{\"__type\":\"com.amazonaws."
	    "dynamodb.v20120810#ThrottlingException\",\"message\":\"slow\"}");
	cr_assert_eq(v.outcome, WORKLOAD_THROTTLED);
	cr_assert_str_eq(v.type, "ThrottlingException");
	cr_assert_str_eq(v.message, "slow");

	v = check_status(400, "{\"Message\":\"Big\",\"__type\":\"a#b#"
	    "ProvisionedThroughputExceededException\"}");
	cr_assert_eq(v.outcome, WORKLOAD_THROTTLED);
	cr_assert_str_eq(v.message, "Big");

	v = check_status(400, "{\"__type\":\"x\\u0023RequestLimitExceeded\"}");
	cr_assert_eq(v.outcome, WORKLOAD_THROTTLED);
	cr_assert_str_eq(v.type, "RequestLimitExceeded");

	v = check_status(400, "{\"__type\":\"ValidationException\","
	    "\"message\":7,\"Message\":\"the other\"}");
	cr_assert_eq(v.outcome, WORKLOAD_ERROR);
	cr_assert_str_eq(v.type, "ValidationException");
	cr_assert_str_eq(v.message, "the other");

	/* A longer name that starts like a throttle is not one. */
	v = check_status(400, "{\"__type\":\"#ThrottlingExceptionX\"}");
	cr_assert_eq(v.outcome, WORKLOAD_ERROR);

	v = check_status(500, "<html>oops</html>");
	cr_assert_eq(v.outcome, WORKLOAD_ERROR);
	cr_assert_str_eq(v.type, "HTTP500");
	cr_assert_str_eq(v.message, "");

	v = check_status(503, "{\"__type\":5,\"message\":\"m\"}");
	cr_assert_str_eq(v.type, "HTTP503");
	cr_assert_str_eq(v.message, "m");

	v = check_status(400, "[{\"__type\":\"a#ThrottlingException\"}]");
	cr_assert_str_eq(v.type, "HTTP400");
}

Test(workload, long_types_and_messages_are_cut)
{
	char body[1024];
	char type[200];
	memset(type, 'T', sizeof(type) - 1);
	type[sizeof(type) - 1] = '\0';
	char msg[400];
	memset(msg, 'm', sizeof(msg) - 1);
	msg[sizeof(msg) - 1] = '\0';
	snprintf(body, sizeof(body), "{\"__type\":\"a#%s\",\"message\":"
	    "\"\\u00e9%s\"}", type, msg);
	workload_verdict v = check_status(400, body);
	cr_assert_eq(strlen(v.type), sizeof(v.type) - 1);
	cr_assert_eq(strlen(v.message), sizeof(v.message) - 1);
}

/* --- Against the reference, on mutated answers ------------------------- */

/* Bytes a mutation puts in; digits often, to move keys and counts. */
static const char answer_bytes[] = "0123456789012345678901234567890123456789"
    "{}[]\",:\\u-+.eE \tqkS\x01\x80\xc3\xa9\xed\xa0";

/* Mostly overwrites, so that most answers keep their shape. */
static const mutation answer_damage = { answer_bytes, sizeof(answer_bytes),
	3, 16, 8, 4, 1, 3 };

/* How often each verdict came up, to show the runs reach them all. */
typedef struct tally {
	size_t ok, bad_json, other_wrong, throttled, error;
} tally;

static void
compare_mutants(const workload *w, const workload_req *req, int status,
    const char *seed, uint64_t rng, size_t runs, tally *t)
{
	for (size_t i = 0; i < runs; i++) {
		char work[4096];
		size_t len = strlen(seed);
		cr_assert_lt(len, sizeof(work));
		memcpy(work, seed, len);
		mutate_by(&answer_damage, &rng, work, &len, sizeof(work));
		char *buf = malloc(len + 1);
		cr_assert_not_null(buf);
		memcpy(buf, work, len);
		workload_verdict v, ref;
		workload_check(w, req, status, buf, len, &v);
		ref_check(w, req, status, buf, len, &ref);
		cr_assert_eq(v.outcome, ref.outcome, "run %zu: %.*s", i,
		    (int) len, buf);
		cr_assert_str_eq(v.type, ref.type, "run %zu: %.*s", i,
		    (int) len, buf);
		cr_assert_str_eq(v.message, ref.message, "run %zu: %.*s", i,
		    (int) len, buf);
		if (v.outcome == WORKLOAD_OK)
			t->ok++;
		else if (strcmp(v.type, "BadJson") == 0)
			t->bad_json++;
		else if (v.outcome == WORKLOAD_WRONG)
			t->other_wrong++;
		else if (v.outcome == WORKLOAD_THROTTLED)
			t->throttled++;
		else
			t->error++;
		free(buf);
	}
}

Test(workload, same_verdicts_as_jansson_on_mutated_get_answers)
{
	workload w;
	tally t = { 0 };
	make(&w, WORKLOAD_GET);
	workload_req r = req_of(WORKLOAD_OP_GET, "k17", -1, 0);
	compare_mutants(&w, &r, 200, "{\"Item\":{\"pk\":{\"S\":\"k17\"},"
	    "\"v\":{\"S\":\"xxxxxxxx\"}},\"ConsumedCapacity\":{"
	    "\"CapacityUnits\":0.5,\"TableName\":\"t\"}}", 1, 5000, &t);
	compare_mutants(&w, &r, 200, "{\"Item\":{\"pk\":{\"S\":\"\\u006b17\"}"
	    "},\"Item\":{\"pk\":{\"S\":\"k17\"}}}", 2, 2000, &t);
	cr_assert_gt(t.ok, 100);
	cr_assert_gt(t.bad_json, 100);
	cr_assert_gt(t.other_wrong, 100);
	workload_fini(&w);
}

Test(workload, same_verdicts_as_jansson_on_mutated_pages)
{
	workload w;
	tally t = { 0 };
	char buf[2048];
	make(&w, WORKLOAD_QUERY);
	workload_req r = req_of(WORKLOAD_OP_QUERY, "q", -1, 10);
	compare_mutants(&w, &r, 200,
	    page(buf, sizeof(buf), "10", "q", ten, 10), 3, 5000, &t);
	workload_fini(&w);
	make(&w, WORKLOAD_YCSB_E);
	r = req_of(WORKLOAD_OP_QUERY, "k3", 7, 5);
	const char *const sks[] = { "7", "8", "9", "10" };
	compare_mutants(&w, &r, 200,
	    page(buf, sizeof(buf), "4", "k3", sks, 4), 4, 5000, &t);
	cr_assert_gt(t.ok, 100);
	cr_assert_gt(t.bad_json, 100);
	cr_assert_gt(t.other_wrong, 100);
	workload_fini(&w);
}

Test(workload, same_verdicts_as_jansson_on_mutated_errors)
{
	workload w;
	tally t = { 0 };
	make(&w, WORKLOAD_GET);
	workload_req r = req_of(WORKLOAD_OP_GET, "k1", -1, 0);
	compare_mutants(&w, &r, 400, "{\"__type\":\"com.amazonaws.dynamodb."
	    "v20120810#ThrottlingException\",\"message\":\"Rate of requests "
	    "exceeds the allowed throughput.\"}", 5, 5000, &t);
	compare_mutants(&w, &r, 400, "{\"Message\":\"a\\u00e9\\n\",\"__type\":"
	    "\"x#RequestLimitExceeded\",\"message\":null}", 6, 3000, &t);
	cr_assert_gt(t.throttled, 100);
	cr_assert_gt(t.error, 100);
	workload_fini(&w);
}
