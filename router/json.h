/*
 * json.h — DynamoDB's JSON shapes for attribute values and items.
 *
 * The only file that knows how an AttributeValue looks in DynamoDB's JSON
 * 1.0 protocol ({"S": "x"}, {"N": "12.5"}, {"B": "<base64>"}, {"M": {...}},
 * ...). Converting JSON to a value tree also validates it the way DynamoDB
 * does and reports DynamoDB's own error (SerializationException for JSON of
 * the wrong shape, ValidationException for values DynamoDB refuses), so the
 * rest of the router deals only in valid trees. Request-level fields
 * (TableName, Key, ...) are read in router/request.c.
 */
#ifndef KV_ROUTER_JSON_H
#define KV_ROUTER_JSON_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "arena.h"
#include "err.h"
#include "value.h"

typedef enum json_err_kind {
	JSON_ERR_VALIDATION = 1,    /* ValidationException */
	JSON_ERR_SERIALIZATION = 2, /* SerializationException */
} json_err_kind;

typedef struct json_error {
	json_err_kind kind;
	char msg[512];
} json_error;

/* DynamoDB's longest attribute name, in bytes (names of 64 KB fail). */
#define JSON_MAX_NAME 65535

/*
 * json_check_name checks an attribute name of len bytes (an item's, or a
 * name given in AttributesToGet, Expected,
 * AttributeUpdates, a legacy filter or ExpressionAttributeNames): not
 * empty, at most JSON_MAX_NAME bytes. Returns KV_OK, or KV_EINVAL with
 * DynamoDB's ValidationException text in *err. Borrows name.
 */
kv_err json_check_name(const char *name, size_t len, json_error *err);

/*
 * json_to_value converts one AttributeValue object into *out, allocating in
 * a. depth is the nesting level of j (0 for a top-level attribute; each M
 * or L adds one; more than VALUE_MAX_DEPTH fails). Returns KV_OK, KV_EINVAL
 * with *err filled in, or KV_ENOMEM. Borrows j.
 */
kv_err json_to_value(arena *a, const json_t *j, int depth, value *out,
    json_error *err);

/*
 * json_to_item converts an object of attribute name -> AttributeValue (an
 * Item, a Key or an ExclusiveStartKey) into a value of type M, its names
 * checked with json_check_name (those of nested maps are not). Same results
 * as json_to_value.
 */
kv_err json_to_item(arena *a, const json_t *j, value *out, json_error *err);

/*
 * json_from_value returns a new reference to the JSON of v ({"N": "100"},
 * binaries in base64, numbers in canonical form), or NULL when memory is
 * exhausted.
 */
json_t *json_from_value(const value *v);

/* json_from_item returns a new reference to the JSON object of an item. */
json_t *json_from_item(const value *item);

/*
 * A JSON text being written: the answers of the single-item verbs and of
 * Query are written straight from value trees, without a jansson tree in
 * between (they are the hot path). Out of memory sets `failed`; later
 * writes are then ignored, and the text is thrown away at the end.
 */
typedef struct jtext {
	char *p;     /* NUL-terminated while not failed */
	size_t len, cap;
	bool failed;
} jtext;

void jtext_init(jtext *t);
void jtext_fini(jtext *t);
/* jtext_raw appends n bytes of s as they are (JSON syntax). */
void jtext_raw(jtext *t, const char *s, size_t n);
/* jtext_lit appends a string literal as it is. */
#define jtext_lit(t, s) jtext_raw((t), (s), sizeof(s) - 1)
/* jtext_string appends s[0..n) as a JSON string, quoted and escaped. */
void jtext_string(jtext *t, const char *s, size_t n);
/* jtext_uint appends v in decimal. */
void jtext_uint(jtext *t, uint64_t v);
/*
 * jtext_member starts the member `name` (a plain literal) of the object
 * being written: a comma unless it is the object's first, the quoted name
 * and a colon.
 */
void jtext_member(jtext *t, const char *name);
/* jtext_json appends the compact JSON of j (borrowed; NULL fails t). */
void jtext_json(jtext *t, const json_t *j);

/*
 * json_write_value and json_write_item append the JSON of v or of an item,
 * byte for byte what json_dumps(json_from_value(v), JSON_COMPACT) gives.
 * The values are valid (S values are UTF-8: they were checked on the way
 * in).
 */
void json_write_value(jtext *t, const value *v);
void json_write_item(jtext *t, const value *item);

#endif
