/*
 * size_index.c — open addressing with linear probing over a 96-bit
 * fingerprint of the key (XXH3-128); a removed entry stays as a marker
 * until the next rehash so that probe chains stay whole (see
 * size_index.h for what an entry means).
 *
 * A slot is 16 bytes: 64 bits of the fingerprint (which also pick the
 * slot), 32 more, and a word with the size (items are at most 400 KB, so
 * 30 bits) and the slot's state in its top two bits. At most three
 * quarters of the slots are used, so an entry costs 21 to 43 bytes.
 *
 * Tables come from mmap, not malloc: freeing a large malloc'ed block
 * raises glibc's threshold for using mmap, after which RocksDB's memtable
 * blocks came from the heap and their memory stayed with the process
 * after a flush (nodes kept 80-95 MB after loading 1 M items, where they
 * had gone back to 20 MB).
 */
#include "size_index.h"

#include <string.h>
#include <sys/mman.h>
#include <xxhash.h>

#define STATE_SHIFT 30
#define SIZE_MASK ((1u << STATE_SHIFT) - 1)
enum { EMPTY = 0, LIVE = 1, REMOVED = 2 };

struct size_slot {
	uint64_t h;     /* the fingerprint's low 64 bits */
	uint32_t h2;    /* 32 of its high 64 */
	uint32_t word;  /* state << STATE_SHIFT | size */
};

_Static_assert(sizeof(size_slot) == SIZE_INDEX_SLOT_BYTES, "slot size");

typedef struct print {
	uint64_t h;
	uint32_t h2;
} print;

static print
print_of(const uint8_t *key, size_t kl)
{
	XXH128_hash_t x = XXH3_128bits(key, kl);
	return (print) { x.low64, (uint32_t) x.high64 };
}

static unsigned
state(const size_slot *s)
{
	return s->word >> STATE_SHIFT;
}

void
size_index_init(size_index *x, size_budget *budget)
{
	memset(x, 0, sizeof(*x));
	x->budget = budget;
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
table_free(size_index *x)
{
	if (x->slots != NULL) {
		munmap(x->slots, x->cap * sizeof(size_slot));
		atomic_fetch_sub(&x->budget->bytes, x->cap * sizeof(size_slot));
	}
	x->slots = NULL;
	x->cap = 0;
}

void
size_index_fini(size_index *x)
{
	table_free(x);
	size_index_init(x, x->budget);
}

/* The slot holding p, or SIZE_MAX. */
static size_t
find(const size_index *x, print p)
{
	if (x->cap == 0)
		return SIZE_MAX;
	for (size_t i = p.h & (x->cap - 1);; i = (i + 1) & (x->cap - 1)) {
		const size_slot *s = &x->slots[i];
		if (state(s) == EMPTY)
			return SIZE_MAX;
		if (state(s) == LIVE && s->h == p.h && s->h2 == p.h2)
			return i;
	}
}

bool
size_index_get(const size_index *x, const uint8_t *key, size_t kl,
    uint32_t *size)
{
	size_t i = find(x, print_of(key, kl));
	if (i == SIZE_MAX)
		return false;
	*size = x->slots[i].word & SIZE_MASK;
	return true;
}

void
size_index_remove(size_index *x, const uint8_t *key, size_t kl)
{
	size_t i = find(x, print_of(key, kl));
	if (i != SIZE_MAX) {
		x->slots[i].word = (uint32_t) REMOVED << STATE_SHIFT;
		x->n--;
		x->dead++;
	}
}

/*
 * Moves the live entries into a table of cap slots, if the node's budget
 * has room for it beside the others; false otherwise, or without memory.
 */
static bool
rehash(size_index *x, size_t cap)
{
	size_t bytes = cap * sizeof(size_slot);
	size_t was = atomic_fetch_add(&x->budget->bytes, bytes);
	size_t mine = x->cap * sizeof(size_slot);
	if (was - mine + bytes > x->budget->limit) {
		atomic_fetch_sub(&x->budget->bytes, bytes);
		return false;
	}
	size_slot *ns = table_alloc(cap);
	if (ns == NULL) {
		atomic_fetch_sub(&x->budget->bytes, bytes);
		return false;
	}
	for (size_t i = 0; i < x->cap; i++) {
		const size_slot *s = &x->slots[i];
		if (state(s) != LIVE)
			continue;
		size_t j = s->h & (cap - 1);
		while (state(&ns[j]) != EMPTY)
			j = (j + 1) & (cap - 1);
		ns[j] = *s;
	}
	table_free(x);
	x->slots = ns;
	x->cap = cap;
	x->dead = 0;
	return true;
}

void
size_index_set(size_index *x, const uint8_t *key, size_t kl, uint32_t size)
{
	print p = print_of(key, kl);
	size_t i = find(x, p);
	if (size > SIZE_MASK) {
		/* Larger than any item: not kept (cannot happen). */
		if (i != SIZE_MAX)
			size_index_remove(x, key, kl);
		return;
	}
	if (i != SIZE_MAX) {
		x->slots[i].word = (uint32_t) LIVE << STATE_SHIFT | size;
		return;
	}
	/* At most three quarters of the slots used, markers included. */
	if ((x->n + x->dead + 1) * 4 > x->cap * 3) {
		size_t cap = 16;
		while (cap < (x->n + 1) * 2)
			cap *= 2;
		if (!rehash(x, cap))
			return;
	}
	for (i = p.h & (x->cap - 1); state(&x->slots[i]) == LIVE;
	    i = (i + 1) & (x->cap - 1))
		;
	size_slot *s = &x->slots[i];
	if (state(s) == REMOVED)
		x->dead--;
	s->h = p.h;
	s->h2 = p.h2;
	s->word = (uint32_t) LIVE << STATE_SHIFT | size;
	x->n++;
}
