#!/usr/bin/env bash
# The tests of `dogana show`'s page in a real browser (headless Chromium), which `cargo test
# --workspace` does not build: they are behind dogana-show's `browser` feature.
#
# Installs Debian's chromium (and the DejaVu fonts the reference screenshot was taken with)
# when missing, then lints and runs the browser tests in release mode (the large page's
# fixture, 10,000 receipts, takes minutes in a debug build). A test fails, never skips, when
# no Chromium can be run.
#
#   bash scripts/test-browser.sh            # lint and test
#   DOGANA_BLESS=1 bash scripts/test-browser.sh   # also rewrite the reference screenshot and docs/show.png
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

have_chromium() {
  [ -n "${CHROMIUM:-}" ] && [ -x "$CHROMIUM" ] && return 0
  command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 \
    || command -v google-chrome >/dev/null 2>&1
}

if ! have_chromium || ! fc-list 2>/dev/null | grep -qi dejavu; then
  echo "== installing chromium and fonts-dejavu-core (apt-get)"
  if [ "$(id -u)" -ne 0 ]; then
    echo "test-browser: chromium is missing and this user cannot apt-get install it; install chromium, or set CHROMIUM to its path" >&2
    exit 1
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-dejavu-core >/dev/null
fi
have_chromium || { echo "test-browser: chromium could not be installed" >&2; exit 1; }

echo "== clippy (dogana-show, browser feature)"
cargo clippy -p dogana-show --features browser --all-targets -- -D warnings
echo "== browser tests (release)"
cargo test --release -p dogana-show --features browser --test browser -- --nocapture
