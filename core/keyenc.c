/*
 * keyenc.c — storage keys whose byte order is DynamoDB's key order, and
 * the partition-key hash that routes them.
 *
 * The layout is the table in keyenc.h. This file only builds and reads
 * keys; it does not decode a key back into values, and it does not check
 * DynamoDB's key size limits (the router does). The hash must never
 * change: it decides which partition holds an item on disk.
 */
#include "keyenc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XXH_STATIC_LINKING_ONLY /* XXH3_state_t on the stack */
#include <xxhash.h>

/*
 * A key of another type would be written where no reader can find it
 * again, so this check stays on in release builds.
 */
static void
check_key_type(const value *v)
{
	if ((v->type == VAL_S || v->type == VAL_B) ||
	    (v->type == VAL_N && v->u.num != NULL))
		return;
	fprintf(stderr, "keyenc: key value of type %d\n", (int) v->type);
	abort();
}

static void
put_be32(uint8_t *p, uint32_t x)
{
	p[0] = (uint8_t) (x >> 24);
	p[1] = (uint8_t) (x >> 16);
	p[2] = (uint8_t) (x >> 8);
	p[3] = (uint8_t) x;
}

static void
put_be64(uint8_t *p, uint64_t x)
{
	put_be32(p, (uint32_t) (x >> 32));
	put_be32(p + 4, (uint32_t) x);
}

static uint32_t
get_be32(const uint8_t *p)
{
	return (uint32_t) p[0] << 24 | (uint32_t) p[1] << 16 |
	    (uint32_t) p[2] << 8 | (uint32_t) p[3];
}

uint64_t
keyenc_hash(const value *pk)
{
	uint8_t small[256];
	uint8_t tag = (uint8_t) pk->type;
	const uint8_t *bytes;
	size_t len;
	XXH3_state_t st;

	check_key_type(pk);
	if (pk->type == VAL_N) {
		small[0] = tag;
		len = number_encode(pk->u.num, small + 1);
		return XXH3_64bits(small, 1 + len);
	}
	bytes = (const uint8_t *) pk->u.bytes;
	len = pk->len;
	if (len < sizeof(small)) {
		small[0] = tag;
		if (len > 0)
			memcpy(small + 1, bytes, len);
		return XXH3_64bits(small, 1 + len);
	}
	/* Streaming gives the same hash as one call over tag and bytes. */
	XXH3_INITSTATE(&st);
	XXH3_64bits_reset(&st);
	XXH3_64bits_update(&st, &tag, 1);
	XXH3_64bits_update(&st, bytes, len);
	return XXH3_64bits_digest(&st);
}

size_t
keyenc_value_size(const value *v)
{
	uint8_t num[NUMBER_ENC_MAX];
	size_t n = 0, i;

	check_key_type(v);
	if (v->type == VAL_N)
		return 1 + number_encode(v->u.num, num);
	for (i = 0; i < v->len; i++)
		n += v->u.bytes[i] == 0 ? 2 : 1;
	return 1 + n + 2;
}

size_t
keyenc_value(const value *v, uint8_t *buf)
{
	const uint8_t *bytes;
	size_t k = 0, i;

	check_key_type(v);
	buf[k++] = (uint8_t) v->type;
	if (v->type == VAL_N)
		return k + number_encode(v->u.num, buf + k);
	bytes = (const uint8_t *) v->u.bytes;
	for (i = 0; i < v->len; i++) {
		buf[k++] = bytes[i];
		if (bytes[i] == 0x00)
			buf[k++] = 0xFF;
	}
	buf[k++] = 0x00;
	buf[k++] = 0x01;
	return k;
}

kv_err
keyenc_item_key(uint32_t table_id, const value *pk, const value *sk,
    uint8_t **out, size_t *len)
{
	return keyenc_index_key(table_id, pk, sk, NULL, NULL, out, len);
}

kv_err
keyenc_index_key(uint32_t table_id, const value *pk, const value *sk,
    const value *bpk, const value *bsk, uint8_t **out, size_t *len)
{
	const value *rest[3] = { sk, bpk, bsk };
	size_t n = KEYENC_PREFIX + keyenc_value_size(pk);
	size_t k;
	uint8_t *buf;

	for (int i = 0; i < 3; i++)
		if (rest[i] != NULL)
			n += keyenc_value_size(rest[i]);
	buf = malloc(n);
	if (buf == NULL)
		return KV_ENOMEM;
	keyenc_range_prefix(table_id, keyenc_hash(pk), buf);
	k = KEYENC_PREFIX;
	k += keyenc_value(pk, buf + k);
	for (int i = 0; i < 3; i++)
		if (rest[i] != NULL)
			k += keyenc_value(rest[i], buf + k);
	if (k != n) { /* the size and the writer disagree: never store it */
		fprintf(stderr, "keyenc: key size %zu, wrote %zu\n", n, k);
		abort();
	}
	*out = buf;
	*len = n;
	return KV_OK;
}

size_t
keyenc_collection(uint32_t table_id, int local, const value *pk,
    uint8_t *buf)
{
	size_t k = KEYENC_PREFIX;
	keyenc_range_prefix(table_id, keyenc_hash(pk), buf);
	if (local >= 0) {
		buf[k++] = KEYENC_LOCAL_ENTRY;
		buf[k++] = (uint8_t) local;
	}
	return k + keyenc_value(pk, buf + k);
}

kv_err
keyenc_local_key(uint32_t table_id, int local, const value *pk,
    const value *isk, const value *sk, uint8_t **out, size_t *len)
{
	size_t n = KEYENC_PREFIX + 2 + keyenc_value_size(pk) +
	    keyenc_value_size(isk) + keyenc_value_size(sk);
	uint8_t *buf = malloc(n);
	if (buf == NULL)
		return KV_ENOMEM;
	size_t k = keyenc_collection(table_id, local, pk, buf);
	k += keyenc_value(isk, buf + k);
	k += keyenc_value(sk, buf + k);
	if (k != n) {
		fprintf(stderr, "keyenc: key size %zu, wrote %zu\n", n, k);
		abort();
	}
	*out = buf;
	*len = n;
	return KV_OK;
}

kv_err
keyenc_size_key(uint32_t table_id, const value *pk, uint8_t **out,
    size_t *len)
{
	size_t n = KEYENC_PREFIX + 1 + keyenc_value_size(pk);
	uint8_t *buf = malloc(n);
	if (buf == NULL)
		return KV_ENOMEM;
	keyenc_range_prefix(table_id, keyenc_hash(pk), buf);
	buf[KEYENC_PREFIX] = KEYENC_COLL_SIZE;
	keyenc_value(pk, buf + KEYENC_PREFIX + 1);
	*out = buf;
	*len = n;
	return KV_OK;
}

size_t
keyenc_value_extent(const uint8_t *p, size_t n)
{
	if (n < 1)
		return 0;
	if (p[0] == VAL_N) {
		number num;
		size_t used;
		return number_decode(p + 1, n - 1, &num, &used) == KV_OK ?
		    1 + used : 0;
	}
	for (size_t i = 1; i + 1 < n; i++) {
		if (p[i] != 0x00)
			continue;
		if (p[i + 1] == 0x01)
			return i + 2;
		i++; /* 0x00 0xFF: an escaped zero byte */
	}
	return 0;
}

size_t
keyenc_local_base(const uint8_t *k, size_t kl, uint8_t *buf)
{
	size_t at = KEYENC_PREFIX + 2;
	if (keyenc_local_of(k, kl) < 0)
		return 0;
	size_t pkl = keyenc_value_extent(k + at, kl - at);
	size_t iskl = pkl > 0 ? keyenc_value_extent(k + at + pkl,
	    kl - at - pkl) : 0;
	if (iskl == 0 || at + pkl + iskl >= kl)
		return 0;
	size_t rest = kl - at - pkl - iskl;
	memcpy(buf, k, KEYENC_PREFIX);
	memcpy(buf + KEYENC_PREFIX, k + at, pkl);
	memcpy(buf + KEYENC_PREFIX + pkl, k + at + pkl + iskl, rest);
	return KEYENC_PREFIX + pkl + rest;
}

void
keyenc_table_prefix(uint32_t table_id, uint8_t buf[4])
{
	put_be32(buf, table_id);
}

void
keyenc_range_prefix(uint32_t table_id, uint64_t h, uint8_t buf[12])
{
	put_be32(buf, table_id);
	put_be64(buf + 4, h);
}

uint64_t
keyenc_key_hash(const uint8_t *key)
{
	return (uint64_t) get_be32(key + 4) << 32 | get_be32(key + 8);
}

uint32_t
keyenc_key_table(const uint8_t *key)
{
	return get_be32(key);
}
