#!/usr/bin/env bash
# run.sh — build a libFuzzer target with clang (ASan + UBSan) and run it for
# a bounded time on a copy of its seed corpus.
#   tests/fuzz/run.sh TARGET SECONDS [OUTDIR]
# TARGET is expr (tests/fuzz/expr_fuzz.c: the expression library) or http
# (tests/fuzz/http_fuzz.c: the router's HTTP parser and body reader). New
# interesting inputs land in
# OUTDIR/corpus-TARGET (default build/fuzz); a crash leaves its input in
# OUTDIR and fails the run. The last line reports the executions done.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
target=${1:?target}
secs=${2:?seconds}
out=${3:-$root/build/fuzz}
cc=$(command -v clang-14 || command -v clang || true)
[ -n "$cc" ] || { echo "fuzz: clang-14 is not installed (./kv build installs it)"; exit 1; }
mkdir -p "$out/corpus-$target"
bin=$out/${target}_fuzz
# Every core source: the target may reach any of them.
extra=()
maxlen=4200
case "$target" in
expr) ;;
http)
	extra=(-I "$root/router" -I "$root/router/http"
		"$root/router/http/http_parse.c" "$root/router/http/http_inflate.c"
		"$root/router/json_read.c" -ljansson -lz)
	maxlen=65536 ;;
*) echo "fuzz: no target $target (expr, http)"; exit 2 ;;
esac
"$cc" -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-I "$root/core" "$root"/core/*.c "$here/${target}_fuzz.c" \
	"${extra[@]}" -lxxhash -o "$bin"
cp -n "$here/corpus/$target"/* "$out/corpus-$target/" 2>/dev/null || true
cd "$out"
log=$out/$target.log
set +e
"$bin" -max_total_time="$secs" -dict="$here/$target.dict" \
	-max_len="$maxlen" -print_final_stats=1 "$out/corpus-$target" >"$log" 2>&1
rc=$?
set -e
execs=$(awk '/stat::number_of_executed_units/ { print $NF }' "$log")
if [ $rc -ne 0 ]; then
	tail -n 40 "$log"
	echo "fuzz $target: FAILED after ${execs:-?} executions (inputs in $out)"
	exit 1
fi
echo "fuzz $target: ${execs:-?} executions in ${secs}s, no finding"
