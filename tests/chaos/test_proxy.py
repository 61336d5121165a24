"""Tests of chaos/lab/proxy.py: a Links proxy in front of small threaded TCP
servers on loopback, driven by blocking client sockets."""

import hashlib
import os
import socket
import sys
import threading
import time

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", ".."))

from chaos.lab.proxy import (HOLD_CAP, READ_CHUNK, Links,  # noqa: E402
                             free_ports)

HOST = "127.0.0.1"
QUIET = 0.5         # how long "no answer" is waited for


class Server:
    """Listens on span consecutive ports. kind "echo" sends back what it
    reads and closes after EOF; "greet" first sends b"port=<port>\\n", then
    echoes; "sink" only reads, counting bytes and hashing them."""

    def __init__(self, kind="echo", span=1):
        self.kind = kind
        self.received = 0
        self.digest = hashlib.sha256()
        self.accepted = 0
        self.ended = 0              # connections that saw EOF or an error
        self.lock = threading.Lock()
        self.listeners = []
        self.conns = []
        self.stopping = False
        for _ in range(20):
            base = free_ports(span)
            socks = []
            try:
                for i in range(span):
                    s = socket.socket()
                    socks.append(s)
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                    s.bind((HOST, base + i))
                    s.listen(64)
            except OSError:
                for s in socks:
                    s.close()
                continue
            break
        else:
            raise OSError("no ports")
        self.port = base
        self.listeners = socks
        for s in socks:
            threading.Thread(target=self._accept, args=(s,),
                             daemon=True).start()

    def _accept(self, ls):
        while True:
            try:
                c, _ = ls.accept()
            except OSError:
                return
            if self.stopping:
                c.close()
                return
            c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self.lock:
                self.accepted += 1
                self.conns.append(c)
            threading.Thread(target=self._serve,
                             args=(c, ls.getsockname()[1]),
                             daemon=True).start()

    def _serve(self, c, port):
        try:
            if self.kind == "greet":
                c.sendall(b"port=%d\n" % port)
            while True:
                data = c.recv(65536)
                if not data:
                    break
                with self.lock:
                    self.received += len(data)
                    if self.kind == "sink":
                        self.digest.update(data)
                if self.kind != "sink":
                    c.sendall(data)
        except OSError:
            pass
        finally:
            with self.lock:
                self.ended += 1
            c.close()

    def close(self):
        self.stopping = True
        for s in self.listeners:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()
        with self.lock:
            for c in self.conns:
                try:
                    c.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass


@pytest.fixture
def links():
    ls = Links(HOST)
    ls.start()
    yield ls
    ls.close()


@pytest.fixture
def servers():
    made = []

    def make(kind="echo", span=1):
        s = Server(kind, span)
        made.append(s)
        return s

    yield make
    for s in made:
        s.close()


def connect(port, timeout=5.0):
    c = socket.create_connection((HOST, port), timeout=timeout)
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return c


def recv_exact(c, n, timeout=5.0):
    c.settimeout(timeout)
    buf = bytearray()
    while len(buf) < n:
        data = c.recv(n - len(buf))
        if not data:
            raise EOFError("EOF after %d of %d bytes" % (len(buf), n))
        buf += data
    return bytes(buf)


def recv_line(c, timeout=5.0):
    c.settimeout(timeout)
    buf = bytearray()
    while not buf.endswith(b"\n"):
        data = c.recv(1)
        if not data:
            raise EOFError("EOF in a line")
        buf += data
    return bytes(buf)


def silent(c, wait=QUIET):
    """Whether nothing arrives on c within wait seconds."""
    c.settimeout(wait)
    try:
        c.recv(1)
    except socket.timeout:
        return True
    return False


def closed_by_peer(c, timeout=5.0):
    """Whether c sees EOF or a reset within timeout (data is skipped)."""
    c.settimeout(timeout)
    try:
        while True:
            if not c.recv(65536):
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        return False


def roundtrip(c, msg):
    c.sendall(msg)
    return recv_exact(c, len(msg))


def wait_for(fn, timeout=5.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if fn():
            return True
        time.sleep(0.01)
    return fn()


def test_free_ports():
    base = free_ports(4)
    for p in range(base, base + 4):
        with socket.socket() as s:
            s.bind((HOST, p))


def test_ok_both_ways_and_span(links, servers):
    srv = servers("greet", span=4)
    base = links.add("router0", "node1", srv.port, span=4)
    assert links.port("router0", "node1") == base
    conns = []
    for i in range(4):
        c = connect(base + i)
        conns.append(c)
        assert recv_line(c) == b"port=%d\n" % (srv.port + i)
        assert roundtrip(c, b"hello %d" % i) == b"hello %d" % i
    st = links.state()["router0->node1"]
    assert st["mode"] == "ok"
    assert st["connections"] == 4
    assert st["bytes_out"] == sum(len(b"hello %d" % i) for i in range(4))
    assert st["bytes_back"] == st["bytes_out"] + \
        sum(len(b"port=%d\n" % (srv.port + i)) for i in range(4))
    assert st["held_bytes"] == 0
    for c in conns:
        c.close()
    assert wait_for(lambda: links.state()["router0->node1"]
                    ["connections"] == 0)


def test_half_close(links, servers):
    srv = servers("echo")
    port = links.add("a", "b", srv.port)
    c = connect(port)
    c.sendall(b"request")
    c.shutdown(socket.SHUT_WR)
    assert recv_exact(c, 7) == b"request"
    assert closed_by_peer(c)
    c.close()


def test_connect_failure_closes_client(links):
    dead = free_ports(1)
    port = links.add("a", "b", dead)
    c = connect(port)
    assert closed_by_peer(c, timeout=2.0)
    c.close()
    assert wait_for(lambda: links.state()["a->b"]["connections"] == 0)


def test_delay(links, servers):
    srv = servers("echo")
    port = links.add("a", "b", srv.port)
    c = connect(port)
    assert roundtrip(c, b"x") == b"x"
    delay = 100
    links.set("a", "b", "delay", delay_ms=delay)
    st = links.state()["a->b"]
    assert (st["mode"], st["delay_ms"]) == ("delay", delay)
    for _ in range(3):
        t0 = time.monotonic()
        assert roundtrip(c, b"ping") == b"ping"
        rt = (time.monotonic() - t0) * 1000.0
        assert delay <= rt <= 2 * delay + 100, rt
    # Many small messages sent one by one keep their order.
    links.set("a", "b", "delay", delay_ms=20)
    msgs = [b"<%04d>" % i for i in range(500)]
    for m in msgs:
        c.sendall(m)
    want = b"".join(msgs)
    assert recv_exact(c, len(want)) == want
    links.heal("a", "b")
    t0 = time.monotonic()
    assert roundtrip(c, b"fast") == b"fast"
    assert time.monotonic() - t0 < 0.1
    c.close()


def test_drop_and_heal(links, servers):
    srv = servers("echo")
    port = links.add("router0", "node1", srv.port)
    c = connect(port)
    assert roundtrip(c, b"before") == b"before"
    links.set("router0", "node1", "drop")
    c.sendall(b"held request")
    # A connection opened during the partition is accepted but goes nowhere.
    c2 = connect(port)
    c2.sendall(b"second")
    assert silent(c)
    assert silent(c2, 0.05)
    assert srv.received == len(b"before")
    assert srv.accepted == 1
    st = links.state()["router0->node1"]
    assert st["mode"] == "drop"
    assert st["held_bytes"] == len(b"held request") + len(b"second")
    assert st["connections"] == 2
    links.heal()
    assert recv_exact(c, 12) == b"held request"
    assert recv_exact(c2, 6) == b"second"
    assert roundtrip(c, b"after") == b"after"
    st = links.state()["router0->node1"]
    assert st["mode"] == "ok" and st["held_bytes"] == 0
    c.close()
    c2.close()


def test_drop_holds_both_ways(links, servers):
    srv = servers("greet")
    port = links.add("a", "b", srv.port)
    links.set("a", "b", "drop")
    c = connect(port)
    assert silent(c)            # not even the greeting
    links.heal("a", "b")
    assert recv_line(c).startswith(b"port=")
    c.close()


def test_drop_backpressure(links, servers):
    """Past the hold cap the proxy stops reading, so the sender blocks;
    on heal every byte arrives, in order."""
    srv = servers("sink")
    port = links.add("a", "b", srv.port)
    c = connect(port)
    links.set("a", "b", "drop")
    total = 8 * HOLD_CAP        # more than the kernel buffers take
    payload = os.urandom(total)
    sent = [0]

    def send():
        try:
            view = memoryview(payload)
            while sent[0] < total:
                n = c.send(view[sent[0]:sent[0] + 65536])
                sent[0] += n
        except OSError:
            pass

    c.settimeout(30)
    t = threading.Thread(target=send, daemon=True)
    t.start()
    time.sleep(1.0)
    held = links.state()["a->b"]["held_bytes"]
    stalled = sent[0]
    time.sleep(0.3)
    assert srv.received == 0
    assert HOLD_CAP < held <= HOLD_CAP + READ_CHUNK, held
    assert links.state()["a->b"]["held_bytes"] == held
    assert sent[0] == stalled < total   # the sender is blocked by TCP
    links.heal()
    t.join(20)
    assert sent[0] == total
    assert wait_for(lambda: srv.received == total, 20)
    assert srv.digest.digest() == hashlib.sha256(payload).digest()
    c.close()


def test_close_during_drop_closes_other_end(links, servers):
    srv = servers("sink")
    port = links.add("a", "b", srv.port)
    c = connect(port)
    c.sendall(b"x")
    assert wait_for(lambda: srv.received == 1)
    links.set("a", "b", "drop")
    c.sendall(b"never delivered")
    c.close()
    time.sleep(0.2)
    assert srv.ended == 0        # the server cannot know yet
    links.heal()
    assert wait_for(lambda: srv.ended == 1)
    assert srv.received == 1
    assert wait_for(lambda: links.state()["a->b"]["connections"] == 0)


def test_drop_out(links, servers):
    srv = servers("greet")
    port = links.add("a", "b", srv.port)
    links.set("a", "b", "drop-out")
    c = connect(port)
    # The server speaks first and is heard.
    assert recv_line(c).startswith(b"port=")
    c.sendall(b"request")
    assert silent(c)
    assert srv.received == 0
    links.heal("a", "b")
    assert recv_exact(c, 7) == b"request"
    c.close()


def test_drop_back(links, servers):
    srv = servers("echo")
    port = links.add("a", "b", srv.port)
    c = connect(port)
    assert roundtrip(c, b"1") == b"1"
    links.set("a", "b", "drop-back")
    c.sendall(b"request")
    assert wait_for(lambda: srv.received == 1 + 7)   # the request got there
    assert silent(c)                                 # the answer did not
    assert links.state()["a->b"]["held_bytes"] == 7
    links.heal()
    assert recv_exact(c, 7) == b"request"
    c.close()


def test_partition(links, servers):
    srv_b = servers("echo")
    srv_a = servers("echo")
    srv_c = servers("echo")
    p_ab = links.add("a", "b", srv_b.port)
    p_ba = links.add("b", "a", srv_a.port)
    p_ac = links.add("a", "c", srv_c.port)
    p_cb = links.add("c", "b", srv_b.port)
    links.partition(["a", "c"], "b")
    st = links.state()
    assert st["a->b"]["mode"] == "drop"
    assert st["b->a"]["mode"] == "drop"
    assert st["c->b"]["mode"] == "drop"
    assert st["a->c"]["mode"] == "ok"
    ab, ba, ac, cb = (connect(p) for p in (p_ab, p_ba, p_ac, p_cb))
    assert roundtrip(ac, b"inside") == b"inside"
    for c in (ab, ba, cb):
        c.sendall(b"across")
    assert silent(ab)
    assert silent(ba, 0.05)
    assert silent(cb, 0.05)
    links.heal()
    for c in (ab, ba, cb):
        assert recv_exact(c, 6) == b"across"
    assert all(s["mode"] == "ok" for s in links.state().values())
    for c in (ab, ba, ac, cb):
        c.close()


def test_heal_one_link(links, servers):
    srv = servers("echo")
    p1 = links.add("a", "b", srv.port)
    p2 = links.add("c", "b", srv.port)
    links.partition("a", "b")
    links.set("c", "b", "drop")
    links.heal("a", "b")
    st = links.state()
    assert st["a->b"]["mode"] == "ok" and st["c->b"]["mode"] == "drop"
    c1, c2 = connect(p1), connect(p2)
    assert roundtrip(c1, b"x") == b"x"
    c2.sendall(b"y")
    assert silent(c2, 0.2)
    links.heal(dst="b")
    assert recv_exact(c2, 1) == b"y"
    c1.close()
    c2.close()


def test_reset(links, servers):
    srv = servers("echo")
    port = links.add("a", "b", srv.port)
    conns = [connect(port) for _ in range(3)]
    for c in conns:
        assert roundtrip(c, b"x") == b"x"
    assert links.state()["a->b"]["connections"] == 3
    links.set("a", "b", "reset")
    for c in conns:
        assert closed_by_peer(c, timeout=2.0)
        c.close()
    st = links.state()["a->b"]
    assert st["mode"] == "ok" and st["connections"] == 0
    assert wait_for(lambda: srv.ended == 3)      # the server side too
    c = connect(port)
    assert roundtrip(c, b"again") == b"again"
    c.close()


def test_large_transfer(links, servers):
    srv = servers("echo")
    port = links.add("a", "b", srv.port)
    c = connect(port, timeout=30)
    size = 20 << 20
    payload = os.urandom(size)
    got = hashlib.sha256()
    n = [0]

    def reader():
        c.settimeout(30)
        while n[0] < size:
            data = c.recv(1 << 20)
            if not data:
                break
            got.update(data)
            n[0] += len(data)

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    c.sendall(payload)
    t.join(30)
    assert n[0] == size
    assert got.digest() == hashlib.sha256(payload).digest()
    st = links.state()["a->b"]
    assert st["bytes_out"] == size and st["bytes_back"] == size
    c.close()


def test_small_round_trips(links, servers):
    """Sequential 100-byte round trips; a sanity floor, not a benchmark
    (the servers and clients share the proxy's interpreter here)."""
    srv = servers("echo")
    port = links.add("a", "b", srv.port)
    c = connect(port)
    msg = b"r" * 100
    n = 0
    t0 = time.monotonic()
    while time.monotonic() - t0 < 0.5:
        assert roundtrip(c, msg) == msg
        n += 1
    rate = n / (time.monotonic() - t0)
    print("sequential 100-byte round trips: %.0f/s" % rate)
    assert rate > 300
    c.close()


def test_close_drops_connections(servers):
    srv = servers("echo")
    ls = Links(HOST)
    port = ls.add("a", "b", srv.port)      # add() starts the loop
    c = connect(port)
    assert roundtrip(c, b"x") == b"x"
    ls.close()
    assert closed_by_peer(c, timeout=2.0)
    c.close()
    with pytest.raises(OSError):
        connect(port, timeout=1.0).close()


def test_bad_arguments(links, servers):
    srv = servers("echo")
    links.add("a", "b", srv.port)
    with pytest.raises(ValueError):
        links.set("a", "b", "lossy")
    with pytest.raises(KeyError):
        links.set("a", "zz", "drop")
    with pytest.raises(ValueError):
        links.add("a", "b", srv.port)
