/*
 * number.c — parse, print, compare and key-encode DynamoDB numbers.
 *
 * Numbers stay decimal from the request text to the disk: sign, up to 38
 * digits and an exponent, checked against DynamoDB's range when parsed.
 * Nothing here rounds; a number DynamoDB would reject is rejected, and
 * that includes the results of addition and subtraction. Read number.h
 * first; keyenc.c is the main user of number_encode, expr_update.c of
 * number_add.
 */
#include "number.h"

#include <assert.h>
#include <string.h>

/*
 * DynamoDB's messages. For text that is not a number DynamoDB appends
 * ": " and the text; the caller does that (see number.h).
 */
static const char MSG_NAN[] =
    "The parameter cannot be converted to a numeric value";
static const char MSG_DIGITS[] =
    "Attempting to store more than 38 significant digits in a Number";
static const char MSG_OVERFLOW[] =
    "Number overflow. Attempting to store a number with magnitude larger "
    "than supported range";
static const char MSG_UNDERFLOW[] =
    "Number underflow. Attempting to store a number with magnitude smaller "
    "than supported range";

/*
 * Exponents in the text saturate here, far beyond any exponent that could
 * come back into range, so that "1e999999999999999999" cannot overflow an
 * integer on its way to the overflow error.
 */
#define EXP_CLAMP 1000000000000LL

/*
 * Encoding: a tag that orders negatives < zero < positives, then for
 * non-zero numbers one exponent byte (exp - NUMBER_EXP_MIN, which fits
 * 0..255 exactly), the digits two per byte as 1 + 10 * hi + lo (1..100; an
 * odd count is padded with a 0 digit, which normalised digits never end
 * in), and a 0 byte that ends the digits and sorts before any digit pair.
 * For negatives every byte after the tag is complemented, which reverses
 * their order; the terminator becomes 0xFF, still distinct from digits.
 */
#define TAG_NEG 0x01
#define TAG_ZERO 0x02
#define TAG_POS 0x03
#define END 0x00

static bool
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static void
set_zero(number *n)
{
	memset(n, 0, sizeof(*n));
}

/*
 * The digits of the text, numbered 0.. across the integer part [a0, a1)
 * and the fraction part [b0, b1), skipping the point between them.
 */
struct digits {
	const char *s;
	size_t a0, a1, b0, b1;
};

static size_t
digits_count(const struct digits *t)
{
	return (t->a1 - t->a0) + (t->b1 - t->b0);
}

static int
digits_at(const struct digits *t, size_t pos)
{
	size_t na = t->a1 - t->a0;

	if (pos < na)
		return t->s[t->a0 + pos] - '0';
	return t->s[t->b0 + pos - na] - '0';
}

kv_err
number_parse(const char *s, size_t len, number *out, const char **msg)
{
	struct digits t = { .s = s };
	size_t i = 0, pos, first, last, count;
	long long e = 0, exp;
	bool neg = false;

	*msg = NULL;
	if (i < len && (s[i] == '+' || s[i] == '-'))
		neg = s[i++] == '-';
	t.a0 = i;
	while (i < len && is_digit(s[i]))
		i++;
	t.a1 = t.b0 = t.b1 = i;
	if (i < len && s[i] == '.') {
		t.b0 = ++i;
		while (i < len && is_digit(s[i]))
			i++;
		t.b1 = i;
	}
	count = digits_count(&t);
	if (count == 0)
		goto nan; /* no digit at all: "", ".", "-", "e5" */
	if (i < len && (s[i] == 'e' || s[i] == 'E')) {
		bool eneg = false;

		i++;
		if (i < len && (s[i] == '+' || s[i] == '-'))
			eneg = s[i++] == '-';
		if (i == len || !is_digit(s[i]))
			goto nan;
		while (i < len && is_digit(s[i])) {
			if (e < EXP_CLAMP)
				e = e * 10 + (s[i] - '0');
			i++;
		}
		if (eneg)
			e = -e;
	}
	if (i != len)
		goto nan;

	for (first = 0; first < count && digits_at(&t, first) == 0; first++)
		;
	if (first == count) {
		set_zero(out); /* "0", "-0.000", "0e99999" */
		return KV_OK;
	}
	for (last = count - 1; digits_at(&t, last) == 0; last--)
		;

	/*
	 * value = 0.d[first..last] x 10^exp. Text lengths are far below
	 * EXP_CLAMP, so this cannot overflow.
	 */
	exp = (long long) (t.a1 - t.a0) - (long long) first + e;
	if (exp > NUMBER_EXP_MAX) {
		*msg = MSG_OVERFLOW;
		return KV_EINVAL;
	}
	if (exp < NUMBER_EXP_MIN) {
		*msg = MSG_UNDERFLOW;
		return KV_EINVAL;
	}
	if (last - first + 1 > NUMBER_DIGITS) {
		*msg = MSG_DIGITS;
		return KV_EINVAL;
	}

	set_zero(out);
	out->neg = neg;
	out->exp = (int16_t) exp;
	for (pos = first; pos <= last; pos++)
		out->d[out->ndigits++] = (uint8_t) digits_at(&t, pos);
	return KV_OK;

nan:
	*msg = MSG_NAN;
	return KV_EINVAL;
}

size_t
number_format(const number *n, char *buf)
{
	size_t k = 0;
	int i;

	if (n->ndigits == 0) {
		buf[0] = '0';
		buf[1] = '\0';
		return 1;
	}
	if (n->neg)
		buf[k++] = '-';
	if (n->exp <= 0) {
		buf[k++] = '0';
		buf[k++] = '.';
		for (i = n->exp; i < 0; i++)
			buf[k++] = '0';
		for (i = 0; i < n->ndigits; i++)
			buf[k++] = (char) ('0' + n->d[i]);
	} else {
		for (i = 0; i < n->ndigits || i < n->exp; i++) {
			int d = i < n->ndigits ? n->d[i] : 0;

			if (i == n->exp)
				buf[k++] = '.';
			buf[k++] = (char) ('0' + d);
		}
	}
	assert(k < NUMBER_FMT_MAX);
	buf[k] = '\0';
	return k;
}

static int
sign_of(const number *n)
{
	if (n->ndigits == 0)
		return 0;
	return n->neg ? -1 : 1;
}

int
number_cmp(const number *a, const number *b)
{
	int sa = sign_of(a), sb = sign_of(b);
	int mag = 0, i;

	if (sa != sb)
		return sa < sb ? -1 : 1;
	if (sa == 0)
		return 0;
	if (a->exp != b->exp) {
		mag = a->exp < b->exp ? -1 : 1;
	} else {
		for (i = 0; i < a->ndigits && i < b->ndigits; i++) {
			if (a->d[i] != b->d[i]) {
				mag = a->d[i] < b->d[i] ? -1 : 1;
				break;
			}
		}
		if (mag == 0 && a->ndigits != b->ndigits)
			mag = a->ndigits < b->ndigits ? -1 : 1;
	}
	return sa * mag;
}

size_t
number_encode(const number *n, uint8_t *buf)
{
	uint8_t flip;
	size_t k = 0;
	int i;

	if (n->ndigits == 0) {
		buf[0] = TAG_ZERO;
		return 1;
	}
	assert(n->ndigits <= NUMBER_DIGITS && n->d[0] != 0);
	assert(n->exp >= NUMBER_EXP_MIN && n->exp <= NUMBER_EXP_MAX);
	flip = n->neg ? 0xFF : 0x00;
	buf[k++] = n->neg ? TAG_NEG : TAG_POS;
	buf[k++] = (uint8_t) ((n->exp - NUMBER_EXP_MIN) ^ flip);
	for (i = 0; i < n->ndigits; i += 2) {
		int lo = i + 1 < n->ndigits ? n->d[i + 1] : 0;

		buf[k++] = (uint8_t) ((1 + 10 * n->d[i] + lo) ^ flip);
	}
	buf[k++] = (uint8_t) (END ^ flip);
	assert(k <= NUMBER_ENC_MAX);
	return k;
}

kv_err
number_decode(const uint8_t *buf, size_t len, number *out, size_t *used)
{
	uint8_t flip;
	size_t k = 0;
	number n;

	set_zero(&n);
	if (len < 1)
		return KV_CORRUPT;
	switch (buf[k++]) {
	case TAG_ZERO:
		*out = n;
		*used = k;
		return KV_OK;
	case TAG_NEG:
		flip = 0xFF;
		break;
	case TAG_POS:
		flip = 0x00;
		break;
	default:
		return KV_CORRUPT;
	}
	n.neg = flip != 0;
	if (k >= len)
		return KV_CORRUPT;
	/* Every byte is an exponent in range: 0..255 is -129..126. */
	n.exp = (int16_t) ((buf[k++] ^ flip) + NUMBER_EXP_MIN);
	for (;;) {
		uint8_t b;

		if (k >= len)
			return KV_CORRUPT;
		b = buf[k++] ^ flip;
		if (b == END)
			break;
		if (b > 100 || n.ndigits >= NUMBER_DIGITS)
			return KV_CORRUPT;
		b -= 1;
		n.d[n.ndigits++] = b / 10;
		n.d[n.ndigits++] = b % 10;
	}
	/* Drop the padding digit of an odd count; no other zero may end. */
	if (n.ndigits > 0 && n.d[n.ndigits - 1] == 0)
		n.ndigits--;
	if (n.ndigits == 0 || n.d[0] == 0 || n.d[n.ndigits - 1] == 0)
		return KV_CORRUPT;
	*out = n;
	*used = k;
	return KV_OK;
}

/*
 * Arithmetic lays both operands out on one fixed-point grid of decimal
 * places. Place p has weight 10^p; digit i of a normalised number sits
 * at place exp - 1 - i. The lowest place any operand can use is
 * NUMBER_EXP_MIN - NUMBER_DIGITS and the highest NUMBER_EXP_MAX - 1, plus
 * one place for a carry, so GRID places always suffice.
 */
#define GRID_LOW (NUMBER_EXP_MIN - NUMBER_DIGITS)
#define GRID (NUMBER_EXP_MAX - GRID_LOW + 2)

static void
to_grid(const number *n, uint8_t *g)
{
	int i;

	for (i = 0; i < n->ndigits; i++)
		g[n->exp - 1 - i - GRID_LOW] += n->d[i];
}

/* grid_cmp compares two magnitudes laid out on the grid. */
static int
grid_cmp(const uint8_t *x, const uint8_t *y)
{
	int p;

	for (p = GRID - 1; p >= 0; p--) {
		if (x[p] != y[p])
			return x[p] < y[p] ? -1 : 1;
	}
	return 0;
}

/*
 * from_grid normalises the magnitude in g (digits 0..9 at each place)
 * into *out with sign neg, checking DynamoDB's range and precision.
 */
static kv_err
from_grid(const uint8_t *g, bool neg, number *out, const char **msg)
{
	int hi, lo, p;
	number n;

	for (hi = GRID - 1; hi >= 0 && g[hi] == 0; hi--)
		;
	if (hi < 0) {
		set_zero(out);
		return KV_OK;
	}
	for (lo = 0; g[lo] == 0; lo++)
		;
	/* The leading digit is at place hi: the value is 0.d x 10^(hi+1). */
	if (hi + GRID_LOW + 1 > NUMBER_EXP_MAX) {
		*msg = MSG_OVERFLOW;
		return KV_EINVAL;
	}
	if (hi + GRID_LOW + 1 < NUMBER_EXP_MIN) {
		*msg = MSG_UNDERFLOW;
		return KV_EINVAL;
	}
	if (hi - lo + 1 > NUMBER_DIGITS) {
		*msg = MSG_OVERFLOW; /* sic: DynamoDB's message here */
		return KV_EINVAL;
	}
	set_zero(&n);
	n.neg = neg;
	n.exp = (int16_t) (hi + GRID_LOW + 1);
	for (p = hi; p >= lo; p--)
		n.d[n.ndigits++] = g[p];
	*out = n;
	return KV_OK;
}

/* add_signed sets *out to a + b, or to a - b when flip is set. */
static kv_err
add_signed(const number *a, const number *b, bool flip, number *out,
    const char **msg)
{
	uint8_t x[GRID], y[GRID], r[GRID];
	const uint8_t *big, *small;
	bool aneg = a->neg, bneg = b->neg != flip;
	int p, carry = 0, c;

	*msg = NULL;
	if (b->ndigits == 0) {
		*out = *a;
		return KV_OK;
	}
	if (a->ndigits == 0) {
		*out = *b;
		out->neg = bneg;
		return KV_OK;
	}
	memset(x, 0, sizeof(x));
	memset(y, 0, sizeof(y));
	memset(r, 0, sizeof(r));
	to_grid(a, x);
	to_grid(b, y);
	if (aneg == bneg) {
		for (p = 0; p < GRID; p++) {
			int s = x[p] + y[p] + carry;

			r[p] = (uint8_t) (s % 10);
			carry = s / 10;
		}
		assert(carry == 0);
		return from_grid(r, aneg, out, msg);
	}
	/* Opposite signs: subtract the smaller magnitude from the larger. */
	c = grid_cmp(x, y);
	if (c == 0) {
		set_zero(out);
		return KV_OK;
	}
	big = c > 0 ? x : y;
	small = c > 0 ? y : x;
	for (p = 0; p < GRID; p++) {
		int d = big[p] - small[p] - carry;

		carry = d < 0;
		r[p] = (uint8_t) (d + 10 * carry);
	}
	assert(carry == 0);
	return from_grid(r, c > 0 ? aneg : bneg, out, msg);
}

kv_err
number_add(const number *a, const number *b, number *out, const char **msg)
{
	return add_signed(a, b, false, out, msg);
}

kv_err
number_sub(const number *a, const number *b, number *out, const char **msg)
{
	return add_signed(a, b, true, out, msg);
}

void
number_from_u64(uint64_t v, number *out)
{
	uint8_t rev[20];
	int k = 0;

	set_zero(out);
	while (v > 0) {
		rev[k++] = (uint8_t) (v % 10);
		v /= 10;
	}
	out->exp = (int16_t) k;
	while (k > 0 && rev[0] == 0) {
		/* Trailing zeros of the integer are not stored as digits. */
		memmove(rev, rev + 1, (size_t) --k);
	}
	for (; k > 0; k--)
		out->d[out->ndigits++] = rev[k - 1];
}
