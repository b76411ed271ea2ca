#!/usr/bin/env bash
# DuckDB's shared library (libduckdb.so, the C API), which the duckdb backend links, from the
# npm registry package that ships it (@duckdb/node-bindings-linux-x64): the real DuckDB without
# compiling its C++ (about 30 minutes on two cores). Cached outside the clone; linked into
# the clone as .deps/libduckdb, where .cargo/config.toml points DUCKDB_LIB_DIR.
# Prints the folder. Needs npm (Debian's npm package).
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=1.5.6
PACKAGE="@duckdb/node-bindings-linux-x64@${VERSION}-r.1"
cache="${DOGANA_CACHE:-$HOME/.cache/dogana}/libduckdb-$VERSION"
case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) ;;
    *) echo "scripts/libduckdb.sh: only Linux x86_64 is set up; on another platform build with the duckdb crate's 'bundled' feature" >&2; exit 1 ;;
esac
if [ ! -f "$cache/libduckdb.so" ]; then
    command -v npm >/dev/null || {
        echo "scripts/libduckdb.sh: npm is needed to fetch $PACKAGE; installing Debian's npm" >&2
        apt-get update -qq && apt-get install -y -qq npm >/dev/null
    }
    tmp=$(mktemp -d)
    (cd "$tmp" && npm pack --silent "$PACKAGE" >/dev/null && tar xzf ./*.tgz)
    mkdir -p "$cache"
    cp "$tmp/package/libduckdb.so" "$tmp/package/LICENSE" "$cache/"
    rm -rf "$tmp"
fi
mkdir -p .deps
ln -sfn "$cache" .deps/libduckdb
echo "$PWD/.deps/libduckdb"
