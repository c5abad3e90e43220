#!/usr/bin/env bash
# A scratch PostgreSQL server for the tests: never the system service.
#   postgres_server.sh start DIR   initdb into DIR/data, start a server that listens only on a
#                                  Unix socket in DIR (no TCP port), create the database
#                                  tuned_test, print its URL
#   postgres_server.sh stop DIR    stop that server and remove DIR
#   postgres_server.sh url DIR     print the URL the server in DIR has
# initdb refuses to run as root, so as root the server runs as the user `postgres`
# (TUNED_PG_USER to choose another). The binaries come from TUNED_PG_BIN, else the newest
# /usr/lib/postgresql/*/bin. DIR's path must stay short: a socket path has at most 107 bytes.
# Durability settings are off (fsync, synchronous_commit): the data is thrown away afterwards.
# TUNED_PG_DURABLE=1 keeps PostgreSQL's defaults (fsync on every commit), for benchmarks that
# compare with SQLite's synchronous=FULL.
set -euo pipefail

usage() { echo "usage: $0 start|stop|url DIR" >&2; exit 2; }
[ $# -eq 2 ] || usage
action=$1
dir=$(realpath -m "$2")
port=5432  # Names the socket file (.s.PGSQL.5432) in DIR; no TCP port is opened.
database=tuned_test
user=${TUNED_PG_USER:-postgres}

url() { echo "postgresql://postgres@/${database}?host=${dir}&port=${port}"; }

find_bin() {
  if [ -n "${TUNED_PG_BIN:-}" ]; then echo "$TUNED_PG_BIN"; return; fi
  local newest
  newest=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  if [ -z "$newest" ] || [ ! -x "$newest/initdb" ]; then
    echo "postgres_server: no PostgreSQL server binaries (initdb) under /usr/lib/postgresql;" \
         "install the postgresql package or set TUNED_PG_BIN" >&2
    exit 3
  fi
  echo "$newest"
}

# Runs a server binary as the unprivileged user when we are root.
as_server_user() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u "$user" -- "$@"; else "$@"; fi
}

stop_server() {
  local bin=$1
  if [ -f "$dir/data/postmaster.pid" ]; then
    as_server_user "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
  fi
}

case "$action" in
  start)
    bin=$(find_bin)
    stop_server "$bin"  # A server left over from an interrupted run.
    rm -rf "$dir"
    mkdir -p "$dir"
    [ "$(id -u)" -ne 0 ] || chown "$user" "$dir"
    if ! as_server_user "$bin/initdb" -D "$dir/data" --auth=trust --username=postgres \
        --locale=C --encoding=UTF8 --no-sync >"$dir/initdb.log" 2>&1; then
      echo "postgres_server: initdb into $dir/data failed:" >&2
      tail -n 5 "$dir/initdb.log" >&2
      exit 1
    fi
    durability="-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    [ "${TUNED_PG_DURABLE:-0}" != 1 ] || durability=""
    if ! as_server_user "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 30 \
        -o "-k $dir -p $port -c listen_addresses= $durability -c max_connections=200" \
        start >/dev/null; then
      echo "postgres_server: the server in $dir did not start:" >&2
      tail -n 5 "$dir/server.log" >&2
      exit 1
    fi
    as_server_user "$bin/createdb" -h "$dir" -p "$port" -U postgres "$database"
    url
    ;;
  stop)
    stop_server "$(find_bin)"
    rm -rf "$dir"
    ;;
  url) url ;;
  *) usage ;;
esac
