/*
 * value.h — DynamoDB attribute values as a tree, shared by router and node.
 *
 * A value is one of S, N, B, SS, NS, BS, M, L, NULL, BOOL. An item is a
 * value of type M. Trees are built in an arena (arena.h) and never freed
 * piece by piece. Strings and binaries are raw bytes (binary is decoded,
 * not base64). JSON lives in router/json.c and the binary form in codec.h;
 * this file only knows the tree.
 */
#ifndef KV_VALUE_H
#define KV_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "number.h"

typedef enum val_type {
	VAL_S = 1,
	VAL_N,
	VAL_B,
	VAL_SS,
	VAL_NS,
	VAL_BS,
	VAL_M,
	VAL_L,
	VAL_NULL,
	VAL_BOOL,
} val_type;

/* Deepest nesting of M and L that DynamoDB accepts (an item is level 0). */
#define VALUE_MAX_DEPTH 32

/* DynamoDB's message for values nested deeper than that. */
#define VALUE_NESTING_MSG                                                  \
	"Nesting Levels have exceeded supported limits: Attributes in the " \
	"item have nested levels beyond supported limit"

typedef struct value value;
typedef struct attr attr;

struct value {
	val_type type;
	bool b;     /* BOOL: the value; NULL: always true */
	size_t len; /* S, B: bytes; SS, NS, BS, L: elements; M: attributes */
	union {
		const char *bytes; /* S, B */
		number *num;       /* N */
		value *elems;      /* SS, NS, BS (members are S, N, B), L */
		attr *attrs;       /* M */
	} u;
};

struct attr {
	const char *name;
	size_t name_len;
	value v;
};

/* value_type_name returns "S", "N", ..., "BOOL" for t (static). */
const char *value_type_name(val_type t);

/*
 * value_type_from_name parses "S" ... "BOOL" (exactly, n bytes) and returns
 * the type, or 0 when the name is not a DynamoDB type.
 */
val_type value_type_from_name(const char *s, size_t n);

/*
 * value_cmp orders two scalar values of the same type (S, N or B) as
 * DynamoDB orders sort keys: numbers numerically, strings and binaries by
 * unsigned bytes. Values of other types compare by type only.
 */
int value_cmp(const value *a, const value *b);

/*
 * value_equal reports deep equality as DynamoDB defines it: numbers by
 * value, sets as sets (order does not matter), maps by names, lists in
 * order.
 */
bool value_equal(const value *a, const value *b);

/* item_attr returns the attribute named name[0..n) of item (type M), or NULL. */
const value *item_attr(const value *item, const char *name, size_t n);

/*
 * value_copy deep-copies src into *dst with every byte in a. Returns
 * KV_OK or KV_ENOMEM.
 */
kv_err value_copy(arena *a, const value *src, value *dst);

#endif
