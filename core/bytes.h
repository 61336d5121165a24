/*
 * bytes.h — fixed-width integers in byte buffers, little-endian, for the
 * records nodes keep in their stores and the small binary bodies they
 * exchange (partition records, the move record, RPC_BORROW entries),
 * and big-endian where a number is part of a store key.
 */
#ifndef KV_BYTES_H
#define KV_BYTES_H

#include <stdint.h>

static inline void
bytes_put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t) (v >> (8 * i));
}

static inline uint32_t
bytes_get_le32(const uint8_t *p)
{
	return (uint32_t) p[0] | (uint32_t) p[1] << 8 |
	    (uint32_t) p[2] << 16 | (uint32_t) p[3] << 24;
}

static inline void
bytes_put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t) (v >> (8 * i));
}

static inline uint64_t
bytes_get_le64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v |= (uint64_t) p[i] << (8 * i);
	return v;
}

/* Big-endian, for numbers in keys, whose byte order is their order. */
static inline void
bytes_put_be32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t) (v >> (24 - 8 * i));
}

static inline uint32_t
bytes_get_be32(const uint8_t *p)
{
	return (uint32_t) p[0] << 24 | (uint32_t) p[1] << 16 |
	    (uint32_t) p[2] << 8 | (uint32_t) p[3];
}

static inline void
bytes_put_be64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t) (v >> (56 - 8 * i));
}

static inline uint64_t
bytes_get_be64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

#endif
