# Shared by with-postgres.sh and run-local-server.sh (sourced, not run).

# Sets `bin` to the folder of PostgreSQL's programs: found on PATH, or in Debian's
# /usr/lib/postgresql/VERSION/bin (the newest version). Fails when initdb, pg_ctl or postgres
# is missing.
find_postgres() {
    bin=""
    if command -v initdb >/dev/null 2>&1; then
        bin=$(dirname "$(command -v initdb)")
    else
        for candidate in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
            if [ -x "$candidate/initdb" ]; then
                bin=$candidate
                break
            fi
        done
    fi
    [ -n "$bin" ] && [ -x "$bin/pg_ctl" ] && [ -x "$bin/postgres" ]
}

# Sets `owner` (the user the cluster runs as) and `as_owner` (the command prefix that runs a
# program as that user): initdb and postgres refuse to run as root, so as root the cluster runs
# as `postgres` (Debian's package makes that user), or `nobody`.
choose_cluster_owner() {
    as_owner=()
    owner=$(id -un)
    if [ "$(id -u)" -eq 0 ]; then
        if id postgres >/dev/null 2>&1; then owner=postgres; else owner=nobody; fi
        as_owner=(runuser -u "$owner" --)
    fi
}
