"""test_query_scan.py — Query and Scan end to end through boto3: pagination
properties on seeded random data, 1 MB pages, Count and ScannedCount with
filters, Select, sort orders (N numerically, S by UTF-8 bytes, B bytewise),
key-condition operators, projections, parallel scan segments, every
refusal with DynamoDB's message, ReturnConsumedCapacity, and boto3's
paginators.

DynamoDB's documented behaviour is the specification. Where a message is
not in the developer guide it is the one DynamoDB answers as recorded by
dynalite's test suite (which was written against DynamoDB) and by other
conformance suites; the comment at each such test says so.

The property tests draw their data and requests from random.Random seeded
with QS_SEED (default below): a failure message names the seed, the
operator and the Limit, and QS_SEED=<n> replays another data set.
"""

import math
import os
import random
import uuid
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal

import pytest
from botocore.exceptions import ClientError

SEED = int(os.environ.get("QS_SEED", "20240611"))
PAGE_BYTES = 1024 * 1024
INVALID = "One or more parameter values were invalid: "
NOT_FOUND = "Requested resource not found"
BAD_START = ("The provided starting key is invalid: The provided key "
             "element does not match the schema")

# Partition keys of the property tables and how many items each holds:
# one long item collection, a few middling ones, a single item.
COLLECTIONS = {"p0": 110, "p1": 70, "p2": 45, "p3": 25, "p4": 12,
               "p5": 1}


# ---- values, keys and the local model ----

def S(x):
    return {"S": x}


def N(x):
    return {"N": str(x)}


def B(x):
    return {"B": x}


def sort_value(v):
    """A key value as Python orders it the way DynamoDB does: S by UTF-8
    bytes, N numerically, B bytewise."""
    if "S" in v:
        return v["S"].encode("utf-8")
    if "N" in v:
        return Decimal(v["N"])
    return bytes(v["B"])


def norm(v):
    """An attribute value in a comparable form (numbers as Decimal, so
    "1.50" and "1.5" agree; binaries as bytes; sets sorted)."""
    (t, x), = v.items()
    if t == "N":
        return ("N", Decimal(x))
    if t == "B":
        return ("B", bytes(x))
    if t == "NS":
        return ("NS", tuple(sorted(Decimal(e) for e in x)))
    if t in ("SS", "BS"):
        return (t, tuple(sorted(x)))
    if t == "M":
        return ("M", norm_item(x))
    if t == "L":
        return ("L", tuple(norm(e) for e in x))
    return (t, x)


def norm_item(item):
    return tuple(sorted((k, norm(v)) for k, v in item.items()))


def kkey(item, names=("pk", "sk")):
    """The primary key of an item (or a LastEvaluatedKey) as a hashable
    tuple."""
    return tuple(norm(item[n]) for n in names if n in item)


def item_size(item):
    """DynamoDB's size of an item whose values are all S: for each
    attribute the UTF-8 length of its name plus that of its value."""
    total = 0
    for k, v in item.items():
        assert list(v) == ["S"], "item_size handles strings only"
        total += len(k.encode()) + len(v["S"].encode())
    return total


def read_units(nbytes, consistent):
    """One page's read cost: ceil(bytes / 4 KB), at least 1, halved when
    eventually consistent."""
    units = max(1, math.ceil(nbytes / 4096))
    return units if consistent else units / 2


def key_matches(op, sk, a, b=None):
    """Whether the sort key value sk (a dict like {"S": ...}) satisfies
    the sort-key condition op with operands a (and b)."""
    x, y = sort_value(sk), sort_value(a)
    if op == "EQ":
        return x == y
    if op == "LT":
        return x < y
    if op == "LE":
        return x <= y
    if op == "GT":
        return x > y
    if op == "GE":
        return x >= y
    if op == "BETWEEN":
        return y <= x <= sort_value(b)
    if op == "BEGINS_WITH":
        return x.startswith(y)
    raise AssertionError(op)


EXPR_OPS = {"EQ": "sk = :a", "LT": "sk < :a", "LE": "sk <= :a",
            "GT": "sk > :a", "GE": "sk >= :a",
            "BETWEEN": "sk BETWEEN :a AND :b",
            "BEGINS_WITH": "begins_with(sk, :a)"}
# The same conditions written the other way round (DynamoDB accepts the
# value on the left of a comparison).
EXPR_OPS_FLIPPED = {"EQ": ":a = sk", "LT": ":a > sk", "LE": ":a >= sk",
                    "GT": ":a < sk", "GE": ":a <= sk"}


def query_args(rng, table, pk, op, a, b, filt, legacy):
    """Query parameters for pk and the sort-key condition op(a, b),
    written as an expression or as legacy KeyConditions, with the filter
    filt ("n < T" on the non-key attribute n, or None)."""
    if legacy:
        kc = {"pk": {"ComparisonOperator": "EQ",
                     "AttributeValueList": [S(pk)]}}
        if op is not None:
            kc["sk"] = {"ComparisonOperator": op,
                        "AttributeValueList": [a] + ([b] if b else [])}
        args = {"TableName": table, "KeyConditions": kc}
        if filt is not None:
            args["QueryFilter"] = {"n": {"ComparisonOperator": "LT",
                                         "AttributeValueList": [N(filt)]}}
        return args
    vals = {":p": S(pk)}
    kce = "pk = :p"
    if op is not None:
        text = EXPR_OPS[op]
        if op in EXPR_OPS_FLIPPED and rng.random() < 0.3:
            text = EXPR_OPS_FLIPPED[op]
        kce = (text + " AND " + kce) if rng.random() < 0.3 else (
            kce + " AND " + text)
        vals[":a"] = a
        if b is not None:
            vals[":b"] = b
    args = {"TableName": table, "KeyConditionExpression": kce,
            "ExpressionAttributeValues": vals}
    if filt is not None:
        args["FilterExpression"] = "n < :t"
        vals[":t"] = N(filt)
    return args


def pages_of(call, limit=None, max_pages=5000, **kw):
    """Every page of a Query or Scan, following LastEvaluatedKey."""
    pages = []
    esk = None
    while True:
        args = dict(kw)
        if limit is not None:
            args["Limit"] = limit
        if esk is not None:
            args["ExclusiveStartKey"] = esk
        r = call(**args)
        pages.append(r)
        esk = r.get("LastEvaluatedKey")
        if esk is None:
            return pages
        assert len(pages) < max_pages, "pagination does not end"


def check_limit_pages(pages, limit, filtered, keys=("pk", "sk"), what=""):
    """The per-page rules of pages that only Limit can stop (items small
    enough never to fill 1 MB): ScannedCount at most Limit,
    LastEvaluatedKey exactly when the page read Limit items (DynamoDB
    returns one when Limit is hit even if nothing follows), Count equal
    to len(Items) and, without a filter, to ScannedCount, and the
    LastEvaluatedKey naming the page's last item. Returns the items."""
    items = []
    for i, p in enumerate(pages):
        where = "%s page %d of %d (Limit %s)" % (what, i + 1, len(pages),
                                                 limit)
        assert p["Count"] == len(p["Items"]), where
        assert p["Count"] <= p["ScannedCount"], where
        if not filtered:
            assert p["Count"] == p["ScannedCount"], where
        if limit is None:
            assert "LastEvaluatedKey" not in p, where
        else:
            assert p["ScannedCount"] <= limit, where
            assert ("LastEvaluatedKey" in p) == (
                p["ScannedCount"] == limit), where
        if "LastEvaluatedKey" in p:
            assert set(p["LastEvaluatedKey"]) == set(keys), where
            if not filtered:
                assert kkey(p["LastEvaluatedKey"], keys) == kkey(
                    p["Items"][-1], keys), where
        items.extend(p["Items"])
    return items


def random_limit(rng, n):
    """A Limit for a result of n items: tiny, around n, or beyond."""
    choice = rng.random()
    if choice < 0.15:
        return None
    if choice < 0.35:
        return rng.randint(1, 3)
    if choice < 0.55 and n > 0:
        return max(1, n + rng.choice([-1, 0, 0, 1]))
    return rng.randint(1, max(2, n // 2 + 2))


# ---- tables and data ----

def tricky_strings(rng):
    """String sort keys whose order is easy to get wrong: prefixes of each
    other, U+0000 and U+0001 (below every printable byte; 0x00 is the
    storage encoding's escape byte), UTF-8 of every length (U+0080,
    U+0800, U+10000 and up, where UTF-16 order differs), and keys of up
    to the 1024-byte limit that differ only at the end."""
    fixed = ["a", "a\u0000", "a\u0000\u0000", "a\u0000b", "a\u0001",
             "a\u0001\u0001", "a\u0001b", "a\u00ff", "aa", "ab", "abc",
             "abcd", "abd", "b", "A", "Z", "~", " ", "0", "00", "1", "10",
             "2", "-", "\u007f", "\u0080", "\u00e9", "\u00ff", "\u0100",
             "\u07ff", "\u0800", "\ufb01", "\ufffd", "\uffff",
             "\U00010000", "\U0001f600", "\U0010fffd",
             "x" * 1024, "x" * 1023, "x" * 1023 + "y", "x" * 1022 + "\u0001",
             "x" * 1000 + "\u0000", "x" * 600, "\u00e9" * 512,
             "\u00e9" * 511 + "e", "\U0001f600" * 256]
    alphabet = ["a", "b", "z", "\u0000", "\u0001", "\u00e9", "\uffff",
                "\U0001f600"]
    pool = set(fixed)
    while len(pool) < 400:
        pool.add("".join(rng.choice(alphabet)
                         for _ in range(rng.randint(1, 8))))
    return sorted(pool)


def tricky_numbers(rng):
    """Number sort keys: 2 before 10, negatives, fractions, 38 significant
    digits, and magnitudes from 1E-120 to 1E+100."""
    fixed = ["0", "1", "2", "10", "11", "100", "-1", "-2", "-10", "0.5",
             "-0.5", "1.5", "1.05", "2.5", "9.99", "-9.99", "1E+100",
             "-1E+100", "1E-120", "-1E-120", "1" + "0" * 37,
             "9" * 38, "-" + "9" * 38, "0." + "0" * 20 + "1",
             "12345678901234567890.123456789012345678",
             "-12345678901234567890.123456789012345678"]
    pool = {Decimal(x): x for x in fixed}
    while len(pool) < 400:
        if rng.random() < 0.5:
            x = str(rng.randint(-1000, 1000))
        else:
            x = str(Decimal(rng.randint(-10 ** 7, 10 ** 7)) /
                    Decimal(10 ** rng.randint(1, 6)))
        pool.setdefault(Decimal(x), x)
    return list(pool.values())


def create(ddb, name, hash_type="S", range_type=None):
    defs = [{"AttributeName": "pk", "AttributeType": hash_type}]
    ks = [{"AttributeName": "pk", "KeyType": "HASH"}]
    if range_type:
        defs.append({"AttributeName": "sk", "AttributeType": range_type})
        ks.append({"AttributeName": "sk", "KeyType": "RANGE"})
    ddb.create_table(TableName=name, AttributeDefinitions=defs,
                     KeySchema=ks, BillingMode="PAY_PER_REQUEST")


def put_all(cluster, table, items):
    # The 100 KB items cost 98 WCU each, and 30 of them share one item
    # collection: that partition's 1000 WCU/s ceiling throttles some, and
    # the client retries them as an application would.
    clients = [cluster.client(attempts=30) for _ in range(4)]

    def put(i):
        clients[i % 4].put_item(TableName=table, Item=items[i])
    with ThreadPoolExecutor(4) as ex:
        list(ex.map(put, range(len(items))))


class Data:
    """The module's tables and what each one holds."""

    def __init__(self, cluster):
        ddb = cluster.client()
        u = uuid.uuid4().hex[:8]
        self.t = {k: "qs-%s-%s" % (k, u) for k in
                  ("n", "s", "b", "h", "big", "cap", "num", "c25",
                   "missing")}
        create(ddb, self.t["n"], "S", "N")
        create(ddb, self.t["s"], "S", "S")
        create(ddb, self.t["b"], "S", "B")
        create(ddb, self.t["h"], "S")
        create(ddb, self.t["big"], "S", "S")
        create(ddb, self.t["cap"], "S", "S")
        create(ddb, self.t["num"], "S", "N")
        create(ddb, self.t["c25"], "S")
        w = ddb.get_waiter("table_exists")
        for k, name in self.t.items():
            if k != "missing":
                w.wait(TableName=name,
                       WaiterConfig={"Delay": 1, "MaxAttempts": 30})

        rng = random.Random(SEED)
        self.items = {"n": [], "s": []}
        for kind, pool in (("n", tricky_numbers(rng)),
                           ("s", tricky_strings(rng))):
            for pk, count in COLLECTIONS.items():
                for sk in rng.sample(pool, count):
                    item = {"pk": S(pk), "sk": {kind.upper(): sk},
                            "n": N(rng.randint(0, 99)),
                            "s": S(rng.choice(["", "x", "yy"]))}
                    if rng.random() < 0.5:
                        item["odd"] = {"BOOL": True}
                    self.items[kind].append(item)
            put_all(cluster, self.t[kind], self.items[kind])

        # Items of ~100 KB: 10 of them stay under 1 MB (1,000,140 bytes
        # for pk "big", even under DynamoDB's own cut-off a little below
        # 1 MB), the 11th crosses it, so every full page holds 11.
        self.big = []
        for pk, count in (("big", 30), ("bi2", 20)):
            for i in range(count):
                self.big.append({"pk": S(pk), "sk": S("k%02d" % i),
                                 "data": S(chr(ord("a") + i % 26) *
                                           100000)})
        put_all(cluster, self.t["big"], self.big)

    def collection(self, kind, pk):
        """The items of one partition key in sort-key order."""
        return sorted((i for i in self.items[kind] if i["pk"]["S"] == pk),
                      key=lambda i: sort_value(i["sk"]))


@pytest.fixture(scope="module")
def data(cluster):
    return Data(cluster)


# ---- helpers for refusals ----

def refused(fn, code, message, **kw):
    with pytest.raises(ClientError) as ei:
        fn(**kw)
    r = ei.value.response
    assert (r["Error"]["Code"], r["Error"]["Message"]) == (code, message)
    assert r["ResponseMetadata"]["HTTPStatusCode"] == 400


def validation(fn, message, **kw):
    refused(fn, "ValidationException", message, **kw)


# ---- 1. pagination properties ----

SORT_OPS = [None, "EQ", "LT", "LE", "GT", "GE", "BETWEEN", "BEGINS_WITH"]


def operand(rng, kind, coll):
    """A sort-key operand: an existing key of the collection or a fresh
    value of the same kind."""
    if coll and rng.random() < 0.6:
        return dict(rng.choice(coll)["sk"])
    if kind == "n":
        return N(rng.choice(["0", "2", "10", "-1", "1.5", "1E+100",
                             str(rng.randint(-1000, 1000)),
                             "0.00001", "-99999"]))
    return S(rng.choice(["a", "a\u0000", "a\u0001", "ab", "b", "x",
                         "\u00e9", "\uffff", "\U0001f600", "zzz",
                         "x" * 1023, "x" * 1024]))


def prefix_operand(rng, coll):
    """A begins_with operand: a prefix of an existing key (cut anywhere,
    even inside a run of U+0000) or a string nothing starts with."""
    if rng.random() < 0.85 and coll:
        s = rng.choice(coll)["sk"]["S"]
        return S(s[:rng.randint(1, len(s))])
    return S(rng.choice(["q", "a\u0002", "\u0000", "\u0001"]))


# begins_with takes no numbers (see the refusals).
QUERY_CASES = [(kind, op, forward) for kind in ("n", "s") for op in SORT_OPS
               for forward in (True, False)
               if not (kind == "n" and op == "BEGINS_WITH")]


@pytest.mark.parametrize("kind,op,forward", QUERY_CASES, ids=[
    "%s-%s-%s" % (k, o or "pk-only", "forward" if f else "backward")
    for k, o, f in QUERY_CASES])
def test_query_pages_concatenate_to_the_full_result(ddb, data, kind, op,
                                                    forward):
    """For random partition keys, operands, Limits, filters and both
    spellings (KeyConditionExpression, KeyConditions), the pages of a
    Query put together are exactly the matching items in sort-key order
    (reversed for ScanIndexForward false), each once, and each page
    follows the Limit rules."""
    rng = random.Random("%d-%s-%s-%s" % (SEED, kind, op, forward))
    table = data.t[kind]
    for trial in range(4):
        pk = rng.choice(list(COLLECTIONS) + ["p0", "p1", "none"])
        coll = data.collection(kind, pk)
        a = b = None
        if op == "BEGINS_WITH":
            a = prefix_operand(rng, coll)
        elif op is not None:
            a = operand(rng, kind, coll)
            if op == "BETWEEN":
                b = operand(rng, kind, coll)
                if sort_value(a) > sort_value(b):
                    a, b = b, a
        filt = rng.randint(10, 90) if rng.random() < 0.3 else None
        legacy = rng.random() < 0.3
        want = [i for i in coll if op is None or key_matches(
            op, i["sk"], a, b)]
        if not forward:
            want.reverse()
        want_shown = [i for i in want
                      if filt is None or int(i["n"]["N"]) < filt]
        limit = random_limit(rng, len(want))
        args = query_args(rng, table, pk, op, a, b, filt, legacy)
        args["ScanIndexForward"] = forward
        if rng.random() < 0.3:
            args["ConsistentRead"] = True
        what = "seed %d trial %d: %r" % (SEED, trial, args)
        pages = pages_of(ddb.query, limit, **args)
        got = check_limit_pages(pages, limit, filt is not None, what=what)
        assert [norm_item(i) for i in got] == [
            norm_item(i) for i in want_shown], what
        assert sum(p["ScannedCount"] for p in pages) == len(want), what
        if limit is not None and len(want) > 0:
            # A page per Limit items, and one more (empty) when Limit
            # divides the result: the last full page still had a key.
            assert len(pages) == len(want) // limit + 1, what


def test_query_last_page_when_limit_equals_what_is_left(ddb, data):
    """Limit hit on the last item: the page still carries a
    LastEvaluatedKey, and the next page is empty without one."""
    coll = data.collection("s", "p3")
    args = {"TableName": data.t["s"], "KeyConditionExpression": "pk = :p",
            "ExpressionAttributeValues": {":p": S("p3")}}
    r = ddb.query(Limit=len(coll), **args)
    assert r["Count"] == r["ScannedCount"] == len(coll)
    assert kkey(r["LastEvaluatedKey"]) == kkey(coll[-1])
    r = ddb.query(Limit=len(coll), ExclusiveStartKey=r["LastEvaluatedKey"],
                  **args)
    assert (r["Items"], r["Count"], r["ScannedCount"]) == ([], 0, 0)
    assert "LastEvaluatedKey" not in r
    r = ddb.query(Limit=len(coll) + 1, **args)
    assert r["Count"] == len(coll) and "LastEvaluatedKey" not in r


def scan_filter(rng):
    """A random Scan filter as (expression args, legacy args, predicate)."""
    t = rng.randint(5, 95)
    kind = rng.choice(["lt", "odd", "s"])
    if kind == "lt":
        return ({"FilterExpression": "n < :t",
                 "ExpressionAttributeValues": {":t": N(t)}},
                {"ScanFilter": {"n": {"ComparisonOperator": "LT",
                                      "AttributeValueList": [N(t)]}}},
                lambda i: int(i["n"]["N"]) < t)
    if kind == "odd":
        return ({"FilterExpression": "attribute_exists(odd)"},
                {"ScanFilter": {"odd": {"ComparisonOperator": "NOT_NULL"}}},
                lambda i: "odd" in i)
    return ({"FilterExpression": "s = :e",
             "ExpressionAttributeValues": {":e": S("")}},
            {"ScanFilter": {"s": {"ComparisonOperator": "EQ",
                                  "AttributeValueList": [S("")]}}},
            lambda i: i["s"]["S"] == "")


@pytest.mark.parametrize("filtered", ["none", "expression", "legacy"])
@pytest.mark.parametrize("kind", ["n", "s"])
def test_scan_pages_concatenate_to_the_full_table(ddb, data, kind,
                                                  filtered):
    """The pages of a Scan put together are the table (or what the filter
    keeps), each item once, in the order one unlimited Scan returns."""
    rng = random.Random("%d-scan-%s-%s" % (SEED, kind, filtered))
    table = data.t[kind]
    everything = data.items[kind]
    full = ddb.scan(TableName=table)
    assert "LastEvaluatedKey" not in full
    order = [kkey(i) for i in full["Items"]]
    assert len(order) == len(set(order)) == len(everything)
    assert sorted(norm_item(i) for i in full["Items"]) == sorted(
        norm_item(i) for i in everything)
    limits = [1, len(everything), len(everything) + 1] + [
        random_limit(rng, len(everything)) for _ in range(3)]
    for limit in limits:
        args = {"TableName": table}
        keep = None
        if filtered != "none":
            expr, legacy, keep = scan_filter(rng)
            args.update(expr if filtered == "expression" else legacy)
        what = "seed %d Scan %r" % (SEED, args)
        pages = pages_of(ddb.scan, limit, **args)
        got = check_limit_pages(pages, limit, keep is not None, what=what)
        want = [i for i in full["Items"] if keep is None or keep(i)]
        assert [kkey(i) for i in got] == [kkey(i) for i in want], what
        assert sum(p["ScannedCount"] for p in pages) == len(everything), \
            what


@pytest.mark.parametrize("total", range(1, 9))
def test_parallel_scan_segments_partition_the_table(ddb, data, total):
    """TotalSegments 1..8, every segment paginated with a random Limit:
    the segments together hold every item exactly once, no item is in two
    segments, and each segment's pages concatenate to its unlimited
    Scan."""
    rng = random.Random("%d-parallel-%d" % (SEED, total))
    for kind in ("s", "n"):
        table = data.t[kind]
        seen = {}
        for seg in range(total):
            limit = random_limit(rng, len(data.items[kind]) // total)
            what = "seed %d %s Segment %d/%d Limit %s" % (
                SEED, kind, seg, total, limit)
            pages = pages_of(ddb.scan, limit, TableName=table, Segment=seg,
                             TotalSegments=total)
            got = check_limit_pages(pages, limit, False, what=what)
            whole = ddb.scan(TableName=table, Segment=seg,
                             TotalSegments=total)
            assert "LastEvaluatedKey" not in whole
            assert [kkey(i) for i in got] == [
                kkey(i) for i in whole["Items"]], what
            for i in got:
                k = kkey(i)
                assert k not in seen, "%s: %r also in segment %d" % (
                    what, k, seen[k])
                seen[k] = seg
        assert set(seen) == {kkey(i) for i in data.items[kind]}


def test_parallel_scan_with_a_filter(ddb, data):
    """A filter with segments: each segment keeps what the filter passes,
    and together they are the filtered table."""
    got = []
    for seg in range(3):
        pages = pages_of(ddb.scan, 17, TableName=data.t["s"], Segment=seg,
                         TotalSegments=3, FilterExpression="n < :t",
                         ExpressionAttributeValues={":t": N(50)})
        got += check_limit_pages(pages, 17, True)
    keys = [kkey(i) for i in got]
    assert len(keys) == len(set(keys))
    assert set(keys) == {kkey(i) for i in data.items["s"]
                         if int(i["n"]["N"]) < 50}


# ---- 1 MB pages ----

def check_size_pages(pages, sizes_in_order, limit=None):
    """Pages that Limit or 1 MB of items read can stop: each page reads
    items until Limit or until what it read reaches 1 MB (the 11th 100 KB
    item here), and has a LastEvaluatedKey exactly when it stopped so."""
    pos = 0
    for i, p in enumerate(pages):
        n, read = 0, 0
        while pos + n < len(sizes_in_order):
            read += sizes_in_order[pos + n]
            n += 1
            if read >= PAGE_BYTES or (limit is not None and n == limit):
                break
        stopped = read >= PAGE_BYTES or (limit is not None and n == limit)
        where = "page %d of %d (Limit %s)" % (i + 1, len(pages), limit)
        assert p["ScannedCount"] == n, where
        assert ("LastEvaluatedKey" in p) == stopped, where
        pos += n
    assert pos == len(sizes_in_order)


def test_query_pages_stop_at_1_mb(ddb, data):
    """30 items of 100 KB under one key: pages of 11, 11 and 8 both ways,
    then the same with a filter that keeps nothing and a projection (a
    page counts the items read, not what is returned)."""
    coll = [i for i in data.big if i["pk"]["S"] == "big"]
    sizes = [item_size(i) for i in coll]
    assert sum(sizes[:10]) < 1041375 and sum(sizes[:11]) >= PAGE_BYTES
    base = {"TableName": data.t["big"],
            "KeyConditionExpression": "pk = :p",
            "ExpressionAttributeValues": {":p": S("big")}}
    for forward in (True, False):
        pages = pages_of(ddb.query, ScanIndexForward=forward, **base)
        assert [p["ScannedCount"] for p in pages] == [11, 11, 8]
        check_size_pages(pages, sizes)
        got = [i for p in pages for i in p["Items"]]
        want = coll if forward else coll[::-1]
        assert [norm_item(i) for i in got] == [norm_item(i) for i in want]
        for p in pages[:-1]:
            assert kkey(p["LastEvaluatedKey"]) == kkey(p["Items"][-1])
    pages = pages_of(ddb.query, **dict(
        base, FilterExpression="attribute_exists(nothing)"))
    assert [(p["Count"], p["ScannedCount"]) for p in pages] == [
        (0, 11), (0, 11), (0, 8)]
    assert all(p["Items"] == [] for p in pages)
    pages = pages_of(ddb.query, ProjectionExpression="sk", **base)
    assert [p["ScannedCount"] for p in pages] == [11, 11, 8]
    # The key is the whole primary key, whatever the projection shows.
    assert [p["LastEvaluatedKey"] for p in pages[:-1]] == [
        {"pk": S("big"), "sk": coll[10]["sk"]},
        {"pk": S("big"), "sk": coll[21]["sk"]}]
    assert [i for p in pages for i in p["Items"]] == [
        {"sk": i["sk"]} for i in coll]
    # Limit below the size cut stops first; Limit above it does not.
    for limit in (4, 20):
        pages = pages_of(ddb.query, limit, **base)
        check_size_pages(pages, sizes, limit)


def test_scan_pages_stop_at_1_mb(ddb, data):
    """50 items of 100 KB over two keys: pages of 11, 11, 11, 11 and 6,
    each page's LastEvaluatedKey its last item, and every item once."""
    full_pages = pages_of(ddb.scan, TableName=data.t["big"])
    got = [i for p in full_pages for i in p["Items"]]
    assert len(got) == len({kkey(i) for i in got}) == len(data.big)
    assert sorted(norm_item(i) for i in got) == sorted(
        norm_item(i) for i in data.big)
    sizes = [item_size(i) for i in got]
    assert [p["ScannedCount"] for p in full_pages] == [11, 11, 11, 11, 6]
    check_size_pages(full_pages, sizes)
    for p in full_pages[:-1]:
        assert kkey(p["LastEvaluatedKey"]) == kkey(p["Items"][-1])
    for limit in (3, 12):
        pages = pages_of(ddb.scan, limit, TableName=data.t["big"],
                         FilterExpression="#d = :x",
                         ExpressionAttributeNames={"#d": "data"},
                         ExpressionAttributeValues={":x": S("none")})
        check_size_pages(pages, sizes, limit)
        assert all(p["Count"] == 0 for p in pages)
    # Segments stop at 1 MB as well, and still cover the table once.
    seen = []
    for seg in range(2):
        seen += [kkey(i) for p in pages_of(
            ddb.scan, TableName=data.t["big"], Segment=seg, TotalSegments=2,
            ProjectionExpression="pk, sk") for i in p["Items"]]
    assert sorted(seen) == sorted(kkey(i) for i in data.big)


# ---- 2. correctness ----

def test_filter_runs_after_limit(ddb, cluster, data):
    """Limit=5 with a filter that matches 1 of the 5 items read: Count 1,
    ScannedCount 5, and a LastEvaluatedKey (Limit was reached). The same
    with QueryFilter, and for Scan with FilterExpression and ScanFilter."""
    table = data.t["cap"]
    c = cluster.client()
    for i in range(8):
        c.put_item(TableName=table, Item={
            "pk": S("limit"), "sk": S("k%d" % i),
            "tag": S("hit" if i == 2 else "miss")})
    base = {"TableName": table, "Limit": 5}
    for extra in (
            {"KeyConditionExpression": "pk = :p",
             "FilterExpression": "tag = :t",
             "ExpressionAttributeValues": {":p": S("limit"),
                                           ":t": S("hit")}},
            {"KeyConditions": {"pk": {"ComparisonOperator": "EQ",
                                      "AttributeValueList": [S("limit")]}},
             "QueryFilter": {"tag": {"ComparisonOperator": "EQ",
                                     "AttributeValueList": [S("hit")]}}}):
        r = ddb.query(**base, **extra)
        assert (r["Count"], r["ScannedCount"]) == (1, 5)
        assert r["Items"][0]["sk"] == S("k2")
        assert r["LastEvaluatedKey"] == {"pk": S("limit"), "sk": S("k4")}
        r2 = ddb.query(ExclusiveStartKey=r["LastEvaluatedKey"], **base,
                       **extra)
        assert (r2["Count"], r2["ScannedCount"]) == (0, 3)
        assert "LastEvaluatedKey" not in r2
        r = ddb.query(Select="COUNT", **base, **extra)
        assert "Items" not in r
        assert (r["Count"], r["ScannedCount"]) == (1, 5)
    # Scan: the whole table in pages of Limit 5; the filter
    # only ever drops items after they count against the Limit.
    pages = pages_of(ddb.scan, 5, TableName=table,
                     FilterExpression="tag = :t",
                     ExpressionAttributeValues={":t": S("hit")})
    check_limit_pages(pages, 5, True)
    assert [i["sk"] for p in pages for i in p["Items"]] == [S("k2")]
    pages = pages_of(ddb.scan, 5, TableName=table, ScanFilter={
        "tag": {"ComparisonOperator": "EQ",
                "AttributeValueList": [S("hit")]}})
    assert [i["sk"] for p in pages for i in p["Items"]] == [S("k2")]


def test_select_count_and_specific_attributes(ddb, data):
    """Select COUNT answers Count and ScannedCount without Items; Select
    SPECIFIC_ATTRIBUTES with AttributesToGet or a ProjectionExpression
    returns only those attributes (and no empty maps for items that lack
    them)."""
    coll = data.collection("n", "p2")
    q = {"TableName": data.t["n"], "KeyConditionExpression": "pk = :p",
         "ExpressionAttributeValues": {":p": S("p2")}}
    r = ddb.query(Select="COUNT", **q)
    assert "Items" not in r
    assert (r["Count"], r["ScannedCount"]) == (len(coll), len(coll))
    r = ddb.query(Select="COUNT", Limit=7, **q)
    assert "Items" not in r and r["Count"] == 7
    assert kkey(r["LastEvaluatedKey"]) == kkey(coll[6])
    odd = [i for i in coll if "odd" in i]
    r = ddb.query(Select="COUNT", FilterExpression="attribute_exists(odd)",
                  **q)
    assert "Items" not in r
    assert (r["Count"], r["ScannedCount"]) == (len(odd), len(coll))
    r = ddb.scan(TableName=data.t["n"], Select="COUNT")
    assert "Items" not in r
    assert r["Count"] == r["ScannedCount"] == len(data.items["n"])
    r = ddb.query(Select="SPECIFIC_ATTRIBUTES", AttributesToGet=["sk", "odd"],
                  KeyConditions={"pk": {"ComparisonOperator": "EQ",
                                        "AttributeValueList": [S("p2")]}},
                  TableName=data.t["n"])
    assert [norm_item(i) for i in r["Items"]] == [norm_item(
        {k: v for k, v in i.items() if k in ("sk", "odd")}) for i in coll]
    r = ddb.scan(TableName=data.t["n"], ProjectionExpression="odd",
                 FilterExpression="pk = :p",
                 ExpressionAttributeValues={":p": S("p2")})
    assert sorted(len(i) for i in r["Items"]) == sorted(
        1 if "odd" in i else 0 for i in coll)


def test_numbers_sort_numerically(ddb, cluster, data):
    """N sort keys in numeric order (2 before 10, -10 before -2, 1.05
    before 1.5), and the operators compare numbers, not strings."""
    table = data.t["num"]
    c = cluster.client()
    nums = ["10", "2", "-2", "-10", "1.5", "1.05", "100", "0", "-0.5",
            "99"]
    for x in nums:
        c.put_item(TableName=table, Item={"pk": S("num"), "sk": N(x)})
    q = {"TableName": table, "ExpressionAttributeValues": {":p": S("num")}}
    r = ddb.query(KeyConditionExpression="pk = :p", **q)
    assert [i["sk"]["N"] for i in r["Items"]] == [
        "-10", "-2", "-0.5", "0", "1.05", "1.5", "2", "10", "99", "100"]
    r = ddb.query(KeyConditionExpression="pk = :p AND sk < :v",
                  ExpressionAttributeValues={":p": S("num"),
                                             ":v": N("10")}, TableName=table)
    assert [i["sk"]["N"] for i in r["Items"]] == [
        "-10", "-2", "-0.5", "0", "1.05", "1.5", "2"]
    r = ddb.query(KeyConditionExpression="pk = :p AND sk BETWEEN :a AND :b",
                  ExpressionAttributeValues={":p": S("num"), ":a": N("2"),
                                             ":b": N("99")},
                  TableName=table, ScanIndexForward=False)
    assert [i["sk"]["N"] for i in r["Items"]] == ["99", "10", "2"]


def test_strings_sort_by_utf8_bytes(ddb, cluster, data):
    """S sort keys in UTF-8 byte order: U+FFFF before U+1F600 (UTF-16
    order would be the other way), "a" before "a\\u0000" before
    "a\\u0001" before "aa", upper case before lower case."""
    table = data.t["cap"]
    c = cluster.client()
    keys = ["\U0001f600", "\uffff", "aa", "a\u0001", "a\u0000", "a", "B",
            "b", "\u00e9", "z"]
    for k in keys:
        c.put_item(TableName=table, Item={"pk": S("utf8"), "sk": S(k)})
    r = ddb.query(TableName=table, KeyConditionExpression="pk = :p",
                  ExpressionAttributeValues={":p": S("utf8")})
    assert [i["sk"]["S"] for i in r["Items"]] == [
        "B", "a", "a\u0000", "a\u0001", "aa", "b", "z", "\u00e9",
        "\uffff", "\U0001f600"]


def test_binary_sort_keys_sort_bytewise(ddb, cluster, data):
    """B sort keys in unsigned byte order (0x80 and 0xFF after 0x7F, a
    prefix before its extensions, 0x00 bytes inside keys), with
    begins_with on binaries and BETWEEN inclusive at both ends."""
    table = data.t["b"]
    c = cluster.client()
    keys = [b"\xff\x00", b"\x80", b"\x00", b"\x00\x00", b"\x7f", b"\xff",
            b"\x00\xff", b"\x01", b"\xff\xff", b"\x00\x01", b"a",
            b"ab", b"\xfe\xff"]
    for k in keys:
        c.put_item(TableName=table, Item={"pk": S("bin"), "sk": B(k)})
    q = {"TableName": table}

    def sks(r):
        return [bytes(i["sk"]["B"]) for i in r["Items"]]
    r = ddb.query(KeyConditionExpression="pk = :p",
                  ExpressionAttributeValues={":p": S("bin")}, **q)
    assert sks(r) == sorted(keys)
    for prefix in (b"\x00", b"\xff", b"a", b"\xfe"):
        r = ddb.query(KeyConditionExpression="pk = :p AND "
                      "begins_with(sk, :x)", ExpressionAttributeValues={
                          ":p": S("bin"), ":x": B(prefix)}, **q)
        assert sks(r) == sorted(k for k in keys if k.startswith(prefix)), \
            prefix
    r = ddb.query(KeyConditionExpression="pk = :p AND sk BETWEEN :a AND :b",
                  ExpressionAttributeValues={":p": S("bin"),
                                             ":a": B(b"\x00\x01"),
                                             ":b": B(b"\x80")}, **q)
    assert sks(r) == [b"\x00\x01", b"\x00\xff", b"\x01", b"a", b"ab",
                      b"\x7f", b"\x80"]
    r = ddb.query(KeyConditions={
        "pk": {"ComparisonOperator": "EQ", "AttributeValueList": [S("bin")]},
        "sk": {"ComparisonOperator": "BEGINS_WITH",
               "AttributeValueList": [B(b"\xff")]}},
        ScanIndexForward=False, **q)
    assert sks(r) == [b"\xff\xff", b"\xff\x00", b"\xff"]


def test_begins_with_and_between_on_strings(ddb, cluster, data):
    """begins_with matches the prefix itself and its extensions only;
    BETWEEN includes both bounds; a BETWEEN with equal bounds is EQ."""
    table = data.t["cap"]
    c = cluster.client()
    keys = ["ab", "abc", "abd", "ab\u0000", "ab\u0001z", "aa\uffff", "ac",
            "a", "b"]
    for k in keys:
        c.put_item(TableName=table, Item={"pk": S("bw"), "sk": S(k)})

    def run(kce, **vals):
        vals[":p"] = S("bw")
        r = ddb.query(TableName=table, KeyConditionExpression=kce,
                      ExpressionAttributeValues=vals)
        return [i["sk"]["S"] for i in r["Items"]]
    assert run("pk = :p AND begins_with(sk, :x)", **{":x": S("ab")}) == [
        "ab", "ab\u0000", "ab\u0001z", "abc", "abd"]
    assert run("pk = :p AND begins_with(sk, :x)", **{":x": S("ab\u0000")}
               ) == ["ab\u0000"]
    assert run("pk = :p AND sk BETWEEN :a AND :b",
               **{":a": S("ab"), ":b": S("abc")}) == [
        "ab", "ab\u0000", "ab\u0001z", "abc"]
    assert run("pk = :p AND sk BETWEEN :a AND :a", **{":a": S("abd")}) == [
        "abd"]
    assert run("pk = :p AND sk > :a", **{":a": S("abd")}) == ["ac", "b"]
    assert run("pk = :p AND sk <= :a", **{":a": S("aa\uffff")}) == [
        "a", "aa\uffff"]


def test_projections_with_nested_paths(ddb, cluster, data):
    """ProjectionExpression with nested paths, list indexes and
    placeholders on Query and Scan: only the named parts come back (list
    elements picked by index are compacted), and missing paths are left
    out."""
    table = data.t["cap"]
    cluster.client().put_item(TableName=table, Item={
        "pk": S("proj"), "sk": S("1"),
        "a": {"M": {"b": {"L": [N(0), {"M": {"c": S("deep"),
                                             "d": S("no")}}, N(2)]},
                    "e": S("no")}},
        "name": S("reserved word"), "other": S("no")})
    want = {"a": {"M": {"b": {"L": [{"M": {"c": S("deep")}}, N(2)]}}},
            "name": S("reserved word")}
    proj = {"ProjectionExpression": "a.b[1].c, a.b[2], #n, a.nope, "
                                    "nothere[3]",
            "ExpressionAttributeNames": {"#n": "name"}}
    r = ddb.query(TableName=table, KeyConditionExpression="pk = :p AND "
                  "sk = :s", ExpressionAttributeValues={
                      ":p": S("proj"), ":s": S("1")}, **proj)
    assert [norm_item(i) for i in r["Items"]] == [norm_item(want)]
    r = ddb.scan(TableName=table, FilterExpression="pk = :p",
                 ExpressionAttributeValues={":p": S("proj")}, **proj)
    assert [norm_item(i) for i in r["Items"]] == [norm_item(want)]


def test_query_on_a_hash_only_table(ddb, cluster, data):
    """A Query on a table without a sort key finds the one item; Limit 1
    stops there with its key as LastEvaluatedKey."""
    table = data.t["h"]
    cluster.client().put_item(TableName=table, Item={"pk": S("only"),
                                                     "v": S("x")})
    q = {"TableName": table, "KeyConditionExpression": "pk = :p",
         "ExpressionAttributeValues": {":p": S("only")}}
    r = ddb.query(**q)
    assert r["Items"] == [{"pk": S("only"), "v": S("x")}]
    assert "LastEvaluatedKey" not in r
    r = ddb.query(Limit=1, **q)
    assert r["LastEvaluatedKey"] == {"pk": S("only")}
    r = ddb.query(Limit=1, ExclusiveStartKey=r["LastEvaluatedKey"], **q)
    assert (r["Count"], r["ScannedCount"], r["Items"]) == (0, 0, [])
    r = ddb.query(TableName=table, KeyConditionExpression="pk = :p",
                  ExpressionAttributeValues={":p": S("absent")})
    assert (r["Count"], r["ScannedCount"], r["Items"]) == (0, 0, [])
    assert "LastEvaluatedKey" not in r


# ---- 3. refusals ----

QUERY_ERRORS = [
    ("sort-key-only", "s", {"KeyConditionExpression": "sk = :s",
                            "ExpressionAttributeValues": {":s": S("a")}},
     "Query condition missed key schema element: pk"),
    ("non-key-only", "s", {"KeyConditionExpression": "nonkey = :s",
                           "ExpressionAttributeValues": {":s": S("a")}},
     "Query condition missed key schema element: pk"),
    ("legacy-sort-key-only", "s", {"KeyConditions": {"sk": {
        "ComparisonOperator": "EQ", "AttributeValueList": [S("a")]}}},
     "Query condition missed key schema element: pk"),
    # A non-key attribute next to the hash key: DynamoDB names the missing
    # sort key (moto's test of the same), and on a table without one
    # answers "not supported" (dynalite's recorded DynamoDB answers).
    ("non-key-beside-hash", "s", {
        "KeyConditionExpression": "pk = :p AND nonkey = :s",
        "ExpressionAttributeValues": {":p": S("a"), ":s": S("a")}},
     "Query condition missed key schema element: sk"),
    ("non-key-on-hash-only-table", "h", {
        "KeyConditionExpression": "pk = :p AND nonkey = :s",
        "ExpressionAttributeValues": {":p": S("a"), ":s": S("a")}},
     "Query key condition not supported"),
    ("hash-greater-than", "s", {
        "KeyConditionExpression": "pk > :p",
        "ExpressionAttributeValues": {":p": S("a")}},
     "Query key condition not supported"),
    ("hash-begins-with", "s", {
        "KeyConditionExpression": "begins_with(pk, :p)",
        "ExpressionAttributeValues": {":p": S("a")}},
     "Query key condition not supported"),
    ("hash-between", "h", {
        "KeyConditionExpression": "pk BETWEEN :p AND :q",
        "ExpressionAttributeValues": {":p": S("a"), ":q": S("b")}},
     "Query key condition not supported"),
    ("legacy-hash-le", "s", {"KeyConditions": {"pk": {
        "ComparisonOperator": "LE", "AttributeValueList": [S("a")]}}},
     "Query key condition not supported"),
    ("hash-wrong-type", "s", {
        "KeyConditionExpression": "pk = :p",
        "ExpressionAttributeValues": {":p": N(1)}},
     INVALID + "Condition parameter type does not match schema type"),
    ("sort-wrong-type", "n", {
        "KeyConditionExpression": "pk = :p AND sk > :s",
        "ExpressionAttributeValues": {":p": S("a"), ":s": S("1")}},
     INVALID + "Condition parameter type does not match schema type"),
    ("between-bounds-of-two-types", "n", {
        "KeyConditionExpression": "pk = :p AND sk BETWEEN :a AND :b",
        "ExpressionAttributeValues": {":p": S("a"), ":a": N(1),
                                      ":b": S("a")}},
     "Invalid KeyConditionExpression: The BETWEEN operator requires same "
     "data type for lower and upper bounds; lower bound operand: "
     "AttributeValue: {N:1}, upper bound operand: AttributeValue: {S:a}"),
    ("between-bounds-of-the-wrong-type", "n", {
        "KeyConditionExpression": "pk = :p AND sk BETWEEN :a AND :b",
        "ExpressionAttributeValues": {":p": S("a"), ":a": S("1"),
                                      ":b": S("2")}},
     INVALID + "Condition parameter type does not match schema type"),
    ("legacy-wrong-type", "s", {"KeyConditions": {
        "pk": {"ComparisonOperator": "EQ", "AttributeValueList": [S("a")]},
        "sk": {"ComparisonOperator": "GT", "AttributeValueList": [B(b"a")]}}},
     INVALID + "Condition parameter type does not match schema type"),
    ("or", "s", {
        "KeyConditionExpression": "pk = :p OR sk = :s",
        "ExpressionAttributeValues": {":p": S("a"), ":s": S("a")}},
     "Invalid operator used in KeyConditionExpression: OR"),
    ("not", "s", {
        "KeyConditionExpression": "NOT pk = :p",
        "ExpressionAttributeValues": {":p": S("a")}},
     "Invalid operator used in KeyConditionExpression: NOT"),
    ("in", "s", {
        "KeyConditionExpression": "pk = :p AND sk IN (:s)",
        "ExpressionAttributeValues": {":p": S("a"), ":s": S("a")}},
     "Invalid operator used in KeyConditionExpression: IN"),
    ("begins-with-number", "n", {
        "KeyConditionExpression": "pk = :p AND begins_with(sk, :s)",
        "ExpressionAttributeValues": {":p": S("a"), ":s": N(1)}},
     "Invalid KeyConditionExpression: Incorrect operand type for operator "
     "or function; operator or function: begins_with, operand type: N"),
    ("between-reversed", "s", {
        "KeyConditionExpression": "pk = :p AND sk BETWEEN :b AND :a",
        "ExpressionAttributeValues": {":p": S("x"), ":a": S("a"),
                                      ":b": S("b")}},
     "Invalid KeyConditionExpression: The BETWEEN operator requires upper "
     "bound to be greater than or equal to lower bound; lower bound "
     "operand: AttributeValue: {S:b}, upper bound operand: "
     "AttributeValue: {S:a}"),
    ("two-conditions-on-sort-key", "s", {
        "KeyConditionExpression": "pk = :p AND sk > :s AND sk < :s",
        "ExpressionAttributeValues": {":p": S("a"), ":s": S("a")}},
     "KeyConditionExpressions must only contain one condition per key"),
    ("no-key-condition", "s", {},
     "Either the KeyConditions or KeyConditionExpression parameter must be "
     "specified in the request."),
    ("limit-0", "s", {"KeyConditionExpression": "pk = :p",
                      "ExpressionAttributeValues": {":p": S("a")},
                      "Limit": 0},
     "1 validation error detected: Value '0' at 'limit' failed to satisfy "
     "constraint: Member must have value greater than or equal to 1"),
    ("start-key-without-sort-key", "s", {
        "KeyConditionExpression": "pk = :p",
        "ExpressionAttributeValues": {":p": S("a")},
        "ExclusiveStartKey": {"pk": S("a")}}, BAD_START),
    ("start-key-of-other-attributes", "s", {
        "KeyConditionExpression": "pk = :p",
        "ExpressionAttributeValues": {":p": S("a")},
        "ExclusiveStartKey": {"bad": S("a"), "sk": S("a")}}, BAD_START),
    ("start-key-with-an-extra-attribute", "s", {
        "KeyConditionExpression": "pk = :p",
        "ExpressionAttributeValues": {":p": S("a")},
        "ExclusiveStartKey": {"pk": S("a"), "sk": S("a"), "x": S("a")}},
     BAD_START),
    # KeyConditions is a mix only beside KeyConditionExpression: DynamoDB
    # takes it with a FilterExpression or ProjectionExpression (below).
    ("mixed-key-conditions-and-key-condition-expression", "s", {
        "KeyConditions": {"pk": {"ComparisonOperator": "EQ",
                                 "AttributeValueList": [S("a")]}},
        "KeyConditionExpression": "pk = :p",
        "ExpressionAttributeValues": {":p": S("a")}},
     "Can not use both expression and non-expression parameters in the "
     "same request: Non-expression parameters: {KeyConditions} Expression "
     "parameters: {KeyConditionExpression}"),
    ("mixed-query-filter-and-key-condition-expression", "s", {
        "KeyConditionExpression": "pk = :p",
        "ExpressionAttributeValues": {":p": S("a")},
        "QueryFilter": {"x": {"ComparisonOperator": "NOT_NULL"}}},
     "Can not use both expression and non-expression parameters in the "
     "same request: Non-expression parameters: {QueryFilter} Expression "
     "parameters: {KeyConditionExpression}"),
    ("mixed-attributes-to-get-and-projection", "s", {
        "KeyConditionExpression": "pk = :p",
        "ExpressionAttributeValues": {":p": S("a")},
        "AttributesToGet": ["x"], "ProjectionExpression": "x"},
     None),  # both lists are DynamoDB's; the wording is pinned elsewhere
    ("index-name", "s", {"IndexName": "byN",
                         "KeyConditionExpression": "pk = :p",
                         "ExpressionAttributeValues": {":p": S("a")}},
     "The table does not have the specified index: byN"),
    ("index-name-hash-only", "h", {"IndexName": "gsi1",
                                   "KeyConditionExpression": "pk = :p",
                                   "ExpressionAttributeValues": {
                                       ":p": S("a")}},
     "The table does not have the specified index: gsi1"),
    # The rest are DynamoDB answers recorded by dynalite's test suite and
    # other conformance suites rather than documented in the guide.
    ("filter-on-sort-key", "s", {
        "KeyConditionExpression": "pk = :p",
        "FilterExpression": "sk = :p",
        "ExpressionAttributeValues": {":p": S("a")}},
     "Filter Expression can only contain non-primary key attributes: "
     "Primary key attribute: sk"),
    ("filter-on-hash-key", "h", {
        "KeyConditionExpression": "pk = :p",
        "FilterExpression": "attribute_exists(pk)",
        "ExpressionAttributeValues": {":p": S("a")}},
     "Filter Expression can only contain non-primary key attributes: "
     "Primary key attribute: pk"),
    ("query-filter-on-sort-key", "s", {
        "KeyConditions": {"pk": {"ComparisonOperator": "EQ",
                                 "AttributeValueList": [S("a")]}},
        "QueryFilter": {"sk": {"ComparisonOperator": "EQ",
                               "AttributeValueList": [S("a")]}}},
     "QueryFilter can only contain non-primary key attributes: Primary key "
     "attribute: sk"),
    ("legacy-not-indexable", "s", {"KeyConditions": {
        "pk": {"ComparisonOperator": "EQ", "AttributeValueList": [S("a")]},
        "sk": {"ComparisonOperator": "NE", "AttributeValueList": [S("a")]}}},
     "Attempted conditional constraint is not an indexable operation"),
    ("start-key-of-another-partition-key", "s", {
        "KeyConditionExpression": "pk = :p",
        "ExpressionAttributeValues": {":p": S("b")},
        "ExclusiveStartKey": {"pk": S("a"), "sk": S("a")}},
     "The provided starting key is outside query boundaries based on "
     "provided conditions"),
    ("start-key-outside-the-sort-key-range", "s", {
        "KeyConditionExpression": "pk = :p AND sk > :p",
        "ExpressionAttributeValues": {":p": S("b")},
        "ExclusiveStartKey": {"pk": S("b"), "sk": S("a")}},
     "The provided starting key does not match the range key predicate"),
]


@pytest.mark.parametrize("name,table,args,message", QUERY_ERRORS,
                         ids=[e[0] for e in QUERY_ERRORS])
def test_query_refusals(raw_ddb, data, name, table, args, message):
    if message is None:
        with pytest.raises(ClientError) as ei:
            raw_ddb.query(TableName=data.t[table], **args)
        r = ei.value.response
        assert r["Error"]["Code"] == "ValidationException"
        assert r["ResponseMetadata"]["HTTPStatusCode"] == 400
        return
    validation(raw_ddb.query, message, TableName=data.t[table], **args)


def test_key_conditions_beside_filter_and_projection_expressions(
        raw_ddb, cluster):
    """DynamoDB refuses legacy and expression members mixed within one
    role, not KeyConditions beside a FilterExpression and a
    ProjectionExpression."""
    name = cluster.make_table("kcmix", sort_key="N")
    for i in range(6):
        raw_ddb.put_item(TableName=name, Item={
            "pk": S("a"), "sk": N(str(i)), "x": N(str(i % 2)),
            "y": S("y%d" % i)})
    r = raw_ddb.query(
        TableName=name,
        KeyConditions={"pk": {"ComparisonOperator": "EQ",
                              "AttributeValueList": [S("a")]},
                       "sk": {"ComparisonOperator": "GE",
                              "AttributeValueList": [N("1")]}},
        FilterExpression="#x = :one", ProjectionExpression="sk, y",
        ExpressionAttributeNames={"#x": "x"},
        ExpressionAttributeValues={":one": N("1")})
    assert r["Items"] == [{"sk": N(str(i)), "y": S("y%d" % i)}
                          for i in (1, 3, 5)]
    assert r["ScannedCount"] == 5 and r["Count"] == 3
    # The same mix with the legacy filter is refused.
    validation(raw_ddb.query,
               "Can not use both expression and non-expression parameters "
               "in the same request: Non-expression parameters: "
               "{QueryFilter} Expression parameters: {ProjectionExpression}",
               TableName=name,
               KeyConditions={"pk": {"ComparisonOperator": "EQ",
                                     "AttributeValueList": [S("a")]}},
               QueryFilter={"x": {"ComparisonOperator": "NOT_NULL"}},
               ProjectionExpression="sk")


SCAN_ERRORS = [
    ("limit-0", {"Limit": 0},
     "1 validation error detected: Value '0' at 'limit' failed to satisfy "
     "constraint: Member must have value greater than or equal to 1"),
    # The next three are DynamoDB's words as conformance suites record
    # them ("is not less than", not "out of bounds").
    ("segment-equal-to-total", {"Segment": 2, "TotalSegments": 2},
     "The Segment parameter is zero-based and must be less than parameter "
     "TotalSegments: Segment: 2 is not less than TotalSegments: 2"),
    ("segment-above-total", {"Segment": 7, "TotalSegments": 3},
     "The Segment parameter is zero-based and must be less than parameter "
     "TotalSegments: Segment: 7 is not less than TotalSegments: 3"),
    ("segment-without-total", {"Segment": 1},
     "The TotalSegments parameter is required but was not present in the "
     "request when Segment parameter is present"),
    ("total-without-segment", {"TotalSegments": 3},
     "The Segment parameter is required but was not present in the request "
     "when parameter TotalSegments is present"),
    ("total-segments-0", {"Segment": 0, "TotalSegments": 0},
     "1 validation error detected: Value '0' at 'totalSegments' failed to "
     "satisfy constraint: Member must have value greater than or equal to "
     "1"),
    ("start-key-without-sort-key", {"ExclusiveStartKey": {"pk": S("a")}},
     BAD_START),
    ("start-key-of-other-attributes", {"ExclusiveStartKey": {
        "x": S("a"), "y": S("b")}}, BAD_START),
    ("mixed-scan-filter-and-projection", {
        "ScanFilter": {"x": {"ComparisonOperator": "NOT_NULL"}},
        "ProjectionExpression": "x"},
     "Can not use both expression and non-expression parameters in the "
     "same request: Non-expression parameters: {ScanFilter} Expression "
     "parameters: {ProjectionExpression}"),
    ("mixed-attributes-to-get-and-filter", {
        "AttributesToGet": ["x"], "FilterExpression": "attribute_exists(x)"},
     "Can not use both expression and non-expression parameters in the "
     "same request: Non-expression parameters: {AttributesToGet} "
     "Expression parameters: {FilterExpression}"),
    ("index-name", {"IndexName": "byN"},
     "The table does not have the specified index: byN"),
]


@pytest.mark.parametrize("name,args,message", SCAN_ERRORS,
                         ids=[e[0] for e in SCAN_ERRORS])
def test_scan_refusals(raw_ddb, data, name, args, message):
    validation(raw_ddb.scan, message, TableName=data.t["s"], **args)


def test_unknown_table_is_resource_not_found(raw_ddb, data):
    missing = data.t["missing"]
    refused(raw_ddb.query, "ResourceNotFoundException", NOT_FOUND,
            TableName=missing, KeyConditionExpression="pk = :p",
            ExpressionAttributeValues={":p": S("a")})
    refused(raw_ddb.query, "ResourceNotFoundException", NOT_FOUND,
            TableName=missing, KeyConditions={"pk": {
                "ComparisonOperator": "EQ", "AttributeValueList": [S("a")]}},
            ExclusiveStartKey={"pk": S("a")})
    refused(raw_ddb.scan, "ResourceNotFoundException", NOT_FOUND,
            TableName=missing)
    refused(raw_ddb.scan, "ResourceNotFoundException", NOT_FOUND,
            TableName=missing, Segment=0, TotalSegments=2, Limit=3)


# ---- 4. capacity ----

def cc(r):
    return r["ConsumedCapacity"]


def test_query_capacity_of_small_items(ddb, cluster, data):
    """Three small items: 0.5 eventually consistent, 1.0 strongly
    consistent; the same when a filter drops them all (items read are
    paid for) or a projection shows less; INDEXES adds Table; none without
    ReturnConsumedCapacity or with NONE."""
    table = data.t["cap"]
    c = cluster.client()
    for i in range(3):
        c.put_item(TableName=table, Item={"pk": S("three"),
                                          "sk": S("k%d" % i), "v": S("x")})
    q = {"TableName": table, "KeyConditionExpression": "pk = :p",
         "ExpressionAttributeValues": {":p": S("three")}}
    r = ddb.query(ReturnConsumedCapacity="TOTAL", **q)
    assert r["Count"] == 3
    assert cc(r) == {"TableName": table, "CapacityUnits": 0.5}
    r = ddb.query(ReturnConsumedCapacity="TOTAL", ConsistentRead=True, **q)
    assert cc(r) == {"TableName": table, "CapacityUnits": 1.0}
    r = ddb.query(ReturnConsumedCapacity="INDEXES", ConsistentRead=True, **q)
    assert cc(r) == {"TableName": table, "CapacityUnits": 1.0,
                     "Table": {"CapacityUnits": 1.0}}
    r = ddb.query(ReturnConsumedCapacity="TOTAL", FilterExpression="v = :n",
                  ProjectionExpression="pk", TableName=table,
                  KeyConditionExpression="pk = :p",
                  ExpressionAttributeValues={":p": S("three"),
                                             ":n": S("nope")})
    assert r["Count"] == 0 and cc(r)["CapacityUnits"] == 0.5
    assert "ConsumedCapacity" not in ddb.query(**q)
    assert "ConsumedCapacity" not in ddb.query(ReturnConsumedCapacity="NONE",
                                               **q)


def test_scan_capacity_is_rounded_per_page(ddb, data):
    """A Scan costs ceil(bytes read / 4 KB) per page (halved when
    eventually consistent), summed over its pages: the 1 MB pages of the
    100 KB table, with and without ConsistentRead, and with a filter that
    returns nothing (bytes read are paid for)."""
    for consistent in (False, True):
        pages = pages_of(ddb.scan, TableName=data.t["big"],
                         ReturnConsumedCapacity="TOTAL",
                         ConsistentRead=consistent)
        want = [read_units(sum(item_size(i) for i in p["Items"]),
                           consistent) for p in pages]
        assert [cc(p)["CapacityUnits"] for p in pages] == want
        assert all(cc(p)["TableName"] == data.t["big"] for p in pages)
        # 11 items of 100,014 bytes: ceil(1,100,154 / 4096) = 269 units.
        assert want[0] == (269 if consistent else 134.5)
    # A filter that keeps nothing: the same pages read the same bytes.
    want_ec = [read_units(sum(item_size(i) for i in p["Items"]), False)
               for p in pages_of(ddb.scan, TableName=data.t["big"])]
    pages = pages_of(ddb.scan, TableName=data.t["big"],
                     ReturnConsumedCapacity="TOTAL",
                     FilterExpression="attribute_exists(nothing)")
    assert [p["ScannedCount"] for p in pages] == [11, 11, 11, 11, 6]
    assert all(p["Count"] == 0 for p in pages)
    assert [cc(p)["CapacityUnits"] for p in pages] == want_ec
    assert sum(want_ec) == 4 * 134.5 + 73.5


def test_small_scan_capacity_per_page(ddb, cluster, data):
    """Three items of 2,500 bytes: one page reads 7,500 bytes, 2 units
    (1.0 eventually consistent, 2.0 strongly consistent); with Limit 2 the
    pages read 5,000 and 2,500 bytes, 2 + 1 units (1.0 + 0.5): each page
    is rounded on its own, and the second (ScannedCount 1 < Limit) ends
    the Scan."""
    c = cluster.client()
    name = data.t["c25"]
    for i in range(3):
        item = {"pk": S("cap-%d" % i)}
        item["v"] = S("z" * (2500 - item_size(item) - 1))
        assert item_size(item) == 2500
        c.put_item(TableName=name, Item=item)
    r = ddb.scan(TableName=name, ReturnConsumedCapacity="TOTAL")
    assert r["Count"] == 3 and "LastEvaluatedKey" not in r
    assert cc(r) == {"TableName": name, "CapacityUnits": 1.0}
    r = ddb.scan(TableName=name, ReturnConsumedCapacity="TOTAL",
                 ConsistentRead=True)
    assert cc(r) == {"TableName": name, "CapacityUnits": 2.0}
    pages = pages_of(ddb.scan, 2, TableName=name,
                     ReturnConsumedCapacity="TOTAL")
    assert [(p["ScannedCount"], cc(p)["CapacityUnits"]) for p in pages] == [
        (2, 1.0), (1, 0.5)]
    pages = pages_of(ddb.scan, 2, TableName=name, ConsistentRead=True,
                     ReturnConsumedCapacity="TOTAL", Select="COUNT")
    assert [cc(p)["CapacityUnits"] for p in pages] == [2.0, 1.0]


def test_item_capacity(ddb, data):
    """GetItem of a 5 KB item: 1.0 eventually consistent, 2.0 strongly
    consistent; PutItem of a new 5 KB item: 5.0; DeleteItem of a missing
    item: 1.0."""
    table = data.t["h"]
    item = {"pk": S("five-kb")}
    item["v"] = S("f" * (5000 - item_size(item) - 1))
    assert item_size(item) == 5000
    r = ddb.put_item(TableName=table, Item=item,
                     ReturnConsumedCapacity="TOTAL")
    assert cc(r) == {"TableName": table, "CapacityUnits": 5.0}
    r = ddb.get_item(TableName=table, Key={"pk": S("five-kb")},
                     ReturnConsumedCapacity="TOTAL")
    assert r["Item"] == item
    assert cc(r) == {"TableName": table, "CapacityUnits": 1.0}
    r = ddb.get_item(TableName=table, Key={"pk": S("five-kb")},
                     ConsistentRead=True, ReturnConsumedCapacity="TOTAL")
    assert cc(r) == {"TableName": table, "CapacityUnits": 2.0}
    r = ddb.delete_item(TableName=table, Key={"pk": S("never-there")},
                        ReturnConsumedCapacity="TOTAL")
    assert cc(r) == {"TableName": table, "CapacityUnits": 1.0}
    # A Query of the same 5 KB item: 2 units of 4 KB.
    r = ddb.query(TableName=table, KeyConditionExpression="pk = :p",
                  ExpressionAttributeValues={":p": S("five-kb")},
                  ReturnConsumedCapacity="TOTAL")
    assert cc(r)["CapacityUnits"] == 1.0


# ---- 5. boto3 paginators ----

def test_query_paginator(ddb, data):
    """boto3's Query paginator with PageSize: every item of the collection
    once and in order, forward and backward, filtered or not; MaxItems
    and StartingToken resume where the last run stopped."""
    coll = data.collection("s", "p0")
    p = ddb.get_paginator("query")
    args = {"TableName": data.t["s"], "KeyConditionExpression": "pk = :p",
            "ExpressionAttributeValues": {":p": S("p0")}}
    for size in (1, 7, 50, 500):
        for forward in (True, False):
            got = [i for page in p.paginate(
                ScanIndexForward=forward,
                PaginationConfig={"PageSize": size}, **args)
                for i in page["Items"]]
            want = coll if forward else coll[::-1]
            assert [kkey(i) for i in got] == [kkey(i) for i in want], size
    filtered = [i for page in p.paginate(
        FilterExpression="attribute_exists(odd)",
        PaginationConfig={"PageSize": 9}, **args) for i in page["Items"]]
    assert [kkey(i) for i in filtered] == [kkey(i) for i in coll
                                           if "odd" in i]
    first = p.paginate(PaginationConfig={"PageSize": 8, "MaxItems": 20},
                       **args).build_full_result()
    assert [kkey(i) for i in first["Items"]] == [kkey(i) for i in coll[:20]]
    rest = p.paginate(PaginationConfig={
        "PageSize": 8, "StartingToken": first["NextToken"]},
        **args).build_full_result()
    assert [kkey(i) for i in rest["Items"]] == [kkey(i) for i in coll[20:]]


def test_scan_paginator(ddb, data):
    """boto3's Scan paginator with PageSize, whole table and per segment:
    every item exactly once."""
    p = ddb.get_paginator("scan")
    want = sorted(kkey(i) for i in data.items["n"])
    for size in (3, 64, 1000):
        got = [kkey(i) for page in p.paginate(
            TableName=data.t["n"], PaginationConfig={"PageSize": size})
            for i in page["Items"]]
        assert sorted(got) == want and len(got) == len(set(got)), size
    got = []
    for seg in range(4):
        got += [kkey(i) for page in p.paginate(
            TableName=data.t["n"], Segment=seg, TotalSegments=4,
            PaginationConfig={"PageSize": 25}) for i in page["Items"]]
    assert sorted(got) == want
    r = p.paginate(TableName=data.t["n"], Select="COUNT",
                   PaginationConfig={"PageSize": 40}).build_full_result()
    assert r["Count"] == len(want)
