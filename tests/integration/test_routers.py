"""test_routers.py — two routers sharing one HTTP port (SO_REUSEPORT, the
kernel spreads new connections over them):

- kv-admin status lists both routers, on the same address, with distinct
  pids (those of the processes the fixture started);
- one router killed with SIGKILL in the middle of a write load (8
  writers on keep-alive connections): every write that was acknowledged
  (HTTP 200) is readable afterwards with its value; writes go on being
  acknowledged after the kill, on connections opened after it, and no
  connection opened after it fails; 20 fresh connections in a row all
  get GET / 200 (the dead router's listening socket is gone, so the
  kernel gives every new connection to the live one); kv-admin status
  lists the killed router DOWN with a reason and the other up;
- the router started again: status lists both up with distinct pids, and
  new connections reach both again (each one's request count rises).

The writers speak DynamoDB's JSON over http.client, one connection at a
time each, so that what was acknowledged and what was not is exactly what
the router answered; a connection that fails is replaced by a new one.

Every test kills, starts or inspects the cluster's processes
(`processes` mark); the module builds its own cluster (two routers) with
the same fixture pattern as conftest.py.
"""

import http.client
import json
import re
import sys
import threading
import time
import urllib.parse
import uuid

import pytest

from cluster import wait_until

pytestmark = pytest.mark.processes

# conftest.py's cluster, with two routers sharing the port.
CLUSTER_ROUTERS = 2
WRITERS = 8
# Each writer's pace (writes per second), so that the load stays modest on
# two shared cores; and how many writes it sends on one connection before
# it opens the next, so that both routers keep receiving connections.
WRITER_RATE = 100
PER_CONNECTION = 40
BEFORE_KILL = 1.5   # seconds of writes before the kill
AFTER_KILL = 2.0    # and after it
PREFIX = "DynamoDB_20120810."
JSON_TYPE = "application/x-amz-json-1.0"


@pytest.fixture(scope="module")
def table(cluster):
    name = cluster.make_table("routers")
    return name


def address(cluster):
    u = urllib.parse.urlparse(cluster.endpoint)
    return u.hostname, u.port


def call(conn, target, body):
    """One DynamoDB request on conn: (status, decoded JSON body)."""
    conn.request("POST", "/", json.dumps(body).encode(), {
        "Content-Type": JSON_TYPE, "X-Amz-Target": PREFIX + target})
    resp = conn.getresponse()
    data = resp.read()
    return resp.status, json.loads(data) if data else None


def routers_in_status(cluster):
    """{index: router entry} (cluster.parse_status) and the raw text."""
    text = cluster.admin("status", check=False)
    from cluster import parse_status
    return {r["index"]: r for r in parse_status(text)["routers"]}, text


def router_line(text, i):
    for line in text.splitlines()[text.splitlines().index("routers:") + 1:]:
        f = line.split()
        if f and f[0] == str(i):
            return line
    return None


def get_on_new_connection(cluster, path):
    """GET path on a new connection: (status, body)."""
    host, port = address(cluster)
    conn = http.client.HTTPConnection(host, port, timeout=10)
    try:
        conn.request("GET", path)
        r = conn.getresponse()
        return r.status, r.read()
    finally:
        conn.close()


def fresh_requests(cluster, table, n):
    """n GetItem requests, each on a new connection; all must answer
    200."""
    host, port = address(cluster)
    for k in range(n):
        conn = http.client.HTTPConnection(host, port, timeout=10)
        try:
            status, body = call(conn, "GetItem", {
                "TableName": table, "Key": {"pk": {"S": "probe-%d" % k}}})
        finally:
            conn.close()
        assert status == 200, (status, body)


class Writer(threading.Thread):
    """Writes distinct keys w<n>-<i> with PutItem, paced, opening a new
    connection every PER_CONNECTION writes and after every failure.
    acked: (key, value, started, connection opened) of each 200 answer;
    unknown: (key, value, started, opened, error) of each request that
    raised (the write may or may not have happened); refused: answers
    other than 200."""

    def __init__(self, n, cluster, table, stop):
        super().__init__(name="writer-%d" % n, daemon=True)
        self.n, self.table, self.stop = n, table, stop
        self.host, self.port = address(cluster)
        self.acked, self.unknown, self.refused = [], [], []
        self.connections = 0

    def run(self):
        conn, opened, used = None, 0.0, 0
        i = 0
        next_at = time.monotonic()
        while not self.stop.is_set():
            now = time.monotonic()
            if now < next_at:
                time.sleep(next_at - now)
            next_at += 1.0 / WRITER_RATE
            key = "w%d-%06d" % (self.n, i)
            value = "value of %s %s" % (key, uuid.uuid4().hex[:8])
            i += 1
            if conn is not None and used >= PER_CONNECTION:
                conn.close()
                conn = None
            if conn is None:
                conn = http.client.HTTPConnection(self.host, self.port,
                                                  timeout=10)
                opened, used = time.monotonic(), 0
                self.connections += 1
            used += 1
            started = time.monotonic()
            try:
                status, body = call(conn, "PutItem", {
                    "TableName": self.table,
                    "Item": {"pk": {"S": key}, "v": {"S": value}}})
            except (OSError, http.client.HTTPException, ValueError) as e:
                self.unknown.append((key, value, started, opened, repr(e)))
                conn.close()
                conn = None
                continue
            if status == 200:
                self.acked.append((key, value, started, opened))
            else:
                self.refused.append((key, status, body))
        if conn is not None:
            conn.close()


def test_status_lists_both_routers_with_distinct_pids(cluster):
    cluster.require_processes()
    rs, text = routers_in_status(cluster)
    assert sorted(rs) == list(range(CLUSTER_ROUTERS)), text
    assert all(r["up"] for r in rs.values()), text
    assert len({r["pid"] for r in rs.values()}) == CLUSTER_ROUTERS, text
    assert {i: r["pid"] for i, r in rs.items()} == {
        i: p.p.pid for i, p in enumerate(cluster.routers)}, text
    assert {r["listen"] for r in rs.values()} == {
        "127.0.0.1:%d" % cluster.port}, text


def test_kill_one_router_during_writes(cluster, table, capsys):
    cluster.require_processes()
    stop = threading.Event()
    writers = [Writer(n, cluster, table, stop) for n in range(WRITERS)]
    t0 = time.monotonic()
    for w in writers:
        w.start()
    try:
        # Both routers hold some of the writers' connections at the kill.
        def both_busy():
            rs, _ = routers_in_status(cluster)
            return time.monotonic() - t0 >= BEFORE_KILL and all(
                rs[i]["up"] and rs[i]["connections"] >= 1
                for i in range(CLUSTER_ROUTERS)) and rs
        before = wait_until(both_busy, 15, 0.05,
                            "both routers to hold writers' connections")
        cluster.kill_router(0)
        t_dead = time.monotonic()
        assert not cluster.routers[0].alive()
        time.sleep(AFTER_KILL)  # the load goes on meanwhile
    finally:
        stop.set()
        for w in writers:
            w.join(30)
    assert not any(w.is_alive() for w in writers), "a writer hangs"

    acked = [a for w in writers for a in w.acked]
    unknown = [u for w in writers for u in w.unknown]
    refused = [r for w in writers for r in w.refused]
    acked_before = [a for a in acked if a[2] < t_dead]
    acked_after = [a for a in acked if a[2] >= t_dead]
    new_conn_acks = [a for a in acked if a[3] >= t_dead]
    unknown_new_conn = [u for u in unknown if u[3] >= t_dead]

    # Every acknowledged write is there, with its value: a fresh
    # connection, consistent reads. Writes that failed may or may not have
    # happened, but if they did, with their own value.
    host, port = address(cluster)
    conn = http.client.HTTPConnection(host, port, timeout=10)
    lost, wrong = [], []
    try:
        for key, value, _, _ in acked:
            status, body = call(conn, "GetItem", {
                "TableName": table, "Key": {"pk": {"S": key}},
                "ConsistentRead": True})
            assert status == 200, (key, status, body)
            item = body.get("Item")
            if item is None:
                lost.append(key)
            elif item != {"pk": {"S": key}, "v": {"S": value}}:
                wrong.append((key, item))
        unknown_written = 0
        for key, value, _, _, _ in unknown:
            status, body = call(conn, "GetItem", {
                "TableName": table, "Key": {"pk": {"S": key}},
                "ConsistentRead": True})
            assert status == 200, (key, status, body)
            item = body.get("Item")
            if item is not None:
                unknown_written += 1
                assert item == {"pk": {"S": key}, "v": {"S": value}}, item
    finally:
        conn.close()

    lines = [
        "%d writers, %d writes/s each, router 0 killed %.2f s after the "
        "start (it held %d of their connections, router 1 %d), writes went "
        "on %.1f s more" % (WRITERS, WRITER_RATE, t_dead - t0,
                            before[0]["connections"],
                            before[1]["connections"], AFTER_KILL),
        "acknowledged: %d before the kill, %d after it (%d on connections "
        "opened after it)" % (len(acked_before), len(acked_after),
                              len(new_conn_acks)),
        "failed (outcome unknown): %d, of which %d were written after all; "
        "%d on connections opened after the kill; refused answers: %d" % (
            len(unknown), unknown_written, len(unknown_new_conn),
            len(refused)),
        "connections opened by the writers: %d" % sum(
            w.connections for w in writers),
    ] + ["  error: %s" % u[4] for u in unknown[:10]]
    with capsys.disabled():
        sys.stdout.write("\n---- one of two routers killed during writes "
                         "----\n" + "\n".join(lines) + "\n")
    assert not lost, "%d acknowledged writes are gone: %s" % (
        len(lost), lost[:20])
    assert not wrong, wrong[:20]
    assert refused == [], refused[:10]
    assert len(acked_before) > 0
    # Writes kept succeeding after the kill, also on new connections, and
    # no connection made after the kill failed.
    assert len(acked_after) > 0
    assert len(new_conn_acks) > 0
    assert unknown_new_conn == [], unknown_new_conn[:10]

    # New connections all reach the live router.
    for k in range(20):
        status, body = get_on_new_connection(cluster, "/")
        assert status == 200 and body.startswith(b"healthy:"), (
            k, status, body)

    # kv-admin status: router 0 DOWN with a reason, router 1 up.
    rs, text = routers_in_status(cluster)
    assert not rs[0]["up"], text
    line0 = router_line(text, 0)
    assert re.search(r"\sDOWN\s+\((not reachable|no answer by the "
                     r"deadline)\)\s*$", line0), text
    assert rs[1]["up"] and rs[1]["pid"] == cluster.routers[1].p.pid, text


def test_a_restarted_router_takes_connections_again(cluster, table):
    cluster.require_processes()
    if cluster.routers[0].alive():  # the previous test did not get far
        cluster.kill_router(0)
    cluster.start_router(0)
    rs, text = routers_in_status(cluster)
    assert all(rs[i]["up"] for i in range(CLUSTER_ROUTERS)), text
    assert rs[0]["pid"] == cluster.routers[0].p.pid, text
    assert len({r["pid"] for r in rs.values()}) == CLUSTER_ROUTERS, text

    # Bursts of requests, each on a new connection, until both routers'
    # request counts rose (the kernel picks the router at random).
    base = {i: rs[i]["requests"] for i in range(CLUSTER_ROUTERS)}
    rose = {}
    for burst in range(10):
        fresh_requests(cluster, table, 20)
        rs, text = routers_in_status(cluster)
        rose = {i: rs[i]["requests"] - base[i] for i in range(CLUSTER_ROUTERS)}
        if all(v > 0 for v in rose.values()):
            break
    assert all(v > 0 for v in rose.values()), (rose, text)
