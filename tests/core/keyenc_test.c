/*
 * keyenc_test.c — tests of core/keyenc.c: key values encode in DynamoDB's
 * order (bytes for S and B, numeric for N), item keys group an item
 * collection and sort it by sort key, and the partition hash never changes.
 *
 * The hard-coded hashes were computed once with this implementation; if
 * one of them fails, routing of data already on disk has changed.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "keyenc.h"

static int
sgn(long x)
{
	return (x > 0) - (x < 0);
}

static int
bytes_cmp(const uint8_t *a, size_t la, const uint8_t *b, size_t lb)
{
	int c = memcmp(a, b, la < lb ? la : lb);

	if (c != 0)
		return sgn(c);
	return la < lb ? -1 : la > lb;
}

static value
str_value(val_type t, const void *bytes, size_t len)
{
	value v;

	memset(&v, 0, sizeof(v));
	v.type = t;
	v.len = len;
	v.u.bytes = bytes;
	return v;
}

static value
num_value(number *storage, const char *text)
{
	const char *msg;
	value v;

	cr_assert_eq(number_parse(text, strlen(text), storage, &msg), KV_OK,
	    "%s", text);
	memset(&v, 0, sizeof(v));
	v.type = VAL_N;
	v.u.num = storage;
	return v;
}

/* keyenc_value into a fresh buffer of exactly keyenc_value_size bytes. */
static uint8_t *
encode(const value *v, size_t *len)
{
	size_t n = keyenc_value_size(v);
	uint8_t *buf = malloc(n);

	cr_assert_not_null(buf);
	*len = keyenc_value(v, buf);
	cr_assert_eq(*len, n);
	return buf;
}

/* ---- S and B ------------------------------------------------------- */

Test(keyenc, string_layout_escapes_zero_bytes)
{
	static const uint8_t want[] = { VAL_S, 'a', 0x00, 0xFF, 0xFF, 0x00,
		0xFF, 'b', 0x00, 0x01 };
	value v = str_value(VAL_S, "a\0\xff\0b", 5);
	size_t len;
	uint8_t *enc = encode(&v, &len);

	cr_assert_eq(len, sizeof(want));
	cr_assert_arr_eq(enc, want, len);
	free(enc);
}

Test(keyenc, empty_value_is_tag_and_terminator)
{
	static const uint8_t want[] = { VAL_B, 0x00, 0x01 };
	value v = str_value(VAL_B, NULL, 0);
	size_t len;
	uint8_t *enc = encode(&v, &len);

	cr_assert_eq(len, 3);
	cr_assert_arr_eq(enc, want, 3);
	free(enc);
}

Test(keyenc, number_layout_is_tag_and_number_encoding)
{
	number n;
	value v = num_value(&n, "-12.5");
	uint8_t want[1 + NUMBER_ENC_MAX];
	size_t wlen, len;
	uint8_t *enc;

	want[0] = VAL_N;
	wlen = 1 + number_encode(&n, want + 1);
	enc = encode(&v, &len);
	cr_assert_eq(len, wlen);
	cr_assert_arr_eq(enc, want, len);
	free(enc);
}

static uint64_t rng_state;

static uint64_t
rng(void)
{
	uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

#define NRAW 600
#define RAWMAX 12

struct raw {
	uint8_t b[RAWMAX];
	size_t len;
	uint8_t *enc;
	size_t elen;
};

/*
 * Short values over the bytes that matter to the escape (0x00, 0x01,
 * 0xFE, 0xFF) and one ordinary byte; a third of them are prefixes or
 * extensions of the previous one.
 */
static void
random_raw(struct raw *r, const struct raw *prev)
{
	static const uint8_t alphabet[] = { 0x00, 0x01, 0xFE, 0xFF, 'a' };
	size_t i;

	if (prev != NULL && rng() % 3 == 0) {
		*r = *prev;
		if (r->len > 0 && rng() % 2)
			r->len = rng() % r->len;
		else
			while (r->len < RAWMAX && rng() % 2)
				r->b[r->len++] = alphabet[rng() % 5];
		return;
	}
	r->len = rng() % (RAWMAX + 1);
	for (i = 0; i < r->len; i++)
		r->b[i] = alphabet[rng() % 5];
}

static void
check_bytes_cmp(val_type t, uint64_t seed)
{
	struct raw *r = calloc(NRAW, sizeof(*r));
	size_t i, j;

	cr_assert_not_null(r);
	rng_state = seed;
	for (i = 0; i < NRAW; i++) {
		value v;

		random_raw(&r[i], i > 0 ? &r[i - 1] : NULL);
		v = str_value(t, r[i].b, r[i].len);
		r[i].enc = encode(&v, &r[i].elen);
	}
	for (i = 0; i < NRAW; i++) {
		for (j = 0; j < NRAW; j++) {
			int want =
			    bytes_cmp(r[i].b, r[i].len, r[j].b, r[j].len);
			size_t min =
			    r[i].elen < r[j].elen ? r[i].elen : r[j].elen;

			/* decided inside the shorter: order and prefix-free */
			if (sgn(memcmp(r[i].enc, r[j].enc, min)) != want ||
			    (want == 0 && r[i].elen != r[j].elen))
				cr_assert_fail("values %zu and %zu", i, j);
		}
	}
	for (i = 0; i < NRAW; i++)
		free(r[i].enc);
	free(r);
}

Test(keyenc, string_order_is_byte_order)
{
	check_bytes_cmp(VAL_S, 1);
}

Test(keyenc, binary_order_is_byte_order)
{
	check_bytes_cmp(VAL_B, 2);
}

/* ---- N ------------------------------------------------------------- */

Test(keyenc, number_order_is_numeric_order)
{
	static const char *const sorted[] = {
		"-9.9999999999999999999999999999999999999E+125",
		"-1E+20",
		"-100",
		"-99.5",
		"-1.0000000000000000000000000000000000001",
		"-1",
		"-0.10000000000000000000000000000000000001",
		"-0.1",
		"-1E-130",
		"0",
		"1E-130",
		"0.1",
		"0.10000000000000000000000000000000000001",
		"1",
		"1.0000000000000000000000000000000000001",
		"2",
		"10",
		"99.5",
		"100",
		"1E+20",
		"9.9999999999999999999999999999999999999E+125",
	};
	size_t n = sizeof(sorted) / sizeof(sorted[0]);
	number nums[sizeof(sorted) / sizeof(sorted[0])];
	uint8_t *enc[sizeof(sorted) / sizeof(sorted[0])];
	size_t len[sizeof(sorted) / sizeof(sorted[0])];
	size_t i, j;

	for (i = 0; i < n; i++) {
		value v = num_value(&nums[i], sorted[i]);

		enc[i] = encode(&v, &len[i]);
	}
	for (i = 0; i < n; i++)
		for (j = 0; j < n; j++)
			cr_assert_eq(bytes_cmp(enc[i], len[i], enc[j], len[j]),
			    i < j ? -1 : i > j, "%s vs %s", sorted[i],
			    sorted[j]);
	for (i = 0; i < n; i++)
		free(enc[i]);
}

Test(keyenc, equal_numbers_encode_alike)
{
	number a, b;
	value va = num_value(&a, "1E+2"), vb = num_value(&b, "100.00");
	size_t la, lb;
	uint8_t *ea = encode(&va, &la), *eb = encode(&vb, &lb);

	cr_assert_eq(la, lb);
	cr_assert_arr_eq(ea, eb, la);
	free(ea);
	free(eb);
}

/* ---- item keys ----------------------------------------------------- */

static uint8_t *
item_key(uint32_t table, const value *pk, const value *sk, size_t *len)
{
	uint8_t *key = NULL;

	cr_assert_eq(keyenc_item_key(table, pk, sk, &key, len), KV_OK);
	cr_assert_not_null(key);
	return key;
}

Test(keyenc, item_key_layout)
{
	value pk = str_value(VAL_S, "PROD#2410", 9);
	value sk = str_value(VAL_S, "STOCK", 5);
	uint64_t h = keyenc_hash(&pk);
	uint8_t prefix[KEYENC_PREFIX], table[4];
	size_t len, plen, slen;
	uint8_t *key = item_key(0x01020304, &pk, &sk, &len);
	uint8_t *penc = encode(&pk, &plen), *senc = encode(&sk, &slen);

	cr_assert_eq(len, KEYENC_PREFIX + plen + slen);
	keyenc_range_prefix(0x01020304, h, prefix);
	cr_assert_arr_eq(key, prefix, KEYENC_PREFIX);
	cr_assert_arr_eq(key + KEYENC_PREFIX, penc, plen);
	cr_assert_arr_eq(key + KEYENC_PREFIX + plen, senc, slen);
	cr_assert_eq(keyenc_key_table(key), 0x01020304);
	cr_assert_eq(keyenc_key_hash(key), h);
	keyenc_table_prefix(0x01020304, table);
	cr_assert_arr_eq(key, table, 4);
	cr_assert_eq(key[0], 0x01);
	cr_assert_eq(key[3], 0x04);
	cr_assert_eq(key[4], (uint8_t) (h >> 56));
	cr_assert_eq(key[11], (uint8_t) h);
	free(key);
	free(penc);
	free(senc);
}

Test(keyenc, item_key_without_sort_key)
{
	number n;
	value pk = num_value(&n, "42");
	size_t len, plen;
	uint8_t *key = item_key(7, &pk, NULL, &len);
	uint8_t *penc = encode(&pk, &plen);

	cr_assert_eq(len, KEYENC_PREFIX + plen);
	cr_assert_arr_eq(key + KEYENC_PREFIX, penc, plen);
	free(key);
	free(penc);
}

Test(keyenc, range_prefix_is_big_endian)
{
	static const uint8_t want[] = { 0x00, 0x00, 0x01, 0x00, 0x80, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x01 };
	uint8_t buf[KEYENC_PREFIX];

	keyenc_range_prefix(256, 0x8000000000000001ULL, buf);
	cr_assert_arr_eq(buf, want, sizeof(want));
	cr_assert_eq(keyenc_key_table(buf), 256);
	cr_assert_eq(keyenc_key_hash(buf), 0x8000000000000001ULL);
}

Test(keyenc, keys_with_equal_pk_sort_by_sk)
{
	static const char *const sks[] = { "", "A", "A\x01", "AB", "ITEM#01",
		"ITEM#02", "ITEM#10", "META", "REVIEW#2024", "STOCK", "\xff" };
	static const char *const nks[] = { "-5", "-0.5", "0", "0.5", "5",
		"50" };
	value pk = str_value(VAL_S, "ORDER#1", 7);
	uint8_t *keys[16];
	size_t lens[16], i, j, n = sizeof(sks) / sizeof(sks[0]);
	number nums[6];

	for (i = 0; i < n; i++) {
		value sk = str_value(VAL_S, sks[i], strlen(sks[i]));

		keys[i] = item_key(3, &pk, &sk, &lens[i]);
	}
	for (i = 0; i < n; i++)
		for (j = 0; j < n; j++)
			cr_assert_eq(
			    bytes_cmp(keys[i], lens[i], keys[j], lens[j]),
			    i < j ? -1 : i > j, "\"%s\" vs \"%s\"", sks[i],
			    sks[j]);
	for (i = 0; i < n; i++)
		free(keys[i]);

	/* Numeric sort keys, under a binary partition key with a zero. */
	pk = str_value(VAL_B, "\x00\x01", 2);
	n = sizeof(nks) / sizeof(nks[0]);
	for (i = 0; i < n; i++) {
		value sk = num_value(&nums[i], nks[i]);

		keys[i] = item_key(3, &pk, &sk, &lens[i]);
	}
	for (i = 0; i + 1 < n; i++)
		cr_assert_lt(
		    bytes_cmp(keys[i], lens[i], keys[i + 1], lens[i + 1]), 0,
		    "%s vs %s", nks[i], nks[i + 1]);
	for (i = 0; i < n; i++)
		free(keys[i]);
}

Test(keyenc, item_collection_is_one_contiguous_range)
{
	/* pk "a" and pk "a\0" (a prefix with a zero after) must not mix */
	value pa = str_value(VAL_S, "a", 1), pz = str_value(VAL_S, "a\0", 2);
	value lo = str_value(VAL_S, "", 0),
	      hi = str_value(VAL_S, "\xff\xff", 2);
	value mid = str_value(VAL_S, "m", 1);
	size_t l1, l2, l3, l4;
	uint8_t *a_lo, *a_hi, *z_mid, *a_mid;

	/* Compare from byte 12 on, as if the two keys hashed alike. */
	a_lo = item_key(1, &pa, &lo, &l1);
	a_hi = item_key(1, &pa, &hi, &l2);
	a_mid = item_key(1, &pa, &mid, &l3);
	z_mid = item_key(1, &pz, &mid, &l4);
	cr_assert_lt(bytes_cmp(a_lo + 12, l1 - 12, a_mid + 12, l3 - 12), 0);
	cr_assert_lt(bytes_cmp(a_mid + 12, l3 - 12, a_hi + 12, l2 - 12), 0);
	cr_assert_gt(bytes_cmp(z_mid + 12, l4 - 12, a_hi + 12, l2 - 12), 0);
	free(a_lo);
	free(a_hi);
	free(a_mid);
	free(z_mid);
}

/* ---- hash ---------------------------------------------------------- */

/* Parameters hold their bytes inline: see number_test.c for why. */
struct hash_case {
	val_type type;
	char bytes[16]; /* S, B: raw bytes; N: number text */
	size_t len;
	uint64_t want;
};

ParameterizedTestParameters(keyenc, hash_is_stable)
{
	static struct hash_case cases[] = {
		{ VAL_S, "PROD#2410", 9, 0xff74a53c122ff8b9ULL },
		{ VAL_S, "", 0, 0xe12ef9d2eb86ceebULL },
		{ VAL_B, "\x00\xff", 2, 0x128143d59febd7dbULL },
		{ VAL_N, "100", 3, 0x192d941177e66397ULL },
		{ VAL_N, "1E+2", 4, 0x192d941177e66397ULL },
		{ VAL_N, "-0.5", 4, 0x3fe68feddc99a71aULL },
		{ VAL_N, "0", 1, 0xba73742d85194972ULL },
	};

	return cr_make_param_array(
	    struct hash_case, cases, sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct hash_case *c, keyenc, hash_is_stable)
{
	number n;
	value v = c->type == VAL_N ? num_value(&n, c->bytes)
	                           : str_value(c->type, c->bytes, c->len);

	cr_assert_eq(keyenc_hash(&v), c->want, "type %d \"%s\": 0x%016llxULL",
	    (int) c->type, c->bytes, (unsigned long long) keyenc_hash(&v));
}

Test(keyenc, xxh3_library_matches_reference_vector)
{
	/*
	 * XXH3-64 of no input, from the xxHash reference; a library that
	 * hashes differently would move every partition.
	 */
	cr_assert_eq(XXH3_64bits(NULL, 0), 0x2D06800538D394C2ULL);
}

Test(keyenc, hash_is_xxh3_of_tag_and_canonical_bytes)
{
	static char long_s[1000];
	uint8_t buf[1 + sizeof(long_s)];
	number n;
	value v;
	size_t len;

	memset(long_s, 'x', sizeof(long_s));
	long_s[500] = '\0';
	v = str_value(VAL_S, long_s, sizeof(long_s));
	buf[0] = VAL_S;
	memcpy(buf + 1, long_s, sizeof(long_s));
	cr_assert_eq(keyenc_hash(&v), XXH3_64bits(buf, sizeof(buf)));

	v = str_value(VAL_B, "key", 3);
	buf[0] = VAL_B;
	memcpy(buf + 1, "key", 3);
	cr_assert_eq(keyenc_hash(&v), XXH3_64bits(buf, 4));

	v = num_value(&n, "12.5");
	buf[0] = VAL_N;
	len = number_encode(&n, buf + 1);
	cr_assert_eq(keyenc_hash(&v), XXH3_64bits(buf, 1 + len));
}

Test(keyenc, hash_streaming_path_equals_one_shot)
{
	static char s[5000];
	uint8_t *buf = malloc(1 + sizeof(s));
	size_t len;
	value v;

	cr_assert_not_null(buf);
	rng_state = 3;
	for (len = 200; len < sizeof(s); len += 137) {
		size_t i;

		for (i = 0; i < len; i++)
			s[i] = (char) rng();
		v = str_value(VAL_S, s, len);
		buf[0] = VAL_S;
		memcpy(buf + 1, s, len);
		cr_assert_eq(keyenc_hash(&v), XXH3_64bits(buf, 1 + len),
		    "len %zu", len);
	}
	free(buf);
}

Test(keyenc, equal_numbers_hash_alike)
{
	number a, b, c;
	value va = num_value(&a, "1E+2"), vb = num_value(&b, "100");
	value vc = num_value(&c, "100.0000000000000000000000000000000000000");

	cr_assert_eq(keyenc_hash(&va), keyenc_hash(&vb));
	cr_assert_eq(keyenc_hash(&va), keyenc_hash(&vc));
}

Test(keyenc, hash_depends_on_type)
{
	value s = str_value(VAL_S, "1", 1), b = str_value(VAL_B, "1", 1);
	number n;
	value vn = num_value(&n, "1");

	cr_assert_neq(keyenc_hash(&s), keyenc_hash(&b));
	cr_assert_neq(keyenc_hash(&s), keyenc_hash(&vn));
	cr_assert_neq(keyenc_hash(&b), keyenc_hash(&vn));
}

/* ---- index entry keys ---------------------------------------------- */

Test(keyenc, index_key_is_the_item_key_then_the_base_key)
{
	value ipk = str_value(VAL_S, "owner", 5);
	value isk = str_value(VAL_S, "2026", 4);
	value bpk = str_value(VAL_B, "\0\1", 2);
	value bsk = str_value(VAL_S, "x", 1);
	size_t len, il, bl, sl;
	uint8_t *key = NULL;
	uint8_t *ik = item_key(9, &ipk, &isk, &il);
	uint8_t *benc = encode(&bpk, &bl), *senc = encode(&bsk, &sl);

	cr_assert_eq(keyenc_index_key(9, &ipk, &isk, &bpk, &bsk, &key, &len),
	    KV_OK);
	cr_assert_eq(len, il + bl + sl);
	cr_assert_arr_eq(key, ik, il);
	cr_assert_arr_eq(key + il, benc, bl);
	cr_assert_arr_eq(key + il + bl, senc, sl);
	free(key);
	/* Without an index sort key: the base key follows the index's. */
	free(ik);
	ik = item_key(9, &ipk, NULL, &il);
	cr_assert_eq(keyenc_index_key(9, &ipk, NULL, &bpk, NULL, &key, &len),
	    KV_OK);
	cr_assert_eq(len, il + bl);
	cr_assert_arr_eq(key, ik, il);
	cr_assert_arr_eq(key + il, benc, bl);
	free(key);
	free(ik);
	free(benc);
	free(senc);
}

/*
 * Entries of one index key sort together, and entries of equal index
 * sort keys by the base key: so a range of index keys is a range of
 * storage keys, whatever base keys follow.
 */
Test(keyenc, index_keys_sort_by_index_key_then_base_key)
{
	value ipk = str_value(VAL_S, "o", 1);
	value a = str_value(VAL_S, "a", 1), ab = str_value(VAL_S, "ab", 2);
	value b1 = str_value(VAL_S, "\xff\xff", 2), b0 = str_value(VAL_S, "",
	    0);
	uint8_t *k1, *k2, *k3;
	size_t l1, l2, l3;
	cr_assert_eq(keyenc_index_key(1, &ipk, &a, &b1, NULL, &k1, &l1), KV_OK);
	cr_assert_eq(keyenc_index_key(1, &ipk, &ab, &b0, NULL, &k2, &l2),
	    KV_OK);
	cr_assert_eq(keyenc_index_key(1, &ipk, &a, &b0, NULL, &k3, &l3), KV_OK);
	cr_assert_lt(bytes_cmp(k1, l1, k2, l2), 0); /* "a" < "ab" */
	cr_assert_lt(bytes_cmp(k3, l3, k1, l1), 0); /* base "" < "\xff\xff" */
	free(k1);
	free(k2);
	free(k3);
}

/*
 * A local index's entry: the collection's prefix with the marker and the
 * index number, then the index's sort key and the item's sort key. It is
 * told apart from an item's key, its item's key comes back out of it
 * (zero bytes and numbers included), and it sorts after every item of
 * its hash.
 */
Test(keyenc, local_entry_names_its_item)
{
	number n1, n2;
	value pk = str_value(VAL_S, "a\0b", 3);
	value isk = num_value(&n1, "-12.5");
	value sk = num_value(&n2, "7");
	value isks = str_value(VAL_B, "\0\0x", 3);
	uint8_t *e, *it, *sz, base[128];
	size_t el, il, szl;

	cr_assert_eq(keyenc_local_key(5, 3, &pk, &isk, &sk, &e, &el), KV_OK);
	cr_assert_eq(keyenc_item_key(5, &pk, &sk, &it, &il), KV_OK);
	cr_assert_eq(keyenc_size_key(5, &pk, &sz, &szl), KV_OK);
	cr_assert_eq(keyenc_local_of(e, el), 3);
	cr_assert_eq(keyenc_local_of(it, il), -1);
	cr_assert_eq(keyenc_local_of(sz, szl), -2);
	cr_assert(keyenc_is_item(it, il));
	cr_assert_not(keyenc_is_item(e, el));
	cr_assert_eq(keyenc_key_hash(e), keyenc_key_hash(it));
	cr_assert_eq(keyenc_local_base(e, el, base), il);
	cr_assert_arr_eq(base, it, il);
	cr_assert_gt(bytes_cmp(e, el, it, il), 0);
	cr_assert_gt(bytes_cmp(sz, szl, it, il), 0);
	cr_assert_lt(bytes_cmp(sz, szl, e, el), 0);
	/* The entry's prefix is keyenc_collection's. */
	size_t cl = keyenc_collection(5, 3, &pk, base);
	cr_assert_arr_eq(base, e, cl);
	free(e);
	cr_assert_eq(keyenc_local_key(5, 0, &pk, &isks, &sk, &e, &el), KV_OK);
	cr_assert_eq(keyenc_local_base(e, el, base), il);
	cr_assert_arr_eq(base, it, il);
	/* Cut inside its partition key, it names nothing. */
	cr_assert_eq(keyenc_local_base(e, KEYENC_PREFIX + 4, base), 0);
	free(e);
	free(it);
	free(sz);
}
