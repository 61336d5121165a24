/*
 * http_parse_test.c — the router's incremental HTTP/1.1 request parser
 * (router/http/http_parse.c): requests framed by Content-Length and by chunks,
 * fed whole, byte by byte and pipelined; what it keeps of the headers
 * (method, path, X-Amz-Target, Authorization, keep-alive, Expect) and of
 * fields too long for it; "100 Continue" asked for once; and every refusal
 * with its exact status. Each call hands the parser a fresh copy of the
 * bytes, scribbled over and freed afterwards, so a parser that kept a
 * pointer instead of an offset reads garbage. The server around it is
 * tested end to end in tests/integration/test_http.py.
 */
#define _GNU_SOURCE /* vasprintf */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_parse.h"

#define MAX_BODY (16u * 1024 * 1024)

static http_req rq;

static void
setup(void)
{
	http_req_init(&rq);
}

static void
teardown(void)
{
	http_req_fini(&rq);
}

TestSuite(http_parse, .init = setup, .fini = teardown);

/* reset readies rq for the next request, as the server does. */
static void
reset(http_req *r)
{
	http_req_fini(r);
	http_req_init(r);
}

/*
 * parse_n parses s[0..len) into r from a new allocation of exactly len
 * bytes, which is overwritten and freed before returning (see the file
 * header).
 */
static http_status
parse_n(http_req *r, const char *s, size_t len, size_t max_body, bool *cont)
{
	char *copy = malloc(len > 0 ? len : 1);
	cr_assert_not_null(copy);
	memcpy(copy, s, len);
	*cont = true; /* the parser must set it either way */
	http_status st = http_req_parse(r, copy, len, max_body, cont);
	memset(copy, '#', len);
	free(copy);
	return st;
}

/* parse parses all of s into rq; a whole request never asks to continue. */
static http_status
parse(const char *s, size_t max_body)
{
	bool cont;
	http_status st = parse_n(&rq, s, strlen(s), max_body, &cont);
	if (st != HTTP_INCOMPLETE)
		cr_assert(!cont, "send_continue with status %d", st);
	return st;
}

/*
 * feed_bytewise parses s into r one byte more per call: every prefix must
 * be HTTP_INCOMPLETE and the whole HTTP_COMPLETE. Returns how many calls
 * set send_continue.
 */
static int
feed_bytewise(http_req *r, const char *s, size_t max_body)
{
	size_t len = strlen(s);
	int continues = 0;
	for (size_t i = 1; i <= len; i++) {
		bool cont;
		http_status st = parse_n(r, s, i, max_body, &cont);
		continues += cont;
		cr_assert_eq(st, i < len ? HTTP_INCOMPLETE : HTTP_COMPLETE,
		    "after %zu of %zu bytes: status %d", i, len, st);
	}
	return continues;
}

static void same(const http_req *a, const http_req *b, const char *buf);

/*
 * whole_and_bytewise parses s into *whole in one call and into rq one
 * byte more per call (feed_bytewise, asking for no "100 Continue"): both
 * complete, and the same. Release *whole with http_req_fini.
 */
static void
whole_and_bytewise(http_req *whole, http_req *r, const char *s)
{
	bool cont;
	http_req_init(whole);
	cr_assert_eq(parse_n(whole, s, strlen(s), MAX_BODY, &cont),
	    HTTP_COMPLETE);
	cr_assert_eq(feed_bytewise(r, s, MAX_BODY), 0);
	same(r, whole, s);
}

/* asprintf that cannot fail in a test; free the result. */
static char *
fmt(const char *f, ...)
{
	va_list ap;
	char *s;
	va_start(ap, f);
	int n = vasprintf(&s, f, ap);
	va_end(ap);
	cr_assert_geq(n, 0);
	return s;
}

/* A string of n copies of ch; free it. */
static char *
repeat(char ch, size_t n)
{
	char *s = malloc(n + 1);
	cr_assert_not_null(s);
	memset(s, ch, n);
	s[n] = '\0';
	return s;
}

/* body_is: r is complete and its body, read from buf, is want. */
static void
body_is(const http_req *r, const char *buf, const char *want)
{
	cr_assert_eq(r->body_len, strlen(want), "body_len %zu, want %zu",
	    r->body_len, strlen(want));
	cr_assert_arr_eq(http_req_body(r, buf), want, strlen(want));
}

/* same: a and b describe the same request (parsed from buf). */
static void
same(const http_req *a, const http_req *b, const char *buf)
{
	cr_assert_eq(a->method, b->method);
	cr_assert_str_eq(a->path, b->path);
	cr_assert_str_eq(a->target, b->target);
	cr_assert_str_eq(a->auth, b->auth);
	cr_assert_eq(a->has_target, b->has_target);
	cr_assert_eq(a->has_auth, b->has_auth);
	cr_assert_eq(a->keep_alive, b->keep_alive);
	cr_assert_eq(a->expect, b->expect);
	cr_assert_eq(a->chunked, b->chunked);
	cr_assert_eq(a->head_len, b->head_len);
	cr_assert_eq(a->body_len, b->body_len);
	cr_assert_eq(a->total, b->total);
	cr_assert_arr_eq(http_req_body(a, buf), http_req_body(b, buf),
	    a->body_len);
}

#define AUTH \
	"AWS4-HMAC-SHA256 Credential=AKIDTEST/20240101/us-east-1/dynamodb/" \
	"aws4_request, SignedHeaders=host;x-amz-date;x-amz-target, " \
	"Signature=0123abcd"
#define GET_BODY "{\"TableName\":\"t\"}" /* 17 bytes */

static const char GET_METRICS[] =
	"GET /metrics HTTP/1.1\r\n"
	"Host: localhost:8000\r\n"
	"Accept: */*\r\n"
	"\r\n";

static const char POST_GET_ITEM[] =
	"POST / HTTP/1.1\r\n"
	"Host: 127.0.0.1:8000\r\n"
	"X-Amz-Target: DynamoDB_20120810.DescribeTable\r\n"
	"Authorization: " AUTH "\r\n"
	"Content-Type: application/x-amz-json-1.0\r\n"
	"Content-Length: 17\r\n"
	"\r\n"
	GET_BODY;

/* The body of CHUNKED, decoded. */
#define PUT_BODY "{\"TableName\":\"t\",\"Item\":{\"pk\":{\"S\":\"a\"}}}"

/* Three chunks (5, 0x1a with an extension, 0xA), a trailer. */
static const char CHUNKED[] =
	"POST / HTTP/1.1\r\n"
	"Host: x\r\n"
	"X-Amz-Target: DynamoDB_20120810.PutItem\r\n"
	"Transfer-Encoding: chunked\r\n"
	"\r\n"
	"5\r\n"
	"{\"Tab\r\n"
	"1a;name=value\r\n"
	"leName\":\"t\",\"Item\":{\"pk\":{\r\n"
	"A\r\n"
	"\"S\":\"a\"}}}\r\n"
	"0\r\n"
	"X-Checksum: abc\r\n"
	"\r\n";

/* ---- complete requests ---- */

Test(http_parse, get_is_complete_with_path_and_no_body)
{
	cr_assert_eq(parse(GET_METRICS, MAX_BODY), HTTP_COMPLETE);
	cr_assert_eq(rq.method, HTTP_GET);
	cr_assert_str_eq(rq.path, "/metrics");
	cr_assert(!rq.has_target);
	cr_assert_str_eq(rq.target, "");
	cr_assert(!rq.has_auth);
	cr_assert_str_eq(rq.auth, "");
	cr_assert_eq(rq.body_len, 0);
	cr_assert_eq(rq.head_len, strlen(GET_METRICS));
	cr_assert_eq(rq.total, strlen(GET_METRICS));
	cr_assert(rq.keep_alive);
	cr_assert(!rq.chunked);
	cr_assert(!rq.expect);
}

Test(http_parse, post_with_content_length_is_complete_with_its_fields)
{
	cr_assert_eq(parse(POST_GET_ITEM, MAX_BODY), HTTP_COMPLETE);
	cr_assert_eq(rq.method, HTTP_POST);
	cr_assert_str_eq(rq.path, "/");
	cr_assert(rq.has_target);
	cr_assert_str_eq(rq.target, "DynamoDB_20120810.DescribeTable");
	cr_assert(rq.has_auth);
	cr_assert_str_eq(rq.auth, AUTH);
	cr_assert_eq(rq.content_length, 17);
	body_is(&rq, POST_GET_ITEM, GET_BODY);
	cr_assert_eq(rq.total, strlen(POST_GET_ITEM));
	cr_assert_eq(rq.head_len, strlen(POST_GET_ITEM) - 17);
	cr_assert(rq.keep_alive);
	cr_assert(!rq.chunked);
}

Test(http_parse, post_without_its_whole_body_is_incomplete)
{
	bool cont;
	size_t len = strlen(POST_GET_ITEM);
	cr_assert_eq(parse_n(&rq, POST_GET_ITEM, len - 1, MAX_BODY, &cont),
	    HTTP_INCOMPLETE);
	cr_assert(!cont);
	cr_assert_eq(parse_n(&rq, POST_GET_ITEM, len, MAX_BODY, &cont),
	    HTTP_COMPLETE);
	body_is(&rq, POST_GET_ITEM, GET_BODY);
}

Test(http_parse, head_is_its_own_method)
{
	cr_assert_eq(parse("HEAD / HTTP/1.1\r\n\r\n", MAX_BODY),
	    HTTP_COMPLETE);
	cr_assert_eq(rq.method, HTTP_HEAD);
}

Test(http_parse, path_loses_its_query)
{
	cr_assert_eq(parse("GET /metrics?x=1&y HTTP/1.1\r\n\r\n", MAX_BODY),
	    HTTP_COMPLETE);
	cr_assert_str_eq(rq.path, "/metrics");
	reset(&rq);
	cr_assert_eq(parse("GET /? HTTP/1.1\r\n\r\n", MAX_BODY),
	    HTTP_COMPLETE);
	cr_assert_str_eq(rq.path, "/");
}

Test(http_parse, methods_other_than_get_post_head_and_options_are_other)
{
	const char *lines[] = { "PUT / HTTP/1.1\r\n\r\n",
		"OPTION / HTTP/1.1\r\n\r\n", "get / HTTP/1.1\r\n\r\n",
		"POSTS / HTTP/1.1\r\n\r\n", "GE / HTTP/1.1\r\n\r\n" };
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		reset(&rq);
		cr_assert_eq(parse(lines[i], MAX_BODY), HTTP_COMPLETE,
		    "%s", lines[i]);
		cr_assert_eq(rq.method, HTTP_OTHER, "%s", lines[i]);
		cr_assert_str_eq(rq.path, "/");
	}
}

Test(http_parse, get_fed_byte_by_byte_is_incomplete_until_its_last_byte)
{
	http_req whole;
	whole_and_bytewise(&whole, &rq, GET_METRICS);
	cr_assert_str_eq(rq.path, "/metrics");
	http_req_fini(&whole);
}

Test(http_parse, post_fed_byte_by_byte_is_incomplete_until_its_last_byte)
{
	http_req whole;
	whole_and_bytewise(&whole, &rq, POST_GET_ITEM);
	cr_assert_str_eq(rq.target, "DynamoDB_20120810.DescribeTable");
	cr_assert_str_eq(rq.auth, AUTH);
	body_is(&rq, POST_GET_ITEM, GET_BODY);
	cr_assert_eq(rq.total, strlen(POST_GET_ITEM));
	http_req_fini(&whole);
}

Test(http_parse, pipelined_requests_end_where_the_first_one_ends)
{
	char *two = fmt("%s%s", POST_GET_ITEM, GET_METRICS);
	cr_assert_eq(parse(two, MAX_BODY), HTTP_COMPLETE);
	cr_assert_eq(rq.method, HTTP_POST);
	cr_assert_eq(rq.total, strlen(POST_GET_ITEM));
	body_is(&rq, two, GET_BODY);

	/* The server drops the first request's bytes, then parses on. */
	size_t first = rq.total;
	reset(&rq);
	cr_assert_eq(parse(two + first, MAX_BODY), HTTP_COMPLETE);
	cr_assert_eq(rq.method, HTTP_GET);
	cr_assert_str_eq(rq.path, "/metrics");
	cr_assert_eq(rq.total, strlen(GET_METRICS));
	free(two);
}

Test(http_parse, pipelined_chunked_request_ends_after_its_trailers)
{
	char *two = fmt("%s%s", CHUNKED, POST_GET_ITEM);
	cr_assert_eq(parse(two, MAX_BODY), HTTP_COMPLETE);
	cr_assert_eq(rq.total, strlen(CHUNKED));
	body_is(&rq, two, PUT_BODY);
	reset(&rq);
	cr_assert_eq(parse(two + strlen(CHUNKED), MAX_BODY), HTTP_COMPLETE);
	cr_assert_str_eq(rq.target, "DynamoDB_20120810.DescribeTable");
	free(two);
}

/* ---- keep-alive ---- */

Test(http_parse, http_1_0_closes_unless_it_asks_for_keep_alive)
{
	cr_assert_eq(parse("GET / HTTP/1.0\r\nHost: x\r\n\r\n", MAX_BODY),
	    HTTP_COMPLETE);
	cr_assert(!rq.keep_alive);
	reset(&rq);
	cr_assert_eq(parse("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
	    MAX_BODY), HTTP_COMPLETE);
	cr_assert(rq.keep_alive);
	reset(&rq);
	cr_assert_eq(parse("GET / HTTP/1.0\r\nconnection:Keep-Alive \r\n\r\n",
	    MAX_BODY), HTTP_COMPLETE);
	cr_assert(rq.keep_alive);
	cr_assert(rq.http10);
}

Test(http_parse, close_wins_over_keep_alive_in_either_order)
{
	cr_assert_eq(parse("GET / HTTP/1.1\r\nConnection: close\r\n"
	    "Connection: keep-alive\r\n\r\n", MAX_BODY), HTTP_COMPLETE);
	cr_assert(!rq.keep_alive);
	reset(&rq);
	cr_assert_eq(parse("GET / HTTP/1.0\r\nConnection: keep-alive\r\n"
	    "Connection: close\r\n\r\n", MAX_BODY), HTTP_COMPLETE);
	cr_assert(!rq.keep_alive);
}

Test(http_parse, http_1_0_expectation_is_ignored)
{
	bool cont;
	const char *s = "POST / HTTP/1.0\r\nExpect: 100-continue\r\n"
	    "Content-Length: 5\r\n\r\n";
	cr_assert_eq(parse_n(&rq, s, strlen(s), MAX_BODY, &cont),
	    HTTP_INCOMPLETE);
	cr_assert(!cont);
	cr_assert(!rq.expect);
}

Test(http_parse, http_1_1_keeps_alive_unless_connection_close)
{
	cr_assert_eq(parse("GET / HTTP/1.1\r\n\r\n", MAX_BODY),
	    HTTP_COMPLETE);
	cr_assert(rq.keep_alive);
	reset(&rq);
	cr_assert_eq(parse("GET / HTTP/1.1\r\nConnection: close\r\n\r\n",
	    MAX_BODY), HTTP_COMPLETE);
	cr_assert(!rq.keep_alive);
	reset(&rq);
	cr_assert_eq(parse("GET / HTTP/1.1\r\nCONNECTION: TE, Close\r\n\r\n",
	    MAX_BODY), HTTP_COMPLETE);
	cr_assert(!rq.keep_alive);
	reset(&rq);
	/* "closed" is another token, not "close". */
	cr_assert_eq(parse("GET / HTTP/1.1\r\nConnection: closed\r\n\r\n",
	    MAX_BODY), HTTP_COMPLETE);
	cr_assert(rq.keep_alive);
}

Test(http_parse, header_names_match_in_any_case)
{
	static const char s[] =
		"POST / HTTP/1.1\r\n"
		"x-amz-TARGET: DynamoDB_20120810.GetItem\r\n"
		"AUTHORIZATION: AWS4 x\r\n"
		"content-LENGTH: 2\r\n"
		"connection: CLOSE\r\n"
		"\r\n"
		"{}";
	cr_assert_eq(parse(s, MAX_BODY), HTTP_COMPLETE);
	cr_assert_str_eq(rq.target, "DynamoDB_20120810.GetItem");
	cr_assert_str_eq(rq.auth, "AWS4 x");
	cr_assert_eq(rq.content_length, 2);
	body_is(&rq, s, "{}");
	cr_assert(!rq.keep_alive);
	cr_assert_eq(rq.total, strlen(s));
}

Test(http_parse, header_values_lose_surrounding_blanks)
{
	static const char s[] =
		"POST / HTTP/1.1\r\n"
		"X-Amz-Target:\t DynamoDB_20120810.GetItem \t\r\n"
		"Content-Length:2   \r\n"
		"\r\n"
		"{}";
	cr_assert_eq(parse(s, MAX_BODY), HTTP_COMPLETE);
	cr_assert_str_eq(rq.target, "DynamoDB_20120810.GetItem");
	body_is(&rq, s, "{}");
}

/* ---- Expect: 100-continue ---- */

static const char EXPECT_HEAD[] =
	"POST / HTTP/1.1\r\n"
	"X-Amz-Target: DynamoDB_20120810.DescribeTable\r\n"
	"Expect: 100-continue\r\n"
	"Content-Length: 17\r\n"
	"\r\n";

Test(http_parse, expect_100_continue_asks_once_when_the_body_is_awaited)
{
	char *s = fmt("%s%s", EXPECT_HEAD, GET_BODY);
	size_t head = strlen(EXPECT_HEAD);
	bool cont;
	cr_assert_eq(parse_n(&rq, s, head - 1, MAX_BODY, &cont),
	    HTTP_INCOMPLETE);
	cr_assert(!cont, "continue before the headers are complete");
	cr_assert_eq(parse_n(&rq, s, head, MAX_BODY, &cont),
	    HTTP_INCOMPLETE);
	cr_assert(cont, "no continue once the headers are complete");
	cr_assert(rq.expect);
	cr_assert_eq(parse_n(&rq, s, head, MAX_BODY, &cont),
	    HTTP_INCOMPLETE);
	cr_assert(!cont, "a second continue");
	cr_assert_eq(parse_n(&rq, s, head + 3, MAX_BODY, &cont),
	    HTTP_INCOMPLETE);
	cr_assert(!cont, "a second continue");
	cr_assert_eq(parse_n(&rq, s, strlen(s), MAX_BODY, &cont),
	    HTTP_COMPLETE);
	cr_assert(!cont);
	body_is(&rq, s, GET_BODY);
	free(s);
}

Test(http_parse, expect_100_continue_asks_once_when_fed_byte_by_byte)
{
	char *s = fmt("%s%s", EXPECT_HEAD, GET_BODY);
	cr_assert_eq(feed_bytewise(&rq, s, MAX_BODY), 1);
	body_is(&rq, s, GET_BODY);
	free(s);
}

Test(http_parse, expect_100_continue_is_not_asked_when_the_body_is_in)
{
	char *s = fmt("%s%s", EXPECT_HEAD, GET_BODY);
	bool cont;
	cr_assert_eq(parse_n(&rq, s, strlen(s), MAX_BODY, &cont),
	    HTTP_COMPLETE);
	cr_assert(!cont);
	cr_assert(rq.expect);
	free(s);
}

Test(http_parse, expect_100_continue_with_an_empty_body_is_not_asked)
{
	bool cont;
	static const char s[] = "POST / HTTP/1.1\r\nExpect: 100-continue\r\n"
				"Content-Length: 0\r\n\r\n";
	cr_assert_eq(parse_n(&rq, s, strlen(s), MAX_BODY, &cont),
	    HTTP_COMPLETE);
	cr_assert(!cont);
}

Test(http_parse, expect_100_continue_is_not_asked_for_a_too_large_body)
{
	static const char s[] = "POST / HTTP/1.1\r\nExpect: 100-continue\r\n"
				"Content-Length: 101\r\n\r\n";
	bool cont;
	cr_assert_eq(parse_n(&rq, s, strlen(s), 100, &cont), HTTP_TOO_LARGE);
	cr_assert(!cont);
}

Test(http_parse, expect_100_continue_is_asked_for_a_chunked_body)
{
	static const char s[] = "POST / HTTP/1.1\r\nEXPECT: 100-Continue\r\n"
				"Transfer-Encoding: chunked\r\n\r\n";
	bool cont;
	cr_assert_eq(parse_n(&rq, s, strlen(s), MAX_BODY, &cont),
	    HTTP_INCOMPLETE);
	cr_assert(cont);
	cr_assert_eq(parse_n(&rq, s, strlen(s), MAX_BODY, &cont),
	    HTTP_INCOMPLETE);
	cr_assert(!cont);
}

Test(http_parse, other_expectations_ask_for_no_continue)
{
	static const char s[] = "POST / HTTP/1.1\r\nExpect: something\r\n"
				"Content-Length: 5\r\n\r\n";
	bool cont;
	cr_assert_eq(parse_n(&rq, s, strlen(s), MAX_BODY, &cont),
	    HTTP_INCOMPLETE);
	cr_assert(!cont);
	cr_assert(!rq.expect);
}

/* ---- sizes ---- */

Test(http_parse, content_length_over_max_body_is_too_large_from_the_head)
{
	static const char s[] = "POST / HTTP/1.1\r\nContent-Length: 101\r\n"
				"\r\n";
	cr_assert_eq(parse(s, 100), HTTP_TOO_LARGE);
	reset(&rq);
	/* Before the head is complete nothing is known yet. */
	bool cont;
	cr_assert_eq(parse_n(&rq, s, strlen(s) - 1, 100, &cont),
	    HTTP_INCOMPLETE);
	reset(&rq);
	static const char at[] = "POST / HTTP/1.1\r\nContent-Length: 100\r\n"
				 "\r\n";
	cr_assert_eq(parse(at, 100), HTTP_INCOMPLETE);
	reset(&rq);
	char *huge = fmt("POST / HTTP/1.1\r\nContent-Length: %zu\r\n\r\n",
	    (size_t) MAX_BODY + 1);
	cr_assert_eq(parse(huge, MAX_BODY), HTTP_TOO_LARGE);
	free(huge);
}

/* A complete head of exactly `size` bytes, padded with one header. */
static char *
head_of(size_t size)
{
	static const char pre[] = "GET / HTTP/1.1\r\nX-Pad: ";
	size_t pad = size - strlen(pre) - 4;
	char *p = repeat('a', pad);
	char *s = fmt("%s%s\r\n\r\n", pre, p);
	free(p);
	cr_assert_eq(strlen(s), size);
	return s;
}

Test(http_parse, head_of_exactly_http_max_head_is_complete)
{
	char *s = head_of(HTTP_MAX_HEAD);
	cr_assert_eq(parse(s, MAX_BODY), HTTP_COMPLETE);
	cr_assert_eq(rq.total, HTTP_MAX_HEAD);
	free(s);
}

Test(http_parse, head_over_http_max_head_is_head_too_large)
{
	char *s = head_of(HTTP_MAX_HEAD + 1);
	cr_assert_eq(parse(s, MAX_BODY), HTTP_HEAD_TOO_LARGE);
	free(s);
}

Test(http_parse, unterminated_head_over_http_max_head_is_head_too_large)
{
	char *s = head_of(HTTP_MAX_HEAD + 1000);
	bool cont;
	/* In steps, as it arrives: incomplete, then refused. */
	cr_assert_eq(parse_n(&rq, s, HTTP_MAX_HEAD / 2, MAX_BODY, &cont),
	    HTTP_INCOMPLETE);
	cr_assert_eq(parse_n(&rq, s, HTTP_MAX_HEAD + 1, MAX_BODY, &cont),
	    HTTP_HEAD_TOO_LARGE);
	free(s);
}

Test(http_parse, path_longer_than_its_field_is_empty)
{
	char *p = repeat('p', sizeof(rq.path) - 2);
	char *s = fmt("GET /%s HTTP/1.1\r\n\r\n", p); /* 255 bytes: fits */
	cr_assert_eq(parse(s, MAX_BODY), HTTP_COMPLETE);
	cr_assert_eq(strlen(rq.path), sizeof(rq.path) - 1);
	cr_assert_eq(rq.path[0], '/');
	free(s);
	free(p);

	reset(&rq);
	p = repeat('p', sizeof(rq.path) - 1);
	s = fmt("GET /%s HTTP/1.1\r\n\r\n", p); /* 256 bytes */
	cr_assert_eq(parse(s, MAX_BODY), HTTP_COMPLETE);
	cr_assert_str_eq(rq.path, "");
	cr_assert_eq(rq.total, strlen(s));
	free(s);
	free(p);
}

Test(http_parse, target_longer_than_its_field_is_empty)
{
	char *t = repeat('t', sizeof(rq.target)); /* 128 bytes */
	char *s = fmt("POST / HTTP/1.1\r\nX-Amz-Target: %s\r\n\r\n", t);
	cr_assert_eq(parse(s, MAX_BODY), HTTP_COMPLETE);
	cr_assert(rq.has_target);
	cr_assert_str_eq(rq.target, "");
	free(s);

	reset(&rq);
	t[sizeof(rq.target) - 1] = '\0'; /* 127 bytes: fits */
	s = fmt("POST / HTTP/1.1\r\nX-Amz-Target: %s\r\n\r\n", t);
	cr_assert_eq(parse(s, MAX_BODY), HTTP_COMPLETE);
	cr_assert_str_eq(rq.target, t);
	free(s);
	free(t);
}

Test(http_parse, authorization_longer_than_its_field_is_truncated)
{
	char *rest = repeat('x', 2000);
	char *auth = fmt("AWS4-HMAC-SHA256 Credential=AKID/%s", rest);
	char *s = fmt("POST / HTTP/1.1\r\nAuthorization: %s\r\n\r\n", auth);
	cr_assert_eq(parse(s, MAX_BODY), HTTP_COMPLETE);
	cr_assert(rq.has_auth);
	cr_assert_eq(strlen(rq.auth), sizeof(rq.auth) - 1);
	cr_assert_arr_eq(rq.auth, auth, sizeof(rq.auth) - 1);
	free(s);
	free(auth);
	free(rest);
}

/* ---- refusals ---- */

/* Arrays, not pointers: criterion copies the parameters to the test. */
struct refusal {
	char name[64];
	char text[128];
	http_status want;
};

ParameterizedTestParameters(http_parse, refuses_bad_requests)
{
	static struct refusal cases[] = {
		/* the request line */
		{ "version HTTP/2.0 is bad_version",
		    "GET / HTTP/2.0\r\n\r\n", HTTP_BAD_VERSION },
		{ "version HTTP/1.2 is bad_version",
		    "GET / HTTP/1.2\r\n\r\n", HTTP_BAD_VERSION },
		{ "version HTTP/0.9 is bad_version",
		    "GET / HTTP/0.9\r\n\r\n", HTTP_BAD_VERSION },
		{ "lowercase http/1.1 is bad", "GET / http/1.1\r\n\r\n",
		    HTTP_BAD },
		{ "garbage request line is bad", "hello there\r\n\r\n",
		    HTTP_BAD },
		{ "one word request line is bad", "GET\r\n\r\n", HTTP_BAD },
		{ "missing version is bad", "GET /\r\n\r\n", HTTP_BAD },
		{ "empty request line is bad", "\r\n\r\n", HTTP_BAD },
		{ "leading space is bad", " GET / HTTP/1.1\r\n\r\n",
		    HTTP_BAD },
		{ "double space is bad", "GET  / HTTP/1.1\r\n\r\n",
		    HTTP_BAD },
		{ "binary garbage is bad", "\x16\x03\x01\x02\x01\r\n\r\n",
		    HTTP_BAD },
		/* header lines */
		{ "header without colon is bad",
		    "GET / HTTP/1.1\r\nHost localhost\r\n\r\n", HTTP_BAD },
		{ "header with empty name is bad",
		    "GET / HTTP/1.1\r\n: x\r\n\r\n", HTTP_BAD },
		{ "folded header line is bad",
		    "GET / HTTP/1.1\r\nX-A: b\r\n c\r\n\r\n", HTTP_BAD },
		/* framing */
		{ "content_length and transfer_encoding is bad",
		    "POST / HTTP/1.1\r\nContent-Length: 5\r\n"
		    "Transfer-Encoding: chunked\r\n\r\n", HTTP_BAD },
		{ "transfer_encoding and content_length is bad",
		    "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
		    "Content-Length: 5\r\n\r\n", HTTP_BAD },
		{ "two different content_lengths are bad",
		    "POST / HTTP/1.1\r\nContent-Length: 5\r\n"
		    "Content-Length: 6\r\n\r\n", HTTP_BAD },
		{ "content_length list is bad",
		    "POST / HTTP/1.1\r\nContent-Length: 5, 5\r\n\r\n",
		    HTTP_BAD },
		{ "letters in content_length are bad",
		    "POST / HTTP/1.1\r\nContent-Length: abc\r\n\r\n",
		    HTTP_BAD },
		{ "negative content_length is bad",
		    "POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
		    HTTP_BAD },
		{ "plus signed content_length is bad",
		    "POST / HTTP/1.1\r\nContent-Length: +5\r\n\r\n",
		    HTTP_BAD },
		{ "hex content_length is bad",
		    "POST / HTTP/1.1\r\nContent-Length: 0x10\r\n\r\n",
		    HTTP_BAD },
		{ "trailing letter in content_length is bad",
		    "POST / HTTP/1.1\r\nContent-Length: 5a\r\n\r\n",
		    HTTP_BAD },
		{ "space inside content_length is bad",
		    "POST / HTTP/1.1\r\nContent-Length: 1 2\r\n\r\n",
		    HTTP_BAD },
		{ "empty content_length is bad",
		    "POST / HTTP/1.1\r\nContent-Length:\r\n\r\n", HTTP_BAD },
		{ "20 digit content_length is bad",
		    "POST / HTTP/1.1\r\nContent-Length: "
		    "18446744073709551617\r\n\r\n", HTTP_BAD },
		{ "transfer_encoding gzip is bad",
		    "POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n",
		    HTTP_BAD },
		{ "transfer_encoding gzip, chunked is bad",
		    "POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n"
		    "\r\n", HTTP_BAD },
		{ "transfer_encoding identity is bad",
		    "POST / HTTP/1.1\r\nTransfer-Encoding: identity\r\n\r\n",
		    HTTP_BAD },
		{ "two transfer_encodings are bad",
		    "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
		    "Transfer-Encoding: chunked\r\n\r\n", HTTP_BAD },
		/* chunks */
		{ "letters as chunk size are bad",
		    "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
		    "zz\r\n", HTTP_BAD },
		{ "chunk size with trailing garbage is bad",
		    "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
		    "5x\r\nhello\r\n0\r\n\r\n", HTTP_BAD },
		{ "negative chunk size is bad",
		    "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
		    "-5\r\n", HTTP_BAD },
		{ "empty chunk size line is bad",
		    "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
		    "\r\n", HTTP_BAD },
		{ "chunk extension without size is bad",
		    "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
		    ";a=b\r\n", HTTP_BAD },
		{ "chunk size 0x prefix is bad",
		    "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
		    "0x5\r\nhello\r\n0\r\n\r\n", HTTP_BAD },
		{ "chunk data without crlf is bad",
		    "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
		    "5\r\nhelloXX0\r\n\r\n", HTTP_BAD },
		{ "chunk data longer than its size is bad",
		    "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
		    "3\r\nhello\r\n0\r\n\r\n", HTTP_BAD },
		{ "chunk size over size_t is too_large",
		    "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
		    "10000000000000000\r\n", HTTP_TOO_LARGE },
	};
	return cr_make_param_array(struct refusal, cases,
	    sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct refusal *c, http_parse, refuses_bad_requests)
{
	http_status st = parse(c->text, MAX_BODY);
	cr_assert_eq(st, c->want, "%s: status %d, want %d", c->name, st,
	    c->want);
}

Test(http_parse, same_content_length_twice_is_fine)
{
	static const char s[] = "POST / HTTP/1.1\r\nContent-Length: 2\r\n"
				"content-length: 2\r\n\r\n{}";
	cr_assert_eq(parse(s, MAX_BODY), HTTP_COMPLETE);
	cr_assert_eq(rq.content_length, 2);
	body_is(&rq, s, "{}");
	cr_assert_eq(rq.total, strlen(s));
}

Test(http_parse, content_length_with_leading_zeros_is_decimal)
{
	static const char s[] = "POST / HTTP/1.1\r\nContent-Length: 010\r\n"
				"\r\n0123456789";
	cr_assert_eq(parse(s, MAX_BODY), HTTP_COMPLETE);
	cr_assert_eq(rq.content_length, 10);
	body_is(&rq, s, "0123456789");
}

Test(http_parse, refusal_of_a_bad_header_comes_with_the_complete_head)
{
	static const char s[] = "GET / HTTP/1.1\r\nHost localhost\r\n\r\n";
	bool cont;
	cr_assert_eq(parse_n(&rq, s, strlen(s) - 1, MAX_BODY, &cont),
	    HTTP_INCOMPLETE);
	cr_assert_eq(parse_n(&rq, s, strlen(s), MAX_BODY, &cont), HTTP_BAD);
}

/* ---- chunked bodies ---- */

Test(http_parse, chunked_body_is_decoded_with_extensions_and_trailers)
{
	cr_assert_eq(parse(CHUNKED, MAX_BODY), HTTP_COMPLETE);
	cr_assert(rq.chunked);
	cr_assert_eq(rq.method, HTTP_POST);
	cr_assert_str_eq(rq.target, "DynamoDB_20120810.PutItem");
	body_is(&rq, CHUNKED, PUT_BODY);
	cr_assert_eq(rq.total, strlen(CHUNKED));
	/* The decoded body is NUL-terminated, for the JSON parser. */
	cr_assert_eq(http_req_body(&rq, CHUNKED)[rq.body_len], '\0');
}

Test(http_parse, chunked_body_fed_byte_by_byte_is_the_same)
{
	http_req whole;
	whole_and_bytewise(&whole, &rq, CHUNKED);
	body_is(&rq, CHUNKED, PUT_BODY);
	cr_assert_eq(rq.total, strlen(CHUNKED));
	http_req_fini(&whole);
}

Test(http_parse, chunk_sizes_read_upper_and_lower_case_hex)
{
	char *lower = repeat('l', 0xab);
	char *upper = repeat('U', 0xCD);
	char *s = fmt("POST / HTTP/1.1\r\nTransfer-Encoding: Chunked\r\n\r\n"
		      "ab\r\n%s\r\nCD ; x=\"y\"\r\n%s\r\n00\r\n\r\n", lower,
	    upper);
	char *want = fmt("%s%s", lower, upper);
	cr_assert_eq(parse(s, MAX_BODY), HTTP_COMPLETE);
	body_is(&rq, s, want);
	cr_assert_eq(rq.body_len, 0xab + 0xcd);
	cr_assert_eq(rq.total, strlen(s));
	free(want);
	free(s);
	free(upper);
	free(lower);
}

Test(http_parse, chunked_body_of_many_chunks_grows_its_buffer)
{
	/* 3000 chunks of 7 bytes: past the decoded body's first 4 KB. */
	size_t n = 3000, at = 0;
	char *s = malloc(100 + n * 12);
	char *want = malloc(n * 7 + 1);
	cr_assert(s != NULL && want != NULL);
	at += (size_t) sprintf(s, "POST / HTTP/1.1\r\n"
				  "Transfer-Encoding: chunked\r\n\r\n");
	for (size_t i = 0; i < n; i++) {
		at += (size_t) sprintf(s + at, "7\r\n%07zu\r\n", i);
		sprintf(want + i * 7, "%07zu", i);
	}
	strcpy(s + at, "0\r\n\r\n");
	cr_assert_eq(parse(s, MAX_BODY), HTTP_COMPLETE);
	body_is(&rq, s, want);
	cr_assert_eq(rq.total, strlen(s));
	free(want);
	free(s);
}

Test(http_parse, empty_chunked_body_is_complete)
{
	static const char s[] = "POST / HTTP/1.1\r\nTransfer-Encoding: "
				"chunked\r\n\r\n0\r\n\r\n";
	cr_assert_eq(parse(s, MAX_BODY), HTTP_COMPLETE);
	cr_assert_eq(rq.body_len, 0);
	cr_assert_str_eq(http_req_body(&rq, s), "");
	cr_assert_eq(rq.total, strlen(s));
}

Test(http_parse, chunked_body_waits_for_the_end_of_its_trailers)
{
	static const char s[] = "POST / HTTP/1.1\r\nTransfer-Encoding: "
				"chunked\r\n\r\n2\r\n{}\r\n0\r\nA: b\r\n\r\n";
	bool cont;
	/* Without the final CRLF (after the trailer) it is not over. */
	cr_assert_eq(parse_n(&rq, s, strlen(s) - 2, MAX_BODY, &cont),
	    HTTP_INCOMPLETE);
	cr_assert_eq(parse_n(&rq, s, strlen(s), MAX_BODY, &cont),
	    HTTP_COMPLETE);
	body_is(&rq, s, "{}");
	cr_assert_eq(rq.total, strlen(s));
}

Test(http_parse, chunked_body_over_max_body_is_too_large)
{
	/* 5 + 5 bytes against 8: refused at the second size line. */
	static const char s[] = "POST / HTTP/1.1\r\nTransfer-Encoding: "
				"chunked\r\n\r\n5\r\nhello\r\n5\r\n";
	cr_assert_eq(parse(s, 8), HTTP_TOO_LARGE);
	reset(&rq);
	static const char at[] = "POST / HTTP/1.1\r\nTransfer-Encoding: "
				 "chunked\r\n\r\n5\r\nhello\r\n3\r\nabc\r\n"
				 "0\r\n\r\n";
	cr_assert_eq(parse(at, 8), HTTP_COMPLETE);
	body_is(&rq, at, "helloabc");
}

Test(http_parse, chunk_over_max_body_is_too_large_before_its_data)
{
	char *s = fmt("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
		      "%zx\r\n", (size_t) MAX_BODY + 1);
	cr_assert_eq(parse(s, MAX_BODY), HTTP_TOO_LARGE);
	free(s);
}

Test(http_parse, chunk_size_that_wraps_the_body_length_is_too_large)
{
	/* 2 + (SIZE_MAX - 1) is 0 in size_t. */
	char *s = fmt("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
		      "2\r\nab\r\n%zx\r\nxyz", SIZE_MAX - 1);
	cr_assert_eq(parse(s, MAX_BODY), HTTP_TOO_LARGE);
	reset(&rq);
	free(s);
	s = fmt("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
		"3\r\nabc\r\n%zx\r\nxyz", SIZE_MAX - 2);
	cr_assert_eq(parse(s, MAX_BODY), HTTP_TOO_LARGE);
	free(s);
}

Test(http_parse, chunk_size_line_over_1024_bytes_is_bad)
{
	char *ext = repeat('e', 1100);
	char *s = fmt("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
		      "5;%s", ext);
	cr_assert_eq(parse(s, MAX_BODY), HTTP_BAD);
	free(s);
	free(ext);
}

Test(http_parse, chunked_trailer_over_http_max_head_is_head_too_large)
{
	char *t = repeat('t', HTTP_MAX_HEAD + 10);
	char *s = fmt("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
		      "0\r\nX-T: %s", t);
	cr_assert_eq(parse(s, MAX_BODY), HTTP_HEAD_TOO_LARGE);
	free(s);
	free(t);
}

Test(http_parse, many_short_trailers_over_http_max_head_are_head_too_large)
{
	size_t n = HTTP_MAX_HEAD / 3 + 10;
	char *lines = malloc(3 * n + 1);
	cr_assert_not_null(lines);
	for (size_t i = 0; i < n; i++)
		memcpy(lines + 3 * i, "a\r\n", 3);
	lines[3 * n] = '\0';
	char *s = fmt("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
		      "0\r\n%s", lines);
	cr_assert_eq(parse(s, MAX_BODY), HTTP_HEAD_TOO_LARGE);
	free(s);
	free(lines);
}

Test(http_parse, chunk_framing_counts_against_the_body_limit)
{
	/* 1-byte chunks with 100-byte extensions: 108 raw bytes each. */
	size_t max = 4096, n = 1000;
	char *ext = repeat('e', 100);
	char *s = fmt("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n");
	for (size_t i = 0; i < n; i++) {
		char *t = fmt("%s1;%s\r\nx\r\n", s, ext);
		free(s);
		s = t;
	}
	/* 1,000 body bytes under a 4,096 limit, but 108,000 raw bytes. */
	cr_assert_eq(parse(s, max), HTTP_TOO_LARGE);
	free(s);
	free(ext);
}

Test(http_parse, fini_frees_the_decoded_body_and_allows_init)
{
	cr_assert_eq(parse(CHUNKED, MAX_BODY), HTTP_COMPLETE);
	cr_assert_not_null(rq.body);
	http_req_fini(&rq);
	cr_assert_null(rq.body);
	http_req_fini(&rq); /* twice is safe */
	http_req_init(&rq);
	cr_assert_eq(parse(POST_GET_ITEM, MAX_BODY), HTTP_COMPLETE);
	body_is(&rq, POST_GET_ITEM, GET_BODY);
}

/*
 * A CR not followed by LF is an ordinary byte of a header value, and
 * CRs just before a line's end or the blank line do not hide them:
 * whole and byte by byte, the head ends at the first CRLFCRLF.
 */
#define BARE_CR_HEAD "POST / HTTP/1.1\r\n" \
	"X-Pad: a\rb\r\r\n" \
	"X-Amz-Target: DynamoDB_20120810.GetItem\r\n" \
	"Content-Length: 2\r\n" \
	"X-Last: \r\r\r\n" \
	"\r\n"
#define BARE_CR_REQ BARE_CR_HEAD "{}"

Test(http_parse, bare_cr_is_part_of_a_value_and_never_ends_a_line)
{
	http_req whole;
	whole_and_bytewise(&whole, &rq, BARE_CR_REQ);
	cr_assert_eq(whole.head_len, strlen(BARE_CR_HEAD));
	cr_assert_str_eq(whole.target, "DynamoDB_20120810.GetItem");
	cr_assert_eq(whole.content_length, 2);
	body_is(&rq, BARE_CR_REQ, "{}");
	http_req_fini(&whole);
}

Test(http_parse, a_cors_preflight_keeps_what_it_asks_for)
{
	reset(&rq);
	cr_assert_eq(parse("OPTIONS / HTTP/1.1\r\nOrigin: http://x\r\n"
	    "Access-Control-Request-Method: POST\r\n"
	    "access-control-request-headers: x-amz-target, content-type\r\n"
	    "\r\n", MAX_BODY), HTTP_COMPLETE);
	cr_assert_eq(rq.method, HTTP_OPTIONS);
	cr_assert(rq.origin);
	cr_assert_str_eq(rq.cors_method, "POST");
	cr_assert_str_eq(rq.cors_headers, "x-amz-target, content-type");
	/* Too long to keep: dropped, not cut. */
	char line[600];
	memset(line, 'a', sizeof(line));
	line[sizeof(line) - 1] = '\0';
	char req[800];
	snprintf(req, sizeof(req), "OPTIONS / HTTP/1.1\r\nOrigin: x\r\n"
	    "Access-Control-Request-Headers: %s\r\n\r\n", line);
	reset(&rq);
	cr_assert_eq(parse(req, MAX_BODY), HTTP_COMPLETE);
	cr_assert_str_eq(rq.cors_headers, "");
	/* No Origin: no CORS. */
	reset(&rq);
	cr_assert_eq(parse("POST / HTTP/1.1\r\nContent-Length: 0\r\n\r\n",
	    MAX_BODY), HTTP_COMPLETE);
	cr_assert(!rq.origin);
}
