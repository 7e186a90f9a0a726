#!/usr/bin/env bash
# The external services the tests use, for CI and developers alike.
#   scripts/services.sh start   installs what is missing (Debian packages), starts a throwaway PostgreSQL and
#                               Redis on loopback and prints `export CORDAGE_TEST_POSTGRES_URL=…` and
#                               `export CORDAGE_TEST_REDIS_URL=…` (eval it); idempotent: running ones are kept
#   scripts/services.sh stop    stops them and removes their data directory
# CORDAGE_SERVICES_DIR (default /tmp/cordage-services) holds the data, socket and log;
# CORDAGE_POSTGRES_PORT (default 55432) and CORDAGE_REDIS_PORT (default 56379) are the ports.
set -euo pipefail

base="${CORDAGE_SERVICES_DIR:-/tmp/cordage-services}"
port="${CORDAGE_POSTGRES_PORT:-55432}"
data="$base/postgres"
redis_port="${CORDAGE_REDIS_PORT:-56379}"
redis_dir="$base/redis"

pg_bin() {
  local found
  found="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
  [ -n "$found" ] && [ -x "$found/initdb" ] && echo "$found"
}

# Runs a command as the postgres user when we are root (PostgreSQL refuses to run as root).
as_owner() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

install_missing() {
  local missing=()
  pg_bin >/dev/null || missing+=(postgresql)
  command -v redis-server >/dev/null || missing+=(redis-server)
  command -v chromium >/dev/null || missing+=(chromium)
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" != 0 ]; then
    echo "missing ${missing[*]}: install them (apt-get install -y ${missing[*]}) or run this as root" >&2
    return 0
  fi
  echo "installing ${missing[*]}" >&2
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}

start() {
  install_missing
  local bin
  bin="$(pg_bin)" || { echo "PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb)" >&2; exit 1; }
  mkdir -p "$base"
  [ "$(id -u)" = 0 ] && chown postgres: "$base"
  if [ -f "$data/postmaster.pid" ] && as_owner "$bin/pg_ctl" -D "$data" status >/dev/null 2>&1; then
    echo "PostgreSQL already running in $data" >&2
  else
    rm -rf "$data"
    as_owner "$bin/initdb" -D "$data" -U postgres -A trust -E UTF8 --no-locale >"$base/initdb.log" 2>&1 ||
      { cat "$base/initdb.log" >&2; exit 1; }
    # Loopback only, the socket beside the data, no fsync shortcuts: the crash tests need real durability.
    as_owner "$bin/pg_ctl" -D "$data" -l "$base/postgres.log" -w -t 60 \
      -o "-c listen_addresses=127.0.0.1 -p $port -k $base -c max_connections=200" start >&2 ||
      { cat "$base/postgres.log" >&2; exit 1; }
  fi
  as_owner "$bin/pg_isready" -h 127.0.0.1 -p "$port" -t 30 >&2
  echo "export CORDAGE_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:$port/postgres"
  start_redis
}

# A throwaway Redis for the queue tests: loopback only, nothing saved, and `noeviction` (BullMQ needs every
# key it wrote). Run as the postgres user when we are root, like PostgreSQL, so no server runs as root.
start_redis() {
  command -v redis-server >/dev/null || { echo "redis-server is not installed: the queue tests will skip" >&2; return 0; }
  if command -v redis-cli >/dev/null && redis-cli -h 127.0.0.1 -p "$redis_port" ping 2>/dev/null | grep -q PONG; then
    echo "Redis already running on 127.0.0.1:$redis_port" >&2
  else
    mkdir -p "$redis_dir"
    [ "$(id -u)" = 0 ] && chown postgres: "$redis_dir"
    as_owner redis-server --bind 127.0.0.1 --port "$redis_port" --save '' --appendonly no \
      --maxmemory-policy noeviction --dir "$redis_dir" --pidfile "$redis_dir/redis.pid" \
      --logfile "$redis_dir/redis.log" --daemonize yes >&2
    for _ in $(seq 1 50); do
      redis-cli -h 127.0.0.1 -p "$redis_port" ping 2>/dev/null | grep -q PONG && break
      sleep 0.1
    done
  fi
  echo "export CORDAGE_TEST_REDIS_URL=redis://127.0.0.1:$redis_port"
}

stop() {
  [ -f "$redis_dir/redis.pid" ] && kill "$(cat "$redis_dir/redis.pid")" 2>/dev/null || true
  local bin
  bin="$(pg_bin)" || exit 0
  [ -d "$data" ] && as_owner "$bin/pg_ctl" -D "$data" -m fast -w stop >&2 || true
  rm -rf "$base"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
