/*
 * capacity.c — capacity units in half units, and the per-table tally.
 *
 * The whole trick is that an eventually consistent read costs exactly
 * ceil(bytes / 4 KB) half units and a strongly consistent one twice that:
 * halving never rounds, so a Scan of 3953 strongly consistent units costs
 * 3953 half units eventually consistent, printed 1976.5. See capacity.h
 * for the rules and their sources; capacity_test.c replays the guide's
 * examples.
 */
#include "capacity.h"

#include <string.h>

/* units_of returns ceil(bytes / unit), at least 1; cannot overflow. */
static uint64_t
units_of(uint64_t bytes, uint64_t unit)
{
	uint64_t n = bytes / unit + (bytes % unit != 0);

	return n ? n : 1;
}

uint64_t
capacity_read_half_units(uint64_t bytes, bool consistent)
{
	uint64_t units = units_of(bytes, CAPACITY_READ_BYTES);

	/* units <= 2^52, so neither product overflows. */
	return consistent ? 2 * units : units;
}

uint64_t
capacity_write_units(uint64_t old_size, uint64_t new_size)
{
	return units_of(old_size > new_size ? old_size : new_size,
	    CAPACITY_WRITE_BYTES);
}

uint64_t
capacity_txn_read_half_units(uint64_t bytes)
{
	return CAPACITY_TXN_FACTOR * capacity_read_half_units(bytes, true);
}

uint64_t
capacity_txn_write_units(uint64_t old_size, uint64_t new_size)
{
	return CAPACITY_TXN_FACTOR * capacity_write_units(old_size, new_size);
}

double
capacity_to_double(uint64_t half)
{
	return (double) half / 2.0;
}

void
capacity_acc_init(capacity_acc *a)
{
	memset(a, 0, sizeof(*a));
}

void
capacity_acc_add_read(capacity_acc *a, uint64_t half)
{
	a->table.read_half += half;
}

void
capacity_acc_add_write(capacity_acc *a, uint64_t units)
{
	a->table.write_half += 2 * units;
}

/* find returns the share of an index, or NULL. */
static capacity_index_share *
find(capacity_acc *a, capacity_index_kind kind, const char *name,
    size_t name_len)
{
	size_t i;

	for (i = 0; i < a->nindexes; i++) {
		capacity_index_share *s = &a->indexes[i];

		if (s->kind == kind && s->name_len == name_len &&
		    memcmp(s->name, name, name_len) == 0)
			return s;
	}
	return NULL;
}

/* share returns the share of an index, created if new, or NULL if full. */
static capacity_share *
share(capacity_acc *a, capacity_index_kind kind, const char *name,
    size_t name_len)
{
	capacity_index_share *s = find(a, kind, name, name_len);

	if (s != NULL)
		return &s->units;
	if (a->nindexes == CAPACITY_MAX_INDEXES)
		return NULL;
	s = &a->indexes[a->nindexes++];
	s->name = name;
	s->name_len = name_len;
	s->kind = kind;
	s->units = (capacity_share) { 0, 0 };
	return &s->units;
}

kv_err
capacity_acc_add_index_read(capacity_acc *a, capacity_index_kind kind,
    const char *name, size_t name_len, uint64_t half)
{
	capacity_share *s = share(a, kind, name, name_len);

	if (s == NULL)
		return KV_EINVAL;
	s->read_half += half;
	return KV_OK;
}

kv_err
capacity_acc_add_index_write(capacity_acc *a, capacity_index_kind kind,
    const char *name, size_t name_len, uint64_t units)
{
	capacity_share *s = share(a, kind, name, name_len);

	if (s == NULL)
		return KV_EINVAL;
	s->write_half += 2 * units;
	return KV_OK;
}

kv_err
capacity_acc_merge(capacity_acc *dst, const capacity_acc *src)
{
	size_t i, fresh = 0;

	/* Count the new names first, so a refusal changes nothing. */
	for (i = 0; i < src->nindexes; i++) {
		const capacity_index_share *s = &src->indexes[i];

		if (find(dst, s->kind, s->name, s->name_len) == NULL)
			fresh++;
	}
	if (fresh > CAPACITY_MAX_INDEXES - dst->nindexes)
		return KV_EINVAL;
	dst->table.read_half += src->table.read_half;
	dst->table.write_half += src->table.write_half;
	for (i = 0; i < src->nindexes; i++) {
		const capacity_index_share *s = &src->indexes[i];
		capacity_share *d = share(dst, s->kind, s->name, s->name_len);

		d->read_half += s->units.read_half;
		d->write_half += s->units.write_half;
	}
	return KV_OK;
}

uint64_t
capacity_share_total(const capacity_share *s)
{
	return s->read_half + s->write_half;
}

uint64_t
capacity_acc_read_total(const capacity_acc *a)
{
	uint64_t n = a->table.read_half;
	size_t i;

	for (i = 0; i < a->nindexes; i++)
		n += a->indexes[i].units.read_half;
	return n;
}

uint64_t
capacity_acc_write_total(const capacity_acc *a)
{
	uint64_t n = a->table.write_half;
	size_t i;

	for (i = 0; i < a->nindexes; i++)
		n += a->indexes[i].units.write_half;
	return n;
}

uint64_t
capacity_acc_total(const capacity_acc *a)
{
	return capacity_acc_read_total(a) + capacity_acc_write_total(a);
}
