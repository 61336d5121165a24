"""scale.py — ./kv bench --scale: does the cluster cost the same when its
table holds ten million items as when it holds ten thousand?

On a fresh cluster of its own (three nodes, one router, the ceilings
lifted as ./kv bench runs; --memory-mb gives each node its memory
budget, the cluster file's memory-mb):

 1. Loads a small table (--small-items, 10,000) and a big one (--items,
    10,000,000), both of item collections of ten sort keys each (kv-load
    --collections: pk of the key's rank, sk 0..9, a pad of
    --item-size bytes, which with the keys makes items of about 150
    bytes as DynamoDB counts them), with BatchWriteItem over 32
    connections; the big load's rate is items/s. Bytes on disk (the
    nodes' data folders) after the loads.
 2. The same workloads on both tables, closed loop, --connections
    connections, --seconds each, --rounds rounds, small and big
    alternating within each round: GetItem of one item (keys uniform,
    and Zipf 0.99), Query of a collection's page of 10 (uniform), and
    PutItem overwriting an item (uniform). A round runs the two tables
    back to back, and its ratio is big / small; the ratio judged is the
    median of the rounds' ratios, and each table's figure the median of
    its runs. A warm-up of GetItem on each table comes first.
 3. A full parallel Scan of each table (--segments segments at once,
    pages of 1 MB): items/s.
 4. The nodes' resident sizes, sampled twice a second throughout; the
    largest is reported per node, and checked against the budget.

With --smoke (the suite's chaos/bench_scale_smoke): 50,000 items, 2 s
runs, one round; every answer checked, the targets not judged.

Targets (issue: flat cost at ten million items): GetItem and Query at
least 0.9 of the small table's; PutItem at least 0.8; the Scan at least
200,000 items/s; the load at least 40,000 items/s; every node's resident
size within its budget (below 500 MB with the default). The verdict
line says which hold; exit status 1 when one does not. JSON in
.kv/bench/scale.json by default.
"""

import http.client
import json
import urllib.request
import os
import re
import statistics
import threading
import time

import measure
from measure import cpu_ticks, disk_bytes, rss_mb

SMALL = "scale-small"
BIG = "scale-big"
PER_KEY = 10                 # kv-load --collections: sk 0..9
WORKLOADS = [                # name, kv-load workload, extra options
    ("GetItem", "get", []),
    ("GetItem zipf", "get", ["--dist", "zipf:0.99"]),
    ("Query 10", "query", []),
    ("PutItem", "put", []),
]
TARGET_READ = 0.9
TARGET_PUT = 0.8
TARGET_SCAN = 200000
TARGET_LOAD = 40000
DEFAULT_BUDGET_MB = 384     # config.h's CONFIG_MEMORY_MB
DEFAULT_RSS_MB = 500        # the ceiling with the default budget
WARMUP_SECONDS = 3          # GetItem on each table before the rounds
SETTLE_SHARE = 0.05         # nodes idle: under 5 % of a CPU ...
SETTLE_LIMIT_S = 900        # ... waited for at most this long


def nodes_read_bytes(nodes):
    """Bytes the nodes have read from the disk so far."""
    return sum(measure.disk_read_bytes(n.p.pid) for n in nodes
               if n.p is not None)


def settle(nodes, limit=SETTLE_LIMIT_S):
    """Waits until the nodes are idle: together under SETTLE_SHARE of one
    CPU for two seconds in a row (the compactions a load leaves behind
    done). Seconds waited; at most limit."""
    tick = os.sysconf("SC_CLK_TCK")
    t0 = time.monotonic()
    quiet = 0
    last = sum(cpu_ticks(n.p.pid) for n in nodes if n.p is not None)
    while quiet < 2 and time.monotonic() - t0 < limit:
        time.sleep(1.0)
        now = sum(cpu_ticks(n.p.pid) for n in nodes if n.p is not None)
        quiet = quiet + 1 if now - last < SETTLE_SHARE * tick else 0
        last = now
    return time.monotonic() - t0


class Sampler:
    """Samples every node's resident size twice a second, keeping each
    node's largest."""

    def __init__(self, nodes):
        self.nodes = nodes
        self.peak = [0.0] * len(nodes)
        self.stop = threading.Event()
        self.th = threading.Thread(target=self.run, daemon=True)

    def run(self):
        while not self.stop.is_set():
            for i, n in enumerate(self.nodes):
                if n.p is not None:
                    self.peak[i] = max(self.peak[i], rss_mb(n.p.pid))
            self.stop.wait(0.5)

    def __enter__(self):
        self.th.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.th.join()


COUNT = re.compile(rb'"Count":(\d+)')


def scan_segment(host, port, table, segment, segments, counts, errors):
    """Scans one segment to its end over one connection, counting items;
    reads only Count and LastEvaluatedKey of each page."""
    conn = http.client.HTTPConnection(host, port, timeout=120)
    start = None
    n = 0
    try:
        while True:
            req = {"TableName": table, "Segment": segment,
                   "TotalSegments": segments}
            if start is not None:
                req["ExclusiveStartKey"] = start
            conn.request("POST", "/", json.dumps(req), {
                "Content-Type": "application/x-amz-json-1.0",
                "X-Amz-Target": "DynamoDB_20120810.Scan",
                "Authorization": "AWS4-HMAC-SHA256 Credential=x/20260101/"
                                 "us-east-1/dynamodb/aws4_request, "
                                 "SignedHeaders=host, Signature=0"})
            r = conn.getresponse()
            body = r.read()
            if r.status != 200:
                errors.append(body[:300])
                return
            m = COUNT.search(body)
            n += int(m.group(1)) if m else 0
            at = body.rfind(b'"LastEvaluatedKey":')
            if at < 0:
                break
            # The key is the last member: the rest less the closing brace.
            start = json.loads(body[at + len('"LastEvaluatedKey":'):-1])
    finally:
        conn.close()
        counts[segment] = n


def parallel_scan(url, table, segments):
    """Items/s and items of a full parallel Scan of table."""
    host, port = url.split("//", 1)[1].rsplit(":", 1)
    counts = [0] * segments
    errors = []
    ths = [threading.Thread(target=scan_segment, args=(
        host, int(port), table, s, segments, counts, errors))
        for s in range(segments)]
    t0 = time.monotonic()
    for t in ths:
        t.start()
    for t in ths:
        t.join()
    took = time.monotonic() - t0
    if errors:
        raise RuntimeError("Scan of %s failed: %s" % (table, errors[0]))
    return sum(counts) / took, sum(counts), took


def memory_parts(url):
    """A node's kv_node_memory_bytes gauges, in MB by part."""
    out = {}
    with urllib.request.urlopen(url, timeout=10) as r:
        for line in r.read().decode().splitlines():
            m = re.match(r'kv_node_memory_bytes\{[^}]*part="([a-z_]+)"\} '
                         r'(\d+)', line)
            if m:
                out[m.group(1)] = int(m.group(2)) / 1048576.0
    return out


def load(args, kvload, url, table, keys):
    t0 = time.monotonic()
    kvload(args, url, ["--table", table, "--create", "--load",
                       "--workload", "get", "--collections", "--keys",
                       str(keys), "--item-size", str(args.item_size),
                       "--connections", "32", "--duration", "0"])
    return time.monotonic() - t0


def bench_scale(args, kvload, start_cluster, lifted):
    if args.smoke:
        # The suite's short run (chaos/bench_scale_smoke): every step and
        # every answer checked, on a table small enough for seconds.
        args.items = min(args.items, 50000)
    settings = list(lifted)
    budget = args.memory_mb or DEFAULT_BUDGET_MB
    if args.memory_mb:
        settings.append("memory-mb %d" % args.memory_mb)
    if args.partitions:
        settings.append("partitions %d" % args.partitions)
    kv = start_cluster(args, settings, "kv")
    cluster = args.clusters[-1]
    big_keys = max(1, args.items // PER_KEY)
    small_keys = max(1, args.small_items // PER_KEY)
    print("kv bench --scale: %d cores; %d items (big) and %d (small) in "
          "collections of %d, %d-byte pads; %d connections, %g s per run, "
          "%d round(s); memory budget %d MB a node%s; %s partitions a "
          "table" % (
              os.cpu_count(), big_keys * PER_KEY, small_keys * PER_KEY,
              PER_KEY, args.item_size, args.connections, args.seconds,
              args.rounds, budget, "" if args.memory_mb else " (default)",
              args.partitions or "the cluster's"),
          flush=True)
    out = {"items": big_keys * PER_KEY, "small_items": small_keys * PER_KEY,
           "partitions": args.partitions or None,
           "item_size": args.item_size, "budget_mb": budget,
           "seconds": args.seconds, "rounds": args.rounds,
           "connections": args.connections}
    bad = []
    with Sampler(cluster.nodes) as sampler:
        load(args, kvload, kv.url, SMALL, small_keys)
        took = load(args, kvload, kv.url, BIG, big_keys)
        rate = big_keys * PER_KEY / took
        out["load_items_per_s"] = rate
        out["load_seconds"] = took
        disk = disk_bytes(os.path.join(cluster.dir, "data"))
        out["disk_bytes"] = disk
        print("loaded %d items in %.0f s: %.0f items/s; %.1f MB on disk"
              % (big_keys * PER_KEY, took, rate, disk / 1e6), flush=True)
        # What the load leaves running (flushes, compactions) ends before
        # the first round, which it would otherwise slow.
        waited = settle(cluster.nodes)
        out["settle_seconds"] = waited
        print("nodes idle after %.0f s" % waited, flush=True)
        res = {name: {SMALL: [], BIG: [], "pairs": [], "disk": {
            SMALL: [], BIG: []}} for name, _, _ in WORKLOADS}

        def run(t, wl, extra, seconds, name=None):
            keys = small_keys if t == SMALL else big_keys
            before = nodes_read_bytes(cluster.nodes)
            s = kvload(args, kv.url, [
                "--table", t, "--workload", wl, "--collections",
                "--keys", str(keys), "--item-size", str(args.item_size),
                "--connections", str(args.connections), "--duration",
                str(seconds)] + extra)
            if s.get("_failed"):
                bad.append("%s on %s: %s" % (wl, t, s["_stdout"][-300:]))
            ops = s["totals"]["ok_per_s"] * seconds
            if name is not None and ops > 0:
                res[name]["disk"][t].append(
                    (nodes_read_bytes(cluster.nodes) - before) / ops)
            return s["totals"]["ok_per_s"]
        # Warm-up, not counted: the big table's first reads after its load
        # find a cache full of what the load wrote last.
        if not args.smoke:
            for t in (SMALL, BIG):
                run(t, "get", [], WARMUP_SECONDS)
        # The reads' rounds, then the writes': overwrites leave versions
        # of the small table's few keys in the memtable for every later
        # Query to step over, which the big table's many keys do not.
        rounds = [(r, w) for group in (False, True)
                  for r in range(args.rounds) for w in WORKLOADS
                  if (w[1] == "put") == group]
        for r, (name, wl, extra) in rounds:
            order = [SMALL, BIG] if r % 2 == 0 else [BIG, SMALL]
            got = {t: run(t, wl, extra, args.seconds, name) for t in order}
            for t in order:
                res[name][t].append(got[t])
            res[name]["pairs"].append(
                got[BIG] / got[SMALL] if got[SMALL] else 0.0)
        scans = {}
        for t in (SMALL, BIG):
            per_s, n, secs = parallel_scan(kv.url, t, args.segments)
            want = (small_keys if t == SMALL else big_keys) * PER_KEY
            if n != want:
                bad.append("Scan of %s counted %d items, not %d" % (
                    t, n, want))
            scans[t] = {"items_per_s": per_s, "items": n, "seconds": secs}
        parts = [memory_parts(u) for u in cluster.node_metrics]
    out["rss_peak_mb"] = sampler.peak
    out["memory_mb"] = parts
    print("\n%-14s %14s %14s %8s %8s %9s %9s" % (
        "workload", "10k ops/s", "big ops/s", "ratio", "target",
        "10k B/op", "big B/op"))
    print("(B/op: bytes the nodes read from the disk per request)")
    verdicts = []
    out["workloads"] = {}
    for name, _, _ in WORKLOADS:
        small = statistics.median(res[name][SMALL])
        big = statistics.median(res[name][BIG])
        # The ratio judged is the median of each pair's ratio: the two runs
        # of a pair are seconds apart, so the machine's slower drifts (a
        # neighbour's load) cancel in it, where the medians of the two
        # tables' figures taken apart do not.
        ratio = statistics.median(res[name]["pairs"])
        target = TARGET_PUT if name == "PutItem" else TARGET_READ
        out["workloads"][name] = {"small_ops_per_s": small,
                                  "big_ops_per_s": big, "ratio": ratio,
                                  "rounds_small": res[name][SMALL],
                                  "rounds_big": res[name][BIG],
                                  "pair_ratios": res[name]["pairs"],
                                  "disk_bytes_per_op": {
                                      t: statistics.median(v) if v else None
                                      for t, v in res[name]["disk"].items()}}
        disk = out["workloads"][name]["disk_bytes_per_op"]
        print("%-14s %14.0f %14.0f %8.2f %8.2f %9.0f %9.0f   pairs %s" % (
            name, small, big, ratio, target, disk[SMALL] or 0,
            disk[BIG] or 0, " ".join("%.2f" % x
                                     for x in res[name]["pairs"])))
        verdicts.append(("%s %.2f >= %.2f" % (name, ratio, target),
                         ratio >= target))
    print("%-14s %14.0f %14.0f   items/s (target %d on the big table)" % (
        "Scan", scans[SMALL]["items_per_s"], scans[BIG]["items_per_s"],
        TARGET_SCAN))
    out["scan"] = scans
    verdicts.append(("Scan %.0f items/s >= %d" % (
        scans[BIG]["items_per_s"], TARGET_SCAN),
        scans[BIG]["items_per_s"] >= TARGET_SCAN))
    verdicts.append(("load %.0f items/s >= %d" % (rate, TARGET_LOAD),
                     rate >= TARGET_LOAD))
    for i, p in enumerate(sampler.peak):
        m = parts[i]
        print("node %d: peak resident %.0f MB (budget %d MB); at the end "
              "%.0f MB: block cache %.0f, memtables %.0f, size index %.0f, "
              "table readers %.0f" % (
                  i, p, budget, m.get("resident", 0), m.get("block_cache", 0),
                  m.get("memtables", 0), m.get("size_index", 0),
                  m.get("table_readers", 0)))
    verdicts.append(("resident %.0f MB <= %d MB" % (max(sampler.peak),
                                                     budget),
                     max(sampler.peak) <= budget))
    if not args.memory_mb:
        verdicts.append(("resident %.0f MB < %d MB" % (
            max(sampler.peak), DEFAULT_RSS_MB),
            max(sampler.peak) < DEFAULT_RSS_MB))
    out["verdicts"] = [{"check": v, "holds": ok} for v, ok in verdicts]
    print("\nverdict: " + "; ".join(
        "%s %s" % (v, "holds" if ok else "DOES NOT HOLD")
        for v, ok in verdicts))
    os.makedirs(os.path.dirname(args.json), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump(out, f, indent=1)
    for b in bad:
        print("FAILED: " + b)
    if bad:
        return 1
    if args.smoke:
        print("smoke run: the targets are not judged")
        return 0
    return 0 if all(ok for _, ok in verdicts) else 1
