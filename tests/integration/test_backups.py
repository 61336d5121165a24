"""test_backups.py — on-demand backups (router/ops/ops_backup.c,
node/backup.h): CreateBackup, DescribeBackup, ListBackups, DeleteBackup,
RestoreTableFromBackup, Describe/UpdateContinuousBackups, through boto3
and the AWS CLI; a backup is a point-in-time copy of every partition;
restores rebuild local and global indexes; backups and restores survive
a kill -9 of every node."""

import datetime
import json
import os
import shutil
import subprocess
import time

import pytest
from botocore.exceptions import ClientError


def refused(fn, code, message=None, **kw):
    with pytest.raises(ClientError) as ei:
        fn(**kw)
    r = ei.value.response
    assert r["Error"]["Code"] == code, r["Error"]
    if message is not None:
        assert r["Error"]["Message"] == message, r["Error"]
    assert r["ResponseMetadata"]["HTTPStatusCode"] == 400
    return r["Error"]["Message"]


def wait_backup(ddb, arn, timeout=30.0):
    end = time.time() + timeout
    while True:
        d = ddb.describe_backup(BackupArn=arn)["BackupDescription"]
        if d["BackupDetails"]["BackupStatus"] == "AVAILABLE":
            return d
        assert time.time() < end, d
        time.sleep(0.1)


def wait_table(ddb, name, timeout=60.0):
    end = time.time() + timeout
    while True:
        t = ddb.describe_table(TableName=name)["Table"]
        busy = [g for g in t.get("GlobalSecondaryIndexes", ())
                if g["IndexStatus"] != "ACTIVE"]
        if t["TableStatus"] == "ACTIVE" and not busy:
            return t
        assert time.time() < end, t
        time.sleep(0.1)


def scan_all(ddb, **kw):
    out, start = [], None
    while True:
        if start:
            kw["ExclusiveStartKey"] = start
        page = ddb.scan(**kw)
        out.extend(page["Items"])
        start = page.get("LastEvaluatedKey")
        if not start:
            return out


def canon(items):
    return sorted(json.dumps(i, sort_keys=True) for i in items)


def make_indexed(ddb, name):
    ddb.create_table(
        TableName=name, BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "N"},
            {"AttributeName": "g", "AttributeType": "S"},
            {"AttributeName": "l", "AttributeType": "N"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                   {"AttributeName": "sk", "KeyType": "RANGE"}],
        GlobalSecondaryIndexes=[{
            "IndexName": "by_g",
            "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "ALL"}}],
        LocalSecondaryIndexes=[{
            "IndexName": "by_l",
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                          {"AttributeName": "l", "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "KEYS_ONLY"}}])
    wait_table(ddb, name)


def fill(ddb, name, n, tag="v1"):
    for start in range(0, n, 25):
        ddb.batch_write_item(RequestItems={name: [
            {"PutRequest": {"Item": {
                "pk": {"S": "p%d" % (i % 37)}, "sk": {"N": str(i)},
                "g": {"S": "g%d" % (i % 5)}, "l": {"N": str(1000 - i)},
                "tag": {"S": tag}}}}
            for i in range(start, min(n, start + 25))]})


def test_backup_restore_round_trip(cluster, ddb, unique):
    src = "bk-src-" + unique
    make_indexed(ddb, src)
    fill(ddb, src, 300)
    before = scan_all(ddb, TableName=src, ConsistentRead=True)
    assert len(before) == 300
    d = ddb.create_backup(TableName=src, BackupName="nightly.1")
    det = d["BackupDetails"]
    arn = det["BackupArn"]
    table_arn = ddb.describe_table(TableName=src)["Table"]["TableArn"]
    assert arn.startswith(table_arn + "/backup/")
    suffix = arn.rsplit("/", 1)[1]
    assert len(suffix) == 23 and suffix[14] == "-", suffix
    assert det["BackupName"] == "nightly.1"
    assert det["BackupType"] == "USER"
    assert det["BackupStatus"] in ("CREATING", "AVAILABLE")
    desc = wait_backup(ddb, arn)
    # Writes after the backup are not in it.
    fill(ddb, src, 300, tag="v2")
    ddb.delete_item(TableName=src, Key={"pk": {"S": "p0"},
                                         "sk": {"N": "0"}})
    st = desc["SourceTableDetails"]
    assert st["TableName"] == src and st["ItemCount"] == 300
    assert st["TableArn"] == table_arn
    assert st["TableSizeBytes"] > 300 * 20
    assert st["BillingMode"] == "PAY_PER_REQUEST"
    assert desc["BackupDetails"]["BackupSizeBytes"] == st["TableSizeBytes"]
    f = desc["SourceTableFeatureDetails"]
    assert [g["IndexName"] for g in f["GlobalSecondaryIndexes"]] == ["by_g"]
    assert [x["IndexName"] for x in f["LocalSecondaryIndexes"]] == ["by_l"]

    dst = "bk-dst-" + unique
    r = ddb.restore_table_from_backup(TargetTableName=dst, BackupArn=arn)
    td = r["TableDescription"]
    assert td["TableName"] == dst
    rs = td["RestoreSummary"]
    assert rs["SourceBackupArn"] == arn
    assert rs["SourceTableArn"] == table_arn
    t = wait_table(ddb, dst)
    assert t["RestoreSummary"]["RestoreInProgress"] is False
    after = scan_all(ddb, TableName=dst, ConsistentRead=True)
    assert canon(after) == canon(before)
    # The local index came with the items, the global one was filled.
    q = ddb.query(TableName=dst, IndexName="by_l",
                  KeyConditionExpression="pk = :p",
                  ExpressionAttributeValues={":p": {"S": "p1"}})
    want = sorted(int(i["l"]["N"]) for i in before if i["pk"]["S"] == "p1")
    assert [int(i["l"]["N"]) for i in q["Items"]] == want
    g = scan_all(ddb, TableName=dst, IndexName="by_g")
    assert canon(g) == canon(before)
    # The restored table counts its items and takes writes.
    t = ddb.describe_table(TableName=dst)["Table"]
    assert t["ItemCount"] == 300
    ddb.put_item(TableName=dst, Item={"pk": {"S": "new"}, "sk": {"N": "1"},
                                      "g": {"S": "gx"}, "l": {"N": "1"}})
    assert ddb.get_item(TableName=dst, Key={"pk": {"S": "new"},
                                             "sk": {"N": "1"}},
                        ConsistentRead=True)["Item"]["g"]["S"] == "gx"
    # The source table is as its writes left it.
    assert len(scan_all(ddb, TableName=src, ConsistentRead=True)) == 299

    # Listing, filtering, paging.
    arn2 = ddb.create_backup(TableName=src, BackupName="second")[
        "BackupDetails"]["BackupArn"]
    wait_backup(ddb, arn2)
    mine = ddb.list_backups(TableName=src)["BackupSummaries"]
    assert [b["BackupArn"] for b in mine] == [arn, arn2]
    assert mine[0]["TableName"] == src and mine[0]["BackupName"] == \
        "nightly.1" and mine[0]["BackupStatus"] == "AVAILABLE"
    page = ddb.list_backups(TableName=src, Limit=1)
    assert [b["BackupArn"] for b in page["BackupSummaries"]] == [arn]
    assert page["LastEvaluatedBackupArn"] == arn
    page = ddb.list_backups(TableName=src, Limit=1,
                            ExclusiveStartBackupArn=arn)
    assert [b["BackupArn"] for b in page["BackupSummaries"]] == [arn2]
    assert ddb.list_backups(TableName=src, BackupType="SYSTEM")[
        "BackupSummaries"] == []
    # Time bounds (boto3 sends whole seconds): lower inclusive, upper
    # exclusive.
    created = mine[0]["BackupCreationDateTime"]
    day = datetime.timedelta(days=1)
    for lo, hi, want in ((created - day, None, [arn, arn2]),
                         (created + day, None, []),
                         (None, created - day, []),
                         (created - day, created + day, [arn, arn2])):
        kw = {}
        if lo is not None:
            kw["TimeRangeLowerBound"] = lo
        if hi is not None:
            kw["TimeRangeUpperBound"] = hi
        assert [b["BackupArn"] for b in ddb.list_backups(
            TableName=src, **kw)["BackupSummaries"]] == want, kw
    assert arn in [b["BackupArn"] for b in
                   ddb.list_backups()["BackupSummaries"]]

    # Deleting: the answer says DELETED, then the backup is gone.
    d = ddb.delete_backup(BackupArn=arn2)["BackupDescription"]
    assert d["BackupDetails"]["BackupStatus"] == "DELETED"
    refused(ddb.describe_backup, "BackupNotFoundException",
            "Backup not found: %s" % arn2, BackupArn=arn2)
    refused(ddb.restore_table_from_backup, "BackupNotFoundException",
            TargetTableName="bk-x-" + unique, BackupArn=arn2)
    assert [b["BackupArn"] for b in ddb.list_backups(TableName=src)[
        "BackupSummaries"]] == [arn]

    # A backup outlives its table.
    ddb.delete_table(TableName=src)
    end = time.time() + 30
    while src in ddb.list_tables()["TableNames"]:
        assert time.time() < end
        time.sleep(0.1)
    wait_backup(ddb, arn)
    again = "bk-again-" + unique
    ddb.restore_table_from_backup(TargetTableName=again, BackupArn=arn)
    wait_table(ddb, again)
    assert canon(scan_all(ddb, TableName=again, ConsistentRead=True)) == \
        canon(before)


def test_overrides(cluster, ddb, unique):
    src = "bk-ov-" + unique
    make_indexed(ddb, src)
    fill(ddb, src, 60)
    arn = ddb.create_backup(TableName=src, BackupName="ovr")[
        "BackupDetails"]["BackupArn"]
    wait_backup(ddb, arn)
    dst = "bk-ov-dst-" + unique
    ddb.restore_table_from_backup(
        TargetTableName=dst, BackupArn=arn, BillingModeOverride="PROVISIONED",
        ProvisionedThroughputOverride={"ReadCapacityUnits": 50,
                                       "WriteCapacityUnits": 40},
        GlobalSecondaryIndexOverride=[], LocalSecondaryIndexOverride=[])
    t = wait_table(ddb, dst)
    assert t["BillingModeSummary"]["BillingMode"] == "PROVISIONED"
    assert t["ProvisionedThroughput"]["ReadCapacityUnits"] == 50
    assert t["ProvisionedThroughput"]["WriteCapacityUnits"] == 40
    assert "GlobalSecondaryIndexes" not in t
    assert "LocalSecondaryIndexes" not in t
    assert sorted(a["AttributeName"] for a in t["AttributeDefinitions"]) \
        == ["pk", "sk"]
    assert len(scan_all(ddb, TableName=dst, ConsistentRead=True)) == 60
    # Left-out local index entries did not come along as items.
    assert ddb.describe_table(TableName=dst)["Table"]["ItemCount"] == 60

    refused(ddb.restore_table_from_backup, "TableAlreadyExistsException",
            "Table already exists: %s" % dst, TargetTableName=dst,
            BackupArn=arn)
    m = refused(ddb.restore_table_from_backup, "ValidationException",
                TargetTableName="bk-ov-x-" + unique, BackupArn=arn,
                GlobalSecondaryIndexOverride=[{
                    "IndexName": "nope",
                    "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                    "Projection": {"ProjectionType": "ALL"}}])
    assert "nope" in m
    refused(ddb.restore_table_from_backup, "ValidationException",
            TargetTableName="bk-ov-y-" + unique, BackupArn=arn,
            BillingModeOverride="PROVISIONED")
    assert not [n for n in ddb.list_tables()["TableNames"]
                if n.startswith("bk-ov-x") or n.startswith("bk-ov-y")]


def test_errors(cluster, ddb, raw_ddb, unique):
    name = cluster.make_table("bk-err")
    refused(ddb.create_backup, "TableNotFoundException",
            "Table not found: absent-table", TableName="absent-table",
            BackupName="b-1")
    refused(raw_ddb.create_backup, "ValidationException", TableName=name,
            BackupName="x")
    refused(ddb.create_backup, "ValidationException", TableName=name,
            BackupName="bad name!")
    arn = ("arn:aws:dynamodb:us-east-1:000000000000:table/%s/backup/"
           "01489173575360-b308cd7d" % name)
    refused(ddb.describe_backup, "BackupNotFoundException",
            "Backup not found: %s" % arn, BackupArn=arn)
    refused(ddb.delete_backup, "BackupNotFoundException", BackupArn=arn)
    refused(raw_ddb.describe_backup, "ValidationException", BackupArn="short")
    refused(raw_ddb.list_backups, "ValidationException", Limit=0)
    refused(ddb.list_backups, "ValidationException", BackupType="WEEKLY")
    # Continuous backups: answered truthfully.
    d = ddb.describe_continuous_backups(TableName=name)[
        "ContinuousBackupsDescription"]
    assert d["ContinuousBackupsStatus"] == "ENABLED"
    assert d["PointInTimeRecoveryDescription"] == {
        "PointInTimeRecoveryStatus": "DISABLED"}
    refused(ddb.describe_continuous_backups, "TableNotFoundException",
            TableName="absent-table")
    r = ddb.update_continuous_backups(
        TableName=name,
        PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled":
                                          False})
    assert r["ContinuousBackupsDescription"]["PointInTimeRecoveryDescription"] \
        == {"PointInTimeRecoveryStatus": "DISABLED"}
    m = refused(ddb.update_continuous_backups, "ValidationException",
                TableName=name, PointInTimeRecoverySpecification={
                    "PointInTimeRecoveryEnabled": True})
    assert "not supported" in m


def kill_all_nodes(cluster):
    for i in range(len(cluster.nodes)):
        cluster.kill_node(i)
    for n in cluster.nodes:
        n.start()
    cluster.wait_ready()


@pytest.mark.processes
def test_backup_and_restore_survive_kill(cluster, ddb, unique):
    """Every node killed with -9 right after CreateBackup and right after
    RestoreTableFromBackup: whatever state each was left in (the backup
    CREATING or AVAILABLE, the table CREATING or ACTIVE), the catalog node
    finishes it at its start, and the restored table holds every item."""
    src = "bk-kill-" + unique
    make_indexed(ddb, src)
    fill(ddb, src, 200)
    before = scan_all(ddb, TableName=src, ConsistentRead=True)
    arn = ddb.create_backup(TableName=src, BackupName="kill")[
        "BackupDetails"]["BackupArn"]
    kill_all_nodes(cluster)
    ddb = cluster.client(attempts=5)
    assert wait_backup(ddb, arn)["SourceTableDetails"]["ItemCount"] == 200
    dst = "bk-kill-dst-" + unique
    ddb.restore_table_from_backup(TargetTableName=dst, BackupArn=arn)
    kill_all_nodes(cluster)
    ddb = cluster.client(attempts=5)
    wait_table(ddb, dst)
    assert canon(scan_all(ddb, TableName=dst, ConsistentRead=True)) == \
        canon(before)
    assert canon(scan_all(ddb, TableName=dst, IndexName="by_g")) == \
        canon(before)


def test_aws_cli(cluster, ddb, unique, tmp_path):
    aws = shutil.which("aws")
    assert aws, "the AWS CLI is installed by ./kv build"
    name = cluster.make_table("bk-cli")
    ddb.put_item(TableName=name, Item={"pk": {"S": "a"}, "v": {"N": "1"}})
    env = dict(os.environ, AWS_ACCESS_KEY_ID="x", AWS_SECRET_ACCESS_KEY="x",
               AWS_DEFAULT_REGION="us-east-1", AWS_CONFIG_FILE="/dev/null",
               HOME=str(tmp_path))

    def cli(*args):
        p = subprocess.run([aws, "--endpoint-url", cluster.endpoint,
                            "--output", "json", "dynamodb"] + list(args),
                           env=env, capture_output=True, text=True,
                           timeout=60)
        assert p.returncode == 0, p.stderr
        return json.loads(p.stdout) if p.stdout.strip() else {}

    arn = cli("create-backup", "--table-name", name, "--backup-name",
              "cli-backup")["BackupDetails"]["BackupArn"]
    wait_backup(ddb, arn)
    listed = cli("list-backups", "--table-name", name)["BackupSummaries"]
    assert [b["BackupArn"] for b in listed] == [arn]
    dst = "bk-cli-dst-" + unique
    cli("restore-table-from-backup", "--target-table-name", dst,
        "--backup-arn", arn)
    wait_table(ddb, dst)
    assert ddb.get_item(TableName=dst, Key={"pk": {"S": "a"}},
                        ConsistentRead=True)["Item"]["v"]["N"] == "1"
    assert cli("delete-backup", "--backup-arn", arn)[
        "BackupDescription"]["BackupDetails"]["BackupStatus"] == "DELETED"
