#!/usr/bin/env bash
# test/demo.sh - the README's curl walk-through in one go: plays Metacontroller against `make run`.
# It creates the sample Rds through /sync, feeds each answer back until the instance is Ready,
# then deletes it through /finalize until the hook answers finalized: true. Needs curl and jq.
# It works in a temporary directory and leaves nothing behind.
#
# Usage: bash test/demo.sh [http://127.0.0.1:8080]
# Environment: DEMO_TRIES (calls per phase, default 60), DEMO_INTERVAL (seconds between calls, 2).
set -euo pipefail
cd "$(dirname "$0")/.."
HOOKS=${1:-http://127.0.0.1:8080}
TRIES=${DEMO_TRIES:-60}
INTERVAL=${DEMO_INTERVAL:-2}

die() { printf 'demo.sh: %s\n' "$*" >&2; exit 1; }

for tool in curl jq; do
	command -v "$tool" >/dev/null || die "$tool is not installed"
done
curl -sf -o /dev/null --max-time 5 "$HOOKS/healthz" ||
	die "the hooks do not answer at $HOOKS/healthz: start them first (make run, in another terminal)"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp test/testdata/curl/sync-create.json "$work/req.json"

call() { # call HOOK: POST the current request, feed the answer back
	local rc=0
	curl -sS -f --max-time 15 -XPOST "$HOOKS/$1" -H 'Content-Type: application/json' -d @"$work/req.json" >"$work/resp.json" || rc=$?
	[[ $rc -eq 0 ]] || die "POST $HOOKS/$1 failed (curl exit code $rc)"
	jq -s -f test/testdata/curl/feed.jq "$work/req.json" "$work/resp.json" >"$work/next.json"
	mv "$work/next.json" "$work/req.json"
	jq -r --arg hook "$1" '"\($hook): status=\(.status.status // "-") ready=\(.status.conditions // [] | map(select(.type=="Ready"))[0] | "\(.status)/\(.reason)") children=\([.children[].metadata.name] | join(",")) resync=\(.resyncAfterSeconds // 0)s\(if .finalized then " finalized" else "" end)"' "$work/resp.json"
}
ready() { [[ $(jq -r '.status.conditions // [] | map(select(.type=="Ready"))[0].status' "$work/resp.json") == True ]]; }

for ((i = 1; i <= TRIES; i++)); do
	call sync
	ready && break
	((i == TRIES)) || sleep "$INTERVAL"
done
ready || die "the Rds is not Ready after $TRIES sync calls: not deleting it (see the last answer above)"
jq '{endpoint: .status.endpoint, flavor: .status.flavor, version: .status.version}' "$work/resp.json"

jq '.finalizing = true | .parent.metadata.deletionTimestamp = (now | todate)' "$work/req.json" >"$work/next.json"
mv "$work/next.json" "$work/req.json"
for ((i = 1; i <= TRIES; i++)); do
	call finalize
	[[ $(jq -r '.finalized' "$work/resp.json") == true ]] && exit 0
	((i == TRIES)) || sleep "$INTERVAL"
done
die "not finalized after $TRIES finalize calls"
