"""test_ttl.py — Time to Live: UpdateTimeToLive and DescribeTimeToLive
with DynamoDB's answers and messages, and the nodes' sweep deleting
expired items through the write path (node/ttl.c), here every 200 ms."""

import time
import uuid

import pytest
from botocore.exceptions import ClientError

from cluster import wait_until

CLUSTER_SETTINGS = ["ttl-sweep-ms 200"]


def S(x):
    return {"S": x}


def N(x):
    return {"N": str(x)}


def refused(fn, code, message, **kw):
    with pytest.raises(ClientError) as ei:
        fn(**kw)
    r = ei.value.response
    assert (r["Error"]["Code"], r["Error"]["Message"]) == (code, message)
    assert r["ResponseMetadata"]["HTTPStatusCode"] == 400


@pytest.fixture
def table(cluster):
    return cluster.make_table("ttl")


def ttl_on(ddb, name, attr="exp"):
    return ddb.update_time_to_live(
        TableName=name,
        TimeToLiveSpecification={"AttributeName": attr, "Enabled": True})


def test_enable_describe_disable(ddb, table):
    assert ddb.describe_time_to_live(TableName=table)[
        "TimeToLiveDescription"] == {"TimeToLiveStatus": "DISABLED"}
    r = ttl_on(ddb, table)
    assert r["TimeToLiveSpecification"] == {"AttributeName": "exp",
                                           "Enabled": True}
    assert ddb.describe_time_to_live(TableName=table)[
        "TimeToLiveDescription"] == {"TimeToLiveStatus": "ENABLED",
                                     "AttributeName": "exp"}
    refused(ttl_on, "ValidationException", "TimeToLive is already enabled",
            ddb=ddb, name=table)
    r = ddb.update_time_to_live(
        TableName=table,
        TimeToLiveSpecification={"AttributeName": "exp", "Enabled": False})
    assert r["TimeToLiveSpecification"]["Enabled"] is False
    assert ddb.describe_time_to_live(TableName=table)[
        "TimeToLiveDescription"] == {"TimeToLiveStatus": "DISABLED"}
    refused(ddb.update_time_to_live, "ValidationException",
            "TimeToLive is already disabled", TableName=table,
            TimeToLiveSpecification={"AttributeName": "exp",
                                     "Enabled": False})


def test_refusals(ddb, raw_ddb):
    missing = "nope-" + uuid.uuid4().hex[:6]
    refused(ttl_on, "ResourceNotFoundException",
            "Requested resource not found: Table: %s not found" % missing,
            ddb=ddb, name=missing)
    refused(ddb.describe_time_to_live, "ResourceNotFoundException",
            "Requested resource not found: Table: %s not found" % missing,
            TableName=missing)
    refused(raw_ddb.update_time_to_live, "ValidationException",
            "TimeToLiveSpecification.AttributeName must be non empty",
            TableName=missing,
            TimeToLiveSpecification={"AttributeName": "", "Enabled": True})
    refused(raw_ddb.update_time_to_live, "ValidationException",
            "2 validation errors detected: Value null at "
            "'timeToLiveSpecification.enabled' failed to satisfy "
            "constraint: Member must not be null; Value null at "
            "'timeToLiveSpecification.attributeName' failed to satisfy "
            "constraint: Member must not be null",
            TableName=missing, TimeToLiveSpecification={})


def test_expired_items_go_and_others_stay(cluster, ddb, table):
    ttl_on(ddb, table)
    now = int(time.time())
    items = {
        "past": N(now - 5), "future": N(now + 3600),
        "string": S(str(now - 5)),            # not a Number: kept
        "ancient": N(now - 6 * 365 * 86400),  # over five years: kept
        "none": None,
    }
    # Read before the puts: a sweep may delete "past" at once.
    before = deleted(cluster)
    for k, exp in items.items():
        item = {"pk": S(k), "v": N(1)}
        if exp is not None:
            item["exp"] = exp
        ddb.put_item(TableName=table, Item=item)

    def gone():
        return "Item" not in ddb.get_item(TableName=table,
                                          Key={"pk": S("past")},
                                          ConsistentRead=True)
    wait_until(gone, 10, 0.1, "the expired item to go")
    time.sleep(0.5)  # two more sweeps
    left = sorted(it["pk"]["S"] for it in ddb.scan(
        TableName=table, ConsistentRead=True)["Items"])
    assert left == ["ancient", "future", "none", "string"]
    assert deleted(cluster) - before == 1
    # An item that expires while the table is watched goes too.
    ddb.put_item(TableName=table, Item={"pk": S("soon"),
                                        "exp": N(int(time.time()) + 1)})
    wait_until(lambda: "Item" not in ddb.get_item(
        TableName=table, Key={"pk": S("soon")}, ConsistentRead=True),
        10, 0.1, "the item that expired to go")


def deleted(cluster):
    total = 0
    for url in cluster.node_metrics:
        for (name, _), v in cluster.metrics(url).items():
            if name == "kv_ttl_deleted_total":
                total += v
    return total


def test_a_disabled_table_keeps_its_expired_items(ddb, table):
    ddb.put_item(TableName=table, Item={"pk": S("a"),
                                        "exp": N(int(time.time()) - 10)})
    time.sleep(1.0)  # five sweeps
    assert "Item" in ddb.get_item(TableName=table, Key={"pk": S("a")})


def test_deletions_reach_the_indexes(cluster, ddb):
    name = "ttlidx-" + uuid.uuid4().hex[:6]
    ddb.create_table(
        TableName=name, BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "g", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        GlobalSecondaryIndexes=[{
            "IndexName": "byg",
            "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "ALL"}}])
    ddb.get_waiter("table_exists").wait(
        TableName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 20})
    ttl_on(ddb, name)
    now = int(time.time())
    for i in range(20):
        ddb.put_item(TableName=name, Item={
            "pk": S("k%d" % i), "g": S("x"),
            "exp": N(now - 1 if i % 2 else now + 3600)})

    def converged():
        r = ddb.query(TableName=name, IndexName="byg",
                      KeyConditionExpression="g = :g",
                      ExpressionAttributeValues={":g": S("x")})
        return sorted(it["pk"]["S"] for it in r["Items"]) == sorted(
            "k%d" % i for i in range(0, 20, 2))
    wait_until(converged, 15, 0.2, "the index to lose the expired items")
