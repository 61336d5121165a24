"""A fault-injecting TCP proxy for the links between the processes of a
local cluster.

A link is one direction of a pair of processes, (src, dst): src is the
process that opens TCP connections and dst the one that accepts them, for
example ("router0", "node1") or ("node2", "node0"). Each link gets its own
proxy, listening on a block of `span` consecutive loopback ports; port
base+i is forwarded to port target+i of dst (a node uses span 4: its
request port and its three nng ports). src is configured to connect to the
proxy instead of to dst, so every connection a link's proxy accepts
carries bytes from src to dst (the "out" direction, client to server) and
bytes from dst to src (the "back" direction).

Every link is in one mode at a time; a mode applies to the link's
connections that are open when it is set and to those opened later:

  ok         Bytes are forwarded both ways as soon as they are read.
  delay      Every chunk read, in either direction, is delivered delay_ms
             after it was read. Each direction is a queue: chunks keep their
             order, and a chunk never overtakes the one read before it.
  drop       A network partition. Nothing is delivered either way, but
             nothing is thrown away either: the bytes read are held, in
             order, for the moment the link heals. Throwing bytes away would
             cut frames out of the middle of a stream, which no network does
             to TCP; a partition only stops the bytes, and TCP sends them
             again once packets get through. When a connection holds more
             than HOLD_CAP bytes in one direction the proxy stops reading
             from the side that sends them, so its kernel buffers fill and
             TCP flow control stops the sender, as it would in a partition.
             New connections are accepted, but their connection to dst is
             only opened when the link leaves "drop" (the SYN would not get
             through either).
  drop-out   Only the out direction (src to dst) is held; dst to src flows.
  drop-back  Only the back direction (dst to src) is held; src to dst flows.
  reset      A one-shot fault: every open connection of the link is closed
             at once on both sides with a TCP reset, and the link is then in
             mode "ok" (state() reports "ok").

Healing (heal(), or setting a mode that holds less) delivers the bytes held
so far, in order, as the retransmissions after a real partition would. If
an end closed its connection (or the connection failed) while bytes in its
direction were held, the end that never learned of it is closed instead
when the hold ends, and the held bytes are dropped with the connection.

When one end of a connection closes its sending side, the bytes read from
it before that are still delivered (subject to the mode), then the proxy
shuts down the sending side toward the other end; the connection is closed
once both directions have ended. If an end fails (a reset, or a write that
fails), nothing more is written to it, what was read from it is delivered
to the other end as above, and the other end is then closed. A connection
whose dst cannot be reached is closed.
Both sockets of every connection use TCP_NODELAY.

Reads are at most READ_CHUNK bytes. state() counts, per link, the bytes
delivered each way and the bytes read but not yet delivered (held by a
drop mode, waiting out a delay, or waiting for a slow reader).

Every link is served by one asyncio event loop in one background thread.
The methods of Links may be called from any other thread; each returns
once it has taken effect on the loop, so a set() that returns is in force
for the next byte read.
"""

import asyncio
import collections
import os
import socket
import struct
import sys
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__)))), "tests", "integration"))

# Ports are handed out as the test clusters' are, under the same record of
# ports recently given, so a proxy never takes a port a cluster starting
# beside it was just given (cluster.py).
from cluster import free_port  # noqa: E402


def free_ports(span=1, host="127.0.0.1"):
    """The first of span consecutive free ports of host."""
    return free_port(host, span=span)

__all__ = ["Links", "free_ports", "MODES"]

MODES = ("ok", "delay", "drop", "drop-out", "drop-back", "reset")
HOLD_CAP = 4 << 20          # bytes held per direction before reading stops
READ_CHUNK = 64 << 10       # largest chunk read at once

# Which directions each mode holds.
_HOLDS = {
    "ok": (),
    "delay": (),
    "drop": ("out", "back"),
    "drop-out": ("out",),
    "drop-back": ("back",),
}


def _nodelay(transport):
    sock = transport.get_extra_info("socket")
    if sock is not None:
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            pass


def _reset(transport):
    """Closes transport with a TCP RST (SO_LINGER 0) rather than a FIN."""
    if transport is None:
        return
    sock = transport.get_extra_info("socket")
    if sock is not None and not transport.is_closing():
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                            struct.pack("ii", 1, 0))
        except OSError:
            pass
    transport.abort()


class _Link:
    """One (src, dst) link: its listeners, mode, connections, counters."""

    def __init__(self, src, dst, target_port, span):
        self.src = src
        self.dst = dst
        self.target_port = target_port
        self.span = span
        self.base = None
        self.servers = []
        self.mode = "ok"
        self.delay = 0.0            # seconds
        self.delay_ms = 0
        self.conns = set()
        self.accepted = 0
        self.bytes_out = 0
        self.bytes_back = 0

    def holds(self, direction):
        return direction in _HOLDS[self.mode]

    def name(self):
        return "%s->%s" % (self.src, self.dst)


class _Pipe:
    """One direction of a connection: the chunks read from `src` and not yet
    written to `dst`, each with the loop time at which it was read. A chunk
    of None stands for the end of the stream (EOF or a failed read)."""

    __slots__ = ("conn", "direction", "queue", "queued", "src", "dst",
                 "dst_paused", "src_paused", "src_done", "done", "held",
                 "timer")

    def __init__(self, conn, direction):
        self.conn = conn
        self.direction = direction
        self.queue = collections.deque()
        self.queued = 0             # data bytes in queue
        self.src = None             # transport read from
        self.dst = None             # transport written to
        self.dst_paused = False     # dst's write buffer is over its limit
        self.src_paused = False     # we stopped reading src (queue full)
        self.src_done = False       # the end of src's stream is queued
        self.done = False           # the end of the stream was delivered
        self.held = False           # the mode held this pipe's data
        self.timer = None

    def feed(self, data):
        conn = self.conn
        link = conn.link
        if link.mode == "ok" and not self.queue and not self.held \
                and not self.done \
                and self.dst is not None and not self.dst_paused \
                and not conn.closed and not self.dst.is_closing():
            # The common case, nothing queued and nothing to wait for.
            if self.direction == "out":
                link.bytes_out += len(data)
            else:
                link.bytes_back += len(data)
            self.dst.write(data)
            return
        self.queue.append((conn.loop.time(), data))
        self.queued += len(data)
        self.pump()
        if self.queued > HOLD_CAP and not self.src_paused \
                and not self.src_done and self.src is not None:
            self.src_paused = True
            self.src.pause_reading()

    def feed_end(self):
        if self.src_done:
            return
        self.src_done = True
        if self.conn.link.holds(self.direction):
            # This end closed during a hold: once the hold ends, close the
            # connection rather than deliver what was held.
            self.conn.ending = True
        self.queue.append((self.conn.loop.time(), None))
        self.pump()

    def discard(self):
        """dst is gone: nothing more can be written to it."""
        self.queue.clear()
        self.queued = 0
        self.done = True
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    def pump(self):
        """Writes what the link's mode lets through now; arms a timer for a
        delayed chunk; does nothing while dst is missing or write-paused."""
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        conn = self.conn
        if self.done or conn.closed or self.dst is None or self.dst_paused:
            return
        if self.dst.is_closing():       # connection_lost follows
            return
        link = conn.link
        queue = self.queue
        while queue:
            if link.holds(self.direction):
                self.held = True
                return
            if self.held:
                self.held = False
                if conn.ending:
                    conn.close(abort=True)
                    return
            if link.mode == "delay":
                due = queue[0][0] + link.delay
                if due > conn.loop.time():
                    self.timer = conn.loop.call_at(due, self.pump)
                    return
            data = queue.popleft()[1]
            if data is None:
                self.done = True
                conn.ended(self)
                return
            self.queued -= len(data)
            if self.direction == "out":
                link.bytes_out += len(data)
            else:
                link.bytes_back += len(data)
            self.dst.write(data)
            if self.dst_paused or conn.closed:
                break
        if self.src_paused and self.queued <= HOLD_CAP // 2:
            self.src_paused = False
            if not self.src_done and not conn.closed:
                self.src.resume_reading()


class _Conn:
    """One accepted connection and its connection to dst."""

    def __init__(self, links, link, index):
        self.links = links
        self.loop = links._loop
        self.link = link
        self.index = index
        self.client = None          # transport to src
        self.upstream = None        # transport to dst
        self.connecting = None      # task opening upstream
        self.closed = False
        self.ending = False         # an end closed while its bytes were held
        self.out = _Pipe(self, "out")
        self.back = _Pipe(self, "back")

    # -- setup

    def accepted(self, transport):
        self.client = transport
        _nodelay(transport)
        self.out.src = transport
        self.back.dst = transport
        self.link.conns.add(self)
        self.link.accepted += 1
        self.maybe_connect()

    def maybe_connect(self):
        if self.closed or self.upstream is not None or \
                self.connecting is not None or self.link.mode == "drop":
            return
        if self.ending:
            self.close(abort=True)
            return
        self.connecting = self.loop.create_task(self._connect())

    async def _connect(self):
        port = self.link.target_port + self.index
        try:
            transport, _ = await self.loop.create_connection(
                lambda: _UpstreamSide(self), self.links.host, port)
        except Exception:       # refused, unreachable, ... (not cancelled)
            self.close(abort=True)
            return
        finally:
            self.connecting = None
        if self.closed:
            transport.abort()
            return
        self.upstream = transport
        _nodelay(transport)
        self.out.dst = transport
        self.back.src = transport
        self.out.pump()

    # -- events

    def lost(self, side, exc):
        """side's transport is closed (by us, or after an error)."""
        if self.closed:
            return
        if side == "client":
            self.back.discard()
            self.out.feed_end()
        else:
            self.out.discard()
            self.back.feed_end()
        self.check_done()

    def ended(self, pipe):
        """pipe delivered the end of its stream: shut down writing to its
        dst, and close the connection if the other direction ended too."""
        dst = pipe.dst
        if dst is not None and not dst.is_closing():
            if dst.can_write_eof():
                try:
                    dst.write_eof()
                except OSError:
                    self.close(abort=True)
                    return
        self.check_done()

    def check_done(self):
        if self.out.done and self.back.done:
            self.close()

    def close(self, abort=False, reset=False):
        if self.closed:
            return
        self.closed = True
        self.link.conns.discard(self)
        for pipe in (self.out, self.back):
            pipe.discard()
        if self.connecting is not None:
            self.connecting.cancel()
            self.connecting = None
        for t in (self.client, self.upstream):
            if t is None:
                continue
            if reset:
                _reset(t)
            elif abort:
                t.abort()
            else:
                t.close()


class _Side(asyncio.BufferedProtocol):
    """Common protocol code: `reads` is the pipe fed by this side, `writes`
    the pipe that writes to it. Reads go into a READ_CHUNK buffer, so no
    chunk is larger than that."""

    def __init__(self, conn):
        self.conn = conn
        self.view = memoryview(bytearray(READ_CHUNK))

    def get_buffer(self, sizehint):
        return self.view

    def buffer_updated(self, nbytes):
        self.reads.feed(self.view[:nbytes].tobytes())

    def eof_received(self):
        self.reads.feed_end()
        self.conn.check_done()
        return True                 # keep the transport open for writing

    def pause_writing(self):
        self.writes.dst_paused = True

    def resume_writing(self):
        self.writes.dst_paused = False
        self.writes.pump()


class _ClientSide(_Side):
    def __init__(self, links, link, index):
        super().__init__(_Conn(links, link, index))
        self.reads = self.conn.out
        self.writes = self.conn.back

    def connection_made(self, transport):
        self.conn.accepted(transport)

    def connection_lost(self, exc):
        self.conn.lost("client", exc)


class _UpstreamSide(_Side):
    def __init__(self, conn):
        super().__init__(conn)
        self.reads = conn.back
        self.writes = conn.out

    def connection_lost(self, exc):
        self.conn.lost("upstream", exc)


class Links:
    """The proxies of every link, on one event loop in a background thread.

    add(src, dst, target_port, span) returns the first port of the block
    that src must connect to instead of target_port. Links are named
    "src->dst" in state()."""

    def __init__(self, host="127.0.0.1"):
        self.host = host
        self._links = {}            # (src, dst) -> _Link
        self._loop = None
        self._thread = None
        self._lock = threading.Lock()

    # -- lifetime

    def start(self):
        with self._lock:
            if self._thread is not None:
                return
            loop = asyncio.new_event_loop()
            ready = threading.Event()

            def run():
                asyncio.set_event_loop(loop)
                loop.call_soon(ready.set)
                loop.run_forever()

            self._loop = loop
            self._thread = threading.Thread(target=run, name="chaos-links",
                                            daemon=True)
            self._thread.start()
            ready.wait()

    def close(self):
        """Stops every listener, closes every connection, ends the loop."""
        with self._lock:
            thread, loop = self._thread, self._loop
            if thread is None:
                return
            try:
                self._run(self._close_all)
            finally:
                loop.call_soon_threadsafe(loop.stop)
                thread.join()
                loop.close()
                self._links = {}
                self._thread = None
                self._loop = None

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.close()

    # -- API

    def add(self, src, dst, target_port, span=1):
        """Listens on a fresh block of span free ports for link (src, dst);
        port base+i is forwarded to target_port+i of the host. Returns
        base."""
        self.start()
        if (src, dst) in self._links:
            raise ValueError("link %s->%s exists" % (src, dst))
        link = _Link(src, dst, int(target_port), int(span))
        return self._run(self._listen, link)

    def set(self, src, dst, mode, delay_ms=0):
        """Puts link (src, dst) in mode (see MODES); delay_ms is used by
        mode "delay". Applies to open and new connections."""
        if mode not in MODES:
            raise ValueError("unknown mode %r" % (mode,))
        if mode == "delay" and delay_ms < 0:
            raise ValueError("delay_ms must be >= 0")
        link = self._link(src, dst)
        self._run(self._set, [link], mode, delay_ms)

    def partition(self, group_a, group_b):
        """Mode "drop" on every link, either way, between a process of
        group_a and one of group_b (a group is a name or an iterable of
        names). Links within a group are not changed."""
        a, b = _group(group_a), _group(group_b)
        links = [link for (s, d), link in list(self._links.items())
                 if (s in a and d in b) or (s in b and d in a)]
        self._run(self._set, links, "drop", 0)

    def heal(self, src=None, dst=None):
        """Mode "ok" for link (src, dst); with only one of them, every link
        from src (or every link to dst); with neither, every link. Held
        bytes are delivered in order."""
        links = [link for (s, d), link in list(self._links.items())
                 if (src is None or s == src) and (dst is None or d == dst)]
        if src is not None and dst is not None and not links:
            raise KeyError("no link %s->%s" % (src, dst))
        self._run(self._set, links, "ok", 0)

    def state(self):
        """{"src->dst": {"mode", "delay_ms", "connections", "accepted",
        "bytes_out", "bytes_back", "held_bytes", "port", "target_port",
        "span"}}. bytes_* count bytes delivered; held_bytes counts bytes
        read and not yet delivered (held by a drop mode, waiting out a
        delay, or waiting for a slow reader)."""
        if self._loop is None:
            return {link.name(): _link_state(link)
                    for link in self._links.values()}
        return self._run(self._state)

    def port(self, src, dst):
        """The first port of link (src, dst)'s block."""
        return self._link(src, dst).base

    # -- loop side

    def _link(self, src, dst):
        try:
            return self._links[(src, dst)]
        except KeyError:
            raise KeyError("no link %s->%s" % (src, dst)) from None

    def _run(self, fn, *args):
        """Runs fn(*args) on the loop (a coroutine function is awaited) and
        returns its result."""
        loop = self._loop
        if loop is None:
            raise RuntimeError("Links not started")
        if threading.current_thread() is self._thread:
            raise RuntimeError("Links methods block; call them from "
                               "another thread than the proxy's loop")

        async def call():
            r = fn(*args)
            if asyncio.iscoroutine(r):
                r = await r
            return r

        return asyncio.run_coroutine_threadsafe(call(), loop).result()

    async def _listen(self, link):
        last = None
        for _ in range(50):
            base = free_ports(link.span, self.host)
            servers = []
            try:
                for i in range(link.span):
                    servers.append(await self._loop.create_server(
                        lambda i=i: _ClientSide(self, link, i),
                        self.host, base + i, reuse_address=True))
            except OSError as e:
                last = e
                for s in servers:
                    s.close()
                continue
            link.base = base
            link.servers = servers
            self._links[(link.src, link.dst)] = link
            return base
        raise OSError("could not listen for %s: %s" % (link.name(), last))

    def _set(self, links, mode, delay_ms):
        for link in links:
            if mode == "reset":
                for conn in list(link.conns):
                    conn.close(reset=True)
                mode_now = "ok"
            else:
                mode_now = mode
            link.mode = mode_now
            link.delay_ms = delay_ms if mode_now == "delay" else 0
            link.delay = link.delay_ms / 1000.0
            for conn in list(link.conns):
                conn.maybe_connect()
                conn.out.pump()
                conn.back.pump()

    def _state(self):
        return {link.name(): _link_state(link)
                for link in self._links.values()}

    async def _close_all(self):
        for link in self._links.values():
            for s in link.servers:
                s.close()
            for conn in list(link.conns):
                conn.close(abort=True)
        for link in self._links.values():
            for s in link.servers:
                await s.wait_closed()
            link.servers = []
        await asyncio.sleep(0)


def _link_state(link):
    return {
        "mode": link.mode,
        "delay_ms": link.delay_ms,
        "connections": len(link.conns),
        "accepted": link.accepted,
        "bytes_out": link.bytes_out,
        "bytes_back": link.bytes_back,
        "held_bytes": sum(c.out.queued + c.back.queued for c in link.conns),
        "port": link.base,
        "target_port": link.target_port,
        "span": link.span,
    }


def _group(g):
    if isinstance(g, str):
        return {g}
    return set(g)
