/*
 * http.c — HTTP/1.1 bytes (see http.h). Parsing is incremental in the
 * simple sense: the caller keeps every byte of the response in one buffer
 * and calls again when more arrive; r->scan remembers where to resume so
 * no byte is looked at twice for the header end or a chunk.
 */
#include "http.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void
http_buf_init(http_buf *b)
{
	b->p = NULL;
	b->len = 0;
	b->cap = 0;
}

void
http_buf_fini(http_buf *b)
{
	free(b->p);
	http_buf_init(b);
}

kv_err
http_buf_reserve(http_buf *b, size_t extra)
{
	if (b->len + extra + 1 <= b->cap)
		return KV_OK;
	size_t cap = b->cap < 256 ? 256 : b->cap;
	while (cap < b->len + extra + 1) {
		if (cap > SIZE_MAX / 2)
			return KV_ENOMEM;
		cap *= 2;
	}
	char *p = realloc(b->p, cap);
	if (p == NULL)
		return KV_ENOMEM;
	b->p = p;
	b->cap = cap;
	return KV_OK;
}

kv_err
http_buf_append(http_buf *b, const void *p, size_t n)
{
	if (http_buf_reserve(b, n) != KV_OK)
		return KV_ENOMEM;
	if (n > 0)
		memcpy(b->p + b->len, p, n);
	b->len += n;
	b->p[b->len] = '\0';
	return KV_OK;
}

kv_err
http_buf_printf(http_buf *b, const char *fmt, ...)
{
	/* Formats straight into the free room; again only when it is short. */
	for (int pass = 0; pass < 2; pass++) {
		size_t room = b->cap > b->len ? b->cap - b->len : 0;
		va_list ap;
		va_start(ap, fmt);
		int n = vsnprintf(room > 0 ? b->p + b->len : NULL, room, fmt,
		    ap);
		va_end(ap);
		if (n >= 0 && (size_t) n < room) {
			b->len += (size_t) n;
			return KV_OK;
		}
		if (n < 0 || http_buf_reserve(b, (size_t) n) != KV_OK)
			break;
	}
	if (b->p != NULL)
		b->p[b->len] = '\0'; /* a short first pass wrote there */
	return KV_ENOMEM;
}

void
http_buf_consume(http_buf *b, size_t n)
{
	if (n >= b->len) {
		http_buf_clear(b);
		return;
	}
	memmove(b->p, b->p + n, b->len - n);
	b->len -= n;
	b->p[b->len] = '\0';
}

void
http_buf_clear(http_buf *b)
{
	b->len = 0;
	if (b->p != NULL)
		b->p[0] = '\0';
}

kv_err
http_request(http_buf *out, const char *host, const char *op,
    const char *body, size_t len)
{
	kv_err e = http_buf_printf(out,
	    "POST / HTTP/1.1\r\n"
	    "Host: %s\r\n"
	    "Content-Type: application/x-amz-json-1.0\r\n"
	    "X-Amz-Target: DynamoDB_20120810.%s\r\n"
	    "X-Amz-Date: 20260101T000000Z\r\n"
	    "Authorization: AWS4-HMAC-SHA256 "
	    "Credential=AKIDLOAD/20260101/us-east-1/dynamodb/aws4_request, "
	    "SignedHeaders=content-type;host;x-amz-date;x-amz-target, "
	    "Signature=%s\r\n"
	    "Content-Length: %zu\r\n"
	    "\r\n",
	    host, op, "00000000000000000000000000000000"
	    "00000000000000000000000000000000", len);
	if (e != KV_OK)
		return e;
	return http_buf_append(out, body, len);
}

/* The headers both parsers care about. */
typedef struct headers {
	long long length; /* Content-Length, -1 when absent */
	bool chunked;
	bool close;
	bool keep_alive;
	bool bad;
} headers;

/* Whether the comma-separated list v[0..n) holds token tok. */
static bool
has_token(const char *v, size_t n, const char *tok)
{
	size_t tl = strlen(tok);
	size_t i = 0;
	while (i < n) {
		while (i < n && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
			i++;
		size_t start = i;
		while (i < n && v[i] != ',')
			i++;
		size_t end = i;
		while (end > start &&
		    (v[end - 1] == ' ' || v[end - 1] == '\t'))
			end--;
		if (end - start == tl && strncasecmp(v + start, tok, tl) == 0)
			return true;
	}
	return false;
}

/* Reads the header lines in p[0..n), each ending in CRLF. */
static void
read_headers(const char *p, size_t n, headers *h)
{
	h->length = -1;
	h->chunked = h->close = h->keep_alive = h->bad = false;
	const char *end = p + n;
	while (p < end) {
		const char *eol = memchr(p, '\r', (size_t) (end - p));
		if (eol == NULL)
			eol = end;
		const char *colon = memchr(p, ':', (size_t) (eol - p));
		if (colon == NULL) {
			h->bad = true;
			return;
		}
		size_t name_len = (size_t) (colon - p);
		const char *v = colon + 1;
		while (v < eol && (*v == ' ' || *v == '\t'))
			v++;
		size_t vn = (size_t) (eol - v);
		while (vn > 0 && (v[vn - 1] == ' ' || v[vn - 1] == '\t'))
			vn--;
		if (name_len == 14 &&
		    strncasecmp(p, "Content-Length", 14) == 0) {
			long long len = 0;
			if (vn == 0 || vn > 12)
				h->bad = true;
			for (size_t i = 0; i < vn; i++) {
				if (!isdigit((unsigned char) v[i]))
					h->bad = true;
				len = len * 10 + (v[i] - '0');
			}
			if (h->length >= 0 && h->length != len)
				h->bad = true;
			h->length = len;
		} else if (name_len == 17 &&
		    strncasecmp(p, "Transfer-Encoding", 17) == 0) {
			if (has_token(v, vn, "chunked"))
				h->chunked = true;
		} else if (name_len == 10 &&
		    strncasecmp(p, "Connection", 10) == 0) {
			if (has_token(v, vn, "close"))
				h->close = true;
			if (has_token(v, vn, "keep-alive"))
				h->keep_alive = true;
		}
		p = eol + 2;
	}
}

/* The offset just past "\r\n\r\n" in buf[from..len), or 0. */
static size_t
head_end(const char *buf, size_t from, size_t len)
{
	/* memchr finds each '\r' faster than a compare at every byte. */
	for (size_t i = from; i + 4 <= len; i++) {
		const char *cr = memchr(buf + i, '\r', len - 3 - i);
		if (cr == NULL)
			return 0;
		i = (size_t) (cr - buf);
		if (memcmp(cr, "\r\n\r\n", 4) == 0)
			return i + 4;
	}
	return 0;
}

/* Where scanning for the header end resumes: the last 3 bytes may start it. */
static size_t
rescan_from(size_t len)
{
	return len > 3 ? len - 3 : 0;
}

void
http_resp_init(http_resp *r)
{
	memset(r, 0, sizeof(*r));
	http_buf_init(&r->chunks);
}

void
http_resp_reset(http_resp *r)
{
	http_buf chunks = r->chunks;
	memset(r, 0, sizeof(*r));
	http_buf_clear(&chunks);
	r->chunks = chunks;
}

void
http_resp_fini(http_resp *r)
{
	http_buf_fini(&r->chunks);
	memset(r, 0, sizeof(*r));
}

/* Parses the status line and headers in buf[0..head). */
static kv_err
parse_head(http_resp *r, const char *buf, size_t head)
{
	/* "HTTP/1.1 200 OK\r\n"; the reason phrase may be empty. */
	if (head < 14 || memcmp(buf, "HTTP/1.", 7) != 0 ||
	    (buf[7] != '0' && buf[7] != '1') || buf[8] != ' ' ||
	    !isdigit((unsigned char) buf[9]) ||
	    !isdigit((unsigned char) buf[10]) ||
	    !isdigit((unsigned char) buf[11]))
		return KV_PROTO;
	bool http10 = buf[7] == '0';
	r->status = (buf[9] - '0') * 100 + (buf[10] - '0') * 10 +
	    (buf[11] - '0');
	const char *eol = memchr(buf, '\r', head);
	size_t first = (size_t) (eol - buf) + 2;
	headers h;
	read_headers(buf + first, head - 2 - first, &h);
	if (h.bad)
		return KV_PROTO;
	r->head_len = head;
	r->close = h.close || (http10 && !h.keep_alive);
	if ((r->status >= 100 && r->status < 200) || r->status == 204 ||
	    r->status == 304) {
		r->framing = HTTP_LENGTH;
		r->body_len = 0;
	} else if (h.chunked) {
		r->framing = HTTP_CHUNKED;
	} else if (h.length >= 0) {
		if (h.length > HTTP_MAX_BODY)
			return KV_PROTO;
		r->framing = HTTP_LENGTH;
		r->body_len = (size_t) h.length;
	} else {
		r->framing = HTTP_CLOSE;
		r->close = true;
	}
	r->scan = head;
	return KV_OK;
}

/* Decodes the chunks complete in buf[r->scan..len). */
static kv_err
parse_chunks(http_resp *r, const char *buf, size_t len, bool *done)
{
	for (;;) {
		size_t p = r->scan;
		const char *cr = memchr(buf + p, '\r', len - p);
		if (cr == NULL || (size_t) (cr - buf) + 2 > len)
			return len - p > 1024 ? KV_PROTO : KV_OK;
		size_t eol = (size_t) (cr - buf);
		if (buf[eol + 1] != '\n')
			return KV_PROTO;
		size_t size = 0, i = p, digits = 0;
		for (; i < eol && isxdigit((unsigned char) buf[i]); i++) {
			char c = buf[i];
			int v = isdigit((unsigned char) c) ? c - '0' :
			    tolower((unsigned char) c) - 'a' + 10;
			size = size * 16 + (size_t) v;
			if (++digits > 8)
				return KV_PROTO;
		}
		if (digits == 0 || (i < eol && buf[i] != ';' && buf[i] != ' '))
			return KV_PROTO;
		size_t data = eol + 2;
		if (size == 0) {
			/* The last chunk; trailers up to an empty line. */
			if (data + 2 <= len && buf[data] == '\r' &&
			    buf[data + 1] == '\n') {
				r->total = data + 2;
				*done = true;
				return KV_OK;
			}
			size_t end = head_end(buf, data, len);
			if (end == 0)
				return len - data > HTTP_MAX_HEAD ? KV_PROTO :
				                                    KV_OK;
			r->total = end;
			*done = true;
			return KV_OK;
		}
		if (r->chunks.len + size > HTTP_MAX_BODY)
			return KV_PROTO;
		if (data + size + 2 > len)
			return KV_OK;
		if (buf[data + size] != '\r' || buf[data + size + 1] != '\n')
			return KV_PROTO;
		if (http_buf_append(&r->chunks, buf + data, size) != KV_OK)
			return KV_ENOMEM;
		r->scan = data + size + 2;
	}
}

kv_err
http_resp_parse(http_resp *r, const char *buf, size_t len, bool *done)
{
	*done = false;
	if (r->head_len == 0) {
		size_t head = head_end(buf, r->scan, len);
		if (head == 0) {
			if (len > HTTP_MAX_HEAD)
				return KV_PROTO;
			r->scan = rescan_from(len);
			return KV_OK;
		}
		kv_err e = parse_head(r, buf, head);
		if (e != KV_OK)
			return e;
	}
	switch (r->framing) {
	case HTTP_LENGTH:
		if (len >= r->head_len + r->body_len) {
			r->total = r->head_len + r->body_len;
			*done = true;
		}
		return KV_OK;
	case HTTP_CHUNKED:
		return parse_chunks(r, buf, len, done);
	case HTTP_CLOSE:
		if (len - r->head_len > HTTP_MAX_BODY)
			return KV_PROTO;
		return KV_OK;
	}
	return KV_PROTO;
}

kv_err
http_resp_eof(http_resp *r, const char *buf, size_t len, bool *done)
{
	/* Only a body without framing may end with the connection. */
	*done = false;
	if (r->head_len != 0 && r->framing == HTTP_CLOSE) {
		r->total = len;
		*done = true;
	}
	return KV_OK;
}

const char *
http_resp_body(const http_resp *r, const char *buf, size_t *len)
{
	switch (r->framing) {
	case HTTP_CHUNKED:
		*len = r->chunks.len;
		return r->chunks.p != NULL ? r->chunks.p : "";
	case HTTP_CLOSE:
		*len = r->total - r->head_len;
		return buf + r->head_len;
	case HTTP_LENGTH:
		break;
	}
	*len = r->body_len;
	return buf + r->head_len;
}

kv_err
http_req_parse(const char *buf, size_t len, bool *done, size_t *total,
    bool *close)
{
	*done = false;
	size_t head = head_end(buf, 0, len);
	if (head == 0)
		return len > HTTP_MAX_HEAD ? KV_PROTO : KV_OK;
	/* "METHOD TARGET HTTP/1.x\r\n" */
	const char *eol = memchr(buf, '\r', head);
	size_t line = (size_t) (eol - buf);
	if (line < 10 || memcmp(eol - 8, "HTTP/1.", 7) != 0)
		return KV_PROTO;
	bool http10 = eol[-1] == '0';
	headers h;
	read_headers(eol + 2, head - 2 - (line + 2), &h);
	if (h.bad || h.chunked || h.length > HTTP_MAX_BODY)
		return KV_PROTO;
	size_t body = h.length > 0 ? (size_t) h.length : 0;
	if (len < head + body)
		return KV_OK;
	*done = true;
	*total = head + body;
	*close = h.close || (http10 && !h.keep_alive);
	return KV_OK;
}
