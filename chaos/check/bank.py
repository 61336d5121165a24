"""bank.py — the bank checker (the transactions issue's invariant).

Input: the "read" and "transfer" records of a history, the balances read
at the end ({account: balance}, None if they could not be read), the
number of accounts and their total. Every acknowledged read
(TransactGetItems of every account) must see every account, the total
unchanged and no balance below zero; so must the final read. A transfer
moves money between two accounts in one transaction, so any other total
means half a transaction was seen or applied.
"""


def _bad(balances, accounts, total):
    if balances is None:
        return "no final read"
    if len(balances) != accounts:
        return "%d accounts of %d" % (len(balances), accounts)
    if sum(balances.values()) != total:
        return "total %d, not %d" % (sum(balances.values()), total)
    neg = [a for a, b in balances.items() if b < 0]
    if neg:
        return "negative balance in %s" % ", ".join(sorted(neg))
    return None


def check(ops, final, accounts, total):
    reads = [r for r in ops if r["f"] == "read" and r["type"] == "ok"]
    bad = []
    for r in reads:
        why = _bad(r["value"], accounts, total)
        if why:
            bad.append(dict(r, why=why))
    final_bad = _bad(final, accounts, total)
    transfers = [r for r in ops if r["f"] == "transfer"]
    answered = [r for r in transfers if r["type"] in ("ok", "fail")]
    conflicts = sum("TransactionConflict" in r.get("reasons", ())
                    for r in answered)
    return {"valid": not bad and final_bad is None,
            "reads": len(reads), "bad_reads": len(bad),
            "transfers_ok": sum(r["type"] == "ok" for r in transfers),
            "transfers_failed": sum(r["type"] == "fail" for r in transfers),
            "transfers_unknown": sum(r["type"] == "info" for r in transfers),
            # Cancelled for meeting another transaction on an account,
            # of the transfers answered (the transactions issue's rate).
            "transfers_conflict": conflicts,
            "conflict_rate": round(conflicts / len(answered), 4)
            if answered else 0.0,
            "final": final, "final_problem": final_bad,
            "counterexamples": bad[:3]}
