"""test_gsi_multikey.py — global secondary indexes with multi-attribute
keys (DynamoDB, November 2025): a partition key of up to four attributes
and a sort key of up to four, each attribute of its own type, through
boto3.

What DynamoDB documents and these tests hold the cluster to: the KeySchema
lists the HASH elements, then the RANGE elements; an item is in the index
only when it has every key attribute; a Query names every partition key
attribute with =, and conditions on a leading run of the sort key's
attributes, each with = but the last, which may use any sort-key operator;
entries are ordered by the sort attributes in turn, each by its own type;
LastEvaluatedKey names every key attribute of the index and the table.
The words of the refusals DynamoDB's documentation does not quote are
ours (router/index_spec.c, router/ops/ops_read.c).
"""

import os
import random
import sys
import time
import uuid

import pytest
from botocore.exceptions import ClientError

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "chaos", "check"))
import indexes as indexes_check  # noqa: E402
from test_gsi import S, N, wait_active  # noqa: E402
from test_gsi import until_converged as converged  # noqa: E402

SEED = 20261206

NAMES = {"#t": "tournament", "#g": "region", "#r": "round",
         "#b": "bracket", "#m": "match"}


def B(x):
    return {"B": x}


DEFS = [("pk", "S"), ("sk", "N"), ("tournament", "S"), ("region", "S"),
        ("round", "N"), ("bracket", "S"), ("match", "B")]

MATCHES = {
    "IndexName": "matches",
    "KeySchema": [{"AttributeName": "tournament", "KeyType": "HASH"},
                  {"AttributeName": "region", "KeyType": "HASH"},
                  {"AttributeName": "round", "KeyType": "RANGE"},
                  {"AttributeName": "bracket", "KeyType": "RANGE"},
                  {"AttributeName": "match", "KeyType": "RANGE"}],
    "Projection": {"ProjectionType": "INCLUDE",
                   "NonKeyAttributes": ["score"]},
}


def make_table(ddb, name, gsis=(MATCHES,)):
    kw = {"GlobalSecondaryIndexes": list(gsis)} if gsis else {}
    used = {"pk", "sk"} | {k["AttributeName"] for g in gsis
                           for k in g["KeySchema"]}
    ddb.create_table(
        TableName=name, BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": n, "AttributeType": t}
                              for n, t in DEFS if n in used],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                   {"AttributeName": "sk", "KeyType": "RANGE"}], **kw)
    return wait_active(ddb, name)


def match_item(i, tournament, region, rnd, bracket, match):
    return {"pk": S("m%d" % i), "sk": N(i), "tournament": S(tournament),
            "region": S(region), "round": N(rnd), "bracket": S(bracket),
            "match": B(match), "score": N(i % 7), "notes": S("n%d" % i)}


def load_matches(ddb, name):
    """Two tournaments x two regions x rounds -1, 2, 10 (numeric order
    differs from the strings') x brackets x matches, and three sparse
    items that lack one key attribute each. Returns the base items."""
    items, i = [], 0
    for t in ("T1", "T2"):
        for g in ("EU", "US"):
            for r in (10, -1, 2):
                for b in ("UP", "LO", "U"):
                    for m in (b"\x02", b"\x00\x01", b"\x01"):
                        i += 1
                        items.append(match_item(i, t, g, r, b, m))
    for it in items:
        ddb.put_item(TableName=name, Item=it)
    for k, missing in enumerate(("region", "bracket", "match")):
        it = match_item(1000 + k, "T1", "EU", 2, "UP", b"\x09")
        del it[missing]
        ddb.put_item(TableName=name, Item=it)
    return items


def until_converged(ddb, name):
    converged(ddb, name, indexes=("matches",), timeout=15)


def sort_key(it):
    return (int(it["round"]["N"]), it["bracket"]["S"],
            bytes(it["match"]["B"]))


def query(ddb, name, expr, values, **kw):
    used = {k: v for k, v in NAMES.items() if k in expr}
    used.update(kw.pop("ExpressionAttributeNames", {}))
    return indexes_check.read_all(
        ddb.query, TableName=name, IndexName="matches",
        KeyConditionExpression=expr, ExpressionAttributeValues=values,
        ExpressionAttributeNames=used, **kw)


def keys_of(items):
    return [it["pk"]["S"] for it in items]


@pytest.fixture(scope="module")
def loaded(cluster):
    """One table with the matches index, loaded and converged."""
    ddb = cluster.client()
    name = "multikey-q-" + uuid.uuid4().hex[:8]
    make_table(ddb, name)
    items = load_matches(ddb, name)
    until_converged(ddb, name)
    return name, items


def test_describe_lists_every_key_attribute(ddb, loaded):
    name, _ = loaded
    t = ddb.describe_table(TableName=name)["Table"]
    (g,) = t["GlobalSecondaryIndexes"]
    assert g["KeySchema"] == MATCHES["KeySchema"]
    assert g["IndexStatus"] == "ACTIVE"
    assert sorted((d["AttributeName"], d["AttributeType"])
                  for d in t["AttributeDefinitions"]) == sorted(DEFS)
    # The sparse items (one key attribute missing) are not entries.
    assert g["ItemCount"] == 2 * 2 * 3 * 3 * 3


@pytest.mark.processes
def test_status_names_every_key_attribute(cluster, loaded):
    """./kv status lists the index's table with all its key attributes."""
    name, _ = loaded
    line = [ln for ln in cluster.admin("status").splitlines()
            if ln.strip().startswith(name + "/matches ")]
    assert len(line) == 1 and line[0].rstrip().endswith(
        "hash=tournament+region range=round+bracket+match"), line


def test_query_orders_by_each_sort_attribute_in_turn(ddb, loaded):
    name, items = loaded
    mine = [it for it in items if it["tournament"] == S("T1") and
            it["region"] == S("EU")]
    got = query(ddb, name, "#t = :t AND #g = :g",
                {":t": S("T1"), ":g": S("EU")})
    assert keys_of(got) == keys_of(sorted(mine, key=sort_key))
    # Round is a Number: -1 < 2 < 10, not the strings' order.
    assert [it["round"]["N"] for it in got[::9]] == ["-1", "2", "10"]
    back = query(ddb, name, "#t = :t AND #g = :g",
                 {":t": S("T1"), ":g": S("EU")}, ScanIndexForward=False)
    assert keys_of(back) == keys_of(got)[::-1]
    # INCLUDE: the keys of index and table, and score; not notes.
    assert set(got[0]) == {"pk", "sk", "tournament", "region", "round",
                           "bracket", "match", "score"}


def pick(items, **want):
    out = [it for it in items if it["tournament"] == S("T2") and
           it["region"] == S("US")]
    for k, f in want.items():
        out = [it for it in out if f(it[k])]
    return keys_of(sorted(out, key=sort_key))


CASES = [
    ("#r = :r", {":r": N(2)},
     dict(round=lambda v: v == N(2))),
    ("#r < :r", {":r": N(2)},
     dict(round=lambda v: int(v["N"]) < 2)),
    ("#r <= :r", {":r": N(2)},
     dict(round=lambda v: int(v["N"]) <= 2)),
    ("#r > :r", {":r": N(-1)},
     dict(round=lambda v: int(v["N"]) > -1)),
    ("#r >= :r", {":r": N(2)},
     dict(round=lambda v: int(v["N"]) >= 2)),
    ("#r BETWEEN :a AND :b", {":a": N(-1), ":b": N(2)},
     dict(round=lambda v: -1 <= int(v["N"]) <= 2)),
    ("#r = :r AND #b = :b", {":r": N(10), ":b": S("U")},
     dict(round=lambda v: v == N(10), bracket=lambda v: v == S("U"))),
    ("#r = :r AND begins_with(#b, :b)", {":r": N(10), ":b": S("U")},
     dict(round=lambda v: v == N(10),
          bracket=lambda v: v["S"].startswith("U"))),
    ("#r = :r AND #b > :b", {":r": N(10), ":b": S("LO")},
     dict(round=lambda v: v == N(10), bracket=lambda v: v["S"] > "LO")),
    ("#r = :r AND #b < :b", {":r": N(10), ":b": S("UP")},
     dict(round=lambda v: v == N(10), bracket=lambda v: v["S"] < "UP")),
    ("#r = :r AND #b = :b AND #m = :m",
     {":r": N(2), ":b": S("UP"), ":m": B(b"\x00\x01")},
     dict(round=lambda v: v == N(2), bracket=lambda v: v == S("UP"),
          match=lambda v: bytes(v["B"]) == b"\x00\x01")),
    ("#r = :r AND #b = :b AND #m >= :m",
     {":r": N(2), ":b": S("UP"), ":m": B(b"\x01")},
     dict(round=lambda v: v == N(2), bracket=lambda v: v == S("UP"),
          match=lambda v: bytes(v["B"]) >= b"\x01")),
    ("#r = :r AND #b = :b AND begins_with(#m, :m)",
     {":r": N(2), ":b": S("UP"), ":m": B(b"\x00")},
     dict(round=lambda v: v == N(2), bracket=lambda v: v == S("UP"),
          match=lambda v: bytes(v["B"]).startswith(b"\x00"))),
]


@pytest.mark.parametrize("cond,values,want", CASES,
                         ids=[c[0] for c in CASES])
def test_sort_conditions(ddb, loaded, cond, values, want):
    name, items = loaded
    values = dict(values, **{":t": S("T2"), ":g": S("US")})
    got = query(ddb, name, "#t = :t AND #g = :g AND " + cond, values)
    assert keys_of(got) == pick(items, **want)
    assert got, "a case that selects nothing would show little"


def test_paging_walks_every_entry_once(ddb, loaded):
    name, items = loaded
    values = {":t": S("T1"), ":g": S("US"), ":r": N(-1)}
    whole = query(ddb, name, "#t = :t AND #g = :g AND #r >= :r", values)
    pages, start = [], None
    while True:
        kw = {"ExclusiveStartKey": start} if start else {}
        r = ddb.query(TableName=name, IndexName="matches", Limit=4,
                      KeyConditionExpression="#t = :t AND #g = :g AND "
                      "#r >= :r", ExpressionAttributeValues=values,
                      ExpressionAttributeNames={k: NAMES[k] for k in
                                                ("#t", "#g", "#r")}, **kw)
        pages.extend(r["Items"])
        start = r.get("LastEvaluatedKey")
        if start is None:
            break
        assert set(start) == {"pk", "sk", "tournament", "region", "round",
                              "bracket", "match"}
    assert keys_of(pages) == keys_of(whole)
    # A Scan of the index pages the same way, and four segments cover it.
    scanned = indexes_check.scan_all(ddb, TableName=name,
                                     IndexName="matches", Limit=7)
    assert sorted(keys_of(scanned)) == sorted(
        it["pk"]["S"] for it in items)
    seg = []
    for s in range(4):
        seg += indexes_check.scan_all(ddb, TableName=name,
                                      IndexName="matches", Segment=s,
                                      TotalSegments=4, Limit=5)
    assert sorted(keys_of(seg)) == sorted(keys_of(scanned))


REFUSED = [
    ("#t = :t", {":t": S("T1")},
     "Query condition missed key schema element: region"),
    ("#t = :t AND #g = :g AND #b = :b", {":t": S("T1"), ":g": S("EU"),
                                         ":b": S("UP")},
     "Query condition missed key schema element: round"),
    ("#t = :t AND #g = :g AND #r = :r AND #m = :m",
     {":t": S("T1"), ":g": S("EU"), ":r": N(2), ":m": B(b"\x01")},
     "Query condition missed key schema element: bracket"),
    ("#t = :t AND #g = :g AND #r > :r AND #b = :b",
     {":t": S("T1"), ":g": S("EU"), ":r": N(2), ":b": S("UP")},
     "Query key condition not supported"),
    ("#t = :t AND #g > :g", {":t": S("T1"), ":g": S("EU")},
     "Query key condition not supported"),
    ("#t = :t AND #g = :g AND #r = :r", {":t": S("T1"), ":g": S("EU"),
                                         ":r": S("2")},
     "Condition parameter type does not match schema type"),
    ("#t = :t AND #g = :g AND begins_with(#r, :r)",
     {":t": S("T1"), ":g": S("EU"), ":r": N(2)},
     "operator or function: begins_with, operand type: N"),
    ("#t = :t AND #g = :g AND notes = :n", {":t": S("T1"), ":g": S("EU"),
                                            ":n": S("x")},
     "Query condition missed key schema element: round"),
]


@pytest.mark.parametrize("cond,values,msg", REFUSED,
                         ids=[r[0] for r in REFUSED])
def test_query_refusals(ddb, loaded, cond, values, msg):
    name, _ = loaded
    with pytest.raises(ClientError) as e:
        query(ddb, name, cond, values)
    assert e.value.response["Error"]["Code"] == "ValidationException"
    assert msg in e.value.response["Error"]["Message"]


def test_filter_may_not_name_an_index_key_attribute(ddb, loaded):
    name, _ = loaded
    with pytest.raises(ClientError) as e:
        query(ddb, name, "#t = :t AND #g = :g", {
            ":t": S("T1"), ":g": S("EU"), ":b": S("UP")},
            FilterExpression="#b = :b",
            ExpressionAttributeNames={"#t": "tournament", "#g": "region",
                                      "#b": "bracket"})
    assert "Primary key attribute: bracket" in \
        e.value.response["Error"]["Message"]
    # The base table's keys are no index keys: a filter may use them.
    got = query(ddb, name, "#t = :t AND #g = :g",
                {":t": S("T1"), ":g": S("EU"), ":p": S("m1")},
                FilterExpression="pk = :p")
    assert keys_of(got) == ["m1"]


def test_entries_follow_writes(ddb, unique):
    """Random puts, updates of single key attributes (an entry moves when
    any of them changes), removals of one (the entry goes: sparse),
    transactions and deletes; the index then equals its table's
    projection."""
    name = "multikey-w-" + unique
    make_table(ddb, name)
    rnd = random.Random(SEED)
    attrs = {"tournament": lambda: S(rnd.choice("AB")),
             "region": lambda: S(rnd.choice(["EU", "US"])),
             "round": lambda: N(rnd.randint(-3, 3)),
             "bracket": lambda: S(rnd.choice(["UP", "LO"])),
             "match": lambda: B(bytes([rnd.randint(0, 2)]))}
    for step in range(400):
        i = rnd.randrange(40)
        key = {"pk": S("k%d" % i), "sk": N(i)}
        op = rnd.random()
        if op < 0.4:
            it = dict(key, score=N(step))
            for a, f in attrs.items():
                if rnd.random() < 0.9:
                    it[a] = f()
            ddb.put_item(TableName=name, Item=it)
        elif op < 0.7:
            a = rnd.choice(list(attrs))
            ddb.update_item(TableName=name, Key=key,
                            UpdateExpression="SET #a = :v, score = :s",
                            ExpressionAttributeNames={"#a": a},
                            ExpressionAttributeValues={":v": attrs[a](),
                                                       ":s": N(step)})
        elif op < 0.8:
            a = rnd.choice(list(attrs))
            ddb.update_item(TableName=name, Key=key,
                            UpdateExpression="REMOVE #a",
                            ExpressionAttributeNames={"#a": a})
        elif op < 0.9:
            # Two items in one transaction: both entries, or neither.
            j = (i + 1 + rnd.randrange(39)) % 40
            ddb.transact_write_items(TransactItems=[
                {"Put": {"TableName": name, "Item": dict(
                    {"pk": S("k%d" % x), "sk": N(x), "score": N(step)},
                    **{a: f() for a, f in attrs.items()})}}
                for x in (i, j)])
        else:
            ddb.delete_item(TableName=name, Key=key)
    until_converged(ddb, name)
    base = indexes_check.scan_all(ddb, TableName=name, ConsistentRead=True)
    full = [it for it in base if all(a in it for a in attrs)]
    assert full and len(full) < len(base), "both kinds should occur"


def test_checker_catches_a_difference(ddb, unique):
    """The checker is trusted because it fails on a planted difference:
    one item's sort attribute changed only in what it expects."""
    name = "multikey-c-" + unique
    make_table(ddb, name)
    for i in range(5):
        ddb.put_item(TableName=name,
                     Item=match_item(i, "T", "EU", i, "UP", b"\x01"))
    until_converged(ddb, name)
    base = indexes_check.scan_all(ddb, TableName=name, ConsistentRead=True)
    base[0]["bracket"] = S("LO")
    missing, extra = indexes_check.differences(ddb, name, "matches",
                                               base_items=base)
    assert len(missing) == 1 and len(extra) == 1


def test_a_key_attribute_of_another_type_is_refused(ddb, loaded):
    name, _ = loaded
    it = match_item(5000, "T1", "EU", 1, "UP", b"\x01")
    it["round"] = S("one")
    with pytest.raises(ClientError) as e:
        ddb.put_item(TableName=name, Item=it)
    assert e.value.response["Error"]["Message"] == (
        "One or more parameter values were invalid: Type mismatch for "
        "Index Key round Expected: N Actual: S IndexName: matches")
    it["round"] = N(1)
    it["bracket"] = S("")
    with pytest.raises(ClientError) as e:
        ddb.put_item(TableName=name, Item=it)
    assert "IndexName: matches, IndexKey: bracket" in \
        e.value.response["Error"]["Message"]
    # Each attribute keeps a key's size limit: a sort key's 1024 bytes.
    it["bracket"] = S("b" * 1025)
    with pytest.raises(ClientError) as e:
        ddb.put_item(TableName=name, Item=it)
    assert e.value.response["Error"]["Message"] == (
        "One or more parameter values were invalid: Size limit exceeded "
        "for Index Key bracket Actual Size: 1025 bytes Max Size: 1024 "
        "bytes IndexName: matches")
    assert "Item" not in ddb.get_item(TableName=name, Key={
        "pk": S("m5000"), "sk": N(5000)})


def key_schema(*elems):
    return [{"AttributeName": n, "KeyType": k} for n, k in elems]


BAD_SCHEMAS = [
    (key_schema(("tournament", "HASH"), ("round", "RANGE"),
                ("region", "HASH")),
     "A HASH KeySchemaElement cannot follow a RANGE KeySchemaElement"),
    (key_schema(("round", "RANGE"), ("tournament", "HASH")),
     "The first KeySchemaElement is not a HASH key type"),
    (key_schema(("tournament", "HASH"), ("region", "HASH"),
                ("tournament", "HASH")),
     "Some KeySchemaElements have the same name: tournament"),
    (key_schema(*[(n, "HASH") for n, _ in DEFS[2:7]]),
     "at most 4 HASH and 4 RANGE KeySchemaElements"),
]


@pytest.mark.parametrize("schema,msg", BAD_SCHEMAS,
                         ids=["hash-after-range", "range-first",
                              "duplicate", "five-hash"])
def test_key_schema_refusals(ddb, unique, schema, msg):
    with pytest.raises(ClientError) as e:
        make_table(ddb, "multikey-bad-" + unique, gsis=[{
            "IndexName": "bad", "KeySchema": schema,
            "Projection": {"ProjectionType": "ALL"}}])
    assert e.value.response["Error"]["Code"] == "ValidationException"
    assert msg in e.value.response["Error"]["Message"]


def test_shape_limits(raw_ddb, unique):
    """Nine elements are past a GSI's shape, three past an LSI's (an LSI
    keeps one sort key attribute)."""
    defs = [{"AttributeName": n, "AttributeType": t} for n, t in DEFS]
    base = dict(TableName="multikey-shape-" + unique,
                BillingMode="PAY_PER_REQUEST", AttributeDefinitions=defs,
                KeySchema=key_schema(("pk", "HASH"), ("sk", "RANGE")))
    with pytest.raises(ClientError) as e:
        raw_ddb.create_table(GlobalSecondaryIndexes=[{
            "IndexName": "wide", "KeySchema": key_schema(
                *([("tournament", "HASH")] * 9)),
            "Projection": {"ProjectionType": "ALL"}}], **base)
    assert "Member must have length less than or equal to 8" in \
        e.value.response["Error"]["Message"]
    with pytest.raises(ClientError) as e:
        raw_ddb.create_table(LocalSecondaryIndexes=[{
            "IndexName": "loc", "KeySchema": key_schema(
                ("pk", "HASH"), ("round", "RANGE"), ("bracket", "RANGE")),
            "Projection": {"ProjectionType": "ALL"}}], **base)
    assert "Member must have length less than or equal to 2" in \
        e.value.response["Error"]["Message"]


def test_index_added_to_a_loaded_table(ddb, unique):
    """UpdateTable adds a multi-attribute index to a table with data:
    every item that has all its key attributes is filled in."""
    name = "multikey-fill-" + unique
    make_table(ddb, name, gsis=())
    items = load_matches(ddb, name)
    ddb.update_table(
        TableName=name,
        AttributeDefinitions=[{"AttributeName": n, "AttributeType": t}
                              for n, t in DEFS[2:]],
        GlobalSecondaryIndexUpdates=[{"Create": dict(MATCHES)}])
    t = wait_active(ddb, name)
    assert t["GlobalSecondaryIndexes"][0]["KeySchema"] == \
        MATCHES["KeySchema"]
    until_converged(ddb, name)
    got = query(ddb, name, "#t = :t AND #g = :g AND #r = :r",
                {":t": S("T2"), ":g": S("EU"), ":r": N(10)})
    assert keys_of(got) == keys_of(sorted(
        (it for it in items if it["tournament"] == S("T2") and
         it["region"] == S("EU") and it["round"] == N(10)), key=sort_key))


def test_write_capacity_of_an_entry(ddb, loaded):
    """A put whose item enters the index costs the index a write unit,
    reported apart with ReturnConsumedCapacity INDEXES."""
    name, _ = loaded
    r = ddb.put_item(TableName=name,
                     Item=match_item(6000, "T9", "EU", 1, "UP", b"\x01"),
                     ReturnConsumedCapacity="INDEXES")
    cc = r["ConsumedCapacity"]
    assert cc["GlobalSecondaryIndexes"] == {
        "matches": {"CapacityUnits": 1.0}}
    assert cc["CapacityUnits"] == 2.0
    ddb.delete_item(TableName=name, Key={"pk": S("m6000"),
                                         "sk": N(6000)})


def test_backup_and_restore_keep_the_key(ddb, loaded, unique):
    """A backup lists the index's every key attribute, and the table
    restored from it fills the index again with the same entries."""
    name, items = loaded
    arn = ddb.create_backup(TableName=name, BackupName="multikey")[
        "BackupDetails"]["BackupArn"]
    end = time.time() + 30
    while True:
        d = ddb.describe_backup(BackupArn=arn)["BackupDescription"]
        if d["BackupDetails"]["BackupStatus"] == "AVAILABLE":
            break
        assert time.time() < end, d
        time.sleep(0.1)
    (g,) = d["SourceTableFeatureDetails"]["GlobalSecondaryIndexes"]
    assert g["KeySchema"] == MATCHES["KeySchema"]
    dst = "multikey-r-" + unique
    ddb.restore_table_from_backup(TargetTableName=dst, BackupArn=arn)
    t = wait_active(ddb, dst)
    assert t["GlobalSecondaryIndexes"][0]["KeySchema"] == \
        MATCHES["KeySchema"]
    assert sorted((x["AttributeName"], x["AttributeType"])
                  for x in t["AttributeDefinitions"]) == sorted(DEFS)
    until_converged(ddb, dst)
    want = query(ddb, name, "#t = :t AND #g = :g", {":t": S("T2"),
                                                    ":g": S("EU")})
    got = query(ddb, dst, "#t = :t AND #g = :g", {":t": S("T2"),
                                                  ":g": S("EU")})
    assert keys_of(got) == keys_of(want) and len(got) == 27


@pytest.mark.processes
def test_definition_survives_a_restart(cluster, ddb, loaded):
    """The catalog keeps every key attribute: after all nodes and the
    router restart, the index answers as before."""
    name, items = loaded
    before = query(ddb, name, "#t = :t AND #g = :g AND #r = :r",
                   {":t": S("T1"), ":g": S("US"), ":r": N(2)})
    cluster.restart_all()
    ddb = cluster.client()
    t = wait_active(ddb, name)
    assert t["GlobalSecondaryIndexes"][0]["KeySchema"] == \
        MATCHES["KeySchema"]
    after = query(ddb, name, "#t = :t AND #g = :g AND #r = :r",
                  {":t": S("T1"), ":g": S("US"), ":r": N(2)})
    assert keys_of(after) == keys_of(before) and len(after) == 9
