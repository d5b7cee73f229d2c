#!/usr/bin/env bash
# PostgreSQL as the benchmark peer: a throwaway cluster on the same file system as Walden's benchmark files,
# synchronous_commit=on, fsync=on, and pgbench running a one-row INSERT (64-byte payload) per transaction with
# 1, 4, 16, 64 and 256 clients. Writes JSON for BenchReport; when PostgreSQL is not installed it says so in the JSON
# (and on stderr) and exits 0: install it with `apt-get install postgresql`.
#   wal-bench/pgbench.sh DATA_DIR OUT_JSON [SECONDS]
set -euo pipefail
DATA_DIR="$1"
OUT="$2"
SECONDS_PER_RUN="${3:-10}"
PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
if [ -z "$PGBIN" ] || [ ! -x "$PGBIN/initdb" ] || [ ! -x "$PGBIN/pgbench" ]; then
  echo "PostgreSQL not installed (apt-get install postgresql): skipping the pgbench peer" >&2
  printf '{"skipped":"PostgreSQL is not installed (apt-get install postgresql)","results":[]}\n' > "$OUT"
  exit 0
fi
mkdir -p "$DATA_DIR"
PGDIR=$(mktemp -d "$(cd "$DATA_DIR" && pwd)/pg-XXXXXX")
AS=()
if [ "$(id -u)" = 0 ]; then
  chown postgres "$PGDIR"
  AS=(runuser -u postgres --)
fi
PORT=$(( 20000 + RANDOM % 20000 ))
cleanup() {
  "${AS[@]}" "$PGBIN/pg_ctl" -D "$PGDIR/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$PGDIR"
}
trap cleanup EXIT
"${AS[@]}" "$PGBIN/initdb" -D "$PGDIR/data" -A trust -U postgres >/dev/null
"${AS[@]}" "$PGBIN/pg_ctl" -D "$PGDIR/data" -w -l "$PGDIR/server.log" \
  -o "-p $PORT -k $PGDIR -c listen_addresses='' -c synchronous_commit=on -c fsync=on -c wal_sync_method=fdatasync -c max_connections=300" \
  start >/dev/null
PSQL=("${AS[@]}" "$PGBIN/psql" -h "$PGDIR" -p "$PORT" -U postgres -q -X)
"${PSQL[@]}" -c "CREATE TABLE t (id bigserial PRIMARY KEY, payload bytea NOT NULL)" postgres
PAYLOAD=$(printf 'x%.0s' $(seq 64) | od -An -v -tx1 | tr -d ' \n')
echo "INSERT INTO t (payload) VALUES ('\\x$PAYLOAD'::bytea);" > "$PGDIR/insert.sql"
chmod a+r "$PGDIR/insert.sql"
VERSION=$("$PGBIN/postgres" --version)
RESULTS=""
for c in 1 4 16 64 256; do
  j=$(( c < 2 ? c : 2 ))
  TPS=$("${AS[@]}" "$PGBIN/pgbench" -h "$PGDIR" -p "$PORT" -U postgres -n -f "$PGDIR/insert.sql" -c "$c" -j "$j" \
        -T "$SECONDS_PER_RUN" postgres 2>"$PGDIR/pgbench.err" | awk '/^tps = / {print $3; exit}' || true)
  if [ -z "$TPS" ]; then
    echo "pgbench with $c clients failed:" >&2
    cat "$PGDIR/pgbench.err" >&2
  fi
  echo "pgbench one-row INSERT, synchronous_commit=on, $c clients: $TPS tps"
  RESULTS="$RESULTS${RESULTS:+,}{\"clients\":$c,\"tps\":${TPS:-0}}"
done
printf '{"version":"%s","seconds":%s,"results":[%s]}\n' "$VERSION" "$SECONDS_PER_RUN" "$RESULTS" > "$OUT"
echo "wrote $OUT"
