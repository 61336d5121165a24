"""test_service.py — the operations about the service rather than a
table, as SDKs and the AWS CLI call them: DescribeEndpoints and
DescribeLimits (router/ops/ops_account.c)."""

import json
import os
import subprocess


def test_describe_limits(ddb):
    r = ddb.describe_limits()
    assert {k: r[k] for k in (
        "AccountMaxReadCapacityUnits", "AccountMaxWriteCapacityUnits",
        "TableMaxReadCapacityUnits", "TableMaxWriteCapacityUnits")} == {
        "AccountMaxReadCapacityUnits": 80000,
        "AccountMaxWriteCapacityUnits": 80000,
        "TableMaxReadCapacityUnits": 40000,
        "TableMaxWriteCapacityUnits": 40000}


def test_describe_endpoints_names_this_router(cluster, ddb):
    eps = ddb.describe_endpoints()["Endpoints"]
    assert len(eps) == 1
    assert eps[0]["CachePeriodInMinutes"] == 1440
    # The address a client that discovers endpoints would use: this
    # cluster's, not DynamoDB's regional name.
    assert cluster.endpoint.endswith("//" + eps[0]["Address"]), eps


def test_describe_limits_from_the_aws_cli(cluster):
    env = dict(os.environ, AWS_ACCESS_KEY_ID="x", AWS_SECRET_ACCESS_KEY="y",
               AWS_DEFAULT_REGION="us-east-1")
    out = subprocess.run(
        ["aws", "dynamodb", "describe-limits", "--endpoint-url",
         cluster.endpoint, "--output", "json"],
        capture_output=True, text=True, env=env, timeout=60, check=True)
    assert json.loads(out.stdout)["TableMaxWriteCapacityUnits"] == 40000


def test_the_router_counts_them(cluster, ddb):
    ddb.describe_limits()
    m = cluster.metrics()
    ops = {dict(labels).get("op") for (name, labels) in m}
    assert {"DescribeLimits", "DescribeEndpoints"} <= ops
