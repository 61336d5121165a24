# lib.sh — shell helpers for the benchmarks in chaos/: start a throwaway
# cluster in a temporary folder, call the DynamoDB API with curl, wait for
# a table. Source it from a script that has cd'ed to the repository root
# and set `dir` to its temporary folder (and cleans it up on exit).

# free_port prints a TCP port on 127.0.0.1 that was free a moment ago.
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# cluster_start NAME PORT [kv-node options...]: 3 nodes and a router from
# build/, files under $dir/NAME; waits until the router answers.
cluster_start() {
	local name=$1 port=$2
	shift 2
	local d=$dir/$name
	mkdir -p "$d"
	{
		echo "partitions 4"
		for i in 0 1 2; do echo "node ipc://$d/n$i.ipc $d/data$i"; done
		echo "router 127.0.0.1:$port"
	} >"$d/cluster.conf"
	for i in 0 1 2; do
		build/node/kv-node --config "$d/cluster.conf" --index $i "$@" \
			2>>"$d/log" &
	done
	build/router/kv-router --config "$d/cluster.conf" 2>>"$d/log" &
	for _ in $(seq 100); do
		curl -fs "http://127.0.0.1:$port/" >/dev/null && return 0
		sleep 0.1
	done
	echo "cluster $name did not start:" >&2
	tail -5 "$d/log" >&2
	return 1
}

# call URL OPERATION JSON: one request; fails on a non-200 answer.
call() {
	curl -fsS "$1/" -H "X-Amz-Target: DynamoDB_20120810.$2" \
		-H 'Content-Type: application/x-amz-json-1.0' -d "$3" >/dev/null
}

# create_table URL JSON: CreateTable, then wait until it is ACTIVE.
create_table() {
	call "$1" CreateTable "$2"
	local name
	name=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["TableName"])' "$2")
	for _ in $(seq 100); do
		curl -fsS "$1/" -H "X-Amz-Target: DynamoDB_20120810.DescribeTable" \
			-d "{\"TableName\":\"$name\"}" | grep -q '"ACTIVE"' && return 0
		sleep 0.05
	done
	echo "table $name never became ACTIVE" >&2
	return 1
}
