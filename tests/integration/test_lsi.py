"""test_lsi.py — local secondary indexes end to end through boto3.

An LSI's entries live beside their item collection in the base table's
partitions and change in the write's own batch (core/keyenc.h,
node/index/local.c), so unlike a GSI it is strongly consistent: a Query
with ConsistentRead sees a write at once. Tried here: CreateTable and
DescribeTable with three LSIs (KEYS_ONLY, INCLUDE, ALL) beside a GSI;
Query and parallel Scan of an LSI with paging, in both directions; entries
that follow puts, updates of the index key, removals (sparse) and deletes;
attributes fetched from the table when the read asks for more than the
index projects; ConsumedCapacity's LocalSecondaryIndexes; the item
collection size limit (scaled to 64 KB here) with
ItemCollectionSizeLimitExceededException; ItemCollectionMetrics on
PutItem, UpdateItem, DeleteItem and BatchWriteItem; splits, moves and a
node's kill -9, after which the convergence checker finds every index
equal to the projection of its table.
"""

import os
import random
import sys
import time

import pytest
from botocore.exceptions import ClientError

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "chaos", "check"))
import indexes as indexes_check  # noqa: E402

LIMIT_KB = 64
CLUSTER_SETTINGS = ["item-collection-kb %d" % LIMIT_KB]
SEED = 20261202


def S(x):
    return {"S": x}


def N(x):
    return {"N": str(x)}


LSIS = [
    {"IndexName": "by_l",
     "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                   {"AttributeName": "l", "KeyType": "RANGE"}],
     "Projection": {"ProjectionType": "KEYS_ONLY"}},
    {"IndexName": "by_s",
     "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                   {"AttributeName": "s", "KeyType": "RANGE"}],
     "Projection": {"ProjectionType": "INCLUDE",
                    "NonKeyAttributes": ["title"]}},
    {"IndexName": "by_at",
     "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                   {"AttributeName": "at", "KeyType": "RANGE"}],
     "Projection": {"ProjectionType": "ALL"}},
]


def make_table(ddb, name, gsi=True):
    kw = {}
    if gsi:
        kw["GlobalSecondaryIndexes"] = [
            {"IndexName": "by_g",
             "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
             "Projection": {"ProjectionType": "KEYS_ONLY"}}]
    ddb.create_table(
        TableName=name, BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "N"},
            {"AttributeName": "l", "AttributeType": "N"},
            {"AttributeName": "s", "AttributeType": "S"},
            {"AttributeName": "at", "AttributeType": "S"},
            {"AttributeName": "g", "AttributeType": "S"}] if gsi else [
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "N"},
            {"AttributeName": "l", "AttributeType": "N"},
            {"AttributeName": "s", "AttributeType": "S"},
            {"AttributeName": "at", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                   {"AttributeName": "sk", "KeyType": "RANGE"}],
        LocalSecondaryIndexes=LSIS, **kw)
    end = time.time() + 30
    while time.time() < end:
        t = ddb.describe_table(TableName=name)["Table"]
        if t["TableStatus"] == "ACTIVE" and all(
                g.get("IndexStatus") == "ACTIVE"
                for g in t.get("GlobalSecondaryIndexes", [])):
            return t
        time.sleep(0.2)
    raise AssertionError("%s did not become ACTIVE" % name)


def item(pk, sk, **attrs):
    it = {"pk": S(pk), "sk": N(sk)}
    for k, v in attrs.items():
        it[k] = N(v) if isinstance(v, int) else S(v)
    return it


def query_all(ddb, **kw):
    return indexes_check.read_all(ddb.query, **kw)


def converged_now(ddb, name, wait=10.0):
    res = indexes_check.converged(ddb, name, wait=wait)
    assert all(not m and not e for m, e in res.values()), res
    return res


def test_create_and_describe(ddb, unique):
    name = "lsi_d_" + unique
    t = make_table(ddb, name)
    lsis = {x["IndexName"]: x for x in t["LocalSecondaryIndexes"]}
    assert set(lsis) == {"by_l", "by_s", "by_at"}
    for spec in LSIS:
        d = lsis[spec["IndexName"]]
        assert d["KeySchema"] == spec["KeySchema"]
        assert d["Projection"] == spec["Projection"]
        assert d["IndexArn"] == t["TableArn"] + "/index/" + \
            spec["IndexName"]
        # An LSI has no status or throughput of its own.
        assert "IndexStatus" not in d and "ProvisionedThroughput" not in d
        assert d["ItemCount"] == 0 and d["IndexSizeBytes"] == 0  # empty
    assert [g["IndexName"] for g in t["GlobalSecondaryIndexes"]] == ["by_g"]
    # LSIs are made with their table only.
    with pytest.raises(ClientError) as e:
        ddb.update_table(TableName=name, AttributeDefinitions=[
            {"AttributeName": "x", "AttributeType": "S"}],
            GlobalSecondaryIndexUpdates=[{"Create": {
                "IndexName": "by_l",
                "KeySchema": [{"AttributeName": "x", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "ALL"}}}])
    assert e.value.response["Error"]["Code"] == "ValidationException"


def test_query_is_strongly_consistent_and_ordered(ddb, unique):
    name = "lsi_q_" + unique
    make_table(ddb, name)
    rng = random.Random(SEED)
    ls = rng.sample(range(1000), 40)
    for i, l in enumerate(ls):
        ddb.put_item(TableName=name, Item=item(
            "c", i, l=l, s="s%03d" % (i % 7), at="2026-12-%02d" % (i % 28 + 1),
            title="t%d" % i, body="x" * 50))
        # Seen at once by a consistent Query of the index.
        got = ddb.query(TableName=name, IndexName="by_l", ConsistentRead=True,
                        KeyConditionExpression="pk = :p AND l = :l",
                        ExpressionAttributeValues={":p": S("c"),
                                                   ":l": N(l)})["Items"]
        assert got == [{"pk": S("c"), "sk": N(i), "l": N(l)}]
    # Ordered by the index's sort key, both ways, paged.
    for fwd in (True, False):
        pages, start, out = 0, None, []
        while True:
            kw = {"ExclusiveStartKey": start} if start else {}
            r = ddb.query(TableName=name, IndexName="by_l", Limit=7,
                          ScanIndexForward=fwd, ConsistentRead=True,
                          KeyConditionExpression="pk = :p",
                          ExpressionAttributeValues={":p": S("c")}, **kw)
            out += r["Items"]
            pages += 1
            start = r.get("LastEvaluatedKey")
            if start:
                assert set(start) == {"pk", "sk", "l"}
            else:
                break
        assert [int(x["l"]["N"]) for x in out] == sorted(ls, reverse=not fwd)
        assert pages == 6
    # Key conditions on the index's sort key.
    r = query_all(ddb, TableName=name, IndexName="by_l",
                  KeyConditionExpression="pk = :p AND l BETWEEN :a AND :b",
                  ExpressionAttributeValues={":p": S("c"), ":a": N(100),
                                             ":b": N(500)})
    assert sorted(int(x["l"]["N"]) for x in r) == \
        sorted(x for x in ls if 100 <= x <= 500)
    r = query_all(ddb, TableName=name, IndexName="by_s",
                  KeyConditionExpression="pk = :p AND begins_with(s, :x)",
                  ExpressionAttributeValues={":p": S("c"), ":x": S("s00")})
    assert len(r) == 40 and all(set(x) == {"pk", "sk", "s", "title"}
                                for x in r)
    assert [x["s"]["S"] for x in r] == sorted(x["s"]["S"] for x in r)
    # The table's own reads never see the entries.
    base = query_all(ddb, TableName=name, ConsistentRead=True,
                     KeyConditionExpression="pk = :p",
                     ExpressionAttributeValues={":p": S("c")})
    assert [int(x["sk"]["N"]) for x in base] == list(range(40))
    assert ddb.scan(TableName=name, Select="COUNT")["Count"] == 40
    # Another collection's entries stay out.
    ddb.put_item(TableName=name, Item=item("d", 1, l=5))
    r = query_all(ddb, TableName=name, IndexName="by_l",
                  KeyConditionExpression="pk = :p",
                  ExpressionAttributeValues={":p": S("d")})
    assert r == [{"pk": S("d"), "sk": N(1), "l": N(5)}]
    converged_now(ddb, name)


def test_entries_follow_writes(ddb, unique):
    name = "lsi_w_" + unique
    make_table(ddb, name)
    rng = random.Random(SEED + 1)
    for step in range(400):
        pk = "p%d" % rng.randrange(4)
        sk = rng.randrange(30)
        op = rng.random()
        key = {"pk": S(pk), "sk": N(sk)}
        if op < 0.45:
            attrs = {}
            if rng.random() < 0.7:
                attrs["l"] = rng.randrange(50)
            if rng.random() < 0.5:
                attrs["s"] = "v%d" % rng.randrange(20)
            if rng.random() < 0.5:
                attrs["at"] = "a%d" % rng.randrange(20)
            if rng.random() < 0.3:
                attrs["g"] = "g%d" % rng.randrange(5)
            attrs["title"] = "t%d" % step
            ddb.put_item(TableName=name, Item=item(pk, sk, **attrs))
        elif op < 0.75:
            ddb.update_item(TableName=name, Key=key,
                            UpdateExpression="SET l = :l, title = :t",
                            ExpressionAttributeValues={
                                ":l": N(rng.randrange(50)),
                                ":t": S("u%d" % step)})
        elif op < 0.85:
            ddb.update_item(TableName=name, Key=key,
                            UpdateExpression="REMOVE l, s")
        else:
            ddb.delete_item(TableName=name, Key=key)
    # The LSIs at once, the GSI once it drains.
    res = indexes_check.converged(ddb, name, ["by_l", "by_s", "by_at"],
                                  wait=0)
    assert all(not m and not e for m, e in res.values()), res
    converged_now(ddb, name)
    # DescribeTable counts each LSI's entries and their projected sizes
    # (the nodes count them again at most a hundredth of the time).
    want = {}
    for x in ("by_l", "by_s", "by_at"):
        entries = indexes_check.scan_all(ddb, TableName=name, IndexName=x)
        want[x] = (len(entries), sum(item_bytes(e) for e in entries))
    assert all(n > 0 for n, _ in want.values()), want

    def counts():
        d = ddb.describe_table(TableName=name)["Table"]
        return {x["IndexName"]: (x["ItemCount"], x["IndexSizeBytes"])
                for x in d["LocalSecondaryIndexes"]}
    deadline = time.time() + 5
    while counts() != want and time.time() < deadline:
        time.sleep(0.2)
    assert counts() == want
    # The checker fails on a planted difference.
    base = indexes_check.scan_all(ddb, TableName=name, ConsistentRead=True)
    gone = [b for b in base if "l" in b][0]
    missing, extra = indexes_check.differences(
        ddb, name, "by_l", base_items=[b for b in base if b is not gone])
    assert len(extra) == 1 and not missing


def test_reads_fetch_what_the_index_does_not_project(ddb, unique):
    name = "lsi_f_" + unique
    make_table(ddb, name, gsi=False)
    big = "y" * 5000
    for i in range(5):
        ddb.put_item(TableName=name, Item=item("f", i, l=10 - i, s="s%d" % i,
                                               title="t%d" % i, big=big))
    full = query_all(ddb, TableName=name, ConsistentRead=True,
                     KeyConditionExpression="pk = :p",
                     ExpressionAttributeValues={":p": S("f")})
    kw = dict(TableName=name, IndexName="by_l",
              KeyConditionExpression="pk = :p",
              ExpressionAttributeValues={":p": S("f")},
              ReturnConsumedCapacity="INDEXES")
    proj = ddb.query(**kw)
    assert all(set(x) == {"pk", "sk", "l"} for x in proj["Items"])
    fetched = ddb.query(Select="ALL_ATTRIBUTES", **kw)
    assert sorted(fetched["Items"], key=lambda x: int(x["sk"]["N"])) == full
    # Each fetch is a read of its item: 5 items of about 5 KB, two 4 KB
    # units each at half cost, on top of the index's entries.
    cc0, cc1 = proj["ConsumedCapacity"], fetched["ConsumedCapacity"]
    assert cc0["LocalSecondaryIndexes"]["by_l"]["CapacityUnits"] == 0.5
    assert cc1["LocalSecondaryIndexes"]["by_l"]["CapacityUnits"] == 5.5
    assert cc1["Table"]["CapacityUnits"] == 0
    # A projection naming an attribute the index does not hold.
    r = ddb.query(ProjectionExpression="sk, title", **kw)["Items"]
    assert sorted(r, key=lambda x: int(x["sk"]["N"])) == [
        {"sk": N(i), "title": S("t%d" % i)} for i in range(5)]
    # INCLUDE projects title: no fetch, no big.
    r = ddb.query(TableName=name, IndexName="by_s",
                  KeyConditionExpression="pk = :p",
                  ExpressionAttributeValues={":p": S("f")},
                  ProjectionExpression="sk, title")["Items"]
    assert len(r) == 5
    # A filter on an attribute outside the projection.
    r = ddb.query(FilterExpression="big = :b",
                  ExpressionAttributeValues={":p": S("f"), ":b": S(big)},
                  **{k: v for k, v in kw.items()
                     if k != "ExpressionAttributeValues"})
    assert r["Count"] == 5
    # ALL_PROJECTED_ATTRIBUTES: an index only.
    r = ddb.query(Select="ALL_PROJECTED_ATTRIBUTES", **kw)
    assert r["Items"] == proj["Items"]
    with pytest.raises(ClientError) as e:
        ddb.query(TableName=name, Select="ALL_PROJECTED_ATTRIBUTES",
                  KeyConditionExpression="pk = :p",
                  ExpressionAttributeValues={":p": S("f")})
    assert e.value.response["Error"]["Code"] == "ValidationException"


def test_global_index_refuses_all_attributes(ddb, unique):
    name = "lsi_g_" + unique
    make_table(ddb, name)
    with pytest.raises(ClientError) as e:
        ddb.query(TableName=name, IndexName="by_g", Select="ALL_ATTRIBUTES",
                  KeyConditionExpression="g = :g",
                  ExpressionAttributeValues={":g": S("x")})
    assert e.value.response["Error"]["Message"] == (
        "One or more parameter values were invalid: Select type "
        "ALL_ATTRIBUTES is not supported for global secondary index by_g "
        "because its projection type is not ALL")


def test_scan_of_an_index_in_segments(ddb, unique):
    name = "lsi_s_" + unique
    make_table(ddb, name, gsi=False)
    want = []
    for i in range(120):
        it = item("k%d" % (i % 17), i, title="t%d" % i)
        if i % 3:
            it["l"] = N(i)
            want.append({"pk": it["pk"], "sk": it["sk"], "l": it["l"]})
        ddb.put_item(TableName=name, Item=it)
    got = []
    for seg in range(3):
        got += indexes_check.scan_all(ddb, TableName=name, IndexName="by_l",
                                      Segment=seg, TotalSegments=3, Limit=9,
                                      ConsistentRead=True)
    assert indexes_check.canon(got) == indexes_check.canon(want)


def test_consumed_capacity_of_writes(ddb, unique):
    name = "lsi_c_" + unique
    make_table(ddb, name, gsi=False)
    r = ddb.put_item(TableName=name, Item=item("c", 1, l=1, s="a",
                                               title="x" * 1500),
                     ReturnConsumedCapacity="INDEXES")
    cc = r["ConsumedCapacity"]
    # The item (about 1.5 KB: 2 WCU); by_l gets its keys (1), by_s its
    # keys and title (2); by_at has no entry (no `at`).
    assert cc["Table"]["CapacityUnits"] == 2
    assert cc["LocalSecondaryIndexes"] == {
        "by_l": {"CapacityUnits": 1.0}, "by_s": {"CapacityUnits": 2.0}}
    assert cc["CapacityUnits"] == 5
    # A change of the index key: a delete and a put of the entry.
    r = ddb.update_item(TableName=name, Key={"pk": S("c"), "sk": N(1)},
                        UpdateExpression="SET l = :l",
                        ExpressionAttributeValues={":l": N(2)},
                        ReturnConsumedCapacity="INDEXES")
    cc = r["ConsumedCapacity"]
    assert cc["LocalSecondaryIndexes"]["by_l"]["CapacityUnits"] == 2
    # A change that leaves an index alone costs it nothing.
    assert "by_s" not in cc["LocalSecondaryIndexes"]


def metrics_of(r):
    return r["ItemCollectionMetrics"]


def test_item_collection_metrics(ddb, raw_ddb, unique):
    name = "lsi_m_" + unique
    make_table(ddb, name, gsi=False)
    want = {"ItemCollectionKey": {"pk": S("m")},
            "SizeEstimateRangeGB": [0.0, 1.0]}
    r = ddb.put_item(TableName=name, Item=item("m", 1, l=1),
                     ReturnItemCollectionMetrics="SIZE")
    assert metrics_of(r) == want
    r = ddb.update_item(TableName=name, Key={"pk": S("m"), "sk": N(1)},
                        UpdateExpression="SET s = :s",
                        ExpressionAttributeValues={":s": S("x")},
                        ReturnItemCollectionMetrics="SIZE")
    assert metrics_of(r) == want
    r = ddb.delete_item(TableName=name, Key={"pk": S("m"), "sk": N(1)},
                        ReturnItemCollectionMetrics="SIZE")
    assert metrics_of(r) == want
    r = ddb.put_item(TableName=name, Item=item("m", 2),
                     ReturnItemCollectionMetrics="NONE")
    assert "ItemCollectionMetrics" not in r
    r = ddb.batch_write_item(RequestItems={name: [
        {"PutRequest": {"Item": item("m", 3, l=3)}},
        {"PutRequest": {"Item": item("n", 3, l=3)}},
        {"DeleteRequest": {"Key": {"pk": S("m"), "sk": N(2)}}}]},
        ReturnItemCollectionMetrics="SIZE")
    got = r["ItemCollectionMetrics"][name]
    assert sorted(x["ItemCollectionKey"]["pk"]["S"] for x in got) == \
        ["m", "m", "n"]
    # A table without local indexes has no item collection metrics.
    plain = "lsi_p_" + unique
    ddb.create_table(TableName=plain, BillingMode="PAY_PER_REQUEST",
                     AttributeDefinitions=[
                         {"AttributeName": "pk", "AttributeType": "S"}],
                     KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}])
    ddb.get_waiter("table_exists").wait(TableName=plain)
    r = ddb.put_item(TableName=plain, Item={"pk": S("a")},
                     ReturnItemCollectionMetrics="SIZE")
    assert "ItemCollectionMetrics" not in r
    with pytest.raises(ClientError) as e:
        raw_ddb.put_item(TableName=name, Item=item("m", 9),
                         ReturnItemCollectionMetrics="ALL")
    assert e.value.response["Error"]["Message"] == (
        "1 validation error detected: Value 'ALL' at "
        "'returnItemCollectionMetrics' failed to satisfy constraint: "
        "Member must satisfy enum value set: [SIZE, NONE]")


def item_bytes(it):
    """DynamoDB's size of an item of S and N attributes whose numbers
    have at most two digits: names and values in bytes (a small number is
    2 bytes, zero 1)."""
    n = 0
    for k, v in it.items():
        n += len(k.encode())
        if "S" in v:
            n += len(v["S"].encode())
        else:
            assert v["N"].isdigit() and len(v["N"]) <= 2, v
            n += 1 if v["N"] == "0" else 2
    return n


def test_collection_size_limit(ddb, unique):
    """Each collection of a table with LSIs holds at most item-collection-kb
    (64 KB here): its items and their index entries (100 bytes each on
    top of the projected item). A write that would grow it past the limit
    fails with ItemCollectionSizeLimitExceededException and changes
    nothing; writes that shrink it go through; other collections are not
    affected."""
    name = "lsi_z_" + unique
    make_table(ddb, name, gsi=False)
    pad = "p" * 3000
    size, n = 0, 0
    while True:
        it = item("z", n, l=n % 90, zz=pad)
        entry = item_bytes({k: it[k] for k in ("pk", "sk", "l")}) + 100
        grow = item_bytes(it) + entry
        try:
            ddb.put_item(TableName=name, Item=it)
        except ClientError as e:
            err = e.response["Error"]
            assert err["Code"] == "ItemCollectionSizeLimitExceededException"
            assert err["Message"] == "Collection size exceeded."
            # Refused exactly where the limit lies.
            assert size + grow > LIMIT_KB * 1024 >= size
            break
        size += grow
        n += 1
        assert n < 100
    # Nothing of the refused write is there.
    got = ddb.get_item(TableName=name, Key={"pk": S("z"), "sk": N(n)},
                       ConsistentRead=True)
    assert "Item" not in got
    r = query_all(ddb, TableName=name, IndexName="by_l", ConsistentRead=True,
                  KeyConditionExpression="pk = :p",
                  ExpressionAttributeValues={":p": S("z")})
    assert len(r) == n
    # A write that grows the collection by a byte fails too; one that
    # shrinks it goes through, and then there is room again.
    with pytest.raises(ClientError) as e:
        ddb.batch_write_item(RequestItems={name: [
            {"PutRequest": {"Item": item("z", 1000, l=1, zz=pad)}}]})
    assert e.value.response["Error"]["Code"] == \
        "ItemCollectionSizeLimitExceededException"
    ddb.update_item(TableName=name, Key={"pk": S("z"), "sk": N(0)},
                    UpdateExpression="REMOVE zz")
    ddb.delete_item(TableName=name, Key={"pk": S("z"), "sk": N(1)})
    ddb.put_item(TableName=name, Item=item("z", n, l=1, zz=pad))
    # Another collection of the same table is not affected.
    ddb.put_item(TableName=name, Item=item("other", 1, l=1, zz=pad))
    converged_now(ddb, name, wait=0)


@pytest.mark.processes
def test_splits_moves_and_kill(cluster, ddb, unique):
    """Entries move and split with their collections: after a split, a
    move of each partition to another node and a kill -9 of a node,
    every index still equals the projection of its table, and consistent
    Queries of an LSI see every item."""
    name = "lsi_k_" + unique
    make_table(ddb, name)
    rng = random.Random(SEED + 2)
    want = {}
    for i in range(300):
        pk = "q%d" % (i % 25)
        it = item(pk, i, l=rng.randrange(1000), g="g%d" % (i % 4),
                  title="t%d" % i)
        ddb.put_item(TableName=name, Item=it)
        want.setdefault(pk, []).append(i)
    parts = cluster.table_map(name)
    cluster.admin("partition", "split", name, parts[0]["id"])
    for p in cluster.table_map(name)[:3]:
        dest = (p["node"] + 1) % len(cluster.nodes)
        cluster.admin("partition", "move", name, p["id"], dest)
    cluster.kill_node(1)
    cluster.start_node(1)
    for pk, sks in want.items():
        r = query_all(ddb, TableName=name, IndexName="by_l",
                      ConsistentRead=True, KeyConditionExpression="pk = :p",
                      ExpressionAttributeValues={":p": S(pk)})
        assert sorted(int(x["sk"]["N"]) for x in r) == sorted(sks)
        ls = [int(x["l"]["N"]) for x in r]
        assert ls == sorted(ls)
    assert ddb.scan(TableName=name, Select="COUNT",
                    ConsistentRead=True)["Count"] == 300
    converged_now(ddb, name, wait=20)


@pytest.mark.processes
def test_moves_under_writes(cluster, ddb, unique):
    """A partition moved while its items' index keys change: the writes
    made during the copy reach the new owner with their entries (a move
    catches up every key the write's batch changed), so afterwards each
    LSI equals the projection of its table at once."""
    import threading
    name = "lsi_mv_" + unique
    make_table(ddb, name, gsi=False)
    pad = "w" * 2000
    for i in range(400):
        ddb.put_item(TableName=name, Item=item("m%d" % (i % 40), i,
                                               l=i, s="s%d" % i, zz=pad))
    stop = threading.Event()
    errors = []

    def writer(w):
        c = cluster.client()
        r = random.Random(SEED + 10 + w)
        while not stop.is_set():
            i = r.randrange(400)
            try:
                c.update_item(TableName=name, Key={
                    "pk": S("m%d" % (i % 40)), "sk": N(i)},
                    UpdateExpression="SET l = :l, s = :s",
                    ExpressionAttributeValues={
                        ":l": N(r.randrange(10000)),
                        ":s": S("v%d" % r.randrange(10000))})
            except ClientError as e:
                # Throttles are expected (each write pays for its item
                # and two entries); nothing else is.
                if e.response["Error"]["Code"] != "ThrottlingException":
                    errors.append(e)
    threads = [threading.Thread(target=writer, args=(w,)) for w in range(2)]
    for t in threads:
        t.start()
    try:
        for rnd in range(4):
            for p in cluster.table_map(name):
                dest = (p["node"] + 1) % len(cluster.nodes)
                cluster.admin("partition", "move", name, p["id"], dest)
    finally:
        stop.set()
        for t in threads:
            t.join(30)
    assert not errors, errors[:3]
    res = indexes_check.converged(ddb, name, wait=0)
    assert all(not m and not e for m, e in res.values()), res


def test_transaction_meets_the_collection_limit(ddb, unique):
    """A transaction whose write would grow a collection past its limit
    is cancelled with ItemCollectionSizeLimitExceeded and applies
    nothing."""
    name = "lsi_t_" + unique
    make_table(ddb, name, gsi=False)
    pad = "q" * 3000
    n = 0
    while True:
        try:
            ddb.put_item(TableName=name, Item=item("t", n, l=n, zz=pad))
        except ClientError:
            break
        n += 1
    with pytest.raises(ClientError) as e:
        ddb.transact_write_items(TransactItems=[
            {"Put": {"TableName": name, "Item": item("other", 1, l=1)}},
            {"Put": {"TableName": name, "Item": item("t", 500, l=1, zz=pad)}}])
    r = e.value.response["CancellationReasons"]
    assert [x["Code"] for x in r] == ["None",
                                      "ItemCollectionSizeLimitExceeded"]
    assert r[1]["Message"] == "Collection size exceeded."
    assert "Item" not in ddb.get_item(TableName=name, ConsistentRead=True,
                                      Key={"pk": S("other"), "sk": N(1)})
    # Shrinking it in a transaction goes through, with the collections'
    # metrics when asked.
    r = ddb.transact_write_items(TransactItems=[
        {"Delete": {"TableName": name, "Key": {"pk": S("t"), "sk": N(0)}}},
        {"Put": {"TableName": name, "Item": item("other", 2, l=2)}}],
        ReturnItemCollectionMetrics="SIZE")
    got = r["ItemCollectionMetrics"][name]
    assert sorted(m["ItemCollectionKey"]["pk"]["S"] for m in got) == \
        ["other", "t"]
    assert all(m["SizeEstimateRangeGB"] == [0.0, 1.0] for m in got)
    converged_now(ddb, name, wait=0)
