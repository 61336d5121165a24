"""test_dynamodb_admin.py — dynamodb-admin (npm), the web GUI people
point at a local DynamoDB, browses the cluster: its table list names our
tables, a table's page shows its items, as headless Chromium renders
them. The package is installed once into .kv/cache (the version below).
KV_ADMIN_SCREENSHOT=PATH keeps a screenshot of the table list."""

import os
import shutil
import subprocess
import tempfile
import urllib.request

from browser import render
from cluster import REPO, free_port, wait_until

VERSION = "5.3.3"
CACHE = os.path.join(REPO, ".kv", "cache", "dynamodb-admin-" + VERSION)


def admin_js():
    js = os.path.join(CACHE, "node_modules", "dynamodb-admin", "dist",
                      "dynamodb-admin.js")
    if not os.path.exists(js):
        for tool in ("node", "npm"):
            assert shutil.which(tool), "%s is missing (apt nodejs npm)" % tool
        os.makedirs(CACHE, exist_ok=True)
        subprocess.run(["npm", "install", "--silent", "--no-audit",
                        "--no-fund", "--prefix", CACHE,
                        "dynamodb-admin@" + VERSION],
                       check=True, timeout=600)
    return js


def test_dynamodb_admin_browses_the_cluster(cluster, ddb):
    orders = cluster.make_table("orders")
    users = cluster.make_table("users")
    for i in range(3):
        ddb.put_item(TableName=orders, Item={
            "pk": {"S": "order-%d" % i}, "note": {"S": "apple-%d" % i}})
    port = free_port()
    p = subprocess.Popen(
        ["node", admin_js(), "-H", "127.0.0.1", "-p", str(port),
         "--dynamo-endpoint", cluster.endpoint],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = tempfile.mkdtemp(prefix="kv-admin-ui-")
    try:
        url = "http://127.0.0.1:%d" % port

        def up():
            with urllib.request.urlopen(url + "/", timeout=5) as r:
                return r.status == 200
        wait_until(up, 30, 0.2, "dynamodb-admin to answer")
        dom = render(url + "/", out, "dom")
        assert orders in dom and users in dom, dom[:3000]
        page = render(url + "/tables/" + orders, out, "dom")
        for i in range(3):
            assert "apple-%d" % i in page, page[:3000]
        png = os.path.join(out, "admin.png")
        render(url + "/", out, png)
        with open(png, "rb") as f:
            assert f.read(8) == b"\x89PNG\r\n\x1a\n"
        if os.environ.get("KV_ADMIN_SCREENSHOT"):
            shutil.copy(png, os.environ["KV_ADMIN_SCREENSHOT"])
    finally:
        p.kill()
        p.wait(10)
        shutil.rmtree(out, ignore_errors=True)
