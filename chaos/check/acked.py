"""acked.py — the acknowledged-writes checker.

Input: the write records of a history (f "write", a key of their own each,
value the number written) and what a consistent read of every key found
afterwards ({key: value}). A write acknowledged (type ok) whose key is
missing, or holds another value, is lost. A write that certainly failed
(type fail) whose value is there anyway is a phantom: the cluster
answered an error and applied it. Unknown writes (info) may be there or
not.
"""


def check(writes, found):
    lost, phantom = [], []
    ok = fail = info = 0
    for r in writes:
        got = found.get(r["key"])
        if r["type"] == "ok":
            ok += 1
            if got != r["value"]:
                lost.append(dict(r, found=got))
        elif r["type"] == "fail":
            fail += 1
            if got == r["value"]:
                phantom.append(r)
        else:
            info += 1
    return {"valid": not lost and not phantom, "acknowledged": ok,
            "failed": fail, "unknown": info, "lost": len(lost),
            "phantom": len(phantom),
            "counterexamples": lost[:5] + phantom[:5]}
