#!/usr/bin/env bash
# Sets up rageval and runs the main job on the embedded defaults over the bundled FiQA
# sample (examples/fiqa-30.jsonl) into runs/quickstart: every model-free metric, and every
# metric the offline heuristic judge answers with agreement above chance on human-labelled
# data (docs/judges.md). Needs no API key and no model endpoint; metrics that need a model
# that writes, or whose offline judge is at chance, are named on stderr with how to run them.
#
# The build is the debug build (the models' tensor code optimised; Cargo.toml's dev profile
# says which crates) with the default features: no llama.cpp, so no cmake or libclang.
# RAGEVAL_FEATURES=gguf adds the in-process GGUF model (`--judge gguf:PATH`) and its
# system packages (scripts/setup.sh).
# Further arguments go to `rageval eval` (e.g. --metrics faithfulness,rouge_l, or
# --judge-model/--judge-base-url for a model judge).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
exec target/debug/rageval eval examples/fiqa-30.jsonl --out runs/quickstart --overwrite "$@"
