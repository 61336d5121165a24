/*
 * size_index.c — open addressing with linear probing over XXH3 of the
 * key; a removed entry stays as a marker until the next rehash so that
 * probe chains stay whole (see size_index.h for what an entry means).
 *
 * Keys live in the slots, so that an index is one table, and tables
 * come from mmap, not malloc: freeing a large malloc'ed block raises
 * glibc's threshold for using mmap, after which RocksDB's memtable blocks
 * came from the heap and their memory stayed with the process after a
 * flush (nodes kept 80-95 MB after loading 1 M items, where they had
 * gone back to 20 MB).
 */
#include "size_index.h"

#include <string.h>
#include <sys/mman.h>
#include <xxhash.h>

enum { EMPTY = 0, LIVE = 1, REMOVED = 2 };

struct size_slot {
	uint64_t h;
	uint32_t size;
	uint8_t state;
	uint8_t kl;
	uint8_t key[SIZE_INDEX_MAX_KEY];
};

void
size_index_init(size_index *x, atomic_size_t *total)
{
	memset(x, 0, sizeof(*x));
	x->total = total;
}

static bool
live(const size_slot *s)
{
	return s->state == LIVE;
}

/* A zeroed table of cap slots (every slot EMPTY), or NULL. */
static size_slot *
table_alloc(size_t cap)
{
	void *p = mmap(NULL, cap * sizeof(size_slot), PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static void
table_free(size_slot *t, size_t cap)
{
	if (t != NULL)
		munmap(t, cap * sizeof(size_slot));
}

void
size_index_fini(size_index *x)
{
	table_free(x->slots, x->cap);
	if (x->total != NULL)
		atomic_fetch_sub(x->total, x->n);
	size_index_init(x, x->total);
}

/* The slot holding key, or SIZE_MAX. */
static size_t
find(const size_index *x, const uint8_t *key, size_t kl, uint64_t h)
{
	if (x->cap == 0)
		return SIZE_MAX;
	for (size_t i = h & (x->cap - 1);; i = (i + 1) & (x->cap - 1)) {
		const size_slot *s = &x->slots[i];
		if (s->state == EMPTY)
			return SIZE_MAX;
		if (live(s) && s->h == h && s->kl == kl &&
		    memcmp(s->key, key, kl) == 0)
			return i;
	}
}

bool
size_index_get(const size_index *x, const uint8_t *key, size_t kl,
    uint32_t *size)
{
	size_t i = find(x, key, kl, XXH3_64bits(key, kl));
	if (i == SIZE_MAX)
		return false;
	*size = x->slots[i].size;
	return true;
}

static void
drop_slot(size_index *x, size_t i)
{
	x->slots[i].state = REMOVED;
	x->n--;
	x->dead++;
	atomic_fetch_sub(x->total, 1);
}

void
size_index_remove(size_index *x, const uint8_t *key, size_t kl)
{
	size_t i = find(x, key, kl, XXH3_64bits(key, kl));
	if (i != SIZE_MAX)
		drop_slot(x, i);
}

/* Moves the live entries into a table of cap slots; false: no memory. */
static bool
rehash(size_index *x, size_t cap)
{
	size_slot *ns = table_alloc(cap);
	if (ns == NULL)
		return false;
	for (size_t i = 0; i < x->cap; i++) {
		const size_slot *s = &x->slots[i];
		if (!live(s))
			continue;
		size_t j = s->h & (cap - 1);
		while (ns[j].state != EMPTY)
			j = (j + 1) & (cap - 1);
		ns[j] = *s;
	}
	table_free(x->slots, x->cap);
	x->slots = ns;
	x->cap = cap;
	x->dead = 0;
	return true;
}

void
size_index_set(size_index *x, const uint8_t *key, size_t kl, uint32_t size)
{
	uint64_t h = XXH3_64bits(key, kl);
	size_t i = find(x, key, kl, h);
	if (i != SIZE_MAX) {
		x->slots[i].size = size;
		return;
	}
	if (kl > SIZE_INDEX_MAX_KEY ||
	    atomic_load(x->total) >= SIZE_INDEX_MAX_ENTRIES)
		return;
	/* At most three quarters of the slots used, markers included. */
	if ((x->n + x->dead + 1) * 4 > x->cap * 3) {
		size_t cap = 16;
		while (cap < (x->n + 1) * 2)
			cap *= 2;
		if (!rehash(x, cap))
			return;
	}
	for (i = h & (x->cap - 1); live(&x->slots[i]);
	    i = (i + 1) & (x->cap - 1))
		;
	size_slot *s = &x->slots[i];
	if (s->state == REMOVED)
		x->dead--;
	s->h = h;
	s->size = size;
	s->state = LIVE;
	s->kl = (uint8_t) kl;
	memcpy(s->key, key, kl);
	x->n++;
	atomic_fetch_add(x->total, 1);
}
