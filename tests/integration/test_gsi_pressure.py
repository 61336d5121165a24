"""test_gsi_pressure.py — back-pressure from an index short of write
capacity: with the partitions' write ceiling scaled down to 40 WCU and
no burst credit, every item written with one owner lands in one index
partition, which cannot take them as fast as the base table's four
partitions can. The base writes that would add to that index are then
throttled, with DynamoDB's answer for a GSI (ThrottlingException,
reason IndexWriteKeyRangeThroughputExceeded on the index's ARN), writes
that do not touch it are not, nothing is lost, and the index does not
fall ever further behind.
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
    stop.set()
    for th in ths:
        th.join()
    assert throttled, "no write was throttled (%d written)" % written[0]
    assert set(throttled) == {"ThrottlingException"}
    assert reasons and all(
        r["reason"] == "IndexWriteKeyRangeThroughputExceeded" and
        r["resource"].endswith(":table/%s/index/by_owner" % name)
        for r in reasons), reasons[:3]
    # The index took roughly its ceiling, not the writers' rate: what it
    # has not taken yet is bounded by a few seconds of it.
    until_converged(ddb, name, timeout=30)
