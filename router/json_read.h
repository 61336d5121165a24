/*
 * json_read.h — request bodies into jansson trees, faster than jansson.
 *
 * jansson's parser reads a character at a time through a stream and
 * takes about 3 us for a 200-byte UpdateItem body here, of which
 * building the tree is 0.5 us. json_read walks the text with jscan
 * (core/jscan.h), which checks it a word at a time where it can, and
 * builds the same tree with jansson's own constructors.
 *
 * It takes on only what it can answer exactly as
 * json_loadb(buf, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL) would,
 * and only an object at the top: everything else (invalid text, a
 * duplicate member, a \u0000, very deep nesting, no memory) returns NULL,
 * and the caller asks jansson, which gives the verdict and its message.
 * So the trees, and the errors, are jansson's either way.
 */
#ifndef KV_ROUTER_JSON_READ_H
#define KV_ROUTER_JSON_READ_H

#include <jansson.h>
#include <stddef.h>

#include "arena.h"

/* Containers nested deeper than this are left to jansson. */
#define JSON_READ_MAX_DEPTH 160

/*
 * json_read returns a new reference to the object that buf[0..len)
 * (borrowed, need not end in NUL) holds, or NULL when it does not take
 * the text on (above).
 */
json_t *json_read(const char *buf, size_t len);

/*
 * json_read_in is json_read building the tree in arena a instead of
 * jansson's heap: the tree is valid until arena_fini(a) and must not be
 * released with json_decref (arena_fini does). Taking references into it
 * (json_incref, json_object_set of its values into another tree) is fine
 * as long as none outlives the arena. On NULL the arena may hold part of
 * a tree, which arena_fini releases.
 *
 * A request of 30 values otherwise costs some 60 mallocs and frees,
 * which, with dozens of requests in flight on one thread, mostly miss
 * glibc's per-thread caches.
 */
json_t *json_read_in(arena *a, const char *buf, size_t len);

/*
 * For this, a program linking json_read_in has jansson allocate through
 * json_read.c, from before main: from the heap as before, except on a
 * thread inside json_read_in.
 */

#endif
