"""test_front_door.py — the router's limits on hostile clients
(router/http/http.c): a slow-loris client, one that sends a request a byte
at a time and never finishes it, loses its connection after
--request-seconds (2 here) while others are served; past
--max-connections (40 here) new connections are closed at once, and
served again once others go. Conflicting Content-Length and
Transfer-Encoding get one answer: 400, and the connection closes (no
request smuggling)."""

import socket
import time
import urllib.parse

import pytest

from test_http import Conn, checked, get_item, put_item

CLUSTER_OPTIONS = {"router_args": ["--request-seconds", "2",
                                   "--max-connections", "40"]}


@pytest.fixture(scope="module")
def table(cluster):
    name = cluster.make_table("door")
    c = Conn(cluster)
    c.send(put_item(name, "c1", "value-1"))
    checked(c.read())
    c.close()
    return name


def address(cluster):
    u = urllib.parse.urlparse(cluster.endpoint)
    return u.hostname, u.port


def test_a_trickling_request_loses_its_connection(cluster, table):
    slow = socket.create_connection(address(cluster), timeout=10)
    slow.sendall(b"POST / HTTP/1.1\r\nHost: kv\r\n")
    start = time.monotonic()
    closed = False
    while time.monotonic() - start < 8:
        try:
            slow.sendall(b"X")  # a byte a little under every second
        except OSError:
            closed = True
            break
        # Others are served meanwhile.
        c = Conn(cluster)
        c.send(get_item(table, "c1"))
        assert checked(c.read()).json()["Item"]["v"] == {"S": "value-1"}
        c.close()
        slow.settimeout(0.8)
        try:
            if slow.recv(100) == b"":
                closed = True
                break
        except socket.timeout:
            pass
        except OSError:
            closed = True
            break
    took = time.monotonic() - start
    slow.close()
    assert closed, "the slow request kept its connection"
    assert 2 <= took <= 6, took


def test_connections_past_the_limit_are_closed(cluster, table):
    held = [socket.create_connection(address(cluster), timeout=5)
            for _ in range(40)]
    time.sleep(0.3)
    extra = socket.create_connection(address(cluster), timeout=5)
    extra.settimeout(3)
    try:
        got = extra.recv(100)
    except (ConnectionResetError, socket.timeout):
        got = b""
    assert got == b"", got  # closed without an answer
    extra.close()
    for s in held[:10]:
        s.close()
    time.sleep(0.3)
    c = Conn(cluster)
    c.send(get_item(table, "c1"))
    assert checked(c.read()).json()["Item"]["v"] == {"S": "value-1"}
    c.close()
    for s in held[10:]:
        s.close()


def test_conflicting_framing_is_refused(cluster):
    c = Conn(cluster)
    c.send(b"POST / HTTP/1.1\r\nHost: kv\r\nContent-Length: 4\r\n"
           b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
    r = c.read()
    assert r.status == 400
    assert c.closed_by_server()
