"""linear.py — is a recorded history of reads, writes and compare-and-sets
linearizable, key by key?

A history is what the clients saw: for each operation, when it was
invoked (start), when its answer arrived (end) and what the answer was
(type ok, fail or info; the value read). It is linearizable when every
operation can be given one instant inside its interval at which it took
effect, such that applying the operations one after the other in that
order to a single register explains every answer: each read returns the
value of the last write or successful compare-and-set before it (null
before any), and each compare-and-set that succeeded found the value it
expected. A valid verdict is a proof: the search found such an order.
An invalid verdict is a proof too, because the search tried every order
the intervals allow (up to orders it had already shown to lead nowhere,
see below); its report names the operation no order could place.

Keys are independent registers, and linearizability is compositional:
a history is linearizable exactly when the sub-history of each key is.
So each key is checked alone, which keeps every search small.

The search is Wing and Gong's, with Lowe's memoization. The calls and
returns of one key's operations form a doubly linked list in time order
(a call before a return of the same instant: operations that merely
touch count as concurrent, so the checker never blames a tie). The
operations that may take effect next are those whose call comes before
the first return still in the list: none of them can have been answered
before any of the others was invoked. The search walks the list from
its head: at a call it applies that operation to the register; if the
answer matches, it records the step on a stack, takes the operation's
call and return out of the list and starts again from the head. At a
return, the operation it belongs to could not be placed before its
answer in this order, so the search undoes its last step (puts that
operation back, restores the register) and tries the next candidate
after it. It ends when every operation answered ok is placed (valid)
or when there is nothing left to undo (invalid). Lowe's addition: two
partial orders that placed the same set of operations and left the
register with the same value have the same futures, so the search
remembers each (set, value) pair it reached, the set a bitset in a
Python int, and never explores one twice. That turns an exponential
search into one bounded by the number of such pairs, which for a real
history is close to the number of operations times the concurrency.
The stack is a list, not Python recursion, so histories thousands of
operations long are fine.

A fail answer (a compare-and-set whose condition failed, a throttled or
refused write) means the operation certainly did not take effect, and
it has no effect on the register, so it is dropped before the search,
as Jepsen's Knossos does; were it kept, nothing about it would change.
An info answer (a timeout, a lost connection) means the outcome is
unknown: the operation may have taken effect once at any instant after
its start, even after the client gave up on it, or never. An info read
tells nothing and is dropped. An info write or compare-and-set has a
call and no return in the list: the search may place it at any point
after its call, like any other candidate, but never has to, and the
history is valid once every ok operation is placed, whichever info
operations were. Each info operation can double the pairs the search
may meet, so a history with many of them per key can exceed the budget
(max_states pairs per key): that key is then reported unknown rather
than checked.

When a key is not linearizable, the report gives the operation that
blocked the longest partial order found (the one with the most
operations placed): in it, every candidate before the first remaining
return was refused, and that return's operation is a read or a
compare-and-set (a write is never refused) which no value the register
could hold during its interval explains. state_before is the
register's value at the end of that partial order; the message lists
every value the register could have had while the operation might have
taken effect, over all the orders explored.

  python3 chaos/check/linear.py HISTORY.jsonl [--max-states N]

prints the result as JSON and exits 0 when valid, 1 when not, 2 when
some key was too large to decide. check() and check_file() are for
tests and other tools.
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
    # j of placed_info: info[j]) and the register's value. A stack entry
    # is a step taken: (call entry, or -1 - j for info[j]; the
    # configuration before it; for info, the return it was tried
    # before; whether it was forced).
    remaining = n
    rel, w, placed_info, state = 0, 0, 0, None
    cache = set()
    stack = []
    best_remaining, best = n + 1, None
    refused, accepted = set(), set()
    entry, jfrom, fresh = nxt[0], 0, True
    while True:
        if remaining == 0:
            return True, None, (refused, accepted)
        dead = False
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
            while e & 1:
                op = e >> 1
                if state == ra[op] and rk[op] != WRITE and (
                        rk[op] == READ or rb[op] == state):
                    break
                e = nxt[e]
            if e & 1:
                if op == watch:
                    accepted.add(state)
                nrel, nw = rel | (1 << (op - w)), w
                if nrel & 1:
                    t = ((nrel + 1) & ~nrel).bit_length() - 1
                    nrel >>= t
                    nw += t
                base = nrel << n_info
                conf = (base | placed_info, nw, state)
                if conf in cache or (placed_info and _dominated(
                        cache, base, nw, state, placed_info, ())):
                    dead = True
                else:
                    cache.add(conf)
                    if len(cache) > max_states:
                        return None, None, (refused, accepted)
                    stack.append((e, state, rel, w, placed_info, 0, True))
                    rel, w = nrel, nw
                    _unlink(nxt, prv, e)
                    remaining -= 1
                    entry, jfrom, fresh = nxt[0], 0, True
                    continue

        if not dead and entry & 1:
            # A call: try placing its operation here.
            op = entry >> 1
            k = rk[op]
            if k == WRITE:
                ok, new = True, ra[op]
            else:
                ok, new = state == ra[op], rb[op]
            if op == watch:
                (accepted if ok else refused).add(state)
            if ok and k != READ:
                nrel, nw = rel | (1 << (op - w)), w
                if nrel & 1:
                    t = ((nrel + 1) & ~nrel).bit_length() - 1
                    nrel >>= t
                    nw += t
                base = nrel << n_info
                conf = (base | placed_info, nw, new)
                # Skipped when reached before, or when reached before
                # with no info operation placed: a placed info operation
                # only removes choices (it could also never happen).
                if conf not in cache and not (placed_info and _dominated(
                        cache, base, nw, new, placed_info, ())):
                    cache.add(conf)
                    if len(cache) > max_states:
                        return None, None, (refused, accepted)
                    stack.append((entry, state, rel, w, placed_info, 0,
                                  False))
                    state, rel, w = new, nrel, nw
                    _unlink(nxt, prv, entry)
                    remaining -= 1
                    entry, jfrom, fresh = nxt[0], 0, True
                    continue
            entry = nxt[entry]
            continue

        if not dead:
            # The first return still in the list (an ok operation not yet
            # placed has its return further on, so the walk meets one
            # before the end of the list). Every ok operation that could
            # come next was tried; now the info operations invoked before
            # this return, those that would change the register.
            op = (entry - 1) >> 1
            if jfrom == 0 and remaining < best_remaining:
                best_remaining, best = remaining, (op, state)
            limit = ends[op]
            j = jfrom
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
                stack.append((-1 - j, state, rel, w, placed_info, entry,
                              False))
                placed_info |= bit
                state = new
                entry, jfrom, fresh = nxt[0], 0, True
                continue

        # Nothing fits here: undo the last step, and the one before it
        # while the step undone was forced.
        while True:
            if not stack:
                return False, best, (refused, accepted)
            e, state, rel, w, placed_info, back, forced = stack.pop()
            if e >= 0:
                _relink(nxt, prv, e)
                remaining += 1
            if not forced:
                break
        if e < 0:
            # An info operation: try the next one before the same return.
            entry, jfrom = back, -e
        else:
            entry, jfrom = nxt[e], 0


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
    """The values that an operation which may come next would observe: those
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
    concurrent = [r for r in recs
                  if r is not rec and float(r["start"]) < hi and lo < _end(r)]
    vals = sorted(refused | accepted, key=lambda v: (v is not None, v))
    could = " or ".join(_fmt_value(v) for v in vals) or "nothing"
    msg = "%s at %s-%s but the register could only be %s" % (
        _describe(rec), _fmt_time(lo), _fmt_time(rec.get("end")), could)
    if accepted:
        msg += ("; the orders where it fits cannot place the operations"
                " that follow")
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
