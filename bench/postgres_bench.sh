#!/usr/bin/env bash
# Postgres receiver benchmark (bench/postgres.md): `dogana deliver` against psql by hand, in
# alternating rounds, on one server with the same settings for both.
#   bash bench/postgres_bench.sh ROWS UPSERTS TOMBSTONES ROUNDS WORKDIR
# Needs DOGANA_PG_URL (scripts/postgres.sh start), release builds of dogana (feature postgres)
# and of dogana-sqlite's sqlite_bench example (the file generator) in $CARGO_TARGET_DIR.
set -euo pipefail
n=${1:-10000000}; u=${2:-1000000}; t=${3:-10000}; rounds=${4:-3}; work=${5:-/tmp/dogana-pg-bench}
target="${CARGO_TARGET_DIR:-$(cd "$(dirname "$0")/.." && pwd)/target}/release"
dogana="$target/dogana"
: "${DOGANA_PG_URL:?start a server: eval \"\$(bash scripts/postgres.sh start)\"}"
mkdir -p "$work"; cd "$work"
psql() { command psql -X -q -v ON_ERROR_STOP=1 "$DOGANA_PG_URL" "$@"; }
secs() { date +%s.%N; }

if [ ! -f "full-$n.csv" ]; then
    "$target/examples/sqlite_bench" gen "$n" "full-$n.csv"
fi
# changes: the first U rows again with a new amount and cursor, then T of the next ids tombstoned
if [ ! -f "changes-$n-$u-$t.csv" ]; then
    awk -F, -v u="$u" -v t="$t" 'NR == 1 { print; next }
        NR <= u + 1 { printf "%s,%s,2027-01-01T12:00:00Z,%s9,%s,false\n", $1, $2, $4, $5; next }
        NR <= u + t + 1 { printf "%s,,,,,true\n", $1; next }
        { exit }' "full-$n.csv" > "changes-$n-$u-$t.csv"
fi
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

[shapes.changes]
kind = "changes"
deletions = "tombstone"

[shapes.partition]
kind = "window"
TOML
types=(--column-type amount=float --column-type customer=str)
"$dogana" manifest "full-$n.csv" --contract orders.toml --force --shape full \
    --produced-at 2027-01-01T00:00:00Z --rows "$n" >/dev/null
"$dogana" manifest "changes-$n-$u-$t.csv" --contract orders.toml --force --shape changes \
    --produced-at 2027-01-02T00:00:00Z --since 2027-01-01T00:00:00Z --rows "$u" --tombstones "$t" >/dev/null

psql -c "SHOW shared_buffers" -c "SHOW max_wal_size" -c "SHOW synchronous_commit" -c "SHOW fsync" -c "SHOW wal_level" -c "SHOW maintenance_work_mem" -c "SHOW work_mem" -At | paste -sd' '

for r in $(seq 1 "$rounds"); do
    psql -c "DROP SCHEMA IF EXISTS bench_d CASCADE; DROP SCHEMA IF EXISTS bench_p CASCADE; CREATE SCHEMA bench_d; CREATE SCHEMA bench_p;
             CREATE TABLE bench_p.orders (id BIGINT PRIMARY KEY, order_date DATE, updated_at TIMESTAMPTZ, amount DOUBLE PRECISION, customer TEXT, deleted BOOLEAN)"
    psql -c "CHECKPOINT"
    a=$(secs)
    "$dogana" deliver "full-$n.csv" --store "$DOGANA_PG_URL?schema=bench_d" --contract orders.toml \
        --at 2027-01-01T01:00:00Z "${types[@]}" >/dev/null
    b=$(secs)
    psql -c "CHECKPOINT"
    c=$(secs)
    psql -c "\\copy bench_p.orders FROM 'full-$n.csv' CSV HEADER"
    d=$(secs)
    psql -c "CHECKPOINT"
    e=$(secs)
    "$dogana" deliver "changes-$n-$u-$t.csv" --store "$DOGANA_PG_URL?schema=bench_d" --contract orders.toml \
        --at 2027-01-02T01:00:00Z "${types[@]}" >/dev/null
    f=$(secs)
    psql -c "CHECKPOINT"
    g=$(secs)
    psql <<SQL
BEGIN;
CREATE TEMP TABLE s (id BIGINT, order_date DATE, updated_at TIMESTAMPTZ, amount DOUBLE PRECISION, customer TEXT, deleted BOOLEAN);
\\copy s FROM 'changes-$n-$u-$t.csv' CSV HEADER
ANALYZE s;
INSERT INTO bench_p.orders SELECT * FROM s WHERE NOT deleted
    ON CONFLICT (id) DO UPDATE SET order_date = EXCLUDED.order_date, updated_at = EXCLUDED.updated_at,
    amount = EXCLUDED.amount, customer = EXCLUDED.customer, deleted = EXCLUDED.deleted;
DELETE FROM bench_p.orders o USING s WHERE o.id = s.id AND s.deleted;
COMMIT;
SQL
    h=$(secs)
    rows_d=$(psql -At -c "SELECT count(*) FROM bench_d.orders")
    rows_p=$(psql -At -c "SELECT count(*) FROM bench_p.orders")
    awk -v r="$r" -v fd="$(echo "$b - $a" | bc)" -v fp="$(echo "$d - $c" | bc)" \
        -v cd="$(echo "$f - $e" | bc)" -v cp="$(echo "$h - $g" | bc)" -v nd="$rows_d" -v np="$rows_p" \
        'BEGIN { printf "round %d: full dogana %.2f s, psql %.2f s (%.2fx); changes dogana %.2f s, by hand %.2f s (%.2fx); rows %d / %d\n", r, fd, fp, fd / fp, cd, cp, cd / cp, nd, np }'
done
