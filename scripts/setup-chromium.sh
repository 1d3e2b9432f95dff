#!/usr/bin/env bash
# Installs Debian's Chromium (and a Latin font) for the browser tests: `cargo test` renders
# report.html and the `rageval serve` pages in headless Chromium. Idempotent: does nothing
# when /usr/bin/chromium is already there. Needs root (or sudo) and Debian's apt.
set -euo pipefail

if command -v chromium >/dev/null 2>&1; then
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "error: chromium is missing and this is not a Debian-like system; install Chromium" \
    "so that \`chromium\` is on PATH" >&2
  exit 2
fi
as_root=()
if [ "$(id -u)" -ne 0 ]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "error: installing chromium needs root; run this script as root" >&2
    exit 2
  fi
  as_root=(sudo)
fi
echo "installing chromium (Debian package) for the browser tests" >&2
"${as_root[@]}" apt-get update -qq
# Without recommends: Chromium's recommends pull in systemd, CUPS and a desktop.
DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq --no-install-recommends \
  chromium fonts-liberation >/dev/null
chromium --version >&2
