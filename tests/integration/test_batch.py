"""test_batch.py — BatchWriteItem and BatchGetItem end to end through boto3:
round trips over several tables, puts and deletes mixed, missing keys,
per-table projections and consistency, ReturnConsumedCapacity for items of
known sizes, every refusal (exception, exact message, HTTP 400) with
nothing written by a refused batch, UnprocessedItems / UnprocessedKeys
while a node is down (and the retry once it is back), and boto3's
Table.batch_writer().

DynamoDB's documented behaviour is the specification. Where DynamoDB
echoes a Java dump of the request in a message ("Value '{t=[...]}'"), the
dump is matched loosely and the rest exactly. Item sizes follow DynamoDB's
rules (attribute name bytes + string bytes): the capacity tests use string
attributes only, so every size is exact.

The tests that kill a node carry the `processes` mark: against an external
cluster (KV_ENDPOINT) leave them out with -m 'not processes'.
"""

import json
import re
import uuid

import pytest
from botocore.exceptions import ClientError

from cluster import wait_until

NOT_FOUND = "Requested resource not found"
MISMATCH = "The provided key element does not match the schema"
DUPLICATES = "Provided list of item keys contains duplicates"
TOO_BIG = "Item size has exceeded the maximum allowed size"
NEITHER = ("Supplied AttributeValue has more than one datatypes set, must "
           "contain exactly one of the supported datatypes")
TOO_MANY_WRITES = "Too many items requested for the BatchWriteItem call"
TOO_MANY_GETS = "Too many items requested for the BatchGetItem call"
MAP_VALUE_25 = ("at 'requestItems' failed to satisfy constraint: Map value "
                "must satisfy constraint: [Member must have length less "
                "than or equal to 25, Member must have length greater than "
                "or equal to 1]")
MAX_ITEM = 400 * 1024


@pytest.fixture(scope="module")
def t(cluster):
    """Tables of this file: `a` and `c` (hash pk S), `b` (hash pk S, range
    sk N), and the name of one that does not exist."""
    ddb = cluster.client()
    u = uuid.uuid4().hex[:8]
    names = {"a": "batch-a-" + u, "b": "batch-b-" + u, "c": "batch-c-" + u,
             "missing": "batch-missing-" + u}
    for k in ("a", "b", "c"):
        make_table(ddb, names[k], range_key=(k == "b"), wait=False)
    w = ddb.get_waiter("table_exists")
    for k in ("a", "b", "c"):
        w.wait(TableName=names[k], WaiterConfig={"Delay": 1,
                                                  "MaxAttempts": 20})
    return names


# ---- helpers ----

def make_table(ddb, name, range_key=False, wait=True):
    defs = [{"AttributeName": "pk", "AttributeType": "S"}]
    ks = [{"AttributeName": "pk", "KeyType": "HASH"}]
    if range_key:
        defs.append({"AttributeName": "sk", "AttributeType": "N"})
        ks.append({"AttributeName": "sk", "KeyType": "RANGE"})
    ddb.create_table(TableName=name, AttributeDefinitions=defs, KeySchema=ks,
                     BillingMode="PAY_PER_REQUEST")
    if wait:
        ddb.get_waiter("table_exists").wait(
            TableName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 20})


def S(x):
    return {"S": x}


def K(pk):
    return {"pk": S(pk)}


def KR(pk, sk):
    return {"pk": S(pk), "sk": {"N": str(sk)}}


def put(item):
    return {"PutRequest": {"Item": item}}


def delete(key):
    return {"DeleteRequest": {"Key": key}}


def sized(pk, size, attr="pad"):
    """An item of a hash-pk-S table whose DynamoDB size is exactly size
    bytes: "pk" + pk + attr + the padding string."""
    pad = size - len("pk") - len(pk.encode()) - len(attr)
    assert pad >= 0, (pk, size)
    return {"pk": S(pk), attr: S("x" * pad)}


def canon(x):
    return json.dumps(x, sort_keys=True, default=repr)


def same(xs, ys):
    """Whether two lists hold the same elements in any order."""
    return sorted(map(canon, xs)) == sorted(map(canon, ys))


def fetch(ddb, table, keys, **opts):
    """The items under keys (strongly consistent, one BatchGetItem)."""
    r = ddb.batch_get_item(RequestItems={table: dict(
        {"Keys": keys, "ConsistentRead": True}, **opts)})
    assert r["UnprocessedKeys"] == {}
    return r["Responses"][table]


def refused(fn, code, message, **kw):
    """Calls fn(**kw), which must fail with code and HTTP 400; message is
    the exact message, or a compiled regex it must match entirely."""
    with pytest.raises(ClientError) as ei:
        fn(**kw)
    r = ei.value.response
    assert r["Error"]["Code"] == code, r["Error"]
    if isinstance(message, re.Pattern):
        assert message.fullmatch(r["Error"]["Message"]), r["Error"]["Message"]
    else:
        assert r["Error"]["Message"] == message
    assert r["ResponseMetadata"]["HTTPStatusCode"] == 400
    return r


def validation(fn, message, **kw):
    return refused(fn, "ValidationException", message, **kw)


def capacity(r):
    """ConsumedCapacity sorted by table name."""
    return sorted(r["ConsumedCapacity"], key=lambda c: c["TableName"])


def varied(i):
    """An item of table a with attributes of every kind."""
    return {
        "pk": S("rt-%02d" % i),
        "n": {"N": str(i * 7 - 3)},
        "s": S("value %d ✓" % i),
        "b": {"B": bytes([i, 255 - i, 0])},
        "l": {"L": [{"N": str(i)}, {"BOOL": i % 2 == 0}, {"NULL": True}]},
        "m": {"M": {"ss": {"SS": ["x%d" % i, "y"]}, "e": {"S": ""}}},
    }


# ---- round trips ----

def test_round_trip_over_two_tables(ddb, t):
    items_a = [varied(i) for i in range(5)]
    items_b = [{"pk": S("rt"), "sk": {"N": str(i)}, "v": S("b%d" % i)}
               for i in range(4)]
    r = ddb.batch_write_item(RequestItems={
        t["a"]: [put(it) for it in items_a],
        t["b"]: [put(it) for it in items_b]})
    assert r["UnprocessedItems"] == {}
    assert "ConsumedCapacity" not in r
    for it in items_a:
        assert ddb.get_item(TableName=t["a"], Key={"pk": it["pk"]},
                            ConsistentRead=True)["Item"] == it
    r = ddb.batch_get_item(RequestItems={
        t["a"]: {"Keys": [{"pk": it["pk"]} for it in items_a],
                 "ConsistentRead": True},
        t["b"]: {"Keys": [{"pk": it["pk"], "sk": it["sk"]}
                          for it in items_b]}})
    assert r["UnprocessedKeys"] == {}
    assert "ConsumedCapacity" not in r
    assert set(r["Responses"]) == {t["a"], t["b"]}
    assert same(r["Responses"][t["a"]], items_a)
    assert same(r["Responses"][t["b"]], items_b)


def test_puts_and_deletes_mixed(ddb, t):
    for k in ("mx-1", "mx-2", "mx-3"):
        ddb.put_item(TableName=t["a"], Item={"pk": S(k), "v": S("old")})
    ddb.put_item(TableName=t["b"], Item={"pk": S("mx"), "sk": {"N": "9"}})
    r = ddb.batch_write_item(RequestItems={
        t["a"]: [delete(K("mx-1")),
                 put({"pk": S("mx-2"), "w": S("new")}),
                 put({"pk": S("mx-4"), "v": S("fresh")}),
                 delete(K("mx-never-there"))],
        t["b"]: [put({"pk": S("mx"), "sk": {"N": "1"}}),
                 # Same partition key, another sort key: not a duplicate.
                 put({"pk": S("mx"), "sk": {"N": "2"}}),
                 delete(KR("mx", 9))]})
    assert r["UnprocessedItems"] == {}
    got = fetch(ddb, t["a"], [K("mx-%s" % k) for k in
                              ("1", "2", "3", "4", "never-there")])
    # The put replaced mx-2 whole (v is gone), mx-3 was not touched.
    assert same(got, [{"pk": S("mx-2"), "w": S("new")},
                      {"pk": S("mx-3"), "v": S("old")},
                      {"pk": S("mx-4"), "v": S("fresh")}])
    got = fetch(ddb, t["b"], [KR("mx", 1), KR("mx", 2), KR("mx", 9)])
    assert same(got, [KR("mx", 1), KR("mx", 2)])


def test_the_same_key_in_two_tables_is_not_a_duplicate(ddb, t):
    r = ddb.batch_write_item(RequestItems={
        t["a"]: [put({"pk": S("twice"), "t": S("a")})],
        t["c"]: [put({"pk": S("twice"), "t": S("c")})]})
    assert r["UnprocessedItems"] == {}
    r = ddb.batch_get_item(RequestItems={
        t["a"]: {"Keys": [K("twice")], "ConsistentRead": True},
        t["c"]: {"Keys": [K("twice")], "ConsistentRead": True}})
    assert r["Responses"] == {t["a"]: [{"pk": S("twice"), "t": S("a")}],
                              t["c"]: [{"pk": S("twice"), "t": S("c")}]}
    r = ddb.batch_write_item(RequestItems={t["a"]: [delete(K("twice"))],
                                           t["c"]: [delete(K("twice"))]})
    assert r["UnprocessedItems"] == {}
    assert fetch(ddb, t["a"], [K("twice")]) == []
    assert fetch(ddb, t["c"], [K("twice")]) == []


def test_get_of_missing_keys(ddb, t):
    ddb.put_item(TableName=t["a"], Item={"pk": S("gm-here"), "v": S("1")})
    r = ddb.batch_get_item(RequestItems={
        t["a"]: {"Keys": [K("gm-nothing-1"), K("gm-here"),
                          K("gm-nothing-2")]},
        t["b"]: {"Keys": [KR("gm-nothing", 1)], "ConsistentRead": True},
        t["c"]: {"Keys": [K("gm-nothing")]}})
    # Every requested table is in Responses, found items or not.
    assert r["Responses"] == {t["a"]: [{"pk": S("gm-here"), "v": S("1")}],
                              t["b"]: [], t["c"]: []}
    assert r["UnprocessedKeys"] == {}


def test_exactly_25_writes_and_100_keys_are_allowed(ddb, t):
    reqs_a = [put({"pk": S("lim-%02d" % i)}) for i in range(20)]
    reqs_c = [put({"pk": S("lim-%02d" % i)}) for i in range(5)]
    r = ddb.batch_write_item(RequestItems={t["a"]: reqs_a, t["c"]: reqs_c})
    assert r["UnprocessedItems"] == {}
    r = ddb.batch_get_item(RequestItems={
        t["a"]: {"Keys": [K("lim-%02d" % i) for i in range(95)],
                 "ConsistentRead": True},
        t["c"]: {"Keys": [K("lim-%02d" % i) for i in range(5)],
                 "ConsistentRead": True}})
    assert r["UnprocessedKeys"] == {}
    assert same(r["Responses"][t["a"]], [K("lim-%02d" % i)
                                         for i in range(20)])
    assert same(r["Responses"][t["c"]], [K("lim-%02d" % i)
                                         for i in range(5)])


# ---- projections and consistency per table ----

def test_projections_per_table(ddb, t):
    full = {"pk": S("pj-1"), "name": S("ann"), "v": S("x"),
            "m": {"M": {"x": S("mx"), "y": S("my")}},
            "l": {"L": [S("l0"), S("l1"), S("l2")]}}
    bare = {"pk": S("pj-2")}
    ddb.batch_write_item(RequestItems={
        t["a"]: [put(full), put(bare)],
        t["b"]: [put({"pk": S("pj"), "sk": {"N": "1"}, "v": S("b1"),
                      "w": S("hidden")}),
                 put({"pk": S("pj"), "sk": {"N": "2"}, "w": S("hidden")})]})
    # ProjectionExpression with a name for the reserved word "name",
    # nested paths; the item with none of them comes back as {}.
    r = ddb.batch_get_item(RequestItems={
        t["a"]: {"Keys": [K("pj-1"), K("pj-2"), K("pj-none")],
                 "ProjectionExpression": "#n, m.x, l[1]",
                 "ExpressionAttributeNames": {"#n": "name"},
                 "ConsistentRead": True},
        t["b"]: {"Keys": [KR("pj", 1), KR("pj", 2)],
                 "ProjectionExpression": "sk, v"}})
    assert r["UnprocessedKeys"] == {}
    assert same(r["Responses"][t["a"]], [
        {"name": S("ann"), "m": {"M": {"x": S("mx")}},
         "l": {"L": [S("l1")]}},
        {}])
    assert same(r["Responses"][t["b"]], [
        {"sk": {"N": "1"}, "v": S("b1")}, {"sk": {"N": "2"}}])
    # The legacy AttributesToGet, one table per request.
    r = ddb.batch_get_item(RequestItems={
        t["b"]: {"Keys": [KR("pj", 1), KR("pj", 2)],
                 "AttributesToGet": ["pk", "v"], "ConsistentRead": False}})
    assert same(r["Responses"][t["b"]], [
        {"pk": S("pj"), "v": S("b1")}, {"pk": S("pj")}])


# ---- ReturnConsumedCapacity ----

def test_write_capacity_per_table(ddb, t):
    # ceil(max(old, new) / 1 KB) per request, at least 1, summed per table.
    r = ddb.batch_write_item(RequestItems={
        t["a"]: [put(sized("wc-1", 1024)),          # 1
                 put(sized("wc-2", 1025)),          # 2
                 put(sized("wc-3", 3072)),          # 3
                 delete(K("wc-missing"))],          # 1
        t["c"]: [put(sized("wc-1", 100))]},         # 1
        ReturnConsumedCapacity="TOTAL")
    assert r["UnprocessedItems"] == {}
    assert capacity(r) == [{"TableName": t["a"], "CapacityUnits": 7.0},
                           {"TableName": t["c"], "CapacityUnits": 1.0}]
    r = ddb.batch_write_item(RequestItems={
        t["a"]: [put(sized("wc-2", 12)),            # old 1025: 2
                 delete(K("wc-3")),                 # old 3072: 3
                 put(sized("wc-1", 2049)),          # new 2049: 3
                 put(K("wc-4"))],                   # 1
        t["c"]: [delete(K("wc-1"))]},               # old 100: 1
        ReturnConsumedCapacity="INDEXES")
    assert capacity(r) == [
        {"TableName": t["a"], "CapacityUnits": 9.0,
         "Table": {"CapacityUnits": 9.0}},
        {"TableName": t["c"], "CapacityUnits": 1.0,
         "Table": {"CapacityUnits": 1.0}}]
    r = ddb.batch_write_item(RequestItems={t["a"]: [delete(K("wc-4"))]},
                             ReturnConsumedCapacity="NONE")
    assert "ConsumedCapacity" not in r
    got = fetch(ddb, t["a"], [K("wc-%d" % i) for i in range(1, 5)])
    assert same(got, [sized("wc-1", 2049), sized("wc-2", 12)])


def test_read_capacity_per_table(ddb, t):
    ddb.batch_write_item(RequestItems={
        t["a"]: [put(sized("rc-1", 4096)), put(sized("rc-2", 4097)),
                 put(sized("rc-3", 8193))],
        t["c"]: [put(sized("rc-1", 10))]})
    keys_a = [K("rc-1"), K("rc-2"), K("rc-3"), K("rc-missing")]
    keys_c = [K("rc-1"), K("rc-missing")]
    # ceil(size / 4 KB) per key, at least 1 (a missing item too), halved
    # when eventually consistent: a costs 1 + 2 + 3 + 1 strongly
    # consistent, c costs 0.5 + 0.5.
    r = ddb.batch_get_item(RequestItems={
        t["a"]: {"Keys": keys_a, "ConsistentRead": True},
        t["c"]: {"Keys": keys_c}}, ReturnConsumedCapacity="TOTAL")
    assert len(r["Responses"][t["a"]]) == 3
    assert capacity(r) == [{"TableName": t["a"], "CapacityUnits": 7.0},
                           {"TableName": t["c"], "CapacityUnits": 1.0}]
    # The other way round; a projection does not make a read cheaper.
    r = ddb.batch_get_item(RequestItems={
        t["a"]: {"Keys": keys_a, "ConsistentRead": False,
                 "ProjectionExpression": "pk"},
        t["c"]: {"Keys": keys_c, "ConsistentRead": True}},
        ReturnConsumedCapacity="INDEXES")
    assert same(r["Responses"][t["a"]], keys_a[:3])
    assert capacity(r) == [
        {"TableName": t["a"], "CapacityUnits": 3.5,
         "Table": {"CapacityUnits": 3.5}},
        {"TableName": t["c"], "CapacityUnits": 2.0,
         "Table": {"CapacityUnits": 2.0}}]
    r = ddb.batch_get_item(RequestItems={t["c"]: {"Keys": keys_c}},
                           ReturnConsumedCapacity="NONE")
    assert "ConsumedCapacity" not in r


# ---- refusals: nothing of a refused batch is written ----

def _bad(case, t):
    """(table, request, exception, message) of one bad request."""
    return {
        "put without the hash key":
            (t["a"], put({"v": S("x")}), "ValidationException", MISMATCH),
        "put with a key of the wrong type":
            (t["a"], put({"pk": {"N": "1"}}), "ValidationException",
             MISMATCH),
        "put without the range key":
            (t["b"], put({"pk": S("x")}), "ValidationException", MISMATCH),
        "put with an empty key":
            (t["a"], put({"pk": S("")}), "ValidationException",
             "One or more parameter values are not valid. The "
             "AttributeValue for a key attribute cannot contain an empty "
             "string value. Key: pk"),
        "delete without the key":
            (t["a"], delete({"v": S("x")}), "ValidationException",
             MISMATCH),
        "delete with an extra attribute":
            (t["a"], delete({"pk": S("x"), "v": S("y")}),
             "ValidationException", MISMATCH),
        "delete of a key put earlier":
            (t["a"], delete(K("%s-00" % case)), "ValidationException",
             DUPLICATES),
        "put of a key put earlier":
            (t["a"], put({"pk": S("%s-07" % case), "v": S("again")}),
             "ValidationException", DUPLICATES),
        "item over 400 KB":
            (t["a"], put(sized("big", MAX_ITEM + 1)), "ValidationException",
             TOO_BIG),
        "unknown table":
            (t["missing"], put(K("x")), "ResourceNotFoundException",
             NOT_FOUND),
        "neither put nor delete":
            (t["a"], {}, "ValidationException", NEITHER),
    }[case]


BAD_CASES = ["put without the hash key", "put with a key of the wrong type",
             "put without the range key", "put with an empty key",
             "delete without the key", "delete with an extra attribute",
             "delete of a key put earlier", "put of a key put earlier",
             "item over 400 KB", "unknown table", "neither put nor delete"]


@pytest.mark.parametrize("case", BAD_CASES)
@pytest.mark.parametrize("where", ["last", "first"])
def test_one_bad_request_refuses_the_whole_batch(raw_ddb, ddb, t, case,
                                                 where):
    tag = "%s-%s" % (case, where)
    good = [put({"pk": S("%s-%02d" % (case, i)), "v": S("1")})
            for i in range(24)]
    table, bad, code, message = _bad(case, t)
    if table == t["a"]:
        reqs = {t["a"]: good + [bad] if where == "last" else [bad] + good}
        if "earlier" in case and where == "first":
            # The duplicate must follow its first occurrence in the list
            # to be the second one; either way it is refused.
            reqs = {t["a"]: [good[0 if "delete" in case else 7], bad] +
                    [g for g in good if g not in (good[0], good[7])]}
    else:
        reqs = {t["a"]: good, table: [bad]} if where == "last" else \
            {table: [bad], t["a"]: good}
    with pytest.raises(ClientError) as ei:
        raw_ddb.batch_write_item(RequestItems=reqs)
    # Nothing was written (checked first: it matters most).
    assert fetch(ddb, t["a"], [K("%s-%02d" % (case, i))
                               for i in range(24)]) == [], tag
    if table == t["b"]:
        assert fetch(ddb, t["b"], [KR("x", 1)]) == []
    r = ei.value.response
    assert (r["Error"]["Code"], r["Error"]["Message"]) == (code, message)
    assert r["ResponseMetadata"]["HTTPStatusCode"] == 400


def test_an_item_of_exactly_400_kb_is_written(ddb, t):
    it = sized("just-fits", MAX_ITEM)
    r = ddb.batch_write_item(RequestItems={t["a"]: [put(it)]},
                             ReturnConsumedCapacity="TOTAL")
    assert r["UnprocessedItems"] == {}
    assert capacity(r) == [{"TableName": t["a"], "CapacityUnits": 400.0}]
    assert fetch(ddb, t["a"], [K("just-fits")]) == [it]


def test_26_writes_to_one_table(raw_ddb, ddb, t):
    reqs = [put({"pk": S("w26-%02d" % i)}) for i in range(26)]
    validation(raw_ddb.batch_write_item, re.compile(
        r"1 validation error detected: Value '\{%s=\[.+\]\}' " %
        re.escape(t["a"]) + re.escape(MAP_VALUE_25), re.S),
        RequestItems={t["a"]: reqs})
    assert fetch(ddb, t["a"], [K("w26-%02d" % i) for i in range(26)]) == []


def test_26_writes_over_two_tables(raw_ddb, ddb, t):
    validation(raw_ddb.batch_write_item, TOO_MANY_WRITES, RequestItems={
        t["a"]: [put({"pk": S("w13-%02d" % i)}) for i in range(13)],
        t["c"]: [put({"pk": S("w13-%02d" % i)}) for i in range(13)]})
    keys = [K("w13-%02d" % i) for i in range(13)]
    assert fetch(ddb, t["a"], keys) == []
    assert fetch(ddb, t["c"], keys) == []


def test_batch_write_of_no_table(raw_ddb):
    # DynamoDB has answered with either wording.
    r = refused(raw_ddb.batch_write_item, "ValidationException",
                re.compile(".*"), RequestItems={})
    assert r["Error"]["Message"] in (
        "1 validation error detected: Value '{}' at 'requestItems' failed "
        "to satisfy constraint: Member must have length greater than or "
        "equal to 1",
        "The requestItems parameter is required for BatchWriteItem")


def test_batch_write_of_an_empty_list(raw_ddb, t):
    # The dump of an empty list is "[]" (Java's List.toString).
    validation(raw_ddb.batch_write_item,
               "1 validation error detected: Value '{%s=[]}' %s" % (
                   t["c"], MAP_VALUE_25),
               RequestItems={t["c"]: []})


def test_an_empty_list_next_to_a_valid_one(raw_ddb, ddb, t):
    with pytest.raises(ClientError) as ei:
        raw_ddb.batch_write_item(RequestItems={t["a"]: [put(K("ew-1"))],
                                               t["c"]: []})
    assert fetch(ddb, t["a"], [K("ew-1")]) == []
    r = ei.value.response
    assert r["Error"]["Code"] == "ValidationException"
    # DynamoDB dumps the whole map; the empty list is the one refused.
    assert re.fullmatch(
        r"1 validation error detected: Value '\{.*%s=\[\].*\}' " %
        re.escape(t["c"]) + re.escape(MAP_VALUE_25), r["Error"]["Message"],
        re.S), r["Error"]["Message"]


def test_batch_write_on_an_unknown_table_only(raw_ddb, t):
    refused(raw_ddb.batch_write_item, "ResourceNotFoundException", NOT_FOUND,
            RequestItems={t["missing"]: [put(K("x")), delete(K("y"))]})


def test_101_keys_over_two_tables(raw_ddb, t):
    validation(raw_ddb.batch_get_item, TOO_MANY_GETS, RequestItems={
        t["a"]: {"Keys": [K("k101-%02d" % i) for i in range(51)]},
        t["c"]: {"Keys": [K("k101-%02d" % i) for i in range(50)]}})


@pytest.mark.parametrize("n", [0, 101])
def test_keys_of_one_table_out_of_bounds(raw_ddb, t, n):
    # The Keys list of one table is limited to 1..100 by the API model:
    # DynamoDB names the one constraint that failed (older answers echo
    # the list, newer ones spell the member RequestItems.<t>.member.Keys).
    constraint = ("Member must have length less than or equal to 100"
                  if n else
                  "Member must have length greater than or equal to 1")
    dump = r"\[\]" if n == 0 else r"\[.+\]"
    validation(raw_ddb.batch_get_item, re.compile(
        r"1 validation error detected: Value (?:'%s' )?at "
        r"'(?:requestItems\.%s\.member\.keys|RequestItems\.%s\.member\.Keys)'"
        r" failed to satisfy constraint: %s" % (
            dump, re.escape(t["a"]), re.escape(t["a"]),
            re.escape(constraint)), re.S),
        RequestItems={t["a"]: {"Keys": [K("kb-%03d" % i)
                                        for i in range(n)]}})


@pytest.mark.parametrize("keys_b", [
    [KR("dup", 1), KR("dup", 2), KR("dup", 1)],
    [KR("dup", 1), {"sk": {"N": "1"}, "pk": S("dup")}],
    # 1E+0 and 1 are the same number, so the same key.
    [KR("dup", 1), {"pk": S("dup"), "sk": {"N": "1E+0"}}],
], ids=["same", "attributes in another order", "same number spelled apart"])
def test_duplicate_keys_in_batch_get(raw_ddb, t, keys_b):
    validation(raw_ddb.batch_get_item, DUPLICATES,
               RequestItems={t["a"]: {"Keys": [K("dup")]},
                             t["b"]: {"Keys": keys_b}})


def test_duplicate_keys_in_batch_write_with_numbers(raw_ddb, ddb, t):
    validation(raw_ddb.batch_write_item, DUPLICATES, RequestItems={
        t["b"]: [put({"pk": S("dupn"), "sk": {"N": "10"}}),
                 delete({"pk": S("dupn"), "sk": {"N": "1E+1"}})]})
    assert fetch(ddb, t["b"], [KR("dupn", 10)]) == []


@pytest.mark.parametrize("key, code, message", [
    ({"v": S("x")}, "ValidationException", MISMATCH),
    ({"pk": S("x"), "v": S("y")}, "ValidationException", MISMATCH),
    ({"pk": {"N": "1"}}, "ValidationException", MISMATCH),
    ({"pk": S("")}, "ValidationException",
     "One or more parameter values are not valid. The AttributeValue for "
     "a key attribute cannot contain an empty string value. Key: pk"),
], ids=["no key", "extra attribute", "wrong type", "empty"])
def test_bad_keys_in_batch_get(raw_ddb, t, key, code, message):
    refused(raw_ddb.batch_get_item, code, message,
            RequestItems={t["c"]: {"Keys": [K("fine")]},
                          t["a"]: {"Keys": [K("fine"), key]}})


def test_batch_get_on_an_unknown_table(raw_ddb, t):
    refused(raw_ddb.batch_get_item, "ResourceNotFoundException", NOT_FOUND,
            RequestItems={t["a"]: {"Keys": [K("x")]},
                          t["missing"]: {"Keys": [K("x")]}})


def test_batch_get_with_both_projection_kinds(raw_ddb, t):
    validation(
        raw_ddb.batch_get_item,
        "Can not use both expression and non-expression parameters in the "
        "same request: Non-expression parameters: {AttributesToGet} "
        "Expression parameters: {ProjectionExpression}",
        RequestItems={t["a"]: {"Keys": [K("x")], "AttributesToGet": ["pk"],
                               "ProjectionExpression": "pk"}})


# ---- a node down: UnprocessedItems and UnprocessedKeys ----

def counts(cluster, table):
    """{partition: item count} from kv-admin status."""
    return cluster.item_counts(table)


def split_by_victim(cluster, ddb, table, items):
    """Puts the items one by one, watching which partition's count grows;
    returns (victim node, items on it, the other items). The victim is a
    node other than 0 (which holds the catalog) that owns some of them."""
    parts = cluster.table_partitions(table)
    owner = {p["part"]: p["node"] for p in parts}
    where = {}
    before = counts(cluster, table)
    for it in items:
        ddb.put_item(TableName=table, Item=it)
        after = counts(cluster, table)
        grown = [p for p in after if after[p] != before.get(p)]
        assert len(grown) == 1, (it, before, after)
        where[it["pk"]["S"]] = grown[0]
        before = after
    nodes = {owner[p] for p in where.values()} - {0}
    assert nodes, "no key reached a node other than 0: %r" % (where,)
    victim = min(nodes)
    down = [it for it in items if owner[where[it["pk"]["S"]]] == victim]
    up = [it for it in items if owner[where[it["pk"]["S"]]] != victim]
    assert down and up, where
    return victim, down, up


def key_of(it):
    return {"pk": it["pk"]}


def wait_readable(ddb, table, items):
    def readable():
        r = ddb.batch_get_item(RequestItems={table: {
            "Keys": [key_of(it) for it in items], "ConsistentRead": True}})
        return r["UnprocessedKeys"] == {}
    wait_until(readable, 15, 0.1, "the restarted node to serve")


@pytest.mark.processes
def test_batch_write_with_a_node_down(cluster, ddb, unique):
    cluster.require_processes()
    name = "bw-down-" + unique
    make_table(ddb, name)
    old = [{"pk": S("d%02d" % i), "v": S("old")} for i in range(24)]
    victim, down, up = split_by_victim(cluster, ddb, name, old)
    down, up = down[:4], up[:4]

    def request(i, it):
        if i % 2:
            return delete(key_of(it))
        return put({"pk": it["pk"], "v": S("new"), "n": {"N": "7"},
                    "b": {"B": b"\x00\x01"}, "l": {"L": [S("x")]}})
    reqs_down = [request(i, it) for i, it in enumerate(down)]
    reqs_up = [request(i, it) for i, it in enumerate(up)]
    # Interleaved, so the reachable ones come before and after the others.
    reqs = [r for pair in zip(reqs_up, reqs_down) for r in pair]

    cluster.kill_node(victim)
    try:
        r = ddb.batch_write_item(RequestItems={name: reqs},
                                 ReturnConsumedCapacity="TOTAL")
        assert list(r["UnprocessedItems"]) == [name]
        # Exactly the requests as sent, ready to be sent again.
        assert same(r["UnprocessedItems"][name], reqs_down)
        # Only what was applied is charged (1 WCU each, all under 1 KB).
        assert r["ConsumedCapacity"] == [
            {"TableName": name, "CapacityUnits": float(len(reqs_up))}]
        got = fetch(ddb, name, [key_of(it) for it in up])
        assert same(got, [q["PutRequest"]["Item"] for q in reqs_up
                          if "PutRequest" in q])
        unprocessed = r["UnprocessedItems"]
    finally:
        cluster.start_node(victim)

    wait_readable(ddb, name, down)
    # Nothing of the unprocessed requests happened.
    assert same(fetch(ddb, name, [key_of(it) for it in down]), down)
    r = ddb.batch_write_item(RequestItems=unprocessed)
    assert r["UnprocessedItems"] == {}
    got = fetch(ddb, name, [key_of(it) for it in down + up])
    assert same(got, [q["PutRequest"]["Item"] for q in reqs
                      if "PutRequest" in q])


@pytest.mark.processes
def test_batch_get_with_a_node_down(cluster, ddb, unique):
    cluster.require_processes()
    name = "bg-down-" + unique
    make_table(ddb, name)
    items = [{"pk": S("g%02d" % i), "name": S("n%d" % i), "v": S("v"),
              "hidden": S("h")} for i in range(24)]
    victim, down, up = split_by_victim(cluster, ddb, name, items)
    opts = {"ProjectionExpression": "#n, v",
            "ExpressionAttributeNames": {"#n": "name"},
            "ConsistentRead": True}

    def shown(it):
        return {"name": it["name"], "v": it["v"]}

    cluster.kill_node(victim)
    try:
        r = ddb.batch_get_item(
            RequestItems={name: dict(opts, Keys=[key_of(it)
                                                 for it in items])},
            ReturnConsumedCapacity="TOTAL")
        assert same(r["Responses"][name], [shown(it) for it in up])
        assert list(r["UnprocessedKeys"]) == [name]
        u = r["UnprocessedKeys"][name]
        # The table's options stay with its unprocessed keys.
        assert {k: v for k, v in u.items() if k != "Keys"} == opts
        assert same(u["Keys"], [key_of(it) for it in down])
        assert r["ConsumedCapacity"] == [
            {"TableName": name, "CapacityUnits": float(len(up))}]
        unprocessed = r["UnprocessedKeys"]
    finally:
        cluster.start_node(victim)

    wait_readable(ddb, name, down)
    r = ddb.batch_get_item(RequestItems=unprocessed)
    assert r["UnprocessedKeys"] == {}
    assert same(r["Responses"][name], [shown(it) for it in down])


# ---- boto3's resource layer ----

def test_table_batch_writer_writes_200_items(cluster, ddb, unique):
    import boto3
    from botocore.config import Config
    from decimal import Decimal
    name = "bw-res-" + unique
    make_table(ddb, name)
    res = boto3.resource(
        "dynamodb", endpoint_url=cluster.endpoint, region_name="us-east-1",
        aws_access_key_id="AKIDTEST", aws_secret_access_key="secret",
        config=Config(retries={"mode": "standard", "total_max_attempts": 1},
                      connect_timeout=5, read_timeout=15))
    table = res.Table(name)
    with table.batch_writer() as w:
        for i in range(200):
            w.put_item(Item={"pk": "bw%03d" % i, "n": i, "s": "x" * i,
                             "set": {"a", "b%d" % i}})
    keys = [{"pk": "bw%03d" % i} for i in range(200)]
    got = []
    for lo in (0, 100):
        r = res.batch_get_item(RequestItems={name: {
            "Keys": keys[lo:lo + 100], "ConsistentRead": True}})
        assert r["UnprocessedKeys"] == {}
        got += r["Responses"][name]
    assert sorted(got, key=lambda it: it["pk"]) == [
        {"pk": "bw%03d" % i, "n": Decimal(i), "s": "x" * i,
         "set": {"a", "b%d" % i}} for i in range(200)]
    # Deletes go through it too, and it sends what it was given once.
    with table.batch_writer() as w:
        for i in range(0, 200, 2):
            w.delete_item(Key={"pk": "bw%03d" % i})
    assert ddb.describe_table(TableName=name)["Table"]["ItemCount"] == 100
    r = res.batch_get_item(RequestItems={name: {
        "Keys": keys[:100], "ConsistentRead": True,
        "ProjectionExpression": "pk"}})
    assert sorted(it["pk"] for it in r["Responses"][name]) == [
        "bw%03d" % i for i in range(1, 100, 2)]
