"""test_shop_costs.py — the measured cost table of ../shared/SEEDS.md
section 1, reproduced on a real cluster: the shop data set (76,617 items,
chaos/shop/shop.py, seed 1) is loaded through BatchWriteItem, then

- GetItem of a product card costs 0.5 RCU;
- a Query of one order (META + 2 lines) costs 0.5 RCU;
- a Scan with FilterExpression promo_code = :p reads all 76,617 items in
  16 pages, returns 502 and consumes 1976.5 RCU; with ConsistentRead 3953;
- a Query of GSI1 for a customer's 3 latest orders costs 0.5 RCU;
- a sparse GSI on (promo_code, placed_at) added to the loaded table by
  UpdateTable is filled with the 3,695 orders that have a promo code, and
  the December NY20 question, asked of it, returns the 502 orders in one
  page for the size of their entries rounded up to 4 KB, halved: 18 RCU
  here against the Scan's 1976.5. The source measured 16.5 RCU, which
  puts its 502 entries at 131,073 to 135,168 bytes (261 to 269 bytes
  each); this data set's NY20 orders are 143,939 bytes (287 each: the
  generator matches the source on the whole table's size and Scan
  pages, not on every attribute of an order), and with projection ALL
  an entry is its order item.
"""

import math
import os
import sys
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "chaos", "shop"))

import shop  # noqa: E402

TABLE = "shop"
# Orders and products carry GSI1 keys (seed 1).
EXPECTED_GSI1 = 23530


@pytest.fixture(scope="module")
def loaded(cluster):
    items = shop.generate(seed=1)
    client = cluster.client()
    shop.create_table(client, TABLE)
    summary = shop.load(cluster.endpoint, TABLE, items, threads=8,
                        progress=False)
    return items, summary


def scan_all(ddb, consistent):
    pages = scanned = count = 0
    units = 0.0
    kwargs = dict(TableName=TABLE,
                  FilterExpression="promo_code = :p",
                  ExpressionAttributeValues={":p": {"S": "NY20"}},
                  ReturnConsumedCapacity="TOTAL",
                  ConsistentRead=consistent)
    while True:
        r = ddb.scan(**kwargs)
        pages += 1
        scanned += r["ScannedCount"]
        count += r["Count"]
        units += r["ConsumedCapacity"]["CapacityUnits"]
        if "LastEvaluatedKey" not in r:
            return pages, scanned, count, units
        kwargs["ExclusiveStartKey"] = r["LastEvaluatedKey"]


def test_the_whole_data_set_is_loaded(loaded, ddb):
    items, _ = loaded
    assert len(items) == 76617
    t = ddb.describe_table(TableName=TABLE)["Table"]
    assert t["ItemCount"] == 76617
    shop_wait_converged(ddb)
    assert t["TableSizeBytes"] == sum(shop.item_size(i) for i in items)


def test_get_item_of_a_product_costs_half_a_unit(loaded, ddb):
    r = ddb.get_item(TableName=TABLE,
                     Key={"PK": {"S": "PROD#2410"}, "SK": {"S": "META"}},
                     ReturnConsumedCapacity="TOTAL")
    assert r["Item"]["entityType"]["S"] == "product"
    assert r["ConsumedCapacity"]["CapacityUnits"] == 0.5


def test_query_of_one_order_costs_half_a_unit(loaded, ddb):
    items, _ = loaded
    # An order with two lines: META + ITEM#01 + ITEM#02.
    by_order = {}
    for it in items:
        pk = it["PK"]["S"]
        if pk.startswith("ORDER#"):
            by_order[pk] = by_order.get(pk, 0) + 1
    order = next(pk for pk, n in sorted(by_order.items()) if n == 3)
    r = ddb.query(TableName=TABLE, KeyConditionExpression="PK = :o",
                  ExpressionAttributeValues={":o": {"S": order}},
                  ReturnConsumedCapacity="TOTAL")
    assert r["Count"] == 3
    assert r["ConsumedCapacity"]["CapacityUnits"] == 0.5


def test_filtered_scan_reads_everything_and_pays_for_it(loaded, ddb):
    pages, scanned, count, units = scan_all(ddb, consistent=False)
    assert (pages, scanned, count) == (16, 76617, 502)
    assert units == 1976.5


def test_consistent_scan_costs_twice_as_much(loaded, ddb):
    pages, scanned, count, units = scan_all(ddb, consistent=True)
    assert (pages, scanned, count) == (16, 76617, 502)
    assert units == 3953


def test_query_of_gsi1_for_a_customers_latest_orders(loaded, ddb):
    items, _ = loaded
    by_cust = {}
    for it in items:
        if it["entityType"]["S"] == "order":
            c = it["GSI1PK"]["S"]
            by_cust[c] = by_cust.get(c, 0) + 1
    cust = next(c for c, n in sorted(by_cust.items()) if n >= 4)
    shop_wait_converged(ddb)
    r = ddb.query(TableName=TABLE, IndexName="GSI1",
                  KeyConditionExpression="GSI1PK = :c AND "
                  "begins_with(GSI1SK, :o)",
                  ExpressionAttributeValues={":c": {"S": cust},
                                             ":o": {"S": "ORDER#"}},
                  ScanIndexForward=False, Limit=3,
                  ReturnConsumedCapacity="TOTAL")
    assert r["Count"] == 3
    times = [i["GSI1SK"]["S"] for i in r["Items"]]
    assert times == sorted(times, reverse=True)
    assert r["ConsumedCapacity"]["CapacityUnits"] == 0.5


def shop_wait_converged(ddb, timeout=60):
    """Until GSI1's entries reach the orders and products (the load's
    index records drain asynchronously)."""
    end = time.monotonic() + timeout
    while True:
        t = ddb.describe_table(TableName=TABLE)["Table"]
        got = [g.get("ItemCount") for g in t["GlobalSecondaryIndexes"]
               if g["IndexName"] == "GSI1"][0]
        if got == EXPECTED_GSI1:
            return
        assert time.monotonic() < end, "GSI1 holds %s of %d" % (
            got, EXPECTED_GSI1)
        time.sleep(0.5)


def test_a_sparse_promo_index_answers_for_16_5_units(loaded, ddb):
    items, _ = loaded
    ddb.update_table(
        TableName=TABLE,
        AttributeDefinitions=[
            {"AttributeName": "promo_code", "AttributeType": "S"},
            {"AttributeName": "placed_at", "AttributeType": "S"}],
        GlobalSecondaryIndexUpdates=[{"Create": {
            "IndexName": "promo",
            "KeySchema": [
                {"AttributeName": "promo_code", "KeyType": "HASH"},
                {"AttributeName": "placed_at", "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "ALL"}}}])
    end = time.monotonic() + 120
    while True:
        t = ddb.describe_table(TableName=TABLE)["Table"]
        g = [g for g in t["GlobalSecondaryIndexes"]
             if g["IndexName"] == "promo"][0]
        if g["IndexStatus"] == "ACTIVE" and g.get("ItemCount") == 3695:
            break
        assert time.monotonic() < end, g
        time.sleep(0.5)
    ny20 = [it["placed_at"]["S"] for it in items
            if it.get("promo_code") == {"S": "NY20"}]
    year = min(ny20)[:4]
    r = ddb.query(TableName=TABLE, IndexName="promo",
                  KeyConditionExpression="promo_code = :p AND "
                  "placed_at BETWEEN :a AND :b",
                  ExpressionAttributeValues={
                      ":p": {"S": "NY20"}, ":a": {"S": year + "-12-01"},
                      ":b": {"S": year + "-12-31T23:59:59Z"}},
                  ReturnConsumedCapacity="TOTAL")
    assert "LastEvaluatedKey" not in r
    assert r["Count"] == 502
    size = sum(shop.item_size(it) for it in items
               if it.get("promo_code") == {"S": "NY20"})
    assert size == 143939
    assert r["ConsumedCapacity"]["CapacityUnits"] == \
        math.ceil(size / 4096) / 2 == 18.0
