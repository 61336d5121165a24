/*
 * wire_cluster_test.c — the cluster's nng messages (proto/wire_cluster.c):
 * catalog events, survey answers (member) and questions, and the
 * node-to-node envelope (peer_msg, peer_reply) survive pack -> unpack
 * with every field; hostile bytes (seeded random buffers, every
 * truncation and byte flips of valid messages, hand-made protobuf errors)
 * give KV_PROTO and never a crash or a leak. Same style as wire_test.c;
 * run it under ASan too.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdlib.h>
#include <string.h>

#include "wire_cluster.h"
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

TestSuite(wire_cluster, .init = setup, .fini = teardown);


static uint32_t GONE[] = { 3, 0, 99999, UINT32_MAX };

/*
 * A change with two upserts (borrowed from ups, filled here: free with
 * table_fini) and four gone ids. next_table_id 300 is the last field and
 * a two-byte varint, so that the last byte of the packed event matters.
 */
static catalog_event
full_change(table ups[2])
{
	full_table(&ups[0], "alpha", 7, true);
	full_table(&ups[1], "beta", 299, false);
	return (catalog_event) {
		.kind = CATALOG_EVENT_CHANGE, .version = 0x123456789aULL,
		.prev = 0x1234567899ULL, .published_us = 1700000000123456LL,
		.upserts = ups, .n_upserts = 2, .gone = GONE, .n_gone = 4,
		.next_table_id = 300,
	};
}

static void
expect_event_eq(const catalog_event *a, const catalog_event *b)
{
	cr_assert_eq(a->kind, b->kind);
	cr_assert_eq(a->version, b->version);
	cr_assert_eq(a->prev, b->prev);
	cr_assert_eq(a->published_us, b->published_us);
	cr_assert_eq(a->next_table_id, b->next_table_id);
	cr_assert_eq(a->n_upserts, b->n_upserts);
	for (size_t i = 0; i < a->n_upserts; i++)
		expect_table_eq(&a->upserts[i], &b->upserts[i]);
	cr_assert_eq(a->n_gone, b->n_gone);
	if (b->n_gone > 0)
		cr_assert_arr_eq(a->gone, b->gone,
		    b->n_gone * sizeof(uint32_t));
}

static const part_stats STATS[3] = {
	{ 7, 0, 1, 10, 1000, 6000000000, 2000000000, -4000000, 7,
	    12, 34, 5, 6, 7, 8, 0, 0, 2, { 3, 0 }, { 300, 0 } },
	{ 7, 1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5, 5, 0, { 0 },
	    { 0 } },
	{ UINT32_MAX, UINT32_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX,
	    INT64_MAX, INT64_MIN, INT64_MIN, INT64_MAX, UINT64_MAX,
	    UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX,
	    UINT64_MAX, UINT64_MAX, WIRE_LOCAL_MAX, { UINT64_MAX, 1, 2, 3,
	    UINT64_MAX }, { UINT64_MAX, 0, 0, 0, 1 } },
};

static const feed_arrival ARRIVALS[3] = {
	{ 1, 1700000000000000LL, 1700000000000250LL },
	{ 2, 0, 0 },
	{ UINT64_MAX, INT64_MAX, INT64_MIN },
};

/*
 * A node's answer with stats and arrivals; feed_gaps (the last field) is
 * a two-byte varint.
 */
static member
full_node(void)
{
	return (member) {
		.kind = MEMBER_NODE, .index = 63, .pid = 4242,
		.started_ms = 1700000000999LL, .catalog_version = 1ULL << 50,
		.stats = (part_stats *) STATS, .n_stats = 3,
		.addr = "ipc://.kv/run/node0.ipc", .feed_changes = 17,
		.feed_fetches = 2, .feed_gaps = 300,
		.arrivals = (feed_arrival *) ARRIVALS, .n_arrivals = 3,
	};
}

static member
full_router(void)
{
	return (member) {
		.kind = MEMBER_ROUTER, .index = 1, .pid = INT64_MAX,
		.started_ms = -5, .catalog_version = 9, .requests = UINT64_MAX,
		.connections = UINT32_MAX, .addr = "[::1]:8000",
		.feed_changes = 1, .feed_fetches = 1, .feed_gaps = 0,
	};
}

static void
expect_member_eq(const member *a, const member *b)
{
	cr_assert_eq(a->kind, b->kind);
	cr_assert_eq(a->index, b->index);
	cr_assert_eq(a->pid, b->pid);
	cr_assert_eq(a->started_ms, b->started_ms);
	cr_assert_eq(a->catalog_version, b->catalog_version);
	cr_assert_eq(a->requests, b->requests);
	cr_assert_eq(a->connections, b->connections);
	cr_assert_not_null(a->addr);
	cr_assert_str_eq(a->addr, b->addr != NULL ? b->addr : "");
	cr_assert_eq(a->feed_changes, b->feed_changes);
	cr_assert_eq(a->feed_fetches, b->feed_fetches);
	cr_assert_eq(a->feed_gaps, b->feed_gaps);
	cr_assert_eq(a->n_stats, b->n_stats);
	for (size_t i = 0; i < b->n_stats; i++)
		cr_assert_eq(memcmp(&a->stats[i], &b->stats[i],
		    sizeof(part_stats)), 0, "stats[%zu]", i);
	if (b->n_stats == 0)
		cr_assert_null(a->stats);
	cr_assert_eq(a->n_arrivals, b->n_arrivals);
	for (size_t i = 0; i < b->n_arrivals; i++) {
		cr_assert_eq(a->arrivals[i].version, b->arrivals[i].version);
		cr_assert_eq(a->arrivals[i].published_us,
		    b->arrivals[i].published_us);
		cr_assert_eq(a->arrivals[i].applied_us,
		    b->arrivals[i].applied_us);
	}
	if (b->n_arrivals == 0)
		cr_assert_null(a->arrivals);
}

/* Bytes with a zero, 0xff and a NUL-less tail. */
static const uint8_t BODY[] = { 0, 1, 2, 0xff, 0x80, 0, 'x', 'y', 0x7f };

/* ---- round trips ---- */

Test(wire_cluster, catalog_change_round_trips_every_field)
{
	table ups[2];
	catalog_event in = full_change(ups), out;
	uint8_t *buf;
	size_t len;

	cr_assert_eq(wire_pack_catalog_event(&in, &buf, &len), KV_OK);
	cr_assert_eq(wire_unpack_catalog_event(buf, len, &out), KV_OK);
	free(buf);
	expect_event_eq(&out, &in);
	cr_assert_neq(out.upserts, in.upserts);
	cr_assert_neq(out.gone, in.gone);
	wire_catalog_event_fini(&out);
	cr_assert_null(out.upserts);
	cr_assert_null(out.gone);
	cr_assert_eq(out.n_upserts, 0);
	wire_catalog_event_fini(&out); /* twice is safe */
	table_fini(&ups[0]);
	table_fini(&ups[1]);
}

Test(wire_cluster, heartbeat_round_trips_without_tables)
{
	catalog_event in = { .kind = CATALOG_EVENT_HEARTBEAT,
		.version = UINT64_MAX, .published_us = 1 }, out;
	uint8_t *buf;
	size_t len;

	cr_assert_eq(wire_pack_catalog_event(&in, &buf, &len), KV_OK);
	cr_assert_eq(wire_unpack_catalog_event(buf, len, &out), KV_OK);
	free(buf);
	expect_event_eq(&out, &in);
	cr_assert_null(out.upserts);
	cr_assert_null(out.gone);
	wire_catalog_event_fini(&out);
}

Test(wire_cluster, change_of_only_removals_round_trips)
{
	catalog_event in = { .kind = CATALOG_EVENT_CHANGE, .version = 2,
		.prev = 1, .gone = GONE, .n_gone = 4 }, out;
	uint8_t *buf;
	size_t len;

	cr_assert_eq(wire_pack_catalog_event(&in, &buf, &len), KV_OK);
	cr_assert_eq(wire_unpack_catalog_event(buf, len, &out), KV_OK);
	free(buf);
	expect_event_eq(&out, &in);
	cr_assert_null(out.upserts);
	wire_catalog_event_fini(&out);
}

struct bad_kind {
	uint32_t kind;
};

ParameterizedTestParameters(wire_cluster, event_kind_outside_the_two_is_proto)
{
	static struct bad_kind cases[] = { { 0 }, { 3 }, { 1000 },
		{ UINT32_MAX } };
	return cr_make_param_array(struct bad_kind, cases,
	    sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct bad_kind *c, wire_cluster,
    event_kind_outside_the_two_is_proto)
{
	table ups[2];
	catalog_event in = full_change(ups), out;
	uint8_t *buf;
	size_t len;

	in.kind = (catalog_event_kind) c->kind;
	cr_assert_eq(wire_pack_catalog_event(&in, &buf, &len), KV_OK);
	cr_assert_eq(wire_unpack_catalog_event(buf, len, &out), KV_PROTO,
	    "kind %u", c->kind);
	free(buf);
	cr_assert_null(out.upserts);
	cr_assert_null(out.gone);
	cr_assert_eq(out.n_upserts, 0);
	cr_assert_eq(out.n_gone, 0);
	table_fini(&ups[0]);
	table_fini(&ups[1]);
}

/* Upserts that wire.c refuses as tables are refused in an event too. */
struct bad_table {
	int what;
	char why[40];
};

ParameterizedTestParameters(wire_cluster, event_with_a_bad_table_is_proto)
{
	static struct bad_table cases[] = {
		{ 0, "partitions with a gap" },
		{ 1, "partitions not up to UINT64_MAX" },
		{ 2, "two partitions of one id" },
		{ 3, "hash key of type SS" },
		{ 4, "attribute of type M" },
		{ 5, "billing mode 0" },
		{ 6, "status 9" },
	};
	return cr_make_param_array(struct bad_table, cases,
	    sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct bad_table *c, wire_cluster,
    event_with_a_bad_table_is_proto)
{
	table ups[2];
	catalog_event in = full_change(ups), out;
	uint8_t *buf;
	size_t len;
	table *t = &ups[1]; /* the second, so the first is unpacked first */

	switch (c->what) {
	case 0: t->parts[2].lo++; break;
	case 1: t->parts[4].last--; break;
	case 2: t->parts[1].id = t->parts[0].id; break;
	case 3: t->hash.type = VAL_SS; break;
	case 4: t->attr_defs[0].type = VAL_M; break;
	case 5: t->billing = 0; break;
	default: t->status = 9; break;
	}
	cr_assert_eq(wire_pack_catalog_event(&in, &buf, &len), KV_OK);
	cr_assert_eq(wire_unpack_catalog_event(buf, len, &out), KV_PROTO,
	    "%s", c->why);
	free(buf);
	cr_assert_null(out.upserts, "%s", c->why);
	cr_assert_null(out.gone, "%s", c->why);
	table_fini(&ups[0]);
	table_fini(&ups[1]);
}

Test(wire_cluster, node_member_round_trips_stats_and_arrivals)
{
	member in = full_node(), out;
	uint8_t *buf;
	size_t len;

	cr_assert_eq(wire_pack_member(&in, &buf, &len), KV_OK);
	cr_assert_eq(wire_unpack_member(buf, len, &A, &out), KV_OK);
	free(buf); /* the answer lives in the arena, not in buf */
	expect_member_eq(&out, &in);
	cr_assert_neq(out.stats, in.stats);
	cr_assert_neq(out.arrivals, in.arrivals);
}

Test(wire_cluster, router_member_round_trips_its_counters)
{
	member in = full_router(), out;
	uint8_t *buf;
	size_t len;

	cr_assert_eq(wire_pack_member(&in, &buf, &len), KV_OK);
	cr_assert_eq(wire_unpack_member(buf, len, &A, &out), KV_OK);
	free(buf);
	expect_member_eq(&out, &in);
}

Test(wire_cluster, member_without_address_unpacks_as_empty_address)
{
	member in = { .kind = MEMBER_NODE }, out;
	uint8_t *buf;
	size_t len;

	cr_assert_eq(wire_pack_member(&in, &buf, &len), KV_OK);
	cr_assert_eq(wire_unpack_member(buf, len, &A, &out), KV_OK);
	free(buf);
	cr_assert_eq(out.kind, MEMBER_NODE);
	cr_assert_not_null(out.addr);
	cr_assert_str_eq(out.addr, "");
	cr_assert_null(out.stats);
	cr_assert_null(out.arrivals);
}

ParameterizedTestParameters(wire_cluster, member_kind_outside_the_two_is_proto)
{
	static struct bad_kind cases[] = { { 0 }, { 3 }, { UINT32_MAX } };
	return cr_make_param_array(struct bad_kind, cases,
	    sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct bad_kind *c, wire_cluster,
    member_kind_outside_the_two_is_proto)
{
	member in = full_node(), out;
	uint8_t *buf;
	size_t len;

	in.kind = (member_kind) c->kind;
	cr_assert_eq(wire_pack_member(&in, &buf, &len), KV_OK);
	cr_assert_eq(wire_unpack_member(buf, len, &A, &out), KV_PROTO,
	    "kind %u", c->kind);
	free(buf);
	cr_assert_null(out.stats);
	cr_assert_eq(out.n_stats, 0);
	cr_assert_null(out.arrivals);
}

Test(wire_cluster, survey_ask_round_trips_its_bits)
{
	static const uint32_t whats[] = { 0, SURVEY_STATS, SURVEY_ARRIVALS,
		SURVEY_STATS | SURVEY_ARRIVALS, UINT32_MAX };
	for (size_t i = 0; i < sizeof(whats) / sizeof(whats[0]); i++) {
		uint8_t *buf;
		size_t len;
		uint32_t what = 12345;
		cr_assert_eq(wire_pack_survey_ask(whats[i], &buf, &len), KV_OK);
		cr_assert_eq(wire_unpack_survey_ask(buf, len, &what), KV_OK);
		free(buf);
		cr_assert_eq(what, whats[i]);
	}
}

Test(wire_cluster, peer_msg_round_trips_binary_bodies)
{
	peer_msg in = { .type = 31, .from = 63, .body = BODY,
		.len = sizeof(BODY) }, out;
	uint8_t *buf;
	size_t len;

	cr_assert_eq(wire_pack_peer_msg(&in, &buf, &len), KV_OK);
	cr_assert_eq(wire_unpack_peer_msg(buf, len, &A, &out), KV_OK);
	cr_assert_eq(out.type, 31);
	cr_assert_eq(out.from, 63);
	cr_assert_eq(out.len, sizeof(BODY));
	cr_assert_arr_eq(out.body, BODY, sizeof(BODY));
	/* The body lives in the arena, not in the packed bytes. */
	memset(buf, 0xaa, len);
	free(buf);
	cr_assert_arr_eq(out.body, BODY, sizeof(BODY));
}

Test(wire_cluster, peer_msg_without_body_round_trips)
{
	peer_msg in = { .type = 1 }, out;
	uint8_t *buf;
	size_t len;

	cr_assert_eq(wire_pack_peer_msg(&in, &buf, &len), KV_OK);
	cr_assert_eq(wire_unpack_peer_msg(buf, len, &A, &out), KV_OK);
	free(buf);
	cr_assert_eq(out.type, 1);
	cr_assert_eq(out.from, 0);
	cr_assert_eq(out.len, 0);
}

Test(wire_cluster, peer_reply_round_trips_every_code)
{
	for (int code = KV_OK; code < KV_ERR_COUNT; code++) {
		peer_reply in = { .code = (kv_err) code,
			.message = code % 2 ? "a reason, \xc3\xa9" : NULL,
			.body = code % 3 ? BODY : NULL,
			.len = code % 3 ? sizeof(BODY) : 0 }, out;
		uint8_t *buf;
		size_t len;
		cr_assert_eq(wire_pack_peer_reply(&in, &buf, &len), KV_OK);
		cr_assert_eq(wire_unpack_peer_reply(buf, len, &A, &out), KV_OK,
		    "%s", kv_err_name((kv_err) code));
		free(buf);
		cr_assert_eq(out.code, code);
		if (in.message == NULL)
			cr_assert_null(out.message);
		else
			cr_assert_str_eq(out.message, in.message);
		cr_assert_eq(out.len, in.len);
		if (in.len > 0)
			cr_assert_arr_eq(out.body, BODY, sizeof(BODY));
	}
}

Test(wire_cluster, peer_reply_with_empty_message_has_none)
{
	peer_reply in = { .code = KV_BUSY, .message = "" }, out;
	uint8_t *buf;
	size_t len;

	cr_assert_eq(wire_pack_peer_reply(&in, &buf, &len), KV_OK);
	cr_assert_eq(wire_unpack_peer_reply(buf, len, &A, &out), KV_OK);
	free(buf);
	cr_assert_eq(out.code, KV_BUSY);
	cr_assert_null(out.message);
}

ParameterizedTestParameters(wire_cluster,
    peer_reply_code_outside_kv_err_is_proto)
{
	static struct bad_kind cases[] = { { KV_ERR_COUNT },
		{ KV_ERR_COUNT + 1 }, { 0x80000000u }, { UINT32_MAX } };
	return cr_make_param_array(struct bad_kind, cases,
	    sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct bad_kind *c, wire_cluster,
    peer_reply_code_outside_kv_err_is_proto)
{
	peer_reply in = { .code = (kv_err) c->kind, .message = "m",
		.body = BODY, .len = sizeof(BODY) }, out;
	uint8_t *buf;
	size_t len;

	cr_assert_eq(wire_pack_peer_reply(&in, &buf, &len), KV_OK);
	cr_assert_eq(wire_unpack_peer_reply(buf, len, &A, &out), KV_PROTO,
	    "code %u", c->kind);
	free(buf);
	cr_assert_null(out.body);
	cr_assert_null(out.message);
}

/* ---- hostile bytes ---- */

typedef enum kind {
	K_EVENT,
	K_MEMBER,
	K_ASK,
	K_PEER_MSG,
	K_PEER_REPLY,
	K_COUNT
} kind;

static const char *const KIND_NAMES[K_COUNT] = { "event", "member", "ask",
	"peer_msg", "peer_reply" };

/*
 * try_unpack unpacks buf as kind k, touches and frees whatever it got,
 * and returns the code, which must be KV_OK or KV_PROTO. On KV_OK it
 * packs the result again into *repacked (owned) when repacked is not
 * NULL.
 */
static kv_err
try_unpack(kind k, const uint8_t *buf, size_t len, uint8_t **repacked,
    size_t *relen)
{
	kv_err rv;
	arena a;
	volatile uint8_t sink = 0;
	uint8_t *rb = NULL;
	size_t rl = 0;

	arena_init(&a);
	switch (k) {
	case K_EVENT: {
		catalog_event e;
		rv = wire_unpack_catalog_event(buf, len, &e);
		if (rv == KV_OK) {
			for (size_t i = 0; i < e.n_upserts; i++) {
				sink ^= (uint8_t) strlen(e.upserts[i].name);
				sink ^= (uint8_t) strlen(e.upserts[i].hash.name);
				cr_assert(e.upserts[i].n_parts == 0 ||
				    table_parts_valid(&e.upserts[i]));
			}
			for (size_t i = 0; i < e.n_gone; i++)
				sink ^= (uint8_t) e.gone[i];
			cr_assert(e.kind == CATALOG_EVENT_CHANGE ||
			    e.kind == CATALOG_EVENT_HEARTBEAT);
			if (repacked != NULL)
				cr_assert_eq(wire_pack_catalog_event(&e, &rb,
				    &rl), KV_OK);
		} else {
			cr_assert_null(e.upserts);
			cr_assert_null(e.gone);
		}
		wire_catalog_event_fini(&e);
		break;
	}
	case K_MEMBER: {
		member m;
		rv = wire_unpack_member(buf, len, &a, &m);
		if (rv == KV_OK) {
			cr_assert(m.kind == MEMBER_NODE ||
			    m.kind == MEMBER_ROUTER);
			sink ^= (uint8_t) strlen(m.addr);
			for (size_t i = 0; i < m.n_stats; i++)
				sink ^= (uint8_t) m.stats[i].bytes;
			for (size_t i = 0; i < m.n_arrivals; i++)
				sink ^= (uint8_t) m.arrivals[i].version;
			if (repacked != NULL)
				cr_assert_eq(wire_pack_member(&m, &rb, &rl),
				    KV_OK);
		}
		break;
	}
	case K_ASK: {
		uint32_t what;
		rv = wire_unpack_survey_ask(buf, len, &what);
		if (rv == KV_OK && repacked != NULL)
			cr_assert_eq(wire_pack_survey_ask(what, &rb, &rl),
			    KV_OK);
		break;
	}
	case K_PEER_MSG: {
		peer_msg m;
		rv = wire_unpack_peer_msg(buf, len, &a, &m);
		if (rv == KV_OK) {
			for (size_t i = 0; i < m.len; i++)
				sink ^= m.body[i];
			if (repacked != NULL)
				cr_assert_eq(wire_pack_peer_msg(&m, &rb, &rl),
				    KV_OK);
		}
		break;
	}
	default: {
		peer_reply r;
		rv = wire_unpack_peer_reply(buf, len, &a, &r);
		if (rv == KV_OK) {
			cr_assert_lt(r.code, KV_ERR_COUNT);
			for (size_t i = 0; i < r.len; i++)
				sink ^= r.body[i];
			if (r.message != NULL)
				sink ^= (uint8_t) strlen(r.message);
			if (repacked != NULL)
				cr_assert_eq(wire_pack_peer_reply(&r, &rb,
				    &rl), KV_OK);
		}
		break;
	}
	}
	(void) sink;
	arena_fini(&a);
	cr_assert(rv == KV_OK || rv == KV_PROTO, "%s: %s", KIND_NAMES[k],
	    kv_err_name(rv));
	if (repacked != NULL) {
		*repacked = rb;
		*relen = rl;
	} else {
		free(rb);
	}
	return rv;
}

/* pack_full packs the full sample of kind k into owned bytes. */
static void
pack_full(kind k, uint8_t **buf, size_t *len)
{
	switch (k) {
	case K_EVENT: {
		table ups[2];
		catalog_event e = full_change(ups);
		cr_assert_eq(wire_pack_catalog_event(&e, buf, len), KV_OK);
		table_fini(&ups[0]);
		table_fini(&ups[1]);
		break;
	}
	case K_MEMBER: {
		member m = full_node();
		cr_assert_eq(wire_pack_member(&m, buf, len), KV_OK);
		break;
	}
	case K_ASK:
		/* One two-byte varint: 300. */
		cr_assert_eq(wire_pack_survey_ask(300, buf, len), KV_OK);
		break;
	case K_PEER_MSG: {
		peer_msg m = { .type = 1, .from = 2, .body = BODY,
			.len = sizeof(BODY) };
		cr_assert_eq(wire_pack_peer_msg(&m, buf, len), KV_OK);
		break;
	}
	default: {
		peer_reply r = { .code = KV_STALE_ROUTE, .message = "moved",
			.body = BODY, .len = sizeof(BODY) };
		cr_assert_eq(wire_pack_peer_reply(&r, buf, len), KV_OK);
		break;
	}
	}
}

struct kind_case {
	kind k;
};

static struct kind_case ALL_KINDS[] = { { K_EVENT }, { K_MEMBER },
	{ K_ASK }, { K_PEER_MSG }, { K_PEER_REPLY } };

ParameterizedTestParameters(wire_cluster, random_bytes_never_crash)
{
	return cr_make_param_array(struct kind_case, ALL_KINDS, K_COUNT);
}

ParameterizedTest(struct kind_case *c, wire_cluster, random_bytes_never_crash)
{
	uint8_t buf[256];

	rng_state = 0x0123456789abcdefULL + (uint64_t) c->k;
	for (int i = 0; i < 3000; i++) {
		size_t len = (size_t) (rng() % sizeof(buf));
		for (size_t j = 0; j < len; j++)
			buf[j] = (uint8_t) rng();
		/* Exactly len bytes on the heap, so ASan sees overreads. */
		uint8_t *exact = malloc(len > 0 ? len : 1);
		memcpy(exact, buf, len);
		try_unpack(c->k, exact, len, NULL, NULL);
		free(exact);
	}
}

ParameterizedTestParameters(wire_cluster, every_truncation_is_safe)
{
	return cr_make_param_array(struct kind_case, ALL_KINDS, K_COUNT);
}

/*
 * Every prefix of a valid message is KV_PROTO, or it ends exactly between
 * two fields and then means exactly its bytes: packing what it gave back
 * yields the prefix again (protobuf-c packs fields in number order, as
 * the full sample was packed), so no field was half read.
 */
ParameterizedTest(struct kind_case *c, wire_cluster, every_truncation_is_safe)
{
	uint8_t *full;
	size_t len;
	int refused = 0;

	pack_full(c->k, &full, &len);
	cr_assert_gt(len, 2);
	uint8_t *re;
	size_t relen;
	cr_assert_eq(try_unpack(c->k, full, len, &re, &relen), KV_OK);
	cr_assert_eq(relen, len);
	cr_assert_arr_eq(re, full, len);
	free(re);
	for (size_t n = 0; n < len; n++) {
		uint8_t *cut = malloc(n > 0 ? n : 1);
		memcpy(cut, full, n);
		if (try_unpack(c->k, cut, n, &re, &relen) != KV_OK) {
			refused++;
		} else {
			cr_assert_eq(relen, n, "%s: prefix of %zu read as %zu "
			    "bytes", KIND_NAMES[c->k], n, relen);
			if (n > 0)
				cr_assert_arr_eq(re, cut, n, "%s: prefix %zu",
				    KIND_NAMES[c->k], n);
		}
		free(re);
		free(cut);
	}
	/* The last field of each sample spans more than one byte. */
	uint8_t *cut = malloc(len - 1);
	memcpy(cut, full, len - 1);
	cr_assert_eq(try_unpack(c->k, cut, len - 1, NULL, NULL), KV_PROTO,
	    "%s without its last byte", KIND_NAMES[c->k]);
	free(cut);
	cr_assert_gt(refused, (int) len / 2, "%s: %d of %zu truncations "
	    "refused", KIND_NAMES[c->k], refused, len);
	free(full);
}

ParameterizedTestParameters(wire_cluster, byte_flips_are_safe)
{
	return cr_make_param_array(struct kind_case, ALL_KINDS, K_COUNT);
}

ParameterizedTest(struct kind_case *c, wire_cluster, byte_flips_are_safe)
{
	uint8_t *full;
	size_t len;

	pack_full(c->k, &full, &len);
	rng_state = 0xfeedfacecafebeefULL + (uint64_t) c->k;
	uint8_t *m = malloc(len);
	for (int round = 0; round < 6; round++) {
		for (size_t i = 0; i < len; i++) {
			memcpy(m, full, len);
			if (round < 3)
				m[i] = round == 0 ? 0xff : round == 1 ? 0x00 :
				    (uint8_t) rng();
			else /* one bit, and a random byte elsewhere */
				m[i] ^= (uint8_t) (1u << (rng() % 8));
			if (round >= 4)
				m[rng() % len] = (uint8_t) rng();
			try_unpack(c->k, m, len, NULL, NULL);
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

ParameterizedTestParameters(wire_cluster, malformed_protobuf_is_refused)
{
	static struct raw_case cases[] = {
		{ { 0x08 }, 1, "tag without its varint" },
		{ { 0x08, 0x80 }, 2, "varint cut short" },
		{ { 0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		    0xff, 0x01 }, 12, "varint of 12 bytes" },
		{ { 0x1a, 0x05, 'a' }, 3, "length past the end" },
		{ { 0x1a, 0xff, 0xff, 0xff, 0xff, 0x0f }, 6, "huge length" },
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

ParameterizedTest(struct raw_case *c, wire_cluster,
    malformed_protobuf_is_refused)
{
	for (kind k = K_EVENT; k < K_COUNT; k++) {
		uint8_t *b = malloc(c->len);
		memcpy(b, c->bytes, c->len);
		cr_assert_eq(try_unpack(k, b, c->len, NULL, NULL), KV_PROTO,
		    "%s, %s", c->why, KIND_NAMES[k]);
		free(b);
	}
}

/* Messages that parse as protobuf but break a rule of ours. */
Test(wire_cluster, empty_bytes_are_no_event_and_no_member)
{
	catalog_event e;
	member m;
	cr_assert_eq(wire_unpack_catalog_event((const uint8_t *) "", 0, &e),
	    KV_PROTO, "kind 0");
	cr_assert_eq(wire_unpack_member((const uint8_t *) "", 0, &A, &m),
	    KV_PROTO, "kind 0");
	/* The others have no required field: all-default is valid. */
	uint32_t what = 7;
	cr_assert_eq(wire_unpack_survey_ask((const uint8_t *) "", 0, &what),
	    KV_OK);
	cr_assert_eq(what, 0);
	peer_reply r;
	cr_assert_eq(wire_unpack_peer_reply((const uint8_t *) "", 0, &A, &r),
	    KV_OK);
	cr_assert_eq(r.code, KV_OK);
}

/* A Table upsert without its hash key definition (Table field 4). */
Test(wire_cluster, event_upsert_without_hash_key_is_proto)
{
	/* CatalogEvent { kind: 1, upserts: Table { name: "x", id: 5 } } */
	static const uint8_t raw[] = { 0x08, 0x01, 0x2a, 0x05, 0x0a, 0x01,
		'x', 0x10, 0x05 };
	catalog_event e;
	cr_assert_eq(wire_unpack_catalog_event(raw, sizeof(raw), &e),
	    KV_PROTO);
	cr_assert_null(e.upserts);
}
