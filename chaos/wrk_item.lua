-- wrk_item.lua — requests on table "bench" (hash key pk of type S), for
-- ./kv bench. The operation comes from the environment: KV_BENCH_OP=get|put
-- (random keys of KV_BENCH_KEYS=N), counter (UpdateItem of one hot
-- counter item: SET n = if_not_exists(n, :z) + :one) or query (pages of 10
-- items from one item collection of table "benchq").
local op = os.getenv("KV_BENCH_OP") or "get"
local keys = tonumber(os.getenv("KV_BENCH_KEYS") or "10000")
local pad = string.rep("x", 150)

wrk.method = "POST"
wrk.headers["Content-Type"] = "application/x-amz-json-1.0"

function setup(thread)
	thread:set("seed", math.random(1, 1000000))
end

function init(args)
	math.randomseed(seed or os.time())
end

request = function()
	local k = math.random(0, keys - 1)
	if op == "counter" then
		wrk.headers["X-Amz-Target"] = "DynamoDB_20120810.UpdateItem"
		return wrk.format(nil, "/", nil,
			'{"TableName":"bench","Key":{"pk":{"S":"hot"}},' ..
			'"UpdateExpression":"SET n = if_not_exists(n, :z) + :one",' ..
			'"ExpressionAttributeValues":{":z":{"N":"0"},":one":{"N":"1"}}}')
	end
	if op == "query" then
		-- One item collection of 100 items; a page of 10 from a random
		-- place in it.
		wrk.headers["X-Amz-Target"] = "DynamoDB_20120810.Query"
		return wrk.format(nil, "/", nil, string.format(
			'{"TableName":"benchq","KeyConditionExpression":' ..
			'"pk = :p AND sk >= :s","ExpressionAttributeValues":' ..
			'{":p":{"S":"q"},":s":{"N":"%d"}},"Limit":10}',
			math.random(0, 89)))
	end
	if op == "put" then
		wrk.headers["X-Amz-Target"] = "DynamoDB_20120810.PutItem"
		return wrk.format(nil, "/", nil, string.format(
			'{"TableName":"bench","Item":{"pk":{"S":"key%d"},' ..
			'"v":{"S":"%s"},"n":{"N":"%d"}}}', k, pad, k))
	end
	wrk.headers["X-Amz-Target"] = "DynamoDB_20120810.GetItem"
	return wrk.format(nil, "/", nil, string.format(
		'{"TableName":"bench","Key":{"pk":{"S":"key%d"}}}', k))
end

local errors = 0
response = function(status, headers, body)
	if status ~= 200 then
		errors = errors + 1
	end
end
