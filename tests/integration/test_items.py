"""test_items.py — tables and items through boto3: CreateTable with each key
shape and billing mode, and PutItem / GetItem / DeleteItem round trips of
every attribute type, DynamoDB's number rules, ReturnValues, ConsistentRead
and ProjectionExpression.
"""

import decimal

import pytest

PPR = {"BillingMode": "PAY_PER_REQUEST"}
# Provisioned throughput is enforced (each of a table's partitions gets
# its share): enough that these few requests per table are never throttled.
PROV = {"BillingMode": "PROVISIONED",
        "ProvisionedThroughput": {"ReadCapacityUnits": 500,
                                  "WriteCapacityUnits": 700}}


def create(ddb, name, hash_type, range_type=None, billing=PPR):
    defs = [{"AttributeName": "pk", "AttributeType": hash_type}]
    keys = [{"AttributeName": "pk", "KeyType": "HASH"}]
    if range_type is not None:
        defs.append({"AttributeName": "sk", "AttributeType": range_type})
        keys.append({"AttributeName": "sk", "KeyType": "RANGE"})
    r = ddb.create_table(TableName=name, AttributeDefinitions=defs,
                         KeySchema=keys, **billing)
    assert r["TableDescription"]["TableName"] == name
    assert r["TableDescription"]["TableStatus"] in ("CREATING", "ACTIVE")
    return r["TableDescription"]


@pytest.fixture(scope="module")
def tables(cluster):
    """Five tables: hash S / N / B alone and S+N, N+B with a range key,
    both billing modes; waits until each is ACTIVE with the waiter."""
    import uuid
    ddb = cluster.client()
    u = uuid.uuid4().hex[:8]
    specs = {
        "S": ("items-s-" + u, "S", None, PPR),
        "N": ("items-n-" + u, "N", None, PROV),
        "B": ("items-b-" + u, "B", None, PPR),
        "SN": ("items-sn-" + u, "S", "N", PROV),
        "NB": ("items-nb-" + u, "N", "B", PPR),
    }
    for name, h, r, billing in specs.values():
        create(ddb, name, h, r, billing)
    waiter = ddb.get_waiter("table_exists")
    for name, *_ in specs.values():
        waiter.wait(TableName=name,
                    WaiterConfig={"Delay": 1, "MaxAttempts": 20})
    return {k: v[0] for k, v in specs.items()}


def key_of(pk, sk=None):
    k = {"pk": pk}
    if sk is not None:
        k["sk"] = sk
    return k


def roundtrip(ddb, table, item, key):
    ddb.put_item(TableName=table, Item=item)
    got = ddb.get_item(TableName=table, Key=key)
    assert "Item" in got, "item %r not found after put" % (key,)
    return got["Item"]


def normalise(v):
    """Sets come back in any order: compare them as sorted lists."""
    if isinstance(v, dict):
        out = {}
        for k, x in v.items():
            if k in ("SS", "NS", "BS"):
                out[k] = sorted(x)
            else:
                out[k] = normalise(x)
        return out
    if isinstance(v, list):
        return [normalise(x) for x in v]
    return v


# ---- tables ----

def test_tables_become_active_with_their_schema(ddb, tables):
    want = {
        "S": ("S", None, "PAY_PER_REQUEST"),
        "N": ("N", None, "PROVISIONED"),
        "B": ("B", None, "PAY_PER_REQUEST"),
        "SN": ("S", "N", "PROVISIONED"),
        "NB": ("N", "B", "PAY_PER_REQUEST"),
    }
    for k, (h, r, billing) in want.items():
        t = ddb.describe_table(TableName=tables[k])["Table"]
        assert t["TableStatus"] == "ACTIVE"
        ks = [{"AttributeName": "pk", "KeyType": "HASH"}]
        defs = {"pk": h}
        if r is not None:
            ks.append({"AttributeName": "sk", "KeyType": "RANGE"})
            defs["sk"] = r
        assert t["KeySchema"] == ks
        assert {d["AttributeName"]: d["AttributeType"]
                for d in t["AttributeDefinitions"]} == defs
        assert t["BillingModeSummary"]["BillingMode"] == billing
        pt = t["ProvisionedThroughput"]
        if billing == "PROVISIONED":
            assert (pt["ReadCapacityUnits"], pt["WriteCapacityUnits"]) == (
                500, 700)
        else:
            assert (pt["ReadCapacityUnits"], pt["WriteCapacityUnits"]) == (
                0, 0)


def test_table_exists_waiter_returns_for_a_new_table(ddb, unique):
    name = "waiter-" + unique
    create(ddb, name, "S")
    ddb.get_waiter("table_exists").wait(
        TableName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 20})
    assert ddb.describe_table(TableName=name)["Table"]["TableStatus"] == \
        "ACTIVE"


# ---- every attribute type ----

ALL_BYTES = bytes(range(256))

EVERY_TYPE = {
    "s": {"S": "héllo wörld ✓ 😀 tab\t\n\"quote\\"},
    "s_empty": {"S": ""},
    "n_int": {"N": "42"},
    "n_neg": {"N": "-17.25"},
    "n_zero": {"N": "0"},
    "n_38": {"N": "12345678901234567890123456789012345678"},
    "n_38_neg_frac": {"N": "-0.12345678901234567890123456789012345678"},
    "n_big": {"N": "9.9999999999999999999999999999999999999E+125"},
    "b": {"B": ALL_BYTES},
    "b_empty": {"B": b""},
    "ss": {"SS": ["a", "b", "", "ü"]},
    "ns": {"NS": ["1", "-2.5", "1E+2", "0.1"]},
    "bs": {"BS": [b"\x00", b"\xff\xfe", b""]},
    "m": {"M": {"x": {"S": "y"}, "n": {"N": "1"}, "empty": {"M": {}}}},
    "m_empty": {"M": {}},
    "l": {"L": [{"S": "a"}, {"N": "2"}, {"NULL": True}, {"L": []},
                {"B": b"\x01"}]},
    "l_empty": {"L": []},
    "null": {"NULL": True},
    "true": {"BOOL": True},
    "false": {"BOOL": False},
}

# What DynamoDB returns for EVERY_TYPE where it is not the input itself.
CANONICAL = {
    "n_big": {"N": "99999999999999999999999999999999999999" + "0" * 88},
    "ns": {"NS": ["1", "-2.5", "100", "0.1"]},
}


def test_every_attribute_type_round_trips(ddb, tables):
    item = dict(EVERY_TYPE, pk={"S": "every-type"})
    got = roundtrip(ddb, tables["S"], item, key_of({"S": "every-type"}))
    want = dict(item, **CANONICAL)
    assert normalise(got) == normalise(want)
    assert got["b"]["B"] == ALL_BYTES


def test_every_type_round_trips_in_a_provisioned_hash_range_table(
        ddb, tables):
    item = dict(EVERY_TYPE, pk={"S": "every-type"}, sk={"N": "-3.5"})
    got = roundtrip(ddb, tables["SN"], item,
                    key_of({"S": "every-type"}, {"N": "-3.5"}))
    assert normalise(got) == normalise(dict(item, **CANONICAL))


@pytest.mark.parametrize("text, canonical", [
    ("0.1", "0.1"),
    ("1E+2", "100"),
    ("1e2", "100"),
    ("100.000", "100"),
    ("-0", "0"),
    ("-1E-5", "-0.00001"),
    ("0012.3400", "12.34"),
    ("12345678901234567890123456789012345678",
     "12345678901234567890123456789012345678"),
    ("-99999999999999999999999999999999999999",
     "-99999999999999999999999999999999999999"),
    ("1.2345678901234567890123456789012345678E+100",
     "12345678901234567890123456789012345678" + "0" * 63),
    ("1E-130", "0." + "0" * 129 + "1"),
    ("-1E-130", "-0." + "0" * 129 + "1"),
])
def test_numbers_keep_their_exact_value(ddb, tables, text, canonical):
    key = key_of({"S": "num-" + text})
    got = roundtrip(ddb, tables["S"], dict(key, v={"N": text}), key)
    assert got["v"]["N"] == canonical
    assert decimal.Decimal(got["v"]["N"]) == decimal.Decimal(text)


def test_all_256_byte_values_round_trip_as_binary_keys(ddb, tables):
    key = key_of({"B": ALL_BYTES})
    got = roundtrip(ddb, tables["B"], dict(key, v={"BS": [ALL_BYTES]}), key)
    assert got["pk"]["B"] == ALL_BYTES
    assert got["v"]["BS"] == [ALL_BYTES]
    # One byte less is another item.
    assert "Item" not in ddb.get_item(TableName=tables["B"],
                                      Key=key_of({"B": ALL_BYTES[:-1]}))


def test_strings_with_nul_characters_round_trip(ddb, tables):
    # JSON allows \u0000 in strings and DynamoDB stores it.
    key = key_of({"S": "nul\u0000key"})
    item = dict(key, v={"S": "a\u0000b"}, ss={"SS": ["\u0000"]})
    assert roundtrip(ddb, tables["S"], item, key) == item


def test_binary_range_keys_round_trip(ddb, tables):
    key = key_of({"N": "7"}, {"B": b"\x00\x01\xff"})
    got = roundtrip(ddb, tables["NB"], dict(key, v={"S": "x"}), key)
    assert got == dict(key, v={"S": "x"})


def nest(levels):
    v = {"S": "leaf"}
    for i in range(levels):
        v = {"M": {"m": v}} if i % 2 else {"L": [v]}
    return v


def test_documents_nested_to_depth_32_are_accepted(ddb, tables):
    key = key_of({"S": "deep"})
    item = dict(key, doc=nest(32))
    assert roundtrip(ddb, tables["S"], item, key) == item


def test_large_item_near_the_limit_round_trips(ddb, tables):
    # pk (2) + "k" (1) + d (1) + value: exactly 400 KB.
    key = key_of({"S": "k"})
    item = dict(key, d={"S": "x" * (400 * 1024 - 4)})
    assert roundtrip(ddb, tables["S"], item, key) == item


def test_longest_keys_are_accepted(ddb, tables):
    key = key_of({"S": "h" * 2048}, {"N": "1"})
    assert roundtrip(ddb, tables["SN"], dict(key), key) == key
    bkey = key_of({"N": "1"}, {"B": b"\xab" * 1024})
    assert roundtrip(ddb, tables["NB"], dict(bkey), bkey) == bkey


# ---- put, get, delete ----

def test_put_overwrites_and_return_values_all_old(ddb, tables):
    t = tables["S"]
    key = key_of({"S": "rv"})
    r = ddb.put_item(TableName=t, Item=dict(key, v={"N": "1"}),
                     ReturnValues="ALL_OLD")
    assert "Attributes" not in r
    r = ddb.put_item(TableName=t, Item=dict(key, w={"S": "two"}),
                     ReturnValues="ALL_OLD")
    assert r["Attributes"] == dict(key, v={"N": "1"})
    r = ddb.put_item(TableName=t, Item=dict(key, x={"BOOL": True}),
                     ReturnValues="NONE")
    assert "Attributes" not in r
    # The put replaced the whole item: no attribute of the old one is left.
    assert ddb.get_item(TableName=t, Key=key)["Item"] == dict(
        key, x={"BOOL": True})


def test_delete_return_values_all_old(ddb, tables):
    t = tables["SN"]
    key = key_of({"S": "del"}, {"N": "5"})
    item = dict(key, v={"SS": ["a", "b"]})
    ddb.put_item(TableName=t, Item=item)
    r = ddb.delete_item(TableName=t, Key=key, ReturnValues="ALL_OLD")
    assert normalise(r["Attributes"]) == normalise(item)
    assert "Item" not in ddb.get_item(TableName=t, Key=key)
    # Deleting what is not there succeeds and returns nothing.
    r = ddb.delete_item(TableName=t, Key=key, ReturnValues="ALL_OLD")
    assert "Attributes" not in r
    r = ddb.delete_item(TableName=t, Key=key)
    assert "Attributes" not in r


def test_single_item_answers_carry_every_member_together(ddb, tables):
    """The answers of the single-item verbs with ConsumedCapacity (TOTAL
    and INDEXES) next to Item / Attributes, and alone when there is no
    item: each answer as a whole, as boto3 parses it."""
    t = tables["S"]
    key = key_of({"S": "cc"})
    total = {"TableName": t, "CapacityUnits": 1.0}
    indexes = dict(total, Table={"CapacityUnits": 1.0})

    def body(r):
        r.pop("ResponseMetadata")
        return r

    assert body(ddb.put_item(TableName=t, Item=dict(key, v={"N": "1"}),
                             ReturnConsumedCapacity="TOTAL")) == {
        "ConsumedCapacity": total}
    assert body(ddb.put_item(TableName=t, Item=dict(key, v={"N": "2"}),
                             ReturnValues="ALL_OLD",
                             ReturnConsumedCapacity="INDEXES")) == {
        "Attributes": dict(key, v={"N": "1"}), "ConsumedCapacity": indexes}
    assert body(ddb.update_item(
        TableName=t, Key=key, UpdateExpression="SET w = :w",
        ExpressionAttributeValues={":w": {"S": "a\"b\\c\n\u00e9"}},
        ReturnValues="UPDATED_NEW", ReturnConsumedCapacity="TOTAL")) == {
        "Attributes": {"w": {"S": "a\"b\\c\n\u00e9"}},
        "ConsumedCapacity": total}
    half = {"TableName": t, "CapacityUnits": 0.5}
    assert body(ddb.get_item(TableName=t, Key=key,
                             ProjectionExpression="v",
                             ReturnConsumedCapacity="INDEXES")) == {
        "Item": {"v": {"N": "2"}},
        "ConsumedCapacity": dict(half, Table={"CapacityUnits": 0.5})}
    assert body(ddb.delete_item(TableName=t, Key=key,
                                ReturnValues="ALL_OLD",
                                ReturnConsumedCapacity="TOTAL")) == {
        "Attributes": dict(key, v={"N": "2"}, w={"S": "a\"b\\c\n\u00e9"}),
        "ConsumedCapacity": total}
    # Nothing there: the answers hold ConsumedCapacity alone, or nothing.
    assert body(ddb.get_item(TableName=t, Key=key,
                             ReturnConsumedCapacity="TOTAL")) == {
        "ConsumedCapacity": half}
    assert body(ddb.get_item(TableName=t, Key=key)) == {}
    assert body(ddb.delete_item(TableName=t, Key=key,
                                ReturnValues="ALL_OLD")) == {}


def test_missing_item_returns_no_item(ddb, tables):
    for name, key in [("S", key_of({"S": "never-written"})),
                      ("N", key_of({"N": "-123456"})),
                      ("B", key_of({"B": b"nope"})),
                      ("SN", key_of({"S": "never"}, {"N": "1"})),
                      ("NB", key_of({"N": "1"}, {"B": b"never"}))]:
        r = ddb.get_item(TableName=tables[name], Key=key)
        assert "Item" not in r, name
        assert r["ResponseMetadata"]["HTTPStatusCode"] == 200


def test_consistent_read_sees_the_last_write(ddb, tables):
    t = tables["N"]
    key = key_of({"N": "31"})
    for i in range(5):
        ddb.put_item(TableName=t, Item=dict(key, v={"N": str(i)}))
        for consistent in (True, False):
            got = ddb.get_item(TableName=t, Key=key,
                               ConsistentRead=consistent)
            assert got["Item"]["v"] == {"N": str(i)}


def test_projection_expression_with_plain_and_placeholder_names(
        ddb, tables):
    t = tables["S"]
    key = key_of({"S": "proj"})
    ddb.put_item(TableName=t, Item=dict(
        key, attr1={"S": "one"}, attr2={"N": "2"}, name={"S": "n"},
        status={"BOOL": True}, other={"NULL": True}))
    r = ddb.get_item(TableName=t, Key=key,
                     ProjectionExpression="attr1, attr2")
    assert r["Item"] == {"attr1": {"S": "one"}, "attr2": {"N": "2"}}
    r = ddb.get_item(TableName=t, Key=key,
                     ProjectionExpression="#n,#s , attr1",
                     ExpressionAttributeNames={"#n": "name",
                                               "#s": "status"})
    assert r["Item"] == {"name": {"S": "n"}, "status": {"BOOL": True},
                         "attr1": {"S": "one"}}
    # Names the item does not have are left out; the key is not added.
    r = ddb.get_item(TableName=t, Key=key,
                     ProjectionExpression="absent1, attr2")
    assert r["Item"] == {"attr2": {"N": "2"}}
    r = ddb.get_item(TableName=t, Key=key, ProjectionExpression="pk")
    assert r["Item"] == key


def test_equal_numbers_address_the_same_range_key(ddb, tables):
    t = tables["SN"]
    ddb.put_item(TableName=t, Item={"pk": {"S": "numkey"},
                                    "sk": {"N": "1E+2"}, "v": {"S": "a"}})
    for same in ("100", "1e2", "100.0", "0.001E5", "+100"):
        got = ddb.get_item(TableName=t, Key={"pk": {"S": "numkey"},
                                             "sk": {"N": same}})
        assert got["Item"] == {"pk": {"S": "numkey"}, "sk": {"N": "100"},
                               "v": {"S": "a"}}, same
    r = ddb.put_item(TableName=t, Item={"pk": {"S": "numkey"},
                                        "sk": {"N": "100"},
                                        "v": {"S": "b"}},
                     ReturnValues="ALL_OLD")
    assert r["Attributes"]["v"] == {"S": "a"}
    # A different number is a different item.
    assert "Item" not in ddb.get_item(
        TableName=t, Key={"pk": {"S": "numkey"}, "sk": {"N": "100.1"}})


def test_equal_numbers_address_the_same_hash_key(ddb, tables):
    t = tables["N"]
    ddb.put_item(TableName=t, Item={"pk": {"N": "1E+2"}, "v": {"S": "a"}})
    for same in ("100", "100.000", "1e2", "10E1"):
        got = ddb.get_item(TableName=t, Key={"pk": {"N": same}})
        assert got["Item"] == {"pk": {"N": "100"}, "v": {"S": "a"}}, same
    ddb.put_item(TableName=t, Item={"pk": {"N": "0"}, "v": {"S": "zero"}})
    got = ddb.get_item(TableName=t, Key={"pk": {"N": "-0.00"}})
    assert got["Item"] == {"pk": {"N": "0"}, "v": {"S": "zero"}}
    r = ddb.delete_item(TableName=t, Key={"pk": {"N": "100.0"}},
                        ReturnValues="ALL_OLD")
    assert r["Attributes"] == {"pk": {"N": "100"}, "v": {"S": "a"}}
    assert "Item" not in ddb.get_item(TableName=t, Key={"pk": {"N": "100"}})


def test_many_keys_spread_over_partitions_round_trip(ddb, tables):
    t = tables["S"]
    for i in range(60):
        ddb.put_item(TableName=t, Item={"pk": {"S": "spread-%d" % i},
                                        "i": {"N": str(i)}})
    for i in range(60):
        got = ddb.get_item(TableName=t, Key={"pk": {"S": "spread-%d" % i}})
        assert got["Item"]["i"] == {"N": str(i)}
