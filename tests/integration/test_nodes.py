"""test_nodes.py — a node added to a running cluster, and one drained.

The cluster file lists four nodes, the last one `standby`: it is not
started and takes no partition until `kv-admin node add 3`, after which
partitions move onto it until the nodes hold about as many each. `node
drain N` moves every partition off node N, and new tables leave it out.
Both while a load runs, with adaptive_load's checker afterwards.
"""

import pytest

from adaptive_load import Load, check_map
from cluster import wait_until

CLUSTER_OPTIONS = {"nodes": 4, "standby": (3,)}


def per_node(cluster):
    counts = {i: 0 for i in range(len(cluster.nodes))}
    for t in cluster.status_json()["tables"]:
        for p in t["partitions"]:
            counts[p["node"]] += 1
    return counts


def test_a_standby_node_takes_nothing(cluster, ddb):
    for _ in range(3):
        name = cluster.make_table("standby")
        assert all(p["node"] != 3 for p in cluster.table_map(name))
    st = cluster.status()
    assert not st["nodes"][3]["up"]


@pytest.mark.processes
def test_added_node_takes_partitions_under_load(cluster, ddb):
    name = cluster.make_table("grow")
    with Load(cluster, name) as load:
        wait_until(lambda: len(load.acked) > 200, timeout=30,
                   what="a first load")
        cluster.start_node(3)
        out = cluster.admin("node", "add", 3)
        acked = len(load.acked)
        wait_until(lambda: len(load.acked) > acked + 50, timeout=30,
                   what="writes after the rebalance")
    assert "onto node 3" in out and "moved 0 " not in out, out
    assert not load.errors, load.errors[:5]
    counts = per_node(cluster)
    assert counts[3] > 0
    assert max(counts.values()) - min(counts.values()) <= 1, counts
    check_map(cluster, name)
    load.check(ddb)
    reasons = {e["reason"] for e in cluster.events()
               if e["kind"] == "move" and e["to"] == 3}
    assert reasons == {"rebalance"}


@pytest.mark.processes
def test_drained_node_serves_nothing(cluster, ddb):
    name = cluster.make_table("drain")
    with Load(cluster, name) as load:
        wait_until(lambda: len(load.acked) > 200, timeout=30,
                   what="a first load")
        out = cluster.admin("node", "drain", 1)
        acked = len(load.acked)
        wait_until(lambda: len(load.acked) > acked + 50, timeout=30,
                   what="writes after the drain")
    assert "off node 1" in out, out
    assert not load.errors, load.errors[:5]
    assert per_node(cluster)[1] == 0
    check_map(cluster, name)
    load.check(ddb)
    for t in cluster.status_json()["tables"]:
        assert cluster.served_by(1, t["id"]) == set()
    # New tables leave it out; adding it back gives it partitions again.
    fresh = cluster.make_table("after")
    assert all(p["node"] != 1 for p in cluster.table_map(fresh))
    cluster.admin("node", "add", 1)
    assert per_node(cluster)[1] > 0
    # Refusals: no such node; draining the last node that takes
    # partitions is refused elsewhere (one node would remain here).
    import subprocess
    r = subprocess.run([cluster._bin("cluster-config/kv-admin"), "--config",
                        cluster.config, "node", "drain", "9"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 1 and "no such node" in r.stderr, r
