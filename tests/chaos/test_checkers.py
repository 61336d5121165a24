"""test_checkers.py — the chaos runner's other checkers (check/acked.py,
check/idgen.py, check/bank.py) on hand-made histories, the experiment
parser and the fault schedule (lab/nemesis.py, against a fake cluster),
the summary and timeline (lab/report.py) and the outcome of a failed
call (lab/history.py).

  cd tests/chaos && python3 -m pytest -q test_checkers.py
"""

import glob
import os
import random
import re
import shutil
import sys
import threading
import time
import types

import pytest
from botocore.exceptions import ClientError, ReadTimeoutError

HERE = os.path.dirname(os.path.abspath(__file__))
CHAOS = os.path.join(HERE, "..", "..", "chaos")
sys.path.insert(0, CHAOS)
from check import acked, bank, idgen  # noqa: E402
from lab import report, workloads  # noqa: E402
from lab.history import History, outcome_of  # noqa: E402
from lab.nemesis import ExperimentError, Nemesis, parse  # noqa: E402


def rec(f, key, value, type="ok", start=0.0, end=0.1, **extra):
    return dict({"process": 0, "f": f, "key": key, "value": value,
                 "start": start, "end": end, "type": type}, **extra)


# -- acked.check -------------------------------------------------------------

WRITES = [rec("write", "k%d" % i, i) for i in range(1, 5)] + [
    rec("write", "k8", 8, type="info"), rec("write", "k9", 9, type="fail")]
ALL = {"k1": 1, "k2": 2, "k3": 3, "k4": 4}


@pytest.mark.parametrize("change,lost,phantom,key", [
    ({}, 0, 0, None),
    ({"k8": 8}, 0, 0, None),                    # an unknown write there
    ({"k2": None}, 1, 0, "k2"),                 # an acknowledged one gone
    ({"k3": 33}, 1, 0, "k3"),                   # ... overwritten
    ({"k9": 9}, 0, 1, "k9"),                    # a failed one applied
    ({"k9": 9, "k1": None, "k8": 8}, 1, 1, "k1"),
])
def test_acked(change, lost, phantom, key):
    found = {k: v for k, v in dict(ALL, **change).items() if v is not None}
    res = acked.check(WRITES, found)
    assert (res["acknowledged"], res["failed"], res["unknown"]) == (4, 1, 1)
    assert (res["valid"], res["lost"], res["phantom"]) == \
        (not lost and not phantom, lost, phantom)
    assert [c["key"] for c in res["counterexamples"]][:1] == \
        ([key] if key else [])
    if lost:
        assert res["counterexamples"][0]["found"] == change[key]


# -- idgen.check -------------------------------------------------------------

def take(lo, hi, count=None, key="c"):
    return rec("take", key, [hi - lo + 1 if count is None else count, lo, hi])


def maybe(count, type="info", key="c"):
    return rec("take", key, [count], type=type)


@pytest.mark.parametrize("takes,final,want", [
    # disjoint ranges, in any order, the final lastID their total
    ([take(1, 3), take(6, 10), take(4, 5)], 10, (0, 0, 0)),
    # two ranges sharing id 3
    ([take(1, 3), take(3, 5)], 6, (1, 0, 0)),
    # a range above the final lastID
    ([take(1, 2), take(6, 7)], 4, (0, 1, 0)),
    # final below the acknowledged total (range 3-4 above it as well)
    ([take(1, 2), take(3, 4)], 3, (0, 1, 1)),
    # final above acknowledged + unknown (a failed take does not count)
    ([take(1, 2), maybe(3), maybe(5, "fail")], 6, (0, 0, 1)),
    # between them: each unknown take applied or not
    *[([take(1, 2), maybe(3), maybe(1)], top, (0, 0, 0))
      for top in (2, 3, 5, 6)],
    # a range of 2 ids for a take of 3
    ([take(1, 2, count=3)], 3, (0, 1, 0)),
])
def test_idgen(takes, final, want):
    res = idgen.check(takes, {"c": final})
    assert (res["duplicates"], res["unallocated"], res["bad_totals"]) == want
    assert res["valid"] is (want == (0, 0, 0))
    assert len(res["counterexamples"]) == sum(want)
    assert res["ranges"] == sum(r["type"] == "ok" for r in takes)


def test_idgen_bad_total_counterexample():
    res = idgen.check([take(1, 2), take(3, 4), maybe(1)], {"c": 3})
    assert res["counterexamples"][-1] == {"key": "c", "final": 3,
                                          "acknowledged": 4, "at_most": 5}


def test_idgen_keys_independent():
    takes = [take(1, 2, key="a"), take(3, 4, key="a"),
             take(1, 2, key="b"), take(3, 4, key="b")]
    res = idgen.check(takes, {"a": 4, "b": 4})
    assert res["valid"] is True and res["ranges"] == 4
    res = idgen.check(takes, {"a": 4, "b": 5})
    assert res["valid"] is False and res["bad_totals"] == 1
    assert [c["key"] for c in res["counterexamples"]] == ["b"]


# -- bank.check --------------------------------------------------------------

ACCTS = {"a0": 100, "a1": 100, "a2": 100}
MOVED = {"a0": 95, "a1": 105, "a2": 100}
TRANSFERS = [rec("transfer", None, ["a0", "a1", 5]),
             rec("transfer", None, ["a1", "a2", 5], type="fail"),
             rec("transfer", None, ["a2", "a0", 5], type="info"),
             rec("transfer", None, ["a2", "a1", 5], type="info")]
# Reads whose outcome is not ok say nothing, whatever they hold.
IGNORED = [rec("read", None, {"a0": 1}, type="fail"),
           rec("read", None, None, type="info")]


@pytest.mark.parametrize("read,final,why,final_problem", [
    (MOVED, {"a0": 100, "a1": 90, "a2": 110}, None, None),
    ({"a0": 95, "a1": 100, "a2": 100}, ACCTS, "total 295, not 300", None),
    ({"a0": -10, "a1": 210, "a2": 100}, ACCTS, "negative balance in a0",
     None),
    ({"a0": 150, "a1": 150}, ACCTS, "2 accounts of 3", None),
    (MOVED, {"a0": 100, "a1": 100, "a2": 95}, None, "total 295, not 300"),
    (MOVED, None, None, "no final read"),
])
def test_bank(read, final, why, final_problem):
    ops = [rec("read", None, ACCTS), rec("read", None, read)] + TRANSFERS
    res = bank.check(ops + IGNORED, final, 3, 300)
    assert res["valid"] is (why is None and final_problem is None)
    assert (res["reads"], res["bad_reads"]) == (2, 0 if why is None else 1)
    assert [c["why"] for c in res["counterexamples"]] == \
        ([why] if why else [])
    assert res["final_problem"] == final_problem
    assert (res["transfers_ok"], res["transfers_failed"],
            res["transfers_unknown"]) == (1, 1, 2)
    assert (res["transfers_conflict"], res["conflict_rate"]) == (0, 0.0)


def test_bank_conflict_rate():
    """Transfers cancelled for TransactionConflict, of those answered;
    a condition that failed is not a conflict, nor is an unknown one."""
    ops = [rec("read", None, ACCTS),
           rec("transfer", None, ["a0", "a1", 5]),
           dict(rec("transfer", None, ["a1", "a2", 5], type="fail"),
                reasons=["None", "TransactionConflict"]),
           dict(rec("transfer", None, ["a2", "a0", 5], type="fail"),
                reasons=["ConditionalCheckFailed", "None"]),
           dict(rec("transfer", None, ["a2", "a1", 5], type="info"),
                reasons=["TransactionConflict", "None"])]
    res = bank.check(ops, ACCTS, 3, 300)
    assert (res["transfers_conflict"], res["conflict_rate"]) == (1, 0.3333)


# -- nemesis.parse -----------------------------------------------------------

FULL = """\
# demo: one of everything
#   second line
workload register   # the checker
# not about: after the workload line
clients 4
setting partition-wcu 400
setting raft election-ms  300
kill node1
wait 2

loop
wait 1-2.5
kill node
restart
pause router
resume
isolate any
partition node0 router0 / node1 node2
link router0 node1 delay 200
link node router0 drop-out
link router0 node2 reset
heal
"""


def test_parse_full():
    exp = parse(FULL, "demo")
    assert exp == {
        "name": "demo", "workload": "register", "clients": 4,
        "settings": ["partition-wcu 400", "raft election-ms 300"],
        "about": ["demo: one of everything", "second line"],
        "once": [("kill", "node1"), ("wait", (2.0, 2.0))],
        "loop": [("wait", (1.0, 2.5)), ("kill", "node"), ("restart",),
                 ("pause", "router"), ("resume",), ("isolate", "any"),
                 ("partition", ["node0", "router0"], ["node1", "node2"]),
                 ("link", "router0", "node1", "delay", 200),
                 ("link", "node", "router0", "drop-out", 0),
                 ("link", "router0", "node2", "reset", 0), ("heal",)]}


@pytest.mark.parametrize("bad,line,why", [
    ("frobnicate node1", 3, "not a statement"),
    ("wait abc", 3, "wait takes seconds"),
    ("wait 3-1", 3, "bad range"),
    ("wait -1", 3, "wait takes seconds"),
    ("partition node0 node1", 3, "not a statement"),
    ("partition / node1", 3, "two groups"),
    ("link router0 node1 delay", 3, "milliseconds"),
    ("link router0 node1 delay fast", 3, "milliseconds"),
    ("link router0 node1 slow", 3, "not a statement"),
    ("kill", 3, "not a statement"),
    ("wait inf", 3, "bad range"),
    ("wait 1-nan", 3, "bad range"),
    ("link router0 node1 drop 200", 3, "only delay takes"),
    ("skew node1 fast", 3, "skew takes"),
    ("skew node1 +0 x3 x4", 3, "skew takes"),
    ("skew node1", 3, "not a statement"),
])
def test_parse_errors(bad, line, why):
    text = "workload register\n# comment\n%s\nheal\n" % bad
    with pytest.raises(ExperimentError) as e:
        parse(text, "t")
    msg = str(e.value)
    assert ("t line %d:" % line) in msg and why in msg and bad in msg


def test_parse_file_errors():
    with pytest.raises(ExperimentError, match="no workload"):
        parse("kill node1\nrestart\n", "t")
    with pytest.raises(ExperimentError, match="no steps"):
        parse("workload register\nclients 3\n", "t")


def test_builtin_experiments_parse():
    files = sorted(glob.glob(os.path.join(CHAOS, "experiments", "*.exp")))
    assert len(files) >= 5
    for path in files:
        name = os.path.basename(path)[:-4]
        with open(path) as f:
            exp = parse(f.read(), name)
        assert exp["workload"] in workloads.WORKLOADS, name
        assert exp["about"] and exp["loop"], name


# -- Nemesis against a fake cluster ------------------------------------------

class FakeCluster:
    """What Nemesis uses of a LabCluster and its Links, noting each call."""

    def __init__(self):
        self.procs = ["node0", "node1", "node2", "router0", "router1"]
        self.down, self.paused, self.log = set(), set(), []
        self.links = self

    def names(self, kind=None):
        return [n for n in self.procs if kind is None or n.startswith(kind)]

    def pick(self, what, rng):
        if what in ("node", "router", "any"):
            up = [n for n in self.names(None if what == "any" else what)
                  if n not in self.down and n not in self.paused]
            return rng.choice(up) if up else None
        return what

    def kill(self, name):
        assert name in self.procs and name not in self.down
        self.log.append(("kill", name))
        self.paused.discard(name)
        self.down.add(name)

    def restart(self, name):
        self.log.append(("restart", name))
        self.down.remove(name)

    def pause(self, name):
        self.log.append(("pause", name))
        self.paused.add(name)

    def resume(self, name):
        self.log.append(("resume", name))
        self.paused.remove(name)

    def partition(self, a, b):
        self.log.append(("partition", list(a), list(b)))

    def set(self, src, dst, mode, delay_ms=0):
        self.log.append(("set", src, dst, mode, delay_ms))

    def heal(self):
        self.log.append(("heal",))


def nemesis(seed=1):
    c, h = FakeCluster(), History()
    return c, h, Nemesis(c, h, random.Random(seed))


INJECT = """workload register
kill node1
pause node
isolate node2
partition node0 / node1 router0
link router0 node1 delay 100
link router0 node0 drop
link router0 node reset
wait 0-0.01
"""


def test_nemesis_faults_and_undo():
    c, h, nem = nemesis()
    stop = threading.Event()
    nem.run(parse(INJECT), stop)
    kinds = [ev["fault"] for ev in h.faults]
    assert kinds == ["kill", "pause", "isolate", "partition", "link-delay",
                     "link-drop", "link-reset"]
    t = [ev["target"] for ev in h.faults]
    assert t[0] == "node1" and t[1] in ("node0", "node2")  # node1 is down
    assert t[2:5] == ["node2", "node0 / node1 router0", "router0->node1"]
    assert t[5] == "router0->node0" and t[6] in ("router0->node0",
                                                 "router0->node2")
    assert nem.injected == {k: 1 for k in kinds}
    assert [ev["end"] is None for ev in h.faults] == [True] * 6 + [False]
    assert ("partition", ["node2"], ["node0", "node1", "router0",
                                     "router1"]) in c.log
    assert ("set", "router0", "node1", "delay", 100) in c.log
    nem.do(("restart",), stop)
    assert c.down == set() and ("restart", "node1") in c.log
    assert [ev["end"] is None for ev in h.faults] == [False] + [True] * 5 + \
        [False]
    nem.do(("resume",), stop)
    assert c.paused == set() and h.faults[1]["end"] is not None
    nem.do(("heal",), stop)
    assert c.log[-1] == ("heal",) and not nem.open
    assert all(ev["end"] is not None and ev["end"] >= ev["time"]
               for ev in h.faults)


def test_nemesis_restart_restarts_every_killed():
    c, h, nem = nemesis(3)
    stop = threading.Event()
    nem.run(parse("workload x\nkill node\nkill node\nkill router\n"
                  "pause node\n"), stop)
    killed = {e[1] for e in c.log if e[0] == "kill"}
    assert len(killed) == 3 and c.down == killed
    nem.do(("restart",), stop)
    assert {e[1] for e in c.log if e[0] == "restart"} == killed
    assert c.down == set() and len(c.paused) == 1
    assert [ev["end"] is not None for ev in h.faults] == [True] * 3 + [False]
    nem.finish()
    assert all(ev["end"] is not None for ev in h.faults)


def test_nemesis_same_seed_same_schedule():
    text = "workload x\n" + ("kill any\nrestart\npause node\nresume\n"
                             "isolate node\nheal\nlink node node drop\nheal\n"
                             "wait 0-0.001\n") * 6

    def targets(seed):
        c, h, nem = nemesis(seed)
        nem.run(parse(text), threading.Event())
        return [(ev["fault"], ev["target"]) for ev in h.faults]
    assert targets(7) == targets(7)
    assert targets(7) != targets(8)


def test_nemesis_stop_ends_run_promptly():
    c, h, nem = nemesis()
    stop = threading.Event()
    th = threading.Thread(target=nem.run, args=(
        parse("workload x\nloop\nwait 30\nkill node\n"), stop))
    th.start()
    time.sleep(0.1)
    t0 = time.monotonic()
    stop.set()
    th.join(0.5)
    assert not th.is_alive() and time.monotonic() - t0 < 0.5
    assert h.faults == []
    # Set before run: nothing happens at all.
    nem.run(parse("workload x\nkill node\nloop\nkill node\n"), stop)
    assert c.log == [] and nem.injected == {}


# -- report ------------------------------------------------------------------

def run_hist():
    h = History()
    h.ops = [rec("write", "k1", 1, start=0.0, end=0.1),
             rec("write", "k2", 2, start=0.05, end=0.2),
             rec("write", "k3", 3, "fail", 0.3, 0.4,
                 error="ConditionalCheckFailedException"),
             rec("read", "k1", 1, start=0.5, end=0.6),
             rec("read", "k2", None, "info", 0.7, 1.6, error="ReadTimeout")]
    h.faults = [{"time": 0.3, "fault": "kill", "target": "node1", "end": 0.9},
                {"time": 0.5, "fault": "partition", "end": None,
                 "target": "node0 / node1 node2"}]
    return h


ARGS = types.SimpleNamespace(seed=42, plant=None)
EXP = {"name": "demo", "workload": "register", "clients": 4}
LINE = re.compile(r"^chaos [\w.-]+: ops=\d+ ok=\d+ fail=\d+ info=\d+ "
                  r"faults=(none|[\w-]+:\d+(,[\w-]+:\d+)*) "
                  r"violations=\d+ (PASS|FAIL)$")


@pytest.mark.parametrize("valid", [True, False, "unknown", None])
def test_summary_and_closing_line(valid):
    verdicts = {"a": {"valid": True}, "b": {"valid": valid}}
    s = report.summary(EXP, ARGS, run_hist(), verdicts,
                       {"pause": 1, "kill": 12} if valid is True else {},
                       12.34)
    o = s["operations"]
    assert (o["operations"], o["ok"], o["fail"], o["info"]) == (5, 3, 1, 1)
    assert o["by_kind"] == {"write": {"ok": 2, "fail": 1, "info": 0},
                            "read": {"ok": 1, "fail": 0, "info": 1}}
    assert o["errors"] == {"ConditionalCheckFailedException": 1,
                           "ReadTimeout": 1}
    assert (s["seed"], s["seconds"], s["checkers"]) == (42, 12.3, verdicts)
    # Only True passes: "unknown" (or anything else) is a violation.
    assert (s["violations"], s["passed"]) == \
        ((0, True) if valid is True else (1, False))
    line = report.closing_line(s)
    assert LINE.match(line), line
    assert line == "chaos demo: ops=5 ok=3 fail=1 info=1 " + (
        "faults=kill:12,pause:1 violations=0 PASS" if valid is True else
        "faults=none violations=1 FAIL")


def test_timeline(tmp_path):
    png = report.timeline(run_hist(), str(tmp_path), "chaos demo: it's")
    with open(tmp_path / "timeline.dat") as f:
        rows = [ln.split() for ln in f if not ln.startswith("#")]
    assert len(rows) == int(1.6 / report.BIN) + 1
    # Two writes end in [0, 0.25), 100 and 150 ms long; a failed write in
    # the next bin, an ok read in the third, the timeout in the last.
    assert rows[0] == ["0.00", "8.0", "0.0", "0.0", "150.000", "150.000"]
    assert rows[1][:5] == ["0.25", "0.0", "4.0", "0.0", "nan"]
    assert rows[2][:5] == ["0.50", "4.0", "0.0", "0.0", "100.000"]
    assert rows[6][:4] == ["1.50", "0.0", "0.0", "4.0"]  # the timeout
    # ./kv build installs gnuplot (gnuplot-nox): its absence is a failure.
    assert shutil.which("gnuplot"), "gnuplot is missing"
    assert png == str(tmp_path / "timeline.png")
    with open(png, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"


# -- history.outcome_of ------------------------------------------------------

@pytest.mark.parametrize("exc,want", [
    (ClientError({"Error": {"Code": "ConditionalCheckFailedException"}},
                 "PutItem"), ("fail", "ConditionalCheckFailedException")),
    (ClientError({"Error": {"Code": "TransactionCanceledException"}},
                 "TransactWriteItems"),
     ("fail", "TransactionCanceledException")),
    (ClientError({"Error": {"Code": "InternalServerError"}}, "PutItem"),
     ("info", "InternalServerError")),
    (ClientError({"Error": {"Code": "ServiceUnavailable"}}, "GetItem"),
     ("info", "ServiceUnavailable")),
    (ReadTimeoutError(endpoint_url="http://x:1"),
     ("info", "ReadTimeoutError")),
])
def test_outcome_of(exc, want):
    assert outcome_of(exc) == want


def test_nemesis_repeated_and_replaced_faults_all_end():
    """A fault injected twice on one target, and a link set to another
    mode, leave no fault open: every event gets its end."""
    c, h, nem = nemesis()
    stop = threading.Event()
    nem.run(parse("workload register\nlink router0 node1 delay 100\n"
                  "link router0 node1 delay 200\nlink router0 node1 drop\n"
                  "link router0 node1 ok\nisolate node2\nisolate node2\n"
                  "heal\n"), stop)
    kinds = [ev["fault"] for ev in h.faults]
    assert kinds == ["link-delay", "link-delay", "link-drop", "isolate",
                     "isolate"]
    assert all(ev["end"] is not None for ev in h.faults), h.faults
    assert h.faults[2]["end"] <= h.faults[3]["time"]  # ended by "ok"
    assert not nem.open


def test_parse_skew():
    exp = parse("workload bank\nskew node +0 x3\nskew node1 -5m\n"
                "skew-heal\n", "t")
    assert exp["once"] == [("skew", "node", "+0 x3"),
                           ("skew", "node1", "-5m"), ("skew-heal",)]
