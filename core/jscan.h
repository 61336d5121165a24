/*
 * jscan.h — reading JSON text in place, without allocating: a validator,
 * a walk that reports what it reads, and lookups that re-scan validated
 * text. kv-load checks every answer with it, where a parse into a tree
 * per answer took CPU from the server under test on the same machine;
 * the router builds its request trees from a walk (router/json.h,
 * json_read), which is several times faster than jansson's own parser.
 *
 * A value is the span of its text, {p, n}; n == 0 means absent. Lookups
 * skip over values instead of indexing them: answers are a few KB at most.
 * Nothing here builds JSON; request bodies are printed (workload.c).
 *
 * jscan_doc accepts exactly what jansson 2.14's json_loadb accepts with
 * JSON_DECODE_ANY, so a check judges an answer as it did when it used
 * jansson. Beyond RFC 8259 that means rejecting: \u0000 in any string,
 * integers outside long long, numbers whose magnitude rounds to infinity
 * as a double, and values nested deeper than 2048 (jansson's
 * JSON_PARSER_MAX_DEPTH, counting the value itself: a scalar inside 2048
 * arrays is too deep). And accepting one quirk: a single NUL byte right
 * after a number or a true/false/null literal, which jansson's lexer
 * drops when it pushes the byte back.
 *
 * Read next: chaos/load/workload.h, which judges answers with it.
 */
#ifndef KV_JSCAN_H
#define KV_JSCAN_H

#include <stdbool.h>
#include <stddef.h>

/* Values nested deeper than this are invalid (see above). */
#define JSCAN_MAX_DEPTH 2048

typedef enum jscan_kind {
	JSCAN_NONE, /* absent: no such member, or not a value */
	JSCAN_OBJECT,
	JSCAN_ARRAY,
	JSCAN_STRING,
	JSCAN_NUMBER,
	JSCAN_TRUE,
	JSCAN_FALSE,
	JSCAN_NULL,
} jscan_kind;

/*
 * The text of one value, quotes and brackets included, inside a buffer
 * that jscan_doc validated; valid until that buffer changes. The
 * functions below take values from jscan_doc, jscan_get and jscan_next
 * only; on any other text they stay inside {p, n} but their answers
 * mean nothing.
 */
typedef struct jscan_val {
	const char *p;
	size_t n;
} jscan_val;

/* Walks an array's elements; see jscan_iter_init. */
typedef struct jscan_iter {
	const char *p;
	const char *end;
} jscan_iter;

/* Walks a string's decoded bytes; see jscan_chars_init. */
typedef struct jscan_chars {
	const char *p;
	const char *end;
	unsigned char pend[4]; /* the rest of a decoded \u escape */
	unsigned char npend;
	unsigned char ipend;
} jscan_chars;

/*
 * What a walk reports, in the order of the text: a container's opening
 * (kind JSCAN_OBJECT or JSCAN_ARRAY) and its closing, an object member's
 * name (a string value, quotes included) before its value, and every
 * other value. The spans point into the walked buffer. A callback that
 * returns false stops the walk.
 */
typedef struct jscan_handler {
	bool (*open)(void *arg, jscan_kind kind);
	bool (*close)(void *arg);
	bool (*name)(void *arg, jscan_val name);
	bool (*scalar)(void *arg, jscan_kind kind, jscan_val v);
} jscan_handler;

/*
 * jscan_doc says whether buf[0..len) (borrowed, need not end in NUL) is
 * one JSON value with optional whitespace around it, as defined above.
 * When it is, *root (may be NULL) is that value without the whitespace.
 * Never reads outside buf[0..len).
 */
bool jscan_doc(const char *buf, size_t len, jscan_val *root);

/*
 * jscan_walk is jscan_doc reporting to h (may be NULL) as it reads: true
 * when the text is valid and no callback stopped the walk. The reports
 * come as the text is read, so an invalid text may be reported up to
 * where it goes wrong before the walk returns false.
 */
bool jscan_walk(const char *buf, size_t len, const jscan_handler *h,
    void *arg, jscan_val *root);

/* jscan_kind_of returns what v is; JSCAN_NONE when absent. */
jscan_kind jscan_kind_of(jscan_val v);

/*
 * jscan_get returns the member of object obj named name (a C string,
 * compared with the decoded member names), or an absent value when obj is
 * not an object or has no such member. When the name occurs more than
 * once, the last occurrence wins, as in jansson.
 */
jscan_val jscan_get(jscan_val obj, const char *name);

/*
 * jscan_members_init starts *it at the first member of obj; when obj is
 * not an object, there are none. jscan_member_next moves to the next
 * member, its name (a string value, quotes included) in *name and its
 * value in *value: false when there is none.
 */
void jscan_members_init(jscan_iter *it, jscan_val obj);
bool jscan_member_next(jscan_iter *it, jscan_val *name, jscan_val *value);

/*
 * jscan_iter_init starts *it at the first element of arr; when arr is not
 * an array, there are no elements.
 */
void jscan_iter_init(jscan_iter *it, jscan_val arr);

/* jscan_next moves to the next element: false when there is none. */
bool jscan_next(jscan_iter *it, jscan_val *elem);

/*
 * jscan_int reads v when it is an integer as jansson sees one: a number
 * without fraction or exponent that fits in long long. False otherwise,
 * with *out unchanged.
 */
bool jscan_int(jscan_val v, long long *out);

/*
 * jscan_str_eq says whether v is a string whose decoded content equals s
 * (a C string; decoded strings cannot hold NUL).
 */
bool jscan_str_eq(jscan_val v, const char *s);

/*
 * jscan_str_copy writes the decoded content of string v into buf[0..cap),
 * cut short to cap - 1 bytes and NUL-terminated when cap > 0, as
 * snprintf does. Returns the full decoded length (so it fit when below
 * cap), or 0 with buf empty when v is not a string.
 */
size_t jscan_str_copy(jscan_val v, char *buf, size_t cap);

/*
 * jscan_chars_init starts *c at the first decoded byte of string v; when
 * v is not a string there are none.
 */
void jscan_chars_init(jscan_chars *c, jscan_val v);

/*
 * jscan_chars_next returns the next decoded byte (0..255), or -1 at the
 * end.
 */
int jscan_chars_next(jscan_chars *c);

#endif
