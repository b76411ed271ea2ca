#!/usr/bin/env bash
# Every test of the project, as README.md names it. Installs and starts what the tests need
# from the project's own files, and fails, saying what is missing, rather than skip:
#   - node (the ECMAScript number test of dogana-json), from Debian when missing;
#   - DuckDB's shared library (scripts/libduckdb.sh, from the npm registry);
#   - a Postgres server (scripts/postgres.sh, Debian's postgresql when initdb is missing);
#   - Chromium and its fonts (scripts/test-browser.sh, from Debian);
#   - Python virtual environments for dbt-duckdb and for the Python package (PyPI);
#   - curl (scripts/test-serve.sh: the receiving service as a sender uses it);
# then the workspace's tests, the Postgres backend and the command line on it, the command
# line with the DuckDB backend and the receiving service (Rust and curl), the dbt recipe on a store it made, the Parquet reader, the
# page in a real browser, the Python package, and the lake store against moto (S3) and
# Azurite (Azure) on 127.0.0.1 (scripts/test-lake.sh: pip and npm pins in scripts/lake/; npm from
# Debian when missing).
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)

need_apt() { # need_apt COMMAND PACKAGE WHY
    command -v "$1" >/dev/null && return 0
    echo "scripts/test.sh: $1 is needed ($3); installing Debian's $2" >&2
    if ! { apt-get update -qq && apt-get install -y -qq "$2" >/dev/null; }; then
        echo "scripts/test.sh: cannot install $2, so $3 cannot run: install it and run again" >&2
        exit 1
    fi
}
need_apt curl curl "the receiving service's curl cases"
need_apt unshare util-linux "the receiving service's full-disk test (a small tmpfs in a user namespace)"
need_apt node nodejs "the ECMAScript number test of dogana-json"
need_apt npm npm "Azurite, the lake store's Azure test server"
bash scripts/libduckdb.sh >/dev/null

step() { echo "== $* ($(( $(date +%s) - started )) s)"; }
step "cargo test --workspace (but the Postgres backend's, which need a server: below)"
cargo test --workspace --exclude dogana-postgres
step "the Postgres backend and the command line on it, on a throwaway server"
bash scripts/test-postgres.sh
step "the command line with the DuckDB backend, Parquet and the receiving service"
cargo test -p dogana-cli --features duckdb,parquet,serve
step "the receiving service through curl"
DOGANA_BIN="${CARGO_TARGET_DIR:-$PWD/target}/debug/dogana" bash scripts/test-serve.sh
step "the dbt recipe with dbt-duckdb on a store dogana deliver made"
# the binary the step above built, with the DuckDB backend
DOGANA_BIN="${CARGO_TARGET_DIR:-$PWD/target}/debug/dogana" bash scripts/test-dbt.sh
step "the Parquet reader, and a Parquet file's columns"
cargo test -p dogana-rows --features parquet
cargo test -p dogana-columns --features parquet
step "dogana show's page in headless Chromium"
bash scripts/test-browser.sh
step "the Python package (pytest)"
bash scripts/test-python.sh
step "the lake store on file://, memory://, S3 (moto) and Azure (Azurite)"
bash scripts/test-lake.sh
step "the command line with the lake and Delta backends (and the receiving service on a lake store)"
cargo test -p dogana-cli --features lake,delta,serve
step "Delta readers (deltalake, polars, DuckDB's delta_scan) read what dogana delivered"
DOGANA_BIN="${CARGO_TARGET_DIR:-$PWD/target}/debug/dogana" bash scripts/test-delta.sh
step "done"
