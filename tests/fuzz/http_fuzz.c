/*
 * http_fuzz.c — libFuzzer target for the router's front door: the HTTP
 * request parser (router/http/http_parse.c) and the request-body reader
 * (router/json_read.c), on the bytes a client sends.
 *
 * The first byte picks how the rest arrives (in pieces of 1 to 64 bytes,
 * as a slow client sends, or at once) and the largest body taken. The
 * rest is parsed as the router parses a connection's input: request
 * after request, each parse resuming on a longer buffer. Invariants:
 * a complete request never claims more bytes than it was given, its body
 * lies inside the buffer (or in its own decoded copy, for chunked
 * bodies), a body over the limit is never complete, and whatever
 * json_read takes on, jansson reads the same way (json_read.h promises
 * it takes on only what jansson would answer identically). A body with a
 * Content-Encoding is then decoded as the router decodes it
 * (router/http/http_inflate.c): a refusal leaves the body as it was and
 * says why in printable text, and a decoded body is within the limit and
 * read as above. Run by tests/fuzz/run.sh http SECONDS (./kv fuzz http
 * SECONDS).
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http_inflate.h"
#include "http_parse.h"
#include "json_read.h"

static void
check_body(const char *body, size_t len)
{
	json_error_t err;
	json_t *ours = json_read(body, len);
	json_t *theirs = json_loadb(body, len,
	    JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &err);
	if (ours != NULL && (theirs == NULL || !json_equal(ours, theirs)))
		abort(); /* json_read took on what jansson reads otherwise */
	arena a;
	arena_init(&a);
	json_t *in = json_read_in(&a, body, len);
	if ((in == NULL) != (ours == NULL) ||
	    (in != NULL && !json_equal(in, ours)))
		abort(); /* the arena's tree differs from the heap's */
	arena_fini(&a);
	json_decref(ours);
	json_decref(theirs);
}

static void
check_inflate(http_req *rq, const char *buf, size_t max_body)
{
	const char *was = http_req_body(rq, buf);
	size_t was_len = rq->body_len;
	char why[256];

	why[0] = '\0';
	http_inflate_status st = http_inflate(rq, buf, max_body, why,
	    sizeof(why));
	const char *body = http_req_body(rq, buf);
	if (st != HTTP_INFLATE_OK) {
		if (body != was || rq->body_len != was_len)
			abort(); /* a refusal changed the body */
		if (st != HTTP_INFLATE_BAD && st != HTTP_INFLATE_UNKNOWN)
			return;
		if (why[0] == '\0')
			abort(); /* no reason given */
		for (const char *p = why; *p != '\0'; p++)
			if (*p < 0x20 || *p > 0x7e)
				abort(); /* unprintable: it goes into JSON */
		return;
	}
	if (body == was)
		return; /* no coding to undo */
	if (rq->body_len > max_body || body[rq->body_len] != '\0')
		abort(); /* over the limit, or not terminated as promised */
	check_body(body, rq->body_len);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t step = (data[0] & 0x3F) + 1;      /* piece size */
	bool at_once = (data[0] & 0x40) != 0;
	size_t max_body = (data[0] & 0x80) ? 64 : 1u << 20;
	const char *buf = (const char *) data + 1;
	size_t len = size - 1;
	size_t at = 0;

	while (at < len) {
		http_req rq;
		http_status st = HTTP_INCOMPLETE;
		bool cont = false;
		size_t have = at_once ? len - at : 0;
		http_req_init(&rq);
		while (st == HTTP_INCOMPLETE) {
			if (!at_once) {
				have += step;
				if (have > len - at)
					have = len - at;
			}
			st = http_req_parse(&rq, buf + at, have, max_body,
			    &cont);
			if (st != HTTP_INCOMPLETE || have == len - at)
				break;
		}
		if (st != HTTP_COMPLETE) {
			http_req_fini(&rq);
			break; /* the router answers an error and closes */
		}
		if (rq.total == 0 || rq.total > have || rq.body_len > max_body)
			abort();
		const char *body = http_req_body(&rq, buf + at);
		if (!rq.chunked && (body < buf + at ||
		    body + rq.body_len > buf + at + rq.total))
			abort();
		check_body(body, rq.body_len);
		check_inflate(&rq, buf + at, max_body);
		at += rq.total;
		http_req_fini(&rq);
	}
	return 0;
}
