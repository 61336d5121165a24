"""test_transactions.py — TransactWriteItems and TransactGetItems through
boto3 (router/ops/ops_txn.c, node/txn.h): two-phase commit across nodes.

Tried here: seed 004's order example exactly (a repeat cancelled with
[ConditionalCheckFailed, None, None], stock taken once; 500 units against
181 cancelled with [None, None, ConditionalCheckFailed] and no order
item); the API's refusals; ReturnValuesOnConditionCheckFailure;
ConsumedCapacity (two units per item unit); conflicts between
transactions and single writes (TransactionConflictException) counted;
ClientRequestToken (a repeat applies nothing, other parameters are
refused, the token survives a node's restart); a bank of accounts on
every node with concurrent transfers while TransactGetItems snapshots
always sum to the total; and a coordinator that dies after prepare and
after the decision (router --txn-fault): the items end committed on every
node or on none, and unlocked within the participants' timeout.
"""

import threading
import time

import pytest
from botocore.exceptions import ClientError


def S(x):
    return {"S": x}


def N(x):
    return {"N": str(x)}


def make_table(ddb, name, sort=True):
    attrs = [{"AttributeName": "PK", "AttributeType": "S"}]
    keys = [{"AttributeName": "PK", "KeyType": "HASH"}]
    if sort:
        attrs.append({"AttributeName": "SK", "AttributeType": "S"})
        keys.append({"AttributeName": "SK", "KeyType": "RANGE"})
    ddb.create_table(TableName=name, AttributeDefinitions=attrs,
                     KeySchema=keys, BillingMode="PAY_PER_REQUEST")
    ddb.get_waiter("table_exists").wait(
        TableName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 30})


def reasons(e):
    return [r["Code"] for r in e.response["CancellationReasons"]]


def place_order(ddb, table, order, qty):
    return ddb.transact_write_items(TransactItems=[
        {"Put": {"TableName": table,
                 "Item": {"PK": S("ORDER#" + order), "SK": S("META"),
                          "status": S("PLACED")},
                 "ConditionExpression": "attribute_not_exists(PK)"}},
        {"Put": {"TableName": table,
                 "Item": {"PK": S("ORDER#" + order), "SK": S("ITEM#01"),
                          "product": S("PROD#1"), "qty": N(qty)}}},
        {"Update": {"TableName": table,
                    "Key": {"PK": S("PROD#1"), "SK": S("STOCK")},
                    "UpdateExpression": "SET quantity = quantity - :q",
                    "ConditionExpression": "quantity >= :q",
                    "ExpressionAttributeValues": {":q": N(qty)}}},
    ])


def stock(ddb, table):
    return int(ddb.get_item(TableName=table, ConsistentRead=True, Key={
        "PK": S("PROD#1"), "SK": S("STOCK")})["Item"]["quantity"]["N"])


def test_seed_order_example(ddb, unique):
    t = "shop_" + unique
    make_table(ddb, t)
    ddb.put_item(TableName=t, Item={"PK": S("PROD#1"), "SK": S("STOCK"),
                                    "quantity": N(181)})
    place_order(ddb, t, "1001", 2)
    assert stock(ddb, t) == 179
    with pytest.raises(ClientError) as e:
        place_order(ddb, t, "1001", 2)
    err = e.value.response
    assert err["Error"]["Code"] == "TransactionCanceledException"
    assert err["Error"]["Message"] == (
        "Transaction cancelled, please refer cancellation reasons for "
        "specific reasons [ConditionalCheckFailed, None, None]")
    assert reasons(e.value) == ["ConditionalCheckFailed", "None", "None"]
    assert e.value.response["CancellationReasons"][0]["Message"] == \
        "The conditional request failed"
    assert stock(ddb, t) == 179  # taken once, not twice
    with pytest.raises(ClientError) as e:
        place_order(ddb, t, "1002", 500)
    assert reasons(e.value) == ["None", "None", "ConditionalCheckFailed"]
    assert "Item" not in ddb.get_item(TableName=t, ConsistentRead=True, Key={
        "PK": S("ORDER#1002"), "SK": S("ITEM#01")})
    assert "Item" not in ddb.get_item(TableName=t, ConsistentRead=True, Key={
        "PK": S("ORDER#1002"), "SK": S("META")})
    assert stock(ddb, t) == 179


def test_refusals(ddb, raw_ddb, unique):
    t = "txv_" + unique
    make_table(ddb, t)
    key = {"PK": S("a"), "SK": S("1")}
    with pytest.raises(ClientError) as e:
        raw_ddb.transact_write_items(TransactItems=[
            {"Put": {"TableName": t, "Item": dict(key, v=N(1))}},
            {"Delete": {"TableName": t, "Key": key}}])
    assert e.value.response["Error"]["Message"] == (
        "Transaction request cannot include multiple operations on one "
        "item")
    with pytest.raises(ClientError) as e:
        raw_ddb.transact_write_items(TransactItems=[
            {"Put": {"TableName": t, "Item": {"PK": S("x"), "SK": S(str(i))}}}
            for i in range(101)])
    msg = e.value.response["Error"]["Message"]
    assert "transactItems" in msg and "100" in msg
    with pytest.raises(ClientError) as e:
        raw_ddb.transact_write_items(TransactItems=[])
    assert e.value.response["Error"]["Code"] == "ValidationException"
    with pytest.raises(ClientError) as e:
        raw_ddb.transact_write_items(TransactItems=[
            {"Put": {"TableName": t, "Item": dict(key)},
             "Delete": {"TableName": t, "Key": key}}])
    assert e.value.response["Error"]["Code"] == "ValidationException"
    with pytest.raises(ClientError) as e:
        raw_ddb.transact_write_items(TransactItems=[
            {"ConditionCheck": {"TableName": t, "Key": key}}])
    assert "conditionExpression" in e.value.response["Error"]["Message"]
    with pytest.raises(ClientError) as e:
        raw_ddb.transact_write_items(TransactItems=[
            {"Put": {"TableName": "nope_" + unique, "Item": dict(key)}}])
    assert e.value.response["Error"]["Code"] == "ResourceNotFoundException"
    with pytest.raises(ClientError) as e:
        raw_ddb.transact_get_items(TransactItems=[
            {"Get": {"TableName": t, "Key": key}},
            {"Get": {"TableName": t, "Key": key}}])
    assert "multiple operations on one item" in \
        e.value.response["Error"]["Message"]
    # A key of the wrong shape: the single-item message.
    with pytest.raises(ClientError) as e:
        raw_ddb.transact_write_items(TransactItems=[
            {"Delete": {"TableName": t, "Key": {"PK": S("a")}}}])
    assert e.value.response["Error"]["Code"] == "ValidationException"
    # A validation error found on the node is a cancellation reason.
    ddb.put_item(TableName=t, Item=dict(key, n=S("text")))
    with pytest.raises(ClientError) as e:
        ddb.transact_write_items(TransactItems=[
            {"Update": {"TableName": t, "Key": key,
                        "UpdateExpression": "SET n = n + :one",
                        "ExpressionAttributeValues": {":one": N(1)}}}])
    assert reasons(e.value) == ["ValidationError"]


def test_checks_and_returned_items(ddb, unique):
    t = "txc_" + unique
    make_table(ddb, t)
    ddb.put_item(TableName=t, Item={"PK": S("acct"), "SK": S("1"),
                                    "balance": N(10)})
    with pytest.raises(ClientError) as e:
        ddb.transact_write_items(TransactItems=[
            {"ConditionCheck": {
                "TableName": t, "Key": {"PK": S("acct"), "SK": S("1")},
                "ConditionExpression": "balance >= :x",
                "ExpressionAttributeValues": {":x": N(50)},
                "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}},
            {"Put": {"TableName": t, "Item": {"PK": S("p"), "SK": S("1")}}}])
    r = e.value.response["CancellationReasons"]
    assert r[0]["Code"] == "ConditionalCheckFailed"
    assert r[0]["Item"] == {"PK": S("acct"), "SK": S("1"), "balance": N(10)}
    assert r[1] == {"Code": "None"}
    assert "Item" not in ddb.get_item(TableName=t, Key={
        "PK": S("p"), "SK": S("1")}, ConsistentRead=True)
    out = ddb.transact_write_items(TransactItems=[
        {"ConditionCheck": {
            "TableName": t, "Key": {"PK": S("acct"), "SK": S("1")},
            "ConditionExpression": "balance >= :x",
            "ExpressionAttributeValues": {":x": N(5)}}},
        {"Put": {"TableName": t, "Item": {"PK": S("p"), "SK": S("1"),
                                           "x": S("y" * 1500)}}}],
        ReturnConsumedCapacity="TOTAL")
    # Two write units per item unit: the check (1 KB) and the 2 KB put.
    assert out["ConsumedCapacity"] == [{"TableName": t,
                                        "CapacityUnits": 6.0}]
    got = ddb.transact_get_items(TransactItems=[
        {"Get": {"TableName": t, "Key": {"PK": S("acct"), "SK": S("1")}}},
        {"Get": {"TableName": t, "Key": {"PK": S("none"), "SK": S("1")}}},
        {"Get": {"TableName": t, "Key": {"PK": S("p"), "SK": S("1")},
                 "ProjectionExpression": "PK"}}],
        ReturnConsumedCapacity="TOTAL")
    assert got["Responses"] == [
        {"Item": {"PK": S("acct"), "SK": S("1"), "balance": N(10)}}, {},
        {"Item": {"PK": S("p")}}]
    assert got["ConsumedCapacity"][0]["CapacityUnits"] == 6.0


def test_reads_of_one_collection(ddb, unique):
    """Items of one collection live on one node, which checks its own
    reads, so the answer comes after one round: the items as written,
    a missing one empty, the costs of a transactional read."""
    t = "txr_" + unique
    make_table(ddb, t)
    for sk in ("1", "2", "3"):
        ddb.put_item(TableName=t, Item={"PK": S("c"), "SK": S(sk),
                                        "v": N(int(sk) * 10)})
    got = ddb.transact_get_items(TransactItems=[
        {"Get": {"TableName": t, "Key": {"PK": S("c"), "SK": S(sk)}}}
        for sk in ("3", "1", "9", "2")], ReturnConsumedCapacity="TOTAL")
    assert got["Responses"] == [
        {"Item": {"PK": S("c"), "SK": S("3"), "v": N(30)}},
        {"Item": {"PK": S("c"), "SK": S("1"), "v": N(10)}}, {},
        {"Item": {"PK": S("c"), "SK": S("2"), "v": N(20)}}]
    assert got["ConsumedCapacity"][0]["CapacityUnits"] == 8.0


def test_idempotent_token(cluster, ddb, unique):
    t = "txi_" + unique
    make_table(ddb, t)
    ddb.put_item(TableName=t, Item={"PK": S("c"), "SK": S("1"), "n": N(0)})
    items = [{"Update": {"TableName": t,
                         "Key": {"PK": S("c"), "SK": S("1")},
                         "UpdateExpression": "ADD n :one",
                         "ExpressionAttributeValues": {":one": N(1)}}}]
    ddb.transact_write_items(TransactItems=items, ClientRequestToken="tok-1")
    r = ddb.transact_write_items(TransactItems=items,
                                 ClientRequestToken="tok-1",
                                 ReturnConsumedCapacity="TOTAL")
    assert r["ConsumedCapacity"][0]["TableName"] == t
    n = ddb.get_item(TableName=t, Key={"PK": S("c"), "SK": S("1")},
                     ConsistentRead=True)["Item"]["n"]
    assert n == N(1)  # applied once
    other = [dict(items[0])]
    other[0] = {"Update": dict(items[0]["Update"],
                               ExpressionAttributeValues={":one": N(2)})}
    with pytest.raises(ClientError) as e:
        ddb.transact_write_items(TransactItems=other,
                                 ClientRequestToken="tok-1")
    assert e.value.response["Error"]["Code"] == \
        "IdempotentParameterMismatchException"
    # Tokens survive a restart of every node.
    for i in range(len(cluster.nodes)):
        cluster.kill_node(i)
        cluster.start_node(i)
    ddb.transact_write_items(TransactItems=items, ClientRequestToken="tok-1")
    n = ddb.get_item(TableName=t, Key={"PK": S("c"), "SK": S("1")},
                     ConsistentRead=True)["Item"]["n"]
    assert n == N(1)


ACCOUNTS = 12
START = 100


def bank_setup(ddb, t):
    make_table(ddb, t, sort=False)
    for i in range(ACCOUNTS):
        ddb.put_item(TableName=t, Item={"PK": S("acct%02d" % i),
                                        "balance": N(START)})


def transfer(c, t, a, b, amount):
    c.transact_write_items(TransactItems=[
        {"Update": {"TableName": t, "Key": {"PK": S("acct%02d" % a)},
                    "UpdateExpression": "SET balance = balance - :x",
                    "ConditionExpression": "balance >= :x",
                    "ExpressionAttributeValues": {":x": N(amount)}}},
        {"Update": {"TableName": t, "Key": {"PK": S("acct%02d" % b)},
                    "UpdateExpression": "SET balance = balance + :x",
                    "ExpressionAttributeValues": {":x": N(amount)}}}])


def snapshot(c, t):
    r = c.transact_get_items(TransactItems=[
        {"Get": {"TableName": t, "Key": {"PK": S("acct%02d" % i)}}}
        for i in range(ACCOUNTS)])
    return sum(int(x["Item"]["balance"]["N"]) for x in r["Responses"])


def test_bank(cluster, ddb, unique):
    """Concurrent transfers between accounts spread over every node, with
    single writes on the same accounts, while TransactGetItems snapshots
    run: every snapshot and the final Scan sum to the total."""
    import random
    t = "bank_" + unique
    bank_setup(ddb, t)
    stop = threading.Event()
    counts = {"ok": 0, "canceled": 0, "conflict": 0, "single_conflict": 0,
              "snapshots": 0, "snap_canceled": 0}
    bad, errors = [], []
    lock = threading.Lock()

    def bump(k):
        with lock:
            counts[k] += 1

    def mover(seed):
        c = cluster.client()
        r = random.Random(seed)
        while not stop.is_set():
            a, b = r.sample(range(ACCOUNTS), 2)
            try:
                transfer(c, t, a, b, r.randrange(1, 30))
                bump("ok")
            except ClientError as e:
                code = e.response["Error"]["Code"]
                if code != "TransactionCanceledException":
                    errors.append(repr(e))
                    return
                bump("conflict" if "TransactionConflict" in reasons(e)
                     else "canceled")

    def toucher(seed):
        # Single writes that change nothing: they must meet prepared
        # transactions now and then, and never break the sum.
        c = cluster.client()
        r = random.Random(seed)
        while not stop.is_set():
            try:
                c.update_item(TableName=t, Key={
                    "PK": S("acct%02d" % r.randrange(ACCOUNTS))},
                    UpdateExpression="SET touched = :t",
                    ExpressionAttributeValues={":t": N(1)})
            except ClientError as e:
                if e.response["Error"]["Code"] != \
                        "TransactionConflictException":
                    errors.append(repr(e))
                    return
                bump("single_conflict")

    def reader():
        c = cluster.client()
        while not stop.is_set():
            try:
                s = snapshot(c, t)
                bump("snapshots")
                if s != ACCOUNTS * START:
                    bad.append(s)
            except ClientError as e:
                if e.response["Error"]["Code"] != \
                        "TransactionCanceledException":
                    errors.append(repr(e))
                    return
                bump("snap_canceled")

    threads = [threading.Thread(target=mover, args=(i,)) for i in range(4)]
    threads += [threading.Thread(target=toucher, args=(9,)),
                threading.Thread(target=reader)]
    for th in threads:
        th.start()
    time.sleep(8)
    stop.set()
    for th in threads:
        th.join(30)
    print("bank: %r" % counts)
    assert not errors, errors[:3]
    assert not bad, bad[:5]
    assert counts["ok"] > 50 and counts["snapshots"] > 5, counts
    assert counts["conflict"] + counts["single_conflict"] > 0, counts
    items = ddb.scan(TableName=t, ConsistentRead=True)["Items"]
    assert sum(int(i["balance"]["N"]) for i in items) == ACCOUNTS * START


def restart_router_with(cluster, extra):
    cluster.kill_router(0)
    r = cluster.routers[0]
    base = [a for a in r.argv if a not in ("--txn-fault", "prepared",
                                           "decided")]
    r.argv[:] = base + extra
    cluster.start_router(0)


def node_of(parts, k):
    """The node holding hash key k (S) by table map `parts`."""
    import xxhash
    h = xxhash.xxh3_64_intdigest(b"\x01" + k.encode())
    return [p for p in parts if p["lo"] <= h <= p["last"]][0]["node"]


def keys_on_nodes(cluster, t, n_keys):
    """n_keys keys of table t (hash key PK) whose partitions are on
    distinct nodes when n_keys is 2, else any n_keys keys."""
    if n_keys != 2:
        return ["k%02d" % i for i in range(n_keys)]
    parts = cluster.table_map(t)
    first = "k00"
    for i in range(1, 100):
        k = "k%02d" % i
        if node_of(parts, k) != node_of(parts, first):
            return [first, k]
    raise AssertionError("no two keys on two nodes")


@pytest.mark.processes
@pytest.mark.parametrize("fault,committed,n_keys", [
    ("prepared", False, 8), ("decided", True, 8),
    ("prepared", False, 2), ("decided", True, 2)])
def test_coordinator_dies(cluster, ddb, unique, fault, committed, n_keys):
    """The router dies after every participant but the decision keeper
    prepared (nothing is decided: the participants find no COMMIT and
    abort) or right after the keeper recorded COMMIT (with its own share
    committed in the same batch when it has one action; the others
    commit by themselves): either way every item ends the same on every
    node, and within the timeout nothing stays locked."""
    t = "txf_%s_%d_%s" % (fault, n_keys, unique)
    make_table(ddb, t, sort=False)
    keys = keys_on_nodes(cluster, t, n_keys)
    restart_router_with(cluster, ["--txn-fault", fault])
    try:
        with pytest.raises(Exception):
            cluster.client().transact_write_items(TransactItems=[
                {"Put": {"TableName": t,
                         "Item": {"PK": S(k), "v": N(1)}}} for k in keys])
    finally:
        restart_router_with(cluster, [])
    c = cluster.client()
    deadline = time.monotonic() + 15
    while True:
        try:
            c.put_item(TableName=t, Item={"PK": S("probe"), "v": N(0)})
            c.update_item(TableName=t, Key={"PK": S(keys[0])},
                          UpdateExpression="SET w = :w",
                          ExpressionAttributeValues={":w": N(1)},
                          ConditionExpression="attribute_exists(PK) OR "
                          "attribute_not_exists(PK)")
            break
        except ClientError as e:
            assert e.response["Error"]["Code"] == \
                "TransactionConflictException", e
            assert time.monotonic() < deadline, "still locked"
            time.sleep(0.2)
    time.sleep(3)  # every participant past its timeout
    got = [("Item" in c.get_item(TableName=t, Key={"PK": S(k)},
                                 ConsistentRead=True) and
            "v" in c.get_item(TableName=t, Key={"PK": S(k)},
                              ConsistentRead=True)["Item"]) for k in keys]
    assert got == [committed] * len(keys), got
    for k in keys:
        c.put_item(TableName=t, Item={"PK": S(k), "v": N(2)})


@pytest.mark.processes
def test_participant_restarts_while_prepared(cluster, ddb, unique):
    """The router dies right after the decision keeper recorded COMMIT
    (committing its own share), and the other participant is killed (-9)
    before its timeout would have it commit: started again, it reads its
    prepared record back from its store, asks the keeper, and commits
    from the record it read, so both items end written."""
    t = "txr_%s" % unique
    make_table(ddb, t, sort=False)
    keys = keys_on_nodes(cluster, t, 2)
    other = node_of(cluster.table_map(t), keys[1])
    restart_router_with(cluster, ["--txn-fault", "decided"])
    try:
        with pytest.raises(Exception):
            cluster.client().transact_write_items(TransactItems=[
                {"Put": {"TableName": t,
                         "Item": {"PK": S(k), "v": N(7)}}} for k in keys])
        cluster.kill_node(other)
        cluster.nodes[other].start()  # ready once the router is back
    finally:
        restart_router_with(cluster, [])
    c = cluster.client(attempts=5)
    deadline = time.monotonic() + 30
    while True:
        got = [c.get_item(TableName=t, Key={"PK": S(k)},
                          ConsistentRead=True).get("Item", {}).get("v")
               for k in keys]
        if got == [N(7), N(7)]:
            break
        assert time.monotonic() < deadline, got
        time.sleep(0.3)
    # Unlocked: a plain write to the restarted node's item goes through.
    c.put_item(TableName=t, Item={"PK": S(keys[1]), "v": N(8)})


@pytest.mark.processes
def test_bank_with_kills(cluster, ddb, unique):
    """The bank while a node and then the router are killed (-9) and
    started again: requests fail meanwhile, but no snapshot ever misses
    money, the total is kept, and afterwards no account is locked."""
    import random
    t = "bankk_" + unique
    bank_setup(ddb, t)
    stop = threading.Event()
    bad, failures = [], []
    counts = {"ok": 0, "snapshots": 0}

    def mover(seed):
        c = cluster.client()
        r = random.Random(seed)
        while not stop.is_set():
            a, b = r.sample(range(ACCOUNTS), 2)
            try:
                transfer(c, t, a, b, r.randrange(1, 30))
                counts["ok"] += 1
            except Exception as e:  # noqa: BLE001 (kills: anything)
                failures.append(type(e).__name__)
                time.sleep(0.05)

    def reader():
        c = cluster.client()
        while not stop.is_set():
            try:
                s = snapshot(c, t)
                counts["snapshots"] += 1
                if s != ACCOUNTS * START:
                    bad.append(s)
            except Exception as e:  # noqa: BLE001
                failures.append(type(e).__name__)
                time.sleep(0.05)

    threads = [threading.Thread(target=mover, args=(i,)) for i in range(3)]
    threads.append(threading.Thread(target=reader))
    for th in threads:
        th.start()
    try:
        time.sleep(2)
        cluster.kill_node(1)
        time.sleep(0.5)
        cluster.start_node(1)
        time.sleep(2)
        cluster.kill_router(0)
        time.sleep(0.5)
        cluster.start_router(0)
        time.sleep(2)
    finally:
        stop.set()
        for th in threads:
            th.join(60)
    print("bank with kills: %r, %d failures" % (counts, len(failures)))
    assert not bad, bad[:5]
    assert counts["ok"] > 20 and counts["snapshots"] > 5, counts
    time.sleep(3)  # transactions left prepared are resolved by now
    c = cluster.client()
    for i in range(ACCOUNTS):
        c.update_item(TableName=t, Key={"PK": S("acct%02d" % i)},
                      UpdateExpression="SET touched = :t",
                      ExpressionAttributeValues={":t": N(1)})
    items = c.scan(TableName=t, ConsistentRead=True)["Items"]
    assert sum(int(i["balance"]["N"]) for i in items) == ACCOUNTS * START


def test_indexes_follow_transactions(ddb, unique):
    """A transaction's writes reach the table's global and local indexes
    as single writes do (its commit writes the index records in the
    item's batch); a cancelled one changes no index."""
    import os
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(
        __file__)), "..", "..", "chaos", "check"))
    import indexes as indexes_check
    t = "txx_" + unique
    ddb.create_table(
        TableName=t, BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[
            {"AttributeName": "PK", "AttributeType": "S"},
            {"AttributeName": "SK", "AttributeType": "S"},
            {"AttributeName": "g", "AttributeType": "S"},
            {"AttributeName": "l", "AttributeType": "N"}],
        KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"},
                   {"AttributeName": "SK", "KeyType": "RANGE"}],
        GlobalSecondaryIndexes=[{
            "IndexName": "by_g",
            "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "ALL"}}],
        LocalSecondaryIndexes=[{
            "IndexName": "by_l",
            "KeySchema": [{"AttributeName": "PK", "KeyType": "HASH"},
                          {"AttributeName": "l", "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "KEYS_ONLY"}}])
    end = time.time() + 30
    while ddb.describe_table(TableName=t)["Table"][
            "GlobalSecondaryIndexes"][0]["IndexStatus"] != "ACTIVE":
        assert time.time() < end
        time.sleep(0.2)
    for i in range(10):
        ddb.transact_write_items(TransactItems=[
            {"Put": {"TableName": t, "Item": {
                "PK": S("p%d" % (i % 3)), "SK": S("a%d" % i),
                "g": S("g%d" % (i % 2)), "l": N(i)}}},
            {"Update": {"TableName": t,
                        "Key": {"PK": S("q"), "SK": S("b%d" % i)},
                        "UpdateExpression": "SET g = :g, l = :l",
                        "ExpressionAttributeValues": {":g": S("h"),
                                                      ":l": N(i)}}}])
    ddb.transact_write_items(TransactItems=[
        {"Delete": {"TableName": t, "Key": {"PK": S("q"), "SK": S("b0")}}},
        {"Update": {"TableName": t, "Key": {"PK": S("p0"), "SK": S("a0")},
                    "UpdateExpression": "REMOVE g"}}])
    with pytest.raises(ClientError):
        ddb.transact_write_items(TransactItems=[
            {"Put": {"TableName": t, "Item": {
                "PK": S("z"), "SK": S("z"), "g": S("never"), "l": N(1)}}},
            {"ConditionCheck": {"TableName": t,
                                "Key": {"PK": S("q"), "SK": S("b1")},
                                "ConditionExpression": "attribute_not_exists(PK)"}}])
    res = indexes_check.converged(ddb, t, wait=10)
    assert all(not m and not e for m, e in res.values()), res
    r = ddb.query(TableName=t, IndexName="by_g",
                  KeyConditionExpression="g = :g",
                  ExpressionAttributeValues={":g": S("never")})
    assert r["Count"] == 0
