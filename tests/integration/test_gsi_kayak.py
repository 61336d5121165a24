"""test_gsi_kayak.py — seed 000's single-table model end to end: kayak
rentals with generic keys PK/SK, six overloaded GSIs (PK1/SK1 ...
PK6/SK6) created up front and projecting everything, sparse (an item
fills in only the index keys its access patterns need), every item with
an entityType, ULID-like time-sortable ids, a version prefix on every
partition key, and a materialized graph for the many-to-many relation
that repeats (an employee who worked at a store several times: an edge
item with two mirror-image GSIs). The model's eight access patterns run
against the cluster and answer what the data says; then the indexes
equal their table (./kv check indexes).
"""

import random
import time

from test_gsi import query_all, until_converged

V = "v1"
SEED = 20260000
STORES = ["S%02d" % i for i in range(4)]
CITIES = ["Bergen", "Oslo", "Tromso", "Bodo"]
EMPLOYEES = ["E%02d" % i for i in range(6)]
CUSTOMERS = ["C%02d" % i for i in range(5)]


def S(x):
    return {"S": x}


def ulid(rnd, t):
    """A time-sortable id: the time, then randomness."""
    return "%010d%06d" % (t, rnd.randrange(10 ** 6))


def create(ddb, name):
    keys = ["PK", "SK"] + ["%s%d" % (k, i) for i in range(1, 7)
                           for k in ("PK", "SK")]
    ddb.create_table(
        TableName=name, BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": k, "AttributeType": "S"}
                              for k in keys],
        KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"},
                   {"AttributeName": "SK", "KeyType": "RANGE"}],
        GlobalSecondaryIndexes=[
            {"IndexName": "GSI%d" % i,
             "KeySchema": [{"AttributeName": "PK%d" % i, "KeyType": "HASH"},
                           {"AttributeName": "SK%d" % i,
                            "KeyType": "RANGE"}],
             "Projection": {"ProjectionType": "ALL"}} for i in range(1, 7)])
    end = time.monotonic() + 30
    while True:
        t = ddb.describe_table(TableName=name)["Table"]
        if t["TableStatus"] == "ACTIVE" and all(
                g["IndexStatus"] == "ACTIVE"
                for g in t["GlobalSecondaryIndexes"]):
            return
        assert time.monotonic() < end
        time.sleep(0.1)


def model():
    """The items, and what each access pattern should answer."""
    rnd = random.Random(SEED)
    items, want = [], {}
    store_pk = dict((s, "%s#store#storeULID#%s" % (V, s)) for s in STORES)
    for s, city in zip(STORES, CITIES):
        items.append({"PK": S(store_pk[s]), "SK": S("%s#store" % V),
                      "entityType": S("store"), "city": S(city),
                      "PK1": S("%s#stores" % V),
                      "SK1": S("%s#city#%s#%s" % (V, city, s))})
    inventory = {}
    for s in STORES:
        n = rnd.randrange(2, 6)
        inventory[s] = n
        for k in range(n):
            items.append({"PK": S(store_pk[s]),
                          "SK": S("%s#kayak#%s-K%d" % (V, s, k)),
                          "entityType": S("kayak"),
                          "model": S(rnd.choice(["sea", "river"]))})
    # Employment: an employee may have worked at a store several times;
    # current employees also appear in the store's collection.
    ever, stores_of, current = {}, {}, {}
    t = 1_700_000_000
    for e in EMPLOYEES:
        for _ in range(rnd.randrange(1, 4)):
            s = rnd.choice(STORES)
            t += rnd.randrange(1000, 100000)
            edge = ulid(rnd, t)
            items.append({
                "PK": S("%s#employment#%s" % (V, edge)),
                "SK": S("%s#employment" % V),
                "entityType": S("employment"), "employee": S(e),
                "store": S(s),
                "PK2": S(store_pk[s]),
                "SK2": S("%s#employee#%s#%s" % (V, e, edge)),
                "PK3": S("%s#employee#%s" % (V, e)),
                "SK3": S("%s#store#%s#%s" % (V, s, edge))})
            ever.setdefault(s, set()).add(e)
            stores_of.setdefault(e, set()).add(s)
        last = rnd.choice(sorted(stores_of[e]))
        current.setdefault(last, set()).add(e)
        items.append({"PK": S(store_pk[last]),
                      "SK": S("%s#employee#%s" % (V, e)),
                      "entityType": S("storeEmployee")})
    # Rentals: edges from customers to stores; active ones carry GSI4.
    active, history_store, history_cust = {}, {}, {}
    for c in CUSTOMERS:
        items.append({"PK": S("%s#customer#%s" % (V, c)),
                      "SK": S("%s#customer" % V),
                      "entityType": S("customer")})
        for _ in range(rnd.randrange(1, 5)):
            s = rnd.choice(STORES)
            t += rnd.randrange(1000, 100000)
            r = ulid(rnd, t)
            it = {"PK": S("%s#rental#%s" % (V, r)), "SK": S("%s#rental" % V),
                  "entityType": S("rental"), "customer": S(c),
                  "store": S(s),
                  "PK3": S("%s#customer#%s" % (V, c)),
                  "SK3": S("%s#rental#%s" % (V, r)),
                  "PK5": S(store_pk[s]),
                  "SK5": S("%s#rental#%s" % (V, r))}
            if rnd.random() < 0.5:
                it["PK4"] = S("%s#customer#%s#active" % (V, c))
                it["SK4"] = S("%s#rental#%s" % (V, r))
                active.setdefault(c, []).append(r)
            items.append(it)
            history_store.setdefault(s, []).append(r)
            history_cust.setdefault(c, []).append(r)
    want.update(inventory=inventory, ever=ever, stores_of=stores_of,
                current=current, active=active,
                history_store=history_store, history_cust=history_cust,
                store_pk=store_pk)
    return items, want


def q(ddb, name, index, pk_attr, pk, sk_attr=None, prefix=None,
      forward=True):
    kw = dict(TableName=name, ScanIndexForward=forward,
              ExpressionAttributeNames={"#p": pk_attr},
              ExpressionAttributeValues={":p": S(pk)},
              KeyConditionExpression="#p = :p")
    if index is not None:
        kw["IndexName"] = index
    if prefix is not None:
        kw["KeyConditionExpression"] += " AND begins_with(#s, :s)"
        kw["ExpressionAttributeNames"]["#s"] = sk_attr
        kw["ExpressionAttributeValues"][":s"] = S(prefix)
    return query_all(ddb, **kw)


def test_the_kayak_models_eight_patterns(ddb, unique):
    name = "kayak-" + unique
    create(ddb, name)
    items, w = model()
    for it in items:
        ddb.put_item(TableName=name, Item=it)
    until_converged(ddb, name, indexes=["GSI%d" % i for i in range(1, 7)])

    # 1. All store locations (GSI1), in city order.
    got = q(ddb, name, "GSI1", "PK1", "%s#stores" % V)
    assert [i["city"]["S"] for i in got] == sorted(CITIES)
    for s in STORES:
        pk = w["store_pk"][s]
        # 2. A store's inventory (base table, begins_with on SK).
        got = q(ddb, name, None, "PK", pk, "SK", "%s#kayak#" % V)
        assert len(got) == w["inventory"][s]
        assert {i["entityType"]["S"] for i in got} == {"kayak"}
        # 3. Its current employees (base table).
        got = q(ddb, name, None, "PK", pk, "SK", "%s#employee#" % V)
        assert {i["SK"]["S"].split("#")[-1] for i in got} == \
            w["current"].get(s, set())
        # 4. Everyone who ever worked there (GSI2 on employment edges).
        got = q(ddb, name, "GSI2", "PK2", pk)
        assert {i["employee"]["S"] for i in got} == w["ever"].get(s, set())
        # 7. Its rental history, newest first (GSI5).
        got = q(ddb, name, "GSI5", "PK5", pk, forward=False)
        assert [i["PK"]["S"].split("#")[-1] for i in got] == \
            sorted(w["history_store"].get(s, []), reverse=True)
    for e in EMPLOYEES:
        # 5. Every store of an employee (GSI3, the mirror of GSI2).
        got = q(ddb, name, "GSI3", "PK3", "%s#employee#%s" % (V, e),
                "SK3", "%s#store#" % V)
        assert {i["store"]["S"] for i in got} == w["stores_of"][e]
    for c in CUSTOMERS:
        # 6. A customer's active rentals across locations (GSI4, sparse).
        got = q(ddb, name, "GSI4", "PK4", "%s#customer#%s#active" % (V, c))
        assert [i["PK"]["S"].split("#")[-1] for i in got] == \
            sorted(w["active"].get(c, []))
        # 8. Its rental history across locations (GSI3 on rental edges).
        got = q(ddb, name, "GSI3", "PK3", "%s#customer#%s" % (V, c),
                "SK3", "%s#rental#" % V)
        assert [i["PK"]["S"].split("#")[-1] for i in got] == \
            sorted(w["history_cust"][c])
    # GSI6 was created up front and nothing uses it: it holds nothing.
    assert ddb.scan(TableName=name, IndexName="GSI6")["Count"] == 0

    # A rental returned: its GSI4 keys go, and so does its entry.
    c = next(c for c in CUSTOMERS if w["active"].get(c))
    r = w["active"][c][0]
    ddb.update_item(TableName=name,
                    Key={"PK": S("%s#rental#%s" % (V, r)),
                         "SK": S("%s#rental" % V)},
                    UpdateExpression="REMOVE PK4, SK4")
    until_converged(ddb, name, indexes=["GSI4"])
    got = q(ddb, name, "GSI4", "PK4", "%s#customer#%s#active" % (V, c))
    assert r not in [i["PK"]["S"].split("#")[-1] for i in got]
