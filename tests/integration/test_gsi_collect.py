"""test_gsi_collect.py — index tombstones are collected. A delete of an
index entry (an item deleted, or its index key changed) leaves a
tombstone on the index's node, so that an older put still on its way
cannot bring the entry back; with gsi-collect-seconds 1 in the cluster
file, node 0's rounds delete every tombstone once no older record can
still come (node/index.h), and the indexes stay equal to their table.
"""

import time

import pytest

from test_gsi import (S, N, make_indexed, query_all, index_counters,
                      indexes_check, until_converged)
from test_gsi_lag import admin

CLUSTER_SETTINGS = ["gsi-collect-seconds 1"]


def totals(cluster):
    """Tombstones written, replaced by puts and collected, those the last
    sweeps left, and the collector's swept rounds, summed over the
    nodes."""
    t = {"written": 0, "replaced": 0, "collected": 0, "left": 0,
         "swept": 0}
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
        # No put goes to a deleted entry's key here: none is replaced.
        assert now["replaced"] == before["replaced"]
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


def node_metric(cluster, i, name, **want):
    """Sum of metric `name` on node i, over the series whose labels
    include want."""
    return sum(v for (m, labels), v in
               cluster.metrics(cluster.node_metrics[i]).items()
               if m == name and all(dict(labels).get(k) == w
                                    for k, w in want.items()))


def until(what, fn, timeout=30):
    end = time.monotonic() + timeout
    while not fn():
        assert time.monotonic() < end, what
        time.sleep(0.1)


def move_all(cluster, table, to):
    """Moves every partition of table to node `to`; a move that fails
    (undone: a node restarted or woken just before may still be
    connecting again) is tried again."""
    for p in cluster.table_map(table):
        for attempt in range(10):
            if p["node"] == to:
                break
            r = admin(cluster, "partition", "move", table, str(p["id"]),
                      str(to))
            if r.returncode == 0:
                break
            assert attempt < 9, r.stderr
            time.sleep(1)


@pytest.mark.processes
# The planted case first: it restarts node 0 (with the plant), and a node
# frozen and woken before that restart has been seen, once in four runs,
# never to connect again to it (its nng 1.5.2 closing the same pipe
# every few seconds).
@pytest.mark.parametrize("planted", [True, False])
def test_a_put_older_than_a_tombstone_stays_out(cluster, ddb, unique,
                                                planted):
    """An item's put waits in node 1's outbox (by_tag paused); its base
    partition moves to node 0, where the item is deleted; node 1 is
    frozen and by_tag resumed, so the delete reaches the index (on node
    2) first and leaves a tombstone. The collector cannot reach node 1,
    so no round ends and the tombstone stays: once node 1 goes on, its
    older put is refused and the index equals its table. With the
    planted fault collect-early, node 0 collects without node 1, and the
    checker finds the entry the old put brought back."""
    if planted:
        cluster.kill_node(0)
        cluster.nodes[0].argv += ["--plant", "collect-early:1"]
        cluster.start_node(0)
    name = "older-%d-%s" % (planted, unique)
    make_indexed(ddb, name)
    move_all(cluster, name, 1)
    move_all(cluster, name + "/by_tag", 2)
    move_all(cluster, name + "/by_owner", 2)
    r = admin(cluster, "index", "pause", name, "by_tag")
    assert r.returncode == 0, r.stderr
    ix = name + "/by_tag"
    key = {"pk": S("x"), "sk": N(0)}
    ddb.put_item(TableName=name, Item=dict(key, owner=S("ann"), at=N(1),
                                           tag=S("red")))
    until("the put waits on node 1", lambda: node_metric(
        cluster, 1, "kv_index_outbox_records", index=ix) == 1)
    move_all(cluster, name, 0)
    ddb.delete_item(TableName=name, Key=key)
    until("the delete waits on node 0", lambda: node_metric(
        cluster, 0, "kv_index_outbox_records", index=ix) == 1)
    collected = node_metric(cluster, 2, "kv_index_tombstones_total",
                            what="collected")
    skipped = node_metric(cluster, 2, "kv_index_records_total",
                          what="skipped")
    cluster.stop_node(1)
    try:
        r = admin(cluster, "index", "resume", name, "by_tag")
        assert r.returncode == 0, r.stderr
        until("the delete reaches the index", lambda: node_metric(
            cluster, 0, "kv_index_outbox_records", index=ix) == 0)
        if planted:
            until("the planted round collects", lambda: node_metric(
                cluster, 2, "kv_index_tombstones_total",
                what="collected") > collected)
        else:
            # Two rounds end on node 1's silence: one of them began
            # after the tombstone was written, and it collected nothing.
            ended = node_metric(cluster, 0, "kv_index_collect_rounds_total",
                                outcome="ended")
            until("two rounds end", lambda: node_metric(
                cluster, 0, "kv_index_collect_rounds_total",
                outcome="ended") >= ended + 2)
            assert node_metric(cluster, 2, "kv_index_tombstones_total",
                               what="collected") == collected
    finally:
        cluster.cont_node(1)
    until("node 1 sends its put", lambda: node_metric(
        cluster, 1, "kv_index_outbox_records", index=ix) == 0)
    res = indexes_check.converged(ddb, name, ["by_tag"], wait=5)
    missing, extra = res["by_tag"]
    if planted:
        assert not missing and len(extra) == 1, res
    else:
        assert not missing and not extra, res
        assert node_metric(cluster, 2, "kv_index_records_total",
                           what="skipped") > skipped
        until_converged(ddb, name, cluster=cluster)
