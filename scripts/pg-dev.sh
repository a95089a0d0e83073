#!/bin/sh
# A private PostgreSQL for writing a server's db endpoints by hand: the same
# shape the runner starts (initdb in a temporary folder, loopback only, a free
# port, contract/db/schema.sql loaded). Prints the DATABASE_URL to export.
#
#   scripts/pg-dev.sh start   start one (prints DATABASE_URL=...)
#   scripts/pg-dev.sh stop    stop it and remove its folder
#
# PostgreSQL refuses to run as root: as root it runs as the `postgres` user
# Debian's package creates.
set -eu
state=${PG_DEV_DIR:-/tmp/netbench-pg-dev}
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -n "$bin" ] || { echo "PostgreSQL is not installed: apt-get install postgresql" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

case "${1:-}" in
start)
    [ ! -e "$state/port" ] || { echo "already running: DATABASE_URL=postgres://netbench@127.0.0.1:$(cat "$state/port")/netbench"; exit 0; }
    mkdir -p "$state"
    [ "$(id -u)" != 0 ] || chown postgres "$state"
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    as_pg "$bin/initdb" -D "$state/data" -U netbench -A trust --no-sync >/dev/null
    as_pg "$bin/pg_ctl" -D "$state/data" -l "$state/log" -w -o "-c listen_addresses=127.0.0.1 -p $port -k $state -c fsync=off" start >/dev/null
    as_pg "$bin/createdb" -h 127.0.0.1 -p "$port" -U netbench netbench
    as_pg "$bin/psql" -q -h 127.0.0.1 -p "$port" -U netbench -d netbench -v ON_ERROR_STOP=1 <"$root/contract/db/schema.sql"
    echo "$port" >"$state/port"
    echo "DATABASE_URL=postgres://netbench@127.0.0.1:$port/netbench"
    ;;
stop)
    [ -d "$state/data" ] && as_pg "$bin/pg_ctl" -D "$state/data" -m fast -w stop >/dev/null || true
    rm -rf "$state"
    ;;
*)
    echo "usage: $0 start|stop" >&2
    exit 2
    ;;
esac
