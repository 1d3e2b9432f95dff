#!/usr/bin/env bash
# Renders any HTML page of rageval (report.html, a compare page) in headless Chromium with
# the network blocked, saves a screenshot and the rendered DOM, and checks that the page
# holds no script and loads nothing from elsewhere. Installs Chromium through
# scripts/setup-chromium.sh, and CJK fonts so Chinese text renders. `cargo test` checks the
# pages it builds itself (crates/rageval/tests/it/browser.rs); this is for any other page:
#   scripts/check-report-html.sh runs/fiqa/report.html /tmp/report-check
set -euo pipefail

if [ $# -lt 1 ]; then
  echo "usage: $0 REPORT.html [OUT_DIR]" >&2
  exit 2
fi
page="$(realpath "$1")"
out="${2:-$(mktemp -d)}"
mkdir -p "$out"

"$(dirname "$0")/setup-chromium.sh"
if ! fc-list 2>/dev/null | grep -q "Noto Sans CJK"; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends fonts-noto-cjk >/dev/null
fi

profile="$(mktemp -d)"
trap 'rm -rf "$profile"' EXIT
flags=(
  --headless --no-sandbox --disable-gpu --disable-quic --no-first-run
  --disable-background-networking --disable-component-update --disable-sync
  --user-data-dir="$profile"
  # Every host name fails to resolve: a page that needs the network shows it.
  --host-resolver-rules="MAP * ~NOTFOUND"
)
chromium "${flags[@]}" --window-size=1280,1800 --screenshot="$out/screenshot.png" \
  "file://$page" 2>/dev/null
chromium "${flags[@]}" --dump-dom "file://$page" 2>/dev/null >"$out/dom.html"

status=0
check() {
  if grep -q -i -E "$2" "$out/dom.html"; then
    echo "FAIL: $1" >&2
    status=1
  fi
}
check "the page holds a script element" '<script'
check "the page links a style sheet or other resource" '<link'
check "an element loads a remote resource" '(src|href)="(https?:)?//'
check "a style loads a remote resource" 'url\(|@import'
[ -s "$out/dom.html" ] || { echo "FAIL: the page did not render" >&2; status=1; }
echo "screenshot: $out/screenshot.png; DOM: $out/dom.html" >&2
exit "$status"
