#!/usr/bin/env bash
# Installs (if needed) and starts a private PostgreSQL server for fedscore's tests, then prints
# the connection URL. Source it to export DATABASE_URL into the calling shell:
#
#   source scripts/ci-postgres.sh            # CI (.ci/run) before `npm test`
#   scripts/ci-postgres.sh stop              # stop the server again
#
# Debian's `postgresql` package; the cluster lives in $FEDSCORE_PG_DIR (default /tmp/fedscore-pg),
# listens on 127.0.0.1:$FEDSCORE_PG_PORT (default 55432) with trust authentication for the local
# user `fedscore`. Run as root (apt-get, and the server runs as the `postgres` system user) or as a
# normal user when the binaries are already installed.
set -euo pipefail
PGDIR="${FEDSCORE_PG_DIR:-/tmp/fedscore-pg}"
PGPORT="${FEDSCORE_PG_PORT:-55432}"

pgbin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1; }
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

if [ "${1:-}" = stop ]; then
  BIN="$(pgbin)"
  [ -n "$BIN" ] && as_pg "$BIN/pg_ctl" -D "$PGDIR/data" -m fast stop || true
  return 0 2>/dev/null || exit 0
fi

if [ -z "$(pgbin)" ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
fi
BIN="$(pgbin)"
mkdir -p "$PGDIR"
[ "$(id -u)" = 0 ] && chown postgres "$PGDIR"
if [ ! -f "$PGDIR/data/PG_VERSION" ]; then
  as_pg "$BIN/initdb" -D "$PGDIR/data" -U fedscore -A trust >/dev/null
fi
if ! as_pg "$BIN/pg_ctl" -D "$PGDIR/data" status >/dev/null 2>&1; then
  as_pg "$BIN/pg_ctl" -D "$PGDIR/data" -l "$PGDIR/log" -w \
    -o "-p $PGPORT -k $PGDIR -c listen_addresses=127.0.0.1 -c fsync=on" start >/dev/null
fi
export DATABASE_URL="postgres://fedscore@127.0.0.1:$PGPORT/postgres"
echo "DATABASE_URL=$DATABASE_URL"
