/*
 * http_inflate.h — undoing a request body's Content-Encoding: gzip (RFC
 * 1952, one member or several one after another), deflate (RFC 1950's
 * zlib stream, or a bare RFC 1951 stream without the zlib header, as
 * some clients send it) and identity. http.c calls it after the
 * signature check, which covers the body as the client sent it, and
 * before the operation, which reads the decoded body. Nothing here
 * knows DynamoDB's answers: http.c turns the outcome into one.
 */
#ifndef KV_HTTP_INFLATE_H
#define KV_HTTP_INFLATE_H

#include <stddef.h>

#include "http_parse.h"

typedef enum http_inflate_status {
	HTTP_INFLATE_OK,        /* decoded, or there was nothing to undo */
	HTTP_INFLATE_BAD,       /* not data of its coding: why says how */
	HTTP_INFLATE_UNKNOWN,   /* a coding not served: why names it */
	HTTP_INFLATE_TOO_LARGE, /* it decodes to more than max_body bytes */
	HTTP_INFLATE_NOMEM,
} http_inflate_status;

/*
 * http_inflate decodes the body of the complete request rq, parsed from
 * buf (borrowed), by its Content-Encoding (rq->encoding).
 *
 * HTTP_INFLATE_OK: http_req_body(rq, buf) and rq->body_len are now the
 * decoded body, owned by rq (rq->body, freed by http_req_fini; any
 * chunked body it came from is freed), or are as they were when there
 * was no coding to undo ("identity", or no Content-Encoding). Anything
 * else leaves rq's body as it was; for HTTP_INFLATE_BAD and
 * HTTP_INFLATE_UNKNOWN, why[0..whylen) holds the message for the
 * client, in printable ASCII. Decoding stops as soon as the output passes
 * max_body (HTTP_INFLATE_TOO_LARGE), so no more than max_body + 1
 * bytes of output are ever held, whatever the input inflates to.
 * Called on the event loop: the work is bounded by max_body.
 */
http_inflate_status http_inflate(http_req *rq, const char *buf,
    size_t max_body, char *why, size_t whylen);

#endif
