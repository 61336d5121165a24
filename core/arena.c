/*
 * arena.c — chunked bump allocator (see arena.h). Large requests get a chunk
 * of their own so that a 400 KB string does not waste a 400 KB tail.
 */
#include "arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_SIZE 8192

struct arena_chunk {
	arena_chunk *next;
	size_t cap;
	size_t off;
	max_align_t data[];
};

void
arena_init(arena *a)
{
	a->head = NULL;
	a->used = 0;
}

void
arena_fini(arena *a)
{
	arena_chunk *c = a->head;
	while (c != NULL) {
		arena_chunk *next = c->next;
		free(c);
		c = next;
	}
	a->head = NULL;
	a->used = 0;
}

void *
arena_alloc_raw(arena *a, size_t n)
{
	const size_t align = _Alignof(max_align_t);
	size_t need = (n + align - 1) & ~(align - 1);
	if (need < n)
		return NULL;
	arena_chunk *c = a->head;
	if (c == NULL || c->cap - c->off < need) {
		size_t cap = need > CHUNK_SIZE / 2 ? need : CHUNK_SIZE;
		if (cap > SIZE_MAX - sizeof(arena_chunk))
			return NULL;
		arena_chunk *nc = malloc(sizeof(arena_chunk) + cap);
		if (nc == NULL)
			return NULL;
		nc->cap = cap;
		nc->off = 0;
		if (need > CHUNK_SIZE / 2 && c != NULL) {
			/* Keep the current chunk's free tail in front. */
			nc->next = c->next;
			c->next = nc;
			c = nc;
		} else {
			nc->next = c;
			a->head = nc;
			c = nc;
		}
	}
	void *p = (char *) c->data + c->off;
	c->off += need;
	a->used += need;
	return p;
}

void *
arena_alloc(arena *a, size_t n)
{
	void *p = arena_alloc_raw(a, n);
	if (p != NULL)
		memset(p, 0, n);
	return p;
}

char *
arena_dup(arena *a, const void *p, size_t n)
{
	char *d = arena_alloc(a, n + 1);
	if (d == NULL)
		return NULL;
	if (n > 0)
		memcpy(d, p, n);
	d[n] = '\0';
	return d;
}
