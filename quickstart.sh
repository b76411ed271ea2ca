#!/usr/bin/env bash
# The dogana quick start: a receiver on SQLite, end to end, with only cargo installed.
#
#   bash quickstart.sh [WORKDIR]
#
# Builds the `dogana` binary once, then in WORKDIR (default: a new temporary directory) writes
# the orders contract, generates a small orders export with awk, and delivers to a SQLite store:
# a full dump (Sunday), a changes file with a tombstone (Monday), a file whose manifest lies
# (refused, with why), the Monday file again (a replay); then lists the receipts, verifies the
# store and prints what the table claims. Every time is given explicitly, so the output is the
# same on every run (docs/quickstart.md shows it).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

echo "== building dogana (cargo build --release -p dogana-cli)"
(cd "$root" && cargo build --release -q -p dogana-cli)
target="${CARGO_TARGET_DIR:-target}"
case "$target" in
  /*) ;;
  *) target="$root/$target" ;;
esac
bin="$target/release/dogana"
[ -x "$bin" ] || { echo "quickstart: no binary at $bin" >&2; exit 1; }

work="${1:-}"
if [ -z "$work" ]; then
  work="$(mktemp -d "${TMPDIR:-/tmp}/dogana-quickstart.XXXXXX")"
fi
mkdir -p "$work"
cd "$work"
rm -f orders.db orders.db-wal orders.db-shm
echo "== work dir: $work"

# Shows the command, then runs it.
dogana() {
  echo "\$ dogana $*"
  "$bin" "$@"
}

step() {
  echo
  echo "== $*"
}

step "the orders contract (orders.toml): key id, window order_date, cursor updated_at, deleted column deleted"
cat > orders.toml <<'TOML'
table = "orders"
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
TOML
cat orders.toml

step "a small orders export, read on Sunday 2026-10-25 at 06:00 UTC: 36 orders from 2026-09-19 to 2026-10-24"
awk 'BEGIN {
  print "id,order_date,updated_at,amount,customer,deleted"
  split("acme,borealis,cobalt,dunmore,elm,fjord,granite", customers, ",")
  for (i = 1; i <= 36; i++) {
    d = 18 + i                                  # day of September; past 30 runs into October
    date = d <= 30 ? sprintf("2026-09-%02d", d) : sprintf("2026-10-%02d", d - 30)
    printf "%d,%s,%sT%02d:15:00Z,%d.%02d,%s,false\n", i, date, date, 8 + i % 10, 10 + (i * 37) % 90, (i * 13) % 100, customers[1 + i % 7]
  }
}' > orders-sun.csv
head -4 orders-sun.csv
echo "... ($(($(wc -l < orders-sun.csv) - 1)) rows)"

step "Monday's changes since Sunday 06:00: orders 5 and 12 updated, 37 to 39 new, order 7 deleted (a tombstone)"
cat > orders-mon.csv <<'CSV'
id,order_date,updated_at,amount,customer,deleted
5,2026-09-23,2026-10-25T09:30:00Z,99.00,fjord,false
12,2026-09-30,2026-10-25T11:00:00Z,12.50,fjord,false
37,2026-10-25,2026-10-25T12:10:00Z,41.00,acme,false
38,2026-10-25,2026-10-25T16:40:00Z,17.25,cobalt,false
39,2026-10-26,2026-10-26T05:55:00Z,63.80,elm,false
7,2026-09-25,2026-10-25T15:45:00Z,0,borealis,true
CSV
cat orders-mon.csv

step "1. the full dump: its manifest (dogana manifest hashes the file), then the delivery, accepted"
dogana manifest orders-sun.csv --contract orders.toml --shape full \
  --produced-at 2026-10-25T06:00:00Z --rows 36
dogana deliver orders-sun.csv --store orders.db --contract orders.toml \
  --at 2026-10-25T06:05:00Z --source quickstart

step "2. Monday's changes since Sunday 06:00, 5 rows and 1 tombstone: accepted, upsert then tombstone"
dogana manifest orders-mon.csv --contract orders.toml --shape changes \
  --produced-at 2026-10-26T06:00:00Z --since 2026-10-25T06:00:00Z --rows 5 --tombstones 1
dogana deliver orders-mon.csv --store orders.db --contract orders.toml \
  --at 2026-10-26T06:05:00Z --source quickstart

step "3. Tuesday's changes, truncated: the manifest declares 4 rows, the file holds 3. The receiver counts again and rejects it (exit 1); the receipt is kept"
cat > orders-tue.csv <<'CSV'
id,order_date,updated_at,amount,customer,deleted
38,2026-10-25,2026-10-26T08:00:00Z,19.25,cobalt,false
40,2026-10-26,2026-10-26T10:20:00Z,55.00,granite,false
41,2026-10-27,2026-10-27T04:30:00Z,8.90,dunmore,false
CSV
dogana manifest orders-tue.csv --contract orders.toml --shape changes \
  --produced-at 2026-10-27T06:00:00Z --since 2026-10-26T06:00:00Z --rows 4
status=0
dogana deliver orders-tue.csv --store orders.db --contract orders.toml \
  --at 2026-10-27T06:05:00Z --source quickstart 2>&1 || status=$?
if [ "$status" -ne 1 ]; then
  echo "quickstart: the truncated file should be rejected with exit 1, got $status" >&2
  exit 1
fi
echo "(exit status $status, as expected: rejected)"

step "4. Monday's file delivered again: the same manifest was accepted, so it is a replay (exit 0) and nothing changes"
dogana deliver orders-mon.csv --store orders.db --contract orders.toml \
  --at 2026-10-27T06:10:00Z --source quickstart

step "5. every receipt the store keeps, accepted and rejected, in order (a replay stores none)"
dogana receipts --store orders.db orders

step "6. the stored ledger is the fold of the accepted receipts"
dogana verify --store orders.db

step "7. what the table claims on Tuesday at 07:00, with evidence older than 2 days expired"
dogana claims --store orders.db orders --at 2026-10-27T07:00:00Z --limit-days 2

step "8. the same claims a day later with a 1-day limit: Monday's proof has expired"
dogana claims --store orders.db orders --at 2026-10-28T07:00:00Z --limit-days 1

echo
echo "== done: the store is $work/orders.db"
