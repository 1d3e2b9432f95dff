#!/usr/bin/env bash
# The whole test suite and every gate CI applies: system packages and model files first
# (scripts/setup.sh --deps-only; what only later steps need installs in the background),
# then formatting, lints, docs, tests, and the Python package's pytest suite (built with
# the same dev profile and target dir as the tests).
set -euo pipefail
cd "$(dirname "$0")/.."

# One feature set for every build below — clippy, doc, the tests, the binaries and the
# Python module — so nothing compiles twice: the defaults plus `gguf`, so that the
# in-process GGUF model (llama.cpp, opt-in for users) is built and tested. Not
# `--all-features`: it would turn on rageval-py's `extension-module`, which cannot link a
# test harness. `--workspace --features gguf` enables `gguf` on every member that has it.
features=(--features gguf)

# Each step line says how long the suite has run so far, so a slow CI run shows which step
# took the time (BENCHMARKS.md, "CI: what each step costs").
step() { printf '\n== [%d:%02d] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*" >&2; }

# What only later steps need installs in the background while earlier steps run: the Python
# tools (Ray and Spark among them: minutes of downloads and unpacking on a cold machine),
# the crates (while apt installs the build's packages), Chromium and the test search server
# (while Rust builds). Each is waited for, and its log printed, before the step that needs it.
declare -A job_pid job_log
background() {
  local name=$1
  shift
  job_log[$name]="$(mktemp)"
  "$@" >"${job_log[$name]}" 2>&1 &
  job_pid[$name]=$!
  step "$name: in the background (log: ${job_log[$name]})"
}
await() {
  local name=$1
  step "$name: waiting for it"
  if ! wait "${job_pid[$name]}"; then
    cat "${job_log[$name]}" >&2
    echo "error: $name failed (its output is above)" >&2
    exit 1
  fi
  cat "${job_log[$name]}" >&2
}
trap 'for pid in "${job_pid[@]}"; do kill "$pid" 2>/dev/null || true; done' EXIT

background "Python tools (scripts/setup-python.sh)" ./scripts/setup-python.sh
background "crates (cargo fetch)" cargo fetch --locked

step "system packages and model files (scripts/setup.sh --deps-only --without-python-tools --with-gguf)"
./scripts/setup.sh --deps-only --without-python-tools --with-gguf
# After setup.sh, whose apt-get would otherwise wait on Chromium's for the package lock.
test_servers="Chromium and the test search server (scripts/setup-chromium.sh, setup-noida.sh)"
background "$test_servers" bash -c './scripts/setup-chromium.sh && ./scripts/setup-noida.sh >/dev/null'
await "crates (cargo fetch)"

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy (warnings are errors)"
cargo clippy --workspace --all-targets --locked "${features[@]}" -- -D warnings

# Every build a user can ask of rageval-judge's backends compiles without warnings: none,
# each alone, all together (an explicit list; what `cargo hack --each-feature` would do).
# The dependencies' checks are shared between the five, and mostly with the step above.
step "rageval-judge: no backend, each alone, all together (clippy, warnings are errors)"
for backends in "" gguf minilm checker gguf,minilm,checker; do
  cargo clippy -p rageval-judge --all-targets --locked --quiet --no-default-features \
    --features "$backends" -- -D warnings
done

step "cargo doc (warnings are errors)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked --quiet "${features[@]}"

step "cargo test: build"
cargo test --workspace --locked --no-run "${features[@]}"
# The browser tests render pages in Chromium; rageval-sources' integration tests start the
# Elasticsearch-compatible search server.
await "$test_servers"
if command -v cargo-nextest >/dev/null 2>&1; then
  # nextest runs the test binaries side by side, where cargo test runs them one after
  # another: with one long model test in a binary, the other core no longer idles
  # (BENCHMARKS.md). It does not run doc tests; cargo test does, after it.
  step "cargo nextest run"
  cargo nextest run --workspace --locked --no-fail-fast "${features[@]}"
  step "cargo test --doc"
  cargo test --workspace --locked --doc "${features[@]}"
else
  step "cargo test: run"
  cargo test --workspace --locked "${features[@]}"
fi

await "Python tools (scripts/setup-python.sh)"

step "Python package: maturin develop (dev profile, shared target dir) and pytest"
# maturin puts the extension module in python/rageval/ and points the venv at python/; the
# tests compare with the binary and judge against the mock server, built here (cheap: the
# test build compiled everything they need).
cargo build --locked -p rageval --bin rageval -p rageval-testkit --bin rageval-mock "${features[@]}"
VIRTUAL_ENV="$PWD/.venv" PATH="$PWD/.venv/bin:$PATH" \
  .venv/bin/maturin develop --quiet --locked "${features[@]}"
RAGEVAL_BIN="$PWD/target/debug/rageval" RAGEVAL_MOCK_BIN="$PWD/target/debug/rageval-mock" \
  .venv/bin/python -m pytest -q python/tests
step "passed"
