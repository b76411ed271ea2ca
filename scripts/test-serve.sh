#!/usr/bin/env bash
# The receiving service through curl, as a sender would use it: `dogana serve` on 127.0.0.1
# (a port the system picks), one case per status a sender meets. Needs the dogana binary built
# with the serve feature (DOGANA_BIN, else target/debug/dogana) and curl.
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${DOGANA_BIN:-${CARGO_TARGET_DIR:-$PWD/target}/debug/dogana}"
command -v curl >/dev/null || { echo "scripts/test-serve.sh: curl is needed" >&2; exit 1; }
[ -x "$bin" ] || { echo "scripts/test-serve.sh: $bin is missing: cargo build -p dogana-cli --features serve" >&2; exit 1; }

work=$(mktemp -d)
pid=""
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
mkdir "$work/contracts"
cat > "$work/contracts/orders.toml" <<'TOML'
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

[shapes.last3]
kind = "window"
size = "3d"

[shapes.changes]
kind = "changes"
deletions = "tombstone"
TOML
cat > "$work/sun.csv" <<'CSV'
id,order_date,updated_at,amount,deleted
1,2026-10-20,2026-10-20T10:00:00Z,10.00,false
2,2026-10-21,2026-10-21T10:00:00Z,20.00,false
CSV
token=token-of-acme
printf '[[sender]]\nname = "acme"\ntoken_sha256 = "%s"\ndeliver = ["orders"]\n' \
  "$(printf %s "$token" | sha256sum | cut -d' ' -f1)" > "$work/senders.toml"
cd "$work"
"$bin" manifest sun.csv --contract contracts/orders.toml --shape full \
  --produced-at 2026-10-25T06:00:00Z --rows 2 >/dev/null
"$bin" manifest sun.csv --contract contracts/orders.toml --shape full \
  --produced-at 2026-10-25T07:00:00Z --rows 3 -o lying.json >/dev/null

"$bin" serve --store orders.db --contracts contracts --tokens senders.toml \
  --listen 127.0.0.1:0 --staging staging --max-bytes 100000 > serve.out 2> serve.log &
pid=$!
for _ in $(seq 100); do [ -s serve.out ] && break; sleep 0.1; done
base=$(sed -n 's/^listening on //p' serve.out)
[ -n "$base" ] || { echo "the service did not start:" >&2; cat serve.log >&2; exit 1; }

failed=0
expect() { # expect NAME STATUS CURL-ARGS...
    local name=$1 want=$2; shift 2
    local got
    got=$(curl -s -o body.json -w '%{http_code}' "$@")
    if [ "$got" = "$want" ]; then echo "ok   $name ($got)"; else
        echo "FAIL $name: status $got, expected $want: $(head -c 300 body.json)"; failed=1; fi
}
d="$base/v1/tables/orders/deliveries"
auth=(-H "Authorization: Bearer $token")
expect "accepted"            200 "${auth[@]}" -F manifest=@sun.csv.json -F file=@sun.csv "$d"
grep -q '"outcome":"accepted"' body.json || { echo "FAIL accepted: $(cat body.json)"; failed=1; }
expect "replayed"            200 "${auth[@]}" -F manifest=@sun.csv.json -F file=@sun.csv "$d"
grep -q '"outcome":"replayed"' body.json || { echo "FAIL replayed: $(cat body.json)"; failed=1; }
expect "rejected"            422 "${auth[@]}" -F manifest=@lying.json -F file=@sun.csv "$d"
expect "no token"            401 -F manifest=@sun.csv.json -F file=@sun.csv "$d"
expect "another table"       403 "${auth[@]}" -F manifest=@sun.csv.json -F file=@sun.csv "$base/v1/tables/customers/deliveries"
expect "not multipart"       400 "${auth[@]}" --data-binary @sun.csv "$d"
head -c 200000 /dev/zero > big.csv
expect "over --max-bytes"    413 "${auth[@]}" -F manifest=@sun.csv.json -F file=@big.csv "$d"
expect "claims"              200 "${auth[@]}" "$base/v1/tables/orders/claims"
expect "receipts"            200 "${auth[@]}" "$base/v1/tables/orders/receipts"
expect "unknown route"       404 "$base/v2/anything"
expect "openapi"             200 "$base/v1/openapi.json"
expect "metrics"             200 "$base/metrics"
grep -q 'dogana_deliveries_total{table="orders",outcome="rejected"} 1' body.json || { echo "FAIL metrics: no rejected delivery counted"; failed=1; }
left=$(find staging -name '.upload-*')
[ -z "$left" ] || { echo "FAIL staging: $left left behind"; failed=1; }

kill -TERM "$pid"; wait "$pid" || { echo "FAIL: the service did not exit 0 on SIGTERM"; failed=1; }
pid=""
"$bin" verify --store orders.db >/dev/null || { echo "FAIL: verify"; failed=1; }
[ "$failed" = 0 ] && echo "scripts/test-serve.sh: every case passed"
exit $failed
