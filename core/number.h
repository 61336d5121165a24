/*
 * number.h — DynamoDB numbers: exact decimals of up to 38 significant
 * digits, magnitude 1E-130 to 9.9999999999999999999999999999999999999E+125.
 *
 * A number is kept as sign, digits and exponent, never as a double, so that
 * 0.1 stays 0.1 and 1E+2 equals 100. number_encode gives bytes whose
 * memcmp order equals numeric order, for sort keys in storage keys.
 * Exact addition and subtraction (SET a = a + :n, ADD) live here too.
 */
#ifndef KV_NUMBER_H
#define KV_NUMBER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

#define NUMBER_DIGITS 38
#define NUMBER_EXP_MIN (-129) /* 1E-130 = 0.1 x 10^-129 */
#define NUMBER_EXP_MAX 126    /* 9.99..E+125 = 0.999.. x 10^126 */
/* Longest canonical text: sign, "0.", 129 zeros, 38 digits; or 126 digits. */
#define NUMBER_FMT_MAX 176
/* Longest encoding: tag, exponent, 38 digits packed, terminator. */
#define NUMBER_ENC_MAX 24

/*
 * The value is (neg ? -1 : 1) * 0.d[0]d[1]...d[ndigits-1] * 10^exp.
 * Normalised: d[0] != 0 and d[ndigits-1] != 0; zero has ndigits == 0,
 * neg == false and exp == 0. Digits are 0..9, not characters.
 */
typedef struct number {
	bool neg;
	uint8_t ndigits;
	int16_t exp;
	uint8_t d[NUMBER_DIGITS];
} number;

/*
 * number_parse reads the decimal text s[0..len) (as DynamoDB accepts it:
 * optional sign, digits with an optional point, optional exponent) into
 * *out, normalised. Returns KV_OK, or KV_EINVAL with *msg set to DynamoDB's
 * message (static string): overflow, underflow, too many significant
 * digits (checked in that order, as DynamoDB does), or text that is not a
 * number. For the last, *msg is "The parameter cannot be converted to a
 * numeric value" and DynamoDB's message is that, ": " and the text; the
 * caller appends them.
 */
kv_err number_parse(const char *s, size_t len, number *out, const char **msg);

/*
 * number_format writes the canonical text of n to buf (NUL-terminated,
 * at least NUMBER_FMT_MAX bytes) and returns its length. Canonical is
 * what DynamoDB returns: plain positional notation, no exponent, no
 * leading or trailing zeros ("100", "0.1", "-12.5", "0").
 */
size_t number_format(const number *n, char *buf);

/* number_cmp returns <0, 0 or >0 as a is less than, equal to or above b. */
int number_cmp(const number *a, const number *b);

/*
 * number_add sets *out to a + b, exactly. number_sub sets *out to a - b.
 * Both return KV_OK, or KV_EINVAL with *msg set to DynamoDB's message
 * (static string) when the exact result does not fit a DynamoDB number:
 * magnitude of 1E+126 or more ("Number overflow. ..."), non-zero and
 * below 1E-130 ("Number underflow. ..."), or more than 38 significant
 * digits once trailing zeros are dropped. For the last DynamoDB answers
 * with the overflow message too (1E+50 + 1 gives "Number overflow"), so
 * that is what *msg says. *out is untouched on error.
 */
kv_err number_add(const number *a, const number *b, number *out,
    const char **msg);
kv_err number_sub(const number *a, const number *b, number *out,
    const char **msg);

/* number_from_u64 sets *out to v (always representable: 20 digits). */
void number_from_u64(uint64_t v, number *out);

/*
 * number_encode writes an order-preserving, self-delimiting encoding of n
 * to buf (at least NUMBER_ENC_MAX bytes) and returns its length:
 * memcmp(enc(a), enc(b)) has the sign of number_cmp(a, b), and no
 * encoding is a proper prefix of another.
 */
size_t number_encode(const number *n, uint8_t *buf);

/*
 * number_decode reads one encoding from buf[0..len) into *out and sets
 * *used to the bytes it took. Returns KV_OK or KV_CORRUPT.
 */
kv_err number_decode(const uint8_t *buf, size_t len, number *out,
    size_t *used);

#endif
