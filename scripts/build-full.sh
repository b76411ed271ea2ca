#!/usr/bin/env bash
# The `dogana` binary with every backend and reader this repository has: SQLite (always),
# DuckDB (links DuckDB's shared library, fetched by scripts/libduckdb.sh and copied beside the
# binary, where it looks first), the lake store (file, memory, S3, GCS, Azure), Delta Lake
# tables, Parquet and the
# receiving service (dogana serve, dogana watch).
# Prints the binary's path.
set -euo pipefail
cd "$(dirname "$0")/.."
lib=$(bash scripts/libduckdb.sh)
cargo build --release -q -p dogana-cli --features duckdb,lake,delta,parquet,postgres,serve
target="${CARGO_TARGET_DIR:-$PWD/target}"
cp "$lib/libduckdb.so" "$target/release/"
echo "$target/release/dogana"
