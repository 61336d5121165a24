#!/usr/bin/env python3
"""run.py — chaos experiments: ./kv chaos list | run | soak.

    ./kv chaos list
    ./kv chaos run EXPERIMENT [--seconds N] [--seed S] [--json]
                   [--plant KIND[:N]] [--out DIR] [--clients N]
    ./kv chaos soak [--minutes N] [--experiments a,b,...] [--seed S]

An experiment (chaos/experiments/NAME.exp, format in lab/nemesis.py) is
a workload with its checker and a fault schedule. `run` starts a fresh
cluster whose every link passes through a fault proxy (lab/cluster.py),
creates the workload's table, runs its clients for --seconds while the
schedule injects faults, then heals every link, resumes and restarts
every process, waits until the cluster answers, and checks. It writes to
OUT (default .kv/chaos/NAME-<time>):

    history.jsonl   every operation: process, kind, key, value, start,
                    end, outcome (ok, fail, info); lab/history.py
    faults.jsonl    every fault with its start and end
    summary.json    operations, faults by kind, each checker's verdict
                    with counterexamples (lab/report.py), and whether a
                    process log has a sanitizer report (process-logs)
    timeline.png    throughput, errors and latency, faults shaded
    logs/           the processes' logs (kept when a checker failed)

and prints the closing line (--json: the summary on standard output
instead). Exit status 0 only when every checker passed; 1 when one
failed; 2 for a bad command line or experiment.

--plant KIND[:N] starts every node with a planted fault
(node/plant.h), which the experiment's checker must catch: lose-ack
(acked-writes), dup-id (idgen), stale-read (register), txn-half (bank),
index-drop (gsi). N is the event it fires at (50 unless given).

`soak` runs the experiments (all unless --experiments) one after the
other, each for a few minutes with a new seed, until --minutes pass, and
prints the totals: runs, operations checked, faults injected, violations,
and every count each checker reported, summed (also in soak.json);
`totals FOLDER` prints them again for a soak's folder.
"""

import argparse
import glob
import json
import os
import random
import shutil
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from lab import report  # noqa: E402
from lab.cluster import LabCluster  # noqa: E402
from lab.history import History  # noqa: E402
from lab.nemesis import ExperimentError, Nemesis, parse  # noqa: E402
from lab.workloads import WORKLOADS  # noqa: E402

EXPERIMENTS = os.path.join(HERE, "experiments")
PLANTS = {"lose-ack": "acked-writes", "dup-id": "idgen",
          "stale-read": "register", "txn-half": "bank",
          "index-drop": "gsi"}


def experiments():
    out = {}
    for path in sorted(glob.glob(os.path.join(EXPERIMENTS, "*.exp"))):
        name = os.path.basename(path)[:-4]
        with open(path) as f:
            out[name] = parse(f.read(), name)
    return out


def client(endpoint):
    import boto3
    from botocore.config import Config
    return boto3.client(
        "dynamodb", endpoint_url=endpoint, region_name="us-east-1",
        aws_access_key_id="AKIDCHAOS", aws_secret_access_key="chaos",
        config=Config(retries={"mode": "standard", "total_max_attempts": 1},
                      connect_timeout=2, read_timeout=4,
                      max_pool_connections=2))


def run_one(exp, args, out, log=print):
    """Runs experiment exp; returns its summary."""
    seed = args.seed
    rng = random.Random(seed)
    plant = args.plant
    if plant and ":" not in plant:
        plant += ":50"
    wl = WORKLOADS[exp["workload"]](random.Random(rng.random()), plant)
    clients = args.clients or exp["clients"]
    c = LabCluster(settings=exp["settings"], plant=plant)
    hist = History()
    nem = Nemesis(c, hist, random.Random(rng.random()))
    ok = False
    try:
        c.start()
        ddb = client(c.endpoint)
        wl.setup(ddb)
        stop = threading.Event()
        hist.t0 = time.monotonic()

        def worker(p):
            ddb = client(c.endpoint)
            prng = random.Random("%s-%d" % (seed, p))
            while not stop.is_set():
                wl.step(hist, p, ddb, prng)

        threads = [threading.Thread(target=worker, args=(p,), daemon=True)
                   for p in range(clients)]
        nthread = threading.Thread(target=nem.run, args=(exp, stop),
                                   daemon=True)
        for t in threads:
            t.start()
        nthread.start()
        stop.wait(args.seconds)
        stop.set()
        nthread.join(60)
        for t in threads:
            t.join(30)
        ran = hist.now()
        nem.finish()
        c.restore()
        verdicts = wl.check(hist, ddb)
        # Every process stops by SIGTERM, so that a sanitizer build
        # reports leaks; a report in any log fails the run.
        c.stop()
        found = c.sanitizer_reports()
        verdicts["process-logs"] = {"valid": not found,
                                    "sanitizer_reports": len(found),
                                    "counterexamples": found[:5]}
        s = report.summary(exp, args, hist, verdicts, nem.injected, ran)
        ok = s["passed"]
        return s
    finally:
        try:
            os.makedirs(out, exist_ok=True)
            hist.save(out)
            if "s" in locals():
                report.write_json(s, out)
                png = report.timeline(hist, out, report.closing_line(s))
                if png is None:
                    log("chaos: gnuplot could not draw %s" % out)
            c.stop()
            if not ok or args.keep_logs:
                logs = os.path.join(out, "logs")
                os.makedirs(logs, exist_ok=True)
                for p in c.procs():
                    if os.path.exists(p.log):
                        shutil.copy(p.log, logs)
        finally:
            c.cleanup()


def cmd_list(args):
    for name, exp in experiments().items():
        about = exp["about"][0] if exp["about"] else ""
        print("%-24s %s" % (name, about))
    return 0


def cmd_run(args):
    try:
        exps = experiments()
    except ExperimentError as e:
        sys.stderr.write("chaos: %s\n" % e)
        return 2
    if args.experiment not in exps:
        sys.stderr.write("chaos: no experiment %s (./kv chaos list)\n" %
                         args.experiment)
        return 2
    exp = exps[args.experiment]
    if args.plant:
        kind = args.plant.split(":")[0]
        if PLANTS.get(kind) != exp["workload"]:
            sys.stderr.write("chaos: --plant %s is caught by the %s "
                             "workload, not %s\n" % (
                                 kind, PLANTS.get(kind, "(none)"),
                                 exp["workload"]))
            return 2
    if args.seed is None:
        args.seed = random.randrange(1 << 31)
    out = args.out or os.path.join(
        REPO, ".kv", "chaos", "%s-%s" % (args.experiment,
                                         time.strftime("%Y%m%d-%H%M%S")))
    s = run_one(exp, args, out, log=lambda m: sys.stderr.write(m + "\n"))
    if args.json:
        json.dump(s, sys.stdout, indent=1, sort_keys=True, default=str)
        print()
    else:
        print(report.closing_line(s))
        print("chaos: report in %s" % out)
    return 0 if s["passed"] else 1


def cmd_soak(args):
    exps = experiments()
    names = args.experiments.split(",") if args.experiments else list(exps)
    for n in names:
        if n not in exps:
            sys.stderr.write("chaos: no experiment %s\n" % n)
            return 2
    rng = random.Random(args.seed)
    end = time.monotonic() + args.minutes * 60
    root = args.out or os.path.join(REPO, ".kv", "chaos",
                                    "soak-" + time.strftime("%Y%m%d-%H%M%S"))
    i = 0
    while time.monotonic() < end:
        name = names[i % len(names)]
        i += 1
        left = end - time.monotonic()
        run_args = argparse.Namespace(
            seed=rng.randrange(1 << 31), plant=None, clients=None,
            seconds=max(10.0, min(args.run_seconds, left - 20)),
            keep_logs=False)
        out = os.path.join(root, "%03d-%s" % (i, name))
        s = run_one(exps[name], run_args, out)
        print(report.closing_line(s), flush=True)
    return print_totals(root, args.minutes)


def print_totals(root, minutes=None):
    """Sums the summaries of the runs under root (a soak's folder) into
    root/soak.json and one line; 0 when no run had a violation."""
    t = {"runs": 0, "seconds": 0.0, "operations": 0, "ok": 0, "info": 0,
         "faults": {}, "checkers": {}, "violations": 0, "failed_runs": []}
    for path in sorted(glob.glob(os.path.join(root, "*", "summary.json"))):
        with open(path) as f:
            s = json.load(f)
        t["runs"] += 1
        t["seconds"] += s["seconds"]
        for k in ("operations", "ok", "info"):
            t[k] += s["operations"][k]
        for k, v in s["faults"].items():
            t["faults"][k] = t["faults"].get(k, 0) + v
        # Every count a checker reports, summed over its runs.
        for name, v in s["checkers"].items():
            d = t["checkers"].setdefault(name, {"runs": 0, "invalid": 0})
            d["runs"] += 1
            d["invalid"] += v["valid"] is not True
            for k, x in v.items():
                if isinstance(x, int) and not isinstance(x, bool):
                    d[k] = d.get(k, 0) + x
        t["violations"] += s["violations"]
        if not s["passed"]:
            t["failed_runs"].append(os.path.dirname(path))
    with open(os.path.join(root, "soak.json"), "w") as f:
        json.dump(t, f, indent=1, sort_keys=True)
    faults = ",".join("%s:%d" % kv for kv in sorted(t["faults"].items()))
    print("chaos soak: %sruns=%d seconds=%d ops=%d ok=%d info=%d faults=%s "
          "violations=%d" % ("minutes=%g " % minutes if minutes else "",
                             t["runs"], t["seconds"], t["operations"],
                             t["ok"], t["info"], faults, t["violations"]))
    for name, d in sorted(t["checkers"].items()):
        print("  %s: %s" % (name, " ".join(
            "%s=%d" % kv for kv in sorted(d.items()))))
    return 0 if t["violations"] == 0 else 1


def main(argv=None):
    ap = argparse.ArgumentParser(prog="kv chaos")
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("list", help="the built-in experiments")
    r = sub.add_parser("run", help="run one experiment")
    r.add_argument("experiment")
    r.add_argument("--seconds", type=float, default=30.0)
    r.add_argument("--seed", type=int)
    r.add_argument("--json", action="store_true")
    r.add_argument("--plant", help="KIND[:N]: a fault planted in the nodes")
    r.add_argument("--out")
    r.add_argument("--clients", type=int)
    r.add_argument("--keep-logs", action="store_true")
    s = sub.add_parser("soak", help="run experiments for many minutes")
    s.add_argument("--minutes", type=float, default=30.0)
    s.add_argument("--experiments")
    s.add_argument("--seed", type=int, default=1)
    s.add_argument("--run-seconds", type=float, default=120.0)
    s.add_argument("--out")
    t = sub.add_parser("totals", help="sum up a soak's folder again")
    t.add_argument("folder")
    args = ap.parse_args(argv)
    if args.cmd == "totals":
        return print_totals(args.folder)
    return {"list": cmd_list, "run": cmd_run, "soak": cmd_soak}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
