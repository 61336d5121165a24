"""test_throttling.py — per-partition ceilings, burst and throttling
answers, against a real cluster whose ceilings are scaled down (the
cluster file's partition-rcu / partition-wcu / burst-seconds) so that a
Python client can drive one partition past them.

Measured rates come from the router's /metrics (the owners' counters of
admitted requests and consumed units, read over several seconds), so they
are the server's, not the client's, view.
"""

import json
import threading
import time
import urllib.error
import urllib.request

import pytest
import xxhash

from cluster import wait_until

WCU = 50   # write ceiling per partition, units per second
RCU = 100  # read ceiling per partition
CLUSTER_SETTINGS = ["partition-wcu %d" % WCU, "partition-rcu %d" % RCU,
                    "burst-seconds 0"]

# Every test here needs the fixture's cluster with the scaled ceilings.
pytestmark = pytest.mark.processes

THROTTLES = ("ThrottlingException", "ProvisionedThroughputExceededException")


def create(cluster, ddb, name, **billing):
    ddb.create_table(
        TableName=name,
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        **(billing or {"BillingMode": "PAY_PER_REQUEST"}))
    ddb.get_waiter("table_exists").wait(
        TableName=name, WaiterConfig={"Delay": 0.2, "MaxAttempts": 100})
    return cluster.table_partitions(name)


def part_of(parts, pk):
    """The partition id holding string key pk (keyenc.h: XXH3-64 of the
    type tag 0x01 and the UTF-8 bytes)."""
    h = xxhash.xxh3_64_intdigest(b"\x01" + pk.encode())
    for p in parts:
        if p["lo"] <= h <= p["last"]:
            return p["part"]
    raise AssertionError("no partition holds %s" % pk)


def keys_in(parts, part, n, prefix="k"):
    """n distinct string keys that land in partition `part`."""
    out, i = [], 0
    while len(out) < n:
        k = "%s%d" % (prefix, i)
        if part_of(parts, k) == part:
            out.append(k)
        i += 1
    return out


def counters(cluster, table):
    """{(family, partition): value} of the table's partition metrics."""
    out = {}
    for (name, labels), v in cluster.metrics().items():
        d = dict(labels)
        if d.get("table") == table:
            out[(name, int(d["partition"]))] = v
    return out


def raw(cluster, op, body):
    """Sends one request without an SDK: (status, parsed body)."""
    req = urllib.request.Request(
        cluster.endpoint + "/", data=json.dumps(body).encode(),
        headers={"X-Amz-Target": "DynamoDB_20120810." + op,
                 "Content-Type": "application/x-amz-json-1.0"})
    try:
        with urllib.request.urlopen(req, timeout=15) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


class Hammer:
    """Threads that write (or read) keys as fast as they can for a while,
    counting answers by error code; every throttle must be a 400."""

    def __init__(self, cluster, table, keys, threads=6, read=False):
        self.cluster, self.table, self.keys = cluster, table, keys
        self.read = read
        self.counts = {}
        self.bad = []
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.threads = [threading.Thread(target=self.run, args=(i,))
                        for i in range(threads)]

    def run(self, i):
        ddb = self.cluster.client()
        n = i
        while not self.stop.is_set():
            k = self.keys[n % len(self.keys)]
            n += len(self.threads)
            try:
                if self.read:
                    ddb.get_item(TableName=self.table,
                                 Key={"pk": {"S": k}})
                else:
                    ddb.put_item(TableName=self.table,
                                 Item={"pk": {"S": k}, "v": {"N": str(n)}})
                code = "ok"
            except Exception as e:  # noqa: BLE001 - classified below
                resp = getattr(e, "response", None)
                if resp is None:
                    code = type(e).__name__
                else:
                    code = resp["Error"]["Code"]
                    status = resp["ResponseMetadata"]["HTTPStatusCode"]
                    if code in THROTTLES and status != 400:
                        self.bad.append((code, status))
            with self.lock:
                self.counts[code] = self.counts.get(code, 0) + 1

    def __enter__(self):
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *a):
        self.stop.set()
        for t in self.threads:
            t.join()


def test_a_hot_partition_throttles_at_its_ceiling_and_cold_ones_do_not(
        cluster, unique):
    ddb = cluster.client()
    name = "thr-hot-" + unique
    parts = create(cluster, ddb, name)
    hot = part_of(parts, "hot")
    cold = [p["part"] for p in parts if p["part"] != hot][0]
    cold_keys = keys_in(parts, cold, 20, "cold")

    with Hammer(cluster, name, ["hot"]) as h:
        time.sleep(1.5)  # spend the partition's first second
        before, t0 = counters(cluster, name), time.monotonic()
        # Meanwhile a cold partition of the same table gets 10 writes/s.
        for i in range(40):
            ddb.put_item(TableName=name, Item={"pk": {"S": cold_keys[
                i % len(cold_keys)]}})
            time.sleep(0.1)
        after, t1 = counters(cluster, name), time.monotonic()
    dt = t1 - t0
    units = (after[("kv_partition_consumed_write_units_total", hot)] -
             before[("kv_partition_consumed_write_units_total", hot)]) / dt
    admitted = (after[("kv_partition_admitted_writes_total", hot)] -
                before[("kv_partition_admitted_writes_total", hot)]) / dt
    throttled = (after[("kv_partition_throttled_writes_total", hot)] -
                 before[("kv_partition_throttled_writes_total", hot)]) / dt
    assert not h.bad, h.bad
    assert h.counts.get("ThrottlingException", 0) > 0, h.counts
    assert set(h.counts) <= {"ok", "ThrottlingException"}, h.counts
    # One WCU a write: the hot partition accepts its ceiling, +-10 %.
    assert WCU * 0.9 <= units <= WCU * 1.1, (units, h.counts)
    assert WCU * 0.9 <= admitted <= WCU * 1.1, admitted
    assert throttled > WCU, throttled
    # The other partitions never throttled; the cold one served all 40.
    for p in parts:
        if p["part"] != hot:
            assert after[("kv_partition_throttled_writes_total",
                          p["part"])] == 0, p
    assert after[("kv_partition_admitted_writes_total", cold)] >= 40
    assert after[("kv_partition_write_ceiling_units", hot)] == WCU


def test_reads_throttle_on_their_own_ceiling(cluster, unique):
    ddb = cluster.client()
    name = "thr-read-" + unique
    parts = create(cluster, ddb, name)
    hot = part_of(parts, "r")
    ddb.put_item(TableName=name, Item={"pk": {"S": "r"}})
    with Hammer(cluster, name, ["r"], read=True) as h:
        time.sleep(1.5)
        before, t0 = counters(cluster, name), time.monotonic()
        time.sleep(4)
        after, t1 = counters(cluster, name), time.monotonic()
    units = (after[("kv_partition_consumed_read_units_total", hot)] -
             before[("kv_partition_consumed_read_units_total", hot)]) / (
                 t1 - t0)
    assert h.counts.get("ThrottlingException", 0) > 0, h.counts
    # Eventually consistent reads of a small item: half a unit each.
    assert RCU * 0.9 <= units <= RCU * 1.1, units
    assert after[("kv_partition_throttled_writes_total", hot)] == 0


def test_error_names_and_reasons_follow_the_billing_mode(cluster, unique):
    ddb = cluster.client()
    od = "thr-od-" + unique
    pv = "thr-pv-" + unique
    create(cluster, ddb, od)
    # 4 units over 4 partitions: one per partition per second.
    create(cluster, ddb, pv, BillingMode="PROVISIONED",
           ProvisionedThroughput={"ReadCapacityUnits": 4,
                                  "WriteCapacityUnits": 4})
    arn = "arn:aws:dynamodb:us-east-1:000000000000:table/"

    def until_throttled(op, body):
        for _ in range(2000):
            status, out = raw(cluster, op, body)
            if status != 200:
                return status, out
        raise AssertionError("never throttled")

    status, out = until_throttled("PutItem", {
        "TableName": od, "Item": {"pk": {"S": "x"}}})
    assert status == 400
    assert out["__type"].endswith("#ThrottlingException"), out
    assert out["message"].startswith("Throughput exceeds the current "
                                     "capacity of your table or index.")
    assert out["ThrottlingReasons"] == [{
        "reason": "TableWriteKeyRangeThroughputExceeded",
        "resource": arn + od}]

    status, out = until_throttled("PutItem", {
        "TableName": pv, "Item": {"pk": {"S": "x"}}})
    assert status == 400
    assert out["__type"].endswith(
        "#ProvisionedThroughputExceededException"), out
    assert out["message"] == (
        "The level of configured provisioned throughput for the table was "
        "exceeded. Consider increasing your provisioning level with the "
        "UpdateTable API.")
    assert out["ThrottlingReasons"] == [{
        "reason": "TableWriteProvisionedThroughputExceeded",
        "resource": arn + pv}]

    status, out = until_throttled("GetItem", {
        "TableName": pv, "Key": {"pk": {"S": "x"}}, "ConsistentRead": True})
    assert status == 400
    assert out["ThrottlingReasons"][0]["reason"] == \
        "TableReadProvisionedThroughputExceeded"
    status, out = until_throttled("Query", {
        "TableName": od, "KeyConditionExpression": "pk = :p",
        "ExpressionAttributeValues": {":p": {"S": "x"}}})
    assert status == 400
    assert out["ThrottlingReasons"][0]["reason"] == \
        "TableReadKeyRangeThroughputExceeded"

    # boto3 (no retries here) raises the modelled exception.
    with pytest.raises(ddb.exceptions.ProvisionedThroughputExceededException):
        for _ in range(100):
            ddb.put_item(TableName=pv, Item={"pk": {"S": "x"}})


def test_update_table_raising_throughput_lifts_the_throttling(
        cluster, unique):
    ddb = cluster.client()
    name = "thr-upd-" + unique
    create(cluster, ddb, name, BillingMode="PROVISIONED",
           ProvisionedThroughput={"ReadCapacityUnits": 4,
                                  "WriteCapacityUnits": 4})

    def writes_at(rate, seconds, key):
        """Writes key at `rate` per second; returns the codes seen."""
        seen = {}
        start = time.monotonic()
        # Paced by the clock, not by sleeps after each answer, so that a
        # slow answer (a sanitizer build) does not lower the rate.
        for n in range(int(rate * seconds)):
            d = start + n / rate - time.monotonic()
            if d > 0:
                time.sleep(d)
            try:
                ddb.put_item(TableName=name, Item={"pk": {"S": key},
                                                    "n": {"N": str(n)}})
                code = "ok"
            except ddb.exceptions.ProvisionedThroughputExceededException:
                code = "throttled"
            seen[code] = seen.get(code, 0) + 1
        return seen

    assert writes_at(10, 1.5, "u").get("throttled", 0) > 0
    d = ddb.update_table(TableName=name, ProvisionedThroughput={
        "ReadCapacityUnits": 4, "WriteCapacityUnits": 400})
    assert d["TableDescription"]["TableStatus"] == "UPDATING"
    wait_until(lambda: ddb.describe_table(TableName=name)["Table"][
        "TableStatus"] == "ACTIVE", 20, what="the table to be ACTIVE")
    t = ddb.describe_table(TableName=name)["Table"]
    pt = t["ProvisionedThroughput"]
    assert (pt["ReadCapacityUnits"], pt["WriteCapacityUnits"]) == (4, 400)
    assert "LastIncreaseDateTime" in pt
    assert pt["NumberOfDecreasesToday"] == 0
    # 100 WCU per partition, capped at the 50 WCU ceiling: 20/s passes
    # (once the last throttled second's debt, at most one unit, is repaid
    # at the new rate: 20 ms).
    time.sleep(0.1)
    assert writes_at(20, 2, "u") == {"ok": 40}
    st = cluster.metrics()
    ceilings = [v for (n, labels), v in st.items()
                if n == "kv_partition_write_ceiling_units" and
                dict(labels).get("table") == name]
    assert ceilings == [WCU] * 4

    # Same values again: DynamoDB's refusal.
    with pytest.raises(ddb.exceptions.ClientError) as e:
        ddb.update_table(TableName=name, ProvisionedThroughput={
            "ReadCapacityUnits": 4, "WriteCapacityUnits": 400})
    assert e.value.response["Error"]["Code"] == "ValidationException"
    assert "will not change" in e.value.response["Error"]["Message"]

    # A decrease is counted; switching to on demand keeps the ceiling.
    ddb.update_table(TableName=name, ProvisionedThroughput={
        "ReadCapacityUnits": 4, "WriteCapacityUnits": 8})
    wait_until(lambda: ddb.describe_table(TableName=name)["Table"][
        "TableStatus"] == "ACTIVE", 20, what="the table to be ACTIVE")
    pt = ddb.describe_table(TableName=name)["Table"]["ProvisionedThroughput"]
    assert pt["NumberOfDecreasesToday"] == 1
    assert "LastDecreaseDateTime" in pt
    ddb.update_table(TableName=name, BillingMode="PAY_PER_REQUEST")
    wait_until(lambda: ddb.describe_table(TableName=name)["Table"][
        "TableStatus"] == "ACTIVE", 20, what="the table to be ACTIVE")
    t = ddb.describe_table(TableName=name)["Table"]
    assert t["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    assert "LastUpdateToPayPerRequestDateTime" in t["BillingModeSummary"]
    assert (t["ProvisionedThroughput"]["ReadCapacityUnits"],
            t["ProvisionedThroughput"]["WriteCapacityUnits"]) == (0, 0)


def test_update_table_refusals(cluster, unique):
    ddb = cluster.client()
    name = "thr-ref-" + unique
    create(cluster, ddb, name)

    def code_and_message(**kw):
        with pytest.raises(ddb.exceptions.ClientError) as e:
            ddb.update_table(TableName=name, **kw)
        return (e.value.response["Error"]["Code"],
                e.value.response["Error"]["Message"])

    assert code_and_message(BillingMode="PROVISIONED") == (
        "ValidationException", "One or more parameter values were invalid: "
        "ProvisionedThroughput must be specified when BillingMode is "
        "PROVISIONED")
    assert code_and_message(ProvisionedThroughput={
        "ReadCapacityUnits": 1, "WriteCapacityUnits": 1}) == (
        "ValidationException", "One or more parameter values were invalid: "
        "Neither ReadCapacityUnits nor WriteCapacityUnits can be specified "
        "when BillingMode is PAY_PER_REQUEST")
    with pytest.raises(ddb.exceptions.ResourceNotFoundException):
        ddb.update_table(TableName="thr-none-" + unique,
                         BillingMode="PAY_PER_REQUEST")


def test_boto3_standard_retries_get_every_write_through(cluster, unique):
    ddb = cluster.client()
    name = "thr-retry-" + unique
    parts = create(cluster, ddb, name)
    keys = keys_in(parts, parts[0]["part"], 150)
    # boto3's standard retry mode: exponential back-off on throttles.
    retrying = [cluster.client(attempts=20) for _ in range(4)]
    errors = []

    def put(i):
        try:
            retrying[i % 4].put_item(TableName=name, Item={
                "pk": {"S": keys[i]}})
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)
    threads = [threading.Thread(target=lambda j=j: [
        put(i) for i in range(j, len(keys), 6)]) for j in range(6)]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    took = time.monotonic() - t0
    assert not errors, errors[:3]
    m = counters(cluster, name)
    assert m[("kv_partition_throttled_writes_total", parts[0]["part"])] > 0, \
        "the partition was never driven past its ceiling"
    # 150 writes at 50 WCU/s, after the first second's 50: at least 2 s.
    assert took >= 1.8, took
    got = ddb.scan(TableName=name, Select="COUNT", ConsistentRead=True)
    assert got["Count"] == 150


def test_batches_return_throttled_items_unprocessed(cluster, unique):
    ddb = cluster.client()
    name = "thr-batch-" + unique
    parts = create(cluster, ddb, name, BillingMode="PROVISIONED",
                   ProvisionedThroughput={"ReadCapacityUnits": 4,
                                          "WriteCapacityUnits": 4})
    # One partition is spent; the batch's items there come back, the rest
    # are written.
    hot = parts[0]["part"]
    hot_keys = keys_in(parts, hot, 5, "h")
    cold_keys = [k for p in parts[1:] for k in keys_in(parts, p["part"], 1,
                                                        "c")]
    spend = keys_in(parts, hot, 1, "spend")[0]
    for _ in range(100):
        try:
            ddb.put_item(TableName=name, Item={"pk": {"S": spend}})
        except ddb.exceptions.ProvisionedThroughputExceededException:
            break
    reqs = [{"PutRequest": {"Item": {"pk": {"S": k}}}}
            for k in hot_keys + cold_keys]
    out = ddb.batch_write_item(RequestItems={name: reqs})
    unprocessed = out["UnprocessedItems"].get(name, [])
    back = {r["PutRequest"]["Item"]["pk"]["S"] for r in unprocessed}
    assert set(hot_keys) <= back, back
    written = set(hot_keys + cold_keys) - back
    assert written, "every item came back"
    for k in written:
        assert "Item" in ddb.get_item(TableName=name, Key={"pk": {"S": k}},
                                      ConsistentRead=False)
    # Every item on spent partitions: the whole batch is refused.
    with pytest.raises(ddb.exceptions.ProvisionedThroughputExceededException):
        ddb.batch_write_item(RequestItems={name: [
            {"PutRequest": {"Item": {"pk": {"S": k}}}} for k in hot_keys]})
    # BatchGetItem: the spent read side comes back in UnprocessedKeys.
    for _ in range(200):
        try:
            ddb.get_item(TableName=name, Key={"pk": {"S": spend}},
                         ConsistentRead=True)
        except ddb.exceptions.ProvisionedThroughputExceededException:
            break
    out = ddb.batch_get_item(RequestItems={name: {"Keys": [
        {"pk": {"S": k}} for k in hot_keys[:1] + cold_keys],
        "ConsistentRead": True}})
    keys_back = [k["pk"]["S"] for k in out["UnprocessedKeys"].get(
        name, {}).get("Keys", [])]
    assert keys_back == hot_keys[:1], out


def test_nodes_serve_metrics_and_status_shows_partitions(cluster, unique):
    ddb = cluster.client()
    name = "thr-vis-" + unique
    parts = create(cluster, ddb, name)
    table_id = cluster.status()["tables"][name]["id"]
    ddb.put_item(TableName=name, Item={"pk": {"S": "v"}})
    owner = [p for p in parts if p["part"] == part_of(parts, "v")][0]
    m = cluster.metrics(cluster.node_metrics[owner["node"]])
    labels = frozenset({("table_id", str(table_id)),
                        ("partition", str(owner["part"])),
                        ("node", str(owner["node"]))})
    assert m[("kv_partition_consumed_write_units_total", labels)] == 1.0
    assert m[("kv_partition_write_ceiling_units", labels)] == WCU
    assert m[("kv_partition_read_ceiling_units", labels)] == RCU
    assert m[("kv_partition_items", labels)] == 1
    # Each node shows only its own partitions.
    for i, url in enumerate(cluster.node_metrics):
        for (fam, lab), _ in cluster.metrics(url).items():
            if fam.startswith("kv_partition_"):
                assert dict(lab)["node"] == str(i)
    # The router counts answers by operation.
    r = cluster.metrics()
    assert r[("kv_router_requests_total",
              frozenset({("op", "PutItem")}))] >= 1

    out = cluster.admin("status", "--partitions", "--once")
    rows = [line.split() for line in out.splitlines()
            if line.startswith(name[:20])]
    assert len(rows) == 4, out
    for row in rows:
        # table part node RCU/s WCU/s thr-r/s thr-w/s ceil-r ceil-w ...
        assert (float(row[7]), float(row[8])) == (RCU, WCU), row


@pytest.mark.parametrize("billing,code", [
    ("PROVISIONED", "ProvisionedThroughputExceeded"),
    ("PAY_PER_REQUEST", "ThrottlingError")])
def test_a_throttled_partition_cancels_a_transaction(cluster, unique,
                                                     billing, code):
    """A transaction with an action on a spent partition is cancelled with
    the throughput reason for that action (DynamoDB's code by the table's
    billing) and applies nothing; its action on a cold partition says
    None."""
    ddb = cluster.client()
    name = "thr-txn-%s-%s" % (billing[:4].lower(), unique)
    kw = {"BillingMode": billing}
    if billing == "PROVISIONED":
        kw["ProvisionedThroughput"] = {"ReadCapacityUnits": 4,
                                       "WriteCapacityUnits": 4}
    parts = create(cluster, ddb, name, **kw)
    hot = parts[0]["part"]
    spend = keys_in(parts, hot, 2, "spend")
    cold = keys_in(parts, parts[1]["part"], 1, "cold")[0]
    def spent():
        for _ in range(300):
            try:
                ddb.put_item(TableName=name, Item={"pk": {"S": spend[0]}})
            except ddb.exceptions.ClientError as e:
                if e.response["Error"]["Code"] in THROTTLES:
                    return
                raise
    # The bucket refills within milliseconds: spend it, then try at once,
    # until the transaction meets it spent.
    r = None
    for _ in range(50):
        spent()
        try:
            ddb.transact_write_items(TransactItems=[
                {"Put": {"TableName": name, "Item": {"pk": {"S": cold}}}},
                {"Put": {"TableName": name,
                         "Item": {"pk": {"S": spend[1]}}}}])
            ddb.delete_item(TableName=name, Key={"pk": {"S": cold}})
        except ddb.exceptions.ClientError as e:
            r = e.response
            break
    assert r is not None, "never cancelled"
    assert r["Error"]["Code"] == "TransactionCanceledException"
    assert [x["Code"] for x in r["CancellationReasons"]] == ["None", code]
    assert "Item" not in ddb.get_item(TableName=name, ConsistentRead=True,
                                      Key={"pk": {"S": cold}})
