/*
 * catalog_test.c — partition layout and lookups of core/catalog.c.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"

Test(catalog, split_even_covers_the_hash_space_without_gaps)
{
	for (size_t n = 1; n <= 64; n++) {
		table t;
		memset(&t, 0, sizeof(t));
		cr_assert_eq(table_split_even(&t, n, 2, 3), KV_OK);
		cr_assert_eq(t.n_parts, n);
		cr_assert_eq(t.parts[0].lo, 0);
		cr_assert_eq(t.parts[n - 1].last, UINT64_MAX);
		for (size_t i = 0; i < n; i++) {
			cr_assert_leq(t.parts[i].lo, t.parts[i].last);
			cr_assert_eq(t.parts[i].id, i);
			cr_assert_eq(t.parts[i].epoch, 1);
			cr_assert_eq(t.parts[i].node, (2 + i) % 3);
			if (i > 0)
				cr_assert_eq(t.parts[i].lo,
				    t.parts[i - 1].last + 1);
		}
		table_fini(&t);
	}
}

Test(catalog, split_even_boundaries_are_exact_fractions)
{
	table t;
	memset(&t, 0, sizeof(t));
	cr_assert_eq(table_split_even(&t, 4, 0, 3), KV_OK);
	cr_assert_eq(t.parts[1].lo, UINT64_C(0x4000000000000000));
	cr_assert_eq(t.parts[2].lo, UINT64_C(0x8000000000000000));
	cr_assert_eq(t.parts[3].lo, UINT64_C(0xc000000000000000));
	cr_assert_eq(t.parts[0].last, UINT64_C(0x3fffffffffffffff));
	table_fini(&t);
}

Test(catalog, partition_for_finds_the_owner_of_every_hash)
{
	table t;
	memset(&t, 0, sizeof(t));
	cr_assert_eq(table_split_even(&t, 7, 0, 3), KV_OK);
	uint64_t x = 88172645463325252ull;
	for (int k = 0; k < 100000; k++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		const partition *p = table_partition_for(&t, x);
		cr_assert_not_null(p);
		cr_assert(x >= p->lo && x <= p->last);
	}
	cr_assert_eq(table_partition_for(&t, 0)->id, 0);
	cr_assert_eq(table_partition_for(&t, UINT64_MAX)->id, 6);
	table_fini(&t);
}

Test(catalog, find_uses_exact_bytewise_names)
{
	static char n0[] = "Music", n1[] = "music", n2[] = "zeta";
	table tables[3];
	memset(tables, 0, sizeof(tables));
	/* Sorted bytewise: uppercase before lowercase. */
	tables[0].name = n0;
	tables[1].name = n1;
	tables[2].name = n2;
	catalog c = { .version = 1, .tables = tables, .n_tables = 3 };
	cr_assert_eq(catalog_find(&c, "Music", 5), &tables[0]);
	cr_assert_eq(catalog_find(&c, "music", 5), &tables[1]);
	cr_assert_eq(catalog_find(&c, "zeta", 4), &tables[2]);
	cr_assert_null(catalog_find(&c, "Musi", 4));
	cr_assert_null(catalog_find(&c, "Musicx", 6));
	cr_assert_null(catalog_find(&c, "", 0));
}
