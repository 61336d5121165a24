"""test_tags.py — TagResource, UntagResource, ListTagsOfResource and
CreateTable's Tags (router/ops/ops_tags.c): tags by table ARN, kept in the
catalog, DynamoDB's limits and messages."""

import uuid

import pytest
from botocore.exceptions import ClientError


def refused(fn, code, message=None, **kw):
    with pytest.raises(ClientError) as ei:
        fn(**kw)
    r = ei.value.response
    assert r["Error"]["Code"] == code, r["Error"]
    if message is not None:
        assert r["Error"]["Message"] == message
    assert r["ResponseMetadata"]["HTTPStatusCode"] == 400


def tags(ddb, arn):
    return {t["Key"]: t["Value"]
            for t in ddb.list_tags_of_resource(ResourceArn=arn)["Tags"]}


@pytest.fixture
def arn(cluster, ddb):
    name = cluster.make_table("tags")
    return ddb.describe_table(TableName=name)["Table"]["TableArn"]


def test_tag_list_untag(ddb, arn):
    assert tags(ddb, arn) == {}
    ddb.tag_resource(ResourceArn=arn, Tags=[
        {"Key": "team", "Value": "payments"}, {"Key": "7", "Value": " "},
        {"Key": " ", "Value": "9"}, {"Key": "env", "Value": ""}])
    assert tags(ddb, arn) == {"team": "payments", "7": " ", " ": "9",
                              "env": ""}
    # A key set again takes the new value.
    ddb.tag_resource(ResourceArn=arn, Tags=[{"Key": "team",
                                             "Value": "ledger"}])
    assert tags(ddb, arn)["team"] == "ledger"
    # Removing absent keys is no error.
    ddb.untag_resource(ResourceArn=arn, TagKeys=["7", "absent", "zzz"])
    assert tags(ddb, arn) == {"team": "ledger", " ": "9", "env": ""}
    ddb.untag_resource(ResourceArn=arn, TagKeys=["team", " ", "env"])
    assert tags(ddb, arn) == {}


def test_fifty_tags_and_no_more(ddb, arn):
    ddb.tag_resource(ResourceArn=arn, Tags=[
        {"Key": str(i), "Value": str(i)} for i in range(30)])
    ddb.tag_resource(ResourceArn=arn, Tags=[
        {"Key": str(i), "Value": str(i)} for i in range(20, 50)])
    assert len(tags(ddb, arn)) == 50
    refused(ddb.tag_resource, "ValidationException", ResourceArn=arn,
            Tags=[{"Key": "one-more", "Value": "x"}])
    assert len(tags(ddb, arn)) == 50
    # Replacing values of keys present stays within the limit.
    ddb.tag_resource(ResourceArn=arn, Tags=[{"Key": "3", "Value": "new"}])
    assert tags(ddb, arn)["3"] == "new"


def test_refusals(ddb, raw_ddb, arn):
    missing = arn + "x"
    refused(ddb.tag_resource, "ResourceNotFoundException",
            "Requested resource not found: ResourcArn: %s not found"
            % missing, ResourceArn=missing, Tags=[{"Key": "a",
                                                   "Value": "b"}])
    refused(ddb.list_tags_of_resource, "ResourceNotFoundException",
            ResourceArn=missing)
    refused(raw_ddb.tag_resource, "ValidationException",
            ResourceArn="I_do_not_exist", Tags=[{"Key": "7", "Value": "8"}])
    for bad in ["arn:not/a/good/format", "arn:aws:dynamodb:us-east-1:1:x/y",
                "arn:aws:dynamodb:us-east-1:1:table/t/index/i"]:
        refused(raw_ddb.tag_resource, "ValidationException",
                ResourceArn=bad, Tags=[{"Key": "x", "Value": "y"}])
    refused(raw_ddb.tag_resource, "ValidationException", ResourceArn=arn,
            Tags=[])
    for k, v in [("ok", "#!%%^$$&"), ("->>;-)])", "ok"), ("!!!\\|", "<>"),
                 ("k" * 129, "v"), ("k", "v" * 257), ("aws:x", "y")]:
        refused(raw_ddb.tag_resource, "ValidationException",
                ResourceArn=arn, Tags=[{"Key": k, "Value": v}])
    refused(raw_ddb.untag_resource, "ValidationException",
            "1 validation error detected: Value null at 'tagKeys' failed "
            "to satisfy constraint: Member must not be null",
            ResourceArn=arn)
    assert tags(ddb, arn) == {}


def test_unicode_tags(ddb, arn):
    t = {"законные буквы": "string", "keyѮѮѮ": "ѮѮѮvalue"}
    ddb.tag_resource(ResourceArn=arn, Tags=[{"Key": k, "Value": v}
                                            for k, v in t.items()])
    assert tags(ddb, arn) == t


def test_create_table_with_tags(ddb):
    name = "tagged-" + uuid.uuid4().hex[:6]
    r = ddb.create_table(
        TableName=name, BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": "p", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "p", "KeyType": "HASH"}],
        Tags=[{"Key": "a", "Value": "1"}, {"Key": "b", "Value": "2"}])
    arn = r["TableDescription"]["TableArn"]
    assert tags(ddb, arn) == {"a": "1", "b": "2"}
    # Too many tags: the table is not created at all.
    name2 = "tagged-" + uuid.uuid4().hex[:6]
    refused(ddb.create_table, "ValidationException", TableName=name2,
            BillingMode="PAY_PER_REQUEST",
            AttributeDefinitions=[{"AttributeName": "p",
                                   "AttributeType": "S"}],
            KeySchema=[{"AttributeName": "p", "KeyType": "HASH"}],
            Tags=[{"Key": str(i), "Value": str(i)} for i in range(51)])
    refused(ddb.describe_table, "ResourceNotFoundException",
            TableName=name2)


@pytest.mark.processes
def test_tags_and_ttl_outlive_a_restart(cluster, ddb, arn):
    """Tags and the TTL attribute are in the catalog node's store."""
    name = arn.split("/")[-1]
    ddb.tag_resource(ResourceArn=arn, Tags=[{"Key": "k", "Value": "v"}])
    ddb.update_time_to_live(TableName=name, TimeToLiveSpecification={
        "AttributeName": "exp", "Enabled": True})
    cluster.restart_all()
    ddb = cluster.client()
    assert tags(ddb, arn) == {"k": "v"}
    assert ddb.describe_time_to_live(TableName=name)[
        "TimeToLiveDescription"] == {"TimeToLiveStatus": "ENABLED",
                                     "AttributeName": "exp"}
