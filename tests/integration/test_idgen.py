"""test_idgen.py — the integer ID generator of SEEDS.md section 3, end to
end through HTTP.

One item per entity type, keyed `{domain}.{entityType}` ("boards.item"),
holds a number lastID. A client takes a range of `count` ids with one
atomic update, `SET lastID = if_not_exists(lastID, :min) + :count`, and
ReturnValues UPDATED_NEW: the new value N means N-count+1 .. N is its own.
Two clients must never get the same id.

The main test runs 32 concurrent clients (threads, each with its own
botocore client and connection pool), each taking 500 ranges of 50 on one
key: 16,000 ranges, ids 1 .. 800,000. Every range must be distinct, none may
overlap another, together they must cover 1 .. 800,000 exactly, each
client's ranges must increase, and the final lastID must be the sum of the
counts. Requests are not retried, except after throttling (which DynamoDB
answers before applying anything): a retried timeout could apply twice and
hide a lost range as a gap.
"""

import random
import sys
import threading
import time
import uuid

import pytest
from botocore.exceptions import ClientError

KEY_ATTR = "entity"
ENTITY = "boards.item"
UPDATE = "SET lastID = if_not_exists(lastID, :min) + :count"
THROTTLED = ("ThrottlingException", "ProvisionedThroughputExceededException",
             "RequestLimitExceeded")

CLIENTS = 32
RANGES_PER_CLIENT = 500
COUNT = 50


@pytest.fixture(scope="module")
def table(cluster):
    ddb = cluster.client()
    name = "idgen-" + uuid.uuid4().hex[:8]
    ddb.create_table(
        TableName=name,
        AttributeDefinitions=[{"AttributeName": KEY_ATTR,
                               "AttributeType": "S"}],
        KeySchema=[{"AttributeName": KEY_ATTR, "KeyType": "HASH"}],
        BillingMode="PAY_PER_REQUEST")
    ddb.get_waiter("table_exists").wait(
        TableName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 20})
    return name


def id_client(cluster, pool=2):
    """A boto3 client with its own connection pool, no automatic retries
    and generous timeouts (32 threads share two cores here)."""
    import boto3
    from botocore.config import Config
    return boto3.client(
        "dynamodb", endpoint_url=cluster.endpoint, region_name="us-east-1",
        aws_access_key_id="AKIDTEST", aws_secret_access_key="secret",
        config=Config(retries={"mode": "standard", "total_max_attempts": 1},
                      max_pool_connections=pool, connect_timeout=5,
                      read_timeout=60, tcp_keepalive=True))


class Throttled:
    """Counts throttling answers seen (and retried) by allocate()."""

    def __init__(self):
        self.n = 0
        self.lock = threading.Lock()

    def add(self):
        with self.lock:
            self.n += 1


def allocate(ddb, table, key, count, minimum=0, throttled=None):
    """Takes one range; returns the new lastID. Retries only throttling,
    with a short jittered back-off."""
    delay = 0.005
    for _ in range(200):
        try:
            r = ddb.update_item(
                TableName=table, Key={KEY_ATTR: {"S": key}},
                UpdateExpression=UPDATE, ReturnValues="UPDATED_NEW",
                ExpressionAttributeValues={":min": {"N": str(minimum)},
                                           ":count": {"N": str(count)}})
        except ClientError as e:
            if e.response["Error"]["Code"] not in THROTTLED:
                raise
            if throttled is not None:
                throttled.add()
            time.sleep(delay * (1 + random.random()))
            delay = min(delay * 2, 0.5)
            continue
        attrs = r.get("Attributes")
        assert attrs is not None and set(attrs) == {"lastID"}, (
            "UPDATED_NEW must return lastID alone, got %r" % (attrs,))
        return int(attrs["lastID"]["N"])
    raise AssertionError("still throttled after 200 attempts")


def read_last_id(ddb, table, key):
    item = ddb.get_item(TableName=table, Key={KEY_ATTR: {"S": key}},
                        ConsistentRead=True).get("Item")
    assert item is not None, "the counter item %s does not exist" % key
    return int(item["lastID"]["N"])


def check_ranges(grants, lo, hi):
    """grants: [(last, count, client, call)]. Every range
    [last-count+1, last] must be distinct and disjoint, and together they
    must be exactly lo..hi. Fails naming the first offending ranges."""
    seen = {}
    dups = []
    for g in grants:
        if g[0] in seen:
            dups.append((seen[g[0]], g))
        else:
            seen[g[0]] = g
    if dups:
        lines = ["range [%d, %d] handed out twice: to client %d (call %d) "
                 "and to client %d (call %d)" % (
                     a[0] - a[1] + 1, a[0], a[2], a[3], b[2], b[3])
                 for a, b in dups[:10]]
        raise AssertionError("%d duplicated ranges:\n%s" % (
            len(dups), "\n".join(lines)))
    ordered = sorted(grants)
    expect = lo
    for last, count, client, call in ordered:
        first = last - count + 1
        if first < expect:
            raise AssertionError(
                "range [%d, %d] (client %d, call %d) overlaps the range "
                "before it, which ends at %d" % (first, last, client, call,
                                                 expect - 1))
        if first > expect:
            raise AssertionError(
                "ids %d..%d were never handed out (next range [%d, %d], "
                "client %d, call %d)" % (expect, first - 1, first, last,
                                         client, call))
        expect = last + 1
    assert expect - 1 == hi, "the ranges end at %d, not %d" % (expect - 1,
                                                                hi)


def test_a_range_is_the_new_value_minus_count(cluster, table):
    """SEEDS: "1050 with count 50 means 1001-1050 is yours"; :min applies
    only while lastID does not exist."""
    ddb = cluster.client()
    key = "shadow.item"
    assert allocate(ddb, table, key, 50, minimum=1000) == 1050
    assert allocate(ddb, table, key, 50, minimum=1000) == 1100
    assert allocate(ddb, table, key, 7, minimum=99999) == 1107
    assert read_last_id(ddb, table, key) == 1107
    # The item holds the key and lastID only.
    item = ddb.get_item(TableName=table, Key={KEY_ATTR: {"S": key}},
                        ConsistentRead=True)["Item"]
    assert item == {KEY_ATTR: {"S": key}, "lastID": {"N": "1107"}}


def run_clients(cluster, table, key, n, calls, count_of):
    """n threads, each with its own client, each taking `calls` ranges;
    count_of(client, call) is the size of each. Returns (grants,
    elapsed seconds, throttled answers)."""
    clients = [id_client(cluster) for _ in range(n)]
    grants = [[] for _ in range(n)]
    errors = []
    throttled = Throttled()
    barrier = threading.Barrier(n + 1)

    def worker(i):
        try:
            barrier.wait(60)
            c = clients[i]
            for j in range(calls):
                count = count_of(i, j)
                grants[i].append((allocate(c, table, key, count,
                                           throttled=throttled),
                                  count, i, j))
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append((i, len(grants[i]), e))

    threads = [threading.Thread(target=worker, args=(i,), daemon=True)
               for i in range(n)]
    for th in threads:
        th.start()
    barrier.wait(60)
    t0 = time.monotonic()
    for th in threads:
        th.join(600)
    elapsed = time.monotonic() - t0
    assert not any(th.is_alive() for th in threads), "clients hung"
    if errors:
        i, done, e = errors[0]
        raise AssertionError(
            "client %d failed after %d ranges (%d clients failed): %r" % (
                i, done, len(errors), e)) from e
    for i, g in enumerate(grants):
        lasts = [x[0] for x in g]
        assert lasts == sorted(lasts) and len(set(lasts)) == len(lasts), (
            "client %d got ranges out of order: %r" % (i, lasts[:20]))
    return [x for g in grants for x in g], elapsed, throttled.n


def test_32_clients_take_500_ranges_of_50_each(cluster, table):
    grants, elapsed, throttled = run_clients(
        cluster, table, ENTITY, CLIENTS, RANGES_PER_CLIENT,
        lambda i, j: COUNT)
    total = CLIENTS * RANGES_PER_CLIENT * COUNT
    assert len(grants) == CLIENTS * RANGES_PER_CLIENT
    check_ranges(grants, 1, total)
    assert total == 800000
    assert read_last_id(cluster.client(), table, ENTITY) == total
    sys.stderr.write("\nidgen: %d ranges by %d clients in %.1f s (%.0f "
                     "updates/s, %d throttled answers retried)\n" % (
                         len(grants), CLIENTS, elapsed,
                         len(grants) / elapsed, throttled))


def test_ranges_of_varying_sizes_tile_the_id_space(cluster, table):
    """Clients asking for different counts (1..100) still get disjoint
    ranges that cover 1..sum(counts) with no gap."""
    rng = random.Random(20240611)
    sizes = [[rng.randint(1, 100) for _ in range(60)] for _ in range(12)]
    key = "boards.varying"
    grants, _, _ = run_clients(cluster, table, key, 12, 60,
                               lambda i, j: sizes[i][j])
    total = sum(map(sum, sizes))
    check_ranges(grants, 1, total)
    assert read_last_id(cluster.client(), table, key) == total


def test_entity_types_have_independent_counters(cluster, table):
    """Interleaved allocations on several keys: each key's ranges tile
    its own id space."""
    keys = ["boards.item", "boards.column", "users.user", "orders.order"]
    keys = [k + "-" + uuid.uuid4().hex[:4] for k in keys]
    clients = [id_client(cluster) for _ in range(8)]
    grants = {k: [] for k in keys}
    lock = threading.Lock()
    errors = []

    def worker(i):
        try:
            for j in range(40):
                k = keys[(i + j) % len(keys)]
                last = allocate(clients[i], table, k, 10)
                with lock:
                    grants[k].append((last, 10, i, j))
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(120)
    assert not errors, errors[0]
    for k in keys:
        assert len(grants[k]) == 80, k
        check_ranges(grants[k], 1, 800)
        assert read_last_id(cluster.client(), table, k) == 800
