"""workloads.py — the generators of the chaos experiments, each with its
checker.

A workload creates its table (setup), runs one loop per client process
that records every request in the History (step), and after the run,
once the cluster is whole again, reads what it needs and hands the
history to its checker (check). check returns {checker: verdict}, each
verdict a dict with "valid" (True, False or "unknown") and the figures
and counterexamples the report shows.

Requests go out with retries off (a retried write whose first attempt
took effect would hide a lost or doubled write), so every outcome is the
cluster's own.
"""

import os
import sys
import time

from boto3.dynamodb.types import TypeDeserializer
from botocore.exceptions import ClientError

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from check import acked, bank, idgen, linear  # noqa: E402
from check.indexes import converged  # noqa: E402

_des = TypeDeserializer()


def plain(item):
    return {k: _des.deserialize(v) for k, v in item.items()}


def make_table(ddb, name, key="pk", gsis=None, attrs=None):
    kw = dict(TableName=name, BillingMode="PAY_PER_REQUEST",
              AttributeDefinitions=[{"AttributeName": key,
                                     "AttributeType": "S"}] + (attrs or []),
              KeySchema=[{"AttributeName": key, "KeyType": "HASH"}])
    if gsis:
        kw["GlobalSecondaryIndexes"] = gsis
    ddb.create_table(**kw)
    ddb.get_waiter("table_exists").wait(
        TableName=name, WaiterConfig={"Delay": 0.5, "MaxAttempts": 60})


def get_consistent(ddb, table, keys, key="pk", attempts=20):
    """{key value: plain item} for every key that exists, read with
    BatchGetItem ConsistentRead (unprocessed keys asked again)."""
    out = {}
    keys = list(keys)
    for i in range(0, len(keys), 100):
        want = {table: {"Keys": [{key: {"S": k}} for k in keys[i:i + 100]],
                        "ConsistentRead": True}}
        for _ in range(attempts):
            try:
                r = ddb.batch_get_item(RequestItems=want)
            except ClientError:
                time.sleep(0.2)
                continue
            for it in r["Responses"].get(table, []):
                it = plain(it)
                out[it[key]] = it
            want = r.get("UnprocessedKeys") or {}
            if not want:
                break
            time.sleep(0.1)
        if want:
            raise RuntimeError("keys still unread after %d attempts" %
                               attempts)
    return out


class Workload:
    name = None
    table = None

    def __init__(self, rng, plant=None):
        self.rng = rng
        self.plant = plant

    def setup(self, ddb):
        make_table(ddb, self.table)

    def step(self, hist, process, ddb, rng):
        raise NotImplementedError

    def check(self, hist, ddb):
        raise NotImplementedError


class AckedWrites(Workload):
    """Every process writes items of its own (PutItem, keys never
    reused). Checker: every acknowledged write is there afterwards, and
    no write that certainly failed is."""
    name = "acked-writes"
    table = "chaos-acked"

    def __init__(self, rng, plant=None):
        super().__init__(rng, plant)
        self.n = {}

    def step(self, hist, process, ddb, rng):
        n = self.n.get(process, 0)
        self.n[process] = n + 1
        key = "p%d-%d" % (process, n)
        value = rng.randrange(1 << 30)
        hist.call(process, "write", key, value, lambda: ddb.put_item(
            TableName=self.table,
            Item={"pk": {"S": key}, "v": {"N": str(value)}}))

    def check(self, hist, ddb):
        writes = [r for r in hist.ops if r["f"] == "write"]
        found = get_consistent(ddb, self.table, [r["key"] for r in writes])
        return {"acked-writes": acked.check(writes, {
            k: int(v["v"]) for k, v in found.items()})}


class IdGen(Workload):
    """The ID generator of SEEDS.md section 3: clients take ranges of ids
    with one atomic update of a counter item each (SET lastID =
    if_not_exists(lastID, :min) + :count, ReturnValues UPDATED_NEW: the
    new value N means N-count+1 .. N is the client's). Checker: no id
    handed out twice, and every range a client got was allocated."""
    name = "idgen"
    table = "chaos-ids"
    KEYS = 3

    def step(self, hist, process, ddb, rng):
        key = "boards.e%d" % rng.randrange(self.KEYS)
        count = rng.randrange(1, 51)
        rec, r = hist.call(process, "take", key, [count], lambda: (
            ddb.update_item(
                TableName=self.table, Key={"pk": {"S": key}},
                UpdateExpression="SET lastID = if_not_exists(lastID, :min)"
                                 " + :count",
                ExpressionAttributeValues={":min": {"N": "0"},
                                           ":count": {"N": str(count)}},
                ReturnValues="UPDATED_NEW")))
        if r is not None:
            hi = int(r["Attributes"]["lastID"]["N"])
            rec["value"] = [count, hi - count + 1, hi]

    def check(self, hist, ddb):
        takes = [r for r in hist.ops if r["f"] == "take"]
        keys = sorted(set(r["key"] for r in takes))
        final = {k: int(v["lastID"]) for k, v in
                 get_consistent(ddb, self.table, keys).items()}
        return {"idgen": idgen.check(takes, final)}


class Register(Workload):
    """Per-key compare-and-set registers: reads (GetItem ConsistentRead),
    writes (PutItem of a value never written before) and
    compare-and-sets (UpdateItem with ConditionExpression v = :old) on a
    few keys. Checker: every key's history is linearizable
    (check/linear.py)."""
    name = "register"
    table = "chaos-reg"
    KEYS = 8

    def __init__(self, rng, plant=None):
        super().__init__(rng, plant)
        self.seen = {}  # (process, key): the last value it read or wrote
        self.n = {}

    def step(self, hist, process, ddb, rng):
        key = "k%d" % rng.randrange(self.KEYS)
        roll = rng.random()
        if roll < 0.5:
            rec, r = hist.call(process, "read", key, None, lambda: (
                ddb.get_item(TableName=self.table, Key={"pk": {"S": key}},
                             ConsistentRead=True)))
            if r is not None:
                item = r.get("Item")
                rec["value"] = int(item["v"]["N"]) if item else None
                if item:
                    self.seen[(process, key)] = rec["value"]
            return
        n = self.n.get(process, 0) + 1
        self.n[process] = n
        value = process * 1000000 + n  # never written before
        old = self.seen.get((process, key))
        if roll < 0.75 or old is None:
            rec, r = hist.call(process, "write", key, value, lambda: (
                ddb.put_item(TableName=self.table,
                             Item={"pk": {"S": key},
                                   "v": {"N": str(value)}})))
        else:
            rec, r = hist.call(process, "cas", key, [old, value], lambda: (
                ddb.update_item(
                    TableName=self.table, Key={"pk": {"S": key}},
                    UpdateExpression="SET v = :new",
                    ConditionExpression="v = :old",
                    ExpressionAttributeValues={
                        ":new": {"N": str(value)},
                        ":old": {"N": str(old)}})))
        if rec["type"] == "ok":
            self.seen[(process, key)] = value

    def check(self, hist, ddb):
        ops = [r for r in hist.ops if r["f"] in ("read", "write", "cas")]
        v = linear.check(ops)
        v["anomalies"] = v["anomalies"][:3]
        return {"linearizable": v}


class Bank(Workload):
    """The bank of the transactions issue: ACCOUNTS accounts of 100
    each; transfers move an amount between two with TransactWriteItems
    (the debit conditional on the balance), and reads take every account
    in one TransactGetItems. Checker: the total is the same in every
    read and at the end, and no balance goes negative."""
    name = "bank"
    table = "chaos-bank"
    ACCOUNTS = 10
    START = 100

    def setup(self, ddb):
        super().setup(ddb)
        for i in range(self.ACCOUNTS):
            ddb.put_item(TableName=self.table,
                         Item={"pk": {"S": "a%d" % i},
                               "balance": {"N": str(self.START)}})

    def step(self, hist, process, ddb, rng):
        if rng.random() < 0.3:
            rec, r = hist.call(process, "read", None, None, lambda: (
                ddb.transact_get_items(TransactItems=[
                    {"Get": {"TableName": self.table,
                             "Key": {"pk": {"S": "a%d" % i}}}}
                    for i in range(self.ACCOUNTS)])))
            if r is not None:
                rec["value"] = {
                    x["Item"]["pk"]["S"]: int(x["Item"]["balance"]["N"])
                    for x in r["Responses"] if x.get("Item")}
            return
        a, b = rng.sample(range(self.ACCOUNTS), 2)
        amount = rng.randrange(1, 20)
        hist.call(process, "transfer", None, ["a%d" % a, "a%d" % b, amount],
                  lambda: ddb.transact_write_items(TransactItems=[
                      {"Update": {
                          "TableName": self.table, "Key": {"pk": {"S": "a%d" % a}},
                          "UpdateExpression": "SET balance = balance - :m",
                          "ConditionExpression": "balance >= :m",
                          "ExpressionAttributeValues": {
                              ":m": {"N": str(amount)}}}},
                      {"Update": {
                          "TableName": self.table, "Key": {"pk": {"S": "a%d" % b}},
                          "UpdateExpression": "SET balance = balance + :m",
                          "ExpressionAttributeValues": {
                              ":m": {"N": str(amount)}}}}]))

    def check(self, hist, ddb):
        # Transactions left prepared by a killed coordinator are decided
        # by their participants within seconds (node/txn.h): read until
        # the accounts are unlocked and stable.
        final = None
        for _ in range(40):
            try:
                r = ddb.transact_get_items(TransactItems=[
                    {"Get": {"TableName": self.table,
                             "Key": {"pk": {"S": "a%d" % i}}}}
                    for i in range(self.ACCOUNTS)])
                final = {x["Item"]["pk"]["S"]: int(x["Item"]["balance"]["N"])
                         for x in r["Responses"] if x.get("Item")}
                break
            except ClientError:
                time.sleep(0.5)
        return {"bank": bank.check(
            [r for r in hist.ops if r["f"] in ("read", "transfer")], final,
            self.ACCOUNTS, self.ACCOUNTS * self.START)}


class Gsi(Workload):
    """Writes that move items between the keys of a global index, take
    them out of it (no index key) and delete them. Checker: once writes
    stop and the outboxes drain, the index equals the projection of the
    table (check/indexes.py), entry for entry."""
    name = "gsi"
    table = "chaos-gsi"
    ITEMS = 200

    def setup(self, ddb):
        make_table(ddb, self.table, gsis=[{
            "IndexName": "by_g",
            "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"},
                          {"AttributeName": "n", "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "ALL"}}],
            attrs=[{"AttributeName": "g", "AttributeType": "S"},
                   {"AttributeName": "n", "AttributeType": "N"}])

    def step(self, hist, process, ddb, rng):
        key = "i%d" % rng.randrange(self.ITEMS)
        roll = rng.random()
        if roll < 0.1:
            hist.call(process, "delete", key, None, lambda: ddb.delete_item(
                TableName=self.table, Key={"pk": {"S": key}}))
            return
        item = {"pk": {"S": key}, "n": {"N": str(rng.randrange(1000))},
                "w": {"N": str(process)}}
        if roll < 0.9:  # else sparse: not in the index
            item["g"] = {"S": "g%d" % rng.randrange(10)}
        hist.call(process, "write", key, item.get("g", {}).get("S"),
                  lambda: ddb.put_item(TableName=self.table, Item=item))

    def check(self, hist, ddb):
        res = converged(ddb, self.table, ["by_g"], wait=30.0)
        missing, extra = res["by_g"]
        return {"index-converged": {
            "valid": not missing and not extra,
            "missing": len(missing), "extra": len(extra),
            "counterexamples": {"missing": missing[:3],
                                "extra": extra[:3]}}}


WORKLOADS = {w.name: w for w in (AckedWrites, IdGen, Register, Bank, Gsi)}
