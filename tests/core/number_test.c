/*
 * number_test.c — tests of core/number.c: parsing with DynamoDB's exact
 * messages, canonical text, comparison, and the order-preserving encoding.
 *
 * The property tests draw thousands of numbers from a seeded generator and
 * check the encoding against an oracle that lays both numbers out on one
 * fixed-point grid, independent of number_cmp.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "number.h"

#define MSG_NAN "The parameter cannot be converted to a numeric value"
#define MSG_DIGITS                                                            \
	"Attempting to store more than 38 significant digits in a Number"
#define MSG_OVERFLOW                                                          \
	"Number overflow. Attempting to store a number with magnitude "       \
	"larger than supported range"
#define MSG_UNDERFLOW                                                         \
	"Number underflow. Attempting to store a number with magnitude "      \
	"smaller than supported range"

static number
parse_ok(const char *s)
{
	const char *msg = NULL;
	number n;
	kv_err rc = number_parse(s, strlen(s), &n, &msg);

	cr_assert_eq(rc, KV_OK, "parse \"%s\": %s (%s)", s, kv_err_name(rc),
	    msg ? msg : "");
	cr_assert_null(msg);
	return n;
}

static void
assert_same(const number *a, const number *b)
{
	cr_assert_eq(a->neg, b->neg);
	cr_assert_eq(a->ndigits, b->ndigits);
	cr_assert_eq(a->exp, b->exp);
	cr_assert_arr_eq(a->d, b->d, a->ndigits);
}

static int
sgn(long x)
{
	return (x > 0) - (x < 0);
}

/* memcmp order with a shorter prefix first, as RocksDB compares keys. */
static int
bytes_cmp(const uint8_t *a, size_t la, const uint8_t *b, size_t lb)
{
	int c = memcmp(a, b, la < lb ? la : lb);

	if (c != 0)
		return sgn(c);
	return la < lb ? -1 : la > lb;
}

/* ---- parsing ------------------------------------------------------- */

/*
 * Criterion runs each test in a new process where pointers into the
 * parent's data may be invalid, so parameters hold their text inline.
 */
struct valid_case {
	char in[64];
	char out[NUMBER_FMT_MAX];
};

ParameterizedTestParameters(number, parse_accepts_and_canonicalises)
{
	static struct valid_case cases[] = {
		{ "0", "0" },
		{ "-0", "0" },
		{ "+0", "0" },
		{ "00000", "0" },
		{ "0.000", "0" },
		{ ".0", "0" },
		{ "0.", "0" },
		{ "-0.0e-5", "0" },
		{ "0e99999", "0" },
		{ "0e-99999", "0" },
		{ "0E+999999999999999999999999", "0" },
		{ "1", "1" },
		{ "+1", "1" },
		{ "-1", "-1" },
		{ "007", "7" },
		{ "1E+2", "100" },
		{ "1e2", "100" },
		{ "1E2", "100" },
		{ "100", "100" },
		{ "100.000", "100" },
		{ "0.10", "0.1" },
		{ ".5", "0.5" },
		{ "5.", "5" },
		{ "-.5", "-0.5" },
		{ "+.5e1", "5" },
		{ "-12.50", "-12.5" },
		{ "1.5e1", "15" },
		{ "1.5E-1", "0.15" },
		{ "123.456e-2", "1.23456" },
		{ "12345e-2", "123.45" },
		{ "12345e-5", "0.12345" },
		{ "12345e-7", "0.0012345" },
		{ "0.000123e3", "0.123" },
		{ "0.000123e+7", "1230" },
		{ "1e-0", "1" },
		{ "1e+00000000000000000000000000000000000002", "100" },
		{ "1.000000000000000000000000000000000000000000000", "1" },
		{ "000000000000000000000000000000000000000000001", "1" },
		{ "0.0000000000000000000000000000000000000000001",
		    "0.0000000000000000000000000000000000000000001" },
		{ "12345678901234567890123456789012345678",
		    "12345678901234567890123456789012345678" },
		{ "-1.2345678901234567890123456789012345678",
		    "-1.2345678901234567890123456789012345678" },
		{ "1234567890123456789012345678901234567800000",
		    "1234567890123456789012345678901234567800000" },
		{ "0.10000000000000000000000000000000000001",
		    "0.10000000000000000000000000000000000001" },
		{ "3.14159265358979323846264338327950288410000",
		    "3.1415926535897932384626433832795028841" },
		{ "0.1e-129",
		    "0.000000000000000000000000000000000000000000000000000000"
		    "00000000000000000000000000000000000000000000000000000000"
		    "00000000000000000001" },
	};

	return cr_make_param_array(
	    struct valid_case, cases, sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(
    struct valid_case *c, number, parse_accepts_and_canonicalises)
{
	char buf[NUMBER_FMT_MAX];
	number n = parse_ok(c->in);
	size_t len = number_format(&n, buf);

	cr_assert_str_eq(
	    buf, c->out, "\"%s\" -> \"%s\", want \"%s\"", c->in, buf, c->out);
	cr_assert_eq(len, strlen(c->out));
}

enum want_msg { W_NAN, W_DIGITS, W_OVERFLOW, W_UNDERFLOW };

static const char *const want_msgs[] = {
	[W_NAN] = MSG_NAN,
	[W_DIGITS] = MSG_DIGITS,
	[W_OVERFLOW] = MSG_OVERFLOW,
	[W_UNDERFLOW] = MSG_UNDERFLOW,
};

struct invalid_case {
	char in[64];
	enum want_msg msg;
};

ParameterizedTestParameters(number, parse_rejects_with_dynamodb_message)
{
	static struct invalid_case cases[] = {
		/* not a number */
		{ "", W_NAN },
		{ " ", W_NAN },
		{ " 1", W_NAN },
		{ "1 ", W_NAN },
		{ "\t1", W_NAN },
		{ "1\n", W_NAN },
		{ "0x10", W_NAN },
		{ "NaN", W_NAN },
		{ "nan", W_NAN },
		{ "Infinity", W_NAN },
		{ "-Infinity", W_NAN },
		{ "inf", W_NAN },
		{ ".", W_NAN },
		{ "-", W_NAN },
		{ "+", W_NAN },
		{ "-.", W_NAN },
		{ "1e", W_NAN },
		{ "1E", W_NAN },
		{ "1e+", W_NAN },
		{ "1e-", W_NAN },
		{ "e5", W_NAN },
		{ ".e1", W_NAN },
		{ "1.2.3", W_NAN },
		{ "1..2", W_NAN },
		{ "1e5.5", W_NAN },
		{ "1e5e5", W_NAN },
		{ "1e 5", W_NAN },
		{ "--1", W_NAN },
		{ "+-1", W_NAN },
		{ "1-", W_NAN },
		{ "1,5", W_NAN },
		{ "1_000", W_NAN },
		{ "1d", W_NAN },
		{ "1f", W_NAN },
		{ "1L", W_NAN },
		{ "abc", W_NAN },
		{ "\"42.0\"", W_NAN },
		/* significant digits */
		{ "123456789012345678901234567890123456789", W_DIGITS },
		{ "-1.23456789012345678901234567890123456789", W_DIGITS },
		{ "1.00000000000000000000000000000000000001", W_DIGITS },
		{ "0.000123456789012345678901234567890123456789", W_DIGITS },
		{ "100000000000000000000000000000000000000.5", W_DIGITS },
		/* range: 1E-130 .. 9.99...E+125 */
		{ "1E+126", W_OVERFLOW },
		{ "-1E+126", W_OVERFLOW },
		{ "10E+125", W_OVERFLOW },
		{ "11e125", W_OVERFLOW },
		{ "0.1e127", W_OVERFLOW },
		{ "1e999999999999", W_OVERFLOW },
		{ "1e2147483647", W_OVERFLOW },
		{ "1e4294967296", W_OVERFLOW },
		{ "-1e99999999999999999999999999999999999999", W_OVERFLOW },
		{ "1E-131", W_UNDERFLOW },
		{ "-1E-131", W_UNDERFLOW },
		{ "0.9e-130", W_UNDERFLOW },
		{ "0.1e-130", W_UNDERFLOW },
		{ "1e-999999999999", W_UNDERFLOW },
		{ "1e-2147483648", W_UNDERFLOW },
		{ "-1e-99999999999999999999999999999999999999", W_UNDERFLOW },
		/* range is checked before digits, as DynamoDB does */
		{ "123456789012345678901234567890123456789e200", W_OVERFLOW },
		{ "123456789012345678901234567890123456789e-200",
		    W_UNDERFLOW },
	};

	return cr_make_param_array(
	    struct invalid_case, cases, sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(
    struct invalid_case *c, number, parse_rejects_with_dynamodb_message)
{
	const char *msg = NULL;
	number n;
	kv_err rc = number_parse(c->in, strlen(c->in), &n, &msg);

	cr_assert_eq(rc, KV_EINVAL, "\"%s\": %s", c->in, kv_err_name(rc));
	cr_assert_not_null(msg);
	cr_assert_str_eq(msg, want_msgs[c->msg], "\"%s\"", c->in);
}

Test(number, parse_reads_only_len_bytes)
{
	const char *msg = NULL;
	char buf[NUMBER_FMT_MAX];
	number n;

	/* The text need not be NUL-terminated; only s[0..len) counts. */
	cr_assert_eq(number_parse("12345", 3, &n, &msg), KV_OK);
	number_format(&n, buf);
	cr_assert_str_eq(buf, "123");
	cr_assert_eq(number_parse("1e", 1, &n, &msg), KV_OK);
	/* An embedded NUL is not part of a number. */
	cr_assert_eq(number_parse("1\0", 2, &n, &msg), KV_EINVAL);
	cr_assert_str_eq(msg, MSG_NAN);
	cr_assert_eq(number_parse(NULL, 0, &n, &msg), KV_EINVAL);
	cr_assert_str_eq(msg, MSG_NAN);
}

Test(number, parse_normalises_zero)
{
	number n = parse_ok("-0.000e7");

	cr_assert_eq(n.neg, false);
	cr_assert_eq(n.ndigits, 0);
	cr_assert_eq(n.exp, 0);
}

Test(number, parse_fills_digits_and_exponent)
{
	number n = parse_ok("-0.0012500e3");

	/* -1.25 = -0.125 x 10^1 */
	cr_assert_eq(n.neg, true);
	cr_assert_eq(n.ndigits, 3);
	cr_assert_eq(n.exp, 1);
	cr_assert_eq(n.d[0], 1);
	cr_assert_eq(n.d[1], 2);
	cr_assert_eq(n.d[2], 5);
}

static void
repeat(char *p, char c, int n)
{
	memset(p, c, (size_t) n);
	p[n] = '\0';
}

Test(number, range_limits_are_exact_at_both_ends)
{
	static const char *const signs[] = { "", "-" };
	char want[NUMBER_FMT_MAX], buf[NUMBER_FMT_MAX];
	const char *msg;
	number n;
	int s;

	for (s = 0; s < 2; s++) {
		char in[128];

		/* Largest: 38 nines then 88 zeros, 126 digits. */
		snprintf(in, sizeof(in), "%s9.%.*sE+125", signs[s], 37,
		    "9999999999999999999999999999999999999999");
		n = parse_ok(in);
		cr_assert_eq(n.exp, NUMBER_EXP_MAX);
		number_format(&n, buf);
		strcpy(want, signs[s]);
		repeat(want + strlen(want), '9', 38);
		repeat(want + strlen(want), '0', 88);
		cr_assert_str_eq(buf, want);
		cr_assert_eq(strlen(buf), strlen(signs[s]) + 126);

		/* Smallest: "0." then 129 zeros then 1. */
		snprintf(in, sizeof(in), "%s1E-130", signs[s]);
		n = parse_ok(in);
		cr_assert_eq(n.exp, NUMBER_EXP_MIN);
		number_format(&n, buf);
		snprintf(want, sizeof(want), "%s0.", signs[s]);
		repeat(want + strlen(want), '0', 129);
		strcat(want, "1");
		cr_assert_str_eq(buf, want);

		/* The longest text of all: smallest exponent, 38 digits. */
		snprintf(in, sizeof(in),
		    "%s1.2345678901234567890123456789012345678E-130",
		    signs[s]);
		n = parse_ok(in);
		cr_assert_lt(number_format(&n, buf), NUMBER_FMT_MAX);
		cr_assert_eq(strlen(buf), strlen(signs[s]) + 2 + 129 + 38);

		/* One step beyond each end. */
		snprintf(in, sizeof(in), "%s1E+126", signs[s]);
		cr_assert_eq(
		    number_parse(in, strlen(in), &n, &msg), KV_EINVAL);
		cr_assert_str_eq(msg, MSG_OVERFLOW);
		snprintf(in, sizeof(in), "%s1E-131", signs[s]);
		cr_assert_eq(
		    number_parse(in, strlen(in), &n, &msg), KV_EINVAL);
		cr_assert_str_eq(msg, MSG_UNDERFLOW);

		/* Its canonical text parses back to the same number. */
		parse_ok(want);
	}
}

Test(number, long_text_of_zeros_is_not_significant)
{
	static char in[20000];
	char buf[NUMBER_FMT_MAX];
	number n;

	/* 1 followed by a point and ten thousand zeros */
	in[0] = '1';
	in[1] = '.';
	repeat(in + 2, '0', 10000);
	n = parse_ok(in);
	number_format(&n, buf);
	cr_assert_str_eq(buf, "1");

	/* "0." then 129 zeros then "1" then many zeros: still 1E-130 */
	strcpy(in, "0.");
	repeat(in + 2, '0', 129);
	in[131] = '1';
	repeat(in + 132, '0', 5000);
	n = parse_ok(in);
	cr_assert_eq(n.exp, NUMBER_EXP_MIN);
	cr_assert_eq(n.ndigits, 1);
}

/* ---- comparison ---------------------------------------------------- */

struct cmp_case {
	char a[64];
	char b[64];
	int want;
};

ParameterizedTestParameters(number, cmp_orders_numerically)
{
	static struct cmp_case cases[] = {
		{ "1E+2", "100", 0 },
		{ "100", "100.000", 0 },
		{ "0.1", "0.10000000000000000000000000000000000001", -1 },
		{ "0.1", "0.10", 0 },
		{ "0", "-0", 0 },
		{ "0", "0e50", 0 },
		{ "-1", "0", -1 },
		{ "0", "1E-130", -1 },
		{ "-1E-130", "0", -1 },
		{ "-1", "-0.5", -1 },
		{ "-0.5", "-0.4999999999999999999999999999999999999", -1 },
		{ "-100", "-99", -1 },
		{ "-100", "-1E+2", 0 },
		{ "99", "100", -1 },
		{ "0.999", "1", -1 },
		{ "1", "1.0000000000000000000000000000000000001", -1 },
		{ "-1", "-1.0000000000000000000000000000000000001", 1 },
		{ "1E-130", "9.9999999999999999999999999999999999999E+125",
		    -1 },
		{ "-9.9999999999999999999999999999999999999E+125", "-1E-130",
		    -1 },
		{ "12", "1.2e1", 0 },
		{ "12", "120e-1", 0 },
		{ "19", "2", 1 },
		{ "-19", "-2", -1 },
		{ "5", "-5", 1 },
	};

	return cr_make_param_array(
	    struct cmp_case, cases, sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct cmp_case *c, number, cmp_orders_numerically)
{
	number a = parse_ok(c->a), b = parse_ok(c->b);
	uint8_t ea[NUMBER_ENC_MAX], eb[NUMBER_ENC_MAX];
	size_t la = number_encode(&a, ea), lb = number_encode(&b, eb);

	cr_assert_eq(sgn(number_cmp(&a, &b)), c->want, "%s vs %s", c->a, c->b);
	cr_assert_eq(
	    sgn(number_cmp(&b, &a)), -c->want, "%s vs %s", c->b, c->a);
	cr_assert_eq(
	    bytes_cmp(ea, la, eb, lb), c->want, "enc %s vs %s", c->a, c->b);
}

/* ---- encoding ------------------------------------------------------ */

Test(number, encode_zero_is_one_byte_between_signs)
{
	uint8_t z[NUMBER_ENC_MAX], p[NUMBER_ENC_MAX], m[NUMBER_ENC_MAX];
	number zero = parse_ok("0"), one = parse_ok("1"), neg = parse_ok("-1");

	cr_assert_eq(number_encode(&zero, z), 1);
	number_encode(&one, p);
	number_encode(&neg, m);
	cr_assert_lt(m[0], z[0]);
	cr_assert_lt(z[0], p[0]);
}

Test(number, encode_fits_max)
{
	static const char *const longest[] = {
		"-1.2345678901234567890123456789012345678E-130",
		"9.9999999999999999999999999999999999999E+125",
		"-9.9999999999999999999999999999999999999E+125",
		"1.1111111111111111111111111111111111111",
	};
	uint8_t buf[NUMBER_ENC_MAX];
	size_t i;

	for (i = 0; i < sizeof(longest) / sizeof(longest[0]); i++) {
		number n = parse_ok(longest[i]);

		/* tag, exponent, 19 digit pairs, terminator */
		cr_assert_eq(number_encode(&n, buf), 22, "%s", longest[i]);
	}
}

Test(number, decode_stops_at_its_own_end)
{
	uint8_t buf[NUMBER_ENC_MAX + 3];
	number n = parse_ok("-12.5"), out;
	size_t len = number_encode(&n, buf), used = 0;

	memcpy(buf + len, "\x00\xff\x01", 3);
	cr_assert_eq(number_decode(buf, len + 3, &out, &used), KV_OK);
	cr_assert_eq(used, len);
	assert_same(&out, &n);
}

Test(number, decode_rejects_every_truncation)
{
	static const char *const texts[] = { "0", "7", "-7", "12.5",
		"-0.0012345678901234567890123456789012345678", "1E+125" };
	size_t i, cut, len, used;
	uint8_t enc[NUMBER_ENC_MAX];
	number n, out;

	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		n = parse_ok(texts[i]);
		len = number_encode(&n, enc);
		for (cut = 0; cut < len; cut++) {
			/* exact-size heap copy: ASan sees any over-read */
			uint8_t *p = malloc(cut ? cut : 1);

			memcpy(p, enc, cut);
			cr_assert_eq(number_decode(p, cut, &out, &used),
			    KV_CORRUPT, "%s cut at %zu", texts[i], cut);
			free(p);
		}
	}
}

struct corrupt_case {
	char name[40];
	uint8_t bytes[24];
	size_t len;
};

ParameterizedTestParameters(number, decode_rejects_malformed_bytes)
{
	static struct corrupt_case cases[] = {
		{ "unknown tag 0", { 0x00 }, 1 },
		{ "unknown tag 4", { 0x04, 0x81, 0x0b, 0x00 }, 4 },
		{ "unknown tag ff", { 0xff }, 1 },
		{ "positive without digits", { 0x03, 0x81, 0x00 }, 3 },
		{ "negative without digits", { 0x01, 0x7e, 0xff }, 3 },
		{ "digit pair above 99", { 0x03, 0x81, 0x65, 0x00 }, 4 },
		{ "digit pair 255", { 0x03, 0x81, 0xff, 0x00 }, 4 },
		{ "leading zero digit", { 0x03, 0x81, 0x02, 0x00 }, 4 },
		{ "trailing zero pair", { 0x03, 0x81, 0x0c, 0x01, 0x00 }, 5 },
		{ "negative trailing zero pair",
		    { 0x01, 0x7e, 0xf3, 0xfe, 0xff }, 5 },
		{ "negative with positive end", { 0x01, 0x7e, 0xf4, 0x00 },
		    4 },
		{ "twenty digit pairs",
		    { 0x03, 0x81, 0x0c, 0x0c, 0x0c, 0x0c, 0x0c, 0x0c, 0x0c,
		        0x0c, 0x0c, 0x0c, 0x0c, 0x0c, 0x0c, 0x0c, 0x0c, 0x0c,
		        0x0c, 0x0c, 0x0c, 0x0c, 0x00 },
		    23 },
	};

	return cr_make_param_array(
	    struct corrupt_case, cases, sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(
    struct corrupt_case *c, number, decode_rejects_malformed_bytes)
{
	number out;
	size_t used = 0;

	cr_assert_eq(number_decode(c->bytes, c->len, &out, &used), KV_CORRUPT,
	    "%s", c->name);
}

Test(number, decode_accepts_every_exponent_byte)
{
	uint8_t buf[4] = { 0x03, 0, 0x0b, 0x00 }; /* 0.1 x 10^e */
	number out;
	size_t used;
	int b;

	for (b = 0; b < 256; b++) {
		buf[1] = (uint8_t) b;
		cr_assert_eq(number_decode(buf, 4, &out, &used), KV_OK);
		cr_assert_eq(out.exp, NUMBER_EXP_MIN + b);
		cr_assert_eq(used, 4);
	}
}

/* ---- properties over random numbers -------------------------------- */

static uint64_t rng_state;

static uint64_t
rng(void)
{
	/* splitmix64 */
	uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

static int
rng_below(int n)
{
	return (int) (rng() % (uint64_t) n);
}

static void
normalise(number *n)
{
	while (n->ndigits > 0 && n->d[n->ndigits - 1] == 0)
		n->ndigits--;
	if (n->ndigits == 0)
		memset(n, 0, sizeof(*n));
}

static number
random_number(void)
{
	number n;
	int i, exp_lo, exp_hi;

	memset(&n, 0, sizeof(n));
	if (rng_below(20) == 0)
		return n;
	n.neg = rng_below(2);
	/* Few digits and small digit sets make ties and prefixes common. */
	n.ndigits =
	    (uint8_t) (1 + rng_below(rng_below(4) ? 6 : NUMBER_DIGITS));
	for (i = 0; i < n.ndigits; i++)
		n.d[i] = (uint8_t) (rng_below(3) ? rng_below(3) * 4 + 1
		                                 : rng_below(10));
	n.d[0] = (uint8_t) (1 + rng_below(9));
	/* Mostly near each other, sometimes anywhere in range. */
	exp_lo = rng_below(4) ? -3 : NUMBER_EXP_MIN;
	exp_hi = exp_lo == -3 ? 3 : NUMBER_EXP_MAX;
	n.exp = (int16_t) (exp_lo + rng_below(exp_hi - exp_lo + 1));
	normalise(&n);
	return n;
}

/* A neighbour of n: one digit more or less, a last digit off by one. */
static number
near_number(const number *src)
{
	number n = *src;

	if (n.ndigits == 0)
		return random_number();
	switch (rng_below(5)) {
	case 0:
		if (n.ndigits < NUMBER_DIGITS)
			n.d[n.ndigits++] = (uint8_t) (1 + rng_below(9));
		break;
	case 1:
		if (n.ndigits > 1)
			n.ndigits--;
		break;
	case 2:
		if (n.d[n.ndigits - 1] < 9)
			n.d[n.ndigits - 1]++;
		break;
	case 3:
		n.d[n.ndigits - 1]--;
		break;
	default:
		n.neg = !n.neg;
		break;
	}
	normalise(&n);
	return n;
}

/*
 * The oracle: the digit of 10^p sits at index 125 - p, so two magnitudes
 * compare as two byte strings. Leading digits span 10^125 .. 10^-130 and
 * the 37 digits after one as low as 10^-167.
 */
struct grid {
	int sign;
	uint8_t at[125 + 167 + 1];
};

static void
to_grid(const number *n, struct grid *g)
{
	int i;

	memset(g, 0, sizeof(*g));
	g->sign = n->ndigits == 0 ? 0 : n->neg ? -1 : 1;
	for (i = 0; i < n->ndigits; i++)
		g->at[125 - (n->exp - 1 - i)] = n->d[i];
}

static int
grid_cmp(const struct grid *a, const struct grid *b)
{
	if (a->sign != b->sign)
		return a->sign < b->sign ? -1 : 1;
	return a->sign * sgn(memcmp(a->at, b->at, sizeof(a->at)));
}

#define NPROP 3000

struct sample {
	number n;
	struct grid g;
	uint8_t enc[NUMBER_ENC_MAX];
	size_t len;
};

static struct sample *
make_samples(uint64_t seed)
{
	struct sample *s = calloc(NPROP, sizeof(*s));
	int i;

	cr_assert_not_null(s);
	rng_state = seed;
	for (i = 0; i < NPROP; i++) {
		s[i].n = i > 0 && rng_below(3) == 0 ? near_number(&s[i - 1].n)
		                                    : random_number();
		to_grid(&s[i].n, &s[i].g);
		s[i].len = number_encode(&s[i].n, s[i].enc);
		cr_assert_leq(s[i].len, NUMBER_ENC_MAX);
	}
	return s;
}

Test(number, property_encoding_order_equals_numeric_order)
{
	struct sample *s = make_samples(0x6b76636f7265ULL);
	int i, j, want;

	for (i = 0; i < NPROP; i++) {
		for (j = 0; j < NPROP; j++) {
			const struct sample *a = &s[i], *b = &s[j];
			size_t min = a->len < b->len ? a->len : b->len;
			int got_cmp, got_enc;

			/* plain ifs: 9 million pairs */
			want = grid_cmp(&a->g, &b->g);
			got_cmp = sgn(number_cmp(&a->n, &b->n));
			got_enc = sgn(memcmp(a->enc, b->enc, min));
			if (got_cmp != want)
				cr_assert_fail(
				    "number_cmp %d vs %d: %d, want %d", i, j,
				    got_cmp, want);
			/* prefix-free: a difference inside the shorter one */
			if (got_enc != want)
				cr_assert_fail(
				    "encodings %d vs %d: %d, want %d", i, j,
				    got_enc, want);
			if (want == 0 && a->len != b->len)
				cr_assert_fail(
				    "equal %d %d, lengths differ", i, j);
		}
	}
	free(s);
}

Test(number, property_decode_inverts_encode)
{
	struct sample *s = make_samples(42);
	uint8_t buf[NUMBER_ENC_MAX + 8];
	size_t used;
	number out;
	int i;

	for (i = 0; i < NPROP; i++) {
		/* followed by other bytes, as inside a storage key */
		memcpy(buf, s[i].enc, s[i].len);
		memset(buf + s[i].len, i & 1 ? 0x00 : 0xFF, 8);
		cr_assert_eq(number_decode(buf, s[i].len + 8, &out, &used),
		    KV_OK, "sample %d", i);
		cr_assert_eq(used, s[i].len);
		assert_same(&out, &s[i].n);
		cr_assert_eq(
		    number_decode(s[i].enc, s[i].len, &out, &used), KV_OK);
		assert_same(&out, &s[i].n);
	}
	free(s);
}

Test(number, property_parse_inverts_format)
{
	struct sample *s = make_samples(7);
	char buf[NUMBER_FMT_MAX];
	const char *msg;
	size_t len;
	number out;
	int i;

	for (i = 0; i < NPROP; i++) {
		len = number_format(&s[i].n, buf);
		cr_assert_eq(len, strlen(buf));
		cr_assert_lt(len, NUMBER_FMT_MAX);
		cr_assert_eq(
		    number_parse(buf, len, &out, &msg), KV_OK, "%s", buf);
		assert_same(&out, &s[i].n);
	}
	free(s);
}

Test(number, property_scientific_text_parses_to_same_number)
{
	struct sample *s = make_samples(99);
	char buf[128];
	const char *msg;
	number out;
	int i, k, len;

	for (i = 0; i < NPROP; i++) {
		const number *n = &s[i].n;

		if (n->ndigits == 0)
			continue;
		/* "00d.ddd000e<exp-1>": padded, with a sign and an exponent */
		len = sprintf(buf, "%s00%d.",
		    n->neg             ? "-"
		        : rng_below(2) ? "+"
		                       : "",
		    n->d[0]);
		for (k = 1; k < n->ndigits; k++)
			buf[len++] = (char) ('0' + n->d[k]);
		len += sprintf(buf + len, "000%c%d", rng_below(2) ? 'e' : 'E',
		    n->exp - 1);
		cr_assert_eq(number_parse(buf, (size_t) len, &out, &msg),
		    KV_OK, "%s", buf);
		assert_same(&out, n);
	}
	free(s);
}

/* ---- arithmetic ---------------------------------------------------- */

struct arith_case {
	char a[48];
	char op;
	char b[48];
	char want[140]; /* canonical result, or "!" + want_msg index */
};

ParameterizedTestParameters(number, add_and_sub_are_exact)
{
	static struct arith_case cases[] = {
		{ "1", '+', "2", "3" },
		{ "0", '+', "0", "0" },
		{ "0", '+', "-7.5", "-7.5" },
		{ "-7.5", '+', "0", "-7.5" },
		{ "0", '-', "7.5", "-7.5" },
		{ "7.5", '-', "0", "7.5" },
		{ "9", '+', "1", "10" },
		{ "99999", '+', "1", "100000" },
		{ "0.9", '+', "0.1", "1" },
		{ "0.1", '+', "0.2", "0.3" },
		{ "1", '-', "0.001", "0.999" },
		{ "1000", '-', "1", "999" },
		{ "100", '-', "100", "0" },
		{ "-100", '+', "100", "0" },
		{ "5", '-', "7", "-2" },
		{ "-5", '-', "-7", "2" },
		{ "-5", '+', "-7", "-12" },
		{ "-5", '-', "7", "-12" },
		{ "5", '-', "-7", "12" },
		{ "-0.5", '+', "1", "0.5" },
		{ "1", '+', "10000000000000000000000",
		    "10000000000000000000001" },
		{ "10000000000000000000000", '-', "1",
		    "9999999999999999999999" },
		{ "1e20", '+', "1e-17",
		    "100000000000000000000.00000000000000001" },
		{ "12345678901234567890123456789012345677", '+', "1",
		    "12345678901234567890123456789012345678" },
		{ "99999999999999999999999999999999999999", '+', "1",
		    "100000000000000000000000000000000000000" },
		{ "1e125", '+', "8e125",
		    "90000000000000000000000000000000000000000000000000000000"
		    "00000000000000000000000000000000000000000000000000000000"
		    "00000000000000" },
		{ "1e-130", '+', "1e-130",
		    "0.000000000000000000000000000000000000000000000000000000"
		    "00000000000000000000000000000000000000000000000000000000"
		    "00000000000000000002" },
		{ "3e-130", '-', "1e-130",
		    "0.000000000000000000000000000000000000000000000000000000"
		    "00000000000000000000000000000000000000000000000000000000"
		    "00000000000000000002" },
		{ "1.5", '-', "1.5000", "0" },
		{ "123.456", '+', "-23.456", "100" },
		/* errors, checked in DynamoDB's order */
		{ "9e125", '+', "9e125", "!2" },
		{ "9e125", '-', "-9e125", "!2" },
		{ "-9e125", '-', "9e125", "!2" },
		{ "9.9999999999999999999999999999999999999e125", '+', "1e88",
		    "!2" },
		{ "1.1e-130", '-', "1e-130", "!3" },
		{ "2e-130", '-', "1.5e-130", "!3" },
		{ "-1e-130", '+', "1.5e-130", "!3" },
		{ "1e50", '+', "1", "!2" },
		{ "1e50", '-', "1", "!2" },
		{ "12345678901234567890123456789012345678", '+', "0.1", "!2" },
		{ "1e-100", '+', "1e-10", "!2" },
		{ "99999999999999999999999999999999999999", '+', "0.5", "!2" },
	};

	return cr_make_param_array(
	    struct arith_case, cases, sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct arith_case *c, number, add_and_sub_are_exact)
{
	number a = parse_ok(c->a), b = parse_ok(c->b), r, before;
	char buf[NUMBER_FMT_MAX];
	const char *msg = "unset";
	kv_err e;

	memset(&r, 0x5a, sizeof(r));
	before = r;
	e = c->op == '+' ? number_add(&a, &b, &r, &msg)
			 : number_sub(&a, &b, &r, &msg);
	if (c->want[0] == '!') {
		cr_assert_eq(e, KV_EINVAL, "%s %c %s", c->a, c->op, c->b);
		cr_expect_str_eq(msg, want_msgs[c->want[1] - '0']);
		cr_expect_eq(memcmp(&r, &before, sizeof(r)), 0,
		    "output written on error");
		return;
	}
	cr_assert_eq(e, KV_OK, "%s %c %s: %s", c->a, c->op, c->b, msg);
	cr_expect_null(msg);
	number_format(&r, buf);
	cr_expect_str_eq(buf, c->want, "%s %c %s", c->a, c->op, c->b);
	/* The result is normalised: parsing its text gives the same. */
	before = parse_ok(buf);
	assert_same(&r, &before);
}

Test(number, add_results_are_normalised)
{
	const char *pairs[][2] = { { "0.5", "0.5" }, { "1.25", "-0.25" },
		{ "1e10", "-1e10" }, { "100", "-99.9" }, { "-3", "2" } };
	size_t i;

	for (i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		number a = parse_ok(pairs[i][0]), b = parse_ok(pairs[i][1]), r;
		char buf[NUMBER_FMT_MAX];
		const char *msg;

		cr_assert_eq(number_add(&a, &b, &r, &msg), KV_OK);
		number_format(&r, buf);
		number again = parse_ok(buf);

		assert_same(&r, &again);
	}
}

Test(number, add_and_sub_agree_with_cmp)
{
	/* a - b has the sign of number_cmp(a, b); (a + b) - b == a. */
	const char *v[] = { "0", "1", "-1", "0.5", "123.456", "-9e100",
		"1e-120", "99999999999999999999999999999999999999",
		"-2.5e-3" };
	size_t i, j;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		for (j = 0; j < sizeof(v) / sizeof(v[0]); j++) {
			number a = parse_ok(v[i]), b = parse_ok(v[j]), d, s, t;
			const char *msg;
			int sign;

			if (number_sub(&a, &b, &d, &msg) != KV_OK) {
				cr_expect_str_eq(msg, MSG_OVERFLOW);
				continue; /* more than 38 digits */
			}
			sign = d.ndigits == 0 ? 0 : d.neg ? -1 : 1;
			cr_expect_eq(sign, sgn(number_cmp(&a, &b)), "%s - %s",
			    v[i], v[j]);
			if (number_add(&a, &b, &s, &msg) != KV_OK)
				continue; /* more than 38 digits */
			if (number_sub(&s, &b, &t, &msg) != KV_OK)
				continue;
			cr_expect_eq(number_cmp(&t, &a), 0, "(%s + %s) - %s",
			    v[i], v[j], v[j]);
		}
	}
}

Test(number, from_u64_is_canonical)
{
	const uint64_t v[] = { 0, 1, 9, 10, 100, 12345, 1000000,
		18446744073709551615ULL };
	const char *want[] = { "0", "1", "9", "10", "100", "12345", "1000000",
		"18446744073709551615" };
	size_t i;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		char buf[NUMBER_FMT_MAX];
		number n, again;

		number_from_u64(v[i], &n);
		number_format(&n, buf);
		cr_expect_str_eq(buf, want[i]);
		again = parse_ok(buf);
		assert_same(&n, &again);
	}
}
