#!/usr/bin/env bash
# A throwaway Postgres server for the tests of dogana-postgres, on this machine only.
#
#   bash scripts/postgres.sh start   # installs Debian's postgresql when initdb is missing, runs
#                                    # initdb as an unprivileged user into a temporary folder,
#                                    # starts it on 127.0.0.1 (a free port; its socket in that
#                                    # folder), creates a role with a password and a database,
#                                    # and prints `export DOGANA_PG_URL=...` (and
#                                    # DOGANA_PG_DIR, DOGANA_PG_BIN: its folder, psql's)
#   bash scripts/postgres.sh env     # prints the exports again (the server must be running)
#   bash scripts/postgres.sh stop    # stops the server and removes the folder
#
# For the fault tests (the server dying under a delivery):
#   bash scripts/postgres.sh crash   # pg_ctl stop -m immediate: no shutdown checkpoint
#   bash scripts/postgres.sh resume  # starts it again on the same port (crash recovery)
#
# The folder is $DOGANA_PG_DIR, by default one per clone under the temporary directory.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
hash=$(printf '%s' "$root" | cksum | cut -d' ' -f1)
dir="${DOGANA_PG_DIR:-${TMPDIR:-/tmp}/dogana-pg-$hash}"
role=dogana
database=dogana

say() { echo "scripts/postgres.sh: $*" >&2; }

bindir() {
    local b
    for b in /usr/lib/postgresql/*/bin; do
        [ -x "$b/initdb" ] && { echo "$b"; return 0; }
    done
    if command -v initdb >/dev/null; then
        dirname "$(readlink -f "$(command -v initdb)")"
        return 0
    fi
    return 1
}

install_postgres() {
    bindir >/dev/null && return 0
    say "initdb is missing: installing Debian's postgresql"
    if [ "$(id -u)" -ne 0 ]; then
        say "run as root once (or install postgresql yourself), then run again"
        exit 1
    fi
    if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null; }; then
        say "cannot install postgresql: install it and run again"
        exit 1
    fi
    # Debian's package starts a cluster of its own: ours does not need it
    command -v pg_ctlcluster >/dev/null && pg_lsclusters -h 2>/dev/null | while read -r v c _; do
        pg_ctlcluster "$v" "$c" stop 2>/dev/null || true
    done
    bindir >/dev/null || { say "postgresql installed, yet no initdb under /usr/lib/postgresql"; exit 1; }
}

# Postgres refuses to run as root: as root, the server belongs to an unprivileged user.
owner() {
    if [ "$(id -u)" -ne 0 ]; then
        id -un
        return
    fi
    if ! id dogana-pg >/dev/null 2>&1; then
        useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin dogana-pg
    fi
    echo dogana-pg
}

as_owner() {
    if [ "$(id -u)" -eq 0 ]; then
        runuser -u "$(owner)" -- "$@"
    else
        "$@"
    fi
}

free_port() {
    local p
    for _ in $(seq 1 100); do
        p=$(( 20000 + RANDOM % 40000 ))
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
            echo "$p"
            return 0
        fi
    done
    say "no free port found"
    exit 1
}

print_env() {
    [ -f "$dir/env" ] || { say "no server in $dir: run scripts/postgres.sh start"; exit 1; }
    cat "$dir/env"
}

start_server() { # start_server PORT
    local bin="$1" port="$2"
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
        -o "-c listen_addresses=127.0.0.1 -p $port -k $dir/socket" start >/dev/null
}

case "${1:-}" in
start)
    if [ -f "$dir/env" ] && [ -f "$dir/data/postmaster.pid" ]; then
        say "already running in $dir"
        print_env
        exit 0
    fi
    install_postgres
    bin=$(bindir)
    user=$(owner)
    rm -rf "$dir"
    mkdir -p "$dir/socket"
    chmod 700 "$dir"
    [ "$(id -u)" -eq 0 ] && chown -R "$user" "$dir"
    password=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
    as_owner "$bin/initdb" -D "$dir/data" -U postgres -E UTF8 --locale=C \
        --auth-local=trust --auth-host=scram-sha-256 >"$dir/initdb.log" 2>&1 \
        || { cat "$dir/initdb.log" >&2; say "initdb failed"; exit 1; }
    port=""
    for _ in 1 2 3 4 5; do
        port=$(free_port)
        if start_server "$bin" "$port" 2>>"$dir/start.log"; then
            break
        fi
        port=""
    done
    [ -n "$port" ] || { cat "$dir/server.log" >&2 || true; say "the server did not start"; exit 1; }
    psql=(as_owner "$bin/psql" -X -q -v ON_ERROR_STOP=1 -h "$dir/socket" -p "$port" -U postgres -d postgres)
    "${psql[@]}" -c "CREATE ROLE $role LOGIN CREATEROLE PASSWORD '$password'" >/dev/null
    "${psql[@]}" -c "CREATE DATABASE $database OWNER $role" >/dev/null
    # the benchmark checkpoints between its rounds
    "${psql[@]}" -c "GRANT pg_checkpoint TO $role" >/dev/null
    # the socket's permissions let the (root) tests reach it; TCP carries the password
    chmod 755 "$dir" "$dir/socket"
    {
        echo "export DOGANA_PG_URL=postgres://$role:$password@127.0.0.1:$port/$database"
        echo "export DOGANA_PG_DIR=$dir"
        echo "export DOGANA_PG_BIN=$bin"
    } >"$dir/env"
    echo "$bin" >"$dir/bindir"
    echo "$port" >"$dir/port"
    print_env
    ;;
env)
    print_env
    ;;
stop)
    if [ -f "$dir/bindir" ] && [ -f "$dir/data/postmaster.pid" ]; then
        as_owner "$(cat "$dir/bindir")/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null || true
    fi
    rm -rf "$dir"
    ;;
crash)
    as_owner "$(cat "$dir/bindir")/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null
    ;;
resume)
    bin=$(cat "$dir/bindir")
    if ! as_owner "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
        start_server "$bin" "$(cat "$dir/port")"
    fi
    ;;
*)
    echo "usage: scripts/postgres.sh start|env|stop|crash|resume" >&2
    exit 2
    ;;
esac
