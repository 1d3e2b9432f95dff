#!/usr/bin/env bash
# Installs noida-db, a local server that speaks the Elasticsearch REST API (reports ES 8.15.3),
# from PyPI into a virtual environment, for rageval-sources' integration tests. No real
# Elasticsearch or OpenSearch can be installed from the registries these machines reach.
# Idempotent: a second run only checks the installed version. Prints the path of the server
# binary itself (not the pip wrapper, which runs it as a child: tests must be able to stop it).
#
# Usage: scripts/setup-noida.sh [VENV_DIR]   (default: target/noida-venv in the repo)
set -euo pipefail
cd "$(dirname "$0")/.."

NOIDA_VERSION="0.2.3"
venv="${1:-${CARGO_TARGET_DIR:-$PWD/target}/noida-venv}"

binary() {
  "$venv/bin/python" - <<'PY'
from importlib.resources import files
import os
path = files("noida_db").joinpath("noida-db")
os.chmod(str(path), 0o755)
print(path)
PY
}

if [ -x "$venv/bin/python" ] && "$venv/bin/python" -m pip show noida-db 2>/dev/null | grep -qx "Version: $NOIDA_VERSION"; then
  binary
  exit 0
fi

if ! command -v python3 >/dev/null 2>&1; then
  echo "error: python3 is needed to install noida-db (the Elasticsearch-compatible test server)" >&2
  exit 2
fi
mkdir -p "$(dirname "$venv")"
./scripts/pip-install.sh "$venv" "noida-db==$NOIDA_VERSION" >&2
binary
