"""test_cluster.py — the cluster as processes: data survives a restart of
every process, a killed node takes only its own partitions down (with 5xx
answers, not hangs) and comes back, routers follow epoch changes, tables
are deleted and re-created, ListTables pages, DescribeTable shows the
table's lifecycle, and keys hash to the same partition across restarts.

Tests that kill or restart processes carry the `processes` mark: against
an external cluster (KV_ENDPOINT) leave them out with -m 'not processes'.
"""

import datetime
import re
import time
import uuid

import pytest
from botocore.exceptions import ClientError

from cluster import wait_until


def make_table(ddb, name, range_key=False, billing=None):
    defs = [{"AttributeName": "pk", "AttributeType": "S"}]
    ks = [{"AttributeName": "pk", "KeyType": "HASH"}]
    if range_key:
        defs.append({"AttributeName": "sk", "AttributeType": "N"})
        ks.append({"AttributeName": "sk", "KeyType": "RANGE"})
    r = ddb.create_table(TableName=name, AttributeDefinitions=defs,
                         KeySchema=ks,
                         **(billing or {"BillingMode": "PAY_PER_REQUEST"}))
    ddb.get_waiter("table_exists").wait(
        TableName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 20})
    return r["TableDescription"]


def item_of(i):
    """A varied item for key number i."""
    return {
        "pk": {"S": "item-%04d" % i},
        "n": {"N": str(i * 7 - 300)},
        "f": {"N": "%d.25" % i},
        "s": {"S": "value %d ✓" % i},
        "b": {"B": bytes([i % 256, 255 - i % 256, 0])},
        "l": {"L": [{"N": str(i)}, {"BOOL": i % 2 == 0}, {"NULL": True}]},
        "m": {"M": {"ss": {"SS": ["x%d" % i, "y"]}}},
    }


def counts(cluster, table):
    """{partition: item count} from kv-admin status."""
    return {p["part"]: p["items"] for p in cluster.table_partitions(table)}


def partition_of_each(cluster, ddb, table, keys):
    """Puts the keys one by one and watches which partition's item count
    grows: {key: partition}."""
    where = {}
    before = counts(cluster, table)
    for k in keys:
        ddb.put_item(TableName=table, Item={"pk": {"S": k}})
        after = counts(cluster, table)
        grown = [p for p in after if after[p] != before.get(p)]
        assert len(grown) == 1 and after[grown[0]] == before[grown[0]] + 1, (
            k, before, after)
        where[k] = grown[0]
        before = after
    return where


# ---- (a) restart persistence ----

@pytest.mark.processes
def test_items_survive_a_restart_of_every_process(cluster, ddb):
    cluster.require_processes()
    name = "persist-" + uuid.uuid4().hex[:8]
    make_table(ddb, name)
    for i in range(200):
        ddb.put_item(TableName=name, Item=item_of(i))
    size_before = ddb.describe_table(TableName=name)["Table"][
        "TableSizeBytes"]
    cluster.restart_all()
    assert cluster.forced_kills == [], "ignored SIGTERM: %s" % (
        cluster.forced_kills,)
    assert cluster.exits == [], "exited before the restart: %s" % (
        cluster.exits,)
    ddb = cluster.client()
    for i in range(200):
        got = ddb.get_item(TableName=name, Key={"pk": item_of(i)["pk"]},
                           ConsistentRead=True)
        assert got.get("Item") == item_of(i), i
    t = ddb.describe_table(TableName=name)["Table"]
    assert t["TableStatus"] == "ACTIVE"
    assert t["ItemCount"] == 200
    assert t["TableSizeBytes"] == size_before > 0
    assert sum(counts(cluster, name).values()) == 200


# ---- (b) a killed node ----

@pytest.mark.processes
def test_a_killed_node_fails_only_its_partitions_until_restarted(
        cluster, ddb):
    cluster.require_processes()
    name = "kill-" + uuid.uuid4().hex[:8]
    make_table(ddb, name)
    parts = cluster.table_partitions(name)
    owner = {p["part"]: p["node"] for p in parts}
    victim = next(p["node"] for p in parts if p["node"] != 0)
    keys = ["k%03d" % i for i in range(40)]
    where = partition_of_each(cluster, ddb, name, keys)
    down = [k for k in keys if owner[where[k]] == victim]
    up = [k for k in keys if owner[where[k]] != victim]
    assert down and up, "40 keys should reach both kinds of partition"

    cluster.kill_node(victim)
    try:
        for k in down[5:]:
            with pytest.raises(ClientError) as ei:
                ddb.get_item(TableName=name, Key={"pk": {"S": k}})
            assert ei.value.response["ResponseMetadata"][
                "HTTPStatusCode"] in (500, 503)
        for k in down[:5]:
            for call, kw in [
                    (ddb.get_item, {"Key": {"pk": {"S": k}}}),
                    (ddb.put_item, {"Item": {"pk": {"S": k},
                                             "v": {"S": "lost"}}}),
                    (ddb.delete_item, {"Key": {"pk": {"S": k}}})]:
                start = time.monotonic()
                with pytest.raises(ClientError) as ei:
                    call(TableName=name, **kw)
                took = time.monotonic() - start
                r = ei.value.response
                assert r["ResponseMetadata"]["HTTPStatusCode"] in (
                    500, 503), r
                assert r["Error"]["Code"] in (
                    "ServiceUnavailable", "InternalServerError"), r
                # A router that connected less than 3 s ago waits its
                # whole 5 s call deadline; an older one gives up at once.
                assert took < 7.0, "%s took %.1fs" % (call.__name__, took)
        for k in up:
            got = ddb.get_item(TableName=name, Key={"pk": {"S": k}})
            assert got["Item"] == {"pk": {"S": k}}
            ddb.put_item(TableName=name, Item={"pk": {"S": k},
                                               "v": {"S": "while-down"}})
        # The control plane still answers (node 0 holds the catalog).
        assert name in ddb.list_tables()["TableNames"]
    finally:
        cluster.start_node(victim)

    def all_readable():
        for k in down:
            ddb.get_item(TableName=name, Key={"pk": {"S": k}})
        return True
    wait_until(all_readable, 10, 0.1, "the restarted node to serve")
    for k in down:
        # The refused writes did not happen; the old items are there.
        got = ddb.get_item(TableName=name, Key={"pk": {"S": k}})
        assert got["Item"] == {"pk": {"S": k}}, k
        ddb.put_item(TableName=name, Item={"pk": {"S": k},
                                           "v": {"S": "after"}})
        assert ddb.get_item(TableName=name, Key={"pk": {"S": k}})[
            "Item"]["v"] == {"S": "after"}
    for k in up:
        assert ddb.get_item(TableName=name, Key={"pk": {"S": k}})[
            "Item"]["v"] == {"S": "while-down"}
    assert ddb.describe_table(TableName=name)["Table"]["ItemCount"] == 40


# ---- (c) stale epochs ----

@pytest.mark.processes
def test_requests_succeed_across_epoch_bumps(cluster, ddb):
    name = "epoch-" + uuid.uuid4().hex[:8]
    make_table(ddb, name, range_key=True)
    items = [{"pk": {"S": "e%02d" % i}, "sk": {"N": str(i)},
              "v": {"N": "0"}} for i in range(32)]
    for it in items:
        ddb.put_item(TableName=name, Item=it)
    before = {p["part"]: p["epoch"] for p in cluster.table_partitions(name)}
    bumps = {0: 3, 1: 1, 2: 2, 3: 1}
    for rnd in range(3):
        for part, times in bumps.items():
            if rnd >= times:
                continue
            out = cluster.admin("bump-epoch", name, part)
            want = before[part] + rnd + 1
            assert out.strip() == "%s partition %d: epoch %d" % (
                name, part, want), out
            # Let the owner hear of the new epoch while the router's
            # snapshot (refreshed once a second) may still be the old one.
            time.sleep(0.05)
            for it in items:
                key = {"pk": it["pk"], "sk": it["sk"]}
                it["v"] = {"N": str(rnd * 10 + part)}
                ddb.put_item(TableName=name, Item=it)
                assert ddb.get_item(TableName=name, Key=key)["Item"] == it
    after = {p["part"]: p["epoch"] for p in cluster.table_partitions(name)}
    assert after == {p: before[p] + bumps[p] for p in before}
    # The owners hold the catalog's epochs (they were told, and refuse the
    # old ones, which is what made the router refresh and retry above).
    deadline = time.time() + 5
    while True:
        parts = cluster.table_partitions(name)
        if all(p["owner_epoch"] == p["epoch"] for p in parts):
            break
        assert time.time() < deadline, parts
        time.sleep(0.05)
    assert ddb.describe_table(TableName=name)["Table"]["ItemCount"] == 32


@pytest.mark.processes
def test_bump_epoch_of_unknown_table_or_partition_fails(cluster, ddb):
    name = "epoch2-" + uuid.uuid4().hex[:8]
    make_table(ddb, name)
    out = cluster.admin("bump-epoch", "no-such-table-x", 0, check=False)
    assert out == ""
    with pytest.raises(AssertionError, match="bump-epoch failed"):
        cluster.admin("bump-epoch", "no-such-table-x", 0)
    with pytest.raises(AssertionError, match="bump-epoch failed"):
        cluster.admin("bump-epoch", name, 99)
    # The failed bumps changed nothing.
    assert [p["epoch"] for p in cluster.table_partitions(name)] == [1] * 4


# ---- (d) delete and re-create ----

def test_deleted_table_disappears_and_comes_back_empty(cluster, ddb):
    name = "delete-" + uuid.uuid4().hex[:8]
    first = make_table(ddb, name)
    for i in range(10):
        ddb.put_item(TableName=name, Item={"pk": {"S": "d%d" % i}})
    d = ddb.delete_table(TableName=name)["TableDescription"]
    assert d["TableName"] == name
    assert d["TableStatus"] == "DELETING"

    def gone():
        return name not in ddb.list_tables(Limit=100)["TableNames"]
    wait_until(gone, 5, 0.1, "%s to leave ListTables" % name)
    with pytest.raises(ClientError) as ei:
        ddb.describe_table(TableName=name)
    assert ei.value.response["Error"]["Code"] == "ResourceNotFoundException"
    with pytest.raises(ClientError) as ei:
        ddb.get_item(TableName=name, Key={"pk": {"S": "d0"}})
    assert ei.value.response["Error"]["Code"] == "ResourceNotFoundException"
    if cluster.config is not None:
        assert name not in cluster.status()["tables"]

    second = make_table(ddb, name)
    assert second["TableId"] != first["TableId"]
    for i in range(10):
        got = ddb.get_item(TableName=name, Key={"pk": {"S": "d%d" % i}},
                           ConsistentRead=True)
        assert "Item" not in got, got
    t = ddb.describe_table(TableName=name)["Table"]
    assert (t["ItemCount"], t["TableSizeBytes"]) == (0, 0)
    ddb.put_item(TableName=name, Item={"pk": {"S": "new"}})
    assert ddb.describe_table(TableName=name)["Table"]["ItemCount"] == 1


def test_deleting_a_table_twice(cluster, ddb):
    name = "delete2-" + uuid.uuid4().hex[:8]
    make_table(ddb, name)
    ddb.delete_table(TableName=name)
    # Either still DELETING (ResourceInUse) or already gone (NotFound).
    with pytest.raises(ClientError) as ei:
        ddb.delete_table(TableName=name)
    r = ei.value.response
    assert r["ResponseMetadata"]["HTTPStatusCode"] == 400
    if r["Error"]["Code"] == "ResourceInUseException":
        assert r["Error"]["Message"] == (
            "Attempt to change a resource which is still in use: Table is "
            "being deleted: %s" % name)
    else:
        assert r["Error"] == {
            "Code": "ResourceNotFoundException",
            "Message": "Requested resource not found: Table: %s not found"
            % name}


# ---- (e) ListTables pages ----

def test_list_tables_pages_with_limit_and_exclusive_start(cluster, ddb):
    prefix = "page-%s-" % uuid.uuid4().hex[:8]
    names = [prefix + c for c in "0123456"]
    for n in reversed(names):
        ddb.create_table(
            TableName=n,
            AttributeDefinitions=[{"AttributeName": "pk",
                                   "AttributeType": "S"}],
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            BillingMode="PAY_PER_REQUEST")
    for limit in (1, 2, 3, 7):
        seen, start, pages = [], prefix, 0
        while True:
            r = ddb.list_tables(Limit=limit, ExclusiveStartTableName=start)
            pages += 1
            page = r["TableNames"]
            assert len(page) <= limit
            mine = [n for n in page if n.startswith(prefix)]
            seen += mine
            if len(mine) < len(page) or "LastEvaluatedTableName" not in r:
                break
            assert r["LastEvaluatedTableName"] == page[-1]
            start = r["LastEvaluatedTableName"]
        assert seen == names, (limit, seen)
        assert pages >= -(-7 // limit)
    r = ddb.list_tables(Limit=2, ExclusiveStartTableName=names[4])
    assert r["TableNames"][:2] == names[5:7]
    # boto3's paginator follows LastEvaluatedTableName.
    pager = ddb.get_paginator("list_tables")
    listed = []
    for page in pager.paginate(PaginationConfig={"PageSize": 2}):
        listed += page["TableNames"]
    assert [n for n in listed if n.startswith(prefix)] == names
    assert listed == sorted(listed)
    assert listed == ddb.list_tables()["TableNames"] or len(listed) > 100


def test_list_tables_limit_is_checked(cluster, raw_ddb):
    for limit, bound in [(0, "greater than or equal to 1"),
                         (101, "less than or equal to 100")]:
        with pytest.raises(ClientError) as ei:
            raw_ddb.list_tables(Limit=limit)
        assert ei.value.response["Error"] == {
            "Code": "ValidationException",
            "Message": "1 validation error detected: Value '%d' at 'limit' "
                       "failed to satisfy constraint: Member must have "
                       "value %s" % (limit, bound)}


# ---- (f) DescribeTable through the lifecycle ----

UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}"
                     r"-[0-9a-f]{12}$")


def test_describe_table_right_after_create(cluster, ddb):
    name = "describe-" + uuid.uuid4().hex[:8]
    created = ddb.create_table(
        TableName=name,
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "sk", "AttributeType": "N"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                   {"AttributeName": "sk", "KeyType": "RANGE"}],
        BillingMode="PROVISIONED",
        ProvisionedThroughput={"ReadCapacityUnits": 3,
                               "WriteCapacityUnits": 4})["TableDescription"]
    t = ddb.describe_table(TableName=name)["Table"]
    assert t["TableStatus"] in ("CREATING", "ACTIVE")
    statuses = {t["TableStatus"]}

    def active():
        s = ddb.describe_table(TableName=name)["Table"]
        statuses.add(s["TableStatus"])
        return s if s["TableStatus"] == "ACTIVE" else None
    t = wait_until(active, 5, 0.05, "%s to become ACTIVE" % name)
    assert statuses <= {"CREATING", "ACTIVE"}
    assert t["TableName"] == name
    assert t["TableArn"] == \
        "arn:aws:dynamodb:us-east-1:000000000000:table/" + name
    assert UUID_RE.match(t["TableId"]), t["TableId"]
    assert t["TableId"] == created["TableId"]
    assert t["BillingModeSummary"]["BillingMode"] == "PROVISIONED"
    pt = t["ProvisionedThroughput"]
    assert (pt["ReadCapacityUnits"], pt["WriteCapacityUnits"],
            pt["NumberOfDecreasesToday"]) == (3, 4, 0)
    assert isinstance(t["CreationDateTime"], datetime.datetime)
    age = (datetime.datetime.now(datetime.timezone.utc) -
           t["CreationDateTime"]).total_seconds()
    assert -5 < age < 60, age
    assert (t["ItemCount"], t["TableSizeBytes"]) == (0, 0)
    assert t["KeySchema"] == [{"AttributeName": "pk", "KeyType": "HASH"},
                              {"AttributeName": "sk", "KeyType": "RANGE"}]

    ondemand = "describe-od-" + uuid.uuid4().hex[:8]
    make_table(ddb, ondemand)
    t = ddb.describe_table(TableName=ondemand)["Table"]
    assert t["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    pt = t["ProvisionedThroughput"]
    assert (pt["ReadCapacityUnits"], pt["WriteCapacityUnits"]) == (0, 0)
    assert t["TableId"] != created["TableId"]


# ---- (g) hash routing is stable ----

@pytest.mark.processes
def test_keys_stay_in_their_partitions_across_restarts(cluster, ddb):
    cluster.require_processes()
    name = "route-" + uuid.uuid4().hex[:8]
    make_table(ddb, name)
    keys = ["r%02d" % i for i in range(24)]
    where = partition_of_each(cluster, ddb, name, keys)
    assert len(set(where.values())) > 1, "24 keys in one partition: %r" % (
        where,)
    by_part = counts(cluster, name)

    cluster.restart_all()
    ddb = cluster.client()
    assert counts(cluster, name) == by_part
    # Deleting each key lowers the count of the partition it went to.
    before = by_part
    for k in keys:
        r = ddb.delete_item(TableName=name, Key={"pk": {"S": k}},
                            ReturnValues="ALL_OLD")
        assert r["Attributes"] == {"pk": {"S": k}}
        after = counts(cluster, name)
        assert after[where[k]] == before[where[k]] - 1, (k, before, after)
        before = after
    assert sum(before.values()) == 0
    # A new table after the restart hashes the same keys the same way.
    other = "route2-" + uuid.uuid4().hex[:8]
    make_table(ddb, other)
    assert partition_of_each(cluster, ddb, other, keys) == where
