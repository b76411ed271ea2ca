#!/usr/bin/env bash
# The lake store's tests against real servers on 127.0.0.1: moto's S3 server and Azurite's blob
# service, installed when missing (or when their pins change) into $LAKE_TOOLS (default:
# ~/.cache/dogana-lake) from this repository's own pins: scripts/lake/requirements.txt (pip) and
# scripts/lake/package.json + package-lock.json (npm ci). moto runs behind
# scripts/lake/moto_serial.py, one request at a time: moto's own threaded server lets two
# If-Match PUTs on one ETag both win (docs/store-decisions.md). Starts both, runs every
# dogana-lake test with the `servers` feature (the conformance suite, lease renewal and the
# crash harness on S3 and Azure: DOGANA_LAKE_SERVER_KILLS kills each, default 30) and the
# #[ignore]d ones too (DuckDB's SQL; S3 and Azure contention, 8 writers, or
# DOGANA_LAKE_SERVER_CONTENTION=16x50 for 16 writers x 50 rounds; a SIGSTOPped writer), stops them.
# Then Delta tables on the S3 server (dogana-delta: its conformance suite, the crash harness and
# 16 writers x 10 deliveries, about a minute; DOGANA_DELTA_CONTENTION=16x50 is the issue's size,
# about 11 minutes on moto).
# A server that cannot start fails the run, naming why.
#
#   bash scripts/test-lake.sh [cargo test arguments, e.g. --test contention]
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
pins="$root/scripts/lake"
tools="${LAKE_TOOLS:-$HOME/.cache/dogana-lake}"
venv="$tools/venv"
node="$tools/node"
logs="$(mktemp -d "${TMPDIR:-/tmp}/dogana-test-lake.XXXXXX")"
pids=()

fail() {
  echo "test-lake: $*" >&2
  exit 1
}

stop() {
  for p in "${pids[@]}"; do
    kill "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
  rm -rf "$logs/azurite"
}
trap stop EXIT

free_port() {
  "$venv/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# waits until 127.0.0.1:$1 accepts connections, or the process $2 died
wait_port() {
  local port="$1" pid="$2" what="$3" log="$4"
  for _ in $(seq 1 200); do
    if ! kill -0 "$pid" 2>/dev/null; then
      fail "$what did not start: $(tail -n 5 "$log")"
    fi
    if "$venv/bin/python" -c "import socket,sys; socket.create_connection(('127.0.0.1',$port),0.2)" 2>/dev/null; then
      return 0
    fi
    sleep 0.1
  done
  fail "$what did not listen on 127.0.0.1:$port within 20 s: $(tail -n 5 "$log")"
}

echo "== tools in $tools"
mkdir -p "$tools"
if ! cmp -s "$pins/requirements.txt" "$venv/.pins" 2>/dev/null; then
  rm -rf "$venv"
  python3 -m venv "$venv" || fail "python3 -m venv failed (apt-get install python3-venv)"
  "$venv/bin/pip" install -q -r "$pins/requirements.txt" ||
    fail "pip could not install scripts/lake/requirements.txt"
  cp "$pins/requirements.txt" "$venv/.pins"
fi
if ! cmp -s "$pins/package-lock.json" "$node/package-lock.json" 2>/dev/null ||
  [ ! -x "$node/node_modules/.bin/azurite-blob" ]; then
  command -v npm >/dev/null || fail "npm is missing (apt-get install npm)"
  rm -rf "$node"
  mkdir -p "$node"
  cp "$pins/package.json" "$pins/package-lock.json" "$node/"
  (cd "$node" && npm ci --silent --no-audit --no-fund) || fail "npm ci could not install azurite"
fi

s3_port="$(free_port)"
echo "== moto (serialized) on 127.0.0.1:$s3_port"
"$venv/bin/python" "$pins/moto_serial.py" 127.0.0.1 "$s3_port" >"$logs/moto.log" 2>&1 &
pids+=($!)
wait_port "$s3_port" "$!" "moto" "$logs/moto.log"

az_port="$(free_port)"
echo "== azurite-blob on 127.0.0.1:$az_port"
"$node/node_modules/.bin/azurite-blob" --blobHost 127.0.0.1 --blobPort "$az_port" \
  --location "$logs/azurite" --silent --skipApiVersionCheck >"$logs/azurite.log" 2>&1 &
pids+=($!)
wait_port "$az_port" "$!" "azurite-blob" "$logs/azurite.log"

export AWS_ENDPOINT="http://127.0.0.1:$s3_port" AWS_ALLOW_HTTP=true AWS_REGION=us-east-1 \
  AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test
"$venv/bin/python" - <<PY || fail "could not create the S3 bucket on moto"
import boto3
boto3.client("s3", endpoint_url="$AWS_ENDPOINT", region_name="us-east-1",
             aws_access_key_id="test", aws_secret_access_key="test").create_bucket(Bucket="dogana")
PY
# Azurite's well-known development account
export AZURE_STORAGE_USE_EMULATOR=true AZURE_ALLOW_HTTP=true \
  AZURITE_BLOB_STORAGE_URL="http://127.0.0.1:$az_port"
"$venv/bin/python" - <<PY || fail "could not create the Azure container on Azurite"
from azure.storage.blob import BlobServiceClient
conn = ("DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;"
        "AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;"
        "BlobEndpoint=http://127.0.0.1:$az_port/devstoreaccount1;")
BlobServiceClient.from_connection_string(conn).create_container("dogana")
PY

export DOGANA_LAKE_S3_URL="s3://dogana/test" DOGANA_LAKE_AZ_URL="az://dogana/test" \
  DOGANA_LAKE_PYTHON="$venv/bin/python"
echo "== cargo test -p dogana-lake (with the ignored tests)"
cd "$root"
started=$(date +%s)
cargo test -p dogana-lake --features servers "$@" -- --include-ignored
echo "== dogana-lake tests done in $(( $(date +%s) - started )) s"
echo "== Delta tables on the S3 server: the conformance suite, the crash harness and ${DOGANA_DELTA_CONTENTION:-16x10} writers x deliveries"
started=$(date +%s)
cargo test -p dogana-delta --features servers --test conformance s3::
cargo test -p dogana-delta --features servers --test crash s3::
DOGANA_DELTA_CONTENTION="${DOGANA_DELTA_CONTENTION:-16x10}" \
  cargo test -p dogana-delta --features servers --test contention -- --ignored
echo "== dogana-delta server tests done in $(( $(date +%s) - started )) s"
