"""conftest.py — one fresh cluster per test file (see cluster.py).

The `cluster` fixture is module-scoped: every test file gets its own
processes and data folder. When a test fails, the tails of the processes'
logs are attached to its report, and the cluster's folder is kept (its path
is printed) for a post-mortem. With KV_DUMP_DIR set, the first failure of a
test file also writes, into KV_DUMP_DIR/<test file>, the threads of every
live process (gdb, where installed) and the machine's Unix sockets with
their peers (ss), taken before the cluster is stopped.
"""

import os
import subprocess
import sys
import uuid

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from cluster import Cluster  # noqa: E402


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "processes: kills, restarts or inspects the cluster's "
        "own processes; needs a cluster started by the fixture (leave out "
        "with -m 'not processes' when KV_ENDPOINT is set)")


@pytest.fixture(scope="module")
def cluster(request):
    # A test file may scale the cluster's ceilings (CLUSTER_SETTINGS: more
    # cluster-file lines, e.g. "partition-wcu 50"), run several routers on
    # the port (CLUSTER_ROUTERS) and give Cluster more options
    # (CLUSTER_OPTIONS, e.g. {"host": "::1", "tcp_nodes": True}).
    c = Cluster(settings=getattr(request.module, "CLUSTER_SETTINGS", ()),
                routers=getattr(request.module, "CLUSTER_ROUTERS", 1),
                **getattr(request.module, "CLUSTER_OPTIONS", {}))
    request.module._kv_cluster = c
    request.module._kv_failed = False
    try:
        c.start()
    except BaseException:
        tails = c.log_tails()
        c.cleanup(keep=True)
        raise RuntimeError("the cluster did not start (folder %s)\n%s" % (
            c.dir, tails))
    try:
        yield c
    finally:
        c.stop()
        reports = c.sanitizer_reports()
        failed = request.module._kv_failed or bool(reports)
        if failed and not c.external:
            sys.stderr.write("\nkv cluster of %s kept in %s (logs, data)\n"
                             % (request.module.__name__, c.dir))
        c.cleanup(keep=failed)
        assert not reports, "sanitizer findings in the cluster's logs:\n" + \
            "\n".join(reports)


@pytest.fixture
def ddb(cluster):
    """A boto3 DynamoDB client without retries."""
    return cluster.client()


@pytest.fixture
def raw_ddb(cluster):
    """A boto3 client that sends what it is given: no client-side
    parameter validation, so the router's own checks are tested."""
    import boto3
    from botocore.config import Config
    return boto3.client(
        "dynamodb", endpoint_url=cluster.endpoint, region_name="us-east-1",
        aws_access_key_id="AKIDTEST", aws_secret_access_key="secret",
        config=Config(retries={"mode": "standard",
                               "total_max_attempts": 1},
                      connect_timeout=5, read_timeout=15,
                      parameter_validation=False))


@pytest.fixture
def unique():
    """A short random suffix for table names (external clusters are
    shared)."""
    return uuid.uuid4().hex[:8]


def dump_processes(mod, c):
    """At the first failure of a test file, with KV_DUMP_DIR set: the
    threads of every live process of cluster c, and `ss -xpna`."""
    out = os.environ.get("KV_DUMP_DIR")
    if not out or getattr(mod, "_kv_dumped", False):
        return
    mod._kv_dumped = True
    out = os.path.join(out, mod.__name__)
    os.makedirs(out, exist_ok=True)
    cmds = [("ss.txt", ["ss", "-xpna"])]
    for p in c.procs():
        if p.p is not None and p.alive():
            cmds.append(("%s.gdb" % p.name,
                         ["gdb", "-p", str(p.p.pid), "-batch", "-ex",
                          "thread apply all bt"]))
    for name, argv in cmds:
        with open(os.path.join(out, name), "w") as f:
            try:
                subprocess.run(argv, stdout=f, stderr=f, timeout=120)
            except (OSError, subprocess.TimeoutExpired) as e:
                f.write("%s: %s\n" % (argv[0], e))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if not rep.failed:
        return
    mod = item.module
    c = getattr(mod, "_kv_cluster", None)
    if c is None:
        return
    mod._kv_failed = True
    dump_processes(mod, c)
    rep.sections.append(("kv cluster logs (%s)" % (c.dir or c.endpoint),
                         c.log_tails()))
