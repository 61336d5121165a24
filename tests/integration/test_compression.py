"""test_compression.py — request bodies with a Content-Encoding
(router/http/http_inflate.c) and POSTs to a path other than "/"
(router/http/http.c).

boto3 compressing every request (gzip) puts, gets and queries a 100 KB
item. Over raw sockets: gzip (also two members, chunked, any case),
deflate (zlib-wrapped and bare) and identity are served; a truncated
gzip, junk after a member, an empty body, and a coding the router does
not know are refused with 400 SerializationException (DynamoDB answers
500, which the SDKs would retry); a 20 MB body that gzips to a few KB is
refused as too large, with the answer a plain oversized body gets. With
--auth, the signature covers the body as sent (compressed): a signed
gzip request is served, a tampered or re-signed one is not. A POST to
/foo, // or /x is refused with 404 UnknownOperationException; "/?x=1"
is "/". Every refused PutItem is checked to have written nothing.
"""

import copy
import gzip
import json
import os
import sys
import tempfile
import uuid
import zlib

import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from cluster import EXTERNAL_REFUSED, Cluster
from test_http import JSON_TYPE, PREFIX, Conn, checked, error_type

KEYS = tempfile.NamedTemporaryFile("w", suffix=".auth", delete=False)
KEYS.write("AKIDTEST secret\n")
KEYS.close()
LIMIT = 16 * 1024 * 1024  # HTTP_MAX_BODY


@pytest.fixture(scope="module")
def table(cluster):
    return cluster.make_table("gz")


@pytest.fixture(scope="module")
def auth_cluster(request):
    """A second cluster whose router checks signatures (--auth), started
    and checked as conftest.py's `cluster` is."""
    # Its tests carry the `processes` mark: against an external cluster
    # (KV_ENDPOINT) they are left out with -m 'not processes', and fail
    # here if they are not.
    if os.environ.get("KV_ENDPOINT"):
        pytest.fail(EXTERNAL_REFUSED)
    c = Cluster(router_args=["--auth", KEYS.name])
    try:
        c.start()
    except BaseException:
        tails = c.log_tails()
        c.cleanup(keep=True)
        raise RuntimeError("the --auth cluster did not start (folder %s)\n"
                           "%s" % (c.dir, tails))
    try:
        yield c
    finally:
        c.stop()
        reports = c.sanitizer_reports()
        if reports:
            sys.stderr.write("\n--auth cluster kept in %s\n" % c.dir)
        c.cleanup(keep=bool(reports))
        assert not reports, "sanitizer findings in the --auth cluster's " \
            "logs:\n" + "\n".join(reports)


@pytest.fixture(scope="module")
def auth_table(auth_cluster):
    return auth_cluster.make_table("gza")


def put_body(table, pk, extra=None):
    item = {"pk": {"S": pk}, "v": {"S": "value-" + pk}}
    item.update(extra or {})
    return json.dumps({"TableName": table, "Item": item}).encode()


def raw(target, body, headers=(), path="/", method="POST", length=None):
    """The bytes of one request: body as given (bytes), framed by
    Content-Length unless a Transfer-Encoding is among headers."""
    lines = ["%s %s HTTP/1.1" % (method, path), "Host: kv",
             "Content-Type: " + JSON_TYPE]
    if target is not None:
        lines.append("X-Amz-Target: " + PREFIX + target)
    lines += list(headers)
    if not any(h.lower().startswith("transfer-encoding") for h in headers):
        lines.append("Content-Length: %d" %
                     (len(body) if length is None else length))
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def chunked(body):
    """body in two chunks and the last, empty one."""
    half = len(body) // 2
    return b"".join(b"%x\r\n%s\r\n" % (len(p), p)
                    for p in (body[:half], body[half:]) if p) + b"0\r\n\r\n"


def raw_deflate(data):
    """RFC 1951 alone: deflate without zlib's header and checksum."""
    z = zlib.compressobj(9, zlib.DEFLATED, -15)
    return z.compress(data) + z.flush()


def exchange(cluster, data, conn=None):
    c = conn or Conn(cluster)
    c.send(data)
    r = c.read()
    if conn is None:
        c.close()
    return r


def stored(cluster, table, pk):
    got = cluster.client().get_item(TableName=table, Key={"pk": {"S": pk}},
                                    ConsistentRead=True)
    return got.get("Item")


def new_pk():
    return "k-" + uuid.uuid4().hex[:12]


# ---- boto3 compressing its requests ----

def compressing_client(cluster):
    """A boto3 client that gzips every request body, and the list of
    (Content-Encoding, first two body bytes) of what it sent.

    botocore compresses request bodies since 1.31 (request_min_compression
    _size_bytes, and an operation's "requestcompression" trait, which
    DynamoDB's model does not carry yet, so it is set on each operation
    here). Older botocore (Debian 12 has 1.29) gets the same done by a
    before-call hook: the body is gzipped and the header set before the
    request is signed, which is what botocore's own compression does."""
    import boto3
    from botocore.config import Config
    opts = dict(retries={"mode": "standard", "total_max_attempts": 1},
                connect_timeout=5, read_timeout=30)
    native = "request_min_compression_size_bytes" in Config.OPTION_DEFAULTS
    if native:
        opts["request_min_compression_size_bytes"] = 1
    client = boto3.client(
        "dynamodb", endpoint_url=cluster.endpoint, region_name="us-east-1",
        aws_access_key_id="AKIDTEST", aws_secret_access_key="secret",
        config=Config(**opts))
    if native:
        model = client.meta.service_model
        # A copy: the loaded model is shared with every other client.
        model._service_description = copy.deepcopy(
            model._service_description)
        for op_def in model._service_description["operations"].values():
            op_def["requestcompression"] = {"encodings": ["gzip"]}
    else:
        def gzip_body(params, **kwargs):
            body = params["body"]
            if isinstance(body, str):
                body = body.encode()
            params["body"] = gzip.compress(body)
            params["headers"]["Content-Encoding"] = "gzip"
        client.meta.events.register("before-call.dynamodb", gzip_body)
    sent = []

    def record(request, **kwargs):
        body = request.body or b""
        if hasattr(body, "read"):
            body = b""
        enc = request.headers.get("Content-Encoding")
        if isinstance(enc, bytes):
            enc = enc.decode()
        sent.append((enc, bytes(body[:2])))
    client.meta.events.register("before-send.dynamodb", record)
    return client, sent


def sdk_round_trip(cluster, table):
    client, sent = compressing_client(cluster)
    pk = new_pk()
    big = uuid.uuid4().hex * (100 * 1024 // 32)  # 100 KB, compresses ~2x
    item = {"pk": {"S": pk}, "big": {"S": big}, "n": {"N": "7"}}
    client.put_item(TableName=table, Item=item)
    got = client.get_item(TableName=table, Key={"pk": {"S": pk}},
                          ConsistentRead=True)["Item"]
    assert got == item
    q = client.query(TableName=table, KeyConditionExpression="pk = :p",
                     ExpressionAttributeValues={":p": {"S": pk}},
                     ConsistentRead=True)
    assert q["Items"] == [item]
    assert len(sent) == 3, sent
    for enc, magic in sent:
        assert (enc, magic) == ("gzip", b"\x1f\x8b"), sent
    assert stored(cluster, table, pk) == item


def test_boto3_with_gzip_compression(cluster, table):
    sdk_round_trip(cluster, table)


# ---- raw requests that are served ----

def two_members(data):
    return gzip.compress(data[:10]) + gzip.compress(data[10:])


@pytest.mark.parametrize("encoding, encode, transfer", [
    ("gzip", gzip.compress, None),
    (" GZip ", gzip.compress, None),
    ("gzip, identity", gzip.compress, None),
    ("gzip", two_members, None),
    ("gzip", gzip.compress, "chunked"),
    ("deflate", zlib.compress, None),
    ("DEFLATE", raw_deflate, None),
    ("identity", lambda b: b, None),
], ids=["gzip", "gzip-any-case", "gzip-identity", "gzip-two-members",
        "gzip-chunked", "deflate-zlib", "deflate-bare", "identity"])
def test_encoded_bodies_are_served(cluster, table, encoding, encode,
                                   transfer):
    pk = new_pk()
    body = encode(put_body(table, pk))
    headers = ["Content-Encoding: " + encoding]
    if transfer == "chunked":
        headers.append("Transfer-Encoding: chunked")
        body = chunked(body)
    r = checked(exchange(cluster, raw("PutItem", body, headers)))
    assert r.json() == {}, r
    assert stored(cluster, table, pk)["v"] == {"S": "value-" + pk}


def test_gzip_get_item_answer_is_plain(cluster, table):
    pk = new_pk()
    checked(exchange(cluster, raw("PutItem", put_body(table, pk))))
    body = gzip.compress(json.dumps({
        "TableName": table, "Key": {"pk": {"S": pk}},
        "ConsistentRead": True}).encode())
    r = checked(exchange(cluster, raw("GetItem", body,
                                      ["Content-Encoding: gzip"])))
    assert "content-encoding" not in r.headers
    assert r.json()["Item"]["v"] == {"S": "value-" + pk}


# ---- raw requests that are refused ----

def refused_cases(table, pk):
    data = put_body(table, pk)
    gz = gzip.compress(data)
    return {
        "truncated": ("gzip", gz[:-1], "the data is truncated"),
        "truncated-half": ("gzip", gz[:len(gz) // 2],
                           "the data is truncated"),
        "junk-after-member": ("gzip", gz + b"junk",
                              "is not another gzip member"),
        "not-gzip": ("gzip", data, "does not start with a gzip header"),
        "bad-crc": ("gzip", gz[:-8] + bytes([gz[-8] ^ 1]) + gz[-7:],
                    "incorrect data check"),
        "empty-gzip": ("gzip", b"", "the body is empty"),
        "empty-deflate": ("deflate", b"", "the body is empty"),
        "deflate-then-junk": ("deflate", zlib.compress(data) + b"x",
                              "data follows the end of the stream"),
        "two-deflates": ("deflate", zlib.compress(data[:10]) +
                         zlib.compress(data[10:]),
                         "data follows the end of the stream"),
        "garbage-coding": ("garbage", data, "'garbage' is not supported"),
        "br": ("br", data, "'br' is not supported"),
        "two-codings": ("gzip, deflate", gz,
                        "'gzip, deflate' is not supported"),
    }


CASES = sorted(refused_cases("t", "k"))


@pytest.mark.parametrize("case", CASES)
def test_broken_encodings_are_refused_with_400(cluster, table, case):
    pk = new_pk()
    encoding, body, words = refused_cases(table, pk)[case]
    c = Conn(cluster)
    r = checked(exchange(cluster, raw("PutItem", body, [
        "Content-Encoding: " + encoding]), conn=c), 400)
    kind, msg = error_type(r)
    assert kind == "SerializationException", r
    assert words in msg, msg
    if "supported" in words:
        assert msg.startswith("The request's Content-Encoding '"), msg
    else:
        assert msg.startswith("The request body could not be "
                              "decompressed (%s): " % encoding), msg
    # The request was whole: the connection serves the next one.
    ok = new_pk()
    checked(exchange(cluster, raw("PutItem", put_body(table, ok)), conn=c))
    c.close()
    assert stored(cluster, table, pk) is None
    assert stored(cluster, table, ok) is not None


def test_a_small_body_inflating_past_the_limit_is_too_large(cluster, table):
    pk = new_pk()
    data = put_body(table, pk)
    data = data[:-1] + b" " * (20 * 1024 * 1024) + data[-1:]
    bomb = gzip.compress(data)
    assert len(bomb) < 64 * 1024
    c = Conn(cluster)
    r = checked(exchange(cluster, raw("PutItem", bomb,
                                      ["Content-Encoding: gzip"]), conn=c),
                413)
    # The answer a plain body over the limit gets.
    plain = exchange(cluster, raw("PutItem", b"", length=LIMIT + 1))
    assert (r.status, r.json()) == (plain.status, plain.json())
    assert error_type(r) == ("RequestEntityTooLarge", "Request body is "
                             "larger than the maximum of %d bytes" % LIMIT)
    # The compressed body was read whole: the connection goes on.
    checked(exchange(cluster, raw("PutItem", put_body(table, new_pk())),
                     conn=c))
    c.close()
    assert stored(cluster, table, pk) is None


def test_a_body_inflating_to_the_limit_exactly_is_taken(cluster, table):
    pk = new_pk()
    data = put_body(table, pk)
    data = data[:-1] + b" " * (LIMIT - len(data)) + data[-1:]
    assert len(data) == LIMIT
    r = exchange(cluster, raw("PutItem", gzip.compress(data),
                              ["Content-Encoding: gzip"]))
    checked(r)
    assert stored(cluster, table, pk) is not None


# ---- --auth: the signature covers the body as sent ----

def signed(cluster, target, body, headers, path="/"):
    """A request signed by botocore over exactly these body bytes and
    headers (as an SDK that compresses signs)."""
    host = cluster.endpoint.split("//")[1]
    h = {"Content-Type": JSON_TYPE, "X-Amz-Target": PREFIX + target}
    h.update(headers)
    req = AWSRequest(method="POST", url=cluster.endpoint + path, data=body,
                     headers=h)
    SigV4Auth(Credentials("AKIDTEST", "secret"), "dynamodb",
              "us-east-1").add_auth(req)
    lines = ["POST %s HTTP/1.1" % path, "Host: " + host,
             "Content-Length: %d" % len(body)]
    for k, v in req.headers.items():
        if k.lower() not in ("host", "content-length"):
            lines.append("%s: %s" % (k, v))
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def with_body(raw_request, body):
    """raw_request with another body (Content-Length is not signed)."""
    head = raw_request.split(b"\r\n\r\n", 1)[0]
    lines = [line for line in head.split(b"\r\n")
             if not line.lower().startswith(b"content-length:")]
    lines.append(b"Content-Length: %d" % len(body))
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


def signed_headers(raw_request):
    head = raw_request.split(b"\r\n\r\n")[0].decode()
    auth = [h for h in head.split("\r\n")
            if h.lower().startswith("authorization:")][0]
    return auth.split("SignedHeaders=")[1].split(",")[0].split(";")


@pytest.mark.processes
def test_auth_signed_gzip_request_is_served(auth_cluster, auth_table):
    pk = new_pk()
    req = signed(auth_cluster, "PutItem",
                 gzip.compress(put_body(auth_table, pk)),
                 {"Content-Encoding": "gzip"})
    assert "content-encoding" in signed_headers(req)
    checked(exchange(auth_cluster, req))
    assert stored(auth_cluster, auth_table, pk) is not None


@pytest.mark.processes
def test_auth_boto3_with_gzip_compression(auth_cluster, auth_table):
    sdk_round_trip(auth_cluster, auth_table)


@pytest.mark.processes
def test_auth_tampered_compressed_body_is_refused(auth_cluster, auth_table):
    pk, other = new_pk(), new_pk()
    req = signed(auth_cluster, "PutItem",
                 gzip.compress(put_body(auth_table, pk)),
                 {"Content-Encoding": "gzip"})
    body = req.split(b"\r\n\r\n", 1)[1]
    # Another valid gzip body in place of the signed one, and the signed
    # one with a byte of its compressed data changed.
    swapped = gzip.compress(put_body(auth_table, other))
    flipped = body[:12] + bytes([body[12] ^ 1]) + body[13:]
    for bad in (swapped, flipped):
        r = exchange(auth_cluster, with_body(req, bad))
        assert (r.status, error_type(r)[0]) == (
            400, "InvalidSignatureException"), r
    # Signed over the decompressed bytes but sent compressed: refused.
    plain = put_body(auth_table, pk)
    req = signed(auth_cluster, "PutItem", plain, {"Content-Encoding": "gzip"})
    r = exchange(auth_cluster, with_body(req, gzip.compress(plain)))
    assert (r.status, error_type(r)[0]) == (400, "InvalidSignatureException")
    # Content-Encoding is signed: taking it off is refused too.
    req = signed(auth_cluster, "PutItem", plain, {"Content-Encoding": "gzip"})
    r = exchange(auth_cluster, req.replace(b"Content-Encoding: gzip\r\n",
                                           b"", 1))
    assert (r.status, error_type(r)[0]) == (400, "InvalidSignatureException")
    assert stored(auth_cluster, auth_table, pk) is None
    assert stored(auth_cluster, auth_table, other) is None


def test_auth_signed_broken_gzip_is_a_400(auth_cluster, auth_table):
    pk = new_pk()
    req = signed(auth_cluster, "PutItem",
                 gzip.compress(put_body(auth_table, pk))[:-1],
                 {"Content-Encoding": "gzip"})
    r = checked(exchange(auth_cluster, req), 400)
    assert error_type(r)[0] == "SerializationException"
    assert stored(auth_cluster, auth_table, pk) is None


def test_auth_signed_request_to_another_path_is_404(auth_cluster,
                                                    auth_table):
    pk = new_pk()
    req = signed(auth_cluster, "PutItem", put_body(auth_table, pk), {},
                 path="/x")
    r = checked(exchange(auth_cluster, req), 404)
    assert error_type(r)[0] == "UnknownOperationException"
    assert stored(auth_cluster, auth_table, pk) is None


# ---- POST to a path other than "/" ----

@pytest.mark.parametrize("path", ["/foo", "//", "/x", "/x/", "/%2F",
                                  "/foo?x=1"])
def test_post_to_another_path_is_refused(cluster, table, path):
    pk = new_pk()
    r = checked(exchange(cluster, raw("PutItem", put_body(table, pk),
                                      path=path)), 404)
    kind, msg = error_type(r)
    assert kind == "UnknownOperationException", r
    assert msg == 'DynamoDB requests are served at the path "/" only.'
    assert stored(cluster, table, pk) is None


def test_post_with_a_query_is_served_at_root(cluster, table):
    pk = new_pk()
    checked(exchange(cluster, raw("PutItem", put_body(table, pk),
                                  path="/?x=1")))
    assert stored(cluster, table, pk) is not None


def test_preflight_at_another_path_still_answers(cluster):
    c = Conn(cluster)
    c.send(b"OPTIONS /foo HTTP/1.1\r\nHost: kv\r\nOrigin: http://p.test\r\n"
           b"Access-Control-Request-Method: POST\r\n\r\n")
    r = c.read()
    c.close()
    assert r.status == 200 and r.body == b"", r
    assert r.headers["access-control-allow-origin"] == "*"
