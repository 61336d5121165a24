"""cluster.py — a cluster whose every link passes through a fault proxy.

LabCluster is the test cluster of tests/integration/cluster.py (three
nodes on tcp:// URLs, one router) with one difference: each process reads
a cluster file of its own, in which every *other* node's URL is the
address of a proxy (proxy.py) for that one directed link. So the router
reaches node 1 through the link router0->node1 and node 2 reaches node 0
(node-to-node messages, the catalog feed) through node2->node0, and each
of those links can be delayed, black-holed one way or both, or reset,
independently. A process's own line keeps its real address, which it
listens on. kv-admin uses the real file and is never cut off: the
runner's view of the cluster stays clear whatever the links do.

Processes are named "node0".."node2" and "router0"; faults on them
(kill -9, restart, SIGSTOP/SIGCONT, a failing disk, a skewed clock)
go through the methods below, which
also keep track of what is down, so that the end of a run can bring
everything back.

What is not behind a proxy: the client's HTTP connections to the router
(a client-side fault is a timeout of the workload's own), and the
surveys kv-admin sends.
"""

import os
import random
import re
import signal
import sys
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "integration"))
sys.path.insert(0, os.path.dirname(HERE))

from cluster import Cluster  # noqa: E402
from lab.proxy import Links  # noqa: E402

NODE_SPAN = 4  # a node's request port and its three nng ports
FAKETIME = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"


class LabCluster(Cluster):
    def __init__(self, nodes=3, partitions=6, settings=(), plant=None):
        """plant: a planted fault (kv-node --plant KIND:N, node/plant.h)
        given to every node: each commits it once (again after a
        restart)."""
        super().__init__(nodes=nodes, partitions=partitions,
                         settings=settings, tcp_nodes=True)
        self.links = Links()
        # Processes die with the *thread* that started them
        # (PR_SET_PDEATHSIG, cluster.py): restarts go through this one
        # thread, which lives as long as the cluster, not through the
        # nemesis thread that asks for them.
        self.spawner = ThreadPoolExecutor(max_workers=1)
        self.down = set()    # names of processes killed and not restarted
        self.paused = set()  # names of processes stopped with SIGSTOP
        self.failing = set()  # nodes whose disk fails (node/store/store.h)
        self.skewed = set()  # processes running on a faked clock
        real = {}
        lines = open(self.config).read().splitlines()
        for i, line in enumerate(lines):
            m = re.match(r"node (tcp://127\.0\.0\.1:(\d+)) ", line)
            if m:
                real[len(real)] = (i, int(m.group(2)))
        self._lines, self._real = lines, real
        for p in self.procs():
            self._own_config(p)
        for n in self.nodes if plant else ():
            n.argv += ["--plant", plant]

    def _own_config(self, proc):
        """Writes proc's cluster file (peers behind their links) and
        points its --config at it."""
        lines = list(self._lines)
        for j, (at, port) in self._real.items():
            if proc.name == "node%d" % j:
                continue
            base = self.links.add(proc.name, "node%d" % j, port,
                                  span=NODE_SPAN)
            lines[at] = lines[at].replace(
                "tcp://127.0.0.1:%d " % port, "tcp://127.0.0.1:%d " % base)
        path = os.path.join(self.dir, "%s.conf" % proc.name)
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        proc.argv[proc.argv.index("--config") + 1] = path

    def start(self, timeout=30.0):
        self.links.start()
        return super().start(timeout)

    def cleanup(self, keep=False):
        super().cleanup(keep)
        self.links.close()
        self.spawner.shutdown()

    # ---- process faults ----

    def proc(self, name):
        for p in self.procs():
            if p.name == name:
                return p
        raise KeyError("no process %s" % name)

    def names(self, kind=None):
        """Process names, nodes then routers (kind "node" or "router"
        for one sort)."""
        return [p.name for p in self.procs()
                if kind is None or p.name.startswith(kind)]

    def pick(self, what, rng):
        """what: a process name, "node"/"router" (a random one that is
        up and not paused) or "any"."""
        if what in ("node", "router", "any"):
            up = [n for n in self.names(None if what == "any" else what)
                  if n not in self.down and n not in self.paused]
            return rng.choice(up) if up else None
        return what

    def kill(self, name):
        p = self.proc(name)
        p.signal(signal.SIGCONT)  # a paused process dies as well
        p.signal(signal.SIGKILL)
        p.wait(10)
        self.paused.discard(name)
        self.failing.discard(name)  # a new process has a good disk
        self.down.add(name)

    def restart(self, name):
        """Starts a killed process again (its data stays); returns at
        once: the runner does not wait for it to serve."""
        if name in self.down:
            self.spawner.submit(self.proc(name).start).result()
            self.down.discard(name)

    def pause(self, name):
        self.proc(name).signal(signal.SIGSTOP)
        self.paused.add(name)

    def resume(self, name):
        self.proc(name).signal(signal.SIGCONT)
        self.paused.discard(name)

    def disk_fail(self, name):
        """Node name's store refuses every write from now on (SIGUSR1,
        node/store/store.h); its reads go on."""
        self.proc(name).signal(signal.SIGUSR1)
        self.failing.add(name)

    def disk_heal(self, name):
        self.proc(name).signal(signal.SIGUSR2)
        self.failing.discard(name)

    def skew(self, name, spec):
        """Starts process name again (kill -9 first) on a clock of
        libfaketime's: spec is its FAKETIME, such as "+5m" (five
        minutes ahead) or "+0 x3" (three times as fast). Its wall and
        monotonic clocks both follow it, and its timed waits."""
        if not os.path.exists(FAKETIME):
            raise RuntimeError("%s is missing (Debian's libfaketime; "
                               "./kv build installs it)" % FAKETIME)
        if name not in self.down:
            self.kill(name)
        p = self.proc(name)
        p.env = dict(os.environ, LD_PRELOAD=FAKETIME, FAKETIME=spec,
                     FAKETIME_NO_CACHE="1")
        self.restart(name)
        self.skewed.add(name)

    def unskew(self, name):
        """Starts process name again on the real clock."""
        if name not in self.down:
            self.kill(name)
        self.proc(name).env = None
        self.restart(name)
        self.skewed.discard(name)

    def restore(self, timeout=60.0):
        """Heals every link, resumes and restarts every process, and
        waits until the cluster answers again."""
        self.links.heal()
        for n in list(self.failing):
            self.disk_heal(n)
        for n in list(self.skewed):
            self.unskew(n)
        for n in list(self.paused):
            self.resume(n)
        for n in list(self.down):
            self.restart(n)
        self.wait_ready(timeout)


def seeded(seed):
    return random.Random(seed)
