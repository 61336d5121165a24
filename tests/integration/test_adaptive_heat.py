"""test_adaptive_heat.py — splits for heat, with ceilings and thresholds
scaled down so that a test can make a partition hot.

A partition that consumes at least half of its 50 WCU ceiling for two
seconds running is split: where one key carries most of its traffic,
that key ends alone in a partition of a single hash, whose ceiling is
the partition ceiling and never more; otherwise the cut halves the
traffic. All asserted from `kv-admin status --json`, `status --events`
and `hot-keys`, as an operator would see it.
"""

import threading
import time

import xxhash

from cluster import wait_until

WCU = 50
CLUSTER_SETTINGS = ["partition-wcu %d" % WCU, "partition-rcu %d" % (3 * WCU),
                    "burst-seconds 0", "split-after-seconds 2",
                    "split-threshold 0.5"]


def key_hash(key):
    return xxhash.xxh3_64_intdigest(b"\x01" + key.encode())


def part_of(parts, key):
    h = key_hash(key)
    return [p for p in parts if p["lo"] <= h <= p["last"]][0]


def served(cluster, name, key):
    """The partition holding key, from a status --json in which its
    owner answered (a survey answer can come late under load)."""
    def get():
        p = part_of(cluster.table_map(name), key)
        return p if p["served"] else None
    try:
        return wait_until(get, timeout=15, what="the owner's counters")
    except AssertionError:
        raise AssertionError("map %r" % cluster.table_map(name))


class Writers:
    """Threads that write given keys at given rates (0: as fast as they
    can), counting acknowledged and throttled writes."""

    def __init__(self, cluster, name, plan):
        self.stop = threading.Event()
        self.ok = {}
        self.throttled = {}
        self.threads = []
        for key, rate, n in plan:
            for _ in range(n):
                self.threads.append(threading.Thread(
                    target=self.run, args=(cluster, name, key, rate)))

    def run(self, cluster, name, key, rate):
        ddb = cluster.client()
        next_t = time.monotonic()
        while not self.stop.is_set():
            if rate:
                next_t += 1.0 / rate
                d = next_t - time.monotonic()
                if d > 0:
                    time.sleep(d)
            try:
                ddb.update_item(TableName=name, Key={"pk": {"S": key}},
                                UpdateExpression="ADD n :one",
                                ExpressionAttributeValues={
                                    ":one": {"N": "1"}})
                self.ok[key] = self.ok.get(key, 0) + 1
            except ddb.exceptions.ProvisionedThroughputExceededException:
                self.throttled[key] = self.throttled.get(key, 0) + 1
            except Exception as e:  # noqa: BLE001
                if "Throttl" not in repr(e):
                    raise

    def __enter__(self):
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        for t in self.threads:
            t.join(30)


def test_hot_item_ends_alone_and_keeps_the_ceiling(cluster, ddb):
    name = cluster.make_table("hot")
    parts = cluster.table_map(name)
    home = part_of(parts, "hot")
    # Partition-mates of the hot key, written gently.
    mates = [k for k in ("m%d" % i for i in range(200))
             if part_of(parts, k)["id"] == home["id"]][:3]
    h = key_hash("hot")
    plan = [("hot", 0, 3)] + [(k, 3, 1) for k in mates]
    with Writers(cluster, name, plan) as w:
        def alone():
            for p in cluster.table_map(name):
                if p["lo"] == p["last"] == h:
                    return p
            return None
        t0 = time.monotonic()
        p = wait_until(alone, timeout=30, what="the hot key alone")
        took = time.monotonic() - t0
        # Its ceiling stays the partition's: measured while it is
        # offered more than that (it throttles).
        samples = []
        for _ in range(3):
            q = served(cluster, name, "hot")
            samples.append((q["wcu_per_s"], q["write_throttled_per_s"]))
        mates_throttled = {k: w.throttled.get(k, 0) for k in mates}
        before = dict(mates_throttled)
        time.sleep(3)
        after = {k: w.throttled.get(k, 0) for k in mates}
    assert took < 20, took
    for wcu, thr in samples:
        assert thr > 0, samples          # offered above the ceiling
        assert wcu <= 1.1 * WCU, samples  # never admitted above it
    assert max(s[0] for s in samples) >= 0.8 * WCU, samples
    # Its former partition-mates are no longer throttled.
    assert after == before, (before, after)
    ev = [e for e in cluster.events() if e["table"] == name
          and e["kind"] == "split"]
    assert ev and ev[0]["reason"] == "hot item", ev
    assert ev[0]["hot_keys"][0].startswith("S:hot ("), ev[0]
    assert any(int(x["lo"], 16) == int(x["last"], 16) == h
               for e in ev for x in e["into"]), ev
    # hot-keys shows it first, by consumed units and by throttles.
    out = cluster.admin("hot-keys", name)
    block = out.split("partition %d " % p["id"])[1]
    assert "by consumed units:\n      S:hot " in block
    assert "by throttled requests:\n      S:hot " in block
    m = cluster.metrics(cluster.node_metrics[0])
    assert m[("kv_splits_total",
              frozenset({("reason", "hot item")}))] >= 1


def test_heat_split_halves_the_traffic(cluster, ddb):
    """Three warm keys of one partition, none with half of its traffic:
    the split cuts where the traffic halves, leaving keys on each side."""
    name = cluster.make_table("warm")
    parts = cluster.table_map(name)
    home = parts[2]
    keys = [k for k in ("w%d" % i for i in range(300))
            if part_of(parts, k)["id"] == home["id"]][:3]
    # 3 x 12 WCU/s: 36 in all, above half the ceiling (25), each a third.
    with Writers(cluster, name, [(k, 12, 1) for k in keys]):
        def split():
            ev = [e for e in cluster.events() if e["table"] == name
                  and e["kind"] == "split"]
            return ev and ev[0]
        ev = wait_until(split, timeout=30, what="a split for heat")
    assert ev["reason"] == "heat", ev
    assert ev["part"] == home["id"]
    sides = [[k for k in keys if int(x["lo"], 16) <= key_hash(k) <=
              int(x["last"], 16)] for x in ev["into"]]
    assert len(ev["into"]) == 2 and all(sides), (ev, sides)
    assert len(ev["hot_keys"]) == 3


def test_a_cold_table_never_splits(cluster, ddb):
    name = cluster.make_table("cold")
    with Writers(cluster, name, [("c%d" % i, 5, 1) for i in range(3)]):
        time.sleep(5)
    assert not [e for e in cluster.events() if e["table"] == name]
    assert len(cluster.table_map(name)) == 4


def test_borrowing_lifts_a_partition_above_its_share(cluster, ddb):
    """A PROVISIONED table of 40 WCU over 4 partitions (10 each): one
    partition offered 24 writes/s borrows its table's unused units and
    is not throttled once the catalog node has lent them (about a
    second); offered far more, the table as a whole stays near its 40."""
    import uuid
    name = "borrow-" + uuid.uuid4().hex[:8]
    ddb.create_table(TableName=name, AttributeDefinitions=[
        {"AttributeName": "pk", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        ProvisionedThroughput={"ReadCapacityUnits": 40,
                               "WriteCapacityUnits": 40})
    ddb.get_waiter("table_exists").wait(
        TableName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 20})
    with Writers(cluster, name, [("b", 24, 1)]) as w:
        time.sleep(4)  # lent within a round or two
        # The status is a survey's snapshot of the owner's bucket, which
        # shows the share until the first round has lent: read it until
        # it shows the lend.
        seen = []

        def lifted():
            seen.append(served(cluster, name, "b"))
            return seen[-1]["write_ceiling"] > 15 or None
        wait_until(lifted, timeout=10, what="the lent ceiling in the status")
        p = seen[-1]
        thr0, ok0 = w.throttled.get("b", 0), w.ok.get("b", 0)
        time.sleep(3)
        thr1, ok1 = w.throttled.get("b", 0), w.ok.get("b", 0)
    assert thr1 == thr0, "throttled above its share, below the table's units"
    assert (ok1 - ok0) / 3 > 18, (ok0, ok1)
    assert p["wcu_per_s"] > 15 and p["write_ceiling"] > 15, (p, seen)
    m = cluster.metrics(cluster.node_metrics[0])
    assert m[("kv_capacity_borrow_rounds_total", frozenset())] > 0
    # Offered far more than the table's units, it gets about them (the
    # hot key may have been split off meanwhile: it is hot here).
    with Writers(cluster, name, [("b", 0, 3)]):
        time.sleep(3)
        p = served(cluster, name, "b")
    assert p["write_throttled_per_s"] > 0, p
    assert p["wcu_per_s"] <= 40 * 1.25, p


def test_hot_collection_splits_on_the_sort_key(cluster, ddb):
    """One hot item collection with many sort keys (and no local
    secondary index): after it is alone in a partition of its hash, that
    partition splits on the sort key, so the collection is served by
    several partitions, each with its own ceiling; Query over it spans
    them in order, forwards and backwards, with correct paging."""
    import threading
    name = cluster.make_table("coll", sort_key="N")
    h = key_hash("hot")
    n_items = 120
    stop = threading.Event()
    acked = {}

    def writer(w):
        c = cluster.client()
        i = w
        while not stop.is_set():
            sk = i % n_items
            i += 3
            try:
                c.update_item(TableName=name, Key={
                    "pk": {"S": "hot"}, "sk": {"N": str(sk)}},
                    UpdateExpression="ADD n :one",
                    ExpressionAttributeValues={":one": {"N": "1"}})
                acked[sk] = acked.get(sk, 0) + 1
            except Exception as e:  # noqa: BLE001
                if "Throttl" not in repr(e) and \
                        "ProvisionedThroughput" not in repr(e):
                    raise
    threads = [threading.Thread(target=writer, args=(w,)) for w in range(3)]
    for t in threads:
        t.start()
    try:
        def keyed():
            parts = [p for p in cluster.table_map(name)
                     if p["lo"] == p["last"] == h and "key_from" in p]
            return len(parts) >= 2 and parts
        parts = wait_until(keyed, timeout=40, what="a split on the sort key")
        time.sleep(2)  # the collection served by several partitions
        # What the collection was admitted, counted by its writers (each
        # write 1 WCU): the map changes too often under this load for
        # the owners' counters to come from one consistent sample.
        n0, t0 = sum(acked.values()), time.monotonic()
        time.sleep(3)
        admitted = (sum(acked.values()) - n0) / (time.monotonic() - t0)
    finally:
        stop.set()
        for t in threads:
            t.join(30)
    assert len({p["node"] for p in parts}) == 1
    ev = [e for e in cluster.events() if e["table"] == name and
          any("key_from" in x for x in e.get("into", []))]
    assert ev and ev[0]["kind"] == "split", ev
    # Several partitions with a ceiling each: above one partition's.
    assert admitted > 1.2 * WCU, admitted
    # Every item, once, in order, through pages that cross the cuts.
    for forward in (True, False):
        got, kw = [], {"TableName": name, "Limit": 7,
                       "KeyConditionExpression": "pk = :p",
                       "ExpressionAttributeValues": {":p": {"S": "hot"}},
                       "ScanIndexForward": forward, "ConsistentRead": True}
        while True:
            r = ddb.query(**kw)
            got += [int(i["sk"]["N"]) for i in r["Items"]]
            if "LastEvaluatedKey" not in r:
                break
            kw["ExclusiveStartKey"] = r["LastEvaluatedKey"]
        want = sorted(acked) if forward else sorted(acked, reverse=True)
        assert got == want, (forward, got[:20])
    for sk, n in acked.items():
        it = ddb.get_item(TableName=name, ConsistentRead=True, Key={
            "pk": {"S": "hot"}, "sk": {"N": str(sk)}})["Item"]
        assert int(it["n"]["N"]) >= n
    # A range of sort keys across the cuts, and the items' count.
    r = ddb.query(TableName=name, KeyConditionExpression=
                  "pk = :p AND sk BETWEEN :a AND :b",
                  ExpressionAttributeValues={":p": {"S": "hot"},
                                             ":a": {"N": "10"},
                                             ":b": {"N": "100"}},
                  ConsistentRead=True)
    assert [int(i["sk"]["N"]) for i in r["Items"]] == [
        k for k in sorted(acked) if 10 <= k <= 100]
    scanned = ddb.scan(TableName=name, Select="COUNT", ConsistentRead=True)
    assert scanned["Count"] == len(acked)
    def counted():
        m = cluster.table_map(name)
        return all(p["served"] for p in m) and m
    try:
        m = wait_until(counted, timeout=15, what="the owners' counters")
    except AssertionError:
        m = cluster.table_map(name)
        tid = cluster.status()["tables"][name]["id"]
        raise AssertionError("unserved %r; nodes serve %r" % (
            [(p["id"], p["node"], p["epoch"]) for p in m
             if not p["served"]],
            [sorted(cluster.served_by(i, tid)) for i in range(3)]))
    assert sum(p["items"] for p in m) == len(acked)


def test_hot_collection_with_a_local_index_stays_whole(cluster, ddb):
    """The same hot collection in a table with a local secondary index:
    DynamoDB keeps such a collection in one partition, so once it is alone
    at its hash it never splits on the sort key, and stays under one
    partition's ceiling; its index stays whole and consistent."""
    import threading
    import uuid
    name = "lsicoll-" + uuid.uuid4().hex[:8]
    ddb.create_table(
        TableName=name, BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "sk", "AttributeType": "N"},
                              {"AttributeName": "l", "AttributeType": "N"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                   {"AttributeName": "sk", "KeyType": "RANGE"}],
        LocalSecondaryIndexes=[{
            "IndexName": "by_l",
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                          {"AttributeName": "l", "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "KEYS_ONLY"}}])
    ddb.get_waiter("table_exists").wait(
        TableName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 20})
    h = key_hash("hot")
    n_items = 120
    stop = threading.Event()
    acked = set()

    def writer(w):
        c = cluster.client()
        i = w
        while not stop.is_set():
            sk = i % n_items
            i += 3
            try:
                c.put_item(TableName=name, Item={
                    "pk": {"S": "hot"}, "sk": {"N": str(sk)},
                    "l": {"N": str(n_items - sk)}})
                acked.add(sk)
            except Exception as e:  # noqa: BLE001
                if "Throttl" not in repr(e) and \
                        "ProvisionedThroughput" not in repr(e):
                    raise
    threads = [threading.Thread(target=writer, args=(w,)) for w in range(3)]
    for t in threads:
        t.start()
    try:
        def alone():
            return [p for p in cluster.table_map(name)
                    if p["lo"] == p["last"] == h]
        wait_until(alone, timeout=40, what="the hot collection alone")
        # Three more split periods under load: no split on the sort key.
        time.sleep(6)
        keyed = [p for p in cluster.table_map(name) if "key_from" in p]
    finally:
        stop.set()
        for t in threads:
            t.join(30)
    assert keyed == []
    r = ddb.query(TableName=name, IndexName="by_l", ConsistentRead=True,
                  KeyConditionExpression="pk = :p",
                  ExpressionAttributeValues={":p": {"S": "hot"}})
    assert sorted(int(i["sk"]["N"]) for i in r["Items"]) == sorted(acked)
