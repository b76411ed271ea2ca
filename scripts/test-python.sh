#!/usr/bin/env bash
# The Python package's tests (python/tests), in a virtual environment this script makes itself.
#
#   bash scripts/test-python.sh [pytest args...]
#
# 1. a venv outside the work tree ($CARGO_TARGET_DIR/py-venv, else target/py-venv, gitignored),
#    with maturin, pytest and hypothesis from PyPI;
# 2. DuckDB's shared library (scripts/libduckdb.sh), which the extension's duckdb feature
#    links, copied into python/dogana_rs/libs/ so the wheel carries it beside the extension
#    (which finds it there by its $ORIGIN/libs rpath: docs/decisions.md, "Python");
# 3. the `dogana` command line built from the workspace with the duckdb backend (the property
#    test compares it with Python byte for byte);
# 4. `pip install ./python`: maturin builds the extension with the local cargo (release);
# 5. mypy.stubtest: the stubs (python/dogana_rs/*.pyi) against the installed module, and mypy
#    on a typed example (python/tests/typed_example.py); a mismatch fails the run;
# 6. a throwaway Postgres server (scripts/postgres.sh, stopped on exit) for the cases on a
#    Postgres store; the lake cases use file:// roots;
# 7. pytest on python/tests.
# Fails with a message naming what is missing; exits with pytest's status.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
case "$target" in /*) ;; *) target="$root/$target" ;; esac
export CARGO_TARGET_DIR="$target"
venv="${DOGANA_PY_VENV:-$target/py-venv}"

fail() { echo "test-python: $*" >&2; exit 1; }

python="${PYTHON:-python3}"
command -v "$python" >/dev/null || fail "no $python on PATH: install CPython 3.9 or later"
"$python" -c 'import sys; assert sys.version_info >= (3, 9)' 2>/dev/null ||
    fail "$("$python" --version 2>&1) is too old: dogana-rs needs CPython 3.9 or later"
"$python" -c 'import venv, ensurepip' 2>/dev/null ||
    fail "$python has no venv/ensurepip module (on Debian: apt-get install python3-venv)"
command -v cargo >/dev/null || fail "no cargo on PATH: the extension is built from the workspace with Rust"

if [ ! -x "$venv/bin/python" ]; then
    echo "== creating $venv"
    "$python" -m venv "$venv" || fail "could not create the virtual environment $venv"
fi
py="$venv/bin/python"
export PATH="$venv/bin:$PATH"   # the maturin build backend runs the maturin executable
echo "== installing maturin, pytest, hypothesis, mypy"
"$py" -m pip install -q --disable-pip-version-check "maturin>=1.5,<2" pytest hypothesis mypy ||
    fail "pip could not install maturin, pytest, hypothesis and mypy from the package index"
for module in maturin pytest hypothesis mypy; do
    "$py" -c "import $module" 2>/dev/null || fail "$module is missing from $venv after pip install"
done

echo "== DuckDB's shared library (scripts/libduckdb.sh)"
libduckdb="$(bash "$root/scripts/libduckdb.sh")" || fail "scripts/libduckdb.sh could not fetch DuckDB's shared library"
[ -f "$libduckdb/libduckdb.so" ] || fail "no libduckdb.so in $libduckdb"
# packed into the wheel beside the extension (gitignored: python/**/*.so)
mkdir -p "$root/python/dogana_rs/libs"
cp -f "$libduckdb/libduckdb.so" "$root/python/dogana_rs/libs/libduckdb.so"

echo "== building the dogana command line (cargo build -p dogana-cli --features duckdb)"
(cd "$root" && cargo build -q -p dogana-cli --features duckdb) || fail "cargo could not build dogana-cli"
export DOGANA_BIN="$target/debug/dogana"
[ -x "$DOGANA_BIN" ] || fail "no dogana binary at $DOGANA_BIN"

# `maturin develop` leaves the extension in the source folder, where it would shadow (or be
# packed beside) the one pip builds: remove that build artifact (it is gitignored).
for stale in "$root"/python/dogana_rs/_native*.so; do
    [ -e "$stale" ] && { echo "== removing $stale (left by maturin develop)"; rm -f "$stale"; }
done
echo "== pip install ./python (maturin, release build of crates/dogana-py)"
start=$(date +%s)
"$py" -m pip install -q --disable-pip-version-check --no-build-isolation --force-reinstall --no-deps "$root/python" ||
    fail "pip install ./python failed (see the maturin/cargo output above)"
echo "   built and installed in $(( $(date +%s) - start )) s"
"$py" -c 'import dogana_rs, sys; assert dogana_rs.WIRE_VERSION == 4' ||
    fail "dogana_rs does not import from $venv"

echo "== mypy.stubtest dogana_rs (the stubs against the installed module)"
(cd "$target" && "$py" -m mypy.stubtest dogana_rs --allowlist "$root/python/stubtest-allowlist.txt") ||
    fail "mypy.stubtest: the stubs in python/dogana_rs/*.pyi do not match the module (above)"
echo "== mypy python/tests/typed_example.py"
(cd "$target" && "$py" -m mypy --strict "$root/python/tests/typed_example.py") ||
    fail "mypy: the typed example does not check against the stubs (above)"

echo "== a throwaway Postgres server for the Postgres cases (scripts/postgres.sh)"
export DOGANA_PG_DIR="${TMPDIR:-/tmp}/dogana-pg-python-$$"
trap 'bash "$root/scripts/postgres.sh" stop >/dev/null 2>&1 || true' EXIT
# not `eval "$(...)"`, whose status is eval's: a server that cannot start stops the run here
exports=$(bash "$root/scripts/postgres.sh" start) ||
    fail "the Postgres server did not start (above): the Postgres cases cannot run"
eval "$exports"

echo "== pytest python/tests"
mkdir -p "$target/py-test"
cd "$target/py-test"   # keeps .hypothesis and caches out of the work tree
"$py" -m pytest -q "$root/python/tests" "$@"
