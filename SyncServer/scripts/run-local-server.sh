#!/usr/bin/env bash
# Runs liveobjects-sync-server on this machine with one command: PostgreSQL (installed from
# Debian's packages when it is missing), a database cluster, the server built, and, when asked,
# a user, a space and a grant, whose token is printed. Ctrl-C stops the server and the cluster.
#
#   SyncServer/scripts/run-local-server.sh --user ann --space team --schema schema.json
#   SyncServer/scripts/run-local-server.sh --data ~/liveobjects-sync-data --port 8080
#
# Without --data the cluster is a throwaway one, removed when the server stops; with --data the
# cluster lives in that folder and is used again next time (the users, spaces and objects stay).
set -euo pipefail

usage() {
    cat <<'EOF'
usage: SyncServer/scripts/run-local-server.sh [OPTION...]

  --data DIR          keep the database cluster in DIR (made on first use); default: a
                      throwaway cluster, removed when the server stops
  --host HOST         address to serve on (default 127.0.0.1)
  --port PORT         port to serve on (default 8080)
  --user NAME         add the user NAME (or give it another token) and print its token;
                      give it again for more users (each with the role in the space)
  --expires-in TIME   the token expires after TIME: seconds, or 90s, 45m, 12h, 30d, 2w
  --space NAME        add the space NAME (needs --schema or --types)
  --schema FILE       the space's schema, as SyncSchema writes it (docs/SYNC-PROTOCOL.md)
  --types T1,T2       instead of a schema, only the names of the object types the space
                      accepts, such as Card,Holder: their values are not checked (for trying
                      things; a device reports what its model cannot read)
  --role ROLE         the user's role in the space: reader, writer (default) or admin
  --rules FILE        the space's read and write rules, by type (needs --schema; see
                      docs/SYNC-PROTOCOL.md, "Rules")
  --release           build (or bring up to date) and run the release build
  -h, --help          show this help

The server is built once: without --release, the script runs the release build if there is
one, else the debug build if there is one (each brought up to date by swift build, quick when
nothing changed), else it makes the release build (about 15 minutes the first time on 2 cores,
for NIO, Hummingbird, PostgresNIO and BoringSSL). The build's output goes to
SyncServer/.build/run-local-server-build.log, not to the terminal. Once the server listens,
the script prints its address, the space and each user's token, each on a line of its own.
EOF
}

data="" host=127.0.0.1 port=8080 users=() expires="" space="" types="" schema="" rules="" role=writer configuration=debug
while [ "$#" -gt 0 ]; do
    case "$1" in
    --data | --host | --port | --user | --expires-in | --space | --types | --schema | --rules | --role)
        if [ "$#" -lt 2 ]; then
            echo "Error: $1 needs a value" >&2
            exit 64
        fi
        case "$1" in
        --data) data=$2 ;;
        --host) host=$2 ;;
        --port) port=$2 ;;
        --user) users+=("$2") ;;
        --expires-in) expires=$2 ;;
        --space) space=$2 ;;
        --types) types=$2 ;;
        --schema) schema=$(cd "$(dirname "$2")" && pwd)/$(basename "$2") ;;
        --rules) rules=$(cd "$(dirname "$2")" && pwd)/$(basename "$2") ;;
        --role) role=$2 ;;
        esac
        shift 2
        ;;
    --release)
        configuration=release
        shift
        ;;
    -h | --help)
        usage
        exit 0
        ;;
    *)
        echo "Error: unknown option $1" >&2
        usage >&2
        exit 64
        ;;
    esac
done
if [ -n "$rules" ] && { [ -z "$space" ] || [ -z "$schema" ]; }; then
    echo "Error: rules name a schema's properties: --space NAME --schema schema.json --rules $rules" >&2
    exit 64
fi
if [ -n "$space" ] && [ -z "$types" ] && [ -z "$schema" ]; then
    echo "Error: a space declares its schema or its types: --space $space --schema schema.json (or --types Card,Holder)" >&2
    exit 64
fi
if [ -n "$expires" ] && [ "${#users[@]}" -eq 0 ]; then
    echo "Error: --expires-in is for the token of --user" >&2
    exit 64
fi

root=$(cd "$(dirname "$0")/../.." && pwd)

# PostgreSQL's programs: on PATH, in Debian's /usr/lib/postgresql/VERSION/bin, or installed now.
. "$(dirname "$0")/postgres-common.sh"
if ! find_postgres; then
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "Error: PostgreSQL's initdb, pg_ctl and postgres were not found. Install PostgreSQL (15 or later) and run again." >&2
        exit 1
    fi
    if [ "$(id -u)" -ne 0 ]; then
        echo "Error: PostgreSQL is not installed. Install it (as root), then run this script again:" >&2
        echo "  sudo apt-get update && sudo apt-get install -y postgresql" >&2
        exit 1
    fi
    echo "run-local-server: installing PostgreSQL from Debian's packages" >&2
    apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y postgresql
    find_postgres || {
        echo "Error: PostgreSQL was installed but initdb was not found" >&2
        exit 1
    }
fi

choose_cluster_owner

if [ -n "$data" ]; then
    mkdir -p "$data"
    dir=$(cd "$data" && pwd)
    keep=1
else
    dir=$(mktemp -d "${TMPDIR:-/tmp}/liveobjects-sync-server.XXXXXX")
    keep=0
fi
chmod 700 "$dir"
mkdir -p "$dir/socket"
if [ "$owner" != "$(id -un)" ]; then chown -R "$owner" "$dir"; fi

server_pid=""
cleanup() {
    status=$?
    if [ -n "$server_pid" ]; then
        kill "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
    "${as_owner[@]}" "$bin/pg_ctl" -D "$dir/cluster" -m fast -w stop >/dev/null 2>&1 || true
    if [ "$keep" -eq 0 ]; then rm -rf "$dir"; else echo "run-local-server: the database stays in $dir" >&2; fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if [ ! -f "$dir/cluster/PG_VERSION" ]; then
    "${as_owner[@]}" "$bin/initdb" -D "$dir/cluster" -U postgres --auth=trust -E UTF8 >"$dir/initdb.log" 2>&1 ||
        {
            cat "$dir/initdb.log" >&2
            echo "Error: initdb failed" >&2
            exit 1
        }
fi
# PostgreSQL listens on its unix socket only, in the cluster's folder: nothing else on the
# machine can reach it over TCP, and no port can collide with another PostgreSQL.
pgport=5432
if ! "${as_owner[@]}" "$bin/pg_ctl" -D "$dir/cluster" -l "$dir/postgres.log" -w -t 60 \
    -o "-c listen_addresses='' -p $pgport -k $dir/socket" start >/dev/null; then
    tail -20 "$dir/postgres.log" >&2
    echo "Error: PostgreSQL did not start (its log: $dir/postgres.log)" >&2
    exit 1
fi
export PGHOST=$dir/socket PGPORT=$pgport PGUSER=postgres PGDATABASE=postgres
unset LIVEOBJECTS_SYNC_DATABASE_URL

# The build: the one asked for, or the one there is (release first), or a new release build.
build_log=$root/SyncServer/.build/run-local-server-build.log
if [ "$configuration" != release ]; then
    configuration=release
    if [ ! -x "$root/SyncServer/.build/release/liveobjects-sync-server" ] &&
        [ -x "$root/SyncServer/.build/debug/liveobjects-sync-server" ]; then
        configuration=debug
    fi
fi
if [ -x "$root/SyncServer/.build/$configuration/liveobjects-sync-server" ]; then
    echo "run-local-server: bringing the $configuration build of liveobjects-sync-server up to date (log: $build_log)" >&2
else
    echo "run-local-server: building liveobjects-sync-server ($configuration; about 15 minutes the first time on 2 cores; log: $build_log)" >&2
fi
mkdir -p "$root/SyncServer/.build"
started=$SECONDS
if ! swift build --package-path "$root/SyncServer" -c "$configuration" --product liveobjects-sync-server \
    >"$build_log" 2>&1; then
    tail -30 "$build_log" >&2
    echo "Error: the build failed (the whole output: $build_log)" >&2
    exit 1
fi
echo "run-local-server: built in $((SECONDS - started)) s" >&2
server=$(swift build --package-path "$root/SyncServer" -c "$configuration" --show-bin-path)/liveobjects-sync-server

tokens=()
for user in "${users[@]}"; do
    if [ -n "$expires" ]; then
        tokens+=("$("$server" user add "$user" --expires-in "$expires")")
    else
        tokens+=("$("$server" user add "$user")")
    fi
done
if [ -n "$space" ]; then
    if [ -n "$schema" ]; then
        "$server" space add "$space" --schema "$schema" >&2
        if [ -n "$rules" ]; then "$server" rules set "$space" "$rules" >&2; fi
    else
        "$server" space add "$space" --types "$types" >&2
    fi
fi
if [ -n "$space" ]; then
    for user in "${users[@]}"; do "$server" grant "$user" "$space" "$role" >&2; done
fi

# In the background and waited for, so that a signal to this script stops the server too.
"$server" serve --host "$host" --port "$port" &
server_pid=$!
# The summary once the server listens, so that nothing else is printed after the token.
probe=$host
if [ "$probe" = 0.0.0.0 ] || [ "$probe" = "::" ]; then probe=127.0.0.1; fi
for _ in $(seq 1 600); do
    if ! kill -0 "$server_pid" 2>/dev/null; then break; fi
    if (exec 3<>"/dev/tcp/$probe/$port" && printf 'GET /health HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n' "$probe" >&3) 2>/dev/null; then
        break
    fi
    sleep 0.1
done
echo >&2
echo "Sync server: http://$host:$port" >&2
if [ -n "$space" ] && [ -n "$schema" ]; then echo "Space:       $space (schema $schema)" >&2; fi
if [ -n "$space" ] && [ -z "$schema" ]; then echo "Space:       $space (accepts $types, without a schema: values unchecked)" >&2; fi
echo "Ctrl-C stops the server and the database." >&2
if [ "${#users[@]}" -gt 0 ]; then
    echo >&2
    echo "(A token is shown once; the server keeps only its hash.)" >&2
    for index in "${!users[@]}"; do echo "Token for ${users[$index]}: ${tokens[$index]}"; done
fi
echo >&2
wait "$server_pid"
