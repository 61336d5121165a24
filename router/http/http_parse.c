/*
 * http_parse.c — HTTP/1.1 request parsing (see http_parse.h).
 *
 * Strict where leniency would let two readers disagree on where a request
 * ends: lines end in CRLF, a Content-Length is digits only and said once
 * (or repeated with the same value), and a request with both a
 * Content-Length and a Transfer-Encoding, or a transfer coding other than
 * chunked, is refused.
 */
#include "http_parse.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void
http_req_init(http_req *rq)
{
	memset(rq, 0, sizeof(*rq));
}

void
http_req_fini(http_req *rq)
{
	free(rq->body);
	rq->body = NULL;
	rq->body_cap = 0;
}

const char *
http_req_body(const http_req *rq, const char *buf)
{
	if (rq->body != NULL)
		return rq->body;
	return rq->chunked ? "" : buf + rq->head_len;
}

/* Copies s[0..n) into field (size cap) when it fits, else empties it. */
static void
keep(char *field, size_t cap, const char *s, size_t n, bool truncate)
{
	if (n >= cap) {
		if (!truncate) {
			field[0] = '\0';
			return;
		}
		n = cap - 1;
	}
	memcpy(field, s, n);
	field[n] = '\0';
}

/*
 * The first "\r\n" in p[0..n), or NULL; a CR alone is an ordinary byte,
 * as with memmem, which this outruns (memchr scans a vector at a time).
 */
static const char *
find_crlf(const char *p, size_t n)
{
	const char *end = p + n;
	while (p + 1 < end) {
		const char *cr = memchr(p, '\r', (size_t) (end - p) - 1);
		if (cr == NULL)
			return NULL;
		if (cr[1] == '\n')
			return cr;
		p = cr + 1;
	}
	return NULL;
}

/* The first "\r\n\r\n" in p[0..n), or NULL (find_crlf). */
static const char *
find_blank_line(const char *p, size_t n)
{
	const char *end = p + n;
	const char *e;
	while (end - p >= 4 && (e = find_crlf(p, (size_t) (end - p) - 2)) !=
	    NULL) {
		if (e[2] == '\r' && e[3] == '\n')
			return e;
		p = e + 2;
	}
	return NULL;
}

static bool
is_token(const char *s, size_t n, const char *word)
{
	return strlen(word) == n && strncasecmp(s, word, n) == 0;
}

/* Does the comma-separated list s[0..n) hold word (any case)? */
static bool
has_token(const char *s, size_t n, const char *word)
{
	size_t i = 0;
	while (i < n) {
		while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == ','))
			i++;
		size_t j = i;
		while (j < n && s[j] != ',')
			j++;
		size_t e = j;
		while (e > i && (s[e - 1] == ' ' || s[e - 1] == '\t'))
			e--;
		if (is_token(s + i, e - i, word))
			return true;
		i = j;
	}
	return false;
}

/*
 * Adds v[0..n) to rq's Content-Encoding list: a header said twice is
 * one list, its values in order. What does not fit the field is cut;
 * encoding_len keeps counting, so that http_inflate knows.
 */
static void
add_encoding(http_req *rq, const char *v, size_t n)
{
	size_t cap = sizeof(rq->encoding) - 1;
	size_t at = strlen(rq->encoding);
	if (rq->encoding_len > 0) {
		for (const char *s = ", "; *s != '\0' && at < cap; s++)
			rq->encoding[at++] = *s;
		rq->encoding_len += 2;
	}
	size_t k = n < cap - at ? n : cap - at;
	memcpy(rq->encoding + at, v, k);
	rq->encoding[at + k] = '\0';
	rq->encoding_len += n;
}

static bool
parse_length(const char *s, size_t n, size_t *out)
{
	size_t v = 0;
	if (n == 0 || n > 19)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (size_t) (s[i] - '0');
	}
	*out = v;
	return true;
}

/* Reads the request line and headers in buf[0..head) (head ends CRLFCRLF). */
static http_status
parse_head(http_req *rq, const char *buf, size_t head, size_t max_body)
{
	const char *p = buf, *end = buf + head - 2; /* the final CRLF */
	const char *eol = find_crlf(p, head);
	const char *sp1 = memchr(p, ' ', (size_t) (eol - p));
	const char *sp2 = sp1 != NULL ?
	    memchr(sp1 + 1, ' ', (size_t) (eol - sp1 - 1)) : NULL;
	if (sp1 == NULL || sp2 == NULL || sp1 == p || sp2 == sp1 + 1)
		return HTTP_BAD;
	const char *ver = sp2 + 1;
	size_t vlen = (size_t) (eol - ver);
	bool http11;
	if (vlen == 8 && memcmp(ver, "HTTP/1.1", 8) == 0)
		http11 = true;
	else if (vlen == 8 && memcmp(ver, "HTTP/1.0", 8) == 0)
		http11 = false;
	else if (vlen >= 5 && memcmp(ver, "HTTP/", 5) == 0)
		return HTTP_BAD_VERSION;
	else
		return HTTP_BAD;
	size_t mlen = (size_t) (sp1 - p);
	rq->method = mlen == 3 && memcmp(p, "GET", 3) == 0 ? HTTP_GET :
	    mlen == 4 && memcmp(p, "POST", 4) == 0 ? HTTP_POST :
	    mlen == 4 && memcmp(p, "HEAD", 4) == 0 ? HTTP_HEAD :
	    mlen == 7 && memcmp(p, "OPTIONS", 7) == 0 ? HTTP_OPTIONS :
	    HTTP_OTHER;
	/* The path without its query. */
	const char *path = sp1 + 1;
	const char *q = memchr(path, '?', (size_t) (sp2 - path));
	keep(rq->path, sizeof(rq->path), path,
	    (size_t) ((q != NULL ? q : sp2) - path), false);
	rq->http10 = !http11;
	rq->keep_alive = http11;

	bool have_length = false, have_te = false, close = false;
	for (p = eol + 2; p < end; p = eol + 2) {
		eol = find_crlf(p, (size_t) (end - p) + 2);
		const char *colon = memchr(p, ':', (size_t) (eol - p));
		if (colon == NULL || colon == p || *p == ' ' || *p == '\t')
			return HTTP_BAD;
		size_t nlen = (size_t) (colon - p);
		const char *v = colon + 1, *ve = eol;
		while (v < ve && (*v == ' ' || *v == '\t'))
			v++;
		while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
			ve--;
		size_t n = (size_t) (ve - v);
		if (is_token(p, nlen, "content-length")) {
			size_t cl;
			if (!parse_length(v, n, &cl) ||
			    (have_length && cl != rq->content_length))
				return HTTP_BAD;
			rq->content_length = cl;
			have_length = true;
		} else if (is_token(p, nlen, "transfer-encoding")) {
			if (have_te || !is_token(v, n, "chunked"))
				return HTTP_BAD;
			have_te = true;
		} else if (is_token(p, nlen, "connection")) {
			/* "close" wins, wherever it is said. */
			if (has_token(v, n, "close"))
				close = true;
			else if (has_token(v, n, "keep-alive"))
				rq->keep_alive = true;
		} else if (is_token(p, nlen, "expect")) {
			/* An HTTP/1.0 client's expectation is ignored. */
			rq->expect = http11 && is_token(v, n, "100-continue");
		} else if (is_token(p, nlen, "x-amz-target")) {
			keep(rq->target, sizeof(rq->target), v, n, false);
			rq->has_target = true;
		} else if (is_token(p, nlen, "authorization")) {
			keep(rq->auth, sizeof(rq->auth), v, n, true);
			rq->has_auth = true;
		} else if (is_token(p, nlen, "content-encoding")) {
			add_encoding(rq, v, n);
		} else if (is_token(p, nlen, "origin")) {
			rq->origin = true;
		} else if (is_token(p, nlen,
		    "access-control-request-headers")) {
			keep(rq->cors_headers, sizeof(rq->cors_headers), v, n,
			    false);
		} else if (is_token(p, nlen,
		    "access-control-request-method")) {
			keep(rq->cors_method, sizeof(rq->cors_method), v, n,
			    false);
		}
	}
	if (have_length && have_te)
		return HTTP_BAD;
	if (close)
		rq->keep_alive = false;
	rq->chunked = have_te;
	if (have_length && rq->content_length > max_body)
		return HTTP_TOO_LARGE;
	return HTTP_COMPLETE;
}

/*
 * Reads the trailers from rq->scan on: lines, then an empty line; each
 * complete line is passed once. All of them together are held to
 * HTTP_MAX_HEAD.
 */
static http_status
parse_trailers(http_req *rq, const char *buf, size_t len)
{
	for (;;) {
		const char *t = find_crlf(buf + rq->scan, len - rq->scan);
		if (t == NULL)
			return len - rq->trailer_start > HTTP_MAX_HEAD ?
			    HTTP_HEAD_TOO_LARGE : HTTP_INCOMPLETE;
		size_t l = (size_t) (t - (buf + rq->scan));
		rq->scan += l + 2;
		if (rq->scan - rq->trailer_start > HTTP_MAX_HEAD)
			return HTTP_HEAD_TOO_LARGE;
		if (l == 0) {
			rq->total = rq->scan;
			return HTTP_COMPLETE;
		}
	}
}

/*
 * Decodes the chunks from rq->scan on; HTTP_COMPLETE once the last chunk
 * and the trailers are in.
 */
static http_status
decode_chunks(http_req *rq, const char *buf, size_t len, size_t max_body)
{
	for (;;) {
		const char *p = buf + rq->scan;
		size_t left = len - rq->scan;
		const char *eol = find_crlf(p, left);
		if (eol == NULL)
			return left > 1024 ? HTTP_BAD : HTTP_INCOMPLETE;
		size_t size = 0, i = 0;
		for (; p + i < eol; i++) {
			char ch = p[i];
			int d = ch >= '0' && ch <= '9' ? ch - '0' :
			    ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 :
			    ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : -1;
			if (d < 0)
				break;
			if (size > (SIZE_MAX >> 4))
				return HTTP_TOO_LARGE;
			size = size << 4 | (size_t) d;
		}
		if (i == 0 || (p + i < eol && p[i] != ';' && p[i] != ' ' &&
		    p[i] != '\t'))
			return HTTP_BAD;
		size_t data = (size_t) (eol + 2 - buf);
		if (size == 0) {
			rq->trailers = true;
			rq->scan = data;
			rq->trailer_start = data;
			return parse_trailers(rq, buf, len);
		}
		if (size > max_body - rq->body_len) /* body_len <= max_body */
			return HTTP_TOO_LARGE;
		if (len - data < size + 2)
			return HTTP_INCOMPLETE;
		if (memcmp(buf + data + size, "\r\n", 2) != 0)
			return HTTP_BAD;
		if (rq->body_len + size + 1 > rq->body_cap) {
			size_t cap = rq->body_cap == 0 ? 4096 : rq->body_cap;
			while (cap < rq->body_len + size + 1)
				cap *= 2;
			char *nb = realloc(rq->body, cap);
			if (nb == NULL)
				return HTTP_TOO_LARGE;
			rq->body = nb;
			rq->body_cap = cap;
		}
		memcpy(rq->body + rq->body_len, buf + data, size);
		rq->body_len += size;
		rq->body[rq->body_len] = '\0';
		rq->scan = data + size + 2;
	}
}

static http_status
parse_chunks(http_req *rq, const char *buf, size_t len, size_t max_body)
{
	http_status st = rq->trailers ? parse_trailers(rq, buf, len) :
	    decode_chunks(rq, buf, len, max_body);
	/*
	 * The framing counts too: chunk sizes, extensions and trailers may
	 * not make the raw bytes much more than the body they carry. (All of
	 * an incomplete request's bytes are its own.)
	 */
	if (st == HTTP_INCOMPLETE &&
	    len - rq->head_len > max_body + (max_body >> 2) + HTTP_MAX_HEAD)
		return HTTP_TOO_LARGE;
	return st;
}

http_status
http_req_parse(http_req *rq, const char *buf, size_t len, size_t max_body,
    bool *send_continue)
{
	*send_continue = false;
	if (rq->head_len == 0) {
		size_t from = rq->scan > 3 ? rq->scan - 3 : 0;
		const char *e = len > from ?
		    find_blank_line(buf + from, len - from) : NULL;
		if (e == NULL) {
			rq->scan = len;
			return len > HTTP_MAX_HEAD ? HTTP_HEAD_TOO_LARGE :
			    HTTP_INCOMPLETE;
		}
		size_t head = (size_t) (e - buf) + 4;
		if (head > HTTP_MAX_HEAD)
			return HTTP_HEAD_TOO_LARGE;
		http_status st = parse_head(rq, buf, head, max_body);
		if (st != HTTP_COMPLETE)
			return st;
		rq->head_len = head;
		rq->scan = head;
	}
	http_status st;
	if (rq->chunked) {
		st = parse_chunks(rq, buf, len, max_body);
	} else if (len - rq->head_len >= rq->content_length) {
		rq->body_len = rq->content_length;
		rq->total = rq->head_len + rq->content_length;
		st = HTTP_COMPLETE;
	} else {
		st = HTTP_INCOMPLETE;
	}
	if (st == HTTP_INCOMPLETE && rq->expect && !rq->continued) {
		rq->continued = true;
		*send_continue = true;
	}
	return st;
}
