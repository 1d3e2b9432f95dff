#!/usr/bin/env bash
# scripts/pip-install.sh VENV PACKAGE... — installs PyPI packages into the virtual
# environment VENV (created when missing) with uv, the one installer every setup script
# uses: setup-python.sh, setup-trace-servers.sh and setup-noida.sh.
#
# Why uv and not pip: installing Phoenix and MLflow took pip 5 min 25 s and 2 min 33 s of
# CPU on 2 cores, and uv 24 s and 10 s (BENCHMARKS.md, "CI: what each step costs"); in
# scripts/test.sh these installs run beside the Rust build and took its CPU. uv itself comes
# from PyPI (pinned), installed once with pip into its own venv under target/ (or
# $RAGEVAL_UV_VENV); concurrent callers take turns through a lock, and share uv's download
# cache. uv compiles no bytecode unless asked: Python compiles a module when it is imported.
set -euo pipefail

UV_VERSION="0.13.9"

if [[ $# -lt 2 ]]; then
  echo "usage: $0 VENV PACKAGE..." >&2
  exit 2
fi
venv=$1
shift
if ! command -v python3 >/dev/null 2>&1; then
  echo "error: python3 is needed to install $* into $venv" >&2
  exit 2
fi

root="$(cd "$(dirname "$0")/.." && pwd)"
tools="${RAGEVAL_UV_VENV:-${CARGO_TARGET_DIR:-$root/target}/uv-venv}"
uv="$tools/bin/uv"
mkdir -p "$(dirname "$tools")"
(
  flock 9
  if ! [[ -x $uv && "$("$uv" --version 2>/dev/null)" == "uv $UV_VERSION"* ]]; then
    rm -rf "$tools"
    python3 -m venv "$tools"
    "$tools/bin/python" -m pip install --quiet --disable-pip-version-check "uv==$UV_VERSION"
  fi
) 9>"$tools.lock"

[[ -x $venv/bin/python ]] || python3 -m venv "$venv"
"$uv" pip install --quiet --python "$venv/bin/python" "$@"
