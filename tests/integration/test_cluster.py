"""test_cluster.py — the cluster as processes: data survives a restart of
every process, a killed node takes only its own partitions down (with 5xx
answers, not hangs) and comes back, a stopped node holds up only the
calls sent to it (they fail after the call timeout) and serves the right
answers once resumed, routers follow epoch changes, tables
are deleted and re-created, ListTables pages, DescribeTable shows the
table's lifecycle, keys hash to the same partition across restarts,
item counts and sizes are exact after every node is killed (each counts
its items again), and every node thread runs under SCHED_BATCH.

Tests that kill or restart processes carry the `processes` mark: against
an external cluster (KV_ENDPOINT) leave them out with -m 'not processes'.
"""

import datetime
import http.client
import json
import os
import re
import threading
import time
import urllib.parse
import uuid

import pytest
from botocore.exceptions import ClientError

from cluster import wait_until


def make_table(ddb, name, range_key=False, billing=None):
    defs = [{"AttributeName": "pk", "AttributeType": "S"}]
    ks = [{"AttributeName": "pk", "KeyType": "HASH"}]
    if range_key:
        defs.append({"AttributeName": "sk", "AttributeType": "N"})
        ks.append({"AttributeName": "sk", "KeyType": "RANGE"})
    r = ddb.create_table(TableName=name, AttributeDefinitions=defs,
                         KeySchema=ks,
                         **(billing or {"BillingMode": "PAY_PER_REQUEST"}))
    ddb.get_waiter("table_exists").wait(
        TableName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 20})
    return r["TableDescription"]


def item_of(i):
    """A varied item for key number i."""
    return {
        "pk": {"S": "item-%04d" % i},
        "n": {"N": str(i * 7 - 300)},
        "f": {"N": "%d.25" % i},
        "s": {"S": "value %d ✓" % i},
        "b": {"B": bytes([i % 256, 255 - i % 256, 0])},
        "l": {"L": [{"N": str(i)}, {"BOOL": i % 2 == 0}, {"NULL": True}]},
        "m": {"M": {"ss": {"SS": ["x%d" % i, "y"]}}},
    }


def counts(cluster, table):
    """{partition: item count} from kv-admin status."""
    return cluster.item_counts(table)


def partition_of_each(cluster, ddb, table, keys):
    """Puts the keys one by one and watches which partition's item count
    grows: {key: partition}."""
    where = {}
    before = counts(cluster, table)
    for k in keys:
        ddb.put_item(TableName=table, Item={"pk": {"S": k}})
        after = counts(cluster, table)
        grown = [p for p in after if after[p] != before.get(p)]
        assert len(grown) == 1 and after[grown[0]] == before[grown[0]] + 1, (
            k, before, after)
        where[k] = grown[0]
        before = after
    return where


def recount_lines(cluster):
    """{node index: how many times its log says it counted its
    partitions' items again after an unclean stop}."""
    out = {}
    for i, n in enumerate(cluster.nodes):
        with open(n.log, "rb") as f:
            out[i] = f.read().decode(errors="replace").count(
                "not stopped cleanly last time")
    return out


# ---- (a) restart persistence ----

@pytest.mark.processes
def test_items_survive_a_restart_of_every_process(cluster, ddb):
    cluster.require_processes()
    name = "persist-" + uuid.uuid4().hex[:8]
    make_table(ddb, name)
    for i in range(200):
        ddb.put_item(TableName=name, Item=item_of(i))
    size_before = ddb.describe_table(TableName=name)["Table"][
        "TableSizeBytes"]
    recounts = recount_lines(cluster)
    cluster.restart_all()
    # A clean stop saved the counters: no node counted its items again.
    assert recount_lines(cluster) == recounts
    assert cluster.forced_kills == [], "ignored SIGTERM: %s" % (
        cluster.forced_kills,)
    assert cluster.exits == [], "exited before the restart: %s" % (
        cluster.exits,)
    ddb = cluster.client()
    for i in range(200):
        got = ddb.get_item(TableName=name, Key={"pk": item_of(i)["pk"]},
                           ConsistentRead=True)
        assert got.get("Item") == item_of(i), i
    t = ddb.describe_table(TableName=name)["Table"]
    assert t["TableStatus"] == "ACTIVE"
    assert t["ItemCount"] == 200
    assert t["TableSizeBytes"] == size_before > 0
    assert sum(counts(cluster, name).values()) == 200


def cut_handshakes(path, times=5):
    """Connects to the Unix socket at path and closes at once, `times`
    times: a peer that leaves during nng's handshake, as a process killed
    while it connects does."""
    import socket
    for _ in range(times):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(path)
        finally:
            s.close()
        time.sleep(0.02)


@pytest.mark.processes
def test_a_node_whose_handshakes_were_cut_is_reached_again(cluster, ddb):
    """nng 1.5.2 stops taking connections on a listener once a peer left
    in the middle of the handshake (its issue #1518): dialers believe they
    are connected and nothing they send is read. Each process guards its
    listeners (proto/bus_guard.c) and makes such a one again. Node 1's
    survey and seam sockets have their handshakes cut; then the router
    starts afresh (its survey dialer must connect to node 1 again) and a
    new table is assigned to every node (the catalog node's seam calls to
    node 1) and written and read through."""
    cluster.require_processes()
    # This module's cluster runs its nodes on ipc:// addresses.
    assert os.path.exists(os.path.join(cluster.dir, "node1.ipc.survey"))
    for sock in ("node1.ipc.survey", "node1.ipc.peer"):
        cut_handshakes(os.path.join(cluster.dir, sock))
    cluster.kill_router(0)
    t0 = time.monotonic()
    cluster.start_router(0, timeout=40.0)
    took = time.monotonic() - t0
    name = cluster.make_table("cut")
    ddb = cluster.client()
    for i in range(100):
        ddb.put_item(TableName=name, Item=item_of(i))
    assert sum(counts(cluster, name).values()) == 100
    for i in range(100):
        got = ddb.get_item(TableName=name, Key={"pk": item_of(i)["pk"]},
                           ConsistentRead=True)
        assert got.get("Item") == item_of(i), i
    assert took < 30, "the router saw every node up after %.1f s" % took


@pytest.mark.processes
def test_every_node_thread_runs_under_sched_batch(cluster, ddb):
    """kv-node sets SCHED_BATCH before it starts any thread, so that all
    of them, RocksDB's included, have it (docs/design-notes.md, "Nodes do
    not preempt")."""
    cluster.require_processes()
    for n in cluster.nodes:
        tids = os.listdir("/proc/%d/task" % n.p.pid)
        assert len(tids) > 3, tids
        policies = {int(t): os.sched_getscheduler(int(t)) for t in tids}
        assert set(policies.values()) == {os.SCHED_BATCH}, (n.name,
                                                             policies)


@pytest.mark.processes
def test_counters_are_exact_after_every_node_is_killed(cluster, ddb):
    """Item counts and sizes are kept in memory and saved at a clean stop
    (node/part.h); after kill -9 each node counts its items again."""
    cluster.require_processes()
    name = "recount-" + uuid.uuid4().hex[:8]
    make_table(ddb, name)
    for i in range(120):
        ddb.put_item(TableName=name, Item=item_of(i))
    for i in range(0, 120, 3):
        ddb.delete_item(TableName=name, Key={"pk": item_of(i)["pk"]})
    for i in range(1, 120, 3):
        ddb.put_item(TableName=name, Item=dict(item_of(i),
                                               big={"S": "x" * (i * 10)}))
    for i in range(2, 120, 6):
        ddb.update_item(TableName=name, Key={"pk": item_of(i)["pk"]},
                        UpdateExpression="ADD n :one REMOVE s",
                        ExpressionAttributeValues={":one": {"N": "1"}})
    before = ddb.describe_table(TableName=name)["Table"]
    assert before["ItemCount"] == 80
    assert before["TableSizeBytes"] > 0
    parts_before = counts(cluster, name)
    owners = {p["node"] for p in cluster.table_partitions(name)}
    recounts = recount_lines(cluster)

    for i in range(len(cluster.nodes)):
        cluster.kill_node(i)
    for n in cluster.nodes:
        n.start()
    cluster.wait_ready()

    after = ddb.describe_table(TableName=name)["Table"]
    assert (after["ItemCount"], after["TableSizeBytes"]) == (
        before["ItemCount"], before["TableSizeBytes"])
    assert counts(cluster, name) == parts_before
    now = recount_lines(cluster)
    for i in owners:
        assert now[i] == recounts[i] + 1, (i, recounts, now)
    # Writes after the recount keep counting from the right base.
    ddb.delete_item(TableName=name, Key={"pk": item_of(1)["pk"]})
    ddb.put_item(TableName=name, Item=item_of(0))
    ddb.put_item(TableName=name, Item=item_of(3))
    assert ddb.describe_table(TableName=name)["Table"]["ItemCount"] == 81


# ---- (b) a killed node ----

@pytest.mark.processes
def test_a_killed_node_fails_only_its_partitions_until_restarted(
        cluster, ddb):
    cluster.require_processes()
    name = "kill-" + uuid.uuid4().hex[:8]
    make_table(ddb, name)
    parts = cluster.table_partitions(name)
    owner = {p["part"]: p["node"] for p in parts}
    victim = next(p["node"] for p in parts if p["node"] != 0)
    keys = ["k%03d" % i for i in range(40)]
    where = partition_of_each(cluster, ddb, name, keys)
    down = [k for k in keys if owner[where[k]] == victim]
    up = [k for k in keys if owner[where[k]] != victim]
    assert down and up, "40 keys should reach both kinds of partition"

    cluster.kill_node(victim)
    try:
        for k in down[5:]:
            with pytest.raises(ClientError) as ei:
                ddb.get_item(TableName=name, Key={"pk": {"S": k}})
            assert ei.value.response["ResponseMetadata"][
                "HTTPStatusCode"] in (500, 503)
        for k in down[:5]:
            for call, kw in [
                    (ddb.get_item, {"Key": {"pk": {"S": k}}}),
                    (ddb.put_item, {"Item": {"pk": {"S": k},
                                             "v": {"S": "lost"}}}),
                    (ddb.delete_item, {"Key": {"pk": {"S": k}}})]:
                start = time.monotonic()
                with pytest.raises(ClientError) as ei:
                    call(TableName=name, **kw)
                took = time.monotonic() - start
                r = ei.value.response
                assert r["ResponseMetadata"]["HTTPStatusCode"] in (
                    500, 503), r
                assert r["Error"]["Code"] in (
                    "ServiceUnavailable", "InternalServerError"), r
                # A router that connected less than 3 s ago waits its
                # whole 5 s call deadline; an older one gives up at once.
                assert took < 7.0, "%s took %.1fs" % (call.__name__, took)
        for k in up:
            got = ddb.get_item(TableName=name, Key={"pk": {"S": k}})
            assert got["Item"] == {"pk": {"S": k}}
            ddb.put_item(TableName=name, Item={"pk": {"S": k},
                                               "v": {"S": "while-down"}})
        # The control plane still answers (node 0 holds the catalog).
        assert name in ddb.list_tables()["TableNames"]
    finally:
        cluster.start_node(victim)

    def all_readable():
        for k in down:
            ddb.get_item(TableName=name, Key={"pk": {"S": k}})
        return True
    wait_until(all_readable, 10, 0.1, "the restarted node to serve")
    for k in down:
        # The refused writes did not happen; the old items are there.
        got = ddb.get_item(TableName=name, Key={"pk": {"S": k}})
        assert got["Item"] == {"pk": {"S": k}}, k
        ddb.put_item(TableName=name, Item={"pk": {"S": k},
                                           "v": {"S": "after"}})
        assert ddb.get_item(TableName=name, Key={"pk": {"S": k}})[
            "Item"]["v"] == {"S": "after"}
    for k in up:
        assert ddb.get_item(TableName=name, Key={"pk": {"S": k}})[
            "Item"]["v"] == {"S": "while-down"}
    assert ddb.describe_table(TableName=name)["Table"]["ItemCount"] == 40


# ---- (b2) a stopped node ----

INTERNAL_ERROR_TYPE = "com.amazonaws.dynamodb.v20120810#InternalServerError"


def http_conn(cluster, timeout):
    """A keep-alive HTTP connection to the router (each one is a client
    connection of its own there)."""
    u = urllib.parse.urlparse(cluster.endpoint)
    return http.client.HTTPConnection(u.hostname, u.port, timeout=timeout)


def raw_call(conn, target, body):
    """One DynamoDB request on conn: (HTTP status, JSON body, seconds)."""
    start = time.monotonic()
    conn.request("POST", "/", json.dumps(body).encode(), {
        "Content-Type": "application/x-amz-json-1.0",
        "X-Amz-Target": "DynamoDB_20120810." + target})
    r = conn.getresponse()
    data = r.read()
    return r.status, json.loads(data), time.monotonic() - start


def pv(k, v):
    return {"pk": {"S": k}, "v": {"S": v}}


@pytest.mark.processes
def test_a_stopped_node_holds_up_only_its_own_partitions(cluster, ddb):
    """SIGSTOP a node (up, accepting, silent): the router's event loop
    keeps serving the other nodes' keys at once, fails the stopped node's
    calls with a 500 after the 5 s call timeout instead of hanging, and
    once the node runs again serves its keys with their own answers (the
    timed-out connection's late answers are never matched to new
    calls)."""
    cluster.require_processes()
    victim = 1
    name = "stop-" + uuid.uuid4().hex[:8]
    make_table(ddb, name)
    parts = cluster.table_partitions(name)
    owner = {p["part"]: p["node"] for p in parts}
    assert victim in owner.values() and set(owner.values()) - {victim}, (
        owner)
    keys = ["s%03d" % i for i in range(40)]
    where = partition_of_each(cluster, ddb, name, keys)
    held = [k for k in keys if owner[where[k]] == victim]
    free = [k for k in keys if owner[where[k]] != victim]
    assert len(held) >= 8 and free, (where, owner)
    # One key on each of the other nodes that own a partition.
    others = {}
    for k in free:
        others.setdefault(owner[where[k]], k)
    for k in keys:
        ddb.put_item(TableName=name, Item=pv(k, "before-" + k))

    ended = {}

    def wait_on_stopped(tag, k):
        conn = http_conn(cluster, 20)
        try:
            st, body, took = raw_call(conn, "GetItem", {
                "TableName": name, "Key": {"pk": {"S": k}},
                "ConsistentRead": True})
            ended[tag] = (st, body, took, time.monotonic())
        except Exception as e:  # noqa: BLE001 - asserted below
            ended[tag] = e
        finally:
            conn.close()

    latest = {}       # free key -> its last written value
    slow = []         # (op, key, seconds) of answers that took >= 1 s
    rounds = 0
    second = None
    # Meanwhile other connections keep reads of the other nodes' keys in
    # flight, so that some are pending when the stopped node's calls fail.
    spare = [k for k in free if k not in others.values()]
    assert spare, free
    busy_stop = threading.Event()
    busy_done = []
    busy_bad = []
    busy_throttled = []

    def busy(t):
        conn = http_conn(cluster, 15)
        n = 0
        try:
            while not busy_stop.is_set():
                f = spare[(t + n) % len(spare)]
                st, body, took = raw_call(conn, "GetItem", {
                    "TableName": name, "Key": {"pk": {"S": f}},
                    "ConsistentRead": True})
                # Read as fast as they go, these can pass the partition's
                # read ceiling: a throttle answered at once is an answer.
                if (st == 400 and took < 1.0 and body.get(
                        "__type", "").endswith("#ThrottlingException")):
                    busy_throttled.append(f)
                elif (st != 200 or body.get("Item") != pv(f, "before-" + f)
                        or took >= 1.0):
                    busy_bad.append((f, st, body, took))
                n += 1
        except Exception as e:  # noqa: BLE001 - reported below
            busy_bad.append(("exception", repr(e)))
        finally:
            conn.close()
            busy_done.append(n)
    busy_threads = [threading.Thread(target=busy, args=(t,), daemon=True)
                    for t in range(3)]
    errors = []
    back = {}         # key -> seconds from the resume to its right answer
    resumed = []      # when the node was resumed
    readers = []

    def read_back(k):
        """Reads k until it answers (a 5xx is retried until 5 s after the
        resume: the first calls may meet the old connection; a wrong item
        is not)."""
        conn = http_conn(cluster, 10)
        try:
            while True:
                st, body, _ = raw_call(conn, "GetItem", {
                    "TableName": name, "Key": {"pk": {"S": k}},
                    "ConsistentRead": True})
                if st == 200:
                    if body.get("Item") != pv(k, "before-" + k):
                        errors.append(("GetItem", k, body))
                    back[k] = time.monotonic() - resumed[0]
                    return
                if st < 500 or (resumed and
                                time.monotonic() - resumed[0] > 5.0):
                    errors.append(("GetItem", k, st, body))
                    return
                time.sleep(0.1)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(("GetItem", k, repr(e)))
        finally:
            conn.close()

    cluster.stop_node(victim)
    try:
        t0 = time.monotonic()
        first = threading.Thread(target=wait_on_stopped,
                                 args=("first", held[0]), daemon=True)
        first.start()
        for th in busy_threads:
            th.start()
        # Until the stopped node's call ends (10 s at most), the other
        # nodes' keys answer at once, with the values just written.
        while first.is_alive() and time.monotonic() - t0 < 10:
            for node, k in sorted(others.items()):
                v = "during-%d-%s" % (rounds, k)
                s = time.monotonic()
                ddb.put_item(TableName=name, Item=pv(k, v))
                took_put = time.monotonic() - s
                s = time.monotonic()
                got = ddb.get_item(TableName=name, Key={"pk": {"S": k}},
                                   ConsistentRead=True)
                took_get = time.monotonic() - s
                latest[k] = v
                assert got.get("Item") == pv(k, v), (k, got)
                if took_put >= 1.0:
                    slow.append(("PutItem", k, took_put))
                if took_get >= 1.0:
                    slow.append(("GetItem", k, took_get))
            rounds += 1
            # A second call to the stopped node, 2 s after the first: it
            # fails with the first, whose deadline closes the connection.
            if second is None and time.monotonic() - t0 >= 2.0:
                second = threading.Thread(target=wait_on_stopped,
                                          args=("second", held[1]),
                                          daemon=True)
                second.start()
            time.sleep(0.05)
        first.join(1)
        if second is not None:
            second.join(1)
        # Until just after the stopped node's calls have failed.
        time.sleep(0.3)
        busy_stop.set()
        for th in busy_threads:
            th.join(5)
        assert not slow, "other nodes' keys were held up: %r" % (slow,)
        assert busy_bad == [], busy_bad[:10]
        assert sum(busy_done) > len(busy_throttled), (
            "the other nodes' keys were only throttled", sum(busy_done))
        assert len(busy_done) == 3 and min(busy_done) >= 50, busy_done
        assert rounds >= 10, "only %d rounds during the wait" % rounds
        assert second is not None
        for tag in ("first", "second"):
            r = ended.get(tag)
            assert r is not None and not isinstance(r, Exception), (
                "the %s call to the stopped node did not end within %.1fs: "
                "%r" % (tag, time.monotonic() - t0, r))
            st, body, took, _ = r
            assert st == 500, (tag, st, body)
            assert body.get("__type") == INTERNAL_ERROR_TYPE, (tag, body)
            assert "did not answer in time" in body.get("message", ""), (
                tag, body)
        took_first = ended["first"][2]
        assert 4.0 <= took_first <= 9.0, "first call failed after %.2fs" % (
            took_first,)
        # Failed together: the link's oldest call timed out, all went.
        assert abs(ended["second"][3] - ended["first"][3]) < 1.0, ended
        assert ended["second"][2] < took_first - 1.0, ended
        # Still stopped: new calls to it go on a new connection. Those
        # wait for the node, on keys other than the timed-out calls', so
        # that an answer left over from the old connection would be
        # matched to one of them and seen as the wrong item.
        for k in held[2:8]:
            th = threading.Thread(target=read_back, args=(k,), daemon=True)
            th.start()
            readers.append(th)
        time.sleep(0.3)
    finally:
        busy_stop.set()
        cluster.cont_node(victim)
        resumed.append(time.monotonic())

    # Resumed: calls to the node succeed again within 5 s, each with its
    # own answer.
    for th in readers:
        th.join(10)
    assert not any(th.is_alive() for th in readers), "read_back hung"
    for k in held[:2]:
        read_back(k)
    assert errors == [], errors[:10]
    assert sorted(back) == sorted(held[:8]), back
    assert max(back.values()) < 5.0, back
    for k in held:
        ddb.put_item(TableName=name, Item=pv(k, "after-" + k))
        got = ddb.get_item(TableName=name, Key={"pk": {"S": k}},
                           ConsistentRead=True)
        assert got.get("Item") == pv(k, "after-" + k), (k, got)

    # Several client connections at once, so that calls to each node are
    # pipelined on the router's one connection and matched in order.
    def run_threads(fn, args, timeout):
        threads = [threading.Thread(target=fn, args=(a,), daemon=True)
                   for a in args]
        for th in threads:
            th.start()
        for th in threads:
            th.join(timeout)
        assert not any(th.is_alive() for th in threads), (
            "%s threads hung" % fn.__name__)

    def hammer(t):
        k = held[t]
        conn = http_conn(cluster, 15)
        try:
            for i in range(30):
                v = "t%d-%d" % (t, i)
                st, body, _ = raw_call(conn, "PutItem", {
                    "TableName": name, "Item": pv(k, v),
                    "ReturnValues": "ALL_OLD"})
                old = "after-" + k if i == 0 else "t%d-%d" % (t, i - 1)
                if st != 200 or body.get("Attributes") != pv(k, old):
                    errors.append(("PutItem", k, i, st, body))
                st, body, _ = raw_call(conn, "GetItem", {
                    "TableName": name, "Key": {"pk": {"S": k}},
                    "ConsistentRead": True})
                if st != 200 or body.get("Item") != pv(k, v):
                    errors.append(("GetItem", k, i, st, body))
                f = free[(t + i) % len(free)]
                st, body, _ = raw_call(conn, "GetItem", {
                    "TableName": name, "Key": {"pk": {"S": f}},
                    "ConsistentRead": True})
                want = pv(f, latest.get(f, "before-" + f))
                if st != 200 or body.get("Item") != want:
                    errors.append(("GetItem", f, i, st, body))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(("exception", k, repr(e)))
        finally:
            conn.close()
    run_threads(hammer, range(6), 30)
    assert errors == [], errors[:10]

    # The cluster is whole for the tests after this one.
    assert all(n.alive() for n in cluster.nodes) and cluster.router.alive()
    cluster.wait_ready(10)
    assert ddb.describe_table(TableName=name)["Table"]["ItemCount"] == 40


# ---- (c) stale epochs ----

@pytest.mark.processes
def test_requests_succeed_across_epoch_bumps(cluster, ddb):
    name = "epoch-" + uuid.uuid4().hex[:8]
    make_table(ddb, name, range_key=True)
    items = [{"pk": {"S": "e%02d" % i}, "sk": {"N": str(i)},
              "v": {"N": "0"}} for i in range(32)]
    for it in items:
        ddb.put_item(TableName=name, Item=it)
    before = {p["part"]: p["epoch"] for p in cluster.table_partitions(name)}
    bumps = {0: 3, 1: 1, 2: 2, 3: 1}
    for rnd in range(3):
        for part, times in bumps.items():
            if rnd >= times:
                continue
            out = cluster.admin("bump-epoch", name, part)
            want = before[part] + rnd + 1
            assert out.strip() == "%s partition %d: epoch %d" % (
                name, part, want), out
            # Let the owner hear of the new epoch while the router's
            # snapshot (refreshed once a second) may still be the old one.
            time.sleep(0.05)
            for it in items:
                key = {"pk": it["pk"], "sk": it["sk"]}
                it["v"] = {"N": str(rnd * 10 + part)}
                ddb.put_item(TableName=name, Item=it)
                assert ddb.get_item(TableName=name, Key=key)["Item"] == it
    after = {p["part"]: p["epoch"] for p in cluster.table_partitions(name)}
    assert after == {p: before[p] + bumps[p] for p in before}
    # The owners hold the catalog's epochs (they were told, and refuse the
    # old ones, which is what made the router refresh and retry above).
    deadline = time.time() + 5
    while True:
        parts = cluster.table_partitions(name)
        if all(p["owner_epoch"] == p["epoch"] for p in parts):
            break
        assert time.time() < deadline, parts
        time.sleep(0.05)
    assert ddb.describe_table(TableName=name)["Table"]["ItemCount"] == 32


@pytest.mark.processes
def test_bump_epoch_of_unknown_table_or_partition_fails(cluster, ddb):
    name = "epoch2-" + uuid.uuid4().hex[:8]
    make_table(ddb, name)
    out = cluster.admin("bump-epoch", "no-such-table-x", 0, check=False)
    assert out == ""
    with pytest.raises(AssertionError, match="bump-epoch failed"):
        cluster.admin("bump-epoch", "no-such-table-x", 0)
    with pytest.raises(AssertionError, match="bump-epoch failed"):
        cluster.admin("bump-epoch", name, 99)
    # The failed bumps changed nothing.
    assert [p["epoch"] for p in cluster.table_partitions(name)] == [1] * 4


# ---- (d) delete and re-create ----

def test_deleted_table_disappears_and_comes_back_empty(cluster, ddb):
    name = "delete-" + uuid.uuid4().hex[:8]
    first = make_table(ddb, name)
    for i in range(10):
        ddb.put_item(TableName=name, Item={"pk": {"S": "d%d" % i}})
    d = ddb.delete_table(TableName=name)["TableDescription"]
    assert d["TableName"] == name
    assert d["TableStatus"] == "DELETING"

    def gone():
        return name not in ddb.list_tables(Limit=100)["TableNames"]
    wait_until(gone, 5, 0.1, "%s to leave ListTables" % name)
    with pytest.raises(ClientError) as ei:
        ddb.describe_table(TableName=name)
    assert ei.value.response["Error"]["Code"] == "ResourceNotFoundException"
    with pytest.raises(ClientError) as ei:
        ddb.get_item(TableName=name, Key={"pk": {"S": "d0"}})
    assert ei.value.response["Error"]["Code"] == "ResourceNotFoundException"
    if cluster.config is not None:
        assert name not in cluster.status()["tables"]

    second = make_table(ddb, name)
    assert second["TableId"] != first["TableId"]
    for i in range(10):
        got = ddb.get_item(TableName=name, Key={"pk": {"S": "d%d" % i}},
                           ConsistentRead=True)
        assert "Item" not in got, got
    t = ddb.describe_table(TableName=name)["Table"]
    assert (t["ItemCount"], t["TableSizeBytes"]) == (0, 0)
    ddb.put_item(TableName=name, Item={"pk": {"S": "new"}})
    assert ddb.describe_table(TableName=name)["Table"]["ItemCount"] == 1


def test_deleting_a_table_twice(cluster, ddb):
    name = "delete2-" + uuid.uuid4().hex[:8]
    make_table(ddb, name)
    ddb.delete_table(TableName=name)
    # Either still DELETING (ResourceInUse) or already gone (NotFound).
    with pytest.raises(ClientError) as ei:
        ddb.delete_table(TableName=name)
    r = ei.value.response
    assert r["ResponseMetadata"]["HTTPStatusCode"] == 400
    if r["Error"]["Code"] == "ResourceInUseException":
        assert r["Error"]["Message"] == (
            "Attempt to change a resource which is still in use: Table is "
            "being deleted: %s" % name)
    else:
        assert r["Error"] == {
            "Code": "ResourceNotFoundException",
            "Message": "Requested resource not found: Table: %s not found"
            % name}


# ---- (e) ListTables pages ----

def test_list_tables_pages_with_limit_and_exclusive_start(cluster, ddb):
    prefix = "page-%s-" % uuid.uuid4().hex[:8]
    names = [prefix + c for c in "0123456"]
    for n in reversed(names):
        ddb.create_table(
            TableName=n,
            AttributeDefinitions=[{"AttributeName": "pk",
                                   "AttributeType": "S"}],
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            BillingMode="PAY_PER_REQUEST")
    for limit in (1, 2, 3, 7):
        seen, start, pages = [], prefix, 0
        while True:
            r = ddb.list_tables(Limit=limit, ExclusiveStartTableName=start)
            pages += 1
            page = r["TableNames"]
            assert len(page) <= limit
            mine = [n for n in page if n.startswith(prefix)]
            seen += mine
            if len(mine) < len(page) or "LastEvaluatedTableName" not in r:
                break
            assert r["LastEvaluatedTableName"] == page[-1]
            start = r["LastEvaluatedTableName"]
        assert seen == names, (limit, seen)
        assert pages >= -(-7 // limit)
    r = ddb.list_tables(Limit=2, ExclusiveStartTableName=names[4])
    assert r["TableNames"][:2] == names[5:7]
    # boto3's paginator follows LastEvaluatedTableName.
    pager = ddb.get_paginator("list_tables")
    listed = []
    for page in pager.paginate(PaginationConfig={"PageSize": 2}):
        listed += page["TableNames"]
    assert [n for n in listed if n.startswith(prefix)] == names
    assert listed == sorted(listed)
    assert listed == ddb.list_tables()["TableNames"] or len(listed) > 100


def test_list_tables_limit_is_checked(cluster, raw_ddb):
    for limit, bound in [(0, "greater than or equal to 1"),
                         (101, "less than or equal to 100")]:
        with pytest.raises(ClientError) as ei:
            raw_ddb.list_tables(Limit=limit)
        assert ei.value.response["Error"] == {
            "Code": "ValidationException",
            "Message": "1 validation error detected: Value '%d' at 'limit' "
                       "failed to satisfy constraint: Member must have "
                       "value %s" % (limit, bound)}


# ---- (f) DescribeTable through the lifecycle ----

UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}"
                     r"-[0-9a-f]{12}$")


def test_describe_table_right_after_create(cluster, ddb):
    name = "describe-" + uuid.uuid4().hex[:8]
    created = ddb.create_table(
        TableName=name,
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "sk", "AttributeType": "N"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                   {"AttributeName": "sk", "KeyType": "RANGE"}],
        BillingMode="PROVISIONED",
        ProvisionedThroughput={"ReadCapacityUnits": 3,
                               "WriteCapacityUnits": 4})["TableDescription"]
    t = ddb.describe_table(TableName=name)["Table"]
    assert t["TableStatus"] in ("CREATING", "ACTIVE")
    statuses = {t["TableStatus"]}

    def active():
        s = ddb.describe_table(TableName=name)["Table"]
        statuses.add(s["TableStatus"])
        return s if s["TableStatus"] == "ACTIVE" else None
    t = wait_until(active, 5, 0.05, "%s to become ACTIVE" % name)
    assert statuses <= {"CREATING", "ACTIVE"}
    assert t["TableName"] == name
    assert t["TableArn"] == \
        "arn:aws:dynamodb:us-east-1:000000000000:table/" + name
    assert UUID_RE.match(t["TableId"]), t["TableId"]
    assert t["TableId"] == created["TableId"]
    assert t["BillingModeSummary"]["BillingMode"] == "PROVISIONED"
    pt = t["ProvisionedThroughput"]
    assert (pt["ReadCapacityUnits"], pt["WriteCapacityUnits"],
            pt["NumberOfDecreasesToday"]) == (3, 4, 0)
    assert isinstance(t["CreationDateTime"], datetime.datetime)
    age = (datetime.datetime.now(datetime.timezone.utc) -
           t["CreationDateTime"]).total_seconds()
    assert -5 < age < 60, age
    assert (t["ItemCount"], t["TableSizeBytes"]) == (0, 0)
    assert t["KeySchema"] == [{"AttributeName": "pk", "KeyType": "HASH"},
                              {"AttributeName": "sk", "KeyType": "RANGE"}]

    ondemand = "describe-od-" + uuid.uuid4().hex[:8]
    make_table(ddb, ondemand)
    t = ddb.describe_table(TableName=ondemand)["Table"]
    assert t["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    pt = t["ProvisionedThroughput"]
    assert (pt["ReadCapacityUnits"], pt["WriteCapacityUnits"]) == (0, 0)
    assert t["TableId"] != created["TableId"]


# ---- (g) hash routing is stable ----

@pytest.mark.processes
def test_keys_stay_in_their_partitions_across_restarts(cluster, ddb):
    cluster.require_processes()
    name = "route-" + uuid.uuid4().hex[:8]
    make_table(ddb, name)
    keys = ["r%02d" % i for i in range(24)]
    where = partition_of_each(cluster, ddb, name, keys)
    assert len(set(where.values())) > 1, "24 keys in one partition: %r" % (
        where,)
    by_part = counts(cluster, name)

    cluster.restart_all()
    ddb = cluster.client()
    assert counts(cluster, name) == by_part
    # Deleting each key lowers the count of the partition it went to.
    before = by_part
    for k in keys:
        r = ddb.delete_item(TableName=name, Key={"pk": {"S": k}},
                            ReturnValues="ALL_OLD")
        assert r["Attributes"] == {"pk": {"S": k}}
        after = counts(cluster, name)
        assert after[where[k]] == before[where[k]] - 1, (k, before, after)
        before = after
    assert sum(before.values()) == 0
    # A new table after the restart hashes the same keys the same way.
    other = "route2-" + uuid.uuid4().hex[:8]
    make_table(ddb, other)
    assert partition_of_each(cluster, ddb, other, keys) == where
