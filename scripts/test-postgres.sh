#!/usr/bin/env bash
# The Postgres tests on a real server: starts a throwaway one (scripts/postgres.sh, which
# installs Debian's postgresql when initdb is missing), runs the tests of dogana-postgres and
# the command line's Postgres tests against it, and stops it (and removes its folder) however
# they end. The tests fail, never skip, without a server.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)
step() { echo "== $* ($(( $(date +%s) - started )) s)"; }

# a folder of this run's own, so that a server someone else started is left alone
export DOGANA_PG_DIR="${TMPDIR:-/tmp}/dogana-pg-test-$$"
trap 'bash scripts/postgres.sh stop' EXIT
step "a Postgres server"
eval "$(bash scripts/postgres.sh start)"
step "cargo test -p dogana-postgres"
cargo test -p dogana-postgres
step "the command line with the Postgres backend"
cargo test -p dogana-cli --features postgres --test postgres
step "done"
