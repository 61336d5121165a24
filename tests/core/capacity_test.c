/*
 * capacity_test.c — capacity units (core/capacity.c) against the examples
 * of the DynamoDB developer guide, quoted before each table row ("Item
 * sizes and formats"/CapacityUnitCalculations, "Read/write capacity
 * mode", transaction-apis, GSI "Provisioned throughput considerations"),
 * and against the costs measured on the shop dataset in SEEDS.md §1.
 * Half units throughout: 1 means 0.5 RCU, 2 means 1.0 RCU.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <string.h>

#include "capacity.h"

#define KB 1024

/* Criterion may run a test in a fresh process: no pointers here. */
struct read_case {
	uint64_t bytes;
	uint64_t strong; /* half units, ConsistentRead = true */
	uint64_t eventual; /* half units, the default */
};

ParameterizedTestParameters(capacity, reads_cost_what_the_guide_says)
{
	static struct read_case cases[] = {
		/*
		 * "Item sizes for reads are rounded up to the next 4 KB
		 * multiple. For example, reading a 3,500-byte item consumes
		 * the same throughput as reading a 4 KB item."
		 */
		{ 3500, 2, 1 },
		/*
		 * GetItem: "if you read an item that is 3.5 KB, DynamoDB
		 * rounds the item size to 4 KB": 1 RCU strongly consistent,
		 * 0.5 eventually consistent ("divide it by two").
		 */
		{ 3584, 2, 1 },
		{ 4 * KB, 2, 1 },
		/* A 4.5 KB item rounds to 8 KB: 2 RCU, or 1 eventually. */
		{ 4608, 4, 2 },
		/*
		 * "if your item size is 8 KB, you require 2 read capacity
		 * units to sustain one strongly consistent read per second,
		 * 1 read capacity unit if you choose eventually consistent
		 * reads" (the transactional 4 is in txn_reads_cost_double).
		 */
		{ 8 * KB, 4, 2 },
		/* "If you read an item of 10 KB, DynamoDB rounds the item
		 * size to 12 KB": 3 RCU, 1.5 eventually consistent. */
		{ 10 * KB, 6, 3 },
		/*
		 * Query: "suppose your query returns 10 items whose combined
		 * size is 40.8 KB. DynamoDB rounds the item size for the
		 * operation to 44 KB": 11 RCU (40.8 KB = 41,779 bytes).
		 */
		{ 41779, 22, 11 },
		/*
		 * "If a query returns 1500 items of 64 bytes each, the
		 * cumulative size is 96 KB": 24 RCU, not 1500 (one rounding
		 * per page, not per item).
		 */
		{ 1500 * 64, 48, 24 },
		/*
		 * "For an eventually consistent read, if total item size is
		 * 80 KB, the operation consumes only 10 capacity units."
		 */
		{ 80 * KB, 40, 20 },
		/*
		 * GSI: "each item contains 2000 bytes of data [...] the query
		 * returns 8 items. The total size [...] 16,000 bytes; this is
		 * then rounded up to the nearest 4 KB boundary [...] the
		 * total cost is 0.5 x (16 KB / 4 KB), or 2 read capacity
		 * units."
		 */
		{ 8 * 2000, 8, 4 },
		/*
		 * "If you perform a read operation on an item that does not
		 * exist, DynamoDB will still consume provisioned read
		 * throughput: A strongly consistent read request consumes one
		 * read capacity unit, while an eventually consistent read
		 * request consumes 0.5 of a read capacity unit."
		 */
		{ 0, 2, 1 },
		/* Boundaries around one and two read units. */
		{ 1, 2, 1 },
		{ 4095, 2, 1 },
		{ 4096, 2, 1 },
		{ 4097, 4, 2 },
		{ 8192, 4, 2 },
		{ 8193, 6, 3 },
		/* A whole 1 MB page: 256 RCU, 128 eventually consistent. */
		{ 1024 * KB, 512, 256 },
		/* The largest item, 400 KB: 100 RCU. */
		{ 400 * KB, 200, 100 },
	};

	return cr_make_param_array(struct read_case, cases,
	    sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct read_case *c, capacity,
    reads_cost_what_the_guide_says)
{
	uint64_t s = capacity_read_half_units(c->bytes, true);
	uint64_t e = capacity_read_half_units(c->bytes, false);

	cr_assert_eq(s, c->strong, "%llu bytes strong: %llu, expected %llu",
	    (unsigned long long) c->bytes, (unsigned long long) s,
	    (unsigned long long) c->strong);
	cr_assert_eq(e, c->eventual, "%llu bytes eventual: %llu, expected "
	    "%llu", (unsigned long long) c->bytes, (unsigned long long) e,
	    (unsigned long long) c->eventual);
	/* Eventually consistent is exactly half: never rounded. */
	cr_assert_eq(2 * e, s);
}

struct write_case {
	uint64_t old_size;
	uint64_t new_size;
	uint64_t units; /* whole WCU */
};

ParameterizedTestParameters(capacity, writes_cost_what_the_guide_says)
{
	static struct write_case cases[] = {
		/*
		 * BatchWriteItem "writes a 500 byte item and a 3.5 KB item":
		 * each is "an individual PutItem", 1 KB and 4 KB.
		 */
		{ 0, 500, 1 },
		{ 0, 3584, 4 },
		/*
		 * "if you put or delete an item of 1.6 KB, DynamoDB rounds
		 * the item size up to 2 KB."
		 */
		{ 0, 1639, 2 },
		{ 1639, 0, 2 },
		/* "if your item size is 2 KB, you require 2 write capacity
		 * units to sustain one write request". */
		{ 0, 2 * KB, 2 },
		/*
		 * PutItem replacing an item: "the item size that matters is
		 * the larger of the two". UpdateItem: "the larger of the
		 * 'before' and 'after' item sizes", even when one attribute
		 * changes.
		 */
		{ 3000, 500, 3 },
		{ 500, 3000, 3 },
		{ 2 * KB, 2 * KB, 2 },
		/*
		 * A failed conditional write: "a failed conditional write of
		 * a 1 KB item would consume one write capacity unit; if the
		 * item were twice that size, the failed conditional write
		 * would consume two"; "If the item does not exist, DynamoDB
		 * will consume one write capacity unit." The caller passes
		 * the existing item's size and 0.
		 */
		{ 1 * KB, 0, 1 },
		{ 2 * KB, 0, 2 },
		{ 0, 0, 1 },
		/* Boundaries around one and two write units. */
		{ 0, 1, 1 },
		{ 0, 1023, 1 },
		{ 0, 1024, 1 },
		{ 0, 1025, 2 },
		{ 1025, 1, 2 },
		/* The largest item, 400 KB: 400 WCU. */
		{ 0, 400 * KB, 400 },
	};

	return cr_make_param_array(struct write_case, cases,
	    sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct write_case *c, capacity,
    writes_cost_what_the_guide_says)
{
	uint64_t u = capacity_write_units(c->old_size, c->new_size);

	cr_assert_eq(u, c->units, "old %llu new %llu: %llu, expected %llu",
	    (unsigned long long) c->old_size,
	    (unsigned long long) c->new_size, (unsigned long long) u,
	    (unsigned long long) c->units);
}

/*
 * BatchGetItem: "if BatchGetItem reads a 1.5 KB item and a 6.5 KB item,
 * DynamoDB will calculate the size as 12 KB (4 KB + 8 KB), not 8 KB
 * (1.5 KB + 6.5 KB)."
 */
Test(capacity, batch_get_rounds_each_item)
{
	uint64_t s = capacity_read_half_units(1536, true) +
	    capacity_read_half_units(6656, true);
	uint64_t e = capacity_read_half_units(1536, false) +
	    capacity_read_half_units(6656, false);

	cr_assert_eq(s, 6);    /* 12 KB: 3 RCU */
	cr_assert_eq(e, 3);    /* 1.5 RCU */
	cr_assert_eq(capacity_read_half_units(1536 + 6656, true), 4);
}

/*
 * BatchWriteItem: "if BatchWriteItem writes a 500 byte item and a 3.5 KB
 * item, DynamoDB will calculate the size as 5 KB (1 KB + 4 KB), not 4 KB
 * (500 bytes + 3.5 KB)."
 */
Test(capacity, batch_write_rounds_each_item)
{
	cr_assert_eq(capacity_write_units(0, 500) +
	    capacity_write_units(0, 3584), 5);
	cr_assert_eq(capacity_write_units(0, 500 + 3584), 4);
}

/*
 * "A transactional read request of an item up to 4 KB requires two read
 * units"; "if your item size is 8 KB, you require [...] 4 read capacity
 * units for a transactional read request"; "if your application runs one
 * read transaction per second, and each transaction reads three 500-byte
 * items in your table, you would need to provision six read capacity
 * units".
 */
Test(capacity, txn_reads_cost_double)
{
	uint64_t three = 0;
	int i;

	cr_assert_eq(capacity_txn_read_half_units(4 * KB), 4);
	cr_assert_eq(capacity_txn_read_half_units(8 * KB), 8);
	cr_assert_eq(capacity_txn_read_half_units(0), 4);
	for (i = 0; i < 3; i++)
		three += capacity_txn_read_half_units(500);
	cr_assert_eq(three, 12);
	cr_assert_eq(capacity_txn_read_half_units(4097),
	    CAPACITY_TXN_FACTOR * capacity_read_half_units(4097, true));
}

/*
 * "if your item size is 2 KB, you require 2 write capacity units to
 * sustain one write request per second or 4 write capacity units for a
 * transactional write request"; "each transaction writes three 500-byte
 * items in your table. Each item requires two write capacity units
 * (WCUs): one to prepare the transaction and one to commit the
 * transaction. Therefore, you would need to provision six WCUs".
 */
Test(capacity, txn_writes_cost_double)
{
	uint64_t three = 0;
	int i;

	cr_assert_eq(capacity_txn_write_units(0, 2 * KB), 4);
	for (i = 0; i < 3; i++)
		three += capacity_txn_write_units(0, 500);
	cr_assert_eq(three, 6);
	cr_assert_eq(capacity_txn_write_units(0, 0), 2);
	cr_assert_eq(capacity_txn_write_units(1500, 3000), 6);
}

/*
 * "suppose that you create a provisioned table with 6 read capacity units
 * and 6 write capacity units. With these settings, your application could
 * [...] Perform strongly consistent reads of up to 24 KB per second (4 KB
 * x 6 read capacity units). Perform eventually consistent reads of up to
 * 48 KB per second (twice as much read throughput). Perform transactional
 * read requests of up to 12 KB per second. Write up to 6 KB per second
 * (1 KB x 6 write capacity units). Perform transactional write requests
 * of up to 3 KB per second."
 */
Test(capacity, six_units_buy_what_the_guide_says)
{
	uint64_t strong = 0, eventual = 0, txn_read = 0;
	uint64_t write = 0, txn_write = 0;
	int i;

	for (i = 0; i < 24 / 4; i++)
		strong += capacity_read_half_units(4 * KB, true);
	for (i = 0; i < 48 / 4; i++)
		eventual += capacity_read_half_units(4 * KB, false);
	for (i = 0; i < 12 / 4; i++)
		txn_read += capacity_txn_read_half_units(4 * KB);
	for (i = 0; i < 6; i++)
		write += capacity_write_units(0, 1 * KB);
	for (i = 0; i < 3; i++)
		txn_write += capacity_txn_write_units(0, 1 * KB);
	cr_assert_eq(strong, 12);
	cr_assert_eq(eventual, 12);
	cr_assert_eq(txn_read, 12);
	cr_assert_eq(write, 6);
	cr_assert_eq(txn_write, 6);
}

/*
 * SEEDS.md §1: the Scan with promo_code = NY20 "read 76,617 items in 16
 * pages, returned 502, consumed 1976.5 RCU; the same Scan with
 * ConsistentRead consumed 3953 RCU". The measurement gives the totals,
 * not the page sizes: these are pages of at most 1 MB that reproduce
 * them (15 full pages of 4,800 items of 218 bytes, then 4,617 items of
 * 100 bytes). The filter does not matter; the rounding does: once per
 * page gives 3953, once for the whole Scan would give 3945, and once per
 * item at least 76,617.
 */
Test(capacity, seeds_scan_rounds_once_per_page)
{
	static const struct {
		uint64_t items, item_bytes;
	} pages[16] = {
		{ 4800, 218 }, { 4800, 218 }, { 4800, 218 }, { 4800, 218 },
		{ 4800, 218 }, { 4800, 218 }, { 4800, 218 }, { 4800, 218 },
		{ 4800, 218 }, { 4800, 218 }, { 4800, 218 }, { 4800, 218 },
		{ 4800, 218 }, { 4800, 218 }, { 4800, 218 }, { 4617, 100 },
	};
	uint64_t strong = 0, eventual = 0, per_item = 0, items = 0;
	uint64_t all_bytes = 0;
	size_t p;

	for (p = 0; p < 16; p++) {
		uint64_t bytes = pages[p].items * pages[p].item_bytes;

		cr_assert_leq(bytes, 1024 * KB, "page %zu over 1 MB", p);
		strong += capacity_read_half_units(bytes, true);
		eventual += capacity_read_half_units(bytes, false);
		per_item += pages[p].items *
		    capacity_read_half_units(pages[p].item_bytes, true);
		items += pages[p].items;
		all_bytes += bytes;
	}
	cr_assert_eq(items, 76617);
	cr_assert_eq(strong, 2 * 3953);
	cr_assert_eq(eventual, 3953);
	cr_assert_eq(capacity_to_double(strong), 3953.0);
	cr_assert_eq(capacity_to_double(eventual), 1976.5);
	cr_assert_eq(capacity_read_half_units(all_bytes, true), 2 * 3945);
	cr_assert_eq(per_item, 2 * 76617);
}

/*
 * SEEDS.md §1, the small reads, all eventually consistent (the default):
 * "GetItem of a product card 1 item read, 0.5 RCU; Query of one order (3
 * items) 0.5 RCU; Query of a GSI for a customer's 3 latest orders 0.5
 * RCU". Three small items in one page round once: 0.5, not 1.5. After
 * the sparse GSI on (promo_code, placed_at), "the same question costs
 * 16.5 RCU and returns 502": 33 half units, a page of index entries
 * between 128 KB and 132 KB (here 502 entries of 265 bytes).
 */
Test(capacity, seeds_small_reads)
{
	uint64_t order = 180 + 350 + 350; /* META and two ITEM# lines */

	cr_assert_eq(capacity_read_half_units(600, false), 1);
	cr_assert_eq(capacity_read_half_units(order, false), 1);
	cr_assert_eq(capacity_to_double(capacity_read_half_units(order,
	    false)), 0.5);
	cr_assert_eq(capacity_read_half_units(3 * 400, false), 1);
	cr_assert_eq(capacity_read_half_units(502 * 265, false), 33);
	cr_assert_eq(capacity_to_double(33), 16.5);
	cr_assert_eq(capacity_read_half_units(128 * KB, false), 32);
	cr_assert_eq(capacity_read_half_units(128 * KB + 1, false), 33);
	cr_assert_eq(capacity_read_half_units(132 * KB, false), 33);
}

Test(capacity, huge_sizes_do_not_overflow)
{
	uint64_t units = (UINT64_MAX / 4096) + 1; /* 2^52 */

	cr_assert_eq(capacity_read_half_units(UINT64_MAX, false), units);
	cr_assert_eq(capacity_read_half_units(UINT64_MAX, true), 2 * units);
	cr_assert_eq(capacity_write_units(UINT64_MAX, 0),
	    (UINT64_MAX / 1024) + 1);
	cr_assert_eq(capacity_txn_read_half_units(UINT64_MAX), 4 * units);
}

struct print_case {
	uint64_t half;
	double value;
	char text[24]; /* what "%.17g" (jansson's real format) gives */
};

/*
 * DynamoDB prints CapacityUnits as a decimal number: 0.5, 1.0, 1976.5.
 * jansson prints a real with "%.17g" and appends ".0" when the result
 * has neither a point nor an exponent, so the text below plus that
 * suffix is what the router sends: the halves must convert exactly.
 */
ParameterizedTestParameters(capacity, halves_print_exactly)
{
	static struct print_case cases[] = {
		{ 0, 0.0, "0" },
		{ 1, 0.5, "0.5" },
		{ 2, 1.0, "1" },
		{ 3, 1.5, "1.5" },
		{ 33, 16.5, "16.5" },
		{ 3953, 1976.5, "1976.5" },
		{ 7906, 3953.0, "3953" },
		{ 1000001, 500000.5, "500000.5" },
		{ 9007199254740991ULL, 4503599627370495.5,
		    "4503599627370495.5" },
	};

	return cr_make_param_array(struct print_case, cases,
	    sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct print_case *c, capacity, halves_print_exactly)
{
	char buf[32];
	double v = capacity_to_double(c->half);

	cr_assert_eq(v, c->value);
	snprintf(buf, sizeof(buf), "%.17g", v);
	cr_assert_str_eq(buf, c->text);
}

/* The tally: table and indexes, read and write, in half units. */

Test(capacity, acc_starts_empty)
{
	capacity_acc a;

	memset(&a, 0xff, sizeof(a));
	capacity_acc_init(&a);
	cr_assert_eq(capacity_acc_total(&a), 0);
	cr_assert_eq(capacity_acc_read_total(&a), 0);
	cr_assert_eq(capacity_acc_write_total(&a), 0);
	cr_assert_eq(a.nindexes, 0);
}

/*
 * A Query on a GSI charges the index and not the table (the guide: "A
 * Query operation on a global secondary index consumes read capacity
 * units from the index, not the base table"). Under INDEXES the router
 * prints Table 0.0 and the index's share.
 */
Test(capacity, acc_query_on_a_gsi_charges_the_index)
{
	capacity_acc a;

	capacity_acc_init(&a);
	cr_assert_eq(capacity_acc_add_index_read(&a, CAPACITY_GSI, "GSI1", 4,
	    capacity_read_half_units(3 * 300, false)), KV_OK);
	cr_assert_eq(capacity_share_total(&a.table), 0);
	cr_assert_eq(a.nindexes, 1);
	cr_assert_eq(a.indexes[0].kind, CAPACITY_GSI);
	cr_assert_eq(a.indexes[0].name_len, 4);
	cr_assert_eq(memcmp(a.indexes[0].name, "GSI1", 4), 0);
	cr_assert_eq(a.indexes[0].units.read_half, 1);
	cr_assert_eq(capacity_acc_total(&a), 1);
	cr_assert_eq(capacity_acc_read_total(&a), 1);
	cr_assert_eq(capacity_to_double(capacity_acc_total(&a)), 0.5);
}

/*
 * Index writes, as nubo-db/dynamodb-conformance measured them on
 * DynamoDB (tests/tier1/putItem/indexConsumedCapacity.test.ts, sub-1 KB
 * items): a put with the GSI key reports total 2 = table 1 + gsi 1; an
 * update that changes the GSI key on an item also in an ALL-projected
 * LSI reports total 4 = table 1 + gsi 2 (delete + put) + lsi 1. The
 * guide: "If an update to the table changes the value of an indexed key
 * attribute (from A to B), two writes are required".
 */
Test(capacity, acc_index_writes_match_the_measurements)
{
	capacity_acc put, upd;

	capacity_acc_init(&put);
	capacity_acc_add_write(&put, capacity_write_units(0, 60));
	cr_assert_eq(capacity_acc_add_index_write(&put, CAPACITY_GSI,
	    "gsi-inc", 7, capacity_write_units(0, 40)), KV_OK);
	cr_assert_eq(capacity_to_double(capacity_acc_total(&put)), 2.0);
	cr_assert_eq(capacity_to_double(capacity_share_total(&put.table)),
	    1.0);
	cr_assert_eq(capacity_acc_read_total(&put), 0);

	capacity_acc_init(&upd);
	capacity_acc_add_write(&upd, capacity_write_units(70, 75));
	cr_assert_eq(capacity_acc_add_index_write(&upd, CAPACITY_GSI,
	    "gsi-inc", 7, capacity_write_units(40, 0)), KV_OK);
	cr_assert_eq(capacity_acc_add_index_write(&upd, CAPACITY_GSI,
	    "gsi-inc", 7, capacity_write_units(0, 45)), KV_OK);
	cr_assert_eq(capacity_acc_add_index_write(&upd, CAPACITY_LSI, "lsi1",
	    4, capacity_write_units(70, 75)), KV_OK);
	cr_assert_eq(upd.nindexes, 2);
	cr_assert_eq(upd.indexes[0].units.write_half, 4);
	cr_assert_eq(upd.indexes[1].kind, CAPACITY_LSI);
	cr_assert_eq(upd.indexes[1].units.write_half, 2);
	cr_assert_eq(capacity_to_double(capacity_acc_total(&upd)), 4.0);
	cr_assert_eq(capacity_to_double(capacity_acc_write_total(&upd)), 4.0);
}

/*
 * Names are compared by length and bytes (they need not be terminated),
 * and a GSI and an LSI of the same name are two shares.
 */
Test(capacity, acc_names_compare_by_bytes_and_kind)
{
	static const char buf[] = "GSI1xyz";
	capacity_acc a;

	capacity_acc_init(&a);
	cr_assert_eq(capacity_acc_add_index_read(&a, CAPACITY_GSI, buf, 4, 1),
	    KV_OK);
	cr_assert_eq(capacity_acc_add_index_read(&a, CAPACITY_GSI, "GSI1", 4,
	    2), KV_OK);
	cr_assert_eq(a.nindexes, 1);
	cr_assert_eq(a.indexes[0].units.read_half, 3);
	cr_assert_eq(capacity_acc_add_index_read(&a, CAPACITY_GSI, buf, 5, 1),
	    KV_OK);
	cr_assert_eq(capacity_acc_add_index_read(&a, CAPACITY_LSI, "GSI1", 4,
	    1), KV_OK);
	cr_assert_eq(a.nindexes, 3);
	cr_assert_eq(capacity_acc_total(&a), 5);
}

/*
 * The tally holds the read/write split for transactional responses:
 * TransactWriteItems of three 500-byte puts reports 6 WCU (the guide's
 * example), ReadCapacityUnits 0; TransactGetItems of the same three items
 * 6 RCU.
 */
Test(capacity, acc_splits_reads_and_writes)
{
	capacity_acc w, r;
	int i;

	capacity_acc_init(&w);
	capacity_acc_init(&r);
	for (i = 0; i < 3; i++) {
		capacity_acc_add_write(&w, capacity_txn_write_units(0, 500));
		capacity_acc_add_read(&r, capacity_txn_read_half_units(500));
	}
	cr_assert_eq(capacity_to_double(capacity_acc_write_total(&w)), 6.0);
	cr_assert_eq(capacity_acc_read_total(&w), 0);
	cr_assert_eq(capacity_to_double(capacity_acc_total(&w)), 6.0);
	cr_assert_eq(capacity_to_double(capacity_acc_read_total(&r)), 6.0);
	cr_assert_eq(capacity_acc_write_total(&r), 0);
	cr_assert_eq(w.table.write_half, 12);
	cr_assert_eq(r.table.read_half, 12);
}

Test(capacity, acc_refuses_a_26th_index)
{
	static const char names[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
	capacity_acc a;
	size_t i;

	capacity_acc_init(&a);
	for (i = 0; i < CAPACITY_MAX_INDEXES; i++)
		cr_assert_eq(capacity_acc_add_index_write(&a,
		    i < 20 ? CAPACITY_GSI : CAPACITY_LSI, &names[i], 1, 1),
		    KV_OK);
	cr_assert_eq(capacity_acc_total(&a), 2 * CAPACITY_MAX_INDEXES);
	cr_assert_eq(capacity_acc_add_index_write(&a, CAPACITY_GSI,
	    &names[25], 1, 1), KV_EINVAL);
	cr_assert_eq(capacity_acc_add_index_read(&a, CAPACITY_LSI,
	    &names[25], 1, 1), KV_EINVAL);
	cr_assert_eq(a.nindexes, CAPACITY_MAX_INDEXES);
	cr_assert_eq(capacity_acc_total(&a), 2 * CAPACITY_MAX_INDEXES);
	/* A known index can still be charged. */
	cr_assert_eq(capacity_acc_add_index_read(&a, CAPACITY_GSI, "A", 1,
	    1), KV_OK);
	cr_assert_eq(capacity_acc_total(&a), 2 * CAPACITY_MAX_INDEXES + 1);
}

/*
 * Two partitions' parts of one Scan page on an index, and a table part,
 * merged into one tally.
 */
Test(capacity, acc_merge_adds_every_share)
{
	capacity_acc a, b;

	capacity_acc_init(&a);
	capacity_acc_init(&b);
	capacity_acc_add_read(&a, 2);
	cr_assert_eq(capacity_acc_add_index_read(&a, CAPACITY_GSI, "g", 1, 3),
	    KV_OK);
	capacity_acc_add_write(&b, 1);
	cr_assert_eq(capacity_acc_add_index_read(&b, CAPACITY_GSI, "g", 1, 5),
	    KV_OK);
	cr_assert_eq(capacity_acc_add_index_read(&b, CAPACITY_LSI, "l", 1, 7),
	    KV_OK);
	cr_assert_eq(capacity_acc_merge(&a, &b), KV_OK);
	cr_assert_eq(a.table.read_half, 2);
	cr_assert_eq(a.table.write_half, 2);
	cr_assert_eq(a.nindexes, 2);
	cr_assert_eq(a.indexes[0].units.read_half, 8);
	cr_assert_eq(a.indexes[1].kind, CAPACITY_LSI);
	cr_assert_eq(a.indexes[1].units.read_half, 7);
	cr_assert_eq(capacity_acc_total(&a), 2 + 2 + 8 + 7);
	cr_assert_eq(capacity_acc_read_total(&a), 2 + 8 + 7);
}

Test(capacity, acc_merge_refusal_changes_nothing)
{
	static const char names[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
	capacity_acc a, b;
	size_t i;

	capacity_acc_init(&a);
	capacity_acc_init(&b);
	for (i = 0; i < CAPACITY_MAX_INDEXES; i++)
		cr_assert_eq(capacity_acc_add_index_read(&a, CAPACITY_GSI,
		    &names[i], 1, 1), KV_OK);
	capacity_acc_add_read(&b, 10);
	cr_assert_eq(capacity_acc_add_index_read(&b, CAPACITY_GSI, "A", 1, 1),
	    KV_OK);
	cr_assert_eq(capacity_acc_add_index_read(&b, CAPACITY_GSI,
	    &names[25], 1, 1), KV_OK);
	cr_assert_eq(capacity_acc_merge(&a, &b), KV_EINVAL);
	cr_assert_eq(a.nindexes, CAPACITY_MAX_INDEXES);
	cr_assert_eq(capacity_acc_total(&a), CAPACITY_MAX_INDEXES);
	cr_assert_eq(a.table.read_half, 0);
}
