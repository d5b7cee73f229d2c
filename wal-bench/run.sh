#!/usr/bin/env bash
# Runs Walden's benchmark suite and rewrites docs/benchmarks.md from the results.
#   wal-bench/run.sh           quick mode, about 8 minutes
#   wal-bench/run.sh --full    every payload, sync method and committer count (for publishing; ~30 min)
# Benchmark files go to wal-bench/target/bench-data (set WALDEN_BENCH_DIR to measure another file system).
set -euo pipefail
cd "$(dirname "$0")/.."
MODE="${1:---quick}"
case "$MODE" in --quick|--full) ;; *) echo "usage: $0 [--quick|--full]" >&2; exit 2 ;; esac

mvn -B -q -DskipTests package -pl wal-server,wal-bench -am
JAR=wal-bench/target/walden-bench.jar
DATA="${WALDEN_BENCH_DIR:-wal-bench/target/bench-data}"
mkdir -p "$DATA"
FLAGS=(--add-opens=java.base/java.lang.reflect=ALL-UNNAMED --add-opens=java.base/java.nio=ALL-UNNAMED
       --add-exports=java.base/sun.nio.ch=ALL-UNNAMED --add-exports=java.base/jdk.internal.ref=ALL-UNNAMED
       --add-opens=java.base/java.lang=ALL-UNNAMED --add-exports=jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED
       -Dchronicle.analytics.disable=true -Dchronicle.announcer.disable=true
       -Dorg.slf4j.simpleLogger.defaultLogLevel=warn "-Dwalden.bench.dir=$DATA")

echo "== JMH (-prof gc; -foe: a failing benchmark fails the run)"
if [ "$MODE" = "--full" ]; then JMH_OPTS=(-f 3); else JMH_OPTS=(-f 1 -wi 3 -i 5); fi
# writerDelayMs=60000 shows the append without the background writer's periodic force (outside the OFF contract).
java "${FLAGS[@]}" -jar "$JAR" 'OffAppendBenchmark|LoneCommitterBenchmark|ReadBenchmark|TimeSeekBenchmark|TimeSeekFirstUseBenchmark' -prof gc -foe true "${JMH_OPTS[@]}" \
  -p writerDelayMs=200,60000 \
  -jvmArgsAppend "-Dwalden.bench.dir=$DATA" -rf json -rff wal-bench/target/jmh.json

echo "== Commit load generator"
java "${FLAGS[@]}" -cp "$JAR" io.walden.bench.CommitLoad "$MODE" --dir "$DATA" --json wal-bench/target/commit-load.json

echo "== Replication load generator (primary + replica over loopback, and through a 10 ms / 100 ms delaying proxy)"
java "${FLAGS[@]}" -cp "$JAR" io.walden.bench.ReplicationLoad "$MODE" --dir "$DATA" --json wal-bench/target/replication-load.json

echo "== Compression load generator (JSON events; NONE, LZ4, ZSTD side by side)"
java "${FLAGS[@]}" -cp "$JAR" io.walden.bench.CompressionLoad "$MODE" --dir "$DATA" --json wal-bench/target/compression-load.json

echo "== Archive load generator (LOCAL x16 with and without an archiver, side by side)"
java "${FLAGS[@]}" -cp "$JAR" io.walden.bench.ArchiveLoad "$MODE" --dir "$DATA" --json wal-bench/target/archive-load.json

echo "== Sharing a flush across logs: one journal, each own force, sequential and parallel forces, syncfs (docs/group-commit.md)"
java "${FLAGS[@]}" -Dwalden.bench.dir="$DATA" -cp "$JAR" io.walden.bench.FlushSharingBench 3 16 64 | tee wal-bench/target/flush-sharing.txt

echo "== Many logs in one process (WalStore: N logs x 1 committer against 1 log x N; a store's footprint)"
java "${FLAGS[@]}" -cp "$JAR" io.walden.bench.StoreLoad "$MODE" --dir "$DATA" --json wal-bench/target/store-load.json

echo "== HTTP load generator (walden.jar serve as a child process, Netty clients, 1-256 connections)"
FLOOR=()
if command -v gcc >/dev/null 2>&1 && gcc -O2 -o wal-bench/target/http-floor wal-bench/src/main/c/http_floor.c; then
  FLOOR=(--floor wal-bench/target/http-floor)
else
  echo "gcc not found: the machine's HTTP floor (a minimal C epoll responder) is not measured" >&2
fi
# --postgres: pgbench runs in the same rounds as the sidecar and the embedded log (skipped, and said so, without PostgreSQL)
java "${FLAGS[@]}" -cp "$JAR" io.walden.bench.HttpLoad "$MODE" --jar wal-server/target/walden.jar "${FLOOR[@]}" \
  --postgres wal-bench/postgres.sh \
  --dir "$DATA" --json wal-bench/target/http-load.json

echo "== Record times: the append path against the last build of on-disk format 1, alternating (about 5 minutes)"
wal-bench/format-cost.sh

echo "== PostgreSQL peer (pgbench; skipped, and said so, when PostgreSQL is not installed)"
wal-bench/pgbench.sh "$DATA" wal-bench/target/pgbench.json "$([ "$MODE" = "--full" ] && echo 30 || echo 10)"

java "${FLAGS[@]}" -cp "$JAR" io.walden.bench.BenchReport wal-bench/target/jmh.json wal-bench/target/commit-load.json \
  docs/benchmarks.md wal-bench/target/replication-load.json wal-bench/target/pgbench.json wal-bench/target/http-load.json \
  wal-bench/target/compression-load.json wal-bench/target/archive-load.json wal-bench/target/store-load.json
