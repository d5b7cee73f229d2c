#!/usr/bin/env bash
# The append path's cost of record times (on-disk format 2), measured against the last commit of format 1 in the same
# session: JMH's OffAppendBenchmark (one thread, OFF, 64 B) and CommitLoad's OFF and LOCAL scenarios, alternating
# between the two builds for five rounds so that both see the same fast and slow minutes. Results go to
# wal-bench/target/format-cost/ for BenchReport ("Record times").
#   wal-bench/format-cost.sh [BASELINE_COMMIT]
set -euo pipefail
cd "$(dirname "$0")/.."
BASE="${1:-a06f8f4}" # the last commit whose records had no time
OUT=wal-bench/target/format-cost
SRC=wal-bench/target/format1-src
DATA="${WALDEN_BENCH_DIR:-wal-bench/target/bench-data}"
mkdir -p "$OUT" "$DATA"
rm -f "$OUT"/*.json

mvn -B -q -DskipTests package -pl wal-bench -am
if [ ! -f "$OUT/baseline.jar" ] || [ "$(cat "$OUT/baseline.commit" 2>/dev/null)" != "$BASE" ]; then
  rm -rf "$SRC"
  git worktree add -f "$SRC" "$BASE" >/dev/null
  (cd "$SRC" && mvn -B -q -DskipTests -Dwalden.image.skip=true package -pl wal-bench -am)
  cp "$SRC/wal-bench/target/walden-bench.jar" "$OUT/baseline.jar"
  echo "$BASE" > "$OUT/baseline.commit"
  git worktree remove --force "$SRC"
fi
cp wal-bench/target/walden-bench.jar "$OUT/current.jar"

FLAGS=(--add-opens=java.base/java.lang.reflect=ALL-UNNAMED --add-opens=java.base/java.nio=ALL-UNNAMED
       --add-exports=java.base/sun.nio.ch=ALL-UNNAMED --add-exports=java.base/jdk.internal.ref=ALL-UNNAMED
       --add-opens=java.base/java.lang=ALL-UNNAMED -Dchronicle.analytics.disable=true
       -Dchronicle.announcer.disable=true -Dorg.slf4j.simpleLogger.defaultLogLevel=warn "-Dwalden.bench.dir=$DATA")
for round in 1 2 3 4 5; do
  for build in current baseline; do
    echo "== round $round: $build"
    java "${FLAGS[@]}" -jar "$OUT/$build.jar" 'OffAppendBenchmark.walden' -p payloadSize=64 -p writerDelayMs=200 \
      -f 1 -wi 3 -i 5 -jvmArgsAppend "-Dwalden.bench.dir=$DATA" -rf json -rff "$OUT/$build-$round.jmh.json" >/dev/null
    java "${FLAGS[@]}" -cp "$OUT/$build.jar" io.walden.bench.CommitLoad --quick --dir "$DATA" \
      --only 'walden (off|local) fdatasync' --json "$OUT/$build-$round.load.json" >/dev/null
  done
done
echo "results in $OUT"
