/*
 * arena.h — a bump allocator for the lifetime of one request.
 *
 * Attribute value trees, decoded items and parsed requests are built in an
 * arena and released at once with arena_fini(). Nothing in an arena is freed
 * individually. An arena is owned by one thread at a time; it takes no lock.
 */
#ifndef KV_ARENA_H
#define KV_ARENA_H

#include <stddef.h>

typedef struct arena_chunk arena_chunk;
typedef struct arena {
	arena_chunk *head; /* newest chunk; older ones follow */
	size_t used;       /* bytes handed out, for limits and tests */
} arena;

/* arena_init prepares an empty arena; cannot fail. */
void arena_init(arena *a);

/* arena_fini releases every allocation; safe on a zeroed arena. */
void arena_fini(arena *a);

/*
 * arena_alloc returns n zeroed bytes aligned for any type, valid until
 * arena_fini, or NULL when memory is exhausted.
 */
void *arena_alloc(arena *a, size_t n);

/* arena_alloc_raw is arena_alloc without the zeroing. */
void *arena_alloc_raw(arena *a, size_t n);

/* arena_dup returns a copy of n bytes plus a NUL terminator, or NULL. */
char *arena_dup(arena *a, const void *p, size_t n);

#endif
