#!/usr/bin/env bash
# test_cli.sh — the AWS CLI (Debian's awscli 2.x) against a cluster this
# script starts with cluster.py --serve (or the one KV_ENDPOINT names):
# create-table, wait table-exists, put-item, get-item, describe-table,
# a query of a multi-attribute global index, list-tables (with the CLI's
# own pagination), delete-item, delete-table, and one refused request. JSON answers are read with python3, not jq.
# Prints one line per check and "N passed, N failed"; exits 1 on failure.
set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PY=${KV_PYTHON:-/usr/bin/python3}
AWS=${KV_AWS:-/usr/bin/aws}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/kv-cli-XXXXXX")
LAUNCHER=
passed=0
failed=0

cleanup() {
	if [ -n "$LAUNCHER" ]; then
		kill -TERM "$LAUNCHER" 2>/dev/null
		wait "$LAUNCHER" 2>/dev/null
	fi
	rm -rf "$WORK"
}
trap cleanup EXIT

die() {
	echo "test_cli.sh: $*" >&2
	[ -f "$WORK/launcher.log" ] && tail -n 40 "$WORK/launcher.log" >&2
	echo "$passed passed, $((failed + 1)) failed"
	exit 1
}

[ -x "$AWS" ] || die "no AWS CLI at $AWS (apt-get install awscli)"

if [ -n "${KV_ENDPOINT:-}" ]; then
	ENDPOINT=$KV_ENDPOINT
else
	"$PY" "$HERE/cluster.py" --serve "$WORK/state" >"$WORK/launcher.log" 2>&1 &
	LAUNCHER=$!
	for _ in $(seq 300); do
		[ -f "$WORK/state" ] && break
		kill -0 "$LAUNCHER" 2>/dev/null || die "the cluster did not start"
		sleep 0.1
	done
	[ -f "$WORK/state" ] || die "the cluster did not start in 30 s"
	read -r ENDPOINT _ _ <"$WORK/state"
fi

# No user configuration, dummy credentials, no retries, no pager.
export AWS_CONFIG_FILE=$WORK/aws-config
export AWS_SHARED_CREDENTIALS_FILE=$WORK/aws-credentials
export AWS_ACCESS_KEY_ID=AKIDTEST AWS_SECRET_ACCESS_KEY=secret
export AWS_DEFAULT_REGION=us-east-1 AWS_REGION=us-east-1
export AWS_MAX_ATTEMPTS=1 AWS_RETRY_MODE=standard AWS_PAGER=
unset AWS_PROFILE AWS_SESSION_TOKEN AWS_ENDPOINT_URL

ddb() {
	"$AWS" dynamodb --endpoint-url "$ENDPOINT" --output json \
		--cli-read-timeout 20 --cli-connect-timeout 5 "$@"
}

# json EXPR: evaluates EXPR on the JSON on stdin (bound to d), prints it.
json() {
	"$PY" -c 'import json, sys
text = sys.stdin.read()
d = json.loads(text) if text.strip() else {}
print(eval(sys.argv[1], {"d": d}))' "$1"
}

ok() {
	passed=$((passed + 1))
	echo "ok - $1"
}

not_ok() {
	failed=$((failed + 1))
	echo "FAIL - $1"
	shift
	for line in "$@"; do echo "    $line"; done
}

# expect NAME WANT EXPR FILE: EXPR on the JSON in FILE must print WANT.
expect() {
	local got
	got=$(json "$3" <"$4" 2>&1)
	if [ "$got" = "$2" ]; then
		ok "$1"
	else
		not_ok "$1" "$3: want '$2', got '$got'" "answer: $(head -c 600 "$4")"
	fi
}

# run NAME ARGS...: runs ddb ARGS into $WORK/out (stderr $WORK/err).
run() {
	local name=$1
	shift
	local rc=0
	ddb "$@" >"$WORK/out" 2>"$WORK/err" || rc=$?
	[ $rc -eq 0 ] && return 0
	not_ok "$name" "aws dynamodb $* exited $rc" "$(head -c 600 "$WORK/err")"
	return 1
}

SUFFIX=$("$PY" -c 'import uuid; print(uuid.uuid4().hex[:8])')
T=cli-$SUFFIX
T2=cli2-$SUFFIX

if run create-table create-table --table-name "$T" \
	--attribute-definitions AttributeName=pk,AttributeType=S \
	AttributeName=sk,AttributeType=N \
	--key-schema AttributeName=pk,KeyType=HASH \
	AttributeName=sk,KeyType=RANGE \
	--billing-mode PAY_PER_REQUEST; then
	expect create-table "$T" 'd["TableDescription"]["TableName"]' "$WORK/out"
	expect create-table-status True \
		'd["TableDescription"]["TableStatus"] in ("CREATING", "ACTIVE")' \
		"$WORK/out"
fi

run create-table-provisioned create-table --table-name "$T2" \
	--attribute-definitions AttributeName=id,AttributeType=B \
	--key-schema AttributeName=id,KeyType=HASH \
	--provisioned-throughput ReadCapacityUnits=2,WriteCapacityUnits=3 &&
	expect create-table-provisioned \
		"{'ReadCapacityUnits': 2, 'WriteCapacityUnits': 3}" \
		'{k: v for k, v in d["TableDescription"]["ProvisionedThroughput"].items() if k != "NumberOfDecreasesToday"}' \
		"$WORK/out"

run wait-table-exists wait table-exists --table-name "$T" &&
	ok wait-table-exists
run wait-table-exists-2 wait table-exists --table-name "$T2" &&
	ok wait-table-exists-2

ITEM='{"pk": {"S": "a"}, "sk": {"N": "1E+2"}, "v": {"S": "héllo"},
  "b": {"B": "AAEC/w=="}, "l": {"L": [{"N": "0.1"}, {"BOOL": true}]},
  "m": {"M": {"n": {"NULL": true}}}, "ss": {"SS": ["x"]}}'
if run put-item put-item --table-name "$T" --item "$ITEM" \
	--return-values ALL_OLD; then
	expect put-item-new "{}" 'd' "$WORK/out"
fi
run put-item-again put-item --table-name "$T" --item "$ITEM" \
	--return-values ALL_OLD &&
	expect put-item-all-old "héllo" 'd["Attributes"]["v"]["S"]' "$WORK/out"

if run get-item get-item --table-name "$T" --consistent-read \
	--key '{"pk": {"S": "a"}, "sk": {"N": "100"}}'; then
	expect get-item-number 100 'd["Item"]["sk"]["N"]' "$WORK/out"
	expect get-item-string "héllo" 'd["Item"]["v"]["S"]' "$WORK/out"
	expect get-item-binary "AAEC/w==" 'd["Item"]["b"]["B"]' "$WORK/out"
	expect get-item-document \
		"[{'N': '0.1'}, {'BOOL': True}] {'n': {'NULL': True}} ['x']" \
		'"%s %s %s" % (d["Item"]["l"]["L"], d["Item"]["m"]["M"], d["Item"]["ss"]["SS"])' \
		"$WORK/out"
fi

run get-item-projection get-item --table-name "$T" \
	--key '{"pk": {"S": "a"}, "sk": {"N": "100"}}' \
	--projection-expression "#v, sk" \
	--expression-attribute-names '{"#v": "v"}' &&
	expect get-item-projection "['sk', 'v']" 'sorted(d["Item"])' \
		"$WORK/out"

run get-item-missing get-item --table-name "$T" \
	--key '{"pk": {"S": "a"}, "sk": {"N": "101"}}' &&
	expect get-item-missing False '"Item" in d' "$WORK/out"

run put-item-binary-key put-item --table-name "$T2" \
	--item '{"id": {"B": "AAECAwQ="}, "x": {"N": "-1"}}' &&
	run get-item-binary-key get-item --table-name "$T2" \
		--key '{"id": {"B": "AAECAwQ="}}' &&
	expect get-item-binary-key "-1" 'd["Item"]["x"]["N"]' "$WORK/out"

if run describe-table describe-table --table-name "$T"; then
	expect describe-table-status ACTIVE 'd["Table"]["TableStatus"]' \
		"$WORK/out"
	expect describe-table-count 1 'd["Table"]["ItemCount"]' "$WORK/out"
	expect describe-table-keys "[('pk', 'HASH'), ('sk', 'RANGE')]" \
		'[(k["AttributeName"], k["KeyType"]) for k in d["Table"]["KeySchema"]]' \
		"$WORK/out"
	expect describe-table-arn \
		"arn:aws:dynamodb:us-east-1:000000000000:table/$T" \
		'd["Table"]["TableArn"]' "$WORK/out"
	expect describe-table-billing PAY_PER_REQUEST \
		'd["Table"]["BillingModeSummary"]["BillingMode"]' "$WORK/out"
fi

# A GSI with multi-attribute keys (two HASH, two RANGE attributes),
# queried on both partition key attributes and the first sort attribute.
T3=cli3-$SUFFIX
run create-table-multikey create-table --table-name "$T3" \
	--attribute-definitions AttributeName=pk,AttributeType=S \
	AttributeName=team,AttributeType=S AttributeName=season,AttributeType=N \
	AttributeName=round,AttributeType=N AttributeName=game,AttributeType=S \
	--key-schema AttributeName=pk,KeyType=HASH \
	--billing-mode PAY_PER_REQUEST --global-secondary-indexes '[{
	  "IndexName": "games", "Projection": {"ProjectionType": "KEYS_ONLY"},
	  "KeySchema": [{"AttributeName": "team", "KeyType": "HASH"},
	    {"AttributeName": "season", "KeyType": "HASH"},
	    {"AttributeName": "round", "KeyType": "RANGE"},
	    {"AttributeName": "game", "KeyType": "RANGE"}]}]' &&
	expect create-table-multikey "HASH HASH RANGE RANGE" \
		'" ".join(k["KeyType"] for k in d["TableDescription"]["GlobalSecondaryIndexes"][0]["KeySchema"])' \
		"$WORK/out"
run wait-table-exists-3 wait table-exists --table-name "$T3" &&
	ok wait-table-exists-3
for g in "a 10 x" "b 9 y" "c 10 w" "d 10 v"; do
	set -- $g
	run "put-item-multikey $1" put-item --table-name "$T3" --item \
		"{\"pk\": {\"S\": \"$1\"}, \"team\": {\"S\": \"t\"}, \"season\": {\"N\": \"2026\"}, \"round\": {\"N\": \"$2\"}, \"game\": {\"S\": \"$3\"}}"
done
# Indexes are asynchronous: read until the three entries are there.
for _ in $(seq 50); do
	ddb query --table-name "$T3" --index-name games \
		--key-condition-expression "team = :t AND season = :s AND #r = :r" \
		--expression-attribute-names '{"#r": "round"}' \
		--expression-attribute-values \
		'{":t": {"S": "t"}, ":s": {"N": "2026"}, ":r": {"N": "10"}}' \
		>"$WORK/out" 2>"$WORK/err" &&
		[ "$(json 'd["Count"]' <"$WORK/out")" = 3 ] && break
	sleep 0.1
done
expect query-multikey "['d', 'c', 'a']" \
	'[i["pk"]["S"] for i in d["Items"]]' "$WORK/out"

run list-tables list-tables &&
	expect list-tables True "\"$T\" in d[\"TableNames\"] and \"$T2\" in d[\"TableNames\"]" \
		"$WORK/out"
# One table a page: the CLI follows LastEvaluatedTableName itself.
run list-tables-paged list-tables --page-size 1 &&
	expect list-tables-paged True \
		"d[\"TableNames\"] == sorted(d[\"TableNames\"]) and \"$T\" in d[\"TableNames\"] and \"$T2\" in d[\"TableNames\"]" \
		"$WORK/out"

# A refused request: the CLI exits 254 and names the exception.
ddb get-item --table-name "nope-$SUFFIX" --key '{"pk": {"S": "a"}}' \
	>"$WORK/out" 2>"$WORK/err"
rc=$?
if [ $rc -eq 254 ] && grep -q "(ResourceNotFoundException)" "$WORK/err" &&
	grep -q "Requested resource not found" "$WORK/err"; then
	ok get-item-missing-table
else
	not_ok get-item-missing-table "exit $rc" "$(head -c 600 "$WORK/err")"
fi

run delete-item delete-item --table-name "$T" \
	--key '{"pk": {"S": "a"}, "sk": {"N": "1e2"}}' --return-values ALL_OLD &&
	expect delete-item-all-old "héllo" 'd["Attributes"]["v"]["S"]' \
		"$WORK/out"

for t in "$T" "$T2" "$T3"; do
	run "delete-table $t" delete-table --table-name "$t" &&
		expect "delete-table $t" DELETING \
			'd["TableDescription"]["TableStatus"]' "$WORK/out"
done
gone=0
for _ in $(seq 50); do
	if ddb list-tables >"$WORK/out" 2>"$WORK/err" &&
		[ "$(json "\"$T\" in d[\"TableNames\"] or \"$T2\" in d[\"TableNames\"]" <"$WORK/out")" = False ]; then
		gone=1
		break
	fi
	sleep 0.1
done
if [ $gone = 1 ]; then
	ok deleted-tables-leave-list-tables
else
	not_ok deleted-tables-leave-list-tables "still listed after 5 s" \
		"$(head -c 600 "$WORK/out")"
fi
run wait-table-not-exists wait table-not-exists --table-name "$T" &&
	ok wait-table-not-exists

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
