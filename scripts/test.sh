#!/usr/bin/env bash
# The whole test suite and every gate CI applies: system packages and model files first
# (scripts/setup.sh --deps-only; the Python tools in the background), then formatting,
# lints, docs, tests, and the Python package's pytest suite (built with the same dev profile
# and target dir as the tests).
set -euo pipefail
cd "$(dirname "$0")/.."

# Each step line says how long the suite has run so far, so a slow CI run shows which step
# took the time (BENCHMARKS.md, "CI: what each step costs").
step() { printf '\n== [%d:%02d] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*" >&2; }

# The Python tools (Ray and Spark among them: minutes of downloads and unpacking on a cold
# machine) install in the background while Rust builds; the Python step waits for them.
python_setup_log="$(mktemp)"
step "Python tools, in the background (scripts/setup-python.sh, log: $python_setup_log)"
./scripts/setup-python.sh >"$python_setup_log" 2>&1 &
python_setup=$!
trap 'kill "$python_setup" 2>/dev/null || true' EXIT

step "system packages and model files (scripts/setup.sh --deps-only --without-python-tools)"
./scripts/setup.sh --deps-only --without-python-tools

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

step "cargo test: build"
cargo test --workspace --locked --no-run
step "cargo test: run"
cargo test --workspace --locked

step "Python tools: waiting for scripts/setup-python.sh"
if ! wait "$python_setup"; then
  cat "$python_setup_log" >&2
  echo "error: scripts/setup-python.sh failed (its output is above)" >&2
  exit 1
fi
cat "$python_setup_log" >&2

step "Python package: maturin develop (dev profile, shared target dir) and pytest"
# maturin puts the extension module in python/rageval/ and points the venv at python/; the
# tests compare with the binary and judge against the mock server, built here (cheap: the
# test build compiled everything they need).
cargo build --locked -p rageval --bin rageval -p rageval-testkit --bin rageval-mock
VIRTUAL_ENV="$PWD/.venv" PATH="$PWD/.venv/bin:$PATH" \
  .venv/bin/maturin develop --quiet --locked
RAGEVAL_BIN="$PWD/target/debug/rageval" RAGEVAL_MOCK_BIN="$PWD/target/debug/rageval-mock" \
  .venv/bin/python -m pytest -q python/tests
step "passed"
