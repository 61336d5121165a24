"""test_js_sdk.py — the AWS SDK for JavaScript v3 (@aws-sdk/client-dynamodb
and @aws-sdk/lib-dynamodb from npm, Node from Debian) drives the cluster:
tests/js/sdk_test.cjs creates a table, puts and reads items, pages a
Query with the SDK's paginator and runs transactions. The packages are
installed once into .kv/cache/js-sdk (the versions below)."""

import os
import shutil
import subprocess

from cluster import REPO

VERSION = "3.1169.0"
CACHE = os.path.join(REPO, ".kv", "cache", "js-sdk-" + VERSION)


def modules():
    mods = os.path.join(CACHE, "node_modules")
    if not os.path.isdir(os.path.join(mods, "@aws-sdk", "lib-dynamodb")):
        for tool in ("node", "npm"):
            assert shutil.which(tool), "%s is missing (apt nodejs npm)" % tool
        os.makedirs(CACHE, exist_ok=True)
        subprocess.run(["npm", "install", "--silent", "--no-audit",
                        "--no-fund", "--prefix", CACHE,
                        "@aws-sdk/client-dynamodb@" + VERSION,
                        "@aws-sdk/lib-dynamodb@" + VERSION],
                       check=True, timeout=600)
    return mods


def test_the_javascript_sdk_drives_the_cluster(cluster):
    p = subprocess.run(
        ["node", os.path.join(REPO, "tests", "js", "sdk_test.cjs"),
         cluster.endpoint],
        env=dict(os.environ, KV_JS_MODULES=modules()),
        capture_output=True, text=True, timeout=180)
    print(p.stdout)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "all ok" in p.stdout
