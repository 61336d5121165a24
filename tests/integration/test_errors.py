"""test_errors.py — DynamoDB's error answers: the exception type, the exact
message and HTTP 400 for every request the router refuses, and that a
refused write wrote nothing. Requests go through boto3 without client-side
parameter validation (so the router's own checks run), or as raw HTTP for
what boto3 cannot send: malformed JSON, unknown targets, huge bodies.

The messages are DynamoDB's as the router reproduces them (router/*.c,
router/json.c, core/number.c); DynamoDB's own oddities ("limit of2048",
"An string set  may not be empty") are kept on purpose.
"""

import http.client
import json
import socket
import time
import urllib.parse
import zlib

import pytest
from botocore.exceptions import ClientError

NOT_FOUND = "Requested resource not found"
MISMATCH = "The provided key element does not match the schema"
INVALID = "One or more parameter values were invalid: "


@pytest.fixture(scope="module")
def t(cluster):
    """Tables of this file: `ok` (hash pk S) for reads and the
    already-exists checks, `rej` (hash pk S) and `rng` (pk S, sk N) and
    `bin` (pk B) that only ever receive refused writes."""
    import uuid
    ddb = cluster.client()
    u = uuid.uuid4().hex[:8]
    names = {"ok": "err-ok-" + u, "rej": "err-rej-" + u,
             "rng": "err-rng-" + u, "bin": "err-bin-" + u,
             "missing": "err-missing-" + u}
    for k, h, r in [("ok", "S", None), ("rej", "S", None),
                    ("rng", "S", "N"), ("bin", "B", None)]:
        defs = [{"AttributeName": "pk", "AttributeType": h}]
        ks = [{"AttributeName": "pk", "KeyType": "HASH"}]
        if r:
            defs.append({"AttributeName": "sk", "AttributeType": r})
            ks.append({"AttributeName": "sk", "KeyType": "RANGE"})
        ddb.create_table(TableName=names[k], AttributeDefinitions=defs,
                         KeySchema=ks, BillingMode="PAY_PER_REQUEST")
    w = ddb.get_waiter("table_exists")
    for k in ("ok", "rej", "rng", "bin"):
        w.wait(TableName=names[k], WaiterConfig={"Delay": 1,
                                                  "MaxAttempts": 20})
    return names


def refused(fn, code, message, **kw):
    """Calls fn(**kw), which must fail with code, message and HTTP 400."""
    with pytest.raises(ClientError) as ei:
        fn(**kw)
    r = ei.value.response
    assert (r["Error"]["Code"], r["Error"]["Message"]) == (code, message)
    assert r["ResponseMetadata"]["HTTPStatusCode"] == 400
    return r


def validation(fn, message, **kw):
    return refused(fn, "ValidationException", message, **kw)


def assert_absent(ddb, table, key):
    r = ddb.get_item(TableName=table, Key=key, ConsistentRead=True)
    assert "Item" not in r, "a refused write left %r" % (r["Item"],)


def put_refused(raw, ddb, table, item, message, key=None,
                code="ValidationException", **kw):
    """PutItem of item must be refused with message, and (when key is a
    valid key of the table) leave nothing under key."""
    refused(raw.put_item, code, message, TableName=table, Item=item, **kw)
    if key is not None:
        assert_absent(ddb, table, key)


# ---- tables that do not exist, or already do ----

def test_data_plane_on_a_missing_table(raw_ddb, t):
    key = {"pk": {"S": "a"}}
    refused(raw_ddb.put_item, "ResourceNotFoundException", NOT_FOUND,
            TableName=t["missing"], Item=key)
    refused(raw_ddb.get_item, "ResourceNotFoundException", NOT_FOUND,
            TableName=t["missing"], Key=key)
    refused(raw_ddb.delete_item, "ResourceNotFoundException", NOT_FOUND,
            TableName=t["missing"], Key=key)


def test_control_plane_on_a_missing_table(raw_ddb, t):
    msg = "Requested resource not found: Table: %s not found" % t["missing"]
    refused(raw_ddb.describe_table, "ResourceNotFoundException", msg,
            TableName=t["missing"])
    refused(raw_ddb.delete_table, "ResourceNotFoundException", msg,
            TableName=t["missing"])


def test_creating_an_existing_table(raw_ddb, t):
    refused(raw_ddb.create_table, "ResourceInUseException",
            "Table already exists: %s" % t["ok"], TableName=t["ok"],
            AttributeDefinitions=[{"AttributeName": "pk",
                                   "AttributeType": "S"}],
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            BillingMode="PAY_PER_REQUEST")


@pytest.mark.parametrize("name, message", [
    ("ab", "1 validation error detected: Value 'ab' at 'tableName' failed "
     "to satisfy constraint: Member must have length greater than or "
     "equal to 3"),
    ("bad name", "1 validation error detected: Value 'bad name' at "
     "'tableName' failed to satisfy constraint: Member must satisfy "
     "regular expression pattern: [a-zA-Z0-9_.-]+"),
    ("x" * 256, "1 validation error detected: Value '" + "x" * 256 +
     "' at 'tableName' failed to satisfy constraint: Member must have "
     "length less than or equal to 255"),
    ("a!", "2 validation errors detected: Value 'a!' at 'tableName' failed "
     "to satisfy constraint: Member must satisfy regular expression "
     "pattern: [a-zA-Z0-9_.-]+; Value 'a!' at 'tableName' failed to "
     "satisfy constraint: Member must have length greater than or equal "
     "to 3"),
])
def test_bad_table_names(raw_ddb, name, message):
    key = {"pk": {"S": "a"}}
    validation(raw_ddb.put_item, message, TableName=name, Item=key)
    validation(raw_ddb.get_item, message, TableName=name, Key=key)
    validation(raw_ddb.delete_item, message, TableName=name, Key=key)
    validation(raw_ddb.describe_table, message, TableName=name)
    validation(raw_ddb.delete_table, message, TableName=name)
    validation(raw_ddb.create_table, message, TableName=name,
               AttributeDefinitions=[{"AttributeName": "pk",
                                      "AttributeType": "S"}],
               KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
               BillingMode="PAY_PER_REQUEST")


# ---- keys ----

def test_missing_key_attributes(raw_ddb, ddb, t):
    put_refused(raw_ddb, ddb, t["rej"], {"v": {"S": "x"}},
                INVALID + "Missing the key pk in the item")
    put_refused(raw_ddb, ddb, t["rng"], {"pk": {"S": "a"}},
                INVALID + "Missing the key sk in the item")
    put_refused(raw_ddb, ddb, t["rng"], {"sk": {"N": "1"}},
                INVALID + "Missing the key pk in the item")


def test_key_of_the_wrong_type(raw_ddb, ddb, t):
    put_refused(raw_ddb, ddb, t["rej"], {"pk": {"N": "1"}},
                INVALID + "Type mismatch for key pk expected: S actual: N")
    put_refused(raw_ddb, ddb, t["rng"], {"pk": {"S": "a"},
                                         "sk": {"S": "1"}},
                INVALID + "Type mismatch for key sk expected: N actual: S",
                key={"pk": {"S": "a"}, "sk": {"N": "1"}})
    put_refused(raw_ddb, ddb, t["bin"], {"pk": {"S": "AA=="}},
                INVALID + "Type mismatch for key pk expected: B actual: S")
    for fn in (raw_ddb.get_item, raw_ddb.delete_item):
        validation(fn, MISMATCH, TableName=t["rej"],
                   Key={"pk": {"N": "1"}})
        validation(fn, MISMATCH, TableName=t["rng"],
                   Key={"pk": {"S": "a"}, "sk": {"S": "1"}})


def test_key_with_missing_or_extra_attributes(raw_ddb, ddb, t):
    ddb.put_item(TableName=t["ok"], Item={"pk": {"S": "keep"},
                                          "v": {"S": "x"}})
    for fn in (raw_ddb.get_item, raw_ddb.delete_item):
        validation(fn, MISMATCH, TableName=t["ok"],
                   Key={"pk": {"S": "keep"}, "v": {"S": "x"}})
        validation(fn, MISMATCH, TableName=t["ok"],
                   Key={"other": {"S": "keep"}})
        validation(fn, MISMATCH, TableName=t["ok"], Key={})
        validation(fn, MISMATCH, TableName=t["rng"],
                   Key={"pk": {"S": "a"}})
        validation(fn, MISMATCH, TableName=t["rng"],
                   Key={"pk": {"S": "a"}, "sk": {"N": "1"},
                        "x": {"N": "1"}})
    # The refused DeleteItem left the item alone.
    assert ddb.get_item(TableName=t["ok"], Key={"pk": {"S": "keep"}})[
        "Item"] == {"pk": {"S": "keep"}, "v": {"S": "x"}}


def empty_key(kind):
    return ("One or more parameter values are not valid. The AttributeValue "
            "for a key attribute cannot contain an empty %s value. Key: pk"
            % kind)


def test_empty_key_values(raw_ddb, ddb, t):
    put_refused(raw_ddb, ddb, t["rej"], {"pk": {"S": ""}}, empty_key(
        "string"))
    put_refused(raw_ddb, ddb, t["bin"], {"pk": {"B": b""}}, empty_key(
        "binary"))
    validation(raw_ddb.get_item, empty_key("string"), TableName=t["rej"],
               Key={"pk": {"S": ""}})
    validation(raw_ddb.delete_item, empty_key("binary"),
               TableName=t["bin"], Key={"pk": {"B": b""}})


def test_oversized_keys(raw_ddb, ddb, t):
    hash_msg = (INVALID + "Size of hashkey has exceeded the maximum size "
                "limit of2048 bytes")
    range_msg = (INVALID + "Aggregated size of all range keys has exceeded "
                 "the size limit of 1024 bytes")
    put_refused(raw_ddb, ddb, t["rej"], {"pk": {"S": "h" * 2049}}, hash_msg)
    put_refused(raw_ddb, ddb, t["bin"], {"pk": {"B": b"\0" * 2049}},
                hash_msg)
    # Multi-byte characters count in UTF-8 bytes: 683 * 3 = 2049.
    put_refused(raw_ddb, ddb, t["rej"], {"pk": {"S": "€" * 683}}, hash_msg)
    validation(raw_ddb.get_item, hash_msg, TableName=t["rej"],
               Key={"pk": {"S": "h" * 2049}})
    # The hash limit holds in a hash+range table too.
    put_refused(raw_ddb, ddb, t["rng"], {"pk": {"S": "h" * 2049},
                                         "sk": {"N": "1"}}, hash_msg)


def test_oversized_range_key(raw_ddb, ddb, cluster, t):
    # The range limit needs an S or B range key: a table of its own.
    import uuid
    name = "err-srange-" + uuid.uuid4().hex[:8]
    ddb.create_table(TableName=name, AttributeDefinitions=[
        {"AttributeName": "pk", "AttributeType": "S"},
        {"AttributeName": "sk", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                   {"AttributeName": "sk", "KeyType": "RANGE"}],
        BillingMode="PAY_PER_REQUEST")
    ddb.get_waiter("table_exists").wait(
        TableName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 20})
    msg = (INVALID + "Aggregated size of all range keys has exceeded the "
           "size limit of 1024 bytes")
    put_refused(raw_ddb, ddb, name, {"pk": {"S": "a"},
                                     "sk": {"S": "r" * 1025}}, msg)
    validation(raw_ddb.get_item, msg, TableName=name,
               Key={"pk": {"S": "a"}, "sk": {"S": "r" * 1025}})
    ddb.put_item(TableName=name, Item={"pk": {"S": "a"},
                                       "sk": {"S": "r" * 1024}})
    assert ddb.describe_table(TableName=name)["Table"]["ItemCount"] == 1


# ---- items and attribute values ----

def test_item_over_400_kb(raw_ddb, ddb, t):
    key = {"pk": {"S": "k"}}
    # pk (2) + "k" (1) + d (1) + 409597 = 400 KB + 1 byte.
    put_refused(raw_ddb, ddb, t["rej"],
                dict(key, d={"S": "x" * (400 * 1024 - 3)}),
                "Item size has exceeded the maximum allowed size", key=key)
    put_refused(raw_ddb, ddb, t["rej"],
                dict(key, d={"B": b"x" * (500 * 1024)}),
                "Item size has exceeded the maximum allowed size", key=key)
    # Attribute names count too: pk (2) + "k" (1) + a name of 65,535
    # bytes (the longest allowed) + 344,063 = 400 KB + 1 byte.
    put_refused(raw_ddb, ddb, t["rej"],
                dict(key, **{"n" * 65535: {"S": "x" * 344063}}),
                "Item size has exceeded the maximum allowed size", key=key)


@pytest.mark.parametrize("text, message", [
    ("123456789012345678901234567890123456789",
     "Attempting to store more than 38 significant digits in a Number"),
    ("-1.23456789012345678901234567890123456789",
     "Attempting to store more than 38 significant digits in a Number"),
    ("1E+126", "Number overflow. Attempting to store a number with "
     "magnitude larger than supported range"),
    ("-1E+126", "Number overflow. Attempting to store a number with "
     "magnitude larger than supported range"),
    ("1E-131", "Number underflow. Attempting to store a number with "
     "magnitude smaller than supported range"),
    ("-1E-131", "Number underflow. Attempting to store a number with "
     "magnitude smaller than supported range"),
    ("12abc", "The parameter cannot be converted to a numeric value: 12abc"),
])
def test_bad_numbers(raw_ddb, ddb, t, text, message):
    key = {"pk": {"S": "num"}}
    put_refused(raw_ddb, ddb, t["rej"], dict(key, v={"N": text}), message,
                key=key)
    put_refused(raw_ddb, ddb, t["rej"], dict(key, v={"NS": ["1", text]}),
                message, key=key)
    put_refused(raw_ddb, ddb, t["rej"],
                dict(key, v={"M": {"x": {"L": [{"N": text}]}}}), message,
                key=key)
    # As a key.
    put_refused(raw_ddb, ddb, t["rng"], {"pk": {"S": "a"},
                                         "sk": {"N": text}}, message)
    validation(raw_ddb.get_item, message, TableName=t["rng"],
               Key={"pk": {"S": "a"}, "sk": {"N": text}})


@pytest.mark.parametrize("value, message", [
    ({"SS": ["a", "b", "a"]}, INVALID + "Input collection [a, b, a] "
     "contains duplicates."),
    ({"NS": ["1", "2", "1.0"]}, "Input collection contains duplicates"),
    ({"NS": ["1E+2", "100"]}, "Input collection contains duplicates"),
    ({"BS": [b"\x01", b"\x01"]}, INVALID + "Input collection [AQ==, AQ==]"
     "of type BS contains duplicates."),
    ({"SS": []}, INVALID + "An string set  may not be empty"),
    ({"NS": []}, INVALID + "An number set  may not be empty"),
    ({"BS": []}, INVALID + "Binary sets should not be empty"),
    ({"M": {"x": {"SS": []}}}, INVALID + "An string set  may not be empty"),
    ({"NULL": False}, INVALID + "Null attribute value types must have the "
     "value of true"),
    ({}, "Supplied AttributeValue is empty, must contain exactly one of "
     "the supported datatypes"),
    ({"S": "a", "N": "1"}, "Supplied AttributeValue has more than one "
     "datatypes set, must contain exactly one of the supported datatypes"),
])
def test_bad_attribute_values(raw_ddb, ddb, t, value, message):
    key = {"pk": {"S": "bad-value"}}
    put_refused(raw_ddb, ddb, t["rej"], dict(key, v=value), message,
                key=key)


def nest(levels):
    v = {"S": "leaf"}
    for i in range(levels):
        v = {"M": {"m": v}} if i % 2 else {"L": [v]}
    return v


def test_nesting_depth_33_is_refused(raw_ddb, ddb, t):
    key = {"pk": {"S": "deep"}}
    msg = ("Nesting Levels have exceeded supported limits: Attributes in "
           "the item have nested levels beyond supported limit")
    put_refused(raw_ddb, ddb, t["rej"], dict(key, doc=nest(33)), msg,
                key=key)
    put_refused(raw_ddb, ddb, t["rej"], dict(key, doc=nest(60)), msg,
                key=key)


def test_return_values_put_and_delete_refuse(raw_ddb, ddb, t):
    key = {"pk": {"S": "rv"}}
    for rv in ("ALL_NEW", "UPDATED_OLD", "UPDATED_NEW"):
        put_refused(raw_ddb, ddb, t["rej"], dict(key, v={"S": "x"}),
                    "ReturnValues can only be ALL_OLD or NONE", key=key,
                    ReturnValues=rv)
    put_refused(raw_ddb, ddb, t["rej"], dict(key, v={"S": "x"}),
                "1 validation error detected: Value 'FOO' at "
                "'returnValues' failed to satisfy constraint: Member must "
                "satisfy enum value set: [ALL_NEW, UPDATED_OLD, ALL_OLD, "
                "NONE, UPDATED_NEW]", key=key, ReturnValues="FOO")
    # A refused DeleteItem deletes nothing.
    ddb.put_item(TableName=t["ok"], Item={"pk": {"S": "rv-del"}})
    validation(raw_ddb.delete_item, "ReturnValues can only be ALL_OLD or "
               "NONE", TableName=t["ok"], Key={"pk": {"S": "rv-del"}},
               ReturnValues="ALL_NEW")
    assert "Item" in ddb.get_item(TableName=t["ok"],
                                  Key={"pk": {"S": "rv-del"}})


def test_refused_writes_left_the_tables_empty(ddb, t):
    """Every write above aimed at rej, rng and bin was refused."""
    for k in ("rej", "rng", "bin"):
        d = ddb.describe_table(TableName=t[k])["Table"]
        assert (d["ItemCount"], d["TableSizeBytes"]) == (0, 0), t[k]


# ---- raw HTTP ----

def post(cluster, target, body, headers=None, timeout=10):
    u = urllib.parse.urlparse(cluster.endpoint)
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=timeout)
    h = {"Content-Type": "application/x-amz-json-1.0"}
    if target is not None:
        h["X-Amz-Target"] = target
    h.update(headers or {})
    c.request("POST", "/", body=body, headers=h)
    r = c.getresponse()
    data = r.read()
    c.close()
    return r, data


def error_type(data):
    j = json.loads(data)
    return j["__type"].rsplit("#", 1)[-1], j.get("message",
                                                   j.get("Message"))


def test_malformed_json_is_a_serialization_exception(cluster, t):
    for body in (b"{not json", b"", b"[1,2]", b'{"TableName": "a",}',
                 b'{"TableName": "x", "TableName": "y"}', b"\xff\xfe{}"):
        r, data = post(cluster, "DynamoDB_20120810.GetItem", body)
        assert r.status == 400, body
        assert error_type(data)[0] == "SerializationException", (body, data)


def test_wrong_member_types_are_serialization_exceptions(cluster, t):
    body = json.dumps({"TableName": t["ok"], "Key": {"pk": {"S": 5}}})
    r, data = post(cluster, "DynamoDB_20120810.GetItem", body.encode())
    assert r.status == 400
    assert error_type(data)[0] == "SerializationException"
    body = json.dumps({"TableName": 7, "Key": {"pk": {"S": "a"}}})
    r, data = post(cluster, "DynamoDB_20120810.GetItem", body.encode())
    assert r.status == 400
    assert error_type(data) == ("SerializationException", "Unexpected value "
                                "type in payload for member TableName")


@pytest.mark.parametrize("target", [
    "DynamoDB_20120810.Frobnicate", "DynamoDB_20120810.", "GetItem",
    "DynamoDB_20111205.GetItem", None,
])
def test_unknown_target_is_an_unknown_operation(cluster, target):
    r, data = post(cluster, target, b"{}")
    assert r.status == 400
    assert error_type(data) == ("UnknownOperationException",
                                "An unknown operation was requested.")


def check_headers(r, data):
    assert r.getheader("x-amzn-RequestId"), r.getheaders()
    crc = r.getheader("x-amz-crc32")
    assert crc is not None, r.getheaders()
    assert int(crc) == zlib.crc32(data), (crc, zlib.crc32(data))


def test_every_answer_has_a_request_id_and_a_matching_crc32(cluster, t):
    ids = set()
    cases = [
        ("DynamoDB_20120810.ListTables", b"{}", 200),
        ("DynamoDB_20120810.DescribeTable",
         json.dumps({"TableName": t["ok"]}).encode(), 200),
        ("DynamoDB_20120810.GetItem", json.dumps(
            {"TableName": t["ok"], "Key": {"pk": {"S": "none"}}}).encode(),
         200),
        ("DynamoDB_20120810.GetItem", json.dumps(
            {"TableName": t["missing"], "Key": {"pk": {"S": "x"}}}).encode(),
         400),
        ("DynamoDB_20120810.Nope", b"{}", 400),
        ("DynamoDB_20120810.PutItem", b"{oops", 400),
    ]
    for target, body, status in cases:
        r, data = post(cluster, target, body)
        assert r.status == status, (target, data)
        check_headers(r, data)
        assert r.getheader("Content-Type") == "application/x-amz-json-1.0"
        ids.add(r.getheader("x-amzn-RequestId"))
    assert len(ids) == len(cases), "request ids repeat: %r" % ids


def test_get_root_is_the_health_check(cluster):
    u = urllib.parse.urlparse(cluster.endpoint)
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=5)
    c.request("GET", "/")
    r = c.getresponse()
    data = r.read()
    c.close()
    assert r.status == 200
    assert data.startswith(b"healthy:"), data
    check_headers(r, data)


@pytest.mark.parametrize("expect", [False, True],
                         ids=["plain", "expect-100-continue"])
def test_body_over_16_mb_is_refused_before_it_is_sent(cluster, expect):
    """Only the headers go out: the router must answer from the
    Content-Length alone, within a few seconds, with a 4xx (and, when the
    client asks, instead of "100 Continue")."""
    u = urllib.parse.urlparse(cluster.endpoint)
    s = socket.create_connection((u.hostname, u.port), timeout=5)
    head = ("POST / HTTP/1.1\r\nHost: %s:%d\r\n"
            "Content-Type: application/x-amz-json-1.0\r\n"
            "X-Amz-Target: DynamoDB_20120810.PutItem\r\n"
            "Content-Length: %d\r\n%s\r\n" % (
                u.hostname, u.port, 16 * 1024 * 1024 + 1,
                "Expect: 100-continue\r\n" if expect else ""))
    s.sendall(head.encode())
    start = time.monotonic()
    got = b""
    try:
        while b"\r\n\r\n" not in got:
            chunk = s.recv(4096)
            if not chunk:
                break
            got += chunk
    except socket.timeout:
        pass
    finally:
        s.close()
    status_line = got.split(b"\r\n", 1)[0]
    assert status_line.startswith(b"HTTP/1.1 4"), (
        "Expect: 100-continue=%s: after %.1fs the router answered %r "
        "(want a 4xx without reading the body)" % (
            expect, time.monotonic() - start, got[:200]))


def test_body_over_16_mb_is_refused_while_it_is_sent(cluster):
    """A client that sends the body anyway gets a 4xx answer, not a
    dropped connection."""
    u = urllib.parse.urlparse(cluster.endpoint)
    s = socket.create_connection((u.hostname, u.port), timeout=5)
    size = 16 * 1024 * 1024 + 1
    s.sendall(("POST / HTTP/1.1\r\nHost: x\r\n"
               "X-Amz-Target: DynamoDB_20120810.PutItem\r\n"
               "Content-Length: %d\r\n\r\n" % size).encode())
    got = b""
    try:
        chunk = b"{" * 65536
        sent = 0
        while sent < size:
            n = min(len(chunk), size - sent)
            s.sendall(chunk[:n])
            sent += n
    except OSError:
        pass  # the router may stop reading once it has answered
    try:
        while b"\r\n\r\n" not in got:
            c = s.recv(4096)
            if not c:
                break
            got += c
    except OSError:
        pass
    finally:
        s.close()
    assert got.split(b"\r\n", 1)[0].startswith(b"HTTP/1.1 4"), got[:200]
