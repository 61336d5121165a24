/*
 * wire_test.c — the router<->node contract (proto/wire.c): requests,
 * responses, catalogs and tables survive pack -> unpack with every field;
 * hostile bytes (seeded random buffers, every truncation and byte flips of
 * valid messages, hand-made protobuf errors) give KV_PROTO (messages) or
 * KV_CORRUPT (stored catalog and table) and never a crash or a leak; a
 * response code outside kv_err is refused; a split's cuts stop at
 * RPC_MAX_CUTS, a response's blobs do not stop at RPC_MULTI_MAX, and
 * key-record pairs (wire_pair_*) read back or are refused. Run it under
 * ASan too.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdlib.h>
#include <string.h>

#include "wire.h"
#include "wire_fixture.h"

static arena A;

static void
setup(void)
{
	arena_init(&A);
}

static void
teardown(void)
{
	arena_fini(&A);
}

TestSuite(wire, .init = setup, .fini = teardown);


static void
expect_catalog_eq(const catalog *a, const catalog *b)
{
	cr_assert_eq(a->version, b->version);
	cr_assert_eq(a->next_table_id, b->next_table_id);
	cr_assert_eq(a->n_tables, b->n_tables);
	for (size_t i = 0; i < a->n_tables; i++)
		expect_table_eq(&a->tables[i], &b->tables[i]);
}

/* A catalog of two tables (owned: catalog_free). */
static catalog *
full_catalog(void)
{
	catalog *c = calloc(1, sizeof(*c));
	c->version = 0x123456789aULL;
	c->next_table_id = 300;
	c->n_tables = 2;
	c->tables = calloc(2, sizeof(table));
	full_table(&c->tables[0], "alpha", 7, true);
	full_table(&c->tables[1], "beta", 299, false);
	return c;
}

static const uint8_t KEY[] = { 0, 0, 0, 7, 0xff, 0, 0x80, 1, 2, 3, 4, 5,
	1, 'k', 0, 0xff, 0, 1 };
static const uint8_t ITEM[] = { 7, 1, 2, 'p', 'k', 1, 1, 'x', 0 };

/* MULTI sub-messages: opaque bytes, one of them empty (a default message). */
static const uint8_t *const SUBS[3] = { KEY, ITEM, (const uint8_t *) "" };
static const size_t SUB_LENS[3] = { sizeof(KEY), sizeof(ITEM), 0 };

static void
expect_subs(const uint8_t *const *subs, const size_t *lens, size_t n)
{
	cr_assert_eq(n, 3);
	for (size_t i = 0; i < 3; i++) {
		cr_assert_eq(lens[i], SUB_LENS[i], "sub %zu", i);
		cr_assert_not_null(subs[i]);
		cr_assert_arr_eq(subs[i], SUBS[i], SUB_LENS[i]);
	}
}

/* A request with every field set; t is borrowed. */
static rpc_request
full_request(const table *t)
{
	return (rpc_request) {
		.op = RPC_PUT, .table_id = 7, .part = 3,
		.epoch = UINT64_MAX - 1, .key = KEY, .key_len = sizeof(KEY),
		.item = ITEM, .item_len = sizeof(ITEM),
		.return_values = RPC_RETURN_ALL_OLD, .consistent = true,
		.table = t, .table_name = "alpha", .min_version = 1ULL << 50,
		.node = 300, /* two varint bytes */
		.subs = (const uint8_t **) SUBS, .sub_lens = (size_t *) SUB_LENS,
		.n_subs = 3,
	};
}

static const part_stats STATS[3] = {
	{ 7, 0, 1, 10, 1000, 6000000000, 2000000000, -4000000, 7,
	    12, 34, 5, 6, 7, 8, 0, 0, 1, { 9 }, { 900 } },
	{ 7, 1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5, 5, 0, { 0 },
	    { 0 } },
	{ UINT32_MAX, UINT32_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX,
	    INT64_MAX, INT64_MIN, INT64_MIN, INT64_MAX, UINT64_MAX,
	    UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX,
	    UINT64_MAX, UINT64_MAX, WIRE_LOCAL_MAX, { 1, 2, 3, 4,
	    UINT64_MAX }, { UINT64_MAX, 4, 3, 2, 1 } },
};

/* A response with every field set; c and t are borrowed. */
static rpc_response
full_response(catalog *c, table *t)
{
	return (rpc_response) {
		.code = KV_COND_FAILED,
		.message = "The conditional request failed",
		.found = true, .item = ITEM, .item_len = sizeof(ITEM),
		.cat = c, .table = t, .stats = (part_stats *) STATS,
		.n_stats = 3, .throttle = RPC_THROTTLE_WRITE |
		RPC_THROTTLE_TABLE_PROVISIONED,
		.subs = (const uint8_t **) SUBS, .sub_lens = (size_t *) SUB_LENS,
		.n_subs = 3,
	};
}

/* ---- round trips ---- */

Test(wire, request_round_trips_every_field)
{
	table t;
	uint8_t *buf;
	size_t len;
	rpc_request in, out;

	full_table(&t, "alpha", 7, true);
	in = full_request(&t);
	cr_assert_eq(wire_pack_request(&in, &buf, &len), KV_OK);
	cr_assert_eq(wire_unpack_request(buf, len, &A, &out), KV_OK);
	free(buf);
	cr_assert_eq(out.op, in.op);
	cr_assert_eq(out.table_id, in.table_id);
	cr_assert_eq(out.part, in.part);
	cr_assert_eq(out.epoch, in.epoch);
	cr_assert_eq(out.key_len, sizeof(KEY));
	cr_assert_arr_eq(out.key, KEY, sizeof(KEY));
	cr_assert_eq(out.item_len, sizeof(ITEM));
	cr_assert_arr_eq(out.item, ITEM, sizeof(ITEM));
	cr_assert_eq(out.return_values, RPC_RETURN_ALL_OLD);
	cr_assert(out.consistent);
	cr_assert_str_eq(out.table_name, "alpha");
	cr_assert_eq(out.min_version, in.min_version);
	cr_assert_eq(out.node, 300);
	expect_subs(out.subs, out.sub_lens, out.n_subs);
	cr_assert_not_null(out.table);
	cr_assert_neq(out.table, &t);
	expect_table_eq(out.table, &t);
	wire_request_fini(&out);
	cr_assert_null(out.table);
	wire_request_fini(&out); /* twice is safe */
	table_fini(&t);
}

Test(wire, empty_request_round_trips_as_absent_fields)
{
	rpc_request in = { .op = RPC_PING }, out;
	uint8_t *buf;
	size_t len;

	cr_assert_eq(wire_pack_request(&in, &buf, &len), KV_OK);
	cr_assert_eq(wire_unpack_request(buf, len, &A, &out), KV_OK);
	free(buf);
	cr_assert_eq(out.op, RPC_PING);
	cr_assert_null(out.key);
	cr_assert_eq(out.key_len, 0);
	cr_assert_null(out.item);
	cr_assert_eq(out.item_len, 0);
	cr_assert_null(out.table);
	cr_assert_null(out.table_name);
	cr_assert(!out.consistent);
	cr_assert_eq(out.return_values, RPC_RETURN_NONE);
	wire_request_fini(&out);
}

Test(wire, every_verb_round_trips)
{
	static const rpc_op ops[] = { RPC_PING, RPC_GET, RPC_PUT, RPC_DELETE,
		RPC_CATALOG_GET, RPC_CREATE_TABLE, RPC_DELETE_TABLE,
		RPC_ASSIGN, RPC_DROP_TABLE, RPC_STATS, RPC_BUMP_EPOCH };

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		rpc_request in = { .op = ops[i], .table_id = (uint32_t) i };
		rpc_request out;
		uint8_t *buf;
		size_t len;
		cr_assert_eq(wire_pack_request(&in, &buf, &len), KV_OK);
		cr_assert_eq(wire_unpack_request(buf, len, &A, &out), KV_OK);
		free(buf);
		cr_assert_eq(out.op, ops[i]);
		cr_assert_eq(out.table_id, i);
	}
}

Test(wire, response_round_trips_every_field)
{
	catalog *c = full_catalog();
	table t;
	uint8_t *buf;
	size_t len;
	rpc_response in, out;

	full_table(&t, "gamma", 12, true);
	in = full_response(c, &t);
	cr_assert_eq(wire_pack_response(&in, &buf, &len), KV_OK);
	cr_assert_eq(wire_unpack_response(buf, len, &A, &out), KV_OK);
	free(buf);
	cr_assert_eq(out.code, KV_COND_FAILED);
	cr_assert_str_eq(out.message, "The conditional request failed");
	cr_assert(out.found);
	cr_assert_eq(out.item_len, sizeof(ITEM));
	cr_assert_arr_eq(out.item, ITEM, sizeof(ITEM));
	cr_assert_not_null(out.cat);
	expect_catalog_eq(out.cat, c);
	cr_assert_not_null(out.table);
	expect_table_eq(out.table, &t);
	cr_assert_eq(out.n_stats, 3);
	for (size_t i = 0; i < 3; i++) {
		cr_assert_eq(out.stats[i].table_id, STATS[i].table_id);
		cr_assert_eq(out.stats[i].part, STATS[i].part);
		cr_assert_eq(out.stats[i].epoch, STATS[i].epoch);
		cr_assert_eq(out.stats[i].items, STATS[i].items);
		cr_assert_eq(out.stats[i].bytes, STATS[i].bytes);
		cr_assert_eq(memcmp(&out.stats[i], &STATS[i],
		    sizeof(part_stats)), 0, "capacity fields of stats[%zu]", i);
	}
	cr_assert_eq(out.throttle, RPC_THROTTLE_WRITE |
	    RPC_THROTTLE_TABLE_PROVISIONED);
	expect_subs(out.subs, out.sub_lens, out.n_subs);
	wire_response_fini(&out);
	cr_assert_null(out.cat);
	cr_assert_null(out.table);
	wire_response_fini(&out); /* twice is safe */
	catalog_free(c);
	table_fini(&t);
}

Test(wire, empty_response_round_trips_as_absent_fields)
{
	rpc_response in = { .code = KV_OK }, out;
	uint8_t *buf;
	size_t len;

	cr_assert_eq(wire_pack_response(&in, &buf, &len), KV_OK);
	cr_assert_eq(len, 0, "an all-default message packs to nothing");
	cr_assert_eq(wire_unpack_response(buf, len, &A, &out), KV_OK);
	free(buf);
	cr_assert_eq(out.code, KV_OK);
	cr_assert_null(out.message);
	cr_assert(!out.found);
	cr_assert_null(out.item);
	cr_assert_null(out.cat);
	cr_assert_null(out.table);
	cr_assert_null(out.stats);
	cr_assert_eq(out.n_stats, 0);
}

Test(wire, every_response_code_round_trips)
{
	for (int code = KV_OK; code < KV_ERR_COUNT; code++) {
		rpc_response in = { .code = (kv_err) code }, out;
		uint8_t *buf;
		size_t len;
		cr_assert_eq(wire_pack_response(&in, &buf, &len), KV_OK);
		cr_assert_eq(wire_unpack_response(buf, len, &A, &out), KV_OK,
		    "%s", kv_err_name((kv_err) code));
		free(buf);
		cr_assert_eq(out.code, code);
	}
}

struct bad_code {
	uint32_t code;
};

ParameterizedTestParameters(wire, out_of_range_response_code_is_proto)
{
	static struct bad_code cases[] = {
		{ KV_ERR_COUNT }, { KV_ERR_COUNT + 1 }, { 1000 },
		{ 0x7fffffff }, { 0x80000000u }, { UINT32_MAX },
	};
	return cr_make_param_array(struct bad_code, cases,
	    sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct bad_code *c, wire,
    out_of_range_response_code_is_proto)
{
	catalog *cat = full_catalog();
	table t;
	rpc_response in, out;
	uint8_t *buf;
	size_t len;

	/* With owned parts attached, to see that nothing leaks. */
	full_table(&t, "gamma", 12, false);
	in = full_response(cat, &t);
	in.code = (kv_err) c->code;
	cr_assert_eq(wire_pack_response(&in, &buf, &len), KV_OK);
	cr_assert_eq(wire_unpack_response(buf, len, &A, &out), KV_PROTO,
	    "code %u", c->code);
	free(buf);
	cr_assert_null(out.cat);
	cr_assert_null(out.table);
	catalog_free(cat);
	table_fini(&t);
}

Test(wire, catalog_round_trips)
{
	catalog *c = full_catalog(), *out = NULL;
	uint8_t *buf;
	size_t len;

	cr_assert_eq(wire_pack_catalog(c, &buf, &len), KV_OK);
	cr_assert_eq(wire_unpack_catalog(buf, len, &out), KV_OK);
	free(buf);
	cr_assert_not_null(out);
	expect_catalog_eq(out, c);
	catalog_free(out);
	catalog_free(c);
}

Test(wire, empty_catalog_round_trips)
{
	catalog c = { .version = 1, .next_table_id = 1 }, *out = NULL;
	uint8_t *buf;
	size_t len;

	cr_assert_eq(wire_pack_catalog(&c, &buf, &len), KV_OK);
	cr_assert_eq(wire_unpack_catalog(buf, len, &out), KV_OK);
	free(buf);
	expect_catalog_eq(out, &c);
	cr_assert_null(out->tables);
	catalog_free(out);
}

Test(wire, table_round_trips)
{
	table t, out;
	uint8_t *buf;
	size_t len;

	for (int range = 0; range < 2; range++) {
		full_table(&t, range ? "with range" : "hash only", 9, range);
		cr_assert_eq(wire_pack_table(&t, &buf, &len), KV_OK);
		cr_assert_eq(wire_unpack_table(buf, len, &out), KV_OK);
		free(buf);
		expect_table_eq(&out, &t);
		if (!range)
			cr_assert_null(out.range.name);
		table_fini(&out);
		table_fini(&t);
	}
}

Test(wire, backup_round_trips)
{
	backup_rec b = { .id = 1489173575360000ULL, .status = BACKUP_AVAILABLE,
	    .created_ms = 1489173575360, .size_bytes = 1ULL << 40,
	    .items = 12345 }, out;
	uint8_t *buf;
	size_t len;

	b.name = strdup("nightly.1");
	b.arn = strdup("01489173575360-b308cd7d");
	full_table(&b.src, "source", 9, true);
	cr_assert_eq(wire_pack_backup(&b, &buf, &len), KV_OK);
	cr_assert_eq(wire_unpack_backup(buf, len, &out), KV_OK);
	cr_assert_eq(out.id, b.id);
	cr_assert_str_eq(out.name, b.name);
	cr_assert_str_eq(out.arn, b.arn);
	cr_assert_eq(out.status, b.status);
	cr_assert_eq(out.created_ms, b.created_ms);
	cr_assert_eq(out.size_bytes, b.size_bytes);
	cr_assert_eq(out.items, b.items);
	expect_table_eq(&out.src, &b.src);
	backup_rec_fini(&out);
	/* Cut short, or with a status out of range: not a backup. */
	cr_assert_eq(wire_unpack_backup(buf, len / 2, &out), KV_CORRUPT);
	free(buf);
	b.status = 9;
	cr_assert_eq(wire_pack_backup(&b, &buf, &len), KV_OK);
	cr_assert_eq(wire_unpack_backup(buf, len, &out), KV_CORRUPT);
	free(buf);
	backup_rec_fini(&b);
}

/* ---- invalid key definitions ---- */

struct bad_type {
	uint32_t type;
	int where; /* 0: hash, 1: range, 2: an attribute definition */
};

ParameterizedTestParameters(wire, key_type_outside_s_n_b_is_refused)
{
	static struct bad_type cases[] = {
		{ 0, 0 }, { VAL_SS, 0 }, { VAL_BOOL, 0 }, { 99, 0 },
		{ UINT32_MAX, 0 }, { 0, 1 }, { VAL_M, 1 }, { 0, 2 },
		{ VAL_L, 2 },
	};
	return cr_make_param_array(struct bad_type, cases,
	    sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct bad_type *c, wire, key_type_outside_s_n_b_is_refused)
{
	table t, out;
	catalog cat = { .version = 1 }, *cout = NULL;
	uint8_t *buf;
	size_t len;

	full_table(&t, "bad", 3, true);
	val_type bad = (val_type) c->type;
	if (c->where == 0)
		t.hash.type = bad;
	else if (c->where == 1)
		t.range.type = bad;
	else
		t.attr_defs[2].type = bad;

	/* Stored forms: KV_CORRUPT. */
	cr_assert_eq(wire_pack_table(&t, &buf, &len), KV_OK);
	cr_assert_eq(wire_unpack_table(buf, len, &out), KV_CORRUPT);
	free(buf);
	cat.tables = &t;
	cat.n_tables = 1;
	cr_assert_eq(wire_pack_catalog(&cat, &buf, &len), KV_OK);
	cr_assert_eq(wire_unpack_catalog(buf, len, &cout), KV_CORRUPT);
	cr_assert_null(cout);
	free(buf);

	/* Messages: KV_PROTO. */
	rpc_request rq = { .op = RPC_CREATE_TABLE, .table = &t }, rqo;
	cr_assert_eq(wire_pack_request(&rq, &buf, &len), KV_OK);
	cr_assert_eq(wire_unpack_request(buf, len, &A, &rqo), KV_PROTO);
	cr_assert_null(rqo.table);
	free(buf);
	rpc_response rs = { .table = &t }, rso;
	cr_assert_eq(wire_pack_response(&rs, &buf, &len), KV_OK);
	cr_assert_eq(wire_unpack_response(buf, len, &A, &rso), KV_PROTO);
	cr_assert_null(rso.table);
	free(buf);
	rs = (rpc_response) { .cat = &cat };
	cr_assert_eq(wire_pack_response(&rs, &buf, &len), KV_OK);
	cr_assert_eq(wire_unpack_response(buf, len, &A, &rso), KV_PROTO);
	cr_assert_null(rso.cat);
	free(buf);
	table_fini(&t);
}

/* A Table message without its hash key definition (field 4). */
Test(wire, table_without_hash_key_is_refused)
{
	static const uint8_t only_name[] = { 0x0a, 0x01, 'x', 0x10, 0x05 };
	table out;
	catalog *cout = NULL;
	/* Catalog { tables: only_name } */
	static const uint8_t in_catalog[] = { 0x12, 0x05, 0x0a, 0x01, 'x',
		0x10, 0x05 };
	/* Request { table: only_name } */
	static const uint8_t in_request[] = { 0x4a, 0x05, 0x0a, 0x01, 'x',
		0x10, 0x05 };
	rpc_request r;

	cr_assert_eq(wire_unpack_table(only_name, sizeof(only_name), &out),
	    KV_CORRUPT);
	cr_assert_eq(wire_unpack_catalog(in_catalog, sizeof(in_catalog),
	    &cout), KV_CORRUPT);
	cr_assert_eq(wire_unpack_request(in_request, sizeof(in_request), &A,
	    &r), KV_PROTO);
	cr_assert_null(r.table);
}

/* ---- hostile bytes ---- */

typedef enum kind {
	K_REQUEST,
	K_RESPONSE,
	K_CATALOG,
	K_TABLE,
} kind;

/*
 * try_unpack unpacks buf as kind k, frees whatever it got, and returns the
 * code. It checks the code is one the contract allows.
 */
static kv_err
try_unpack(kind k, const uint8_t *buf, size_t len)
{
	kv_err rv;

	switch (k) {
	case K_REQUEST: {
		rpc_request r;
		arena a;
		arena_init(&a);
		rv = wire_unpack_request(buf, len, &a, &r);
		if (rv == KV_OK) {
			/* Touch what came back, for ASan. */
			volatile uint8_t sink = 0;
			for (size_t i = 0; i < r.key_len; i++)
				sink ^= r.key[i];
			for (size_t i = 0; i < r.item_len; i++)
				sink ^= r.item[i];
			if (r.table_name != NULL)
				sink ^= (uint8_t) strlen(r.table_name);
			(void) sink;
		} else {
			cr_assert_null(r.table);
		}
		wire_request_fini(&r);
		arena_fini(&a);
		cr_assert(rv == KV_OK || rv == KV_PROTO, "request: %s",
		    kv_err_name(rv));
		break;
	}
	case K_RESPONSE: {
		rpc_response r;
		arena a;
		arena_init(&a);
		rv = wire_unpack_response(buf, len, &a, &r);
		if (rv == KV_OK) {
			cr_assert_lt(r.code, KV_ERR_COUNT);
			volatile uint8_t sink = 0;
			for (size_t i = 0; i < r.item_len; i++)
				sink ^= r.item[i];
			for (size_t i = 0; i < r.n_stats; i++)
				sink ^= (uint8_t) r.stats[i].bytes;
			(void) sink;
		} else {
			cr_assert_null(r.cat);
			cr_assert_null(r.table);
		}
		wire_response_fini(&r);
		arena_fini(&a);
		cr_assert(rv == KV_OK || rv == KV_PROTO, "response: %s",
		    kv_err_name(rv));
		break;
	}
	case K_CATALOG: {
		catalog *c = NULL;
		rv = wire_unpack_catalog(buf, len, &c);
		if (rv != KV_OK)
			cr_assert_null(c);
		catalog_free(c);
		cr_assert(rv == KV_OK || rv == KV_CORRUPT, "catalog: %s",
		    kv_err_name(rv));
		break;
	}
	default: {
		table t;
		rv = wire_unpack_table(buf, len, &t);
		if (rv == KV_OK)
			table_fini(&t);
		cr_assert(rv == KV_OK || rv == KV_CORRUPT, "table: %s",
		    kv_err_name(rv));
		break;
	}
	}
	return rv;
}

static kv_err
bad_code(kind k)
{
	return k == K_REQUEST || k == K_RESPONSE ? KV_PROTO : KV_CORRUPT;
}

/* pack_full packs the full sample of kind k into owned bytes. */
static void
pack_full(kind k, uint8_t **buf, size_t *len)
{
	catalog *c = full_catalog();
	table t;

	full_table(&t, "gamma", 12, true);
	if (k == K_REQUEST) {
		rpc_request r = full_request(&t);
		cr_assert_eq(wire_pack_request(&r, buf, len), KV_OK);
	} else if (k == K_RESPONSE) {
		rpc_response r = full_response(c, &t);
		cr_assert_eq(wire_pack_response(&r, buf, len), KV_OK);
	} else if (k == K_CATALOG) {
		cr_assert_eq(wire_pack_catalog(c, buf, len), KV_OK);
	} else {
		cr_assert_eq(wire_pack_table(&t, buf, len), KV_OK);
	}
	catalog_free(c);
	table_fini(&t);
}

struct kind_case {
	kind k;
};

ParameterizedTestParameters(wire, random_bytes_never_crash)
{
	static struct kind_case cases[] = { { K_REQUEST }, { K_RESPONSE },
		{ K_CATALOG }, { K_TABLE } };
	return cr_make_param_array(struct kind_case, cases, 4);
}

ParameterizedTest(struct kind_case *c, wire, random_bytes_never_crash)
{
	uint8_t buf[256];
	int refused = 0;

	rng_state = 0x0123456789abcdefULL + (uint64_t) c->k;
	for (int i = 0; i < 3000; i++) {
		size_t len = (size_t) (rng() % sizeof(buf));
		for (size_t j = 0; j < len; j++)
			buf[j] = (uint8_t) rng();
		/* Exactly len bytes on the heap, so ASan sees overreads. */
		uint8_t *exact = malloc(len > 0 ? len : 1);
		memcpy(exact, buf, len);
		if (try_unpack(c->k, exact, len) != KV_OK)
			refused++;
		free(exact);
	}
	cr_assert_gt(refused, 2500, "only %d of 3000 random buffers refused",
	    refused);
}

ParameterizedTestParameters(wire, every_truncation_is_safe)
{
	static struct kind_case cases[] = { { K_REQUEST }, { K_RESPONSE },
		{ K_CATALOG }, { K_TABLE } };
	return cr_make_param_array(struct kind_case, cases, 4);
}

ParameterizedTest(struct kind_case *c, wire, every_truncation_is_safe)
{
	uint8_t *full;
	size_t len;
	int refused = 0;

	pack_full(c->k, &full, &len);
	cr_assert_eq(try_unpack(c->k, full, len), KV_OK);
	for (size_t n = 0; n < len; n++) {
		uint8_t *cut = malloc(n > 0 ? n : 1);
		memcpy(cut, full, n);
		if (try_unpack(c->k, cut, n) != KV_OK)
			refused++;
		free(cut);
	}
	/*
	 * The last field of each sample is a two-byte varint (request: node
	 * 300; catalog: next_table_id 300) or a nested message (response:
	 * stats; table: parts), so dropping the last byte must be refused.
	 */
	uint8_t *cut = malloc(len - 1);
	memcpy(cut, full, len - 1);
	cr_assert_eq(try_unpack(c->k, cut, len - 1), bad_code(c->k));
	free(cut);
	cr_assert_gt(refused, (int) len / 2, "%d of %zu truncations refused",
	    refused, len);
	free(full);
}

ParameterizedTestParameters(wire, byte_flips_are_safe)
{
	static struct kind_case cases[] = { { K_REQUEST }, { K_RESPONSE },
		{ K_CATALOG }, { K_TABLE } };
	return cr_make_param_array(struct kind_case, cases, 4);
}

ParameterizedTest(struct kind_case *c, wire, byte_flips_are_safe)
{
	uint8_t *full;
	size_t len;

	pack_full(c->k, &full, &len);
	rng_state = 0xfeedfacecafebeefULL + (uint64_t) c->k;
	uint8_t *m = malloc(len);
	for (int round = 0; round < 4; round++) {
		for (size_t i = 0; i < len; i++) {
			memcpy(m, full, len);
			m[i] = round == 0 ? 0xff : round == 1 ? 0x00 :
			    (uint8_t) rng();
			if (round == 3) /* and a second byte elsewhere */
				m[rng() % len] = (uint8_t) rng();
			try_unpack(c->k, m, len);
		}
	}
	free(m);
	free(full);
}

/* Hand-made protobuf errors, refused by every unpacker. */
struct raw_case {
	uint8_t bytes[12];
	size_t len;
	char why[40];
};

ParameterizedTestParameters(wire, malformed_protobuf_is_refused)
{
	static struct raw_case cases[] = {
		{ { 0x08 }, 1, "tag without its varint" },
		{ { 0x08, 0x80 }, 2, "varint cut short" },
		{ { 0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		    0xff, 0x01 }, 12, "varint of 12 bytes" },
		{ { 0x12, 0x05, 'a' }, 3, "length past the end" },
		{ { 0x12, 0xff, 0xff, 0xff, 0xff, 0x0f }, 6, "huge length" },
		{ { 0x00, 0x00 }, 2, "field number 0" },
		{ { 0x0b }, 1, "start group" },
		{ { 0x0e, 0x00 }, 2, "wire type 6" },
		{ { 0x0f, 0x00 }, 2, "wire type 7" },
		{ { 0x0d, 0x00, 0x00 }, 3, "fixed32 cut short" },
		{ { 0x09, 0x00, 0x00, 0x00 }, 4, "fixed64 cut short" },
	};
	return cr_make_param_array(struct raw_case, cases,
	    sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct raw_case *c, wire, malformed_protobuf_is_refused)
{
	for (kind k = K_REQUEST; k <= K_TABLE; k++) {
		uint8_t *b = malloc(c->len);
		memcpy(b, c->bytes, c->len);
		cr_assert_eq(try_unpack(k, b, c->len), bad_code(k),
		    "%s, kind %d", c->why, k);
		free(b);
	}
}

/* ---- splits and moves: move_id, cuts, reason, blobs, pairs ---- */

Test(wire, request_round_trips_move_id_cuts_and_reason)
{
	static const uint64_t cuts[RPC_MAX_CUTS] = { 0, 1, 300,
		1ULL << 32, 0x8000000000000000ULL, UINT64_MAX - 1, UINT64_MAX,
		7 };
	rpc_request in = { .op = RPC_SPLIT, .part = 2, .epoch = 9,
		.move_id = UINT64_MAX, .cuts = cuts, .n_cuts = RPC_MAX_CUTS,
		.reason = RPC_REASON_HOT_ITEM }, out;
	uint8_t *buf;
	size_t len;

	cr_assert_eq(wire_pack_request(&in, &buf, &len), KV_OK);
	cr_assert_eq(wire_unpack_request(buf, len, &A, &out), KV_OK);
	free(buf);
	cr_assert_eq(out.op, RPC_SPLIT);
	cr_assert_eq(out.move_id, UINT64_MAX);
	cr_assert_eq(out.reason, RPC_REASON_HOT_ITEM);
	cr_assert_eq(out.n_cuts, RPC_MAX_CUTS);
	cr_assert_not_null(out.cuts);
	cr_assert_neq(out.cuts, cuts, "copied, not borrowed");
	cr_assert_arr_eq(out.cuts, cuts, sizeof(cuts));
	wire_request_fini(&out);
}

Test(wire, request_round_trips_one_cut_and_each_reason)
{
	static const rpc_reason reasons[] = { RPC_REASON_OPERATOR,
		RPC_REASON_HEAT, RPC_REASON_SIZE, RPC_REASON_REBALANCE,
		RPC_REASON_HOT_ITEM };
	const uint64_t cut = 0x123456789abcdef0ULL;

	for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++) {
		rpc_request in = { .op = RPC_SPLIT_ASK, .cuts = &cut,
			.n_cuts = 1, .reason = reasons[i],
			.move_id = (uint64_t) i }, out;
		uint8_t *buf;
		size_t len;
		cr_assert_eq(wire_pack_request(&in, &buf, &len), KV_OK);
		cr_assert_eq(wire_unpack_request(buf, len, &A, &out), KV_OK);
		free(buf);
		cr_assert_eq(out.reason, reasons[i]);
		cr_assert_eq(out.move_id, i);
		cr_assert_eq(out.n_cuts, 1);
		cr_assert_eq(out.cuts[0], cut);
	}
}

Test(wire, request_without_cuts_has_none)
{
	rpc_request in = { .op = RPC_SPLIT, .part = 1 }, out;
	uint8_t *buf;
	size_t len;

	cr_assert_eq(wire_pack_request(&in, &buf, &len), KV_OK);
	cr_assert_eq(wire_unpack_request(buf, len, &A, &out), KV_OK);
	free(buf);
	cr_assert_eq(out.n_cuts, 0);
	cr_assert_null(out.cuts);
	cr_assert_eq(out.move_id, 0);
	cr_assert_eq(out.reason, RPC_REASON_OPERATOR);
}

/* A request of n cuts, packed, in a buffer 3 bytes longer than *len. */
static uint8_t *
packed_cuts(size_t n, size_t *len)
{
	uint64_t cuts[RPC_MAX_CUTS];
	cr_assert_leq(n, RPC_MAX_CUTS);
	for (size_t i = 0; i < n; i++)
		cuts[i] = 1000 * (i + 1);
	rpc_request in = { .op = RPC_SPLIT, .cuts = cuts, .n_cuts = n };
	uint8_t *buf;
	cr_assert_eq(wire_pack_request(&in, &buf, len), KV_OK);
	uint8_t *b = malloc(*len + 3);
	memcpy(b, buf, *len);
	free(buf);
	/* One more cut, 5, as a field of its own (24, varint). */
	b[*len] = 0xc0;
	b[*len + 1] = 0x01;
	b[*len + 2] = 0x05;
	return b;
}

/*
 * Protobuf merges a repeated field that occurs twice, so one more cut
 * appended as its own field makes n + 1, as a sender that ignores the
 * limit could send: RPC_MAX_CUTS is taken, one more is refused.
 */
Test(wire, request_with_one_cut_too_many_is_proto)
{
	size_t len;
	rpc_request out;
	uint8_t *b = packed_cuts(RPC_MAX_CUTS - 1, &len);

	cr_assert_eq(wire_unpack_request(b, len + 3, &A, &out), KV_OK);
	cr_assert_eq(out.n_cuts, RPC_MAX_CUTS);
	cr_assert_eq(out.cuts[RPC_MAX_CUTS - 1], 5, "the appended cut");
	free(b);
	b = packed_cuts(RPC_MAX_CUTS, &len);
	cr_assert_eq(wire_unpack_request(b, len, &A, &out), KV_OK);
	cr_assert_eq(wire_unpack_request(b, len + 3, &A, &out), KV_PROTO);
	cr_assert_null(out.table);
	free(b);
}

/* The same limit on cuts written packed, by hand: field 24, type 2. */
Test(wire, request_with_packed_cuts_past_the_limit_is_proto)
{
	uint8_t b[4 + RPC_MAX_CUTS + 1];
	rpc_request out;

	b[0] = 0x08; /* op */
	b[1] = RPC_SPLIT;
	b[2] = 0xc2; /* cuts, length-delimited */
	b[3] = 0x01;
	for (int n = RPC_MAX_CUTS; n <= RPC_MAX_CUTS + 1; n++) {
		uint8_t m[sizeof(b) + 1];
		memcpy(m, b, 4);
		m[4] = (uint8_t) n;
		for (int i = 0; i < n; i++)
			m[5 + i] = (uint8_t) (i + 1);
		kv_err rv = wire_unpack_request(m, 5 + (size_t) n, &A, &out);
		if (n <= RPC_MAX_CUTS) {
			cr_assert_eq(rv, KV_OK, "%d cuts", n);
			cr_assert_eq(out.n_cuts, (size_t) n);
			cr_assert_eq(out.cuts[n - 1], (uint64_t) n);
		} else {
			cr_assert_eq(rv, KV_PROTO, "%d cuts", n);
		}
	}
}

/* n opaque blobs (or subs) of 1..n bytes, in the arena. */
static const uint8_t **
blobs_of(size_t n, size_t **lens)
{
	const uint8_t **p = arena_alloc(&A, n * sizeof(*p));
	*lens = arena_alloc(&A, n * sizeof(**lens));
	for (size_t i = 0; i < n; i++) {
		uint8_t *b = arena_alloc(&A, i + 1);
		memset(b, (int) (i & 0xff), i + 1);
		p[i] = b;
		(*lens)[i] = i + 1;
	}
	return p;
}

static void
expect_blobs(const uint8_t *const *p, const size_t *lens, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		cr_assert_eq(lens[i], i + 1, "blob %zu", i);
		for (size_t j = 0; j <= i; j++)
			cr_assert_eq(p[i][j], (uint8_t) (i & 0xff),
			    "blob %zu byte %zu", i, j);
	}
}

Test(wire, response_round_trips_blobs)
{
	size_t *lens;
	const uint8_t **blobs = blobs_of(3, &lens);
	rpc_response in = { .code = KV_OK, .blobs = blobs, .blob_lens = lens,
		.n_blobs = 3 }, out;
	uint8_t *buf;
	size_t len;

	cr_assert_eq(wire_pack_response(&in, &buf, &len), KV_OK);
	cr_assert_eq(wire_unpack_response(buf, len, &A, &out), KV_OK);
	free(buf);
	cr_assert_eq(out.n_blobs, 3);
	cr_assert_neq(out.blobs, blobs);
	expect_blobs(out.blobs, out.blob_lens, 3);
	cr_assert_eq(out.n_subs, 0);
	wire_response_fini(&out);
}

/* A MOVE_PULL answer may carry any number of pairs; a MULTI's subs not. */
Test(wire, response_takes_more_than_a_multi_of_blobs)
{
	size_t n = 3 * RPC_MULTI_MAX + 7, *lens;
	const uint8_t **blobs = blobs_of(n, &lens);
	rpc_response in = { .code = KV_OK, .blobs = blobs, .blob_lens = lens,
		.n_blobs = n }, out;
	uint8_t *buf;
	size_t len;

	cr_assert_eq(wire_pack_response(&in, &buf, &len), KV_OK);
	cr_assert_eq(wire_unpack_response(buf, len, &A, &out), KV_OK);
	free(buf);
	cr_assert_eq(out.n_blobs, n);
	expect_blobs(out.blobs, out.blob_lens, n);
}

Test(wire, response_with_more_subs_than_a_multi_is_proto)
{
	size_t *lens;
	const uint8_t **subs = blobs_of(RPC_MULTI_MAX + 1, &lens);
	rpc_response in = { .code = KV_OK, .subs = subs, .sub_lens = lens },
	    out;
	uint8_t *buf;
	size_t len;

	in.n_subs = RPC_MULTI_MAX;
	cr_assert_eq(wire_pack_response(&in, &buf, &len), KV_OK);
	cr_assert_eq(wire_unpack_response(buf, len, &A, &out), KV_OK);
	free(buf);
	cr_assert_eq(out.n_subs, RPC_MULTI_MAX);
	in.n_subs = RPC_MULTI_MAX + 1;
	cr_assert_eq(wire_pack_response(&in, &buf, &len), KV_OK);
	cr_assert_eq(wire_unpack_response(buf, len, &A, &out), KV_PROTO);
	free(buf);
}

Test(wire, pair_round_trips)
{
	static const uint8_t rec[] = { 9, 0, 0xff, 1 };
	size_t len, kl, vl;
	const uint8_t *k, *v;
	uint8_t *b = wire_pair_make(&A, KEY, sizeof(KEY), rec, sizeof(rec),
	    &len);

	cr_assert_not_null(b);
	cr_assert_eq(len, 4 + sizeof(KEY) + sizeof(rec));
	cr_assert_eq(b[0], sizeof(KEY), "key length, little-endian");
	cr_assert_eq(b[1] | b[2] | b[3], 0);
	cr_assert(wire_pair_read(b, len, &k, &kl, &v, &vl));
	cr_assert_eq(kl, sizeof(KEY));
	cr_assert_arr_eq(k, KEY, sizeof(KEY));
	cr_assert_eq(vl, sizeof(rec));
	cr_assert_arr_eq(v, rec, sizeof(rec));
}

Test(wire, pair_with_an_empty_record_means_deleted)
{
	size_t len, kl, vl = 99;
	const uint8_t *k, *v;
	uint8_t *b = wire_pair_make(&A, KEY, sizeof(KEY), NULL, 0, &len);

	cr_assert_not_null(b);
	cr_assert_eq(len, 4 + sizeof(KEY));
	cr_assert(wire_pair_read(b, len, &k, &kl, &v, &vl));
	cr_assert_eq(kl, sizeof(KEY));
	cr_assert_arr_eq(k, KEY, sizeof(KEY));
	cr_assert_eq(vl, 0);
}

Test(wire, pair_key_length_past_one_byte)
{
	uint8_t key[300];
	size_t len, kl, vl;
	const uint8_t *k, *v;
	memset(key, 0xab, sizeof(key));
	uint8_t *b = wire_pair_make(&A, key, sizeof(key), ITEM, sizeof(ITEM),
	    &len);

	cr_assert_eq(b[0], 300 & 0xff);
	cr_assert_eq(b[1], 300 >> 8);
	cr_assert(wire_pair_read(b, len, &k, &kl, &v, &vl));
	cr_assert_eq(kl, 300);
	cr_assert_arr_eq(v, ITEM, sizeof(ITEM));
}

Test(wire, malformed_pair_is_refused)
{
	static const uint8_t shorter_than_a_length[] = { 3, 0, 0 };
	static const uint8_t key_past_the_end[] = { 5, 0, 0, 0, 'a', 'b' };
	static const uint8_t key_one_past_the_end[] = { 3, 0, 0, 0, 'a',
		'b' };
	static const uint8_t huge_key[] = { 0xff, 0xff, 0xff, 0xff, 'a' };
	static const uint8_t key_exactly_to_the_end[] = { 2, 0, 0, 0, 'a',
		'b' };
	size_t kl, vl;
	const uint8_t *k, *v;

	cr_assert_not(wire_pair_read(shorter_than_a_length, 0, &k, &kl, &v,
	    &vl));
	cr_assert_not(wire_pair_read(shorter_than_a_length,
	    sizeof(shorter_than_a_length), &k, &kl, &v, &vl));
	cr_assert_not(wire_pair_read(key_past_the_end,
	    sizeof(key_past_the_end), &k, &kl, &v, &vl));
	cr_assert_not(wire_pair_read(key_one_past_the_end,
	    sizeof(key_one_past_the_end), &k, &kl, &v, &vl));
	cr_assert_not(wire_pair_read(huge_key, sizeof(huge_key), &k, &kl, &v,
	    &vl));
	/* The boundary: a key to the last byte and no record is fine. */
	cr_assert(wire_pair_read(key_exactly_to_the_end,
	    sizeof(key_exactly_to_the_end), &k, &kl, &v, &vl));
	cr_assert_eq(kl, 2);
	cr_assert_eq(vl, 0);
}

/* Pairs travel as a response's blobs and read back after unpacking. */
Test(wire, pairs_survive_a_response)
{
	size_t lens[2], len, kl, vl;
	const uint8_t *blobs[2], *k, *v;
	rpc_response out;
	uint8_t *buf;

	blobs[0] = wire_pair_make(&A, KEY, sizeof(KEY), ITEM, sizeof(ITEM),
	    &lens[0]);
	blobs[1] = wire_pair_make(&A, KEY, 12, NULL, 0, &lens[1]);
	rpc_response in = { .code = KV_OK, .blobs = blobs, .blob_lens = lens,
		.n_blobs = 2 };
	cr_assert_eq(wire_pack_response(&in, &buf, &len), KV_OK);
	cr_assert_eq(wire_unpack_response(buf, len, &A, &out), KV_OK);
	free(buf);
	cr_assert_eq(out.n_blobs, 2);
	cr_assert(wire_pair_read(out.blobs[0], out.blob_lens[0], &k, &kl, &v,
	    &vl));
	cr_assert_arr_eq(k, KEY, sizeof(KEY));
	cr_assert_eq(vl, sizeof(ITEM));
	cr_assert_arr_eq(v, ITEM, sizeof(ITEM));
	cr_assert(wire_pair_read(out.blobs[1], out.blob_lens[1], &k, &kl, &v,
	    &vl));
	cr_assert_eq(kl, 12);
	cr_assert_eq(vl, 0, "the deletion survives");
}
