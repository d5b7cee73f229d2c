#!/usr/bin/env bash
# This build against an earlier commit's, measured in one session: JMH's OFF append (one thread, 64 B) and lone LOCAL
# commit, and CommitLoad's OFF and LOCAL scenarios, alternating between the two builds round by round so that both see
# the same fast and slow minutes of the disk. The median ratio per scenario is what to read (BuildComparison).
#   wal-bench/compare-builds.sh BASELINE_COMMIT OUT_DIR [ROUNDS]
# format-cost.sh is this script against the last commit of on-disk format 1.
set -euo pipefail
cd "$(dirname "$0")/.."
BASE="$1"
OUT="$2"
ROUNDS="${3:-5}"
SRC="$OUT/baseline-src"
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
for round in $(seq 1 "$ROUNDS"); do
  for build in current baseline; do
    echo "== round $round: $build"
    java "${FLAGS[@]}" -jar "$OUT/$build.jar" 'OffAppendBenchmark.waldenAppendOff|LoneCommitterBenchmark.waldenAppendLocal' \
      -f 1 -wi 3 -i 5 -jvmArgsAppend "-Dwalden.bench.dir=$DATA" \
      -rf json -rff "$OUT/$build-$round.jmh.json" >/dev/null
    java "${FLAGS[@]}" -cp "$OUT/$build.jar" io.walden.bench.CommitLoad --quick --dir "$DATA" \
      --only 'walden (off|local) fdatasync' --json "$OUT/$build-$round.load.json" >/dev/null
  done
done
java -cp "$OUT/current.jar" io.walden.bench.BuildComparison "$OUT" | tee "$OUT/comparison.md"
