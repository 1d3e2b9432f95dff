#!/usr/bin/env bash
# Sets up rageval and runs the main job on the embedded defaults: every metric the offline
# judge can answer (model-free ones and heuristic-judged ones) over the bundled FiQA sample,
# into runs/quickstart. Needs no API key and no model endpoint.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
exec target/release/rageval eval examples/fiqa-30.jsonl --out runs/quickstart --overwrite "$@"
