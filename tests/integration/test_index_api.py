"""test_index_api.py — secondary indexes in CreateTable, UpdateTable,
DescribeTable and ListTables (router/index_spec.c, router/ops/ops_table.c).

Every refusal is checked for DynamoDB's exception and exact message, sent
through boto3 without client-side parameter validation so that the
router's own checks run. Where DynamoDB's wording is known from tests run
against it (dynalite's test/createTable.js, Alternator's test_gsi.py and
test_lsi.py, and published captures of its answers) the expected text is
that wording; the few messages of our own are marked. Tables with local
secondary indexes are tried end to end in test_lsi.py.

The accepted tables have two GSIs (hash+range INCLUDE, hash-only
KEYS_ONLY), on a PROVISIONED and on a PAY_PER_REQUEST table: their
TableDescription lists the indexes as DynamoDB does, the indexes become
ACTIVE with their table, and ListTables never shows the tables that hold
the indexes' entries ("BASE/INDEX").

UpdateTable's GlobalSecondaryIndexUpdates are checked the same way, then
accepted: a create, a delete and throughput changes, as UpdateTable's
answer and DescribeTable show them (the filling of a new index is
test_gsi.py's).
"""

import http.client
import json
import time
import urllib.parse

import pytest
from botocore.exceptions import ClientError

INVALID = "One or more parameter values were invalid: "


def validation(fn, message, **kw):
    """Calls fn(**kw), which must fail with a ValidationException saying
    exactly message (HTTP 400)."""
    with pytest.raises(ClientError) as ei:
        fn(**kw)
    r = ei.value.response
    assert (r["Error"]["Code"], r["Error"]["Message"]) == (
        "ValidationException", message)
    assert r["ResponseMetadata"]["HTTPStatusCode"] == 400


def defs(*pairs):
    return [{"AttributeName": n, "AttributeType": t} for n, t in pairs]


def keys(*names):
    """KeySchema of names: the first HASH, the second RANGE; a name may
    be given as (name, KeyType) to force the type."""
    out = []
    for i, n in enumerate(names):
        if isinstance(n, tuple):
            out.append({"AttributeName": n[0], "KeyType": n[1]})
        else:
            out.append({"AttributeName": n,
                        "KeyType": "HASH" if i == 0 else "RANGE"})
    return out


def gsi(name, *key_names, projection=None, pt=None):
    g = {"IndexName": name, "KeySchema": keys(*key_names),
         "Projection": ({"ProjectionType": "ALL"} if projection is None
                        else projection)}
    if pt is not None:
        g["ProvisionedThroughput"] = {"ReadCapacityUnits": pt[0],
                                      "WriteCapacityUnits": pt[1]}
    return g


def lsi(name, *key_names, projection=None):
    return {"IndexName": name, "KeySchema": keys(*key_names),
            "Projection": ({"ProjectionType": "ALL"} if projection is None
                        else projection)}


def table_args(name, attrs=(("pk", "S"), ("g", "S")), key=("pk",),
               billing="PAY_PER_REQUEST", pt=None, **kw):
    """CreateTable arguments: an on-demand table keyed on pk with
    definitions for pk and g unless told otherwise."""
    a = {"TableName": name, "AttributeDefinitions": defs(*attrs),
         "KeySchema": keys(*key), "BillingMode": billing}
    if pt is not None:
        a["ProvisionedThroughput"] = {"ReadCapacityUnits": pt[0],
                                      "WriteCapacityUnits": pt[1]}
    a.update(kw)
    return a


@pytest.fixture
def name(unique):
    return "idx-" + unique


def refused(raw_ddb, ddb, message, **kw):
    """CreateTable with kw must be refused with message, and leave no
    table behind."""
    validation(raw_ddb.create_table, message, **kw)
    with pytest.raises(ClientError) as ei:
        ddb.describe_table(TableName=kw["TableName"])
    assert ei.value.response["Error"]["Code"] == \
        "ResourceNotFoundException"


# ---- shape: collected "N validation errors detected" ----

def test_bad_gsi_names_and_throughput(raw_ddb, ddb, name):
    # The request and the order of the clauses are as DynamoDB answered
    # dynalite's "bad GlobalSecondaryIndex names" test.
    long = "a" * 256
    refused(raw_ddb, ddb,
            "8 validation errors detected: "
            "Value 'h;' at 'globalSecondaryIndexes.1.member.indexName' "
            "failed to satisfy constraint: Member must satisfy regular "
            "expression pattern: [a-zA-Z0-9_.-]+; "
            "Value 'h;' at 'globalSecondaryIndexes.1.member.indexName' "
            "failed to satisfy constraint: Member must have length greater "
            "than or equal to 3; "
            "Value '0' at 'globalSecondaryIndexes.1.member."
            "provisionedThroughput.writeCapacityUnits' failed to satisfy "
            "constraint: Member must have value greater than or equal to 1; "
            "Value '0' at 'globalSecondaryIndexes.1.member."
            "provisionedThroughput.readCapacityUnits' failed to satisfy "
            "constraint: Member must have value greater than or equal to 1; "
            "Value '[]' at 'globalSecondaryIndexes.1.member.keySchema' "
            "failed to satisfy constraint: Member must have length greater "
            "than or equal to 1; "
            "Value '" + long + "' at 'globalSecondaryIndexes.2.member."
            "indexName' failed to satisfy constraint: Member must have "
            "length less than or equal to 255; "
            "Value null at 'globalSecondaryIndexes.2.member."
            "provisionedThroughput.writeCapacityUnits' failed to satisfy "
            "constraint: Member must not be null; "
            "Value null at 'globalSecondaryIndexes.2.member."
            "provisionedThroughput.readCapacityUnits' failed to satisfy "
            "constraint: Member must not be null",
            **table_args(name, attrs=(("a", "S"), ("b", "S")), key=("a",),
                         billing="PROVISIONED", pt=(1, 1),
                         GlobalSecondaryIndexes=[
                             {"IndexName": "h;", "KeySchema": [],
                              "Projection": {},
                              "ProvisionedThroughput": {
                                  "ReadCapacityUnits": 0,
                                  "WriteCapacityUnits": 0}},
                             {"IndexName": long,
                              "KeySchema": keys("a"), "Projection": {},
                              "ProvisionedThroughput": {}}]))


def test_bad_lsi_names(raw_ddb, ddb, name):
    # As DynamoDB answered dynalite's "bad LocalSecondaryIndex names".
    long = "a" * 256
    refused(raw_ddb, ddb,
            "4 validation errors detected: "
            "Value 'h;' at 'localSecondaryIndexes.1.member.indexName' "
            "failed to satisfy constraint: Member must satisfy regular "
            "expression pattern: [a-zA-Z0-9_.-]+; "
            "Value 'h;' at 'localSecondaryIndexes.1.member.indexName' "
            "failed to satisfy constraint: Member must have length greater "
            "than or equal to 3; "
            "Value '[]' at 'localSecondaryIndexes.1.member.keySchema' "
            "failed to satisfy constraint: Member must have length greater "
            "than or equal to 1; "
            "Value '" + long + "' at 'localSecondaryIndexes.2.member."
            "indexName' failed to satisfy constraint: Member must have "
            "length less than or equal to 255",
            **table_args(name, attrs=(("a", "S"), ("b", "S")), key=("a",),
                         billing="PROVISIONED", pt=(1, 1),
                         LocalSecondaryIndexes=[
                             {"IndexName": "h;", "KeySchema": [],
                              "Projection": {}},
                             {"IndexName": long, "KeySchema": keys("a"),
                              "Projection": {}}]))


def test_bad_projection_members(raw_ddb, ddb, name):
    # As DynamoDB answered dynalite's "invalid properties in
    # LocalSecondaryIndex", here for a GSI.
    refused(raw_ddb, ddb,
            "2 validation errors detected: "
            "Value 'abc' at 'globalSecondaryIndexes.1.member.projection."
            "projectionType' failed to satisfy constraint: Member must "
            "satisfy enum value set: [ALL, INCLUDE, KEYS_ONLY]; "
            "Value '[]' at 'globalSecondaryIndexes.1.member.projection."
            "nonKeyAttributes' failed to satisfy constraint: Member must "
            "have length greater than or equal to 1",
            **table_args(name, GlobalSecondaryIndexes=[gsi(
                "gsi1", "g", projection={"ProjectionType": "abc",
                                       "NonKeyAttributes": []})]))


@pytest.mark.parametrize("index, message", [
    ({"IndexName": "gsi1", "KeySchema": keys("g")},
     "Value null at 'globalSecondaryIndexes.1.member.projection' failed "
     "to satisfy constraint: Member must not be null"),
    ({"IndexName": "gsi1", "Projection": {"ProjectionType": "ALL"}},
     "Value null at 'globalSecondaryIndexes.1.member.keySchema' failed to "
     "satisfy constraint: Member must not be null"),
    ({"KeySchema": keys("g"), "Projection": {"ProjectionType": "ALL"}},
     "Value null at 'globalSecondaryIndexes.1.member.indexName' failed to "
     "satisfy constraint: Member must not be null"),
    (gsi("gsi1", ("g", "SORT")),
     "Value 'SORT' at 'globalSecondaryIndexes.1.member.keySchema.1.member."
     "keyType' failed to satisfy constraint: Member must satisfy enum "
     "value set: [HASH, RANGE]"),
    ({"IndexName": "gsi1", "KeySchema": [{"KeyType": "HASH"}],
      "Projection": {"ProjectionType": "ALL"}},
     "Value null at 'globalSecondaryIndexes.1.member.keySchema.1.member."
     "attributeName' failed to satisfy constraint: Member must not be "
     "null"),
    ({"IndexName": "gsi1", "KeySchema": [{"AttributeName": "g"}],
      "Projection": {"ProjectionType": "ALL"}},
     "Value null at 'globalSecondaryIndexes.1.member.keySchema.1.member."
     "keyType' failed to satisfy constraint: Member must not be null"),
    # DynamoDB prints the list's elements here; like the table's own
    # KeySchema check, the router prints "[...]". A GSI's key has up to
    # four HASH and four RANGE attributes (multi-attribute keys).
    (gsi("gsi1", *(["g"] * 9)),
     "Value '[...]' at 'globalSecondaryIndexes.1.member.keySchema' failed "
     "to satisfy constraint: Member must have length less than or equal "
     "to 8"),
    (gsi("gsi1", "g", projection={
        "ProjectionType": "INCLUDE",
        "NonKeyAttributes": ["a%d" % i for i in range(21)]}),
     "Value '[" + ", ".join("a%d" % i for i in range(21)) + "]' at "
     "'globalSecondaryIndexes.1.member.projection.nonKeyAttributes' failed "
     "to satisfy constraint: Member must have length less than or equal "
     "to 20"),
])
def test_gsi_shape(raw_ddb, ddb, name, index, message):
    refused(raw_ddb, ddb, "1 validation error detected: " + message,
            **table_args(name, GlobalSecondaryIndexes=[index]))


def test_shape_errors_come_with_the_tables(raw_ddb, ddb, name):
    # The table's own violations are listed first, then the indexes'.
    refused(raw_ddb, ddb,
            "2 validation errors detected: Value 'X' at 'billingMode' "
            "failed to satisfy constraint: Member must satisfy enum value "
            "set: [PROVISIONED, PAY_PER_REQUEST]; Value 'x' at "
            "'globalSecondaryIndexes.1.member.indexName' failed to satisfy "
            "constraint: Member must have length greater than or equal "
            "to 3",
            **table_args(name, billing="X",
                         GlobalSecondaryIndexes=[gsi("x", "g")]))


def test_nonkey_attribute_of_the_wrong_type(raw_ddb, name):
    with pytest.raises(ClientError) as ei:
        raw_ddb.create_table(**table_args(name, GlobalSecondaryIndexes=[
            gsi("gsi1", "g", projection={"ProjectionType": "INCLUDE",
                                       "NonKeyAttributes": ["a", 123]})]))
    assert ei.value.response["Error"] == {
        "Code": "SerializationException",
        "Message": "Unexpected value type in payload for member "
                   "NonKeyAttributes"}


# ---- the lists as a whole ----

def test_empty_lists(raw_ddb, ddb, name):
    refused(raw_ddb, ddb, INVALID + "List of GlobalSecondaryIndexes is "
            "empty", **table_args(name, GlobalSecondaryIndexes=[]))
    refused(raw_ddb, ddb, INVALID + "List of LocalSecondaryIndexes is empty",
            **table_args(name, attrs=(("pk", "S"), ("sk", "S")),
                         key=("pk", "sk"), LocalSecondaryIndexes=[]))


def test_too_many_gsis(raw_ddb, ddb, name):
    refused(raw_ddb, ddb, INVALID + "GlobalSecondaryIndex count exceeds "
            "the per-table limit of 20",
            **table_args(name, GlobalSecondaryIndexes=[
                gsi("gsi%02d" % i, "g") for i in range(21)]))


def test_too_many_lsis(raw_ddb, ddb, name):
    refused(raw_ddb, ddb, INVALID + "Number of LocalSecondaryIndexes "
            "exceeds per-table limit of 5",
            **table_args(name, attrs=(("pk", "S"), ("sk", "S")),
                         key=("pk", "sk"), LocalSecondaryIndexes=[
                             lsi("lsi%d" % i, "pk", "sk") for i in range(6)]))


def test_duplicate_index_names(raw_ddb, ddb, name):
    refused(raw_ddb, ddb, INVALID + "Duplicate index name: dup",
            **table_args(name, GlobalSecondaryIndexes=[
                gsi("dup", "g"), gsi("dup", "pk")]))
    # Across the two lists too: an LSI and a GSI may not share a name.
    refused(raw_ddb, ddb, INVALID + "Duplicate index name: dup",
            **table_args(name, attrs=(("pk", "S"), ("sk", "S"),
                                      ("g", "S")),
                         key=("pk", "sk"),
                         LocalSecondaryIndexes=[lsi("dup", "pk", "g")],
                         GlobalSecondaryIndexes=[gsi("dup", "g")]))


# ---- key schemas and attribute definitions ----

def test_index_key_schema_order(raw_ddb, ddb, name):
    a = dict(attrs=(("pk", "S"), ("g", "S"), ("h", "S")))
    refused(raw_ddb, ddb, "Invalid KeySchema: The first KeySchemaElement "
            "is not a HASH key type", **table_args(
                name, GlobalSecondaryIndexes=[gsi("gsi1", ("g", "RANGE"),
                                                  "h")], **a))
    # Two HASH elements make a GSI's multi-attribute partition key
    # (test_gsi_multikey.py); an LSI's second element must be RANGE.
    refused(raw_ddb, ddb, "Invalid KeySchema: The second KeySchemaElement "
            "is not a RANGE key type", **table_args(
                name, key=("pk", "g"), LocalSecondaryIndexes=[lsi(
                    "lsi1", "pk", ("h", "HASH"))], **a))
    refused(raw_ddb, ddb, "Both the Hash Key and the Range Key element in "
            "the KeySchema have the same name", **table_args(
                name, attrs=(("pk", "S"), ("g", "S")),
                GlobalSecondaryIndexes=[gsi("gsi1", "g", "g")]))


def test_index_keys_must_be_defined(raw_ddb, ddb, name):
    # DynamoDB names the index's keys and all the definitions (dynalite:
    # "missing attribute definitions in GlobalSecondaryIndex").
    refused(raw_ddb, ddb, INVALID + "Some index key attributes are not "
            "defined in AttributeDefinitions. Keys: [c, d], "
            "AttributeDefinitions: [a, b]", **table_args(
                name, attrs=(("a", "S"), ("b", "S")), key=("a", "b"),
                GlobalSecondaryIndexes=[gsi("abc", ("c", "RANGE"),
                                            ("d", "RANGE")),
                                        gsi("abd", ("e", "RANGE"))]))
    # A missing definition is reported before an unused one.
    refused(raw_ddb, ddb, INVALID + "Some index key attributes are not "
            "defined in AttributeDefinitions. Keys: [c], "
            "AttributeDefinitions: [a, b]", **table_args(
                name, attrs=(("a", "S"), ("b", "S")), key=("a",),
                GlobalSecondaryIndexes=[gsi("abc", ("c", "RANGE"))]))


def test_unused_attribute_definitions(raw_ddb, ddb, name):
    # "keys used" comes in the order of DynamoDB's hash set; these two are
    # the answers it gave (the second as captured from DynamoDB itself).
    refused(raw_ddb, ddb, INVALID + "Some AttributeDefinitions are not "
            "used. AttributeDefinitions: [pk, g, x], keys used: [g, pk]",
            **table_args(name, attrs=(("pk", "S"), ("g", "S"), ("x", "N")),
                         GlobalSecondaryIndexes=[gsi("gsi1", "g")]))
    refused(raw_ddb, ddb, INVALID + "Some AttributeDefinitions are not "
            "used. AttributeDefinitions: [sk, a, b, pk, c], keys used: "
            "[a, sk, pk]",
            **table_args(name, attrs=(("sk", "S"), ("a", "S"), ("b", "S"),
                                      ("pk", "S"), ("c", "S")),
                         key=("pk", "sk"),
                         GlobalSecondaryIndexes=[gsi("gsi1", "a")]))
    # Without indexes the old message stays.
    refused(raw_ddb, ddb, INVALID + "Number of attributes in KeySchema "
            "does not exactly match number of attributes defined in "
            "AttributeDefinitions", **table_args(name))


def test_lsi_key_rules(raw_ddb, ddb, name):
    rng = dict(attrs=(("pk", "S"), ("sk", "S"), ("l", "S")),
               key=("pk", "sk"))
    refused(raw_ddb, ddb, INVALID + "Table KeySchema does not have a range "
            "key, which is required when specifying a LocalSecondaryIndex",
            **table_args(name, attrs=(("pk", "S"), ("l", "S")),
                         LocalSecondaryIndexes=[lsi("lsi1", "pk", "l")]))
    refused(raw_ddb, ddb, INVALID + "Index KeySchema does not have a range "
            "key for index: lsi1", **table_args(
                name, LocalSecondaryIndexes=[lsi("lsi1", "pk"),
                                             lsi("lsi2", "pk", "l")], **rng))
    refused(raw_ddb, ddb, INVALID + "Index KeySchema does not have the same "
            "leading hash key as table KeySchema for index: lsi1. index hash "
            "key: l, table hash key: pk", **table_args(
                name, LocalSecondaryIndexes=[lsi("lsi1", "l", "sk")], **rng))


# ---- projections ----

@pytest.mark.parametrize("projection, message", [
    ({}, "Unknown ProjectionType: null"),
    ({"NonKeyAttributes": ["a"]}, "Unknown ProjectionType: null"),
    ({"ProjectionType": "ALL", "NonKeyAttributes": ["a"]},
     "ProjectionType is ALL, but NonKeyAttributes is specified"),
    ({"ProjectionType": "KEYS_ONLY", "NonKeyAttributes": ["a"]},
     "ProjectionType is KEYS_ONLY, but NonKeyAttributes is specified"),
    ({"ProjectionType": "INCLUDE"},
     "ProjectionType is INCLUDE, but NonKeyAttributes is not specified"),
    ({"ProjectionType": "INCLUDE", "NonKeyAttributes": ["a", "b", "a"]},
     "Duplicate element in NonKeyAttributes: a"),
])
def test_projection_rules(raw_ddb, ddb, name, projection, message):
    refused(raw_ddb, ddb, INVALID + message, **table_args(
        name, GlobalSecondaryIndexes=[gsi("gsi1", "g",
                                          projection=projection)]))
    refused(raw_ddb, ddb, INVALID + message, **table_args(
        name, attrs=(("pk", "S"), ("sk", "S"), ("g", "S")),
        key=("pk", "sk"), LocalSecondaryIndexes=[
            lsi("lsi1", "pk", "g", projection=projection)]))


def test_projected_attributes_over_all_indexes(raw_ddb, ddb, name):
    # 6 x 20 NonKeyAttributes: each index within its own limit, the table
    # over the 100 summed across its indexes. The wording is ours
    # (DynamoDB's was not found).
    inc = {"ProjectionType": "INCLUDE",
           "NonKeyAttributes": ["n%d" % i for i in range(20)]}
    refused(raw_ddb, ddb, INVALID + "Number of NonKeyAttributes summed "
            "across all secondary indexes exceeds the per-table limit of "
            "100", **table_args(name, GlobalSecondaryIndexes=[
                gsi("gsi%d" % i, "g", projection=inc) for i in range(6)]))


# ---- GSI throughput and billing ----

def test_gsi_throughput_follows_billing_mode(raw_ddb, ddb, name):
    refused(raw_ddb, ddb, INVALID + "ProvisionedThroughput is not "
            "specified for index: gsi1", **table_args(
                name, billing="PROVISIONED", pt=(1, 1),
                GlobalSecondaryIndexes=[gsi("gsi1", "g")]))
    refused(raw_ddb, ddb, INVALID + "ProvisionedThroughput should not be "
            "specified for index: gsi1 when BillingMode is PAY_PER_REQUEST",
            **table_args(name, GlobalSecondaryIndexes=[
                gsi("gsi1", "g", pt=(1, 1))]))
    refused(raw_ddb, ddb, "Given value 1000000000001 for ReadCapacityUnits "
            "is out of bounds", **table_args(
                name, billing="PROVISIONED", pt=(1, 1),
                GlobalSecondaryIndexes=[gsi("gsi1", "g",
                                            pt=(1000000000001, 1))]))
    refused(raw_ddb, ddb, "Given value 1000000000001 for WriteCapacityUnits "
            "is out of bounds", **table_args(
                name, billing="PROVISIONED", pt=(1, 1),
                GlobalSecondaryIndexes=[gsi("gsi1", "g",
                                            pt=(1, 1000000000001))]))


# ---- accepted tables ----

def wait_indexes_active(ddb, table, timeout=30.0):
    """DescribeTable's Table once it and all its GSIs are ACTIVE."""
    deadline = time.monotonic() + timeout
    while True:
        t = ddb.describe_table(TableName=table)["Table"]
        states = [g["IndexStatus"] for g in
                  t.get("GlobalSecondaryIndexes", [])]
        if t["TableStatus"] == "ACTIVE" and all(
                s == "ACTIVE" for s in states):
            return t
        assert time.monotonic() < deadline, \
            "%s: table %s, indexes %s" % (table, t["TableStatus"], states)
        time.sleep(0.2)


TWO_GSIS = [
    {"IndexName": "by_g", "KeySchema": keys("g", "n"),
     "Projection": {"ProjectionType": "INCLUDE",
                    "NonKeyAttributes": ["x", "y"]}},
    {"IndexName": "by_h", "KeySchema": keys("h"),
     "Projection": {"ProjectionType": "KEYS_ONLY"}},
]
TWO_GSI_ATTRS = (("pk", "S"), ("sk", "N"), ("g", "S"), ("n", "N"),
                 ("h", "B"))


def by_name(attrs):
    return sorted(attrs, key=lambda a: a["AttributeName"])


def expected_indexes(arn, status, throughput):
    out = []
    for g, (r, w) in zip(TWO_GSIS, throughput):
        out.append({"IndexName": g["IndexName"], "KeySchema": g["KeySchema"],
                    "Projection": g["Projection"], "IndexStatus": status,
                    "ProvisionedThroughput": {
                        "NumberOfDecreasesToday": 0,
                        "ReadCapacityUnits": r, "WriteCapacityUnits": w},
                    "IndexSizeBytes": 0, "ItemCount": 0,
                    "IndexArn": arn + "/index/" + g["IndexName"]})
    return out


@pytest.mark.parametrize("billing", ["PROVISIONED", "PAY_PER_REQUEST"])
def test_create_with_two_gsis(ddb, name, billing):
    prov = billing == "PROVISIONED"
    gsis = [dict(g) for g in TWO_GSIS]
    throughput = [(2, 3), (1, 1)] if prov else [(0, 0), (0, 0)]
    if prov:
        for g, (r, w) in zip(gsis, throughput):
            g["ProvisionedThroughput"] = {"ReadCapacityUnits": r,
                                          "WriteCapacityUnits": w}
    args = table_args(name, attrs=TWO_GSI_ATTRS, key=("pk", "sk"),
                      billing=billing, pt=(5, 5) if prov else None,
                      GlobalSecondaryIndexes=gsis)
    d = ddb.create_table(**args)["TableDescription"]
    assert d["TableStatus"] == "CREATING"
    assert "LocalSecondaryIndexes" not in d
    assert d["GlobalSecondaryIndexes"] == expected_indexes(
        d["TableArn"], "CREATING", throughput)
    assert by_name(d["AttributeDefinitions"]) == by_name(
        defs(*TWO_GSI_ATTRS))

    t = wait_indexes_active(ddb, name)
    assert t["GlobalSecondaryIndexes"] == expected_indexes(
        t["TableArn"], "ACTIVE", throughput)
    assert t["KeySchema"] == keys("pk", "sk")
    assert by_name(t["AttributeDefinitions"]) == by_name(
        defs(*TWO_GSI_ATTRS))


def test_index_tables_stay_hidden(ddb, raw_ddb, name):
    ddb.create_table(**table_args(
        name, attrs=TWO_GSI_ATTRS, key=("pk", "sk"),
        GlobalSecondaryIndexes=TWO_GSIS))
    wait_indexes_active(ddb, name)

    # Every page of ListTables, one name at a time: the base table, and
    # never a "BASE/INDEX" table, nor one as LastEvaluatedTableName.
    seen, start = [], None
    while True:
        kw = {"Limit": 1}
        if start is not None:
            kw["ExclusiveStartTableName"] = start
        r = ddb.list_tables(**kw)
        seen += r["TableNames"]
        start = r.get("LastEvaluatedTableName")
        assert start is None or "/" not in start
        if start is None:
            break
    assert name in seen
    assert not [n for n in seen if "/" in n]
    assert ddb.list_tables()["TableNames"] == sorted(seen)

    # The index tables' names are refused before any lookup.
    hidden = name + "/by_g"
    msg = ("1 validation error detected: Value '%s' at 'tableName' failed "
           "to satisfy constraint: Member must satisfy regular expression "
           "pattern: [a-zA-Z0-9_.-]+" % hidden)
    validation(raw_ddb.describe_table, msg, TableName=hidden)
    validation(raw_ddb.get_item, msg, TableName=hidden,
               Key={"g": {"S": "a"}, "n": {"N": "1"}})
    validation(raw_ddb.scan, msg, TableName=hidden)
    validation(raw_ddb.delete_table, msg, TableName=hidden)



def test_describe_counts_index_entries(ddb, name):
    # DescribeTable counts each GSI's entries as it counts the table's:
    # only items that carry the index's key attributes have one.
    ddb.create_table(**table_args(
        name, attrs=TWO_GSI_ATTRS, key=("pk", "sk"),
        GlobalSecondaryIndexes=TWO_GSIS))
    wait_indexes_active(ddb, name)
    items = [{"pk": {"S": "a%d" % i}, "sk": {"N": "1"}, "g": {"S": "x"},
              "n": {"N": str(i)}, "x": {"S": "projected"}}
             for i in range(3)]
    items += [{"pk": {"S": "b%d" % i}, "sk": {"N": "1"},
               "h": {"B": b"\x01"}} for i in range(2)]
    items.append({"pk": {"S": "c"}, "sk": {"N": "1"}, "v": {"S": "none"}})
    for item in items:
        ddb.put_item(TableName=name, Item=item)
    # The index entries follow the writes asynchronously.
    deadline = time.monotonic() + 15
    while True:
        t = ddb.describe_table(TableName=name)["Table"]
        got = {g["IndexName"]: (g["ItemCount"], g["IndexSizeBytes"] > 0)
               for g in t["GlobalSecondaryIndexes"]}
        if got == {"by_g": (3, True), "by_h": (2, True)}:
            break
        assert time.monotonic() < deadline, got
        time.sleep(0.2)
    assert t["ItemCount"] == 6
    assert not [g for g in t["GlobalSecondaryIndexes"] if "Backfilling" in g]


# ---- UpdateTable: GlobalSecondaryIndexUpdates ----
#
# Sources of the expected texts: dynalite's test/updateTable.js (answers
# DynamoDB gave its tests), the ack-api-quirks lab's captures of DynamoDB
# (findings DDB-TABLE-137, -152, -159, -160, -161, -162, -164, -169, -174,
# -359; the message catalogue DDB-TABLE-442), and Alternator's
# test_gsi_updatetable.py for the redefinition message. Where only the
# words are known, the order of the checks is ours.

def refused_update(raw_ddb, code, message, **kw):
    """UpdateTable with kw must fail with exception `code` saying exactly
    message (HTTP 400)."""
    with pytest.raises(ClientError) as ei:
        raw_ddb.update_table(**kw)
    r = ei.value.response
    assert (r["Error"]["Code"], r["Error"]["Message"]) == (code, message)
    assert r["ResponseMetadata"]["HTTPStatusCode"] == 400


def create_action(name, *key_names, projection=None, pt=None):
    return {"Create": gsi(name, *key_names, projection=projection, pt=pt)}


def table_with_gsi(ddb, name, billing="PAY_PER_REQUEST"):
    """An ACTIVE table keyed on pk (S) with GSI by_g on g (S): on-demand,
    or provisioned 5/5 with the index at 2/3."""
    prov = billing == "PROVISIONED"
    ddb.create_table(**table_args(
        name, billing=billing, pt=(5, 5) if prov else None,
        GlobalSecondaryIndexes=[gsi("by_g", "g",
                                    pt=(2, 3) if prov else None)]))
    return wait_indexes_active(ddb, name)


def test_update_shape_of_update_actions(raw_ddb, name):
    # As DynamoDB answered dynalite's "empty Update" and "bad IndexName
    # and ProvisionedThroughput" (a read out of bounds is no shape error).
    refused_update(
        raw_ddb, "ValidationException",
        "2 validation errors detected: "
        "Value null at 'globalSecondaryIndexUpdates.1.member.update."
        "indexName' failed to satisfy constraint: Member must not be null; "
        "Value null at 'globalSecondaryIndexUpdates.1.member.update."
        "provisionedThroughput' failed to satisfy constraint: Member must "
        "not be null",
        TableName=name, GlobalSecondaryIndexUpdates=[{"Update": {}}])
    refused_update(
        raw_ddb, "ValidationException",
        "5 validation errors detected: "
        "Value 'a' at 'globalSecondaryIndexUpdates.1.member.update."
        "indexName' failed to satisfy constraint: Member must have length "
        "greater than or equal to 3; "
        "Value null at 'globalSecondaryIndexUpdates.1.member.update."
        "provisionedThroughput.writeCapacityUnits' failed to satisfy "
        "constraint: Member must not be null; "
        "Value null at 'globalSecondaryIndexUpdates.1.member.update."
        "provisionedThroughput.readCapacityUnits' failed to satisfy "
        "constraint: Member must not be null; "
        "Value 'abc;' at 'globalSecondaryIndexUpdates.2.member.update."
        "indexName' failed to satisfy constraint: Member must satisfy "
        "regular expression pattern: [a-zA-Z0-9_.-]+; "
        "Value '0' at 'globalSecondaryIndexUpdates.2.member.update."
        "provisionedThroughput.writeCapacityUnits' failed to satisfy "
        "constraint: Member must have value greater than or equal to 1",
        TableName=name, GlobalSecondaryIndexUpdates=[
            {"Update": {"IndexName": "a", "ProvisionedThroughput": {}}},
            {"Update": {"IndexName": "abc;", "ProvisionedThroughput": {
                "ReadCapacityUnits": 1000000000001,
                "WriteCapacityUnits": 0}}}])


def test_update_shape_of_create_and_delete_actions(raw_ddb, name):
    # A Create's violations come projection first (dynalite's order for
    # UpdateTable), then name, throughput and key schema.
    refused_update(
        raw_ddb, "ValidationException",
        "6 validation errors detected: "
        "Value 'abc' at 'globalSecondaryIndexUpdates.1.member.create."
        "projection.projectionType' failed to satisfy constraint: Member "
        "must satisfy enum value set: [ALL, INCLUDE, KEYS_ONLY]; "
        "Value 'x' at 'globalSecondaryIndexUpdates.1.member.create."
        "indexName' failed to satisfy constraint: Member must have length "
        "greater than or equal to 3; "
        "Value '0' at 'globalSecondaryIndexUpdates.1.member.create."
        "provisionedThroughput.writeCapacityUnits' failed to satisfy "
        "constraint: Member must have value greater than or equal to 1; "
        "Value '0' at 'globalSecondaryIndexUpdates.1.member.create."
        "provisionedThroughput.readCapacityUnits' failed to satisfy "
        "constraint: Member must have value greater than or equal to 1; "
        "Value '[]' at 'globalSecondaryIndexUpdates.1.member.create."
        "keySchema' failed to satisfy constraint: Member must have length "
        "greater than or equal to 1; "
        "Value null at 'globalSecondaryIndexUpdates.2.member.delete."
        "indexName' failed to satisfy constraint: Member must not be null",
        TableName=name, AttributeDefinitions=defs(("g", "S")),
        GlobalSecondaryIndexUpdates=[
            {"Create": {"IndexName": "x", "KeySchema": [],
                        "Projection": {"ProjectionType": "abc"},
                        "ProvisionedThroughput": {
                            "ReadCapacityUnits": 0,
                            "WriteCapacityUnits": 0}}},
            {"Delete": {}}])
    refused_update(
        raw_ddb, "ValidationException",
        "3 validation errors detected: "
        "Value null at 'globalSecondaryIndexUpdates.1.member.create."
        "projection' failed to satisfy constraint: Member must not be "
        "null; "
        "Value null at 'globalSecondaryIndexUpdates.1.member.create."
        "keySchema' failed to satisfy constraint: Member must not be null; "
        "Value 'SORT' at 'globalSecondaryIndexUpdates.2.member.create."
        "keySchema.1.member.keyType' failed to satisfy constraint: Member "
        "must satisfy enum value set: [HASH, RANGE]",
        TableName=name, AttributeDefinitions=defs(("g", "S")),
        GlobalSecondaryIndexUpdates=[
            {"Create": {"IndexName": "gsi1"}},
            create_action("gsi2", ("g", "SORT"))])


def test_update_shape_errors_come_with_the_tables(raw_ddb):
    # AttributeDefinitions, then the table's own members, then the index
    # updates: the order of UpdateTable's members (ours; DynamoDB's order
    # across members was not found).
    refused_update(
        raw_ddb, "ValidationException",
        "3 validation errors detected: "
        "Value 'X' at 'attributeDefinitions.1.member.attributeType' failed "
        "to satisfy constraint: Member must satisfy enum value set: "
        "[B, N, S]; "
        "Value 'ab' at 'tableName' failed to satisfy constraint: Member "
        "must have length greater than or equal to 3; "
        "Value 'x' at 'globalSecondaryIndexUpdates.1.member.delete."
        "indexName' failed to satisfy constraint: Member must have length "
        "greater than or equal to 3",
        TableName="ab", AttributeDefinitions=defs(("g", "X")),
        GlobalSecondaryIndexUpdates=[{"Delete": {"IndexName": "x"}}])


def post_update_table(cluster, body):
    """UpdateTable with a body boto3 would not send: (status, __type
    without its prefix, message)."""
    u = urllib.parse.urlparse(cluster.endpoint)
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
    c.request("POST", "/", body=json.dumps(body), headers={
        "Content-Type": "application/x-amz-json-1.0",
        "X-Amz-Target": "DynamoDB_20120810.UpdateTable"})
    r = c.getresponse()
    j = json.loads(r.read())
    c.close()
    return (r.status, j["__type"].rsplit("#", 1)[-1],
            j.get("message", j.get("Message")))


def test_update_actions_of_the_wrong_type(cluster, name):
    for updates, member in ((["by_g"], "GlobalSecondaryIndexUpdates"),
                            ([{"Delete": "by_g"}], "Delete"),
                            ([{"Update": {"IndexName": 5}}], "IndexName")):
        assert post_update_table(cluster, {
            "TableName": name, "GlobalSecondaryIndexUpdates": updates}) == (
            400, "SerializationException",
            "Unexpected value type in payload for member " + member)


def test_update_list_rules(raw_ddb, ddb, name):
    # These need no table: DynamoDB answers them for a missing one too.
    refused_update(
        raw_ddb, "ValidationException", INVALID + "One of "
        "GlobalSecondaryIndexUpdate.Update, GlobalSecondaryIndexUpdate."
        "Create, GlobalSecondaryIndexUpdate.Delete must not be null",
        TableName=name, GlobalSecondaryIndexUpdates=[{}, {}])
    refused_update(
        raw_ddb, "ValidationException", INVALID + "Only one global "
        "secondary index action is allowed per GlobalSecondaryIndexUpdate "
        "object",
        TableName=name, AttributeDefinitions=defs(("h", "S")),
        GlobalSecondaryIndexUpdates=[dict(create_action("by_h", "h"),
                                          Delete={"IndexName": "by_g"})])
    refused_update(
        raw_ddb, "ValidationException", INVALID + "Only one global "
        "secondary index update per index is allowed simultaneously. "
        "Index: abc",
        TableName=name, GlobalSecondaryIndexUpdates=[
            {"Delete": {"IndexName": "abc"}},
            {"Delete": {"IndexName": "abc"}}])
    refused_update(
        raw_ddb, "ValidationException", INVALID + "Only one global "
        "secondary index update per index is allowed simultaneously. "
        "Index: abc",
        TableName=name, GlobalSecondaryIndexUpdates=[
            {"Update": {"IndexName": "abc", "ProvisionedThroughput": {
                "ReadCapacityUnits": 1, "WriteCapacityUnits": 1}}},
            {"Delete": {"IndexName": "abc"}}])
    # An empty list alone is no change at all; with another change it is
    # refused (DDB-TABLE-359).
    refused_update(
        raw_ddb, "ValidationException", "At least one of "
        "ProvisionedThroughput, BillingMode, UpdateStreamEnabled, "
        "GlobalSecondaryIndexUpdates or SSESpecification or ReplicaUpdates "
        "is required", TableName=name, GlobalSecondaryIndexUpdates=[])
    refused_update(
        raw_ddb, "ValidationException", INVALID + "List of "
        "GlobalSecondaryIndexUpdates is empty", TableName=name,
        BillingMode="PAY_PER_REQUEST", GlobalSecondaryIndexUpdates=[])
    # AttributeDefinitions alone changes nothing either (DDB-TABLE-162).
    refused_update(
        raw_ddb, "ValidationException", "At least one of "
        "ProvisionedThroughput, BillingMode, UpdateStreamEnabled, "
        "GlobalSecondaryIndexUpdates or SSESpecification or ReplicaUpdates "
        "is required", TableName=name,
        AttributeDefinitions=defs(("h", "S")))
    # Then the table: dynalite's "NotFoundException for high index
    # ReadCapacityUnits when table does not exist".
    refused_update(
        raw_ddb, "ResourceNotFoundException",
        "Requested resource not found: Table: %s not found" % name,
        TableName=name, GlobalSecondaryIndexUpdates=[{"Update": {
            "IndexName": "abc", "ProvisionedThroughput": {
                "ReadCapacityUnits": 1000000000001,
                "WriteCapacityUnits": 1000000000001}}}])


def test_update_one_online_index_at_a_time(raw_ddb, ddb, name):
    # LimitExceededException, before any index is looked up: two creates,
    # two deletes of indexes the table does not have, or one of each
    # (DDB-TABLE-159; Alternator's test_gsi_updatetable_errors).
    table_with_gsi(ddb, name)
    msg = ("Subscriber limit exceeded: Only 1 online index can be created "
           "or deleted simultaneously per table")
    for updates in ([create_action("ind1", "h"), create_action("ind2", "h")],
                    [{"Delete": {"IndexName": "ind1"}},
                     {"Delete": {"IndexName": "ind2"}}],
                    [create_action("ind1", "h"),
                     {"Delete": {"IndexName": "by_g"}}]):
        refused_update(raw_ddb, "LimitExceededException", msg,
                       TableName=name, AttributeDefinitions=defs(("h", "S")),
                       GlobalSecondaryIndexUpdates=updates)


def test_update_missing_indexes(raw_ddb, ddb, name):
    # ResourceNotFoundException naming the index and its table
    # (DDB-TABLE-161, -375).
    table_with_gsi(ddb, name, billing="PROVISIONED")
    msg = "Requested resource not found: Index nope for table " + name
    refused_update(raw_ddb, "ResourceNotFoundException", msg,
                   TableName=name, GlobalSecondaryIndexUpdates=[
                       {"Delete": {"IndexName": "nope"}}])
    refused_update(raw_ddb, "ResourceNotFoundException", msg,
                   TableName=name, GlobalSecondaryIndexUpdates=[
                       {"Update": {"IndexName": "by_g",
                                   "ProvisionedThroughput": {
                                       "ReadCapacityUnits": 7,
                                       "WriteCapacityUnits": 7}}},
                       {"Update": {"IndexName": "nope",
                                   "ProvisionedThroughput": {
                                       "ReadCapacityUnits": 1,
                                       "WriteCapacityUnits": 1}}}])
    # The valid Update in the refused request was not made.
    t = ddb.describe_table(TableName=name)["Table"]
    pt = t["GlobalSecondaryIndexes"][0]["ProvisionedThroughput"]
    assert (pt["ReadCapacityUnits"], pt["WriteCapacityUnits"]) == (2, 3)
    # Out-of-bounds units, even for an index the table lacks (dynalite).
    refused_update(
        raw_ddb, "ValidationException", "This operation cannot be "
        "performed with given input values. Please contact DynamoDB "
        "service team for more info: Action Blocked: IndexUpdate",
        TableName=name, GlobalSecondaryIndexUpdates=[{"Update": {
            "IndexName": "nope", "ProvisionedThroughput": {
                "ReadCapacityUnits": 1000000000000,
                "WriteCapacityUnits": 1000000000001}}}])


def test_update_throughput_rules(raw_ddb, ddb, name):
    table_with_gsi(ddb, name, billing="PROVISIONED")
    # Unchanged units (DDB-TABLE-164; the message's end as the table's).
    refused_update(
        raw_ddb, "ValidationException", "The provisioned throughput for "
        "the index by_g will not change. The requested value equals the "
        "current value. Current ReadCapacityUnits provisioned for index "
        "by_g: 2. Requested ReadCapacityUnits: 2. Current "
        "WriteCapacityUnits provisioned for index by_g: 3. Requested "
        "WriteCapacityUnits: 3. Refer to the Amazon DynamoDB Developer "
        "Guide for current limits and how to request higher limits.",
        TableName=name, GlobalSecondaryIndexUpdates=[{"Update": {
            "IndexName": "by_g", "ProvisionedThroughput": {
                "ReadCapacityUnits": 2, "WriteCapacityUnits": 3}}}])
    # A create or delete does not go with the table's units
    # (DDB-TABLE-174).
    refused_update(
        raw_ddb, "ValidationException", INVALID + "You cannot create or "
        "delete index while updating table IOPS",
        TableName=name, ProvisionedThroughput={"ReadCapacityUnits": 6,
                                               "WriteCapacityUnits": 6},
        AttributeDefinitions=defs(("h", "S")),
        GlobalSecondaryIndexUpdates=[create_action("by_h", "h", pt=(1, 1))])
    refused_update(
        raw_ddb, "ValidationException", INVALID + "You cannot create or "
        "delete index while updating table IOPS",
        TableName=name, ProvisionedThroughput={"ReadCapacityUnits": 6,
                                               "WriteCapacityUnits": 6},
        GlobalSecondaryIndexUpdates=[{"Delete": {"IndexName": "by_g"}}])
    # A new index of a provisioned table needs units (DDB-TABLE-152),
    # within bounds.
    refused_update(
        raw_ddb, "ValidationException", INVALID + "Both ReadCapacityUnits "
        "and WriteCapacityUnits must be specified for index: by_h",
        TableName=name, AttributeDefinitions=defs(("h", "S")),
        GlobalSecondaryIndexUpdates=[create_action("by_h", "h")])
    refused_update(
        raw_ddb, "ValidationException", "Given value 1000000000001 for "
        "ReadCapacityUnits is out of bounds",
        TableName=name, AttributeDefinitions=defs(("h", "S")),
        GlobalSecondaryIndexUpdates=[create_action(
            "by_h", "h", pt=(1000000000001, 1))])
    # Unchanged table units with an index change: refused before either
    # is made.
    refused_update(
        raw_ddb, "ValidationException", "The provisioned throughput for "
        "the table will not change. The requested value equals the current "
        "value. Current ReadCapacityUnits provisioned for the table: 5. "
        "Requested ReadCapacityUnits: 5. Current WriteCapacityUnits "
        "provisioned for the table: 5. Requested WriteCapacityUnits: 5. "
        "Refer to the Amazon DynamoDB Developer Guide for current limits "
        "and how to request higher limits.",
        TableName=name, ProvisionedThroughput={"ReadCapacityUnits": 5,
                                               "WriteCapacityUnits": 5},
        GlobalSecondaryIndexUpdates=[{"Update": {
            "IndexName": "by_g", "ProvisionedThroughput": {
                "ReadCapacityUnits": 4, "WriteCapacityUnits": 4}}}])
    t = ddb.describe_table(TableName=name)["Table"]
    pt = t["GlobalSecondaryIndexes"][0]["ProvisionedThroughput"]
    assert (pt["ReadCapacityUnits"], pt["WriteCapacityUnits"]) == (2, 3)


def test_update_on_demand_throughput_rules(raw_ddb, ddb, name):
    table_with_gsi(ddb, name)
    refused_update(
        raw_ddb, "ValidationException", INVALID + "The only Updates for "
        "index: by_g when TableThroughputMode is PAY_PER_REQUEST can be to "
        "OnDemandThroughput, WarmThroughput",
        TableName=name, GlobalSecondaryIndexUpdates=[{"Update": {
            "IndexName": "by_g", "ProvisionedThroughput": {
                "ReadCapacityUnits": 1, "WriteCapacityUnits": 1}}}])
    refused_update(
        raw_ddb, "ValidationException", INVALID + "Neither "
        "ReadCapacityUnits nor WriteCapacityUnits can be specified for "
        "index: by_h when BillingMode is PAY_PER_REQUEST",
        TableName=name, AttributeDefinitions=defs(("h", "S")),
        GlobalSecondaryIndexUpdates=[create_action("by_h", "h",
                                                   pt=(1, 1))])
    # Switching to PROVISIONED: every GSI needs its own units
    # (DDB-TABLE-152).
    refused_update(
        raw_ddb, "ValidationException", INVALID + "ProvisionedThroughput "
        "must be specified for index: by_g",
        TableName=name, BillingMode="PROVISIONED",
        ProvisionedThroughput={"ReadCapacityUnits": 5,
                               "WriteCapacityUnits": 5})
    refused_update(
        raw_ddb, "ValidationException", INVALID + "ProvisionedThroughput "
        "must be specified when BillingMode is PROVISIONED",
        TableName=name, BillingMode="PROVISIONED",
        GlobalSecondaryIndexUpdates=[{"Update": {
            "IndexName": "by_g", "ProvisionedThroughput": {
                "ReadCapacityUnits": 1, "WriteCapacityUnits": 1}}}])


def test_update_create_name_and_definitions(raw_ddb, ddb, name):
    table_with_gsi(ddb, name)
    # The name is checked first (DDB-TABLE-137), even before the
    # definitions.
    refused_update(
        raw_ddb, "ValidationException",
        "Attempting to create an index which already exists",
        TableName=name, GlobalSecondaryIndexUpdates=[
            create_action("by_g", "h")])
    refused_update(
        raw_ddb, "ValidationException", INVALID + "AttributeDefinitions is "
        "not specified for index: by_h",
        TableName=name, GlobalSecondaryIndexUpdates=[
            create_action("by_h", "h")])
    # Ours: CreateTable's wording (DynamoDB's for this case not found).
    refused_update(
        raw_ddb, "ValidationException", INVALID + "Some index key "
        "attributes are not defined in AttributeDefinitions. Keys: [h, n], "
        "AttributeDefinitions: [x, h]",
        TableName=name, AttributeDefinitions=defs(("x", "S"), ("h", "S")),
        GlobalSecondaryIndexUpdates=[create_action("by_h", "h", "n")])
    # A key attribute keeps the type the table's keys give it (Alternator's
    # quote of DynamoDB).
    refused_update(
        raw_ddb, "ValidationException", INVALID + "Attributes cannot be "
        "redefined. Please check that your attribute has the same type as "
        "previously defined. Existing schema: Schema:[SchemaElement: "
        "key{g:S:HASH}] New schema: Schema:[SchemaElement: key{g:N:HASH}]",
        TableName=name, AttributeDefinitions=defs(("g", "N")),
        GlobalSecondaryIndexUpdates=[create_action("by_g2", "g")])
    refused_update(
        raw_ddb, "ValidationException", INVALID + "Attributes cannot be "
        "redefined. Please check that your attribute has the same type as "
        "previously defined. Existing schema: Schema:[SchemaElement: "
        "key{pk:S:HASH}] New schema: Schema:[SchemaElement: "
        "key{pk:B:RANGE}]",
        TableName=name, AttributeDefinitions=defs(("h", "S"), ("pk", "B")),
        GlobalSecondaryIndexUpdates=[create_action("by_h", "h", "pk")])


def test_update_create_key_schema_and_projection(raw_ddb, ddb, name):
    table_with_gsi(ddb, name)
    a = dict(TableName=name, AttributeDefinitions=defs(("h", "S"),
                                                       ("n", "N")))
    refused_update(raw_ddb, "ValidationException", "Invalid KeySchema: The "
                   "first KeySchemaElement is not a HASH key type",
                   GlobalSecondaryIndexUpdates=[create_action(
                       "by_h", ("h", "RANGE"), "n")], **a)
    refused_update(raw_ddb, "ValidationException", "Invalid KeySchema: A "
                   "HASH KeySchemaElement cannot follow a RANGE "
                   "KeySchemaElement",
                   GlobalSecondaryIndexUpdates=[create_action(
                       "by_h", "h", ("n", "RANGE"), ("g", "HASH"))],
                   TableName=name, AttributeDefinitions=defs(
                       ("h", "S"), ("n", "N"), ("g", "S")))
    refused_update(raw_ddb, "ValidationException", "Both the Hash Key and "
                   "the Range Key element in the KeySchema have the same "
                   "name", GlobalSecondaryIndexUpdates=[create_action(
                       "by_h", "h", "h")], **a)
    for projection, message in [
            ({}, "Unknown ProjectionType: null"),
            ({"ProjectionType": "ALL", "NonKeyAttributes": ["a"]},
             "ProjectionType is ALL, but NonKeyAttributes is specified"),
            ({"ProjectionType": "INCLUDE"},
             "ProjectionType is INCLUDE, but NonKeyAttributes is not "
             "specified"),
            ({"ProjectionType": "INCLUDE", "NonKeyAttributes": ["a", "a"]},
             "Duplicate element in NonKeyAttributes: a")]:
        refused_update(raw_ddb, "ValidationException", INVALID + message,
                       GlobalSecondaryIndexUpdates=[create_action(
                           "by_h", "h", projection=projection)], **a)
    # Unsupported members of UpdateTable still say so.
    refused_update(raw_ddb, "ValidationException", "UpdateTable with "
                   "TableClass is not supported by this cluster yet",
                   TableClass="STANDARD",
                   GlobalSecondaryIndexUpdates=[create_action("by_h", "h")],
                   **a)


def test_update_twenty_first_gsi(raw_ddb, ddb, name):
    # LimitExceededException through UpdateTable, where CreateTable says
    # ValidationException (DDB-TABLE-169).
    ddb.create_table(**table_args(name, GlobalSecondaryIndexes=[
        gsi("gsi%02d" % i, "g") for i in range(20)]))
    refused_update(
        raw_ddb, "LimitExceededException", "Subscriber limit exceeded: "
        "Number of global secondary indexes exceeds per-table limit of 20",
        TableName=name, AttributeDefinitions=defs(("h", "S")),
        GlobalSecondaryIndexUpdates=[create_action("gsi20", "h")])


# ---- UpdateTable: accepted changes ----
# The index's table is made and filled by the catalog node
# (node/catalog/catalog_node.c, node/index.c); the filling itself is tested in
# test_gsi.py. These check what UpdateTable and DescribeTable show.

def index_named(t, index):
    found = [g for g in t.get("GlobalSecondaryIndexes", [])
             if g["IndexName"] == index]
    return found[0] if found else None


def test_update_creates_an_index(ddb, name):
    table_with_gsi(ddb, name)
    d = ddb.update_table(
        TableName=name,
        # "x" is used by no key: ignored, as DynamoDB does.
        AttributeDefinitions=defs(("x", "S"), ("h", "B")),
        GlobalSecondaryIndexUpdates=[create_action(
            "by_h", "h", projection={"ProjectionType": "KEYS_ONLY"})]
    )["TableDescription"]
    # DynamoDB's answer to a create (DDB-TABLE-148, -165): the table
    # UPDATING, the new index CREATING without backfilling yet.
    assert d["TableStatus"] == "UPDATING"
    assert index_named(d, "by_h") == {
        "IndexName": "by_h", "KeySchema": keys("h"),
        "Projection": {"ProjectionType": "KEYS_ONLY"},
        "IndexStatus": "CREATING", "Backfilling": False,
        "ProvisionedThroughput": {"NumberOfDecreasesToday": 0,
                                  "ReadCapacityUnits": 0,
                                  "WriteCapacityUnits": 0},
        "IndexSizeBytes": 0, "ItemCount": 0,
        "IndexArn": d["TableArn"] + "/index/by_h"}
    assert index_named(d, "by_g")["IndexStatus"] == "ACTIVE"
    assert by_name(d["AttributeDefinitions"]) == by_name(
        defs(("pk", "S"), ("g", "S"), ("h", "B")))

    # While it is being built DescribeTable shows CREATING with
    # Backfilling; once ACTIVE, Backfilling is gone.
    deadline = time.monotonic() + 30
    while True:
        t = ddb.describe_table(TableName=name)["Table"]
        g = index_named(t, "by_h")
        if g["IndexStatus"] == "CREATING":
            assert isinstance(g["Backfilling"], bool)
            assert t["TableStatus"] == ("ACTIVE" if g["Backfilling"]
                                        else "UPDATING")
        elif g["IndexStatus"] == "ACTIVE" and t["TableStatus"] == "ACTIVE":
            break
        assert time.monotonic() < deadline, t
        time.sleep(0.1)
    assert "Backfilling" not in g
    assert [x["IndexName"] for x in t["GlobalSecondaryIndexes"]] == [
        "by_g", "by_h"]


def test_update_creates_a_provisioned_index(ddb, name):
    table_with_gsi(ddb, name, billing="PROVISIONED")
    d = ddb.update_table(
        TableName=name, AttributeDefinitions=defs(("h", "S"), ("n", "N")),
        GlobalSecondaryIndexUpdates=[create_action(
            "by_h", "h", "n", pt=(4, 6), projection={
                "ProjectionType": "INCLUDE", "NonKeyAttributes": ["x"]})]
    )["TableDescription"]
    g = index_named(d, "by_h")
    assert (g["IndexStatus"], g["Backfilling"]) == ("CREATING", False)
    assert g["KeySchema"] == keys("h", "n")
    assert g["Projection"] == {"ProjectionType": "INCLUDE",
                               "NonKeyAttributes": ["x"]}
    assert g["ProvisionedThroughput"] == {
        "NumberOfDecreasesToday": 0, "ReadCapacityUnits": 4,
        "WriteCapacityUnits": 6}
    t = wait_indexes_active(ddb, name)
    assert index_named(t, "by_h")["ProvisionedThroughput"][
        "ReadCapacityUnits"] == 4


def test_update_deletes_an_index(raw_ddb, ddb, name):
    ddb.create_table(**table_args(
        name, attrs=TWO_GSI_ATTRS, key=("pk", "sk"),
        GlobalSecondaryIndexes=TWO_GSIS))
    wait_indexes_active(ddb, name)
    d = ddb.update_table(TableName=name, GlobalSecondaryIndexUpdates=[
        {"Delete": {"IndexName": "by_h"}}])["TableDescription"]
    # DynamoDB's answer: the table UPDATING, the index DELETING.
    assert d["TableStatus"] == "UPDATING"
    g = index_named(d, "by_h")
    assert g["IndexStatus"] == "DELETING"
    assert (g["KeySchema"], g["Projection"]) == (
        keys("h"), {"ProjectionType": "KEYS_ONLY"})
    assert index_named(d, "by_g")["IndexStatus"] == "ACTIVE"
    deadline = time.monotonic() + 30
    while True:
        t = ddb.describe_table(TableName=name)["Table"]
        if index_named(t, "by_h") is None and t["TableStatus"] == "ACTIVE":
            break
        assert time.monotonic() < deadline, t
        time.sleep(0.1)
    assert [g["IndexName"] for g in t["GlobalSecondaryIndexes"]] == ["by_g"]
    refused_update(raw_ddb, "ResourceNotFoundException",
                   "Requested resource not found: Index by_h for table "
                   + name, TableName=name, GlobalSecondaryIndexUpdates=[
                       {"Delete": {"IndexName": "by_h"}}])


def test_update_changes_index_throughput(ddb, name):
    table_with_gsi(ddb, name, billing="PROVISIONED")
    d = ddb.update_table(TableName=name, GlobalSecondaryIndexUpdates=[
        {"Update": {"IndexName": "by_g", "ProvisionedThroughput": {
            "ReadCapacityUnits": 7, "WriteCapacityUnits": 8}}}]
    )["TableDescription"]
    # Only the index changes: the table stays ACTIVE (DDB-TABLE-148).
    assert d["TableStatus"] == "ACTIVE"
    assert index_named(d, "by_g")["IndexStatus"] in ("UPDATING", "ACTIVE")
    t = wait_indexes_active(ddb, name)
    pt = index_named(t, "by_g")["ProvisionedThroughput"]
    assert (pt["ReadCapacityUnits"], pt["WriteCapacityUnits"]) == (7, 8)


def test_update_switches_to_provisioned_with_its_index(ddb, name):
    # A switch to PROVISIONED names every GSI's units in the same request
    # (DDB-TABLE-152).
    table_with_gsi(ddb, name)
    d = ddb.update_table(
        TableName=name, BillingMode="PROVISIONED",
        ProvisionedThroughput={"ReadCapacityUnits": 5,
                               "WriteCapacityUnits": 5},
        GlobalSecondaryIndexUpdates=[{"Update": {
            "IndexName": "by_g", "ProvisionedThroughput": {
                "ReadCapacityUnits": 3, "WriteCapacityUnits": 4}}}]
    )["TableDescription"]
    assert d["TableStatus"] == "UPDATING"
    t = wait_indexes_active(ddb, name)
    assert t["BillingModeSummary"]["BillingMode"] == "PROVISIONED"
    pt = index_named(t, "by_g")["ProvisionedThroughput"]
    assert (pt["ReadCapacityUnits"], pt["WriteCapacityUnits"]) == (3, 4)
