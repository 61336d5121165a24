#!/usr/bin/env python3
"""run.py — the hot-partition experiment (SEEDS.md section 1).

View events: each event is one counter write (UpdateItem ADD n :one, an
item well under 1 KB, so 1 WCU) on a product; products are drawn from a
Zipf distribution whose hottest product receives 5.99 % of the events.
The offered rate is stepped up over time. With a per-partition ceiling of
C WCU, the partition holding the hot product must start to throttle at an
offered rate of C / s, where s is the share of events that land on that
partition: the hot product's 5.99 % plus its partition-mates' shares,
computed here from the same Zipf weights and the table's partition map.
A second run shards the hot product's key 10 ways (PROD#0#0 .. #9, the
write-sharding fix of SEEDS.md section 4), which moves the onset out.

What it does, for each run: starts nothing new but a table on a fresh
cluster (its own processes, ceilings scaled down so that this machine can
offer several times the ceiling), runs kv-load open loop at each step's
rate, reads every partition's admitted / throttled counters from the
router's /metrics at the start and end of a measuring window inside the
step, and writes

  OUT/hot_partition.csv   one row per run, step and partition
  OUT/summary.json        predicted and measured onsets, the verdict
  OUT/hot_partition.png   accepted and throttled rates against offered

The verdict, per run: at every step offered at or below 0.9 x the
predicted onset no partition throttles more than 1 % of its requests; at
every step where the hot partition was offered 1.15 x its ceiling or more
(at least two steps) it throttles and accepts its ceiling (+-10 %); and
the measured onset — the hot partition's accepted rate where it
throttles, divided by its measured share of the offered events — lies
within +-10 % of the predicted C / s. Exit status 0 when both runs pass.

A partition holds one second of capacity (node/capacity/bucket.h), so just above
the onset it takes a while to run dry (at 1.1 x, ten seconds). Each step
therefore runs for 1.5 s, or 1.5 / (m - 1) + 1 s at m x the onset, before
its measuring window opens, and the steps just above the onset are left
out: their throttling would be a transient, not the steady state.

Burst credit is switched off (burst-seconds 0): with DynamoDB's 300 s the
quiet early steps would bank credit and the onset would show late by
however long that credit lasts, which is burst capacity working, not the
ceiling.

  chaos/hot_partition/run.py [--out DIR] [--wcu C] [--partitions P]
      [--products N] [--step-seconds S] [--quick]

--quick runs three steps per run (0.8, 1.3 and 2.0 x the onset), for the
test suite. This experiment never splits a partition (split-after-seconds
0): the partition map stays the one the table was created with.

  chaos/hot_partition/run.py --adaptive [options]

runs the same workload with adaptive capacity on instead (adaptive.py,
which takes its own options: --adaptive --help).
"""

import argparse
import csv
import json
import os
import subprocess
import sys
import time

import xxhash

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))
sys.path.insert(0, os.path.join(REPO, "tests", "integration"))

from cluster import Cluster  # noqa: E402

HOT_SHARE = 0.0599
PREFIX = "PROD#"
SHARDS = 10
FULL_STEPS = [0.5, 0.7, 0.8, 0.9, 1.2, 1.4, 1.7, 2.0]
QUICK_STEPS = [0.8, 1.3, 2.0]


def zipf_theta(n, share):
    """θ such that rank 0 of a Zipf(θ) over n keys gets `share` of the
    draws (weights 1 / (i + 1)^θ); the same bisection kv-load does."""
    lo, hi = 0.0, 5.0
    for _ in range(100):
        mid = (lo + hi) / 2
        p0 = 1.0 / sum((i + 1) ** -mid for i in range(n))
        if p0 < share:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def key_weights(n, theta, shards):
    """[(key, probability)] of one event, as kv-load draws them."""
    w = [(i + 1) ** -theta for i in range(n)]
    total = sum(w)
    out = []
    for i, x in enumerate(w):
        p = x / total
        if i == 0 and shards > 1:
            out += [("%s0#%d" % (PREFIX, j), p / shards)
                    for j in range(shards)]
        else:
            out.append(("%s%d" % (PREFIX, i), p))
    return out


def partition_of(parts, key):
    h = xxhash.xxh3_64_intdigest(b"\x01" + key.encode())
    for p in parts:
        if p["lo"] <= h <= p["last"]:
            return p["part"]
    raise AssertionError(key)


def shares(parts, weights):
    s = {p["part"]: 0.0 for p in parts}
    for k, p in weights:
        s[partition_of(parts, k)] += p
    return s


def counters_from(metrics, table):
    """{partition: (admitted, throttled)} of the table's writes, from a
    parsed /metrics (Cluster.metrics())."""
    out = {}
    for (name, labels), v in metrics.items():
        d = dict(labels)
        if d.get("table") != table or "partition" not in d:
            continue
        p = int(d["partition"])
        a, t = out.get(p, (0.0, 0.0))
        if name == "kv_partition_admitted_writes_total":
            a = v
        elif name == "kv_partition_throttled_writes_total":
            t = v
        out[p] = (a, t)
    return out


def part_counters(cluster, table):
    """{partition: (admitted, throttled)} of the table's writes."""
    return counters_from(cluster.metrics(), table)


def kvload_path():
    """kv-load of $KV_BUILD (default build/); exits when it is missing."""
    build = os.environ.get("KV_BUILD") or os.path.join(REPO, "build")
    kvload = os.path.join(build, "chaos", "load", "kv-load")
    if not os.access(kvload, os.X_OK):
        sys.exit("kv-load is missing: build first (./kv build)")
    return kvload


def create_table(cluster, table):
    """An on-demand table with a string hash key pk; returns its
    partitions (Cluster.table_partitions) once it is ACTIVE."""
    ddb = cluster.client(attempts=5)
    ddb.create_table(
        TableName=table, BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}])
    ddb.get_waiter("table_exists").wait(
        TableName=table, WaiterConfig={"Delay": 0.2, "MaxAttempts": 100})
    return cluster.table_partitions(table)


def start_load(cluster, kvload, table, products, theta, rate, duration,
               summary, shards=1):
    """Starts kv-load sending view events (counter writes on PREFIX<rank>,
    Zipf(theta) over `products`) open loop at `rate` for `duration`
    seconds, its summary to `summary`; the seed is the rate, so a rate
    draws the same events run after run. Returns the Popen."""
    cmd = [kvload, "--url", cluster.endpoint, "--table", table,
           "--workload", "counter", "--keys", str(products),
           "--key-prefix", PREFIX, "--dist", "zipf:%.9f" % theta,
           "--rate", str(rate), "--duration", "%.1f" % duration,
           "--connections", "64", "--json", summary, "--seed", str(rate)]
    if shards > 1:
        cmd += ["--shard-hot", str(shards)]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def finish_load(p, summary, timeout=120):
    """Waits for kv-load p; returns its summary (raises if it failed)."""
    out, err = p.communicate(timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError("kv-load failed (%d):\n%s\n%s" % (
            p.returncode, out, err))
    with open(summary) as f:
        s = json.load(f)
    os.unlink(summary)
    return s


def run_step(cluster, kvload, table, args, rate, shards, warm, window,
             theta):
    """Runs kv-load at `rate` for warm + window (+ a margin) seconds;
    returns (per-partition {part: (offered, accepted, throttled)} rates
    in the window, kv-load's summary)."""
    summary = os.path.join(args.out, ".step.json")
    p = start_load(cluster, kvload, table, args.products, theta, rate,
                   warm + window + 0.5, summary, shards)
    time.sleep(warm)
    c0, t0 = part_counters(cluster, table), time.monotonic()
    time.sleep(window)
    c1, t1 = part_counters(cluster, table), time.monotonic()
    s = finish_load(p, summary)
    dt = t1 - t0
    rates = {}
    for part, (a1, th1) in c1.items():
        a0, th0 = c0.get(part, (0.0, 0.0))
        acc, thr = (a1 - a0) / dt, (th1 - th0) / dt
        rates[part] = (acc + thr, acc, thr)
    return rates, s


def experiment(args, cluster, kvload, name, shards, steps, writer):
    table = "views-" + name
    parts = create_table(cluster, table)
    theta = zipf_theta(args.products, HOT_SHARE)
    sh = shares(parts, key_weights(args.products, theta, shards))
    hot = max(sh, key=sh.get)
    onset = args.wcu / sh[hot]
    print("%s: theta %.4f, hot partition %d holds %.2f %% of events; "
          "predicted onset %.0f events/s (ceiling %d WCU)" % (
              name, theta, hot, 100 * sh[hot], onset, args.wcu))
    rows = []
    for i, m in enumerate(steps):
        rate = max(1, int(round(m * onset)))
        warm = args.warm if m <= 1 else 1.5 / (m - 1) + 1.0
        rates, s = run_step(cluster, kvload, table, args, rate, shards,
                            warm, args.step_seconds, theta)
        tot = [sum(r[k] for r in rates.values()) for k in range(3)]
        hr = rates.get(hot, (0, 0, 0))
        frac = hr[2] / hr[0] if hr[0] else 0.0
        worst = max((r[2] / r[0] if r[0] else 0.0) for r in rates.values())
        print("  step %2d  offered %6.0f/s  accepted %6.0f/s  throttled "
              "%6.0f/s | hot partition: offered %5.1f accepted %5.1f "
              "throttled %5.1f (%4.1f %%)" % (
                  i, tot[0], tot[1], tot[2], hr[0], hr[1], hr[2],
                  100 * frac))
        for part in sorted(rates):
            o, a, t = rates[part]
            writer.writerow([name, i, rate, "%.1f" % tot[0],
                             "%.1f" % tot[1], "%.1f" % tot[2], part,
                             int(part == hot), "%.5f" % sh[part],
                             "%.2f" % o, "%.2f" % a, "%.2f" % t])
        rows.append({"step": i, "multiple": m, "rate": rate,
                     "offered": tot[0], "accepted": tot[1],
                     "throttled": tot[2], "hot_offered": hr[0],
                     "hot_accepted": hr[1], "hot_throttled": hr[2],
                     "hot_fraction": frac, "worst_fraction": worst,
                     "client": s.get("totals", s)})
    # Judged on what the hot partition was offered in the window (the
    # events are random draws: a step at 1.2 x may give it 1.1 x).
    below = [r for r in rows if r["multiple"] <= 0.9]
    above = [r for r in rows if r["hot_offered"] >= 1.15 * args.wcu]
    ok_below = all(r["worst_fraction"] <= 0.01 for r in below)
    ok_above = len(above) >= 2 and all(
        r["hot_fraction"] > 0.01 and
        abs(r["hot_accepted"] - args.wcu) <= 0.1 * args.wcu for r in above)
    if not above:
        above = rows[-1:]
    # The onset measured: the ceiling the hot partition held, over the
    # share of the offered events it received.
    ceiling = sum(r["hot_accepted"] for r in above) / len(above)
    share = sum(r["hot_offered"] for r in rows) / sum(
        r["offered"] for r in rows)
    measured = ceiling / share
    ok_onset = abs(measured - onset) <= 0.1 * onset
    print("  %s: no throttling at <= 0.9 x onset: %s; offered >= 1.15 x "
          "its ceiling, the hot partition throttles and holds it: %s "
          "(%.1f WCU/s); "
          "measured share %.2f %%, onset %.0f events/s (predicted %.0f): %s"
          % (name, ok_below, ok_above, ceiling, 100 * share, measured,
             onset, ok_onset))
    return {"run": name, "shards": shards, "theta": theta,
            "hot_partition": hot, "hot_share": sh[hot],
            "measured_share": share, "measured_ceiling": ceiling,
            "partition_shares": sh, "predicted_onset": onset,
            "measured_onset": measured, "pass_below": ok_below,
            "pass_above": ok_above, "pass_onset": ok_onset, "steps": rows}


def plot(args, results):
    data = os.path.join(args.out, ".plot.dat")
    with open(data, "w") as f:
        for r in results:
            f.write("# %s\n" % r["run"])
            for s in r["steps"]:
                f.write("%.1f %.1f %.1f %.2f %.2f %.2f\n" % (
                    s["offered"], s["accepted"], s["throttled"],
                    s["hot_offered"], s["hot_accepted"], s["hot_throttled"]))
            f.write("\n\n")
    png = os.path.join(args.out, "hot_partition.png")
    arrows = "".join(
        "set arrow from %f, graph 0 to %f, graph 1 nohead dt 2 lc %d\n"
        "set label 'predicted onset (%s)' at %f, graph 0.97 rotate by 90 "
        "right offset -0.8,0 font ',9'\n" % (
            r["predicted_onset"], r["predicted_onset"], i + 1, r["run"],
            r["predicted_onset"]) for i, r in enumerate(results))
    script = """
set terminal pngcairo size 1100,650 font ',10'
set output '%s'
set title 'Hot partition: %d WCU per partition, %d partitions, hottest product %.2f %% of events'
set xlabel 'offered events per second (whole table)'
set ylabel 'requests per second'
set key below
set grid
set yrange [0:*]
%s
plot '%s' index 0 using 1:4 with linespoints lw 1 dt 2 lc 1 title 'plain: offered to the hot partition', \
     '' index 0 using 1:5 with linespoints lw 2 lc 1 title 'plain: hot partition accepted', \
     '' index 0 using 1:6 with linespoints lw 2 dt 3 lc 1 title 'plain: hot partition throttled', \
     '' index 1 using 1:4 with linespoints lw 1 dt 2 lc 2 title 'hot key sharded 10 ways: offered to the hot partition', \
     '' index 1 using 1:5 with linespoints lw 2 lc 2 title 'sharded: hot partition accepted', \
     '' index 1 using 1:6 with linespoints lw 2 dt 3 lc 2 title 'sharded: hot partition throttled', \
     %d with lines lc 0 dt 4 title 'ceiling'
""" % (png, args.wcu, args.partitions, 100 * HOT_SHARE, arrows, data,
       args.wcu)
    subprocess.run(["gnuplot"], input=script, text=True, check=True)
    os.unlink(data)
    return png


def main():
    if "--adaptive" in sys.argv[1:]:
        import adaptive
        sys.exit(adaptive.main([a for a in sys.argv[1:]
                                if a != "--adaptive"]))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(REPO, "chaos",
                                                  "hot_partition", "out"))
    ap.add_argument("--wcu", type=int, default=25,
                    help="write ceiling per partition (default 25)")
    ap.add_argument("--partitions", type=int, default=16)
    ap.add_argument("--products", type=int, default=10000)
    ap.add_argument("--step-seconds", type=float, default=4.0,
                    help="measuring window per step")
    ap.add_argument("--warm", type=float, default=1.5,
                    help="seconds of each step before measuring (the "
                    "partition's first second of capacity is spent)")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--adaptive", action="store_true",
                    help="run the adaptive-capacity experiment instead "
                    "(adaptive.py; --adaptive --help lists its options)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    kvload = kvload_path()
    os.environ["KV_ENDPOINT"] = ""  # always a cluster of our own
    # split-after-seconds 0: adaptive capacity off, the partition map
    # stays the one the table was created with (see adaptive.py for the
    # experiment with it on).
    cluster = Cluster(partitions=args.partitions, settings=[
        "partition-wcu %d" % args.wcu,
        "partition-rcu %d" % (3 * args.wcu), "burst-seconds 0",
        "split-after-seconds 0"])
    steps = QUICK_STEPS if args.quick else FULL_STEPS
    results = []
    try:
        cluster.start()
        with open(os.path.join(args.out, "hot_partition.csv"), "w",
                  newline="") as f:
            w = csv.writer(f)
            w.writerow(["run", "step", "target_rate", "offered", "accepted",
                        "throttled", "partition", "hot", "predicted_share",
                        "p_offered", "p_accepted", "p_throttled"])
            for name, shards in (("plain", 1), ("sharded", SHARDS)):
                results.append(experiment(args, cluster, kvload, name,
                                          shards, steps, w))
    finally:
        cluster.stop()
        cluster.cleanup(keep=False)
    png = plot(args, results)
    ok = all(r["pass_below"] and r["pass_above"] and r["pass_onset"]
             for r in results)
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump({"wcu": args.wcu, "partitions": args.partitions,
                   "products": args.products, "hot_share": HOT_SHARE,
                   "pass": ok, "runs": results}, f, indent=1, default=str)
    p, s = results
    print("onset: plain %.0f events/s (measured %.0f), sharded 10 ways "
          "%.0f (measured %.0f): x%.2f; CSV, summary and %s in %s" % (
              p["predicted_onset"], p["measured_onset"],
              s["predicted_onset"], s["measured_onset"],
              s["predicted_onset"] / p["predicted_onset"],
              os.path.basename(png), args.out))
    print("verdict: %s" % ("PASS" if ok else "FAIL"))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
