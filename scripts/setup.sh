#!/usr/bin/env bash
# Sets up everything rageval needs on a fresh Debian machine with Rust, then builds the
# release binary. Idempotent: a second run only rebuilds what changed.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v cargo >/dev/null 2>&1; then
  echo "error: cargo is not installed; rageval needs a Rust toolchain (https://rustup.rs)" >&2
  exit 2
fi

# No system packages or model files are needed yet: the model-free metrics and trec_eval
# compatibility are pure Rust. The judge pipeline's embedded models will be provisioned here.
cargo build --release --locked -p rageval
echo "built target/release/rageval" >&2
