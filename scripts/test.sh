#!/usr/bin/env bash
# The whole test suite and every gate CI applies: system packages and model files first
# (scripts/setup.sh --deps-only), then formatting, lints, docs, tests.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*" >&2; }

step "system packages and model files (scripts/setup.sh --deps-only)"
./scripts/setup.sh --deps-only

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy (warnings are errors)"
cargo clippy --workspace --all-targets --locked -- -D warnings

step "cargo doc (warnings are errors)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked --quiet

step "chromium for the browser tests (scripts/setup-chromium.sh)"
./scripts/setup-chromium.sh
step "Elasticsearch-compatible test server (rageval-sources' integration tests start it)"
./scripts/setup-noida.sh >/dev/null

step "cargo test"
cargo test --workspace --locked
