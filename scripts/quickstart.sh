#!/usr/bin/env bash
# Sets up rageval and runs the main job on the embedded defaults: every metric, model-free
# and judged, over the bundled FiQA sample (examples/fiqa-30.jsonl) into runs/quickstart —
# verdicts by the heuristic judge, written questions and entities by the embedded GGUF model,
# embeddings by the embedded MiniLM. Needs no API key and no model endpoint.
#
# The embedded model writes at a few seconds a call on 2 cores, so by default the first
# SAMPLES=10 samples are scored; SAMPLES=30 scores the whole file. Further arguments go to
# `rageval eval` (e.g. --metrics faithfulness,rouge_l).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
exec target/release/rageval eval examples/fiqa-30.jsonl --out runs/quickstart --overwrite \
    --samples "${SAMPLES:-10}" "$@"
