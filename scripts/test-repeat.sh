#!/usr/bin/env bash
# `make test-repeat`: the test suite three times in a row while two busy loops hold the CPUs,
# as a check that no test depends on an idle machine. The busy loops are ours: they are killed
# by their pids however this script ends.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${VENV:-.venv}/bin
RUNS=${RUNS:-3}

busy_pids=()
stop_busy() {
    for pid in "${busy_pids[@]}"; do
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
}
trap stop_busy EXIT

for _ in 1 2; do
    bash -c 'while :; do :; done' &
    busy_pids+=("$!")
done
echo "test-repeat: busy loops running as pids ${busy_pids[*]}" >&2

for run in $(seq 1 "$RUNS"); do
    echo "test-repeat: run $run of $RUNS" >&2
    "$BIN/pytest" -q -p no:cacheprovider
done
echo "test-repeat: $RUNS runs passed under two busy loops" >&2
