"""report.py — a chaos run's summary (JSON) and its timeline (PNG).

The summary: the experiment, seed and length; operations (total, ok,
fail, info, and per kind of operation); the faults injected by kind;
each checker's verdict with its counterexamples; "passed", true only
when every checker's verdict is valid. The closing line puts the same in
one line for scripts and logs:

    chaos register: ops=5310 ok=4102 fail=990 info=218 faults=kill:12 violations=0 PASS

The timeline (timeline.png, drawn by gnuplot): completed operations per
second by outcome, and the median and slowest latency of each quarter
second, with every fault drawn as a shaded band from its start to its
end, labelled, so that what each fault did can be read off the plot.
"""

import json
import os
import subprocess

BIN = 0.25  # seconds per point of the timeline

COLOURS = {"kill": "#d62728", "pause": "#ff7f0e", "isolate": "#9467bd",
           "partition": "#8c564b", "link-delay": "#17becf",
           "link-drop": "#9467bd", "link-drop-out": "#e377c2",
           "link-drop-back": "#e377c2", "link-reset": "#7f7f7f", "disk": "#bcbd22", "skew": "#1f77b4"}


def summary(exp, args, hist, verdicts, injected, seconds):
    by_f = {}
    for r in hist.ops:
        d = by_f.setdefault(r["f"], {"ok": 0, "fail": 0, "info": 0})
        d[r["type"]] += 1
    errors = {}
    for r in hist.ops:
        if r["type"] != "ok":
            errors[r.get("error", "?")] = errors.get(r.get("error", "?"),
                                                     0) + 1
    violations = sum(1 for v in verdicts.values() if v["valid"] is not True)
    return {"experiment": exp["name"], "workload": exp["workload"],
            "seed": args.seed, "seconds": round(seconds, 1),
            "clients": exp["clients"], "plant": args.plant,
            "operations": dict(hist.counts(), by_kind=by_f, errors=errors),
            "faults": injected, "checkers": verdicts,
            "violations": violations, "passed": violations == 0}


def closing_line(s):
    o = s["operations"]
    faults = ",".join("%s:%d" % kv for kv in sorted(s["faults"].items()))
    return "chaos %s: ops=%d ok=%d fail=%d info=%d faults=%s violations=%d %s" % (
        s["experiment"], o["operations"], o["ok"], o["fail"], o["info"],
        faults or "none", s["violations"], "PASS" if s["passed"] else "FAIL")


def write_json(s, folder):
    path = os.path.join(folder, "summary.json")
    with open(path, "w") as f:
        json.dump(s, f, indent=1, sort_keys=True, default=str)
        f.write("\n")
    return path


def _series(ops, end):
    n = int(end / BIN) + 1
    rows = [{"ok": 0, "fail": 0, "info": 0, "lat": []} for _ in range(n)]
    for r in ops:
        t = r["end"] if r.get("end") is not None else r["start"]
        i = min(n - 1, max(0, int(t / BIN)))
        rows[i][r["type"]] += 1
        if r["type"] == "ok":
            rows[i]["lat"].append((r["end"] - r["start"]) * 1000.0)
    return rows


def timeline(hist, folder, title):
    """Writes timeline.dat and timeline.png; returns the PNG's path (None
    when gnuplot failed, which the caller reports)."""
    end = max([r.get("end") or r["start"] for r in hist.ops] + [1.0])
    rows = _series(hist.ops, end)
    dat = os.path.join(folder, "timeline.dat")
    with open(dat, "w") as f:
        f.write("# t ok/s fail/s info/s p50_ms max_ms\n")
        for i, r in enumerate(rows):
            lat = sorted(r["lat"])
            p50 = lat[len(lat) // 2] if lat else float("nan")
            top = lat[-1] if lat else float("nan")
            f.write("%.2f %.1f %.1f %.1f %.3f %.3f\n" % (
                i * BIN, r["ok"] / BIN, r["fail"] / BIN, r["info"] / BIN,
                p50, top))
    objs = []
    for k, ev in enumerate(hist.faults):
        t1 = ev["end"] if ev["end"] is not None else end
        t1 = max(t1, ev["time"] + 0.05)
        colour = COLOURS.get(ev["fault"], "#bcbd22")
        objs.append("set object %d rect from %.3f, graph 0 to %.3f, graph 1 "
                    "fc rgb '%s' fs transparent solid 0.18 noborder behind"
                    % (k + 1, ev["time"], t1, colour))
        objs.append("set label %d '%s %s' at %.3f, graph %.2f font ',8' "
                    "tc rgb '%s'" % (k + 1, ev["fault"], ev["target"],
                                     ev["time"], 0.97 - 0.05 * (k % 6),
                                     colour))
    if any(r["lat"] for r in rows):
        latency = ("set logscale y\n"
                   "plot '%s' using 1:5 with lines lw 2 lc rgb '#1f77b4' "
                   "title 'median', '' using 1:6 with lines lw 1 "
                   "lc rgb '#ff7f0e' title 'slowest'" % dat)
    else:  # gnuplot refuses a plot with no point at all
        latency = ("set yrange [0:1]\nplot 0 with lines lc rgb '#ffffff' "
                   "title 'no operation succeeded'")
    png = os.path.join(folder, "timeline.png")
    script = """
set terminal pngcairo size 1400,800 font ',10'
set output '%(png)s'
set multiplot layout 2,1 title '%(title)s'
set xrange [0:%(end).2f]
set grid
set key below horizontal
%(objs)s
set ylabel 'operations / s'
plot '%(dat)s' using 1:2 with lines lw 2 lc rgb '#2ca02c' title 'ok', \\
     '' using 1:3 with lines lw 2 lc rgb '#1f77b4' title 'fail (certain)', \\
     '' using 1:4 with lines lw 2 lc rgb '#d62728' title 'info (unknown)'
unset label
set ylabel 'latency of ok operations, ms'
set xlabel 'seconds since the start'
%(latency)s
unset multiplot
""" % {"png": png, "dat": dat, "end": end, "title": title.replace("'", ""),
       "objs": "\n".join(objs), "latency": latency}
    try:
        subprocess.run(["gnuplot"], input=script, text=True, check=True,
                       capture_output=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    return png
