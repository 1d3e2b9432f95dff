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

# The suite starts Python often: Phoenix and MLflow for the Rust tests and pytest, Ray's
# workers, Spark's, the test search server. uv installs no bytecode, so with
# PYTHONDONTWRITEBYTECODE set (some CI images set it) every one of those processes compiled
# each module it imports from source: an MLflow server's start took 104 CPU seconds in its
# first minute without a bytecode cache and 47 with one (BENCHMARKS.md, "CI: what each step
# costs"). The venvs are the suite's own, under target/ and .venv, so it lets Python write
# the cache there.
unset PYTHONDONTWRITEBYTECODE

# Each step line says how long the suite has run so far, so a slow CI run shows which step
# took the time (BENCHMARKS.md, "CI: what each step costs").
# At the end, passed or not, the steps are listed again with what each took: CI shows only
# the end of the output.
# Each step also records the CPU seconds its finished child processes used (bash's `times`;
# a background install counts where it is waited for), to tell a step that waited from one
# that worked.
steps=()
cpu_file="$(mktemp)"
# Sets `cpu` to the CPU seconds (user + system) of the finished children so far. `times` runs
# in this shell, not in a command substitution's subshell, which has no children of its own.
children_cpu() {
  times >"$cpu_file"
  cpu=$(awk 'NR == 2 { for (i = 1; i <= 2; i++) { split($i, t, /[ms]/); s += t[1] * 60 + t[2] } }
             END { printf "%d", s }' "$cpu_file")
}
step() {
  printf '\n== [%d:%02d] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*" >&2
  children_cpu
  steps+=("$SECONDS $cpu $*")
}
step_times() {
  local i start step_cpu next next_cpu name
  children_cpu
  echo "== what each step took: wall m:ss from its line to the next (the last to the end), then CPU" >&2
  for i in "${!steps[@]}"; do
    read -r start step_cpu name <<<"${steps[$i]}"
    read -r next next_cpu _ <<<"${steps[$((i + 1))]:-$SECONDS $cpu}"
    printf '%4d:%02d %6ds  %s\n' $(((next - start) / 60)) $(((next - start) % 60)) \
      $((next_cpu - step_cpu)) "$name" >&2
  done
  printf '  total %d:%02d, %ds CPU\n' $((SECONDS / 60)) $((SECONDS % 60)) "$cpu" >&2
}

# What only later steps need installs in the background while earlier steps run: the Python
# tools (Ray and Spark among them: minutes of downloads and unpacking on a cold machine),
# the crates (while apt installs the build's packages), Chromium and the test search server
# (while Rust builds). Each is waited for, and its log printed, before the step that needs it.
declare -A job_pid job_log
background() {
  local name=$1
  shift
  job_log[$name]="$(mktemp)"
  # Niced: the Rust build beside it is what the suite waits for; an install takes the CPU
  # the build leaves idle (one crate compiling, a test binary linking).
  nice -n 10 "$@" >"${job_log[$name]}" 2>&1 &
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
trap 'step_times; for pid in "${job_pid[@]}"; do kill "$pid" 2>/dev/null || true; done' EXIT

background "Python tools (scripts/setup-python.sh)" ./scripts/setup-python.sh
# Phoenix and MLflow from PyPI for the integration tests of rageval-export's writers and the
# Phoenix source (minutes of downloads: BENCHMARKS.md); the tests run when this is set.
export RAGEVAL_TRACE_SERVERS_VENV="${RAGEVAL_TRACE_SERVERS_VENV:-${CARGO_TARGET_DIR:-$PWD/target}/trace-servers-venv}"
trace_servers="Phoenix and MLflow (scripts/setup-trace-servers.sh install)"
background "$trace_servers" ./scripts/setup-trace-servers.sh install
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

# Every build a user can ask of rageval-judge's backends compiles without warnings: each
# alone (an explicit list; what `cargo hack --each-feature` would do), the library as a user
# builds it (its tests need every backend); all together is the clippy step (the defaults
# plus gguf). The library without any backend is not checked apart: each check above
# compiles all of its lines, and what it alone could flag is an item only backends use
# (unused there), not worth a check of its own in a run bound by CPU. Then the docs. Both
# run beside the Rust tests when nextest runs them (below): the tests mostly wait on servers
# and child processes, and these checks fill the cores they leave idle (BENCHMARKS.md, "CI:
# what each step costs"). rageval-judge's `workspace-features` gives the crates below it the
# workspace's features, so each backend check compiles rageval-judge alone (5 CPU seconds)
# rather than re-checking the 60-85 crates whose features differ when it is built alone.
# `cargo doc` checks the workspace's crates before it documents them; with the clippy step's
# driver and arguments it finds them checked (cargo tells a check by its compiler), and only
# runs rustdoc.
lints_beside_tests() {
  local backends
  for backends in gguf minilm checker; do
    cargo clippy -p rageval-judge --lib --locked --quiet --no-default-features \
      --features "$backends,workspace-features" -- -D warnings
  done
  RUSTC_WORKSPACE_WRAPPER="$(rustc --print sysroot)/bin/clippy-driver" \
    CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__" RUSTDOCFLAGS="-D warnings" \
    cargo doc --workspace --no-deps --locked --quiet "${features[@]}"
}
lints="rageval-judge's backends alone (clippy, warnings are errors) and cargo doc (warnings are errors)"

# The binaries and the Python module first, so that pytest runs beside the test binaries'
# build and the Rust tests: it spends most of its three minutes waiting on the servers and
# engines it starts (Phoenix, MLflow, Spark's JVM, Ray), and the test build reuses every
# unit these builds compiled (BENCHMARKS.md, "CI: what each step costs").
step "binaries and the Python module: build"
cargo build --workspace --locked --bins "${features[@]}"
await "Python tools (scripts/setup-python.sh)"
# maturin puts the extension module in python/rageval/ and points the venv at python/ (dev
# profile, shared target dir).
VIRTUAL_ENV="$PWD/.venv" PATH="$PWD/.venv/bin:$PATH" \
  .venv/bin/maturin develop --quiet --locked "${features[@]}"
# The MLflow tests start that server.
await "$trace_servers"
pytest_run="pytest (python/tests)"
background "$pytest_run" env RAGEVAL_BIN="$PWD/target/debug/rageval" \
  RAGEVAL_MOCK_BIN="$PWD/target/debug/rageval-mock" .venv/bin/python -m pytest -q python/tests

step "cargo test: build"
cargo test --workspace --locked --no-run "${features[@]}"
# The browser tests render pages in Chromium; rageval-sources' integration tests start the
# Elasticsearch-compatible search server; the Phoenix tests start Phoenix.
await "$test_servers"

if command -v cargo-nextest >/dev/null 2>&1; then
  # nextest runs the test binaries side by side, where cargo test runs them one after
  # another: with one long model test in a binary, the other core no longer idles
  # (BENCHMARKS.md). It runs the binaries the step above built, from their list, so that it
  # never takes cargo's lock on target/ and the lints run beside it. It does not run doc
  # tests; cargo test does, after it.
  nextest_list="$(mktemp -d)"
  cargo nextest list --workspace --locked "${features[@]}" --list-type binaries-only \
    --message-format json >"$nextest_list/binaries.json"
  cargo metadata --format-version 1 --locked >"$nextest_list/cargo.json"
  export -f lints_beside_tests
  # At nice 19 (10 + 9), below pytest's servers and engines (Ray's node must register within
  # 30 s) as well as below the tests: the lints only take what both leave.
  background "$lints" nice -n 9 bash -c "set -euo pipefail; features=(${features[*]}); lints_beside_tests"
  step "cargo nextest run"
  cargo nextest run --no-fail-fast --binaries-metadata "$nextest_list/binaries.json" \
    --cargo-metadata "$nextest_list/cargo.json"
  await "$lints"
  step "cargo test --doc"
  cargo test --workspace --locked --doc "${features[@]}"
else
  step "$lints"
  lints_beside_tests
  step "cargo test: run"
  cargo test --workspace --locked "${features[@]}"
fi
await "$pytest_run"
step "passed"
