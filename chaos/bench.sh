#!/usr/bin/env bash
# bench.sh — GetItem, PutItem, hot-counter UpdateItem and Query (pages of
# 10 items from one partition) throughput through the router, measured
# with wrk (closed loop, 32 connections) against a fresh local cluster.
# The per-partition ceilings are lifted (capacity is still accounted):
# this measures the engine, not the 1000 WCU of one partition, which is
# the hot-partition experiment's subject (chaos/hot_partition/).
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
. chaos/lib.sh
port=$(free_port)
url=http://127.0.0.1:$port
cluster_start bench "$port" --partition-rcu 1000000000 \
	--partition-wcu 1000000000
create_table "$url" '{"TableName":"bench","BillingMode":"PAY_PER_REQUEST","AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"}],"KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}]}'
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
create_table "$url" '{"TableName":"benchq","BillingMode":"PAY_PER_REQUEST","AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},{"AttributeName":"sk","AttributeType":"N"}],"KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"sk","KeyType":"RANGE"}]}'
for i in $(seq 0 99); do
	call "$url" PutItem "{\"TableName\":\"benchq\",\"Item\":{\"pk\":{\"S\":\"q\"},\"sk\":{\"N\":\"$i\"},\"v\":{\"S\":\"$(printf 'x%.0s' $(seq 150))\"}}}"
done
run query "$secs"
