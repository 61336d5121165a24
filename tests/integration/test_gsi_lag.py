"""test_gsi_lag.py — an index that lags on purpose: with gsi-delay-ms
1000 in the cluster file (`./kv up --gsi-delay-ms 1000`), an item written
is absent from its index at once and present within 2 s; `./kv index
pause` holds one index's replication (its records wait, counted in
/metrics and shown by ./kv status) while another index of the table
keeps up, and `resume` lets
them go.
"""

import os
import subprocess
import time

from test_gsi import S, N, make_indexed, query_all, scan_all, until_converged

CLUSTER_SETTINGS = ["gsi-delay-ms 1000"]


def in_owner_index(ddb, name, owner):
    return query_all(ddb, TableName=name, IndexName="by_owner",
                     KeyConditionExpression="#o = :o",
                     ExpressionAttributeNames={"#o": "owner"},
                     ExpressionAttributeValues={":o": S(owner)})


def test_an_item_shows_up_after_the_delay(ddb, unique):
    name = "lag-" + unique
    make_indexed(ddb, name)
    t0 = time.monotonic()
    ddb.put_item(TableName=name, Item={
        "pk": S("a"), "sk": N(1), "owner": S("ann"), "at": N(1)})
    assert in_owner_index(ddb, name, "ann") == []
    while not in_owner_index(ddb, name, "ann"):
        assert time.monotonic() - t0 < 2.0, "not in the index after 2 s"
        time.sleep(0.05)
    # Not before the delay either.
    assert time.monotonic() - t0 >= 0.9


def waiting(cluster, index):
    return sum(v for url in cluster.node_metrics
               for (m, labels), v in cluster.metrics(url).items()
               if m == "kv_index_outbox_records" and
               dict(labels).get("index") == index)


def admin(cluster, *args):
    build = os.environ["KV_BUILD"]
    return subprocess.run(
        [os.path.join(build, "cluster-config", "kv-admin"), "--config",
         cluster.config] + list(args), capture_output=True, text=True,
        timeout=30)


def test_pause_holds_one_index(cluster, ddb, unique):
    name = "pause-" + unique
    make_indexed(ddb, name)
    r = admin(cluster, "index", "pause", name, "by_tag")
    assert r.returncode == 0, r.stderr
    for i in range(20):
        ddb.put_item(TableName=name, Item={
            "pk": S("p%d" % i), "sk": N(i), "owner": S("ann"), "at": N(i),
            "tag": S("red")})
    # by_owner keeps up; by_tag's records wait.
    end = time.monotonic() + 5
    while len(in_owner_index(ddb, name, "ann")) < 20:
        assert time.monotonic() < end
        time.sleep(0.1)
    time.sleep(1.5)
    assert scan_all(ddb, TableName=name, IndexName="by_tag") == []
    assert waiting(cluster, name + "/by_tag") == 20
    # ./kv status (kv-admin status) shows them too, per node.
    out = cluster.admin("status")
    assert "index replication" in out
    shown = [line.split() for line in out.splitlines()
             if name + "/by_tag" in line and " waiting " in line]
    assert sum(float(f[-1]) for f in shown) == 20, out
    r = admin(cluster, "index", "resume", name, "by_tag")
    assert r.returncode == 0, r.stderr
    until_converged(ddb, name)
    end = time.monotonic() + 5
    while waiting(cluster, name + "/by_tag") != 0:
        assert time.monotonic() < end
        time.sleep(0.1)
    # A missing index is refused.
    r = admin(cluster, "index", "pause", name, "nope")
    assert r.returncode != 0


def records_read(cluster):
    """Index records the nodes' replicators have read from their
    outboxes (a record that waits may be read more than once)."""
    return sum(v for url in cluster.node_metrics
               for (m, labels), v in cluster.metrics(url).items()
               if m == "kv_index_records_total" and
               dict(labels).get("what") == "read")


def test_waiting_records_are_not_read_at_every_look(cluster, ddb, unique):
    """Records that must wait (by_owner's for the delay, by_tag's for a
    pause) are not read again at every look of the replicator. Each write
    wakes it; reading at each wake every record it could not yet send
    cost a node more CPU than the writes themselves. Now a look reads the
    records old enough, or only the oldest (for the metrics) when none
    is, and a waiting index is looked at again only when it may go on."""
    name = "lagreads-" + unique
    make_indexed(ddb, name)
    r = admin(cluster, "index", "pause", name, "by_tag")
    assert r.returncode == 0, r.stderr
    before = records_read(cluster)
    t0 = time.monotonic()
    n = 300
    for i in range(n):
        ddb.put_item(TableName=name, Item={
            "pk": S("w%d" % i), "sk": N(i), "owner": S("bob"), "at": N(i),
            "tag": S("blue")})
    while len(in_owner_index(ddb, name, "bob")) < n:
        assert time.monotonic() - t0 < 60
        time.sleep(0.1)
    elapsed = time.monotonic() - t0
    read = records_read(cluster) - before
    # by_owner's records are read about once each, when old enough; the
    # rest are looks at an oldest record, at most 20 a second for each
    # index on each node (and more at the pause's start). Reading all
    # that waits at every write made this tens of thousands.
    nodes = len(cluster.node_metrics)
    bound = n + 2 * 20 * nodes * elapsed + 100
    assert read <= bound, (read, bound, elapsed)
    assert waiting(cluster, name + "/by_tag") == n
    r = admin(cluster, "index", "resume", name, "by_tag")
    assert r.returncode == 0, r.stderr
    until_converged(ddb, name)
