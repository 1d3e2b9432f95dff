#!/usr/bin/env bash
# The judge-check figures of docs/judge-fidelity.md: every shared labelled set, whole, with
# the judge the flags select (default: the offline heuristic judge). Extra arguments go to
# every judge-check, e.g. `--judge-model gpt-4o-mini --judge-base-url …` or
# `--judge gguf:models/SmolLM2-135M-Instruct.Q4_1.gguf`. `--subsets` first runs the subsets
# measured for a slow judge (the embedded GGUF model: seconds to a minute a sample on two
# shared cores) instead of the whole sets: the first N source records of each, N as below.
# Runs land in runs/fidelity/<name> (runs/fidelity-subsets/<name>); each prints its figures.
set -euo pipefail
cd "$(dirname "$0")/.."

validation=../shared/validation
bin=${RAGEVAL_BIN:-target/release/rageval}
if [[ ! -x $bin ]]; then
  # With `gguf`, so that `--judge gguf:PATH` runs (a binary built without it refuses it).
  cargo build --release -p rageval --locked --features gguf
fi

subsets=false
if [[ ${1:-} == --subsets ]]; then
  subsets=true
  shift
fi
EXTRA=("$@")

# check NAME SUBSET_SIZE LABELS judge-check-flags…: the whole set, or with --subsets its
# first SUBSET_SIZE source records (questions, news items, queries).
check() {
  local name=$1 size=$2
  shift 2
  local out=runs/fidelity/$name limit=()
  if $subsets; then
    out=runs/fidelity-subsets/$name
    limit=(--samples "$size")
  fi
  printf '\n== %s\n' "$name"
  "$bin" judge-check "$@" "${limit[@]}" --out "$out" --overwrite "${EXTRA[@]}"
}

wikieval=$validation/wikieval/WikiEval_samples_10.jsonl
check wikieval-faithfulness 10 "$wikieval" --format wikieval --metric faithfulness
check wikieval-answer-relevance 10 "$wikieval" --format wikieval --metric answer_relevance:rubric
check wikieval-context-relevance 10 "$wikieval" --format wikieval --metric context_relevance
check uhgeval-keywords 2 "$validation/uhgeval-zh/dataset_uhgeval_concise.jsonl" \
  --format uhgeval --metric faithfulness
check rgb-zh-refine-context-relevance 2 "$validation/rgb/zh_refine.json" \
  --format rgb --metric context_relevance
check rgb-en-fact-context-relevance 5 "$validation/rgb/en_fact.json" \
  --format rgb --metric context_relevance
check dureader-context-relevance 5 "$validation/dureader-2.0-demo-zh/search.dev.slim.jsonl" \
  --format dureader --metric context_relevance
check cranfield-context-relevance 3 "$validation/cranfield" \
  --format cranfield --metric context_relevance
