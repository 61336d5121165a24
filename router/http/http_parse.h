/*
 * http_parse.h — reading HTTP/1.1 requests from a buffer, without sockets
 * (http.c moves the bytes). Incremental: the buffer only grows at its end
 * while a request is incomplete, and each call resumes where the last one
 * stopped. Bodies come framed by Content-Length or chunked (decoded into
 * the request). What the router needs of the headers is kept: the method,
 * the path, X-Amz-Target, Authorization, keep-alive, Expect, what
 * CORS needs and Content-Encoding (which http_inflate.h undoes).
 */
#ifndef KV_HTTP_PARSE_H
#define KV_HTTP_PARSE_H

#include <stdbool.h>
#include <stddef.h>

/* Longest request line plus headers. */
#define HTTP_MAX_HEAD (64u * 1024)

typedef enum http_status {
	HTTP_INCOMPLETE,     /* call again with more bytes */
	HTTP_COMPLETE,       /* rq describes a whole request */
	HTTP_BAD,            /* not a request this server takes: 400 */
	HTTP_TOO_LARGE,      /* the body is over the limit: 413 */
	HTTP_HEAD_TOO_LARGE, /* the headers are over HTTP_MAX_HEAD: 431 */
	HTTP_BAD_VERSION,    /* not HTTP/1.0 or 1.1: 505 */
} http_status;

typedef enum http_method {
	HTTP_OTHER, HTTP_GET, HTTP_POST, HTTP_HEAD, HTTP_OPTIONS
} http_method;

typedef struct http_req {
	http_method method;
	/*
	 * NUL-terminated. The path is without its query ("?..."); a path
	 * too long for the field is "" (no such resource); a target too long is "" (no such operation). Of the
	 * Authorization header only the start is kept: the router reads it
	 * for its credential scope, which comes first.
	 */
	char path[256];
	char target[128];
	char auth[512];
	bool has_target, has_auth;
	/* CORS: an Origin header came (its value is not needed: every
	 * origin is allowed), and a preflight's Access-Control-Request-
	 * Headers and -Method ("" when absent or too long). */
	bool origin;
	char cors_headers[256];
	char cors_method[32];
	/*
	 * Content-Encoding: its value, several such headers joined with
	 * ", " as one list (RFC 9110, 5.3); "" when absent. encoding_len is
	 * the whole value's length, more than the field holds when it was
	 * cut.
	 */
	char encoding[64];
	size_t encoding_len;
	bool http10;       /* an HTTP/1.0 request */
	bool keep_alive;   /* HTTP/1.1 unless "close"; 1.0 if "keep-alive" */
	bool expect;       /* Expect: 100-continue (HTTP/1.1 only) */
	bool continued;    /* "100 Continue" was asked for already */
	bool chunked;
	bool trailers;     /* chunked: the last chunk is in; trailers follow */
	size_t trailer_start;
	size_t head_len;   /* 0 until the headers are complete */
	size_t scan;       /* where to resume looking */
	size_t content_length;
	size_t body_len;   /* once complete */
	size_t total;      /* bytes the request takes, once complete */
	/*
	 * The body when it is not the bytes after the head in the input
	 * buffer: a chunked body once its framing is taken off, or a body
	 * whose Content-Encoding was undone (http_inflate). Owned; freed by
	 * http_req_fini.
	 */
	char *body;
	size_t body_cap;
} http_req;

/* http_req_init readies rq for a new request; cannot fail. */
void http_req_init(http_req *rq);

/* http_req_fini frees what rq owns; rq can then be initialised again. */
void http_req_fini(http_req *rq);

/*
 * http_req_parse reads the request at the start of buf[0..len) (borrowed;
 * the same bytes as the last call, perhaps more, perhaps moved). A body
 * over max_body is HTTP_TOO_LARGE as soon as the headers say so. Sets
 * *send_continue once, when the client asked for "100 Continue" and may
 * send its body. A chunked request's framing (chunk sizes, extensions,
 * trailers) may add at most a quarter of max_body plus HTTP_MAX_HEAD
 * to it, and its trailers HTTP_MAX_HEAD, or it is HTTP_TOO_LARGE or
 * HTTP_HEAD_TOO_LARGE.
 */
http_status http_req_parse(http_req *rq, const char *buf, size_t len,
    size_t max_body, bool *send_continue);

/*
 * http_req_body is the body of a complete request parsed from buf: in
 * rq->body when it was decoded (chunked, or inflated), else in buf.
 */
const char *http_req_body(const http_req *rq, const char *buf);

#endif
