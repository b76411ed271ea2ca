#!/usr/bin/env bash
# The Postgres tests on a real server: starts a throwaway one (scripts/postgres.sh, which
# installs Debian's postgresql when initdb is missing), runs the tests of dogana-postgres and
# the command line's Postgres tests against it, and the dbt recipe with dbt-postgres on a store
# the command line made, and stops it (and removes its folder) however
# they end. The tests fail, never skip, without a server.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)
step() { echo "== $* ($(( $(date +%s) - started )) s)"; }

# a folder of this run's own, so that a server someone else started is left alone
export DOGANA_PG_DIR="${TMPDIR:-/tmp}/dogana-pg-test-$$"
trap 'bash scripts/postgres.sh stop' EXIT
step "a Postgres server"
# not `eval "$(...)"`, whose status is eval's: a server that cannot start stops the run here
if ! exports=$(bash scripts/postgres.sh start); then
    echo "scripts/test-postgres.sh: the Postgres server did not start (above): the Postgres tests cannot run" >&2
    exit 1
fi
eval "$exports"
step "cargo test -p dogana-postgres"
cargo test -p dogana-postgres
step "the command line with the Postgres backend"
cargo test -p dogana-cli --features postgres,serve --test postgres
step "the receiving service on a Postgres store"
cargo test -p dogana-cli --features postgres,serve --test serve on_postgres
step "the dbt recipe with dbt-postgres on a store dogana deliver made"
# the binary the step above built, with the Postgres backend
DOGANA_DBT_TARGET=postgres DOGANA_BIN="${CARGO_TARGET_DIR:-$PWD/target}/debug/dogana" \
    bash scripts/test-dbt.sh
step "done"
