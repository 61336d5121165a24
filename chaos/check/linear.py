"""linear.py — is a recorded history of reads, writes and compare-and-sets
linearizable, key by key?

A history is what the clients saw: for each operation, when it was
invoked (start), when its answer arrived (end) and the answer (type ok,
fail or info; the value read). It is linearizable when each operation
can be given one instant inside its interval at which it took effect,
such that applying the operations one after the other in that order to
a single register explains every answer: each read returns the value of
the last write or successful cas before it (null before any), and each
cas answered ok found the value it expected. A valid verdict is a proof:
the search found such an order. An invalid verdict is one too: the
search ruled out every order the intervals allow, and the report names
the operation no order could place.

Keys are independent registers, and linearizability is compositional:
a history is linearizable exactly when the sub-history of each key is.
So each key is checked alone, which keeps every search small.

The search is Wing and Gong's, with Lowe's memoization. The calls and
returns of one key's operations form a doubly linked list in time order
(a call before a return of the same instant: operations that merely
touch count as concurrent, so the checker never blames a tie). The
operations that may take effect next, the candidates, are those whose
call comes before the first return still in the list: none of them can
have been answered before any other unplaced one was invoked. The
search tries them one by one, the one answered first first (it is the
one that has to be placed soonest, and that order is most often right):
it applies one to the register and, if the answer matches, records the
step on a stack, takes the operation's call and return out of the list
and starts again with the new candidates. When no candidate fits, the
first return's operation cannot be placed before its answer in this
order, so the search undoes its last step (puts that operation back,
restores the register) and tries the next candidate of the
configuration before it. It ends when every operation answered ok is
placed (valid) or when there is nothing left to undo (invalid). Lowe's
addition: two partial orders that placed the same operations and left
the register with the same value have the same futures, so the search
remembers each configuration (operations placed, as bits of a Python
int, and value) it reached, and never explores one twice. The stack is
a list, not Python recursion, so histories thousands of operations long
are fine.

Three rules cut the search without changing its verdict. A candidate
read that returns the register's current value (or a cas from that
value to itself) is placed at once, without trying the other candidates,
and if that fails so does the configuration: it changes nothing, and
nothing unplaced had to come before it, so any order that places it
later can place it now instead. An operation of unknown outcome is
tried only after the ok candidates, and only when it changes the value
to one that a candidate would observe (a read returning it, a cas
expecting it): one that is overwritten before anyone looks can be left
out of any order. And a configuration is skipped when one with the same
operations answered ok placed and the same value, but fewer operations
of unknown outcome placed (none, or one fewer), has already failed: an
operation of unknown outcome only removes choices once placed.

A fail answer (a cas whose condition failed, a throttled or refused
write) means the operation certainly did not take effect, so it has no
place in the order and is dropped before the search, as Jepsen's
Knossos does. (A failed cas also says that the register differed from
the value it expected at some instant of its interval; that is not
checked.) An info answer (a timeout, a lost connection) means the
outcome is unknown: the operation may have taken effect once at any
instant after its start, even after the client gave up on it, or
never. An info read tells nothing and is dropped. An info write or cas
has a call and no return: the search may place it at any point after
its call, but never has to, and the history is valid once every ok
operation is placed.

The cost is the number of configurations met. For a history that is
linearizable the first orders tried are mostly right: with ten clients
on one key, two or three configurations per operation. For one that is
not, the search has to rule out every order up to the failure. Either
way the configurations multiply with the operations of a key that
overlap in time (beyond fifteen or twenty at once it gets slow) and,
for a history that is not linearizable, with each operation of unknown
outcome whose value some read could observe (above all when the same
values are written again and again). A search that reaches max_states
configurations stops, and the key is reported unknown.

When a key is not linearizable, the report gives the operation that
blocked the longest partial order found (the one with the most ok
operations placed). In it every candidate was refused, so that
operation is a read or a cas, one that no value the register could
hold during its interval explains; state_before is the register's value
at the end of that partial order, and the message lists every value the
register could have had while the operation might have taken effect,
over all the orders explored.

  python3 chaos/check/linear.py HISTORY.jsonl [--max-states N]

prints the result as JSON and exits 0 when valid, 1 when not, 2 when
some key could not be decided within the budget. check() and
check_file() are for tests and other tools.
"""

import argparse
import json
import math
import sys

WRITE, READ, CAS = 0, 1, 2
_KINDS = {"write": WRITE, "read": READ, "cas": CAS}
MAX_CONCURRENT = 10


def _end(rec):
    """The record's end, infinity when it has none (an info answer)."""
    e = rec.get("end")
    return math.inf if e is None else float(e)


def _fmt_value(v):
    return json.dumps(v)


def _fmt_time(t):
    return "?" if t is None else "%.3f" % t


def _describe(rec):
    """'read of 3', 'write of 3', 'cas 3->4' for rec."""
    f, v = rec["f"], rec.get("value")
    if f == "cas":
        return "cas %s->%s" % (_fmt_value(v[0]), _fmt_value(v[1]))
    return "%s of %s" % (f, _fmt_value(v))


def _search(req, info, max_states, watch=-1):
    """WGL on one key. req: the operations answered ok, info: those of
    unknown outcome, each list sorted by start, each operation a tuple
    (kind, arg, new, start, end): arg is the value written or read or
    the value a cas expects, new the value a cas writes.

    Returns (verdict, best, seen): verdict True, False or None (budget
    exceeded); best = (index in req, state) of the deepest blocked
    configuration; seen = (refused, accepted), the states in which
    req[watch] was tried."""
    n, n_info = len(req), len(info)
    rk = [o[0] for o in req]
    ra = [o[1] for o in req]
    rb = [o[2] for o in req]
    ends = [o[4] for o in req]
    ik = [o[0] for o in info]
    ia = [o[1] for o in info]
    ib = [o[2] for o in info]
    istart = [o[3] for o in info]

    # The list of calls and returns: entry 0 is the head, -1 ends the
    # list; req[i]'s call is entry 2i+1, its return 2i+2.
    events = []
    for i, o in enumerate(req):
        events.append((o[3], 0, i))
        events.append((o[4], 1, i))
    events.sort()
    nxt = [-1] * (2 * n + 1)
    prv = [-1] * (2 * n + 1)
    last = 0
    for _, is_ret, i in events:
        e = 2 * i + 1 + is_ret
        nxt[last] = e
        prv[e] = last
        last = e

    # The configuration: the ok operations placed (every index below w,
    # and w + b for each bit b of rel), the info operations placed (bit
    # j of placed_info: info[j]) and the register's value. Its
    # candidates: cands (ok operations other than reads, in the order
    # they are tried), ci the next to try, ret the first return in the
    # list, j the next info operation to try. A stack entry is a step
    # taken: (req index, or -1 - j for info[j]; the configuration before
    # it and where its candidates stood; whether it was forced).
    remaining = n
    rel, w, placed_info, state = 0, 0, 0, None
    cands, ci, ret, j = (), 0, 0, 0
    cache = set()
    stack = []
    best_remaining, best = n + 1, None
    refused, accepted = set(), set()
    fresh = True
    while True:
        if remaining == 0:
            return True, None, (refused, accepted)
        push = None
        if fresh:
            # A configuration just reached. An ok read that may come next
            # and returns the register's value can be placed now: any
            # order that places it later can place it here instead, as
            # it changes nothing and nothing unplaced had to precede it.
            # So it is placed without trying the others first, and if
            # that fails, this configuration fails. The same for a cas
            # from a value to itself.
            fresh = False
            e = nxt[0]
            others = []
            # The walk meets a return before the end of the list: an ok
            # operation not yet placed has its return after its call.
            while e & 1:
                op = e >> 1
                if rk[op] == WRITE:
                    others.append(op)
                elif state == ra[op] and (rk[op] == READ or
                                          rb[op] == state):
                    break
                else:
                    if op == watch:
                        refused.add(state)
                    if rk[op] == CAS:
                        others.append(op)
                e = nxt[e]
            if e & 1:
                if op == watch:
                    accepted.add(state)
                push = op, state, True
            else:
                cands, ci, ret, j = others, 0, e, 0
                if len(others) > 1:
                    others.sort(key=ends.__getitem__)
                if remaining < best_remaining:
                    best_remaining, best = remaining, ((e - 1) >> 1, state)

        if push is None:
            # Try the next candidate: writes, and cas that find their
            # value.
            while ci < len(cands):
                op = cands[ci]
                ci += 1
                if rk[op] == WRITE:
                    push = op, ra[op], False
                    break
                if state == ra[op]:
                    if op == watch:
                        accepted.add(state)
                    push = op, rb[op], False
                    break
                if op == watch:
                    refused.add(state)

        if push is not None:
            op, new, forced = push
            nrel, nw = rel | (1 << (op - w)), w
            if nrel & 1:
                t = ((nrel + 1) & ~nrel).bit_length() - 1
                nrel >>= t
                nw += t
            base = nrel << n_info
            conf = (base | placed_info, nw, new)
            # Skipped when reached before, or when a configuration it
            # is dominated by failed (_dominated).
            if conf not in cache and not (placed_info and _dominated(
                    cache, base, nw, new, placed_info, ())):
                cache.add(conf)
                if len(cache) > max_states:
                    return None, None, (refused, accepted)
                stack.append((op, state, rel, w, placed_info, cands, ci, ret,
                              j, forced))
                state, rel, w = new, nrel, nw
                _unlink(nxt, prv, 2 * op + 1)
                remaining -= 1
                fresh = True
                continue
            if not forced:
                continue
            # A forced step that leads where the search failed before:
            # this configuration fails.

        else:
            # Every ok operation that could come next was tried; now the
            # info operations invoked before the first return, those
            # that would change the register to a value a candidate
            # would observe.
            limit = ends[(ret - 1) >> 1]
            path = seen = None
            while j < n_info and istart[j] <= limit:
                bit = 1 << j
                if not placed_info & bit:
                    if ik[j] == WRITE:
                        ok, new = True, ia[j]
                    else:
                        ok, new = state == ia[j], ib[j]
                    if ok and new != state:
                        if seen is None:
                            seen = _observers(nxt, rk, ra, ik, ia, istart,
                                              placed_info, limit)
                        ok = new in seen
                    if ok:
                        base = rel << n_info
                        conf = (base | placed_info | bit, w, new)
                        if conf not in cache:
                            if path is None:
                                path = _info_path(stack, placed_info, state)
                            if not _dominated(cache, base, w, new,
                                              placed_info | bit, path):
                                break
                j += 1
            else:
                j = -1
            if j >= 0:
                cache.add(conf)
                if len(cache) > max_states:
                    return None, None, (refused, accepted)
                stack.append((-1 - j, state, rel, w, placed_info, cands, ci,
                              ret, j + 1, False))
                placed_info |= bit
                state = new
                fresh = True
                continue

        # Nothing fits here: undo the last step, and the one before it
        # while the step undone was forced.
        while True:
            if not stack:
                return False, best, (refused, accepted)
            (op, state, rel, w, placed_info, cands, ci, ret, j,
             forced) = stack.pop()
            if op >= 0:
                _relink(nxt, prv, 2 * op + 1)
                remaining += 1
            if not forced:
                break


def _unlink(nxt, prv, e):
    """Take call entry e and its return out of the list."""
    p, q = prv[e], nxt[e]
    nxt[p] = q
    prv[q] = p  # q is the return, or an entry before it
    r = e + 1
    p, q = prv[r], nxt[r]
    nxt[p] = q
    if q != -1:
        prv[q] = p


def _relink(nxt, prv, e):
    """Put call entry e and its return back: the reverse of _unlink, so
    each finds the neighbours it had."""
    r = e + 1
    nxt[prv[r]] = r
    if nxt[r] != -1:
        prv[nxt[r]] = r
    nxt[prv[e]] = e
    prv[nxt[e]] = e


def _observers(nxt, rk, ra, ik, ia, istart, placed_info, limit):
    """The values an operation that may come next would observe: those
    the ok reads and cas among the candidates expect, and those the info
    cas not placed yet and invoked before limit expect."""
    seen = set()
    e = nxt[0]
    while e & 1:
        op = e >> 1
        if rk[op] != WRITE:
            seen.add(ra[op])
        e = nxt[e]
    j = 0
    while j < len(ik) and istart[j] <= limit:
        if ik[j] == CAS and not placed_info >> j & 1:
            seen.add(ia[j])
        j += 1
    return seen


def _info_path(stack, placed_info, state):
    """(placed_info, state) of each configuration on the current path
    with the current ok operations placed: the one reached by the last
    ok step (or the start) and those after it, which placed info
    operations."""
    path = {(placed_info, state)}
    i = len(stack) - 1
    while i >= 0 and stack[i][0] < 0:
        path.add((stack[i][4], stack[i][1]))
        i -= 1
    return path


def _dominated(cache, base, w, state, mask, path):
    """Can the configuration (ok operations base and w, info operations
    mask, register state) be skipped? It can when a configuration with
    the same ok operations placed and the same value, but fewer info
    operations placed (none, or one fewer), was reached before and is
    not on the current path (path: its (info, state) pairs), so its
    search ended and failed: a placed info operation only removes
    choices, since it could as well never happen."""
    if (base, w, state) in cache and (0, state) not in path:
        return True
    m = mask
    while m:
        b = m & -m
        m ^= b
        sub = mask ^ b
        if sub and (base | sub, w, state) in cache and \
                (sub, state) not in path:
            return True
    return False


def check_key(key, recs, max_states=2_000_000):
    """Check one key's operations (records already filtered: ok ones and
    info writes and cas). Returns (verdict, anomaly or None)."""
    recs = sorted(recs, key=lambda r: (float(r["start"]), _end(r)))
    req, info, req_recs = [], [], []
    for r in recs:
        k = _KINDS[r["f"]]
        v = r.get("value")
        a, b = (v[0], v[1]) if k == CAS else (v, None)
        if r["type"] == "info":
            info.append((k, a, b, float(r["start"]), math.inf))
        else:
            req.append((k, a, b, float(r["start"]), _end(r)))
            req_recs.append(r)
    verdict, best, _ = _search(req, info, max_states)
    if verdict is not False:
        return verdict, None
    op, state = best
    # Again, noting every value the blocking operation met.
    _, _, (refused, accepted) = _search(req, info, max_states, watch=op)
    rec = req_recs[op]
    lo, hi = req[op][3], req[op][4]
    concurrent = [r for r in recs if r is not rec and
                  float(r["start"]) <= hi and
                  lo <= (math.inf if r["type"] == "info" else _end(r))]
    vals = sorted(refused | accepted, key=lambda v: (v is not None, v))
    could = " or ".join(_fmt_value(v) for v in vals) or "nothing"
    what = "%s at %s-%s" % (_describe(rec), _fmt_time(lo),
                            _fmt_time(rec.get("end")))
    if accepted:
        msg = ("%s fits no order that can also place the operations after"
               " it (the register could be %s)" % (what, could))
    else:
        msg = "%s but the register could only be %s" % (what, could)
    return False, {"key": key, "op": rec, "state_before": state,
                   "concurrent": concurrent[:MAX_CONCURRENT],
                   "message": msg}


def check(ops, max_states=2_000_000):
    """Check a history (a list of operation records, any order). See the
    module's docstring for the verdict and the report."""
    by_key = {}
    for r in ops:
        if r["f"] not in _KINDS:
            raise ValueError("unknown operation %r" % (r["f"],))
        if r["type"] == "fail":
            continue
        if r["type"] == "info" and r["f"] == "read":
            continue
        if r["type"] not in ("ok", "info"):
            raise ValueError("unknown answer type %r" % (r["type"],))
        if r["type"] == "ok" and _end(r) < float(r["start"]):
            raise ValueError("operation ends before it starts: %r" % (r,))
        by_key.setdefault(r["key"], []).append(r)
    anomalies, unknown = [], []
    n = 0
    for key in sorted(by_key, key=str):
        recs = by_key[key]
        n += len(recs)
        verdict, anomaly = check_key(key, recs, max_states)
        if verdict is None:
            unknown.append(key)
        elif verdict is False:
            anomalies.append(anomaly)
    valid = False if anomalies else ("unknown" if unknown else True)
    return {"valid": valid, "keys": len(by_key), "ops": n,
            "anomalies": anomalies, "unknown_keys": unknown}


def read_history(path):
    """The records of a JSON-lines file (blank lines skipped)."""
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def check_file(path, max_states=2_000_000):
    return check(read_history(path), max_states)


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="Check a read/write/cas history for linearizability,"
                    " key by key.")
    ap.add_argument("history", help="JSON lines, one operation a line")
    ap.add_argument("--max-states", type=int, default=2_000_000,
                    help="search budget per key (2000000)")
    args = ap.parse_args(argv)
    res = check_file(args.history, args.max_states)
    print(json.dumps(res, indent=1))
    if res["valid"] is True:
        return 0
    return 1 if res["valid"] is False else 2


if __name__ == "__main__":
    sys.exit(main())
