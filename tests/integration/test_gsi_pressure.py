"""test_gsi_pressure.py — back-pressure from an index short of write
capacity: with the partitions' write ceiling scaled down to 40 WCU and
no burst credit, every item written with one owner lands in one index
partition, which cannot take them as fast as the base table's four
partitions can. The base writes that would add to that index are then
throttled, with DynamoDB's answer for a GSI (ThrottlingException,
reason IndexWriteKeyRangeThroughputExceeded on the index's ARN), writes
that do not touch it are not, nothing is lost, and the index does not
fall ever further behind. BatchWriteItem hands the puts held back in
UnprocessedItems, and a transaction that would add to the index is
cancelled (ThrottlingError) and writes nothing.
"""

import json
import threading
import time

from botocore.exceptions import ClientError

from test_gsi import S, N, make_indexed, until_converged

CLUSTER_SETTINGS = ["partition-wcu 40", "burst-seconds 0"]


def test_a_slow_index_throttles_its_table(cluster, unique):
    ddb = cluster.client(attempts=1)
    name = "press-" + unique
    make_indexed(ddb, name)
    throttled, reasons, written = [], [], [0]
    stop = threading.Event()

    def keep_reasons(http_response, **kw):
        # The raw answer: boto3 does not hand ThrottlingReasons over.
        if http_response.status_code == 400:
            body = json.loads(http_response.content)
            reasons.extend(body.get("ThrottlingReasons", []))

    def writer(k):
        c = cluster.client(attempts=1)
        c.meta.events.register("after-call.dynamodb.PutItem", keep_reasons)
        i = 0
        while not stop.is_set():
            i += 1
            try:
                c.put_item(TableName=name, Item={
                    "pk": S("w%d-%d" % (k, i)), "sk": N(i),
                    "owner": S("same"), "at": N(i)})
                written[0] += 1
            except ClientError as e:
                err = e.response["Error"]
                throttled.append(err["Code"])
                time.sleep(0.01)

    ths = [threading.Thread(target=writer, args=(k,)) for k in range(3)]
    for th in ths:
        th.start()
    time.sleep(4)
    # Meanwhile, a write that no index takes is not held back.
    ddb.put_item(TableName=name, Item={"pk": S("plain"), "sk": N(1)})
    try:
        batch = batch_meets_pressure(ddb, name)
        txn = transaction_meets_pressure(ddb, name)
    finally:
        stop.set()  # the writers stop, whatever the checks found
        for th in ths:
            th.join()
    assert throttled, "no write was throttled (%d written)" % written[0]
    assert set(throttled) == {"ThrottlingException"}
    assert reasons and all(
        r["reason"] == "IndexWriteKeyRangeThroughputExceeded" and
        r["resource"].endswith(":table/%s/index/by_owner" % name)
        for r in reasons), reasons[:3]
    assert batch, "no BatchWriteItem put was held back by the index"
    assert txn is not None, "no transaction was held back by the index"
    # The cancelled transaction wrote nothing, not even its other action.
    for k in (txn, txn + "-other"):
        assert "Item" not in ddb.get_item(
            TableName=name, Key={"pk": S(k), "sk": N(1)},
            ConsistentRead=True), k
    # The index took roughly its ceiling, not the writers' rate: what it
    # has not taken yet is bounded by a few seconds of it.
    until_converged(ddb, name, timeout=30)


def batch_meets_pressure(ddb, name):
    """A BatchWriteItem of 25 puts that all add to the pressed index
    while it is pressed: as in DynamoDB, the puts it holds back come back
    in UnprocessedItems (or, were every one held back, the batch is
    throttled); the others are written. How many were held back, over up
    to five batches (the next one only when none was)."""
    for attempt in range(5):
        reqs = [{"PutRequest": {"Item": {
            "pk": S("batch-%d-%d" % (attempt, j)), "sk": N(1),
            "owner": S("same"), "at": N(10 ** 9 + 100 * attempt + j)}}}
            for j in range(25)]
        try:
            r = ddb.batch_write_item(RequestItems={name: reqs})
        except ClientError as e:
            assert e.response["Error"]["Code"] in (
                "ThrottlingException",
                "ProvisionedThroughputExceededException"), e.response
            return len(reqs)
        held = r.get("UnprocessedItems", {}).get(name, [])
        held_keys = {w["PutRequest"]["Item"]["pk"]["S"] for w in held}
        for w in reqs:
            k = w["PutRequest"]["Item"]["pk"]["S"]
            got = ddb.get_item(TableName=name,
                               Key={"pk": S(k), "sk": N(1)},
                               ConsistentRead=True)
            assert ("Item" in got) == (k not in held_keys), (k, held_keys)
        if held:
            return len(held)
    return 0


def transaction_meets_pressure(ddb, name):
    """A TransactWriteItems whose Put adds to the pressed index, beside
    a Put of an item no index takes: cancelled, its reason for the first
    action ThrottlingError with DynamoDB's message for an index, None for
    the other. The key of the cancelled Put, or None."""
    for attempt in range(10):
        k = "txn-%d" % attempt
        try:
            ddb.transact_write_items(TransactItems=[
                {"Put": {"TableName": name, "Item": {
                    "pk": S(k), "sk": N(1), "owner": S("same"),
                    "at": N(2 * 10 ** 9 + attempt)}}},
                {"Put": {"TableName": name, "Item": {
                    "pk": S(k + "-other"), "sk": N(1)}}}])
            continue  # not pressed at that moment: try again
        except ClientError as e:
            err = e.response["Error"]
            assert err["Code"] == "TransactionCanceledException", err
            reasons = e.response["CancellationReasons"]
            assert reasons[0]["Code"] == "ThrottlingError", reasons
            assert "global secondary indexes" in reasons[0]["Message"]
            assert reasons[1]["Code"] == "None", reasons
            return k
    return None
