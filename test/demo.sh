#!/usr/bin/env bash
# test/demo.sh - the README's curl walk-through in one go: plays Metacontroller against `make run`.
# It creates the sample Rds through /sync, feeds each answer back until the instance is Ready,
# then deletes it through /finalize until the hook answers finalized: true. Needs curl and jq.
#
# Usage: bash test/demo.sh [http://127.0.0.1:8080]
set -euo pipefail
cd "$(dirname "$0")/.."
HOOKS=${1:-http://127.0.0.1:8080}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp test/testdata/curl/sync-create.json "$work/req.json"

call() { # call HOOK: POST the current request, feed the answer back
	curl -sf -XPOST "$HOOKS/$1" -H 'Content-Type: application/json' -d @"$work/req.json" >"$work/resp.json"
	jq -s -f test/testdata/curl/feed.jq "$work/req.json" "$work/resp.json" >"$work/next.json"
	mv "$work/next.json" "$work/req.json"
	jq -r --arg hook "$1" '"\($hook): status=\(.status.status // "-") ready=\(.status.conditions // [] | map(select(.type=="Ready"))[0] | "\(.status)/\(.reason)") children=\([.children[].metadata.name] | join(",")) resync=\(.resyncAfterSeconds // 0)s\(if .finalized then " finalized" else "" end)"' "$work/resp.json"
}

for _ in $(seq 60); do
	call sync
	[[ $(jq -r '.status.conditions // [] | map(select(.type=="Ready"))[0].status' "$work/resp.json") == True ]] && break
	sleep 2
done
jq '{endpoint: .status.endpoint, flavor: .status.flavor, version: .status.version}' "$work/resp.json"

jq '.finalizing = true | .parent.metadata.deletionTimestamp = (now | todate)' "$work/req.json" >"$work/next.json"
mv "$work/next.json" "$work/req.json"
for _ in $(seq 60); do
	call finalize
	[[ $(jq -r '.finalized' "$work/resp.json") == true ]] && exit 0
	sleep 2
done
echo "demo.sh: not finalized in time" >&2
exit 1
