/*
 * jscan.c — JSON read in place (see jscan.h). jscan_walk (and jscan_doc,
 * which is a walk without a handler) is the only function that meets
 * untrusted text; it walks without recursion, with
 * one bit per open container, so deep nesting costs no stack. The rest
 * walks text jscan_doc accepted: on other text its answers mean nothing,
 * but it still never reads outside the span it is given.
 */
#include "jscan.h"

#include <limits.h>
#include <stdint.h>
#include <string.h>

/*
 * The 309 digits of 2^1024 - 2^970, halfway between DBL_MAX and 2^1024.
 * strtod rounds any magnitude at or above it to infinity, and jansson
 * rejects a number that overflows so.
 */
static const char dbl_limit[] =
    "17976931348623158079372897140530341507993413271003782693617377898044"
    "49682927647509466490179775872070963302864166928879109465555478519404"
    "02630657488671505820681908902000708383676273854845817711531764475730"
    "27006985557136695962284291481986083493647529271907416844436551070434"
    "2711559699508093042880177904174497792";

#define DBL_LIMIT_DIGITS (sizeof(dbl_limit) - 1)

/*
 * Exponent digits stop counting past this: any exponent this large
 * decides overflow whatever the digits, and e10 cannot overflow.
 */
#define EXP_CAP 100000000000000000LL

static bool
is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static const char *
skip_ws(const char *p, const char *end)
{
	while (p < end && is_ws(*p))
		p++;
	return p;
}

/* Skips whitespace and the NUL bytes a valid text may hold (jscan.h). */
static const char *
skip_gap(const char *p, const char *end)
{
	while (p < end && (is_ws(*p) || *p == '\0'))
		p++;
	return p;
}

static int
hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The value of the four hex digits at p, or -1. */
static long
hex4(const char *p, const char *end)
{
	if (end - p < 4)
		return -1;
	long v = 0;
	for (int i = 0; i < 4; i++) {
		int d = hex_digit(p[i]);
		if (d < 0)
			return -1;
		v = v << 4 | d;
	}
	return v;
}

/*
 * Past the UTF-8 sequence starting at p (a byte >= 0x80), or NULL when it
 * is not one: truncated, overlong, a surrogate, or above U+10FFFF.
 */
static const char *
scan_utf8(const char *p, const char *end)
{
	unsigned char c = (unsigned char) *p;
	size_t n;
	uint32_t cp, min;
	if (c >= 0xC2 && c <= 0xDF) {
		n = 2;
		cp = c & 0x1F;
		min = 0x80;
	} else if (c >= 0xE0 && c <= 0xEF) {
		n = 3;
		cp = c & 0x0F;
		min = 0x800;
	} else if (c >= 0xF0 && c <= 0xF4) {
		n = 4;
		cp = c & 0x07;
		min = 0x10000;
	} else {
		return NULL;
	}
	if ((size_t) (end - p) < n)
		return NULL;
	for (size_t i = 1; i < n; i++) {
		unsigned char u = (unsigned char) p[i];
		if ((u & 0xC0) != 0x80)
			return NULL;
		cp = cp << 6 | (u & 0x3F);
	}
	if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		return NULL;
	return p + n;
}

/*
 * Whether the eight bytes in w are all plain ASCII inside a string: none
 * below 0x20, none from 0x80, no '"' and no '\\'. Uses the exact test for
 * "some byte is less than n" on w and on w xor each character.
 */
static bool
plain8(uint64_t w)
{
	const uint64_t ones = 0x0101010101010101ull, high = ones * 0x80;
	uint64_t q = w ^ (ones * '"'), b = w ^ (ones * '\\');
	return ((w | ((w - ones * 0x20) & ~w) | ((q - ones) & ~q) |
	    ((b - ones) & ~b)) & high) == 0;
}

/* Past the string whose opening quote is at p, or NULL when invalid. */
static const char *
scan_string(const char *p, const char *end)
{
	p++;
	while (p < end) {
		uint64_t w;
		/* Eight plain ASCII bytes at a time (see plain8). */
		while (end - p >= 8 && (memcpy(&w, p, 8), plain8(w)))
			p += 8;
		if (p == end)
			break;
		unsigned char c = (unsigned char) *p;
		if (c == '"')
			return p + 1;
		if (c < 0x20)
			return NULL;
		if (c >= 0x80) {
			if ((p = scan_utf8(p, end)) == NULL)
				return NULL;
			continue;
		}
		if (c != '\\') {
			p++;
			continue;
		}
		if (end - p < 2)
			return NULL;
		switch (p[1]) {
		case '"':
		case '\\':
		case '/':
		case 'b':
		case 'f':
		case 'n':
		case 'r':
		case 't':
			p += 2;
			continue;
		case 'u':
			break;
		default:
			return NULL;
		}
		/* \u0000 would put a NUL in the string: jansson refuses it. */
		long cp = hex4(p + 2, end);
		if (cp <= 0 || (cp >= 0xDC00 && cp <= 0xDFFF))
			return NULL;
		p += 6;
		if (cp >= 0xD800 && cp <= 0xDBFF) {
			/* A high surrogate must be followed by a low one. */
			if (end - p < 6 || p[0] != '\\' || p[1] != 'u')
				return NULL;
			long lo = hex4(p + 2, end);
			if (lo < 0xDC00 || lo > 0xDFFF)
				return NULL;
			p += 6;
		}
	}
	return NULL;
}

/*
 * Reads the integer text p[0..end) ('-'? digits) into *out: false when
 * it is not one or does not fit in long long.
 */
static bool
parse_int(const char *p, const char *end, long long *out)
{
	bool neg = p < end && *p == '-';
	if (neg)
		p++;
	if (p == end)
		return false;
	unsigned long long limit = neg ? (unsigned long long) LLONG_MAX + 1 :
	                                 (unsigned long long) LLONG_MAX;
	unsigned long long v = 0;
	for (; p < end; p++) {
		if (!is_digit(*p))
			return false;
		unsigned d = (unsigned) (*p - '0');
		if (v > (limit - d) / 10)
			return false;
		v = v * 10 + d;
	}
	if (!neg)
		*out = (long long) v;
	else if (v == (unsigned long long) LLONG_MAX + 1)
		*out = LLONG_MIN;
	else
		*out = -(long long) v;
	return true;
}

/*
 * Compares the digits in spans a[0..an) then b[0..bn) with dbl_limit as
 * two decimal fractions: whether the digits are at or above it.
 */
static bool
digits_reach_limit(const char *a, size_t an, const char *b, size_t bn)
{
	size_t i = 0;
	for (size_t k = 0; k < an + bn && i < DBL_LIMIT_DIGITS; k++, i++) {
		char c = k < an ? a[k] : b[k - an];
		if (c != dbl_limit[i])
			return c > dbl_limit[i];
	}
	/* Equal so far: the rest of the limit decides, against zeros. */
	for (; i < DBL_LIMIT_DIGITS; i++)
		if (dbl_limit[i] != '0')
			return false;
	return true;
}

/*
 * Whether the valid number p[0..end) rounds to an infinite double. The
 * value is 0.DIGITS x 10^e10 with DIGITS its significant digits; it
 * overflows past 10^309, and at e10 == 309 the digits decide.
 */
static bool
real_overflows(const char *p, const char *end)
{
	if (*p == '-')
		p++;
	const char *ip = p;
	while (p < end && is_digit(*p))
		p++;
	const char *ie = p;
	const char *fp = p, *fe = p;
	if (p < end && *p == '.') {
		fp = ++p;
		while (p < end && is_digit(*p))
			p++;
		fe = p;
	}
	long long exp = 0;
	if (p < end && (*p == 'e' || *p == 'E')) {
		p++;
		bool neg = p < end && *p == '-';
		if (p < end && (*p == '-' || *p == '+'))
			p++;
		for (; p < end && is_digit(*p); p++)
			if (exp < EXP_CAP)
				exp = exp * 10 + (*p - '0');
		if (neg)
			exp = -exp;
	}
	while (ip < ie && *ip == '0')
		ip++;
	long long e10;
	if (ip < ie) {
		e10 = (long long) (ie - ip) + exp;
		if (e10 != 309)
			return e10 > 309;
		return digits_reach_limit(ip, (size_t) (ie - ip), fp,
		    (size_t) (fe - fp));
	}
	const char *f = fp;
	while (f < fe && *f == '0')
		f++;
	if (f == fe)
		return false; /* zero */
	e10 = exp - (long long) (f - fp);
	if (e10 != 309)
		return e10 > 309;
	return digits_reach_limit(f, (size_t) (fe - f), NULL, 0);
}

/* Past the one or more digits at p, or NULL when there is none. */
static const char *
skip_digits(const char *p, const char *end)
{
	if (p == end || !is_digit(*p))
		return NULL;
	while (p < end && is_digit(*p))
		p++;
	return p;
}

/*
 * Past the number at p, or NULL when it is not one by the JSON grammar
 * or jansson would refuse its value (jscan.h).
 */
static const char *
scan_number(const char *p, const char *end)
{
	const char *start = p;
	bool integer = true;
	if (*p == '-')
		p++;
	if (p == end)
		return NULL;
	if (*p == '0') {
		p++;
		if (p < end && is_digit(*p))
			return NULL;
	} else if (is_digit(*p)) {
		while (p < end && is_digit(*p))
			p++;
	} else {
		return NULL;
	}
	if (p < end && *p == '.') {
		if ((p = skip_digits(p + 1, end)) == NULL)
			return NULL;
		integer = false;
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < end && (*p == '+' || *p == '-'))
			p++;
		if ((p = skip_digits(p, end)) == NULL)
			return NULL;
		integer = false;
	}
	long long v;
	if (integer ? !parse_int(start, p, &v) : real_overflows(start, p))
		return NULL;
	return p;
}

/* Past the literal word at p (true, false, null), or NULL. */
static const char *
scan_word(const char *p, const char *end, const char *word)
{
	size_t n = strlen(word);
	if ((size_t) (end - p) < n || memcmp(p, word, n) != 0)
		return NULL;
	return p + n;
}

/*
 * At a member name at p: past the name, its ':' and whitespace, so at
 * the member's value; NULL when that is not there. The name (quotes
 * included) goes to h, when there is one.
 */
static const char *
scan_name(const char *p, const char *end, const jscan_handler *h,
    void *arg)
{
	const char *q;
	if (p == end || *p != '"' || (q = scan_string(p, end)) == NULL)
		return NULL;
	if (h != NULL &&
	    !h->name(arg, (jscan_val) { p, (size_t) (q - p) }))
		return NULL;
	q = skip_ws(q, end);
	if (q == end || *q != ':')
		return NULL;
	return skip_ws(q + 1, end);
}

bool
jscan_doc(const char *buf, size_t len, jscan_val *root)
{
	return jscan_walk(buf, len, NULL, NULL, root);
}

bool
jscan_walk(const char *buf, size_t len, const jscan_handler *h, void *arg,
    jscan_val *root)
{
	if (buf == NULL)
		return false;
	const char *end = buf + len;
	unsigned char objects[JSCAN_MAX_DEPTH / 8]; /* bit d: d is an object */
	size_t depth = 0;                          /* containers open */
	const char *p = skip_ws(buf, end);
	const char *start = p;
	for (;;) {
		/* A value starts at p, at depth + 1 in jansson's count. */
		if (p == end || depth >= JSCAN_MAX_DEPTH)
			return false;
		const char *vend, *v0 = p;
		jscan_kind kind = JSCAN_NUMBER;
		bool pushback = false; /* a number or word: see below */
		switch (*p) {
		case '{':
		case '[': {
			bool obj = *p == '{';
			if (h != NULL &&
			    !h->open(arg, obj ? JSCAN_OBJECT : JSCAN_ARRAY))
				return false;
			unsigned char bit = (unsigned char) (1u << depth % 8);
			if (obj)
				objects[depth / 8] |= bit;
			else
				objects[depth / 8] &= (unsigned char) ~bit;
			depth++;
			p = skip_ws(p + 1, end);
			if (p < end && *p == (obj ? '}' : ']')) {
				if (h != NULL && !h->close(arg))
					return false;
				depth--;
				p++;
				kind = JSCAN_NONE; /* reported already */
				break;
			}
			if (obj && (p = scan_name(p, end, h, arg)) == NULL)
				return false;
			continue;
		}
		case '"':
			p = scan_string(p, end);
			kind = JSCAN_STRING;
			break;
		case 't':
			p = scan_word(p, end, "true");
			kind = JSCAN_TRUE;
			pushback = true;
			break;
		case 'f':
			p = scan_word(p, end, "false");
			kind = JSCAN_FALSE;
			pushback = true;
			break;
		case 'n':
			p = scan_word(p, end, "null");
			kind = JSCAN_NULL;
			pushback = true;
			break;
		default:
			p = scan_number(p, end);
			pushback = true;
			break;
		}
		if (p == NULL)
			return false;
		vend = p;
		if (h != NULL && kind != JSCAN_NONE && !h->scalar(arg, kind,
		    (jscan_val) { v0, (size_t) (vend - v0) }))
			return false;
		/*
		 * jansson pushes back the byte after a number or word, and a
		 * NUL pushed back is lost: skip one, as it does.
		 */
		if (pushback && p < end && *p == '\0')
			p++;
		/* Close what ends here; stop at the next value. */
		for (;;) {
			p = skip_ws(p, end);
			if (depth == 0) {
				if (p != end)
					return false;
				if (root != NULL) {
					root->p = start;
					root->n = (size_t) (vend - start);
				}
				return true;
			}
			if (p == end)
				return false;
			size_t top = depth - 1;
			bool obj = objects[top / 8] >> top % 8 & 1;
			if (*p == ',') {
				p = skip_ws(p + 1, end);
				if (obj && (p = scan_name(p, end, h, arg)) == NULL)
					return false;
				break;
			}
			if (*p != (obj ? '}' : ']'))
				return false;
			if (h != NULL && !h->close(arg))
				return false;
			p++;
			vend = p;
			depth--;
		}
	}
}

/* --- Walking valid text ------------------------------------------------ */

/* Past the string whose opening quote is at p. */
static const char *
skip_string(const char *p, const char *end)
{
	const char *from = p + 1;
	for (;;) {
		const char *q = memchr(from, '"', (size_t) (end - from));
		if (q == NULL)
			return end;
		/* The quote ends it unless an odd run of '\' escapes it. */
		const char *b = q;
		while (b > from && b[-1] == '\\')
			b--;
		if ((q - b) % 2 == 0)
			return q + 1;
		from = q + 1;
	}
}

/* Past the value at p. */
static const char *
skip_value(const char *p, const char *end)
{
	if (p == end)
		return end;
	if (*p == '"')
		return skip_string(p, end);
	if (*p == '{' || *p == '[') {
		size_t depth = 0;
		while (p < end) {
			char c = *p;
			if (c == '"') {
				p = skip_string(p, end);
				continue;
			}
			if (c == '{' || c == '[')
				depth++;
			else if ((c == '}' || c == ']') && --depth == 0)
				return p + 1;
			p++;
		}
		return end;
	}
	while (p < end && *p != ',' && *p != ']' && *p != '}' && *p != ':' &&
	    *p != '\0' && !is_ws(*p))
		p++;
	return p;
}

jscan_kind
jscan_kind_of(jscan_val v)
{
	if (v.n == 0)
		return JSCAN_NONE;
	switch (v.p[0]) {
	case '{':
		return JSCAN_OBJECT;
	case '[':
		return JSCAN_ARRAY;
	case '"':
		return JSCAN_STRING;
	case 't':
		return JSCAN_TRUE;
	case 'f':
		return JSCAN_FALSE;
	case 'n':
		return JSCAN_NULL;
	default:
		if (*v.p == '-' || is_digit(*v.p))
			return JSCAN_NUMBER;
		return JSCAN_NONE;
	}
}

void
jscan_chars_init(jscan_chars *c, jscan_val v)
{
	memset(c, 0, sizeof(*c));
	if (jscan_kind_of(v) == JSCAN_STRING && v.n >= 2) {
		c->p = v.p + 1;
		c->end = v.p + v.n - 1;
	}
}

/* Keeps the UTF-8 bytes of cp but the first in c->pend; returns it. */
static int
pend_utf8(jscan_chars *c, unsigned long cp)
{
	unsigned char *b = c->pend;
	if (cp < 0x80) {
		b[0] = (unsigned char) cp;
		c->npend = 1;
	} else if (cp < 0x800) {
		b[0] = (unsigned char) (0xC0 | cp >> 6);
		b[1] = (unsigned char) (0x80 | (cp & 0x3F));
		c->npend = 2;
	} else if (cp < 0x10000) {
		b[0] = (unsigned char) (0xE0 | cp >> 12);
		b[1] = (unsigned char) (0x80 | (cp >> 6 & 0x3F));
		b[2] = (unsigned char) (0x80 | (cp & 0x3F));
		c->npend = 3;
	} else {
		b[0] = (unsigned char) (0xF0 | cp >> 18);
		b[1] = (unsigned char) (0x80 | (cp >> 12 & 0x3F));
		b[2] = (unsigned char) (0x80 | (cp >> 6 & 0x3F));
		b[3] = (unsigned char) (0x80 | (cp & 0x3F));
		c->npend = 4;
	}
	c->ipend = 1;
	return b[0];
}

int
jscan_chars_next(jscan_chars *c)
{
	if (c->ipend < c->npend)
		return c->pend[c->ipend++];
	if (c->p >= c->end)
		return -1;
	unsigned char b = (unsigned char) *c->p;
	if (b != '\\') {
		c->p++;
		return b;
	}
	if (c->end - c->p < 2) {
		c->p = c->end;
		return -1;
	}
	char e = c->p[1];
	c->p += 2;
	switch (e) {
	case 'b':
		return '\b';
	case 'f':
		return '\f';
	case 'n':
		return '\n';
	case 'r':
		return '\r';
	case 't':
		return '\t';
	case 'u':
		break;
	default: /* '"', '\\', '/' */
		return (unsigned char) e;
	}
	long cp = hex4(c->p, c->end);
	if (cp < 0) {
		c->p = c->end;
		return -1;
	}
	c->p += 4;
	if (cp >= 0xD800 && cp <= 0xDBFF && c->end - c->p >= 6 &&
	    c->p[0] == '\\' && c->p[1] == 'u') {
		long lo = hex4(c->p + 2, c->end);
		if (lo >= 0xDC00 && lo <= 0xDFFF) {
			cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
			c->p += 6;
		}
	}
	return pend_utf8(c, (unsigned long) cp);
}

/* Whether the string at q[0..qn) (quotes included) decodes to s[0..sn). */
static bool
string_is(const char *q, size_t qn, const char *s, size_t sn)
{
	const char *raw = q + 1;
	size_t rn = qn - 2;
	if (memchr(raw, '\\', rn) == NULL)
		return rn == sn && memcmp(raw, s, sn) == 0;
	jscan_chars c;
	jscan_chars_init(&c, (jscan_val) { q, qn });
	size_t i = 0;
	for (int b; (b = jscan_chars_next(&c)) >= 0; i++)
		if (i == sn || (unsigned char) s[i] != b)
			return false;
	return i == sn;
}

bool
jscan_str_eq(jscan_val v, const char *s)
{
	if (jscan_kind_of(v) != JSCAN_STRING || v.n < 2)
		return false;
	return string_is(v.p, v.n, s, strlen(s));
}

size_t
jscan_str_copy(jscan_val v, char *buf, size_t cap)
{
	if (cap > 0)
		buf[0] = '\0';
	if (jscan_kind_of(v) != JSCAN_STRING || v.n < 2)
		return 0;
	jscan_chars c;
	jscan_chars_init(&c, v);
	size_t n = 0;
	for (int b; (b = jscan_chars_next(&c)) >= 0; n++)
		if (n + 1 < cap)
			buf[n] = (char) b;
	if (cap > 0)
		buf[n < cap ? n : cap - 1] = '\0';
	return n;
}

/* Starts *it inside container v when v is of kind `kind`, else empty. */
static void
iter_open(jscan_iter *it, jscan_val v, jscan_kind kind)
{
	it->p = NULL;
	it->end = NULL;
	if (jscan_kind_of(v) == kind) {
		it->end = v.p + v.n;
		it->p = skip_gap(v.p + 1, it->end);
	}
}

void
jscan_members_init(jscan_iter *it, jscan_val obj)
{
	iter_open(it, obj, JSCAN_OBJECT);
}

bool
jscan_member_next(jscan_iter *it, jscan_val *name, jscan_val *value)
{
	const char *p = it->p, *end = it->end;
	if (p == end || *p != '"')
		return false;
	const char *kend = skip_string(p, end);
	const char *v = skip_gap(kend, end);
	if (kend - p < 2 || v == end || *v != ':') {
		it->p = end;
		return false;
	}
	v = skip_gap(v + 1, end);
	const char *vend = skip_value(v, end);
	name->p = p;
	name->n = (size_t) (kend - p);
	value->p = v;
	value->n = (size_t) (vend - v);
	p = skip_gap(vend, end);
	if (p < end && *p == ',')
		p = skip_gap(p + 1, end);
	else
		p = end; /* '}' or junk: no more members */
	it->p = p;
	return true;
}

jscan_val
jscan_get(jscan_val obj, const char *name)
{
	jscan_val found = { NULL, 0 }, k, v;
	jscan_iter it;
	size_t nn = strlen(name);
	jscan_members_init(&it, obj);
	/* Keep looking: a later member of the same name wins. */
	while (jscan_member_next(&it, &k, &v))
		if (string_is(k.p, k.n, name, nn))
			found = v;
	return found;
}

void
jscan_iter_init(jscan_iter *it, jscan_val arr)
{
	iter_open(it, arr, JSCAN_ARRAY);
}

bool
jscan_next(jscan_iter *it, jscan_val *elem)
{
	const char *p = it->p;
	if (p == it->end || *p == ']')
		return false;
	const char *vend = skip_value(p, it->end);
	if (vend == p)
		return false;
	elem->p = p;
	elem->n = (size_t) (vend - p);
	p = skip_gap(vend, it->end);
	if (p < it->end && *p == ',')
		p = skip_gap(p + 1, it->end);
	else
		p = it->end; /* ']' or junk: no more elements */
	it->p = p;
	return true;
}

bool
jscan_int(jscan_val v, long long *out)
{
	if (jscan_kind_of(v) != JSCAN_NUMBER)
		return false;
	return parse_int(v.p, v.p + v.n, out);
}
