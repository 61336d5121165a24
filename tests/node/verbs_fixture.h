/*
 * verbs_fixture.h — a hand-built node for the node's unit tests
 * (verbs_test.c, write_run_test.c): an in-memory store, no sockets, no
 * catalog worker unless a test starts it; two tables of NPARTS
 * partitions, all on node 0; requests through node_dispatch, items with
 * their storage keys, STATS totals, and the check that the metadata
 * records agree with the live counters. Header-only (static functions):
 * each test file declares its suite with setup and teardown.
 */
#ifndef KV_TEST_VERBS_FIXTURE_H
#define KV_TEST_VERBS_FIXTURE_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog_node.h"
#include "codec.h"
#include "item.h"
#include "keyenc.h"
#include "node.h"

#define NPARTS 4

static node *N;
static arena A;
static table T, T2; /* ids 1 and 2, NPARTS partitions each, all on node 0 */

static inline void
make_table(table *t, const char *name, uint32_t id)
{
	memset(t, 0, sizeof(*t));
	t->name = strdup(name);
	t->uuid = strdup("00000000-0000-4000-8000-000000000000");
	t->id = id;
	t->hash.name = strdup("pk");
	t->hash.type = VAL_S;
	t->billing = BILLING_PAY_PER_REQUEST;
	t->status = TABLE_ACTIVE;
	cr_assert_eq(table_split_even(t, NPARTS, 0, 1), KV_OK);
}

static inline void
setup(void)
{
	N = calloc(1, sizeof(*N));
	cr_assert_not_null(N);
	cr_assert_eq(store_open_mem(&N->st), KV_OK);
	N->index = 0;
	N->cfg.n_nodes = 1;
	N->cfg.partitions = NPARTS;
	N->cfg.partition_rcu = CONFIG_PARTITION_RCU;
	N->cfg.partition_wcu = CONFIG_PARTITION_WCU;
	N->cfg.burst_seconds = CONFIG_BURST_SECONDS;
	part_map_init(&N->parts);
	pthread_mutex_init(&N->peers_mu, NULL);
	arena_init(&A);
	make_table(&T, "t1", 1);
	make_table(&T2, "t2", 2);
}

static inline void
teardown(void)
{
	catalog_node_close(N); /* the worker uses the store and the map */
	part_map_fini(&N->parts);
	store_close(N->st);
	pthread_mutex_destroy(&N->peers_mu);
	free(N);
	N = NULL;
	arena_fini(&A);
	table_fini(&T);
	table_fini(&T2);
}

/* ---- requests ---- */

static inline rpc_response
call(const rpc_request *req)
{
	rpc_response r;

	memset(&r, 0, sizeof(r));
	r.code = KV_ERR_COUNT; /* a verb that forgets to set it shows */
	node_dispatch(N, req, &A, &r);
	return r;
}

static inline kv_err
assign(const table *t)
{
	rpc_request req = { .op = RPC_ASSIGN, .table = t, .table_id = t->id,
		.node = 0 };
	return call(&req).code;
}

static inline kv_err
drop(uint32_t table_id)
{
	rpc_request req = { .op = RPC_DROP_TABLE, .table_id = table_id };
	return call(&req).code;
}

/* One item: its value tree, codec bytes, storage key and partition. */
typedef struct itm {
	const table *t;
	value v;
	uint8_t *enc, *key;
	size_t enc_len, key_len;
	size_t size; /* item_size */
	uint32_t part;
} itm;

/*
 * make_itm builds item {pk: S pk, n: N 12.5, data: S data} (data NULL:
 * only pk) of table t. Free with itm_fini.
 */
static inline void
make_itm(itm *it, const table *t, const char *pk, const char *data)
{
	size_t n = data != NULL ? 3 : 1;
	attr *at = arena_alloc(&A, n * sizeof(attr));
	const char *msg;

	memset(it, 0, sizeof(*it));
	it->t = t;
	at[0].name = "pk";
	at[0].name_len = 2;
	at[0].v.type = VAL_S;
	at[0].v.len = strlen(pk);
	at[0].v.u.bytes = arena_dup(&A, pk, strlen(pk));
	if (data != NULL) {
		number *num = arena_alloc(&A, sizeof(*num));
		cr_assert_eq(number_parse("12.5", 4, num, &msg), KV_OK);
		at[1].name = "n";
		at[1].name_len = 1;
		at[1].v.type = VAL_N;
		at[1].v.u.num = num;
		at[2].name = "data";
		at[2].name_len = 4;
		at[2].v.type = VAL_S;
		at[2].v.len = strlen(data);
		at[2].v.u.bytes = arena_dup(&A, data, strlen(data));
	}
	it->v.type = VAL_M;
	it->v.len = n;
	it->v.u.attrs = at;
	it->size = item_size(&it->v);
	cr_assert_eq(codec_encode(&it->v, &it->enc, &it->enc_len), KV_OK);
	cr_assert_eq(keyenc_item_key(t->id, &at[0].v, NULL, &it->key,
	    &it->key_len), KV_OK);
	const partition *p = table_partition_for(t, keyenc_hash(&at[0].v));
	cr_assert_not_null(p);
	it->part = p->id;
}

static inline void
itm_fini(itm *it)
{
	free(it->enc);
	free(it->key);
	memset(it, 0, sizeof(*it));
}

static inline uint64_t
epoch_of(const itm *it)
{
	return it->t->parts[it->part].epoch;
}

static inline rpc_request
item_req(rpc_op op, const itm *it, uint64_t epoch, rpc_return rv)
{
	rpc_request req = {
		.op = op, .table_id = it->t->id, .part = it->part,
		.epoch = epoch, .key = it->key, .key_len = it->key_len,
		.return_values = rv,
	};
	if (op == RPC_PUT) {
		req.item = it->enc;
		req.item_len = it->enc_len;
	}
	return req;
}

static inline rpc_response
put(const itm *it, rpc_return rv)
{
	rpc_request req = item_req(RPC_PUT, it, epoch_of(it), rv);
	return call(&req);
}

static inline rpc_response
get(const itm *it)
{
	rpc_request req = item_req(RPC_GET, it, epoch_of(it), RPC_RETURN_NONE);
	return call(&req);
}

static inline rpc_response
del(const itm *it, rpc_return rv)
{
	rpc_request req = item_req(RPC_DELETE, it, epoch_of(it), rv);
	return call(&req);
}

static inline void
expect_item(const itm *it, const itm *want)
{
	rpc_response r = get(it);

	cr_assert_eq(r.code, KV_OK, "%s", kv_err_name(r.code));
	cr_assert(r.found);
	cr_assert_eq(r.item_len, want->enc_len);
	cr_assert_arr_eq(r.item, want->enc, want->enc_len);
}

static inline void
expect_no_item(const itm *it)
{
	rpc_response r = get(it);

	cr_assert_eq(r.code, KV_OK, "%s", kv_err_name(r.code));
	cr_assert(!r.found);
	cr_assert_null(r.item);
}

/* Totals of STATS for table_id (0: every table). */
typedef struct totals {
	size_t n_parts;
	uint64_t items, bytes;
	part_stats per[16];
} totals;

static inline totals
stats(uint32_t table_id)
{
	rpc_request req = { .op = RPC_STATS, .table_id = table_id };
	rpc_response r = call(&req);
	totals t = { 0 };

	cr_assert_eq(r.code, KV_OK);
	cr_assert_leq(r.n_stats, 16);
	t.n_parts = r.n_stats;
	for (size_t i = 0; i < r.n_stats; i++) {
		if (table_id != 0)
			cr_assert_eq(r.stats[i].table_id, table_id);
		t.items += r.stats[i].items;
		t.bytes += r.stats[i].bytes;
		t.per[i] = r.stats[i];
	}
	return t;
}

static inline const part_stats *
stats_of(const totals *t, uint32_t table_id, uint32_t part)
{
	for (size_t i = 0; i < t->n_parts; i++)
		if (t->per[i].table_id == table_id && t->per[i].part == part)
			return &t->per[i];
	return NULL;
}

static inline bool
count_one(void *arg, const uint8_t *k, size_t kl, const uint8_t *v,
    size_t vl)
{
	(*(size_t *) arg)++;
	return true;
}

/* The number of stored keys with table_id's prefix (items only). */
static inline size_t
stored_keys(uint32_t table_id)
{
	uint8_t lo[4], hi[4];
	size_t n = 0;

	keyenc_table_prefix(table_id, lo);
	keyenc_table_prefix(table_id + 1, hi);
	cr_assert_eq(store_scan(N->st, lo, 4, hi, 4, count_one, &n), KV_OK);
	return n;
}

/*
 * The store agrees with the live map: a fresh map loaded from the
 * metadata records has the same partitions and epochs, and counting each
 * partition's stored items gives the live counters (what a start after
 * kill -9 would get, part.h).
 */
static inline void
expect_records_match_map(void)
{
	part_map fresh;

	part_map_init(&fresh);
	cr_assert_eq(part_map_load(&fresh, N->st), KV_OK);
	cr_assert_eq(fresh.n, N->parts.n);
	for (size_t i = 0; i < fresh.n; i++) {
		part *f = fresh.p[i];
		const part *p = part_map_find_locked(&N->parts, f->table_id,
		    f->id);
		cr_assert_not_null(p, "table %u part %u", f->table_id, f->id);
		cr_assert_eq(f->lo, p->lo);
		cr_assert_eq(f->last, p->last);
		cr_assert_eq(f->epoch, p->epoch);
		cr_assert_eq(part_recount(f, N->st), KV_OK);
		cr_assert_eq(f->items, p->items, "table %u part %u",
		    f->table_id, f->id);
		cr_assert_eq(f->bytes, p->bytes, "table %u part %u",
		    f->table_id, f->id);
	}
	part_map_fini(&fresh);
}

#endif
