/*
 * codec.h — the binary form of an attribute value tree.
 *
 * Items are stored in RocksDB and carried between router and node in this
 * form; protobuf only wraps the bytes. It is compact (a type byte, varint
 * lengths), decodes without copying into a fresh tree in an arena, and
 * checks every length against the buffer so that corrupt bytes give
 * KV_CORRUPT, never a read past the end. It is not order-preserving; sort
 * keys use keyenc.h.
 */
#ifndef KV_CODEC_H
#define KV_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "err.h"
#include "value.h"

/* codec_size returns the exact number of bytes codec_write will produce. */
size_t codec_size(const value *v);

/*
 * codec_write writes v into buf, which has at least codec_size(v) bytes,
 * and returns the number of bytes written.
 */
size_t codec_write(const value *v, uint8_t *buf);

/*
 * codec_encode returns owned bytes (free with free()) holding v in
 * *out, their length in *len. Returns KV_OK or KV_ENOMEM.
 */
kv_err codec_encode(const value *v, uint8_t **out, size_t *len);

/*
 * codec_decode reads one value from buf[0..len) into *out, allocating the
 * tree in a. Strings in the tree may point into buf: buf must stay valid
 * as long as the tree is used. Returns KV_OK, KV_CORRUPT (bad bytes,
 * trailing bytes, nesting deeper than VALUE_MAX_DEPTH + 1) or KV_ENOMEM.
 */
kv_err codec_decode(arena *a, const uint8_t *buf, size_t len, value *out);

#endif
