"""test_adaptive.py — partitions split and moved while clients use them.

Splits and moves by hand (kv-admin partition split/move), the cluster map
(status --json), the events (status --events), a split for size, and a
checker under a concurrent load: every acknowledged write is present
exactly once afterwards, every read returns a value that was written, and
a Scan resumed across a split loses or repeats nothing. Ceilings are
DynamoDB's (no heat splits happen here; test_adaptive_heat.py has those).
"""

import random
import time

import pytest

from adaptive_load import Load, check_map, scan_all
from cluster import wait_until

# A partition above 1 MB splits at its median (for test_split_for_size).
CLUSTER_SETTINGS = ["split-size-mb 1"]


def test_split_by_hand_keeps_every_item(cluster, ddb):
    name = cluster.make_table("split", sort_key="N")
    with_items = {}
    for c in range(40):
        for s in range(10):
            ddb.put_item(TableName=name, Item={
                "pk": {"S": "c%d" % c}, "sk": {"N": str(s)},
                "v": {"S": "x" * (c + s)}})
            with_items[("c%d" % c, s)] = "x" * (c + s)
    before = check_map(cluster, name, items=400)
    first = before[0]
    out = cluster.admin("partition", "split", name, first["id"])
    assert "%d partitions" % (len(before) + 1) in out
    # Cut one more at a hash chosen by hand.
    second = [p for p in cluster.table_map(name)
              if p["lo"] == before[1]["lo"]][0]
    cut = second["lo"] + (second["last"] - second["lo"]) // 4
    cluster.admin("partition", "split", name, second["id"], "--at",
                  "%x" % cut)
    parts = check_map(cluster, name, items=400)
    assert len(parts) == len(before) + 2
    assert any(p["lo"] == cut for p in parts)
    # New ids, the next epoch, on the same owner.
    old_ids = {p["id"] for p in before}
    halves = [p for p in parts if p["id"] not in old_ids]
    assert len(halves) == 4
    assert all(p["node"] == first["node"] for p in halves
               if p["lo"] <= first["last"])
    for (pk, sk), v in with_items.items():
        got = ddb.get_item(TableName=name, ConsistentRead=True, Key={
            "pk": {"S": pk}, "sk": {"N": str(sk)}})["Item"]
        assert got["v"]["S"] == v
    # Query pages within a collection still work.
    r = ddb.query(TableName=name, KeyConditionExpression="pk = :p",
                  ExpressionAttributeValues={":p": {"S": "c7"}}, Limit=3)
    assert [int(i["sk"]["N"]) for i in r["Items"]] == [0, 1, 2]
    ev = [e for e in cluster.events() if e["table"] == name]
    assert [e["kind"] for e in ev] == ["split", "split"]
    assert ev[0]["reason"] == "operator" and len(ev[0]["into"]) == 2


def test_split_refusals(cluster, ddb):
    name = cluster.make_table("refuse")
    parts = cluster.table_map(name)
    p = parts[0]
    import subprocess
    for args, words in (
            (("no-such-table", 0), "KV_NO_TABLE"),
            ((name, 999), "no such partition"),
            ((name, p["id"], "--at", "%x" % (p["last"] + 1)),
             "inside the partition"),
            ((name, p["id"], "--at", "%x" % p["lo"]),
             "inside the partition")):
        res = subprocess.run(
            [cluster._bin("cluster-config/kv-admin"), "--config",
             cluster.config, "partition", "split"] + [str(a) for a in args],
            capture_output=True, text=True, timeout=30)
        assert res.returncode == 1, res
        assert words in res.stderr, res.stderr
    res = subprocess.run(
        [cluster._bin("cluster-config/kv-admin"), "--config",
         cluster.config, "partition", "move", name, str(p["id"]),
         str(p["node"])],
        capture_output=True, text=True, timeout=30)
    assert res.returncode == 1 and "already" in res.stderr, res
    assert [q["epoch"] for q in cluster.table_map(name)] == [
        q["epoch"] for q in parts]


def test_move_by_hand(cluster, ddb):
    name = cluster.make_table("move")
    for i in range(300):
        ddb.put_item(TableName=name, Item={"pk": {"S": "k%d" % i},
                                           "v": {"N": str(i)}})
    parts = check_map(cluster, name, items=300)
    p = parts[1]
    dest = (p["node"] + 1) % len(cluster.nodes)
    out = cluster.admin("partition", "move", name, p["id"], dest)
    assert "on node %d" % dest in out
    after = check_map(cluster, name, items=300)
    moved = [q for q in after if q["id"] == p["id"]][0]
    assert moved["node"] == dest and moved["epoch"] > p["epoch"]
    assert moved["items"] == p["items"] and moved["bytes"] == p["bytes"]
    for i in range(300):
        got = ddb.get_item(TableName=name, Key={"pk": {"S": "k%d" % i}},
                           ConsistentRead=True)["Item"]
        assert got["v"]["N"] == str(i)
    ev = [e for e in cluster.events() if e["table"] == name]
    assert ev[-1]["kind"] == "move" and ev[-1]["outcome"] == "done"
    assert ev[-1]["from"] == p["node"] and ev[-1]["to"] == dest
    assert ev[-1]["items_copied"] == p["items"]
    # And back: the old owner serves it again from a fresh copy.
    cluster.admin("partition", "move", name, p["id"], p["node"])
    check_map(cluster, name, items=300)
    m = cluster.metrics(cluster.node_metrics[0])
    assert m[("kv_moves_total", frozenset(
        {("reason", "operator"), ("outcome", "done")}))] >= 2


def test_split_and_move_under_load(cluster, ddb):
    name = cluster.make_table("load")
    with Load(cluster, name) as load:
        wait_until(lambda: len(load.acked) > 200, timeout=30,
                   what="a first load")
        for rnd in range(3):
            parts = cluster.table_map(name)
            big = max(parts, key=lambda p: p["items"])
            cluster.admin("partition", "split", name, big["id"])
            time.sleep(0.3)
            parts = cluster.table_map(name)
            p = random.choice(parts)
            dest = (p["node"] + 1 + rnd % 2) % len(cluster.nodes)
            cluster.admin("partition", "move", name, p["id"], dest)
            time.sleep(0.3)
        n_before = len(load.acked)
        time.sleep(1)
    assert len(load.acked) > n_before, "the load stopped during the moves"
    assert not load.errors, "clients saw errors: %r" % load.errors[:5]
    assert load.reads > 50
    load.check(ddb)
    check_map(cluster, name, items=len(load.acked) + sum(
        1 for n in load.adds if n > 0))
    kinds = [e["kind"] for e in cluster.events() if e["table"] == name]
    assert kinds.count("split") == 3 and kinds.count("move") == 3


def test_checker_catches_a_move_that_loses_writes(cluster, ddb):
    """The checker above is worth something only if it fails when a
    move loses writes: a move with its catch-up skipped on purpose
    (--plant skip-catch-up) loses those made while it copied."""
    name = cluster.make_table("plant")
    with Load(cluster, name) as load:
        wait_until(lambda: len(load.acked) > 200, timeout=30,
                   what="a first load")
        p = max(cluster.table_map(name), key=lambda p: p["items"])
        cluster.admin("partition", "move", name, p["id"],
                      (p["node"] + 1) % len(cluster.nodes), "--plant",
                      "skip-catch-up")
        time.sleep(0.5)
    with pytest.raises(AssertionError, match="acknowledged writes lost"):
        load.check(ddb)


def test_scan_resumed_across_a_split(cluster, ddb):
    name = cluster.make_table("scan")
    for i in range(600):
        ddb.put_item(TableName=name, Item={"pk": {"S": "s%d" % i}})
    seen = []
    kw = {"TableName": name, "Limit": 40}
    r = ddb.scan(**kw)
    seen += [i["pk"]["S"] for i in r["Items"]]
    kw["ExclusiveStartKey"] = r["LastEvaluatedKey"]
    # Split every partition, move one, then carry on with the same scan.
    for p in cluster.table_map(name):
        cluster.admin("partition", "split", name, p["id"])
    p = cluster.table_map(name)[0]
    cluster.admin("partition", "move", name, p["id"],
                  (p["node"] + 1) % len(cluster.nodes))
    while True:
        r = ddb.scan(**kw)
        seen += [i["pk"]["S"] for i in r["Items"]]
        if "LastEvaluatedKey" not in r:
            break
        kw["ExclusiveStartKey"] = r["LastEvaluatedKey"]
    assert len(seen) == len(set(seen)) == 600


def test_split_for_size(cluster, ddb):
    """A partition past split-size-mb (1 MB here) splits at its median
    on its own, with the reason `size`."""
    name = cluster.make_table("size")
    parts = cluster.table_map(name)
    target = parts[0]
    import xxhash
    blob = "z" * 9000
    n = 0
    i = 0
    while n < 160:  # 160 items of 9 KB: 1.4 MB in the first partition
        key = "big%d" % i
        i += 1
        h = xxhash.xxh3_64_intdigest(b"\x01" + key.encode())
        if not target["lo"] <= h <= target["last"]:
            continue
        ddb.put_item(TableName=name, Item={"pk": {"S": key},
                                           "b": {"S": blob}})
        n += 1

    def split():
        ev = [e for e in cluster.events()
              if e["table"] == name and e["kind"] == "split"]
        return ev and ev[0]
    ev = wait_until(split, timeout=15, what="a split for size")
    assert ev["reason"] == "size" and ev["part"] == target["id"]
    parts = check_map(cluster, name, items=160)
    halves = [p for p in parts if p["lo"] >= target["lo"] and
              p["last"] <= target["last"]]
    assert len(halves) == 2
    # The median cut leaves each half with about half of the bytes.
    a, b = (p["bytes"] for p in halves)
    assert min(a, b) >= 0.3 * (a + b), (a, b)
