"""test_status.py — the status page (router/ops/ops_status.c), in a real
browser: headless Chromium (Debian's chromium) loads GET /status while
one partition of a table is written far past its ceiling; the page, as
the browser rendered it, must name every table and mark that partition,
and only that one, hot. Chromium also takes a screenshot, which
KV_STATUS_SCREENSHOT=PATH keeps (docs/status.png is one).
"""

import json
import os
import shutil
import tempfile
import threading
import urllib.request

from browser import render
from cluster import wait_until

# A low write ceiling, no burst credit: one client drives a partition
# past it.
CLUSTER_SETTINGS = ["partition-wcu 20", "burst-seconds 0"]


def status_json(cluster):
    with urllib.request.urlopen(cluster.endpoint + "/status.json",
                                timeout=10) as r:
        assert r.headers["Content-Type"] == "application/json"
        return json.loads(r.read())


def test_status_json_describes_the_cluster(cluster, ddb):
    name = cluster.make_table("statusjson")
    # A router that has just started may not have connected to every
    # node's survey address yet (nng redials a node that was not up
    # after a random wait of up to 500 ms), and the page says so; every
    # node is up within a few seconds.
    s = {}

    def all_up():
        s.update(status_json(cluster))
        return all(n["up"] for n in s["nodes"])
    wait_until(all_up, 5, 0.2, "the router to see every node up")
    assert len(s["nodes"]) == len(cluster.nodes)
    t = [t for t in s["tables"] if t["name"] == name][0]
    assert len(t["partitions"]) == cluster.partitions
    assert all("items" in p and "write_rate" in p for p in t["partitions"])
    with urllib.request.urlopen(cluster.endpoint + "/status",
                                timeout=10) as r:
        assert r.headers["Content-Type"].startswith("text/html")
        assert b"/status.json" in r.read()


def test_the_page_shows_tables_and_a_hot_partition(cluster, ddb):
    hot_table = cluster.make_table("hot")
    cold_table = cluster.make_table("cold")
    stop = threading.Event()

    def writer():
        c = cluster.client()
        i = 0
        while not stop.is_set():
            try:
                c.put_item(TableName=hot_table, Item={
                    "pk": {"S": "the-hot-key"}, "n": {"N": str(i)}})
            except Exception:  # noqa: BLE001 - throttled, as meant
                pass
            i += 1

    threads = [threading.Thread(target=writer) for _ in range(3)]
    for t in threads:
        t.start()
    out = tempfile.mkdtemp(prefix="kv-status-")
    try:
        # The hot partition's bucket is empty by now.
        def drained():
            with urllib.request.urlopen(cluster.endpoint + "/status.json",
                                        timeout=10) as r:
                s = json.loads(r.read())
            t = [t for t in s["tables"] if t["name"] == hot_table][0]
            return any(p.get("write_throttled", 0) > 0
                       for p in t["partitions"])
        wait_until(drained, 20, 0.2, "the hot partition to throttle")
        dom = render(cluster.endpoint + "/status", out, "dom")
        png = os.path.join(out, "status.png")
        render(cluster.endpoint + "/status", out, png)
    finally:
        stop.set()
        for t in threads:
            t.join(30)
    assert 'data-polls="' in dom, dom[:2000]  # the script ran
    for name in (hot_table, cold_table):
        assert 'class="table" data-table="%s"' % name in dom, name
    hot = [line for line in dom.split("<div ")
           if line.startswith('class="part hot"')]
    assert len(hot) == 1, hot
    assert 'data-table="%s"' % hot_table in hot[0]
    with open(png, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    # KV_STATUS_SCREENSHOT=docs/status.png keeps it (the README's).
    if os.environ.get("KV_STATUS_SCREENSHOT"):
        shutil.copy(png, os.environ["KV_STATUS_SCREENSHOT"])
    shutil.rmtree(out, ignore_errors=True)
