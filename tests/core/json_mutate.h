/*
 * json_mutate.h — seeded damage to JSON texts, for tests that hold a
 * reader to jansson's verdicts (core/jscan_test.c, router/json_read_test.c).
 */
#ifndef KV_TEST_JSON_MUTATE_H
#define KV_TEST_JSON_MUTATE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* splitmix64: a fixed sequence, so a failure can be replayed. */
static uint64_t
next_rand(uint64_t *s)
{
	uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* Bytes a mutation puts in: JSON's own, and bytes that break it. */
static const char alphabet[] =
    "{}[]\",:\\u0123456789abcdefABCDEF-+.eE \t\r\n\x01\x1f\x7f\x80\xbf"
    "\xc0\xc2\xdf\xe0\xed\xef\xf0\xf4\xf5\xfftrfalsnu";

/* Changes buf[0..*len) in 1 to 4 places: flip, insert, delete, cut. */
static void
mutate(uint64_t *rng, char *buf, size_t *len, size_t cap)
{
	int m = 1 + (int) (next_rand(rng) % 4);
	for (int k = 0; k < m; k++) {
		size_t n = *len;
		size_t at = (size_t) (next_rand(rng) % (n + 1));
		/* The alphabet's last byte is its NUL: a NUL goes in too. */
		char b = alphabet[next_rand(rng) % sizeof(alphabet)];
		switch (next_rand(rng) % 4) {
		case 0:
			if (at < n)
				buf[at] = b;
			break;
		case 1:
			if (n < cap) {
				memmove(buf + at + 1, buf + at, n - at);
				buf[at] = b;
				*len = n + 1;
			}
			break;
		case 2:
			if (at < n) {
				memmove(buf + at, buf + at + 1, n - at - 1);
				*len = n - 1;
			}
			break;
		default:
			*len = at;
			break;
		}
	}
}

#endif
