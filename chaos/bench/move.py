"""move.py — ./kv bench --move: what moving a partition costs its clients.

On a fresh cluster of its own (3 nodes, one partition per table, the
per-partition ceilings lifted, no automatic splits) it

 1. measures the node store's own write rate on this machine first
    (kv-store-rate, chaos/bench/store_rate.c: N MB of 4000-byte records
    in 1 MB batches, each in the write-ahead log before the next, into a
    fresh store with the node's options), ROUNDS times, before the
    cluster starts so that nothing else of ours runs meanwhile;
 2. loads one table to N MB (--move-mb, default 1024) with kv-load
    (4000-byte items): load rate and the source node's bytes on disk;
 3. runs kv-load open loop (ycsb-a: half GetItem, half UpdateItem of a
    fresh 4000-byte pad, over the loaded keys, --move-rate requests/s)
    for a window before the move (--move-before s), then moves the
    partition to another node with kv-admin while the load goes on, and
    keeps the load up --move-after s after the move has returned.

From kv-load's log of every answer (--latencies): the p99 of all
requests answered in the window before the move, during it and after
it, exact over the mix; from its per-second rows, the p99 of each second
(the larger of GetItem's and UpdateItem's p99 that second) to show the
worst seconds, and every failed request (error, wrong answer, throttle;
the requests still queued when kv-load is stopped at the end are
reported apart); from the move's event (kv-admin status
--events): its seconds and how long writes were fenced. Copy rate =
the partition's bytes (kv-admin status, before the move) / the move's
seconds, beside the store's rate.

It also reports the share of the CPUs that processes other than the
bench's own (the cluster, kv-load, kv-admin) took before and during the
move (/proc; a lower bound, as processes that start and end in between
are missed), and calls the run disturbed above 10 %: on a shared machine,
repeat it then.

Verdict: PASS when no request failed and the p99 of the requests
answered during the move is at most 5 x the p99 of those answered in the
window before it. Exit status 1 otherwise. The worst single second is
reported beside it but not judged: seconds of 20 to 100 ms p99 come in
the window before a move as well as during it (the workload's own
memtable flushes and compactions on a 2-core machine shared with the
router and kv-load), so one second says little about the move.

The time from sustained heat to a split is not measured here: the
hot-partition experiment (./kv hot-partition --adaptive) does.
"""

import csv
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import threading
import time

import measure
from measure import disk_bytes

from cluster import Cluster

SETTINGS = ["partition-rcu 1000000", "partition-wcu 1000000",
            "split-after-seconds 0", "split-size-mb 0"]
TABLE = "move"
ITEM_SIZE = 4000
P99_LIMIT = 5.0   # during / before
WORKLOAD = "ycsb-a"
MB = float(1 << 20)
SLOW_MS = 20.0   # a second whose p99 is over this is listed (slow_seconds)
BUSY = 0.10  # others' CPU share above which the run is called disturbed


def store_rate(args, mb, rounds):
    """kv-store-rate ROUNDS times into a fresh folder each; MB/s list."""
    tool = os.path.join(args.build, "chaos", "bench", "kv-store-rate")
    if not os.access(tool, os.X_OK):
        raise RuntimeError("%s is missing: build first" % tool)
    rates = []
    for r in range(rounds):
        d = os.path.join(args.tmp, "store-rate")
        shutil.rmtree(d, ignore_errors=True)
        p = subprocess.run([tool, d, "--mb", str(mb), "--value-size",
                            str(ITEM_SIZE)], capture_output=True, text=True,
                           timeout=900)
        shutil.rmtree(d, ignore_errors=True)
        m = re.search(r": ([\d.]+) MB/s", p.stdout)
        if p.returncode != 0 or not m:
            raise RuntimeError("kv-store-rate failed: %s%s" % (p.stdout,
                                                              p.stderr))
        rates.append(float(m.group(1)))
        print("  store round %d: %s" % (r + 1, p.stdout.strip()),
              flush=True)
    return rates


def cpu_sample():
    """CPU time so far, in clock ticks: ({pid: (starttime, time)} of every
    user process but this one and its descendants, the same of ours, and
    the machine's total time)."""
    procs = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        f = measure.stat_fields(int(d))
        if f is None:
            continue
        # state ppid ... utime(11) stime(12) ... starttime(19). Not
        # cutime and cstime: a child reaped meanwhile would bring all its
        # life's time; what short-lived processes used is missed instead.
        procs[int(d)] = (int(f[1]), int(f[19]), int(f[11]) + int(f[12]))
    me, mine = os.getpid(), set()
    for pid in procs:
        chain, p = [], pid
        while p in procs and p not in mine and p != me and p > 1:
            chain.append(p)
            p = procs[p][0]
        if p == me or p in mine:
            mine.update(chain)
    mine.add(me)
    # Kernel threads (children of kthreadd, pid 2) are the kernel's work,
    # much of it ours (writeback): left out.
    others = {pid: v[1:] for pid, v in procs.items()
              if pid not in mine and pid != 2 and v[0] != 2}
    ours = {pid: v[1:] for pid, v in procs.items() if pid in mine}
    with open("/proc/stat") as f:
        total = sum(int(x) for x in f.readline().split()[1:9])
    return others, ours, total


def cpu_share(a, b, which=0, pids=None):
    """The share of the machine's CPUs (1.0: all of them) that others'
    processes (which=0) or ours (1; only pids, when given) took between
    samples a and b (cpu_sample)."""
    used = 0
    for pid, (start, t) in b[which].items():
        if pids is not None and pid not in pids:
            continue
        old = a[which].get(pid)
        used += t - old[1] if old and old[0] == start else t
    dt = b[2] - a[2]
    return max(0.0, used / dt) if dt > 0 else 0.0


def machine_io():
    """(major page faults of the machine, sectors read, sectors written
    by its disks) so far: /proc/vmstat and /proc/diskstats."""
    faults = rd = wr = 0
    with open("/proc/vmstat") as f:
        for line in f:
            if line.startswith("pgmajfault "):
                faults = int(line.split()[1])
    with open("/proc/diskstats") as f:
        for line in f:
            x = line.split()
            # Whole disks only (vda, sda, nvme0n1), not their partitions.
            if len(x) > 9 and re.match(r"^(vd|sd|xvd)[a-z]+$|^nvme\d+n\d+$",
                                       x[2]):
                rd += int(x[5])
                wr += int(x[9])
    return faults, rd, wr


def proc_majflt(pids):
    """Major page faults of pids so far."""
    return sum(measure.major_faults(pid) for pid in pids)


class IoSampler:
    """Per second of kv-load's clock: major page faults of our processes
    and of the machine, and the MB its disks read and wrote; so that a
    second of stalled requests can be set beside what the machine did."""

    def __init__(self, pids, t0):
        self.pids, self.t0 = pids, t0
        self.rows = {}
        self.stop = threading.Event()
        self.th = threading.Thread(target=self.run, daemon=True)
        self.th.start()

    def run(self):
        last = (proc_majflt(self.pids),) + machine_io()
        while not self.stop.wait(1.0 - (time.monotonic() - self.t0) % 1.0):
            now = (proc_majflt(self.pids),) + machine_io()
            sec = int(time.monotonic() - self.t0 - 0.5)
            d = [b - a for a, b in zip(last, now)]
            self.rows[sec] = {"our_majflt": d[0], "majflt": d[1],
                              "read_mb": d[2] * 512 / MB,
                              "written_mb": d[3] * 512 / MB}
            last = now

    def close(self):
        self.stop.set()
        self.th.join()
        return self.rows


def part0(c):
    return c.table_map(TABLE)[0]


def load(args, c, keys):
    """Creates and loads the table; returns the load's figures."""
    t0 = time.monotonic()
    s = args.kvload_fn(args, c.endpoint, [
        "--table", TABLE, "--create", "--load", "--workload", "get",
        "--keys", str(keys), "--item-size", str(ITEM_SIZE),
        "--connections", "32", "--duration", "0"])
    secs = time.monotonic() - t0
    m = re.search(r"loaded (\d+) items .* in ([\d.]+) s", s["_stdout"])
    if m:
        secs = float(m.group(2))
    p = part0(c)
    data = os.path.join(c.dir, "data", "node%d" % p["node"])
    return {"items": keys, "seconds": secs,
            "items_per_s": keys / secs,
            "bytes": p["bytes"], "mb_per_s": p["bytes"] / MB / secs,
            "node": p["node"], "disk_bytes": disk_bytes(data)}


def move_under_load(args, c, keys, target):
    """kv-load open loop before, during and after the move; returns the
    move's wall times relative to kv-load's start, its output and
    kv-load's summary and per-second rows."""
    csv_path = os.path.join(args.tmp, "move.csv")
    json_path = os.path.join(args.tmp, "move-load.json")
    lat_path = os.path.join(args.tmp, "move-latencies.csv")
    err = open(os.path.join(args.tmp, "move-load.err"), "w")
    # Step 0 is the window before; step 1 lasts until we stop kv-load.
    load = subprocess.Popen(
        [args.kvload, "--url", c.endpoint, "--quiet", "--table", TABLE,
         "--workload", WORKLOAD, "--keys", str(keys), "--item-size",
         str(ITEM_SIZE), "--connections", "64", "--schedule",
         "%d:%g,%d:36000" % (args.move_rate, args.move_before,
                             args.move_rate),
         "--csv", csv_path, "--json", json_path, "--latencies", lat_path],
        stdout=subprocess.PIPE, stderr=err, text=True)
    args.procs.append(load)
    # kv-load prints its header the moment its clock starts.
    while True:
        line = load.stdout.readline()
        if not line:
            raise RuntimeError("kv-load ended before its run: see %s" %
                               err.name)
        if line.startswith("kv-load:") and "open loop" in line:
            t0 = time.monotonic()
            break
    named = dict((p.name, p.p.pid) for p in c.procs())
    named["kv-load"] = load.pid
    cpu = [cpu_sample()]
    io = IoSampler(list(named.values()), t0)
    time.sleep(max(0.0, t0 + args.move_before - time.monotonic()))
    admin = os.path.join(args.build, "cluster-config", "kv-admin")
    ts = time.monotonic() - t0
    cpu.append(cpu_sample())
    mv = subprocess.run([admin, "--config", c.config, "partition", "move",
                         TABLE, "0", str(target)], capture_output=True,
                        text=True, timeout=1900)
    te = time.monotonic() - t0
    cpu.append(cpu_sample())
    time.sleep(args.move_after)
    load.send_signal(signal.SIGINT)
    out, _ = load.communicate(timeout=60)
    io_rows = io.close()
    err.close()
    with open(csv_path) as f:
        rows = list(csv.DictReader(f))
    with open(json_path) as f:
        summary = json.load(f)
    with open(lat_path) as f:
        answers = [(float(r["done_ms"]) / 1000.0, int(r["us"]))
                   for r in csv.DictReader(f) if r["outcome"] == "ok"]
    return {"start": ts, "end": te, "rc": mv.returncode,
            "output": (mv.stdout + mv.stderr).strip(), "rows": rows,
            "answers": answers, "io": io_rows,
            "summary": summary, "load_stdout": out,
            "load_rc": load.returncode,
            "others_before": cpu_share(cpu[0], cpu[1]),
            "others_during": cpu_share(cpu[1], cpu[2]),
            "cpu_during": dict((name, cpu_share(cpu[1], cpu[2], 1, {pid}))
                               for name, pid in named.items()),
            "cpu_before": dict((name, cpu_share(cpu[0], cpu[1], 1, {pid}))
                               for name, pid in named.items())}


def per_second(rows):
    """{second: {"p99": worst op's p99, "ok", "failed", "offered"}}."""
    out = {}
    for r in rows:
        s = out.setdefault(int(r["second"]), {"p99": 0.0, "ok": 0,
                                              "failed": 0, "offered": 0})
        if int(r["ok"]) > 0:
            s["p99"] = max(s["p99"], float(r["p99_ms"]))
        s["ok"] += int(r["ok"])
        s["offered"] += int(r["offered"])
        s["failed"] += int(r["errors"]) + int(r["throttled"])
    return out


def p99_ms(lats):
    """The 99th percentile (nearest rank) of lats (microseconds), in ms."""
    if not lats:
        return None
    lats = sorted(lats)
    return lats[max(0, -(-99 * len(lats) // 100) - 1)] / 1000.0


def analyse(args, run):
    secs = per_second(run["rows"])
    first, last = int(run["start"]), int(run["end"])
    before = [secs[s]["p99"] for s in sorted(secs) if s < args.move_before
              and secs[s]["ok"] > 0]
    during = [secs[s]["p99"] for s in range(first, last + 1)
              if s in secs and secs[s]["ok"] > 0]
    after = [secs[s]["p99"] for s in sorted(secs) if s > last and
             secs[s]["ok"] > 0]
    tot = run["summary"]["totals"]
    m = re.search(r"(\d+) sent over 1 s late, (\d+) never sent",
                  run["load_stdout"])
    late, unsent = (int(m.group(1)), int(m.group(2))) if m else (0, 0)
    ans = run["answers"]
    return {
        "p99_before_ms": p99_ms([u for t, u in ans if t < args.move_before]),
        "p99_during_ms": p99_ms([u for t, u in ans
                                 if run["start"] <= t <= run["end"]]),
        "p99_after_ms": p99_ms([u for t, u in ans if t > run["end"]]),
        "p99_before_median_s_ms": statistics.median(before),
        "p99_before_max_ms": max(before),
        "p99_during_max_ms": max(during) if during else 0.0,
        "p99_during_median_ms": statistics.median(during) if during
        else 0.0,
        "p99_after_median_ms": statistics.median(after) if after else None,
        "p99_after_max_ms": max(after) if after else None,
        "failed_during": sum(secs[s]["failed"] for s in range(first, last + 1)
                             if s in secs),
        # Requests still queued when kv-load was stopped (unsent) are
        # reported, not counted as failed: stopping dropped them.
        "failed": tot["errors"] + tot["wrong"] + tot["throttled"],
        "errors_by_type": tot.get("errors_by_type", {}),
        "requests": tot["requests"], "late": late, "unsent": unsent,
        "seconds": [{"second": s, "p99_ms": secs[s]["p99"],
                     "ok": secs[s]["ok"], "failed": secs[s]["failed"],
                     "io": run["io"].get(s),
                     "phase": "before" if s < args.move_before else
                     "move" if first <= s <= last else
                     "after" if s > last else "wait"}
                    for s in sorted(secs)],
    }


def slow_seconds(a):
    """Prints the seconds whose p99 stood out (over SLOW_MS and over five
    times the median second before the move) beside what the machine
    did in them, and the same on average over the other seconds."""
    limit = max(SLOW_MS, 5 * a["p99_before_median_s_ms"])
    rows = [r for r in a["seconds"] if r["io"] is not None]
    slow = [r for r in rows if r["p99_ms"] > limit]
    rest = [r for r in rows if r["p99_ms"] <= limit]

    def line(label, rs):
        if not rs:
            return
        n = float(len(rs))
        print("  %-22s %5.1f our major faults, %6.1f the machine's; disk "
              "%6.1f MB read, %6.1f MB written (per second)" % (
                  label, sum(r["io"]["our_majflt"] for r in rs) / n,
                  sum(r["io"]["majflt"] for r in rs) / n,
                  sum(r["io"]["read_mb"] for r in rs) / n,
                  sum(r["io"]["written_mb"] for r in rs) / n))
    print("seconds with p99 over %.1f ms: %d of %d" % (limit, len(slow),
                                                     len(rows)))
    for r in slow:
        line("%3d s (%s) %.0f ms" % (r["second"], r["phase"], r["p99_ms"]),
             [r])
    line("the other seconds", rest)


def bench_move(args, kvload_fn):
    """./kv bench --move; returns the exit status."""
    args.kvload_fn = kvload_fn
    args.build = os.environ.get("KV_BUILD") or os.path.join(
        os.path.dirname(os.path.dirname(os.path.dirname(
            os.path.abspath(__file__)))), "build")
    mb = args.move_mb
    keys = max(1, int(mb * MB / ITEM_SIZE))
    print("kv bench --move: %d cores; %d MB of %d-byte items (%d keys), "
          "%s open loop at %d/s, %g s before the move, %g s after" % (
              os.cpu_count(), mb, ITEM_SIZE, keys, WORKLOAD,
              args.move_rate, args.move_before, args.move_after),
          flush=True)
    rates = store_rate(args, mb, args.move_store_rounds)
    store = statistics.median(rates)

    c = Cluster(partitions=1, settings=SETTINGS)
    args.clusters.append(c)
    c.start()
    ld = load(args, c, keys)
    print("load: %d items, %.1f MB in %.1f s: %.1f MB/s, %.0f items/s; "
          "node %d's data folder: %.1f MB on disk" % (
              ld["items"], ld["bytes"] / MB, ld["seconds"], ld["mb_per_s"],
              ld["items_per_s"], ld["node"], ld["disk_bytes"] / MB),
          flush=True)
    p = part0(c)
    src = p["node"]
    target = (src + 1) % c.n_nodes
    run = move_under_load(args, c, keys, target)
    print("move: %s (kv-admin exit %d, %.1f s to %.1f s of the load)" % (
        run["output"], run["rc"], run["start"], run["end"]), flush=True)
    ev = [e for e in c.events() if e.get("kind") == "move" and
          e.get("table") == TABLE]
    ev = ev[-1] if ev else {}
    after = part0(c)
    a = analyse(args, run)
    secs = ev.get("seconds") or (run["end"] - run["start"])
    copy = p["bytes"] / MB / secs if secs else 0.0
    ratio = a["p99_during_ms"] / a["p99_before_ms"] if a[
        "p99_before_ms"] else float("inf")
    worst = a["p99_during_max_ms"] / a["p99_before_median_s_ms"] if a[
        "p99_before_median_s_ms"] else float("inf")
    moved = run["rc"] == 0 and ev.get("outcome") == "done" and \
        after["node"] == target
    ok = moved and a["failed"] == 0 and ratio <= P99_LIMIT
    res = {
        "when": time.strftime("%Y-%m-%d %H:%M:%S"), "cores": os.cpu_count(),
        "mb": mb, "item_size": ITEM_SIZE, "keys": keys,
        "workload": WORKLOAD, "rate": args.move_rate,
        "load": ld, "store_mb_per_s": store, "store_rounds": rates,
        "move": {"from": src, "to": target, "bytes": p["bytes"],
                 "items": p["items"], "seconds": secs,
                 "wall_seconds": run["end"] - run["start"],
                 "items_copied": ev.get("items_copied"),
                 "fenced_ms": ev.get("fenced_ms"),
                 "copy_mb_per_s": copy,
                 "copy_of_store": copy / store if store else None,
                 "output": run["output"], "event": ev,
                 "target_disk_bytes": disk_bytes(os.path.join(
                     c.dir, "data", "node%d" % target))},
        "latency": a, "p99_ratio": ratio, "p99_limit": P99_LIMIT,
        "worst_second_ratio": worst,
        "other_cpu_before": run["others_before"],
        "other_cpu_during": run["others_during"],
        "cpu_before": run["cpu_before"], "cpu_during": run["cpu_during"],
        "verdict": "PASS" if ok else "FAIL",
    }
    rows = [
        ("load rate", "%.1f MB/s, %.0f items/s (%.0f MB in %.1f s)" % (
            ld["mb_per_s"], ld["items_per_s"], ld["bytes"] / MB,
            ld["seconds"])),
        ("on disk (source node)", "%.0f MB" % (ld["disk_bytes"] / MB)),
        ("store write rate", "%.1f MB/s (median of %s)" % (
            store, ", ".join("%.0f" % r for r in rates))),
        ("copy rate", "%.1f MB/s (%.0f MB, %s items in %.1f s)" % (
            copy, p["bytes"] / MB, ev.get("items_copied"), secs)),
        ("copy / store", "%.2f" % (copy / store if store else 0)),
        ("writes fenced", "%s ms" % ev.get("fenced_ms")),
        ("p99 before", "%.2f ms (window), %.2f ms (median second), "
         "%.2f ms (worst second)" % (
             a["p99_before_ms"], a["p99_before_median_s_ms"],
             a["p99_before_max_ms"])),
        ("p99 during move", "%.2f ms (window), %.2f ms (median second), "
         "%.2f ms (worst second)" % (
             a["p99_during_ms"], a["p99_during_median_ms"],
             a["p99_during_max_ms"])),
        ("p99 during / before", "%.2fx window (limit %gx); worst second "
         "/ median second before %.1fx" % (ratio, P99_LIMIT, worst)),
        ("p99 after the move", "%.2f ms (window), %.2f ms (median second),"
         " %.2f ms (worst second)" % (
             a["p99_after_ms"] or 0, a["p99_after_median_ms"] or 0,
             a["p99_after_max_ms"] or 0)),
        ("failed requests", "%d (%d during the move) of %d%s; %d sent over "
         "1 s late, %d queued when the load stopped" % (
             a["failed"], a["failed_during"], a["requests"],
             " %s" % a["errors_by_type"] if a["errors_by_type"] else "",
             a["late"], a["unsent"])),
        ("CPU during the move", ", ".join(
            "%s %.0f %%" % (n, 100 * v) for n, v in sorted(
                run["cpu_during"].items())) + " (of all %d cores)" %
         os.cpu_count()),
        ("other processes' CPU", "%.0f %% before, %.0f %% during the move "
         "(of all %d cores)" % (100 * run["others_before"],
                                100 * run["others_during"],
                                os.cpu_count())),
    ]
    print()
    for k, v in rows:
        print("%-22s %s" % (k, v))
    slow_seconds(a)
    why = []
    if not moved:
        why.append("the move did not complete (%s)" % run["output"])
    if a["failed"]:
        why.append("%d requests failed" % a["failed"])
    if ratio > P99_LIMIT:
        why.append("p99 during the move %.2f ms > %g x %.2f ms" % (
            a["p99_during_ms"], P99_LIMIT, a["p99_before_ms"]))
    res["why"] = why
    busy = max(run["others_before"], run["others_during"])
    if busy > BUSY:
        print("note: other processes took at least %.0f %% of the CPUs "
              "during the measurement: the figures are disturbed, repeat "
              "on a quiet machine" % (100 * busy))
    print("verdict: %s%s" % (res["verdict"], ": " + "; ".join(why)
                             if why else ""))
    os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump(res, f, indent=1)
    if not ok and run["rc"] != 0:
        print(c.log_tails(20))
    return 0 if ok else 1
