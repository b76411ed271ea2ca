#!/usr/bin/env bash
# The dbt recipe's test (dbt/README.md): builds a dogana store with the `dogana` command line —
# a DuckDB file, or a schema on a Postgres server — then runs the example dbt project
# (dbt/example, using the package dbt/dogana) over it with dbt-duckdb or dbt-postgres, and checks
# that every test that must pass passes and every test that must fail fails, with the expected
# rows, and that the package's macros give what `dogana claims` gives for each table.
#
#   bash scripts/test-dbt.sh [WORKDIR]                              # DuckDB
#   DOGANA_DBT_TARGET=postgres DOGANA_PG_URL=… bash scripts/test-dbt.sh  # Postgres
#
# Environment:
#   DOGANA_DBT_TARGET duckdb (default) or postgres
#   DOGANA_PG_URL    postgres: the server (scripts/postgres.sh start prints it); the store is
#                    its schema dogana_dbt_store, dbt's models go to dogana_dbt_models (both
#                    dropped first); DOGANA_PG_BIN names the folder of its psql
#   DOGANA_BIN       the dogana binary, built with --features duckdb (postgres for that target);
#                    default: build it (cargo build --release -p dogana-cli --features TARGET
#                    into $CARGO_TARGET_DIR)
#   DOGANA_DBT_VENV  the Python virtual environment for dbt, created if missing and reused;
#                    default $CARGO_TARGET_DIR/../dbt-venv, or ~/.cache/dogana/dbt-venv
#   PYTHON           the Python 3 that creates it (default python3; 3.9 to 3.13)
#   LD_LIBRARY_PATH  must find libduckdb.so for a DOGANA_BIN built elsewhere; by default the
#                    script adds the folder scripts/libduckdb.sh fills
#
# Needs bash, awk, python3 with venv and pip, pip access to PyPI (first run only) and, without
# DOGANA_BIN, cargo. Exits 1 with a message naming what is missing or what went wrong.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
started=$SECONDS

die() {
    echo "test-dbt: $*" >&2
    exit 1
}
phase() {
    echo "== [$((SECONDS - started)) s] $*"
}
need() {
    command -v "$1" >/dev/null 2>&1 || die "$1 is required ($2) and is not on PATH"
}

need awk "to generate the exports"
target_db="${DOGANA_DBT_TARGET:-duckdb}"
case "$target_db" in
    duckdb) ;;
    postgres)
        [ -n "${DOGANA_PG_URL:-}" ] ||
            die "DOGANA_DBT_TARGET=postgres needs a server in DOGANA_PG_URL (eval \"\$(bash scripts/postgres.sh start)\")"
        psql="${DOGANA_PG_BIN:+$DOGANA_PG_BIN/}psql"
        need "$psql" "to make the store's schema (set DOGANA_PG_BIN to the server's bin folder)"
        ;;
    *) die "DOGANA_DBT_TARGET=$target_db: expected duckdb or postgres" ;;
esac
python="${PYTHON:-python3}"
need "$python" "to create dbt's virtual environment (set PYTHON to another interpreter)"
"$python" -c 'import sys; assert sys.version_info >= (3, 9)' 2>/dev/null ||
    die "$python is not Python 3.9 or later"
"$python" -c 'import venv, ensurepip' 2>/dev/null ||
    die "$python cannot create a virtual environment (on Debian: apt-get install python3-venv)"

# --- the dogana binary, with the DuckDB backend
if [ -n "${DOGANA_BIN:-}" ]; then
    bin="$DOGANA_BIN"
    [ -x "$bin" ] || die "DOGANA_BIN=$bin is not an executable file"
    if [ -f "$root/.deps/libduckdb/libduckdb.so" ]; then
        export LD_LIBRARY_PATH="$root/.deps/libduckdb${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    fi
else
    need cargo "to build the dogana binary (or set DOGANA_BIN)"
    phase "libduckdb (bash scripts/libduckdb.sh)"
    libdir="$(bash "$root/scripts/libduckdb.sh")" || die "scripts/libduckdb.sh could not provide libduckdb.so"
    export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    phase "building dogana (cargo build --release -p dogana-cli --features $target_db)"
    (cd "$root" && cargo build --release -q -p dogana-cli --features "$target_db") ||
        die "cargo build --release -p dogana-cli --features $target_db failed"
    target="${CARGO_TARGET_DIR:-target}"
    case "$target" in
        /*) ;;
        *) target="$root/$target" ;;
    esac
    bin="$target/release/dogana"
    [ -x "$bin" ] || die "no binary at $bin after the build"
fi
"$bin" --version >/dev/null 2>&1 || "$bin" --help >/dev/null 2>&1 ||
    die "$bin does not run (is libduckdb.so on LD_LIBRARY_PATH? bash scripts/libduckdb.sh prints its folder)"

# --- dbt in its own virtual environment, outside the repository
if [ -n "${DOGANA_DBT_VENV:-}" ]; then
    venv="$DOGANA_DBT_VENV"
elif [ -n "${CARGO_TARGET_DIR:-}" ]; then
    venv="$(dirname "$CARGO_TARGET_DIR")/dbt-venv"
else
    venv="$HOME/.cache/dogana/dbt-venv"
fi
case "$venv" in
    "$root"/*) die "the virtual environment $venv would be inside the repository; set DOGANA_DBT_VENV" ;;
esac
requirements="$root/dbt/requirements.txt"
if ! cmp -s "$requirements" "$venv/dogana-requirements.txt" 2>/dev/null; then
    phase "dbt's virtual environment: $venv (pip install -r dbt/requirements.txt)"
    [ -x "$venv/bin/python" ] || "$python" -m venv "$venv" || die "$python -m venv $venv failed"
    "$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$requirements" ||
        die "pip could not install dbt/requirements.txt into $venv (is PyPI reachable?)"
    cp "$requirements" "$venv/dogana-requirements.txt"
else
    phase "dbt's virtual environment: $venv (reused)"
fi
dbt="$venv/bin/dbt"
[ -x "$dbt" ] || die "no dbt in $venv"
"$venv/bin/python" -c 'import duckdb, sys; sys.exit(0 if duckdb.__version__.startswith("1.5.") else 1)' ||
    die "the duckdb Python package in $venv is not 1.5.x, the engine that writes the store"

# --- the store: deliveries to a DuckDB file, or to a schema of the Postgres server
work="${1:-}"
if [ -z "$work" ]; then
    work="$(mktemp -d "${TMPDIR:-/tmp}/dogana-dbt.XXXXXX")"
fi
mkdir -p "$work"
work="$(cd "$work" && pwd)"
if [ "$target_db" = duckdb ]; then
    store="$work/store.duckdb"
    rm -f "$store" "$store.wal" "$work/dbt.duckdb" "$work/dbt.duckdb.wal"
    export DOGANA_STORE_SCHEMA=main
else
    export DOGANA_STORE_SCHEMA=dogana_dbt_store DOGANA_DBT_SCHEMA=dogana_dbt_models
    "$psql" -X -q -v ON_ERROR_STOP=1 "$DOGANA_PG_URL" -c \
        "SET client_min_messages TO warning; DROP SCHEMA IF EXISTS $DOGANA_STORE_SCHEMA CASCADE; DROP SCHEMA IF EXISTS $DOGANA_DBT_SCHEMA CASCADE; CREATE SCHEMA $DOGANA_STORE_SCHEMA" ||
        die "could not make the schema $DOGANA_STORE_SCHEMA on the server"
    sep="?"
    case "$DOGANA_PG_URL" in *\?*) sep="&" ;; esac
    store="$DOGANA_PG_URL${sep}schema=$DOGANA_STORE_SCHEMA"
    # dbt-postgres takes the server's parts one by one: postgres://USER:PASSWORD@HOST:PORT/DB
    rest="${DOGANA_PG_URL#*://}"
    rest="${rest%%\?*}"
    userinfo="${rest%%@*}"
    hostpart="${rest#*@}"
    export DOGANA_DBT_PGUSER="${userinfo%%:*}" DOGANA_DBT_PGPASSWORD="${userinfo#*:}"
    export DOGANA_DBT_PGDATABASE="${hostpart#*/}"
    hostport="${hostpart%%/*}"
    export DOGANA_DBT_PGHOST="${hostport%%:*}" DOGANA_DBT_PGPORT="${hostport##*:}"
fi
phase "work dir: $work"
cd "$work"

deliver() { # FILE CONTRACT AT
    "$bin" deliver "$1" --store "$store" --contract "$2" --at "$3" --source test-dbt >"$1.out" 2>&1 ||
        { cat "$1.out" >&2; die "dogana deliver $1 failed"; }
    grep -q ": accepted " "$1.out" || { cat "$1.out" >&2; die "$1 was not accepted"; }
}
manifest() {
    "$bin" manifest "$@" --force >/dev/null || die "dogana manifest $* failed"
}

# the quick start's orders contract, for `orders` and `items` (table names differ)
contract() { # TABLE
    cat <<TOML
table = "$1"
key = ["id"]
window_column = "order_date"
cursor_column = "updated_at"
deleted_column = "deleted"

[types]
id = "int"
order_date = "date"
updated_at = "datetime"
deleted = "bool"

[shapes.full]
kind = "full"
cost = 10

[shapes.last3]
kind = "window"
size = "3d"
cost = 2

[shapes.changes]
kind = "changes"
deletions = "tombstone"

[shapes.patch]
kind = "changes"
deletions = "none"
TOML
}
contract orders >orders.toml
contract items >items.toml
contract notes >notes.toml
# events: only a window shape, so a single window delivery leaves both sides unknown
cat >events.toml <<'TOML'
table = "events"
key = ["id"]
window_column = "event_date"

[types]
id = "int"
event_date = "date"

[shapes.last3]
kind = "window"
size = "3d"
TOML

# quickstart.sh's Sunday export: 36 orders read on 2026-10-25 at 06:00 UTC
sunday() {
    awk 'BEGIN {
      print "id,order_date,updated_at,amount,customer,deleted"
      split("acme,borealis,cobalt,dunmore,elm,fjord,granite", customers, ",")
      for (i = 1; i <= 36; i++) {
        d = 18 + i
        date = d <= 30 ? sprintf("2026-09-%02d", d) : sprintf("2026-10-%02d", d - 30)
        printf "%d,%s,%sT%02d:15:00Z,%d.%02d,%s,false\n", i, date, date, 8 + i % 10, 10 + (i * 37) % 90, (i * 13) % 100, customers[1 + i % 7]
      }
    }'
}

phase "deliveries to $(echo "$store" | sed -E 's#(://[^:/@]*:)[^@]*@#\1***@#')"
sunday >orders-sun.csv
cat >orders-mon.csv <<'CSV'
id,order_date,updated_at,amount,customer,deleted
5,2026-09-23,2026-10-25T09:30:00Z,99.00,fjord,false
12,2026-09-30,2026-10-25T11:00:00Z,12.50,fjord,false
37,2026-10-25,2026-10-25T12:10:00Z,41.00,acme,false
38,2026-10-25,2026-10-25T16:40:00Z,17.25,cobalt,false
39,2026-10-26,2026-10-26T05:55:00Z,63.80,elm,false
7,2026-09-25,2026-10-25T15:45:00Z,0,borealis,true
CSV
# orders: full on Sunday, changes with a tombstone on Monday: exact at Monday 06:00
manifest orders-sun.csv --contract orders.toml --shape full --produced-at 2026-10-25T06:00:00Z --rows 36
deliver orders-sun.csv orders.toml 2026-10-25T06:05:00Z
manifest orders-mon.csv --contract orders.toml --shape changes --produced-at 2026-10-26T06:00:00Z \
    --since 2026-10-25T06:00:00Z --rows 5 --tombstones 1
deliver orders-mon.csv orders.toml 2026-10-26T06:05:00Z

# items: full on Sunday, then Monday's 3-day window [2026-10-24, 2026-10-26]: every region known,
# two instants
sunday >items-sun.csv
cat >items-mon.csv <<'CSV'
id,order_date,updated_at,amount,customer,deleted
36,2026-10-24,2026-10-24T17:15:00Z,52.10,elm,false
40,2026-10-25,2026-10-25T18:00:00Z,8.00,cobalt,false
41,2026-10-26,2026-10-26T05:30:00Z,19.90,acme,false
CSV
manifest items-sun.csv --contract items.toml --shape full --produced-at 2026-10-25T06:00:00Z --rows 36
deliver items-sun.csv items.toml 2026-10-25T06:05:00Z
manifest items-mon.csv --contract items.toml --shape last3 --produced-at 2026-10-26T06:00:00Z --rows 3
deliver items-mon.csv items.toml 2026-10-26T06:05:00Z

# notes: full on Sunday, changes without deletions on Monday: patched (Monday, Sunday)
sunday >notes-sun.csv
head -4 orders-mon.csv >notes-mon.csv
manifest notes-sun.csv --contract notes.toml --shape full --produced-at 2026-10-25T06:00:00Z --rows 36
deliver notes-sun.csv notes.toml 2026-10-25T06:05:00Z
manifest notes-mon.csv --contract notes.toml --shape patch --produced-at 2026-10-26T06:00:00Z \
    --since 2026-10-25T06:00:00Z --rows 3
deliver notes-mon.csv notes.toml 2026-10-26T06:05:00Z

# events: one 3-day window, nothing proven before or after it
cat >events-mon.csv <<'CSV'
id,event_date,kind
1,2026-10-24,open
2,2026-10-25,click
3,2026-10-25,close
CSV
manifest events-mon.csv --contract events.toml --shape last3 --produced-at 2026-10-26T06:00:00Z --rows 3
deliver events-mon.csv events.toml 2026-10-26T06:05:00Z

"$bin" verify --store "$store" >verify.out || { cat verify.out >&2; die "dogana verify failed"; }
for t in orders items notes events; do
    "$bin" claims --store "$store" "$t" --at 2026-10-27T07:00:00Z --json >"claims-$t.json" &&
        "$bin" claims --store "$store" "$t" --at 2026-10-27T07:00:00Z >"claims-$t.txt" ||
        die "dogana claims --store $store $t failed"
done

# --- dbt
# the project and the package are copied, so that dbt writes nothing into the repository
rm -rf "$work/dbt"
mkdir -p "$work/dbt"
cp -R "$root/dbt/dogana" "$root/dbt/example" "$work/dbt/"
export DOGANA_DBT_TARGET="$target_db"
export DOGANA_STORE="$store"
export DOGANA_DBT_DATABASE="$work/dbt.duckdb"
export DBT_PROFILES_DIR="$work/dbt/example"
export DBT_SEND_ANONYMOUS_USAGE_STATS=false
cd "$work/dbt/example"

phase "dbt deps"
"$dbt" deps --quiet >"$work/dbt-deps.log" 2>&1 || { cat "$work/dbt-deps.log" >&2; die "dbt deps failed"; }

# Reads target/run_results.json and checks each node's status and failing rows.
check_results() { # LABEL NAME=STATUS[:FAILURES]...
    local label="$1"
    shift
    "$venv/bin/python" - "$label" "$@" <<'PY'
import json, sys
label, wanted = sys.argv[1], sys.argv[2:]
results = json.load(open("target/run_results.json"))["results"]
by_name = {}
for r in results:
    by_name[r["unique_id"].split(".")[2]] = r
bad = []
for w in wanted:
    name, _, want = w.partition("=")
    status, _, failures = want.partition(":")
    r = by_name.pop(name, None)
    if r is None:
        bad.append(f"{name}: did not run (expected {want})")
        continue
    got = f"{r['status']}" + (f":{r['failures']}" if failures else "")
    if got != want:
        bad.append(f"{name}: {got}, expected {want}: {(r.get('message') or '').strip()}")
    else:
        print(f"  ok {name}: {got}")
for name, r in by_name.items():
    bad.append(f"{name}: ran but is not expected ({r['status']})")
if bad:
    print(f"test-dbt: {label}:", *bad, sep="\n  ", file=sys.stderr)
    sys.exit(1)
PY
}

phase "dbt build --exclude tag:must_fail (must pass)"
status=0
"$dbt" build --exclude tag:must_fail >"$work/dbt-build.log" 2>&1 || status=$?
if [ "$status" -ne 0 ]; then
    cat "$work/dbt-build.log" >&2
    die "dbt build --exclude tag:must_fail exited $status, expected 0"
fi
check_results "the tests that must pass" \
    table_dates=success \
    orders_export=success \
    unique_table_dates_table_name=pass \
    not_null_table_dates_table_name=pass \
    table_dates_are_the_claims=pass:0 \
    orders_fresh_on_tuesday=pass:0 \
    orders_fresh_exactly_max_age_old=pass:0 \
    orders_fresh_now=pass:0 \
    items_fresh_on_tuesday=pass:0 \
    notes_fresh_on_tuesday=pass:0 ||
    { cat "$work/dbt-build.log" >&2; die "a test that must pass did not"; }

phase "dbt build --select tag:must_fail (must fail)"
status=0
"$dbt" build --select tag:must_fail >"$work/dbt-fail.log" 2>&1 || status=$?
if [ "$status" -ne 1 ]; then
    cat "$work/dbt-fail.log" >&2
    die "dbt build --select tag:must_fail exited $status, expected 1 (failing tests)"
fi
# orders on Wednesday with a 1-day limit: its one region is too old; items on Tuesday with a 2-day
# limit: the two Sunday regions either side of Monday's window; events: two unknown regions
check_results "the tests that must fail" \
    orders_expired_on_wednesday=fail:1 \
    items_sunday_regions_older_than_2_days=fail:2 \
    events_unknown_regions=fail:2 ||
    { cat "$work/dbt-fail.log" >&2; die "a test that must fail did not fail as expected"; }
grep -E "^.*(FAIL|PASS) " "$work/dbt-fail.log" | sed 's/^/  /' || true

# --- the macros against the command line's claims, table by table
phase "the macros' dates against dogana claims --json"
cd "$work"
"$venv/bin/python" - "$target_db" "$work/dbt.duckdb" orders items notes events <<'PY' || die "the macros and dogana claims differ"
import datetime, json, os, sys
target, db, tables = sys.argv[1], sys.argv[2], sys.argv[3:]
query = "select table_name, complete_as_of, deletions_as_of, exact_as_of from {}.table_dates"
if target == "duckdb":
    import duckdb
    con = duckdb.connect(db, read_only=True)
    con.execute("SET TimeZone = 'UTC'")
    fetched = con.execute(query.format("main")).fetchall()
else:
    import psycopg2
    con = psycopg2.connect(os.environ["DOGANA_PG_URL"])
    cur = con.cursor()
    cur.execute("SET TimeZone = 'UTC'")
    cur.execute(query.format(os.environ["DOGANA_DBT_SCHEMA"]))
    fetched = cur.fetchall()
rows = {r[0]: r[1:] for r in fetched}
def instant(v):
    if v is None:
        return None
    if isinstance(v, dict):
        v = v.get("$datetime")
    return datetime.datetime.fromisoformat(v.replace("Z", "+00:00"))
bad = 0
for t in tables:
    doc = json.load(open(f"claims-{t}.json"))
    regions = [claim["region"] for claim in doc["regions"]]
    cs = [instant(r.get("complete_as_of")) for r in regions]
    ds = [instant(r.get("deletions_as_of")) for r in regions]
    want_c = None if None in cs else min(cs)
    want_d = None if None in ds else min(ds)
    # the table line of `dogana claims`: "<table>: <state>; exact at <p>" or "... no single instant"
    line = open(f"claims-{t}.txt").read().strip().splitlines()[-1]
    exact = line.split("; exact at ", 1)[1]
    want_e = None if exact == "no single instant" else instant(exact)
    got = tuple(rows[t])
    want = (want_c, want_d, want_e)
    same = all(g == w for g, w in zip(got, want))
    show = lambda ts: ", ".join("NULL" if v is None else v.astimezone(datetime.timezone.utc).isoformat() for v in ts)
    print(f"  {'ok' if same else 'DIFFERS'} {t}: macros ({show(got)}), dogana claims ({show(want)})")
    bad += not same
sys.exit(1 if bad else 0)
PY

# --- the columns dbt records for the typed orders_export model (an enforced model contract):
# dogana reads them from the manifest this run wrote, and they hash as the ODCS document's and
# the committed excerpt's (crates/dogana-columns/tests/data)
phase "dogana contract --dbt-manifest: the manifest dbt wrote, the ODCS document, the excerpt"
data="$root/crates/dogana-columns/tests/data"
schema_hash() { # dogana contract ARGS -> its schema_hash
    "$bin" contract "$@" >"$work/contract.out" 2>&1 || { cat "$work/contract.out" >&2; die "dogana contract $* failed"; }
    awk '/^schema_hash /{print $2}' "$work/contract.out"
}
live=$(schema_hash --dbt-manifest "$work/dbt/example/target/manifest.json" --model orders_export)
odcs=$(schema_hash --odcs "$data/orders.odcs.yaml" --schema orders)
excerpt=$(schema_hash --dbt-manifest "$data/dbt-manifest-excerpt.json" --model orders_export)
echo "  manifest.json $live, ODCS $odcs, excerpt $excerpt"
[ -n "$live" ] && [ "$live" = "$odcs" ] && [ "$live" = "$excerpt" ] ||
    die "the orders_export columns of dbt's manifest.json do not hash as the ODCS document's"

phase "done ($target_db): every expected pass passed, every expected failure failed"
