"""nemesis.py — experiment files and the fault schedule they describe.

An experiment is a file in chaos/experiments/ (NAME.exp), one statement
per line, "#" to the end of a line a comment:

    workload register        the generator and checker (workloads.py)
    clients 8                how many client processes run it
    setting partition-wcu 400   a line added to the cluster file
    loop                     the steps below repeat until the run ends
    wait 1-2.5               sleep a time drawn from [1, 2.5] s (or "wait 2")
    kill node                kill -9 a process: a name (node1, router0),
                             or a random one that is up: node, router, any
    restart                  start every killed process again
    pause node               SIGSTOP a process (name or random, as kill)
    resume                   SIGCONT every paused process
    disk node                a node's disk starts failing: every store
                             write refuses (node/store/store.h), reads go on
    disk-heal                every failing disk works again
    skew node +0 x3          start a process again (kill -9 first) on a
                             clock of libfaketime's: the words after the
                             target are its FAKETIME, an offset ("+5m",
                             "-30s") and optionally a rate ("x3": three
                             times as fast, "x0.5": half)
    skew-heal                every skewed process started again on the
                             real clock
    isolate node             cut one process off from every other, both
                             ways (its links black-holed)
    partition node0 router0 / node1 node2
                             two groups that cannot reach each other
    link router0 node1 delay 200   one directed link: ok, delay MS, drop,
                             drop-out, drop-back, reset (a SRC or DST of
                             "node" picks a node at random)
    heal                     every link back to ok

Steps before "loop" run once. Random choices come from the run's seed, so
a schedule replays the same faults in the same order (their effect on
the cluster's timing is not replayed). When the run's time is up the
schedule stops where it is, and the runner heals, resumes and restarts
everything before the checkers read.
"""

import math
import re


class ExperimentError(Exception):
    pass


STEPS = {"wait", "kill", "restart", "pause", "resume", "isolate",
         "partition", "link", "heal", "disk", "disk-heal", "skew",
         "skew-heal"}
SKEW = re.compile(r"[+-]\d+(\.\d+)?[smhdy]?( x\d+(\.\d+)?)?$")
MODES = {"ok", "delay", "drop", "drop-out", "drop-back", "reset"}


def parse(text, name="experiment"):
    """{"workload", "clients", "settings", "once", "loop", "about"} from an
    experiment file's text; ExperimentError names the bad line."""
    exp = {"name": name, "workload": None, "clients": 8, "settings": [],
           "once": [], "loop": [], "about": []}
    steps = exp["once"]
    for no, raw in enumerate(text.splitlines(), 1):
        if raw.startswith("#") and not exp["workload"]:
            exp["about"].append(raw.lstrip("# ").rstrip())
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        w = line.split()

        def bad(why):
            raise ExperimentError("%s line %d: %s: %s" % (name, no, why, raw))
        if w[0] == "workload" and len(w) == 2:
            exp["workload"] = w[1]
        elif w[0] == "clients" and len(w) == 2 and w[1].isdigit():
            exp["clients"] = int(w[1])
        elif w[0] == "setting" and len(w) >= 3:
            exp["settings"].append(" ".join(w[1:]))
        elif w[0] == "loop" and len(w) == 1:
            steps = exp["loop"]
        elif w[0] == "wait" and len(w) == 2:
            try:
                lo, _, hi = w[1].partition("-")
                span = (float(lo), float(hi or lo))
            except ValueError:
                bad("wait takes seconds or a range A-B")
            if not all(math.isfinite(x) for x in span) or span[0] < 0 or \
                    span[1] < span[0]:
                bad("bad range")
            steps.append(("wait", span))
        elif w[0] in ("kill", "pause", "isolate", "disk") and len(w) == 2:
            steps.append((w[0], w[1]))
        elif w[0] == "skew" and len(w) >= 3:
            spec = " ".join(w[2:])
            if not SKEW.match(spec):
                bad("skew takes an offset and a rate, such as +0 x3")
            steps.append(("skew", w[1], spec))
        elif w[0] in ("restart", "resume", "heal", "disk-heal",
                      "skew-heal") and len(w) == 1:
            steps.append((w[0],))
        elif w[0] == "partition" and "/" in w:
            cut = w.index("/")
            a, b = w[1:cut], w[cut + 1:]
            if not a or not b:
                bad("partition needs two groups around /")
            steps.append(("partition", a, b))
        elif w[0] == "link" and len(w) in (4, 5) and w[3] in MODES:
            ms = 0
            if w[3] == "delay":
                if len(w) != 5 or not w[4].isdigit():
                    bad("link ... delay takes milliseconds")
                ms = int(w[4])
            elif len(w) == 5:
                bad("only delay takes milliseconds")
            steps.append(("link", w[1], w[2], w[3], ms))
        else:
            bad("not a statement")
    if exp["workload"] is None:
        raise ExperimentError("%s: no workload line" % name)
    if not exp["loop"] and not exp["once"]:
        raise ExperimentError("%s: no steps" % name)
    return exp


class Nemesis:
    """Runs an experiment's steps against a LabCluster, noting every
    fault in the History."""

    def __init__(self, cluster, hist, rng):
        self.c, self.hist, self.rng = cluster, hist, rng
        self.open = []  # the events of faults not undone yet
        self.injected = {}

    def _note(self, kind, target, **extra):
        self.injected[kind] = self.injected.get(kind, 0) + 1
        self.open.append(self.hist.fault(kind, target, **extra))

    def _close(self, kinds, target=None):
        """Ends every open fault of those kinds (on target only, if
        given)."""
        keep = []
        for ev in self.open:
            if ev["fault"] in kinds and target in (None, ev["target"]):
                self.hist.undo(ev)
            else:
                keep.append(ev)
        self.open = keep

    def run(self, exp, stop):
        """Runs exp's steps until stop (a threading.Event) is set."""
        for step in exp["once"]:
            if stop.is_set():
                return
            self.do(step, stop)
        while exp["loop"] and not stop.is_set():
            for step in exp["loop"]:
                if stop.is_set():
                    return
                self.do(step, stop)

    def do(self, step, stop):
        kind = step[0]
        c = self.c
        if kind == "wait":
            stop.wait(self.rng.uniform(*step[1]))
        elif kind == "kill":
            name = c.pick(step[1], self.rng)
            if name:
                c.kill(name)
                self._note("kill", name)
        elif kind == "restart":
            for name in sorted(c.down):
                c.restart(name)
            self._close({"kill"})
        elif kind == "pause":
            name = c.pick(step[1], self.rng)
            if name:
                c.pause(name)
                self._note("pause", name)
        elif kind == "resume":
            for name in sorted(c.paused):
                c.resume(name)
            self._close({"pause"})
        elif kind == "disk":
            name = c.pick(step[1], self.rng)
            if name and name.startswith("node"):
                c.disk_fail(name)
                self._note("disk", name)
        elif kind == "disk-heal":
            for name in sorted(c.failing):
                c.disk_heal(name)
            self._close({"disk"})
        elif kind == "skew":
            name = c.pick(step[1], self.rng)
            if name:
                c.skew(name, step[2])
                self._note("skew", name, faketime=step[2])
        elif kind == "skew-heal":
            for name in sorted(c.skewed):
                c.unskew(name)
            self._close({"skew"})
        elif kind == "isolate":
            name = c.pick(step[1], self.rng)
            if name:
                c.links.partition([name], [n for n in c.names()
                                           if n != name])
                self._note("isolate", name)
        elif kind == "partition":
            c.links.partition(step[1], step[2])
            self._note("partition", " ".join(step[1]) + " / " +
                       " ".join(step[2]))
        elif kind == "link":
            _, src, dst, mode, ms = step
            src = c.pick(src, self.rng) if src in ("node", "router") else src
            dst = c.pick(dst, self.rng) if dst in ("node", "router") else dst
            if src and dst and src != dst:
                c.links.set(src, dst, mode, delay_ms=ms)
                # A link has one mode: what it had before is over.
                self._close({"link-" + m for m in MODES},
                            "%s->%s" % (src, dst))
                if mode not in ("ok", "reset"):
                    self._note("link-" + mode, "%s->%s" % (src, dst))
                elif mode == "reset":
                    self.injected["link-reset"] = \
                        self.injected.get("link-reset", 0) + 1
                    self.hist.undo(self.hist.fault("link-reset",
                                                   "%s->%s" % (src, dst)))
        elif kind == "heal":
            c.links.heal()
            self._close({"isolate", "partition"} |
                        {"link-" + m for m in MODES})
        else:
            raise ExperimentError("unknown step %r" % (step,))

    def finish(self):
        """Closes every fault still open (the runner undoes them)."""
        for ev in self.open:
            self.hist.undo(ev)
        self.open = []

