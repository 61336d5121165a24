"""cluster.py — start a real kv cluster for integration tests.

A Cluster lives in a fresh temporary folder: it writes a cluster file there
(three nodes on ipc:// sockets in the folder, one router on a free loopback
port), starts the real binaries from $KV_BUILD (default <repo>/build) with
their output in log files next to it, and waits until the router answers
GET / and every node answers kv-admin status.

KV_ENDPOINT=http://host:port points the tests at a cluster that is already
running instead (memcached's T_MEMD_USE_DAEMON). Nothing is started then;
tests that need to kill, start or restart processes carry the `processes`
mark and fail with an explicit reason unless left out with
-m 'not processes'; kv-admin works when KV_CONFIG names that cluster's
file.

Run as a program it serves a cluster until SIGTERM, for shell tests:

    python3 cluster.py --serve STATEFILE

writes "ENDPOINT CONFIG DIR" to STATEFILE once the cluster answers.
"""

import ctypes
import fcntl
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))

EXTERNAL_REFUSED = ("KV_ENDPOINT points at an external cluster: this test "
                    "kills or restarts cluster processes or reads its "
                    "cluster file, which only a cluster started by the "
                    "test fixture allows; leave such tests out with "
                    "-m 'not processes'")

_PR_SET_PDEATHSIG = 1


def _die_with_parent():
    """Child-side: get SIGKILL when the test process dies (even by SIGKILL
    from a ctest timeout), so no node outlives its test run."""
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except OSError:
        pass


# Ports handed out lately, shared by every test process of this machine
# (ctest runs suites side by side), so that two never get the same one
# while nothing listens on it yet.
PORTS_FILE = os.path.join(tempfile.gettempdir(),
                          "kv-it-ports-%d" % os.getuid())
PORTS_KEPT_SECONDS = 600
EPHEMERAL_RANGE = "/proc/sys/net/ipv4/ip_local_port_range"


def _listen_pool(span):
    """The ports free_port draws from: those the kernel never gives to an
    outgoing connection (below, else above, its ephemeral range). A port
    drawn from the ephemeral range, as binding to port 0 gives, could be
    taken by any client's connection between the draw and the cluster's
    listen, and the node or router would exit for want of its address."""
    try:
        with open(EPHEMERAL_RANGE) as f:
            lo, hi = (int(x) for x in f.read().split())
    except (OSError, ValueError):
        lo, hi = 32768, 60999
    if lo - 10000 >= 4096:
        return 10000, lo - span
    return hi + 1, 65536 - span


def free_port(host="127.0.0.1", span=1):
    """A TCP port P on host (127.0.0.1 or an IPv6 address such as ::1)
    such that P .. P+span-1 could be bound a moment ago, lie outside the
    kernel's range for outgoing connections, and none of them was given
    to a test process here in the last PORTS_KEPT_SECONDS. span 4 suits a
    tcp:// node URL, whose next three ports carry its nng traffic
    (config_bus_url)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    first, last = _listen_pool(span)
    with open(PORTS_FILE + ".lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        now = time.time()
        given = {}
        try:
            with open(PORTS_FILE) as f:
                for line in f:
                    port, at = line.split()
                    if now - float(at) < PORTS_KEPT_SECONDS:
                        given[int(port)] = float(at)
        except (OSError, ValueError):
            given = {}
        for _ in range(1000):
            port = random.randint(first, last)
            if all(p not in given for p in range(port, port + span)) and \
                    _ports_free(family, host, port, span):
                break
        else:
            raise RuntimeError("no free port in %d..%d" % (first, last))
        for p in range(port, port + span):
            given[p] = now
        with open(PORTS_FILE + ".tmp", "w") as f:
            f.writelines("%d %f\n" % kv for kv in given.items())
        os.replace(PORTS_FILE + ".tmp", PORTS_FILE)
        return port


def _ports_free(family, host, first, n):
    """Whether ports first .. first+n-1 of host can be bound now."""
    for port in range(first, first + n):
        if port > 65535:
            return False
        try:
            with socket.socket(family, socket.SOCK_STREAM) as s:
                s.bind((host, port))
        except OSError:
            return False
    return True


def wait_until(fn, timeout=10.0, interval=0.05, what="condition"):
    """Calls fn until it returns a true value (returned) or raises no
    exception; raises AssertionError with the last error after timeout."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        try:
            v = fn()
            if v:
                return v
            last = "returned %r" % (v,)
        except Exception as e:  # noqa: BLE001 - reported below
            last = "%s: %s" % (type(e).__name__, e)
        if time.monotonic() >= deadline:
            raise AssertionError("timed out after %.1fs waiting for %s "
                                 "(last: %s)" % (timeout, what, last))
        time.sleep(interval)


def parse_status(text):
    """Parses `kv-admin status` output into
    {"nodes": [{"index", "url", "up", "data", "catalog", "pid"}],
     "routers": [{"index", "listen", "up", "catalog", "pid",
                  "connections", "requests"}],
     "catalog_version": int or None,
     "tables": {name: {"id", "status", "billing", "hash", "range",
                       "parts": [{"part", "lo", "last", "node", "epoch",
                                  "owner_epoch", "items", "bytes"}]}}}
    (epoch is the catalog's, owner_epoch the one the owning node holds;
    owner_epoch/items/bytes are None when the owner is down)."""
    out = {"nodes": [], "routers": [], "catalog_version": None,
           "tables": {}}
    section = None
    table = None
    for line in text.splitlines():
        if line in ("nodes:", "routers:"):
            section = line[:-1]
            continue
        m = re.match(r"tables \(catalog version (\d+)\):$", line)
        if m:
            section = "tables"
            out["catalog_version"] = int(m.group(1))
            continue
        if line.startswith("catalog: unavailable"):
            section = None
            continue
        if line.startswith("index replication"):
            section = None  # each index's waiting records, not parsed
            continue
        f = line.split()
        kv = dict(w.split("=", 1) for w in f if "=" in w)
        if section == "nodes" and len(f) >= 4:
            out["nodes"].append({
                "index": int(f[0]), "url": f[1], "up": f[2] == "up",
                "data": f[3],
                "catalog": int(kv["catalog"]) if "catalog" in kv else None,
                "pid": int(kv["pid"]) if "pid" in kv else None})
        elif section == "routers" and len(f) >= 3 and f[0].isdigit():
            out["routers"].append({
                "index": int(f[0]), "listen": f[1], "up": f[2] == "up",
                "catalog": int(kv["catalog"]) if "catalog" in kv else None,
                "pid": int(kv["pid"]) if "pid" in kv else None,
                "connections": int(kv.get("connections", 0)),
                "requests": int(kv.get("requests", 0))})
        elif section == "tables" and line.startswith("    "):
            if f[0] == "part":
                continue
            lo, last = f[1].split("-")
            out["tables"][table]["parts"].append({
                "part": int(f[0]), "lo": int(lo, 16), "last": int(last, 16),
                "node": int(f[2]), "epoch": int(f[3]),
                "owner_epoch": None if f[4] == "?" else int(f[4]),
                "items": None if f[5] == "?" else int(f[5]),
                "bytes": None if f[6] == "?" else int(f[6])})
        elif section == "tables" and line.startswith("  ") and f != [
                "(none)"]:
            table = f[0]
            t = {"id": int(f[1].split("=")[1]), "status": f[2],
                 "billing": f[3], "hash": None, "range": None, "parts": []}
            for kv in f[4:]:
                k, _, v = kv.partition("=")
                t[k] = v
            out["tables"][table] = t
    return out


class Proc:
    """One started process: its command, log file and Popen."""

    def __init__(self, name, argv, log, cwd):
        self.name, self.argv, self.log, self.cwd = name, argv, log, cwd
        self.p = None
        self.env = None  # the environment to start it in; None: ours

    def start(self):
        assert self.p is None or self.p.poll() is not None, self.name
        with open(self.log, "ab") as f:
            f.write(("---- %s start: %s\n" % (time.strftime("%H:%M:%S"),
                     " ".join(self.argv))).encode())
            f.flush()
            self.p = subprocess.Popen(self.argv, cwd=self.cwd, stdout=f,
                                      env=self.env,
                                      stderr=subprocess.STDOUT,
                                      stdin=subprocess.DEVNULL,
                                      preexec_fn=_die_with_parent)

    def alive(self):
        return self.p is not None and self.p.poll() is None

    def signal(self, sig):
        if self.alive():
            self.p.send_signal(sig)

    def wait(self, timeout):
        """Waits for exit; returns the exit status or None if still up."""
        if self.p is None:
            return 0
        try:
            return self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            return None


class Cluster:
    """A running cluster (see the file header). Use start(), then stop()
    (also after failures: stop() kills whatever is left)."""

    NODES = 3
    PARTITIONS = 4

    def __init__(self, nodes=NODES, partitions=PARTITIONS, settings=(),
                 routers=1, host="127.0.0.1", tcp_nodes=False, standby=(),
                 router_args=(), build=None):
        """settings: more cluster-file lines, such as "partition-wcu 50"
        (the ceilings default to DynamoDB's). routers: how many routers
        share the HTTP port (SO_REUSEPORT); self.router is the first.
        host: the address the routers listen on and nodes serve
        /metrics on, e.g. "::1" (written [::1] in the cluster file and
        the endpoint). tcp_nodes: nodes on tcp://HOST:PORT URLs (nng on
        the next three ports) and routers answering surveys on
        bus=tcp://HOST:PORT, instead of ipc:// sockets in the folder.
        standby: indices of nodes written `standby` in the cluster file
        and not started by start() (start_node starts one; kv-admin node
        add gives it partitions). router_args: more arguments for every
        kv-router (["--auth", FILE]). build: the build folder whose
        binaries run (default $KV_BUILD, else build/)."""
        self.external = bool(os.environ.get("KV_ENDPOINT"))
        self.build = build or os.environ.get("KV_BUILD") or os.path.join(
            REPO, "build")
        self.n_nodes = nodes
        self.standby = set(standby)
        self.partitions = partitions
        self.nodes = []
        self.router = None
        self.routers = []
        self.dir = None
        self.config = os.environ.get("KV_CONFIG") if self.external else None
        # Processes that ignored SIGTERM and had to be killed by stop().
        self.forced_kills = []
        # Processes that exited on their own (crashes) noticed by stop().
        self.exits = []
        if self.external:
            self.endpoint = os.environ["KV_ENDPOINT"].rstrip("/")
            return
        self.dir = tempfile.mkdtemp(prefix="kv-it-")
        self.host = host
        hp = "[%s]" % host if ":" in host else host  # as URLs write it
        self.port = free_port(host)
        self.endpoint = "http://%s:%d" % (hp, self.port)
        self.config = os.path.join(self.dir, "cluster.conf")
        lines = ["# written by tests/integration/cluster.py",
                 "partitions %d" % partitions] + list(settings)
        # Each node also serves GET /metrics on a loopback port.
        self.node_metrics = []
        for i in range(nodes):
            mport = free_port(host)
            self.node_metrics.append("http://%s:%d/metrics" % (hp, mport))
            if tcp_nodes:
                url = "tcp://%s:%d" % (hp, free_port(host, span=4))
            else:
                url = "ipc://" + os.path.join(self.dir, "node%d.ipc" % i)
            lines.append("node %s %s %s:%d%s" % (
                url, os.path.join(self.dir, "data", "node%d" % i), hp,
                mport, " standby" if i in standby else ""))
        for i in range(routers):
            if tcp_nodes:  # peer and survey ports (config_bus_url)
                bus = "tcp://%s:%d" % (hp, free_port(host, span=2))
            else:
                bus = "ipc://" + os.path.join(self.dir, "router%d" % i)
            lines.append("router %s:%d bus=%s" % (hp, self.port, bus))
        with open(self.config, "w") as f:
            f.write("\n".join(lines) + "\n")
        for i in range(nodes):
            self.nodes.append(Proc(
                "node%d" % i,
                [self._bin("node/kv-node"), "--config", self.config,
                 "--index", str(i)] +
                os.environ.get("KV_NODE_ARGS", "").split(),
                os.path.join(self.dir, "node%d.log" % i), self.dir))
        # KV_ROUTER_ARGS, KV_NODE_ARGS: more arguments for kv-router
        # ("--no-ring") and kv-node ("--sched-normal").
        for i in range(routers):
            self.routers.append(Proc(
                "router%d" % i,
                [self._bin("router/kv-router"), "--config", self.config,
                 "--index", str(i), "--port", str(self.port)] +
                list(router_args) +
                os.environ.get("KV_ROUTER_ARGS", "").split(),
                os.path.join(self.dir, "router%d.log" % i), self.dir))
        self.router = self.routers[0]

    def _bin(self, rel):
        path = os.path.join(self.build, rel)
        if not os.access(path, os.X_OK):
            raise RuntimeError("%s is missing: build first (./kv build) or "
                               "set KV_BUILD" % path)
        return path

    def require_processes(self):
        """Fails the calling test when processes are not ours to manage
        (such tests carry the `processes` mark, so a run against an
        external cluster leaves them out with -m 'not processes')."""
        if self.external:
            import pytest
            pytest.fail(EXTERNAL_REFUSED)

    # ---- lifecycle ----

    def start(self, timeout=20.0):
        if self.external:
            self.wait_ready(timeout)
            return self
        for i, n in enumerate(self.nodes):
            if i not in self.standby:
                n.start()
        for r in self.routers:
            r.start()
        self.wait_ready(timeout)
        return self

    def healthy(self):
        with urllib.request.urlopen(self.endpoint + "/", timeout=2) as r:
            return r.status == 200 and r.read().startswith(b"healthy:")

    def wait_ready(self, timeout=20.0):
        """Waits until the router answers GET / and kv-admin sees every
        node up with the catalog readable."""
        def ready():
            for p in self.procs():
                if p.p is not None and not p.alive():
                    raise RuntimeError("%s exited with %s" % (
                        p.name, p.p.returncode))
            if not self.healthy():
                return False
            if self.config is None:
                return True
            st = self.status()
            return (st["catalog_version"] is not None and
                    all(n["up"] for n in st["nodes"]
                        if self.external or n["index"] >= len(self.nodes)
                        or self.nodes[n["index"]].p is not None) and
                    all(r["up"] for r in st["routers"]
                        if r["index"] < len(self.routers) and
                        self.routers[r["index"]].alive()))
        wait_until(ready, timeout, 0.05, "the cluster to answer")

    def procs(self):
        return self.nodes + self.routers

    def kill_router(self, i):
        """SIGKILLs router i and waits until it is gone."""
        self.require_processes()
        r = self.routers[i]
        r.signal(signal.SIGKILL)
        r.wait(10)

    def start_router(self, i, timeout=40.0):
        """Starts router i again; waits until the cluster is ready."""
        self.require_processes()
        self.routers[i].start()
        self.wait_ready(timeout)

    def kill_node(self, i):
        """SIGKILLs node i and waits until it is gone."""
        self.require_processes()
        n = self.nodes[i]
        n.signal(signal.SIGKILL)
        n.wait(10)

    def start_node(self, i, timeout=40.0):
        """Starts node i again on its data folder; waits until it is up.
        40 s: under the sanitizers, beside another test, a catalog node
        restarted in the middle of a move once was not ready within 20 s
        (and was within them alone and beside test_adaptive)."""
        self.require_processes()
        self.nodes[i].start()
        self.wait_ready(timeout)

    def stop_node(self, i):
        """SIGSTOPs node i: it stays up (its sockets accept and buffer)
        but answers nothing until cont_node(i)."""
        self.require_processes()
        assert self.nodes[i].alive(), "node%d is not running" % i
        self.nodes[i].signal(signal.SIGSTOP)

    def cont_node(self, i):
        """SIGCONTs node i (after stop_node; harmless otherwise)."""
        self.require_processes()
        self.nodes[i].signal(signal.SIGCONT)

    def _stop_procs(self, procs, grace=10.0):
        for p in procs:
            if p.p is not None and not p.alive():
                self.exits.append((p.name, p.p.returncode))
            p.signal(signal.SIGTERM)
        deadline = time.monotonic() + grace
        for p in procs:
            if p.wait(max(0.0, deadline - time.monotonic())) is None:
                self.forced_kills.append(p.name)
                p.signal(signal.SIGKILL)
                p.wait(10)

    def stop(self):
        """SIGTERMs every process (router first), SIGKILLs what does not
        exit within a few seconds. Safe to call more than once."""
        if self.external:
            return
        self._stop_procs(self.routers + self.nodes)

    def restart_all(self, timeout=20.0):
        """Stops every process and starts them again on the same data."""
        self.require_processes()
        self.stop()
        self.start(timeout)

    def sanitizer_reports(self):
        """Lines of the process logs where AddressSanitizer, LeakSanitizer
        or UBSan reported a finding (./kv test --sanitize builds them in);
        the fixture fails the test file when there are any."""
        if self.external:
            return []
        found = []
        pat = re.compile(r"ERROR: (Address|Leak)Sanitizer|runtime error:")
        for p in self.procs():
            try:
                with open(p.log, "rb") as f:
                    for line in f.read().decode(errors="replace").splitlines():
                        if pat.search(line):
                            found.append("%s: %s" % (p.name, line))
            except OSError:
                pass
        return found

    def cleanup(self, keep=False):
        """Kills anything left; removes the folder unless keep."""
        if self.external:
            return
        for p in self.procs():
            p.signal(signal.SIGKILL)
            p.wait(10)
        if not keep and self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)

    # ---- clients and tools ----

    def client(self, attempts=1, read_timeout=15):
        """A boto3 DynamoDB client on the router. attempts counts the
        first try too (botocore's total_max_attempts; its max_attempts
        would count retries only): 1 disables retries, so every 5xx and
        every slow answer reaches the test as it happened."""
        import boto3
        from botocore.config import Config
        return boto3.client(
            "dynamodb", endpoint_url=self.endpoint, region_name="us-east-1",
            aws_access_key_id="AKIDTEST", aws_secret_access_key="secret",
            config=Config(retries={"mode": "standard",
                                   "total_max_attempts": attempts},
                          connect_timeout=5, read_timeout=read_timeout))

    def make_table(self, prefix, sort_key=None):
        """Creates an on-demand table with a string hash key `pk` (and a
        sort key `sk` of type sort_key, e.g. "N", if given), named
        prefix-<random>, through boto3; returns its name once ACTIVE."""
        import uuid
        ddb = self.client()
        name = "%s-%s" % (prefix, uuid.uuid4().hex[:8])
        attrs = [{"AttributeName": "pk", "AttributeType": "S"}]
        keys = [{"AttributeName": "pk", "KeyType": "HASH"}]
        if sort_key:
            attrs.append({"AttributeName": "sk", "AttributeType": sort_key})
            keys.append({"AttributeName": "sk", "KeyType": "RANGE"})
        ddb.create_table(TableName=name, AttributeDefinitions=attrs,
                         KeySchema=keys, BillingMode="PAY_PER_REQUEST")
        ddb.get_waiter("table_exists").wait(
            TableName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 20})
        return name

    def admin(self, *args, check=True):
        """Runs kv-admin with this cluster's file; returns its stdout."""
        if self.config is None:
            import pytest
            pytest.fail("KV_ENDPOINT is set without KV_CONFIG: kv-admin "
                        "needs the external cluster's file (" +
                        EXTERNAL_REFUSED + ")")
        r = subprocess.run(
            [self._bin("cluster-config/kv-admin"), "--config", self.config]
            + [str(a) for a in args], cwd=self.dir or REPO,
            capture_output=True, text=True, timeout=30)
        if check and r.returncode != 0:
            raise AssertionError("kv-admin %s failed (%d): %s%s" % (
                " ".join(map(str, args)), r.returncode, r.stdout, r.stderr))
        return r.stdout

    def status(self):
        return parse_status(self.admin("status", check=False))

    def metrics(self, url=None):
        """GET /metrics of the router (or of url, e.g. one of
        self.node_metrics) as {(name, frozenset(labels)): value}."""
        with urllib.request.urlopen(url or self.endpoint + "/metrics",
                                    timeout=10) as r:
            text = r.read().decode()
        out = {}
        for line in text.splitlines():
            if not line or line.startswith("#"):
                continue
            m = re.match(r'([a-z_]+)(?:\{(.*)\})? (\S+)$', line)
            if not m:
                raise AssertionError("bad metrics line %r" % line)
            labels = frozenset(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"',
                                          m.group(2) or ""))
            out[(m.group(1), labels)] = float(m.group(3))
        return out

    def status_json(self):
        """`kv-admin status --json`: the cluster map with each
        partition's counters and rates over one second."""
        import json
        return json.loads(self.admin("status", "--json"))

    def table_map(self, name):
        """The partitions of table `name` from status_json(), sorted by
        hash: dicts with id, lo and last (ints), node, epoch,
        owner_epoch, items, bytes, wcu_per_s, ... (see admin_reshape.c)."""
        for t in self.status_json()["tables"]:
            if t["name"] == name:
                parts = []
                for p in t["partitions"]:
                    p = dict(p)
                    p["lo"], p["last"] = int(p["lo"], 16), int(
                        p["last"], 16)
                    parts.append(p)
                return sorted(parts, key=lambda p: p["lo"])
        raise KeyError(name)

    def events(self):
        """`kv-admin status --events`: the recent splits and moves."""
        import json
        return [json.loads(line) for line in
                self.admin("status", "--events").splitlines() if line]

    def served_by(self, i, table_id):
        """The partition ids of table table_id that node i serves, from
        its /metrics."""
        out = set()
        for (name, labels), _ in self.metrics(self.node_metrics[i]).items():
            d = dict(labels)
            if d.get("table_id") == str(table_id) and "partition" in d:
                out.add(int(d["partition"]))
        return out

    def table_partitions(self, name):
        """The partitions of table `name` from kv-admin status (see
        parse_status); raises KeyError when the catalog has no such
        table."""
        return self.status()["tables"][name]["parts"]

    def item_counts(self, name, wait=10.0):
        """{partition: item count} of table `name` from kv-admin status.
        A count kv-admin could not read (its node's statistics did not
        come in time, as under a loaded machine) is unknown, not a
        change: the status is read again, for `wait` seconds at most."""
        deadline = time.monotonic() + wait
        while True:
            got = {p["part"]: p["items"] for p in self.table_partitions(name)}
            if None not in got.values() or time.monotonic() > deadline:
                return got
            time.sleep(0.2)

    def log_tails(self, lines=30):
        """The last lines of every process's log, for failure reports."""
        if self.external:
            return "(external cluster at %s: no logs)" % self.endpoint
        out = []
        for p in self.procs():
            try:
                with open(p.log, "rb") as f:
                    text = f.read().decode(errors="replace")
            except OSError as e:
                text = "(%s)" % e
            tail = "\n".join(text.splitlines()[-lines:])
            state = "running" if p.alive() else "exited %s" % (
                p.p.returncode if p.p is not None else "-")
            out.append("==> %s (%s, %s) <==\n%s" % (p.log, p.name, state,
                                                    tail))
        return "\n".join(out)


def _serve(statefile):
    c = Cluster()
    stop = []
    signal.signal(signal.SIGTERM, lambda *a: stop.append(1))
    signal.signal(signal.SIGINT, lambda *a: stop.append(1))
    try:
        c.start()
        tmp = statefile + ".tmp"
        with open(tmp, "w") as f:
            f.write("%s %s %s\n" % (c.endpoint, c.config, c.dir))
        os.rename(tmp, statefile)
        while not stop:
            time.sleep(0.1)
        c.stop()
        return 0
    except Exception as e:  # noqa: BLE001 - reported to the script
        sys.stderr.write("cluster.py: %s\n%s\n" % (e, c.log_tails()))
        return 1
    finally:
        c.cleanup()


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--serve":
        sys.exit(_serve(sys.argv[2]))
    sys.stderr.write("usage: cluster.py --serve STATEFILE\n")
    sys.exit(2)
