#!/usr/bin/env bash
# bench.sh — GetItem, PutItem, hot-counter UpdateItem and Query (pages of
# 10 items from one partition) throughput through the router, measured
# with wrk (closed loop, 32 connections) against a fresh local cluster.
# Usage: chaos/bench.sh [SECONDS]  (./kv bench runs it). Prints one line
# per operation: requests/s, p50 and p99 latency, non-200 answers.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-10}
command -v wrk >/dev/null || {
	[ "$(id -u)" -eq 0 ] && s=() || s=(sudo)
	"${s[@]}" apt-get install -y -qq wrk >/dev/null
}
dir=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
{
	echo "partitions 4"
	for i in 0 1 2; do echo "node ipc://$dir/n$i.ipc $dir/data$i"; done
	echo "router 127.0.0.1:$port"
} >"$dir/bench.conf"
for i in 0 1 2; do build/node/kv-node --config "$dir/bench.conf" --index $i 2>>"$dir/log" & done
build/router/kv-router --config "$dir/bench.conf" 2>>"$dir/log" &
url=http://127.0.0.1:$port
for _ in $(seq 100); do curl -fs "$url/" >/dev/null && break; sleep 0.1; done
call() {
	curl -fsS "$url/" -H "X-Amz-Target: DynamoDB_20120810.$1" \
		-H 'Content-Type: application/x-amz-json-1.0' -d "$2" >/dev/null
}
call CreateTable '{"TableName":"bench","BillingMode":"PAY_PER_REQUEST","AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"}],"KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}]}'
for _ in $(seq 100); do
	curl -fsS "$url/" -H "X-Amz-Target: DynamoDB_20120810.DescribeTable" \
		-d '{"TableName":"bench"}' | grep -q '"ACTIVE"' && break
	sleep 0.05
done
run() {
	KV_BENCH_OP=$1 KV_BENCH_KEYS=10000 wrk -t2 -c32 -d"${2}s" --latency \
		-s chaos/wrk_item.lua "$url/" >"$dir/$1.out"
	local rps p50 p99 bad
	rps=$(awk '/Requests\/sec/ { print $2 }' "$dir/$1.out")
	p50=$(awk '$1 == "50%" { print $2 }' "$dir/$1.out")
	p99=$(awk '$1 == "99%" { print $2 }' "$dir/$1.out")
	bad=$(awk '/Non-2xx/ { print $5 }' "$dir/$1.out")
	printf '%-8s %10s req/s   p50 %-9s p99 %-9s non-200: %s\n' \
		"$1" "$rps" "$p50" "$p99" "${bad:-0}"
}
echo "kv bench: router + 3 nodes on $(nproc) cores, wrk -t2 -c32, ${secs}s each, 150-byte items, 10,000 keys"
run put "$secs"
run get "$secs"
run counter "$secs"
call CreateTable '{"TableName":"benchq","BillingMode":"PAY_PER_REQUEST","AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},{"AttributeName":"sk","AttributeType":"N"}],"KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"sk","KeyType":"RANGE"}]}'
for _ in $(seq 100); do
	curl -fsS "$url/" -H "X-Amz-Target: DynamoDB_20120810.DescribeTable" \
		-d '{"TableName":"benchq"}' | grep -q '"ACTIVE"' && break
	sleep 0.05
done
for i in $(seq 0 99); do
	call PutItem "{\"TableName\":\"benchq\",\"Item\":{\"pk\":{\"S\":\"q\"},\"sk\":{\"N\":\"$i\"},\"v\":{\"S\":\"$(printf 'x%.0s' $(seq 150))\"}}}"
done
run query "$secs"

