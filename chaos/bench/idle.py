"""idle.py — ./kv bench --idle: what a cluster costs when nobody uses it.

A fresh local cluster (three nodes, two routers: the shape of
cluster-config/local.conf), started, left 3 s to settle, then left alone
for --seconds while the CPU time (user and system) of all its processes
is counted; reported as a share of one core. Twice per round: without
and with a standby node in the cluster file (a fourth node, never
started, as local.conf has). With --vs-build DIR, a cluster of that
build folder's binaries is measured the same way, turn about, so that
two builds compare in one run. Medians over --rounds.

No target is judged: the figures go in the README and the design notes
("An idle cluster costs about 1 % of a core"). JSON in .kv/bench/idle.json
by default (--json).
"""

import json
import os
import statistics
import time

from cluster import Cluster
from measure import cpu_seconds

SETTLE_S = 3.0


def one(build, standby, seconds):
    """The share of a core a fresh idle cluster used over `seconds`."""
    kw = {"nodes": 4, "standby": (3,)} if standby else {"nodes": 3}
    c = Cluster(routers=2, build=build, **kw)
    try:
        c.start()
        time.sleep(SETTLE_S)
        pids = [p.p.pid for p in c.procs() if p.p is not None]
        c0, t0 = cpu_seconds(pids), time.monotonic()
        time.sleep(seconds)
        c1, t1 = cpu_seconds(pids), time.monotonic()
        return 100.0 * (c1 - c0) / (t1 - t0)
    finally:
        c.stop()
        c.cleanup()


def bench_idle(args):
    builds = [("kv", None)]
    if args.vs_build:
        builds.append((os.path.basename(os.path.normpath(args.vs_build)),
                       args.vs_build))
    print("kv bench --idle: %d cores, %g s per measure, %d round(s); "
          "three nodes and two routers, without and with a standby node"
          % (os.cpu_count(), args.seconds, args.rounds))
    got = {(b, s): [] for b, _ in builds for s in (False, True)}
    width = max(len(b) for b, _ in builds)
    for r in range(args.rounds):
        for standby in (False, True):
            order = builds if r % 2 == 0 else list(reversed(builds))
            for name, build in order:
                pct = one(build, standby, args.seconds)
                got[(name, standby)].append(pct)
                print("  round %d, %-*s %-10s %5.2f %% of a core" % (
                    r + 1, width, name,
                    "standby" if standby else "no standby", pct),
                    flush=True)
    print("\n| build | no standby node | a standby node |\n|---|---|---|")
    out = []
    for name, _ in builds:
        row = [statistics.median(got[(name, s)]) for s in (False, True)]
        print("| %s | %.1f %% | %.1f %% |" % (name, row[0], row[1]))
        out.append({"build": name, "idle_pct": row[0],
                    "idle_standby_pct": row[1],
                    "rounds": [got[(name, False)], got[(name, True)]]})
    os.makedirs(os.path.dirname(args.json), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump({"seconds": args.seconds, "builds": out}, f, indent=1)
    return 0
