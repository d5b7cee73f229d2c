#!/usr/bin/env bash
# The append path's cost of record times (on-disk format 2), measured against the last commit of format 1 in the same
# session (compare-builds.sh: JMH's OFF append and lone LOCAL commit, CommitLoad's OFF and LOCAL scenarios, the two
# builds alternating for five rounds). Results go to wal-bench/target/format-cost/ for BenchReport ("Record times").
#   wal-bench/format-cost.sh [BASELINE_COMMIT]
set -euo pipefail
cd "$(dirname "$0")/.."
exec wal-bench/compare-builds.sh "${1:-a06f8f4}" wal-bench/target/format-cost 5
