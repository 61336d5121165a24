/*
 * json_mutate.h — seeded damage to JSON texts, for tests that hold a
 * reader to jansson's verdicts (core/jscan_test.c, router/json_read_test.c,
 * chaos/workload_test.c).
 */
#ifndef KV_TEST_JSON_MUTATE_H
#define KV_TEST_JSON_MUTATE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* splitmix64: a fixed sequence, so a failure can be replayed. */
static inline uint64_t
next_rand(uint64_t *s)
{
	uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/*
 * A kind of damage: the bytes it puts in, at most how many edits, and
 * how often each edit comes (weights): a byte overwritten, a byte put
 * in, a byte taken out, the text cut short, or nothing.
 */
typedef struct mutation {
	const char *alphabet;
	size_t alphabet_len;
	int max_edits;
	unsigned flip, insert, erase, cut, keep;
} mutation;

/* Changes buf[0..*len) (room for cap bytes) in 1 to m->max_edits places. */
static inline void
mutate_by(const mutation *m, uint64_t *rng, char *buf, size_t *len,
    size_t cap)
{
	unsigned total = m->flip + m->insert + m->erase + m->cut + m->keep;
	int edits = 1 + (int) (next_rand(rng) % (uint64_t) m->max_edits);
	for (int k = 0; k < edits; k++) {
		size_t n = *len;
		size_t at = (size_t) (next_rand(rng) % (n + 1));
		char b = m->alphabet[next_rand(rng) % m->alphabet_len];
		unsigned w = (unsigned) (next_rand(rng) % total);
		if (w < m->flip) {
			if (at < n)
				buf[at] = b;
		} else if ((w -= m->flip) < m->insert) {
			if (n < cap) {
				memmove(buf + at + 1, buf + at, n - at);
				buf[at] = b;
				*len = n + 1;
			}
		} else if ((w -= m->insert) < m->erase) {
			if (at < n) {
				memmove(buf + at, buf + at + 1, n - at - 1);
				*len = n - 1;
			}
		} else if (w - m->erase < m->cut) {
			*len = at;
		}
	}
}

/* Bytes a mutation puts in: JSON's own, and bytes that break it. */
static const char alphabet[] =
    "{}[]\",:\\u0123456789abcdefABCDEF-+.eE \t\r\n\x01\x1f\x7f\x80\xbf"
    "\xc0\xc2\xdf\xe0\xed\xef\xf0\xf4\xf5\xfftrfalsnu";

/*
 * JSON's damage: 1 to 4 edits of every kind alike. The alphabet's last
 * byte is its NUL: a NUL goes in too.
 */
static const mutation json_damage = { alphabet, sizeof(alphabet), 4, 1, 1,
	1, 1, 0 };

static inline void
mutate(uint64_t *rng, char *buf, size_t *len, size_t cap)
{
	mutate_by(&json_damage, rng, buf, len, cap);
}

#endif
