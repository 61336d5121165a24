/*
 * http_test.c — kv-load's HTTP/1.1 parsing (chaos/load/http.c): answers
 * framed by Content-Length, by chunks (as dynalite sends them) and by
 * the close, fed whole and one byte at a time; what it refuses; and the
 * null server's request parser.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "http.h"

/*
 * Parses text fed `step` bytes at a time, the body into body[0..cap).
 * Returns KV_OK, KV_TIMEDOUT when the answer is still not whole at the
 * end of text, or the parser's error.
 */
static kv_err
feed(const char *text, size_t step, http_resp *r, char *body, size_t cap)
{
	size_t len = strlen(text);
	bool done = false;
	kv_err e = KV_OK;
	http_resp_init(r);
	for (size_t have = step; e == KV_OK && !done; have += step) {
		if (have > len)
			have = len;
		e = http_resp_parse(r, text, have, &done);
		if (have == len && !done) {
			if (e == KV_OK)
				e = http_resp_eof(r, text, have, &done);
			if (!done)
				return e == KV_OK ? KV_TIMEDOUT : e;
		}
	}
	if (e != KV_OK)
		return e;
	size_t n;
	const char *b = http_resp_body(r, text, &n);
	cr_assert_lt(n, cap);
	memcpy(body, b, n);
	body[n] = '\0';
	return KV_OK;
}

static const char length_answer[] =
    "HTTP/1.1 200 OK\r\n"
    "content-type: application/x-amz-json-1.0\r\n"
    "Content-Length: 13\r\n"
    "\r\n"
    "{\"Count\": 10}";

static const char chunked_answer[] =
    "HTTP/1.1 400 Bad Request\r\n"
    "Transfer-Encoding: chunked\r\n"
    "Connection: keep-alive\r\n"
    "\r\n"
    "5;name=value\r\n{\"__t\r\n"
    "A\r\nype\":\"x#Th\r\n"
    "0\r\n"
    "X-Trailer: 1\r\n"
    "\r\n";

Test(http, content_length_whole_and_byte_by_byte)
{
	for (size_t step = 1; step <= sizeof(length_answer); step *= 3) {
		http_resp r;
		char body[64];
		cr_assert_eq(feed(length_answer, step, &r, body, sizeof(body)),
		    KV_OK);
		cr_assert_eq(r.status, 200);
		cr_assert(!r.close);
		cr_assert_str_eq(body, "{\"Count\": 10}");
		cr_assert_eq(r.total, strlen(length_answer));
		http_resp_fini(&r);
	}
}

Test(http, chunked_whole_and_byte_by_byte)
{
	for (size_t step = 1; step <= sizeof(chunked_answer); step += 4) {
		http_resp r;
		char body[64];
		cr_assert_eq(feed(chunked_answer, step, &r, body,
		    sizeof(body)), KV_OK, "step %zu", step);
		cr_assert_eq(r.status, 400);
		cr_assert_str_eq(body, "{\"__type\":\"x#Th");
		cr_assert_eq(r.total, strlen(chunked_answer));
		http_resp_fini(&r);
	}
}

Test(http, body_until_close)
{
	http_resp r;
	char body[64];
	cr_assert_eq(feed("HTTP/1.0 200 OK\r\n\r\n{}", 100, &r, body,
	    sizeof(body)), KV_OK);
	cr_assert_str_eq(body, "{}");
	cr_assert(r.close);
	http_resp_fini(&r);
}

Test(http, connection_close_is_seen)
{
	http_resp r;
	char body[64];
	cr_assert_eq(feed("HTTP/1.1 200 OK\r\nConnection: Close\r\n"
	    "Content-Length: 0\r\n\r\n", 100, &r, body, sizeof(body)), KV_OK);
	cr_assert(r.close);
	cr_assert_str_eq(body, "");
	http_resp_fini(&r);
}

Test(http, a_cut_answer_is_not_whole)
{
	http_resp r;
	char body[64];
	cr_assert_eq(feed("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{}",
	    100, &r, body, sizeof(body)), KV_TIMEDOUT);
	http_resp_fini(&r);
}

Test(http, garbage_is_refused)
{
	const char *bad[] = {
		"SSH-2.0-OpenSSH\r\n\r\n",
		"HTTP/1.1 2x0 OK\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: ten\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2"
		"\r\n\r\n",
		"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
		"2\r\nabcd\r\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		http_resp r;
		char body[64];
		cr_assert_eq(feed(bad[i], 1000, &r, body, sizeof(body)),
		    KV_PROTO, "%s", bad[i]);
		http_resp_fini(&r);
	}
}

Test(http, request_has_the_dynamodb_headers)
{
	http_buf b;
	http_buf_init(&b);
	cr_assert_eq(http_request(&b, "127.0.0.1:8000", "GetItem", "{}", 2),
	    KV_OK);
	cr_assert_not_null(strstr(b.p, "POST / HTTP/1.1\r\n"));
	cr_assert_not_null(strstr(b.p, "Host: 127.0.0.1:8000\r\n"));
	cr_assert_not_null(strstr(b.p,
	    "X-Amz-Target: DynamoDB_20120810.GetItem\r\n"));
	cr_assert_not_null(strstr(b.p,
	    "Content-Type: application/x-amz-json-1.0\r\n"));
	cr_assert_not_null(strstr(b.p, "Signature=" "0000000000000000"
	    "000000000000000000000000000000000000000000000000\r\n"));
	cr_assert_not_null(strstr(b.p, "Content-Length: 2\r\n\r\n{}"));
	/* The null server's parser takes it whole. */
	bool done, close;
	size_t total;
	cr_assert_eq(http_req_parse(b.p, b.len, &done, &total, &close), KV_OK);
	cr_assert(done);
	cr_assert(!close);
	cr_assert_eq(total, b.len);
	cr_assert_eq(http_req_parse(b.p, b.len - 1, &done, &total, &close),
	    KV_OK);
	cr_assert(!done);
	http_buf_fini(&b);
}

Test(http, null_server_refuses_chunked_requests)
{
	const char req[] = "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
	    "\r\n0\r\n\r\n";
	bool done, close;
	size_t total;
	cr_assert_eq(http_req_parse(req, strlen(req), &done, &total, &close),
	    KV_PROTO);
}

Test(http, buffer_consume_keeps_the_rest)
{
	http_buf b;
	http_buf_init(&b);
	cr_assert_eq(http_buf_printf(&b, "%s-%d", "abc", 42), KV_OK);
	http_buf_consume(&b, 2);
	cr_assert_str_eq(b.p, "c-42");
	cr_assert_eq(b.len, 4);
	http_buf_consume(&b, 10);
	cr_assert_eq(b.len, 0);
	http_buf_fini(&b);
	http_buf_fini(&b); /* safe twice */
}
