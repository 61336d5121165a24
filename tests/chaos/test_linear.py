"""test_linear.py — the linearizability checker chaos/check/linear.py on
hand-made histories whose verdict is known (valid ones and invalid ones:
stale reads, impossible values, two cas on one value, new-then-old
reads), against the definition (every order tried) on thousands of small
random histories, on histories of a simulated linearizable register
(valid) with one read corrupted (invalid), through its command line, and
with a search budget too small to decide (unknown).

  cd tests/chaos && python3 -m pytest -q test_linear.py
"""

import heapq
import json
import os
import random
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKER = os.path.join(HERE, "..", "..", "chaos", "check", "linear.py")
HISTORIES = os.path.join(HERE, "histories")
sys.path.insert(0, os.path.dirname(CHECKER))
import linear  # noqa: E402


def op(f, value, start, end, type="ok", key="k", process=0):
    return {"process": process, "f": f, "key": key, "value": value,
            "start": start, "end": end, "type": type}


def w(value, start, end, type="ok", key="k", process=0):
    return op("write", value, start, end, type, key, process)


def r(value, start, end, type="ok", key="k", process=0):
    return op("read", value, start, end, type, key, process)


def cas(expected, new, start, end, type="ok", key="k", process=0):
    return op("cas", [expected, new], start, end, type, key, process)


def valid(ops, **kw):
    return linear.check(ops, **kw)["valid"]


# -- sequential and concurrent reads and writes ----------------------------

def test_empty_history():
    res = linear.check([])
    assert res == {"valid": True, "keys": 0, "ops": 0, "anomalies": [],
                   "unknown_keys": []}


def test_sequential_write_read():
    h = [r(None, 0, 1), w(1, 2, 3), r(1, 4, 5), w(2, 6, 7), r(2, 8, 9),
         r(2, 10, 11)]
    res = linear.check(h)
    assert res["valid"] is True
    assert res["keys"] == 1 and res["ops"] == 6


def test_records_in_any_order():
    h = [w(1, 0, 1), r(1, 2, 3), w(2, 4, 5), r(2, 6, 7), w(3, 8, 9),
         r(3, 10, 11)]
    random.Random(1).shuffle(h)
    assert valid(h) is True


@pytest.mark.parametrize("seen", [1, 2])
def test_concurrent_write_read_sees_either(seen):
    # The read overlaps the write of 2: it may come before or after it.
    h = [w(1, 0, 1), w(2, 2, 5, process=1), r(seen, 3, 4, process=2)]
    assert valid(h) is True


def test_read_of_value_never_written():
    h = [w(1, 0, 1), r(3, 2, 3)]
    res = linear.check(h)
    assert res["valid"] is False
    [a] = res["anomalies"]
    assert a["key"] == "k"
    assert a["op"] == h[1]
    assert a["state_before"] == 1
    assert "read of 3" in a["message"]


def test_message_lists_the_possible_values():
    # During the read the register held 1, then maybe 2: never 3.
    h = [w(1, 0, 1), w(2, 2, 5, process=1), r(3, 3, 4, process=2)]
    res = linear.check(h)
    [a] = res["anomalies"]
    assert a["op"] == h[2]
    assert a["message"] == ("read of 3 at 3.000-4.000 but the register"
                            " could only be 1 or 2")
    assert a["concurrent"] == [h[1]]


def test_stale_read_after_completed_write():
    h = [w(1, 0, 1), w(2, 2, 3), r(1, 4, 5)]
    res = linear.check(h)
    assert res["valid"] is False
    [a] = res["anomalies"]
    assert a["op"] == h[2]
    assert a["state_before"] == 2
    assert a["concurrent"] == []


def test_read_null_after_completed_write():
    h = [w(1, 0, 1), r(None, 2, 3)]
    res = linear.check(h)
    assert res["valid"] is False
    assert res["anomalies"][0]["op"] == h[1]
    assert "read of null" in res["anomalies"][0]["message"]


def test_read_null_concurrent_with_first_write():
    assert valid([w(1, 0, 3), r(None, 1, 2, process=1), r(1, 4, 5)]) is True


def test_touching_intervals_count_as_concurrent():
    # The read starts the instant the write ends: either order is allowed.
    assert valid([w(1, 0, 1), r(None, 1, 2)]) is True
    assert valid([w(1, 0, 1), r(None, 1.000001, 2)]) is False


def test_new_then_old_reads():
    # Two reads in real-time order, both concurrent with the write of 2:
    # the first sees it, the second does not. Each alone is fine.
    h = [w(1, 0, 1), w(2, 2, 10, process=1), r(2, 3, 4, process=2),
         r(1, 5, 6, process=3)]
    res = linear.check(h)
    assert res["valid"] is False
    assert res["anomalies"][0]["op"] == h[3]
    assert valid(h[:3]) is True
    assert valid(h[:2] + h[3:]) is True
    # Old then new is fine.
    assert valid([w(1, 0, 1), w(2, 2, 10, process=1), r(1, 3, 4, process=2),
                  r(2, 5, 6, process=3)]) is True


# -- compare-and-set -------------------------------------------------------

def test_cas_sequence():
    h = [w(1, 0, 1), cas(1, 2, 2, 3), cas(1, 3, 4, 5, type="fail"),
         r(2, 6, 7), cas(2, 3, 8, 9), r(3, 10, 11)]
    res = linear.check(h)
    assert res["valid"] is True
    assert res["ops"] == 5


def test_cas_on_absent_item_cannot_succeed():
    assert valid([cas(1, 2, 0, 1), r(2, 2, 3)]) is False


def test_cas_with_wrong_expected_value():
    h = [w(1, 0, 1), cas(5, 6, 2, 3), r(6, 4, 5)]
    res = linear.check(h)
    assert res["valid"] is False
    assert res["anomalies"][0]["op"] == h[1]
    assert "cas 5->6" in res["anomalies"][0]["message"]


def test_concurrent_cas_order_found():
    # Two concurrent cas chained: 1->2 must go first.
    h = [w(1, 0, 1), cas(2, 3, 2, 5, process=1), cas(1, 2, 2, 5, process=2),
         r(3, 6, 7)]
    assert valid(h) is True


@pytest.mark.parametrize("concurrent", [False, True])
def test_two_cas_same_expected_both_succeed(concurrent):
    if concurrent:
        h = [w(1, 0, 1), cas(1, 2, 2, 5, process=1),
             cas(1, 3, 2, 5, process=2)]
    else:
        h = [w(1, 0, 1), cas(1, 2, 2, 3), cas(1, 3, 4, 5)]
    assert valid(h) is False
    # A write of 1 between them explains both.
    h.append(w(1, 1.5, 4.5, process=3))
    assert valid(h) is True


# -- answers of unknown outcome and failures -------------------------------

def test_info_write_read_after_its_end():
    # The write timed out at 1.5; the read at 10 sees it over the write of
    # 1 that ended at 3: it took effect late, after its client gave up.
    h = [w(5, 1, 1.5, type="info"), w(1, 2, 3, process=1),
         r(5, 10, 11, process=2)]
    assert valid(h) is True
    h[0]["end"] = None
    assert valid(h) is True


def test_info_write_never_read():
    h = [w(1, 0, 1), w(5, 2, None, type="info", process=1), r(1, 3, 4),
         w(2, 5, 6), r(2, 7, 8)]
    res = linear.check(h)
    assert res["valid"] is True
    assert res["ops"] == 5


def test_info_write_cannot_act_before_its_start():
    h = [w(1, 0, 1), r(5, 2, 3), w(5, 4, None, type="info", process=1)]
    assert valid(h) is False


def test_info_write_acts_at_most_once():
    # Seen, overwritten, then seen again: it would have to act twice.
    h = [w(5, 0, None, type="info", process=1), r(5, 1, 2), w(1, 3, 4),
         r(5, 5, 6)]
    assert valid(h) is False


def test_info_cas():
    applied = [w(1, 0, 1), cas(1, 2, 2, None, type="info", process=1),
               r(2, 5, 6)]
    assert valid(applied) is True
    not_applied = [w(1, 0, 1), cas(1, 2, 2, None, type="info", process=1),
                   r(1, 5, 6)]
    assert valid(not_applied) is True
    impossible = [w(1, 0, 1), cas(7, 2, 2, None, type="info", process=1),
                  r(2, 5, 6)]
    assert valid(impossible) is False


def test_info_write_seen_only_by_an_info_cas():
    # 7 can only come from the cas 5->7, whose 5 only from the write.
    h = [w(1, 0, 1), w(5, 2, None, type="info", process=1),
         cas(5, 7, 3, None, type="info", process=2), r(7, 5, 6)]
    assert valid(h) is True
    h[1]["value"] = 6
    assert valid(h) is False


def test_info_read_is_dropped():
    h = [w(1, 0, 1), r(42, 2, None, type="info"), r(1, 3, 4)]
    res = linear.check(h)
    assert res["valid"] is True
    assert res["ops"] == 2


def test_failed_ops_are_ignored():
    # The only write of 7 failed: nobody can read 7.
    h = [w(1, 0, 1), w(7, 2, 3, type="fail"), r(7, 4, 5)]
    assert valid(h) is False
    h = [w(1, 0, 1), w(7, 2, 3, type="fail"), r(1, 4, 5),
         cas(1, 8, 6, 7, type="fail"), r(1, 8, 9)]
    res = linear.check(h)
    assert res["valid"] is True
    assert res["ops"] == 3


# -- keys ------------------------------------------------------------------

def test_keys_are_independent():
    h = [w(1, 0, 1, key="a"), r(1, 2, 3, key="a"),
         w(1, 0, 1, key="b"), r(2, 2, 3, key="b"),
         w(2, 0, 1, key="c"), r(2, 2, 3, key="c")]
    res = linear.check(h)
    assert res["valid"] is False
    assert res["keys"] == 3
    assert [a["key"] for a in res["anomalies"]] == ["b"]
    # A write of 2 to key c does not explain key b's read.
    h.append(w(2, 0.5, 1.5, key="c"))
    assert linear.check(h)["anomalies"][0]["key"] == "b"


def test_malformed_records_are_refused():
    with pytest.raises(ValueError):
        linear.check([w(1, 2, 1)])
    with pytest.raises(ValueError):
        linear.check([op("delete", None, 0, 1)])
    with pytest.raises(ValueError):
        linear.check([w(1, 0, 1, type="maybe")])


def test_long_sequential_history():
    # Thousands of steps: the search must not recurse.
    h, t = [], 0.0
    for i in range(5000):
        h.append(w(i, t, t + 0.5))
        h.append(r(i, t + 0.6, t + 0.9))
        t += 1
    assert valid(h) is True
    h[-1]["value"] = 3
    assert valid(h) is False


# -- against the definition, on small random histories -------------------

def by_definition(ops):
    """Is the one-key history ops linearizable, by the definition and
    nothing cleverer: is there a sequence of all its ok operations and
    some of its info writes and cas, each after every ok operation that
    ended before it started (equal times are concurrent), that a
    register starting at null explains?"""
    ops = [o for o in ops if o["type"] == "ok" or
           (o["type"] == "info" and o["f"] != "read")]
    ends = [o["end"] if o["type"] == "ok" else float("inf") for o in ops]
    required = frozenset(i for i, o in enumerate(ops) if o["type"] == "ok")

    def extend(placed, state):
        if required <= placed:
            return True
        for i, o in enumerate(ops):
            if i in placed or any(j not in placed and ends[j] < o["start"]
                                  for j in required):
                continue
            v = o["value"]
            if o["f"] == "write":
                ok, new = True, v
            elif o["f"] == "read":
                ok, new = state == v, state
            else:
                ok, new = state == v[0], v[1]
            if ok and extend(placed | {i}, new):
                return True
        return False

    return extend(frozenset(), None)


def random_history(rng, n):
    """n operations on one key with small integer times (so that ties
    are common), values 0..2 and random answers, most of them ok."""
    h = []
    for p in range(n):
        start = rng.randrange(8)
        end = start + rng.randrange(4)
        f = rng.choice(["write", "read", "read", "cas"])
        if f == "write":
            value = rng.randrange(3)
        elif f == "read":
            value = rng.choice([None, 0, 1, 2])
        else:
            value = [rng.randrange(3), rng.randrange(3)]
        x = rng.random()
        type = "ok" if x < 0.7 else "info" if x < 0.85 else "fail"
        h.append(op(f, value, start, None if type == "info" and
                    rng.random() < 0.5 else end, type, process=p))
    return h


def test_agrees_with_the_definition():
    rng = random.Random(20261)
    verdicts = {True: 0, False: 0}
    for trial in range(4000):
        h = random_history(rng, 2 + trial % 7)
        want = by_definition(h)
        assert linear.check(h)["valid"] is want, h
        verdicts[want] += 1
    assert min(verdicts.values()) > 600, verdicts


def test_agrees_with_the_definition_near_valid():
    # Histories of a real register (see simulate) with many timeouts, one
    # operation in two then changed at random.
    rng = random.Random(20262)
    verdicts = {True: 0, False: 0}
    for trial in range(1500):
        h = simulate(rng.randrange(1 << 30), 3 + trial % 8,
                     procs=rng.randrange(2, 6), values=3, info_p=0.3)
        if trial % 2:
            x = rng.choice(h)
            if x["f"] == "read":
                x["value"] = rng.choice([None, 0, 1, 2])
            elif x["f"] == "write":
                x["value"] = rng.randrange(3)
            else:
                x["value"] = [rng.randrange(3), rng.randrange(3)]
        want = by_definition(h)
        assert linear.check(h)["valid"] is want, h
        verdicts[want] += 1
    assert min(verdicts.values()) > 100, verdicts


# -- a simulated register --------------------------------------------------

def simulate(seed, n_ops, procs=10, key="k", values=6, info_p=0.0):
    """The history of a linearizable register: procs clients, each
    sending one operation after another, with random durations; each
    operation takes effect at a random point of its interval, and the
    answers are those of applying them in the order of those points. A
    cas that does not find its expected value fails. With probability
    info_p an operation times out (type info): it takes effect at a
    random point after its start, possibly after its end, or never, and
    its client goes on after the timeout under a new process id."""
    rng = random.Random(seed)
    free = [(rng.uniform(0, 0.002), p) for p in range(procs)]
    heapq.heapify(free)
    next_pid = procs
    planned = []
    for _ in range(n_ops):
        start, p = heapq.heappop(free)
        dur = 0.0002 + rng.expovariate(1 / 0.004)
        end = start + dur
        x = rng.random()
        if x < 0.4:
            f, value = "write", rng.randrange(values)
        elif x < 0.8:
            f, value = "read", None
        else:
            f, value = "cas", [rng.randrange(values), rng.randrange(values)]
        rec = {"process": p, "f": f, "key": key, "value": value,
               "start": start, "end": end, "type": "ok"}
        if rng.random() < info_p:
            rec.update(type="info", end=None, error="timeout")
            at = start + rng.uniform(0, 3 * dur) \
                if rng.random() < 0.7 else None
            p, next_pid = next_pid, next_pid + 1
        else:
            at = rng.uniform(start, end)
        planned.append((at, rec))
        heapq.heappush(free, (end + rng.expovariate(1 / 0.001), p))
    state = None
    for at, rec in sorted((x for x in planned if x[0] is not None),
                          key=lambda x: x[0]):
        if rec["f"] == "write":
            state = rec["value"]
        elif rec["f"] == "read":
            if rec["type"] == "ok":
                rec["value"] = state
        elif state == rec["value"][0]:
            state = rec["value"][1]
        elif rec["type"] == "ok":
            rec.update(type="fail", error="ConditionalCheckFailed")
    return [rec for _, rec in planned]


def simulate_keys(seed, n_keys, n_ops, **kw):
    h = []
    for k in range(n_keys):
        h += simulate(seed * 1000 + k, n_ops, key="k%d" % k, **kw)
    return h


SEEDS = range(6)


@pytest.mark.parametrize("seed", SEEDS)
def test_simulated_register_is_linearizable(seed):
    h = simulate_keys(seed, 3, 600, info_p=0.01)
    res = linear.check(h)
    assert res["valid"] is True, res["anomalies"]
    assert res["keys"] == 3


@pytest.mark.parametrize("seed", SEEDS)
def test_simulated_register_with_a_value_never_written(seed):
    h = simulate_keys(seed, 3, 600, info_p=0.01)
    rng = random.Random(seed)
    reads = [x for x in h if x["f"] == "read" and x["type"] == "ok"]
    bad = rng.choice(reads)
    bad["value"] = 1000
    res = linear.check(h)
    assert res["valid"] is False
    [a] = res["anomalies"]
    assert a["key"] == bad["key"]
    assert a["op"] is bad


@pytest.mark.parametrize("seed", SEEDS)
def test_simulated_register_with_a_null_read_after_a_write(seed):
    # Nothing deletes: once a write was answered, the item exists.
    h = simulate_keys(seed, 3, 600, info_p=0.01)
    rng = random.Random(seed)
    key = "k%d" % rng.randrange(3)
    first = min(x["end"] for x in h if x["key"] == key and
                x["f"] == "write" and x["type"] == "ok")
    reads = [x for x in h if x["key"] == key and x["f"] == "read" and
             x["type"] == "ok" and x["start"] > first and
             x["value"] is not None]
    bad = rng.choice(reads)
    bad["value"] = None
    res = linear.check(h)
    assert res["valid"] is False
    assert [a["key"] for a in res["anomalies"]] == [key]


def test_simulated_register_long_and_concurrent():
    h = simulate(99, 3000, procs=10, values=4, info_p=0.002)
    assert valid(h) is True


# -- budget ----------------------------------------------------------------

def pathological(n=10):
    """n writes of unknown outcome, then n concurrent reads, each of the
    value of one of them, then a read that nothing explains: before
    failing, the search meets every subset of the reads placed."""
    h = [w(i, 0.1 * i, None, type="info", process=i) for i in range(n)]
    h += [r(i, 10, 20, process=20 + i) for i in range(n)]
    return h + [r(200, 30, 31, process=99)]


def test_budget_exceeded_is_unknown():
    res = linear.check(pathological(), max_states=500)
    assert res["valid"] == "unknown"
    assert res["unknown_keys"] == ["k"]
    assert res["anomalies"] == []
    # With room enough, the search decides.
    assert valid(pathological(), max_states=200_000) is False
    assert valid(pathological()[:-1], max_states=500) is True


def test_invalid_key_wins_over_unknown_key():
    h = pathological() + [w(1, 0, 1, key="z"), r(2, 2, 3, key="z")]
    res = linear.check(h, max_states=500)
    assert res["valid"] is False
    assert res["unknown_keys"] == ["k"]
    assert [a["key"] for a in res["anomalies"]] == ["z"]


# -- files and command line ------------------------------------------------

def run_cli(path, *args):
    return subprocess.run(["/usr/bin/python3", CHECKER, path] + list(args),
                          capture_output=True, text=True, timeout=60)


def test_check_file():
    res = linear.check_file(os.path.join(HISTORIES, "cas_valid.jsonl"))
    assert res["valid"] is True and res["keys"] == 2
    res = linear.check_file(os.path.join(HISTORIES, "stale_read.jsonl"))
    assert res["valid"] is False
    assert res["anomalies"][0]["key"] == "k2"


def test_cli_exit_codes(tmp_path):
    p = run_cli(os.path.join(HISTORIES, "cas_valid.jsonl"))
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["valid"] is True
    p = run_cli(os.path.join(HISTORIES, "stale_read.jsonl"))
    assert p.returncode == 1, p.stderr
    out = json.loads(p.stdout)
    assert out["valid"] is False
    assert out["anomalies"][0]["op"]["value"] == 1
    path = tmp_path / "pathological.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in pathological()))
    p = run_cli(str(path), "--max-states", "500")
    assert p.returncode == 2, p.stderr
    assert json.loads(p.stdout)["unknown_keys"] == ["k"]
