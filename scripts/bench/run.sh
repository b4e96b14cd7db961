#!/usr/bin/env bash
# scripts/bench/run.sh — `make bench`: Custody against two minimal MCP servers
# (official Go SDK, mark3labs/mcp-go) on one in-memory get_matter tool.
#
# It builds every server with `go build -trimpath` into a temporary folder
# (the peers from this folder's own Go module, Custody's ./scripts/dev and
# ./scripts/custodyctl and the DynamoDB emulator (minidyn) from the main
# module), then runs the bench command on
# CPU 1 (`taskset -c 1`); that command starts each server in turn pinned to
# CPU 0, on a free loopback port, Custody on a fresh data folder, measures,
# stops it, and prints one side-by-side table. The same results are written
# as JSON (and the table as text) to scripts/bench/results/.
#
# Extra arguments go to the bench command, e.g.
#   scripts/bench/run.sh -duration 3s -warmup 1s -levels 1,8
#   scripts/bench/run.sh -targets go-sdk,mcp-go
# Nothing is downloaded at run time except Go modules through GOPROXY.
set -euo pipefail

server_cpu=0
client_cpu=1

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
export GOWORK=off # the bench module must never join the main one

work=$(mktemp -d "${TMPDIR:-/tmp}/custody-bench.XXXXXX")
bin="$work/bin"
bench_pid=""

# cleanup stops the bench (which stops its server), then, as a last resort,
# any process still running one of the binaries built into $bin (a server
# orphaned by a crash the bench's SIGKILL-on-parent-death did not cover),
# and removes the scratch folder.
cleanup() {
	local status=$?
	trap - EXIT INT TERM
	if [[ -n $bench_pid ]] && kill -0 "$bench_pid" 2>/dev/null; then
		kill -TERM "$bench_pid" 2>/dev/null || true
		wait "$bench_pid" 2>/dev/null || true
	fi
	local exe pid
	for exe in /proc/[0-9]*/exe; do
		pid=${exe#/proc/}
		pid=${pid%/exe}
		if [[ $(readlink "$exe" 2>/dev/null) == "$bin"/* ]]; then
			echo "bench: stopping leftover process $pid ($(readlink "$exe"))" >&2
			kill -KILL "$pid" 2>/dev/null || true
		fi
	done
	rm -rf "$work"
	exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

mkdir -p "$bin"
echo "bench: building into $bin" >&2
(cd "$here" && go build -trimpath -o "$bin/" . ./peer/gosdk ./peer/mcpgo)

targets="go-sdk,mcp-go,custody,go-sdk-2026,custody-2026,custody-dynamodb"
custody_built=1
if ! (cd "$root" && go build -trimpath -o "$bin/custody" ./scripts/dev &&
	go build -trimpath -tags dynamodb -o "$bin/custody-dynamodb" ./scripts/dev &&
	go build -trimpath -o "$bin/custodyctl" ./scripts/custodyctl &&
	go build -trimpath -o "$bin/minidyn" ./shared/store/dynamostore/dynamotest/cmd/minidyn); then
	echo "bench: WARNING: Custody's server did not build; measuring the peers only" >&2
	targets="go-sdk,mcp-go"
	custody_built=0
fi

pin=()
if command -v taskset >/dev/null && (($(nproc) > client_cpu)); then
	pin=(taskset -c "$client_cpu")
else
	echo "bench: WARNING: no taskset or fewer than 2 CPUs: client and server share CPUs" >&2
fi

results="$here/results"
mkdir -p "$results"
stamp=$(date -u +%Y%m%dT%H%M%SZ)

# The bench runs in the background so that a signal to this script reaches
# the trap at once (bash runs traps only between foreground commands).
${pin[@]+"${pin[@]}"} "$bin/bench" -bin "$bin" -work "$work" -server-cpu "$server_cpu" -client-cpu "$client_cpu" \
	-targets "$targets" -json "$results/$stamp.json" -text "$results/$stamp.txt" "$@" &
bench_pid=$!
status=0
wait "$bench_pid" || status=$?
bench_pid=""
if [[ -f $results/$stamp.json ]]; then
	cp "$results/$stamp.json" "$results/latest.json"
	cp "$results/$stamp.txt" "$results/latest.txt"
fi
if ((custody_built == 0)); then
	echo "bench: Custody was not measured (it did not build)" >&2
	status=1
fi
exit "$status"
