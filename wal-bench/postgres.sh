#!/usr/bin/env bash
# A throwaway PostgreSQL cluster, the benchmarks' peer: synchronous_commit=on, fsync=on, wal_sync_method=fdatasync,
# on the file system of DIR (the same as Walden's benchmark files), listening only on a Unix socket in DIR, with a
# table t and DIR/insert.sql, the one-row INSERT of a 64-byte bytea that pgbench runs per transaction.
#   wal-bench/postgres.sh start DIR   prints "PGBIN SOCKET_DIR PORT" on its last line
#   wal-bench/postgres.sh stop DIR    stops it (immediately) and removes DIR
# Exits 3, saying so, when PostgreSQL is not installed (apt-get install postgresql).
set -euo pipefail
CMD="$1"
DIR="$2"
PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
if [ -z "$PGBIN" ] || [ ! -x "$PGBIN/initdb" ] || [ ! -x "$PGBIN/pgbench" ]; then
  echo "PostgreSQL not installed (apt-get install postgresql)" >&2
  exit 3
fi
AS=()
if [ "$(id -u)" = 0 ]; then
  AS=(runuser -u postgres --)
fi
case "$CMD" in
  start)
    # Whatever fails after the cluster exists stops it and removes it: a caller sets up its cleanup only after this
    # succeeded.
    trap '"${AS[@]}" "$PGBIN/pg_ctl" -D "$DIR/data" -m immediate stop >/dev/null 2>&1 || true; rm -rf "$DIR"' ERR
    mkdir -p "$DIR"
    [ "$(id -u)" = 0 ] && chown postgres "$DIR"
    PORT=$(( 20000 + RANDOM % 20000 ))
    "${AS[@]}" "$PGBIN/initdb" -D "$DIR/data" -A trust -U postgres >/dev/null
    "${AS[@]}" "$PGBIN/pg_ctl" -D "$DIR/data" -w -l "$DIR/server.log" \
      -o "-p $PORT -k $DIR -c listen_addresses='' -c synchronous_commit=on -c fsync=on -c wal_sync_method=fdatasync -c max_connections=300" \
      start >/dev/null
    "${AS[@]}" "$PGBIN/psql" -h "$DIR" -p "$PORT" -U postgres -q -X \
      -c "CREATE TABLE t (id bigserial PRIMARY KEY, payload bytea NOT NULL)" postgres
    PAYLOAD=$(printf 'x%.0s' $(seq 64) | od -An -v -tx1 | tr -d ' \n')
    echo "INSERT INTO t (payload) VALUES ('\\x$PAYLOAD'::bytea);" > "$DIR/insert.sql"
    chmod a+r "$DIR/insert.sql"
    echo "$PGBIN $DIR $PORT"
    ;;
  stop)
    "${AS[@]}" "$PGBIN/pg_ctl" -D "$DIR/data" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$DIR"
    ;;
  *)
    echo "usage: $0 start|stop DIR" >&2
    exit 2
    ;;
esac
