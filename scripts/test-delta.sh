#!/usr/bin/env bash
# Delta readers read exactly the rows dogana published. One history, delivered with the same
# commands into a SQLite store and into a Delta store (delta+file://): a full read, a window,
# changes with a tombstone, a refused delivery (its manifest declares a wrong row count), a
# replay, a contract that adds a column (then a complete full read and changes under it), and
# appends into a keyless table (the newest of which is refused). After every delivery
# (scripts/delta/check.py):
#   - the deltalake package, polars, DuckDB's delta_scan and the views `dogana duckdb-sql` prints
#     read SQLite's rows of the table, and its regions view SQLite's regions;
#   - the table's newest Delta commit carries its newest receipt (commitInfo.dogana.receipt).
# Then dogana verify, claims, ledger, plan, receipts and show must succeed on the Delta store
# and print what they print on SQLite.
#
#   bash scripts/test-delta.sh
#
# Environment:
#   DOGANA_BIN        the dogana binary, built with the delta feature
#                     (default: ${CARGO_TARGET_DIR:-target}/debug/dogana)
#   DOGANA_DELTA_VENV the readers' virtual environment, made from scripts/delta/requirements.txt
#                     and remade when it changes (default: ${XDG_CACHE_HOME:-~/.cache}/dogana-delta-venv);
#                     DuckDB's delta extension comes from the duckdb-extension-delta wheel, so
#                     nothing is fetched at run time
#   PYTHON            the Python that creates it (default python3, 3.11 or later)
# Needs pip access to PyPI on the first run. Exits 1 naming what is missing or what differs;
# removes its work dir when every check passed.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
started=$SECONDS

die() {
    echo "test-delta: $*" >&2
    exit 1
}
phase() {
    echo "== [$((SECONDS - started)) s] $*"
}

# --- the dogana binary, with the Delta backend
bin="${DOGANA_BIN:-${CARGO_TARGET_DIR:-$root/target}/debug/dogana}"
case "$bin" in /*) ;; *) bin="$root/$bin" ;; esac
build="cargo build -p dogana-cli --features delta (or name another binary in DOGANA_BIN)"
[ -x "$bin" ] || die "no dogana binary at $bin: build it with $build"

work="$(mktemp -d "${TMPDIR:-/tmp}/dogana-delta.XXXXXX")"
cd "$work"
sqlite="$work/store.db"
delta="delta+file://$work/delta"
declare -A stores=([sqlite]="$sqlite" [delta]="$delta")
mkdir delta out sql
if ! "$bin" verify --store "$delta" >out/probe 2>&1; then
    grep -q "without the delta backend" out/probe &&
        die "$bin was built without the delta backend: build it with $build"
    cat out/probe >&2
    die "dogana verify --store $delta failed on an empty store"
fi

# --- the readers, in a virtual environment outside the clone
python="${PYTHON:-python3}"
command -v "$python" >/dev/null || die "no $python on PATH (set PYTHON)"
# the oldest Python the pinned polars and pyarrow support
"$python" -c 'import sys; assert sys.version_info >= (3, 11)' 2>/dev/null || die "$python is not Python 3.11 or later (set PYTHON)"
venv="${DOGANA_DELTA_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/dogana-delta-venv}"
requirements="$root/scripts/delta/requirements.txt"
if ! cmp -s "$requirements" "$venv/dogana-requirements.txt" 2>/dev/null; then
    phase "the readers' virtual environment: $venv (pip install -r scripts/delta/requirements.txt)"
    rm -rf "$venv"
    "$python" -m venv "$venv" || die "$python -m venv $venv failed (on Debian: apt-get install python3-venv)"
    "$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$requirements" ||
        die "pip could not install scripts/delta/requirements.txt into $venv (is PyPI reachable?)"
    cp "$requirements" "$venv/dogana-requirements.txt"
else
    phase "the readers' virtual environment: $venv (reused)"
fi

# --- the history, delivered with the same commands to both stores
phase "deliveries to $sqlite and $delta (work dir $work)"

# check TABLE CONTRACT: the Delta readers read SQLite's rows of TABLE, and its newest commit
# carries its newest receipt (scripts/delta/check.py)
check() {
    local table="$1" contract="$2" columns receipt
    "$bin" duckdb-sql --store "$delta" "$table" >"sql/$table.sql" ||
        die "dogana duckdb-sql --store $delta $table failed"
    # the published columns and their types, as the contract hashes them
    columns=$("$bin" contract "$contract" -o "out/$table.contract.json" --force | sed -n 's/^hashed columns: //p') ||
        die "dogana contract $contract failed"
    [ -n "$columns" ] || die "dogana contract $contract printed no hashed columns"
    # the identity of the newest receipt (the last of dogana receipts --json)
    receipt=$("$bin" receipts --store "$delta" "$table" --json |
        "$venv/bin/python" -c 'import json, sys; print(json.dumps(json.load(sys.stdin)[-1]))' |
        "$bin" identity - | sed -n 's/^Receipt //p') ||
        die "dogana receipts --store $delta $table --json, or dogana identity of its last receipt, failed"
    [ -n "$receipt" ] || die "dogana identity printed no receipt identity for the newest receipt of $table"
    "$venv/bin/python" "$root/scripts/delta/check.py" "$sqlite" "$work/delta" "sql/$table.sql" "$table" "$columns" "$receipt" ||
        die "$table: the Delta store differs from SQLite (above; work dir $work)"
}

# deliver OUTCOME FILE CONTRACT AT: delivers FILE (named TABLE-*.csv, its manifest FILE.json) to
# both stores; each must print OUTCOME (accepted, rejected or replayed) and exit as it says (1
# for rejected); then checks the table
deliver() {
    local want="$1" file="$2" contract="$3" at="$4" name status
    for name in sqlite delta; do
        status=0
        "$bin" deliver "$file" --store "${stores[$name]}" --contract "$contract" --at "$at" --source test-delta \
            >"out/$file.$name" 2>&1 || status=$?
        if [[ "$(head -1 "out/$file.$name")" != "$file: $want "* ]] ||
            [ "$status" -ne "$([ "$want" = rejected ] && echo 1 || echo 0)" ]; then
            cat "out/$file.$name" >&2
            die "$file on $name: exit $status, expected $want"
        fi
    done
    echo "$file: $want on both stores"
    check "${file%%-*}" "$contract"
}
manifest() { # FILE CONTRACT SHAPE PRODUCED_AT ROWS [more options]
    local file="$1" contract="$2" shape="$3" at="$4" rows="$5"
    shift 5
    "$bin" manifest "$file" --contract "$contract" --shape "$shape" --produced-at "$at" --rows "$rows" "$@" \
        >/dev/null || die "dogana manifest $file failed"
}

# orders: the quick start's contract with every column typed; v2 adds the column channel
orders_contract() { # EXTRA_COLUMNS
    cat <<TOML
table = "orders"
key = ["id"]
window_column = "order_date"
cursor_column = "updated_at"
deleted_column = "deleted"
columns = [
  ["id", "int"],
  ["order_date", "date"],
  ["updated_at", "datetime"],
  ["amount", "decimal(12,2)"],
  ["customer", "str"],
  ["paid", "bool"],
  ["weight", "float"],$1
  ["deleted", "bool"],
]

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
TOML
}
orders_contract "" >orders.toml
orders_contract '
  ["channel", "str"],' >orders-v2.toml

# orders 1 to N from 2026-09-19 on, as quickstart.sh's export, some values empty (NULL); with
# V2 the column channel too, and without orders 7 and 36, deleted by then
orders_full() { # N V2
    awk -v n="$1" -v v2="$2" 'BEGIN {
      printf "id,order_date,updated_at,amount,customer,paid,weight%s,deleted\n", v2 ? ",channel" : ""
      split("acme,borealis,cobalt,dunmore,elm,fjord,granite", customers, ",")
      for (i = 1; i <= n; i++) {
        if (v2 && (i == 7 || i == 36)) continue
        d = 18 + i
        date = d <= 30 ? sprintf("2026-09-%02d", d) : sprintf("2026-10-%02d", d - 30)
        customer = i % 11 == 0 ? "" : customers[1 + i % 7]
        weight = i % 13 == 0 ? "" : sprintf("%.3f", i * 0.125)
        channel = v2 ? (i % 4 == 0 ? ",shop" : i % 4 == 1 ? ",web" : i % 4 == 2 ? ",\"phone, fax\"" : ",") : ""
        printf "%d,%s,%sT%02d:15:00Z,%d.%02d,%s,%s,%s%s,false\n", i, date, date, 8 + i % 10, \
          10 + (i * 37) % 90, (i * 13) % 100, customer, i % 3 == 0 ? "true" : "false", weight, channel
      }
    }'
}

# (a) Sunday: the whole table, 36 orders
orders_full 36 0 >orders-sun.csv
manifest orders-sun.csv orders.toml full 2026-10-25T06:00:00Z 36
deliver accepted orders-sun.csv orders.toml 2026-10-25T06:05:00Z

# (b) Monday: the 3-day window [2026-10-24, 2026-10-26]; order 36 (2026-10-24) is gone
cat >orders-mon.csv <<'CSV'
id,order_date,updated_at,amount,customer,paid,weight,deleted
37,2026-10-25,2026-10-25T12:10:00.250Z,41.00,acme,true,1.5,false
38,2026-10-26,2026-10-26T07:40:00+02:00,17.25,cobalt,false,,false
39,2026-10-24,2026-10-25T23:55:00-05:00,63.8,elm,true,0.001,false
CSV
manifest orders-mon.csv orders.toml last3 2026-10-26T06:00:00Z 3
deliver accepted orders-mon.csv orders.toml 2026-10-26T06:05:00Z

# (c) Tuesday: changes since Sunday 06:00 (the oldest evidence), orders 5 and 12 updated, 40
# new, 7 deleted
cat >orders-tue.csv <<'CSV'
id,order_date,updated_at,amount,customer,paid,weight,deleted
5,2026-09-23,2026-10-26T09:30:00Z,99.00,fjord,true,2.25,false
12,2026-09-30,2026-10-26T11:00:00.000001Z,12.5,,false,-0.5,false
40,2026-10-26,2026-10-26T16:40:00Z,0,granite,false,3,false
7,2026-09-25,2026-10-26T15:45:00Z,0,borealis,false,,true
CSV
manifest orders-tue.csv orders.toml changes 2026-10-27T06:00:00Z 3 --since 2026-10-25T06:00:00Z --tombstones 1
deliver accepted orders-tue.csv orders.toml 2026-10-27T06:05:00Z

# (f) Wednesday: changes whose manifest declares 4 rows where the file holds 3: refused
cat >orders-wed.csv <<'CSV'
id,order_date,updated_at,amount,customer,paid,weight,deleted
38,2026-10-26,2026-10-27T08:00:00Z,19.25,cobalt,false,1,false
41,2026-10-27,2026-10-27T10:20:00Z,55.00,granite,true,2,false
42,2026-10-28,2026-10-28T04:30:00Z,8.90,dunmore,false,3,false
CSV
manifest orders-wed.csv orders.toml changes 2026-10-28T06:00:00Z 4 --since 2026-10-27T06:00:00Z
deliver rejected orders-wed.csv orders.toml 2026-10-28T06:05:00Z

# (g) Tuesday's file again: a replay, nothing changes
deliver replayed orders-tue.csv orders.toml 2026-10-28T06:10:00Z

# (e) Thursday: contract v2 adds channel; the complete whole-table read it needs (orders 1 to
# 42 but 7 and 36), then changes under v2 with a tombstone
orders_full 42 1 >orders-thu.csv
manifest orders-thu.csv orders-v2.toml full 2026-10-29T06:00:00Z 40
deliver accepted orders-thu.csv orders-v2.toml 2026-10-29T06:05:00Z
cat >orders-fri.csv <<'CSV'
id,order_date,updated_at,amount,customer,paid,weight,channel,deleted
1,2026-09-19,2026-10-29T10:00:00Z,1.10,acme,true,9.75,web,false
43,2026-10-29,2026-10-29T11:30:00Z,43.00,elm,false,,,false
2,2026-09-20,2026-10-29T12:00:00Z,0,cobalt,false,,,true
CSV
manifest orders-fri.csv orders-v2.toml changes 2026-10-30T06:00:00Z 2 --since 2026-10-29T06:00:00Z --tombstones 1
deliver accepted orders-fri.csv orders-v2.toml 2026-10-30T06:05:00Z

# (d) events: a keyless table, appended to (a keyless changes shape without deletions); its
# newest delivery is refused, so its newest receipt is a rejected one
cat >events.toml <<'TOML'
table = "events"
key = []
cursor_column = "at"
start_at = "2026-10-01T00:00:00Z"
columns = [
  ["at", "datetime"],
  ["kind", "str"],
  ["order_id", "int"],
  ["amount", "decimal(10,3)"],
  ["ok", "bool"],
  ["day", "date"],
]

[shapes.append]
kind = "changes"
TOML
cat >events-1.csv <<'CSV'
at,kind,order_id,amount,ok,day
2026-10-25T06:30:00Z,open,1,1.500,true,2026-10-25
2026-10-25T07:00:00.123456+02:00,click,2,,false,2026-10-25
2026-10-25T08:00:00Z,close,,0.001,,
CSV
manifest events-1.csv events.toml append 2026-10-25T09:00:00Z 3 --since 2026-10-01T00:00:00Z
deliver accepted events-1.csv events.toml 2026-10-25T09:05:00Z
# twice the same row: a keyless table keeps both
cat >events-2.csv <<'CSV'
at,kind,order_id,amount,ok,day
2026-10-26T01:00:00Z,"say ""hi""",3,-2.25,true,2026-10-26
2026-10-26T01:00:00Z,"say ""hi""",3,-2.25,true,2026-10-26
CSV
manifest events-2.csv events.toml append 2026-10-26T09:00:00Z 2 --since 2026-10-25T09:00:00Z
deliver accepted events-2.csv events.toml 2026-10-26T09:05:00Z
cp events-2.csv events-3.csv
manifest events-3.csv events.toml append 2026-10-27T09:00:00Z 5 --since 2026-10-26T09:00:00Z
deliver rejected events-3.csv events.toml 2026-10-27T09:05:00Z

# --- the other readers of a store
phase "dogana verify, claims, ledger, plan, receipts and show: on the Delta store as on SQLite"
# run NAME OUTPUT COMMAND ARGS...: dogana COMMAND --store (the store NAME) ARGS, into out/NAME/OUTPUT
run() {
    local name="$1" output="$2" command="$3"
    shift 3
    "$bin" "$command" --store "${stores[$name]}" "$@" >"out/$name/$output" 2>&1 ||
        { cat "out/$name/$output" >&2; die "dogana $command --store ${stores[$name]} $* failed"; }
}
for name in sqlite delta; do
    mkdir "out/$name"
    run "$name" verify verify
    for t in orders events; do
        run "$name" "$t.claims" claims "$t" --at 2026-10-31T00:00:00Z
        run "$name" "$t.ledger" ledger "$t"
        run "$name" "$t.plan" plan "$t" --at 2026-10-31T00:00:00Z
        run "$name" "$t.receipts" receipts "$t" --json
    done
    run "$name" show.log show orders events --at 2026-10-31T00:00:00Z -o "out/$name/show.html"
done
# show.log names the file written
diff -r -x show.log out/sqlite out/delta >&2 ||
    die "dogana's readers print otherwise on the Delta store than on SQLite (above)"
echo "  ok: every output is the same on both stores"

cd "$root"
rm -rf "$work"
phase "done: every Delta reader reads what dogana published"
