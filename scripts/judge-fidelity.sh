#!/usr/bin/env bash
# The full-size judge-check figures of docs/judge-fidelity.md: every shared labelled set,
# whole, with the judge the flags select (default: the offline heuristic judge). Extra
# arguments go to every judge-check, e.g. `--judge-model gpt-4o-mini --judge-base-url …`.
# Runs land in runs/fidelity/<name>; each prints its figures.
set -euo pipefail
cd "$(dirname "$0")/.."

validation=../shared/validation
bin=${RAGEVAL_BIN:-target/release/rageval}
if [[ ! -x $bin ]]; then
  cargo build --release -p rageval --locked
fi

check() {
  local name=$1
  shift
  printf '\n== %s\n' "$name"
  "$bin" judge-check "$@" --out "runs/fidelity/$name" --overwrite "${EXTRA[@]}"
}
EXTRA=("$@")

wikieval=$validation/wikieval/WikiEval_samples_10.jsonl
check wikieval-faithfulness "$wikieval" --format wikieval --metric faithfulness
check wikieval-answer-relevance "$wikieval" --format wikieval --metric answer_relevance:rubric
check wikieval-context-relevance "$wikieval" --format wikieval --metric context_relevance
check uhgeval-keywords "$validation/uhgeval-zh/dataset_uhgeval_concise.jsonl" \
  --format uhgeval --metric faithfulness
check rgb-zh-refine-context-relevance "$validation/rgb/zh_refine.json" \
  --format rgb --metric context_relevance
check rgb-en-fact-context-relevance "$validation/rgb/en_fact.json" \
  --format rgb --metric context_relevance
check dureader-context-relevance "$validation/dureader-2.0-demo-zh/search.dev.slim.jsonl" \
  --format dureader --metric context_relevance
check cranfield-context-relevance "$validation/cranfield" \
  --format cranfield --metric context_relevance
