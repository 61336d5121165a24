"""indexes.py — ./kv check indexes TABLE: does every secondary index of
TABLE (global and local) equal the projection of its base table, entry
for entry?

Global indexes are replicated asynchronously, so the check is meant for a
table whose writes have stopped: it reads the base table (consistent
Scan) and each index (Scan) and compares, and while they differ it
reads again, until --wait seconds have passed (the records still in the
outboxes drain meanwhile). It then prints each index's verdict and, for
one that differs, the first entries missing from it and the first it
has that it should not. Exit status 0 when every index converged, 1
otherwise.

The expected entries of an index: every base item that has the index's
key attributes, with the table's keys, the index's keys and, by the
index's projection, every attribute (ALL), the NonKeyAttributes
(INCLUDE) or nothing more (KEYS_ONLY). Tests import converged() and
differences() from here.
"""

import argparse
import os
import sys
import time


def read_all(call, **kw):
    """Every item of a Query or Scan (call: the client's query or scan),
    page after page."""
    items, start = [], None
    while True:
        if start is not None:
            kw["ExclusiveStartKey"] = start
        page = call(**kw)
        items.extend(page["Items"])
        start = page.get("LastEvaluatedKey")
        if start is None:
            return items


def scan_all(ddb, **kw):
    """Every item of a Scan."""
    return read_all(ddb.scan, **kw)


def expected(table, index, base_items):
    """The entries index (a GlobalSecondaryIndexes element of
    DescribeTable) of table should hold for base_items."""
    tkeys = [k["AttributeName"] for k in table["KeySchema"]]
    ikeys = [k["AttributeName"] for k in index["KeySchema"]]
    proj = index["Projection"]
    kind = proj["ProjectionType"]
    keep = set(tkeys) | set(ikeys) | set(proj.get("NonKeyAttributes", ()))
    out = []
    for it in base_items:
        if not all(k in it for k in ikeys):
            continue
        out.append(dict(it) if kind == "ALL" else
                   {k: v for k, v in it.items() if k in keep})
    return out


def canon(items):
    return sorted(repr(sorted(i.items())) for i in items)


def differences(ddb, name, index_name, base_items=None):
    """(missing, extra): the entries index_name of table name lacks, and
    those it has and should not (canonical strings). base_items
    replaces the base table's Scan (to plant a difference)."""
    table = ddb.describe_table(TableName=name)["Table"]
    index = [g for g in all_indexes(table) if g["IndexName"] == index_name]
    if not index:
        raise ValueError("%s has no index %s" % (name, index_name))
    if base_items is None:
        base_items = scan_all(ddb, TableName=name, ConsistentRead=True)
    want = canon(expected(table, index[0], base_items))
    got = canon(scan_all(ddb, TableName=name, IndexName=index_name))
    return sorted(set(want) - set(got)), sorted(set(got) - set(want)) + \
        [g for g in set(got) if got.count(g) > 1]


def all_indexes(table):
    """The GSIs and LSIs of a DescribeTable's Table."""
    return table.get("GlobalSecondaryIndexes", []) + \
        table.get("LocalSecondaryIndexes", [])


def converged(ddb, name, indexes=None, wait=10.0):
    """{index: (missing, extra)} after reading again until every index
    of name (or those named) equals its projection or wait seconds
    passed; empty lists everywhere when they converged."""
    if indexes is None:
        table = ddb.describe_table(TableName=name)["Table"]
        indexes = [g["IndexName"] for g in all_indexes(table)]
    end = time.monotonic() + wait
    while True:
        res = dict((i, differences(ddb, name, i)) for i in indexes)
        if all(not m and not e for m, e in res.values()) or \
                time.monotonic() > end:
            return res
        time.sleep(0.1)


def main():
    ap = argparse.ArgumentParser(
        prog="./kv check indexes",
        description="Check that every index of TABLE equals the "
        "projection of its base table (after writes stop).")
    ap.add_argument("table")
    ap.add_argument("--endpoint", default=os.environ.get(
        "KV_ENDPOINT", "http://127.0.0.1:8000"))
    ap.add_argument("--wait", type=float, default=10.0,
                    help="seconds to let the outboxes drain (10)")
    args = ap.parse_args()
    import boto3
    ddb = boto3.client("dynamodb", endpoint_url=args.endpoint,
                       region_name="us-east-1", aws_access_key_id="x",
                       aws_secret_access_key="x")
    res = converged(ddb, args.table, wait=args.wait)
    if not res:
        print("%s has no secondary index" % args.table)
    ok = True
    for index, (missing, extra) in sorted(res.items()):
        if not missing and not extra:
            print("%s: equals the projection of %s" % (index, args.table))
            continue
        ok = False
        print("%s: DIFFERS: %d entries missing, %d too many" % (
            index, len(missing), len(extra)))
        for m in missing[:5]:
            print("  missing  %s" % m)
        for e in extra[:5]:
            print("  extra    %s" % e)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
