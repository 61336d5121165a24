"""idgen.py — the ID generator's checker (SEEDS.md section 3).

Input: the "take" records of a history (key: the counter item; value
[count, lo, hi] when acknowledged, [count] otherwise) and each counter's
final lastID, read consistently after the run. Per counter:

  - duplicates: two acknowledged ranges that share an id (an id handed
    out twice);
  - unallocated: an acknowledged range that ends above the final lastID
    (the client believes it got ids the counter never moved past), or
    whose size is not the count asked for;
  - the final lastID must lie between the sum of the acknowledged counts
    and that sum plus the counts of the takes whose outcome is unknown
    (each of those applied once or not at all): below, acknowledged
    takes were lost; above, some take applied twice or a failed one
    applied.
"""


def check(takes, final):
    dup, unalloc, totals = [], [], []
    per_key = {}
    for r in takes:
        per_key.setdefault(r["key"], []).append(r)
    ok_total = 0
    for key, rs in sorted(per_key.items()):
        oks = sorted((r for r in rs if r["type"] == "ok"),
                     key=lambda r: r["value"][1])
        ok_total += len(oks)
        top = final.get(key, 0)
        for a, b in zip(oks, oks[1:]):
            if b["value"][1] <= a["value"][2]:
                dup.append({"key": key, "first": a, "second": b})
        for r in oks:
            count, lo, hi = r["value"]
            if hi > top or hi - lo + 1 != count or lo < 1:
                unalloc.append(dict(r, final=top))
        low = sum(r["value"][0] for r in oks)
        high = low + sum(r["value"][0] for r in rs if r["type"] == "info")
        if not low <= top <= high:
            totals.append({"key": key, "final": top, "acknowledged": low,
                           "at_most": high})
    return {"valid": not dup and not unalloc and not totals,
            "ranges": ok_total, "duplicates": len(dup),
            "unallocated": len(unalloc), "bad_totals": len(totals),
            "counterexamples": dup[:3] + unalloc[:3] + totals[:3]}
