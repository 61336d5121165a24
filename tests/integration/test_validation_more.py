"""test_validation_more.py — request checks DynamoDB makes that the router
once skipped or that had no test: an empty AttributesToGet, empty legacy
Expected and AttributeUpdates entries and ConditionalOperator beside too few
conditions, attribute names of 0 or more than 65,535 bytes (items, keys,
AttributesToGet, Expected, AttributeUpdates, legacy filters,
ExpressionAttributeNames) and key attribute names over 255 (CreateTable),
an ExclusiveStartKey with extra attributes, and ReturnItemCollectionMetrics
of a bad value or JSON type. Every refusal is checked for HTTP 400, the
exception and DynamoDB's exact message, and for having written nothing.

Where the messages come from (router/request.c, router/request_expr.c,
router/json.c say the same next to the code): the shape checks'
"1 validation error detected: Value '[]' at ..." as architect/dynalite
records them; "Empty attribute name" and "Attribute name is too large, must
be less than 65536 bytes" from DynamoDB Local's ErrorFactory; the
ConditionalOperator texts and the order of the mixing lists from a suite
run against DynamoDB (extenddb's legacy ConditionalOperator tests) and
DAX's client checks.

Requests go through boto3 without client-side validation, or as raw HTTP
for members of the wrong JSON type.
"""

import http.client
import json
import urllib.parse
import uuid

import pytest
from botocore.exceptions import ClientError

ATG_EMPTY = ("1 validation error detected: Value '[]' at '%s' failed to "
             "satisfy constraint: Member must have length greater than or "
             "equal to 1")
NAME_EMPTY = "Empty attribute name"
NAME_LONG = "Attribute name is too large, must be less than 65536 bytes"
EAN_INVALID = "ExpressionAttributeNames contains invalid value: %s for key %s"
WITHOUT = "ConditionalOperator cannot be used without Filter or Expected"
TWO_OR_MORE = ("ConditionalOperator can only be used when Filter or Expected "
               "has two or more elements")
MIXING = ("Can not use both expression and non-expression parameters in the "
          "same request: Non-expression parameters: {%s} Expression "
          "parameters: {%s}")
NO_VALUE = ("One or more parameter values were invalid: Value must be "
            "provided when Exists is null for Attribute: a")
ONLY_DELETE = ("One or more parameter values were invalid: Only DELETE "
               "action is allowed when no attribute value is specified")
BAD_START = ("The provided starting key is invalid: The provided key element "
             "does not match the schema")
RICM_ENUM = ("1 validation error detected: Value '%s' at "
             "'returnItemCollectionMetrics' failed to satisfy constraint: "
             "Member must satisfy enum value set: [SIZE, NONE]")
RICM_TYPE = ("Unexpected value type in payload for member "
             "ReturnItemCollectionMetrics")

LONG = "n" * 65536     # one byte over DynamoDB's limit
LONGEST = "n" * 65535  # the longest name DynamoDB takes


def S(s):
    return {"S": s}


def N(n):
    return {"N": str(n)}


@pytest.fixture(scope="module")
def t(cluster):
    """Tables of this file: `h` (hash pk S) and `r` (pk S, sk N)."""
    ddb = cluster.client()
    u = uuid.uuid4().hex[:8]
    names = {"h": "vm-h-" + u, "r": "vm-r-" + u}
    for k, sort in (("h", None), ("r", "N")):
        defs = [{"AttributeName": "pk", "AttributeType": "S"}]
        ks = [{"AttributeName": "pk", "KeyType": "HASH"}]
        if sort:
            defs.append({"AttributeName": "sk", "AttributeType": sort})
            ks.append({"AttributeName": "sk", "KeyType": "RANGE"})
        ddb.create_table(TableName=names[k], AttributeDefinitions=defs,
                         KeySchema=ks, BillingMode="PAY_PER_REQUEST")
    w = ddb.get_waiter("table_exists")
    for name in names.values():
        w.wait(TableName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 20})
    return names


@pytest.fixture
def key():
    """A fresh hash key, so that every test writes its own items."""
    return {"pk": S("vm-" + uuid.uuid4().hex[:12])}


def refused(fn, message, code="ValidationException", **kw):
    """fn(**kw) must fail with HTTP 400, code and exactly message."""
    with pytest.raises(ClientError) as ei:
        fn(**kw)
    r = ei.value.response
    assert (r["Error"]["Code"], r["Error"]["Message"]) == (code, message)
    assert r["ResponseMetadata"]["HTTPStatusCode"] == 400


def absent(ddb, table, key):
    r = ddb.get_item(TableName=table, Key=key, ConsistentRead=True)
    assert "Item" not in r, "a refused write left %r" % (r["Item"],)


def present(ddb, table, key):
    return ddb.get_item(TableName=table, Key=key,
                        ConsistentRead=True).get("Item")


def post(cluster, op, body):
    """Raw HTTP: (status, __type's name, message) of a DynamoDB call."""
    u = urllib.parse.urlparse(cluster.endpoint)
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
    c.request("POST", "/", body=json.dumps(body).encode(), headers={
        "Content-Type": "application/x-amz-json-1.0",
        "X-Amz-Target": "DynamoDB_20120810." + op})
    r = c.getresponse()
    data = json.loads(r.read() or b"{}")
    c.close()
    return (r.status, data.get("__type", "").rsplit("#", 1)[-1],
            data.get("message"))


# ---- 1. AttributesToGet may not be empty ----

def test_empty_attributes_to_get_is_refused(raw_ddb, t, key):
    refused(raw_ddb.get_item, ATG_EMPTY % "attributesToGet",
            TableName=t["h"], Key=key, AttributesToGet=[])
    refused(raw_ddb.query, ATG_EMPTY % "attributesToGet", TableName=t["h"],
            KeyConditions={"pk": {"ComparisonOperator": "EQ",
                                  "AttributeValueList": [key["pk"]]}},
            AttributesToGet=[])
    refused(raw_ddb.scan, ATG_EMPTY % "attributesToGet", TableName=t["h"],
            AttributesToGet=[])
    # Before the service's own checks: with Select, or mixed with a
    # ProjectionExpression, the shape check still answers first.
    refused(raw_ddb.scan, ATG_EMPTY % "attributesToGet", TableName=t["h"],
            AttributesToGet=[], Select="SPECIFIC_ATTRIBUTES")
    refused(raw_ddb.scan, ATG_EMPTY % "attributesToGet", TableName=t["h"],
            AttributesToGet=[], ProjectionExpression="a")
    refused(raw_ddb.batch_get_item,
            ATG_EMPTY % ("requestItems.%s.member.attributesToGet" % t["h"]),
            RequestItems={t["h"]: {"Keys": [key], "AttributesToGet": []}})


def test_empty_attributes_to_get_joins_the_other_shape_errors(raw_ddb, t,
                                                              key):
    # BatchGetItem's shape violations come as one message.
    refused(raw_ddb.batch_get_item,
            "2 validation errors detected: Value '[]' at "
            "'requestItems.%s.member.keys' failed to satisfy constraint: "
            "Member must have length greater than or equal to 1; Value "
            "'[]' at 'requestItems.%s.member.attributesToGet' failed to "
            "satisfy constraint: Member must have length greater than or "
            "equal to 1" % (t["h"], t["h"]),
            RequestItems={t["h"]: {"Keys": [], "AttributesToGet": []}})


def test_attributes_to_get_with_names_still_works(ddb, t, key):
    ddb.put_item(TableName=t["h"], Item={**key, "a": S("x"), "b": S("y")})
    assert ddb.get_item(TableName=t["h"], Key=key, ConsistentRead=True,
                        AttributesToGet=["a"])["Item"] == {"a": S("x")}
    r = ddb.batch_get_item(RequestItems={t["h"]: {
        "Keys": [key], "AttributesToGet": ["b"], "ConsistentRead": True}})
    assert r["Responses"][t["h"]] == [{"b": S("y")}]


# ---- 2. Expected and AttributeUpdates: empty maps and empty entries ----

def test_empty_expected_map_is_no_condition(ddb, t, key):
    ddb.put_item(TableName=t["h"], Item={**key, "v": N(1)}, Expected={})
    ddb.update_item(TableName=t["h"], Key=key, Expected={},
                    AttributeUpdates={"v": {"Action": "PUT",
                                            "Value": N(2)}})
    assert present(ddb, t["h"], key)["v"] == N(2)
    ddb.delete_item(TableName=t["h"], Key=key, Expected={})
    absent(ddb, t["h"], key)


def test_expected_entry_without_value_or_exists_is_refused(raw_ddb, ddb, t,
                                                           key):
    refused(raw_ddb.put_item, NO_VALUE, TableName=t["h"], Item=key,
            Expected={"a": {}})
    absent(ddb, t["h"], key)
    refused(raw_ddb.update_item, NO_VALUE, TableName=t["h"], Key=key,
            Expected={"a": {}},
            AttributeUpdates={"v": {"Action": "PUT", "Value": N(1)}})
    absent(ddb, t["h"], key)
    ddb.put_item(TableName=t["h"], Item=key)
    refused(raw_ddb.delete_item, NO_VALUE, TableName=t["h"], Key=key,
            Expected={"a": {}})
    assert present(ddb, t["h"], key) == key


def test_empty_attribute_updates(raw_ddb, ddb, t, key):
    # An empty map is no update: UpdateItem still creates the item.
    ddb.update_item(TableName=t["h"], Key=key, AttributeUpdates={})
    assert present(ddb, t["h"], key) == key
    other = {"pk": S(key["pk"]["S"] + "-b")}
    # An entry without Value is a PUT of nothing.
    refused(raw_ddb.update_item, ONLY_DELETE, TableName=t["h"], Key=other,
            AttributeUpdates={"a": {}})
    absent(ddb, t["h"], other)
    # DynamoDB reports the bad update before the bad condition.
    refused(raw_ddb.update_item, ONLY_DELETE, TableName=t["h"], Key=other,
            Expected={"a": {}}, AttributeUpdates={"a": {}})
    absent(ddb, t["h"], other)


def test_conditional_operator_needs_two_conditions(raw_ddb, ddb, t, key):
    upd = {"v": {"Action": "PUT", "Value": N(1)}}
    # Beside an empty Expected, or none.
    refused(raw_ddb.update_item, WITHOUT, TableName=t["h"], Key=key,
            AttributeUpdates=upd, Expected={}, ConditionalOperator="OR")
    refused(raw_ddb.update_item, WITHOUT, TableName=t["h"], Key=key,
            AttributeUpdates=upd, ConditionalOperator="AND")
    refused(raw_ddb.put_item, WITHOUT, TableName=t["h"], Item=key,
            ConditionalOperator="AND")
    refused(raw_ddb.delete_item, WITHOUT, TableName=t["h"], Key=key,
            ConditionalOperator="AND")
    # Beside one condition.
    one = {"a": {"Exists": False}}
    refused(raw_ddb.put_item, TWO_OR_MORE, TableName=t["h"], Item=key,
            Expected=one, ConditionalOperator="AND")
    refused(raw_ddb.update_item, TWO_OR_MORE, TableName=t["h"], Key=key,
            AttributeUpdates=upd, Expected=one, ConditionalOperator="OR")
    absent(ddb, t["h"], key)
    # Legacy filters count the same way; KeyConditions do not count.
    eq = {"ComparisonOperator": "EQ", "AttributeValueList": [S("x")]}
    refused(raw_ddb.scan, WITHOUT, TableName=t["h"], ConditionalOperator="OR")
    refused(raw_ddb.scan, WITHOUT, TableName=t["h"], ScanFilter={},
            ConditionalOperator="AND")
    refused(raw_ddb.scan, WITHOUT, TableName=t["h"], AttributesToGet=["a"],
            ConditionalOperator="AND")
    refused(raw_ddb.scan, TWO_OR_MORE, TableName=t["h"],
            ScanFilter={"a": eq}, ConditionalOperator="AND")
    kc = {"pk": {"ComparisonOperator": "EQ",
                 "AttributeValueList": [key["pk"]]}}
    refused(raw_ddb.query, WITHOUT, TableName=t["h"], KeyConditions=kc,
            ConditionalOperator="AND")
    refused(raw_ddb.query, TWO_OR_MORE, TableName=t["h"], KeyConditions=kc,
            QueryFilter={"a": eq}, ConditionalOperator="AND")
    # Two conditions: fine.
    ddb.put_item(TableName=t["h"], Item=key, ConditionalOperator="AND",
                 Expected={"a": {"Exists": False}, "b": {"Exists": False}})
    assert present(ddb, t["h"], key) == key
    ddb.scan(TableName=t["h"], ConditionalOperator="OR",
             ScanFilter={"a": eq, "b": eq})


def test_conditional_operator_counts_as_a_legacy_member(raw_ddb, ddb, t,
                                                       key):
    refused(raw_ddb.put_item, MIXING % ("ConditionalOperator",
                                        "ConditionExpression"),
            TableName=t["h"], Item=key, ConditionalOperator="AND",
            ConditionExpression="attribute_not_exists(pk)")
    refused(raw_ddb.put_item, MIXING % ("Expected, ConditionalOperator",
                                        "ConditionExpression"),
            TableName=t["h"], Item=key, ConditionalOperator="AND",
            Expected={"a": {"Exists": False}},
            ConditionExpression="attribute_not_exists(pk)")
    refused(raw_ddb.update_item,
            MIXING % ("AttributeUpdates, Expected, ConditionalOperator",
                      "UpdateExpression, ConditionExpression"),
            TableName=t["h"], Key=key,
            AttributeUpdates={"a": {"Value": S("v"), "Action": "PUT"}},
            Expected={"a": {"Exists": False}}, ConditionalOperator="AND",
            UpdateExpression="SET a = :v",
            ConditionExpression="attribute_not_exists(pk)",
            ExpressionAttributeValues={":v": S("x")})
    absent(ddb, t["h"], key)
    eq = {"ComparisonOperator": "EQ", "AttributeValueList": [S("x")]}
    refused(raw_ddb.scan,
            MIXING % ("AttributesToGet, ScanFilter, ConditionalOperator",
                      "ProjectionExpression, FilterExpression"),
            TableName=t["h"], AttributesToGet=["a"], ScanFilter={"a": eq},
            ConditionalOperator="AND", FilterExpression="a = :v",
            ProjectionExpression="b",
            ExpressionAttributeValues={":v": S("x")})
    refused(raw_ddb.query,
            MIXING % ("QueryFilter, ConditionalOperator, KeyConditions",
                      "ProjectionExpression, FilterExpression, "
                      "KeyConditionExpression"),
            TableName=t["h"], KeyConditions={"pk": {
                "ComparisonOperator": "EQ",
                "AttributeValueList": [key["pk"]]}},
            QueryFilter={"a": eq}, ConditionalOperator="AND",
            KeyConditionExpression="pk = :p", FilterExpression="a = :v",
            ProjectionExpression="b",
            ExpressionAttributeValues={":p": key["pk"], ":v": S("x")})


# ---- 3. Attribute names: 1 to 65,535 bytes; key names 1 to 255 ----

@pytest.mark.parametrize("name,message", [("", NAME_EMPTY),
                                          (LONG, NAME_LONG)])
def test_bad_item_attribute_names_are_refused(raw_ddb, ddb, t, key, name,
                                              message):
    refused(raw_ddb.put_item, message, TableName=t["h"],
            Item={**key, name: S("x")})
    absent(ddb, t["h"], key)
    refused(raw_ddb.batch_write_item, message, RequestItems={t["h"]: [
        {"PutRequest": {"Item": {**key, name: S("x")}}}]})
    absent(ddb, t["h"], key)
    refused(raw_ddb.transact_write_items, message, TransactItems=[
        {"Put": {"TableName": t["h"], "Item": {**key, name: S("x")}}}])
    absent(ddb, t["h"], key)
    refused(raw_ddb.update_item, message, TableName=t["h"], Key=key,
            AttributeUpdates={name: {"Action": "PUT", "Value": S("x")}})
    absent(ddb, t["h"], key)
    refused(raw_ddb.put_item, message, TableName=t["h"], Item=key,
            Expected={name: {"Exists": False}})
    absent(ddb, t["h"], key)
    # In keys, the name is checked before the key's schema.
    refused(raw_ddb.get_item, message, TableName=t["h"],
            Key={**key, name: S("x")})
    refused(raw_ddb.delete_item, message, TableName=t["h"],
            Key={name: S("x")})
    refused(raw_ddb.scan, message, TableName=t["h"],
            ExclusiveStartKey={**key, name: S("x")})
    # Names asked for, and legacy filters.
    refused(raw_ddb.get_item, message, TableName=t["h"], Key=key,
            AttributesToGet=["a", name])
    refused(raw_ddb.scan, message, TableName=t["h"],
            ScanFilter={name: {"ComparisonOperator": "NULL"}})
    refused(raw_ddb.query, message, TableName=t["h"], KeyConditions={
        "pk": {"ComparisonOperator": "EQ",
               "AttributeValueList": [key["pk"]]},
        name: {"ComparisonOperator": "EQ", "AttributeValueList": [S("x")]}})


@pytest.mark.parametrize("name,message", [("", NAME_EMPTY),
                                          (LONG, NAME_LONG)])
def test_bad_expression_attribute_names_are_refused(raw_ddb, ddb, t, key,
                                                    name, message):
    refused(raw_ddb.get_item, EAN_INVALID % (message, "#a"),
            TableName=t["h"], Key=key, ProjectionExpression="#a",
            ExpressionAttributeNames={"#a": name})
    refused(raw_ddb.update_item, EAN_INVALID % (message, "#n"),
            TableName=t["h"], Key=key, UpdateExpression="SET #n = :v",
            ExpressionAttributeNames={"#n": name},
            ExpressionAttributeValues={":v": N(1)})
    absent(ddb, t["h"], key)
    refused(raw_ddb.query, EAN_INVALID % (message, "#f"), TableName=t["h"],
            KeyConditionExpression="pk = :p", FilterExpression="#f = :p",
            ExpressionAttributeNames={"#f": name},
            ExpressionAttributeValues={":p": key["pk"]})


def test_longest_attribute_name_is_accepted(ddb, t, key):
    ddb.put_item(TableName=t["h"], Item={**key, LONGEST: N(1)})
    assert ddb.get_item(TableName=t["h"], Key=key, ConsistentRead=True,
                        AttributesToGet=[LONGEST])["Item"] == {LONGEST: N(1)}
    r = ddb.update_item(TableName=t["h"], Key=key,
                        UpdateExpression="SET #n = #n + :one",
                        ExpressionAttributeNames={"#n": LONGEST},
                        ExpressionAttributeValues={":one": N(1)},
                        ReturnValues="UPDATED_NEW")
    assert r["Attributes"] == {LONGEST: N(2)}


def test_names_still_count_toward_the_item_size(raw_ddb, ddb, t, key):
    # pk (2) + the key's value + the longest name + the value: 400 KB and
    # one byte. The name is legal, so the size is what is refused.
    size = 2 + len(key["pk"]["S"]) + len(LONGEST)
    refused(raw_ddb.put_item, "Item size has exceeded the maximum allowed "
            "size", TableName=t["h"],
            Item={**key, LONGEST: S("x" * (400 * 1024 + 1 - size))})
    absent(ddb, t["h"], key)
    ddb.put_item(TableName=t["h"],
                 Item={**key, LONGEST: S("x" * (400 * 1024 - size))})


def key_table(name, hash_name, sort_name=None):
    """CreateTable arguments for a table keyed on the given names."""
    defs = [{"AttributeName": hash_name, "AttributeType": "S"}]
    ks = [{"AttributeName": hash_name, "KeyType": "HASH"}]
    if sort_name is not None:
        defs.append({"AttributeName": sort_name, "AttributeType": "S"})
        ks.append({"AttributeName": sort_name, "KeyType": "RANGE"})
    return dict(TableName=name, AttributeDefinitions=defs, KeySchema=ks,
                BillingMode="PAY_PER_REQUEST")


def not_created(ddb, name):
    with pytest.raises(ClientError) as ei:
        ddb.describe_table(TableName=name)
    assert ei.value.response["Error"]["Code"] == \
        "ResourceNotFoundException"


def test_key_attribute_names_are_1_to_255_long(raw_ddb, ddb, unique):
    too_long = "k" * 256
    clause = ("Value '%s' at '%s.%d.member.attributeName' failed to satisfy "
              "constraint: Member must have length %s")
    longer = "less than or equal to 255"
    shorter = "greater than or equal to 1"
    name = "vm-keylen-" + unique
    refused(raw_ddb.create_table,
            "2 validation errors detected: " +
            clause % (too_long, "attributeDefinitions", 1, longer) + "; " +
            clause % (too_long, "keySchema", 1, longer),
            **key_table(name, too_long))
    not_created(ddb, name)
    refused(raw_ddb.create_table,
            "2 validation errors detected: " +
            clause % (too_long, "attributeDefinitions", 2, longer) + "; " +
            clause % (too_long, "keySchema", 2, longer),
            **key_table(name, "h", too_long))
    not_created(ddb, name)
    refused(raw_ddb.create_table,
            "2 validation errors detected: " +
            clause % ("", "attributeDefinitions", 1, shorter) + "; " +
            clause % ("", "keySchema", 1, shorter),
            **key_table(name, ""))
    not_created(ddb, name)
    # 255 is allowed, for both keys, and the table works.
    h, s = "h" * 255, "s" * 255
    ddb.create_table(**key_table(name, h, s))
    try:
        ddb.get_waiter("table_exists").wait(
            TableName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 20})
        item = {h: S("a"), s: S("b"), "v": N(1)}
        ddb.put_item(TableName=name, Item=item)
        assert ddb.get_item(TableName=name, Key={h: S("a"), s: S("b")},
                            ConsistentRead=True)["Item"] == item
    finally:
        ddb.delete_table(TableName=name)


# ---- 4. ExclusiveStartKey: exactly the table's key ----

def test_exclusive_start_key_with_extra_attributes_is_refused(raw_ddb, t,
                                                              key):
    extra = {**key, "x": S("y")}
    refused(raw_ddb.scan, BAD_START, TableName=t["h"],
            ExclusiveStartKey=extra)
    refused(raw_ddb.query, BAD_START, TableName=t["h"],
            KeyConditionExpression="pk = :p",
            ExpressionAttributeValues={":p": key["pk"]},
            ExclusiveStartKey=extra)
    refused(raw_ddb.scan, BAD_START, TableName=t["r"],
            ExclusiveStartKey={**key, "sk": N(1), "x": S("y")})
    refused(raw_ddb.query, BAD_START, TableName=t["r"],
            KeyConditionExpression="pk = :p",
            ExpressionAttributeValues={":p": key["pk"]},
            ExclusiveStartKey={**key, "sk": N(1), "x": S("y")})


# ---- 5. ReturnItemCollectionMetrics: SIZE or NONE, a string ----

def writes(t, key, metrics):
    """(call name, request) of every write that takes the member."""
    item = {**key, "v": N(1)}
    return [
        ("put_item", dict(TableName=t["h"], Item=item,
                          ReturnItemCollectionMetrics=metrics)),
        ("update_item", dict(TableName=t["h"], Key=key,
                             UpdateExpression="SET v = :v",
                             ExpressionAttributeValues={":v": N(1)},
                             ReturnItemCollectionMetrics=metrics)),
        ("delete_item", dict(TableName=t["h"], Key=key,
                             ReturnItemCollectionMetrics=metrics)),
        ("batch_write_item", dict(
            RequestItems={t["h"]: [{"PutRequest": {"Item": item}}]},
            ReturnItemCollectionMetrics=metrics)),
        ("transact_write_items", dict(
            TransactItems=[{"Put": {"TableName": t["h"], "Item": item}}],
            ReturnItemCollectionMetrics=metrics)),
    ]


@pytest.mark.parametrize("metrics", ["BOGUS", "size", ""])
def test_bad_return_item_collection_metrics_is_refused(raw_ddb, ddb, t, key,
                                                       metrics):
    for call, kw in writes(t, key, metrics):
        refused(getattr(raw_ddb, call), RICM_ENUM % metrics, **kw)
        absent(ddb, t["h"], key)


@pytest.mark.parametrize("metrics", [5, True, ["SIZE"], {"SIZE": 1}])
def test_return_item_collection_metrics_of_wrong_type(cluster, ddb, t, key,
                                                      metrics):
    ops = {"put_item": "PutItem", "update_item": "UpdateItem",
           "delete_item": "DeleteItem", "batch_write_item": "BatchWriteItem",
           "transact_write_items": "TransactWriteItems"}
    for call, kw in writes(t, key, metrics):
        assert post(cluster, ops[call], kw) == (
            400, "SerializationException", RICM_TYPE), call
        absent(ddb, t["h"], key)


@pytest.mark.parametrize("metrics", ["SIZE", "NONE"])
def test_good_return_item_collection_metrics_is_accepted(ddb, t, key,
                                                         metrics):
    for call, kw in writes(t, key, metrics):
        getattr(ddb, call)(**kw)
    # The last write, the transaction's put, is in.
    assert present(ddb, t["h"], key) == {**key, "v": N(1)}
