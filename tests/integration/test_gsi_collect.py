"""test_gsi_collect.py — index tombstones are collected. A delete of an
index entry (an item deleted, or its index key changed) leaves a
tombstone on the index's node, so that an older put still on its way
cannot bring the entry back; with gsi-collect-seconds 1 in the cluster
file, node 0's rounds delete every tombstone once no older record can
still come (node/index.h), and the indexes stay equal to their table.
"""

import time

from test_gsi import (S, N, make_indexed, query_all, index_counters,
                      until_converged)

CLUSTER_SETTINGS = ["gsi-collect-seconds 1"]


def totals(cluster):
    """Tombstones written and collected, those the last sweeps left, and
    the collector's swept rounds, summed over the nodes."""
    t = {"written": 0, "collected": 0, "left": 0, "swept": 0}
    for url in cluster.node_metrics:
        for (m, labels), v in cluster.metrics(url).items():
            d = dict(labels)
            if m == "kv_index_tombstones_total":
                t[d["what"]] += v
            elif m == "kv_index_tombstones_left":
                t["left"] += v
            elif m == "kv_index_collect_rounds_total" and \
                    d["outcome"] == "swept":
                t["swept"] += v
    return t


def owner_of(ddb, name, owner):
    return query_all(ddb, TableName=name, IndexName="by_owner",
                     KeyConditionExpression="#o = :o",
                     ExpressionAttributeNames={"#o": "owner"},
                     ExpressionAttributeValues={":o": S(owner)})


def test_every_tombstone_goes_once_no_older_record_can_come(
        cluster, ddb, unique):
    name = "collect-" + unique
    make_indexed(ddb, name)
    before = totals(cluster)
    items, moves, dropped = 60, 3, 20
    for i in range(items):
        ddb.put_item(TableName=name, Item={
            "pk": S("p%d" % i), "sk": N(0), "owner": S("o%d-0" % i),
            "at": N(i), "tag": S("t%d" % (i % 7))})
    # Each owner change moves the item's by_owner entry: one tombstone
    # each, at a key never written again.
    for m in range(1, moves + 1):
        for i in range(items):
            ddb.update_item(
                TableName=name, Key={"pk": S("p%d" % i), "sk": N(0)},
                UpdateExpression="SET #o = :o",
                ExpressionAttributeNames={"#o": "owner"},
                ExpressionAttributeValues={":o": S("o%d-%d" % (i, m))})
    # A deleted item leaves one in each index.
    for i in range(dropped):
        ddb.delete_item(TableName=name, Key={"pk": S("p%d" % i),
                                             "sk": N(0)})
    until_converged(ddb, name, cluster=cluster)
    want = items * moves + dropped * 2
    end = time.monotonic() + 90
    while True:
        now = totals(cluster)
        written = now["written"] - before["written"]
        collected = now["collected"] - before["collected"]
        if written == want and collected == want and now["left"] == 0:
            break
        assert time.monotonic() < end, \
            "tombstones: %d written, %d collected, %d left (want %d)%s" % (
                written, collected, now["left"], want,
                index_counters(cluster))
        time.sleep(0.5)
    assert now["swept"] > before["swept"]
    until_converged(ddb, name, cluster=cluster)
    assert owner_of(ddb, name, "o30-0") == []
    assert len(owner_of(ddb, name, "o30-%d" % moves)) == 1

    # Entries at the collected keys come back with new writes.
    for i in range(dropped):
        ddb.put_item(TableName=name, Item={
            "pk": S("p%d" % i), "sk": N(0), "owner": S("o%d-0" % i),
            "at": N(i), "tag": S("t%d" % (i % 7))})
    until_converged(ddb, name, cluster=cluster)
    assert len(owner_of(ddb, name, "o5-0")) == 1
