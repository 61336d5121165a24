"""adaptive_load.py — what the tests of splits and moves share: a load
of writers, updaters and readers that keeps a history, its checker, and
a check of the cluster map (test_adaptive.py, test_moves_kill.py)."""

import random
import threading
import time

from cluster import wait_until


def table_id(cluster, name):
    return cluster.status()["tables"][name]["id"]


def check_map(cluster, name, items=None):
    """The partitions cover the hash space in order, each served by its
    owner at the catalog's epoch and by no other node; returns them."""
    def settled():
        parts = cluster.table_map(name)
        return all(p["served"] and p["owner_epoch"] == p["epoch"]
                   for p in parts) and parts
    try:
        parts = wait_until(settled, timeout=15, what="owners at the epochs")
    except AssertionError:
        raise AssertionError("map: %r" % cluster.table_map(name))
    assert parts[0]["lo"] == 0 and parts[-1]["last"] == 2 ** 64 - 1
    for a, b in zip(parts, parts[1:]):
        assert b["lo"] == a["last"] + 1, (a, b)
    tid = table_id(cluster, name)

    def one_owner():
        for i in range(len(cluster.nodes)):
            mine = {p["id"] for p in parts if p["node"] == i}
            if cluster.served_by(i, tid) != mine:
                return False
        return True
    wait_until(one_owner, timeout=15, what="every partition on one node")
    if items is not None:
        assert sum(p["items"] for p in parts) == items
    return parts


def scan_all(ddb, name, limit=None, consistent=True):
    out, kw = [], {"TableName": name, "ConsistentRead": consistent}
    if limit:
        kw["Limit"] = limit
    while True:
        r = ddb.scan(**kw)
        out += r["Items"]
        if "LastEvaluatedKey" not in r:
            return out
        kw["ExclusiveStartKey"] = r["LastEvaluatedKey"]



class Load:
    """Writers, updaters and readers with a history to check."""

    def __init__(self, cluster, name, counters=4):
        self.cluster, self.name = cluster, name
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.acked = {}        # key -> value acknowledged
        self.adds = [0] * counters  # acknowledged ADDs per counter
        self.failed_adds = [0] * counters
        self.errors = []
        self.reads = 0
        self.bad_reads = []
        self.threads = [threading.Thread(target=self.writer, args=(w,))
                        for w in range(2)]
        self.threads.append(threading.Thread(target=self.updater))
        self.threads.append(threading.Thread(target=self.reader))

    def writer(self, w):
        ddb = self.cluster.client(read_timeout=10)
        n = 0
        while not self.stop.is_set():
            key = "w%d-%d" % (w, n)
            n += 1
            try:
                ddb.put_item(TableName=self.name, Item={
                    "pk": {"S": key}, "v": {"N": str(n)}})
            except Exception as e:  # noqa: BLE001
                with self.lock:
                    self.errors.append(repr(e))
                continue
            with self.lock:
                self.acked[key] = n

    def updater(self):
        ddb = self.cluster.client(read_timeout=10)
        while not self.stop.is_set():
            c = random.randrange(len(self.adds))
            try:
                ddb.update_item(
                    TableName=self.name, Key={"pk": {"S": "ctr%d" % c}},
                    UpdateExpression="ADD n :one",
                    ExpressionAttributeValues={":one": {"N": "1"}})
            except Exception as e:  # noqa: BLE001
                with self.lock:
                    self.errors.append(repr(e))
                    self.failed_adds[c] += 1
                continue
            with self.lock:
                self.adds[c] += 1

    def reader(self):
        ddb = self.cluster.client(read_timeout=10)
        while not self.stop.is_set():
            with self.lock:
                empty = not self.acked
            if empty:
                time.sleep(0.01)
                continue
            with self.lock:
                key = random.choice(list(self.acked)[-500:])
                want = self.acked[key]
            try:
                got = ddb.get_item(TableName=self.name, Key={
                    "pk": {"S": key}}, ConsistentRead=True).get("Item")
            except Exception as e:  # noqa: BLE001
                with self.lock:
                    self.errors.append(repr(e))
                continue
            self.reads += 1
            if got is None or int(got["v"]["N"]) != want:
                self.bad_reads.append((key, want, got))

    def __enter__(self):
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        for t in self.threads:
            t.join(30)

    def check(self, ddb):
        """Every acknowledged write present once, with its value; every
        counter holds its acknowledged ADDs (no more: none failed)."""
        items = scan_all(ddb, self.name, limit=97)
        keys = [i["pk"]["S"] for i in items]
        assert len(keys) == len(set(keys)), "a key scanned twice"
        got = {i["pk"]["S"]: i for i in items}
        missing = [k for k in self.acked if k not in got]
        assert not missing, "acknowledged writes lost: %r" % missing[:10]
        wrong = [k for k, v in self.acked.items()
                 if int(got[k]["v"]["N"]) != v]
        assert not wrong, wrong[:10]
        for c, n in enumerate(self.adds):
            have = int(got["ctr%d" % c]["n"]["N"]) if "ctr%d" % c in got \
                else 0
            assert n <= have <= n + self.failed_adds[c], (c, n, have)
        assert not self.bad_reads, self.bad_reads[:5]
