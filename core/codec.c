/*
 * codec.c — the stored and wire form of an attribute value tree.
 *
 * Decoding trusts nothing: every length is checked against what is left,
 * strings and names must be UTF-8, sets must not be empty, and nesting is
 * bounded, so the recursion is too. Decoding does not look for duplicate
 * set members or map names; json.c refuses those before anything is
 * stored. Read codec.h first; the layout is below.
 */
#include "codec.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/*
 * Layout (all lengths and counts are LEB128 varints, minimal form):
 *   value  := type-byte body            (type-byte is the val_type, 1..10)
 *   S, B   := len bytes                 N := number_encode() bytes
 *   SS, BS := count (len bytes)*        NS := count (number_encode())*
 *   L      := count value*              M := count (len name value)*
 *   NULL   := nothing                   BOOL := 0x00 or 0x01
 * The form is self-delimiting, so no proper prefix of a value is a value.
 * Type bytes are stored on disk: if val_type is ever renumbered, these
 * asserts fire and the bytes must be mapped here instead.
 */
_Static_assert(VAL_S == 1 && VAL_N == 2 && VAL_B == 3 && VAL_SS == 4 &&
	VAL_NS == 5 && VAL_BS == 6 && VAL_M == 7 && VAL_L == 8 &&
	VAL_NULL == 9 && VAL_BOOL == 10,
    "codec type bytes are the val_type values");

/* Longest varint of a 64-bit value. */
#define VARINT_MAX 10

static size_t
varint_size(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static size_t
varint_write(uint64_t v, uint8_t *buf)
{
	size_t n = 0;

	while (v >= 0x80) {
		buf[n++] = (uint8_t) (v | 0x80);
		v >>= 7;
	}
	buf[n++] = (uint8_t) v;
	return n;
}

static size_t
number_size(const number *n)
{
	uint8_t tmp[NUMBER_ENC_MAX];

	return number_encode(n, tmp);
}

size_t
codec_size(const value *v)
{
	size_t i, n = 1;

	switch (v->type) {
	case VAL_S:
	case VAL_B:
		n += varint_size(v->len) + v->len;
		break;
	case VAL_N:
		n += number_size(v->u.num);
		break;
	case VAL_SS:
	case VAL_BS:
		n += varint_size(v->len);
		for (i = 0; i < v->len; i++) {
			n += varint_size(v->u.elems[i].len) +
			    v->u.elems[i].len;
		}
		break;
	case VAL_NS:
		n += varint_size(v->len);
		for (i = 0; i < v->len; i++)
			n += number_size(v->u.elems[i].u.num);
		break;
	case VAL_L:
		n += varint_size(v->len);
		for (i = 0; i < v->len; i++)
			n += codec_size(&v->u.elems[i]);
		break;
	case VAL_M:
		n += varint_size(v->len);
		for (i = 0; i < v->len; i++) {
			const attr *at = &v->u.attrs[i];

			n += varint_size(at->name_len) + at->name_len;
			n += codec_size(&at->v);
		}
		break;
	case VAL_NULL:
		break;
	case VAL_BOOL:
		n += 1;
		break;
	}
	return n;
}

static size_t
bytes_write(const char *p, size_t len, uint8_t *buf)
{
	size_t n = varint_write(len, buf);

	if (len > 0)
		memcpy(buf + n, p, len);
	return n + len;
}

size_t
codec_write(const value *v, uint8_t *buf)
{
	size_t i, n = 0;

	buf[n++] = (uint8_t) v->type;
	switch (v->type) {
	case VAL_S:
	case VAL_B:
		n += bytes_write(v->u.bytes, v->len, buf + n);
		break;
	case VAL_N:
		n += number_encode(v->u.num, buf + n);
		break;
	case VAL_SS:
	case VAL_BS:
		n += varint_write(v->len, buf + n);
		for (i = 0; i < v->len; i++) {
			n += bytes_write(v->u.elems[i].u.bytes,
			    v->u.elems[i].len, buf + n);
		}
		break;
	case VAL_NS:
		n += varint_write(v->len, buf + n);
		for (i = 0; i < v->len; i++)
			n += number_encode(v->u.elems[i].u.num, buf + n);
		break;
	case VAL_L:
		n += varint_write(v->len, buf + n);
		for (i = 0; i < v->len; i++)
			n += codec_write(&v->u.elems[i], buf + n);
		break;
	case VAL_M:
		n += varint_write(v->len, buf + n);
		for (i = 0; i < v->len; i++) {
			const attr *at = &v->u.attrs[i];

			n += bytes_write(at->name, at->name_len, buf + n);
			n += codec_write(&at->v, buf + n);
		}
		break;
	case VAL_NULL:
		break;
	case VAL_BOOL:
		buf[n++] = v->b ? 1 : 0;
		break;
	}
	return n;
}

kv_err
codec_encode(const value *v, uint8_t **out, size_t *len)
{
	size_t n = codec_size(v);
	uint8_t *buf = malloc(n);

	if (buf == NULL)
		return KV_ENOMEM;
	*len = codec_write(v, buf);
	*out = buf;
	return KV_OK;
}

/* A cursor over the bytes being decoded. */
typedef struct reader {
	arena *a;
	const uint8_t *p;
	const uint8_t *end;
} reader;

static size_t
left(const reader *r)
{
	return (size_t) (r->end - r->p);
}

/* read_varint reads a minimal varint that fits size_t. */
static kv_err
read_varint(reader *r, size_t *out)
{
	uint64_t v = 0;
	size_t i;

	for (i = 0; i < VARINT_MAX; i++) {
		uint8_t b;

		if (r->p >= r->end)
			return KV_CORRUPT;
		b = *r->p++;
		if (i == VARINT_MAX - 1 && b > 1)
			return KV_CORRUPT; /* more than 64 bits */
		v |= (uint64_t) (b & 0x7f) << (7 * i);
		if ((b & 0x80) == 0) {
			if (b == 0 && i > 0)
				return KV_CORRUPT; /* not minimal */
			if (v > SIZE_MAX)
				return KV_CORRUPT;
			*out = (size_t) v;
			return KV_OK;
		}
	}
	return KV_CORRUPT;
}

/*
 * utf8_valid reports whether p[0..n) is well-formed UTF-8 (no overlong
 * forms, no surrogates, nothing above U+10FFFF), as JSON requires.
 */
static bool
utf8_valid(const uint8_t *p, size_t n)
{
	size_t i = 0;

	while (i < n) {
		uint8_t c = p[i];
		size_t k;
		uint32_t cp;
		uint64_t w;

		/* Eight ASCII bytes at a time. */
		if (n - i >= 8 && (memcpy(&w, p + i, 8),
		    (w & 0x8080808080808080ull) == 0)) {
			i += 8;
			continue;
		}
		if (c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0xC2 && c <= 0xDF) {
			k = 1;
			cp = c & 0x1F;
		} else if (c >= 0xE0 && c <= 0xEF) {
			k = 2;
			cp = c & 0x0F;
		} else if (c >= 0xF0 && c <= 0xF4) {
			k = 3;
			cp = c & 0x07;
		} else {
			return false;
		}
		if (n - i - 1 < k)
			return false;
		for (size_t j = 1; j <= k; j++) {
			if ((p[i + j] & 0xC0) != 0x80)
				return false;
			cp = (cp << 6) | (p[i + j] & 0x3F);
		}
		if ((k == 2 && cp < 0x800) || (k == 3 && cp < 0x10000) ||
		    cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
			return false;
		i += k + 1;
	}
	return true;
}

/* read_bytes reads len + bytes; the result points into the buffer. */
static kv_err
read_bytes(reader *r, bool utf8, const char **out, size_t *len)
{
	size_t n;
	kv_err e = read_varint(r, &n);

	if (e != KV_OK)
		return e;
	if (n > left(r))
		return KV_CORRUPT;
	if (utf8 && !utf8_valid(r->p, n))
		return KV_CORRUPT;
	*out = (const char *) r->p;
	*len = n;
	r->p += n;
	return KV_OK;
}

static kv_err
read_number(reader *r, number **out)
{
	size_t used;
	number *n = arena_alloc(r->a, sizeof(*n));

	if (n == NULL)
		return KV_ENOMEM;
	if (number_decode(r->p, left(r), n, &used) != KV_OK)
		return KV_CORRUPT;
	r->p += used;
	*out = n;
	return KV_OK;
}

/*
 * read_count reads an element count. Each element takes at least min
 * bytes, so a count above what is left is corrupt; this also bounds the
 * allocation that follows by the size of the input.
 */
static kv_err
read_count(reader *r, size_t min, size_t *out)
{
	kv_err e = read_varint(r, out);

	if (e != KV_OK)
		return e;
	if (*out > left(r) / min)
		return KV_CORRUPT;
	return KV_OK;
}

static kv_err read_value(reader *r, int depth, value *out);

static kv_err
read_set(reader *r, val_type t, value *out)
{
	size_t i, n;
	kv_err e = read_count(r, 1, &n);

	if (e != KV_OK)
		return e;
	if (n == 0)
		return KV_CORRUPT; /* DynamoDB has no empty sets */
	out->len = n;
	out->u.elems = arena_alloc(r->a, n * sizeof(value));
	if (out->u.elems == NULL)
		return KV_ENOMEM;
	for (i = 0; i < n; i++) {
		value *m = &out->u.elems[i];

		switch (t) {
		case VAL_SS:
			m->type = VAL_S;
			e = read_bytes(r, true, &m->u.bytes, &m->len);
			break;
		case VAL_BS:
			m->type = VAL_B;
			e = read_bytes(r, false, &m->u.bytes, &m->len);
			break;
		default:
			m->type = VAL_N;
			e = read_number(r, &m->u.num);
			break;
		}
		if (e != KV_OK)
			return e;
	}
	return KV_OK;
}

static kv_err
read_value(reader *r, int depth, value *out)
{
	size_t i, n;
	kv_err e;
	uint8_t t;

	if (depth > VALUE_MAX_DEPTH + 1)
		return KV_CORRUPT;
	if (r->p >= r->end)
		return KV_CORRUPT;
	t = *r->p++;
	memset(out, 0, sizeof(*out));
	out->type = (val_type) t;
	switch (t) {
	case VAL_S:
		return read_bytes(r, true, &out->u.bytes, &out->len);
	case VAL_B:
		return read_bytes(r, false, &out->u.bytes, &out->len);
	case VAL_N:
		return read_number(r, &out->u.num);
	case VAL_SS:
	case VAL_NS:
	case VAL_BS:
		return read_set(r, (val_type) t, out);
	case VAL_L:
		e = read_count(r, 1, &n);
		if (e != KV_OK)
			return e;
		out->len = n;
		out->u.elems = arena_alloc(r->a, n * sizeof(value));
		if (out->u.elems == NULL)
			return KV_ENOMEM;
		for (i = 0; i < n; i++) {
			e = read_value(r, depth + 1, &out->u.elems[i]);
			if (e != KV_OK)
				return e;
		}
		return KV_OK;
	case VAL_M:
		e = read_count(r, 2, &n);
		if (e != KV_OK)
			return e;
		out->len = n;
		out->u.attrs = arena_alloc(r->a, n * sizeof(attr));
		if (out->u.attrs == NULL)
			return KV_ENOMEM;
		for (i = 0; i < n; i++) {
			attr *at = &out->u.attrs[i];

			e = read_bytes(r, true, &at->name, &at->name_len);
			if (e == KV_OK)
				e = read_value(r, depth + 1, &at->v);
			if (e != KV_OK)
				return e;
		}
		return KV_OK;
	case VAL_NULL:
		out->b = true;
		return KV_OK;
	case VAL_BOOL:
		if (r->p >= r->end || *r->p > 1)
			return KV_CORRUPT;
		out->b = *r->p++ != 0;
		return KV_OK;
	default:
		return KV_CORRUPT;
	}
}

kv_err
codec_decode(arena *a, const uint8_t *buf, size_t len, value *out)
{
	reader r = { a, buf, buf + len };
	kv_err e = read_value(&r, 0, out);

	if (e == KV_OK && r.p != r.end)
		return KV_CORRUPT; /* trailing bytes */
	return e;
}
