"""test_hostile.py — the hostile-request battery: 10,000 generated
malformed, oversized, deeply nested, wrongly typed and truncated requests
over real connections. Every answer must be DynamoDB-shaped: a 200 (a
mutation that happens to be valid) or a 4xx whose body names a DynamoDB
error type with a message; never a 5xx, a dropped connection or a crash.
The cluster fixture then fails the file on any sanitizer report (the
sanitized suite runs this too), and the router must still answer.

The requests are generated from a fixed seed, so a failure names the
request that caused it and replays.
"""

import json
import random
import socket
import threading
import urllib.parse

import pytest

from test_http import JSON_TYPE, PREFIX, Conn

COUNT = 10000
THREADS = 4

TARGETS = ["PutItem", "GetItem", "UpdateItem", "DeleteItem", "Query", "Scan",
           "BatchGetItem", "BatchWriteItem", "TransactWriteItems",
           "TransactGetItems", "CreateTable", "DescribeTable", "UpdateTable",
           "TagResource", "UpdateTimeToLive", "ListTables"]


def valid_bodies(table):
    key = {"pk": {"S": "k1"}}
    item = {"pk": {"S": "k1"}, "n": {"N": "1"}, "l": {"L": [{"S": "x"}]},
            "m": {"M": {"a": {"BOOL": True}}}, "ss": {"SS": ["a", "b"]}}
    return {
        "PutItem": {"TableName": table, "Item": item,
                    "ConditionExpression": "attribute_not_exists(#p)",
                    "ExpressionAttributeNames": {"#p": "pk"}},
        "GetItem": {"TableName": table, "Key": key, "ConsistentRead": True,
                    "ProjectionExpression": "n, l[0], m.a"},
        "UpdateItem": {"TableName": table, "Key": key,
                       "UpdateExpression": "SET n = n + :one ADD ss :s",
                       "ExpressionAttributeValues": {":one": {"N": "1"},
                                                     ":s": {"SS": ["c"]}},
                       "ReturnValues": "ALL_NEW"},
        "DeleteItem": {"TableName": table, "Key": key,
                       "ReturnValues": "ALL_OLD"},
        "Query": {"TableName": table, "KeyConditionExpression": "pk = :p",
                  "ExpressionAttributeValues": {":p": {"S": "k1"}},
                  "Limit": 5},
        "Scan": {"TableName": table, "Segment": 0, "TotalSegments": 2,
                 "FilterExpression": "size(l) > :z",
                 "ExpressionAttributeValues": {":z": {"N": "0"}}},
        "BatchGetItem": {"RequestItems": {table: {"Keys": [key]}}},
        "BatchWriteItem": {"RequestItems": {table: [
            {"PutRequest": {"Item": item}},
            {"DeleteRequest": {"Key": {"pk": {"S": "k2"}}}}]}},
        "TransactWriteItems": {"TransactItems": [
            {"Put": {"TableName": table, "Item": item}},
            {"ConditionCheck": {"TableName": table,
                                "Key": {"pk": {"S": "k3"}},
                                "ConditionExpression":
                                    "attribute_not_exists(pk)"}}]},
        "TransactGetItems": {"TransactItems": [
            {"Get": {"TableName": table, "Key": key}}]},
        "CreateTable": {"TableName": "hostile-new",
                        "AttributeDefinitions": [
                            {"AttributeName": "a", "AttributeType": "S"}],
                        "KeySchema": [{"AttributeName": "a",
                                       "KeyType": "HASH"}],
                        "BillingMode": "PAY_PER_REQUEST"},
        "DescribeTable": {"TableName": table},
        "UpdateTable": {"TableName": table,
                        "BillingMode": "PAY_PER_REQUEST"},
        "TagResource": {"ResourceArn": "arn:aws:dynamodb:us-east-1:0:"
                                       "table/" + table,
                        "Tags": [{"Key": "k", "Value": "v"}]},
        "UpdateTimeToLive": {"TableName": table, "TimeToLiveSpecification": {
            "AttributeName": "exp", "Enabled": True}},
        "ListTables": {"Limit": 3},
    }


JUNK = [None, True, 0, -1, 1.5, 1e308, "", "x" * 70000, [], {}, [[]],
        {"S": None}, {"N": "1e400"}, {"B": "!!"}, {"SS": []}, {"X": "y"},
        "\ud800", 2 ** 70]


def paths(obj, at=()):
    """Every path into obj (dict keys, list indexes)."""
    yield at
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from paths(v, at + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from paths(v, at + (i,))


def put_at(obj, path, value):
    if not path:
        return value
    cur = obj
    for p in path[:-1]:
        cur = cur[p]
    cur[path[-1]] = value
    return obj


def nested(depth, leaf):
    for _ in range(depth):
        leaf = {"M": {"a": leaf}} if depth < 200 else [leaf]
    return leaf


def mutate(rng, target, body):
    """One hostile request: (target or None, body bytes, extra headers)."""
    kind = rng.randrange(10)
    text = json.dumps(body).encode()
    if kind == 0:  # truncated anywhere
        return target, text[:rng.randrange(len(text) + 1)], []
    if kind == 1:  # a few bytes changed
        b = bytearray(text)
        for _ in range(rng.randrange(1, 6)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        return target, bytes(b), []
    if kind == 2:  # a value of the wrong type or size
        ps = list(paths(body))[1:]
        body = put_at(json.loads(text), rng.choice(ps), rng.choice(JUNK))
        return target, json.dumps(body).encode(), []
    if kind == 3:  # deep nesting in an item or a value
        depth = rng.choice([30, 31, 32, 33, 100, 1000, 100000])
        b = json.loads(text)
        b["Item"] = {"pk": {"S": "k"}, "d": nested(depth, {"S": "x"})}
        return target, json.dumps(b).encode() if depth < 1000 else (
            b'{"Item":' + b"[" * depth + b"]" * depth + b"}"), []
    if kind == 4:  # oversized pieces
        big = rng.choice([400 * 1024 + 1, 70000, 2049, 1025])
        b = json.loads(text)
        b[rng.choice(["TableName", "ConditionExpression",
                      "UpdateExpression", "KeyConditionExpression"])] = \
            "a" * big
        return target, json.dumps(b).encode(), []
    if kind == 5:  # invalid UTF-8 inside a string
        return target, text.replace(b'"k1"', b'"k\xff\xfe1"', 1), []
    if kind == 6:  # a duplicate member
        return target, b'{"TableName":"a",' + text[1:] if len(text) > 2 \
            else text, []
    if kind == 7:  # random bytes
        return target, bytes(rng.randrange(256)
                             for _ in range(rng.randrange(200))), []
    if kind == 8:  # the wrong or no operation
        t = rng.choice([None, "", "Nope", "getitem", target + "X",
                        "DynamoDB_20120810." + target])
        return t, text, []
    # a wrong Content-Type or an odd but valid header set
    return target, text, [rng.choice(["Content-Type: text/plain",
                                      "X-Amz-Target: a.b",
                                      "Authorization: garbage"])]


def raw(target, body, headers):
    lines = ["POST / HTTP/1.1", "Host: kv", "Content-Type: " + JSON_TYPE,
             "Content-Length: %d" % len(body)]
    if target is not None:
        lines.append("X-Amz-Target: " + PREFIX + target)
    return ("\r\n".join(lines + headers) + "\r\n\r\n").encode() + body


def shaped(r):
    """None when r is a DynamoDB-shaped answer, else why not."""
    if r.status == 200:
        return None
    if not 400 <= r.status < 500:
        return "status %d" % r.status
    if r.status == 413:
        return None  # refused before it was read, as DynamoDB does
    try:
        j = json.loads(r.body)
    except ValueError:
        return "body is not JSON: %r" % r.body[:200]
    t = j.get("__type", "")
    if not (t.startswith("com.amazon.coral.") or
            t.startswith("com.amazonaws.dynamodb.v20120810#")):
        return "no DynamoDB error type: %r" % j
    if "message" not in j and "Message" not in j and \
            not t.endswith("SerializationException") and \
            not t.endswith("UnknownOperationException"):
        return "no message: %r" % j
    return None


@pytest.fixture(scope="module")
def table(cluster):
    return cluster.make_table("hostile")


def test_ten_thousand_hostile_requests(cluster, table):
    bodies = valid_bodies(table)
    bad, counts = [], {}
    lock = threading.Lock()

    def run(worker):
        rng = random.Random(1000 + worker)
        c = Conn(cluster)
        for i in range(COUNT // THREADS):
            target = rng.choice(TARGETS)
            t, body, headers = mutate(rng, target,
                                      json.loads(json.dumps(bodies[target])))
            try:
                c.send(raw(t, body, headers))
                r = c.read()
                why = shaped(r)
            except (EOFError, OSError) as e:
                why, r = "connection: %s" % e, None
                c.close()
                c = Conn(cluster)
            with lock:
                key = r.status if r is not None else "dropped"
                counts[key] = counts.get(key, 0) + 1
                if why is not None and len(bad) < 10:
                    bad.append((worker, i, t, body[:300], why))
        c.close()

    threads = [threading.Thread(target=run, args=(w,))
               for w in range(THREADS)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(600)
    print("hostile battery: answers by status", counts)
    assert not bad, bad
    assert sum(counts.values()) == COUNT
    assert counts.get(400, 0) > COUNT // 2  # most of them were refused
    # The router still serves.
    host, port = urllib.parse.urlparse(cluster.endpoint).hostname, \
        urllib.parse.urlparse(cluster.endpoint).port
    with socket.create_connection((host, port), timeout=5):
        pass
    ddb = cluster.client()
    ddb.put_item(TableName=table, Item={"pk": {"S": "after"}})
    assert ddb.get_item(TableName=table, Key={"pk": {"S": "after"}},
                        ConsistentRead=True)["Item"]
