#!/usr/bin/env bash
# Named logs over HTTP (issue #37): wrk's connections spread over N named logs, against the same connections all on
# one named log and all on the log `default` (/v1/records), at 16 connections x 16 logs and 64 x 64, at `local` and
# `off`; 64-byte bodies (named-logs.lua). Goal: N logs >= 0.8 x one log. docs/benchmarks.md, "Named logs over HTTP".
#
# One `walden.jar serve` process (a temporary data directory, a free port, --replication-listen none) serves the
# whole run, warmed up once: every target then meets the same JIT-compiled server, heap and disk, and differs only in
# the paths it posts to (fresh processes per window would measure warm-up and log creation instead). The three
# targets of a cell run back to back in a round, in an order that rotates round to round, so each round's ratios
# come from adjacent windows of the same minute (this disk's latency drifts 2-3x between minutes); each window has
# an unmeasured lead-in that wakes the logs it uses (a log idle for 5 s gives its WAL buffers back). Every answer
# must be 2xx (wrk's non-2xx and socket error counts must be 0) and the server must have appended at least as many
# records as wrk counted answers: otherwise the run stops, saying which window failed.
# The machine's raw fdatasync (`walden test-fsync`, 4 KiB writes on a preallocated file, same file system) is
# measured before every round and after the last.
#
# Needs wrk (Debian: apt-get install -y wrk), curl and java; builds nothing (build the jar first:
# mvn -B -q -pl wal-server -am -DskipTests package), and is not part of mvn verify. On a shared machine, hold the
# benchmark lock:
#   flock /tmp/walden-mvn.lock wal-bench/named-logs.sh [JAR [ROUNDS [SECONDS [OUT_DIR]]]]
# JAR defaults to wal-server/target/walden.jar, ROUNDS to 3, SECONDS (each measured window) to 10, OUT_DIR to
# wal-bench/target/named-logs (windows.tsv: every window; summary.md: the tables). CELLS ("16 64": connections, and
# as many logs) and LEVELS ("local off") narrow a run; WARMUP (seconds, default 3) warms the server up on each target
# of each cell and level before the first round.
# Benchmark files go to wal-bench/target/bench-data (set WALDEN_BENCH_DIR to measure another file system).
set -euo pipefail
cd "$(dirname "$0")/.."
JAR="${1:-wal-server/target/walden.jar}"
ROUNDS="${2:-3}"
SECONDS_PER_WINDOW="${3:-10}"
OUT="${4:-wal-bench/target/named-logs}"
CELLS="${CELLS:-16 64}"
LEVELS="${LEVELS:-local off}"
WARMUP="${WARMUP:-3}"
LEAD_IN=2
THREADS=2
LUA="wal-bench/named-logs.lua"

fail() { echo "named-logs.sh: $*" >&2; exit 1; }
command -v wrk >/dev/null || fail "wrk is not installed (Debian: apt-get install -y wrk); this benchmark drives the server with it"
command -v curl >/dev/null || fail "curl is not installed (apt-get install -y curl)"
[ -f "$JAR" ] || fail "no jar at $JAR: build it first (mvn -B -q -pl wal-server -am -DskipTests package) or name one"
MAX_LOGS=0
for c in $CELLS; do [ "$c" -gt "$MAX_LOGS" ] && MAX_LOGS=$c; done

DATA="${WALDEN_BENCH_DIR:-wal-bench/target/bench-data}"
mkdir -p "$DATA" "$OUT"
RUN_DIR="$(mktemp -d "$(cd "$DATA" && pwd)/named-logs.XXXXXX")"
SERVER_PID=""
stop_server() {
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill "$SERVER_PID"
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  rm -rf "$RUN_DIR"
}
trap stop_server EXIT

# A port nothing listens on, away from the server's defaults (7400, 7401).
free_port() {
  local p
  for _ in $(seq 1 100); do
    p=$(( 20000 + RANDOM % 40000 ))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return; fi
  done
  fail "no free port found"
}

raw_fdatasync_us() {
  mkdir -p "$RUN_DIR/fsync"
  java -jar "$JAR" test-fsync --dir "$RUN_DIR/fsync" --seconds 1 \
    | awk '/write \+ fdatasync/ {print $5; exit}'
}

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }                # utime + stime of a process
# The CPU seconds of this shell's waited-for children (wrk among them); `times` runs in this shell, not a subshell,
# whose own children's count would start at zero.
children_cpu_s() {
  times > "$RUN_DIR/times"
  tail -1 "$RUN_DIR/times" | awk '{ t = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); t += a[1] * 60 + a[2] } print t }'
}
appends_total() { curl -sf "$BASE/metrics" | awk '/^walden_appends_total[{ ]/ {s += $NF} END {printf "%.0f\n", s}'; }

PORT=$(free_port)
BASE="http://127.0.0.1:$PORT"
java -jar "$JAR" serve --data-dir "$RUN_DIR/data" --http "127.0.0.1:$PORT" --replication-listen none \
  > "$OUT/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 1 600); do
  curl -sf "$BASE/ready" >/dev/null 2>&1 && break
  kill -0 "$SERVER_PID" 2>/dev/null || fail "walden serve exited at start (see $OUT/server.log)"
  sleep 0.1
done
curl -sf "$BASE/ready" >/dev/null || fail "walden serve did not become ready within 60 s (see $OUT/server.log)"
echo "walden serve on $BASE (pid $SERVER_PID), data in $RUN_DIR/data"

CREATE_START=$(date +%s.%N)
for k in $(seq 1 "$MAX_LOGS"); do
  code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
         -d "{\"name\":\"log-$k\"}" "$BASE/v1/logs")
  [ "$code" = 201 ] || fail "POST /v1/logs for log-$k answered $code, not 201"
done
echo "created $MAX_LOGS logs in $(awk -v a="$CREATE_START" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}') s"

# path_of TARGET CONNECTIONS -> wrk's PATH and N (named-logs.lua)
path_of() {
  case "$1" in
    many) echo "/v1/logs/log-%d/records $2" ;;
    one) echo "/v1/logs/log-1/records 1" ;;
    default) echo "/v1/records 1" ;;
  esac
}

# window ROUND LEVEL CONNECTIONS TARGET: one measured wrk run, appended to windows.tsv
window() {
  local round=$1 level=$2 conns=$3 target=$4 path n
  read -r path n <<<"$(path_of "$target" "$conns")"
  wrk -t "$THREADS" -c "$conns" -d "${LEAD_IN}s" -s "$LUA" "$BASE" -- "$path" "$n" "$level" > /dev/null
  local appends0 server0 client0 t0 result
  appends0=$(appends_total); server0=$(cpu_ticks "$SERVER_PID"); children_cpu_s > "$RUN_DIR/client0"; t0=$(date +%s.%N)
  result=$(wrk -t "$THREADS" -c "$conns" -d "${SECONDS_PER_WINDOW}s" --latency -s "$LUA" "$BASE" -- "$path" "$n" "$level" \
           | grep '^RESULT') || fail "wrk printed no result in round $round, $level, $conns connections, $target"
  local t1 server1 client1 appends1
  t1=$(date +%s.%N); server1=$(cpu_ticks "$SERVER_PID"); children_cpu_s > "$RUN_DIR/client1"; appends1=$(appends_total)
  client0=$(cat "$RUN_DIR/client0"); client1=$(cat "$RUN_DIR/client1")
  local -A r
  for kv in ${result#RESULT }; do r[${kv%%=*}]=${kv#*=}; done
  local errors=$(( r[status_errors] + r[connect] + r[read] + r[write] + r[timeout] ))
  [ "$errors" = 0 ] || fail "round $round, $level, $conns connections, $target: wrk counted ${r[status_errors]} non-2xx answers and socket errors connect ${r[connect]}, read ${r[read]}, write ${r[write]}, timeout ${r[timeout]}"
  [ $(( appends1 - appends0 )) -ge "${r[requests]}" ] \
    || fail "round $round, $level, $conns connections, $target: wrk counted ${r[requests]} answers but the server appended $(( appends1 - appends0 )) records"
  awk -v round="$round" -v level="$level" -v conns="$conns" -v target="$target" -v req="${r[requests]}" \
      -v dur="${r[duration_us]}" -v p50="${r[p50_us]}" -v p99="${r[p99_us]}" -v s0="$server0" -v s1="$server1" \
      -v c0="$client0" -v c1="$client1" -v t0="$t0" -v t1="$t1" 'BEGIN {
        wall = t1 - t0
        printf "%s\t%s\t%s\t%s\t%.0f\t%d\t%d\t%.2f\t%.2f\n", round, level, conns, target, req / (dur / 1e6), p50, p99,
               (s1 - s0) / 100 / wall, (c1 - c0) / wall }' >> "$OUT/windows.tsv"
  tail -1 "$OUT/windows.tsv" | awk -F'\t' '{printf "  %-7s %6s req/s  p50 %5s us  p99 %6s us  server cpu %s  wrk cpu %s\n", $4, $5, $6, $7, $8, $9}'
}

printf 'round\tlevel\tconnections\ttarget\treq_s\tp50_us\tp99_us\tserver_cpu\twrk_cpu\n' > "$OUT/windows.tsv"
: > "$OUT/fsync.tsv"
for level in $LEVELS; do
  echo "warming the server up at $level ($WARMUP s on each target of each cell)"
  for c in $CELLS; do
    for target in default one many; do
      read -r path n <<<"$(path_of "$target" "$c")"
      wrk -t "$THREADS" -c "$c" -d "${WARMUP}s" -s "$LUA" "$BASE" -- "$path" "$n" "$level" > /dev/null
    done
  done
done
TARGETS=(one many default)
for round in $(seq 1 "$ROUNDS"); do
  us=$(raw_fdatasync_us)
  printf '%s\t%s\n' "$round" "$us" >> "$OUT/fsync.tsv"
  echo "== round $round (raw write + fdatasync: $us us)"
  for level in $LEVELS; do
    for c in $CELLS; do
      echo " $level, $c connections ($c logs in 'many')"
      for i in 0 1 2; do
        window "$round" "$level" "$c" "${TARGETS[$(( (i + round - 1) % 3 ))]}"
      done
    done
  done
done
us=$(raw_fdatasync_us)
printf 'after\t%s\n' "$us" >> "$OUT/fsync.tsv"
echo "== after the last round: raw write + fdatasync $us us"

# Per cell: the median (p25, p75) over rounds of each round's many/one and many/default, and each target's medians.
awk -F'\t' -v goal=0.8 '
  function commas(x,   s) { s = sprintf("%.0f", x); while (s ~ /[0-9][0-9][0-9][0-9]/) sub(/[0-9][0-9][0-9]($|,)/, ",&", s); return s }
  function sortn(a, n,   i, j, t) { for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t } }
  function q(a, n, p,   x, i) { sortn(a, n); x = 1 + p * (n - 1); i = int(x); return i >= n ? a[n] : a[i] + (x - i) * (a[i + 1] - a[i]) }
  function med(key, col,   a, n, r) { n = 0; for (r = 1; r <= rounds; r++) if ((key SUBSEP r) in v) { a[++n] = v[key, r, col] } return q(a, n, 0.5) }
  FNR == 1 { next }
  { key = $2 SUBSEP $3 SUBSEP $4; v[key, $1] = 1; for (c = 5; c <= 9; c++) v[key, $1, c] = $c
    if ($1 > rounds) rounds = $1; if (!(($2 SUBSEP $3) in seen)) { seen[$2 SUBSEP $3] = 1; cells[++ncells] = $2 SUBSEP $3 } }
  END {
    print "| level | connections × logs | one log req/s | N logs req/s | `default` req/s | N logs / one log: median (p25, p75) | N logs / `default` | verdict (≥ 0.8 ×) |"
    print "|---|---|---:|---:|---:|---|---|---|"
    for (i = 1; i <= ncells; i++) {
      split(cells[i], lc, SUBSEP); one = cells[i] SUBSEP "one"; many = cells[i] SUBSEP "many"; def = cells[i] SUBSEP "default"
      n = 0; m = 0
      for (r = 1; r <= rounds; r++) { a[++n] = v[many, r, 5] / v[one, r, 5]; b[++m] = v[many, r, 5] / v[def, r, 5] }
      ratio = q(a, n, 0.5)
      printf "| `%s` | %d × %d | %s | %s | %s | **%.2f ×** (%.2f, %.2f) | %.2f × (%.2f, %.2f) | %s |\n", lc[1], lc[2], lc[2],
        commas(med(one, 5)), commas(med(many, 5)), commas(med(def, 5)), ratio, q(a, n, 0.25), q(a, n, 0.75), q(b, m, 0.5), q(b, m, 0.25), q(b, m, 0.75),
        (ratio >= goal ? "met" : "not met")
    }
    print ""
    print "| level | connections | target | req/s | p50 µs | p99 µs | server cpu | wrk cpu |"
    print "|---|---|---|---:|---:|---:|---:|---:|"
    for (i = 1; i <= ncells; i++) {
      split(cells[i], lc, SUBSEP)
      split("one many default", ts, " ")
      for (t = 1; t <= 3; t++) {
        key = cells[i] SUBSEP ts[t]; name = ts[t] == "one" ? "one log" : ts[t] == "many" ? lc[2] " logs" : "`default`"
        printf "| `%s` | %d | %s | %s | %d | %d | %.2f | %.2f |\n", lc[1], lc[2], name, commas(med(key, 5)), med(key, 6), med(key, 7), med(key, 8), med(key, 9)
      }
    }
  }' "$OUT/windows.tsv" > "$OUT/summary.md"
{
  echo
  echo "Medians over $ROUNDS rounds of ${SECONDS_PER_WINDOW} s windows; raw write + fdatasync (4 KiB, preallocated), µs, before each round and after the last: $(cut -f2 "$OUT/fsync.tsv" | paste -sd' ')."
} >> "$OUT/summary.md"
cat "$OUT/summary.md"
