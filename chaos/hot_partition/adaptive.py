#!/usr/bin/env python3
"""adaptive.py — the hot-partition experiment with adaptive capacity on.

`./kv hot-partition --adaptive` (run.py --adaptive dispatches here). The
workload is run.py's: view events, one counter write each, Zipf over the
products with the hottest one, PROD#0, at 5.99 % of the events; 16
partitions, a ceiling of C WCU each, no burst credit. The nodes' adaptive
capacity is on and scaled down like the ceiling: a partition that
consumes at least split-threshold x C in each of split-after-seconds
consecutive seconds is split by the catalog node, at the hash of a key
that holds half of its load or more (which then sits alone in a
partition of a single hash, [h, h]), else where its traffic halves.

Phase 1 offers a fixed rate above the plain onset (1.5 x C / s, with s
the share of events of the partition that holds PROD#0 at creation),
for long enough that the splits settle. Every second the router's
/metrics gives each partition's accepted and throttled writes (deltas of
its counters; partition ids change with splits: the split one
disappears, its parts appear); the split events come from
`kv-admin status --events`.

Phase 2 steps the offered rate around C / 0.0599, the rate at which
PROD#0 alone exceeds its partition's ceiling. Each step runs until no
split happened for split-after-seconds + 2 s (and the hot partition's
stored second of capacity is spent), at most --max-warm seconds, then
measures a window of --window seconds.

Verdict (exit status 0 only if all hold):
  mates    in phase 1's last window, every partition other than PROD#0's
           throttles < 1 % of what it is offered (throttling of the hot
           product's partition-mates stopped after the splits);
  alone    PROD#0 ends alone in its partition: lo == last == its hash
           (status --json, after phase 1 and at the end);
  onset    the measured onset (the ceiling PROD#0's partition holds at
           the steps where it is offered >= 1.15 C, at least two, over
           PROD#0's measured share of the events) is within +-10 % of
           C / 0.0599; at steps <= 0.9 x that no partition throttles
           more than 1 %, and at every phase-2 window no partition but
           PROD#0's does (the table throttles exactly when the hot
           product alone exceeds C);
  cap      PROD#0's partition never accepts more than C (+10 %) in any
           measuring window (phase 1's last window and every step's).

Output in --out (default chaos/hot_partition/out/):
  hot_partition_adaptive.csv          one row per second and partition
  hot_partition_adaptive_steps.csv    one row per phase-2 step
  hot_partition_adaptive_events.jsonl the table's split and move events
  hot_partition_adaptive.png          accepted and throttled writes per
                                      second per partition, splits marked
  summary_adaptive.json               figures and verdict

--quick (the test suite's form, about 90 s): phase 1 of 20 s, steps 0.9,
1.3 and 1.6 x, windows of 4 s, at most 12 s of warm-up per step.
"""

import argparse
import csv
import datetime
import json
import os
import signal
import subprocess
import sys
import threading
import time

import xxhash

import run as hp

C_DEFAULT = 25
FULL_STEPS = [0.8, 0.9, 1.1, 1.3, 1.6]
QUICK_STEPS = [0.9, 1.3, 1.6]
HOT_KEY = hp.PREFIX + "0"


def key_hash(key):
    """A string partition key's hash (as core/keyenc.c computes it)."""
    return xxhash.xxh3_64_intdigest(b"\x01" + key.encode())


def table_status(cluster, table):
    """The table's partitions from `kv-admin status --json`:
    [{id, lo, last (ints), node, ...}] sorted by lo."""
    doc = json.loads(cluster.admin("status", "--json"))
    for t in doc["tables"]:
        if t["name"] == table:
            parts = []
            for p in t["partitions"]:
                p = dict(p)
                p["lo"], p["last"] = int(p["lo"], 16), int(p["last"], 16)
                parts.append(p)
            return sorted(parts, key=lambda p: p["lo"])
    raise KeyError(table)


def holder(ranges, h):
    """The partition id whose [lo, last] holds hash h, or None."""
    for part, (lo, last) in ranges.items():
        if lo <= h <= last:
            return part
    return None


def router_requests(metrics):
    """The router's UpdateItem requests answered so far."""
    for (name, labels), v in metrics.items():
        if name == "kv_router_requests_total" and \
                dict(labels).get("op") == "UpdateItem":
            return v
    return 0.0


class Sampler:
    """Per-second samples of every partition's accepted and throttled
    writes (router /metrics deltas) and the table's partition map, kept
    current from the split events."""

    def __init__(self, cluster, table, parts):
        self.cluster, self.table = cluster, table
        self.ranges = {p["part"]: (p["lo"], p["last"]) for p in parts}
        self.initial_ranges = dict(self.ranges)
        self.hot_hash = key_hash(HOT_KEY)
        self.events = []
        self.seen_seq = set()
        self.samples = []  # dicts, see sample()
        self.t0 = time.monotonic()
        self.wall0 = time.time()
        before = time.monotonic()
        self.prev = self._read()
        self.prev_t = (before + time.monotonic()) / 2
        self.next_t = self.prev_t + 1.0

    def _read(self):
        m = self.cluster.metrics()
        return hp.counters_from(m, self.table), router_requests(m)

    def now(self):
        return time.monotonic() - self.t0

    def refresh_events(self):
        """Reads status --events; applies new splits to the map."""
        lines = self.cluster.admin("status", "--events").splitlines()
        for line in lines:
            if not line.strip():
                continue
            e = json.loads(line)
            if e.get("table") != self.table or e["seq"] in self.seen_seq:
                continue
            self.seen_seq.add(e["seq"])
            at = datetime.datetime.fromisoformat(
                e["time"].replace("Z", "+00:00")).timestamp()
            e["t"] = round(at - self.wall0, 3)
            self.events.append(e)
            if e.get("kind") == "split":
                self.ranges.pop(e["part"], None)
                for q in e.get("into", []):
                    self.ranges[q["part"]] = (int(q["lo"], 16),
                                              int(q["last"], 16))
        self.events.sort(key=lambda e: e["seq"])

    def sample(self, phase, rate, step):
        """Waits for the next whole second, samples, returns the
        sample: {t, dt, phase, rate, step, hot (partition holding
        PROD#0), parts: {part: (accepted, throttled) counts},
        router (requests counted by the router)}."""
        delay = self.next_t - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        self.next_t = max(self.next_t + 1.0, time.monotonic() + 0.5)
        before = time.monotonic()
        cur, rq = self._read()
        now = (before + time.monotonic()) / 2  # when the survey ran
        if any(p not in self.ranges for p in cur):
            self.refresh_events()
        prev, prq = self.prev
        dt = now - self.prev_t
        parts = {}
        for p, (a, t) in cur.items():
            a0, t0 = prev.get(p, (0.0, 0.0))
            parts[p] = (a - a0, t - t0)
        s = {"t": now - self.t0, "dt": dt, "phase": phase, "rate": rate,
             "step": step, "hot": holder(self.ranges, self.hot_hash),
             "parts": parts, "router": rq - prq}
        self.samples.append(s)
        # A node that missed a scrape leaves its partitions out of it:
        # their counters are kept, and the next scrape's delta covers
        # both seconds.
        prev.update(cur)
        self.prev, self.prev_t = (prev, rq), now
        return s

    def last_split_t(self):
        splits = [e["t"] for e in self.events if e.get("kind") == "split"]
        return max(splits) if splits else None


def window_rates(samples):
    """Per-partition (offered, accepted, throttled) rates over samples,
    the hot partition's (PROD#0's holder, sample by sample), and the
    totals."""
    secs = sum(s["dt"] for s in samples)
    per = {}
    hot = [0.0, 0.0]
    tot = [0.0, 0.0]
    for s in samples:
        for p, (a, t) in s["parts"].items():
            x = per.setdefault(p, [0.0, 0.0])
            x[0] += a
            x[1] += t
            tot[0] += a
            tot[1] += t
            if p == s["hot"]:
                hot[0] += a
                hot[1] += t
    rates = {p: ((a + t) / secs, a / secs, t / secs)
             for p, (a, t) in per.items()}
    return {"seconds": secs, "parts": rates,
            "hot": ((hot[0] + hot[1]) / secs, hot[0] / secs, hot[1] / secs),
            "total": ((tot[0] + tot[1]) / secs, tot[0] / secs,
                      tot[1] / secs),
            "router": sum(s["router"] for s in samples) / secs,
            "hot_parts": sorted({s["hot"] for s in samples
                                 if s["hot"] is not None})}


def others_worst(samples):
    """The largest share throttled of a partition other than PROD#0's
    (as throttled / offered over the samples), and that partition."""
    per = {}
    for s in samples:
        for p, (a, t) in s["parts"].items():
            if p == s["hot"]:
                continue
            x = per.setdefault(p, [0.0, 0.0])
            x[0] += a
            x[1] += t
    worst, which = 0.0, None
    for p, (a, t) in per.items():
        f = t / (a + t) if a + t > 0 else 0.0
        if f > worst:
            worst, which = f, p
    return worst, which


def stop_load(p, summary):
    """Stops kv-load p (SIGINT: it ends its run and writes its summary);
    returns the summary's totals, or {} when there is none."""
    if p.poll() is None:
        p.send_signal(signal.SIGINT)
    try:
        out, err = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
    try:
        with open(summary) as f:
            s = json.load(f)
        os.unlink(summary)
    except (OSError, ValueError):
        sys.stderr.write("kv-load left no summary (exit %s): %s\n" % (
            p.returncode, err[-2000:]))
        return {}
    return s.get("totals", {})


def run_phase(args, sampler, cluster, kvload, theta, phase, step, rate,
              min_warm, max_warm, window, settle):
    """Offers `rate` until the warm-up is over (at least min_warm s;
    with settle, until no split for split_after + 2 s, at most max_warm
    s), then for `window` more seconds. Returns (warm samples, window
    samples, kv-load totals and exit status, time the rate began)."""
    summary = os.path.join(args.out, ".adaptive-load.json")
    p = hp.start_load(cluster, kvload, sampler.table, args.products, theta,
                      rate, max_warm + window + 5, summary)
    start = sampler.now()
    warm, win = [], []
    try:
        while True:
            s = sampler.sample(phase, rate, step)
            el = s["t"] - start
            if el < min_warm:
                warm.append(s)
                continue
            last = sampler.last_split_t()
            quiet = last is None or s["t"] - last >= args.split_after + 2
            if not settle or quiet or el >= max_warm:
                break
            warm.append(s)
        win.append(s)
        win[0]["window"] = True
        for _ in range(int(round(window)) - 1):
            s = sampler.sample(phase, rate, step)
            s["window"] = True
            win.append(s)
    finally:
        totals = stop_load(p, summary)
    totals["exit"] = p.returncode
    return warm, win, totals, start


def main(argv):
    ap = argparse.ArgumentParser(
        prog="run.py --adaptive",
        description=__doc__.split("\n")[0],
        epilog="see chaos/hot_partition/README.md")
    ap.add_argument("--out", default=os.path.join(hp.REPO, "chaos",
                                                  "hot_partition", "out"))
    ap.add_argument("--wcu", type=int, default=C_DEFAULT,
                    help="write ceiling per partition (default 25)")
    ap.add_argument("--partitions", type=int, default=16)
    ap.add_argument("--products", type=int, default=10000)
    ap.add_argument("--split-after", type=int, default=4,
                    help="split-after-seconds (default 4)")
    ap.add_argument("--split-threshold", type=float, default=0.5,
                    help="split-threshold (default 0.5)")
    ap.add_argument("--phase1-multiple", type=float, default=1.5,
                    help="phase 1's rate, x the plain onset C / s")
    ap.add_argument("--phase1-seconds", type=float,
                    help="phase 1's length (default 60, quick 20)")
    ap.add_argument("--steps", help="phase 2's rates, x C / 0.0599, comma "
                    "separated (default 0.8,0.9,1.1,1.3,1.6; quick "
                    "0.9,1.3,1.6)")
    ap.add_argument("--window", type=float,
                    help="measuring window in s (default 8, quick 4)")
    ap.add_argument("--max-warm", type=float,
                    help="most seconds a step waits for the splits to "
                    "settle (default 40, quick 12)")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    q = args.quick
    if args.phase1_seconds is None:
        args.phase1_seconds = 20.0 if q else 60.0
    steps = [float(x) for x in args.steps.split(",")] if args.steps else (
        QUICK_STEPS if q else FULL_STEPS)
    if args.window is None:
        args.window = 4.0 if q else 8.0
    if args.max_warm is None:
        args.max_warm = 12.0 if q else 40.0
    os.makedirs(args.out, exist_ok=True)
    kvload = hp.kvload_path()
    os.environ["KV_ENDPOINT"] = ""  # always a cluster of our own
    settings = ["partition-wcu %d" % args.wcu,
                "partition-rcu %d" % (3 * args.wcu), "burst-seconds 0",
                "split-after-seconds %d" % args.split_after,
                "split-threshold %g" % args.split_threshold]
    cluster = hp.Cluster(partitions=args.partitions, settings=settings)
    table = "views-adaptive"
    C = float(args.wcu)
    onset = C / hp.HOT_SHARE  # PROD#0 alone in its partition
    began = time.monotonic()
    try:
        cluster.start()
        parts = hp.create_table(cluster, table)
        theta = hp.zipf_theta(args.products, hp.HOT_SHARE)
        sh = hp.shares(parts, hp.key_weights(args.products, theta, 1))
        hot0 = hp.partition_of(parts, HOT_KEY)
        plain = C / sh[hot0]
        rate1 = int(round(args.phase1_multiple * plain))
        print("adaptive: %d partitions, C = %d WCU, split after %d s at "
              ">= %.2f x C; PROD#0 is in partition %d with %.2f %% of "
              "events: plain onset %.0f events/s; phase 1 at %d/s for "
              "%.0f s" % (args.partitions, args.wcu, args.split_after,
                          args.split_threshold, hot0, 100 * sh[hot0],
                          plain, rate1, args.phase1_seconds), flush=True)
        sampler = Sampler(cluster, table, parts)
        hot_hash = sampler.hot_hash

        # ---- phase 1 ----
        _, win1, tot1, _ = run_phase(
            args, sampler, cluster, kvload, theta, 1, None, rate1,
            args.phase1_seconds - args.window, args.phase1_seconds,
            args.window, settle=False)
        p1 = window_rates(win1)
        mates_worst, mates_part = others_worst(win1)
        # The map after phase 1, read while phase 2 begins (status --json
        # takes a second; the load should not pause for it).
        st1 = []
        reader = threading.Thread(target=lambda: st1.extend(
            table_status(cluster, table)))
        reader.start()
        splits1 = [e for e in sampler.events if e.get("kind") == "split"]
        first_split = splits1[0]["t"] if splits1 else None
        iso = [e for e in splits1 if any(
            int(x["lo"], 16) == int(x["last"], 16) == hot_hash
            for x in e.get("into", []))]
        isolated_at = iso[0]["t"] if iso else None
        print("phase 1: %d splits, the first after %s s; PROD#0 alone "
              "after %s s; last window: PROD#0's partition %s offered "
              "%.1f accepted %.1f throttled %.1f /s; worst other "
              "partition throttles %.2f %%; %d partitions" % (
                  len(splits1), first_split, isolated_at,
                  p1["hot_parts"], *p1["hot"], 100 * mates_worst,
                  len(sampler.ranges)), flush=True)

        # ---- phase 2 ----
        rows = []
        for i, m in enumerate(steps):
            rate = int(round(m * onset))
            # A partition the new rate takes over the threshold splits
            # split-after-seconds (+ a tick) later: wait that long at
            # least, and then until no split for split-after + 2 s.
            min_warm = args.split_after + 4.0
            if m > 1:  # the hot partition's stored second, spent
                min_warm = max(min_warm, 1.5 / (m - 1) + 1.0)
            warm, win, totals, began_t = run_phase(
                args, sampler, cluster, kvload, theta, 2, i, rate,
                min_warm, max(args.max_warm, min_warm), args.window,
                settle=True)
            r = window_rates(win)
            ow, op = others_worst(win)
            hr = r["hot"]
            frac = hr[2] / hr[0] if hr[0] else 0.0
            worst_all = max(ow, frac)
            warmed = win[0]["t"] - win[0]["dt"] - began_t
            nsplit = len([e for e in sampler.events
                          if e.get("kind") == "split" and
                          e["t"] >= began_t])
            in_win = [e["seq"] for e in sampler.events
                      if e.get("kind") == "split" and
                      win[0]["t"] - win[0]["dt"] <= e["t"] <= win[-1]["t"]]
            row = {"step": i, "multiple": m, "rate": rate,
                   "warm_s": warmed, "window_s": r["seconds"],
                   "offered": r["total"][0], "accepted": r["total"][1],
                   "throttled": r["total"][2], "router_offered": r["router"],
                   "hot_partitions": r["hot_parts"], "hot_offered": hr[0],
                   "hot_accepted": hr[1], "hot_throttled": hr[2],
                   "hot_fraction": frac, "others_worst_fraction": ow,
                   "others_worst_partition": op,
                   "worst_fraction": worst_all,
                   "splits_in_step": nsplit, "splits_in_window": in_win,
                   "partitions": len(sampler.ranges), "client": totals}
            rows.append(row)
            reader.join()
            print("  step %d (%.1f x, %d/s, warm %.0f s, %d splits): "
                  "offered %.0f accepted %.0f throttled %.1f /s | PROD#0's "
                  "partition offered %.1f accepted %.1f throttled %.1f "
                  "(%.1f %%) | worst other %.2f %% | kv-load errors %s" % (
                      i, m, rate, warmed, nsplit, r["total"][0],
                      r["total"][1], r["total"][2], hr[0], hr[1], hr[2],
                      100 * frac, 100 * ow, totals.get("errors")),
                  flush=True)
        alone1 = [p for p in st1 if p["lo"] <= hot_hash <= p["last"]][0]
        st2 = table_status(cluster, table)
        alone2 = [p for p in st2 if p["lo"] <= hot_hash <= p["last"]][0]
        sampler.refresh_events()
    finally:
        cluster.stop()
        cluster.cleanup(keep=False)
    elapsed = time.monotonic() - began

    # ---- verdict ----
    ok_mates = mates_worst < 0.01
    ok_alone = all(p["lo"] == p["last"] == hot_hash
                   for p in (alone1, alone2))
    # PROD#0's share of the events, measured over phase 2 (its partition
    # is PROD#0 alone by then: its offered is PROD#0's events).
    p2 = [s for s in sampler.samples if s["phase"] == 2]
    all2 = window_rates(p2)
    share = all2["hot"][0] / all2["total"][0]
    above = [r for r in rows if r["hot_offered"] >= 1.15 * C]
    below = [r for r in rows if r["multiple"] <= 0.9]
    ok_above = len(above) >= 2 and all(
        r["hot_fraction"] > 0.01 and abs(r["hot_accepted"] - C) <= 0.1 * C
        for r in above)
    ok_below = all(r["worst_fraction"] <= 0.01 for r in below)
    ok_others = all(r["others_worst_fraction"] < 0.01 for r in rows)
    ceiling = (sum(r["hot_accepted"] for r in above) / len(above)
               if above else rows[-1]["hot_accepted"])
    measured = ceiling / share if share else 0.0
    ok_onset_value = abs(measured - onset) <= 0.1 * onset
    ok_onset = ok_onset_value and ok_above and ok_below and ok_others
    max_item = max([p1["hot"][1]] + [r["hot_accepted"] for r in rows])
    ok_cap = max_item <= 1.1 * C
    ok = ok_mates and ok_alone and ok_onset and ok_cap
    print("mates: worst other partition throttled %.2f %% in phase 1's "
          "last %.0f s: %s" % (100 * mates_worst, p1["seconds"], ok_mates))
    print("alone: PROD#0 (hash %016x) in [%016x, %016x] after phase 1, "
          "[%016x, %016x] at the end: %s" % (
              hot_hash, alone1["lo"], alone1["last"], alone2["lo"],
              alone2["last"], ok_alone))
    print("onset: PROD#0's measured share %.2f %%, its partition holds "
          "%.1f WCU/s above the onset -> onset %.0f events/s (C / 0.0599 "
          "= %.0f): %s; the hot partition throttles and holds C at "
          ">= 1.15 C offered: %s; nothing throttles at <= 0.9 x: %s; no "
          "other partition throttles in phase 2: %s" % (
              100 * share, ceiling, measured, onset, ok_onset_value,
              ok_above, ok_below, ok_others))
    print("cap: PROD#0's partition accepted at most %.1f WCU/s in a "
          "measuring window (C = %d): %s" % (max_item, args.wcu, ok_cap))

    # ---- output ----
    with open(os.path.join(args.out, "hot_partition_adaptive.csv"), "w",
              newline="") as f:
        w = csv.writer(f)
        w.writerow(["time_s", "phase", "step", "target_rate", "partition",
                    "lo", "last", "holds_prod0", "accepted_per_s",
                    "throttled_per_s", "window"])
        ranges = range_history(sampler)
        for s in sampler.samples:
            for p in sorted(s["parts"]):
                a, t = s["parts"][p]
                lo, last = ranges.get(p, (None, None))
                w.writerow(["%.2f" % s["t"], s["phase"],
                            "" if s["step"] is None else s["step"],
                            s["rate"], p,
                            "" if lo is None else "%016x" % lo,
                            "" if last is None else "%016x" % last,
                            int(p == s["hot"]), "%.2f" % (a / s["dt"]),
                            "%.2f" % (t / s["dt"]),
                            int(bool(s.get("window")))])
    with open(os.path.join(args.out, "hot_partition_adaptive_steps.csv"),
              "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["step", "multiple", "target_rate", "warm_s", "window_s",
                    "offered", "accepted", "throttled", "hot_offered",
                    "hot_accepted", "hot_throttled", "hot_fraction",
                    "others_worst_fraction", "partitions"])
        for r in rows:
            w.writerow([r["step"], r["multiple"], r["rate"],
                        "%.1f" % r["warm_s"], "%.1f" % r["window_s"],
                        "%.1f" % r["offered"], "%.1f" % r["accepted"],
                        "%.1f" % r["throttled"], "%.2f" % r["hot_offered"],
                        "%.2f" % r["hot_accepted"],
                        "%.2f" % r["hot_throttled"],
                        "%.4f" % r["hot_fraction"],
                        "%.4f" % r["others_worst_fraction"],
                        r["partitions"]])
    with open(os.path.join(args.out, "hot_partition_adaptive_events.jsonl"),
              "w") as f:
        for e in sampler.events:
            f.write(json.dumps(e) + "\n")
    png = plot(args, sampler, rows, onset, plain)
    splits = [e for e in sampler.events if e.get("kind") == "split"]
    summary = {
        "wcu": args.wcu, "partitions": args.partitions,
        "products": args.products, "hot_share": hp.HOT_SHARE,
        "settings": settings, "quick": q, "seconds": elapsed,
        "pass": ok, "pass_mates": ok_mates, "pass_alone": ok_alone,
        "pass_onset": ok_onset, "pass_onset_value": ok_onset_value,
        "pass_above": ok_above, "pass_below": ok_below,
        "pass_others": ok_others, "pass_cap": ok_cap,
        "prod0_hash": "%016x" % hot_hash,
        "phase1": {
            "rate": rate1, "multiple_of_plain_onset": args.phase1_multiple,
            "plain_onset": plain, "plain_share": sh[hot0],
            "plain_partition": hot0, "seconds": args.phase1_seconds,
            "first_split_s": first_split, "prod0_alone_s": isolated_at,
            "splits": len(splits1),
            "window": {"seconds": p1["seconds"], "hot": p1["hot"],
                       "hot_partitions": p1["hot_parts"],
                       "total": p1["total"],
                       "others_worst_fraction": mates_worst,
                       "others_worst_partition": mates_part},
            "prod0_partition": {k: alone1[k] for k in ("id", "lo", "last")},
            "client": tot1},
        "phase2": {
            "predicted_onset": onset, "measured_share": share,
            "measured_ceiling": ceiling, "measured_onset": measured,
            "max_item_accepted": max_item,
            "prod0_partition": {k: alone2[k] for k in ("id", "lo", "last")},
            "partitions_at_end": len(st2), "steps": rows},
        "splits": {"total": len(splits),
                   "hot_item": len([e for e in splits
                                    if e.get("reason") == "hot item"]),
                   "heat": len([e for e in splits
                                if e.get("reason") == "heat"])},
        "events": sampler.events,
    }
    with open(os.path.join(args.out, "summary_adaptive.json"), "w") as f:
        json.dump(summary, f, indent=1, default=str)
    print("%d splits (%d hot item); onset %.0f events/s measured, %.0f "
          "predicted; PROD#0 at most %.1f WCU/s; %.0f s; CSV, summary and "
          "%s in %s" % (len(splits), summary["splits"]["hot_item"],
                        measured, onset, max_item, elapsed,
                        os.path.basename(png), args.out))
    print("verdict: %s" % ("PASS" if ok else "FAIL"))
    return 0 if ok else 1


def range_history(sampler):
    """{partition: (lo, last)} of every partition the run saw."""
    out = dict(sampler.initial_ranges)
    for e in sampler.events:
        if e.get("kind") != "split":
            continue
        out[e["part"]] = (int(e["lo"], 16), int(e["last"], 16))
        for q in e.get("into", []):
            out[q["part"]] = (int(q["lo"], 16), int(q["last"], 16))
    out.update(sampler.ranges)
    return out


def plot(args, sampler, rows, onset, plain):
    """Accepted (top) and throttled (bottom) writes per second of every
    partition over time; PROD#0's partition in red; splits as vertical
    lines (hot-item splits darker), phase-2 steps labelled."""
    data = os.path.join(args.out, ".adaptive-plot.dat")
    series = {}
    for s in sampler.samples:
        for p, (a, t) in s["parts"].items():
            series.setdefault(p, []).append(
                (s["t"], a / s["dt"], t / s["dt"]))
    hot = [(s["t"], s["parts"].get(s["hot"], (0, 0))[0] / s["dt"],
            s["parts"].get(s["hot"], (0, 0))[1] / s["dt"])
           for s in sampler.samples]
    others = [(s["t"], sum(t for p, (a, t) in s["parts"].items()
                           if p != s["hot"]) / s["dt"])
              for s in sampler.samples]
    with open(data, "w") as f:
        for p in sorted(series):
            f.write("# partition %d\n" % p)
            for t, a, th in series[p]:
                f.write("%.2f %.2f %.2f\n" % (t, a, th))
            f.write("\n\n")
        f.write("# PROD#0's partition\n")
        for t, a, th in hot:
            f.write("%.2f %.2f %.2f\n" % (t, a, th))
        f.write("\n\n# other partitions' throttled, summed\n")
        for t, th in others:
            f.write("%.2f 0 %.2f\n" % (t, th))
    n = len(series)
    marks = []
    for e in sampler.events:
        if e.get("kind") != "split":
            continue
        item = e.get("reason") == "hot item"
        marks.append("set arrow from %.2f, graph 0 to %.2f, graph 1 nohead "
                     "lc rgb '%s' lw %s dt %d" % (
                         e["t"], e["t"], "#d08000" if item else "#9090d0",
                         "1.5" if item else "0.8", 1 if item else 3))
    labels = []
    p2 = [s for s in sampler.samples if s["phase"] == 2]
    p1_end = max((s["t"] for s in sampler.samples if s["phase"] == 1),
                 default=0)
    labels.append("set label 'phase 1: %d/s' at 1, graph 0.95 font ',9'"
                  % sampler.samples[0]["rate"])
    labels.append("set arrow from %.2f, graph 0 to %.2f, graph 1 nohead "
                  "lc rgb 'black' lw 2" % (p1_end, p1_end))
    for r in rows:
        ss = [s for s in p2 if s["step"] == r["step"]]
        if not ss:
            continue
        t0 = ss[0]["t"] - ss[0]["dt"]
        labels.append("set label '%.1fx: %d/s' at %.2f, graph 0.95 "
                      "font ',9'" % (r["multiple"], r["rate"], t0 + 0.5))
        if r["step"] > 0:
            labels.append("set arrow from %.2f, graph 0 to %.2f, graph 1 "
                          "nohead lc rgb 'black' lw 1" % (t0, t0))
        w = [s for s in ss if s.get("window")]
        if w:
            labels.append("set object rect from %.2f, graph 0 to %.2f, "
                          "graph 1 fc rgb '#e8f4e8' fs solid 0.5 noborder "
                          "behind" % (w[0]["t"] - w[0]["dt"], w[-1]["t"]))
    w1 = [s for s in sampler.samples if s["phase"] == 1 and s.get("window")]
    if w1:
        labels.append("set object rect from %.2f, graph 0 to %.2f, graph 1 "
                      "fc rgb '#e8f4e8' fs solid 0.5 noborder behind" % (
                          w1[0]["t"] - w1[0]["dt"], w1[-1]["t"]))
    common = "\n".join(marks + labels)
    png = os.path.join(args.out, "hot_partition_adaptive.png")
    script = """
set terminal pngcairo size 1400,900 font ',10'
set output '%(png)s'
set multiplot layout 2,1 title 'Adaptive capacity: %(wcu)d WCU per partition, %(parts)d partitions at first, split after %(after)d s at >= %(thr)g x C; PROD#0 = %(share).2f %% of events; plain onset %(plain).0f/s, C / 0.0599 = %(onset).0f/s'
set grid
set key outside right top font ',9'
set lmargin at screen 0.05
set rmargin at screen 0.80
set xrange [0:*]
%(common)s
set ylabel 'accepted writes/s per partition'
set yrange [0:*]
plot for [i=0:%(last)d] '%(data)s' index i using 1:2 with lines lc rgb '#a0a0a0' lw 1 notitle, \\
     '%(data)s' index %(hot)d using 1:2 with lines lc rgb 'red' lw 2.5 title 'partition holding PROD#0', \\
     %(wcu)d with lines lc rgb 'black' dt 2 title 'ceiling C', \\
     NaN with lines lc rgb '#a0a0a0' title 'other partitions (one line each)', \\
     NaN with lines lc rgb '#9090d0' dt 3 title 'split (heat)', \\
     NaN with lines lc rgb '#d08000' lw 1.5 title 'split (hot item)', \\
     NaN with boxes fc rgb '#e8f4e8' fs solid title 'measuring window'
set xlabel 'seconds since phase 1 began'
set ylabel 'throttled writes/s per partition'
plot for [i=0:%(last)d] '%(data)s' index i using 1:3 with lines lc rgb '#a0a0a0' lw 1 notitle, \\
     '%(data)s' index %(hot)d using 1:3 with lines lc rgb 'red' lw 2.5 title 'partition holding PROD#0', \\
     '%(data)s' index %(oth)d using 1:3 with lines lc rgb 'blue' lw 1.5 title 'all other partitions, summed'
unset multiplot
""" % {"png": png, "wcu": args.wcu, "parts": args.partitions,
       "after": args.split_after, "thr": args.split_threshold,
       "share": 100 * hp.HOT_SHARE, "plain": plain, "onset": onset,
       "common": common, "last": n - 1, "data": data, "hot": n,
       "oth": n + 1}
    subprocess.run(["gnuplot"], input=script, text=True, check=True)
    os.unlink(data)
    return png


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
