/*
 * expr_codec.h — parsed expression trees to bytes and back, for the wire
 * between router and node (see expr_codec.c for the layout). The router
 * parses and checks; the node decodes and evaluates, with no parser and no
 * JSON on its side.
 */
#ifndef KV_EXPR_CODEC_H
#define KV_EXPR_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "err.h"
#include "expr.h"

/*
 * expr_codec_encode_cond / _update return owned bytes (free with free())
 * in *out and their length in *len. Borrow the tree. KV_OK or KV_ENOMEM.
 */
kv_err expr_codec_encode_cond(const expr_cond *c, uint8_t **out,
    size_t *len);
kv_err expr_codec_encode_update(const expr_update *u, uint8_t **out,
    size_t *len);

/*
 * expr_codec_decode_cond / _update rebuild a tree in a from buf[0..len).
 * Names and values in the tree point into buf, which must outlive it.
 * Returns KV_OK, KV_CORRUPT (bytes that no encoder wrote, trailing bytes,
 * nesting beyond the parser's own bound) or KV_ENOMEM.
 */
kv_err expr_codec_decode_cond(arena *a, const uint8_t *buf, size_t len,
    expr_cond **out);
kv_err expr_codec_decode_update(arena *a, const uint8_t *buf, size_t len,
    expr_update **out);

#endif
