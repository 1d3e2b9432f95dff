#!/usr/bin/env bash
# The Python package's build and test tools, in a virtual environment of the repo (.venv,
# never the system's): maturin, pytest and pandas to build and test the package, and Ray
# Data and PySpark (pinned) for the tests that map the evaluator over them
# (python/tests/test_engines.py; Spark runs on the machine's Java 17). Test tools, never
# dependencies of the package. Idempotent: a second run installs nothing.
# scripts/test.sh runs it in the background while Rust builds; scripts/setup.sh --deps-only
# runs it in the foreground.
set -euo pipefail
cd "$(dirname "$0")/.."

# ray[data] (about 135 MB of wheels with pyarrow) and pyspark (a 456 MB source archive,
# built locally) are most of a cold install: 68 s with uv (scripts/pip-install.sh), 149 s
# with pip (BENCHMARKS.md, "CI: what each step costs"); pinned, so CI meets no new release
# by surprise.
python_tools=("maturin>=1.9,<2" "pytest>=7" "pandas>=1.5" "ray[data]==2.60.0" "pyspark==4.3.0")

if ! command -v python3 >/dev/null 2>&1; then
  echo "setup: python3 not found; the Python package is not built" >&2
  exit 0
fi
if ! { [ -x .venv/bin/python ] \
  && .venv/bin/python -c 'import maturin, pytest, pandas, pyarrow, ray.data, pyspark' >/dev/null 2>&1; }; then
  echo "setup: installing ${python_tools[*]} into .venv (PyPI)" >&2
  ./scripts/pip-install.sh .venv "${python_tools[@]}"
fi
command -v java >/dev/null 2>&1 \
  || echo "setup: java not found; the Spark test (python/tests/test_engines.py) will skip" >&2
