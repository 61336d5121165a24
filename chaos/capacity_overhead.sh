#!/usr/bin/env bash
# capacity_overhead.sh — what per-partition capacity accounting costs on
# GetItem throughput. Two clusters run side by side: one with accounting
# on (ceilings lifted so that nothing is throttled: every request still
# takes its bucket and is charged) and one started with --no-capacity.
# wrk drives GetItem (closed loop, 32 connections) against each in turn,
# ROUNDS times, alternating, so that both see the same noise on this
# shared machine; the medians and their ratio are printed.
# Usage: chaos/capacity_overhead.sh [SECONDS-PER-RUN] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-5}
rounds=${2:-5}
dir=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"' EXIT
. chaos/lib.sh
on_port=$(free_port)
off_port=$(free_port)
cluster_start on "$on_port" --partition-rcu 1000000000 \
	--partition-wcu 1000000000
cluster_start off "$off_port" --no-capacity
table='{"TableName":"bench","BillingMode":"PAY_PER_REQUEST","AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"}],"KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}]}'
for port in $on_port $off_port; do
	create_table "http://127.0.0.1:$port" "$table"
	# Load the 10,000 keys GetItem reads.
	KV_BENCH_OP=put KV_BENCH_KEYS=10000 wrk -t2 -c32 -d3s \
		-s chaos/wrk_item.lua "http://127.0.0.1:$port/" >/dev/null
done
rps() {
	KV_BENCH_OP=get KV_BENCH_KEYS=10000 wrk -t2 -c32 -d"${secs}s" \
		-s chaos/wrk_item.lua "http://127.0.0.1:$1/" |
		awk '/Requests\/sec/ { print $2 }'
}
on=() off=()
for r in $(seq "$rounds"); do
	on+=("$(rps "$on_port")")
	off+=("$(rps "$off_port")")
	printf 'round %d: accounting on %s req/s, off %s req/s\n' "$r" \
		"${on[-1]}" "${off[-1]}"
done
python3 - "${on[*]}" "${off[*]}" <<'PY'
import statistics, sys
on = [float(x) for x in sys.argv[1].split()]
off = [float(x) for x in sys.argv[2].split()]
mon, moff = statistics.median(on), statistics.median(off)
print("GetItem median: accounting on %.0f req/s, off %.0f req/s; "
      "on/off = %.3f (overhead %.1f %%)" % (mon, moff, mon / moff,
                                          100 * (1 - mon / moff)))
PY
