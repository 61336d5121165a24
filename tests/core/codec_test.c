/*
 * codec_test.c — the binary form of value trees (core/codec.c): exact
 * round trips of hand-made and seeded random trees, the depth limit, and
 * corrupt input (hand-made cases plus truncation and byte-flip fuzzing)
 * that must give KV_CORRUPT and never a crash. Run it under ASan too.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"

static arena A;

static void
setup(void)
{
	arena_init(&A);
}

static void
teardown(void)
{
	arena_fini(&A);
}

TestSuite(codec, .init = setup, .fini = teardown);

/* xorshift64*: a PRNG of our own so that seeds mean the same everywhere. */
static uint64_t rng_state;

static uint64_t
rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1DULL;
}

static size_t
rnd(size_t n)
{
	return n == 0 ? 0 : (size_t) (rng() % n);
}

static number *
num(const char *s)
{
	number *n = arena_alloc(&A, sizeof(*n));
	const char *msg;

	cr_assert_eq(number_parse(s, strlen(s), n, &msg), KV_OK, "%s", s);
	return n;
}

/* random_number makes a normalised number with 1..38 digits. */
static number *
random_number(void)
{
	number *n = arena_alloc(&A, sizeof(*n));
	size_t i;

	if (rnd(10) == 0)
		return n; /* zero */
	n->neg = rnd(2);
	n->ndigits = (uint8_t) (1 + rnd(NUMBER_DIGITS));
	n->exp = (int16_t) (NUMBER_EXP_MIN +
	    (int) rnd(NUMBER_EXP_MAX - NUMBER_EXP_MIN + 1));
	for (i = 0; i < n->ndigits; i++)
		n->d[i] = (uint8_t) rnd(10);
	n->d[0] = (uint8_t) (1 + rnd(9));
	n->d[n->ndigits - 1] = (uint8_t) (1 + rnd(9));
	return n;
}

/*
 * random_bytes makes len bytes; text is valid UTF-8 (ASCII and some
 * two- and three-byte characters), binary anything. A unique tag i is
 * prefixed when unique is set so that set members never repeat.
 */
static const char *
random_bytes(bool text, size_t *len, bool unique, size_t i)
{
	size_t n = rnd(12), k = 0;
	char *p = arena_alloc(&A, n * 3 + 24);

	if (unique)
		k = (size_t) sprintf(p, "%zu:", i);
	while (n-- > 0) {
		if (!text) {
			p[k++] = (char) rnd(256);
		} else if (rnd(4) == 0) {
			memcpy(p + k, "\xc3\xa9", 2); /* é */
			k += 2;
		} else if (rnd(8) == 0) {
			memcpy(p + k, "\xe2\x82\xac", 3); /* € */
			k += 3;
		} else {
			p[k++] = (char) (' ' + rnd(95));
		}
	}
	*len = k;
	return p;
}

static void random_value(value *v, int depth);

static void
random_set(value *v, val_type t)
{
	size_t i;

	v->type = t;
	v->len = 1 + rnd(6);
	v->u.elems = arena_alloc(&A, v->len * sizeof(value));
	for (i = 0; i < v->len; i++) {
		value *m = &v->u.elems[i];

		if (t == VAL_NS) {
			m->type = VAL_N;
			m->u.num = num("0");
			m->u.num->ndigits = 1;
			m->u.num->d[0] = (uint8_t) (1 + i % 9);
			m->u.num->exp = (int16_t) (1 + i / 9);
		} else {
			m->type = t == VAL_SS ? VAL_S : VAL_B;
			m->u.bytes = random_bytes(t == VAL_SS, &m->len, true,
			    i);
		}
	}
}

/* random_value makes a tree; containers get rarer as depth grows. */
static void
random_value(value *v, int depth)
{
	size_t i;
	val_type t = (val_type) (VAL_S + rnd(10));

	memset(v, 0, sizeof(*v));
	if ((t == VAL_L || t == VAL_M) && rnd((size_t) depth + 2) > 1)
		t = VAL_S;
	if (depth >= VALUE_MAX_DEPTH + 1 && (t == VAL_L || t == VAL_M))
		t = VAL_BOOL;
	v->type = t;
	switch (t) {
	case VAL_S:
	case VAL_B:
		v->u.bytes = random_bytes(t == VAL_S, &v->len, false, 0);
		break;
	case VAL_N:
		v->u.num = random_number();
		break;
	case VAL_SS:
	case VAL_NS:
	case VAL_BS:
		random_set(v, t);
		break;
	case VAL_L:
		v->len = rnd(5);
		v->u.elems = arena_alloc(&A, v->len * sizeof(value) + 1);
		for (i = 0; i < v->len; i++)
			random_value(&v->u.elems[i], depth + 1);
		break;
	case VAL_M:
		v->len = rnd(5);
		v->u.attrs = arena_alloc(&A, v->len * sizeof(attr) + 1);
		for (i = 0; i < v->len; i++) {
			attr *at = &v->u.attrs[i];

			at->name = random_bytes(true, &at->name_len, true, i);
			random_value(&at->v, depth + 1);
		}
		break;
	case VAL_NULL:
		v->b = true;
		break;
	case VAL_BOOL:
		v->b = rnd(2);
		break;
	}
}

/*
 * random_deep makes a tree whose first branch goes down to depth target
 * (at most VALUE_MAX_DEPTH + 1, the deepest the codec takes).
 */
static void
random_deep(value *v, int depth, int target)
{
	size_t i;

	if (depth >= target) {
		random_value(v, depth);
		return;
	}
	memset(v, 0, sizeof(*v));
	v->len = 1 + rnd(3);
	if (rnd(2)) {
		v->type = VAL_L;
		v->u.elems = arena_alloc(&A, v->len * sizeof(value));
		random_deep(&v->u.elems[0], depth + 1, target);
		for (i = 1; i < v->len; i++)
			random_value(&v->u.elems[i], depth + 1);
	} else {
		v->type = VAL_M;
		v->u.attrs = arena_alloc(&A, v->len * sizeof(attr));
		for (i = 0; i < v->len; i++) {
			attr *at = &v->u.attrs[i];

			at->name = random_bytes(true, &at->name_len, true, i);
			if (i == 0)
				random_deep(&at->v, depth + 1, target);
			else
				random_value(&at->v, depth + 1);
		}
	}
}

/* random_tree is a shallow tree, or one time in eight a deep one. */
static void
random_tree(value *v)
{
	if (rnd(8) == 0)
		random_deep(v, 0, (int) rnd(VALUE_MAX_DEPTH + 2));
	else
		random_value(v, 0);
}

/* round_trip encodes v, checks the size, decodes and compares. */
static void
round_trip(const value *v)
{
	uint8_t *buf, *again;
	size_t len, len2;
	value back;

	cr_assert_eq(codec_encode(v, &buf, &len), KV_OK);
	cr_assert_eq(len, codec_size(v));
	cr_assert_eq(codec_decode(&A, buf, len, &back), KV_OK);
	cr_assert(value_equal(v, &back), "tree changed in a round trip");
	/* Encoding is deterministic: the copy encodes to the same bytes. */
	cr_assert_eq(codec_encode(&back, &again, &len2), KV_OK);
	cr_assert_eq(len2, len);
	cr_assert_eq(memcmp(buf, again, len), 0);
	free(again);
	free(buf);
}

static value
str(val_type t, const char *p, size_t n)
{
	value v = { .type = t, .len = n };

	v.u.bytes = p;
	return v;
}

Test(codec, every_type_round_trips)
{
	value s = str(VAL_S, "h\xc3\xa9llo", 6), e = str(VAL_S, "", 0);
	value b = str(VAL_B, "\x00\xff\x80", 3), nb = str(VAL_B, "", 0);
	value n = { .type = VAL_N }, z = { .type = VAL_N };
	value nul = { .type = VAL_NULL, .b = true };
	value t = { .type = VAL_BOOL, .b = true };
	value f = { .type = VAL_BOOL, .b = false };
	value ss, ns, bs, l, m, empty_l = { .type = VAL_L };
	value empty_m = { .type = VAL_M };
	value ss_m[] = { str(VAL_S, "a", 1), str(VAL_S, "", 0) };
	value bs_m[] = { str(VAL_B, "\x01", 1), str(VAL_B, "", 0) };
	value ns_m[2] = { { .type = VAL_N }, { .type = VAL_N } };
	attr attrs[2] = { { "k", 1, { 0 } }, { "", 0, { 0 } } };

	n.u.num = num("-12345678901234567890123456789012345678E-20");
	z.u.num = num("0");
	ns_m[0].u.num = num("9.9999999999999999999999999999999999999E+125");
	ns_m[1].u.num = num("1E-130");
	ss = (value) { .type = VAL_SS, .len = 2, .u.elems = ss_m };
	bs = (value) { .type = VAL_BS, .len = 2, .u.elems = bs_m };
	ns = (value) { .type = VAL_NS, .len = 2, .u.elems = ns_m };
	l = (value) { .type = VAL_L, .len = 2, .u.elems = ss_m };
	attrs[0].v = l;
	attrs[1].v = t;
	m = (value) { .type = VAL_M, .len = 2, .u.attrs = attrs };

	const value *all[] = { &s, &e, &b, &nb, &n, &z, &nul, &t, &f, &ss,
		&ns, &bs, &l, &m, &empty_l, &empty_m };
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		round_trip(all[i]);
}

Test(codec, random_trees_round_trip)
{
	int i;

	rng_state = 0x9E3779B97F4A7C15ULL;
	for (i = 0; i < 2000; i++) {
		value v;

		random_tree(&v);
		round_trip(&v);
	}
}

/* nested_list makes depth levels of L around a BOOL. */
static value
nested_list(int depth)
{
	value v = { .type = VAL_BOOL, .b = true };
	int i;

	for (i = 0; i < depth; i++) {
		value *inner = arena_alloc(&A, sizeof(value));

		*inner = v;
		v = (value) { .type = VAL_L, .len = 1, .u.elems = inner };
	}
	return v;
}

Test(codec, nesting_is_bounded)
{
	value ok = nested_list(VALUE_MAX_DEPTH + 1);
	value deep = nested_list(VALUE_MAX_DEPTH + 2);
	uint8_t *buf;
	size_t len;
	value back;

	/* An item (level 0) holding an attribute nested 32 deep decodes. */
	round_trip(&ok);
	cr_assert_eq(codec_encode(&deep, &buf, &len), KV_OK);
	cr_assert_eq(codec_decode(&A, buf, len, &back), KV_CORRUPT);
	free(buf);
}

/* Criterion may run the test in a fresh process: no pointers here. */
struct corrupt {
	char what[40];
	char bytes[24];
	size_t len;
};

#define C(what, lit) { what, lit, sizeof(lit) - 1 }

ParameterizedTestParameters(codec, corrupt_bytes_are_refused)
{
	static struct corrupt cases[] = {
		C("empty buffer", ""),
		C("type 0", "\x00"),
		C("type 11", "\x0b"),
		C("type 255", "\xff"),
		C("string without length", "\x01"),
		C("string longer than the buffer", "\x01\x05" "abc"),
		C("trailing byte", "\x01\x01" "ab"),
		C("overlong varint", "\x01\x81\x00" "a"),
		C("varint of 11 bytes",
		    "\x01\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x00"),
		C("varint beyond 64 bits",
		    "\x01\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f"),
		C("invalid UTF-8 in S", "\x01\x01\xff"),
		C("overlong UTF-8 in S", "\x01\x02\xc0\x80"),
		C("surrogate in S", "\x01\x03\xed\xa0\x80"),
		C("cut UTF-8 in S", "\x01\x01\xc3"),
		C("invalid UTF-8 after eight ASCII bytes",
		    "\x01\x0a" "abcdefghi\xff"),
		C("invalid UTF-8 before eight ASCII bytes",
		    "\x01\x0a" "a\xff" "bcdefghi"),
		C("UTF-8 cut at the end of a long S",
		    "\x01\x11" "abcdefghijklmnop\xe2"),
		C("invalid UTF-8 in a name", "\x07\x01\x01\xff\x09"),
		C("bad number tag", "\x02\x07"),
		C("number without exponent", "\x02\x03"),
		C("number without terminator", "\x02\x03\x82\x02"),
		C("number digit pair above 100", "\x02\x03\x82\x66\x00"),
		C("number with no digits", "\x02\x03\x82\x00"),
		C("number with a leading zero", "\x02\x03\x82\x02\x00"),
		C("BOOL 2", "\x0a\x02"),
		C("BOOL without byte", "\x0a"),
		C("empty SS", "\x04\x00"),
		C("empty NS", "\x05\x00"),
		C("empty BS", "\x06\x00"),
		C("SS count above the bytes left", "\x04\x05\x00"),
		C("L count above the bytes left", "\x08\x03\x09\x09"),
		C("M count above the bytes left", "\x07\x02\x00\x09"),
		C("huge L count", "\x08\xff\xff\xff\xff\x0f"),
		C("M missing a value", "\x07\x01\x01" "a"),
		C("L of a truncated element", "\x08\x01\x01\x02" "a"),
	};
	return cr_make_param_array(struct corrupt, cases,
	    sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct corrupt *c, codec, corrupt_bytes_are_refused)
{
	value v;

	cr_assert_eq(codec_decode(&A, (const uint8_t *) c->bytes, c->len, &v),
	    KV_CORRUPT, "%s", c->what);
}

Test(codec, valid_hand_encodings_decode)
{
	/* The layout in codec.c, spelled out. */
	static const uint8_t m[] = { 0x07, 0x02, 0x01, 'a', 0x09, 0x01, 'b',
		0x0a, 0x01 };
	static const uint8_t n[] = { 0x02, 0x03, 0x82, 0x0c, 0x00 }; /* 1.1 */
	value v;

	cr_assert_eq(codec_decode(&A, m, sizeof(m), &v), KV_OK);
	cr_assert_eq(v.type, VAL_M);
	cr_assert_eq(v.len, 2);
	cr_assert_eq(v.u.attrs[0].v.type, VAL_NULL);
	cr_assert_eq(v.u.attrs[1].v.type, VAL_BOOL);
	cr_assert(v.u.attrs[1].v.b);
	cr_assert_eq(codec_decode(&A, n, sizeof(n), &v), KV_OK);
	cr_assert_eq(v.type, VAL_N);
	cr_assert_eq(number_cmp(v.u.num, num("1.1")), 0);
}

/*
 * Every proper prefix of a valid encoding is corrupt (the form is
 * self-delimiting), and a flipped byte either still decodes, in which
 * case it re-encodes to exactly those bytes, or is refused.
 */
Test(codec, truncated_and_flipped_bytes_never_crash)
{
	int i;
	size_t k, flips = 0, accepted = 0;

	rng_state = 0x0123456789ABCDEFULL;
	for (i = 0; i < 300; i++) {
		uint8_t *buf, *copy;
		size_t len;
		value v, back;

		random_tree(&v);
		cr_assert_eq(codec_encode(&v, &buf, &len), KV_OK);
		for (k = 0; k < len; k++) {
			/* A fresh allocation so ASan sees reads past k. */
			copy = malloc(k + 1);
			memcpy(copy, buf, k);
			cr_assert_eq(codec_decode(&A, copy, k, &back),
			    KV_CORRUPT, "prefix %zu of %zu", k, len);
			free(copy);
		}
		copy = malloc(len);
		for (k = 0; k < 64; k++) {
			kv_err e;

			memcpy(copy, buf, len);
			copy[rnd(len)] ^= (uint8_t) (1 + rnd(255));
			if (rnd(2))
				copy[rnd(len)] = (uint8_t) rng();
			e = codec_decode(&A, copy, len, &back);
			flips++;
			cr_assert(e == KV_OK || e == KV_CORRUPT, "%s",
			    kv_err_name(e));
			if (e == KV_OK) {
				uint8_t *again;
				size_t len2;

				accepted++;
				cr_assert_eq(
				    codec_encode(&back, &again, &len2), KV_OK);
				cr_assert_eq(len2, len);
				cr_assert_eq(memcmp(again, copy, len), 0);
				free(again);
			}
		}
		free(copy);
		free(buf);
	}
	cr_log_info("%zu flipped inputs, %zu still decoded", flips, accepted);
}
