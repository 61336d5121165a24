"""test_experiments.py — every built-in chaos experiment, short, on a
real cluster: it must pass as it is, and fail, through its own checker,
with the fault planted in the nodes that this checker exists to catch
(chaos/run.py --plant; node/plant.h). A checker that cannot fail is
worth nothing, so each one is shown to fail here.

Run one experiment's pair with -k NAME (ctest does, one test each).
Binaries come from $KV_BUILD.
"""

import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
RUN = os.path.join(REPO, "chaos", "run.py")
SECONDS = os.environ.get("KV_CHAOS_SECONDS", "8")

# experiment -> (planted fault and the event it fires at, the checker,
# what the checker must report). The events come early, so that a slow
# run (the sanitizer build, beside other tests) still reaches them.
CASES = {
    "acked-writes-kill": ("lose-ack:20", "acked-writes",
                          lambda v: v["lost"] >= 1),
    "acked-writes-disk": ("lose-ack:20", "acked-writes",
                          lambda v: v["lost"] >= 1),
    "idgen-pause": ("dup-id:20", "idgen", lambda v: v["duplicates"] >= 1),
    "linearizable-partition": ("stale-read:20", "linearizable",
                               lambda v: v["anomalies"]),
    "bank-kill": ("txn-half:10", "bank",
                  lambda v: v["bad_reads"] >= 1 or v["final_problem"]),
    "bank-skew": ("txn-half:10", "bank",
                  lambda v: v["bad_reads"] >= 1 or v["final_problem"]),
    "gsi-kill": ("index-drop:20", "index-converged",
                 lambda v: v["missing"] + v["extra"] >= 1),
}


def run(name, out, *extra):
    p = subprocess.run(
        [sys.executable, RUN, "run", name, "--seconds", SECONDS, "--seed",
         "7", "--out", str(out), "--json"] + list(extra),
        capture_output=True, text=True, timeout=200)
    try:
        summary = json.loads(p.stdout)
    except ValueError:
        raise AssertionError("no summary from %s (exit %d):\n%s\n%s" % (
            name, p.returncode, p.stdout[-2000:], p.stderr[-4000:]))
    return p.returncode, summary


def test_every_experiment_is_tested():
    names = sorted(f[:-4] for f in os.listdir(
        os.path.join(REPO, "chaos", "experiments")) if f.endswith(".exp"))
    assert names == sorted(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_experiment_passes(name, tmp_path):
    rc, s = run(name, tmp_path)
    _, checker, _ = CASES[name]
    assert s["checkers"][checker]["valid"] is True, json.dumps(
        s["checkers"], indent=1)[:3000]
    assert rc == 0 and s["passed"]
    o = s["operations"]
    assert o["ok"] >= 50, o  # it did work
    assert sum(s["faults"].values()) >= 2, s["faults"]  # and faults hit it
    assert os.path.getsize(tmp_path / "timeline.png") > 10000
    assert (tmp_path / "history.jsonl").stat().st_size > 0


@pytest.mark.parametrize("name", sorted(CASES))
def test_planted_fault_is_caught(name, tmp_path):
    plant, checker, caught = CASES[name]
    rc, s = run(name, tmp_path, "--plant", plant)
    v = s["checkers"][checker]
    assert v["valid"] is False, json.dumps(v, indent=1)[:3000]
    assert caught(v), json.dumps(v, indent=1)[:3000]
    assert rc == 1 and not s["passed"]
    assert os.path.isdir(tmp_path / "logs")  # kept for a failed run
