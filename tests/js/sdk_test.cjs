// sdk_test.cjs — the AWS SDK for JavaScript v3 against a running cluster,
// as an application uses it: the low-level client and the document
// client of @aws-sdk/lib-dynamodb, a table created and waited for, items
// put and read back, a Query paged by the SDK's paginator, a transaction
// written and read, and a failed condition answered as the SDK's own
// error class. Run by tests/integration/test_js_sdk.py:
//   KV_JS_MODULES=DIR node tests/js/sdk_test.cjs ENDPOINT
// (DIR: a node_modules folder holding the two packages). Exits non-zero,
// naming the step, on any difference.
"use strict";
const path = require("path");
const mods = process.env.KV_JS_MODULES;
const ddbLib = require(path.join(mods, "@aws-sdk/client-dynamodb"));
const docLib = require(path.join(mods, "@aws-sdk/lib-dynamodb"));

const endpoint = process.argv[2];
const client = new ddbLib.DynamoDBClient({
  endpoint, region: "us-east-1", maxAttempts: 3,
  credentials: { accessKeyId: "AKIDJS", secretAccessKey: "js" },
});
const doc = docLib.DynamoDBDocumentClient.from(client);

function check(what, ok, got) {
  if (!ok) {
    console.error("FAILED: " + what + ": " + JSON.stringify(got));
    process.exit(1);
  }
  console.log("ok: " + what);
}

async function main() {
  const name = "js-" + Math.random().toString(16).slice(2, 10);
  await client.send(new ddbLib.CreateTableCommand({
    TableName: name, BillingMode: "PAY_PER_REQUEST",
    AttributeDefinitions: [{ AttributeName: "pk", AttributeType: "S" },
                           { AttributeName: "sk", AttributeType: "N" }],
    KeySchema: [{ AttributeName: "pk", KeyType: "HASH" },
                { AttributeName: "sk", KeyType: "RANGE" }],
  }));
  const waited = await ddbLib.waitUntilTableExists(
    { client, maxWaitTime: 30, minDelay: 1 }, { TableName: name });
  check("the table exists", waited.state === "SUCCESS", waited);

  for (let i = 0; i < 25; i++)
    await doc.send(new docLib.PutCommand({ TableName: name,
      Item: { pk: "orders", sk: i, amount: i * 1.5, tags: new Set(["a"]),
              nested: { list: [1, "two", null, true] } } }));
  const got = await doc.send(new docLib.GetCommand({ TableName: name,
    Key: { pk: "orders", sk: 7 }, ConsistentRead: true }));
  check("an item reads back as written",
        got.Item && got.Item.amount === 10.5 && got.Item.tags.has("a") &&
        got.Item.nested.list[1] === "two" && got.Item.nested.list[2] === null,
        got.Item);

  const seen = [];
  let pages = 0;
  for await (const page of docLib.paginateQuery({ client: doc, pageSize: 10 },
      { TableName: name, KeyConditionExpression: "pk = :p AND sk >= :s",
        ExpressionAttributeValues: { ":p": "orders", ":s": 5 } })) {
    pages++;
    for (const it of page.Items) seen.push(it.sk);
  }
  check("the paginator reads every item in order, 10 a page",
        pages >= 2 && seen.length === 20 && seen[0] === 5 && seen[19] === 24,
        { pages, seen });

  await doc.send(new docLib.TransactWriteCommand({ TransactItems: [
    { Update: { TableName: name, Key: { pk: "orders", sk: 1 },
                UpdateExpression: "SET amount = amount - :m",
                ConditionExpression: "amount >= :m",
                ExpressionAttributeValues: { ":m": 1 } } },
    { Put: { TableName: name, Item: { pk: "audit", sk: 1, moved: 1 } } },
  ] }));
  const tg = await doc.send(new docLib.TransactGetCommand({ TransactItems: [
    { Get: { TableName: name, Key: { pk: "orders", sk: 1 } } },
    { Get: { TableName: name, Key: { pk: "audit", sk: 1 } } },
  ] }));
  check("a transaction's writes read back together",
        tg.Responses[0].Item.amount === 0.5 && tg.Responses[1].Item.moved === 1,
        tg.Responses);

  try {
    await doc.send(new docLib.TransactWriteCommand({ TransactItems: [
      { ConditionCheck: { TableName: name, Key: { pk: "orders", sk: 2 },
                          ConditionExpression: "attribute_not_exists(pk)" } },
      { Put: { TableName: name, Item: { pk: "audit", sk: 2 } } },
    ] }));
    check("a failed condition cancels the transaction", false, "committed");
  } catch (e) {
    check("a failed condition cancels the transaction",
          e instanceof ddbLib.TransactionCanceledException &&
          e.CancellationReasons[0].Code === "ConditionalCheckFailed" &&
          e.CancellationReasons[1].Code === "None", e);
  }
  try {
    await doc.send(new docLib.PutCommand({ TableName: name,
      Item: { pk: "orders", sk: 3 }, ConditionExpression: "attribute_not_exists(pk)" }));
    check("a failed condition is the SDK's error class", false, "written");
  } catch (e) {
    check("a failed condition is the SDK's error class",
          e instanceof ddbLib.ConditionalCheckFailedException &&
          e.$metadata.httpStatusCode === 400, e);
  }
  await client.send(new ddbLib.DeleteTableCommand({ TableName: name }));
  console.log("all ok");
}

main().catch((e) => { console.error("FAILED: " + (e.stack || e)); process.exit(1); });
