"""txn.py — ./kv bench --txn: what transactions cost.

On a fresh cluster of its own (three nodes, the ceilings lifted, as
./kv bench runs) and, with --vs ddb-local, on DynamoDB Local in the same
run (dynalite has no transactions: it is skipped with a note), four
workloads, each closed loop, --connections connections, --seconds per
run, --rounds rounds, the targets taking turns (their order reversed
every other round) and each alone while it runs (the others paused):

 1. put          PutItem of one item: the reference;
 2. txn-put2     TransactWriteItems of 2 Puts on two distinct random keys
                 (on our cluster, with three nodes, most pairs are on two
                 nodes: a two-phase commit across nodes);
 3. txn-update4  TransactWriteItems of 4 Updates ADD n :one on four
                 distinct random keys;
 4. txn-get4     TransactGetItems of 4 distinct random keys, each answer
                 checked (every item there, in order).

Keys uniform over 10,000 in one table (pk S), loaded first (kv-load
--workload txn-get4 --load: 10,000 items of 150 bytes) on every target.

Reported per target and workload (medians over the rounds): ops/s, p50
and p99, and the transactions canceled (TransactionCanceledException:
two transactions on one item at once; with 10,000 keys that should be
rare), per second and as a share of the answers, with their reasons.

Targets (issue: transactions): our 2-Put transaction at least 0.25 of our
PutItem's rate; each transaction workload on our cluster at least 20x
DynamoDB Local's. The verdict line says which hold; exit status 1 when
one does not, or when our cluster gave a wrong answer or an error.

With --smoke (the suite's chaos/bench_txn_smoke): 2 s per workload, one
round, our cluster only, every answer checked, the targets not judged.
JSON in .kv/bench/txn.json by default (--json).
"""

import json
import os
import statistics
import time

from measure import cpu_seconds

TABLE = "txn"
KEYS = 10000
# Name: (kv-load workload, its operation, what it is).
WORKLOADS = {
    "put": ("put", "PutItem", "PutItem, 1 item"),
    "txn-put2": ("txn-put2", "TransactWriteItems",
                 "TransactWriteItems, 2 Puts"),
    "txn-update4": ("txn-update4", "TransactWriteItems",
                    "TransactWriteItems, 4 Updates ADD n :one"),
    "txn-get4": ("txn-get4", "TransactGetItems",
                 "TransactGetItems, 4 items"),
}
TXNS = ["txn-put2", "txn-update4", "txn-get4"]
PUT2_RATIO = 0.25    # ours: txn-put2 / put
VS_RATIO = 20.0      # ours / DynamoDB Local, per transaction workload
JUDGED_PEER = "ddb-local"
# Peers of --vs without transactions, and why they are left out.
NO_TXN = {"dynalite": "dynalite implements neither TransactWriteItems "
                      "nor TransactGetItems"}


def load(args, kvload, t):
    """Creates the table on t and writes the 10,000 items the workloads
    read."""
    kvload(args, t.url, ["--table", TABLE, "--create", "--load",
                         "--workload", "txn-get4", "--keys", str(KEYS),
                         "--duration", "0"])


def run_one(args, kvload, t, name):
    """One closed-loop run of workload `name` on t: its figures."""
    wl, op, _ = WORKLOADS[name]
    c0 = cpu_seconds(t.pids)
    s = kvload(args, t.url, [
        "--table", TABLE, "--workload", wl, "--keys", str(KEYS),
        "--connections", str(args.connections),
        "--duration", str(args.seconds)])
    cpu = cpu_seconds(t.pids) - c0
    tot = s["totals"]
    o = s.get("ops", {}).get(op, {})
    return {"ok_per_s": tot["ok_per_s"], "p50_ms": tot["p50_ms"],
            # the target's processes' CPU per answer, in microseconds
            "cpu_us": 1e6 * cpu / max(1, tot["requests"]),
            "p99_ms": tot["p99_ms"], "requests": tot["requests"],
            "ok": tot["ok"], "throttled": tot["throttled"],
            "errors": tot["errors"], "wrong": tot["wrong"],
            "canceled": tot.get("canceled", 0),
            "canceled_per_s": tot.get("canceled_per_s", 0.0),
            "canceled_by_reason": o.get("canceled_by_reason", {}),
            "errors_by_type": o.get("errors_by_type", {}),
            "failed": s.get("_failed", False),
            "stdout": s["_stdout"] if s.get("_failed") else None}


def summary(runs):
    """Medians over the rounds of one target's runs of one workload, and
    the share of canceled answers over all of them."""
    req = sum(x["requests"] for x in runs)
    reasons = {}
    for x in runs:
        for k, v in x["canceled_by_reason"].items():
            reasons[k] = reasons.get(k, 0) + v
    return {
        "ops_per_s": statistics.median(x["ok_per_s"] for x in runs),
        "p50_ms": statistics.median(x["p50_ms"] for x in runs),
        "p99_ms": statistics.median(x["p99_ms"] for x in runs),
        "cpu_us": statistics.median(x["cpu_us"] for x in runs),
        "canceled_per_s": statistics.median(
            x["canceled_per_s"] for x in runs),
        "canceled_share": sum(x["canceled"] for x in runs) / req
        if req else 0.0,
        "canceled_by_reason": reasons,
        "errors": sum(x["errors"] for x in runs),
        "wrong": sum(x["wrong"] for x in runs),
    }


def peers_with_txn(args):
    """Leaves out of --vs the peers without transactions, saying so;
    returns what was left out and why."""
    skipped = {}
    for v in list(args.vs):
        if v in NO_TXN:
            skipped[v] = NO_TXN[v]
            print("note: --vs %s skipped: %s" % (v, NO_TXN[v]), flush=True)
    args.vs = [v for v in args.vs if v not in NO_TXN]
    return skipped


def bench_txn(args, kvload, start_cluster, start_peers, lifted, Alone):
    skipped = peers_with_txn(args)
    kv = start_cluster(args, lifted, "kv")
    targets = [kv] + start_peers(args)
    names = list(WORKLOADS)
    print("kv bench --txn: %d cores; closed loop, %d connections, %g s per "
          "run, %d round(s); keys uniform over %d, 150-byte items; "
          "targets: %s" % (os.cpu_count(), args.connections, args.seconds,
                           args.rounds, KEYS,
                           ", ".join(t.name for t in targets)), flush=True)
    for t in targets:
        with Alone(targets, t):
            load(args, kvload, t)
    runs = {t.name: {n: [] for n in names} for t in targets}
    bad = []
    for r in range(args.rounds):
        for n in names:
            order = targets if r % 2 == 0 else list(reversed(targets))
            for t in order:
                with Alone(targets, t):
                    x = run_one(args, kvload, t, n)
                runs[t.name][n].append(x)
                if t is kv and (x["errors"] or x["wrong"] or x["failed"]):
                    bad.append((n, x))
                note = ""
                if n in TXNS:
                    share = x["canceled"] / x["requests"] if x[
                        "requests"] else 0.0
                    note += "  canceled %.1f/s (%.2f %%)" % (
                        x["canceled_per_s"], 100 * share)
                if x["errors"] or x["wrong"]:
                    note += "  errors %s" % json.dumps(x["errors_by_type"])
                print("  round %d %-12s %-9s %9.0f ops/s  p50 %7.2f ms  "
                      "p99 %7.2f ms  CPU %6.1f us/op%s" % (
                          r + 1, n, t.name, x["ok_per_s"], x["p50_ms"],
                          x["p99_ms"], x["cpu_us"], note), flush=True)
                if x["failed"]:
                    print(x["stdout"].rstrip(), flush=True)
    med = dict((t, dict((n, summary(v)) for n, v in by.items()))
               for t, by in runs.items())
    print()
    print("%-12s %-9s %10s %9s %9s %9s %12s %10s  %s" % (
        "workload", "target", "ops/s", "p50 ms", "p99 ms", "CPU us",
        "canceled/s", "canceled", "reasons"))
    for n in names:
        for t in targets:
            m = med[t.name][n]
            txn = n in TXNS
            print("%-12s %-9s %10.0f %9.2f %9.2f %9.1f %12s %10s  %s" % (
                n, t.name, m["ops_per_s"], m["p50_ms"], m["p99_ms"],
                m["cpu_us"],
                "%.1f" % m["canceled_per_s"] if txn else "-",
                "%.3f %%" % (100 * m["canceled_share"]) if txn else "-",
                ", ".join("%s %d" % item for item in sorted(
                    m["canceled_by_reason"].items())) or "-"))
    why = []
    ours = med["kv"]

    def held(ok):
        # A smoke run's figures are too short to judge.
        return "not judged" if args.smoke else "PASS" if ok else "FAIL"
    put2 = (ours["txn-put2"]["ops_per_s"] / ours["put"]["ops_per_s"]
            if ours["put"]["ops_per_s"] else 0.0)
    ok = put2 >= PUT2_RATIO
    print("\nkv 2-put transaction / kv PutItem: %.3f (target at least "
          "%.2f): %s" % (put2, PUT2_RATIO, held(ok)))
    if not ok:
        why.append("2-put transaction %.3f of PutItem (target %.2f)" % (
            put2, PUT2_RATIO))
    vs = {}
    for peer in (t.name for t in targets[1:]):
        vs[peer] = {}
        for n in names:
            theirs = med[peer][n]["ops_per_s"]
            ratio = ours[n]["ops_per_s"] / theirs if theirs else None
            vs[peer][n] = ratio
            judged = peer == JUDGED_PEER and n in TXNS
            verdict = ""
            if judged:
                ok = ratio is not None and ratio >= VS_RATIO
                verdict = " (target at least %.0fx): %s" % (
                    VS_RATIO, held(ok))
                if not ok:
                    why.append("%s %s x %s (target %.0fx)" % (
                        n, "%.1f" % ratio if ratio is not None else "n/a",
                        peer, VS_RATIO))
            print("kv / %s, %s (%s): %s%s" % (
                peer, n, WORKLOADS[n][2],
                "%.1fx" % ratio if ratio is not None else
                "no answer from %s" % peer, verdict))
    if JUDGED_PEER not in vs and not args.smoke:
        print("no %s in this run (--vs %s): the %.0fx target is not "
              "judged" % (JUDGED_PEER, JUDGED_PEER, VS_RATIO))
    for t in targets:
        print("%s canceled: %s" % (t.name, "; ".join(
            "%s %.1f/s (%.3f %% of answers)" % (
                n, med[t.name][n]["canceled_per_s"],
                100 * med[t.name][n]["canceled_share"]) for n in TXNS)))
    res = {
        "when": time.strftime("%Y-%m-%d %H:%M:%S"),
        "cores": os.cpu_count(), "connections": args.connections,
        "seconds": args.seconds, "rounds": args.rounds, "keys": KEYS,
        "targets": [t.name for t in targets], "skipped": skipped,
        "workloads": dict((n, w[2]) for n, w in WORKLOADS.items()),
        "runs": runs, "medians": med,
        "put2_over_put": put2, "put2_over_put_target": PUT2_RATIO,
        "vs": vs, "vs_target": VS_RATIO,
        "cluster_failures": [{"workload": n, "errors_by_type":
                              x["errors_by_type"], "errors": x["errors"],
                              "wrong": x["wrong"]} for n, x in bad],
    }
    if bad:
        print("FAILED: wrong answers or errors from the cluster: %s" % (
            "; ".join("%s: %s" % (n, json.dumps(x["errors_by_type"]))
                      for n, x in bad)))
    res["why"] = why
    res["verdict"] = "FAIL" if why else "PASS"
    if args.smoke:
        res["verdict"] = "not judged"
    os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump(res, f, indent=1)
    if args.smoke:
        # The suite's short run checks that every workload runs and every
        # answer was right (kv-load fails the run otherwise), not speed.
        print("smoke run: the targets are not judged")
        return 1 if bad else 0
    print("verdict: %s%s" % (res["verdict"], ": " + "; ".join(why)
                             if why else ""))
    return 1 if why or bad else 0
