/*
 * http_inflate.c — a request body's Content-Encoding undone with zlib
 * (see http_inflate.h).
 *
 * The output grows by doubling from a guess and never past max_body + 1
 * bytes: the byte past the limit is how "too large" is known, so a small
 * body that would inflate to gigabytes costs no more than a body at the
 * limit. Strict where leniency would let garbage through: whatever
 * follows a gzip member must be another member, nothing may follow a
 * deflate stream, and an empty body is no stream at all. Lists of real
 * codings ("gzip, deflate"), which no SDK sends, are not decoded.
 */
#include "http_inflate.h"

#include <assert.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

typedef enum coding {
	CODING_IDENTITY,
	CODING_GZIP,
	CODING_DEFLATE,
	CODING_OTHER,
} coding;

static bool
is(const char *s, size_t n, const char *word)
{
	return strlen(word) == n && strncasecmp(s, word, n) == 0;
}

/*
 * The one coding rq's Content-Encoding asks for. An "identity" item is
 * no coding at all and is dropped, so "gzip, identity" is gzip. Two real
 * codings, a name not served, or a value cut to fit the field are
 * CODING_OTHER. RFC 9110 (8.4.1.3) has "x-gzip" read as "gzip".
 */
static coding
coding_of(const http_req *rq)
{
	const char *s = rq->encoding;
	size_t n = strlen(s);
	coding c = CODING_IDENTITY;

	if (rq->encoding_len > n)
		return CODING_OTHER;
	for (size_t i = 0; i < n;) {
		while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == ','))
			i++;
		size_t j = i;
		while (j < n && s[j] != ',')
			j++;
		size_t e = j;
		while (e > i && (s[e - 1] == ' ' || s[e - 1] == '\t'))
			e--;
		coding one = is(s + i, e - i, "gzip") ||
		    is(s + i, e - i, "x-gzip") ? CODING_GZIP :
		    is(s + i, e - i, "deflate") ? CODING_DEFLATE :
		    e == i || is(s + i, e - i, "identity") ? CODING_IDENTITY :
		    CODING_OTHER;
		if (one == CODING_OTHER ||
		    (one != CODING_IDENTITY && c != CODING_IDENTITY))
			return CODING_OTHER;
		if (one != CODING_IDENTITY)
			c = one;
		i = j;
	}
	return c;
}

/*
 * RFC 1950's header: method 8 (deflate), a window of at most 32 KB, the
 * two bytes a multiple of 31. A bare deflate stream never starts so in
 * practice: its first block would have to be a stored one (bits 1-2 of
 * the first byte zero) with padding bits set, which no encoder writes.
 * So the header picks the format, without a second try.
 */
static bool
zlib_header(const unsigned char *p, size_t n)
{
	return n >= 2 && (p[0] & 0x0f) == 8 && (p[0] >> 4) <= 7 &&
	    ((unsigned) p[0] << 8 | p[1]) % 31 == 0;
}

static bool
gzip_magic(const unsigned char *p, size_t n)
{
	return n >= 2 && p[0] == 0x1f && p[1] == 0x8b;
}

/*
 * Inflates in[0..n) with zlib's window_bits (31: gzip, 15: zlib, -15:
 * bare deflate); members: gzip members may follow one another. On
 * HTTP_INFLATE_OK, *out (owned, NUL-terminated, of *cap + 1 bytes) holds
 * *out_len bytes; on HTTP_INFLATE_BAD, *why says why.
 */
static http_inflate_status
run(const unsigned char *in, size_t n, int window_bits, bool members,
    size_t max_body, char **out, size_t *out_len, size_t *out_cap,
    const char **why)
{
	size_t limit = max_body + 1; /* one byte more says "too large" */
	size_t cap = n < limit / 4 ? 4 * n : limit;
	size_t len = 0;
	http_inflate_status st = HTTP_INFLATE_NOMEM;
	z_stream zs;
	char *o;

	if (cap < 4096)
		cap = limit < 4096 ? limit : 4096;
	memset(&zs, 0, sizeof(zs));
	if (inflateInit2(&zs, window_bits) != Z_OK)
		return HTTP_INFLATE_NOMEM;
	o = malloc(cap + 1);
	if (o == NULL)
		goto out;
	zs.next_in = (unsigned char *) in; /* zlib does not write it */
	zs.avail_in = (uInt) n;
	for (;;) {
		if (len == cap) {
			if (cap == limit) {
				st = HTTP_INFLATE_TOO_LARGE;
				goto out;
			}
			size_t ncap = cap > limit / 2 ? limit : 2 * cap;
			char *g = realloc(o, ncap + 1);
			if (g == NULL)
				goto out;
			o = g;
			cap = ncap;
		}
		size_t room = cap - len < UINT_MAX ? cap - len : UINT_MAX;
		zs.next_out = (unsigned char *) o + len;
		zs.avail_out = (uInt) room;
		int rc = inflate(&zs, Z_NO_FLUSH);
		len += room - zs.avail_out;
		if (len > max_body) {
			st = HTTP_INFLATE_TOO_LARGE;
			goto out;
		}
		if (rc == Z_STREAM_END) {
			if (zs.avail_in == 0)
				break;
			st = HTTP_INFLATE_BAD;
			if (!members) {
				*why = "data follows the end of the stream";
				goto out;
			}
			if (!gzip_magic(zs.next_in, zs.avail_in)) {
				*why = "the data after a gzip member is not "
				    "another gzip member";
				goto out;
			}
			if (inflateReset(&zs) != Z_OK) {
				*why = "the next gzip member could not start";
				goto out;
			}
			continue;
		}
		/* Z_BUF_ERROR with room left: the input ended mid-stream. */
		if (rc == Z_OK || (rc == Z_BUF_ERROR && zs.avail_out == 0))
			continue;
		st = HTTP_INFLATE_BAD;
		if (rc == Z_BUF_ERROR)
			*why = "the data is truncated";
		else if (rc == Z_NEED_DICT)
			*why = "the stream asks for a preset dictionary";
		else if (rc == Z_DATA_ERROR)
			*why = zs.msg != NULL ? zs.msg : "the data is invalid";
		else
			st = HTTP_INFLATE_NOMEM; /* Z_MEM_ERROR */
		goto out;
	}
	o[len] = '\0';
	*out = o;
	*out_len = len;
	*out_cap = cap + 1;
	o = NULL;
	st = HTTP_INFLATE_OK;
out:
	inflateEnd(&zs);
	free(o);
	return st;
}

/*
 * Copies s into out (size cap, at least 4) with each byte that is not
 * printable ASCII as '?', since it goes into a JSON answer, and "..."
 * when it is cut.
 */
static void
printable(char *out, size_t cap, const char *s, bool cut)
{
	size_t i = 0;
	for (; s[i] != '\0' && i + 4 < cap; i++)
		out[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	if (s[i] != '\0' || cut) {
		memcpy(out + i, "...", 3);
		i += 3;
	}
	out[i] = '\0';
}

http_inflate_status
http_inflate(http_req *rq, const char *buf, size_t max_body, char *why,
    size_t whylen)
{
	coding c = coding_of(rq);
	const unsigned char *in =
	    (const unsigned char *) http_req_body(rq, buf);
	size_t n = rq->body_len;
	const char *name = c == CODING_GZIP ? "gzip" : "deflate";
	const char *reason = NULL;
	char *out = NULL;
	size_t len = 0, cap = 0;
	http_inflate_status st;

	assert(max_body < SIZE_MAX / 2);
	if (c == CODING_IDENTITY)
		return HTTP_INFLATE_OK;
	if (c == CODING_OTHER) {
		char shown[sizeof(rq->encoding) + 4];
		printable(shown, sizeof(shown), rq->encoding,
		    rq->encoding_len > strlen(rq->encoding));
		snprintf(why, whylen, "The request's Content-Encoding '%s' "
		    "is not supported (gzip, deflate and identity are)",
		    shown);
		return HTTP_INFLATE_UNKNOWN;
	}
	if (n > UINT_MAX) /* more than zlib takes at once, and any limit */
		return HTTP_INFLATE_TOO_LARGE;
	if (n == 0) {
		reason = "the body is empty";
		st = HTTP_INFLATE_BAD;
	} else if (c == CODING_GZIP && !gzip_magic(in, n)) {
		reason = "the data does not start with a gzip header";
		st = HTTP_INFLATE_BAD;
	} else if (c == CODING_GZIP) {
		st = run(in, n, 16 + MAX_WBITS, true, max_body, &out, &len,
		    &cap, &reason);
	} else {
		st = run(in, n, zlib_header(in, n) ? MAX_WBITS : -MAX_WBITS,
		    false, max_body, &out, &len, &cap, &reason);
	}
	if (st == HTTP_INFLATE_BAD)
		snprintf(why, whylen, "The request body could not be "
		    "decompressed (%s): %s", name, reason);
	if (st != HTTP_INFLATE_OK)
		return st;
	/* The decoded body replaces what the request held. */
	free(rq->body);
	rq->body = out;
	rq->body_cap = cap;
	rq->body_len = len;
	return HTTP_INFLATE_OK;
}
