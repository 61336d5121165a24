/*
 * http.c — libmicrohttpd front end (see http.h).
 *
 * A POST body is gathered into a buffer that grows as data arrives, up to
 * HTTP_MAX_BODY; a Content-Length above that is answered (413) at once,
 * before the body is read, and a chunked body that grows past it closes
 * the connection. Every answer carries DynamoDB's headers:
 * x-amzn-RequestId and x-amz-crc32 (CRC32 of the body, which the SDKs
 * check).
 */
#include "http.h"

#include <arpa/inet.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <microhttpd.h>

#include "api.h"
#include "errors.h"

struct http {
	struct MHD_Daemon *d;
	router *r;
};

typedef struct body {
	char *buf;
	size_t len, cap;
	bool too_large;
} body;

#define JSON_TYPE "application/x-amz-json-1.0"

static atomic_uint_fast64_t request_seq;

static uint32_t
crc32(const char *p, size_t n)
{
	static uint32_t t[256];
	static atomic_int ready;
	if (!atomic_load(&ready)) {
		for (uint32_t i = 0; i < 256; i++) {
			uint32_t c = i;
			for (int k = 0; k < 8; k++)
				c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
			t[i] = c;
		}
		atomic_store(&ready, 1);
	}
	uint32_t c = 0xFFFFFFFFu;
	for (size_t i = 0; i < n; i++)
		c = t[(c ^ (uint8_t) p[i]) & 0xFF] ^ (c >> 8);
	return c ^ 0xFFFFFFFFu;
}

static enum MHD_Result
answer(struct MHD_Connection *conn, reply *rp, const char *ctype)
{
	char crc[16];
	snprintf(crc, sizeof(crc), "%u", crc32(rp->body, rp->len));
	struct MHD_Response *resp = MHD_create_response_from_buffer(rp->len,
	    rp->body, MHD_RESPMEM_MUST_FREE);
	if (resp == NULL) {
		free(rp->body);
		return MHD_NO;
	}
	rp->body = NULL;
	char id[64];
	uint64_t seq = atomic_fetch_add(&request_seq, 1);
	snprintf(id, sizeof(id), "KV%016llX%08X", (unsigned long long) seq,
	    (unsigned) time(NULL));
	MHD_add_response_header(resp, "x-amzn-RequestId", id);
	MHD_add_response_header(resp, "x-amz-crc32", crc);
	MHD_add_response_header(resp, "Content-Type", ctype);
	enum MHD_Result ret = MHD_queue_response(conn, (unsigned) rp->status,
	    resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result
on_request(void *cls, struct MHD_Connection *conn, const char *url,
    const char *method, const char *version, const char *upload_data,
    size_t *upload_size, void **con_cls)
{
	http *h = cls;
	body *b = *con_cls;
	reply rp = { 0 };

	if (strcmp(method, "GET") == 0) {
		if (strcmp(url, "/metrics") == 0) {
			ops_metrics(h->r, &rp);
			return answer(conn, &rp,
			    "text/plain; version=0.0.4; charset=utf-8");
		}
		if (strcmp(url, "/") != 0) {
			rp.status = 404;
			rp.body = strdup("not found\n");
		} else {
			char txt[256];
			snprintf(txt, sizeof(txt), "healthy: %s ", h->r->listen);
			rp.status = 200;
			rp.body = strdup(txt);
		}
		rp.len = rp.body != NULL ? strlen(rp.body) : 0;
		return answer(conn, &rp, "text/plain");
	}
	if (strcmp(method, "POST") != 0) {
		errors_reply(&rp, ERR_UNKNOWN_OPERATION,
		    "An unknown operation was requested.");
		return answer(conn, &rp, JSON_TYPE);
	}
	if (b == NULL) {
		b = calloc(1, sizeof(*b));
		if (b == NULL)
			return MHD_NO;
		*con_cls = b;
		const char *cl = MHD_lookup_connection_value(conn,
		    MHD_HEADER_KIND, "Content-Length");
		if (cl != NULL && strtoull(cl, NULL, 10) > HTTP_MAX_BODY) {
			/*
			 * Answer before the body is read (and instead of
			 * "100 Continue"); libmicrohttpd then closes the
			 * connection without reading the body.
			 */
			b->too_large = true;
			errors_reply(&rp, ERR_TOO_LARGE, "Request body is "
			    "larger than the maximum of %u bytes",
			    HTTP_MAX_BODY);
			return answer(conn, &rp, JSON_TYPE);
		}
		return MHD_YES;
	}
	if (*upload_size > 0) {
		/*
		 * A chunked body that grows past the limit cannot be answered
		 * in the middle of its upload: close the connection.
		 */
		if (b->too_large || b->len + *upload_size > HTTP_MAX_BODY)
			return MHD_NO;
		if (b->len + *upload_size > b->cap) {
			size_t cap = b->cap == 0 ? 4096 : b->cap;
			while (cap < b->len + *upload_size)
				cap *= 2;
			char *nb = realloc(b->buf, cap);
			if (nb == NULL)
				return MHD_NO;
			b->buf = nb;
			b->cap = cap;
		}
		memcpy(b->buf + b->len, upload_data, *upload_size);
		b->len += *upload_size;
		*upload_size = 0;
		return MHD_YES;
	}
	const char *target = MHD_lookup_connection_value(conn,
	    MHD_HEADER_KIND, "X-Amz-Target");
	const char *auth = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
	    "Authorization");
	api_handle(h->r, target, auth, b->buf != NULL ? b->buf : "", b->len,
	    &rp);
	return answer(conn, &rp, JSON_TYPE);
}

static void
on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
    enum MHD_RequestTerminationCode toe)
{
	body *b = *con_cls;
	if (b != NULL) {
		free(b->buf);
		free(b);
		*con_cls = NULL;
	}
}

kv_err
http_open(router *r, const char *host, int port, http **out)
{
	struct sockaddr_in sa;
	http *h = calloc(1, sizeof(*h));
	if (h == NULL)
		return KV_ENOMEM;
	h->r = r;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t) port);
	if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
		free(h);
		return KV_EINVAL;
	}
	h->d = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION |
	    MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG,
	    (uint16_t) port, NULL, NULL, on_request, h,
	    MHD_OPTION_SOCK_ADDR, &sa,
	    MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
	    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned) 120,
	    MHD_OPTION_CONNECTION_LIMIT, (unsigned) 1024,
	    MHD_OPTION_LISTENING_ADDRESS_REUSE, (unsigned) 1,
	    MHD_OPTION_END);
	if (h->d == NULL) {
		free(h);
		return KV_IO;
	}
	*out = h;
	return KV_OK;
}

void
http_close(http *h)
{
	if (h == NULL)
		return;
	MHD_stop_daemon(h->d);
	free(h);
}
