/*
 * wire_fixture.h — what the packing tests of proto/ (wire_test.c,
 * wire_cluster_test.c) share: a seeded PRNG, a table with every field
 * set, and comparisons of tables field by field.
 */
#ifndef KV_WIRE_FIXTURE_H
#define KV_WIRE_FIXTURE_H

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"

/* xorshift64*: a PRNG of our own so that seeds mean the same everywhere. */
static uint64_t rng_state;

static uint64_t
rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1DULL;
}

/* ---- sample values ---- */

static key_def
kd(const char *name, val_type t)
{
	return (key_def) { .name = strdup(name), .type = t };
}

/* full_table fills t with every field set (owned: table_fini). */
static void
full_table(table *t, const char *name, uint32_t id, bool range)
{
	memset(t, 0, sizeof(*t));
	t->name = strdup(name);
	t->id = id;
	t->uuid = strdup("0f8fad5b-d9cb-469f-a165-70867728950e");
	t->hash = kd("pk", VAL_S);
	if (range) {
		t->range = kd("sk", VAL_N);
		t->n_attr_defs = 3;
		t->attr_defs = calloc(3, sizeof(key_def));
		t->attr_defs[0] = kd("pk", VAL_S);
		t->attr_defs[1] = kd("sk", VAL_N);
		t->attr_defs[2] = kd("bin\xc3\xa9", VAL_B);
		t->billing = BILLING_PROVISIONED;
		t->rcu = 5;
		t->wcu = UINT64_MAX;
	} else {
		t->n_attr_defs = 1;
		t->attr_defs = calloc(1, sizeof(key_def));
		t->attr_defs[0] = kd("pk", VAL_S);
		t->billing = BILLING_PAY_PER_REQUEST;
	}
	t->status = range ? TABLE_ACTIVE : TABLE_UPDATING;
	t->created_ms = 1700000000123LL;
	t->last_increase_ms = 1700000001000LL;
	t->last_decrease_ms = -1;
	t->decreases_today = 4;
	t->decreases_day = 19675;
	t->billing_changed_ms = INT64_MAX;
	cr_assert_eq(table_split_even(t, 5, 2, 3), KV_OK);
	t->parts[3].epoch = 1ULL << 40;
	t->base_id = range ? 0 : 77;
	t->ttl_attr = range ? strdup("expires at") : NULL; /* NULL: off */
	t->restore_arn = range ? strdup("src/backup/01489173575360-b308cd7d") :
	    NULL;
	t->restore_ms = range ? 1489173575360 : 0;
	if (range) {
		t->n_tags = 2;
		t->tags = calloc(2, sizeof(table_tag));
		t->tags[0] = (table_tag) { strdup("team"), strdup("") };
		t->tags[1] = (table_tag) { strdup("\xc3\xa9t\xc3\xa9"),
		    strdup("a b") };
	}
	t->backfilling = !range;
	t->paused = !range;
	if (range) {
		/* A GSI (INCLUDE, hash and range) and an LSI (KEYS_ONLY). */
		t->n_indexes = 2;
		t->indexes = calloc(2, sizeof(index_def));
		index_def *g = &t->indexes[0], *l = &t->indexes[1];
		g->name = strdup("by_bin");
		g->table_id = 12;
		g->hash = kd("bin\xc3\xa9", VAL_B);
		g->range = kd("sk", VAL_N);
		g->projection = PROJECT_INCLUDE;
		g->n_include = 2;
		g->include = calloc(2, sizeof(char *));
		g->include[0] = strdup("title");
		g->include[1] = strdup("");
		g->rcu = 7;
		g->wcu = UINT64_MAX;
		l->name = strdup("local");
		l->local = true;
		l->hash = kd("pk", VAL_S);
		l->range = kd("bin\xc3\xa9", VAL_B);
		l->projection = PROJECT_KEYS_ONLY;
		l->deleting = true;
	}
}

static void
expect_key_def_eq(const key_def *a, const key_def *b, const char *what)
{
	if (b->name == NULL) {
		cr_assert_null(a->name, "%s", what);
		return;
	}
	cr_assert_not_null(a->name, "%s", what);
	cr_assert_str_eq(a->name, b->name, "%s", what);
	cr_assert_eq(a->type, b->type, "%s", what);
}

static void
expect_table_eq(const table *a, const table *b)
{
	cr_assert_str_eq(a->name, b->name);
	cr_assert_eq(a->id, b->id);
	cr_assert_str_eq(a->uuid, b->uuid);
	expect_key_def_eq(&a->hash, &b->hash, "hash");
	expect_key_def_eq(&a->range, &b->range, "range");
	cr_assert_eq(a->n_attr_defs, b->n_attr_defs);
	for (size_t i = 0; i < a->n_attr_defs; i++)
		expect_key_def_eq(&a->attr_defs[i], &b->attr_defs[i], "attr");
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
	cr_assert_eq(a->base_id, b->base_id);
	cr_assert_eq(a->backfilling, b->backfilling);
	cr_assert_eq(a->paused, b->paused);
	if (b->ttl_attr == NULL)
		cr_assert_null(a->ttl_attr);
	else
		cr_assert_str_eq(a->ttl_attr, b->ttl_attr);
	if (b->restore_arn == NULL)
		cr_assert_null(a->restore_arn);
	else
		cr_assert_str_eq(a->restore_arn, b->restore_arn);
	cr_assert_eq(a->restore_ms, b->restore_ms);
	cr_assert_eq(a->n_tags, b->n_tags);
	for (size_t i = 0; i < a->n_tags; i++) {
		cr_assert_str_eq(a->tags[i].key, b->tags[i].key);
		cr_assert_str_eq(a->tags[i].value, b->tags[i].value);
	}
	cr_assert_eq(a->n_indexes, b->n_indexes);
	for (size_t i = 0; i < a->n_indexes; i++) {
		const index_def *x = &a->indexes[i], *y = &b->indexes[i];
		cr_assert_str_eq(x->name, y->name);
		cr_assert_eq(x->local, y->local);
		cr_assert_eq(x->table_id, y->table_id);
		expect_key_def_eq(&x->hash, &y->hash, "index hash");
		expect_key_def_eq(&x->range, &y->range, "index range");
		cr_assert_eq(x->projection, y->projection);
		cr_assert_eq(x->n_include, y->n_include);
		for (size_t k = 0; k < x->n_include; k++)
			cr_assert_str_eq(x->include[k], y->include[k]);
		cr_assert_eq(x->rcu, y->rcu);
		cr_assert_eq(x->wcu, y->wcu);
		cr_assert_eq(x->deleting, y->deleting);
	}
	cr_assert_eq(a->n_parts, b->n_parts);
	for (size_t i = 0; i < a->n_parts; i++)
		cr_assert_eq(memcmp(&a->parts[i], &b->parts[i],
		    sizeof(partition)), 0, "part %zu", i);
}

#endif
