"""test_gsi.py — global secondary indexes end to end through boto3: entries
that follow the base table's writes (puts, updates that move an item to
another index key, deletes, sparse items), projections, Query and Scan on
an index with paging, the refusals DynamoDB answers, a new index filled
while writes run, an index deleted, kills during a write load, and the
convergence check of ./kv check indexes (chaos/check/indexes.py): once
the outboxes drain, every index equals the projection of its base
table, entry for entry (shown to fail on planted differences).

Indexes are asynchronous, as in DynamoDB: a test waits for an index to
catch up (until_converged) rather than reading it at once.
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

SEED = 20261201

# Tombstones are collected every second (node/index.h), so that the kill
# and move tests below run with collection rounds among their faults.
CLUSTER_SETTINGS = ["gsi-collect-seconds 1"]


def S(x):
    return {"S": x}


def N(x):
    return {"N": str(x)}


def make_indexed(ddb, name, billing="PAY_PER_REQUEST"):
    """A table pk/sk with two GSIs: by_owner (owner, at) INCLUDE title,
    and by_tag (tag) KEYS_ONLY, sparse: only items with a tag."""
    gsis = [
        {"IndexName": "by_owner",
         "KeySchema": [{"AttributeName": "owner", "KeyType": "HASH"},
                       {"AttributeName": "at", "KeyType": "RANGE"}],
         "Projection": {"ProjectionType": "INCLUDE",
                        "NonKeyAttributes": ["title"]}},
        {"IndexName": "by_tag",
         "KeySchema": [{"AttributeName": "tag", "KeyType": "HASH"}],
         "Projection": {"ProjectionType": "KEYS_ONLY"}},
    ]
    kw = {}
    if billing == "PROVISIONED":
        # Enough for the tests' bursts on one index partition: an index
        # short of capacity holds its table's writes back (test_gsi_
        # pressure.py).
        kw["ProvisionedThroughput"] = {"ReadCapacityUnits": 1000,
                                       "WriteCapacityUnits": 1000}
        for g in gsis:
            g["ProvisionedThroughput"] = {"ReadCapacityUnits": 1000,
                                          "WriteCapacityUnits": 1000}
    ddb.create_table(
        TableName=name, BillingMode=billing,
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "N"},
            {"AttributeName": "owner", "AttributeType": "S"},
            {"AttributeName": "at", "AttributeType": "N"},
            {"AttributeName": "tag", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                   {"AttributeName": "sk", "KeyType": "RANGE"}],
        GlobalSecondaryIndexes=gsis, **kw)
    wait_active(ddb, name)


def wait_active(ddb, name, timeout=30):
    end = time.time() + timeout
    while time.time() < end:
        t = ddb.describe_table(TableName=name)["Table"]
        if t["TableStatus"] == "ACTIVE" and all(
                g.get("IndexStatus") == "ACTIVE"
                for g in t.get("GlobalSecondaryIndexes", [])):
            return t
        time.sleep(0.1)
    raise AssertionError("%s not ACTIVE in %d s" % (name, timeout))


def query_all(ddb, **kw):
    return indexes_check.read_all(ddb.query, **kw)


def until_converged(ddb, table, indexes=("by_owner", "by_tag"),
                    timeout=10, cluster=None):
    """The convergence check of ./kv check indexes (chaos/check/
    indexes.py), waiting up to timeout s for the outboxes to drain. With
    the cluster, a failure also shows each node's index counters (what
    was written, sent, dropped, applied, skipped; what waits)."""
    res = indexes_check.converged(ddb, table, list(indexes), wait=timeout)
    bad = [(i, len(m), len(e), m[:3], e[:3]) for i, (m, e) in res.items()
           if m or e]
    if bad and cluster is not None:
        # Still a failure; whether the entries were late or lost tells
        # where to look.
        counters = index_counters(cluster)
        t0 = time.monotonic()
        later = indexes_check.converged(ddb, table, list(indexes), wait=60)
        late = all(not m and not e for m, e in later.values())
        assert False, "indexes of %s did not converge in %d s (index, " \
            "missing, extra, first of each): %s%s\n%s" % (
                table, timeout, bad, counters,
                "they did %.0f s later" % (time.monotonic() - t0) if late
                else "nor 60 s later: %s" % [
                    (i, len(m), len(e)) for i, (m, e) in later.items()])
    assert not bad, "indexes of %s did not converge (index, missing, " \
        "extra, first of each): %s" % (table, bad)


def index_counters(cluster):
    """The nodes' kv_index_* lines of /metrics, for a failure's message."""
    if cluster is None:
        return ""
    out = []
    for url in cluster.node_metrics:
        try:
            for (name, labels), v in sorted(cluster.metrics(url).items()):
                if name.startswith("kv_index_") and v:
                    out.append("%s%s %g" % (name, dict(labels), v))
        except OSError as e:
            out.append("%s: %s" % (url, e))
    return "\n" + "\n".join(out)


def expected_index(base_items, index):
    """The entries by_owner (or by_tag) should hold, as the checker
    works them out from make_indexed's definitions."""
    table = {"KeySchema": [{"AttributeName": "pk"},
                           {"AttributeName": "sk"}]}
    defs = {
        "by_owner": {"KeySchema": [{"AttributeName": "owner"},
                                   {"AttributeName": "at"}],
                     "Projection": {"ProjectionType": "INCLUDE",
                                    "NonKeyAttributes": ["title"]}},
        "by_tag": {"KeySchema": [{"AttributeName": "tag"}],
                   "Projection": {"ProjectionType": "KEYS_ONLY"}},
    }
    return indexes_check.expected(table, defs[index], base_items)


canon = indexes_check.canon
scan_all = indexes_check.scan_all


def test_entries_follow_writes(ddb, unique):
    name = "gsi-" + unique
    make_indexed(ddb, name)
    ddb.put_item(TableName=name, Item={
        "pk": S("a"), "sk": N(1), "owner": S("ann"), "at": N(10),
        "title": S("first"), "body": S("x" * 50), "tag": S("red")})
    ddb.put_item(TableName=name, Item={
        "pk": S("a"), "sk": N(2), "owner": S("ann"), "at": N(5),
        "title": S("second")})
    ddb.put_item(TableName=name, Item={
        "pk": S("b"), "sk": N(1), "owner": S("bob"), "at": N(7)})
    until_converged(ddb, name)
    got = query_all(ddb, TableName=name, IndexName="by_owner",
                    KeyConditionExpression="#o = :o",
                    ExpressionAttributeNames={"#o": "owner"},
                    ExpressionAttributeValues={":o": S("ann")})
    # In index sort-key order, projected: keys and title, not body.
    assert [i["at"]["N"] for i in got] == ["5", "10"]
    assert got[1] == {"pk": S("a"), "sk": N(1), "owner": S("ann"),
                      "at": N(10), "title": S("first")}
    # An update that moves the item to another owner: out of ann's.
    ddb.update_item(TableName=name, Key={"pk": S("a"), "sk": N(1)},
                    UpdateExpression="SET #o = :o",
                    ExpressionAttributeNames={"#o": "owner"},
                    ExpressionAttributeValues={":o": S("bob")})
    # One that drops the tag: out of the sparse index.
    ddb.update_item(TableName=name, Key={"pk": S("a"), "sk": N(1)},
                    UpdateExpression="REMOVE tag")
    ddb.delete_item(TableName=name, Key={"pk": S("b"), "sk": N(1)})
    until_converged(ddb, name)
    bob = query_all(ddb, TableName=name, IndexName="by_owner",
                    KeyConditionExpression="#o = :o AND #a > :a",
                    ExpressionAttributeNames={"#o": "owner", "#a": "at"},
                    ExpressionAttributeValues={":o": S("bob"),
                                               ":a": N(0)})
    assert [(i["pk"]["S"], i["sk"]["N"]) for i in bob] == [("a", "1")]
    assert scan_all(ddb, TableName=name, IndexName="by_tag") == []


def test_random_writes_converge(ddb, unique):
    """Random puts, index-key updates and deletes over a small key space,
    then the convergence check on both indexes."""
    name = "gsirand-" + unique
    make_indexed(ddb, name)
    rnd = random.Random(SEED)
    owners = ["o%d" % i for i in range(6)]
    for step in range(400):
        pk, sk = "p%d" % rnd.randrange(12), rnd.randrange(4)
        key = {"pk": S(pk), "sk": N(sk)}
        op = rnd.random()
        if op < 0.5:
            item = dict(key)
            if rnd.random() < 0.8:
                item["owner"] = S(rnd.choice(owners))
            if rnd.random() < 0.8:
                item["at"] = N(rnd.randrange(50))
            if rnd.random() < 0.5:
                item["tag"] = S(rnd.choice(["red", "blue"]))
            if rnd.random() < 0.5:
                item["title"] = S("t%d" % step)
            ddb.put_item(TableName=name, Item=item)
        elif op < 0.85:
            ddb.update_item(
                TableName=name, Key=key,
                UpdateExpression="SET #o = :o, #a = :a",
                ExpressionAttributeNames={"#o": "owner", "#a": "at"},
                ExpressionAttributeValues={":o": S(rnd.choice(owners)),
                                           ":a": N(rnd.randrange(50))})
        else:
            ddb.delete_item(TableName=name, Key=key)
    until_converged(ddb, name)
    # Every owner's Query on the index agrees with the base table.
    base = scan_all(ddb, TableName=name)
    for o in owners:
        got = query_all(ddb, TableName=name, IndexName="by_owner",
                        KeyConditionExpression="#o = :o",
                        ExpressionAttributeNames={"#o": "owner"},
                        ExpressionAttributeValues={":o": S(o)}, Limit=3)
        want = [i for i in expected_index(base, "by_owner")
                if i["owner"]["S"] == o]
        assert canon(got) == canon(want), o
        ats = [int(i["at"]["N"]) for i in got]
        assert ats == sorted(ats)


def test_checker_catches_a_difference(ddb, unique):
    """The checker must fail when the base table holds an item its index
    lacks, or the index an entry the table does not: here it is given
    one base item more than the table has, then none."""
    name = "gsiplant-" + unique
    make_indexed(ddb, name)
    ddb.put_item(TableName=name, Item={
        "pk": S("a"), "sk": N(1), "owner": S("ann"), "at": N(1)})
    until_converged(ddb, name)
    base = scan_all(ddb, TableName=name)
    planted = base + [{"pk": S("z"), "sk": N(9), "owner": S("zed"),
                       "at": N(3)}]
    missing, extra = indexes_check.differences(ddb, name, "by_owner",
                                               planted)
    assert len(missing) == 1 and not extra
    # And when the index holds an entry the table does not.
    missing, extra = indexes_check.differences(ddb, name, "by_owner", [])
    assert not missing and len(extra) == 1


def test_index_paging_and_parallel_scan(ddb, unique):
    name = "gsipage-" + unique
    make_indexed(ddb, name, billing="PROVISIONED")
    for i in range(60):
        ddb.put_item(TableName=name, Item={
            "pk": S("p%d" % (i % 7)), "sk": N(i), "owner": S("same"),
            "at": N(i % 5), "tag": S("t%d" % (i % 3))})
    until_converged(ddb, name)
    # Equal index sort keys: paging by the full entry key loses none.
    pages = []
    kw = dict(TableName=name, IndexName="by_owner",
              KeyConditionExpression="#o = :o AND #a BETWEEN :x AND :y",
              ExpressionAttributeNames={"#o": "owner", "#a": "at"},
              ExpressionAttributeValues={":o": S("same"), ":x": N(1),
                                         ":y": N(3)},
              Limit=4, ScanIndexForward=False)
    start = None
    while True:
        if start:
            kw["ExclusiveStartKey"] = start
        page = ddb.query(**kw)
        pages.append(page["Items"])
        start = page.get("LastEvaluatedKey")
        if start:
            assert set(start) == {"pk", "sk", "owner", "at"}
        else:
            break
    got = [i for p in pages for i in p]
    assert len(got) == len({(i["pk"]["S"], i["sk"]["N"]) for i in got})
    assert len(got) == sum(1 for i in range(60) if 1 <= i % 5 <= 3)
    ats = [int(i["at"]["N"]) for i in got]
    assert ats == sorted(ats, reverse=True)
    # A parallel scan of the hash-only index covers it once.
    seen = []
    for seg in range(3):
        seen += scan_all(ddb, TableName=name, IndexName="by_tag",
                         Segment=seg, TotalSegments=3, Limit=7)
    assert len(seen) == 60
    assert len({(i["pk"]["S"], i["sk"]["N"]) for i in seen}) == 60
    assert all(set(i) == {"pk", "sk", "tag"} for i in seen)


def test_index_refusals(ddb, unique):
    name = "gsibad-" + unique
    make_indexed(ddb, name)

    def refused(fn, msg, **kw):
        with pytest.raises(ClientError) as e:
            fn(TableName=name, **kw)
        err = e.value.response["Error"]
        assert err["Code"] == "ValidationException"
        assert err["Message"] == msg

    refused(ddb.query, "Consistent reads are not supported on global "
            "secondary indexes", IndexName="by_tag",
            ConsistentRead=True, KeyConditionExpression="tag = :t",
            ExpressionAttributeValues={":t": S("x")})
    refused(ddb.scan, "Consistent reads are not supported on global "
            "secondary indexes", IndexName="by_tag", ConsistentRead=True)
    refused(ddb.query, "The table does not have the specified index: "
            "nope", IndexName="nope", KeyConditionExpression="pk = :p",
            ExpressionAttributeValues={":p": S("x")})
    refused(ddb.query, "Query condition missed key schema element: owner",
            IndexName="by_owner", KeyConditionExpression="pk = :p",
            ExpressionAttributeValues={":p": S("x")})
    # An index key of the wrong type is refused, and nothing is written.
    refused(ddb.put_item, "One or more parameter values were invalid: "
            "Type mismatch for Index Key owner Expected: S Actual: N "
            "IndexName: by_owner",
            Item={"pk": S("a"), "sk": N(1), "owner": N(3)})
    refused(ddb.update_item, "One or more parameter values were invalid: "
            "Type mismatch for Index Key at Expected: N Actual: S "
            "IndexName: by_owner", Key={"pk": S("a"), "sk": N(1)},
            UpdateExpression="SET #a = :a",
            ExpressionAttributeNames={"#a": "at"},
            ExpressionAttributeValues={":a": S("x")})
    # An index key past a key's size limit: 2048 bytes for a partition
    # key, 1024 for a sort key (by_owner's "at" is a Number, so the sort
    # key limit is shown on test_gsi_multikey.py's S sort attribute).
    refused(ddb.put_item, "One or more parameter values were invalid: "
            "Size limit exceeded for Index Key owner Actual Size: 2049 "
            "bytes Max Size: 2048 bytes IndexName: by_owner",
            Item={"pk": S("a"), "sk": N(1), "owner": S("o" * 2049)})
    # In a transaction, the same refusal cancels it (ValidationError)
    # and writes nothing.
    with pytest.raises(ClientError) as e:
        ddb.transact_write_items(TransactItems=[
            {"Put": {"TableName": name, "Item": {
                "pk": S("b"), "sk": N(1), "owner": S("x")}}},
            {"Put": {"TableName": name, "Item": {
                "pk": S("a"), "sk": N(1), "owner": N(3)}}}])
    reasons = e.value.response["CancellationReasons"]
    assert [r["Code"] for r in reasons] == ["None", "ValidationError"]
    assert reasons[1]["Message"] == "One or more parameter values were " \
        "invalid: Type mismatch for Index Key owner Expected: S Actual: " \
        "N IndexName: by_owner"
    for pk in ("a", "b"):
        assert "Item" not in ddb.get_item(TableName=name, Key={
            "pk": S(pk), "sk": N(1)}, ConsistentRead=True)
    # A start key without the base table's keys.
    refused(ddb.query, "The provided starting key is invalid: The "
            "provided key element does not match the schema",
            IndexName="by_tag", KeyConditionExpression="tag = :t",
            ExpressionAttributeValues={":t": S("x")},
            ExclusiveStartKey={"tag": S("x")})


def test_metrics_show_the_outbox(cluster, ddb, unique):
    name = "gsimetrics-" + unique
    make_indexed(ddb, name)
    ddb.put_item(TableName=name, Item={
        "pk": S("a"), "sk": N(1), "owner": S("ann"), "at": N(1)})
    until_converged(ddb, name)
    written = applied = 0.0
    for url in cluster.node_metrics:
        for (mname, labels), v in cluster.metrics(url).items():
            if mname == "kv_index_records_total":
                what = dict(labels).get("what")
                written += v if what == "written" else 0
                applied += v if what == "applied" else 0
    assert written >= 1 and applied >= 1


def thread_names(proc):
    """The names of a cluster process's threads."""
    task = "/proc/%d/task" % proc.p.pid
    names = set()
    for tid in os.listdir(task):
        try:
            with open(os.path.join(task, tid, "comm")) as f:
                names.add(f.read().strip())
        except OSError:
            pass  # a thread that has just ended
    return names


@pytest.mark.processes
def test_threads_carry_their_names(cluster, ddb, unique):
    """A node's and a router's threads are named (core/thread_name.h),
    so top -H shows the index replicator and the applies apart from the
    requests; unnamed, they would carry their creators' names."""
    cluster.require_processes()
    name = "gsithreads-" + unique
    make_indexed(ddb, name)
    for i in range(20):
        ddb.put_item(TableName=name, Item={
            "pk": S("t%d" % i), "sk": N(1), "owner": S("o%d" % i),
            "at": N(i)})
    until_converged(ddb, name)
    for i, node in enumerate(cluster.nodes):
        want = {"kv-conn", "kv-accept", "kv-gsi-repl", "kv-peer",
                "kv-survey"}
        if i == 0:
            want |= {"kv-gsi-collect", "kv-catalog"}  # node 0's alone
        missing = want - thread_names(node)
        assert not missing, (i, missing)
    for router in cluster.routers:
        missing = {"kv-http-loop", "kv-feed-sub"} - thread_names(router)
        assert not missing, missing


def replicator_rounds(cluster):
    """Each node's replicator rounds that sent records."""
    return dict((url, v) for url in cluster.node_metrics
                for (m, labels), v in cluster.metrics(url).items()
                if m == "kv_index_rounds_total")


@pytest.mark.processes
def test_rounds_are_spaced_while_writes_keep_coming(cluster, ddb, unique):
    """While writes keep coming, a node's replicator begins a round that
    sends at most every 10 ms (REPL_SPACING_MS), so that each apply call
    carries that many milliseconds of records. Without the spacing, every
    write's kick began a round of its own as soon as the last ended:
    many more calls, each carrying a few records, and more CPU per
    indexed write (design notes, "Apply calls over the frames")."""
    import threading
    cluster.require_processes()
    name = "gsirounds-" + unique
    make_indexed(ddb, name)
    before = replicator_rounds(cluster)
    t0 = time.monotonic()
    stop = t0 + 3.0
    writes = [0] * 8
    def writer(w):
        i = 0
        while time.monotonic() < stop:
            ddb.put_item(TableName=name, Item={
                "pk": S("r%d-%d" % (w, i % 50)), "sk": N(1),
                "owner": S("o%d" % (i % 7)), "at": N(i), "tag": S("t%d" % i)})
            i += 1
        writes[w] = i
    threads = [threading.Thread(target=writer, args=(w,)) for w in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - t0
    after = replicator_rounds(cluster)
    spent = dict((u, after[u] - before.get(u, 0)) for u in after)
    bound = elapsed / 0.010 + 20
    assert sum(spent.values()) > 0, spent
    assert all(v <= bound for v in spent.values()), (spent, bound,
                                                     sum(writes))
    until_converged(ddb, name)


def test_backfill_while_writes_run(ddb, unique):
    """An index added to a table with data: CREATING with Backfilling,
    then ACTIVE, with every item exactly once, while another thread
    keeps writing (puts that move items between owners, deletes)."""
    import threading
    name = "gsifill-" + unique
    ddb.create_table(
        TableName=name, BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "sk", "AttributeType": "N"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                   {"AttributeName": "sk", "KeyType": "RANGE"}])
    wait_active(ddb, name)
    rnd = random.Random(SEED + 1)
    for i in range(600):
        ddb.put_item(TableName=name, Item={
            "pk": S("p%d" % (i % 40)), "sk": N(i), "owner": S(
                "o%d" % rnd.randrange(8)), "at": N(rnd.randrange(100)),
            "title": S("t%d" % i)})
    stop = threading.Event()
    errors = []

    def writer():
        w = random.Random(SEED + 2)
        try:
            while not stop.is_set():
                i = w.randrange(700)
                key = {"pk": S("p%d" % (i % 40)), "sk": N(i)}
                if w.random() < 0.8:
                    ddb.put_item(TableName=name, Item=dict(
                        key, owner=S("o%d" % w.randrange(8)),
                        at=N(w.randrange(100)), title=S("w%d" % i)))
                else:
                    ddb.delete_item(TableName=name, Key=key)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    th = threading.Thread(target=writer)
    th.start()
    try:
        r = ddb.update_table(
            TableName=name,
            AttributeDefinitions=[
                {"AttributeName": "owner", "AttributeType": "S"},
                {"AttributeName": "at", "AttributeType": "N"}],
            GlobalSecondaryIndexUpdates=[{"Create": {
                "IndexName": "by_owner",
                "KeySchema": [{"AttributeName": "owner", "KeyType": "HASH"},
                              {"AttributeName": "at", "KeyType": "RANGE"}],
                "Projection": {"ProjectionType": "INCLUDE",
                               "NonKeyAttributes": ["title"]}}}])
        g = r["TableDescription"]["GlobalSecondaryIndexes"][0]
        assert g["IndexName"] == "by_owner"
        assert g["IndexStatus"] == "CREATING"
        wait_active(ddb, name, timeout=60)
    finally:
        stop.set()
        th.join()
    assert not errors, errors
    until_converged(ddb, name, indexes=("by_owner",))


def test_indexed_writes_do_not_cancel_transact_get_items(ddb, unique):
    """TransactGetItems of items nobody writes is not cancelled while
    indexed writes run on other items: their outboxes, trimmed many times
    a second, once moved on the write stamp of every item of the node,
    and a third of such reads ended in TransactionConflict (DynamoDB
    cancels one only for a write or transaction on its own items)."""
    import threading
    name, other = "gsitg-" + unique, "gsitgx-" + unique
    make_indexed(ddb, name)
    ddb.create_table(
        TableName=other, BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}])
    wait_active(ddb, other)
    for i in range(40):
        ddb.put_item(TableName=other, Item={"pk": S("k%d" % i), "v": N(i)})
    stop = threading.Event()
    errors, puts = [], [0]

    def writer(seed):
        w = random.Random(seed)
        try:
            while not stop.is_set():
                i = w.randrange(200)
                ddb.put_item(TableName=name, Item={
                    "pk": S("p%d" % (i % 20)), "sk": N(i),
                    "owner": S("o%d" % w.randrange(50)),
                    "at": N(w.randrange(1000)), "tag": S("t%d" % i)})
                puts[0] += 1
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    ths = [threading.Thread(target=writer, args=(SEED + 10 + k,))
           for k in range(3)]
    for th in ths:
        th.start()
    ok, cancelled = 0, []
    try:
        time.sleep(0.5)
        t0 = time.monotonic()
        while time.monotonic() - t0 < 4.0:
            try:
                r = ddb.transact_get_items(TransactItems=[
                    {"Get": {"TableName": other,
                             "Key": {"pk": S("k%d" % i)}}}
                    for i in range(0, 40, 4)])
                assert [x["Item"]["v"] for x in r["Responses"]] == [
                    N(i) for i in range(0, 40, 4)]
                ok += 1
            except ClientError as e:
                cancelled.append(e.response["Error"]["Code"])
    finally:
        stop.set()
        for th in ths:
            th.join()
    assert not errors, errors
    assert puts[0] > 100, "the writers wrote only %d items" % puts[0]
    assert ok > 20
    assert not cancelled, "%d of %d reads cancelled while %d indexed " \
        "puts ran: %s" % (len(cancelled), len(cancelled) + ok, puts[0],
                          cancelled[:3])
    until_converged(ddb, name)


def test_delete_index_while_writes_run(cluster, ddb, unique):
    """Deleting an index: its table goes, and the outboxes keep nothing
    for it."""
    name = "gsidel-" + unique
    make_indexed(ddb, name)
    for i in range(100):
        ddb.put_item(TableName=name, Item={
            "pk": S("p%d" % i), "sk": N(i), "owner": S("o"), "at": N(i),
            "tag": S("x")})
    ddb.update_table(TableName=name, GlobalSecondaryIndexUpdates=[
        {"Delete": {"IndexName": "by_tag"}}])
    # Listed as DELETING until its table is gone, as DynamoDB lists it
    # (unless the drop was quicker than this DescribeTable).
    t = ddb.describe_table(TableName=name)["Table"]
    st = dict((g["IndexName"], g["IndexStatus"])
              for g in t["GlobalSecondaryIndexes"])
    assert st.get("by_tag", "DELETING") == "DELETING"
    assert st["by_owner"] == "ACTIVE"
    for i in range(100):
        ddb.put_item(TableName=name, Item={
            "pk": S("p%d" % i), "sk": N(i), "owner": S("o"), "at": N(i),
            "tag": S("y")})
    end = time.time() + 30
    while time.time() < end:
        t = ddb.describe_table(TableName=name)["Table"]
        names = [g["IndexName"] for g in t.get("GlobalSecondaryIndexes", [])]
        if names == ["by_owner"] and t["TableStatus"] == "ACTIVE":
            break
        time.sleep(0.2)
    assert names == ["by_owner"]
    until_converged(ddb, name, indexes=("by_owner",))
    with pytest.raises(ClientError) as e:
        ddb.scan(TableName=name, IndexName="by_tag")
    assert "does not have the specified index" in \
        e.value.response["Error"]["Message"]
    end = time.time() + 10
    pending = None
    while time.time() < end:
        pending = sum(v for url in cluster.node_metrics
                      for (m, _), v in cluster.metrics(url).items()
                      if m == "kv_index_outbox_records")
        if pending == 0:
            break
        time.sleep(0.2)
    assert pending == 0


def run_writes_through(ddb, cluster, name, fault, seconds=4.0):
    """Random writes that move items between index keys, from two
    threads, while fault() runs in the middle; errors while a process
    is down are expected (the write's outcome is then unknown, and the
    check below reads the base table as it is)."""
    import threading
    stop = threading.Event()

    def writer(seed):
        w = random.Random(seed)
        c = cluster.client(attempts=1, read_timeout=3)
        while not stop.is_set():
            i = w.randrange(300)
            key = {"pk": S("p%d" % (i % 30)), "sk": N(i)}
            try:
                if w.random() < 0.85:
                    c.put_item(TableName=name, Item=dict(
                        key, owner=S("o%d" % w.randrange(6)),
                        at=N(w.randrange(50)), tag=S("t%d" % (i % 4))))
                else:
                    c.delete_item(TableName=name, Key=key)
            except Exception:  # noqa: BLE001 - outcome unknown, see above
                time.sleep(0.05)

    ths = [threading.Thread(target=writer, args=(SEED + k,))
           for k in range(2)]
    for th in ths:
        th.start()
    try:
        time.sleep(seconds / 2)
        fault()
        time.sleep(seconds / 2)
    finally:
        stop.set()
        for th in ths:
            th.join()


@pytest.mark.processes
@pytest.mark.parametrize("victim", ["node1", "node0", "router"])
def test_replication_survives_a_kill(cluster, ddb, unique, victim):
    """kill -9 of a node that holds base and index partitions (node 1;
    node 0, the catalog node, too) or of the router during a write load;
    after the restart and the drain, the indexes equal their table."""
    name = "gsikill-%s-%s" % (victim, unique)
    make_indexed(ddb, name)

    def fault():
        if victim == "router":
            cluster.kill_router(0)
            time.sleep(0.3)
            cluster.start_router(0)
        else:
            i = int(victim[-1])
            cluster.kill_node(i)
            time.sleep(0.5)
            cluster.start_node(i)

    run_writes_through(ddb, cluster, name, fault)
    until_converged(ddb, name, timeout=30, cluster=cluster)


def test_consumed_capacity_counts_index_writes(ddb, unique):
    """A write's ConsumedCapacity counts what it cost each index: TOTAL
    the sum, INDEXES the table's share and each index's (an entry added
    costs its projected size in 1 KB steps; a changed index key a delete
    and a put; an index the write does not change nothing)."""
    name = "gsicap-" + unique
    make_indexed(ddb, name)
    big = "x" * 1500  # in the table's item, not in either projection
    r = ddb.put_item(TableName=name, Item={
        "pk": S("a"), "sk": N(1), "owner": S("ann"), "at": N(1),
        "tag": S("red"), "body": S(big)}, ReturnConsumedCapacity="INDEXES")
    cc = r["ConsumedCapacity"]
    assert cc["Table"] == {"CapacityUnits": 2.0}
    assert cc["GlobalSecondaryIndexes"] == {
        "by_owner": {"CapacityUnits": 1.0}, "by_tag": {"CapacityUnits": 1.0}}
    assert cc["CapacityUnits"] == 4.0
    # The owner changes: by_owner pays a delete and a put; by_tag's
    # projection (keys only) is unchanged: nothing.
    r = ddb.update_item(TableName=name, Key={"pk": S("a"), "sk": N(1)},
                        UpdateExpression="SET #o = :o",
                        ExpressionAttributeNames={"#o": "owner"},
                        ExpressionAttributeValues={":o": S("bob")},
                        ReturnConsumedCapacity="INDEXES")
    cc = r["ConsumedCapacity"]
    assert cc["GlobalSecondaryIndexes"] == {
        "by_owner": {"CapacityUnits": 2.0}}
    assert cc["CapacityUnits"] == 4.0
    r = ddb.delete_item(TableName=name, Key={"pk": S("a"), "sk": N(1)},
                        ReturnConsumedCapacity="TOTAL")
    assert r["ConsumedCapacity"] == {"TableName": name,
                                     "CapacityUnits": 4.0}


def test_consumed_capacity_of_an_index_read(ddb, unique):
    name = "gsiread-" + unique
    make_indexed(ddb, name)
    ddb.put_item(TableName=name, Item={
        "pk": S("a"), "sk": N(1), "owner": S("ann"), "at": N(1)})
    until_converged(ddb, name)
    r = ddb.query(TableName=name, IndexName="by_owner",
                  KeyConditionExpression="#o = :o",
                  ExpressionAttributeNames={"#o": "owner"},
                  ExpressionAttributeValues={":o": S("ann")},
                  ReturnConsumedCapacity="INDEXES")
    assert r["ConsumedCapacity"] == {
        "TableName": name, "CapacityUnits": 0.5,
        "Table": {"CapacityUnits": 0.0},
        "GlobalSecondaryIndexes": {"by_owner": {"CapacityUnits": 0.5}}}
    r = ddb.scan(TableName=name, IndexName="by_tag",
                 ReturnConsumedCapacity="TOTAL")
    assert r["ConsumedCapacity"] == {"TableName": name,
                                     "CapacityUnits": 0.5}


@pytest.mark.processes
def test_replication_survives_moves_and_splits(cluster, ddb, unique):
    """While writes run: a base partition moves (its outbox stays on the
    old owner, the new owner's records outrank it by epoch), an index
    partition moves and another splits (records routed to the old owner
    are refused and sent again to the new one). The indexes end equal
    to their table."""
    name = "gsimove-" + unique
    make_indexed(ddb, name)

    def fault():
        base = cluster.table_map(name)[0]
        cluster.admin("partition", "move", name, base["id"],
                      (base["node"] + 1) % cluster.n_nodes)
        ix = cluster.table_map(name + "/by_owner")
        cluster.admin("partition", "move", name + "/by_owner", ix[0]["id"],
                      (ix[0]["node"] + 1) % cluster.n_nodes)
        cluster.admin("partition", "split", name + "/by_owner", ix[1]["id"])

    run_writes_through(ddb, cluster, name, fault, seconds=6.0)
    until_converged(ddb, name, timeout=30, cluster=cluster)
    assert len(cluster.table_map(name + "/by_owner")) == 5


def test_batch_write_counts_index_writes(ddb, unique):
    name = "gsibatch-" + unique
    make_indexed(ddb, name)
    r = ddb.batch_write_item(RequestItems={name: [
        {"PutRequest": {"Item": {"pk": S("a"), "sk": N(i),
                                 "owner": S("ann"), "at": N(i)}}}
        for i in range(3)]}, ReturnConsumedCapacity="INDEXES")
    assert r["UnprocessedItems"] == {}
    assert r["ConsumedCapacity"] == [{
        "TableName": name, "CapacityUnits": 6.0,
        "Table": {"CapacityUnits": 3.0},
        "GlobalSecondaryIndexes": {"by_owner": {"CapacityUnits": 3.0}}}]
    r = ddb.batch_get_item(RequestItems={name: {"Keys": [
        {"pk": S("a"), "sk": N(0)}]}}, ReturnConsumedCapacity="TOTAL")
    assert r["ConsumedCapacity"] == [{"TableName": name,
                                      "CapacityUnits": 0.5}]
