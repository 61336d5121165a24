/*
 * http_head.c — the pieces of an answer's head (http.c writes them):
 * CRC-32 of the body (x-amz-crc32, which the SDKs check), numbers and
 * strings appended in place, reason phrases, and CORS's headers.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "http_int.h"

/* CRC-32 (the polynomial zlib uses), eight bytes a step. */
static uint32_t crc_table[8][256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void
crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
		crc_table[0][i] = c;
	}
	for (int k = 1; k < 8; k++)
		for (uint32_t i = 0; i < 256; i++) {
			uint32_t c = crc_table[k - 1][i];
			crc_table[k][i] = (c >> 8) ^ crc_table[0][c & 0xFF];
		}
}

static uint32_t
load32(const uint8_t *p)
{
	return (uint32_t) p[0] | (uint32_t) p[1] << 8 |
	    (uint32_t) p[2] << 16 | (uint32_t) p[3] << 24;
}

uint32_t
http_crc32(const char *s, size_t n)
{
	const uint8_t *p = (const uint8_t *) s;
	uint32_t (*t)[256] = crc_table;
	pthread_once(&crc_once, crc_init);
	uint32_t c = 0xFFFFFFFFu;
	for (; n >= 8; p += 8, n -= 8) {
		uint32_t lo = c ^ load32(p), hi = load32(p + 4);
		c = t[7][lo & 0xFF] ^ t[6][(lo >> 8) & 0xFF] ^
		    t[5][(lo >> 16) & 0xFF] ^ t[4][lo >> 24] ^
		    t[3][hi & 0xFF] ^ t[2][(hi >> 8) & 0xFF] ^
		    t[1][(hi >> 16) & 0xFF] ^ t[0][hi >> 24];
	}
	for (; n > 0; p++, n--)
		c = t[0][(c ^ *p) & 0xFF] ^ (c >> 8);
	return c ^ 0xFFFFFFFFu;
}

/* Appending to a header being built (room is checked by the caller). */
char *
http_put_str(char *p, const char *s)
{
	size_t n = strlen(s);
	memcpy(p, s, n);
	return p + n;
}

char *
http_put_dec(char *p, uint64_t v)
{
	char tmp[20];
	int i = 0;
	do {
		tmp[i++] = (char) ('0' + v % 10);
		v /= 10;
	} while (v != 0);
	while (i > 0)
		*p++ = tmp[--i];
	return p;
}

char *
http_put_hex(char *p, uint64_t v, int digits)
{
	for (int i = digits - 1; i >= 0; i--)
		*p++ = "0123456789ABCDEF"[(v >> (4 * i)) & 0xF];
	return p;
}

const char *
http_reason(int status)
{
	switch (status) {
	case 100: return "Continue";
	case 200: return "OK";
	case 400: return "Bad Request";
	case 404: return "Not Found";
	case 413: return "Request Entity Too Large";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	case 503: return "Service Unavailable";
	case 505: return "HTTP Version Not Supported";
	default: return "Unknown";
	}
}

/* Whether s can be said again in a header: printable ASCII only. */
static bool
header_safe(const char *s)
{
	for (; *s; s++)
		if (*s < 0x20 || *s > 0x7E)
			return false;
	return true;
}

/*
 * CORS, for browsers (the JavaScript SDK in a page), as DynamoDB answers
 * it: any origin is allowed; a preflight (OPTIONS with an Origin) is
 * answered with the headers and method it asked for, for 172,800 s.
 * Nothing is added without an Origin.
 */
char *
http_put_cors(char *p, const http_req *rq)
{
	if (!rq->origin)
		return p;
	p = http_put_str(p, "Access-Control-Allow-Origin: *\r\n");
	if (rq->method != HTTP_OPTIONS)
		return p;
	if (rq->cors_headers[0] != '\0' && header_safe(rq->cors_headers)) {
		p = http_put_str(p, "Access-Control-Allow-Headers: ");
		p = http_put_str(p, rq->cors_headers);
		p = http_put_str(p, "\r\n");
	}
	if (rq->cors_method[0] != '\0' && header_safe(rq->cors_method)) {
		p = http_put_str(p, "Access-Control-Allow-Methods: ");
		p = http_put_str(p, rq->cors_method);
		p = http_put_str(p, "\r\n");
	}
	return http_put_str(p, "Access-Control-Max-Age: 172800\r\n");
}

