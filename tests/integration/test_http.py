"""test_http.py — the router's HTTP/1.1 server (router/http/http.c) end to end,
over raw sockets where a client library would hide what is tested:
pipelined requests answered in order, chunked bodies, HTTP/1.0 and
"Connection: close", clients that half-close,
"100 Continue", HEAD, many connections at once, clients that vanish
mid-request, oversized heads, the GET routes, unknown methods,
a client that trickles its request, and many threads on keep-alive
connections. Every DynamoDB answer is checked for its content, its
x-amz-crc32 and its x-amzn-RequestId. The parser itself is tested in
tests/router/http_parse_test.c.
"""

import ctypes
import http.client
import json
import os
import socket
import struct
import threading
import time
import urllib.parse
import uuid
import zlib

import pytest

PREFIX = "DynamoDB_20120810."
JSON_TYPE = "application/x-amz-json-1.0"


@pytest.fixture(scope="module")
def table(cluster):
    """A table (hash key pk S) holding items c0..c9 with v = "value-i"."""
    ddb = cluster.client()
    name = "http-" + uuid.uuid4().hex[:8]
    ddb.create_table(TableName=name, AttributeDefinitions=[
        {"AttributeName": "pk", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        BillingMode="PAY_PER_REQUEST")
    ddb.get_waiter("table_exists").wait(
        TableName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 20})
    for i in range(10):
        ddb.put_item(TableName=name, Item={"pk": {"S": "c%d" % i},
                                           "v": {"S": "value-%d" % i}})
    return name


def address(cluster):
    u = urllib.parse.urlparse(cluster.endpoint)
    return u.hostname, u.port


def request(target, body, headers=(), version="HTTP/1.1", method="POST"):
    """The bytes of one request; body is bytes or a JSON-able object."""
    if not isinstance(body, bytes):
        body = json.dumps(body).encode()
    lines = ["%s / %s" % (method, version), "Host: kv",
             "Content-Type: " + JSON_TYPE,
             "Content-Length: %d" % len(body)]
    if target is not None:
        lines.append("X-Amz-Target: " + PREFIX + target)
    return ("\r\n".join(lines + list(headers)) + "\r\n\r\n").encode() + body


def get_item(table, pk):
    return request("GetItem", {"TableName": table, "Key": {"pk": {"S": pk}},
                               "ConsistentRead": True})


def put_item(table, pk, v):
    return request("PutItem", {"TableName": table, "Item": {
        "pk": {"S": pk}, "v": {"S": v}}})


class Response:
    def __init__(self, status, headers, body):
        self.status, self.headers, self.body = status, headers, body

    def json(self):
        return json.loads(self.body)

    def __repr__(self):
        return "<%d %r %r>" % (self.status, self.headers, self.body[:300])


class Conn:
    """A raw client connection that reads answers framed by
    Content-Length (the only framing the router sends)."""

    def __init__(self, cluster, timeout=10):
        self.s = socket.create_connection(address(cluster), timeout=timeout)
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def send(self, data):
        self.s.sendall(data)

    def close(self):
        self.s.close()

    def _fill(self):
        chunk = self.s.recv(65536)
        if not chunk:
            raise EOFError("the router closed the connection; unread: %r"
                           % self.buf[:200])
        self.buf += chunk

    def read_head(self):
        """The next status line and headers: (status, {lower name: value},
        the status line)."""
        while b"\r\n\r\n" not in self.buf:
            self._fill()
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        version, status, _ = lines[0].split(" ", 2)
        assert version == "HTTP/1.1", lines[0]
        headers = {}
        for line in lines[1:]:
            k, v = line.split(":", 1)
            assert k.lower() not in headers, "header twice: %r" % lines
            headers[k.lower()] = v.strip()
        return int(status), headers, lines[0]

    def read(self):
        status, headers, _ = self.read_head()
        n = int(headers["content-length"])
        while len(self.buf) < n:
            self._fill()
        body, self.buf = self.buf[:n], self.buf[n:]
        return Response(status, headers, body)

    def closed_by_server(self, timeout=5):
        """True when the router closes the connection (EOF, nothing more
        sent) within timeout."""
        if self.buf:
            return False
        self.s.settimeout(timeout)
        try:
            return self.s.recv(4096) == b""
        except ConnectionResetError:
            return True
        except socket.timeout:
            return False


def checked(r, status=200, ctype=JSON_TYPE):
    """r has status, Content-Type ctype, a request id and a crc32 of its
    body; returns r."""
    assert r.status == status, r
    assert r.headers.get("content-type") == ctype, r
    assert r.headers.get("x-amzn-requestid"), r
    assert int(r.headers["x-amz-crc32"]) == zlib.crc32(r.body), r
    return r


def error_type(r):
    j = r.json()
    return j["__type"].rsplit("#", 1)[-1], j.get("message")


# ---- one connection, several requests ----

def test_pipelined_requests_are_answered_in_order(cluster, table):
    c = Conn(cluster)
    c.send(put_item(table, "pipe", "v1") + get_item(table, "pipe-none") +
           get_item(table, "pipe") + request("ListTables", {}) +
           put_item(table, "pipe", "v2") + get_item(table, "pipe"))
    rs = [checked(c.read()) for _ in range(6)]
    assert rs[0].json() == {}
    assert rs[1].json() == {}
    assert rs[2].json() == {"Item": {"pk": {"S": "pipe"}, "v": {"S": "v1"}}}
    assert table in rs[3].json()["TableNames"]
    assert rs[4].json() == {}
    assert rs[5].json() == {"Item": {"pk": {"S": "pipe"}, "v": {"S": "v2"}}}
    ids = [r.headers["x-amzn-requestid"] for r in rs]
    assert len(set(ids)) == len(ids), ids
    # The connection stays usable afterwards.
    c.send(get_item(table, "c3"))
    assert checked(c.read()).json()["Item"]["v"] == {"S": "value-3"}
    c.close()


def test_pipelined_mix_of_routes_and_errors_keeps_its_order(cluster, table):
    c = Conn(cluster)
    c.send(b"GET / HTTP/1.1\r\nHost: kv\r\n\r\n" +
           request("Frobnicate", {}) + get_item(table, "c1") +
           b"GET /nope HTTP/1.1\r\nHost: kv\r\n\r\n" +
           get_item(table + "-missing", "x") + get_item(table, "c2"))
    r = checked(c.read(), 200, "text/plain")
    assert r.body.startswith(b"healthy:"), r
    assert error_type(checked(c.read(), 400))[0] == \
        "UnknownOperationException"
    assert checked(c.read()).json()["Item"]["v"] == {"S": "value-1"}
    checked(c.read(), 404, "text/plain")
    assert error_type(checked(c.read(), 400))[0] == \
        "ResourceNotFoundException"
    assert checked(c.read()).json()["Item"]["v"] == {"S": "value-2"}
    c.close()


# ---- bodies ----

def test_chunked_put_item_is_accepted_and_readable(cluster, table):
    body = json.dumps({"TableName": table, "Item": {
        "pk": {"S": "chunked"}, "v": {"S": "x" * 3000}}}).encode()
    chunks = b""
    for i in range(0, len(body), 1000):
        piece = body[i:i + 1000]
        ext = b";n=%d" % i if i % 2000 == 0 else b""
        chunks += b"%X%s\r\n%s\r\n" % (len(piece), ext, piece)
    c = Conn(cluster)
    c.send(b"POST / HTTP/1.1\r\nHost: kv\r\nContent-Type: " +
           JSON_TYPE.encode() + b"\r\nX-Amz-Target: " + PREFIX.encode() +
           b"PutItem\r\nTransfer-Encoding: chunked\r\n\r\n" + chunks +
           b"0\r\nX-Trailer: yes\r\n\r\n")
    assert checked(c.read()).json() == {}
    # The same connection goes on after the trailers.
    c.send(get_item(table, "chunked"))
    assert checked(c.read()).json() == {"Item": {
        "pk": {"S": "chunked"}, "v": {"S": "x" * 3000}}}
    c.close()
    item = cluster.client().get_item(TableName=table, Key={
        "pk": {"S": "chunked"}}, ConsistentRead=True)["Item"]
    assert item["v"] == {"S": "x" * 3000}


def test_expect_100_continue_is_answered_before_the_body(cluster, table):
    req = put_item(table, "expect", "sent-after-continue")
    head, body = req.split(b"\r\n\r\n", 1)
    c = Conn(cluster)
    c.send(head + b"\r\nExpect: 100-continue\r\n\r\n")
    status, headers, line = c.read_head()
    assert (status, line) == (100, "HTTP/1.1 100 Continue"), line
    assert headers == {}
    assert c.buf == b""
    c.send(body)
    assert checked(c.read()).json() == {}
    c.send(get_item(table, "expect"))
    assert checked(c.read()).json()["Item"]["v"] == {
        "S": "sent-after-continue"}
    c.close()


def test_expect_100_continue_with_the_body_sent_gets_only_the_answer(
        cluster, table):
    req = get_item(table, "c4")
    head, body = req.split(b"\r\n\r\n", 1)
    c = Conn(cluster)
    c.send(head + b"\r\nExpect: 100-continue\r\n\r\n" + body)
    r = checked(c.read())
    assert r.json()["Item"]["v"] == {"S": "value-4"}
    c.close()


# ---- closing ----

def test_http_1_0_is_answered_then_closed(cluster, table):
    c = Conn(cluster)
    c.send(get_item(table, "c5").replace(b"HTTP/1.1", b"HTTP/1.0", 1))
    r = checked(c.read())
    assert r.json()["Item"]["v"] == {"S": "value-5"}
    assert r.headers.get("connection", "").lower() == "close", r
    assert c.closed_by_server(), "the router kept an HTTP/1.0 connection"
    c.close()


def test_http_1_0_with_keep_alive_stays_open(cluster, table):
    c = Conn(cluster)
    req = request("GetItem", {"TableName": table,
                              "Key": {"pk": {"S": "c6"}}},
                  headers=["Connection: keep-alive"], version="HTTP/1.0")
    for _ in range(3):
        c.send(req)
        r = checked(c.read())
        assert r.json()["Item"]["v"] == {"S": "value-6"}
        # A 1.0 client reuses the connection only when told it may.
        assert r.headers.get("connection") == "keep-alive", r
    c.close()


def test_connection_close_is_answered_then_closed(cluster, table):
    c = Conn(cluster)
    # The request pipelined behind the "close" is never answered.
    c.send(request("GetItem", {"TableName": table,
                               "Key": {"pk": {"S": "c7"}}},
                   headers=["Connection: close"]) + get_item(table, "c8"))
    r = checked(c.read())
    assert r.json()["Item"]["v"] == {"S": "value-7"}
    assert r.headers.get("connection") == "close", r
    assert c.closed_by_server(), "the router kept a closed connection"
    c.close()


@pytest.mark.parametrize("cork", [False, True], ids=["plain", "corked"])
def test_half_closed_client_gets_its_answers_then_a_close(cluster, table,
                                                          cork):
    """A client that shuts its sending side after its requests (as
    `nc -N` does) still reads every answer, then the router's close.
    Corked, the requests and the FIN leave in one segment."""
    for i in range(10):
        c = Conn(cluster)
        if cork:
            c.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CORK, 1)
        # A node call, a worker's, one answered in the loop.
        c.send(get_item(table, "c%d" % i) + request("ListTables", {}) +
               b"GET / HTTP/1.1\r\nHost: kv\r\n\r\n")
        c.s.shutdown(socket.SHUT_WR)
        assert checked(c.read()).json()["Item"]["v"] == {
            "S": "value-%d" % i}
        assert table in checked(c.read()).json()["TableNames"]
        r = checked(c.read(), 200, "text/plain")
        assert r.body.startswith(b"healthy:"), r
        assert c.closed_by_server(2), "round %d: no close" % i
        c.close()


# ---- many clients, bad clients ----

def test_200_connections_at_once_are_all_answered(cluster, table):
    conns = [Conn(cluster, timeout=20) for _ in range(200)]
    try:
        for i, c in enumerate(conns):
            c.send(get_item(table, "c%d" % (i % 10)))
        ids = set()
        for i, c in enumerate(conns):
            r = checked(c.read())
            assert r.json() == {"Item": {"pk": {"S": "c%d" % (i % 10)},
                                         "v": {"S": "value-%d" % (i % 10)}}}
            ids.add(r.headers["x-amzn-requestid"])
        assert len(ids) == 200
    finally:
        for c in conns:
            c.close()


def test_clients_that_vanish_do_not_disturb_others(cluster, table):
    # One that stays, with a request answered before and after.
    keeper = Conn(cluster)
    keeper.send(get_item(table, "c0"))
    assert checked(keeper.read()).json()["Item"]["v"] == {"S": "value-0"}
    req = put_item(table, "vanish", "v")
    for i in range(20):
        # Half a request, then a close.
        c = Conn(cluster)
        c.send(req[:len(req) // 2] if i % 2 else req[:10])
        c.close()
        # A whole request, closed before its answer is read.
        c = Conn(cluster)
        c.send(get_item(table, "c1") + req)
        c.close()
        # The same, with a reset instead of a close.
        c = Conn(cluster)
        c.s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                       struct.pack("ii", 1, 0))
        c.send(request("ListTables", {}) + get_item(table, "c1"))
        c.close()
    time.sleep(0.2)
    keeper.send(get_item(table, "c0"))
    assert checked(keeper.read()).json()["Item"]["v"] == {"S": "value-0"}
    c = Conn(cluster)
    c.send(get_item(table, "c9"))
    assert checked(c.read()).json()["Item"]["v"] == {"S": "value-9"}
    c.close()
    keeper.close()
    if cluster.router is not None:
        assert cluster.router.alive(), "the router exited"


def test_head_over_64_kb_is_refused_with_431_and_closed(cluster):
    c = Conn(cluster)
    c.send(b"POST / HTTP/1.1\r\nHost: kv\r\nX-Pad: " + b"a" * (70 * 1024) +
           b"\r\n\r\n")
    r = c.read()
    assert r.status == 431, r
    assert r.headers.get("connection") == "close", r
    assert c.closed_by_server(), "the router kept the connection"
    c.close()


def test_unterminated_head_over_64_kb_is_refused_with_431(cluster):
    c = Conn(cluster)
    c.send(b"GET / HTTP/1.1\r\nX-Pad: " + b"a" * (65 * 1024))
    r = c.read()
    assert r.status == 431, r
    assert c.closed_by_server()
    c.close()


@pytest.mark.parametrize("head, status", [
    (b"GET / HTTP/2.0\r\n\r\n", 505),
    (b"hello\r\n\r\n", 400),
    (b"POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
     400),
    (b"POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", 400),
    (b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400),
], ids=["http-2.0", "garbage", "two-lengths", "gzip", "bad-chunk"])
def test_malformed_requests_are_refused_and_closed(cluster, head, status):
    c = Conn(cluster)
    c.send(head)
    r = c.read()
    assert r.status == status, r
    assert r.headers.get("connection") == "close", r
    assert c.closed_by_server()
    c.close()


# ---- routes ----

def test_get_routes_health_metrics_and_not_found(cluster):
    host, port = address(cluster)
    h = http.client.HTTPConnection(host, port, timeout=10)
    h.request("GET", "/")
    r = h.getresponse()
    body = r.read()
    assert (r.status, body[:8]) == (200, b"healthy:"), body
    assert int(r.getheader("x-amz-crc32")) == zlib.crc32(body)
    h.request("GET", "/metrics")
    r = h.getresponse()
    body = r.read().decode()
    assert r.status == 200, body[:300]
    assert r.getheader("Content-Type").startswith("text/plain"), \
        r.getheaders()
    assert "\nkv_" in body or body.startswith("kv_"), body[:300]
    # Prometheus text: every line a comment or "name{labels} value".
    for line in body.splitlines():
        assert line == "" or line.startswith("#") or \
            float(line.rsplit(" ", 1)[1]) is not None, line
    h.request("GET", "/nope")
    r = h.getresponse()
    assert (r.status, r.read()) == (404, b"not found\n")
    h.close()


def test_head_is_a_get_without_its_body(cluster):
    c = Conn(cluster)
    c.send(b"HEAD / HTTP/1.1\r\nHost: kv\r\n\r\n"
           b"GET /?probe=1 HTTP/1.1\r\nHost: kv\r\n\r\n")
    status, headers, _ = c.read_head()
    # The head says what a GET would carry; no body follows it.
    assert status == 200 and int(headers["content-length"]) > 8, headers
    r = checked(c.read(), 200, "text/plain")
    assert r.body.startswith(b"healthy:"), r  # the query is not the path
    assert int(headers["content-length"]) == len(r.body)
    c.close()


def answered_get_items(cluster):
    """GetItem answers the router has made, from its /metrics."""
    host, port = address(cluster)
    h = http.client.HTTPConnection(host, port, timeout=10)
    h.request("GET", "/metrics")
    body = h.getresponse().read().decode()
    h.close()
    for line in body.splitlines():
        if line.startswith('kv_router_requests_total{op="GetItem"}'):
            return int(line.rsplit(" ", 1)[1])
    raise AssertionError("no GetItem counter in /metrics")


def test_unread_answers_hold_back_pipelined_requests(cluster, table):
    """A client that pipelines requests for big answers and reads none
    makes the router stop taking its requests once about 1 MB of answers
    waits, instead of answering (and holding) all of them: 60 answers of
    300 KB are 18 MB."""
    ddb = cluster.client()
    big = "x" * 300000
    ddb.put_item(TableName=table, Item={"pk": {"S": "big"},
                                        "v": {"S": big}})
    before = answered_get_items(cluster)
    c = Conn(cluster, timeout=30)
    c.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
    c.send(get_item(table, "big") * 60)
    time.sleep(1.0)
    taken = answered_get_items(cluster) - before
    # 1 MB queued, plus what the kernel's socket buffers took.
    assert 1 <= taken <= 30, "%d of 60 answered while none was read" % taken
    # Reading lets the waiting requests go on, to the last: every write
    # that brings the answers waiting back under the limit (EPOLLOUT's
    # or the ring's) must let them go on.
    for _ in range(60):
        r = checked(c.read())
        assert len(r.json()["Item"]["v"]["S"]) == len(big)
    c.close()
    # The router goes on serving others.
    c = Conn(cluster)
    c.send(get_item(table, "c2"))
    assert checked(c.read()).json()["Item"]["v"] == {"S": "value-2"}
    c.close()


@pytest.mark.parametrize("method", ["PUT", "DELETE", "PATCH"])
def test_unknown_method_is_an_unknown_operation(cluster, table, method):
    c = Conn(cluster)
    c.send(request("GetItem", {"TableName": table,
                               "Key": {"pk": {"S": "c1"}}}, method=method))
    r = checked(c.read(), 400)
    assert error_type(r) == ("UnknownOperationException",
                             "An unknown operation was requested.")
    # The connection stays usable.
    c.send(get_item(table, "c1"))
    assert checked(c.read()).json()["Item"]["v"] == {"S": "value-1"}
    c.close()


# ---- slow and busy clients ----

def test_slow_client_sending_byte_by_byte_is_answered(cluster, table):
    req = get_item(table, "c2")
    pause = 0.5 / len(req)
    c = Conn(cluster)
    start = time.monotonic()
    for i in range(len(req)):
        c.send(req[i:i + 1])
        time.sleep(pause)
    assert time.monotonic() - start >= 0.5
    assert checked(c.read()).json()["Item"]["v"] == {"S": "value-2"}
    c.close()


def test_32_threads_on_keep_alive_connections_get_right_answers(
        cluster, table):
    host, port = address(cluster)
    errors = []
    counts = [0] * 32

    def call(h, target, body):
        h.request("POST", "/", body=json.dumps(body), headers={
            "Content-Type": JSON_TYPE, "X-Amz-Target": PREFIX + target})
        r = h.getresponse()
        data = r.read()
        if r.status != 200:
            raise AssertionError("%s: %d %r" % (target, r.status, data))
        crc = int(r.getheader("x-amz-crc32"))
        if crc != zlib.crc32(data):
            raise AssertionError("%s: crc32 %d of %r" % (target, crc, data))
        if r.will_close:
            raise AssertionError("%s: the router closes" % target)
        return json.loads(data)

    def run(t):
        try:
            h = http.client.HTTPConnection(host, port, timeout=20)
            for i in range(200):
                pk = "t%d-%d" % (t, (i // 2) % 10)
                if i % 2 == 0:
                    got = call(h, "PutItem", {"TableName": table, "Item": {
                        "pk": {"S": pk}, "v": {"S": "%d-%d" % (t, i)}}})
                    want = {}
                else:
                    got = call(h, "GetItem", {"TableName": table, "Key": {
                        "pk": {"S": pk}}, "ConsistentRead": True})
                    want = {"Item": {"pk": {"S": pk},
                                     "v": {"S": "%d-%d" % (t, i - 1)}}}
                if got != want:
                    raise AssertionError("thread %d request %d: %r, want %r"
                                         % (t, i, got, want))
                counts[t] += 1
            h.close()
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append("thread %d: %s: %s" % (t, type(e).__name__, e))

    threads = [threading.Thread(target=run, args=(t,)) for t in range(32)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(60)
    assert not errors, "\n".join(errors[:10])
    assert counts == [200] * 32


def io_uring_allowed():
    """Asks the kernel, as the router does: can this process set up an
    io_uring? (A kernel switch or a container's seccomp may refuse.)"""
    libc = ctypes.CDLL(None, use_errno=True)
    params = ctypes.create_string_buffer(120)  # struct io_uring_params
    fd = libc.syscall(425, 8, params)  # io_uring_setup, x86-64 and arm64
    if fd < 0:
        return False
    os.close(fd)
    return True


@pytest.mark.processes
def test_router_writes_through_io_uring_unless_told_or_refused(cluster):
    """The router hands a round's writes to the kernel in one io_uring
    call (router/http/http.c, round_writes) unless started with --no-ring or
    refused io_uring by the kernel; it says which when it starts. This
    file runs both ways (integration/http and integration/http_no_ring)."""
    cluster.require_processes()
    with open(cluster.router.log) as f:
        serving = [line for line in f if "kv-router: serving" in line]
    assert serving, "the router never said it was serving"
    refused = not io_uring_allowed()
    if "--no-ring" in os.environ.get("KV_ROUTER_ARGS", ""):
        want = "(each write alone: --no-ring)"
    elif refused:
        want = "(each write alone: io_uring refused)"
    else:
        want = "(writes through io_uring)"
    assert serving[-1].rstrip().endswith(want), serving[-1]


# ---- CORS (router/http/http.c, put_cors) ----

def test_cors_preflight_is_answered_with_what_it_asked(cluster, table):
    c = Conn(cluster)
    c.send(b"OPTIONS / HTTP/1.1\r\nHost: kv\r\nOrigin: http://page.test\r\n"
           b"Access-Control-Request-Method: POST\r\n"
           b"Access-Control-Request-Headers: content-type,x-amz-target,"
           b"x-amz-date,authorization\r\n\r\n")
    r = c.read()
    assert r.status == 200 and r.body == b""
    assert r.headers["access-control-allow-origin"] == "*"
    assert r.headers["access-control-allow-methods"] == "POST"
    assert r.headers["access-control-allow-headers"] == (
        "content-type,x-amz-target,x-amz-date,authorization")
    assert r.headers["access-control-max-age"] == "172800"
    # The connection goes on; a request with an Origin is allowed too.
    c.send(request("GetItem", {"TableName": table,
                               "Key": {"pk": {"S": "c1"}}},
                   headers=["Origin: http://page.test"]))
    r = checked(c.read())
    assert r.headers["access-control-allow-origin"] == "*"
    assert "access-control-max-age" not in r.headers
    c.close()


def test_no_cors_headers_without_an_origin(cluster, table):
    c = Conn(cluster)
    c.send(get_item(table, "c1"))
    r = checked(c.read())
    assert not [h for h in r.headers if h.startswith("access-control")]
    # OPTIONS without an Origin is no preflight: an unknown operation.
    c.send(b"OPTIONS / HTTP/1.1\r\nHost: kv\r\nContent-Length: 0\r\n\r\n")
    assert error_type(checked(c.read(), 400))[0] == \
        "UnknownOperationException"
    c.close()


def test_cors_echo_never_carries_unsafe_bytes(cluster):
    c = Conn(cluster)
    c.send(b"OPTIONS / HTTP/1.1\r\nHost: kv\r\nOrigin: x\r\n"
           b"Access-Control-Request-Headers: a\nInjected: yes\r\n"
           b"Access-Control-Request-Method: P\x01ST\r\n\r\n")
    r = c.read()
    assert r.status in (200, 400)
    assert "injected" not in r.headers
    assert "access-control-allow-headers" not in r.headers
    assert "access-control-allow-methods" not in r.headers
    c.close()
