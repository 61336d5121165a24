"""test_expressions.py — expressions end to end through boto3: conditional
writes (ConditionExpression on PutItem, UpdateItem and DeleteItem, and
ReturnValuesOnConditionCheckFailure), every ReturnValues mode, UpdateItem's
SET / REMOVE / ADD / DELETE, nested ProjectionExpression on GetItem, the
legacy parameters (Expected, ConditionalOperator, AttributeUpdates,
AttributesToGet), and concurrency: atomic counters and racing conditional
puts.

DynamoDB's documented behaviour is the specification: every refusal is
checked for its exception, exact message and HTTP 400, and for leaving the
item as it was. Where a test pins a DynamoDB quirk (the "Number overflow"
message for a result with more than 38 digits, REMOVE a.c[1] showing in
UPDATED_NEW) the comment says so.
"""

import base64
import http.client
import json
import re
import threading
import urllib.parse
import uuid

import pytest
from botocore.exceptions import ClientError

CCF = "ConditionalCheckFailedException"
CCF_MSG = "The conditional request failed"
INVALID = "One or more parameter values were invalid: "
TYPE_MSG = "An operand in the update expression has an incorrect data type"
PATH_MSG = ("The document path provided in the update expression is "
            "invalid for update")
MISSING_MSG = ("The provided expression refers to an attribute that does "
               "not exist in the item")
OVERFLOW_MSG = ("Number overflow. Attempting to store a number with "
                "magnitude larger than supported range")


@pytest.fixture(scope="module")
def t(cluster):
    """Two tables: `h` (hash pk S) and `hr` (hash pk S, range sk N)."""
    ddb = cluster.client()
    u = uuid.uuid4().hex[:8]
    names = {"h": "expr-h-" + u, "hr": "expr-hr-" + u}
    ddb.create_table(
        TableName=names["h"],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        BillingMode="PAY_PER_REQUEST")
    ddb.create_table(
        TableName=names["hr"],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "sk", "AttributeType": "N"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                   {"AttributeName": "sk", "KeyType": "RANGE"}],
        BillingMode="PAY_PER_REQUEST")
    w = ddb.get_waiter("table_exists")
    for n in names.values():
        w.wait(TableName=n, WaiterConfig={"Delay": 1, "MaxAttempts": 20})
    return names


# ---- helpers ----

def K(pk):
    return {"pk": {"S": pk}}


def N(x):
    return {"N": str(x)}


def S(x):
    return {"S": x}


def get(ddb, table, key):
    """The item under key (strongly consistent), or None."""
    return ddb.get_item(TableName=table, Key=key,
                        ConsistentRead=True).get("Item")


def norm(v):
    """Sets come back in any order: compare them sorted."""
    if isinstance(v, dict):
        return {k: sorted(x) if k in ("SS", "NS", "BS") else norm(x)
                for k, x in v.items()}
    if isinstance(v, list):
        return [norm(x) for x in v]
    return v


def refused(fn, code, message, **kw):
    """Calls fn(**kw), which must fail with code, message and HTTP 400;
    returns the error response."""
    with pytest.raises(ClientError) as ei:
        fn(**kw)
    r = ei.value.response
    assert (r["Error"]["Code"], r["Error"]["Message"]) == (code, message)
    assert r["ResponseMetadata"]["HTTPStatusCode"] == 400
    return r


def cond_failed(fn, **kw):
    return refused(fn, CCF, CCF_MSG, **kw)


def validation(fn, message, **kw):
    return refused(fn, "ValidationException", message, **kw)


def put(ddb, table, item):
    ddb.put_item(TableName=table, Item=item)
    return item


def post(cluster, target, body):
    """Raw HTTP POST to the router; returns (status, parsed JSON body).
    For what the system's botocore (1.29) cannot send or show:
    ReturnValuesOnConditionCheckFailure on single-item writes, and the
    "Item" it adds to the error body."""
    u = urllib.parse.urlparse(cluster.endpoint)
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
    try:
        c.request("POST", "/", body=json.dumps(body).encode(), headers={
            "Content-Type": "application/x-amz-json-1.0",
            "X-Amz-Target": "DynamoDB_20120810." + target})
        r = c.getresponse()
        return r.status, json.loads(r.read())
    finally:
        c.close()


def enc(v):
    """A value as JSON: binary as base64, the rest as it is."""
    if isinstance(v, dict):
        return {k: (base64.b64encode(x).decode() if k == "B" else
                    [base64.b64encode(b).decode() for b in x] if k == "BS"
                    else enc(x)) for k, x in v.items()}
    if isinstance(v, list):
        return [enc(x) for x in v]
    return v


def raw_cond_failed(cluster, op, **body):
    """Sends op as raw HTTP; it must fail with ConditionalCheckFailed,
    HTTP 400 and DynamoDB's message. Returns the error body (JSON)."""
    status, j = post(cluster, op, enc(body))
    assert status == 400, (status, j)
    assert j["__type"].rsplit("#", 1)[-1] == CCF, j
    assert j.get("message", j.get("Message")) == CCF_MSG, j
    return j


# ---- conditional writes ----

def test_attribute_not_exists_put_succeeds_once(ddb, t):
    key = K("once")
    ddb.put_item(TableName=t["h"], Item=dict(key, v=N(1)),
                 ConditionExpression="attribute_not_exists(pk)")
    for _ in range(2):
        cond_failed(ddb.put_item, TableName=t["h"], Item=dict(key, v=N(2)),
                    ConditionExpression="attribute_not_exists(pk)")
    assert get(ddb, t["h"], key) == dict(key, v=N(1))


def test_condition_check_failure_returns_the_old_item(cluster, ddb, t):
    """ReturnValuesOnConditionCheckFailure=ALL_OLD: the error body has
    "Item", the whole old item (raw HTTP: see post())."""
    tb = t["h"]
    key = K("rvoccf")
    old = put(ddb, tb, dict(key, s=S("dog"), n=N(7), b={"B": b"\x00\xff"},
                            l={"L": [S("a"), {"M": {"x": N(1)}}]}))
    cc = {"TableName": tb, "ConditionExpression": "s = :want",
          "ExpressionAttributeValues": {":want": S("cat")}}
    # PutItem, UpdateItem and DeleteItem.
    j = raw_cond_failed(cluster, "PutItem", Item=dict(key, s=S("x")),
                        ReturnValuesOnConditionCheckFailure="ALL_OLD", **cc)
    assert j["Item"] == enc(old)
    j = raw_cond_failed(cluster, "UpdateItem", TableName=tb, Key=key,
                        UpdateExpression="SET n = n + :one",
                        ConditionExpression="s = :want",
                        ExpressionAttributeValues={":one": N(1),
                                                   ":want": S("cat")},
                        ReturnValuesOnConditionCheckFailure="ALL_OLD")
    assert j["Item"] == enc(old)
    j = raw_cond_failed(cluster, "DeleteItem", Key=key,
                        ReturnValuesOnConditionCheckFailure="ALL_OLD", **cc)
    assert j["Item"] == enc(old)
    # The legacy Expected too.
    j = raw_cond_failed(cluster, "PutItem", TableName=tb, Item=key,
                        Expected={"pk": {"Exists": False}},
                        ReturnValuesOnConditionCheckFailure="ALL_OLD")
    assert j["Item"] == enc(old)
    # NONE (and the default) return no item.
    j = raw_cond_failed(cluster, "DeleteItem", Key=key,
                        ReturnValuesOnConditionCheckFailure="NONE", **cc)
    assert "Item" not in j
    j = raw_cond_failed(cluster, "DeleteItem", Key=key, **cc)
    assert "Item" not in j
    # Through boto3 the exception is the modelled one.
    with pytest.raises(ddb.exceptions.ConditionalCheckFailedException):
        ddb.delete_item(Key=key, **cc)
    assert get(ddb, tb, key) == old
    # A successful conditional write returns neither Item nor Attributes.
    status, j = post(cluster, "PutItem", enc({
        "TableName": tb, "Item": old, "ConditionExpression": "s = :want",
        "ExpressionAttributeValues": {":want": S("dog")},
        "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}))
    assert (status, j) == (200, {})
    assert get(ddb, tb, key) == old


def test_condition_check_failure_on_a_missing_item_has_no_item(cluster, ddb,
                                                              t):
    key = K("rvoccf-missing")
    for op, kw in [("PutItem", {"Item": dict(key, s=S("x"))}),
                   ("DeleteItem", {"Key": key}),
                   ("UpdateItem", {"Key": key,
                                   "UpdateExpression": "SET s = :v"})]:
        j = raw_cond_failed(cluster, op, TableName=t["h"],
                            ConditionExpression="s = :v",
                            ExpressionAttributeValues={":v": S("x")},
                            ReturnValuesOnConditionCheckFailure="ALL_OLD",
                            **kw)
        assert "Item" not in j, op
    assert get(ddb, t["h"], key) is None


def test_conditions_on_a_missing_item(ddb, t):
    tb = t["h"]
    # A condition on a missing item sees no attributes at all.
    key = K("cond-missing")
    for fn, kw in [(ddb.put_item, {"Item": dict(key, v=N(1))}),
                   (ddb.update_item, {"Key": key,
                                      "UpdateExpression": "SET v = :one",
                                      "ExpressionAttributeValues":
                                      {":one": N(1)}}),
                   (ddb.delete_item, {"Key": key})]:
        cond_failed(fn, TableName=tb,
                    ConditionExpression="attribute_exists(pk)", **kw)
    assert get(ddb, tb, key) is None
    # <> and NOT of a comparison are true on a missing attribute.
    ddb.update_item(TableName=tb, Key=key, UpdateExpression="SET v = :one",
                    ConditionExpression="v <> :one AND NOT (v = :one) AND "
                    "attribute_not_exists(v) AND attribute_not_exists(pk)",
                    ExpressionAttributeValues={":one": N(1)})
    assert get(ddb, tb, key) == dict(key, v=N(1))
    # DeleteItem with a condition that holds on a missing item succeeds
    # and deletes nothing.
    key2 = K("cond-missing-2")
    r = ddb.delete_item(TableName=tb, Key=key2,
                        ConditionExpression="attribute_not_exists(pk)",
                        ReturnValues="ALL_OLD")
    assert "Attributes" not in r
    assert get(ddb, tb, key2) is None


COND_ITEM = {
    "n": N(5), "s": S("héllo"), "b": {"B": b"\x01\x02\x03"},
    "ss": {"SS": ["a", "b"]}, "ns": {"NS": ["1", "2", "3"]},
    "l": {"L": [S("x"), N(1)]}, "m": {"M": {"k": S("v"), "z": N(0)}},
    "t": {"BOOL": True}, "nul": {"NULL": True},
}
COND_VALUES = {
    ":five": N(5), ":six": N(6), ":seven": N(7), ":one": N(1), ":two": N(2),
    ":three": N(3), ":zero": N(0), ":sfive": S("5"), ":x": S("x"),
    ":he": S("hé"), ":ll": S("ll"), ":a": S("a"), ":v": S("v"),
    ":hi": S("hi"), ":b12": {"B": b"\x01\x02"}, ":true": {"BOOL": True},
    ":tSS": S("SS"), ":tNULL": S("NULL"), ":tS": S("S"), ":tN": S("N"),
}


@pytest.mark.parametrize("cond, holds", [
    ("n = :five", True), ("n <> :five", False), ("n < :six", True),
    ("n <= :five", True), ("n > :five", False), ("n >= :six", False),
    ("n BETWEEN :five AND :six", True), ("n BETWEEN :six AND :seven", False),
    ("n IN (:six, :five)", True), ("n IN (:six, :seven)", False),
    ("begins_with(s, :he)", True), ("begins_with(s, :x)", False),
    ("begins_with(b, :b12)", True),
    ("contains(s, :ll)", True), ("contains(ss, :a)", True),
    ("contains(ss, :x)", False), ("contains(l, :x)", True),
    ("contains(ns, :five)", False),
    # size: UTF-8 bytes of a string, bytes of a binary, members of the rest.
    ("size(s) = :six", True), ("size(b) = :three", True),
    ("size(ss) = :two", True), ("size(ns) = :three", True),
    ("size(l) = :two", True), ("size(m) = :two", True),
    ("size(absent) >= :zero", False),
    ("attribute_type(ss, :tSS)", True), ("attribute_type(n, :tSS)", False),
    ("attribute_type(nul, :tNULL)", True), ("attribute_type(m.k, :tS)", True),
    ("attribute_type(l[1], :tN)", True),
    ("n = :five AND s = :x", False), ("n = :five OR s = :x", True),
    ("NOT n = :five", False),
    ("NOT (n = :six AND s = :x) AND (n = :five OR n = :six)", True),
    ("absent = :five", False), ("absent <> :five", True),
    ("NOT absent = :five", True),
    # Different types never compare equal; ordering needs the same type.
    ("n = :sfive", False), ("n <> :sfive", True), ("n < :sfive", False),
    ("m.k = :v", True), ("l[0] = :x", True), ("l[1] = :one", True),
    ("attribute_exists(m.z)", True), ("attribute_not_exists(l[5])", True),
    # Strings order by UTF-8 bytes: "é" (0xC3 0xA9) sorts after "i".
    ("s > :hi", True), ("t = :true", True),
])
def test_condition_operators(ddb, t, cond, holds):
    key = K("ops")
    item = put(ddb, t["h"], dict(key, **COND_ITEM))
    used = set(re.findall(r":\w+", cond))
    kw = {"ConditionExpression": cond}
    if used:
        kw["ExpressionAttributeValues"] = {k: v for k, v in
                                           COND_VALUES.items() if k in used}
    if holds:
        ddb.update_item(TableName=t["h"], Key=key,
                        UpdateExpression="SET marker = :marker",
                        ExpressionAttributeValues=dict(
                            kw.get("ExpressionAttributeValues", {}),
                            **{":marker": S(cond)}),
                        ConditionExpression=cond)
        assert get(ddb, t["h"], key)["marker"] == S(cond)
    else:
        cond_failed(ddb.put_item, TableName=t["h"], Item=dict(key, v=N(1)),
                    **kw)
        cond_failed(ddb.delete_item, TableName=t["h"], Key=key, **kw)
        assert norm(get(ddb, t["h"], key)) == norm(item)


DOC_ITEM = {
    "ss": {"SS": ["b", "a", "c"]}, "ns": {"NS": ["1", "10", "2"]},
    "bs": {"BS": [b"\x02", b"\x01"]}, "l": {"L": [N(1), S("x")]},
    "m": {"M": {"a": N(1), "b": {"SS": ["q", "p"]}}}, "n": N(100),
}


@pytest.mark.parametrize("cond, value, holds", [
    # Sets are equal whatever the order; numbers by value.
    ("ss = :v", {"SS": ["c", "a", "b"]}, True),
    ("ns = :v", {"NS": ["2", "1E1", "1"]}, True),
    ("bs = :v", {"BS": [b"\x01", b"\x02"]}, True),
    ("ss = :v", {"SS": ["a", "b"]}, False),
    # Lists in order, maps by member.
    ("l = :v", {"L": [N("1.0"), S("x")]}, True),
    ("l = :v", {"L": [S("x"), N(1)]}, False),
    ("m = :v", {"M": {"b": {"SS": ["p", "q"]}, "a": N(1)}}, True),
    ("m.b = :v", {"SS": ["q", "p"]}, True),
    ("n = :v", N("1E2"), True),
    ("contains(ns, :v)", N("1E1"), True),
    ("contains(ss, :v)", N(1), False),
    ("contains(bs, :v)", {"B": b"\x02"}, True),
    ("contains(m, :v)", S("a"), False),
    ("begins_with(n, :v)", S("1"), False),
    # Full 38-digit precision in comparisons.
    ("n > :v", N("99.999999999999999999999999999999999999"), True),
    ("n < :v", N("100.00000000000000000000000000000000001"), True),
])
def test_equality_of_sets_and_documents(ddb, t, cond, value, holds):
    key = K("docs")
    item = put(ddb, t["h"], dict(key, **DOC_ITEM))
    kw = {"TableName": t["h"], "Key": key, "ConditionExpression": cond,
          "ExpressionAttributeValues": {":v": value}}
    if holds:
        ddb.delete_item(**kw)
        assert get(ddb, t["h"], key) is None
    else:
        cond_failed(ddb.delete_item, **kw)
        assert norm(get(ddb, t["h"], key)) == norm(item)


def test_failed_condition_leaves_the_item_unchanged(ddb, t):
    tb = t["h"]
    key = K("unchanged")
    item = put(ddb, tb, dict(key, n=N(1), ss={"SS": ["a"]}))
    cc = {"ConditionExpression": "n > :n",
          "ExpressionAttributeValues": {":n": N(1)}}
    cond_failed(ddb.put_item, TableName=tb, Item=dict(key, other=N(1)), **cc)
    cond_failed(ddb.delete_item, TableName=tb, Key=key, **cc)
    cond_failed(ddb.update_item, TableName=tb, Key=key,
                UpdateExpression="SET n = :n REMOVE ss",
                ConditionExpression="n > :n",
                ExpressionAttributeValues={":n": N(1)})
    assert get(ddb, tb, key) == item


def test_update_condition_sees_the_item_before_the_update(ddb, t):
    tb = t["h"]
    key = K("cas")
    put(ddb, tb, dict(key, version=N(1)))
    r = ddb.update_item(TableName=tb, Key=key,
                        UpdateExpression="SET version = version + :one",
                        ConditionExpression="version = :one",
                        ExpressionAttributeValues={":one": N(1)},
                        ReturnValues="UPDATED_NEW")
    assert r["Attributes"] == {"version": N(2)}
    # The same compare-and-set again fails: version is 2 now.
    cond_failed(ddb.update_item, TableName=tb, Key=key,
                UpdateExpression="SET version = version + :one",
                ConditionExpression="version = :one",
                ExpressionAttributeValues={":one": N(1)})
    assert get(ddb, tb, key) == dict(key, version=N(2))


# ---- ReturnValues ----

def test_update_item_every_return_values_mode(ddb, t):
    tb = t["h"]
    key = K("rv-flat")
    base = dict(key, a=S("hi"), b=S("dog"), gone=N(1))
    upd = {"UpdateExpression": "SET b = :b, c = :c REMOVE gone",
           "ExpressionAttributeValues": {":b": S("cat"), ":c": S("new")}}
    new = dict(key, a=S("hi"), b=S("cat"), c=S("new"))
    want = {
        "NONE": None,
        "ALL_OLD": base,
        # Only what the update touched: b and gone existed, c did not.
        "UPDATED_OLD": {"b": S("dog"), "gone": N(1)},
        "ALL_NEW": new,
        # Removed attributes are not in UPDATED_NEW.
        "UPDATED_NEW": {"b": S("cat"), "c": S("new")},
    }
    for mode, attrs in want.items():
        put(ddb, tb, base)
        r = ddb.update_item(TableName=tb, Key=key, ReturnValues=mode, **upd)
        assert r.get("Attributes") == attrs, mode
        assert get(ddb, tb, key) == new, mode
    # The default is NONE.
    put(ddb, tb, base)
    assert "Attributes" not in ddb.update_item(TableName=tb, Key=key, **upd)


def test_update_item_return_values_of_nested_paths(ddb, t):
    tb = t["h"]
    key = K("rv-nested")
    base = dict(key, a={"M": {"b": S("dog"), "c": {"L": [N(1), N(2), N(3)]}}},
                d=S("cat"))
    upd = {"UpdateExpression": "SET a.b = :v, a.c[1] = :n",
           "ExpressionAttributeValues": {":v": S("hi"), ":n": N(9)}}
    new = dict(key, a={"M": {"b": S("hi"), "c": {"L": [N(1), N(9), N(3)]}}},
               d=S("cat"))
    want = {
        "NONE": None,
        "ALL_OLD": base,
        "UPDATED_OLD": {"a": {"M": {"b": S("dog"), "c": {"L": [N(2)]}}}},
        "ALL_NEW": new,
        "UPDATED_NEW": {"a": {"M": {"b": S("hi"), "c": {"L": [N(9)]}}}},
    }
    for mode, attrs in want.items():
        put(ddb, tb, base)
        r = ddb.update_item(TableName=tb, Key=key, ReturnValues=mode, **upd)
        assert r.get("Attributes") == attrs, mode
        assert get(ddb, tb, key) == new, mode
    # SET a.b alone: UPDATED_NEW is {"a": {"M": {"b": ...}}}, not all of a.
    r = ddb.update_item(TableName=tb, Key=key, ReturnValues="UPDATED_NEW",
                        UpdateExpression="SET a.b = :v",
                        ExpressionAttributeValues={":v": S("yo")})
    assert r["Attributes"] == {"a": {"M": {"b": S("yo")}}}
    # A new member: nothing old, only new.
    r = ddb.update_item(TableName=tb, Key=key, ReturnValues="UPDATED_OLD",
                        UpdateExpression="SET a.x1 = :v",
                        ExpressionAttributeValues={":v": N(8)})
    assert "Attributes" not in r
    r = ddb.update_item(TableName=tb, Key=key, ReturnValues="UPDATED_NEW",
                        UpdateExpression="SET a.x2 = :v",
                        ExpressionAttributeValues={":v": N(8)})
    assert r["Attributes"] == {"a": {"M": {"x2": N(8)}}}
    # REMOVE of list elements: UPDATED_OLD has those that existed.
    r = ddb.update_item(TableName=tb, Key=key, ReturnValues="UPDATED_OLD",
                        UpdateExpression="REMOVE a.c[1], a.c[3]")
    assert r["Attributes"] == {"a": {"M": {"c": {"L": [N(9)]}}}}
    # DynamoDB's quirk: after REMOVE a.c[1] the element now at a.c[1] is
    # what UPDATED_NEW shows.
    r = ddb.update_item(TableName=tb, Key=key, ReturnValues="UPDATED_NEW",
                        UpdateExpression="REMOVE a.c[0]")
    assert r["Attributes"] == {"a": {"M": {"c": {"L": [N(3)]}}}}
    assert get(ddb, tb, key)["a"] == {"M": {
        "b": S("yo"), "c": {"L": [N(3)]}, "x1": N(8), "x2": N(8)}}


def test_update_item_return_values_when_the_item_is_created(ddb, t):
    tb = t["h"]
    for mode, attrs in [("ALL_OLD", None), ("UPDATED_OLD", None),
                        ("ALL_NEW", dict(K("rv-new-ALL_NEW"), v=N(1))),
                        # Key attributes are not "updated" attributes.
                        ("UPDATED_NEW", {"v": N(1)})]:
        key = K("rv-new-" + mode)
        r = ddb.update_item(TableName=tb, Key=key, ReturnValues=mode,
                            UpdateExpression="SET v = :one",
                            ExpressionAttributeValues={":one": N(1)})
        assert r.get("Attributes") == attrs, mode
        assert get(ddb, tb, key) == dict(key, v=N(1))


def test_put_and_delete_return_values_all_old(ddb, t):
    tb = t["h"]
    key = K("rv-pd")
    r = ddb.put_item(TableName=tb, Item=dict(key, v=N(1)),
                     ReturnValues="ALL_OLD")
    assert "Attributes" not in r
    r = ddb.put_item(TableName=tb, Item=dict(key, w=N(2)),
                     ReturnValues="ALL_OLD",
                     ConditionExpression="v = :one",
                     ExpressionAttributeValues={":one": N(1)})
    assert r["Attributes"] == dict(key, v=N(1))
    r = ddb.put_item(TableName=tb, Item=dict(key, w=N(3)),
                     ReturnValues="NONE")
    assert "Attributes" not in r
    r = ddb.delete_item(TableName=tb, Key=key, ReturnValues="ALL_OLD",
                        ConditionExpression="attribute_exists(w)")
    assert r["Attributes"] == dict(key, w=N(3))
    assert get(ddb, tb, key) is None


def test_put_and_delete_refuse_other_return_values(raw_ddb, ddb, t):
    tb = t["h"]
    key = K("rv-refused")
    item = put(ddb, tb, dict(key, v=N(1)))
    for mode in ("UPDATED_NEW", "UPDATED_OLD", "ALL_NEW"):
        validation(raw_ddb.put_item, "ReturnValues can only be ALL_OLD or "
                   "NONE", TableName=tb, Item=dict(key, v=N(2)),
                   ReturnValues=mode)
        validation(raw_ddb.delete_item, "ReturnValues can only be ALL_OLD "
                   "or NONE", TableName=tb, Key=key, ReturnValues=mode)
    assert get(ddb, tb, key) == item


# ---- update semantics ----

def test_update_item_creates_a_missing_item_with_its_key(ddb, t):
    key = K("create")
    ddb.update_item(TableName=t["h"], Key=key, UpdateExpression="SET v = :v",
                    ExpressionAttributeValues={":v": S("x")})
    assert get(ddb, t["h"], key) == dict(key, v=S("x"))
    # With a range key both key attributes are in the new item.
    rkey = {"pk": S("create"), "sk": N("1.50")}
    ddb.update_item(TableName=t["hr"], Key=rkey, UpdateExpression="ADD c :one",
                    ExpressionAttributeValues={":one": N(1)})
    assert get(ddb, t["hr"], rkey) == {"pk": S("create"), "sk": N("1.5"),
                                       "c": N(1)}
    # Without any update expression the item is created with its key only.
    key = K("create-empty")
    r = ddb.update_item(TableName=t["h"], Key=key, ReturnValues="ALL_NEW")
    assert r["Attributes"] == key
    assert get(ddb, t["h"], key) == key


def test_update_that_only_removes_does_not_create_the_item(ddb, t):
    """DynamoDB does not create a missing item for an update that only
    removes: REMOVE, DELETE from a set, AttributeUpdates DELETE. (An
    empty update does create it: see the test above.)"""
    tb = t["h"]
    cases = [
        ("remove", {"UpdateExpression": "REMOVE a"}),
        ("remove-2", {"UpdateExpression": "REMOVE a, b"}),
        ("delete-set", {"UpdateExpression": "DELETE s :s",
                        "ExpressionAttributeValues": {":s":
                                                      {"SS": ["x"]}}}),
        ("legacy-delete", {"AttributeUpdates": {"a": {"Action":
                                                      "DELETE"}}}),
        ("legacy-delete-set", {"AttributeUpdates": {"s": {
            "Action": "DELETE", "Value": {"SS": ["x"]}}}}),
    ]
    created = []
    for name, kw in cases:
        key = K("only-removes-" + name)
        r = ddb.update_item(TableName=tb, Key=key, ReturnValues="ALL_NEW",
                            **kw)
        if "Attributes" in r or get(ddb, tb, key) is not None:
            created.append("%s -> Attributes %r, stored %r" % (
                name, r.get("Attributes"), get(ddb, tb, key)))
    assert not created, "updates that only remove created items:\n" + \
        "\n".join(created)


def test_remove_of_a_nested_path_on_a_missing_item_is_ignored(ddb, t):
    """DynamoDB refuses REMOVE x.y when the item exists without x, but
    accepts it (and creates nothing) when the whole item is missing."""
    tb = t["h"]
    key = K("remove-nested-missing")
    ddb.update_item(TableName=tb, Key=key, UpdateExpression="REMOVE x.y")
    assert get(ddb, tb, key) is None
    item = put(ddb, tb, dict(key, a=S("hello")))
    validation(ddb.update_item, PATH_MSG, TableName=tb, Key=key,
               UpdateExpression="REMOVE x.y")
    assert get(ddb, tb, key) == item


def test_set_arithmetic(ddb, t):
    tb = t["h"]
    key = K("arith")
    put(ddb, tb, dict(key, n=N(10), m=N("2.5")))
    r = ddb.update_item(
        TableName=tb, Key=key, ReturnValues="UPDATED_NEW",
        UpdateExpression="SET n = n + :d, m = :d - m, c = n - m, "
        "z = :big + :one",
        ExpressionAttributeValues={":d": N("0.25"), ":one": N(1),
                                   ":big": N("1" + "0" * 22)})
    # SET operands are read from the item before any SET is applied.
    assert r["Attributes"] == {"n": N("10.25"), "m": N("-2.25"),
                               "c": N("7.5"), "z": N("1" + "0" * 21 + "1")}
    # 38 significant digits are exact.
    big = "9" * 38
    ddb.update_item(TableName=tb, Key=key,
                    UpdateExpression="SET n = :big - :one",
                    ExpressionAttributeValues={":big": N(big),
                                               ":one": N(1)})
    assert get(ddb, tb, key)["n"] == N("9" * 37 + "8")
    r = ddb.update_item(TableName=tb, Key=key, ReturnValues="UPDATED_NEW",
                        UpdateExpression="SET n = n + :two",
                        ExpressionAttributeValues={":two": N(2)})
    assert r["Attributes"] == {"n": N("1" + "0" * 38)}


def test_if_not_exists(ddb, t):
    tb = t["h"]
    key = K("ifne")
    r = ddb.update_item(
        TableName=tb, Key=key, ReturnValues="ALL_NEW",
        UpdateExpression="SET c = if_not_exists(c, :zero) + :one, "
        "created = if_not_exists(created, :now)",
        ExpressionAttributeValues={":zero": N(0), ":one": N(1),
                                   ":now": S("t1")})
    assert r["Attributes"] == dict(key, c=N(1), created=S("t1"))
    r = ddb.update_item(
        TableName=tb, Key=key, ReturnValues="ALL_NEW",
        UpdateExpression="SET c = if_not_exists(c, :zero) + :one, "
        "created = if_not_exists(created, :now)",
        ExpressionAttributeValues={":zero": N(0), ":one": N(1),
                                   ":now": S("t2")})
    assert r["Attributes"] == dict(key, c=N(2), created=S("t1"))
    # if_not_exists of a nested path and of another attribute.
    r = ddb.update_item(
        TableName=tb, Key=key, ReturnValues="UPDATED_NEW",
        UpdateExpression="SET x = if_not_exists(created, :d), "
        "y = if_not_exists(m.absent, :d)",
        ExpressionAttributeValues={":d": S("dflt")})
    assert r["Attributes"] == {"x": S("t1"), "y": S("dflt")}


def test_list_append(ddb, t):
    tb = t["h"]
    key = K("lappend")
    put(ddb, tb, dict(key, l={"L": [N(2), N(3)]}))
    ddb.update_item(TableName=tb, Key=key,
                    UpdateExpression="SET l = list_append(l, :tail)",
                    ExpressionAttributeValues={":tail": {"L": [N(4)]}})
    ddb.update_item(TableName=tb, Key=key,
                    UpdateExpression="SET l = list_append(:head, l)",
                    ExpressionAttributeValues={":head": {"L": [N(1)]}})
    assert get(ddb, tb, key)["l"] == {"L": [N(1), N(2), N(3), N(4)]}
    # Creating the list with if_not_exists; elements of any type.
    ddb.update_item(TableName=tb, Key=key,
                    UpdateExpression="SET n = list_append("
                    "if_not_exists(n, :empty), :v)",
                    ExpressionAttributeValues={":empty": {"L": []},
                                               ":v": {"L": [S("a"),
                                                            {"M": {}}]}})
    assert get(ddb, tb, key)["n"] == {"L": [S("a"), {"M": {}}]}


def test_remove_list_elements(ddb, t):
    tb = t["h"]
    key = K("lremove")
    put(ddb, tb, dict(key, a={"L": [N(i) for i in range(2, 8)]}, b=N(1)))
    # Indexes refer to the list before the update; order does not matter.
    ddb.update_item(TableName=tb, Key=key,
                    UpdateExpression="SET a[3] = :v REMOVE a[1], b",
                    ExpressionAttributeValues={":v": N(17)})
    assert get(ddb, tb, key) == dict(key, a={"L": [N(2), N(4), N(17), N(6),
                                                  N(7)]})
    # Beyond the end: REMOVE is ignored, SET appends (in index order).
    ddb.update_item(TableName=tb, Key=key, UpdateExpression="REMOVE a[17]")
    ddb.update_item(TableName=tb, Key=key,
                    UpdateExpression="SET a[84] = :x, a[37] = :y",
                    ExpressionAttributeValues={":x": S("x"), ":y": S("y")})
    assert get(ddb, tb, key)["a"] == {"L": [N(2), N(4), N(17), N(6), N(7),
                                            S("y"), S("x")]}
    ddb.update_item(TableName=tb, Key=key,
                    UpdateExpression="REMOVE a[0], a[1], a[2], a[3], a[4], "
                    "a[5], a[6]")
    assert get(ddb, tb, key)["a"] == {"L": []}


def test_set_and_remove_nested_map_members(ddb, t):
    tb = t["h"]
    key = K("nested")
    put(ddb, tb, dict(key, a={"M": {"b": N(3), "c": {"L": [
        S("hi"), {"M": {"x": {"M": {"y": {"L": [N(3), N(5), N(7)]}}},
                        "q": N(2)}}]}}}))
    ddb.update_item(TableName=tb, Key=key,
                    UpdateExpression="SET a.c[1].#n.y[1] = :v, a.d = :v "
                    "REMOVE a.c[1].q",
                    ExpressionAttributeNames={"#n": "x"},
                    ExpressionAttributeValues={":v": N(9)})
    assert get(ddb, tb, key)["a"] == {"M": {"b": N(3), "d": N(9), "c": {"L": [
        S("hi"), {"M": {"x": {"M": {"y": {"L": [N(3), N(9), N(7)]}}}}}]}}}
    # A name with a dot, through a placeholder, is one top-level attribute.
    ddb.update_item(TableName=tb, Key=key, UpdateExpression="SET #d = :v",
                    ExpressionAttributeNames={"#d": "a.b"},
                    ExpressionAttributeValues={":v": N(1)})
    item = get(ddb, tb, key)
    assert item["a.b"] == N(1) and "b" in item["a"]["M"]


def test_add_to_numbers_and_sets(ddb, t):
    tb = t["h"]
    key = K("add")
    r = ddb.update_item(
        TableName=tb, Key=key, ReturnValues="ALL_NEW",
        UpdateExpression="ADD n :five, ss :ab, ns :n12, bs :b1",
        ExpressionAttributeValues={":five": N(5), ":ab": {"SS": ["a", "b"]},
                                   ":n12": {"NS": ["1", "2"]},
                                   ":b1": {"BS": [b"\x01"]}})
    assert norm(r["Attributes"]) == norm(dict(
        key, n=N(5), ss={"SS": ["a", "b"]}, ns={"NS": ["1", "2"]},
        bs={"BS": [b"\x01"]}))
    r = ddb.update_item(
        TableName=tb, Key=key, ReturnValues="UPDATED_NEW",
        UpdateExpression="ADD n :neg, ss :bc, ns :n23, bs :b2",
        ExpressionAttributeValues={":neg": N("-7.5"),
                                   ":bc": {"SS": ["b", "c"]},
                                   ":n23": {"NS": ["2", "3"]},
                                   ":b2": {"BS": [b"\x02"]}})
    assert norm(r["Attributes"]) == norm({
        "n": N("-2.5"), "ss": {"SS": ["a", "b", "c"]},
        "ns": {"NS": ["1", "2", "3"]}, "bs": {"BS": [b"\x01", b"\x02"]}})


def test_delete_from_sets(ddb, t):
    tb = t["h"]
    key = K("delete")
    put(ddb, tb, dict(key, ss={"SS": ["dog", "cat", "mouse"]},
                      ns={"NS": ["1", "2"]}, keep=S("x")))
    ddb.update_item(TableName=tb, Key=key, UpdateExpression="DELETE ss :v",
                    ExpressionAttributeValues={":v": {"SS": ["cat", "mouse",
                                                             "pig"]}})
    assert get(ddb, tb, key)["ss"] == {"SS": ["dog"]}
    # Deleting the last elements removes the attribute (no empty sets).
    r = ddb.update_item(TableName=tb, Key=key, ReturnValues="ALL_NEW",
                        UpdateExpression="DELETE ss :a, ns :b",
                        ExpressionAttributeValues={
                            ":a": {"SS": ["dog"]},
                            ":b": {"NS": ["2", "1", "5"]}})
    assert r["Attributes"] == dict(key, keep=S("x"))
    # From an attribute that does not exist: nothing happens.
    ddb.update_item(TableName=tb, Key=key, UpdateExpression="DELETE ss :a",
                    ExpressionAttributeValues={":a": {"SS": ["dog"]}})
    assert get(ddb, tb, key) == dict(key, keep=S("x"))


# ---- refused updates: message, HTTP 400, item unchanged ----

ERR_ITEM = {"n": N(1), "s": S("text"), "ss": {"SS": ["a"]},
            "l": {"L": [N(1)]}, "m": {"M": {"x": N(1)}}}

UPDATE_ERRORS = [
    ("key-set", {"UpdateExpression": "SET pk = :v",
                 "ExpressionAttributeValues": {":v": S("other")}},
     INVALID + "Cannot update attribute pk. This attribute is part of the "
     "key"),
    ("key-remove", {"UpdateExpression": "REMOVE pk"},
     INVALID + "Cannot update attribute pk. This attribute is part of the "
     "key"),
    ("key-placeholder", {"UpdateExpression": "SET #k = :v",
                         "ExpressionAttributeNames": {"#k": "pk"},
                         "ExpressionAttributeValues": {":v": S("o")}},
     INVALID + "Cannot update attribute pk. This attribute is part of the "
     "key"),
    ("key-legacy", {"AttributeUpdates": {"pk": {"Action": "PUT",
                                                "Value": S("o")}}},
     INVALID + "Cannot update attribute pk. This attribute is part of the "
     "key"),
    ("arith-string", {"UpdateExpression": "SET n = s + :one",
                      "ExpressionAttributeValues": {":one": N(1)}},
     TYPE_MSG),
    ("arith-string-right", {"UpdateExpression": "SET n = :one - s",
                            "ExpressionAttributeValues": {":one": N(1)}},
     TYPE_MSG),
    ("arith-string-value", {"UpdateExpression": "SET n = n + :v",
                            "ExpressionAttributeValues": {":v": S("1")}},
     "Invalid UpdateExpression: Incorrect operand type for operator or "
     "function; operator or function: +, operand type: S"),
    ("missing-operand", {"UpdateExpression": "SET n = absent + :one",
                         "ExpressionAttributeValues": {":one": N(1)}},
     MISSING_MSG),
    ("missing-copy", {"UpdateExpression": "SET n = absent"}, MISSING_MSG),
    ("missing-list-append", {
        "UpdateExpression": "SET l = list_append(absent, :l)",
        "ExpressionAttributeValues": {":l": {"L": [N(1)]}}}, MISSING_MSG),
    ("path-missing-parent", {"UpdateExpression": "SET absent.b = :v",
                             "ExpressionAttributeValues": {":v": N(1)}},
     PATH_MSG),
    ("path-scalar-parent", {"UpdateExpression": "SET s.b = :v",
                            "ExpressionAttributeValues": {":v": N(1)}},
     PATH_MSG),
    ("path-index-of-map", {"UpdateExpression": "SET m[0] = :v",
                           "ExpressionAttributeValues": {":v": N(1)}},
     PATH_MSG),
    ("path-remove", {"UpdateExpression": "REMOVE absent.b"}, PATH_MSG),
    ("add-set-to-number", {"UpdateExpression": "ADD n :v",
                           "ExpressionAttributeValues": {":v":
                                                         {"SS": ["x"]}}},
     TYPE_MSG),
    ("add-other-set-type", {"UpdateExpression": "ADD ss :v",
                            "ExpressionAttributeValues": {":v":
                                                          {"NS": ["1"]}}},
     TYPE_MSG),
    ("add-string", {"UpdateExpression": "ADD n :v",
                    "ExpressionAttributeValues": {":v": S("1")}},
     "Invalid UpdateExpression: Incorrect operand type for operator or "
     "function; operator: ADD, operand type: STRING"),
    ("delete-from-number", {"UpdateExpression": "DELETE n :v",
                            "ExpressionAttributeValues": {":v":
                                                          {"NS": ["1"]}}},
     TYPE_MSG),
    ("delete-string", {"UpdateExpression": "DELETE ss :v",
                       "ExpressionAttributeValues": {":v": S("a")}},
     "Invalid UpdateExpression: Incorrect operand type for operator or "
     "function; operator: DELETE, operand type: STRING"),
    ("list-append-not-list", {
        "UpdateExpression": "SET l = list_append(l, :v)",
        "ExpressionAttributeValues": {":v": S("x")}},
     "Invalid UpdateExpression: Incorrect operand type for operator or "
     "function; operator or function: list_append, operand type: S"),
    ("list-append-on-string", {
        "UpdateExpression": "SET l = list_append(s, :v)",
        "ExpressionAttributeValues": {":v": {"L": []}}}, TYPE_MSG),
    ("syntax-operator", {"UpdateExpression": "SET n = n / :one",
                         "ExpressionAttributeValues": {":one": N(1)}},
     'Invalid UpdateExpression: Syntax error; token: "/", near: "n / :one"'),
    ("syntax-eof", {"UpdateExpression": "SET n = :one +",
                    "ExpressionAttributeValues": {":one": N(1)}},
     'Invalid UpdateExpression: Syntax error; token: "<EOF>", near: "+"'),
    ("syntax-two-names", {"UpdateExpression": "SET a b"},
     'Invalid UpdateExpression: Syntax error; token: "b", near: "a b"'),
    ("empty", {"UpdateExpression": ""},
     "Invalid UpdateExpression: The expression can not be empty;"),
    ("reserved", {"UpdateExpression": "SET status = :v",
                  "ExpressionAttributeValues": {":v": N(1)}},
     "Invalid UpdateExpression: Attribute name is a reserved keyword; "
     "reserved keyword: status"),
    ("reserved-condition", {"UpdateExpression": "SET n = :v",
                            "ConditionExpression": "attribute_exists(name)",
                            "ExpressionAttributeValues": {":v": N(1)}},
     "Invalid ConditionExpression: Attribute name is a reserved keyword; "
     "reserved keyword: name"),
    ("undefined-value", {"UpdateExpression": "SET n = :nope",
                         "ExpressionAttributeValues": {":v": N(1)}},
     "Invalid UpdateExpression: An expression attribute value used in "
     "expression is not defined; attribute value: :nope"),
    ("undefined-name", {"UpdateExpression": "SET #nope = :v",
                        "ExpressionAttributeValues": {":v": N(1)}},
     "Invalid UpdateExpression: An expression attribute name used in the "
     "document path is not defined; attribute name: #nope"),
    ("unused-value", {"UpdateExpression": "SET n = :v",
                      "ExpressionAttributeValues": {":v": N(1),
                                                    ":unused": N(2)}},
     "Value provided in ExpressionAttributeValues unused in expressions: "
     "keys: {:unused}"),
    ("unused-name", {"UpdateExpression": "SET n = :v",
                     "ExpressionAttributeNames": {"#unused": "x"},
                     "ExpressionAttributeValues": {":v": N(1)}},
     "Value provided in ExpressionAttributeNames unused in expressions: "
     "keys: {#unused}"),
    ("empty-values", {"UpdateExpression": "REMOVE n",
                      "ExpressionAttributeValues": {}},
     "ExpressionAttributeValues must not be empty"),
    ("overlap", {"UpdateExpression": "SET n = :v REMOVE n",
                 "ExpressionAttributeValues": {":v": N(1)}},
     "Invalid UpdateExpression: Two document paths overlap with each "
     "other; must remove or rewrite one of these paths; path one: [n], "
     "path two: [n]"),
    ("mixed-expected-update", {"UpdateExpression": "SET n = :v",
                               "ExpressionAttributeValues": {":v": N(1)},
                               "Expected": {"n": {"Exists": False}}},
     "Can not use both expression and non-expression parameters in the "
     "same request: Non-expression parameters: {Expected} Expression "
     "parameters: {UpdateExpression}"),
    ("mixed-attribute-updates", {
        "AttributeUpdates": {"n": {"Action": "PUT", "Value": N(2)}},
        "ConditionExpression": "attribute_exists(n)"},
     "Can not use both expression and non-expression parameters in the "
     "same request: Non-expression parameters: {AttributeUpdates} "
     "Expression parameters: {ConditionExpression}"),
    # 10^50 + 1 needs 51 significant digits. DynamoDB calls that an
    # overflow, and so do we.
    ("overflow-precision", {"UpdateExpression": "SET n = :a + :b",
                            "ExpressionAttributeValues": {
                                ":a": N("1E+50"), ":b": N(1)}},
     OVERFLOW_MSG),
    ("overflow-38-digits", {"UpdateExpression": "SET n = :a + :b",
                            "ExpressionAttributeValues": {
                                ":a": N("1234567890" * 3 + "12345678"),
                                ":b": N("0.1")}},
     OVERFLOW_MSG),
    ("overflow-magnitude", {"UpdateExpression": "SET n = :a - :b",
                            "ExpressionAttributeValues": {
                                ":a": N("-9E+125"), ":b": N("9E+125")}},
     OVERFLOW_MSG),
    ("legacy-type-mismatch", {"AttributeUpdates": {"ss": {
        "Action": "ADD", "Value": {"NS": ["1"]}}}},
     "Type mismatch for attribute to update"),
    ("legacy-add-string", {"AttributeUpdates": {"n": {
        "Action": "ADD", "Value": S("x")}}},
     INVALID + "ADD action is not supported for the type S"),
    ("legacy-put-without-value", {"AttributeUpdates": {"n": {
        "Action": "PUT"}}},
     INVALID + "Only DELETE action is allowed when no attribute value is "
     "specified"),
]


@pytest.mark.parametrize("name, kw, message", UPDATE_ERRORS,
                         ids=[c[0] for c in UPDATE_ERRORS])
def test_refused_updates_leave_the_item_unchanged(raw_ddb, ddb, t, name, kw,
                                                  message):
    key = K("err-" + name)
    item = put(ddb, t["h"], dict(key, **ERR_ITEM))
    validation(raw_ddb.update_item, message, TableName=t["h"], Key=key,
               ReturnValues="ALL_NEW", **kw)
    assert norm(get(ddb, t["h"], key)) == norm(item)


def test_refused_updates_of_a_missing_item_create_nothing(raw_ddb, ddb, t):
    tb = t["h"]
    for i, (kw, message) in enumerate([
            ({"UpdateExpression": "SET n = absent + :one",
              "ExpressionAttributeValues": {":one": N(1)}}, MISSING_MSG),
            ({"UpdateExpression": "SET a.b = :one",
              "ExpressionAttributeValues": {":one": N(1)}}, PATH_MSG),
            ({"UpdateExpression": "SET a[0] = :one",
              "ExpressionAttributeValues": {":one": N(1)}}, PATH_MSG),
            ({"UpdateExpression": "SET n = :a + :b",
              "ExpressionAttributeValues": {":a": N("1E+50"),
                                            ":b": N(1)}}, OVERFLOW_MSG)]):
        key = K("err-missing-%d" % i)
        validation(raw_ddb.update_item, message, TableName=tb, Key=key, **kw)
        assert get(ddb, tb, key) is None, kw


def test_range_key_cannot_be_updated(raw_ddb, ddb, t):
    key = {"pk": S("rk"), "sk": N(1)}
    item = put(ddb, t["hr"], dict(key, v=N(1)))
    for expr in ("SET sk = :v", "ADD sk :v"):
        validation(raw_ddb.update_item, INVALID + "Cannot update attribute "
                   "sk. This attribute is part of the key",
                   TableName=t["hr"], Key=key, UpdateExpression=expr,
                   ExpressionAttributeValues={":v": N(2)})
    assert get(ddb, t["hr"], key) == item


def test_mixing_expected_and_condition_expression_is_refused(raw_ddb, ddb,
                                                             t):
    key = K("mixed")
    item = put(ddb, t["h"], dict(key, v=N(1)))
    validation(raw_ddb.put_item, "Can not use both expression and "
               "non-expression parameters in the same request: "
               "Non-expression parameters: {Expected} Expression "
               "parameters: {ConditionExpression}", TableName=t["h"],
               Item=dict(key, v=N(2)),
               ConditionExpression="attribute_exists(pk)",
               Expected={"v": {"Exists": False}})
    validation(raw_ddb.delete_item, "Can not use both expression and "
               "non-expression parameters in the same request: "
               "Non-expression parameters: {Expected} Expression "
               "parameters: {ConditionExpression}", TableName=t["h"],
               Key=key, ConditionExpression="attribute_exists(pk)",
               Expected={"v": {"Exists": False}})
    validation(raw_ddb.get_item, "Can not use both expression and "
               "non-expression parameters in the same request: "
               "Non-expression parameters: {AttributesToGet} Expression "
               "parameters: {ProjectionExpression}", TableName=t["h"],
               Key=key, ProjectionExpression="v", AttributesToGet=["v"])
    validation(raw_ddb.put_item, "ExpressionAttributeValues can only be "
               "specified when using expressions: ConditionExpression is "
               "null", TableName=t["h"], Item=dict(key, v=N(2)),
               Expected={"v": {"Exists": False}},
               ExpressionAttributeValues={":v": N(1)})
    assert get(ddb, t["h"], key) == item


def test_item_over_400_kb_through_update_item(raw_ddb, ddb, t):
    tb = t["h"]
    msg = "Item size to update has exceeded the maximum allowed size"
    key = K("big")
    # pk (2 + 3) + "big" (3 + value): 10 bytes under 400 KB.
    item = put(ddb, tb, dict(key, big=S("x" * (400 * 1024 - 18))))
    validation(raw_ddb.update_item, msg, TableName=tb, Key=key,
               UpdateExpression="SET more = :v",
               ExpressionAttributeValues={":v": S("y" * 100)})
    validation(raw_ddb.update_item, msg, TableName=tb, Key=key,
               UpdateExpression="SET big = list_append(:l, :l)",
               ExpressionAttributeValues={":l": {"L": [S("z" * 205000)]}})
    validation(raw_ddb.update_item, msg, TableName=tb, Key=key,
               AttributeUpdates={"more": {"Action": "PUT",
                                          "Value": S("y" * 100)}})
    assert get(ddb, tb, key) == item
    # Exactly at the limit is fine.
    ddb.update_item(TableName=tb, Key=key, UpdateExpression="SET m = :v",
                    ExpressionAttributeValues={":v": S("1234567")})
    assert get(ddb, tb, key)["m"] == S("1234567")
    # A new item built over the limit by an update is not created.
    key2 = K("big-new")
    validation(raw_ddb.update_item, msg, TableName=tb, Key=key2,
               UpdateExpression="SET a = :v, b = :v",
               ExpressionAttributeValues={":v": S("y" * (210 * 1024))})
    assert get(ddb, tb, key2) is None


# ---- projections ----

def test_projection_expression_with_nested_paths(ddb, t):
    tb = t["h"]
    key = K("proj")
    put(ddb, tb, dict(key, a={"M": {"b": S("dog"), "c": {"L": [
        N(1), N(2), {"M": {"d": S("deep"), "e": N(5)}}]}}}, f=S("cat"),
        g=N(7)))
    r = ddb.get_item(TableName=tb, Key=key,
                     ProjectionExpression="a.c[2].d, a.c[0], f, absent.x")
    assert r["Item"] == {"a": {"M": {"c": {"L": [N(1), {"M": {
        "d": S("deep")}}]}}}, "f": S("cat")}
    r = ddb.get_item(TableName=tb, Key=key,
                     ProjectionExpression="#a.#b, g",
                     ExpressionAttributeNames={"#a": "a", "#b": "b"})
    assert r["Item"] == {"a": {"M": {"b": S("dog")}}, "g": N(7)}
    # Nothing matches: an empty item, not a missing one.
    r = ddb.get_item(TableName=tb, Key=key, ProjectionExpression="absent")
    assert r["Item"] == {}
    validation(ddb.get_item, "Invalid ProjectionExpression: Two document "
               "paths overlap with each other; must remove or rewrite one "
               "of these paths; path one: [a, b], path two: [a]",
               TableName=tb, Key=key, ProjectionExpression="a.b, a")


# ---- legacy parameters ----

def test_expected_exists_false_is_attribute_not_exists(ddb, t):
    tb = t["h"]
    key = K("legacy-exists")
    ddb.put_item(TableName=tb, Item=dict(key, v=N(1)),
                 Expected={"pk": {"Exists": False}})
    cond_failed(ddb.put_item, TableName=tb, Item=dict(key, v=N(2)),
                Expected={"pk": {"Exists": False}})
    assert get(ddb, tb, key) == dict(key, v=N(1))


def test_expected_value_and_comparison_operators(ddb, t):
    tb = t["h"]
    key = K("legacy-expected")
    put(ddb, tb, dict(key, n=N(5), s=S("hello")))
    # Value alone (EQ, Exists defaults to true).
    cond_failed(ddb.put_item, TableName=tb, Item=dict(key, n=N(6)),
                Expected={"n": {"Value": N(4)}})
    r = ddb.put_item(TableName=tb, Item=dict(key, n=N(6), s=S("hello")),
                     Expected={"n": {"Value": N(5)},
                               "s": {"Exists": True, "Value": S("hello")}},
                     ReturnValues="ALL_OLD")
    assert r["Attributes"] == dict(key, n=N(5), s=S("hello"))
    # ComparisonOperator with AND (the default) and OR.
    gt6 = {"ComparisonOperator": "GT", "AttributeValueList": [N(6)]}
    he = {"ComparisonOperator": "BEGINS_WITH",
          "AttributeValueList": [S("he")]}
    cond_failed(ddb.update_item, TableName=tb, Key=key,
                AttributeUpdates={"n": {"Action": "PUT", "Value": N(0)}},
                Expected={"n": gt6, "s": he})
    cond_failed(ddb.update_item, TableName=tb, Key=key,
                AttributeUpdates={"n": {"Action": "PUT", "Value": N(0)}},
                Expected={"n": gt6, "s": he}, ConditionalOperator="AND")
    ddb.update_item(TableName=tb, Key=key,
                    AttributeUpdates={"n": {"Action": "PUT", "Value": N(7)}},
                    Expected={"n": gt6, "s": he}, ConditionalOperator="OR")
    assert get(ddb, tb, key) == dict(key, n=N(7), s=S("hello"))
    # More operators: BETWEEN, IN, NULL (absent), NOT_NULL, CONTAINS, NE.
    ddb.delete_item(TableName=tb, Key=key, Expected={
        "n": {"ComparisonOperator": "BETWEEN",
              "AttributeValueList": [N(7), N(8)]},
        "s": {"ComparisonOperator": "IN",
              "AttributeValueList": [S("x"), S("hello")]},
        "absent": {"ComparisonOperator": "NULL"},
        "pk": {"ComparisonOperator": "NOT_NULL"},
    })
    assert get(ddb, tb, key) is None
    put(ddb, tb, dict(key, ss={"SS": ["a", "b"]}, n=N(1)))
    cond_failed(ddb.delete_item, TableName=tb, Key=key, Expected={
        "ss": {"ComparisonOperator": "CONTAINS",
               "AttributeValueList": [S("a")]},
        "n": {"ComparisonOperator": "NE", "AttributeValueList": [N(1)]}})
    ddb.delete_item(TableName=tb, Key=key, Expected={
        "ss": {"ComparisonOperator": "NOT_CONTAINS",
               "AttributeValueList": [S("c")]},
        "n": {"ComparisonOperator": "LE", "AttributeValueList": [N(1)]}})
    assert get(ddb, tb, key) is None


def test_expected_is_the_same_as_its_expression(ddb, t):
    """Each Expected condition and its ConditionExpression twin agree on
    one item, both when they hold and when they do not."""
    tb = t["h"]
    key = K("legacy-twins")
    item = dict(key, n=N(5), s=S("hello"), ss={"SS": ["a"]})
    twins = [
        ({"n": {"Value": N(5)}}, "n = :v", {":v": N(5)}),
        ({"n": {"Exists": False}}, "attribute_not_exists(n)", None),
        ({"absent": {"Exists": False}}, "attribute_not_exists(absent)",
         None),
        ({"n": {"ComparisonOperator": "LT", "AttributeValueList": [N(5)]}},
         "n < :v", {":v": N(5)}),
        ({"n": {"ComparisonOperator": "GE", "AttributeValueList": [N(5)]}},
         "n >= :v", {":v": N(5)}),
        ({"s": {"ComparisonOperator": "BEGINS_WITH",
                "AttributeValueList": [S("hex")]}},
         "begins_with(s, :v)", {":v": S("hex")}),
        ({"ss": {"ComparisonOperator": "CONTAINS",
                 "AttributeValueList": [S("a")]}},
         "contains(ss, :v)", {":v": S("a")}),
        ({"n": {"ComparisonOperator": "NE", "AttributeValueList": [S("5")]}},
         "n <> :v", {":v": S("5")}),
    ]
    for expected, cond, values in twins:
        results = []
        for kw in ({"Expected": expected},
                   dict({"ConditionExpression": cond},
                        **({"ExpressionAttributeValues": values}
                           if values else {}))):
            put(ddb, tb, item)
            try:
                ddb.put_item(TableName=tb, Item=dict(item, w=N(1)), **kw)
                results.append(True)
            except ClientError as e:
                assert e.response["Error"]["Code"] == CCF, (cond, e)
                results.append(False)
        assert results[0] == results[1], (expected, cond, results)


def test_attribute_updates_put_add_delete(ddb, t):
    tb = t["h"]
    key = K("legacy-updates")
    r = ddb.update_item(TableName=tb, Key=key, ReturnValues="ALL_NEW",
                        AttributeUpdates={
                            "n": {"Action": "ADD", "Value": N(10)},
                            "ss": {"Action": "ADD",
                                   "Value": {"SS": ["a", "b"]}},
                            "l": {"Action": "ADD", "Value": {"L": [N(1)]}},
                            # PUT is the default action.
                            "p": {"Value": S("put")}})
    assert norm(r["Attributes"]) == norm(dict(
        key, n=N(10), ss={"SS": ["a", "b"]}, l={"L": [N(1)]}, p=S("put")))
    r = ddb.update_item(TableName=tb, Key=key, ReturnValues="UPDATED_OLD",
                        AttributeUpdates={
                            "n": {"Action": "ADD", "Value": N(-3)},
                            "ss": {"Action": "DELETE",
                                   "Value": {"SS": ["a"]}},
                            # ADD to a list appends (legacy only).
                            "l": {"Action": "ADD", "Value": {"L": [N(2)]}},
                            "p": {"Action": "DELETE"}})
    assert norm(r["Attributes"]) == norm({
        "n": N(10), "ss": {"SS": ["a", "b"]}, "l": {"L": [N(1)]},
        "p": S("put")})
    assert get(ddb, tb, key) == dict(key, n=N(7), ss={"SS": ["b"]},
                                     l={"L": [N(1), N(2)]})
    # DELETE of the last element removes the attribute; PUT replaces.
    ddb.update_item(TableName=tb, Key=key, AttributeUpdates={
        "ss": {"Action": "DELETE", "Value": {"SS": ["b"]}},
        "n": {"Action": "PUT", "Value": S("now a string")}})
    assert get(ddb, tb, key) == dict(key, n=S("now a string"),
                                     l={"L": [N(1), N(2)]})
    # An empty AttributeUpdates changes nothing and returns nothing new.
    r = ddb.update_item(TableName=tb, Key=key, AttributeUpdates={},
                        ReturnValues="UPDATED_NEW")
    assert "Attributes" not in r


def test_attributes_to_get(ddb, t):
    tb = t["h"]
    key = K("legacy-atg")
    put(ddb, tb, dict(key, a=N(1), b=S("two"), c={"M": {"d": N(4)}}))
    r = ddb.get_item(TableName=tb, Key=key, AttributesToGet=["a", "c",
                                                            "absent"])
    assert r["Item"] == {"a": N(1), "c": {"M": {"d": N(4)}}}
    # Names are taken literally: "c.d" is not a path.
    r = ddb.get_item(TableName=tb, Key=key, AttributesToGet=["c.d", "pk"])
    assert r["Item"] == key


# ---- SEEDS: the order placement's conditional stock decrement ----

def test_conditional_stock_decrement(cluster, ddb, t):
    """SEEDS section 1: placing an order decrements PROD#.../STOCK with
    `SET quantity = quantity - :q` under `quantity >= :q`."""
    tb = t["hr"]
    stock = {"pk": S("PROD#2410"), "sk": N(0)}
    put(ddb, tb, dict(stock, quantity=N(186)))
    dec = {"UpdateExpression": "SET quantity = quantity - :q",
           "ConditionExpression": "quantity >= :q"}
    r = ddb.update_item(TableName=tb, Key=stock, ReturnValues="UPDATED_NEW",
                        ExpressionAttributeValues={":q": N(5)}, **dec)
    assert r["Attributes"] == {"quantity": N(181)}
    # Ordering 500 with 181 in stock fails and changes nothing.
    j = raw_cond_failed(cluster, "UpdateItem", TableName=tb, Key=stock,
                        ExpressionAttributeValues={":q": N(500)},
                        ReturnValuesOnConditionCheckFailure="ALL_OLD", **dec)
    assert j["Item"] == dict(stock, quantity=N(181))
    # Exactly what is left can be ordered; then nothing more.
    ddb.update_item(TableName=tb, Key=stock,
                    ExpressionAttributeValues={":q": N(181)}, **dec)
    cond_failed(ddb.update_item, TableName=tb, Key=stock,
                ExpressionAttributeValues={":q": N(1)}, **dec)
    assert get(ddb, tb, stock) == dict(stock, quantity=N(0))
    # A product without a stock item cannot be ordered either.
    missing = {"pk": S("PROD#9999"), "sk": N(0)}
    cond_failed(ddb.update_item, TableName=tb, Key=missing,
                ExpressionAttributeValues={":q": N(1)}, **dec)
    assert get(ddb, tb, missing) is None


def run_threads(n, fn):
    """Runs fn(i) in n threads started together; re-raises the first
    exception a thread raised."""
    barrier = threading.Barrier(n)
    errors = []

    def body(i):
        try:
            barrier.wait(30)
            fn(i)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append((i, e))

    threads = [threading.Thread(target=body, args=(i,)) for i in range(n)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(120)
    assert not any(th.is_alive() for th in threads), "threads hung"
    if errors:
        i, e = errors[0]
        raise AssertionError("thread %d failed (%d threads failed): %r" % (
            i, len(errors), e)) from e


def test_concurrent_stock_decrements_never_oversell(cluster, ddb, t):
    tb = t["hr"]
    stock = {"pk": S("PROD#77"), "sk": N(0)}
    put(ddb, tb, dict(stock, quantity=N(181)))
    clients = [cluster.client() for _ in range(12)]
    won = [0] * 12

    def order(i):
        for _ in range(5):
            try:
                clients[i].update_item(
                    TableName=tb, Key=stock,
                    UpdateExpression="SET quantity = quantity - :q",
                    ConditionExpression="quantity >= :q",
                    ExpressionAttributeValues={":q": N(10)})
                won[i] += 1
            except ClientError as e:
                if e.response["Error"]["Code"] != CCF:
                    raise

    run_threads(12, order)
    # 60 orders of 10 against 181: exactly 18 succeed, 1 is left.
    assert sum(won) == 18, won
    assert get(ddb, tb, stock)["quantity"] == N(1)


# ---- concurrency ----

def test_concurrent_add_loses_no_update(cluster, ddb, t):
    tb = t["h"]
    key = K("counter")
    clients = [cluster.client() for _ in range(16)]

    def add(i):
        for _ in range(100):
            clients[i].update_item(TableName=tb, Key=key,
                                   UpdateExpression="ADD n :one",
                                   ExpressionAttributeValues={":one": N(1)})

    run_threads(16, add)
    assert get(ddb, tb, key) == dict(key, n=N(1600))


def test_concurrent_list_appends_lose_nothing(cluster, ddb, t):
    tb = t["h"]
    key = K("appends")
    clients = [cluster.client() for _ in range(8)]

    def append(i):
        for j in range(25):
            clients[i].update_item(
                TableName=tb, Key=key,
                UpdateExpression="SET l = list_append(if_not_exists(l, "
                ":empty), :x)",
                ExpressionAttributeValues={":empty": {"L": []},
                                           ":x": {"L": [S("%d-%d" % (i,
                                                                     j))]}})

    run_threads(8, append)
    got = [v["S"] for v in get(ddb, tb, key)["l"]["L"]]
    assert len(got) == 200 and len(set(got)) == 200
    for i in range(8):
        mine = [x for x in got if x.startswith("%d-" % i)]
        assert mine == ["%d-%d" % (i, j) for j in range(25)], mine


def test_racing_conditional_puts_exactly_one_wins(cluster, ddb, t):
    tb = t["h"]
    clients = [cluster.client() for _ in range(8)]
    rounds = 20
    winners = [[] for _ in range(rounds)]
    barrier = threading.Barrier(8)

    def race(i):
        for r in range(rounds):
            barrier.wait(30)
            try:
                clients[i].put_item(
                    TableName=tb,
                    Item=dict(K("race-%d" % r), owner=N(i)),
                    ConditionExpression="attribute_not_exists(pk)")
                winners[r].append(i)
            except ClientError as e:
                if e.response["Error"]["Code"] != CCF:
                    raise

    run_threads(8, race)
    for r in range(rounds):
        assert len(winners[r]) == 1, "round %d: winners %r" % (
            r, winners[r])
        assert get(ddb, tb, K("race-%d" % r))["owner"] == N(winners[r][0])


# ---- functions of values (literal operands) ----

VALUE_OPERANDS = [
    # (expression, values, true?) — DynamoDB evaluates the literal.
    ("size(:v) >= :n", {":v": S("abc"), ":n": N(2)}, True),
    ("size(:v) = :n", {":v": {"L": [N(1), N(2)]}, ":n": N(2)}, True),
    ("size(:v) = :n", {":v": {"SS": ["a", "b", "c"]}, ":n": N(3)}, True),
    ("size(:v) = :n", {":v": {"M": {"a": N(1)}}, ":n": N(2)}, False),
    ("size(:v) BETWEEN :a AND :b", {":v": S("abcd"), ":a": N(1),
                                    ":b": N(3)}, False),
    ("size(:v) IN (:a, :b)", {":v": S("abc"), ":a": N(3), ":b": N(9)}, True),
    ("size(:v) > size(s)", {":v": S("a much longer text")}, True),
    ("attribute_type(:v, :t)", {":v": S("abc"), ":t": S("S")}, True),
    ("attribute_type(:v, :t)", {":v": N(1), ":t": S("S")}, False),
    ("NOT attribute_type(:v, :t)", {":v": N(1), ":t": S("S")}, True),
    ("begins_with(:v, :p)", {":v": S("abc"), ":p": S("ab")}, True),
    ("contains(:v, :p)", {":v": {"SS": ["a", "b"]}, ":p": S("c")}, False),
    (":a BETWEEN :b AND :c", {":a": N(2), ":b": N(1), ":c": N(3)}, True),
    (":v = s", {":v": S("hello")}, True),
    ("attribute_type(size(s), :t)", {":t": S("N")}, True),
    ("contains(:v, size(s))", {":v": {"NS": ["5", "6"]}}, True),
]


@pytest.mark.parametrize("expr,values,truth", VALUE_OPERANDS)
def test_functions_of_values_are_evaluated_not_500(ddb, t, expr, values,
                                                   truth):
    """A function given a value where a path could stand (size(:v),
    attribute_type(:v, :t), ...) is evaluated on the literal, as
    DynamoDB does: in a condition, a filter and a transaction's check,
    never an InternalServerError."""
    key = "fv-" + uuid.uuid4().hex[:8]
    put(ddb, t["h"], {"pk": S(key), "s": S("hello")})
    kw = {"TableName": t["h"], "Key": K(key), "ConditionExpression": expr,
          "ExpressionAttributeValues": values,
          "UpdateExpression": "SET seen = :seen"}
    kw["ExpressionAttributeValues"] = dict(values, **{":seen": N(1)})
    if truth:
        ddb.update_item(**kw)
        assert get(ddb, t["h"], K(key))["seen"] == N(1)
    else:
        cond_failed(ddb.update_item, **kw)
    r = ddb.query(TableName=t["h"], KeyConditionExpression="pk = :pk",
                  FilterExpression=expr, ExpressionAttributeValues=dict(
                      values, **{":pk": S(key)}), ConsistentRead=True)
    assert r["Count"] == (1 if truth else 0)
    check = {"ConditionCheck": {"TableName": t["h"], "Key": K(key),
                                "ConditionExpression": expr,
                                "ExpressionAttributeValues": values}}
    if truth:
        ddb.transact_write_items(TransactItems=[check])
    else:
        with pytest.raises(ClientError) as e:
            ddb.transact_write_items(TransactItems=[check])
        assert e.value.response["CancellationReasons"][0]["Code"] == \
            "ConditionalCheckFailed"
