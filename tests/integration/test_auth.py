"""test_auth.py — Signature Version 4 with kv-router --auth FILE
(router/auth.c): boto3 and the AWS CLI work with the right keys; a
missing header, an unknown key, a wrong secret, a date off by more than
15 minutes, and every signed part of a request changed after signing
(method, path, each signed header, the body, the date, the credential's
scope) are refused with DynamoDB's errors; so are 10,000 requests with
one byte of their signature, date or body changed."""

import datetime
import json
import os
import random
import subprocess
import tempfile
from unittest import mock

import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from botocore.exceptions import ClientError

from test_http import JSON_TYPE, PREFIX, Conn

KEYS = tempfile.NamedTemporaryFile("w", suffix=".auth", delete=False)
KEYS.write("# test keys\nAKIDTEST secret\nAKIDOTHER other-secret\n")
KEYS.close()
CLUSTER_OPTIONS = {"router_args": ["--auth", KEYS.name]}


def error(e):
    return e.response["Error"]["Code"], e.response["Error"]["Message"]


@pytest.fixture(scope="module")
def table(cluster):
    return cluster.make_table("auth")


def signed(cluster, target, body, key="AKIDTEST", secret="secret",
           when=None, region="us-east-1", service="dynamodb"):
    """The bytes of a request signed by botocore, as the SDKs sign."""
    data = json.dumps(body).encode()
    host = cluster.endpoint.split("//")[1]
    req = AWSRequest(method="POST", url=cluster.endpoint + "/", data=data,
                     headers={"Content-Type": JSON_TYPE,
                              "X-Amz-Target": PREFIX + target})
    auth = SigV4Auth(Credentials(key, secret), service, region)
    if when is None:
        auth.add_auth(req)
    else:
        with mock.patch("botocore.auth.datetime") as dt:
            dt.datetime.utcnow.return_value = when
            dt.datetime.now.return_value = when
            auth.add_auth(req)
    lines = ["POST / HTTP/1.1", "Host: " + host,
             "Content-Length: %d" % len(data)]
    for k, v in req.headers.items():
        if k.lower() not in ("host", "content-length"):
            lines.append("%s: %s" % (k, v))
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + data


def answer(cluster, raw):
    c = Conn(cluster)
    c.send(raw)
    r = c.read()
    c.close()
    j = json.loads(r.body) if r.body else {}
    return r.status, j.get("__type", "").rsplit("#", 1)[-1], \
        j.get("message")


def test_the_right_keys_work(cluster, table):
    ddb = cluster.client()
    ddb.put_item(TableName=table, Item={"pk": {"S": "a"}})
    assert ddb.get_item(TableName=table, Key={"pk": {"S": "a"}})["Item"]
    env = dict(os.environ, AWS_ACCESS_KEY_ID="AKIDOTHER",
               AWS_SECRET_ACCESS_KEY="other-secret",
               AWS_DEFAULT_REGION="eu-west-1")
    out = subprocess.run(["aws", "dynamodb", "describe-table",
                          "--table-name", table, "--endpoint-url",
                          cluster.endpoint, "--output", "json"],
                         capture_output=True, text=True, env=env,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["Table"]["TableName"] == table


def test_wrong_keys_are_refused(cluster, table):
    import boto3
    from botocore.config import Config

    def client(key, secret):
        return boto3.client(
            "dynamodb", endpoint_url=cluster.endpoint,
            region_name="us-east-1", aws_access_key_id=key,
            aws_secret_access_key=secret,
            config=Config(retries={"total_max_attempts": 1}))
    with pytest.raises(ClientError) as e:
        client("AKIDNOBODY", "x").list_tables()
    assert error(e.value) == ("UnrecognizedClientException",
                              "The security token included in the request "
                              "is invalid.")
    with pytest.raises(ClientError) as e:
        client("AKIDTEST", "not-the-secret").list_tables()
    assert error(e.value)[0] == "InvalidSignatureException"
    assert error(e.value)[1].startswith(
        "The request signature we calculated does not match")


def test_missing_authorization(cluster):
    raw = (b"POST / HTTP/1.1\r\nHost: x\r\nContent-Type: " +
           JSON_TYPE.encode() + b"\r\nX-Amz-Target: " + PREFIX.encode() +
           b"ListTables\r\nContent-Length: 2\r\n\r\n{}")
    assert answer(cluster, raw) == (
        400, "MissingAuthenticationTokenException",
        "Request is missing Authentication Token")


def test_dates_more_than_15_minutes_off(cluster):
    now = datetime.datetime.utcnow()
    ok = signed(cluster, "ListTables", {}, when=now - datetime.timedelta(
        minutes=14))
    assert answer(cluster, ok)[0] == 200
    for minutes, words in ((-16, "Signature expired"),
                           (16, "Signature not yet current")):
        raw = signed(cluster, "ListTables", {},
                     when=now + datetime.timedelta(minutes=minutes))
        status, kind, msg = answer(cluster, raw)
        assert (status, kind) == (400, "InvalidSignatureException")
        assert msg.startswith(words), msg


def replace_header(raw, name, value):
    head, body = raw.split(b"\r\n\r\n", 1)
    lines = head.split(b"\r\n")
    for i, line in enumerate(lines):
        if line.lower().startswith(name.lower() + b":"):
            lines[i] = line.split(b":", 1)[0] + b": " + value
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


def test_every_signed_part_changed_is_refused(cluster, table):
    body = {"TableName": table}
    raw = signed(cluster, "DescribeTable", body)
    assert answer(cluster, raw)[0] == 200
    head = raw.split(b"\r\n\r\n")[0].decode()
    auth = [h for h in head.split("\r\n")
            if h.lower().startswith("authorization:")][0]
    signed_headers = auth.split("SignedHeaders=")[1].split(",")[0]
    changed = {
        "method": raw.replace(b"POST / ", b"PUT / ", 1),
        "path": raw.replace(b"POST / ", b"POST /x ", 1),
        "body": raw[:-3] + bytes([raw[-3] ^ 1]) + raw[-2:],
        "date": replace_header(raw, b"X-Amz-Date", b"20200101T000000Z"),
        "region": raw.replace(b"/us-east-1/", b"/us-west-2/", 1),
        "service": raw.replace(b"/dynamodb/", b"/dynamodbx/", 1),
        "terminator": raw.replace(b"aws4_request", b"aws4_requesx", 1),
    }
    for h in signed_headers.split(";"):
        if h not in ("x-amz-date",):
            changed["header " + h] = replace_header(
                raw, h.encode(), b"changed")
    assert "header host" in changed and "header x-amz-target" in changed
    for what, bad in changed.items():
        status, kind, _ = answer(cluster, bad)
        assert status == 400, what
        assert kind in ("InvalidSignatureException",
                        "IncompleteSignatureException",
                        "UnrecognizedClientException"), (what, kind)


def test_ten_thousand_one_byte_mutations_are_refused(cluster, table):
    raw = signed(cluster, "DescribeTable", {"TableName": table})
    head, body = raw.split(b"\r\n\r\n", 1)
    sig_at = head.index(b"Signature=") + len(b"Signature=")
    date_at = head.index(b"X-Amz-Date: ") + len(b"X-Amz-Date: ")
    body_at = len(head) + 4
    rng = random.Random(7)
    c = Conn(cluster)
    refused = 0
    n = 10000
    for i in range(n):
        where = rng.choice(["sig", "date", "body"])
        at = {"sig": sig_at + rng.randrange(64),
              "date": date_at + rng.randrange(16),
              "body": body_at + rng.randrange(len(body))}[where]
        b = bytearray(raw)
        old = b[at]
        while b[at] == old or b[at] in (10, 13):
            b[at] = rng.randrange(32, 127)
        c.send(bytes(b))
        r = c.read()
        assert r.status == 400, (where, bytes(b))
        kind = json.loads(r.body)["__type"].rsplit("#", 1)[-1]
        assert kind in ("InvalidSignatureException",
                        "IncompleteSignatureException",
                        "SerializationException"), kind
        refused += 1
    c.close()
    print("sigv4: %d of %d mutated requests refused" % (refused, n))
    assert refused == n
