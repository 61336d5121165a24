/*
 * auth.c — Signature Version 4 (auth.h).
 *
 * The request's head is read again here (the parser keeps only what
 * routing needs): the request line and every header, so that the
 * canonical request is built from the very bytes the client sent. The
 * steps and their order follow AWS's: the Authorization header's shape,
 * the date, the credential's scope, the key, then the signature, which is
 * compared in constant time. Keys are HMAC-SHA256 chains from OpenSSL's
 * libcrypto.
 */
#define _GNU_SOURCE
#include "auth.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/crypto.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include "errors.h"

#define MAX_HEADERS 64
#define SKEW_S (15 * 60)

kv_err
auth_load(const char *path, auth_keys **out, char *why, size_t whylen)
{
	FILE *f = fopen(path, "r");
	char line[600];
	int no = 0;
	if (f == NULL) {
		snprintf(why, whylen, "%s: cannot open", path);
		return KV_IO;
	}
	auth_keys *ks = calloc(1, sizeof(*ks));
	while (ks != NULL && fgets(line, sizeof(line), f) != NULL) {
		no++;
		line[strcspn(line, "#\r\n")] = '\0';
		char id[600], secret[600], extra[2];
		int n = sscanf(line, "%599s %599s %1s", id, secret, extra);
		if (n <= 0)
			continue;
		if (n != 2 || strlen(id) >= sizeof(ks->k[0].id) ||
		    strlen(secret) >= sizeof(ks->k[0].secret)) {
			snprintf(why, whylen, "%s:%d: want ACCESS_KEY_ID "
			    "SECRET_ACCESS_KEY", path, no);
			fclose(f);
			auth_free(ks);
			return KV_EINVAL;
		}
		auth_key *g = realloc(ks->k, (ks->n + 1) * sizeof(*g));
		if (g == NULL)
			break;
		ks->k = g;
		snprintf(g[ks->n].id, sizeof(g[ks->n].id), "%s", id);
		snprintf(g[ks->n].secret, sizeof(g[ks->n].secret), "%s", secret);
		ks->n++;
	}
	fclose(f);
	if (ks == NULL || ks->n == 0) {
		snprintf(why, whylen, "%s: no key", path);
		auth_free(ks);
		return KV_EINVAL;
	}
	*out = ks;
	return KV_OK;
}

void
auth_free(auth_keys *keys)
{
	if (keys == NULL)
		return;
	OPENSSL_cleanse(keys->k, keys->n * sizeof(*keys->k));
	free(keys->k);
	free(keys);
}

typedef struct span {
	const char *p;
	size_t n;
} span;

typedef struct header {
	span name, value;
} header;

static bool
span_is(span s, const char *w)
{
	return s.n == strlen(w) && strncasecmp(s.p, w, s.n) == 0;
}

/* A growing text buffer; ok false once memory ran out. */
typedef struct text {
	char *p;
	size_t len, cap;
	bool ok;
} text;

static void
put(text *t, const char *s, size_t n)
{
	if (!t->ok)
		return;
	if (t->len + n + 1 > t->cap) {
		size_t cap = (t->len + n + 1) * 2;
		char *g = realloc(t->p, cap);
		if (g == NULL) {
			t->ok = false;
			return;
		}
		t->p = g;
		t->cap = cap;
	}
	memcpy(t->p + t->len, s, n);
	t->len += n;
	t->p[t->len] = '\0';
}

static void
puts_(text *t, const char *s)
{
	put(t, s, strlen(s));
}

static void
hex(const unsigned char *d, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[d[i] >> 4];
		out[2 * i + 1] = digits[d[i] & 15];
	}
	out[2 * n] = '\0';
}

static void
hmac(const void *key, size_t kl, const char *msg, size_t ml,
    unsigned char out[32])
{
	unsigned int len = 32;
	HMAC(EVP_sha256(), key, (int) kl, (const unsigned char *) msg, ml,
	    out, &len);
}

/* The value of "Name=value" in the Authorization header's list. */
static span
auth_part(span a, const char *name)
{
	size_t nl = strlen(name);
	for (size_t i = 0; i + nl < a.n; i++) {
		if ((i == 0 || a.p[i - 1] == ' ' || a.p[i - 1] == ',') &&
		    strncmp(a.p + i, name, nl) == 0 && a.p[i + nl] == '=') {
			size_t s = i + nl + 1, e = s;
			while (e < a.n && a.p[e] != ',' && a.p[e] != ' ')
				e++;
			return (span) { a.p + s, e - s };
		}
	}
	return (span) { NULL, 0 };
}

/* The canonical value of header h: trimmed, inner runs of spaces one. */
static void
put_value(text *t, span v)
{
	bool space = false;
	for (size_t i = 0; i < v.n; i++) {
		char ch = v.p[i];
		if (ch == ' ' || ch == '\t') {
			space = true;
			continue;
		}
		if (space && t->len > 0 && t->p[t->len - 1] != ':' &&
		    t->p[t->len - 1] != ',')
			put(t, " ", 1);
		space = false;
		put(t, &ch, 1);
	}
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *) a, *(char *const *) b);
}

/* The canonical query string: its parameters sorted (AWS's encoding
 * assumed, as the SDKs send it). */
static void
put_query(text *t, span q)
{
	char *copy = strndup(q.p, q.n);
	char *parts[64];
	size_t n = 0;
	if (copy == NULL) {
		t->ok = false;
		return;
	}
	for (char *s = strtok(copy, "&"); s != NULL && n < 64;
	    s = strtok(NULL, "&"))
		parts[n++] = s;
	qsort(parts, n, sizeof(parts[0]), cmp_str);
	for (size_t i = 0; i < n; i++) {
		if (i > 0)
			put(t, "&", 1);
		puts_(t, parts[i]);
		if (strchr(parts[i], '=') == NULL)
			put(t, "=", 1);
	}
	free(copy);
}

static bool
refuse(reply *out, api_error e, const char *msg)
{
	errors_reply(out, e, "%s", msg);
	return false;
}

bool
auth_check(const auth_keys *keys, const char *head, size_t head_len,
    const char *body, size_t body_len, time_t now, reply *out)
{
	header hs[MAX_HEADERS];
	size_t nh = 0;
	span method, target, auth = { NULL, 0 }, date = { NULL, 0 };

	/* The request line: METHOD SP TARGET SP VERSION CRLF. */
	const char *end = head + head_len, *eol = memmem(head, head_len,
	    "\r\n", 2);
	const char *sp1 = eol ? memchr(head, ' ', (size_t) (eol - head)) : NULL;
	const char *sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t) (eol - sp1 - 1)) :
	    NULL;
	if (sp2 == NULL)
		return refuse(out, ERR_MISSING_AUTH,
		    "Request is missing Authentication Token");
	method = (span) { head, (size_t) (sp1 - head) };
	target = (span) { sp1 + 1, (size_t) (sp2 - sp1 - 1) };
	for (const char *p = eol + 2; p < end; p = eol + 2) {
		eol = memmem(p, (size_t) (end - p), "\r\n", 2);
		if (eol == NULL || eol == p)
			break;
		const char *colon = memchr(p, ':', (size_t) (eol - p));
		if (colon == NULL || nh == MAX_HEADERS)
			continue;
		const char *v = colon + 1, *ve = eol;
		while (v < ve && (*v == ' ' || *v == '\t'))
			v++;
		while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
			ve--;
		hs[nh] = (header) { { p, (size_t) (colon - p) },
		    { v, (size_t) (ve - v) } };
		if (span_is(hs[nh].name, "authorization"))
			auth = hs[nh].value;
		else if (span_is(hs[nh].name, "x-amz-date"))
			date = hs[nh].value;
		nh++;
	}
	if (auth.p == NULL || auth.n < 5 || strncmp(auth.p, "AWS4-", 5) != 0)
		return refuse(out, ERR_MISSING_AUTH,
		    "Request is missing Authentication Token");
	span cred = auth_part(auth, "Credential");
	span signed_h = auth_part(auth, "SignedHeaders");
	span sig = auth_part(auth, "Signature");
	if (cred.p == NULL || signed_h.p == NULL || sig.p == NULL ||
	    date.p == NULL) {
		char msg[1200];
		snprintf(msg, sizeof(msg), "%s%s%s%sAuthorization=%.*s",
		    cred.p ? "" : "Authorization header requires 'Credential' "
		    "parameter. ", sig.p ? "" : "Authorization header requires "
		    "'Signature' parameter. ", signed_h.p ? "" : "Authorization "
		    "header requires 'SignedHeaders' parameter. ", date.p ? "" :
		    "Authorization header requires existence of either a "
		    "'X-Amz-Date' or a 'Date' header. ", (int) (auth.n < 600 ?
		    auth.n : 600), auth.p);
		return refuse(out, ERR_INCOMPLETE_SIGNATURE, msg);
	}
	if (auth.n < 17 || strncmp(auth.p, "AWS4-HMAC-SHA256 ", 17) != 0)
		return refuse(out, ERR_INCOMPLETE_SIGNATURE, "Unsupported AWS "
		    "'algorithm' (only AWS4-HMAC-SHA256 for now).");
	/* The date: 20261201T101500Z, within 15 minutes. */
	struct tm tm = { 0 };
	char dbuf[17];
	if (date.n != 16 || (memcpy(dbuf, date.p, 16), dbuf[16] = '\0',
	    strptime(dbuf, "%Y%m%dT%H%M%SZ", &tm) == NULL)) {
		char msg[200];
		snprintf(msg, sizeof(msg), "Date must be in ISO-8601 'basic "
		    "format'. Got '%.*s'. See http://en.wikipedia.org/wiki/"
		    "ISO_8601", (int) (date.n < 64 ? date.n : 64), date.p);
		return refuse(out, ERR_INCOMPLETE_SIGNATURE, msg);
	}
	time_t at = timegm(&tm);
	if (at < now - SKEW_S || at > now + SKEW_S) {
		char nowb[17], edge[17], msg[300];
		time_t e = at < now ? now - SKEW_S : now + SKEW_S;
		struct tm t1, t2;
		strftime(nowb, sizeof(nowb), "%Y%m%dT%H%M%SZ",
		    gmtime_r(&now, &t1));
		strftime(edge, sizeof(edge), "%Y%m%dT%H%M%SZ", gmtime_r(&e, &t2));
		if (at < now)
			snprintf(msg, sizeof(msg), "Signature expired: %s is now "
			    "earlier than %s (%s - 15 min.)", dbuf, edge, nowb);
		else
			snprintf(msg, sizeof(msg), "Signature not yet current: "
			    "%s is still later than %s (%s + 15 min.)", dbuf,
			    edge, nowb);
		return refuse(out, ERR_INVALID_SIGNATURE, msg);
	}
	/* The scope: KEY/DATE/REGION/dynamodb/aws4_request. */
	span part[5];
	size_t np = 0;
	for (size_t i = 0, s = 0; i <= cred.n && np < 5; i++)
		if (i == cred.n || cred.p[i] == '/') {
			part[np++] = (span) { cred.p + s, i - s };
			s = i + 1;
		}
	if (np != 5 || memchr(part[4].p, '/', part[4].n) != NULL) {
		char msg[400];
		snprintf(msg, sizeof(msg), "Credential must have exactly 5 "
		    "slash-delimited elements, e.g. keyid/date/region/service/"
		    "term, got '%.*s'", (int) (cred.n < 300 ? cred.n : 300),
		    cred.p);
		return refuse(out, ERR_INCOMPLETE_SIGNATURE, msg);
	}
	if (!span_is(part[3], "dynamodb") || part[4].n != 12 ||
	    memcmp(part[4].p, "aws4_request", 12) != 0 || part[1].n != 8 ||
	    memcmp(part[1].p, dbuf, 8) != 0 || part[2].n == 0)
		return refuse(out, ERR_INVALID_SIGNATURE, "Credential should be "
		    "scoped to a valid region, to the 'dynamodb' service, with "
		    "the terminator 'aws4_request', on the date of the "
		    "request's X-Amz-Date.");
	const auth_key *key = NULL;
	for (size_t i = 0; i < keys->n && key == NULL; i++)
		if (strlen(keys->k[i].id) == part[0].n &&
		    memcmp(keys->k[i].id, part[0].p, part[0].n) == 0)
			key = &keys->k[i];
	if (key == NULL)
		return refuse(out, ERR_UNRECOGNIZED_CLIENT, "The security token "
		    "included in the request is invalid.");

	/* The canonical request. */
	text cr = { .ok = true };
	span path = target, query = { NULL, 0 };
	const char *q = memchr(target.p, '?', target.n);
	if (q != NULL) {
		path.n = (size_t) (q - target.p);
		query = (span) { q + 1, target.n - path.n - 1 };
	}
	bool host = false;
	put(&cr, method.p, method.n);
	put(&cr, "\n", 1);
	put(&cr, path.p, path.n);
	put(&cr, "\n", 1);
	if (query.n > 0)
		put_query(&cr, query);
	put(&cr, "\n", 1);
	for (size_t s = 0, i = 0; i <= signed_h.n; i++) {
		if (i < signed_h.n && signed_h.p[i] != ';')
			continue;
		span name = { signed_h.p + s, i - s };
		s = i + 1;
		host |= span_is(name, "host");
		for (size_t k = 0; k < name.n; k++) {
			char ch = (char) tolower((unsigned char) name.p[k]);
			put(&cr, &ch, 1);
		}
		put(&cr, ":", 1);
		bool first = true;
		for (size_t h = 0; h < nh; h++)
			if (hs[h].name.n == name.n && strncasecmp(hs[h].name.p,
			    name.p, name.n) == 0) {
				if (!first)
					put(&cr, ",", 1);
				put_value(&cr, hs[h].value);
				first = false;
			}
		put(&cr, "\n", 1);
	}
	put(&cr, "\n", 1);
	put(&cr, signed_h.p, signed_h.n);
	put(&cr, "\n", 1);
	unsigned char d[32];
	char dh[65];
	SHA256((const unsigned char *) body, body_len, d);
	hex(d, 32, dh);
	puts_(&cr, dh);
	if (!host) {
		free(cr.p);
		return refuse(out, ERR_INVALID_SIGNATURE, "'Host' must be a "
		    "'SignedHeader' in the AWS Authorization.");
	}
	if (!cr.ok) {
		free(cr.p);
		errors_from_kv(out, KV_ENOMEM);
		return false;
	}
	/* The string to sign, the key, the signature. */
	text sts = { .ok = true };
	puts_(&sts, "AWS4-HMAC-SHA256\n");
	put(&sts, dbuf, 16);
	put(&sts, "\n", 1);
	put(&sts, cred.p + part[0].n + 1, cred.n - part[0].n - 1);
	put(&sts, "\n", 1);
	SHA256((const unsigned char *) cr.p, cr.len, d);
	hex(d, 32, dh);
	puts_(&sts, dh);
	free(cr.p);
	char k0[140];
	int kl = snprintf(k0, sizeof(k0), "AWS4%s", key->secret);
	unsigned char k1[32], k2[32], k3[32], k4[32], mine[32];
	hmac(k0, (size_t) kl, part[1].p, part[1].n, k1);
	hmac(k1, 32, part[2].p, part[2].n, k2);
	hmac(k2, 32, part[3].p, part[3].n, k3);
	hmac(k3, 32, "aws4_request", 12, k4);
	hmac(k4, 32, sts.ok ? sts.p : "", sts.ok ? sts.len : 0, mine);
	free(sts.p);
	OPENSSL_cleanse(k0, sizeof(k0));
	char mh[65];
	hex(mine, 32, mh);
	if (!sts.ok || sig.n != 64 || CRYPTO_memcmp(mh, sig.p, 64) != 0)
		return refuse(out, ERR_INVALID_SIGNATURE, "The request signature "
		    "we calculated does not match the signature you provided. "
		    "Check your AWS Secret Access Key and signing method. "
		    "Consult the service documentation for details.");
	return true;
}
