#!/usr/bin/env bash
# PostgreSQL as the benchmark peer (a throwaway cluster from postgres.sh, on the same file system as Walden's
# benchmark files): pgbench running a one-row INSERT (64-byte payload) per transaction with 1, 4, 16, 64 and 256
# clients. Writes JSON for BenchReport; when PostgreSQL is not installed it says so in the JSON (and on stderr) and
# exits 0: install it with `apt-get install postgresql`.
#   wal-bench/pgbench.sh DATA_DIR OUT_JSON [SECONDS]
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
DATA_DIR="$1"
OUT="$2"
SECONDS_PER_RUN="${3:-10}"
mkdir -p "$DATA_DIR"
PGDIR="$(cd "$DATA_DIR" && pwd)/pg-$$"
set +e
STARTED=$("$HERE/postgres.sh" start "$PGDIR")
rc=$?
set -e
if [ "$rc" = 3 ]; then
  echo "PostgreSQL not installed (apt-get install postgresql): skipping the pgbench peer" >&2
  printf '{"skipped":"PostgreSQL is not installed (apt-get install postgresql)","results":[]}\n' > "$OUT"
  exit 0
elif [ "$rc" != 0 ]; then
  exit "$rc"
fi
trap '"$HERE/postgres.sh" stop "$PGDIR"' EXIT
read -r PGBIN SOCKET PORT <<<"$(echo "$STARTED" | tail -1)"
AS=()
[ "$(id -u)" = 0 ] && AS=(runuser -u postgres --)
VERSION=$("$PGBIN/postgres" --version)
RESULTS=""
for c in 1 4 16 64 256; do
  j=$(( c < 2 ? c : 2 ))
  TPS=$("${AS[@]}" "$PGBIN/pgbench" -h "$SOCKET" -p "$PORT" -U postgres -n -f "$SOCKET/insert.sql" -c "$c" -j "$j" \
        -T "$SECONDS_PER_RUN" postgres 2>"$SOCKET/pgbench.err" | awk '/^tps = / {print $3; exit}' || true)
  if [ -z "$TPS" ]; then
    echo "pgbench with $c clients failed:" >&2
    cat "$SOCKET/pgbench.err" >&2
  fi
  echo "pgbench one-row INSERT, synchronous_commit=on, $c clients: $TPS tps"
  RESULTS="$RESULTS${RESULTS:+,}{\"clients\":$c,\"tps\":${TPS:-0}}"
done
printf '{"version":"%s","seconds":%s,"results":[%s]}\n' "$VERSION" "$SECONDS_PER_RUN" "$RESULTS" > "$OUT"
echo "wrote $OUT"
