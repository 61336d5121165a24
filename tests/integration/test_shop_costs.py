"""test_shop_costs.py — the measured cost table of ../shared/SEEDS.md
section 1, reproduced on a real cluster: the shop data set (76,617 items,
chaos/shop/shop.py, seed 1) is loaded through BatchWriteItem, then

- GetItem of a product card costs 0.5 RCU;
- a Query of one order (META + 2 lines) costs 0.5 RCU;
- a Scan with FilterExpression promo_code = :p reads all 76,617 items in
  16 pages, returns 502 and consumes 1976.5 RCU; with ConsistentRead 3953.
"""

import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "chaos", "shop"))

import shop  # noqa: E402

TABLE = "shop"


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
