#!/usr/bin/env bash
# The lake store's tests against real servers on 127.0.0.1: moto's S3 server (PyPI
# `moto[server]` >= 5.1.5) and Azurite's blob service (npm `azurite`), installed when missing
# into $LAKE_TOOLS (default: ~/.cache/dogana-lake). Starts both, runs every dogana-lake test
# (the #[ignore]d ones too: DuckDB's SQL, S3 and Azure contention, a SIGSTOPped writer), stops
# them. A server that cannot start fails the run, naming why.
#
#   bash scripts/test-lake.sh
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
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
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv" || fail "python3 -m venv failed (apt-get install python3-venv)"
fi
"$venv/bin/python" -c 'import moto, duckdb, boto3, azure.storage.blob' 2>/dev/null ||
  "$venv/bin/pip" install -q "moto[server]>=5.1.5" duckdb boto3 azure-storage-blob ||
  fail "pip could not install moto[server], duckdb, boto3, azure-storage-blob"
if [ ! -x "$node/node_modules/.bin/azurite-blob" ]; then
  command -v npm >/dev/null || fail "npm is missing (apt-get install npm)"
  mkdir -p "$node"
  (cd "$node" && npm install --silent azurite) || fail "npm could not install azurite"
fi

s3_port="$(free_port)"
echo "== moto_server on 127.0.0.1:$s3_port"
"$venv/bin/moto_server" -H 127.0.0.1 -p "$s3_port" >"$logs/moto.log" 2>&1 &
pids+=($!)
wait_port "$s3_port" "$!" "moto_server" "$logs/moto.log"

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
cargo test -p dogana-lake -- --include-ignored
echo "== done in $(( $(date +%s) - started )) s"
