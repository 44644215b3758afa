#!/usr/bin/env bash
# Runs a command with a throwaway PostgreSQL cluster: initdb in a temporary folder, postgres on
# a free loopback port (its unix socket in the same folder), the connection in the environment
# (LIVEOBJECTS_SYNC_DATABASE_URL and PGHOST, PGPORT, PGUSER, PGDATABASE), then the cluster is
# stopped and removed, whatever the command did. The command's exit status is the script's.
#
#   SyncServer/scripts/with-postgres.sh swift test --package-path SyncServer
#   SyncServer/scripts/with-postgres.sh swift run --package-path SyncServer liveobjects-sync-server serve
#
# PostgreSQL's programs are found on PATH, or in Debian's /usr/lib/postgresql/VERSION/bin (the
# package `postgresql`). initdb and postgres refuse to run as root: as root, the cluster runs as
# the user `postgres` (Debian's package creates it), or `nobody`.
set -euo pipefail

if [ "$#" -eq 0 ]; then
    echo "usage: $0 COMMAND [ARGUMENT...]" >&2
    exit 64
fi

. "$(dirname "$0")/postgres-common.sh"
if ! find_postgres; then
    echo "Error: PostgreSQL's initdb, pg_ctl and postgres were not found on PATH or in /usr/lib/postgresql/*/bin." >&2
    echo "Install them (Debian: apt-get update && apt-get install -y postgresql) and run again." >&2
    exit 1
fi

choose_cluster_owner

dir=$(mktemp -d "${TMPDIR:-/tmp}/liveobjects-postgres.XXXXXX")
chmod 755 "$dir"
mkdir "$dir/socket"
if [ "$owner" != "$(id -un)" ]; then chown -R "$owner" "$dir"; fi

cleanup() {
    status=$?
    "${as_owner[@]}" "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
    rm -rf "$dir"
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

"${as_owner[@]}" "$bin/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --no-sync >"$dir/initdb.log" 2>&1 ||
    { cat "$dir/initdb.log" >&2; echo "Error: initdb failed" >&2; exit 1; }
if ! "${as_owner[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $dir/socket -c fsync=off -c synchronous_commit=off -c max_connections=200" \
    start >/dev/null; then
    cat "$dir/postgres.log" >&2
    echo "Error: PostgreSQL did not start" >&2
    exit 1
fi

export PGHOST=127.0.0.1 PGPORT=$port PGUSER=postgres PGDATABASE=postgres
export LIVEOBJECTS_SYNC_DATABASE_URL="postgres://postgres@127.0.0.1:$port/postgres"
echo "with-postgres: PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port" >&2

"$@"
