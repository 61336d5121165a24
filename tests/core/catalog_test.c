/*
 * catalog_test.c — partition layout, lookups, copies and changes (table_copy,
 * catalog_apply, catalog_clone) of core/catalog.c.
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

/* ---- table_copy, catalog_apply, catalog_clone ---- */

static char *
xstrdup(const char *s)
{
	char *d = strdup(s);
	cr_assert_not_null(d);
	return d;
}

/*
 * sample_table fills t (owned: table_fini) with every field set: a sort
 * key and three attribute definitions when `range`, `parts` partitions.
 */
static void
sample_table(table *t, const char *name, uint32_t id, bool range,
    size_t parts)
{
	memset(t, 0, sizeof(*t));
	t->name = xstrdup(name);
	t->id = id;
	t->uuid = xstrdup("0f8fad5b-d9cb-469f-a165-70867728950e");
	t->hash = (key_def) { xstrdup("pk"), VAL_S };
	if (range) {
		t->range = (key_def) { xstrdup("sk"), VAL_N };
		t->n_attr_defs = 3;
		t->attr_defs = calloc(3, sizeof(key_def));
		cr_assert_not_null(t->attr_defs);
		t->attr_defs[0] = (key_def) { xstrdup("pk"), VAL_S };
		t->attr_defs[1] = (key_def) { xstrdup("sk"), VAL_N };
		t->attr_defs[2] = (key_def) { xstrdup("blob"), VAL_B };
	}
	t->billing = BILLING_PROVISIONED;
	t->rcu = 5;
	t->wcu = 7;
	t->status = TABLE_ACTIVE;
	t->created_ms = 1700000000123LL;
	t->last_increase_ms = 1700000001000LL;
	t->last_decrease_ms = 1700000002000LL;
	t->decreases_today = 3;
	t->decreases_day = 19675;
	t->billing_changed_ms = 1700000003000LL;
	if (parts > 0) {
		cr_assert_eq(table_split_even(t, parts, id % 3, 3), KV_OK);
		t->parts[parts - 1].epoch = 1ULL << 40;
	}
	if (range) {
		/* One global index, INCLUDE with two attributes. */
		t->n_indexes = 1;
		t->indexes = calloc(1, sizeof(index_def));
		cr_assert_not_null(t->indexes);
		index_def *d = &t->indexes[0];
		d->name = xstrdup("by_blob");
		d->table_id = id + 100;
		d->hash = (key_def) { xstrdup("blob"), VAL_B };
		d->range = (key_def) { xstrdup("sk"), VAL_N };
		d->projection = PROJECT_INCLUDE;
		d->n_include = 2;
		d->include = calloc(2, sizeof(char *));
		cr_assert_not_null(d->include);
		d->include[0] = xstrdup("a");
		d->include[1] = xstrdup("b");
		d->rcu = 3;
	}
}

static void
expect_def_eq(const key_def *a, const key_def *b, const char *what)
{
	if (b->name == NULL) {
		cr_assert_null(a->name, "%s", what);
		return;
	}
	cr_assert_not_null(a->name, "%s", what);
	cr_assert_str_eq(a->name, b->name, "%s", what);
	cr_assert_eq(a->type, b->type, "%s", what);
}

/* Every field equal; and, when `deep`, no pointer shared. */
static void
expect_table_same(const table *a, const table *b, bool deep)
{
	cr_assert_str_eq(a->name, b->name);
	cr_assert_eq(a->id, b->id);
	if (b->uuid == NULL)
		cr_assert_null(a->uuid);
	else
		cr_assert_str_eq(a->uuid, b->uuid);
	expect_def_eq(&a->hash, &b->hash, "hash");
	expect_def_eq(&a->range, &b->range, "range");
	cr_assert_eq(a->n_attr_defs, b->n_attr_defs);
	for (size_t i = 0; i < a->n_attr_defs; i++)
		expect_def_eq(&a->attr_defs[i], &b->attr_defs[i], "attr");
	cr_assert_eq(a->billing, b->billing);
	cr_assert_eq(a->rcu, b->rcu);
	cr_assert_eq(a->wcu, b->wcu);
	cr_assert_eq(a->status, b->status);
	cr_assert_eq(a->created_ms, b->created_ms);
	cr_assert_eq(a->last_increase_ms, b->last_increase_ms);
	cr_assert_eq(a->last_decrease_ms, b->last_decrease_ms);
	cr_assert_eq(a->decreases_today, b->decreases_today);
	cr_assert_eq(a->decreases_day, b->decreases_day);
	cr_assert_eq(a->billing_changed_ms, b->billing_changed_ms);
	cr_assert_eq(a->n_parts, b->n_parts);
	if (a->n_parts > 0)
		cr_assert_eq(memcmp(a->parts, b->parts,
		    a->n_parts * sizeof(partition)), 0);
	cr_assert_eq(a->n_indexes, b->n_indexes);
	for (size_t i = 0; i < a->n_indexes; i++) {
		const index_def *x = &a->indexes[i], *y = &b->indexes[i];
		cr_assert_str_eq(x->name, y->name);
		cr_assert_eq(x->table_id, y->table_id);
		expect_def_eq(&x->hash, &y->hash, "index hash");
		expect_def_eq(&x->range, &y->range, "index range");
		cr_assert_eq(x->projection, y->projection);
		cr_assert_eq(x->n_include, y->n_include);
		for (size_t k = 0; k < x->n_include; k++) {
			cr_assert_str_eq(x->include[k], y->include[k]);
			if (deep)
				cr_assert_neq(x->include[k], y->include[k]);
		}
		cr_assert_eq(x->rcu, y->rcu);
		if (deep)
			cr_assert_neq(x->name, y->name);
	}
	if (!deep)
		return;
	cr_assert_neq(a->name, b->name);
	if (b->uuid != NULL)
		cr_assert_neq(a->uuid, b->uuid);
	cr_assert_neq(a->hash.name, b->hash.name);
	if (b->range.name != NULL)
		cr_assert_neq(a->range.name, b->range.name);
	if (b->n_attr_defs > 0) {
		cr_assert_neq(a->attr_defs, b->attr_defs);
		for (size_t i = 0; i < b->n_attr_defs; i++)
			cr_assert_neq(a->attr_defs[i].name,
			    b->attr_defs[i].name);
	}
	if (b->n_parts > 0)
		cr_assert_neq(a->parts, b->parts);
}

/* A catalog (owned: catalog_free) of the tables named, ids 10, 11, ... */
static catalog *
sample_catalog(uint64_t version, const char *const *names, size_t n)
{
	catalog *c = calloc(1, sizeof(*c));
	cr_assert_not_null(c);
	c->version = version;
	c->next_table_id = (uint32_t) (10 + n);
	c->n_tables = n;
	if (n > 0) {
		c->tables = calloc(n, sizeof(table));
		cr_assert_not_null(c->tables);
	}
	for (size_t i = 0; i < n; i++)
		sample_table(&c->tables[i], names[i], (uint32_t) (10 + i),
		    i % 2 == 0, 1 + i);
	return c;
}

static void
expect_names(const catalog *c, const char *const *names, size_t n)
{
	cr_assert_eq(c->n_tables, n, "%zu tables, expected %zu",
	    c->n_tables, n);
	for (size_t i = 0; i < n; i++)
		cr_assert_str_eq(c->tables[i].name, names[i], "table %zu", i);
}

Test(catalog, table_copy_is_deep_and_outlives_the_original)
{
	table t, copy;
	sample_table(&t, "orders", 7, true, 5);
	cr_assert_eq(table_copy(&t, &copy), KV_OK);
	expect_table_same(&copy, &t, true);

	/* Scribble over the original and free it: the copy stands. */
	table keep;
	sample_table(&keep, "orders", 7, true, 5);
	t.name[0] = 'X';
	t.attr_defs[2].name[0] = 'X';
	t.indexes[0].include[1][0] = 'X';
	t.parts[0].epoch = 99;
	table_fini(&t);
	expect_table_same(&copy, &keep, true);
	table_fini(&copy);
	table_fini(&keep);
}

Test(catalog, table_copy_keeps_absent_parts_absent)
{
	table t, copy;
	sample_table(&t, "plain", 3, false, 0);
	free(t.uuid);
	t.uuid = NULL;
	cr_assert_eq(table_copy(&t, &copy), KV_OK);
	expect_table_same(&copy, &t, false);
	cr_assert_null(copy.uuid);
	cr_assert_null(copy.range.name);
	cr_assert_null(copy.attr_defs);
	cr_assert_eq(copy.n_attr_defs, 0);
	cr_assert_null(copy.parts);
	cr_assert_eq(copy.n_parts, 0);
	table_fini(&copy);
	table_fini(&t);
}

Test(catalog, apply_adds_replaces_and_removes_by_id)
{
	static const char *const names[] = { "alpha", "gamma", "mu" };
	catalog *base = sample_catalog(5, names, 3), *out = NULL;
	table ups[2];
	uint32_t gone[] = { 12, 999 }; /* "mu", and an id nobody has */

	sample_table(&ups[0], "beta", 13, true, 2);  /* new */
	sample_table(&ups[1], "gamma", 11, false, 4); /* changed */
	ups[1].parts[2].epoch = 77;
	cr_assert_eq(catalog_apply(base, ups, 2, gone, 2, 6, 14, &out),
	    KV_OK);
	cr_assert_not_null(out);
	cr_assert_eq(out->version, 6);
	cr_assert_eq(out->next_table_id, 14);
	static const char *const want[] = { "alpha", "beta", "gamma" };
	expect_names(out, want, 3);
	expect_table_same(&out->tables[0], &base->tables[0], true);
	expect_table_same(&out->tables[1], &ups[0], true);
	expect_table_same(&out->tables[2], &ups[1], true);
	cr_assert_eq(out->tables[2].parts[2].epoch, 77);

	/* base is borrowed: untouched. */
	cr_assert_eq(base->version, 5);
	expect_names(base, names, 3);
	cr_assert_eq(base->tables[1].n_parts, 2);
	cr_assert_eq(base->tables[1].parts[0].epoch, 1);

	/* Everything in out is its own: free the inputs first. */
	catalog_free(base);
	table_fini(&ups[0]);
	table_fini(&ups[1]);
	for (size_t i = 0; i < out->n_tables; i++)
		cr_assert(table_parts_valid(&out->tables[i]));
	catalog_free(out);
}

Test(catalog, apply_follows_a_rename_of_one_id)
{
	static const char *const names[] = { "alpha", "beta" };
	catalog *base = sample_catalog(1, names, 2), *out = NULL;
	table up;

	/* id 10 ("alpha") is now called "zulu": the old name goes. */
	sample_table(&up, "zulu", 10, true, 1);
	cr_assert_eq(catalog_apply(base, &up, 1, NULL, 0, 2, 12, &out),
	    KV_OK);
	static const char *const want[] = { "beta", "zulu" };
	expect_names(out, want, 2);
	cr_assert_eq(out->tables[1].id, 10);
	cr_assert_null(catalog_find(out, "alpha", 5));
	cr_assert_not_null(catalog_find(out, "zulu", 4));
	catalog_free(out);
	catalog_free(base);
	table_fini(&up);
}

Test(catalog, apply_sorts_bytewise_and_find_works_on_the_result)
{
	table ups[4];
	catalog *out = NULL;

	sample_table(&ups[0], "zeta", 1, false, 1);
	sample_table(&ups[1], "Music", 2, false, 1);
	sample_table(&ups[2], "music", 3, true, 1);
	sample_table(&ups[3], "Mu", 4, false, 1);
	cr_assert_eq(catalog_apply(NULL, ups, 4, NULL, 0, 1, 5, &out), KV_OK);
	static const char *const want[] = { "Mu", "Music", "music", "zeta" };
	expect_names(out, want, 4);
	for (size_t i = 0; i < 4; i++)
		cr_assert_eq(catalog_find(out, want[i], strlen(want[i])),
		    &out->tables[i]);
	catalog_free(out);
	for (size_t i = 0; i < 4; i++)
		table_fini(&ups[i]);
}

Test(catalog, apply_to_null_base_with_nothing_is_an_empty_catalog)
{
	catalog *out = NULL;
	cr_assert_eq(catalog_apply(NULL, NULL, 0, NULL, 0, 9, 4, &out), KV_OK);
	cr_assert_not_null(out);
	cr_assert_eq(out->version, 9);
	cr_assert_eq(out->next_table_id, 4);
	cr_assert_eq(out->n_tables, 0);
	cr_assert_null(catalog_find(out, "x", 1));
	catalog_free(out);
}

Test(catalog, apply_removing_every_table_leaves_none)
{
	static const char *const names[] = { "a", "b", "c" };
	catalog *base = sample_catalog(3, names, 3), *out = NULL;
	uint32_t gone[] = { 12, 10, 11 };
	cr_assert_eq(catalog_apply(base, NULL, 0, gone, 3, 4, 13, &out),
	    KV_OK);
	cr_assert_eq(out->n_tables, 0);
	cr_assert_eq(out->version, 4);
	catalog_free(out);
	catalog_free(base);
}

Test(catalog, apply_refuses_a_second_table_of_one_name)
{
	static const char *const names[] = { "alpha", "beta" };
	catalog *base = sample_catalog(1, names, 2), *out = NULL;
	table up;

	/* A new id under a name that another id holds. */
	sample_table(&up, "beta", 40, true, 3);
	out = (catalog *) 0x1; /* untouched on failure */
	cr_assert_eq(catalog_apply(base, &up, 1, NULL, 0, 2, 41, &out),
	    KV_CORRUPT);
	cr_assert_eq(out, (catalog *) 0x1);

	/* Fine once the holder of the name goes in the same change. */
	uint32_t gone = 11;
	out = NULL;
	cr_assert_eq(catalog_apply(base, &up, 1, &gone, 1, 2, 41, &out),
	    KV_OK);
	cr_assert_eq(out->n_tables, 2);
	cr_assert_eq(catalog_find(out, "beta", 4)->id, 40);
	catalog_free(out);
	table_fini(&up);
	catalog_free(base);
}

Test(catalog, apply_refuses_two_upserts_of_one_name)
{
	table ups[2];
	catalog *out = NULL;
	sample_table(&ups[0], "same", 1, false, 1);
	sample_table(&ups[1], "same", 2, true, 2);
	cr_assert_eq(catalog_apply(NULL, ups, 2, NULL, 0, 1, 3, &out),
	    KV_CORRUPT);
	cr_assert_null(out);
	table_fini(&ups[0]);
	table_fini(&ups[1]);
}

Test(catalog, clone_is_a_deep_copy_with_the_same_version)
{
	static const char *const names[] = { "alpha", "beta", "gamma" };
	catalog *c = sample_catalog(0x123456789aULL, names, 3), *copy = NULL;
	cr_assert_eq(catalog_clone(c, &copy), KV_OK);
	cr_assert_neq(copy, c);
	cr_assert_eq(copy->version, c->version);
	cr_assert_eq(copy->next_table_id, c->next_table_id);
	cr_assert_eq(copy->n_tables, 3);
	cr_assert_neq(copy->tables, c->tables);
	for (size_t i = 0; i < 3; i++)
		expect_table_same(&copy->tables[i], &c->tables[i], true);
	catalog_free(c);
	/* The clone is complete on its own (ASan sees any sharing). */
	expect_names(copy, names, 3);
	cr_assert_eq(copy->tables[2].n_parts, 3);
	catalog_free(copy);
}

Test(catalog, clone_of_an_empty_catalog)
{
	catalog c = { .version = 7, .next_table_id = 1 }, *copy = NULL;
	cr_assert_eq(catalog_clone(&c, &copy), KV_OK);
	cr_assert_eq(copy->version, 7);
	cr_assert_eq(copy->next_table_id, 1);
	cr_assert_eq(copy->n_tables, 0);
	catalog_free(copy);
	catalog_free(NULL);
}

/*
 * A table of 4 partitions whose second hash range is cut down to one hash
 * h, split on the sort key into keyed partitions at key bounds "b", "d"
 * (layout: [0, h-1] [h, h: ..b) [h, h: b..d) [h, h: d..) [h+1, ...] ...).
 */
static void
keyed_table(table *t)
{
	memset(t, 0, sizeof(*t));
	cr_assert_eq(table_split_even(t, 3, 0, 3), KV_OK);
	uint64_t h = t->parts[1].lo;
	partition *np = calloc(6, sizeof(*np));
	cr_assert_not_null(np);
	np[0] = t->parts[0];
	np[1] = (partition) { .id = 3, .lo = h, .last = h, .node = 1,
	    .epoch = 2, .keyed = true, .kto_len = 1, .kto = { 'b' } };
	np[2] = (partition) { .id = 4, .lo = h, .last = h, .node = 1,
	    .epoch = 2, .keyed = true, .kfrom_len = 1, .kfrom = { 'b' },
	    .kto_len = 1, .kto = { 'd' } };
	np[3] = (partition) { .id = 5, .lo = h, .last = h, .node = 1,
	    .epoch = 2, .keyed = true, .kfrom_len = 1, .kfrom = { 'd' } };
	np[4] = t->parts[1];
	np[4].lo = h + 1;
	np[5] = t->parts[2];
	free(t->parts);
	t->parts = np;
	t->n_parts = 6;
}

Test(catalog, keyed_group_is_valid_and_routes_by_its_first_member)
{
	table t;
	keyed_table(&t);
	cr_assert(table_parts_valid(&t));
	uint64_t h = t.parts[1].lo;
	const partition *p = table_partition_for(&t, h);
	cr_assert_eq(p->id, 3, "the group answers by its first member");
	cr_assert_eq(table_partition_for(&t, h - 1)->id, 0);
	cr_assert_eq(table_partition_for(&t, h + 1)->id, 1);
	table_fini(&t);
}

Test(catalog, keyed_groups_that_do_not_fit_are_refused)
{
	table t;
	/* A gap between two members' keys. */
	keyed_table(&t);
	t.parts[2].kfrom[0] = 'c';
	cr_assert(!table_parts_valid(&t));
	table_fini(&t);
	/* A group that does not start at the first key. */
	keyed_table(&t);
	t.parts[1].kfrom_len = 1;
	t.parts[1].kfrom[0] = 'a';
	cr_assert(!table_parts_valid(&t));
	table_fini(&t);
	/* A group that does not reach the last key. */
	keyed_table(&t);
	t.parts[3].kto_len = 1;
	t.parts[3].kto[0] = 'z';
	cr_assert(!table_parts_valid(&t));
	table_fini(&t);
	/* Members on two nodes. */
	keyed_table(&t);
	t.parts[2].node = 2;
	cr_assert(!table_parts_valid(&t));
	table_fini(&t);
	/* A keyed partition of more than one hash. */
	keyed_table(&t);
	t.parts[3].last++;
	t.parts[4].lo++;
	cr_assert(!table_parts_valid(&t));
	table_fini(&t);
	/* Key bounds on a partition that is not keyed. */
	keyed_table(&t);
	t.parts[0].kto_len = 1;
	cr_assert(!table_parts_valid(&t));
	table_fini(&t);
}
