/*
 * http.h — the HTTP/1.1 kv-load speaks, without sockets: a growable byte
 * buffer, the DynamoDB request it sends, an incremental parser of the
 * responses (Content-Length, chunked as Node.js servers such as dynalite
 * send, or a body that ends when the server closes) and a parser of the
 * requests the null server answers. conn.c and serve.c move the bytes.
 *
 * Not supported, because a DynamoDB endpoint does not send them: trailers
 * with content (they are skipped), pipelined answers, 100-continue.
 * Read next: conn.h.
 */
#ifndef KVLOAD_HTTP_H
#define KVLOAD_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

#define HTTP_MAX_HEAD (64 * 1024)        /* status line and headers */
#define HTTP_MAX_BODY (64 * 1024 * 1024) /* a DynamoDB answer is < 16 MB */

typedef struct http_buf {
	char *p;    /* owned; NUL-terminated when not NULL */
	size_t len; /* bytes in use, not counting the NUL */
	size_t cap;
} http_buf;

/* http_buf_init empties b without allocating; cannot fail. */
void http_buf_init(http_buf *b);

/* http_buf_fini frees b's memory; safe on a zeroed buffer. */
void http_buf_fini(http_buf *b);

/* http_buf_reserve makes room for extra more bytes. KV_ENOMEM if not. */
kv_err http_buf_reserve(http_buf *b, size_t extra);

/* http_buf_append copies n bytes from p (borrowed) to the end of b. */
kv_err http_buf_append(http_buf *b, const void *p, size_t n);

/* http_buf_printf appends formatted text. KV_ENOMEM on failure. */
kv_err http_buf_printf(http_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* http_buf_consume drops the first n bytes (n <= len). */
void http_buf_consume(http_buf *b, size_t n);

/* http_buf_clear empties b and keeps its memory. */
void http_buf_clear(http_buf *b);

/*
 * http_request appends to out a POST / with the headers every DynamoDB
 * client sends (a fixed, well-formed SigV4 Authorization whose signature
 * no server here checks), for operation op ("GetItem") to host ("H:P"),
 * and body[0..len) (borrowed). KV_ENOMEM on failure.
 */
kv_err http_request(http_buf *out, const char *host, const char *op,
    const char *body, size_t len);

typedef enum http_framing {
	HTTP_LENGTH,  /* Content-Length (or no body) */
	HTTP_CHUNKED, /* Transfer-Encoding: chunked */
	HTTP_CLOSE,   /* the body ends when the server closes */
} http_framing;

/*
 * The state of one response being parsed from a buffer that only grows
 * at its end while the response is incomplete.
 */
typedef struct http_resp {
	int status;           /* from the status line */
	bool close;           /* the server closes after this response */
	http_framing framing;
	size_t head_len;      /* 0 until the headers are complete */
	size_t body_len;      /* HTTP_LENGTH: Content-Length */
	size_t scan;          /* where to look next in the buffer */
	size_t total;         /* bytes of the response, once complete */
	http_buf chunks;      /* HTTP_CHUNKED: the decoded body */
} http_resp;

/* http_resp_init prepares r for a new response; cannot fail. */
void http_resp_init(http_resp *r);

/* http_resp_reset readies r for the next response, keeping memory. */
void http_resp_reset(http_resp *r);

/* http_resp_fini frees r's memory; safe on a zeroed struct. */
void http_resp_fini(http_resp *r);

/*
 * http_resp_parse looks at buf[0..len) (borrowed), the bytes received so
 * far for this response, and sets *done when it is complete; r->total then
 * says how many bytes it took. Call again with more bytes when not done.
 * Returns KV_PROTO when the bytes are not an HTTP/1.x response or exceed
 * HTTP_MAX_HEAD or HTTP_MAX_BODY, KV_ENOMEM when memory runs out.
 */
kv_err http_resp_parse(http_resp *r, const char *buf, size_t len,
    bool *done);

/*
 * http_resp_eof is told the server closed after buf[0..len). Sets *done
 * when that completes the response (a body framed by the close). Returns
 * KV_OK either way; an incomplete response is *done = false.
 */
kv_err http_resp_eof(http_resp *r, const char *buf, size_t len, bool *done);

/*
 * http_resp_body returns the body of a complete response parsed from buf
 * and its length in *len: valid until buf or r changes.
 */
const char *http_resp_body(const http_resp *r, const char *buf, size_t *len);

/*
 * http_req_parse looks for one complete request at the start of
 * buf[0..len) (borrowed). Sets *done and *total (its length in bytes) and
 * *close (the client asked to close, or spoke HTTP/1.0) when there is one.
 * Returns KV_PROTO for what the null server cannot answer (not HTTP/1.x,
 * a chunked request body, headers over HTTP_MAX_HEAD).
 */
kv_err http_req_parse(const char *buf, size_t len, bool *done,
    size_t *total, bool *close);

#endif
