#!/usr/bin/env bash
# bench/show.md's figures: the large pages of dogana-show's `large` example, opened in headless
# Chromium; prints the file size, the time to make it, and the page's own marks (data-loaded-ms:
# since navigation started, when the page is drawn; data-render-ms: the page's script alone).
#   bash bench/show.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-3}"
cargo build --release -q -p dogana-show --example large
bin="${CARGO_TARGET_DIR:-target}/release/examples/large"
out="$(mktemp -d)"
for variant in "10000 200 100000" "10000 200 0" "10000 2000 0"; do
  set -- $variant
  page="$out/large-$1-$2-$3.html"
  "$bin" "$page" "$1" "$2" "$3"
  for i in $(seq "$runs"); do
    profile="$(mktemp -d)"
    chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
      --disable-component-update --disable-sync --no-first-run --user-data-dir="$profile" \
      --dump-dom "file://$page" 2>/dev/null | grep -o 'data-render-ms="[0-9.]*" data-loaded-ms="[0-9.]*"'
    rm -rf "$profile"
  done
done
rm -rf "$out"
